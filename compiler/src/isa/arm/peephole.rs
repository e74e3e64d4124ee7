//! BackendStage `arm-peephole`: local clean-ups on allocated code, within each block.
//!
//! * moves of a register to itself (`mov r1, r1`, `vmov.f32 s2, s2`) disappear;
//! * `add/sub rd, rn, #0` becomes `mov rd, rn` (or disappears when `rd == rn`);
//! * a load right after a store to the same address becomes a register move (or
//!   disappears), and so does a load right after a load of the same address into a register
//!   that is not part of the address;
//! * `mov a, b` right after `mov b, a` is dropped.
//!
//! Only adjacent instructions are compared, so no reasoning about intervening writes is
//! needed; the rules repeat until nothing changes (see [`push_simplified`]). The stage's
//! other half, compares folded into the flag-setting form of an earlier `add`/`sub`/`and`,
//! runs on final code (after `arm-branch-opt`): [`super::compare_fusion`].

use super::mir::{Addr, AluOp, MInst, Op2, PFunction, Reg};

pub fn run(pf: &mut PFunction) {
    for (_, block) in &mut pf.blocks {
        let insts = std::mem::take(&mut block.insts);
        let mut out = Vec::with_capacity(insts.len());
        for inst in insts {
            push_simplified(&mut out, inst);
        }
        block.insts = out;
    }
}

/// Appends `inst` to `out` after the single-instruction rules and the pair rules against
/// the instruction now last in `out`. Every rewrite of `inst` is checked again, and `out`
/// never changes behind its last element, so once a block is processed no rule applies to
/// any adjacent pair: the fixed point of repeating the rules, reached in one pass instead of
/// rescanning (and shifting) the block per change.
fn push_simplified(out: &mut Vec<MInst>, mut inst: MInst) {
    loop {
        match single(&inst) {
            Rewrite::Drop => return,
            Rewrite::Replace(new) => {
                inst = new;
                continue;
            }
            Rewrite::Keep => {}
        }
        match out.last().map_or(Rewrite::Keep, |prev| pair(prev, &inst)) {
            Rewrite::Drop => return,
            Rewrite::Replace(new) => inst = new,
            Rewrite::Keep => {
                out.push(inst);
                return;
            }
        }
    }
}

fn single(inst: &MInst) -> Rewrite {
    match *inst {
        MInst::Mov { rd, op2: Op2::Reg(rs) } if rd == rs => Rewrite::Drop,
        MInst::VMov { sd, sm } if sd == sm => Rewrite::Drop,
        MInst::Alu { op: AluOp::Add | AluOp::Sub, rd, rn, op2: Op2::Imm(0) } => {
            if rd == rn {
                Rewrite::Drop
            } else {
                Rewrite::Replace(MInst::Mov { rd, op2: Op2::Reg(rn) })
            }
        }
        _ => Rewrite::Keep,
    }
}

fn addr_regs(a: &Addr) -> [Option<Reg>; 2] {
    match *a {
        Addr::Imm { base, .. } | Addr::PostInc { base, .. } => [Some(base), None],
        Addr::Index { base, index, .. } => [Some(base), Some(index)],
        Addr::Frame { .. } => [None, None],
    }
}

/// Two addresses name the same memory each time they are used: equal, and not
/// post-incremented (each use of a post-indexed address reaches the next element).
fn same_place(a1: &Addr, a2: &Addr) -> bool {
    a1 == a2 && !matches!(a1, Addr::PostInc { .. })
}

/// What replaces an instruction (the second of an adjacent pair), if anything simpler does.
enum Rewrite {
    Keep,
    Drop,
    Replace(MInst),
}

