//! BackendStage `arm-leaf-regs`: in functions without calls, callee-saved registers (`r4`–`r11`,
//! `lr`, `s16`–`s31`) that the allocator used are renamed to caller-saved registers the
//! function does not mention at all, so the prologue saves less.
//!
//! `regalloc2` only distinguishes preferred from non-preferred registers; it may pick `lr`
//! or `r4` for a temporary in a leaf function while `ip` or `r3` stay untouched. Renaming one
//! register to another that appears nowhere else in the function is always valid when no
//! call can clobber the new register, and callee-saved registers never carry fixed ABI
//! roles (arguments and results live in `r0`–`r3`/`s0`–`s15`).

use regalloc2::PReg;

use super::mir::{MInst, OperandVisitor, PFunction, Reg};
use super::regs::{self, IP, LR};

pub fn run(pf: &mut PFunction, ip_allocatable: bool) {
    if pf.frame.has_calls || pf.blocks.iter().any(|(_, b)| b.insts.iter().any(|i| matches!(i, MInst::Call { .. }))) {
        return;
    }
    let mentioned = pf.mentioned_regs();
    let mut free_int: Vec<PReg> = (0..4).map(regs::gpr).filter(|&p| !mentioned.contains(p)).collect();
    if ip_allocatable && !mentioned.contains(regs::gpr(IP)) {
        free_int.push(regs::gpr(IP));
    }
    let mut free_float: Vec<PReg> = (0..16).map(regs::spr).filter(|&p| !mentioned.contains(p)).collect();
    let saved_int = std::iter::once(LR).chain(4..=11).map(regs::gpr).filter(|&p| mentioned.contains(p));
    let saved_float = (16..32).rev().map(regs::spr).filter(|&p| mentioned.contains(p));
    let mut renames: Vec<(PReg, PReg)> = Vec::new();
    for old in saved_int {
        match free_int.pop() {
            Some(new) => renames.push((old, new)),
            None => break,
        }
    }
    for old in saved_float {
        match free_float.pop() {
            Some(new) => renames.push((old, new)),
            None => break,
        }
    }
    if renames.is_empty() {
        return;
    }
    struct Rename<'a>(&'a [(PReg, PReg)]);
    impl Rename<'_> {
        fn map(&self, r: &mut Reg) {
            if let Reg::Phys(p) = r
                && let Some(&(_, new)) = self.0.iter().find(|(old, _)| old == p)
            {
                *r = Reg::Phys(new);
            }
        }
    }
    impl OperandVisitor for Rename<'_> {
        fn reg_use(&mut self, r: &mut Reg) {
            self.map(r)
        }
        fn reg_def(&mut self, r: &mut Reg) {
            self.map(r)
        }
        fn reg_temp(&mut self, r: &mut Reg) {
            self.map(r)
        }
        fn reg_reuse_def(&mut self, r: &mut Reg, _input: usize) {
            self.map(r)
        }
        fn fixed_use(&mut self, r: &mut Reg, _p: PReg) {
            self.map(r)
        }
        fn fixed_def(&mut self, r: &mut Reg, _p: PReg) {
            self.map(r)
        }
    }
    let mut v = Rename(&renames);
    for (_, block) in &mut pf.blocks {
        for inst in &mut block.insts {
            inst.visit(&mut v);
        }
    }
}
