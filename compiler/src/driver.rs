//! The compiler as a library: source text → optimised IR, and running that IR.
//!
//! The command-line tool (`main.rs`) and the harness use the same entry points, so an
//! in-process run is exactly what `sysyc` does:
//! * [`compile_ir`] — front end, lowering ([`crate::lower`]) and the pass pipeline of
//!   [`CompileOptions`]; returns the optimised [`Module`] and the [`PipelineReport`];
//! * [`compile_ir_observed`] — the same with an observer called after every pass (what
//!   `--print-after-all` and per-pass oracles use);
//! * [`interpret`] — runs a module in the IR interpreter.
//!
//! A back end plugs in after [`compile_ir`]: it receives the optimised module.

use std::fmt;

use crate::faults::FaultSet;
use crate::frontend::{self, FrontendError};
use crate::ir::Module;
use crate::ir::interp::{self, InterpConfig, InterpError, InterpResult};
use crate::lower;
use crate::passes::manager::Observer;
use crate::passes::{self, OptLevel, PassInfo, PassManager, PipelineError, PipelineOptions, PipelineReport};

/// How to compile.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// The exact pass pipeline (empty: no optimisation, as `-O0`).
    pub pipeline: Vec<&'static PassInfo>,
    /// Verify the lowered IR and the IR after every pass.
    pub verify_each: bool,
    /// Opt-bisect: run only the first N (pass, function) steps.
    pub opt_bisect_limit: Option<u64>,
    /// Record every opt-bisect step in [`PipelineReport::bisect_log`] (run or skipped).
    pub log_steps: bool,
    /// Fault injection (only non-empty in builds with the `fault-injection` feature).
    pub faults: FaultSet,
}

impl CompileOptions {
    /// The pipeline of an optimisation level, nothing else enabled.
    pub fn level(level: OptLevel) -> CompileOptions {
        CompileOptions { pipeline: level.pipeline(), ..CompileOptions::default() }
    }

    /// An explicit comma-separated pipeline (`"mem2reg,dce"`); unknown names are an error that
    /// lists the valid ones.
    pub fn passes(spec: &str) -> Result<CompileOptions, String> {
        Ok(CompileOptions { pipeline: passes::parse_pipeline(spec)?, ..CompileOptions::default() })
    }

    fn pipeline_options(&self) -> PipelineOptions {
        PipelineOptions {
            verify_each: self.verify_each,
            opt_bisect_limit: self.opt_bisect_limit,
            log_steps: self.log_steps || self.opt_bisect_limit.is_some(),
            faults: self.faults.clone(),
        }
    }
}

/// Why compilation failed.
#[derive(Debug)]
pub enum CompileError {
    /// The program is not valid SysY; `Display` renders the diagnostics.
    Frontend(FrontendError),
    /// A compiler bug caught by the IR verifier (after lowering or after a pass).
    Pipeline(PipelineError),
}

impl CompileError {
    /// True when the source program is at fault (as opposed to the compiler).
    pub fn is_user_error(&self) -> bool {
        matches!(self, CompileError::Frontend(_))
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileError::Frontend(e) => e.fmt(f),
            CompileError::Pipeline(e) => write!(f, "internal compiler error: {e}"),
        }
    }
}

impl std::error::Error for CompileError {}

/// Front end and lowering only: the `-O0` module.
pub fn lower_source(source_name: &str, source: &str) -> Result<Module, FrontendError> {
    let program = frontend::compile_source(source_name, source)?;
    Ok(lower::lower_program(&program))
}

/// Source → optimised IR. See the module documentation.
pub fn compile_ir(
    source_name: &str,
    source: &str,
    options: &CompileOptions,
) -> Result<(Module, PipelineReport), CompileError> {
    compile_ir_observed(source_name, source, options, None)
}

/// [`compile_ir`] with an observer called after every pass with its pipeline position, the
/// pass and the module as it then stands.
pub fn compile_ir_observed(
    source_name: &str,
    source: &str,
    options: &CompileOptions,
    observer: Option<&mut Observer<'_>>,
) -> Result<(Module, PipelineReport), CompileError> {
    let mut module = lower_source(source_name, source).map_err(CompileError::Frontend)?;
    let report = optimise(&mut module, options, observer).map_err(CompileError::Pipeline)?;
    Ok((module, report))
}

/// Runs the pipeline of `options` over a module.
pub fn optimise(
    module: &mut Module,
    options: &CompileOptions,
    observer: Option<&mut Observer<'_>>,
) -> Result<PipelineReport, PipelineError> {
    PassManager::new(options.pipeline.clone()).run(module, &options.pipeline_options(), observer)
}

/// Runs `module` in the IR interpreter with `stdin` as standard input.
pub fn interpret(module: &Module, stdin: &[u8], config: &InterpConfig) -> Result<InterpResult, InterpError> {
    interp::run(module, stdin, config)
}

/// The opt-bisect log in LLVM's style, one line per step:
/// `BISECT: running pass (3) dce on function main` or `BISECT: NOT running pass (...)`.
pub fn bisect_log_text(report: &PipelineReport) -> String {
    let mut s = String::new();
    for step in &report.bisect_log {
        let verdict = if step.ran { "running" } else { "NOT running" };
        s.push_str(&format!("BISECT: {verdict} pass ({}) {} on function {}\n", step.index, step.pass, step.function));
    }
    s
}
