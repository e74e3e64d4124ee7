//! `harness bisect`: which pass (or back-end stage) miscompiles a program, the smallest
//! pipeline that still does, and the exact (pass, function) step.
//!
//! # Design
//!
//! 1. **Per-pass oracle** ([`sysy_check::executor::each_pass`]): one compilation with an observer;
//!    after lowering and after every pass that changed the printed IR, the module runs in the
//!    IR interpreter and is judged against the reference outcome. The first pass after which
//!    the verdict is a failure is the culprit, and the IR before and after it is kept for a
//!    diff.
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
//! "Fails the same way" means the same [`FailureKind`] in the same [`Stage`] (a wrong output
//! of the IR interpreter is not the same failure as a wrong output of the binary). Every
//! check is deterministic, so the report is too.

use std::fmt::Write as _;
use std::time::Duration;

use sysyc::config::Config;
use sysyc::isa::arm::BackendStage;
use sysyc::passes::PassInfo;
use sysyc::runtime::Outcome;

use super::case::FailureCase;
use super::ddmin::ddmin;
use sysy_check::failure::{Failure, FailureKind, Stage};
use sysy_check::executor::watch::Watch;
use sysy_check::executor::{Executor, Settings};
use sysy_check::executor::each_pass::{self as per_pass, Budget};
use sysy_check::qemu::Runner;
use sysy_check::steps;
use sysy_check::subject::{Case, Limits};

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
            Culprit::Pass { position, name } => write!(f, "pass `{name}` (position {position} of the pipeline)"),
            Culprit::BackendStages(stages) => write!(f, "back-end stage `{}`", stages.join("` + `")),
            Culprit::Backend => f.write_str(
                "back end: instruction selection / register allocation / emission (wrong with every optional stage off)",
            ),
            Culprit::NotReproduced => f.write_str("none (the failure does not reproduce)"),
        }
    }
}

/// Where a failure shows and who causes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    pub stage: Stage,
    pub kind: FailureKind,
    pub culprit: Culprit,
}

impl Located {
    /// Whether `failure` is this failure again (same kind, same stage).
    pub fn same(&self, failure: &Failure) -> bool {
        failure.kind == self.kind && failure.stage == self.stage
    }
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
    /// The failure as the culprit's check saw it.
    pub failure: Option<Failure>,
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
    pub fn render(&self, config: &Config) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "configuration: {config}");
        let Some(located) = &self.located else {
            let _ = writeln!(s, "culprit: {}", Culprit::NotReproduced);
            return s;
        };
        let _ = writeln!(s, "failure: {} in the {} stage", located.kind, located.stage);
        if let Some(f) = &self.failure {
            let _ = writeln!(s, "detail: {}", f.detail);
        }
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
            let _ = writeln!(s, "minimal pipeline: {}", if p.is_empty() { "(none)".to_string() } else { p.join(",") });
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

/// A unified line diff.
pub fn unified_diff(before: &str, after: &str) -> String {
    similar::TextDiff::from_lines(before, after).unified_diff().context_radius(3).header("before", "after").to_string()
}

/// How triage runs its checks: the runs' time limit, and qemu-arm for the binary (`None`:
/// the IR interpreter only). Every check is the check executor's, with nothing cached or
/// overlapped: the campaign's checks replayed one configuration at a time.
#[derive(Clone, Copy)]
pub struct Checks<'a> {
    pub timeout: Duration,
    pub runner: Option<&'a Runner>,
    /// Beaten before each check, from whichever thread runs it: tells the campaign's watchdog
    /// that a long triage is making progress.
    pub watch: &'a dyn Watch,
}

impl Checks<'_> {
    /// Checks the case compiled under `config` — always verified, IR and machine code — in
    /// `stage`'s way: the IR interpreter for a failure found in the IR, the binary otherwise.
    /// `Err` when the harness cannot decide.
    pub fn check(&self, case: &Case, config: &Config, stage: Stage) -> Result<Result<(), Failure>, String> {
        let binary = !matches!(stage, Stage::Lowering | Stage::Pipeline | Stage::IrInterp);
        if binary && self.runner.is_none() {
            return Err("running the binary needs qemu-arm".into());
        }
        let limits = Limits { timeout: self.timeout, ..Limits::GENERATED };
        let executor = Executor::new(Settings { interpret: !binary, ..Settings::plain(limits, binary) }, self.runner.cloned());
        let config = Config { verify_each: true, ..config.clone() };
        let result = match executor.check(case, std::slice::from_ref(&config), 0, self.watch) {
            Ok(mut checked) => checked.checks.pop().map_or(Ok(()), |check| check.verdict),
            Err(lowering) => Err(lowering),
        };
        match result {
            Err(f) if f.kind == FailureKind::HarnessError => Err(f.detail),
            r => Ok(r),
        }
    }

    /// Tells the watchdog that the triage is making progress (see [`Checks::watch`]).
    fn beat(&self) {
        self.watch.beat();
    }

    /// Whether `config` makes the case fail like `located`.
    fn fails_like(&self, case: &Case, config: &Config, located: &Located) -> bool {
        matches!(self.check(case, config, located.stage), Ok(Err(f)) if located.same(&f))
    }
}

