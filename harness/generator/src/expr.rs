//! Expression generation: typed, UB-free by construction, independent of evaluation order.
//!
//! # Why no expression can trap
//! * `int` `+ - *` wrap (project semantics; gcc gets `-fwrapv`), so they are free.
//! * `/` and `%` only ever divide by a divisor proven ≠ 0 and ≠ −1: a constant, an
//!   expression whose static range excludes both, the inline guard `(e % K + K)` (in
//!   `1..2K`), or the `safe_div`/`safe_mod` wrappers.
//! * Every array index is proven in `0..dim` per dimension: a constant, a variable or affine
//!   function of a loop counter whose static range fits, or `(e % dim + dim) % dim`.
//! * Floats never become infinite or NaN: every float expression carries a magnitude bound
//!   (interval arithmetic on `|x|`); when a result could exceed `FLOAT_EXPR_LIMIT` an operand
//!   is clamped with `fclamp`, float division is by a constant, by `b * b + 1.0`, by an int of
//!   magnitude ≥ 1, or through `safe_fdiv`; values stored anywhere are clamped to
//!   `FLOAT_VAR_BOUND`; float→int conversions happen only below `FLOAT_TO_INT_LIMIT` (or via
//!   the saturating `f2i`).
//! * Only initialised variables are read (late-initialised ones become readable once every
//!   path assigned them).
//!
//! # Why evaluation order never matters
//! Calls with side effects ("impure": writes to globals or arrays, output) are the only side
//! effects inside expressions. The tree is split into *regions* at `&&`/`||` operands (which
//! C sequences); within a region at most one subtree of any node may contain impure calls,
//! and when one does, its siblings are generated *stable*: they read only what no call can
//! change (local and parameter scalars, constants, read-only globals) and call nothing. So
//! whatever order a compiler evaluates operands or arguments in, the values are the same.
//! Input calls never appear inside expressions (see `stmt.rs`).
//!
//! The leaves are in `operand.rs`, conditions in `cond.rs`. Calls and their arguments are
//! in `calls.rs`, which builds them with this module: expressions reach calls through the
//! `Calls` seam of `state.rs` (`g.calls`).

use super::build;
use super::env::VarId;
use super::features::Feature;
use super::operand::{float_literal, int_lit_expr, int_literal, pick_var, read_scalar, recall, remembered};
use super::prelude::Helper;
use super::state::Gen;
use super::value::{ECtx, FLOAT_EXPR_LIMIT, FLOAT_TO_INT_LIMIT, FLOAT_VAR_BOUND, GExpr, INT_AS_FLOAT_BOUND, Ty, range_binary, range_divmod};
use sysyc::frontend::ast::{BinaryOp, Expr, UnaryOp};

const INT_DIVISORS: [i32; 14] = [2, 3, 4, 5, 7, 8, 10, 16, 13, -3, -4, 100, 1000, 1];

/// Constant divisors of every kind the back end's constant-division sequences distinguish:
/// powers of two (shift with a rounding bias), others (magic multiplier, with and without
/// the add-back correction), negative ones, and extremes.
const CORNER_DIVISORS: [i32; 40] = [
    2, 4, 8, 16, 32, 64, 256, 1024, 65536, 1 << 30,
    3, 5, 6, 7, 9, 10, 11, 12, 25, 100, 125, 641, 1000, 6_700_417, i32::MAX,
    -2, -4, -8, -16, -1024, -(1 << 30),
    -3, -5, -6, -7, -10, -100, -641, -i32::MAX, i32::MIN,
];
const FLOAT_DIVISORS: [f32; 10] = [2.0, 4.0, 0.5, 3.0, 10.0, 1.5, 0.25, -2.0, 8.0, 100.0];

/// Generates two operands as siblings: one of them (chosen at random) may be impure,
/// the other is then stable.
pub(super) fn pair(
    g: &mut Gen,
    ctx: ECtx,
    first: &mut dyn FnMut(&mut Gen, ECtx) -> GExpr,
    second: &mut dyn FnMut(&mut Gen, ECtx) -> GExpr,
) -> (GExpr, GExpr) {
    if g.c.chance(0.5) {
        let a = first(g, ctx);
        let b = second(g, ctx.sibling_of(a.impure));
        (a, b)
    } else {
        let b = second(g, ctx);
        let a = first(g, ctx.sibling_of(b.impure));
        (a, b)
    }
}

