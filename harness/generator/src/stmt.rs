//! Statement generation: assignments, conditionals, calls, output, input, blocks, and the
//! control transfers `break` / `continue` / `return`.
//!
//! Invariants kept here (besides those of `expr.rs`):
//! * an assignment never targets a constant, a read-only global, or a locked variable (loop
//!   counters and their limits, frozen loop invariants, length and depth parameters), and a
//!   pure function assigns only its own locals;
//! * the target's indices and the right-hand side are siblings under the evaluation-order
//!   rule, and `x = x + e` re-reads the target only when `e` has no side effects (or the
//!   target is a local scalar, which no call can change);
//! * `continue` is preceded by the loop's latch (its counter update), so no path skips it;
//! * input is read only by statements at the top level of `main`, which run exactly once
//!   and in order — so the stdin the generator writes is consumed exactly;
//! * bodies of `if`/`else`/`while` that are not blocks are simple statements, so the printer
//!   never has to add braces (the re-parsed tree stays identical).
//!
//! The top of the statement recursion: the loops, idioms and kernels it chooses among make
//! their bodies through [`StatementGen`] (the `Statements` seam of `state.rs`).

use super::build;
use super::calls::{array_views, call_user, callable};
use super::cond::{branch_cond, cond, late_cond, narrowed};
use super::decl::{local_decl, new_local_name};
use super::effects::effect_loop;
use super::env::{self, Storage, VarId};
use super::expr::{bounded_int, fit, float_expr, index, int_expr, siblings, value_for};
use super::features::Feature;
use super::function::{ITERATION_COST, STMT_COST};
use super::idioms::{global_read_loop, invariant_array_loop, pressure_block, trivial_update};
use super::input::{self, GETCH_BYTES};
use super::kernels::{flag_search, float_sweep, row_sweep, triangle_nest};
use super::loops::{array_walk, counted_loop, guarded_loop, straight_loop};
use super::operand::stmt_ctx;
use super::prelude::{CHECKSUM, Helper};
use super::specials::special_compares;
use super::state::{Gen, Statements};
use super::value::{ECtx, FLOAT_TO_INT_LIMIT, FLOAT_VAR_BOUND, GExpr, INT_AS_FLOAT_BOUND, Ty};
use sysyc::frontend::ast::{BinaryOp, BlockItem, Expr, InitVal, Stmt};

/// How loops, idioms and kernels make the statements in them (the `Statements` seam of
/// `state.rs`).
pub(super) struct StatementGen;

impl Statements for StatementGen {
    fn stmts(&self, g: &mut Gen, max: u32) -> Vec<BlockItem> {
        stmts_in_scope(g, max)
    }

    fn body_in_scope(&self, g: &mut Gen) -> Vec<BlockItem> {
        body_in_scope(g)
    }

    fn body(&self, g: &mut Gen) -> Vec<BlockItem> {
        body(g)
    }

    fn assignment(&self, g: &mut Gen) -> Vec<BlockItem> {
        assign_stmt(g, true)
    }
}

/// `putf` templates: format text and argument kinds (`d`: int, `f`: float, `c`: printable
/// character code).
const PUTF_TEMPLATES: &[(&[u8], &str)] = &[
    (b"%d\n", "d"),
    (b"%d %d\n", "dd"),
    (b"x=%d, y=%d;", "dd"),
    (b"%c", "c"),
    (b"%x\n", "d"),
    (b"[%5d|%-4d]\n", "dd"),
    (b"%a\n", "f"),
    (b"%.3f\n", "f"),
    (b"%d %a\n", "df"),
    (b"%%%d%%\n", "d"),
    (b"%08.2f|%c\n", "fc"),
    (b"%e\n", "f"),
    (b"%u\n", "d"),
];

/// Up to `max` statements (at least one if the budget allows) in the current scope.
pub(super) fn stmts_in_scope(g: &mut Gen, max: u32) -> Vec<BlockItem> {
    let n = g.c.range(1, max.max(1) as i64);
    let mut items = Vec::new();
    for _ in 0..n {
        if g.fcx.stmts >= g.cfg.max_function_stmts || !g.work.affordable(STMT_COST) {
            break;
        }
        items.extend(stmt(g));
    }
    items
}

/// A nested body (of `if`, `else`, a loop or a block).
pub(super) fn body(g: &mut Gen) -> Vec<BlockItem> {
    g.env.push_scope();
    let items = body_in_scope(g);
    g.env.pop_scope();
    items
}

