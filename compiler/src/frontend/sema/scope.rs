//! Name resolution: the block-structured variable namespace and the function namespace.
//!
//! SysY (like the competition's reading of C) keeps two namespaces: functions, which live
//! only at file level and are looked up only in call position, and variables/constants,
//! which are block-scoped. A variable may therefore share a name with a function, but a
//! *global* variable may not (nor with a runtime-library function), because both become
//! file-level symbols.
//!
//! Scope 0 holds globals. A function's parameters and the top-level declarations of its
//! body share one scope (C: redeclaring a parameter there is an error); every nested block
//! opens a new scope. A declaration conflicts only with names of its own scope; inner scopes
//! shadow outer ones.

use crate::frontend::ast::Span;
use crate::frontend::hir::{ConstInit, ConstVal, Scalar, VarRef, VarType};
use rustc_hash::FxHashMap;
use std::rc::Rc;

/// What a variable-namespace name means.
#[derive(Clone, Debug)]
pub(super) enum Symbol {
    /// A `const` scalar; every use is replaced by the value.
    Const(ConstVal),
    Var(VarInfo),
}

#[derive(Clone, Debug)]
pub(super) struct VarInfo {
    pub var: VarRef,
    pub ty: VarType,
    pub is_const: bool,
    /// Element values of a `const` array, for constant expressions that index it.
    pub const_values: Option<Rc<ConstInit>>,
}

#[derive(Clone, Debug)]
struct Entry {
    symbol: Symbol,
    span: Span,
}

#[derive(Default)]
pub(super) struct Scopes {
    stack: Vec<FxHashMap<String, Entry>>,
}

impl Scopes {
    pub fn new() -> Scopes {
        Scopes { stack: vec![FxHashMap::default()] }
    }

    pub fn push(&mut self) {
        self.stack.push(FxHashMap::default());
    }

    pub fn pop(&mut self) {
        if self.stack.len() > 1 {
            self.stack.pop();
        }
    }

    pub fn is_global(&self) -> bool {
        self.stack.len() == 1
    }

    /// The innermost declaration of `name`.
    pub fn lookup(&self, name: &str) -> Option<&Symbol> {
        self.stack.iter().rev().find_map(|s| s.get(name)).map(|e| &e.symbol)
    }

    /// Where `name` is declared in the innermost scope, if it is.
    pub fn declared_here(&self, name: &str) -> Option<Span> {
        self.stack.last().and_then(|s| s.get(name)).map(|e| e.span)
    }

    /// Where the global `name` is declared, if it is.
    pub fn global_span(&self, name: &str) -> Option<Span> {
        self.stack.first().and_then(|s| s.get(name)).map(|e| e.span)
    }

    /// Declares `name` in the innermost scope (the caller has checked for conflicts).
    pub fn declare(&mut self, name: &str, symbol: Symbol, span: Span) {
        if let Some(scope) = self.stack.last_mut() {
            scope.insert(name.to_string(), Entry { symbol, span });
        }
    }
}

/// A user function's signature, known from its header on (so it can recurse).
#[derive(Clone, Debug)]
pub(super) struct FuncSig {
    pub ret: Option<Scalar>,
    pub params: Vec<VarType>,
    pub span: Span,
}
