//! Engines: the ways the harness can execute a SysY program, behind one trait, so the
//! conformance runner (and later the fuzzer and the benchmarks) treat them alike.
//!
//! An [`Engine`] takes a [`Case`] (source text and stdin) and returns an [`EngineRun`]: the
//! program's [`Outcome`] or why there is none ([`EngineFailure`]), and how long it took.
//! Engines are chosen by name ([`engine_by_name`]) with one shared [`EngineConfig`]; each
//! engine reads the settings that concern it and ignores the rest (the reference interpreter
//! has no optimisation level). Adding an engine means adding a type and a line in
//! [`engine_by_name`]; the runners do not change.
//!
//! Known names: `ref` (the reference interpreter), `ir` (sysyc's IR interpreter on the IR
//! after the pipeline of `--opt`/`--passes`, verified after every pass), `qemu` (compiled by
//! sysyc and run under qemu-arm, with the cost plugin when asked) and `gcc` (the program
//! translated to C by [`crate::cgen`], compiled by the ARM cross gcc at `-O<opt>` and run under
//! qemu-arm: the third opinion). Compiling engines default to `-O2`.

use crate::cgen;
use crate::native::{CostMode, NativeRunner, RunCost};
use crate::qemu::{Qemu, RunOptions, RunStatus, Stdin};
use crate::refinterp::{self, InputFailure, RefConfig, RefError};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use sysyc::driver::{self, CompileError, CompileOptions};
use sysyc::passes::OptLevel;
use sysyc::runtime::Outcome;
use sysyc::toolchain::{self, Source};

/// A program to run: its source and its standard input.
#[derive(Clone, Debug)]
pub struct Case {
    /// A short name for reports (the file stem for suite cases).
    pub name: String,
    /// Where the source came from (for diagnostics and for engines that hand files to tools).
    pub path: PathBuf,
    pub source: String,
    pub stdin: Vec<u8>,
}

/// Why an engine produced no outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineFailure {
    /// The program was rejected (front-end diagnostics, or a back end's refusal).
    Compile(String),
    /// The run exceeded the configured time limit.
    Timeout,
    /// The compiled program died (a signal: the program misbehaved, it produced no outcome).
    Crashed(String),
    /// The engine itself failed (a tool missing or crashing, an I/O error, ...).
    Internal(String),
}

/// The result of one run.
#[derive(Clone, Debug)]
pub struct EngineRun {
    pub result: Result<Outcome, EngineFailure>,
    /// Wall-clock time of the whole run (compilation included, for compiling engines).
    pub elapsed: Duration,
    /// Executed instructions and estimated cycles (the `qemu` engine when measuring).
    pub cost: Option<RunCost>,
}

/// Settings shared by every engine; each uses what applies to it.
#[derive(Clone, Debug, Default)]
pub struct EngineConfig {
    /// Wall-clock limit per run.
    pub timeout: Option<Duration>,
    /// Optimisation level (`ir`, `qemu`).
    pub opt_level: Option<u32>,
    /// Explicit optimisation pass list, overriding the level (`ir`, `qemu`).
    pub passes: Option<Vec<String>>,
    /// Step budget of interpreting engines (`None`: unlimited).
    pub max_steps: Option<u64>,
    /// What interpreting engines do with reads the input cannot satisfy (compiled programs
    /// always get the runtime library's 0).
    pub input_failure: InputFailure,
    /// Measure executed instructions with the cost plugin (`qemu`).
    pub measure_cost: bool,
}

impl EngineConfig {
    /// The compiler options of `--passes`, else `--opt` (default 2).
    pub fn compile_options(&self) -> Result<CompileOptions, String> {
        if let Some(passes) = &self.passes {
            return CompileOptions::passes(&passes.join(","));
        }
        let level = self.opt_level.unwrap_or(2);
        OptLevel::parse(&level.to_string())
            .map(CompileOptions::level)
            .ok_or_else(|| format!("no optimisation level -O{level} (0, 1 or 2)"))
    }

    /// `-O2` or `--passes=a,b` as the user wrote it.
    fn pipeline_name(&self) -> String {
        match &self.passes {
            Some(p) => format!("--passes={}", p.join(",")),
            None => format!("-O{}", self.opt_level.unwrap_or(2)),
        }
    }
}

/// A way to execute SysY programs.
pub trait Engine: Sync {
    /// The name it is selected by, with its settings where they matter (e.g. `ir -O2`).
    fn name(&self) -> String;
    fn run(&self, case: &Case) -> EngineRun;
}

/// Engine names [`engine_by_name`] accepts.
pub const ENGINE_NAMES: [&str; 4] = ["ref", "ir", "qemu", "gcc"];

/// The engine called `name`, configured by `config`.
pub fn engine_by_name(name: &str, config: &EngineConfig) -> Result<Box<dyn Engine>, String> {
    match name {
        "ref" => Ok(Box::new(RefEngine::new(config))),
        "ir" => Ok(Box::new(IrEngine::new(config)?)),
        "qemu" => Ok(Box::new(QemuEngine::new(config)?)),
        "gcc" => Ok(Box::new(GccEngine::new(config)?)),
        other => Err(format!(
            "unknown engine `{other}` (known: {})",
            ENGINE_NAMES.join(", ")
        )),
    }
}

