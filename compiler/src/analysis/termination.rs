//! Loop termination: which natural loops provably leave after finitely many iterations.
//!
//! Why: a loop (or a call of a function containing one) whose results nothing uses can only
//! be deleted if it finishes — deleting an infinite loop changes a hanging program into one
//! that continues. [`super::funcinfo`] uses [`all_loops_terminate`] for
//! [`FuncSummary::always_returns`](super::funcinfo::FuncSummary::always_returns), and the
//! `loop-deletion` pass uses [`loop_terminates`].
//!
//! # The proof rule
//! A loop `L` finishes every time it is entered, provided every single iteration finishes
//! (its inner loops finish and its calls return — checked separately by the callers), if it
//! has a *bounding exit*: a conditional branch `br c, t, f` in a block `E` of `L` itself (not
//! of an inner loop) that
//! * leaves `L` on one side and stays in it on the other;
//! * dominates every latch of `L`, so every iteration that goes around executes it;
//! * tests `c = icmp cc x, bound` (either operand order), where `bound` is defined outside
//!   `L` (so it has one value for the whole stay in the loop) and `x` is an *induction
//!   variable* of `L`: a phi `p` of the header whose incoming value on every back edge is one
//!   value `next = p + s` (or `s + p`, or `p - (−s)`) with `s` a non-zero constant — or that
//!   `next` itself.
//!
//! Then the tested value changes by exactly `s` (wrapping) from one test to the next, and
//! the loop continues only while `x cc' bound` holds (`cc'` is `cc`, negated when the branch
//! stays on its false side). It must leave when, with `s > 0`:
//! * `cc'` is `<`: while it continues, `x ≤ bound − 1`; if `bound ≤ i32::MAX − s + 1`
//!   (always true for `s = 1`) `x + s` does not wrap, so `x` grows strictly and reaches
//!   `bound` within 2³² tests;
//! * `cc'` is `≤`: the same with `bound ≤ i32::MAX − s` (a constant bound; `i ≤ INT_MAX` with
//!   step 1 never ends);
//!
//! and symmetrically for `s < 0` with `>` and `≥`. Besides, `cc'` = `==` leaves by the second
//! test (`x` changed, `s ≠ 0` modulo 2³²), and `cc'` = `≠` with `s = ±1` leaves within 2³²
//! tests (wrapping visits every value). Every other combination (a step moving away from the
//! bound, a possibly wrapping step) is not proven.
//!
//! A whole function's loops all terminate when its reachable CFG is reducible (an
//! irreducible cycle is no natural loop and could spin forever) and every natural loop has a
//! bounding exit: every cycle of a reducible graph lies in some natural loop, and every
//! iteration of a loop finishes once its inner loops do.
//!
//! Assumes a verifier-clean function; blocks outside the layout and unreachable blocks are in
//! no loop and ignored.

use super::counted::step_of;
use super::domtree::DomTree;
use super::loops::{Loop, LoopForest};
use crate::ir::{Function, IntCC, Opcode, Value, ValueDef};

/// Every natural loop of `func` has a bounding exit and the CFG is reducible (see the module
/// documentation): no execution of `func` stays in a cycle forever, provided its calls return.
pub fn all_loops_terminate(func: &Function, domtree: &DomTree, loops: &LoopForest) -> bool {
    loops.irreducible_edges().is_empty() && loops.loops().all(|l| loop_terminates(func, domtree, loops, l))
}

/// `l` and every loop nested in it have a bounding exit, and no irreducible cycle exists in
/// the function: once entered, `l` is left after finitely many iterations, provided its calls
/// return.
pub fn loop_nest_terminates(func: &Function, domtree: &DomTree, loops: &LoopForest, l: Loop) -> bool {
    if !loops.irreducible_edges().is_empty() {
        return false;
    }
    let mut work = vec![l];
    while let Some(x) = work.pop() {
        if !loop_terminates(func, domtree, loops, x) {
            return false;
        }
        work.extend(loops.children(x).iter().copied());
    }
    true
}

/// `l` has a bounding exit (see the module documentation). Says nothing about inner loops or
/// irreducible cycles inside `l`.
pub fn loop_terminates(func: &Function, domtree: &DomTree, loops: &LoopForest, l: Loop) -> bool {
    let latches = loops.latches(l);
    loops.exits(l).iter().any(|&(exiting, _)| {
        loops.innermost_loop(exiting) == Some(l)
            && latches.iter().all(|&latch| domtree.dominates(exiting, latch))
            && is_bounding_branch(func, loops, l, exiting)
    })
}

