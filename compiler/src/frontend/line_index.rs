//! Byte offset → 1-based line:column mapping for a source text.
//!
//! Columns count characters (a tab is one column), the same convention as the
//! `codespan-reporting` snippets, so a location printed by the front end and one printed by
//! the reference interpreter for the same span agree.

use super::ast::Span;
use crate::runtime::outcome::SrcLoc;

#[derive(Clone, Debug)]
pub struct LineIndex {
    source: String,
    /// Byte offset at which each line starts; `line_starts[0] == 0`.
    line_starts: Vec<usize>,
}

/// The index of an empty text: every offset is at 1:1 (for trees built without source).
impl Default for LineIndex {
    fn default() -> LineIndex {
        LineIndex::new("")
    }
}

impl LineIndex {
    pub fn new(source: &str) -> LineIndex {
        let mut line_starts = vec![0];
        line_starts.extend(source.bytes().enumerate().filter(|&(_, c)| c == b'\n').map(|(i, _)| i + 1));
        LineIndex { source: source.to_string(), line_starts }
    }

    /// Location of byte `offset` (clamped into the text; an offset inside a multi-byte
    /// character counts as that character).
    pub fn line_col(&self, offset: u32) -> SrcLoc {
        let offset = (offset as usize).min(self.source.len());
        let line = self.line_starts.partition_point(|&start| start <= offset).saturating_sub(1);
        let start = self.line_starts.get(line).copied().unwrap_or(0);
        let col = self
            .source
            .get(start..)
            .map(|rest| rest.char_indices().take_while(|&(i, c)| start + i + c.len_utf8() <= offset).count())
            .unwrap_or(0);
        SrcLoc { line: line as u32 + 1, col: col as u32 + 1 }
    }

    /// Location of the start of `span`.
    pub fn span_start(&self, span: Span) -> SrcLoc {
        self.line_col(span.lo)
    }

    /// 1-based line of the start of `span`.
    pub fn line(&self, span: Span) -> u32 {
        self.line_col(span.lo).line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns() {
        let idx = LineIndex::new("ab\n\tc\u{e9}d\n\nx");
        let at = |o| {
            let l = idx.line_col(o);
            (l.line, l.col)
        };
        assert_eq!(at(0), (1, 1));
        assert_eq!(at(2), (1, 3));
        assert_eq!(at(3), (2, 1));
        assert_eq!(at(4), (2, 2));
        assert_eq!(at(7), (2, 4)); // after the two-byte é
        assert_eq!(at(6), (2, 3)); // inside é
        assert_eq!(at(10), (4, 1));
        assert_eq!(at(1000), (4, 2));
        assert_eq!(LineIndex::new("").line_col(5), SrcLoc { line: 1, col: 1 });
        assert_eq!(LineIndex::default().line_col(7), SrcLoc { line: 1, col: 1 });
    }
}
