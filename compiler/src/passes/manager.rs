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

use std::time::{Duration, Instant};

use cranelift_entity::EntityRef;

use super::{Counters, FunctionCx, ModuleCx, PassBody, PassInfo};
use crate::analysis::cache::AnalysisCache;
use crate::config::Config;
use crate::ir::{FuncRef, Module, verifier};

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
}

/// Observer of the pipeline: called after every pass with its position, the pass and the
/// module as it now stands.
pub type Observer<'o> = dyn FnMut(usize, &'static PassInfo, &Module) + 'o;

/// Runs the IR pipeline of `config` over `module` (verifying, limiting and logging steps
/// as `config` says), calling `observer` after every pass.
pub fn run(module: &mut Module, config: &Config, mut observer: Option<&mut Observer<'_>>) -> Result<PipelineReport, PipelineError> {
    let opts = config;
    let mut report = PipelineReport::default();
    if opts.verify_each {
        verify(module, "on the input")?;
    }
    let mut analyses: Vec<AnalysisCache> = Vec::new();
    for (pos, pass) in config.pipeline.iter().enumerate() {
        let insts_before = count_insts(module);
        let mut counters = Counters::new();
        let start = Instant::now();
        let changed = match pass.body {
            PassBody::Function(fp) => {
                let mut changed = false;
                let mut funcinfo = None;
                for f in module.func_refs() {
                    if !step(&mut report, opts, pass.name, module.func(f).name.clone()) {
                        continue;
                    }
                    if analyses.len() <= f.index() {
                        analyses.resize_with(module.num_func_slots(), AnalysisCache::default);
                    }
                    let mut func = module.take_function(f);
                    let mut cx = FunctionCx {
                        module,
                        func_ref: f,
                        analyses: &mut analyses[f.index()],
                        faults: &opts.faults,
                        counters: &mut counters,
                        funcinfo: &mut funcinfo,
                    };
                    changed |= fp.run(&mut func, &mut cx);
                    module.put_back(f, func);
                }
                changed
            }
            PassBody::Module(mp) => {
                // Looked up per function: a map, not a scan (a module of thousands of
                // functions would make every module pass quadratic).
                let names: rustc_hash::FxHashMap<FuncRef, String> =
                    module.funcs().map(|(f, func)| (f, func.name.clone())).collect();
                let mut gate = |f: FuncRef| {
                    let name = names.get(&f).cloned().unwrap_or_else(|| f.to_string());
                    step(&mut report, opts, pass.name, name)
                };
                let mut cx = ModuleCx {
                    faults: &opts.faults,
                    analyses: &mut analyses,
                    step_gate: &mut gate,
                    counters: &mut counters,
                };
                mp.run(module, &mut cx)
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
        if opts.verify_each {
            verify(module, &format!("after pass `{}` (pipeline position {})", pass.name, pos + 1))?;
        }
        if let Some(obs) = observer.as_deref_mut() {
            obs(pos, pass, module);
        }
    }
    Ok(report)
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

fn count_insts(module: &Module) -> usize {
    module.funcs().map(|(_, f)| f.inst_count()).sum()
}

fn verify(module: &Module, where_: &str) -> Result<(), PipelineError> {
    verifier::verify_module(module).map_err(|errors| PipelineError::Verifier {
        where_: where_.to_string(),
        errors: errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"),
    })
}
