//! BackendStage `arm-copy-prop`: removes register copies left by allocation, using liveness of
//! physical registers.
//!
//! The allocator cannot rematerialise or always assign a value the register its consumer
//! wants, so sequences like `mov r4, #10; mov r0, r4` or `mov r1, r6; sub r0, r1, #1` remain.
//! For a copy `mov B, A` (or `vmov.f32 B, A`) in a block:
//!
//! * **Retarget the definition**: if `A` is dead after the copy and was defined earlier in
//!   the block by a simple instruction (one plain definition, no temporaries, no clobbers,
//!   no tied operands), with neither `A` nor `B` mentioned in between, that instruction
//!   defines `B` directly and the copy goes.
//! * **Forward the source**: otherwise, if every later read of `B` (until `B` is redefined,
//!   or to the end of the block when `B` is dead there) is a plain register use that can read
//!   `A` instead — `A` not redefined before it, no fixed-register or tied use, no early
//!   temporary of that instruction in `A` — the reads are rewritten and the copy goes.
//!
//! Pure instructions whose only definition is dead are deleted as well. Liveness is a
//! backward data-flow over the blocks (calls kill their clobbers); a liveness that is
//! slightly stale after earlier rewrites is only ever a superset, which keeps every rule safe.
//!
//! Cost: a block is swept front to back with removed instructions marked rather than
//! shifted out, liveness is widened over the range a rewrite touched instead of recomputed,
//! and each rewrite looks at most [`WINDOW`] instructions away, so a sweep is linear in the
//! block; sweeps repeat (a bounded number of times) while they change something.

use regalloc2::{PReg, PRegSet};
use smallvec::SmallVec;

use super::mir::{MInst, Op2, OperandVisitor, PFunction, Reg};
use crate::faults::{ARM_COPY_PROP_CALL_CLOBBER, FaultSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// A plain register read.
    Use,
    /// A read pinned to its register (call arguments, return value), tied to a definition, or
    /// read late (after the instruction writes its definitions, so it must keep a register
    /// of its own): never rewritten.
    PinnedUse,
    /// A plain definition at the end of the instruction.
    Def,
    /// A fixed, tied or early (temporary) definition.
    OtherDef,
}

/// The physical register operands of an instruction with their kinds, in visiting order.
pub(super) type Operands = SmallVec<[(PReg, Kind); 6]>;

pub(super) fn operands(inst: &MInst) -> Operands {
    struct Collect(SmallVec<[(Option<PReg>, Kind); 6]>);
    impl OperandVisitor for Collect {
        fn reg_use(&mut self, r: &mut Reg) {
            self.0.push((r.preg(), Kind::Use));
        }
        fn reg_use_late(&mut self, r: &mut Reg) {
            self.0.push((r.preg(), Kind::PinnedUse));
        }
        fn reg_def(&mut self, r: &mut Reg) {
            self.0.push((r.preg(), Kind::Def));
        }
        fn reg_temp(&mut self, r: &mut Reg) {
            self.0.push((r.preg(), Kind::OtherDef));
        }
        fn reg_reuse_def(&mut self, r: &mut Reg, input: usize) {
            if let Some(op) = self.0.get_mut(input) {
                op.1 = Kind::PinnedUse;
            }
            self.0.push((r.preg(), Kind::OtherDef));
        }
        fn fixed_use(&mut self, r: &mut Reg, _p: PReg) {
            self.0.push((r.preg(), Kind::PinnedUse));
        }
        fn fixed_def(&mut self, r: &mut Reg, _p: PReg) {
            self.0.push((r.preg(), Kind::OtherDef));
        }
    }
    let mut c = Collect(SmallVec::new());
    inst.visit_ref(&mut c);
    c.0.into_iter().filter_map(|(p, k)| p.map(|p| (p, k))).collect()
}

