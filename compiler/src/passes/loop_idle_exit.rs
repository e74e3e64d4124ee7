//! `loop-idle-exit`: a loop leaves as soon as the rest of its iterations can only count.
//!
//! Why: a guard like `if (i < j) { j = j + 1; continue; }` at the top of a counted loop
//! (`transpose` swapping only the lower triangle) makes every iteration after the first
//! skipped one a skipped one too — `j` only grows, `i` does not change — and those iterations
//! do nothing but count `j` up to the bound. gcc predicates the skipped body; we do better
//! and leave the loop at the first skipped iteration, halving the iterations of `transpose`.
//!
//! Which loops (a natural loop `L` of a reducible CFG, after `loop-rotate`):
//! * one latch `t` ending in `br` on `u < n` (or `u <= C`, `C < INT_MAX` a constant) back to
//!   the header `h` and else to an exit block `E` outside `L`, `n` invariant in `L`;
//! * `h` ends in `br` on a comparison of a header phi `j` with an invariant `x` whose *idle*
//!   side is taken exactly when `j > x` (or `j >= x`): once taken it stays taken while `j`
//!   grows and `x` does not change;
//! * the idle side goes straight to `t`, or to a block `T` (only `h` before it, no phis)
//!   that jumps to `t`; no instruction of `h`, `T` or `t` has an effect (no store, call,
//!   `memzero`) — loads and divisions may go, like `dce` removes them: one that would trap is
//!   undefined behaviour;
//! * along the idle path every header phi gets back its own value, except `j` which gets
//!   `u`, and `u` is `j + 1` there (the same value `u` feeds both the exit test and `j`);
//! * `j` enters the loop as a constant other than `INT_MAX`. Together with the exit test
//!   this excludes wrapping: any `j` at the header is that constant or an earlier `u < n`.
//!
//! Then, from an idle iteration on, every iteration is idle, `j` strictly increases, and the
//! loop exits through `t` after finitely many steps with every other header phi unchanged
//! and nothing written: leaving from `h` directly to `E` at the first idle iteration is
//! equivalent, provided nothing after the loop reads `j` or any other value of the loop but
//! the unchanged header phis. `E`'s phis get for the new edge the value the idle path gives
//! them (a header phi other than `j`, or a value from outside `L`); if `h` already branches to
//! `E` the loop is left alone (a phi cannot tell two edges from one block apart). A value of
//! the loop read after it by an ordinary instruction (an accumulator: `s = s + ..` in the
//! body, `s` used after the loop) is allowed when `t` is `E`'s only predecessor: then `E`
//! dominates every such read, and the value first gets a phi in `E` (`[t: v]`, the reads
//! after the loop read it) that is treated like the other exit phis. Its idle-path value must
//! again be an unchanged header phi or a value from outside `L`.
//!
//! Rewrite: the idle edge of `h` goes to `E`; `T` (now unreachable) is deleted, or `t`'s phis
//! forget the edge from `h`.
//!
//! Merged form, when `h` holds nothing but its phis, the guard and the branch, its other side
//! (the work) is in the loop, `u` is not computed in `T`, one block enters the loop, and the
//! exit phis get from `t` what the header phis get from it: the
//! guard leaves the loop. The block entering the loop (or a new block on its edge, when it
//! branches elsewhere too) tests it once for the first iteration, `h` jumps to the work, and
//! `t` stays while `u < m`, `m = x < n ? x + 1 : n` (`x : n` for `j >= x`) computed before the
//! loop: `u < n` together with the guard of the next iteration, without overflow (`x + 1` is
//! only chosen when `x < n`). Leaving from `t` where the header would have left gives the exit
//! phis the same values. `transpose`'s inner loop becomes one block again.

use super::{FunctionCx, FunctionPass};
use crate::analysis::cfg::ControlFlowGraph;
use crate::analysis::{Loop, LoopForest};
use crate::ir::{Block, Function, Inst, InstData, IntCC, Opcode, Type, Value};

