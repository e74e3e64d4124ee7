//! Diagnostics of the front end and their rendering as plain text.
//!
//! A [`Diagnostic`] is an error at a byte span with optional secondary labels ("previous
//! definition here") and free-form notes. [`render`] prints each one as
//!
//! ```text
//! file.sy:3:5: error: undefined name `x`
//!   ┌─ file.sy:3:5
//!   │
//! 3 │     x = 1;
//!   │     ^ undefined name `x`
//! ```
//!
//! The first line is always exactly `file:line:col: error: message` (line and column
//! 1-based, the column counted in characters, as [`LineIndex`] computes it) so tools can grep
//! for it; the snippet below it comes from `codespan-reporting`. Spans are clamped to the
//! source and to character boundaries first, so no span can make rendering fail.

use super::ast::Span;
use super::line_index::LineIndex;
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub span: Span,
    pub message: String,
    /// Secondary locations with their own short message.
    pub labels: Vec<(Span, String)>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { span, message: message.into(), labels: Vec::new(), notes: Vec::new() }
    }

    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push((span, message.into()));
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
}

/// Shrinks `span` into `source` and onto character boundaries.
fn clamp(source: &str, span: Span) -> std::ops::Range<usize> {
    let floor = |mut i: usize| {
        i = i.min(source.len());
        while !source.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let lo = floor(span.lo as usize);
    let hi = floor(span.hi as usize).max(lo);
    lo..hi
}

/// Renders `diagnostics` against `source` (named `file_name` in the output) as plain text,
/// one block per diagnostic, each starting with `file:line:col: error: message`.
pub fn render(file_name: &str, source: &str, diagnostics: &[Diagnostic]) -> String {
    let file = SimpleFile::new(file_name, source);
    let lines = LineIndex::new(source);
    let config = term::Config { chars: term::Chars::ascii(), ..term::Config::default() };
    let mut out = String::new();
    for d in diagnostics {
        let loc = lines.line_col(d.span.lo);
        out.push_str(&format!("{file_name}:{}:{}: error: {}\n", loc.line, loc.col, d.message));
        let mut labels = vec![cs::Label::primary((), clamp(source, d.span)).with_message(&d.message)];
        for (span, msg) in &d.labels {
            labels.push(cs::Label::secondary((), clamp(source, *span)).with_message(msg));
        }
        let cs_diag = cs::Diagnostic::error().with_labels(labels).with_notes(d.notes.clone());
        match term::emit_into_string(&config, &file, &cs_diag) {
            // The rich renderer starts with its own "error:" line (empty message here); skip it.
            Ok(body) => {
                for line in body.lines().skip(1) {
                    out.push_str(line);
                    out.push('\n');
                }
            }
            Err(_) => {
                for note in &d.notes {
                    out.push_str(&format!("  = {note}\n"));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_is_file_line_col() {
        let src = "int main() {\n\treturn x;\n}\n";
        let lo = src.find('x').unwrap();
        let d = Diagnostic::error(Span::new(lo, lo + 1), "undefined name `x`")
            .with_label(Span::new(0, 3), "here")
            .with_note("a note");
        let text = render("t.sy", src, &[d]);
        let first = text.lines().next().unwrap();
        assert_eq!(first, "t.sy:2:9: error: undefined name `x`");
        assert!(text.contains("return x;"), "{text}");
        assert!(text.contains("a note"), "{text}");
        assert!(text.contains('^'), "{text}");
    }

    #[test]
    fn hostile_spans_do_not_panic() {
        let src = "a\u{fffd}b\t\u{fffd}";
        let ds = [
            Diagnostic::error(Span::new(2, 3), "inside a character"),
            Diagnostic::error(Span::new(100, 200), "past the end"),
            Diagnostic::error(Span::new(5, 1), "reversed"),
            Diagnostic::error(Span::DUMMY, "empty"),
        ];
        let text = render("x.sy", src, &ds);
        assert_eq!(text.lines().filter(|l| l.starts_with("x.sy:")).count(), 4);
        assert_eq!(
            render("e.sy", "", &[Diagnostic::error(Span::new(0, 0), "m")]).lines().next(),
            Some("e.sy:1:1: error: m")
        );
    }
}
