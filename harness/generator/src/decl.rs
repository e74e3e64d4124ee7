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
//! read the new, uninitialised `x`; the generator never writes such an initialiser. A new
//! local's name may shadow an outer one ([`new_local_name`]).

use super::build;
use super::env::{self, Storage, VarId};
use super::expr::value_for;
use super::features::Feature;
use super::loops::for_each_element;
use super::operand::{float_literal, int_literal, stmt_ctx};
use super::state::Gen;
use super::value::{ECtx, Ty};
use sysyc::frontend::ast::{BinaryOp, BlockItem, Decl, Expr, InitVal, Item, VarDef};

/// Elements written explicitly into one initialiser list at most.
const MAX_INIT_ELEMS: u32 = 48;

// ---------------------------------------------------------------- names and shapes

/// A name for a new local in the current scope: fresh, or (shadowing) one visible from an
/// outer scope that nothing relies on.
pub(super) fn new_local_name(g: &mut Gen) -> String {
    if g.knob(g.cfg.knobs.shadowing) {
        let hideable = |id: VarId| g.env.vars[id].locks == 0 && !g.env.in_current_scope(&g.env.vars[id].name);
        let candidates: Vec<String> = g.env.visible().into_iter().filter(|&id| hideable(id)).map(|id| g.env.vars[id].name.clone()).collect();
        if !candidates.is_empty() {
            g.feature(Feature::Shadowing);
            return candidates[g.pick_index(candidates.len())].clone();
        }
    }
    g.env.local_name("l")
}

/// Dimensions of a new array within the size limits.
pub(super) fn array_dims(g: &mut Gen) -> Vec<u32> {
    let max_rank = if g.knob(g.cfg.knobs.multi_dim) {
        g.cfg.max_array_rank
    } else {
        1
    };
    let rank = g.c.range(1, max_rank as i64) as usize;
    let mut left = g.cfg.max_array_elems.max(1);
    let mut dims = Vec::with_capacity(rank);
    for k in 0..rank {
        // Leave room for at least 2 elements per remaining dimension when possible.
        let rest = (rank - k - 1) as u32;
        let cap = (left / 2u32.pow(rest).max(1)).clamp(1, g.cfg.max_dim.max(1));
        let d = if g.c.chance(0.15) {
            1
        } else {
            g.c.range(1.min(cap as i64), cap as i64) as u32
        };
        let d = d.max(1);
        dims.push(d);
        left = (left / d).max(1);
    }
    g.feature(match dims.len() {
        1 => Feature::Array1,
        2 => Feature::Array2,
        3 => Feature::Array3,
        _ => Feature::Array4,
    });
    dims
}

/// Dimensions of a local array over 4096 bytes (over 1024 elements), so that offsets in
/// the frame exceed the load/store immediate ranges.
fn big_dims(g: &mut Gen) -> Vec<u32> {
    g.feature(Feature::BigFrame);
    if g.c.chance(0.6) {
        g.feature(Feature::Array1);
        vec![g.c.range(1025, 3000) as u32]
    } else {
        g.feature(Feature::Array2);
        vec![g.c.range(33, 64) as u32, g.c.range(33, 64) as u32]
    }
}

/// The visible `const int`s with their values.
fn int_consts(g: &Gen) -> Vec<(String, i64)> {
    let value = |v: &env::Var| (v.is_const && v.init && v.is_scalar() && v.ty == Ty::Int).then(|| (v.name.clone(), v.range.map_or(0, |r| r.0)));
    g.env.visible().into_iter().filter_map(|id| value(&g.env.vars[id])).collect()
}

