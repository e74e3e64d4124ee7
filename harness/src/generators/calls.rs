//! Calls of user functions: which are callable where (purity, budget, satisfiable array
//! parameters), their arguments (arrays and rows with a guaranteed length, length and depth
//! arguments in range), and self-calls of recursive functions (`d - 1`, `d - 2`).
//!
//! Arguments are siblings under the evaluation-order rule of `expr.rs`; array arguments
//! read nothing (an address) and their row indices are generated stable.

use super::build;
use super::env::{FLOAT_VAR_BOUND, ParamKind, Storage, Ty, VarId};
use super::features::Feature;
use super::state::{ECtx, GExpr, Gen};
use sysyc::frontend::ast::{BinaryOp, Expr};

/// Whether `lo..=hi` stays within `i32` (no wrap-around).
fn range_fits(lo: i64, hi: i64) -> bool {
    lo >= i32::MIN as i64 && hi <= i32::MAX as i64
}

impl Gen<'_> {
    // ---------------------------------------------------------------- calls

    /// User functions returning `ret` (`None`: any, for call statements) callable here.
    pub(super) fn callable(&mut self, ret: Option<Ty>, ctx: ECtx) -> Vec<usize> {
        // A straight-line loop body calls nothing (an inlined callee would bring branches).
        if ctx.stable || self.fcx.straight {
            return Vec::new();
        }
        let mut out = Vec::new();
        for i in 0..self.env.funcs.len() {
            let f = &self.env.funcs[i];
            if ret.is_some() && f.ret != ret {
                continue;
            }
            if !f.pure && (self.fcx.pure || !ctx.impure_ok) {
                continue;
            }
            if !self.affordable(f.cost.saturating_add(f.params.len() as u64 + 1)) {
                continue;
            }
            let satisfiable = f.params.iter().all(|p| match &p.kind {
                ParamKind::Array { inner, min_len } => {
                    !self.array_views(p.ty, inner, *min_len, !f.pure).is_empty()
                }
                _ => true,
            });
            if satisfiable {
                out.push(i);
            }
        }
        out
    }

    /// Arrays (and rows of arrays) that can be passed for a parameter `ty p[][inner..]`
    /// whose callee relies on `min_len` rows: `(variable, number of fixed leading indices)`.
    pub(super) fn array_views(
        &self,
        ty: Ty,
        inner: &[u32],
        min_len: u32,
        writes: bool,
    ) -> Vec<(VarId, usize)> {
        let mut out = Vec::new();
        for id in self.env.visible() {
            let v = &self.env.vars[id];
            if !v.is_array() || v.ty != ty || !v.readable() || v.is_const || (writes && v.read_only)
            {
                continue;
            }
            if self.fcx.pure && writes {
                continue;
            }
            for m in 0..v.dims.len() {
                if v.dims[m + 1..] == *inner && v.dims[m] >= min_len {
                    out.push((id, m));
                }
            }
        }
        out
    }

    /// A call of user function `fi` with fresh arguments.
    pub(super) fn call_user(&mut self, fi: usize, ctx: ECtx) -> GExpr {
        self.call_user_with(fi, ctx, false)
    }

    /// [`Self::call_user`], with this function's own local arrays preferred as array
    /// arguments when `favour_locals`.
    pub(super) fn call_user_with(&mut self, fi: usize, ctx: ECtx, favour_locals: bool) -> GExpr {
        let f = self.env.funcs[fi].clone();
        self.feature(Feature::Call);
        let mut passed: Vec<VarId> = Vec::new();
        let params = f.params.clone();
        let args = self.siblings(params.len(), ctx.deeper(), &mut |g, c, i| {
            let p = &params[i];
            match &p.kind {
                ParamKind::Scalar => g.arg_value(p.ty, c),
                ParamKind::Array { inner, min_len } => {
                    let (e, id) =
                        g.array_arg(p.ty, inner, *min_len, !f.pure, &f.globals_used, &passed, favour_locals);
                    if !f.pure {
                        g.note_global_write(id);
                    }
                    passed.push(id);
                    GExpr::int(e, None, false, 1)
                }
                ParamKind::Length { array } => {
                    let max = match &params[*array].kind {
                        ParamKind::Array { min_len, .. } => *min_len as i64,
                        _ => 0,
                    };
                    g.bounded_int(max, c)
                }
                ParamKind::Depth => g.depth_arg(f.max_depth.unwrap_or(0) as i64, c),
                ParamKind::Count { max } => g.trip_arg(*max as i64, c),
            }
        });
        self.note_call(fi);
        self.charge(f.cost + 1);
        let impure = !f.pure || args.iter().any(|a| a.impure);
        if impure && !f.pure {
            self.feature(Feature::ImpureCallInExpr);
        }
        let cost = args.iter().map(|a| a.cost).sum::<u64>() + f.cost + 1;
        let e = build::call(&f.name, args.into_iter().map(|a| a.e).collect());
        match f.ret {
            Some(Ty::Float) => GExpr::float(e, f.ret_bound, impure, cost),
            _ => GExpr::int(e, None, impure, cost),
        }
    }

    /// An array argument for `ty p[][inner..]`: a whole array or a row `a[i]..`; with
    /// `favour_locals`, preferably one of this function's own local arrays.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn array_arg(
        &mut self,
        ty: Ty,
        inner: &[u32],
        min_len: u32,
        writes: bool,
        callee_globals: &[VarId],
        already: &[VarId],
        favour_locals: bool,
    ) -> (Expr, VarId) {
        let views = self.array_views(ty, inner, min_len, writes);
        let aliasing = self.cfg.knobs.aliasing;
        let weights: Vec<u32> = views
            .iter()
            .map(|(id, fixed)| {
                let mut base = if *fixed > 0 { 4 } else { 2 };
                if favour_locals && self.env.vars[*id].storage == Storage::Local {
                    base *= 4;
                }
                if callee_globals.contains(id) || already.contains(id) {
                    base + aliasing as u32 / 5
                } else {
                    base
                }
            })
            .collect();
        let (id, fixed) = views[self.c.weighted(&weights)];
        if callee_globals.contains(&id) || already.contains(&id) {
            self.feature(Feature::Aliasing);
        }
        let (name, dims, global) = {
            let v = &self.env.vars[id];
            (v.name.clone(), v.dims.clone(), v.storage == Storage::Global)
        };
        if global && !self.fcx.globals_used.contains(&id) {
            self.fcx.globals_used.push(id);
        }
        let stable = ECtx {
            impure_ok: false,
            stable: true,
            depth: 1,
        };
        let mut idx = Vec::new();
        for &d in &dims[..fixed] {
            idx.push(self.index(d, stable).e);
        }
        if fixed > 0 {
            self.feature(Feature::PartialRowArg);
        }
        (build::elem(&name, idx), id)
    }

    /// A scalar argument: any value, but one that varies from call to call where a counter
    /// can make it (`e + i`), so that the callee's branches go both ways over its calls.
    pub(super) fn arg_value(&mut self, ty: Ty, ctx: ECtx) -> GExpr {
        let g = self.value_for(ty, ctx);
        if self.is_varying(&g.e) && self.c.chance(0.6) {
            return g;
        }
        let counters = self.counters_here(ctx);
        if counters.is_empty() {
            return g;
        }
        let id = counters[self.pick_index(counters.len())];
        let i = self.read_scalar(id);
        self.charge(1);
        let (a, b) = if self.c.chance(0.5) { (g, i) } else { (i, g) };
        let op = if self.c.chance(0.7) {
            BinaryOp::Add
        } else {
            BinaryOp::Sub
        };
        let sum = GExpr {
            e: build::bin(op, a.e.clone(), b.e.clone()),
            ty: if a.ty == Ty::Float || b.ty == Ty::Float {
                Ty::Float
            } else {
                Ty::Int
            },
            bound: a.float_bound() + b.float_bound(),
            range: super::expr::range_binary(op, a.range, b.range),
            impure: a.impure || b.impure,
            cost: a.cost + b.cost + 1,
        };
        match (ty, sum.ty) {
            (Ty::Float, _) => self.fit(sum, FLOAT_VAR_BOUND),
            (Ty::Int, Ty::Float) => self.fit(sum, super::env::FLOAT_TO_INT_LIMIT),
            _ => sum,
        }
    }

    /// A trip-count argument in `0..=max`, varying where it can: inside a loop mostly a
    /// function of a counter (`i`, `(i + k) % (max + 1)`), so that successive calls run the
    /// callee's loops 0, 1, 2, ... times — remainders of every unrolling factor included;
    /// otherwise a value near a small unrolling factor or anywhere in range.
    pub(super) fn trip_arg(&mut self, max: i64, ctx: ECtx) -> GExpr {
        let counters: Vec<VarId> = self
            .fcx
            .loops
            .iter()
            .filter_map(|l| l.counter)
            .filter(|&id| {
                let v = &self.env.vars[id];
                v.readable()
                    && v.range.is_some_and(|(lo, _)| lo >= 0)
                    && self.env.lookup(&v.name) == Some(id)
            })
            .collect();
        if !counters.is_empty() && self.c.chance(0.8) {
            let id = counters[self.pick_index(counters.len())];
            let (lo, hi) = self.env.vars[id].range.unwrap_or((0, 0));
            if hi <= max && self.c.chance(0.3) {
                return self.read_scalar(id);
            }
            // The sum never wraps (counters are small), so the remainder is never negative.
            let k = self.c.range(0, max);
            let k = if range_fits(lo + k, hi + k) { k } else { 0 };
            let base = self.env.read(id);
            let e = if k == 0 {
                base
            } else {
                build::bin(BinaryOp::Add, base, build::int(k as i32))
            };
            self.charge(3);
            return GExpr::int(
                build::bin(BinaryOp::Mod, e, build::int(max as i32 + 1)),
                Some((0, max)),
                false,
                3,
            );
        }
        if self.c.chance(0.5) {
            let near = [0i64, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17];
            let v = near[self.pick_index(near.len())].min(max);
            self.charge(1);
            return GExpr::int(build::int(v as i32), Some((v, v)), false, 1);
        }
        self.bounded_int(max, ctx)
    }

    /// A recursion-depth argument: at most `max` (anything ≤ 0 is the base case). Mostly
    /// one that varies with a counter, or a literal deep enough for the body to run.
    pub(super) fn depth_arg(&mut self, max: i64, ctx: ECtx) -> GExpr {
        if self.c.chance(0.6) {
            return self.trip_arg(max, ctx);
        }
        if self.c.chance(0.6) {
            let v = self.c.range((max + 1) / 2, max) as i32;
            self.charge(1);
            return GExpr::int(build::int(v), Some((v as i64, v as i64)), false, 1);
        }
        let g = self.int_expr(ctx.deeper());
        self.charge(2);
        let e = build::bin(BinaryOp::Mod, g.e, build::int(max as i32 + 1));
        GExpr::int(e, Some((-max, max)), g.impure, g.cost + 2)
    }

    pub(super) fn self_call_possible(&self, ty: Ty, ctx: ECtx) -> bool {
        self.self_call_possible_for(Some(ty), ctx)
    }

    /// [`Self::self_call_possible`] for a call whose result has type `ret` (`None`: a void
    /// function's call as a statement).
    pub(super) fn self_call_possible_for(&self, ret: Option<Ty>, ctx: ECtx) -> bool {
        let Some(r) = &self.fcx.rec else { return false };
        // Parameters are passed on by name: a local declared since may hide one.
        let params_visible = r.params.iter().all(|p| {
            self.env
                .lookup(&p.name)
                .is_some_and(|id| self.env.vars[id].storage == Storage::Param)
        });
        r.ret == ret
            && r.sites < r.max_sites
            && self.fcx.mult == 1
            && !ctx.stable
            && (r.pure || ctx.impure_ok)
            && params_visible
    }

    /// `f(d - 1, ...)` inside recursive `f` (cost accounted when the function is finished).
    pub(super) fn self_call(&mut self, ctx: ECtx) -> GExpr {
        let Some(r) = self.fcx.rec.clone() else {
            return self.int_literal();
        };
        if let Some(rec) = &mut self.fcx.rec {
            rec.sites += 1;
            rec.tail_local = None;
        }
        self.feature(Feature::Recursion);
        let params = r.params.clone();
        let callee_globals = self.fcx.globals_used.clone();
        let mut passed: Vec<VarId> = Vec::new();
        let args = self.siblings(params.len(), ctx.deeper(), &mut |g, c, i| {
            let p = &params[i];
            if let Some((_, local)) = r.tail_local.as_ref().filter(|(pi, _)| *pi == i) {
                g.charge(1);
                g.feature(Feature::RecursionOtherArray);
                return GExpr::int(build::var(local), None, false, 1);
            }
            match &p.kind {
                // Now and then another array than the one received (a local one of this
                // activation, a global, a row): the callee then works on memory of its
                // caller's frame (tail recursion must not reuse that frame; alias analysis
                // must tell activations apart). Any view with at least `min_len` rows keeps
                // the guarantees of the length parameters, which are passed on unchanged.
                ParamKind::Array { inner, min_len }
                    if !g.array_views(p.ty, inner, *min_len, !r.pure).is_empty()
                        && g.c.chance(f64::from(g.cfg.knobs.aliasing) / 100.0) =>
                {
                    let (e, id) = g.array_arg(p.ty, inner, *min_len, !r.pure, &callee_globals, &passed, true);
                    if !r.pure {
                        g.note_global_write(id);
                    }
                    passed.push(id);
                    g.feature(Feature::RecursionOtherArray);
                    GExpr::int(e, None, false, 1)
                }
                ParamKind::Depth => {
                    let step = g.c.range(1, 2) as i32;
                    g.charge(2);
                    GExpr::int(
                        build::bin(BinaryOp::Sub, build::var(&p.name), build::int(step)),
                        None,
                        false,
                        2,
                    )
                }
                ParamKind::Scalar => g.value_for(p.ty, c),
                // Arrays, lengths and trip counts are passed on unchanged, keeping their
                // guarantees.
                ParamKind::Array { .. } | ParamKind::Length { .. } | ParamKind::Count { .. } => {
                    g.charge(1);
                    GExpr::int(build::var(&p.name), None, false, 1)
                }
            }
        });
        let impure = !r.pure || args.iter().any(|a| a.impure);
        let cost = args.iter().map(|a| a.cost).sum::<u64>() + 1;
        let e = build::call(&r.name, args.into_iter().map(|a| a.e).collect());
        match r.ret {
            Some(Ty::Float) => GExpr::float(e, FLOAT_VAR_BOUND, impure, cost),
            _ => GExpr::int(e, None, impure, cost),
        }
    }
}
