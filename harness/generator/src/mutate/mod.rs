//! Mutational seeds: variants of existing programs, made on the compiler's AST.
//!
//! A variant is a program with one to three mutations applied, each an [`Operator`] drawn
//! from a [`Choices`] stream, so the same program, coverage and seed give the same variant.
//! The families: operators swapped for neighbours and operands swapped ([`operators`]),
//! constants moved to boundary values ([`constants`]), statements duplicated, deleted or
//! moved, loop bounds changed, loops wrapped around statements ([`statements`]),
//! expressions moved into helpers or recursive helpers and calls inserted ([`outline`]), and
//! EMI on the statements the reference run did not execute ([`emi`]: needs a [`Coverage`]).
//!
//! Every operator keeps the program well typed (it only reuses names in scope and types it
//! can infer, see `walk`), but not free of undefined behaviour nor of the same meaning: the
//! caller runs every variant in the reference interpreter, which discards those that trap
//! and gives the others their truth.

mod constants;
mod emi;
mod operators;
mod outline;
mod statements;
mod walk;

use crate::{Choices, SeededChoices};
use std::collections::HashSet;
use sysyc::frontend::ast::{CompUnit, Span};

/// The statements of a program that its reference run did not execute (their spans in the
/// program's parsed tree; a variant keeps the spans of what it copied).
#[derive(Clone, Debug, Default)]
pub struct Coverage {
    pub missed: HashSet<Span>,
}

/// One kind of mutation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operator {
    SwapBinary,
    SwapOperands,
    Negate,
    Boundary,
    Duplicate,
    Delete,
    Move,
    LoopBound,
    WrapLoop,
    OutlineHelper,
    OutlineRecursive,
    InsertCall,
    EmiDelete,
    EmiRewrite,
    EmiInsertDead,
}

impl Operator {
    pub const ALL: [Operator; 15] = [
        Operator::SwapBinary,
        Operator::SwapOperands,
        Operator::Negate,
        Operator::Boundary,
        Operator::Duplicate,
        Operator::Delete,
        Operator::Move,
        Operator::LoopBound,
        Operator::WrapLoop,
        Operator::OutlineHelper,
        Operator::OutlineRecursive,
        Operator::InsertCall,
        Operator::EmiDelete,
        Operator::EmiRewrite,
        Operator::EmiInsertDead,
    ];

    /// Stable name (recorded in a campaign's `programs.csv`).
    pub fn name(self) -> &'static str {
        match self {
            Operator::SwapBinary => "swap-binary",
            Operator::SwapOperands => "swap-operands",
            Operator::Negate => "negate",
            Operator::Boundary => "boundary",
            Operator::Duplicate => "duplicate",
            Operator::Delete => "delete",
            Operator::Move => "move",
            Operator::LoopBound => "loop-bound",
            Operator::WrapLoop => "wrap-loop",
            Operator::OutlineHelper => "outline",
            Operator::OutlineRecursive => "outline-recursive",
            Operator::InsertCall => "insert-call",
            Operator::EmiDelete => "emi-delete",
            Operator::EmiRewrite => "emi-rewrite",
            Operator::EmiInsertDead => "emi-insert-dead",
        }
    }

    pub fn from_name(name: &str) -> Option<Operator> {
        Operator::ALL.into_iter().find(|o| o.name() == name)
    }

    /// Whether it needs the program's coverage.
    pub fn is_emi(self) -> bool {
        matches!(self, Operator::EmiDelete | Operator::EmiRewrite | Operator::EmiInsertDead)
    }

    /// Relative weight when drawn (EMI and calls more often: they make the shapes the
    /// generator misses).
    fn weight(self) -> u32 {
        match self {
            Operator::Negate | Operator::SwapOperands | Operator::Move => 2,
            Operator::EmiDelete | Operator::EmiInsertDead | Operator::InsertCall | Operator::OutlineRecursive => 4,
            _ => 3,
        }
    }

    /// Applies the operator once; `false` when the program has no place for it (it is then
    /// unchanged).
    pub fn apply(self, unit: &mut CompUnit, choices: &mut dyn Choices, coverage: Option<&Coverage>) -> bool {
        match self {
            Operator::SwapBinary => operators::swap_binary(unit, choices),
            Operator::SwapOperands => operators::swap_operands(unit, choices),
            Operator::Negate => operators::negate(unit, choices),
            Operator::Boundary => constants::boundary(unit, choices),
            Operator::Duplicate => statements::duplicate(unit, choices),
            Operator::Delete => statements::delete(unit, choices),
            Operator::Move => statements::move_down(unit, choices),
            Operator::LoopBound => statements::loop_bound(unit, choices),
            Operator::WrapLoop => statements::wrap_loop(unit, choices),
            Operator::OutlineHelper => outline::outline_helper(unit, choices),
            Operator::OutlineRecursive => outline::outline_recursive(unit, choices),
            Operator::InsertCall => outline::insert_call(unit, choices),
            Operator::EmiDelete => coverage.is_some_and(|c| emi::delete_dead(unit, choices, c)),
            Operator::EmiRewrite => coverage.is_some_and(|c| emi::rewrite_dead(unit, choices, c)),
            Operator::EmiInsertDead => coverage.is_some_and(|c| emi::insert_dead(unit, choices, c)),
        }
    }
}

/// A variant and the operators that made it, in order.
#[derive(Clone, Debug)]
pub struct Mutant {
    pub unit: CompUnit,
    pub applied: Vec<Operator>,
}

impl Mutant {
    /// The operators as recorded: names joined by `+` (`-` for none).
    pub fn operators(&self) -> String {
        if self.applied.is_empty() {
            return "-".into();
        }
        self.applied.iter().map(|o| o.name()).collect::<Vec<_>>().join("+")
    }
}

/// A variant of `unit` made by one to three operators drawn from the stream of `seed`
/// (deterministic: the same unit, coverage and seed give the same variant). Operators that
/// find no place are drawn again, up to a few times.
pub fn mutate(unit: &CompUnit, coverage: Option<&Coverage>, seed: u64) -> Mutant {
    let mut choices = SeededChoices::new(seed);
    mutate_with(unit, coverage, &mut choices)
}

/// [`mutate`] with any stream of decisions.
pub fn mutate_with(unit: &CompUnit, coverage: Option<&Coverage>, choices: &mut dyn Choices) -> Mutant {
    let usable: Vec<Operator> = Operator::ALL.into_iter().filter(|o| coverage.is_some() || !o.is_emi()).collect();
    let weights: Vec<u32> = usable.iter().map(|o| o.weight()).collect();
    let mut out = Mutant { unit: unit.clone(), applied: Vec::new() };
    let wanted = choices.range(1, 3) as usize;
    let mut tries = 0;
    while out.applied.len() < wanted && tries < 12 {
        tries += 1;
        let op = usable[choices.weighted(&weights)];
        if op.apply(&mut out.unit, choices, coverage) {
            out.applied.push(op);
        }
    }
    out
}

#[cfg(test)]
mod tests;
