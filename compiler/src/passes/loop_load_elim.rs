//! `loop-load-elim`: a load that reads what the previous iteration of its loop read or wrote
//! takes that value from a phi instead of memory.
//!
//! Why: dynamic-programming and stencil loops read `prev[j - 1]` after reading `prev[j]` one
//! iteration earlier, and `cur[j - 1]` right after storing `cur[j]`: one load per iteration
//! each that a register carrying the value around the loop makes unnecessary (gcc gets these
//! from PRE with phi translation). The same happens with an address that does not change at
//! all: `a[i] = a[i] + x` in a loop over `j` reloads what it stored.
//!
//! Which loads: in a loop `L` with a preheader and one latch, a load `x` of `L` itself (not of
//! an inner loop) whose address has one root (one global, stack slot or parameter array) and
//! a byte offset `O(j)` linear in a header phi `j` stepping by a constant `s` on the back
//! edge, every other term defined outside `L` — or no `j` at all (an invariant address). The
//! *source* is a load or store `A` of `L` itself whose block dominates the latch, with the
//! same root and offset `O(j + s)`: what `A` accessed in one iteration is what `x` reads in
//! the next. Then `x`'s value is a new header phi: `A`'s loaded or stored value from the
//! latch, and, from the preheader, a load of `O(init)` (the address computation cloned with
//! `j` replaced by its initial value).
//!
//! Soundness conditions:
//! * nothing else in `L` (inner loops included: stores, `memzero`, calls by their summaries)
//!   may write `x`'s location in any iteration ([`Context::AcrossIterations`]), so between
//!   `A` in one iteration and `x` in the next, and between the preheader and `x` in the first
//!   iteration, the word keeps its value; `A` itself, when a store to an invariant address,
//!   must come after `x` in the iteration (else `x` would read this iteration's store, which
//!   `load-elim` forwards anyway); a store `A` to a moving address writes a different word
//!   than `x` reads within one iteration (`O(j + s) ≠ O(j)` when `s·coef ≠ 0`);
//! * `x` is guaranteed to execute in the first iteration before any observable effect
//!   ([`guaranteed_to_execute`]), so the preheader load reads a word the program reads anyway,
//!   at the same contents, and cannot introduce a trap.
//!
//! Chains work: when `A` is itself a load replaced by a phi, the new phi carries that phi's
//! value. Assumes verifier-clean SSA and a reducible loop; the CFG is unchanged.

use rustc_hash::FxHashMap;

use super::licm::guaranteed_to_execute;
use super::loop_clone::{ValueMap, clone_before, phi_input};
use super::{FunctionCx, FunctionPass};
use crate::analysis::counted::step_of;
use crate::analysis::funcinfo::FuncInfo;
use crate::analysis::pointers::{LinearExpr, Root};
use crate::analysis::{AliasAnalysis, ControlFlowGraph, Context, DomTree, Loop, LoopForest, MemLoc};
use crate::ir::{Function, Inst, InstData, Opcode, Value, ValueDef};

pub struct LoopLoadElim;

/// Largest number of instructions cloned to compute a first-iteration address.
const MAX_ADDRESS_CHAIN: usize = 8;

impl FunctionPass for LoopLoadElim {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let loops = cx.analyses.loops(func);
        if loops.num_loops() == 0 || !loops.irreducible_edges().is_empty() {
            return false;
        }
        let cfg = cx.analyses.cfg(func);
        let domtree = cx.analyses.domtree(func);
        let info = cx.funcinfo(func);
        // Replaced loads and their phis (a later match may carry one as its source).
        let mut replaced: FxHashMap<Inst, Value> = FxHashMap::default();
        // The alias analysis covers the whole function: computed again only after a loop
        // changed the function, not once per loop (which is quadratic in a function with
        // many loops).
        let mut aa: Option<AliasAnalysis<'_>> = None;
        for l in loops.loops_inner_first() {
            let aa_now = aa.get_or_insert_with(|| AliasAnalysis::new(&info, cx.func_ref, func));
            let matches = find_matches(func, &cfg, &domtree, &loops, &info, aa_now, l);
            if !matches.is_empty() {
                aa = None;
            }
            for m in matches {
                if let Some(phi) = apply(func, &loops, &cfg, l, &m, &replaced) {
                    replaced.insert(m.load, phi);
                }
            }
        }
        cx.count("loads_replaced", replaced.len() as u64);
        !replaced.is_empty()
    }
}

