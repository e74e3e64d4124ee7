//! Loop generation: every loop terminates within a trip count known to the generator.
//!
//! A counted loop has a dedicated counter that is *locked* (nothing in the body may assign
//! it) and a limit that cannot change while it runs (a literal, a constant, a read-only
//! global, or a locked variable: an outer counter — triangular loops —, a length parameter,
//! or a fresh local holding a bounded runtime value). With a static range `[lmin, lmax]` of
//! the limit and a start `s`, the counter's value inside the body is in `[s, lmax - 1]` —
//! index and divisor guards use that — and the trip count is at most `⌈(lmax - s) / step⌉`.
//! Shapes (all common compiler inputs, rotated or not):
//! * top test, update at the end: `i = s; while (i < L) { B; i = i + k; }`
//! * top test, decrement first: `i = L; while (i > s) { i = i - 1; B }`
//! * `while (1) { if (i >= L) break; B; i = i + k; }`
//! * bottom test: `i = s; while (1) { B; i = i + k; if (i >= L) break; }`
//!
//! The statements after `B` are the loop's *latch*; a `continue` in `B` repeats them first,
//! so it cannot skip the update. A guarded loop `while (c && t < T) { B; t = t + 1; }` has an
//! arbitrary condition and a hidden guard counter. Inside a body the cost multiplier is the
//! trip bound, and some outer locals are frozen (locked) so loop-invariant expressions occur.
//!
//! A body's statements come from `stmt.rs` through the `Statements` seam of `state.rs`;
//! what else it holds its caller says: statements it opens with (the idioms, a triangular
//! nest's inner loop), the triangular skip, `main`'s calls of every function.

use super::build::{self, increment, int_decl};
use super::calls::trip_arg;
use super::cond::cond;
use super::env::{self, Storage, VarId};
use super::expr::{fit, float_expr, index, int_expr};
use super::features::Feature;
use super::function::{ITERATION_COST, LoopCtx};
use super::operand::{int_lit_expr, stmt_ctx};
use super::state::Gen;
use super::value::{ECtx, FLOAT_VAR_BOUND, Ty};
use sysyc::frontend::ast::{BinaryOp, BlockItem, Expr, InitVal, Stmt};

/// Statements that make part of a body, generated given the loop's counter.
pub(super) type BodyPart<'p> = &'p mut dyn FnMut(&mut Gen, VarId) -> Vec<BlockItem>;

/// What a loop body holds.
enum BodyKind<'p> {
    /// Any statements.
    Plain,
    /// `main`'s driver loop: a longer body ending with these statements (a call of every
    /// function, `program.rs`).
    Driver(&'p mut dyn FnMut(&mut Gen) -> Vec<BlockItem>),
    /// Straight-line code only (assignments, calls, declarations), with loop-carried
    /// recurrences: a single-block loop once rotated, what `unroll` and `iv-reduce` take.
    Straight,
}

/// How a counted loop's body opens, as its caller asks.
enum Opening<'p> {
    /// With its statements.
    Plainly,
    /// With these statements, in the body's scope: an idiom of `idioms.rs`, the inner loop
    /// of a triangular nest (`kernels.rs`).
    With(BodyPart<'p>),
    /// With the triangular skip, always: the inner loop of a triangular nest.
    TriangleSkip,
}

/// The limit of a counted loop.
struct Limit {
    expr: Expr,
    lo: i64,
    hi: i64,
    /// Statements that must precede the loop (declaration of a runtime limit, which stays
    /// locked until its scope ends so that its range stays true).
    setup: Vec<BlockItem>,
    /// The variable the limit reads: locked while the loop is generated, so no declaration
    /// in the body can hide its name from the latch (`if (i >= L) break;`).
    var: Option<VarId>,
}

impl Limit {
    /// A limit known at compile time.
    fn fixed(expr: Expr, trips: i64) -> Limit {
        Limit { expr, lo: trips, hi: trips, setup: Vec::new(), var: None }
    }
}

