//! The machine-code verifier on hand-made allocated code: correct code passes, and each kind
//! of breakage a post-allocation stage could cause is reported with its block and
//! instruction.

use regalloc2::Block;
use smallvec::smallvec;

use crate::isa::arm::mir::{CmpOp, Cond, FrameObj, FrameRequest, MInst, Op2, PFunction, Addr, phys};
use crate::isa::arm::regs::{self, gpr, spr};
use crate::isa::arm::verify::verify;

fn func(blocks: Vec<Vec<MInst>>) -> PFunction {
    PFunction::of_blocks(blocks, FrameRequest { allocas: vec![16], outgoing: 0, has_calls: true }, 1)
}

fn args() -> MInst {
    MInst::Args { defs: vec![(phys(gpr(0)), gpr(0)), (phys(gpr(1)), gpr(1))] }
}

fn ret(r: u8) -> MInst {
    MInst::Ret { val: Some((phys(gpr(r)), gpr(0))) }
}

fn add(rd: u8, rn: u8, rm: u8) -> MInst {
    MInst::Alu { op: crate::isa::arm::mir::AluOp::Add, rd: phys(gpr(rd)), rn: phys(gpr(rn)), op2: Op2::Reg(phys(gpr(rm))) }
}

fn call() -> MInst {
    MInst::Call { sym: "g".into(), uses: smallvec![], defs: smallvec![(phys(gpr(0)), gpr(0))], clobbers: regs::call_clobbers() }
}

/// A diamond: compare the arguments, add on one side, return the result either way.
fn diamond() -> Vec<Vec<MInst>> {
    vec![
        vec![
            args(),
            MInst::Cmp { op: CmpOp::Cmp, rn: phys(gpr(0)), op2: Op2::Reg(phys(gpr(1))) },
            MInst::CondBr { cc: Cond::Lt, taken: Block::new(1), not_taken: Block::new(2) },
        ],
        vec![add(0, 0, 1), MInst::Jump { target: Block::new(2) }],
        vec![ret(0)],
    ]
}

fn problems(blocks: Vec<Vec<MInst>>) -> String {
    verify(&func(blocks), true).expect_err("the verifier must reject this").join("\n")
}

#[test]
fn correct_code_passes() {
    assert_eq!(verify(&func(diamond()), true), Ok(()));
    // A value kept in a callee-saved register across a call, the result of the call in r0.
    let across_call = vec![vec![args(), MInst::Mov { rd: phys(gpr(4)), op2: Op2::Reg(phys(gpr(1))) }, call(), add(0, 0, 4), ret(0)]];
    assert_eq!(verify(&func(across_call), true), Ok(()));
}

#[test]
fn a_read_of_a_register_no_path_defines_is_reported() {
    // r2 is defined on one side of the diamond only.
    let mut d = diamond();
    d[1].insert(0, MInst::LoadImm { rd: phys(gpr(2)), value: 7 });
    d[2].insert(0, add(0, 0, 2));
    let p = problems(d);
    assert!(p.contains("block 2") && p.contains("reads r2"), "{p}");
}

/// regalloc2 may save a register it borrows as a move scratch without knowing whether it
/// holds a value: copying an undefined register (to a register or a spill slot) is no error,
/// but the copy is as undefined as the original where it is used.
#[test]
fn copies_carry_definedness_to_the_real_use() {
    let spill = || Addr::Frame { obj: FrameObj::Spill(0), off: 0 };
    // lr saved to a spill slot, used as a scratch, never restored: fine.
    let save_lr = vec![vec![
        args(),
        MInst::Str { rs: phys(gpr(regs::LR)), addr: spill() },
        MInst::Mov { rd: phys(gpr(regs::LR)), op2: Op2::Reg(phys(gpr(1))) },
        add(0, 0, regs::LR),
        ret(0),
    ]];
    assert_eq!(verify(&func(save_lr), true), Ok(()));
    // The saved garbage reloaded and added: reported at the add.
    let p = problems(vec![vec![
        args(),
        MInst::Str { rs: phys(gpr(5)), addr: spill() },
        MInst::Ldr { rd: phys(gpr(2)), addr: spill() },
        MInst::Mov { rd: phys(gpr(3)), op2: Op2::Reg(phys(gpr(2))) },
        add(0, 0, 3),
        ret(0),
    ]]);
    assert!(p.contains("instruction 4") && p.contains("reads r3"), "{p}");
    // A spill store predicated by if-conversion defines its slot (like a predicated
    // definition, its condition is not tracked).
    let predicated = vec![vec![
        args(),
        MInst::Cmp { op: CmpOp::Cmp, rn: phys(gpr(0)), op2: Op2::Reg(phys(gpr(1))) },
        MInst::Pred { cc: Cond::Lt, inst: Box::new(MInst::Str { rs: phys(gpr(1)), addr: spill() }) },
        MInst::Ldr { rd: phys(gpr(2)), addr: spill() },
        add(0, 0, 2),
        ret(0),
    ]];
    assert_eq!(verify(&func(predicated), true), Ok(()));
    // A reload of a slot one path leaves unwritten.
    let mut d = diamond();
    d[1].insert(0, MInst::Str { rs: phys(gpr(1)), addr: spill() });
    d[2].insert(0, MInst::Ldr { rd: phys(gpr(2)), addr: spill() });
    d[2].insert(1, add(0, 0, 2));
    let p = problems(d);
    assert!(p.contains("block 2") && p.contains("reads r2"), "{p}");
}

