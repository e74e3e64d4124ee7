//! Engines: the ways the harness can execute a SysY program, behind one trait, so the
//! conformance runner, the benchmarks and the generator statistics treat them alike.
//!
//! An [`Engine`] runs a [`Case`] and returns an [`EngineRun`]: the verdict of the one judge
//! ([`crate::failure::judge`]) on the program's outcome, with the stage that really ran it
//! (`reference`, `ir-interp`, `qemu`, `gcc`), the cost when measured, and where the time went.
//! Engines are chosen by name ([`engine_by_name`]) with one compiler [`Config`] and one
//! [`RunSettings`]; each uses what concerns it (the reference interpreter compiles nothing).
//! The compiling engines are the check executor ([`crate::executor`]) with one
//! configuration, so an engine run is exactly a campaign check.
//!
//! Known names: `ref` (the reference interpreter), `ir` (sysyc's IR interpreter on the IR
//! after the configuration's pipeline, verified after every pass), `qemu` (compiled by sysyc,
//! run under qemu-arm, with the cost plugin when measuring) and `gcc` (the program translated
//! to C by [`crate::cgen`], compiled by the ARM cross gcc at the configuration's level and run
//! under qemu-arm: the third opinion).

use std::ffi::OsString;
use std::path::Path;
use std::time::Instant;

use sysy_cost_model::ProgramRanges;
use sysyc::config::Config;
use sysyc::passes::OptLevel;
use sysyc::runtime::library::{self, Assembler, native_runtime};
use sysyc::toolchain::{self, Source};

use crate::cgen;
use crate::executor::timing::{Phase, Timing};
use crate::executor::watch::Unwatched;
use crate::executor::{Executor, Settings, Through};
use crate::failure::{Failure, FailureKind, Stage, judge};
use crate::qemu::{CostMode, RunCost, Runner};
use crate::refinterp::{InputFailure, RefConfig, RefError};
use crate::steps::Executable;
use crate::subject::{Case, Limits};

/// How engines run: limits, what interpreters do with reads past the input, and whether
/// compiled runs are measured.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSettings {
    pub limits: Limits,
    /// What interpreting engines do with reads the input cannot satisfy (compiled programs
    /// always get the runtime library's 0).
    pub input_failure: InputFailure,
    /// Measure executed instructions with the cost plugin (`qemu`, `gcc`).
    pub measure_cost: bool,
    /// How sysyc's assembly becomes an executable (`qemu`; gcc keeps its own toolchain).
    pub assembler: Assembler,
}

impl RunSettings {
    pub fn new(limits: Limits) -> RunSettings {
        RunSettings { limits, input_failure: InputFailure::Trap, measure_cost: false, assembler: Assembler::default() }
    }

    /// qemu-arm, with the cost plugin when measuring.
    pub fn runner(&self) -> Result<Runner, String> {
        Runner::new(if self.measure_cost { CostMode::Measure } else { CostMode::Off }).map_err(|e| e.to_string())
    }
}

/// The judged result of one run.
#[derive(Clone, Debug)]
pub struct EngineRun {
    pub verdict: Result<(), Failure>,
    /// Executed instructions and estimated cycles (measured runs; partial for a run killed at
    /// its time limit).
    pub cost: Option<RunCost>,
    pub timing: Timing,
}

/// A way to execute SysY programs.
pub trait Engine: Sync {
    /// The name it is selected by, with its settings where they matter (`qemu -O2`).
    fn name(&self) -> String;
    fn run(&self, case: &Case) -> EngineRun;
}

/// Engine names [`engine_by_name`] accepts.
pub const ENGINE_NAMES: [&str; 4] = ["ref", "ir", "qemu", "gcc"];

