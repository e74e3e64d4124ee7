//! SysY front end: lexing, parsing, semantic analysis, diagnostics, pretty-printing.
//!
//! Pipeline: source text → [`lexer`] tokens → [`parser`] [`ast::CompUnit`] → [`sema`]
//! [`hir::Program`]. Every stage reports problems as [`Diagnostic`]s with byte spans into the
//! source; [`diag::render`] (or `Display` on [`FrontendError`]) turns them into
//! `file:line:col: error: message` text, and [`LineIndex`] maps spans to line:column for
//! other modules (the reference interpreter reports traps that way).
//!
//! Entry points:
//! * [`parse`] — source → AST;
//! * [`analyze`] — AST → HIR (needs the [`LineIndex`] of the source for the line numbers
//!   `starttime`/`stoptime` receive; use `LineIndex::default()` for an AST without source);
//! * [`compile_source`] — both, with rendered errors;
//! * [`pretty::print`] — AST → SysY source that parses back to the same AST;
//! * [`hir_check::check`] — verifies the invariants every HIR program satisfies.
//!
//! No input makes any of them panic. Raw bytes (files that may not be UTF-8) go through
//! [`source_from_bytes`] first, so spans always index the `&str` that was parsed.

pub mod ast;
pub mod diag;
pub mod hir;
pub mod hir_check;
pub mod lexer;
pub mod line_index;
pub mod parser;
pub mod pretty;
pub mod sema;

pub use diag::Diagnostic;
pub use line_index::LineIndex;

use std::fmt;

/// Parses a SysY compilation unit. Stops at the first error.
pub fn parse(src: &str) -> Result<ast::CompUnit, Vec<Diagnostic>> {
    let tokens = lexer::tokenize(src).map_err(|d| vec![d])?;
    parser::parse_tokens(tokens).map_err(|d| vec![d])
}

/// Checks and lowers a parsed unit to HIR. `lines` must index the source the unit was parsed
/// from (it provides `starttime`/`stoptime` line numbers).
pub fn analyze(unit: &ast::CompUnit, lines: &LineIndex) -> Result<hir::Program, Vec<Diagnostic>> {
    sema::analyze(unit, lines)
}

/// The text of a source file that may not be valid UTF-8: invalid bytes become U+FFFD (which
/// the lexer rejects with a proper location as an unexpected character, or as invalid UTF-8
/// inside a string literal, and ignores in comments).
pub fn source_from_bytes(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Parse + analyze, with diagnostics bundled for rendering.
pub fn compile_source(file_name: &str, src: &str) -> Result<hir::Program, FrontendError> {
    let err = |diagnostics| FrontendError {
        file_name: file_name.to_string(),
        source: src.to_string(),
        diagnostics,
    };
    let unit = parse(src).map_err(err)?;
    analyze(&unit, &LineIndex::new(src)).map_err(err)
}

/// Front-end failure: the diagnostics plus what is needed to render them.
/// `Display` prints them as [`diag::render`] does.
#[derive(Clone, Debug)]
pub struct FrontendError {
    pub file_name: String,
    pub source: String,
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for FrontendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(diag::render(&self.file_name, &self.source, &self.diagnostics).trim_end())
    }
}

impl std::error::Error for FrontendError {}
