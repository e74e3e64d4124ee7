//! BackendStage `arm-spill-elim`: deletes spill-slot traffic that moves a value to where it already
//! is, across blocks.
//!
//! `regalloc2` splits a long-lived value into pieces and reconciles them with moves at block
//! boundaries, so a value that is never redefined can still be reloaded and stored back on
//! every edge of a loop: `ldr r1, [sp, #8]` in the predecessor, `str r1, [sp, #8]` on the
//! edge, although slot and register agree all along (the brainfuck interpreters of the
//! performance suite run such edges in their dispatch loop). This stage tracks, at every
//! point, which registers are known to hold the same 32 bits as each spill slot, and then
//!
//! * drops a store `str r, [slot]` when `r` is known to equal the slot;
//! * drops a reload `ldr r, [slot]` when `r` is known to equal the slot;
//! * turns a reload into `mov r, q` (`vmov.f32` for VFP) when another register `q` of the
//!   same class is known to equal the slot (a register move is cheaper than a load).
//!
//! # Analysis
//!
//! A forward must-analysis over the blocks: the state maps each spill slot to the set of
//! physical registers holding its value. The entry starts with nothing known; a block's
//! input is the intersection of its predecessors' outputs (a fact holds only if it holds on
//! every incoming edge); unvisited predecessors are ignored, which is the optimistic start
//! of the iteration, and the usual fixpoint over reverse post-order makes it sound.
//! Transfer, per instruction:
//!
//! * a reload of slot `n` into `r`: `r` leaves every set, then joins `n`'s — unless it is
//!   already in `n`'s set, in which case the reload is redundant and changes nothing;
//! * a store of `r` to slot `n`: `n`'s set becomes `{r}` — unless `r` is already in it;
//! * any other write of a register (plain, tied, temporary or fixed definitions, and a
//!   call's clobbers) removes that register from every set;
//! * any other instruction addressing a spill slot empties every set (nothing but plain
//!   word loads and stores is expected there; this keeps the stage safe if that changes).
//!
//! The rewrite replays the same transfer through each block from its fixpoint input, so a
//! deleted instruction is exactly one the analysis treated as a no-op.
//!
//! # Assumptions
//!
//! * Spill slots are only ever accessed as `Addr::Frame { obj: Spill(n), off: 0 }` by word
//!   loads and stores: no instruction takes a spill slot's address (`FrameAddr` names only
//!   `alloca` areas), so stores through registers, to other frame objects, and by callees
//!   never change a slot.
//! * Every register an instruction writes is reported by [`MInst::visit`] or
//!   [`MInst::clobbers`]. Scratch registers of the emitter (`ip` for out-of-range offsets,
//!   `d16`–`d19`) are never allocated when they are used, so no fact can name them.
//! * The stage runs on allocated code before block layout: blocks end in `b`, `b<cc>` + `b`
//!   or a return. A block that does not (after `arm-branch-opt`) is treated as falling
//!   through to the next block as well ([`PFunction::successor_positions`]), which only
//!   adds edges and so stays safe.
//! * Neither moves, loads nor stores touch the flags, so replacing a reload by a move never
//!   disturbs a comparison and its branch.

use regalloc2::{PReg, PRegSet};

use super::mir::{Addr, FrameObj, MInst, Op2, PFunction, Reg};
use crate::analysis::dataflow::graph::reverse_postorder;

/// Registers known to hold each spill slot's value: `(slot, registers)` sorted by slot, the
/// slots with no known register left out, and the number of slots. Sparse because a function
/// can have thousands of slots (unoptimised code) while only a few registers hold any at a
/// time: a dense table made every register write cost a pass over all slots.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Facts {
    known: Vec<(usize, PRegSet)>,
    slots: usize,
}

impl Facts {
    fn nothing(slots: usize) -> Facts {
        Facts { known: Vec::new(), slots }
    }

    fn get(&self, slot: usize) -> PRegSet {
        match self.known.binary_search_by_key(&slot, |&(n, _)| n) {
            Ok(i) => self.known[i].1,
            Err(_) => PRegSet::empty(),
        }
    }

    fn set(&mut self, slot: usize, regs: PRegSet) {
        match self.known.binary_search_by_key(&slot, |&(n, _)| n) {
            Ok(i) if regs == PRegSet::empty() => {
                self.known.remove(i);
            }
            Ok(i) => self.known[i].1 = regs,
            Err(_) if regs == PRegSet::empty() => {}
            Err(i) => self.known.insert(i, (slot, regs)),
        }
    }

