//! Automatic triage of the campaign's new failures: the campaign's [`super::FailureHook`]
//! runs `harness triage` ([`crate::triage::regression::triage`]) on each new failure
//! directory and writes the result next to the failure:
//!
//! * `triage.txt` — the bisection report of the original and of the reduced program;
//! * `reduced.sy` — the reduced program (when the failure reproduced);
//! * `triage.json` — a [`TriageRecord`]: culprit, minimal pipeline, sizes before and after,
//!   the reduced program's hash (what the nightly summary deduplicates on).
//!
//! Triage never fails the campaign: an error (the failure does not reproduce under triage's
//! oracle, a reduction that could not run) is recorded in `triage.json` as `error`.
//! A failure that only exists because of injected faults gets no regression case: the
//! regression corpus is for real bugs. A `compiler-crash` failure is not triaged at all
//! (triage runs the compiler in-process; see [`super::isolate`]): its `triage.json` says so.
//! A `compiler-hang` failure is located by probes in child processes
//! ([`crate::triage::hang`]) and not reduced.

use super::failures::SavedFailure;
use super::isolate::Heartbeat;
use sysy_check::executor::watch::{Unwatched, Watch};
use sysy_check::failure::FailureKind;
use sysy_check::qemu::Runner;
use crate::triage::bisect::{Checks, Culprit};
use crate::triage::case::FailureCase;
use crate::triage::hang::Prober;
use crate::triage::reduce::count_lines;
use crate::triage::regression::{TriageOptions, triage};
use sysyc::config::ConfigArgs;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What triage found for one failure directory (`triage.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TriageRecord {
    /// The failure directory's name.
    pub failure: String,
    /// The campaign's failure kind and the stage it showed in (from the directory).
    pub kind: Option<FailureKind>,
    pub stage: Option<sysy_check::failure::Stage>,
    /// Short culprit name: a pass name, `stage:a+b`, `backend`, `lowering`,
    /// `not-reproduced`, or `error`.
    pub culprit: String,
    /// The culprit and failure as triage words them.
    pub culprit_detail: String,
    pub minimal_pipeline: Option<String>,
    pub lines_before: usize,
    pub lines_after: Option<usize>,
    pub bytes_before: usize,
    pub bytes_after: Option<usize>,
    /// First 16 hex digits of the BLAKE3 hash of the reduced program (of the original when
    /// there is no reduction).
    pub program_hash: String,
    pub regression: Option<String>,
    pub seconds: f64,
    pub error: Option<String>,
}

impl TriageRecord {
    /// The nightly summary's dedup key: culprit pass + mismatch kind + reduced program hash.
    pub fn dedup_key(&self) -> String {
        format!("{}|{}|{}", self.culprit, self.kind.map_or(String::new(), |k| k.to_string()), self.program_hash)
    }
}

/// The short name of a culprit.
pub fn culprit_name(c: &Culprit) -> String {
    match c {
        Culprit::Lowering => "lowering".into(),
        Culprit::Pass { name, .. } => (*name).to_string(),
        Culprit::BackendStages(stages) => format!("stage:{}", stages.join("+")),
        Culprit::Backend => "backend".into(),
        Culprit::NotReproduced => "not-reproduced".into(),
    }
}

pub fn program_hash(source: &str) -> String {
    blake3::hash(source.as_bytes()).to_hex()[..16].to_string()
}

/// Triage settings of a campaign.
#[derive(Clone, Debug)]
pub struct AutoTriage {
    pub options: TriageOptions,
    /// qemu-arm for back-end failures (`None`: the IR is judged only).
    pub runner: Option<Runner>,
    /// A probe of a compiler hang still running after this hangs.
    pub hang_probe_limit: std::time::Duration,
}

impl AutoTriage {
    /// Triages `saved`, writes the files (see the module docs) and returns the record.
    pub fn run(&self, saved: &SavedFailure) -> TriageRecord {
        if saved.kind == FailureKind::CompilerCrash {
            return not_triaged(saved, NO_CRASH_TRIAGE);
        }
        if saved.kind == FailureKind::CompilerHang && saved.stage != sysy_check::failure::Stage::Pipeline {
            return not_triaged(saved, NO_SELFTEST_HANG_TRIAGE);
        }
        let start = Instant::now();
        let mut record =
            TriageRecord { failure: saved.id.clone(), kind: Some(saved.kind), stage: Some(saved.stage), ..TriageRecord::default() };
        // This worker's journal entry, re-stamped before each check or probe from whichever
        // thread makes it.
        let heartbeat = Heartbeat::of_this_thread();
        let watch: &dyn Watch = match &heartbeat {
            Some(heartbeat) => heartbeat,
            None => &Unwatched,
        };
        let outcome = if saved.kind == FailureKind::CompilerHang {
            self.locate_hang(saved, &mut record, watch)
        } else {
            self.triage_into(saved, &mut record, watch)
        };
        if let Err(e) = outcome {
            record.culprit = "error".into();
            record.error = Some(e);
        }
        record.seconds = start.elapsed().as_secs_f64();
        if let Ok(json) = serde_json::to_string_pretty(&record) {
            // Best effort: a failure directory that cannot be written to has already been
            // reported by the campaign's own writes.
            let _ = std::fs::write(saved.dir.join("triage.json"), json);
        }
        record
    }

    fn triage_into(&self, saved: &SavedFailure, record: &mut TriageRecord, watch: &dyn Watch) -> Result<(), String> {
        let case = FailureCase::from_dir(&saved.dir, &ConfigArgs::default())?;
        record.lines_before = count_lines(&case.subject.source);
        record.bytes_before = case.subject.source.len();
        record.program_hash = program_hash(&case.subject.source);
        let mut options = self.options.clone();
        if !case.config.faults.is_empty() {
            options.regressions_dir = None;
        }
        // Generated programs run in milliseconds. A failure that ended (a wrong answer, a
        // crash) is reproduced by runs that end: a reduction candidate whose miscompiled code
        // loops is not the failure, and waiting the campaign's full limit for each such
        // candidate (an inverted loop condition makes most of them loop) stretched one
        // triage to many minutes. A hang is reproduced by a run that passes the shorter
        // limit too; every candidate that still hangs costs that limit, so its reduction
        // gets fewer candidates.
        options.limits.timeout = options.limits.timeout.min(TRIAGE_RUN_LIMIT);
        if saved.kind == FailureKind::Timeout {
            options.reduce.max_candidates = options.reduce.max_candidates.min(HANG_REDUCTION_CANDIDATES);
        }
        let checks = Checks { timeout: options.limits.timeout, runner: self.runner.as_ref(), watch };
        let report = triage(&case, &checks, &options)?;
        let mut text = String::from("== original program\n");
        text.push_str(&report.bisect.render(&case.config));
        let best = report.reduced_bisect.as_ref().filter(|b| b.located.is_some()).unwrap_or(&report.bisect);
        record.culprit = culprit_name(&report.bisect.culprit());
        record.culprit_detail = match &report.bisect.located {
            Some(l) => format!("{} ({} in the {} stage)", l.culprit, l.kind, l.stage),
            None => report.bisect.culprit().to_string(),
        };
        record.minimal_pipeline = best.minimal_pipeline.as_ref().map(|p| p.join(","));
        if let (Some(reduced), Some(rb)) = (&report.reduced, &report.reduced_bisect) {
            record.lines_after = Some(reduced.stats.lines_after);
            record.bytes_after = Some(reduced.source.len());
            record.program_hash = program_hash(&reduced.source);
            text.push_str("\n== reduced program, bisected\n");
            text.push_str(&rb.render(report.reduced_config.as_ref().unwrap_or(&case.config)));
            std::fs::write(saved.dir.join("reduced.sy"), &reduced.source)
                .map_err(|e| format!("cannot write reduced.sy: {e}"))?;
        }
        record.regression = report.regression.as_ref().map(|p| p.display().to_string());
        std::fs::write(saved.dir.join("triage.txt"), text).map_err(|e| format!("cannot write triage.txt: {e}"))?;
        Ok(())
    }

    /// Names the pass of a compiler hang by probes in child processes (see
    /// [`crate::triage::hang`]); writes `triage.txt`.
    fn locate_hang(&self, saved: &SavedFailure, record: &mut TriageRecord, watch: &dyn Watch) -> Result<(), String> {
        let source = std::fs::read_to_string(saved.dir.join("prog.sy")).map_err(|e| format!("cannot read prog.sy: {e}"))?;
        record.lines_before = count_lines(&source);
        record.bytes_before = source.len();
        record.program_hash = program_hash(&source);
        let exe = std::env::current_exe().map_err(|e| format!("locating the harness executable: {e}"))?;
        let prober = Prober { exe, dir: saved.dir.clone(), limit: self.hang_probe_limit, watch };
        let report = prober.locate()?;
        record.culprit = report.culprit.name();
        record.culprit_detail = report.describe();
        std::fs::write(saved.dir.join("triage.txt"), report.render()).map_err(|e| format!("cannot write triage.txt: {e}"))
    }
}

/// Time limit of each run while triaging (generated programs run in milliseconds; see
/// [`AutoTriage::triage_into`]).
const TRIAGE_RUN_LIMIT: std::time::Duration = std::time::Duration::from_secs(3);

/// Candidates the reduction of a hang may test (each one that still hangs costs
/// [`TRIAGE_RUN_LIMIT`]).
const HANG_REDUCTION_CANDIDATES: usize = 100;

/// Why `compiler-crash` failures are not triaged.
const NO_CRASH_TRIAGE: &str = "a compiler-crash kills the process that compiles it and triage compiles in-process, so it is not triaged (reproduce with repro.sh)";

/// Why a hang outside a configuration's compilation (the data-flow self-test) is not triaged.
const NO_SELFTEST_HANG_TRIAGE: &str = "the hang is in a self-test, not in a compilation that probes could bisect (reproduce with repro.sh)";

/// Writes (and returns) the `triage.json` of a failure that is deliberately not triaged,
/// saying why.
pub fn not_triaged(saved: &SavedFailure, why: &str) -> TriageRecord {
    let record = TriageRecord {
        failure: saved.id.clone(),
        kind: Some(saved.kind),
        stage: Some(saved.stage),
        culprit: "not-triaged".into(),
        error: Some(why.to_string()),
        ..TriageRecord::default()
    };
    if let Ok(json) = serde_json::to_string_pretty(&record) {
        let _ = std::fs::write(saved.dir.join("triage.json"), json);
    }
    record
}

/// The triage record of a failure directory, if it was triaged.
pub fn read_record(dir: &Path) -> Option<TriageRecord> {
    let text = std::fs::read_to_string(dir.join("triage.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// The failure directories of campaign `campaign_id` under `failures_dir`, sorted.
pub fn failure_dirs(failures_dir: &Path, campaign_id: &str) -> Vec<PathBuf> {
    let prefix = format!("{campaign_id}-s");
    let Ok(entries) = std::fs::read_dir(failures_dir) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix) && e.path().is_dir())
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs
}
