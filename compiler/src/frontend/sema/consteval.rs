//! Compile-time evaluation of constant expressions (array dimensions, `const` initialisers,
//! global initialisers).
//!
//! Semantics are the run-time ones, exactly: `int` arithmetic wraps in 32 bits, `float`
//! arithmetic is binary32 (each operation rounded to f32), mixed operands convert the int
//! to float, comparisons and logic give `int` 0/1, `&&`/`||` short-circuit. What would trap
//! at run time is an error here: integer division or remainder by zero, `INT_MIN / -1`, and
//! float→int conversion of a value outside the `int` range.
//!
//! Constant operands are literals, `const` scalars, and elements of `const` arrays indexed by
//! constants (in bounds); everything else (variables, calls) is "not a constant".

use super::Analyzer;
use super::scope::Symbol;
use crate::frontend::ast::{BinaryOp, Expr, ExprKind, Span, UnaryOp};
use crate::frontend::diag::Diagnostic;
use crate::frontend::hir::{ConstVal, Scalar, VarType};

type R<T> = Result<T, Diagnostic>;

/// Converts a constant to `to` as an implicit conversion would.
pub(crate) fn convert_const(v: ConstVal, to: Scalar, span: Span) -> R<ConstVal> {
    Ok(match (v, to) {
        (ConstVal::Int(i), Scalar::Float) => ConstVal::Float(i as f32),
        (ConstVal::Float(f), Scalar::Int) => ConstVal::Int(
            float_to_int(f)
                .ok_or_else(|| Diagnostic::error(span, format!("float value {f:?} is out of the range of `int`")))?,
        ),
        (v, _) => v,
    })
}

/// C's float→int conversion (truncation) when the result is representable.
pub fn float_to_int(f: f32) -> Option<i32> {
    // 2^31 is exactly representable; every f32 below it truncates into range.
    if f.is_finite() && f > -2147483904.0 && f < 2147483648.0 { Some(f.trunc() as i32) } else { None }
}

/// Applies a binary operator to two constants (of any types). Used by the constant
/// evaluator and by tests.
pub(crate) fn binary(op: BinaryOp, a: ConstVal, b: ConstVal, span: Span) -> R<ConstVal> {
    use BinaryOp::*;
    let truth = |b: bool| ConstVal::Int(b as i32);
    match (a, b) {
        (ConstVal::Int(x), ConstVal::Int(y)) => Ok(match op {
            Add => ConstVal::Int(x.wrapping_add(y)),
            Sub => ConstVal::Int(x.wrapping_sub(y)),
            Mul => ConstVal::Int(x.wrapping_mul(y)),
            Div | Mod => {
                if y == 0 {
                    return Err(Diagnostic::error(span, "division by zero in constant expression"));
                }
                if x == i32::MIN && y == -1 {
                    return Err(Diagnostic::error(span, "integer overflow in constant expression (`INT_MIN / -1`)"));
                }
                ConstVal::Int(if op == Div { x / y } else { x % y })
            }
            Lt => truth(x < y),
            Gt => truth(x > y),
            Le => truth(x <= y),
            Ge => truth(x >= y),
            Eq => truth(x == y),
            Ne => truth(x != y),
            And => truth(x != 0 && y != 0),
            Or => truth(x != 0 || y != 0),
        }),
        _ => {
            let x = as_float(a);
            let y = as_float(b);
            Ok(match op {
                Add => ConstVal::Float(x + y),
                Sub => ConstVal::Float(x - y),
                Mul => ConstVal::Float(x * y),
                Div => ConstVal::Float(x / y),
                Mod => return Err(Diagnostic::error(span, "invalid operands to `%`: both must be `int`")),
                Lt => truth(x < y),
                Gt => truth(x > y),
                Le => truth(x <= y),
                Ge => truth(x >= y),
                Eq => truth(x == y),
                Ne => truth(x != y),
                And => truth(is_true(a) && is_true(b)),
                Or => truth(is_true(a) || is_true(b)),
            })
        }
    }
}

fn as_float(v: ConstVal) -> f32 {
    match v {
        ConstVal::Int(i) => i as f32,
        ConstVal::Float(f) => f,
    }
}

pub(crate) fn is_true(v: ConstVal) -> bool {
    match v {
        ConstVal::Int(i) => i != 0,
        ConstVal::Float(f) => f != 0.0,
    }
}

