//! Instructions: opcodes and the uniform operand layout.
//!
//! Every instruction is an [`InstData`]: an [`Opcode`] (carrying small immediates), a list of
//! value operands `args`, a list of block operands `targets` and a result type. Keeping operands
//! uniform makes use lists, replace-all-uses, cloning (inlining, unrolling) and hashing (GVN)
//! one piece of code each instead of one per instruction shape.
//!
//! Operand conventions (checked by the verifier):
//!
//! | opcode            | args                         | targets                    | result |
//! |-------------------|------------------------------|----------------------------|--------|
//! | binary ops        | `[lhs, rhs]`                 | —                          | operand type |
//! | `Icmp`/`Fcmp`     | `[lhs, rhs]`                 | —                          | `i1` |
//! | `Zext`            | `[i1]`                       | —                          | `i32` |
//! | `SiToFp`/`FpToSi` | `[x]`                        | —                          | `f32`/`i32` |
//! | `FNeg`            | `[f32]`                      | —                          | `f32` |
//! | `Select`          | `[i1, a, b]`                 | —                          | type of a, b |
//! | `Alloca`          | —                            | —                          | `ptr` |
//! | `Load`            | `[addr]`                     | —                          | `i32`/`f32` |
//! | `Store`           | `[addr, value]`              | —                          | void |
//! | `Gep`             | `[base, index]`              | —                          | `ptr` = base + index·scale |
//! | `MemZero`         | `[addr]`                     | —                          | void |
//! | `Call`            | arguments                    | —                          | callee's return type |
//! | `Phi`             | incoming values              | incoming blocks (parallel) | any |
//! | `Jump`            | —                            | `[dest]`                   | void |
//! | `Br`              | `[cond: i1]`                 | `[then, else]`             | void |
//! | `Ret`             | `[]` or `[value]`            | —                          | void |
//! | `Unreachable`     | —                            | —                          | void |

use smallvec::SmallVec;

use super::entities::{Block, FuncRef, StrId, Value};
use super::types::Type;
use crate::frontend::hir::Builtin;

/// Integer comparison (signed; SysY has no unsigned types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IntCC {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Float comparison. All are *ordered* (false when an operand is NaN) except `Ne`, which is
/// unordered-or-not-equal — exactly C's `==, <, <=, >, >=` and `!=` on floats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FloatCC {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

macro_rules! cc_common {
    ($t:ident) => {
        impl $t {
            pub const ALL: [$t; 6] = [$t::Eq, $t::Ne, $t::Lt, $t::Le, $t::Gt, $t::Ge];

            pub fn name(self) -> &'static str {
                match self {
                    $t::Eq => "eq",
                    $t::Ne => "ne",
                    $t::Lt => "lt",
                    $t::Le => "le",
                    $t::Gt => "gt",
                    $t::Ge => "ge",
                }
            }

            pub fn from_name(s: &str) -> Option<$t> {
                $t::ALL.iter().copied().find(|c| c.name() == s)
            }

            /// The condition with operands exchanged: `a < b` ⇔ `b > a`.
            pub fn swapped(self) -> $t {
                match self {
                    $t::Eq => $t::Eq,
                    $t::Ne => $t::Ne,
                    $t::Lt => $t::Gt,
                    $t::Le => $t::Ge,
                    $t::Gt => $t::Lt,
                    $t::Ge => $t::Le,
                }
            }
        }
    };
}
cc_common!(IntCC);
cc_common!(FloatCC);

impl IntCC {
    /// The logical negation: `!(a < b)` ⇔ `a >= b`. (Not valid for floats because of NaN.)
    pub fn inverse(self) -> IntCC {
        match self {
            IntCC::Eq => IntCC::Ne,
            IntCC::Ne => IntCC::Eq,
            IntCC::Lt => IntCC::Ge,
            IntCC::Le => IntCC::Gt,
            IntCC::Gt => IntCC::Le,
            IntCC::Ge => IntCC::Lt,
        }
    }

    pub fn eval(self, a: i32, b: i32) -> bool {
        match self {
            IntCC::Eq => a == b,
            IntCC::Ne => a != b,
            IntCC::Lt => a < b,
            IntCC::Le => a <= b,
            IntCC::Gt => a > b,
            IntCC::Ge => a >= b,
        }
    }
}

impl FloatCC {
    pub fn eval(self, a: f32, b: f32) -> bool {
        match self {
            FloatCC::Eq => a == b,
            FloatCC::Ne => a != b,
            FloatCC::Lt => a < b,
            FloatCC::Le => a <= b,
            FloatCC::Gt => a > b,
            FloatCC::Ge => a >= b,
        }
    }
}

