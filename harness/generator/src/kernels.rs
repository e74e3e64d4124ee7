//! Small loop kernels of real programs, each the precondition of a pass that the general
//! statement mix seldom meets (measured: each of these passes changed fewer than one program
//! in seven of a default campaign before):
//! * a float *sweep* (`gep-offsets`, `loop-load-elim`, `unroll`): a local float array filled
//!   by one loop, then smoothed by another that reads neighbours `s[k - r]`, `s[k]`,
//!   `s[k + r]` — in place (a dependence carried through memory) or into an accumulator;
//! * a *flag search* (`thread-phi-branch`): `found = 0; while (..) { if (c) { found = 1;
//!   break; } .. }` and then `if (found)`, the flag merged from the break and the normal exit;
//! * a *triangular nest* (`loop-idle-exit`): a counted loop whose body opens with a counted
//!   loop that skips the iterations past the outer counter (`if (j > i) { j = j + 1;
//!   continue; }`, as `transpose` swaps one triangle);
//! * a *row sweep* (`gep-invariant`): a flattened two-dimensional array written row by row
//!   through `a[i * C + j]` and read back through a row offset, `a[row + j]`, the index a sum
//!   of a term invariant in the inner loop and its counter (as the matrix and window loops of
//!   the performance suite index; the statement mix indexes by a counter plus a constant, or
//!   by a wrapped expression, never so: `gep-invariant` changed 0 of 500 programs of a
//!   default campaign before, 144 of 500 with this kernel).
//!
//! All four terminate by construction (hidden counters, literal bounds) and stay within the
//! generator's value bounds: the sweep's values are averages of elements bounded by
//! [`FLOAT_VAR_BOUND`].

use super::build::{self, increment, int_decl};
use super::cond::cond;
use super::env::{self, Storage};
use super::expr::{fit, float_expr, index, int_expr};
use super::features::Feature;
use super::loops::{counted_loop_opening, triangular_loop};
use super::prelude::Helper;
use super::state::Gen;
use super::value::{ECtx, FLOAT_VAR_BOUND, Ty};
use sysyc::frontend::ast::{BType, BinaryOp, BlockItem, Expr, InitVal, UnaryOp};

/// Loops of at most `tmax` iterations, or nothing when the budget cannot afford `per_trip`
/// work units for `tmin` of them.
fn kernel_trips(g: &Gen, tmin: i64, tmax: i64, per_trip: u64) -> Option<i64> {
    let affordable = g.work.remaining() / g.work.mult.saturating_mul(per_trip).max(1);
    let hi = tmax.min(g.cfg.max_trip_count as i64).min(affordable as i64);
    (hi >= tmin).then_some(hi)
}

/// A float sweep (see the module doc): `float s[n] = {};`, a fill loop, a smoothing loop
/// over `s[k - r] .. s[k + r]`, and the result folded into the checksum. The array stays
/// in scope for later statements.
pub(super) fn float_sweep(g: &mut Gen) -> Vec<BlockItem> {
    let Some(hi) = kernel_trips(g, 6, 32, 24) else {
        return g.statements.assignment(g);
    };
    let n = g.c.range(6, hi);
    let r: i64 = if g.c.chance(0.3) { 2 } else { 1 };
    g.feature(Feature::FloatSweep);
    g.feature(Feature::LocalArray);
    g.feature(Feature::While);
    g.use_helper(Helper::MixF);
    let (s, k) = (g.env.local_name("sw"), g.env.local_name("k"));
    let mut out = vec![
        BlockItem::Decl(build::decl(false, BType::Float, &s, vec![build::int(n as i32)], Some(build::init_list(Vec::new())))),
        int_decl(&k, build::int(0)),
    ];
    let saved = g.work.repeat(n as u64);
    // Fill: `s[k] = e * 0.5 + k * 0.25` with |e| ≤ FLOAT_VAR_BOUND: within the bound.
    let e = float_expr(g, ECtx::pure(3));
    let e = fit(g, e, FLOAT_VAR_BOUND);
    let value = build::bin(BinaryOp::Mul, e.e, build::float(0.5));
    let value = build::bin(BinaryOp::Add, value, build::bin(BinaryOp::Mul, build::var(&k), build::float(0.25)));
    let fill = vec![build::stmt(build::assign(build::lval(&s, vec![build::var(&k)]), value)), build::stmt(increment(&k, 1))];
    out.push(build::stmt(build::while_stmt(build::bin(BinaryOp::Lt, build::var(&k), build::int(n as i32)), build::block_stmt(fill))));
    let at = |d: i64| match d {
        0 => build::elem(&s, vec![build::var(&k)]),
        d if d < 0 => build::elem(&s, vec![build::bin(BinaryOp::Sub, build::var(&k), build::int(-d as i32))]),
        d => build::elem(&s, vec![build::bin(BinaryOp::Add, build::var(&k), build::int(d as i32))]),
    };
    let half = |e: Expr, f: f32| build::bin(BinaryOp::Mul, e, build::float(f));
    let in_place = g.c.chance(0.5);
    let (update, result) = if in_place {
        // Gauss–Seidel: `s[k - r]` was written by an earlier iteration. An average of two
        // elements within the bound stays within it.
        let avg = half(build::bin(BinaryOp::Add, at(-r), at(r)), 0.5);
        let update = build::assign(build::lval(&s, vec![build::var(&k)]), avg);
        (update, build::elem(&s, vec![build::int((n / 2) as i32)]))
    } else {
        // |acc| ≤ 0.5·|acc| + 0.375·B keeps |acc| ≤ 0.75·B.
        let acc = g.env.local_name("acc");
        out.push(BlockItem::Decl(build::decl(false, BType::Float, &acc, vec![], Some(InitVal::Expr(build::float(0.0))))));
        let terms = build::bin(BinaryOp::Sub, build::bin(BinaryOp::Add, at(-r), at(0)), at(r));
        let update = build::assign_var(&acc, build::bin(BinaryOp::Add, half(build::var(&acc), 0.5), half(terms, 0.125)));
        (update, build::var(&acc))
    };
    out.push(build::stmt(build::assign_var(&k, build::int(r as i32))));
    let smooth = build::block_stmt(vec![build::stmt(update), build::stmt(increment(&k, 1))]);
    out.push(build::stmt(build::while_stmt(build::bin(BinaryOp::Lt, build::var(&k), build::int((n - r) as i32)), smooth)));
    g.work.charge(24);
    g.work.mult = saved;
    g.work.charge(Helper::MixF.cost());
    out.push(build::stmt(build::expr_stmt(build::call(Helper::MixF.name(), vec![result]))));
    let mut array = env::array(s, Ty::Float, vec![n as u32], Storage::Local);
    array.init = true;
    g.env.declare(array);
    out
}

