//! `reassociate`: rewrites trees of integer additions, subtractions and multiplications as
//! one minimal sum (or product), with loop-invariant operands grouped together.
//!
//! Why: helpers written with arithmetic identities, once inlined, leave expressions that
//! cancel only as a whole: `_xor(a, b) = a - (a + b) + b - (a + b)` is `-a - b`, and chains
//! of them (`_xor(_xor(x, y), z)`) grow further. `instcombine` looks at one instruction and
//! its operands' definitions at a time and misses cancellations between distant parts of a
//! tree, or through a subexpression used twice within it. And source order hides invariant
//! subexpressions from `licm`: in `dims[i] * dims[k + 1] * dims[j + 1]` inside a loop over
//! `k`, `dims[i] * dims[j + 1]` is invariant but is not an instruction of its own.
//!
//! Trees: a *member* is an `i32` instruction in the root's block (so nothing moves into a
//! loop) of the root's kind — *additive*: `add`, `sub`, `mul` by a constant; *multiplicative*:
//! `mul` of two non-constants — all of whose uses are inside the tree (so it dies when the
//! tree is rewritten; a subexpression used twice by the tree joins once both users have).
//! Roots are visited last-defined first; a member used only by one member of the same kind
//! and block is never a root itself. Everything else feeding the tree is a *leaf*.
//!
//! Forms: an additive tree computes `Σ cᵢ·xᵢ + k` over its leaves, coefficients modulo 2³²;
//! a multiplicative one `Π xᵢ`. Integer `+`, `−` and `×` form a commutative ring modulo 2³²,
//! so rebuilding the form in any order is exact under wrapping. The rebuilt expression
//! orders leaves by the loop depth of their definition (constants and parameters first) and
//! combines them left to right, so leaves invariant in the root's loop form one
//! subexpression that `licm`/`gcm` can hoist; the constant of a sum comes last (where
//! `instcombine` keeps it). A sum of negated terms is built positively and subtracted.
//!
//! When: if the rebuilt form needs fewer instructions than the tree has, or as many but the
//! tree sits in a loop without calls and its invariant leaves are spread over two or more
//! places (which the rewrite gathers into one; a tree already gathered is left alone, so the
//! pass is idempotent). In a loop with calls, a hoisted value would live across every call
//! (a callee-saved register or a spill), which costs more than the operation it saves. Floats are never touched (their arithmetic is not associative), nor are
//! divisions and remainders.
//!
//! Assumes verifier-clean SSA; the CFG is unchanged. Unreachable blocks are skipped.

use std::collections::BTreeMap;

use cranelift_entity::SecondaryMap;
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

use super::{FunctionCx, FunctionPass};
use crate::analysis::{Loop, LoopForest};
use crate::ir::{Block, Function, Inst, InstData, Opcode, Type, Value, ValueDef};

pub struct Reassociate;

/// Largest tree considered (instructions).
const MAX_TREE: usize = 48;

impl FunctionPass for Reassociate {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let cfg = cx.analyses.cfg(func);
        let loops = cx.analyses.loops(func);
        let mut has_call: SecondaryMap<Loop, bool> = SecondaryMap::new();
        for l in loops.loops() {
            has_call[l] = loops
                .blocks(l)
                .iter()
                .any(|&b| func.block_insts(b).any(|i| matches!(func.opcode(i), Opcode::Call(_))));
        }
        let (mut trees, mut saved) = (0u64, 0u64);
        for &b in cfg.rpo() {
            let insts = func.block_insts_vec(b);
            for &root in insts.iter().rev() {
                if func.inst_block(root) != Some(b) {
                    continue;
                }
                let Some(kind) = kind_of(func, root) else { continue };
                if !is_root(func, b, root, kind) {
                    continue;
                }
                // Gathering invariants pays in loops without calls: a hoisted value lives
                // across every call of the loop (a callee-saved register or a spill).
                let root_loop = loops.innermost_loop(b).filter(|&l| !has_call[l]);
                let ranks = Ranks { loops: &loops, root_loop };
                if let Some(s) = rewrite_tree(func, b, root, kind, &ranks) {
                    trees += 1;
                    saved += s as u64;
                }
            }
        }
        cx.count("trees_rewritten", trees);
        cx.count("insts_saved", saved);
        trees > 0
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `add`, `sub`, `mul` by a constant.
    Additive,
    /// `mul` of two non-constants.
    Multiplicative,
}

