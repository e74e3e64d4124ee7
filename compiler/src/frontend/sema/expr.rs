//! Type checking and lowering of expressions: AST → typed HIR expressions.
//!
//! Every expression first lowers to a [`Lowered`] value that says what kind of thing it is
//! (a scalar, a void call result, an array view, a string literal); the context then demands
//! what it needs — [`Analyzer::rvalue_as`] a scalar of a given type (inserting a `Convert`),
//! [`Analyzer::cond`] an `Int` truth value, a call argument an array view of the right shape
//! — and reports anything else as an error there, where the message can say why.
//!
//! Conversions of constants are folded (`Convert(Const)` becomes a `Const`) unless the
//! conversion would trap (float out of `int` range), which stays a run-time `Convert`.

use super::Analyzer;
use super::consteval::convert_const;
use super::scope::Symbol;
use crate::frontend::ast::{self, Span};
use crate::frontend::diag::Diagnostic;
use crate::frontend::hir::{
    BinaryOp, Builtin, Callee, ConstVal, Expr, ExprKind, LogicalOp, Place, Scalar, UnaryOp, VarType,
};

type R<T> = Result<T, Diagnostic>;

/// An expression before the context has decided how it is used.
pub(super) enum Lowered {
    /// A scalar value (`expr.ty` is `Some`).
    Scalar(Expr),
    /// A call of a `void` function.
    Void(Expr, String),
    /// An array or partially indexed array: `expr` is its `ArrayAddr`.
    Array(ArrayView),
    /// A string literal (its span).
    Str(Span),
}

pub(super) struct ArrayView {
    pub expr: Expr,
    pub elem: Scalar,
    /// Dimensions after the first (unknown or not) of the view: what a parameter
    /// `elem p[][d1]...` must match.
    pub inner: Vec<u32>,
    pub name: String,
}

pub(super) fn scalar_name(s: Scalar) -> &'static str {
    match s {
        Scalar::Int => "int",
        Scalar::Float => "float",
    }
}

/// `int[][3]`-style description of an array parameter type.
pub(super) fn array_type_name(elem: Scalar, inner: &[u32]) -> String {
    let mut s = format!("{}[]", scalar_name(elem));
    for d in inner {
        s.push_str(&format!("[{d}]"));
    }
    s
}

pub(super) fn const_expr(v: ConstVal, span: Span) -> Expr {
    Expr { kind: ExprKind::Const(v), ty: Some(v.scalar()), span }
}

/// `e` converted to `to` (no-op if it already has that type).
pub(super) fn convert(e: Expr, to: Scalar) -> Expr {
    if e.ty == Some(to) {
        return e;
    }
    if let ExprKind::Const(v) = e.kind {
        // Fails (and stays a run-time conversion) only for a float outside the int range.
        if let Ok(c) = convert_const(v, to, e.span) {
            return const_expr(c, e.span);
        }
    }
    let span = e.span;
    Expr { kind: ExprKind::Convert(Box::new(e)), ty: Some(to), span }
}