/// Names the culprit among the optional back-end stages `enabled` for `failure`; `check`
/// runs the binary with the given stages and returns how it failed.
pub fn bisect_stages(
    enabled: &[BackendStage],
    failure: &Failure,
    mut check: impl FnMut(&[BackendStage]) -> Result<Result<(), Failure>, String>,
) -> Result<Culprit, String> {
    let same = |r: &Result<(), Failure>| matches!(r, Err(f) if f.kind == failure.kind && f.stage == failure.stage);
    if same(&check(&[])?) {
        return Ok(Culprit::Backend);
    }
    let indices: Vec<usize> = (0..enabled.len()).collect();
    let mut error = None;
    let (min, _) = ddmin(&indices, |sub| {
        let stages: Vec<BackendStage> = sub.iter().map(|&i| enabled[i]).collect();
        match check(&stages) {
            Ok(r) => same(&r),
            Err(e) => {
                error.get_or_insert(e);
                false
            }
        }
    });
    if let Some(e) = error {
        return Err(e);
    }
    Ok(Culprit::BackendStages(min.iter().map(|&i| enabled[i].name()).collect()))
}

/// Where the failure of `config` shows and who causes it (with the failure itself and, for a
/// pass culprit, the IR around it); `None` when it does not reproduce.
pub fn locate(case: &Case, config: &Config, checks: &Checks<'_>) -> Result<Option<(Located, Failure, Option<IrDiff>)>, String> {
    if let Some(pf) = per_pass::first_failure(case, config, Budget { timeout: checks.timeout, max_steps: None }) {
        if pf.failure.kind == FailureKind::HarnessError {
            return Err(pf.failure.detail);
        }
        let culprit = match pf.pass {
            None => Culprit::Lowering,
            Some((position, name)) => Culprit::Pass { position, name },
        };
        let ir_diff = IrDiff { diff: unified_diff(&pf.before, &pf.after), before: pf.before, after: pf.after };
        let located = Located { stage: pf.failure.stage, kind: pf.failure.kind, culprit };
        return Ok(Some((located, pf.failure, Some(ir_diff))));
    }
    if checks.runner.is_none() {
        return Ok(None);
    }
    let Err(failure) = checks.check(case, config, Stage::Qemu)? else {
        return Ok(None);
    };
    let enabled: Vec<BackendStage> = config.stages.iter().copied().collect();
    let culprit = bisect_stages(&enabled, &failure, |stages| checks.check(case, &config.with_stages(stages.iter().copied()), Stage::Qemu))?;
    let located = Located { stage: failure.stage, kind: failure.kind, culprit };
    Ok(Some((located, failure, None)))
}