/// Generates `n` sibling subexpressions (call arguments, indices) under the same rule.
pub(super) fn siblings(
    g: &mut Gen,
    n: usize,
    ctx: ECtx,
    gen_one: &mut dyn FnMut(&mut Gen, ECtx, usize) -> GExpr,
) -> Vec<GExpr> {
    if n == 0 {
        return Vec::new();
    }
    let first = g.pick_index(n);
    let lead = gen_one(g, ctx, first);
    let rest_ctx = ctx.sibling_of(lead.impure);
    let mut out: Vec<Option<GExpr>> = (0..n).map(|_| None).collect();
    out[first] = Some(lead);
    for (i, slot) in out.iter_mut().enumerate() {
        if slot.is_none() {
            *slot = Some(gen_one(g, rest_ctx, i));
        }
    }
    out.into_iter().flatten().collect()
}

/// `a[i][j]...` with in-bounds indices.
pub(super) fn elem_read(g: &mut Gen, id: VarId, ctx: ECtx) -> GExpr {
    let v = &g.env.vars[id];
    let (dims, ty, name) = (v.dims.clone(), v.ty, v.name.clone());
    g.fcx.note_use(id, v);
    let idx = siblings(g, dims.len(), ctx.deeper(), &mut |g, c, i| index(g, dims[i], c));
    let impure = idx.iter().any(|x| x.impure);
    let cost = idx.iter().map(|x| x.cost).sum::<u64>() + 1;
    g.work.charge(1);
    let e = build::elem(&name, idx.into_iter().map(|x| x.e).collect());
    match ty {
        Ty::Int => GExpr::int(e, None, impure, cost),
        Ty::Float => GExpr::float(e, FLOAT_VAR_BOUND, impure, cost),
    }
}

/// A literal or a scalar variable (no array element).
fn int_scalar_leaf(g: &mut Gen, ctx: ECtx) -> GExpr {
    let scalars = g.env.readable_scalars(Ty::Int, ctx.stable);
    if scalars.is_empty() || g.c.chance(0.3) {
        return int_literal(g);
    }
    let id = pick_var(g, &scalars);
    read_scalar(g, id)
}

pub(super) fn int_leaf(g: &mut Gen, ctx: ECtx) -> GExpr {
    leaf(g, Ty::Int, ctx, int_literal)
}

fn float_leaf(g: &mut Gen, ctx: ECtx) -> GExpr {
    leaf(g, Ty::Float, ctx, float_literal)
}

/// A literal, a readable scalar or an element of a readable array of type `ty`.
fn leaf(g: &mut Gen, ty: Ty, ctx: ECtx, literal: fn(&mut Gen) -> GExpr) -> GExpr {
    let scalars = g.env.readable_scalars(ty, ctx.stable);
    let arrays = if g.cfg.knobs.arrays > 0 { g.env.readable_arrays(ty, ctx.stable) } else { Vec::new() };
    match g.c.weighted(&[3, if scalars.is_empty() { 0 } else { 7 }, if arrays.is_empty() { 0 } else { 3 }]) {
        1 => {
            let id = pick_var(g, &scalars);
            read_scalar(g, id)
        }
        2 => {
            let id = pick_var(g, &arrays);
            elem_read(g, id, ctx)
        }
        _ => literal(g),
    }
}

// ---------------------------------------------------------------- int expressions

