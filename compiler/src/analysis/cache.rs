//! Lazily computed CFG analyses of one function, kept while its CFG does not change.
//!
//! Each result remembers the [`Function::cfg_epoch`] it was computed at; a query recomputes
//! it (and whatever it depends on) only when the function's epoch has moved on. Because
//! epochs are unique across all functions of the process, handing the cache the wrong
//! function recomputes instead of returning another function's analysis. Results are shared
//! `Arc`s so a pass can hold several while it mutates the function; what it holds goes stale
//! (but stays valid memory) once it changes the CFG.
//!
//! Instruction-level changes (inserting, removing, rewriting non-terminators) keep every
//! analysis here valid: instruction order queries use the function's own sequence numbers.

use std::sync::Arc;

use super::cfg::ControlFlowGraph;
use super::domtree::DomTree;
use super::frontier::DominanceFrontiers;
use super::loops::LoopForest;
use crate::ir::Function;

#[derive(Clone, Debug, Default)]
pub struct AnalysisCache {
    cfg: Option<Arc<ControlFlowGraph>>,
    domtree: Option<Arc<DomTree>>,
    frontiers: Option<Arc<DominanceFrontiers>>,
    loops: Option<Arc<LoopForest>>,
}

impl AnalysisCache {
    pub fn new() -> AnalysisCache {
        AnalysisCache::default()
    }

    /// Drops every cached result.
    pub fn invalidate(&mut self) {
        *self = AnalysisCache::default();
    }

    pub fn cfg(&mut self, func: &Function) -> Arc<ControlFlowGraph> {
        let epoch = func.cfg_epoch();
        match &self.cfg {
            Some(c) if c.cfg_epoch() == epoch => c.clone(),
            _ => {
                let c = Arc::new(ControlFlowGraph::compute(func));
                self.cfg = Some(c.clone());
                c
            }
        }
    }

    pub fn domtree(&mut self, func: &Function) -> Arc<DomTree> {
        let epoch = func.cfg_epoch();
        if let Some(d) = &self.domtree
            && d.cfg_epoch() == epoch
        {
            return d.clone();
        }
        let cfg = self.cfg(func);
        let d = Arc::new(DomTree::compute(&cfg));
        self.domtree = Some(d.clone());
        d
    }

    pub fn frontiers(&mut self, func: &Function) -> Arc<DominanceFrontiers> {
        let epoch = func.cfg_epoch();
        if let Some(f) = &self.frontiers
            && f.cfg_epoch() == epoch
        {
            return f.clone();
        }
        let cfg = self.cfg(func);
        let domtree = self.domtree(func);
        let f = Arc::new(DominanceFrontiers::compute(&cfg, &domtree));
        self.frontiers = Some(f.clone());
        f
    }

    pub fn loops(&mut self, func: &Function) -> Arc<LoopForest> {
        let epoch = func.cfg_epoch();
        if let Some(l) = &self.loops
            && l.cfg_epoch() == epoch
        {
            return l.clone();
        }
        let cfg = self.cfg(func);
        let domtree = self.domtree(func);
        let l = Arc::new(LoopForest::compute(&cfg, &domtree));
        self.loops = Some(l.clone());
        l
    }
}