/// [`body`] in the current scope (which the caller opened for the block).
pub(super) fn body_in_scope(g: &mut Gen) -> Vec<BlockItem> {
    g.fcx.depth += 1;
    let max = g.cfg.max_block_stmts.saturating_sub(g.fcx.depth / 2).max(1);
    let items = stmts_in_scope(g, max);
    g.fcx.depth -= 1;
    items
}

/// A body as a statement: braced, or (sometimes) a single simple statement unbraced.
fn body_stmt(g: &mut Gen) -> Stmt {
    let items = body(g);
    if items.len() == 1
        && g.c.chance(0.4)
        && let BlockItem::Stmt(s) = &items[0]
        && matches!(s, Stmt::Assign { .. } | Stmt::Expr(..) | Stmt::Break(_) | Stmt::Continue(_) | Stmt::Return(..))
    {
        return s.clone();
    }
    build::block_stmt(items)
}

/// One statement (possibly a few, e.g. a declaration followed by its initialisation).
pub(super) fn stmt(g: &mut Gen) -> Vec<BlockItem> {
    g.fcx.stmts += 1;
    g.work.charge(1);
    let k = g.cfg.knobs.clone();
    let deep_ok = g.fcx.depth < g.cfg.max_stmt_depth;
    let in_loop = !g.fcx.loops.is_empty();
    // Directly in `main`'s driver loop (a `break` there would end the program's work).
    let in_driver = g.fcx.is_main && g.fcx.loops.len() == 1;
    let impure = !g.fcx.pure;
    let main_top = g.fcx.main_top == Some(g.env.depth());
    let loop_ok = deep_ok && k.loops > 0 && (!in_loop || g.knob(k.nested_loops)) && g.work.affordable(ITERATION_COST);
    let output_ok = impure && g.unit.outputs.saturating_add(g.work.mult) <= g.cfg.output_budget;
    let w = |on: bool, weight: u32| if on { weight } else { 0 };
    // At the top of `main` a statement runs once: a conditional there would leave one of
    // its sides unexecuted.
    let branchy = deep_ok && !main_top && !g.fcx.straight;
    // A straight-line loop body has no control flow at all.
    let loop_ok = loop_ok && !g.fcx.straight;
    let in_loop_flow = in_loop && !g.fcx.straight;
    let weights = [
        30,                                                   // 0 assignment
        12,                                                   // 1 declaration
        w(branchy, k.ifs as u32 / 3),                         // 2 if
        w(loop_ok, k.loops as u32 / 3),                       // 3 counted loop
        w(impure || k.pure_functions > 0, 6),                 // 4 call statement
        w(impure && k.mix_calls > 0, k.mix_calls as u32 / 6), // 5 mix
        w(output_ok && k.output > 0, k.output as u32 / 4),    // 6 output
        w(output_ok && k.putf > 0, k.putf as u32 / 6),        // 7 putf
        w(branchy && k.blocks > 0, k.blocks as u32 / 6),      // 8 block
        w(in_loop_flow && !in_driver && k.breaks > 0, k.breaks as u32 / 5), // 9 break
        w(in_loop_flow && k.continues > 0, k.continues as u32 / 5), // 10 continue
        w(!g.fcx.is_main && !g.fcx.straight && k.early_returns > 0, k.early_returns as u32 / 6), // 11 return
        1,                                                    // 12 empty
        w(branchy && k.late_init > 0, k.late_init as u32 / 5), // 13 late init
        w(k.dead_stores > 0, k.dead_stores as u32 / 5),       // 14 dead store
        w(main_top && k.input > 0, k.input as u32 / 2),       // 15 input
        w(main_top && loop_ok && k.timers > 0, k.timers as u32 / 4), // 16 timers
        w(!main_top && loop_ok && k.short_circuit > 0, k.loops as u32 / 8), // 17 guarded loop
        w(loop_ok && k.arrays > 0, k.loops as u32 / 4),       // 18 array walk
        w(loop_ok && k.straight_loops > 0, k.straight_loops as u32 / 3), // 19 straight loop
        w(loop_ok && k.hoist_shapes > 0, k.hoist_shapes as u32 / 3), // 20 global reads
        w(loop_ok && k.arrays > 0 && k.array_hoist > 0, k.array_hoist as u32 / 5), // 21 invariant local array
        w(in_loop && k.trivial_phis > 0, k.trivial_phis as u32 / 5), // 22 trivial update
        w(impure && !g.fcx.straight && k.register_pressure > 0, k.register_pressure as u32 / 8), // 23 register pressure
        w(loop_ok && impure && k.float > 0 && k.arrays > 0, k.float as u32 / 3), // 24 float sweep
        w(loop_ok && branchy && k.breaks > 0, k.breaks as u32 / 3), // 25 flag search
        w(loop_ok && k.nested_loops > 0 && k.continues > 0, k.nested_loops as u32 / 2), // 26 triangular nest
        w(loop_ok && k.call_effects > 0 && g.env.funcs.iter().any(|f| f.effect.is_some()), k.call_effects as u32), // 27 effect loop
        w(branchy && impure && k.float > 0 && k.float_specials > 0, k.float_specials as u32 / 3), // 28 float specials
        w(loop_ok && impure && k.arrays > 0 && k.nested_loops > 0, k.nested_loops as u32 / 3), // 29 row sweep
    ];
    match g.c.weighted(&weights) {
        1 => local_decl(g),
        2 => if_stmt(g),
        3 => counted_loop(g),
        4 => call_stmt(g),
        5 => mix_stmt(g),
        6 => output_stmt(g),
        7 => putf_stmt(g),
        8 => {
            g.feature(Feature::Block);
            vec![build::stmt(build::block_stmt(body(g)))]
        }
        9 => break_stmt(g),
        10 => continue_stmt(g),
        11 => return_stmt(g),
        12 => {
            g.feature(Feature::EmptyStmt);
            vec![build::stmt(build::empty_stmt())]
        }
        13 => late_init(g),
        14 => {
            let first = assign_stmt(g, false);
            if first.is_empty() {
                return first;
            }
            g.feature(Feature::DeadStore);
            let mut out = first.clone();
            // The same target assigned again: the first store is dead unless the new
            // value reads it.
            if let Some(BlockItem::Stmt(Stmt::Assign { target, .. })) = first.last()
                && let Some(ty) = g.env.lookup(&target.name.name).map(|id| g.env.vars[id].ty)
            {
                let stable = target.indices.iter().any(build::has_call);
                let ctx = ECtx { impure_ok: false, stable, ..stmt_ctx(g) };
                let v = value_for(g, ty, ctx);
                g.work.charge(1);
                out.push(build::stmt(build::assign(target.clone(), v.e)));
            }
            out
        }
        15 => input_stmt(g),
        16 => {
            g.feature(Feature::Timers);
            let mut out = vec![build::stmt(build::expr_stmt(build::call("starttime", vec![])))];
            out.extend(counted_loop(g));
            out.push(build::stmt(build::expr_stmt(build::call("stoptime", vec![]))));
            out
        }
        17 => guarded_loop(g),
        18 => array_walk(g),
        19 => straight_loop(g),
        20 => global_read_loop(g),
        21 => invariant_array_loop(g),
        22 => trivial_update(g),
        23 => pressure_block(g),
        24 => float_sweep(g),
        25 => flag_search(g),
        26 => triangle_nest(g),
        27 => effect_loop(g),
        28 => special_compares(g),
        29 => row_sweep(g),
        _ => assign_stmt(g, true),
    }
}

