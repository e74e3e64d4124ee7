//! The check executor: a case and its configurations in, one typed [`Check`] per
//! configuration out. Every client makes its checks here — the campaign, triage (bisect,
//! reduce, regression cases), the engines of `conform`, `bench` and `gen-stats`, the speedup
//! report and the fuzz targets — so a failure is replayed by the code that found it; what
//! differs between them are [`Settings`].
//!
//! # Flow
//! The subject is lowered once. The configurations run in the order of
//! [`prefix::run_order`] (the checks come back in the given order), each through the
//! [`crate::steps`]: optimise (resumed from the longest pipeline prefix an earlier
//! configuration ran, see [`prefix`]) → IR interpreter → select → link → qemu-arm, each
//! outcome judged by the one judge ([`crate::failure::judge`]). A sample of the distinct
//! assembly texts is also assembled by GNU `as` and compared with the in-process encoding
//! ([`crate::oracles::encoder`]) before it runs; a disagreement is that check's failure.
//! Optionally the per-pass oracles watch every pass ([`EachPass`]: the IR judged after every
//! pass that changed it, the textual round trip), and the data-flow self-test checks the
//! subject once ([`Settings::dataflow`]).
//!
//! # Overlap
//! With [`Settings::runs_in_flight`] above zero, the link and qemu run of a configuration go
//! to the subject's runner thread (see [`runs`]) while the caller's thread optimises and
//! selects the next configuration, so the qemu child and the worker keep two cores busy
//! between them instead of taking turns; the data-flow self-test runs while the last runs
//! finish. A check waiting for a run is settled when it lands, in its place.
//!
//! # Caches
//! With [`Settings::caches`], pipeline prefixes are shared ([`prefix`]) and the steps after the
//! optimiser are deduplicated by the hashes of the optimised IR and of the assembly
//! ([`dedup`]); a check says what it shared (`ir_shared`, `asm_shared`). Without them every
//! configuration runs every step itself, through the same code: triage replays a campaign's
//! failure that way.

pub mod dedup;
pub mod each_pass;
pub mod prefix;
mod runs;
pub mod timing;
pub mod watch;

use std::sync::Arc;
use std::time::{Duration, Instant};

use sysyc::config::Config;
use sysyc::ir::Module;
use sysyc::passes::OptLevel;
use sysyc::passes::manager::PipelineState;
use sysyc::runtime::library::Assembler;

use crate::failure::{Failure, FailureKind, Stage, judge};
use crate::oracles::dataflow;
use crate::qemu::{RunCost, Runner};
use crate::steps;
use crate::subject::{Case, Limits};
use dedup::Dedup;
use each_pass::{Budget, PassFailure};
use prefix::{Optimised, PrefixCache};
use runs::Runs;
use timing::{Phase, Timing};
use watch::{ANALYSIS, Watch};

/// Prefix of the names of the threads that run checks (the campaign's workers and the
/// executor's runner threads): their panics are caught and reported by the step they happen
/// in ([`steps::quiet_panics`]).
pub const THREAD_PREFIX: &str = "check-worker";

/// Oracles that watch every pass of a configuration's pipeline (which then runs whole, not
/// from a shared prefix).
#[derive(Clone, Copy, Debug, Default)]
pub struct EachPass {
    /// Judge the IR interpreter's run after lowering and after every pass that changed the IR
    /// ([`each_pass`]): a failure names its pass ([`Check::pass_failure`]).
    pub judge: Option<Budget>,
    /// Print, parse and print the IR after lowering and after every pass
    /// ([`each_pass::roundtrip`]).
    pub roundtrip: bool,
}

/// How far a check goes after the optimiser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Through {
    /// The optimised IR (and its interpretation, when asked for).
    Ir,
    /// The assembly text too (its hash, and the text with [`Settings::keep_outputs`]).
    Assembly,
    /// The executable run under qemu-arm and judged (needs a runner).
    Binary,
}

/// How the executor checks (see the module documentation).
#[derive(Clone, Debug)]
pub struct Settings {
    pub limits: Limits,
    pub assembler: Assembler,
    /// Judge the IR interpreter's run of the optimised IR.
    pub interpret: bool,
    pub through: Through,
    pub caches: bool,
    /// Runs of one subject in flight on its runner thread, running or queued (0: runs on the
    /// caller's thread, one after another).
    pub runs_in_flight: usize,
    /// One distinct assembly text in this many is compared with GNU as (0: none).
    pub encoder_sample: u64,
    pub each_pass: EachPass,
    /// The data-flow solvers' agreement on the subject, once ([`dataflow`]).
    pub dataflow: bool,
    /// Keep each configuration's pipeline state (module and pass report) and its assembly
    /// text in its check.
    pub keep_outputs: bool,
}

