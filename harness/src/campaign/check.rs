//! Checking one program under many configurations.
//!
//! # Flow
//! The program becomes a [`Subject`] once (its generated tree analysed, no second parse); the
//! truth is the reference interpreter's outcome on it (the generator's probe run when there
//! was one: see `GeneratedProgram::reference`), and the lowered module is made once.
//! The configurations run in the order of [`prefix::run_order`] (rows keep the planned
//! order; `ir_shared`/`asm_shared` name the row that ran first in that order), each through
//! the stages ([`crate::stages`]): optimise (the verifier after every pass; resumed from the
//! longest pipeline prefix an earlier configuration ran, see [`prefix`]) → IR interpreter → select (the machine-code verifier after every stage)
//! → link → qemu-arm with the cost plugin, each outcome judged by the one judge. Then, once
//! per program, the self-test oracles (today the data-flow agreement) and, with `--gcc`,
//! gcc's third opinion. A sample of the distinct assembly texts is also assembled by GNU
//! `as` and compared with the in-process encoding ([`encoder`]) before it is run; a
//! disagreement is that check's failure.
//!
//! # Overlap
//! The link and qemu run of a configuration go to the program's runner thread (one per
//! program, fed one assembly text at a time) while the worker optimises and selects the next
//! configuration, so the qemu child and the worker keep two
//! cores busy between them instead of taking turns (alone, a worker leaves a core idle at each
//! hand-over to and from the fork server). Up to [`RUNS_IN_FLIGHT`] runs are in flight per
//! worker (one running, the others queued, so that a worker whose compile outpaced a run goes on
//! compiling), and the program's data-flow self-test runs while its last runs finish; a row
//! waiting for a run is settled when it lands, in its planned place. A row's `compile_us` is its
//! pipeline, back end and link (not the run). `programs 150 --jobs 2 --seed 777`: 25.7 →
//! 25.3 s, CPU use 1.79 → 1.87 cores.
//!
//! # Dedup
//! A [`Cache`] wraps the stages after the optimiser, keyed by hashes: a configuration whose
//! optimised IR was seen before shares its IR-interpreter verdict and its back end (per stage
//! set), and one whose assembly was seen before shares its qemu run. Its row says so
//! (`ir_shared`, `asm_shared`), which is where the dedup ratio comes from. The cache keeps
//! hashes and results only, never modules or assembly texts, and lives for one program.

use super::config::Planned;
use super::prefix;
use super::isolate::{self, ANALYSIS, Crashed, FRONT_END, Journal};
use super::records::{Phase, ProgramLine, Row, SelfTest, Timing};
use crate::engine::{Engine, GccEngine, RunSettings};
use crate::failure::{Expected, Failure, FailureKind, Stage, judge};
use crate::generators::GeneratedProgram;
use crate::oracles::{dataflow, encoder};
use crate::qemu::{RunCost, Runner};
use crate::stages;
use crate::subject::{Case, Limits, Subject};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;
use sysyc::passes::manager::PipelineState;
use sysyc::faults::FaultSet;
use sysyc::passes::OptLevel;
use sysyc::runtime::library::Assembler;
use sysyc::runtime::Outcome;

/// Limits and tools shared by every check.
pub struct Checker {
    pub runner: Runner,
    pub faults: FaultSet,
    pub limits: Limits,
    /// gcc -O0 and -O2 (the `--gcc` third opinion).
    pub gcc: Option<[GccEngine; 2]>,
    /// Where each worker notes the step in flight (for the supervisor).
    pub journal: Option<Journal>,
    /// The steps that killed the process in earlier sessions: not run again.
    pub crashed: Crashed,
    /// How executables are built.
    pub assembler: Assembler,
    /// One distinct assembly text in this many is also compared with GNU as (0: none).
    pub encoder_sample: u64,
}

/// What checking one program produced.
pub struct Checked {
    pub line: ProgramLine,
    pub rows: Vec<Row>,
    pub selftests: Vec<SelfTest>,
    /// The truth, when the program was judged.
    pub truth: Option<Outcome>,
    /// Per row (same order): the failure, when it failed.
    pub failures: Vec<Option<Failure>>,
}

