//! BackendStage `arm-remat`: spill slots that only ever hold one cheap constant are not used at all;
//! their reloads rebuild the constant instead.
//!
//! `regalloc2` cannot rematerialise: a constant or a stack address built once before a loop
//! (see `arm-const-hoist`) that loses its register to pressure is stored to a spill slot and
//! reloaded inside the loop (`ldr r9, [sp, #76]`), a 3-cycle load where one `mov`/`mvn`/`movw`
//! or `add rX, sp, #n` of one cycle would do. When *every* store into a slot stores a register
//! just set (earlier in the same block, by a one-instruction constant or a frame address) to
//! the same value, every reload of that slot becomes that instruction and the stores go.
//!
//! Soundness: a reload reads what the last store wrote, and every store writes the same
//! value, so the rebuilt value is the one the reload would have read (a reload before any
//! store would read garbage: any value is as good). Slots are only accessed as whole words by
//! `ldr`/`str` of the allocator (`vldr`/`vstr` for float slots, which this stage leaves
//! alone: a slot seen with any other access is not touched). The replacements (`mov`, `mvn`,
//! `movw`, `add rX, sp, #n`) write no flags, like the loads they replace. Runs on allocated
//! code before layout, right after `arm-spill-elim`.

use rustc_hash::FxHashMap;

use super::imm::is_arm_imm;
use super::mir::{Addr, FrameObj, MInst, Op2, PFunction, Reg};

/// A value one flag-free instruction rebuilds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cheap {
    Imm(u32),
    Frame(FrameObj, i32),
}

impl Cheap {
    fn build(self, rd: Reg) -> MInst {
        match self {
            Cheap::Imm(value) => MInst::LoadImm { rd, value },
            Cheap::Frame(obj, off) => MInst::FrameAddr { rd, obj, off },
        }
    }
}

/// The cheap value `inst` puts in `r`, if it defines `r` with one.
fn cheap_def(inst: &MInst, r: Reg) -> Option<Cheap> {
    match *inst {
        MInst::LoadImm { rd, value } if rd == r && (is_arm_imm(value) || is_arm_imm(!value) || value <= 0xffff) => {
            Some(Cheap::Imm(value))
        }
        MInst::Mov { rd, op2: Op2::Imm(value) } if rd == r => Some(Cheap::Imm(value)),
        MInst::FrameAddr { rd, obj, off } if rd == r && !matches!(obj, FrameObj::Spill(_)) => {
            Some(Cheap::Frame(obj, off))
        }
        _ => None,
    }
}

fn spill_slot(addr: &Addr) -> Option<u32> {
    match *addr {
        Addr::Frame { obj: FrameObj::Spill(n), off: 0 } => Some(n),
        _ => None,
    }
}

/// What each slot is known to hold: `Some(value)` while every store so far stores it, `None`
/// once a store or an access says otherwise.
fn slot_values(pf: &PFunction) -> FxHashMap<u32, Option<Cheap>> {
    let mut slots: FxHashMap<u32, Option<Cheap>> = FxHashMap::default();
    for (_, block) in &pf.blocks {
        for (i, inst) in block.insts.iter().enumerate() {
            match inst {
                MInst::Str { rs, addr } if let Some(n) = spill_slot(addr) => {
                    let value = stored_value(&block.insts[..i], *rs);
                    let entry = slots.entry(n).or_insert(value);
                    if *entry != value {
                        *entry = None;
                    }
                }
                MInst::Ldr { addr, .. } if spill_slot(addr).is_some() => {}
                MInst::Ldr { addr, .. }
                | MInst::Str { addr, .. }
                | MInst::Vldr { addr, .. }
                | MInst::Vstr { addr, .. }
                | MInst::VStrF64 { addr, .. } => {
                    if let Addr::Frame { obj: FrameObj::Spill(n), .. } = addr {
                        slots.insert(*n, None);
                    }
                }
                _ => {}
            }
        }
    }
    slots
}

