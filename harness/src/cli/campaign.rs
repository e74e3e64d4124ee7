//! `harness campaign`: the command line of [`super`].
//!
//! `harness campaign [--minutes M | --hours H | --until HH:MM | --programs N] [--jobs N]
//! [--strategy a,b] [--over a,b,c] [--seed S] [--out DIR] [--resume DIR] [--gcc]
//! [--fault NAME,...] [--shard i/n] [--no-triage] [--previous DIR] [--in-process]
//! [--no-guide] [--guide-batch N] [--step-limit SECS] [--memory-limit GIB]
//! [--seeds DIR]... [--seed-share F] [--no-seeds]`
//!
//! By default the campaign runs in a child process under a supervisor that survives and
//! records compiler crashes and hangs (see [`crate::campaign::isolate`]); `--in-process` runs it here.
//!
//! Each new failure is triaged at once (bisect + reduce, see [`crate::campaign::autotriage`]) unless
//! `--no-triage`; regression cases go to `corpus/regressions/` (to be committed; with `--out`:
//! `<out>/regressions/`), never for failures of injected faults.
//!
//! Defaults: 3 minutes, all cores, coverage-guided swarm generation (batches of 8) with a
//! quarter of the programs variants of the competition suites and `corpus/` (when present), the
//! `o-levels,random` strategies (8 configurations per program; why not more: see
//! [`DEFAULT_STRATEGIES`]), output in `results/campaigns/<campaign-id>/` ([`DEFAULT_PARENT`],
//! ignored by git) or `--out`, failures in its `failures/`.
//! Ctrl-C finishes the programs in progress, writes the summary and exits; a second Ctrl-C
//! exits at once (`--resume` continues either way).

/// Where campaigns go without `--out`: raw output, ignored by git (`.gitignore`).
pub const DEFAULT_PARENT: &str = "results/campaigns";

