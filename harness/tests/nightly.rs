//! The nightly campaign end to end: sharded campaigns merge to exactly the rows of one
//! unsharded campaign, and (with the `fault-injection` feature) a campaign's new failure is
//! triaged automatically, with the result in the failure directory and the summary.
//! The tests skip when the cross toolchain or qemu-arm is missing.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

fn harness(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness")).args(args).output().expect("harness runs")
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The rows of a CSV file without the columns that measure time (which no two runs share).
fn rows_without_timings(file: &Path, timing_columns: &[&str]) -> BTreeSet<Vec<String>> {
    let mut reader = csv::Reader::from_path(file).expect("csv file");
    let header = reader.headers().expect("header").clone();
    // Wall-clock columns: the named ones (`name*`: a prefix) and every `us_<phase>` time
    // breakdown column.
    let named = |name: &str| timing_columns.iter().any(|c| c.strip_suffix('*').map_or(*c == name, |prefix| name.starts_with(prefix)));
    let is_timing = |name: &str| named(name) || name.starts_with("us_");
    let keep: Vec<usize> = (0..header.len()).filter(|&i| !is_timing(&header[i])).collect();
    let rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| {
            let r = r.expect("well-formed row");
            keep.iter().map(|&i| r[i].to_string()).collect()
        })
        .collect();
    let set: BTreeSet<Vec<String>> = rows.iter().cloned().collect();
    assert_eq!(set.len(), rows.len(), "no duplicate rows in {}", file.display());
    set
}

fn programs_of(dir: &Path) -> BTreeSet<u64> {
    let mut reader = csv::Reader::from_path(dir.join("programs.csv")).expect("programs.csv");
    reader.records().map(|r| r.expect("row")[0].parse().expect("program number")).collect()
}

