//! Shapes chosen from the preconditions of the optimisation passes, so that the passes get
//! work (and get it wrong, if they are wrong) on executed code:
//! * global reads in loops (`hoist-global-loads`, `licm`): a loop whose body reads a global
//!   scalar or a fixed element of a global array that nothing in the function writes — or
//!   writes only right before leaving the loop (`if (..) { g = e; break; }`: no path from
//!   that write leads back to the read, which `hoist-global-loads` can hoist and `licm`
//!   cannot) — or, as the counter-case, reads it around a call that writes it;
//! * loop-invariant local arrays (`array-hoist`): `int k[3] = {a, b, c};` declared inside a
//!   loop with the same contents every iteration, then read — sometimes with one element
//!   that changes, which must stay in the loop;
//! * updates that change nothing (`trivial-phi` after `instcombine`): `x = x + 0;`, the same
//!   value assigned on both sides of an `if`;
//! * register pressure: many int and float values computed before a call and all used after
//!   it.
//!
//! Each is switched by a knob (`hoist_shapes`, `array_hoist`, `trivial_phis`,
//! `register_pressure`); straight-line loops with recurrences are in `loops.rs`. The loop
//! idioms are the opening statements of a counted loop of `loops.rs`.

use super::build;
use super::calls::{call_user, call_user_with, callable};
use super::cond::branch_cond;
use super::env::{self, ParamKind, Storage, VarId};
use super::expr::{clamp, index, value_for};
use super::features::Feature;
use super::loops::{counted_loop, counted_loop_opening};
use super::operand::{int_literal, stmt_ctx};
use super::prelude::Helper;
use super::state::Gen;
use super::value::{ECtx, FLOAT_VAR_BOUND, GExpr, Ty};
use sysyc::frontend::ast::{BType, BinaryOp, BlockItem, Expr, InitVal};

/// Largest array parameter length of a function an invariant local array is passed to (the
/// array then has at least that many elements).
const WRITER_MAX_LEN: u32 = 16;

/// A counted loop whose body opens with reads of a global (a scalar, or the element at
/// constant indices of an array), see [`global_reads`].
pub(super) fn global_read_loop(g: &mut Gen) -> Vec<BlockItem> {
    let readable = |v: &env::Var| v.storage == Storage::Global && v.readable() && !v.dims.contains(&0);
    let globals: Vec<VarId> = g.env.visible().into_iter().filter(|&id| readable(&g.env.vars[id])).collect();
    if globals.is_empty() {
        return counted_loop(g);
    }
    // Hoisting needs a global nothing wrote since the function was entered.
    let unwritten: Vec<VarId> = globals.iter().copied().filter(|id| !g.fcx.globals_written.contains(id)).collect();
    let var = if !unwritten.is_empty() && g.c.chance(0.8) {
        unwritten[g.pick_index(unwritten.len())]
    } else {
        globals[g.pick_index(globals.len())]
    };
    let writers: Vec<usize> = if g.fcx.pure {
        Vec::new()
    } else {
        let ctx = ECtx { impure_ok: true, stable: false, depth: g.cfg.max_expr_depth };
        callable(g, None, ctx).into_iter().filter(|&f| g.env.funcs[f].globals_written.contains(&var)).collect()
    };
    let clobber = if !writers.is_empty() && g.c.chance(0.4) {
        g.feature(Feature::GlobalClobberedInLoop);
        Some(writers[g.pick_index(writers.len())])
    } else {
        g.feature(Feature::HoistableGlobalLoad);
        None
    };
    // Nothing in the loop may assign the global by name while hoisting is possible.
    let lock = clobber.is_none();
    if lock {
        g.env.lock(var);
    }
    // A write just before leaving the loop: only in a loop no other loop repeats, in a
    // function (`main` writes its globals first), of a global it may write.
    let v = &g.env.vars[var];
    let exit_write = lock && g.fcx.loops.is_empty() && !g.fcx.is_main && !g.fcx.pure && !v.read_only && !v.is_const && g.c.chance(0.8);
    if exit_write {
        g.feature(Feature::GlobalWrittenAtLoopExit);
    }
    let at: Vec<i32> = g.env.vars[var].dims.clone().iter().map(|&d| g.c.range(0, d as i64 - 1) as i32).collect();
    g.fcx.affinity.push(var);
    let out = counted_loop_opening(g, &mut |g, counter| global_reads(g, var, &at, clobber, exit_write, counter));
    g.fcx.affinity.pop();
    if lock {
        g.env.unlock(var);
    }
    out
}