fn kind_of(func: &Function, inst: Inst) -> Option<Kind> {
    if func.inst(inst).ty != Type::I32 {
        return None;
    }
    match func.opcode(inst) {
        Opcode::Add | Opcode::Sub => Some(Kind::Additive),
        Opcode::Mul if func.args(inst).iter().any(|&a| func.as_int_const(a).is_some()) => Some(Kind::Additive),
        Opcode::Mul => Some(Kind::Multiplicative),
        _ => None,
    }
}

/// Whether `inst` roots a tree: its result is not just an operand of one instruction of the
/// same kind in the same block (that one's tree would include it).
fn is_root(func: &Function, block: Block, inst: Inst, kind: Kind) -> bool {
    let Some(r) = func.result(inst) else { return false };
    match func.users(r) {
        [u] => !(func.inst_block(*u) == Some(block) && kind_of(func, *u) == Some(kind)),
        _ => true,
    }
}

/// Loop depths of leaves, relative to the root's loop.
struct Ranks<'a> {
    loops: &'a LoopForest,
    root_loop: Option<Loop>,
}

impl Ranks<'_> {
    fn def_block(func: &Function, v: Value) -> Option<Block> {
        match func.value_def(v) {
            ValueDef::Inst(i) => func.inst_block(i),
            _ => None,
        }
    }

    /// Loop depth of `v`'s definition (0 outside loops, for parameters and constants).
    fn rank(&self, func: &Function, v: Value) -> u32 {
        Ranks::def_block(func, v).map_or(0, |b| self.loops.loop_depth(b))
    }

    /// `v` does not change while the root's loop runs.
    fn invariant(&self, func: &Function, v: Value) -> bool {
        match (self.root_loop, Ranks::def_block(func, v)) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(l), Some(b)) => !self.loops.contains(l, b),
        }
    }
}

/// Rewrites the tree rooted at `root` if that pays (see the module documentation); returns
/// the number of instructions saved.
fn rewrite_tree(func: &mut Function, block: Block, root: Inst, kind: Kind, ranks: &Ranks<'_>) -> Option<usize> {
    let tree = collect_tree(func, block, root, kind);
    if tree.len() < 2 {
        return None;
    }
    let members: FxHashSet<Inst> = tree.iter().copied().collect();
    let result = func.result(root)?;
    let form = match kind {
        Kind::Additive => Expr::Sum(sum_form(func, &members, result)),
        Kind::Multiplicative => Expr::Product(product_form(func, &members, result)),
    };
    let cost = build(func, root, &form, ranks, false).1;
    let spread = ranks.root_loop.is_some() && invariant_places(func, &members, result, ranks) >= 2;
    if cost > tree.len() || (cost == tree.len() && !spread) {
        return None;
    }
    let new = build(func, root, &form, ranks, true).0;
    func.replace_all_uses(result, new);
    // The tree is dead now: every member's uses were inside it.
    for &i in &tree {
        let r = func.result(i).expect("tree members have results");
        let undef = func.undef(Type::I32);
        func.replace_all_uses(r, undef);
    }
    for &i in &tree {
        func.remove_inst(i);
    }
    Some(tree.len() - cost)
}

/// The root and every member reachable from it through operands.
fn collect_tree(func: &Function, block: Block, root: Inst, kind: Kind) -> Vec<Inst> {
    let mut tree = vec![root];
    let mut in_tree: FxHashSet<Inst> = FxHashSet::default();
    in_tree.insert(root);
    let member_operands = |i: Inst| -> SmallVec<[Inst; 2]> {
        func.args(i)
            .iter()
            .filter_map(|&a| func.def_inst(a))
            .filter(|&d| func.inst_block(d) == Some(block) && kind_of(func, d) == Some(kind))
            .collect()
    };
    let mut pending: Vec<Inst> = member_operands(root).into_vec();
    loop {
        let mut added: Vec<Inst> = Vec::new();
        pending.retain(|&c| {
            if in_tree.contains(&c) {
                return false;
            }
            let r = func.result(c).expect("tree members have results");
            if tree.len() + added.len() < MAX_TREE && func.users(r).iter().all(|u| in_tree.contains(u)) {
                added.push(c);
                false
            } else {
                true
            }
        });
        if added.is_empty() {
            return tree;
        }
        for c in added {
            if in_tree.insert(c) {
                tree.push(c);
                pending.extend(member_operands(c));
            }
        }
    }
}

