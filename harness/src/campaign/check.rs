//! Checking one program under many configurations, with deduplication.
//!
//! # Flow and dedup
//! The truth comes first (the reference interpreter on the source). The source is lowered
//! once; per configuration the lowered module is cloned and the IR pipeline runs in-process
//! with the verifier after every pass, under `catch_unwind` (a panic fails that configuration
//! only). Then, keyed by hashes:
//! * the optimised IR (its printed text hashed with BLAKE3) is run once in the IR
//!   interpreter, whatever configuration produced it;
//! * (IR hash, back-end stage set) is compiled to assembly once;
//! * the assembly hash is assembled, linked and run under qemu-arm with the cost plugin
//!   once.
//!
//! A configuration whose IR or assembly was seen before shares the earlier result; its row
//! says so (`ir_shared`, `asm_shared`), which is where the dedup ratio comes from. The caches
//! live for one program (different programs never share code).
//!
//! The compiler runs in-process: no process start per configuration, and its panics are
//! caught per configuration (the panic hook installed by [`quiet_panics`] keeps worker-thread
//! panics off the terminal and records their location). A crash that takes the process down
//! (stack overflow) would end the campaign; `--resume` continues after it.

use super::config::Configuration;
use super::isolate::{ANALYSIS, Crashed, FRONT_END, Journal};
use super::oracle::{Kind, Mismatch, Oracle, judge};
use super::records::{ProgramLine, Row};
use crate::engine::{Case, Engine, EngineConfig, EngineFailure, GccEngine, panic_message};
use crate::generators::GeneratedProgram;
use crate::native::NativeRunner;
use crate::qemu::RunStatus;
use crate::refinterp::{self, RefConfig, RefError};
use rustc_hash::{FxHashMap, FxHashSet};
use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};
use sysyc::driver::{self, CompileError};
use sysyc::faults::FaultSet;
use sysyc::ir::Module;
use sysyc::ir::interp::{InterpConfig, Program};
use sysyc::passes::PipelineError;
use sysyc::runtime::Outcome;
use sysyc::toolchain::ToolchainError;

/// Limits and tools shared by every check.
pub struct Checker {
    pub runner: NativeRunner,
    pub faults: FaultSet,
    /// Wall-clock limit of the truth, of one IR-interpreter run and of one qemu run.
    pub timeout: Duration,
    /// gcc -O0 and -O2 (the `--gcc` third opinion).
    pub gcc: Option<[GccEngine; 2]>,
    /// Where each worker notes the step in flight (for the supervisor).
    pub journal: Option<Journal>,
    /// The steps that killed the process in earlier sessions: not run again.
    pub crashed: Crashed,
}

/// What checking one program produced.
pub struct Checked {
    pub line: ProgramLine,
    pub rows: Vec<Row>,
    /// The truth, when the program was judged.
    pub truth: Option<Outcome>,
    /// Per row (same order): the mismatch, when it failed.
    pub mismatches: Vec<Option<Mismatch>>,
}

/// The result of a qemu run, shared by every configuration with the same assembly.
#[derive(Clone)]
struct NativeResult {
    verdict: Result<Outcome, Mismatch>,
    insns: Option<u64>,
    program_insns: Option<u64>,
    cycles: Option<u64>,
    class_counts: Option<[u64; sysy_cost_model::NUM_CLASSES]>,
    run_us: u64,
}

fn hash_text(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex()[..16].to_string()
}

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Prefix of the names of campaign worker threads (their panics are caught and recorded).
pub const WORKER_PREFIX: &str = "campaign-worker";

/// Installs a panic hook that records the location of panics on campaign worker threads
/// instead of printing them (the catch site reports them), and defers to the previous hook
/// elsewhere.
pub fn quiet_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let on_worker = std::thread::current().name().is_some_and(|n| n.starts_with(WORKER_PREFIX));
        if on_worker {
            let at = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(at));
        } else {
            previous(info);
        }
    }));
}

/// Runs `f`, turning a panic into a compiler-panic mismatch found by `oracle`.
fn caught<T>(oracle: Oracle, f: impl FnOnce() -> T) -> Result<T, Mismatch> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let at = LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_default();
        Mismatch::new(Kind::CompilerPanic, oracle, format!("panicked at {at}: {}", panic_message(&payload)))
    })
}

