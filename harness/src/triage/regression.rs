//! `harness triage`: bisect, reduce, bisect the reduced program again, and keep the result
//! as a regression case that the test suite runs from then on.
//!
//! The reduction runs under the bisection's minimal pipeline when the failure shows there
//! with the same culprit ([`reduction_config`]): the passes that are not needed for the
//! failure only constrain the reduction (a load-elimination bug needs a call between two
//! reads; under `-O2` that call must also survive `inline`, so the reducer must keep the
//! callee too big to inline, and the program stays large) and make every candidate slower
//! to compile. The reduced program, its bisection and the regression case then carry that
//! configuration: they reproduce with it, not necessarily with the original one. When the
//! failure needs the inliner or the unroller itself, the decisions they made by size are
//! pinned for the reduction instead ([`super::pins`]), and the pins the reduced program
//! still needs are part of that configuration.
//!
//! A regression case is `NAME.sy` (header comment, then the reduced program), `NAME.in`
//! (its stdin, when not empty) and `NAME.out` (the reference outcome in the conformance
//! suite's convention: stdout, a newline if it lacks one, the exit status). The header
//! records the culprit, the failure and the configuration as `// key: value` lines;
//! [`check_case`] compiles the case with the recorded `config` (the `sysyc` options, faults
//! left out: a regression case must pass on a correct compiler; they are recorded on a line
//! of their own for information) and compares the IR interpreter's outcome — and the ARM
//! binary's when qemu-arm is there — with `NAME.out`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use sysyc::config::Config;
use sysyc::faults::FaultSet;
use sysyc::runtime::Outcome;

use super::bisect::{BisectReport, Checks, Culprit, Located, bisect_with, locate, still_fails};
use super::case::FailureCase;
use super::pins;
use super::reduce::{ReduceOptions, Reduced, reduce};
use sysy_check::failure::Expected;
use sysy_check::qemu::Runner;
use sysy_check::executor::watch::Unwatched;
use sysy_check::executor::{Executor, Settings};
use sysy_check::subject::{Case, Limits, Subject};

/// Settings of `harness triage`.
#[derive(Clone, Debug, Default)]
pub struct TriageOptions {
    pub limits: Limits,
    pub reduce: ReduceOptions,
    /// Where to write the regression case (`None`: nowhere).
    pub regressions_dir: Option<PathBuf>,
}

/// What `harness triage` found.
#[derive(Clone, Debug)]
pub struct TriageReport {
    /// Bisection of the original program.
    pub bisect: BisectReport,
    /// The reduced program (none when the failure does not reproduce).
    pub reduced: Option<Reduced>,
    /// Bisection of the reduced program (minimal pipeline and step for the small program).
    pub reduced_bisect: Option<BisectReport>,
    /// The configuration the program was reduced (and the reduced program bisected) under.
    pub reduced_config: Option<Config>,
    /// The regression case written.
    pub regression: Option<PathBuf>,
}

/// Bisects and reduces `case`; see the module documentation.
pub fn triage(case: &FailureCase, checks: &Checks<'_>, options: &TriageOptions) -> Result<TriageReport, String> {
    let judged = Case::with_truth(case.subject.clone(), &options.limits).map_err(|e| e.to_string())?;
    let bisect = bisect_with(&judged, &case.config, checks)?;
    let Some(located) = bisect.located.clone() else {
        return Ok(TriageReport { bisect, reduced: None, reduced_bisect: None, reduced_config: None, regression: None });
    };
    let (config, located) = reduction_config(&judged, &case.config, &bisect, located, checks)?;
    let config = pins::pinned(&judged, &config, checks, &located);
    let reduced = reduce_failure(case, &config, checks, &located, &options.reduce)?;
    let subject = Subject::parse(&case.subject.name, &reduced.source, &reduced.stdin).map_err(|f| f.detail)?;
    let reduced_case =
        Case::with_truth(subject, &options.limits).map_err(|e| format!("the reduced program is no longer valid: {e}"))?;
    let config = pins::unpinned(&reduced_case, &config, checks, &located);
    let reduced_bisect = bisect_with(&reduced_case, &config, checks)?;
    let regression = match &options.regressions_dir {
        Some(dir) => Some(write_case(dir, case, &config, &reduced, &reduced_bisect)?),
        None => None,
    };
    Ok(TriageReport {
        bisect,
        reduced: Some(reduced),
        reduced_bisect: Some(reduced_bisect),
        reduced_config: Some(config),
        regression,
    })
}

/// The configuration to reduce under, and the failure as located there: `config` with the
/// bisection's minimal pipeline when that is shorter and the failure shows under it with
/// the same culprit (the same pass by name, wherever it now sits; the same back-end
/// culprit), else `config` and `located` as they are. See the module documentation.
pub fn reduction_config(
    case: &Case,
    config: &Config,
    bisect: &BisectReport,
    located: Located,
    checks: &Checks<'_>,
) -> Result<(Config, Located), String> {
    let minimal: Option<Vec<_>> =
        bisect.minimal_pipeline.as_ref().and_then(|names| names.iter().map(|n| sysyc::passes::lookup(n)).collect());
    let Some(minimal) = minimal.filter(|m| m.len() < config.pipeline.len()) else {
        return Ok((config.clone(), located));
    };
    let narrowed = config.with_pipeline(minimal);
    let same_culprit = |there: &Culprit| match (&located.culprit, there) {
        (Culprit::Pass { name, .. }, Culprit::Pass { name: there, .. }) => name == there,
        (Culprit::Lowering | Culprit::NotReproduced, _) => false,
        (here, there) => here == there,
    };
    Ok(match locate(case, &narrowed, checks)? {
        Some((there, _, _)) if there.kind == located.kind && there.stage == located.stage && same_culprit(&there.culprit) => {
            (narrowed, there)
        }
        _ => (config.clone(), located),
    })
}