pub(super) fn int_expr(g: &mut Gen, ctx: ECtx) -> GExpr {
    if ctx.depth == 0 || g.c.chance(0.25) {
        return int_leaf(g, ctx);
    }
    let k = &g.cfg.knobs;
    let calls = g.calls.callable(g, Some(Ty::Int), ctx);
    let self_call = g.calls.self_call_possible(g, Ty::Int, ctx);
    let weights = [
        8,
        30,
        3,
        if k.div_mod > 0 { 4 + k.div_mod as u32 / 8 } else { 0 },
        if calls.is_empty() { 0 } else { 10 },
        if k.reuse > 0 { 2 + k.reuse as u32 / 10 } else { 0 },
        // (`f2i` branches: not in a straight-line body.)
        if k.float > 0 && k.float_to_int > 0 && !g.fcx.straight { 3 } else { 0 },
        if self_call { 12 } else { 0 },
        if k.identities > 0 { 1 + k.identities as u32 / 10 } else { 0 },
    ];
    let e = match g.c.weighted(&weights) {
        1 => {
            let op = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul][g.c.weighted(&[5, 4, 3])];
            let sub = ctx.deeper();
            let (a, b) = pair(g, sub, &mut int_expr, &mut int_expr);
            g.work.charge(1);
            let range = range_binary(op, a.range, b.range);
            GExpr::int(build::bin(op, a.e, b.e), range, a.impure || b.impure, a.cost + b.cost + 1)
        }
        2 => {
            let a = int_expr(g, ctx.deeper());
            g.work.charge(1);
            let (op, range) = if g.c.chance(0.8) {
                (UnaryOp::Neg, a.range.filter(|r| r.0 > i32::MIN as i64).map(|(lo, hi)| (-hi, -lo)))
            } else {
                (UnaryOp::Plus, a.range)
            };
            GExpr::int(build::unary(op, a.e), range, a.impure, a.cost + 1)
        }
        3 => int_divmod(g, ctx),
        4 => {
            let f = calls[g.pick_index(calls.len())];
            g.calls.call(g, f, ctx)
        }
        5 => reused(g, Ty::Int, ctx).unwrap_or_else(|| int_leaf(g, ctx)),
        6 => {
            g.feature(Feature::FloatToInt);
            g.use_helper(Helper::F2I);
            let a = float_expr(g, ctx.deeper());
            // Sometimes scaled beyond the saturation bounds, so both of `f2i`'s guards run.
            let a = if a.float_bound() <= 1.0e21 && g.c.chance(0.3) {
                g.work.charge(2);
                let bound = a.float_bound() * 1.0e8;
                GExpr::float(build::bin(BinaryOp::Mul, a.e, build::float(1.0e8)), bound, a.impure, a.cost + 2)
            } else {
                a
            };
            g.work.charge(Helper::F2I.cost());
            g.feature(Feature::Call);
            let e = build::call(Helper::F2I.name(), vec![a.e]);
            GExpr::int(e, Some((-1_000_000_000, 1_000_000_000)), a.impure, a.cost + Helper::F2I.cost())
        }
        7 => g.calls.self_call(g, ctx),
        8 => int_identity(g, ctx),
        _ => int_leaf(g, ctx),
    };
    remembered(g, e, ctx)
}

/// A remembered expression of type `ty` (feature `reused-expr`), if one is usable here.
fn reused(g: &mut Gen, ty: Ty, ctx: ECtx) -> Option<GExpr> {
    let e = recall(g, ty, ctx, false)?;
    g.feature(Feature::Reuse);
    Some(e)
}

/// An algebraic identity around a subexpression (`e + 0`, `(e + c) - c`, `e * 2 - e`,
/// `e - e`, ...): instruction-combining fodder whose value the generator still knows.
fn int_identity(g: &mut Gen, ctx: ECtx) -> GExpr {
    g.feature(Feature::Identity);
    let a = int_expr(g, ctx.deeper());
    let dup = !a.impure;
    let c = g.c.range(1, 1000) as i32;
    g.work.charge(3);
    let cost = a.cost + 3;
    let variant = g.c.below(if dup { 9 } else { 6 });
    let cost = if variant >= 6 {
        // The subexpression appears twice.
        g.work.charge(a.cost);
        cost + a.cost
    } else {
        cost
    };
    let (e, range) = match variant {
        0 => (build::bin(BinaryOp::Add, a.e, build::int(0)), a.range),
        1 => (build::bin(BinaryOp::Mul, build::int(1), a.e), a.range),
        2 => (
            build::bin(
                BinaryOp::Sub,
                build::bin(BinaryOp::Add, a.e, build::int(c)),
                build::int(c),
            ),
            a.range,
        ),
        3 => (build::bin(BinaryOp::Div, a.e, build::int(1)), a.range),
        4 => (build::neg(build::neg(a.e)), a.range),
        5 => (
            build::bin(
                BinaryOp::Add,
                build::bin(BinaryOp::Mul, a.e, build::int(0)),
                build::int(c),
            ),
            Some((c as i64, c as i64)),
        ),
        6 => (build::bin(BinaryOp::Sub, a.e.clone(), a.e), Some((0, 0))),
        7 => {
            let twice = build::bin(BinaryOp::Mul, a.e.clone(), build::int(2));
            (build::bin(BinaryOp::Sub, twice, a.e), a.range)
        }
        _ => (
            build::bin(BinaryOp::Add, a.e.clone(), a.e),
            range_binary(BinaryOp::Add, a.range, a.range),
        ),
    };
    GExpr::int(e, range, a.impure, cost)
}

