//! Mechanical mutants of the compiler's passes and back end, for the campaign's own mutation
//! score (`harness mutants`, see [`experiment`]).
//!
//! A *site* is one occurrence of an operator pattern in a source line of `compiler/src/passes`
//! or `compiler/src/isa` ([`OPERATORS`]: a comparison made strict or loose or negated, `&&`
//! and `||` exchanged, `+ 1` and `- 1` exchanged, `+` and `-` exchanged, `min` and `max`
//! exchanged, a `return true` made `false` and back). Comment lines, string literals,
//! assertions and everything from a file's `#[cfg(test)]` on are left alone. Sites are
//! enumerated in a fixed order (file, line, column, operator) and identified by
//! `file:line:column:operator`, so a list drawn from a seed ([`sample`]) is the same on every
//! run of the same source tree.

pub mod experiment;
pub mod schema;

use sysy_generator::{Choices, SeededChoices};
use std::path::{Path, PathBuf};

/// One textual mutation operator: `from` (with its surrounding spaces) becomes `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operator {
    pub name: &'static str,
    pub from: &'static str,
    pub to: &'static str,
}

const fn op(name: &'static str, from: &'static str, to: &'static str) -> Operator {
    Operator { name, from, to }
}

/// The operators, in enumeration order.
pub const OPERATORS: &[Operator] = &[
    op("lt-to-le", " < ", " <= "),
    op("le-to-lt", " <= ", " < "),
    op("gt-to-ge", " > ", " >= "),
    op("ge-to-gt", " >= ", " > "),
    op("eq-to-ne", " == ", " != "),
    op("ne-to-eq", " != ", " == "),
    op("and-to-or", " && ", " || "),
    op("or-to-and", " || ", " && "),
    op("plus-one-to-minus-one", " + 1", " - 1"),
    op("minus-one-to-plus-one", " - 1", " + 1"),
    op("add-to-sub", " + ", " - "),
    op("sub-to-add", " - ", " + "),
    op("min-to-max", ".min(", ".max("),
    op("max-to-min", ".max(", ".min("),
    op("true-to-false", "return true", "return false"),
    op("false-to-true", "return false", "return true"),
];

/// One mutation of one source line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mutant {
    /// Path relative to the repository root (`compiler/src/passes/licm.rs`).
    pub file: String,
    /// 1-based line and byte column of the pattern.
    pub line: usize,
    pub column: usize,
    pub operator: Operator,
}

impl Mutant {
    /// `file:line:column:operator`.
    pub fn id(&self) -> String {
        format!("{}:{}:{}:{}", self.file, self.line, self.column, self.operator.name)
    }

    /// The pass or stage the file implements, as the table groups it: the path below
    /// `compiler/src/` without `.rs` (`passes/licm`, `isa/arm/ifconv`).
    pub fn unit(&self) -> String {
        self.file.trim_start_matches("compiler/src/").trim_end_matches(".rs").to_string()
    }

    /// `source` with this mutation applied (`None` when the line no longer matches).
    pub fn apply(&self, source: &str) -> Option<String> {
        let mut out = String::with_capacity(source.len() + 8);
        let mut found = false;
        for (i, line) in source.split_inclusive('\n').enumerate() {
            if i + 1 == self.line {
                let at = self.column - 1;
                if !line.get(at..)?.starts_with(self.operator.from) {
                    return None;
                }
                out.push_str(&line[..at]);
                out.push_str(self.operator.to);
                out.push_str(&line[at + self.operator.from.len()..]);
                found = true;
            } else {
                out.push_str(line);
            }
        }
        found.then_some(out)
    }
}

/// True when byte `at` of `line` is inside a string or char literal (by counting unescaped
/// double quotes before it; char literals holding `"` are rare enough to ignore).
fn in_string(line: &str, at: usize) -> bool {
    let mut inside = false;
    let mut escaped = false;
    for c in line[..at].chars() {
        match c {
            '\\' if inside => escaped = !escaped,
            '"' if !escaped => inside = !inside,
            _ => escaped = false,
        }
        if c != '\\' {
            escaped = false;
        }
    }
    inside
}

