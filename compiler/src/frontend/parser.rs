//! Recursive-descent parser: tokens → [`ast::CompUnit`].
//!
//! The grammar is SysY2022 (see `SYSY.md`), parsed slightly more generally than the official
//! EBNF: every expression position accepts the full `LOrExp` grammar (so `a = b < c;` and
//! `int x[1 + (2 > 1)]` parse; semantic analysis types them as in C). Binary operators are
//! parsed by precedence climbing over [`BinaryOp::precedence`], all left-associative.
//! A statement that starts like an expression is parsed as one; if `=` follows, the
//! expression must be an lvalue and becomes the assignment target.
//!
//! Nesting limits: recursion depth (blocks, `if`/`while` bodies, parenthesised and
//! sub-expressions, unary chains, initialiser lists) is bounded by [`MAX_NESTING`]; the height
//! of every expression tree (long left-associative chains like `1+1+...+1` build deep trees
//! without deep recursion), counted together with the enclosing nesting, by
//! [`MAX_EXPR_HEIGHT`]. Exceeding it is the error "nesting too deep", so neither the parser nor any
//! later recursive pass over the tree can overflow the stack. The parser stops at the first
//! error.

use super::ast::*;
use super::diag::Diagnostic;
use super::lexer::{Token, TokenKind};

/// Maximum nesting depth of blocks, statements, parenthesised and unary expressions,
/// arguments, indices and initialiser lists combined (what the parser recurses on).
pub const MAX_NESTING: u32 = 256;

/// Maximum height of an expression tree plus its statement nesting. Larger than
/// [`MAX_NESTING`] because left-associative chains are legitimately long: a competition case
/// sums 4000 terms in one expression.
pub const MAX_EXPR_HEIGHT: u32 = 8192;

type PResult<T> = Result<T, Diagnostic>;

/// Parses a token stream (as produced by `lexer::tokenize`, ending with `Eof`).
pub fn parse_tokens(tokens: Vec<Token>) -> Result<CompUnit, Diagnostic> {
    let mut tokens = tokens;
    if tokens.last().is_none_or(|t| t.kind != TokenKind::Eof) {
        let end = tokens.last().map_or(0, |t| t.span.hi);
        tokens.push(Token { kind: TokenKind::Eof, span: Span { lo: end, hi: end } });
    }
    let mut parser = Parser { tokens, pos: 0, depth: 0 };
    parser.comp_unit()
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    depth: u32,
}

fn binary_op(kind: &TokenKind) -> Option<BinaryOp> {
    use TokenKind as T;
    Some(match kind {
        T::Star => BinaryOp::Mul,
        T::Slash => BinaryOp::Div,
        T::Percent => BinaryOp::Mod,
        T::Plus => BinaryOp::Add,
        T::Minus => BinaryOp::Sub,
        T::Lt => BinaryOp::Lt,
        T::Gt => BinaryOp::Gt,
        T::Le => BinaryOp::Le,
        T::Ge => BinaryOp::Ge,
        T::EqEq => BinaryOp::Eq,
        T::Ne => BinaryOp::Ne,
        T::AndAnd => BinaryOp::And,
        T::OrOr => BinaryOp::Or,
        _ => return None,
    })
}

impl Parser {
    fn peek(&self) -> &TokenKind {
        &self.tokens[self.pos].kind
    }

    fn peek_nth(&self, n: usize) -> &TokenKind {
        let i = (self.pos + n).min(self.tokens.len() - 1);
        &self.tokens[i].kind
    }

    fn span(&self) -> Span {
        self.tokens[self.pos].span
    }

    /// Span of the previously consumed token.
    fn prev_span(&self) -> Span {
        self.tokens[self.pos.saturating_sub(1)].span
    }

