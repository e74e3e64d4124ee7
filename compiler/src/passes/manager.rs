//! Runs a pipeline of registered passes over a module.
//!
//! Beyond calling each pass, the manager provides what debugging and testing a pipeline needs:
//! * `verify_each`: the IR verifier after every pass; the first failure names the pass;
//! * statistics per pipeline position: changed or not, the pass's own counters, instruction
//!   counts before/after, time spent;
//! * an observer called after every pass with the module (`--print-after-all`, and the
//!   harness's per-pass IR-interpreter oracle);
//! * opt-bisect (`--opt-bisect-limit=N`, after LLVM): every (pass, function) application is a
//!   numbered step — module passes count one step per function they ask to transform — and
//!   steps beyond N are skipped. The log of steps names the exact pass and function of any
//!   step, so a miscompile can be pinned to one step by bisecting N.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cranelift_entity::EntityRef;

use super::{Counters, FunctionCx, ModuleCx, PassBody, PassInfo};
use crate::analysis::cache::AnalysisCache;
use crate::analysis::funcinfo::{FuncInfo, FunctionsKey};
use crate::config::Config;
use crate::ir::{FuncRef, Function, Module, Type, Value, verifier};

/// Statistics of one pipeline position.
#[derive(Clone, Debug)]
pub struct PassRunStats {
    pub pass: &'static str,
    pub changed: bool,
    pub counters: Counters,
    pub insts_before: usize,
    pub insts_after: usize,
    pub time: Duration,
}

/// One (pass, function) step of opt-bisect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BisectStep {
    /// 1-based step number.
    pub index: u64,
    pub pass: &'static str,
    pub function: String,
    /// False when the step was beyond the limit and skipped.
    pub ran: bool,
}

#[derive(Clone, Debug, Default)]
pub struct PipelineReport {
    pub runs: Vec<PassRunStats>,
    /// Every step, run or skipped, when an opt-bisect limit is set (`u64::MAX` logs a whole
    /// pipeline).
    pub bisect_log: Vec<BisectStep>,
    /// Number of steps counted (run or skipped).
    pub steps: u64,
}

impl PipelineReport {
    /// A table for `--stats`: one line per pipeline position.
    pub fn stats_table(&self) -> String {
        let mut s = format!(
            "{:<4} {:<22} {:>7} {:>9} {:>9} {:>10}  counters\n",
            "#", "pass", "changed", "insts-in", "insts-out", "time-us"
        );
        for (i, r) in self.runs.iter().enumerate() {
            let counters: Vec<String> = r.counters.iter().map(|(k, v)| format!("{k}={v}")).collect();
            s.push_str(&format!(
                "{:<4} {:<22} {:>7} {:>9} {:>9} {:>10}  {}\n",
                i + 1,
                r.pass,
                if r.changed { "yes" } else { "no" },
                r.insts_before,
                r.insts_after,
                r.time.as_micros(),
                counters.join(" ")
            ));
        }
        s
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error("IR verifier failed {where_}:\n{errors}")]
    Verifier { where_: String, errors: String },
    #[error("`{0}` is a back-end stage and cannot run in the IR pipeline")]
    NotAnIrPass(&'static str),
    #[error("a pipeline state after {ran} passes resumed under `--passes={pipeline}`, which does not start with them")]
    NotAPrefix { ran: usize, pipeline: String },
}

/// Observer of the pipeline: called after every pass with its position, the pass and the
/// module as it now stands.
pub type Observer<'o> = dyn FnMut(usize, &'static PassInfo, &Module) + 'o;

/// Runs the IR pipeline of `config` over `module` (verifying, limiting and logging steps
/// as `config` says), calling `observer` after every pass.
pub fn run(module: &mut Module, config: &Config, observer: Option<&mut Observer<'_>>) -> Result<PipelineReport, PipelineError> {
    let start = Instant::now();
    if config.verify_each {
        verify(module, None, "on the input")?;
    }
    let taken = std::mem::replace(module, Module::new());
    let mut state = PipelineState { module: taken, analyses: Vec::new(), funcinfo: None, report: PipelineReport::default(), elapsed: start.elapsed() };
    let result = advance(&mut state, config, config.pipeline.len(), observer);
    let (done, report) = state.into_parts();
    *module = done;
    result.map(|()| report)
}

