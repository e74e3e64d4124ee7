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
use super::records::{self, programs_path, runs_path, selftests_path};
use super::summary::{Session, Stats, Totals};
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

fn program_of(r: &csv::StringRecord) -> Option<u64> {
    r.get(0)?.parse().ok()
}

/// Consecutive records of one shard's file that belong to one program: where they start, and
/// how many.
struct Chunk {
    program: u64,
    shard: usize,
    start: csv::Position,
    records: u64,
}

/// Concatenates file `name` of every shard, sorted by program number, into `out`: the rows of
/// program `p` come from the shard `done` names (its rows in another shard are those of a
/// program that shard had not finished), in their order in that file.
///
/// Without holding the rows: a night's shards write millions. A first pass over each file
/// notes where each program's rows start (a shard writes a program's rows together, and
/// nearly in program order); the chunks are sorted by program, stably, and a second pass
/// copies each chunk from where it starts. A record that does not parse (a partial last line
/// of a shard still being killed) is skipped, as `records` does.
fn merge_file(
    dirs: &[PathBuf],
    path_of: fn(&Path) -> PathBuf,
    done: &BTreeMap<u64, usize>,
    out: &Path,
) -> Result<()> {
    let mut header = None;
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut readers = Vec::new();
    for (shard, dir) in dirs.iter().enumerate() {
        let path = path_of(dir);
        let mut reader = csv::Reader::from_path(&path).with_context(|| format!("reading {}", path.display()))?;
        let h = reader.headers().with_context(|| format!("reading {}", path.display()))?.clone();
        header.get_or_insert(h);
        let mut record = csv::StringRecord::new();
        // Whether the record before this one was the last of `chunks`' last chunk.
        let mut extends = false;
        loop {
            let start = reader.position().clone();
            let program = match reader.read_record(&mut record) {
                Ok(false) => break,
                Ok(true) => program_of(&record).filter(|p| done.get(p) == Some(&shard)),
                Err(_) => None,
            };
            let Some(program) = program else {
                extends = false;
                continue;
            };
            match chunks.last_mut() {
                Some(last) if extends && last.program == program => last.records += 1,
                _ => chunks.push(Chunk { program, shard, start, records: 1 }),
            }
            extends = true;
        }
        readers.push(reader);
    }
    chunks.sort_by_key(|c| c.program);
    let mut w = csv::Writer::from_path(out).with_context(|| format!("writing {}", out.display()))?;
    if let Some(h) = header {
        w.write_record(&h)?;
    }
    let mut record = csv::StringRecord::new();
    for chunk in &chunks {
        let reader = &mut readers[chunk.shard];
        reader.seek(chunk.start.clone()).with_context(|| format!("reading {}", path_of(&dirs[chunk.shard]).display()))?;
        for _ in 0..chunk.records {
            if !reader.read_record(&mut record).with_context(|| format!("reading {}", path_of(&dirs[chunk.shard]).display()))? {
                bail!("{} changed while it was merged", path_of(&dirs[chunk.shard]).display());
            }
            w.write_record(&record)?;
        }
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
        let mut overlap = None;
        records::for_each_program(dir, |line| {
            if let Some(other) = done.insert(line.program, shard) {
                overlap.get_or_insert((line.program, other));
            }
        })?;
        if let Some((program, other)) = overlap {
            bail!("program {program} was checked by both {} and {}: the shards overlap", dirs[other].display(), dir.display());
        }
    }
    merge_file(dirs, runs_path, &done, &runs_path(out))?;
    merge_file(dirs, programs_path, &done, &programs_path(out))?;
    merge_file(dirs, selftests_path, &done, &selftests_path(out))?;
    let Totals { stats, costs, .. } = Totals::read(out, |_| {})?;

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
    let opening = reproduce::merged_section(out, dirs, &shards, &states, &costs);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows out of program order, a program whose rows are split by another's, rows of a
    /// program another shard finished, and a cut last line: the merge holds none of them in
    /// memory and writes what sorting all rows stably would.
    #[test]
    fn merge_file_sorts_chunks_stably_and_takes_each_program_from_its_shard() {
        let dirs: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().expect("temp dir")).collect();
        let file = |d: &Path| d.join("runs.csv");
        std::fs::write(file(dirs[0].path()), "program,config\n4,a\n4,b\n0,a\n2,a\n0,b\n2,b\n3,x\n6,a\n6").expect("write");
        std::fs::write(file(dirs[1].path()), "program,config\n3,a\n1,a\n1,b\n3,b\n5,\"a,b\"\n").expect("write");
        let done: BTreeMap<u64, usize> = [(0, 0), (1, 1), (2, 0), (3, 1), (4, 0), (5, 1), (6, 0)].into_iter().collect();
        let paths: Vec<PathBuf> = dirs.iter().map(|d| d.path().to_path_buf()).collect();
        let out = tempfile::tempdir().expect("temp dir");
        merge_file(&paths, file, &done, &file(out.path())).expect("merge");
        let merged = std::fs::read_to_string(file(out.path())).expect("read");
        assert_eq!(merged, "program,config\n0,a\n0,b\n1,a\n1,b\n2,a\n2,b\n3,a\n3,b\n4,a\n4,b\n5,\"a,b\"\n6,a\n");
    }
}
