//! Whole programs: functions, the checksum epilogue, and the order of items.
//!
//! Layout: `int checksum;`, the helpers the program uses, then globals and functions
//! interleaved (a function sees the globals declared before it), then `checksum_globals()`
//! which folds every global into the checksum, then `main`. `main` ends by folding its own
//! top-level locals, printing the checksum, and returning 0 or (a function of) the checksum.
//!
//! Termination of calls: SysY has no prototypes, so a function can only call functions
//! defined before it and itself; the call graph is a DAG plus self-loops. A recursive
//! function's first parameter is a depth `d` that no statement assigns; it returns when
//! `d <= 0` and calls itself only with `d - 1` or `d - 2`, at most `s` times per invocation
//! (no self-call inside a loop). Callers pass a depth of at most `D`, chosen after the body
//! is known so that `(s^(D+1) - 1) / (s - 1)` invocations fit the function's budget.

//!
//! [`generate`] makes the generator's state ([`Gen`]) and hands it the two seams of
//! `state.rs`: this module is the top of the generator, and the only one that names every
//! part.

use super::build;
use super::calls::{UserCalls, array_views, call_user, self_call, self_call_possible};
use super::choices::Choices;
use super::config::GenConfig;
use super::decl::{global_decls, local_array_with_dims};
use super::effects::{effect_callees, effect_loop};
use super::env::{self, Func, Param, ParamKind, Storage, VarId};
use super::expr::clamp;
use super::features::{Feature, FeatureSet};
use super::function::{FnCtx, RecCtx, STMT_COST, Work};
use super::input;
use super::loops::{driver_loop, for_each_element};
use super::operand::stmt_ctx;
use super::params::{declare_param, params};
use super::prelude::{CHECKSUM, Helper};
use super::specials::{comparer, input_specials};
use super::state::Gen;
use super::stmt::{StatementGen, mix_of, return_value, stmt, stmts_in_scope};
use super::value::{ECtx, FLOAT_VAR_BOUND, GExpr, Ty};
use sysyc::frontend::ast::{self, BinaryOp, BlockItem, CompUnit, FuncDef, InitVal, Item, Span};

/// Smallest work budget of a generated function (room for a few statements).
const MIN_FUNCTION_BUDGET: u64 = 400;

/// Bounds of the driver loop's trip count, and the least work one iteration may cost.
const MIN_DRIVER_TRIPS: u64 = 12;
const MAX_DRIVER_TRIPS: u64 = 400;
const MIN_ITERATION_WORK: u64 = 4_000;

/// Name of `main`'s local holding the driver loop's trip count (read from the input).
const DRIVER_LIMIT: &str = "n_iter";

/// Name of the function folding the globals into the checksum.
pub(super) const CHECKSUM_GLOBALS: &str = "checksum_globals";

/// Chance that a recursive function returning a value plans to hand its tail self-call a
/// local array (see `tail_local`), when it has an array parameter of its return type and
/// the `aliasing` knob lets self-calls pass other arrays at all.
const TAIL_LOCAL_CHANCE: f64 = 0.8;

/// A program under `cfg` from the decisions `c`: its tree, its stdin, the features it
/// uses and its estimated work.
pub(super) fn generate(cfg: &GenConfig, c: &mut dyn Choices) -> (CompUnit, Vec<u8>, FeatureSet, u64) {
    let mut g = Gen::new(cfg, c, &UserCalls, &StatementGen);
    let (unit, estimated_work) = program(&mut g);
    (unit, g.unit.input.finish(), g.unit.features, estimated_work)
}

