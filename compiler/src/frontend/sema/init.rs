//! Initialiser lists → flat, row-major `(element index, expression)` lists, following C's
//! brace elision (C11 6.7.9) exactly as gcc does.
//!
//! Design. An array `T a[d0][d1]...[dn-1]` has sub-objects at levels `0..=n`: level `l` is an
//! aggregate of `size(l) = d_l · ... · d_{n-1}` elements (level `n` is one scalar). A braced
//! list initialises an object of some level `k`, element by element from a cursor `pos`
//! (relative to the object's first element):
//! * a bare expression initialises the scalar at `pos` and advances it by one — braces of the
//!   sub-aggregates it falls into are implied ("elided");
//! * a nested braced list initialises "the next sub-object": when `pos` sits inside elided
//!   sub-aggregates, that is the largest sub-object *starting* at `pos`, i.e. the object of
//!   the smallest level `j > k` with `pos % size(j) == 0`. The list fills it (recursively, zero
//!   padding the rest) and the cursor skips the whole sub-object. When `j == n` it is a
//!   scalar, and the list must hold exactly one (possibly braced) expression, as in
//!   `int x = {1};` (gcc rejects an empty `{}` for a scalar, so do we);
//! * an item arriving when `pos == size(k)` is an error ("too many initialisers").
//!
//! Examples (SYSY.md): `int d[4][2] = {1, 2, {3}, {5}, a[3][0], 8}` gives d = {{1,2},{3,0},
//! {5,0},{a[3][0],8}}; `int e[4][2][1] = {{d[2][1], {c[2][1]}}, {3, 4}, {5, 6}, {7, 8}}`
//! gives e[0][0][0] = d[2][1], e[0][1][0] = c[2][1], e[1] = {3,4}, ...
//!
//! The cursor only moves forward, so the result is sorted by index and free of duplicates.
//! Unlisted elements are zero.

use crate::frontend::ast::{Expr, InitVal, Span};
use crate::frontend::diag::Diagnostic;

/// Flattens the braced list `items` (spanning `span`) for an array of shape `dims`.
pub(crate) fn flatten_array<'a>(
    dims: &[u32],
    items: &'a [InitVal],
    span: Span,
) -> Result<Vec<(u32, &'a Expr)>, Diagnostic> {
    let mut sizes = vec![1u64; dims.len() + 1];
    for l in (0..dims.len()).rev() {
        sizes[l] = sizes[l + 1] * dims[l] as u64;
    }
    let mut out = Vec::new();
    fill(&sizes, 0, 0, items, span, &mut out)?;
    Ok(out)
}

/// The single expression a braced scalar initialiser (`{e}`, `{{e}}`) holds. Like gcc, an
/// empty `{}` for a scalar is an error (it is fine for an array).
pub(crate) fn braced_scalar(items: &[InitVal], span: Span) -> Result<&Expr, Diagnostic> {
    match items {
        [] => Err(Diagnostic::error(span, "empty initialiser for a scalar")),
        [InitVal::Expr(e)] => Ok(e),
        [InitVal::List(inner, inner_span)] => braced_scalar(inner, *inner_span),
        [_, extra, ..] => Err(Diagnostic::error(init_span(extra, span), "too many initialisers for a scalar")
            .with_label(span, "this braced list initialises a single element")),
    }
}

fn init_span(v: &InitVal, fallback: Span) -> Span {
    match v {
        InitVal::Expr(e) if e.span != Span::DUMMY => e.span,
        InitVal::List(_, s) if *s != Span::DUMMY => *s,
        _ => fallback,
    }
}