impl Settings {
    /// One configuration at a time, nothing shared, nothing overlapped: the IR interpreter
    /// and (when `binary`) the binary, judged.
    pub fn plain(limits: Limits, binary: bool) -> Settings {
        Settings {
            limits,
            assembler: Assembler::default(),
            interpret: true,
            through: if binary { Through::Binary } else { Through::Ir },
            caches: false,
            runs_in_flight: 0,
            encoder_sample: 0,
            each_pass: EachPass::default(),
            dataflow: false,
            keep_outputs: false,
        }
    }
}

/// One configuration's check.
#[derive(Clone, Debug)]
pub struct Check {
    pub verdict: Result<(), Failure>,
    /// Hash of the optimised IR (empty when the pipeline did not finish).
    pub ir_hash: String,
    /// Per pipeline position: `1` when the pass changed the module.
    pub passes_changed: String,
    /// Hash of the assembly (empty when none was selected).
    pub asm_hash: String,
    /// The back end was skipped: an earlier configuration had produced the same IR.
    pub ir_shared: bool,
    /// The qemu run was skipped: an earlier configuration had produced the same assembly.
    pub asm_shared: bool,
    /// The pipeline (also of a prefix an earlier configuration ran), back end and link, when
    /// it ran them; not the qemu run.
    pub compile: Duration,
    /// The qemu run's executed instructions and cycles (measured runs; shared runs repeat them).
    pub cost: Option<RunCost>,
    /// The qemu run's wall time (shared runs repeat it).
    pub run: Duration,
    /// With [`EachPass::judge`]: the first step whose IR was wrong.
    pub pass_failure: Option<PassFailure>,
    /// With [`Settings::keep_outputs`]: the pipeline's state at its end, and the assembly
    /// text when it was selected for this check (not shared).
    pub optimised: Option<Arc<PipelineState>>,
    pub assembly: Option<String>,
}

impl Check {
    fn new(verdict: Result<(), Failure>) -> Check {
        Check {
            verdict,
            ir_hash: String::new(),
            passes_changed: String::new(),
            asm_hash: String::new(),
            ir_shared: false,
            asm_shared: false,
            compile: Duration::ZERO,
            cost: None,
            run: Duration::ZERO,
            pass_failure: None,
            optimised: None,
            assembly: None,
        }
    }
}

impl Default for Check {
    /// A passing check that has measured nothing yet.
    fn default() -> Check {
        Check::new(Ok(()))
    }
}

/// A self-test oracle's result on the subject.
#[derive(Clone, Debug)]
pub struct SelfTest {
    pub oracle: &'static str,
    pub failure: Option<Failure>,
    pub detail: String,
    /// Functions (or other units) it checked.
    pub checked: u64,
    pub time: Duration,
}

/// What checking one subject produced.
pub struct Checked {
    /// One per configuration, in the given order.
    pub checks: Vec<Check>,
    pub selftests: Vec<SelfTest>,
    pub timing: Timing,
}

/// The check executor (see the module documentation).
pub struct Executor {
    pub settings: Settings,
    runner: Option<Runner>,
}

impl Executor {
    /// An executor that runs binaries with `runner` (none: checks through the binary fail with a
    /// harness error).
    pub fn new(settings: Settings, runner: Option<Runner>) -> Executor {
        Executor { settings, runner }
    }

