//! Per-class cycle costs and the cycle estimate.
//!
//! There is no ARM hardware to measure on, so the estimate is
//! `Σ count(class) × cost(class)`: cheap, deterministic, and good enough to
//! rank code-generation choices (it is not a wall-clock prediction). A cost is
//! the *result latency* of a typical instruction of the class on an in-order
//! Cortex-A9/A7-class core, i.e. what a dependent successor waits. That is
//! pessimistic for independent instructions, which an in-order dual-issue core
//! partly overlaps, and it is meant to be: a compiler that shortens dependency
//! chains should see it.
//!
//! # Sources of the numbers in [`LatencyTable::CORTEX_A9_LIKE`]
//!
//! * ARM Cortex-A9 Technical Reference Manual (ARM DDI 0388, appendix B
//!   "Cycle Timings and Interlock Behavior"): single loads have a result
//!   latency of 3 (2 when forwarded to a plain ALU op, 4 with a
//!   register-shifted offset); the core loads or stores two registers per
//!   cycle, so an LDM of 4 registers takes 2–3 AGU cycles with the first
//!   register ready after 3.
//! * LLVM's Cortex-A9 scheduling model (`llvm/lib/Target/ARM/ARMScheduleA9.td`,
//!   built from that TRM and the Cortex-A9 FPU TRM, ARM DDI 0408), read out
//!   with `llvm-mca-14 -mtriple=armv7-linux-gnueabihf -mcpu=cortex-a9` on one
//!   representative instruction per class. Figures it gave: `add` 1;
//!   `add ..., lsl #2` 2; `add ..., lsl r3` 3; `mul`/`mla`/`mls` 4;
//!   `smull`/`umlal` 5; `ldr [r1, #4]` 3 (`ldr [r1, r2, lsl #2]` 4); `str` 1;
//!   `b`/`bl`/`bx lr` 1; `vadd.f32`/`vsub.f32`/`vadd.f64` 4; `vmul.f32` 5;
//!   `vmla.f32`/`vfma.f32` 8; `vdiv.f32` 15; `vdiv.f64` 25; `vsqrt.f32` 17;
//!   `vcvt` 4; `vmov`, `vcmp`, `vneg`, `vmrs` 1; `vldr`/`vstr` 1 (issue only).
//!   It cannot model `ldm`/`stm` (it fails on them) nor `sdiv` (the A9 has none).
//! * The project's TOOLCHAIN.md ballparks: SDIV 4–20 cycles data dependent
//!   (Cortex-A7/A15 divide iteratively), branch misprediction about 8 cycles;
//!   its other figures agree with the above.
//!
//! Where a class mixes instructions of different cost, the choice is explained
//! in the table below; SysY code only uses single precision, so F32 figures are
//! taken.

use crate::class::{ClassCounts, InsnClass, NUM_CLASSES};

/// Cycle cost of one instruction of each class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatencyTable(pub [u64; NUM_CLASSES]);

impl LatencyTable {
    /// Cortex-A9/A7-like costs; each entry's reasoning is next to it.
    pub const CORTEX_A9_LIKE: LatencyTable = {
        let mut t = [0; NUM_CLASSES];
        t[InsnClass::Alu as usize] = 1;
        // Immediate shifts cost 2, register shifts 3; compilers emit almost only
        // immediate shifts (address scaling).
        t[InsnClass::AluShifted as usize] = 2;
        t[InsnClass::Mul as usize] = 4;
        t[InsnClass::MulLong as usize] = 5;
        // Iterative divider: latency grows with the quotient's significant
        // bits, 4–20 cycles; the midpoint stands for typical operands.
        t[InsnClass::Div as usize] = 12;
        // L1 hit, load-to-use.
        t[InsnClass::Load as usize] = 3;
        t[InsnClass::Store as usize] = 1;
        // One cycle plus two registers per cycle; prologue/epilogue lists have
        // about four registers.
        t[InsnClass::LoadStoreMultiple as usize] = 3;
        t[InsnClass::Branch as usize] = 1;
        // Predicted branch (1) plus an assumed one-in-eight misprediction of
        // about 8 cycles.
        t[InsnClass::CondBranch as usize] = 2;
        // Returns are mostly `pop {..., pc}` / `ldr pc`: a load (3) whose target
        // the return stack predicts; `bx lr` alone would be 1.
        t[InsnClass::IndirectBranch as usize] = 3;
        // vadd/vsub 4; vcmp (1) is rare next to them.
        t[InsnClass::VfpAdd as usize] = 4;
        // vmul 5; vmla/vfma are 8 but compilers for this target emit few of them.
        t[InsnClass::VfpMul as usize] = 5;
        // vdiv.f32 15 (vsqrt.f32 17; double precision 25+).
        t[InsnClass::VfpDiv as usize] = 15;
        t[InsnClass::VfpConvert as usize] = 4;
        // A blend: vmov/vstr issue in 1, a vldr result is ready after about 4.
        t[InsnClass::VfpLoadStoreMove as usize] = 2;
        t[InsnClass::Other as usize] = 1;
        LatencyTable(t)
    };

    /// The cost of `class`.
    pub fn cost(&self, class: InsnClass) -> u64 {
        self.0[class.index()]
    }

    /// Estimated cycles for executing `counts`.
    pub fn cycles(&self, counts: &ClassCounts) -> u64 {
        counts
            .iter()
            .map(|(class, n)| n.saturating_mul(self.cost(class)))
            .fold(0, u64::saturating_add)
    }
}

impl Default for LatencyTable {
    fn default() -> Self {
        LatencyTable::CORTEX_A9_LIKE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_has_a_positive_cost() {
        for class in InsnClass::ALL {
            assert!(LatencyTable::CORTEX_A9_LIKE.cost(class) > 0, "{class}");
        }
    }

    #[test]
    fn cycles_weight_counts_by_cost() {
        let mut counts = ClassCounts::default();
        counts.add(InsnClass::Alu, 10);
        counts.add(InsnClass::VfpDiv, 2);
        counts.add(InsnClass::Load, 1);
        assert_eq!(
            LatencyTable::CORTEX_A9_LIKE.cycles(&counts),
            10 + 2 * 15 + 3
        );
    }
}
