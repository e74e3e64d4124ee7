//! The reducer's moves: every way to make a SysY AST a little smaller, numbered.
//!
//! An [`EditKind`] is one family of moves; its *sites* are the places in a tree where it
//! applies, numbered in a fixed pre-order walk (items in order, statements in order,
//! expressions outside-in, left to right), one number per alternative at a place. [`count`]
//! gives the number of sites and [`apply`] returns the tree with site `i` edited, so the
//! driver can enumerate candidates deterministically without materialising them all.
//!
//! Moves do not check validity: a candidate that breaks scoping, typing or `break`
//! placement is rejected by the front end in the driver's test, which is simpler and exactly
//! as strict as the language. The deletions do one thing for validity: what referred to a
//! deleted declaration or function is rewritten ([`scrub`]), since otherwise no declaration
//! with a use could ever go.

use std::ops::Range;

use sysyc::frontend::ast::*;

use super::scrub::{self, Removed};

/// A family of moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EditKind {
    /// Delete a top-level declaration or function (never `main`); later uses rewritten.
    DeleteItem,
    /// Delete a run of consecutive items of a block: the block split into aligned runs of
    /// half its length (rounded down to a power of two), then quarters, ... down to pairs,
    /// longest first, as ddmin splits a list. One candidate removes what would take many
    /// single deletions, and a declaration goes together with the statements using it.
    DeleteRun,
    /// Delete a statement or declaration of a block; later uses rewritten.
    DeleteBlockItem,
    /// `if` → its then or else branch, `if/else` → `if`, `while` → its body once, a nested
    /// `{ ... }` → its items spliced into the enclosing block, a call statement `f(.., x, ..)`
    /// → `putint(x)` (the value printed where a helper would have folded it into a checksum;
    /// `f` is deleted when that was its last call).
    SimplifyStmt,
    /// Delete one variable of a multi-variable declaration (`int a, b;` → `int a;`).
    DeleteDef,
    /// Delete a parameter of a function and the matching argument of every call to it.
    DeleteParam,
    /// Delete an element of an initialiser list, or a whole initialiser.
    DeleteInit,
    /// Replace an expression by `0`, by `1`, or by one of its operands or call arguments
    /// (array dimensions and loop bounds are expressions, so this also shrinks arrays and
    /// loops; a call replaced by its argument is a crude inlining).
    ReplaceExpr,
    /// Halve an integer literal, truncate a float literal.
    ShrinkLiteral,
}

impl EditKind {
    /// Every kind, coarse moves first (they remove the most per accepted candidate).
    pub const ALL: [EditKind; 9] = [
        EditKind::DeleteItem,
        EditKind::DeleteRun,
        EditKind::DeleteBlockItem,
        EditKind::SimplifyStmt,
        EditKind::DeleteDef,
        EditKind::DeleteParam,
        EditKind::DeleteInit,
        EditKind::ReplaceExpr,
        EditKind::ShrinkLiteral,
    ];
}

/// The number of sites of `kind` in `unit`.
pub fn count(unit: &CompUnit, kind: EditKind) -> usize {
    let mut copy = unit.clone();
    let mut w = Walker { kind, target: None, seen: 0, done: false, printed_instead: None };
    w.unit(&mut copy);
    w.seen
}

/// `unit` with site `index` of `kind` edited; `None` if there is no such site.
pub fn apply(unit: &CompUnit, kind: EditKind, index: usize) -> Option<CompUnit> {
    let mut copy = unit.clone();
    let mut w = Walker { kind, target: Some(index), seen: 0, done: false, printed_instead: None };
    w.unit(&mut copy);
    if let Some(name) = w.printed_instead {
        // The function goes with its last call: alone, the longer `putint` would never be
        // smaller than the call it replaces.
        let mut called = false;
        for_each_expr(&mut copy, &mut |e| called |= matches!(&e.kind, ExprKind::Call { name: n, .. } if n.name == name));
        if !called {
            copy.items.retain(|item| !matches!(item, Item::Func(f) if f.name.name == name));
        }
    }
    w.done.then_some(copy)
}

/// Sum of the magnitudes of the literals: the second component of the reducer's size
/// measure, so that `100` → `50` counts as progress although the text does not shrink.
pub fn literal_weight(unit: &CompUnit) -> u64 {
    let mut total = 0u64;
    let mut copy = unit.clone();
    for_each_expr(&mut copy, &mut |e| match &e.kind {
        ExprKind::IntLit(v, _) => total += u64::from(v.unsigned_abs()),
        ExprKind::FloatLit(f) if f.is_finite() => total += f.abs().min(1e12) as u64,
        _ => {}
    });
    total
}

