//! Conditions of `if` and `while`: `||` of `&&` chains of comparison atoms, the only place
//! comparisons, `&&`, `||` and `!` appear (SysY's grammar allows them nowhere else, and never
//! inside parentheses). Each operand of `&&`/`||` is its own evaluation-order region, so each
//! may hold one call with side effects: that is how short-circuit side effects arise.

use super::build;
use super::env::{Ty, VarId};
use super::features::Feature;
use super::state::{ECtx, GExpr, Gen};

/// What a true or false test of a locked ranged variable tells about its value.
#[derive(Clone, Copy, Debug)]
pub(super) struct Narrowing {
    pub var: VarId,
    pub when_true: Option<(i64, i64)>,
    pub when_false: Option<(i64, i64)>,
}
use sysyc::frontend::ast::{BinaryOp, Expr, UnaryOp};

impl Gen<'_> {
    // ---------------------------------------------------------------- conditions

    /// A condition: `||` of `&&` chains of comparison atoms; every operand of `&&`/`||` is
    /// its own region (C sequences them), so each may hold one impure call. Without
    /// `allow_or` only an `&&` chain, which can be conjoined with a loop test without the
    /// parentheses SysY's grammar does not allow around a condition.
    pub(super) fn cond(&mut self, ctx: ECtx, allow_or: bool) -> Expr {
        let sc = self.cfg.knobs.short_circuit;
        let ors = if allow_or && self.knob(sc / 2) {
            self.c.range(2, 3)
        } else {
            1
        };
        let mut or_expr: Option<Expr> = None;
        for _ in 0..ors {
            let ands = if self.knob(sc) {
                if self.knob(sc / 2) { 3 } else { 2 }
            } else {
                1
            };
            let mut and_expr: Option<Expr> = None;
            for _ in 0..ands {
                let atom_ctx = if or_expr.is_some() || and_expr.is_some() {
                    ECtx {
                        impure_ok: ctx.impure_ok && self.knob(self.cfg.knobs.effects_in_conditions),
                        ..ctx
                    }
                } else {
                    ctx
                };
                let (atom, impure) = self.cond_atom(atom_ctx);
                if impure && (or_expr.is_some() || and_expr.is_some()) {
                    self.feature(Feature::EffectInCondition);
                }
                and_expr = Some(match and_expr {
                    None => atom,
                    Some(prev) => {
                        self.feature(Feature::ShortCircuit);
                        self.charge(1);
                        build::bin(BinaryOp::And, prev, atom)
                    }
                });
            }
            let Some(and_expr) = and_expr else { continue };
            or_expr = Some(match or_expr {
                None => and_expr,
                Some(prev) => {
                    self.feature(Feature::ShortCircuit);
                    self.charge(1);
                    build::bin(BinaryOp::Or, prev, and_expr)
                }
            });
        }
        or_expr.unwrap_or_else(|| build::int(1))
    }

    /// Counters and other locked variables with a range of more than one value that can be
    /// tested here (loop counters, trip-count and length parameters).
    pub(super) fn counters_here(&self, ctx: ECtx) -> Vec<VarId> {
        self.readable_scalars(Ty::Int, ctx)
            .into_iter()
            .filter(|&id| {
                let v = &self.env.vars[id];
                v.locks > 0 && v.range.is_some_and(|(lo, hi)| lo < hi)
            })
            .collect()
    }

    /// A test of a ranged variable that goes both ways over its range: `i < c`, `i >= c`,
    /// `i % m == r`, `i == c` (`c` inside the range).
    pub(super) fn counter_test(&mut self, id: VarId) -> GExpr {
        self.counter_test_narrowing(id).0
    }

    /// [`Gen::counter_test`], with the ranges the variable has where the test is true and
    /// where it is false (when they are intervals).
    pub(super) fn counter_test_narrowing(&mut self, id: VarId) -> (GExpr, Option<Narrowing>) {
        self.feature(Feature::InductionCond);
        let (lo, hi) = self.env.vars[id].range.unwrap_or((0, 1));
        let i = self.env.read(id);
        self.charge(3);
        let mut narrowing = None;
        let e = match self.c.weighted(&[5, if lo >= 0 { 3 } else { 0 }, 2]) {
            1 => {
                let m = self.c.range(2, 4);
                let r = self.c.range(0, m - 1);
                let op = if self.c.chance(0.7) {
                    BinaryOp::Eq
                } else {
                    BinaryOp::Ne
                };
                build::bin(
                    op,
                    build::bin(BinaryOp::Mod, i, build::int(m as i32)),
                    build::int(r as i32),
                )
            }
            2 => {
                let c = self.c.range(lo, hi);
                let (op, when_true, when_false) = if self.c.chance(0.7) {
                    (BinaryOp::Eq, Some((c, c)), None)
                } else {
                    (BinaryOp::Ne, None, Some((c, c)))
                };
                narrowing = Some(Narrowing {
                    var: id,
                    when_true,
                    when_false,
                });
                build::bin(op, i, self.int_lit_expr(c as i32))
            }
            _ => {
                let c = self.c.range(lo + 1, hi);
                let below = Some((lo, c - 1));
                let above = Some((c, hi));
                let lit = self.int_lit_expr(c as i32);
                let (e, when_true, when_false) = match self.c.below(4) {
                    0 => (build::bin(BinaryOp::Lt, i, lit), below, above),
                    1 => (build::bin(BinaryOp::Ge, i, lit), above, below),
                    2 => (build::bin(BinaryOp::Gt, lit, i), below, above),
                    _ => (build::bin(BinaryOp::Le, lit, i), above, below),
                };
                narrowing = Some(Narrowing {
                    var: id,
                    when_true,
                    when_false,
                });
                e
            }
        };
        (GExpr::int(e, Some((0, 1)), false, 3), narrowing)
    }

    /// Gives `n.var` the range `range` (if any) while `f` generates; restores it after.
    pub(super) fn narrowed<T>(
        &mut self,
        n: Option<(VarId, Option<(i64, i64)>)>,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let Some((id, Some(range))) = n else {
            return f(self);
        };
        let saved = self.env.vars[id].range;
        self.env.vars[id].range = Some(range);
        let out = f(self);
        self.env.vars[id].range = saved;
        out
    }

    /// Whether `e`'s value can differ between executions: it reads a variable that is not a
    /// constant (or a read-only global), or calls a function with side effects.
    pub(super) fn is_varying(&self, e: &Expr) -> bool {
        use sysyc::frontend::ast::ExprKind;
        match &e.kind {
            ExprKind::IntLit(..) | ExprKind::FloatLit(_) | ExprKind::StrLit(_) => false,
            ExprKind::LVal(lv) => {
                self.env.lookup(&lv.name.name).is_none_or(|id| {
                    let v = &self.env.vars[id];
                    !(v.is_const || v.read_only)
                }) || lv.indices.iter().any(|i| self.is_varying(i))
            }
            ExprKind::Call { name, args } => {
                self.env.func(&name.name).is_some_and(|f| !f.pure)
                    || args.iter().any(|a| self.is_varying(a))
            }
            ExprKind::Unary(_, a) => self.is_varying(a),
            ExprKind::Binary(_, a, b) => self.is_varying(a) || self.is_varying(b),
        }
    }

    /// One comparison (or truth test) with whether it contains an impure call; one whose
    /// value can vary when one can be had (a test of constants would always go the same way).
    fn cond_atom(&mut self, ctx: ECtx) -> (Expr, bool) {
        let counters = self.counters_here(ctx);
        if !counters.is_empty() && self.c.chance(0.35) {
            let id = counters[self.pick_index(counters.len())];
            return (self.counter_test(id).e, false);
        }
        for _ in 0..4 {
            let (e, impure, decided) = self.cond_atom_any(ctx);
            if impure || !decided && self.is_varying(&e) {
                return (e, impure);
            }
        }
        if !counters.is_empty() {
            let id = counters[self.pick_index(counters.len())];
            return (self.counter_test(id).e, false);
        }
        let (e, impure, _) = self.cond_atom_any(ctx);
        (e, impure)
    }

    /// One comparison (or truth test) of any kind, and whether the static ranges of its
    /// operands (or their being the same expression) already decide it.
    fn cond_atom_any(&mut self, ctx: ECtx) -> (Expr, bool, bool) {
        if self.knob(self.cfg.knobs.reuse / 2)
            && let Some(g) = self.recall(Ty::Int, ctx, true)
        {
            self.feature(Feature::Reuse);
            return (g.e, false, false);
        }
        let mut decided = false;
        let sub = ctx.deeper();
        let floats = self.cfg.knobs.float > 0;
        let chains = self.cfg.knobs.comparison_chains;
        let calls = if ctx.impure_ok {
            self.callable(Some(Ty::Int), ctx)
        } else {
            Vec::new()
        };
        let kind = self.c.weighted(&[
            12,
            if chains > 0 {
                1 + chains as u32 / 10
            } else {
                0
            },
            3,
            2,
            if calls.is_empty() { 0 } else { 5 },
        ]);
        let g = match kind {
            1 => {
                self.feature(Feature::ComparisonChain);
                let ops = self.three_operands(sub);
                let (a, b, c) = (ops[0].clone(), ops[1].clone(), ops[2].clone());
                let op1 = self.comparison_op();
                let op2 = self.comparison_op();
                // Left-deep with the outer operator binding no tighter, so no parentheses
                // (which SysY's grammar would not allow around a comparison).
                let (op1, op2) = if op2.precedence() > op1.precedence() {
                    (op2, op1)
                } else {
                    (op1, op2)
                };
                self.charge(2);
                let e = build::bin(op2, build::bin(op1, a.e, b.e), c.e);
                GExpr::int(
                    e,
                    Some((0, 1)),
                    a.impure || b.impure || c.impure,
                    a.cost + b.cost + c.cost + 2,
                )
            }
            2 => {
                let g = if floats && self.c.chance(0.1) {
                    self.float_expr(sub)
                } else {
                    // `e % m`: zero for about one value in m, where `e` alone would nearly
                    // never be.
                    let g = self.int_expr(sub);
                    if g.range.is_some_and(|(lo, hi)| hi - lo <= 4) {
                        g
                    } else {
                        let m = self.c.range(2, 3) as i32;
                        self.charge(2);
                        GExpr::int(
                            build::bin(BinaryOp::Mod, g.e, build::int(m)),
                            Some((1 - m as i64, m as i64 - 1)),
                            g.impure,
                            g.cost + 2,
                        )
                    }
                };
                decided = g.range.is_some_and(|(lo, hi)| lo > 0 || hi < 0 || lo == hi);
                if self.c.chance(0.4) {
                    self.feature(Feature::Not);
                    self.charge(1);
                    GExpr::int(
                        build::unary(UnaryOp::Not, g.e),
                        Some((0, 1)),
                        g.impure,
                        g.cost + 1,
                    )
                } else {
                    g
                }
            }
            4 => {
                // A call (often with side effects) compared with a value.
                let f = calls[self.pick_index(calls.len())];
                let (a, b) = self.pair(sub, &mut |g, c| g.call_user(f, c), &mut |g, c| {
                    g.int_expr(c)
                });
                let op = self.data_comparison_op(a.range, b.range);
                self.charge(1);
                GExpr::int(
                    build::bin(op, a.e, b.e),
                    Some((0, 1)),
                    a.impure || b.impure,
                    a.cost + b.cost + 1,
                )
            }
            3 => {
                // The same value tested again (redundant or nested conditions).
                let scalars = self.readable_scalars(Ty::Int, ctx);
                if scalars.is_empty() {
                    self.int_expr(sub)
                } else {
                    let id = self.pick_var(&scalars);
                    let a = self.read_scalar(id);
                    let b = self.int_literal();
                    let op = self.data_comparison_op(a.range, b.range);
                    decided = comparison_decided(op, a.range, b.range);
                    self.charge(1);
                    GExpr::int(build::bin(op, a.e, b.e), Some((0, 1)), false, 3)
                }
            }
            _ => {
                let op = self.comparison_op();
                let float_cmp = floats && self.c.chance(0.3);
                let (a, b) = if float_cmp {
                    self.pair(sub, &mut |g, c| g.float_expr(c), &mut |g, c| {
                        g.int_or_float(c)
                    })
                } else {
                    self.pair(sub, &mut |g, c| g.int_expr(c), &mut |g, c| g.int_expr(c))
                };
                let op = if float_cmp && self.c.chance(0.2) {
                    op
                } else {
                    self.data_comparison_op(a.range, b.range)
                };
                decided = a.e == b.e && !a.impure
                    || !float_cmp && comparison_decided(op, a.range, b.range);
                self.charge(1);
                GExpr::int(
                    build::bin(op, a.e, b.e),
                    Some((0, 1)),
                    a.impure || b.impure,
                    a.cost + b.cost + 1,
                )
            }
        };
        let impure = g.impure;
        if !impure && !decided && self.cfg.knobs.reuse > 0 {
            self.remember(&g, false, true);
        }
        (g.e, impure, decided)
    }

    fn int_or_float(&mut self, ctx: ECtx) -> GExpr {
        if self.c.chance(0.7) {
            self.float_expr(ctx)
        } else {
            self.int_expr(ctx)
        }
    }

    fn three_operands(&mut self, ctx: ECtx) -> Vec<GExpr> {
        self.siblings(3, ctx, &mut |g, c, _| g.int_expr(c))
    }

    /// A comparison operator for two values with these static ranges: (in)equality only when
    /// both ranges are known, small and overlapping (then it can go either way).
    fn data_comparison_op(&mut self, a: Option<(i64, i64)>, b: Option<(i64, i64)>) -> BinaryOp {
        let small = |r: Option<(i64, i64)>| r.is_some_and(|(lo, hi)| hi - lo <= 64);
        let overlap = match (a, b) {
            (Some((alo, ahi)), Some((blo, bhi))) => alo <= bhi && blo <= ahi,
            _ => false,
        };
        if small(a) && small(b) && overlap {
            return self.comparison_op();
        }
        let ops = [BinaryOp::Lt, BinaryOp::Gt, BinaryOp::Le, BinaryOp::Ge];
        ops[self.pick_index(ops.len())]
    }

    /// A comparison operator; orderings more often than (in)equality, which on values spread
    /// over the whole `int` range would nearly always go the same way.
    fn comparison_op(&mut self) -> BinaryOp {
        let ops = [
            BinaryOp::Lt,
            BinaryOp::Gt,
            BinaryOp::Le,
            BinaryOp::Ge,
            BinaryOp::Eq,
            BinaryOp::Ne,
        ];
        ops[self.c.weighted(&[3, 3, 3, 3, 1, 1])]
    }
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
