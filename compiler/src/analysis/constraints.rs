//! Relational facts about `i32` values — difference constraints `x − y ≤ c` — from
//! dominating branch conditions, instruction semantics and phi invariants, and a solver
//! that proves new ones at a block.
//!
//! Why: after inlining, bounds checks like `i < 0 || i >= n` sit inside loops over
//! `[0, n)`; every such compare is implied by the loop's own test and the induction
//! variable's start. Proving it needs relations between values (`i < n`), not just constant
//! ranges. `constraint-elim` uses this to fold compares, branches and remainders.
//!
//! # Facts
//! A fact `a − b ≤ c` relates two *terms*, each an SSA value or the constant zero
//! (constants fold into `c`), as mathematical integers (no wrapping). They come from:
//! * **conditions**: a block whose only predecessor ends in `br %cond` (the block on one side
//!   only) starts with `%cond` known true or false. If `%cond = icmp cc a, b`, that gives
//!   one or two facts (`a < b` ⇒ `a − b ≤ −1`; `==` two; `≠` none). Such facts hold in every
//!   block the conditioned block dominates;
//! * **definitions**, valid wherever the value exists: `x = a + k` (or `a − k`, `k` a
//!   constant) gives `x − a = k` when the addition provably does not wrap — `a ≤ i32::MAX − k`
//!   proven *at the definition of `x`* from facts that hold there (never using facts about
//!   `x` itself, so the proof is well-founded); `srem a, k` lies within `±(|k| − 1)`,
//!   `sdiv a, k` (`k > 0`) within `[i32::MIN / k, i32::MAX / k]`, `zext` within `[0, 1]`;
//!   every term within `[i32::MIN, i32::MAX]`;
//! * **phi invariants**, proven by [`Constraints::compute`] (Houdini-style, a greatest fixpoint):
//!   candidate facts `p ≤ v`, `p ≥ v` for each incoming value `v` available at the phi's block
//!   (a constant, a parameter, or defined in a strictly dominating block), and, for each
//!   incoming value on an edge whose branch condition bounds it (`br (next < n), header, exit`),
//!   that bound transferred to the phi (`p < n`). A candidate survives if it holds for every
//!   incoming value at the end of its predecessor along the edge (with the edge's condition),
//!   assuming — on edges from blocks the phi's block dominates, i.e. back edges — that all
//!   surviving candidates of the block's phis held at the previous entry. Candidates that
//!   fail are dropped and the rest re-checked until none fails: by induction over the
//!   entries into the block, the survivors hold at every entry. Forward edges are checked
//!   without assumptions (the phi is not even in scope there). Blocks are processed in
//!   reverse post-order, so a phi's proof may use the proven invariants of phis above it.
//!
//! # Proving
//! [`Constraints::prove`] gathers the condition facts of the block's dominator chain (plus
//! extra edge conditions), closes the set of terms under definition and phi facts (bounded,
//! see [`MAX_TERMS`]), and runs Bellman–Ford from `b`: the shortest path to `a` is the
//! tightest derivable upper bound of `a − b`. Contradictory facts (a negative cycle: the
//! block is unreachable) prove nothing.
//!
//! Assumes verifier-clean SSA. Results describe the function as it was when computed; a pass
//! that rewrites uses of compares or removes code keeps them valid (facts only mention values
//! that still compute the same thing), but a CFG change invalidates the condition facts.

use std::cell::RefCell;

use cranelift_entity::SecondaryMap;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::cfg::ControlFlowGraph;
use super::domtree::DomTree;
use crate::ir::{Block, Function, IntCC, Opcode, Type, Value, ValueDef};

/// A term of a fact: an SSA value, or `None` for the constant zero.
pub type Term = Option<Value>;

/// `a − b ≤ c` over the mathematical integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fact {
    pub a: Term,
    pub b: Term,
    pub c: i64,
}

