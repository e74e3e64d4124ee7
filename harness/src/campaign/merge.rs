//! `harness merge DIR... --out DIR [--previous DIR]`: merges the shard directories of one
//! sharded campaign into one campaign directory: `runs.csv` and `programs.csv` (every
//! shard's rows, sorted by program number — stable, so a program's rows keep their order),
//! `stats.csv`, `failures.csv`, `summary.md` and `merge.json` (the shards merged).
//!
//! The shards must agree on everything that decides which rows exist (seed, strategies,
//! generator, faults, limits of each run, shard count) and be distinct shards; a program
//! found in two inputs is an error (the shards overlap: not one campaign). Rows are copied
//! as written, so merging never changes a figure. Throughput in the merged summary is the
//! sum of the shards' checks over the longest shard's session (the shards run side by side).

use super::autotriage::failure_dirs;
use super::records::{self, ProgramLine, Row, programs_path, runs_path, selftests_path};
use super::summary::{Session, Stats};
use super::{CampaignOptions, State, load_options, nightly, reproduce, write_report};
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// Shard campaign directories (each made by `harness campaign --shard i/n`).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The merged campaign directory.
    #[arg(long)]
    pub out: PathBuf,
    /// A previous night's campaign or merged directory to compare with.
    #[arg(long)]
    pub previous: Option<PathBuf>,
}

/// What identifies the rows a campaign produces (everything but limits, ids and shard index).
fn row_defining(o: &CampaignOptions) -> impl PartialEq + std::fmt::Debug {
    (
        o.seed,
        o.strategies.clone(),
        o.over.clone(),
        o.random_per_program,
        o.gcc,
        o.swarm,
        o.faults.clone(),
        o.timeout_secs.to_bits(),
        o.shard.map(|s| s.count),
    )
}

/// Checks that `shards` are distinct shards of one campaign.
fn check_compatible(dirs: &[PathBuf], shards: &[CampaignOptions]) -> Result<()> {
    let Some(first) = shards.first() else { bail!("nothing to merge") };
    let mut seen = BTreeMap::new();
    for (dir, o) in dirs.iter().zip(shards) {
        if row_defining(o) != row_defining(first) {
            bail!(
                "{} and {} are not shards of the same campaign (seed, strategies, generator, faults, timeout or shard count differ)",
                dirs[0].display(),
                dir.display()
            );
        }
        let index = o.shard.map_or(0, |s| s.index);
        if let Some(other) = seen.insert(index, dir) {
            bail!("{} and {} are the same shard ({index})", other.display(), dir.display());
        }
    }
    Ok(())
}

/// The raw records of a CSV file, with the header.
fn read_raw(path: &Path) -> Result<(csv::StringRecord, Vec<csv::StringRecord>)> {
    let mut reader = csv::Reader::from_path(path).with_context(|| format!("reading {}", path.display()))?;
    let header = reader.headers().with_context(|| format!("reading {}", path.display()))?.clone();
    // A partial last record (a shard still being killed) is skipped, as `records` does.
    let rows = reader.records().filter_map(|r| r.ok()).collect();
    Ok((header, rows))
}

fn program_of(r: &csv::StringRecord) -> Option<u64> {
    r.get(0)?.parse().ok()
}

/// Concatenates file `name` of every shard, sorted by program number, into `out`; fails
/// when a program occurs in two shards. Only complete programs (`done`) are kept.
fn merge_file(
    dirs: &[PathBuf],
    path_of: fn(&Path) -> PathBuf,
    done: &BTreeMap<u64, usize>,
    out: &Path,
) -> Result<()> {
    let mut header = None;
    let mut all: Vec<(u64, csv::StringRecord)> = Vec::new();
    for (shard, dir) in dirs.iter().enumerate() {
        let (h, rows) = read_raw(&path_of(dir))?;
        header.get_or_insert(h);
        for r in rows {
            let Some(p) = program_of(&r) else { continue };
            if done.get(&p) == Some(&shard) {
                all.push((p, r));
            }
        }
    }
    all.sort_by_key(|(p, _)| *p);
    let mut w = csv::Writer::from_path(out).with_context(|| format!("writing {}", out.display()))?;
    if let Some(h) = header {
        w.write_record(&h)?;
    }
    for (_, r) in &all {
        w.write_record(r)?;
    }
    w.flush()?;
    Ok(())
}

