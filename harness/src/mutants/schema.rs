//! Mutant schemata: every sampled mutant compiled into one build and switched on at run time.
//!
//! Building one mutant at a time costs a rebuild of the compiler and a relink of the harness
//! per mutant (one to three minutes on two cores, several times the campaign that judges it).
//! Here each sampled site is found in its file's syntax tree ([`syn`], with the byte ranges
//! `proc-macro2` records under `span-locations`) and its expression is rewritten to
//!
//! ```text
//! (if crate::mutant_switch::active(ID) { MUTATED } else { ORIGINAL })
//! ```
//!
//! where `MUTATED` is the expression's source text with exactly the textual mutation of
//! [`Mutant::apply`] (the operator token, the `min`/`max` method name or the returned
//! literal changed) and `ORIGINAL` the expression with its own nested sites rewritten the same
//! way. `active` compares `ID` with the number in `SYSYC_MUTANT` (read once), so one build runs
//! the original compiler (variable unset) or any one mutant; a mutant behaves exactly as the
//! textual mutation would, since `MUTATED` holds the untouched text of every nested site.
//!
//! Which sites can be placed: an operator of a binary expression, a `.min(`/`.max(` method
//! call, `return true`/`return false`. Sites inside macro invocations (their tokens are not
//! parsed as expressions) and in constant contexts (`const` and `static` items, `const fn`,
//! array lengths, enum discriminants, const generic arguments: no run-time call is allowed
//! there) are not placed and stay out of the sample.
//!
//! A mutated expression that does not type-check makes the whole build fail: the build's
//! error locations are mapped back ([`Schema::culprits`]) to the innermost `MUTATED` branch
//! holding them (that mutant is *unviable*, as its textual build would be) or, rarely, the
//! innermost wrapper (the rewriting itself upset type inference or a borrow: the site is
//! dropped as not placeable), and the schema is written again without them.

use super::Mutant;
use proc_macro2::Span;
use std::collections::BTreeMap;
use std::ops::Range;
use syn::spanned::Spanned;
use syn::visit::Visit;

/// The environment variable naming the active mutant (unset or `0`: none).
pub const SWITCH_VARIABLE: &str = "SYSYC_MUTANT";

/// The module added to the compiler crate (`compiler/src/mutant_switch.rs`).
pub const SWITCH_MODULE: &str = "//! Written by `harness mutants` (mutant schemata): which mutant is on.\n\
static ACTIVE: std::sync::OnceLock<u32> = std::sync::OnceLock::new();\n\
\n\
/// True when mutant `id` is the one named by `SYSYC_MUTANT`.\n\
#[inline]\n\
pub fn active(id: u32) -> bool {\n\
    *ACTIVE.get_or_init(|| std::env::var(\"SYSYC_MUTANT\").ok().and_then(|v| v.parse().ok()).unwrap_or(0)) == id\n\
}\n";

/// What kind of expression a site is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Binary,
    MinMax,
    ReturnBool,
}

/// An expression that can carry mutants: its byte range in the file and the byte where a
/// site's changed token starts.
#[derive(Clone, Debug)]
struct Node {
    range: Range<usize>,
    anchor: usize,
    kind: Kind,
}

/// Collects the mutable expressions of a file outside constant contexts and test code.
#[derive(Default)]
struct Collector {
    nodes: Vec<Node>,
}

fn bytes(span: Span) -> Range<usize> {
    span.byte_range()
}