impl Analyzer<'_> {
    pub(super) fn lower_expr(&mut self, e: &ast::Expr) -> R<Lowered> {
        let span = e.span;
        match &e.kind {
            ast::ExprKind::IntLit(v, _) => Ok(Lowered::Scalar(const_expr(ConstVal::Int(*v), span))),
            ast::ExprKind::FloatLit(f) => Ok(Lowered::Scalar(const_expr(ConstVal::Float(*f), span))),
            ast::ExprKind::StrLit(_) => Ok(Lowered::Str(span)),
            ast::ExprKind::LVal(lv) => self.lower_lval(lv),
            ast::ExprKind::Call { name, args } => self.lower_call(name, args, span),
            ast::ExprKind::Unary(op, operand) => match op {
                ast::UnaryOp::Plus => {
                    let v = self.rvalue(operand)?;
                    Ok(Lowered::Scalar(Expr { span, ..v }))
                }
                ast::UnaryOp::Neg => {
                    let v = self.rvalue(operand)?;
                    let ty = v.ty;
                    Ok(Lowered::Scalar(Expr { kind: ExprKind::Unary(UnaryOp::Neg, Box::new(v)), ty, span }))
                }
                ast::UnaryOp::Not => {
                    let v = self.cond(operand)?;
                    Ok(Lowered::Scalar(Expr {
                        kind: ExprKind::Unary(UnaryOp::Not, Box::new(v)),
                        ty: Some(Scalar::Int),
                        span,
                    }))
                }
            },
            ast::ExprKind::Binary(..) => self.lower_binary(e).map(Lowered::Scalar),
        }
    }

    /// Lowers a binary expression. Left-associative chains (`a + b + c + ...`, thousands of
    /// terms in real programs) are walked iteratively along their left spine, so only the
    /// (shallow) right operands recurse.
    fn lower_binary(&mut self, e: &ast::Expr) -> R<Expr> {
        let mut spine = Vec::new();
        let mut leftmost = e;
        while let ast::ExprKind::Binary(op, lhs, rhs) = &leftmost.kind {
            spine.push((*op, &**rhs, leftmost.span));
            leftmost = lhs;
        }
        let mut acc = self.rvalue(leftmost)?;
        for (op, rhs, span) in spine.into_iter().rev() {
            acc = self.combine(op, acc, rhs, span)?;
        }
        Ok(acc)
    }

    /// `a op rhs` where `a` is already lowered.
    fn combine(&mut self, op: ast::BinaryOp, a: Expr, rhs: &ast::Expr, span: Span) -> R<Expr> {
        let logical = match op {
            ast::BinaryOp::And => Some(LogicalOp::And),
            ast::BinaryOp::Or => Some(LogicalOp::Or),
            _ => None,
        };
        if let Some(lop) = logical {
            let a = to_cond(a);
            let b = self.cond(rhs)?;
            return Ok(Expr { kind: ExprKind::Logical(lop, Box::new(a), Box::new(b)), ty: Some(Scalar::Int), span });
        }
        let hop = match op {
            ast::BinaryOp::Add => BinaryOp::Add,
            ast::BinaryOp::Sub => BinaryOp::Sub,
            ast::BinaryOp::Mul => BinaryOp::Mul,
            ast::BinaryOp::Div => BinaryOp::Div,
            ast::BinaryOp::Mod => BinaryOp::Mod,
            ast::BinaryOp::Lt => BinaryOp::Lt,
            ast::BinaryOp::Gt => BinaryOp::Gt,
            ast::BinaryOp::Le => BinaryOp::Le,
            ast::BinaryOp::Ge => BinaryOp::Ge,
            ast::BinaryOp::Eq => BinaryOp::Eq,
            ast::BinaryOp::Ne => BinaryOp::Ne,
            ast::BinaryOp::And | ast::BinaryOp::Or => unreachable!("handled above"),
        };
        let b = self.rvalue(rhs)?;
        let common =
            if a.ty == Some(Scalar::Float) || b.ty == Some(Scalar::Float) { Scalar::Float } else { Scalar::Int };
        if hop == BinaryOp::Mod && common == Scalar::Float {
            return Err(Diagnostic::error(span, "invalid operands to `%`: both must be `int`, found `float`"));
        }
        let ty = if hop.is_comparison() { Scalar::Int } else { common };
        Ok(Expr {
            kind: ExprKind::Binary(hop, Box::new(convert(a, common)), Box::new(convert(b, common))),
            ty: Some(ty),
            span,
        })
    }

    /// A scalar value of any type.
    pub(super) fn rvalue(&mut self, e: &ast::Expr) -> R<Expr> {
        let l = self.lower_expr(e)?;
        into_rvalue(l, e.span)
    }

    /// A scalar value converted to `to`.
    pub(super) fn rvalue_as(&mut self, e: &ast::Expr, to: Scalar) -> R<Expr> {
        Ok(convert(self.rvalue(e)?, to))
    }

    /// A condition: an `Int` expression tested against zero (`x != 0.0` for floats).
    pub(super) fn cond(&mut self, e: &ast::Expr) -> R<Expr> {
        Ok(to_cond(self.rvalue(e)?))
    }

    pub(super) fn undefined_variable(&self, name: &ast::Ident) -> Diagnostic {
        if self.funcs.contains_key(&name.name) || Builtin::from_source_name(&name.name).is_some() {
            Diagnostic::error(name.span, format!("`{}` is a function, not a variable", name.name))
        } else {
            Diagnostic::error(name.span, format!("undefined variable `{}`", name.name))
        }
    }

    /// Resolves `lv` to a place: the variable and its lowered indices (all `Int`).
    /// Returns the symbol's view of the result.
    fn lower_lval(&mut self, lv: &ast::LVal) -> R<Lowered> {
        let name = &lv.name.name;
        let info = match self.scopes.lookup(name) {
            None => return Err(self.undefined_variable(&lv.name)),
            Some(Symbol::Const(c)) => {
                if lv.indices.is_empty() {
                    return Ok(Lowered::Scalar(const_expr(*c, lv.span)));
                }
                return Err(Diagnostic::error(lv.span, format!("`{name}` is a scalar and cannot be indexed")));
            }
            Some(Symbol::Var(info)) => info.clone(),
        };
        let rank = info.ty.rank();
        if lv.indices.len() > rank {
            let msg = if rank == 0 {
                format!("`{name}` is a scalar and cannot be indexed")
            } else {
                format!("too many indices for `{name}`: it has {rank} dimension{}", if rank == 1 { "" } else { "s" })
            };
            return Err(Diagnostic::error(lv.span, msg));
        }
        let mut indices = Vec::with_capacity(lv.indices.len());
        for index in &lv.indices {
            let i = self.rvalue(index)?;
            if i.ty != Some(Scalar::Int) {
                return Err(Diagnostic::error(index.span, "array index must be an `int`, found `float`"));
            }
            indices.push(i);
        }
        let k = indices.len();
        let elem = info.ty.elem();
        let place = Place { var: info.var, indices };
        if k == rank {
            return Ok(Lowered::Scalar(Expr { kind: ExprKind::Load(place), ty: Some(elem), span: lv.span }));
        }
        let inner = match &info.ty {
            VarType::Array { dims, .. } => dims[k + 1..].to_vec(),
            VarType::ArrayParam { dims, .. } => dims[k..].to_vec(),
            VarType::Scalar(_) => unreachable!("rank 0 handled above"),
        };
        Ok(Lowered::Array(ArrayView {
            expr: Expr { kind: ExprKind::ArrayAddr(place), ty: Some(elem), span: lv.span },
            elem,
            inner,
            name: name.clone(),
        }))
    }

    /// Resolves an assignment target: a full-rank element of a non-const variable.
    pub(super) fn lower_place(&mut self, lv: &ast::LVal) -> R<(Place, Scalar)> {
        let name = &lv.name.name;
        match self.scopes.lookup(name) {
            None => {
                if self.funcs.contains_key(name) || Builtin::from_source_name(name).is_some() {
                    return Err(Diagnostic::error(lv.name.span, format!("cannot assign to function `{name}`")));
                }
                return Err(self.undefined_variable(&lv.name));
            }
            Some(Symbol::Const(_)) => {
                return Err(Diagnostic::error(lv.span, format!("cannot assign to constant `{name}`")));
            }
            Some(Symbol::Var(info)) if info.is_const => {
                return Err(Diagnostic::error(
                    lv.span,
                    format!("cannot assign to an element of constant array `{name}`"),
                ));
            }
            Some(Symbol::Var(_)) => {}
        }
        match self.lower_lval(lv)? {
            Lowered::Scalar(Expr { kind: ExprKind::Load(place), ty: Some(ty), .. }) => Ok((place, ty)),
            _ => {
                Err(Diagnostic::error(lv.span, format!("cannot assign to array `{name}`; assign its elements instead")))
            }
        }
    }

    fn lower_call(&mut self, name: &ast::Ident, args: &[ast::Expr], span: Span) -> R<Lowered> {
        if let Some(&id) = self.funcs.get(&name.name) {
            let sig = self.sigs[id.index()].clone();
            if args.len() != sig.params.len() {
                return Err(self
                    .arity_error(&name.name, sig.params.len(), args.len(), span)
                    .with_label(sig.span, "defined here"));
            }
            let mut hargs = Vec::with_capacity(args.len());
            for (i, (arg, param)) in args.iter().zip(&sig.params).enumerate() {
                hargs.push(self.lower_arg(&name.name, i, arg, param)?);
            }
            let call = Expr { kind: ExprKind::Call { callee: Callee::User(id), args: hargs }, ty: sig.ret, span };
            return Ok(match sig.ret {
                Some(_) => Lowered::Scalar(call),
                None => Lowered::Void(call, name.name.clone()),
            });
        }
        let Some(builtin) = Builtin::from_source_name(&name.name) else {
            if self.scopes.lookup(&name.name).is_some() {
                return Err(Diagnostic::error(name.span, format!("`{}` is a variable, not a function", name.name)));
            }
            return Err(Diagnostic::error(name.span, format!("undefined function `{}`", name.name)));
        };
        let hargs = match builtin {
            Builtin::PutF => self.lower_putf_args(args, span)?,
            Builtin::StartTime | Builtin::StopTime => {
                if !args.is_empty() {
                    return Err(self.arity_error(&name.name, 0, args.len(), span));
                }
                let line = self.lines.line(span) as i32;
                vec![const_expr(ConstVal::Int(line), span)]
            }
            _ => {
                let params = builtin_params(builtin);
                if args.len() != params.len() {
                    return Err(self.arity_error(&name.name, params.len(), args.len(), span));
                }
                let mut hargs = Vec::with_capacity(args.len());
                for (i, (arg, param)) in args.iter().zip(&params).enumerate() {
                    hargs.push(self.lower_arg(&name.name, i, arg, param)?);
                }
                hargs
            }
        };
        let call =
            Expr { kind: ExprKind::Call { callee: Callee::Builtin(builtin), args: hargs }, ty: builtin.ret(), span };
        Ok(match builtin.ret() {
            Some(_) => Lowered::Scalar(call),
            None => Lowered::Void(call, name.name.clone()),
        })
    }

    fn arity_error(&self, name: &str, expected: usize, found: usize, span: Span) -> Diagnostic {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        Diagnostic::error(
            span,
            format!(
                "function `{name}` takes {expected} argument{}, but {found} argument{} supplied",
                plural(expected),
                if found == 1 { " was" } else { "s were" }
            ),
        )
    }

    /// Argument `index` (0-based) of a call to `func`, for a parameter of type `param`.
    fn lower_arg(&mut self, func: &str, index: usize, arg: &ast::Expr, param: &VarType) -> R<Expr> {
        let nth = index + 1;
        match param {
            VarType::Scalar(s) => match self.lower_expr(arg)? {
                Lowered::Array(view) => Err(Diagnostic::error(
                    arg.span,
                    format!(
                        "argument {nth} of `{func}` must be a scalar (`{}`), found array `{}` (`{}`)",
                        scalar_name(*s),
                        view.name,
                        array_type_name(view.elem, &view.inner)
                    ),
                )),
                other => Ok(convert(into_rvalue(other, arg.span)?, *s)),
            },
            VarType::ArrayParam { elem, dims } | VarType::Array { elem, dims } => {
                let expected = array_type_name(*elem, dims);
                match self.lower_expr(arg)? {
                    Lowered::Array(view) => {
                        if view.elem != *elem || view.inner != *dims {
                            return Err(Diagnostic::error(
                                arg.span,
                                format!(
                                    "argument {nth} of `{func}` has type `{}`, but the parameter is `{expected}`",
                                    array_type_name(view.elem, &view.inner)
                                ),
                            ));
                        }
                        Ok(view.expr)
                    }
                    _ => Err(Diagnostic::error(
                        arg.span,
                        format!("argument {nth} of `{func}` must be an array (`{expected}`), found a scalar"),
                    )),
                }
            }
        }
    }

    /// `putf("format", scalars...)`: the format string stays a `Str`; the other arguments
    /// keep their types (the runtime promotes floats as C varargs do).
    fn lower_putf_args(&mut self, args: &[ast::Expr], span: Span) -> R<Vec<Expr>> {
        let Some((first, rest)) = args.split_first() else {
            return Err(Diagnostic::error(span, "`putf` needs a format string as its first argument"));
        };
        let ast::ExprKind::StrLit(bytes) = &first.kind else {
            return Err(Diagnostic::error(first.span, "the first argument of `putf` must be a string literal"));
        };
        let mut out = vec![Expr { kind: ExprKind::Str(bytes.clone()), ty: None, span: first.span }];
        for (i, arg) in rest.iter().enumerate() {
            match self.lower_expr(arg)? {
                Lowered::Array(view) => {
                    return Err(Diagnostic::error(
                        arg.span,
                        format!("argument {} of `putf` must be a scalar, found array `{}`", i + 2, view.name),
                    ));
                }
                other => out.push(into_rvalue(other, arg.span)?),
            }
        }
        Ok(out)
    }
}