pub(crate) fn hash_text(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex()[..16].to_string()
}

/// Prefix of the names of campaign worker threads (their panics are caught and recorded).
pub const WORKER_PREFIX: &str = "campaign-worker";

/// A qemu run, shared by every configuration with the same assembly.
#[derive(Clone)]
struct Native {
    verdict: Result<(), Failure>,
    cost: Option<RunCost>,
    run_us: u64,
}

/// The per-program dedup cache around the stages after the optimiser (see the module
/// documentation).
#[derive(Default)]
struct Cache {
    /// IR hash → the IR interpreter's verdict.
    ir: FxHashMap<String, Result<(), Failure>>,
    /// "IR hash/stage set" → assembly hash, or the back end's failure.
    asm: FxHashMap<String, Result<String, Failure>>,
    /// Assembly hash → the qemu run.
    native: FxHashMap<String, Native>,
    /// The optimised IR of the configurations whose pipeline is exactly `-O1`'s or `-O2`'s:
    /// the data-flow oracle checks these instead of running the pipelines again.
    levels: Vec<(OptLevel, Arc<PipelineState>)>,
}

impl Cache {
    /// The IR interpreter's verdict on the IR of `ir_hash`, computed once.
    fn ir_verdict(&mut self, ir_hash: &str, run: impl FnOnce() -> Result<(), Failure>) -> Result<(), Failure> {
        self.ir.entry(ir_hash.to_string()).or_insert_with(run).clone()
    }

    /// The assembly hash of the back end's output for `key`, selected only when the key was
    /// not seen; with the text when it was selected now. Also whether the back end was shared.
    fn assembly(&mut self, key: &str, select: impl FnOnce() -> Result<String, Failure>) -> (Result<(String, Option<String>), Failure>, bool) {
        if let Some(asm) = self.asm.get(key) {
            return (asm.clone().map(|hash| (hash, None)), true);
        }
        let selected = select();
        let asm_hash = selected.as_ref().map(|text| hash_text(text)).map_err(Failure::clone);
        self.asm.insert(key.to_string(), asm_hash.clone());
        (selected.and_then(|text| asm_hash.map(|hash| (hash, Some(text)))), false)
    }
}

/// A configuration whose row waits for a qemu run in flight.
struct Waiting {
    planned_index: usize,
    row: Row,
}

/// The qemu run in flight on the program's runner thread (at most one per worker), and the
/// rows waiting for it.
struct InFlight {
    asm_hash: String,
    waiting: Vec<Waiting>,
}

/// The data-flow check of a program ([`Checker::analyse`]), kept apart from the program's
/// timing until the encoder's line has taken its own self-test time.
struct Analysis {
    selftest: SelfTest,
    timing: Timing,
}

/// Runs a worker may have on its runner thread at once, running or queued (see "Overlap").
const RUNS_IN_FLIGHT: usize = 3;

/// A run for the runner thread: the assembly text and its hash.
type RunJob = (String, String);

/// The program's runner thread (see "Overlap" in the module documentation): it takes one
/// assembly text at a time and answers with its run. One thread per program rather than per
/// run: at eight runs per program, `perf` put about 2% of a campaign's CPU time in starting
/// and ending threads (with the allocator's per-thread caches they fill and flush).
struct RunThread<'scope> {
    jobs: std::sync::mpsc::Sender<RunJob>,
    results: std::sync::mpsc::Receiver<(Native, Timing)>,
    handle: std::thread::ScopedJoinHandle<'scope, ()>,
}

impl RunThread<'_> {
    /// Ends the thread: re-raises its panic in the worker, where panics are caught.
    fn finish(self) {
        drop(self.jobs);
        if let Err(panic) = self.handle.join() {
            std::panic::resume_unwind(panic);
        }
    }
}

