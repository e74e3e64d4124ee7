//! `thread-known-branch`: a block that branches on a condition some of its predecessors
//! already decided gets copied into each of those predecessors, the copy jumping straight to
//! the side the condition selects.
//!
//! Why: the same test repeated after a join — `if (c) a = …; else a = …; b = …; if (c) …` —
//! costs a second compare and branch on every path, although every path into the join knows
//! the answer. Recursive functions inlined into themselves (`recursive-inline`) make this
//! shape at every level: both copies of `tree(d - 1, …)` in `tree(d - 1, x) + tree(d - 1, y)`
//! start with `if (d - 1 == 0)`, which `gvn` turns into one value, tested after the first
//! copy's join again. Threaded, the path that took the base case once goes straight to the
//! base case of the second copy, as gcc's code tests the depth once per pair of children.
//!
//! The same copy removes tests that value ranges decide on some edges. McCarthy's 91 function
//! after `tail-recursion` and `recursive-inline` is a chain of loops whose header adds 11 and
//! tests `> 100`, entered back from a block that subtracts 10 and tests `> 100` again; on that
//! back edge the value lies in [91, 100], so the header's test always succeeds there. gcc's
//! value-range threading turns each such pair into one loop (`sub`, `add`, `cmp`, `ble`).
//!
//! Shape: a block `j` — not the entry, ending in `br c, x, y` with `x ≠ y`, neither of them
//! `j` — whose other instructions are phis and at most [`MAX_COPIED`] instructions other
//! than calls, stores, `memzero` and `alloca`. A predecessor `p` decides `c`
//! * *by a dominating edge*, when `j` is not a loop header (no retreating edge into it), `c`
//!   is defined outside `j`, `p` ends in `jump j` and is dominated by a block `a` whose only
//!   predecessor `d` ends in `br c, …` with `a` as exactly one of its targets: `c` has on
//!   arrival at `j` from `p` the value the edge `d → a` stands for;
//! * *by ranges*, when `c = icmp cc u, v` on `i32` values, each side a constant or a value
//!   from outside `j` (a phi of `j` read as its entry for `p`) plus constants that additions
//!   in `j` add to it, and the bounds [`Constraints`] derives for those values at the end of
//!   `p`, with the condition of the edge `p → j`, decide the compare: every step keeps the
//!   whole range inside `i32` (a step that could wrap decides nothing) and the ranges of the
//!   two sides are ordered (or, without steps, a difference constraint relates the sides).
//!   `p` may end in a branch (with `j` on one side only). Into a loop header only when the
//!   side `c` selects dominates `p`: the new edge is then a back edge to a dominator, a loop
//!   with a single entry (every path to `p`, and so into the copy, passes that side), and the
//!   CFG stays reducible. Never when a phi of `j` receives from `p` a value defined in `j`
//!   (a latch passing the header's values back): the copy, looping, would read it stale.
//!
//! Why the dominating edge is sound (for any CFG, reducible or not): take the last execution of the
//! definition of `c` before arriving at `p`. Every path from there to `p` passes `a` —
//! otherwise, as the definition dominates `d` and so `a`, the first path from the entry to
//! the definition (which has not met `a` yet) followed by that path would reach `p` avoiding
//! `a` — and `a` is entered only from `d`, which branched on this very value of `c`.
//!
//! How: for each deciding `p`, a new block gets copies of `j`'s non-phi instructions (`j`'s
//! phis read as their entry for `p`) and a jump to the side `c` selects, whose phis get an
//! entry for the copy with the value they had for `j`; `p` jumps to the copy instead of `j`
//! and loses its entries in `j`'s phis. `j` is deleted when no predecessor is left. Values of
//! `j` used outside it (a use in a phi of `j` itself, a loop header's, reads its value at the
//! end of the latch, outside `j`) now have several definitions (`j`'s, if it stays, and one per copy):
//! each is stored to a new stack slot where it is defined, each outside use loads it, and
//! `mem2reg` builds the phis where they meet. Every path that reached a use through `j` now
//! reaches it through `j` or one copy, so a load always follows a store. Each path executes
//! the same instructions in the same order as before, minus the branch whose outcome it knew;
//! nothing moves across memory operations (the copies sit where `j` was on that path).

use std::cell::OnceCell;

use cranelift_entity::SecondaryMap;
use smallvec::SmallVec;

use super::cfg_edit::remove_one_phi_entry;
use super::mem2reg::Mem2Reg;
use super::{FunctionCx, FunctionPass};
use crate::analysis::cfg::ControlFlowGraph;
use crate::analysis::constraints::{Constraints, offset_form};
use crate::analysis::domtree::DomTree;
use crate::ir::{Block, Function, Inst, InstData, IntCC, Opcode, Type, Value, ValueDef};

