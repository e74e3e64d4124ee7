//! Every program of `corpus/traps` traps in the reference interpreter with the kind and at the
//! location its header states:
//!
//! ```text
//! // expect-trap: <slug> at LINE:COL
//! // limits: steps=N depth=N        (optional)
//! ```
//!
//! `NAME.in`, when present, is the program's stdin.

use sysy_check::refinterp::{self, RefConfig};
use std::collections::BTreeSet;
use std::path::PathBuf;
use sysyc::runtime::{SrcLoc, TrapKind};

struct Expectation {
    kind: TrapKind,
    loc: SrcLoc,
    config: RefConfig,
}

fn parse_header(name: &str, source: &str) -> Expectation {
    let mut lines = source.lines();
    let first = lines.next().unwrap_or_default();
    let spec = first
        .strip_prefix("// expect-trap: ")
        .unwrap_or_else(|| panic!("{name}: no expect-trap header"));
    let (slug, at) = spec
        .split_once(" at ")
        .unwrap_or_else(|| panic!("{name}: malformed header"));
    let kind =
        TrapKind::from_slug(slug).unwrap_or_else(|| panic!("{name}: unknown trap kind {slug}"));
    let (line, col) = at
        .split_once(':')
        .unwrap_or_else(|| panic!("{name}: malformed location"));
    let loc = SrcLoc {
        line: line.trim().parse().unwrap(),
        col: col.trim().parse().unwrap(),
    };
    let mut config = RefConfig::default();
    for l in lines.take_while(|l| l.starts_with("//")) {
        if let Some(limits) = l.strip_prefix("// limits: ") {
            for item in limits.split_whitespace() {
                match item.split_once('=') {
                    Some(("steps", n)) => config.max_steps = n.parse().unwrap(),
                    Some(("depth", n)) => config.max_depth = n.parse().unwrap(),
                    _ => panic!("{name}: unknown limit {item}"),
                }
            }
        }
    }
    Expectation { kind, loc, config }
}

fn trap_corpus() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/traps");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus/traps exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sy"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_trap_program_traps_as_declared() {
    let files = trap_corpus();
    assert!(files.len() >= 20, "the trap corpus is missing");
    let mut kinds_seen = BTreeSet::new();
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let source = std::fs::read_to_string(path).unwrap();
        let stdin = std::fs::read(path.with_extension("in")).unwrap_or_default();
        let want = parse_header(&name, &source);
        let outcome = refinterp::run_source(&name, &source, &stdin, &want.config)
            .unwrap_or_else(|e| panic!("{name}: did not run: {e}"));
        let got = outcome.trap.as_ref().map(|t| (t.kind, t.loc));
        if got != Some((want.kind, Some(want.loc))) || outcome.exit_status.is_some() {
            failures.push(format!(
                "{name}: expected {} at {:?}, got {got:?}",
                want.kind, want.loc
            ));
        }
        kinds_seen.insert(want.kind);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every kind the reference interpreter can raise is covered (memory faults are the IR
    // interpreter's).
    for kind in TrapKind::ALL {
        if kind != TrapKind::MemoryFault {
            assert!(kinds_seen.contains(&kind), "no trap program for {kind}");
        }
    }
}

#[test]
fn output_before_a_trap_is_kept() {
    let src = "int main() { putint(7); putch(10); int z = 0; return 1 / z; }";
    let o = refinterp::run_source("t.sy", src, b"", &RefConfig::default()).unwrap();
    assert_eq!(o.stdout, b"7\n");
    assert_eq!(o.exit_status, None);
    assert_eq!(o.trap.map(|t| t.kind), Some(TrapKind::DivByZero));
    // putarray prints element by element and stops at the first bad one.
    let src = "int main() { int a[3]; a[0] = 4; putarray(3, a); return 0; }";
    let o = refinterp::run_source("t.sy", src, b"", &RefConfig::default()).unwrap();
    assert_eq!(o.stdout, b"3: 4");
    assert_eq!(o.trap.map(|t| t.kind), Some(TrapKind::UninitRead));
}