/// Fills a row's measurements from its qemu run; returns the run's verdict.
fn finish_row(row: &mut Row, native: &Native) -> Result<(), Failure> {
    if let Some(cost) = &native.cost {
        row.insns = Some(cost.counts.total);
        row.program_insns = Some(cost.counts.program.total());
        row.cycles = Some(cost.cycles.total);
        row.class_counts = Some(cost.counts.per_class.0);
    }
    row.run_us = native.run_us;
    native.verdict.clone()
}

/// Records a configuration's row and verdict in its planned place.
fn settle(slots: &mut [Option<(Row, Option<Failure>)>], planned_index: usize, mut row: Row, verdict: Result<(), Failure>) {
    row.set_result(&verdict);
    slots[planned_index] = Some((row, verdict.err()));
}

/// Settles the rows waiting for a run that landed: the first one made the run (its link
/// counts in its compile time), the others share it.
fn land(in_flight: InFlight, ran: (Native, Timing), cache: &mut Cache, slots: &mut [Option<(Row, Option<Failure>)>], timing: &mut Timing) {
    let (native, run_timing) = ran;
    timing.merge(&run_timing);
    for (i, Waiting { planned_index, mut row }) in in_flight.waiting.into_iter().enumerate() {
        if i == 0 {
            row.compile_us += run_timing.get(Phase::Link);
        }
        let verdict = finish_row(&mut row, &native);
        settle(slots, planned_index, row, verdict);
    }
    cache.native.insert(in_flight.asm_hash, native);
}

