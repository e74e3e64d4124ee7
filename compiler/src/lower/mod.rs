//! Lowering: typed HIR ([`hir::Program`]) → SSA IR ([`Module`]).
//!
//! The output is deliberately naive but clean, so that `-O0` code is a faithful picture of
//! the source and every improvement is the work of a named pass:
//! * every local variable (scalar or array) is an `alloca` in the entry block; scalars are
//!   promoted to SSA later by `mem2reg`. A scalar parameter that the body assigns to is
//!   stored into its own `alloca` at entry; one that is never assigned is used directly, as
//!   are array parameters (`ptr` values);
//! * globals become [`GlobalData`] with the sparse initialiser of the HIR (zero-filled arrays
//!   stay compact); `putf` format strings are interned in [`Module::strings`];
//! * conditions (`if`, `while`, `&&`, `||`, `!`) are control flow that branches directly on
//!   the comparison (`icmp`/`fcmp`); comparisons used as values are `zext`ed, `&&`/`||` used as
//!   values become a phi of 0/1 at a join;
//! * array elements are addressed with one `gep` per index, scaled by the row stride in bytes;
//!   a partially indexed array passed to a function is the `ptr` of its first element;
//! * a local array with an initialiser list is one `memzero` of the whole array followed by a
//!   store per listed element in source order (the HIR lists are sparse; constant zeros are
//!   covered by the `memzero`). When the list names every element, the `memzero` is omitted;
//! * operands, indices and arguments are evaluated left to right; an assignment evaluates the
//!   target's indices before the value.
//!
//! Control-flow shape: `if` gets then/else/join blocks, `while` a header (the condition), a
//! body and an exit; blocks are created only when some edge reaches them, so constant
//! conditions (`while (1)`) leave no empty blocks behind. Code after `return`, `break` or
//! `continue` is still lowered, into fresh blocks without predecessors that
//! `unreachable-blocks` deletes. Blocks are laid out in the order the source mentions them.
//! Falling off the end returns 0 from `main`, returns from a `void` function and is
//! `unreachable` in any other function.
//!
//! Assumes a program satisfying [`hir_check::check`](crate::frontend::hir_check::check) (as
//! semantic analysis produces); the result passes the IR verifier.
//!
//! Recursion: expressions are lowered by a recursive walk, and HIR expression trees can be
//! thousands of levels deep (the parser allows a height of
//! [`MAX_EXPR_HEIGHT`](crate::frontend::parser::MAX_EXPR_HEIGHT)), so [`lower_program`] runs
//! on a thread of its own with a [`LOWERING_STACK_SIZE`] stack.

mod builder;
mod cond;
mod expr;
mod place;
mod stmt;

#[cfg(test)]
mod tests;

use cranelift_entity::EntityRef;
use rustc_hash::FxHashMap;

use crate::frontend::hir;
use crate::ir::{Const, FuncRef, GlobalData, Module, StrId, Type};

use builder::FnBuilder;

/// Stack of the lowering thread: enough for the deepest expression the parser accepts, with a
/// wide margin (only the pages actually touched are ever allocated).
pub const LOWERING_STACK_SIZE: usize = 256 << 20;

/// Lowers a whole program. See the module documentation.
pub fn lower_program(program: &hir::Program) -> Module {
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("sysyc-lower".into())
            .stack_size(LOWERING_STACK_SIZE)
            .spawn_scoped(scope, || lower_on_this_thread(program));
        match spawned {
            Ok(handle) => match handle.join() {
                Ok(module) => module,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            // No thread to be had: lower on the caller's stack, which suffices for all but
            // pathologically deep expressions.
            Err(_) => lower_on_this_thread(program),
        }
    })
}

/// [`lower_program`] without the dedicated thread: the caller's stack must be deep enough for
/// the program's expressions (about 1 KiB per level of nesting suffices).
pub fn lower_on_this_thread(program: &hir::Program) -> Module {
    let mut module = Module::new();
    for g in &program.globals {
        module.globals.push(lower_global(g));
    }
    let mut strings = StringTable::default();
    for (i, f) in program.funcs.iter().enumerate() {
        let is_main = i == program.main.index();
        let func = FnBuilder::lower(program, f, is_main, &mut strings);
        let r = module.add_function(func);
        debug_assert_eq!(r, func_ref(hir::FuncId(i as u32)), "functions are added in HIR order");
    }
    for bytes in strings.in_order {
        module.strings.push(bytes);
    }
    module
}

/// The IR function of a HIR function: functions are added to the module in HIR order.
fn func_ref(f: hir::FuncId) -> FuncRef {
    FuncRef::new(f.index())
}

fn lower_global(g: &hir::Global) -> GlobalData {
    let words = g.ty.element_count().map_or(1, |n| u32::try_from(n).unwrap_or(u32::MAX));
    let init = g
        .init
        .elems
        .iter()
        .map(|&(i, v)| (i, lower_const(v)))
        // Zero is the default of every element; `-0.0` is not zero (its bits are not).
        .filter(|&(_, c)| !is_zero_bits(c))
        .collect();
    GlobalData { name: g.name.clone(), elem: Type::from(g.ty.elem()), words, init, is_const: g.is_const }
}

fn lower_const(v: hir::ConstVal) -> Const {
    match v {
        hir::ConstVal::Int(i) => Const::Int(i),
        hir::ConstVal::Float(f) => Const::float(f),
    }
}

/// True for the constants whose memory image is all zero bits.
fn is_zero_bits(c: Const) -> bool {
    matches!(c, Const::Int(0) | Const::Float(0) | Const::Bool(false))
}

/// The module's `putf` format strings, interned in order of first use.
#[derive(Default)]
struct StringTable {
    ids: FxHashMap<Vec<u8>, StrId>,
    in_order: Vec<Vec<u8>>,
}

impl StringTable {
    fn intern(&mut self, bytes: &[u8]) -> StrId {
        if let Some(&id) = self.ids.get(bytes) {
            return id;
        }
        let id = StrId::new(self.in_order.len());
        self.ids.insert(bytes.to_vec(), id);
        self.in_order.push(bytes.to_vec());
        id
    }
}