/// Float identities: `e * 1.0`, `e + 0.0` (which turns `-0.0` into `0.0`), `e / 1.0`,
/// `-(-e)`, `e - e`.
fn float_identity(g: &mut Gen, ctx: ECtx) -> GExpr {
    g.feature(Feature::Identity);
    let a = float_expr(g, ctx.deeper());
    let bound = a.float_bound();
    let dup = !a.impure;
    g.work.charge(2);
    let cost = a.cost + 2;
    let variant = g.c.below(if dup { 5 } else { 4 });
    let cost = if variant == 4 {
        g.work.charge(a.cost);
        cost + a.cost
    } else {
        cost
    };
    let e = match variant {
        0 => build::bin(BinaryOp::Mul, a.e, build::float(1.0)),
        1 => build::bin(BinaryOp::Add, a.e, build::float(0.0)),
        2 => build::bin(BinaryOp::Div, a.e, build::float(1.0)),
        3 => build::neg(build::neg(a.e)),
        _ => build::bin(BinaryOp::Sub, a.e.clone(), a.e),
    };
    GExpr::float(e, bound, a.impure, cost)
}

fn int_divmod(g: &mut Gen, ctx: ECtx) -> GExpr {
    let is_mod = g.c.chance(0.4);
    let op = if is_mod { BinaryOp::Mod } else { BinaryOp::Div };
    g.feature(if is_mod { Feature::Mod } else { Feature::Div });
    let sub = ctx.deeper();
    // (The wrappers branch: not in a straight-line body.)
    let wrapper = if g.cfg.knobs.safe_wrappers > 0 && !g.fcx.straight {
        1 + g.cfg.knobs.safe_wrappers as u32 / 10
    } else {
        0
    };
    match g.c.weighted(&[4, 3, 4, wrapper]) {
        0 => {
            g.feature(Feature::ConstDivisor);
            let corners = g.knob(g.cfg.knobs.div_corners);
            let a = int_expr(g, sub);
            let (a, d) = if corners {
                g.feature(Feature::DivCorner);
                let d = CORNER_DIVISORS[g.pick_index(CORNER_DIVISORS.len())];
                (corner_dividend(g, a), d)
            } else {
                (a, INT_DIVISORS[g.pick_index(INT_DIVISORS.len())])
            };
            g.work.charge(2);
            let range = range_divmod(is_mod, a.range, (d as i64, d as i64));
            let de = int_lit_expr(g, d);
            GExpr::int(build::bin(op, a.e, de), range, a.impure, a.cost + 2)
        }
        1 => {
            // A divisor whose static range excludes 0 and -1, when one comes up.
            let (a, d) = pair(g, sub, &mut |g, c| int_expr(g, c), &mut |g, c| int_leaf(g, c));
            match d.range {
                Some((lo, hi)) if lo >= 1 || hi <= -2 => {
                    g.work.charge(1);
                    let range = range_divmod(is_mod, a.range, (lo, hi));
                    GExpr::int(
                        build::bin(op, a.e, d.e),
                        range,
                        a.impure || d.impure,
                        a.cost + d.cost + 1,
                    )
                }
                _ => guarded_divmod(g, is_mod, a, d),
            }
        }
        2 => {
            let (a, d) = pair(g, sub, &mut |g, c| int_expr(g, c), &mut |g, c| int_expr(g, c));
            guarded_divmod(g, is_mod, a, d)
        }
        _ => {
            g.feature(Feature::SafeWrapper);
            let h = if is_mod {
                Helper::SafeMod
            } else {
                Helper::SafeDiv
            };
            g.use_helper(h);
            let (a, d) = pair(g, sub, &mut |g, c| int_expr(g, c), &mut |g, c| {
                small_divisor(g, c)
            });
            g.work.charge(h.cost());
            let range = if is_mod {
                None
            } else {
                // |a / b| ≤ |a| for b ∉ {0, -1}; for 0 it is a, for -1 it is -a.
                a.range.filter(|r| r.0 > i32::MIN as i64).map(|(lo, hi)| {
                    let m = lo.abs().max(hi.abs());
                    (-m, m)
                })
            };
            GExpr::int(
                build::call(h.name(), vec![a.e, d.e]),
                range,
                a.impure || d.impure,
                a.cost + d.cost + h.cost(),
            )
        }
    }
}

/// `a` moved near the ends of the `int` range or negated, or `INT_MIN` itself: the
/// dividends on which constant-division sequences go wrong.
fn corner_dividend(g: &mut Gen, a: GExpr) -> GExpr {
    g.work.charge(2);
    let (e, range) = match g.c.below(6) {
        0 => (build::bin(BinaryOp::Add, a.e, build::int(i32::MIN)), None),
        1 => (build::bin(BinaryOp::Sub, build::int(i32::MAX), a.e), None),
        2 => (build::neg(a.e), None),
        3 => (build::bin(BinaryOp::Mul, a.e, build::int(65536)), None),
        4 => {
            let v = if g.c.chance(0.5) {
                i32::MIN
            } else {
                i32::MAX
            };
            return GExpr::int(build::int(v), Some((v as i64, v as i64)), false, 1);
        }
        _ => return a,
    };
    GExpr::int(e, range, a.impure, a.cost + 2)
}

