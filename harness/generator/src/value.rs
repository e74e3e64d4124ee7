//! What the generator proves about values, as plain data every part shares: the two types
//! and the magnitude bounds that keep floats finite, an expression with its facts
//! ([`GExpr`]), where an expression may go ([`ECtx`]), and int range arithmetic. A leaf: it
//! knows no state of the generator.

use sysyc::frontend::ast::{BType, BinaryOp, Expr};

/// Largest magnitude a float variable, array element, parameter or return value may hold.
/// Everything stored is clamped to it, so products of two stored values stay far from
/// overflow and float→int conversions of stored values are always in range.
pub(super) const FLOAT_VAR_BOUND: f64 = 1.0e5;

/// Largest magnitude a float *expression* may reach before it is clamped (well below
/// `f32::MAX`, so no intermediate result is ever infinite, and so never NaN).
pub(super) const FLOAT_EXPR_LIMIT: f64 = 1.0e30;

/// Largest magnitude of a float converted to `int` without the clamping helper.
pub(super) const FLOAT_TO_INT_LIMIT: f64 = 2.0e9;

/// Magnitude bound of an `int` converted to float.
pub(super) const INT_AS_FLOAT_BOUND: f64 = 2_147_483_648.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ty {
    Int,
    Float,
}

impl Ty {
    pub(super) fn btype(self) -> BType {
        match self {
            Ty::Int => BType::Int,
            Ty::Float => BType::Float,
        }
    }
}

/// A generated expression with what the generator proved about it.
#[derive(Clone, Debug)]
pub(super) struct GExpr {
    pub e: Expr,
    pub ty: Ty,
    /// Float: largest possible magnitude. Int: unused (see `range`).
    pub bound: f64,
    /// Int: inclusive range of the value if statically known (no wrap-around happened).
    pub range: Option<(i64, i64)>,
    /// Contains a call with side effects.
    pub impure: bool,
    /// Estimated work of one evaluation.
    pub cost: u64,
}

impl GExpr {
    pub(super) fn int(e: Expr, range: Option<(i64, i64)>, impure: bool, cost: u64) -> GExpr {
        GExpr { e, ty: Ty::Int, bound: f64::INFINITY, range, impure, cost }
    }

    pub(super) fn float(e: Expr, bound: f64, impure: bool, cost: u64) -> GExpr {
        GExpr { e, ty: Ty::Float, bound, range: None, impure, cost }
    }

    /// Magnitude bound when used as a float (an int converts exactly-rounded).
    pub(super) fn float_bound(&self) -> f64 {
        match (self.ty, self.range) {
            (Ty::Float, _) => self.bound,
            (Ty::Int, Some((lo, hi))) => (lo.abs().max(hi.abs()) as f64).min(INT_AS_FLOAT_BOUND),
            (Ty::Int, None) => INT_AS_FLOAT_BOUND,
        }
    }
}

/// Where an expression may go.
#[derive(Clone, Copy, Debug)]
pub(super) struct ECtx {
    /// One call with side effects may appear in this region.
    pub impure_ok: bool,
    /// Only reads that no call can change, and no calls of user functions (which might read
    /// globals); a sibling has side effects. The helpers read no globals and stay allowed.
    pub stable: bool,
    /// Remaining expression depth.
    pub depth: u32,
}

impl ECtx {
    /// A pure context of depth `depth` (no call with side effects, any read).
    pub(super) fn pure(depth: u32) -> ECtx {
        ECtx { impure_ok: false, stable: false, depth }
    }

    pub(super) fn deeper(self) -> ECtx {
        ECtx { depth: self.depth.saturating_sub(1), ..self }
    }

    pub(super) fn no_impure(self) -> ECtx {
        ECtx { impure_ok: false, ..self }
    }

    /// The context of the siblings of a subtree that turned out impure (or not).
    pub(super) fn sibling_of(self, impure: bool) -> ECtx {
        ECtx { impure_ok: false, stable: self.stable || impure, ..self }
    }
}

fn fits_i32(v: i64) -> bool {
    v >= i32::MIN as i64 && v <= i32::MAX as i64
}

/// Whether `lo..=hi` stays within `i32` (no wrap-around).
pub(super) fn range_fits(lo: i64, hi: i64) -> bool {
    fits_i32(lo) && fits_i32(hi)
}

/// Range of `op` over two ranges, if no result can wrap.
pub(super) fn range_binary(op: BinaryOp, a: Option<(i64, i64)>, b: Option<(i64, i64)>) -> Option<(i64, i64)> {
    let ((alo, ahi), (blo, bhi)) = (a?, b?);
    let corners: [i64; 4] = match op {
        BinaryOp::Add => [alo + blo, alo + bhi, ahi + blo, ahi + bhi],
        BinaryOp::Sub => [alo - bhi, alo - blo, ahi - bhi, ahi - blo],
        BinaryOp::Mul => [alo.checked_mul(blo)?, alo.checked_mul(bhi)?, ahi.checked_mul(blo)?, ahi.checked_mul(bhi)?],
        _ => return None,
    };
    let lo = *corners.iter().min()?;
    let hi = *corners.iter().max()?;
    range_fits(lo, hi).then_some((lo, hi))
}

/// Range of `a / d` or `a % d` for a divisor range that excludes 0 and −1.
pub(super) fn range_divmod(is_mod: bool, a: Option<(i64, i64)>, d: (i64, i64)) -> Option<(i64, i64)> {
    let dmax = d.0.abs().max(d.1.abs());
    if is_mod {
        let m = dmax - 1;
        return Some(match a {
            Some((lo, _)) if lo >= 0 => (0, m),
            Some((_, hi)) if hi <= 0 => (-m, 0),
            _ => (-m, m),
        });
    }
    let (alo, ahi) = a?;
    if d.0 <= 0 && d.1 >= 0 {
        return None;
    }
    let corners = [alo / d.0, alo / d.1, ahi / d.0, ahi / d.1];
    Some((*corners.iter().min()?, *corners.iter().max()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_never_claim_wrapped_values() {
        assert_eq!(range_binary(BinaryOp::Add, Some((0, 9)), Some((1, 1))), Some((1, 10)));
        assert_eq!(range_binary(BinaryOp::Sub, Some((0, 9)), Some((-2, 3))), Some((-3, 11)));
        assert_eq!(range_binary(BinaryOp::Mul, Some((-3, 2)), Some((4, 5))), Some((-15, 10)));
        assert_eq!(range_binary(BinaryOp::Mul, Some((0, 70_000)), Some((0, 70_000))), None);
        assert_eq!(range_binary(BinaryOp::Add, None, Some((0, 0))), None);
        assert_eq!(range_divmod(true, None, (1, 9)), Some((-8, 8)));
        assert_eq!(range_divmod(true, Some((0, 100)), (-5, -5)), Some((0, 4)));
        assert_eq!(range_divmod(false, Some((-7, 20)), (2, 4)), Some((-3, 10)));
        assert_eq!(range_divmod(false, Some((-7, 20)), (-3, -3)), Some((-6, 2)));
    }
}