/// `Σ coeff·leaf + constant`, modulo 2³².
#[derive(Clone, Debug, Default)]
struct Sum {
    terms: BTreeMap<Value, i32>,
    constant: i32,
}

impl Sum {
    fn add_scaled(&mut self, other: &Sum, k: i32) {
        for (&v, &c) in &other.terms {
            let e = self.terms.entry(v).or_insert(0);
            *e = e.wrapping_add(c.wrapping_mul(k));
        }
        self.terms.retain(|_, c| *c != 0);
        self.constant = self.constant.wrapping_add(other.constant.wrapping_mul(k));
    }
}

enum Expr {
    Sum(Sum),
    /// The leaves of a product (with repeats).
    Product(Vec<Value>),
}

fn sum_form(func: &Function, members: &FxHashSet<Inst>, v: Value) -> Sum {
    let mut memo: FxHashMap<Value, Sum> = FxHashMap::default();
    sum_rec(func, members, v, &mut memo)
}

fn sum_rec(func: &Function, members: &FxHashSet<Inst>, v: Value, memo: &mut FxHashMap<Value, Sum>) -> Sum {
    if let Some(f) = memo.get(&v) {
        return f.clone();
    }
    let form = if let Some(k) = func.as_int_const(v) {
        Sum { constant: k, ..Sum::default() }
    } else if let Some(d) = func.def_inst(v).filter(|d| members.contains(d)) {
        let args = func.args(d).to_vec();
        let (a, b) = (sum_rec(func, members, args[0], memo), sum_rec(func, members, args[1], memo));
        let mut f = Sum::default();
        match func.opcode(d) {
            Opcode::Add => {
                f.add_scaled(&a, 1);
                f.add_scaled(&b, 1);
            }
            Opcode::Sub => {
                f.add_scaled(&a, 1);
                f.add_scaled(&b, -1);
            }
            _ => {
                // A multiplication by a constant: one side is a bare constant.
                if b.terms.is_empty() {
                    f.add_scaled(&a, b.constant);
                } else {
                    f.add_scaled(&b, a.constant);
                }
            }
        }
        f
    } else {
        let mut f = Sum::default();
        f.terms.insert(v, 1);
        f
    };
    memo.insert(v, form.clone());
    form
}

fn product_form(func: &Function, members: &FxHashSet<Inst>, v: Value) -> Vec<Value> {
    let mut out = Vec::new();
    let mut stack = vec![v];
    while let Some(x) = stack.pop() {
        match func.def_inst(x).filter(|d| members.contains(d)) {
            Some(d) => stack.extend(func.args(d).iter().copied()),
            None => out.push(x),
        }
    }
    out.sort_unstable();
    out
}

/// How many separate places of the tree hold loop-invariant leaves: maximal invariant
/// subtrees, plus invariant leaves of members that are not invariant themselves.
fn invariant_places(func: &Function, members: &FxHashSet<Inst>, root: Value, ranks: &Ranks<'_>) -> usize {
    fn walk(
        func: &Function,
        members: &FxHashSet<Inst>,
        v: Value,
        ranks: &Ranks<'_>,
        memo: &mut FxHashMap<Value, (usize, bool)>,
    ) -> (usize, bool) {
        if let Some(&r) = memo.get(&v) {
            return r;
        }
        let r = if func.as_int_const(v).is_some() {
            (0, true)
        } else if let Some(d) = func.def_inst(v).filter(|d| members.contains(d)) {
            let args = func.args(d).to_vec();
            let parts: Vec<(usize, bool)> = args.iter().map(|&a| walk(func, members, a, ranks, memo)).collect();
            if parts.iter().all(|p| p.1) { (1, true) } else { (parts.iter().map(|p| p.0).sum(), false) }
        } else if ranks.invariant(func, v) {
            (1, true)
        } else {
            (0, false)
        };
        memo.insert(v, r);
        r
    }
    let (n, all_invariant) = walk(func, members, root, ranks, &mut FxHashMap::default());
    if all_invariant { 1 } else { n }
}