struct Walker {
    kind: EditKind,
    target: Option<usize>,
    seen: usize,
    done: bool,
    /// The function whose call statement became `putint(x)` (see [`Walker::simplify`]).
    printed_instead: Option<String>,
}

impl Walker {
    /// Counts one site; true if it is the one to edit.
    fn hit(&mut self) -> bool {
        let hit = self.target == Some(self.seen);
        self.seen += 1;
        self.done |= hit;
        hit
    }

    fn unit(&mut self, unit: &mut CompUnit) {
        match self.kind {
            EditKind::DeleteItem => {
                for i in 0..unit.items.len() {
                    let is_main = matches!(&unit.items[i], Item::Func(f) if f.name.name == "main");
                    if !is_main && self.hit() {
                        let removed = unit.items.remove(i);
                        let rest = &mut unit.items[i..];
                        match &removed {
                            Item::Decl(d) => scrub::declared(d).for_each(|name| scrub::unit_items(rest, name, Removed::Var)),
                            Item::Func(f) => scrub::unit_items(rest, &f.name.name, Removed::Func),
                        }
                        return;
                    }
                }
            }
            EditKind::DeleteParam => self.delete_param(unit),
            _ => {
                for item in &mut unit.items {
                    match item {
                        Item::Decl(d) => self.decl(d),
                        Item::Func(f) => {
                            for p in &mut f.params {
                                for dim in p.array_dims.iter_mut().flatten() {
                                    self.expr(dim);
                                }
                            }
                            self.block(&mut f.body);
                        }
                    }
                    if self.done {
                        return;
                    }
                }
            }
        }
    }

    fn delete_param(&mut self, unit: &mut CompUnit) {
        let mut victim = None;
        for item in &mut unit.items {
            if let Item::Func(f) = item {
                for i in 0..f.params.len() {
                    if self.hit() {
                        f.params.remove(i);
                        victim = Some((f.name.name.clone(), i));
                        break;
                    }
                }
            }
            if victim.is_some() {
                break;
            }
        }
        let Some((name, index)) = victim else { return };
        for_each_expr(unit, &mut |e| {
            if let ExprKind::Call { name: callee, args } = &mut e.kind
                && callee.name == name
                && index < args.len()
            {
                args.remove(index);
            }
        });
    }

    fn block(&mut self, block: &mut Block) {
        match self.kind {
            EditKind::DeleteRun => {
                let n = block.items.len();
                if n >= 3 {
                    // The largest power of two below n.
                    let mut len = 1usize << (usize::BITS - 1 - (n - 1).leading_zeros());
                    while len >= 2 {
                        for start in (0..n).step_by(len) {
                            let end = (start + len).min(n);
                            if end - start >= 2 && self.hit() {
                                delete_items(block, start..end);
                                return;
                            }
                        }
                        len /= 2;
                    }
                }
            }
            EditKind::DeleteBlockItem => {
                for i in 0..block.items.len() {
                    if self.hit() {
                        delete_items(block, i..i + 1);
                        return;
                    }
                }
            }
            EditKind::SimplifyStmt => {
                for i in 0..block.items.len() {
                    if let BlockItem::Stmt(Stmt::Block(inner)) = &block.items[i]
                        && self.hit()
                    {
                        let inner = inner.items.clone();
                        block.items.splice(i..=i, inner);
                        return;
                    }
                }
            }
            _ => {}
        }
        for item in &mut block.items {
            match item {
                BlockItem::Decl(d) => self.decl(d),
                BlockItem::Stmt(s) => self.stmt(s),
            }
            if self.done {
                return;
            }
        }
    }

    fn stmt(&mut self, stmt: &mut Stmt) {
        if self.kind == EditKind::SimplifyStmt
            && let Some(replacement) = self.simplify(stmt)
        {
            *stmt = replacement;
            return;
        }
        match stmt {
            Stmt::Assign { target, value, .. } => {
                self.lval(target);
                if !self.done {
                    self.expr(value);
                }
            }
            Stmt::Expr(Some(e), _) | Stmt::Return(Some(e), _) => self.expr(e),
            Stmt::Block(b) => self.block(b),
            Stmt::If { cond, then_branch, else_branch, .. } => {
                self.expr(cond);
                if !self.done {
                    self.stmt(then_branch);
                }
                if let Some(e) = else_branch
                    && !self.done
                {
                    self.stmt(e);
                }
            }
            Stmt::While { cond, body, .. } => {
                self.expr(cond);
                if !self.done {
                    self.stmt(body);
                }
            }
            Stmt::Expr(None, _) | Stmt::Return(None, _) | Stmt::Break(_) | Stmt::Continue(_) => {}
        }
    }

