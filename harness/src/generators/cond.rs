//! Conditions of `if` and `while`: `||` of `&&` chains of comparison atoms, the only place
//! comparisons, `&&`, `||` and `!` appear (SysY's grammar allows them nowhere else, and never
//! inside parentheses). Each operand of `&&`/`||` is its own evaluation-order region, so each
//! may hold one call with side effects: that is how short-circuit side effects arise.

use super::build;
use super::env::Ty;
use super::features::Feature;
use super::state::{ECtx, GExpr, Gen};
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

    /// One comparison (or truth test) with whether it contains an impure call.
    fn cond_atom(&mut self, ctx: ECtx) -> (Expr, bool) {
        if self.knob(self.cfg.knobs.reuse / 2)
            && let Some(g) = self.recall(Ty::Int, ctx, true)
        {
            self.feature(Feature::Reuse);
            return (g.e, false);
        }
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
                let g = if floats && self.c.chance(0.3) {
                    self.float_expr(sub)
                } else {
                    self.int_expr(sub)
                };
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
                let op = self.comparison_op();
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
                    let op = self.comparison_op();
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
        if !impure && self.cfg.knobs.reuse > 0 {
            self.remember(&g, false, true);
        }
        (g.e, impure)
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

    fn comparison_op(&mut self) -> BinaryOp {
        let ops = [
            BinaryOp::Lt,
            BinaryOp::Gt,
            BinaryOp::Le,
            BinaryOp::Ge,
            BinaryOp::Eq,
            BinaryOp::Ne,
        ];
        ops[self.pick_index(ops.len())]
    }
}
