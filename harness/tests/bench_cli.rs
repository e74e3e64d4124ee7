//! `harness bench` and `harness report speedup` end to end on a tiny suite (skipped without
//! the cross gcc, qemu-arm or the cost plugin): every case measured, gcc compared, counts
//! identical between two runs, and the speedup report's three files.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn suite(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bench_cli").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("cases")).expect("scratch directory");
    // 1000 iterations; the constant condition gives the passes something to remove.
    std::fs::write(
        dir.join("cases/loop.sy"),
        "const int K = 3;\nint main() {\n  int i = 0; int s = 0;\n  while (i < 1000) {\n    \
         if (K > 2) { s = s + i * K; } else { s = s - 1; }\n    i = i + 1;\n  }\n  \
         putint(s); putch(10);\n  return s % 256;\n}\n",
    )
    .expect("write case");
    // 3 * (0 + ... + 999) = 1498500; 1498500 % 256 = 132.
    std::fs::write(dir.join("cases/loop.out"), "1498500\n132\n").expect("write expected");
    dir
}

fn harness(args: &[&str], cwd: &Path) -> std::process::Output {
    // The plugin next to the test binary's harness is found by `locate_plugin`.
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("harness runs")
}

fn column(csv: &str, name: &str) -> Vec<String> {
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let index = reader
        .headers()
        .expect("header")
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    reader
        .records()
        .map(|r| r.expect("record")[index].to_string())
        .collect()
}

#[test]
fn bench_measures_compares_with_gcc_and_repeats_exactly() {
    if !common::tools_with_plugin("bench_measures_compares_with_gcc_and_repeats_exactly") {
        return;
    }
    let dir = suite("bench");
    let mut tables = Vec::new();
    for run in ["first", "second"] {
        let out = format!("{run}.csv");
        let result = harness(
            &["bench", "cases", "--vs-gcc", "--jobs", "1", "--out", &out],
            &dir,
        );
        let stdout = String::from_utf8_lossy(&result.stdout);
        assert!(result.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&result.stderr));
        assert!(stdout.contains("geomean ours/gcc over 1 cases"), "{stdout}");
        tables.push(std::fs::read_to_string(dir.join(&out)).expect("csv written"));
        let md = std::fs::read_to_string(dir.join(format!("{run}.md"))).expect("markdown written");
        assert!(md.contains("| loop | PASS |"), "{md}");
    }
    assert_eq!(column(&tables[0], "status"), ["PASS"]);
    assert_eq!(column(&tables[0], "gcc_status"), ["PASS"]);
    let insns: u64 = column(&tables[0], "insns")[0].parse().expect("a count");
    // The loop alone executes several instructions per iteration; the runtime's start and
    // exit add some hundreds (the count below: the program's own share is less than all).
    assert!(insns > 3000, "{insns}");
    let program: u64 = column(&tables[0], "program_insns")[0].parse().expect("a count");
    assert!(program >= 3000 && program < insns, "{program} of {insns}");
    let own_ratio: f64 = column(&tables[0], "program_insn_ratio")[0].parse().expect("a ratio");
    let gcc_program: u64 = column(&tables[0], "gcc_program_insns")[0].parse().expect("a count");
    assert!((own_ratio - program as f64 / gcc_program as f64).abs() < 1e-3, "{own_ratio}");
    let gcc_class_total: u64 = sysy_cost_model::InsnClass::ALL
        .iter()
        .map(|c| column(&tables[0], &format!("gcc_class_{}", c.name()))[0].parse::<u64>().expect("a count"))
        .sum();
    let gcc_insns: u64 = column(&tables[0], "gcc_insns")[0].parse().expect("a count");
    assert_eq!(gcc_class_total, gcc_insns, "gcc's classes add up to its whole run");
    for name in ["insns", "cycles", "program_insns", "class_cond_branch", "gcc_insns", "insn_ratio", "gcc_program_cycles", "program_cycle_ratio"] {
        assert_eq!(column(&tables[0], name), column(&tables[1], name), "{name} differs between runs");
    }
}