    fn meet(&mut self, other: &Facts) {
        let mut theirs = other.known.iter().peekable();
        self.known.retain_mut(|(slot, regs)| {
            while theirs.next_if(|&&(n, _)| n < *slot).is_some() {}
            match theirs.peek() {
                Some(&&(n, other_regs)) if n == *slot => {
                    regs.intersect_from(other_regs);
                    *regs != PRegSet::empty()
                }
                _ => false,
            }
        });
    }

    fn forget_reg(&mut self, p: PReg) {
        self.known.retain_mut(|(_, regs)| {
            regs.remove(p);
            *regs != PRegSet::empty()
        });
    }

    fn forget_all(&mut self) {
        self.known.clear();
    }
}

/// What the rewrite does with one instruction.
enum Action {
    Keep,
    Delete,
    /// Replace a reload by a copy from this register.
    CopyFrom(PReg),
}

/// The spill slot a word access addresses, if it is one.
fn spill_slot(addr: &Addr) -> Option<usize> {
    match *addr {
        Addr::Frame { obj: FrameObj::Spill(n), off: 0 } => Some(n as usize),
        _ => None,
    }
}

fn addresses_spill_slot(inst: &MInst) -> bool {
    let addr = match inst {
        MInst::Ldr { addr, .. }
        | MInst::Str { addr, .. }
        | MInst::Vldr { addr, .. }
        | MInst::Vstr { addr, .. }
        | MInst::VStrF64 { addr, .. } => addr,
        _ => return false,
    };
    matches!(addr, Addr::Frame { obj: FrameObj::Spill(_), .. })
}

/// A reload `(register, slot)` or a store `(register, slot)` of a whole spill slot.
fn reload(inst: &MInst) -> Option<(PReg, usize)> {
    match inst {
        MInst::Ldr { rd: Reg::Phys(p), addr } | MInst::Vldr { sd: Reg::Phys(p), addr } => Some((*p, spill_slot(addr)?)),
        _ => None,
    }
}

fn store(inst: &MInst) -> Option<(PReg, usize)> {
    match inst {
        MInst::Str { rs: Reg::Phys(p), addr } | MInst::Vstr { ss: Reg::Phys(p), addr } => Some((*p, spill_slot(addr)?)),
        _ => None,
    }
}

/// Applies `inst` to `facts` and says what the rewrite may do with it.
fn transfer(inst: &MInst, facts: &mut Facts) -> Action {
    if let Some((p, n)) = reload(inst).filter(|&(_, n)| n < facts.slots) {
        let holding = facts.get(n);
        if holding.contains(p) {
            return Action::Delete;
        }
        let other = holding.into_iter().find(|q| q.class() == p.class());
        // `p` is not in slot `n`'s set, so forgetting it elsewhere leaves `holding` as it is.
        facts.forget_reg(p);
        let mut holding = holding;
        holding.add(p);
        facts.set(n, holding);
        return other.map_or(Action::Keep, Action::CopyFrom);
    }
    if let Some((p, n)) = store(inst).filter(|&(_, n)| n < facts.slots) {
        if facts.get(n).contains(p) {
            return Action::Delete;
        }
        let mut only = PRegSet::empty();
        only.add(p);
        facts.set(n, only);
        return Action::Keep;
    }
    if addresses_spill_slot(inst) {
        facts.forget_all();
    }
    let (defs, _) = inst.phys_defs_uses();
    for p in defs.into_iter().chain(inst.clobbers()) {
        facts.forget_reg(p);
    }
    Action::Keep
}

