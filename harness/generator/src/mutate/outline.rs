//! Call mutations: an expression moved into a new helper function (its local operands become
//! parameters), or into a recursive one (`h(d, ...)` adds `d + (d-1) + ... + 1` to the
//! expression through `d` non-tail calls, so neither `inline` nor `tail-recursion` removes
//! it), and calls of existing functions inserted, preferably in loops (next to the loads and
//! stores of what the callee touches).
//!
//! A helper is placed right before the function it came from, so it sees the same globals
//! and earlier functions; an expression that calls its own function, passes an array or
//! holds a string is not moved.

use super::walk::{Env, Site, Visit, at_random_site, fresh, is_builtin, visit_expr_mut};
use crate::Choices;
use sysyc::frontend::ast::*;

fn ident(name: &str) -> Ident {
    Ident { name: name.into(), span: Span::DUMMY }
}

fn read(name: &str) -> Expr {
    Expr::new(ExprKind::LVal(LVal { name: ident(name), indices: Vec::new(), span: Span::DUMMY }), Span::DUMMY)
}

fn call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::new(ExprKind::Call { name: ident(name), args }, Span::DUMMY)
}

fn bin(op: BinaryOp, l: Expr, r: Expr) -> Expr {
    Expr::new(ExprKind::Binary(op, Box::new(l), Box::new(r)), Span::DUMMY)
}

/// Whether `e` can be moved into a helper placed before the function of `site`.
fn movable(e: &Expr, env: &Env, site: &Site) -> bool {
    let mut ok = env.type_of(e).is_some();
    super::walk::visit_expr(e, &mut |x| match &x.kind {
        ExprKind::StrLit(_) => ok = false,
        ExprKind::LVal(lv) => match env.lookup(&lv.name.name) {
            Some(v) if v.global => ok &= v.dims == lv.indices.len() || !v.is_const,
            Some(v) => ok &= v.dims == lv.indices.len(),
            None => ok = false,
        },
        ExprKind::Call { name, .. } => {
            ok &= env.funcs.get(&name.name).is_some_and(|s| s.item < site.func || (s.item == usize::MAX && !is_builtin_reader(&name.name)))
        }
        _ => {}
    });
    ok
}

/// Input built-ins stay where they are (moving one changes nothing, but a helper that
/// reads input is the same test with a longer name).
fn is_builtin_reader(name: &str) -> bool {
    name.starts_with("get")
}

/// The movable subexpressions of `e` with at least one operator, in pre-order.
fn candidates(e: &Expr, env: &Env, site: &Site) -> u64 {
    let mut n = 0;
    super::walk::visit_expr(e, &mut |x| {
        n += u64::from(!matches!(x.kind, ExprKind::IntLit(..) | ExprKind::FloatLit(_) | ExprKind::LVal(_)) && movable(x, env, site));
    });
    n
}

/// Replaces the local operands of `e` by parameters; returns the parameters (name, type)
/// and the arguments of the call.
fn parameterise(e: &mut Expr, env: &Env) -> (Vec<(String, BType)>, Vec<Expr>) {
    let mut params = Vec::new();
    let mut args = Vec::new();
    visit_expr_mut(e, &mut |x| {
        let ExprKind::LVal(lv) = &x.kind else { return true };
        let Some(var) = env.lookup(&lv.name.name).filter(|v| !v.global) else { return true };
        let name = format!("mut_p{}", params.len());
        params.push((name.clone(), var.ty));
        args.push(std::mem::replace(x, read(&name)));
        false
    });
    (params, args)
}

fn helper(ret: BType, name: &str, params: Vec<(String, BType)>, body: Vec<BlockItem>) -> Item {
    Item::Func(FuncDef {
        ret: Some(ret),
        name: ident(name),
        params: params.into_iter().map(|(n, ty)| Param { ty, name: ident(&n), array_dims: None, span: Span::DUMMY }).collect(),
        body: Block { items: body, span: Span::DUMMY },
        span: Span::DUMMY,
    })
}