use crate::campaign::autotriage::AutoTriage;
use crate::campaign::config::DEFAULT_STRATEGIES;
use crate::campaign::failures::SavedFailure;
use crate::campaign::isolate;
use crate::campaign::{CampaignOptions, Shard, campaign_id, load_options, resume, start};
use sysy_check::qemu::{CostMode, Runner};
use sysy_check::subject::Limits;
use crate::triage::reduce::ReduceOptions;
use crate::triage::regression::TriageOptions;
use anyhow::{Context, Result};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(clap::Args, Debug)]
pub struct CampaignArgs {
    /// Run for this many minutes (default 3 when no limit is given). With `--resume`: this
    /// many more minutes (else what is left of the saved limit).
    #[arg(long, conflicts_with_all = ["hours", "programs", "until"], value_parser = positive_f64)]
    pub minutes: Option<f64>,
    /// Run for this many hours.
    #[arg(long, conflicts_with_all = ["programs", "until"], value_parser = positive_f64)]
    pub hours: Option<f64>,
    /// Run until this time of day (HH:MM, UTC; the next such time, so `06:00` started at
    /// 22:00 runs 8 hours).
    #[arg(long, conflicts_with = "programs", value_name = "HH:MM")]
    pub until: Option<String>,
    /// Check only shard i of n (0 <= i < n): the program numbers p with p mod n = i.
    #[arg(long, value_name = "i/n", conflicts_with = "resume")]
    pub shard: Option<String>,
    /// Do not triage new failures.
    #[arg(long)]
    pub no_triage: bool,
    /// Stop each reduction after testing this many candidates.
    #[arg(long, default_value_t = 5000, value_parser = positive_usize)]
    pub triage_candidates: usize,
    /// A previous night's campaign (or merged) directory: the summary says what is new and
    /// what disappeared.
    #[arg(long)]
    pub previous: Option<PathBuf>,
    /// Check the `.sy` programs of this directory (in name order, stdin from the `.in` file of
    /// the same stem) instead of generating programs; stops after the last one.
    #[arg(long, conflicts_with = "resume")]
    pub corpus: Option<PathBuf>,
    /// Mix variants of the programs of this directory (recursively; repeatable) with the
    /// generated ones (see `sources::mutated`). Default: the competition suites
    /// (functional/, performance/) and `corpus/`, those present.
    #[arg(long = "seeds", value_name = "DIR", conflicts_with_all = ["resume", "corpus", "no_seeds"])]
    pub seeds: Vec<PathBuf>,
    /// Generated programs only (no variants of seed programs).
    #[arg(long, conflicts_with = "resume")]
    pub no_seeds: bool,
    /// Share of the programs that are variants of seed programs (0 to 1).
    #[arg(long, value_name = "F", default_value_t = crate::sources::mutated::DEFAULT_SHARE, value_parser = share)]
    pub seed_share: f64,
    /// Check this many programs (program numbers 0..N), then stop.
    #[arg(long, value_parser = positive_u64)]
    pub programs: Option<u64>,
    /// Start no new program once N programs have failed (the programs in flight are
    /// finished); with a time or program limit, whichever comes first.
    #[arg(long, value_name = "N", value_parser = positive_u64, conflicts_with = "resume")]
    pub stop_after_failures: Option<u64>,
    /// Worker threads (default: the number of cores).
    #[arg(long, value_parser = positive_usize)]
    pub jobs: Option<usize>,
    /// Strategies: o-levels, singles, leave-one-out, pairs, random, exhaustive.
    #[arg(long, default_value = DEFAULT_STRATEGIES)]
    pub strategy: String,
    /// The passes (IR passes or back-end stages) whose subsets `exhaustive` enumerates.
    #[arg(long, value_delimiter = ',')]
    pub over: Vec<String>,
    /// Random configurations per program for the `random` strategy.
    #[arg(long, default_value_t = 4, value_parser = positive_usize)]
    pub random_configs: usize,
    /// The campaign seed (program i uses `program_seed(seed, i)`, a SplitMix64 hash);
    /// default: from the clock and the process id.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Campaign directory (default `results/campaigns/<campaign-id>`); failures go to `<out>/failures`.
    #[arg(long, conflicts_with = "resume")]
    pub out: Option<PathBuf>,
    /// Continue the campaign in this directory (after a kill or Ctrl-C) for what is left of
    /// its time budget (`state.json` holds the time used). A time limit given here runs that
    /// much longer; a program limit replaces the saved one.
    #[arg(long)]
    pub resume: Option<PathBuf>,
    /// Also run gcc -O0 and -O2 of each program (a third opinion).
    #[arg(long)]
    pub gcc: bool,
    /// Time limit of each run, in seconds (default 10).
    #[arg(long, default_value_t = Limits::GENERATED.timeout.as_secs_f64(), value_parser = positive_f64)]
    pub timeout: f64,
    /// A compiler step (one configuration's compile and runs, a program's front end, one
    /// check of a triage) still running after this many seconds is a hang: the supervisor
    /// stops it and records a `compiler-hang` failure (default: 60, or four `--timeout`s if
    /// longer).
    #[arg(long, value_parser = positive_f64)]
    pub step_limit: Option<f64>,
    /// The campaign process may allocate at most this many GiB (its data limit, also for each
    /// qemu run it starts): a compiler step that allocates without bound then dies by
    /// SIGABRT and is recorded as a `compiler-crash`, before it exhausts the machine (default:
    /// half the physical memory, at least 2).
    #[arg(long, value_name = "GIB", value_parser = positive_f64)]
    pub memory_limit: Option<f64>,
    /// Use the generator's default configuration instead of swarm configurations.
    #[arg(long)]
    pub no_swarm: bool,
    /// Plain swarm: do not move the knob probabilities from the campaign's feedback (see
    /// `campaign::guide`).
    #[arg(long)]
    pub no_guide: bool,
    /// Programs per batch of the coverage-guided swarm (weights change between batches).
    #[arg(long, default_value_t = crate::campaign::guide::DEFAULT_BATCH)]
    pub guide_batch: u64,
    /// Inject named compiler faults (builds with the `fault-injection` feature).
    #[arg(long, value_delimiter = ',', hide = !cfg!(feature = "fault-injection"))]
    pub fault: Vec<String>,
    /// Run the campaign in this process, without the supervisor that survives compiler
    /// crashes (a crash then ends the campaign; `--resume` continues after it).
    #[arg(long)]
    pub in_process: bool,
    /// How executables are built: `in-process` (the compiler's assembler and linker, the
    /// freestanding runtime) or `gnu` (GNU as, the gcc driver, glibc).
    #[arg(long, value_name = "in-process|gnu", default_value_t)]
    pub assembler: sysyc::runtime::library::Assembler,
    /// Assemble one assembly text in N with GNU as too and compare the encodings byte for
    /// byte (0: never).
    #[arg(long, value_name = "N", default_value_t = crate::campaign::DEFAULT_ENCODER_SAMPLE)]
    pub encoder_sample: u64,
}