pub struct ThreadKnownBranch;

/// Most non-phi instructions (the branch not counted) of a block that is copied.
pub const MAX_COPIED: usize = 8;

/// Most blocks threaded in one function (each costs a fresh dominator tree and `mem2reg`).
pub const MAX_THREADED_BLOCKS: u64 = 256;

impl FunctionPass for ThreadKnownBranch {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let mut threaded = 0u64;
        let mut blocks = 0u64;
        // One block per round: its copies change the CFG, so dominance is recomputed.
        while blocks < MAX_THREADED_BLOCKS {
            let cfg = cx.analyses.cfg(func);
            let domtree = cx.analyses.domtree(func);
            // Computed on the first branch whose compare a range could decide.
            let facts: OnceCell<Constraints<'_>> = OnceCell::new();
            let found = cfg.rpo().iter().find_map(|&j| {
                if j == func.entry() {
                    return None;
                }
                let header = cfg.preds(j).iter().any(|&q| cfg.is_retreating(q, j));
                let shape = threadable(func, j)?;
                let decided: Vec<(Block, bool)> = cfg
                    .preds(j)
                    .iter()
                    .filter_map(|&p| {
                        let term = func.terminator(p)?;
                        let jumps = func.opcode(term) == Opcode::Jump;
                        if jumps && !header && !shape.cond_in_j
                            && let Some(v) = decided_value(func, &cfg, &domtree, shape.cond, p)
                        {
                            return Some((p, v));
                        }
                        if !jumps && func.targets(term).iter().filter(|&&t| t == j).count() != 1 {
                            return None;
                        }
                        if reads_own_values(func, j, p) {
                            return None;
                        }
                        let compare = compare_shape(func, j, shape.cond)?;
                        let facts = facts.get_or_init(|| Constraints::compute(func, &cfg, &domtree));
                        let taken = decided_by_ranges(func, facts, j, p, &compare)?;
                        let dest = if taken { shape.then_dest } else { shape.else_dest };
                        (!header || domtree.dominates(dest, p)).then_some((p, taken))
                    })
                    .collect();
                (!decided.is_empty()).then_some((j, shape, decided))
            });
            let Some((j, shape, decided)) = found else { break };
            // (`threadable` has checked that every escaping value has a promotable type.)
            let j_stays = cfg.preds(j).len() > decided.len();
            // Values of `j` used outside it, with those uses (before any copy exists).
            let escaping: Vec<(Value, Vec<Inst>)> = func
                .block_insts(j)
                .filter_map(|i| func.result(i))
                .map(|v| (v, func.users(v).iter().copied().filter(|&u| escapes(func, j, u)).collect::<Vec<_>>()))
                .filter(|(_, uses)| !uses.is_empty())
                .collect();
            let mut copies: Vec<(Block, SecondaryMap<Value, Option<Value>>)> = Vec::new();
            for (p, taken) in decided {
                let dest = if taken { shape.then_dest } else { shape.else_dest };
                copies.push(copy_into_edge(func, j, p, dest));
                threaded += 1;
            }
            for (v, uses) in &escaping {
                demote(func, j, j_stays, *v, uses, &copies);
            }
            if !j_stays {
                for d in [shape.then_dest, shape.else_dest] {
                    remove_one_phi_entry(func, d, j);
                }
                func.remove_block(j);
            }
            blocks += 1;
            cx.analyses.invalidate();
            if !escaping.is_empty() {
                Mem2Reg.run(func, cx);
                cx.analyses.invalidate();
            }
        }
        cx.count("edges_threaded", threaded);
        cx.count("blocks_threaded", blocks);
        threaded > 0
    }
}

/// Whether the use `u` of a value of `j` lies outside `j`: in another block, or in a phi of
/// `j` itself (a loop header's phi reads its entries at the end of the latches).
fn escapes(func: &Function, j: Block, u: Inst) -> bool {
    func.inst_block(u) != Some(j) || func.opcode(u) == Opcode::Phi
}

/// The branch of a threadable block.
struct Shape {
    cond: Value,
    /// `cond` is computed in the block itself (only a range can decide it then).
    cond_in_j: bool,
    then_dest: Block,
    else_dest: Block,
}