    /// The alternatives of [`EditKind::SimplifyStmt`] at `stmt`, one site each.
    fn simplify(&mut self, stmt: &Stmt) -> Option<Stmt> {
        match stmt {
            Stmt::If { cond, then_branch, else_branch, span } => {
                if self.hit() {
                    return Some((**then_branch).clone());
                }
                if let Some(e) = else_branch {
                    if self.hit() {
                        return Some((**e).clone());
                    }
                    if self.hit() {
                        return Some(Stmt::If {
                            cond: cond.clone(),
                            then_branch: then_branch.clone(),
                            else_branch: None,
                            span: *span,
                        });
                    }
                }
                None
            }
            Stmt::While { body, .. } => self.hit().then(|| (**body).clone()),
            // `mix(x);` → `putint(x);`: a helper that only carries a value to the output
            // (a checksum) can then go, together with what prints its result later.
            Stmt::Expr(Some(Expr { kind: ExprKind::Call { name, args }, span: call_span }), span)
                if !matches!(name.name.as_str(), "putint" | "putch") =>
            {
                for arg in args {
                    if self.hit() {
                        let putint = Ident { name: "putint".into(), span: name.span };
                        let call = Expr { kind: ExprKind::Call { name: putint, args: vec![arg.clone()] }, span: *call_span };
                        self.printed_instead = Some(name.name.clone());
                        return Some(Stmt::Expr(Some(call), *span));
                    }
                }
                None
            }
            _ => None,
        }
    }

    fn decl(&mut self, decl: &mut Decl) {
        if self.kind == EditKind::DeleteDef && decl.defs.len() > 1 {
            for i in 0..decl.defs.len() {
                if self.hit() {
                    decl.defs.remove(i);
                    return;
                }
            }
        }
        for def in &mut decl.defs {
            for dim in &mut def.dims {
                self.expr(dim);
                if self.done {
                    return;
                }
            }
            if self.kind == EditKind::DeleteInit && def.init.is_some() && self.hit() {
                def.init = None;
                return;
            }
            if let Some(init) = &mut def.init {
                self.init(init);
            }
            if self.done {
                return;
            }
        }
    }

    fn init(&mut self, init: &mut InitVal) {
        match init {
            InitVal::Expr(e) => self.expr(e),
            InitVal::List(items, _) => {
                if self.kind == EditKind::DeleteInit {
                    for i in 0..items.len() {
                        if self.hit() {
                            items.remove(i);
                            return;
                        }
                    }
                }
                for item in items {
                    self.init(item);
                    if self.done {
                        return;
                    }
                }
            }
        }
    }

    fn lval(&mut self, lval: &mut LVal) {
        for index in &mut lval.indices {
            self.expr(index);
            if self.done {
                return;
            }
        }
    }

    fn expr(&mut self, expr: &mut Expr) {
        match self.kind {
            EditKind::ReplaceExpr => {
                if let Some(replacement) = self.replace(expr) {
                    *expr = replacement;
                    return;
                }
            }
            EditKind::ShrinkLiteral => {
                let shrunk = match &expr.kind {
                    ExprKind::IntLit(v, _) if v.unsigned_abs() > 1 => Some(Expr::int(v / 2)),
                    ExprKind::FloatLit(f) if f.is_finite() && f.trunc() != *f => {
                        Some(Expr::float(f.trunc()))
                    }
                    _ => None,
                };
                if let Some(shrunk) = shrunk
                    && self.hit()
                {
                    *expr = shrunk;
                    return;
                }
            }
            _ => {}
        }
        match &mut expr.kind {
            ExprKind::IntLit(..) | ExprKind::FloatLit(_) | ExprKind::StrLit(_) => {}
            ExprKind::LVal(lv) => self.lval(lv),
            ExprKind::Call { args, .. } => {
                for a in args {
                    self.expr(a);
                    if self.done {
                        return;
                    }
                }
            }
            ExprKind::Unary(_, a) => self.expr(a),
            ExprKind::Binary(_, a, b) => {
                self.expr(a);
                if !self.done {
                    self.expr(b);
                }
            }
        }
    }

