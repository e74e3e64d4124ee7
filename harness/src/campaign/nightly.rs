//! The nightly part of the campaign report: failures deduplicated by culprit, triage results,
//! and a comparison with the previous night.
//!
//! A distinct failure is a (culprit pass, mismatch kind, reduced program hash) triple, taken
//! from each failure directory's `triage.json` ([`super::autotriage`]). An untriaged failure
//! (`--no-triage`, or a triage error) has culprit `untriaged`/`error` and the hash of its
//! original program, so it still deduplicates with itself across nights but not with others.
//! The distinct failures go to `failures.csv` (one row per key, with how many failure
//! directories share it) — the machine-readable record that the next night's `--previous`
//! reads: keys present now and not then are new, keys present then and not now disappeared.
//! The headline figures (programs, checks, failures, checks/s) are compared through the two
//! nights' `stats.csv`.

use super::autotriage::{TriageRecord, program_hash, read_record};
use anyhow::{Context, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One distinct failure.
#[derive(Clone, Debug, PartialEq)]
pub struct DistinctFailure {
    pub key: String,
    pub record: TriageRecord,
    /// How many failure directories share the key.
    pub count: u64,
    /// The first (sorted) failure directory with the key.
    pub example: PathBuf,
}

/// The record of a failure directory: its `triage.json`, or one built from `failure.txt`
/// and `prog.sy` when it was not triaged.
pub fn record_of(dir: &Path) -> TriageRecord {
    if let Some(r) = read_record(dir) {
        return r;
    }
    let text = std::fs::read_to_string(dir.join("failure.txt")).unwrap_or_default();
    let field = |key: &str| text.lines().find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_string())).unwrap_or_default();
    let source = std::fs::read_to_string(dir.join("prog.sy")).unwrap_or_default();
    TriageRecord {
        failure: dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        kind: field("kind:").parse().ok(),
        stage: field("stage:").parse().ok(),
        culprit: "untriaged".into(),
        lines_before: source.lines().count(),
        bytes_before: source.len(),
        program_hash: program_hash(&source),
        ..TriageRecord::default()
    }
}

/// Groups failure directories by dedup key (sorted by key).
pub fn distinct(dirs: &[PathBuf]) -> Vec<DistinctFailure> {
    let mut by_key: BTreeMap<String, DistinctFailure> = BTreeMap::new();
    let mut sorted = dirs.to_vec();
    sorted.sort();
    for dir in sorted {
        let record = record_of(&dir);
        let key = record.dedup_key();
        by_key
            .entry(key.clone())
            .or_insert_with(|| DistinctFailure { key, record, count: 0, example: dir.clone() })
            .count += 1;
    }
    by_key.into_values().collect()
}

const FAILURE_COLUMNS: [&str; 11] = [
    "key",
    "culprit",
    "kind",
    "stage",
    "program_hash",
    "lines_before",
    "lines_after",
    "minimal_pipeline",
    "count",
    "example",
    "culprit_detail",
];

/// `failures.csv`.
pub fn failures_csv(failures: &[DistinctFailure]) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(FAILURE_COLUMNS)?;
    for f in failures {
        let r = &f.record;
        w.write_record([
            f.key.clone(),
            r.culprit.clone(),
            r.kind.map(|k| k.to_string()).unwrap_or_default(),
            r.stage.map(|s| s.to_string()).unwrap_or_default(),
            r.program_hash.clone(),
            r.lines_before.to_string(),
            r.lines_after.map(|n| n.to_string()).unwrap_or_default(),
            r.minimal_pipeline.clone().unwrap_or_default(),
            f.count.to_string(),
            f.example.display().to_string(),
            r.culprit_detail.clone(),
        ])?;
    }
    String::from_utf8(w.into_inner().map_err(|e| anyhow::anyhow!("csv buffer: {e}"))?).context("failures.csv")
}

