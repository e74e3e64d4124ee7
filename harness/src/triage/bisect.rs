//! `harness bisect`: which pass (or back-end stage) miscompiles a program, the smallest
//! pipeline that still does, and the exact (pass, function) step.
//!
//! # Design
//!
//! 1. **Per-pass oracle** ([`per_pass`]): one compilation with an observer; after lowering
//!    and after every pass that changed the printed IR, the module runs in the IR
//!    interpreter and is judged against the reference outcome. The first pass after which
//!    the verdict is a failure is the culprit, and the IR before and after it is kept for a
//!    diff. Unchanged IR is not re-run (the interpreter is deterministic), so the cost is
//!    one compilation plus one interpretation per changing pass.
//! 2. **Back end** ([`bisect_stages`]): when the IR is right after the whole pipeline but
//!    the ARM binary is wrong, the optional back-end stages are the suspects. With all of
//!    them off and the binary still wrong, the culprit is the mandatory back end (instruction
//!    selection, register allocation or emission); otherwise `ddmin` finds the minimal set
//!    of stages that must be on for the failure — usually one stage.
//!    For a stage culprit, the function: the stages are switched on in one function at a
//!    time (the others get the mandatory back end alone), smallest function first; the
//!    first whose binary fails the same way is the function the stage miscompiles.
//! 3. **Minimal pipeline** ([`minimal_pipeline`]): `ddmin` over pipeline positions with
//!    "fails with the same kind at the same level" as the test — an interaction shows up
//!    as two passes ("A then B").
//! 4. **Opt-bisect step** ([`opt_bisect_step`]): binary search for the smallest
//!    `opt_bisect_limit` N for which the original pipeline fails; step N of the pipeline's
//!    bisect log (as `sysyc --opt-bisect-limit=N` prints it) names the pass and function.
//!    Assumes monotonicity, as any bisection does; the step found is one where running one
//!    more step turns a passing compilation into a failing one.
//!
//! Every check is deterministic, so the report is too.

use std::fmt::Write as _;

use sysyc::driver::{self, CompileOptions};
use sysyc::ir::{Module, print_module};
use sysyc::isa::arm::BackendOptions;
use sysyc::passes::PassInfo;
use sysyc::runtime::Outcome;

use super::case::{BuildConfig, FailureCase, only_stages};
use super::ddmin::ddmin;
use super::oracle::{FailureKind, Level, Oracle, OracleSettings};
use crate::qemu::Qemu;

/// What is to blame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Culprit {
    /// The IR is already wrong before any pass: lowering.
    Lowering,
    /// A pass of the pipeline, by position (0-based) and name.
    Pass { position: usize, name: &'static str },
    /// The binary is wrong only with these optional back-end stages on (all of them needed).
    BackendStages(Vec<&'static str>),
    /// The binary is wrong even with every optional back-end stage off: instruction
    /// selection, register allocation or emission.
    Backend,
    /// Neither the IR nor the binary differs from the reference.
    NotReproduced,
}

impl std::fmt::Display for Culprit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Culprit::Lowering => f.write_str("lowering (IR wrong before any pass)"),
            Culprit::Pass { position, name } => {
                write!(f, "pass `{name}` (position {position} of the pipeline)")
            }
            Culprit::BackendStages(stages) => write!(f, "back-end stage `{}`", stages.join("` + `")),
            Culprit::Backend => f.write_str(
                "back end: instruction selection / register allocation / emission \
                 (wrong with every optional stage off)",
            ),
            Culprit::NotReproduced => f.write_str("none (the failure does not reproduce)"),
        }
    }
}

/// Where a failure shows and who causes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    pub level: Level,
    pub kind: FailureKind,
    pub culprit: Culprit,
}

/// The IR around the culprit pass.
#[derive(Clone, Debug)]
pub struct IrDiff {
    pub before: String,
    pub after: String,
    /// Unified diff of `before` → `after`.
    pub diff: String,
}

/// An opt-bisect step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptStep {
    /// 1-based, as `--opt-bisect-limit` counts.
    pub index: u64,
    pub pass: &'static str,
    pub function: String,
}