/// A divisor for the safe-division wrappers: any value, or often one that is 0, -1 or 1
/// from time to time (`i % 3 - 1` of a counter, `e % 2`), so the wrappers' guards run.
fn small_divisor(g: &mut Gen, ctx: ECtx) -> GExpr {
    if g.c.chance(0.5) {
        return int_expr(g, ctx);
    }
    let counters: Vec<VarId> =
        g.env.counters(ctx.stable).into_iter().filter(|&id| g.env.vars[id].range.is_some_and(|(lo, _)| lo >= 0)).collect();
    g.work.charge(3);
    if !counters.is_empty() {
        let id = counters[g.pick_index(counters.len())];
        let e = build::bin(BinaryOp::Sub, build::bin(BinaryOp::Mod, g.env.read(id), build::int(3)), build::int(1));
        return GExpr::int(e, Some((-1, 1)), false, 3);
    }
    let a = int_expr(g, ctx.deeper());
    GExpr::int(build::bin(BinaryOp::Mod, a.e, build::int(2)), Some((-1, 1)), a.impure, a.cost + 2)
}

/// `a / (d % K + K)` or `a % (d % K + K)`: the divisor is in `1..2K`.
fn guarded_divmod(g: &mut Gen, is_mod: bool, a: GExpr, d: GExpr) -> GExpr {
    g.feature(Feature::InlineGuard);
    let k = g.c.range(2, 17);
    let divisor = build::bin(
        BinaryOp::Add,
        build::bin(BinaryOp::Mod, d.e, build::int(k as i32)),
        build::int(k as i32),
    );
    g.work.charge(3);
    let op = if is_mod { BinaryOp::Mod } else { BinaryOp::Div };
    let range = range_divmod(is_mod, a.range, (1, 2 * k - 1));
    GExpr::int(
        build::bin(op, a.e, divisor),
        range,
        a.impure || d.impure,
        a.cost + d.cost + 3,
    )
}

// ---------------------------------------------------------------- float expressions

pub(super) fn float_expr(g: &mut Gen, ctx: ECtx) -> GExpr {
    if ctx.depth == 0 || g.c.chance(0.25) {
        return float_leaf(g, ctx);
    }
    g.feature(Feature::FloatVar);
    let k = &g.cfg.knobs;
    let calls = g.calls.callable(g, Some(Ty::Float), ctx);
    let self_call = g.calls.self_call_possible(g, Ty::Float, ctx);
    let weights = [
        8,
        30,
        3,
        if k.div_mod > 0 { 6 } else { 2 },
        if calls.is_empty() { 0 } else { 10 },
        if k.reuse > 0 { 2 + k.reuse as u32 / 10 } else { 0 },
        2,
        if self_call { 12 } else { 0 },
        if k.identities > 0 { 1 + k.identities as u32 / 20 } else { 0 },
        k.float_corners as u32 / 10,
    ];
    let e = match g.c.weighted(&weights) {
        9 => float_corner(g, ctx),
        1 => float_binary(g, ctx),
        2 => {
            let a = float_expr(g, ctx.deeper());
            g.work.charge(1);
            GExpr::float(build::neg(a.e), a.bound, a.impure, a.cost + 1)
        }
        3 => float_div(g, ctx),
        4 => {
            let f = calls[g.pick_index(calls.len())];
            g.calls.call(g, f, ctx)
        }
        5 => reused(g, Ty::Float, ctx).unwrap_or_else(|| float_leaf(g, ctx)),
        6 => {
            let a = float_expr(g, ctx.deeper());
            clamp(g, a)
        }
        7 => g.calls.self_call(g, ctx),
        8 => float_identity(g, ctx),
        _ => float_leaf(g, ctx),
    };
    remembered(g, e, ctx)
}

