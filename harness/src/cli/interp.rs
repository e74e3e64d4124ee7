//! `harness interp`: run one SysY program in the reference interpreter.

use super::fail;
use sysy_check::subject::Limits;
use sysy_check::refinterp::{self, InputFailure, RefConfig, RefError};
use clap::Args;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit status of `harness interp` when the program traps.
pub const TRAP_STATUS: u8 = 125;
/// Exit status of `harness interp` when the time limit is exceeded.
pub const TIMEOUT_STATUS: u8 = 124;

#[derive(Args)]
pub struct InterpArgs {
    /// The SysY source file.
    pub file: PathBuf,
    /// Step budget (statements executed plus loop-condition evaluations); unlimited by default.
    #[arg(long)]
    pub max_steps: Option<u64>,
    /// Maximum call depth.
    #[arg(long, default_value_t = refinterp::DEFAULT_MAX_DEPTH)]
    pub max_depth: u32,
    /// Wall-clock limit in seconds.
    #[arg(long)]
    pub timeout: Option<f64>,
    /// A read the input cannot satisfy: `trap` (input-exhausted) or `zero` (reads 0, as the
    /// runtime library does).
    #[arg(long, value_enum, default_value_t = InputFailure::Trap)]
    pub input_failure: InputFailure,
    /// Print the steps executed, the run time and the steps per second on stderr.
    #[arg(long)]
    pub stats: bool,
    /// Print statement coverage on stderr: statements executed of all, and where the ones
    /// that never ran start.
    #[arg(long)]
    pub coverage: bool,
}

pub fn run(args: &InterpArgs) -> ExitCode {
    let file = &args.file;
    let source = match std::fs::read(file) {
        Ok(bytes) => sysyc::frontend::source_from_bytes(&bytes),
        Err(e) => return fail(&format!("cannot read {}: {e}", file.display())),
    };
    let mut stdin = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut stdin) {
        return fail(&format!("cannot read stdin: {e}"));
    }
    let timeout = match args.timeout.map(|s| Limits::SUITE.with_timeout(Some(s))).transpose() {
        Ok(limits) => limits.map(|l| l.timeout),
        Err(e) => return fail(&e),
    };
    let config = RefConfig {
        max_steps: args.max_steps.unwrap_or(u64::MAX),
        max_depth: args.max_depth,
        timeout,
        input_failure: args.input_failure,
        ..RefConfig::default()
    };
    let name = file.display().to_string();
    let start = std::time::Instant::now();
    let result = if args.coverage {
        refinterp::run_source_with_coverage(&name, &source, &stdin, &config)
            .map(|(o, c)| (o, Some(c)))
    } else {
        refinterp::run_source(&name, &source, &stdin, &config).map(|o| (o, None))
    };
    let seconds = start.elapsed().as_secs_f64();
    let (outcome, coverage) = match result {
        Ok(o) => o,
        Err(RefError::TimedOut { steps }) => {
            errln!("harness: time limit exceeded after {steps} steps");
            return ExitCode::from(TIMEOUT_STATUS);
        }
        Err(e) => {
            errln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    if args.stats {
        let rate = outcome.steps as f64 / seconds.max(1e-9);
        errln!(
            "steps: {}, seconds: {seconds:.3}, steps/s: {rate:.3e}",
            outcome.steps
        );
    }
    if let Some(c) = &coverage {
        let lines = sysyc::frontend::LineIndex::new(&source);
        let missed: Vec<String> = c
            .missed_locations(&lines)
            .iter()
            .map(|l| format!("{}:{}", l.line, l.col))
            .collect();
        errln!(
            "coverage: {} of {} statements executed ({:.1}%)",
            c.executed_count(),
            c.total(),
            100.0 * c.fraction()
        );
        if !missed.is_empty() {
            errln!("not executed: {}", missed.join(" "));
        }
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(&outcome.stdout).and_then(|()| out.flush()) {
        return fail(&format!("cannot write stdout: {e}"));
    }
    match (&outcome.trap, outcome.exit_status) {
        (Some(trap), _) => {
            let at = trap
                .loc
                .map(|l| format!(" at {name}:{}:{}", l.line, l.col))
                .unwrap_or_default();
            let detail = if trap.detail.is_empty() {
                String::new()
            } else {
                format!(": {}", trap.detail)
            };
            errln!("trap: {}{at}{detail}", trap.kind);
            ExitCode::from(TRAP_STATUS)
        }
        (None, Some(status)) => ExitCode::from(status),
        (None, None) => fail("the run ended without an exit status"),
    }
}
