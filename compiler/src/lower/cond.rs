//! Conditions as control flow, and truth values.
//!
//! [`FnBuilder::cond`] lowers an `Int` expression tested against zero into branches to a true
//! and a false [`Target`]:
//! * a comparison branches on its `icmp`/`fcmp` directly;
//! * `!x` swaps the targets; `a && b` tests `a`, and only on its true edge `b`; `a || b`
//!   dually — short-circuiting is the control flow itself;
//! * a constant jumps straight to the target it selects (the other is never created);
//! * anything else is compared with 0.
//!
//! [`FnBuilder::bool_value`] materialises the same operators as `i32` 0/1: a comparison is
//! `zext`ed (`!` of an integer comparison inverts its condition code first), `&&`/`||` become
//! branches on the left operand that join at a block with a phi of the short-circuit constant
//! (from every edge that skipped the right operand) and the right operand's truth value.

use super::builder::{FnBuilder, Target};
use crate::frontend::hir::{self, BinaryOp, ConstVal, ExprKind, LogicalOp, Scalar, UnaryOp};
use crate::ir::{FloatCC, InstData, IntCC, Opcode, Type, Value};

impl FnBuilder<'_> {
    /// Branches to `t` when `e` (an `Int`) is non-zero, to `f` otherwise.
    pub(super) fn cond(&mut self, e: &hir::Expr, t: &mut Target, f: &mut Target) {
        match &e.kind {
            ExprKind::Const(ConstVal::Int(c)) => self.jump_to(if *c != 0 { t } else { f }),
            ExprKind::Unary(UnaryOp::Not, x) => self.cond(x, f, t),
            ExprKind::Logical(op, a, b) => {
                let mut rhs = Target::new();
                match op {
                    LogicalOp::And => self.cond(a, &mut rhs, f),
                    LogicalOp::Or => self.cond(a, t, &mut rhs),
                }
                if let Some(block) = rhs.block {
                    self.switch_to(block);
                    self.cond(b, t, f);
                }
            }
            ExprKind::Binary(op, lhs, rhs) if op.is_comparison() => {
                let c = self.compare(*op, lhs, rhs, false);
                self.branch(c, t, f);
            }
            _ => {
                let v = self.value(e);
                let zero = self.func.iconst(0);
                let c = self.ins(InstData::icmp(IntCC::Ne, v, zero));
                self.branch(c, t, f);
            }
        }
    }

    /// The truth value (`i32` 0 or 1) of an `Int` expression.
    pub(super) fn bool_value(&mut self, e: &hir::Expr) -> Value {
        match &e.kind {
            ExprKind::Const(ConstVal::Int(c)) => self.func.iconst((*c != 0) as i32),
            ExprKind::Binary(op, lhs, rhs) if op.is_comparison() => {
                let c = self.compare(*op, lhs, rhs, false);
                self.ins(InstData::unary(Opcode::Zext, c, Type::I32))
            }
            ExprKind::Unary(UnaryOp::Not, x) => match &x.kind {
                ExprKind::Binary(op, lhs, rhs) if op.is_comparison() && lhs.ty == Some(Scalar::Int) => {
                    let c = self.compare(*op, lhs, rhs, true);
                    self.ins(InstData::unary(Opcode::Zext, c, Type::I32))
                }
                _ => {
                    let v = self.value(x);
                    let zero = self.func.iconst(0);
                    let c = self.ins(InstData::icmp(IntCC::Eq, v, zero));
                    self.ins(InstData::unary(Opcode::Zext, c, Type::I32))
                }
            },
            ExprKind::Logical(op, a, b) => self.logical_value(*op, a, b),
            _ => {
                let v = self.value(e);
                let zero = self.func.iconst(0);
                let c = self.ins(InstData::icmp(IntCC::Ne, v, zero));
                self.ins(InstData::unary(Opcode::Zext, c, Type::I32))
            }
        }
    }

    /// `a && b` or `a || b` as a value.
    fn logical_value(&mut self, op: LogicalOp, a: &hir::Expr, b: &hir::Expr) -> Value {
        let mut join = Target::new();
        let mut rhs = Target::new();
        let short_circuit = match op {
            LogicalOp::And => {
                self.cond(a, &mut rhs, &mut join);
                0
            }
            LogicalOp::Or => {
                self.cond(a, &mut join, &mut rhs);
                1
            }
        };
        let skipped = self.func.iconst(short_circuit);
        let mut incoming: Vec<(crate::ir::Block, Value)> = join.sources.iter().map(|&s| (s, skipped)).collect();
        if let Some(block) = rhs.block {
            self.switch_to(block);
            let v = self.bool_value(b);
            let from = self.block();
            self.jump_to(&mut join);
            incoming.push((from, v));
        }
        self.continue_at(&join);
        self.ins(InstData::phi(Type::I32, &incoming))
    }

    /// Evaluates both operands (left first) and compares them; `negate` inverts the result
    /// (integer operands only: for floats `!(a < b)` is not `a >= b`).
    fn compare(&mut self, op: BinaryOp, lhs: &hir::Expr, rhs: &hir::Expr, negate: bool) -> Value {
        let l = self.value(lhs);
        let r = self.value(rhs);
        if lhs.ty == Some(Scalar::Float) {
            debug_assert!(!negate);
            self.ins(InstData::fcmp(float_cc(op), l, r))
        } else {
            let cc = int_cc(op);
            self.ins(InstData::icmp(if negate { cc.inverse() } else { cc }, l, r))
        }
    }
}

fn int_cc(op: BinaryOp) -> IntCC {
    match op {
        BinaryOp::Lt => IntCC::Lt,
        BinaryOp::Gt => IntCC::Gt,
        BinaryOp::Le => IntCC::Le,
        BinaryOp::Ge => IntCC::Ge,
        BinaryOp::Eq => IntCC::Eq,
        BinaryOp::Ne => IntCC::Ne,
        other => unreachable!("{other:?} is not a comparison"),
    }
}

/// C's float comparisons: ordered, except `!=` which is true for NaN operands (`FloatCC::Ne`).
fn float_cc(op: BinaryOp) -> FloatCC {
    match op {
        BinaryOp::Lt => FloatCC::Lt,
        BinaryOp::Gt => FloatCC::Gt,
        BinaryOp::Le => FloatCC::Le,
        BinaryOp::Ge => FloatCC::Ge,
        BinaryOp::Eq => FloatCC::Eq,
        BinaryOp::Ne => FloatCC::Ne,
        other => unreachable!("{other:?} is not a comparison"),
    }
}
