//! Engines: the ways the harness can execute a SysY program, behind one trait, so the
//! conformance runner, the benchmarks and the generator statistics treat them alike.
//!
//! An [`Engine`] runs a [`Subject`] and returns an [`EngineRun`]: the program's [`Outcome`]
//! or the [`Failure`] that prevented one, the cost when measured, and where the time went.
//! Engines are chosen by name ([`engine_by_name`]) with one compiler [`Config`] and one
//! [`RunSettings`]; each uses what concerns it (the reference interpreter compiles nothing).
//! Compiling engines are built from [`crate::stages`], so an engine run is exactly a
//! campaign check without the comparison.
//!
//! Known names: `ref` (the reference interpreter), `ir` (sysyc's IR interpreter on the IR
//! after the configuration's pipeline, verified after every pass), `qemu` (compiled by sysyc,
//! run under qemu-arm, with the cost plugin when measuring) and `gcc` (the program translated
//! to C by [`crate::cgen`], compiled by the ARM cross gcc at the configuration's level and run
//! under qemu-arm: the third opinion).

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, Instant};

use sysy_cost_model::ProgramRanges;
use sysyc::config::Config;
use sysyc::passes::{OptLevel, PipelineReport};
use sysyc::runtime::Outcome;
use sysyc::runtime::library::{self, Assembler, native_runtime};
use sysyc::toolchain::{self, Source};

use crate::cgen;
use crate::failure::{Failure, FailureKind, Stage};
use crate::qemu::{CostMode, Run, RunCost, Runner};
use crate::refinterp::{InputFailure, RefConfig, RefError};
use crate::stages::{self, Executable};
use crate::subject::{Limits, Subject};

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

    fn runner(&self) -> Result<Runner, String> {
        Runner::new(if self.measure_cost { CostMode::Measure } else { CostMode::Off }).map_err(|e| e.to_string())
    }
}

/// Where the time of one run went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Phases {
    /// Source to assembly (sysyc) or to an object file (gcc); the whole run for interpreters.
    pub compile: Duration,
    /// Assembling and linking.
    pub build: Duration,
    /// The qemu-arm run.
    pub run: Duration,
}

impl Phases {
    pub fn total(&self) -> Duration {
        self.compile + self.build + self.run
    }
}

/// The result of one run.
#[derive(Clone, Debug)]
pub struct EngineRun {
    pub result: Result<Outcome, Failure>,
    /// Executed instructions and estimated cycles (measured runs; partial for a run killed at
    /// its time limit).
    pub cost: Option<RunCost>,
    pub phases: Phases,
}

impl EngineRun {
    fn failed(failure: Failure, phases: Phases) -> EngineRun {
        EngineRun { result: Err(failure), cost: None, phases }
    }

    /// A finished native run, with the phases before it.
    fn of(run: Run, stage: Stage, mut phases: Phases) -> EngineRun {
        phases.run = run.wall;
        EngineRun { result: run.outcome(stage), cost: run.cost, phases }
    }
}

/// A way to execute SysY programs.
pub trait Engine: Sync {
    /// The name it is selected by, with its settings where they matter (`qemu -O2`).
    fn name(&self) -> String;
    fn run(&self, subject: &Subject) -> EngineRun;
}

/// Engine names [`engine_by_name`] accepts.
pub const ENGINE_NAMES: [&str; 4] = ["ref", "ir", "qemu", "gcc"];

