//! The judge of triage: the reference interpreter's outcome of a program, and the verdict on
//! a compiled run of it.
//!
//! An [`Oracle`] runs the reference interpreter once per program (refusing programs that trap
//! or time out there: their behaviour is undefined, no output is wrong) and then judges runs
//! of the compiled program at two [`Level`]s: the IR interpreter on the module after a
//! pipeline (or after any pipeline prefix: the per-pass oracle), and the ARM executable under
//! qemu-arm. A verdict is `None` (same stdout and exit status) or the [`FailureKind`] of the
//! difference; reduction keeps a candidate only if the kind stays the same.

use std::fmt;
use std::time::Duration;

use sysyc::driver::{self, CompileOptions};
use sysyc::ir::Module;
use sysyc::ir::interp::{InterpConfig, Program};
use sysyc::runtime::{Outcome, TrapKind};

use crate::qemu::{Qemu, RunOptions, RunStatus, Stdin};
use crate::refinterp::{self, RefConfig, RefError};

/// How a compiled run differs from the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailureKind {
    /// Different standard output.
    Stdout,
    /// Same output, different exit status.
    ExitStatus,
    /// The IR interpreter trapped where the reference did not.
    Trap(TrapKind),
    /// The binary died of a signal.
    Crash,
    /// The compiled program ran out of time (the reference did not).
    Timeout,
    /// The compiler failed (verifier, back end, assembler) on a valid program.
    InternalError,
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FailureKind::Stdout => f.write_str("wrong-stdout"),
            FailureKind::ExitStatus => f.write_str("wrong-exit-status"),
            FailureKind::Trap(kind) => write!(f, "trap-{kind}"),
            FailureKind::Crash => f.write_str("crash"),
            FailureKind::Timeout => f.write_str("timeout"),
            FailureKind::InternalError => f.write_str("internal-error"),
        }
    }
}

/// Where the compiled program is run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// The IR interpreter, on the optimised module.
    Ir,
    /// The ARM executable, under qemu-arm.
    Binary,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Ir => "IR interpreter",
            Level::Binary => "ARM binary",
        })
    }
}

/// Limits of the runs an oracle makes.
#[derive(Clone, Debug)]
pub struct OracleSettings {
    /// Step budget of the reference interpreter (exceeding it rejects the program).
    pub ref_steps: u64,
    /// Wall-clock limit of every run (reference, IR interpreter, qemu).
    pub timeout: Duration,
}

impl Default for OracleSettings {
    fn default() -> OracleSettings {
        OracleSettings {
            ref_steps: 200_000_000,
            timeout: Duration::from_secs(20),
        }
    }
}

/// Why a program cannot be judged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rejected {
    #[error("the front end rejects the program: {0}")]
    Invalid(String),
    #[error("the program has undefined behaviour: trap {0} in the reference interpreter")]
    Trap(String),
    #[error("the reference interpreter exceeded its limits")]
    TooLong,
    #[error("the reference interpreter failed: {0}")]
    Internal(String),
}

/// A program with its reference outcome, ready to judge compiled runs.
#[derive(Clone, Debug)]
pub struct Oracle {
    pub file_name: String,
    pub source: String,
    pub stdin: Vec<u8>,
    /// The reference outcome (never a trap).
    pub expected: Outcome,
    pub settings: OracleSettings,
}

impl Oracle {
    /// Runs the reference interpreter; programs it rejects, traps on or cannot finish are
    /// refused.
    pub fn new(
        file_name: &str,
        source: &str,
        stdin: &[u8],
        settings: &OracleSettings,
    ) -> Result<Oracle, Rejected> {
        let config = RefConfig {
            max_steps: settings.ref_steps,
            timeout: Some(settings.timeout),
            ..RefConfig::default()
        };
        let expected = match refinterp::run_source(file_name, source, stdin, &config) {
            Ok(outcome) => outcome,
            Err(RefError::Frontend(e)) => return Err(Rejected::Invalid(e.to_string())),
            Err(RefError::TimedOut { .. }) => return Err(Rejected::TooLong),
            Err(e) => return Err(Rejected::Internal(e.to_string())),
        };
        if let Some(trap) = &expected.trap {
            return Err(if trap.kind.is_resource_limit() {
                Rejected::TooLong
            } else {
                Rejected::Trap(trap.kind.to_string())
            });
        }
        Ok(Oracle {
            file_name: file_name.to_string(),
            source: source.to_string(),
            stdin: stdin.to_vec(),
            expected,
            settings: settings.clone(),
        })
    }