/// A finite number greater than zero (`nan`, `inf`, `0` and negatives are refused).
pub fn positive_f64(text: &str) -> Result<f64, String> {
    let value: f64 = text.trim().parse().map_err(|_| format!("`{text}` is not a number"))?;
    if !value.is_finite() || value <= 0.0 {
        return Err(format!("`{text}`: expected a finite number greater than 0"));
    }
    // Durations are built from it: refuse what `Duration` cannot hold (a century is plenty).
    if value > 3.2e9 {
        return Err(format!("`{text}`: too large"));
    }
    Ok(value)
}

/// A whole number greater than zero.
/// A share between 0 and 1.
pub fn share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("invalid share `{text}`: expected a number from 0 to 1")),
    }
}

/// The seed directories of a new campaign: `--seeds`, else the suites and `corpus/` present
/// (none with `--no-seeds`, `--corpus` or a share of 0).
fn seed_options(args: &CampaignArgs) -> Result<Option<crate::sources::mutated::SeedOptions>> {
    if args.no_seeds || args.corpus.is_some() || args.seed_share == 0.0 {
        return Ok(None);
    }
    let mut dirs = args.seeds.clone();
    if dirs.is_empty() {
        if let Some(suites) = sysyc::suites::sysy_tests_dir() {
            dirs.extend(["functional", "performance"].map(|d| suites.join(d)).into_iter().filter(|d| d.is_dir()));
        }
        dirs.extend(Some(PathBuf::from("corpus")).filter(|d| d.is_dir()));
        if dirs.is_empty() {
            return Ok(None);
        }
    }
    // Absolute: the supervisor's worker processes and a later `--resume` may run elsewhere.
    let dirs = dirs.iter().map(std::path::absolute).collect::<std::io::Result<Vec<_>>>().context("the seed paths")?;
    crate::sources::mutated::seed_files(&dirs)?;
    Ok(Some(crate::sources::mutated::SeedOptions { dirs, share: args.seed_share }))
}