/// A float that is `-0.0`, or `±0.0` by the sign of another value, or a value that
/// rounds: `-(e - e)`, `e * 0.0`, `e * -0.0`, `(e + 16777216.0) - 16777216.0`, an int
/// beyond 2^24 converted (`(a * 3 + 16777217) * 1.0`), `e + 0.5`.
fn float_corner(g: &mut Gen, ctx: ECtx) -> GExpr {
    g.feature(Feature::FloatCorner);
    let pure = ctx.no_impure().deeper();
    g.work.charge(4);
    match g.c.below(6) {
        0 => {
            let e = float_expr(g, pure);
            let diff = build::bin(BinaryOp::Sub, e.e.clone(), e.e);
            GExpr::float(build::neg(diff), 0.0, false, 2 * e.cost + 2)
        }
        1 | 2 => {
            let e = float_expr(g, ctx.deeper());
            let zero = if g.c.chance(0.5) { 0.0 } else { -0.0 };
            GExpr::float(
                build::bin(BinaryOp::Mul, e.e, build::float(zero)),
                0.0,
                e.impure,
                e.cost + 2,
            )
        }
        3 => {
            let e = float_expr(g, ctx.deeper());
            let e = fit(g, e, FLOAT_VAR_BOUND);
            let big = build::float(16_777_216.0);
            let sum = build::bin(BinaryOp::Add, e.e, big.clone());
            let bound = e.bound + 2.0 * 16_777_216.0;
            GExpr::float(
                build::bin(BinaryOp::Sub, sum, big),
                bound,
                e.impure,
                e.cost + 3,
            )
        }
        4 => {
            let a = int_expr(g, ctx.deeper());
            let n = build::bin(
                BinaryOp::Add,
                build::bin(BinaryOp::Mul, a.e, build::int(3)),
                build::int(16_777_217),
            );
            GExpr::float(
                build::bin(BinaryOp::Mul, n, build::float(1.0)),
                INT_AS_FLOAT_BOUND,
                a.impure,
                a.cost + 4,
            )
        }
        _ => {
            let e = float_expr(g, ctx.deeper());
            let e = fit(g, e, FLOAT_VAR_BOUND);
            GExpr::float(
                build::bin(BinaryOp::Add, e.e, build::float(0.5)),
                e.bound + 0.5,
                e.impure,
                e.cost + 2,
            )
        }
    }
}

/// `fclamp(x)`: bound `FLOAT_VAR_BOUND` (an int operand converts to float on the way in).
pub(super) fn clamp(g: &mut Gen, x: GExpr) -> GExpr {
    g.use_helper(Helper::FClamp);
    g.work.charge(Helper::FClamp.cost());
    g.feature(Feature::Call);
    // Sometimes scaled up, so that the clamping branches run too.
    let x = if x.float_bound() <= FLOAT_EXPR_LIMIT / 1024.0 && g.c.chance(0.25) {
        g.work.charge(2);
        let bound = x.float_bound() * 1024.0;
        GExpr::float(build::bin(BinaryOp::Mul, x.e, build::float(1024.0)), bound, x.impure, x.cost + 2)
    } else {
        x
    };
    let bound = FLOAT_VAR_BOUND.min(x.float_bound());
    GExpr::float(build::call(Helper::FClamp.name(), vec![x.e]), bound, x.impure, x.cost + Helper::FClamp.cost())
}

/// Clamps `x` when its bound exceeds `limit` (a float, or an int used as a float).
pub(super) fn fit(g: &mut Gen, x: GExpr, limit: f64) -> GExpr {
    if x.float_bound() > limit { clamp(g, x) } else { x }
}

fn float_binary(g: &mut Gen, ctx: ECtx) -> GExpr {
    let op = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul][g.c.weighted(&[5, 4, 4])];
    // 0: both float, 1: left int, 2: right int.
    let int_side = g.c.weighted(&[6, 1, 1]);
    if int_side != 0 {
        g.feature(Feature::MixedArith);
    }
    let sub = ctx.deeper();
    let mut left = move |g: &mut Gen, c: ECtx| {
        if int_side == 1 {
            int_expr(g, c)
        } else {
            float_expr(g, c)
        }
    };
    let mut right = move |g: &mut Gen, c: ECtx| {
        if int_side == 2 {
            int_expr(g, c)
        } else {
            float_expr(g, c)
        }
    };
    let (mut a, mut b) = pair(g, sub, &mut left, &mut right);
    let combine = |a: f64, b: f64| if op == BinaryOp::Mul { a * b } else { a + b };
    // Clamp the larger operand(s) until the result bound is safe.
    for _ in 0..2 {
        if combine(a.float_bound(), b.float_bound()) <= FLOAT_EXPR_LIMIT {
            break;
        }
        if a.float_bound() >= b.float_bound() {
            a = clamp(g, a);
        } else {
            b = clamp(g, b);
        }
    }
    g.work.charge(1);
    let bound = combine(a.float_bound(), b.float_bound());
    GExpr::float(
        build::bin(op, a.e, b.e),
        bound,
        a.impure || b.impure,
        a.cost + b.cost + 1,
    )
}