/// Largest number of terms (besides zero) one proof considers.
pub const MAX_TERMS: usize = 24;
/// Largest number of condition facts from the dominator chain one proof considers (the
/// nearest ones).
const MAX_CONDITIONS: usize = 24;
/// Nesting limit of no-wrap proofs (each proves a bound of an addition's operand at its
/// definition).
const MAX_DEPTH: u32 = 6;
/// Candidate invariants per phi.
const MAX_CANDIDATES_PER_PHI: usize = 8;
/// Closures one function's analysis may compute before the nested no-wrap and operand-bound
/// proofs stop (they then prove nothing, which is sound). The depth limit alone bounds the
/// nesting, not the fan-out: under phi assumptions nothing is memoised, and a chain of
/// additions (a fully unrolled loop) made one proof compute ~24^6 closures (a campaign
/// program ran for minutes).
const MAX_CLOSURES: u32 = 20_000;

const I32_MAX: i64 = i32::MAX as i64;
const I32_MIN: i64 = i32::MIN as i64;

/// A condition: an `i1` value known to be true or false.
type Condition = (Value, bool);

/// Facts about the values of one function and a solver for new ones (see the module
/// documentation).
pub struct Constraints<'a> {
    func: &'a Function,
    domtree: &'a DomTree,
    /// The condition a block starts with, from its unique predecessor's branch.
    entry_condition: SecondaryMap<Block, Option<Condition>>,
    /// Proven invariants of phis, each mentioning the phi as `a` or `b`.
    phi_facts: FxHashMap<Value, SmallVec<[Fact; 4]>>,
    /// Candidate invariants assumed while one block's phis are being proven.
    assumed: RefCell<FxHashMap<Value, SmallVec<[Fact; 4]>>>,
    /// No-wrap results proven without assumptions.
    nowrap_memo: RefCell<FxHashMap<Value, bool>>,
    /// Operand-bound facts proven without assumptions.
    operand_memo: RefCell<FxHashMap<Value, SmallVec<[Fact; 4]>>>,
    /// Closures computed so far (see [`MAX_CLOSURES`]).
    closures: std::cell::Cell<u32>,
}

