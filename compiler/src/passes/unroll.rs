//! `unroll` (catalogue: LoopUnroll): unrolls counted single-block loops with a run-time trip
//! count by a small factor `k`, keeping the original loop as the remainder loop.
//!
//! Why: a tight loop pays its compare, branch and phi copies once per iteration; unrolled, it
//! pays them once per `k` iterations, and later passes (GVN, instcombine, scheduling in the
//! back end) see `k` consecutive iterations at once.
//!
//! # Scope
//! Single-block loops (header = latch = the only exiting block, as `loop-rotate` followed by
//! `simplify-cfg` leaves small innermost loops) recognised as counted ([`CountedLoop`]: basic
//! IV `i` with constant step `s`, loop-invariant bound, one exit, dedicated exit block),
//! continuing while `i cc bound` (or `i + s cc bound`) with
//! * `lt`/`le` and `s > 0`, or `gt`/`ge` and `s < 0` (monotone tests), or
//! * `ne` and `s = ±1`.
//!
//! Other loops (several exits, bound changed in the body, `eq` tests, tests moving away from
//! the bound, multi-block bodies, `alloca` in the body) are left alone. Loops whose constant
//! trip count is below `2k` are left to `full-unroll` (or not worth it).
//!
//! Size heuristic: `k = 4` when the block has at most [`SMALL_BODY`] non-phi instructions,
//! `k = 2` up to [`MEDIUM_BODY`], no unrolling above (code growth and register pressure: the
//! copies' values live at once).
//!
//! # Transformation
//! The loop block `L` (preheader `P`, exit `E`) is bottom-tested: whenever control is at `P`
//! or at `L`'s back edge, the body must run at least once more. New blocks:
//! ```text
//! P:  bound' = …; [ok = …; br ok, UH, R]  or  jump UH
//! UH: ψ = phi [P: init], [UB: value after copy k]     (one ψ per header phi)
//!     br (i_u can run k more iterations without exiting), UB, R
//! UB: copies 1..k of L's body; br (copy k's exit test), UH, E
//! R:  ρ = phi [UH: ψ] ([P: init])  ;  jump L         (L's phis now take ρ from R)
//! L:  the original loop, entered at least once: the remainder
//! E:  gains the edge from UB; values of L used after the loop get a phi [L: v], [UB: v_k]
//! ```
//! Copy `j` reads the header phis as copy `j−1`'s latch inputs, so every loop-carried value
//! (not only the IV) chains through the copies, and every instruction runs exactly as often
//! and in the same order as before: calls, stores and divisions need no special care.
//!
//! # The guard, exactly
//! With `y = i_u + o` (`o = s` when the test reads `i + s`, else 0) the original loop would
//! test `y + j·s cc bound` after the body copies `j = 0..k−2` — all must hold for the `k`
//! copies to run without an intermediate exit. For monotone tests they hold iff the last one
//! does, as a mathematical (non-wrapping) statement: `i_u + D cc bound` with `D = (k−2)·s + o`.
//! That is `i_u cc bound − D` provided `bound − D` does not wrap; when it would wrap (bound
//! within `|D|` of `INT_MIN` for `s > 0`, of `INT_MAX` for `s < 0`) no `i_u` satisfies it, so
//! `ok` sends control straight to the remainder. Under the guard, every IV value of the
//! copies lies between `i_u` and the bound, so nothing wraps and the copies compute exactly
//! what the original iterations computed. For `ne` with `s = 1` the tests hold iff
//! `(bound − y) mod 2³²` is not in `[0, k−2]`: comparing unsigned via a signed compare,
//! `(bound − y + INT_MIN) >s INT_MIN + k − 2` (wrapping arithmetic throughout, so a loop that
//! wraps around is still exact); `s = −1` is the mirror image with `y − bound`.
//!
//! Each loop is unrolled at most once per run (candidates are collected first): the
//! remainder loop is itself counted and must not be unrolled again.

use super::loop_clone::{ValueMap, clone_before, mapped, next_phi_values, phi_input};
use super::loop_simplify::LoopSimplify;
use super::{FunctionCx, FunctionPass};
use crate::analysis::counted::CountedLoop;
use crate::analysis::{ControlFlowGraph, Loop, LoopForest};
use crate::ir::{Block, Function, Inst, InstData, IntCC, Opcode, Type};

pub struct LoopUnroll;

/// Bodies of at most this many non-phi instructions are unrolled by 4.
pub const SMALL_BODY: usize = 16;
/// Bodies of at most this many non-phi instructions are unrolled by 2.
pub const MEDIUM_BODY: usize = 32;

impl FunctionPass for LoopUnroll {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let mut changed = LoopSimplify.run(func, cx);
        let loops = cx.analyses.loops(func);
        let headers: Vec<Block> =
            loops.loops_inner_first().filter(|&l| loops.blocks(l).len() == 1).map(|l| loops.header(l)).collect();
        let mut unrolled = 0u64;
        for h in headers {
            let cfg = cx.analyses.cfg(func);
            let loops = cx.analyses.loops(func);
            let Some(l) = loops.innermost_loop(h).filter(|&l| loops.header(l) == h) else { continue };
            let off_by_one = cx.faults.is_on(crate::faults::UNROLL_GUARD_OFF_BY_ONE);
            let Some(plan) = plan(func, &cfg, &loops, l, off_by_one) else { continue };
            unroll(func, &plan);
            unrolled += 1;
            changed = true;
        }
        cx.count("loops_unrolled", unrolled);
        changed
    }
}