pub struct LoopIdleExit;

impl FunctionPass for LoopIdleExit {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let mut rewritten = 0u64;
        let mut merged = 0u64;
        'restart: loop {
            let loops = cx.analyses.loops(func);
            if !loops.irreducible_edges().is_empty() {
                break;
            }
            let cfg = cx.analyses.cfg(func);
            for l in loops.loops() {
                if !cfg.is_reachable(loops.header(l)) {
                    continue;
                }
                let Some(mut plan) = plan(func, &loops, &cfg, l) else { continue };
                // The skipped block must be entered from the header alone.
                if plan.idle_target != plan.latch && cfg.preds(plan.idle_target) != [plan.header] {
                    continue;
                }
                let merge = merge_point(func, &loops, &cfg, l, &plan);
                add_exit_phis(func, &loops, l, &mut plan);
                match merge {
                    Some(preheader) => {
                        apply_merged(func, &plan, preheader);
                        merged += 1;
                    }
                    None => apply(func, &plan),
                }
                rewritten += 1;
                continue 'restart;
            }
            break;
        }
        cx.count("loops_exiting_early", rewritten);
        cx.count("guards_merged_into_bound", merged);
        rewritten > 0
    }
}

struct Plan {
    header: Block,
    latch: Block,
    /// The block the idle side of the header's branch goes to (`latch` or a block before it).
    idle_target: Block,
    exit: Block,
    /// Per phi of `exit`, the value the new edge from the header carries.
    exit_values: Vec<(Inst, Value)>,
    /// Values of the loop read after it other than by phis of `exit` (whose only predecessor
    /// is then the latch), with the value each has along the idle path: they get exit phis
    /// (see [`add_exit_phis`]) before the rewrite.
    read_after: Vec<(Value, Value)>,
    /// The counter phi, the invariant it is compared with, and whether the guard is idle
    /// from `j > x` on (`true`) or from `j >= x` on.
    j_phi: Inst,
    x: Value,
    idle_strict: bool,
    /// The value tested by the latch, and the exclusive bound it is tested against (`None`
    /// for `u <= C`: the bound is `C + 1`).
    u: Value,
    n: Value,
    n_inclusive: bool,
}

fn block_of(func: &Function, v: Value) -> Option<Block> {
    func.def_inst(v).and_then(|i| func.inst_block(i))
}

/// `cmp` as `a cc b` with `a` the given operand on the left, if it is an integer comparison
/// with `a` as one of its operands.
fn oriented(func: &Function, cmp: Value, a: Value) -> Option<(IntCC, Value)> {
    let inst = func.def_inst(cmp)?;
    let Opcode::Icmp(cc) = func.opcode(inst) else { return None };
    let args = func.args(inst);
    if args[0] == a && args[1] != a {
        Some((cc, args[1]))
    } else if args[1] == a && args[0] != a {
        Some((cc.swapped(), args[0]))
    } else {
        None
    }
}

fn effect_free(func: &Function, b: Block) -> bool {
    func.block_insts(b).all(|i| {
        let op = func.opcode(i);
        op.is_terminator() || !op.has_side_effects()
    })
}

