//! Part of the `arm-peephole` stage, run on final code (after `arm-branch-opt`): a compare
//! whose flags an earlier `add`/`sub`/`rsb`/`and` of the same block can set disappears, that
//! instruction taking its flag-setting form (`subs r4, r4, #1` … `bne`), as gcc writes
//! count-down loops and `n - 1 == 0` tests. Two patterns:
//!
//! * **The same operation.** `sub rd, rn, op2` … `cmp rn, op2` (or `add` … `cmn`): `subs`
//!   computes the very subtraction the compare does, so it sets the same four flags, and every
//!   reader may stay as it is. Nothing in between may write `rn` or `op2`'s register, and `rd`
//!   must be neither (the compare reads the values the subtraction read).
//! * **A test against zero.** `<op> rd, …` … `cmp rd, #0`: `<op>s` sets `Z` when its result
//!   is zero and `N` to the result's bit 31, exactly as `cmp rd, #0` does; only `C` and `V`
//!   differ (`cmp rd, #0` leaves `C = 1`, `V = 0`). So every reader of the compare's flags
//!   must test `Z` and `N` alone: `eq`, `ne`, `mi`, `pl` stay, and `lt`/`ge`, which after
//!   `cmp rd, #0` mean `N != V` with `V = 0`, become `mi`/`pl`; `gt`, `le` and the unsigned
//!   conditions need `C` or `V`, so a compare read by any of them stays. The readers checked
//!   are those up to the next instruction that writes the flags; when there is none in the
//!   block the flags reach the successors, and no path from there may read them before setting
//!   them (a backward liveness problem over the final CFG).
//!
//! In both, nothing between the two instructions reads or writes the flags (a reader there
//! would see the new flags), and the first is not predicated. Running last means no later
//! stage inserts code between the pair (the allocator's moves, loads and stores, and
//! `arm-if-convert`'s predicated instructions, are already placed).

use super::mir::{AluOp, CmpOp, Cond, MInst, Op2, PFunction, Reg};

