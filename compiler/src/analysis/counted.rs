//! Counted-loop recognition: `for (i = init; i cc bound; i += step)` in SSA form.
//!
//! A loop is *counted* when, in canonical form (preheader, single latch — see
//! `loop-simplify`), its only exit is a conditional branch whose condition compares a *basic
//! induction variable* with a loop-invariant bound:
//! * the IV is a header phi `i = phi [preheader: init], [latch: next]` with
//!   `next = add i, step` or `add step, i` or `sub i, c` (`step` a non-zero constant);
//! * the exiting block is the header (test before the body: `while`) or the latch (test
//!   after it: a rotated `do-while`), and it is the loop's only exiting block;
//! * the condition is `icmp cc x, bound` (or `icmp cc bound, x`, normalised) with `x` the IV
//!   (header test) or `next` (latch test), and `bound` defined outside the loop;
//! * `next` is the only in-loop definition feeding the phi (so `i` changes by exactly `step`
//!   per iteration, and nothing else in the body can change it).
//!
//! A bound that is redefined inside the loop is not loop-invariant, so such loops are not
//! counted. [`CountedLoop::trip_count`] gives the exact number of times the body runs when
//! `init` and `bound` are constants, computed in 64-bit arithmetic and rejected when the IV
//! would wrap around before the test fails (wrapping changes the count; we do not model it).

use super::cfg::ControlFlowGraph;
use super::loops::{Loop, LoopForest};
use crate::ir::{Block, Function, Inst, IntCC, Opcode, Value, ValueDef};

/// A recognised counted loop (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CountedLoop {
    pub preheader: Block,
    pub header: Block,
    pub latch: Block,
    /// The block ending in the exit test (the header or the latch).
    pub exiting: Block,
    /// The exit test's branch.
    pub branch: Inst,
    /// The induction phi in the header.
    pub iv: Value,
    /// The phi's incoming value from the latch: `iv + step`.
    pub next: Value,
    pub init: Value,
    pub step: i32,
    pub bound: Value,
    /// The loop continues while `tested cc bound`, where `tested` is `next` if
    /// [`CountedLoop::tests_next`], else `iv`.
    pub cc: IntCC,
    /// Whether the test is in the latch, after the whole body (a one-block loop's test is).
    pub test_in_latch: bool,
    /// Whether the test compares `next` (else `iv`).
    pub tests_next: bool,
}

impl CountedLoop {
    /// Recognises `l` as a counted loop, if it is one.
    pub fn recognise(func: &Function, cfg: &ControlFlowGraph, loops: &LoopForest, l: Loop) -> Option<CountedLoop> {
        let preheader = loops.preheader(cfg, l)?;
        let [latch] = loops.latches(l) else { return None };
        let latch = *latch;
        let header = loops.header(l);
        let exits = loops.exits(l);
        let exiting = exits.first()?.0;
        if exits.iter().any(|&(b, _)| b != exiting) || (exiting != header && exiting != latch) {
            return None;
        }
        let branch = func.terminator(exiting)?;
        if func.opcode(branch) != Opcode::Br {
            return None;
        }
        let targets = func.targets(branch);
        let continue_on_true = match (loops.contains(l, targets[0]), loops.contains(l, targets[1])) {
            (true, false) => true,
            (false, true) => false,
            _ => return None,
        };
        let cond = func.args(branch)[0];
        let cmp = func.def_inst(cond)?;
        let Opcode::Icmp(mut cc) = func.opcode(cmp) else { return None };
        if !continue_on_true {
            cc = cc.inverse();
        }
        let invariant = |v: Value| match func.value_def(v) {
            ValueDef::Inst(i) => func.inst_block(i).is_some_and(|b| !loops.contains(l, b)),
            _ => true,
        };
        let test_in_latch = exiting == latch;
        let [a, b] = [func.args(cmp)[0], func.args(cmp)[1]];
        for phi in func.block_phis(header) {
            let iv = func.result(phi)?;
            let incoming: Vec<(Block, Value)> = func.inst(phi).phi_incoming().collect();
            if incoming.len() != 2 {
                continue;
            }
            let Some(&(_, init)) = incoming.iter().find(|(blk, _)| *blk == preheader) else { continue };
            let Some(&(_, next)) = incoming.iter().find(|(blk, _)| *blk == latch) else { continue };
            let Some(step) = step_of(func, iv, next) else { continue };
            let (tested, bound, cc) = if (a == iv || a == next) && invariant(b) {
                (a, b, cc)
            } else if (b == iv || b == next) && invariant(a) {
                (b, a, cc.swapped())
            } else {
                continue;
            };
            let tests_next = tested == next;
            if tests_next && !test_in_latch {
                // `next` is computed in the latch, after a header test: not our shape.
                continue;
            }
            return Some(CountedLoop {
                preheader,
                header,
                latch,
                exiting,
                branch,
                iv,
                next,
                init,
                step,
                bound,
                cc,
                test_in_latch,
                tests_next,
            });
        }
        None
    }