/// How many iterations the remaining budget allows at the current multiplier.
fn affordable_trips(g: &Gen) -> u64 {
    let per_iteration = g.work.mult.saturating_mul(ITERATION_COST).max(1);
    g.work.remaining() / per_iteration
}

/// A limit with trips up to `tmax`; `runtime` favours limits unknown at compile time.
fn choose_limit(g: &mut Gen, tmax: i64, runtime: bool) -> Limit {
    let fits = |v: &env::Var| {
        let in_range = v.range.is_some_and(|(lo, hi)| hi <= tmax && hi >= 1 && lo >= 0);
        v.is_scalar() && v.ty == Ty::Int && v.readable() && in_range && (v.locks > 0 || v.is_const || v.read_only)
    };
    let ranged: Vec<VarId> = g.env.visible().into_iter().filter(|&id| fits(&g.env.vars[id])).collect();
    let dims: Vec<u32> = g.env.visible().into_iter().flat_map(|id| g.env.vars[id].dims.clone()).filter(|&d| d >= 2 && d as i64 <= tmax).collect();
    let (literal, dim) = if runtime { (1, 1) } else { (5, 4) };
    match g.c.weighted(&[literal, if ranged.is_empty() { 0 } else { 4 }, if dims.is_empty() { 0 } else { dim }, if runtime { 5 } else { 3 }]) {
        1 => {
            let id = ranged[g.pick_index(ranged.len())];
            let (lo, hi) = g.env.vars[id].range.unwrap_or((0, 0));
            g.feature(Feature::RuntimeTripLoop);
            Limit { expr: g.env.read(id), lo, hi, setup: Vec::new(), var: Some(id) }
        }
        2 => {
            let d = dims[g.pick_index(dims.len())] as i64;
            g.feature(Feature::ConstTripLoop);
            Limit::fixed(build::int(d as i32), d)
        }
        3 => {
            // A fresh local with a bounded runtime value.
            g.feature(Feature::RuntimeTripLoop);
            let x = trip_arg(g, tmax, ECtx { impure_ok: !g.fcx.pure, stable: false, depth: 2 });
            let name = g.env.local_name("n");
            let id = g.env.declare(env::scalar(name.clone(), Ty::Int, Storage::Local));
            g.env.vars[id].range = x.range.or(Some((0, tmax)));
            let (lo, hi) = g.env.vars[id].range.unwrap_or((0, tmax));
            g.env.lock(id);
            Limit { expr: build::var(&name), lo, hi, setup: vec![int_decl(&name, x.e)], var: None }
        }
        _ => {
            let t = g.c.range(1, tmax);
            g.feature(Feature::ConstTripLoop);
            Limit::fixed(int_lit_expr(g, t as i32), t)
        }
    }
}

/// The counter: a fresh local, or an existing local scalar re-used. Returns its id and
/// the statement initialising it to `start`.
fn new_counter(g: &mut Gen, start: Expr) -> (VarId, BlockItem) {
    let reusable: Vec<VarId> = g
        .env
        .assignable(g.fcx.pure)
        .into_iter()
        .filter(|&id| {
            let v = &g.env.vars[id];
            v.is_scalar() && v.ty == Ty::Int && v.storage != Storage::Global && v.range.is_none()
        })
        .collect();
    if !reusable.is_empty() && g.c.chance(0.3) {
        let id = reusable[g.pick_index(reusable.len())];
        let name = g.env.vars[id].name.clone();
        return (id, build::stmt(build::assign_var(&name, start)));
    }
    let name = g.env.local_name("i");
    let id = g.env.declare(env::scalar(name.clone(), Ty::Int, Storage::Local));
    (id, int_decl(&name, start))
}

/// Locks some outer local scalars for the body so that loop-invariant code appears.
fn freeze_some(g: &mut Gen, counter: VarId) -> Vec<VarId> {
    if !g.knob(g.cfg.knobs.invariants) {
        return Vec::new();
    }
    let mut frozen = Vec::new();
    for id in g.env.assignable(g.fcx.pure) {
        let v = &g.env.vars[id];
        if id != counter && v.is_scalar() && v.storage != Storage::Global && g.c.chance(0.5) {
            frozen.push(id);
        }
    }
    if !frozen.is_empty() {
        g.feature(Feature::Invariant);
    }
    for &id in &frozen {
        g.env.lock(id);
    }
    frozen
}

