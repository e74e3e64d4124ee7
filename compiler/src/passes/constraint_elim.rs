//! `constraint-elim`: folds integer compares, branches, remainders and quotients that
//! dominating conditions, loop induction facts and value ranges decide.
//!
//! Why: after inlining, a helper's argument checks (`if (i < 0 || i >= n) return -1;` in
//! `getvalue`) run on every iteration of loops over `[0, n)` although the loop's own bounds
//! decide them; short-circuit lowering also re-tests conditions that a dominating branch has
//! already tested. gcc removes these with value-range propagation; this pass does it with the
//! relational facts of [`Constraints`] (difference constraints from branch conditions,
//! `x + k` definitions that provably do not wrap, and phi invariants proven by induction).
//!
//! What it rewrites, in a block `B`:
//! * `icmp cc x, y` whose outcome the facts holding in its own block prove: every use becomes
//!   the constant; otherwise each `br` using it in another block that knows more (a block
//!   dominated by further conditions) gets the constant as its operand there;
//! * `br c` where a dominating edge already branched on the same `c`;
//! * an `i1` phi whose every incoming value is known, and the same, on its edge (a constant,
//!   the condition the edge was taken on, or a condition known in the predecessor) — the
//!   `else if (i < 80)` of a loop `while (i < 80)` after value numbering;
//! * `srem a, k` with `|a| < |k|` becomes `a`, and `sdiv a, k` with `|a| < |k|` becomes `0`
//!   (`k` a constant; truncating division).
//!
//! Constant branches are left for `constfold`/`simplify-cfg`. The CFG is not changed. Float
//! compares are never touched. Assumes verifier-clean SSA; sound in any pipeline position.

use super::{FunctionCx, FunctionPass};
use crate::analysis::constraints::Constraints;
use crate::analysis::excluded::Excluded;
use crate::ir::{Block, Function, Inst, IntCC, Opcode, Type, Value};

pub struct ConstraintElim;

enum Rewrite {
    /// Every use of the value becomes the boolean constant.
    AllUses(Value, bool),
    /// Operand 0 of a branch becomes the boolean constant.
    BranchOperand(Inst, bool),
    /// Every use of the first value becomes the second.
    Replace(Value, Value),
    /// Every use of the value becomes the integer constant.
    IntConst(Value, i32),
}

impl FunctionPass for ConstraintElim {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let cfg = cx.analyses.cfg(func);
        let domtree = cx.analyses.domtree(func);
        let rewrites = {
            let facts = Constraints::compute(func, &cfg, &domtree);
            let excluded = Excluded::compute(func, &facts);
            let mut out = Vec::new();
            for &b in cfg.rpo() {
                for inst in func.block_insts(b) {
                    find_rewrites(func, &facts, &excluded, b, inst, &mut out);
                }
            }
            out
        };
        let (mut compares, mut branches, mut arith) = (0u64, 0u64, 0u64);
        for r in &rewrites {
            match *r {
                Rewrite::AllUses(v, c) => {
                    let k = func.bconst(c);
                    func.replace_all_uses(v, k);
                    compares += 1;
                }
                Rewrite::BranchOperand(br, c) => {
                    let k = func.bconst(c);
                    func.set_arg(br, 0, k);
                    branches += 1;
                }
                Rewrite::Replace(v, w) => {
                    func.replace_all_uses(v, w);
                    arith += 1;
                }
                Rewrite::IntConst(v, c) => {
                    let k = func.iconst(c);
                    func.replace_all_uses(v, k);
                    arith += 1;
                }
            }
        }
        cx.count("compares_folded", compares);
        cx.count("branches_folded", branches);
        cx.count("divisions_folded", arith);
        !rewrites.is_empty()
    }
}

fn find_rewrites(func: &Function, facts: &Constraints<'_>, excluded: &Excluded, b: Block, inst: Inst, out: &mut Vec<Rewrite>) {
    let args = func.args(inst);
    match func.opcode(inst) {
        Opcode::Icmp(cc) => {
            let Some(v) = func.result(inst) else { return };
            let (x, y) = (args[0], args[1]);
            if func.as_int_const(x).is_some() && func.as_int_const(y).is_some() {
                return; // constfold's job
            }
            if let Some(known) = excluded.decides(func, inst) {
                out.push(Rewrite::AllUses(v, known));
                return;
            }
            if let Some(known) = decide(facts, b, cc, x, y) {
                out.push(Rewrite::AllUses(v, known));
                return;
            }
            for &user in func.users(v) {
                if func.opcode(user) != Opcode::Br {
                    continue;
                }
                let Some(ub) = func.inst_block(user) else { continue };
                if ub == b {
                    continue;
                }
                if let Some(known) = facts.known_condition(ub, v).or_else(|| decide(facts, ub, cc, x, y)) {
                    out.push(Rewrite::BranchOperand(user, known));
                }
            }
        }
        Opcode::Br => {
            let c = args[0];
            if func.as_const(c).is_some() || is_icmp(func, c) {
                return; // icmps are handled at their definition
            }
            if let Some(known) = facts.known_condition(b, c) {
                out.push(Rewrite::BranchOperand(inst, known));
            }
        }
        Opcode::Phi if func.inst(inst).ty == Type::I1 => {
            let Some(v) = func.result(inst) else { return };
            let mut known = None;
            for (pred, c) in func.inst(inst).phi_incoming() {
                if c == v {
                    continue;
                }
                match facts.known_on_edge(pred, b, c) {
                    Some(k) if known.is_none_or(|x| x == k) => known = Some(k),
                    _ => return,
                }
            }
            if let Some(k) = known {
                out.push(Rewrite::AllUses(v, k));
            }
        }
        Opcode::SRem | Opcode::SDiv => {
            let Some(v) = func.result(inst) else { return };
            let Some(k) = func.as_int_const(args[1]) else { return };
            if k == 0 || k == i32::MIN || func.as_int_const(args[0]).is_some() {
                return;
            }
            let m = (k as i64).abs() - 1;
            let a = args[0];
            // |a| ≤ |k| − 1: a − 0 ≤ m and 0 − a ≤ m.
            if facts.prove_upper(b, a, m) && facts.prove_lower(b, a, -m) {
                if func.opcode(inst) == Opcode::SRem {
                    out.push(Rewrite::Replace(v, a));
                } else {
                    out.push(Rewrite::IntConst(v, 0));
                }
            }
        }
        _ => {}
    }
}

fn is_icmp(func: &Function, v: Value) -> bool {
    func.def_inst(v).is_some_and(|i| matches!(func.opcode(i), Opcode::Icmp(_)))
}

/// The outcome of `icmp cc x, y` in block `b`, if the facts decide it.
fn decide(facts: &Constraints<'_>, b: Block, cc: IntCC, x: Value, y: Value) -> Option<bool> {
    if facts.prove_icmp(b, cc, x, y) {
        Some(true)
    } else if facts.prove_icmp(b, cc.inverse(), x, y) {
        Some(false)
    } else {
        None
    }
}
