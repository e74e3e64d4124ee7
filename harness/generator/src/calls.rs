//! Calls of user functions: which are callable where (purity, budget, satisfiable array
//! parameters), their arguments (arrays and rows with a guaranteed length, length and depth
//! arguments in range), and self-calls of recursive functions (`d - 1`, `d - 2`).
//!
//! Arguments are siblings under the evaluation-order rule of `expr.rs`; array arguments
//! read nothing (an address) and their row indices are generated stable. The arguments are
//! expressions of `expr.rs`, which reaches the calls back through [`UserCalls`] (the
//! `Calls` seam of `state.rs`).

use super::build;
use super::env::{ParamKind, Storage, VarId};
use super::expr::{bounded_int, fit, index, int_expr, siblings, value_for};
use super::features::Feature;
use super::operand::{int_literal, read_scalar};
use super::state::{Calls, Gen};
use super::value::{ECtx, FLOAT_TO_INT_LIMIT, FLOAT_VAR_BOUND, GExpr, Ty, range_binary, range_fits};
use sysyc::frontend::ast::{BinaryOp, Expr};

/// How expressions make the calls in them (the `Calls` seam of `state.rs`).
pub(super) struct UserCalls;

impl Calls for UserCalls {
    fn callable(&self, g: &Gen, ret: Option<Ty>, ctx: ECtx) -> Vec<usize> {
        callable(g, ret, ctx)
    }

    fn call(&self, g: &mut Gen, f: usize, ctx: ECtx) -> GExpr {
        call_user(g, f, ctx)
    }

    fn self_call_possible(&self, g: &Gen, ty: Ty, ctx: ECtx) -> bool {
        self_call_possible(g, Some(ty), ctx)
    }

    fn self_call(&self, g: &mut Gen, ctx: ECtx) -> GExpr {
        self_call(g, ctx)
    }
}

/// User functions returning `ret` (`None`: any, for call statements) callable here.
pub(super) fn callable(g: &Gen, ret: Option<Ty>, ctx: ECtx) -> Vec<usize> {
    // A straight-line loop body calls nothing (an inlined callee would bring branches).
    if ctx.stable || g.fcx.straight {
        return Vec::new();
    }
    let mut out = Vec::new();
    for i in 0..g.env.funcs.len() {
        let f = &g.env.funcs[i];
        if ret.is_some() && f.ret != ret {
            continue;
        }
        if !f.pure && (g.fcx.pure || !ctx.impure_ok) {
            continue;
        }
        if !g.work.affordable(f.cost.saturating_add(f.params.len() as u64 + 1)) {
            continue;
        }
        let satisfiable = f.params.iter().all(|p| match &p.kind {
            ParamKind::Array { inner, min_len } => !array_views(g, p.ty, inner, *min_len, !f.pure).is_empty(),
            _ => true,
        });
        if satisfiable {
            out.push(i);
        }
    }
    out
}

/// Arrays (and rows of arrays) that can be passed for a parameter `ty p[][inner..]`
/// whose callee relies on `min_len` rows: `(variable, number of fixed leading indices)`.
pub(super) fn array_views(g: &Gen, ty: Ty, inner: &[u32], min_len: u32, writes: bool) -> Vec<(VarId, usize)> {
    let mut out = Vec::new();
    for id in g.env.visible() {
        let v = &g.env.vars[id];
        if !v.is_array() || v.ty != ty || !v.readable() || v.is_const || (writes && v.read_only) {
            continue;
        }
        if g.fcx.pure && writes {
            continue;
        }
        for m in 0..v.dims.len() {
            if v.dims[m + 1..] == *inner && v.dims[m] >= min_len {
                out.push((id, m));
            }
        }
    }
    out
}

/// A call of user function `fi` with fresh arguments.
pub(super) fn call_user(g: &mut Gen, fi: usize, ctx: ECtx) -> GExpr {
    call_user_with(g, fi, ctx, false)
}

/// [`call_user`], with this function's own local arrays preferred as array
/// arguments when `favour_locals`.
pub(super) fn call_user_with(g: &mut Gen, fi: usize, ctx: ECtx, favour_locals: bool) -> GExpr {
    let f = g.env.funcs[fi].clone();
    g.feature(Feature::Call);
    let mut passed: Vec<VarId> = Vec::new();
    let params = f.params.clone();
    let args = siblings(g, params.len(), ctx.deeper(), &mut |g, c, i| {
        let p = &params[i];
        match &p.kind {
            ParamKind::Scalar => arg_value(g, p.ty, c),
            ParamKind::Array { inner, min_len } => {
                let (e, id) =
                    array_arg(g, p.ty, inner, *min_len, !f.pure, &f.globals_used, &passed, favour_locals);
                if !f.pure {
                    g.note_global_write(id);
                }
                passed.push(id);
                GExpr::int(e, None, false, 1)
            }
            ParamKind::Length { array } => {
                let max = match &params[*array].kind {
                    ParamKind::Array { min_len, .. } => *min_len as i64,
                    _ => 0,
                };
                bounded_int(g, max, c)
            }
            ParamKind::Depth => depth_arg(g, f.max_depth.unwrap_or(0) as i64, c),
            ParamKind::Count { max } => trip_arg(g, *max as i64, c),
        }
    });
    // The callee's writes of globals become the caller's.
    for id in &f.globals_written {
        g.note_global_write(*id);
    }
    g.work.charge(f.cost + 1);
    let impure = !f.pure || args.iter().any(|a| a.impure);
    if impure && !f.pure {
        g.feature(Feature::ImpureCallInExpr);
    }
    let cost = args.iter().map(|a| a.cost).sum::<u64>() + f.cost + 1;
    let e = build::call(&f.name, args.into_iter().map(|a| a.e).collect());
    match f.ret {
        Some(Ty::Float) => GExpr::float(e, f.ret_bound, impure, cost),
        _ => GExpr::int(e, None, impure, cost),
    }
}