    /// The alternatives of [`EditKind::ReplaceExpr`] at `expr`, one site each.
    fn replace(&mut self, expr: &Expr) -> Option<Expr> {
        let literal = matches!(expr.kind, ExprKind::IntLit(..) | ExprKind::FloatLit(_));
        if matches!(expr.kind, ExprKind::StrLit(_)) {
            return None;
        }
        if !literal {
            if self.hit() {
                return Some(Expr::int(0));
            }
            if self.hit() {
                return Some(Expr::int(1));
            }
        }
        match &expr.kind {
            ExprKind::Unary(_, a) => self.hit().then(|| (**a).clone()),
            ExprKind::Binary(_, a, b) => {
                if self.hit() {
                    return Some((**a).clone());
                }
                self.hit().then(|| (**b).clone())
            }
            ExprKind::Call { args, .. } => args.iter().find_map(|a| self.hit().then(|| a.clone())),
            _ => None,
        }
    }
}

/// Deletes `range` of the block's items; what referred to a declaration among them is
/// rewritten in the rest of the block.
fn delete_items(block: &mut Block, range: Range<usize>) {
    let start = range.start;
    let removed: Vec<BlockItem> = block.items.drain(range).collect();
    let mut rest = block.items.split_off(start);
    for item in &removed {
        if let BlockItem::Decl(d) = item {
            scrub::declared(d).for_each(|name| scrub::block_items(&mut rest, name, Removed::Var));
        }
    }
    block.items.append(&mut rest);
}

/// Calls `f` on every expression of `unit` (outer before inner).
pub fn for_each_expr(unit: &mut CompUnit, f: &mut dyn FnMut(&mut Expr)) {
    fn expr(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
        f(e);
        match &mut e.kind {
            ExprKind::IntLit(..) | ExprKind::FloatLit(_) | ExprKind::StrLit(_) => {}
            ExprKind::LVal(lv) => lv.indices.iter_mut().for_each(|i| expr(i, f)),
            ExprKind::Call { args, .. } => args.iter_mut().for_each(|a| expr(a, f)),
            ExprKind::Unary(_, a) => expr(a, f),
            ExprKind::Binary(_, a, b) => {
                expr(a, f);
                expr(b, f);
            }
        }
    }
    fn init(i: &mut InitVal, f: &mut dyn FnMut(&mut Expr)) {
        match i {
            InitVal::Expr(e) => expr(e, f),
            InitVal::List(items, _) => items.iter_mut().for_each(|i| init(i, f)),
        }
    }
    fn decl(d: &mut Decl, f: &mut dyn FnMut(&mut Expr)) {
        for def in &mut d.defs {
            def.dims.iter_mut().for_each(|e| expr(e, f));
            if let Some(i) = &mut def.init {
                init(i, f);
            }
        }
    }
    fn stmt(s: &mut Stmt, f: &mut dyn FnMut(&mut Expr)) {
        match s {
            Stmt::Assign { target, value, .. } => {
                target.indices.iter_mut().for_each(|i| expr(i, f));
                expr(value, f);
            }
            Stmt::Expr(Some(e), _) | Stmt::Return(Some(e), _) => expr(e, f),
            Stmt::Block(b) => block(b, f),
            Stmt::If { cond, then_branch, else_branch, .. } => {
                expr(cond, f);
                stmt(then_branch, f);
                if let Some(e) = else_branch {
                    stmt(e, f);
                }
            }
            Stmt::While { cond, body, .. } => {
                expr(cond, f);
                stmt(body, f);
            }
            Stmt::Expr(None, _) | Stmt::Return(None, _) | Stmt::Break(_) | Stmt::Continue(_) => {}
        }
    }
    fn block(b: &mut Block, f: &mut dyn FnMut(&mut Expr)) {
        for item in &mut b.items {
            match item {
                BlockItem::Decl(d) => decl(d, f),
                BlockItem::Stmt(s) => stmt(s, f),
            }
        }
    }
    for item in &mut unit.items {
        match item {
            Item::Decl(d) => decl(d, f),
            Item::Func(func) => {
                for p in &mut func.params {
                    p.array_dims.iter_mut().flatten().for_each(|e| expr(e, f));
                }
                block(&mut func.body, f);
            }
        }
    }
}
