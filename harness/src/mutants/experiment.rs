//! `harness mutants`: the campaign's mutation score.
//!
//! `harness mutants [--out DIR] [--seed S] [--max N] [--campaign-seconds T] [--jobs J]
//! [--before-corpus DIR | --before-args ARGS] [--equivalent FILE] [--work DIR] [--only SUBSTRING]
//! [--list | --report-only]`
//!
//! 1. Exports the committed tree (`git archive HEAD`) into `<work>/pristine` (kept between runs
//!    of the same commit) and lists the placeable mutation sites ([`super::schema`]); the
//!    first `N` of the seeded sample ([`super::sample`]) are the mutants, numbered 1..N;
//! 2. writes them all into one build (mutant schemata) in `<work>/src` (files written only
//!    when they change, so a rerun is an incremental build) and builds it into
//!    `<work>/target`; a mutant whose code does not compile is *unviable* and the schema is
//!    written again without it;
//! 3. runs the baselines: a campaign of `T` seconds against the unmutated compiler (no mutant
//!    switched on), and the same over `--before-corpus` when given; both must find nothing
//!    (else every mutant would look killed);
//! 4. for each mutant not yet in `mutants.csv`: the same campaign (`--in-process
//!    --no-triage`, same seed) with `SYSYC_MUTANT` naming it, stopped at the first saved
//!    failure (*killed*, with the time to first detection) or at its end (*survived*); a
//!    campaign that does not end within `T + 60` s is stopped (*timeout*: the mutant made the
//!    compiler hang, which a campaign notices only as a stuck worker); one that dies without a
//!    saved failure (a crash the in-process campaign cannot survive) is *killed* too. With
//!    `--before-corpus DIR` the mutant is also judged by a campaign over the programs of `DIR`
//!    (another generator's output, e.g. this generator at an older commit), with
//!    `--before-args ARGS` by the same campaign with those extra options (`--no-seeds`: the
//!    generator alone against generator and seed variants): the "before" columns;
//! 5. appends the mutant's line to `<out>/mutants.csv` and rewrites `<out>/mutants.md` (per
//!    pass or stage: killed / survived / unviable / timeout, kill rate before and after,
//!    median time to first detection, kills per minute of campaign time, and the survivors —
//!    the generator's to-do list). Survivors read and found equivalent are listed in the
//!    `--equivalent` CSV (`id,reason`, default `<out>/equivalent.csv`): the report gives each
//!    its reason and the kill rate of the mutants that are not equivalent.
//!
//! Resumable: mutants already in `mutants.csv` are skipped, so an interrupted run continues
//! where it stopped (and `--max` can grow between runs: the sample's order does not depend on
//! it). Shard by giving each machine a different `--only` (a path substring) or `--seed`.

use super::schema::{self, Schema};
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
    /// Strategies of each campaign (as `harness campaign --strategy`; default: the
    /// campaign's default), to compare how fast different defaults find bugs.
    #[arg(long)]
    pub strategy: Option<String>,
    /// Random configurations per program for the `random` strategy (default: the
    /// campaign's default).
    #[arg(long)]
    pub random_configs: Option<usize>,
    /// Also judge every mutant by a campaign over the `.sy` programs of this directory (the
    /// "before" columns: e.g. programs of this generator at an older commit).
    #[arg(long, conflicts_with = "before_args")]
    pub before_corpus: Option<PathBuf>,
    /// Also judge every mutant by the same campaign with these extra options (split at
    /// spaces; e.g. `--no-seeds`): the "before" columns.
    #[arg(long, allow_hyphen_values = true)]
    pub before_args: Option<String>,
    /// Survivors found equivalent: CSV `id,reason` (default `<out>/equivalent.csv`).
    #[arg(long)]
    pub equivalent: Option<PathBuf>,
    /// Only mutants whose file path contains this.
    #[arg(long)]
    pub only: Option<String>,
    /// Print the sampled mutants and exit.
    #[arg(long)]
    pub list: bool,
    /// Only rewrite `mutants.md` from `mutants.csv` and the equivalent survivors (after
    /// reading the survivors; give `--out` and the run's settings, which the text names).
    #[arg(long, conflicts_with = "list")]
    pub report_only: bool,
}

