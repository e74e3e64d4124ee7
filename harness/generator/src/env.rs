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
//!
//! What lives and dies with the scopes is kept here too: the pools of remembered
//! expressions (an entry goes with the scope it was made in) and the counters of fresh
//! names; and the questions asked of the scopes (what is readable, assignable, a counter,
//! whether an expression varies or is stable under calls).

use super::build;
use super::prelude::is_reserved;
use super::value::{GExpr, Ty};
use sysyc::frontend::ast::{Expr, ExprKind};

pub(super) type VarId = usize;

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
    /// For a callee of `effects.rs`: the one memory effect a call has.
    pub effect: Option<Effect>,
}

/// The memory a callee of `effects.rs` touches with each call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Touch {
    /// Nothing outside its frame (its result is a function of its arguments).
    Nothing,
    /// A global `int` scalar, by name.
    Global(VarId),
    /// The `int` array passed as parameter `index` (any array the caller passes).
    Param(usize),
    /// A rank-1 global `int` array, by name.
    GlobalArray(VarId),
}

/// A callee of `effects.rs`: what it touches, whether it writes it, and how it escapes
/// inlining (recursion without a tail call, or a body over the inliner's size budget).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Effect {
    pub touch: Touch,
    pub writes: bool,
    pub big: bool,
}

/// A name an entry mentions, the variable it meant, and that variable's range then.
type PoolRef = (String, VarId, Option<(i64, i64)>);

/// A pure expression kept for re-use, valid while every name in it still resolves to the
/// variable it resolved to when the expression was made, and every such variable still has
/// the static range it had (index guards may rest on a loop counter's range, which ends with
/// its loop).
#[derive(Clone, Debug)]
struct PoolEntry {
    g: GExpr,
    stable: bool,
    refs: Vec<PoolRef>,
    scope_depth: usize,
}

/// Variables and scopes, with what lives and dies with the scopes: the remembered
/// expressions (one pool of values, one of conditions), and the counters of fresh names.
pub(super) struct Env {
    pub vars: Vec<Var>,
    /// Scope 0 holds the globals.
    scopes: Vec<Vec<VarId>>,
    pub funcs: Vec<Func>,
    /// Remembered values (`[0]`) and conditions (`[1]`), at most [`POOL_SIZE`] each.
    pools: [Vec<PoolEntry>; 2],
    next_global: u32,
    /// Per function.
    next_local: u32,
}

/// Remembered expressions per pool: the oldest goes first.
const POOL_SIZE: usize = 24;

impl Env {
    pub(super) fn new() -> Env {
        Env { vars: Vec::new(), scopes: vec![Vec::new()], funcs: Vec::new(), pools: Default::default(), next_global: 0, next_local: 0 }
    }

    /// A function starts: its locals are numbered from 0, and nothing remembered in the one
    /// before it is re-used.
    pub(super) fn enter_function(&mut self) {
        self.next_local = 0;
        self.pools = Default::default();
    }

    pub(super) fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    /// Ends the innermost scope with the expressions remembered in it.
    pub(super) fn pop_scope(&mut self) {
        if self.scopes.len() > 1 {
            self.scopes.pop();
        }
        let depth = self.depth();
        for pool in &mut self.pools {
            pool.retain(|p| p.scope_depth <= depth);
        }
    }

    /// A fresh global name with the given prefix.
    pub(super) fn global_name(&mut self, prefix: &str) -> String {
        self.next_global += 1;
        format!("{prefix}{}", self.next_global - 1)
    }

