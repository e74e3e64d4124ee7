//! Operator mutations: a binary operator replaced by a neighbour of the same family
//! (`+`/`-`, `*`/`/`, comparisons among themselves, `==`/`!=`, `&&`/`||`), operands
//! swapped, a unary minus added or removed. `%` is never produced (it is an error on floats)
//! but is replaced by `*` or `/`.

use super::walk::{Visit, at_random_site, visit_expr_mut};
use crate::Choices;
use sysyc::frontend::ast::*;

/// The neighbours `op` may become.
pub fn neighbours(op: BinaryOp) -> &'static [BinaryOp] {
    use BinaryOp::*;
    match op {
        Add => &[Sub, Mul],
        Sub => &[Add],
        Mul => &[Add, Div],
        Div => &[Mul, Sub],
        Mod => &[Div, Mul],
        Lt => &[Le, Gt, Ne],
        Le => &[Lt, Ge],
        Gt => &[Ge, Lt, Ne],
        Ge => &[Gt, Le],
        Eq => &[Ne, Le, Ge],
        Ne => &[Eq, Lt, Gt],
        And => &[Or],
        Or => &[And],
    }
}

fn count_binary(e: &Expr) -> u64 {
    let mut n = 0;
    super::walk::visit_expr(e, &mut |x| {
        n += u64::from(matches!(x.kind, ExprKind::Binary(..)));
    });
    n
}

/// Replaces the `k`-th binary node of `e` (pre-order) by `change`.
fn change_binary(e: &mut Expr, k: u64, change: &mut dyn FnMut(&mut Expr)) {
    let mut seen = 0;
    visit_expr_mut(e, &mut |x| {
        if matches!(x.kind, ExprKind::Binary(..)) {
            if seen == k {
                change(x);
                seen += 1;
                return false;
            }
            seen += 1;
        }
        true
    });
}

/// Swaps a binary operator for a neighbour; `false` when the program has none outside
/// constant contexts.
pub fn swap_binary(unit: &mut CompUnit, choices: &mut dyn Choices) -> bool {
    // Drawn before the site, so the site's closure need not borrow the stream.
    let (which, pick) = (choices.below(1 << 20), choices.below(3));
    at_random_binary(unit, choices, which, &mut |x| {
        if let ExprKind::Binary(op, ..) = &mut x.kind {
            let n = neighbours(*op);
            *op = n[pick as usize % n.len()];
        }
    })
}

/// Swaps the operands of a binary node (`a - b` becomes `b - a`, `a < b` becomes `b < a`).
pub fn swap_operands(unit: &mut CompUnit, choices: &mut dyn Choices) -> bool {
    let which = choices.below(1 << 20);
    at_random_binary(unit, choices, which, &mut |x| {
        if let ExprKind::Binary(_, l, r) = &mut x.kind {
            std::mem::swap(l, r);
        }
    })
}

/// Applies `edit` to binary node `which` (modulo their number) of a random expression outside
/// constant contexts that has one; `false` when there is none. `which` is drawn by the caller
/// before the site, so the site's closure need not borrow the stream.
fn at_random_binary(unit: &mut CompUnit, choices: &mut dyn Choices, which: u64, edit: &mut dyn FnMut(&mut Expr)) -> bool {
    at_random_site(
        unit,
        choices,
        &mut |v, _, site| !site.constant && matches!(v, Visit::Root(e) if count_binary(e) > 0),
        &mut |v, _, _| {
            let Visit::Root(e) = v else { return false };
            change_binary(e, which % count_binary(e), edit);
            true
        },
    )
    .unwrap_or(false)
}

/// Negates an arithmetic root expression (`e` becomes `-(e)`), or drops a unary minus.
pub fn negate(unit: &mut CompUnit, choices: &mut dyn Choices) -> bool {
    at_random_site(
        unit,
        choices,
        &mut |v, env, site| !site.constant && matches!(v, Visit::Root(e) if env.type_of(e).is_some()),
        &mut |v, _, _| {
            let Visit::Root(e) = v else { return false };
            let old = std::mem::replace(e, Expr::int(0));
            *e = match old.kind {
                ExprKind::Unary(UnaryOp::Neg, inner) => *inner,
                kind => Expr::new(ExprKind::Unary(UnaryOp::Neg, Box::new(Expr::new(kind, old.span))), old.span),
            };
            true
        },
    )
    .unwrap_or(false)
}