/// `target = value;` (or `target = target op value;`). Falls back to a declaration when
/// nothing is assignable.
pub(super) fn assign_stmt(g: &mut Gen, allow_update: bool) -> Vec<BlockItem> {
    let mut targets = g.env.assignable(g.fcx.pure);
    if g.fcx.straight {
        // Float values are clamped by a call with branches: ints only here.
        targets.retain(|&id| g.env.vars[id].ty == Ty::Int);
    }
    if targets.is_empty() {
        return local_decl(g);
    }
    let global_scalar = |id: VarId| g.env.vars[id].is_scalar() && g.env.vars[id].storage == Storage::Global;
    let weights: Vec<u32> = targets.iter().map(|&id| if global_scalar(id) { 2 } else { 3 }).collect();
    let id = targets[g.c.weighted(&weights)];
    let v = &g.env.vars[id];
    let (name, ty, dims, local_scalar) = (v.name.clone(), v.ty, v.dims.clone(), v.is_scalar() && v.storage != Storage::Global);
    g.fcx.note_use(id, v);
    let mut ctx = stmt_ctx(g);
    // A write-only (dead) array is never read, not even by `a[i] = a[i] + e`.
    let update = allow_update && !g.env.vars[id].dead && g.c.chance(0.35);
    if update && !local_scalar {
        // `g = g + f()` would depend on whether `f` runs before `g` is read.
        ctx.impure_ok = false;
    }
    let value = value_for(g, ty, ctx);
    let idx_ctx = ctx.sibling_of(value.impure).deeper();
    let indices: Vec<GExpr> = siblings(g, dims.len(), idx_ctx, &mut |g, c, i| index(g, dims[i], c));
    let target = build::lval(&name, indices.iter().map(|x| x.e.clone()).collect());
    g.work.charge(1);
    let value = if update {
        let current = build::elem(&name, indices.iter().map(|x| x.e.clone()).collect());
        let indices_pure = indices.iter().all(|x| !x.impure);
        if !indices_pure {
            value.e
        } else {
            g.work.charge(2);
            let op = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul][g.c.weighted(&[6, 2, 2])];
            let current_bound = if ty == Ty::Float {
                FLOAT_VAR_BOUND
            } else {
                INT_AS_FLOAT_BOUND
            };
            let bound = if op == BinaryOp::Mul {
                current_bound * value.float_bound()
            } else {
                current_bound + value.float_bound()
            };
            let combined = GExpr {
                e: build::bin(op, current, value.e.clone()),
                ty: if value.ty == Ty::Float { Ty::Float } else { ty },
                bound,
                range: None,
                impure: value.impure,
                cost: value.cost + 2,
            };
            match ty {
                Ty::Float => fit(g, combined, FLOAT_VAR_BOUND).e,
                Ty::Int if value.ty == Ty::Float => {
                    // int += float: the sum is a float; keep it convertible.
                    fit(g, combined, FLOAT_TO_INT_LIMIT).e
                }
                Ty::Int => combined.e,
            }
        }
    } else {
        value.e
    };
    vec![build::stmt(build::assign(target, value))]
}