/// The whole compilation unit, and `main`'s estimated work.
fn program(g: &mut Gen) -> (CompUnit, u64) {
    let n_globals = g.c.range(0, g.cfg.max_globals as i64) as u32;
    let first = n_globals - n_globals / 3;
    let mut items = global_decls(g, first);
    let mut later = n_globals - first;
    let k = g.cfg.knobs.clone();
    let any_functions = k.pure_functions > 0 || k.impure_functions > 0;
    let n_funcs = if any_functions { g.c.range(0, g.cfg.max_functions as i64) as u32 } else { 0 };
    // Callees that survive inlining, with memory effects, for the effect loops; a function
    // comparing floats, for the special values.
    if any_functions && g.knob(k.call_effects) {
        items.extend(effect_callees(g));
    }
    if any_functions && k.float > 0 && g.knob(k.float_specials) {
        items.push(comparer(g));
    }
    // `main` calls the functions from its driver loop: each function's budget is a share
    // of what one iteration may cost.
    let driver_trips = driver_trip_count(g);
    let share = g.cfg.work_budget / driver_trips / n_funcs.max(1) as u64;
    for _ in 0..n_funcs {
        if later > 0 && g.c.chance(0.3) {
            items.extend(global_decls(g, 1));
            later -= 1;
        }
        let budget = g.c.range((share / 2) as i64, (share * 3 / 2) as i64).max(MIN_FUNCTION_BUDGET as i64) as u64;
        items.push(function(g, budget));
    }
    items.extend(global_decls(g, later));
    let (fold_cost, checksum_globals) = checksum_function(g);
    items.extend(checksum_globals);
    let (main, estimated_work) = main_function(g, fold_cost, driver_trips);
    items.push(main);
    let init = if g.c.chance(0.5) { Some(InitVal::Expr(build::int(0))) } else { None };
    let mut unit = vec![Item::Decl(build::decl(false, ast::BType::Int, CHECKSUM, Vec::new(), init))];
    for h in Helper::ALL {
        if g.unit.helpers.contains(&h) {
            unit.extend(h.items());
        }
    }
    unit.append(&mut items);
    (CompUnit { items: unit }, estimated_work)
}

fn start_function(g: &mut Gen, pure: bool, ret: Option<Ty>, budget: u64) {
    g.fcx = FnCtx { pure, ret, ..FnCtx::default() };
    g.work = Work::new(budget);
    g.env.enter_function();
}

/// Back at the top level (global declarations, the next function's parameters).
fn end_function(g: &mut Gen, name: &str, ret: Option<Ty>, params: Vec<ast::Param>, items: Vec<BlockItem>) -> Item {
    g.fcx = FnCtx::default();
    g.work = Work::default();
    Item::Func(FuncDef { ret: ret.map(Ty::btype), name: build::ident(name), params, body: build::block(items), span: Span::DUMMY })
}

/// The planned tail-call local (`RecCtx::tail_plan`): the tail self-call passes the
/// local array declared for that parameter on, right after
/// `local[0].. = local[0].. % 1000 + param[0].. % 1000 + d;` (`fclamp(local + param + d)`
/// for floats; `d` the depth, at most 24), which reads the parameter after the local's
/// initialiser ran; the base case returns `param[0].. % 1000` (`fclamp(param[0]..)`), so
/// a correct program returns a sum over every activation's depth. A `tail-recursion` that
/// let the loop reuse the frame's array for both would have the callee's initialiser
/// overwrite what it was handed, dropping the earlier activations' terms (the depth term
/// makes that visible where arrays hold zeros).
fn tail_local(g: &mut Gen, items: &mut Vec<BlockItem>) {
    let Some(rec) = g.fcx.rec.as_ref() else { return };
    let Some(pi) = rec.tail_plan else { return };
    let Some((_, local)) = rec.locals.iter().find(|(i, _)| *i == pi) else { return };
    let (local, param, depth) = (local.clone(), rec.params[pi].clone(), rec.params[0].name.clone());
    let Some(id) = g.env.lookup(&local) else { return };
    let rank = g.env.vars[id].dims.len();
    let at = |name: &str| build::elem(name, vec![build::int(0); rank]);
    let value = match param.ty {
        Ty::Float => {
            let sum = build::bin(BinaryOp::Add, at(&local), at(&param.name));
            let sum = build::bin(BinaryOp::Add, sum, build::var(&depth));
            clamp(g, GExpr::float(sum, 3.0 * FLOAT_VAR_BOUND, false, 4)).e
        }
        _ => {
            g.work.charge(5);
            let low = |name: &str| build::bin(BinaryOp::Mod, at(name), build::int(1000));
            let sum = build::bin(BinaryOp::Add, low(&local), low(&param.name));
            build::bin(BinaryOp::Add, sum, build::var(&depth))
        }
    };
    items.push(build::stmt(build::assign(build::lval(&local, vec![build::int(0); rank]), value)));
    g.work.charge(1);
    g.feature(Feature::TailCallLocal);
    if let Some(rec) = &mut g.fcx.rec {
        rec.tail_local = Some((pi, local));
    }
}