/// An array argument for `ty p[][inner..]`: a whole array or a row `a[i]..`; with
/// `favour_locals`, preferably one of this function's own local arrays.
#[allow(clippy::too_many_arguments)]
pub(super) fn array_arg(
    g: &mut Gen,
    ty: Ty,
    inner: &[u32],
    min_len: u32,
    writes: bool,
    callee_globals: &[VarId],
    already: &[VarId],
    favour_locals: bool,
) -> (Expr, VarId) {
    let views = array_views(g, ty, inner, min_len, writes);
    let aliasing = g.cfg.knobs.aliasing;
    let weights: Vec<u32> = views
        .iter()
        .map(|(id, fixed)| {
            let mut base = if *fixed > 0 { 4 } else { 2 };
            if favour_locals && g.env.vars[*id].storage == Storage::Local {
                base *= 4;
            }
            if callee_globals.contains(id) || already.contains(id) {
                base + aliasing as u32 / 5
            } else {
                base
            }
        })
        .collect();
    let (id, fixed) = views[g.c.weighted(&weights)];
    if callee_globals.contains(&id) || already.contains(&id) {
        g.feature(Feature::Aliasing);
    }
    let v = &g.env.vars[id];
    let (name, dims) = (v.name.clone(), v.dims.clone());
    g.fcx.note_use(id, v);
    let stable = ECtx { impure_ok: false, stable: true, depth: 1 };
    let idx = dims[..fixed].iter().map(|&d| index(g, d, stable).e).collect();
    if fixed > 0 {
        g.feature(Feature::PartialRowArg);
    }
    (build::elem(&name, idx), id)
}

/// A scalar argument: any value, but one that varies from call to call where a counter
/// can make it (`e + i`), so that the callee's branches go both ways over its calls.
pub(super) fn arg_value(g: &mut Gen, ty: Ty, ctx: ECtx) -> GExpr {
    let x = value_for(g, ty, ctx);
    if g.env.is_varying(&x.e) && g.c.chance(0.6) {
        return x;
    }
    let counters = g.env.counters(ctx.stable);
    if counters.is_empty() {
        return x;
    }
    let id = counters[g.pick_index(counters.len())];
    let i = read_scalar(g, id);
    g.work.charge(1);
    let (a, b) = if g.c.chance(0.5) { (x, i) } else { (i, x) };
    let op = if g.c.chance(0.7) { BinaryOp::Add } else { BinaryOp::Sub };
    let sum = GExpr {
        e: build::bin(op, a.e.clone(), b.e.clone()),
        ty: if a.ty == Ty::Float || b.ty == Ty::Float { Ty::Float } else { Ty::Int },
        bound: a.float_bound() + b.float_bound(),
        range: range_binary(op, a.range, b.range),
        impure: a.impure || b.impure,
        cost: a.cost + b.cost + 1,
    };
    match (ty, sum.ty) {
        (Ty::Float, _) => fit(g, sum, FLOAT_VAR_BOUND),
        (Ty::Int, Ty::Float) => fit(g, sum, FLOAT_TO_INT_LIMIT),
        _ => sum,
    }
}

/// A trip-count argument in `0..=max`, varying where it can: inside a loop mostly a
/// function of a counter (`i`, `(i + k) % (max + 1)`), so that successive calls run the
/// callee's loops 0, 1, 2, ... times — remainders of every unrolling factor included;
/// otherwise a value near a small unrolling factor or anywhere in range.
pub(super) fn trip_arg(g: &mut Gen, max: i64, ctx: ECtx) -> GExpr {
    let in_range = |id: VarId| {
        let v = &g.env.vars[id];
        v.readable() && v.range.is_some_and(|(lo, _)| lo >= 0) && g.env.lookup(&v.name) == Some(id)
    };
    let counters: Vec<VarId> = g.fcx.loops.iter().filter_map(|l| l.counter).filter(|&id| in_range(id)).collect();
    if !counters.is_empty() && g.c.chance(0.8) {
        let id = counters[g.pick_index(counters.len())];
        let (lo, hi) = g.env.vars[id].range.unwrap_or((0, 0));
        if hi <= max && g.c.chance(0.3) {
            return read_scalar(g, id);
        }
        // The sum never wraps (counters are small), so the remainder is never negative.
        let k = g.c.range(0, max);
        let k = if range_fits(lo + k, hi + k) { k } else { 0 };
        let base = g.env.read(id);
        let e = if k == 0 { base } else { build::bin(BinaryOp::Add, base, build::int(k as i32)) };
        g.work.charge(3);
        return GExpr::int(build::bin(BinaryOp::Mod, e, build::int(max as i32 + 1)), Some((0, max)), false, 3);
    }
    if g.c.chance(0.5) {
        let near = [0i64, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17];
        let v = near[g.pick_index(near.len())].min(max);
        g.work.charge(1);
        return GExpr::int(build::int(v as i32), Some((v, v)), false, 1);
    }
    bounded_int(g, max, ctx)
}