fn if_stmt(g: &mut Gen) -> Vec<BlockItem> {
    g.feature(Feature::If);
    let ctx = stmt_ctx(g);
    let (cond, narrowing) = branch_cond(g, ctx, [1, 3, 3, 3]);
    let then_branch = narrowed(g, narrowing.map(|n| (n.var, n.when_true)), body_stmt);
    let else_branch = if g.knob(g.cfg.knobs.elses) {
        g.feature(Feature::IfElse);
        if g.c.chance(0.25) && g.fcx.depth + 1 < g.cfg.max_stmt_depth {
            // `else if`: the nested `if` keeps its own optional else.
            g.feature(Feature::ElseIf);
            g.fcx.depth += 1;
            let nested = narrowed(g, narrowing.map(|n| (n.var, n.when_false)), if_stmt);
            g.fcx.depth -= 1;
            match nested.into_iter().next() {
                Some(BlockItem::Stmt(s)) => Some(s),
                _ => None,
            }
        } else {
            Some(narrowed(g, narrowing.map(|n| (n.var, n.when_false)), body_stmt))
        }
    } else {
        None
    };
    // A then-branch that is an else-less `if` would capture our `else`.
    let then_branch = match (&then_branch, &else_branch) {
        (Stmt::If { .. }, Some(_)) => build::block_stmt(vec![build::stmt(then_branch)]),
        _ => then_branch,
    };
    vec![build::stmt(build::if_stmt(cond, then_branch, else_branch))]
}

fn call_stmt(g: &mut Gen) -> Vec<BlockItem> {
    let ctx = ECtx { impure_ok: !g.fcx.pure, ..stmt_ctx(g) };
    let calls = callable(g, None, ctx);
    if calls.is_empty() {
        return assign_stmt(g, true);
    }
    let f = calls[g.pick_index(calls.len())];
    let call = call_user(g, f, ctx);
    vec![build::stmt(build::expr_stmt(call.e))]
}

fn mix_stmt(g: &mut Gen) -> Vec<BlockItem> {
    g.feature(Feature::MixCall);
    let ctx = stmt_ctx(g);
    let floats = g.cfg.knobs.float > 0 && !g.fcx.straight;
    let (h, x) = if floats && g.knob(g.cfg.knobs.float_corners) {
        // `mixz` also tells `-0.0` from `0.0`.
        (Helper::MixZ, float_expr(g, ctx))
    } else if floats && g.c.chance(0.3) {
        (Helper::MixF, float_expr(g, ctx))
    } else {
        (Helper::Mix, int_expr(g, ctx))
    };
    g.use_helper(h);
    g.work.charge(h.cost());
    vec![build::stmt(build::expr_stmt(build::call(h.name(), vec![x.e])))]
}

