//! Expression generation: typed, UB-free by construction, independent of evaluation order.
//!
//! # Why no expression can trap
//! * `int` `+ - *` wrap (project semantics; gcc gets `-fwrapv`), so they are free.
//! * `/` and `%` only ever divide by a divisor proven ≠ 0 and ≠ −1: a constant, an
//!   expression whose static range excludes both, the inline guard `(e % K + K)` (in
//!   `1..2K`), or the `safe_div`/`safe_mod` wrappers.
//! * Every array index is proven in `0..dim` per dimension: a constant, a variable or affine
//!   function of a loop counter whose static range fits, or `(e % dim + dim) % dim`.
//! * Floats never become infinite or NaN: every float expression carries a magnitude bound
//!   (interval arithmetic on `|x|`); when a result could exceed `FLOAT_EXPR_LIMIT` an operand
//!   is clamped with `fclamp`, float division is by a constant, by `b * b + 1.0`, by an int of
//!   magnitude ≥ 1, or through `safe_fdiv`; values stored anywhere are clamped to
//!   `FLOAT_VAR_BOUND`; float→int conversions happen only below `FLOAT_TO_INT_LIMIT` (or via
//!   the saturating `f2i`).
//! * Only initialised variables are read (late-initialised ones become readable once every
//!   path assigned them).
//!
//! # Why evaluation order never matters
//! Calls with side effects ("impure": writes to globals or arrays, output) are the only side
//! effects inside expressions. The tree is split into *regions* at `&&`/`||` operands (which
//! C sequences); within a region at most one subtree of any node may contain impure calls,
//! and when one does, its siblings are generated *stable*: they read only what no call can
//! change (local and parameter scalars, constants, read-only globals) and call nothing. So
//! whatever order a compiler evaluates operands or arguments in, the values are the same.
//! Input calls never appear inside expressions (see `stmt.rs`).
//!
//! Calls and their arguments are in `calls.rs`, conditions in `cond.rs`.

use super::build;
use super::env::{FLOAT_EXPR_LIMIT, FLOAT_TO_INT_LIMIT, FLOAT_VAR_BOUND, Storage, Ty, VarId};
use super::features::Feature;
use super::prelude::Helper;
use super::state::{ECtx, GExpr, Gen};
use sysyc::frontend::ast::{BinaryOp, Expr, IntBase, UnaryOp};

const INT_DIVISORS: [i32; 14] = [2, 3, 4, 5, 7, 8, 10, 16, 13, -3, -4, 100, 1000, 1];

/// Constant divisors of every kind the back end's constant-division sequences distinguish:
/// powers of two (shift with a rounding bias), others (magic multiplier, with and without
/// the add-back correction), negative ones, and extremes.
const CORNER_DIVISORS: [i32; 40] = [
    2,
    4,
    8,
    16,
    32,
    64,
    256,
    1024,
    65536,
    1 << 30,
    3,
    5,
    6,
    7,
    9,
    10,
    11,
    12,
    25,
    100,
    125,
    641,
    1000,
    6_700_417,
    i32::MAX,
    -2,
    -4,
    -8,
    -16,
    -1024,
    -(1 << 30),
    -3,
    -5,
    -6,
    -7,
    -10,
    -100,
    -641,
    -i32::MAX,
    i32::MIN,
];
const FLOAT_DIVISORS: [f32; 10] = [2.0, 4.0, 0.5, 3.0, 10.0, 1.5, 0.25, -2.0, 8.0, 100.0];

/// Variables in a function's read pool (see [`Gen::pick_var`]).
const VAR_POOL: usize = 3;

fn fits_i32(v: i64) -> bool {
    v >= i32::MIN as i64 && v <= i32::MAX as i64
}

/// Range of `op` over two ranges, if no result can wrap.
pub(super) fn range_binary(
    op: BinaryOp,
    a: Option<(i64, i64)>,
    b: Option<(i64, i64)>,
) -> Option<(i64, i64)> {
    let ((alo, ahi), (blo, bhi)) = (a?, b?);
    let corners: [i64; 4] = match op {
        BinaryOp::Add => [alo + blo, alo + bhi, ahi + blo, ahi + bhi],
        BinaryOp::Sub => [alo - bhi, alo - blo, ahi - bhi, ahi - blo],
        BinaryOp::Mul => [
            alo.checked_mul(blo)?,
            alo.checked_mul(bhi)?,
            ahi.checked_mul(blo)?,
            ahi.checked_mul(bhi)?,
        ],
        _ => return None,
    };
    let lo = *corners.iter().min()?;
    let hi = *corners.iter().max()?;
    (fits_i32(lo) && fits_i32(hi)).then_some((lo, hi))
}

/// Range of `a / d` or `a % d` for a divisor range that excludes 0 and −1.
fn range_divmod(is_mod: bool, a: Option<(i64, i64)>, d: (i64, i64)) -> Option<(i64, i64)> {
    let dmax = d.0.abs().max(d.1.abs());
    if is_mod {
        let m = dmax - 1;
        return Some(match a {
            Some((lo, _)) if lo >= 0 => (0, m),
            Some((_, hi)) if hi <= 0 => (-m, 0),
            _ => (-m, m),
        });
    }
    let (alo, ahi) = a?;
    if d.0 <= 0 && d.1 >= 0 {
        return None;
    }
    let corners = [alo / d.0, alo / d.1, ahi / d.0, ahi / d.1];
    Some((*corners.iter().min()?, *corners.iter().max()?))
}

