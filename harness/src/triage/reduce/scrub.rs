//! Removing a name together with its uses, so that deleting a declaration or a function
//! that is still referred to gives a valid program instead of a scoping error.
//!
//! A one-at-a-time deletion cannot remove `int r3 = ...;` while `mix(r0 + r3)` follows: the
//! candidate does not compile, and the use can only go after the declaration has. Generated
//! programs are full of such chains, so the reducer deletes a declaration *and* rewrites its
//! scope: a read of the variable (or of an element of the array) becomes `0`, an assignment
//! to it becomes its right-hand side as an expression statement when that has a call (the
//! call's effects may be what the failure needs), and disappears otherwise. Deleting a
//! function turns every call to it into `0`. Uses that cannot become `0` (an array passed
//! whole to a call, a constant used as an array dimension) are left as they are, and the
//! front end rejects the candidate, as it rejected every such deletion before.
//!
//! Shadowing is respected: a declaration of the same name in a nested block, or a parameter
//! of the same name, ends the rewrite in its scope.

use sysyc::frontend::ast::*;

/// What is being removed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Removed {
    /// A variable or constant (scalar or array).
    Var,
    /// A function.
    Func,
}

/// Rewrites the uses of `name` in `items`, the rest of the scope of the removed declaration
/// (block items following it).
pub fn block_items(items: &mut Vec<BlockItem>, name: &str, removed: Removed) {
    let mut i = 0;
    while i < items.len() {
        match &mut items[i] {
            BlockItem::Decl(d) => {
                if decl(d, name, removed) {
                    return;
                }
            }
            BlockItem::Stmt(s) => {
                if let Some(replacement) = stmt(s, name, removed) {
                    match replacement {
                        Some(s) => items[i] = BlockItem::Stmt(s),
                        None => {
                            items.remove(i);
                            continue;
                        }
                    }
                }
            }
        }
        i += 1;
    }
}

/// Rewrites the uses of `name` in the top-level items (the rest of the scope of a removed
/// global declaration or function).
pub fn unit_items(items: &mut [Item], name: &str, removed: Removed) {
    for item in items {
        match item {
            Item::Decl(d) => {
                if decl(d, name, removed) {
                    return;
                }
            }
            Item::Func(f) => {
                for p in &mut f.params {
                    p.array_dims.iter_mut().flatten().for_each(|e| expr(e, name, removed));
                }
                let shadowed = removed == Removed::Var && f.params.iter().any(|p| p.name.name == name);
                if !shadowed {
                    block_items(&mut f.body.items, name, removed);
                }
            }
        }
    }
}

/// Rewrites the uses in a declaration; true if it declares `name` again (the rewrite stops:
/// the rest of the scope sees the new declaration).
fn decl(d: &mut Decl, name: &str, removed: Removed) -> bool {
    for def in &mut d.defs {
        if removed == Removed::Var && def.name.name == name {
            return true;
        }
        def.dims.iter_mut().for_each(|e| expr(e, name, removed));
        if let Some(i) = &mut def.init {
            init(i, name, removed);
        }
    }
    false
}

fn init(i: &mut InitVal, name: &str, removed: Removed) {
    match i {
        InitVal::Expr(e) => expr(e, name, removed),
        InitVal::List(items, _) => items.iter_mut().for_each(|i| init(i, name, removed)),
    }
}

/// Rewrites the uses in a statement. `Some(replacement)` when the statement itself must go:
/// `Some(None)` deletes it, `Some(Some(s))` replaces it.
fn stmt(s: &mut Stmt, name: &str, removed: Removed) -> Option<Option<Stmt>> {
    match s {
        Stmt::Assign { target, value, span } => {
            if removed == Removed::Var && target.name.name == name {
                let mut value = value.clone();
                expr(&mut value, name, removed);
                return Some(has_call(&value).then(|| Stmt::Expr(Some(value), *span)));
            }
            target.indices.iter_mut().for_each(|e| expr(e, name, removed));
            expr(value, name, removed);
        }
        Stmt::Expr(Some(e), _) | Stmt::Return(Some(e), _) => expr(e, name, removed),
        Stmt::Block(b) => block_items(&mut b.items, name, removed),
        Stmt::If { cond, then_branch, else_branch, .. } => {
            expr(cond, name, removed);
            nested(then_branch, name, removed);
            if let Some(e) = else_branch {
                nested(e, name, removed);
            }
        }
        Stmt::While { cond, body, .. } => {
            expr(cond, name, removed);
            nested(body, name, removed);
        }
        Stmt::Expr(None, _) | Stmt::Return(None, _) | Stmt::Break(_) | Stmt::Continue(_) => {}
    }
    None
}

/// A statement in a position that needs one (a branch or a loop body): a deleted statement
/// becomes the empty statement.
fn nested(s: &mut Stmt, name: &str, removed: Removed) {
    if let Some(replacement) = stmt(s, name, removed) {
        *s = replacement.unwrap_or(Stmt::Expr(None, Span::DUMMY));
    }
}

fn expr(e: &mut Expr, name: &str, removed: Removed) {
    let gone = match &e.kind {
        ExprKind::LVal(lv) => removed == Removed::Var && lv.name.name == name,
        ExprKind::Call { name: callee, .. } => removed == Removed::Func && callee.name == name,
        _ => false,
    };
    if gone {
        *e = Expr::int(0);
        return;
    }
    match &mut e.kind {
        ExprKind::IntLit(..) | ExprKind::FloatLit(_) | ExprKind::StrLit(_) => {}
        ExprKind::LVal(lv) => lv.indices.iter_mut().for_each(|i| expr(i, name, removed)),
        ExprKind::Call { args, .. } => args.iter_mut().for_each(|a| expr(a, name, removed)),
        ExprKind::Unary(_, a) => expr(a, name, removed),
        ExprKind::Binary(_, a, b) => {
            expr(a, name, removed);
            expr(b, name, removed);
        }
    }
}

/// Whether evaluating `e` calls a function.
fn has_call(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call { .. } => true,
        ExprKind::IntLit(..) | ExprKind::FloatLit(_) | ExprKind::StrLit(_) => false,
        ExprKind::LVal(lv) => lv.indices.iter().any(has_call),
        ExprKind::Unary(_, a) => has_call(a),
        ExprKind::Binary(_, a, b) => has_call(a) || has_call(b),
    }
}

/// The names a declaration introduces.
pub fn declared(d: &Decl) -> impl Iterator<Item = &str> {
    d.defs.iter().map(|def| def.name.name.as_str())
}