/// Generates a loop body of the given kind with the counter locked to `range` (counting
/// down or up), multiplier `trips`.
#[allow(clippy::too_many_arguments)]
fn loop_body(g: &mut Gen, counter: VarId, range: (i64, i64), trips: u64, latch: Vec<Stmt>, kind: BodyKind, down: bool, opening: Opening) -> Vec<BlockItem> {
    g.env.lock(counter);
    g.env.vars[counter].range = Some(range);
    let frozen = freeze_some(g, counter);
    g.fcx.loops.push(LoopCtx { latch: latch.clone(), counter: Some(counter), down });
    let saved = g.work.repeat(trips.max(1));
    g.work.charge(latch.len() as u64 * 3);
    // The opening's statements and the body's share a scope: in the source they are one
    // block, so a declaration in the body must not take a name the opening declared.
    g.env.push_scope();
    let (mut items, forced_skip) = match opening {
        Opening::With(part) => (part(g, counter), false),
        Opening::Plainly => (Vec::new(), false),
        Opening::TriangleSkip => (Vec::new(), true),
    };
    let plain = matches!(kind, BodyKind::Plain);
    match kind {
        BodyKind::Driver(calls) => {
            g.fcx.depth += 1;
            items.extend(g.statements.stmts(g, (2 * g.cfg.max_block_stmts).max(4)));
            items.extend(calls(g));
            g.fcx.depth -= 1;
        }
        BodyKind::Straight => {
            let saved = std::mem::replace(&mut g.fcx.straight, true);
            g.fcx.depth += 1;
            items.extend(g.statements.stmts(g, g.cfg.max_block_stmts.clamp(2, 5)));
            items.extend(recurrences(g, counter));
            g.fcx.depth -= 1;
            g.fcx.straight = saved;
        }
        BodyKind::Plain => {
            items.extend(g.statements.body_in_scope(g));
            // Now and then a recurrence or stencil in a general loop body too, where
            // control flow around it keeps the loop multi-block.
            if g.c.chance(0.4) {
                items.extend(recurrences(g, counter));
            }
        }
    }
    if plain && !down
        && let Some(skip) = triangle_skip(g, counter, &latch, forced_skip)
    {
        items.insert(0, skip);
    }
    g.env.pop_scope();
    g.work.mult = saved;
    g.fcx.loops.pop();
    for id in frozen {
        g.env.unlock(id);
    }
    g.env.unlock(counter);
    g.env.vars[counter].range = None;
    items.extend(latch.into_iter().map(build::stmt));
    items
}

/// Now and then, in a loop nested in a counted one, a guard that skips the rest of the
/// row once the inner counter `i` passes the outer one `o`: `if (i > o) { latch;
/// continue; }` at the top of the body (triangular iteration spaces, `transpose`
/// swapping one half). Once true it stays true (`i` grows, `o` is locked), the shape
/// `loop-idle-exit` takes.
fn triangle_skip(g: &mut Gen, counter: VarId, latch: &[Stmt], forced: bool) -> Option<BlockItem> {
    let depth = g.fcx.loops.len();
    let outer = g.fcx.loops.get(depth.checked_sub(2)?)?.counter?;
    let v = &g.env.vars[outer];
    let visible = g.env.lookup(&v.name) == Some(outer) && v.readable() && v.ty == Ty::Int;
    if !visible || !(forced || g.knob(g.cfg.knobs.continues)) {
        return None;
    }
    g.feature(Feature::TriangleSkip);
    g.feature(Feature::Continue);
    if forced {
        g.feature(Feature::TriangleNest);
    }
    g.work.charge(3 + latch.len() as u64 * 3);
    let (i, o) = (g.env.read(counter), g.env.read(outer));
    let test = match g.c.below(3) {
        0 => build::bin(BinaryOp::Gt, i, o),
        1 => build::bin(BinaryOp::Lt, o, i),
        _ => build::bin(BinaryOp::Ge, i, o),
    };
    let mut body: Vec<BlockItem> = skip_count(g, counter).into_iter().collect();
    body.extend(latch.iter().cloned().map(build::stmt));
    body.push(build::stmt(build::cont()));
    Some(build::stmt(build::if_stmt(test, build::block_stmt(body), None)))
}

