//! Typed indices of the IR's arenas (`cranelift-entity` maps keyed by these).

use cranelift_entity::entity_impl;

/// An SSA value: an instruction result, a function parameter, a constant, a global's address
/// or `undef`. Values are per function.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(u32);
entity_impl!(Value, "v");

/// An instruction of a function.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Inst(u32);
entity_impl!(Inst, "inst");

/// A basic block of a function.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Block(u32);
entity_impl!(Block, "bb");

/// A function of a module.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncRef(u32);
entity_impl!(FuncRef, "fn");

/// A global variable of a module.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalRef(u32);
entity_impl!(GlobalRef, "g");

/// A string literal of a module (the format strings of `putf`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StrId(u32);
entity_impl!(StrId, "str");