fn threadable(func: &Function, j: Block) -> Option<Shape> {
    let br = func.terminator(j)?;
    if func.opcode(br) != Opcode::Br {
        return None;
    }
    let cond = func.args(br)[0];
    let (then_dest, else_dest) = (func.targets(br)[0], func.targets(br)[1]);
    if then_dest == else_dest || then_dest == j || else_dest == j {
        return None;
    }
    let cond_in_j = match func.value_def(cond) {
        ValueDef::Inst(i) => func.inst_block(i) == Some(j),
        ValueDef::Param(_) => false,
        _ => return None,
    };
    let mut body = 0;
    for i in func.block_insts(j) {
        // A value used outside `j` goes through a stack slot, which `mem2reg` promotes only
        // for `i32` and `f32`.
        if let Some(v) = func.result(i)
            && !matches!(func.value_type(v), Type::I32 | Type::F32)
            && func.users(v).iter().any(|&u| escapes(func, j, u))
        {
            return None;
        }
        match func.opcode(i) {
            Opcode::Phi | Opcode::Br => {}
            Opcode::Call(_) | Opcode::Store | Opcode::MemZero { .. } | Opcode::Alloca { .. } => return None,
            _ => body += 1,
        }
    }
    (body <= MAX_COPIED).then_some(Shape { cond, cond_in_j, then_dest, else_dest })
}

/// The value `cond` has on arrival from `p`, if an edge `d → a` with `a` dominating `p` and
/// entered only from `d` decides it (see the module documentation).
fn decided_value(func: &Function, cfg: &ControlFlowGraph, domtree: &DomTree, cond: Value, p: Block) -> Option<bool> {
    let mut a = p;
    while let Some(d) = domtree.idom(a) {
        if let Some(t) = func.terminator(d)
            && func.opcode(t) == Opcode::Br
            && func.args(t)[0] == cond
            && cfg.preds(a) == [d]
        {
            let targets = func.targets(t);
            if targets[0] != targets[1] {
                if targets[0] == a {
                    return Some(true);
                }
                if targets[1] == a {
                    return Some(false);
                }
            }
        }
        a = d;
    }
    None
}

/// Whether a phi of `j` receives from `p` a value defined in `j` (a latch passing the header's
/// own values back). A copy for `p` would read that value where it may be stale: the copy
/// itself, looping back, defines the newer one.
fn reads_own_values(func: &Function, j: Block, p: Block) -> bool {
    func.block_phis(j).any(|phi| {
        func.inst(phi)
            .phi_incoming()
            .any(|(q, v)| q == p && func.def_inst(v).is_some_and(|d| func.inst_block(d) == Some(j)))
    })
}

/// A branch condition `icmp cc x, y`, each side a value from outside `j` (a phi of `j` read
/// on the edge) or a constant, plus the constants that additions in `j` add to it.
struct Compare {
    cc: IntCC,
    sides: [(Value, SmallVec<[i64; 4]>); 2],
}

/// `cond` as a [`Compare`], if it is an `i32` compare and every instruction between its
/// operands and the values flowing into `j` is an addition of a constant in `j`.
fn compare_shape(func: &Function, j: Block, cond: Value) -> Option<Compare> {
    let inst = func.def_inst(cond)?;
    let Opcode::Icmp(cc) = func.opcode(inst) else { return None };
    let side = |mut v: Value| -> Option<(Value, SmallVec<[i64; 4]>)> {
        let mut steps: SmallVec<[i64; 4]> = SmallVec::new();
        while let Some(def) = func.def_inst(v).filter(|&d| func.inst_block(d) == Some(j) && func.opcode(d) != Opcode::Phi) {
            let (a, step) = offset_form(func, def)?;
            if steps.len() == steps.inline_size() {
                return None;
            }
            steps.insert(0, step);
            v = a;
        }
        Some((v, steps))
    };
    let (x, y) = (func.args(inst)[0], func.args(inst)[1]);
    if func.value_type(x) != Type::I32 {
        return None;
    }
    Some(Compare { cc, sides: [side(x)?, side(y)?] })
}

