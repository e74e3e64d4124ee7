//! Semantic analysis: [`ast::CompUnit`] → [`hir::Program`].
//!
//! One pass over the unit in source order (SysY has no prototypes: a function is callable
//! from its own body on, and a name must be declared before use). Responsibilities by file:
//! * `scope` — the block-scoped variable namespace and the function namespace;
//! * `consteval` — constant expressions with exact run-time semantics;
//! * `init` — initialiser lists with C brace elision → sparse row-major element lists;
//! * `expr` — typing of expressions, implicit conversions, calls (user and runtime library);
//! * `stmt` — declarations, statements, control-flow checks.
//!
//! Errors: analysis of an item stops at its first error, which is recorded; the next item
//! is analysed anyway, so a file with several broken functions reports one error each.
//! Choices where C or SysY leave room:
//! * a scalar may be initialised with a braced list holding exactly one value (`int x =
//!   {1};`), as C allows; `{}` for a scalar is an error, as in gcc;
//! * `int a[2] = 5;`, a string literal outside `putf`, `return;` in a non-void function,
//!   an array or void value where a scalar is needed, and an array argument whose element type
//!   or inner dimensions differ from the parameter's are errors;
//! * a global variable may not be named like a runtime-library function (they share the
//!   link-level namespace); a local may;
//! * `const` initialisers must be constant even for locals (SysY grammar);
//! * arrays may hold at most [`MAX_ARRAY_ELEMENTS`] elements.

mod consteval;
mod expr;
mod init;
mod scope;
mod stmt;

pub use consteval::float_to_int;

use crate::frontend::ast::{self, Span};
use crate::frontend::diag::Diagnostic;
use crate::frontend::hir::{self, Builtin, FuncId, Local, LocalId, Scalar, VarRef, VarType};
use crate::frontend::line_index::LineIndex;
use rustc_hash::FxHashMap;
use scope::{FuncSig, Scopes, Symbol, VarInfo};

/// Largest number of elements of one array (2^28: 1 GiB of 4-byte elements).
pub const MAX_ARRAY_ELEMENTS: u64 = 1 << 28;

type R<T> = Result<T, Diagnostic>;

/// Analyses `unit`; `lines` indexes its source (for `starttime`/`stoptime` line numbers).
pub fn analyze(unit: &ast::CompUnit, lines: &LineIndex) -> Result<hir::Program, Vec<Diagnostic>> {
    let mut a = Analyzer {
        lines,
        scopes: Scopes::new(),
        funcs: FxHashMap::default(),
        sigs: Vec::new(),
        globals: Vec::new(),
        funcs_out: Vec::new(),
        locals: Vec::new(),
        current_func: String::new(),
        current_ret: None,
        loop_depth: 0,
    };
    let mut errors = Vec::new();
    for item in &unit.items {
        let r = match item {
            ast::Item::Decl(d) => a.lower_decl(d, &mut Vec::new()),
            ast::Item::Func(f) => a.lower_func(f),
        };
        if let Err(e) = r {
            errors.push(e);
        }
    }
    let main = a.funcs.get("main").copied();
    if main.is_none() {
        let end = unit.items.last().map_or(Span::DUMMY, |i| match i {
            ast::Item::Decl(d) => d.span,
            ast::Item::Func(f) => f.span,
        });
        errors.push(Diagnostic::error(Span { lo: end.hi, hi: end.hi }, "missing `int main()` function"));
    }
    match main {
        Some(main) if errors.is_empty() => Ok(hir::Program { globals: a.globals, funcs: a.funcs_out, main }),
        _ => Err(errors),
    }
}

pub(crate) struct Analyzer<'a> {
    lines: &'a LineIndex,
    scopes: Scopes,
    funcs: FxHashMap<String, FuncId>,
    sigs: Vec<FuncSig>,
    globals: Vec<hir::Global>,
    funcs_out: Vec<hir::Function>,
    /// Slots of the function being analysed.
    locals: Vec<Local>,
    current_func: String,
    current_ret: Option<Scalar>,
    loop_depth: u32,
}

impl Analyzer<'_> {
    /// Checks a function header, registers the function, then lowers its body. The function
    /// is registered even when its body has errors, so later calls resolve.
    fn lower_func(&mut self, f: &ast::FuncDef) -> R<()> {
        let name = &f.name.name;
        if Builtin::from_source_name(name).is_some() {
            return Err(Diagnostic::error(
                f.name.span,
                format!("`{name}` is a runtime library function and cannot be redefined"),
            ));
        }
        if let Some(&id) = self.funcs.get(name) {
            return Err(Diagnostic::error(f.name.span, format!("redefinition of function `{name}`"))
                .with_label(self.sigs[id.index()].span, "previous definition here"));
        }
        if let Some(prev) = self.scopes.global_span(name) {
            return Err(Diagnostic::error(f.name.span, format!("`{name}` is already defined as a global variable"))
                .with_label(prev, "previous definition here"));
        }
        let ret = f.ret.map(Scalar::from);
        if name == "main" {
            if ret != Some(Scalar::Int) {
                return Err(Diagnostic::error(f.name.span, "`main` must return `int`"));
            }
            if let Some(p) = f.params.first() {
                return Err(Diagnostic::error(p.span, "`main` must not have parameters"));
            }
        }
        let mut param_types = Vec::with_capacity(f.params.len());
        for p in &f.params {
            let elem = Scalar::from(p.ty);
            param_types.push(match &p.array_dims {
                None => VarType::Scalar(elem),
                Some(dims) => VarType::ArrayParam { elem, dims: self.array_dims(dims)? },
            });
        }
        let id = FuncId(self.sigs.len() as u32);
        self.sigs.push(FuncSig { ret, params: param_types.clone(), span: f.name.span });
        self.funcs.insert(name.clone(), id);

        self.locals.clear();
        self.current_func = name.clone();
        self.current_ret = ret;
        self.loop_depth = 0;
        // Parameters and the body's top-level declarations share one scope.
        self.scopes.push();
        let mut params = Vec::with_capacity(f.params.len());
        let mut body = Vec::new();
        let mut result = Ok(());
        for (p, ty) in f.params.iter().zip(param_types) {
            if let Some(prev) = self.scopes.declared_here(&p.name.name) {
                result = Err(Diagnostic::error(p.name.span, format!("redefinition of parameter `{}`", p.name.name))
                    .with_label(prev, "previous definition here"));
                break;
            }
            let local = LocalId(self.locals.len() as u32);
            self.locals.push(Local {
                name: p.name.name.clone(),
                ty: ty.clone(),
                is_const: false,
                is_param: true,
                span: p.name.span,
            });
            params.push(local);
            let info = VarInfo { var: VarRef::Local(local), ty, is_const: false, const_values: None };
            self.scopes.declare(&p.name.name, Symbol::Var(info), p.name.span);
        }
        if result.is_ok() {
            result = self.lower_block_items(&f.body.items, &mut body);
        }
        self.scopes.pop();
        self.funcs_out.push(hir::Function {
            name: name.clone(),
            ret,
            params,
            locals: std::mem::take(&mut self.locals),
            body,
            span: f.span,
        });
        result
    }
}