/// The engine called `name`.
pub fn engine_by_name(name: &str, config: &Config, settings: &RunSettings) -> Result<Box<dyn Engine>, String> {
    match name {
        "ref" => Ok(Box::new(RefEngine::new(settings))),
        "ir" => Ok(Box::new(IrEngine { config: Config { verify_each: true, ..config.clone() }, timeout: settings.limits.timeout })),
        "qemu" => Ok(Box::new(QemuEngine::new(config, settings)?)),
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

    fn run(&self, subject: &Subject) -> EngineRun {
        let start = Instant::now();
        let result = subject.reference(&self.config).map_err(|e| match e {
            RefError::TimedOut { steps } => Failure::new(FailureKind::Timeout, Stage::Reference, format!("timed out after {steps} steps")),
            e => Failure::new(FailureKind::HarnessError, Stage::Reference, e.to_string()),
        });
        EngineRun { result, cost: None, phases: Phases { compile: start.elapsed(), ..Phases::default() } }
    }
}

/// sysyc's IR interpreter on the optimised IR, the verifier on after every pass.
#[derive(Clone, Debug)]
pub struct IrEngine {
    config: Config,
    timeout: Duration,
}

impl Engine for IrEngine {
    fn name(&self) -> String {
        format!("ir {}", self.config.pipeline_words())
    }

    fn run(&self, subject: &Subject) -> EngineRun {
        let start = Instant::now();
        let result = stages::lower(subject)
            .and_then(|lowered| stages::optimise(&lowered, &self.config, None))
            .and_then(|(module, _)| stages::interpret(&module, &subject.stdin, self.timeout));
        EngineRun { result, cost: None, phases: Phases { compile: start.elapsed(), ..Phases::default() } }
    }
}

/// sysyc to an ARM executable, run under qemu-arm (measured when the settings say so).
///
/// Besides [`Engine::run`], the steps are available one by one ([`QemuEngine::compile`],
/// [`QemuEngine::run_asm`]) for callers that run one assembly text for several
/// configurations that produce it.
#[derive(Clone, Debug)]
pub struct QemuEngine {
    config: Config,
    runner: Runner,
    timeout: Duration,
    assembler: Assembler,
}

impl QemuEngine {
    /// Fails if qemu-arm, the cross toolchain, or (when measuring) the plugin is missing.
    pub fn new(config: &Config, settings: &RunSettings) -> Result<QemuEngine, String> {
        toolchain::arm_gcc().map_err(|e| e.to_string())?;
        Ok(QemuEngine { config: config.clone(), runner: settings.runner()?, timeout: settings.limits.timeout, assembler: settings.assembler })
    }

    /// The subject's assembly text under this engine's configuration, with the pass
    /// manager's report.
    pub fn compile(&self, subject: &Subject) -> Result<(String, PipelineReport), Failure> {
        let lowered = stages::lower(subject)?;
        let (module, report) = stages::optimise(&lowered, &self.config, None)?;
        Ok((stages::select(&module, &self.config)?, report))
    }

    /// Links `asm` and runs it on `stdin`.
    pub fn run_asm(&self, asm: &str, stdin: &[u8]) -> EngineRun {
        match stages::execute(asm, self.assembler, stdin, &self.runner, self.timeout) {
            Ok(execution) => EngineRun::of(execution.run, Stage::Qemu, Phases { build: execution.link, ..Phases::default() }),
            Err(failure) => EngineRun::failed(failure, Phases::default()),
        }
    }
}

impl Engine for QemuEngine {
    fn name(&self) -> String {
        format!("qemu {}", self.config.pipeline_words())
    }

    fn run(&self, subject: &Subject) -> EngineRun {
        let start = Instant::now();
        match self.compile(subject) {
            Ok((asm, _)) => {
                let compile = start.elapsed();
                let mut run = self.run_asm(&asm, &subject.stdin);
                run.phases.compile = compile;
                run
            }
            Err(failure) => EngineRun::failed(failure, Phases { compile: start.elapsed(), ..Phases::default() }),
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
    timeout: Duration,
}

impl GccEngine {
    /// Fails if qemu-arm, the cross gcc or (when measuring) the plugin cannot be found.
    pub fn new(level: OptLevel, settings: &RunSettings) -> Result<GccEngine, String> {
        toolchain::arm_gcc().map_err(|e| e.to_string())?;
        Ok(GccEngine { runner: settings.runner()?, opt_flag: format!("-{}", level.name()), timeout: settings.limits.timeout })
    }

    fn failure(what: String) -> Failure {
        Failure::new(FailureKind::HarnessError, Stage::Gcc, format!("gcc on the C translation: {what}"))
    }

    /// Translates the subject to C and compiles it to the object file `object`.
    fn compile_object(&self, subject: &Subject, object: &Path) -> Result<(), Failure> {
        let c = cgen::emit(&subject.program);
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
}

impl Engine for GccEngine {
    fn name(&self) -> String {
        format!("gcc {}", self.opt_flag)
    }

    fn run(&self, subject: &Subject) -> EngineRun {
        let start = Instant::now();
        let mut phases = Phases::default();
        let mut object = None;
        let exe = Executable::build(|exe| {
            let obj = exe.with_extension("o");
            self.compile_object(subject, &obj)?;
            phases.compile = start.elapsed();
            library::compile_c(Source::Path(&obj), exe, &[&self.opt_flag]).map_err(|e| Self::failure(format!("linking gcc's object: {e}")))?;
            phases.build = start.elapsed() - phases.compile;
            object = Some(obj);
            Ok(())
        });
        let (exe, object) = match (exe, object) {
            (Ok(exe), Some(object)) => (exe, object),
            (Err(failure), _) => return EngineRun::failed(failure, phases),
            (Ok(_), None) => return EngineRun::failed(Self::failure("no object file was built".into()), phases),
        };
        let ranges = if self.runner.measures() {
            match ProgramRanges::from_object(&exe.path, &object) {
                Ok(r) => r,
                Err(e) => return EngineRun::failed(Self::failure(format!("program ranges of gcc's executable: {e}")), phases),
            }
        } else {
            ProgramRanges::default()
        };
        match self.runner.run_with_ranges(&exe.path, &subject.stdin, self.timeout, ranges) {
            Ok(run) => EngineRun::of(run, Stage::Gcc, phases),
            Err(e) => EngineRun::failed(Self::failure(e.to_string()), phases),
        }
    }
}
