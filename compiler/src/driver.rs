//! The compiler as a library: source text → optimised IR → assembly, and running that IR.
//!
//! The command-line tool (`main.rs`) and the harness use the same entry points, all driven by
//! one [`Config`], so an in-process run is exactly what `sysyc` does:
//! * [`compile_ir`] — front end, lowering ([`crate::lower`]) and the pass pipeline of the
//!   configuration; returns the optimised [`Module`] and the [`PipelineReport`];
//! * [`compile_ir_observed`] — the same with an observer called after every pass (what
//!   `--print-after-all` and per-pass oracles use);
//! * [`optimise`] — the pipeline alone, on a module already lowered;
//! * [`select`] — the ARM back end: optimised IR → assembly text;
//! * [`compile_asm`] — all of the above;
//! * [`build_executable`] — assembles and links assembly with the runtime library into a
//!   static ARM executable (needs the cross toolchain, see [`crate::runtime::library`]);
//! * [`interpret`] — runs a module in the IR interpreter;
//! * [`interpret_with_time_limit`] — the same under a wall-clock limit (what an in-process
//!   test engine needs).

use std::fmt;
use std::time::{Duration, Instant};

pub use crate::config::Config;
use crate::frontend::{self, FrontendError};
use crate::ir::Module;
use crate::isa::arm::{self, BackendError};
use crate::ir::interp::{self, InterpConfig, InterpError, InterpResult};
use crate::lower;
use crate::passes::manager::{self, Observer};
use crate::passes::manager::{PipelineError, PipelineReport};
use crate::runtime::TrapKind;