/// A pipeline stopped after a prefix of its positions: everything a run carries from one
/// position to the next, so that the rest of the pipeline — or of any pipeline that starts
/// with the same passes — can be run later ([`advance`]) with exactly the result of one
/// uninterrupted [`run`].
///
/// # Why resuming is exact
/// A run is a function of the input module, the pass list and the configuration's faults,
/// size pins, `verify_each` and `opt_bisect_limit`; what crosses positions is held here:
/// * the module, with everything passes keep in it (function slots, names, counters);
/// * the per-function analysis caches (CFG, dominators, loops). Their results are tagged
///   with the function's CFG epoch, which a clone of the module keeps, so a resumed copy
///   reuses exactly what the uninterrupted run would have reused (even a stale result a
///   buggy pass failed to invalidate: the campaign tests the same compilation either way);
/// * the interprocedural summaries (`FuncInfo`) last computed, with the functions' objects,
///   edit stamps and signatures they were computed from; a position reuses them only when
///   all of these are unchanged (and no module pass ran since), when computing them again
///   gives the same. A resumed copy's functions are other objects (a clone gets a fresh
///   stamp): it computes them again, with the same result;
/// * the report so far, whose step counter numbers the opt-bisect steps.
///
/// Nothing else crosses positions: the counters live for one position, passes keep no
/// global state (the only process-wide state is the epoch counter, whose values are compared
/// for equality only, and the functions' identity counter, likewise), and the
/// manager has no fixpoint groups, rounds or budgets spanning positions (the inliner's
/// limits are per call). The configuration's faults, pins, `verify_each` and `opt_bisect_limit`
/// are not held: a state must be resumed under the settings it was started with (the
/// caller's business, e.g. one cache per settings).
///
/// The wall time spent so far (including the verifier) is kept too, so a resumed run can
/// report what the whole pipeline cost.
#[derive(Clone, Debug)]
pub struct PipelineState {
    module: Module,
    analyses: Vec<AnalysisCache>,
    /// The interprocedural summaries last computed, with what they were computed from.
    funcinfo: Option<(FunctionsKey, Arc<FuncInfo>)>,
    report: PipelineReport,
    elapsed: Duration,
}

impl PipelineState {
    /// The state before the first position: `module`, verified when `config` says so.
    pub fn start(module: Module, config: &Config) -> Result<PipelineState, PipelineError> {
        let start = Instant::now();
        if config.verify_each {
            verify(&module, None, "on the input")?;
        }
        Ok(PipelineState { module, analyses: Vec::new(), funcinfo: None, report: PipelineReport::default(), elapsed: start.elapsed() })
    }

    /// How many pipeline positions have run.
    pub fn position(&self) -> usize {
        self.report.runs.len()
    }

    /// The module as it stands.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The statistics of the positions run so far.
    pub fn report(&self) -> &PipelineReport {
        &self.report
    }

    /// Wall time of the positions run so far, with the verifier's.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    pub fn into_parts(self) -> (Module, PipelineReport) {
        (self.module, self.report)
    }
}