/// Everything `harness bisect` finds.
#[derive(Clone, Debug)]
pub struct BisectReport {
    pub expected: Outcome,
    /// `None` when the failure does not reproduce.
    pub located: Option<Located>,
    pub ir_diff: Option<IrDiff>,
    /// The 1-minimal failing sub-pipeline.
    pub minimal_pipeline: Option<Vec<&'static str>>,
    pub step: Option<OptStep>,
    /// For a back-end stage culprit: the smallest function in which the stages alone
    /// reproduce the failure (`None` when only several functions together do).
    pub backend_function: Option<String>,
    /// Compilations made: one for the per-pass oracle, plus those of pipeline minimisation
    /// and opt-bisect (back-end stage bisection's are not counted).
    pub compilations: usize,
}

impl BisectReport {
    pub fn culprit(&self) -> Culprit {
        self.located.as_ref().map_or(Culprit::NotReproduced, |l| l.culprit.clone())
    }

    /// The human-readable report (IR diff included).
    pub fn render(&self, config: &BuildConfig) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "pipeline: {}", none_if_empty(&config.pipeline_spec()));
        let _ = writeln!(s, "backend stages: {}", config.stages_spec());
        let Some(located) = &self.located else {
            let _ = writeln!(s, "culprit: {}", Culprit::NotReproduced);
            return s;
        };
        let _ = writeln!(s, "failure: {} in the {}", located.kind, located.level);
        let _ = writeln!(s, "culprit: {}", located.culprit);
        if let Culprit::BackendStages(_) = located.culprit {
            match &self.backend_function {
                Some(f) => {
                    let _ = writeln!(s, "function: {f} (the stage in this function alone reproduces the failure)");
                }
                None => {
                    let _ = writeln!(s, "function: none alone (the stage must run in several functions)");
                }
            }
        }
        if let Some(p) = &self.minimal_pipeline {
            let _ = writeln!(s, "minimal pipeline: {}", none_if_empty(&p.join(",")));
        }
        match &self.step {
            Some(step) => {
                let _ = writeln!(
                    s,
                    "opt-bisect step: {} ({} on function {}); reproduce with --opt-bisect-limit={}",
                    step.index, step.pass, step.function, step.index
                );
            }
            None => {
                let _ = writeln!(s, "opt-bisect step: none (fails without any pass step)");
            }
        }
        let _ = writeln!(s, "compilations: {}", self.compilations);
        if let Some(d) = &self.ir_diff {
            let _ = writeln!(s, "--- IR diff across the culprit ---");
            s.push_str(&d.diff);
        }
        s
    }
}

fn none_if_empty(s: &str) -> &str {
    if s.is_empty() { "(none)" } else { s }
}

/// The result of the per-pass oracle.
#[derive(Clone, Debug)]
pub struct PerPass {
    /// The culprit and failure kind, if the IR goes wrong.
    pub failure: Option<(Culprit, FailureKind)>,
    pub ir_diff: Option<IrDiff>,
}

/// Runs the pipeline of `options` once, judging the IR after lowering and after every pass
/// that changed it (see the module documentation).
pub fn per_pass(oracle: &Oracle, options: &CompileOptions) -> PerPass {
    let mut module: Module = match driver::lower_source(&oracle.file_name, &oracle.source) {
        Ok(m) => m,
        // The oracle accepted the program, so the front end does too; a failure is a bug.
        Err(_) => {
            return PerPass { failure: Some((Culprit::Lowering, FailureKind::InternalError)), ir_diff: None };
        }
    };
    let mut before = print_module(&module);
    if let Some(kind) = oracle.judge_module(&module) {
        let ir_diff = IrDiff { before: String::new(), diff: unified_diff("", &before), after: before };
        return PerPass { failure: Some((Culprit::Lowering, kind)), ir_diff: Some(ir_diff) };
    }
    let mut found: Option<(usize, &'static str, FailureKind, IrDiff)> = None;
    let mut observed = 0usize;
    let mut observer = |position: usize, pass: &'static PassInfo, m: &Module| {
        observed = position + 1;
        if found.is_some() {
            return;
        }
        let after = print_module(m);
        if after == before {
            return;
        }
        match oracle.judge_module(m) {
            Some(kind) => {
                let diff = unified_diff(&before, &after);
                found = Some((position, pass.name, kind, IrDiff { before: before.clone(), after, diff }));
            }
            None => before = after,
        }
    };
    let result = driver::optimise(&mut module, options, Some(&mut observer));
    if let Some((position, name, kind, diff)) = found {
        return PerPass { failure: Some((Culprit::Pass { position, name }, kind)), ir_diff: Some(diff) };
    }
    if result.is_err() {
        // The verifier rejected the IR after the pass following the last observed one.
        let position = observed.min(options.pipeline.len().saturating_sub(1));
        let name = options.pipeline.get(position).map_or("?", |p| p.name);
        return PerPass {
            failure: Some((Culprit::Pass { position, name }, FailureKind::InternalError)),
            ir_diff: None,
        };
    }
    PerPass { failure: None, ir_diff: None }
}

