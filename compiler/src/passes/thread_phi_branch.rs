//! `thread-phi-branch`: a block that only branches on a phi sends each predecessor whose
//! incoming value decides the branch straight to the right place.
//!
//! Why: a boolean function inlined into a condition (`if (before(x, y))`, `if (is_prime(n))`)
//! leaves its return values — constants and comparisons widened to 0/1 — in a phi of the
//! return block, which is then compared with 0 and branched on; flags set inside a loop
//! (`found = 1; break;`) are tested after it the same way. Each path materialises a 0/1,
//! merges and tests it again. Threaded, a path with a constant jumps to the side it selects,
//! and a path with a comparison branches on that comparison directly.
//!
//! Shape: a block `j` (not the entry, no retreating edge into it, so not a loop header) whose
//! instructions are exactly one phi `p`, optionally `t = icmp cc p, k` (`k` an `i32`
//! constant, either operand order), and `br c, x, y` with `c` = `t` (or `p` for an `i1` phi),
//! `x ≠ y`, neither of them `j`; `p` and `t` have no other users. For every predecessor `q`
//! that ends in `jump j`, the value `v` of `p` on that edge decides:
//! * `v` a constant: `q` jumps to the successor the branch would take;
//! * `v` = `zext b` (an `i32` phi) whose outcome differs for `b` false and true: `q` ends in
//!   `br b, x, y` (or `br b, y, x`); if both outcomes agree, `q` jumps there;
//! * `v` an `i1` value (an `i1` phi branched on directly): `q` ends in `br v, x, y`.
//!
//! Soundness: the new terminator of `q` goes exactly where `j` would have gone on arrival from
//! `q`, and `j` has no side effects, so only the route changes. `b`/`v` is an operand of `p`
//! for the edge `q → j`, so it is available at the end of `q`. The phis of the new targets get
//! an entry for `q` with the value they had for `j`: that value is not `p` or `t` (their
//! only users are each other and the branch), so it is defined above `j` and dominates `q`.
//! `q` ended in an unconditional jump, so it had no edge to `x` or `y` before (no two entries
//! for one predecessor). `j` loses the edge from `q` and is removed with its last
//! predecessor. As `j` is not a loop header, the new edges enter no loop other than where
//! the old path did: reducible loops stay reducible. Nothing is evaluated that was not.

use smallvec::SmallVec;

use super::cfg_edit::{predecessors, remove_one, remove_one_phi_entry};
use super::{FunctionCx, FunctionPass};
use crate::analysis::cfg::ControlFlowGraph;
use crate::ir::{Block, Const, Function, Inst, InstData, IntCC, Opcode, Type, Value};

pub struct ThreadPhiBranch;

impl FunctionPass for ThreadPhiBranch {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let cfg = ControlFlowGraph::compute(func);
        let mut preds = predecessors(func);
        let mut threaded = 0u64;
        let mut removed = 0u64;
        for &j in cfg.rpo() {
            if !func.is_block_live(j) || j == func.entry() {
                continue;
            }
            if preds[j].iter().any(|&q| cfg.is_retreating(q, j)) {
                continue;
            }
            let Some(shape) = branch_on_phi(func, j) else { continue };
            let candidates: SmallVec<[Block; 4]> = preds[j].clone();
            for q in candidates {
                let Some(term) = func.terminator(q) else { continue };
                if func.opcode(term) != Opcode::Jump || func.targets(term)[0] != j {
                    continue;
                }
                let Some(v) = func.phi_incoming_from(shape.phi, q) else { continue };
                let Some(route) = route_for(func, &shape, v) else { continue };
                let dests: SmallVec<[Block; 2]> = match route {
                    Route::Jump(d) => [d].into_iter().collect(),
                    Route::Branch(_, a, b) => [a, b].into_iter().collect(),
                };
                for &d in &dests {
                    let phis: SmallVec<[Inst; 8]> = func.block_phis(d).collect();
                    for phi in phis {
                        let value = func.phi_incoming_from(phi, j).expect("a phi has an entry per predecessor");
                        func.push_phi_incoming(phi, q, value);
                    }
                    preds[d].push(q);
                }
                func.replace_inst(
                    term,
                    match route {
                        Route::Jump(d) => InstData::jump(d),
                        Route::Branch(c, a, b) => InstData::br(c, a, b),
                    },
                );
                remove_one_phi_entry(func, j, q);
                remove_one(&mut preds[j], q);
                threaded += 1;
            }
            if preds[j].is_empty() {
                for d in [shape.then_dest, shape.else_dest] {
                    remove_one_phi_entry(func, d, j);
                    remove_one(&mut preds[d], j);
                }
                func.remove_block(j);
                removed += 1;
            }
        }
        cx.count("edges_threaded", threaded);
        cx.count("blocks_removed", removed);
        threaded > 0
    }
}

