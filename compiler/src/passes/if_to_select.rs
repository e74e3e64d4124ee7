//! `if-to-select`: small diamonds and triangles inside loops whose arms only compute become
//! straight-line code, the values they merge chosen by `select`.
//!
//! Why: `if (d < 0.0) d = -d;`, `if (v > big) { big = v; best = i; }` and inlined `max(a, b)`
//! split a loop body into several blocks, and the loop passes that pay most (`unroll`,
//! `iv-reduce` on single-block bodies, `full-unroll`) only take single-block loops; each
//! branch also costs a compare-and-branch and the merge a copy on an edge. Computing both
//! sides and selecting costs a conditional move per merged value.
//!
//! Which loops: innermost loops with one latch, left only from it (the test of a loop that
//! `loop-rotate` turned into a do-while), all of whose other conditional branches are such
//! shapes, so that the body ends up one block (`break`, `return` or `continue` in the body
//! keep the loop as it is). Elsewhere the back end's `arm-if-convert` predicates small arms already,
//! and a branch keeps facts a select hides: after `if (v[sw] < v[c]) sw = c;` the branch
//! version knows `v[sw]` on each path (load elimination reuses it), the select version
//! must load it again.
//!
//! Shapes, for a block `b` ending in `br c, t, f` (`t ≠ f`):
//! * triangle: `t` (or `f`) has `b` as its only predecessor, no phis, and ends in `jump j`
//!   where `j` is the other successor of `b`;
//! * diamond: `t` and `f` both have `b` as only predecessor, no phis, and end in `jump j` to
//!   the same block `j` (`j ≠ b`).
//!
//! The arms' instructions must all be pure and unable to trap ([`Opcode::is_pure`] and not
//! [`Opcode::may_trap`]: no loads, stores, calls, divisions or remainders of integers), and
//! cheap: both arms are always executed afterwards, so their latency ([`speculation_cost`],
//! about the cycles of the instructions) may add up to at most [`MAX_SPECULATED`], about
//! what the branch costs; `j` may merge at most [`MAX_SELECTS`] values. A merge that needs
//! no work (`max`, `if (v > big) { big = v; where = i; }`) or a negation always passes; an
//! `if (x < 0) s = s - x; else s = s + x;` (two float additions where one ran) does not.
//!
//! Rewrite: the arms' instructions move to the end of `b` (before its branch); each phi of `j`
//! has one entry for each of the two paths (from `b` or an arm), which become one entry for
//! `b` with `select c, <value on the t path>, <value on the f path>`; `b` ends in `jump j` and
//! the arm blocks are deleted. `j` may have other predecessors: their entries stay.
//!
//! Soundness: the moved instructions have no effects and cannot trap, so executing them on
//! the path that did not need them changes nothing but time; their operands are defined in
//! or above `b` (an arm has `b` as its only predecessor and no phis), so they are available
//! at the end of `b`. The select yields exactly the value the phi received on the path taken:
//! integer and float values alike (a NaN, `-0.0`) are passed through unchanged. The loop
//! structure is kept: `b`, the arms and `j` stay in the same loops (the arms are replaced by
//! nothing, `j` was reached from `b` before).

use smallvec::SmallVec;

use super::cfg_edit::{Preds, predecessors, remove_one};
use super::{FunctionCx, FunctionPass};
use crate::ir::{Block, Function, Inst, InstData, Opcode, Value};

pub struct IfToSelect;

/// Most latency of the instructions of both arms together (see [`speculation_cost`]).
pub const MAX_SPECULATED: u32 = 4;
/// Most values merged at `j` (each becomes a conditional move).
pub const MAX_SELECTS: usize = 3;

impl FunctionPass for IfToSelect {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let loops = cx.analyses.loops(func);
        // Innermost loops with one latch, left only from it (the test of a rotated loop):
        // with their inner branches gone the body is straight-line code.
        let innermost: Vec<Vec<Block>> = loops
            .loops()
            .filter(|&l| loops.children(l).is_empty() && loops.latches(l).len() == 1)
            .filter(|&l| loops.exits(l).iter().all(|&(from, _)| loops.latches(l).contains(&from)))
            .map(|l| loops.blocks(l).to_vec())
            .collect();
        let mut preds = predecessors(func);
        let mut converted = 0u64;
        let mut selects = 0u64;
        for blocks in innermost {
            // The branches that stay inside the loop, in layout order.
            let inner_branches: Vec<Block> = func
                .layout()
                .iter()
                .copied()
                .filter(|b| blocks.contains(b))
                .filter(|&b| {
                    let succs = func.successors(b);
                    succs.len() == 2 && succs.iter().all(|s| blocks.contains(s))
                })
                .collect();
            if inner_branches.is_empty() || !inner_branches.iter().all(|&b| convertible(func, &preds, b)) {
                continue;
            }
            for b in inner_branches {
                if let Some(n) = convert_at(func, &mut preds, b) {
                    converted += 1;
                    selects += n as u64;
                }
            }
        }
        cx.count("branches_converted", converted);
        cx.count("selects_created", selects);
        converted > 0
    }
}

