//! Phi invariants `p ≠ k`: constants an `i32` phi never holds.
//!
//! Why: a recursive function turned into a loop by `tail-recursion` and inlined into itself
//! by `recursive-inline` keeps its argument tests at every level. In `ack(m, n)` the inner
//! call `ack(m, n - 1)` starts with `m == 0` on an `m` that the enclosing level has already
//! tested non-zero, and each level's loop header receives `m` from that test's false edge
//! or as `m - 1` on the edge of the test `m - 1 == 0`. Difference constraints
//! ([`Constraints`]) cannot state `m ≠ 0`; this analysis proves it.
//!
//! Candidates are the pairs `(p, k)` of a phi `p` and a constant `k` it is compared with
//! (`icmp eq` or `ne`, either operand order). A candidate survives when, for every incoming
//! value `v` on an edge `q → b` (the phi's block), `v ≠ k` holds at the end of `q`:
//! * `v` is a constant other than `k`;
//! * `v` is a phi with a surviving candidate `(v, k)` (`p` itself included);
//! * the bounds [`Constraints::bounds_on_edge`] gives for `v` on the edge exclude `k`;
//! * `v` is compared with `k` by an `icmp` that [`Constraints::known_on_edge`] knows on the
//!   edge (`eq` false or `ne` true).
//! Failing candidates are dropped and the rest re-checked until none fails (a greatest
//! fixpoint, as for the phi invariants of [`Constraints`]). By induction over the execution,
//! every survivor holds each time its phi is entered, so wherever the phi is defined: the
//! third and fourth checks are facts that hold without any assumption, and the second one
//! only uses survivors at earlier entries.
//!
//! Assumes verifier-clean SSA; the result describes the function as it was when computed.

use rustc_hash::FxHashSet;

use super::constraints::Constraints;
use crate::ir::{Function, Inst, IntCC, Opcode, Type, Value};

/// The proven pairs `(p, k)`: phi `p` never holds `k`.
pub struct Excluded {
    pairs: FxHashSet<(Value, i32)>,
}

impl Excluded {
    /// Proves the candidates of `func` (see the module documentation) with the facts of `facts`.
    pub fn compute(func: &Function, facts: &Constraints<'_>) -> Excluded {
        let mut candidates: Vec<(Inst, Value, i32)> = Vec::new();
        for &b in func.layout() {
            for inst in func.block_insts(b) {
                if let Some((v, k)) = compared_with_constant(func, inst)
                    && let Some(phi) = func.def_inst(v).filter(|&d| func.opcode(d) == Opcode::Phi)
                    && func.value_type(v) == Type::I32
                    && !candidates.iter().any(|&(_, w, c)| (w, c) == (v, k))
                {
                    candidates.push((phi, v, k));
                }
            }
        }
        let mut pairs: FxHashSet<(Value, i32)> = candidates.iter().map(|&(_, v, k)| (v, k)).collect();
        loop {
            let failing: Vec<(Value, i32)> = candidates
                .iter()
                .filter(|&&(_, v, k)| pairs.contains(&(v, k)))
                .filter(|&&(phi, _, k)| !holds_on_every_edge(func, facts, &pairs, phi, k))
                .map(|&(_, v, k)| (v, k))
                .collect();
            if failing.is_empty() {
                break;
            }
            for pair in failing {
                pairs.remove(&pair);
            }
        }
        Excluded { pairs }
    }

    /// Whether the phi `p` never holds `k`.
    pub fn excludes(&self, p: Value, k: i32) -> bool {
        self.pairs.contains(&(p, k))
    }
}

/// `(v, k)` for `icmp eq|ne v, k` or `icmp eq|ne k, v` with a constant `k` and a non-constant `v`.
fn compared_with_constant(func: &Function, inst: Inst) -> Option<(Value, i32)> {
    let Opcode::Icmp(IntCC::Eq | IntCC::Ne) = func.opcode(inst) else { return None };
    let (x, y) = (func.args(inst)[0], func.args(inst)[1]);
    match (func.as_int_const(x), func.as_int_const(y)) {
        (None, Some(k)) => Some((x, k)),
        (Some(k), None) => Some((y, k)),
        _ => None,
    }
}

fn holds_on_every_edge(func: &Function, facts: &Constraints<'_>, pairs: &FxHashSet<(Value, i32)>, phi: Inst, k: i32) -> bool {
    let Some(b) = func.inst_block(phi) else { return false };
    func.inst(phi).phi_incoming().all(|(q, v)| {
        if let Some(c) = func.as_int_const(v) {
            return c != k;
        }
        if pairs.contains(&(v, k)) {
            return true;
        }
        let (lo, hi) = facts.bounds_on_edge(q, b, v);
        if (k as i64) < lo || (k as i64) > hi {
            return true;
        }
        func.users(v).iter().any(|&u| {
            let Some((w, c)) = compared_with_constant(func, u) else { return false };
            let Some(cmp) = func.result(u) else { return false };
            let Opcode::Icmp(cc) = func.opcode(u) else { return false };
            w == v && c == k && facts.known_on_edge(q, b, cmp) == Some(cc == IntCC::Ne)
        })
    })
}