fn fill<'a>(
    sizes: &[u64],
    level: usize,
    base: u64,
    items: &'a [InitVal],
    span: Span,
    out: &mut Vec<(u32, &'a Expr)>,
) -> Result<(), Diagnostic> {
    let n = sizes.len() - 1;
    let size = sizes[level];
    let mut pos = 0u64;
    for item in items {
        if pos >= size {
            return Err(Diagnostic::error(init_span(item, span), "too many initialisers").with_label(
                span,
                format!("this list initialises {size} element{}", if size == 1 { "" } else { "s" }),
            ));
        }
        match item {
            InitVal::Expr(e) => {
                out.push(((base + pos) as u32, e));
                pos += 1;
            }
            InitVal::List(sub, sub_span) => {
                let sub_span = if *sub_span == Span::DUMMY { span } else { *sub_span };
                // Smallest level below this one whose object starts at `pos`; level n
                // (a scalar, size 1) always qualifies.
                let j = (level + 1..=n).find(|&j| pos.is_multiple_of(sizes[j])).unwrap_or(n);
                if j == n {
                    out.push(((base + pos) as u32, braced_scalar(sub, sub_span)?));
                    pos += 1;
                } else {
                    fill(sizes, j, base + pos, sub, sub_span, out)?;
                    pos += sizes[j];
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::ast::ExprKind;

    /// Parses the initialiser of `int x<dims> = <init>;` and flattens it to element values
    /// (literal ints; identifiers map to -1).
    fn flat(dims: &[u32], init: &str) -> Result<Vec<(u32, i32)>, String> {
        let dims_src: String = dims.iter().map(|d| format!("[{d}]")).collect();
        let unit = crate::frontend::parse(&format!("int x{dims_src} = {init};")).map_err(|e| format!("{e:?}"))?;
        let crate::frontend::ast::Item::Decl(d) = &unit.items[0] else { unreachable!() };
        let Some(InitVal::List(items, span)) = &d.defs[0].init else { return Err("not a list".into()) };
        let out = flatten_array(dims, items, *span).map_err(|d| d.message)?;
        Ok(out
            .into_iter()
            .map(|(i, e)| match &e.kind {
                ExprKind::IntLit(v, _) => (i, *v),
                _ => (i, -1),
            })
            .collect())
    }

    #[test]
    fn sysy_md_examples() {
        assert_eq!(
            flat(&[4, 2], "{1, 2, {3}, {5}, a[3][0], 8}").unwrap(),
            vec![(0, 1), (1, 2), (2, 3), (4, 5), (6, -1), (7, 8)]
        );
        assert_eq!(
            flat(&[4, 2, 1], "{{d[2][1], {c[2][1]}}, {3, 4}, {5, 6}, {7, 8}}").unwrap(),
            vec![(0, -1), (1, -1), (2, 3), (3, 4), (4, 5), (5, 6), (6, 7), (7, 8)]
        );
        assert_eq!(flat(&[4, 2], "{{1, 2}, {3, 4}, {}, 7}").unwrap(), vec![(0, 1), (1, 2), (2, 3), (3, 4), (6, 7)]);
        assert_eq!(flat(&[4, 2], "{}").unwrap(), vec![]);
        assert_eq!(
            flat(&[4, 2], "{1, 2, 3, 4, 5, 6, 7, 8}").unwrap(),
            (0..8).map(|i| (i, i as i32 + 1)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn braces_inside_elided_aggregates() {
        // 1 fills x[0][0][0]; `{2}` is the next sub-object starting at element 1: the scalar
        // x[0][0][1]; then `{3}` starts at 2, the row x[0][1].
        assert_eq!(flat(&[2, 2, 2], "{1, {2}, {3}, 4}").unwrap(), vec![(0, 1), (1, 2), (2, 3), (4, 4)]);
        // `{5, 6}` at element 2 of a [2][2][2]: x[0][1] (size 2), not x[1].
        assert_eq!(flat(&[2, 2, 2], "{1, 2, {5, 6}, {7}}").unwrap(), vec![(0, 1), (1, 2), (2, 5), (3, 6), (4, 7)]);
        // Nested list at an aligned position fills the whole sub-array and zero-pads it.
        assert_eq!(flat(&[3, 3], "{{1}, 2, 3, 4, {5}}").unwrap(), vec![(0, 1), (3, 2), (4, 3), (5, 4), (6, 5)]);
        assert_eq!(flat(&[2, 3], "{{{1}, {2}, 3}}").unwrap(), vec![(0, 1), (1, 2), (2, 3)]);
        assert!(flat(&[2, 3], "{{{1}, {}, 3}}").unwrap_err().contains("empty initialiser for a scalar"));
        assert_eq!(flat(&[3], "{{{7}}, 8}").unwrap(), vec![(0, 7), (1, 8)]);
    }

    #[test]
    fn too_many_initialisers() {
        assert!(flat(&[2], "{1, 2, 3}").unwrap_err().contains("too many initialisers"));
        assert!(flat(&[2, 2], "{{1, 2, 3}}").unwrap_err().contains("too many initialisers"));
        assert!(flat(&[2, 2], "{{1}, {2}, {3}}").unwrap_err().contains("too many initialisers"));
        assert!(flat(&[2, 2], "{1, 2, 3, 4, 5}").unwrap_err().contains("too many initialisers"));
        assert!(flat(&[2, 2], "{1, {2, 3}}").unwrap_err().contains("too many initialisers for a scalar"));
        assert!(flat(&[2, 2], "{1, 2, 3, 4, {}}").unwrap_err().contains("too many initialisers"));
    }
}
