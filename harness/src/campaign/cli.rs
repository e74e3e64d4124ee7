//! `harness campaign`: the command line of [`super`].
//!
//! `harness campaign [--minutes M | --hours H | --until HH:MM | --programs N] [--jobs N]
//! [--strategy a,b] [--over a,b,c] [--seed S] [--out DIR] [--resume DIR] [--gcc]
//! [--fault NAME,...] [--shard i/n] [--no-triage] [--previous DIR] [--in-process]
//! [--no-guide] [--guide-batch N]`
//!
//! By default the campaign runs in a child process under a supervisor that survives and
//! records compiler crashes (see [`super::isolate`]); `--in-process` runs it here.
//!
//! Each new failure is triaged at once (bisect + reduce, see [`super::autotriage`]) unless
//! `--no-triage`; regression cases go next to the failure corpus (`corpus/regressions/`,
//! or `<out>/regressions/`), never for failures of injected faults.
//!
//! Defaults: 3 minutes, all cores, coverage-guided swarm generation (batches of 8), the `o-levels,singles,leave-one-out,
//! random` strategies, output in `results/<campaign-id>/`, failures in `corpus/failures/`
//! (in `<out>/failures/` when `--out` is given, so test runs stay out of the corpus).
//! Ctrl-C finishes the programs in progress, writes the summary and exits; a second Ctrl-C
//! exits at once (`--resume` continues either way).

use super::autotriage::AutoTriage;
use super::config::DEFAULT_STRATEGIES;
use super::failures::SavedFailure;
use super::isolate;
use super::{CampaignOptions, Shard, campaign_id, load_options, resume, start};
use crate::qemu::{CostMode, Runner};
use crate::subject::Limits;
use crate::triage::reduce::ReduceOptions;
use crate::triage::regression::TriageOptions;
use anyhow::{Context, Result};
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(clap::Args, Debug)]
pub struct CampaignArgs {
    /// Run for this many minutes (default 3 when no limit is given).
    #[arg(long, conflicts_with_all = ["hours", "programs", "until"])]
    pub minutes: Option<f64>,
    /// Run for this many hours.
    #[arg(long, conflicts_with_all = ["programs", "until"])]
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
    #[arg(long, default_value_t = 5000)]
    pub triage_candidates: usize,
    /// A previous night's campaign (or merged) directory: the summary says what is new and
    /// what disappeared.
    #[arg(long)]
    pub previous: Option<PathBuf>,
    /// Check this many programs (program numbers 0..N), then stop.
    #[arg(long)]
    pub programs: Option<u64>,
    /// Worker threads (default: the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Strategies: o-levels, singles, leave-one-out, pairs, random, exhaustive.
    #[arg(long, default_value = DEFAULT_STRATEGIES)]
    pub strategy: String,
    /// The passes (IR passes or back-end stages) whose subsets `exhaustive` enumerates.
    #[arg(long, value_delimiter = ',')]
    pub over: Vec<String>,
    /// Random configurations per program for the `random` strategy.
    #[arg(long, default_value_t = 4)]
    pub random_configs: usize,
    /// First seed (program i uses seed + i); default: from the clock.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Campaign directory (default `results/<campaign-id>`); failures go to `<out>/failures`.
    #[arg(long, conflicts_with = "resume")]
    pub out: Option<PathBuf>,
    /// Continue the campaign in this directory (after a kill or Ctrl-C). A time or program
    /// limit given here replaces the saved one.
    #[arg(long)]
    pub resume: Option<PathBuf>,
    /// Also run gcc -O0 and -O2 of each program (a third opinion).
    #[arg(long)]
    pub gcc: bool,
    /// Time limit of each run, in seconds (default 10).
    #[arg(long, default_value_t = Limits::GENERATED.timeout.as_secs_f64())]
    pub timeout: f64,
    /// Use the generator's default configuration instead of swarm configurations.
    #[arg(long)]
    pub no_swarm: bool,
    /// Plain swarm: do not move the knob probabilities from the campaign's feedback (see
    /// `campaign::guide`).
    #[arg(long)]
    pub no_guide: bool,
    /// Programs per batch of the coverage-guided swarm (weights change between batches).
    #[arg(long, default_value_t = super::guide::DEFAULT_BATCH)]
    pub guide_batch: u64,
    /// Inject named compiler faults (builds with the `fault-injection` feature).
    #[arg(long, value_delimiter = ',', hide = !cfg!(feature = "fault-injection"))]
    pub fault: Vec<String>,
    /// Run the campaign in this process, without the supervisor that survives compiler
    /// crashes (a crash then ends the campaign; `--resume` continues after it).
    #[arg(long)]
    pub in_process: bool,
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

/// The triage hook's settings for a campaign whose failures go to `failures_dir`.
fn auto_triage(args: &CampaignArgs, options: &CampaignOptions) -> Result<Option<AutoTriage>> {
    if args.no_triage {
        return Ok(None);
    }
    let limits = Limits::GENERATED.with_timeout(Some(options.timeout_secs)).map_err(anyhow::Error::msg)?;
    let regressions = match options.failures_dir.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.join("regressions"),
        _ => PathBuf::from("regressions"),
    };
    Ok(Some(AutoTriage {
        options: TriageOptions {
            limits: limits.clone(),
            reduce: ReduceOptions { limits, max_candidates: args.triage_candidates, ..ReduceOptions::default() },
            regressions_dir: Some(regressions),
        },
        // Without qemu-arm triage judges the IR only (the campaign itself needs qemu, so
        // this is the exception).
        runner: Runner::new(CostMode::Off).ok(),
    }))
}

