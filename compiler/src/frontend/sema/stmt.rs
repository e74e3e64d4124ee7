//! Declarations and statements: AST → HIR statements, globals and local slots.
//!
//! Declaration order follows C: a variable is in scope from the end of its declarator, so
//! its own initialiser already sees it (`int a = a;` reads the new, uninitialised `a`).
//! A `const` is entered only after its value is known. `const` scalars get no storage at
//! all (their uses became constants); `const` arrays are ordinary read-only arrays whose
//! values are also kept for constant expressions.

use super::expr::{const_expr, scalar_name};
use super::init::{braced_scalar, flatten_array};
use super::scope::{Symbol, VarInfo};
use super::{Analyzer, MAX_ARRAY_ELEMENTS};
use crate::frontend::ast;
use crate::frontend::diag::Diagnostic;
use crate::frontend::hir::{
    ConstInit, ConstVal, Global, GlobalId, Local, LocalId, LocalInit, Scalar, Stmt, StmtKind, VarRef, VarType,
};
use std::rc::Rc;

type R<T> = Result<T, Diagnostic>;

fn is_zero(v: ConstVal) -> bool {
    match v {
        ConstVal::Int(i) => i == 0,
        ConstVal::Float(f) => f.to_bits() == 0,
    }
}

impl Analyzer<'_> {
    /// Evaluates array dimensions: positive `int` constants, at most
    /// [`MAX_ARRAY_ELEMENTS`] elements in all.
    pub(super) fn array_dims(&self, dims: &[ast::Expr]) -> R<Vec<u32>> {
        let mut out = Vec::with_capacity(dims.len());
        let mut total: u64 = 1;
        for d in dims {
            let v = match self.const_eval(d)? {
                ConstVal::Int(v) => v,
                ConstVal::Float(_) => {
                    return Err(Diagnostic::error(d.span, "array dimension must be an `int` constant, found `float`"));
                }
            };
            if v <= 0 {
                return Err(Diagnostic::error(d.span, format!("array dimension must be positive, found {v}")));
            }
            total = total.saturating_mul(v as u64);
            if total > MAX_ARRAY_ELEMENTS {
                return Err(Diagnostic::error(
                    d.span,
                    format!("array too large: more than {MAX_ARRAY_ELEMENTS} elements"),
                ));
            }
            out.push(v as u32);
        }
        Ok(out)
    }

    /// Reports `name` already declared in this scope (or, for globals, as a function).
    fn check_new_variable(&self, name: &ast::Ident) -> R<()> {
        if let Some(prev) = self.scopes.declared_here(&name.name) {
            return Err(Diagnostic::error(name.span, format!("redefinition of `{}`", name.name))
                .with_label(prev, "previous definition here"));
        }
        if self.scopes.is_global() {
            if let Some(&id) = self.funcs.get(&name.name) {
                return Err(Diagnostic::error(name.span, format!("`{}` is already defined as a function", name.name))
                    .with_label(self.sigs[id.index()].span, "function defined here"));
            }
            if crate::frontend::hir::Builtin::from_source_name(&name.name).is_some() {
                return Err(Diagnostic::error(
                    name.span,
                    format!("`{}` is a runtime library function and cannot be a global variable", name.name),
                ));
            }
        }
        Ok(())
    }

    /// The value of a scalar `const` or global initialiser (`e` or `{e}`).
    fn const_scalar_init(&self, init: &ast::InitVal, elem: Scalar) -> R<ConstVal> {
        let e = match init {
            ast::InitVal::Expr(e) => e,
            ast::InitVal::List(items, span) => braced_scalar(items, *span)?,
        };
        self.const_eval_as(e, elem)
    }

    /// The flattened constant values of an array initialiser (zeros left out).
    fn const_array_init(&self, name: &ast::Ident, dims: &[u32], init: &ast::InitVal, elem: Scalar) -> R<ConstInit> {
        let ast::InitVal::List(items, span) = init else {
            return Err(array_needs_list(name, init));
        };
        let mut elems = Vec::new();
        for (i, e) in flatten_array(dims, items, *span)? {
            let v = self.const_eval_as(e, elem)?;
            if !is_zero(v) {
                elems.push((i, v));
            }
        }
        Ok(ConstInit { elems })
    }

    fn new_local(&mut self, name: &ast::Ident, ty: VarType, is_const: bool) -> LocalId {
        let id = LocalId(self.locals.len() as u32);
        self.locals.push(Local { name: name.name.clone(), ty, is_const, is_param: false, span: name.span });
        id
    }

    /// Lowers a declaration. Globals are appended to the program; local declarations append
    /// their `Decl` statements to `out`.
    pub(super) fn lower_decl(&mut self, decl: &ast::Decl, out: &mut Vec<Stmt>) -> R<()> {
        let elem = Scalar::from(decl.ty);
        let global = self.scopes.is_global();
        for def in &decl.defs {
            let name = &def.name;
            let dims = self.array_dims(&def.dims)?;
            self.check_new_variable(name)?;
            let ty = if dims.is_empty() { VarType::Scalar(elem) } else { VarType::Array { elem, dims: dims.clone() } };
            if decl.is_const {
                let Some(init) = &def.init else {
                    return Err(Diagnostic::error(def.span, format!("constant `{}` must be initialised", name.name)));
                };
                if dims.is_empty() {
                    let v = self.const_scalar_init(init, elem)?;
                    self.scopes.declare(&name.name, Symbol::Const(v), name.span);
                    continue;
                }
                let values = self.const_array_init(name, &dims, init, elem)?;
                let var = if global {
                    VarRef::Global(self.push_global(name, ty.clone(), true, values.clone()))
                } else {
                    let local = self.new_local(name, ty.clone(), true);
                    let elems = values.elems.iter().map(|&(i, v)| (i, const_expr(v, def.span))).collect();
                    out.push(Stmt {
                        kind: StmtKind::Decl { local, init: Some(LocalInit::Array(elems)) },
                        span: def.span,
                    });
                    VarRef::Local(local)
                };
                let info = VarInfo { var, ty, is_const: true, const_values: Some(Rc::new(values)) };
                self.scopes.declare(&name.name, Symbol::Var(info), name.span);
                continue;
            }
            if global {
                let id = self.push_global(name, ty.clone(), false, ConstInit::default());
                let info = VarInfo { var: VarRef::Global(id), ty, is_const: false, const_values: None };
                self.scopes.declare(&name.name, Symbol::Var(info), name.span);
                if let Some(init) = &def.init {
                    let values = if dims.is_empty() {
                        let v = self.const_scalar_init(init, elem).map_err(global_note)?;
                        ConstInit { elems: if is_zero(v) { vec![] } else { vec![(0, v)] } }
                    } else {
                        self.const_array_init(name, &dims, init, elem).map_err(global_note)?
                    };
                    self.globals[id.index()].init = values;
                }
                continue;
            }
            let local = self.new_local(name, ty.clone(), false);
            let info = VarInfo { var: VarRef::Local(local), ty, is_const: false, const_values: None };
            self.scopes.declare(&name.name, Symbol::Var(info), name.span);
            let init = match &def.init {
                None => None,
                Some(init) if dims.is_empty() => {
                    let e = match init {
                        ast::InitVal::Expr(e) => e,
                        ast::InitVal::List(items, span) => braced_scalar(items, *span)?,
                    };
                    Some(LocalInit::Scalar(self.rvalue_as(e, elem)?))
                }
                Some(init) => {
                    let ast::InitVal::List(items, span) = init else {
                        return Err(array_needs_list(name, init));
                    };
                    let mut elems = Vec::new();
                    for (i, e) in flatten_array(&dims, items, *span)? {
                        elems.push((i, self.rvalue_as(e, elem)?));
                    }
                    Some(LocalInit::Array(elems))
                }
            };
            out.push(Stmt { kind: StmtKind::Decl { local, init }, span: def.span });
        }
        Ok(())
    }

    fn push_global(&mut self, name: &ast::Ident, ty: VarType, is_const: bool, init: ConstInit) -> GlobalId {
        let id = GlobalId(self.globals.len() as u32);
        self.globals.push(Global { name: name.name.clone(), ty, is_const, init, span: name.span });
        id
    }

    /// Lowers the items of a block into `out`, in the current scope.
    pub(super) fn lower_block_items(&mut self, items: &[ast::BlockItem], out: &mut Vec<Stmt>) -> R<()> {
        for item in items {
            match item {
                ast::BlockItem::Decl(d) => self.lower_decl(d, out)?,
                ast::BlockItem::Stmt(s) => {
                    let s = self.lower_stmt(s)?;
                    out.push(s);
                }
            }
        }
        Ok(())
    }

    fn lower_stmt(&mut self, s: &ast::Stmt) -> R<Stmt> {
        let span = s.span();
        let kind = match s {
            ast::Stmt::Assign { target, value, .. } => {
                let (place, ty) = self.lower_place(target)?;
                let value = self.rvalue_as(value, ty)?;
                StmtKind::Assign { place, value }
            }
            ast::Stmt::Expr(None, _) => StmtKind::Block(Vec::new()),
            ast::Stmt::Expr(Some(e), _) => match self.lower_expr(e)? {
                super::expr::Lowered::Scalar(x) | super::expr::Lowered::Void(x, _) => StmtKind::Expr(x),
                super::expr::Lowered::Array(view) => {
                    return Err(Diagnostic::error(e.span, format!("array `{}` used as a statement", view.name)));
                }
                super::expr::Lowered::Str(span) => {
                    return Err(Diagnostic::error(
                        span,
                        "a string literal is only allowed as the first argument of `putf`",
                    ));
                }
            },
            ast::Stmt::Block(b) => {
                self.scopes.push();
                let mut body = Vec::new();
                let r = self.lower_block_items(&b.items, &mut body);
                self.scopes.pop();
                r?;
                StmtKind::Block(body)
            }
            ast::Stmt::If { cond, then_branch, else_branch, .. } => {
                let cond = self.cond(cond)?;
                let then_branch = Box::new(self.lower_stmt(then_branch)?);
                let else_branch = match else_branch {
                    Some(e) => Some(Box::new(self.lower_stmt(e)?)),
                    None => None,
                };
                StmtKind::If { cond, then_branch, else_branch }
            }
            ast::Stmt::While { cond, body, .. } => {
                let cond = self.cond(cond)?;
                self.loop_depth += 1;
                let body = self.lower_stmt(body);
                self.loop_depth -= 1;
                StmtKind::While { cond, body: Box::new(body?) }
            }
            ast::Stmt::Break(_) | ast::Stmt::Continue(_) => {
                let is_break = matches!(s, ast::Stmt::Break(_));
                if self.loop_depth == 0 {
                    let word = if is_break { "break" } else { "continue" };
                    return Err(Diagnostic::error(span, format!("`{word}` outside of a loop")));
                }
                if is_break { StmtKind::Break } else { StmtKind::Continue }
            }
            ast::Stmt::Return(value, _) => {
                let func = self.current_func.clone();
                match (value, self.current_ret) {
                    (None, None) => StmtKind::Return(None),
                    (Some(v), Some(ty)) => StmtKind::Return(Some(self.rvalue_as(v, ty)?)),
                    (Some(v), None) => {
                        return Err(Diagnostic::error(
                            v.span,
                            format!("`void` function `{func}` cannot return a value"),
                        ));
                    }
                    (None, Some(ty)) => {
                        return Err(Diagnostic::error(
                            span,
                            format!("function `{func}` returns `{}`: `return` needs a value", scalar_name(ty)),
                        ));
                    }
                }
            }
        };
        Ok(Stmt { kind, span })
    }
}

fn array_needs_list(name: &ast::Ident, init: &ast::InitVal) -> Diagnostic {
    let span = match init {
        ast::InitVal::Expr(e) => e.span,
        ast::InitVal::List(_, s) => *s,
    };
    Diagnostic::error(span, format!("array `{}` must be initialised with a braced list", name.name))
}

fn global_note(d: Diagnostic) -> Diagnostic {
    d.with_note("initialisers of global variables must be compile-time constants")
}