/// Runs the stage; returns how many instructions it deleted or turned into moves.
pub fn run(pf: &mut PFunction) -> usize {
    let slots = pf.num_spill_slots as usize;
    if slots == 0 || pf.blocks.is_empty() {
        return 0;
    }
    let succs = pf.successor_positions();
    // Blocks unreachable from the entry (position 0) are left out and left alone.
    let order = reverse_postorder(&succs, 0);

    // `None`: no path from the entry has reached the block yet. The entry starts with
    // nothing known and stays so: a meet with it never adds a fact.
    let mut inputs: Vec<Option<Facts>> = vec![None; pf.blocks.len()];
    inputs[0] = Some(Facts::nothing(slots));
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &order {
            let Some(mut facts) = inputs[b as usize].clone() else { continue };
            for inst in &pf.blocks[b as usize].1.insts {
                transfer(inst, &mut facts);
            }
            for &s in &succs[b as usize] {
                let s = s as usize;
                let merged = match &inputs[s] {
                    None => facts.clone(),
                    Some(old) => {
                        let mut m = old.clone();
                        m.meet(&facts);
                        m
                    }
                };
                if inputs[s].as_ref() != Some(&merged) {
                    inputs[s] = Some(merged);
                    changed = true;
                }
            }
        }
    }

    let mut rewritten = 0;
    for (b, (_, block)) in pf.blocks.iter_mut().enumerate() {
        let Some(mut facts) = inputs[b].take() else { continue };
        let old = std::mem::take(&mut block.insts);
        block.insts.reserve(old.len());
        for inst in old {
            match transfer(&inst, &mut facts) {
                Action::Keep => block.insts.push(inst),
                Action::Delete => rewritten += 1,
                Action::CopyFrom(q) => {
                    rewritten += 1;
                    block.insts.push(match inst {
                        MInst::Ldr { rd, .. } => MInst::Mov { rd, op2: Op2::Reg(Reg::Phys(q)) },
                        MInst::Vldr { sd, .. } => MInst::VMov { sd, sm: Reg::Phys(q) },
                        other => other,
                    });
                }
            }
        }
    }
    rewritten
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::arm::mir::{AluOp, CmpOp, Cond, FrameRequest};
    use crate::isa::arm::regs::{self, gpr, spr};
    use regalloc2::Block;
    use smallvec::SmallVec;

    fn slot(n: u32) -> Addr {
        Addr::Frame { obj: FrameObj::Spill(n), off: 0 }
    }
    fn r(n: u8) -> Reg {
        Reg::Phys(gpr(n))
    }
    fn s(n: u8) -> Reg {
        Reg::Phys(spr(n))
    }
    fn ldr(rd: u8, n: u32) -> MInst {
        MInst::Ldr { rd: r(rd), addr: slot(n) }
    }
    fn str_(rs: u8, n: u32) -> MInst {
        MInst::Str { rs: r(rs), addr: slot(n) }
    }
    fn add1(rd: u8) -> MInst {
        MInst::Alu { op: AluOp::Add, rd: r(rd), rn: r(rd), op2: Op2::Imm(1) }
    }
    fn jump(b: usize) -> MInst {
        MInst::Jump { target: Block::new(b) }
    }
    fn condbr(taken: usize, not_taken: usize) -> MInst {
        MInst::CondBr { cc: Cond::Ne, taken: Block::new(taken), not_taken: Block::new(not_taken) }
    }
    fn ret() -> MInst {
        MInst::Ret { val: None }
    }

    /// A function of the given blocks (block `i` has label `i`; entry first).
    fn func(blocks: Vec<Vec<MInst>>, slots: u32) -> PFunction {
        PFunction::of_blocks(blocks, FrameRequest::default(), slots)
    }

    fn after(blocks: Vec<Vec<MInst>>, slots: u32) -> (Vec<Vec<MInst>>, usize) {
        let mut pf = func(blocks, slots);
        let n = run(&mut pf);
        (pf.blocks.into_iter().map(|(_, b)| b.insts).collect(), n)
    }

    #[test]
    fn store_back_on_a_loop_edge_goes() {
        // The brainfuck pattern: reload in the loop, store back on the latch edge.
        let (out, n) = after(
            vec![
                vec![str_(1, 0), jump(1)],
                vec![ldr(1, 0), MInst::Cmp { op: CmpOp::Cmp, rn: r(1), op2: Op2::Imm(0) }, condbr(2, 3)],
                vec![str_(1, 0), jump(1)],
                vec![ret()],
            ],
            1,
        );
        // Slot 0 equals r1 on both edges into block 1, so its reload goes; the store back
        // in block 2 goes too.
        assert_eq!(out[1][0], MInst::Cmp { op: CmpOp::Cmp, rn: r(1), op2: Op2::Imm(0) });
        assert_eq!(out[2], vec![jump(1)]);
        assert_eq!(n, 2);
    }

    #[test]
    fn a_redefinition_in_one_predecessor_keeps_the_reload() {
        let blocks = vec![
            vec![str_(1, 0), condbr(1, 2)],
            vec![add1(1), jump(3)],
            vec![jump(3)],
            vec![ldr(1, 0), str_(1, 0), ret()],
        ];
        let (out, n) = after(blocks, 1);
        // Block 3's reload is needed (r1 changed on the path through block 1); the store
        // after it is redundant.
        assert_eq!(out[3], vec![ldr(1, 0), ret()]);
        assert_eq!(n, 1);
    }

    #[test]
    fn a_loop_that_redefines_the_register_keeps_the_reload() {
        // The back edge brings r1 + 1: the fact from the entry does not survive the meet.
        let blocks = vec![vec![str_(1, 0), jump(1)], vec![ldr(1, 0), add1(1), condbr(1, 2)], vec![ret()]];
        let (out, n) = after(blocks.clone(), 1);
        assert_eq!(out, blocks);
        assert_eq!(n, 0);
    }

    #[test]
    fn calls_clobber_caller_saved_registers_only() {
        let call = MInst::Call {
            sym: "getint".into(),
            uses: SmallVec::new(),
            defs: SmallVec::new(),
            clobbers: regs::call_clobbers(),
        };
        let (out, _) = after(vec![vec![str_(1, 0), str_(4, 1), call.clone(), ldr(1, 0), ldr(4, 1), ret()]], 2);
        assert_eq!(out[0], vec![str_(1, 0), str_(4, 1), call, ldr(1, 0), ret()]);
    }

    #[test]
    fn another_store_to_the_slot_ends_the_fact() {
        let (out, _) = after(vec![vec![str_(1, 0), str_(2, 0), ldr(1, 0), ldr(2, 0), ret()]], 1);
        assert_eq!(out[0], vec![str_(1, 0), str_(2, 0), MInst::Mov { rd: r(1), op2: Op2::Reg(r(2)) }, ret()]);
    }

    #[test]
    fn a_reload_from_another_holder_becomes_a_move_and_keeps_both_facts() {
        let (out, n) = after(vec![vec![ldr(1, 0), ldr(2, 0), str_(2, 0), str_(1, 0), ret()]], 1);
        assert_eq!(out[0], vec![ldr(1, 0), MInst::Mov { rd: r(2), op2: Op2::Reg(r(1)) }, ret()]);
        assert_eq!(n, 3);
        // VFP reloads are tracked the same way, per register class.
        let vldr = |sd: u8| MInst::Vldr { sd: s(sd), addr: slot(0) };
        let (out, _) = after(vec![vec![vldr(3), vldr(5), vldr(3), ret()]], 1);
        assert_eq!(out[0], vec![vldr(3), MInst::VMov { sd: s(5), sm: s(3) }, ret()]);
    }

    #[test]
    fn other_slots_and_other_frame_objects_are_independent() {
        let alloca = Addr::Frame { obj: FrameObj::Alloca(0), off: 0 };
        let through_reg = Addr::Imm { base: r(3), off: 0 };
        let blocks = vec![vec![
            str_(1, 0),
            str_(2, 1),
            MInst::Str { rs: r(5), addr: alloca },
            MInst::Str { rs: r(6), addr: through_reg },
            ldr(1, 0),
            ldr(2, 1),
            MInst::Ldr { rd: r(7), addr: alloca },
            ret(),
        ]];
        let (out, n) = after(blocks, 2);
        assert_eq!(n, 2);
        assert_eq!(out[0].len(), 6);
        assert!(out[0].contains(&MInst::Ldr { rd: r(7), addr: alloca }));
    }

    #[test]
    fn temporaries_and_tied_definitions_end_facts() {
        let memzero = MInst::MemZeroLoop { base: r(0), words: 64, ptr: r(1), count: Some(r(2)), zero: r(3) };
        let movcond = MInst::MovCond { cc: Cond::Eq, rd: r(4), rn: r(4), op2: Op2::Imm(1) };
        let blocks = vec![vec![
            str_(1, 0),
            str_(2, 1),
            str_(4, 2),
            memzero,
            movcond,
            ldr(1, 0),
            ldr(2, 1),
            ldr(4, 2),
            ret(),
        ]];
        let (out, n) = after(blocks.clone(), 3);
        assert_eq!((out[0].clone(), n), (blocks[0].clone(), 0));
    }

    #[test]
    fn unusual_spill_accesses_forget_everything() {
        let wide = MInst::VStrF64 { src: s(0), addr: slot(1) };
        let (out, n) = after(vec![vec![str_(1, 0), wide.clone(), ldr(1, 0), ret()]], 2);
        assert_eq!((out[0].clone(), n), (vec![str_(1, 0), wide, ldr(1, 0), ret()], 0));
    }

    #[test]
    fn unreachable_blocks_and_the_entry_get_nothing_for_free() {
        // Block 1 loops back into the entry: the entry's reload must stay.
        let blocks = vec![vec![ldr(1, 0), condbr(1, 2)], vec![str_(1, 0), jump(0)], vec![ret()], vec![ldr(1, 0), ret()]];
        let (out, n) = after(blocks.clone(), 1);
        // Block 1's store is redundant (r1 was just loaded from the slot); nothing else goes.
        assert_eq!(out[0], blocks[0]);
        assert_eq!(out[1], vec![jump(0)]);
        assert_eq!(out[3], blocks[3]);
        assert_eq!(n, 1);
    }
}