/// `param[0].. % 1000` for an `int` array parameter, `fclamp(param[0]..)` for a float one.
fn low_first_elem(g: &mut Gen, param: &Param) -> ast::Expr {
    let rank = match &param.kind {
        ParamKind::Array { inner, .. } => 1 + inner.len(),
        _ => 0,
    };
    let first = build::elem(&param.name, vec![build::int(0); rank]);
    g.work.charge(3);
    match param.ty {
        Ty::Float => clamp(g, GExpr::float(first, FLOAT_VAR_BOUND, false, 2)).e,
        _ => build::bin(BinaryOp::Mod, first, build::int(1000)),
    }
}

/// One generated function, made callable.
fn function(g: &mut Gen, budget: u64) -> Item {
    let k = g.cfg.knobs.clone();
    let pure = match (k.pure_functions > 0, k.impure_functions > 0) {
        (true, true) => g.c.weighted(&[k.pure_functions as u32, k.impure_functions as u32]) == 0,
        (pure, _) => pure,
    };
    let floats = k.float > 0;
    let ret = match g.c.weighted(&[5, if pure { 0 } else { 2 }, if floats { 2 } else { 0 }]) {
        1 => None,
        2 => Some(Ty::Float),
        _ => Some(Ty::Int),
    };
    let recursive = g.knob(k.recursion);
    let name = g.env.global_name("f");
    let (params, affinity) = params(g, recursive, budget);

    let body_budget = if recursive { (budget / 16).max(200) } else { budget };
    start_function(g, pure, ret, body_budget);
    g.fcx.affinity = affinity;
    g.env.push_scope();
    let ast_params = params.iter().map(|p| declare_param(g, p, &params)).collect();
    let mut items = Vec::new();
    if recursive {
        // The base case comes first, before any self-call can be generated.
        let depth_name = params[0].name.clone();
        let test = if g.c.chance(0.5) {
            build::bin(BinaryOp::Le, build::var(&depth_name), build::int(0))
        } else {
            build::bin(BinaryOp::Lt, build::var(&depth_name), build::int(1))
        };
        // A planned tail-call local (see `tail_local`): the base case returns what the
        // parameter it will be passed holds, so the values handed down are observed.
        let tail_plan = ret
            .filter(|_| k.aliasing > 0 && g.c.chance(TAIL_LOCAL_CHANCE))
            .and_then(|ty| params.iter().position(|p| p.ty == ty && matches!(p.kind, ParamKind::Array { .. })));
        let r = match tail_plan {
            Some(pi) => build::ret(Some(low_first_elem(g, &params[pi]))),
            None => return_value(g),
        };
        let r = if g.c.chance(0.5) { r } else { build::block_stmt(vec![build::stmt(r)]) };
        items.push(build::stmt(build::if_stmt(test, r, None)));
        let max_sites = g.c.range(1, 2) as u32;
        let locals = Vec::new();
        g.fcx.rec = Some(RecCtx { name: name.clone(), ret, params: params.clone(), pure, sites: 0, max_sites, locals, tail_plan, tail_local: None });
        // Sometimes a local array shaped like an array parameter: the self-calls may pass
        // it on (see `self_call`), handing the callee memory of this activation.
        for (pi, p) in params.iter().enumerate() {
            if let ParamKind::Array { inner, min_len } = &p.kind
                && (tail_plan == Some(pi) || g.c.chance(f64::from(k.aliasing) / 100.0))
            {
                let mut dims = vec![*min_len];
                dims.extend(inner);
                let decl = local_array_with_dims(g, p.ty, dims);
                let local = decl.defs[0].name.name.clone();
                if let Some(rec) = &mut g.fcx.rec {
                    rec.locals.push((pi, local));
                }
                items.push(BlockItem::Decl(decl));
            }
        }
    }
    let max = g.cfg.max_block_stmts.max(2);
    items.extend(stmts_in_scope(g, max));
    // A recursive function often ends in a self tail call (`return f(d - 1, ..);`, or the
    // call as a void function's last statement): what `tail-recursion` turns into a loop.
    let ctx = stmt_ctx(g);
    let tail_call = recursive && self_call_possible(g, ret, ctx) && g.c.chance(0.9);
    if tail_call {
        tail_local(g, &mut items);
        let call = self_call(g, ctx);
        g.work.charge(1);
        g.feature(Feature::TailSelfCall);
        items.push(build::stmt(match ret {
            Some(_) => build::ret(Some(call.e)),
            None => build::expr_stmt(call.e),
        }));
    } else if ret.is_some() {
        items.push(build::stmt(return_value(g)));
    } else if g.c.chance(0.2) {
        items.push(build::stmt(build::ret(None)));
    }
    g.env.pop_scope();

    let per_call = g.work.cost.saturating_add(params.len() as u64 + 2);
    let (cost, max_depth) = match &g.fcx.rec {
        Some(r) => {
            let (calls, depth) = recursion_depth(r.sites as u64, per_call, budget, g.cfg.max_recursion_depth);
            (calls.saturating_mul(per_call), Some(depth))
        }
        None => (per_call, None),
    };
    if recursive {
        g.feature(Feature::Recursion);
    }
    g.feature(if pure { Feature::PureFunction } else { Feature::ImpureFunction });
    match ret {
        None => g.feature(Feature::VoidFunction),
        Some(Ty::Float) => g.feature(Feature::FloatFunction),
        _ => {}
    }
    let scalars = |ty: Ty| params.iter().filter(|p| p.ty == ty && p.kind == ParamKind::Scalar).count();
    if scalars(Ty::Int) > 4 {
        g.feature(Feature::ManyIntParams);
    }
    if scalars(Ty::Float) > 16 {
        g.feature(Feature::ManyFloatParams);
    }
    let globals_used = std::mem::take(&mut g.fcx.globals_used);
    let globals_written = std::mem::take(&mut g.fcx.globals_written);
    g.env.funcs.push(Func { name: name.clone(), ret, params, pure, cost, max_depth, globals_used, ret_bound: FLOAT_VAR_BOUND, globals_written, effect: None });
    end_function(g, &name, ret, ast_params, items)
}

