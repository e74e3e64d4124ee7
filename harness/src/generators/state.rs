//! The generator's mutable state and the bookkeeping shared by all parts: the current
//! function's context (purity, loops, cost), scopes with their reuse pools, fresh names.
//!
//! Work accounting: every emitted expression node and statement is charged
//! `mult` units, where `mult` is the product of the trip-count bounds of the enclosing loops
//! (and one more iteration for loop conditions). A call is charged its callee's total cost.
//! So `FnCtx::cost` at the end of a function is a (generous) estimate of the work of one call,
//! which its callers then pay; `main`'s estimate is the program's.

use super::choices::Choices;
use super::config::GenConfig;
use super::env::{Env, Param, Ty, VarId};
use super::features::{Feature, FeatureSet};
use super::input::InputWriter;
use super::prelude::Helper;
use std::collections::BTreeSet;
use sysyc::frontend::ast::{Expr, ExprKind, Item, Stmt};

/// A generated expression with what the generator proved about it.
#[derive(Clone, Debug)]
pub(super) struct GExpr {
    pub e: Expr,
    pub ty: Ty,
    /// Float: largest possible magnitude. Int: unused (see `range`).
    pub bound: f64,
    /// Int: inclusive range of the value if statically known (no wrap-around happened).
    pub range: Option<(i64, i64)>,
    /// Contains a call with side effects.
    pub impure: bool,
    /// Estimated work of one evaluation.
    pub cost: u64,
}

impl GExpr {
    pub(super) fn int(e: Expr, range: Option<(i64, i64)>, impure: bool, cost: u64) -> GExpr {
        GExpr {
            e,
            ty: Ty::Int,
            bound: f64::INFINITY,
            range,
            impure,
            cost,
        }
    }

    pub(super) fn float(e: Expr, bound: f64, impure: bool, cost: u64) -> GExpr {
        GExpr {
            e,
            ty: Ty::Float,
            bound,
            range: None,
            impure,
            cost,
        }
    }

    /// Magnitude bound when used as a float (an int converts exactly-rounded).
    pub(super) fn float_bound(&self) -> f64 {
        match self.ty {
            Ty::Float => self.bound,
            Ty::Int => match self.range {
                Some((lo, hi)) => {
                    (lo.abs().max(hi.abs()) as f64).min(super::env::INT_AS_FLOAT_BOUND)
                }
                None => super::env::INT_AS_FLOAT_BOUND,
            },
        }
    }
}

/// Where an expression may go.
#[derive(Clone, Copy, Debug)]
pub(super) struct ECtx {
    /// One call with side effects may appear in this region.
    pub impure_ok: bool,
    /// Only reads that no call can change, and no calls of user functions (which might read
    /// globals); a sibling has side effects. The helpers read no globals and stay allowed.
    pub stable: bool,
    /// Remaining expression depth.
    pub depth: u32,
}

impl ECtx {
    pub(super) fn deeper(self) -> ECtx {
        ECtx {
            depth: self.depth.saturating_sub(1),
            ..self
        }
    }

    pub(super) fn no_impure(self) -> ECtx {
        ECtx {
            impure_ok: false,
            ..self
        }
    }

    /// The context of the siblings of a subtree that turned out impure (or not).
    pub(super) fn sibling_of(self, impure: bool) -> ECtx {
        if impure {
            ECtx {
                impure_ok: false,
                stable: true,
                ..self
            }
        } else {
            ECtx {
                impure_ok: false,
                ..self
            }
        }
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
    /// The array parameter whose local the tail self-call will pass on (see `Gen::tail_local`).
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
    pub cost: u64,
    pub budget: u64,
    pub mult: u64,
    pub loops: Vec<LoopCtx>,
    pub stmts: u32,
    pub depth: u32,
    pub rec: Option<RecCtx>,
    pub globals_used: Vec<VarId>,
    /// Variables to favour when reading (globals an array parameter may alias).
    pub affinity: Vec<VarId>,
    pub next_local: u32,
    /// Globals assigned so far, directly or by a called function.
    pub globals_written: Vec<VarId>,
    /// Generating a straight-line loop body: no control flow (see `BodyKind::Straight`).
    pub straight: bool,
    /// Statements the next loop body opens with (see `idioms.rs`).
    pub pending_idiom: Option<super::idioms::LoopIdiom>,
    /// The loop depth whose counted loop must open with the triangular skip
    /// (`kernels.rs`, triangular nest).
    pub forced_triangle: Option<usize>,
    /// The variables reads favour (`Gen::pick_var`).
    pub var_pool: Vec<VarId>,
}

/// A name an entry mentions, the variable it meant, and that variable's range then.
pub(super) type PoolRef = (String, VarId, Option<(i64, i64)>);

/// A pure expression kept for re-use, valid while every name in it still resolves to the
/// variable it resolved to when the expression was made, and every such variable still has
/// the static range it had (index guards may rest on a loop counter's range, which ends with
/// its loop).
#[derive(Clone, Debug)]
pub(super) struct PoolEntry {
    pub g: GExpr,
    pub stable: bool,
    pub refs: Vec<PoolRef>,
    pub scope_depth: usize,
}

pub(super) struct Gen<'a> {
    pub cfg: &'a GenConfig,
    pub c: &'a mut dyn Choices,
    pub env: Env,
    pub features: FeatureSet,
    pub input: InputWriter,
    pub helpers: BTreeSet<Helper>,
    pub items: Vec<Item>,
    pub fcx: FnCtx,
    pub pool: Vec<PoolEntry>,
    pub cond_pool: Vec<PoolEntry>,
    pub outputs: u64,
    pub next_global: u32,
    /// `main`'s estimated work, once generated.
    pub estimated_work: u64,
    /// Iterations of `main`'s driver loop (read from the input), decided first: function
    /// budgets are a share of what one iteration may cost.
    pub driver_trips: u64,
}

