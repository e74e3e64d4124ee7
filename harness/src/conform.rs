//! The conformance runner: every `NAME.sy` of a directory, run by one [`Engine`] with
//! `NAME.in` (if present) as stdin, judged against `NAME.out` in the competition convention
//! (stdout, a newline if needed, the exit status; see [`Outcome::expected_output`]).
//!
//! Engines judge their runs with the harness's one judge ([`sysy_check::failure::judge`])
//! against the `.out` file. Cases run in parallel on a rayon pool; results are reported in sorted case order as soon
//! as every earlier case is done, so the report is the same whatever the scheduling. Each
//! case gets a [`Verdict`]: PASS, FAIL (ran, but the result differs — including traps and
//! crashes), ERROR (no result: the program was rejected, the engine broke, or the case is
//! incomplete) or TIMEOUT. The report ends with the line `N passed, N failed`, where everything that did
//! not pass counts as failed.

use sysy_check::engine::{Engine, EngineRun};
use sysy_check::failure::{Expected, Failure, FailureKind};
use sysy_check::subject::{Case, Subject};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

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

/// A case read from its files: the subject and its `.out` (or the reason it cannot run).
pub fn load(files: &CaseFiles) -> Result<Case, String> {
    let read = |path: &Path| std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()));
    let source = sysyc::frontend::source_from_bytes(&read(&files.source)?);
    let stdin = match &files.input {
        Some(p) => read(p)?,
        None => Vec::new(),
    };
    let expected = Expected::OutFile(read(&files.expected)?);
    let name = files.source.display().to_string();
    let subject = Subject::parse(&name, &source, &stdin).map_err(|f| format!("compile error: {}", first_line(&f.detail)))?;
    Ok(Case { subject, expected })
}

/// Loads, runs and judges one case.
pub fn run_case(engine: &dyn Engine, files: &CaseFiles) -> CaseReport {
    match load(files) {
        Ok(case) => report_run(&files.name, &engine.run(&case)),
        Err(reason) => CaseReport { name: files.name.clone(), verdict: Verdict::Error, seconds: 0.0, reason },
    }
}

/// The verdict on a run: a wrong answer is FAIL, running out of time TIMEOUT, no answer at
/// all (the compiler or the harness failed) ERROR.
pub fn verdict_of(result: &Result<(), Failure>) -> (Verdict, String) {
    match result {
        Ok(()) => (Verdict::Pass, String::new()),
        Err(f) if f.kind == FailureKind::Timeout => (Verdict::Timeout, "time limit exceeded".into()),
        Err(f) if f.kind.is_wrong_run() => (Verdict::Fail, f.detail.clone()),
        Err(f) => (Verdict::Error, format!("{}: {}", f.kind, first_line(&f.detail))),
    }
}

/// The report of a judged run.
pub fn report_run(name: &str, run: &EngineRun) -> CaseReport {
    let (verdict, reason) = verdict_of(&run.verdict);
    CaseReport { name: name.to_string(), verdict, seconds: run.timing.total().as_secs_f64(), reason }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
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
