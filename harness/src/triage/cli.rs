//! The `bisect`, `reduce` and `triage` subcommands: argument parsing and printing around
//! [`super::bisect`], [`super::reduce`] and [`super::regression`].

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, anyhow};
use clap::Args;

use super::bisect::bisect;
use super::case::{BuildConfig, ConfigOverrides, FailureCase};
use super::oracle::{Oracle, OracleSettings};
use super::reduce::{ReduceOptions, Reduced, reduce};
use super::regression::{TriageOptions, reduce_failure, triage};
use crate::qemu::Qemu;

/// The compiler configuration of the failure, and run limits.
#[derive(Args, Clone, Debug)]
pub struct ConfigArgs {
    /// Optimisation level of the failing compilation (`-O2`).
    #[arg(short = 'O', value_name = "LEVEL", conflicts_with = "passes")]
    pub opt: Option<String>,
    /// Exact pass pipeline of the failing compilation (`mem2reg,constfold,dce`).
    #[arg(long, value_name = "PASS,...")]
    pub passes: Option<String>,
    /// Optional back-end stages that ran: `all` (default), `none`, or a list.
    #[arg(long, value_name = "all|none|STAGE,...")]
    pub backend_stages: Option<String>,
    /// Injected faults (builds with the `fault-injection` feature).
    #[arg(long, value_name = "NAME,...")]
    pub faults: Option<String>,
    /// Wall-clock limit of every run, in seconds.
    #[arg(long, default_value_t = 20.0)]
    pub timeout: f64,
    /// Judge the IR interpreter only (no ARM binaries: no back-end bisection).
    #[arg(long)]
    pub no_qemu: bool,
}

impl ConfigArgs {
    fn overrides(&self) -> ConfigOverrides {
        ConfigOverrides {
            pipeline: self.opt.as_ref().map(|o| format!("-O{o}")).or(self.passes.clone()),
            backend_stages: self.backend_stages.clone(),
            faults: self.faults.clone(),
        }
    }

    fn build_config(&self) -> anyhow::Result<BuildConfig> {
        let o = self.overrides();
        BuildConfig::parse(o.pipeline.as_deref(), o.backend_stages.as_deref(), o.faults.as_deref())
            .map_err(|e| anyhow!(e))
    }

    fn settings(&self) -> anyhow::Result<OracleSettings> {
        let timeout = Duration::try_from_secs_f64(self.timeout)
            .map_err(|e| anyhow!("invalid --timeout {}: {e}", self.timeout))?;
        Ok(OracleSettings { timeout, ..OracleSettings::default() })
    }

    fn qemu(&self) -> anyhow::Result<Option<Qemu>> {
        if self.no_qemu {
            return Ok(None);
        }
        Qemu::locate().map(Some).map_err(|e| anyhow!("{e} (use --no-qemu to judge the IR only)"))
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
    pub config: ConfigArgs,
}

#[derive(Args, Clone, Debug)]
pub struct ReduceArgs {
    /// The SysY source of the failing program.
    pub file: PathBuf,
    /// Its standard input.
    #[arg(long)]
    pub stdin: Option<PathBuf>,
    #[command(flatten)]
    pub config: ConfigArgs,
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
    /// A failure directory: `prog.sy`, optional `stdin`, optional `pipeline`,
    /// `backend-stages` and `faults` files (options override them).
    pub dir: PathBuf,
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Where the regression case goes.
    #[arg(long, default_value = "corpus/regressions")]
    pub regressions: PathBuf,
    /// Do not write a regression case.
    #[arg(long)]
    pub no_regression: bool,
}

/// `harness bisect`.
pub fn run_bisect(args: &BisectArgs) -> anyhow::Result<()> {
    let config = args.config.build_config()?;
    let case = FailureCase::from_files(&args.file, args.stdin.as_deref(), config)
        .map_err(|e| anyhow!(e))?;
    let qemu = args.config.qemu()?;
    let report =
        bisect(&case, qemu.as_ref(), &args.config.settings()?).map_err(|e| anyhow!(e))?;
    print!("{}", report.render(&case.config));
    Ok(())
}

/// `harness reduce`.
pub fn run_reduce(args: &ReduceArgs) -> anyhow::Result<()> {
    let config = args.config.build_config()?;
    let case = FailureCase::from_files(&args.file, args.stdin.as_deref(), config)
        .map_err(|e| anyhow!(e))?;
    let settings = args.config.settings()?;
    let options = ReduceOptions {
        settings: settings.clone(),
        max_candidates: args.max_candidates,
        ..ReduceOptions::default()
    };
    let reduced = match &args.grep {
        Some(text) => {
            let needle = text.as_bytes();
            let interesting = |o: &Oracle| o.expected.stdout.windows(needle.len().max(1)).any(|w| w == needle);
            reduce(&case.file_name, &case.source, &case.stdin, &interesting, &options)
        }
        None => {
            let qemu = args.config.qemu()?;
            let oracle = Oracle::new(&case.file_name, &case.source, &case.stdin, &settings)
                .map_err(|e| anyhow!(e))?;
            let (located, _) = super::bisect::locate(&oracle, &case.config, qemu.as_ref())
                .map_err(|e| anyhow!(e))?;
            let located =
                located.ok_or_else(|| anyhow!("the failure does not reproduce: nothing to reduce"))?;
            eprintln!("reducing: {} in the {}, culprit {}", located.kind, located.level, located.culprit);
            reduce_failure(&case, qemu.as_ref(), &located, &options)
        }
    }
    .map_err(|e| anyhow!(e))?;
    print_stats(&reduced);
    match &args.output {
        Some(path) => {
            std::fs::write(path, &reduced.source)
                .with_context(|| format!("cannot write {}", path.display()))?;
            if !reduced.stdin.is_empty() {
                let input = path.with_extension("in");
                std::fs::write(&input, &reduced.stdin)
                    .with_context(|| format!("cannot write {}", input.display()))?;
            }
        }
        None => print!("{}", reduced.source),
    }
    Ok(())
}

fn print_stats(reduced: &Reduced) {
    let s = &reduced.stats;
    eprintln!(
        "reduced {} → {} lines ({} → {} bytes): {} candidates tested, {} accepted, {} rounds, {:.1} s",
        s.lines_before, s.lines_after, s.bytes_before, s.bytes_after, s.tested, s.accepted, s.rounds, s.seconds
    );
}

/// `harness triage`.
pub fn run_triage(args: &TriageArgs) -> anyhow::Result<()> {
    let case = FailureCase::from_dir(&args.dir, &args.config.overrides()).map_err(|e| anyhow!(e))?;
    let qemu = args.config.qemu()?;
    let settings = args.config.settings()?;
    let options = TriageOptions {
        settings: settings.clone(),
        reduce: ReduceOptions { settings, ..ReduceOptions::default() },
        regressions_dir: (!args.no_regression).then(|| args.regressions.clone()),
    };
    let report = triage(&case, qemu.as_ref(), &options).map_err(|e| anyhow!(e))?;
    println!("== original program");
    print!("{}", report.bisect.render(&case.config));
    if let (Some(reduced), Some(rb)) = (&report.reduced, &report.reduced_bisect) {
        print_stats(reduced);
        println!("== reduced program");
        print!("{}", reduced.source);
        println!("== reduced program, bisected");
        print!("{}", rb.render(&case.config));
    }
    if let Some(path) = &report.regression {
        println!("regression case: {}", path.display());
    }
    Ok(())
}
