//! The instruction classes the cost model counts.
//!
//! A class groups instructions that cost roughly the same on an in-order
//! Cortex-A7/A9-class core. The groups are chosen for the code a SysY compiler
//! emits (integer arithmetic, address arithmetic, single-precision VFP) and for
//! a clean program-versus-libc comparison; they are not a full ISA taxonomy.
//!
//! Precise definitions (the decoders in [`crate::decode`] implement exactly these):
//!
//! * [`InsnClass::Alu`] — integer data processing whose operands are registers
//!   or immediates without a shift: `add`, `sub`, `rsb`, `and`, `orr`, `eor`,
//!   `bic`, `mov`, `mvn`, `cmp`, `cmn`, `tst`, `teq`, `adc`, `sbc`, `movw`,
//!   `movt`, `clz`, `rev*`, `rbit`, `sxt*`/`uxt*` (byte rotation is not a shift
//!   through the barrel shifter), bit-field ops (`bfi`, `bfc`, `ubfx`, `sbfx`),
//!   saturating and parallel arithmetic, `sel`, `usad8`, `adr`, `add sp, #imm`.
//! * [`InsnClass::AluShifted`] — data processing whose second operand goes
//!   through the barrel shifter: register shifted by an immediate (`lsl #n`
//!   with n ≠ 0, `lsr`, `asr`, `ror`, `rrx`) or by a register (`add r0, r1, r2,
//!   lsl r3`). The stand-alone shift instructions (`lsl r0, r1, #2`,
//!   `lsr r0, r1, r2`, Thumb `lsls`) are `mov` with a shifted operand and belong
//!   here too; `lsl #0` (a plain `mov`) does not.
//! * [`InsnClass::Mul`] — 32-bit result multiplies: `mul`, `mla`, `mls`, the
//!   DSP halfword/dual multiplies (`smulbb`, `smlad`, `smmul`, ...).
//! * [`InsnClass::MulLong`] — 64-bit result multiplies: `umull`, `smull`,
//!   `umlal`, `smlal`, `umaal`, `smlalbb`, `smlald`, ...
//! * [`InsnClass::Div`] — `sdiv`, `udiv`.
//! * [`InsnClass::Load`] — single integer loads (`ldr`, `ldrb`, `ldrh`,
//!   `ldrsb`, `ldrsh`, `ldrd`, `ldrex*`, `swp`) that do not load the PC.
//! * [`InsnClass::Store`] — single integer stores (`str*`, `strd`, `strex*`).
//! * [`InsnClass::LoadStoreMultiple`] — `ldm`/`stm` in every addressing mode,
//!   `push`, and `pop` whose register list does not contain the PC. (A32
//!   encodes a one-register `push {r8}`/`pop {r8}` as `str`/`ldr`; classes
//!   follow the encoding, so those count as a store/load.)
//! * [`InsnClass::Branch`] — unconditional direct branches: `b`, `bl`,
//!   `blx <label>`.
//! * [`InsnClass::CondBranch`] — conditional direct branches: `b<cond>`,
//!   `bl<cond>`, Thumb `cbz`/`cbnz`, and Thumb `b`/`bl` inside an IT block.
//! * [`InsnClass::IndirectBranch`] — branches to a register or loaded value,
//!   returns included: `bx`, `blx <reg>`, `bxj`, `ldr pc, ...`, `ldm`/`pop` with
//!   the PC in the list, any data-processing instruction writing the PC
//!   (`mov pc, lr`, `add pc, pc, r3, lsl #2`), Thumb `tbb`/`tbh`.
//! * [`InsnClass::VfpAdd`] — `vadd`, `vsub`, and the compares `vcmp`/`vcmpe`
//!   (they run on the VFP adder).
//! * [`InsnClass::VfpMul`] — `vmul`, `vnmul`, and the multiply-accumulates
//!   `vmla`, `vmls`, `vnmla`, `vnmls`, `vfma`, `vfms`, `vfnma`, `vfnms`.
//! * [`InsnClass::VfpDiv`] — `vdiv`, `vsqrt`.
//! * [`InsnClass::VfpConvert`] — every `vcvt*` (integer ↔ float, fixed ↔ float,
//!   single ↔ double, half ↔ single).
//! * [`InsnClass::VfpLoadStoreMove`] — moving data into, out of and between
//!   VFP/NEON registers without arithmetic: `vldr`, `vstr`, `vldm`, `vstm`,
//!   `vpush`, `vpop`, every `vmov`, `vmrs`, `vmsr`, `vabs`, `vneg` (sign-bit
//!   moves), `vdup`, and the Advanced SIMD structure loads/stores `vld1..4`,
//!   `vst1..4`.
//! * [`InsnClass::Other`] — everything else: `svc`, `nop` and hints, barriers,
//!   `it`, `mrs`/`msr`, coprocessor transfers (`mrc p15` for the TLS pointer),
//!   preloads (`pld`, `pli`), Advanced SIMD data processing, and encodings the
//!   decoders do not recognise.
//!
//! Conditionally executed instructions (ARM condition codes, Thumb IT blocks)
//! are counted whether or not their condition passes: QEMU executes the block
//! and the core still issues them.

