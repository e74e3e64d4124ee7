//! The parameter list of a new function, chosen before its body: scalars, arrays shaped
//! like a visible global (so callers can pass it, or a row of it: aliasing), the length
//! and trip-count parameters that tell the body how far to go, a recursive function's
//! depth; and their declaration in the function's scope with the facts they carry.

use super::build;
use super::decl::array_dims;
use super::env::{self, Param, ParamKind, Storage, VarId};
use super::features::Feature;
use super::function::STMT_COST;
use super::state::Gen;
use super::value::Ty;
use sysyc::frontend::ast::{self, Span};

/// Parameter list of a new function whose calls may cost `budget`, and the variables its
/// body should favour (the globals its array parameters were shaped after).
pub(super) fn params(g: &mut Gen, recursive: bool, budget: u64) -> (Vec<Param>, Vec<VarId>) {
    let k = g.cfg.knobs.clone();
    let floats = k.float > 0;
    let mut kinds: Vec<(Ty, bool)> = Vec::new(); // (type, is array)
    if g.knob(k.many_params) {
        for _ in 0..g.c.range(5, 10) {
            kinds.push((Ty::Int, false));
        }
        let nf = if floats && g.c.chance(0.6) { g.c.range(17, 20) } else if floats { g.c.range(0, 3) } else { 0 };
        for _ in 0..nf {
            kinds.push((Ty::Float, false));
        }
        // Interleave so that int and float argument registers fill in mixed order.
        for i in (1..kinds.len()).rev() {
            let j = g.c.below(i as u64 + 1) as usize;
            kinds.swap(i, j);
        }
    } else {
        for _ in 0..g.c.range(0, g.cfg.max_params as i64) {
            let ty = if floats && g.c.chance(0.3) { Ty::Float } else { Ty::Int };
            let array = k.arrays > 0 && g.knob(k.array_params);
            kinds.push((ty, array));
        }
    }
    let mut params = Vec::new();
    let mut affinity = Vec::new();
    let mut next = 0;
    let mut fresh = |params: &Vec<Param>| -> String {
        loop {
            let n = format!("p{next}");
            next += 1;
            if !params.iter().any(|p: &Param| p.name == n) {
                return n;
            }
        }
    };
    if recursive {
        let name = fresh(&params);
        params.push(Param { name, ty: Ty::Int, kind: ParamKind::Depth });
    }
    for (ty, array) in kinds {
        let name = param_name(g, &params).unwrap_or_else(|| fresh(&params));
        if array {
            let (inner, min_len, source) = array_param_shape(g, ty);
            // The body then tends to use the global its parameter was shaped after, and
            // callers tend to pass that global: aliasing.
            if let Some(id) = source.filter(|_| g.knob(k.aliasing)) {
                affinity.push(id);
            }
            let index = params.len();
            params.push(Param { name, ty, kind: ParamKind::Array { inner, min_len } });
            if g.knob(k.length_params) {
                let name = fresh(&params);
                params.push(Param { name, ty: Ty::Int, kind: ParamKind::Length { array: index } });
            }
        } else {
            params.push(Param { name, ty, kind: ParamKind::Scalar });
        }
    }
    // A trip count for the body's loops, small enough that a loop of a few statements
    // fits the budget.
    let max_trips = (budget / (4 * STMT_COST * 4)).min(g.cfg.max_trip_count as u64);
    if max_trips >= 2 && g.knob(k.trip_params) {
        let max = g.c.range(2, max_trips as i64) as u32;
        let name = fresh(&params);
        let at = g.c.range(usize::from(recursive) as i64, params.len() as i64) as usize;
        for p in &mut params {
            if let ParamKind::Length { array } = &mut p.kind
                && *array >= at
            {
                *array += 1;
            }
        }
        params.insert(at, Param { name, ty: Ty::Int, kind: ParamKind::Count { max } });
    }
    (params, affinity)
}

/// With the shadowing knob, a parameter may take the name of a global it then hides.
fn param_name(g: &mut Gen, params: &[Param]) -> Option<String> {
    if !g.knob(g.cfg.knobs.shadowing / 2) {
        return None;
    }
    let globals: Vec<String> = g.env.visible().into_iter().map(|id| g.env.vars[id].name.clone()).filter(|n| !params.iter().any(|p| &p.name == n)).collect();
    if globals.is_empty() {
        return None;
    }
    g.feature(Feature::Shadowing);
    Some(globals[g.pick_index(globals.len())].clone())
}

/// `(inner dims, guaranteed length)` for an array parameter: mostly the shape of a
/// visible global array (so calls can pass it), otherwise a fresh shape.
fn array_param_shape(g: &mut Gen, ty: Ty) -> (Vec<u32>, u32, Option<VarId>) {
    let shaped = |v: &env::Var| v.is_array() && v.ty == ty && !v.is_const;
    let globals: Vec<VarId> = g.env.visible().into_iter().filter(|&id| shaped(&g.env.vars[id])).collect();
    let (dims, level, source) = if !globals.is_empty() && g.c.chance(0.8) {
        let id = globals[g.pick_index(globals.len())];
        let dims = g.env.vars[id].dims.clone();
        // Deeper levels let callers pass rows (`a[i]`).
        let level = if dims.len() > 1 && g.c.chance(0.6) {
            g.c.range(1, dims.len() as i64 - 1) as usize
        } else {
            g.c.below(dims.len() as u64) as usize
        };
        (dims, level, Some(id))
    } else {
        (array_dims(g), 0, None)
    };
    let inner = dims[level + 1..].to_vec();
    // Often a short guaranteed length, so that many arrays and rows qualify as arguments.
    let max_len = if g.c.chance(0.5) { (dims[level] as i64).min(4) } else { dims[level] as i64 };
    let min_len = g.c.range(1, max_len) as u32;
    g.feature(Feature::ArrayParam);
    if !inner.is_empty() {
        g.feature(Feature::MultiDimArrayParam);
    }
    (inner, min_len, source)
}

/// Declares a parameter in the function scope and returns its AST.
pub(super) fn declare_param(g: &mut Gen, p: &Param, all: &[Param]) -> ast::Param {
    let scalar = |ty| env::scalar(p.name.clone(), ty, Storage::Param);
    let array_dims = match &p.kind {
        ParamKind::Array { inner, min_len } => {
            let mut dims = vec![*min_len];
            dims.extend(inner);
            g.env.declare(env::array(p.name.clone(), p.ty, dims, Storage::Param));
            Some(inner.iter().map(|&d| build::int(d as i32)).collect())
        }
        ParamKind::Length { array } => {
            let id = g.env.declare(scalar(Ty::Int));
            let len = match &all[*array].kind {
                ParamKind::Array { min_len, .. } => *min_len as i64,
                _ => 0,
            };
            g.env.lock(id);
            g.env.vars[id].range = Some((0, len));
            g.feature(Feature::LengthParam);
            None
        }
        ParamKind::Depth => {
            let id = g.env.declare(scalar(Ty::Int));
            g.env.lock(id);
            None
        }
        ParamKind::Count { max } => {
            let id = g.env.declare(scalar(Ty::Int));
            g.env.lock(id);
            g.env.vars[id].range = Some((0, *max as i64));
            g.feature(Feature::TripParam);
            None
        }
        ParamKind::Scalar => {
            g.env.declare(scalar(p.ty));
            None
        }
    };
    ast::Param { ty: p.ty.btype(), name: build::ident(&p.name), array_dims, span: Span::DUMMY }
}