/// Whether the case still fails like `located` (the reducer's test): same stage, same kind,
/// same culprit — checked more cheaply than [`locate`] for back-end culprits (the
/// configuration fails, and passes with the culprit stages off, or still fails with every
/// stage off for the mandatory back end).
pub fn still_fails(case: &Case, config: &Config, checks: &Checks<'_>, located: &Located) -> bool {
    match &located.culprit {
        Culprit::Lowering | Culprit::Pass { .. } => {
            // The per-pass oracle, not `Checks::check`: beat here, or the reduction of a pass
            // culprit would look hung to the watchdog once it runs longer than a step may.
            checks.beat();
            per_pass::first_failure(case, config, Budget { timeout: checks.timeout, max_steps: None }).is_some_and(|pf| {
                let culprit = match pf.pass {
                    None => Culprit::Lowering,
                    Some((position, name)) => Culprit::Pass { position, name },
                };
                located.same(&pf.failure) && culprit == located.culprit
            })
        }
        Culprit::BackendStages(stages) => {
            let on: Vec<BackendStage> = stages.iter().filter_map(|s| BackendStage::from_name(s)).collect();
            checks.fails_like(case, &config.with_stages(on), located) && !checks.fails_like(case, &config.with_stages([]), located)
        }
        Culprit::Backend => checks.fails_like(case, config, located) && checks.fails_like(case, &config.with_stages([]), located),
        Culprit::NotReproduced => false,
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

/// Bisects a failure: see the module documentation. `Err` when the program cannot be judged
/// (undefined behaviour, too long) or the harness cannot run the checks.
pub fn bisect(case: &FailureCase, checks: &Checks<'_>, limits: &Limits) -> Result<BisectReport, String> {
    let judged = Case::with_truth(case.subject.clone(), limits).map_err(|e| e.to_string())?;
    bisect_with(&judged, &case.config, checks)
}

/// [`bisect`] of a case with its truth.
pub fn bisect_with(case: &Case, config: &Config, checks: &Checks<'_>) -> Result<BisectReport, String> {
    let expected = case.truth().cloned().unwrap_or_default();
    let mut compilations = 1;
    let Some((located, failure, ir_diff)) = locate(case, config, checks)? else {
        return Ok(BisectReport {
            expected,
            located: None,
            failure: None,
            ir_diff: None,
            minimal_pipeline: None,
            step: None,
            backend_function: None,
            compilations,
        });
    };
    let fails = |c: &Config| checks.fails_like(case, c, &located);
    let (min, calls) = match located.culprit {
        // Lowering is wrong with any pipeline; nothing to minimise.
        Culprit::Lowering => (Vec::new(), 0),
        _ => minimal_pipeline(&config.pipeline, |p| fails(&config.with_pipeline(p.to_vec()))),
    };
    compilations += calls;
    let (step, calls) = opt_bisect_step(case, config, &fails)?;
    compilations += calls;
    let backend_function = match &located.culprit {
        Culprit::BackendStages(stages) => {
            let (function, calls) = stage_function(case, config, stages, &fails)?;
            compilations += calls;
            function
        }
        _ => None,
    };
    Ok(BisectReport {
        expected,
        located: Some(located),
        failure: Some(failure),
        ir_diff,
        minimal_pipeline: Some(min.iter().map(|p| p.name).collect()),
        step,
        backend_function,
        compilations,
    })
}

/// The smallest function (by IR instructions after the pipeline) in which running `stages`
/// alone makes the case fail like before, and the number of compilations.
pub fn stage_function(
    case: &Case,
    config: &Config,
    stages: &[&'static str],
    fails: &dyn Fn(&Config) -> bool,
) -> Result<(Option<String>, usize), String> {
    let lowered = steps::lower(&case.subject).map_err(|f| f.to_string())?;
    let (module, _) = steps::optimise(&lowered, config, None).map_err(|f| format!("cannot compile to list the functions: {f}"))?;
    let mut functions: Vec<(usize, String)> = module.funcs().map(|(_, f)| (f.inst_count(), f.name.clone())).collect();
    functions.sort();
    let on: Vec<BackendStage> = stages.iter().filter_map(|s| BackendStage::from_name(s)).collect();
    let mut calls = 1;
    for (_, name) in functions {
        let only_here = Config { stages_only_in: Some([name.clone()].into_iter().collect()), ..config.with_stages(on.iter().copied()) };
        calls += 1;
        if fails(&only_here) {
            return Ok((Some(name), calls));
        }
    }
    Ok((None, calls))
}

/// Binary search over `--opt-bisect-limit` (see the module documentation): the smallest
/// limit for which `fails` holds, as the step of the pipeline's log, and the number of
/// compilations. `None` when the failure needs no step at all (or, not monotonic, does not
/// show with every step).
pub fn opt_bisect_step(case: &Case, config: &Config, fails: &dyn Fn(&Config) -> bool) -> Result<(Option<OptStep>, usize), String> {
    let lowered = steps::lower(&case.subject).map_err(|f| f.to_string())?;
    // The log is only the list of steps: compiled without the verifier, so that a failure
    // the verifier reports (invalid IR after some pass) still has a log to search.
    let logged = Config { opt_bisect_limit: Some(u64::MAX), verify_each: false, ..config.clone() };
    let (_, report) = steps::optimise(&lowered, &logged, None).map_err(|f| format!("cannot compile for the step log: {f}"))?;
    let total = report.steps;
    let mut calls = 1;
    let mut at = |limit: u64| {
        calls += 1;
        fails(&Config { opt_bisect_limit: Some(limit), ..config.clone() })
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
    let step = report.bisect_log.iter().find(|s| s.index == hi).map(|s| OptStep { index: s.index, pass: s.pass, function: s.function.clone() });
    Ok((step, calls))
}
