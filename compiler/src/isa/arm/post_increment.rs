//! Part of the `arm-peephole` stage, run on final code (after `arm-branch-opt`, before compare
//! fusion): a pointer step `add rX, rX, #k` folds into an earlier load or store of the same
//! block that reads `[rX]`, which becomes post-indexed (`ldr r0, [rX], #k`, and for a float
//! `vldmia rX!, {s0}` with `k = 4`: the VFP has no post-indexed `vldr`, and a one-register
//! block transfer with writeback is that instruction). One instruction fewer per pointer and
//! iteration: `iv-reduce` walks float arrays with pointers precisely because a VFP access has
//! no register-offset mode, and the step of such a pointer is this `add`.
//!
//! Exactness: moving the step from the `add` up to the access changes `rX` only for the
//! instructions between the two, so every one of them that reads `rX` must be a load or store
//! with base `rX` and an immediate offset, which is lowered by `k` (the same address), and
//! still encodable; any other read or write of `rX` there (a data operand, an index, a call,
//! a predicated instruction) stops the search. The access's own data register is not `rX`
//! (a writeback load or store of its base register is unpredictable). Flags are untouched by
//! both forms. Running on final code means no later stage inserts code between the access and
//! the old `add` (the allocator's moves and `arm-if-convert`'s predicated instructions are
//! already placed).
//!
//! **A step into another register.** The copies of an unrolled loop chain their pointers
//! (`add r10, r8, #4` steps copy 1's `r8` into copy 2's `r10`), and the allocator need not
//! keep the chain in one register. When `rX` of `add rY, rX, #k` is dead after the `add`,
//! the step is made in place (`add rX, rX, #k`) and the reads of `rY` that follow are renamed
//! to `rX`, up to the instruction that redefines `rY` (its reads included), or to the end of
//! the block when `rY` is not live out of it: there `rX` holds what `rY` held. Every such read
//! must be a plain register read (not pinned to its register, not tied to a definition),
//! nothing in that range may write `rX` (a call clobbering it included), and neither
//! register may appear in a predicated instruction there (whose definition may not happen).
//!
//! **A step forwarded into offsets.** When neither applies, and every read of `rY` up to its
//! end (as above) is the base of an access or the source of a further step, the `add` goes and
//! those read `rX` with `k` added to their offset or step (`[rY, #o]` → `[rX, #o + k]`,
//! `add rZ, rY, #m` → `add rZ, rX, #(k + m)`), encodable or not at all: an unrolled copy
//! that reads its neighbours through both the previous copy's pointer and its own (a stencil)
//! then takes one step per pointer for all the copies, as their offsets from one pointer.

use regalloc2::{PReg, PRegSet};

use super::emit::Range as Width;
use super::copyprop::{Kind as Operand, defs_uses, live_outs, operands, set_operand};
use super::imm::is_arm_imm;
use super::mir::{Addr, AluOp, MInst, Op2, PFunction, Reg};
use super::regs::{self, SP};

/// How far (in instructions) the searches look from a step; beyond it nothing is rewritten,
/// so a block costs time linear in its length however long its straight-line runs are.
const WINDOW: usize = 48;

pub fn fold_increments(pf: &mut PFunction) {
    let live_out = live_outs(pf);
    for (b, (_, block)) in pf.blocks.iter_mut().enumerate() {
        let insts = &mut block.insts;
        let mut i = 0;
        while i < insts.len() {
            match foldable(insts, i, live_out[b]) {
                Some(fold) => {
                    for &(t, idx) in &fold.renamed {
                        set_operand(&mut insts[t], idx, fold.base.preg().expect("physical"));
                    }
                    for &j in &fold.between {
                        let addr = address_mut(&mut insts[j]).expect("an access with base rX");
                        let Addr::Imm { off, .. } = addr else { unreachable!("checked by foldable") };
                        *off -= fold.inc;
                    }
                    *address_mut(&mut insts[fold.access]).expect("the folded access") =
                        Addr::PostInc { base: fold.base, inc: fold.inc };
                    insts.remove(i);
                }
                None => match forwardable(insts, i, live_out[b]) {
                    Some(rewrites) => {
                        for (t, inst) in rewrites {
                            insts[t] = inst;
                        }
                        insts.remove(i);
                    }
                    None => i += 1,
                },
            }
        }
    }
}