/// Runs the positions of `config`'s pipeline from `state`'s position up to (not including)
/// `until`, calling `observer` after each. The passes `state` ran must be the first ones of
/// `config`'s pipeline. On an error `state` is left part-way (the failing pass ran).
pub fn advance(
    state: &mut PipelineState,
    config: &Config,
    until: usize,
    mut observer: Option<&mut Observer<'_>>,
) -> Result<(), PipelineError> {
    let from = state.position();
    let until = until.min(config.pipeline.len());
    let ran = state.report.runs.iter().map(|r| r.pass);
    if from > until || ran.ne(config.pipeline[..from].iter().map(|p| p.name)) {
        return Err(PipelineError::NotAPrefix { ran: from, pipeline: config.pipeline_spec() });
    }
    let opts = config;
    let start = Instant::now();
    let PipelineState { module, analyses, funcinfo, report, .. } = state;
    let result = (|| {
        for (pos, pass) in config.pipeline.iter().enumerate().take(until).skip(from) {
            let edited = run_position(module, analyses, funcinfo, report, opts, pass)?;
            if opts.verify_each {
                let only = match &edited {
                    Edited::Module => None,
                    Edited::Functions(only) => Some(only.as_slice()),
                };
                verify(module, only, &format!("after pass `{}` (pipeline position {})", pass.name, pos + 1))?;
            }
            if let Some(obs) = observer.as_deref_mut() {
                obs(pos, pass, module);
            }
        }
        Ok(())
    })();
    state.elapsed += start.elapsed();
    result
}

/// What one position may have edited, for the verifier that follows it.
enum Edited {
    /// A module pass: anything.
    Module,
    /// A function pass: these functions, seen to change (their edit stamp or signature
    /// moved, see [`crate::ir::Function::edit_stamp`]). A function pass sees the module
    /// read-only, so nothing else can have changed; the pass's own `changed` answer is not
    /// trusted for this.
    Functions(Vec<FuncRef>),
}

/// Runs one pass over `module` and appends its statistics to `report`.
fn run_position(
    module: &mut Module,
    analyses: &mut Vec<AnalysisCache>,
    kept_funcinfo: &mut Option<(FunctionsKey, Arc<FuncInfo>)>,
    report: &mut PipelineReport,
    opts: &Config,
    pass: &'static PassInfo,
) -> Result<Edited, PipelineError> {
    let insts_before = insts_now(module, report);
    let mut counters = Counters::new();
    let start = Instant::now();
    let mut edited = Edited::Module;
    let changed = match pass.body {
        PassBody::Function(fp) => {
            let mut changed = false;
            let mut funcinfo = None;
            let mut edited_funcs = Vec::new();
            for f in module.func_refs() {
                if !step(report, opts, pass.name, module.func(f).name.clone()) {
                    continue;
                }
                if analyses.len() <= f.index() {
                    analyses.resize_with(module.num_func_slots(), AnalysisCache::default);
                }
                let mut func = module.take_function(f);
                let before = (func.edit_stamp(), func.name.clone(), func.params.clone(), func.ret);
                let mut cx = FunctionCx {
                    module,
                    func_ref: f,
                    analyses: &mut analyses[f.index()],
                    faults: &opts.faults,
                    pins: &opts.pins,
                    counters: &mut counters,
                    funcinfo: &mut funcinfo,
                    kept_funcinfo: &mut *kept_funcinfo,
                };
                changed |= fp.run(&mut func, &mut cx);
                if before != (func.edit_stamp(), func.name.clone(), func.params.clone(), func.ret) {
                    edited_funcs.push(f);
                }
                module.put_back(f, func);
            }
            edited = Edited::Functions(edited_funcs);
            changed
        }
        PassBody::Module(mp) => {
            let before = opts.verify_each.then(|| ModuleSnapshot::of(module));
            // Looked up per function: a map, not a scan (a module of thousands of
            // functions would make every module pass quadratic).
            let names: rustc_hash::FxHashMap<FuncRef, String> =
                module.funcs().map(|(f, func)| (f, func.name.clone())).collect();
            let mut gate = |f: FuncRef| {
                let name = names.get(&f).cloned().unwrap_or_else(|| f.to_string());
                step(report, opts, pass.name, name)
            };
            let mut cx = ModuleCx { faults: &opts.faults, pins: &opts.pins, analyses, step_gate: &mut gate, counters: &mut counters };
            let changed = mp.run(module, &mut cx);
            // A module pass may change what summaries read besides the functions (globals).
            *kept_funcinfo = None;
            if let Some(before) = before {
                edited = before.edited_in(module);
            }
            changed
        }
        PassBody::Backend(_) => return Err(PipelineError::NotAnIrPass(pass.name)),
    };
    let time = start.elapsed();
    report.runs.push(PassRunStats {
        pass: pass.name,
        changed,
        counters,
        insts_before,
        insts_after: count_insts(module),
        time,
    });
    Ok(edited)
}

