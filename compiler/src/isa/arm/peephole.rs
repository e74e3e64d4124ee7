//! Stage `arm-peephole`: local clean-ups on allocated code, within each block.
//!
//! * moves of a register to itself (`mov r1, r1`, `vmov.f32 s2, s2`) disappear;
//! * `add/sub rd, rn, #0` becomes `mov rd, rn` (or disappears when `rd == rn`);
//! * a load right after a store to the same address becomes a register move (or
//!   disappears), and so does a load right after a load of the same address into a register
//!   that is not part of the address;
//! * `mov a, b` right after `mov b, a` is dropped.
//!
//! Only adjacent instructions are compared, so no reasoning about intervening writes is
//! needed; the rules repeat until nothing changes.

use super::mir::{Addr, AluOp, MInst, Op2, PFunction, Reg};

pub fn run(pf: &mut PFunction) {
    for (_, block) in &mut pf.blocks {
        loop {
            let before = block.insts.len();
            let mut changed = simplify_singles(&mut block.insts);
            changed |= simplify_pairs(&mut block.insts);
            if !changed && block.insts.len() == before {
                break;
            }
        }
    }
}

fn simplify_singles(insts: &mut Vec<MInst>) -> bool {
    let mut changed = false;
    insts.retain_mut(|inst| match *inst {
        MInst::Mov { rd, op2: Op2::Reg(rs) } if rd == rs => {
            changed = true;
            false
        }
        MInst::VMov { sd, sm } if sd == sm => {
            changed = true;
            false
        }
        MInst::Alu { op: AluOp::Add | AluOp::Sub, rd, rn, op2: Op2::Imm(0) } => {
            changed = true;
            if rd == rn {
                false
            } else {
                *inst = MInst::Mov { rd, op2: Op2::Reg(rn) };
                true
            }
        }
        _ => true,
    });
    changed
}

fn addr_regs(a: &Addr) -> [Option<Reg>; 2] {
    match *a {
        Addr::Imm { base, .. } => [Some(base), None],
        Addr::Index { base, index, .. } => [Some(base), Some(index)],
        Addr::Frame { .. } => [None, None],
    }
}

/// What replaces the second instruction of an adjacent pair, if anything simpler does.
enum Rewrite {
    Keep,
    Drop,
    Replace(MInst),
}

fn pair(first: &MInst, second: &MInst) -> Rewrite {
    match (first, second) {
        (MInst::Str { rs, addr: a1 }, MInst::Ldr { rd, addr: a2 }) if a1 == a2 => {
            if rs == rd {
                Rewrite::Drop
            } else {
                Rewrite::Replace(MInst::Mov { rd: *rd, op2: Op2::Reg(*rs) })
            }
        }
        (MInst::Vstr { ss, addr: a1 }, MInst::Vldr { sd, addr: a2 }) if a1 == a2 => {
            if ss == sd {
                Rewrite::Drop
            } else {
                Rewrite::Replace(MInst::VMov { sd: *sd, sm: *ss })
            }
        }
        (MInst::Ldr { rd: r1, addr: a1 }, MInst::Ldr { rd: r2, addr: a2 })
            if a1 == a2 && !addr_regs(a1).contains(&Some(*r1)) =>
        {
            if r1 == r2 {
                Rewrite::Drop
            } else {
                Rewrite::Replace(MInst::Mov { rd: *r2, op2: Op2::Reg(*r1) })
            }
        }
        (MInst::Vldr { sd: s1, addr: a1 }, MInst::Vldr { sd: s2, addr: a2 }) if a1 == a2 => {
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

fn simplify_pairs(insts: &mut Vec<MInst>) -> bool {
    let mut changed = false;
    let mut i = 1;
    while i < insts.len() {
        match pair(&insts[i - 1], &insts[i]) {
            Rewrite::Keep => i += 1,
            Rewrite::Drop => {
                insts.remove(i);
                changed = true;
            }
            Rewrite::Replace(new) => {
                insts[i] = new;
                changed = true;
                i += 1;
            }
        }
    }
    changed
}