/// Parameter and return types of a runtime-library function as the IR calls it, or `None`
/// for [`Builtin::PutF`], which is called through [`Callee::PutF`] instead. Arrays are passed
/// as `ptr`; `starttime`/`stoptime` take the source line.
pub fn builtin_signature(b: Builtin) -> Option<(&'static [Type], Type)> {
    use Type::{F32, I32, Ptr, Void};
    Some(match b {
        Builtin::GetInt | Builtin::GetCh => (&[], I32),
        Builtin::GetFloat => (&[], F32),
        Builtin::GetArray | Builtin::GetFArray => (&[Ptr], I32),
        Builtin::PutInt | Builtin::PutCh => (&[I32], Void),
        Builtin::PutFloat => (&[F32], Void),
        Builtin::PutArray | Builtin::PutFArray => (&[I32, Ptr], Void),
        Builtin::StartTime | Builtin::StopTime => (&[I32], Void),
        Builtin::PutF => return None,
    })
}

/// What a call calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Callee {
    /// A function of the module.
    Func(FuncRef),
    /// A runtime-library function other than `putf`.
    Builtin(Builtin),
    /// `putf` with the given format string; the arguments are the values to format.
    PutF(StrId),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Opcode {
    // i32 arithmetic, wrapping.
    Add,
    Sub,
    Mul,
    /// Signed division truncating toward zero. Traps on a zero divisor and on `INT_MIN / -1`
    /// (the IR interpreter reports both; no pass may fold or speculate a trapping division).
    SDiv,
    /// Signed remainder with the sign of the dividend; traps like `SDiv`.
    SRem,
    // f32 arithmetic, IEEE binary32 round-to-nearest.
    FAdd,
    FSub,
    FMul,
    FDiv,
    FNeg,
    Icmp(IntCC),
    Fcmp(FloatCC),
    /// `i1` → `i32` (0 or 1).
    Zext,
    /// `i32` → `f32`, rounding to nearest.
    SiToFp,
    /// `f32` → `i32`, truncating toward zero (out-of-range saturates like ARM's `vcvt`).
    FpToSi,
    /// `args[0] ? args[1] : args[2]`.
    Select,
    /// A stack slot of `count` elements of `elem` (`i32` or `f32`), 4-byte aligned.
    Alloca { elem: Type, count: u32 },
    Load,
    Store,
    /// `args[0] + args[1] * scale` (bytes); `args[1]` is an `i32` (signed).
    Gep { scale: u32 },
    /// Zero `words` 4-byte words starting at `args[0]`.
    MemZero { words: u32 },
    Call(Callee),
    Phi,
    Jump,
    Br,
    Ret,
    /// Control never reaches here (e.g. after falling off a non-void function, which is
    /// undefined behaviour in SysY).
    Unreachable,
}

impl Opcode {
    pub fn is_terminator(self) -> bool {
        matches!(self, Opcode::Jump | Opcode::Br | Opcode::Ret | Opcode::Unreachable)
    }

    /// Integer and float binary arithmetic with two operands of the result type.
    pub fn is_binary_arith(self) -> bool {
        matches!(
            self,
            Opcode::Add
                | Opcode::Sub
                | Opcode::Mul
                | Opcode::SDiv
                | Opcode::SRem
                | Opcode::FAdd
                | Opcode::FSub
                | Opcode::FMul
                | Opcode::FDiv
        )
    }

    /// `a op b == b op a` exactly (for floats too: IEEE addition and multiplication commute).
    pub fn is_commutative(self) -> bool {
        matches!(self, Opcode::Add | Opcode::Mul | Opcode::FAdd | Opcode::FMul)
            || matches!(self, Opcode::Icmp(IntCC::Eq | IntCC::Ne) | Opcode::Fcmp(FloatCC::Eq | FloatCC::Ne))
    }

    /// May trap at run time for some operands (so it must not be executed speculatively).
    pub fn may_trap(self) -> bool {
        matches!(self, Opcode::SDiv | Opcode::SRem)
    }

    /// Reads memory (loads, and calls, which may).
    pub fn reads_memory(self) -> bool {
        matches!(self, Opcode::Load | Opcode::Call(_))
    }

    /// Writes memory or has another side effect visible outside the function (I/O).
    pub fn has_side_effects(self) -> bool {
        matches!(self, Opcode::Store | Opcode::MemZero { .. } | Opcode::Call(_)) || self.is_terminator()
    }

    /// Pure computation of its operands: can be removed when unused, duplicated, or moved
    /// anywhere its operands are available — provided it is also not [`Opcode::may_trap`].
    pub fn is_pure(self) -> bool {
        !self.has_side_effects() && !self.reads_memory() && !matches!(self, Opcode::Phi | Opcode::Alloca { .. })
    }

