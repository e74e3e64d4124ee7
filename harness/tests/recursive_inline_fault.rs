//! The deliberate fault of `recursive-inline` (with the `fault-injection` feature): a short
//! default campaign over generated programs (whose recursive functions the pass inlines
//! into themselves) finds it, and automatic triage names the pass as the culprit. Skips
//! when the cross toolchain or qemu-arm is missing.

#![cfg(feature = "fault-injection")]

mod common;

use std::process::Command;

/// Programs the campaign may check before the fault counts as unnoticed (it stops at the
/// first failing program, so which program shows the fault first does not matter).
const SEARCH_PROGRAMS: &str = "150";

#[test]
fn the_recursive_inlining_fault_is_detected_and_triaged() {
    if common::tools("campaign fault").is_none() {
        return;
    }
    let scratch = common::scratch();
    let dir = scratch.path().join("c");
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args([
            "campaign", "--programs", SEARCH_PROGRAMS, "--stop-after-failures", "1", "--jobs", "2", "--seed", "1",
            "--strategy", "o-levels", "--fault", sysyc::faults::RECURSIVE_INLINE_STALE_ARG,
            "--triage-candidates", "1500", "--out", dir.to_str().expect("utf-8 path"),
        ])
        .output()
        .expect("harness runs");
    assert!(!out.status.success(), "the fault went unnoticed: {}", String::from_utf8_lossy(&out.stdout));
    let records: Vec<harness::campaign::autotriage::TriageRecord> = std::fs::read_dir(dir.join("failures"))
        .expect("failure corpus")
        .map(|e| {
            let json = std::fs::read_to_string(e.expect("entry").path().join("triage.json")).expect("triaged");
            serde_json::from_str(&json).expect("triage.json")
        })
        .collect();
    for r in &records {
        eprintln!("{} -> culprit {} ({:?}), {} -> {:?} lines", r.failure, r.culprit, r.minimal_pipeline, r.lines_before, r.lines_after);
    }
    assert!(!records.is_empty());
    assert!(records.iter().all(|r| r.culprit == "recursive-inline"), "{records:?}");
    // The reduced program keeps a recursive function with two parameters and a self-call
    // inside a copy: a few lines.
    assert!(records.iter().any(|r| r.lines_after.is_some_and(|n| n <= 30)), "{records:?}");
}
