//! Locating a compiler hang, out of process.
//!
//! # Why
//! A pass that never reaches its fixpoint cannot be bisected in-process like a
//! miscompilation: the check would never return. The campaign's watchdog records such a step
//! as a `compiler-hang` failure (see [`crate::campaign::isolate`]); this names its pass.
//!
//! # How
//! * A **probe** is a child process, `harness hang-probe DIR --opt-bisect-limit K`: the
//!   failure directory's configuration with only the first K opt-bisect steps (pass,
//!   function) run, then the back end, printing the opt-bisect log. A probe still running at
//!   the time limit is killed and *hangs*.
//! * The whole configuration must hang first (else: not reproduced within the limit). With
//!   no IR step run (K = 0) it may still hang: then the back end is the culprit.
//! * Otherwise the culprit is step K for the least K whose probe hangs: K doubles from 1
//!   until a probe hangs, then the interval is halved. The log of the largest finishing
//!   probe lists step K as not run, with its pass and function.
//! * Every hanging probe costs the time limit: about log2(steps) probes, half of them
//!   hanging. It assumes what opt-bisect assumes: skipping later steps does not make an
//!   earlier one hang.
//! * No reduction: every candidate that still hangs would cost the time limit too.

use sysy_check::executor::watch::Watch;
use crate::triage::case::FailureCase;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use sysyc::config::ConfigArgs;

/// The hidden subcommand a probe runs (see the module documentation).
pub const PROBE_COMMAND: &str = "hang-probe";

/// `harness hang-probe`: compile a failure directory's program under its configuration,
/// running only the first K opt-bisect steps; print the opt-bisect log.
#[derive(clap::Args, Debug)]
pub struct ProbeArgs {
    /// A failure directory (`prog.sy`, `config`).
    pub dir: PathBuf,
    /// Run only the first N (pass, function) steps; without it, all of them.
    #[arg(long)]
    pub opt_bisect_limit: Option<u64>,
}

/// Runs one probe in this process: the front end, the pipeline up to the limit and the back
/// end. The opt-bisect log goes to standard output.
pub fn run_probe(args: &ProbeArgs) -> anyhow::Result<()> {
    let case = FailureCase::from_dir(&args.dir, &ConfigArgs::default()).map_err(anyhow::Error::msg)?;
    let config = sysyc::config::Config { opt_bisect_limit: Some(args.opt_bisect_limit.unwrap_or(u64::MAX)), ..case.config };
    let lowered = sysy_check::steps::lower(&case.subject).map_err(|f| anyhow::anyhow!("{f}"))?;
    let (module, report) = sysy_check::steps::optimise(&lowered, &config, None).map_err(|f| anyhow::anyhow!("{f}"))?;
    // The log is the probe's answer to its parent (the protocol, not a message to a user).
    std::io::Write::write_all(&mut std::io::stdout(), sysyc::driver::bisect_log_text(&report).as_bytes())?;
    sysy_check::steps::select(&module, &config).map_err(|f| anyhow::anyhow!("{f}"))?;
    Ok(())
}

/// How one probe ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Probe {
    /// It ended (successfully or not) within the limit; its opt-bisect log.
    Finished { log: String },
    /// Still running at the limit: killed.
    Hung,
}

/// Runs probes of one failure directory.
pub struct Prober<'a> {
    /// The harness executable (it has the hidden probe subcommand).
    pub exe: PathBuf,
    pub dir: PathBuf,
    /// A probe running longer than this hangs.
    pub limit: Duration,
    /// Beaten before each probe (the campaign's journal heartbeat), as [`super::Checks`] does.
    pub watch: &'a dyn Watch,
}

/// One probe made: its step limit (`None`: all steps), whether it hung, and its time.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeLine {
    pub steps: Option<u64>,
    pub hung: bool,
    pub seconds: f64,
}

/// Where the hang is.
#[derive(Clone, Debug, PartialEq)]
pub enum HangCulprit {
    /// The whole configuration compiled within the limit.
    NotReproduced,
    /// It hangs with every IR step skipped: lowering or the back end.
    Backend,
    /// Step `index` of opt-bisect, `pass` on `function`.
    Step { index: u64, pass: String, function: String },
}

impl HangCulprit {
    /// The short culprit name of a triage record: the pass, `backend` or `not-reproduced`.
    pub fn name(&self) -> String {
        match self {
            HangCulprit::NotReproduced => "not-reproduced".into(),
            HangCulprit::Backend => "backend".into(),
            HangCulprit::Step { pass, .. } => pass.clone(),
        }
    }
}

/// The result of locating a hang, with every probe made.
#[derive(Clone, Debug, PartialEq)]
pub struct HangReport {
    pub culprit: HangCulprit,
    pub probes: Vec<ProbeLine>,
    pub limit: Duration,
}

impl HangReport {
    /// One line on the culprit.
    pub fn describe(&self) -> String {
        let secs = self.limit.as_secs_f64();
        match &self.culprit {
            HangCulprit::NotReproduced => format!("the configuration compiled within {secs:.0} s: the hang did not reproduce"),
            HangCulprit::Backend => format!("with no IR pass run the compiler still runs past {secs:.0} s: lowering or the back end hangs"),
            HangCulprit::Step { index, pass, function } => {
                format!("opt-bisect step {index}, {pass} on function {function}, does not finish within {secs:.0} s")
            }
        }
    }

