//! The per-pass oracle: the reference interpreter runs the source once; the IR interpreter
//! runs the lowered module and the module after every pass of the pipeline. The first
//! module whose behaviour (stdout, exit status, trap) differs names the culprit: lowering, or
//! the pass that just ran. The verifier runs after every pass too.
//!
//! Budgets: the reference interpreter gets [`PerPassConfig::ref_steps`]; a program that traps
//! or exhausts it is skipped (the generator promises neither, so a skip rate above zero is a
//! generator finding, which the callers count). The IR interpreter gets a step budget scaled
//! from the reference run, generous enough that only a pass that made the program loop
//! forever (or much slower) exhausts it — reported as `step-limit`.

use super::{Checked, Violation};
use crate::refinterp::{self, RefConfig};
use sysyc::driver::{self, CompileError, CompileOptions};
use sysyc::frontend::{self, LineIndex};
use sysyc::ir::Module;
use sysyc::ir::interp::InterpConfig;
use sysyc::passes::PassInfo;
use sysyc::runtime::Outcome;

/// Budgets of one check.
#[derive(Clone, Copy, Debug)]
pub struct PerPassConfig {
    /// Reference-interpreter steps before the program is skipped.
    pub ref_steps: u64,
    /// IR-interpreter steps allowed per reference step (plus [`PerPassConfig::ir_slack`]).
    pub ir_steps_per_ref_step: u64,
    pub ir_slack: u64,
}

impl Default for PerPassConfig {
    fn default() -> PerPassConfig {
        PerPassConfig {
            ref_steps: 2_000_000,
            ir_steps_per_ref_step: 200,
            ir_slack: 1_000_000,
        }
    }
}

/// Checks `source` (with `stdin`) under `pipeline`.
pub fn check(
    source: &str,
    stdin: &[u8],
    pipeline: &[&'static PassInfo],
    config: &PerPassConfig,
) -> Result<Checked, Violation> {
    let options = CompileOptions { pipeline: pipeline.to_vec(), ..CompileOptions::default() };
    check_with(source, stdin, &options, config)
}

/// [`check`] with full compiler options (e.g. injected faults); the verifier always runs.
pub fn check_with(
    source: &str,
    stdin: &[u8],
    options: &CompileOptions,
    config: &PerPassConfig,
) -> Result<Checked, Violation> {
    let Ok(program) = frontend::compile_source("per-pass.sy", source) else {
        return Ok(Checked::Skipped);
    };
    let lines = LineIndex::new(source);
    let ref_config = RefConfig {
        max_steps: config.ref_steps,
        ..RefConfig::default()
    };
    let truth = match refinterp::run(&program, &lines, stdin, &ref_config) {
        Ok(outcome) if outcome.trap.is_none() => outcome,
        _ => return Ok(Checked::Skipped),
    };
    let interp_config = InterpConfig {
        max_steps: truth
            .steps
            .saturating_mul(config.ir_steps_per_ref_step)
            .saturating_add(config.ir_slack),
        ..InterpConfig::default()
    };
    let lowered = driver::lower_source("per-pass.sy", source).map_err(|e| Violation {
        kind: "frontend",
        after_pass: None,
        detail: e.to_string(),
    })?;
    judge(&truth, &lowered, stdin, &interp_config).map_err(|(kind, detail)| Violation {
        kind,
        after_pass: None,
        detail: format!("lowering: {detail}"),
    })?;

    let options = CompileOptions {
        verify_each: true,
        ..options.clone()
    };
    let mut first: Option<Violation> = None;
    let mut observe = |index: usize, pass: &'static PassInfo, module: &Module| {
        if first.is_none() {
            first = judge(&truth, module, stdin, &interp_config)
                .err()
                .map(|(kind, detail)| Violation {
                    kind,
                    after_pass: Some((index, pass.name)),
                    detail,
                });
        }
    };
    let compiled = driver::compile_ir_observed("per-pass.sy", source, &options, Some(&mut observe));
    if let Some(violation) = first {
        return Err(violation);
    }
    match compiled {
        Ok(_) => Ok(Checked::Passed),
        Err(CompileError::Pipeline(e)) => Err(Violation {
            kind: "verifier",
            after_pass: None,
            detail: e.to_string(),
        }),
        Err(e) => Err(Violation {
            kind: "compile",
            after_pass: None,
            detail: e.to_string(),
        }),
    }
}

/// Runs `module` and compares it with the truth: `Err((kind, detail))` on a difference.
fn judge(
    truth: &Outcome,
    module: &Module,
    stdin: &[u8],
    config: &InterpConfig,
) -> Result<(), (&'static str, String)> {
    let result =
        driver::interpret(module, stdin, config).map_err(|e| ("interp-error", e.to_string()))?;
    let got = result.outcome;
    if let Some(trap) = &got.trap {
        let kind = if trap.kind == sysyc::runtime::TrapKind::StepLimit {
            "step-limit"
        } else {
            "trap"
        };
        return Err((kind, format!("{} {}", trap.kind, trap.detail)));
    }
    if got.stdout != truth.stdout {
        return Err((
            "wrong-output",
            crate::conform::first_difference(&truth.stdout, &got.stdout),
        ));
    }
    if got.exit_status != truth.exit_status {
        return Err((
            "wrong-exit-status",
            format!(
                "expected {:?}, got {:?}",
                truth.exit_status, got.exit_status
            ),
        ));
    }
    Ok(())
}
