//! `harness mutants`: the campaign's mutation score.
//!
//! `harness mutants [--out DIR] [--seed S] [--max N] [--campaign-seconds T] [--jobs J]
//! [--work DIR] [--only SUBSTRING] [--list]`
//!
//! 1. Exports the committed tree (`git archive HEAD`) into `<work>/src` (kept between runs of
//!    the same commit, so builds stay incremental) and builds it into `<work>/target`;
//! 2. runs the baseline: a campaign of `T` seconds against the unmutated compiler, which must
//!    find nothing (else every mutant would look killed);
//! 3. for each of the first `N` mutants of the seeded sample ([`super::sample`]) not yet in
//!    `mutants.csv`: applies it, builds the harness (a build error makes it *unviable*), runs
//!    the same campaign (`--in-process --no-triage`, same seed) and stops it at the first
//!    saved failure (*killed*, with the time to first detection), or lets it end (*survived*);
//!    a campaign that does not end within `T + 120` s is stopped (*timeout*: the mutant made
//!    the compiler hang, which a campaign would notice only as a stuck worker); one that dies
//!    without a saved failure (a crash the in-process campaign cannot survive) is *killed*
//!    too. The file is restored afterwards, whatever happened;
//! 4. appends the mutant's line to `<out>/mutants.csv` and rewrites `<out>/mutants.md` (per
//!    pass or stage: killed / survived / unviable / timeout, kill rate, median time to first
//!    detection, and the survivors — the generator's to-do list).
//!
//! Resumable: mutants already in `mutants.csv` are skipped, so an interrupted run continues
//! where it stopped (and `--max` can grow between runs); a file left mutated by a kill is
//! restored first (`<work>/applied` names it). Shard by giving each machine a
//! different `--only` (a path substring) or `--seed`.
//!
//! The mutant builds use the release profile with `opt-level = 1`, incremental compilation
//! and no debug info (environment overrides, so the repository's profile is untouched): a
//! mutated pass recompiles `sysyc` and relinks the harness in about a minute or two.

use super::{Mutant, all_sites, sample};
use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct MutantsArgs {
    /// Result directory (default `results/mutation/<YYYY-MM-DD>`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Seed of the mutant sample and of the campaigns.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Mutants to run (counting those already in `mutants.csv`).
    #[arg(long, default_value_t = 20)]
    pub max: usize,
    /// Length of each campaign, in seconds.
    #[arg(long, default_value_t = 20.0)]
    pub campaign_seconds: f64,
    /// Worker threads of each campaign.
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// Scratch directory for the source copy, the build and the campaigns.
    #[arg(long, default_value = "/tmp/sysyc-mutants")]
    pub work: PathBuf,
    /// Only mutants whose file path contains this.
    #[arg(long)]
    pub only: Option<String>,
    /// Print the sampled mutants and exit.
    #[arg(long)]
    pub list: bool,
}

/// What a mutant's campaign showed.
#[derive(Clone, Debug, PartialEq)]
struct Outcome {
    status: &'static str,
    detect_seconds: Option<f64>,
    build_seconds: f64,
    campaign_seconds: f64,
    detail: String,
}

const CSV_HEADER: [&str; 10] =
    ["id", "unit", "operator", "status", "detect_seconds", "build_seconds", "campaign_seconds", "source_line", "mutated_line", "detail"];

