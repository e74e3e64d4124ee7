//! What the generator knows about the program it is writing: variables, functions and
//! scopes, with the facts that make the output UB-free.
//!
//! Every variable ever declared gets a [`VarId`] in an arena; scopes are stacks of ids and
//! names resolve like SysY's (innermost declaration wins, so shadowing is modelled exactly).
//! Beyond its type a variable carries:
//! * `init` — whether it has a value on every path yet (a late-initialised local is not
//!   readable until its initialising statement is complete);
//! * `locks` — while non-zero nothing may assign it: loop counters, recursion depth and
//!   length parameters, and "frozen" loop-invariant variables are locked;
//! * `range` — a static range of its value, valid while it is locked (loop counters), or
//!   forever (constants, read-only globals, length parameters); index and divisor guards are
//!   dropped where a range proves them unnecessary;
//! * `dead` — an array that is only ever written (dead-array elimination bait), never read.

use super::build;
use sysyc::frontend::ast::BType;

pub(super) type VarId = usize;

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Storage {
    Global,
    Local,
    Param,
}

#[derive(Clone, Debug)]
pub(super) struct Var {
    pub name: String,
    pub ty: Ty,
    /// Empty for a scalar. For an array every dimension; for an array parameter the first
    /// entry is the length every caller guarantees.
    pub dims: Vec<u32>,
    pub storage: Storage,
    pub is_const: bool,
    /// Never assigned after its declaration (read-only global, const).
    pub read_only: bool,
    pub init: bool,
    pub locks: u32,
    /// Inclusive static range of an `int` scalar's value (see the module doc).
    pub range: Option<(i64, i64)>,
    pub dead: bool,
}

impl Var {
    pub(super) fn is_array(&self) -> bool {
        !self.dims.is_empty()
    }

    pub(super) fn is_scalar(&self) -> bool {
        self.dims.is_empty()
    }

    /// Its value cannot change during a call made from the current function: a local or
    /// parameter scalar (not addressable), a constant or a read-only global.
    pub(super) fn call_stable(&self) -> bool {
        self.is_const || self.read_only || (self.is_scalar() && self.storage != Storage::Global)
    }

    pub(super) fn readable(&self) -> bool {
        self.init && !self.dead
    }
}

/// How a function parameter is used.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum ParamKind {
    Scalar,
    /// An array `name[][inner...]`; every caller passes one whose first dimension is at least
    /// `min_len`.
    Array {
        inner: Vec<u32>,
        min_len: u32,
    },
    /// An `int` in `0..=min_len` of the array parameter with the given index.
    Length {
        array: usize,
    },
    /// The recursion depth of a recursive function (`int`, at most the function's bound).
    Depth,
    /// A trip count: an `int` in `0..=max` that no statement assigns (loops of the body use
    /// it as their limit; callers vary it, so one loop runs 0, 1, 2, ... times).
    Count {
        max: u32,
    },
}

#[derive(Clone, Debug)]
pub(super) struct Param {
    pub name: String,
    pub ty: Ty,
    pub kind: ParamKind,
}

#[derive(Clone, Debug)]
pub(super) struct Func {
    pub name: String,
    pub ret: Option<Ty>,
    pub params: Vec<Param>,
    /// No writes to globals or array parameters, no output, calls only pure functions.
    pub pure: bool,
    /// Estimated dynamic work of one call, callees and recursion included.
    pub cost: u64,
    /// For a recursive function: the largest depth argument callers may pass.
    pub max_depth: Option<u32>,
    /// Global arrays its body accesses by name (callers passing them create aliasing).
    pub globals_used: Vec<VarId>,
    /// Largest magnitude of a float result (`FLOAT_VAR_BOUND` for generated functions).
    pub ret_bound: f64,
    /// Global variables its body or its callees may assign (scalars and arrays).
    pub globals_written: Vec<VarId>,
}

/// Variables and scopes.
#[derive(Default)]
pub(super) struct Env {
    pub vars: Vec<Var>,
    /// Scope 0 holds the globals.
    scopes: Vec<Vec<VarId>>,
    pub funcs: Vec<Func>,
}

impl Env {
    pub(super) fn new() -> Env {
        Env {
            vars: Vec::new(),
            scopes: vec![Vec::new()],
            funcs: Vec::new(),
        }
    }

    pub(super) fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    pub(super) fn pop_scope(&mut self) {
        if self.scopes.len() > 1 {
            self.scopes.pop();
        }
    }

    pub(super) fn depth(&self) -> usize {
        self.scopes.len()
    }

    pub(super) fn declare(&mut self, var: Var) -> VarId {
        let id = self.vars.len();
        self.vars.push(var);
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(id);
        }
        id
    }

    /// The variable a name currently resolves to.
    pub(super) fn lookup(&self, name: &str) -> Option<VarId> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .copied()
            .find(|&id| self.vars[id].name == name)
    }

    /// Every variable visible at this point (not shadowed), innermost first.
    pub(super) fn visible(&self) -> Vec<VarId> {
        let mut out: Vec<VarId> = Vec::new();
        for scope in self.scopes.iter().rev() {
            for &id in scope.iter().rev() {
                let name = &self.vars[id].name;
                if !out.iter().any(|&o| self.vars[o].name == *name) {
                    out.push(id);
                }
            }
        }
        out
    }

    /// Variables declared in the innermost scope, in order.
    pub(super) fn current_scope(&self) -> Vec<VarId> {
        self.scopes.last().cloned().unwrap_or_default()
    }

    /// Names declared in the innermost scope (a new declaration must avoid them).
    pub(super) fn in_current_scope(&self, name: &str) -> bool {
        self.scopes
            .last()
            .is_some_and(|s| s.iter().any(|&id| self.vars[id].name == name))
    }

    pub(super) fn func(&self, name: &str) -> Option<&Func> {
        self.funcs.iter().find(|f| f.name == name)
    }

    pub(super) fn lock(&mut self, id: VarId) {
        self.vars[id].locks += 1;
    }

    pub(super) fn unlock(&mut self, id: VarId) {
        let v = &mut self.vars[id];
        v.locks = v.locks.saturating_sub(1);
    }

    /// A literal expression of the variable's name.
    pub(super) fn read(&self, id: VarId) -> sysyc::frontend::ast::Expr {
        build::var(&self.vars[id].name)
    }
}

/// Scalar variable record with everything else defaulted.
pub(super) fn scalar(name: String, ty: Ty, storage: Storage) -> Var {
    Var {
        name,
        ty,
        dims: Vec::new(),
        storage,
        is_const: false,
        read_only: false,
        init: true,
        locks: 0,
        range: None,
        dead: false,
    }
}

/// Array variable record with everything else defaulted.
pub(super) fn array(name: String, ty: Ty, dims: Vec<u32>, storage: Storage) -> Var {
    Var {
        dims,
        ..scalar(name, ty, storage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shadowing_resolves_innermost() {
        let mut env = Env::new();
        let g = env.declare(scalar("x".into(), Ty::Int, Storage::Global));
        let y = env.declare(scalar("y".into(), Ty::Int, Storage::Global));
        env.push_scope();
        let l = env.declare(array("x".into(), Ty::Float, vec![3], Storage::Local));
        assert_eq!(env.lookup("x"), Some(l));
        assert_eq!(env.visible(), vec![l, y]);
        assert!(env.in_current_scope("x") && !env.in_current_scope("y"));
        env.pop_scope();
        assert_eq!(env.lookup("x"), Some(g));
        env.pop_scope();
        assert_eq!(env.depth(), 1, "the global scope stays");
    }
}
