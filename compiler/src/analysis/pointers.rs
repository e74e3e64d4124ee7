//! Pointer provenance inside one function: for every pointer value, the objects it may point
//! into (its *address roots*) and, when it has exactly one root, its byte offset from that
//! root as a linear expression over SSA values.
//!
//! # Why this is exact enough for SysY
//! Pointers in the IR are born in only three ways — an `alloca`, a global's address
//! ([`ValueDef::Global`]) or a pointer parameter — and are derived only by `gep` (and by `phi`
//! and `select`, which optimisations may create). Loads and stores move only `i32`/`f32`
//! words and calls return no pointers, so a pointer is never stored to memory and read back:
//! following the SSA def chains finds every object a pointer can address. A pointer that
//! comes from anything else (`undef`, a malformed instruction) gets [`Roots::Unknown`].
//!
//! # Offsets
//! A `gep base, index * scale` adds `index·scale` bytes in wrapping 32-bit arithmetic (the
//! interpreter and the target both wrap). Indices are decomposed into [`LinearExpr`]s —
//! `c + Σ kᵢ·vᵢ` with wrapping `i32` coefficients — through `add`, `sub` and `mul` by a
//! constant. Because every step is a ring homomorphism modulo 2³², the decomposition is exact
//! for all inputs, overflow included: two offsets whose difference is the constant `d` are
//! `d` bytes apart, always. A value that is not decomposed (a load, a phi, `srem`, ...) is
//! an *atom*: it appears as its own term. A pointer defined by a `phi` or `select` with one
//! root gets the pointer itself as its offset atom (meaning "the byte offset of this pointer
//! from its root"), so `gep %p, 1 * 4` and `gep %p, 2 * 4` still differ by 4.
//!
//! An offset expression relates values *as they are at one moment*: `%i` in two different
//! loop iterations is two different numbers. Whether two expressions may be compared term by
//! term is the alias analysis's concern ([`super::alias::Context`]).
//!
//! # Computation
//! Roots: a monotone fixpoint (sets only grow) over all instructions — reachable blocks in
//! reverse post-order first, then unreachable blocks — so phis on back edges and cycles in
//! unreachable code are handled. Sets larger than [`MAX_ROOTS`] become `Unknown`. Offsets
//! and integer decompositions: one sweep in reverse post-order (definitions dominate uses, so
//! operands are done first); an expression that would exceed [`MAX_TERMS`] terms is replaced
//! by an atom (the value itself), which is always exact, just less informative.
//!
//! Values created after [`AddressMap::compute`] are analysed on demand from their definitions
//! (not cached); facts about older values stay true as long as their defining instruction
//! keeps computing the same thing (replacing operands by equal values is fine; rewriting a
//! `gep` with `replace_inst` to compute another address is not — recompute then).

use std::borrow::Cow;

use cranelift_entity::{EntityRef, SecondaryMap};
use smallvec::SmallVec;

use super::cfg::ControlFlowGraph;
use crate::ir::{Const, Function, GlobalRef, Inst, Opcode, Type, Value, ValueDef};

/// Root sets larger than this become [`Roots::Unknown`].
pub const MAX_ROOTS: usize = 8;
/// Linear expressions with more terms than this are replaced by an atom.
pub const MAX_TERMS: usize = 4;
/// Depth limit of the on-demand analysis of values created after [`AddressMap::compute`].
const MAX_FRESH_DEPTH: u32 = 64;

/// An object a pointer can address, seen from inside the function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Root {
    /// The stack slot of this `alloca` in the current activation.
    Alloca(Inst),
    /// A global variable.
    Global(GlobalRef),
    /// Whatever array the caller passed as parameter `n` (any object outside this activation:
    /// a global or a caller's stack slot; two parameters may be the same array).
    Param(u32),
}

/// The roots a pointer may be derived from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Roots {
    /// One of these (sorted, distinct). Empty only for pointers that never hold an address
    /// (e.g. computed only in unreachable code).
    Known(SmallVec<[Root; 2]>),
    /// Anything.
    Unknown,
}

impl Roots {
    fn one(r: Root) -> Roots {
        Roots::Known(SmallVec::from_slice(&[r]))
    }

    /// The single root, if there is exactly one.
    pub fn single(&self) -> Option<Root> {
        match self {
            Roots::Known(v) if v.len() == 1 => Some(v[0]),
            _ => None,
        }
    }