impl<'a> Constraints<'a> {
    /// Collects the branch conditions and proves the phi invariants of `func`.
    pub fn compute(func: &'a Function, cfg: &ControlFlowGraph, domtree: &'a DomTree) -> Constraints<'a> {
        let mut entry_condition = SecondaryMap::new();
        for &b in cfg.rpo() {
            entry_condition[b] = edge_condition_into(func, cfg, b);
        }
        let mut cx = Constraints {
            func,
            domtree,
            entry_condition,
            phi_facts: FxHashMap::default(),
            assumed: RefCell::new(FxHashMap::default()),
            nowrap_memo: RefCell::new(FxHashMap::default()),
            operand_memo: RefCell::new(FxHashMap::default()),
            closures: std::cell::Cell::new(0),
        };
        for &b in cfg.rpo() {
            cx.prove_phi_invariants(cfg, b);
        }
        cx
    }

    /// The proven invariants of phi `p` (facts mentioning `p`).
    pub fn phi_facts(&self, p: Value) -> &[Fact] {
        self.phi_facts.get(&p).map_or(&[], |f| f.as_slice())
    }

    /// The condition known at the start of `b` from its unique predecessor's branch.
    pub fn entry_condition(&self, b: Block) -> Option<(Value, bool)> {
        self.entry_condition[b]
    }

    /// Whether condition value `c` is known (true or false) throughout block `b` because a
    /// dominating edge branched on it.
    pub fn known_condition(&self, b: Block, c: Value) -> Option<bool> {
        let mut cur = Some(b);
        while let Some(x) = cur {
            if let Some((v, pol)) = self.entry_condition[x]
                && v == c
            {
                return Some(pol);
            }
            cur = self.domtree.idom(x);
        }
        None
    }

    /// Whether the `i1` value `c` is known along the edge `pred → b`: a constant, the
    /// condition `pred` branches on (with `b` on one side only), or known throughout `pred`.
    pub fn known_on_edge(&self, pred: Block, b: Block, c: Value) -> Option<bool> {
        if let Some(k) = self.func.as_const(c).and_then(|k| k.as_bool()) {
            return Some(k);
        }
        if let Some((v, pol)) = edge_condition(self.func, pred, b)
            && v == c
        {
            return Some(pol);
        }
        self.known_condition(pred, c)
    }

    /// Proves `x − y ≤ k` throughout block `at` (`x`, `y` are `i32` values).
    pub fn prove(&self, at: Block, x: Value, y: Value, k: i64) -> bool {
        self.prove_with(at, &[], x, y, k, 0)
    }

    /// Proves `x ≤ k` throughout block `at`.
    pub fn prove_upper(&self, at: Block, x: Value, k: i64) -> bool {
        let (tx, kx) = split(self.func, x);
        self.prove_terms(at, &[], tx, None, k - kx, 0)
    }

    /// Proves `x ≥ k` throughout block `at`.
    pub fn prove_lower(&self, at: Block, x: Value, k: i64) -> bool {
        // 0 − x ≤ −k
        let (tx, kx) = split(self.func, x);
        self.prove_terms(at, &[], None, tx, kx - k, 0)
    }

    /// Proves `icmp cc x, y` true throughout block `at`.
    pub fn prove_icmp(&self, at: Block, cc: IntCC, x: Value, y: Value) -> bool {
        self.prove_icmp_with(at, &[], cc, x, y)
    }

    /// The tightest bounds `[lo, hi]` of the `i32` value `v` (mathematical integers within
    /// the `i32` range) derivable along the edge `pred → succ`: at the end of `pred`, with
    /// the condition `pred` branches on when `succ` is on one side only.
    pub fn bounds_on_edge(&self, pred: Block, succ: Block, v: Value) -> (i64, i64) {
        self.bounds_with(pred, &edge_conditions(self.func, pred, succ), v, 0)
    }

    /// Proves `icmp cc x, y` true along the edge `pred → succ` (see [`Self::bounds_on_edge`]).
    pub fn prove_icmp_on_edge(&self, pred: Block, succ: Block, cc: IntCC, x: Value, y: Value) -> bool {
        self.prove_icmp_with(pred, &edge_conditions(self.func, pred, succ), cc, x, y)
    }

    /// Proves `icmp cc x, y` true at the end of `at`, with the extra conditions `extra` known.
    fn prove_icmp_with(&self, at: Block, extra: &[Condition], cc: IntCC, x: Value, y: Value) -> bool {
        let le = |x: Value, y: Value, k: i64| self.prove_with(at, extra, x, y, k, 0);
        match cc {
            IntCC::Lt => le(x, y, -1),
            IntCC::Le => le(x, y, 0),
            IntCC::Gt => le(y, x, -1),
            IntCC::Ge => le(y, x, 0),
            IntCC::Eq => le(x, y, 0) && le(y, x, 0),
            IntCC::Ne => le(x, y, -1) || le(y, x, -1),
        }
    }

    /// Proves `x − y ≤ k` at the end of `at`, with the extra conditions `extra` known.
    fn prove_with(&self, at: Block, extra: &[Condition], x: Value, y: Value, k: i64, depth: u32) -> bool {
        let (tx, kx) = split(self.func, x);
        let (ty, ky) = split(self.func, y);
        // tx + kx − (ty + ky) ≤ k  ⇔  tx − ty ≤ k − kx + ky
        self.prove_terms(at, extra, tx, ty, k - kx + ky, depth)
    }

    /// Proves `tx − ty ≤ goal` for terms (zero allowed) at the end of `at`, with the extra
    /// conditions `extra` known.
    fn prove_terms(&self, at: Block, extra: &[Condition], tx: Term, ty: Term, goal: i64, depth: u32) -> bool {
        if tx == ty {
            return 0 <= goal;
        }
        let (terms, facts) = self.closure(at, extra, &[tx, ty], depth);
        let Some(dist) = shortest_paths(&terms, &facts, ty, false) else { return false };
        term_index(&terms, tx).and_then(|i| dist[i]).is_some_and(|d| d <= goal)
    }

    /// The tightest bounds `[lo, hi]` of `v` derivable at the end of `at`.
    fn bounds_at(&self, at: Block, v: Value, depth: u32) -> (i64, i64) {
        self.bounds_with(at, &[], v, depth)
    }

    /// [`Self::bounds_at`] with the extra conditions `extra` known.
    fn bounds_with(&self, at: Block, extra: &[Condition], v: Value, depth: u32) -> (i64, i64) {
        if let Some(k) = self.func.as_int_const(v) {
            return (k as i64, k as i64);
        }
        let (terms, facts) = self.closure(at, extra, &[Some(v)], depth);
        let i = term_index(&terms, Some(v));
        let hi = shortest_paths(&terms, &facts, None, false).and_then(|d| i.and_then(|i| d[i]));
        let neg_lo = shortest_paths(&terms, &facts, None, true).and_then(|d| i.and_then(|i| d[i]));
        (neg_lo.map_or(I32_MIN, |d| (-d).max(I32_MIN)), hi.map_or(I32_MAX, |d| d.min(I32_MAX)))
    }

    /// The facts holding at the end of `at` about the terms `seeds` and whatever the
    /// conditions of `at`'s dominator chain mention, closed under definition facts.
    fn closure(&self, at: Block, extra: &[Condition], seeds: &[Term], depth: u32) -> (Vec<Value>, Vec<Fact>) {
        self.closures.set(self.closures.get().saturating_add(1));
        let func = self.func;
        let mut facts: Vec<Fact> = Vec::new();
        for &c in extra {
            condition_facts(func, c, &mut facts);
        }
        let mut cur = Some(at);
        let mut conditions = 0;
        while let Some(b) = cur {
            if conditions >= MAX_CONDITIONS {
                break;
            }
            if let Some(c) = self.entry_condition[b] {
                condition_facts(func, c, &mut facts);
                conditions += 1;
            }
            cur = self.domtree.idom(b);
        }
        let mut terms: Vec<Value> = Vec::new();
        let add_term = |terms: &mut Vec<Value>, t: Term| {
            if let Some(v) = t
                && !terms.contains(&v)
                && terms.len() < MAX_TERMS
            {
                terms.push(v);
            }
        };
        for &t in seeds {
            add_term(&mut terms, t);
        }
        for f in &facts {
            add_term(&mut terms, f.a);
            add_term(&mut terms, f.b);
        }
        let mut i = 0;
        while i < terms.len() {
            let t = terms[i];
            let before = facts.len();
            self.value_facts(t, depth, &mut facts);
            for f in &facts[before..] {
                let (a, b) = (f.a, f.b);
                add_term(&mut terms, a);
                add_term(&mut terms, b);
            }
            i += 1;
        }
        (terms, facts)
    }

    /// Facts that hold wherever `v` is defined.
    fn value_facts(&self, v: Value, depth: u32, out: &mut Vec<Fact>) {
        let func = self.func;
        if func.value_type(v) != Type::I32 {
            return;
        }
        let t = Some(v);
        let ValueDef::Inst(inst) = func.value_def(v) else { return };
        let args = func.args(inst);
        match func.opcode(inst) {
            Opcode::Add | Opcode::Sub => {
                if let Some((a, step)) = offset_form(func, inst) {
                    if self.add_does_not_wrap(v, a, step, depth) {
                        out.push(Fact { a: t, b: Some(a), c: step });
                        out.push(Fact { a: Some(a), b: t, c: -step });
                    }
                } else {
                    out.extend(self.operand_facts(v, depth).iter().copied());
                }
            }
            Opcode::Mul => out.extend(self.operand_facts(v, depth).iter().copied()),
            Opcode::SRem => {
                if let Some(k) = func.as_int_const(args[1]).filter(|&k| k != 0) {
                    let m = (k as i64).abs() - 1;
                    out.push(Fact { a: t, b: None, c: m });
                    out.push(Fact { a: None, b: t, c: m });
                    out.extend(self.operand_facts(v, depth).iter().copied());
                }
            }
            Opcode::SDiv => {
                if let Some(k) = func.as_int_const(args[1]).filter(|&k| k > 0) {
                    let k = k as i64;
                    out.push(Fact { a: t, b: None, c: I32_MAX / k });
                    out.push(Fact { a: None, b: t, c: -(I32_MIN / k) });
                }
            }
            Opcode::Zext => {
                out.push(Fact { a: t, b: None, c: 1 });
                out.push(Fact { a: None, b: t, c: 0 });
            }
            Opcode::Phi => {
                if let Some(fs) = self.phi_facts.get(&v) {
                    out.extend(fs.iter().copied());
                }
                if let Some(fs) = self.assumed.borrow().get(&v) {
                    out.extend(fs.iter().copied());
                }
            }
            _ => {}
        }
    }

    fn out_of_budget(&self) -> bool {
        self.closures.get() >= MAX_CLOSURES
    }

    /// `x = a + step` does not wrap: proven at `x`'s block from what holds there.
    fn add_does_not_wrap(&self, x: Value, a: Value, step: i64, depth: u32) -> bool {
        if let Some(&r) = self.nowrap_memo.borrow().get(&x) {
            return r;
        }
        if depth >= MAX_DEPTH || self.out_of_budget() {
            return false;
        }
        let Some(block) = self.func.def_inst(x).and_then(|i| self.func.inst_block(i)) else { return false };
        let r = if step >= 0 {
            // a − 0 ≤ i32::MAX − step
            self.prove_terms(block, &[], Some(a), None, I32_MAX - step, depth + 1)
        } else {
            // a ≥ i32::MIN − step  ⇔  0 − a ≤ step − i32::MIN
            self.prove_terms(block, &[], None, Some(a), step - I32_MIN, depth + 1)
        };
        if self.assumed.borrow().is_empty() {
            self.nowrap_memo.borrow_mut().insert(x, r);
        }
        r
    }

    /// Facts of `x` (an `add`/`sub` of two variables, a `mul`, or an `srem` by a constant)
    /// from the bounds of its operands at its definition: the result's range when the
    /// operation cannot wrap there, and for sums and differences how far `x` is from each
    /// operand; for a remainder, its sign and `|x| ≤ |a|`.
    fn operand_facts(&self, x: Value, depth: u32) -> SmallVec<[Fact; 4]> {
        if let Some(fs) = self.operand_memo.borrow().get(&x) {
            return fs.clone();
        }
        let mut out: SmallVec<[Fact; 4]> = SmallVec::new();
        let func = self.func;
        let inst = func.def_inst(x).expect("an instruction result");
        if depth >= MAX_DEPTH || self.out_of_budget() {
            return out;
        }
        let Some(block) = func.inst_block(inst) else { return out };
        let (a, b) = (func.args(inst)[0], func.args(inst)[1]);
        let (la, ha) = self.bounds_at(block, a, depth + 1);
        let (lb, hb) = self.bounds_at(block, b, depth + 1);
        let t = Some(x);
        let fits = |lo: i64, hi: i64| I32_MIN <= lo && hi <= I32_MAX;
        let range = |out: &mut SmallVec<[Fact; 4]>, lo: i64, hi: i64| {
            out.push(Fact { a: t, b: None, c: hi });
            out.push(Fact { a: None, b: t, c: -lo });
        };
        // `a = ta + oa`, `b = tb + ob` (a constant operand is its offset alone).
        let ((ta, oa), (tb, ob)) = (split(func, a), split(func, b));
        match func.opcode(inst) {
            Opcode::Add if fits(la + lb, ha + hb) => {
                range(&mut out, la + lb, ha + hb);
                // x − a = b, x − b = a
                out.push(Fact { a: t, b: ta, c: hb + oa });
                out.push(Fact { a: ta, b: t, c: -lb - oa });
                out.push(Fact { a: t, b: tb, c: ha + ob });
                out.push(Fact { a: tb, b: t, c: -la - ob });
            }
            Opcode::Sub if fits(la - hb, ha - lb) => {
                range(&mut out, la - hb, ha - lb);
                // x − a = −b, a − x = b
                out.push(Fact { a: t, b: ta, c: -lb + oa });
                out.push(Fact { a: ta, b: t, c: hb - oa });
            }
            Opcode::Mul => {
                let corners = [la * lb, la * hb, ha * lb, ha * hb];
                let (lo, hi) = (corners.iter().copied().min().unwrap_or(0), corners.iter().copied().max().unwrap_or(0));
                if fits(lo, hi) {
                    range(&mut out, lo, hi);
                }
            }
            Opcode::SRem if la >= 0 => {
                // The sign of the dividend, and no larger in magnitude.
                out.push(Fact { a: None, b: t, c: 0 });
                out.push(Fact { a: t, b: ta, c: oa });
            }
            Opcode::SRem if ha <= 0 => {
                out.push(Fact { a: t, b: None, c: 0 });
                out.push(Fact { a: ta, b: t, c: -oa });
            }
            _ => {}
        }
        out.retain(|f| f.a != f.b);
        if self.assumed.borrow().is_empty() {
            self.operand_memo.borrow_mut().insert(x, out.clone());
        }
        out
    }

    /// Candidate invariants of the phis of `b`, reduced to the ones that hold.
    fn prove_phi_invariants(&mut self, cfg: &ControlFlowGraph, b: Block) {
        let func = self.func;
        let phis: Vec<Value> = func
            .block_phis(b)
            .filter_map(|i| func.result(i))
            .filter(|&p| func.value_type(p) == Type::I32)
            .collect();
        if phis.is_empty() {
            return;
        }
        let mut candidates: FxHashMap<Value, SmallVec<[Fact; 4]>> = FxHashMap::default();
        for &p in &phis {
            let phi = func.def_inst(p).expect("phi result");
            let mut cands: SmallVec<[Fact; 4]> = SmallVec::new();
            let mut push = |f: Fact| {
                if !cands.contains(&f) && cands.len() < MAX_CANDIDATES_PER_PHI {
                    cands.push(f);
                }
            };
            for (pred, v) in func.inst(phi).phi_incoming() {
                if v == p {
                    continue;
                }
                if self.available_at(v, b) {
                    let (tv, kv) = split(func, v);
                    // p ≤ v and p ≥ v
                    push(Fact { a: Some(p), b: tv, c: kv });
                    push(Fact { a: tv, b: Some(p), c: -kv });
                }
                if let Some(c) = edge_condition(func, pred, b) {
                    let mut fs = Vec::new();
                    condition_facts(func, c, &mut fs);
                    for f in fs {
                        // A bound of `v` against an available term becomes one of `p`.
                        if f.a == Some(v) && f.b.is_none_or(|t| self.available_at(t, b)) {
                            push(Fact { a: Some(p), ..f });
                        } else if f.b == Some(v) && f.a.is_none_or(|t| self.available_at(t, b)) {
                            push(Fact { b: Some(p), ..f });
                        }
                    }
                }
            }
            if !cands.is_empty() {
                candidates.insert(p, cands);
            }
        }
        if candidates.is_empty() {
            return;
        }
        // Greatest fixpoint: drop candidates that fail under the others.
        loop {
            *self.assumed.borrow_mut() = candidates.clone();
            let mut dropped = false;
            for &p in &phis {
                let Some(cands) = candidates.get(&p).cloned() else { continue };
                let phi = func.def_inst(p).expect("phi result");
                let incoming: Vec<(Block, Value)> = func.inst(phi).phi_incoming().collect();
                let kept: SmallVec<[Fact; 4]> = cands
                    .into_iter()
                    .filter(|f| incoming.iter().all(|&(pred, v)| self.holds_on_edge(cfg, *f, p, pred, v, b)))
                    .collect();
                if kept.len() != candidates[&p].len() {
                    dropped = true;
                    candidates.insert(p, kept);
                }
            }
            if !dropped {
                break;
            }
        }
        self.assumed.borrow_mut().clear();
        for (p, fs) in candidates {
            if !fs.is_empty() {
                self.phi_facts.insert(p, fs);
            }
        }
    }

    /// Fact `f` about phi `p` of block `b` holds for incoming value `v` at the end of `pred`
    /// along the edge to `b`.
    fn holds_on_edge(&self, cfg: &ControlFlowGraph, f: Fact, p: Value, pred: Block, v: Value, b: Block) -> bool {
        if v == p {
            return true;
        }
        if !cfg.is_reachable(pred) {
            return true;
        }
        let back_edge = self.domtree.dominates(b, pred);
        let saved = if back_edge { None } else { Some(std::mem::take(&mut *self.assumed.borrow_mut())) };
        let extra: SmallVec<[Condition; 1]> = edge_condition(self.func, pred, b).into_iter().collect();
        // Substitute v = tv + kv for p in f.a − f.b ≤ f.c.
        let (tv, kv) = split(self.func, v);
        let (mut a, mut bb, mut c) = (f.a, f.b, f.c);
        if a == Some(p) {
            a = tv;
            c -= kv;
        }
        if bb == Some(p) {
            bb = tv;
            c += kv;
        }
        let r = self.prove_terms(pred, &extra, a, bb, c, 0);
        if let Some(s) = saved {
            *self.assumed.borrow_mut() = s;
        }
        r
    }

    /// `v` has one value throughout every execution of `b`: a constant, a parameter, or
    /// defined in a block strictly dominating `b`.
    fn available_at(&self, v: Value, b: Block) -> bool {
        match self.func.value_def(v) {
            ValueDef::Inst(i) => {
                self.func.inst_block(i).is_some_and(|d| d != b && self.domtree.dominates(d, b))
            }
            ValueDef::Param(_) | ValueDef::Const(_) => true,
            ValueDef::Global(_) | ValueDef::Undef => false,
        }
    }
}

