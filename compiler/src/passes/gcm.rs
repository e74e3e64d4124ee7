//! `gcm` (catalogue: Global Code Motion, after Click 1995): moves every movable
//! instruction to the block with the shallowest loop depth between the earliest and latest
//! places it could be, latest among equals.
//!
//! Why: it hoists loop-invariant computations out of loops (into the deepest dominator
//! outside the loop that still follows their operands) and sinks computations whose result
//! only one branch needs into that branch, in one uniform pass.
//!
//! Movable: pure instructions that cannot trap (`Opcode::is_pure` and not
//! `Opcode::may_trap`) — moving one may execute it where it did not run before, which is
//! harmless exactly for those. Pinned: phis, terminators, loads, stores, `memzero`, calls,
//! allocas, `sdiv`/`srem` (a division must never run where it did not), and everything in
//! unreachable blocks or used there.
//!
//! Algorithm:
//! 1. Early: visiting reachable blocks in reverse post-order, an instruction's earliest block
//!    is the deepest (in the dominator tree) of its operands' earliest blocks (pinned
//!    operands: their own block; parameters and constants: the entry).
//! 2. Late: visiting in the opposite order (so users are decided first), the latest block is
//!    the nearest common dominator of its users' chosen blocks (a phi use counts at the end
//!    of the incoming block). Walking the dominator tree from latest up to earliest, the
//!    block with the smallest loop depth wins, the latest on ties. Instructions without uses
//!    stay where they are.
//! 3. Only then are instructions moved — those whose chosen block differs from their current
//!    one — each right before its first user in the new block, or before the terminator.
//!    Because the choice depends on early/late and loop depths only (never on the current
//!    position), running the pass again chooses the same blocks and reports no change.
//!
//! Loop depths come from the natural-loop forest; irreducible cycles count as no loop (the
//! result is still correct, only possibly less profitable there).

use cranelift_entity::SecondaryMap;
use cranelift_entity::packed_option::PackedOption;

use super::{FunctionCx, FunctionPass};
use crate::ir::{Block, Function, Inst, Opcode, Value};

pub struct Gcm;

fn movable(op: Opcode) -> bool {
    op.is_pure() && !op.may_trap()
}

impl FunctionPass for Gcm {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let cfg = cx.analyses.cfg(func);
        let domtree = cx.analyses.domtree(func);
        let loops = cx.analyses.loops(func);
        let Some(entry) = cfg.entry() else { return false };

        // 1. Early.
        let mut early: SecondaryMap<Inst, PackedOption<Block>> = SecondaryMap::new();
        let mut order: Vec<Inst> = Vec::new();
        for &b in cfg.rpo() {
            for inst in func.block_insts(b) {
                if !movable(func.opcode(inst)) {
                    continue;
                }
                // Pinned when used in an unreachable place: its users must see its own block
                // as its earliest, or they could be hoisted above it.
                match func.result(inst) {
                    Some(v) if !used_unreachable(func, &cfg, v) => {}
                    _ => continue,
                }
                let mut best = entry;
                for &a in func.args(inst) {
                    let at = match func.def_inst(a) {
                        Some(d) => early[d].expand().or_else(|| func.inst_block(d)),
                        None => None,
                    };
                    if let Some(at) = at
                        && domtree.depth(at) > domtree.depth(best)
                    {
                        best = at;
                    }
                }
                early[inst] = best.into();
                order.push(inst);
            }
        }

        // 2. Late and the choice, users first.
        let mut chosen: SecondaryMap<Inst, PackedOption<Block>> = SecondaryMap::new();
        let mut moves: Vec<(Inst, Block)> = Vec::new();
        for &inst in order.iter().rev() {
            let result = func.result(inst).expect("movable instructions have results");
            let Some(late) = latest(func, &domtree, &cfg, &chosen, result) else { continue };
            let (Some(first), Some(home)) = (early[inst].expand(), func.inst_block(inst)) else { continue };
            // Walk up from `late` to `first`; `first` dominates `late` by construction.
            let mut best = late;
            let mut cur = late;
            while cur != first {
                let Some(up) = domtree.idom(cur) else { break };
                cur = up;
                if loops.loop_depth(cur) < loops.loop_depth(best) {
                    best = cur;
                }
            }
            chosen[inst] = best.into();
            if best != home {
                moves.push((inst, best));
            }
        }

        // 3. Move, users first so each lands before its first user's final position.
        for &(inst, to) in &moves {
            let result = func.result(inst).expect("movable instructions have results");
            let first_user = func
                .users(result)
                .iter()
                .copied()
                .filter(|&u| func.inst_block(u) == Some(to) && func.opcode(u) != Opcode::Phi)
                .min_by_key(|&u| func.inst_seq(u));
            let pos = match first_user {
                Some(u) => u,
                None => func.terminator(to).expect("reachable blocks end in a terminator"),
            };
            func.detach_inst(inst);
            func.insert_inst_before(pos, inst);
        }
        cx.count("insts_moved", moves.len() as u64);
        !moves.is_empty()
    }
}

/// Whether `v` is used in an unreachable block or by a phi over an edge from one.
fn used_unreachable(func: &Function, cfg: &crate::analysis::ControlFlowGraph, v: Value) -> bool {
    func.users(v).iter().any(|&u| {
        if func.opcode(u) == Opcode::Phi {
            func.targets(u).iter().zip(func.args(u)).any(|(&p, &a)| a == v && !cfg.is_reachable(p))
        } else {
            func.inst_block(u).is_none_or(|b| !cfg.is_reachable(b))
        }
    })
}

/// The nearest common dominator of the places `v` is used (users' chosen blocks, phi uses at
/// the end of their incoming block), or `None` when it has no uses or a use is unreachable.
fn latest(
    func: &Function,
    domtree: &crate::analysis::DomTree,
    cfg: &crate::analysis::ControlFlowGraph,
    chosen: &SecondaryMap<Inst, PackedOption<Block>>,
    v: Value,
) -> Option<Block> {
    let mut lca: Option<Block> = None;
    for &u in func.users(v) {
        let ub = func.inst_block(u)?;
        let places: Vec<Block> = if func.opcode(u) == Opcode::Phi {
            func.targets(u).iter().zip(func.args(u)).filter(|&(_, &a)| a == v).map(|(&p, _)| p).collect()
        } else {
            vec![chosen[u].expand().unwrap_or(ub)]
        };
        for p in places {
            if !cfg.is_reachable(p) {
                return None;
            }
            lca = Some(match lca {
                None => p,
                Some(l) => domtree.common_dominator(l, p)?,
            });
        }
    }
    lca
}