impl Analyzer<'_> {
    /// Evaluates `e` at compile time, or explains why it is not a constant.
    pub(super) fn const_eval(&self, e: &Expr) -> R<ConstVal> {
        match &e.kind {
            ExprKind::IntLit(v, _) => Ok(ConstVal::Int(*v)),
            ExprKind::FloatLit(f) => Ok(ConstVal::Float(*f)),
            ExprKind::StrLit(_) => {
                Err(Diagnostic::error(e.span, "a string literal is only allowed as the first argument of `putf`"))
            }
            ExprKind::Call { name, .. } => {
                Err(Diagnostic::error(e.span, format!("call to `{}` in a constant expression", name.name)).with_note(
                    "array dimensions, `const` initialisers and global initialisers must be compile-time constants",
                ))
            }
            ExprKind::Unary(op, operand) => {
                let v = self.const_eval(operand)?;
                Ok(match (op, v) {
                    (UnaryOp::Plus, v) => v,
                    (UnaryOp::Neg, ConstVal::Int(i)) => ConstVal::Int(i.wrapping_neg()),
                    (UnaryOp::Neg, ConstVal::Float(f)) => ConstVal::Float(-f),
                    (UnaryOp::Not, v) => ConstVal::Int(!is_true(v) as i32),
                })
            }
            ExprKind::Binary(..) => {
                // Iterate along the left spine: operator chains can be thousands long.
                let mut spine = Vec::new();
                let mut leftmost = e;
                while let ExprKind::Binary(op, lhs, rhs) = &leftmost.kind {
                    spine.push((*op, &**rhs, leftmost.span));
                    leftmost = lhs;
                }
                let mut acc = self.const_eval(leftmost)?;
                for (op, rhs, span) in spine.into_iter().rev() {
                    // Short-circuit: the unevaluated operand may contain what would trap.
                    acc = match op {
                        BinaryOp::And if !is_true(acc) => ConstVal::Int(0),
                        BinaryOp::Or if is_true(acc) => ConstVal::Int(1),
                        _ => binary(op, acc, self.const_eval(rhs)?, span)?,
                    };
                }
                Ok(acc)
            }
            ExprKind::LVal(lv) => {
                let name = &lv.name.name;
                match self.scopes.lookup(name) {
                    None => Err(self.undefined_variable(&lv.name)),
                    Some(Symbol::Const(c)) => {
                        if lv.indices.is_empty() {
                            Ok(*c)
                        } else {
                            Err(Diagnostic::error(lv.span, format!("`{name}` is a scalar and cannot be indexed")))
                        }
                    }
                    Some(Symbol::Var(info)) => {
                        let not_const = || {
                            Diagnostic::error(lv.span, format!("`{name}` is not a constant"))
                                .with_note("array dimensions, `const` initialisers and global initialisers must be compile-time constants")
                        };
                        let (Some(values), VarType::Array { dims, .. }) = (&info.const_values, &info.ty) else {
                            return Err(not_const());
                        };
                        if lv.indices.len() != dims.len() {
                            return Err(Diagnostic::error(
                                lv.span,
                                format!(
                                    "constant array `{name}` needs {} indices here, found {}",
                                    dims.len(),
                                    lv.indices.len()
                                ),
                            ));
                        }
                        let mut flat: u64 = 0;
                        for (index, &dim) in lv.indices.iter().zip(dims) {
                            let i = match self.const_eval(index)? {
                                ConstVal::Int(i) => i,
                                ConstVal::Float(_) => {
                                    return Err(Diagnostic::error(index.span, "array index must be an `int`"));
                                }
                            };
                            if i < 0 || i as u32 >= dim {
                                return Err(Diagnostic::error(
                                    index.span,
                                    format!("index {i} is out of bounds for a dimension of size {dim}"),
                                ));
                            }
                            flat = flat * dim as u64 + i as u64;
                        }
                        let elem = info.ty.elem();
                        let zero = match elem {
                            Scalar::Int => ConstVal::Int(0),
                            Scalar::Float => ConstVal::Float(0.0),
                        };
                        Ok(values
                            .elems
                            .binary_search_by_key(&flat, |&(i, _)| i as u64)
                            .map_or(zero, |k| values.elems[k].1))
                    }
                }
            }
        }
    }

    /// Evaluates `e` and converts it to `to`.
    pub(super) fn const_eval_as(&self, e: &Expr, to: Scalar) -> R<ConstVal> {
        let v = self.const_eval(e)?;
        convert_const(v, to, e.span)
    }
}