/// `void checksum_globals()` folding every global variable, and the work of one call (0 if
/// there is nothing to fold and no function was made).
fn checksum_function(g: &mut Gen) -> (u64, Option<Item>) {
    let folded = |v: &env::Var| v.storage == Storage::Global && !v.is_const;
    let globals: Vec<VarId> = g.env.visible().into_iter().rev().filter(|&id| folded(&g.env.vars[id])).collect();
    if globals.is_empty() {
        return (0, None);
    }
    start_function(g, false, None, u64::MAX);
    g.env.push_scope();
    let mut items = Vec::new();
    for id in globals {
        if g.env.vars[id].is_scalar() {
            items.push(build::stmt(mix_of(g, id)));
        } else {
            items.extend(fold_array(g, id));
        }
    }
    g.env.pop_scope();
    let cost = g.work.cost + 2;
    (cost, Some(end_function(g, CHECKSUM_GLOBALS, None, Vec::new(), items)))
}

/// Loops folding every element of an array into the checksum.
fn fold_array(g: &mut Gen, id: VarId) -> Vec<BlockItem> {
    let (name, ty) = (g.env.vars[id].name.clone(), g.env.vars[id].ty);
    let h = if ty == Ty::Float { Helper::MixF } else { Helper::Mix };
    g.use_helper(h);
    for_each_element(g, id, &mut |g, idx| {
        g.work.charge(h.cost() + 2);
        build::expr_stmt(build::call(h.name(), vec![build::elem(&name, idx)]))
    })
}

/// The driver loop's trip count: log-uniform in `MIN_DRIVER_TRIPS..=MAX_DRIVER_TRIPS`,
/// fewer when the budget would leave an iteration less than `MIN_ITERATION_WORK`.
fn driver_trip_count(g: &mut Gen) -> u64 {
    let cap = (g.cfg.work_budget / MIN_ITERATION_WORK).clamp(MIN_DRIVER_TRIPS, MAX_DRIVER_TRIPS);
    let (lo, hi) = ((MIN_DRIVER_TRIPS as f64).ln(), (cap as f64).ln());
    // 1000 steps between the bounds of the logarithm.
    let x = lo + (hi - lo) * g.c.below(1001) as f64 / 1000.0;
    (x.exp().round() as u64).clamp(MIN_DRIVER_TRIPS, cap)
}

/// `T name = call();`, a local read from the input.
fn input_decl(g: &mut Gen, name: &str, ty: Ty, call: &str) -> BlockItem {
    g.env.declare(env::scalar(name.into(), ty, Storage::Local));
    BlockItem::Decl(build::decl(false, ty.btype(), name, Vec::new(), Some(InitVal::Expr(build::call(call, Vec::new())))))
}