#[test]
fn four_merged_shards_equal_one_unsharded_campaign() {
    if common::tools("shard merge").is_none() {
        return;
    }
    let scratch = common::scratch();
    let common_args = ["campaign", "--programs", "8", "--jobs", "1", "--seed", "777", "--strategy", "o-levels", "--no-triage"];
    let whole = scratch.path().join("whole");
    let out = harness(&[&common_args[..], &["--out", path(&whole)]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let shard_dirs: Vec<_> = (0..4).map(|i| scratch.path().join(format!("shard-{i}"))).collect();
    let children: Vec<_> = shard_dirs
        .iter()
        .enumerate()
        .map(|(i, dir)| {
            Command::new(env!("CARGO_BIN_EXE_harness"))
                .args(common_args)
                .args(["--shard", &format!("{i}/4"), "--out", path(dir)])
                .output()
        })
        .collect();
    for child in children {
        let out = child.expect("shard runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    // Disjoint shards covering every program, each p with p mod 4 = i.
    let mut union = BTreeSet::new();
    for (i, dir) in shard_dirs.iter().enumerate() {
        let programs = programs_of(dir);
        assert_eq!(programs, (0..8).filter(|p| p % 4 == i as u64).collect::<BTreeSet<_>>());
        union.extend(programs);
    }
    assert_eq!(union, (0..8).collect());

    let merged = scratch.path().join("merged");
    let mut args = vec!["merge"];
    args.extend(shard_dirs.iter().map(|d| path(d)));
    args.extend(["--out", path(&merged)]);
    let out = harness(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // Whole-process counts include the runtime's report of `starttime`/`stoptime` (it prints
    // the elapsed time, whose digits vary): they follow the clock; the program's own
    // instructions (`program_insns`) do not.
    let timing = ["compile_us", "run_us", "insns", "cycles", "class_*"];
    let expected = rows_without_timings(&whole.join("runs.csv"), &timing);
    assert!(expected.len() >= 8 * 4, "every program under every O-level configuration");
    assert_eq!(rows_without_timings(&merged.join("runs.csv"), &timing), expected, "merged row set = unsharded row set");
    assert_eq!(
        rows_without_timings(&merged.join("programs.csv"), &["millis"]),
        rows_without_timings(&whole.join("programs.csv"), &["millis"])
    );
    let summary = std::fs::read_to_string(merged.join("summary.md")).expect("summary");
    assert!(summary.contains("| programs checked | 8 |"), "{summary}");
    assert!(summary.contains("merge of 4 shards"), "{summary}");

    // The same shard twice is no merge.
    let again = scratch.path().join("again");
    let out = harness(&["merge", path(&shard_dirs[0]), path(&shard_dirs[0]), "--out", path(&again)]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("same shard"));
    // Neither is a merge of shards of different campaigns.
    let out = harness(&["merge", path(&shard_dirs[0]), path(&whole), "--out", path(&again)]);
    assert!(!out.status.success());
}

#[test]
fn campaign_shard_and_until_options_are_checked() {
    let out = harness(&["campaign", "--programs", "1", "--shard", "4/4", "--out", "/nonexistent/x"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid shard"));
    let out = harness(&["campaign", "--until", "25:00", "--out", "/nonexistent/x"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid --until"));
}

/// With seed 1, one of the first two programs is miscompiled by `constfold-sub-swap` under
/// the `singles` strategy (only under `single:constfold`); with the SplitMix64 program seeds
/// the IR interpreter sees the miscompiled program trap (kind `crash`), with the old
/// `seed + i` ones it saw a wrong output: either is the fault found.
#[cfg(feature = "fault-injection")]
#[test]
fn campaign_failures_are_triaged_to_the_culprit_pass() {
    if common::tools("campaign triage").is_none() {
        return;
    }
    let scratch = common::scratch();
    let first = scratch.path().join("night1");
    let args = ["campaign", "--programs", "2", "--jobs", "2", "--seed", "1", "--strategy", "singles", "--fault", "constfold-sub-swap"];
    let out = harness(&[&args[..], &["--out", path(&first)]].concat());
    assert!(!out.status.success(), "the fault is found");
    let failures: Vec<_> = std::fs::read_dir(first.join("failures"))
        .expect("failure corpus")
        .map(|e| e.expect("entry").path())
        .collect();
    assert!(!failures.is_empty());
    let mut kinds = std::collections::BTreeSet::new();
    for dir in &failures {
        let json = std::fs::read_to_string(dir.join("triage.json")).expect("triaged");
        let record: harness::campaign::autotriage::TriageRecord = serde_json::from_str(&json).expect("triage.json");
        assert_eq!(record.culprit, "constfold", "{json}");
        let kind = record.kind.map(|k| k.to_string()).unwrap_or_default();
        assert!(kind == "wrong-output" || kind == "crash", "{json}");
        kinds.insert(kind);
        assert_eq!(record.minimal_pipeline.as_deref(), Some("constfold"), "{json}");
        let reduced = std::fs::read_to_string(dir.join("reduced.sy")).expect("reduced program");
        assert!(record.lines_after.is_some_and(|n| n < record.lines_before && n <= 25), "{json}");
        eprintln!(
            "triaged {}: {} -> {:?} lines in {:.1} s",
            record.failure, record.lines_before, record.lines_after, record.seconds
        );
        assert_eq!(record.bytes_after, Some(reduced.len()), "{json}");
        assert!(std::fs::read_to_string(dir.join("triage.txt")).expect("report").contains("culprit: pass `constfold`"));
    }
    // No regression case for an injected fault.
    assert!(!first.join("regressions").exists());
    let summary = std::fs::read_to_string(first.join("summary.md")).expect("summary");
    for kind in &kinds {
        assert!(summary.contains(&format!("| constfold | {kind} | ir-interp | constfold |")), "{summary}");
    }

    // The next night finds the same failure: nothing new, nothing gone.
    let second = scratch.path().join("night2");
    let out = harness(&[&args[..], &["--out", path(&second), "--previous", path(&first)]].concat());
    assert!(!out.status.success());
    let summary = std::fs::read_to_string(second.join("summary.md")).expect("summary");
    assert!(summary.contains("New failures: 0.") && summary.contains("Disappeared failures: 0."), "{summary}");

    // `--no-triage` leaves the failure untriaged.
    let third = scratch.path().join("untriaged");
    let out = harness(&[&args[..], &["--out", path(&third), "--no-triage"]].concat());
    assert!(!out.status.success());
    let failures = std::fs::read_dir(third.join("failures")).expect("failure corpus");
    for dir in failures {
        assert!(!dir.expect("entry").path().join("triage.json").exists());
    }
    let summary = std::fs::read_to_string(third.join("summary.md")).expect("summary");
    for kind in &kinds {
        assert!(summary.contains(&format!("| untriaged | {kind} |")), "{summary}");
    }
}

/// Two nights seeded with consecutive dates (as the CronJob seeds them) check no common
/// program: the blake3 hashes of the generated sources (and inputs) are disjoint.
#[test]
fn consecutive_nights_share_no_program() {
    use harness::campaign::program_of;
    let night = |seed: u64| -> BTreeSet<String> {
        (0..40)
            .map(|i| {
                let (_, p) = program_of(seed, true, i);
                let mut hasher = blake3::Hasher::new();
                hasher.update(p.source.as_bytes()).update(&[0]).update(&p.stdin);
                hasher.finalize().to_hex().to_string()
            })
            .collect()
    };
    let first = night(20260101);
    let second = night(20260102);
    assert_eq!(first.len(), 40, "programs of one night are distinct");
    assert!(first.is_disjoint(&second), "nights 20260101 and 20260102 share a program");
    // The old derivation (seed + i) made them overlap: program i + 1 of one night is
    // program i of the next. The campaign's seeds must not be that.
    assert_ne!(program_of(20260101, true, 1).0, program_of(20260102, true, 0).0);
}

/// (program, configuration id) of every row of `runs.csv`.
fn row_keys(dir: &Path) -> Vec<(u64, String)> {
    let mut reader = csv::Reader::from_path(dir.join("runs.csv")).expect("runs.csv");
    reader
        .records()
        .map(|r| {
            let r = r.expect("well-formed row");
            (r[0].parse().expect("program number"), r[3].to_string())
        })
        .collect()
}

fn elapsed_of(dir: &Path) -> f64 {
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("state.json")).expect("state.json")).expect("json");
    state["elapsed_secs"].as_f64().expect("elapsed_secs")
}

/// A campaign killed with SIGKILL and resumed runs only what is left of its time budget,
/// and its records hold every finished program once.
#[test]
fn a_killed_campaign_resumes_with_the_remaining_budget() {
    if common::tools("kill and resume").is_none() {
        return;
    }
    let scratch = common::scratch();
    let dir = scratch.path().join("killed");
    let limit = 24.0;
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["campaign", "--minutes", "0.4", "--jobs", "1", "--seed", "11", "--strategy", "o-levels", "--no-triage"])
        .args(["--out", path(&dir)])
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("harness starts");
    std::thread::sleep(std::time::Duration::from_secs(8));
    child.kill().expect("SIGKILL"); // the supervisor; its child dies with it (PR_SET_PDEATHSIG)
    child.wait().expect("reaped");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let used = elapsed_of(&dir);
    assert!((6.0..=10.0).contains(&used), "the first session's time is recorded: {used}");

    let start = std::time::Instant::now();
    let out = harness(&["campaign", "--resume", path(&dir), "--jobs", "1", "--no-triage"]);
    let resumed = start.elapsed().as_secs_f64();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let programs = programs_of(&dir);
    let n = programs.len() as u64;
    assert_eq!(programs, (0..n).collect(), "one worker: programs 0..n, none lost");
    let mut reader = csv::Reader::from_path(dir.join("programs.csv")).expect("programs.csv");
    let slowest =
        reader.records().map(|r| r.expect("row")[9].parse::<f64>().expect("millis") / 1000.0).fold(0.0, f64::max);
    // What was left, plus the program in flight at the deadline, plus start-up and report.
    let bound = (limit - used) + slowest + 4.0;
    assert!(resumed <= bound, "resumed session {resumed:.1} s > {bound:.1} s ({used:.1} s used of {limit} s)");
    assert!(resumed < limit, "the resumed session did not run the whole limit again ({resumed:.1} s)");
    assert!(elapsed_of(&dir) <= limit + slowest + 4.0, "total {} s", elapsed_of(&dir));

    let keys = row_keys(&dir);
    let unique: BTreeSet<_> = keys.iter().cloned().collect();
    assert_eq!(unique.len(), keys.len(), "no row repeated");
    assert_eq!(keys.len() as u64, 4 * n, "every program under the four O-level configurations");
    assert_eq!(unique.iter().map(|(p, _)| *p).collect::<BTreeSet<_>>(), programs, "no row of an unfinished program");
}

#[test]
fn numeric_options_are_validated() {
    for (flag, value) in [
        ("--timeout", "nan"),
        ("--timeout", "0"),
        ("--timeout", "-3"),
        ("--minutes", "-1"),
        ("--minutes", "nan"),
        ("--minutes", "inf"),
        ("--hours", "0"),
        ("--programs", "0"),
        ("--programs", "-2"),
        ("--jobs", "0"),
        ("--random-configs", "0"),
        ("--triage-candidates", "0"),
    ] {
        let arg = format!("{flag}={value}");
        let out = harness(&["campaign", &arg, "--out", "/nonexistent/x"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{arg}: {stderr}");
        assert!(stderr.contains(&format!("invalid value '{value}' for '{flag}")), "{arg}: {stderr}");
        assert!(stderr.contains("greater than 0"), "{arg}: {stderr}");
    }
}