fn float_div(g: &mut Gen, ctx: ECtx) -> GExpr {
    g.feature(Feature::FloatDiv);
    let sub = ctx.deeper();
    let wrapper = if g.cfg.knobs.safe_wrappers > 0 {
        2
    } else {
        0
    };
    match g.c.weighted(&[4, 3, 2, wrapper]) {
        0 => {
            let a = float_expr(g, sub);
            let d = FLOAT_DIVISORS[g.pick_index(FLOAT_DIVISORS.len())];
            let a = fit(g, a, FLOAT_EXPR_LIMIT * d.abs() as f64);
            g.work.charge(2);
            let bound = a.float_bound() / d.abs() as f64;
            GExpr::float(
                build::bin(BinaryOp::Div, a.e, build::float(d)),
                bound,
                a.impure,
                a.cost + 2,
            )
        }
        1 => {
            // a / (b * b + 1.0): the divisor is at least 1.
            let (a, b) = pair(g, sub, &mut |g, c| float_expr(g, c), &mut |g, c| {
                float_expr(g, c)
            });
            let b = fit(g, b, 1.0e14);
            let b_e = b.e.clone();
            let divisor = build::bin(
                BinaryOp::Add,
                build::bin(BinaryOp::Mul, b.e, b_e),
                build::float(1.0),
            );
            g.work.charge(4);
            let cost = a.cost + 2 * b.cost + 4;
            let bound = a.float_bound();
            GExpr::float(
                build::bin(BinaryOp::Div, a.e, divisor),
                bound,
                a.impure || b.impure,
                cost,
            )
        }
        2 => {
            // An int divisor of magnitude at least 1, when one comes up; else a constant.
            let (a, d) = pair(g, sub, &mut |g, c| float_expr(g, c), &mut |g, c| int_leaf(g, c));
            match d.range {
                Some((lo, hi)) if lo >= 1 || hi <= -1 => {
                    g.feature(Feature::MixedArith);
                    g.work.charge(1);
                    let bound = a.float_bound();
                    GExpr::float(
                        build::bin(BinaryOp::Div, a.e, d.e),
                        bound,
                        a.impure || d.impure,
                        a.cost + d.cost + 1,
                    )
                }
                _ => {
                    g.work.charge(2);
                    let bound = a.float_bound() / 2.0;
                    let e = build::bin(BinaryOp::Div, a.e, build::float(2.0));
                    GExpr::float(e, bound, a.impure || d.impure, a.cost + 2)
                }
            }
        }
        _ => {
            g.feature(Feature::SafeWrapper);
            g.use_helper(Helper::SafeFDiv);
            let (a, b) = pair(g, sub, &mut |g, c| float_expr(g, c), &mut |g, c| {
                float_expr(g, c)
            });
            g.work.charge(Helper::SafeFDiv.cost());
            let cost = a.cost + b.cost + Helper::SafeFDiv.cost();
            let bound = a.float_bound();
            GExpr::float(
                build::call(Helper::SafeFDiv.name(), vec![a.e, b.e]),
                bound,
                a.impure || b.impure,
                cost,
            )
        }
    }
}

/// A value to store into a variable (or pass, or return) of type `ty`: a float is
/// clamped to `FLOAT_VAR_BOUND`; an int target may receive a float (implicit
/// conversion) whose bound is below `FLOAT_TO_INT_LIMIT`.
pub(super) fn value_for(g: &mut Gen, ty: Ty, ctx: ECtx) -> GExpr {
    let floats = g.cfg.knobs.float > 0;
    match ty {
        Ty::Float => {
            let x = if g.c.chance(0.1) { int_expr(g, ctx) } else { float_expr(g, ctx) };
            if x.ty == Ty::Int {
                g.feature(Feature::MixedArith);
            }
            fit(g, x, FLOAT_VAR_BOUND)
        }
        Ty::Int if floats && !g.fcx.straight && g.knob(g.cfg.knobs.float_to_int / 2) => {
            g.feature(Feature::FloatToInt);
            let x = float_expr(g, ctx);
            fit(g, x, FLOAT_TO_INT_LIMIT)
        }
        Ty::Int => int_expr(g, ctx),
    }
}

// ---------------------------------------------------------------- indices