/// Replaces the register of operand number `idx` (in visiting order).
pub(super) fn set_operand(inst: &mut MInst, idx: usize, p: PReg) {
    struct Set {
        idx: usize,
        next: usize,
        p: PReg,
    }
    impl Set {
        fn at(&mut self, r: &mut Reg) {
            if self.next == self.idx {
                *r = Reg::Phys(self.p);
            }
            self.next += 1;
        }
    }
    impl OperandVisitor for Set {
        fn reg_use(&mut self, r: &mut Reg) {
            self.at(r)
        }
        fn reg_def(&mut self, r: &mut Reg) {
            self.at(r)
        }
        fn reg_temp(&mut self, r: &mut Reg) {
            self.at(r)
        }
        fn reg_reuse_def(&mut self, r: &mut Reg, _input: usize) {
            self.at(r)
        }
        fn fixed_use(&mut self, r: &mut Reg, _p: PReg) {
            self.at(r)
        }
        fn fixed_def(&mut self, r: &mut Reg, _p: PReg) {
            self.at(r)
        }
    }
    inst.visit(&mut Set { idx, next: 0, p });
}

pub(super) fn defs_uses(inst: &MInst) -> (PRegSet, PRegSet) {
    defs_uses_of(inst, &operands(inst))
}

/// [`defs_uses`] of `inst` whose [`operands`] are `ops`.
fn defs_uses_of(inst: &MInst, ops: &Operands) -> (PRegSet, PRegSet) {
    let mut defs = inst.clobbers();
    let mut uses = PRegSet::empty();
    // A predicated write may not happen: the old value lives on, as if read.
    let conditional = matches!(inst, MInst::Pred { .. });
    for &(p, k) in ops {
        match k {
            Kind::Use | Kind::PinnedUse => uses.add(p),
            Kind::Def | Kind::OtherDef => {
                defs.add(p);
                if conditional {
                    uses.add(p);
                }
            }
        }
    }
    (defs, uses)
}

/// `(dst, src)` of a register copy.
fn as_copy(inst: &MInst) -> Option<(PReg, PReg)> {
    match *inst {
        MInst::Mov { rd: Reg::Phys(d), op2: Op2::Reg(Reg::Phys(s)) } => Some((d, s)),
        MInst::VMov { sd: Reg::Phys(d), sm: Reg::Phys(s) } => Some((d, s)),
        _ => None,
    }
}

/// Instructions without effects besides writing their single plain definition.
fn is_simple(inst: &MInst) -> bool {
    matches!(
        inst,
        MInst::Alu { .. }
            | MInst::Mov { .. }
            | MInst::LoadImm { .. }
            | MInst::LoadSym { .. }
            | MInst::FrameAddr { .. }
            | MInst::Mul { .. }
            | MInst::Mla { .. }
            | MInst::Mls { .. }
            | MInst::Smmul { .. }
            | MInst::Sdiv { .. }
            | MInst::SetCond { .. }
            | MInst::Ldr { .. }
            | MInst::Vldr { .. }
            | MInst::VArith { .. }
            | MInst::VNeg { .. }
            | MInst::VMov { .. }
            | MInst::VMovImm { .. }
            | MInst::VMovFromCore { .. }
            | MInst::VMovToCore { .. }
            | MInst::VCvtF32S32 { .. }
            | MInst::VCvtS32F32 { .. }
    )
}

/// A simple instruction whose definitions are all dead: removing it changes nothing.
fn is_dead(inst: &MInst, live_after: PRegSet) -> bool {
    let ops = operands(inst);
    is_simple(inst)
        && ops.iter().all(|&(p, k)| match k {
            Kind::Def => !live_after.contains(p),
            Kind::OtherDef => false,
            Kind::Use | Kind::PinnedUse => true,
        })
        && ops.iter().any(|&(_, k)| k == Kind::Def)
}

