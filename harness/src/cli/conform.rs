//! `harness conform`: run a directory of cases with an engine and compare with `.out` files.

use super::fail;
use crate::conform;
use sysy_check::engine::{RunSettings, engine_by_name};
use sysy_check::refinterp::InputFailure;
use sysy_check::subject::Limits;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use sysyc::config::ConfigArgs;
use sysyc::passes::OptLevel;

#[derive(Args)]
pub struct ConformArgs {
    /// Directory of cases.
    pub dir: PathBuf,
    /// Engine to run the cases with: `ref` (the reference interpreter), `ir` (sysyc's IR
    /// interpreter after the pipeline), `qemu` (compiled by sysyc, run under qemu-arm) or
    /// `gcc` (the C translation compiled by the ARM cross gcc, run under qemu).
    #[arg(long, default_value = "ref")]
    pub engine: String,
    /// The compiling engines' configuration (default -O2; `ref` ignores it).
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Worker threads (default: the number of CPUs).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Time limit per case in seconds (default 600).
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Only cases whose name contains this.
    #[arg(long)]
    pub filter: Option<String>,
    /// A read the input cannot satisfy, in interpreting engines: `zero` (reads 0, as the
    /// runtime library compiled programs use does; some competition cases rely on it) or
    /// `trap`.
    #[arg(long, value_enum, default_value_t = InputFailure::Zero)]
    pub input_failure: InputFailure,
}

pub fn run(args: ConformArgs) -> ExitCode {
    let config = match args.config.config(OptLevel::O2) {
        Ok(c) => c,
        Err(e) => return fail(&e.to_string()),
    };
    let limits = match Limits::SUITE.with_timeout(args.timeout) {
        Ok(l) => l,
        Err(e) => return fail(&e),
    };
    let settings = RunSettings { input_failure: args.input_failure, assembler: args.config.assembler, ..RunSettings::new(limits) };
    let engine = match engine_by_name(&args.engine, &config, &settings) {
        Ok(e) => e,
        Err(e) => return fail(&e),
    };
    let dir: &Path = &args.dir;
    let cases = match conform::discover(dir, args.filter.as_deref()) {
        Ok(c) => c,
        Err(e) => return fail(&format!("cannot list {}: {e}", dir.display())),
    };
    let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut out = std::io::stdout().lock();
    match conform::run_all(engine.as_ref(), &cases, jobs, &mut out) {
        Ok(summary) if summary.failed == 0 => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(e) => fail(&format!("cannot write the report: {e}")),
    }
}