/// The engine called `name`.
pub fn engine_by_name(name: &str, config: &Config, settings: &RunSettings) -> Result<Box<dyn Engine>, String> {
    match name {
        "ref" => Ok(Box::new(RefEngine::new(settings))),
        "ir" => Ok(Box::new(CompiledEngine::ir(config, settings))),
        "qemu" => Ok(Box::new(CompiledEngine::qemu(config, settings)?)),
        "gcc" => Ok(Box::new(GccEngine::new(config.opt_level().unwrap_or(OptLevel::O2), settings)?)),
        other => Err(format!("unknown engine `{other}` (known: {})", ENGINE_NAMES.join(", "))),
    }
}

/// The reference interpreter as an engine.
#[derive(Clone, Debug)]
pub struct RefEngine {
    pub config: RefConfig,
}

impl RefEngine {
    pub fn new(settings: &RunSettings) -> RefEngine {
        RefEngine {
            config: RefConfig {
                max_steps: settings.limits.max_steps,
                timeout: Some(settings.limits.timeout),
                input_failure: settings.input_failure,
                ..RefConfig::default()
            },
        }
    }
}

impl Engine for RefEngine {
    fn name(&self) -> String {
        "ref".into()
    }

    fn run(&self, case: &Case) -> EngineRun {
        let mut timing = Timing::default();
        let outcome = timing.time(Phase::Reference, || case.subject.reference(&self.config));
        let verdict = match outcome {
            Ok(outcome) => judge(&case.expected, &outcome, Stage::Reference),
            Err(RefError::TimedOut { steps }) => Err(Failure::new(FailureKind::Timeout, Stage::Reference, format!("timed out after {steps} steps"))),
            Err(e) => Err(Failure::new(FailureKind::HarnessError, Stage::Reference, e.to_string())),
        };
        EngineRun { verdict, cost: None, timing }
    }
}

/// sysyc through the check executor with one configuration: the IR interpreter on the
/// optimised IR (`ir`, the verifier on after every pass), or the executable under qemu-arm
/// (`qemu`, measured when the settings say so).
pub struct CompiledEngine {
    config: Config,
    executor: Executor,
}

impl CompiledEngine {
    /// The `ir` engine.
    pub fn ir(config: &Config, settings: &RunSettings) -> CompiledEngine {
        let config = Config { verify_each: true, ..config.clone() };
        CompiledEngine { config, executor: Executor::new(Settings::plain(settings.limits.clone(), false), None) }
    }

    /// The `qemu` engine; fails if qemu-arm, the cross toolchain, or (when measuring) the
    /// plugin is missing.
    pub fn qemu(config: &Config, settings: &RunSettings) -> Result<CompiledEngine, String> {
        toolchain::arm_gcc().map_err(|e| e.to_string())?;
        let executor_settings = Settings { interpret: false, assembler: settings.assembler, ..Settings::plain(settings.limits.clone(), true) };
        Ok(CompiledEngine { config: config.clone(), executor: Executor::new(executor_settings, Some(settings.runner()?)) })
    }
}

impl Engine for CompiledEngine {
    fn name(&self) -> String {
        let engine = if self.executor.settings.through == Through::Binary { "qemu" } else { "ir" };
        format!("{engine} {}", self.config.pipeline_words())
    }

    fn run(&self, case: &Case) -> EngineRun {
        match self.executor.check(case, std::slice::from_ref(&self.config), 0, &Unwatched) {
            Ok(mut checked) => {
                let check = checked.checks.pop().expect("one check per configuration");
                EngineRun { verdict: check.verdict, cost: check.cost, timing: checked.timing }
            }
            Err(lowering) => EngineRun { verdict: Err(lowering), cost: None, timing: Timing::default() },
        }
    }
}

/// gcc as an engine: [`cgen`] translation, cross-compiled at `-O<level>` with
/// [`cgen::GCC_SEMANTIC_FLAGS`] to an object file, linked with the project's runtime, run under
/// qemu-arm (with the cost plugin when measuring). gcc's executables carry no program
/// markers; the program's code is every function of the object file
/// ([`ProgramRanges::from_object`]), clones like `f_x.constprop.0` included.
#[derive(Clone, Debug)]
pub struct GccEngine {
    runner: Runner,
    opt_flag: String,
    limits: Limits,
}