impl<'a> Gen<'a> {
    pub(super) fn new(cfg: &'a GenConfig, c: &'a mut dyn Choices) -> Gen<'a> {
        Gen {
            cfg,
            c,
            env: Env::new(),
            features: FeatureSet::default(),
            input: InputWriter::default(),
            helpers: BTreeSet::new(),
            items: Vec::new(),
            fcx: FnCtx::default(),
            pool: Vec::new(),
            cond_pool: Vec::new(),
            outputs: 0,
            next_global: 0,
            estimated_work: 0,
            driver_trips: 1,
        }
    }

    pub(super) fn feature(&mut self, f: Feature) {
        self.features.insert(f);
    }

    /// `true` with the knob's probability.
    pub(super) fn knob(&mut self, percent: u8) -> bool {
        self.c.percent(percent)
    }

    pub(super) fn pick_index(&mut self, len: usize) -> usize {
        self.c.below(len as u64) as usize
    }

    pub(super) fn use_helper(&mut self, h: Helper) {
        self.helpers.insert(h);
        for &d in h.deps() {
            self.helpers.insert(d);
        }
    }

    /// Charges `units` of work at the current loop multiplier.
    pub(super) fn charge(&mut self, units: u64) {
        self.fcx.cost = self
            .fcx
            .cost
            .saturating_add(self.fcx.mult.saturating_mul(units));
    }

    /// Work still available to the current function.
    pub(super) fn remaining(&self) -> u64 {
        self.fcx.budget.saturating_sub(self.fcx.cost)
    }

    /// Whether `units` more work (at the current multiplier) fits the budget.
    pub(super) fn affordable(&self, units: u64) -> bool {
        self.fcx.mult.saturating_mul(units) <= self.remaining()
    }

    pub(super) fn push_scope(&mut self) {
        self.env.push_scope();
    }

    pub(super) fn pop_scope(&mut self) {
        self.env.pop_scope();
        let depth = self.env.depth();
        self.pool.retain(|p| p.scope_depth <= depth);
        self.cond_pool.retain(|p| p.scope_depth <= depth);
    }

    /// A fresh global name with the given prefix.
    pub(super) fn global_name(&mut self, prefix: &str) -> String {
        self.next_global += 1;
        format!("{prefix}{}", self.next_global - 1)
    }

    /// A fresh local name with the given prefix (unique within the function).
    pub(super) fn local_name(&mut self, prefix: &str) -> String {
        self.fcx.next_local += 1;
        format!("{prefix}{}", self.fcx.next_local - 1)
    }

    /// Records a call of user function `fi` (its writes of globals become the caller's).
    pub(super) fn note_call(&mut self, fi: usize) {
        for g in self.env.funcs[fi].globals_written.clone() {
            self.note_global_write(g);
        }
    }

    /// Records an assignment of global `id` (no-op for other variables).
    pub(super) fn note_global_write(&mut self, id: VarId) {
        if self.env.vars[id].storage == super::env::Storage::Global
            && !self.fcx.globals_written.contains(&id)
        {
            self.fcx.globals_written.push(id);
        }
    }

    /// Whether the statement being generated is at the top level of `main` (runs once).
    pub(super) fn at_main_top(&self) -> bool {
        self.fcx.main_top == Some(self.env.depth())
    }

    /// Remembers a pure expression for later re-use.
    pub(super) fn remember(&mut self, g: &GExpr, stable: bool, cond: bool) {
        // Re-used expressions nest inside new ones; a height cap keeps trees from growing
        // from statement to statement.
        if g.impure || height(&g.e) > 2 * self.cfg.max_expr_depth as usize + 2 {
            return;
        }
        let mut names = Vec::new();
        collect_names(&g.e, &mut names);
        let mut refs = Vec::with_capacity(names.len());
        for n in names {
            if let Some(id) = self.env.lookup(&n) {
                refs.push((n, id, self.env.vars[id].range));
            } else if self.env.func(&n).is_none() && !super::prelude::is_reserved(&n) {
                // A self-call of the recursive function being generated: duplicating it would
                // break the bound on its call sites.
                return;
            }
        }
        let entry = PoolEntry {
            g: g.clone(),
            stable,
            refs,
            scope_depth: self.env.depth(),
        };
        let pool = if cond {
            &mut self.cond_pool
        } else {
            &mut self.pool
        };
        if pool.len() >= 24 {
            pool.remove(0);
        }
        pool.push(entry);
    }

    /// A remembered expression usable here, if any matches.
    pub(super) fn recall(&mut self, ty: Ty, ctx: ECtx, cond: bool) -> Option<GExpr> {
        let pool = if cond { &self.cond_pool } else { &self.pool };
        let candidates: Vec<usize> = pool
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                p.g.ty == ty
                    && (!ctx.stable || p.stable)
                    && !(self.fcx.straight && super::stmt::has_call(&p.g.e))
                    && self.affordable(p.g.cost)
                    && p.refs.iter().all(|(n, id, range)| {
                        let v = &self.env.vars[*id];
                        self.env.lookup(n) == Some(*id) && v.readable() && v.range == *range
                    })
            })
            .map(|(i, _)| i)
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let i = candidates[self.pick_index(candidates.len())];
        let pool = if cond { &self.cond_pool } else { &self.pool };
        let mut g = pool[i].g.clone();
        self.charge(g.cost);
        if self.knob(self.cfg.knobs.near_redundant)
            && let Some(e) = rearranged(&g.e, g.ty)
        {
            self.features.insert(Feature::NearRedundant);
            g.e = e;
        }
        Some(g)
    }
}

