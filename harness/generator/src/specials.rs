//! Float special values at float compares.
//!
//! Everywhere else the generator keeps floats finite (`value.rs`). Here NaN, ±inf and -0.0
//! are made on purpose and compared, because a compiler gets exactly these wrong: a `<` on
//! floats is not the negation of `>=` (unordered operands make both false), so an inverted,
//! swapped or if-converted branch that uses the integer condition codes (`lt`, `ge`) instead
//! of the float ones (`mi`, `ls`), a fold of `x - x` or `x * 0.0` to `0.0`, or a constant
//! folder that orders NaN, each changes what runs.
//!
//! * **Made from** arithmetic on finite values the compiler cannot see (`(x - x) / (x - x)`,
//!   `1.0 / (x - x)`, `-(x - x)`, `(x * x + 1.0) * 3.0e38 * 4.0`, `inf - inf`, `inf * 0.0`),
//!   constant arithmetic (`0.0 / 0.0`, `1.0e38 * 10.0`), and the input (`main` reads `nan`,
//!   `inf`, `-inf`, `-0x0p+0`, the largest float, a subnormal into locals at its top).
//! * **Compared** ([`special_compares`]) under all six predicates, with the operands either
//!   way round, as an if/else with one small assignment per side (if-conversion's shape), a
//!   then-only `if`, the inverted forms `if (a < b) {} else ..` and `if (a < b == 0)`,
//!   `!a`, inside `&&`/`||`, as a loop's exit test next to a counter, and through a call of a
//!   comparing function (float arguments in registers, [`comparer`]).
//!
//! UB-free: the specials live in locals the generator's environment does not know, so no
//! other code reads them — no NaN reaches arithmetic that is stored, converted to `int` or
//! printed (NaN's sign bit differs between targets). Only the comparisons' outcomes, as
//! integers, go into the checksum.

use super::build;
use super::env::{Func, Param, ParamKind};
use super::expr::{fit, float_expr};
use super::features::Feature;
use super::prelude::Helper;
use super::state::Gen;
use super::value::{ECtx, FLOAT_VAR_BOUND, Ty};
use sysyc::frontend::ast::{self, BType, BinaryOp, BlockItem, Expr, FuncDef, InitVal, Item, Span, Stmt, UnaryOp};

/// The six comparison predicates.
const PREDICATES: [BinaryOp; 6] = [BinaryOp::Lt, BinaryOp::Gt, BinaryOp::Le, BinaryOp::Ge, BinaryOp::Eq, BinaryOp::Ne];

/// Values `main` may read into a special local: NaN (both signs), the infinities, negative
/// zero, the largest finite float, a subnormal.
const INPUT_SPECIALS: [f32; 8] = [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, f32::MAX, 1.0e-40, -3.0e38];

/// Work of one compare statement.
const COMPARE_COST: u64 = 8;

/// A few `float spN = getfloat();` at the top of `main`, reading special values; their names
/// go to `g.fcx.specials` (for [`special_compares`] in `main`), not to the environment.
pub(super) fn input_specials(g: &mut Gen) -> Vec<BlockItem> {
    let mut items = Vec::new();
    for _ in 0..g.c.range(1, 2) {
        let v = INPUT_SPECIALS[g.pick_index(INPUT_SPECIALS.len())];
        let hex = g.c.chance(0.5);
        g.unit.input.float(v, hex, false);
        let name = g.env.local_name("sp");
        items.push(BlockItem::Decl(build::decl(false, BType::Float, &name, vec![], Some(InitVal::Expr(build::call("getfloat", vec![]))))));
        g.fcx.specials.push(name);
    }
    g.feature(Feature::FloatSpecialInput);
    g.feature(Feature::GetFloat);
    g.work.charge(items.len() as u64 * 5);
    items
}

/// `int fcN(float p0, float p1)`: a code of how its arguments compare under several
/// predicates (an ordinary pure function of the program, called with ordinary floats
/// elsewhere and with specials by [`special_compares`]).
pub(super) fn comparer(g: &mut Gen) -> Item {
    let name = g.env.global_name("fc");
    let (a, b) = ("p0", "p1");
    let mut items = vec![build::int_decl("r", build::int(0))];
    let n = g.c.range(3, 7);
    for k in 0..n {
        let p = PREDICATES[g.pick_index(PREDICATES.len())];
        let (x, y) = if g.c.chance(0.5) { (a, b) } else { (b, a) };
        let test = build::bin(p, build::var(x), build::var(y));
        let add = build::assign_var("r", build::bin(BinaryOp::Add, build::var("r"), build::int(1 << k)));
        items.push(build::stmt(match g.c.below(3) {
            0 => build::if_stmt(test, add, None),
            1 => build::if_stmt(test, build::block_stmt(vec![]), Some(add)),
            _ => build::if_stmt(test, add, Some(build::assign_var("r", build::bin(BinaryOp::Sub, build::var("r"), build::int(1))))),
        }));
    }
    items.push(build::stmt(build::ret(Some(build::var("r")))));
    let params = vec![Param { name: a.into(), ty: Ty::Float, kind: ParamKind::Scalar }, Param { name: b.into(), ty: Ty::Float, kind: ParamKind::Scalar }];
    let ast_params = params.iter().map(|p| ast::Param { ty: BType::Float, name: build::ident(&p.name), array_dims: None, span: Span::DUMMY }).collect();
    g.env.funcs.push(Func {
        name: name.clone(),
        ret: Some(Ty::Int),
        params,
        pure: true,
        cost: n as u64 * 4 + 4,
        max_depth: None,
        globals_used: vec![],
        ret_bound: FLOAT_VAR_BOUND,
        globals_written: vec![],
        effect: None,
    });
    g.feature(Feature::PureFunction);
    Item::Func(FuncDef { ret: Some(BType::Int), name: build::ident(&name), params: ast_params, body: build::block(items), span: Span::DUMMY })
}