/// Sometimes, in a triangle skip, a count of the skipped iterations, `s = s + k;`, in a
/// local declared before the loop: the skipped iterations then do more than count the
/// inner counter up, and leaving the loop at the first of them (`loop-idle-exit`) would
/// lose their updates of `s`.
fn skip_count(g: &mut Gen, counter: VarId) -> Option<BlockItem> {
    if !g.c.chance(0.35) {
        return None;
    }
    // Ids are handed out in declaration order: below the counter's, declared before it.
    let counts = |id: VarId| {
        let v = &g.env.vars[id];
        id < counter && v.is_scalar() && v.ty == Ty::Int && v.storage != Storage::Global && v.range.is_none() && !v.dead
    };
    let candidates: Vec<VarId> = g.env.assignable(g.fcx.pure).into_iter().filter(|&id| counts(id)).collect();
    if candidates.is_empty() {
        return None;
    }
    let id = candidates[g.pick_index(candidates.len())];
    let name = g.env.vars[id].name.clone();
    let k = g.c.range(1, 9) as i32;
    g.work.charge(3);
    g.feature(Feature::SkipCount);
    Some(build::stmt(increment(&name, k)))
}

/// A condition generated at the multiplier of a loop test (`trips + 1` evaluations).
fn loop_cond(g: &mut Gen, trips: u64) -> Expr {
    let saved = g.work.repeat(trips + 1);
    let ctx = stmt_ctx(g);
    let c = cond(g, ctx, false);
    g.work.mult = saved;
    c
}

fn charge_loop_test(g: &mut Gen, trips: u64) {
    let saved = g.work.repeat(trips + 1);
    g.work.charge(3);
    g.work.mult = saved;
}

pub(super) fn counted_loop(g: &mut Gen) -> Vec<BlockItem> {
    counted_loop_over(g, None, BodyKind::Plain, Opening::Plainly)
}

/// A counted loop whose body opens with the statements `part` makes (or that the budget
/// left no room for, an assignment).
pub(super) fn counted_loop_opening(g: &mut Gen, part: BodyPart) -> Vec<BlockItem> {
    counted_loop_over(g, None, BodyKind::Plain, Opening::With(part))
}

/// A counted loop whose body opens with the triangular skip (the inner loop of a
/// triangular nest, `kernels.rs`).
pub(super) fn triangular_loop(g: &mut Gen) -> Vec<BlockItem> {
    counted_loop_over(g, None, BodyKind::Plain, Opening::TriangleSkip)
}

/// A counted loop with a straight-line body and (mostly) a run-time trip count: top- or
/// bottom-tested, step 1 or 2, no extra condition — the single-block loops `unroll`
/// takes once rotated, with loop-carried values through locals and arrays.
pub(super) fn straight_loop(g: &mut Gen) -> Vec<BlockItem> {
    g.feature(Feature::StraightLoop);
    counted_loop_over(g, None, BodyKind::Straight, Opening::Plainly)
}

/// A loop walking one dimension of a visible array, with the array favoured in the body
/// (array walks: reductions, element updates, neighbours via affine indices).
pub(super) fn array_walk(g: &mut Gen) -> Vec<BlockItem> {
    let walkable = |v: &env::Var| v.is_array() && v.init && v.dims.iter().any(|&d| d >= 2);
    let arrays: Vec<VarId> = g.env.visible().into_iter().filter(|&id| walkable(&g.env.vars[id])).collect();
    if arrays.is_empty() {
        return counted_loop(g);
    }
    let id = arrays[g.pick_index(arrays.len())];
    let dims: Vec<u32> = g.env.vars[id].dims.iter().copied().filter(|&d| d >= 2).collect();
    let d = dims[g.pick_index(dims.len())];
    g.feature(Feature::ArrayWalk);
    g.fcx.affinity.push(id);
    let out = counted_loop_over(g, Some(d as i64), BodyKind::Plain, Opening::Plainly);
    g.fcx.affinity.pop();
    out
}