fn plan(func: &Function, loops: &LoopForest, cfg: &ControlFlowGraph, l: Loop) -> Option<Plan> {
    let header = loops.header(l);
    let [latch] = loops.latches(l) else { return None };
    let latch = *latch;
    if latch == header || header == func.entry() {
        return None;
    }
    // The latch: `br (u < n), header, exit`.
    let latch_term = func.terminator(latch)?;
    if func.opcode(latch_term) != Opcode::Br {
        return None;
    }
    let latch_targets = func.targets(latch_term);
    let (stay_when, exit) = match (latch_targets[0] == header, latch_targets[1] == header) {
        (true, false) => (true, latch_targets[1]),
        (false, true) => (false, latch_targets[0]),
        _ => return None,
    };
    if loops.contains(l, exit) {
        return None;
    }
    // The header: `br (j ? x), ...` with one side idle.
    let header_term = func.terminator(header)?;
    if func.opcode(header_term) != Opcode::Br {
        return None;
    }
    let header_targets = func.targets(header_term);
    if header_targets[0] == header_targets[1] || header_targets.contains(&exit) {
        return None;
    }
    let guard = func.args(header_term)[0];
    for j_phi in func.block_phis(header).collect::<Vec<_>>() {
        let j = func.result(j_phi)?;
        let Some((cc, x)) = oriented(func, guard, j) else { continue };
        if !loops.defines_outside(func, l, x) {
            continue;
        }
        // The side taken when `j cc x` holds, or when it fails, must be up-closed in `j`.
        // Idle from `j > x` on: when `j > x` holds, or when `j <= x` fails.
        let (idle_side, idle_strict) = match cc {
            IntCC::Gt => (0, true),
            IntCC::Ge => (0, false),
            IntCC::Le => (1, true),
            IntCC::Lt => (1, false),
            IntCC::Eq | IntCC::Ne => continue,
        };
        let idle_target = header_targets[idle_side];
        let guard = Guard { j_phi, j, x, idle_target, idle_strict };
        let exit_after_latch_only = cfg.preds(exit) == [latch];
        if let Some(plan) =
            plan_for(func, loops, l, header, latch, latch_term, stay_when, exit, exit_after_latch_only, guard)
        {
            return Some(plan);
        }
    }
    None
}

/// The header's guard: `j` against the invariant `x`, idle on the `idle_target` side.
struct Guard {
    j_phi: Inst,
    j: Value,
    x: Value,
    idle_target: Block,
    idle_strict: bool,
}

