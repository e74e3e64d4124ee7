//! `lcm` (catalogue: Local Code Motion): within a block, moves an instruction whose only user
//! is a later instruction of the same block to right before that user.
//!
//! Why: after `gcm` places instructions in blocks, each sits wherever it happened to be in
//! the block; computing a value just before its single use shortens its live range, which
//! lowers register pressure (fewer spills) in the back end.
//!
//! What moves: pure instructions that cannot trap, whose uses are all in one non-phi
//! instruction later in the same block. The move never crosses a load, store, `memzero` or
//! call (the instructions in between are checked), so memory and I/O order are untouched and
//! a value is never computed across an effect. Blocks are scanned backwards so a chain of
//! single-use values (`a` used by `b` used by `c`) ends up contiguous before `c` in one run;
//! an instruction already right before its user, or separated from it only by other
//! instructions feeding that user, is left alone — so a second run changes nothing.

use super::{FunctionCx, FunctionPass};
use crate::ir::{Function, Inst, Opcode};

pub struct Lcm;

impl FunctionPass for Lcm {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let mut moved = 0u64;
        let blocks = func.layout().to_vec();
        for b in blocks {
            let mut cur = func.last_inst(b);
            while let Some(inst) = cur {
                cur = func.prev_inst(inst);
                if let Some(user) = single_local_user(func, inst)
                    && scan_between(func, inst, user) == Scan::Move
                {
                    func.detach_inst(inst);
                    func.insert_inst_before(user, inst);
                    moved += 1;
                }
            }
        }
        cx.count("insts_moved", moved);
        moved > 0
    }
}

/// The one instruction using `inst`'s result, when it is a later non-phi instruction of the
/// same block and `inst` may move.
fn single_local_user(func: &Function, inst: Inst) -> Option<Inst> {
    let op = func.opcode(inst);
    if !op.is_pure() || op.may_trap() {
        return None;
    }
    let users = func.users(func.result(inst)?);
    let user = *users.first()?;
    if users.iter().any(|&u| u != user) || func.opcode(user) == Opcode::Phi {
        return None;
    }
    let block = func.inst_block(inst)?;
    (func.inst_block(user) == Some(block) && func.inst_seq(user) > func.inst_seq(inst)).then_some(user)
}

#[derive(PartialEq, Eq)]
enum Scan {
    /// A load, store, `memzero` or call lies in between.
    Blocked,
    /// Everything in between also feeds the user (an operand tree packed before it): moving
    /// would only reshuffle the group, and a second run would shuffle it back.
    InPlace,
    Move,
}

/// What lies strictly between `from` and its user `to` (same block).
fn scan_between(func: &Function, from: Inst, to: Inst) -> Scan {
    let mut grouped = true;
    let mut cur = func.next_inst(from);
    while let Some(i) = cur {
        if i == to {
            return if grouped { Scan::InPlace } else { Scan::Move };
        }
        let op = func.opcode(i);
        if op.reads_memory() || op.has_side_effects() {
            return Scan::Blocked;
        }
        grouped &= single_local_user(func, i).is_some_and(|u| func.inst_seq(u) <= func.inst_seq(to));
        cur = func.next_inst(i);
    }
    Scan::Blocked
}