/// The physical registers live at the end of each block (by position), calls killing their
/// clobbers.
pub(super) fn live_outs(pf: &PFunction) -> Vec<PRegSet> {
    let n = pf.blocks.len();
    let summaries: Vec<(PRegSet, PRegSet)> = pf
        .blocks
        .iter()
        .map(|(_, b)| {
            // (upward-exposed uses, defs)
            let (mut gen_, mut kill) = (PRegSet::empty(), PRegSet::empty());
            for inst in b.insts.iter().rev() {
                let (d, u) = defs_uses(inst);
                kill.union_from(d);
                gen_ = (gen_ & d.invert()) | u;
            }
            (gen_, kill)
        })
        .collect();
    let succs = pf.successor_positions();
    let mut live_in = vec![PRegSet::empty(); n];
    let mut live_out = vec![PRegSet::empty(); n];
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..n).rev() {
            let mut out = PRegSet::empty();
            for &s in &succs[i] {
                out.union_from(live_in[s as usize]);
            }
            let (gen_, kill) = summaries[i];
            let inn = gen_ | (out & kill.invert());
            if inn != live_in[i] || out != live_out[i] {
                live_in[i] = inn;
                live_out[i] = out;
                changed = true;
            }
        }
    }
    live_out
}

/// How far (in instructions) a rewrite looks for the definition it retargets or the reads
/// it forwards to. Beyond it the rewrite is not attempted, so a block costs time linear in
/// its length however long its straight-line runs are.
const WINDOW: usize = 256;

/// Sweeps of one block per round; each starts from exact liveness.
const SWEEPS_PER_BLOCK: usize = 8;

