//! EMI (equivalence modulo inputs, after Orion): mutations guided by which statements the
//! reference run of the program executed. A statement that never ran is deleted or
//! rewritten (operators and constants changed inside it); code is inserted that this input
//! makes dead: `if (c) { ... }` right before an `if (c)` whose branch never ran (or
//! `if (!(c))` before one whose `else` never ran, `if (c)` before a loop whose body never
//! ran), with a copy of an earlier statement of the block or of the dead branch as body.
//!
//! Deletion and dead insertion keep the output of this input, so a change of output is a
//! miscompilation of code that runs; rewriting keeps it too, and the reference run of every
//! variant checks it anyway.

use super::walk::{Visit, at_random_site};
use super::{Coverage, operators, constants};
use crate::{Choices, SeededChoices};
use std::collections::HashSet;
use sysyc::frontend::ast::*;

fn missed(s: &Stmt, cov: &HashSet<Span>) -> bool {
    cov.contains(&s.span())
}

/// What dead code of the statement at a block position can go (`None`: nothing).
fn prunable(s: &Stmt, cov: &HashSet<Span>) -> bool {
    missed(s, cov)
        || matches!(s, Stmt::If { then_branch, else_branch, .. }
            if missed(then_branch, cov) || else_branch.as_ref().is_some_and(|e| missed(e, cov)))
}

fn positions(b: &Block, keep: impl Fn(&Stmt) -> bool) -> Vec<usize> {
    b.items.iter().enumerate().filter_map(|(i, it)| matches!(it, BlockItem::Stmt(s) if keep(s)).then_some(i)).collect()
}

fn empty_block() -> Stmt {
    Stmt::Block(Block { items: Vec::new(), span: Span::DUMMY })
}

/// Deletes a statement that never ran (or the branch of an `if` that never ran).
pub fn delete_dead(unit: &mut CompUnit, choices: &mut dyn Choices, cov: &Coverage) -> bool {
    let cov = &cov.missed;
    let which = choices.below(1 << 20);
    at_random_site(
        unit,
        choices,
        &mut |v, _, _| matches!(v, Visit::Block(b) if !positions(b, |s| prunable(s, cov)).is_empty()),
        &mut |v, _, _| {
            let Visit::Block(b) = v else { return };
            let ps = positions(b, |s| prunable(s, cov));
            let i = ps[(which % ps.len() as u64) as usize];
            let BlockItem::Stmt(s) = &mut b.items[i] else { return };
            if missed(s, cov) {
                b.items.remove(i);
            } else if let Stmt::If { then_branch, else_branch, .. } = s {
                if else_branch.as_ref().is_some_and(|e| missed(e, cov)) {
                    *else_branch = None;
                } else {
                    **then_branch = empty_block();
                }
            }
        },
    )
    .is_some()
}

/// Rewrites a statement that never ran: one to three operator, operand or constant
/// mutations inside it.
pub fn rewrite_dead(unit: &mut CompUnit, choices: &mut dyn Choices, cov: &Coverage) -> bool {
    let cov = &cov.missed;
    // The rewrite's own stream, drawn from this one (the site's closure cannot borrow it).
    let (which, stream) = (choices.below(1 << 20), choices.below(u64::MAX));
    at_random_site(
        unit,
        choices,
        &mut |v, _, _| matches!(v, Visit::Block(b) if !positions(b, |s| missed(s, cov)).is_empty()),
        &mut |v, _, _| {
            let Visit::Block(b) = v else { return false };
            let ps = positions(b, |s| missed(s, cov));
            let BlockItem::Stmt(stmt) = &mut b.items[ps[(which % ps.len() as u64) as usize]] else { return false };
            rewrite(stmt, &mut SeededChoices::new(stream))
        },
    )
    .unwrap_or(false)
}

/// One to three operator, operand or constant mutations inside `stmt`.
fn rewrite(stmt: &mut Stmt, choices: &mut dyn Choices) -> bool {
    // The statement alone in a scratch function: the operators used need no scope.
    let mut scratch = CompUnit {
        items: vec![Item::Func(FuncDef {
            ret: None,
            name: Ident { name: "scratch".into(), span: Span::DUMMY },
            params: Vec::new(),
            body: Block { items: vec![BlockItem::Stmt(stmt.clone())], span: Span::DUMMY },
            span: Span::DUMMY,
        })],
    };
    for _ in 0..choices.range(1, 3) {
        match choices.below(3) {
            0 => operators::swap_binary(&mut scratch, choices),
            1 => operators::swap_operands(&mut scratch, choices),
            _ => constants::boundary(&mut scratch, choices),
        };
    }
    let before = stmt.clone();
    if let Some(Item::Func(f)) = scratch.items.pop()
        && let Some(BlockItem::Stmt(s)) = f.body.items.into_iter().next()
    {
        *stmt = s;
    }
    *stmt != before
}

/// The condition under which the statement at a block position runs dead code, when it has
/// one: its own (a `then` or loop body that never ran) or its negation (an `else` that never
/// ran); and the dead statement.
fn dead_guard(s: &Stmt, cov: &HashSet<Span>) -> Option<(Expr, Stmt)> {
    if missed(s, cov) {
        return None;
    }
    match s {
        Stmt::If { cond, then_branch, .. } if missed(then_branch, cov) => Some((cond.clone(), (**then_branch).clone())),
        Stmt::If { cond, else_branch: Some(e), .. } if missed(e, cov) => {
            Some((Expr::new(ExprKind::Unary(UnaryOp::Not, Box::new(cond.clone())), Span::DUMMY), (**e).clone()))
        }
        Stmt::While { cond, body, .. } if missed(body, cov) => Some((cond.clone(), (**body).clone())),
        _ => None,
    }
}

/// Inserts code this input makes dead (see the module documentation).
pub fn insert_dead(unit: &mut CompUnit, choices: &mut dyn Choices, cov: &Coverage) -> bool {
    let cov = &cov.missed;
    let (which, body_pick) = (choices.below(1 << 20), choices.below(1 << 20));
    at_random_site(
        unit,
        choices,
        &mut |v, _, _| matches!(v, Visit::Block(b) if !positions(b, |s| dead_guard(s, cov).is_some()).is_empty()),
        &mut |v, _, _| {
            let Visit::Block(b) = v else { return };
            let ps = positions(b, |s| dead_guard(s, cov).is_some());
            let i = ps[(which % ps.len() as u64) as usize];
            let BlockItem::Stmt(s) = &b.items[i] else { return };
            let Some((cond, dead)) = dead_guard(s, cov) else { return };
            // A copy of an earlier statement of the block (its names are in scope here),
            // else the dead branch itself.
            let earlier = positions(b, |s| !matches!(s, Stmt::Expr(None, _)));
            let earlier: Vec<usize> = earlier.into_iter().filter(|&k| k < i).collect();
            let body = match earlier.len() {
                0 => dead,
                n => match &b.items[earlier[(body_pick % n as u64) as usize]] {
                    BlockItem::Stmt(s) => s.clone(),
                    BlockItem::Decl(_) => dead,
                },
            };
            let guarded = Stmt::If {
                cond,
                then_branch: Box::new(Stmt::Block(Block { items: vec![BlockItem::Stmt(body)], span: Span::DUMMY })),
                else_branch: None,
                span: Span::DUMMY,
            };
            b.items.insert(i, BlockItem::Stmt(guarded));
        },
    )
    .is_some()
}