/// A finite float the compiler cannot see through (within `FLOAT_VAR_BOUND`), as a float.
fn finite(g: &mut Gen) -> Expr {
    let x = float_expr(g, ECtx::pure(2));
    let x = fit(g, x, FLOAT_VAR_BOUND);
    match x.ty {
        Ty::Float => x.e,
        Ty::Int => build::bin(BinaryOp::Mul, x.e, build::float(1.0)),
    }
}

/// A special value: NaN, ±inf or -0.0 from arithmetic on a finite value, from constants,
/// or (in `main`) one read from the input.
fn special(g: &mut Gen) -> Expr {
    let inputs = g.fcx.specials.clone();
    let choice = g.c.weighted(&[3, 1, 3, 2, 2, 2, 1, 1, 1, 1, 1, if inputs.is_empty() { 0 } else { 6 }]);
    let zero = |g: &mut Gen| {
        let x = finite(g);
        build::bin(BinaryOp::Sub, x.clone(), x)
    };
    g.work.charge(6);
    match choice {
        0 => build::bin(BinaryOp::Div, zero(g), zero(g)),
        1 => build::bin(BinaryOp::Div, build::bin(BinaryOp::Mul, finite(g), build::float(0.0)), build::float(0.0)),
        2 => build::bin(BinaryOp::Div, build::float(1.0), zero(g)),
        3 => build::bin(BinaryOp::Div, build::float(-1.0), zero(g)),
        4 => {
            let x = finite(g);
            let square = build::bin(BinaryOp::Add, build::bin(BinaryOp::Mul, x.clone(), x), build::float(1.0));
            build::bin(BinaryOp::Mul, build::bin(BinaryOp::Mul, square, build::float(3.0e38)), build::float(4.0))
        }
        5 => build::neg(zero(g)),
        6 => build::bin(BinaryOp::Mul, zero(g), build::float(-1.0)),
        7 => {
            let inf = build::bin(BinaryOp::Div, build::float(1.0), zero(g));
            build::bin(BinaryOp::Sub, inf.clone(), inf)
        }
        8 => build::bin(BinaryOp::Mul, build::bin(BinaryOp::Div, build::float(1.0), zero(g)), build::float(0.0)),
        9 => build::bin(BinaryOp::Div, build::float(0.0), build::float(0.0)),
        10 => build::bin(BinaryOp::Mul, build::float(1.0e38), build::float(10.0)),
        _ => build::var(&inputs[g.pick_index(inputs.len())]),
    }
}

/// What a special is compared with: a literal at the edges, an ordinary float, or a special.
fn comparand(g: &mut Gen) -> Expr {
    const EDGES: [f32; 7] = [0.0, -0.0, 1.0, -1.5, 3.0e38, -3.4e38, 1.0e-30];
    match g.c.below(3) {
        0 => build::float(EDGES[g.pick_index(EDGES.len())]),
        1 => finite(g),
        _ => special(g),
    }
}

/// A block comparing special values (see the module documentation): two float locals, a
/// few compare statements accumulating into an `int`, the `int` mixed into the checksum.
pub(super) fn special_compares(g: &mut Gen) -> Vec<BlockItem> {
    g.feature(Feature::FloatSpecial);
    let (s, o, r) = (g.env.local_name("sp"), g.env.local_name("sq"), g.env.local_name("sr"));
    let s_value = special(g);
    let o_value = comparand(g);
    let float_decl = |name: &str, e: Expr| BlockItem::Decl(build::decl(false, BType::Float, name, vec![], Some(InitVal::Expr(e))));
    let mut items = vec![float_decl(&s, s_value), float_decl(&o, o_value), build::int_decl(&r, build::int(0))];
    let comparers: Vec<usize> = (0..g.env.funcs.len())
        .filter(|&f| {
            let f = &g.env.funcs[f];
            f.ret == Some(Ty::Int) && f.params.len() == 2 && f.params.iter().all(|p| p.ty == Ty::Float && p.kind == ParamKind::Scalar) && f.pure
        })
        .filter(|&f| g.work.affordable(g.env.funcs[f].cost + 3))
        .collect();
    for _ in 0..g.c.range(2, 5) {
        if !g.work.affordable(COMPARE_COST * 6) {
            break;
        }
        let stmt = compare_stmt(g, &s, &o, &r, &comparers);
        items.push(build::stmt(stmt));
    }
    g.use_helper(Helper::Mix);
    g.work.charge(Helper::Mix.cost() + 2);
    items.push(build::stmt(build::expr_stmt(build::call(Helper::Mix.name(), vec![build::var(&r)]))));
    vec![build::stmt(build::block_stmt(items))]
}

