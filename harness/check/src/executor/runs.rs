//! The runs of one subject: linked and run under qemu-arm on the subject's runner thread while
//! the caller's thread compiles the next configuration (see "Overlap" in the executor's
//! documentation), or on the caller's thread when no runs may be in flight.
//!
//! One thread per subject rather than per run: at eight runs per program, `perf` put about 2%
//! of a campaign's CPU time in starting and ending threads (with the allocator's per-thread
//! caches they fill and flush). The thread takes one assembly text at a time and answers with
//! its run; up to `capacity` runs are in flight (one running, the others queued), so that a
//! caller whose compile outpaced a run goes on compiling.

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::Instant;

use super::dedup::{Dedup, Native};
use super::timing::{Phase, Timing};
use super::{Check, Settings, THREAD_PREFIX};
use crate::failure::{Expected, Failure, FailureKind, Stage, judge};
use crate::oracles::encoder;
use crate::qemu::Runner;
use crate::steps;

/// What a run needs of the subject and the settings.
pub(super) struct Context<'a> {
    pub runner: Option<&'a Runner>,
    pub settings: &'a Settings,
    pub sample_key: u64,
    pub stdin: &'a [u8],
    pub expected: &'a Expected,
}

impl Context<'_> {
    /// Links and runs one assembly text under qemu with the cost plugin, and judges it; for a
    /// sampled text, the encoder oracle first (a disagreement is the verdict: it may explain a
    /// wrong run).
    pub fn run(&self, asm: &str, asm_hash: &str) -> (Native, Timing) {
        let mut timing = Timing::default();
        let failed = |failure: Failure| Native { verdict: Err(failure), cost: None, wall: std::time::Duration::ZERO };
        let Some(runner) = self.runner else {
            return (failed(Failure::new(FailureKind::HarnessError, Stage::Qemu, "running the binary needs qemu-arm")), timing);
        };
        if encoder::sampled(self.sample_key, asm_hash, self.settings.encoder_sample)
            && let Err(failure) = timing.time(Phase::Selftest, || encoder::check(asm))
        {
            return (failed(failure), timing);
        }
        let start = Instant::now();
        let executed = steps::execute(asm, self.settings.assembler, self.stdin, runner, self.settings.limits.timeout);
        let native = match executed {
            Ok(execution) => {
                timing.add(Phase::Link, execution.link);
                timing.add(Phase::Qemu, start.elapsed().saturating_sub(execution.link));
                Native {
                    verdict: execution.run.outcome(Stage::Qemu).and_then(|o| judge(self.expected, &o, Stage::Qemu)),
                    cost: execution.run.cost.clone(),
                    wall: execution.run.wall,
                }
            }
            Err(failure) => {
                timing.add(Phase::Link, start.elapsed());
                failed(failure)
            }
        };
        (native, timing)
    }
}

/// A check waiting for a run, and its place among the checks.
pub(super) struct Waiting {
    pub planned: usize,
    pub check: Check,
}

/// A run in flight, and the checks waiting for it.
struct InFlight {
    asm_hash: String,
    waiting: Vec<Waiting>,
}

/// A run for the runner thread: the assembly text and its hash.
type RunJob = (String, String);

struct RunThread<'scope> {
    jobs: Sender<RunJob>,
    results: Receiver<(Native, Timing)>,
    handle: ScopedJoinHandle<'scope, ()>,
}

/// The runs of one subject (see the module documentation).
pub(super) struct Runs<'scope, 'a> {
    context: &'a Context<'a>,
    thread: Option<RunThread<'scope>>,
    in_flight: VecDeque<InFlight>,
    capacity: usize,
}

/// Fills a check's measurements from its run.
pub(super) fn finish(check: &mut Check, native: &Native) {
    check.cost = native.cost.clone();
    check.run = native.wall;
    check.verdict = native.verdict.clone();
}

