//! The optimiser's share of a program's configurations: a per-program cache of pipeline
//! prefixes.
//!
//! A program is checked under many configurations whose IR pipelines start alike: the
//! leave-one-out ones follow `-O2` up to the pass they leave out, the singles all begin with
//! `mem2reg`, the back-end singles and leave-one-outs repeat a pipeline exactly (only their
//! back-end stages differ). Running each pipeline from the lowered module repeats the shared
//! prefixes; this cache keeps the pipeline's state after the prefixes that a later
//! configuration will start with, and runs each configuration from the longest one.
//!
//! # Exactness
//! A resumed pipeline gives exactly what an uninterrupted one gives — the module, every
//! position's `changed` bit and counters, the verifier having run after every position: the
//! state kept is the compiler's [`PipelineState`], which holds everything a run carries from
//! one position to the next (the module, the per-function analysis caches, the report with
//! its opt-bisect step count; its documentation argues why nothing else crosses positions:
//! no fixpoint groups, rounds or budgets span positions, passes keep no global state). What
//! a run also depends on is the configuration's faults, size pins, `verify_each` and opt-bisect limit:
//! the cache serves the settings of the configuration it was made for and runs any other
//! configuration uncached. A prefix that failed (verifier error, panic) is never kept, so a
//! configuration that reaches it fails there itself, with the same failure. The
//! `prefix_cache_is_exact` test compares cached and uncached runs on generated programs
//! under every strategy.
//!
//! # What is kept, and for how long
//! The configurations' run order is known in advance, so which prefixes are worth keeping
//! is too: while running configuration `i`, the state is saved after the longest common
//! prefix of its pipeline with each later configuration's (where that one will resume), and
//! dropped after the last configuration that starts with it. Run in the order of
//! [`run_order`] (pipelines sorted, a depth-first walk of their prefix tree), every pass
//! application of the prefix tree runs once and at most one saved state per tree depth is
//! alive at a time; [`MAX_SNAPSHOTS`] bounds the rest (a state not kept only costs time).
//!
//! # Times
//! The state carries the wall time of its positions (verifier included), so a configuration
//! resumed from a kept prefix still reports what its whole pipeline cost (`compile_us`), from
//! times measured when each part ran; the campaign's phase times count only what ran.

use std::sync::Arc;

use rustc_hash::FxHashMap;
use sysyc::config::Config;
use sysyc::ir::Module;
use sysyc::passes::manager::{self, Observer, PipelineState};

use super::dedup::hash_text;
use crate::failure::{Failure, FailureKind, Stage};
use crate::steps;

/// At most this many states are kept per program at a time.
pub const MAX_SNAPSHOTS: usize = 64;

/// The order in which to run a program's configurations: their pipelines sorted by pass
/// names (ties keep the planned order), so that configurations sharing a prefix run one
/// after another.
pub fn run_order(configs: &[Config]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..configs.len()).collect();
    order.sort_by_cached_key(|&i| configs[i].pass_names());
    order
}

/// The optimised IR of one configuration.
pub struct Optimised {
    /// The state after the whole pipeline (shared with the cache when it is kept).
    pub state: Arc<PipelineState>,
    /// Hash of the printed module.
    pub ir_hash: String,
}

impl Optimised {
    pub fn module(&self) -> &Module {
        self.state.module()
    }

    /// The pipeline's wall time, verifier included, over all the runs that made this state.
    pub fn pipeline_time(&self) -> std::time::Duration {
        self.state.elapsed()
    }

    /// Per position: `1` when the pass changed the module.
    pub fn changed_bits(&self) -> String {
        self.state.report().runs.iter().map(|r| if r.changed { '1' } else { '0' }).collect()
    }
}

struct Snapshot {
    state: Arc<PipelineState>,
    /// Set once some configuration ended at this state.
    ir_hash: Option<String>,
    /// The last run-order index that may resume from this state.
    last_use: usize,
}

/// The prefix cache of one program (see the module documentation).
pub struct PrefixCache {
    /// The lowered module, for configurations the cache does not serve.
    lowered: Module,
    /// The verified lowered module, or the verifier's failure on it.
    root: Result<Arc<PipelineState>, Failure>,
    /// Hash of the lowered module, once an empty pipeline asked for it.
    root_hash: Option<String>,
    /// Faults, size pins, `verify_each` and opt-bisect limit of the configurations served.
    settings: Config,
    /// Pipelines (pass names) in run order.
    pipelines: Vec<Vec<&'static str>>,
    /// Per run-order index: the prefix lengths after which to save the state.
    save_at: Vec<Vec<usize>>,
    snapshots: FxHashMap<Vec<&'static str>, Snapshot>,
    /// Pipeline positions run through the cache (for its tests and statistics).
    pub positions_run: usize,
}