pub fn fuse_compares(pf: &mut PFunction) {
    let successors = pf.successor_positions();
    let live_at_entry = flags_live_at_entry(pf, &successors);
    for (i, (_, block)) in pf.blocks.iter_mut().enumerate() {
        let dead_at_exit = successors[i].iter().all(|&s| !live_at_entry[s as usize]);
        let insts = &mut block.insts;
        let mut c = 0;
        while c < insts.len() {
            let Some((def, pattern)) = fusable_definition(insts, c, dead_at_exit) else {
                c += 1;
                continue;
            };
            let MInst::Alu { op, rd, rn, op2 } = insts[def] else { unreachable!("checked by fusable_definition") };
            insts[def] = MInst::AluS { op, rd, rn, op2 };
            insts.remove(c);
            if pattern == Pattern::ZeroTest {
                rewrite_sign_readers(&mut insts[c..]);
            }
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Pattern {
    SameOperation,
    ZeroTest,
}

/// After `cmp rd, #0` became the flag-setting form of `rd`'s definition: its readers test the
/// sign conditions instead (see [`sign_condition`]).
fn rewrite_sign_readers(insts: &mut [MInst]) {
    for reader in insts.iter_mut() {
        let writes = reader.writes_flags();
        if let Some(cc) = reader.flag_condition_mut() {
            *cc = sign_condition(*cc).expect("checked by fusable_definition");
        }
        if writes {
            break;
        }
    }
}

/// The position of the `add`/`sub`/`rsb`/`and` that can set the flags in place of the
/// compare at `c`, and which pattern of the module documentation applies.
fn fusable_definition(insts: &[MInst], c: usize, dead_at_exit: bool) -> Option<(usize, Pattern)> {
    let MInst::Cmp { op, rn: r, op2 } = insts[c] else { return None };
    let (_, read) = insts[c].phys_defs_uses();
    let writes_read = |inst: &MInst| inst.phys_defs_uses().0.iter().any(|d| read.contains(d));
    let def = (0..c)
        .rev()
        .find(|&i| touches_flags(&insts[i]) || writes_read(&insts[i]) || same_operation(&insts[i], op, r, op2))?;
    if same_operation(&insts[def], op, r, op2) {
        return (!writes_read(&insts[def])).then_some((def, Pattern::SameOperation));
    }
    if (op, op2) != (CmpOp::Cmp, Op2::Imm(0)) {
        return None;
    }
    match insts[def] {
        MInst::Alu { op: AluOp::Add | AluOp::Sub | AluOp::Rsb | AluOp::And, rd, .. } if rd == r => {}
        _ => return None,
    }
    for reader in &insts[c + 1..] {
        if reader.flag_condition().is_some_and(|cc| sign_condition(cc).is_none()) {
            return None;
        }
        if reader.writes_flags() {
            return Some((def, Pattern::ZeroTest));
        }
    }
    dead_at_exit.then_some((def, Pattern::ZeroTest))
}

/// `inst` computes the subtraction (`cmp`) or addition (`cmn`) that the compare does.
fn same_operation(inst: &MInst, op: CmpOp, rn: Reg, op2: Op2) -> bool {
    match (inst, op) {
        (&MInst::Alu { op: AluOp::Sub, rn: n, op2: o, .. }, CmpOp::Cmp)
        | (&MInst::Alu { op: AluOp::Add, rn: n, op2: o, .. }, CmpOp::Cmn) => n == rn && o == op2,
        _ => false,
    }
}

/// What a reader of `cmp rd, #0`'s flags tests, as a condition on the flags of a
/// flag-setting operation whose result is `rd`: `None` if that needs `C` or `V`.
fn sign_condition(cc: Cond) -> Option<Cond> {
    match cc {
        Cond::Eq | Cond::Ne | Cond::Mi | Cond::Pl => Some(cc),
        Cond::Lt => Some(Cond::Mi),
        Cond::Ge => Some(Cond::Pl),
        _ => None,
    }
}

fn touches_flags(inst: &MInst) -> bool {
    inst.writes_flags() || inst.flag_condition().is_some()
}

/// Whether some path from each block's entry reads the flags before setting them: a block
/// reading them first, or one that neither reads nor writes them and has a successor where
/// they are live (a backward data-flow problem, solved to its least fixpoint).
fn flags_live_at_entry(pf: &PFunction, successors: &[smallvec::SmallVec<[u32; 2]>]) -> Vec<bool> {
    // Per block: `Some(live)` when the block itself decides, `None` when it is transparent.
    let own: Vec<Option<bool>> = pf
        .blocks
        .iter()
        .map(|(_, b)| {
            b.insts.iter().find_map(|inst| match () {
                _ if inst.flag_condition().is_some() => Some(true),
                _ if inst.writes_flags() => Some(false),
                _ => None,
            })
        })
        .collect();
    let mut live: Vec<bool> = own.iter().map(|o| o.unwrap_or(false)).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..live.len()).rev() {
            if own[b].is_none() && !live[b] && successors[b].iter().any(|&s| live[s as usize]) {
                live[b] = true;
                changed = true;
            }
        }
    }
    live
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isa::arm::mir::FrameRequest;
    use crate::isa::arm::regs;
    use regalloc2::Block;

    fn r(n: u8) -> Reg {
        Reg::Phys(regs::gpr(n))
    }

    fn sub(rd: u8, rn: u8, k: u32) -> MInst {
        MInst::Alu { op: AluOp::Sub, rd: r(rd), rn: r(rn), op2: Op2::Imm(k) }
    }

    fn cmp(rn: u8, k: u32) -> MInst {
        MInst::Cmp { op: CmpOp::Cmp, rn: r(rn), op2: Op2::Imm(k) }
    }

    fn fused(blocks: Vec<Vec<MInst>>) -> Vec<Vec<MInst>> {
        let mut pf = PFunction::of_blocks(blocks, FrameRequest::default(), 0);
        fuse_compares(&mut pf);
        pf.blocks.into_iter().map(|(_, b)| b.insts).collect()
    }

    fn subs(rd: u8, rn: u8, k: u32) -> MInst {
        MInst::AluS { op: AluOp::Sub, rd: r(rd), rn: r(rn), op2: Op2::Imm(k) }
    }

    fn branch(cc: Cond, target: usize) -> MInst {
        MInst::BranchCond { cc, target: Block::new(target) }
    }

    #[test]
    fn a_zero_test_reads_the_sign_of_the_result() {
        // `lt` after `cmp r4, #0` is `mi` after `subs`; the `mov` in between touches no flags.
        let out = fused(vec![
            vec![sub(4, 4, 1), MInst::Mov { rd: r(1), op2: Op2::Imm(1) }, cmp(4, 0), branch(Cond::Lt, 0)],
            vec![MInst::Ret { val: None }],
        ]);
        assert_eq!(out[0], vec![subs(4, 4, 1), MInst::Mov { rd: r(1), op2: Op2::Imm(1) }, branch(Cond::Mi, 0)]);
    }

    #[test]
    fn a_zero_test_read_by_gt_or_by_a_successor_stays() {
        let gt = vec![vec![sub(4, 4, 2), cmp(4, 0), branch(Cond::Gt, 0)], vec![MInst::Ret { val: None }]];
        assert_eq!(fused(gt.clone()), gt, "gt reads V, which subs sets for the subtraction");
        // The block falls through with the flags into one that reads them first (`moveq`).
        let live_out = vec![
            vec![sub(4, 4, 2), cmp(4, 0), branch(Cond::Ne, 0)],
            vec![MInst::Pred { cc: Cond::Gt, inst: Box::new(MInst::Mov { rd: r(0), op2: Op2::Imm(1) }) }, MInst::Ret { val: None }],
        ];
        assert_eq!(fused(live_out.clone()), live_out);
    }

    #[test]
    fn the_same_subtraction_keeps_every_condition_unless_it_overwrites_its_operand() {
        let out = fused(vec![vec![sub(2, 1, 1), cmp(1, 1), branch(Cond::Gt, 0)], vec![MInst::Ret { val: None }]]);
        assert_eq!(out[0], vec![subs(2, 1, 1), branch(Cond::Gt, 0)]);
        // `sub r1, r1, #1; cmp r1, #1` compares the new r1: the flags of the old one differ.
        let overwritten = vec![vec![sub(1, 1, 1), cmp(1, 1), branch(Cond::Gt, 0)], vec![MInst::Ret { val: None }]];
        assert_eq!(fused(overwritten.clone()), overwritten);
        // A flag reader between the two would see the new flags.
        let reader_between = vec![
            vec![sub(2, 1, 1), MInst::Pred { cc: Cond::Eq, inst: Box::new(MInst::Mov { rd: r(3), op2: Op2::Imm(0) }) }, cmp(1, 1), branch(Cond::Gt, 0)],
            vec![MInst::Ret { val: None }],
        ];
        assert_eq!(fused(reader_between.clone()), reader_between);
    }
}
