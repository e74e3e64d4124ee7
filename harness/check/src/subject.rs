//! What a check is about: a [`Subject`] is one SysY program with its standard input, parsed
//! and analysed once; a [`Case`] is a subject with what its runs must produce.
//!
//! The truth of a generated or reduced program is the reference interpreter's outcome
//! ([`Subject::truth`]); a program on which the reference interpreter traps or runs out of
//! time has undefined behaviour (or is too long to judge) and is [`Rejected`], never judged.
//! A conformance case's truth is its `.out` file.

use std::path::Path;
use std::time::Duration;

use sysyc::frontend::{self, LineIndex, ast::CompUnit, hir};
use sysyc::runtime::Outcome;

use crate::failure::{Expected, Failure, FailureKind, Stage};
use crate::refinterp::{self, InputFailure, RefConfig, RefError};

/// Run limits: the one place their defaults are decided.
///
/// * every run (reference interpreter, IR interpreter, qemu) gets the same wall-clock
///   `timeout`: [`Limits::GENERATED`] for generated and reduced programs (they are built to
///   run in well under a second), [`Limits::SUITE`] for suite programs (the performance
///   cases run for up to a minute under qemu, and for hours in the interpreters);
/// * the reference interpreter additionally stops after `max_steps` steps (statements and
///   loop tests executed): a budget a program exhausting is too long to judge.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    pub timeout: Duration,
    pub max_steps: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::GENERATED
    }
}

impl Limits {
    /// Generated programs (campaign, triage, fuzzing, generator statistics).
    pub const GENERATED: Limits = Limits { timeout: Duration::from_secs(10), max_steps: 200_000_000 };
    /// Suite programs (conformance, benchmarks, speedup reports).
    pub const SUITE: Limits = Limits { timeout: Duration::from_secs(600), max_steps: u64::MAX };

    /// How the reference interpreter runs for the truth under these limits (the generator's
    /// probe runs the same way with its own step budget, so that its run can be the truth).
    pub fn truth_config(&self) -> RefConfig {
        RefConfig {
            max_steps: self.max_steps,
            timeout: Some(self.timeout),
            input_failure: InputFailure::Trap,
            ..RefConfig::default()
        }
    }

    /// These limits with the timeout of a `--timeout SECONDS` option, when given.
    pub fn with_timeout(&self, seconds: Option<f64>) -> Result<Limits, String> {
        match seconds {
            None => Ok(self.clone()),
            Some(s) => Duration::try_from_secs_f64(s)
                .ok()
                .filter(|d| !d.is_zero())
                .map(|timeout| Limits { timeout, ..self.clone() })
                .ok_or_else(|| format!("invalid --timeout {s}: expected a positive number of seconds")),
        }
    }
}

/// The generator's probe (`sysy_generator::Probe`): the reference interpreter with statement
/// coverage on an analysed tree, run as [`Subject::truth`] runs it but with the probe's step
/// budget, so that a probe run that ended normally is the program's truth. `None` when it
/// trapped, ran out of steps or time, or failed.
pub fn coverage_probe(program: &hir::Program, lines: &LineIndex, stdin: &[u8], max_steps: u64) -> Option<(f64, Outcome)> {
    let limits = Limits { max_steps, ..Limits::GENERATED };
    match refinterp::run_with_coverage(program, lines, stdin, &limits.truth_config()) {
        Ok((outcome, coverage)) if outcome.trap.is_none() => Some((coverage.fraction(), outcome)),
        _ => None,
    }
}

/// Why a program cannot be judged against the reference interpreter.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Rejected {
    #[error("the program has undefined behaviour: trap {0} in the reference interpreter")]
    Trap(String),
    #[error("the reference interpreter exceeded its limits ({0})")]
    TooLong(String),
    #[error("the reference interpreter failed: {0}")]
    Internal(String),
}

