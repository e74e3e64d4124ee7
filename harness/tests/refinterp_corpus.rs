//! The reference interpreter reproduces the expected result of every program of
//! `corpus/lang` (and of the competition's functional suite when it is present).

use sysy_check::refinterp::{self, RefConfig};
use std::path::{Path, PathBuf};

/// Runs every `NAME.sy` of `dir` and returns one message per case whose result differs.
fn mismatches(dir: &Path) -> (usize, Vec<String>) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sy"))
        .collect();
    files.sort();
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let source = sysyc::frontend::source_from_bytes(&std::fs::read(path).unwrap());
        let stdin = std::fs::read(path.with_extension("in")).unwrap_or_default();
        let expected = std::fs::read(path.with_extension("out")).unwrap();
        match refinterp::run_source(&name, &source, &stdin, &RefConfig::default()) {
            Ok(outcome) => {
                let expected = sysy_check::failure::Expected::OutFile(expected);
                if let Err(f) = sysy_check::failure::judge(&expected, &outcome, sysy_check::failure::Stage::Reference) {
                    failures.push(format!("{name}: {f}"));
                }
            }
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    (files.len(), failures)
}

#[test]
fn lang_corpus() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/lang");
    let (count, failures) = mismatches(&dir);
    assert!(count >= 20, "corpus/lang has only {count} programs");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn functional_suite_when_present() {
    let Some(root) = sysyc::suites::sysy_tests_dir() else {
        eprintln!("skipped: the competition suites are not present (set $SYSY_TESTS)");
        return;
    };
    let dir = &root.join("functional");
    let (count, failures) = mismatches(dir);
    assert_eq!(count, 100);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
