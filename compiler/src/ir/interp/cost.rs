//! Dynamic instruction counts by class ("instruction execute cost").
//!
//! Every executed IR instruction is counted once in the class of its opcode; a call to the
//! runtime library counts as one `Call`, and the phis of a block count when control enters
//! it over an edge. Weights per class turn the counts into a cost model.

use std::fmt;

use crate::ir::Opcode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CostClass {
    /// `add`, `sub`, `icmp`, `zext`, `select`, `gep`.
    Alu,
    Mul,
    /// `sdiv`, `srem`.
    Div,
    /// `fadd`, `fsub`, `fneg`, `fcmp`.
    FloatAlu,
    FloatMul,
    FloatDiv,
    /// `sitofp`, `fptosi`.
    Convert,
    Load,
    Store,
    /// `jump`, `br`.
    Branch,
    /// Calls of module functions and of the runtime library.
    Call,
    Return,
    Phi,
    /// `alloca`, `memzero`, `unreachable`.
    Other,
}

impl CostClass {
    pub const ALL: [CostClass; 14] = [
        CostClass::Alu,
        CostClass::Mul,
        CostClass::Div,
        CostClass::FloatAlu,
        CostClass::FloatMul,
        CostClass::FloatDiv,
        CostClass::Convert,
        CostClass::Load,
        CostClass::Store,
        CostClass::Branch,
        CostClass::Call,
        CostClass::Return,
        CostClass::Phi,
        CostClass::Other,
    ];

    pub const COUNT: usize = CostClass::ALL.len();

    pub fn of(op: Opcode) -> CostClass {
        match op {
            Opcode::Add | Opcode::Sub | Opcode::Icmp(_) | Opcode::Zext | Opcode::Select | Opcode::Gep { .. } => {
                CostClass::Alu
            }
            Opcode::Mul => CostClass::Mul,
            Opcode::SDiv | Opcode::SRem => CostClass::Div,
            Opcode::FAdd | Opcode::FSub | Opcode::FNeg | Opcode::Fcmp(_) => CostClass::FloatAlu,
            Opcode::FMul => CostClass::FloatMul,
            Opcode::FDiv => CostClass::FloatDiv,
            Opcode::SiToFp | Opcode::FpToSi => CostClass::Convert,
            Opcode::Load => CostClass::Load,
            Opcode::Store => CostClass::Store,
            Opcode::Jump | Opcode::Br => CostClass::Branch,
            Opcode::Call(_) => CostClass::Call,
            Opcode::Ret => CostClass::Return,
            Opcode::Phi => CostClass::Phi,
            Opcode::Alloca { .. } | Opcode::MemZero { .. } | Opcode::Unreachable => CostClass::Other,
        }
    }

    /// Stable snake-case name (for CSV columns).
    pub fn name(self) -> &'static str {
        match self {
            CostClass::Alu => "alu",
            CostClass::Mul => "mul",
            CostClass::Div => "div",
            CostClass::FloatAlu => "float_alu",
            CostClass::FloatMul => "float_mul",
            CostClass::FloatDiv => "float_div",
            CostClass::Convert => "convert",
            CostClass::Load => "load",
            CostClass::Store => "store",
            CostClass::Branch => "branch",
            CostClass::Call => "call",
            CostClass::Return => "return",
            CostClass::Phi => "phi",
            CostClass::Other => "other",
        }
    }
}

/// Executed instructions per [`CostClass`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CostCounts {
    counts: [u64; CostClass::COUNT],
}

impl CostCounts {
    pub fn get(&self, class: CostClass) -> u64 {
        self.counts[class as usize]
    }

    pub(super) fn add(&mut self, class: CostClass, n: u64) {
        self.counts[class as usize] += n;
    }

    pub(super) fn sub(&mut self, class: CostClass, n: u64) {
        self.counts[class as usize] -= n;
    }

    /// All executed instructions (equals the outcome's `steps`).
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// `Σ count(class) · weight(class)`.
    pub fn weighted(&self, weight: impl Fn(CostClass) -> u64) -> u64 {
        CostClass::ALL.iter().map(|&c| self.get(c) * weight(c)).sum()
    }

    /// `(class, count)` pairs in [`CostClass::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (CostClass, u64)> + '_ {
        CostClass::ALL.iter().map(|&c| (c, self.get(c)))
    }
}

impl fmt::Display for CostCounts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (c, n) in self.iter().filter(|&(_, n)| n > 0) {
            if !first {
                f.write_str(" ")?;
            }
            write!(f, "{}={n}", c.name())?;
            first = false;
        }
        Ok(())
    }
}