#[allow(clippy::too_many_arguments)]
fn plan_for(
    func: &Function,
    loops: &LoopForest,
    l: Loop,
    header: Block,
    latch: Block,
    latch_term: Inst,
    stay_when: bool,
    exit: Block,
    exit_after_latch_only: bool,
    guard: Guard,
) -> Option<Plan> {
    let Guard { j_phi, j, x, idle_target, idle_strict } = guard;
    // The block entering the latch along the idle path.
    let idle_pred = if idle_target == latch {
        header
    } else {
        let t = idle_target;
        let term = func.terminator(t)?;
        if func.opcode(term) != Opcode::Jump
            || func.targets(term)[0] != latch
            || func.block_phis(t).next().is_some()
            || !effect_free(func, t)
        {
            return None;
        }
        t
    };
    if !effect_free(func, header) || !effect_free(func, latch) {
        return None;
    }
    // The value of `v` at the end of the latch when the latch was entered from `idle_pred`.
    let along_idle = |v: Value| -> Value {
        if let Some(inst) = func.def_inst(v)
            && func.opcode(inst) == Opcode::Phi
            && func.inst_block(inst) == Some(latch)
        {
            let mut from_idle = func.inst(inst).phi_incoming().filter(|&(b, _)| b == idle_pred).map(|(_, x)| x);
            if let (Some(x), None) = (from_idle.next(), from_idle.next()) {
                return x;
            }
            return v; // never equal to what the callers look for
        }
        v
    };
    // `j` is fed by `u` from the latch, `u` is `j + 1` along the idle path.
    let incoming = |phi: Inst| -> Option<Value> {
        let mut from_latch = func.inst(phi).phi_incoming().filter(|&(b, _)| b == latch).map(|(_, x)| x);
        match (from_latch.next(), from_latch.next()) {
            (Some(x), None) => Some(x),
            _ => None,
        }
    };
    let u = incoming(j_phi)?;
    let step = func.def_inst(along_idle(u))?;
    let is_increment = func.opcode(step) == Opcode::Add && {
        let a = func.args(step);
        (a[0] == j && func.as_int_const(a[1]) == Some(1)) || (a[1] == j && func.as_int_const(a[0]) == Some(1))
    };
    if !is_increment {
        return None;
    }
    // Every other header phi keeps its value along the idle path.
    for phi in func.block_phis(header) {
        if phi != j_phi && Some(along_idle(incoming(phi)?)) != func.result(phi) {
            return None;
        }
    }
    // `j` enters as a constant below INT_MAX.
    for (b, init) in func.inst(j_phi).phi_incoming() {
        if !loops.contains(l, b) && func.as_int_const(init).is_none_or(|c| c == i32::MAX) {
            return None;
        }
    }
    // The latch stays while `u < n` (or `u <= C`, C < INT_MAX).
    let (cc, n) = oriented(func, func.args(latch_term)[0], u)?;
    let cc = if stay_when { cc } else { cc.inverse() };
    if !loops.defines_outside(func, l, n) {
        return None;
    }
    let n_inclusive = match cc {
        IntCC::Lt => false,
        IntCC::Le if func.as_int_const(n).is_some_and(|c| c < i32::MAX) => true,
        _ => return None,
    };
    // After the loop, unchanged header phis may be read anywhere; other values of the loop
    // by phis of the exit block over exit edges (handled below), or — when the latch is the
    // exit's only predecessor, so that the exit dominates every read after the loop — anywhere,
    // through a new exit phi.
    let mut read_after: Vec<Value> = Vec::new();
    let blocks = loops.blocks(l);
    for &b in blocks {
        for inst in func.block_insts(b) {
            let Some(v) = func.result(inst) else { continue };
            let header_phi_kept = func.opcode(inst) == Opcode::Phi && b == header && inst != j_phi;
            for &user in func.users(v) {
                let Some(ub) = func.inst_block(user) else { continue };
                if loops.contains(l, ub) || header_phi_kept {
                    continue;
                }
                // A phi of the exit reading `v` over an edge from the loop.
                let over_loop_edge = func.opcode(user) == Opcode::Phi
                    && func.inst(user).phi_incoming().all(|(pb, x)| x != v || loops.contains(l, pb));
                if ub == exit && over_loop_edge {
                    continue;
                }
                if !exit_after_latch_only {
                    return None;
                }
                if !read_after.contains(&v) {
                    read_after.push(v);
                }
            }
        }
    }
    let kept_header_phi = |v: Value| {
        func.def_inst(v).is_some_and(|i| i != j_phi && func.opcode(i) == Opcode::Phi) && block_of(func, v) == Some(header)
    };
    let mut exit_values = Vec::new();
    for phi in func.block_phis(exit) {
        let from_latch = func.inst(phi).phi_incoming().filter(|&(b, _)| b == latch).map(|(_, x)| x).next()?;
        let v = along_idle(from_latch);
        if !(kept_header_phi(v) || loops.defines_outside(func, l, v)) {
            return None;
        }
        exit_values.push((phi, v));
    }
    let mut read_after_values = Vec::new();
    for v in read_after {
        let idle = along_idle(v);
        if !(kept_header_phi(idle) || loops.defines_outside(func, l, idle)) {
            return None;
        }
        read_after_values.push((v, idle));
    }
    Some(Plan {
        header,
        latch,
        idle_target,
        exit,
        exit_values,
        read_after: read_after_values,
        j_phi,
        x,
        idle_strict,
        u,
        n,
        n_inclusive,
    })
}