    /// The roots, or `None` for [`Roots::Unknown`].
    pub fn known(&self) -> Option<&[Root]> {
        match self {
            Roots::Known(v) => Some(v),
            Roots::Unknown => None,
        }
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self, Roots::Unknown)
    }

    /// Adds `other`'s roots; returns whether anything changed.
    fn union_with(&mut self, other: &Roots) -> bool {
        let Roots::Known(mine) = self else { return false };
        let Roots::Known(theirs) = other else {
            *self = Roots::Unknown;
            return true;
        };
        let mut changed = false;
        for &r in theirs {
            if let Err(pos) = mine.binary_search(&r) {
                mine.insert(pos, r);
                changed = true;
            }
        }
        if mine.len() > MAX_ROOTS {
            *self = Roots::Unknown;
        }
        changed
    }
}

/// `constant + Σ coefficient·value` in wrapping 32-bit arithmetic. Terms are sorted by value,
/// distinct, with nonzero coefficients, so equal expressions are structurally equal.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct LinearExpr {
    constant: i32,
    terms: SmallVec<[(Value, i32); 2]>,
}

impl LinearExpr {
    pub fn constant(c: i32) -> LinearExpr {
        LinearExpr { constant: c, terms: SmallVec::new() }
    }

    /// The expression `1·v`.
    pub fn atom(v: Value) -> LinearExpr {
        LinearExpr { constant: 0, terms: SmallVec::from_slice(&[(v, 1)]) }
    }

    pub fn constant_part(&self) -> i32 {
        self.constant
    }

    /// `(value, coefficient)` pairs, sorted by value.
    pub fn terms(&self) -> &[(Value, i32)] {
        &self.terms
    }

    pub fn as_constant(&self) -> Option<i32> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// `self + k·other` (no term limit).
    pub fn plus_scaled(&self, other: &LinearExpr, k: i32) -> LinearExpr {
        let mut terms: SmallVec<[(Value, i32); 2]> = SmallVec::new();
        let (a, b) = (&self.terms, &other.terms);
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            let (v, c) = if j == b.len() || (i < a.len() && a[i].0 < b[j].0) {
                i += 1;
                a[i - 1]
            } else if i == a.len() || b[j].0 < a[i].0 {
                j += 1;
                (b[j - 1].0, b[j - 1].1.wrapping_mul(k))
            } else {
                i += 1;
                j += 1;
                (a[i - 1].0, a[i - 1].1.wrapping_add(b[j - 1].1.wrapping_mul(k)))
            };
            if c != 0 {
                terms.push((v, c));
            }
        }
        LinearExpr { constant: self.constant.wrapping_add(other.constant.wrapping_mul(k)), terms }
    }

    /// `k·self`.
    pub fn scaled(&self, k: i32) -> LinearExpr {
        LinearExpr::constant(0).plus_scaled(self, k)
    }

    /// The value of the expression when every term `v` has the value `value_of(v)`.
    pub fn eval(&self, mut value_of: impl FnMut(Value) -> i32) -> i32 {
        self.terms.iter().fold(self.constant, |acc, &(v, c)| acc.wrapping_add(c.wrapping_mul(value_of(v))))
    }

    fn within_limit(self) -> Option<LinearExpr> {
        (self.terms.len() <= MAX_TERMS).then_some(self)
    }
}

/// What is known about one pointer value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PointerInfo {
    pub roots: Roots,
    /// Byte offset from the root, present exactly when there is a single root.
    pub offset: Option<LinearExpr>,
}

impl PointerInfo {
    fn unknown() -> PointerInfo {
        PointerInfo { roots: Roots::Unknown, offset: None }
    }

    fn at_root(r: Root) -> PointerInfo {
        PointerInfo { roots: Roots::one(r), offset: Some(LinearExpr::constant(0)) }
    }

    /// The single root and the offset from it, when known.
    pub fn single(&self) -> Option<(Root, &LinearExpr)> {
        Some((self.roots.single()?, self.offset.as_ref()?))
    }

    /// `words` words from here lie inside one global or one stack slot of `func`, at a
    /// constant offset: in bounds whatever the function's arguments. `global_words` gives a
    /// global's size in words.
    pub fn constant_in_bounds(&self, func: &Function, global_words: impl Fn(GlobalRef) -> u32, words: u32) -> bool {
        let Some((root, off)) = self.single() else { return false };
        let Some(off) = off.as_constant() else { return false };
        let size = match root {
            Root::Global(g) => global_words(g) as i64,
            Root::Alloca(a) => match func.opcode(a) {
                Opcode::Alloca { count, .. } => count as i64,
                _ => return false,
            },
            Root::Param(_) => return false,
        };
        let off = off as i64;
        off >= 0 && off % 4 == 0 && off / 4 + words as i64 <= size
    }
}

