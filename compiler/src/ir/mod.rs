//! The SSA intermediate representation.
//!
//! * [`entities`] — typed indices (`Value`, `Inst`, `Block`, `FuncRef`, `GlobalRef`, `StrId`).
//! * [`types`] — `i1`, `i32`, `f32`, `ptr`, `void`.
//! * [`instr`] — opcodes and the uniform operand layout of instructions.
//! * [`function`] — arenas, layout, use lists, interned constants.
//! * [`module`] — functions, globals, strings.
//! * [`printer`] / [`parser`] — the textual form (syntax documented in [`printer`]).
//! * [`verifier`] — structural, type and SSA checks.
//! * [`fold`] — constant evaluation of pure opcodes (what folding passes share).
//! * [`interp`] — an interpreter, the reference semantics the passes are checked against.

pub mod entities;
pub mod fold;
pub mod function;
pub mod instr;
pub mod interp;
pub mod module;
pub mod parser;
pub mod printer;
pub mod types;
pub mod verifier;

#[cfg(test)]
pub(crate) mod random_tests;

pub use entities::{Block, FuncRef, GlobalRef, Inst, StrId, Value};
pub use function::{Const, Function, ValueData, ValueDef};
pub use instr::{Callee, FloatCC, InstData, IntCC, Opcode};
pub use module::{GlobalData, Module};
pub use parser::{ParseError, parse_module};
pub use printer::{print_function, print_module};
pub use types::Type;
pub use verifier::{VerifierError, verify_function, verify_module};