/// A flag search (see the module doc): the flag is 1 exactly when the loop left through
/// its `break`, and the statement after the loop branches on it.
pub(super) fn flag_search(g: &mut Gen) -> Vec<BlockItem> {
    let Some(hi) = kernel_trips(g, 2, 48, 12) else {
        return g.statements.assignment(g);
    };
    let trips = g.c.range(2, hi);
    g.feature(Feature::FlagSearch);
    g.feature(Feature::While);
    g.feature(Feature::Break);
    let (flag, k) = (g.env.local_name("found"), g.env.local_name("k"));
    let mut out = vec![int_decl(&flag, build::int(0)), int_decl(&k, build::int(0))];
    let counter = g.env.declare(env::scalar(k.clone(), Ty::Int, Storage::Local));
    g.env.lock(counter);
    g.env.vars[counter].range = Some((0, trips - 1));
    let saved = g.work.repeat(trips as u64);
    let ctx = ECtx::pure(2);
    let at_k = build::var(&k);
    let found_when = match g.c.below(3) {
        // Data decides whether and where the search succeeds.
        0 => {
            let e = int_expr(g, ctx);
            build::bin(BinaryOp::Eq, at_k, e.e)
        }
        // Found at a fixed position, or (beyond the range) never.
        1 => build::bin(BinaryOp::Ge, at_k, build::int(g.c.range(1, trips + trips / 2) as i32)),
        _ => {
            let late = build::bin(BinaryOp::Ge, at_k, build::int(g.c.range(0, trips - 1) as i32));
            let data = cond(g, ctx, false);
            build::conjoin(late, data)
        }
    };
    g.work.charge(8);
    g.work.mult = saved;
    let hit = build::block_stmt(vec![build::stmt(build::assign_var(&flag, build::int(1))), build::stmt(build::brk())]);
    let search = build::block_stmt(vec![build::stmt(build::if_stmt(found_when, hit, None)), build::stmt(increment(&k, 1))]);
    out.push(build::stmt(build::while_stmt(build::bin(BinaryOp::Lt, build::var(&k), build::int(trips as i32)), search)));
    g.env.unlock(counter);
    g.env.vars[counter].range = None;
    // `if (found)`, `if (found != 0)`, `if (!found)` or `if (found == 0)`: the last two
    // with the sides swapped.
    let (test, negated) = match g.c.below(4) {
        0 => (build::var(&flag), false),
        1 => (build::bin(BinaryOp::Ne, build::var(&flag), build::int(0)), false),
        2 => (build::unary(UnaryOp::Not, build::var(&flag)), true),
        _ => (build::bin(BinaryOp::Eq, build::var(&flag), build::int(0)), true),
    };
    let mut found_side = g.statements.body(g);
    if !g.fcx.pure {
        // Where the search stopped.
        g.use_helper(Helper::Mix);
        g.work.charge(Helper::Mix.cost());
        let mix = build::stmt(build::expr_stmt(build::call(Helper::Mix.name(), vec![build::var(&k)])));
        // The body may declare a local that shadows the counter (it is unlocked by now):
        // then the counter is read before that declaration.
        let shadowed = found_side.iter().any(|item| match item {
            BlockItem::Decl(d) => d.defs.iter().any(|def| def.name.name == k),
            _ => false,
        });
        if shadowed {
            found_side.insert(0, mix);
        } else {
            found_side.push(mix);
        }
    }
    let other_side = if g.c.chance(0.6) { Some(g.statements.body(g)) } else { None };
    let stmt = match (negated, other_side) {
        (false, other) => build::if_stmt(test, build::block_stmt(found_side), other.map(build::block_stmt)),
        (true, Some(other)) => build::if_stmt(test, build::block_stmt(other), Some(build::block_stmt(found_side))),
        (true, None) => build::if_stmt(test, build::block_stmt(vec![build::stmt(build::empty_stmt())]), Some(build::block_stmt(found_side))),
    };
    g.work.charge(3);
    out.push(build::stmt(stmt));
    g.env.declare(env::scalar(flag, Ty::Int, Storage::Local));
    out
}