#[test]
fn a_value_in_a_caller_saved_register_does_not_survive_a_call() {
    let p = problems(vec![vec![args(), call(), add(0, 0, 1), ret(0)]]);
    assert!(p.contains("reads r1"), "{p}");
}

#[test]
fn a_callee_saved_register_is_not_read_before_it_is_written() {
    let p = problems(vec![vec![args(), add(0, 0, 5), ret(0)]]);
    assert!(p.contains("reads r5"), "{p}");
}

#[test]
fn conditional_instructions_need_the_flags_set_on_every_path() {
    let mut d = diamond();
    d[0].remove(1);
    assert!(problems(d).contains("condition flags"));
    // A call between the comparison and the branch clobbers the flags.
    let mut d = diamond();
    d[0].insert(2, call());
    assert!(problems(d).contains("condition flags"));
}

#[test]
fn registers_must_fit_their_role_and_the_reservations() {
    let vfp_in_core_op = vec![vec![args(), add(0, 0, 1), MInst::VMov { sd: phys(spr(0)), sm: phys(gpr(0)) }, ret(0)]];
    assert!(problems(vfp_in_core_op).contains("Int register where a Float one is needed"));
    let sp = vec![vec![args(), add(0, 0, regs::SP), ret(0)]];
    assert!(problems(sp).contains("reserved register sp"));
    let ip = vec![vec![args(), MInst::LoadImm { rd: phys(gpr(regs::IP)), value: 1 }, add(0, 0, regs::IP), ret(0)]];
    assert_eq!(verify(&func(ip.clone()), true), Ok(()));
    assert!(verify(&func(ip), false).expect_err("ip reserved").join("\n").contains("reserved register ip"));
    let misplaced_result = vec![vec![args(), MInst::Ret { val: Some((phys(gpr(1)), gpr(0))) }]];
    assert!(problems(misplaced_result).contains("must be in r0"));
}

#[test]
fn branches_stack_slots_and_block_ends_are_checked() {
    let mut d = diamond();
    d[1][1] = MInst::Jump { target: Block::new(9) };
    assert!(problems(d).contains("branches to block 9"));
    let mut d = diamond();
    d[2].push(add(0, 0, 1));
    assert!(problems(d).contains("ends the block but is followed"));
    let mut d = diamond();
    d[2] = vec![add(0, 0, 1)];
    assert!(problems(d).contains("falls off the end"));
    let spill = |n: u32, off: i32| vec![vec![args(), MInst::Str { rs: phys(gpr(0)), addr: Addr::Frame { obj: FrameObj::Spill(n), off } }, ret(0)]];
    assert_eq!(verify(&func(spill(0, 0)), true), Ok(()));
    assert!(problems(spill(1, 0)).contains("does not have"));
    assert!(problems(spill(0, 4)).contains("bytes 4..8"));
    let alloca = vec![vec![args(), MInst::FrameAddr { rd: phys(gpr(0)), obj: FrameObj::Alloca(3), off: 0 }, ret(0)]];
    assert!(problems(alloca).contains("Alloca(3)"));
}

#[test]
fn unreachable_blocks_are_not_held_to_the_entry_state() {
    // Block 1 has no predecessor: nothing flows into it, so reading r7 there is not reported.
    let blocks = vec![vec![args(), ret(0)], vec![add(0, 0, 7), ret(0)]];
    assert_eq!(verify(&func(blocks), true), Ok(()));
}

/// After a post-allocation stage, the verifier runs exactly when the stage changed the
/// function (whatever the stage would say about it), and its verdict is the result.
#[test]
fn a_stage_is_verified_when_it_changed_the_function() {
    use crate::isa::arm::rewrite_then_check;
    let checked = std::cell::Cell::new(0);
    let check = |pf: &PFunction| {
        checked.set(checked.get() + 1);
        verify(pf, true).map_err(|problems| crate::isa::arm::BackendError::MachineVerifier {
            func: pf.sym.clone(),
            after: "test stage".into(),
            problems: problems.join("\n"),
        })
    };
    let mut pf = func(vec![vec![args(), add(0, 0, 1), ret(0)]]);
    assert!(rewrite_then_check(&mut pf, true, |_| {}, check).is_ok());
    assert_eq!(checked.get(), 0, "an untouched function is not verified again");
    // Reads r3, which nothing defines: the verifier must see it.
    let broken = rewrite_then_check(&mut pf, true, |pf| pf.blocks[0].1.insts[1] = add(0, 0, 3), check);
    assert_eq!(checked.get(), 1);
    assert!(broken.is_err(), "the broken stage output is reported");
    // Without verification nothing is checked.
    assert!(rewrite_then_check(&mut pf, false, |pf| pf.blocks[0].1.insts[1] = add(0, 0, 2), check).is_ok());
    assert_eq!(checked.get(), 1);
}