/// The outcome of `compare` on arrival at `j` from `p`, when the ranges of its operands on
/// that edge decide it: each side's value on the edge (a phi of `j` read for `p`) is bounded
/// by `facts`, then moved by the side's constant steps as long as no step can wrap; a side
/// that could wrap decides nothing. Two sides without steps may also be related directly.
fn decided_by_ranges(func: &Function, facts: &Constraints<'_>, j: Block, p: Block, compare: &Compare) -> Option<bool> {
    let on_edge = |v: Value| match func.def_inst(v) {
        Some(d) if func.opcode(d) == Opcode::Phi && func.inst_block(d) == Some(j) => {
            func.phi_incoming_from(d, p).expect("a phi has an entry per predecessor")
        }
        _ => v,
    };
    let range = |(v, steps): &(Value, SmallVec<[i64; 4]>)| -> Option<(i64, i64)> {
        let (mut lo, mut hi) = facts.bounds_on_edge(p, j, on_edge(*v));
        for &s in steps {
            (lo, hi) = (lo + s, hi + s);
            if lo < i32::MIN as i64 || hi > i32::MAX as i64 {
                return None;
            }
        }
        Some((lo, hi))
    };
    let [x, y] = &compare.sides;
    let cc = compare.cc;
    if let (Some((xl, xh)), Some((yl, yh))) = (range(x), range(y)) {
        let always = |cc: IntCC| match cc {
            IntCC::Lt => xh < yl,
            IntCC::Le => xh <= yl,
            IntCC::Gt => xl > yh,
            IntCC::Ge => xl >= yh,
            IntCC::Eq => xl == xh && yl == yh && xl == yl,
            IntCC::Ne => xh < yl || yh < xl,
        };
        if always(cc) {
            return Some(true);
        }
        if always(cc.inverse()) {
            return Some(false);
        }
    }
    if x.1.is_empty() && y.1.is_empty() {
        let (xv, yv) = (on_edge(x.0), on_edge(y.0));
        if facts.prove_icmp_on_edge(p, j, cc, xv, yv) {
            return Some(true);
        }
        if facts.prove_icmp_on_edge(p, j, cc.inverse(), xv, yv) {
            return Some(false);
        }
    }
    None
}

/// Copies `j`'s non-phi instructions into a new block entered from `p` instead of `j`, ending
/// in a jump to `dest`; returns the block and the map from `j`'s values to the copy's.
fn copy_into_edge(func: &mut Function, j: Block, p: Block, dest: Block) -> (Block, SecondaryMap<Value, Option<Value>>) {
    let copy = func.create_block();
    let mut map: SecondaryMap<Value, Option<Value>> = SecondaryMap::new();
    let insts: Vec<Inst> = func.block_insts(j).collect();
    for &i in &insts {
        match func.opcode(i) {
            Opcode::Phi => {
                let v = func.phi_incoming_from(i, p).expect("a phi has an entry per predecessor");
                map[func.result(i).expect("a phi has a result")] = Some(v);
            }
            Opcode::Br => {}
            _ => {
                let mut data = func.inst(i).clone();
                for a in data.args.iter_mut() {
                    if let Some(m) = map[*a] {
                        *a = m;
                    }
                }
                let (_, result) = func.append(copy, data);
                if let (Some(old), Some(new)) = (func.result(i), result) {
                    map[old] = Some(new);
                }
            }
        }
    }
    func.append(copy, InstData::jump(dest));
    let phis: SmallVec<[Inst; 8]> = func.block_phis(dest).collect();
    for phi in phis {
        let v = func.phi_incoming_from(phi, j).expect("a phi has an entry per predecessor");
        func.push_phi_incoming(phi, copy, map[v].unwrap_or(v));
    }
    func.retarget_edge(p, j, copy);
    remove_one_phi_entry(func, j, p);
    (copy, map)
}

/// Gives `v` (defined in `j`) one stack slot: stored where `j` (if it stays) and every copy
/// define it, loaded by every use outside them; `mem2reg` then rebuilds SSA form.
fn demote(func: &mut Function, j: Block, j_stays: bool, v: Value, uses: &[Inst], copies: &[(Block, SecondaryMap<Value, Option<Value>>)]) {
    let ty = func.value_type(v);
    let entry = func.entry();
    let slot_inst = func.create_inst(InstData::alloca(ty, 1));
    func.prepend_inst(entry, slot_inst);
    let slot = func.result(slot_inst).expect("an alloca has a result");
    if j_stays {
        let at = func.block_insts(j).find(|&i| func.opcode(i) != Opcode::Phi).expect("a block ends in a terminator");
        let def = func.def_inst(v).expect("defined in j");
        let store = func.create_inst(InstData::store(slot, v));
        if func.opcode(def) == Opcode::Phi {
            func.insert_inst_before(at, store);
        } else {
            func.insert_inst_after(def, store);
        }
    }
    for (copy, map) in copies {
        let value = map[v].expect("every value of j has a copy");
        let term = func.terminator(*copy).expect("a copy ends in a jump");
        let store = func.create_inst(InstData::store(slot, value));
        func.insert_inst_before(term, store);
    }
    for &u in uses {
        if func.opcode(u) == Opcode::Phi {
            for k in 0..func.args(u).len() {
                if func.args(u)[k] == v {
                    let pred = func.targets(u)[k];
                    let term = func.terminator(pred).expect("a predecessor ends in a terminator");
                    let loaded = func.insert_value_before(term, InstData::load(slot, ty));
                    func.set_arg(u, k, loaded);
                }
            }
        } else {
            let loaded = func.insert_value_before(u, InstData::load(slot, ty));
            for k in 0..func.args(u).len() {
                if func.args(u)[k] == v {
                    func.set_arg(u, k, loaded);
                }
            }
        }
    }
}