/// What one campaign showed about a mutant.
#[derive(Clone, Debug, PartialEq)]
struct Outcome {
    status: &'static str,
    detect_seconds: Option<f64>,
    campaign_seconds: f64,
    detail: String,
}

impl Outcome {
    fn unviable(detail: String) -> Outcome {
        Outcome { status: "unviable", detect_seconds: None, campaign_seconds: 0.0, detail }
    }
}

const CSV_HEADER: [&str; 12] = [
    "id",
    "unit",
    "operator",
    "status",
    "detect_seconds",
    "campaign_seconds",
    "status_before",
    "detect_seconds_before",
    "campaign_seconds_before",
    "source_line",
    "mutated_line",
    "detail",
];

/// Builds at most this many schemata: each failed build removes the mutants its errors name.
const MAX_SCHEMA_BUILDS: usize = 8;

pub fn run(args: &MutantsArgs) -> Result<()> {
    if args.report_only {
        let out = args.out.clone().context("--report-only needs --out")?;
        let rows = read_rows(&out.join("mutants.csv"))?;
        if rows.is_empty() {
            bail!("{}: no mutants recorded", out.join("mutants.csv").display());
        }
        std::fs::write(out.join("mutants.md"), report(&rows, &equivalent(args, &out)?, args))?;
        crate::outln!("report: {}", out.join("mutants.md").display())?;
        return Ok(());
    }
    let root = repo_root()?;
    let pristine = export_tree(&root, &args.work)?;
    let text_of = |file: &str| std::fs::read_to_string(pristine.join(file)).ok();
    let mut sites = all_sites(&pristine).context("reading the compiler sources")?;
    if let Some(only) = &args.only {
        sites.retain(|m| m.file.contains(only.as_str()));
    }
    let total = sites.len();
    let placeable = schema::placeable(sites, text_of);
    let chosen: Vec<(u32, Mutant)> =
        sample(placeable.clone(), args.seed).into_iter().take(args.max).enumerate().map(|(i, m)| (i as u32 + 1, m)).collect();
    if args.list {
        for (id, m) in &chosen {
            crate::outln!("{id} {}", m.id())?;
        }
        crate::errln!("{} of {} placeable mutation sites ({total} in all)", chosen.len(), placeable.len());
        return Ok(());
    }
    let out = args.out.clone().unwrap_or_else(|| {
        let id = crate::campaign::campaign_id(0);
        PathBuf::from("results/mutation").join(format!("{}-{}-{}", &id[..4], &id[4..6], &id[6..8]))
    });
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let csv_path = out.join("mutants.csv");
    let done = read_done(&csv_path)?;
    crate::errln!(
        "mutants: {total} sites, {} placeable, {} chosen, {} already done; building the schema",
        placeable.len(),
        chosen.len(),
        done.len()
    );

    let (viable, unviable) = build_schema(&pristine, &args.work, &chosen)?;
    let line_of = |m: &Mutant, mutated: bool| -> String {
        let original = text_of(&m.file).unwrap_or_default();
        let text = if mutated { m.apply(&original).unwrap_or_default() } else { original };
        text.lines().nth(m.line - 1).unwrap_or_default().trim().to_string()
    };
    for (m, error) in &unviable {
        if !done.contains(&m.id()) {
            let outcome = Outcome::unviable(error.clone());
            append_csv(&csv_path, m, &outcome, args.has_before().then_some(&outcome), &line_of(m, false), &line_of(m, true))?;
        }
    }

    let target = args.work.join("target");
    let baseline = campaign(args, &target, None, false, &args.work.join("campaign-baseline"))?;
    crate::errln!("mutants: baseline campaign: {} ({:.0} s)", baseline.status, baseline.campaign_seconds);
    if baseline.status != "survived" {
        bail!("the baseline campaign against the unmutated compiler found failures ({}): fix those first", baseline.detail);
    }
    if args.has_before() {
        let before = campaign(args, &target, None, true, &args.work.join("campaign-baseline-before"))?;
        crate::errln!("mutants: baseline campaign {}: {} ({:.0} s)", args.before_label(), before.status, before.campaign_seconds);
        if before.status != "survived" {
            bail!("the baseline campaign {} found failures ({}): fix those first", args.before_label(), before.detail);
        }
    }
    for (n, (id, mutant)) in viable.iter().enumerate() {
        if done.contains(&mutant.id()) {
            continue;
        }
        let after = campaign(args, &target, Some(*id), false, &args.work.join("campaign-after"))?;
        let before = match args.has_before() {
            true => Some(campaign(args, &target, Some(*id), true, &args.work.join("campaign-before"))?),
            false => None,
        };
        let say = |o: &Outcome| format!("{}{}", o.status, o.detect_seconds.map(|s| format!(" after {s:.0} s")).unwrap_or_default());
        crate::errln!(
            "mutants: [{}/{}] {} {}{}",
            n + 1,
            viable.len(),
            mutant.id(),
            say(&after),
            before.as_ref().map(|b| format!(" (before: {})", say(b))).unwrap_or_default()
        );
        append_csv(&csv_path, mutant, &after, before.as_ref(), &line_of(mutant, false), &line_of(mutant, true))?;
        std::fs::write(out.join("mutants.md"), report(&read_rows(&csv_path)?, &equivalent(args, &out)?, args))?;
    }
    std::fs::write(out.join("mutants.md"), report(&read_rows(&csv_path)?, &equivalent(args, &out)?, args))?;
    crate::outln!("report: {}", out.join("mutants.md").display())?;
    Ok(())
}

