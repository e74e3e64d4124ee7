//! CFG-editing helpers shared by the passes (not a pass itself): predecessor lists kept up to
//! date incrementally by the block-merging and branch-threading rewrites, and removing the
//! phi entries of a deleted edge.

use cranelift_entity::SecondaryMap;
use smallvec::SmallVec;

use crate::ir::{Block, Function, Inst};

/// Predecessors per block, one entry per edge.
pub(crate) type Preds = SecondaryMap<Block, SmallVec<[Block; 4]>>;

/// The predecessor lists of `func`, one entry per edge.
pub(crate) fn predecessors(func: &Function) -> Preds {
    let mut preds: Preds = SecondaryMap::new();
    for &b in func.layout() {
        for &s in func.successors(b) {
            preds[s].push(b);
        }
    }
    preds
}

/// Removes one occurrence of `b` from a predecessor list.
pub(crate) fn remove_one(list: &mut SmallVec<[Block; 4]>, b: Block) {
    if let Some(i) = list.iter().position(|&x| x == b) {
        list.remove(i);
    }
}

/// Removes the phi entries of one edge `pred → block` (a block reached twice from `pred`, as
/// by `br c, b, b`, keeps the entries of the other edge).
pub(crate) fn remove_one_phi_entry(func: &mut Function, block: Block, pred: Block) {
    let phis: Vec<Inst> = func.block_phis(block).collect();
    for phi in phis {
        if let Some(i) = func.targets(phi).iter().position(|&p| p == pred) {
            func.remove_phi_incoming(phi, i);
        }
    }
}