/// The same value computed differently at the top: the operands of `+`, `*`, `==`, `!=`
/// swapped, a comparison turned into its converse (`b > a` for `a < b`), an int `a - b` as
/// `-(b - a)`. Every rewrite is exact (wrapping ints; floats without NaN, and `-(b - a)` is
/// not used on floats, where it would turn `+0.0` into `-0.0`).
fn rearranged(e: &Expr, ty: Ty) -> Option<Expr> {
    use sysyc::frontend::ast::BinaryOp as B;
    let ExprKind::Binary(op, a, b) = &e.kind else {
        return None;
    };
    // A comparison chain (`a < b == c`) would need parentheses once its operands swap.
    let is_cond = |x: &Expr| matches!(&x.kind, ExprKind::Binary(o, ..) if o.precedence() <= 4);
    if is_cond(a) || is_cond(b) {
        return None;
    }
    let (a, b) = ((**a).clone(), (**b).clone());
    let swapped = |op| super::build::bin(op, b.clone(), a.clone());
    Some(match op {
        B::Add | B::Mul | B::Eq | B::Ne => swapped(*op),
        B::Lt => swapped(B::Gt),
        B::Gt => swapped(B::Lt),
        B::Le => swapped(B::Ge),
        B::Ge => swapped(B::Le),
        B::Sub if ty == Ty::Int => super::build::neg(swapped(B::Sub)),
        _ => return None,
    })
}

/// Height of an expression tree (a leaf is 1).
fn height(e: &Expr) -> usize {
    1 + match &e.kind {
        ExprKind::IntLit(..) | ExprKind::FloatLit(_) | ExprKind::StrLit(_) => 0,
        ExprKind::LVal(lv) => lv.indices.iter().map(height).max().unwrap_or(0),
        ExprKind::Call { args, .. } => args.iter().map(height).max().unwrap_or(0),
        ExprKind::Unary(_, a) => height(a),
        ExprKind::Binary(_, a, b) => height(a).max(height(b)),
    }
}

/// Names of variables (and called functions) an expression mentions, in order.
fn collect_names(e: &Expr, out: &mut Vec<String>) {
    match &e.kind {
        ExprKind::IntLit(..) | ExprKind::FloatLit(_) | ExprKind::StrLit(_) => {}
        ExprKind::LVal(lv) => {
            out.push(lv.name.name.clone());
            lv.indices.iter().for_each(|i| collect_names(i, out));
        }
        ExprKind::Call { name, args } => {
            out.push(name.name.clone());
            args.iter().for_each(|a| collect_names(a, out));
        }
        ExprKind::Unary(_, a) => collect_names(a, out),
        ExprKind::Binary(_, a, b) => {
            collect_names(a, out);
            collect_names(b, out);
        }
    }
}