    /// How many times the loop's latch-to-header edge plus the final exit run the body: the
    /// number of iterations that execute the whole loop body, when `init` and `bound` are
    /// constants and the IV does not wrap. For a header test this may be 0; for a latch test
    /// it is at least 1.
    pub fn trip_count(&self, func: &Function) -> Option<u64> {
        let init = func.as_int_const(self.init)? as i64;
        let bound = func.as_int_const(self.bound)? as i64;
        let step = self.step as i64;
        // Values tested: x_k = first + k·step for k = 0, 1, ...; count the leading k for which
        // `x_k cc bound` holds.
        let first = if self.tests_next { init + step } else { init };
        let holds = |x: i64| match self.cc {
            IntCC::Lt => x < bound,
            IntCC::Le => x <= bound,
            IntCC::Gt => x > bound,
            IntCC::Ge => x >= bound,
            IntCC::Ne => x != bound,
            IntCC::Eq => x == bound,
        };
        let tests_true: i64 = if !holds(first) {
            0
        } else {
            match self.cc {
                IntCC::Lt | IntCC::Le if step > 0 => {
                    let last = if self.cc == IntCC::Lt { bound - 1 } else { bound };
                    (last - first) / step + 1
                }
                IntCC::Gt | IntCC::Ge if step < 0 => {
                    let last = if self.cc == IntCC::Gt { bound + 1 } else { bound };
                    (first - last) / -step + 1
                }
                IntCC::Ne if (bound - first) % step == 0 && (bound - first) / step > 0 => (bound - first) / step,
                _ => return None,
            }
        };
        // Every IV value computed before the exit must fit in i32 (no wrapping).
        let last_computed = first + tests_true * step;
        if last_computed < i32::MIN as i64 || last_computed > i32::MAX as i64 {
            return None;
        }
        let iterations = if self.test_in_latch { tests_true + 1 } else { tests_true };
        u64::try_from(iterations).ok()
    }
}

/// The constant step when `next` is `iv + c`, `c + iv` or `iv - c` (c ≠ 0).
pub(crate) fn step_of(func: &Function, iv: Value, next: Value) -> Option<i32> {
    let inst = func.def_inst(next)?;
    let args = func.args(inst);
    let step = match func.opcode(inst) {
        Opcode::Add if args[0] == iv => func.as_int_const(args[1])?,
        Opcode::Add if args[1] == iv => func.as_int_const(args[0])?,
        Opcode::Sub if args[0] == iv => func.as_int_const(args[1])?.checked_neg()?,
        _ => return None,
    };
    (step != 0).then_some(step)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::DomTree;
    use crate::ir::parser::parse_module;

    fn counted(src: &str) -> (Option<CountedLoop>, Option<u64>) {
        let module = parse_module(src).expect("test IR parses");
        let func = module.funcs().next().expect("one function").1;
        let cfg = ControlFlowGraph::compute(func);
        let dt = DomTree::compute(&cfg);
        let loops = LoopForest::compute(&cfg, &dt);
        let l = loops.loops().next().expect("one loop");
        let c = CountedLoop::recognise(func, &cfg, &loops, l);
        (c, c.and_then(|c| c.trip_count(func)))
    }

    const WHILE_LT: &str = "func @f(%n: i32) -> i32 {
e:
    jump h
h:
    %i = phi i32 [e: INIT], [b: %i2]
    %c = icmp lt %i, BOUND
    br %c, b, x
b:
    %i2 = add i32 %i, STEP
    jump h
x:
    ret %i
}";

    fn while_lt(init: &str, bound: &str, step: &str) -> String {
        WHILE_LT.replace("INIT", init).replace("BOUND", bound).replace("STEP", step)
    }

    #[test]
    fn header_test_trip_counts() {
        assert_eq!(counted(&while_lt("0", "10", "1")).1, Some(10));
        assert_eq!(counted(&while_lt("0", "10", "3")).1, Some(4));
        assert_eq!(counted(&while_lt("10", "10", "1")).1, Some(0), "zero-trip loop");
        assert_eq!(counted(&while_lt("0", "2147483647", "1")).1, Some(2147483647));
        assert_eq!(counted(&while_lt("0", "2147483647", "2")).1, None, "the IV would wrap");
        assert_eq!(counted(&while_lt("0", "10", "-1")).1, None, "counts down past the bound");
    }

    #[test]
    fn invariant_unknown_bound_is_counted_without_trip_count() {
        let (c, trip) = counted(&while_lt("0", "%n", "1"));
        let c = c.expect("counted");
        assert_eq!((c.step, c.cc, c.test_in_latch), (1, IntCC::Lt, false));
        assert_eq!(trip, None);
    }

    #[test]
    fn bound_changed_in_the_body_is_not_counted() {
        let src = "func @f(%n: i32) -> i32 {
e:
    jump h
h:
    %i = phi i32 [e: 0], [b: %i2]
    %m = phi i32 [e: %n], [b: %m2]
    %c = icmp lt %i, %m
    br %c, b, x
b:
    %i2 = add i32 %i, 1
    %m2 = sub i32 %m, 1
    jump h
x:
    ret %i
}";
        assert_eq!(counted(src).0, None);
    }

    #[test]
    fn break_makes_a_second_exit() {
        let src = "func @f(%n: i32) -> i32 {
e:
    jump h
h:
    %i = phi i32 [e: 0], [b: %i2]
    %c = icmp lt %i, 10
    br %c, t, x
t:
    %d = icmp eq %i, %n
    br %d, x, b
b:
    %i2 = add i32 %i, 1
    jump h
x:
    ret %i
}";
        assert_eq!(counted(src).0, None);
    }

    #[test]
    fn latch_test_counts_the_first_iteration() {
        let src = "func @f(%n: i32) -> i32 {
e:
    jump h
h:
    %i = phi i32 [e: 0], [h: %i2]
    %i2 = add i32 %i, 1
    %c = icmp ne %i2, 5
    br %c, h, x
x:
    ret %i
}";
        let (c, trip) = counted(src);
        assert!(c.expect("counted").test_in_latch);
        assert_eq!(trip, Some(5));
    }
}
