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

use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

use super::constraints::Constraints;
use crate::ir::{Function, Inst, IntCC, Opcode, Type, Value};

/// The proven pairs `(p, k)`: phi `p` never holds `k`.
pub struct Excluded {
    pairs: FxHashSet<(Value, i32)>,
}

impl Excluded {
    /// Proves the candidates of `func` (see the module documentation) with the facts of `facts`.
    pub fn compute(func: &Function, facts: &Constraints<'_>) -> Excluded {
        let mut phis: Vec<(Inst, Value, i32)> = Vec::new();
        let mut pairs: FxHashSet<(Value, i32)> = FxHashSet::default();
        for &b in func.layout() {
            for inst in func.block_insts(b) {
                if let Some((v, k, _)) = compared_with_constant(func, inst)
                    && let Some(phi) = func.def_inst(v).filter(|&d| func.opcode(d) == Opcode::Phi)
                    && func.value_type(v) == Type::I32
                    && pairs.insert((v, k))
                {
                    phis.push((phi, v, k));
                }
            }
        }
        // What each candidate needs besides the facts that hold without assumptions: the
        // candidates of the phis among its incoming values (`None`: some value fails outright).
        let mut needs: FxHashMap<(Value, i32), SmallVec<[(Value, i32); 2]>> = FxHashMap::default();
        for &(phi, v, k) in &phis {
            match assumptions(func, facts, &pairs, phi, k) {
                Some(n) => {
                    needs.insert((v, k), n);
                }
                None => {
                    pairs.remove(&(v, k));
                }
            }
        }
        loop {
            let failing: Vec<(Value, i32)> = needs
                .iter()
                .filter(|&(pair, n)| pairs.contains(pair) && n.iter().any(|d| !pairs.contains(d)))
                .map(|(&pair, _)| pair)
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

    /// The outcome of `inst` when it is `icmp eq|ne p, k` on a phi `p` that never holds `k`.
    pub fn decides(&self, func: &Function, inst: Inst) -> Option<bool> {
        let (v, k, cc) = compared_with_constant(func, inst)?;
        self.pairs.contains(&(v, k)).then_some(cc == IntCC::Ne)
    }
}

/// `(v, k, cc)` for `icmp cc v, k` or `icmp cc k, v` with `cc` `eq` or `ne`, a constant `k`
/// and a non-constant `v`.
fn compared_with_constant(func: &Function, inst: Inst) -> Option<(Value, i32, IntCC)> {
    let Opcode::Icmp(cc @ (IntCC::Eq | IntCC::Ne)) = func.opcode(inst) else { return None };
    let (x, y) = (func.args(inst)[0], func.args(inst)[1]);
    match (func.as_int_const(x), func.as_int_const(y)) {
        (None, Some(k)) => Some((x, k, cc)),
        (Some(k), None) => Some((y, k, cc)),
        _ => None,
    }
}

/// For the candidate `(phi, k)`: the candidates its incoming values need (the second check
/// of the module documentation), or `None` when an incoming value satisfies no check.
fn assumptions(
    func: &Function,
    facts: &Constraints<'_>,
    candidates: &FxHashSet<(Value, i32)>,
    phi: Inst,
    k: i32,
) -> Option<SmallVec<[(Value, i32); 2]>> {
    let b = func.inst_block(phi)?;
    let mut needs = SmallVec::new();
    for (q, v) in func.inst(phi).phi_incoming() {
        if let Some(c) = func.as_int_const(v) {
            if c == k {
                return None;
            }
            continue;
        }
        let (lo, hi) = facts.bounds_on_edge(q, b, v);
        let known_unequal = func.users(v).iter().any(|&u| {
            matches!(compared_with_constant(func, u), Some((w, c, cc)) if w == v && c == k
                && func.result(u).is_some_and(|cmp| facts.known_on_edge(q, b, cmp) == Some(cc == IntCC::Ne)))
        });
        if (k as i64) < lo || (k as i64) > hi || known_unequal {
            continue;
        }
        if !candidates.contains(&(v, k)) {
            return None;
        }
        needs.push((v, k));
    }
    Some(needs)
}
