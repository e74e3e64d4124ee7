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

use super::build;
use super::env::{FLOAT_VAR_BOUND, Storage, Ty, VarId};
use super::features::Feature;
use super::state::Gen;
use super::state::{ECtx, LoopCtx};
use sysyc::frontend::ast::{BinaryOp, BlockItem, Expr, InitVal, Stmt};

/// What a loop body holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BodyKind {
    /// Any statements.
    Plain,
    /// `main`'s driver loop: a longer body ending with a call of every function.
    Driver,
    /// Straight-line code only (assignments, calls, declarations), with loop-carried
    /// recurrences: a single-block loop once rotated, what `unroll` and `iv-reduce` take.
    Straight,
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

impl Gen<'_> {
    /// How many iterations the remaining budget allows at the current multiplier.
    fn affordable_trips(&self) -> u64 {
        let per_iteration = self.fcx.mult.saturating_mul(self.loop_min_cost()).max(1);
        self.remaining() / per_iteration
    }

    /// A limit with trips up to `tmax`; `runtime` favours limits unknown at compile time.
    fn choose_limit(&mut self, tmax: i64, runtime: bool) -> Limit {
        let ranged: Vec<VarId> = self
            .env
            .visible()
            .into_iter()
            .filter(|&id| {
                let v = &self.env.vars[id];
                v.is_scalar()
                    && v.ty == Ty::Int
                    && v.readable()
                    && v.range
                        .is_some_and(|(lo, hi)| hi <= tmax && hi >= 1 && lo >= 0)
                    && (v.locks > 0 || v.is_const || v.read_only)
            })
            .collect();
        let dims: Vec<u32> = self
            .env
            .visible()
            .into_iter()
            .flat_map(|id| self.env.vars[id].dims.clone())
            .filter(|&d| d >= 2 && d as i64 <= tmax)
            .collect();
        let (literal, dim) = if runtime { (1, 1) } else { (5, 4) };
        match self.c.weighted(&[
            literal,
            if ranged.is_empty() { 0 } else { 4 },
            if dims.is_empty() { 0 } else { dim },
            if runtime { 5 } else { 3 },
        ]) {
            1 => {
                let id = ranged[self.pick_index(ranged.len())];
                let (lo, hi) = self.env.vars[id].range.unwrap_or((0, 0));
                self.feature(Feature::RuntimeTripLoop);
                Limit {
                    expr: self.env.read(id),
                    lo,
                    hi,
                    setup: Vec::new(),
                    var: Some(id),
                }
            }
            2 => {
                let d = dims[self.pick_index(dims.len())] as i64;
                self.feature(Feature::ConstTripLoop);
                Limit {
                    expr: build::int(d as i32),
                    lo: d,
                    hi: d,
                    setup: Vec::new(),
                    var: None,
                }
            }
            3 => {
                // A fresh local with a bounded runtime value.
                self.feature(Feature::RuntimeTripLoop);
                let ctx = ECtx {
                    impure_ok: !self.fcx.pure,
                    stable: false,
                    depth: 2,
                };
                let g = self.trip_arg(tmax, ctx);
                let name = self.local_name("n");
                let id =
                    self.env
                        .declare(super::env::scalar(name.clone(), Ty::Int, Storage::Local));
                self.env.vars[id].range = g.range.or(Some((0, tmax)));
                let (lo, hi) = self.env.vars[id].range.unwrap_or((0, tmax));
                let decl = build::decl(
                    false,
                    sysyc::frontend::ast::BType::Int,
                    &name,
                    vec![],
                    Some(InitVal::Expr(g.e)),
                );
                self.env.lock(id);
                Limit {
                    expr: build::var(&name),
                    lo,
                    hi,
                    setup: vec![BlockItem::Decl(decl)],
                    var: None,
                }
            }
            _ => {
                let t = self.c.range(1, tmax);
                self.feature(Feature::ConstTripLoop);
                Limit {
                    expr: self.int_lit_expr(t as i32),
                    lo: t,
                    hi: t,
                    setup: Vec::new(),
                    var: None,
                }
            }
        }
    }

    /// The counter: a fresh local, or an existing local scalar re-used. Returns its id and
    /// the statement initialising it to `start`.
    fn counter(&mut self, start: Expr) -> (VarId, BlockItem) {
        let reusable: Vec<VarId> = self
            .assignable()
            .into_iter()
            .filter(|&id| {
                let v = &self.env.vars[id];
                v.is_scalar()
                    && v.ty == Ty::Int
                    && v.storage != Storage::Global
                    && v.range.is_none()
            })
            .collect();
        if !reusable.is_empty() && self.c.chance(0.3) {
            let id = reusable[self.pick_index(reusable.len())];
            let name = self.env.vars[id].name.clone();
            return (id, build::stmt(build::assign_var(&name, start)));
        }
        let name = self.local_name("i");
        let id = self
            .env
            .declare(super::env::scalar(name.clone(), Ty::Int, Storage::Local));
        let decl = build::decl(
            false,
            sysyc::frontend::ast::BType::Int,
            &name,
            vec![],
            Some(InitVal::Expr(start)),
        );
        (id, BlockItem::Decl(decl))
    }

    /// Locks some outer local scalars for the body so that loop-invariant code appears.
    fn freeze_some(&mut self, counter: VarId) -> Vec<VarId> {
        if !self.knob(self.cfg.knobs.invariants) {
            return Vec::new();
        }
        let mut frozen = Vec::new();
        for id in self.assignable() {
            let v = &self.env.vars[id];
            if id != counter && v.is_scalar() && v.storage != Storage::Global && self.c.chance(0.5)
            {
                frozen.push(id);
            }
        }
        if !frozen.is_empty() {
            self.feature(Feature::Invariant);
        }
        for &id in &frozen {
            self.env.lock(id);
        }
        frozen
    }

    /// Generates a loop body with the counter locked to `range`, multiplier `trips`.
    fn loop_body(
        &mut self,
        counter: VarId,
        range: (i64, i64),
        trips: u64,
        latch: Vec<Stmt>,
    ) -> Vec<BlockItem> {
        self.loop_body_of(counter, range, trips, latch, BodyKind::Plain, false)
    }

    /// [`Gen::loop_body`] of the given kind, counting down or up.
    fn loop_body_of(
        &mut self,
        counter: VarId,
        range: (i64, i64),
        trips: u64,
        latch: Vec<Stmt>,
        kind: BodyKind,
        down: bool,
    ) -> Vec<BlockItem> {
        self.env.lock(counter);
        self.env.vars[counter].range = Some(range);
        let frozen = self.freeze_some(counter);
        self.fcx.loops.push(LoopCtx {
            latch: latch.clone(),
            counter: Some(counter),
            down,
        });
        let saved = self.fcx.mult;
        self.fcx.mult = saved.saturating_mul(trips.max(1));
        self.charge(latch.len() as u64 * 3);
        // An idiom's statements open the body, in a scope of their own around it.
        let idiom = self.fcx.pending_idiom.take();
        let had_idiom = idiom.is_some();
        if had_idiom {
            self.push_scope();
        }
        let opening = match idiom {
            Some(idiom) => self.idiom_statements(idiom, counter),
            None => Vec::new(),
        };
        // The body's scope is the idiom's when there is one: in the source they are one
        // block, so a declaration in the body must not take a name the idiom declared.
        if !had_idiom {
            self.push_scope();
        }
        let mut items = match kind {
            BodyKind::Driver => {
                self.fcx.depth += 1;
                let mut items = self.stmts_in_scope((2 * self.cfg.max_block_stmts).max(4));
                items.extend(self.calls_of_every_function());
                self.fcx.depth -= 1;
                items
            }
            BodyKind::Straight => {
                let saved = std::mem::replace(&mut self.fcx.straight, true);
                self.fcx.depth += 1;
                let mut items = self.stmts_in_scope(self.cfg.max_block_stmts.clamp(2, 5));
                items.extend(self.recurrences(counter));
                self.fcx.depth -= 1;
                self.fcx.straight = saved;
                items
            }
            BodyKind::Plain => {
                let mut items = self.body_in_scope();
                // Now and then a recurrence or stencil in a general loop body too, where
                // control flow around it keeps the loop multi-block.
                if self.c.chance(0.4) {
                    items.extend(self.recurrences(counter));
                }
                items
            }
        };
        items.splice(0..0, opening);
        if kind == BodyKind::Plain && !down
            && let Some(skip) = self.triangle_skip(counter, &latch)
        {
            items.insert(0, skip);
        }
        self.pop_scope();
        self.fcx.mult = saved;
        self.fcx.loops.pop();
        for id in frozen {
            self.env.unlock(id);
        }
        self.env.unlock(counter);
        self.env.vars[counter].range = None;
        items.extend(latch.into_iter().map(build::stmt));
        items
    }

    /// Now and then, in a loop nested in a counted one, a guard that skips the rest of the
    /// row once the inner counter `i` passes the outer one `o`: `if (i > o) { latch;
    /// continue; }` at the top of the body (triangular iteration spaces, `transpose`
    /// swapping one half). Once true it stays true (`i` grows, `o` is locked), the shape
    /// `loop-idle-exit` takes.
    fn triangle_skip(&mut self, counter: VarId, latch: &[Stmt]) -> Option<BlockItem> {
        let depth = self.fcx.loops.len();
        let outer = self.fcx.loops.get(depth.checked_sub(2)?)?.counter?;
        let v = &self.env.vars[outer];
        let visible = self.env.lookup(&v.name) == Some(outer) && v.readable() && v.ty == Ty::Int;
        let forced = self.fcx.forced_triangle == Some(depth);
        if !visible || !(forced || self.knob(self.cfg.knobs.continues)) {
            return None;
        }
        self.feature(Feature::TriangleSkip);
        self.feature(Feature::Continue);
        if forced {
            self.feature(Feature::TriangleNest);
        }
        self.charge(3 + latch.len() as u64 * 3);
        let (i, o) = (self.env.read(counter), self.env.read(outer));
        let test = match self.c.below(3) {
            0 => build::bin(BinaryOp::Gt, i, o),
            1 => build::bin(BinaryOp::Lt, o, i),
            _ => build::bin(BinaryOp::Ge, i, o),
        };
        let mut body: Vec<BlockItem> = self.skip_count(counter).into_iter().collect();
        body.extend(latch.iter().cloned().map(build::stmt));
        body.push(build::stmt(build::cont()));
        Some(build::stmt(build::if_stmt(test, build::block_stmt(body), None)))
    }

    /// Sometimes, in a triangle skip, a count of the skipped iterations, `s = s + k;`, in a
    /// local declared before the loop: the skipped iterations then do more than count the
    /// inner counter up, and leaving the loop at the first of them (`loop-idle-exit`) would
    /// lose their updates of `s`.
    fn skip_count(&mut self, counter: VarId) -> Option<BlockItem> {
        if !self.c.chance(0.35) {
            return None;
        }
        // Ids are handed out in declaration order: below the counter's, declared before it.
        let candidates: Vec<VarId> = self
            .assignable()
            .into_iter()
            .filter(|&id| {
                let v = &self.env.vars[id];
                id < counter
                    && v.is_scalar()
                    && v.ty == Ty::Int
                    && v.storage != Storage::Global
                    && v.range.is_none()
                    && !v.dead
            })
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let id = candidates[self.pick_index(candidates.len())];
        let name = self.env.vars[id].name.clone();
        let k = self.c.range(1, 9) as i32;
        self.charge(3);
        self.feature(Feature::SkipCount);
        Some(build::stmt(build::assign_var(&name, build::bin(BinaryOp::Add, build::var(&name), build::int(k)))))
    }

    /// A condition generated at the multiplier of a loop test (`trips + 1` evaluations).
    fn loop_cond(&mut self, trips: u64) -> Expr {
        let saved = self.fcx.mult;
        self.fcx.mult = saved.saturating_mul(trips + 1);
        let ctx = self.stmt_ctx();
        let c = self.cond(ctx, false);
        self.fcx.mult = saved;
        c
    }

    fn charge_loop_test(&mut self, trips: u64) {
        let saved = self.fcx.mult;
        self.fcx.mult = saved.saturating_mul(trips + 1);
        self.charge(3);
        self.fcx.mult = saved;
    }

    pub(super) fn counted_loop(&mut self) -> Vec<BlockItem> {
        self.counted_loop_over(None, BodyKind::Plain)
    }

    /// A counted loop with a straight-line body and (mostly) a run-time trip count: top- or
    /// bottom-tested, step 1 or 2, no extra condition — the single-block loops `unroll`
    /// takes once rotated, with loop-carried values through locals and arrays.
    pub(super) fn straight_loop(&mut self) -> Vec<BlockItem> {
        self.feature(Feature::StraightLoop);
        self.counted_loop_over(None, BodyKind::Straight)
    }

    /// A loop walking one dimension of a visible array, with the array favoured in the body
    /// (array walks: reductions, element updates, neighbours via affine indices).
    pub(super) fn array_walk(&mut self) -> Vec<BlockItem> {
        let arrays: Vec<VarId> = self
            .env
            .visible()
            .into_iter()
            .filter(|&id| {
                let v = &self.env.vars[id];
                v.is_array() && v.init && v.dims.iter().any(|&d| d >= 2)
            })
            .collect();
        if arrays.is_empty() {
            return self.counted_loop();
        }
        let id = arrays[self.pick_index(arrays.len())];
        let dims: Vec<u32> = self.env.vars[id]
            .dims
            .iter()
            .copied()
            .filter(|&d| d >= 2)
            .collect();
        let d = dims[self.pick_index(dims.len())];
        self.feature(Feature::ArrayWalk);
        self.fcx.affinity.push(id);
        let out = self.counted_loop_over(Some(d as i64), BodyKind::Plain);
        self.fcx.affinity.pop();
        out
    }

    fn counted_loop_over(&mut self, walk: Option<i64>, kind: BodyKind) -> Vec<BlockItem> {
        let straight = kind == BodyKind::Straight;
        let tmax = (self.cfg.max_trip_count as u64).min(self.affordable_trips()) as i64;
        let tmax = match walk {
            Some(d) if d <= self.affordable_trips() as i64 => d,
            _ => tmax,
        };
        if tmax < 1 {
            return self.assign_stmt(true);
        }
        self.feature(Feature::While);
        if !self.fcx.loops.is_empty() {
            self.feature(Feature::NestedLoop);
        }
        let limit = match walk {
            Some(d) if d == tmax => {
                self.feature(Feature::ConstTripLoop);
                Limit {
                    expr: self.int_lit_expr(d as i32),
                    lo: d,
                    hi: d,
                    setup: Vec::new(),
                    var: None,
                }
            }
            _ => self.choose_limit(tmax, straight),
        };
        let mut out = limit.setup.clone();
        let start: i64 = if limit.hi >= 2 && self.c.chance(0.2) {
            self.c.range(1, (limit.hi - 1).min(3))
        } else {
            0
        };
        let bottom_ok = start < limit.lo;
        // The triangular skip needs a counter that counts up.
        let up_only = self.fcx.forced_triangle == Some(self.fcx.loops.len() + 1);
        let shape = if straight {
            self.c.weighted(&[3, 0, 0, if bottom_ok { 1 } else { 0 }])
        } else if up_only {
            self.c.weighted(&[8, 0, 2, if bottom_ok { 2 } else { 0 }])
        } else {
            self.c.weighted(&[8, 3, 2, if bottom_ok { 2 } else { 0 }])
        };
        let step: i64 = if shape != 1 && self.c.chance(0.2) {
            self.c.range(2, 3)
        } else {
            1
        };
        let trips = ((limit.hi - start).max(0) as u64)
            .div_ceil(step as u64)
            .max(1);
        let range = (start, (limit.hi - 1).max(start));
        let (counter, init) = self.counter(build::int(start as i32));
        let name = self.env.vars[counter].name.clone();
        if let Some(id) = limit.var {
            self.env.lock(id);
        }
        let incr = build::assign_var(
            &name,
            build::bin(BinaryOp::Add, build::var(&name), build::int(step as i32)),
        );
        let exit_test = |l: &Expr| {
            if step == 1 && limit.lo == limit.hi && limit.lo >= start {
                build::bin(BinaryOp::Eq, build::var(&name), l.clone())
            } else {
                build::bin(BinaryOp::Ge, build::var(&name), l.clone())
            }
        };
        self.charge_loop_test(trips);
        let stmt = match shape {
            1 => {
                // i = L; while (i > s) { i = i - 1; B }
                self.feature(Feature::DownLoop);
                out.push(match init {
                    BlockItem::Decl(mut d) => {
                        if let Some(def) = d.defs.first_mut() {
                            def.init = Some(InitVal::Expr(limit.expr.clone()));
                        }
                        BlockItem::Decl(d)
                    }
                    BlockItem::Stmt(_) => build::stmt(build::assign_var(&name, limit.expr.clone())),
                });
                let decr = build::assign_var(
                    &name,
                    build::bin(BinaryOp::Sub, build::var(&name), build::int(1)),
                );
                let test = if self.c.chance(0.5) {
                    build::bin(BinaryOp::Gt, build::var(&name), build::int(start as i32))
                } else {
                    build::bin(BinaryOp::Lt, build::int(start as i32), build::var(&name))
                };
                let mut body = vec![build::stmt(decr)];
                body.extend(self.loop_body_of(
                    counter,
                    range,
                    trips,
                    Vec::new(),
                    BodyKind::Plain,
                    true,
                ));
                build::while_stmt(test, build::block_stmt(body))
            }
            2 => {
                // while (1) { if (i >= L) break; B; i = i + k; }
                self.feature(Feature::InfiniteLoopBreak);
                out.push(init);
                let check = build::if_stmt(exit_test(&limit.expr), build::brk(), None);
                let mut body = vec![build::stmt(check)];
                body.extend(self.loop_body(counter, range, trips, vec![incr]));
                build::while_stmt(build::int(1), build::block_stmt(body))
            }
            3 => {
                // while (1) { B; i = i + k; if (i >= L) break; }
                self.feature(Feature::BottomTestLoop);
                out.push(init);
                let check = build::if_stmt(
                    build::bin(BinaryOp::Ge, build::var(&name), limit.expr.clone()),
                    build::brk(),
                    None,
                );
                let body = self.loop_body_of(counter, range, trips, vec![incr, check], kind, false);
                build::while_stmt(build::int(1), build::block_stmt(body))
            }
            _ => {
                // i = s; while (i < L [&& c]) { B; i = i + k; }
                out.push(init);
                let mut test =
                    if step == 1 && limit.lo == limit.hi && limit.lo >= start && self.c.chance(0.3)
                    {
                        build::bin(BinaryOp::Ne, build::var(&name), limit.expr.clone())
                    } else if self.c.chance(0.7) {
                        build::bin(BinaryOp::Lt, build::var(&name), limit.expr.clone())
                    } else {
                        build::bin(BinaryOp::Gt, limit.expr.clone(), build::var(&name))
                    };
                if !straight && self.knob(self.cfg.knobs.short_circuit / 2) {
                    let extra = self.loop_cond(trips);
                    self.feature(Feature::ShortCircuit);
                    test = conjoin(test, extra);
                    if step == 1 && limit.lo > start && self.c.chance(0.7) {
                        // `i < K || i < L && c` with `K <= L`: at least `K - s` iterations
                        // whatever `c` says (and still at most the trip bound).
                        let k = self.c.range(start + 1, limit.lo);
                        let first =
                            build::bin(BinaryOp::Lt, build::var(&name), build::int(k as i32));
                        test = build::bin(BinaryOp::Or, first, test);
                    }
                }
                let body = self.loop_body_of(counter, range, trips, vec![incr], kind, false);
                build::while_stmt(test, build::block_stmt(body))
            }
        };
        if let Some(id) = limit.var {
            self.env.unlock(id);
        }
        out.push(build::stmt(stmt));
        out
    }

    /// Loop-carried recurrences for a straight-line body with counter `i`: an array element
    /// computed from its neighbour written by the previous iteration (`a[i + 1] = a[i] * k +
    /// e`, or with `% d` indices; for a float array the stencil `a[i + 1] = (a[i] + a[i + 1])
    /// * 0.25 + e * 0.5`, whose neighbouring float addresses `gep-offsets` shares), and two
    /// locals feeding each other (`x = x * k + y; y = y - x;`).
    fn recurrences(&mut self, counter: VarId) -> Vec<BlockItem> {
        let mut out = Vec::new();
        let Some((lo, hi)) = self.env.vars[counter].range else {
            return out;
        };
        let counter_name = self.env.vars[counter].name.clone();
        let ctx = ECtx {
            impure_ok: false,
            stable: false,
            depth: 2,
        };
        let arrays: Vec<VarId> = self
            .assignable()
            .into_iter()
            .filter(|&id| {
                let v = &self.env.vars[id];
                v.is_array() && !v.dead && v.dims.last().is_some_and(|&d| d >= 2)
            })
            .collect();
        if !arrays.is_empty() && lo >= 0 && self.c.chance(0.7) {
            let floats: Vec<VarId> = arrays.iter().copied().filter(|&id| self.env.vars[id].ty == Ty::Float).collect();
            // Floats first: their neighbouring accesses are what `gep-offsets` shares.
            let pool = if !floats.is_empty() && self.c.chance(0.9) { &floats } else { &arrays };
            let id = pool[self.pick_index(pool.len())];
            let (name, dims) = (
                self.env.vars[id].name.clone(),
                self.env.vars[id].dims.clone(),
            );
            let d = *dims.last().unwrap_or(&1) as i64;
            let rows: Vec<Expr> = dims[..dims.len() - 1]
                .iter()
                .map(|&r| {
                    self.index(
                        r,
                        ECtx {
                            stable: true,
                            ..ctx
                        },
                    )
                    .e
                })
                .collect();
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
            let value = if self.env.vars[id].ty == Ty::Float {
                // Both terms at most half the bound of a float variable: the element stays
                // within it, however many times the loop runs.
                let e = self.float_expr(ctx);
                let e = self.fit(e, FLOAT_VAR_BOUND);
                self.charge(8);
                self.feature(Feature::FloatStencil);
                let sum = build::bin(BinaryOp::Add, build::elem(&name, with(prev)), build::elem(&name, with(cur.clone())));
                build::bin(
                    BinaryOp::Add,
                    build::bin(BinaryOp::Mul, sum, build::float(0.25)),
                    build::bin(BinaryOp::Mul, e.e, build::float(0.5)),
                )
            } else {
                let k = self.c.range(-5, 7) as i32;
                let e = self.int_expr(ctx);
                self.charge(6);
                build::bin(BinaryOp::Add, build::bin(BinaryOp::Mul, build::elem(&name, with(prev)), build::int(k)), e.e)
            };
            self.feature(Feature::LoopCarried);
            out.push(build::stmt(build::assign(
                build::lval(&name, with(cur)),
                value,
            )));
        }
        let scalars: Vec<VarId> = self
            .assignable()
            .into_iter()
            .filter(|&id| {
                let v = &self.env.vars[id];
                v.is_scalar() && v.ty == Ty::Int && v.storage != Storage::Global
            })
            .collect();
        if scalars.len() >= 2 && self.c.chance(0.6) {
            let a = scalars[self.pick_index(scalars.len())];
            let b = scalars[self.pick_index(scalars.len())];
            if a != b {
                let (x, y) = (self.env.vars[a].name.clone(), self.env.vars[b].name.clone());
                let k = self.c.range(2, 9) as i32;
                self.charge(8);
                self.feature(Feature::LoopCarried);
                out.push(build::stmt(build::assign_var(
                    &x,
                    build::bin(
                        BinaryOp::Add,
                        build::bin(BinaryOp::Mul, build::var(&x), build::int(k)),
                        build::var(&y),
                    ),
                )));
                out.push(build::stmt(build::assign_var(
                    &y,
                    build::bin(BinaryOp::Sub, build::var(&y), build::var(&x)),
                )));
            }
        }
        out
    }

    /// `main`'s driver loop, `int i = 0; while (i < n_iter) { B; i = i + 1; }`, with the trip
    /// count `n_iter` read from the input: the functions are called from `B`.
    pub(super) fn driver_loop(&mut self, limit: VarId, trips: u64) -> Vec<BlockItem> {
        self.feature(Feature::While);
        self.feature(Feature::RuntimeTripLoop);
        let name = self.local_name("i");
        let counter = self
            .env
            .declare(super::env::scalar(name.clone(), Ty::Int, Storage::Local));
        let init = BlockItem::Decl(build::decl(
            false,
            sysyc::frontend::ast::BType::Int,
            &name,
            vec![],
            Some(InitVal::Expr(build::int(0))),
        ));
        let limit_name = self.env.vars[limit].name.clone();
        let test = if self.c.chance(0.7) {
            build::bin(BinaryOp::Lt, build::var(&name), build::var(&limit_name))
        } else {
            build::bin(BinaryOp::Gt, build::var(&limit_name), build::var(&name))
        };
        let incr = build::assign_var(
            &name,
            build::bin(BinaryOp::Add, build::var(&name), build::int(1)),
        );
        self.charge_loop_test(trips);
        let range = (0, trips.saturating_sub(1) as i64);
        let body = self.loop_body_of(counter, range, trips, vec![incr], BodyKind::Driver, false);
        vec![
            init,
            build::stmt(build::while_stmt(test, build::block_stmt(body))),
        ]
    }

    /// `t = 0; while (c && t < T) { B; t = t + 1; }` — any condition, bounded by a guard.
    pub(super) fn guarded_loop(&mut self) -> Vec<BlockItem> {
        let tmax = (self.cfg.max_trip_count as u64).min(self.affordable_trips()) as i64;
        if tmax < 1 {
            return self.assign_stmt(true);
        }
        self.feature(Feature::While);
        self.feature(Feature::GuardedLoop);
        if !self.fcx.loops.is_empty() {
            self.feature(Feature::NestedLoop);
        }
        let t = self.c.range(1, tmax);
        let (guard, init) = self.counter(build::int(0));
        let name = self.env.vars[guard].name.clone();
        self.charge_loop_test(t as u64);
        let cond = self.loop_cond(t as u64);
        let bound = build::bin(BinaryOp::Lt, build::var(&name), self.int_lit_expr(t as i32));
        // Both orders of the guard: `c` runs at most `T + 1` times either way.
        let test = if self.c.chance(0.5) {
            conjoin(cond, bound)
        } else {
            conjoin(bound, cond)
        };
        // Often `t < K || c && t < T` (K <= T): the first K iterations run whatever `c` says.
        let test = if self.c.chance(0.85) {
            let k = self.c.range(1, t);
            let first = build::bin(BinaryOp::Lt, build::var(&name), build::int(k as i32));
            build::bin(BinaryOp::Or, first, test)
        } else {
            test
        };
        let incr = build::assign_var(
            &name,
            build::bin(BinaryOp::Add, build::var(&name), build::int(1)),
        );
        let body = self.loop_body(guard, (0, t - 1), t as u64, vec![incr]);
        vec![
            init,
            build::stmt(build::while_stmt(test, build::block_stmt(body))),
        ]
    }

    /// Nested loops visiting every element of array `id` in row-major order, with
    /// `per_elem(gen, element lvalue indices)` giving the statement for one element.
    /// Counters are fresh; the element indices are the counters themselves.
    pub(super) fn for_each_element(
        &mut self,
        id: VarId,
        per_elem: &mut dyn FnMut(&mut Self, Vec<Expr>) -> Stmt,
    ) -> Vec<BlockItem> {
        let dims = self.env.vars[id].dims.clone();
        let mut counters = Vec::new();
        let mut decls = Vec::new();
        for _ in &dims {
            let name = self.local_name("i");
            let cid = self
                .env
                .declare(super::env::scalar(name.clone(), Ty::Int, Storage::Local));
            decls.push(BlockItem::Decl(build::decl(
                false,
                sysyc::frontend::ast::BType::Int,
                &name,
                vec![],
                Some(InitVal::Expr(build::int(0))),
            )));
            counters.push((cid, name));
        }
        let saved = self.fcx.mult;
        for (k, &d) in dims.iter().enumerate() {
            self.env.lock(counters[k].0);
            self.env.vars[counters[k].0].range = Some((0, d as i64 - 1));
            self.fcx.mult = self.fcx.mult.saturating_mul(d as u64);
            self.charge(4);
        }
        let indices: Vec<Expr> = counters.iter().map(|(_, n)| build::var(n)).collect();
        let mut inner: Stmt = per_elem(self, indices);
        self.fcx.mult = saved;
        for (cid, _) in &counters {
            self.env.unlock(*cid);
            self.env.vars[*cid].range = None;
        }
        // Build from the innermost loop outwards.
        for k in (0..dims.len()).rev() {
            let name = &counters[k].1;
            let incr = build::assign_var(
                name,
                build::bin(BinaryOp::Add, build::var(name), build::int(1)),
            );
            let mut body = Vec::new();
            if k + 1 < dims.len() {
                body.push(build::stmt(build::assign_var(
                    &counters[k + 1].1,
                    build::int(0),
                )));
            }
            body.push(build::stmt(inner));
            body.push(build::stmt(incr));
            let test = build::bin(BinaryOp::Lt, build::var(name), build::int(dims[k] as i32));
            inner = build::while_stmt(test, build::block_stmt(body));
        }
        decls.push(build::stmt(inner));
        decls
    }
}

/// `first && chain` as a left-deep `&&` chain (no parentheses), where `chain` is an `&&`
/// chain or a single atom.
pub(super) fn conjoin(first: Expr, chain: Expr) -> Expr {
    use sysyc::frontend::ast::ExprKind;
    match chain.kind {
        ExprKind::Binary(BinaryOp::And, a, b) => build::bin(BinaryOp::And, conjoin(first, *a), *b),
        kind => build::bin(
            BinaryOp::And,
            first,
            Expr {
                kind,
                span: chain.span,
            },
        ),
    }
}
