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
//!    `e`) is bypassed — every predecessor branches to `d` directly — and deleted. The phis
//!    of `d` give each new edge the value they had for `e`. That is only done when it creates
//!    no conflict: if a predecessor of `e` already has an edge to `d`, every phi of `d` must
//!    have the same value for it as for `e` (a phi cannot tell two edges from one block
//!    apart). The value for `e` is defined above `e` (which defines nothing), so it dominates
//!    every predecessor of `e` and may be used on the new edges.
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

/// Rewrite 3: bypasses `e` if it only jumps on.
fn thread_jump(func: &mut Function, preds: &mut Preds, e: Block) -> bool {
    let (Some(first), Some(term)) = (func.first_inst(e), func.terminator(e)) else { return false };
    if first != term || func.opcode(term) != Opcode::Jump || e == func.entry() || preds[e].is_empty() {
        return false;
    }
    let d = func.targets(term)[0];
    if d == e {
        return false;
    }
    let phis: SmallVec<[Inst; 8]> = func.block_phis(d).collect();
    let value_for = |func: &Function, phi: Inst, pred: Block| -> Option<Value> {
        func.targets(phi).iter().position(|&p| p == pred).map(|i| func.args(phi)[i])
    };
    let mut distinct_preds: SmallVec<[Block; 4]> = SmallVec::new();
    for &p in &preds[e] {
        if !distinct_preds.contains(&p) {
            distinct_preds.push(p);
        }
    }
    // Conflict check: a predecessor already branching to `d` must agree on every phi.
    for &p in &distinct_preds {
        if func.successors(p).contains(&d) && phis.iter().any(|&phi| value_for(func, phi, p) != value_for(func, phi, e))
        {
            return false;
        }
    }
    let values: SmallVec<[Value; 8]> =
        phis.iter().map(|&phi| value_for(func, phi, e).expect("a phi has an entry per predecessor")).collect();
    remove_one_phi_entry(func, d, e);
    remove_one(&mut preds[d], e);
    for &p in &distinct_preds {
        let edges = func.successors(p).iter().filter(|&&s| s == e).count();
        func.retarget_edge(p, e, d);
        for _ in 0..edges {
            preds[d].push(p);
            for (&phi, &v) in phis.iter().zip(&values) {
                func.push_phi_incoming(phi, p, v);
            }
        }
    }
    preds[e].clear();
    func.remove_block(e);
    true
}

fn remove_one(list: &mut SmallVec<[Block; 4]>, b: Block) {
    if let Some(i) = list.iter().position(|&x| x == b) {
        list.remove(i);
    }
}