/// An `int` expression provably in `0..dim`.
pub(super) fn index(g: &mut Gen, dim: u32, ctx: ECtx) -> GExpr {
    let d = dim as i64;
    if d <= 1 {
        g.work.charge(1);
        return GExpr::int(build::int(0), Some((0, 0)), false, 1);
    }
    let ranged: Vec<VarId> = g.env.readable_scalars(Ty::Int, ctx.stable).into_iter().filter(|&id| g.env.vars[id].range.is_some()).collect();
    let direct: Vec<VarId> =
        ranged.iter().copied().filter(|&id| g.env.vars[id].range.is_some_and(|(lo, hi)| lo >= 0 && hi < d)).collect();
    match g.c.weighted(&[3, if direct.is_empty() { 0 } else { 6 }, if ranged.is_empty() { 0 } else { 5 }, 3]) {
        1 => {
            let id = pick_var(g, &direct);
            g.feature(Feature::InductionIndex);
            read_scalar(g, id)
        }
        2 => {
            let id = pick_var(g, &ranged);
            affine_index(g, id, d).unwrap_or_else(|| wrapped_index(g, d, ctx))
        }
        3 => wrapped_index(g, d, ctx),
        _ => {
            let v = g.c.range(0, d - 1) as i32;
            g.work.charge(1);
            GExpr::int(build::int(v), Some((v as i64, v as i64)), false, 1)
        }
    }
}

/// `v + k`, `k - v`, `v * 2 + k` or `v / 2 + k` fitting `0..d` for a ranged variable.
fn affine_index(g: &mut Gen, id: VarId, d: i64) -> Option<GExpr> {
    let (lo, hi) = g.env.vars[id].range?;
    // Each option: (expression builder inputs) as (scale, divide, k range).
    let mut options: Vec<(i64, bool, i64, i64)> = Vec::new();
    if -lo <= d - 1 - hi {
        options.push((1, false, -lo, d - 1 - hi));
    }
    if hi <= d - 1 + lo {
        options.push((-1, false, hi, d - 1 + lo));
    }
    if -2 * lo <= d - 1 - 2 * hi {
        options.push((2, false, -2 * lo, d - 1 - 2 * hi));
    }
    if lo >= 0 && -(lo / 2) <= d - 1 - hi / 2 {
        options.push((1, true, -(lo / 2), d - 1 - hi / 2));
    }
    if options.is_empty() {
        return None;
    }
    let (scale, halve, klo, khi) = options[g.pick_index(options.len())];
    let k = g.c.range(klo, khi);
    g.feature(Feature::InductionIndex);
    let base = g.env.read(id);
    let base = if halve {
        build::bin(BinaryOp::Div, base, build::int(2))
    } else {
        base
    };
    let e = match scale {
        -1 => build::bin(BinaryOp::Sub, build::int(k as i32), base),
        2 => plus_const(build::bin(BinaryOp::Mul, base, build::int(2)), k),
        _ => plus_const(base, k),
    };
    g.work.charge(3);
    let (rlo, rhi) = match (scale, halve) {
        (-1, _) => (k - hi, k - lo),
        (2, _) => (2 * lo + k, 2 * hi + k),
        (_, true) => (lo / 2 + k, hi / 2 + k),
        _ => (lo + k, hi + k),
    };
    Some(GExpr::int(e, Some((rlo, rhi)), false, 3))
}

fn plus_const(e: Expr, k: i64) -> Expr {
    match k {
        0 => e,
        k if k > 0 => build::bin(BinaryOp::Add, e, build::int(k as i32)),
        k => build::bin(BinaryOp::Sub, e, build::int((-k) as i32)),
    }
}

/// Any expression brought into `0..d`: kept if its range fits, `e % d` if it is never
/// negative, `(e % d + d) % d` otherwise.
fn wrapped_index(g: &mut Gen, d: i64, ctx: ECtx) -> GExpr {
    // At depth 0 only a scalar or literal: an array element here would need indices of
    // its own, and the chain could go on without end.
    let x = if ctx.depth == 0 { int_scalar_leaf(g, ctx) } else { int_expr(g, ctx.deeper()) };
    match x.range {
        Some((lo, hi)) if lo >= 0 && hi < d => x,
        Some((lo, _)) if lo >= 0 => {
            g.work.charge(2);
            GExpr::int(build::bin(BinaryOp::Mod, x.e, build::int(d as i32)), Some((0, d - 1)), x.impure, x.cost + 2)
        }
        _ => {
            g.work.charge(4);
            let inner = build::bin(BinaryOp::Add, build::bin(BinaryOp::Mod, x.e, build::int(d as i32)), build::int(d as i32));
            let e = build::bin(BinaryOp::Mod, inner, build::int(d as i32));
            GExpr::int(e, Some((0, d - 1)), x.impure, x.cost + 4)
        }
    }
}

/// An `int` expression provably in `0..=max` (length and depth arguments).
pub(super) fn bounded_int(g: &mut Gen, max: i64, ctx: ECtx) -> GExpr {
    if g.c.chance(0.5) {
        let v = g.c.range(0, max) as i32;
        g.work.charge(1);
        return GExpr::int(build::int(v), Some((v as i64, v as i64)), false, 1);
    }
    index(g, (max + 1) as u32, ctx)
}