fn is_test_attr(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let path = a.path();
        if path.is_ident("test") {
            return true;
        }
        path.is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
    })
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_expr_binary(&mut self, e: &'ast syn::ExprBinary) {
        let start = bytes(e.left.span()).start;
        let end = bytes(e.right.span()).end;
        self.nodes.push(Node { range: start..end, anchor: bytes(e.op.span()).start, kind: Kind::Binary });
        syn::visit::visit_expr_binary(self, e);
    }
    fn visit_expr_method_call(&mut self, e: &'ast syn::ExprMethodCall) {
        if e.method == "min" || e.method == "max" {
            let start = bytes(e.receiver.span()).start;
            let end = bytes(e.paren_token.span.close()).end;
            self.nodes.push(Node { range: start..end, anchor: bytes(e.method.span()).start, kind: Kind::MinMax });
        }
        syn::visit::visit_expr_method_call(self, e);
    }
    fn visit_expr_return(&mut self, e: &'ast syn::ExprReturn) {
        if let Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Bool(b), .. })) = e.expr.as_deref() {
            let start = bytes(e.return_token.span()).start;
            self.nodes.push(Node { range: start..bytes(b.span()).end, anchor: start, kind: Kind::ReturnBool });
        }
        syn::visit::visit_expr_return(self, e);
    }
    // Constant contexts: a call to `active` is not allowed there.
    fn visit_item_const(&mut self, _: &'ast syn::ItemConst) {}
    fn visit_item_static(&mut self, _: &'ast syn::ItemStatic) {}
    fn visit_impl_item_const(&mut self, _: &'ast syn::ImplItemConst) {}
    fn visit_trait_item_const(&mut self, _: &'ast syn::TraitItemConst) {}
    fn visit_expr_const(&mut self, _: &'ast syn::ExprConst) {}
    fn visit_type(&mut self, _: &'ast syn::Type) {}
    fn visit_generic_argument(&mut self, _: &'ast syn::GenericArgument) {}
    fn visit_variant(&mut self, _: &'ast syn::Variant) {}
    fn visit_pat(&mut self, _: &'ast syn::Pat) {}
    fn visit_expr_repeat(&mut self, e: &'ast syn::ExprRepeat) {
        self.visit_expr(&e.expr);
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if f.sig.constness.is_none() && !is_test_attr(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if f.sig.constness.is_none() && !is_test_attr(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test_attr(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }
}

/// The token a mutant changes and what it becomes: (`from`, `to`), without the spaces and
/// the `1` of the textual patterns (`" + 1"` → `"+"`).
fn token_change(m: &Mutant) -> (&'static str, &'static str) {
    let strip = |s: &'static str| {
        let s = s.trim();
        let s = s.strip_suffix(" 1").unwrap_or(s);
        let s = s.strip_prefix('.').unwrap_or(s);
        s.strip_suffix('(').unwrap_or(s)
    };
    (strip(m.operator.from), strip(m.operator.to))
}

fn kind_of(m: &Mutant) -> Kind {
    match m.operator.name {
        "min-to-max" | "max-to-min" => Kind::MinMax,
        "true-to-false" | "false-to-true" => Kind::ReturnBool,
        _ => Kind::Binary,
    }
}

/// Byte offset of `line` (1-based) in `text`.
fn line_start(text: &str, line: usize) -> Option<usize> {
    if line == 1 {
        return Some(0);
    }
    text.match_indices('\n').nth(line - 2).map(|(i, _)| i + 1)
}

/// The mutable expressions of one file's text (`None` when it does not parse).
fn nodes_of(text: &str) -> Option<Vec<Node>> {
    let file = syn::parse_file(text).ok()?;
    let mut collector = Collector::default();
    collector.visit_file(&file);
    Some(collector.nodes)
}

/// The node of `nodes` that site `m` of `text` mutates.
fn locate(text: &str, nodes: &[Node], m: &Mutant) -> Option<usize> {
    let at = line_start(text, m.line)? + m.column - 1;
    let anchor = if m.operator.from.starts_with([' ', '.']) { at + 1 } else { at };
    let (from, _) = token_change(m);
    if !text.get(anchor..)?.starts_with(from) {
        return None;
    }
    let kind = kind_of(m);
    nodes.iter().position(|n| n.anchor == anchor && n.kind == kind)
}

/// The sites of `sites` that can be placed in a schema (see the module documentation).
pub fn placeable(sites: Vec<Mutant>, text_of: impl Fn(&str) -> Option<String>) -> Vec<Mutant> {
    let mut by_file: BTreeMap<String, Vec<Mutant>> = BTreeMap::new();
    for m in sites {
        by_file.entry(m.file.clone()).or_default().push(m);
    }
    let mut out = Vec::new();
    for (file, ms) in by_file {
        let Some(text) = text_of(&file) else { continue };
        let Some(nodes) = nodes_of(&text) else { continue };
        out.extend(ms.into_iter().filter(|m| locate(&text, &nodes, m).is_some()));
    }
    out.sort_by(|a, b| (&a.file, a.line, a.column, a.operator.name).cmp(&(&b.file, b.line, b.column, b.operator.name)));
    out
}

/// A region of a rewritten file: a mutant's `MUTATED` branch, or a whole wrapper.
#[derive(Clone, Debug)]
enum Region {
    Mutated(u32),
    Wrapper(Vec<u32>),
}

/// The rewritten files of one schema.
#[derive(Debug, Default)]
pub struct Schema {
    /// Repository path → rewritten text.
    pub files: BTreeMap<String, String>,
    /// Repository path → regions of its rewritten text, for mapping build errors back.
    regions: BTreeMap<String, Vec<(Range<usize>, Region)>>,
}

/// One expression to rewrite, with the mutants (id, mutant) it carries and the nodes nested
/// in it.
struct Wrap<'a> {
    node: Node,
    mutants: Vec<(u32, &'a Mutant)>,
    children: Vec<usize>,
}

impl Schema {
    /// Rewrites the files of `mutants` (each with its switch id) from their original texts.
    /// Every mutant must be placeable ([`placeable`]) in the text `text_of` gives.
    pub fn write(mutants: &[(u32, Mutant)], text_of: impl Fn(&str) -> Option<String>) -> Result<Schema, String> {
        let mut by_file: BTreeMap<&str, Vec<(u32, &Mutant)>> = BTreeMap::new();
        for (id, m) in mutants {
            by_file.entry(m.file.as_str()).or_default().push((*id, m));
        }
        let mut schema = Schema::default();
        for (file, ms) in by_file {
            let text = text_of(file).ok_or_else(|| format!("cannot read {file}"))?;
            let nodes = nodes_of(&text).ok_or_else(|| format!("{file} does not parse"))?;
            let mut wraps: BTreeMap<usize, Wrap<'_>> = BTreeMap::new();
            for (id, m) in ms {
                let index = locate(&text, &nodes, m).ok_or_else(|| format!("mutant {} is not placeable", m.id()))?;
                wraps
                    .entry(index)
                    .or_insert_with(|| Wrap { node: nodes[index].clone(), mutants: Vec::new(), children: Vec::new() })
                    .mutants
                    .push((id, m));
            }
            let mut wraps: Vec<Wrap<'_>> = wraps.into_values().collect();
            // Outer expressions first: a node's children are the next nodes inside it.
            wraps.sort_by_key(|w| (w.node.range.start, std::cmp::Reverse(w.node.range.end)));
            let mut roots = Vec::new();
            let mut stack: Vec<usize> = Vec::new();
            for i in 0..wraps.len() {
                while stack.last().is_some_and(|&top| wraps[top].node.range.end <= wraps[i].node.range.start) {
                    stack.pop();
                }
                match stack.last() {
                    Some(&parent) => wraps[parent].children.push(i),
                    None => roots.push(i),
                }
                stack.push(i);
            }
            let mut out = String::with_capacity(text.len() * 2);
            let mut regions = Vec::new();
            emit(&text, 0..text.len(), &roots, &wraps, &mut out, &mut regions);
            schema.files.insert(file.to_string(), out);
            schema.regions.insert(file.to_string(), regions);
        }
        Ok(schema)
    }

    /// The mutants a build error at `file:line:column` (1-based, column in characters, as
    /// rustc prints it) points at: the mutant whose `MUTATED` branch holds it, or every
    /// mutant of the innermost wrapper holding it; empty when it is outside every rewrite.
    pub fn culprits(&self, file: &str, line: usize, column: usize) -> Vec<u32> {
        let (Some(text), Some(regions)) = (self.files.get(file), self.regions.get(file)) else {
            return Vec::new();
        };
        let Some(start) = line_start(text, line) else { return Vec::new() };
        let offset = start + text[start..].chars().take(column.saturating_sub(1)).map(char::len_utf8).sum::<usize>();
        // Regions nest; the innermost holding the offset is the shortest.
        regions
            .iter()
            .filter(|(r, _)| r.contains(&offset))
            .min_by_key(|(r, _)| r.len())
            .map(|(_, region)| match region {
                Region::Mutated(id) => vec![*id],
                Region::Wrapper(ids) => ids.clone(),
            })
            .unwrap_or_default()
    }
}

/// Writes `text[range]` to `out` with the wraps `children` (inside `range`, in order)
/// rewritten, recording the regions.
fn emit(text: &str, range: Range<usize>, children: &[usize], wraps: &[Wrap<'_>], out: &mut String, regions: &mut Vec<(Range<usize>, Region)>) {
    let mut at = range.start;
    for &c in children {
        let w = &wraps[c];
        out.push_str(&text[at..w.node.range.start]);
        let begin = out.len();
        out.push('(');
        for (id, m) in &w.mutants {
            let (from, to) = token_change(m);
            out.push_str(&format!("if crate::mutant_switch::active({id}) {{ "));
            let mutated_start = out.len();
            out.push_str(&text[w.node.range.start..w.node.anchor]);
            out.push_str(to);
            out.push_str(&text[w.node.anchor + from.len()..w.node.range.end]);
            regions.push((mutated_start..out.len(), Region::Mutated(*id)));
            out.push_str(" } else ");
        }
        out.push_str("{ ");
        emit(text, w.node.range.clone(), &w.children, wraps, out, regions);
        out.push_str(" })");
        regions.push((begin..out.len(), Region::Wrapper(w.mutants.iter().map(|(id, _)| *id).collect())));
        at = w.node.range.end;
    }
    out.push_str(&text[at..range.end]);
}

/// The `file:line:column` locations of the errors in rustc's `--message-format short` output.
pub fn error_locations(stderr: &str) -> Vec<(String, usize, usize)> {
    stderr
        .lines()
        .filter_map(|l| {
            let (place, _) = l.split_once(": error")?;
            let mut parts = place.rsplitn(3, ':');
            let column = parts.next()?.parse().ok()?;
            let line = parts.next()?.parse().ok()?;
            Some((parts.next()?.to_string(), line, column))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutants::sites_in;

    const FILE: &str = "compiler/src/passes/x.rs";
    const TEXT: &str = "const N: usize = 2 + 1;\n\
fn f(a: i32, b: i32) -> bool {\n    if a < b + 1 && a > 0 { return true; }\n    let v = [0; 3 + 1];\n    println!(\"{}\", a - b);\n    a.min(b) == 0\n}\n";

    #[test]
    fn sites_in_constant_contexts_and_macros_are_not_placeable() {
        let sites = sites_in(FILE, TEXT);
        let placed = placeable(sites.clone(), |_| Some(TEXT.to_string()));
        let ids: Vec<String> = placed.iter().map(|m| format!("{}:{}", m.line, m.operator.name)).collect();
        assert_eq!(
            ids,
            vec![
                "3:lt-to-le",
                "3:add-to-sub",
                "3:plus-one-to-minus-one",
                "3:and-to-or",
                "3:gt-to-ge",
                "3:true-to-false",
                "6:min-to-max",
                "6:eq-to-ne",
            ]
        );
        // The `const`, the array length and the `println!` argument were sites of the text.
        assert!(sites.iter().any(|m| m.line == 1) && sites.iter().any(|m| m.line == 4) && sites.iter().any(|m| m.line == 5));
    }

    #[test]
    fn each_branch_holds_exactly_the_textual_mutation() {
        let placed: Vec<(u32, Mutant)> =
            placeable(sites_in(FILE, TEXT), |_| Some(TEXT.to_string())).into_iter().enumerate().map(|(i, m)| (i as u32 + 1, m)).collect();
        let schema = Schema::write(&placed, |_| Some(TEXT.to_string())).expect("schema");
        let out = &schema.files[FILE];
        // The parse of the rewritten file must succeed, and every mutant's branch must be the
        // textual mutation of its expression.
        syn::parse_file(out).expect("the schema parses");
        let id = |name: &str| placed.iter().find(|(_, m)| m.operator.name == name).expect("placed").0;
        assert!(out.contains(&format!("if crate::mutant_switch::active({}) {{ a <= b + 1 }}", id("lt-to-le"))), "{out}");
        assert!(out.contains(&format!("if crate::mutant_switch::active({}) {{ b - 1 }}", id("add-to-sub"))), "{out}");
        assert!(out.contains(&format!("if crate::mutant_switch::active({}) {{ a < b + 1 || a > 0 }}", id("and-to-or"))), "{out}");
        assert!(out.contains("{ return false }"), "{out}");
        assert!(out.contains("a.max(b)"), "{out}");
        assert!(out.starts_with("const N: usize = 2 + 1;"), "{out}");
        assert!(out.contains("[0; 3 + 1]") && out.contains("println!(\"{}\", a - b)"), "{out}");
        // Removing every `if active(..) { .. } else` prefix gives the original back.
        let mut original = out.clone();
        while let Some(start) = original.find("if crate::mutant_switch::active(") {
            let else_at = original[start..].find(" } else ").expect("else") + start;
            original.replace_range(start..else_at + " } else ".len(), "");
        }
        let compact = |s: &str| s.replace(['(', ')', '{', '}', ' '], "");
        assert_eq!(compact(&original), compact(TEXT));
    }

    #[test]
    fn build_errors_map_to_the_innermost_region() {
        let placed: Vec<(u32, Mutant)> =
            placeable(sites_in(FILE, TEXT), |_| Some(TEXT.to_string())).into_iter().enumerate().map(|(i, m)| (i as u32 + 1, m)).collect();
        let schema = Schema::write(&placed, |_| Some(TEXT.to_string())).expect("schema");
        let out = &schema.files[FILE];
        let at = out.find("a.max(b)").expect("mutated min");
        let line = out[..at].matches('\n').count() + 1;
        let column = at - out[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
        let min_to_max = placed.iter().find(|(_, m)| m.operator.name == "min-to-max").expect("site").0;
        assert_eq!(schema.culprits(FILE, line, column), vec![min_to_max]);
        assert_eq!(schema.culprits(FILE, 1, 1), Vec::<u32>::new());
        let stderr = "warning: unused\ncompiler/src/passes/x.rs:12:5: error[E0308]: mismatched types\nerror: could not compile\n";
        assert_eq!(error_locations(stderr), vec![(FILE.to_string(), 12, 5)]);
    }
}