/// Gives each value in `plan.read_after` a phi at the start of the exit (entered from the
/// latch alone) and makes every read after the loop, except the exit's own phis, read that
/// phi; the phi joins `plan.exit_values` with the value's idle-path value for the new edge.
fn add_exit_phis(func: &mut Function, loops: &LoopForest, l: Loop, plan: &mut Plan) {
    for (v, idle) in std::mem::take(&mut plan.read_after) {
        let phi = func.create_inst(InstData::phi(func.value_type(v), &[(plan.latch, v)]));
        func.prepend_inst(plan.exit, phi);
        let merged = func.result(phi).expect("a phi has a result");
        for user in func.users(v).to_vec() {
            let Some(ub) = func.inst_block(user) else { continue };
            if user == phi || loops.contains(l, ub) || (ub == plan.exit && func.opcode(user) == Opcode::Phi) {
                continue;
            }
            for idx in 0..func.args(user).len() {
                if func.args(user)[idx] == v {
                    func.set_arg(user, idx, merged);
                }
            }
        }
        plan.exit_values.push((phi, idle));
    }
}

fn apply(func: &mut Function, plan: &Plan) {
    for &(phi, v) in &plan.exit_values {
        func.push_phi_incoming(phi, plan.header, v);
    }
    func.retarget_edge(plan.header, plan.idle_target, plan.exit);
    if plan.idle_target == plan.latch {
        func.remove_phi_pred(plan.latch, plan.header);
    } else {
        func.remove_phi_pred(plan.latch, plan.idle_target);
        func.remove_block(plan.idle_target);
    }
}


/// Whether the guard can become part of the latch's bound instead (returns the one block
/// entering the loop): the header holds nothing but its phis, the guard and the branch; one
/// block outside the loop enters it (over one edge); and when the latch exits where the header's guard would have (the
/// next iteration being idle), the exit phis already get from the latch what they would get
/// from the header: the values the header phis receive from the latch; and nothing after the
/// loop reads a header phi but the exit phis.
fn merge_point(func: &Function, loops: &LoopForest, cfg: &ControlFlowGraph, l: Loop, plan: &Plan) -> Option<Block> {
    let header = plan.header;
    let term = func.terminator(header)?;
    let guard = func.args(term)[0];
    let guard_inst = func.def_inst(guard)?;
    if func.inst_block(guard_inst) != Some(header) || func.users(guard) != [term] {
        return None;
    }
    if func.block_insts(header).any(|i| i != term && i != guard_inst && func.opcode(i) != Opcode::Phi) {
        return None;
    }
    // The header will jump to the work, which must stay in the loop and reach the latch's
    // test of `u`; the idle block, deleted, must not be where `u` is computed.
    let work = func.targets(term).iter().copied().find(|&t| t != plan.idle_target)?;
    if !loops.contains(l, work) || (plan.idle_target != plan.latch && block_of(func, plan.u) == Some(plan.idle_target)) {
        return None;
    }
    let mut outside = cfg.unique_preds(header).into_iter().filter(|&p| !loops.contains(l, p));
    let (Some(entering), None) = (outside.next(), outside.next()) else { return None };
    let entering_term = func.terminator(entering)?;
    let edges_to_header = func.targets(entering_term).iter().filter(|&&t| t == header).count();
    if edges_to_header != 1 || !matches!(func.opcode(entering_term), Opcode::Jump | Opcode::Br) {
        return None;
    }
    let latch_values = plan.exit_values.iter().map(|&(phi, v)| (func.phi_incoming_from(phi, plan.latch), v));
    let read_after = plan.read_after.iter().map(|&(v, idle)| (Some(v), idle));
    for (from_latch, v) in latch_values.chain(read_after) {
        let from_latch = from_latch?;
        let expected = match func.def_inst(v) {
            Some(i) if func.inst_block(i) == Some(header) => func.phi_incoming_from(i, plan.latch)?,
            _ => v,
        };
        if from_latch != expected {
            return None;
        }
    }
    // The new edge from the preheader to the exit bypasses the header: a header phi read
    // after the loop other than by an exit phi over a loop edge (which gets the phi's entry
    // value) would no longer be dominated by its definition.
    for phi in func.block_phis(header) {
        let Some(v) = func.result(phi) else { continue };
        for &user in func.users(v) {
            let Some(ub) = func.inst_block(user) else { continue };
            if loops.contains(l, ub) {
                continue;
            }
            let exit_phi_over_loop_edge = ub == plan.exit
                && func.opcode(user) == Opcode::Phi
                && func.inst(user).phi_incoming().all(|(pb, x)| x != v || loops.contains(l, pb));
            if !exit_phi_over_loop_edge {
                return None;
            }
        }
    }
    Some(entering)
}