/// The access that takes the step at `i`, the accesses between whose offsets move, and the
/// operands (instruction, operand number) renamed from the step's destination to its base.
struct Fold {
    base: Reg,
    inc: i32,
    access: usize,
    between: Vec<usize>,
    renamed: Vec<(usize, usize)>,
}

/// An access of this range takes the post-increment `inc`: any offset of `ldr`/`str`, and
/// only 4 (one register) for the VFP's block transfer.
fn increment_fits(width: Width, inc: i32) -> bool {
    match width {
        Width::Word => inc != 0 && width.fits(i64::from(inc)),
        Width::Vfp => inc == 4,
    }
}

/// A plain single load or store: its kind, its data register (`None` for a float one, which
/// is never a core register) and its address.
fn access(inst: &MInst) -> Option<(Width, Option<Reg>, &Addr)> {
    match inst {
        MInst::Ldr { rd, addr } => Some((Width::Word, Some(*rd), addr)),
        MInst::Str { rs, addr } => Some((Width::Word, Some(*rs), addr)),
        MInst::Vldr { addr, .. } | MInst::Vstr { addr, .. } => Some((Width::Vfp, None, addr)),
        _ => None,
    }
}

fn address_mut(inst: &mut MInst) -> Option<&mut Addr> {
    match inst {
        MInst::Ldr { addr, .. } | MInst::Str { addr, .. } | MInst::Vldr { addr, .. } | MInst::Vstr { addr, .. } => Some(addr),
        _ => None,
    }
}

/// The pointer step at `i` (`add rY, rX, #k` or `sub rY, rX, #k`), as `(rY, rX, k)`.
fn step(inst: &MInst) -> Option<(Reg, Reg, i32)> {
    let MInst::Alu { op, rd, rn, op2: Op2::Imm(k) } = *inst else { return None };
    let k = i32::try_from(k).ok()?;
    let inc = match op {
        AluOp::Add => k,
        AluOp::Sub => -k,
        _ => return None,
    };
    let sp = Reg::Phys(regs::gpr(SP));
    (rd.preg().is_some() && rn.preg().is_some() && rd != sp && rn != sp).then_some((rd, rn, inc))
}

fn foldable(insts: &[MInst], i: usize, live_out: PRegSet) -> Option<Fold> {
    let (dest, base, inc) = step(&insts[i])?;
    let preg = base.preg()?;
    let mut between = Vec::new();
    for j in (i.saturating_sub(WINDOW)..i).rev() {
        let inst = &insts[j];
        if let Some((kind, data, &Addr::Imm { base: b, off })) = access(inst) {
            if b == base && data != Some(base) {
                if off == 0 && increment_fits(kind, inc) {
                    let renamed = if dest == base { Vec::new() } else { renaming(insts, i, dest, base, live_out)? };
                    return Some(Fold { base, inc, access: j, between, renamed });
                }
                if !off.checked_sub(inc).is_some_and(|o| kind.fits(i64::from(o))) {
                    return None;
                }
                between.push(j);
                continue;
            }
        }
        let (defs, uses) = inst.phys_defs_uses();
        if defs.contains(&preg) || uses.contains(&preg) || matches!(inst, MInst::Call { .. }) {
            return None;
        }
    }
    None
}