pub fn run(args: &MutantsArgs) -> Result<()> {
    let root = repo_root()?;
    let mut sites = all_sites(&root).context("reading the compiler sources")?;
    if let Some(only) = &args.only {
        sites.retain(|m| m.file.contains(only.as_str()));
    }
    let total = sites.len();
    let chosen: Vec<Mutant> = sample(sites, args.seed).into_iter().take(args.max).collect();
    if args.list {
        for m in &chosen {
            crate::outln!("{}", m.id())?;
        }
        crate::errln!("{} of {total} mutation sites", chosen.len());
        return Ok(());
    }
    let out = args.out.clone().unwrap_or_else(|| {
        let id = crate::campaign::campaign_id(0);
        PathBuf::from("results/mutation").join(format!("{}-{}-{}", &id[..4], &id[4..6], &id[6..8]))
    });
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let csv_path = out.join("mutants.csv");
    let done = read_done(&csv_path)?;
    let src = export_tree(&root, &args.work)?;
    let target = args.work.join("target");

    crate::errln!("mutants: {total} sites, {} chosen, {} already done; building the baseline", chosen.len(), done.len());
    let (_, baseline_build) = build(&src, &target)?;
    if let Err(e) = baseline_build {
        bail!("the unmutated tree does not build:\n{e}");
    }
    let baseline = campaign(args, &target, &args.work.join("campaign-baseline"))?;
    crate::errln!("mutants: baseline campaign: {} ({:.0} s)", baseline.status, baseline.campaign_seconds);
    if baseline.status != "survived" {
        bail!("the baseline campaign against the unmutated compiler found failures ({}): fix those first", baseline.detail);
    }
    for (n, mutant) in chosen.iter().enumerate() {
        if done.contains(&mutant.id()) {
            continue;
        }
        let path = src.join(&mutant.file);
        let original = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let Some(mutated) = mutant.apply(&original) else {
            bail!("mutant {} does not apply to {}", mutant.id(), path.display());
        };
        // Marks the file as mutated until it is restored (a kill in between leaves the mark).
        std::fs::write(args.work.join("applied"), &mutant.file)?;
        std::fs::write(&path, &mutated)?;
        let result = (|| -> Result<Outcome> {
            let (build_seconds, built) = build(&src, &target)?;
            match built {
                Err(e) => Ok(Outcome { status: "unviable", detect_seconds: None, build_seconds, campaign_seconds: 0.0, detail: e }),
                Ok(()) => {
                    let mut o = campaign(args, &target, &args.work.join(format!("campaign-{n}")))?;
                    o.build_seconds = build_seconds;
                    Ok(o)
                }
            }
        })();
        std::fs::write(&path, &original).with_context(|| format!("restoring {}", path.display()))?;
        std::fs::remove_file(args.work.join("applied"))?;
        let outcome = result?;
        crate::errln!(
            "mutants: [{}/{}] {} {}{}",
            n + 1,
            chosen.len(),
            mutant.id(),
            outcome.status,
            outcome.detect_seconds.map(|s| format!(" after {s:.0} s")).unwrap_or_default()
        );
        let line_of = |text: &str| text.lines().nth(mutant.line - 1).unwrap_or_default().trim().to_string();
        append_csv(&csv_path, mutant, &outcome, &line_of(&original), &line_of(&mutated))?;
        std::fs::write(out.join("mutants.md"), report(&read_rows(&csv_path)?, args))?;
    }
    std::fs::write(out.join("mutants.md"), report(&read_rows(&csv_path)?, args))?;
    crate::outln!("report: {}", out.join("mutants.md").display())?;
    Ok(())
}

fn repo_root() -> Result<PathBuf> {
    let out = Command::new("git").args(["rev-parse", "--show-toplevel"]).output().context("running git")?;
    if !out.status.success() {
        bail!("harness mutants runs inside the project's git checkout");
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// `git archive HEAD` of `root` in `<work>/src`, unless it holds that commit already.
fn export_tree(root: &Path, work: &Path) -> Result<PathBuf> {
    let src = work.join("src");
    let head = Command::new("git").arg("-C").arg(root).args(["rev-parse", "HEAD"]).output().context("running git")?;
    let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
    let stamp = work.join("src.commit");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == head) && src.exists() {
        // A run killed while a mutant was applied: put that file back (written anew, so its
        // modification time tells cargo to rebuild it).
        let applied = work.join("applied");
        if let Ok(file) = std::fs::read_to_string(&applied) {
            let original = Command::new("git").arg("-C").arg(root).arg("show").arg(format!("HEAD:{file}")).output()?;
            if !original.status.success() {
                bail!("cannot restore {file} from HEAD");
            }
            std::fs::write(src.join(&file), &original.stdout)?;
            std::fs::remove_file(&applied)?;
        }
        return Ok(src);
    }
    let _ = std::fs::remove_file(work.join("applied"));
    if src.exists() {
        std::fs::remove_dir_all(&src)?;
    }
    std::fs::create_dir_all(&src)?;
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("git -C '{}' archive HEAD | tar -x -C '{}'", root.display(), src.display()))
        .status()
        .context("exporting the tree")?;
    if !status.success() {
        bail!("git archive of {} failed", root.display());
    }
    std::fs::write(&stamp, &head)?;
    Ok(src)
}

