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
use crate::native::{CostMode, NativeRun, NativeRunner, RunCost};
use crate::qemu::RunStatus;
use crate::refinterp::{self, InputFailure, RefConfig, RefError};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use sysy_cost_model::ProgramRanges;
use sysyc::driver::{self, CompileError, CompileOptions};
use sysyc::passes::{OptLevel, PipelineReport};
use sysyc::runtime::Outcome;
use sysyc::runtime::native::native_runtime;
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
/// [`cgen::GCC_SEMANTIC_FLAGS`] to an object file, linked with the project's runtime, run under
/// qemu-arm (with the cost plugin when measuring). Outcomes have no step count unless
/// measured. gcc's executables carry no program markers; the program's code is every function
/// of the object file ([`ProgramRanges::from_object`]), clones like `f_x.constprop.0` included.
#[derive(Clone, Debug)]
pub struct GccEngine {
    runner: NativeRunner,
    opt_flag: String,
    timeout: Duration,
}

impl GccEngine {
    /// Fails if qemu-arm, the cross gcc or (when measuring) the plugin cannot be found.
    pub fn new(config: &EngineConfig) -> Result<GccEngine, String> {
        toolchain::arm_gcc().map_err(|e| e.to_string())?;
        Ok(GccEngine {
            runner: NativeRunner::new(cost_mode(config)).map_err(|e| e.to_string())?,
            opt_flag: format!("-O{}", config.opt_level.unwrap_or(2)),
            timeout: config.timeout.unwrap_or(DEFAULT_NATIVE_TIMEOUT),
        })
    }

    /// Translates the case to C and compiles it to the object file `object`.
    fn compile_object(&self, case: &Case, object: &Path) -> Result<(), EngineFailure> {
        let file_name = case.path.display().to_string();
        let program = sysyc::frontend::compile_source(&file_name, &case.source)
            .map_err(|e| EngineFailure::Compile(e.to_string()))?;
        let c = cgen::emit(&program);
        let internal = |what: String| EngineFailure::Internal(format!("gcc on the C translation: {what}"));
        let gcc = toolchain::arm_gcc().map_err(|e| internal(e.to_string()))?;
        let runtime = native_runtime().map_err(|e| internal(e.to_string()))?;
        let mut args: Vec<OsString> = vec![self.opt_flag.clone().into()];
        args.extend(cgen::GCC_SEMANTIC_FLAGS.iter().map(OsString::from));
        args.extend(toolchain::TARGET_FLAGS.iter().map(OsString::from));
        args.extend(["-I".into(), runtime.dir.into_os_string()]);
        args.extend(["-include".into(), runtime.header.into_os_string()]);
        args.extend(["-c", "-x", "c", "-", "-o"].map(OsString::from));
        args.push(object.into());
        let output = duct::cmd(&gcc, &args)
            .env("LC_ALL", "C")
            .stdin_bytes(c.into_bytes())
            .stdout_capture()
            .stderr_capture()
            .unchecked()
            .run()
            .map_err(|e| internal(format!("cannot run {}: {e}", gcc.display())))?;
        // gcc rejecting the translation of a valid program is the emitter's fault.
        if !output.status.success() {
            return Err(internal(String::from_utf8_lossy(&output.stderr).into_owned()));
        }
        Ok(())
    }

    /// [`Engine::run`], with the time of each phase.
    pub fn run_phased(&self, case: &Case) -> (EngineRun, Phases) {
        let start = Instant::now();
        let mut phases = Phases::default();
        let (result, cost) = self.outcome(case, &mut phases);
        let run = EngineRun {
            result,
            elapsed: start.elapsed(),
            cost,
        };
        (run, phases)
    }

    fn outcome(
        &self,
        case: &Case,
        phases: &mut Phases,
    ) -> (Result<Outcome, EngineFailure>, Option<RunCost>) {
        let start = Instant::now();
        let dir = match tempfile::Builder::new().prefix("harness-gcc-").tempdir() {
            Ok(d) => d,
            Err(e) => {
                let msg = format!("cannot create a temporary directory: {e}");
                return (Err(EngineFailure::Internal(msg)), None);
            }
        };
        let object = dir.path().join("prog.o");
        let exe = dir.path().join("prog");
        if let Err(e) = self.compile_object(case, &object) {
            return (Err(e), None);
        }
        phases.compile = start.elapsed();
        if let Err(e) = toolchain::compile_c(Source::Path(&object), &exe, &[&self.opt_flag]) {
            let msg = format!("linking gcc's object: {e}");
            return (Err(EngineFailure::Internal(msg)), None);
        }
        phases.build = start.elapsed() - phases.compile;
        let ranges = if self.runner.measures() {
            match ProgramRanges::from_object(&exe, &object) {
                Ok(r) => r,
                Err(e) => {
                    let msg = format!("program ranges of gcc's executable: {e}");
                    return (Err(EngineFailure::Internal(msg)), None);
                }
            }
        } else {
            ProgramRanges::default()
        };
        match self
            .runner
            .run_with_ranges(&exe, &case.stdin, self.timeout, ranges)
        {
            Ok(run) => {
                phases.run = run.wall;
                native_result(run)
            }
            Err(e) => (Err(EngineFailure::Internal(e.to_string())), None),
        }
    }
}