/// Dimension expressions: literals, or visible `const int`s adjusted to the value.
fn dim_exprs(g: &mut Gen, dims: &[u32]) -> Vec<Expr> {
    let consts: Vec<(String, i64)> = int_consts(g).into_iter().filter(|(_, v)| (-1000..=1000).contains(v)).collect();
    dims.iter()
        .map(|&d| {
            if !consts.is_empty() && g.c.chance(0.3) {
                g.feature(Feature::ConstDim);
                let (name, v) = &consts[g.pick_index(consts.len())];
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
fn init_list(g: &mut Gen, dims: &[u32], elem: &mut dyn FnMut(&mut Gen) -> Expr) -> InitVal {
    let mut left = MAX_INIT_ELEMS;
    let items = aggregate(g, dims, elem, &mut left);
    let total: u64 = dims.iter().map(|&d| d as u64).product();
    if count_scalars(&items) < total {
        g.feature(Feature::PartialInit);
    }
    build::init_list(items)
}

fn aggregate(
    g: &mut Gen,
    dims: &[u32],
    elem: &mut dyn FnMut(&mut Gen) -> Expr,
    left: &mut u32,
) -> Vec<InitVal> {
    let Some((&d0, rest)) = dims.split_first() else {
        return Vec::new();
    };
    let mut items = Vec::new();
    if rest.is_empty() {
        let n = if g.c.chance(0.6) {
            d0
        } else {
            g.c.range(0, d0 as i64) as u32
        };
        for _ in 0..n.min(*left) {
            items.push(InitVal::Expr(elem(g)));
            *left -= 1;
        }
        return items;
    }
    let sub: u32 = rest.iter().product();
    let slots = if g.c.chance(0.6) {
        d0
    } else {
        g.c.range(0, d0 as i64) as u32
    };
    for s in 0..slots {
        if *left == 0 {
            break;
        }
        if g.c.chance(0.5) {
            g.feature(Feature::NestedInit);
            let inner = aggregate(g, rest, elem, left);
            items.push(build::init_list(inner));
        } else {
            g.feature(Feature::ElidedInit);
            let last = s + 1 == slots;
            let mut n = sub;
            if last && g.c.chance(0.4) {
                n = g.c.range(0, sub as i64) as u32;
            }
            if n > *left {
                // Not enough room for a whole slot: it must be the last one written.
                n = *left;
                for _ in 0..n {
                    items.push(InitVal::Expr(elem(g)));
                }
                *left = 0;
                break;
            }
            for _ in 0..n {
                items.push(InitVal::Expr(elem(g)));
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
fn const_int(g: &mut Gen) -> (Expr, i64) {
    let consts = int_consts(g);
    match g.c.weighted(&[6, if consts.is_empty() { 0 } else { 3 }, 1]) {
        1 => {
            let (name, v) = consts[g.pick_index(consts.len())].clone();
            let k = g.c.range(1, 9);
            let (op, value) = match g.c.below(3) {
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
            let f = g.c.range(-4000, 4000) as f32 / 8.0;
            (build::float(f), f.trunc() as i64)
        }
        _ => {
            let x = int_literal(g);
            (x.e, x.range.map_or(0, |r| r.0))
        }
    }
}

/// A constant element of an `ty` array (literal or `const` scalar).
fn const_elem(g: &mut Gen, ty: Ty) -> Expr {
    match ty {
        Ty::Int => {
            if g.c.chance(0.2) {
                const_int(g).0
            } else {
                int_literal(g).e
            }
        }
        Ty::Float => {
            if g.c.chance(0.2) {
                int_literal_small(g)
            } else {
                float_literal(g).e
            }
        }
    }
}

fn int_literal_small(g: &mut Gen) -> Expr {
    let v = g.c.range(-100, 100) as i32;
    build::int(v)
}

// ---------------------------------------------------------------- declarations

/// Enters a declared variable (unreadable until `finish_decl`).
fn enter(g: &mut Gen, mut var: env::Var) -> VarId {
    var.init = false;
    g.env.declare(var)
}

fn finish_decl(g: &mut Gen, id: VarId) {
    g.env.vars[id].init = true;
}

/// A local declaration statement (scalars, constants, arrays).
pub(super) fn local_decl(g: &mut Gen) -> Vec<BlockItem> {
    let k = g.cfg.knobs.clone();
    let arrays = k.arrays > 0;
    let choice = g.c.weighted(&[
        10,
        if k.consts > 0 { 2 } else { 0 },
        if arrays { 4 } else { 0 },
        if arrays && k.consts > 0 { 1 } else { 0 },
        // (Filled by loops: not in a straight-line body.)
        if arrays && k.late_init > 0 && !g.fcx.straight {
            2
        } else {
            0
        },
        if arrays && k.dead_stores > 0 { 1 } else { 0 },
    ]);
    let ty = pick_ty(g);
    match choice {
        1 => {
            let d = const_scalar(g, ty, Storage::Local);
            vec![BlockItem::Decl(d)]
        }
        2 | 3 | 5 => {
            g.feature(Feature::LocalArray);
            let is_const = choice == 3;
            let d = array_decl(g, ty, Storage::Local, is_const, choice == 5);
            vec![BlockItem::Decl(d)]
        }
        4 => loop_filled_array(g, ty),
        _ => local_scalars(g, ty),
    }
}

fn pick_ty(g: &mut Gen) -> Ty {
    if g.cfg.knobs.float > 0 && !g.fcx.straight && g.c.chance(0.3) {
        g.feature(Feature::FloatVar);
        Ty::Float
    } else {
        Ty::Int
    }
}

/// `int a = e, b = e2;`
fn local_scalars(g: &mut Gen, ty: Ty) -> Vec<BlockItem> {
    let n = if g.c.chance(0.2) {
        g.c.range(2, 3)
    } else {
        1
    };
    let mut defs = Vec::new();
    for _ in 0..n {
        let name = new_local_name(g);
        if g.env.in_current_scope(&name) {
            continue;
        }
        let id = enter(g, env::scalar(name.clone(), ty, Storage::Local));
        let ctx = stmt_ctx(g);
        let v = value_for(g, ty, ctx);
        g.work.charge(1);
        finish_decl(g, id);
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
fn const_scalar(g: &mut Gen, ty: Ty, storage: Storage) -> Decl {
    g.feature(Feature::ConstScalar);
    let name = if storage == Storage::Global {
        g.env.global_name("K")
    } else {
        new_local_name(g)
    };
    let mut var = env::scalar(name.clone(), ty, storage);
    var.is_const = true;
    var.read_only = true;
    let id = enter(g, var);
    let init = match ty {
        Ty::Int => {
            let (e, v) = const_int(g);
            g.env.vars[id].range = Some((v, v));
            e
        }
        Ty::Float => float_literal(g).e,
    };
    finish_decl(g, id);
    build::decl(
        true,
        ty.btype(),
        &name,
        Vec::new(),
        Some(InitVal::Expr(init)),
    )
}

/// An array declaration: `T a[..] [= {..}];`
fn array_decl(g: &mut Gen, ty: Ty, storage: Storage, is_const: bool, dead: bool) -> Decl {
    let dims = if storage == Storage::Local && !is_const && g.knob(g.cfg.knobs.big_frames)
    {
        big_dims(g)
    } else {
        array_dims(g)
    };
    array_decl_of(g, ty, storage, is_const, dead, dims)
}

/// A local array of the given shape, initialised (by a list, the rest zero-filled).
pub(super) fn local_array_with_dims(g: &mut Gen, ty: Ty, dims: Vec<u32>) -> Decl {
    g.feature(Feature::LocalArray);
    array_decl_of(g, ty, Storage::Local, false, false, dims)
}

fn array_decl_of(
    g: &mut Gen,
    ty: Ty,
    storage: Storage,
    is_const: bool,
    dead: bool,
    dims: Vec<u32>,
) -> Decl {
    let dim_exprs = dim_exprs(g, &dims);
    let global = storage == Storage::Global;
    let name = if global {
        g.env.global_name("a")
    } else {
        new_local_name(g)
    };
    let mut var = env::array(name.clone(), ty, dims.clone(), storage);
    var.is_const = is_const;
    var.read_only = is_const || (global && g.knob(g.cfg.knobs.read_only_globals));
    if global && var.read_only && !is_const {
        g.feature(Feature::ReadOnlyGlobal);
    }
    let id = enter(g, var);
    let total: u64 = dims.iter().map(|&d| d as u64).product();
    if is_const {
        g.feature(Feature::ConstArray);
    }
    let with_init = is_const || !global && !dead || g.c.chance(0.6);
    let init = if with_init {
        if is_const || global {
            Some(init_list(g, &dims, &mut |g| const_elem(g, ty)))
        } else {
            // Local initialisers may be any expression without side effects (C leaves
            // their evaluation order unspecified).
            let list = init_list(g, &dims, &mut |g| value_for(g, ty, ECtx::pure(2)).e);
            g.work.charge(total);
            Some(list)
        }
    } else {
        None
    };
    finish_decl(g, id);
    g.env.vars[id].dead = dead;
    if dead {
        g.feature(Feature::DeadStore);
    }
    build::decl(is_const, ty.btype(), &name, dim_exprs, init)
}

/// `T a[..];` filled element by element by nested loops before anything reads it.
fn loop_filled_array(g: &mut Gen, ty: Ty) -> Vec<BlockItem> {
    let dims = array_dims(g);
    let total: u64 = dims.iter().map(|&d| d as u64).product();
    if !g.work.affordable(total * 20) {
        return local_scalars(g, ty);
    }
    g.feature(Feature::LocalArray);
    g.feature(Feature::LoopFilledArray);
    g.feature(Feature::LateInit);
    let dim_exprs = dim_exprs(g, &dims);
    let name = new_local_name(g);
    let id = enter(g, env::array(name.clone(), ty, dims, Storage::Local));
    let decl = build::decl(false, ty.btype(), &name, dim_exprs, None);
    let mut out = vec![BlockItem::Decl(decl)];
    let fill = for_each_element(g, id, &mut |g, idx| {
        let v = value_for(g, ty, ECtx::pure(2));
        g.work.charge(2);
        build::assign(build::lval(&name, idx), v.e)
    });
    out.extend(fill);
    finish_decl(g, id);
    out
}

// ---------------------------------------------------------------- globals

/// Up to `n` global declarations.
pub(super) fn global_decls(g: &mut Gen, n: u32) -> Vec<Item> {
    let k = g.cfg.knobs.clone();
    let mut items = Vec::new();
    for _ in 0..n {
        let ty = pick_ty(g);
        let choice = g.c.weighted(&[
            if k.globals > 0 { 5 } else { 0 },
            if k.consts > 0 { 3 } else { 0 },
            if k.globals > 0 && k.arrays > 0 { 4 } else { 0 },
            if k.consts > 0 && k.arrays > 0 { 2 } else { 0 },
        ]);
        let decl = match choice {
            1 => const_scalar(g, ty, Storage::Global),
            2 | 3 => {
                g.feature(Feature::GlobalArray);
                array_decl(g, ty, Storage::Global, choice == 3, false)
            }
            _ if k.globals == 0 => continue,
            _ => global_scalar(g, ty),
        };
        items.push(Item::Decl(decl));
    }
    items
}

/// `int g [= const];` — possibly never written afterwards (then its value is known).
fn global_scalar(g: &mut Gen, ty: Ty) -> Decl {
    g.feature(Feature::GlobalScalar);
    let name = g.env.global_name("g");
    let mut var = env::scalar(name.clone(), ty, Storage::Global);
    var.read_only = g.knob(g.cfg.knobs.read_only_globals);
    if var.read_only {
        g.feature(Feature::ReadOnlyGlobal);
    }
    let read_only = var.read_only;
    let id = enter(g, var);
    let (init, value) = match (ty, g.c.chance(0.75)) {
        (_, false) => (None, 0),
        (Ty::Int, true) => {
            let (e, v) = const_int(g);
            (Some(e), v)
        }
        (Ty::Float, true) => (Some(float_literal(g).e), 0),
    };
    if read_only && ty == Ty::Int {
        g.env.vars[id].range = Some((value, value));
    }
    finish_decl(g, id);
    build::decl(
        false,
        ty.btype(),
        &name,
        Vec::new(),
        init.map(InitVal::Expr),
    )
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