/// Splits a value into a term and a constant offset: constants become `(zero, k)`.
fn split(func: &Function, v: Value) -> (Term, i64) {
    match func.as_int_const(v) {
        Some(k) => (None, k as i64),
        None => (Some(v), 0),
    }
}

/// `x = a + step` for `add a, k`, `add k, a` and `sub a, k` with a constant `k`.
pub(crate) fn offset_form(func: &Function, inst: crate::ir::Inst) -> Option<(Value, i64)> {
    let args = func.args(inst);
    match func.opcode(inst) {
        Opcode::Add => match (func.as_int_const(args[0]), func.as_int_const(args[1])) {
            (None, Some(k)) => Some((args[0], k as i64)),
            (Some(k), None) => Some((args[1], k as i64)),
            _ => None,
        },
        Opcode::Sub => match (func.as_int_const(args[0]), func.as_int_const(args[1])) {
            (None, Some(k)) => Some((args[0], -(k as i64))),
            _ => None,
        },
        _ => None,
    }
}

/// The facts of condition `c` (an `icmp` known true or false).
fn condition_facts(func: &Function, (c, holds): Condition, out: &mut Vec<Fact>) {
    let Some(inst) = func.def_inst(c) else { return };
    let Opcode::Icmp(cc) = func.opcode(inst) else { return };
    let cc = if holds { cc } else { cc.inverse() };
    let (x, y) = (func.args(inst)[0], func.args(inst)[1]);
    let (tx, kx) = split(func, x);
    let (ty, ky) = split(func, y);
    // tx + kx  cc  ty + ky
    let mut le = |a: Term, b: Term, c: i64| {
        if a != b {
            out.push(Fact { a, b, c });
        }
    };
    match cc {
        IntCC::Lt => le(tx, ty, ky - kx - 1),
        IntCC::Le => le(tx, ty, ky - kx),
        IntCC::Gt => le(ty, tx, kx - ky - 1),
        IntCC::Ge => le(ty, tx, kx - ky),
        IntCC::Eq => {
            le(tx, ty, ky - kx);
            le(ty, tx, kx - ky);
        }
        IntCC::Ne => {}
    }
}