/// The merged rewrite: the preheader tests the guard once for the first iteration, the
/// header jumps to the work unconditionally, and the latch stays while `u < m` with
/// `m = x < n ? x + 1 : n` (idle from `j > x`) or `m = x < n ? x : n` (from `j >= x`):
/// `u < n` and `u <= x` (resp. `u < x`) together, without overflow (`x + 1` is only chosen
/// when `x < n`).
fn apply_merged(func: &mut Function, plan: &Plan, entering: Block) {
    let header = plan.header;
    // A preheader ending in `jump header` receives the first iteration's guard; a block
    // that branches elsewhere too gets a new one on its edge to the header.
    let preheader = if func.opcode(func.terminator(entering).expect("a terminator")) == Opcode::Jump {
        entering
    } else {
        let split = func.create_block();
        func.append(split, InstData::jump(header));
        func.retarget_edge(entering, header, split);
        func.rename_phi_pred(header, entering, split);
        split
    };
    let header_term = func.terminator(header).expect("the header ends in a branch");
    let work = *func.targets(header_term).iter().find(|&&t| t != plan.idle_target).expect("two targets");
    let pre_term = func.terminator(preheader).expect("the preheader ends in a jump");
    let init = func.phi_incoming_from(plan.j_phi, preheader).expect("the counter enters from the preheader");

    // Preheader: the first iteration's guard, and the merged bound.
    let cc = if plan.idle_strict { IntCC::Gt } else { IntCC::Ge };
    let idle_at_entry = func.insert_value_before(pre_term, InstData::icmp(cc, init, plan.x));
    let bound = if plan.n_inclusive {
        let c = func.as_int_const(plan.n).expect("an inclusive bound is a constant below INT_MAX");
        func.iconst(c + 1)
    } else {
        plan.n
    };
    let last = if plan.idle_strict {
        let one = func.iconst(1);
        func.insert_value_before(pre_term, InstData::binary(Opcode::Add, plan.x, one, Type::I32))
    } else {
        plan.x
    };
    let x_first = func.insert_value_before(pre_term, InstData::icmp(IntCC::Lt, plan.x, bound));
    let limit =
        func.insert_value_before(pre_term, InstData::new(Opcode::Select, &[x_first, last, bound], &[], Type::I32));
    let entry_values: Vec<(Inst, Value)> = plan
        .exit_values
        .iter()
        .map(|&(phi, v)| match func.def_inst(v) {
            Some(i) if func.inst_block(i) == Some(header) => {
                (phi, func.phi_incoming_from(i, preheader).expect("header phis have a preheader entry"))
            }
            _ => (phi, v),
        })
        .collect();
    for (phi, v) in entry_values {
        func.push_phi_incoming(phi, preheader, v);
    }
    func.replace_inst(pre_term, InstData::br(idle_at_entry, plan.exit, header));

    // Header: straight to the work.
    func.replace_inst(header_term, InstData::jump(work));
    if plan.idle_target == plan.latch {
        func.remove_phi_pred(plan.latch, header);
    } else {
        func.remove_phi_pred(plan.latch, plan.idle_target);
        func.remove_block(plan.idle_target);
    }

    // Latch: one test against the merged bound.
    let latch_term = func.terminator(plan.latch).expect("the latch ends in a branch");
    let stay = func.insert_value_before(latch_term, InstData::icmp(IntCC::Lt, plan.u, limit));
    func.replace_inst(latch_term, InstData::br(stay, header, plan.exit));
}