/// A unified line diff.
pub fn unified_diff(before: &str, after: &str) -> String {
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header("before", "after")
        .to_string()
}

/// Names the culprit among the optional back-end stages `enabled` for a failure of `kind`;
/// `check` runs the binary with the given stages and returns its verdict.
pub fn bisect_stages(
    enabled: &[&'static str],
    kind: FailureKind,
    mut check: impl FnMut(&BackendOptions) -> Result<Option<FailureKind>, String>,
) -> Result<Culprit, String> {
    if check(&only_stages(&[]))? == Some(kind) {
        return Ok(Culprit::Backend);
    }
    let indices: Vec<usize> = (0..enabled.len()).collect();
    let mut error = None;
    let (min, _) = ddmin(&indices, |sub| {
        let stages: Vec<&'static str> = sub.iter().map(|&i| enabled[i]).collect();
        match check(&only_stages(&stages)) {
            Ok(v) => v == Some(kind),
            Err(e) => {
                error.get_or_insert(e);
                false
            }
        }
    });
    if let Some(e) = error {
        return Err(e);
    }
    Ok(Culprit::BackendStages(min.iter().map(|&i| enabled[i]).collect()))
}

/// Where the failure of `config` shows and who causes it; `None` when it does not reproduce.
/// Needs `qemu` only when the IR is right.
pub fn locate(
    oracle: &Oracle,
    config: &BuildConfig,
    qemu: Option<&Qemu>,
) -> Result<(Option<Located>, Option<IrDiff>), String> {
    let options = config.options();
    let pp = per_pass(oracle, &options);
    if let Some((culprit, kind)) = pp.failure {
        return Ok((Some(Located { level: Level::Ir, kind, culprit }), pp.ir_diff));
    }
    let Some(qemu) = qemu else {
        return Ok((None, None));
    };
    let Some(kind) = oracle.check_binary(qemu, &options)? else {
        return Ok((None, None));
    };
    let culprit = bisect_stages(&config.enabled_stages(), kind, |backend| {
        oracle.check_binary(qemu, &CompileOptions { backend: backend.clone(), ..options.clone() })
    })?;
    Ok((Some(Located { level: Level::Binary, kind, culprit }), None))
}

/// Whether the program of `oracle` still fails like `located` (the reducer's test): same
/// level, same kind, same culprit — checked more cheaply than [`locate`] for back-end
/// culprits (the configuration fails, and passes with the culprit stages off, or still fails
/// with every stage off for the mandatory back end).
pub fn still_fails(
    oracle: &Oracle,
    config: &BuildConfig,
    qemu: Option<&Qemu>,
    located: &Located,
) -> bool {
    let options = config.options();
    let pp = per_pass(oracle, &options);
    match located.level {
        Level::Ir => pp.failure == Some((located.culprit.clone(), located.kind)),
        Level::Binary => {
            let Some(qemu) = qemu else { return false };
            if pp.failure.is_some() {
                return false;
            }
            let fails = |backend: &BackendOptions| {
                let options = CompileOptions { backend: backend.clone(), ..options.clone() };
                matches!(oracle.check_binary(qemu, &options), Ok(Some(k)) if k == located.kind)
            };
            match &located.culprit {
                Culprit::BackendStages(stages) => {
                    fails(&only_stages(stages)) && !fails(&only_stages(&[]))
                }
                Culprit::Backend => fails(&config.backend) && fails(&only_stages(&[])),
                _ => false,
            }
        }
    }
}

/// The 1-minimal subsequence of `pipeline` for which `fails` holds, and the number of tests.
pub fn minimal_pipeline(
    pipeline: &[&'static PassInfo],
    mut fails: impl FnMut(&[&'static PassInfo]) -> bool,
) -> (Vec<&'static PassInfo>, usize) {
    let indices: Vec<usize> = (0..pipeline.len()).collect();
    let (min, calls) = ddmin(&indices, |sub| {
        let passes: Vec<&'static PassInfo> = sub.iter().map(|&i| pipeline[i]).collect();
        fails(&passes)
    });
    (min.iter().map(|&i| pipeline[i]).collect(), calls)
}

/// Bisects a failure: see the module documentation.
pub fn bisect(
    case: &FailureCase,
    qemu: Option<&Qemu>,
    settings: &OracleSettings,
) -> Result<BisectReport, String> {
    let oracle = Oracle::new(&case.file_name, &case.source, &case.stdin, settings)
        .map_err(|e| e.to_string())?;
    bisect_with(&oracle, &case.config, qemu)
}

/// [`bisect`] with a ready oracle.
pub fn bisect_with(
    oracle: &Oracle,
    config: &BuildConfig,
    qemu: Option<&Qemu>,
) -> Result<BisectReport, String> {
    let mut compilations = 1;
    let (located, ir_diff) = locate(oracle, config, qemu)?;
    let Some(located) = located else {
        return Ok(BisectReport {
            expected: oracle.expected.clone(),
            located: None,
            ir_diff: None,
            minimal_pipeline: None,
            step: None,
            backend_function: None,
            compilations,
        });
    };
    let (level, kind) = (located.level, located.kind);
    let fails = |options: &CompileOptions| {
        matches!(oracle.check(level, qemu, options), Ok(Some(k)) if k == kind)
    };
    let (min, calls) = match located.culprit {
        // Lowering is wrong with any pipeline; nothing to minimise.
        Culprit::Lowering => (Vec::new(), 0),
        _ => minimal_pipeline(&config.pipeline, |p| fails(&config.options_with(p))),
    };
    compilations += calls;
    let (step, calls) = opt_bisect_step(oracle, &config.options(), &fails)?;
    compilations += calls;
    let backend_function = match (&located.culprit, qemu) {
        (Culprit::BackendStages(stages), Some(qemu)) => {
            let (function, calls) = stage_function(oracle, qemu, &config.options(), stages, kind)?;
            compilations += calls;
            function
        }
        _ => None,
    };
    Ok(BisectReport {
        expected: oracle.expected.clone(),
        located: Some(located),
        ir_diff,
        minimal_pipeline: Some(min.iter().map(|p| p.name).collect()),
        step,
        backend_function,
        compilations,
    })
}

/// The smallest function (by IR instructions after the pipeline) in which running `stages`
/// alone makes the binary fail with `kind`, and the number of compilations.
pub fn stage_function(
    oracle: &Oracle,
    qemu: &Qemu,
    options: &CompileOptions,
    stages: &[&'static str],
    kind: FailureKind,
) -> Result<(Option<String>, usize), String> {
    let (module, _) = driver::compile_ir(&oracle.file_name, &oracle.source, options)
        .map_err(|e| format!("cannot compile to list the functions: {e}"))?;
    let mut functions: Vec<(usize, String)> =
        module.funcs().map(|(_, f)| (f.inst_count(), f.name.clone())).collect();
    functions.sort();
    let mut calls = 1;
    for (_, name) in functions {
        let mut backend = only_stages(stages);
        backend.stage_functions = Some([name.clone()].into_iter().collect());
        calls += 1;
        if oracle.check_binary(qemu, &CompileOptions { backend, ..options.clone() })? == Some(kind) {
            return Ok((Some(name), calls));
        }
    }
    Ok((None, calls))
}

/// Binary search over `--opt-bisect-limit` (see the module documentation): the smallest
/// limit for which `fails` holds, as the step of the pipeline's log, and the number of
/// compilations. `None` when the failure needs no step at all (or, not monotonic, does not
/// show with every step).
pub fn opt_bisect_step(
    oracle: &Oracle,
    options: &CompileOptions,
    fails: &dyn Fn(&CompileOptions) -> bool,
) -> Result<(Option<OptStep>, usize), String> {
    let logged = CompileOptions { log_steps: true, ..options.clone() };
    let (_, report) = driver::compile_ir(&oracle.file_name, &oracle.source, &logged)
        .map_err(|e| format!("cannot compile for the step log: {e}"))?;
    let total = report.steps;
    let mut calls = 1;
    let mut at = |limit: u64| {
        calls += 1;
        fails(&CompileOptions { opt_bisect_limit: Some(limit), ..options.clone() })
    };
    if at(0) || !at(total) {
        return Ok((None, calls));
    }
    // Invariant: limit `lo` passes, limit `hi` fails.
    let (mut lo, mut hi) = (0u64, total);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if at(mid) { hi = mid } else { lo = mid }
    }
    let step = report.bisect_log.iter().find(|s| s.index == hi).map(|s| OptStep {
        index: s.index,
        pass: s.pass,
        function: s.function.clone(),
    });
    Ok((step, calls))
}
