//! The leaves of expressions, which recurse into nothing: literals, reads of scalar
//! variables (favouring a small pool of them per function), and remembered expressions
//! offered again (the reuse pools live with the scopes, in `env.rs`; here is when they are
//! filled and drawn from). Also the context a statement gives its expressions.

use super::build;
use super::env::VarId;
use super::features::Feature;
use super::state::Gen;
use super::value::{ECtx, FLOAT_VAR_BOUND, GExpr, Ty};
use sysyc::frontend::ast::{BinaryOp, Expr, ExprKind, IntBase};

/// Variables in a function's read pool (see [`pick_var`]).
const VAR_POOL: usize = 3;

/// The context of a full expression in a statement of the current function.
pub(super) fn stmt_ctx(g: &mut Gen) -> ECtx {
    let impure_ok = !g.fcx.pure && g.knob(g.cfg.knobs.impure_functions.max(20));
    ECtx { impure_ok, stable: false, depth: g.cfg.max_expr_depth }
}

pub(super) fn int_literal(g: &mut Gen) -> GExpr {
    let v: i32 = match g.c.weighted(&[40, 30, 10, 12, 8]) {
        0 => g.c.range(0, 10) as i32,
        1 => g.c.range(-20, 100) as i32,
        2 => *[127, 128, 255, 256, 1023, 65535, 65536, i32::MAX, i32::MIN, -1, -128].get(g.pick_index(11)).unwrap_or(&0),
        3 => g.c.range(-100_000, 100_000) as i32,
        _ => g.c.range(i32::MIN as i64, i32::MAX as i64) as i32,
    };
    g.work.charge(1);
    let e = int_lit_expr(g, v);
    GExpr::int(e, Some((v as i64, v as i64)), false, 1)
}

/// A literal spelled in a random base when the knob allows.
pub(super) fn int_lit_expr(g: &mut Gen, v: i32) -> Expr {
    if v > 7 && g.knob(g.cfg.knobs.literal_bases) {
        g.feature(Feature::LiteralBase);
        let base = if g.c.chance(0.5) { IntBase::Oct } else { IntBase::Hex };
        return build::int_in_base(v, base);
    }
    build::int(v)
}

pub(super) fn float_literal(g: &mut Gen) -> GExpr {
    let v: f32 = match g.c.below(6) {
        0 => g.c.range(-8, 8) as f32 * 0.5,
        1 => g.c.range(-400, 400) as f32 / 16.0,
        2 => {
            let table = [0.1f32, 0.2, 0.3, 0.7, 1.1, 3.25, 2.875, 0.001, 123.456, 0.333333, 1e-5];
            table[g.pick_index(table.len())]
        }
        3 => g.c.range(-1000, 1000) as f32 * 0.75 / 7.0,
        4 => {
            let table = [0.0f32, 1.0, 2.0, 0.5, 0.25, 100.0, 1000.0, 65536.0];
            table[g.pick_index(table.len())]
        }
        _ => g.c.range(-99_999, 99_999) as f32 / 100.0,
    };
    g.work.charge(1);
    GExpr::float(build::float(v), v.abs() as f64, false, 1)
}

/// Picks one variable, favouring locked ones (loop counters, invariants) inside loops.
/// With the `var_pool` knob, reads favour a pool of at most [`VAR_POOL`] variables per
/// function (the first ones picked), so the same operands meet again and again.
pub(super) fn pick_var(g: &mut Gen, ids: &[VarId]) -> VarId {
    let in_loop = !g.fcx.loops.is_empty();
    let pooled = g.cfg.knobs.var_pool > 0;
    let weights: Vec<u32> = ids
        .iter()
        .map(|&id| {
            let affine = if g.fcx.affinity.contains(&id) { 4 } else { 1 };
            let pool = if pooled && g.fcx.var_pool.contains(&id) { 1 + g.cfg.knobs.var_pool as u32 / 8 } else { 1 };
            affine * pool * if in_loop && g.env.vars[id].locks > 0 { 4 } else { 1 }
        })
        .collect();
    let id = ids[g.c.weighted(&weights)];
    if pooled && g.fcx.var_pool.len() < VAR_POOL && !g.fcx.var_pool.contains(&id) {
        g.feature(Feature::VarPool);
        g.fcx.var_pool.push(id);
    }
    id
}

pub(super) fn read_scalar(g: &mut Gen, id: VarId) -> GExpr {
    g.work.charge(1);
    let v = &g.env.vars[id];
    let e = g.env.read(id);
    match v.ty {
        Ty::Int => GExpr::int(e, v.range, false, 1),
        Ty::Float => GExpr::float(e, FLOAT_VAR_BOUND, false, 1),
    }
}

/// Offers a freshly built expression to the re-use pool and returns it.
pub(super) fn remembered(g: &mut Gen, e: GExpr, ctx: ECtx) -> GExpr {
    if !e.impure && g.cfg.knobs.reuse > 0 && g.c.chance(0.3) {
        let stable = ctx.stable || g.env.is_call_stable(&e.e);
        g.env.remember(&e, stable, false, g.cfg.max_expr_depth);
    }
    e
}

/// A remembered expression (a condition if `cond`) usable here, if any matches; charged.
pub(super) fn recall(g: &mut Gen, ty: Ty, ctx: ECtx, cond: bool) -> Option<GExpr> {
    let (straight, work) = (g.fcx.straight, &g.work);
    let candidates = g.env.reusable(ty, ctx.stable, cond, |e| !(straight && build::has_call(&e.e)) && work.affordable(e.cost));
    if candidates.is_empty() {
        return None;
    }
    let mut e = candidates[g.c.below(candidates.len() as u64) as usize].clone();
    g.work.charge(e.cost);
    if g.knob(g.cfg.knobs.near_redundant)
        && let Some(rearranged) = rearranged(&e.e, e.ty)
    {
        g.feature(Feature::NearRedundant);
        e.e = rearranged;
    }
    Some(e)
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
    let swapped = |op| build::bin(op, b.clone(), a.clone());
    Some(match op {
        B::Add | B::Mul | B::Eq | B::Ne => swapped(*op),
        B::Lt => swapped(B::Gt),
        B::Gt => swapped(B::Lt),
        B::Le => swapped(B::Ge),
        B::Ge => swapped(B::Le),
        B::Sub if ty == Ty::Int => build::neg(swapped(BinaryOp::Sub)),
        _ => return None,
    })
}
