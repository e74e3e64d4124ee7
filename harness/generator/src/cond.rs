//! Conditions of `if` and `while`: `||` of `&&` chains of comparison atoms, the only place
//! comparisons, `&&`, `||` and `!` appear (SysY's grammar allows them nowhere else, and never
//! inside parentheses). Each operand of `&&`/`||` is its own evaluation-order region, so each
//! may hold one call with side effects: that is how short-circuit side effects arise.
//!
//! Also the conditions of branches that should go both ways (tests of counters, with what
//! each side tells about the counter's range), and of late `break`s and `return`s.

use super::build;
use super::calls::{call_user, callable};
use super::env::VarId;
use super::expr::{float_expr, int_expr, pair, siblings};
use super::features::Feature;
use super::operand::{int_lit_expr, int_literal, pick_var, read_scalar, recall};
use super::state::Gen;
use super::value::{ECtx, GExpr, Ty};
use sysyc::frontend::ast::{BinaryOp, Expr, UnaryOp};

/// What a true or false test of a locked ranged variable tells about its value.
#[derive(Clone, Copy, Debug)]
pub(super) struct Narrowing {
    pub var: VarId,
    pub when_true: Option<(i64, i64)>,
    pub when_false: Option<(i64, i64)>,
}

/// A condition: `||` of `&&` chains of comparison atoms; every operand of `&&`/`||` is
/// its own region (C sequences them), so each may hold one impure call. Without
/// `allow_or` only an `&&` chain, which can be conjoined with a loop test without the
/// parentheses SysY's grammar does not allow around a condition.
pub(super) fn cond(g: &mut Gen, ctx: ECtx, allow_or: bool) -> Expr {
    let sc = g.cfg.knobs.short_circuit;
    let ors = if allow_or && g.knob(sc / 2) { g.c.range(2, 3) } else { 1 };
    let mut or_expr: Option<Expr> = None;
    for _ in 0..ors {
        let ands = if g.knob(sc) { if g.knob(sc / 2) { 3 } else { 2 } } else { 1 };
        let mut and_expr: Option<Expr> = None;
        for _ in 0..ands {
            let atom_ctx = if or_expr.is_some() || and_expr.is_some() {
                ECtx { impure_ok: ctx.impure_ok && g.knob(g.cfg.knobs.effects_in_conditions), ..ctx }
            } else {
                ctx
            };
            let (atom, impure) = cond_atom(g, atom_ctx);
            if impure && (or_expr.is_some() || and_expr.is_some()) {
                g.feature(Feature::EffectInCondition);
            }
            and_expr = Some(match and_expr {
                None => atom,
                Some(prev) => {
                    g.feature(Feature::ShortCircuit);
                    g.work.charge(1);
                    build::bin(BinaryOp::And, prev, atom)
                }
            });
        }
        let Some(and_expr) = and_expr else { continue };
        or_expr = Some(match or_expr {
            None => and_expr,
            Some(prev) => {
                g.feature(Feature::ShortCircuit);
                g.work.charge(1);
                build::bin(BinaryOp::Or, prev, and_expr)
            }
        });
    }
    or_expr.unwrap_or_else(|| build::int(1))
}

/// A test of a ranged variable that goes both ways over its range: `i < c`, `i >= c`,
/// `i % m == r`, `i == c` (`c` inside the range).
pub(super) fn counter_test(g: &mut Gen, id: VarId) -> GExpr {
    counter_test_narrowing(g, id).0
}

/// [`counter_test`], with the ranges the variable has where the test is true and
/// where it is false (when they are intervals).
pub(super) fn counter_test_narrowing(g: &mut Gen, id: VarId) -> (GExpr, Option<Narrowing>) {
    g.feature(Feature::InductionCond);
    let (lo, hi) = g.env.vars[id].range.unwrap_or((0, 1));
    let i = g.env.read(id);
    g.work.charge(3);
    let mut narrowing = None;
    let e = match g.c.weighted(&[5, if lo >= 0 { 3 } else { 0 }, 2]) {
        1 => {
            let m = g.c.range(2, 4);
            let r = g.c.range(0, m - 1);
            let op = if g.c.chance(0.7) { BinaryOp::Eq } else { BinaryOp::Ne };
            build::bin(op, build::bin(BinaryOp::Mod, i, build::int(m as i32)), build::int(r as i32))
        }
        2 => {
            let c = g.c.range(lo, hi);
            let (op, when_true, when_false) = if g.c.chance(0.7) {
                (BinaryOp::Eq, Some((c, c)), None)
            } else {
                (BinaryOp::Ne, None, Some((c, c)))
            };
            narrowing = Some(Narrowing { var: id, when_true, when_false });
            build::bin(op, i, int_lit_expr(g, c as i32))
        }
        _ => {
            let c = g.c.range(lo + 1, hi);
            let below = Some((lo, c - 1));
            let above = Some((c, hi));
            let lit = int_lit_expr(g, c as i32);
            let (e, when_true, when_false) = match g.c.below(4) {
                0 => (build::bin(BinaryOp::Lt, i, lit), below, above),
                1 => (build::bin(BinaryOp::Ge, i, lit), above, below),
                2 => (build::bin(BinaryOp::Gt, lit, i), below, above),
                _ => (build::bin(BinaryOp::Le, lit, i), above, below),
            };
            narrowing = Some(Narrowing { var: id, when_true, when_false });
            e
        }
    };
    (GExpr::int(e, Some((0, 1)), false, 3), narrowing)
}