/// A counted loop opening with a loop-invariant local array (see [`invariant_array`]).
pub(super) fn invariant_array_loop(g: &mut Gen) -> Vec<BlockItem> {
    counted_loop_opening(g, &mut invariant_array)
}

/// A read of global `var`: the scalar, or the element at constant indices `at`.
fn global_read(g: &mut Gen, var: VarId, at: &[i32]) -> GExpr {
    let v = &g.env.vars[var];
    let (name, ty, dims) = (v.name.clone(), v.ty, v.dims.clone());
    g.work.charge(2);
    let idx: Vec<Expr> = at.iter().map(|&i| build::int(i)).collect();
    let e = build::elem(&name, idx);
    match ty {
        Ty::Int => GExpr::int(e, g.env.vars[var].range.filter(|_| dims.is_empty()), false, 2),
        Ty::Float => GExpr::float(e, FLOAT_VAR_BOUND, false, 2),
    }
}

/// `acc = acc + g * i;` [`f(...);`] `acc = acc - g;` [`if (i == c) { g = e; break; }`]
/// for a fresh local accumulator `acc`, global `g` (`var`, at indices `at`) and counter
/// `i`: with `clobber`, a call of that function (which writes the global) between the two
/// reads; with `exit_write`, a write of the same word followed by `break`.
fn global_reads(g: &mut Gen, var: VarId, at: &[i32], clobber: Option<usize>, exit_write: bool, counter: VarId) -> Vec<BlockItem> {
    let mut out = Vec::new();
    let ty = g.env.vars[var].ty;
    let acc = accumulator(g, ty, &mut out);
    let i = g.env.read(counter);
    let first = global_read(g, var, at);
    let update = |g: &mut Gen, value: Expr, op: BinaryOp| {
        let sum = build::bin(op, build::var(&acc), value);
        match ty {
            Ty::Int => build::assign_var(&acc, sum),
            Ty::Float => {
                let bound = 2.0 * FLOAT_VAR_BOUND * 1.0e4;
                let clamped = clamp(g, GExpr::float(sum, bound, false, 2));
                build::assign_var(&acc, clamped.e)
            }
        }
    };
    let scaled = build::bin(BinaryOp::Mul, first.e, i);
    out.push(build::stmt(update(g, scaled, BinaryOp::Add)));
    if let Some(f) = clobber {
        let ctx = ECtx { impure_ok: true, stable: false, depth: g.cfg.max_expr_depth };
        let call = call_user(g, f, ctx);
        out.push(build::stmt(build::expr_stmt(call.e)));
    }
    let second = global_read(g, var, at);
    out.push(build::stmt(update(g, second.e, BinaryOp::Sub)));
    g.work.charge(8);
    if exit_write {
        let (lo, hi) = g.env.vars[counter].range.unwrap_or((0, 0));
        let c = g.c.range(lo + (hi - lo) / 2, hi);
        let test = build::bin(BinaryOp::Eq, g.env.read(counter), build::int(c as i32));
        let value = value_for(g, ty, ECtx::pure(2));
        let name = g.env.vars[var].name.clone();
        let target = build::lval(&name, at.iter().map(|&i| build::int(i)).collect());
        g.note_global_write(var);
        g.work.charge(4);
        let write_and_leave = build::block_stmt(vec![build::stmt(build::assign(target, value.e)), build::stmt(build::brk())]);
        out.push(build::stmt(build::if_stmt(test, write_and_leave, None)));
    }
    out
}

/// A fresh local accumulator of type `ty` starting at 0 (its declaration goes to `out`).
fn accumulator(g: &mut Gen, ty: Ty, out: &mut Vec<BlockItem>) -> String {
    let name = g.env.local_name("acc");
    g.env.declare(env::scalar(name.clone(), ty, Storage::Local));
    let zero = match ty {
        Ty::Int => build::int(0),
        Ty::Float => build::float(0.0),
    };
    out.push(BlockItem::Decl(build::decl(false, ty.btype(), &name, vec![], Some(InitVal::Expr(zero)))));
    name
}

