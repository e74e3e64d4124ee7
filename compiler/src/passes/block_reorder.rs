//! `block-reorder` (catalogue: BlockReorder): chooses the layout order of a function's blocks.
//!
//! Why: the back end falls through to the next block instead of jumping, and turns a short
//! block that is branched around into conditionally executed instructions — both only when
//! the right block comes next in the layout. Lowering and inlining leave blocks in creation
//! order (loop exits early, inlined bodies split from their callers' continuations).
//!
//! Rules, in order of priority:
//! 1. a dominator precedes every block it dominates (the entry stays first);
//! 2. loop bodies before loop exits: among the blocks that may come next, those inside the
//!    deepest loop already entered (its header placed) go first, so a loop is laid out
//!    contiguously and its exits follow it;
//! 3. a jump or branch target comes right after its jump or branch when it can;
//! 4. small blocks (at most [`SMALL_BLOCK`] instructions) first, so `br c, small, join` leaves
//!    `small` next to its branch, where the back end can make it conditional;
//! 5. ties keep the original layout order (deterministic, and stable: a layout that already
//!    follows the rules is left as it is).
//!
//! Algorithm: a greedy list schedule. A block becomes *ready* once all its reachable
//! predecessors along forward edges (edges whose target does not dominate their source) are
//! placed; the next block is the best ready block by the keys above. Readiness gives rule 1
//! for free — the immediate dominator of a block dominates each of its predecessors, so it is
//! placed before any of them — and makes a join wait for all its arms. Irreducible cycles can
//! leave no block ready while some remain: then the unplaced block with the smallest reverse
//! post-order number whose immediate dominator is placed comes next (one always exists).
//! Unreachable blocks keep their relative order at the end. Each step scans the ready set,
//! so the cost is O(blocks × widest ready set), the ready set being a CFG "frontier" (small
//! in practice).

use cranelift_entity::SecondaryMap;

use super::{FunctionCx, FunctionPass};
use crate::analysis::cfg::ControlFlowGraph;
use crate::analysis::loops::LoopForest;
use crate::ir::{Block, Function};

pub struct BlockReorder;

/// Blocks of at most this many instructions (terminator included) are "small" (rule 4).
pub const SMALL_BLOCK: usize = 4;

impl FunctionPass for BlockReorder {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        if func.layout().len() <= 2 {
            return false;
        }
        let cfg = cx.analyses.cfg(func);
        let domtree = cx.analyses.domtree(func);
        let loops = cx.analyses.loops(func);

        // Forward-edge predecessors not yet placed, per block.
        let mut waiting: SecondaryMap<Block, u32> = SecondaryMap::new();
        for &b in cfg.rpo() {
            waiting[b] = cfg.unique_preds(b).iter().filter(|&&p| cfg.is_reachable(p) && !domtree.dominates(b, p)).count()
                as u32;
        }
        let mut position: SecondaryMap<Block, u32> = SecondaryMap::new();
        for (i, &b) in func.layout().iter().enumerate() {
            position[b] = i as u32;
        }
        let mut placed: SecondaryMap<Block, bool> = SecondaryMap::new();
        let mut order: Vec<Block> = Vec::with_capacity(func.layout().len());
        let mut ready: Vec<Block> = vec![func.entry()];
        let total = cfg.rpo().len();
        while order.len() < total {
            let prev = order.last().copied();
            let pick = match best_ready(func, &cfg, &loops, &placed, &position, &ready, prev) {
                Some(i) => ready.swap_remove(i),
                None => {
                    // Irreducible cycle: nothing is ready.
                    let b = cfg
                        .rpo()
                        .iter()
                        .copied()
                        .find(|&b| !placed[b] && domtree.idom(b).is_none_or(|d| placed[d]))
                        .expect("an unplaced block whose immediate dominator is placed");
                    ready.retain(|&r| r != b);
                    b
                }
            };
            placed[pick] = true;
            order.push(pick);
            let mut succs: Vec<Block> = cfg.succs(pick).to_vec();
            succs.dedup();
            for s in succs {
                if placed[s] || domtree.dominates(s, pick) {
                    continue;
                }
                waiting[s] = waiting[s].saturating_sub(1);
                if waiting[s] == 0 && !ready.contains(&s) {
                    ready.push(s);
                }
            }
        }
        order.extend(func.layout().iter().copied().filter(|&b| !cfg.is_reachable(b)));
        if order.as_slice() == func.layout() {
            return false;
        }
        let moved = order.iter().zip(func.layout()).filter(|(a, b)| a != b).count();
        cx.count("blocks_moved", moved as u64);
        func.set_layout(order);
        true
    }
}

/// Index in `ready` of the block to place next after `prev` (see the module documentation).
fn best_ready(
    func: &Function,
    cfg: &ControlFlowGraph,
    loops: &LoopForest,
    placed: &SecondaryMap<Block, bool>,
    position: &SecondaryMap<Block, u32>,
    ready: &[Block],
    prev: Option<Block>,
) -> Option<usize> {
    let prev_succs: &[Block] = prev.map_or(&[], |p| cfg.succs(p));
    let key = |b: Block| {
        // Depth of the deepest entered loop containing `b` (rule 2), deeper first.
        let mut entered_depth = 0;
        let mut l = loops.innermost_loop(b);
        while let Some(lp) = l {
            let h = loops.header(lp);
            if h == b || placed[h] {
                entered_depth = loops.depth(lp);
                break;
            }
            l = loops.parent(lp);
        }
        let not_successor = !prev_succs.contains(&b);
        let not_small = func.block_insts(b).nth(SMALL_BLOCK).is_some();
        (std::cmp::Reverse(entered_depth), not_successor, not_small, position[b])
    };
    ready.iter().enumerate().min_by_key(|&(_, &b)| key(b)).map(|(i, _)| i)
}
