//! The SSA intermediate representation.
//!
//! * [`entities`] — typed indices (`Value`, `Inst`, `Block`, `FuncRef`, `GlobalRef`, `StrId`).
//! * [`types`] — `i1`, `i32`, `f32`, `ptr`, `void`.
//! * [`instr`] — opcodes and the uniform operand layout of instructions.
//! * [`function`] — arenas, layout, use lists, interned constants.
//! * [`module`] — functions, globals, strings.

pub mod entities;
pub mod function;
pub mod instr;
pub mod module;
pub mod types;

pub use entities::{Block, FuncRef, GlobalRef, Inst, StrId, Value};
pub use function::{Const, Function, ValueData, ValueDef};
pub use instr::{Callee, FloatCC, InstData, IntCC, Opcode};
pub use module::{GlobalData, Module};
pub use types::Type;
