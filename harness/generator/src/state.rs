//! [`Gen`], what every generating function takes: the configuration and the decisions, and
//! the generator's state, one struct per concern — the variables and scopes with their reuse
//! pools and fresh names (`Env`, `env.rs`), the function being generated and its work
//! (`FnCtx`, `Work`, `function.rs`), and what the whole program gathers ([`Unit`]).
//!
//! It also declares the two seams where the generator's parts recurse into each other: an
//! expression may contain a call, whose arguments are expressions; a loop holds statements,
//! loops among them. Every module names only modules below it, so the upper side of each
//! recursion is reached through a trait declared here — [`Calls`] (made in `calls.rs`, used
//! by `expr.rs`) and [`Statements`] (made in `stmt.rs`, used by `loops.rs`, `idioms.rs` and
//! `kernels.rs`) — which `program.rs` hands to [`Gen::new`].

use super::choices::Choices;
use super::config::GenConfig;
use super::env::{Env, VarId};
use super::features::{Feature, FeatureSet};
use super::function::{FnCtx, Work};
use super::input::InputWriter;
use super::prelude::Helper;
use super::value::{ECtx, GExpr, Ty};
use std::collections::BTreeSet;
use sysyc::frontend::ast::BlockItem;

/// What the program gathers across all its functions.
#[derive(Default)]
pub(super) struct Unit {
    pub features: FeatureSet,
    /// The helpers it calls (emitted with their dependencies, see `prelude.rs`).
    pub helpers: BTreeSet<Helper>,
    /// The stdin bytes, written as the input calls are emitted.
    pub input: InputWriter,
    /// Estimated dynamic number of output calls so far (see `GenConfig::output_budget`).
    pub outputs: u64,
}

/// Calls of user functions as expressions, for `expr.rs` (see the module doc).
pub(super) trait Calls {
    /// User functions returning `ret` (`None`: any, for call statements) callable here.
    fn callable(&self, g: &Gen, ret: Option<Ty>, ctx: ECtx) -> Vec<usize>;
    /// A call of user function `f` with fresh arguments.
    fn call(&self, g: &mut Gen, f: usize, ctx: ECtx) -> GExpr;
    /// Whether the recursive function being generated may call itself here for a `ty`.
    fn self_call_possible(&self, g: &Gen, ty: Ty, ctx: ECtx) -> bool;
    /// A self-call of the recursive function being generated.
    fn self_call(&self, g: &mut Gen, ctx: ECtx) -> GExpr;
}

/// Statements, for the compound statements of `loops.rs`, `idioms.rs` and `kernels.rs`
/// (see the module doc).
pub(super) trait Statements {
    /// Up to `max` statements (at least one if the budget allows) in the current scope.
    fn stmts(&self, g: &mut Gen, max: u32) -> Vec<BlockItem>;
    /// A nested body in the current scope, which the caller opened for it.
    fn body_in_scope(&self, g: &mut Gen) -> Vec<BlockItem>;
    /// A nested body in a scope of its own.
    fn body(&self, g: &mut Gen) -> Vec<BlockItem>;
    /// An assignment (or a declaration): what a compound statement becomes when it does not
    /// fit here.
    fn assignment(&self, g: &mut Gen) -> Vec<BlockItem>;
}

pub(super) struct Gen<'a> {
    pub cfg: &'a GenConfig,
    pub c: &'a mut dyn Choices,
    pub env: Env,
    pub fcx: FnCtx,
    pub work: Work,
    pub unit: Unit,
    pub calls: &'static dyn Calls,
    pub statements: &'static dyn Statements,
}

impl<'a> Gen<'a> {
    pub(super) fn new(cfg: &'a GenConfig, c: &'a mut dyn Choices, calls: &'static dyn Calls, statements: &'static dyn Statements) -> Gen<'a> {
        Gen { cfg, c, env: Env::new(), fcx: FnCtx::default(), work: Work::default(), unit: Unit::default(), calls, statements }
    }

    pub(super) fn feature(&mut self, f: Feature) {
        self.unit.features.insert(f);
    }

    /// `true` with the knob's probability.
    pub(super) fn knob(&mut self, percent: u8) -> bool {
        self.c.percent(percent)
    }

    pub(super) fn pick_index(&mut self, len: usize) -> usize {
        self.c.below(len as u64) as usize
    }

    pub(super) fn use_helper(&mut self, h: Helper) {
        self.unit.helpers.insert(h);
        self.unit.helpers.extend(h.deps());
    }

    /// Records an assignment of global `id` (no-op for other variables).
    pub(super) fn note_global_write(&mut self, id: VarId) {
        self.fcx.note_write(id, &self.env.vars[id]);
    }
}