/// Writes the schema of `chosen` into `<work>/src` and builds it, dropping the mutants the
/// build errors name until it builds; returns the viable mutants and the unviable ones with
/// the first error naming each.
#[allow(clippy::type_complexity)]
fn build_schema(pristine: &Path, work: &Path, chosen: &[(u32, Mutant)]) -> Result<(Vec<(u32, Mutant)>, Vec<(Mutant, String)>)> {
    let text_of = |file: &str| std::fs::read_to_string(pristine.join(file)).ok();
    let src = work.join("src");
    let target = work.join("target");
    let mut viable: Vec<(u32, Mutant)> = chosen.to_vec();
    let mut unviable = Vec::new();
    for attempt in 1..=MAX_SCHEMA_BUILDS {
        let schema = Schema::write(&viable, text_of).map_err(anyhow::Error::msg)?;
        let mut overrides: BTreeMap<PathBuf, String> = schema.files.iter().map(|(f, t)| (PathBuf::from(f), t.clone())).collect();
        overrides.insert(PathBuf::from("compiler/src/mutant_switch.rs"), schema::SWITCH_MODULE.to_string());
        let lib = text_of("compiler/src/lib.rs").context("reading compiler/src/lib.rs")?;
        overrides.insert(PathBuf::from("compiler/src/lib.rs"), format!("{lib}\n#[doc(hidden)]\npub mod mutant_switch;\n"));
        sync_tree(pristine, &src, &overrides)?;
        let (seconds, built) = build(&src, &target)?;
        let Err(stderr) = built else {
            crate::errln!("mutants: schema of {} mutants built in {seconds:.0} s (attempt {attempt})", viable.len());
            return Ok((viable, unviable));
        };
        let mut culprits: BTreeMap<u32, String> = BTreeMap::new();
        for (file, line, column) in schema::error_locations(&stderr) {
            let message = stderr.lines().find(|l| l.starts_with(&format!("{file}:{line}:{column}:"))).unwrap_or_default();
            for id in schema.culprits(&file, line, column) {
                culprits.entry(id).or_insert_with(|| message.to_string());
            }
        }
        if culprits.is_empty() {
            let first = stderr.lines().find(|l| l.contains("error")).unwrap_or("build failed");
            bail!("the schema does not build, and no mutant is to blame: {first}");
        }
        crate::errln!("mutants: schema build {attempt} failed in {seconds:.0} s; {} mutants do not compile", culprits.len());
        viable.retain(|(id, m)| match culprits.get(id) {
            Some(message) => {
                unviable.push((m.clone(), message.clone()));
                false
            }
            None => true,
        });
    }
    bail!("the schema still does not build after {MAX_SCHEMA_BUILDS} attempts")
}