/// Gives `n.var` the range `range` (if any) while `f` generates; restores it after.
pub(super) fn narrowed<T>(g: &mut Gen, n: Option<(VarId, Option<(i64, i64)>)>, f: impl FnOnce(&mut Gen) -> T) -> T {
    let Some((id, Some(range))) = n else {
        return f(g);
    };
    let saved = g.env.vars[id].range;
    g.env.vars[id].range = Some(range);
    let out = f(g);
    g.env.vars[id].range = saved;
    out
}

/// One comparison (or truth test) with whether it contains an impure call; one whose
/// value can vary when one can be had (a test of constants would always go the same way).
fn cond_atom(g: &mut Gen, ctx: ECtx) -> (Expr, bool) {
    let counters = g.env.counters(ctx.stable);
    if !counters.is_empty() && g.c.chance(0.35) {
        let id = counters[g.pick_index(counters.len())];
        return (counter_test(g, id).e, false);
    }
    for _ in 0..4 {
        let (e, impure, decided) = cond_atom_any(g, ctx);
        if impure || !decided && g.env.is_varying(&e) {
            return (e, impure);
        }
    }
    if !counters.is_empty() {
        let id = counters[g.pick_index(counters.len())];
        return (counter_test(g, id).e, false);
    }
    let (e, impure, _) = cond_atom_any(g, ctx);
    (e, impure)
}

