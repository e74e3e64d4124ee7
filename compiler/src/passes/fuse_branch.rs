//! `fuse-branch` (catalogue: FuseImmediatelyBranch): branches that lead to a block doing
//! nothing but branching on are sent to the final destination directly.
//!
//! Why: lowering leaves empty blocks that only `jump` on (the join of an `if` whose arm ends
//! in `break`, the arms of `else if` cascades), and jumps to blocks that only test a condition
//! computed earlier (short-circuit `&&`/`||`). Each costs an executed branch.
//!
//! Three rewrites:
//! 1. `br c, b, b` → `jump b` (the phis of `b` keep one of the two identical entries);
//! 2. jump threading: a block `e` (not the entry) that contains nothing but `jump d` (`d` ≠
//!    `e`) — or phis and `jump d`, where the phis are used only by the phis of `d` on their
//!    entries for `e` (the joins of an else-if cascade) — is bypassed: every predecessor `p`,
//!    whatever its terminator (jump or conditional branch), branches to `d` directly, and `e`
//!    is deleted. Each phi of `d` gives the new edge from `p` the value it had for `e`, or,
//!    when that value is a phi of `e`, that phi's value for `p`. Such a value is available at
//!    the end of `p`: it is either `e`'s phi operand for `p`, or defined above `e` (which
//!    defines nothing else) and so dominating every predecessor of `e`. Threading is only done
//!    when the phis allow it: if `p` already has an edge to `d`, every phi of `d` must have
//!    the same value for it as the new edge would carry (a phi cannot tell two edges from one
//!    block apart);
//! 3. branch hoisting: a block `p` ending in `jump e`, where `e` (not the entry, ≠ `p`)
//!    contains nothing but `br c, x, y`, ends in `br c, x, y` itself. `c` is defined outside
//!    `e`, hence dominates `e` and so its predecessor `p`. The phis of `x` and `y` get an entry
//!    for `p` (one per new edge) with the value they have for `e`; `e` loses the predecessor
//!    `p` and is deleted when that was its last one. No conflict is possible: `p` had no other
//!    successor.
//!
//! Predecessor lists are kept up to date incrementally, so a sweep is linear in the size of
//! the function; sweeps repeat until nothing changes. Every rewrite removes a jump edge or a
//! block, so this terminates. Blocks without predecessors are left alone
//! (`unreachable-blocks` deletes them). `simplify-cfg` runs this together with `fuse-blocks`.

use smallvec::SmallVec;

use super::cfg_edit::{Preds, predecessors, remove_one, remove_one_phi_entry};
use super::{FunctionCx, FunctionPass};
use crate::ir::{Block, Function, Inst, InstData, Opcode, Value};

pub struct FuseBranch;

/// What the rewrites did.
#[derive(Default)]
pub(super) struct BranchStats {
    pub branches: u64,
    pub threaded: u64,
    pub hoisted: u64,
}

impl BranchStats {
    pub fn total(&self) -> u64 {
        self.branches + self.threaded + self.hoisted
    }
}

impl FunctionPass for FuseBranch {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let mut preds = predecessors(func);
        let mut stats = BranchStats::default();
        loop {
            let before = stats.total();
            for b in func.layout().to_vec() {
                fuse_at(func, &mut preds, b, &mut stats);
            }
            if stats.total() == before {
                break;
            }
        }
        cx.count("branches_simplified", stats.branches);
        cx.count("jumps_threaded", stats.threaded);
        cx.count("branches_hoisted", stats.hoisted);
        stats.total() > 0
    }
}

/// Applies the three rewrites at block `b` (if it is still live).
pub(super) fn fuse_at(func: &mut Function, preds: &mut Preds, b: Block, stats: &mut BranchStats) {
    if !func.is_block_live(b) {
        return;
    }
    if same_target_branch(func, preds, b) {
        stats.branches += 1;
    }
    if hoist_branch(func, preds, b) {
        stats.hoisted += 1;
    }
    if thread_jump(func, preds, b) {
        stats.threaded += 1;
    }
}

/// Rewrite 1.
fn same_target_branch(func: &mut Function, preds: &mut Preds, b: Block) -> bool {
    let Some(term) = func.terminator(b) else { return false };
    if func.opcode(term) != Opcode::Br || func.targets(term)[0] != func.targets(term)[1] {
        return false;
    }
    let dest = func.targets(term)[0];
    remove_one_phi_entry(func, dest, b);
    remove_one(&mut preds[dest], b);
    func.replace_inst(term, InstData::jump(dest));
    true
}

/// Rewrite 3: `p: jump e` with `e: br c, x, y` becomes `p: br c, x, y`.
fn hoist_branch(func: &mut Function, preds: &mut Preds, p: Block) -> bool {
    let Some(term) = func.terminator(p) else { return false };
    if func.opcode(term) != Opcode::Jump {
        return false;
    }
    let e = func.targets(term)[0];
    if e == p || e == func.entry() {
        return false;
    }
    let Some(br) = func.first_inst(e) else { return false };
    if func.opcode(br) != Opcode::Br || func.last_inst(e) != Some(br) {
        return false;
    }
    let cond = func.args(br)[0];
    let targets: SmallVec<[Block; 2]> = func.targets(br).iter().copied().collect();
    // One new entry per new edge, carrying what the edge from `e` carried.
    for &t in &targets {
        let phis: SmallVec<[Inst; 8]> = func.block_phis(t).collect();
        for phi in phis {
            let v = func.phi_incoming_from(phi, e).expect("a phi has an entry per predecessor");
            func.push_phi_incoming(phi, p, v);
        }
        preds[t].push(p);
    }
    func.replace_inst(term, InstData::br(cond, targets[0], targets[1]));
    remove_one(&mut preds[e], p);
    if preds[e].is_empty() {
        for &t in &targets {
            remove_one_phi_entry(func, t, e);
            remove_one(&mut preds[t], e);
        }
        func.remove_block(e);
    }
    true
}

/// Rewrite 2: bypasses `e` if it only jumps on (possibly after phis that only feed the
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
        let v = func.phi_incoming_from(phi, e).expect("a phi has an entry per predecessor");
        match func.def_inst(v) {
            Some(def) if e_phis.contains(&def) => func.phi_incoming_from(def, p).expect("a phi has an entry per predecessor"),
            _ => v,
        }
    };
    // Conflict check: a predecessor already branching to `d` must agree on every phi.
    for &p in &distinct_preds {
        if func.successors(p).contains(&d)
            && d_phis.iter().any(|&phi| func.phi_incoming_from(phi, p) != Some(through(func, phi, p)))
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


/// True when the phi of `e` is used only by phis of `d`, on their entries for `e`.
fn only_forwarded(func: &Function, phi: Inst, e: Block, d: Block) -> bool {
    let Some(v) = func.result(phi) else { return false };
    func.users(v).iter().all(|&u| {
        func.opcode(u) == Opcode::Phi
            && func.inst_block(u) == Some(d)
            && func.args(u).iter().zip(func.targets(u)).all(|(&a, &b)| a != v || b == e)
    })
}
