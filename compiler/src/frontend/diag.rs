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
//! source and to character boundaries first, so no span can make rendering fail. The
//! snippet shows only a window of about [`MAX_LINE_CHARS`] characters of a longer line
//! (`...` where it is cut), so a one-line megabyte of source is never echoed.

use std::ops::Range;

use super::ast::Span;
use super::line_index::LineIndex;
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{self as cs_files, Files};
use codespan_reporting::term;

/// A line of at most this many characters is shown whole; of a longer one, a window of this
/// many characters around the first label on it.
pub const MAX_LINE_CHARS: usize = 120;
/// How many characters of that window come before the label.
const CONTEXT_BEFORE: usize = 40;
const ELLIPSIS: &str = "...";

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
    let lines = LineIndex::new(source);
    let config = term::Config { chars: term::Chars::ascii(), ..term::Config::default() };
    let mut out = String::new();
    for d in diagnostics {
        let loc = lines.line_col(d.span.lo);
        out.push_str(&format!("{file_name}:{}:{}: error: {}\n", loc.line, loc.col, d.message));
        let mut spans = vec![clamp(source, d.span)];
        spans.extend(d.labels.iter().map(|(span, _)| clamp(source, *span)));
        let excerpt = Excerpt::new(file_name, source, &lines, &spans);
        let mut labels = vec![cs::Label::primary((), excerpt.map(&spans[0])).with_message(&d.message)];
        for ((_, msg), span) in d.labels.iter().zip(&spans[1..]) {
            labels.push(cs::Label::secondary((), excerpt.map(span)).with_message(msg));
        }
        let cs_diag = cs::Diagnostic::error().with_labels(labels).with_notes(d.notes.clone());
        match term::emit_into_string(&config, &excerpt, &cs_diag) {
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

/// What the snippet renderer sees of the source for one diagnostic: only the lines its
/// spans start or end on, each cut to a window when longer than [`MAX_LINE_CHARS`], with
/// their real line and column numbers.
struct Excerpt<'a> {
    name: &'a str,
    text: String,
    lines: Vec<ExcerptLine>,
}

struct ExcerptLine {
    /// 0-based line number in the source.
    number: usize,
    /// Where the line starts in the source.
    source_start: usize,
    /// The part of the line shown (source bytes).
    window: Range<usize>,
    /// The excerpt's line in `text`, ellipses included (without the newline).
    range: Range<usize>,
    /// Where `window` starts in `text`.
    at: usize,
    /// Characters of the line before `window` (for real column numbers).
    chars_before: usize,
}

impl<'a> Excerpt<'a> {
    /// `spans` are clamped to `source` (see [`clamp`]).
    fn new(name: &'a str, source: &str, index: &LineIndex, spans: &[Range<usize>]) -> Excerpt<'a> {
        // (line start, first position on it), in source order.
        let mut touched: Vec<(usize, usize)> = Vec::new();
        for pos in spans.iter().flat_map(|r| [r.start, r.end]) {
            let start = source[..pos].rfind('\n').map_or(0, |i| i + 1);
            match touched.iter_mut().find(|(s, _)| *s == start) {
                Some((_, first)) => *first = (*first).min(pos),
                None => touched.push((start, pos)),
            }
        }
        touched.sort_unstable();
        let mut text = String::new();
        let mut lines = Vec::new();
        for (start, first) in touched {
            let end = source[start..].find('\n').map_or(source.len(), |i| start + i);
            let line = &source[start..end];
            let window = if line.chars().nth(MAX_LINE_CHARS).is_none() {
                start..end
            } else {
                let lo = source[start..first].char_indices().rev().nth(CONTEXT_BEFORE - 1).map_or(start, |(i, _)| start + i);
                let hi = source[lo..end].char_indices().nth(MAX_LINE_CHARS).map_or(end, |(i, _)| lo + i);
                lo..hi
            };
            let range_start = text.len();
            if window.start > start {
                text.push_str(ELLIPSIS);
            }
            let at = text.len();
            text.push_str(&source[window.clone()]);
            if window.end < end {
                text.push_str(ELLIPSIS);
            }
            let chars_before = source[start..window.start].chars().count();
            let number = index.line_col(start as u32).line as usize - 1;
            lines.push(ExcerptLine { number, source_start: start, window, range: range_start..text.len(), at, chars_before });
            text.push('\n');
        }
        Excerpt { name, text, lines }
    }

    fn line(&self, index: usize) -> Result<&ExcerptLine, cs_files::Error> {
        self.lines.get(index).ok_or(cs_files::Error::LineTooLarge { given: index, max: self.lines.len().saturating_sub(1) })
    }

    /// The excerpt bytes of a source span (clipped to the windows of its lines).
    fn map(&self, span: &Range<usize>) -> Range<usize> {
        let one = |pos: usize| {
            let line = self.lines.iter().rev().find(|l| l.source_start <= pos).unwrap_or(&self.lines[0]);
            line.at + pos.clamp(line.window.start, line.window.end) - line.window.start
        };
        let lo = one(span.start);
        lo..one(span.end).max(lo)
    }
}

impl<'a> Files<'a> for Excerpt<'_> {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, (): ()) -> Result<&'a str, cs_files::Error> {
        Ok(self.name)
    }

    fn source(&'a self, (): ()) -> Result<&'a str, cs_files::Error> {
        Ok(&self.text)
    }

    fn line_index(&'a self, (): (), byte_index: usize) -> Result<usize, cs_files::Error> {
        Ok(self.lines.partition_point(|l| l.range.start <= byte_index).saturating_sub(1))
    }

    fn line_number(&'a self, (): (), line_index: usize) -> Result<usize, cs_files::Error> {
        Ok(self.line(line_index)?.number + 1)
    }

    /// The column in the source line, not in the excerpt.
    fn column_number(&'a self, (): (), line_index: usize, byte_index: usize) -> Result<usize, cs_files::Error> {
        let line = self.line(line_index)?;
        let in_window = byte_index.clamp(line.at, line.at + line.window.len()) - line.at;
        Ok(line.chars_before + self.text[line.at..line.at + in_window].chars().count() + 1)
    }

    fn line_range(&'a self, (): (), line_index: usize) -> Result<Range<usize>, cs_files::Error> {
        let line = self.line(line_index)?;
        Ok(line.range.start..line.range.end + 1)
    }
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