/// A load to replace and where its value comes from.
struct Match {
    load: Inst,
    /// The load or store whose value the next iteration reads.
    source: Inst,
    /// The header phi the load's address depends on (`None` for an invariant address).
    iv: Option<Value>,
}

/// An access's root and byte offset.
fn location(func: &Function, aa: &AliasAnalysis<'_>, addr: Value) -> Option<(Root, LinearExpr)> {
    let p = aa.pointer(func, addr);
    let (root, off) = p.single()?;
    Some((root, off.clone()))
}

fn find_matches(
    func: &Function,
    cfg: &ControlFlowGraph,
    domtree: &DomTree,
    loops: &LoopForest,
    info: &FuncInfo,
    aa: &AliasAnalysis<'_>,
    l: Loop,
) -> Vec<Match> {
    let mut out = Vec::new();
    let Some(pre) = loops.preheader(cfg, l) else { return out };
    let [latch] = loops.latches(l) else { return out };
    let (latch, header) = (*latch, loops.header(l));
    if !cfg.is_reachable(pre) {
        return out;
    }
    let in_loop = |v: Value| match func.value_def(v) {
        ValueDef::Inst(i) => func.inst_block(i).is_some_and(|b| loops.contains(l, b)),
        _ => false,
    };
    // Induction variables: header phi → step.
    let mut steps: FxHashMap<Value, i32> = FxHashMap::default();
    for phi in func.block_phis(header) {
        let Some(p) = func.result(phi) else { continue };
        if let Some(next) = phi_input(func, phi, latch)
            && let Some(s) = step_of(func, p, next)
        {
            steps.insert(p, s);
        }
    }
    // Accesses of the loop itself whose block dominates the latch: possible sources.
    let mut sources: Vec<(Inst, Root, LinearExpr)> = Vec::new();
    let mut writers: Vec<Inst> = Vec::new();
    for &b in loops.blocks(l) {
        for inst in func.block_insts(b) {
            let op = func.opcode(inst);
            if matches!(op, Opcode::Store | Opcode::MemZero { .. } | Opcode::Call(_) | Opcode::Alloca { .. }) {
                writers.push(inst);
            }
            if loops.innermost_loop(b) == Some(l)
                && domtree.dominates(b, latch)
                && matches!(op, Opcode::Load | Opcode::Store)
                && let Some((root, off)) = location(func, aa, func.args(inst)[0])
            {
                sources.push((inst, root, off));
            }
        }
    }
    for &b in loops.blocks(l) {
        if loops.innermost_loop(b) != Some(l) {
            continue;
        }
        for x in func.block_insts(b) {
            if func.opcode(x) != Opcode::Load {
                continue;
            }
            let addr = func.args(x)[0];
            let Some((root, off)) = location(func, aa, addr) else { continue };
            // The varying part must be one induction variable; everything else invariant.
            let varying: Vec<(Value, i32)> = off.terms().iter().copied().filter(|&(v, _)| in_loop(v)).collect();
            let (iv, shift) = match varying.as_slice() {
                [] => (None, 0i32),
                [(v, coef)] => match steps.get(v) {
                    Some(&s) => (Some(*v), coef.wrapping_mul(s)),
                    None => continue,
                },
                _ => continue,
            };
            if iv.is_some() && shift == 0 {
                continue;
            }
            // The source accessed O(j + s) = O(j) + shift.
            let want = off.plus_scaled(&LinearExpr::constant(shift), 1);
            let Some(&(source, _, _)) = sources.iter().find(|(a, r, o)| *a != x && *r == root && *o == want) else {
                continue;
            };
            if iv.is_none() && func.opcode(source) == Opcode::Store && !comes_before(func, domtree, x, source) {
                continue;
            }
            let loc = MemLoc::word(addr);
            let clobbered = writers
                .iter()
                .any(|&w| w != source && aa.inst_may_write(func, w, loc, Context::AcrossIterations));
            if clobbered || !guaranteed_to_execute(func, cfg, domtree, loops, info, l, x) {
                continue;
            }
            if address_chain(func, loops, l, addr, iv).is_none() {
                continue;
            }
            out.push(Match { load: x, source, iv });
        }
    }
    out
}