    /// `triage.txt`: the culprit, then one line per probe.
    pub fn render(&self) -> String {
        let mut text = format!("{}\n\nprobes (steps run, result, seconds):\n", self.describe());
        for p in &self.probes {
            let steps = p.steps.map_or("all".to_string(), |n| n.to_string());
            text.push_str(&format!("{steps:>8} {:<8} {:.2}\n", if p.hung { "hangs" } else { "finishes" }, p.seconds));
        }
        text
    }
}

impl Prober<'_> {
    /// One probe with `steps` opt-bisect steps run (`None`: all).
    pub fn probe(&self, steps: Option<u64>) -> Result<Probe, String> {
        self.watch.beat();
        let mut args = vec![PROBE_COMMAND.to_string(), self.dir.display().to_string()];
        if let Some(n) = steps {
            args.push(format!("--opt-bisect-limit={n}"));
        }
        let command = || format!("{} {}", self.exe.display(), args.join(" "));
        let start = Instant::now();
        let handle = duct::cmd(&self.exe, &args)
            .stdin_null()
            .stdout_capture()
            .stderr_capture()
            .unchecked()
            .start()
            .map_err(|e| format!("cannot start {}: {e}", command()))?;
        let finished = handle.wait_deadline(start + self.limit).map_err(|e| format!("waiting for {}: {e}", command()))?.is_some();
        if !finished {
            handle.kill().map_err(|e| format!("killing {}: {e}", command()))?;
            return Ok(Probe::Hung);
        }
        let output = handle.into_output().map_err(|e| format!("waiting for {}: {e}", command()))?;
        Ok(Probe::Finished { log: String::from_utf8_lossy(&output.stdout).into_owned() })
    }

    /// Finds the step that hangs (see the module documentation).
    pub fn locate(&self) -> Result<HangReport, String> {
        let mut probes = Vec::new();
        let mut run = |steps: Option<u64>| -> Result<Probe, String> {
            let start = Instant::now();
            let probe = self.probe(steps)?;
            probes.push(ProbeLine { steps, hung: probe == Probe::Hung, seconds: start.elapsed().as_secs_f64() });
            Ok(probe)
        };
        let culprit = if run(None)? != Probe::Hung {
            HangCulprit::NotReproduced
        } else if run(Some(0))? == Probe::Hung {
            HangCulprit::Backend
        } else {
            // Invariant: `finishing` finishes (with this log), `hanging` hangs.
            let (mut finishing, mut log, mut hanging) = (0u64, String::new(), 1u64);
            loop {
                match run(Some(hanging))? {
                    Probe::Hung => break,
                    Probe::Finished { log: l } => {
                        (finishing, log) = (hanging, l);
                        hanging = hanging.checked_mul(2).ok_or("no step limit hangs, but the whole pipeline does")?;
                    }
                }
            }
            while hanging - finishing > 1 {
                let middle = finishing + (hanging - finishing) / 2;
                match run(Some(middle))? {
                    Probe::Hung => hanging = middle,
                    Probe::Finished { log: l } => (finishing, log) = (middle, l),
                }
            }
            step_in_log(&log, hanging).ok_or_else(|| {
                format!("step {hanging} hangs, but the log of {finishing} steps does not list it: {}", log.lines().last().unwrap_or(""))
            })?
        };
        Ok(HangReport { culprit, probes, limit: self.limit })
    }
}

/// Step `index` of an opt-bisect log (`BISECT: NOT running pass (7) gvn on function main`).
fn step_in_log(log: &str, index: u64) -> Option<HangCulprit> {
    let marker = format!("pass ({index}) ");
    log.lines().find_map(|line| {
        let rest = &line[line.find(&marker)? + marker.len()..];
        let (pass, function) = rest.split_once(" on function ")?;
        Some(HangCulprit::Step { index, pass: pass.to_string(), function: function.to_string() })
    })
}

/// The default hang probe limit for a campaign step limit: half of it (a probe runs within
/// one triage step), at most 10 s (a generated program compiles in well under a second).
pub fn probe_limit(step_limit: Duration) -> Duration {
    (step_limit / 2).min(Duration::from_secs(10))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_culprit_step_is_read_from_the_log_of_a_finishing_probe() {
        let log = "BISECT: running pass (1) mem2reg on function main\nBISECT: running pass (2) constfold on function f\nBISECT: NOT running pass (3) constfold on function main\n";
        assert_eq!(
            step_in_log(log, 3),
            Some(HangCulprit::Step { index: 3, pass: "constfold".into(), function: "main".into() })
        );
        assert_eq!(step_in_log(log, 2).map(|c| c.name()), Some("constfold".into()));
        let later = "BISECT: NOT running pass (13) gvn on function g\n";
        assert_eq!(step_in_log(later, 3), None, "(13) is not (3)");
    }

    #[test]
    fn a_probe_gets_half_the_step_limit_and_at_most_ten_seconds() {
        assert_eq!(probe_limit(Duration::from_secs(4)), Duration::from_secs(2));
        assert_eq!(probe_limit(Duration::from_secs(60)), Duration::from_secs(10));
    }
}
