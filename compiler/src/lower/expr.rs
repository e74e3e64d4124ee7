//! Expressions as values: constants, loads, arithmetic, conversions and calls.
//!
//! Comparisons, `!`, `&&` and `||` produce `i32` 0/1 here (see [`super::cond`] for their
//! lowering as branches). Operands and arguments are evaluated left to right.

use super::builder::FnBuilder;
use super::func_ref;
use crate::frontend::hir::{self, BinaryOp, Builtin, Callee, ExprKind, Scalar, UnaryOp};
use crate::ir::{self, InstData, Opcode, Type, Value};

impl FnBuilder<'_> {
    /// The value of an expression that has one (not a void call, an array view or a string).
    pub(super) fn value(&mut self, e: &hir::Expr) -> Value {
        self.at(e.span, |b| b.value_here(e))
    }

    fn value_here(&mut self, e: &hir::Expr) -> Value {
        match &e.kind {
            ExprKind::Const(hir::ConstVal::Int(i)) => self.func.iconst(*i),
            ExprKind::Const(hir::ConstVal::Float(f)) => self.func.fconst(*f),
            ExprKind::Load(place) => self.load_place(place, scalar_type(e.ty)),
            ExprKind::ArrayAddr(place) => self.address(place),
            ExprKind::Call { callee, args } => match self.call(*callee, args) {
                Some(v) => v,
                // A void call used as a value does not type-check; keep the IR valid anyway.
                None => self.func.undef(scalar_type(e.ty)),
            },
            ExprKind::Unary(UnaryOp::Neg, x) => {
                let v = self.value(x);
                match scalar_type(x.ty) {
                    Type::F32 => self.ins(InstData::unary(Opcode::FNeg, v, Type::F32)),
                    _ => {
                        let zero = self.func.iconst(0);
                        self.ins(InstData::binary(Opcode::Sub, zero, v, Type::I32))
                    }
                }
            }
            ExprKind::Unary(UnaryOp::Not, _) | ExprKind::Logical(..) => self.bool_value(e),
            ExprKind::Binary(op, ..) if op.is_comparison() => self.bool_value(e),
            ExprKind::Binary(op, lhs, rhs) => {
                let l = self.value(lhs);
                let r = self.value(rhs);
                let ty = scalar_type(e.ty);
                let opcode = arith_opcode(*op, ty == Type::F32);
                self.ins(InstData::binary(opcode, l, r, ty))
            }
            ExprKind::Convert(x) => {
                let v = self.value(x);
                match (x.ty, e.ty) {
                    (Some(Scalar::Int), Some(Scalar::Float)) => self.ins(InstData::unary(Opcode::SiToFp, v, Type::F32)),
                    (Some(Scalar::Float), Some(Scalar::Int)) => self.ins(InstData::unary(Opcode::FpToSi, v, Type::I32)),
                    _ => v,
                }
            }
            // Only `putf`'s first argument, which `call` consumes.
            ExprKind::Str(_) => self.func.undef(Type::I32),
        }
    }

    /// Evaluates an expression statement for its side effects.
    pub(super) fn effect(&mut self, e: &hir::Expr) {
        match &e.kind {
            ExprKind::Call { callee, args } => {
                self.at(e.span, |b| b.call(*callee, args));
            }
            _ => {
                self.value(e);
            }
        }
    }

    /// Emits a call; returns its result unless the callee is `void`.
    pub(super) fn call(&mut self, callee: Callee, args: &[hir::Expr]) -> Option<Value> {
        let (ir_callee, ret, args) = match callee {
            Callee::User(f) => (ir::Callee::Func(func_ref(f)), self.ret_type_of(f), args),
            Callee::Builtin(Builtin::PutF) => {
                let (format, rest) = match args.split_first() {
                    Some((hir::Expr { kind: ExprKind::Str(bytes), .. }, rest)) => (bytes.as_slice(), rest),
                    _ => (&[][..], args),
                };
                let id = self.strings.intern(format);
                (ir::Callee::PutF(id), Type::Void, rest)
            }
            Callee::Builtin(b) => (ir::Callee::Builtin(b), b.ret().map_or(Type::Void, Type::from), args),
        };
        let values: Vec<Value> = args.iter().map(|a| self.value(a)).collect();
        let data = InstData::call(ir_callee, &values, ret);
        if ret.is_void() {
            self.ins_void(data);
            None
        } else {
            Some(self.ins(data))
        }
    }
}

/// The IR type of a value-producing expression.
pub(super) fn scalar_type(ty: Option<Scalar>) -> Type {
    ty.map_or(Type::I32, Type::from)
}

fn arith_opcode(op: BinaryOp, float: bool) -> Opcode {
    match (op, float) {
        (BinaryOp::Add, false) => Opcode::Add,
        (BinaryOp::Sub, false) => Opcode::Sub,
        (BinaryOp::Mul, false) => Opcode::Mul,
        (BinaryOp::Div, false) => Opcode::SDiv,
        (BinaryOp::Mod, false) => Opcode::SRem,
        (BinaryOp::Add, true) => Opcode::FAdd,
        (BinaryOp::Sub, true) => Opcode::FSub,
        (BinaryOp::Mul, true) => Opcode::FMul,
        (BinaryOp::Div, true) => Opcode::FDiv,
        (op, _) => unreachable!("{op:?} is not arithmetic (float `%` is rejected by semantic analysis)"),
    }
}