/// Number of instruction classes.
pub const NUM_CLASSES: usize = 17;

/// A cost class of one executed instruction. See the module documentation for
/// the exact membership of each class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum InsnClass {
    Alu = 0,
    AluShifted = 1,
    Mul = 2,
    MulLong = 3,
    Div = 4,
    Load = 5,
    Store = 6,
    LoadStoreMultiple = 7,
    Branch = 8,
    CondBranch = 9,
    IndirectBranch = 10,
    VfpAdd = 11,
    VfpMul = 12,
    VfpDiv = 13,
    VfpConvert = 14,
    VfpLoadStoreMove = 15,
    Other = 16,
}

impl InsnClass {
    /// All classes in index order.
    pub const ALL: [InsnClass; NUM_CLASSES] = [
        InsnClass::Alu,
        InsnClass::AluShifted,
        InsnClass::Mul,
        InsnClass::MulLong,
        InsnClass::Div,
        InsnClass::Load,
        InsnClass::Store,
        InsnClass::LoadStoreMultiple,
        InsnClass::Branch,
        InsnClass::CondBranch,
        InsnClass::IndirectBranch,
        InsnClass::VfpAdd,
        InsnClass::VfpMul,
        InsnClass::VfpDiv,
        InsnClass::VfpConvert,
        InsnClass::VfpLoadStoreMove,
        InsnClass::Other,
    ];

    /// Dense index in `0..NUM_CLASSES`; also the slot in the counter file.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The class with dense index `index`, if any.
    pub fn from_index(index: usize) -> Option<InsnClass> {
        Self::ALL.get(index).copied()
    }

    /// A stable snake_case name, used in reports and CSV headers.
    pub const fn name(self) -> &'static str {
        match self {
            InsnClass::Alu => "alu",
            InsnClass::AluShifted => "alu_shifted",
            InsnClass::Mul => "mul",
            InsnClass::MulLong => "mul_long",
            InsnClass::Div => "div",
            InsnClass::Load => "load",
            InsnClass::Store => "store",
            InsnClass::LoadStoreMultiple => "load_store_multiple",
            InsnClass::Branch => "branch",
            InsnClass::CondBranch => "cond_branch",
            InsnClass::IndirectBranch => "indirect_branch",
            InsnClass::VfpAdd => "vfp_add",
            InsnClass::VfpMul => "vfp_mul",
            InsnClass::VfpDiv => "vfp_div",
            InsnClass::VfpConvert => "vfp_convert",
            InsnClass::VfpLoadStoreMove => "vfp_load_store_move",
            InsnClass::Other => "other",
        }
    }

    /// The class named `name` (as returned by [`InsnClass::name`]).
    pub fn from_name(name: &str) -> Option<InsnClass> {
        Self::ALL.iter().copied().find(|class| class.name() == name)
    }

    /// Whether the instruction transfers control (and so ends a QEMU
    /// translation block).
    pub const fn is_branch(self) -> bool {
        matches!(
            self,
            InsnClass::Branch | InsnClass::CondBranch | InsnClass::IndirectBranch
        )
    }
}

impl std::fmt::Display for InsnClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Per-class counts: a dense array indexed by [`InsnClass::index`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClassCounts(pub [u64; NUM_CLASSES]);

impl ClassCounts {
    /// The count of `class`.
    pub fn get(&self, class: InsnClass) -> u64 {
        self.0[class.index()]
    }

    /// Adds `amount` to the count of `class`.
    pub fn add(&mut self, class: InsnClass, amount: u64) {
        self.0[class.index()] += amount;
    }

    /// Sum over all classes.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Element-wise sum.
    pub fn merged(&self, other: &ClassCounts) -> ClassCounts {
        let mut out = *self;
        for (slot, extra) in out.0.iter_mut().zip(other.0.iter()) {
            *slot += extra;
        }
        out
    }

    /// `(class, count)` pairs in class order, including zero counts.
    pub fn iter(&self) -> impl Iterator<Item = (InsnClass, u64)> + '_ {
        InsnClass::ALL
            .iter()
            .map(move |&class| (class, self.get(class)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_names_round_trip() {
        for (i, class) in InsnClass::ALL.iter().enumerate() {
            assert_eq!(class.index(), i);
            assert_eq!(InsnClass::from_index(i), Some(*class));
            assert_eq!(InsnClass::from_name(class.name()), Some(*class));
        }
        assert_eq!(InsnClass::from_index(NUM_CLASSES), None);
        assert_eq!(InsnClass::from_name("nonsense"), None);
    }

    #[test]
    fn counts_sum_and_merge() {
        let mut a = ClassCounts::default();
        a.add(InsnClass::Load, 3);
        a.add(InsnClass::Alu, 2);
        let mut b = ClassCounts::default();
        b.add(InsnClass::Load, 1);
        let m = a.merged(&b);
        assert_eq!(m.get(InsnClass::Load), 4);
        assert_eq!(m.total(), 6);
    }
}