/// The reference interpreter as an engine.
#[derive(Clone, Debug)]
pub struct RefEngine {
    pub config: RefConfig,
}

impl RefEngine {
    pub fn new(config: &EngineConfig) -> RefEngine {
        let mut ref_config = RefConfig {
            timeout: config.timeout,
            input_failure: config.input_failure,
            ..RefConfig::default()
        };
        if let Some(steps) = config.max_steps {
            ref_config.max_steps = steps;
        }
        RefEngine { config: ref_config }
    }
}

impl Engine for RefEngine {
    fn name(&self) -> String {
        "ref".to_string()
    }

    fn run(&self, case: &Case) -> EngineRun {
        let start = Instant::now();
        let file_name = case.path.display().to_string();
        let result =
            match refinterp::run_source(&file_name, &case.source, &case.stdin, &self.config) {
                Ok(outcome) => Ok(outcome),
                Err(RefError::Frontend(e)) => Err(EngineFailure::Compile(e.to_string())),
                Err(RefError::TimedOut { .. }) => Err(EngineFailure::Timeout),
                Err(e @ (RefError::InvalidProgram(_) | RefError::Thread(_))) => {
                    Err(EngineFailure::Internal(e.to_string()))
                }
            };
        EngineRun {
            result,
            elapsed: start.elapsed(),
            cost: None,
        }
    }
}

/// Time limit of a compiled run when the configuration sets none.
pub const DEFAULT_NATIVE_TIMEOUT: Duration = Duration::from_secs(600);

/// gcc as an engine: [`cgen`] translation, cross-compiled at `-O<level>` with
/// [`cgen::GCC_SEMANTIC_FLAGS`], linked with the project's runtime, run under qemu-arm.
/// Outcomes have no step count (0).
#[derive(Clone, Debug)]
pub struct GccEngine {
    qemu: Qemu,
    opt_flag: String,
    timeout: Duration,
}

impl GccEngine {
    /// Fails if qemu-arm or the cross gcc cannot be found.
    pub fn new(config: &EngineConfig) -> Result<GccEngine, String> {
        toolchain::arm_gcc().map_err(|e| e.to_string())?;
        let qemu = Qemu::locate().map_err(|e| e.to_string())?;
        Ok(GccEngine {
            qemu,
            opt_flag: format!("-O{}", config.opt_level.unwrap_or(2)),
            timeout: config.timeout.unwrap_or(DEFAULT_NATIVE_TIMEOUT),
        })
    }

    fn outcome(&self, case: &Case) -> Result<Outcome, EngineFailure> {
        let file_name = case.path.display().to_string();
        let program = sysyc::frontend::compile_source(&file_name, &case.source)
            .map_err(|e| EngineFailure::Compile(e.to_string()))?;
        let c = cgen::emit(&program);
        let dir = tempfile::Builder::new()
            .prefix("harness-gcc-")
            .tempdir()
            .map_err(|e| {
                EngineFailure::Internal(format!("cannot create a temporary directory: {e}"))
            })?;
        let exe = dir.path().join("prog");
        let mut flags = vec![self.opt_flag.as_str()];
        flags.extend(cgen::GCC_SEMANTIC_FLAGS);
        // gcc rejecting the translation of a valid program is the emitter's fault.
        toolchain::compile_c(Source::Text(&c), &exe, &flags)
            .map_err(|e| EngineFailure::Internal(format!("gcc on the C translation: {e}")))?;
        let opts = RunOptions {
            stdin: Stdin::Bytes(case.stdin.clone()),
            timeout: self.timeout,
            ..RunOptions::default()
        };
        let run = self
            .qemu
            .run(&exe, &opts)
            .map_err(|e| EngineFailure::Internal(e.to_string()))?;
        match run.status {
            RunStatus::Exited(status) => Ok(Outcome {
                stdout: run.stdout,
                exit_status: Some(status),
                trap: None,
                steps: 0,
            }),
            RunStatus::Signaled(_) => Err(EngineFailure::Crashed(run.status.to_string())),
            RunStatus::TimedOut => Err(EngineFailure::Timeout),
        }
    }
}

impl Engine for GccEngine {
    fn name(&self) -> String {
        format!("gcc {}", self.opt_flag)
    }

    fn run(&self, case: &Case) -> EngineRun {
        let start = Instant::now();
        let result = self.outcome(case);
        EngineRun {
            result,
            elapsed: start.elapsed(),
            cost: None,
        }
    }
}

/// Time limit of an IR-interpreter run when the configuration sets none.
pub const DEFAULT_IR_TIMEOUT: Duration = Duration::from_secs(600);