impl Gen<'_> {
    /// Generates two operands as siblings: one of them (chosen at random) may be impure,
    /// the other is then stable.
    pub(super) fn pair(
        &mut self,
        ctx: ECtx,
        first: &mut dyn FnMut(&mut Self, ECtx) -> GExpr,
        second: &mut dyn FnMut(&mut Self, ECtx) -> GExpr,
    ) -> (GExpr, GExpr) {
        if self.c.chance(0.5) {
            let a = first(self, ctx);
            let b = second(self, ctx.sibling_of(a.impure));
            (a, b)
        } else {
            let b = second(self, ctx);
            let a = first(self, ctx.sibling_of(b.impure));
            (a, b)
        }
    }

    /// Generates `n` sibling subexpressions (call arguments, indices) under the same rule.
    pub(super) fn siblings(
        &mut self,
        n: usize,
        ctx: ECtx,
        gen_one: &mut dyn FnMut(&mut Self, ECtx, usize) -> GExpr,
    ) -> Vec<GExpr> {
        if n == 0 {
            return Vec::new();
        }
        let first = self.pick_index(n);
        let lead = gen_one(self, ctx, first);
        let rest_ctx = ctx.sibling_of(lead.impure);
        let mut out: Vec<Option<GExpr>> = (0..n).map(|_| None).collect();
        out[first] = Some(lead);
        for (i, slot) in out.iter_mut().enumerate() {
            if slot.is_none() {
                *slot = Some(gen_one(self, rest_ctx, i));
            }
        }
        out.into_iter().flatten().collect()
    }

    // ---------------------------------------------------------------- literals and leaves

    pub(super) fn int_literal(&mut self) -> GExpr {
        let v: i32 = match self.c.weighted(&[40, 30, 10, 12, 8]) {
            0 => self.c.range(0, 10) as i32,
            1 => self.c.range(-20, 100) as i32,
            2 => *[
                127,
                128,
                255,
                256,
                1023,
                65535,
                65536,
                i32::MAX,
                i32::MIN,
                -1,
                -128,
            ]
            .get(self.pick_index(11))
            .unwrap_or(&0),
            3 => self.c.range(-100_000, 100_000) as i32,
            _ => self.c.range(i32::MIN as i64, i32::MAX as i64) as i32,
        };
        self.charge(1);
        GExpr::int(self.int_lit_expr(v), Some((v as i64, v as i64)), false, 1)
    }

    /// A literal spelled in a random base when the knob allows.
    pub(super) fn int_lit_expr(&mut self, v: i32) -> Expr {
        if v > 7 && self.knob(self.cfg.knobs.literal_bases) {
            self.feature(Feature::LiteralBase);
            let base = if self.c.chance(0.5) {
                IntBase::Oct
            } else {
                IntBase::Hex
            };
            return build::int_in_base(v, base);
        }
        build::int(v)
    }

    pub(super) fn float_literal(&mut self) -> GExpr {
        let v: f32 = match self.c.below(6) {
            0 => self.c.range(-8, 8) as f32 * 0.5,
            1 => self.c.range(-400, 400) as f32 / 16.0,
            2 => {
                let table = [
                    0.1f32, 0.2, 0.3, 0.7, 1.1, 3.25, 2.875, 0.001, 123.456, 0.333333, 1e-5,
                ];
                table[self.pick_index(table.len())]
            }
            3 => self.c.range(-1000, 1000) as f32 * 0.75 / 7.0,
            4 => {
                let table = [0.0f32, 1.0, 2.0, 0.5, 0.25, 100.0, 1000.0, 65536.0];
                table[self.pick_index(table.len())]
            }
            _ => self.c.range(-99_999, 99_999) as f32 / 100.0,
        };
        self.charge(1);
        GExpr::float(build::float(v), v.abs() as f64, false, 1)
    }

    /// Visible scalars of type `ty` readable under `ctx`.
    pub(super) fn readable_scalars(&self, ty: Ty, ctx: ECtx) -> Vec<VarId> {
        self.env
            .visible()
            .into_iter()
            .filter(|&id| {
                let v = &self.env.vars[id];
                v.is_scalar() && v.ty == ty && v.readable() && (!ctx.stable || v.call_stable())
            })
            .collect()
    }

    /// Visible arrays of element type `ty` whose elements are readable under `ctx`.
    fn readable_arrays(&self, ty: Ty, ctx: ECtx) -> Vec<VarId> {
        self.env
            .visible()
            .into_iter()
            .filter(|&id| {
                let v = &self.env.vars[id];
                v.is_array() && v.ty == ty && v.readable() && (!ctx.stable || v.call_stable())
            })
            .collect()
    }

    /// Picks one variable, favouring locked ones (loop counters, invariants) inside loops.
    /// With the `var_pool` knob, reads favour a pool of at most [`VAR_POOL`] variables per
    /// function (the first ones picked), so the same operands meet again and again.
    pub(super) fn pick_var(&mut self, ids: &[VarId]) -> VarId {
        let in_loop = !self.fcx.loops.is_empty();
        let pooled = self.cfg.knobs.var_pool > 0;
        let weights: Vec<u32> = ids
            .iter()
            .map(|&id| {
                let v = &self.env.vars[id];
                let affine = if self.fcx.affinity.contains(&id) {
                    4
                } else {
                    1
                };
                let pool = if pooled && self.fcx.var_pool.contains(&id) {
                    1 + self.cfg.knobs.var_pool as u32 / 8
                } else {
                    1
                };
                affine * pool * if in_loop && v.locks > 0 { 4 } else { 1 }
            })
            .collect();
        let id = ids[self.c.weighted(&weights)];
        if pooled && self.fcx.var_pool.len() < VAR_POOL && !self.fcx.var_pool.contains(&id) {
            self.feature(Feature::VarPool);
            self.fcx.var_pool.push(id);
        }
        id
    }

    pub(super) fn read_scalar(&mut self, id: VarId) -> GExpr {
        self.charge(1);
        let v = &self.env.vars[id];
        let e = self.env.read(id);
        match v.ty {
            Ty::Int => GExpr::int(e, v.range, false, 1),
            Ty::Float => GExpr::float(e, FLOAT_VAR_BOUND, false, 1),
        }
    }

    /// `a[i][j]...` with in-bounds indices.
    pub(super) fn elem_read(&mut self, id: VarId, ctx: ECtx) -> GExpr {
        let (dims, ty, name, global) = {
            let v = &self.env.vars[id];
            (
                v.dims.clone(),
                v.ty,
                v.name.clone(),
                v.storage == Storage::Global,
            )
        };
        if global && !self.fcx.globals_used.contains(&id) {
            self.fcx.globals_used.push(id);
        }
        let idx = self.siblings(dims.len(), ctx.deeper(), &mut |g, c, i| g.index(dims[i], c));
        let impure = idx.iter().any(|g| g.impure);
        let cost = idx.iter().map(|g| g.cost).sum::<u64>() + 1;
        self.charge(1);
        let e = build::elem(&name, idx.into_iter().map(|g| g.e).collect());
        match ty {
            Ty::Int => GExpr::int(e, None, impure, cost),
            Ty::Float => GExpr::float(e, FLOAT_VAR_BOUND, impure, cost),
        }
    }

    /// A literal or a scalar variable (no array element).
    fn int_scalar_leaf(&mut self, ctx: ECtx) -> GExpr {
        let scalars = self.readable_scalars(Ty::Int, ctx);
        if scalars.is_empty() || self.c.chance(0.3) {
            return self.int_literal();
        }
        let id = self.pick_var(&scalars);
        self.read_scalar(id)
    }

    pub(super) fn int_leaf(&mut self, ctx: ECtx) -> GExpr {
        self.leaf(Ty::Int, ctx, Self::int_literal)
    }

    fn float_leaf(&mut self, ctx: ECtx) -> GExpr {
        self.leaf(Ty::Float, ctx, Self::float_literal)
    }

    /// A literal, a readable scalar or an element of a readable array of type `ty`.
    fn leaf(&mut self, ty: Ty, ctx: ECtx, literal: fn(&mut Self) -> GExpr) -> GExpr {
        let scalars = self.readable_scalars(ty, ctx);
        let arrays = if self.knob_arrays_enabled() {
            self.readable_arrays(ty, ctx)
        } else {
            Vec::new()
        };
        let w = [
            3,
            if scalars.is_empty() { 0 } else { 7 },
            if arrays.is_empty() { 0 } else { 3 },
        ];
        match self.c.weighted(&w) {
            1 => {
                let id = self.pick_var(&scalars);
                self.read_scalar(id)
            }
            2 => {
                let id = self.pick_var(&arrays);
                self.elem_read(id, ctx)
            }
            _ => literal(self),
        }
    }

    fn knob_arrays_enabled(&self) -> bool {
        self.cfg.knobs.arrays > 0
    }

    // ---------------------------------------------------------------- int expressions

    pub(super) fn int_expr(&mut self, ctx: ECtx) -> GExpr {
        if ctx.depth == 0 || self.c.chance(0.25) {
            return self.int_leaf(ctx);
        }
        let k = &self.cfg.knobs;
        let calls = self.callable(Some(Ty::Int), ctx);
        let self_call = self.self_call_possible(Ty::Int, ctx);
        let weights = [
            8,
            30,
            3,
            if k.div_mod > 0 {
                4 + k.div_mod as u32 / 8
            } else {
                0
            },
            if calls.is_empty() { 0 } else { 10 },
            if k.reuse > 0 {
                2 + k.reuse as u32 / 10
            } else {
                0
            },
            // (`f2i` branches: not in a straight-line body.)
            if k.float > 0 && k.float_to_int > 0 && !self.fcx.straight {
                3
            } else {
                0
            },
            if self_call { 12 } else { 0 },
            if k.identities > 0 {
                1 + k.identities as u32 / 10
            } else {
                0
            },
        ];
        match self.c.weighted(&weights) {
            1 => {
                let op = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul][self.c.weighted(&[5, 4, 3])];
                let sub = ctx.deeper();
                let (a, b) = self.pair(sub, &mut |g, c| g.int_expr(c), &mut |g, c| g.int_expr(c));
                self.charge(1);
                let range = range_binary(op, a.range, b.range);
                GExpr::int(
                    build::bin(op, a.e, b.e),
                    range,
                    a.impure || b.impure,
                    a.cost + b.cost + 1,
                )
            }
            2 => {
                let a = self.int_expr(ctx.deeper());
                self.charge(1);
                let (op, range) = if self.c.chance(0.8) {
                    (
                        UnaryOp::Neg,
                        a.range
                            .filter(|r| r.0 > i32::MIN as i64)
                            .map(|(lo, hi)| (-hi, -lo)),
                    )
                } else {
                    (UnaryOp::Plus, a.range)
                };
                GExpr::int(build::unary(op, a.e), range, a.impure, a.cost + 1)
            }
            3 => self.int_divmod(ctx),
            4 => {
                let f = calls[self.pick_index(calls.len())];
                self.call_user(f, ctx)
            }
            5 => match self.recall(Ty::Int, ctx, false) {
                Some(g) => {
                    self.feature(Feature::Reuse);
                    g
                }
                None => self.int_leaf(ctx),
            },
            6 => {
                self.feature(Feature::FloatToInt);
                self.use_helper(Helper::F2I);
                let a = self.float_expr(ctx.deeper());
                // Sometimes scaled beyond the saturation bounds, so both of `f2i`'s guards run.
                let a = if a.float_bound() <= 1.0e21 && self.c.chance(0.3) {
                    self.charge(2);
                    let bound = a.float_bound() * 1.0e8;
                    GExpr::float(
                        build::bin(BinaryOp::Mul, a.e, build::float(1.0e8)),
                        bound,
                        a.impure,
                        a.cost + 2,
                    )
                } else {
                    a
                };
                self.charge(Helper::F2I.cost());
                let g = GExpr::int(
                    build::call(Helper::F2I.name(), vec![a.e]),
                    Some((-1_000_000_000, 1_000_000_000)),
                    a.impure,
                    a.cost + Helper::F2I.cost(),
                );
                self.feature(Feature::Call);
                g
            }
            7 => self.self_call(ctx),
            8 => self.int_identity(ctx),
            _ => self.int_leaf(ctx),
        }
        .remembered(self, ctx)
    }

    /// An algebraic identity around a subexpression (`e + 0`, `(e + c) - c`, `e * 2 - e`,
    /// `e - e`, ...): instruction-combining fodder whose value the generator still knows.
    fn int_identity(&mut self, ctx: ECtx) -> GExpr {
        self.feature(Feature::Identity);
        let a = self.int_expr(ctx.deeper());
        let dup = !a.impure;
        let c = self.c.range(1, 1000) as i32;
        self.charge(3);
        let cost = a.cost + 3;
        let variant = self.c.below(if dup { 9 } else { 6 });
        let cost = if variant >= 6 {
            // The subexpression appears twice.
            self.charge(a.cost);
            cost + a.cost
        } else {
            cost
        };
        let (e, range) = match variant {
            0 => (build::bin(BinaryOp::Add, a.e, build::int(0)), a.range),
            1 => (build::bin(BinaryOp::Mul, build::int(1), a.e), a.range),
            2 => (
                build::bin(
                    BinaryOp::Sub,
                    build::bin(BinaryOp::Add, a.e, build::int(c)),
                    build::int(c),
                ),
                a.range,
            ),
            3 => (build::bin(BinaryOp::Div, a.e, build::int(1)), a.range),
            4 => (build::neg(build::neg(a.e)), a.range),
            5 => (
                build::bin(
                    BinaryOp::Add,
                    build::bin(BinaryOp::Mul, a.e, build::int(0)),
                    build::int(c),
                ),
                Some((c as i64, c as i64)),
            ),
            6 => (build::bin(BinaryOp::Sub, a.e.clone(), a.e), Some((0, 0))),
            7 => {
                let twice = build::bin(BinaryOp::Mul, a.e.clone(), build::int(2));
                (build::bin(BinaryOp::Sub, twice, a.e), a.range)
            }
            _ => (
                build::bin(BinaryOp::Add, a.e.clone(), a.e),
                range_binary(BinaryOp::Add, a.range, a.range),
            ),
        };
        GExpr::int(e, range, a.impure, cost)
    }

    /// Float identities: `e * 1.0`, `e + 0.0` (which turns `-0.0` into `0.0`), `e / 1.0`,
    /// `-(-e)`, `e - e`.
    fn float_identity(&mut self, ctx: ECtx) -> GExpr {
        self.feature(Feature::Identity);
        let a = self.float_expr(ctx.deeper());
        let bound = a.float_bound();
        let dup = !a.impure;
        self.charge(2);
        let cost = a.cost + 2;
        let variant = self.c.below(if dup { 5 } else { 4 });
        let cost = if variant == 4 {
            self.charge(a.cost);
            cost + a.cost
        } else {
            cost
        };
        let e = match variant {
            0 => build::bin(BinaryOp::Mul, a.e, build::float(1.0)),
            1 => build::bin(BinaryOp::Add, a.e, build::float(0.0)),
            2 => build::bin(BinaryOp::Div, a.e, build::float(1.0)),
            3 => build::neg(build::neg(a.e)),
            _ => build::bin(BinaryOp::Sub, a.e.clone(), a.e),
        };
        GExpr::float(e, bound, a.impure, cost)
    }

    fn int_divmod(&mut self, ctx: ECtx) -> GExpr {
        let is_mod = self.c.chance(0.4);
        let op = if is_mod { BinaryOp::Mod } else { BinaryOp::Div };
        self.feature(if is_mod { Feature::Mod } else { Feature::Div });
        let sub = ctx.deeper();
        // (The wrappers branch: not in a straight-line body.)
        let wrapper = if self.cfg.knobs.safe_wrappers > 0 && !self.fcx.straight {
            1 + self.cfg.knobs.safe_wrappers as u32 / 10
        } else {
            0
        };
        match self.c.weighted(&[4, 3, 4, wrapper]) {
            0 => {
                self.feature(Feature::ConstDivisor);
                let corners = self.knob(self.cfg.knobs.div_corners);
                let a = self.int_expr(sub);
                let (a, d) = if corners {
                    self.feature(Feature::DivCorner);
                    let d = CORNER_DIVISORS[self.pick_index(CORNER_DIVISORS.len())];
                    (self.corner_dividend(a), d)
                } else {
                    (a, INT_DIVISORS[self.pick_index(INT_DIVISORS.len())])
                };
                self.charge(2);
                let range = range_divmod(is_mod, a.range, (d as i64, d as i64));
                let de = self.int_lit_expr(d);
                GExpr::int(build::bin(op, a.e, de), range, a.impure, a.cost + 2)
            }
            1 => {
                // A divisor whose static range excludes 0 and -1, when one comes up.
                let (a, d) = self.pair(sub, &mut |g, c| g.int_expr(c), &mut |g, c| g.int_leaf(c));
                match d.range {
                    Some((lo, hi)) if lo >= 1 || hi <= -2 => {
                        self.charge(1);
                        let range = range_divmod(is_mod, a.range, (lo, hi));
                        GExpr::int(
                            build::bin(op, a.e, d.e),
                            range,
                            a.impure || d.impure,
                            a.cost + d.cost + 1,
                        )
                    }
                    _ => self.guarded_divmod(is_mod, a, d),
                }
            }
            2 => {
                let (a, d) = self.pair(sub, &mut |g, c| g.int_expr(c), &mut |g, c| g.int_expr(c));
                self.guarded_divmod(is_mod, a, d)
            }
            _ => {
                self.feature(Feature::SafeWrapper);
                let h = if is_mod {
                    Helper::SafeMod
                } else {
                    Helper::SafeDiv
                };
                self.use_helper(h);
                let (a, d) = self.pair(sub, &mut |g, c| g.int_expr(c), &mut |g, c| {
                    g.small_divisor(c)
                });
                self.charge(h.cost());
                let range = if is_mod {
                    None
                } else {
                    // |a / b| ≤ |a| for b ∉ {0, -1}; for 0 it is a, for -1 it is -a.
                    a.range.filter(|r| r.0 > i32::MIN as i64).map(|(lo, hi)| {
                        let m = lo.abs().max(hi.abs());
                        (-m, m)
                    })
                };
                GExpr::int(
                    build::call(h.name(), vec![a.e, d.e]),
                    range,
                    a.impure || d.impure,
                    a.cost + d.cost + h.cost(),
                )
            }
        }
    }

    /// `a` moved near the ends of the `int` range or negated, or `INT_MIN` itself: the
    /// dividends on which constant-division sequences go wrong.
    fn corner_dividend(&mut self, a: GExpr) -> GExpr {
        self.charge(2);
        let (e, range) = match self.c.below(6) {
            0 => (build::bin(BinaryOp::Add, a.e, build::int(i32::MIN)), None),
            1 => (build::bin(BinaryOp::Sub, build::int(i32::MAX), a.e), None),
            2 => (build::neg(a.e), None),
            3 => (build::bin(BinaryOp::Mul, a.e, build::int(65536)), None),
            4 => {
                let v = if self.c.chance(0.5) {
                    i32::MIN
                } else {
                    i32::MAX
                };
                return GExpr::int(build::int(v), Some((v as i64, v as i64)), false, 1);
            }
            _ => return a,
        };
        GExpr::int(e, range, a.impure, a.cost + 2)
    }

    /// A divisor for the safe-division wrappers: any value, or often one that is 0, -1 or 1
    /// from time to time (`i % 3 - 1` of a counter, `e % 2`), so the wrappers' guards run.
    fn small_divisor(&mut self, ctx: ECtx) -> GExpr {
        if self.c.chance(0.5) {
            return self.int_expr(ctx);
        }
        let counters: Vec<VarId> = self
            .counters_here(ctx)
            .into_iter()
            .filter(|&id| self.env.vars[id].range.is_some_and(|(lo, _)| lo >= 0))
            .collect();
        self.charge(3);
        if !counters.is_empty() {
            let id = counters[self.pick_index(counters.len())];
            let e = build::bin(
                BinaryOp::Sub,
                build::bin(BinaryOp::Mod, self.env.read(id), build::int(3)),
                build::int(1),
            );
            return GExpr::int(e, Some((-1, 1)), false, 3);
        }
        let g = self.int_expr(ctx.deeper());
        GExpr::int(
            build::bin(BinaryOp::Mod, g.e, build::int(2)),
            Some((-1, 1)),
            g.impure,
            g.cost + 2,
        )
    }

    /// `a / (d % K + K)` or `a % (d % K + K)`: the divisor is in `1..2K`.
    fn guarded_divmod(&mut self, is_mod: bool, a: GExpr, d: GExpr) -> GExpr {
        self.feature(Feature::InlineGuard);
        let k = self.c.range(2, 17);
        let divisor = build::bin(
            BinaryOp::Add,
            build::bin(BinaryOp::Mod, d.e, build::int(k as i32)),
            build::int(k as i32),
        );
        self.charge(3);
        let op = if is_mod { BinaryOp::Mod } else { BinaryOp::Div };
        let range = range_divmod(is_mod, a.range, (1, 2 * k - 1));
        GExpr::int(
            build::bin(op, a.e, divisor),
            range,
            a.impure || d.impure,
            a.cost + d.cost + 3,
        )
    }

    // ---------------------------------------------------------------- float expressions

    pub(super) fn float_expr(&mut self, ctx: ECtx) -> GExpr {
        if ctx.depth == 0 || self.c.chance(0.25) {
            return self.float_leaf(ctx);
        }
        self.feature(Feature::FloatVar);
        let k = &self.cfg.knobs;
        let calls = self.callable(Some(Ty::Float), ctx);
        let self_call = self.self_call_possible(Ty::Float, ctx);
        let weights = [
            8,
            30,
            3,
            if k.div_mod > 0 { 6 } else { 2 },
            if calls.is_empty() { 0 } else { 10 },
            if k.reuse > 0 {
                2 + k.reuse as u32 / 10
            } else {
                0
            },
            2,
            if self_call { 12 } else { 0 },
            if k.identities > 0 {
                1 + k.identities as u32 / 20
            } else {
                0
            },
            k.float_corners as u32 / 10,
        ];
        match self.c.weighted(&weights) {
            9 => self.float_corner(ctx),
            1 => self.float_binary(ctx),
            2 => {
                let a = self.float_expr(ctx.deeper());
                self.charge(1);
                GExpr::float(build::neg(a.e), a.bound, a.impure, a.cost + 1)
            }
            3 => self.float_div(ctx),
            4 => {
                let f = calls[self.pick_index(calls.len())];
                self.call_user(f, ctx)
            }
            5 => match self.recall(Ty::Float, ctx, false) {
                Some(g) => {
                    self.feature(Feature::Reuse);
                    g
                }
                None => self.float_leaf(ctx),
            },
            6 => {
                let a = self.float_expr(ctx.deeper());
                self.clamp(a)
            }
            7 => self.self_call(ctx),
            8 => self.float_identity(ctx),
            _ => self.float_leaf(ctx),
        }
        .remembered(self, ctx)
    }

    /// A float that is `-0.0`, or `±0.0` by the sign of another value, or a value that
    /// rounds: `-(e - e)`, `e * 0.0`, `e * -0.0`, `(e + 16777216.0) - 16777216.0`, an int
    /// beyond 2^24 converted (`(a * 3 + 16777217) * 1.0`), `e + 0.5`.
    fn float_corner(&mut self, ctx: ECtx) -> GExpr {
        self.feature(Feature::FloatCorner);
        let pure = ctx.no_impure().deeper();
        self.charge(4);
        match self.c.below(6) {
            0 => {
                let e = self.float_expr(pure);
                let diff = build::bin(BinaryOp::Sub, e.e.clone(), e.e);
                GExpr::float(build::neg(diff), 0.0, false, 2 * e.cost + 2)
            }
            1 | 2 => {
                let e = self.float_expr(ctx.deeper());
                let zero = if self.c.chance(0.5) { 0.0 } else { -0.0 };
                GExpr::float(
                    build::bin(BinaryOp::Mul, e.e, build::float(zero)),
                    0.0,
                    e.impure,
                    e.cost + 2,
                )
            }
            3 => {
                let e = self.float_expr(ctx.deeper());
                let e = self.fit(e, FLOAT_VAR_BOUND);
                let big = build::float(16_777_216.0);
                let sum = build::bin(BinaryOp::Add, e.e, big.clone());
                let bound = e.bound + 2.0 * 16_777_216.0;
                GExpr::float(
                    build::bin(BinaryOp::Sub, sum, big),
                    bound,
                    e.impure,
                    e.cost + 3,
                )
            }
            4 => {
                let a = self.int_expr(ctx.deeper());
                let n = build::bin(
                    BinaryOp::Add,
                    build::bin(BinaryOp::Mul, a.e, build::int(3)),
                    build::int(16_777_217),
                );
                GExpr::float(
                    build::bin(BinaryOp::Mul, n, build::float(1.0)),
                    super::env::INT_AS_FLOAT_BOUND,
                    a.impure,
                    a.cost + 4,
                )
            }
            _ => {
                let e = self.float_expr(ctx.deeper());
                let e = self.fit(e, FLOAT_VAR_BOUND);
                GExpr::float(
                    build::bin(BinaryOp::Add, e.e, build::float(0.5)),
                    e.bound + 0.5,
                    e.impure,
                    e.cost + 2,
                )
            }
        }
    }

    /// `fclamp(g)`: bound `FLOAT_VAR_BOUND` (an int operand converts to float on the way in).
    pub(super) fn clamp(&mut self, g: GExpr) -> GExpr {
        self.use_helper(Helper::FClamp);
        self.charge(Helper::FClamp.cost());
        self.feature(Feature::Call);
        // Sometimes scaled up, so that the clamping branches run too.
        let g = if g.float_bound() <= FLOAT_EXPR_LIMIT / 1024.0 && self.c.chance(0.25) {
            self.charge(2);
            let bound = g.float_bound() * 1024.0;
            GExpr::float(
                build::bin(BinaryOp::Mul, g.e, build::float(1024.0)),
                bound,
                g.impure,
                g.cost + 2,
            )
        } else {
            g
        };
        let bound = FLOAT_VAR_BOUND.min(g.float_bound());
        GExpr::float(
            build::call(Helper::FClamp.name(), vec![g.e]),
            bound,
            g.impure,
            g.cost + Helper::FClamp.cost(),
        )
    }

    /// Clamps `g` when its bound exceeds `limit` (a float, or an int used as a float).
    pub(super) fn fit(&mut self, g: GExpr, limit: f64) -> GExpr {
        if g.float_bound() > limit {
            self.clamp(g)
        } else {
            g
        }
    }

    fn float_binary(&mut self, ctx: ECtx) -> GExpr {
        let op = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul][self.c.weighted(&[5, 4, 4])];
        // 0: both float, 1: left int, 2: right int.
        let int_side = self.c.weighted(&[6, 1, 1]);
        if int_side != 0 {
            self.feature(Feature::MixedArith);
        }
        let sub = ctx.deeper();
        let mut left = move |g: &mut Self, c: ECtx| {
            if int_side == 1 {
                g.int_expr(c)
            } else {
                g.float_expr(c)
            }
        };
        let mut right = move |g: &mut Self, c: ECtx| {
            if int_side == 2 {
                g.int_expr(c)
            } else {
                g.float_expr(c)
            }
        };
        let (mut a, mut b) = self.pair(sub, &mut left, &mut right);
        let combine = |a: f64, b: f64| if op == BinaryOp::Mul { a * b } else { a + b };
        // Clamp the larger operand(s) until the result bound is safe.
        for _ in 0..2 {
            if combine(a.float_bound(), b.float_bound()) <= FLOAT_EXPR_LIMIT {
                break;
            }
            if a.float_bound() >= b.float_bound() {
                a = self.clamp(a);
            } else {
                b = self.clamp(b);
            }
        }
        self.charge(1);
        let bound = combine(a.float_bound(), b.float_bound());
        GExpr::float(
            build::bin(op, a.e, b.e),
            bound,
            a.impure || b.impure,
            a.cost + b.cost + 1,
        )
    }

    fn float_div(&mut self, ctx: ECtx) -> GExpr {
        self.feature(Feature::FloatDiv);
        let sub = ctx.deeper();
        let wrapper = if self.cfg.knobs.safe_wrappers > 0 {
            2
        } else {
            0
        };
        match self.c.weighted(&[4, 3, 2, wrapper]) {
            0 => {
                let a = self.float_expr(sub);
                let d = FLOAT_DIVISORS[self.pick_index(FLOAT_DIVISORS.len())];
                let a = self.fit(a, FLOAT_EXPR_LIMIT * d.abs() as f64);
                self.charge(2);
                let bound = a.float_bound() / d.abs() as f64;
                GExpr::float(
                    build::bin(BinaryOp::Div, a.e, build::float(d)),
                    bound,
                    a.impure,
                    a.cost + 2,
                )
            }
            1 => {
                // a / (b * b + 1.0): the divisor is at least 1.
                let (a, b) = self.pair(sub, &mut |g, c| g.float_expr(c), &mut |g, c| {
                    g.float_expr(c)
                });
                let b = self.fit(b, 1.0e14);
                let b_e = b.e.clone();
                let divisor = build::bin(
                    BinaryOp::Add,
                    build::bin(BinaryOp::Mul, b.e, b_e),
                    build::float(1.0),
                );
                self.charge(4);
                let cost = a.cost + 2 * b.cost + 4;
                let bound = a.float_bound();
                GExpr::float(
                    build::bin(BinaryOp::Div, a.e, divisor),
                    bound,
                    a.impure || b.impure,
                    cost,
                )
            }
            2 => {
                // An int divisor of magnitude at least 1, when one comes up; else a constant.
                let (a, d) = self.pair(sub, &mut |g, c| g.float_expr(c), &mut |g, c| g.int_leaf(c));
                match d.range {
                    Some((lo, hi)) if lo >= 1 || hi <= -1 => {
                        self.feature(Feature::MixedArith);
                        self.charge(1);
                        let bound = a.float_bound();
                        GExpr::float(
                            build::bin(BinaryOp::Div, a.e, d.e),
                            bound,
                            a.impure || d.impure,
                            a.cost + d.cost + 1,
                        )
                    }
                    _ => {
                        self.charge(2);
                        let bound = a.float_bound() / 2.0;
                        let e = build::bin(BinaryOp::Div, a.e, build::float(2.0));
                        GExpr::float(e, bound, a.impure || d.impure, a.cost + 2)
                    }
                }
            }
            _ => {
                self.feature(Feature::SafeWrapper);
                self.use_helper(Helper::SafeFDiv);
                let (a, b) = self.pair(sub, &mut |g, c| g.float_expr(c), &mut |g, c| {
                    g.float_expr(c)
                });
                self.charge(Helper::SafeFDiv.cost());
                let cost = a.cost + b.cost + Helper::SafeFDiv.cost();
                let bound = a.float_bound();
                GExpr::float(
                    build::call(Helper::SafeFDiv.name(), vec![a.e, b.e]),
                    bound,
                    a.impure || b.impure,
                    cost,
                )
            }
        }
    }

    /// A value to store into a variable (or pass, or return) of type `ty`: a float is
    /// clamped to `FLOAT_VAR_BOUND`; an int target may receive a float (implicit
    /// conversion) whose bound is below `FLOAT_TO_INT_LIMIT`.
    pub(super) fn value_for(&mut self, ty: Ty, ctx: ECtx) -> GExpr {
        let floats = self.cfg.knobs.float > 0;
        match ty {
            Ty::Float => {
                let g = if self.c.chance(0.1) {
                    self.int_expr(ctx)
                } else {
                    self.float_expr(ctx)
                };
                if g.ty == Ty::Int {
                    self.feature(Feature::MixedArith);
                }
                self.fit(g, FLOAT_VAR_BOUND)
            }
            Ty::Int
                if floats && !self.fcx.straight && self.knob(self.cfg.knobs.float_to_int / 2) =>
            {
                self.feature(Feature::FloatToInt);
                let g = self.float_expr(ctx);
                self.fit(g, FLOAT_TO_INT_LIMIT)
            }
            Ty::Int => self.int_expr(ctx),
        }
    }

    // ---------------------------------------------------------------- indices

    /// An `int` expression provably in `0..dim`.
    pub(super) fn index(&mut self, dim: u32, ctx: ECtx) -> GExpr {
        let d = dim as i64;
        if d <= 1 {
            self.charge(1);
            return GExpr::int(build::int(0), Some((0, 0)), false, 1);
        }
        let ranged: Vec<VarId> = self
            .readable_scalars(Ty::Int, ctx)
            .into_iter()
            .filter(|&id| self.env.vars[id].range.is_some())
            .collect();
        let direct: Vec<VarId> = ranged
            .iter()
            .copied()
            .filter(|&id| {
                self.env.vars[id]
                    .range
                    .is_some_and(|(lo, hi)| lo >= 0 && hi < d)
            })
            .collect();
        let w = [
            3,
            if direct.is_empty() { 0 } else { 6 },
            if ranged.is_empty() { 0 } else { 5 },
            3,
        ];
        match self.c.weighted(&w) {
            1 => {
                let id = self.pick_var(&direct);
                self.feature(Feature::InductionIndex);
                self.read_scalar(id)
            }
            2 => {
                let id = self.pick_var(&ranged);
                match self.affine_index(id, d) {
                    Some(g) => g,
                    None => self.wrapped_index(d, ctx),
                }
            }
            3 => self.wrapped_index(d, ctx),
            _ => {
                let v = self.c.range(0, d - 1) as i32;
                self.charge(1);
                GExpr::int(build::int(v), Some((v as i64, v as i64)), false, 1)
            }
        }
    }

    /// `v + k`, `k - v`, `v * 2 + k` or `v / 2 + k` fitting `0..d` for a ranged variable.
    fn affine_index(&mut self, id: VarId, d: i64) -> Option<GExpr> {
        let (lo, hi) = self.env.vars[id].range?;
        // Each option: (expression builder inputs) as (scale, divide, k range).
        let mut options: Vec<(i64, bool, i64, i64)> = Vec::new();
        if -lo <= d - 1 - hi {
            options.push((1, false, -lo, d - 1 - hi));
        }
        if hi <= d - 1 + lo {
            options.push((-1, false, hi, d - 1 + lo));
        }
        if -2 * lo <= d - 1 - 2 * hi {
            options.push((2, false, -2 * lo, d - 1 - 2 * hi));
        }
        if lo >= 0 && -(lo / 2) <= d - 1 - hi / 2 {
            options.push((1, true, -(lo / 2), d - 1 - hi / 2));
        }
        if options.is_empty() {
            return None;
        }
        let (scale, halve, klo, khi) = options[self.pick_index(options.len())];
        let k = self.c.range(klo, khi);
        self.feature(Feature::InductionIndex);
        let base = self.env.read(id);
        let base = if halve {
            build::bin(BinaryOp::Div, base, build::int(2))
        } else {
            base
        };
        let e = match scale {
            -1 => build::bin(BinaryOp::Sub, build::int(k as i32), base),
            2 => {
                let m = build::bin(BinaryOp::Mul, base, build::int(2));
                self.plus_const(m, k)
            }
            _ => self.plus_const(base, k),
        };
        self.charge(3);
        let (rlo, rhi) = match (scale, halve) {
            (-1, _) => (k - hi, k - lo),
            (2, _) => (2 * lo + k, 2 * hi + k),
            (_, true) => (lo / 2 + k, hi / 2 + k),
            _ => (lo + k, hi + k),
        };
        Some(GExpr::int(e, Some((rlo, rhi)), false, 3))
    }

    fn plus_const(&mut self, e: Expr, k: i64) -> Expr {
        match k {
            0 => e,
            k if k > 0 => build::bin(BinaryOp::Add, e, build::int(k as i32)),
            k => build::bin(BinaryOp::Sub, e, build::int((-k) as i32)),
        }
    }

    /// Any expression brought into `0..d`: kept if its range fits, `e % d` if it is never
    /// negative, `(e % d + d) % d` otherwise.
    fn wrapped_index(&mut self, d: i64, ctx: ECtx) -> GExpr {
        // At depth 0 only a scalar or literal: an array element here would need indices of
        // its own, and the chain could go on without end.
        let g = if ctx.depth == 0 {
            self.int_scalar_leaf(ctx)
        } else {
            self.int_expr(ctx.deeper())
        };
        match g.range {
            Some((lo, hi)) if lo >= 0 && hi < d => g,
            Some((lo, _)) if lo >= 0 => {
                self.charge(2);
                GExpr::int(
                    build::bin(BinaryOp::Mod, g.e, build::int(d as i32)),
                    Some((0, d - 1)),
                    g.impure,
                    g.cost + 2,
                )
            }
            _ => {
                self.charge(4);
                let inner = build::bin(
                    BinaryOp::Add,
                    build::bin(BinaryOp::Mod, g.e, build::int(d as i32)),
                    build::int(d as i32),
                );
                let e = build::bin(BinaryOp::Mod, inner, build::int(d as i32));
                GExpr::int(e, Some((0, d - 1)), g.impure, g.cost + 4)
            }
        }
    }

    /// An `int` expression provably in `0..=max` (length and depth arguments).
    pub(super) fn bounded_int(&mut self, max: i64, ctx: ECtx) -> GExpr {
        if self.c.chance(0.5) {
            let v = self.c.range(0, max) as i32;
            self.charge(1);
            return GExpr::int(build::int(v), Some((v as i64, v as i64)), false, 1);
        }
        self.index((max + 1) as u32, ctx)
    }
}

