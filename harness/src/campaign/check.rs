//! Checking one campaign program under its configurations: the front end and the truth, then
//! the check executor ([`sysy_check::executor`]: prefix sharing, dedup by IR and assembly,
//! runs in flight, encoder sampling, the data-flow self-test), then gcc's third opinion; the
//! checks become the program's rows.
//!
//! The program becomes a [`Subject`] once (its generated tree analysed, no second parse); the
//! truth is the reference interpreter's outcome on it (the generator's probe run when there
//! was one: see `GeneratedProgram::reference`). Every step of compiler code is noted in the
//! worker's journal and skipped when it took an earlier session's process down
//! ([`isolate`], through the executor's [`Watch`]).

use super::config::Planned;
use super::isolate::{self, Crashed, FRONT_END, Journal};
use super::records::{ProgramLine, ProgramStatus, Row, SelfTest};
use std::time::Instant;
use sysy_check::engine::{Engine, GccEngine, RunSettings};
use sysy_check::executor::timing::{Phase, Timing};
use sysy_check::executor::watch::Watch;
use sysy_check::executor::{self, Executor};
use sysy_check::failure::{Expected, Failure, FailureKind, Stage};
use sysy_check::steps;
use sysy_check::subject::{Case, Limits, Subject};
use sysy_generator::GeneratedProgram;
use sysyc::config::Config;
use sysyc::faults::FaultSet;
use sysyc::passes::OptLevel;
use sysyc::runtime::Outcome;

/// The executor and tools shared by every program of a campaign.
pub struct Checker {
    pub executor: Executor,
    pub faults: FaultSet,
    /// gcc -O0 and -O2 (the `--gcc` third opinion).
    pub gcc: Option<[GccEngine; 2]>,
    /// Where each worker notes the step in flight (for the supervisor).
    pub journal: Option<Journal>,
    /// The steps that killed the process in earlier sessions: not run again.
    pub crashed: Crashed,
}

/// What checking one program produced.
pub struct CheckedProgram {
    pub line: ProgramLine,
    pub rows: Vec<Row>,
    pub selftests: Vec<SelfTest>,
    /// The truth, when the program was judged.
    pub truth: Option<Outcome>,
    /// Per row (same order): the failure, when it failed.
    pub failures: Vec<Option<Failure>>,
}

/// The campaign's [`Watch`] of one program: its worker's journal and the crashes of earlier
/// sessions.
struct ProgramWatch<'a> {
    checker: &'a Checker,
    program: u64,
}

impl Watch for ProgramWatch<'_> {
    fn enter(&self, step: &str) {
        self.checker.note(self.program, step);
    }

    fn leave(&self) {
        self.checker.leave();
    }

    fn taken_down(&self, step: &str, stage: Stage) -> Option<Failure> {
        self.checker.crashed.get(self.program, step).map(|cause| taken_down(cause, stage))
    }
}

impl Checker {
    /// The campaign's executor settings: every cache, runs in flight, the encoder sample and
    /// the data-flow self-test.
    pub fn settings(limits: Limits, assembler: sysyc::runtime::library::Assembler, encoder_sample: u64) -> executor::Settings {
        executor::Settings {
            assembler,
            caches: true,
            runs_in_flight: RUNS_IN_FLIGHT,
            encoder_sample,
            dataflow: true,
            ..executor::Settings::plain(limits, true)
        }
    }