/// The mutation sites of one file's text (`file` is its repository path).
pub fn sites_in(file: &str, text: &str) -> Vec<Mutant> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            break;
        }
        if trimmed.starts_with("//") || line.contains("assert") {
            continue;
        }
        let code = line.find(" //").map_or(line, |c| &line[..c]);
        for operator in OPERATORS {
            for (at, _) in code.match_indices(operator.from) {
                // `+ 1` must not be the start of `+ 10`.
                let after = code[at + operator.from.len()..].chars().next();
                if operator.from.ends_with('1') && after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') {
                    continue;
                }
                if in_string(code, at) {
                    continue;
                }
                out.push(Mutant { file: file.to_string(), line: i + 1, column: at + 1, operator: *operator });
            }
        }
    }
    out
}

/// The Rust files under `compiler/src/passes` and `compiler/src/isa` of the tree at `root`,
/// sorted, without test directories and files.
pub fn source_files(root: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut stack = vec![root.join("compiler/src/passes"), root.join("compiler/src/isa")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if path.is_dir() {
                if name != "tests" {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Every mutation site of the tree at `root`, in enumeration order.
pub fn all_sites(root: &Path) -> std::io::Result<Vec<Mutant>> {
    let mut out = Vec::new();
    for path in source_files(root)? {
        let text = std::fs::read_to_string(&path)?;
        let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
        out.extend(sites_in(&rel, &text));
    }
    Ok(out)
}

/// `sites` in an order drawn from `seed` (a Fisher–Yates shuffle): the first `n` are a
/// uniform sample, the same for the same seed and sites.
pub fn sample(mut sites: Vec<Mutant>, seed: u64) -> Vec<Mutant> {
    let mut rng = SeededChoices::new(seed ^ 0x6d75_7461_6e74_7321);
    for i in (1..sites.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        sites.swap(i, j);
    }
    sites
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_skip_comments_strings_asserts_and_tests() {
        let text = "fn f(a: i32) -> bool {\n    // a < b\n    let s = \"x < y\";\n    debug_assert!(a < 3);\n    if a < 3 && a + 10 > 0 { return true; }\n    a - 1 == 0 // c < d\n}\n#[cfg(test)]\nfn t() { 1 < 2; }\n";
        let sites = sites_in("compiler/src/passes/x.rs", text);
        let names: Vec<(usize, &str)> = sites.iter().map(|m| (m.line, m.operator.name)).collect();
        assert_eq!(
            names,
            vec![
                (5, "lt-to-le"),
                (5, "gt-to-ge"),
                (5, "and-to-or"),
                (5, "add-to-sub"),
                (5, "true-to-false"),
                (6, "eq-to-ne"),
                (6, "minus-one-to-plus-one"),
                (6, "sub-to-add"),
            ]
        );
        let m = &sites[0];
        assert_eq!(m.id(), "compiler/src/passes/x.rs:5:9:lt-to-le");
        assert_eq!(m.unit(), "passes/x");
        let mutated = m.apply(text).expect("applies");
        assert!(mutated.contains("if a <= 3 && a + 10 > 0"), "{mutated}");
        assert_eq!(mutated.len(), text.len() + 1);
        assert!(m.apply("nothing\n").is_none());
    }

    #[test]
    fn the_sample_is_a_seeded_permutation() {
        let sites = sites_in("f.rs", "a < b\nc > d\ne == f\ng && h\ni - 1\n");
        let a = sample(sites.clone(), 3);
        assert_eq!(a, sample(sites.clone(), 3));
        assert_ne!(a, sample(sites.clone(), 4));
        let mut sorted: Vec<String> = a.iter().map(Mutant::id).collect();
        sorted.sort();
        let mut ids: Vec<String> = sites.iter().map(Mutant::id).collect();
        ids.sort();
        assert_eq!(sorted, ids);
    }
}