/// A block of the threadable shape: its phi, how the branch reads it, and the branch targets.
struct PhiBranch {
    phi: Inst,
    /// `Some((cc, k))`: the branch tests `p cc k`; `None`: it branches on the `i1` phi.
    test: Option<(IntCC, i32)>,
    then_dest: Block,
    else_dest: Block,
}

enum Route {
    Jump(Block),
    Branch(Value, Block, Block),
}

fn branch_on_phi(func: &Function, j: Block) -> Option<PhiBranch> {
    let insts: SmallVec<[Inst; 4]> = func.block_insts(j).take(4).collect();
    let (&phi, &br) = (insts.first()?, insts.last()?);
    if func.opcode(phi) != Opcode::Phi || func.opcode(br) != Opcode::Br {
        return None;
    }
    let p = func.result(phi)?;
    let cond = func.args(br)[0];
    let (then_dest, else_dest) = (func.targets(br)[0], func.targets(br)[1]);
    if then_dest == else_dest || then_dest == j || else_dest == j || func.users(p).len() != 1 {
        return None;
    }
    let test = match insts.len() {
        2 if cond == p && func.value_type(p) == Type::I1 => None,
        3 => {
            let cmp = insts[1];
            let Opcode::Icmp(cc) = func.opcode(cmp) else { return None };
            let t = func.result(cmp)?;
            if cond != t || func.users(t).len() != 1 || func.value_type(p) != Type::I32 {
                return None;
            }
            let (a, b) = (func.args(cmp)[0], func.args(cmp)[1]);
            match (func.as_int_const(a), func.as_int_const(b)) {
                (None, Some(k)) if a == p => Some((cc, k)),
                (Some(k), None) if b == p => Some((cc.swapped(), k)),
                _ => return None,
            }
        }
        _ => return None,
    };
    Some(PhiBranch { phi, test, then_dest, else_dest })
}

/// Where the branch goes when `p` is `v`, if `v` decides it without `j`.
fn route_for(func: &Function, shape: &PhiBranch, v: Value) -> Option<Route> {
    let dest = |taken: bool| if taken { shape.then_dest } else { shape.else_dest };
    match shape.test {
        None => match func.as_const(v) {
            Some(Const::Bool(b)) => Some(Route::Jump(dest(b))),
            Some(_) => None,
            None => Some(Route::Branch(v, shape.then_dest, shape.else_dest)),
        },
        Some((cc, k)) => {
            if let Some(n) = func.as_int_const(v) {
                return Some(Route::Jump(dest(cc.eval(n, k))));
            }
            let def = func.def_inst(v)?;
            if func.opcode(def) != Opcode::Zext {
                return None;
            }
            let b = func.args(def)[0];
            let (if_false, if_true) = (cc.eval(0, k), cc.eval(1, k));
            Some(if if_false == if_true {
                Route::Jump(dest(if_true))
            } else {
                Route::Branch(b, dest(if_true), dest(if_false))
            })
        }
    }
}