    fn bump(&mut self) -> Token {
        let t = self.tokens[self.pos].clone();
        if self.pos + 1 < self.tokens.len() {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        if self.peek() == kind {
            self.bump();
            true
        } else {
            false
        }
    }

    fn error_here(&self, expected: &str) -> Diagnostic {
        Diagnostic::error(self.span(), format!("expected {expected}, found {}", self.peek().describe()))
    }

    fn expect(&mut self, kind: &TokenKind) -> PResult<Span> {
        if self.peek() == kind { Ok(self.bump().span) } else { Err(self.error_here(&kind.describe())) }
    }

    fn ident(&mut self) -> PResult<Ident> {
        match self.peek().clone() {
            TokenKind::Ident(name) => Ok(Ident { name, span: self.bump().span }),
            _ => Err(self.error_here("an identifier")),
        }
    }

    /// Runs `f` one nesting level deeper.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_NESTING {
            return Err(Diagnostic::error(self.span(), "nesting too deep").with_note(format!(
                "the limit is {MAX_NESTING} nested blocks, statements, expressions and initialiser lists"
            )));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    /// Rejects an expression node of tree height `height` built at the current depth.
    fn check_height(&self, height: u32, span: Span) -> PResult<()> {
        if self.depth + height > MAX_EXPR_HEIGHT {
            Err(Diagnostic::error(span, "nesting too deep").with_note(format!(
                "expression trees (including operator chains) are limited to {MAX_EXPR_HEIGHT} levels"
            )))
        } else {
            Ok(())
        }
    }

    fn comp_unit(&mut self) -> PResult<CompUnit> {
        let mut items = Vec::new();
        while *self.peek() != TokenKind::Eof {
            items.push(self.item()?);
        }
        Ok(CompUnit { items })
    }

    fn item(&mut self) -> PResult<Item> {
        let start = self.span();
        if *self.peek() == TokenKind::KwConst {
            return Ok(Item::Decl(self.decl()?));
        }
        let ret = match self.peek() {
            TokenKind::KwInt => Some(BType::Int),
            TokenKind::KwFloat => Some(BType::Float),
            TokenKind::KwVoid => None,
            _ => return Err(self.error_here("a declaration or function definition")),
        };
        if *self.peek_nth(2) == TokenKind::LParen {
            self.bump();
            let name = self.ident()?;
            return Ok(Item::Func(self.func_def(start, ret, name)?));
        }
        if ret.is_none() {
            return Err(Diagnostic::error(start, "variables cannot have type `void`"));
        }
        Ok(Item::Decl(self.decl()?))
    }

    fn btype(&mut self) -> PResult<BType> {
        match self.peek() {
            TokenKind::KwInt => {
                self.bump();
                Ok(BType::Int)
            }
            TokenKind::KwFloat => {
                self.bump();
                Ok(BType::Float)
            }
            TokenKind::KwVoid => Err(Diagnostic::error(self.span(), "variables cannot have type `void`")),
            _ => Err(self.error_here("`int` or `float`")),
        }
    }

    fn decl(&mut self) -> PResult<Decl> {
        let start = self.span();
        let is_const = self.eat(&TokenKind::KwConst);
        let ty = self.btype()?;
        let mut defs = vec![self.var_def()?];
        while self.eat(&TokenKind::Comma) {
            defs.push(self.var_def()?);
        }
        let end = self.expect(&TokenKind::Semi)?;
        Ok(Decl { is_const, ty, defs, span: start.to(end) })
    }

    fn var_def(&mut self) -> PResult<VarDef> {
        let name = self.ident()?;
        let mut dims = Vec::new();
        while self.eat(&TokenKind::LBracket) {
            dims.push(self.expr()?);
            self.expect(&TokenKind::RBracket)?;
        }
        let init = if self.eat(&TokenKind::Assign) { Some(self.init_val()?) } else { None };
        let span = name.span.to(self.prev_span());
        Ok(VarDef { name, dims, init, span })
    }

    fn init_val(&mut self) -> PResult<InitVal> {
        if *self.peek() != TokenKind::LBrace {
            return Ok(InitVal::Expr(self.expr()?));
        }
        self.nested(|p| {
            let start = p.bump().span;
            let mut items = Vec::new();
            if !p.eat(&TokenKind::RBrace) {
                loop {
                    items.push(p.init_val()?);
                    if p.eat(&TokenKind::Comma) {
                        continue;
                    }
                    p.expect(&TokenKind::RBrace).map_err(|_| p.error_here("`,` or `}`"))?;
                    break;
                }
            }
            Ok(InitVal::List(items, start.to(p.prev_span())))
        })
    }

    fn func_def(&mut self, start: Span, ret: Option<BType>, name: Ident) -> PResult<FuncDef> {
        self.expect(&TokenKind::LParen)?;
        let mut params = Vec::new();
        if !self.eat(&TokenKind::RParen) {
            loop {
                params.push(self.param()?);
                if self.eat(&TokenKind::Comma) {
                    continue;
                }
                self.expect(&TokenKind::RParen).map_err(|_| self.error_here("`,` or `)`"))?;
                break;
            }
        }
        let body = self.block()?;
        let span = start.to(body.span);
        Ok(FuncDef { ret, name, params, body, span })
    }

    fn param(&mut self) -> PResult<Param> {
        let start = self.span();
        let ty = self.btype()?;
        let name = self.ident()?;
        let mut array_dims = None;
        if self.eat(&TokenKind::LBracket) {
            self.expect(&TokenKind::RBracket)
                .map_err(|_| self.error_here("`]` (the first dimension of an array parameter is omitted)"))?;
            let mut dims = Vec::new();
            while self.eat(&TokenKind::LBracket) {
                dims.push(self.expr()?);
                self.expect(&TokenKind::RBracket)?;
            }
            array_dims = Some(dims);
        }
        Ok(Param { ty, name, array_dims, span: start.to(self.prev_span()) })
    }

    fn block(&mut self) -> PResult<Block> {
        self.nested(|p| {
            let start = p.expect(&TokenKind::LBrace)?;
            let mut items = Vec::new();
            loop {
                match p.peek() {
                    TokenKind::RBrace => break,
                    TokenKind::Eof => return Err(p.error_here("`}`")),
                    TokenKind::KwConst | TokenKind::KwInt | TokenKind::KwFloat | TokenKind::KwVoid => {
                        items.push(BlockItem::Decl(p.decl()?))
                    }
                    _ => items.push(BlockItem::Stmt(p.stmt()?)),
                }
            }
            let end = p.bump().span;
            Ok(Block { items, span: start.to(end) })
        })
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        let start = self.span();
        match self.peek() {
            TokenKind::LBrace => Ok(Stmt::Block(self.block()?)),
            TokenKind::Semi => {
                self.bump();
                Ok(Stmt::Expr(None, start))
            }
            TokenKind::KwIf => self.nested(|p| {
                p.bump();
                p.expect(&TokenKind::LParen)?;
                let cond = p.expr()?;
                p.expect(&TokenKind::RParen)?;
                let then_branch = Box::new(p.stmt()?);
                let else_branch = if p.eat(&TokenKind::KwElse) { Some(Box::new(p.stmt()?)) } else { None };
                Ok(Stmt::If { cond, then_branch, else_branch, span: start.to(p.prev_span()) })
            }),
            TokenKind::KwWhile => self.nested(|p| {
                p.bump();
                p.expect(&TokenKind::LParen)?;
                let cond = p.expr()?;
                p.expect(&TokenKind::RParen)?;
                let body = Box::new(p.stmt()?);
                Ok(Stmt::While { cond, body, span: start.to(p.prev_span()) })
            }),
            TokenKind::KwBreak => {
                self.bump();
                let end = self.expect(&TokenKind::Semi)?;
                Ok(Stmt::Break(start.to(end)))
            }
            TokenKind::KwContinue => {
                self.bump();
                let end = self.expect(&TokenKind::Semi)?;
                Ok(Stmt::Continue(start.to(end)))
            }
            TokenKind::KwReturn => {
                self.bump();
                let value = if *self.peek() == TokenKind::Semi { None } else { Some(self.expr()?) };
                let end = self.expect(&TokenKind::Semi)?;
                Ok(Stmt::Return(value, start.to(end)))
            }
            TokenKind::KwElse => Err(Diagnostic::error(start, "`else` without a preceding `if`")),
            _ => {
                let e = self.expr()?;
                if self.eat(&TokenKind::Assign) {
                    let target = match e.kind {
                        ExprKind::LVal(lv) => lv,
                        _ => {
                            return Err(Diagnostic::error(
                                e.span,
                                "invalid assignment target: expected a variable or array element",
                            ));
                        }
                    };
                    let value = self.expr()?;
                    let end = self.expect(&TokenKind::Semi)?;
                    return Ok(Stmt::Assign { target, value, span: start.to(end) });
                }
                let end = self.expect(&TokenKind::Semi).map_err(|_| self.error_here("`;`"))?;
                Ok(Stmt::Expr(Some(e), start.to(end)))
            }
        }
    }

    /// A full expression (`LOrExp`), one nesting level deeper.
    fn expr(&mut self) -> PResult<Expr> {
        Ok(self.expr_h()?.0)
    }

    /// An expression with its tree height.
    fn expr_h(&mut self) -> PResult<(Expr, u32)> {
        self.nested(|p| p.binary(1))
    }

    /// Precedence climbing: operators of precedence ≥ `min_prec`.
    fn binary(&mut self, min_prec: u8) -> PResult<(Expr, u32)> {
        let (mut lhs, mut height) = self.unary()?;
        while let Some(op) = binary_op(self.peek()) {
            let prec = op.precedence();
            if prec < min_prec {
                break;
            }
            self.bump();
            let (rhs, rh) = self.binary(prec + 1)?;
            height = 1 + height.max(rh);
            let span = lhs.span.to(rhs.span);
            self.check_height(height, span)?;
            lhs = Expr::new(ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span);
        }
        Ok((lhs, height))
    }

    fn unary(&mut self) -> PResult<(Expr, u32)> {
        let op = match self.peek() {
            TokenKind::Plus => UnaryOp::Plus,
            TokenKind::Minus => UnaryOp::Neg,
            TokenKind::Not => UnaryOp::Not,
            _ => return self.primary(),
        };
        let start = self.bump().span;
        let (operand, h) = self.nested(|p| p.unary())?;
        let span = start.to(operand.span);
        self.check_height(h + 1, span)?;
        Ok((Expr::new(ExprKind::Unary(op, Box::new(operand)), span), h + 1))
    }

    fn primary(&mut self) -> PResult<(Expr, u32)> {
        let start = self.span();
        match self.peek().clone() {
            TokenKind::LParen => {
                self.bump();
                let (mut e, h) = self.expr_h()?;
                let end = self.expect(&TokenKind::RParen)?;
                // The parentheses belong to the expression's extent (good carets), not the tree.
                e.span = start.to(end);
                Ok((e, h))
            }
            TokenKind::Int(v, base) => {
                self.bump();
                Ok((Expr::new(ExprKind::IntLit(v, base), start), 1))
            }
            TokenKind::Float(v) => {
                self.bump();
                Ok((Expr::new(ExprKind::FloatLit(v), start), 1))
            }
            TokenKind::Str(bytes) => {
                self.bump();
                Ok((Expr::new(ExprKind::StrLit(bytes), start), 1))
            }
            TokenKind::Ident(_) => {
                let name = self.ident()?;
                if self.eat(&TokenKind::LParen) {
                    let mut args = Vec::new();
                    let mut height = 0;
                    if !self.eat(&TokenKind::RParen) {
                        loop {
                            let (arg, h) = self.expr_h()?;
                            height = height.max(h);
                            args.push(arg);
                            if self.eat(&TokenKind::Comma) {
                                continue;
                            }
                            self.expect(&TokenKind::RParen).map_err(|_| self.error_here("`,` or `)`"))?;
                            break;
                        }
                    }
                    let span = start.to(self.prev_span());
                    self.check_height(height + 1, span)?;
                    return Ok((Expr::new(ExprKind::Call { name, args }, span), height + 1));
                }
                let (lval, h) = self.lval_rest(name)?;
                let span = lval.span;
                Ok((Expr::new(ExprKind::LVal(lval), span), h))
            }
            _ => Err(self.error_here("an expression")),
        }
    }

    /// The `[i][j]...` after a variable name.
    fn lval_rest(&mut self, name: Ident) -> PResult<(LVal, u32)> {
        let mut indices = Vec::new();
        let mut height = 0;
        while self.eat(&TokenKind::LBracket) {
            let (e, h) = self.expr_h()?;
            height = height.max(h);
            indices.push(e);
            self.expect(&TokenKind::RBracket)?;
        }
        let span = name.span.to(self.prev_span());
        self.check_height(height + 1, span)?;
        Ok((LVal { name, indices, span }, height + 1))
    }
}