fn is_bounding_branch(func: &Function, loops: &LoopForest, l: Loop, exiting: crate::ir::Block) -> bool {
    let Some(branch) = func.terminator(exiting) else { return false };
    if func.opcode(branch) != Opcode::Br {
        return false;
    }
    let targets = func.targets(branch);
    let stays_on_true = match (loops.contains(l, targets[0]), loops.contains(l, targets[1])) {
        (true, false) => true,
        (false, true) => false,
        _ => return false,
    };
    let Some(cmp) = func.def_inst(func.args(branch)[0]) else { return false };
    let Opcode::Icmp(cc) = func.opcode(cmp) else { return false };
    let cc = if stays_on_true { cc } else { cc.inverse() };
    let invariant = |v: Value| match func.value_def(v) {
        ValueDef::Inst(i) => func.inst_block(i).is_some_and(|b| !loops.contains(l, b)),
        _ => true,
    };
    let [a, b] = [func.args(cmp)[0], func.args(cmp)[1]];
    let (x, bound, cc) = if invariant(b) {
        (a, b, cc)
    } else if invariant(a) {
        (b, a, cc.swapped())
    } else {
        return false;
    };
    let Some(step) = induction_step(func, loops, l, x) else { return false };
    leaves(cc, step, func.as_int_const(bound))
}

/// If `x` is an induction variable of `l` (a header phi whose every back-edge value is one
/// `next = phi + s`, or that `next` itself), its step `s`.
fn induction_step(func: &Function, loops: &LoopForest, l: Loop, x: Value) -> Option<i32> {
    let header = loops.header(l);
    let phi_value = if is_header_phi(func, header, x) {
        x
    } else {
        let def = func.def_inst(x)?;
        if !matches!(func.opcode(def), Opcode::Add | Opcode::Sub) {
            return None;
        }
        func.args(def).iter().copied().find(|&a| is_header_phi(func, header, a))?
    };
    let phi = func.def_inst(phi_value)?;
    let mut next = None;
    for (pred, v) in func.inst(phi).phi_incoming() {
        if loops.contains(l, pred) {
            if next.is_some_and(|n| n != v) {
                return None;
            }
            next = Some(v);
        }
    }
    let next = next?;
    let step = step_of(func, phi_value, next)?;
    (x == phi_value || x == next).then_some(step)
}

fn is_header_phi(func: &Function, header: crate::ir::Block, v: Value) -> bool {
    func.def_inst(v).is_some_and(|i| func.opcode(i) == Opcode::Phi && func.inst_block(i) == Some(header))
}