/// One compare statement over the specials `s` and `o`, accumulating into `r`.
fn compare_stmt(g: &mut Gen, s: &str, o: &str, r: &str, comparers: &[usize]) -> Stmt {
    let test = |g: &mut Gen| {
        let p = PREDICATES[g.pick_index(PREDICATES.len())];
        let (a, b) = match g.c.below(4) {
            0 => (s, o),
            1 => (o, s),
            2 => (s, s),
            _ => (o, o),
        };
        build::bin(p, build::var(a), build::var(b))
    };
    let add = |g: &mut Gen| {
        let k = g.c.range(1, 99) as i32;
        build::assign_var(r, build::bin(BinaryOp::Add, build::var(r), build::int(k)))
    };
    let scale = |g: &mut Gen| {
        let k = g.c.range(1, 9) as i32;
        build::assign_var(r, build::bin(BinaryOp::Add, build::bin(BinaryOp::Mul, build::var(r), build::int(3)), build::int(k)))
    };
    g.work.charge(COMPARE_COST);
    match g.c.below(9) {
        // If-conversion's shape: one small assignment per side.
        0 | 1 => {
            let t = test(g);
            let (a, b) = (add(g), scale(g));
            build::if_stmt(t, a, Some(b))
        }
        2 => {
            let t = test(g);
            build::if_stmt(t, add(g), None)
        }
        // Inverted: the work on the false side.
        3 => {
            let t = test(g);
            build::if_stmt(t, build::block_stmt(vec![]), Some(add(g)))
        }
        // Inverted as a value: `a < b == 0`.
        4 => {
            let t = test(g);
            let inverted = build::bin(if g.c.chance(0.7) { BinaryOp::Eq } else { BinaryOp::Ne }, t, build::int(0));
            build::if_stmt(inverted, add(g), None)
        }
        // `!a`: true for ±0.0 only.
        5 => {
            let x = if g.c.chance(0.5) { s } else { o };
            build::if_stmt(build::unary(UnaryOp::Not, build::var(x)), add(g), Some(scale(g)))
        }
        // In a short-circuit chain.
        6 => {
            let (t1, t2) = (test(g), test(g));
            let op = if g.c.chance(0.5) { BinaryOp::And } else { BinaryOp::Or };
            build::if_stmt(build::bin(op, t1, t2), add(g), None)
        }
        // The exit test of a loop, next to a counter.
        7 => {
            let k = g.env.local_name("sk");
            let trips = g.c.range(2, 5) as i32;
            let bound = build::bin(BinaryOp::Lt, build::var(&k), build::int(trips));
            let t = test(g);
            let cond = if g.c.chance(0.5) { build::bin(BinaryOp::And, bound, t) } else { build::bin(BinaryOp::And, t, bound) };
            let body = vec![
                build::stmt(build::assign_var(r, build::bin(BinaryOp::Add, build::var(r), build::var(&k)))),
                build::stmt(build::increment(&k, 1)),
            ];
            g.work.charge(COMPARE_COST * trips as u64);
            build::block_stmt(vec![build::int_decl(&k, build::int(0)), build::stmt(build::while_stmt(cond, build::block_stmt(body)))])
        }
        // Through a call: float arguments in registers.
        _ if !comparers.is_empty() => {
            let f = comparers[g.pick_index(comparers.len())];
            let func = g.env.funcs[f].clone();
            g.work.charge(func.cost + 3);
            g.feature(Feature::FloatSpecialCall);
            g.feature(Feature::Call);
            let (a, b) = if g.c.chance(0.5) { (s, o) } else { (o, s) };
            let call = build::call(&func.name, vec![build::var(a), build::var(b)]);
            build::assign_var(r, build::bin(BinaryOp::Add, build::var(r), call))
        }
        _ => {
            let t = test(g);
            build::if_stmt(t, scale(g), Some(add(g)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::input;
    use super::*;

    #[test]
    fn input_specials_read_back_as_written() {
        for v in INPUT_SPECIALS {
            for hex in [false, true] {
                let mut w = input::InputWriter::default();
                w.float(v, hex, false);
                let mut io = sysyc::runtime::io::Io::new(w.finish());
                let back = io.get_float().expect("a float");
                assert!(back.to_bits() == v.to_bits() || v.is_nan() && back.is_nan(), "{v:?} (hex {hex}) read back as {back:?}");
            }
        }
    }
}