/// Builds the harness and the cost plugin of `src` into `target`; returns the seconds and
/// the compiler's first error when the build fails.
fn build(src: &Path, target: &Path) -> Result<(f64, Result<(), String>)> {
    let start = Instant::now();
    let out = Command::new("cargo")
        .current_dir(src)
        .args(["build", "--release", "--quiet", "-p", "harness", "-p", "sysy-cost-plugin", "--target-dir"])
        .arg(target)
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "1")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_INCREMENTAL", "true")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "64")
        .stdout(Stdio::null())
        .output()
        .context("running cargo")?;
    let seconds = start.elapsed().as_secs_f64();
    if out.status.success() {
        return Ok((seconds, Ok(())));
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first = stderr.lines().find(|l| l.starts_with("error")).unwrap_or("build failed").to_string();
    Ok((seconds, Err(first)))
}

/// A campaign of the mutant harness in `<target>/release`, stopped at its first saved failure.
fn campaign(args: &MutantsArgs, target: &Path, dir: &Path) -> Result<Outcome> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    let mut child = Command::new(target.join("release/harness"))
        .args(["campaign", "--in-process", "--no-triage", "--seed", &args.seed.to_string(), "--jobs", &args.jobs.to_string()])
        .args(["--minutes", &format!("{}", args.campaign_seconds / 60.0), "--out"])
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting the mutant's campaign")?;
    let start = Instant::now();
    let limit = Duration::from_secs_f64(args.campaign_seconds + 120.0);
    let failures = dir.join("failures");
    let outcome = |status, detect: Option<f64>, detail: String| Outcome {
        status,
        detect_seconds: detect,
        build_seconds: 0.0,
        campaign_seconds: start.elapsed().as_secs_f64(),
        detail,
    };
    loop {
        if std::fs::read_dir(&failures).is_ok_and(|mut d| d.next().is_some()) {
            let detect = start.elapsed().as_secs_f64();
            let _ = child.kill();
            let _ = child.wait();
            let first = std::fs::read_dir(&failures)?.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).min();
            return Ok(outcome("killed", Some(detect), first.unwrap_or_default()));
        }
        if let Some(status) = child.try_wait()? {
            // Not yet seen: a failure saved right before the end.
            if std::fs::read_dir(&failures).is_ok_and(|mut d| d.next().is_some()) {
                continue;
            }
            let programs = std::fs::read_to_string(dir.join("programs.csv")).map_or(0, |t| t.lines().count().saturating_sub(1));
            return Ok(if status.success() {
                outcome("survived", None, format!("{programs} programs"))
            } else {
                let detect = Some(start.elapsed().as_secs_f64());
                outcome("killed", detect, format!("the campaign died ({status}) after {programs} programs"))
            });
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(outcome("timeout", None, "the campaign did not end: a compiler hang".into()));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn read_done(path: &Path) -> Result<BTreeSet<String>> {
    Ok(read_rows(path)?.into_iter().map(|r| r[0].clone()).collect())
}

fn read_rows(path: &Path) -> Result<Vec<Vec<String>>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_path(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(reader.records().map_while(Result::ok).filter(|r| r.len() == CSV_HEADER.len()).map(|r| r.iter().map(str::to_string).collect()).collect())
}

fn append_csv(path: &Path, m: &Mutant, o: &Outcome, source: &str, mutated: &str) -> Result<()> {
    let fresh = !path.exists();
    let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    if fresh {
        w.write_record(CSV_HEADER)?;
    }
    w.write_record([
        m.id(),
        m.unit(),
        m.operator.name.to_string(),
        o.status.to_string(),
        o.detect_seconds.map(|s| format!("{s:.1}")).unwrap_or_default(),
        format!("{:.1}", o.build_seconds),
        format!("{:.1}", o.campaign_seconds),
        source.to_string(),
        mutated.to_string(),
        o.detail.clone(),
    ])?;
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("csv buffer: {e}"))?;
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    file.write_all(&bytes)?;
    Ok(())
}