/// The failure hook: triage (when on) and a one-line note.
fn triage_hook(triage: Option<&AutoTriage>) -> impl Fn(&SavedFailure) + Sync + '_ {
    move |saved: &SavedFailure| {
        let Some(t) = triage else { return };
        let r = t.run(saved);
        eprintln!(
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
        if let Some(s) = session_seconds(args)? {
            options.seconds = Some(s);
            options.programs = None;
        }
        if args.programs.is_some() {
            options.programs = args.programs;
            options.seconds = None;
        }
        if !quiet {
            eprintln!("harness: resuming campaign {} in {}", options.campaign_id, dir.display());
        }
        return Ok(Resolved { dir: dir.clone(), options, resume: true });
    }
    let seed = args
        .seed
        .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()));
    let shard = args.shard.as_deref().map(Shard::parse).transpose().map_err(anyhow::Error::msg)?;
    let id = match shard {
        Some(s) => format!("{}-shard{}of{}", campaign_id(seed), s.index, s.count),
        None => campaign_id(seed),
    };
    let (dir, failures_dir) = match &args.out {
        Some(out) => (out.clone(), out.join("failures")),
        None => (PathBuf::from("results").join(&id), PathBuf::from("corpus/failures")),
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
        failures_dir,
        shard,
        previous: args.previous.clone(),
        guide: (!args.no_swarm && !args.no_guide && args.guide_batch > 0)
            .then_some(super::guide::GuideOptions { batch: args.guide_batch }),
    };
    // Check what the child would refuse before creating anything.
    super::config::Strategy::parse_list(&options.strategies.join(",")).map_err(anyhow::Error::msg)?;
    sysyc::faults::FaultSet::parse(&options.faults.join(",")).map_err(anyhow::Error::msg)?;
    Limits::GENERATED.with_timeout(Some(options.timeout_secs)).map_err(anyhow::Error::msg)?;
    Runner::new(CostMode::Measure).context("qemu-arm with the cost plugin")?;
    sysyc::toolchain::arm_gcc().context("the ARM cross toolchain")?;
    eprintln!("harness: campaign {} (seed {seed}) in {}", options.campaign_id, dir.display());
    Ok(Resolved { dir, options, resume: false })
}

fn jobs(args: &CampaignArgs) -> usize {
    args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `harness campaign`: the supervisor (see [`super::isolate`]), or the campaign itself with
/// `--in-process` and in the supervisor's child. Returns the exit status.
pub fn run(args: &CampaignArgs) -> Result<u8> {
    if args.in_process || isolate::is_child() {
        return run_in_process(args).map(|()| 0);
    }
    let resolved = resolve(args)?;
    if !resolved.resume {
        super::prepare(&resolved.dir, &resolved.options)?;
    }
    let mut fixed_args: Vec<OsString> = vec!["--triage-candidates".into(), args.triage_candidates.to_string().into()];
    if args.no_triage {
        fixed_args.push("--no-triage".into());
    }
    if let Some(previous) = &resolved.options.previous {
        fixed_args.push("--previous".into());
        fixed_args.push(previous.into());
    }
    let supervisor = isolate::Supervisor {
        dir: resolved.dir,
        jobs: jobs(args),
        programs: resolved.options.programs,
        seconds: resolved.options.seconds,
        fixed_args,
    };
    supervisor.run()
}

fn run_in_process(args: &CampaignArgs) -> Result<()> {
    let jobs = jobs(args);
    let stop = Arc::new(AtomicBool::new(false));
    let handler_stop = Arc::clone(&stop);
    ctrlc::set_handler(move || {
        if handler_stop.swap(true, Ordering::SeqCst) {
            eprintln!("\nharness: second interrupt, exiting now (continue with --resume)");
            std::process::exit(130);
        }
        eprintln!("\nharness: interrupted; finishing the programs in progress (Ctrl-C again to quit now)");
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
    println!(
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
    );
    println!("report: {}", report.dir.join("summary.md").display());
    if s.failures > 0 {
        anyhow::bail!("{} failing checks; see {}", s.failures, report.dir.join("summary.md").display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
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
