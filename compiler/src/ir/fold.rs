//! Constant evaluation of pure opcodes: the exact semantics of the IR interpreter on constant
//! operands, for the passes that fold (`constfold`, `instcombine`, `sccp`).

use super::{Const, Opcode, Type};

/// The constant result of `op` applied to constant operands, or `None` when it cannot or
/// must not be folded (traps, NaN results, opcodes without a pure constant result).
pub fn fold(op: Opcode, args: &[Const], ty: Type) -> Option<Const> {
    use Const::{Bool, Float, Int};
    let f = f32::from_bits;
    let float = |x: f32| (!x.is_nan()).then(|| Const::float(x));
    match (op, args) {
        (Opcode::Add, &[Int(a), Int(b)]) => Some(Int(a.wrapping_add(b))),
        (Opcode::Sub, &[Int(a), Int(b)]) => Some(Int(a.wrapping_sub(b))),
        (Opcode::Mul, &[Int(a), Int(b)]) => Some(Int(a.wrapping_mul(b))),
        // `checked_*` is `None` exactly for the trapping cases: b == 0 and INT_MIN / -1.
        (Opcode::SDiv, &[Int(a), Int(b)]) => a.checked_div(b).map(Int),
        (Opcode::SRem, &[Int(a), Int(b)]) => a.checked_rem(b).map(Int),
        (Opcode::FAdd, &[Float(a), Float(b)]) => float(f(a) + f(b)),
        (Opcode::FSub, &[Float(a), Float(b)]) => float(f(a) - f(b)),
        (Opcode::FMul, &[Float(a), Float(b)]) => float(f(a) * f(b)),
        (Opcode::FDiv, &[Float(a), Float(b)]) => float(f(a) / f(b)),
        (Opcode::FNeg, &[Float(a)]) => Some(Float(a ^ 0x8000_0000)),
        (Opcode::Icmp(cc), &[Int(a), Int(b)]) => Some(Bool(cc.eval(a, b))),
        (Opcode::Fcmp(cc), &[Float(a), Float(b)]) => Some(Bool(cc.eval(f(a), f(b)))),
        (Opcode::Zext, &[Bool(b)]) => Some(Int(b as i32)),
        (Opcode::SiToFp, &[Int(a)]) => Some(Const::float(a as f32)),
        (Opcode::FpToSi, &[Float(a)]) => Some(Int(f(a) as i32)),
        (Opcode::Select, &[Bool(c), a, b]) if a.ty() == ty => Some(if c { a } else { b }),
        _ => None,
    }
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{FloatCC, IntCC};

    #[test]
    fn integer_folding_wraps_and_never_folds_traps() {
        use Const::Int;
        assert_eq!(fold(Opcode::Add, &[Int(i32::MAX), Int(1)], Type::I32), Some(Int(i32::MIN)));
        assert_eq!(fold(Opcode::Mul, &[Int(65536), Int(65536)], Type::I32), Some(Int(0)));
        assert_eq!(fold(Opcode::SDiv, &[Int(-7), Int(2)], Type::I32), Some(Int(-3)));
        assert_eq!(fold(Opcode::SRem, &[Int(-7), Int(2)], Type::I32), Some(Int(-1)));
        assert_eq!(fold(Opcode::SDiv, &[Int(1), Int(0)], Type::I32), None);
        assert_eq!(fold(Opcode::SRem, &[Int(1), Int(0)], Type::I32), None);
        assert_eq!(fold(Opcode::SDiv, &[Int(i32::MIN), Int(-1)], Type::I32), None);
        assert_eq!(fold(Opcode::SRem, &[Int(i32::MIN), Int(-1)], Type::I32), None);
        assert_eq!(fold(Opcode::SDiv, &[Int(i32::MIN), Int(1)], Type::I32), Some(Int(i32::MIN)));
    }

    #[test]
    fn float_folding_is_single_precision_and_leaves_nans_alone() {
        let c = Const::float;
        // 16777216 + 1 is not representable in f32: rounds back to 16777216.
        assert_eq!(fold(Opcode::FAdd, &[c(16777216.0), c(1.0)], Type::F32), Some(c(16777216.0)));
        assert_eq!(fold(Opcode::FDiv, &[c(1.0), c(0.0)], Type::F32), Some(c(f32::INFINITY)));
        assert_eq!(fold(Opcode::FDiv, &[c(0.0), c(0.0)], Type::F32), None);
        assert_eq!(fold(Opcode::FSub, &[c(f32::INFINITY), c(f32::INFINITY)], Type::F32), None);
        assert_eq!(fold(Opcode::FNeg, &[c(0.0)], Type::F32), Some(c(-0.0)));
        assert_eq!(fold(Opcode::FNeg, &[Const::Float(0x7fc0_0000)], Type::F32), Some(Const::Float(0xffc0_0000)));
        let nan = Const::Float(0x7fc0_0000);
        assert_eq!(fold(Opcode::Fcmp(FloatCC::Ne), &[nan, nan], Type::I1), Some(Const::Bool(true)));
        assert_eq!(fold(Opcode::Fcmp(FloatCC::Eq), &[nan, nan], Type::I1), Some(Const::Bool(false)));
        assert_eq!(fold(Opcode::Fcmp(FloatCC::Lt), &[c(1.0), c(2.0)], Type::I1), Some(Const::Bool(true)));
    }

    #[test]
    fn conversions_round_and_saturate() {
        assert_eq!(fold(Opcode::SiToFp, &[Const::Int(16777217)], Type::F32), Some(Const::float(16777216.0)));
        assert_eq!(fold(Opcode::FpToSi, &[Const::float(-2.9)], Type::I32), Some(Const::Int(-2)));
        assert_eq!(fold(Opcode::FpToSi, &[Const::float(3e9)], Type::I32), Some(Const::Int(i32::MAX)));
        assert_eq!(fold(Opcode::FpToSi, &[Const::float(-3e9)], Type::I32), Some(Const::Int(i32::MIN)));
        assert_eq!(fold(Opcode::FpToSi, &[Const::Float(0x7fc0_0000)], Type::I32), Some(Const::Int(0)));
        assert_eq!(fold(Opcode::Zext, &[Const::Bool(true)], Type::I32), Some(Const::Int(1)));
        assert_eq!(fold(Opcode::Icmp(IntCC::Lt), &[Const::Int(-1), Const::Int(0)], Type::I1), Some(Const::Bool(true)));
    }
}
