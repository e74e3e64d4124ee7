//! `simplify-cfg` (catalogue: SimplifyCFG, FuseBasicBlock + FuseImmediatelyBranch): local
//! clean-ups of the control-flow graph.
//!
//! Why: lowering produces a block per construct, many of them joined by plain jumps (a loop
//! header `while (1)` that only jumps to the body, an `if` arm that only `break`s), and
//! folding branches leaves chains of blocks with one predecessor each. Fewer, longer blocks
//! mean fewer branches in the output and more code for local optimisations to see at once.
//!
//! Three rewrites, applied until none applies:
//! 1. `br c, b, b` → `jump b` (the phis of `b` keep one of the two identical entries);
//! 2. merge: when `p` ends in `jump s` and that is the only edge into `s` (`s` ≠ `p`, not the
//!    entry), the instructions of `s` move to the end of `p` and `s` disappears. The phis of
//!    `s` have exactly one entry and are replaced by its value; successors of `s` now name
//!    `p` as their predecessor;
//! 3. jump threading: a block `e` (not the entry) that contains nothing but `jump d` (`d` ≠
//!    `e`) — or phis and `jump d`, where the phis are used only by the phis of `d` on their
//!    entries for `e` (the joins of an else-if cascade) — is bypassed: every predecessor `p`
//!    branches to `d` directly, and `e` is deleted. Each phi of `d` gives the new edge from `p`
//!    the value it had for `e`, or, when that value is a phi of `e`, that phi's value for `p`.
//!    Such a value is available at the end of `p`: it is either `e`'s phi operand for `p`, or
//!    defined above `e` (which defines nothing else) and so dominating every predecessor of
//!    `e`. Threading is only done when it creates no conflict: if `p` already has an edge to
//!    `d`, every phi of `d` must have the same value for it as the new edge would carry (a
//!    phi cannot tell two edges from one block apart).
//!
//! Predecessor lists are kept up to date incrementally, so a sweep is linear in the size of
//! the function. Blocks without predecessors are left alone (`unreachable-blocks` deletes
//! them).

use cranelift_entity::SecondaryMap;
use smallvec::SmallVec;

use super::constfold::remove_one_phi_entry;
use super::{FunctionCx, FunctionPass};
use crate::ir::{Block, Function, Inst, InstData, Opcode, Value};

pub struct SimplifyCfg;

/// Predecessors per block, one entry per edge.
type Preds = SecondaryMap<Block, SmallVec<[Block; 4]>>;

#[derive(Default)]
struct Stats {
    branches: u64,
    merged: u64,
    threaded: u64,
}

impl FunctionPass for SimplifyCfg {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let mut preds: Preds = SecondaryMap::new();
        for &b in func.layout() {
            for &s in func.successors(b) {
                preds[s].push(b);
            }
        }
        let mut stats = Stats::default();
        loop {
            let before = stats.branches + stats.merged + stats.threaded;
            for b in func.layout().to_vec() {
                if !func.is_block_live(b) {
                    continue;
                }
                same_target_branch(func, &mut preds, b, &mut stats);
                while merge_successor(func, &mut preds, b) {
                    stats.merged += 1;
                }
                if thread_jump(func, &mut preds, b) {
                    stats.threaded += 1;
                }
            }
            if stats.branches + stats.merged + stats.threaded == before {
                break;
            }
        }
        cx.count("branches_simplified", stats.branches);
        cx.count("blocks_merged", stats.merged);
        cx.count("jumps_threaded", stats.threaded);
        stats.branches + stats.merged + stats.threaded > 0
    }
}

/// Rewrite 1.
fn same_target_branch(func: &mut Function, preds: &mut Preds, b: Block, stats: &mut Stats) {
    let Some(term) = func.terminator(b) else { return };
    if func.opcode(term) != Opcode::Br || func.targets(term)[0] != func.targets(term)[1] {
        return;
    }
    let dest = func.targets(term)[0];
    remove_one_phi_entry(func, dest, b);
    remove_one(&mut preds[dest], b);
    func.replace_inst(term, InstData::jump(dest));
    stats.branches += 1;
}

