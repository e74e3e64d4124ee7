//! Exact instruction and class counts for hand-written programs whose
//! execution is known by construction (tests/asm/*.s, read their notes).
//! Each runs twice: with ARM/Thumb taken from the mapping symbols, and with
//! the heuristic alone; both must give the same exact counts.

mod common;

use sysy_cost_model::InsnClass::{self, *};
use sysy_cost_model::plugin_args::ModeDetection;
use sysy_cost_model::{ClassCounts, CostCounts, ProgramRanges};

/// Counts of `times` executions of a straight-line sequence with this class mix.
fn mix(times: u64, classes: &[(InsnClass, u64)]) -> ClassCounts {
    let mut counts = ClassCounts::default();
    for &(class, n) in classes {
        counts.add(class, n * times);
    }
    counts
}

fn sum(parts: &[ClassCounts]) -> ClassCounts {
    parts
        .iter()
        .fold(ClassCounts::default(), |acc, part| acc.merged(part))
}

fn check(source: &str, expected_program: ClassCounts, expected_runtime: ClassCounts) {
    if !common::tools_available(source) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = dir.path().join("guest");
    common::build_bare(&common::test_file(source), &exe);
    let ranges = ProgramRanges::from_markers(&exe).expect("program markers");
    for mode in [ModeDetection::Auto, ModeDetection::Heuristic] {
        let out = dir.path().join(format!("{mode:?}.counts"));
        let (_, counts): (_, CostCounts) = common::run_counted(&exe, &out, ranges.clone(), mode);
        assert!(
            counts.complete,
            "{source} {mode:?}: run not marked complete"
        );
        assert_eq!(
            counts.program, expected_program,
            "{source} {mode:?}: program classes"
        );
        assert_eq!(
            counts.runtime, expected_runtime,
            "{source} {mode:?}: runtime classes"
        );
        assert_eq!(
            counts.total,
            expected_program.total() + expected_runtime.total(),
            "{source} {mode:?}: total"
        );
        match mode {
            ModeDetection::Auto => {
                assert_eq!(
                    counts.mode_stats.from_heuristic, 0,
                    "{source}: every block covered by mapping symbols"
                );
                assert_eq!(
                    counts.mode_stats.heuristic_disagreements, 0,
                    "{source}: heuristic disagrees with symbols"
                );
            }
            ModeDetection::Heuristic => assert_eq!(counts.mode_stats.from_symbols, 0),
        }
    }
}

#[test]
fn arm_program_counts_exactly() {
    let trips = 25;
    let runtime = mix(
        1,
        &[
            (Alu, 3),
            (AluShifted, 1),
            (LoadStoreMultiple, 2),
            (Branch, 1),
            (Load, 1),
            (Other, 1),
        ],
    );
    let setup = mix(
        1,
        &[
            (LoadStoreMultiple, 1),
            (Alu, 4),
            (VfpLoadStoreMove, 2),
            (VfpConvert, 1),
            (Branch, 1),
        ],
    );
    let body = mix(
        trips,
        &[
            (Load, 1),
            (Alu, 4),
            (AluShifted, 2),
            (Mul, 1),
            (MulLong, 1),
            (Div, 1),
            (Store, 1),
            (LoadStoreMultiple, 2),
            (VfpAdd, 1),
            (VfpMul, 1),
            (VfpDiv, 1),
            (VfpConvert, 1),
            (VfpLoadStoreMove, 1),
            (CondBranch, 1),
        ],
    );
    let teardown = mix(1, &[(LoadStoreMultiple, 1), (IndirectBranch, 1)]);
    let program = sum(&[setup, body, teardown]);
    assert_eq!(
        program.total(),
        9 + 25 * 19 + 2,
        "expectation matches the notes in arm_counts.s"
    );
    check("asm/arm_counts.s", program, runtime);
}

#[test]
fn thumb_program_counts_exactly() {
    // Thumb `_start` (3 alu, bl, blx, svc) and the ARM helper (add, bx lr).
    let runtime = mix(1, &[(Alu, 4), (Branch, 2), (Other, 1), (IndirectBranch, 1)]);
    let setup = mix(1, &[(LoadStoreMultiple, 1), (Alu, 3), (Branch, 1)]);
    let wide = mix(
        20,
        &[
            (Load, 1),
            (AluShifted, 1),
            (Mul, 1),
            (Div, 1),
            (Store, 1),
            (Alu, 1),
            (CondBranch, 1),
        ],
    );
    let between = mix(1, &[(Alu, 1)]);
    let narrow = mix(
        10,
        &[
            (Load, 1),
            (Alu, 4),
            (AluShifted, 1),
            (Store, 1),
            (Other, 1),
            (VfpLoadStoreMove, 2),
            (VfpConvert, 2),
            (VfpAdd, 1),
            (VfpMul, 1),
            (VfpDiv, 1),
            (CondBranch, 1),
        ],
    );
    let tail = mix(
        1,
        &[(Alu, 1), (Other, 1), (CondBranch, 2), (IndirectBranch, 1)],
    );
    let program = sum(&[setup, wide, between, narrow, tail]);
    assert_eq!(
        program.total(),
        5 + 20 * 7 + 1 + 10 * 16 + 5,
        "expectation matches the notes in thumb_counts.s"
    );
    check("asm/thumb_counts.s", program, runtime);
}