/// The positions after the step at `i` where `dest` still holds the step's value while `base`
/// holds what the step read: up to the instruction that redefines `dest` (included), or to
/// the end of the block when `dest` is not live out. `None` when `base` is written before
/// `dest` dies, a predicated instruction mentions either, or the range leaves the window.
fn step_value_range(insts: &[MInst], i: usize, dest: PReg, base: PReg, live_out: PRegSet) -> Option<Vec<usize>> {
    let mentions = |p: PReg, ops: &[(PReg, Operand)], defs: PRegSet| defs.contains(p) || ops.iter().any(|&(q, _)| q == p);
    let mut range = Vec::new();
    for (t, inst) in insts.iter().enumerate().skip(i + 1).take(WINDOW) {
        if t == i + WINDOW {
            return None;
        }
        let ops = operands(inst);
        let (defs, _) = defs_uses(inst);
        if matches!(inst, MInst::Pred { .. }) && (mentions(dest, &ops, defs) || mentions(base, &ops, defs)) {
            return None;
        }
        range.push(t);
        // `base` written again (the next copy's step back into it): fine once `dest` is dead.
        if defs.contains(dest) || (defs.contains(base) && dead_after(insts, t, dest, live_out)) {
            return Some(range);
        }
        if defs.contains(base) {
            return None;
        }
    }
    (!live_out.contains(dest)).then_some(range)
}

/// The reads of `dest` after the step `add dest, base, #k` at `i` that can read `base` instead
/// (see the module documentation), or `None` if the step cannot be made in place.
fn renaming(insts: &[MInst], i: usize, dest: Reg, base: Reg, live_out: PRegSet) -> Option<Vec<(usize, usize)>> {
    let (dest, base) = (dest.preg()?, base.preg()?);
    if !dead_after(insts, i, base, live_out) {
        return None;
    }
    let mut renamed = Vec::new();
    for t in step_value_range(insts, i, dest, base, live_out)? {
        let ops = operands(&insts[t]);
        let before = renamed.len();
        for (idx, &(p, k)) in ops.iter().enumerate() {
            match k {
                Operand::Use if p == dest => renamed.push((t, idx)),
                Operand::PinnedUse if p == dest => return None,
                _ => {}
            }
        }
        // A temporary (or fixed definition) in `base` is written before the renamed read.
        if renamed.len() > before && ops.iter().any(|&(p, k)| p == base && k == Operand::OtherDef) {
            return None;
        }
    }
    Some(renamed)
}

/// The step `add rY, rX, #k` at `i` (`rY ≠ rX`) forwarded into the readers of `rY`: an access
/// `[rY, #o]` becomes `[rX, #o + k]`, a further step `add rZ, rY, #m` becomes `add rZ, rX,
/// #(k + m)` (see the module documentation). The rewritten instructions by position, or `None`.
fn forwardable(insts: &[MInst], i: usize, live_out: PRegSet) -> Option<Vec<(usize, MInst)>> {
    let (dest, base, k) = step(&insts[i])?;
    if dest == base {
        return None;
    }
    let dest_p = dest.preg()?;
    let mut rewrites = Vec::new();
    for t in step_value_range(insts, i, dest_p, base.preg()?, live_out)? {
        let reads_dest =
            operands(&insts[t]).iter().any(|&(p, kind)| p == dest_p && matches!(kind, Operand::Use | Operand::PinnedUse));
        if reads_dest {
            rewrites.push((t, forwarded(&insts[t], dest, base, k)?));
        }
    }
    Some(rewrites)
}

/// `inst`, which reads `dest = base + k`, reading `base` instead; `None` unless it reads
/// `dest` only as an access's base or as a step's source.
fn forwarded(inst: &MInst, dest: Reg, base: Reg, k: i32) -> Option<MInst> {
    if let Some((width, data, &Addr::Imm { base: b, off })) = access(inst) {
        let off = off.checked_add(k).filter(|&o| width.fits(i64::from(o)))?;
        if b != dest || data == Some(dest) {
            return None;
        }
        let mut out = inst.clone();
        *address_mut(&mut out).expect("an access") = Addr::Imm { base, off };
        return Some(out);
    }
    let (rd, rn, m) = step(inst)?;
    if rn != dest {
        return None;
    }
    let total = m.checked_add(k)?;
    let (op, imm) = if total >= 0 { (AluOp::Add, total as u32) } else { (AluOp::Sub, total.unsigned_abs()) };
    is_arm_imm(imm).then_some(MInst::Alu { op, rd, rn: base, op2: Op2::Imm(imm) })
}