fn pair(first: &MInst, second: &MInst) -> Rewrite {
    match (first, second) {
        (MInst::Str { rs, addr: a1 }, MInst::Ldr { rd, addr: a2 }) if same_place(a1, a2) => {
            if rs == rd {
                Rewrite::Drop
            } else {
                Rewrite::Replace(MInst::Mov { rd: *rd, op2: Op2::Reg(*rs) })
            }
        }
        (MInst::Vstr { ss, addr: a1 }, MInst::Vldr { sd, addr: a2 }) if same_place(a1, a2) => {
            if ss == sd {
                Rewrite::Drop
            } else {
                Rewrite::Replace(MInst::VMov { sd: *sd, sm: *ss })
            }
        }
        (MInst::Ldr { rd: r1, addr: a1 }, MInst::Ldr { rd: r2, addr: a2 })
            if same_place(a1, a2) && !addr_regs(a1).contains(&Some(*r1)) =>
        {
            if r1 == r2 {
                Rewrite::Drop
            } else {
                Rewrite::Replace(MInst::Mov { rd: *r2, op2: Op2::Reg(*r1) })
            }
        }
        (MInst::Vldr { sd: s1, addr: a1 }, MInst::Vldr { sd: s2, addr: a2 }) if same_place(a1, a2) => {
            if s1 == s2 {
                Rewrite::Drop
            } else {
                Rewrite::Replace(MInst::VMov { sd: *s2, sm: *s1 })
            }
        }
        (MInst::Mov { rd: a, op2: Op2::Reg(b) }, MInst::Mov { rd: c, op2: Op2::Reg(d) }) if a == d && b == c => {
            Rewrite::Drop
        }
        (MInst::VMov { sd: a, sm: b }, MInst::VMov { sd: c, sm: d }) if a == d && b == c => Rewrite::Drop,
        _ => Rewrite::Keep,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::arm::mir::{BlockOrigin, FrameObj, FrameRequest, PBlock};
    use crate::isa::arm::regs;
    use regalloc2::Block;

    fn r(n: u8) -> Reg {
        Reg::Phys(regs::gpr(n))
    }

    fn slot(n: u32) -> Addr {
        Addr::Frame { obj: FrameObj::Spill(n), off: 0 }
    }

    fn simplified(insts: Vec<MInst>) -> Vec<MInst> {
        let mut pf = PFunction {
            sym: "f".into(),
            blocks: vec![(Block::new(0), PBlock { insts, origin: BlockOrigin::Entry })],
            frame: FrameRequest::default(),
            num_spill_slots: 2,
        };
        run(&mut pf);
        pf.blocks.pop().unwrap().1.insts
    }

    #[test]
    fn rewrites_cascade_to_the_fixed_point() {
        // The self-move goes, which makes the store and the reload adjacent; the reload
        // then goes too, and the `add #0` turned into a move of r1 into r1 goes last.
        let out = simplified(vec![
            MInst::Str { rs: r(1), addr: slot(0) },
            MInst::Mov { rd: r(2), op2: Op2::Reg(r(2)) },
            MInst::Ldr { rd: r(1), addr: slot(0) },
            MInst::Alu { op: AluOp::Add, rd: r(1), rn: r(1), op2: Op2::Imm(0) },
            MInst::Ldr { rd: r(3), addr: slot(0) },
            MInst::Ret { val: None },
        ]);
        assert_eq!(
            out,
            vec![
                MInst::Str { rs: r(1), addr: slot(0) },
                MInst::Mov { rd: r(3), op2: Op2::Reg(r(1)) },
                MInst::Ret { val: None },
            ]
        );
    }

    #[test]
    fn a_load_into_its_own_address_register_is_not_reused() {
        let insts = vec![
            MInst::Ldr { rd: r(1), addr: Addr::Imm { base: r(1), off: 4 } },
            MInst::Ldr { rd: r(2), addr: Addr::Imm { base: r(1), off: 4 } },
            MInst::Mov { rd: r(4), op2: Op2::Reg(r(5)) },
            MInst::Mov { rd: r(5), op2: Op2::Reg(r(4)) },
        ];
        let out = simplified(insts.clone());
        assert_eq!(out, insts[..3].to_vec(), "only the swapped-back move goes");
    }
}