impl Checker {
    /// The truth of a program, or why it is discarded.
    pub fn truth(&self, p: &GeneratedProgram) -> Result<Outcome, String> {
        let config = RefConfig { timeout: Some(self.timeout), ..RefConfig::default() };
        match refinterp::run_source("prog.sy", &p.source, &p.stdin, &config) {
            Ok(outcome) if outcome.trap.is_some() => {
                let trap = outcome.trap.as_ref().map(|t| format!("{} {}", t.kind, t.detail)).unwrap_or_default();
                Err(format!("the reference interpreter trapped: {trap}"))
            }
            Ok(outcome) => Ok(outcome),
            Err(RefError::TimedOut { steps }) => Err(format!("the reference interpreter timed out after {steps} steps")),
            Err(e) => Err(format!("the reference interpreter failed: {e}")),
        }
    }

    /// Checks program number `index` under `configs`.
    pub fn check(&self, index: u64, p: &GeneratedProgram, configs: &[Configuration]) -> Checked {
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
            Checked { line, rows: Vec::new(), truth: None, mismatches: Vec::new() }
        };
        self.note(index, FRONT_END);
        if let Some(signal) = self.crashed.get(index, FRONT_END) {
            return discard(line, format!("the front end or the reference interpreter killed the process ({signal})"));
        }
        let truth = match self.truth(p) {
            Ok(t) => t,
            Err(reason) => return discard(line, reason),
        };
        line.ref_steps = truth.steps;
        let lowered = match caught(Oracle::Pipeline, || driver::lower_source("prog.sy", &p.source)) {
            Ok(Ok(m)) => m,
            Ok(Err(e)) => return discard(line, format!("the front end rejected the program: {e}")),
            Err(m) => return discard(line, format!("the front end panicked: {}", m.detail)),
        };
        let mut session = Session::default();
        let mut rows = Vec::new();
        let mut mismatches = Vec::new();
        let base = Row { program: index, seed, gen_config: line.gen_config.clone(), ..Row::default() };
        for config in configs {
            let id = config.id();
            let (row, mismatch) = match self.crashed.get(index, &id) {
                Some(signal) => crashed_row(config, signal, &base),
                None => {
                    self.note(index, &id);
                    self.check_config(&mut session, &lowered, &truth, p, config, &base)
                }
            };
            rows.push(row);
            mismatches.push(mismatch);
        }
        // The solvers run compiler code too: journaled like a configuration, and skipped
        // (no row) on the resumed run after they killed the process.
        if self.crashed.get(index, ANALYSIS).is_none() {
            self.note(index, ANALYSIS);
            let (row, mismatch, functions) = analysis_check(&lowered, &session.analysis, &base);
            line.analysis_functions = functions;
            rows.push(row);
            mismatches.push(mismatch);
        }
        self.leave();
        if let Some(gcc) = &self.gcc {
            for (engine, name) in gcc.iter().zip(["gcc-O0", "gcc-O2"]) {
                let (row, mismatch) = gcc_check(engine, name, p, &truth, &base);
                rows.push(row);
                mismatches.push(mismatch);
            }
        }
        line.status = "checked".into();
        line.checks = rows.len() as u64;
        line.failures = mismatches.iter().filter(|m| m.is_some()).count() as u64;
        line.millis = start.elapsed().as_millis() as u64;
        Checked { line, rows, truth: Some(truth), mismatches }
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

    /// Checks that the data-flow solvers agree on `module`, the optimised IR of the
    /// configuration `row` (hash `row.ir_hash`), unless that IR was checked already, a
    /// disagreement was found, or the solvers killed the process on this program before. The
    /// solvers are journaled as their own step, so a crash in them is not blamed on the
    /// configuration.
    fn analyse_optimised(&self, tally: &mut AnalysisTally, row: &Row, module: &Module) {
        if tally.mismatch.is_some() || self.crashed.get(row.program, ANALYSIS).is_some() || !tally.seen.insert(row.ir_hash.clone()) {
            return;
        }
        let start = Instant::now();
        self.note(row.program, ANALYSIS);
        let result = caught(Oracle::Analysis, || super::analysis::check_module(module, &format!("optimised IR {}", row.ir_hash)))
            .and_then(|r| r);
        self.note(row.program, &row.config_id);
        tally.micros += start.elapsed().as_micros() as u64;
        match result {
            Ok(functions) => tally.functions += functions,
            Err(m) => tally.mismatch = Some(m),
        }
    }