fn count_output(g: &mut Gen) {
    g.unit.outputs = g.unit.outputs.saturating_add(g.work.mult);
}

fn output_stmt(g: &mut Gen) -> Vec<BlockItem> {
    count_output(g);
    let ctx = stmt_ctx(g);
    let floats = g.cfg.knobs.float > 0;
    let arrays = g.cfg.knobs.arrays > 0;
    let mut out = Vec::new();
    match g.c.weighted(&[6, 2, if floats { 3 } else { 0 }, if arrays { 2 } else { 0 }, if arrays && floats { 1 } else { 0 }, 2]) {
        5 => {
            // The checksum so far.
            g.feature(Feature::PutInt);
            out.push(put(g, "putint", vec![build::var(CHECKSUM)]));
            out.push(put(g, "putch", vec![build::int(10)]));
        }
        1 => {
            g.feature(Feature::PutCh);
            let c = 32 + g.c.below(95) as i32;
            out.push(put(g, "putch", vec![build::int(c)]));
        }
        2 => {
            g.feature(Feature::PutFloat);
            let x = float_expr(g, ctx);
            out.push(put(g, "putfloat", vec![x.e]));
            out.push(put(g, "putch", vec![build::int(10)]));
        }
        k @ (3 | 4) => {
            let ty = if k == 3 { Ty::Int } else { Ty::Float };
            let views = array_views(g, ty, &[], 1, false);
            if views.is_empty() {
                return assign_stmt(g, true);
            }
            let (id, fixed) = views[g.pick_index(views.len())];
            let (name, dims) = (g.env.vars[id].name.clone(), g.env.vars[id].dims.clone());
            let idx = row_indices(g, &dims[..fixed]);
            let len = dims[fixed] as i64;
            let n = bounded_int(g, len.min(16), ctx.no_impure());
            g.feature(if ty == Ty::Int { Feature::PutArray } else { Feature::PutFArray });
            g.work.charge(len as u64 * 2);
            let f = if ty == Ty::Int { "putarray" } else { "putfarray" };
            out.push(put(g, f, vec![n.e, build::elem(&name, idx)]));
        }
        _ => {
            g.feature(Feature::PutInt);
            let x = int_expr(g, ctx);
            out.push(put(g, "putint", vec![x.e]));
            let sep = if g.c.chance(0.5) { 10 } else { 32 };
            out.push(put(g, "putch", vec![build::int(sep)]));
        }
    }
    out
}

/// Stable indices `i, j, ..` of a row `a[i][j]..` with these leading dimensions.
fn row_indices(g: &mut Gen, dims: &[u32]) -> Vec<Expr> {
    let stable = ECtx { impure_ok: false, stable: true, depth: 1 };
    dims.iter().map(|&d| index(g, d, stable).e).collect()
}

fn put(g: &mut Gen, name: &str, args: Vec<Expr>) -> BlockItem {
    g.work.charge(3);
    build::stmt(build::expr_stmt(build::call(name, args)))
}

fn putf_stmt(g: &mut Gen) -> Vec<BlockItem> {
    count_output(g);
    g.feature(Feature::PutF);
    let floats = g.cfg.knobs.float > 0;
    let choices: Vec<usize> = (0..PUTF_TEMPLATES.len()).filter(|&i| floats || !PUTF_TEMPLATES[i].1.contains('f')).collect();
    let (fmt, kinds) = PUTF_TEMPLATES[choices[g.pick_index(choices.len())]];
    let kinds: Vec<char> = kinds.chars().collect();
    let ctx = stmt_ctx(g);
    let args = siblings(g, kinds.len(), ctx.deeper(), &mut |g, c, i| match kinds[i] {
        'f' => {
            let e = float_expr(g, c);
            fit(g, e, FLOAT_VAR_BOUND)
        }
        'c' => {
            let v = 32 + g.c.below(95) as i32;
            GExpr::int(build::int(v), Some((v as i64, v as i64)), false, 1)
        }
        _ => int_expr(g, c),
    });
    let mut all = vec![build::str_lit(fmt)];
    all.extend(args.into_iter().map(|a| a.e));
    vec![put(g, "putf", all)]
}