/// Moves an expression into a helper (`recursive`: through `depth` non-tail self-calls).
fn outline(unit: &mut CompUnit, choices: &mut dyn Choices, recursive: bool) -> bool {
    let name = fresh(unit, if recursive { "mut_r" } else { "mut_h" });
    let (which, depth) = (choices.below(1 << 20), choices.range(1, 6) as i32);
    let made = at_random_site(
        unit,
        choices,
        &mut |v, env, site| !site.constant && matches!(v, Visit::Root(e) if candidates(e, env, site) > 0),
        &mut |v, env, site| {
            let Visit::Root(root) = v else { return None };
            let k = which % candidates(root, env, site);
            let mut seen = 0;
            let mut made = None;
            visit_expr_mut(root, &mut |x| {
                if made.is_some() {
                    return false;
                }
                let candidate = !matches!(x.kind, ExprKind::IntLit(..) | ExprKind::FloatLit(_) | ExprKind::LVal(_)) && movable(x, env, site);
                if candidate && seen == k {
                    let ty = env.type_of(x).expect("movable expressions have a type");
                    let mut body = x.clone();
                    let (mut params, mut args) = parameterise(&mut body, env);
                    let mut items = Vec::new();
                    if recursive {
                        params.insert(0, ("mut_d".into(), BType::Int));
                        args.insert(0, Expr::int(depth));
                        let mut inner: Vec<Expr> = params.iter().map(|(n, _)| read(n)).collect();
                        inner[0] = bin(BinaryOp::Sub, read("mut_d"), Expr::int(1));
                        let deeper = bin(BinaryOp::Add, call(&name, inner), read("mut_d"));
                        items.push(BlockItem::Stmt(Stmt::If {
                            cond: bin(BinaryOp::Gt, read("mut_d"), Expr::int(0)),
                            then_branch: Box::new(Stmt::Return(Some(deeper), Span::DUMMY)),
                            else_branch: None,
                            span: Span::DUMMY,
                        }));
                    }
                    items.push(BlockItem::Stmt(Stmt::Return(Some(body), Span::DUMMY)));
                    *x = call(&name, args);
                    made = Some((site.func, helper(ty, &name, params, items)));
                    return false;
                }
                seen += u64::from(candidate);
                true
            });
            made
        },
    );
    match made.flatten() {
        Some((at, item)) => {
            unit.items.insert(at, item);
            true
        }
        None => false,
    }
}

/// Moves an expression into a new helper function.
pub fn outline_helper(unit: &mut CompUnit, choices: &mut dyn Choices) -> bool {
    outline(unit, choices, false)
}

/// Moves an expression into a new recursive helper function.
pub fn outline_recursive(unit: &mut CompUnit, choices: &mut dyn Choices) -> bool {
    outline(unit, choices, true)
}

/// The user functions callable from `site` (defined before it) with arguments `env` can
/// provide: scalars (a variable of the type or a small literal) and one-dimensional arrays
/// (a variable of the type).
fn callable(env: &Env, site: &Site) -> Vec<String> {
    let mut out: Vec<String> = env
        .funcs
        .iter()
        .filter(|(n, s)| s.item < site.func && !is_builtin(n))
        .filter(|(_, s)| s.params.iter().all(|&(ty, dims)| dims == 0 || (dims == 1 && !env.vars_of(ty, 1).is_empty())))
        .map(|(n, _)| n.clone())
        .collect();
    out.sort();
    out
}

/// Inserts a call of an earlier function (its result dropped) into a block, inside a loop
/// with probability 3/4 when the program has a loop with something to call.
pub fn insert_call(unit: &mut CompUnit, choices: &mut dyn Choices) -> bool {
    let draws: Vec<u64> = (0..24).map(|_| choices.below(1 << 30)).collect();
    let in_loop = choices.chance(0.75);
    for want_loop in [in_loop, false] {
        let made = at_random_site(
            unit,
            choices,
            &mut |v, env, site| (site.in_loop || !want_loop) && matches!(v, Visit::Block(_)) && !callable(env, site).is_empty(),
            &mut |v, env, site| {
                let Visit::Block(b) = v else { return };
                let funcs = callable(env, site);
                let name = &funcs[(draws[0] % funcs.len() as u64) as usize];
                let sig = &env.funcs[name];
                let args = sig
                    .params
                    .iter()
                    .enumerate()
                    .map(|(i, &(ty, dims))| {
                        let r = draws[(i + 2) % draws.len()];
                        let vars = env.vars_of(ty, dims);
                        if dims > 0 || (r.is_multiple_of(2) && !vars.is_empty()) {
                            read(&vars[(r / 2 % vars.len() as u64) as usize])
                        } else if ty == BType::Float {
                            Expr::float((r / 2 % 5) as f32 - 1.0)
                        } else {
                            Expr::int((r / 2 % 5) as i32 - 1)
                        }
                    })
                    .collect();
                let at = (draws[1] % (b.items.len() as u64 + 1)) as usize;
                b.items.insert(at, BlockItem::Stmt(Stmt::Expr(Some(call(name, args)), Span::DUMMY)));
            },
        );
        if made.is_some() {
            return true;
        }
    }
    false
}
