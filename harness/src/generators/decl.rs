//! Declarations: globals, locals, constants and arrays with (brace-elided) initialisers.
//!
//! Initialiser lists follow one rule that C and SysY agree on: at each level of an
//! aggregate, every sub-aggregate slot is filled either by a braced sub-list or by exactly
//! as many bare scalars as it has elements (brace elision); only the last slot written may
//! be partial, and trailing slots may be omitted (zero-filled). So the element a value lands
//! in never depends on the fine print of brace elision.
//!
//! A new declaration is entered into scope *before* its initialiser is generated, unreadable
//! until complete: in C the name's scope starts at its declarator, so `int x = x + 1;` would
//! read the new, uninitialised `x`; the generator never writes such an initialiser.

use super::build;
use super::env::{self, Storage, Ty, VarId};
use super::features::Feature;
use super::state::{ECtx, Gen};
use sysyc::frontend::ast::{BinaryOp, BlockItem, Decl, Expr, InitVal, Item, VarDef};

/// Elements written explicitly into one initialiser list at most.
const MAX_INIT_ELEMS: u32 = 48;

impl Gen<'_> {
    // ---------------------------------------------------------------- shapes

    /// Dimensions of a new array within the size limits.
    pub(super) fn array_dims(&mut self) -> Vec<u32> {
        let max_rank = if self.knob(self.cfg.knobs.multi_dim) {
            self.cfg.max_array_rank
        } else {
            1
        };
        let rank = self.c.range(1, max_rank as i64) as usize;
        let mut left = self.cfg.max_array_elems.max(1);
        let mut dims = Vec::with_capacity(rank);
        for k in 0..rank {
            // Leave room for at least 2 elements per remaining dimension when possible.
            let rest = (rank - k - 1) as u32;
            let cap = (left / 2u32.pow(rest).max(1)).clamp(1, self.cfg.max_dim.max(1));
            let d = if self.c.chance(0.15) {
                1
            } else {
                self.c.range(1.min(cap as i64), cap as i64) as u32
            };
            let d = d.max(1);
            dims.push(d);
            left = (left / d).max(1);
        }
        self.feature(match dims.len() {
            1 => Feature::Array1,
            2 => Feature::Array2,
            3 => Feature::Array3,
            _ => Feature::Array4,
        });
        dims
    }

    /// Dimensions of a local array over 4096 bytes (over 1024 elements), so that offsets in
    /// the frame exceed the load/store immediate ranges.
    fn big_dims(&mut self) -> Vec<u32> {
        self.feature(Feature::BigFrame);
        if self.c.chance(0.6) {
            self.feature(Feature::Array1);
            vec![self.c.range(1025, 3000) as u32]
        } else {
            self.feature(Feature::Array2);
            vec![self.c.range(33, 64) as u32, self.c.range(33, 64) as u32]
        }
    }

    /// Dimension expressions: literals, or visible `const int`s adjusted to the value.
    fn dim_exprs(&mut self, dims: &[u32]) -> Vec<Expr> {
        let consts: Vec<(String, i64)> = self
            .env
            .visible()
            .into_iter()
            .filter_map(|id| {
                let v = &self.env.vars[id];
                (v.is_const && v.init && v.is_scalar() && v.ty == Ty::Int)
                    .then(|| (v.name.clone(), v.range.map_or(0, |r| r.0)))
            })
            .filter(|(_, v)| (-1000..=1000).contains(v))
            .collect();
        dims.iter()
            .map(|&d| {
                if !consts.is_empty() && self.c.chance(0.3) {
                    self.feature(Feature::ConstDim);
                    let (name, v) = &consts[self.pick_index(consts.len())];
                    let diff = d as i64 - v;
                    match diff {
                        0 => build::var(name),
                        k if k > 0 => {
                            build::bin(BinaryOp::Add, build::var(name), build::int(k as i32))
                        }
                        k => build::bin(BinaryOp::Sub, build::var(name), build::int((-k) as i32)),
                    }
                } else {
                    build::int(d as i32)
                }
            })
            .collect()
    }

    /// An initialiser list for `dims` with element values from `elem`.
    fn init_list(&mut self, dims: &[u32], elem: &mut dyn FnMut(&mut Self) -> Expr) -> InitVal {
        let mut left = MAX_INIT_ELEMS;
        let items = self.aggregate(dims, elem, &mut left);
        let total: u64 = dims.iter().map(|&d| d as u64).product();
        if count_scalars(&items) < total {
            self.feature(Feature::PartialInit);
        }
        build::init_list(items)
    }

    fn aggregate(
        &mut self,
        dims: &[u32],
        elem: &mut dyn FnMut(&mut Self) -> Expr,
        left: &mut u32,
    ) -> Vec<InitVal> {
        let Some((&d0, rest)) = dims.split_first() else {
            return Vec::new();
        };
        let mut items = Vec::new();
        if rest.is_empty() {
            let n = if self.c.chance(0.6) {
                d0
            } else {
                self.c.range(0, d0 as i64) as u32
            };
            for _ in 0..n.min(*left) {
                items.push(InitVal::Expr(elem(self)));
                *left -= 1;
            }
            return items;
        }
        let sub: u32 = rest.iter().product();
        let slots = if self.c.chance(0.6) {
            d0
        } else {
            self.c.range(0, d0 as i64) as u32
        };
        for s in 0..slots {
            if *left == 0 {
                break;
            }
            if self.c.chance(0.5) {
                self.feature(Feature::NestedInit);
                let inner = self.aggregate(rest, elem, left);
                items.push(build::init_list(inner));
            } else {
                self.feature(Feature::ElidedInit);
                let last = s + 1 == slots;
                let mut n = sub;
                if last && self.c.chance(0.4) {
                    n = self.c.range(0, sub as i64) as u32;
                }
                if n > *left {
                    // Not enough room for a whole slot: it must be the last one written.
                    n = *left;
                    for _ in 0..n {
                        items.push(InitVal::Expr(elem(self)));
                    }
                    *left = 0;
                    break;
                }
                for _ in 0..n {
                    items.push(InitVal::Expr(elem(self)));
                }
                *left -= n;
                if n < sub {
                    break;
                }
            }
        }
        items
    }

    // ---------------------------------------------------------------- constant values

    /// A constant `int` expression and its value (literals and visible `const int`s).
    fn const_int(&mut self) -> (Expr, i64) {
        let consts: Vec<(String, i64)> = self
            .env
            .visible()
            .into_iter()
            .filter_map(|id| {
                let v = &self.env.vars[id];
                (v.is_const && v.init && v.is_scalar() && v.ty == Ty::Int)
                    .then(|| (v.name.clone(), v.range.map_or(0, |r| r.0)))
            })
            .collect();
        match self
            .c
            .weighted(&[6, if consts.is_empty() { 0 } else { 3 }, 1])
        {
            1 => {
                let (name, v) = consts[self.pick_index(consts.len())].clone();
                let k = self.c.range(1, 9);
                let (op, value) = match self.c.below(3) {
                    0 => (BinaryOp::Add, (v as i32).wrapping_add(k as i32)),
                    1 => (BinaryOp::Sub, (v as i32).wrapping_sub(k as i32)),
                    _ => (BinaryOp::Mul, (v as i32).wrapping_mul(k as i32)),
                };
                (
                    build::bin(op, build::var(&name), build::int(k as i32)),
                    value as i64,
                )
            }
            2 => {
                // A float constant converted to int (truncation toward zero).
                let f = self.c.range(-4000, 4000) as f32 / 8.0;
                (build::float(f), f.trunc() as i64)
            }
            _ => {
                let g = self.int_literal();
                let v = g.range.map_or(0, |r| r.0);
                (g.e, v)
            }
        }
    }

    /// A constant element of an `ty` array (literal or `const` scalar).
    fn const_elem(&mut self, ty: Ty) -> Expr {
        match ty {
            Ty::Int => {
                if self.c.chance(0.2) {
                    self.const_int().0
                } else {
                    self.int_literal().e
                }
            }
            Ty::Float => {
                if self.c.chance(0.2) {
                    self.int_literal_small()
                } else {
                    self.float_literal().e
                }
            }
        }
    }

    fn int_literal_small(&mut self) -> Expr {
        let v = self.c.range(-100, 100) as i32;
        build::int(v)
    }

    // ---------------------------------------------------------------- declarations

    /// Enters a declared variable (unreadable until `finish_decl`).
    fn enter(&mut self, mut var: env::Var) -> VarId {
        var.init = false;
        self.env.declare(var)
    }

    fn finish_decl(&mut self, id: VarId) {
        self.env.vars[id].init = true;
    }

    /// A local declaration statement (scalars, constants, arrays).
    pub(super) fn local_decl(&mut self) -> Vec<BlockItem> {
        let k = self.cfg.knobs.clone();
        let arrays = k.arrays > 0;
        let choice = self.c.weighted(&[
            10,
            if k.consts > 0 { 2 } else { 0 },
            if arrays { 4 } else { 0 },
            if arrays && k.consts > 0 { 1 } else { 0 },
            // (Filled by loops: not in a straight-line body.)
            if arrays && k.late_init > 0 && !self.fcx.straight {
                2
            } else {
                0
            },
            if arrays && k.dead_stores > 0 { 1 } else { 0 },
        ]);
        let ty = self.pick_ty();
        match choice {
            1 => {
                let d = self.const_scalar(ty, Storage::Local);
                vec![BlockItem::Decl(d)]
            }
            2 | 3 | 5 => {
                self.feature(Feature::LocalArray);
                let is_const = choice == 3;
                let d = self.array_decl(ty, Storage::Local, is_const, choice == 5);
                vec![BlockItem::Decl(d)]
            }
            4 => self.loop_filled_array(ty),
            _ => self.local_scalars(ty),
        }
    }

    fn pick_ty(&mut self) -> Ty {
        if self.cfg.knobs.float > 0 && !self.fcx.straight && self.c.chance(0.3) {
            self.feature(Feature::FloatVar);
            Ty::Float
        } else {
            Ty::Int
        }
    }

    /// `int a = e, b = e2;`
    fn local_scalars(&mut self, ty: Ty) -> Vec<BlockItem> {
        let n = if self.c.chance(0.2) {
            self.c.range(2, 3)
        } else {
            1
        };
        let mut defs = Vec::new();
        for _ in 0..n {
            let name = self.new_local_name();
            if self.env.in_current_scope(&name) {
                continue;
            }
            let id = self.enter(env::scalar(name.clone(), ty, Storage::Local));
            let ctx = ECtx {
                depth: self.cfg.max_expr_depth,
                ..self.stmt_ctx()
            };
            let v = self.value_for(ty, ctx);
            self.charge(1);
            self.finish_decl(id);
            defs.push(VarDef {
                name: build::ident(&name),
                dims: Vec::new(),
                init: Some(InitVal::Expr(v.e)),
                span: Default::default(),
            });
        }
        if defs.is_empty() {
            return Vec::new();
        }
        vec![BlockItem::Decl(Decl {
            is_const: false,
            ty: ty.btype(),
            defs,
            span: Default::default(),
        })]
    }

    /// `const int N = <const expr>;` / `const float F = <literal>;`
    fn const_scalar(&mut self, ty: Ty, storage: Storage) -> Decl {
        self.feature(Feature::ConstScalar);
        let name = if storage == Storage::Global {
            self.global_name("K")
        } else {
            self.new_local_name()
        };
        let mut var = env::scalar(name.clone(), ty, storage);
        var.is_const = true;
        var.read_only = true;
        let id = self.enter(var);
        let init = match ty {
            Ty::Int => {
                let (e, v) = self.const_int();
                self.env.vars[id].range = Some((v, v));
                e
            }
            Ty::Float => {
                let g = self.float_literal();
                g.e
            }
        };
        self.finish_decl(id);
        build::decl(
            true,
            ty.btype(),
            &name,
            Vec::new(),
            Some(InitVal::Expr(init)),
        )
    }

    /// An array declaration: `T a[..] [= {..}];`
    fn array_decl(&mut self, ty: Ty, storage: Storage, is_const: bool, dead: bool) -> Decl {
        let dims = if storage == Storage::Local && !is_const && self.knob(self.cfg.knobs.big_frames)
        {
            self.big_dims()
        } else {
            self.array_dims()
        };
        self.array_decl_of(ty, storage, is_const, dead, dims)
    }

    /// A local array of the given shape, initialised (by a list, the rest zero-filled).
    pub(super) fn local_array_with_dims(&mut self, ty: Ty, dims: Vec<u32>) -> Decl {
        self.feature(Feature::LocalArray);
        self.array_decl_of(ty, Storage::Local, false, false, dims)
    }

    fn array_decl_of(
        &mut self,
        ty: Ty,
        storage: Storage,
        is_const: bool,
        dead: bool,
        dims: Vec<u32>,
    ) -> Decl {
        let dim_exprs = self.dim_exprs(&dims);
        let global = storage == Storage::Global;
        let name = if global {
            self.global_name("a")
        } else {
            self.new_local_name()
        };
        let mut var = env::array(name.clone(), ty, dims.clone(), storage);
        var.is_const = is_const;
        var.read_only = is_const || (global && self.knob(self.cfg.knobs.read_only_globals));
        if global && var.read_only && !is_const {
            self.feature(Feature::ReadOnlyGlobal);
        }
        let id = self.enter(var);
        let total: u64 = dims.iter().map(|&d| d as u64).product();
        if is_const {
            self.feature(Feature::ConstArray);
        }
        let with_init = is_const || !global && !dead || self.c.chance(0.6);
        let init = if with_init {
            if is_const || global {
                Some(self.init_list(&dims, &mut |g| g.const_elem(ty)))
            } else {
                // Local initialisers may be any expression without side effects (C leaves
                // their evaluation order unspecified).
                let ctx = ECtx {
                    impure_ok: false,
                    stable: false,
                    depth: 2,
                };
                let list = self.init_list(&dims, &mut |g| {
                    let v = g.value_for(ty, ctx);
                    v.e
                });
                self.charge(total);
                Some(list)
            }
        } else {
            None
        };
        self.finish_decl(id);
        self.env.vars[id].dead = dead;
        if dead {
            self.feature(Feature::DeadStore);
        }
        build::decl(is_const, ty.btype(), &name, dim_exprs, init)
    }

    /// `T a[..];` filled element by element by nested loops before anything reads it.
    fn loop_filled_array(&mut self, ty: Ty) -> Vec<BlockItem> {
        let dims = self.array_dims();
        let total: u64 = dims.iter().map(|&d| d as u64).product();
        if !self.affordable(total * 20) {
            return self.local_scalars(ty);
        }
        self.feature(Feature::LocalArray);
        self.feature(Feature::LoopFilledArray);
        self.feature(Feature::LateInit);
        let dim_exprs = self.dim_exprs(&dims);
        let name = self.new_local_name();
        let id = self.enter(env::array(name.clone(), ty, dims, Storage::Local));
        let decl = build::decl(false, ty.btype(), &name, dim_exprs, None);
        let mut out = vec![BlockItem::Decl(decl)];
        let ctx = ECtx {
            impure_ok: false,
            stable: false,
            depth: 2,
        };
        let fill = self.for_each_element(id, &mut |g, idx| {
            let v = g.value_for(ty, ctx);
            g.charge(2);
            build::assign(build::lval(&name, idx), v.e)
        });
        out.extend(fill);
        self.finish_decl(id);
        out
    }

    // ---------------------------------------------------------------- globals

    /// Up to `n` global declarations appended to the program.
    pub(super) fn global_decls(&mut self, n: u32) {
        let k = self.cfg.knobs.clone();
        for _ in 0..n {
            let ty = self.pick_ty();
            let choice = self.c.weighted(&[
                if k.globals > 0 { 5 } else { 0 },
                if k.consts > 0 { 3 } else { 0 },
                if k.globals > 0 && k.arrays > 0 { 4 } else { 0 },
                if k.consts > 0 && k.arrays > 0 { 2 } else { 0 },
            ]);
            let decl = match choice {
                1 => self.const_scalar(ty, Storage::Global),
                2 | 3 => {
                    self.feature(Feature::GlobalArray);
                    self.array_decl(ty, Storage::Global, choice == 3, false)
                }
                _ if k.globals == 0 => continue,
                _ => self.global_scalar(ty),
            };
            self.items.push(Item::Decl(decl));
        }
    }

    /// `int g [= const];` — possibly never written afterwards (then its value is known).
    fn global_scalar(&mut self, ty: Ty) -> Decl {
        self.feature(Feature::GlobalScalar);
        let name = self.global_name("g");
        let mut var = env::scalar(name.clone(), ty, Storage::Global);
        var.read_only = self.knob(self.cfg.knobs.read_only_globals);
        if var.read_only {
            self.feature(Feature::ReadOnlyGlobal);
        }
        let read_only = var.read_only;
        let id = self.enter(var);
        let (init, value) = match (ty, self.c.chance(0.75)) {
            (_, false) => (None, 0),
            (Ty::Int, true) => {
                let (e, v) = self.const_int();
                (Some(e), v)
            }
            (Ty::Float, true) => {
                let g = self.float_literal();
                (Some(g.e), 0)
            }
        };
        if read_only && ty == Ty::Int {
            self.env.vars[id].range = Some((value, value));
        }
        self.finish_decl(id);
        build::decl(
            false,
            ty.btype(),
            &name,
            Vec::new(),
            init.map(InitVal::Expr),
        )
    }
}

/// Scalars in an initialiser list (nested lists included).
fn count_scalars(items: &[InitVal]) -> u64 {
    items
        .iter()
        .map(|i| match i {
            InitVal::Expr(_) => 1,
            InitVal::List(inner, _) => count_scalars(inner),
        })
        .sum()
}