    fn check_config(
        &self,
        session: &mut Session,
        lowered: &Module,
        truth: &Outcome,
        p: &GeneratedProgram,
        config: &Configuration,
        base: &Row,
    ) -> (Row, Option<Mismatch>) {
        let mut row = Row {
            config_id: config.id(),
            label: config.label.clone(),
            passes: config.passes_arg(),
            stages: config.stages_arg(),
            ..base.clone()
        };
        let result = self.run_config(session, lowered, truth, p, config, &mut row);
        match &result {
            Ok(()) => row.verdict = "pass".into(),
            Err(m) => {
                row.verdict = "fail".into();
                row.kind = m.kind.name().into();
                row.oracle = m.oracle.name().into();
                row.detail = m.detail.clone();
            }
        }
        (row, result.err())
    }

    fn run_config(
        &self,
        session: &mut Session,
        lowered: &Module,
        truth: &Outcome,
        p: &GeneratedProgram,
        config: &Configuration,
        row: &mut Row,
    ) -> Result<(), Mismatch> {
        let options = config.compile_options(&self.faults);
        let compile_start = Instant::now();
        let (module, report) = caught(Oracle::Pipeline, || {
            let mut module = lowered.clone();
            driver::optimise(&mut module, &options, None).map(|report| (module, report))
        })?
        .map_err(|PipelineError::Verifier { where_, errors }| {
            Mismatch::new(Kind::VerifierFailure, Oracle::Pipeline, format!("{where_}: {errors}"))
        })?;
        row.passes_changed = report.runs.iter().map(|r| if r.changed { '1' } else { '0' }).collect();
        let ir_text = sysyc::ir::print_module(&module);
        row.ir_hash = hash_text(&ir_text);
        row.compile_us = compile_start.elapsed().as_micros() as u64;
        self.analyse_optimised(&mut session.analysis, row, &module);

        // Oracle 1: the IR interpreter, once per distinct IR.
        if !session.ir_verdicts.contains_key(&row.ir_hash) {
            let verdict = self.interpret(&module, p, truth);
            session.ir_verdicts.insert(row.ir_hash.clone(), verdict);
        }
        if let Some(Err(m)) = session.ir_verdicts.get(&row.ir_hash) {
            return Err(m.clone());
        }

        // The back end, once per (IR, stage set).
        let backend_key = format!("{}/{}", row.ir_hash, row.stages);
        row.ir_shared = session.asm.contains_key(&backend_key);
        if !row.ir_shared {
            let backend_start = Instant::now();
            let backend = config.backend_options(&self.faults);
            let asm = caught(Oracle::Backend, || sysyc::isa::arm::compile_module(&module, &backend)).and_then(|r| {
                r.map_err(|e| Mismatch::new(Kind::BackendError, Oracle::Backend, CompileError::Backend(e).to_string()))
            });
            row.compile_us += backend_start.elapsed().as_micros() as u64;
            let asm_hash = asm.as_ref().map(|text| hash_text(text)).map_err(Mismatch::clone);
            // Oracle 2: qemu, once per distinct assembly (the text is not kept).
            if let (Ok(text), Ok(hash)) = (&asm, &asm_hash) {
                row.asm_shared = session.native.contains_key(hash);
                if !row.asm_shared {
                    let result = self.run_native(text, &p.stdin, truth);
                    session.native.insert(hash.clone(), result);
                }
            }
            session.asm.insert(backend_key.clone(), asm_hash);
        }
        let asm_hash = session.asm[&backend_key].clone()?;
        // Shared IR means shared assembly, which ran when it was first produced.
        row.asm_shared |= row.ir_shared;
        row.asm_hash = asm_hash.clone();
        let native = &session.native[&asm_hash];
        row.insns = native.insns;
        row.program_insns = native.program_insns;
        row.cycles = native.cycles;
        row.class_counts = native.class_counts;
        row.run_us = native.run_us;
        native.verdict.clone().map(|_| ())
    }

