//! `simplify-cfg` (catalogue: SimplifyCFG = FuseBasicBlock + FuseImmediatelyBranch): local
//! clean-ups of the control-flow graph — `fuse-blocks` and `fuse-branch` interleaved until
//! neither applies.
//!
//! Why both at once: each enables the other (threading an empty block leaves a jump whose
//! target now has one predecessor; merging a chain exposes a block that only branches on).
//! The rewrites themselves are documented in [`super::fuse_blocks`] and
//! [`super::fuse_branch`]; this module also holds what they share: predecessor lists kept up
//! to date incrementally, so a sweep is linear in the size of the function.

use cranelift_entity::SecondaryMap;
use smallvec::SmallVec;

use super::fuse_blocks::merge_successor;
use super::fuse_branch::{BranchStats, fuse_at};
use super::{FunctionCx, FunctionPass};
use crate::ir::{Block, Function};

pub struct SimplifyCfg;

/// Predecessors per block, one entry per edge.
pub(super) type Preds = SecondaryMap<Block, SmallVec<[Block; 4]>>;

/// The predecessor lists of `func`, one entry per edge.
pub(super) fn predecessors(func: &Function) -> Preds {
    let mut preds: Preds = SecondaryMap::new();
    for &b in func.layout() {
        for &s in func.successors(b) {
            preds[s].push(b);
        }
    }
    preds
}

/// Removes one occurrence of `b` from a predecessor list.
pub(super) fn remove_one(list: &mut SmallVec<[Block; 4]>, b: Block) {
    if let Some(i) = list.iter().position(|&x| x == b) {
        list.remove(i);
    }
}

impl FunctionPass for SimplifyCfg {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let mut preds = predecessors(func);
        let mut stats = BranchStats::default();
        let mut merged = 0u64;
        loop {
            let before = stats.total() + merged;
            for b in func.layout().to_vec() {
                if !func.is_block_live(b) {
                    continue;
                }
                while merge_successor(func, &mut preds, b) {
                    merged += 1;
                }
                fuse_at(func, &mut preds, b, &mut stats);
            }
            if stats.total() + merged == before {
                break;
            }
        }
        cx.count("branches_simplified", stats.branches);
        cx.count("blocks_merged", merged);
        cx.count("jumps_threaded", stats.threaded);
        cx.count("branches_hoisted", stats.hoisted);
        stats.total() + merged > 0
    }
}
