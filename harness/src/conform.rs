//! The conformance runner: every `NAME.sy` of a directory, run by one [`Engine`] with
//! `NAME.in` (if present) as stdin, judged against `NAME.out` in the competition convention
//! (stdout, a newline if needed, the exit status; see [`Outcome::expected_output`]).
//!
//! Cases run in parallel on a rayon pool; results are reported in sorted case order as soon
//! as every earlier case is done, so the report is the same whatever the scheduling. Each
//! case gets a [`Verdict`]: PASS, FAIL (ran, but the result differs — including traps and
//! crashes), ERROR (no result: the program was rejected, the engine broke, or the case is
//! incomplete) or TIMEOUT. The report ends with the line `N passed, N failed`, where everything that did
//! not pass counts as failed.

use crate::engine::{Case, Engine, EngineFailure, EngineRun};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use sysyc::runtime::Outcome;

/// The files of one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseFiles {
    pub name: String,
    pub source: PathBuf,
    /// `NAME.in`, if it exists.
    pub input: Option<PathBuf>,
    /// `NAME.out` (which may be missing: the case is then an ERROR).
    pub expected: PathBuf,
}

/// The cases of `dir` whose name contains `filter`, sorted by name.
pub fn discover(dir: &Path, filter: Option<&str>) -> io::Result<Vec<CaseFiles>> {
    let mut cases = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "sy") || !path.is_file() {
            continue;
        }
        let Some(name) = path
            .file_stem()
            .and_then(|s| s.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        if filter.is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let input = path.with_extension("in");
        cases.push(CaseFiles {
            name,
            input: input.is_file().then_some(input),
            expected: path.with_extension("out"),
            source: path,
        });
    }
    cases.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(cases)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    Error,
    Timeout,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Verdict::Pass => "PASS",
            Verdict::Fail => "FAIL",
            Verdict::Error => "ERROR",
            Verdict::Timeout => "TIMEOUT",
        })
    }
}

/// The judgement of one case.
#[derive(Clone, Debug)]
pub struct CaseReport {
    pub name: String,
    pub verdict: Verdict,
    pub seconds: f64,
    /// Why it did not pass (empty for a pass).
    pub reason: String,
}

/// Loads, runs and judges one case.
pub fn run_case(engine: &dyn Engine, files: &CaseFiles) -> CaseReport {
    let error = |reason: String| CaseReport {
        name: files.name.clone(),
        verdict: Verdict::Error,
        seconds: 0.0,
        reason,
    };
    let source = match std::fs::read(&files.source) {
        Ok(bytes) => sysyc::frontend::source_from_bytes(&bytes),
        Err(e) => return error(format!("cannot read {}: {e}", files.source.display())),
    };
    let stdin = match &files.input {
        Some(p) => match std::fs::read(p) {
            Ok(bytes) => bytes,
            Err(e) => return error(format!("cannot read {}: {e}", p.display())),
        },
        None => Vec::new(),
    };
    let expected = match std::fs::read(&files.expected) {
        Ok(bytes) => bytes,
        Err(e) => return error(format!("cannot read {}: {e}", files.expected.display())),
    };
    let case = Case {
        name: files.name.clone(),
        path: files.source.clone(),
        source,
        stdin,
    };
    let run = engine.run(&case);
    judge(&files.name, &expected, &run)
}