fn counted_loop_over(g: &mut Gen, walk: Option<i64>, kind: BodyKind, opening: Opening) -> Vec<BlockItem> {
    let straight = matches!(kind, BodyKind::Straight);
    let tmax = (g.cfg.max_trip_count as u64).min(affordable_trips(g)) as i64;
    let tmax = match walk {
        Some(d) if d <= affordable_trips(g) as i64 => d,
        _ => tmax,
    };
    if tmax < 1 {
        return g.statements.assignment(g);
    }
    g.feature(Feature::While);
    if !g.fcx.loops.is_empty() {
        g.feature(Feature::NestedLoop);
    }
    let limit = match walk {
        Some(d) if d == tmax => {
            g.feature(Feature::ConstTripLoop);
            Limit::fixed(int_lit_expr(g, d as i32), d)
        }
        _ => choose_limit(g, tmax, straight),
    };
    let mut out = limit.setup.clone();
    let start: i64 = if limit.hi >= 2 && g.c.chance(0.2) {
        g.c.range(1, (limit.hi - 1).min(3))
    } else {
        0
    };
    let bottom_ok = start < limit.lo;
    // The triangular skip needs a counter that counts up.
    let up_only = matches!(opening, Opening::TriangleSkip);
    let shape = if straight {
        g.c.weighted(&[3, 0, 0, if bottom_ok { 1 } else { 0 }])
    } else if up_only {
        g.c.weighted(&[8, 0, 2, if bottom_ok { 2 } else { 0 }])
    } else {
        g.c.weighted(&[8, 3, 2, if bottom_ok { 2 } else { 0 }])
    };
    let step: i64 = if shape != 1 && g.c.chance(0.2) { g.c.range(2, 3) } else { 1 };
    let trips = ((limit.hi - start).max(0) as u64).div_ceil(step as u64).max(1);
    let range = (start, (limit.hi - 1).max(start));
    let (counter, init) = new_counter(g, build::int(start as i32));
    let name = g.env.vars[counter].name.clone();
    if let Some(id) = limit.var {
        g.env.lock(id);
    }
    let incr = increment(&name, step as i32);
    let exit_test = |l: &Expr| {
        if step == 1 && limit.lo == limit.hi && limit.lo >= start {
            build::bin(BinaryOp::Eq, build::var(&name), l.clone())
        } else {
            build::bin(BinaryOp::Ge, build::var(&name), l.clone())
        }
    };
    charge_loop_test(g, trips);
    let stmt = match shape {
        1 => {
            // i = L; while (i > s) { i = i - 1; B }
            g.feature(Feature::DownLoop);
            out.push(match init {
                BlockItem::Decl(mut d) => {
                    if let Some(def) = d.defs.first_mut() {
                        def.init = Some(InitVal::Expr(limit.expr.clone()));
                    }
                    BlockItem::Decl(d)
                }
                BlockItem::Stmt(_) => build::stmt(build::assign_var(&name, limit.expr.clone())),
            });
            let decr = build::assign_var(&name, build::bin(BinaryOp::Sub, build::var(&name), build::int(1)));
            let test = if g.c.chance(0.5) {
                build::bin(BinaryOp::Gt, build::var(&name), build::int(start as i32))
            } else {
                build::bin(BinaryOp::Lt, build::int(start as i32), build::var(&name))
            };
            let mut body = vec![build::stmt(decr)];
            body.extend(loop_body(g, counter, range, trips, Vec::new(), BodyKind::Plain, true, opening));
            build::while_stmt(test, build::block_stmt(body))
        }
        2 => {
            // while (1) { if (i >= L) break; B; i = i + k; }
            g.feature(Feature::InfiniteLoopBreak);
            out.push(init);
            let check = build::if_stmt(exit_test(&limit.expr), build::brk(), None);
            let mut body = vec![build::stmt(check)];
            body.extend(loop_body(g, counter, range, trips, vec![incr], BodyKind::Plain, false, opening));
            build::while_stmt(build::int(1), build::block_stmt(body))
        }
        3 => {
            // while (1) { B; i = i + k; if (i >= L) break; }
            g.feature(Feature::BottomTestLoop);
            out.push(init);
            let check = build::if_stmt(build::bin(BinaryOp::Ge, build::var(&name), limit.expr.clone()), build::brk(), None);
            let body = loop_body(g, counter, range, trips, vec![incr, check], kind, false, opening);
            build::while_stmt(build::int(1), build::block_stmt(body))
        }
        _ => {
            // i = s; while (i < L [&& c]) { B; i = i + k; }
            out.push(init);
            let mut test = if step == 1 && limit.lo == limit.hi && limit.lo >= start && g.c.chance(0.3) {
                build::bin(BinaryOp::Ne, build::var(&name), limit.expr.clone())
            } else if g.c.chance(0.7) {
                build::bin(BinaryOp::Lt, build::var(&name), limit.expr.clone())
            } else {
                build::bin(BinaryOp::Gt, limit.expr.clone(), build::var(&name))
            };
            if !straight && g.knob(g.cfg.knobs.short_circuit / 2) {
                let extra = loop_cond(g, trips);
                g.feature(Feature::ShortCircuit);
                test = build::conjoin(test, extra);
                if step == 1 && limit.lo > start && g.c.chance(0.7) {
                    // `i < K || i < L && c` with `K <= L`: at least `K - s` iterations
                    // whatever `c` says (and still at most the trip bound).
                    let k = g.c.range(start + 1, limit.lo);
                    let first = build::bin(BinaryOp::Lt, build::var(&name), build::int(k as i32));
                    test = build::bin(BinaryOp::Or, first, test);
                }
            }
            let body = loop_body(g, counter, range, trips, vec![incr], kind, false, opening);
            build::while_stmt(test, build::block_stmt(body))
        }
    };
    if let Some(id) = limit.var {
        g.env.unlock(id);
    }
    out.push(build::stmt(stmt));
    out
}