/// How the unrolled loop decides whether `k` more iterations can run.
#[derive(Clone, Copy, Debug)]
enum Guard {
    /// `i_u cc bound − delta`, entered only when `bound − delta` does not wrap (`check_ok`).
    Ordered { cc: IntCC, delta: i32, check_ok: bool },
    /// `ne` with step ±1 (see the module documentation).
    NotEqual { offset: i32 },
}

struct Plan {
    cl: CountedLoop,
    exit: Block,
    factor: u32,
    guard: Guard,
}

/// `off_by_one`: the injected fault [`crate::faults::UNROLL_GUARD_OFF_BY_ONE`].
fn plan(func: &Function, cfg: &ControlFlowGraph, loops: &LoopForest, l: Loop, off_by_one: bool) -> Option<Plan> {
    if loops.blocks(l).len() != 1 {
        return None;
    }
    let cl = CountedLoop::recognise(func, cfg, loops, l)?;
    if cl.header != cl.latch || cl.exiting != cl.header || !cl.test_in_latch {
        return None;
    }
    let h = cl.header;
    if func.block_insts(h).any(|i| matches!(func.opcode(i), Opcode::Alloca { .. })) {
        return None;
    }
    let [exit] = loops.exit_blocks(l) else { return None };
    if cfg.preds(*exit) != [h] || cfg.preds(h).len() != 2 {
        return None;
    }
    for phi in func.block_phis(h) {
        if func.args(phi).len() != 2 || phi_input(func, phi, cl.preheader).is_none() || phi_input(func, phi, h).is_none()
        {
            return None;
        }
    }
    let body = func.block_insts(h).filter(|&i| func.opcode(i) != Opcode::Phi).count();
    let factor: u32 = if body <= SMALL_BODY {
        4
    } else if body <= MEDIUM_BODY {
        2
    } else {
        return None;
    };
    if cl.trip_count(func).is_some_and(|t| t < 2 * factor as u64) {
        return None;
    }
    let s = cl.step as i64;
    let o = if cl.tests_next { s } else { 0 };
    let guard = match cl.cc {
        IntCC::Lt | IntCC::Le | IntCC::Gt | IntCC::Ge => {
            let upward = matches!(cl.cc, IntCC::Lt | IntCC::Le);
            if upward != (s > 0) {
                return None;
            }
            let copies_after_test = if off_by_one { factor as i64 - 3 } else { factor as i64 - 2 };
            let delta = copies_after_test * s + o;
            let delta = i32::try_from(delta).ok().filter(|d| d.unsigned_abs() <= 1 << 30)?;
            // `bound − delta` must not wrap: bound ≥ INT_MIN + delta (s > 0) or
            // bound ≤ INT_MAX + delta (s < 0).
            let ok = |b: i64| if s > 0 { b >= i32::MIN as i64 + delta as i64 } else { b <= i32::MAX as i64 + delta as i64 };
            let check_ok = match func.as_int_const(cl.bound) {
                Some(b) if !ok(b as i64) => return None,
                Some(_) => false,
                None => delta != 0,
            };
            Guard::Ordered { cc: cl.cc, delta, check_ok }
        }
        IntCC::Ne if s == 1 || s == -1 => Guard::NotEqual { offset: o as i32 },
        _ => return None,
    };
    Some(Plan { cl, exit: *exit, factor, guard })
}

