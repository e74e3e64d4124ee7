//! The `bisect`, `reduce` and `triage` subcommands: argument parsing and printing around
//! [`crate::triage::bisect`], [`crate::triage::reduce`] and [`crate::triage::regression`].
//!
//! Exit status, the same for the three: 0 when the failure reproduces (and was bisected,
//! reduced or triaged), [`NOT_REPRODUCED`] when the program does not fail under the
//! configuration (nothing to do), 1 for errors (unreadable files, bad options, a program the
//! reference interpreter cannot judge, missing tools).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, anyhow};
use clap::Args;
use sysy_check::executor::watch::Unwatched;
use sysyc::config::ConfigArgs;
use sysyc::passes::OptLevel;

use crate::triage::bisect::{Checks, bisect, locate};
use crate::triage::case::FailureCase;
use crate::triage::reduce::{ReduceOptions, Reduced, reduce};
use crate::triage::regression::{TriageOptions, reduce_failure, triage};
use sysy_check::qemu::{CostMode, Runner};
use sysy_check::subject::{Case, Limits};

/// Exit status of `bisect`, `reduce` and `triage` when the failure does not reproduce.
pub const NOT_REPRODUCED: u8 = 2;

/// The compiler configuration of the failure, and run limits.
#[derive(Args, Clone, Debug)]
pub struct FailureArgs {
    /// The failing compilation (-O0 with every back-end stage when nothing is given).
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Wall-clock limit of every run, in seconds (default 10).
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Judge the IR interpreter only (no ARM binaries: no back-end bisection).
    #[arg(long)]
    pub no_qemu: bool,
}

impl FailureArgs {
    fn limits(&self) -> anyhow::Result<Limits> {
        Limits::GENERATED.with_timeout(self.timeout).map_err(|e| anyhow!(e))
    }

    fn runner(&self) -> anyhow::Result<Option<Runner>> {
        if self.no_qemu {
            return Ok(None);
        }
        Runner::new(CostMode::Off).map(Some).map_err(|e| anyhow!("{e} (use --no-qemu to judge the IR only)"))
    }
}

#[derive(Args, Clone, Debug)]
pub struct BisectArgs {
    /// The SysY source of the failing program.
    pub file: PathBuf,
    /// Its standard input.
    #[arg(long)]
    pub stdin: Option<PathBuf>,
    #[command(flatten)]
    pub failure: FailureArgs,
}

#[derive(Args, Clone, Debug)]
pub struct ReduceArgs {
    /// The SysY source of the failing program.
    pub file: PathBuf,
    /// Its standard input.
    #[arg(long)]
    pub stdin: Option<PathBuf>,
    #[command(flatten)]
    pub failure: FailureArgs,
    /// Where to write the reduced program (default: stdout); its stdin goes next to it as
    /// `.in`.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Instead of a miscompilation, keep programs whose reference output contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub grep: Option<String>,
    /// Stop after testing this many candidates.
    #[arg(long, default_value_t = ReduceOptions::default().max_candidates)]
    pub max_candidates: usize,
}

#[derive(Args, Clone, Debug)]
pub struct TriageArgs {
    /// A failure directory: `prog.sy`, optional `prog.in`, optional `config` (options given
    /// here replace what they name in it).
    pub dir: PathBuf,
    #[command(flatten)]
    pub failure: FailureArgs,
    /// Where the regression case goes.
    #[arg(long, default_value = "corpus/regressions")]
    pub regressions: PathBuf,
    /// Do not write a regression case.
    #[arg(long)]
    pub no_regression: bool,
}

fn status(reproduced: bool) -> ExitCode {
    if reproduced { ExitCode::SUCCESS } else { ExitCode::from(NOT_REPRODUCED) }
}

/// `harness bisect`.
pub fn run_bisect(args: &BisectArgs) -> anyhow::Result<ExitCode> {
    let config = args.failure.config.config(OptLevel::O0)?;
    let case = FailureCase::from_files(&args.file, args.stdin.as_deref(), config).map_err(|e| anyhow!(e))?;
    let limits = args.failure.limits()?;
    let runner = args.failure.runner()?;
    let checks = Checks { timeout: limits.timeout, runner: runner.as_ref(), watch: &Unwatched };
    let report = bisect(&case, &checks, &limits).map_err(|e| anyhow!(e))?;
    out!("{}", report.render(&case.config))?;
    Ok(status(report.located.is_some()))
}