/// Pointer provenance of every pointer value of one function (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct AddressMap {
    ptrs: SecondaryMap<Value, Option<PointerInfo>>,
    /// Decompositions of `i32` values that are not plain atoms.
    ints: SecondaryMap<Value, Option<LinearExpr>>,
}

impl AddressMap {
    pub fn compute(func: &Function) -> AddressMap {
        AddressMap::compute_with_cfg(func, &ControlFlowGraph::compute(func))
    }

    /// [`AddressMap::compute`] for a caller that already holds `func`'s current CFG (and
    /// would otherwise have it built twice).
    pub fn compute_with_cfg(func: &Function, cfg: &ControlFlowGraph) -> AddressMap {
        let mut order: Vec<Inst> = Vec::with_capacity(func.num_insts());
        for &b in cfg.rpo() {
            order.extend(func.block_insts(b));
        }
        let reachable_count = order.len();
        for &b in func.layout() {
            if !cfg.is_reachable(b) {
                order.extend(func.block_insts(b));
            }
        }
        let mut map = AddressMap::default();
        // Sized once for every value: growing them index by index as results are recorded
        // reallocated and moved the (large) entries repeatedly.
        map.ptrs.resize(func.num_values());
        map.ints.resize(func.num_values());

        // Roots: start every pointer-producing instruction at the empty set, grow to a fixpoint.
        for &inst in &order {
            if let Some(v) = func.result(inst)
                && func.value_type(v) == Type::Ptr
            {
                map.ptrs[v] = Some(PointerInfo { roots: Roots::Known(SmallVec::new()), offset: None });
            }
        }
        loop {
            let mut changed = false;
            for &inst in &order {
                let Some(v) = func.result(inst) else { continue };
                if func.value_type(v) != Type::Ptr {
                    continue;
                }
                let args = func.args(inst);
                let new = match func.opcode(inst) {
                    Opcode::Alloca { .. } => Roots::one(Root::Alloca(inst)),
                    Opcode::Gep { .. } if args.len() == 2 => map.roots_now(func, args[0]),
                    Opcode::Phi => {
                        let mut r = Roots::Known(SmallVec::new());
                        for &a in args {
                            r.union_with(&map.roots_now(func, a));
                        }
                        r
                    }
                    Opcode::Select if args.len() == 3 => {
                        let mut r = map.roots_now(func, args[1]);
                        r.union_with(&map.roots_now(func, args[2]));
                        r
                    }
                    _ => Roots::Unknown,
                };
                let slot = map.ptrs[v].as_mut().expect("initialised above");
                if slot.roots.union_with(&new) {
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }

        // Offsets and integer decompositions, one sweep in reverse post-order.
        for (pos, &inst) in order.iter().enumerate() {
            let Some(v) = func.result(inst) else { continue };
            let args = func.args(inst);
            match func.value_type(v) {
                Type::I32 if pos < reachable_count && args.len() == 2 => {
                    let (a, b) = (map.linear_now(func, args[0]), map.linear_now(func, args[1]));
                    let expr = match func.opcode(inst) {
                        Opcode::Add => a.plus_scaled(&b, 1).within_limit(),
                        Opcode::Sub => a.plus_scaled(&b, -1).within_limit(),
                        Opcode::Mul => match (a.as_constant(), b.as_constant()) {
                            (_, Some(k)) => Some(a.scaled(k)),
                            (Some(k), _) => Some(b.scaled(k)),
                            _ => None,
                        },
                        _ => None,
                    };
                    map.ints[v] = expr;
                }
                Type::Ptr => {
                    let single = map.ptrs[v].as_ref().is_some_and(|p| p.roots.single().is_some());
                    if !single {
                        continue;
                    }
                    let offset = match func.opcode(inst) {
                        Opcode::Alloca { .. } => LinearExpr::constant(0),
                        Opcode::Gep { scale } if pos < reachable_count => map
                            .gep_offset(func, args[0], args[1], scale)
                            .unwrap_or_else(|| LinearExpr::atom(v)),
                        _ => LinearExpr::atom(v),
                    };
                    if let Some(p) = map.ptrs[v].as_mut() {
                        p.offset = Some(offset);
                    }
                }
                _ => {}
            }
        }
        map
    }

    /// Roots of `v` as currently recorded (during the fixpoint).
    fn roots_now(&self, func: &Function, v: Value) -> Roots {
        match func.value_def(v) {
            ValueDef::Param(i) => Roots::one(Root::Param(i)),
            ValueDef::Global(g) => Roots::one(Root::Global(g)),
            ValueDef::Inst(_) => match &self.ptrs[v] {
                Some(p) => p.roots.clone(),
                None => Roots::Unknown,
            },
            ValueDef::Const(_) | ValueDef::Undef => Roots::Unknown,
        }
    }

    /// The recorded decomposition of an `i32` value (an atom if none).
    fn linear_now(&self, func: &Function, v: Value) -> LinearExpr {
        match func.value_def(v) {
            ValueDef::Const(Const::Int(c)) => LinearExpr::constant(c),
            _ => self.ints[v].clone().unwrap_or_else(|| LinearExpr::atom(v)),
        }
    }

    /// `offset(base) + scale·index`, if the base has a recorded offset and the result fits.
    fn gep_offset(&self, func: &Function, base: Value, index: Value, scale: u32) -> Option<LinearExpr> {
        let base_off = match func.value_def(base) {
            ValueDef::Param(_) | ValueDef::Global(_) => LinearExpr::constant(0),
            ValueDef::Inst(_) => self.ptrs[base].as_ref()?.offset.clone()?,
            _ => return None,
        };
        base_off.plus_scaled(&self.linear_now(func, index), scale as i32).within_limit()
    }

    /// What is known about pointer `v` (see the module documentation for values created
    /// after [`AddressMap::compute`]).
    pub fn pointer<'s>(&'s self, func: &Function, v: Value) -> Cow<'s, PointerInfo> {
        match (func.value_def(v), self.ptrs.get(v)) {
            (ValueDef::Inst(_), Some(Some(p))) => Cow::Borrowed(p),
            _ => Cow::Owned(self.fresh_pointer(func, v, 0)),
        }
    }