/// Loop-carried recurrences for a straight-line body with counter `i`: an array element
/// computed from its neighbour written by the previous iteration (`a[i + 1] = a[i] * k +
/// e`, or with `% d` indices; for a float array the stencil `a[i + 1] = (a[i] + a[i + 1])
/// * 0.25 + e * 0.5`, whose neighbouring float addresses `gep-offsets` shares), and two
/// locals feeding each other (`x = x * k + y; y = y - x;`).
fn recurrences(g: &mut Gen, counter: VarId) -> Vec<BlockItem> {
    let mut out = Vec::new();
    let Some((lo, hi)) = g.env.vars[counter].range else {
        return out;
    };
    let counter_name = g.env.vars[counter].name.clone();
    let ctx = ECtx::pure(2);
    let carries = |v: &env::Var| v.is_array() && !v.dead && v.dims.last().is_some_and(|&d| d >= 2);
    let arrays: Vec<VarId> = g.env.assignable(g.fcx.pure).into_iter().filter(|&id| carries(&g.env.vars[id])).collect();
    if !arrays.is_empty() && lo >= 0 && g.c.chance(0.7) {
        let floats: Vec<VarId> = arrays.iter().copied().filter(|&id| g.env.vars[id].ty == Ty::Float).collect();
        // Floats first: their neighbouring accesses are what `gep-offsets` shares.
        let pool = if !floats.is_empty() && g.c.chance(0.9) { &floats } else { &arrays };
        let id = pool[g.pick_index(pool.len())];
        let (name, dims) = (g.env.vars[id].name.clone(), g.env.vars[id].dims.clone());
        let d = *dims.last().unwrap_or(&1) as i64;
        let rows: Vec<Expr> = dims[..dims.len() - 1].iter().map(|&r| index(g, r, ECtx { stable: true, ..ctx }).e).collect();
        let i = || build::var(&counter_name);
        // Where the previous iteration wrote, and where this one writes.
        let (prev, cur) = if hi + 1 < d {
            (i(), build::bin(BinaryOp::Add, i(), build::int(1)))
        } else if lo >= 1 && hi < d {
            (build::bin(BinaryOp::Sub, i(), build::int(1)), i())
        } else {
            let m = |e: Expr| build::bin(BinaryOp::Mod, e, build::int(d as i32));
            (m(i()), m(build::bin(BinaryOp::Add, i(), build::int(1))))
        };
        let with = |idx: Expr| {
            let mut all = rows.clone();
            all.push(idx);
            all
        };
        let value = if g.env.vars[id].ty == Ty::Float {
            // Both terms at most half the bound of a float variable: the element stays
            // within it, however many times the loop runs.
            let e = float_expr(g, ctx);
            let e = fit(g, e, FLOAT_VAR_BOUND);
            g.work.charge(8);
            g.feature(Feature::FloatStencil);
            let sum = build::bin(BinaryOp::Add, build::elem(&name, with(prev)), build::elem(&name, with(cur.clone())));
            build::bin(BinaryOp::Add, build::bin(BinaryOp::Mul, sum, build::float(0.25)), build::bin(BinaryOp::Mul, e.e, build::float(0.5)))
        } else {
            let k = g.c.range(-5, 7) as i32;
            let e = int_expr(g, ctx);
            g.work.charge(6);
            build::bin(BinaryOp::Add, build::bin(BinaryOp::Mul, build::elem(&name, with(prev)), build::int(k)), e.e)
        };
        g.feature(Feature::LoopCarried);
        out.push(build::stmt(build::assign(build::lval(&name, with(cur)), value)));
    }
    let local_int = |v: &env::Var| v.is_scalar() && v.ty == Ty::Int && v.storage != Storage::Global;
    let scalars: Vec<VarId> = g.env.assignable(g.fcx.pure).into_iter().filter(|&id| local_int(&g.env.vars[id])).collect();
    if scalars.len() >= 2 && g.c.chance(0.6) {
        let a = scalars[g.pick_index(scalars.len())];
        let b = scalars[g.pick_index(scalars.len())];
        if a != b {
            let (x, y) = (g.env.vars[a].name.clone(), g.env.vars[b].name.clone());
            let k = g.c.range(2, 9) as i32;
            g.work.charge(8);
            g.feature(Feature::LoopCarried);
            let x_next = build::bin(BinaryOp::Add, build::bin(BinaryOp::Mul, build::var(&x), build::int(k)), build::var(&y));
            out.push(build::stmt(build::assign_var(&x, x_next)));
            out.push(build::stmt(build::assign_var(&y, build::bin(BinaryOp::Sub, build::var(&y), build::var(&x)))));
        }
    }
    out
}