    /// A fresh local name with the given prefix (unique within the function).
    pub(super) fn local_name(&mut self, prefix: &str) -> String {
        self.next_local += 1;
        format!("{prefix}{}", self.next_local - 1)
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
    pub(super) fn read(&self, id: VarId) -> Expr {
        build::var(&self.vars[id].name)
    }

    /// Visible scalars of type `ty` readable here (`stable`: only those no call can change).
    pub(super) fn readable_scalars(&self, ty: Ty, stable: bool) -> Vec<VarId> {
        self.readable(ty, stable, Var::is_scalar)
    }

    /// Visible arrays of element type `ty` whose elements are readable here.
    pub(super) fn readable_arrays(&self, ty: Ty, stable: bool) -> Vec<VarId> {
        self.readable(ty, stable, Var::is_array)
    }

    fn readable(&self, ty: Ty, stable: bool, shape: fn(&Var) -> bool) -> Vec<VarId> {
        let ok = |v: &Var| shape(v) && v.ty == ty && v.readable() && (!stable || v.call_stable());
        self.visible().into_iter().filter(|&id| ok(&self.vars[id])).collect()
    }

    /// Counters and other locked variables with a range of more than one value that can be
    /// tested here (loop counters, trip-count and length parameters).
    pub(super) fn counters(&self, stable: bool) -> Vec<VarId> {
        let ranged = |v: &Var| v.locks > 0 && v.range.is_some_and(|(lo, hi)| lo < hi);
        self.readable_scalars(Ty::Int, stable).into_iter().filter(|&id| ranged(&self.vars[id])).collect()
    }

    /// Variables an assignment may target here; a `pure` function assigns only its own.
    pub(super) fn assignable(&self, pure: bool) -> Vec<VarId> {
        let ok = |v: &Var| {
            let foreign = v.storage == Storage::Global || (v.storage == Storage::Param && v.is_array());
            !v.is_const && !v.read_only && v.locks == 0 && v.init && !(pure && foreign)
        };
        self.visible().into_iter().filter(|&id| ok(&self.vars[id])).collect()
    }

    /// Whether `e`'s value can differ between executions: it reads a variable that is not a
    /// constant (or a read-only global), or calls a function with side effects.
    pub(super) fn is_varying(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::IntLit(..) | ExprKind::FloatLit(_) | ExprKind::StrLit(_) => false,
            ExprKind::LVal(lv) => {
                self.lookup(&lv.name.name).is_none_or(|id| {
                    let v = &self.vars[id];
                    !(v.is_const || v.read_only)
                }) || lv.indices.iter().any(|i| self.is_varying(i))
            }
            ExprKind::Call { name, args } => self.func(&name.name).is_some_and(|f| !f.pure) || args.iter().any(|a| self.is_varying(a)),
            ExprKind::Unary(_, a) => self.is_varying(a),
            ExprKind::Binary(_, a, b) => self.is_varying(a) || self.is_varying(b),
        }
    }

    /// Whether an expression reads only call-stable variables and calls nothing.
    pub(super) fn is_call_stable(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::IntLit(..) | ExprKind::FloatLit(_) | ExprKind::StrLit(_) => true,
            ExprKind::LVal(lv) => {
                self.lookup(&lv.name.name).is_some_and(|id| self.vars[id].call_stable()) && lv.indices.iter().all(|i| self.is_call_stable(i))
            }
            // The helpers read no globals; user functions might.
            ExprKind::Call { name, args } => is_reserved(&name.name) && args.iter().all(|a| self.is_call_stable(a)),
            ExprKind::Unary(_, a) => self.is_call_stable(a),
            ExprKind::Binary(_, a, b) => self.is_call_stable(a) && self.is_call_stable(b),
        }
    }

    /// Remembers a pure expression for later re-use (in the pool of conditions if `cond`).
    pub(super) fn remember(&mut self, g: &GExpr, stable: bool, cond: bool, max_expr_depth: u32) {
        // Re-used expressions nest inside new ones; a height cap keeps trees from growing
        // from statement to statement.
        if g.impure || build::height(&g.e) > 2 * max_expr_depth as usize + 2 {
            return;
        }
        let mut names = Vec::new();
        build::collect_names(&g.e, &mut names);
        let mut refs = Vec::with_capacity(names.len());
        for n in names {
            if let Some(id) = self.lookup(&n) {
                refs.push((n, id, self.vars[id].range));
            } else if self.func(&n).is_none() && !is_reserved(&n) {
                // A self-call of the recursive function being generated: duplicating it would
                // break the bound on its call sites.
                return;
            }
        }
        let entry = PoolEntry { g: g.clone(), stable, refs, scope_depth: self.depth() };
        let pool = &mut self.pools[usize::from(cond)];
        if pool.len() >= POOL_SIZE {
            pool.remove(0);
        }
        pool.push(entry);
    }

    /// The remembered expressions of type `ty` still valid here that `keep` accepts (only
    /// stable ones if `stable`), oldest first.
    pub(super) fn reusable(&self, ty: Ty, stable: bool, cond: bool, keep: impl Fn(&GExpr) -> bool) -> Vec<&GExpr> {
        let valid = |(n, id, range): &PoolRef| {
            let v = &self.vars[*id];
            self.lookup(n) == Some(*id) && v.readable() && v.range == *range
        };
        let usable = |p: &&PoolEntry| p.g.ty == ty && (!stable || p.stable) && keep(&p.g) && p.refs.iter().all(valid);
        self.pools[usize::from(cond)].iter().filter(usable).map(|p| &p.g).collect()
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