/// The dedup keys of a previous night's `failures.csv`, with their culprit and kind.
pub fn read_failure_keys(dir: &Path) -> Result<BTreeMap<String, (String, String)>> {
    let path = dir.join("failures.csv");
    let mut reader = csv::Reader::from_path(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut keys = BTreeMap::new();
    for record in reader.records() {
        let record = record.with_context(|| format!("parsing {}", path.display()))?;
        let get = |i: usize| record.get(i).unwrap_or("").to_string();
        keys.insert(get(0), (get(1), get(2)));
    }
    Ok(keys)
}

/// `metric → value` from a `stats.csv` (empty when there is none).
pub fn read_stats(dir: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(dir.join("stats.csv")).unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_once(',').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect()
}

/// The markdown section: distinct failures with their triage, and the comparison with
/// `previous` (a campaign or merged directory holding `failures.csv` and `stats.csv`).
pub fn section(failures: &[DistinctFailure], current_stats: &BTreeMap<String, String>, previous: Option<&Path>) -> Result<String> {
    let mut s = String::new();
    let dirs: u64 = failures.iter().map(|f| f.count).sum();
    let _ = writeln!(
        s,
        "\n## Distinct failures (culprit + kind + reduced program)\n\n{} distinct of {dirs} failure directories.\n",
        failures.len()
    );
    if !failures.is_empty() {
        let _ = writeln!(
            s,
            "| culprit | kind | stage | minimal pipeline | lines (orig → reduced) | triage s | count | example |\n|---|---|---|---|---|---|---|---|"
        );
        for f in failures {
            let r = &f.record;
            let reduced = r.lines_after.map_or("-".to_string(), |n| n.to_string());
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} → {reduced} | {:.1} | {} | `{}` |",
                r.culprit,
                r.kind.map(|k| k.to_string()).unwrap_or_default(),
                r.stage.map(|s| s.to_string()).unwrap_or_default(),
                r.minimal_pipeline.as_deref().unwrap_or("-"),
                r.lines_before,
                r.seconds,
                f.count,
                f.example.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
            );
        }
        let errors: Vec<&DistinctFailure> = failures.iter().filter(|f| f.record.error.is_some()).collect();
        for f in errors {
            let _ = writeln!(s, "\n- triage error for `{}`: {}", f.record.failure, f.record.error.as_deref().unwrap_or(""));
        }
    }
    let Some(previous) = previous else { return Ok(s) };
    let before = read_failure_keys(previous)?;
    let now: BTreeSet<&String> = failures.iter().map(|f| &f.key).collect();
    let _ = writeln!(s, "\n## Compared with the previous night (`{}`)\n", previous.display());
    let old_stats = read_stats(previous);
    let _ = writeln!(s, "| figure | previous | now |\n|---|---|---|");
    for metric in ["programs", "checks", "failures", "session_checks_per_s"] {
        let get = |m: &BTreeMap<String, String>| m.get(metric).cloned().unwrap_or_else(|| "-".into());
        let _ = writeln!(s, "| {metric} | {} | {} |", get(&old_stats), get(current_stats));
    }
    let new: Vec<&DistinctFailure> = failures.iter().filter(|f| !before.contains_key(&f.key)).collect();
    let gone: Vec<(&String, &(String, String))> = before.iter().filter(|(k, _)| !now.contains(k)).collect();
    let _ = writeln!(s, "\nNew failures: {}.", new.len());
    for f in &new {
        let kind = f.record.kind.map(|k| k.to_string()).unwrap_or_default();
        let _ = writeln!(s, "- {} / {kind} (`{}`)", f.record.culprit, f.record.program_hash);
    }
    let _ = writeln!(s, "\nDisappeared failures: {}.", gone.len());
    for (key, (culprit, kind)) in &gone {
        let hash = key.rsplit('|').next().unwrap_or("");
        let _ = writeln!(s, "- {culprit} / {kind} (`{hash}`)");
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_failure(root: &Path, name: &str, culprit: &str, kind: &str, hash: &str) -> PathBuf {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).expect("dir");
        let record = TriageRecord {
            failure: name.into(),
            kind: Some(kind.parse().expect("a failure kind")),
            culprit: culprit.into(),
            program_hash: hash.into(),
            ..TriageRecord::default()
        };
        std::fs::write(dir.join("triage.json"), serde_json::to_string(&record).expect("json")).expect("write");
        dir
    }

    #[test]
    fn nightly_dedup_and_comparison_with_the_previous_night() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path();
        let a = write_failure(root, "c-s1-x", "constfold", "wrong-output", "aa");
        let b = write_failure(root, "c-s2-x", "constfold", "wrong-output", "aa");
        let c = write_failure(root, "c-s3-x", "gvn", "crash", "bb");
        let untriaged = root.join("c-s4-x");
        std::fs::create_dir_all(&untriaged).expect("dir");
        std::fs::write(untriaged.join("failure.txt"), "kind: timeout\nstage: qemu\n").expect("write");
        std::fs::write(untriaged.join("prog.sy"), "int main(){return 0;}\n").expect("write");
        let found = distinct(&[c, b, a, untriaged]);
        assert_eq!(found.len(), 3);
        assert_eq!(found[0].record.culprit, "constfold");
        assert_eq!(found[0].count, 2);
        assert!(found[0].example.ends_with("c-s1-x"));
        assert_eq!(found[2].record.culprit, "untriaged");
        assert_eq!(found[2].record.kind, Some(sysy_check::failure::FailureKind::Timeout));

        // Previous night: the gvn failure and one that is fixed now.
        let prev = root.join("prev");
        std::fs::create_dir_all(&prev).expect("dir");
        let mut old = found[1..2].to_vec();
        old.push(DistinctFailure {
            key: "licm|crash|cc".into(),
            record: TriageRecord { culprit: "licm".into(), kind: Some(sysy_check::failure::FailureKind::Crash), ..TriageRecord::default() },
            count: 1,
            example: prev.join("x"),
        });
        std::fs::write(prev.join("failures.csv"), failures_csv(&old).expect("csv")).expect("write");
        std::fs::write(prev.join("stats.csv"), "metric,value\nprograms,7\n").expect("write");
        let md = section(&found, &BTreeMap::from([("programs".into(), "9".into())]), Some(&prev)).expect("section");
        assert!(md.contains("New failures: 2."), "{md}");
        assert!(md.contains("- constfold / wrong-output (`aa`)"), "{md}");
        assert!(md.contains("Disappeared failures: 1.\n- licm / crash (`cc`)"), "{md}");
        assert!(md.contains("| programs | 7 | 9 |"), "{md}");
        assert!(section(&found, &BTreeMap::new(), Some(&root.join("missing"))).is_err());
    }
}