/// The arm blocks of the shape ending `b`, with the join: (`t` arm, `f` arm, join), where a
/// missing arm means the edge goes to the join directly.
fn shape(func: &Function, preds: &Preds, b: Block) -> Option<(Option<Block>, Option<Block>, Block)> {
    let term = func.terminator(b)?;
    if func.opcode(term) != Opcode::Br {
        return None;
    }
    let (t, f) = (func.targets(term)[0], func.targets(term)[1]);
    if t == f {
        return None;
    }
    // A block that can be an arm: only `b` leads to it, no phis, ends in `jump`.
    let arm_to = |x: Block| -> Option<Block> {
        if x == b || x == func.entry() || preds[x].as_slice() != [b] || func.block_phis(x).next().is_some() {
            return None;
        }
        let last = func.terminator(x)?;
        (func.opcode(last) == Opcode::Jump).then(|| func.targets(last)[0])
    };
    let (jt, jf) = (arm_to(t), arm_to(f));
    let found = match (jt, jf) {
        (Some(j1), Some(j2)) if j1 == j2 && j1 != b => (Some(t), Some(f), j1),
        (Some(j), _) if j == f => (Some(t), None, f),
        (_, Some(j)) if j == t => (None, Some(f), t),
        _ => return None,
    };
    let j = found.2;
    // A diamond's join gets two edges from the arms; a triangle's one from `b` and one from
    // the arm. Either way exactly those two of its edges come from the shape.
    if j == b {
        return None;
    }
    Some(found)
}

/// The instructions of an arm (its jump left out) if they may all be executed on the other
/// path, with their cost.
fn speculatable(func: &Function, arm: Block) -> Option<(Vec<Inst>, u32)> {
    let mut insts = Vec::new();
    let mut cost = 0;
    for inst in func.block_insts(arm) {
        let op = func.opcode(inst);
        if op == Opcode::Jump {
            continue;
        }
        if !op.is_pure() || op.may_trap() {
            return None;
        }
        cost += speculation_cost(op);
        insts.push(inst);
    }
    Some((insts, cost))
}

/// About the latency in cycles of `op` on an in-order ARM core: what executing it on the path
/// that does not need it costs.
pub fn speculation_cost(op: Opcode) -> u32 {
    match op {
        Opcode::FAdd | Opcode::FSub | Opcode::SiToFp | Opcode::FpToSi | Opcode::Mul => 4,
        Opcode::FMul => 5,
        Opcode::FDiv => 15,
        Opcode::FNeg => 2,
        _ => 1,
    }
}


/// The shape ending `b` with the instructions of its arms, if it can be converted.
fn plan(func: &Function, preds: &Preds, b: Block) -> Option<(Option<Block>, Option<Block>, Block, Vec<Inst>, Vec<Inst>)> {
    let (t, f, j) = shape(func, preds, b)?;
    let (t_insts, t_cost) = match t {
        Some(t) => speculatable(func, t)?,
        None => (Vec::new(), 0),
    };
    let (f_insts, f_cost) = match f {
        Some(f) => speculatable(func, f)?,
        None => (Vec::new(), 0),
    };
    if t_cost + f_cost > MAX_SPECULATED {
        return None;
    }
    if func.block_phis(j).count() > MAX_SELECTS {
        return None;
    }
    Some((t, f, j, t_insts, f_insts))
}

/// Whether the shape ending `b` can be converted.
fn convertible(func: &Function, preds: &Preds, b: Block) -> bool {
    plan(func, preds, b).is_some()
}

/// Converts the shape ending `b`, if there is one; returns the number of selects made.
fn convert_at(func: &mut Function, preds: &mut Preds, b: Block) -> Option<usize> {
    let (t, f, j, t_insts, f_insts) = plan(func, preds, b)?;
    let phis: SmallVec<[Inst; 4]> = func.block_phis(j).collect();
    // The predecessor of `j` on each path.
    let t_pred = t.unwrap_or(b);
    let f_pred = f.unwrap_or(b);
    let mut merged: SmallVec<[(Inst, Value, Value); 4]> = SmallVec::new();
    for &phi in &phis {
        let on_t = func.phi_incoming_from(phi, t_pred)?;
        let on_f = func.phi_incoming_from(phi, f_pred)?;
        merged.push((phi, on_t, on_f));
    }

    let term = func.terminator(b).expect("shape has a branch");
    let cond = func.args(term)[0];
    for inst in t_insts.into_iter().chain(f_insts) {
        func.detach_inst(inst);
        func.insert_inst_before(term, inst);
    }
    let mut made = 0;
    for (phi, on_t, on_f) in merged {
        // Drop the entries of both paths, then give `b`'s edge the selected value.
        for pred in [t_pred, f_pred] {
            if let Some(i) = func.targets(phi).iter().position(|&p| p == pred) {
                func.remove_phi_incoming(phi, i);
            }
        }
        let value = if on_t == on_f {
            on_t
        } else {
            made += 1;
            let ty = func.value_type(on_t);
            func.insert_value_before(term, InstData::new(Opcode::Select, &[cond, on_t, on_f], &[], ty))
        };
        func.push_phi_incoming(phi, b, value);
    }
    func.replace_inst(term, InstData::jump(j));
    for arm in [t, f].into_iter().flatten() {
        remove_one(&mut preds[j], arm);
        func.remove_block(arm);
    }
    // `b` reaches `j` once now: a triangle's direct edge stays, a diamond gains it.
    if t.is_some() && f.is_some() {
        preds[j].push(b);
    }
    Some(made)
}
