//! The mutator's contract: deterministic per seed, and every operator, on every program of
//! `corpus/` and of the competition's functional suite, gives a program that parses and
//! type-checks.

use super::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use sysy_check::refinterp::{self, RefConfig};
use sysyc::frontend::{self, LineIndex, pretty};

const SMALL: &str = "int g[4];
int add(int a, int b) { return a + b * 2; }
void bump(int a[]) { a[0] = a[0] + 1; }
int main() {
    int i = 0, s = 0;
    float f = 1.5;
    while (i < 10) {
        s = s + add(i, 3);
        if (s > 1000) { s = s - 7; } else { s = s + 1; }
        i = i + 1;
    }
    if (f < 0.0) { putint(99); }
    bump(g);
    putint(s + g[0]);
    return s % 256;
}
";

/// The spans of the statements `source`'s reference run missed (within a small budget).
fn coverage_of(source: &str, stdin: &[u8]) -> Coverage {
    let lines = LineIndex::new(source);
    let program = frontend::compile_source("t.sy", source).expect("seed programs are valid");
    let config = RefConfig { max_steps: 2_000_000, ..RefConfig::default() };
    match refinterp::run_with_coverage(&program, &lines, stdin, &config) {
        Ok((_, c)) => Coverage { missed: c.missed().collect() },
        Err(_) => Coverage::default(),
    }
}

/// Prints, parses and analyses a variant; the error names the operators.
fn well_formed(unit: &CompUnit, what: &str) -> Result<(), String> {
    let source = pretty::print(unit);
    frontend::compile_source("variant.sy", &source).map(|_| ()).map_err(|e| format!("{what}: {e}\n{source}"))
}

#[test]
fn same_seed_same_variant_and_seeds_differ() {
    let unit = frontend::parse(SMALL).expect("parses");
    let cov = coverage_of(SMALL, b"");
    let a: Vec<String> = (0..40).map(|s| pretty::print(&mutate(&unit, Some(&cov), s).unit)).collect();
    let b: Vec<String> = (0..40).map(|s| pretty::print(&mutate(&unit, Some(&cov), s).unit)).collect();
    assert_eq!(a, b);
    let distinct: std::collections::BTreeSet<&String> = a.iter().collect();
    assert!(distinct.len() > 30, "only {} distinct variants of 40", distinct.len());
    assert!(a.iter().all(|v| v != &pretty::print(&unit)), "every variant changed something");
}

#[test]
fn every_operator_applies_to_the_small_program_and_type_checks() {
    let unit = frontend::parse(SMALL).expect("parses");
    let cov = coverage_of(SMALL, b"");
    assert!(!cov.missed.is_empty(), "the small program has dead code");
    for op in Operator::ALL {
        let mut applied = 0;
        for seed in 0..20 {
            let mut u = unit.clone();
            if op.apply(&mut u, &mut SeededChoices::new(seed), Some(&cov)) {
                applied += 1;
                assert!(u.without_spans() != unit.without_spans(), "{} changed nothing (seed {seed})", op.name());
                well_formed(&u, op.name()).unwrap();
            }
        }
        assert!(applied > 0, "{} never applied", op.name());
    }
}

#[test]
fn emi_delete_removes_only_dead_code_and_keeps_the_output() {
    let unit = frontend::parse(SMALL).expect("parses");
    let cov = coverage_of(SMALL, b"");
    let run = |u: &CompUnit| {
        let source = pretty::print(u);
        refinterp::run_source("v.sy", &source, b"", &RefConfig::default()).expect("runs")
    };
    let expected = run(&unit);
    for seed in 0..20 {
        let mut u = unit.clone();
        if Operator::EmiDelete.apply(&mut u, &mut SeededChoices::new(seed), Some(&cov)) {
            assert_eq!(run(&u), expected, "seed {seed}: {}", pretty::print(&u));
        }
    }
}

fn sy_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sy_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "sy") {
            out.push(p);
        }
    }
}

#[test]
fn every_operator_type_checks_on_the_corpus_and_the_functional_suite() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    sy_files(&root.join("corpus"), &mut files);
    match sysyc::suites::sysy_tests_dir() {
        Some(dir) => sy_files(&dir.join("functional"), &mut files),
        None => eprintln!("no competition suites here: corpus/ only"),
    }
    assert!(files.len() > 50, "{} files", files.len());
    let mut applied: BTreeMap<&str, u32> = BTreeMap::new();
    let mut errors = Vec::new();
    for (k, path) in files.iter().enumerate() {
        let source = frontend::source_from_bytes(&std::fs::read(path).expect("readable"));
        let Ok(unit) = frontend::parse(&source) else { continue };
        if frontend::compile_source("seed.sy", &source).is_err() {
            continue; // a corpus file the front end rejects on purpose
        }
        let stdin = std::fs::read(path.with_extension("in")).unwrap_or_default();
        let cov = coverage_of(&source, &stdin);
        for op in Operator::ALL {
            let mut u = unit.clone();
            if op.apply(&mut u, &mut SeededChoices::new(k as u64), Some(&cov)) {
                *applied.entry(op.name()).or_default() += 1;
                if let Err(e) = well_formed(&u, &format!("{} on {}", op.name(), path.display())) {
                    errors.push(e.lines().take(3).collect::<Vec<_>>().join("\n"));
                }
            }
        }
    }
    assert!(errors.is_empty(), "{} ill-formed variants:\n{}", errors.len(), errors.join("\n---\n"));
    for op in Operator::ALL {
        assert!(applied.get(op.name()).copied().unwrap_or(0) > 10, "{} applied to {:?} programs", op.name(), applied.get(op.name()));
    }
}
