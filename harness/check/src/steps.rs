//! The steps of a check: lower → optimise → IR-interpret → select → link → run.
//!
//! Each step is a function from the previous step's output to its own, or a [`Failure`]
//! naming the stage: the compiler runs in-process, so its panics are caught here and become
//! [`FailureKind::CompilerPanic`] failures of the stage that panicked. Every client — the
//! campaign, triage, the engines of `conform` and `bench`, the speedup report, the fuzz
//! oracles — goes through these functions, chained by the check executor
//! ([`crate::executor`]), which also shares and deduplicates their work.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use sysyc::config::Config;
use sysyc::driver::{self, CompileError};
use sysyc::ir::Module;
use sysyc::ir::interp::{InterpConfig, Program};
use sysyc::passes::manager::PipelineReport;
use sysyc::passes::manager::Observer;
use sysyc::runtime::Outcome;
use sysyc::runtime::library::Assembler;
use sysyc::toolchain::ToolchainError;

use crate::failure::{Failure, FailureKind, Stage};
use crate::qemu::{Run, RunStatus, Runner};
use crate::subject::Subject;

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs a panic hook that records the location of panics on threads whose name starts
/// with `prefix` (workers whose panics are caught and reported by the stage they happen in)
/// instead of printing them, and defers to the previous hook elsewhere.
pub fn quiet_panics(prefix: &'static str) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name().is_some_and(|n| n.starts_with(prefix)) {
            let at = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(at));
        } else {
            previous(info);
        }
    }));
}

/// The message of a caught panic payload.
pub fn panic_message(payload: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".to_string()
    }
}

/// Runs `f`, turning a panic into a compiler-panic failure of `stage`.
pub fn caught<T>(stage: Stage, f: impl FnOnce() -> T) -> Result<T, Failure> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let at = LAST_PANIC.with(|p| p.borrow_mut().take()).map(|at| format!(" at {at}")).unwrap_or_default();
        Failure::new(FailureKind::CompilerPanic, stage, format!("panicked{at}: {}", panic_message(&payload)))
    })
}

/// HIR → IR.
pub fn lower(subject: &Subject) -> Result<Module, Failure> {
    caught(Stage::Lowering, || sysyc::lower::lower_program(&subject.program))
}

/// The IR pipeline of `config` on a copy of `lowered` (the verifier after every pass when
/// the configuration asks for it); `observer` sees the module after every pass.
pub fn optimise(
    lowered: &Module,
    config: &Config,
    observer: Option<&mut Observer<'_>>,
) -> Result<(Module, PipelineReport), Failure> {
    caught(Stage::Pipeline, || {
        let mut module = lowered.clone();
        driver::optimise(&mut module, config, observer).map(|report| (module, report))
    })?
    .map_err(|e| Failure::new(FailureKind::VerifierFailure, Stage::Pipeline, e.to_string()))
}

/// Runs `module` in the IR interpreter for at most `timeout` (its step budget is the
/// interpreter's default; running out of steps is a trap the judge counts as a timeout). The
/// source run was UB-free, so loads the passes speculated may read never-written words
/// ([`InterpConfig::speculative_loads`]).
pub fn interpret(module: &Module, stdin: &[u8], timeout: Duration) -> Result<Outcome, Failure> {
    caught(Stage::IrInterp, || {
        let program = Program::new(module).map_err(|e| {
            Failure::new(FailureKind::VerifierFailure, Stage::IrInterp, format!("the IR interpreter refused the IR: {e}"))
        })?;
        driver::interpret_with_time_limit(&program, stdin, &InterpConfig::speculative_loads(), timeout)
            .map(|r| r.outcome)
            .map_err(|e| Failure::new(FailureKind::Timeout, Stage::IrInterp, e.to_string()))
    })?
}

/// The ARM back end: optimised IR → assembly text.
pub fn select(module: &Module, config: &Config) -> Result<String, Failure> {
    caught(Stage::Backend, || driver::select(module, config))?
        .map_err(|e| Failure::new(FailureKind::BackendError, Stage::Backend, CompileError::Backend(e).to_string()))
}

/// A linked executable in a temporary directory (removed when dropped).
pub struct Executable {
    _dir: tempfile::TempDir,
    pub path: PathBuf,
}

impl Executable {
    /// A place for an executable, filled by `build` (which gets the path to write).
    pub fn build(build: impl FnOnce(&std::path::Path) -> Result<(), Failure>) -> Result<Executable, Failure> {
        let dir = tempfile::Builder::new().prefix("harness-").tempdir().map_err(|e| {
            Failure::new(FailureKind::HarnessError, Stage::Toolchain, format!("cannot create a temporary directory: {e}"))
        })?;
        let path = dir.path().join("prog");
        build(&path)?;
        Ok(Executable { _dir: dir, path })
    }
}

/// Assembles and links `asm` with the runtime library (in-process with the freestanding
/// runtime, or with GNU tools and glibc: `assembler`). A missing toolchain is the harness's
/// problem; the assembler or linker refusing the text is the compiler's.
pub fn link(asm: &str, assembler: Assembler) -> Result<Executable, Failure> {
    Executable::build(|path| {
        driver::build_executable(asm, path, assembler).map_err(|e| {
            let kind = match &e {
                CompileError::Toolchain(ToolchainError::NotFound { .. } | ToolchainError::Io { .. }) => FailureKind::HarnessError,
                _ => FailureKind::AsmLinkError,
            };
            Failure::new(kind, Stage::Toolchain, e.to_string())
        })
    })
}

/// A finished (or killed) run of a linked program, with the time linking took.
pub struct Execution {
    pub run: Run,
    pub link: Duration,
}

/// Links `asm` (see [`link`]) and runs it on `stdin` under `runner` for at most `timeout`.
pub fn execute(asm: &str, assembler: Assembler, stdin: &[u8], runner: &Runner, timeout: Duration) -> Result<Execution, Failure> {
    let start = Instant::now();
    let exe = link(asm, assembler)?;
    let link = start.elapsed();
    let run = runner
        .run(&exe.path, stdin, timeout)
        .map_err(|e| Failure::new(FailureKind::HarnessError, Stage::Qemu, e.to_string()))?;
    Ok(Execution { run, link })
}

impl Run {
    /// The program's outcome, or how it failed to have one: killed by a signal (a crash) or
    /// at the time limit.
    pub fn outcome(&self, stage: Stage) -> Result<Outcome, Failure> {
        match self.status {
            RunStatus::Exited(status) => Ok(Outcome {
                stdout: self.stdout.clone(),
                exit_status: Some(status),
                trap: None,
                steps: self.cost.as_ref().map_or(0, |c| c.counts.total),
            }),
            RunStatus::Signaled(_) => Err(Failure::new(FailureKind::Crash, stage, self.status.to_string())
                .with_actual(Outcome { stdout: self.stdout.clone(), ..Outcome::default() })),
            RunStatus::TimedOut => Err(Failure::new(FailureKind::Timeout, stage, format!("no exit within the time limit ({:.1} s)", self.wall.as_secs_f64()))),
        }
    }
}
