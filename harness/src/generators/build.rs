//! Small constructors for AST nodes with dummy spans.
//!
//! They build only trees the parser itself could produce (so that printing and re-parsing
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