    /// Checks `case` under `configs`. `sample_key` (a generated program's seed) decides with
    /// each text's hash which texts the encoder oracle compares. `Err` when the subject does
    /// not lower: no configuration can be checked.
    pub fn check(&self, case: &Case, configs: &[Config], sample_key: u64, watch: &dyn Watch) -> Result<Checked, Failure> {
        let mut timing = Timing::default();
        let lowered = timing.time(Phase::Optimise, || steps::lower(&case.subject))?;
        let order = prefix::run_order(configs);
        let in_order: Vec<&Config> = order.iter().map(|&i| &configs[i]).collect();
        let cached = self.settings.caches && !self.watches_each_pass();
        let mut prefixes = cached.then(|| timing.time(Phase::Optimise, || PrefixCache::new(&lowered, &in_order)));
        let mut dedup = Dedup::new(self.settings.caches);
        let mut slots: Vec<Option<Check>> = vec![None; configs.len()];
        let context = runs::Context {
            runner: self.runner.as_ref(),
            settings: &self.settings,
            sample_key,
            stdin: &case.subject.stdin,
            expected: &case.expected,
        };
        let mut selftests = Vec::new();
        std::thread::scope(|scope| {
            let mut runs = Runs::start(scope, &context, self.settings.runs_in_flight);
            for (run_index, (&planned, config)) in order.iter().zip(&in_order).enumerate() {
                watch.beat();
                let id = config.id();
                let before_run = match watch.taken_down(&id, Stage::Pipeline) {
                    Some(failure) => Err(Box::new(Check::new(Err(failure)))),
                    None => {
                        watch.enter(&id);
                        self.compile(&mut dedup, prefixes.as_mut(), run_index, &lowered, case, config, &mut timing)
                    }
                };
                let (mut check, selected) = match before_run {
                    Ok(compiled) => compiled,
                    Err(check) => {
                        slots[planned] = Some(*check);
                        continue;
                    }
                };
                let Some((asm_hash, text)) = selected else {
                    slots[planned] = Some(check);
                    continue;
                };
                check.asm_hash = asm_hash.clone();
                if self.settings.through != Through::Binary {
                    check.assembly = text.filter(|_| self.settings.keep_outputs);
                    slots[planned] = Some(check);
                    continue;
                }
                if let Some(native) = dedup.run_of(&asm_hash) {
                    check.asm_shared = true;
                    runs::finish(&mut check, native);
                    slots[planned] = Some(check);
                    continue;
                }
                let waiting = runs::Waiting { planned, check };
                let Some(waiting) = runs.join(&asm_hash, waiting, dedup.enabled()) else { continue };
                match text {
                    Some(text) => runs.submit(text, asm_hash, waiting, &mut dedup, &mut slots, &mut timing),
                    None => {
                        // Every text selected before was run, or its run is in flight.
                        let lost = Failure::new(FailureKind::HarnessError, Stage::Qemu, format!("the run of assembly {asm_hash} was lost"));
                        let mut check = waiting.check;
                        check.verdict = Err(lost);
                        slots[planned] = Some(check);
                    }
                }
            }
            // The solvers' check while the last runs are in flight, so that their qemu runs
            // and this thread's check share the wait.
            if self.settings.dataflow {
                selftests.push(self.dataflow(&lowered, &dedup, watch));
            }
            runs.finish(&mut dedup, &mut slots, &mut timing);
        });
        drop(prefixes);
        if self.settings.through == Through::Binary {
            // The encoder oracle ran inside the checks (its disagreements are their failures);
            // its line says how many distinct texts it compared, and in how long.
            let sampled = |hash: &&String| crate::oracles::encoder::sampled(sample_key, hash, self.settings.encoder_sample);
            let checked = dedup.native.keys().filter(sampled).count() as u64;
            let time = timing.duration(Phase::Selftest);
            selftests.insert(0, SelfTest { oracle: "encoder", failure: None, detail: String::new(), checked, time });
        }
        for test in selftests.iter().filter(|t| t.oracle == "dataflow") {
            timing.add(Phase::Selftest, test.time);
        }
        watch.leave();
        Ok(Checked { checks: slots.into_iter().flatten().collect(), selftests, timing })
    }

    fn watches_each_pass(&self) -> bool {
        self.settings.each_pass.judge.is_some() || self.settings.each_pass.roundtrip
    }