/// A scalar as a condition: `Int` as is, `float` compared with `0.0`.
fn to_cond(v: Expr) -> Expr {
    if v.ty == Some(Scalar::Float) {
        let span = v.span;
        let zero = const_expr(ConstVal::Float(0.0), span);
        return Expr { kind: ExprKind::Binary(BinaryOp::Ne, Box::new(v), Box::new(zero)), ty: Some(Scalar::Int), span };
    }
    v
}

/// The scalar value of a lowered expression, or why it has none.
fn into_rvalue(l: Lowered, span: Span) -> R<Expr> {
    match l {
        Lowered::Scalar(x) => Ok(x),
        Lowered::Void(_, name) => Err(Diagnostic::error(
            span,
            format!("`{name}` returns `void`; its result cannot be used as a value"),
        )),
        Lowered::Array(view) => Err(Diagnostic::error(span, format!("array `{}` used as a value", view.name))
            .with_note("only an element (with every index given) is a value; a whole or partially indexed array can only be passed to an array parameter")),
        Lowered::Str(span) => Err(Diagnostic::error(span, "a string literal is only allowed as the first argument of `putf`")),
    }
}

/// Parameter types of the runtime functions with a fixed signature.
fn builtin_params(b: Builtin) -> Vec<VarType> {
    let int = VarType::Scalar(Scalar::Int);
    let float = VarType::Scalar(Scalar::Float);
    let int_arr = VarType::ArrayParam { elem: Scalar::Int, dims: vec![] };
    let float_arr = VarType::ArrayParam { elem: Scalar::Float, dims: vec![] };
    match b {
        Builtin::GetInt | Builtin::GetCh | Builtin::GetFloat | Builtin::StartTime | Builtin::StopTime => vec![],
        Builtin::GetArray => vec![int_arr],
        Builtin::GetFArray => vec![float_arr],
        Builtin::PutInt | Builtin::PutCh => vec![int],
        Builtin::PutFloat => vec![float],
        Builtin::PutArray => vec![int, int_arr],
        Builtin::PutFArray => vec![int, float_arr],
        Builtin::PutF => vec![],
    }
}
