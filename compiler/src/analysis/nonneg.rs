//! Which `i32` values are never negative at a block: a small sign analysis over SSA for the
//! instruction selection of division and remainder by powers of two.
//!
//! Why: `x / 2^k` and `x % 2^k` need a sign correction (C truncates toward zero) unless `x`
//! is non-negative, when they are a shift and a mask. Loop counters, halved values guarded
//! by `while (b > 0)` and remainders of non-negative values are the common cases.
//!
//! # Facts
//! [`NonNegative::range`] gives bounds `[lo, hi]` of a value, as mathematical integers, that
//! hold wherever the query block executes. It combines
//! * **definitions**: constants, `zext` (`[0, 1]`), `srem` (the sign of the dividend, below the
//!   divisor's magnitude), `sdiv` by a constant (truncating division is monotone), `sdiv` of
//!   two non-negative values, `add`/`sub`/`mul` when the operands' bounds show the result does
//!   not wrap (otherwise nothing is known), `select` (the union of both sides);
//! * **conditions**: a block whose only incoming edge is one side of `br %c` starts with `%c`
//!   known; if `%c` is `icmp cc x, y` that bounds `x` by the bounds of `y` (and `y` by `x`).
//!   The fact holds in every block that block dominates: the compare was evaluated on the
//!   values that are current there, because any path that redefines one of them (a loop
//!   header's phi) and reaches the block again must pass through the conditioned edge again;
//! * **phis**, bounded together by a greatest fixpoint (Houdini): the candidate facts of an
//!   `i32` phi are `p ≥ 0` and `p ≤ h`, `h` the largest incoming value when every phi is
//!   assumed non-negative (a rotated loop's counter, tested as `i + 1 < n` on the back edge,
//!   gets `n - 1`). Every incoming value is checked at the end of its predecessor (with the
//!   branch condition of the edge) assuming all surviving candidates; failing candidates are
//!   dropped and the rest checked again until none fails. By induction over the execution,
//!   every assignment of a phi satisfies its surviving facts: the incoming value is computed
//!   from values assigned earlier, which satisfy theirs. This argument uses no loop
//!   structure and no dominance between the phi and its incoming values, so it holds on
//!   irreducible control flow too. Incoming edges from unreachable blocks never execute and
//!   are ignored.
//!
//! Recursion over operands is bounded ([`MAX_DEPTH`]); what is beyond the bound is unknown
//! (the full `i32` range), which is always sound. Assumes verifier-clean SSA; the result
//! describes the function as it was when computed.

use cranelift_entity::SecondaryMap;

use super::cfg::ControlFlowGraph;
use super::constraints::edge_condition;
use super::domtree::DomTree;
use crate::ir::{Block, Function, IntCC, Opcode, Type, Value, ValueDef};

/// Nesting limit of the operand recursion of one query.
pub const MAX_DEPTH: u32 = 5;
/// Conditioned dominators consulted per value (the nearest ones).
const MAX_CONDITIONS: usize = 16;
/// Rounds of the phi fixpoint before giving up on every phi (no phi assumed).
const MAX_ROUNDS: usize = 32;

const I32_MIN: i64 = i32::MIN as i64;
const I32_MAX: i64 = i32::MAX as i64;
const FULL: (i64, i64) = (I32_MIN, I32_MAX);

/// A branch condition known to hold: the `i1` value and its truth.
type Condition = (Value, bool);

pub struct NonNegative {
    domtree: DomTree,
    /// The condition each block starts with (its only incoming edge is one side of a `br`).
    entry_condition: SecondaryMap<Block, Option<Condition>>,
    /// Proven bounds of the `i32` phis.
    phi_range: SecondaryMap<Value, (i64, i64)>,
}