    fn interpret(&self, module: &Module, p: &GeneratedProgram, truth: &Outcome) -> Result<(), Mismatch> {
        let run = caught(Oracle::IrInterp, || {
            let program = Program::new(module)
                .map_err(|e| Mismatch::new(Kind::VerifierFailure, Oracle::IrInterp, format!("IR interpreter refused the IR: {e}")))?;
            driver::interpret_with_time_limit(&program, &p.stdin, &InterpConfig::default(), self.timeout)
                .map_err(|e| Mismatch::new(Kind::Timeout, Oracle::IrInterp, e.to_string()))
        })??;
        match judge(truth, &run.outcome, Oracle::IrInterp) {
            Some(m) => Err(m),
            None => Ok(()),
        }
    }

    fn run_native(&self, asm: &str, stdin: &[u8], truth: &Outcome) -> NativeResult {
        let mut result = NativeResult {
            verdict: Ok(Outcome::default()),
            insns: None,
            program_insns: None,
            cycles: None,
            class_counts: None,
            run_us: 0,
        };
        let harness_error = |detail: String| Mismatch::new(Kind::HarnessError, Oracle::Qemu, detail);
        let dir = match tempfile::Builder::new().prefix("harness-campaign-").tempdir() {
            Ok(d) => d,
            Err(e) => {
                result.verdict = Err(harness_error(format!("cannot create a temporary directory: {e}")));
                return result;
            }
        };
        let exe = dir.path().join("prog");
        match driver::build_executable(asm, &exe) {
            Ok(()) => {}
            Err(CompileError::Toolchain(e @ ToolchainError::NotFound { .. })) => {
                result.verdict = Err(harness_error(e.to_string()));
                return result;
            }
            Err(e) => {
                result.verdict = Err(Mismatch::new(Kind::AsmLinkError, Oracle::Toolchain, e.to_string()));
                return result;
            }
        }
        let run = match self.runner.run(&exe, stdin, self.timeout) {
            Ok(run) => run,
            Err(e) => {
                result.verdict = Err(harness_error(e.to_string()));
                return result;
            }
        };
        result.run_us = run.wall.as_micros() as u64;
        if let Some(cost) = &run.cost {
            result.insns = Some(cost.counts.total);
            result.program_insns = Some(cost.counts.program.total());
            result.cycles = Some(cost.cycles.total);
            result.class_counts = Some(cost.counts.per_class.0);
        }
        result.verdict = match run.status {
            RunStatus::Exited(status) => {
                let outcome = Outcome { stdout: run.stdout, exit_status: Some(status), trap: None, steps: 0 };
                match judge(truth, &outcome, Oracle::Qemu) {
                    Some(m) => Err(m),
                    None => Ok(outcome),
                }
            }
            RunStatus::Signaled(_) => {
                let mut m = Mismatch::new(Kind::Crash, Oracle::Qemu, run.status.to_string());
                m.actual = Some(Outcome { stdout: run.stdout, ..Outcome::default() });
                Err(m)
            }
            RunStatus::TimedOut => Err(Mismatch::new(Kind::Timeout, Oracle::Qemu, format!("no exit within {:?}", self.timeout))),
        };
        result
    }
}

/// The row of a configuration that killed the process in an earlier session (not run again).
fn crashed_row(config: &Configuration, signal: &str, base: &Row) -> (Row, Option<Mismatch>) {
    let mismatch = Mismatch::new(
        Kind::CompilerCrash,
        Oracle::Pipeline,
        format!("the compiler killed the process ({signal}); not run again"),
    );
    let row = Row {
        config_id: config.id(),
        label: config.label.clone(),
        passes: config.passes_arg(),
        stages: config.stages_arg(),
        verdict: "fail".into(),
        kind: mismatch.kind.name().into(),
        oracle: mismatch.oracle.name().into(),
        detail: mismatch.detail.clone(),
        ..base.clone()
    };
    (row, Some(mismatch))
}

/// The per-program caches of the dedup. Only hashes and verdicts are kept, never modules or
/// assembly texts: a program checked under hundreds of configurations would otherwise hold
/// hundreds of them until its end (hundreds of MiB for a large program).
#[derive(Default)]
struct Session {
    /// IR hash → the IR interpreter's verdict.
    ir_verdicts: FxHashMap<String, Result<(), Mismatch>>,
    /// "IR hash/stages" → assembly hash, or the back end's failure.
    asm: FxHashMap<String, Result<String, Mismatch>>,
    /// Assembly hash → the qemu run.
    native: FxHashMap<String, NativeResult>,
    /// The data-flow agreement check so far, over the distinct optimised IRs seen.
    analysis: AnalysisTally,
}