impl Engine for GccEngine {
    fn name(&self) -> String {
        format!("gcc {}", self.opt_flag)
    }

    fn run(&self, case: &Case) -> EngineRun {
        self.run_phased(case).0
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

/// Where the time of one compiled run went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Phases {
    /// Source to assembly (sysyc) or to an object file (gcc).
    pub compile: Duration,
    /// Assembling and linking.
    pub build: Duration,
    /// The qemu-arm run.
    pub run: Duration,
}

/// The result of running one built executable.
#[derive(Clone, Debug)]
pub struct NativeOutcome {
    pub result: Result<Outcome, EngineFailure>,
    pub cost: Option<RunCost>,
    pub build: Duration,
    pub run: Duration,
}

impl NativeOutcome {
    fn failed(failure: EngineFailure, build: Duration) -> NativeOutcome {
        NativeOutcome {
            result: Err(failure),
            cost: None,
            build,
            run: Duration::ZERO,
        }
    }
}

/// A finished native run as an outcome: the exit status, a crash or a timeout. Steps are the
/// executed instructions when measured, else 0.
fn native_result(run: NativeRun) -> (Result<Outcome, EngineFailure>, Option<RunCost>) {
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

fn cost_mode(config: &EngineConfig) -> CostMode {
    if config.measure_cost {
        CostMode::Measure
    } else {
        CostMode::Off
    }
}

/// sysyc to an ARM executable, run under qemu-arm (with the cost plugin when measuring).
///
/// Besides [`Engine::run`], the steps are available one by one ([`QemuEngine::compile`],
/// [`QemuEngine::run_asm`]) for callers that time them or run an assembly text once for
/// several configurations that produce it.
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
        Ok(QemuEngine {
            options: config.compile_options()?,
            pipeline: config.pipeline_name(),
            runner: NativeRunner::new(cost_mode(config)).map_err(|e| e.to_string())?,
            timeout: config.timeout.unwrap_or(DEFAULT_NATIVE_TIMEOUT),
        })
    }

    /// The case's assembly text under this engine's pipeline, with the pass manager's report.
    pub fn compile(&self, case: &Case) -> Result<(String, PipelineReport), EngineFailure> {
        let file_name = case.path.display().to_string();
        compile_caught(|| {
            driver::compile_asm(&file_name, &case.source, &self.options)
                .map(|(asm, _, report)| (asm, report))
        })
    }

    /// Assembles and links `asm`, and runs it on `stdin`.
    pub fn run_asm(&self, asm: &str, stdin: &[u8]) -> NativeOutcome {
        let start = Instant::now();
        let dir = match tempfile::Builder::new().prefix("harness-qemu-").tempdir() {
            Ok(d) => d,
            Err(e) => {
                let msg = format!("cannot create a temporary directory: {e}");
                return NativeOutcome::failed(EngineFailure::Internal(msg), start.elapsed());
            }
        };
        let exe = dir.path().join("prog");
        if let Err(e) = driver::build_executable(asm, &exe) {
            return NativeOutcome::failed(EngineFailure::Internal(e.to_string()), start.elapsed());
        }
        let build = start.elapsed();
        let run = match self.runner.run(&exe, stdin, self.timeout) {
            Ok(run) => run,
            Err(e) => return NativeOutcome::failed(EngineFailure::Internal(e.to_string()), build),
        };
        let wall = run.wall;
        let (result, cost) = native_result(run);
        NativeOutcome {
            result,
            cost,
            build,
            run: wall,
        }
    }

    /// [`Engine::run`], with the time of each phase.
    pub fn run_phased(&self, case: &Case) -> (EngineRun, Phases) {
        let start = Instant::now();
        let (asm, _) = match self.compile(case) {
            Ok(compiled) => compiled,
            Err(e) => {
                let run = EngineRun {
                    result: Err(e),
                    elapsed: start.elapsed(),
                    cost: None,
                };
                let phases = Phases {
                    compile: run.elapsed,
                    ..Phases::default()
                };
                return (run, phases);
            }
        };
        let compile = start.elapsed();
        let native = self.run_asm(&asm, &case.stdin);
        let run = EngineRun {
            result: native.result,
            elapsed: start.elapsed(),
            cost: native.cost,
        };
        let phases = Phases {
            compile,
            build: native.build,
            run: native.run,
        };
        (run, phases)
    }
}

impl Engine for QemuEngine {
    fn name(&self) -> String {
        format!("qemu {}", self.pipeline)
    }

    fn run(&self, case: &Case) -> EngineRun {
        self.run_phased(case).0
    }
}
