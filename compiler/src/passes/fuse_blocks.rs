//! `fuse-blocks` (catalogue: FuseBasicBlock): merges a block into its single predecessor
//! when that predecessor jumps only to it.
//!
//! Why: lowering produces a block per construct and later passes (branch folding, inlining)
//! leave chains of blocks joined by plain jumps. Fewer, longer blocks mean fewer jumps in the
//! output and more code for local optimisations to see at once.
//!
//! The rewrite: when `p` ends in `jump s` and that is the only edge into `s` (`s` ≠ `p`, not
//! the entry), the instructions of `s` move to the end of `p` and `s` disappears. The phis of
//! `s` have exactly one entry and are replaced by its value; successors of `s` now name `p` as
//! their predecessor. Blocks are visited in layout order and each absorbs its whole chain of
//! successors, so one sweep suffices; predecessor lists are kept up to date incrementally.
//! Blocks without predecessors are merged like any other (deleting them is
//! `unreachable-blocks`' job). `simplify-cfg` runs this together with `fuse-branch`.

use smallvec::SmallVec;

use super::cfg_edit::{Preds, predecessors};
use super::{FunctionCx, FunctionPass};
use crate::ir::{Block, Function, Inst};

pub struct FuseBlocks;

impl FunctionPass for FuseBlocks {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let mut preds = predecessors(func);
        let mut merged = 0u64;
        for b in func.layout().to_vec() {
            if !func.is_block_live(b) {
                continue;
            }
            while merge_successor(func, &mut preds, b) {
                merged += 1;
            }
        }
        cx.count("blocks_merged", merged);
        merged > 0
    }
}

/// Merges the single-predecessor successor of `b` into `b`; returns whether it did.
pub(super) fn merge_successor(func: &mut Function, preds: &mut Preds, b: Block) -> bool {
    let Some(term) = func.terminator(b) else { return false };
    if func.opcode(term) != crate::ir::Opcode::Jump {
        return false;
    }
    let s = func.targets(term)[0];
    if s == b || s == func.entry() || preds[s].as_slice() != [b] {
        return false;
    }
    for phi in func.block_phis(s).collect::<SmallVec<[Inst; 8]>>() {
        let result = func.result(phi).expect("phi has a result");
        let v = match func.args(phi) {
            [v] if *v != result => *v,
            _ => func.undef(func.value_type(result)),
        };
        func.replace_all_uses(result, v);
        func.remove_inst(phi);
    }
    func.remove_inst(term);
    for inst in func.block_insts_vec(s) {
        func.detach_inst(inst);
        func.append_inst(b, inst);
    }
    let succs: SmallVec<[Block; 2]> = func.successors(b).iter().copied().collect();
    for &t in &succs {
        for p in preds[t].iter_mut() {
            if *p == s {
                *p = b;
            }
        }
        func.rename_phi_pred(t, s, b);
    }
    preds[s].clear();
    func.remove_block(s);
    true
}
