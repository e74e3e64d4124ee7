//! `loop-deletion`: deletes loops that compute nothing anyone uses and provably finish.
//!
//! Why: after inlining and dead-code elimination, a loop whose only purpose was a value the
//! caller discards (a helper's result thrown away: `swap` calling a pure, looping
//! `meanless_calculation` in `median`) keeps running just to count its induction variable.
//! gcc deletes such loops; so do we, but only when they provably finish — deleting an
//! infinite loop would turn a hanging program into one that continues.
//!
//! Which loops: a natural loop `L` (header not the entry; no block but the header with a
//! predecessor outside `L`, which only unreachable blocks can be) such that
//! * no instruction of `L` has an effect: no store, `memzero`, `alloca`, and only calls of
//!   read-only functions that always return ([`FuncSummary`](crate::analysis::FuncSummary));
//!   divisions and loads may stay — one that would trap is undefined behaviour, the same
//!   decision `dce` makes;
//! * no value defined in `L` is used outside it (phis of the exit block included);
//! * all exit edges lead to one block `X`, and every phi of `X` has one value on all of
//!   them (necessarily defined outside `L`): after the loop, the state is the same whichever
//!   exit was taken, and it is what it was before the loop;
//! * `L` and every loop inside it finish ([`loop_nest_terminates`]), the CFG being
//!   reducible.
//!
//! Rewrite: each edge entering the header from outside `L` is sent to `X` instead, carrying
//! into `X`'s phis the value they had on the exit edges; `X`'s entries for the exit edges are
//! dropped and `L`'s blocks deleted (they are unreachable now: the header dominates them).
//! A predecessor that already had an edge to `X` with a different phi value is left alone (a
//! phi cannot tell two edges from one block apart). Loops are visited outermost first, and
//! the analyses are recomputed after each deletion.

use super::{FunctionCx, FunctionPass};
use crate::analysis::termination::loop_nest_terminates;
use crate::analysis::{Loop, LoopForest};
use crate::ir::{Block, Function, Inst, Opcode, Value};
use crate::analysis::funcinfo::FuncInfo;

pub struct LoopDeletion;

impl FunctionPass for LoopDeletion {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let info = cx.funcinfo(func);
        let mut deleted = 0u64;
        let mut blocks_removed = 0u64;
        'restart: loop {
            let loops = cx.analyses.loops(func);
            let domtree = cx.analyses.domtree(func);
            let cfg = cx.analyses.cfg(func);
            for l in loops.loops() {
                let header = loops.header(l);
                if header == func.entry() || !cfg.is_reachable(header) {
                    continue;
                }
                // Unreachable blocks may still branch into the loop body; they would be left
                // pointing at deleted blocks.
                let side_entry = loops.blocks(l).iter().any(|&b| b != header && cfg.preds(b).iter().any(|&p| !loops.contains(l, p)));
                if side_entry {
                    continue;
                }
                let Some(plan) = plan_deletion(func, &info, &loops, l) else { continue };
                if !loop_nest_terminates(func, &domtree, &loops, l) {
                    continue;
                }
                let entries: Vec<Block> = cfg.preds(header).iter().copied().filter(|&p| !loops.contains(l, p)).collect();
                if !entries_fit(func, &plan, &entries) {
                    continue;
                }
                blocks_removed += apply(func, &loops, l, &plan, &entries);
                deleted += 1;
                continue 'restart;
            }
            break;
        }
        cx.count("loops_deleted", deleted);
        cx.count("blocks_removed", blocks_removed);
        deleted > 0
    }
}

/// The exit block and, per phi of it, the value every exit edge carries.
struct Plan {
    exit: Block,
    phi_values: Vec<(Inst, Value)>,
}

fn plan_deletion(func: &Function, info: &FuncInfo, loops: &LoopForest, l: Loop) -> Option<Plan> {
    let blocks = loops.blocks(l);
    for &b in blocks {
        for inst in func.block_insts(b) {
            let op = func.opcode(inst);
            let effect_free = match op {
                Opcode::Call(callee) => {
                    let s = info.callee_summary(callee);
                    s.is_read_only() && s.always_returns()
                }
                Opcode::Alloca { .. } => false,
                _ => !op.has_side_effects() || op.is_terminator(),
            };
            if !effect_free {
                return None;
            }
            if let Some(v) = func.result(inst)
                && func.users(v).iter().any(|&u| func.inst_block(u).is_none_or(|ub| !loops.contains(l, ub)))
            {
                return None;
            }
        }
    }
    let [exit] = loops.exit_blocks(l) else { return None };
    let exit = *exit;
    let mut phi_values = Vec::new();
    for phi in func.block_phis(exit) {
        let mut value = None;
        for (pred, v) in func.inst(phi).phi_incoming() {
            if loops.contains(l, pred) {
                if value.is_some_and(|x| x != v) {
                    return None;
                }
                value = Some(v);
            }
        }
        phi_values.push((phi, value?));
    }
    Some(Plan { exit, phi_values })
}

/// An entering block that already branches to the exit must give its phis the same values.
fn entries_fit(func: &Function, plan: &Plan, entries: &[Block]) -> bool {
    entries.iter().all(|&p| {
        plan.phi_values.iter().all(|&(phi, v)| func.inst(phi).phi_incoming().all(|(b, x)| b != p || x == v))
    })
}

/// Performs the deletion; returns the number of blocks removed.
fn apply(func: &mut Function, loops: &LoopForest, l: Loop, plan: &Plan, entries: &[Block]) -> u64 {
    let header = loops.header(l);
    let blocks: Vec<Block> = loops.blocks(l).to_vec();
    for &b in &blocks {
        func.remove_phi_pred(plan.exit, b);
    }
    for &p in entries {
        let term = func.terminator(p).expect("a predecessor ends in a terminator");
        let edges = func.targets(term).iter().filter(|&&t| t == header).count();
        func.retarget_edge(p, header, plan.exit);
        for &(phi, v) in &plan.phi_values {
            for _ in 0..edges {
                func.push_phi_incoming(phi, p, v);
            }
        }
    }
    // Values of the loop are used only inside it; `remove_block` turns those uses into undef.
    for &b in &blocks {
        func.remove_block(b);
    }
    blocks.len() as u64
}
