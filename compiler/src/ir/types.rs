//! IR value types.

use std::fmt;

/// The type of an IR value. Pointers are untyped byte addresses (like LLVM's opaque `ptr`):
/// what is loaded through one is the type of the load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Type {
    /// No value (the "result type" of stores, branches, void calls).
    Void,
    /// A condition: the result of comparisons, the operand of conditional branches.
    I1,
    I32,
    F32,
    Ptr,
}

impl Type {
    pub fn is_void(self) -> bool {
        self == Type::Void
    }

    /// Size in bytes of a value of this type in memory (only `I32`, `F32` and `Ptr` live there).
    pub fn bytes(self) -> u32 {
        match self {
            Type::Void => 0,
            Type::I1 => 1,
            Type::I32 | Type::F32 | Type::Ptr => 4,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Type::Void => "void",
            Type::I1 => "i1",
            Type::I32 => "i32",
            Type::F32 => "f32",
            Type::Ptr => "ptr",
        }
    }

    pub fn from_name(s: &str) -> Option<Type> {
        Some(match s {
            "void" => Type::Void,
            "i1" => Type::I1,
            "i32" => Type::I32,
            "f32" => Type::F32,
            "ptr" => Type::Ptr,
            _ => return None,
        })
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<crate::frontend::hir::Scalar> for Type {
    fn from(s: crate::frontend::hir::Scalar) -> Type {
        match s {
            crate::frontend::hir::Scalar::Int => Type::I32,
            crate::frontend::hir::Scalar::Float => Type::F32,
        }
    }
}