/// Reduces `case` keeping its failure under `config` exactly as `located` describes it.
pub fn reduce_failure(
    case: &FailureCase,
    config: &Config,
    checks: &Checks<'_>,
    located: &Located,
    options: &ReduceOptions,
) -> Result<Reduced, String> {
    let interesting = |c: &Case| still_fails(c, config, checks, located);
    reduce(&case.subject.name, &case.subject.source, &case.subject.stdin, &interesting, options)
}

/// The `.out` text of an outcome (stdout, newline if needed, exit status).
pub fn expected_out(outcome: &Outcome) -> Vec<u8> {
    let mut out = outcome.stdout.clone();
    if !out.is_empty() && !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    out.extend_from_slice(format!("{}\n", outcome.exit_status.unwrap_or(0)).as_bytes());
    out
}

/// Writes the regression case `DIR/NAME.{sy,in,out}` (reduced under `config`) and returns
/// the `.sy` path.
pub fn write_case(
    dir: &Path,
    case: &FailureCase,
    config: &Config,
    reduced: &Reduced,
    report: &BisectReport,
) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let name = unused_name(dir, &sanitize(&case.name));
    let mut text = String::new();
    let _ = writeln!(text, "// Regression case reduced by `harness triage` from {}.", case.subject.name);
    if let Some(l) = &report.located {
        let _ = writeln!(text, "// culprit: {}", l.culprit);
        let _ = writeln!(text, "// failure: {} in the {} stage", l.kind, l.stage);
    }
    let _ = writeln!(text, "// config: {}", Config { faults: FaultSet::none(), ..config.clone() });
    if let Some(p) = &report.minimal_pipeline {
        let _ = writeln!(text, "// minimal-pipeline: {}", p.join(","));
    }
    if !config.faults.is_empty() {
        let _ = writeln!(text, "// faults: {} (injected)", config.faults.names().join(","));
    }
    text.push_str(&reduced.source);
    let write = |ext: &str, bytes: &[u8]| {
        let path = dir.join(format!("{name}.{ext}"));
        std::fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok::<PathBuf, String>(path)
    };
    let sy = write("sy", text.as_bytes())?;
    if !reduced.stdin.is_empty() {
        write("in", &reduced.stdin)?;
    }
    write("out", &expected_out(&reduced.expected))?;
    Ok(sy)
}

/// `base`, or `base-2`, `base-3`, … : the first name with no `.sy` in `dir` yet. One program
/// can fail under several configurations of a campaign, each triaged into its own case; a
/// later one must not overwrite an earlier one.
pub(crate) fn unused_name(dir: &Path, base: &str) -> String {
    (1u32..)
        .map(|n| if n == 1 { base.to_string() } else { format!("{base}-{n}") })
        .find(|name| !dir.join(format!("{name}.sy")).exists())
        .unwrap_or_else(|| base.to_string())
}

/// `name` as a file-name component: ASCII letters, digits, `_` and `-`, the rest as `_`.
pub(crate) fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .collect();
    if s.is_empty() { "case".to_string() } else { s }
}

/// The value of a `// key: value` header line.
pub fn header_value<'a>(source: &'a str, key: &str) -> Option<&'a str> {
    source
        .lines()
        .take_while(|l| l.starts_with("//"))
        .find_map(|l| l.strip_prefix("//")?.trim().strip_prefix(key)?.strip_prefix(':'))
        .map(str::trim)
}

/// Runs one regression case (see the module documentation).
pub fn check_case(sy: &Path, runner: Option<&Runner>) -> Result<(), String> {
    let name = sy.display().to_string();
    let source = std::fs::read_to_string(sy).map_err(|e| format!("{name}: {e}"))?;
    let stdin = std::fs::read(sy.with_extension("in")).unwrap_or_default();
    let expected = std::fs::read(sy.with_extension("out")).map_err(|e| format!("{name}: no .out: {e}"))?;
    let config: Config = header_value(&source, "config")
        .ok_or_else(|| format!("{name}: no `// config:` header"))?
        .parse()
        .map_err(|e| format!("{name}: {e}"))?;
    let subject = Subject::parse(&name, &source, &stdin).map_err(|f| f.detail)?;
    let truth = subject.truth(&Limits::GENERATED).map_err(|e| format!("{name}: {e}"))?;
    if expected_out(&truth) != expected {
        return Err(format!("{name}: the reference interpreter disagrees with the .out file"));
    }
    let case = Case { subject, expected: Expected::OutFile(expected) };
    let executor = Executor::new(Settings::plain(Limits::GENERATED, runner.is_some()), runner.cloned());
    let mut checked = executor.check(&case, &[config], 0, &Unwatched).map_err(|f| format!("{name}: {f}"))?;
    checked.checks.pop().map_or(Ok(()), |check| check.verdict).map_err(|f| format!("{name}: {f}"))
}