/// Compiles with sysyc, catching panics: a panic is a compiler bug, reported as such.
fn compile_caught<T>(
    compile: impl FnOnce() -> Result<T, CompileError>,
) -> Result<T, EngineFailure> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(compile)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) if e.is_user_error() => Err(EngineFailure::Compile(e.to_string())),
        Ok(Err(e)) => Err(EngineFailure::Internal(e.to_string())),
        Err(panic) => Err(EngineFailure::Internal(format!(
            "compiler panicked: {}",
            panic_message(&panic)
        ))),
    }
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

/// sysyc's IR interpreter on the optimised IR, the verifier on after every pass.
#[derive(Clone, Debug)]
pub struct IrEngine {
    options: CompileOptions,
    pipeline: String,
    timeout: Duration,
    max_steps: Option<u64>,
}

impl IrEngine {
    pub fn new(config: &EngineConfig) -> Result<IrEngine, String> {
        let mut options = config.compile_options()?;
        options.verify_each = true;
        Ok(IrEngine {
            options,
            pipeline: config.pipeline_name(),
            timeout: config.timeout.unwrap_or(DEFAULT_IR_TIMEOUT),
            max_steps: config.max_steps,
        })
    }
}

impl Engine for IrEngine {
    fn name(&self) -> String {
        format!("ir {}", self.pipeline)
    }

    fn run(&self, case: &Case) -> EngineRun {
        let start = Instant::now();
        let file_name = case.path.display().to_string();
        let result = compile_caught(|| {
            driver::compile_ir(&file_name, &case.source, &self.options).map(|(m, _)| m)
        })
        .and_then(|module| {
            let program = sysyc::ir::interp::Program::new(&module)
                .map_err(|e| EngineFailure::Internal(format!("IR interpreter: {e}")))?;
            let mut config = sysyc::ir::interp::InterpConfig::default();
            if let Some(steps) = self.max_steps {
                config.max_steps = steps;
            }
            driver::interpret_with_time_limit(&program, &case.stdin, &config, self.timeout)
                .map(|r| r.outcome)
                .map_err(|_| EngineFailure::Timeout)
        });
        EngineRun {
            result,
            elapsed: start.elapsed(),
            cost: None,
        }
    }
}

/// sysyc to an ARM executable, run under qemu-arm (with the cost plugin when measuring).
#[derive(Clone, Debug)]
pub struct QemuEngine {
    options: CompileOptions,
    pipeline: String,
    runner: NativeRunner,
    timeout: Duration,
}

impl QemuEngine {
    /// Fails if qemu-arm, the cross toolchain, or (when measuring) the plugin is missing.
    pub fn new(config: &EngineConfig) -> Result<QemuEngine, String> {
        toolchain::arm_gcc().map_err(|e| e.to_string())?;
        let mode = if config.measure_cost {
            CostMode::Measure
        } else {
            CostMode::Off
        };
        Ok(QemuEngine {
            options: config.compile_options()?,
            pipeline: config.pipeline_name(),
            runner: NativeRunner::new(mode).map_err(|e| e.to_string())?,
            timeout: config.timeout.unwrap_or(DEFAULT_NATIVE_TIMEOUT),
        })
    }

    fn outcome(&self, case: &Case) -> (Result<Outcome, EngineFailure>, Option<RunCost>) {
        let file_name = case.path.display().to_string();
        let asm = match compile_caught(|| {
            driver::compile_asm(&file_name, &case.source, &self.options).map(|(asm, ..)| asm)
        }) {
            Ok(asm) => asm,
            Err(e) => return (Err(e), None),
        };
        let dir = match tempfile::Builder::new().prefix("harness-qemu-").tempdir() {
            Ok(d) => d,
            Err(e) => {
                let msg = format!("cannot create a temporary directory: {e}");
                return (Err(EngineFailure::Internal(msg)), None);
            }
        };
        let exe = dir.path().join("prog");
        if let Err(e) = driver::build_executable(&asm, &exe) {
            return (Err(EngineFailure::Internal(e.to_string())), None);
        }
        let run = match self.runner.run(&exe, &case.stdin, self.timeout) {
            Ok(run) => run,
            Err(e) => return (Err(EngineFailure::Internal(e.to_string())), None),
        };
        let result = match run.status {
            RunStatus::Exited(status) => Ok(Outcome {
                stdout: run.stdout,
                exit_status: Some(status),
                trap: None,
                steps: run.cost.as_ref().map_or(0, |c| c.counts.total),
            }),
            RunStatus::Signaled(_) => Err(EngineFailure::Crashed(run.status.to_string())),
            RunStatus::TimedOut => Err(EngineFailure::Timeout),
        };
        (result, run.cost)
    }
}

impl Engine for QemuEngine {
    fn name(&self) -> String {
        format!("qemu {}", self.pipeline)
    }

    fn run(&self, case: &Case) -> EngineRun {
        let start = Instant::now();
        let (result, cost) = self.outcome(case);
        EngineRun {
            result,
            elapsed: start.elapsed(),
            cost,
        }
    }
}