/// The cheap value `r` holds after `before`: its last definition there, if that is one.
fn stored_value(before: &[MInst], r: Reg) -> Option<Cheap> {
    let p = r.preg()?;
    for inst in before.iter().rev() {
        let (defs, _) = inst.phys_defs_uses();
        if defs.contains(&p) || inst.clobbers().contains(p) {
            return cheap_def(inst, r);
        }
    }
    None
}

pub fn run(pf: &mut PFunction) {
    let constant: FxHashMap<u32, Cheap> =
        slot_values(pf).into_iter().filter_map(|(n, v)| v.map(|v| (n, v))).collect();
    if constant.is_empty() {
        return;
    }
    for (_, block) in &mut pf.blocks {
        block.insts.retain_mut(|inst| match inst {
            MInst::Ldr { rd, addr } => {
                if let Some(value) = spill_slot(addr).and_then(|n| constant.get(&n)) {
                    *inst = value.build(*rd);
                }
                true
            }
            MInst::Str { addr, .. } => spill_slot(addr).is_none_or(|n| !constant.contains_key(&n)),
            _ => true,
        });
    }
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

    fn slot(n: u32) -> Addr {
        Addr::Frame { obj: FrameObj::Spill(n), off: 0 }
    }

    fn func(blocks: Vec<Vec<MInst>>) -> PFunction {
        PFunction::of_blocks(blocks, FrameRequest::default(), 3)
    }

    #[test]
    fn constant_slots_are_rebuilt_and_others_kept() {
        let frame = FrameObj::Alloca(0);
        let mut pf = func(vec![
            vec![
                MInst::LoadImm { rd: r(4), value: 1000 },
                MInst::Str { rs: r(4), addr: slot(0) },
                MInst::FrameAddr { rd: r(5), obj: frame, off: 8 },
                MInst::Str { rs: r(5), addr: slot(1) },
                // Slot 2 holds 7 once and something computed once: it stays.
                MInst::LoadImm { rd: r(6), value: 7 },
                MInst::Str { rs: r(6), addr: slot(2) },
                MInst::Jump { target: Block::new(1) },
            ],
            vec![
                MInst::Ldr { rd: r(0), addr: slot(0) },
                MInst::Ldr { rd: r(1), addr: slot(1) },
                MInst::Alu { op: crate::isa::arm::mir::AluOp::Add, rd: r(6), rn: r(0), op2: Op2::Reg(r(1)) },
                MInst::Str { rs: r(6), addr: slot(2) },
                MInst::Ldr { rd: r(2), addr: slot(2) },
                MInst::Ret { val: None },
            ],
        ]);
        run(&mut pf);
        assert_eq!(pf.blocks[0].1.insts.len(), 5, "{:?}", pf.blocks[0].1.insts);
        let b1 = &pf.blocks[1].1.insts;
        assert_eq!(b1[0], MInst::LoadImm { rd: r(0), value: 1000 });
        assert_eq!(b1[1], MInst::FrameAddr { rd: r(1), obj: frame, off: 8 });
        assert_eq!(b1[3], MInst::Str { rs: r(6), addr: slot(2) });
        assert_eq!(b1[4], MInst::Ldr { rd: r(2), addr: slot(2) });
    }

    #[test]
    fn a_clobbered_register_is_not_a_constant() {
        let mut pf = func(vec![vec![
            MInst::LoadImm { rd: r(0), value: 5 },
            MInst::Call {
                sym: "g".into(),
                uses: Default::default(),
                defs: Default::default(),
                clobbers: regs::call_clobbers(),
            },
            MInst::Str { rs: r(0), addr: slot(0) },
            MInst::Ldr { rd: r(4), addr: slot(0) },
            MInst::Ret { val: None },
        ]]);
        let before = pf.blocks[0].1.insts.clone();
        run(&mut pf);
        assert_eq!(pf.blocks[0].1.insts, before);
    }
}