    /// The textual mnemonic (without immediates).
    pub fn mnemonic(self) -> &'static str {
        match self {
            Opcode::Add => "add",
            Opcode::Sub => "sub",
            Opcode::Mul => "mul",
            Opcode::SDiv => "sdiv",
            Opcode::SRem => "srem",
            Opcode::FAdd => "fadd",
            Opcode::FSub => "fsub",
            Opcode::FMul => "fmul",
            Opcode::FDiv => "fdiv",
            Opcode::FNeg => "fneg",
            Opcode::Icmp(_) => "icmp",
            Opcode::Fcmp(_) => "fcmp",
            Opcode::Zext => "zext",
            Opcode::SiToFp => "sitofp",
            Opcode::FpToSi => "fptosi",
            Opcode::Select => "select",
            Opcode::Alloca { .. } => "alloca",
            Opcode::Load => "load",
            Opcode::Store => "store",
            Opcode::Gep { .. } => "gep",
            Opcode::MemZero { .. } => "memzero",
            Opcode::Call(_) => "call",
            Opcode::Phi => "phi",
            Opcode::Jump => "jump",
            Opcode::Br => "br",
            Opcode::Ret => "ret",
            Opcode::Unreachable => "unreachable",
        }
    }
}

/// An instruction's contents. See the module documentation for the operand conventions.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InstData {
    pub op: Opcode,
    pub args: SmallVec<[Value; 2]>,
    pub targets: SmallVec<[Block; 2]>,
    /// Result type; `Void` when the instruction produces no value.
    pub ty: Type,
}

impl InstData {
    pub fn new(op: Opcode, args: &[Value], targets: &[Block], ty: Type) -> InstData {
        InstData { op, args: SmallVec::from_slice(args), targets: SmallVec::from_slice(targets), ty }
    }

    pub fn binary(op: Opcode, lhs: Value, rhs: Value, ty: Type) -> InstData {
        InstData::new(op, &[lhs, rhs], &[], ty)
    }

    pub fn icmp(cc: IntCC, lhs: Value, rhs: Value) -> InstData {
        InstData::new(Opcode::Icmp(cc), &[lhs, rhs], &[], Type::I1)
    }

    pub fn fcmp(cc: FloatCC, lhs: Value, rhs: Value) -> InstData {
        InstData::new(Opcode::Fcmp(cc), &[lhs, rhs], &[], Type::I1)
    }

    pub fn unary(op: Opcode, arg: Value, ty: Type) -> InstData {
        InstData::new(op, &[arg], &[], ty)
    }

    pub fn alloca(elem: Type, count: u32) -> InstData {
        InstData::new(Opcode::Alloca { elem, count }, &[], &[], Type::Ptr)
    }

    pub fn load(addr: Value, ty: Type) -> InstData {
        InstData::new(Opcode::Load, &[addr], &[], ty)
    }

    pub fn store(addr: Value, value: Value) -> InstData {
        InstData::new(Opcode::Store, &[addr, value], &[], Type::Void)
    }

    pub fn gep(base: Value, index: Value, scale: u32) -> InstData {
        InstData::new(Opcode::Gep { scale }, &[base, index], &[], Type::Ptr)
    }

    pub fn call(callee: Callee, args: &[Value], ret: Type) -> InstData {
        InstData::new(Opcode::Call(callee), args, &[], ret)
    }

    pub fn phi(ty: Type, incoming: &[(Block, Value)]) -> InstData {
        InstData {
            op: Opcode::Phi,
            args: incoming.iter().map(|&(_, v)| v).collect(),
            targets: incoming.iter().map(|&(b, _)| b).collect(),
            ty,
        }
    }

    pub fn jump(dest: Block) -> InstData {
        InstData::new(Opcode::Jump, &[], &[dest], Type::Void)
    }

    pub fn br(cond: Value, then_dest: Block, else_dest: Block) -> InstData {
        InstData::new(Opcode::Br, &[cond], &[then_dest, else_dest], Type::Void)
    }

    pub fn ret(value: Option<Value>) -> InstData {
        InstData::new(Opcode::Ret, value.as_slice(), &[], Type::Void)
    }

    /// For a phi: its `(incoming block, value)` pairs.
    pub fn phi_incoming(&self) -> impl Iterator<Item = (Block, Value)> + '_ {
        debug_assert_eq!(self.op, Opcode::Phi);
        self.targets.iter().copied().zip(self.args.iter().copied())
    }

    /// Successor blocks if this is a terminator; empty otherwise (a phi's `targets` are
    /// predecessors, not successors).
    pub fn successors(&self) -> &[Block] {
        if self.op.is_terminator() { &self.targets } else { &[] }
    }
}
