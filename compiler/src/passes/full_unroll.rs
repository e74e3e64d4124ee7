//! `full-unroll` (catalogue: FullyUnroll): replaces a loop with a known, small trip count by
//! straight-line copies of its body.
//!
//! Why: a loop that runs a handful of times pays a compare and a branch per iteration and
//! keeps its values in phis; unrolled, constant folding sees every iteration's constants.
//!
//! Loops are first put in canonical form (the pass runs `loop-simplify` itself).
//!
//! Scope: single-block loops — the header is the latch and the only exiting block, as
//! `loop-rotate` followed by `simplify-cfg` leaves small innermost loops — recognised as
//! counted ([`CountedLoop`]) with a constant trip count `T` (the number of times the block
//! runs; at least 1 for such a bottom-tested loop). Budget: `T ≤` [`MAX_TRIP`] and
//! `T × (non-phi instructions) ≤` [`MAX_UNROLLED_INSTS`], so code grows by a bounded amount.
//! A function the configuration pins rolled (`--keep-rolled`) is left alone.
//!
//! Transformation: `T` copies of the block's instructions (without its phis and branch) are
//! appended to the preheader. Copy `k` reads the header phis as their value for iteration
//! `k`: the preheader's incoming value for `k = 0`, else copy `k−1`'s value of the latch
//! input. The preheader then jumps straight to the exit block; every use outside the loop (it
//! can only be after the exit: a counted loop has one exit, and loop-simplify made it
//! dedicated) takes the last copy's value, and the loop block is deleted. Every instruction
//! runs exactly as often and in the same order as before, so calls, stores and divisions
//! need no special care.

use super::loop_clone::{ValueMap, clone_before, mapped, next_phi_values, phi_input};
use super::loop_simplify::LoopSimplify;
use super::{FunctionCx, FunctionPass};
use crate::analysis::counted::CountedLoop;
use crate::analysis::{ControlFlowGraph, Loop, LoopForest};
use crate::ir::{Block, Function, Inst, Opcode};

pub struct FullUnroll;

/// Largest trip count fully unrolled. 64 rather than 32 so that short accumulation loops like
/// the competition's `while (j < 60) tmp = tmp + x;` unroll (within [`MAX_UNROLLED_INSTS`]) and
/// instcombine folds them to one multiply: a tenfold gain on dead-code-elimination-2/3.
pub const MAX_TRIP: u64 = 64;
/// Largest number of instructions the copies may add.
pub const MAX_UNROLLED_INSTS: u64 = 256;

impl FunctionPass for FullUnroll {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let mut changed = LoopSimplify.run(func, cx);
        if cx.pins.rolled.contains(&func.name) {
            return changed;
        }
        let mut unrolled = 0u64;
        loop {
            let cfg = cx.analyses.cfg(func);
            let loops = cx.analyses.loops(func);
            let Some((cl, exit, trip)) = loops.loops_inner_first().find_map(|l| candidate(func, &cfg, &loops, l)) else {
                break;
            };
            unroll(func, &cl, exit, trip);
            unrolled += 1;
            changed = true;
        }
        cx.count("loops_unrolled", unrolled);
        changed
    }
}

fn candidate(func: &Function, cfg: &ControlFlowGraph, loops: &LoopForest, l: Loop) -> Option<(CountedLoop, Block, u64)> {
    if loops.blocks(l).len() != 1 {
        return None;
    }
    let cl = CountedLoop::recognise(func, cfg, loops, l)?;
    if cl.header != cl.latch || cl.exiting != cl.header {
        return None;
    }
    let trip = cl.trip_count(func)?;
    let body = func.block_insts(cl.header).filter(|&i| func.opcode(i) != Opcode::Phi).count() as u64;
    if trip == 0 || trip > MAX_TRIP || trip.saturating_mul(body) > MAX_UNROLLED_INSTS {
        return None;
    }
    if func.block_insts(cl.header).any(|i| matches!(func.opcode(i), Opcode::Alloca { .. })) {
        return None;
    }
    let [exit] = loops.exit_blocks(l) else { return None };
    // The exit must be dedicated (only the loop block branches to it).
    if cfg.preds(*exit) != [cl.header] {
        return None;
    }
    Some((cl, *exit, trip))
}

fn unroll(func: &mut Function, cl: &CountedLoop, exit: Block, trip: u64) {
    let (pre, h) = (cl.preheader, cl.header);
    let insts: Vec<Inst> = func.block_insts(h).collect();
    let phis: Vec<Inst> = insts.iter().copied().filter(|&i| func.opcode(i) == Opcode::Phi).collect();
    let body: Vec<Inst> =
        insts.iter().copied().filter(|&i| func.opcode(i) != Opcode::Phi && !func.opcode(i).is_terminator()).collect();
    let pre_term = func.terminator(pre).expect("preheader has a terminator");
    // Value of each loop-defined value in the current copy.
    let mut map = ValueMap::default();
    for &phi in &phis {
        let r = func.result(phi).expect("phi has a result");
        map.insert(r, phi_input(func, phi, pre).expect("canonical loop phi"));
    }
    for k in 0..trip {
        if k > 0 {
            // Phis for iteration k: the latch inputs as computed by copy k−1.
            for (r, v) in next_phi_values(func, &phis, h, &map) {
                map.insert(r, v);
            }
        }
        clone_before(func, &body, &mut map, pre_term);
    }
    // Leave the loop: the exit's phis take the last copy's values from the preheader.
    for phi in func.block_phis(exit).collect::<Vec<_>>() {
        for i in 0..func.targets(phi).len() {
            if func.targets(phi)[i] == h {
                let v = func.args(phi)[i];
                func.set_arg(phi, i, mapped(&map, v));
                func.set_target(phi, i, pre);
            }
        }
    }
    func.retarget_edge(pre, h, exit);
    for &inst in &insts {
        if let Some(r) = func.result(inst)
            && let Some(&m) = map.get(&r)
        {
            func.replace_all_uses(r, m);
        }
    }
    func.remove_block(h);
}