    /// Checks program number `index` under `configs`.
    pub fn check(&self, index: u64, p: &GeneratedProgram, configs: &[Planned]) -> CheckedProgram {
        let start = Instant::now();
        let seed = p.seed.unwrap_or_default();
        let mut line = ProgramLine {
            program: index,
            seed,
            gen_config: p.config.id(),
            status: ProgramStatus::Discarded,
            lines: p.lines() as u64,
            ..ProgramLine::default()
        };
        let discard = |mut line: ProgramLine, reason: String| {
            self.leave();
            line.reason = reason;
            line.millis = start.elapsed().as_millis() as u64;
            CheckedProgram { line, rows: Vec::new(), selftests: Vec::new(), truth: None, failures: Vec::new() }
        };
        self.note(index, FRONT_END);
        if let Some(cause) = self.crashed.get(index, FRONT_END) {
            return discard(line, format!("the front end or the reference interpreter took the process down ({cause})"));
        }
        let subject = match steps::caught(Stage::Frontend, || Subject::from_ast("prog.sy", &p.unit, &p.source, &p.stdin)) {
            Ok(Ok(s)) => s,
            Ok(Err(f)) => return discard(line, format!("the front end rejected the program: {}", f.detail)),
            Err(f) => return discard(line, format!("the front end panicked: {}", f.detail)),
        };
        let mut timing = Timing::default();
        // The generator's probe already ran the program to its end: that run is the truth.
        let limits = &self.executor.settings.limits;
        let probed = p.reference.clone().filter(|_| limits.max_steps >= sysy_generator::PROBE_STEPS);
        let case = match timing.time(Phase::Reference, || match probed {
            Some(truth) => Ok(Case { subject, expected: Expected::Outcome(truth) }),
            None => Case::with_truth(subject, limits),
        }) {
            Ok(case) => case,
            Err(rejected) => return discard(line, rejected.to_string()),
        };
        let truth = case.truth().cloned().unwrap_or_default();
        line.ref_steps = truth.steps;
        let with_faults: Vec<Config> = configs.iter().map(|c| Config { faults: self.faults.clone(), ..c.config.clone() }).collect();
        let watch = ProgramWatch { checker: self, program: index };
        let checked = match self.executor.check(&case, &with_faults, seed, &watch) {
            Ok(checked) => checked,
            Err(f) => return discard(line, format!("lowering failed: {}", f.detail)),
        };
        timing.merge(&checked.timing);
        let base = Row { program: index, seed, gen_config: line.gen_config.clone(), ..Row::default() };
        let (mut rows, mut failures): (Vec<Row>, Vec<Option<Failure>>) = configs
            .iter()
            .zip(checked.checks)
            .map(|(planned, check)| {
                let mut row = Row {
                    config_id: planned.id(),
                    label: planned.label.clone(),
                    config: planned.config.to_string(),
                    ..base.clone()
                };
                row.record_check(&check);
                (row, check.verdict.err())
            })
            .unzip();
        let selftests: Vec<SelfTest> = checked
            .selftests
            .into_iter()
            .map(|test| {
                if test.oracle == "dataflow" {
                    line.analysis_functions = test.checked;
                }
                SelfTest {
                    program: index,
                    oracle: test.oracle.into(),
                    kind: test.failure.map(|f| f.kind),
                    detail: test.detail,
                    checked: test.checked,
                    micros: test.time.as_micros() as u64,
                }
            })
            .collect();
        if let Some(gcc) = &self.gcc {
            for (engine, level) in gcc.iter().zip([OptLevel::O0, OptLevel::O2]) {
                let (row, failure) = timing.time(Phase::Gcc, || gcc_check(engine, level, &case, &base));
                rows.push(row);
                failures.push(failure);
            }
        }
        line.status = ProgramStatus::Checked;
        line.checks = rows.len() as u64;
        line.failures = failures.iter().filter(|f| f.is_some()).count() as u64
            + selftests.iter().filter(|t| t.kind.is_some()).count() as u64;
        line.millis = start.elapsed().as_millis() as u64;
        line.timing = timing;
        CheckedProgram { line, rows, selftests, truth: Some(truth), failures }
    }

    /// Notes in the journal that this worker starts `step` of `program`.
    pub fn note(&self, program: u64, step: &str) {
        if let Some(journal) = &self.journal {
            journal.enter(program, step);
        }
    }

    /// Notes in the journal that this worker runs no compiler code.
    pub fn leave(&self) {
        if let Some(journal) = &self.journal {
            journal.leave();
        }
    }
}

/// Runs a worker may have on its program's runner thread at once, running or queued: one
/// running, two queued (fixed 350-program workload, `--jobs 2`: three in flight against two,
/// 17.11 → 16.90 s).
const RUNS_IN_FLIGHT: usize = 3;

/// The `--gcc` third opinion for one optimisation level.
fn gcc_check(engine: &GccEngine, level: OptLevel, case: &Case, base: &Row) -> (Row, Option<Failure>) {
    let run = engine.run(case);
    let name = format!("gcc-{}", level.name());
    let mut row = Row {
        config_id: name.clone(),
        label: name,
        config: engine.name(),
        run_us: run.timing.get(Phase::Qemu),
        ..base.clone()
    };
    row.set_result(&run.verdict);
    (row, run.verdict.err())
}

/// gcc engines at -O0 and -O2 with the campaign's limits.
pub fn gcc_engines(limits: &Limits) -> Result<[GccEngine; 2], String> {
    let settings = RunSettings::new(limits.clone());
    Ok([GccEngine::new(OptLevel::O0, &settings)?, GccEngine::new(OptLevel::O2, &settings)?])
}

/// The failure of a step that took the process down on an earlier run (`crashed.txt`): a
/// hang stopped by the watchdog or a crash by a signal; it is not run again.
fn taken_down(cause: &str, stage: Stage) -> Failure {
    if isolate::is_hang(cause) {
        Failure::new(FailureKind::CompilerHang, stage, format!("no progress: {cause}, stopped by the campaign's watchdog; not run again"))
    } else {
        Failure::new(FailureKind::CompilerCrash, stage, format!("the compiler killed the process ({cause}); not run again"))
    }
}
