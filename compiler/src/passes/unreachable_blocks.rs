//! `unreachable-blocks` (catalogue: ClearUnreachableBlock): deletes the blocks that no path
//! from the entry reaches.
//!
//! Why: lowering puts code after `return`/`break`/`continue` into blocks without
//! predecessors, and constant folding of branches cuts blocks off; such blocks cost compile
//! time in every later pass and code size in the output.
//!
//! Reachability is a depth-first search from the entry (the CFG analysis), so unreachable
//! cycles — blocks that only reach each other — go too. Before a block is deleted, the phis
//! of its reachable successors drop their entries for it; values it defines can only be used
//! in other unreachable blocks (SSA dominance), which are deleted in the same sweep.

use super::{FunctionCx, FunctionPass};
use crate::ir::{Block, Function};

pub struct UnreachableBlocks;

impl FunctionPass for UnreachableBlocks {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let cfg = cx.analyses.cfg(func);
        let dead: Vec<Block> = func.layout().iter().copied().filter(|&b| !cfg.is_reachable(b)).collect();
        if dead.is_empty() {
            return false;
        }
        let mut insts = 0u64;
        for &b in &dead {
            for &succ in cfg.succs(b) {
                if cfg.is_reachable(succ) {
                    func.remove_phi_pred(succ, b);
                }
            }
        }
        for &b in &dead {
            insts += func.block_insts(b).count() as u64;
            func.remove_block(b);
        }
        cx.count("blocks_removed", dead.len() as u64);
        cx.count("insts_removed", insts);
        true
    }
}