/// `mutants.md` from the rows of `mutants.csv`.
fn report(rows: &[Vec<String>], args: &MutantsArgs) -> String {
    #[derive(Default)]
    struct Unit {
        killed: usize,
        survived: usize,
        unviable: usize,
        timeout: usize,
        detect: Vec<f64>,
    }
    let mut units: BTreeMap<&str, Unit> = BTreeMap::new();
    for r in rows {
        let u = units.entry(&r[1]).or_default();
        match r[3].as_str() {
            "killed" => u.killed += 1,
            "survived" => u.survived += 1,
            "unviable" => u.unviable += 1,
            _ => u.timeout += 1,
        }
        if let Ok(s) = r[4].parse() {
            u.detect.push(s);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        if v.is_empty() { "-".to_string() } else { format!("{:.0} s", v[v.len() / 2]) }
    };
    let rate = |k: usize, s: usize| if k + s == 0 { "-".to_string() } else { format!("{:.0}%", 100.0 * k as f64 / (k + s) as f64) };
    let mut s = String::new();
    let _ = writeln!(s, "# Mutation score of the campaign\n");
    let _ = writeln!(
        s,
        "Mechanical mutants of `compiler/src/passes` and `compiler/src/isa` (`harness mutants`, seed {}), each checked by a default campaign of {:.0} s (`--jobs {}`, seed {}) stopped at its first failure. Kill rate = killed / (killed + survived); unviable mutants do not build; timeout: the campaign hung (the mutant made the compiler loop).\n",
        args.seed, args.campaign_seconds, args.jobs, args.seed
    );
    let _ = writeln!(s, "| pass or stage | mutants | killed | survived | unviable | timeout | kill rate | median time to detection |\n|---|---|---|---|---|---|---|---|");
    let mut all = Unit::default();
    for (name, u) in &mut units {
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} | {} | {} | {} |",
            u.killed + u.survived + u.unviable + u.timeout,
            u.killed,
            u.survived,
            u.unviable,
            u.timeout,
            rate(u.killed, u.survived),
            median(&mut u.detect)
        );
        all.killed += u.killed;
        all.survived += u.survived;
        all.unviable += u.unviable;
        all.timeout += u.timeout;
        all.detect.extend(u.detect.iter().copied());
    }
    let _ = writeln!(
        s,
        "| **all** | {} | {} | {} | {} | {} | {} | {} |",
        all.killed + all.survived + all.unviable + all.timeout,
        all.killed,
        all.survived,
        all.unviable,
        all.timeout,
        rate(all.killed, all.survived),
        median(&mut all.detect)
    );
    let survivors: Vec<&Vec<String>> = rows.iter().filter(|r| r[3] == "survived").collect();
    if !survivors.is_empty() {
        let _ = writeln!(s, "\n## Survivors (the generator's to-do list; some may be equivalent mutants)\n");
        for r in survivors {
            let _ = writeln!(s, "- `{}`: `{}` → `{}`", r[0], r[7].replace('`', "'"), r[8].replace('`', "'"));
        }
    }
    s
}