impl NonNegative {
    pub fn compute(func: &Function) -> NonNegative {
        let cfg = ControlFlowGraph::compute(func);
        let domtree = DomTree::compute(&cfg);
        let mut entry_condition = SecondaryMap::new();
        for &b in cfg.rpo() {
            if let [pred] = cfg.preds(b) {
                entry_condition[b] = edge_condition(func, *pred, b);
            }
        }
        let mut nn = NonNegative { domtree, entry_condition, phi_range: SecondaryMap::with_default(FULL) };
        let mut phis: Vec<(Value, Block)> = Vec::new();
        for &b in cfg.rpo() {
            for phi in func.block_phis(b) {
                if let Some(v) = func.result(phi)
                    && func.value_type(v) == Type::I32
                {
                    phis.push((v, b));
                    nn.phi_range[v] = (0, I32_MAX);
                }
            }
        }
        let incoming_ranges = |nn: &NonNegative, p: Value, b: Block| -> Vec<(i64, i64)> {
            let inst = func.def_inst(p).expect("phi value");
            func.inst(inst)
                .phi_incoming()
                .filter(|&(pred, _)| cfg.is_reachable(pred))
                .map(|(pred, v)| nn.range_with(func, v, pred, edge_condition(func, pred, b), 0))
                .collect()
        };
        // Candidate upper bounds: the largest incoming value with every phi non-negative
        // (a loop counter tested on the back edge, `i + 1 < n`, gets the test's bound).
        let guesses: Vec<i64> =
            phis.iter().map(|&(p, b)| incoming_ranges(&nn, p, b).iter().map(|r| r.1).max().unwrap_or(I32_MAX)).collect();
        for (&(p, _), &hi) in phis.iter().zip(&guesses) {
            nn.phi_range[p].1 = hi.min(I32_MAX);
        }
        let mut rounds = 0;
        loop {
            let mut changed = false;
            for &(p, b) in &phis {
                let (lo, hi) = nn.phi_range[p];
                if (lo, hi) == FULL {
                    continue;
                }
                let ranges = incoming_ranges(&nn, p, b);
                let new_lo = if ranges.iter().all(|r| r.0 >= lo) { lo } else { I32_MIN };
                let new_hi = if ranges.iter().all(|r| r.1 <= hi) { hi } else { I32_MAX };
                if (new_lo, new_hi) != (lo, hi) {
                    nn.phi_range[p] = (new_lo, new_hi);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
            rounds += 1;
            if rounds == MAX_ROUNDS {
                for &(p, _) in &phis {
                    nn.phi_range[p] = FULL;
                }
                break;
            }
        }
        nn
    }

    /// `v` is never negative while block `at` executes.
    pub fn is_non_negative(&self, func: &Function, v: Value, at: Block) -> bool {
        self.range(func, v, at).0 >= 0
    }

    /// Bounds of the `i32` value `v` while block `at` executes (the full range if unknown).
    pub fn range(&self, func: &Function, v: Value, at: Block) -> (i64, i64) {
        self.range_with(func, v, at, None, 0)
    }

    /// Bounds of `v` at the end of `at`, where also `extra` holds (an edge's condition).
    fn range_with(&self, func: &Function, v: Value, at: Block, extra: Option<Condition>, depth: u32) -> (i64, i64) {
        let (mut lo, mut hi) = self.defined_range(func, v, at, extra, depth);
        if depth >= MAX_DEPTH {
            return (lo, hi);
        }
        let mut seen = 0;
        let mut cur = Some(at);
        let mut pending = extra;
        loop {
            let cond = match pending.take() {
                Some(c) => c,
                None => {
                    let Some(b) = cur else { break };
                    cur = self.domtree.idom(b);
                    match self.entry_condition[b] {
                        Some(c) => c,
                        None => continue,
                    }
                }
            };
            let (c, truth) = cond;
            let Some(ci) = func.def_inst(c) else { continue };
            let Opcode::Icmp(cc) = func.opcode(ci) else { continue };
            let cc = if truth { cc } else { cc.inverse() };
            let [x, y] = [func.args(ci)[0], func.args(ci)[1]];
            // `v cc other`
            let (cc, other) = if x == v && y != v {
                (cc, y)
            } else if y == v && x != v {
                (cc.swapped(), x)
            } else {
                continue;
            };
            seen += 1;
            let (olo, ohi) = self.range_with(func, other, at, extra, depth + 1);
            match cc {
                IntCC::Lt => hi = hi.min(ohi - 1),
                IntCC::Le => hi = hi.min(ohi),
                IntCC::Gt => lo = lo.max(olo + 1),
                IntCC::Ge => lo = lo.max(olo),
                IntCC::Eq => {
                    lo = lo.max(olo);
                    hi = hi.min(ohi);
                }
                IntCC::Ne => {}
            }
            if seen == MAX_CONDITIONS {
                break;
            }
        }
        (lo, hi)
    }

    /// Bounds of `v` from its definition alone (operands bounded at `at`).
    fn defined_range(&self, func: &Function, v: Value, at: Block, extra: Option<Condition>, depth: u32) -> (i64, i64) {
        let inst = match func.value_def(v) {
            ValueDef::Const(c) => return c.as_int().map_or(FULL, |c| (c as i64, c as i64)),
            ValueDef::Inst(i) => i,
            _ => return FULL,
        };
        if func.value_type(v) != Type::I32 {
            return FULL;
        }
        let op = func.opcode(inst);
        if op == Opcode::Zext {
            return (0, 1);
        }
        if op == Opcode::Phi {
            return self.phi_range[v];
        }
        if depth >= MAX_DEPTH {
            return FULL;
        }
        let args = func.args(inst);
        let operand = |i: usize| self.range_with(func, args[i], at, extra, depth + 1);
        let fits = |lo: i64, hi: i64| if lo >= I32_MIN && hi <= I32_MAX { (lo, hi) } else { FULL };
        match op {
            Opcode::Add => {
                let ((alo, ahi), (blo, bhi)) = (operand(0), operand(1));
                fits(alo + blo, ahi + bhi)
            }
            Opcode::Sub => {
                let ((alo, ahi), (blo, bhi)) = (operand(0), operand(1));
                fits(alo - bhi, ahi - blo)
            }
            Opcode::Mul => {
                let ((alo, ahi), (blo, bhi)) = (operand(0), operand(1));
                let corners = [alo * blo, alo * bhi, ahi * blo, ahi * bhi];
                fits(*corners.iter().min().expect("four"), *corners.iter().max().expect("four"))
            }
            Opcode::SRem => {
                // The result has the dividend's sign and a smaller magnitude than both
                // operands (a zero divisor traps: no result).
                let (alo, ahi) = operand(0);
                let bound = match func.as_int_const(args[1]) {
                    Some(0) => return FULL,
                    Some(d) => (d as i64).abs() - 1,
                    None => I32_MAX,
                };
                let lo = if alo >= 0 { 0 } else { (-bound).max(alo) };
                let hi = if ahi <= 0 { 0 } else { bound.min(ahi) };
                (lo, hi)
            }
            Opcode::SDiv => match func.as_int_const(args[1]) {
                Some(d) if d > 0 => {
                    let (alo, ahi) = operand(0);
                    (alo / d as i64, ahi / d as i64)
                }
                // `x / -1` traps for `INT_MIN`, and is `-x` otherwise.
                Some(d) if d < -1 => {
                    let (alo, ahi) = operand(0);
                    (ahi / d as i64, alo / d as i64)
                }
                Some(_) => FULL,
                None => {
                    let ((alo, ahi), (blo, _)) = (operand(0), operand(1));
                    if alo >= 0 && blo >= 0 { (0, ahi) } else { FULL }
                }
            },
            Opcode::Select => {
                let ((alo, ahi), (blo, bhi)) = (operand(1), operand(2));
                (alo.min(blo), ahi.max(bhi))
            }
            _ => FULL,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::parse_module;

    /// For each `sdiv`/`srem` of the first function, in layout order: whether its dividend is
    /// proven non-negative where it executes.
    fn dividends_non_negative(text: &str) -> Vec<bool> {
        let m = parse_module(text).unwrap_or_else(|e| panic!("{e}"));
        let func = m.func(m.func_refs()[0]);
        let nn = NonNegative::compute(func);
        func.all_insts()
            .filter(|&(_, i)| matches!(func.opcode(i), Opcode::SDiv | Opcode::SRem))
            .map(|(b, i)| nn.is_non_negative(func, func.args(i)[0], b))
            .collect()
    }

    #[test]
    fn loop_counter_from_zero_below_a_bound() {
        // Also after a zero-trip loop (`n <= 0`): the counter is then its start, 0.
        let text = "func @f(%n: i32) -> i32 {
bb0:
    jump bb1
bb1:
    %i = phi i32 [bb0: 0], [bb2: %j]
    %c = icmp lt %i, %n
    br %c, bb2, bb3
bb2:
    %q = sdiv i32 %i, 2
    %j = add i32 %i, 1
    jump bb1
bb3:
    %r = srem i32 %i, 2
    ret %r
}
";
        assert_eq!(dividends_non_negative(text), [true, true]);
        let from_minus_one = text.replace("[bb0: 0]", "[bb0: -1]");
        assert_eq!(dividends_non_negative(&from_minus_one), [false, false]);
    }

    #[test]
    fn counter_without_a_bound_may_wrap() {
        // `i + 1` wraps to INT_MIN after 2^31 steps: nothing bounds `i` from above.
        let text = "func @f() -> i32 {
bb0:
    jump bb1
bb1:
    %i = phi i32 [bb0: 0], [bb1: %j]
    %q = sdiv i32 %i, 2
    %j = add i32 %i, 1
    %g = call i32 getint()
    %c = icmp ne %g, 0
    br %c, bb1, bb2
bb2:
    ret %q
}
";
        assert_eq!(dividends_non_negative(text), [false]);
    }

    #[test]
    fn rotated_loop_bounded_on_the_back_edge() {
        let text = "func @f(%n: i32) -> i32 {
bb0:
    %e = icmp gt %n, 0
    br %e, bb1, bb2
bb1:
    %i = phi i32 [bb0: 0], [bb1: %j]
    %q = sdiv i32 %i, 4
    %j = add i32 %i, 1
    %c = icmp lt %j, 100
    br %c, bb1, bb2
bb2:
    ret 0
}
";
        assert_eq!(dividends_non_negative(text), [true]);
        let m = parse_module(text).expect("parses");
        let func = m.func(m.func_refs()[0]);
        let nn = NonNegative::compute(func);
        let header = func.layout()[1];
        let i = func.result(func.first_inst(header).expect("phi")).expect("value");
        assert_eq!(nn.range(func, i, header), (0, 99));
    }

    #[test]
    fn halving_guarded_by_the_loop_test() {
        // Inside the loop `b > 0`; after it `b` may be the negative argument.
        let text = "func @f(%x: i32) -> i32 {
bb0:
    jump bb1
bb1:
    %b = phi i32 [bb0: %x], [bb2: %h]
    %c = icmp gt %b, 0
    br %c, bb2, bb3
bb2:
    %r = srem i32 %b, 2
    %h = sdiv i32 %b, 2
    jump bb1
bb3:
    %s = srem i32 %b, 2
    ret %s
}
";
        assert_eq!(dividends_non_negative(text), [true, true, false]);
    }