/// No instruction after `at` reads `reg` before writing it, and if none writes it, it is not
/// live out of the block.
fn dead_after(insts: &[MInst], at: usize, reg: PReg, live_out: PRegSet) -> bool {
    let end = insts.len().min(at + 1 + WINDOW);
    for inst in &insts[at + 1..end] {
        // (A predicated write counts as a read: the value lives on when it does not happen.)
        let (defs, uses) = defs_uses(inst);
        if uses.contains(reg) {
            return false;
        }
        if defs.contains(reg) {
            return true;
        }
    }
    end == insts.len() && !live_out.contains(reg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::arm::mir::{CmpOp, Cond, FrameRequest, VOp};

    fn r(n: u8) -> Reg {
        Reg::Phys(regs::gpr(n))
    }

    fn s(n: u8) -> Reg {
        Reg::Phys(regs::spr(n))
    }

    fn add(rd: u8, rn: u8, k: u32) -> MInst {
        MInst::Alu { op: AluOp::Add, rd: r(rd), rn: r(rn), op2: Op2::Imm(k) }
    }

    fn vldr(sd: u8, base: u8, off: i32) -> MInst {
        MInst::Vldr { sd: s(sd), addr: Addr::Imm { base: r(base), off } }
    }

    fn folded(insts: Vec<MInst>) -> Vec<MInst> {
        folded_before(insts, vec![MInst::Ret { val: None }])
    }

    /// The first block after the rewrite of a function of two blocks, `first` and `second`.
    fn folded_before(first: Vec<MInst>, second: Vec<MInst>) -> Vec<MInst> {
        let mut pf = PFunction::of_blocks(vec![first, second], FrameRequest::default(), 0);
        fold_increments(&mut pf);
        pf.blocks.into_iter().next().expect("two blocks").1.insts
    }

    #[test]
    fn a_float_step_of_four_folds_into_the_access_at_offset_zero() {
        let vadd = MInst::VArith { op: VOp::Add, sd: s(2), sn: s(0), sm: s(1) };
        let out = folded(vec![vldr(0, 1, 0), vadd.clone(), vldr(1, 1, 4), add(1, 1, 4)]);
        // The later access reads the same address through the stepped pointer.
        assert_eq!(out, vec![MInst::Vldr { sd: s(0), addr: Addr::PostInc { base: r(1), inc: 4 } }, vadd, vldr(1, 1, 0)]);
    }

    #[test]
    fn a_word_access_takes_any_encodable_step_and_a_float_one_only_four() {
        let ldr = |off| MInst::Ldr { rd: r(0), addr: Addr::Imm { base: r(2), off } };
        let out = folded(vec![ldr(0), add(2, 2, 192)]);
        assert_eq!(out, vec![MInst::Ldr { rd: r(0), addr: Addr::PostInc { base: r(2), inc: 192 } }]);
        // A step of 8 passes the float access (its offset moves) and reaches the word load.
        let out = folded(vec![ldr(0), vldr(0, 2, 0), add(2, 2, 8)]);
        assert_eq!(out, vec![MInst::Ldr { rd: r(0), addr: Addr::PostInc { base: r(2), inc: 8 } }, vldr(0, 2, -8)]);
        let lone_float = vec![vldr(0, 2, 0), add(2, 2, 8)];
        assert_eq!(folded(lone_float.clone()), lone_float);
    }

    #[test]
    fn a_step_into_another_register_is_made_in_place_when_its_base_dies() {
        // Two unrolled copies: r8 steps into r10, copy 2 reads r10, the block ends with the
        // back edge's step into r8 (live out) from r10.
        let vstr = |ss, base, off| MInst::Vstr { ss: s(ss), addr: Addr::Imm { base: r(base), off } };
        let out = folded(vec![vldr(1, 8, 0), vstr(1, 8, 0), add(10, 8, 4), vldr(1, 10, 0), vstr(1, 10, 0), add(8, 10, 4)]);
        let post = |n, base| MInst::Vstr { ss: s(n), addr: Addr::PostInc { base: r(base), inc: 4 } };
        assert_eq!(out, vec![vldr(1, 8, 0), post(1, 8), vldr(1, 8, 0), post(1, 8)]);
    }

    #[test]
    fn a_step_whose_base_is_read_again_is_forwarded_into_offsets() {
        // r8 is read after the step into r10 (a stencil's copy reading its neighbour), so r10
        // cannot become r8: its reads take r8 plus 4, and the next step adds 8 to r8.
        let reread = vec![vldr(1, 8, 0), add(10, 8, 4), vldr(2, 8, 8), vldr(1, 10, 0), add(8, 10, 4)];
        assert_eq!(folded(reread), vec![vldr(1, 8, 0), vldr(2, 8, 8), vldr(1, 8, 4), add(8, 8, 8)]);
        // A read of r10 as data (not as a base) keeps the step.
        let as_data = vec![vldr(1, 8, 0), add(10, 8, 4), vldr(2, 8, 8), MInst::Str { rs: r(10), addr: Addr::Imm { base: r(3), off: 0 } }];
        assert_eq!(folded(as_data.clone()), as_data);
    }

    #[test]
    fn any_other_use_of_the_pointer_between_stops_the_fold() {
        let copy = vec![vldr(0, 1, 0), MInst::Mov { rd: r(3), op2: Op2::Reg(r(1)) }, add(1, 1, 4)];
        assert_eq!(folded(copy.clone()), copy);
        // A store of the pointer itself through itself: writeback would be unpredictable.
        let own_base = vec![MInst::Str { rs: r(1), addr: Addr::Imm { base: r(1), off: 0 } }, add(1, 1, 4)];
        assert_eq!(folded(own_base.clone()), own_base);
        // An offset that would leave the VFP range after the move.
        let far = vec![vldr(0, 1, 0), vldr(1, 1, -1020), add(1, 1, 4)];
        assert_eq!(folded(far.clone()), far);
        // A step into a register that is live out of the block stays.
        let other = vec![vldr(0, 1, 0), add(2, 1, 4), MInst::Jump { target: regalloc2::Block::new(1) }];
        let reads_r2 = vec![MInst::Str { rs: r(2), addr: Addr::Imm { base: r(3), off: 0 } }, MInst::Ret { val: None }];
        assert_eq!(folded_before(other.clone(), reads_r2), other);
    }

    #[test]
    fn a_predicated_write_does_not_end_the_steps_value() {
        // r10 = r8 + 1 is live out past `movne r10, r3` (the write may not happen), while r8
        // dies at once: the step is neither forwarded to no readers nor made in place.
        let pred_mov = MInst::Pred { cc: Cond::Ne, inst: Box::new(MInst::Mov { rd: r(10), op2: Op2::Reg(r(3)) }) };
        let block = vec![
            add(10, 8, 1),
            MInst::Mov { rd: r(8), op2: Op2::Imm(0) },
            MInst::Cmp { op: CmpOp::Cmp, rn: r(8), op2: Op2::Imm(0) },
            pred_mov,
            MInst::Jump { target: regalloc2::Block::new(1) },
        ];
        let reads_r10 = vec![MInst::Str { rs: r(10), addr: Addr::Imm { base: r(3), off: 0 } }, MInst::Ret { val: None }];
        assert_eq!(folded_before(block.clone(), reads_r10), block);
    }

    #[test]
    fn a_predicated_write_in_a_successor_keeps_the_step_live_out() {
        // r4 = r0 + 1 reaches the store in block 1 when `movlt r4, r2` does not happen.
        let block = vec![add(4, 0, 1), add(0, 0, 1), MInst::Jump { target: regalloc2::Block::new(1) }];
        let pred_mov = MInst::Pred { cc: Cond::Lt, inst: Box::new(MInst::Mov { rd: r(4), op2: Op2::Reg(r(2)) }) };
        let second = vec![pred_mov, MInst::Str { rs: r(4), addr: Addr::Imm { base: r(3), off: 0 } }, MInst::Ret { val: None }];
        assert_eq!(folded_before(block.clone(), second), block);
    }
}