    /// One configuration through the steps up to its qemu run: the check so far, with the
    /// assembly's hash (and its text when it was selected just now) when it is to run; `Err`
    /// with the finished check when it failed before.
    #[allow(clippy::too_many_arguments)]
    fn compile(
        &self,
        dedup: &mut Dedup,
        prefixes: Option<&mut PrefixCache>,
        run_index: usize,
        lowered: &Module,
        case: &Case,
        config: &Config,
        timing: &mut Timing,
    ) -> Result<(Check, Option<(String, Option<String>)>), Box<Check>> {
        let failed = |check: Check, failure: Failure| Box::new(Check { verdict: Err(failure), ..check });
        let mut check = Check::new(Ok(()));
        let optimised = timing.time(Phase::Optimise, || {
            if let Some(prefixes) = prefixes {
                prefixes.optimise(run_index, config)
            } else if self.watches_each_pass() {
                each_pass::optimise(lowered, case, config, self.settings.each_pass).map_err(|found| {
                    let failure = found.failure.clone();
                    check.pass_failure = Some(*found);
                    failure
                })
            } else {
                prefix::uncached(lowered, config)
            }
        });
        let optimised = match optimised {
            Ok(optimised) => optimised,
            Err(failure) => return Err(failed(check, failure)),
        };
        self.note_level(dedup, config, &optimised);
        let module = optimised.module();
        check.passes_changed = optimised.changed_bits();
        check.ir_hash = optimised.ir_hash.clone();
        // The whole pipeline's time, also of the prefix that ran for an earlier configuration.
        check.compile = optimised.pipeline_time();
        if self.settings.keep_outputs {
            check.optimised = Some(Arc::clone(&optimised.state));
        }
        if self.settings.interpret && self.settings.each_pass.judge.is_none() {
            let (stdin, timeout) = (&case.subject.stdin, self.settings.limits.timeout);
            let verdict = dedup.ir_verdict(&check.ir_hash, || {
                let outcome = timing.time(Phase::Interpret, || steps::interpret(module, stdin, timeout))?;
                judge(&case.expected, &outcome, Stage::IrInterp)
            });
            if let Err(failure) = verdict {
                return Err(failed(check, failure));
            }
        }
        if self.settings.through == Through::Ir {
            return Ok((check, None));
        }
        let key = format!("{}/{}", check.ir_hash, config.stages_spec());
        let start = Instant::now();
        let (selected, ir_shared) = dedup.assembly(&key, || steps::select(module, config));
        check.ir_shared = ir_shared;
        if !ir_shared {
            let selecting = start.elapsed();
            timing.add(Phase::Backend, selecting);
            check.compile += selecting;
        }
        match selected {
            Ok(selected) => Ok((check, Some(selected))),
            Err(failure) => Err(failed(check, failure)),
        }
    }

    /// Keeps the optimised IR of a configuration whose pipeline is exactly `-O1`'s or
    /// `-O2`'s, for the data-flow self-test.
    fn note_level(&self, dedup: &mut Dedup, config: &Config, optimised: &Optimised) {
        if !self.settings.dataflow {
            return;
        }
        let names = config.pass_names();
        for level in [OptLevel::O1, OptLevel::O2] {
            if !dedup.levels.iter().any(|(l, _)| *l == level) && names == Config::level(level).pass_names() {
                dedup.levels.push((level, Arc::clone(&optimised.state)));
            }
        }
    }

    /// The data-flow solvers' agreement check of the subject. The solvers run compiler code
    /// too: watched as their own step, and skipped after they took a process down.
    fn dataflow(&self, lowered: &Module, dedup: &Dedup, watch: &dyn Watch) -> SelfTest {
        let oracle = "dataflow";
        if let Some(failure) = watch.taken_down(ANALYSIS, Stage::Analysis) {
            return SelfTest { oracle, detail: failure.detail.clone(), failure: Some(failure), checked: 0, time: Duration::ZERO };
        }
        watch.enter(ANALYSIS);
        let start = Instant::now();
        let optimised = |level: OptLevel| dedup.levels.iter().find(|(l, _)| *l == level).map(|(_, state)| state.module());
        let result = dataflow::check_program(lowered, &optimised);
        let compared = result.as_ref().copied().unwrap_or_default();
        let detail = match &result {
            Err(f) => f.detail.clone(),
            Ok(c) if c.skipped > 0 => format!("{} functions skipped: too irreducible for the region solver", c.skipped),
            Ok(_) => String::new(),
        };
        SelfTest { oracle, failure: result.err(), detail, checked: compared.functions, time: start.elapsed() }
    }

    /// Links and runs one assembly text of `case` (selected by a check made with
    /// [`Through::Assembly`]) and judges it, exactly as a check's run; `sample_key` as for
    /// [`Executor::check`].
    pub fn run_assembly(&self, case: &Case, asm: &str, sample_key: u64) -> Check {
        let context = runs::Context { runner: self.runner.as_ref(), settings: &self.settings, sample_key, stdin: &case.subject.stdin, expected: &case.expected };
        let asm_hash = dedup::hash_text(asm);
        let (native, _) = context.run(asm, &asm_hash);
        let mut check = Check { asm_hash, ..Check::new(Ok(())) };
        runs::finish(&mut check, &native);
        check
    }
}