impl GccEngine {
    /// Fails if qemu-arm, the cross gcc or (when measuring) the plugin cannot be found.
    pub fn new(level: OptLevel, settings: &RunSettings) -> Result<GccEngine, String> {
        toolchain::arm_gcc().map_err(|e| e.to_string())?;
        Ok(GccEngine { runner: settings.runner()?, opt_flag: format!("-{}", level.name()), limits: settings.limits.clone() })
    }

    fn failure(what: String) -> Failure {
        Failure::new(FailureKind::HarnessError, Stage::Gcc, format!("gcc on the C translation: {what}"))
    }

    /// Translates the case's program to C and compiles it to the object file `object`.
    fn compile_object(&self, case: &Case, object: &Path) -> Result<(), Failure> {
        let c = cgen::emit(&case.subject.program);
        let gcc = toolchain::arm_gcc().map_err(|e| Self::failure(e.to_string()))?;
        let runtime = native_runtime().map_err(|e| Self::failure(e.to_string()))?;
        let mut args: Vec<OsString> = vec![self.opt_flag.clone().into()];
        args.extend(cgen::GCC_SEMANTIC_FLAGS.iter().map(OsString::from));
        args.extend(toolchain::TARGET_FLAGS.iter().map(OsString::from));
        args.extend(["-I".into(), runtime.dir.into_os_string(), "-include".into(), runtime.header.into_os_string()]);
        args.extend(["-c", "-x", "c", "-", "-o"].map(OsString::from));
        args.push(object.into());
        // gcc rejecting the translation of a valid program is the emitter's fault.
        toolchain::run_tool(&gcc, &args, Some(c.as_bytes())).map(drop).map_err(|e| Self::failure(e.to_string()))
    }

    /// The executable and the program's address ranges in it.
    fn build(&self, case: &Case, timing: &mut Timing) -> Result<(Executable, ProgramRanges), Failure> {
        let mut object = None;
        let exe = Executable::build(|exe| {
            let obj = exe.with_extension("o");
            timing.time(Phase::Gcc, || self.compile_object(case, &obj))?;
            timing
                .time(Phase::Link, || library::compile_c(Source::Path(&obj), exe, &[&self.opt_flag]))
                .map_err(|e| Self::failure(format!("linking gcc's object: {e}")))?;
            object = Some(obj);
            Ok(())
        })?;
        let object = object.ok_or_else(|| Self::failure("no object file was built".into()))?;
        let ranges = match self.runner.measures() {
            true => ProgramRanges::from_object(&exe.path, &object).map_err(|e| Self::failure(format!("program ranges of gcc's executable: {e}")))?,
            false => ProgramRanges::default(),
        };
        Ok((exe, ranges))
    }
}

impl Engine for GccEngine {
    fn name(&self) -> String {
        format!("gcc {}", self.opt_flag)
    }

    fn run(&self, case: &Case) -> EngineRun {
        let mut timing = Timing::default();
        let (exe, ranges) = match self.build(case, &mut timing) {
            Ok(built) => built,
            Err(failure) => return EngineRun { verdict: Err(failure), cost: None, timing },
        };
        let start = Instant::now();
        match self.runner.run_with_ranges(&exe.path, &case.subject.stdin, self.limits.timeout, ranges) {
            Ok(run) => {
                timing.add(Phase::Qemu, run.wall);
                let verdict = run.outcome(Stage::Gcc).and_then(|outcome| judge(&case.expected, &outcome, Stage::Gcc));
                EngineRun { verdict, cost: run.cost, timing }
            }
            Err(e) => {
                timing.add(Phase::Qemu, start.elapsed());
                EngineRun { verdict: Err(Self::failure(e.to_string())), cost: None, timing }
            }
        }
    }
}
