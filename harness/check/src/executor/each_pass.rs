//! The per-pass oracles inside a check ([`super::EachPass`]): the configuration's pipeline
//! runs whole, verified after every pass, and after lowering and after every pass
//! ([`first_failure`] and [`roundtrip_check`] make one check of each: triage's bisection,
//! the `differential` and `ir-roundtrip` fuzz targets)
//!
//! * the IR interpreter's run is judged against the expected outcome when the IR changed
//!   (the interpreter is deterministic, so unchanged IR is not run again): the first step
//!   that goes wrong names the culprit — lowering, or the pass that just ran; a verifier
//!   rejection (or a panic) blames the pass that produced the IR;
//! * the printed IR parses back and prints to the same text (the round trip).
//!
//! The cost is one compilation plus, for the judge, one interpretation per pass that changed
//! the module. Budgets: every interpretation gets the wall-clock limit, and optionally a step
//! budget (the fuzz target derives one from the reference run, generous enough that only a
//! pass that made the program loop forever, or much slower, exhausts it — a timeout).

use std::time::Duration;

use sysyc::config::Config;
use sysyc::ir::interp::InterpConfig;
use sysyc::ir::{Module, parser, printer};
use sysyc::passes::PassInfo;

use super::prefix::{self, Optimised};
use super::watch::Unwatched;
use super::{EachPass, Executor, Settings};
use crate::failure::{Expected, Failure, FailureKind, Stage, judge};
use crate::steps;
use crate::subject::{Case, Limits, Subject};

/// Limits of the per-pass interpretations.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub timeout: Duration,
    /// IR-interpreter steps per run (`None`: the interpreter's own limit).
    pub max_steps: Option<u64>,
}

/// What went wrong first, and where.
#[derive(Clone, Debug)]
pub struct PassFailure {
    /// The pass after which it showed, as (pipeline position, name); `None`: lowering.
    pub pass: Option<(usize, &'static str)>,
    pub failure: Failure,
    /// The printed IR before the culprit (empty for lowering) and after it (empty when the
    /// verifier rejected it).
    pub before: String,
    pub after: String,
}

/// The IR interpreter's run of `module`, judged.
fn judge_ir(module: &Module, case: &Case, budget: Budget) -> Result<(), Failure> {
    let outcome = match budget.max_steps {
        None => steps::interpret(module, &case.subject.stdin, budget.timeout)?,
        Some(max_steps) => steps::caught(Stage::IrInterp, || {
            sysyc::driver::interpret(module, &case.subject.stdin, &InterpConfig { max_steps, ..InterpConfig::speculative_loads() })
        })?
        .map(|r| r.outcome)
        .map_err(|e| Failure::new(FailureKind::VerifierFailure, Stage::IrInterp, e.to_string()))?,
    };
    judge(&case.expected, &outcome, Stage::IrInterp)
}

/// Printed IR `text` parsed and printed again; `Err` with the first differing line.
pub fn roundtrip(text: &str) -> Result<(), String> {
    let parsed = parser::parse_module(text).map_err(|e| format!("the printed IR does not parse: {e}"))?;
    let again = printer::print_module(&parsed);
    if again == text {
        return Ok(());
    }
    let (line, (a, b)) = text
        .lines()
        .zip(again.lines())
        .enumerate()
        .find(|(_, (a, b))| a != b)
        .unwrap_or((text.lines().count().min(again.lines().count()), ("<end>", "<end>")));
    Err(format!("line {}: printed `{a}`, reprinted `{b}`", line + 1))
}

fn roundtrip_failure(text: &str, after: &str) -> Option<Failure> {
    roundtrip(text).err().map(|detail| Failure::new(FailureKind::RoundtripMismatch, Stage::Roundtrip, format!("{after}: {detail}")))
}

/// The pipeline of `config` on `lowered` (verified after every pass) under the oracles of
/// `each`: the optimised IR, or the first step at which an oracle failed.
pub(super) fn optimise(lowered: &Module, case: &Case, config: &Config, each: EachPass) -> Result<Optimised, Box<PassFailure>> {
    let lowering = |failure: Failure, after: String| Box::new(PassFailure { pass: None, failure, before: String::new(), after });
    let mut before = printer::print_module(lowered);
    if each.roundtrip
        && let Some(failure) = roundtrip_failure(&before, "after lowering")
    {
        return Err(lowering(failure, before));
    }
    if let Some(budget) = each.judge
        && let Err(failure) = judge_ir(lowered, case, budget)
    {
        return Err(lowering(failure, before));
    }
    let mut found: Option<PassFailure> = None;
    let mut observed = 0usize;
    let mut observer = |position: usize, pass: &'static PassInfo, module: &Module| {
        observed = position + 1;
        if found.is_some() {
            return;
        }
        let after = printer::print_module(module);
        let at = Some((position, pass.name));
        if each.roundtrip
            && let Some(failure) = roundtrip_failure(&after, &format!("after pass #{position} `{}`", pass.name))
        {
            found = Some(PassFailure { pass: at, failure, before: before.clone(), after });
            return;
        }
        let Some(budget) = each.judge.filter(|_| after != before) else { return };
        match judge_ir(module, case, budget) {
            Err(failure) => found = Some(PassFailure { pass: at, failure, before: before.clone(), after }),
            Ok(()) => before = after,
        }
    };
    let verified = Config { verify_each: true, ..config.clone() };
    let result = prefix::uncached_observed(lowered, &verified, &mut observer);
    if let Some(found) = found {
        return Err(Box::new(found));
    }
    // The verifier (or a panic) stopped the pipeline in the pass after the last observed one.
    result.map_err(|failure| {
        let position = observed.min(config.pipeline.len().saturating_sub(1));
        let name = config.pipeline.get(position).map_or("?", |p| p.name);
        Box::new(PassFailure { pass: Some((position, name)), failure, before, after: String::new() })
    })
}

/// The per-pass oracle alone: runs the pipeline of `config` on `case`, judging the IR after
/// lowering and after every pass that changed it; `None` when every step is right.
pub fn first_failure(case: &Case, config: &Config, budget: Budget) -> Option<PassFailure> {
    let limits = Limits { timeout: budget.timeout, ..Limits::GENERATED };
    let settings = Settings { each_pass: EachPass { judge: Some(budget), roundtrip: false }, ..Settings::plain(limits, false) };
    match Executor::new(settings, None).check(case, std::slice::from_ref(config), 0, &Unwatched) {
        Ok(mut checked) => checked.checks.pop().and_then(|check| check.pass_failure),
        Err(failure) => Some(PassFailure { pass: None, failure, before: String::new(), after: String::new() }),
    }
}

/// The round trip alone: `subject`'s lowered IR and its IR after every pass of `config`
/// print, parse and print to the same text, and the verifier accepts every step.
pub fn roundtrip_check(subject: &Subject, config: &Config) -> Result<(), Failure> {
    // Nothing runs, so nothing is judged: any expected outcome will do.
    let case = Case { subject: subject.clone(), expected: Expected::Outcome(sysyc::runtime::Outcome::default()) };
    let settings = Settings { interpret: false, each_pass: EachPass { judge: None, roundtrip: true }, ..Settings::plain(Limits::GENERATED, false) };
    let mut checked = Executor::new(settings, None).check(&case, std::slice::from_ref(config), 0, &Unwatched)?;
    checked.checks.pop().map_or(Ok(()), |check| check.verdict)
}
