//! Statement mutations: a statement duplicated, deleted or moved past its neighbour, a
//! loop's bound changed, a loop wrapped around a statement. Only statements move (a
//! declaration moved or deleted would leave its uses without it), and only within their
//! block, so every name stays in scope.

use super::walk::{Visit, at_random_site, fresh};
use crate::Choices;
use sysyc::frontend::ast::*;

fn stmt_positions(b: &Block, keep: impl Fn(&Stmt) -> bool) -> Vec<usize> {
    b.items.iter().enumerate().filter_map(|(i, it)| matches!(it, BlockItem::Stmt(s) if keep(s)).then_some(i)).collect()
}

/// Applies `change` to a block that has a statement `keep` accepts, at one such statement's
/// position (drawn from `which`).
fn at_statement(
    unit: &mut CompUnit,
    choices: &mut dyn Choices,
    keep: &dyn Fn(&Stmt) -> bool,
    change: &mut dyn FnMut(&mut Block, usize),
) -> bool {
    let which = choices.below(1 << 20);
    at_random_site(
        unit,
        choices,
        &mut |v, _, _| matches!(v, Visit::Block(b) if !stmt_positions(b, keep).is_empty()),
        &mut |v, _, _| {
            let Visit::Block(b) = v else { return false };
            let positions = stmt_positions(b, keep);
            change(b, positions[(which % positions.len() as u64) as usize]);
            true
        },
    )
    .unwrap_or(false)
}

/// Duplicates a statement (the copy right after it).
pub fn duplicate(unit: &mut CompUnit, choices: &mut dyn Choices) -> bool {
    at_statement(unit, choices, &|s| !matches!(s, Stmt::Expr(None, _)), &mut |b, i| {
        let copy = b.items[i].clone();
        b.items.insert(i + 1, copy);
    })
}

/// Deletes a statement (never a `return`: that would only make a missing-return trap).
pub fn delete(unit: &mut CompUnit, choices: &mut dyn Choices) -> bool {
    at_statement(unit, choices, &|s| !matches!(s, Stmt::Return(..) | Stmt::Expr(None, _)), &mut |b, i| {
        b.items.remove(i);
    })
}

/// Swaps a statement with the statement after it.
pub fn move_down(unit: &mut CompUnit, choices: &mut dyn Choices) -> bool {
    let which = choices.below(1 << 20);
    at_random_site(
        unit,
        choices,
        &mut |v, _, _| matches!(v, Visit::Block(b) if !adjacent(b).is_empty()),
        &mut |v, _, _| {
            let Visit::Block(b) = v else { return false };
            let pairs = adjacent(b);
            let i = pairs[(which % pairs.len() as u64) as usize];
            b.items.swap(i, i + 1);
            true
        },
    )
    .unwrap_or(false)
}

/// Positions `i` where items `i` and `i + 1` are both statements.
fn adjacent(b: &Block) -> Vec<usize> {
    (0..b.items.len().saturating_sub(1))
        .filter(|&i| matches!((&b.items[i], &b.items[i + 1]), (BlockItem::Stmt(_), BlockItem::Stmt(_))))
        .collect()
}

fn is_bounded_loop(s: &Stmt) -> bool {
    matches!(s, Stmt::While { cond: Expr { kind: ExprKind::Binary(op, ..), .. }, .. }
        if matches!(op, BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Ne))
}

/// Changes a loop's bound: `i < n` becomes `i <= n`, `i < n + 1`, `i < n - 1` or `i < n + 2`
/// (likewise for the other comparisons).
pub fn loop_bound(unit: &mut CompUnit, choices: &mut dyn Choices) -> bool {
    let how = choices.below(4);
    at_statement(unit, choices, &is_bounded_loop, &mut |b, i| {
        let BlockItem::Stmt(Stmt::While { cond, .. }) = &mut b.items[i] else { return };
        let ExprKind::Binary(op, _, r) = &mut cond.kind else { return };
        match how {
            0 => {
                *op = match *op {
                    BinaryOp::Lt => BinaryOp::Le,
                    BinaryOp::Le => BinaryOp::Lt,
                    BinaryOp::Gt => BinaryOp::Ge,
                    BinaryOp::Ge => BinaryOp::Gt,
                    other => other,
                }
            }
            k => {
                let delta = [0, 1, -1, 2][k as usize];
                let bound = std::mem::replace(&mut **r, Expr::int(0));
                let (sym, d) = if delta < 0 { (BinaryOp::Sub, -delta) } else { (BinaryOp::Add, delta) };
                **r = Expr::new(ExprKind::Binary(sym, Box::new(bound), Box::new(Expr::int(d))), Span::DUMMY);
            }
        }
    })
}

/// The statement `{ int c = 0; while (c < trips) { c = c + 1; body } }`.
pub fn counted_loop(counter: &str, trips: i32, body: Vec<BlockItem>) -> Stmt {
    let var = |n: &str| LVal { name: Ident { name: n.into(), span: Span::DUMMY }, indices: Vec::new(), span: Span::DUMMY };
    let read = Expr::new(ExprKind::LVal(var(counter)), Span::DUMMY);
    let bin = |op, l, r| Expr::new(ExprKind::Binary(op, Box::new(l), Box::new(r)), Span::DUMMY);
    let step = Stmt::Assign { target: var(counter), value: bin(BinaryOp::Add, read.clone(), Expr::int(1)), span: Span::DUMMY };
    let mut items = vec![BlockItem::Stmt(step)];
    items.extend(body);
    let decl = Decl {
        is_const: false,
        ty: BType::Int,
        defs: vec![VarDef { name: Ident { name: counter.into(), span: Span::DUMMY }, dims: Vec::new(), init: Some(InitVal::Expr(Expr::int(0))), span: Span::DUMMY }],
        span: Span::DUMMY,
    };
    let lp = Stmt::While {
        cond: bin(BinaryOp::Lt, read, Expr::int(trips)),
        body: Box::new(Stmt::Block(Block { items, span: Span::DUMMY })),
        span: Span::DUMMY,
    };
    Stmt::Block(Block { items: vec![BlockItem::Decl(decl), BlockItem::Stmt(lp)], span: Span::DUMMY })
}

/// Wraps a loop of 1 to 3 trips around a statement (the counter steps first, so a `continue`
/// of the statement still ends).
pub fn wrap_loop(unit: &mut CompUnit, choices: &mut dyn Choices) -> bool {
    let counter = fresh(unit, "mut_w");
    let trips = choices.range(1, 3) as i32;
    at_statement(unit, choices, &|s| !matches!(s, Stmt::Expr(None, _)), &mut |b, i| {
        let item = std::mem::replace(&mut b.items[i], BlockItem::Stmt(Stmt::Expr(None, Span::DUMMY)));
        b.items[i] = BlockItem::Stmt(counted_loop(&counter, trips, vec![item]));
    })
}