/// One comparison (or truth test) of any kind, and whether the static ranges of its
/// operands (or their being the same expression) already decide it.
fn cond_atom_any(g: &mut Gen, ctx: ECtx) -> (Expr, bool, bool) {
    if g.knob(g.cfg.knobs.reuse / 2)
        && let Some(x) = recall(g, Ty::Int, ctx, true)
    {
        g.feature(Feature::Reuse);
        return (x.e, false, false);
    }
    let mut decided = false;
    let sub = ctx.deeper();
    let floats = g.cfg.knobs.float > 0;
    let chains = g.cfg.knobs.comparison_chains;
    let calls = if ctx.impure_ok { callable(g, Some(Ty::Int), ctx) } else { Vec::new() };
    let kind = g.c.weighted(&[12, if chains > 0 { 1 + chains as u32 / 10 } else { 0 }, 3, 2, if calls.is_empty() { 0 } else { 5 }]);
    let x = match kind {
        1 => {
            g.feature(Feature::ComparisonChain);
            let ops = siblings(g, 3, sub, &mut |g, c, _| int_expr(g, c));
            let (a, b, c) = (ops[0].clone(), ops[1].clone(), ops[2].clone());
            let op1 = comparison_op(g);
            let op2 = comparison_op(g);
            // Left-deep with the outer operator binding no tighter, so no parentheses
            // (which SysY's grammar would not allow around a comparison).
            let (op1, op2) = if op2.precedence() > op1.precedence() { (op2, op1) } else { (op1, op2) };
            g.work.charge(2);
            let e = build::bin(op2, build::bin(op1, a.e, b.e), c.e);
            GExpr::int(e, Some((0, 1)), a.impure || b.impure || c.impure, a.cost + b.cost + c.cost + 2)
        }
        2 => {
            let x = if floats && g.c.chance(0.1) {
                float_expr(g, sub)
            } else {
                // `e % m`: zero for about one value in m, where `e` alone would nearly
                // never be.
                let x = int_expr(g, sub);
                if x.range.is_some_and(|(lo, hi)| hi - lo <= 4) {
                    x
                } else {
                    let m = g.c.range(2, 3) as i32;
                    g.work.charge(2);
                    GExpr::int(build::bin(BinaryOp::Mod, x.e, build::int(m)), Some((1 - m as i64, m as i64 - 1)), x.impure, x.cost + 2)
                }
            };
            decided = x.range.is_some_and(|(lo, hi)| lo > 0 || hi < 0 || lo == hi);
            if g.c.chance(0.4) {
                g.feature(Feature::Not);
                g.work.charge(1);
                GExpr::int(build::unary(UnaryOp::Not, x.e), Some((0, 1)), x.impure, x.cost + 1)
            } else {
                x
            }
        }
        4 => {
            // A call (often with side effects) compared with a value.
            let f = calls[g.pick_index(calls.len())];
            let (a, b) = pair(g, sub, &mut |g, c| call_user(g, f, c), &mut int_expr);
            let op = data_comparison_op(g, a.range, b.range);
            g.work.charge(1);
            GExpr::int(build::bin(op, a.e, b.e), Some((0, 1)), a.impure || b.impure, a.cost + b.cost + 1)
        }
        3 => {
            // The same value tested again (redundant or nested conditions).
            let scalars = g.env.readable_scalars(Ty::Int, ctx.stable);
            if scalars.is_empty() {
                int_expr(g, sub)
            } else {
                let id = pick_var(g, &scalars);
                let a = read_scalar(g, id);
                let b = int_literal(g);
                let op = data_comparison_op(g, a.range, b.range);
                decided = comparison_decided(op, a.range, b.range);
                g.work.charge(1);
                GExpr::int(build::bin(op, a.e, b.e), Some((0, 1)), false, 3)
            }
        }
        _ => {
            let op = comparison_op(g);
            let float_cmp = floats && g.c.chance(0.3);
            let (a, b) = if float_cmp {
                pair(g, sub, &mut float_expr, &mut |g, c| if g.c.chance(0.7) { float_expr(g, c) } else { int_expr(g, c) })
            } else {
                pair(g, sub, &mut int_expr, &mut int_expr)
            };
            let op = if float_cmp && g.c.chance(0.2) { op } else { data_comparison_op(g, a.range, b.range) };
            decided = a.e == b.e && !a.impure || !float_cmp && comparison_decided(op, a.range, b.range);
            g.work.charge(1);
            GExpr::int(build::bin(op, a.e, b.e), Some((0, 1)), a.impure || b.impure, a.cost + b.cost + 1)
        }
    };
    if !x.impure && !decided && g.cfg.knobs.reuse > 0 {
        g.env.remember(&x, false, true, g.cfg.max_expr_depth);
    }
    (x.e, x.impure, decided)
}

/// A comparison operator for two values with these static ranges: (in)equality only when
/// both ranges are known, small and overlapping (then it can go either way).
fn data_comparison_op(g: &mut Gen, a: Option<(i64, i64)>, b: Option<(i64, i64)>) -> BinaryOp {
    let small = |r: Option<(i64, i64)>| r.is_some_and(|(lo, hi)| hi - lo <= 64);
    let overlap = match (a, b) {
        (Some((alo, ahi)), Some((blo, bhi))) => alo <= bhi && blo <= ahi,
        _ => false,
    };
    if small(a) && small(b) && overlap {
        return comparison_op(g);
    }
    let ops = [BinaryOp::Lt, BinaryOp::Gt, BinaryOp::Le, BinaryOp::Ge];
    ops[g.pick_index(ops.len())]
}

/// A comparison operator; orderings more often than (in)equality, which on values spread
/// over the whole `int` range would nearly always go the same way.
fn comparison_op(g: &mut Gen) -> BinaryOp {
    let ops = [
        BinaryOp::Lt,
        BinaryOp::Gt,
        BinaryOp::Le,
        BinaryOp::Ge,
        BinaryOp::Eq,
        BinaryOp::Ne,
    ];
    ops[g.c.weighted(&[3, 3, 3, 3, 1, 1])]
}

