//! The function being generated: what it may contain, where generation stands in it, and
//! its work. All of it starts afresh with every function (`program.rs`).
//!
//! Work accounting ([`Work`]): every emitted expression node and statement is charged
//! `mult` units, where `mult` is the product of the trip-count bounds of the enclosing loops
//! (and one more iteration for loop conditions). A call is charged its callee's total cost.
//! So `Work::cost` at the end of a function is a (generous) estimate of the work of one
//! call, which its callers then pay; `main`'s estimate is the program's.

use super::env::{Param, Storage, Var, VarId};
use super::value::Ty;
use sysyc::frontend::ast::Stmt;

/// Work a typical statement costs: a statement is only started when this much is left.
pub(super) const STMT_COST: u64 = 25;

/// Work one loop iteration is planned to cost: room for a few statements, so that a loop's
/// body is not cut short by the budget right away.
pub(super) const ITERATION_COST: u64 = 4 * STMT_COST;

/// The current function's estimated work against its budget. Outside functions (global
/// declarations) everything is zero: nothing is charged, everything is affordable.
#[derive(Clone, Debug, Default)]
pub(super) struct Work {
    pub cost: u64,
    pub budget: u64,
    /// The number of times the code being generated runs per call of the function.
    pub mult: u64,
}

impl Work {
    pub(super) fn new(budget: u64) -> Work {
        Work { cost: 0, budget, mult: 1 }
    }

    /// Charges `units` of work at the current loop multiplier.
    pub(super) fn charge(&mut self, units: u64) {
        self.cost = self.cost.saturating_add(self.mult.saturating_mul(units));
    }

    /// Work still available to the current function.
    pub(super) fn remaining(&self) -> u64 {
        self.budget.saturating_sub(self.cost)
    }

    /// Whether `units` more work (at the current multiplier) fits the budget.
    pub(super) fn affordable(&self, units: u64) -> bool {
        self.mult.saturating_mul(units) <= self.remaining()
    }

    /// Multiplies the multiplier by `times` (code inside a loop); returns the one to restore.
    pub(super) fn repeat(&mut self, times: u64) -> u64 {
        let saved = self.mult;
        self.mult = saved.saturating_mul(times);
        saved
    }
}

/// A loop being generated.
#[derive(Clone, Debug)]
pub(super) struct LoopCtx {
    /// Statements that must run before a `continue` (the counter update).
    pub latch: Vec<Stmt>,
    /// The counter (locked, with its range) when the loop has one.
    pub counter: Option<VarId>,
    /// The counter counts down.
    pub down: bool,
}

/// The function being generated, while it is recursive.
#[derive(Clone, Debug)]
pub(super) struct RecCtx {
    pub name: String,
    pub ret: Option<Ty>,
    pub params: Vec<Param>,
    pub pure: bool,
    /// Self-call sites so far (each runs at most once per invocation).
    pub sites: u32,
    pub max_sites: u32,
    /// The local arrays declared for the self-calls: `(parameter index, local's name)`.
    pub locals: Vec<(usize, String)>,
    /// The array parameter whose local the tail self-call will pass on (see `tail_local` in
    /// `program.rs`).
    pub tail_plan: Option<usize>,
    /// Set for the tail self-call that must pass the local (see `Feature::TailCallLocal`).
    pub tail_local: Option<(usize, String)>,
}

#[derive(Clone, Debug, Default)]
pub(super) struct FnCtx {
    pub pure: bool,
    pub ret: Option<Ty>,
    pub is_main: bool,
    /// Scope depth of `main`'s body: statements there run exactly once, in order.
    pub main_top: Option<usize>,
    /// Generating a straight-line loop body: no control flow (see `BodyKind::Straight`).
    pub straight: bool,
    pub stmts: u32,
    /// Nesting depth of the statement being generated.
    pub depth: u32,
    pub loops: Vec<LoopCtx>,
    pub rec: Option<RecCtx>,
    /// Global arrays the body accesses by name (callers passing them create aliasing).
    pub globals_used: Vec<VarId>,
    /// Globals assigned so far, directly or by a called function.
    pub globals_written: Vec<VarId>,
    /// Variables to favour when reading (globals an array parameter may alias).
    pub affinity: Vec<VarId>,
    /// The variables reads favour (`pick_var` in `operand.rs`).
    pub var_pool: Vec<VarId>,
    /// Float locals holding special values read from the input (`specials.rs`): not in the
    /// environment, so nothing but the special compares reads them.
    pub specials: Vec<String>,
}

impl FnCtx {
    /// Records an access of variable `id` by name (kept for global arrays).
    pub(super) fn note_use(&mut self, id: VarId, v: &Var) {
        if v.storage == Storage::Global && v.is_array() && !self.globals_used.contains(&id) {
            self.globals_used.push(id);
        }
    }

    /// Records an assignment of variable `id` (kept for globals).
    pub(super) fn note_write(&mut self, id: VarId, v: &Var) {
        if v.storage == Storage::Global && !self.globals_written.contains(&id) {
            self.globals_written.push(id);
        }
    }
}