/// What the IR verifier of one function reads besides the function itself — which function
/// slots hold a function, with what signature (call checks), and how many globals and
/// strings exist (references are checked by index) — and each function's edit stamp.
///
/// Taken before a module pass, it tells which functions the pass can have made invalid:
/// those it edited, when the rest is as it was. A module pass may edit any function, but
/// most edit a few (`inline` the callers, `const-arrays` the readers); verifying only those
/// gives exactly the verdict and messages of verifying all, since every other function
/// passed the same checks against the same module after the previous position.
struct ModuleSnapshot {
    /// Per function slot: its parameter types and return type, `None` when removed.
    signatures: Vec<Option<(Vec<Type>, Type)>>,
    globals: usize,
    strings: usize,
    /// Per function slot: its edit stamp and parameter values (a public field the stamp does
    /// not cover).
    stamps: Vec<Option<Stamp>>,
}

type Stamp = ((u64, u64), Vec<Value>);

fn stamp(func: &Function) -> Stamp {
    (func.edit_stamp(), func.params.clone())
}

impl ModuleSnapshot {
    fn of(module: &Module) -> ModuleSnapshot {
        let slots = || (0..module.num_func_slots()).map(FuncRef::new);
        let live = |f: FuncRef| module.is_live(f).then(|| module.func(f));
        let signature = |func: &Function| (func.params.iter().map(|&p| func.value_type(p)).collect(), func.ret);
        ModuleSnapshot {
            signatures: slots().map(|f| live(f).map(signature)).collect(),
            globals: module.globals.len(),
            strings: module.strings.len(),
            stamps: slots().map(|f| live(f).map(stamp)).collect(),
        }
    }

    /// What the module pass that ran since the snapshot may have edited: the functions whose
    /// edit stamp moved, or anything when what other functions' checks read has changed.
    fn edited_in(self, module: &Module) -> Edited {
        let now = ModuleSnapshot::of(module);
        if (&now.signatures, now.globals, now.strings) != (&self.signatures, self.globals, self.strings) {
            return Edited::Module;
        }
        let moved = module.funcs().map(|(f, _)| f).filter(|f| self.stamps[f.index()] != now.stamps[f.index()]);
        Edited::Functions(moved.collect())
    }
}

/// Counts one opt-bisect step; returns whether it may run.
fn step(report: &mut PipelineReport, opts: &Config, pass: &'static str, function: String) -> bool {
    report.steps += 1;
    let ran = opts.opt_bisect_limit.is_none_or(|limit| report.steps <= limit);
    if opts.opt_bisect_limit.is_some() {
        report.bisect_log.push(BisectStep { index: report.steps, pass, function, ran });
    }
    ran
}

/// The instruction count of `module` before the next position: the count the previous
/// position recorded after it ran, when there was one. Nothing edits the module between
/// positions (the verifier and the observer only read it, and a [`PipelineState`] holds it
/// privately), and counting walks every instruction of the module.
fn insts_now(module: &Module, report: &PipelineReport) -> usize {
    match report.runs.last() {
        Some(last) => last.insts_after,
        None => count_insts(module),
    }
}

fn count_insts(module: &Module) -> usize {
    module.funcs().map(|(_, f)| f.inst_count()).sum()
}

/// The IR verifier over the whole module, or (`only`) over the module rules and those
/// functions.
fn verify(module: &Module, only: Option<&[FuncRef]>, where_: &str) -> Result<(), PipelineError> {
    let result = match only {
        None => verifier::verify_module(module),
        Some(only) => verifier::verify_module_rules_and_functions(module, only),
    };
    result.map_err(|errors| PipelineError::Verifier {
        where_: where_.to_string(),
        errors: errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"),
    })
}