/// Merges `dirs` into `out` and returns the merged figures.
pub fn merge(dirs: &[PathBuf], out: &Path, previous: Option<&Path>) -> Result<(Stats, Session)> {
    let shards: Vec<CampaignOptions> = dirs.iter().map(|d| load_options(d)).collect::<Result<_>>()?;
    check_compatible(dirs, &shards)?;
    let out_abs = std::path::absolute(out).unwrap_or_else(|_| out.to_path_buf());
    for d in dirs {
        if std::path::absolute(d).is_ok_and(|d| d == out_abs) {
            bail!("--out {} is one of the shards", out.display());
        }
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;

    // Complete programs of each shard; a program complete in two shards is an overlap.
    let mut done: BTreeMap<u64, usize> = BTreeMap::new();
    for (shard, dir) in dirs.iter().enumerate() {
        for line in records::read_programs(dir)? {
            if let Some(other) = done.insert(line.program, shard) {
                bail!(
                    "program {} was checked by both {} and {}: the shards overlap",
                    line.program,
                    dirs[other].display(),
                    dir.display()
                );
            }
        }
    }
    merge_file(dirs, runs_path, &done, &runs_path(out))?;
    merge_file(dirs, programs_path, &done, &programs_path(out))?;
    merge_file(dirs, selftests_path, &done, &selftests_path(out))?;
    let rows: Vec<Row> = records::read_runs(out)?;
    let programs: Vec<ProgramLine> = records::read_programs(out)?;
    let stats = Stats::compute(&rows, &programs, &records::read_selftests(out)?);

    let mut session = Session {
        campaign_id: format!("{} (merge of {} shards)", shards[0].campaign_id, dirs.len()),
        ..Session::default()
    };
    let mut failures = Vec::new();
    for (dir, o) in dirs.iter().zip(&shards) {
        let figures = nightly::read_stats(dir);
        let num = |k: &str| figures.get(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        session.seconds = session.seconds.max(num("session_seconds"));
        session.checks += num("session_checks") as u64;
        session.programs += num("session_programs") as u64;
        session.qemu_runs += num("session_qemu_runs") as u64;
        session.jobs += num("jobs") as usize;
        // A relative failure directory is relative to where the shard ran; fall back to the
        // shard's own `failures/` when the merge runs elsewhere.
        let root = if o.failures_dir.is_dir() { o.failures_dir.clone() } else { dir.join("failures") };
        failures.extend(failure_dirs(&root, &o.campaign_id));
    }
    session.failure_dirs = failures.iter().map(|d| d.display().to_string()).collect();
    let manifest = serde_json::json!({
        "shards": dirs.iter().zip(&shards).map(|(d, o)| serde_json::json!({
            "dir": d.display().to_string(),
            "campaign_id": o.campaign_id,
            "shard": o.shard,
        })).collect::<Vec<_>>(),
    });
    std::fs::write(out.join("merge.json"), serde_json::to_string_pretty(&manifest)?)?;
    let states: Vec<State> = dirs.iter().map(|d| State::read(d)).collect::<Result<_>>()?;
    let opening = reproduce::merged_section(out, dirs, &shards, &states, &rows);
    write_report(out, &stats, &session, &failures, previous, &opening)?;
    Ok((stats, session))
}

/// `harness merge`.
pub fn run(args: &MergeArgs) -> Result<()> {
    let (stats, _) = merge(&args.dirs, &args.out, args.previous.as_deref())?;
    outln!(
        "merged {} shards: {} programs, {} checks, {} failures in {} programs",
        args.dirs.len(),
        stats.programs,
        stats.checks,
        stats.failures,
        stats.failing_programs
    )?;
    outln!("report: {}", args.out.join("summary.md").display())?;
    Ok(())
}