impl GExpr {
    /// Offers a freshly built expression to the re-use pool and returns it.
    fn remembered(self, g: &mut Gen<'_>, ctx: ECtx) -> GExpr {
        if !self.impure && g.cfg.knobs.reuse > 0 && g.c.chance(0.3) {
            g.remember(&self, ctx.stable || is_stable_expr(g, &self.e), false);
        }
        self
    }
}

/// Whether an expression reads only call-stable variables and calls nothing.
fn is_stable_expr(g: &Gen<'_>, e: &Expr) -> bool {
    use sysyc::frontend::ast::ExprKind;
    match &e.kind {
        ExprKind::IntLit(..) | ExprKind::FloatLit(_) | ExprKind::StrLit(_) => true,
        ExprKind::LVal(lv) => {
            g.env
                .lookup(&lv.name.name)
                .is_some_and(|id| g.env.vars[id].call_stable())
                && lv.indices.iter().all(|i| is_stable_expr(g, i))
        }
        // The helpers read no globals; user functions might.
        ExprKind::Call { name, args } => {
            super::prelude::is_reserved(&name.name) && args.iter().all(|a| is_stable_expr(g, a))
        }
        ExprKind::Unary(_, a) => is_stable_expr(g, a),
        ExprKind::Binary(_, a, b) => is_stable_expr(g, a) && is_stable_expr(g, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_never_claim_wrapped_values() {
        assert_eq!(
            range_binary(BinaryOp::Add, Some((0, 9)), Some((1, 1))),
            Some((1, 10))
        );
        assert_eq!(
            range_binary(BinaryOp::Sub, Some((0, 9)), Some((-2, 3))),
            Some((-3, 11))
        );
        assert_eq!(
            range_binary(BinaryOp::Mul, Some((-3, 2)), Some((4, 5))),
            Some((-15, 10))
        );
        assert_eq!(
            range_binary(BinaryOp::Mul, Some((0, 70_000)), Some((0, 70_000))),
            None
        );
        assert_eq!(range_binary(BinaryOp::Add, None, Some((0, 0))), None);
        assert_eq!(range_divmod(true, None, (1, 9)), Some((-8, 8)));
        assert_eq!(range_divmod(true, Some((0, 100)), (-5, -5)), Some((0, 4)));
        assert_eq!(range_divmod(false, Some((-7, 20)), (2, 4)), Some((-3, 10)));
        assert_eq!(range_divmod(false, Some((-7, 20)), (-3, -3)), Some((-6, 2)));
    }
}