/// The condition the edge `pred → b` establishes: `pred` ends in `br c` with `b` on exactly
/// one side.
pub(crate) fn edge_condition(func: &Function, pred: Block, b: Block) -> Option<Condition> {
    let term = func.terminator(pred)?;
    if func.opcode(term) != Opcode::Br {
        return None;
    }
    let t = func.targets(term);
    let c = func.args(term)[0];
    match (t[0] == b, t[1] == b) {
        (true, false) => Some((c, true)),
        (false, true) => Some((c, false)),
        _ => None,
    }
}

/// The edge's condition (see [`edge_condition`]) as a list of extra conditions.
fn edge_conditions(func: &Function, pred: Block, b: Block) -> SmallVec<[Condition; 1]> {
    edge_condition(func, pred, b).into_iter().collect()
}

/// The condition `b` starts with: its only predecessor branches to it on one side.
fn edge_condition_into(func: &Function, cfg: &ControlFlowGraph, b: Block) -> Option<Condition> {
    let [pred] = cfg.preds(b) else { return None };
    edge_condition(func, *pred, b)
}

/// Index of a term in the solver's node numbering: zero is node 0, `terms[i]` node `i + 1`.
fn term_index(terms: &[Value], t: Term) -> Option<usize> {
    match t {
        None => Some(0),
        Some(v) => terms.iter().position(|&x| x == v).map(|i| i + 1),
    }
}