pub fn run(pf: &mut PFunction, faults: &FaultSet) {
    let ignore_call_clobbers = faults.is_on(ARM_COPY_PROP_CALL_CLOBBER);
    for _ in 0..4 {
        let live_out = live_outs(pf);
        let mut changed = false;
        for (i, (_, block)) in pf.blocks.iter_mut().enumerate() {
            for _ in 0..SWEEPS_PER_BLOCK {
                if !sweep(&mut block.insts, live_out[i], ignore_call_clobbers) {
                    break;
                }
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

/// One sweep over a block: dead simple instructions go (backward, with exact liveness), then
/// copies are removed front to back. Removed instructions are marked and dropped at the end,
/// so indices stay put; after each rewrite the liveness of the affected range is widened,
/// never narrowed (a superset keeps every rule safe). Reports whether anything changed.
///
/// The operands of every instruction are collected once per sweep (and again for an
/// instruction whose operand a rewrite changed): the rewrites look back and ahead up to
/// [`WINDOW`] instructions for every copy, and collecting operands there each time was most of
/// the stage's cost.
fn sweep(insts: &mut Vec<MInst>, live_out: PRegSet, ignore_call_clobbers: bool) -> bool {
    let n = insts.len();
    let mut ops: Vec<Operands> = insts.iter().map(operands).collect();
    let mut deleted = vec![false; n];
    let mut live_after = vec![PRegSet::empty(); n];
    let mut changed = false;
    let mut live = live_out;
    for i in (0..n).rev() {
        live_after[i] = live;
        if is_dead(&insts[i], live) {
            deleted[i] = true;
            changed = true;
            continue;
        }
        let (d, u) = defs_uses_of(&insts[i], &ops[i]);
        live = (live & d.invert()) | u;
    }
    for i in 0..n {
        if deleted[i] {
            continue;
        }
        let Some((dst, src)) = as_copy(&insts[i]) else {
            continue;
        };
        let removed = if dst == src {
            true
        } else if !live_after[i].contains(src) && let Some(j) = retarget_definition(insts, &mut ops, &deleted, i, dst, src) {
            for l in &mut live_after[j..i] {
                l.add(dst);
            }
            true
        } else if let Some(last) = forward_source(insts, &mut ops, &deleted, i, dst, src, live_out, ignore_call_clobbers) {
            for l in &mut live_after[i..last] {
                l.add(src);
            }
            true
        } else {
            false
        };
        if removed {
            deleted[i] = true;
            changed = true;
        }
    }
    if changed {
        let mut index = 0;
        insts.retain(|_| {
            index += 1;
            !deleted[index - 1]
        });
    }
    changed
}

/// Makes the definition of `src` that the copy `insts[i]` reads define `dst` instead;
/// returns its index. The caller removes the copy.
/// `ops` holds every instruction's [`operands`]; the retargeted definition's are updated.
fn retarget_definition(insts: &mut [MInst], ops_of: &mut [Operands], deleted: &[bool], i: usize, dst: PReg, src: PReg) -> Option<usize> {
    for j in (i.saturating_sub(WINDOW)..i).rev().filter(|&j| !deleted[j]) {
        let ops = &ops_of[j];
        let defines_src = ops.iter().any(|&(p, k)| p == src && matches!(k, Kind::Def | Kind::OtherDef))
            || insts[j].clobbers().contains(src);
        if defines_src {
            let defs: SmallVec<[usize; 2]> = ops
                .iter()
                .enumerate()
                .filter(|(_, (_, k))| matches!(k, Kind::Def | Kind::OtherDef))
                .map(|(n, _)| n)
                .collect();
            let simple = is_simple(&insts[j]) && defs.len() == 1 && ops[defs[0]].1 == Kind::Def;
            if !simple {
                return None;
            }
            set_operand(&mut insts[j], defs[0], dst);
            ops_of[j] = operands(&insts[j]);
            return Some(j);
        }
        let mentions = |r: PReg| ops.iter().any(|&(p, _)| p == r) || insts[j].clobbers().contains(r);
        if mentions(src) || mentions(dst) {
            return None;
        }
    }
    None
}

/// Rewrites every later read of `dst` to read `src`, when all of them can; returns the index
/// of the last instruction looked at (the reads rewritten are before or at it). The caller
/// removes the copy. `ops` holds every instruction's [`operands`]; those of the rewritten
/// reads are updated.
#[allow(clippy::too_many_arguments)]
fn forward_source(
    insts: &mut [MInst],
    ops_of: &mut [Operands],
    deleted: &[bool],
    i: usize,
    dst: PReg,
    src: PReg,
    live_out: PRegSet,
    ignore_call_clobbers: bool,
) -> Option<usize> {
    let mut rewrites: SmallVec<[(usize, usize); 4]> = SmallVec::new();
    let mut src_clobbered = false;
    let mut redefined = false;
    let mut last = i;
    let end = insts.len().min(i + 1 + WINDOW);
    for k in (i + 1..end).filter(|&k| !deleted[k]) {
        let inst = &insts[k];
        last = k;
        let ops = &ops_of[k];
        let clobbers = inst.clobbers();
        for (n, &(p, kind)) in ops.iter().enumerate() {
            if p != dst || !matches!(kind, Kind::Use | Kind::PinnedUse) {
                continue;
            }
            let src_temp = ops.iter().any(|&(q, kk)| q == src && kk == Kind::OtherDef);
            if src_clobbered || kind != Kind::Use || src_temp {
                return None;
            }
            rewrites.push((k, n));
        }
        if ops.iter().any(|&(p, kk)| p == dst && matches!(kk, Kind::Def | Kind::OtherDef)) || clobbers.contains(dst) {
            redefined = true;
            break;
        }
        let src_killed_by_call = clobbers.contains(src) && !ignore_call_clobbers;
        if ops.iter().any(|&(p, kk)| p == src && matches!(kk, Kind::Def | Kind::OtherDef)) || src_killed_by_call {
            src_clobbered = true;
        }
    }
    // Past the window nothing is known about later reads.
    let reached_end = end == insts.len();
    if !redefined && (!reached_end || live_out.contains(dst)) {
        return None;
    }
    for &(k, n) in &rewrites {
        set_operand(&mut insts[k], n, src);
        ops_of[k] = operands(&insts[k]);
    }
    Some(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::arm::mir::{AluOp, BlockOrigin, FrameRequest, PBlock};
    use crate::isa::arm::regs;
    use regalloc2::Block;

    fn r(n: u8) -> Reg {
        Reg::Phys(regs::gpr(n))
    }

    /// `insts` as one block returning r0, after the stage.
    fn run_on(insts: Vec<MInst>) -> Vec<MInst> {
        let mut pf = PFunction {
            sym: "f".into(),
            blocks: vec![(Block::new(0), PBlock { insts, origin: BlockOrigin::Entry })],
            frame: FrameRequest::default(),
            num_spill_slots: 0,
        };
        run(&mut pf, &FaultSet::default());
        pf.blocks.pop().unwrap().1.insts
    }

    fn add(rd: u8, rn: u8, imm: u32) -> MInst {
        MInst::Alu { op: AluOp::Add, rd: r(rd), rn: r(rn), op2: Op2::Imm(imm) }
    }

    fn mov(rd: u8, rs: u8) -> MInst {
        MInst::Mov { rd: r(rd), op2: Op2::Reg(r(rs)) }
    }

    fn ret() -> MInst {
        MInst::Ret { val: Some((r(0), regs::gpr(0))) }
    }

    #[test]
    fn chains_of_copies_and_dead_definitions_go_in_one_run() {
        // r4 = r1 + 1; r5 = r4 (the definition is retargeted); r6 = r1 + 3 is dead.
        let out = run_on(vec![add(4, 1, 1), mov(5, 4), add(6, 1, 3), add(0, 5, 2), ret()]);
        assert_eq!(out, vec![add(5, 1, 1), add(0, 5, 2), ret()]);
    }

    #[test]
    fn reads_beyond_the_window_keep_the_copy() {
        // The copy's only read is further away than the stage looks: it must stay (and the
        // read must still read the copy's destination).
        let mut insts = vec![add(4, 1, 1), mov(5, 4), MInst::Str { rs: r(4), addr: crate::isa::arm::mir::Addr::Imm { base: r(2), off: 0 } }];
        for k in 0..WINDOW {
            insts.push(MInst::Str { rs: r(1), addr: crate::isa::arm::mir::Addr::Imm { base: r(2), off: 4 * (k as i32 % 64) } });
        }
        insts.push(add(0, 5, 2));
        insts.push(ret());
        let out = run_on(insts.clone());
        assert_eq!(out, insts, "nothing to remove within reach");
        // Within reach, the same copy goes.
        let mut near: Vec<MInst> = insts[..3].to_vec();
        near.extend([add(0, 5, 2), ret()]);
        let out = run_on(near);
        assert!(!out.contains(&mov(5, 4)), "{out:?}");
    }

    #[test]
    fn a_late_read_is_not_forwarded_into_the_register_the_instruction_writes() {
        // r1 = r0; r0 = r1 % 8 reads r1 after writing r0 (`ands r0, r1, #7; cmpne r1, #0;
        // submi ...`): forwarding r0 into that read would test the remainder instead of the
        // dividend (found by the campaign: a negative remainder for a positive dividend).
        let rem = |rd: u8, rn: u8| MInst::SRemPow2 { rd: r(rd), rn: r(rn), k: 3, tmp: None };
        let store = MInst::Str { rs: r(0), addr: crate::isa::arm::mir::Addr::Imm { base: r(2), off: 0 } };
        let insts = vec![add(0, 3, 1), mov(1, 0), store.clone(), rem(0, 1), ret()];
        let out = run_on(insts.clone());
        assert!(!out.contains(&rem(0, 0)), "{out:?}");
        assert!(out.iter().any(|i| matches!(i, MInst::SRemPow2 { rd, rn, .. } if rd != rn)), "{out:?}");
    }
}
