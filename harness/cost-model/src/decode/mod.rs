//! Classifying ARMv7-A instructions (A32, T32 and T16 encodings) into cost
//! classes.
//!
//! The decoders follow the encoding tables of the ARMv7-A/R Architecture
//! Reference Manual (section numbers are cited next to each table): they walk
//! the top-level opcode fields only as far as needed to tell the classes of
//! [`crate::class`] apart, plus what a translation-block walk needs to know —
//! whether the instruction transfers control and, for direct branches, where
//! to (see [`Flow`]). They never panic: every 32-bit word (and halfword pair)
//! decodes to something; unallocated encodings come back as
//! [`InsnClass::Other`] with [`Flow::Undefined`].
//!
//! The VFP data-processing and register-transfer encodings are shared by A32
//! and T32 (T32 uses the A32 layout with the condition field replaced by
//! `1110`), so [`a32`] owns them and [`t32`] forwards to it.

pub mod a32;
pub mod t32;

use crate::class::InsnClass;

/// Instruction set state of a block of code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    /// A32: fixed 32-bit instructions, word aligned.
    Arm,
    /// T32: 16-bit and 32-bit instructions, halfword aligned.
    Thumb,
}

impl Mode {
    /// The other instruction set (what an interworking branch switches to).
    pub fn other(self) -> Mode {
        match self {
            Mode::Arm => Mode::Thumb,
            Mode::Thumb => Mode::Arm,
        }
    }
}

/// What an instruction does to the flow of control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Falls through to the next instruction (conditional execution aside).
    Next,
    /// Branches to a known address. `exchange` means the target runs in the
    /// other instruction set (`blx <label>`).
    Direct { target: u64, exchange: bool },
    /// Branches to an address computed at run time (register, loaded value).
    Indirect,
    /// Traps or stops: `svc`, `udf`, `bkpt`, exception returns.
    Stop,
    /// Not an allocated encoding of ARMv7-A (with the extensions we model).
    Undefined,
}

/// The decoder's verdict on one instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoded {
    pub class: InsnClass,
    pub flow: Flow,
}

impl Decoded {
    pub(crate) const fn next(class: InsnClass) -> Decoded {
        Decoded {
            class,
            flow: Flow::Next,
        }
    }

    pub(crate) const fn indirect() -> Decoded {
        Decoded {
            class: InsnClass::IndirectBranch,
            flow: Flow::Indirect,
        }
    }

    pub(crate) const fn stop() -> Decoded {
        Decoded {
            class: InsnClass::Other,
            flow: Flow::Stop,
        }
    }

    pub(crate) const fn undefined() -> Decoded {
        Decoded {
            class: InsnClass::Other,
            flow: Flow::Undefined,
        }
    }

    /// Whether QEMU necessarily ends a translation block after this
    /// instruction (it writes the PC or traps).
    pub fn ends_block(&self) -> bool {
        matches!(self.flow, Flow::Direct { .. } | Flow::Indirect | Flow::Stop)
    }
}

/// Bits `hi..=lo` of `word`, shifted down.
#[inline]
pub(crate) const fn bits(word: u32, hi: u32, lo: u32) -> u32 {
    (word >> lo) & ((1u32 << (hi - lo + 1)) - 1)
}

/// Bit `n` of `word`.
#[inline]
pub(crate) const fn bit(word: u32, n: u32) -> bool {
    (word >> n) & 1 == 1
}

/// Sign-extends the low `width` bits of `value`.
#[inline]
pub(crate) const fn sign_extend(value: u32, width: u32) -> i64 {
    let shift = 32 - width;
    (((value << shift) as i32) >> shift) as i64
}

/// `base + offset` in the 32-bit guest address space.
#[inline]
pub(crate) fn wrap_target(base: u64, offset: i64) -> u64 {
    (base as i64).wrapping_add(offset) as u64 & 0xffff_ffff
}