/// For every node `u`, the least `d` with `u − from ≤ d` derivable from `facts` and the `i32`
/// range of every term (Bellman–Ford; with `reversed`, the least `d` with `from − u ≤ d`), or
/// `None` for all when the facts contradict each other (a negative cycle).
fn shortest_paths(terms: &[Value], facts: &[Fact], from: Term, reversed: bool) -> Option<Vec<Option<i64>>> {
    let n = terms.len() + 1;
    // Edge v → u with weight c for u − v ≤ c.
    let mut edges: Vec<(usize, usize, i64)> = Vec::with_capacity(facts.len() + 2 * terms.len());
    for f in facts {
        if let (Some(a), Some(b)) = (term_index(terms, f.a), term_index(terms, f.b)) {
            edges.push((b, a, f.c));
        }
    }
    for i in 1..n {
        edges.push((0, i, I32_MAX));
        edges.push((i, 0, -I32_MIN));
    }
    if reversed {
        for e in edges.iter_mut() {
            *e = (e.1, e.0, e.2);
        }
    }
    let src = term_index(terms, from)?;
    let mut dist: Vec<Option<i64>> = vec![None; n];
    dist[src] = Some(0);
    for round in 0..n {
        let mut changed = false;
        for &(v, u, c) in &edges {
            if let Some(dv) = dist[v] {
                let nd = dv + c;
                if dist[u].is_none_or(|du| nd < du) {
                    dist[u] = Some(nd);
                    changed = true;
                }
            }
        }
        if !changed {
            return Some(dist);
        }
        if round + 1 == n {
            // Still relaxing after n rounds: a negative cycle.
            return None;
        }
    }
    Some(dist)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::parser::parse_module;

    fn with_facts(src: &str, check: impl FnOnce(&Function, &Constraints<'_>)) {
        let module = parse_module(src).expect("test IR parses");
        let func = module.funcs().next().expect("one function").1;
        let cfg = ControlFlowGraph::compute(func);
        let dt = DomTree::compute(&cfg);
        let facts = Constraints::compute(func, &cfg, &dt);
        check(func, &facts);
    }

    fn value(func: &Function, inst_index: usize) -> Value {
        let (_, inst) = func.all_insts().filter(|&(_, i)| func.result(i).is_some()).nth(inst_index).expect("instruction");
        func.result(inst).expect("result")
    }

    const ROTATED: &str = "func @f(%n: i32) -> i32 {
e:
    %g = icmp gt %n, 0
    br %g, h, x
h:
    %i = phi i32 [e: 0], [h: %i2]
    %i2 = add i32 %i, 1
    %c = icmp lt %i2, %n
    br %c, h, x
x:
    ret 0
}";

    #[test]
    fn rotated_loop_counter_is_within_zero_and_bound() {
        with_facts(ROTATED, |func, facts| {
            let (n, i, i2) = (func.params[0], value(func, 1), value(func, 2));
            let h = func.layout()[1];
            assert!(facts.prove_lower(h, i, 0), "i >= 0");
            assert!(facts.prove(h, i, n, -1), "i < n");
            assert!(facts.prove_upper(h, i2, i32::MAX as i64), "trivially in range");
            assert!(facts.prove(h, i2, n, 0), "i + 1 <= n");
            assert!(!facts.prove(h, i2, n, -1), "i + 1 < n is not known before the test");
            assert!(!facts.prove_lower(h, i, 1), "i may be 0");
        });
    }

    #[test]
    fn without_the_guard_nothing_bounds_the_counter_from_above() {
        let src = ROTATED.replace("br %g, h, x", "jump h");
        with_facts(&src, |func, facts| {
            let (n, i) = (func.params[0], value(func, 1));
            let h = func.layout()[1];
            // The first iteration runs whatever n is: i = 0 < n is not known.
            assert!(!facts.prove(h, i, n, -1));
            assert!(!facts.prove(h, i, n, 0), "nor i <= n (n may be negative)");
        });
    }

    #[test]
    fn contradictory_conditions_prove_nothing() {
        let src = "func @f(%x: i32) -> i32 {
e:
    %a = icmp lt %x, 5
    br %a, b, z
b:
    %c = icmp gt %x, 10
    br %c, d, z
d:
    ret 1
z:
    ret 0
}";
        with_facts(src, |func, facts| {
            let x = func.params[0];
            let d = func.layout()[2];
            assert!(!facts.prove_upper(d, x, -100));
            assert!(!facts.prove_lower(d, x, 100));
        });
    }
}
