//! Statement coverage of the reference interpreter: exactly the statements that ran are
//! marked, and recording it changes nothing about the run.

use sysy_check::refinterp::{self, RefConfig};
use sysyc::frontend::{self, LineIndex};

const SOURCE: &str = "int g;
int never(int x) {
    g = x;
    return x + 1;
}
int twice(int x) {
    if (x > 5) {
        return 1;
    }
    int a, b = 2;
    return x * b;
}
int main() {
    int i = 0;
    while (i < 3) {
        g = g + twice(i);
        if (i == 7) break;
        i = i + 1;
    }
    while (i < 0) {
        g = 0;
    }
    if (g > 100) {
        putint(g);
    } else {
        putint(-g);
    }
    return 0;
}
";

fn run(source: &str) -> (sysyc::runtime::Outcome, refinterp::Coverage, LineIndex) {
    let lines = LineIndex::new(source);
    let program = frontend::compile_source("t.sy", source).expect("valid");
    let plain = refinterp::run(&program, &lines, b"", &RefConfig::default()).expect("runs");
    let (outcome, coverage) =
        refinterp::run_with_coverage(&program, &lines, b"", &RefConfig::default()).expect("runs");
    assert_eq!(outcome, plain, "recording coverage changes the run");
    (outcome, coverage, lines)
}

#[test]
fn marks_exactly_the_statements_that_ran() {
    let (outcome, coverage, lines) = run(SOURCE);
    assert_eq!(outcome.stdout, b"-6");
    let missed: Vec<u32> = coverage
        .missed_locations(&lines)
        .iter()
        .map(|l| l.line)
        .collect();
    // `never`'s two statements, the taken-never `return 1` (and its block), the `break`, the
    // body of the second loop (block and assignment), the then-branch (block and call).
    assert_eq!(missed, vec![3, 4, 7, 8, 17, 20, 21, 23, 24]);
    // `never` 2, `twice` 6 (if, block, return, one declaration per name, return), `main` 16
    // (blocks and the statements in them included).
    assert_eq!(coverage.total(), 24);
    assert_eq!(coverage.executed_count(), 15);
    assert!((coverage.fraction() - 15.0 / 24.0).abs() < 1e-12);
}

#[test]
fn inert_declarations_count_one_by_one() {
    // `int a; int b; int c;` are lowered to one node standing for three statements.
    let src = "int main() { int a; int b; int c; if (0) { int d; int e; } return 0; }";
    let (_, coverage, _) = run(src);
    assert_eq!(coverage.total(), 8);
    assert_eq!(coverage.executed_count(), 5);
}

#[test]
fn a_trap_keeps_the_coverage_up_to_it() {
    let src = "int main() { int x = 0; putint(1); x = 1 / x; putint(2); return 0; }";
    let (outcome, coverage, _) = run(src);
    assert!(outcome.trap.is_some());
    assert_eq!(coverage.executed, vec![true, true, true, false, false]);
}