/// Rewrite 2: merges the single-predecessor successor of `b` into `b`.
fn merge_successor(func: &mut Function, preds: &mut Preds, b: Block) -> bool {
    let Some(term) = func.terminator(b) else { return false };
    if func.opcode(term) != Opcode::Jump {
        return false;
    }
    let s = func.targets(term)[0];
    if s == b || s == func.entry() || preds[s].as_slice() != [b] {
        return false;
    }
    for phi in func.block_phis(s).collect::<SmallVec<[Inst; 8]>>() {
        let result = func.result(phi).expect("phi has a result");
        let v = match func.args(phi) {
            [v] if *v != result => *v,
            _ => func.undef(func.value_type(result)),
        };
        func.replace_all_uses(result, v);
        func.remove_inst(phi);
    }
    func.remove_inst(term);
    for inst in func.block_insts_vec(s) {
        func.detach_inst(inst);
        func.append_inst(b, inst);
    }
    let succs: SmallVec<[Block; 2]> = func.successors(b).iter().copied().collect();
    for &t in &succs {
        for p in preds[t].iter_mut() {
            if *p == s {
                *p = b;
            }
        }
        func.rename_phi_pred(t, s, b);
    }
    preds[s].clear();
    func.remove_block(s);
    true
}

/// Rewrite 3: bypasses `e` if it only jumps on (possibly after phis that only feed the
/// phis of its destination).
fn thread_jump(func: &mut Function, preds: &mut Preds, e: Block) -> bool {
    let Some(term) = func.terminator(e) else { return false };
    if func.opcode(term) != Opcode::Jump || e == func.entry() || preds[e].is_empty() {
        return false;
    }
    let d = func.targets(term)[0];
    if d == e {
        return false;
    }
    let e_phis: SmallVec<[Inst; 8]> = func.block_phis(e).collect();
    if func.block_insts(e).count() != e_phis.len() + 1 || !e_phis.iter().all(|&phi| only_forwarded(func, phi, e, d)) {
        return false;
    }
    let d_phis: SmallVec<[Inst; 8]> = func.block_phis(d).collect();
    let mut distinct_preds: SmallVec<[Block; 4]> = SmallVec::new();
    for &p in &preds[e] {
        if !distinct_preds.contains(&p) {
            distinct_preds.push(p);
        }
    }
    // The value each phi of `d` receives on the new edge p → d: what it received from `e`,
    // looked through `e`'s own phis.
    let through = |func: &Function, phi: Inst, p: Block| -> Value {
        let v = incoming(func, phi, e).expect("a phi has an entry per predecessor");
        match func.def_inst(v) {
            Some(def) if e_phis.contains(&def) => incoming(func, def, p).expect("a phi has an entry per predecessor"),
            _ => v,
        }
    };
    // Conflict check: a predecessor already branching to `d` must agree on every phi.
    for &p in &distinct_preds {
        if func.successors(p).contains(&d)
            && d_phis.iter().any(|&phi| incoming(func, phi, p) != Some(through(func, phi, p)))
        {
            return false;
        }
    }
    let new_entries: Vec<(Block, usize, SmallVec<[Value; 8]>)> = distinct_preds
        .iter()
        .map(|&p| {
            let edges = func.successors(p).iter().filter(|&&s| s == e).count();
            (p, edges, d_phis.iter().map(|&phi| through(func, phi, p)).collect())
        })
        .collect();
    remove_one_phi_entry(func, d, e);
    remove_one(&mut preds[d], e);
    for (p, edges, values) in new_entries {
        func.retarget_edge(p, e, d);
        for _ in 0..edges {
            preds[d].push(p);
            for (&phi, &v) in d_phis.iter().zip(&values) {
                func.push_phi_incoming(phi, p, v);
            }
        }
    }
    preds[e].clear();
    // `e`'s phis lost their last uses with `d`'s entries for `e`.
    func.remove_block(e);
    true
}

/// The value a phi receives from `pred`.
fn incoming(func: &Function, phi: Inst, pred: Block) -> Option<Value> {
    func.targets(phi).iter().position(|&p| p == pred).map(|i| func.args(phi)[i])
}

/// True when the phi of `e` is used only by phis of `d`, on their entries for `e`.
fn only_forwarded(func: &Function, phi: Inst, e: Block, d: Block) -> bool {
    let Some(v) = func.result(phi) else { return false };
    func.users(v).iter().all(|&u| {
        func.opcode(u) == Opcode::Phi
            && func.inst_block(u) == Some(d)
            && func.args(u).iter().zip(func.targets(u)).all(|(&a, &b)| a != v || b == e)
    })
}

fn remove_one(list: &mut SmallVec<[Block; 4]>, b: Block) {
    if let Some(i) = list.iter().position(|&x| x == b) {
        list.remove(i);
    }
}