/// Settles the checks waiting for a run that landed: the first one made the run (its link
/// counts in its compile time), the others share it.
fn land(flight: InFlight, ran: (Native, Timing), dedup: &mut Dedup, slots: &mut [Option<Check>], timing: &mut Timing) {
    let (native, run_timing) = ran;
    timing.merge(&run_timing);
    for (i, Waiting { planned, mut check }) in flight.waiting.into_iter().enumerate() {
        if i == 0 {
            check.compile += std::time::Duration::from_micros(run_timing.get(Phase::Link));
        }
        finish(&mut check, &native);
        slots[planned] = Some(check);
    }
    dedup.keep_run(flight.asm_hash, native);
}

impl<'scope, 'a: 'scope> Runs<'scope, 'a> {
    /// Starts the runner thread when `capacity` allows runs in flight (without a thread, runs
    /// are made on the caller's thread).
    pub fn start<'env>(scope: &'scope Scope<'scope, 'env>, context: &'a Context<'a>, capacity: usize) -> Runs<'scope, 'a>
    where
        'a: 'env,
    {
        let thread = (capacity > 0)
            .then(|| {
                let (jobs, queue) = channel::<RunJob>();
                let (answer, results) = channel();
                let serve = move || {
                    for (text, hash) in queue {
                        if answer.send(context.run(&text, &hash)).is_err() {
                            break;
                        }
                    }
                };
                let handle = std::thread::Builder::new().name(format!("{THREAD_PREFIX}-run")).spawn_scoped(scope, serve).ok()?;
                Some(RunThread { jobs, results, handle })
            })
            .flatten();
        Runs { context, thread, in_flight: VecDeque::new(), capacity }
    }

    /// Adds `waiting` to the run in flight of the same text, if there is one and runs are
    /// shared; otherwise gives it back.
    pub fn join(&mut self, asm_hash: &str, mut waiting: Waiting, shared: bool) -> Option<Waiting> {
        match self.in_flight.iter_mut().find(|f| f.asm_hash == asm_hash).filter(|_| shared) {
            Some(running) => {
                waiting.check.asm_shared = true;
                running.waiting.push(waiting);
                None
            }
            None => Some(waiting),
        }
    }

    /// Runs `text` for `waiting`: on the thread (after landing the oldest run when as many
    /// as allowed are in flight), or here.
    pub fn submit(&mut self, text: String, asm_hash: String, waiting: Waiting, dedup: &mut Dedup, slots: &mut [Option<Check>], timing: &mut Timing) {
        if self.in_flight.len() >= self.capacity {
            self.land_oldest(dedup, slots, timing);
        }
        let flight = InFlight { asm_hash: asm_hash.clone(), waiting: vec![waiting] };
        let unsent = match &self.thread {
            Some(thread) => thread.jobs.send((text, asm_hash)).err().map(|unsent| unsent.0),
            None => Some((text, asm_hash)),
        };
        match unsent {
            None => self.in_flight.push_back(flight),
            Some((text, asm_hash)) => {
                let ran = self.context.run(&text, &asm_hash);
                land(flight, ran, dedup, slots, timing);
            }
        }
    }

    /// Waits for the oldest run in flight (if any) and settles its checks.
    fn land_oldest(&mut self, dedup: &mut Dedup, slots: &mut [Option<Check>], timing: &mut Timing) {
        let Some(flight) = self.in_flight.pop_front() else { return };
        match self.thread.as_ref().and_then(|t| t.results.recv().ok()) {
            Some(ran) => land(flight, ran, dedup, slots, timing),
            None => {
                // The thread ended without answering: only a panic does that.
                self.end_thread();
                for Waiting { planned, mut check } in flight.waiting {
                    check.verdict = Err(Failure::new(FailureKind::HarnessError, Stage::Qemu, "the runner thread ended before the run"));
                    slots[planned] = Some(check);
                }
            }
        }
    }

    /// Lands every run in flight and ends the thread.
    pub fn finish(mut self, dedup: &mut Dedup, slots: &mut [Option<Check>], timing: &mut Timing) {
        while !self.in_flight.is_empty() {
            self.land_oldest(dedup, slots, timing);
        }
        self.end_thread();
    }

    /// Ends the thread: re-raises its panic on the caller's thread, where panics are caught.
    fn end_thread(&mut self) {
        if let Some(thread) = self.thread.take() {
            drop(thread.jobs);
            if let Err(panic) = thread.handle.join() {
                std::panic::resume_unwind(panic);
            }
        }
    }
}