pub fn positive_u64(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(0) => Err("0: expected a whole number greater than 0".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{text}` is not a whole number greater than 0")),
    }
}

/// A whole number greater than zero that fits a `usize`.
pub fn positive_usize(text: &str) -> Result<usize, String> {
    usize::try_from(positive_u64(text)?).map_err(|_| format!("`{text}`: too large"))
}

/// Default length of a campaign without limits.
const DEFAULT_MINUTES: f64 = 3.0;

fn session_seconds(args: &CampaignArgs) -> Result<Option<f64>> {
    if let Some(until) = &args.until {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        return Ok(Some(seconds_until(until, now).map_err(anyhow::Error::msg)? as f64));
    }
    Ok(args.minutes.map(|m| m * 60.0).or(args.hours.map(|h| h * 3600.0)))
}

/// Seconds from `now` (Unix time) to the next `HH:MM` UTC (a full day when it is now).
pub fn seconds_until(hh_mm: &str, now: u64) -> Result<u64, String> {
    let bad = || format!("invalid --until `{hh_mm}`: expected HH:MM (UTC), e.g. 06:30");
    let (h, m) = hh_mm.trim().split_once(':').ok_or_else(bad)?;
    let (h, m): (u64, u64) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    if h > 23 || m > 59 {
        return Err(bad());
    }
    let target = h * 3600 + m * 60;
    let today = now % 86_400;
    Ok(if target > today { target - today } else { target + 86_400 - today })
}

/// Where a campaign in `dir` writes its regression cases: a campaign in the default place
/// (`dir` not given, or under [`DEFAULT_PARENT`]) adds them to the corpus (to be committed);
/// one elsewhere (`--out`, or the supervisor's child resuming it) keeps them with its other
/// output.
fn regressions_dir(dir: Option<&std::path::Path>) -> PathBuf {
    let absolute = |p: &std::path::Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    match dir {
        Some(dir) if !absolute(dir).starts_with(absolute(std::path::Path::new(DEFAULT_PARENT))) => dir.join("regressions"),
        _ => PathBuf::from("corpus/regressions"),
    }
}

/// The triage hook's settings for a campaign whose failures go to `failures_dir`.
fn auto_triage(args: &CampaignArgs, options: &CampaignOptions) -> Result<Option<AutoTriage>> {
    if args.no_triage {
        return Ok(None);
    }
    let limits = Limits::GENERATED.with_timeout(Some(options.timeout_secs)).map_err(anyhow::Error::msg)?;
    let regressions = regressions_dir(args.out.as_deref().or(args.resume.as_deref()));
    Ok(Some(AutoTriage {
        options: TriageOptions {
            limits: limits.clone(),
            reduce: ReduceOptions { limits, max_candidates: args.triage_candidates, ..ReduceOptions::default() },
            regressions_dir: Some(regressions),
        },
        // Without qemu-arm triage judges the IR only (the campaign itself needs qemu, so
        // this is the exception).
        runner: Runner::new(CostMode::Off).ok(),
        hang_probe_limit: crate::triage::hang::probe_limit(options.step_limit()),
    }))
}

/// The failure hook: triage (when on) and a one-line note.
fn triage_hook(triage: Option<&AutoTriage>) -> impl Fn(&SavedFailure) + Sync + '_ {
    move |saved: &SavedFailure| {
        let Some(t) = triage else { return };
        let r = t.run(saved);
        errln!(
            "triage: {}: culprit {}, {} → {} lines ({:.1} s){}",
            saved.id,
            r.culprit,
            r.lines_before,
            r.lines_after.map_or("-".to_string(), |n| n.to_string()),
            r.seconds,
            r.error.as_deref().map(|e| format!(": {e}")).unwrap_or_default()
        );
    }
}

/// A campaign's directory and options, resolved from the arguments (new or resumed).
struct Resolved {
    dir: PathBuf,
    options: CampaignOptions,
    resume: bool,
}

fn resolve(args: &CampaignArgs) -> Result<Resolved> {
    // The supervisor has said what it runs; its child would only repeat it.
    let quiet = isolate::is_child();
    if let Some(dir) = &args.resume {
        let mut options = load_options(dir)?;
        if args.previous.is_some() {
            options.previous = args.previous.clone();
        }
        // A time limit given here extends the campaign by that much from where it is; a
        // program limit replaces the saved one. Saved, except in the supervisor's child,
        // whose only limit is a replay's `--programs` for that session.
        let limit_given = session_seconds(args)?.is_some()
            || args.programs.is_some()
            || args.step_limit.is_some()
            || args.memory_limit.is_some();
        if args.step_limit.is_some() {
            options.step_limit_secs = args.step_limit;
        }
        if args.memory_limit.is_some() {
            options.memory_limit_gib = args.memory_limit;
        }
        if let Some(s) = session_seconds(args)? {
            options.seconds = Some(crate::campaign::State::read(dir)?.elapsed_secs + s);
            options.programs = None;
        }
        if args.programs.is_some() {
            options.programs = args.programs;
            options.seconds = None;
        }
        if limit_given && !quiet {
            crate::campaign::save_options(dir, &options)?;
        }
        if !quiet {
            let state = crate::campaign::State::read(dir)?;
            let left = options.seconds.map(|s| format!(", {:.0} s of {s:.0} s left", state.remaining(s))).unwrap_or_default();
            errln!("harness: resuming campaign {} in {}{left}", options.campaign_id, dir.display());
        }
        return Ok(Resolved { dir: dir.clone(), options, resume: true });
    }
    let seed = args.seed.unwrap_or_else(default_seed);
    let shard = args.shard.as_deref().map(Shard::parse).transpose().map_err(anyhow::Error::msg)?;
    let id = match shard {
        Some(s) => format!("{}-shard{}of{}", campaign_id(seed), s.index, s.count),
        None => campaign_id(seed),
    };
    let seconds = match (session_seconds(args)?, args.programs) {
        (Some(s), _) => Some(s),
        (None, Some(_)) => None,
        (None, None) => Some(DEFAULT_MINUTES * 60.0),
    };
    let options = CampaignOptions {
        campaign_id: id,
        seed,
        programs: args.programs,
        seconds,
        strategies: args.strategy.split(',').map(|s| s.trim().to_string()).collect(),
        over: args.over.clone(),
        random_per_program: args.random_configs,
        gcc: args.gcc,
        timeout_secs: args.timeout,
        swarm: !args.no_swarm,
        faults: args.fault.clone(),
        failures_dir: PathBuf::new(),
        shard,
        previous: args.previous.clone(),
        gnu_assembler: args.assembler == sysyc::runtime::library::Assembler::Gnu,
        encoder_sample: args.encoder_sample,
        guide: (!args.no_swarm && !args.no_guide && args.guide_batch > 0 && args.corpus.is_none())
            .then_some(crate::campaign::guide::GuideOptions { batch: args.guide_batch }),
        // Absolute: the supervisor's worker processes and a later `--resume` may run elsewhere.
        corpus: args.corpus.as_deref().map(std::path::absolute).transpose().context("the corpus path")?,
        seeds: seed_options(args)?,
        stop_after_failing: args.stop_after_failures,
        step_limit_secs: args.step_limit,
        memory_limit_gib: args.memory_limit,
    };
    if let Some(corpus) = &options.corpus {
        crate::sources::corpus::len(corpus)?;
    }
    // Check what the child would refuse before creating anything.
    crate::campaign::config::Strategy::parse_list(&options.strategies.join(",")).map_err(anyhow::Error::msg)?;
    sysyc::faults::FaultSet::parse(&options.faults.join(",")).map_err(anyhow::Error::msg)?;
    Limits::GENERATED.with_timeout(Some(options.timeout_secs)).map_err(anyhow::Error::msg)?;
    Runner::new(CostMode::Measure).context("qemu-arm with the cost plugin")?;
    sysyc::toolchain::arm_gcc().context("the ARM cross toolchain")?;
    let (dir, campaign_id) = match &args.out {
        Some(out) => (out.clone(), options.campaign_id.clone()),
        None => {
            // Created here, atomically: a campaign started at the same moment gets another name.
            let (id, dir) = crate::campaign::reserve_dir(Path::new(DEFAULT_PARENT), &options.campaign_id)?;
            (dir, id)
        }
    };
    let failures_dir = dir.join("failures");
    let options = CampaignOptions { campaign_id, failures_dir, ..options };
    errln!("harness: campaign {} (seed {seed}) in {}", options.campaign_id, dir.display());
    Ok(Resolved { dir, options, resume: false })
}

/// A seed for a campaign started without `--seed`: the clock (nanoseconds) and the process
/// id through SplitMix64, so campaigns started together get unrelated seeds.
fn default_seed() -> u64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    crate::campaign::program_seed(nanos, u64::from(std::process::id()))
}

fn jobs(args: &CampaignArgs) -> usize {
    args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `harness campaign`: the supervisor (see [`crate::campaign::isolate`]), or the campaign itself with
/// `--in-process` and in the supervisor's child. Returns the exit status.
pub fn run(args: &CampaignArgs) -> Result<u8> {
    if args.in_process || isolate::is_child() {
        return run_in_process(args).map(|()| 0);
    }
    let resolved = resolve(args)?;
    if !resolved.resume {
        crate::campaign::prepare(&resolved.dir, &resolved.options)?;
    }
    let mut fixed_args: Vec<OsString> = vec!["--triage-candidates".into(), args.triage_candidates.to_string().into()];
    if args.no_triage {
        fixed_args.push("--no-triage".into());
    }
    if let Some(previous) = &resolved.options.previous {
        fixed_args.push("--previous".into());
        fixed_args.push(previous.into());
    }
    let step_limit = resolved.options.step_limit();
    let memory_limit = resolved.options.memory_limit();
    let supervisor = isolate::Supervisor { dir: resolved.dir, jobs: jobs(args), fixed_args, step_limit, memory_limit };
    supervisor.run()
}

fn run_in_process(args: &CampaignArgs) -> Result<()> {
    let jobs = jobs(args);
    let stop = Arc::new(AtomicBool::new(false));
    let handler_stop = Arc::clone(&stop);
    ctrlc::set_handler(move || {
        if handler_stop.swap(true, Ordering::SeqCst) {
            errln!("\nharness: second interrupt, exiting now (continue with --resume)");
            std::process::exit(130);
        }
        errln!("\nharness: interrupted; finishing the programs in progress (Ctrl-C again to quit now)");
    })
    .context("installing the Ctrl-C handler")?;

    let Resolved { dir, options, resume: resuming } = resolve(args)?;
    let triage = auto_triage(args, &options)?;
    let hook = triage_hook(triage.as_ref());
    let report = if resuming {
        resume(&dir, &options, jobs, &stop, Some(&hook))?
    } else {
        start(&dir, &options, jobs, &stop, Some(&hook))?
    };
    let s = &report.stats;
    let checks_per_s = if report.session.seconds > 0.0 { report.session.checks as f64 / report.session.seconds } else { 0.0 };
    outln!(
        "{} programs ({} discarded), {} configurations, {} checks, {:.1} checks/s, dedup {:.1}% (back end) / {:.1}% (qemu), {} timeouts, {} failures in {} programs",
        s.programs,
        s.discarded,
        s.configs,
        s.checks,
        checks_per_s,
        100.0 * s.backend_dedup(),
        100.0 * s.qemu_dedup(),
        s.timeouts,
        s.failures,
        s.failing_programs
    )?;
    outln!("report: {}", report.dir.join("summary.md").display())?;
    if s.failures > 0 {
        anyhow::bail!("{} failing checks; see {}", s.failures, report.dir.join("summary.md").display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn regression_cases_stay_with_a_campaign_outside_the_default_place() {
        use std::path::Path;
        assert_eq!(super::regressions_dir(None), Path::new("corpus/regressions"));
        assert_eq!(super::regressions_dir(Some(Path::new("results/campaigns/x"))), Path::new("corpus/regressions"));
        // The supervisor's child resumes the directory of `--out /tmp/c`.
        assert_eq!(super::regressions_dir(Some(Path::new("/tmp/c"))), Path::new("/tmp/c/regressions"));
    }

    use super::seconds_until;

    #[test]
    fn campaign_until_is_the_next_such_time() {
        let ten_pm = 19_000 * 86_400 + 22 * 3600;
        assert_eq!(seconds_until("06:00", ten_pm), Ok(8 * 3600));
        assert_eq!(seconds_until("22:30", ten_pm), Ok(1800));
        assert_eq!(seconds_until("22:00", ten_pm), Ok(86_400));
        assert!(seconds_until("24:00", ten_pm).is_err());
        assert!(seconds_until("6", ten_pm).is_err());
    }
}
