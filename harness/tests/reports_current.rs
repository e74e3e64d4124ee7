//! The committed per-pass speedup reports stay current with the registry: the latest report
//! over `corpus/bench` and the latest over the competition performance suite
//! (`results/speedup/<date>/` and `results/speedup/<date>-performance/`) each have rows for
//! every IR pass and back-end stage of `sysyc::passes::REGISTRY`. A pass registered after
//! the report was made fails this test until the report is regenerated
//! (`make speedup`, and for the performance suite the command in its `report.md`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn speedup_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").join("results/speedup")
}

/// The newest report directory (names start with the date) whose name `fits`.
fn latest(fits: impl Fn(&str) -> bool) -> PathBuf {
    let mut names: Vec<String> = std::fs::read_dir(speedup_dir())
        .expect("results/speedup")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("speedup.csv").is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| fits(n))
        .collect();
    names.sort();
    speedup_dir().join(names.last().expect("a committed report"))
}

/// The distinct values of the `pass` column of a report's speedup.csv.
fn passes_in(csv_path: &Path) -> BTreeSet<String> {
    let mut csv = csv::Reader::from_path(csv_path).unwrap_or_else(|e| panic!("{}: {e}", csv_path.display()));
    let column = csv.headers().expect("header").iter().position(|h| h == "pass").expect("a pass column");
    csv.records().map(|r| r.expect("row")[column].to_string()).collect()
}

/// The registered passes and stages that have no row in the report `csv_path`, in
/// registry order.
fn unlisted_passes(csv_path: &Path) -> Vec<&'static str> {
    let listed = passes_in(csv_path);
    sysyc::passes::REGISTRY.iter().map(|p| p.name).filter(|n| !listed.contains(*n)).collect()
}

fn assert_lists_every_registered_pass(report: &Path) {
    let missing = unlisted_passes(&report.join("speedup.csv"));
    assert!(
        missing.is_empty(),
        "{} lacks registered passes or stages: {} (regenerate it: the command is in its report.md)",
        report.display(),
        missing.join(", ")
    );
}

#[test]
fn the_latest_corpus_bench_report_lists_every_registered_pass() {
    assert_lists_every_registered_pass(&latest(|n| !n.ends_with("-performance")));
}

#[test]
fn the_latest_performance_suite_report_lists_every_registered_pass() {
    assert_lists_every_registered_pass(&latest(|n| n.ends_with("-performance")));
}

/// The check itself: a report in the committed format with rows for every registered pass
/// but one is caught, naming exactly that one; with all of them, nothing is missing.
#[test]
fn a_report_lacking_a_registered_pass_is_caught() {
    let registry: Vec<&str> = sysyc::passes::REGISTRY.iter().map(|p| p.name).collect();
    assert!(registry.len() > 2, "the registry has passes");
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |name: &str, passes: &[&str]| {
        let path = dir.path().join(name);
        let mut csv = csv::Writer::from_path(&path).expect("csv");
        csv.write_record(["benchmark", "mode", "pass", "position", "speedup_insns"]).expect("header");
        for (k, pass) in passes.iter().enumerate() {
            // Two rows per pass, as a report has one per benchmark.
            for bench in ["a", "b"] {
                csv.write_record([bench, "leave-one-out", pass, &k.to_string(), "1.0000"]).expect("row");
            }
        }
        csv.flush().expect("flush");
        path
    };
    assert_eq!(unlisted_passes(&write("all.csv", &registry)), Vec::<&str>::new());
    for dropped in [registry[0], registry[registry.len() / 2], registry[registry.len() - 1]] {
        let kept: Vec<&str> = registry.iter().copied().filter(|&p| p != dropped).collect();
        assert_eq!(unlisted_passes(&write("one-short.csv", &kept)), vec![dropped], "dropping {dropped}");
    }
}