/// `main`'s driver loop, `int i = 0; while (i < n_iter) { B; i = i + 1; }`, with the trip
/// count `n_iter` read from the input: `B` ends with what `calls` makes (the calls of every
/// function).
pub(super) fn driver_loop(g: &mut Gen, limit: VarId, trips: u64, calls: &mut dyn FnMut(&mut Gen) -> Vec<BlockItem>) -> Vec<BlockItem> {
    g.feature(Feature::While);
    g.feature(Feature::RuntimeTripLoop);
    let name = g.env.local_name("i");
    let counter = g.env.declare(env::scalar(name.clone(), Ty::Int, Storage::Local));
    let init = int_decl(&name, build::int(0));
    let limit_name = g.env.vars[limit].name.clone();
    let test = if g.c.chance(0.7) {
        build::bin(BinaryOp::Lt, build::var(&name), build::var(&limit_name))
    } else {
        build::bin(BinaryOp::Gt, build::var(&limit_name), build::var(&name))
    };
    charge_loop_test(g, trips);
    let range = (0, trips.saturating_sub(1) as i64);
    let body = loop_body(g, counter, range, trips, vec![increment(&name, 1)], BodyKind::Driver(calls), false, Opening::Plainly);
    vec![init, build::stmt(build::while_stmt(test, build::block_stmt(body)))]
}