fn common_prefix(a: &[&str], b: &[&str]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

fn same_settings(a: &Config, b: &Config) -> bool {
    a.faults == b.faults && a.pins == b.pins && a.verify_each == b.verify_each && a.opt_bisect_limit == b.opt_bisect_limit
}

/// The state before the first pass (the input verified when `config` says so).
fn start(lowered: &Module, config: &Config) -> Result<PipelineState, Failure> {
    steps::caught(Stage::Pipeline, || PipelineState::start(lowered.clone(), config))?.map_err(verifier_failure)
}

fn verifier_failure(e: manager::PipelineError) -> Failure {
    Failure::new(FailureKind::VerifierFailure, Stage::Pipeline, e.to_string())
}

impl PrefixCache {
    /// A cache for `lowered` and the configurations `configs`, which will be asked for in
    /// this order (all with the settings of the first one).
    pub fn new(lowered: &Module, configs: &[&Config]) -> PrefixCache {
        let settings = configs.first().map(|c| (*c).clone()).unwrap_or_default();
        let root = start(lowered, &settings).map(Arc::new);
        let pipelines: Vec<Vec<&'static str>> = configs.iter().map(|c| c.pass_names()).collect();
        let save_at = (0..pipelines.len())
            .map(|i| {
                let mut at: Vec<usize> =
                    pipelines[i + 1..].iter().map(|later| common_prefix(&pipelines[i], later)).filter(|&n| n > 0).collect();
                at.sort_unstable();
                at.dedup();
                at
            })
            .collect();
        PrefixCache { lowered: lowered.clone(), root, root_hash: None, settings, pipelines, save_at, snapshots: FxHashMap::default(), positions_run: 0 }
    }

    /// The optimised IR of the configuration at run-order index `index` (`config`).
    pub fn optimise(&mut self, index: usize, config: &Config) -> Result<Optimised, Failure> {
        let names = config.pass_names();
        if !same_settings(config, &self.settings) || self.pipelines.get(index) != Some(&names) {
            return uncached(&self.lowered, config);
        }
        let result = self.resume(index, config, &names);
        self.snapshots.retain(|_, s| s.last_use > index);
        result
    }

    fn resume(&mut self, index: usize, config: &Config, names: &[&'static str]) -> Result<Optimised, Failure> {
        let root = self.root.clone()?;
        let (from, start) = (1..=names.len())
            .rev()
            .find_map(|n| self.snapshots.get(&names[..n]).map(|s| (n, s.state.clone())))
            .unwrap_or((0, root));
        if from == names.len() {
            // The whole pipeline ran before (or is empty): only the hash may be new.
            let known = match self.snapshots.get_mut(names) {
                Some(snapshot) => &mut snapshot.ir_hash,
                None => &mut self.root_hash,
            };
            let ir_hash = known.get_or_insert_with(|| hash_module(start.module())).clone();
            return Ok(Optimised { state: start, ir_hash });
        }
        let mut state = Arc::unwrap_or_clone(start);
        let stops: Vec<usize> = self.save_at[index].iter().copied().filter(|&n| n > from).collect();
        for &stop in &stops {
            steps::caught(Stage::Pipeline, || manager::advance(&mut state, config, stop, None))?.map_err(verifier_failure)?;
            if stop < names.len() && self.snapshots.len() < MAX_SNAPSHOTS {
                let last_use = self.last_use(index, &names[..stop]);
                self.snapshots.insert(names[..stop].to_vec(), Snapshot { state: Arc::new(state.clone()), ir_hash: None, last_use });
            }
        }
        steps::caught(Stage::Pipeline, || manager::advance(&mut state, config, names.len(), None))?.map_err(verifier_failure)?;
        self.positions_run += names.len() - from;
        let ir_hash = hash_module(state.module());
        let state = Arc::new(state);
        if stops.last() == Some(&names.len()) && self.snapshots.len() < MAX_SNAPSHOTS {
            let last_use = self.last_use(index, names);
            self.snapshots.insert(names.to_vec(), Snapshot { state: state.clone(), ir_hash: Some(ir_hash.clone()), last_use });
        }
        Ok(Optimised { state, ir_hash })
    }

    /// The last run-order index after `index` whose pipeline starts with `prefix`.
    fn last_use(&self, index: usize, prefix: &[&str]) -> usize {
        (index + 1..self.pipelines.len()).rev().find(|&j| self.pipelines[j].starts_with(prefix)).unwrap_or(index)
    }

    /// How many states are kept now.
    pub fn kept(&self) -> usize {
        self.snapshots.len()
    }
}

/// The whole pipeline of `config` from `lowered`, with nothing kept.
pub fn uncached(lowered: &Module, config: &Config) -> Result<Optimised, Failure> {
    run_whole(lowered, config, None)
}

/// [`uncached`], with `observer` shown the module after every pass.
pub fn uncached_observed(lowered: &Module, config: &Config, observer: &mut Observer<'_>) -> Result<Optimised, Failure> {
    run_whole(lowered, config, Some(observer))
}

fn run_whole(lowered: &Module, config: &Config, observer: Option<&mut Observer<'_>>) -> Result<Optimised, Failure> {
    let mut state = start(lowered, config)?;
    steps::caught(Stage::Pipeline, || manager::advance(&mut state, config, config.pipeline.len(), observer))?.map_err(verifier_failure)?;
    let ir_hash = hash_module(state.module());
    Ok(Optimised { state: Arc::new(state), ir_hash })
}

/// Hash of the printed module (the rows' `ir_hash`).
pub fn hash_module(module: &Module) -> String {
    hash_text(&sysyc::ir::print_module(module))
}