/// `int k[d] = {a, b, ...};` with loop-invariant elements (constants, variables the loop
/// does not assign), sometimes one element depending on the counter, sometimes then passed
/// to a function that may write it; then `acc = acc + k[i % d];`.
fn invariant_array(g: &mut Gen, counter: VarId) -> Vec<BlockItem> {
    g.feature(Feature::InvariantLocalArray);
    let mut out = Vec::new();
    let floor = (0..g.env.funcs.len()).filter_map(|fi| writer_len(g, fi)).max();
    let to_writer = !g.fcx.pure && floor.is_some() && g.c.chance(0.6);
    let floor = if to_writer { floor.unwrap_or(0) } else { 0 };
    let d = (g.c.range(2, 8) as u32).max(floor);
    let name = g.env.local_name("k");
    let invariant = |v: &env::Var| {
        v.is_scalar() && v.ty == Ty::Int && v.readable() && (v.is_const || v.read_only || v.locks > 0 && v.storage != Storage::Global)
    };
    let invariant: Vec<VarId> = g.env.visible().into_iter().filter(|&id| id != counter && invariant(&g.env.vars[id])).collect();
    let varying_at = if g.c.chance(0.3) { Some(g.c.below(d as u64) as usize) } else { None };
    let mut elems = Vec::new();
    for k in 0..d as usize {
        let e = if varying_at == Some(k) {
            g.work.charge(2);
            build::bin(BinaryOp::Mul, g.env.read(counter), build::int(g.c.range(2, 9) as i32))
        } else if !invariant.is_empty() && g.c.chance(0.5) {
            let id = invariant[g.pick_index(invariant.len())];
            g.work.charge(1);
            g.env.read(id)
        } else {
            int_literal(g).e
        };
        elems.push(InitVal::Expr(e));
    }
    g.work.charge(d as u64);
    g.env.declare(env::array(name.clone(), Ty::Int, vec![d], Storage::Local));
    out.push(BlockItem::Decl(build::decl(false, BType::Int, &name, vec![build::int(d as i32)], Some(build::init_list(elems)))));
    if to_writer {
        out.extend(pass_to_writer(g));
    }
    let acc = accumulator(g, Ty::Int, &mut out);
    let at = index(g, d, ECtx::pure(2));
    g.work.charge(4);
    out.push(build::stmt(build::assign_var(&acc, build::bin(BinaryOp::Add, build::var(&acc), build::elem(&name, vec![at.e])))));
    out
}

/// Whether `f` may write an `int` array parameter of at most [`WRITER_MAX_LEN`] elements;
/// the longest such parameter's length.
fn writer_len(g: &Gen, fi: usize) -> Option<u32> {
    let f = &g.env.funcs[fi];
    let lens = f.params.iter().filter_map(|p| match &p.kind {
        ParamKind::Array { inner, min_len } if p.ty == Ty::Int && inner.is_empty() => Some(*min_len),
        _ => None,
    });
    lens.max().filter(|&len| !f.pure && len <= WRITER_MAX_LEN)
}

/// Right after a loop's invariant array `int k[d] = {...};` is declared (`d` at least
/// every [`writer_len`]), a call of a function that may write an `int` array
/// parameter, with local arrays preferred as arguments (usually `k`): the initialisation
/// then does not repeat the same contents each iteration, so `array-hoist` must leave it
/// in the loop.
fn pass_to_writer(g: &mut Gen) -> Option<BlockItem> {
    let ctx = ECtx { impure_ok: true, ..stmt_ctx(g) };
    let writers: Vec<usize> = callable(g, None, ctx).into_iter().filter(|&fi| writer_len(g, fi).is_some()).collect();
    if writers.is_empty() {
        return None;
    }
    let fi = writers[g.pick_index(writers.len())];
    g.feature(Feature::ArrayToWriter);
    let call = call_user_with(g, fi, ctx, true);
    Some(build::stmt(build::expr_stmt(call.e)))
}