/// `a` executes before `b` in every iteration that executes both (`a` dominates `b`).
fn comes_before(func: &Function, domtree: &DomTree, a: Inst, b: Inst) -> bool {
    domtree.inst_dominates(func, a, b)
}

/// The instructions of `l` computing `addr` (in definition order), if they are all pure,
/// non-trapping and depend on no loop value but `iv`.
fn address_chain(func: &Function, loops: &LoopForest, l: Loop, addr: Value, iv: Option<Value>) -> Option<Vec<Inst>> {
    let mut chain: Vec<Inst> = Vec::new();
    let mut stack = vec![addr];
    while let Some(v) = stack.pop() {
        if Some(v) == iv {
            continue;
        }
        let Some(d) = func.def_inst(v) else { continue };
        if !func.inst_block(d).is_some_and(|b| loops.contains(l, b)) || chain.contains(&d) {
            continue;
        }
        let op = func.opcode(d);
        if !op.is_pure() || op.may_trap() || chain.len() >= MAX_ADDRESS_CHAIN {
            return None;
        }
        chain.push(d);
        stack.extend(func.args(d).iter().copied());
    }
    // Operands before users: definition order within the loop follows dominance, and these
    // instructions use only each other, `iv` and outside values.
    chain.sort_by_key(|&i| (loops_order_key(func, loops, l, i), func.inst_seq(i)));
    Some(chain)
}

/// Position of an instruction's block in the loop's reverse post-order.
fn loops_order_key(func: &Function, loops: &LoopForest, l: Loop, i: Inst) -> usize {
    let b = func.inst_block(i);
    loops.blocks(l).iter().position(|&x| Some(x) == b).unwrap_or(usize::MAX)
}

/// Rewrites one match; returns the phi now standing for the load.
fn apply(
    func: &mut Function,
    loops: &LoopForest,
    cfg: &ControlFlowGraph,
    l: Loop,
    m: &Match,
    replaced: &FxHashMap<Inst, Value>,
) -> Option<Value> {
    let (Some(pre), [latch]) = (loops.preheader(cfg, l), loops.latches(l)) else { return None };
    let (latch, header) = (*latch, loops.header(l));
    if func.inst_block(m.load).is_none() {
        return None;
    }
    let carried = match func.opcode(m.source) {
        Opcode::Load => match replaced.get(&m.source) {
            Some(&v) => v,
            None => func.result(m.source)?,
        },
        Opcode::Store => func.args(m.source)[1],
        _ => return None,
    };
    let addr = func.args(m.load)[0];
    let chain = address_chain(func, loops, l, addr, m.iv)?;
    let mut map = ValueMap::default();
    if let Some(iv) = m.iv {
        let init = phi_input(func, func.def_inst(iv)?, pre)?;
        map.insert(iv, init);
    }
    let term = func.terminator(pre)?;
    clone_before(func, &chain, &mut map, term);
    let first_addr = super::loop_clone::mapped(&map, addr);
    let ty = func.inst(m.load).ty;
    let first = func.insert_value_before(term, InstData::load(first_addr, ty));
    let phi = func.create_inst(InstData::phi(ty, &[(pre, first), (latch, carried)]));
    func.prepend_inst(header, phi);
    let new = func.result(phi).expect("a phi has a result");
    let old = func.result(m.load).expect("a load has a result");
    func.replace_all_uses(old, new);
    func.remove_inst(m.load);
    Some(new)
}
