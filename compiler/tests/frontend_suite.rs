//! The front end on whole programs: every competition case (when the competition suites
//! are present, see `sysyc::suites::sysy_tests_dir`) and every program of the project corpus (`corpus/lang`) must parse, analyse
//! without error, and survive a pretty-print round trip unchanged.

use std::path::{Path, PathBuf};
use sysyc::frontend::{self, LineIndex, pretty};

fn sy_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "sy")).collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/lang")
}

/// Parses, analyses and round-trips one file; returns a description of what failed.
fn check_file(path: &Path) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let src = frontend::source_from_bytes(&bytes);
    let name = path.display().to_string();
    let program = frontend::compile_source(&name, &src).map_err(|e| e.to_string())?;
    sysyc::frontend::hir_check::check(&program).map_err(|e| format!("{name}: HIR invariant broken: {e}"))?;
    let ast = frontend::parse(&src).map_err(|d| frontend::diag::render(&name, &src, &d))?;
    let printed = pretty::print(&ast);
    let again = frontend::parse(&printed).map_err(|d| {
        format!("{name}: printed form does not parse:\n{}", frontend::diag::render("printed", &printed, &d))
    })?;
    if again.without_spans() != ast.without_spans() {
        return Err(format!("{name}: round trip changed the AST; printed:\n{printed}"));
    }
    frontend::analyze(&again, &LineIndex::new(&printed))
        .map_err(|d| frontend::diag::render("printed", &printed, &d))?;
    Ok(())
}

fn check_all(files: &[PathBuf]) {
    let failures: Vec<String> = files.iter().filter_map(|f| check_file(f).err()).collect();
    assert!(failures.is_empty(), "{} of {} files failed:\n{}", failures.len(), files.len(), failures.join("\n\n"));
}

#[test]
fn competition_cases_parse_analyze_and_roundtrip() {
    let Some(root) = sysyc::suites::sysy_tests_dir() else {
        eprintln!("skipped: the competition suites are not present (set $SYSY_TESTS)");
        return;
    };
    let functional = sy_files(&root.join("functional"));
    let performance = sy_files(&root.join("performance"));
    assert_eq!(functional.len(), 100, "functional cases");
    assert_eq!(performance.len(), 46, "performance cases");
    check_all(&functional);
    check_all(&performance);
}

#[test]
fn corpus_programs_parse_analyze_and_roundtrip() {
    let files = sy_files(&corpus_dir());
    assert!(files.len() >= 15, "corpus/lang has only {} programs", files.len());
    check_all(&files);
}

/// Every corpus program has an expected-output file in the competition convention.
#[test]
fn corpus_programs_have_expected_outputs() {
    for f in sy_files(&corpus_dir()) {
        let out = f.with_extension("out");
        let text = std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
        let status = text.trim_end_matches('\n').rsplit('\n').next().unwrap_or("");
        let code: u32 =
            status.parse().unwrap_or_else(|_| panic!("{}: last line {status:?} is not an exit status", out.display()));
        assert!(code <= 255 && text.ends_with('\n'), "{}", out.display());
    }
}