/// Why compilation failed.
#[derive(Debug)]
pub enum CompileError {
    /// The program is not valid SysY; `Display` renders the diagnostics.
    Frontend(FrontendError),
    /// A compiler bug caught by the IR verifier (after lowering or after a pass).
    Pipeline(PipelineError),
    /// A compiler bug in the back end (invalid IR for it, allocation failure, ...), or an
    /// unknown back-end stage name.
    Backend(BackendError),
    /// The assembler or linker failed (a compiler bug when the assembly is ours), or the cross
    /// toolchain is missing.
    Toolchain(crate::toolchain::ToolchainError),
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
            CompileError::Backend(e) => write!(f, "internal compiler error: {e}"),
            CompileError::Toolchain(e) => write!(f, "internal compiler error: assembling or linking failed: {e}"),
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
pub fn compile_ir(source_name: &str, source: &str, config: &Config) -> Result<(Module, PipelineReport), CompileError> {
    compile_ir_observed(source_name, source, config, None)
}

/// [`compile_ir`] with an observer called after every pass with its pipeline position, the
/// pass and the module as it then stands.
pub fn compile_ir_observed(
    source_name: &str,
    source: &str,
    config: &Config,
    observer: Option<&mut Observer<'_>>,
) -> Result<(Module, PipelineReport), CompileError> {
    let mut module = lower_source(source_name, source).map_err(CompileError::Frontend)?;
    let report = optimise(&mut module, config, observer).map_err(CompileError::Pipeline)?;
    Ok((module, report))
}

/// Source → ARM assembly text, with the optimised module and the pipeline report.
pub fn compile_asm(source_name: &str, source: &str, config: &Config) -> Result<(String, Module, PipelineReport), CompileError> {
    let (module, report) = compile_ir(source_name, source, config)?;
    let asm = select(&module, config).map_err(CompileError::Backend)?;
    Ok((asm, module, report))
}

/// The ARM back end with the stages (and faults) of `config`: optimised IR → assembly text.
pub fn select(module: &Module, config: &Config) -> Result<String, BackendError> {
    arm::compile_module(module, &config.backend_options())
}

/// Assembles and links assembly text with the runtime library into the static executable
/// `out`: in-process with the freestanding runtime, or with GNU tools and glibc
/// ([`Assembler`](crate::runtime::library::Assembler)).
pub fn build_executable(asm: &str, out: &std::path::Path, assembler: crate::runtime::library::Assembler) -> Result<(), CompileError> {
    crate::runtime::library::build_program(asm, out, assembler).map_err(CompileError::Toolchain)
}

/// Runs the IR pipeline of `config` over a module.
pub fn optimise(module: &mut Module, config: &Config, observer: Option<&mut Observer<'_>>) -> Result<PipelineReport, PipelineError> {
    manager::run(module, config, observer)
}

/// Runs `module` in the IR interpreter with `stdin` as standard input.
pub fn interpret(module: &Module, stdin: &[u8], config: &InterpConfig) -> Result<InterpResult, InterpError> {
    interp::run(module, stdin, config)
}

/// Step budget of the first attempt of [`interpret_with_time_limit`].
const FIRST_BUDGET: u64 = 50_000_000;

/// The run did not end within the time limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the run did not end within {0:?}")]
pub struct TimedOut(pub Duration);

/// Runs `main` of a translated program with a wall-clock limit on top of `config`'s limits.
///
/// The IR interpreter counts steps but has no clock, so the run is first tried with a small
/// step budget and retried with a larger one (four times larger, or what the measured speed
/// allows in the remaining time) until it ends by itself, reaches `config.max_steps` (then the
/// result is its `step-limit` trap) or the time is up. Runs are deterministic, so the retries
/// only cost time: about a third more than the final run.
pub fn interpret_with_time_limit(
    program: &interp::Program,
    stdin: &[u8],
    config: &InterpConfig,
    limit: Duration,
) -> Result<InterpResult, TimedOut> {
    run_in_time(program, stdin, config, limit, FIRST_BUDGET)
}

fn run_in_time(
    program: &interp::Program,
    stdin: &[u8],
    config: &InterpConfig,
    limit: Duration,
    first_budget: u64,
) -> Result<InterpResult, TimedOut> {
    let deadline = Instant::now() + limit;
    let mut budget = first_budget.min(config.max_steps);
    loop {
        let attempt = Instant::now();
        let result = program.run(stdin, &InterpConfig { max_steps: budget, ..config.clone() });
        let out_of_steps = result.outcome.trap.as_ref().is_some_and(|t| t.kind == TrapKind::StepLimit);
        if !out_of_steps || budget >= config.max_steps {
            return Ok(result);
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(TimedOut(limit));
        }
        let rate = budget as f64 / (now - attempt).as_secs_f64().max(1e-6);
        let affordable = (rate * (deadline - now).as_secs_f64()) as u64;
        let next = budget.saturating_mul(4).min(affordable).min(config.max_steps);
        if next <= budget {
            // Not even the current budget fits in the time left.
            return Err(TimedOut(limit));
        }
        budget = next;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn program(src: &str) -> interp::Program {
        let (module, _) = compile_ir("t.sy", src, &Config::level(crate::passes::OptLevel::O2)).expect("compiles");
        interp::Program::new(&module).expect("runnable")
    }

    #[test]
    fn time_limited_runs_retry_until_the_program_ends() {
        let p =
            program("int main() { int i = 0, s = 0; while (i < 5000) { s = s + i; i = i + 1; } putint(s); return 3; }");
        let config = InterpConfig::default();
        let unlimited = p.run(b"", &config);
        assert!(unlimited.outcome.steps > 10_000);
        // A first budget far too small: several retries, the same result in the end.
        let limited = run_in_time(&p, b"", &config, Duration::from_secs(600), 100).expect("ends in time");
        assert_eq!(limited, unlimited);
        assert_eq!(limited.outcome.stdout, b"12497500");
    }

    #[test]
    fn the_configured_step_limit_still_applies() {
        let p = program("int main() { while (1) {} return 0; }");
        let config = InterpConfig { max_steps: 10_000, ..InterpConfig::default() };
        let r = run_in_time(&p, b"", &config, Duration::from_secs(600), 100).expect("step limit first");
        assert_eq!(r.outcome.trap.map(|t| t.kind), Some(TrapKind::StepLimit));
    }

    #[test]
    fn an_endless_run_times_out() {
        let p = program("int main() { while (1) {} return 0; }");
        let r = interpret_with_time_limit(&p, b"", &InterpConfig::default(), Duration::from_millis(200));
        assert_eq!(r, Err(TimedOut(Duration::from_millis(200))));
    }
}