impl Checker {
    /// Checks program number `index` under `configs`.
    pub fn check(&self, index: u64, p: &GeneratedProgram, configs: &[Planned]) -> Checked {
        let start = Instant::now();
        let seed = p.seed.unwrap_or_default();
        let mut line = ProgramLine {
            program: index,
            seed,
            gen_config: p.config.id(),
            status: "discarded".into(),
            lines: p.lines() as u64,
            ..ProgramLine::default()
        };
        let discard = |mut line: ProgramLine, reason: String| {
            self.leave();
            line.reason = reason;
            line.millis = start.elapsed().as_millis() as u64;
            Checked { line, rows: Vec::new(), selftests: Vec::new(), truth: None, failures: Vec::new() }
        };
        self.note(index, FRONT_END);
        if let Some(cause) = self.crashed.get(index, FRONT_END) {
            return discard(line, format!("the front end or the reference interpreter took the process down ({cause})"));
        }
        let subject = match stages::caught(Stage::Frontend, || Subject::from_ast("prog.sy", &p.unit, &p.source, &p.stdin)) {
            Ok(Ok(s)) => s,
            Ok(Err(f)) => return discard(line, format!("the front end rejected the program: {}", f.detail)),
            Err(f) => return discard(line, format!("the front end panicked: {}", f.detail)),
        };
        let mut timing = Timing::default();
        // The generator's probe already ran the program to its end: that run is the truth.
        let probed = p.reference.clone().filter(|_| self.limits.max_steps >= crate::generators::PROBE_STEPS);
        let case = match timing.time(Phase::Reference, || match probed {
            Some(truth) => Ok(Case { subject, expected: Expected::Outcome(truth) }),
            None => Case::with_truth(subject, &self.limits),
        }) {
            Ok(case) => case,
            Err(rejected) => return discard(line, rejected.to_string()),
        };
        let truth = case.truth().cloned().unwrap_or_default();
        line.ref_steps = truth.steps;
        let lowered = match timing.time(Phase::Optimise, || stages::lower(&case.subject)) {
            Ok(m) => m,
            Err(f) => return discard(line, format!("lowering failed: {}", f.detail)),
        };
        let base = Row { program: index, seed, gen_config: line.gen_config.clone(), ..Row::default() };
        let mut cache = Cache::default();
        // Run in the order that shares pipeline prefixes; rows stay in the planned order.
        let order = prefix::run_order(configs);
        let run_configs: Vec<sysyc::config::Config> =
            order.iter().map(|&i| sysyc::config::Config { faults: self.faults.clone(), ..configs[i].config.clone() }).collect();
        let mut prefixes = timing.time(Phase::Optimise, || {
            prefix::PrefixCache::new(&lowered, &run_configs.iter().collect::<Vec<_>>())
        });
        let mut slots: Vec<Option<(Row, Option<Failure>)>> = vec![None; configs.len()];
        // Runs go to the runner thread (see "Overlap" in the module documentation).
        let (stdin, expected) = (&case.subject.stdin, &case.expected);
        let mut analysis = None;
        std::thread::scope(|scope| {
            let (jobs, job_queue) = std::sync::mpsc::channel::<RunJob>();
            let (answer, results) = std::sync::mpsc::channel();
            let serve = move || {
                for (text, hash) in job_queue {
                    let mut run_timing = Timing::default();
                    let native = self.run(&text, &hash, seed, stdin, expected, &mut run_timing);
                    if answer.send((native, run_timing)).is_err() {
                        break;
                    }
                }
            };
            // Without a thread, runs are made on the worker itself (no overlap).
            let mut runner = std::thread::Builder::new()
                .name(format!("{WORKER_PREFIX}-run"))
                .spawn_scoped(scope, serve)
                .ok()
                .map(|handle| RunThread { jobs, results, handle });
            let mut in_flight: VecDeque<InFlight> = VecDeque::new();
            // Waits for the oldest run in flight (if any) and settles its rows.
            let land_oldest = |in_flight: &mut VecDeque<InFlight>, runner: &mut Option<RunThread<'_>>, cache: &mut Cache, slots: &mut [Option<(Row, Option<Failure>)>], timing: &mut Timing| {
                let Some(flight) = in_flight.pop_front() else { return };
                let Some(ran) = runner.as_ref().and_then(|r| r.results.recv().ok()) else {
                    // The thread ended without answering: only a panic does that.
                    if let Some(r) = runner.take() {
                        r.finish();
                    }
                    for Waiting { planned_index, row } in flight.waiting {
                        let lost = Failure::new(FailureKind::HarnessError, Stage::Qemu, "the runner thread ended before the run");
                        settle(slots, planned_index, row, Err(lost));
                    }
                    return;
                };
                land(flight, ran, cache, slots, timing);
            };
            for (run_index, (&planned_index, config)) in order.iter().zip(&run_configs).enumerate() {
                let planned = &configs[planned_index];
                let mut row = Row {
                    config_id: planned.id(),
                    label: planned.label.clone(),
                    config: planned.config.to_string(),
                    ..base.clone()
                };
                let before_run = match self.crashed.get(index, &row.config_id) {
                    Some(cause) => Err(taken_down(cause, Stage::Pipeline)),
                    None => {
                        self.note(index, &row.config_id);
                        self.check_config(&mut cache, &mut prefixes, run_index, &case, config, &mut row, &mut timing)
                    }
                };
                let (asm_hash, text) = match before_run {
                    Ok(selected) => selected,
                    Err(failure) => {
                        settle(&mut slots, planned_index, row, Err(failure));
                        continue;
                    }
                };
                row.asm_hash = asm_hash.clone();
                if let Some(native) = cache.native.get(&asm_hash) {
                    row.asm_shared = true;
                    let verdict = finish_row(&mut row, native);
                    settle(&mut slots, planned_index, row, verdict);
                    continue;
                }
                if let Some(running) = in_flight.iter_mut().find(|f| f.asm_hash == asm_hash) {
                    row.asm_shared = true;
                    running.waiting.push(Waiting { planned_index, row });
                    continue;
                }
                let Some(text) = text else {
                    // Every assembly text selected before was run, or its run is in flight.
                    let lost = Failure::new(FailureKind::HarnessError, Stage::Qemu, format!("the run of assembly {asm_hash} was lost"));
                    settle(&mut slots, planned_index, row, Err(lost));
                    continue;
                };
                if in_flight.len() >= RUNS_IN_FLIGHT {
                    land_oldest(&mut in_flight, &mut runner, &mut cache, &mut slots, &mut timing);
                }
                let flight = InFlight { asm_hash: asm_hash.clone(), waiting: vec![Waiting { planned_index, row }] };
                let unsent = match &runner {
                    Some(r) => r.jobs.send((text, asm_hash)).err().map(|unsent| unsent.0),
                    None => Some((text, asm_hash)),
                };
                match unsent {
                    None => in_flight.push_back(flight),
                    Some((text, asm_hash)) => {
                        let mut run_timing = Timing::default();
                        let native = self.run(&text, &asm_hash, seed, stdin, expected, &mut run_timing);
                        land(flight, (native, run_timing), &mut cache, &mut slots, &mut timing);
                    }
                }
            }
            // The solvers' check while the last runs are in flight, so that their qemu runs
            // and this worker's check share the wait.
            analysis = Some(self.analyse(index, &lowered, &cache));
            while !in_flight.is_empty() {
                land_oldest(&mut in_flight, &mut runner, &mut cache, &mut slots, &mut timing);
            }
            if let Some(r) = runner {
                r.finish();
            }
        });
        drop(prefixes);
        let (mut rows, mut failures): (Vec<Row>, Vec<Option<Failure>>) = slots.into_iter().flatten().unzip();
        // The encoder oracle ran inside the checks (its disagreements are their failures);
        // its line says how many distinct texts it compared, and in how long.
        let mut selftests = vec![SelfTest {
            program: index,
            oracle: "encoder".into(),
            kind: None,
            detail: String::new(),
            checked: cache.native.keys().filter(|hash| encoder::sampled(seed, hash, self.encoder_sample)).count() as u64,
            micros: timing.get(Phase::Selftest),
        }];
        if let Some(analysis) = analysis {
            timing.merge(&analysis.timing);
            line.analysis_functions = analysis.selftest.checked;
            selftests.push(analysis.selftest);
        }
        self.leave();
        if let Some(gcc) = &self.gcc {
            for (engine, level) in gcc.iter().zip([OptLevel::O0, OptLevel::O2]) {
                let (row, failure) = timing.time(Phase::Gcc, || gcc_check(engine, level, &case, &base));
                rows.push(row);
                failures.push(failure);
            }
        }
        line.status = "checked".into();
        line.checks = rows.len() as u64;
        line.failures = failures.iter().filter(|f| f.is_some()).count() as u64
            + selftests.iter().filter(|t| t.kind.is_some()).count() as u64;
        line.millis = start.elapsed().as_millis() as u64;
        line.timing = timing;
        Checked { line, rows, selftests, truth: Some(truth), failures }
    }

    /// The data-flow solvers' agreement check of a program: its `selftests.csv` line and time.
    /// The solvers run compiler code too: journaled as their own step, and skipped on the
    /// resumed run after they killed the process.
    fn analyse(&self, index: u64, lowered: &sysyc::ir::Module, cache: &Cache) -> Analysis {
        let mut timing = Timing::default();
        if let Some(cause) = self.crashed.get(index, ANALYSIS) {
            let failure = taken_down(cause, Stage::Analysis);
            let selftest = SelfTest {
                program: index,
                oracle: "dataflow".into(),
                kind: Some(failure.kind),
                detail: failure.detail,
                checked: 0,
                micros: 0,
            };
            return Analysis { selftest, timing };
        }
        self.note(index, ANALYSIS);
        let start = Instant::now();
        let optimised = |level: OptLevel| cache.levels.iter().find(|(l, _)| *l == level).map(|(_, state)| state.module());
        let result = timing.time(Phase::Selftest, || dataflow::check_program(lowered, &optimised));
        let compared = result.as_ref().copied().unwrap_or_default();
        let detail = match &result {
            Err(f) => f.detail.clone(),
            Ok(c) if c.skipped > 0 => format!("{} functions skipped: too irreducible for the region solver", c.skipped),
            Ok(_) => String::new(),
        };
        let selftest = SelfTest {
            program: index,
            oracle: "dataflow".into(),
            kind: result.as_ref().err().map(|f| f.kind),
            detail,
            checked: compared.functions,
            micros: start.elapsed().as_micros() as u64,
        };
        Analysis { selftest, timing }
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

    /// One configuration through the stages up to its qemu run; fills the row's measurements so
    /// far and returns the assembly's hash, with the text when it was selected just now.
    #[allow(clippy::too_many_arguments)]
    fn check_config(
        &self,
        cache: &mut Cache,
        prefixes: &mut prefix::PrefixCache,
        run_index: usize,
        case: &Case,
        config: &sysyc::config::Config,
        row: &mut Row,
        timing: &mut Timing,
    ) -> Result<(String, Option<String>), Failure> {
        let optimised = timing.time(Phase::Optimise, || prefixes.optimise(run_index, config))?;
        let names = config.pass_names();
        for level in [OptLevel::O1, OptLevel::O2] {
            if !cache.levels.iter().any(|(l, _)| *l == level) && names == sysyc::config::Config::level(level).pass_names() {
                cache.levels.push((level, Arc::clone(&optimised.state)));
            }
        }
        let module = optimised.module();
        row.passes_changed = optimised.changed_bits();
        row.ir_hash = optimised.ir_hash.clone();
        // The whole pipeline's time, also of the prefix that ran for an earlier configuration.
        row.compile_us = optimised.pipeline_time().as_micros() as u64;
        let stdin = &case.subject.stdin;
        let timeout = self.limits.timeout;
        cache.ir_verdict(&row.ir_hash, || {
            let outcome = timing.time(Phase::Interpret, || stages::interpret(module, stdin, timeout))?;
            judge(&case.expected, &outcome, Stage::IrInterp)
        })?;
        let key = format!("{}/{}", row.ir_hash, config.stages_spec());
        let start = Instant::now();
        let (selected, ir_shared) = cache.assembly(&key, || stages::select(module, config));
        row.ir_shared = ir_shared;
        if !ir_shared {
            let selecting = start.elapsed();
            timing.add(Phase::Backend, selecting);
            row.compile_us += selecting.as_micros() as u64;
        }
        selected
    }

    /// Links and runs one assembly text under qemu with the cost plugin, and judges it; for
    /// the sampled texts of the program of `seed`, the encoder oracle first (a disagreement
    /// is the verdict: it may explain a wrong run).
    fn run(&self, asm: &str, asm_hash: &str, seed: u64, stdin: &[u8], expected: &Expected, timing: &mut Timing) -> Native {
        if encoder::sampled(seed, asm_hash, self.encoder_sample)
            && let Err(failure) = timing.time(Phase::Selftest, || encoder::check(asm))
        {
            return Native { verdict: Err(failure), cost: None, run_us: 0 };
        }
        let start = Instant::now();
        let executed = stages::execute(asm, self.assembler, stdin, &self.runner, self.limits.timeout);
        match &executed {
            Ok(execution) => {
                timing.add(Phase::Link, execution.link);
                timing.add(Phase::Qemu, start.elapsed().saturating_sub(execution.link));
            }
            Err(_) => timing.add(Phase::Link, start.elapsed()),
        }
        match executed {
            Ok(execution) => Native {
                verdict: execution.run.outcome(Stage::Qemu).and_then(|o| judge(expected, &o, Stage::Qemu)),
                cost: execution.run.cost.clone(),
                run_us: execution.run.wall.as_micros() as u64,
            },
            Err(failure) => Native { verdict: Err(failure), cost: None, run_us: 0 },
        }
    }
}

/// The `--gcc` third opinion for one optimisation level.
fn gcc_check(engine: &GccEngine, level: OptLevel, case: &Case, base: &Row) -> (Row, Option<Failure>) {
    let run = engine.run(&case.subject);
    let result = run.result.and_then(|o| judge(&case.expected, &o, Stage::Gcc));
    let name = format!("gcc-{}", level.name());
    let mut row = Row {
        config_id: name.clone(),
        label: name,
        config: engine.name(),
        run_us: run.phases.run.as_micros() as u64,
        ..base.clone()
    };
    row.set_result(&result);
    (row, result.err())
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