/// Makes `dst` a copy of `src` with `overrides` (relative path → text) in place of or in
/// addition to its files; a file whose content is already right is not written, so its
/// modification time (and cargo's incremental build) is kept.
fn sync_tree(src: &Path, dst: &Path, overrides: &BTreeMap<PathBuf, String>) -> Result<()> {
    let mut wanted: BTreeMap<PathBuf, Vec<u8>> = BTreeMap::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for entry in std::fs::read_dir(src.join(&rel)).with_context(|| format!("reading {}", src.join(&rel).display()))? {
            let entry = entry?;
            let path = rel.join(entry.file_name());
            if entry.file_type()?.is_dir() {
                stack.push(path);
            } else {
                wanted.insert(path.clone(), std::fs::read(src.join(&path))?);
            }
        }
    }
    for (rel, text) in overrides {
        wanted.insert(rel.clone(), text.clone().into_bytes());
    }
    // A file an earlier schema rewrote and this one does not is written back from `src`.
    for (rel, bytes) in &wanted {
        let path = dst.join(rel);
        if std::fs::read(&path).is_ok_and(|old| &old == bytes) {
            continue;
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

fn repo_root() -> Result<PathBuf> {
    let out = Command::new("git").args(["rev-parse", "--show-toplevel"]).output().context("running git")?;
    if !out.status.success() {
        bail!("harness mutants runs inside the project's git checkout");
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// `git archive HEAD` of `root` in `<work>/pristine`, unless it holds that commit already.
fn export_tree(root: &Path, work: &Path) -> Result<PathBuf> {
    let pristine = work.join("pristine");
    let head = Command::new("git").arg("-C").arg(root).args(["rev-parse", "HEAD"]).output().context("running git")?;
    let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
    let stamp = work.join("pristine.commit");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == head) && pristine.exists() {
        return Ok(pristine);
    }
    if pristine.exists() {
        std::fs::remove_dir_all(&pristine)?;
    }
    std::fs::create_dir_all(&pristine)?;
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("git -C '{}' archive HEAD | tar -x -C '{}'", root.display(), pristine.display()))
        .status()
        .context("exporting the tree")?;
    if !status.success() {
        bail!("git archive of {} failed", root.display());
    }
    std::fs::write(&stamp, &head)?;
    Ok(pristine)
}

/// Builds the harness and the cost plugin of `src` into `target` (release profile without
/// debug information); returns the seconds and, when the build fails, rustc's short-format
/// error output.
fn build(src: &Path, target: &Path) -> Result<(f64, Result<(), String>)> {
    let start = Instant::now();
    let out = Command::new("cargo")
        .current_dir(src)
        .args(["build", "--release", "--quiet", "--message-format", "short", "-p", "harness", "-p", "sysy-cost-plugin", "--target-dir"])
        .arg(target)
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .stdout(Stdio::null())
        .output()
        .context("running cargo")?;
    let seconds = start.elapsed().as_secs_f64();
    if out.status.success() {
        return Ok((seconds, Ok(())));
    }
    Ok((seconds, Err(String::from_utf8_lossy(&out.stderr).into_owned())))
}

impl MutantsArgs {
    fn has_before(&self) -> bool {
        self.before_corpus.is_some() || self.before_args.is_some()
    }

    /// The "before" side in words.
    fn before_label(&self) -> String {
        match (&self.before_corpus, &self.before_args) {
            (Some(corpus), _) => format!("over {}", corpus.display()),
            (None, Some(extra)) => format!("with `{extra}`"),
            (None, None) => String::new(),
        }
    }
}

/// The survivors found equivalent: id → reason, from `--equivalent` or
/// `<out>/equivalent.csv` (none when the default file does not exist).
fn equivalent(args: &MutantsArgs, out: &Path) -> Result<BTreeMap<String, String>> {
    let path = args.equivalent.clone().unwrap_or_else(|| out.join("equivalent.csv"));
    if args.equivalent.is_none() && !path.exists() {
        return Ok(BTreeMap::new());
    }
    let mut reader = csv::Reader::from_path(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut reasons = BTreeMap::new();
    for (n, record) in reader.records().enumerate() {
        let record = record.with_context(|| format!("{}: record {}", path.display(), n + 1))?;
        match (record.get(0), record.get(1)) {
            (Some(id), Some(reason)) if !id.trim().is_empty() && !reason.trim().is_empty() => {
                reasons.insert(id.trim().to_string(), reason.trim().to_string());
            }
            _ => bail!("{}: record {}: want `id,reason`", path.display(), n + 1),
        }
    }
    Ok(reasons)
}

/// A campaign of the schema's harness in `<target>/release` with mutant `mutant` switched on
/// (`None`: the original compiler), stopped at its first saved failure; the "before" side's
/// campaign (over `--before-corpus`, or with `--before-args`) when `before`.
fn campaign(args: &MutantsArgs, target: &Path, mutant: Option<u32>, before: bool, dir: &Path) -> Result<Outcome> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    let mut command = Command::new(target.join("release/harness"));
    command
        .args(["campaign", "--in-process", "--no-triage", "--seed", &args.seed.to_string(), "--jobs", &args.jobs.to_string()])
        .args(["--minutes", &format!("{}", args.campaign_seconds / 60.0), "--out"])
        .arg(dir)
        .env(schema::SWITCH_VARIABLE, mutant.unwrap_or(0).to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if before {
        if let Some(corpus) = &args.before_corpus {
            command.arg("--corpus").arg(corpus);
        }
        if let Some(extra) = &args.before_args {
            command.args(extra.split_whitespace());
        }
    }
    if let Some(strategy) = &args.strategy {
        command.args(["--strategy", strategy]);
    }
    if let Some(n) = args.random_configs {
        command.args(["--random-configs", &n.to_string()]);
    }
    // Its own process group, so that stopping it also stops the qemu runs in flight (a
    // mutant's program may loop forever; the campaign's own run time limit dies with it).
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().context("starting the mutant's campaign")?;
    let stop = |child: &mut std::process::Child| {
        if let Ok(group) = i32::try_from(child.id()) {
            // SAFETY: kill(2) with a negative pid signals that process group; no memory is involved.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
        let _ = child.wait();
    };
    let start = Instant::now();
    let limit = Duration::from_secs_f64(args.campaign_seconds + 60.0);
    let failures = dir.join("failures");
    let outcome = |status, detect: Option<f64>, detail: String| Outcome {
        status,
        detect_seconds: detect,
        campaign_seconds: start.elapsed().as_secs_f64(),
        detail,
    };
    loop {
        if std::fs::read_dir(&failures).is_ok_and(|mut d| d.next().is_some()) {
            let detect = start.elapsed().as_secs_f64();
            stop(&mut child);
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
            stop(&mut child);
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

fn append_csv(path: &Path, m: &Mutant, after: &Outcome, before: Option<&Outcome>, source: &str, mutated: &str) -> Result<()> {
    let fresh = !path.exists();
    let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    if fresh {
        w.write_record(CSV_HEADER)?;
    }
    let seconds = |s: Option<f64>| s.map(|s| format!("{s:.1}")).unwrap_or_default();
    w.write_record([
        m.id(),
        m.unit(),
        m.operator.name.to_string(),
        after.status.to_string(),
        seconds(after.detect_seconds),
        format!("{:.1}", after.campaign_seconds),
        before.map(|b| b.status.to_string()).unwrap_or_default(),
        seconds(before.and_then(|b| b.detect_seconds)),
        before.map(|b| format!("{:.1}", b.campaign_seconds)).unwrap_or_default(),
        source.to_string(),
        mutated.to_string(),
        after.detail.clone(),
    ])?;
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("csv buffer: {e}"))?;
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    file.write_all(&bytes)?;
    Ok(())
}

/// Counts of one pass or stage (or of all), for one side (after or before).
#[derive(Default)]
struct Tally {
    killed: usize,
    survived: usize,
    timeout: usize,
    detect: Vec<f64>,
    /// Campaign time spent on the mutants, killed or not.
    seconds: f64,
}

impl Tally {
    fn add(&mut self, status: &str, detect: &str, seconds: &str) {
        self.seconds += seconds.parse::<f64>().unwrap_or(0.0);
        match status {
            "killed" => self.killed += 1,
            "survived" => self.survived += 1,
            "timeout" => self.timeout += 1,
            _ => {}
        }
        if let Ok(s) = detect.parse() {
            self.detect.push(s);
        }
    }
    fn rate(&self) -> String {
        let judged = self.killed + self.survived;
        if judged == 0 { "-".to_string() } else { format!("{:.0}%", 100.0 * self.killed as f64 / judged as f64) }
    }
    /// Mutants killed per minute of campaign time.
    fn per_minute(&self) -> String {
        if self.seconds == 0.0 { "-".to_string() } else { format!("{:.2}", self.killed as f64 * 60.0 / self.seconds) }
    }
    fn median(&self) -> String {
        let mut sorted = self.detect.clone();
        sorted.sort_by(f64::total_cmp);
        if sorted.is_empty() { "-".to_string() } else { format!("{:.0} s", sorted[sorted.len() / 2]) }
    }
}

/// `mutants.md` from the rows of `mutants.csv` and the survivors found `equivalent`.
fn report(rows: &[Vec<String>], equivalent: &BTreeMap<String, String>, args: &MutantsArgs) -> String {
    #[derive(Default)]
    struct Unit {
        mutants: usize,
        unviable: usize,
        equivalent: usize,
        after: Tally,
        before: Tally,
    }
    let mut units: BTreeMap<&str, Unit> = BTreeMap::new();
    let mut all = Unit::default();
    for r in rows {
        for u in [units.entry(&r[1]).or_default(), &mut all] {
            u.mutants += 1;
            if r[3] == "unviable" {
                u.unviable += 1;
                continue;
            }
            // Only a mutant no campaign killed can be equivalent.
            if equivalent.contains_key(&r[0]) && r[3] == "survived" && r[6] != "killed" {
                u.equivalent += 1;
            }
            u.after.add(&r[3], &r[4], &r[5]);
            u.before.add(&r[6], &r[7], &r[8]);
        }
    }
    let has_before = rows.iter().any(|r| !r[6].is_empty());
    let mut s = String::new();
    let _ = writeln!(s, "# Mutation score of the campaign\n");
    let _ = writeln!(
        s,
        "Mechanical mutants of `compiler/src/passes` and `compiler/src/isa` (`harness mutants`, seed {}; all compiled into one build, one switched on per campaign), each judged by a campaign of {:.0} s (`--jobs {}`, seed {}, strategies: {}) stopped at its first failure. Kill rate = killed / (killed + survived); *non-equivalent*: the same without the survivors read and found equivalent (listed below with the reason); kills per minute: killed mutants per minute of campaign time spent on all of them; unviable mutants do not compile; timeout: the campaign hung (the mutant made the compiler loop).{}\n",
        args.seed,
        args.campaign_seconds,
        args.jobs,
        args.seed,
        match (&args.strategy, args.random_configs) {
            (None, None) => "the default".to_string(),
            (s, n) => format!(
                "`{}`{}",
                s.as_deref().unwrap_or(crate::campaign::config::DEFAULT_STRATEGIES),
                n.map(|n| format!(", {n} random configurations")).unwrap_or_default()
            ),
        },
        match (has_before, &args.before_args) {
            (false, _) => String::new(),
            (true, Some(extra)) => format!(" *Before*: the same campaign with `{extra}`; *after*: the campaign as given."),
            (true, None) => " *Before*: the same campaign over a fixed corpus of programs from another generator (see the notes of this directory); *after*: today's generator.".to_string(),
        }
    );
    let non_equivalent = |t: &Tally, equivalent: usize| {
        let judged = (t.killed + t.survived).saturating_sub(equivalent);
        if judged == 0 { "-".to_string() } else { format!("{:.0}%", 100.0 * t.killed as f64 / judged as f64) }
    };
    if has_before {
        let _ = writeln!(
            s,
            "| pass or stage | mutants | unviable | equivalent | killed before | killed after | survived after | timeout after | kill rate before | kill rate after | non-equivalent before | non-equivalent after | kills/min before | kills/min after | median detection before | median detection after |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
        );
    } else {
        let _ = writeln!(
            s,
            "| pass or stage | mutants | unviable | equivalent | killed | survived | timeout | kill rate | non-equivalent | kills/min | median time to detection |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
        );
    }
    let mut line = |name: &str, u: &Unit| {
        if has_before {
            let _ = writeln!(
                s,
                "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                u.mutants,
                u.unviable,
                u.equivalent,
                u.before.killed,
                u.after.killed,
                u.after.survived,
                u.after.timeout,
                u.before.rate(),
                u.after.rate(),
                non_equivalent(&u.before, u.equivalent),
                non_equivalent(&u.after, u.equivalent),
                u.before.per_minute(),
                u.after.per_minute(),
                u.before.median(),
                u.after.median()
            );
        } else {
            let _ = writeln!(
                s,
                "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                u.mutants,
                u.unviable,
                u.equivalent,
                u.after.killed,
                u.after.survived,
                u.after.timeout,
                u.after.rate(),
                non_equivalent(&u.after, u.equivalent),
                u.after.per_minute(),
                u.after.median()
            );
        }
    };
    for (name, u) in &units {
        line(name, u);
    }
    line("**all**", &all);
    let survivors: Vec<&Vec<String>> = rows.iter().filter(|r| r[3] == "survived").collect();
    if !survivors.is_empty() {
        let _ = writeln!(s, "\n## Survivors (the generator's to-do list, or equivalent with the reason)\n");
        for r in survivors {
            let reason = equivalent.get(&r[0]).map(|why| format!(" — equivalent: {why}")).unwrap_or_default();
            let before = if has_before && r[6] == "killed" { " (killed before)" } else { "" };
            let _ = writeln!(s, "- `{}`: `{}` → `{}`{before}{reason}", r[0], r[9].replace('`', "'"), r[10].replace('`', "'"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: MutantsArgs,
    }

    fn row(id: &str, after: &str, after_seconds: &str, before: &str, before_seconds: &str) -> Vec<String> {
        let detect = |status: &str, seconds: &str| if status == "killed" { seconds.to_string() } else { String::new() };
        [id, "passes/licm", "lt-to-le", after, &detect(after, after_seconds), after_seconds, before, &detect(before, before_seconds), before_seconds, "a < b", "a <= b", ""]
            .map(str::to_string)
            .to_vec()
    }

    #[test]
    fn the_report_leaves_equivalent_survivors_out_of_the_non_equivalent_rate() {
        let args = Cli::parse_from(["mutants", "--before-args", "--no-seeds"]).args;
        let rows = vec![
            row("a", "killed", "30", "survived", "60"),
            row("b", "killed", "30", "killed", "60"),
            row("c", "survived", "60", "survived", "60"),
            row("d", "survived", "60", "survived", "60"),
        ];
        let equivalent: BTreeMap<String, String> = [("c".to_string(), "the condition never holds".to_string())].into();
        let text = report(&rows, &equivalent, &args);
        let all = text.lines().find(|l| l.starts_with("| **all**")).expect("a total line");
        let cells: Vec<&str> = all.split('|').map(str::trim).collect();
        // mutants, unviable, equivalent, killed before/after, survived, timeout,
        // kill rate before/after, non-equivalent before/after, kills/min before/after.
        assert_eq!(&cells[2..15], &["4", "0", "1", "1", "2", "2", "0", "25%", "50%", "33%", "67%", "0.25", "0.67"]);
        assert!(text.contains("`c`: `a < b` → `a <= b` — equivalent: the condition never holds"), "{text}");
        assert!(text.contains("with `--no-seeds`"), "{text}");
    }
}
