//! Dominance frontiers and iterated dominance frontiers (where mem2reg places phis).
//!
//! The frontier of `x` is the set of blocks `y` such that `x` dominates a predecessor of `y`
//! but does not strictly dominate `y`. Computed as in Cooper–Harvey–Kennedy: for every join
//! block `y` (two or more distinct reachable predecessors) walk from each predecessor up the
//! dominator tree until `idom(y)`, adding `y` to the frontier of every block passed.
//!
//! The iterated frontier of a set `S` is the limit of `DF(S)`, `DF(S ∪ DF(S))`, ...; it is
//! computed with a worklist. Unreachable blocks have empty frontiers and never appear in one.

use cranelift_entity::{EntityRef, SecondaryMap};
use smallvec::SmallVec;

use super::cfg::ControlFlowGraph;
use super::domtree::DomTree;
use crate::ir::Block;

#[derive(Clone, Debug)]
pub struct DominanceFrontiers {
    /// Sorted by block number, without duplicates.
    df: SecondaryMap<Block, SmallVec<[Block; 4]>>,
    cfg_epoch: u64,
}

impl DominanceFrontiers {
    pub fn compute(cfg: &ControlFlowGraph, domtree: &DomTree) -> DominanceFrontiers {
        let mut df: SecondaryMap<Block, SmallVec<[Block; 4]>> = SecondaryMap::new();
        for &y in cfg.rpo() {
            let preds = cfg.unique_preds(y);
            if preds.len() < 2 {
                continue;
            }
            let Some(stop) = domtree.idom(y) else { continue };
            for p in preds {
                if !cfg.is_reachable(p) {
                    continue;
                }
                let mut runner = p;
                while runner != stop {
                    if !df[runner].contains(&y) {
                        df[runner].push(y);
                    }
                    match domtree.idom(runner) {
                        Some(up) => runner = up,
                        None => break,
                    }
                }
            }
        }
        for (_, set) in df.iter_mut() {
            set.sort_unstable();
        }
        DominanceFrontiers { df, cfg_epoch: cfg.cfg_epoch() }
    }

    pub fn cfg_epoch(&self) -> u64 {
        self.cfg_epoch
    }

    /// The dominance frontier of `b`, sorted by block number.
    pub fn frontier(&self, b: Block) -> &[Block] {
        &self.df[b]
    }

    /// The iterated dominance frontier of `blocks`, sorted by block number.
    pub fn iterated(&self, blocks: impl IntoIterator<Item = Block>) -> Vec<Block> {
        let mut in_result: SecondaryMap<Block, bool> = SecondaryMap::new();
        let mut queued: SecondaryMap<Block, bool> = SecondaryMap::new();
        let mut work: Vec<Block> = Vec::new();
        for b in blocks {
            if !queued[b] {
                queued[b] = true;
                work.push(b);
            }
        }
        let mut result = Vec::new();
        while let Some(b) = work.pop() {
            for &y in self.frontier(b) {
                if !in_result[y] {
                    in_result[y] = true;
                    result.push(y);
                    if !queued[y] {
                        queued[y] = true;
                        work.push(y);
                    }
                }
            }
        }
        result.sort_unstable_by_key(|b| b.index());
        result
    }
}
