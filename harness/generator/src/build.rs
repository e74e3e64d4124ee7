//! Small constructors for AST nodes with dummy spans, and the few questions the generator
//! asks of the trees it built.
//!
//! The constructors build only trees the parser itself could produce (so that printing and re-parsing
//! gives the same tree back): negative literals become a negation of a non-negative literal,
//! and `INT_MIN` is spelled `-2147483647 - 1`.

use sysyc::frontend::ast::{
    BType, BinaryOp, Block, BlockItem, Decl, Expr, ExprKind, Ident, InitVal, IntBase, LVal, Span,
    Stmt, UnaryOp, VarDef,
};

pub(super) fn ident(name: &str) -> Ident {
    Ident {
        name: name.to_string(),
        span: Span::DUMMY,
    }
}

/// An integer literal of any value, in the given base.
pub(super) fn int_in_base(v: i32, base: IntBase) -> Expr {
    if v == i32::MIN {
        return bin(
            BinaryOp::Sub,
            neg(int_in_base(i32::MAX, base)),
            int_in_base(1, IntBase::Dec),
        );
    }
    if v < 0 {
        return neg(int_in_base(-v, base));
    }
    // `0` in octal would print as `00`; keep it decimal.
    let base = if v == 0 { IntBase::Dec } else { base };
    Expr::new(ExprKind::IntLit(v, base), Span::DUMMY)
}

pub(super) fn int(v: i32) -> Expr {
    int_in_base(v, IntBase::Dec)
}

/// A float literal of any finite value.
pub(super) fn float(v: f32) -> Expr {
    if v.is_sign_negative() {
        return neg(float(-v));
    }
    Expr::float(v)
}

pub(super) fn neg(e: Expr) -> Expr {
    Expr::new(ExprKind::Unary(UnaryOp::Neg, Box::new(e)), Span::DUMMY)
}

pub(super) fn unary(op: UnaryOp, e: Expr) -> Expr {
    Expr::new(ExprKind::Unary(op, Box::new(e)), Span::DUMMY)
}

pub(super) fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    Expr::new(ExprKind::Binary(op, Box::new(a), Box::new(b)), Span::DUMMY)
}

pub(super) fn lval(name: &str, indices: Vec<Expr>) -> LVal {
    LVal {
        name: ident(name),
        indices,
        span: Span::DUMMY,
    }
}

pub(super) fn var(name: &str) -> Expr {
    Expr::new(ExprKind::LVal(lval(name, Vec::new())), Span::DUMMY)
}

pub(super) fn elem(name: &str, indices: Vec<Expr>) -> Expr {
    Expr::new(ExprKind::LVal(lval(name, indices)), Span::DUMMY)
}

pub(super) fn call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::new(
        ExprKind::Call {
            name: ident(name),
            args,
        },
        Span::DUMMY,
    )
}

pub(super) fn str_lit(bytes: &[u8]) -> Expr {
    Expr::new(ExprKind::StrLit(bytes.to_vec()), Span::DUMMY)
}

pub(super) fn assign(target: LVal, value: Expr) -> Stmt {
    Stmt::Assign {
        target,
        value,
        span: Span::DUMMY,
    }
}

pub(super) fn assign_var(name: &str, value: Expr) -> Stmt {
    assign(lval(name, Vec::new()), value)
}

pub(super) fn expr_stmt(e: Expr) -> Stmt {
    Stmt::Expr(Some(e), Span::DUMMY)
}

pub(super) fn empty_stmt() -> Stmt {
    Stmt::Expr(None, Span::DUMMY)
}

pub(super) fn block(items: Vec<BlockItem>) -> Block {
    Block {
        items,
        span: Span::DUMMY,
    }
}

pub(super) fn block_stmt(items: Vec<BlockItem>) -> Stmt {
    Stmt::Block(block(items))
}

