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

use super::build;
use super::cond::Narrowing;
use super::env::{FLOAT_VAR_BOUND, Storage, Ty, VarId};
use super::features::Feature;
use super::input::GETCH_BYTES;
use super::prelude::Helper;
use super::state::{ECtx, GExpr, Gen};
use sysyc::frontend::ast::{BinaryOp, BlockItem, Stmt};

/// Work a typical statement costs: a statement is only started when this much is left.
pub(super) const STMT_COST: u64 = 25;

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

impl Gen<'_> {
    /// The context of a full expression in a statement of the current function.
    pub(super) fn stmt_ctx(&mut self) -> ECtx {
        let impure_ok = !self.fcx.pure && self.knob(self.cfg.knobs.impure_functions.max(20));
        ECtx {
            impure_ok,
            stable: false,
            depth: self.cfg.max_expr_depth,
        }
    }

    /// Up to `max` statements (at least one if the budget allows) in the current scope.
    pub(super) fn stmts_in_scope(&mut self, max: u32) -> Vec<BlockItem> {
        let n = self.c.range(1, max.max(1) as i64);
        let mut items = Vec::new();
        for _ in 0..n {
            if self.fcx.stmts >= self.cfg.max_function_stmts || !self.affordable(STMT_COST) {
                break;
            }
            items.extend(self.stmt());
        }
        items
    }

    /// A nested body (of `if`, `else`, a loop or a block).
    pub(super) fn body(&mut self) -> Vec<BlockItem> {
        self.push_scope();
        let items = self.body_in_scope();
        self.pop_scope();
        items
    }

    /// [`Gen::body`] in the current scope (which the caller opened for the block).
    pub(super) fn body_in_scope(&mut self) -> Vec<BlockItem> {
        self.fcx.depth += 1;
        let max = self
            .cfg
            .max_block_stmts
            .saturating_sub(self.fcx.depth / 2)
            .max(1);
        let items = self.stmts_in_scope(max);
        self.fcx.depth -= 1;
        items
    }

    /// A body as a statement: braced, or (sometimes) a single simple statement unbraced.
    fn body_stmt(&mut self) -> Stmt {
        let items = self.body();
        if items.len() == 1
            && self.c.chance(0.4)
            && let BlockItem::Stmt(s) = &items[0]
            && matches!(
                s,
                Stmt::Assign { .. }
                    | Stmt::Expr(..)
                    | Stmt::Break(_)
                    | Stmt::Continue(_)
                    | Stmt::Return(..)
            )
        {
            return s.clone();
        }
        build::block_stmt(items)
    }

    /// One statement (possibly a few, e.g. a declaration followed by its initialisation).
    pub(super) fn stmt(&mut self) -> Vec<BlockItem> {
        self.fcx.stmts += 1;
        self.charge(1);
        let k = self.cfg.knobs.clone();
        let deep_ok = self.fcx.depth < self.cfg.max_stmt_depth;
        let in_loop = !self.fcx.loops.is_empty();
        // Directly in `main`'s driver loop (a `break` there would end the program's work).
        let in_driver = self.fcx.is_main && self.fcx.loops.len() == 1;
        let impure = !self.fcx.pure;
        let main_top = self.at_main_top();
        let loop_ok = deep_ok
            && k.loops > 0
            && (!in_loop || self.knob(k.nested_loops))
            && self.affordable(self.loop_min_cost());
        let output_ok =
            impure && self.outputs.saturating_add(self.fcx.mult) <= self.cfg.output_budget;
        let w = |on: bool, weight: u32| if on { weight } else { 0 };
        // At the top of `main` a statement runs once: a conditional there would leave one of
        // its sides unexecuted.
        let branchy = deep_ok && !main_top && !self.fcx.straight;
        // A straight-line loop body has no control flow at all.
        let loop_ok = loop_ok && !self.fcx.straight;
        let in_loop_flow = in_loop && !self.fcx.straight;
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
            w(
                in_loop_flow && !in_driver && k.breaks > 0,
                k.breaks as u32 / 5,
            ), // 9 break
            w(in_loop_flow && k.continues > 0, k.continues as u32 / 5), // 10 continue
            w(
                !self.fcx.is_main && !self.fcx.straight && k.early_returns > 0,
                k.early_returns as u32 / 6,
            ), // 11 return
            1,                                                    // 12 empty
            w(branchy && k.late_init > 0, k.late_init as u32 / 5), // 13 late init
            w(k.dead_stores > 0, k.dead_stores as u32 / 5),       // 14 dead store
            w(main_top && k.input > 0, k.input as u32 / 2),       // 15 input
            w(main_top && loop_ok && k.timers > 0, k.timers as u32 / 4), // 16 timers
            w(
                !main_top && loop_ok && k.short_circuit > 0,
                k.loops as u32 / 8,
            ), // 17 guarded loop
            w(loop_ok && k.arrays > 0, k.loops as u32 / 4),       // 18 array walk
            w(loop_ok && k.straight_loops > 0, k.straight_loops as u32 / 3), // 19 straight loop
            w(loop_ok && k.hoist_shapes > 0, k.hoist_shapes as u32 / 3), // 20 global reads
            w(
                loop_ok && k.arrays > 0 && k.array_hoist > 0,
                k.array_hoist as u32 / 5,
            ), // 21 invariant local array
            w(in_loop && k.trivial_phis > 0, k.trivial_phis as u32 / 5), // 22 trivial update
            w(
                impure && !self.fcx.straight && k.register_pressure > 0,
                k.register_pressure as u32 / 8,
            ), // 23 register pressure
            w(
                loop_ok && impure && k.float > 0 && k.arrays > 0,
                k.float as u32 / 3,
            ), // 24 float sweep
            w(loop_ok && branchy && k.breaks > 0, k.breaks as u32 / 3), // 25 flag search
            w(
                loop_ok && k.nested_loops > 0 && k.continues > 0,
                k.nested_loops as u32 / 2,
            ), // 26 triangular nest
        ];
        match self.c.weighted(&weights) {
            1 => self.local_decl(),
            2 => self.if_stmt(),
            3 => self.counted_loop(),
            4 => self.call_stmt(),
            5 => self.mix_stmt(),
            6 => self.output_stmt(),
            7 => self.putf_stmt(),
            8 => {
                self.feature(Feature::Block);
                vec![build::stmt(build::block_stmt(self.body()))]
            }
            9 => self.break_stmt(),
            10 => self.continue_stmt(),
            11 => self.return_stmt(),
            12 => {
                self.feature(Feature::EmptyStmt);
                vec![build::stmt(build::empty_stmt())]
            }
            13 => self.late_init(),
            14 => {
                let first = self.assign_stmt(false);
                if first.is_empty() {
                    return first;
                }
                self.feature(Feature::DeadStore);
                let mut out = first.clone();
                // The same target assigned again: the first store is dead unless the new
                // value reads it.
                if let Some(BlockItem::Stmt(Stmt::Assign { target, .. })) = first.last() {
                    let ty = self
                        .env
                        .lookup(&target.name.name)
                        .map(|id| self.env.vars[id].ty);
                    if let Some(ty) = ty {
                        let stable = target.indices.iter().any(has_call);
                        let ctx = ECtx {
                            impure_ok: false,
                            stable,
                            ..self.stmt_ctx()
                        };
                        let v = self.value_for(ty, ctx);
                        self.charge(1);
                        out.push(build::stmt(build::assign(target.clone(), v.e)));
                    }
                }
                out
            }
            15 => self.input_stmt(),
            16 => {
                self.feature(Feature::Timers);
                let mut out = vec![build::stmt(build::expr_stmt(build::call(
                    "starttime",
                    vec![],
                )))];
                out.extend(self.counted_loop());
                out.push(build::stmt(build::expr_stmt(build::call(
                    "stoptime",
                    vec![],
                ))));
                out
            }
            17 => self.guarded_loop(),
            18 => self.array_walk(),
            19 => self.straight_loop(),
            20 => self.global_read_loop(),
            21 => self.invariant_array_loop(),
            22 => self.trivial_update(),
            23 => self.pressure_block(),
            24 => self.float_sweep(),
            25 => self.flag_search(),
            26 => self.triangle_nest(),
            _ => self.assign_stmt(true),
        }
    }

    /// Variables an assignment may target here.
    pub(super) fn assignable(&self) -> Vec<VarId> {
        self.env
            .visible()
            .into_iter()
            .filter(|&id| {
                let v = &self.env.vars[id];
                let foreign =
                    v.storage == Storage::Global || (v.storage == Storage::Param && v.is_array());
                !v.is_const && !v.read_only && v.locks == 0 && v.init && !(self.fcx.pure && foreign)
            })
            .collect()
    }

    /// `target = value;` (or `target = target op value;`). Falls back to a declaration when
    /// nothing is assignable.
    pub(super) fn assign_stmt(&mut self, allow_update: bool) -> Vec<BlockItem> {
        let mut targets = self.assignable();
        if self.fcx.straight {
            // Float values are clamped by a call with branches: ints only here.
            targets.retain(|&id| self.env.vars[id].ty == Ty::Int);
        }
        if targets.is_empty() {
            return self.local_decl();
        }
        let weights: Vec<u32> = targets
            .iter()
            .map(|&id| {
                let v = &self.env.vars[id];
                if v.is_array() {
                    3
                } else if v.storage == Storage::Global {
                    2
                } else {
                    3
                }
            })
            .collect();
        let id = targets[self.c.weighted(&weights)];
        let (name, ty, dims, local_scalar) = {
            let v = &self.env.vars[id];
            (
                v.name.clone(),
                v.ty,
                v.dims.clone(),
                v.is_scalar() && v.storage != Storage::Global,
            )
        };
        if self.env.vars[id].storage == Storage::Global
            && self.env.vars[id].is_array()
            && !self.fcx.globals_used.contains(&id)
        {
            self.fcx.globals_used.push(id);
        }
        let mut ctx = self.stmt_ctx();
        // A write-only (dead) array is never read, not even by `a[i] = a[i] + e`.
        let update = allow_update && !self.env.vars[id].dead && self.c.chance(0.35);
        if update && !local_scalar {
            // `g = g + f()` would depend on whether `f` runs before `g` is read.
            ctx.impure_ok = false;
        }
        let value = self.value_for(ty, ctx);
        let idx_ctx = ctx.sibling_of(value.impure).deeper();
        let indices: Vec<GExpr> =
            self.siblings(dims.len(), idx_ctx, &mut |g, c, i| g.index(dims[i], c));
        let target = build::lval(&name, indices.iter().map(|g| g.e.clone()).collect());
        self.charge(1);
        let value = if update {
            let current = build::elem(&name, indices.iter().map(|g| g.e.clone()).collect());
            let indices_pure = indices.iter().all(|g| !g.impure);
            if !indices_pure {
                value.e
            } else {
                self.charge(2);
                let op = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul][self.c.weighted(&[6, 2, 2])];
                let current_bound = if ty == Ty::Float {
                    FLOAT_VAR_BOUND
                } else {
                    super::env::INT_AS_FLOAT_BOUND
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
                    Ty::Float => self.fit(combined, FLOAT_VAR_BOUND).e,
                    Ty::Int if value.ty == Ty::Float => {
                        // int += float: the sum is a float; keep it convertible.
                        self.fit(combined, super::env::FLOAT_TO_INT_LIMIT).e
                    }
                    Ty::Int => combined.e,
                }
            }
        } else {
            value.e
        };
        vec![build::stmt(build::assign(target, value))]
    }

    fn if_stmt(&mut self) -> Vec<BlockItem> {
        self.feature(Feature::If);
        let ctx = self.stmt_ctx();
        let (cond, narrowing) = self.branch_cond(ctx, [1, 3, 3, 3]);
        let then_branch = self.narrowed(narrowing.map(|n| (n.var, n.when_true)), |g| g.body_stmt());
        let else_branch = if self.knob(self.cfg.knobs.elses) {
            self.feature(Feature::IfElse);
            if self.c.chance(0.25) && self.fcx.depth + 1 < self.cfg.max_stmt_depth {
                // `else if`: the nested `if` keeps its own optional else.
                self.feature(Feature::ElseIf);
                self.fcx.depth += 1;
                let nested =
                    self.narrowed(narrowing.map(|n| (n.var, n.when_false)), |g| g.if_stmt());
                self.fcx.depth -= 1;
                match nested.into_iter().next() {
                    Some(BlockItem::Stmt(s)) => Some(s),
                    _ => None,
                }
            } else {
                Some(self.narrowed(narrowing.map(|n| (n.var, n.when_false)), |g| g.body_stmt()))
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

    fn call_stmt(&mut self) -> Vec<BlockItem> {
        let ctx = ECtx {
            impure_ok: !self.fcx.pure,
            ..self.stmt_ctx()
        };
        let calls = self.callable(None, ctx);
        if calls.is_empty() {
            return self.assign_stmt(true);
        }
        let f = calls[self.pick_index(calls.len())];
        let g = self.call_user(f, ctx);
        vec![build::stmt(build::expr_stmt(g.e))]
    }

    fn mix_stmt(&mut self) -> Vec<BlockItem> {
        self.feature(Feature::MixCall);
        let ctx = self.stmt_ctx();
        let floats = self.cfg.knobs.float > 0;
        let floats = floats && !self.fcx.straight;
        let (h, g) = if floats && self.knob(self.cfg.knobs.float_corners) {
            // `mixz` also tells `-0.0` from `0.0`.
            (Helper::MixZ, self.float_expr(ctx))
        } else if floats && self.c.chance(0.3) {
            (Helper::MixF, self.float_expr(ctx))
        } else {
            (Helper::Mix, self.int_expr(ctx))
        };
        self.use_helper(h);
        self.charge(h.cost());
        vec![build::stmt(build::expr_stmt(build::call(
            h.name(),
            vec![g.e],
        )))]
    }

    fn count_output(&mut self) {
        self.outputs = self.outputs.saturating_add(self.fcx.mult);
    }

    fn output_stmt(&mut self) -> Vec<BlockItem> {
        self.count_output();
        let ctx = self.stmt_ctx();
        let floats = self.cfg.knobs.float > 0;
        let arrays = self.cfg.knobs.arrays > 0;
        let mut out = Vec::new();
        match self.c.weighted(&[
            6,
            2,
            if floats { 3 } else { 0 },
            if arrays { 2 } else { 0 },
            if arrays && floats { 1 } else { 0 },
            2,
        ]) {
            5 => {
                // The checksum so far.
                self.feature(Feature::PutInt);
                out.push(self.put("putint", vec![build::var(super::prelude::CHECKSUM)]));
                out.push(self.put("putch", vec![build::int(10)]));
            }
            1 => {
                self.feature(Feature::PutCh);
                let c = 32 + self.c.below(95) as i32;
                out.push(self.put("putch", vec![build::int(c)]));
            }
            2 => {
                self.feature(Feature::PutFloat);
                let g = self.float_expr(ctx);
                out.push(self.put("putfloat", vec![g.e]));
                out.push(self.put("putch", vec![build::int(10)]));
            }
            k @ (3 | 4) => {
                let ty = if k == 3 { Ty::Int } else { Ty::Float };
                let views = self.array_views(ty, &[], 1, false);
                if views.is_empty() {
                    return self.assign_stmt(true);
                }
                let (id, fixed) = views[self.pick_index(views.len())];
                let (name, dims) = (
                    self.env.vars[id].name.clone(),
                    self.env.vars[id].dims.clone(),
                );
                let stable = ECtx {
                    impure_ok: false,
                    stable: true,
                    depth: 1,
                };
                let idx: Vec<_> = dims[..fixed]
                    .iter()
                    .map(|&d| self.index(d, stable).e)
                    .collect();
                let len = dims[fixed] as i64;
                let n = self.bounded_int(len.min(16), ctx.no_impure());
                self.feature(if ty == Ty::Int {
                    Feature::PutArray
                } else {
                    Feature::PutFArray
                });
                self.charge(len as u64 * 2);
                let f = if ty == Ty::Int {
                    "putarray"
                } else {
                    "putfarray"
                };
                out.push(self.put(f, vec![n.e, build::elem(&name, idx)]));
            }
            _ => {
                self.feature(Feature::PutInt);
                let g = self.int_expr(ctx);
                out.push(self.put("putint", vec![g.e]));
                let sep = if self.c.chance(0.5) { 10 } else { 32 };
                out.push(self.put("putch", vec![build::int(sep)]));
            }
        }
        out
    }

    fn put(&mut self, name: &str, args: Vec<sysyc::frontend::ast::Expr>) -> BlockItem {
        self.charge(3);
        build::stmt(build::expr_stmt(build::call(name, args)))
    }

    fn putf_stmt(&mut self) -> Vec<BlockItem> {
        self.count_output();
        self.feature(Feature::PutF);
        let floats = self.cfg.knobs.float > 0;
        let choices: Vec<usize> = (0..PUTF_TEMPLATES.len())
            .filter(|&i| floats || !PUTF_TEMPLATES[i].1.contains('f'))
            .collect();
        let (fmt, kinds) = PUTF_TEMPLATES[choices[self.pick_index(choices.len())]];
        let kinds: Vec<char> = kinds.chars().collect();
        let ctx = self.stmt_ctx();
        let args = self.siblings(kinds.len(), ctx.deeper(), &mut |g, c, i| match kinds[i] {
            'f' => {
                let e = g.float_expr(c);
                g.fit(e, FLOAT_VAR_BOUND)
            }
            'c' => {
                let v = 32 + g.c.below(95) as i32;
                GExpr::int(build::int(v), Some((v as i64, v as i64)), false, 1)
            }
            _ => g.int_expr(c),
        });
        let mut all = vec![build::str_lit(fmt)];
        all.extend(args.into_iter().map(|a| a.e));
        vec![self.put("putf", all)]
    }

    /// `if (c) break;` — mostly late in the loop's run (`i == c`, `i >= c` near the end of
    /// the counter's range, perhaps with another condition), so the loop does not end at once.
    fn break_stmt(&mut self) -> Vec<BlockItem> {
        self.feature(Feature::Break);
        let ctx = self.stmt_ctx();
        let cond = self.late_cond(ctx);
        let body = if self.c.chance(0.5) {
            build::brk()
        } else {
            build::block_stmt(vec![build::stmt(build::brk())])
        };
        vec![build::stmt(build::if_stmt(cond, body, None))]
    }

    /// The condition of a `break` or an early `return`: in a loop with a counter, true only
    /// late in the counter's run (`i == c`, `i >= c` near its end, perhaps with another
    /// condition), so the statements after it run in most iterations; outside loops, a
    /// condition that should go both ways.
    fn late_cond(&mut self, ctx: ECtx) -> sysyc::frontend::ast::Expr {
        let Some((id, down)) = self.innermost_counter() else {
            return self.branch_cond(ctx, [1, 2, 0, 3]).0;
        };
        let (lo, hi) = self.env.vars[id].range.unwrap_or((0, 0));
        let c = if down {
            self.c.range(lo, lo + (hi - lo) / 3)
        } else {
            self.c.range(lo + (hi - lo) * 2 / 3, hi)
        };
        let i = self.env.read(id);
        let c = self.int_lit_expr(c as i32);
        self.charge(3);
        let test = match (self.c.below(3), down) {
            (0, _) => build::bin(BinaryOp::Eq, i, c),
            (_, false) => build::bin(BinaryOp::Ge, i, c),
            (_, true) => build::bin(BinaryOp::Le, i, c),
        };
        if self.c.chance(0.4) {
            let other = self.cond(ctx, false);
            super::loops::conjoin(test, other)
        } else {
            test
        }
    }

    /// The condition of a branch that should go both ways over the executions of the
    /// statement, with what it tells about a ranged variable on each side. With a counter
    /// (or other ranged variable) in scope, by weights: a condition `d` on data, a test `t` of
    /// the counter (which goes both ways over its range), `d || t` (true at least when `t`
    /// is), `d && t` (false at least when `t` is). Without one, `d`.
    pub(super) fn branch_cond(
        &mut self,
        ctx: ECtx,
        weights: [u32; 4],
    ) -> (sysyc::frontend::ast::Expr, Option<Narrowing>) {
        let counters = self.counters_here(ctx);
        if counters.is_empty() {
            return (self.cond(ctx, true), None);
        }
        let id = counters[self.pick_index(counters.len())];
        match self.c.weighted(&weights) {
            1 => {
                let (t, n) = self.counter_test_narrowing(id);
                (t.e, n)
            }
            2 => {
                let d = self.cond(ctx, true);
                let (t, n) = self.counter_test_narrowing(id);
                // Only the false side knows `t` (true may come from `d`).
                let n = n.map(|n| Narrowing {
                    when_true: None,
                    ..n
                });
                (build::bin(BinaryOp::Or, d, t.e), n)
            }
            3 => {
                let d = self.cond(ctx, false);
                let (t, n) = self.counter_test_narrowing(id);
                let n = n.map(|n| Narrowing {
                    when_false: None,
                    ..n
                });
                let e = if self.c.chance(0.5) {
                    super::loops::conjoin(t.e, d)
                } else {
                    build::bin(BinaryOp::And, d, t.e)
                };
                (e, n)
            }
            _ => (self.cond(ctx, true), None),
        }
    }

    /// The innermost loop's counter, if it has one that is visible with a range, and
    /// whether it counts down.
    fn innermost_counter(&self) -> Option<(VarId, bool)> {
        let l = self.fcx.loops.last()?;
        let id = l.counter?;
        let v = &self.env.vars[id];
        (self.env.lookup(&v.name) == Some(id)
            && v.readable()
            && v.range.is_some_and(|(lo, hi)| lo <= hi))
        .then_some((id, l.down))
    }

    fn continue_stmt(&mut self) -> Vec<BlockItem> {
        self.feature(Feature::Continue);
        let ctx = self.stmt_ctx();
        // Not every iteration: the rest of the body must run too.
        let (cond, _) = self.branch_cond(ctx, [1, 3, 0, 4]);
        let latch = self
            .fcx
            .loops
            .last()
            .map(|l| l.latch.clone())
            .unwrap_or_default();
        self.charge(latch.len() as u64 * 3);
        let body = if latch.is_empty() && self.c.chance(0.5) {
            build::cont()
        } else {
            let mut items: Vec<BlockItem> = latch.into_iter().map(build::stmt).collect();
            items.push(build::stmt(build::cont()));
            build::block_stmt(items)
        };
        vec![build::stmt(build::if_stmt(cond, body, None))]
    }

    /// `return e;` of the current function's type.
    pub(super) fn return_value(&mut self) -> Stmt {
        let ctx = self.stmt_ctx();
        let value = self.fcx.ret.map(|ty| self.value_for(ty, ctx).e);
        self.charge(1);
        build::ret(value)
    }

    fn return_stmt(&mut self) -> Vec<BlockItem> {
        self.feature(Feature::EarlyReturn);
        let ctx = self.stmt_ctx();
        let cond = self.late_cond(ctx);
        let r = self.return_value();
        let body = if self.c.chance(0.5) {
            r
        } else {
            build::block_stmt(vec![build::stmt(r)])
        };
        vec![build::stmt(build::if_stmt(cond, body, None))]
    }

    /// `int x; if (c) x = a; else x = b;` — `x` is readable only afterwards.
    fn late_init(&mut self) -> Vec<BlockItem> {
        let floats = self.cfg.knobs.float > 0;
        let ty = if floats && self.c.chance(0.3) {
            Ty::Float
        } else {
            Ty::Int
        };
        let name = self.new_local_name();
        // Declared first (unreadable): the condition and values come after the declaration
        // in the source, where the name already means the new variable.
        let id = self
            .env
            .declare(super::env::scalar(name.clone(), ty, Storage::Local));
        self.env.vars[id].init = false;
        let ctx = self.stmt_ctx();
        let cond = self.cond(ctx, true);
        let then_v = self.value_for(ty, ctx);
        let else_v = self.value_for(ty, ctx);
        self.feature(Feature::LateInit);
        self.charge(3);
        self.env.vars[id].init = true;
        let then_s = build::assign_var(&name, then_v.e);
        let else_s = build::assign_var(&name, else_v.e);
        let (then_s, else_s) = if self.c.chance(0.5) {
            (then_s, else_s)
        } else {
            (
                build::block_stmt(vec![build::stmt(then_s)]),
                build::block_stmt(vec![build::stmt(else_s)]),
            )
        };
        vec![
            BlockItem::Decl(build::decl(false, ty.btype(), &name, vec![], None)),
            build::stmt(build::if_stmt(cond, then_s, Some(else_s))),
        ]
    }

    // ---------------------------------------------------------------- input (main only)

    fn input_stmt(&mut self) -> Vec<BlockItem> {
        let floats = self.cfg.knobs.float > 0;
        let arrays = self.cfg.knobs.arrays > 0;
        let int_targets: Vec<VarId> = self
            .assignable()
            .into_iter()
            .filter(|&id| self.env.vars[id].is_scalar() && self.env.vars[id].ty == Ty::Int)
            .collect();
        let float_targets: Vec<VarId> = self
            .assignable()
            .into_iter()
            .filter(|&id| self.env.vars[id].is_scalar() && self.env.vars[id].ty == Ty::Float)
            .collect();
        let choice = self.c.weighted(&[
            5,
            2,
            if floats { 3 } else { 0 },
            if arrays { 3 } else { 0 },
            if arrays && floats { 2 } else { 0 },
        ]);
        self.charge(5);
        match choice {
            0 | 1 => {
                let (builtin, value) = if choice == 0 {
                    self.feature(Feature::GetInt);
                    let v = self.random_input_int();
                    self.input.int(v, self.c.chance(0.3));
                    ("getint", v)
                } else {
                    self.feature(Feature::GetCh);
                    let c = GETCH_BYTES[self.pick_index(GETCH_BYTES.len())];
                    self.input.ch(c);
                    ("getch", c as i32)
                };
                let _ = value;
                let call = build::call(builtin, vec![]);
                self.store_input(Ty::Int, &int_targets, call)
            }
            2 => {
                self.feature(Feature::GetFloat);
                let v = self.random_input_float();
                let hex = self.c.chance(0.4);
                self.input.float(v, hex, self.c.chance(0.3));
                self.store_input(Ty::Float, &float_targets, build::call("getfloat", vec![]))
            }
            k => {
                let ty = if k == 3 { Ty::Int } else { Ty::Float };
                let views = self.array_views(ty, &[], 1, true);
                let views: Vec<(VarId, usize)> = views
                    .into_iter()
                    .filter(|&(id, _)| {
                        let v = &self.env.vars[id];
                        v.locks == 0 && !v.read_only
                    })
                    .collect();
                if views.is_empty() {
                    return self.assign_stmt(true);
                }
                let (id, fixed) = views[self.pick_index(views.len())];
                let (name, dims) = (
                    self.env.vars[id].name.clone(),
                    self.env.vars[id].dims.clone(),
                );
                let stable = ECtx {
                    impure_ok: false,
                    stable: true,
                    depth: 1,
                };
                let idx: Vec<_> = dims[..fixed]
                    .iter()
                    .map(|&d| self.index(d, stable).e)
                    .collect();
                let len = dims[fixed] as i64;
                let n = self.c.range(0, len.min(12));
                self.input.int(n as i32, false);
                for _ in 0..n {
                    if ty == Ty::Int {
                        let v = self.random_input_int();
                        self.input.int(v, false);
                    } else {
                        let v = self.random_input_float();
                        let hex = self.c.chance(0.3);
                        self.input.float(v, hex, false);
                    }
                }
                self.feature(if ty == Ty::Int {
                    Feature::GetArray
                } else {
                    Feature::GetFArray
                });
                self.charge(n as u64 * 3);
                let f = if ty == Ty::Int {
                    "getarray"
                } else {
                    "getfarray"
                };
                let call = build::call(f, vec![build::elem(&name, idx)]);
                self.store_input(Ty::Int, &int_targets, call)
            }
        }
    }

    /// `target = call;`, `T x = call;` or just `call;`.
    fn store_input(
        &mut self,
        ty: Ty,
        targets: &[VarId],
        call: sysyc::frontend::ast::Expr,
    ) -> Vec<BlockItem> {
        match self
            .c
            .weighted(&[if targets.is_empty() { 0 } else { 4 }, 3, 1])
        {
            0 => {
                let id = targets[self.pick_index(targets.len())];
                let name = self.env.vars[id].name.clone();
                vec![build::stmt(build::assign_var(&name, call))]
            }
            1 => {
                // A fresh name: a shadowing one could be the array argument of the call.
                let name = self.local_name("l");
                self.env
                    .declare(super::env::scalar(name.clone(), ty, Storage::Local));
                vec![BlockItem::Decl(build::decl(
                    false,
                    ty.btype(),
                    &name,
                    vec![],
                    Some(sysyc::frontend::ast::InitVal::Expr(call)),
                ))]
            }
            _ => vec![build::stmt(build::expr_stmt(call))],
        }
    }

    /// An input `int`: small, medium, anywhere, or a boundary value (`INT_MIN`, `INT_MAX`,
    /// ±2^k, ±(2^k ± 1)).
    pub(super) fn random_input_int(&mut self) -> i32 {
        match self.c.weighted(&[3, 6, 2, 2]) {
            0 => self.c.range(0, 10) as i32,
            1 => self.c.range(-1000, 1000) as i32,
            2 => self.c.range(i32::MIN as i64, i32::MAX as i64) as i32,
            _ => {
                let k = self.c.range(0, 31) as u32;
                let p = (1i64 << k) + self.c.range(-1, 1);
                let v = if self.c.chance(0.5) { p } else { -p };
                v.clamp(i32::MIN as i64, i32::MAX as i64) as i32
            }
        }
    }

    pub(super) fn random_input_float(&mut self) -> f32 {
        match self.c.below(3) {
            0 => self.c.range(-80, 80) as f32 / 8.0,
            1 => self.c.range(-99_999, 99_999) as f32 / 100.0,
            _ => self.c.range(-1_000_000, 1_000_000) as f32 / 7.0 / 16.0,
        }
    }

    pub(super) fn mix_of(&mut self, id: VarId) -> Stmt {
        let (h, e) = {
            let v = &self.env.vars[id];
            (
                if v.ty == Ty::Float {
                    Helper::MixF
                } else {
                    Helper::Mix
                },
                self.env.read(id),
            )
        };
        self.use_helper(h);
        self.charge(h.cost() + 1);
        build::expr_stmt(build::call(h.name(), vec![e]))
    }

    /// A name for a new local in the current scope: fresh, or (shadowing) one visible from an
    /// outer scope that nothing relies on.
    pub(super) fn new_local_name(&mut self) -> String {
        if self.knob(self.cfg.knobs.shadowing) {
            let candidates: Vec<String> = self
                .env
                .visible()
                .into_iter()
                .filter(|&id| {
                    let v = &self.env.vars[id];
                    v.locks == 0 && !self.env.in_current_scope(&v.name)
                })
                .map(|id| self.env.vars[id].name.clone())
                .collect();
            if !candidates.is_empty() {
                self.feature(Feature::Shadowing);
                return candidates[self.pick_index(candidates.len())].clone();
            }
        }
        self.local_name("l")
    }

    /// Work one loop iteration is planned to cost: room for a few statements, so that a
    /// loop's body is not cut short by the budget right away.
    pub(super) fn loop_min_cost(&self) -> u64 {
        4 * STMT_COST
    }
}

/// Whether an expression contains a call.
pub(super) fn has_call(e: &sysyc::frontend::ast::Expr) -> bool {
    use sysyc::frontend::ast::ExprKind;
    match &e.kind {
        ExprKind::Call { .. } => true,
        ExprKind::LVal(lv) => lv.indices.iter().any(has_call),
        ExprKind::Unary(_, a) => has_call(a),
        ExprKind::Binary(_, a, b) => has_call(a) || has_call(b),
        _ => false,
    }
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