/// `t = 0; while (c && t < T) { B; t = t + 1; }` — any condition, bounded by a guard.
pub(super) fn guarded_loop(g: &mut Gen) -> Vec<BlockItem> {
    let tmax = (g.cfg.max_trip_count as u64).min(affordable_trips(g)) as i64;
    if tmax < 1 {
        return g.statements.assignment(g);
    }
    g.feature(Feature::While);
    g.feature(Feature::GuardedLoop);
    if !g.fcx.loops.is_empty() {
        g.feature(Feature::NestedLoop);
    }
    let t = g.c.range(1, tmax);
    let (guard, init) = new_counter(g, build::int(0));
    let name = g.env.vars[guard].name.clone();
    charge_loop_test(g, t as u64);
    let cond = loop_cond(g, t as u64);
    let bound = build::bin(BinaryOp::Lt, build::var(&name), int_lit_expr(g, t as i32));
    // Both orders of the guard: `c` runs at most `T + 1` times either way.
    let test = if g.c.chance(0.5) { build::conjoin(cond, bound) } else { build::conjoin(bound, cond) };
    // Often `t < K || c && t < T` (K <= T): the first K iterations run whatever `c` says.
    let test = if g.c.chance(0.85) {
        let k = g.c.range(1, t);
        let first = build::bin(BinaryOp::Lt, build::var(&name), build::int(k as i32));
        build::bin(BinaryOp::Or, first, test)
    } else {
        test
    };
    let body = loop_body(g, guard, (0, t - 1), t as u64, vec![increment(&name, 1)], BodyKind::Plain, false, Opening::Plainly);
    vec![init, build::stmt(build::while_stmt(test, build::block_stmt(body)))]
}

/// Nested loops visiting every element of array `id` in row-major order, with
/// `per_elem(gen, element lvalue indices)` giving the statement for one element.
/// Counters are fresh; the element indices are the counters themselves.
pub(super) fn for_each_element(g: &mut Gen, id: VarId, per_elem: &mut dyn FnMut(&mut Gen, Vec<Expr>) -> Stmt) -> Vec<BlockItem> {
    let dims = g.env.vars[id].dims.clone();
    let mut counters = Vec::new();
    let mut decls = Vec::new();
    for _ in &dims {
        let name = g.env.local_name("i");
        let cid = g.env.declare(env::scalar(name.clone(), Ty::Int, Storage::Local));
        decls.push(int_decl(&name, build::int(0)));
        counters.push((cid, name));
    }
    let saved = g.work.mult;
    for (k, &d) in dims.iter().enumerate() {
        g.env.lock(counters[k].0);
        g.env.vars[counters[k].0].range = Some((0, d as i64 - 1));
        g.work.repeat(d as u64);
        g.work.charge(4);
    }
    let indices: Vec<Expr> = counters.iter().map(|(_, n)| build::var(n)).collect();
    let mut inner: Stmt = per_elem(g, indices);
    g.work.mult = saved;
    for (cid, _) in &counters {
        g.env.unlock(*cid);
        g.env.vars[*cid].range = None;
    }
    // Build from the innermost loop outwards.
    for k in (0..dims.len()).rev() {
        let name = &counters[k].1;
        let mut body = Vec::new();
        if k + 1 < dims.len() {
            body.push(build::stmt(build::assign_var(&counters[k + 1].1, build::int(0))));
        }
        body.push(build::stmt(inner));
        body.push(build::stmt(increment(name, 1)));
        let test = build::bin(BinaryOp::Lt, build::var(name), build::int(dims[k] as i32));
        inner = build::while_stmt(test, build::block_stmt(body));
    }
    decls.push(build::stmt(inner));
    decls
}
