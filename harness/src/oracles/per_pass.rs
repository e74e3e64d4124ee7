//! The per-pass oracle: the lowered module and the module after every pass of a pipeline run
//! in the IR interpreter and are judged against the expected outcome; the first that goes
//! wrong names the culprit — lowering, or the pass that just ran. The IR verifier runs after
//! every pass too (a rejection blames the pass that produced the IR).
//!
//! This is the one per-pass oracle: triage's bisection and the `differential` fuzz target
//! both use it. Unchanged IR is not run again (the interpreter is deterministic), so the
//! cost is one compilation plus one interpretation per pass that changed the module.
//!
//! Budgets: every interpretation gets the wall-clock limit, and optionally a step budget (the
//! fuzz target derives one from the reference run, generous enough that only a pass that made
//! the program loop forever, or much slower, exhausts it — a timeout).

use std::time::Duration;

use sysyc::config::Config;
use sysyc::ir::Module;
use sysyc::ir::interp::InterpConfig;
use sysyc::passes::PassInfo;

use crate::failure::{Failure, FailureKind, Stage, judge};
use crate::stages;
use crate::subject::Case;

/// Limits of the interpretations.
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

/// Runs the pipeline of `config` on `case`, judging the IR after lowering and after every
/// pass that changed it; `None` when every step is right.
pub fn first_failure(case: &Case, config: &Config, budget: Budget) -> Option<PassFailure> {
    let judge_module = |module: &Module| -> Result<(), Failure> {
        let outcome = match budget.max_steps {
            None => stages::interpret(module, &case.subject.stdin, budget.timeout)?,
            Some(steps) => stages::caught(Stage::IrInterp, || {
                sysyc::driver::interpret(module, &case.subject.stdin, &InterpConfig { max_steps: steps, ..InterpConfig::default() })
            })?
            .map(|r| r.outcome)
            .map_err(|e| Failure::new(FailureKind::VerifierFailure, Stage::IrInterp, e.to_string()))?,
        };
        judge(&case.expected, &outcome, Stage::IrInterp)
    };
    let lowered = match stages::lower(&case.subject) {
        Ok(m) => m,
        Err(failure) => return Some(PassFailure { pass: None, failure, before: String::new(), after: String::new() }),
    };
    let mut before = sysyc::ir::print_module(&lowered);
    if let Err(failure) = judge_module(&lowered) {
        return Some(PassFailure { pass: None, failure, before: String::new(), after: before });
    }
    let mut found: Option<PassFailure> = None;
    let mut observed = 0usize;
    let mut observer = |position: usize, pass: &'static PassInfo, module: &Module| {
        observed = position + 1;
        if found.is_some() {
            return;
        }
        let after = sysyc::ir::print_module(module);
        if after == before {
            return;
        }
        match judge_module(module) {
            Err(failure) => {
                found = Some(PassFailure { pass: Some((position, pass.name)), failure, before: before.clone(), after })
            }
            Ok(()) => before = after,
        }
    };
    let verified = Config { verify_each: true, ..config.clone() };
    let result = stages::optimise(&lowered, &verified, Some(&mut observer));
    if found.is_some() {
        return found;
    }
    // The verifier (or a panic) stopped the pipeline in the pass after the last observed one.
    result.err().map(|failure| {
        let position = observed.min(config.pipeline.len().saturating_sub(1));
        let name = config.pipeline.get(position).map_or("?", |p| p.name);
        PassFailure { pass: Some((position, name)), failure, before, after: String::new() }
    })
}
