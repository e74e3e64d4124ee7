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

impl Gen<'_> {
    // ---------------------------------------------------------------- calls

    /// User functions returning `ret` (`None`: any, for call statements) callable here.
    pub(super) fn callable(&mut self, ret: Option<Ty>, ctx: ECtx) -> Vec<usize> {
        if ctx.stable {
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
        let f = self.env.funcs[fi].clone();
        self.feature(Feature::Call);
        let mut passed: Vec<VarId> = Vec::new();
        let params = f.params.clone();
        let args = self.siblings(params.len(), ctx.deeper(), &mut |g, c, i| {
            let p = &params[i];
            match &p.kind {
                ParamKind::Scalar => g.value_for(p.ty, c),
                ParamKind::Array { inner, min_len } => {
                    let (e, id) =
                        g.array_arg(p.ty, inner, *min_len, !f.pure, &f.globals_used, &passed);
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
            }
        });
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

    /// An array argument for `ty p[][inner..]`: a whole array or a row `a[i]..`.
    pub(super) fn array_arg(
        &mut self,
        ty: Ty,
        inner: &[u32],
        min_len: u32,
        writes: bool,
        callee_globals: &[VarId],
        already: &[VarId],
    ) -> (Expr, VarId) {
        let views = self.array_views(ty, inner, min_len, writes);
        let aliasing = self.cfg.knobs.aliasing;
        let weights: Vec<u32> = views
            .iter()
            .map(|(id, fixed)| {
                let base = if *fixed > 0 { 4 } else { 2 };
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

    /// A recursion-depth argument: at most `max` (anything ≤ 0 is the base case).
    pub(super) fn depth_arg(&mut self, max: i64, ctx: ECtx) -> GExpr {
        if self.c.chance(0.6) {
            let v = self.c.range(0, max) as i32;
            self.charge(1);
            return GExpr::int(build::int(v), Some((v as i64, v as i64)), false, 1);
        }
        let g = self.int_expr(ctx.deeper());
        self.charge(2);
        let e = build::bin(BinaryOp::Mod, g.e, build::int(max as i32 + 1));
        GExpr::int(e, Some((-max, max)), g.impure, g.cost + 2)
    }

    pub(super) fn self_call_possible(&self, ty: Ty, ctx: ECtx) -> bool {
        let Some(r) = &self.fcx.rec else { return false };
        // Parameters are passed on by name: a local declared since may hide one.
        let params_visible = r.params.iter().all(|p| {
            self.env
                .lookup(&p.name)
                .is_some_and(|id| self.env.vars[id].storage == Storage::Param)
        });
        r.ret == Some(ty)
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
        }
        self.feature(Feature::Recursion);
        let params = r.params.clone();
        let args = self.siblings(params.len(), ctx.deeper(), &mut |g, c, i| {
            let p = &params[i];
            match &p.kind {
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
                // Arrays and their lengths are passed on unchanged, keeping their guarantees.
                ParamKind::Array { .. } | ParamKind::Length { .. } => {
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