/// `harness reduce`.
pub fn run_reduce(args: &ReduceArgs) -> anyhow::Result<ExitCode> {
    let config = args.failure.config.config(OptLevel::O0)?;
    let case = FailureCase::from_files(&args.file, args.stdin.as_deref(), config).map_err(|e| anyhow!(e))?;
    let limits = args.failure.limits()?;
    let options = ReduceOptions { limits: limits.clone(), max_candidates: args.max_candidates, ..ReduceOptions::default() };
    let subject = &case.subject;
    let reduced = match &args.grep {
        Some(text) => {
            let needle = text.as_bytes();
            let interesting =
                |c: &Case| c.truth().is_some_and(|t| t.stdout.windows(needle.len().max(1)).any(|w| w == needle));
            let judged = Case::with_truth(subject.clone(), &limits).map_err(|e| anyhow!(e))?;
            if !interesting(&judged) {
                errln!("the reference output does not contain {text:?}: nothing to reduce");
                return Ok(status(false));
            }
            reduce(&subject.name, &subject.source, &subject.stdin, &interesting, &options)
        }
        None => {
            let runner = args.failure.runner()?;
            let checks = Checks { timeout: limits.timeout, runner: runner.as_ref(), watch: &Unwatched };
            let judged = Case::with_truth(subject.clone(), &limits).map_err(|e| anyhow!(e))?;
            let Some((located, _, _)) = locate(&judged, &case.config, &checks).map_err(|e| anyhow!(e))? else {
                errln!("the failure does not reproduce: nothing to reduce");
                return Ok(status(false));
            };
            errln!("reducing: {} in the {} stage, culprit {}", located.kind, located.stage, located.culprit);
            reduce_failure(&case, &case.config, &checks, &located, &options)
        }
    }
    .map_err(|e| anyhow!(e))?;
    print_stats(&reduced);
    match &args.output {
        Some(path) => {
            std::fs::write(path, &reduced.source).with_context(|| format!("cannot write {}", path.display()))?;
            if !reduced.stdin.is_empty() {
                let input = path.with_extension("in");
                std::fs::write(&input, &reduced.stdin).with_context(|| format!("cannot write {}", input.display()))?;
            }
        }
        None => out!("{}", reduced.source)?,
    }
    Ok(status(true))
}

fn print_stats(reduced: &Reduced) {
    let s = &reduced.stats;
    errln!(
        "reduced {} → {} lines ({} → {} bytes): {} candidates tested, {} accepted, {} rounds, {:.1} s",
        s.lines_before, s.lines_after, s.bytes_before, s.bytes_after, s.tested, s.accepted, s.rounds, s.seconds
    );
}

/// `harness triage`.
pub fn run_triage(args: &TriageArgs) -> anyhow::Result<ExitCode> {
    let case = FailureCase::from_dir(&args.dir, &args.failure.config).map_err(|e| anyhow!(e))?;
    let limits = args.failure.limits()?;
    let runner = args.failure.runner()?;
    let checks = Checks { timeout: limits.timeout, runner: runner.as_ref(), watch: &Unwatched };
    let options = TriageOptions {
        limits: limits.clone(),
        reduce: ReduceOptions { limits, ..ReduceOptions::default() },
        regressions_dir: (!args.no_regression).then(|| args.regressions.clone()),
    };
    let report = triage(&case, &checks, &options).map_err(|e| anyhow!(e))?;
    outln!("== original program")?;
    out!("{}", report.bisect.render(&case.config))?;
    if let (Some(reduced), Some(rb)) = (&report.reduced, &report.reduced_bisect) {
        print_stats(reduced);
        outln!("== reduced program")?;
        out!("{}", reduced.source)?;
        outln!("== reduced program, bisected")?;
        out!("{}", rb.render(report.reduced_config.as_ref().unwrap_or(&case.config)))?;
    }
    if let Some(path) = &report.regression {
        outln!("regression case: {}", path.display())?;
    }
    Ok(status(report.bisect.located.is_some()))
}