/// Compares a run with the expected `.out` bytes.
pub fn judge(name: &str, expected: &[u8], run: &EngineRun) -> CaseReport {
    let (verdict, reason) = match &run.result {
        Ok(outcome) => match outcome_mismatch(outcome, expected) {
            None => (Verdict::Pass, String::new()),
            Some(reason) => (Verdict::Fail, reason),
        },
        Err(EngineFailure::Crashed(how)) => (Verdict::Fail, format!("crashed: {how}")),
        Err(EngineFailure::Timeout) => (Verdict::Timeout, "time limit exceeded".to_string()),
        Err(EngineFailure::Compile(msg)) => (
            Verdict::Error,
            format!("compile error: {}", first_line(msg)),
        ),
        Err(EngineFailure::Internal(msg)) => (Verdict::Error, first_line(msg).to_string()),
    };
    CaseReport {
        name: name.to_string(),
        verdict,
        seconds: run.elapsed.as_secs_f64(),
        reason,
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// `None` if `outcome` produces exactly `expected`, else a one-line reason.
pub fn outcome_mismatch(outcome: &Outcome, expected: &[u8]) -> Option<String> {
    let Some(actual) = outcome.expected_output() else {
        let reason = match &outcome.trap {
            Some(t) => {
                let at = t
                    .loc
                    .map(|l| format!(" at {}:{}", l.line, l.col))
                    .unwrap_or_default();
                let detail = if t.detail.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", t.detail)
                };
                format!("trap: {}{at}{detail}", t.kind)
            }
            None => "no exit status".to_string(),
        };
        return Some(reason);
    };
    if actual == expected {
        return None;
    }
    Some(first_difference(expected, &actual))
}

/// "line N: expected `..`, got `..`" for the first line where the texts differ.
pub fn first_difference(expected: &[u8], actual: &[u8]) -> String {
    let mut exp_lines = expected.split(|&b| b == b'\n');
    let mut act_lines = actual.split(|&b| b == b'\n');
    let mut line = 1;
    loop {
        match (exp_lines.next(), act_lines.next()) {
            (Some(e), Some(a)) if e == a => line += 1,
            (e, a) => {
                let show = |l: Option<&[u8]>| match l {
                    Some(l) => format!("`{}`", shorten(&String::from_utf8_lossy(l))),
                    None => "end of output".to_string(),
                };
                return format!("line {line}: expected {}, got {}", show(e), show(a));
            }
        }
    }
}

fn shorten(s: &str) -> String {
    const MAX: usize = 60;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(MAX).collect::<String>())
    }
}

/// Counts of a finished run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} passed, {} failed", self.passed, self.failed)
    }
}

/// Runs `cases` with `jobs` worker threads and writes the table to `out`, one row per case in
/// order, then the summary line.
pub fn run_all(
    engine: &dyn Engine,
    cases: &[CaseFiles],
    jobs: usize,
    out: &mut dyn Write,
) -> io::Result<Summary> {
    let width = cases.iter().map(|c| c.name.len()).max().unwrap_or(4).max(4);
    writeln!(
        out,
        "{:width$}  {:7}  {:>8}  REASON",
        "CASE", "STATUS", "SECONDS"
    )?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| io::Error::other(format!("cannot start worker threads: {e}")))?;
    let (sender, receiver) = mpsc::channel::<(usize, CaseReport)>();
    let mut summary = Summary::default();
    let mut write_result = Ok(());
    std::thread::scope(|scope| {
        scope.spawn(move || {
            pool.install(|| {
                cases
                    .par_iter()
                    .enumerate()
                    .for_each_with(sender, |s, (i, files)| {
                        // The receiver only goes away if writing failed; the rest is wasted work.
                        let _ = s.send((i, run_case(engine, files)));
                    });
            });
        });
        let mut pending = BTreeMap::new();
        let mut next = 0;
        for (i, report) in receiver {
            pending.insert(i, report);
            while let Some(report) = pending.remove(&next) {
                next += 1;
                if report.verdict == Verdict::Pass {
                    summary.passed += 1;
                } else {
                    summary.failed += 1;
                }
                let row = format!(
                    "{:width$}  {:7}  {:>8.3}  {}",
                    report.name, report.verdict, report.seconds, report.reason
                );
                let row = writeln!(out, "{}", row.trim_end()).and_then(|()| out.flush());
                if let Err(e) = row {
                    write_result = Err(e);
                    return;
                }
            }
        }
    });
    write_result?;
    writeln!(out, "{summary}")?;
    Ok(summary)
}