/// `main`'s first statements: `int n_iter = getint();` (the driver loop's trip count
/// `trips`, locked, its value known to the generator), a few seed values read into locals,
/// and perhaps some global scalars read from the input — so that no value of the program
/// is known at compile time.
fn input_prologue(g: &mut Gen, trips: u64) -> Vec<BlockItem> {
    g.feature(Feature::GetInt);
    let n = trips as i32;
    g.unit.input.int(n, false);
    let mut items = vec![input_decl(g, DRIVER_LIMIT, Ty::Int, "getint")];
    let id = g.env.lookup(DRIVER_LIMIT).expect("just declared");
    g.env.lock(id);
    g.env.vars[id].range = Some((n as i64, n as i64));
    for _ in 0..g.c.range(1, 3) {
        let v = input::random_int(g.c);
        g.unit.input.int(v, g.c.chance(0.3));
        let name = g.env.local_name("s");
        items.push(input_decl(g, &name, Ty::Int, "getint"));
    }
    if g.cfg.knobs.float > 0 && g.knob(g.cfg.knobs.float_specials) {
        items.extend(input_specials(g));
    }
    if g.cfg.knobs.float > 0 && g.c.chance(0.5) {
        g.feature(Feature::GetFloat);
        let v = input::random_float(g.c);
        g.unit.input.float(v, g.c.chance(0.4), false);
        let name = g.env.local_name("s");
        items.push(input_decl(g, &name, Ty::Float, "getfloat"));
    }
    let global_scalar = |v: &env::Var| v.storage == Storage::Global && v.is_scalar();
    let globals: Vec<VarId> = g.env.assignable(g.fcx.pure).into_iter().filter(|&id| global_scalar(&g.env.vars[id])).collect();
    for id in globals {
        if !g.c.chance(0.5) {
            continue;
        }
        let (name, ty) = (g.env.vars[id].name.clone(), g.env.vars[id].ty);
        let call = if ty == Ty::Int {
            let v = input::random_int(g.c);
            g.unit.input.int(v, false);
            "getint"
        } else {
            let v = input::random_float(g.c);
            g.unit.input.float(v, g.c.chance(0.4), false);
            g.feature(Feature::GetFloat);
            "getfloat"
        };
        g.note_global_write(id);
        items.push(build::stmt(build::assign_var(&name, build::call(call, Vec::new()))));
    }
    g.work.charge(items.len() as u64 * 5);
    items
}

/// Local arrays of `main` for the array parameters no visible array can be passed to,
/// so that every function can be called from the driver loop.
fn argument_arrays(g: &mut Gen) -> Vec<BlockItem> {
    let mut items = Vec::new();
    for fi in 0..g.env.funcs.len() {
        let f = g.env.funcs[fi].clone();
        for p in &f.params {
            if let ParamKind::Array { inner, min_len } = &p.kind
                && array_views(g, p.ty, inner, *min_len, !f.pure).is_empty()
            {
                let mut dims = vec![*min_len];
                dims.extend(inner);
                items.push(BlockItem::Decl(local_array_with_dims(g, p.ty, dims)));
            }
        }
    }
    items
}

/// Calls, at the current point, of every function (the latest-defined first): calls
/// from other functions and earlier in `main` may sit in branches that never run.
fn calls_of_every_function(g: &mut Gen) -> Vec<BlockItem> {
    let mut out = Vec::new();
    for f in (0..g.env.funcs.len()).rev() {
        let func = &g.env.funcs[f];
        // An array argument may have become unavailable (a declaration hiding its name).
        let satisfiable = func.params.iter().all(|p| match &p.kind {
            ParamKind::Array { inner, min_len } => !array_views(g, p.ty, inner, *min_len, !func.pure).is_empty(),
            _ => true,
        });
        if !satisfiable {
            continue;
        }
        // Often a second call site: a function called once is inlined whatever its
        // size, and then nothing of it (its frame, its calls, its loads of globals)
        // reaches the back end as a function.
        let sites = if g.c.chance(0.5) { 2 } else { 1 };
        for _ in 0..sites {
            let ctx = ECtx { impure_ok: true, stable: false, depth: g.cfg.max_expr_depth };
            let call = call_user(g, f, ctx);
            out.push(build::stmt(build::expr_stmt(call.e)));
        }
    }
    out
}