/// The condition of a branch that should go both ways over the executions of the
/// statement, with what it tells about a ranged variable on each side. With a counter
/// (or other ranged variable) in scope, by weights: a condition `d` on data, a test `t` of
/// the counter (which goes both ways over its range), `d || t` (true at least when `t`
/// is), `d && t` (false at least when `t` is). Without one, `d`.
pub(super) fn branch_cond(g: &mut Gen, ctx: ECtx, weights: [u32; 4]) -> (Expr, Option<Narrowing>) {
    let counters = g.env.counters(ctx.stable);
    if counters.is_empty() {
        return (cond(g, ctx, true), None);
    }
    let id = counters[g.pick_index(counters.len())];
    match g.c.weighted(&weights) {
        1 => {
            let (t, n) = counter_test_narrowing(g, id);
            (t.e, n)
        }
        2 => {
            let d = cond(g, ctx, true);
            let (t, n) = counter_test_narrowing(g, id);
            // Only the false side knows `t` (true may come from `d`).
            let n = n.map(|n| Narrowing { when_true: None, ..n });
            (build::bin(BinaryOp::Or, d, t.e), n)
        }
        3 => {
            let d = cond(g, ctx, false);
            let (t, n) = counter_test_narrowing(g, id);
            let n = n.map(|n| Narrowing { when_false: None, ..n });
            let e = if g.c.chance(0.5) { build::conjoin(t.e, d) } else { build::bin(BinaryOp::And, d, t.e) };
            (e, n)
        }
        _ => (cond(g, ctx, true), None),
    }
}

/// The condition of a `break` or an early `return`: in a loop with a counter, true only
/// late in the counter's run (`i == c`, `i >= c` near its end, perhaps with another
/// condition), so the statements after it run in most iterations; outside loops, a
/// condition that should go both ways.
pub(super) fn late_cond(g: &mut Gen, ctx: ECtx) -> Expr {
    let Some((id, down)) = innermost_counter(g) else {
        return branch_cond(g, ctx, [1, 2, 0, 3]).0;
    };
    let (lo, hi) = g.env.vars[id].range.unwrap_or((0, 0));
    let c = if down { g.c.range(lo, lo + (hi - lo) / 3) } else { g.c.range(lo + (hi - lo) * 2 / 3, hi) };
    let i = g.env.read(id);
    let c = int_lit_expr(g, c as i32);
    g.work.charge(3);
    let test = match (g.c.below(3), down) {
        (0, _) => build::bin(BinaryOp::Eq, i, c),
        (_, false) => build::bin(BinaryOp::Ge, i, c),
        (_, true) => build::bin(BinaryOp::Le, i, c),
    };
    if g.c.chance(0.4) {
        let other = cond(g, ctx, false);
        build::conjoin(test, other)
    } else {
        test
    }
}

/// The innermost loop's counter, if it has one that is visible with a range, and
/// whether it counts down.
fn innermost_counter(g: &Gen) -> Option<(VarId, bool)> {
    let l = g.fcx.loops.last()?;
    let id = l.counter?;
    let v = &g.env.vars[id];
    (g.env.lookup(&v.name) == Some(id) && v.readable() && v.range.is_some_and(|(lo, hi)| lo <= hi)).then_some((id, l.down))
}

/// Whether `a op b` has the same value for all operands in the two static ranges (unknown
/// ranges decide nothing).
fn comparison_decided(op: BinaryOp, a: Option<(i64, i64)>, b: Option<(i64, i64)>) -> bool {
    let (Some((alo, ahi)), Some((blo, bhi))) = (a, b) else {
        return false;
    };
    let test = |x: i64, y: i64| match op {
        BinaryOp::Lt => x < y,
        BinaryOp::Gt => x > y,
        BinaryOp::Le => x <= y,
        BinaryOp::Ge => x >= y,
        BinaryOp::Eq => x == y,
        _ => x != y,
    };
    match op {
        // Monotone in both operands: the extreme corners decide.
        BinaryOp::Lt | BinaryOp::Gt | BinaryOp::Le | BinaryOp::Ge => {
            test(alo, bhi) == test(ahi, blo)
        }
        _ => ahi < blo || bhi < alo || alo == ahi && blo == bhi,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decided_comparisons() {
        let r = |lo, hi| Some((lo, hi));
        // A counter below its limit.
        assert!(comparison_decided(BinaryOp::Lt, r(0, 9), r(10, 10)));
        assert!(comparison_decided(BinaryOp::Ge, r(0, 9), r(10, 10)));
        assert!(!comparison_decided(BinaryOp::Lt, r(0, 9), r(5, 5)));
        assert!(comparison_decided(BinaryOp::Le, r(0, 9), r(9, 20)));
        assert!(comparison_decided(BinaryOp::Gt, r(0, 9), r(9, 20)));
        assert!(!comparison_decided(BinaryOp::Gt, r(0, 10), r(9, 20)));
        assert!(comparison_decided(BinaryOp::Eq, r(0, 3), r(4, 4)));
        assert!(comparison_decided(BinaryOp::Ne, r(2, 2), r(2, 2)));
        assert!(!comparison_decided(BinaryOp::Eq, r(0, 3), r(3, 3)));
        assert!(!comparison_decided(BinaryOp::Lt, None, r(3, 3)));
    }
}