/// Builds `expr` before `pos` (when `emit`), or only counts the instructions it would take.
/// Returns the value (a placeholder when not emitting) and the count.
fn build(func: &mut Function, pos: Inst, expr: &Expr, ranks: &Ranks<'_>, emit: bool) -> (Value, usize) {
    let mut b = Builder { func, pos, emit, count: 0 };
    let v = match expr {
        Expr::Sum(sum) => b.sum(sum, ranks),
        Expr::Product(leaves) => b.product(leaves, ranks),
    };
    (v, b.count)
}

struct Builder<'f> {
    func: &'f mut Function,
    pos: Inst,
    emit: bool,
    count: usize,
}

impl Builder<'_> {
    fn op(&mut self, op: Opcode, a: Value, b: Value) -> Value {
        self.count += 1;
        if self.emit {
            self.func.insert_value_before(self.pos, InstData::binary(op, a, b, Type::I32))
        } else {
            a
        }
    }

    fn konst(&mut self, k: i32) -> Value {
        self.func.iconst(k)
    }

    /// `|c|·v` (a product unless `|c| = 1`; `i32::MIN` counts as positive).
    fn scaled(&mut self, v: Value, c: i32) -> Value {
        let m = if c == i32::MIN { c } else { c.abs() };
        if m == 1 {
            v
        } else {
            let k = self.konst(m);
            self.op(Opcode::Mul, v, k)
        }
    }

    /// A signed partial sum: the value and whether it stands for its negation.
    fn class_sum(&mut self, terms: &[(Value, i32)]) -> (Value, bool) {
        let positive = |c: i32| c > 0 || c == i32::MIN;
        let (pos, neg): (Vec<(Value, i32)>, Vec<(Value, i32)>) = terms.iter().partition(|&&(_, c)| positive(c));
        let (first, rest_pos, negated) = if pos.is_empty() { (neg[0], &[][..], true) } else { (pos[0], &pos[1..], false) };
        let mut acc = self.scaled(first.0, first.1);
        for &(v, c) in rest_pos {
            let t = self.scaled(v, c);
            acc = self.op(Opcode::Add, acc, t);
        }
        let rest_neg = if negated { &neg[1..] } else { &neg[..] };
        for &(v, c) in rest_neg {
            let t = self.scaled(v, c);
            // Negated classes accumulate the magnitudes.
            acc = self.op(if negated { Opcode::Add } else { Opcode::Sub }, acc, t);
        }
        (acc, negated)
    }

    fn sum(&mut self, sum: &Sum, ranks: &Ranks<'_>) -> Value {
        let mut terms: Vec<(u32, Value, i32)> =
            sum.terms.iter().map(|(&v, &c)| (ranks.rank(self.func, v), v, c)).collect();
        terms.sort_unstable();
        let mut acc: Option<(Value, bool)> = None;
        let mut i = 0;
        while i < terms.len() {
            let r = terms[i].0;
            let j = terms[i..].iter().position(|t| t.0 != r).map_or(terms.len(), |p| i + p);
            let class: Vec<(Value, i32)> = terms[i..j].iter().map(|&(_, v, c)| (v, c)).collect();
            let (s, neg) = self.class_sum(&class);
            acc = Some(match acc {
                None => (s, neg),
                Some((a, false)) => (self.op(if neg { Opcode::Sub } else { Opcode::Add }, a, s), false),
                Some((a, true)) if !neg => (self.op(Opcode::Sub, s, a), false),
                Some((a, true)) => (self.op(Opcode::Add, a, s), true),
            });
            i = j;
        }
        match acc {
            None => self.konst(sum.constant),
            Some((a, true)) => {
                let k = self.konst(sum.constant);
                self.op(Opcode::Sub, k, a)
            }
            Some((a, false)) if sum.constant != 0 => {
                let k = self.konst(sum.constant);
                self.op(Opcode::Add, a, k)
            }
            Some((a, false)) => a,
        }
    }

    fn product(&mut self, leaves: &[Value], ranks: &Ranks<'_>) -> Value {
        let mut ordered: Vec<(u32, Value)> = leaves.iter().map(|&v| (ranks.rank(self.func, v), v)).collect();
        ordered.sort_unstable();
        let mut acc = ordered[0].1;
        for &(_, v) in &ordered[1..] {
            acc = self.op(Opcode::Mul, acc, v);
        }
        acc
    }
}