/// One program, parsed and analysed, with its standard input.
#[derive(Clone, Debug)]
pub struct Subject {
    /// The file name used in diagnostics and trap locations.
    pub name: String,
    pub source: String,
    pub stdin: Vec<u8>,
    pub program: hir::Program,
    pub lines: LineIndex,
}

impl Subject {
    /// Parses and analyses `source`; a program the front end rejects is a
    /// [`FailureKind::FrontendError`] whose detail is the first diagnostic's headline.
    pub fn parse(name: &str, source: &str, stdin: &[u8]) -> Result<Subject, Failure> {
        let program = frontend::compile_source(name, source).map_err(|e| {
            let text = e.to_string();
            Failure::new(FailureKind::FrontendError, Stage::Frontend, text.lines().next().unwrap_or_default())
        })?;
        Ok(Subject { name: name.into(), source: source.into(), stdin: stdin.into(), program, lines: LineIndex::new(source) })
    }

    /// A generated program: its tree is analysed directly (no second parse); `source` is its
    /// printed form, which the tree's spans point into.
    pub fn from_ast(name: &str, unit: &CompUnit, source: &str, stdin: &[u8]) -> Result<Subject, Failure> {
        let lines = LineIndex::new(source);
        let program = frontend::analyze(unit, &lines).map_err(|diagnostics| {
            let error = frontend::FrontendError { file_name: name.into(), source: source.into(), diagnostics };
            Failure::new(FailureKind::FrontendError, Stage::Frontend, error.to_string().lines().next().unwrap_or_default())
        })?;
        Ok(Subject { name: name.into(), source: source.into(), stdin: stdin.into(), program, lines })
    }

    /// Reads `source` (and `stdin`, when given) from files.
    pub fn read(source: &Path, stdin: Option<&Path>) -> Result<Subject, String> {
        let bytes = std::fs::read(source).map_err(|e| format!("cannot read {}: {e}", source.display()))?;
        let input = match stdin {
            Some(p) => std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?,
            None => Vec::new(),
        };
        let name = source.display().to_string();
        Subject::parse(&name, &frontend::source_from_bytes(&bytes), &input).map_err(|f| f.detail)
    }

    /// The reference interpreter's run (a trap is part of the outcome; running out of time is
    /// an error).
    pub fn reference(&self, config: &RefConfig) -> Result<Outcome, RefError> {
        refinterp::run(&self.program, &self.lines, &self.stdin, config)
    }

    /// The truth: the reference interpreter's outcome within `limits`, refusing programs it
    /// traps on or cannot finish.
    pub fn truth(&self, limits: &Limits) -> Result<Outcome, Rejected> {
        let outcome = match self.reference(&limits.truth_config()) {
            Ok(outcome) => outcome,
            Err(RefError::TimedOut { steps }) => return Err(Rejected::TooLong(format!("timed out after {steps} steps"))),
            Err(e) => return Err(Rejected::Internal(e.to_string())),
        };
        match &outcome.trap {
            Some(trap) if trap.kind.is_resource_limit() => Err(Rejected::TooLong(trap.kind.to_string())),
            Some(trap) => Err(Rejected::Trap(format!("{} {}", trap.kind, trap.detail).trim_end().to_string())),
            None => Ok(outcome),
        }
    }
}

/// A subject with what every run of it must produce.
#[derive(Clone, Debug)]
pub struct Case {
    pub subject: Subject,
    pub expected: Expected,
}

impl Case {
    /// A subject judged against its reference-interpreter truth.
    pub fn with_truth(subject: Subject, limits: &Limits) -> Result<Case, Rejected> {
        let truth = subject.truth(limits)?;
        Ok(Case { subject, expected: Expected::Outcome(truth) })
    }

    /// The reference outcome, for a case judged against the truth.
    pub fn truth(&self) -> Option<&Outcome> {
        match &self.expected {
            Expected::Outcome(o) => Some(o),
            Expected::OutFile(_) => None,
        }
    }
}