/// `if (c) break;` — mostly late in the loop's run (`i == c`, `i >= c` near the end of
/// the counter's range, perhaps with another condition), so the loop does not end at once.
fn break_stmt(g: &mut Gen) -> Vec<BlockItem> {
    g.feature(Feature::Break);
    let ctx = stmt_ctx(g);
    let cond = late_cond(g, ctx);
    let body = if g.c.chance(0.5) {
        build::brk()
    } else {
        build::block_stmt(vec![build::stmt(build::brk())])
    };
    vec![build::stmt(build::if_stmt(cond, body, None))]
}

fn continue_stmt(g: &mut Gen) -> Vec<BlockItem> {
    g.feature(Feature::Continue);
    let ctx = stmt_ctx(g);
    // Not every iteration: the rest of the body must run too.
    let (cond, _) = branch_cond(g, ctx, [1, 3, 0, 4]);
    let latch = g.fcx.loops.last().map(|l| l.latch.clone()).unwrap_or_default();
    g.work.charge(latch.len() as u64 * 3);
    let body = if latch.is_empty() && g.c.chance(0.5) {
        build::cont()
    } else {
        let mut items: Vec<BlockItem> = latch.into_iter().map(build::stmt).collect();
        items.push(build::stmt(build::cont()));
        build::block_stmt(items)
    };
    vec![build::stmt(build::if_stmt(cond, body, None))]
}

/// `return e;` of the current function's type.
pub(super) fn return_value(g: &mut Gen) -> Stmt {
    let ctx = stmt_ctx(g);
    let value = g.fcx.ret.map(|ty| value_for(g, ty, ctx).e);
    g.work.charge(1);
    build::ret(value)
}

fn return_stmt(g: &mut Gen) -> Vec<BlockItem> {
    g.feature(Feature::EarlyReturn);
    let ctx = stmt_ctx(g);
    let cond = late_cond(g, ctx);
    let r = return_value(g);
    let body = if g.c.chance(0.5) { r } else { build::block_stmt(vec![build::stmt(r)]) };
    vec![build::stmt(build::if_stmt(cond, body, None))]
}

/// `int x; if (c) x = a; else x = b;` — `x` is readable only afterwards.
fn late_init(g: &mut Gen) -> Vec<BlockItem> {
    let floats = g.cfg.knobs.float > 0;
    let ty = if floats && g.c.chance(0.3) { Ty::Float } else { Ty::Int };
    let name = new_local_name(g);
    // Declared first (unreadable): the condition and values come after the declaration
    // in the source, where the name already means the new variable.
    let id = g.env.declare(env::scalar(name.clone(), ty, Storage::Local));
    g.env.vars[id].init = false;
    let ctx = stmt_ctx(g);
    let cond = cond(g, ctx, true);
    let then_v = value_for(g, ty, ctx);
    let else_v = value_for(g, ty, ctx);
    g.feature(Feature::LateInit);
    g.work.charge(3);
    g.env.vars[id].init = true;
    let then_s = build::assign_var(&name, then_v.e);
    let else_s = build::assign_var(&name, else_v.e);
    let (then_s, else_s) = if g.c.chance(0.5) {
        (then_s, else_s)
    } else {
        (build::block_stmt(vec![build::stmt(then_s)]), build::block_stmt(vec![build::stmt(else_s)]))
    };
    vec![
        BlockItem::Decl(build::decl(false, ty.btype(), &name, vec![], None)),
        build::stmt(build::if_stmt(cond, then_s, Some(else_s))),
    ]
}

// ---------------------------------------------------------------- input (main only)