pub(super) fn if_stmt(cond: Expr, then_branch: Stmt, else_branch: Option<Stmt>) -> Stmt {
    Stmt::If {
        cond,
        then_branch: Box::new(then_branch),
        else_branch: else_branch.map(Box::new),
        span: Span::DUMMY,
    }
}

pub(super) fn while_stmt(cond: Expr, body: Stmt) -> Stmt {
    Stmt::While {
        cond,
        body: Box::new(body),
        span: Span::DUMMY,
    }
}

pub(super) fn ret(e: Option<Expr>) -> Stmt {
    Stmt::Return(e, Span::DUMMY)
}

pub(super) fn brk() -> Stmt {
    Stmt::Break(Span::DUMMY)
}

pub(super) fn cont() -> Stmt {
    Stmt::Continue(Span::DUMMY)
}

pub(super) fn stmt(s: Stmt) -> BlockItem {
    BlockItem::Stmt(s)
}

/// One declaration of one name.
pub(super) fn decl(
    is_const: bool,
    ty: BType,
    name: &str,
    dims: Vec<Expr>,
    init: Option<InitVal>,
) -> Decl {
    Decl {
        is_const,
        ty,
        defs: vec![VarDef {
            name: ident(name),
            dims,
            init,
            span: Span::DUMMY,
        }],
        span: Span::DUMMY,
    }
}

pub(super) fn init_list(items: Vec<InitVal>) -> InitVal {
    InitVal::List(items, Span::DUMMY)
}

/// `int name = init;`
pub(super) fn int_decl(name: &str, init: Expr) -> BlockItem {
    BlockItem::Decl(decl(false, BType::Int, name, vec![], Some(InitVal::Expr(init))))
}

/// `name = name + step;`
pub(super) fn increment(name: &str, step: i32) -> Stmt {
    assign_var(name, bin(BinaryOp::Add, var(name), int(step)))
}

/// `first && chain` as a left-deep `&&` chain (no parentheses), where `chain` is an `&&`
/// chain or a single atom.
pub(super) fn conjoin(first: Expr, chain: Expr) -> Expr {
    match chain.kind {
        ExprKind::Binary(BinaryOp::And, a, b) => bin(BinaryOp::And, conjoin(first, *a), *b),
        kind => bin(BinaryOp::And, first, Expr { kind, span: chain.span }),
    }
}

/// Whether an expression contains a call.
pub(super) fn has_call(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call { .. } => true,
        ExprKind::LVal(lv) => lv.indices.iter().any(has_call),
        ExprKind::Unary(_, a) => has_call(a),
        ExprKind::Binary(_, a, b) => has_call(a) || has_call(b),
        _ => false,
    }
}

/// Height of an expression tree (a leaf is 1).
pub(super) fn height(e: &Expr) -> usize {
    1 + match &e.kind {
        ExprKind::IntLit(..) | ExprKind::FloatLit(_) | ExprKind::StrLit(_) => 0,
        ExprKind::LVal(lv) => lv.indices.iter().map(height).max().unwrap_or(0),
        ExprKind::Call { args, .. } => args.iter().map(height).max().unwrap_or(0),
        ExprKind::Unary(_, a) => height(a),
        ExprKind::Binary(_, a, b) => height(a).max(height(b)),
    }
}

/// Names of variables (and called functions) an expression mentions, in order.
pub(super) fn collect_names(e: &Expr, out: &mut Vec<String>) {
    match &e.kind {
        ExprKind::IntLit(..) | ExprKind::FloatLit(_) | ExprKind::StrLit(_) => {}
        ExprKind::LVal(lv) => {
            out.push(lv.name.name.clone());
            lv.indices.iter().for_each(|i| collect_names(i, out));
        }
        ExprKind::Call { name, args } => {
            out.push(name.name.clone());
            args.iter().for_each(|a| collect_names(a, out));
        }
        ExprKind::Unary(_, a) => collect_names(a, out),
        ExprKind::Binary(_, a, b) => {
            collect_names(a, out);
            collect_names(b, out);
        }
    }
}