#[test]
fn speedup_report_writes_csv_markdown_and_html_and_reuses_runs() {
    if !common::tools_with_plugin("speedup_report_writes_csv_markdown_and_html_and_reuses_runs") {
        return;
    }
    let dir = suite("speedup");
    let run = |out: &str| {
        let args = ["report", "speedup", "--suite", "cases", "--base", "mem2reg,constfold,dce", "--run-cache", "runs", "--out", out];
        let result = harness(&args, &dir);
        let stdout = String::from_utf8_lossy(&result.stdout).to_string();
        let stderr = String::from_utf8_lossy(&result.stderr).to_string();
        assert!(result.status.success(), "{stdout}\n{stderr}");
        (stdout, stderr)
    };
    let (stdout, stderr) = run("report");
    assert!(stdout.contains("1. mem2reg") || stdout.contains("1. constfold") || stdout.contains("1. dce"), "{stdout}");
    assert!(stderr.contains("(0 from the run cache, 0 skipped)"), "the first sitting runs everything: {stderr}");
    let csv = std::fs::read_to_string(dir.join("report/speedup.csv")).expect("csv");
    // Leave-one-out for the 3 passes and every back-end stage, 3 add-one, 3 prefix steps, and
    // add-to-base for every other registered IR pass.
    let modes = column(&csv, "mode");
    let count = |m: &str| modes.iter().filter(|x| *x == m).count();
    assert_eq!(count("leave-one-out"), 3 + sysyc::isa::arm::BackendStage::ALL.len());
    assert_eq!((count("add-one"), count("prefix")), (3, 3));
    assert_eq!(count("add-to-base"), sysyc::passes::ir_passes().count() - 3);
    assert!(column(&csv, "subject_status").iter().all(|s| s == "PASS"));
    let md = std::fs::read_to_string(dir.join("report/report.md")).expect("markdown");
    assert!(md.contains("## leave-one-out") && md.contains("## Prefix curves"), "{md}");
    let html = std::fs::read_to_string(dir.join("report/index.html")).expect("html");
    assert_eq!(html.matches("<svg").count(), 4, "instructions and cycles bars, heat map, prefix curves");
    assert!(md.contains("## Differences behind the numbers"), "{md}");
    let diffs: Vec<_> = std::fs::read_dir(dir.join("report/diffs")).expect("diffs").flatten().collect();
    assert!(!diffs.is_empty(), "mem2reg changes every benchmark: its largest change has a diff");
    for d in &diffs {
        let text = std::fs::read_to_string(d.path()).expect("diff");
        assert!(text.starts_with("# ") && text.contains("## optimised IR") && text.contains("## assembly"), "{text}");
        let name = d.file_name().to_string_lossy().to_string();
        assert!(md.contains(&format!("(diffs/{name})")), "the report links {name}");
    }
    assert!(diffs.iter().any(|d| std::fs::read_to_string(d.path()).expect("diff").contains("\n+")), "a diff shows added lines");

    // A second sitting takes every outcome from the cache and reports the same counts.
    let (_, stderr) = run("again");
    let distinct: Vec<&str> = stderr.split("configurations, ").nth(1).expect("progress line").split(' ').collect();
    assert!(stderr.contains(&format!("({} from the run cache, 0 skipped)", distinct[0])), "{stderr}");
    let again = std::fs::read_to_string(dir.join("again/speedup.csv")).expect("csv");
    for name in ["reference_insns", "subject_insns", "reference_cycles", "subject_cycles", "subject_status"] {
        assert_eq!(column(&csv, name), column(&again, name), "{name}");
    }

    // Compared with the first report: the same counts, so every pass's change is 1.
    let args = ["report", "speedup", "--suite", "cases", "--base", "mem2reg,constfold,dce", "--run-cache", "runs", "--out", "third", "--previous", "report"];
    let result = harness(&args, &dir);
    assert!(result.status.success(), "{}", String::from_utf8_lossy(&result.stderr));
    let md = std::fs::read_to_string(dir.join("third/report.md")).expect("markdown");
    let section = md.split("## Compared with `report`").nth(1).expect("the comparison section");
    assert!(section.contains("| leave-one-out | `mem2reg` |") && section.contains("| 1.0000 |"), "{section}");
    assert!(md.contains("--previous report"), "the regenerate command names the previous report");
}
