//! Stage `arm-copy-prop`: removes register copies left by allocation, using liveness of
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

use regalloc2::{PReg, PRegSet};
use smallvec::SmallVec;

use super::mir::{MInst, Op2, OperandVisitor, PFunction, Reg};
use crate::faults::{ARM_COPY_PROP_CALL_CLOBBER, FaultSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A plain register read.
    Use,
    /// A read pinned to its register (call arguments, return value) or tied to a definition.
    PinnedUse,
    /// A plain definition at the end of the instruction.
    Def,
    /// A fixed, tied or early (temporary) definition.
    OtherDef,
}

fn operands(inst: &MInst) -> SmallVec<[(PReg, Kind); 6]> {
    struct Collect(SmallVec<[(Option<PReg>, Kind); 6]>);
    impl OperandVisitor for Collect {
        fn reg_use(&mut self, r: &mut Reg) {
            self.0.push((r.preg(), Kind::Use));
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
    inst.clone().visit(&mut c);
    c.0.into_iter().filter_map(|(p, k)| p.map(|p| (p, k))).collect()
}

/// Replaces the register of operand number `idx` (in visiting order).
fn set_operand(inst: &mut MInst, idx: usize, p: PReg) {
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

fn defs_uses(inst: &MInst) -> (PRegSet, PRegSet) {
    let mut defs = inst.clobbers();
    let mut uses = PRegSet::empty();
    for (p, k) in operands(inst) {
        match k {
            Kind::Use | Kind::PinnedUse => uses.add(p),
            Kind::Def | Kind::OtherDef => defs.add(p),
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

fn live_outs(pf: &PFunction) -> Vec<PRegSet> {
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

pub fn run(pf: &mut PFunction, faults: &FaultSet) {
    let ignore_call_clobbers = faults.is_on(ARM_COPY_PROP_CALL_CLOBBER);
    for _ in 0..4 {
        let live_out = live_outs(pf);
        let mut changed = false;
        for (i, (_, block)) in pf.blocks.iter_mut().enumerate() {
            while optimise_once(&mut block.insts, live_out[i], ignore_call_clobbers) {
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

/// Applies the first applicable rewrite in the block; reports whether one was applied.
fn optimise_once(insts: &mut Vec<MInst>, live_out: PRegSet, ignore_call_clobbers: bool) -> bool {
    let mut live_after = vec![PRegSet::empty(); insts.len()];
    let mut live = live_out;
    for (i, inst) in insts.iter().enumerate().rev() {
        live_after[i] = live;
        let (d, u) = defs_uses(inst);
        live = (live & d.invert()) | u;
    }
    for i in 0..insts.len() {
        let ops = operands(&insts[i]);
        // Dead pure instruction.
        if is_simple(&insts[i]) && ops.iter().filter(|(_, k)| *k == Kind::Def).all(|(p, _)| !live_after[i].contains(*p))
        {
            insts.remove(i);
            return true;
        }
        let Some((dst, src)) = as_copy(&insts[i]) else {
            continue;
        };
        if dst == src {
            insts.remove(i);
            return true;
        }
        if !live_after[i].contains(src) && retarget_definition(insts, i, dst, src) {
            return true;
        }
        if forward_source(insts, i, dst, src, live_out, ignore_call_clobbers) {
            return true;
        }
    }
    false
}

fn retarget_definition(insts: &mut Vec<MInst>, i: usize, dst: PReg, src: PReg) -> bool {
    for j in (0..i).rev() {
        let ops = operands(&insts[j]);
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
                return false;
            }
            set_operand(&mut insts[j], defs[0], dst);
            insts.remove(i);
            return true;
        }
        let mentions = |r: PReg| ops.iter().any(|&(p, _)| p == r) || insts[j].clobbers().contains(r);
        if mentions(src) || mentions(dst) {
            return false;
        }
    }
    false
}

fn forward_source(
    insts: &mut Vec<MInst>,
    i: usize,
    dst: PReg,
    src: PReg,
    live_out: PRegSet,
    ignore_call_clobbers: bool,
) -> bool {
    let mut rewrites: Vec<(usize, usize)> = Vec::new();
    let mut src_clobbered = false;
    let mut redefined = false;
    for (k, inst) in insts.iter().enumerate().skip(i + 1) {
        let ops = operands(inst);
        let clobbers = inst.clobbers();
        for (n, &(p, kind)) in ops.iter().enumerate() {
            if p != dst || !matches!(kind, Kind::Use | Kind::PinnedUse) {
                continue;
            }
            let src_temp = ops.iter().any(|&(q, kk)| q == src && kk == Kind::OtherDef);
            if src_clobbered || kind != Kind::Use || src_temp {
                return false;
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
    if !redefined && live_out.contains(dst) {
        return false;
    }
    for (k, n) in rewrites {
        set_operand(&mut insts[k], n, src);
    }
    insts.remove(i);
    true
}