/// A value changing by `step` per test, the loop continuing while `x cc bound`, must fail the
/// test after finitely many steps (see the module documentation).
fn leaves(cc: IntCC, step: i32, bound: Option<i32>) -> bool {
    let step = step as i64;
    let bound = bound.map(i64::from);
    let (max, min) = (i32::MAX as i64, i32::MIN as i64);
    match cc {
        IntCC::Eq => true,
        IntCC::Ne => step == 1 || step == -1,
        IntCC::Lt if step > 0 => step == 1 || bound.is_some_and(|b| b <= max - step + 1),
        IntCC::Le if step > 0 => bound.is_some_and(|b| b <= max - step),
        IntCC::Gt if step < 0 => step == -1 || bound.is_some_and(|b| b >= min - step - 1),
        IntCC::Ge if step < 0 => bound.is_some_and(|b| b >= min - step),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::cfg::ControlFlowGraph;
    use crate::ir::parser::parse_module;

    fn terminates(src: &str) -> bool {
        let module = parse_module(src).expect("test IR parses");
        let func = module.funcs().next().expect("one function").1;
        let cfg = ControlFlowGraph::compute(func);
        let dt = DomTree::compute(&cfg);
        let loops = LoopForest::compute(&cfg, &dt);
        assert!(loops.num_loops() > 0, "the test has a loop");
        all_loops_terminate(func, &dt, &loops)
    }

    /// `while (i CC BOUND) i = i + STEP` with the test in the header, the loop staying on
    /// the branch's true side.
    fn header_loop(cc: &str, bound: &str, step: &str) -> String {
        format!(
            "func @f(%n: i32) -> i32 {{
e:
    jump h
h:
    %i = phi i32 [e: %n], [b: %i2]
    %c = icmp {cc} %i, {bound}
    br %c, b, x
b:
    %i2 = add i32 %i, {step}
    jump h
x:
    ret %i
}}"
        )
    }

    #[test]
    fn steps_towards_the_bound_terminate() {
        assert!(terminates(&header_loop("lt", "%n", "1")));
        assert!(terminates(&header_loop("gt", "%n", "-1")));
        assert!(terminates(&header_loop("ne", "%n", "1")));
        assert!(terminates(&header_loop("ne", "%n", "-1")));
        assert!(terminates(&header_loop("eq", "%n", "7")));
        assert!(terminates(&header_loop("lt", "1000", "4")));
        assert!(terminates(&header_loop("le", "1000", "1")));
        assert!(terminates(&header_loop("ge", "-1000", "-3")));
    }

    #[test]
    fn possibly_infinite_loops_are_not_proven() {
        // Moving away from the bound.
        assert!(!terminates(&header_loop("lt", "%n", "-1")));
        assert!(!terminates(&header_loop("gt", "%n", "1")));
        // `i <= INT_MAX` holds for every i: `i <= n` with an unknown n may never end.
        assert!(!terminates(&header_loop("le", "%n", "1")));
        assert!(!terminates(&header_loop("le", "2147483647", "1")));
        // A step of 2 may jump over `n` (≠) or wrap past INT_MAX (<).
        assert!(!terminates(&header_loop("ne", "%n", "2")));
        assert!(!terminates(&header_loop("lt", "%n", "2")));
        assert!(!terminates(&header_loop("lt", "2147483647", "2")));
        assert!(terminates(&header_loop("lt", "2147483646", "2")));
        // Bound not invariant: compared with itself plus one.
        let src = header_loop("lt", "%i2", "1").replace("%c = icmp lt %i, %i2\n    br %c, b, x\nb:\n    %i2 = add i32 %i, 1", "%i2 = add i32 %i, 1\n    %c = icmp lt %i, %i2\n    br %c, b, x\nb:");
        assert!(!terminates(&src));
    }

    #[test]
    fn exit_must_run_on_every_iteration() {
        // The bounding test sits in one arm of an if inside the loop: the other arm loops
        // without testing anything.
        let src = "func @f(%n: i32, %m: i32) -> i32 {
e:
    jump h
h:
    %i = phi i32 [e: 0], [t: %i2], [u: %i2]
    %i2 = add i32 %i, 1
    %d = icmp lt %m, 0
    br %d, t, u
t:
    %c = icmp lt %i2, %n
    br %c, h, x
u:
    jump h
x:
    ret %i
}";
        assert!(!terminates(src));
    }

    #[test]
    fn every_back_edge_must_step_the_variable() {
        // One latch increments, the other keeps `i` unchanged.
        let src = "func @f(%n: i32, %m: i32) -> i32 {
e:
    jump h
h:
    %i = phi i32 [e: 0], [b: %i2], [k: %i]
    %c = icmp lt %i, %n
    br %c, t, x
t:
    %d = icmp lt %m, 0
    br %d, k, b
k:
    jump h
b:
    %i2 = add i32 %i, 1
    jump h
x:
    ret %i
}";
        assert!(!terminates(src));
    }

    #[test]
    fn latch_test_of_the_next_value_and_nested_loops() {
        let src = "func @f(%n: i32) -> i32 {
e:
    jump h
h:
    %i = phi i32 [e: 0], [l: %i2]
    jump ih
ih:
    %j = phi i32 [h: %n], [ih: %j2]
    %j2 = sub i32 %j, 1
    %d = icmp gt %j2, 0
    br %d, ih, l
l:
    %i2 = add i32 %i, 1
    %c = icmp lt %i2, %n
    br %c, h, x
x:
    ret %i
}";
        assert!(terminates(src));
        // The inner loop counting up with `>` never proves anything.
        assert!(!terminates(&src.replace("%j2 = sub i32 %j, 1", "%j2 = add i32 %j, 1")));
    }

    #[test]
    fn irreducible_cycles_are_not_proven() {
        let src = "func @f(%n: i32) -> i32 {
e:
    %c = icmp lt %n, 0
    br %c, a, b
a:
    %i = phi i32 [e: 0], [b: %k]
    %i2 = add i32 %i, 1
    %d = icmp lt %i2, 10
    br %d, b, x
b:
    %k = phi i32 [e: 0], [a: %i2]
    jump a
x:
    ret %i
}";
        let module = parse_module(src).expect("parses");
        let func = module.funcs().next().expect("one function").1;
        let cfg = ControlFlowGraph::compute(func);
        let dt = DomTree::compute(&cfg);
        let loops = LoopForest::compute(&cfg, &dt);
        assert!(!all_loops_terminate(func, &dt, &loops));
    }
}