    #[test]
    fn false_edge_and_negations() {
        // `x < 0` false: `x >= 0`. On the true side `0 - x` is INT_MIN for `x == INT_MIN`;
        // `x / -1` is at most 0; `x / -2` for `x <= 0` is at least 0.
        let text = "func @f(%x: i32) -> i32 {
bb0:
    %c = icmp lt %x, 0
    br %c, bb1, bb2
bb1:
    %n = sub i32 0, %x
    %a = sdiv i32 %n, 2
    %d = sdiv i32 %x, -2
    %e = srem i32 %d, 2
    ret %a
bb2:
    %r = srem i32 %x, 2
    %m = sdiv i32 %x, -1
    %t = srem i32 %m, 2
    %u = srem i32 %r, 8
    ret %t
}
";
        assert_eq!(dividends_non_negative(text), [false, false, true, true, true, false, true]);
    }

    #[test]
    fn remainders_keep_the_dividends_sign() {
        // `INT_MIN % 2 == 0` but `-1 % 2 == -1`: a remainder of an unknown value may be
        // negative.
        let text = "func @f(%x: i32) -> i32 {
bb0:
    %r = srem i32 %x, 2
    %s = srem i32 %r, 2
    %z = zext %c
    %q = sdiv i32 %z, 2
    ret %s
}
";
        let text = text.replace("%z = zext %c", "%c = icmp eq %x, 3\n    %z = zext %c");
        assert_eq!(dividends_non_negative(&text), [false, false, true]);
    }

    #[test]
    fn irreducible_cycle() {
        // bb1 and bb2 are both entered from bb0; each phi takes the other's value. With
        // non-negative entries both stay non-negative; an unknown entry spreads to both.
        let text = "func @f(%x: i32, %k: i1) -> i32 {
bb0:
    br %k, bb1, bb2
bb1:
    %p = phi i32 [bb0: 5], [bb2: %q1]
    %p1 = srem i32 %p, 7
    br %k, bb2, bb3
bb2:
    %q = phi i32 [bb0: 3], [bb1: %p1]
    %q1 = sdiv i32 %q, 2
    br %k, bb1, bb3
bb3:
    ret 0
}
";
        assert_eq!(dividends_non_negative(text), [true, true]);
        let unknown = text.replace("[bb0: 3]", "[bb0: %x]");
        assert_eq!(dividends_non_negative(&unknown), [false, false]);
    }
}
