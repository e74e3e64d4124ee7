//! A module: functions, global variables and the string literals of `putf`.

use cranelift_entity::PrimaryMap;

use super::entities::{FuncRef, GlobalRef, StrId};
use super::function::{Const, Function};
use super::types::Type;

/// A global variable: `words` consecutive elements of type `elem` (`i32` or `f32`); a scalar
/// has `words == 1`.
#[derive(Clone, Debug, PartialEq)]
pub struct GlobalData {
    pub name: String,
    pub elem: Type,
    pub words: u32,
    /// Sparse initial contents: `(element index, constant)` sorted by index; all other
    /// elements are zero. Kept compact so a zero-filled megabyte array costs nothing.
    pub init: Vec<(u32, Const)>,
    /// Declared `const` in the source (never written by a correct program).
    pub is_const: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Module {
    functions: PrimaryMap<FuncRef, Option<Function>>,
    pub globals: PrimaryMap<GlobalRef, GlobalData>,
    pub strings: PrimaryMap<StrId, Vec<u8>>,
}

impl Module {
    pub fn new() -> Module {
        Module::default()
    }

    pub fn add_function(&mut self, f: Function) -> FuncRef {
        self.functions.push(Some(f))
    }

    /// Removes a function (its `FuncRef` is never reused). Calls to it must be gone.
    pub fn remove_function(&mut self, f: FuncRef) {
        self.functions[f] = None;
    }

    pub fn func(&self, f: FuncRef) -> &Function {
        self.functions[f].as_ref().expect("use of a removed function")
    }

    pub fn func_mut(&mut self, f: FuncRef) -> &mut Function {
        self.functions[f].as_mut().expect("use of a removed function")
    }

    pub fn is_live(&self, f: FuncRef) -> bool {
        self.functions.get(f).is_some_and(Option::is_some)
    }

    /// Live functions in definition order.
    pub fn func_refs(&self) -> Vec<FuncRef> {
        self.functions.iter().filter(|(_, f)| f.is_some()).map(|(k, _)| k).collect()
    }

    pub fn funcs(&self) -> impl Iterator<Item = (FuncRef, &Function)> {
        self.functions.iter().filter_map(|(k, f)| f.as_ref().map(|f| (k, f)))
    }

    pub fn funcs_mut(&mut self) -> impl Iterator<Item = (FuncRef, &mut Function)> {
        self.functions.iter_mut().filter_map(|(k, f)| f.as_mut().map(|f| (k, f)))
    }

    pub fn func_by_name(&self, name: &str) -> Option<FuncRef> {
        self.funcs().find(|(_, f)| f.name == name).map(|(k, _)| k)
    }

    pub fn global_by_name(&self, name: &str) -> Option<GlobalRef> {
        self.globals.iter().find(|(_, g)| g.name == name).map(|(k, _)| k)
    }

    /// Number of function slots ever allocated (for sizing side tables).
    pub fn num_func_slots(&self) -> usize {
        self.functions.len()
    }

    /// Temporarily takes a function out of the module so a pass can mutate it while reading
    /// the rest of the module (e.g. the callee while inlining). Must be given back with
    /// [`Module::put_back`].
    pub fn take_function(&mut self, f: FuncRef) -> Function {
        self.functions[f].take().expect("take_function of a removed function")
    }

    pub fn put_back(&mut self, f: FuncRef, func: Function) {
        debug_assert!(self.functions[f].is_none());
        self.functions[f] = Some(func);
    }
}