fn input_stmt(g: &mut Gen) -> Vec<BlockItem> {
    let floats = g.cfg.knobs.float > 0;
    let arrays = g.cfg.knobs.arrays > 0;
    let scalars = |ty: Ty| -> Vec<VarId> {
        g.env.assignable(g.fcx.pure).into_iter().filter(|&id| g.env.vars[id].is_scalar() && g.env.vars[id].ty == ty).collect()
    };
    let (int_targets, float_targets) = (scalars(Ty::Int), scalars(Ty::Float));
    let choice = g.c.weighted(&[5, 2, if floats { 3 } else { 0 }, if arrays { 3 } else { 0 }, if arrays && floats { 2 } else { 0 }]);
    g.work.charge(5);
    match choice {
        0 | 1 => {
            let builtin = if choice == 0 {
                g.feature(Feature::GetInt);
                let v = input::random_int(g.c);
                g.unit.input.int(v, g.c.chance(0.3));
                "getint"
            } else {
                g.feature(Feature::GetCh);
                let c = GETCH_BYTES[g.pick_index(GETCH_BYTES.len())];
                g.unit.input.ch(c);
                "getch"
            };
            let call = build::call(builtin, vec![]);
            store_input(g, Ty::Int, &int_targets, call)
        }
        2 => {
            g.feature(Feature::GetFloat);
            let v = input::random_float(g.c);
            let hex = g.c.chance(0.4);
            g.unit.input.float(v, hex, g.c.chance(0.3));
            store_input(g, Ty::Float, &float_targets, build::call("getfloat", vec![]))
        }
        k => {
            let ty = if k == 3 { Ty::Int } else { Ty::Float };
            let views = array_views(g, ty, &[], 1, true);
            let views: Vec<(VarId, usize)> = views.into_iter().filter(|&(id, _)| g.env.vars[id].locks == 0 && !g.env.vars[id].read_only).collect();
            if views.is_empty() {
                return assign_stmt(g, true);
            }
            let (id, fixed) = views[g.pick_index(views.len())];
            let (name, dims) = (g.env.vars[id].name.clone(), g.env.vars[id].dims.clone());
            let idx = row_indices(g, &dims[..fixed]);
            let len = dims[fixed] as i64;
            let n = g.c.range(0, len.min(12));
            g.unit.input.int(n as i32, false);
            for _ in 0..n {
                if ty == Ty::Int {
                    let v = input::random_int(g.c);
                    g.unit.input.int(v, false);
                } else {
                    let v = input::random_float(g.c);
                    let hex = g.c.chance(0.3);
                    g.unit.input.float(v, hex, false);
                }
            }
            g.feature(if ty == Ty::Int { Feature::GetArray } else { Feature::GetFArray });
            g.work.charge(n as u64 * 3);
            let f = if ty == Ty::Int { "getarray" } else { "getfarray" };
            let call = build::call(f, vec![build::elem(&name, idx)]);
            store_input(g, Ty::Int, &int_targets, call)
        }
    }
}

/// `target = call;`, `T x = call;` or just `call;`.
fn store_input(g: &mut Gen, ty: Ty, targets: &[VarId], call: Expr) -> Vec<BlockItem> {
    match g.c.weighted(&[if targets.is_empty() { 0 } else { 4 }, 3, 1]) {
        0 => {
            let id = targets[g.pick_index(targets.len())];
            let name = g.env.vars[id].name.clone();
            vec![build::stmt(build::assign_var(&name, call))]
        }
        1 => {
            // A fresh name: a shadowing one could be the array argument of the call.
            let name = g.env.local_name("l");
            g.env.declare(env::scalar(name.clone(), ty, Storage::Local));
            vec![BlockItem::Decl(build::decl(false, ty.btype(), &name, vec![], Some(InitVal::Expr(call))))]
        }
        _ => vec![build::stmt(build::expr_stmt(call))],
    }
}

/// `mix(x);` or `mixf(x);`: variable `id` folded into the checksum.
pub(super) fn mix_of(g: &mut Gen, id: VarId) -> Stmt {
    let h = if g.env.vars[id].ty == Ty::Float { Helper::MixF } else { Helper::Mix };
    let e = g.env.read(id);
    g.use_helper(h);
    g.work.charge(h.cost() + 1);
    build::expr_stmt(build::call(h.name(), vec![e]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts printf conversions (`%%` is not one).
    fn conversions(fmt: &[u8]) -> usize {
        let mut n = 0;
        let mut i = 0;
        while i < fmt.len() {
            if fmt[i] == b'%' {
                if fmt.get(i + 1) == Some(&b'%') {
                    i += 2;
                    continue;
                }
                n += 1;
            }
            i += 1;
        }
        n
    }

    #[test]
    fn putf_templates_match_their_arguments() {
        assert_eq!(conversions(b"%%%d%%"), 1);
        for (fmt, kinds) in PUTF_TEMPLATES {
            assert_eq!(
                conversions(fmt),
                kinds.len(),
                "{}",
                String::from_utf8_lossy(fmt)
            );
        }
    }
}
