//! SysY front end: lexing, parsing, semantic analysis, diagnostics, pretty-printing.

pub mod ast;
pub mod hir;