/// The data-flow agreement check accumulated over a program's distinct optimised IRs, each
/// checked when it first appears (see [`Checker::analyse_optimised`]).
#[derive(Default)]
struct AnalysisTally {
    /// IR hashes already checked.
    seen: FxHashSet<String>,
    functions: u64,
    micros: u64,
    /// The first disagreement (checking stops there).
    mismatch: Option<Mismatch>,
}

/// The data-flow agreement check of one program (see [`super::analysis`]): the IR after
/// `mem2reg`, plus what [`Checker::analyse_optimised`] found on every distinct optimised IR.
/// Returns its row, its mismatch and the number of functions compared.
fn analysis_check(lowered: &Module, tally: &AnalysisTally, base: &Row) -> (Row, Option<Mismatch>, u64) {
    let start = Instant::now();
    let mut functions = tally.functions;
    let mut mismatch = tally.mismatch.clone();
    if mismatch.is_none() {
        let result = caught(Oracle::Analysis, || -> Result<u64, Mismatch> {
            let mut module = lowered.clone();
            let mem2reg = sysyc::passes::lookup("mem2reg").map(|p| vec![p]).unwrap_or_default();
            let options = driver::CompileOptions { pipeline: mem2reg, ..driver::CompileOptions::default() };
            if driver::optimise(&mut module, &options, None).is_ok() {
                return super::analysis::check_module(&module, "after mem2reg");
            }
            Ok(0)
        })
        .and_then(|r| r);
        match result {
            Ok(n) => functions += n,
            Err(m) => mismatch = Some(m),
        }
    }
    let row = Row {
        config_id: "dataflow".into(),
        label: "dataflow solvers agree".into(),
        passes: "mem2reg+configurations".into(),
        verdict: if mismatch.is_some() { "fail" } else { "pass" }.into(),
        kind: mismatch.as_ref().map(|m| m.kind.name().to_string()).unwrap_or_default(),
        oracle: mismatch.as_ref().map(|m| m.oracle.name().to_string()).unwrap_or_default(),
        detail: mismatch.as_ref().map(|m| m.detail.clone()).unwrap_or_default(),
        compile_us: tally.micros + start.elapsed().as_micros() as u64,
        ..base.clone()
    };
    (row, mismatch, functions)
}

/// The `--gcc` third opinion for one optimisation level.
fn gcc_check(engine: &GccEngine, name: &str, p: &GeneratedProgram, truth: &Outcome, base: &Row) -> (Row, Option<Mismatch>) {
    let case = Case { name: name.into(), path: "prog.sy".into(), source: p.source.clone(), stdin: p.stdin.clone() };
    let run = engine.run(&case);
    let mismatch = match run.result {
        Ok(outcome) => judge(truth, &outcome, Oracle::Gcc),
        Err(EngineFailure::Timeout) => Some(Mismatch::new(Kind::Timeout, Oracle::Gcc, "gcc's program timed out")),
        Err(EngineFailure::Crashed(s)) => Some(Mismatch::new(Kind::Crash, Oracle::Gcc, s)),
        Err(EngineFailure::Compile(e) | EngineFailure::Internal(e)) => Some(Mismatch::new(Kind::HarnessError, Oracle::Gcc, e)),
    };
    let row = Row {
        config_id: name.into(),
        label: name.into(),
        passes: engine.name(),
        verdict: if mismatch.is_some() { "fail" } else { "pass" }.into(),
        kind: mismatch.as_ref().map(|m| m.kind.name().to_string()).unwrap_or_default(),
        oracle: mismatch.as_ref().map(|m| m.oracle.name().to_string()).unwrap_or_default(),
        detail: mismatch.as_ref().map(|m| m.detail.clone()).unwrap_or_default(),
        run_us: run.elapsed.as_micros() as u64,
        ..base.clone()
    };
    (row, mismatch)
}

/// gcc engines at -O0 and -O2 with the campaign's time limit.
pub fn gcc_engines(timeout: Duration) -> Result<[GccEngine; 2], String> {
    let make = |level| GccEngine::new(&EngineConfig { opt_level: Some(level), timeout: Some(timeout), ..EngineConfig::default() });
    Ok([make(0)?, make(2)?])
}