/// An update that leaves a local scalar unchanged, or the same value on both sides of an
/// `if`: `x = x + 0;`, `x = (x + k) - k;`, `x = x * 1;`, `if (c) x = e; else x = e;`.
pub(super) fn trivial_update(g: &mut Gen) -> Vec<BlockItem> {
    let local = |v: &env::Var| v.is_scalar() && v.storage != Storage::Global;
    let targets: Vec<VarId> = g.env.assignable(g.fcx.pure).into_iter().filter(|&id| local(&g.env.vars[id])).collect();
    if targets.is_empty() {
        return g.statements.assignment(g);
    }
    g.feature(Feature::TrivialUpdate);
    let id = targets[g.pick_index(targets.len())];
    let (name, ty) = (g.env.vars[id].name.clone(), g.env.vars[id].ty);
    let x = || build::var(&name);
    g.work.charge(4);
    let same = |g: &mut Gen| -> Expr {
        match (ty, g.c.below(4)) {
            (Ty::Int, 0) => build::bin(BinaryOp::Add, x(), build::int(0)),
            (Ty::Int, 1) => {
                let k = g.c.range(1, 1000) as i32;
                build::bin(BinaryOp::Sub, build::bin(BinaryOp::Add, x(), build::int(k)), build::int(k))
            }
            (Ty::Int, 2) => build::bin(BinaryOp::Mul, x(), build::int(1)),
            (Ty::Float, 0) => build::bin(BinaryOp::Mul, x(), build::float(1.0)),
            _ => x(),
        }
    };
    let ctx = stmt_ctx(g);
    if g.fcx.straight || g.c.chance(0.4) {
        let e = same(g);
        return vec![build::stmt(build::assign_var(&name, e))];
    }
    let (cond, _) = branch_cond(g, ctx, [1, 3, 2, 2]);
    let (then_e, else_e) = if g.c.chance(0.5) {
        (same(g), same(g))
    } else {
        let v = value_for(g, ty, ctx.no_impure());
        (v.e.clone(), v.e)
    };
    vec![build::stmt(build::if_stmt(cond, build::assign_var(&name, then_e), Some(build::assign_var(&name, else_e))))]
}

/// `int r0 = e0, ...; float q0 = ..., ...;` then a call, then every value used:
/// `mix(r0 + r1 * 3 - ...); mixf(q0 + ...);`.
pub(super) fn pressure_block(g: &mut Gen) -> Vec<BlockItem> {
    g.feature(Feature::RegisterPressure);
    let mut out = Vec::new();
    let ctx = ECtx::pure(2);
    let ints = g.c.range(6, 14);
    let floats = if g.cfg.knobs.float > 0 { g.c.range(0, 10) } else { 0 };
    let mut names: Vec<(String, Ty)> = Vec::new();
    for k in 0..ints + floats {
        let ty = if k < ints { Ty::Int } else { Ty::Float };
        let name = g.env.local_name(if ty == Ty::Int { "r" } else { "q" });
        let id = g.env.declare(env::scalar(name.clone(), ty, Storage::Local));
        g.env.vars[id].init = false;
        let v = value_for(g, ty, ctx);
        g.env.vars[id].init = true;
        g.work.charge(1);
        out.push(BlockItem::Decl(build::decl(false, ty.btype(), &name, vec![], Some(InitVal::Expr(v.e)))));
        names.push((name, ty));
    }
    // The call in between: a user function if one is callable, else output.
    let call_ctx = ECtx { impure_ok: !g.fcx.pure, ..stmt_ctx(g) };
    let calls = callable(g, None, call_ctx);
    if !calls.is_empty() {
        let f = calls[g.pick_index(calls.len())];
        let call = call_user(g, f, call_ctx);
        out.push(build::stmt(build::expr_stmt(call.e)));
    } else if !g.fcx.pure {
        g.use_helper(Helper::Mix);
        g.work.charge(Helper::Mix.cost());
        out.push(build::stmt(build::expr_stmt(build::call(Helper::Mix.name(), vec![build::var(&names[0].0)]))));
    }
    if g.fcx.pure {
        // No mix here: fold the values into a local the function already has.
        return out;
    }
    for ty in [Ty::Int, Ty::Float] {
        let mut sum: Option<Expr> = None;
        for (k, (n, t)) in names.iter().enumerate() {
            if *t != ty {
                continue;
            }
            let term = if ty == Ty::Int && k % 3 == 1 {
                build::bin(BinaryOp::Mul, build::var(n), build::int(3))
            } else {
                build::var(n)
            };
            sum = Some(match sum {
                None => term,
                Some(s) if k % 2 == 0 => build::bin(BinaryOp::Sub, s, term),
                Some(s) => build::bin(BinaryOp::Add, s, term),
            });
        }
        let Some(sum) = sum else { continue };
        let h = if ty == Ty::Int { Helper::Mix } else { Helper::MixF };
        g.use_helper(h);
        g.work.charge(h.cost() + names.len() as u64);
        out.push(build::stmt(build::expr_stmt(build::call(h.name(), vec![sum]))));
    }
    out
}
