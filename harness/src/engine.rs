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
//! Known names: `ref` (the reference interpreter). Planned: `ir` (the IR interpreter after
//! the optimisation pipeline of `--opt`/`--passes`) and `qemu` (compiled by sysyc and run
//! under qemu-arm).

use crate::refinterp::{self, RefConfig, RefError};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use sysyc::runtime::Outcome;

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
    /// The engine itself failed (a tool missing or crashing, an I/O error, ...).
    Internal(String),
}

/// The result of one run.
#[derive(Clone, Debug)]
pub struct EngineRun {
    pub result: Result<Outcome, EngineFailure>,
    /// Wall-clock time of the whole run (compilation included, for compiling engines).
    pub elapsed: Duration,
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
}

/// A way to execute SysY programs.
pub trait Engine: Sync {
    /// The name it is selected by, with its settings where they matter (e.g. `ir -O2`).
    fn name(&self) -> String;
    fn run(&self, case: &Case) -> EngineRun;
}

/// Engine names [`engine_by_name`] accepts.
pub const ENGINE_NAMES: [&str; 1] = ["ref"];

/// The engine called `name`, configured by `config`.
pub fn engine_by_name(name: &str, config: &EngineConfig) -> Result<Box<dyn Engine>, String> {
    match name {
        "ref" => Ok(Box::new(RefEngine::new(config))),
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
        }
    }
}