    /// The verdict on an outcome of the compiled program.
    pub fn judge(&self, actual: &Outcome) -> Option<FailureKind> {
        if let Some(trap) = &actual.trap {
            return Some(if trap.kind.is_resource_limit() {
                FailureKind::Timeout
            } else {
                FailureKind::Trap(trap.kind)
            });
        }
        if actual.stdout != self.expected.stdout {
            Some(FailureKind::Stdout)
        } else if actual.exit_status != self.expected.exit_status {
            Some(FailureKind::ExitStatus)
        } else {
            None
        }
    }

    /// Runs `module` in the IR interpreter and judges the run.
    pub fn judge_module(&self, module: &Module) -> Option<FailureKind> {
        let program = match Program::new(module) {
            Ok(p) => p,
            Err(_) => return Some(FailureKind::InternalError),
        };
        let config = InterpConfig::default();
        match driver::interpret_with_time_limit(
            &program,
            &self.stdin,
            &config,
            self.settings.timeout,
        ) {
            Ok(result) => self.judge(&result.outcome),
            Err(_) => Some(FailureKind::Timeout),
        }
    }

    /// Compiles with `options` and judges the IR interpreter's run of the result.
    pub fn check_ir(&self, options: &CompileOptions) -> Option<FailureKind> {
        match driver::compile_ir(&self.file_name, &self.source, options) {
            Ok((module, _)) => self.judge_module(&module),
            Err(_) => Some(FailureKind::InternalError),
        }
    }

    /// Compiles to an executable with `options`, runs it under qemu-arm and judges the run.
    /// Fails only when the tools are missing or a temporary file cannot be written.
    pub fn check_binary(
        &self,
        qemu: &Qemu,
        options: &CompileOptions,
    ) -> Result<Option<FailureKind>, String> {
        let asm = match driver::compile_asm(&self.file_name, &self.source, options) {
            Ok((asm, _, _)) => asm,
            Err(_) => return Ok(Some(FailureKind::InternalError)),
        };
        let dir = tempfile::Builder::new()
            .prefix("harness-triage-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
        let exe = dir.path().join("prog");
        match driver::build_executable(&asm, &exe) {
            Ok(()) => {}
            Err(e @ driver::CompileError::Toolchain(_)) if sysyc::toolchain::arm_gcc().is_err() => {
                return Err(e.to_string());
            }
            Err(_) => return Ok(Some(FailureKind::InternalError)),
        }
        let opts = RunOptions {
            stdin: Stdin::Bytes(self.stdin.clone()),
            timeout: self.settings.timeout,
            ..RunOptions::default()
        };
        let run = qemu.run(&exe, &opts).map_err(|e| e.to_string())?;
        Ok(match run.status {
            RunStatus::Exited(status) => self.judge(&Outcome {
                stdout: run.stdout,
                exit_status: Some(status),
                trap: None,
                steps: 0,
            }),
            RunStatus::Signaled(_) => Some(FailureKind::Crash),
            RunStatus::TimedOut => Some(FailureKind::Timeout),
        })
    }

    /// [`Oracle::check_ir`] or [`Oracle::check_binary`].
    pub fn check(
        &self,
        level: Level,
        qemu: Option<&Qemu>,
        options: &CompileOptions,
    ) -> Result<Option<FailureKind>, String> {
        match (level, qemu) {
            (Level::Ir, _) => Ok(self.check_ir(options)),
            (Level::Binary, Some(qemu)) => self.check_binary(qemu, options),
            (Level::Binary, None) => Err("running the binary needs qemu-arm".to_string()),
        }
    }
}