/// A triangular nest (see the module doc): a counted loop whose body opens with a counted
/// loop that always has the triangular skip (feature `triangle-nest` when both loops fit
/// the budget).
pub(super) fn triangle_nest(g: &mut Gen) -> Vec<BlockItem> {
    counted_loop_opening(g, &mut |g, _| triangular_loop(g))
}

/// A row sweep (see the module doc): `int rs[R * C] = {};` filled by a nest over rows `i`
/// and columns `j` through `rs[i * C + j]`, then read back by a second nest through
/// `row = i * C` into a bounded accumulator, `acc = (acc * 3 + rs[row + j]) % 10007`, which
/// goes to the checksum. The array stays in scope for later statements.
pub(super) fn row_sweep(g: &mut Gen) -> Vec<BlockItem> {
    let rows = g.c.range(2, 4);
    // Both nests run rows × columns times, about a dozen work units an iteration each.
    let Some(hi) = kernel_trips(g, 2, 64, 24 * rows as u64) else {
        return g.statements.assignment(g);
    };
    // Past full-unroll's reach when the budget allows: a row of a dozen elements becomes
    // straight-line code, and its sums constants.
    let cols = g.c.range(hi.min(30), hi);
    g.feature(Feature::RowSweep);
    g.feature(Feature::LocalArray);
    g.feature(Feature::While);
    g.feature(Feature::NestedLoop);
    g.use_helper(Helper::Mix);
    let names = ["rs", "i", "j", "acc", "row", "j"].map(|n| g.env.local_name(n));
    let [a, i, j, acc, row, j2] = &names;
    let (r, c) = (build::int(rows as i32), build::int(cols as i32));
    let mut out = vec![
        BlockItem::Decl(build::decl(false, BType::Int, a, vec![build::int((rows * cols) as i32)], Some(build::init_list(Vec::new())))),
        int_decl(i, build::int(0)),
    ];
    let saved = g.work.repeat((rows * cols) as u64);
    // An element: a value in 0..1000 plus its column, below 1064.
    let e = index(g, 1000, ECtx::pure(2));
    let flat = build::bin(BinaryOp::Add, build::bin(BinaryOp::Mul, build::var(i), c.clone()), build::var(j));
    let fill = vec![
        build::stmt(build::assign(build::lval(a, vec![flat]), build::bin(BinaryOp::Add, e.e, build::var(j)))),
        build::stmt(increment(j, 1)),
    ];
    g.work.mult = saved;
    let fill_row = vec![
        int_decl(j, build::int(0)),
        build::stmt(build::while_stmt(build::bin(BinaryOp::Lt, build::var(j), c.clone()), build::block_stmt(fill))),
        build::stmt(increment(i, 1)),
    ];
    out.push(build::stmt(build::while_stmt(build::bin(BinaryOp::Lt, build::var(i), r.clone()), build::block_stmt(fill_row))));
    // acc < 10007 and an element below 1064: acc * 3 + element stays below 31 085.
    let element = if g.c.chance(0.5) {
        build::elem(a, vec![build::bin(BinaryOp::Add, build::var(row), build::var(j2))])
    } else {
        build::elem(a, vec![build::bin(BinaryOp::Add, build::var(j2), build::var(row))])
    };
    let step = build::bin(BinaryOp::Add, build::bin(BinaryOp::Mul, build::var(acc), build::int(3)), element);
    let read = vec![build::stmt(build::assign_var(acc, build::bin(BinaryOp::Mod, step, build::int(10007)))), build::stmt(increment(j2, 1))];
    let read_row = vec![
        int_decl(row, build::bin(BinaryOp::Mul, build::var(i), c.clone())),
        int_decl(j2, build::int(0)),
        build::stmt(build::while_stmt(build::bin(BinaryOp::Lt, build::var(j2), c), build::block_stmt(read))),
        build::stmt(increment(i, 1)),
    ];
    out.push(int_decl(acc, build::int(0)));
    out.push(build::stmt(build::assign_var(i, build::int(0))));
    out.push(build::stmt(build::while_stmt(build::bin(BinaryOp::Lt, build::var(i), r), build::block_stmt(read_row))));
    g.work.charge(24 * (rows * cols) as u64 + Helper::Mix.cost());
    out.push(build::stmt(build::expr_stmt(build::call(Helper::Mix.name(), vec![build::var(acc)]))));
    let mut array = env::array(a.clone(), Ty::Int, vec![(rows * cols) as u32], Storage::Local);
    array.init = true;
    g.env.declare(array);
    out
}