fn unroll(func: &mut Function, plan: &Plan) {
    let cl = &plan.cl;
    let (pre, h, exit) = (cl.preheader, cl.header, plan.exit);
    let insts: Vec<Inst> = func.block_insts(h).collect();
    let phis: Vec<Inst> = insts.iter().copied().filter(|&i| func.opcode(i) == Opcode::Phi).collect();
    let body: Vec<Inst> =
        insts.iter().copied().filter(|&i| func.opcode(i) != Opcode::Phi && !func.opcode(i).is_terminator()).collect();
    let branch = cl.branch;
    let (uh, ub, rem) = (func.create_block(), func.create_block(), func.create_block());
    let pre_term = func.terminator(pre).expect("preheader has a terminator");

    // P: the adjusted bound (and whether it exists) for the guard.
    let k = plan.factor as i32;
    let threshold = func.iconst(i32::MIN.wrapping_add(k - 2));
    let (adjusted, ok) = match plan.guard {
        Guard::Ordered { delta, check_ok, .. } => {
            let d = func.iconst(delta);
            let adjusted = func.insert_value_before(pre_term, InstData::binary(Opcode::Sub, cl.bound, d, Type::I32));
            let ok = check_ok.then(|| {
                let (cc, limit) =
                    if cl.step > 0 { (IntCC::Ge, i32::MIN + delta) } else { (IntCC::Le, i32::MAX + delta) };
                let limit = func.iconst(limit);
                func.insert_value_before(pre_term, InstData::icmp(cc, cl.bound, limit))
            });
            (adjusted, ok)
        }
        Guard::NotEqual { offset } => {
            let adjusted = if cl.step > 0 {
                // bound − offset + INT_MIN; the loop subtracts i_u.
                let c = func.iconst(i32::MIN.wrapping_sub(offset));
                InstData::binary(Opcode::Add, cl.bound, c, Type::I32)
            } else {
                // offset + INT_MIN − bound; the loop adds i_u.
                let c = func.iconst(offset.wrapping_add(i32::MIN));
                InstData::binary(Opcode::Sub, c, cl.bound, Type::I32)
            };
            (func.insert_value_before(pre_term, adjusted), None)
        }
    };
    match ok {
        Some(ok) => func.replace_inst(pre_term, InstData::br(ok, uh, rem)),
        None => func.replace_inst(pre_term, InstData::jump(uh)),
    }

    // UH: one phi per header phi, then the guard.
    let mut map = ValueMap::default();
    let mut psis = Vec::with_capacity(phis.len());
    for &phi in &phis {
        let init = phi_input(func, phi, pre).expect("checked by plan");
        let ty = func.inst(phi).ty;
        let psi = func.append_value(uh, InstData::phi(ty, &[(pre, init)]));
        map.insert(func.result(phi).expect("phi has a result"), psi);
        psis.push(psi);
    }
    let iv_u = mapped(&map, cl.iv);
    let guard = match plan.guard {
        Guard::Ordered { cc, .. } => InstData::icmp(cc, iv_u, adjusted),
        Guard::NotEqual { .. } => {
            let x = if cl.step > 0 {
                InstData::binary(Opcode::Sub, adjusted, iv_u, Type::I32)
            } else {
                InstData::binary(Opcode::Add, iv_u, adjusted, Type::I32)
            };
            let x = func.append_value(uh, x);
            InstData::icmp(IntCC::Gt, x, threshold)
        }
    };
    let guard = func.append_value(uh, guard);
    func.append(uh, InstData::br(guard, ub, rem));

    // UB: k copies of the body, then copy k's own exit test.
    let (ub_term, _) = func.append(ub, InstData::jump(uh));
    for j in 0..plan.factor {
        if j > 0 {
            for (r, v) in next_phi_values(func, &phis, h, &map) {
                map.insert(r, v);
            }
        }
        clone_before(func, &body, &mut map, ub_term);
    }
    let cond = mapped(&map, func.args(branch)[0]);
    let t = func.targets(branch);
    let redirect = |b: Block| if b == h { uh } else { b };
    let (t0, t1) = (redirect(t[0]), redirect(t[1]));
    func.replace_inst(ub_term, InstData::br(cond, t0, t1));
    let latch_values = next_phi_values(func, &phis, h, &map);
    for (&psi, &(_, v)) in psis.iter().zip(&latch_values) {
        let psi_inst = func.def_inst(psi).expect("psi is a phi");
        func.push_phi_incoming(psi_inst, ub, v);
    }

    // R: the remainder loop's entry values.
    for (&phi, &psi) in phis.iter().zip(&psis) {
        let ty = func.inst(phi).ty;
        let mut incoming = vec![(uh, psi)];
        if ok.is_some() {
            incoming.push((pre, phi_input(func, phi, pre).expect("checked by plan")));
        }
        let rho = func.append_value(rem, InstData::phi(ty, &incoming));
        let idx = func.targets(phi).iter().position(|&b| b == pre).expect("checked by plan");
        func.set_arg(phi, idx, rho);
        func.set_target(phi, idx, rem);
    }
    func.append(rem, InstData::jump(h));

    // E: the edge from UB. Exit phis take copy k's values; other uses of loop values after
    // the loop read a new phi merging both ways out.
    for phi in func.block_phis(exit).collect::<Vec<_>>() {
        let v = phi_input(func, phi, h).expect("the exit is dedicated to the loop");
        func.push_phi_incoming(phi, ub, mapped(&map, v));
    }
    for &inst in &insts {
        let Some(r) = func.result(inst) else { continue };
        let outside: Vec<Inst> = func
            .users(r)
            .iter()
            .copied()
            .filter(|&u| {
                func.inst_block(u) != Some(h) && !(func.inst_block(u) == Some(exit) && func.opcode(u) == Opcode::Phi)
            })
            .collect();
        if outside.is_empty() {
            continue;
        }
        let ty = func.value_type(r);
        let merged = InstData::phi(ty, &[(h, r), (ub, mapped(&map, r))]);
        let merged_inst = func.create_inst(merged);
        func.prepend_inst(exit, merged_inst);
        let merged = func.result(merged_inst).expect("phi has a result");
        for u in outside {
            for idx in 0..func.args(u).len() {
                if func.args(u)[idx] == r {
                    func.set_arg(u, idx, merged);
                }
            }
        }
    }
}
