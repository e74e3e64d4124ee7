//! `harness`: the command-line front end of the harness library.

use clap::{Args, Parser, Subcommand};
use harness::conform;
use harness::engine::{EngineConfig, engine_by_name};
use harness::refinterp::{self, InputFailure, RefConfig, RefError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "harness",
    about = "Differential fuzzing and benchmark harness for sysyc"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Exit status of `harness interp` when the program traps.
const TRAP_STATUS: u8 = 125;
/// Exit status of `harness interp` when the time limit is exceeded.
const TIMEOUT_STATUS: u8 = 124;

#[derive(Subcommand)]
enum Command {
    /// Run a SysY program in the reference interpreter, like running the compiled program.
    ///
    /// Standard input and output are the program's; the exit status is the program's
    /// (main's value & 0xFF). When the program traps (undefined behaviour or a resource
    /// limit), the output so far is written, `trap: <kind> at FILE:LINE:COL: <detail>` goes
    /// to stderr and the exit status is 125. A program the front end rejects gets its
    /// diagnostics on stderr and status 1 (as does an unreadable file). Exceeding --timeout
    /// gives status 124.
    Interp(InterpArgs),
    /// Run every NAME.sy of a directory (stdin NAME.in if present) and compare with NAME.out.
    ///
    /// Prints one row per case (name, PASS/FAIL/ERROR/TIMEOUT, seconds, reason) and the line
    /// `N passed, N failed`; the exit status is 1 if any case did not pass.
    Conform(ConformArgs),
}

#[derive(Args)]
struct InterpArgs {
    /// The SysY source file.
    file: PathBuf,
    /// Step budget (statements executed plus loop-condition evaluations).
    #[arg(long)]
    steps: Option<u64>,
    /// Maximum call depth.
    #[arg(long, default_value_t = refinterp::DEFAULT_MAX_DEPTH)]
    max_depth: u32,
    /// Wall-clock limit in seconds.
    #[arg(long)]
    timeout: Option<f64>,
    /// A read the input cannot satisfy: `trap` (input-exhausted) or `zero` (reads 0, as the
    /// runtime library does).
    #[arg(long, value_enum, default_value_t = InputFailure::Trap)]
    input_failure: InputFailure,
    /// Print the steps executed, the run time and the steps per second on stderr.
    #[arg(long)]
    stats: bool,
}

#[derive(Args)]
struct ConformArgs {
    /// Directory of cases.
    dir: PathBuf,
    /// Engine to run the cases with: `ref` (the reference interpreter) or `gcc` (the C
    /// translation compiled by the ARM cross gcc at -O<opt>, default -O2, run under qemu).
    #[arg(long, default_value = "ref")]
    engine: String,
    /// Worker threads (default: the number of CPUs).
    #[arg(long)]
    jobs: Option<usize>,
    /// Time limit per case in seconds.
    #[arg(long)]
    timeout: Option<f64>,
    /// Only cases whose name contains this.
    #[arg(long)]
    filter: Option<String>,
    /// Optimisation level (engines that compile, e.g. `gcc`; `ref` ignores it).
    #[arg(long)]
    opt: Option<u32>,
    /// Comma-separated optimisation passes, overriding --opt (`ref` ignores it).
    #[arg(long, value_delimiter = ',')]
    passes: Option<Vec<String>>,
    /// A read the input cannot satisfy, in interpreting engines: `zero` (reads 0, as the
    /// runtime library compiled programs use does; some competition cases rely on it) or
    /// `trap`.
    #[arg(long, value_enum, default_value_t = InputFailure::Zero)]
    input_failure: InputFailure,
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Interp(args) => interp(&args),
        Command::Conform(args) => conform_cmd(args),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("harness: {message}");
    ExitCode::FAILURE
}

fn seconds(s: Option<f64>) -> Result<Option<Duration>, String> {
    s.map(|s| Duration::try_from_secs_f64(s).map_err(|e| format!("invalid --timeout {s}: {e}")))
        .transpose()
}

fn interp(args: &InterpArgs) -> ExitCode {
    let file = &args.file;
    let source = match std::fs::read(file) {
        Ok(bytes) => sysyc::frontend::source_from_bytes(&bytes),
        Err(e) => return fail(&format!("cannot read {}: {e}", file.display())),
    };
    let mut stdin = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut stdin) {
        return fail(&format!("cannot read stdin: {e}"));
    }
    let timeout = match seconds(args.timeout) {
        Ok(t) => t,
        Err(e) => return fail(&e),
    };
    let config = RefConfig {
        max_steps: args.steps.unwrap_or(u64::MAX),
        max_depth: args.max_depth,
        timeout,
        input_failure: args.input_failure,
        ..RefConfig::default()
    };
    let name = file.display().to_string();
    let start = std::time::Instant::now();
    let result = refinterp::run_source(&name, &source, &stdin, &config);
    let seconds = start.elapsed().as_secs_f64();
    let outcome = match result {
        Ok(o) => o,
        Err(RefError::TimedOut { steps }) => {
            eprintln!("harness: time limit exceeded after {steps} steps");
            return ExitCode::from(TIMEOUT_STATUS);
        }
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    if args.stats {
        let rate = outcome.steps as f64 / seconds.max(1e-9);
        eprintln!(
            "steps: {}, seconds: {seconds:.3}, steps/s: {rate:.3e}",
            outcome.steps
        );
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
            eprintln!("trap: {}{at}{detail}", trap.kind);
            ExitCode::from(TRAP_STATUS)
        }
        (None, Some(status)) => ExitCode::from(status),
        (None, None) => fail("the run ended without an exit status"),
    }
}

fn conform_cmd(args: ConformArgs) -> ExitCode {
    let config = EngineConfig {
        timeout: match seconds(args.timeout) {
            Ok(t) => t,
            Err(e) => return fail(&e),
        },
        opt_level: args.opt,
        passes: args.passes,
        max_steps: None,
        input_failure: args.input_failure,
    };
    let engine = match engine_by_name(&args.engine, &config) {
        Ok(e) => e,
        Err(e) => return fail(&e),
    };
    let dir: &Path = &args.dir;
    let cases = match conform::discover(dir, args.filter.as_deref()) {
        Ok(c) => c,
        Err(e) => return fail(&format!("cannot list {}: {e}", dir.display())),
    };
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut out = std::io::stdout().lock();
    match conform::run_all(engine.as_ref(), &cases, jobs, &mut out) {
        Ok(summary) if summary.failed == 0 => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => fail(&format!("cannot write the report: {e}")),
    }
}
