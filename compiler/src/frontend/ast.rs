//! Syntactic AST of SysY, exactly as written (no name resolution, no types).
//!
//! The parser produces it, the pretty-printer (`pretty`) prints it back as SysY source, and the
//! program generator and the reducer of the harness build and rewrite it. Every node carries a
//! [`Span`] for diagnostics; generated nodes use [`Span::DUMMY`]. Structural equality that ignores
//! spans is available through [`CompUnit::without_spans`].

/// Half-open byte range `[lo, hi)` into the source text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub lo: u32,
    pub hi: u32,
}

impl Span {
    pub const DUMMY: Span = Span { lo: 0, hi: 0 };

    pub fn new(lo: usize, hi: usize) -> Span {
        Span { lo: lo as u32, hi: hi as u32 }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { lo: self.lo.min(other.lo), hi: self.hi.max(other.hi) }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BType {
    Int,
    Float,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct CompUnit {
    pub items: Vec<Item>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Decl(Decl),
    Func(FuncDef),
}

/// `[const] int|float def, def, ...;`
#[derive(Clone, Debug, PartialEq)]
pub struct Decl {
    pub is_const: bool,
    pub ty: BType,
    pub defs: Vec<VarDef>,
    pub span: Span,
}

/// `name[d0][d1]... [= init]`
#[derive(Clone, Debug, PartialEq)]
pub struct VarDef {
    pub name: Ident,
    pub dims: Vec<Expr>,
    pub init: Option<InitVal>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum InitVal {
    Expr(Expr),
    /// `{ a, {b, c}, ... }`; brace elision is resolved by semantic analysis.
    List(Vec<InitVal>, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct FuncDef {
    /// `None` is `void`.
    pub ret: Option<BType>,
    pub name: Ident,
    pub params: Vec<Param>,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub ty: BType,
    pub name: Ident,
    /// `None`: scalar. `Some(dims)`: array parameter `name[][d1][d2]...`; `dims` are the
    /// dimensions after the omitted first one.
    pub array_dims: Option<Vec<Expr>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub items: Vec<BlockItem>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum BlockItem {
    Decl(Decl),
    Stmt(Stmt),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Assign { target: LVal, value: Expr, span: Span },
    /// `expr;` or the empty statement `;`.
    Expr(Option<Expr>, Span),
    Block(Block),
    If { cond: Expr, then_branch: Box<Stmt>, else_branch: Option<Box<Stmt>>, span: Span },
    While { cond: Expr, body: Box<Stmt>, span: Span },
    Break(Span),
    Continue(Span),
    Return(Option<Expr>, Span),
}

impl Stmt {
    pub fn span(&self) -> Span {
        match self {
            Stmt::Assign { span, .. }
            | Stmt::Expr(_, span)
            | Stmt::If { span, .. }
            | Stmt::While { span, .. }
            | Stmt::Break(span)
            | Stmt::Continue(span)
            | Stmt::Return(_, span) => *span,
            Stmt::Block(b) => b.span,
        }
    }
}

/// `name[i][j]...`
#[derive(Clone, Debug, PartialEq)]
pub struct LVal {
    pub name: Ident,
    pub indices: Vec<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Plus,
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Mul,
    Div,
    Mod,
    Add,
    Sub,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

impl BinaryOp {
    /// Binding strength; higher binds tighter. All binary operators are left-associative.
    pub fn precedence(self) -> u8 {
        use BinaryOp::*;
        match self {
            Mul | Div | Mod => 6,
            Add | Sub => 5,
            Lt | Gt | Le | Ge => 4,
            Eq | Ne => 3,
            And => 2,
            Or => 1,
        }
    }

    pub fn symbol(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Mul => "*",
            Div => "/",
            Mod => "%",
            Add => "+",
            Sub => "-",
            Lt => "<",
            Gt => ">",
            Le => "<=",
            Ge => ">=",
            Eq => "==",
            Ne => "!=",
            And => "&&",
            Or => "||",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal's value, reduced to 32 bits (two's complement), with its spelling kept
    /// so the printer reproduces octal/hex forms.
    IntLit(i32, IntBase),
    /// A float literal, already rounded to binary32.
    FloatLit(f32),
    /// A string literal (only legal as the first argument of `putf`); raw bytes between the
    /// quotes with escapes resolved.
    StrLit(Vec<u8>),
    LVal(LVal),
    Call { name: Ident, args: Vec<Expr> },
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntBase {
    Dec,
    Oct,
    Hex,
}

impl Expr {
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr { kind, span }
    }

    pub fn int(v: i32) -> Expr {
        Expr::new(ExprKind::IntLit(v, IntBase::Dec), Span::DUMMY)
    }

    pub fn float(v: f32) -> Expr {
        Expr::new(ExprKind::FloatLit(v), Span::DUMMY)
    }
}

/// Rewrites every span in a tree to [`Span::DUMMY`], so trees built by different routes
/// (generator vs. parser) compare equal when they are structurally equal.
pub trait WithoutSpans {
    fn clear_spans(&mut self);
}

impl CompUnit {
    pub fn without_spans(&self) -> CompUnit {
        let mut c = self.clone();
        c.clear_spans();
        c
    }
}

impl WithoutSpans for CompUnit {
    fn clear_spans(&mut self) {
        for item in &mut self.items {
            match item {
                Item::Decl(d) => d.clear_spans(),
                Item::Func(f) => f.clear_spans(),
            }
        }
    }
}

impl WithoutSpans for Ident {
    fn clear_spans(&mut self) {
        self.span = Span::DUMMY;
    }
}

impl WithoutSpans for Decl {
    fn clear_spans(&mut self) {
        self.span = Span::DUMMY;
        for d in &mut self.defs {
            d.span = Span::DUMMY;
            d.name.clear_spans();
            d.dims.iter_mut().for_each(Expr::clear_spans);
            if let Some(init) = &mut d.init {
                init.clear_spans();
            }
        }
    }
}

impl WithoutSpans for InitVal {
    fn clear_spans(&mut self) {
        match self {
            InitVal::Expr(e) => e.clear_spans(),
            InitVal::List(items, span) => {
                *span = Span::DUMMY;
                items.iter_mut().for_each(InitVal::clear_spans);
            }
        }
    }
}

impl WithoutSpans for FuncDef {
    fn clear_spans(&mut self) {
        self.span = Span::DUMMY;
        self.name.clear_spans();
        for p in &mut self.params {
            p.span = Span::DUMMY;
            p.name.clear_spans();
            if let Some(dims) = &mut p.array_dims {
                dims.iter_mut().for_each(Expr::clear_spans);
            }
        }
        self.body.clear_spans();
    }
}

impl WithoutSpans for Block {
    fn clear_spans(&mut self) {
        self.span = Span::DUMMY;
        for item in &mut self.items {
            match item {
                BlockItem::Decl(d) => d.clear_spans(),
                BlockItem::Stmt(s) => s.clear_spans(),
            }
        }
    }
}

impl WithoutSpans for Stmt {
    fn clear_spans(&mut self) {
        match self {
            Stmt::Assign { target, value, span } => {
                *span = Span::DUMMY;
                target.clear_spans();
                value.clear_spans();
            }
            Stmt::Expr(e, span) => {
                *span = Span::DUMMY;
                if let Some(e) = e {
                    e.clear_spans();
                }
            }
            Stmt::Block(b) => b.clear_spans(),
            Stmt::If { cond, then_branch, else_branch, span } => {
                *span = Span::DUMMY;
                cond.clear_spans();
                then_branch.clear_spans();
                if let Some(e) = else_branch {
                    e.clear_spans();
                }
            }
            Stmt::While { cond, body, span } => {
                *span = Span::DUMMY;
                cond.clear_spans();
                body.clear_spans();
            }
            Stmt::Break(span) | Stmt::Continue(span) => *span = Span::DUMMY,
            Stmt::Return(e, span) => {
                *span = Span::DUMMY;
                if let Some(e) = e {
                    e.clear_spans();
                }
            }
        }
    }
}

impl WithoutSpans for LVal {
    fn clear_spans(&mut self) {
        self.span = Span::DUMMY;
        self.name.clear_spans();
        self.indices.iter_mut().for_each(Expr::clear_spans);
    }
}

impl WithoutSpans for Expr {
    fn clear_spans(&mut self) {
        self.span = Span::DUMMY;
        match &mut self.kind {
            ExprKind::IntLit(..) | ExprKind::FloatLit(_) | ExprKind::StrLit(_) => {}
            ExprKind::LVal(lv) => lv.clear_spans(),
            ExprKind::Call { name, args } => {
                name.clear_spans();
                args.iter_mut().for_each(Expr::clear_spans);
            }
            ExprKind::Unary(_, e) => e.clear_spans(),
            ExprKind::Binary(_, a, b) => {
                a.clear_spans();
                b.clear_spans();
            }
        }
    }
}