/// `main`, calling the functions from its driver loop of `driver_trips` iterations, and
/// its estimated work (the program's).
fn main_function(g: &mut Gen, fold_cost: u64, driver_trips: u64) -> (Item, u64) {
    let budget = g.cfg.work_budget.saturating_sub(fold_cost).max(g.cfg.work_budget / 10);
    start_function(g, false, Some(Ty::Int), budget);
    g.fcx.is_main = true;
    g.env.push_scope();
    g.fcx.main_top = Some(g.env.depth());
    // The input: the driver loop's trip count, seed values, perhaps globals.
    let mut items = input_prologue(g, driver_trips);
    let limit = g.env.lookup(DRIVER_LIMIT);
    // Arrays the functions need as arguments, then a few statements that run once.
    items.extend(argument_arrays(g));
    let setup = g.c.range(1, 3);
    for _ in 0..setup {
        if g.fcx.stmts >= g.cfg.max_function_stmts / 3 || !g.work.affordable(STMT_COST) {
            break;
        }
        items.extend(stmt(g));
    }
    // A loop around the calls that survive inlining, next to accesses of what they touch
    // (`main` may call every one of them).
    if g.env.funcs.iter().any(|f| f.effect.is_some()) && g.knob(g.cfg.knobs.call_effects) && g.work.affordable(STMT_COST) {
        items.extend(effect_loop(g));
    }
    // The driver loop: the functions are called from it, with arguments that vary from
    // one iteration to the next.
    if let Some(limit) = limit {
        items.extend(driver_loop(g, limit, driver_trips, &mut calls_of_every_function));
    }
    // A statement or two after it (a global written only there is written on no path
    // into the loop: `hoist-global-loads` may hoist its loads, `const-arrays` may not
    // fold them).
    for _ in 0..g.c.range(0, 2) {
        if !g.work.affordable(STMT_COST) {
            break;
        }
        items.extend(stmt(g));
    }
    // The epilogue: everything observable goes into the checksum.
    g.work.budget = u64::MAX;
    g.work.cost = g.work.cost.saturating_add(fold_cost);
    if fold_cost > 0 {
        items.push(build::stmt(build::expr_stmt(build::call(CHECKSUM_GLOBALS, Vec::new()))));
    }
    for id in g.env.current_scope() {
        let v = &g.env.vars[id];
        if !v.readable() {
            continue;
        }
        if v.is_scalar() {
            items.push(build::stmt(mix_of(g, id)));
        } else {
            items.extend(fold_array(g, id));
        }
    }
    g.use_helper(Helper::Mix);
    items.push(build::stmt(build::expr_stmt(build::call("putint", vec![build::var(CHECKSUM)]))));
    items.push(build::stmt(build::expr_stmt(build::call("putch", vec![build::int(10)]))));
    let status = if g.knob(g.cfg.knobs.status_checksum) {
        g.feature(Feature::StatusChecksum);
        if g.c.chance(0.5) { build::bin(BinaryOp::Mod, build::var(CHECKSUM), build::int(256)) } else { build::var(CHECKSUM) }
    } else {
        build::int(0)
    };
    items.push(build::stmt(build::ret(Some(status))));
    g.env.pop_scope();
    let estimated_work = g.work.cost;
    (end_function(g, "main", Some(Ty::Int), Vec::new(), items), estimated_work)
}

/// For a recursive function with `sites` self-calls per invocation and `per_call` work per
/// invocation: the largest depth bound `D ≤ max_depth` (at least 1) whose worst-case number of
/// invocations `1 + s + s² + … + s^D` keeps the total within `budget`, and that number.
fn recursion_depth(sites: u64, per_call: u64, budget: u64, max_depth: u32) -> (u64, u32) {
    let invocations = |d: u32| -> u64 {
        (0..=d).fold(0u64, |acc, j| acc.saturating_add(sites.saturating_pow(j)))
    };
    let mut depth = 1;
    while depth < max_depth && invocations(depth + 1).saturating_mul(per_call) <= budget {
        depth += 1;
    }
    (invocations(depth), depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recursion_depth_respects_budget() {
        // One self-call: D + 1 invocations.
        assert_eq!(recursion_depth(1, 10, 1000, 50), (51, 50));
        assert_eq!(recursion_depth(1, 10, 45, 50), (4, 3));
        // Two self-calls: 2^(D+1) - 1 invocations.
        assert_eq!(recursion_depth(2, 10, 700, 12), (63, 5));
        // Never below depth 1, even over budget.
        assert_eq!(recursion_depth(2, 1000, 10, 12), (3, 1));
        // No self-call at all.
        assert_eq!(recursion_depth(0, 10, 100, 7), (1, 7));
    }
}