    fn fresh_pointer(&self, func: &Function, v: Value, depth: u32) -> PointerInfo {
        if v.index() >= func.num_values() {
            return PointerInfo::unknown();
        }
        match func.value_def(v) {
            ValueDef::Param(i) => PointerInfo::at_root(Root::Param(i)),
            ValueDef::Global(g) => PointerInfo::at_root(Root::Global(g)),
            ValueDef::Const(_) | ValueDef::Undef => PointerInfo::unknown(),
            ValueDef::Inst(inst) => {
                if let Some(Some(p)) = self.ptrs.get(v) {
                    return p.clone();
                }
                if depth >= MAX_FRESH_DEPTH || func.value_type(v) != Type::Ptr {
                    return PointerInfo::unknown();
                }
                let args = func.args(inst);
                match func.opcode(inst) {
                    Opcode::Alloca { .. } => PointerInfo::at_root(Root::Alloca(inst)),
                    Opcode::Gep { scale } if args.len() == 2 => {
                        let base = self.fresh_pointer(func, args[0], depth + 1);
                        let offset = base.offset.as_ref().map(|o| {
                            o.plus_scaled(&self.linear(func, args[1]), scale as i32)
                                .within_limit()
                                .unwrap_or_else(|| LinearExpr::atom(v))
                        });
                        PointerInfo { roots: base.roots, offset }
                    }
                    _ => PointerInfo::unknown(),
                }
            }
        }
    }

    /// The decomposition of an `i32` value (`1·v` when it is not an `add`/`sub`/`mul` by a
    /// constant that was analysed).
    pub fn linear(&self, func: &Function, v: Value) -> LinearExpr {
        if v.index() >= func.num_values() {
            return LinearExpr::atom(v);
        }
        self.linear_now(func, v)
    }
}

/// The variable part and constant term of a `gep` index: `(x, c)` when `index` is
/// `x + c`, `c + x` or `x - c` with `x` not a constant.
pub fn split_index(func: &Function, index: Value) -> Option<(Value, i32)> {
    let i = func.def_inst(index)?;
    let args = func.args(i);
    if func.value_type(index) != Type::I32 || args.len() != 2 {
        return None;
    }
    let (x, c) = match func.opcode(i) {
        Opcode::Add => match (func.as_int_const(args[0]), func.as_int_const(args[1])) {
            (None, Some(c)) => (args[0], c),
            (Some(c), None) => (args[1], c),
            _ => return None,
        },
        Opcode::Sub => (args[0], func.as_int_const(args[1])?.wrapping_neg()),
        _ => return None,
    };
    (func.as_const(x).is_none()).then_some((x, c))
}