/// A recursion-depth argument: at most `max` (anything ≤ 0 is the base case). Mostly
/// one that varies with a counter, or a literal deep enough for the body to run.
pub(super) fn depth_arg(g: &mut Gen, max: i64, ctx: ECtx) -> GExpr {
    if g.c.chance(0.6) {
        return trip_arg(g, max, ctx);
    }
    if g.c.chance(0.6) {
        let v = g.c.range((max + 1) / 2, max) as i32;
        g.work.charge(1);
        return GExpr::int(build::int(v), Some((v as i64, v as i64)), false, 1);
    }
    let x = int_expr(g, ctx.deeper());
    g.work.charge(2);
    let e = build::bin(BinaryOp::Mod, x.e, build::int(max as i32 + 1));
    GExpr::int(e, Some((-max, max)), x.impure, x.cost + 2)
}

/// Whether the recursive function being generated may call itself here, for a result of
/// type `ret` (`None`: a void function's call as a statement).
pub(super) fn self_call_possible(g: &Gen, ret: Option<Ty>, ctx: ECtx) -> bool {
    let Some(r) = &g.fcx.rec else { return false };
    // Parameters are passed on by name: a local declared since may hide one.
    let params_visible = r.params.iter().all(|p| g.env.lookup(&p.name).is_some_and(|id| g.env.vars[id].storage == Storage::Param));
    r.ret == ret
        && r.sites < r.max_sites
        && g.work.mult == 1
        && !ctx.stable
        && (r.pure || ctx.impure_ok)
        && params_visible
}

/// `f(d - 1, ...)` inside recursive `f` (cost accounted when the function is finished).
pub(super) fn self_call(g: &mut Gen, ctx: ECtx) -> GExpr {
    let Some(r) = g.fcx.rec.clone() else {
        return int_literal(g);
    };
    if let Some(rec) = &mut g.fcx.rec {
        rec.sites += 1;
        rec.tail_local = None;
    }
    g.feature(Feature::Recursion);
    let params = r.params.clone();
    let callee_globals = g.fcx.globals_used.clone();
    let mut passed: Vec<VarId> = Vec::new();
    let args = siblings(g, params.len(), ctx.deeper(), &mut |g, c, i| {
        let p = &params[i];
        if let Some((_, local)) = r.tail_local.as_ref().filter(|(pi, _)| *pi == i) {
            g.work.charge(1);
            g.feature(Feature::RecursionOtherArray);
            return GExpr::int(build::var(local), None, false, 1);
        }
        match &p.kind {
            // Now and then another array than the one received (a local one of this
            // activation, a global, a row): the callee then works on memory of its
            // caller's frame (tail recursion must not reuse that frame; alias analysis
            // must tell activations apart). Any view with at least `min_len` rows keeps
            // the guarantees of the length parameters, which are passed on unchanged.
            ParamKind::Array { inner, min_len }
                if !array_views(g, p.ty, inner, *min_len, !r.pure).is_empty()
                    && g.c.chance(f64::from(g.cfg.knobs.aliasing) / 100.0) =>
            {
                let (e, id) = array_arg(g, p.ty, inner, *min_len, !r.pure, &callee_globals, &passed, true);
                if !r.pure {
                    g.note_global_write(id);
                }
                passed.push(id);
                g.feature(Feature::RecursionOtherArray);
                GExpr::int(e, None, false, 1)
            }
            ParamKind::Depth => {
                let step = g.c.range(1, 2) as i32;
                g.work.charge(2);
                GExpr::int(build::bin(BinaryOp::Sub, build::var(&p.name), build::int(step)), None, false, 2)
            }
            ParamKind::Scalar => value_for(g, p.ty, c),
            // Arrays, lengths and trip counts are passed on unchanged, keeping their
            // guarantees.
            ParamKind::Array { .. } | ParamKind::Length { .. } | ParamKind::Count { .. } => {
                g.work.charge(1);
                GExpr::int(build::var(&p.name), None, false, 1)
            }
        }
    });
    let impure = !r.pure || args.iter().any(|a| a.impure);
    let cost = args.iter().map(|a| a.cost).sum::<u64>() + 1;
    let e = build::call(&r.name, args.into_iter().map(|a| a.e).collect());
    match r.ret {
        Some(Ty::Float) => GExpr::float(e, FLOAT_VAR_BOUND, impure, cost),
        _ => GExpr::int(e, None, impure, cost),
    }
}
