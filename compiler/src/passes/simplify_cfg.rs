//! `simplify-cfg` (catalogue: SimplifyCFG = FuseBasicBlock + FuseImmediatelyBranch): local
//! clean-ups of the control-flow graph — `fuse-blocks` and `fuse-branch` interleaved until
//! neither applies.
//!
//! Why both at once: each enables the other (threading an empty block leaves a jump whose
//! target now has one predecessor; merging a chain exposes a block that only branches on).
//! The rewrites themselves are documented in [`super::fuse_blocks`] and
//! [`super::fuse_branch`]; what they share (predecessor lists kept up to date incrementally,
//! so a sweep is linear in the size of the function) is in [`super::cfg_edit`].

use super::cfg_edit::predecessors;
use super::fuse_blocks::merge_successor;
use super::fuse_branch::{BranchStats, fuse_at};
use super::{FunctionCx, FunctionPass};
use crate::ir::Function;

pub struct SimplifyCfg;

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
