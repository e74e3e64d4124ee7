//! A glibc-linked C program under the plugin: counts are identical across
//! runs, the total matches QEMU's own one-instruction-per-block execution
//! trace, the program/runtime split comes from the program's object file,
//! and the ARM/Thumb heuristic agrees with the mapping symbols on glibc's
//! mixed code.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use sysy_cost_model::plugin_args::ModeDetection;
use sysy_cost_model::{CostCounts, InsnClass, ProgramRanges};

struct Guest {
    _dir: tempfile::TempDir,
    exe: std::path::PathBuf,
    ranges: ProgramRanges,
}

fn build_guest() -> Guest {
    let dir = tempfile::tempdir().expect("tempdir");
    let object = dir.path().join("loop_printf.o");
    let exe = dir.path().join("loop_printf");
    common::build_c(&common::test_file("c/loop_printf.c"), &object, &exe);
    let ranges =
        ProgramRanges::from_object(&exe, &object).expect("program ranges from the object file");
    Guest {
        _dir: dir,
        exe,
        ranges,
    }
}

fn run(guest: &Guest, name: &str, mode: ModeDetection) -> CostCounts {
    let out = guest.exe.with_file_name(format!("{name}.counts"));
    let (output, counts) = common::run_counted(&guest.exe, &out, guest.ranges.clone(), mode);
    assert!(!output.stdout.is_empty(), "the guest printed nothing");
    counts
}

#[test]
fn repeated_runs_give_identical_counts() {
    if !common::tools_available("repeated_runs_give_identical_counts") {
        return;
    }
    let guest = build_guest();
    let runs: Vec<CostCounts> = (0..3)
        .map(|i| run(&guest, &format!("run{i}"), ModeDetection::Auto))
        .collect();
    for other in &runs[1..] {
        assert_eq!(&runs[0], other, "counts differ between identical runs");
    }
    let counts = &runs[0];
    assert!(counts.complete);
    // The loops live in the program; printf and startup in the runtime.
    assert!(
        counts.program_total() > counts.runtime_total(),
        "{counts:?}"
    );
    assert!(counts.runtime_total() > 1000, "{counts:?}");
    assert!(
        counts.program.get(InsnClass::VfpDiv) >= 3000,
        "harmonic() divides 3000 times: {counts:?}"
    );
    assert!(
        counts.program.get(InsnClass::CondBranch) >= 6000,
        "{counts:?}"
    );
}

#[test]
fn heuristic_agrees_with_mapping_symbols_on_glibc() {
    if !common::tools_available("heuristic_agrees_with_mapping_symbols_on_glibc") {
        return;
    }
    let guest = build_guest();
    let with_symbols = run(&guest, "auto", ModeDetection::Auto);
    assert_eq!(
        with_symbols.mode_stats.heuristic_disagreements, 0,
        "{:?}",
        with_symbols.mode_stats
    );
    assert!(
        with_symbols.mode_stats.from_symbols > 100,
        "{:?}",
        with_symbols.mode_stats
    );
    let heuristic_only = run(&guest, "heuristic", ModeDetection::Heuristic);
    assert_eq!(with_symbols.per_class, heuristic_only.per_class);
    assert_eq!(with_symbols.program, heuristic_only.program);
}

#[test]
fn program_ranges_from_object_and_names_agree() {
    if !common::tools_available("program_ranges_from_object_and_names_agree") {
        return;
    }
    let guest = build_guest();
    let named = ProgramRanges::from_functions(&guest.exe, &["main", "mix_table", "harmonic"])
        .expect("named functions");
    assert_eq!(named, guest.ranges);
    // A gcc-built program has no sysyc markers, and says so.
    let error =
        ProgramRanges::from_markers(&guest.exe).expect_err("no markers in a gcc-built program");
    assert!(error.to_string().contains("__sysy_prog_begin"), "{error}");
    let missing = ProgramRanges::from_functions(&guest.exe, &["no_such_function"])
        .expect_err("unknown function");
    assert!(
        missing.to_string().contains("no_such_function"),
        "{missing}"
    );
}

/// Instructions executed according to QEMU itself: with one instruction per
/// translation block and block chaining off, `-d exec` logs one line per
/// executed instruction.
fn traced_instructions(exe: &Path, log: &Path) -> u64 {
    // Same environment, argv[0] and stdout type as `common::run_counted`.
    let output = Command::new(common::QEMU)
        .env_clear()
        .stdin(Stdio::null())
        .args([
            "-cpu",
            "cortex-a7",
            "-singlestep",
            "-d",
            "exec,nochain",
            "-D",
        ])
        .arg(log)
        .arg(exe)
        .output()
        .expect("run qemu-arm with tracing");
    assert!(output.status.success(), "traced run failed");
    let file = std::fs::File::open(log).expect("trace log");
    BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter(|line| line.starts_with("Trace "))
        .count() as u64
}

#[test]
fn total_matches_qemu_execution_trace() {
    if !common::tools_available("total_matches_qemu_execution_trace") {
        return;
    }
    let guest = build_guest();
    let counts = run(&guest, "counted", ModeDetection::Auto);
    let traced = traced_instructions(&guest.exe, &guest.exe.with_file_name("trace.log"));
    assert_eq!(counts.total, traced);
}
