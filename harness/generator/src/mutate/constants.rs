//! Constant mutations: a literal moved to a boundary value. Integers become 0, ±1,
//! `INT_MIN`/`INT_MAX`, a power of two or a power of two ± 1, or their neighbour; floats
//! become 0, -0.0, ±1, NaN, ±infinity, the largest float or the smallest normal. Literals
//! of constant contexts (array dimensions, `const` initialisers) are left alone: they size
//! arrays, and a dimension of `INT_MAX` is not a program.

use super::walk::{Visit, at_random_site, visit_expr_mut};
use crate::Choices;
use sysyc::frontend::ast::*;

/// The integer boundary values.
pub fn int_boundaries() -> Vec<i32> {
    let mut v = vec![0, 1, -1, i32::MIN, i32::MAX, i32::MIN + 1, i32::MAX - 1];
    for k in [1, 2, 3, 4, 5, 7, 8, 15, 16, 30] {
        let p = 1i32 << k;
        v.extend([p, p - 1, p + 1, -p]);
    }
    v
}

/// The float boundary values.
pub fn float_boundaries() -> Vec<f32> {
    vec![0.0, -0.0, 1.0, -1.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, f32::MIN_POSITIVE, 0.5, 16777216.0]
}

fn literals(e: &Expr) -> u64 {
    let mut n = 0;
    super::walk::visit_expr(e, &mut |x| {
        n += u64::from(matches!(x.kind, ExprKind::IntLit(..) | ExprKind::FloatLit(_)));
    });
    n
}

/// Moves one literal of a non-constant context to a boundary value (or to the literal's own
/// neighbour, `v ± 1`).
pub fn boundary(unit: &mut CompUnit, choices: &mut dyn Choices) -> bool {
    let ints = int_boundaries();
    let floats = float_boundaries();
    // Drawn before the site, so the site's closure need not borrow the stream.
    let (pick_int, pick_float, which) = (choices.below(ints.len() as u64 + 2), choices.below(floats.len() as u64), choices.below(1 << 20));
    at_random_site(
        unit,
        choices,
        &mut |v, _, site| !site.constant && matches!(v, Visit::Root(e) if literals(e) > 0),
        &mut |v, _, _| {
            let Visit::Root(e) = v else { return false };
            let k = which % literals(e);
            let mut seen = 0;
            visit_expr_mut(e, &mut |x| {
                let is_lit = matches!(x.kind, ExprKind::IntLit(..) | ExprKind::FloatLit(_));
                if is_lit && seen == k {
                    x.kind = match std::mem::replace(&mut x.kind, ExprKind::IntLit(0, IntBase::Dec)) {
                        ExprKind::IntLit(v, base) => match pick_int as usize {
                            i if i < ints.len() && ints[i] != v => ExprKind::IntLit(ints[i], IntBase::Dec),
                            i if i == ints.len() => ExprKind::IntLit(v.wrapping_add(1), base),
                            _ => ExprKind::IntLit(v.wrapping_sub(1), base),
                        },
                        ExprKind::FloatLit(v) => {
                            let new = floats[pick_float as usize];
                            // Never the same value (NaN is never equal: compare the bits).
                            ExprKind::FloatLit(if new.to_bits() == v.to_bits() { -new } else { new })
                        }
                        other => other,
                    };
                }
                seen += u64::from(is_lit);
                true
            });
            true
        },
    )
    .unwrap_or(false)
}
