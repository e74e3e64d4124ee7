//! `harness campaign`: the differential testing campaign, the main job of the harness.
//!
//! Generate programs (swarm configurations, one seed per program derived from the campaign
//! seed, see [`program_seed`]), check each under many compiler configurations against the
//! reference interpreter, record every check, save every failure, report.
//!
//! Modules: [`config`] (configurations and strategies), [`check`] (one program under its
//! configurations through the stages of [`sysy_check::steps`], with a dedup cache by IR and
//! assembly hash), [`records`] (`runs.csv`, `programs.csv` and `selftests.csv`, append-only,
//! with resume), [`failures`] (the failure corpus),
//! [`autotriage`] (triage of each new failure, through the [`FailureHook`]), [`summary`]
//! (`summary.md`, `stats.csv`), [`reproduce`] (the opening of `summary.md`: commands to
//! rerun and resume, settings, cost totals), [`nightly`] (distinct failures, comparison with
//! the previous night, `failures.csv`), [`merge`] (`harness merge`: shard results into one),
//! [`history`] (`harness report history`: nights side by side), [`guide`] (the
//! coverage-guided swarm: `feedback.csv`, `weights.csv`),
//! [`progress`] (the progress line), [`isolate`] (the supervisor that survives compiler
//! crashes, and the journal it reads), [`memory_log`] (`memory.csv`: RSS and live heap after
//! every program), [`cli`].
//!
//! # Shards
//! `--shard i/n` (0 ≤ i < n) checks the program numbers `p` with `p mod n = i` only: n
//! shards started with the same seed and options cover disjoint programs whose union is
//! exactly what one unsharded campaign checks, and program `p` is generated from
//! [`program_seed`]`(seed, p)` whichever shard checks it. Rows keep the global program number, so
//! `harness merge` only concatenates and sorts. Each shard is an ordinary campaign
//! directory (resumable on its own). With the coverage-guided swarm ([`guide`]) each shard
//! guides its own programs from its own feedback, so from program `2 × batch` of a shard on
//! its programs differ from those an unsharded campaign would check.
//!
//! # Running
//! Programs are checked in parallel on a rayon pool of `jobs` threads; one program's
//! configurations run one after another on its thread (they share the dedup caches). Workers
//! take program numbers in order until the time budget or the program count is reached or
//! `stop` is set (Ctrl-C); a program that is started is finished and recorded, then the
//! summary is written. Workers get [`WORKER_STACK`] of stack, so deep but legitimate
//! recursion in the compiler does not overflow; a crash that does kill the process is the
//! supervisor's business ([`isolate`]). A campaign directory holds `campaign.json` (the options, so
//! `--resume` checks the same programs under the same configurations), `state.json` (the
//! time used so far, so `--resume` runs what is left of the limit: [`State`]), the records, the
//! report, and the failure corpus (`failures/`).

pub mod autotriage;
pub mod check;
pub mod config;
pub mod failures;
pub mod guide;
pub mod history;
pub mod isolate;
pub mod memory_log;
pub mod merge;
pub mod nightly;
pub mod progress;
pub mod records;
pub mod reproduce;
pub mod summary;

use anyhow::{Context, Result};
use check::Checker;
use config::{Plan, Planned, Strategy};
use failures::SavedFailure;
use progress::Progress;
use rayon::prelude::*;
use records::Records;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use sysyc::faults::FaultSet;
use sysyc::runtime::library::Assembler;

use sysy_check::failure::{Failure, FailureKind, Stage};
use crate::sources::{corpus, mutated};
use crate::sources::generated::generate;
use sysy_generator::GenConfig;
use sysy_check::qemu::{CostMode, Runner};
use sysy_check::executor::{Executor, THREAD_PREFIX};
use sysy_check::subject::Limits;

/// What to run; saved as `campaign.json` so that `--resume` repeats it exactly.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CampaignOptions {
    pub campaign_id: String,
    /// Program `i` is generated from [`program_seed`]`(seed, i)`.
    pub seed: u64,
    /// Stop after this many programs (counting those of earlier sessions).
    pub programs: Option<u64>,
    /// Stop after this long in all, counting earlier sessions ([`State::elapsed_secs`]):
    /// a resumed campaign runs what is left.
    pub seconds: Option<f64>,
    pub strategies: Vec<String>,
    pub over: Vec<String>,
    pub random_per_program: usize,
    pub gcc: bool,
    /// Limit of each run (truth, IR interpreter, qemu).
    pub timeout_secs: f64,
    /// Swarm generator configurations (else the default configuration).
    pub swarm: bool,
    /// Injected faults (builds with the `fault-injection` feature).
    pub faults: Vec<String>,
    /// Where failures go (absolute or relative to the working directory).
    pub failures_dir: PathBuf,
    /// This campaign checks one shard of the program numbers.
    #[serde(default)]
    pub shard: Option<Shard>,
    /// A previous night's campaign (or merged) directory to compare with.
    #[serde(default)]
    pub previous: Option<PathBuf>,
    /// Build executables with GNU as, the gcc driver and glibc instead of in-process
    /// (`--assembler=gnu`).
    #[serde(default)]
    pub gnu_assembler: bool,
    /// Compare the in-process encoding with GNU as on one assembly text in this many (0:
    /// never; see [`sysy_check::oracles::encoder`]).
    #[serde(default = "default_encoder_sample")]
    pub encoder_sample: u64,
    /// Coverage-guided swarm weights ([`guide`]); `None`: the plain swarm.
    #[serde(default)]
    pub guide: Option<guide::GuideOptions>,
    /// Check the programs of this directory instead of generating them: program `i` is its
    /// `i`-th `.sy` file in name order, its stdin the `.in` file of the same stem ([`corpus`]).
    #[serde(default)]
    pub corpus: Option<PathBuf>,
    /// Mix variants of the programs of these seed directories with the generated programs
    /// ([`crate::sources::mutated`]; not with `corpus`).
    #[serde(default)]
    pub seeds: Option<crate::sources::mutated::SeedOptions>,
    /// Start no new program once this many programs have failed (those in flight are
    /// finished): a search for the first programs that show a bug, independent of how many
    /// programs of a seed that takes.
    #[serde(default)]
    pub stop_after_failing: Option<u64>,
    /// The watchdog's step limit (`--step-limit`; `None`: the default, see
    /// [`isolate::default_step_limit`]).
    #[serde(default)]
    pub step_limit_secs: Option<f64>,
    /// The campaign process's data limit in GiB (`--memory-limit`; `None`: the default, see
    /// [`isolate::default_memory_limit`]).
    #[serde(default)]
    pub memory_limit_gib: Option<f64>,
}

/// One assembly text in this many is also assembled by GNU as and compared.
pub const DEFAULT_ENCODER_SAMPLE: u64 = 20;

fn default_encoder_sample() -> u64 {
    DEFAULT_ENCODER_SAMPLE
}

/// Shard `index` of `count` (see the module documentation).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// Parses `i/n` with `0 <= i < n`.
    pub fn parse(spec: &str) -> Result<Shard, String> {
        let bad = || format!("invalid shard `{spec}`: expected i/n with 0 <= i < n (e.g. 0/4)");
        let (i, n) = spec.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    pub fn contains(self, program: u64) -> bool {
        program % self.count == self.index
    }

    /// The `k`-th program number of the shard (`None` on overflow).
    pub fn nth(self, k: u64) -> Option<u64> {
        k.checked_mul(self.count)?.checked_add(self.index)
    }
}

impl CampaignOptions {
    /// The campaign process's data limit in bytes (see [`isolate`]).
    pub fn memory_limit(&self) -> u64 {
        match self.memory_limit_gib {
            Some(gib) => (gib * (1u64 << 30) as f64) as u64,
            None => isolate::default_memory_limit(),
        }
    }

    /// A compiler step running longer than this is a hang (see [`isolate`]).
    pub fn step_limit(&self) -> Duration {
        self.step_limit_secs
            .map(Duration::from_secs_f64)
            .unwrap_or_else(|| isolate::default_step_limit(Duration::from_secs_f64(self.timeout_secs)))
    }

    fn shard_or_whole(&self) -> Shard {
        self.shard.unwrap_or(Shard { index: 0, count: 1 })
    }
}

/// `state.json`: what the sessions of a campaign have used of its time budget.
///
/// Rewritten (through a temporary file and a rename) every [`STATE_PERIOD`] while a
/// session runs and at its end, so a session killed by SIGKILL loses at most one period:
/// the session after it runs `seconds − elapsed_secs`, and the campaign's total wall-clock
/// time stays within its limit plus that period plus the programs in flight at the kill
/// (which are finished past the deadline and then checked again).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct State {
    /// Wall-clock seconds of every session so far.
    pub elapsed_secs: f64,
    /// Sessions started (the first run and each resume, including supervisor restarts).
    pub sessions: u64,
    /// The source revisions ([`reproduce::REVISION`]) the sessions ran, in order, each once.
    #[serde(default)]
    pub revisions: Vec<String>,
}

/// How often a running session saves [`State`].
pub const STATE_PERIOD: Duration = Duration::from_secs(1);

fn state_path(dir: &Path) -> PathBuf {
    dir.join("state.json")
}

impl State {
    /// The state of the campaign in `dir` (a campaign without one has used nothing).
    pub fn read(dir: &Path) -> Result<State> {
        let path = state_path(dir);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Saves the state atomically (a kill leaves the old or the new file, never half).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = state_path(dir);
        let tmp = tempfile::NamedTempFile::new_in(dir).with_context(|| format!("creating a temporary file in {}", dir.display()))?;
        std::fs::write(tmp.path(), serde_json::to_string_pretty(self)?).with_context(|| format!("writing {}", path.display()))?;
        tmp.persist(&path).map_err(|e| e.error).with_context(|| format!("replacing {}", path.display()))?;
        Ok(())
    }

    /// Seconds left of a `limit` after the sessions so far.
    pub fn remaining(&self, limit: f64) -> f64 {
        (limit - self.elapsed_secs).max(0.0)
    }
}

/// Called once per new failure directory (the hook for automatic triage).
pub type FailureHook<'a> = dyn Fn(&SavedFailure) + Sync + 'a;

/// The outcome of a session.
#[derive(Clone, Debug)]
pub struct Report {
    pub dir: PathBuf,
    pub stats: summary::Stats,
    pub session: summary::Session,
}

/// Stack of each worker thread: the compiler's recursive passes get room for deep programs.
pub const WORKER_STACK: usize = 256 << 20;

/// Creates the campaign directory `dir` with empty records and `campaign.json`.
pub fn prepare(dir: &Path, options: &CampaignOptions) -> Result<Records> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let records = Records::create(dir)?;
    save_options(dir, options)?;
    Ok(records)
}

/// Writes `campaign.json` (a new campaign, or a resume that changed the limits).
pub fn save_options(dir: &Path, options: &CampaignOptions) -> Result<()> {
    let json = serde_json::to_string_pretty(options)?;
    let path = dir.join("campaign.json");
    let tmp = tempfile::NamedTempFile::new_in(dir).with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    std::fs::write(tmp.path(), json).with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(&path).map_err(|e| e.error).with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

/// Writes `campaign.json` and runs a new campaign in `dir`.
pub fn start(dir: &Path, options: &CampaignOptions, jobs: usize, stop: &AtomicBool, hook: Option<&FailureHook<'_>>) -> Result<Report> {
    let records = prepare(dir, options)?;
    run(dir, options, jobs, records, BTreeSet::new(), stop, hook)
}

/// Reads the options of the campaign in `dir`.
pub fn load_options(dir: &Path) -> Result<CampaignOptions> {
    let path = dir.join("campaign.json");
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Continues the campaign in `dir` (see [`records`] for what survives a kill).
pub fn resume(dir: &Path, options: &CampaignOptions, jobs: usize, stop: &AtomicBool, hook: Option<&FailureHook<'_>>) -> Result<Report> {
    let (records, done) = Records::resume(dir)?;
    run(dir, options, jobs, records, done, stop, hook)
}

fn run(
    dir: &Path,
    options: &CampaignOptions,
    jobs: usize,
    records: Records,
    done: BTreeSet<u64>,
    stop: &AtomicBool,
    hook: Option<&FailureHook<'_>>,
) -> Result<Report> {
    let strategies = Strategy::parse_list(&options.strategies.join(",")).map_err(anyhow::Error::msg)?;
    let plan = Plan::new(&strategies, &options.over, options.random_per_program).map_err(anyhow::Error::msg)?;
    let faults = FaultSet::parse(&options.faults.join(",")).map_err(anyhow::Error::msg)?;
    let limits = Limits::GENERATED.with_timeout(Some(options.timeout_secs)).map_err(anyhow::Error::msg)?;
    let limits_timeout = limits.timeout;
    let assembler = if options.gnu_assembler { Assembler::Gnu } else { Assembler::InProcess };
    let runner = Runner::new(CostMode::Measure).context("qemu-arm with the cost plugin")?;
    let checker = Checker {
        gcc: if options.gcc { Some(check::gcc_engines(&limits).map_err(anyhow::Error::msg)?) } else { None },
        executor: Executor::new(Checker::settings(limits, assembler, options.encoder_sample), Some(runner)),
        faults: faults.clone(),
        journal: Some(isolate::Journal::open(dir)?),
        crashed: isolate::Crashed::read(dir)?,
    };
    sysyc::toolchain::arm_gcc().context("the ARM cross toolchain")?;
    sysy_check::steps::quiet_panics(THREAD_PREFIX);

    let shard = options.shard_or_whole();
    let guided = options.guide.clone().filter(|_| options.swarm);
    let guide = guide::Guide::open(dir, guided, shard, &done)?;
    let remaining =
        options.programs.map(|n| (0..n).filter(|&i| shard.contains(i) && !done.contains(&i)).count() as u64);
    let progress = Progress::new(remaining);
    let before = State::read(dir)?;
    let deadline = options.seconds.map(|s| Instant::now() + Duration::from_secs_f64(before.remaining(s)));
    let mut revisions = before.revisions.clone();
    if !revisions.iter().any(|r| r == reproduce::REVISION) {
        revisions.push(reproduce::REVISION.to_string());
    }
    let session_state = |elapsed: Duration| State {
        elapsed_secs: before.elapsed_secs + elapsed.as_secs_f64(),
        sessions: before.sessions + 1,
        revisions: revisions.clone(),
    };
    session_state(Duration::ZERO).write(dir)?;
    let session_start = Instant::now();
    let session_over = AtomicBool::new(false);
    // Failing programs so far, earlier sessions included (for `stop_after_failing`).
    let mut failing_before = 0;
    records::for_each_program(dir, |p| failing_before += u64::from(p.failures > 0))?;
    let mut limit = options.programs.unwrap_or(u64::MAX);
    if let Some(corpus) = &options.corpus {
        limit = limit.min(corpus::len(corpus)?);
    }
    let mutated = match (&options.seeds, &options.corpus) {
        (Some(seeds), None) => {
            let positions = mutated::Shard { index: shard.index, count: shard.count };
            Some(mutated::Mutated::open(dir, seeds, (options.seed, program_seed), positions, limits_timeout, &done)?)
        },
        _ => None,
    };
    let workers = Workers {
        checker,
        plan,
        options,
        guide,
        mutated,
        records: Mutex::new(records),
        memory: Mutex::new(memory_log::MemoryLog::open(dir)?),
        failing: AtomicU64::new(failing_before),
        hook,
        progress,
    };
    // The shard's program numbers in order, skipping finished ones, until a limit or a stop.
    let mut next = 0;
    let indices = std::iter::from_fn(|| {
        loop {
            if stop.load(Ordering::SeqCst) || deadline.is_some_and(|d| Instant::now() >= d) || workers.enough_failures() {
                return None;
            }
            let i = shard.nth(next)?;
            next += 1;
            if i >= limit {
                return None;
            }
            if !done.contains(&i) {
                return Some(i);
            }
        }
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .thread_name(|i| format!("{THREAD_PREFIX}-{i}"))
        .stack_size(WORKER_STACK)
        .build()
        .context("starting the worker threads")?;
    let failure_dirs = std::thread::scope(|scope| -> Result<Vec<String>> {
        // Saves the time used so far every period, so that a kill costs at most one period.
        let heartbeat = scope.spawn(|| {
            while !session_over.load(Ordering::SeqCst) {
                std::thread::park_timeout(STATE_PERIOD);
                // Best effort: a full disk must not stop the campaign (the end writes again).
                let _ = session_state(session_start.elapsed()).write(dir);
            }
        });
        // The first error stops the session: no new program starts, those in flight finish.
        let checked = pool.install(|| {
            indices
                .par_bridge()
                .map(|index| {
                    workers.check_one(index).inspect_err(|_| {
                        stop.store(true, Ordering::SeqCst);
                        workers.guide.abort();
                        if let Some(m) = &workers.mutated {
                            m.abort();
                        }
                    })
                })
                .try_reduce(Vec::new, |mut all, dirs| {
                    all.extend(dirs);
                    Ok(all)
                })
        });
        session_over.store(true, Ordering::SeqCst);
        heartbeat.thread().unpark();
        let _ = heartbeat.join();
        session_state(session_start.elapsed()).write(dir)?;
        checked
    })?;
    let Workers { guide, progress, .. } = workers;
    progress.finish();
    let weights = guide::weights_path(dir);
    std::fs::write(&weights, guide.weights_csv()?).with_context(|| format!("writing {}", weights.display()))?;
    let mut qemu_runs = 0;
    let summary::Totals { stats, costs, programs_reached } = summary::Totals::read(dir, |r| {
        qemu_runs += u64::from(!done.contains(&r.program) && !r.asm_hash.is_empty() && !r.asm_shared);
    })?;
    let session = summary::Session {
        campaign_id: options.campaign_id.clone(),
        seconds: progress.elapsed().as_secs_f64(),
        checks: progress.checks(),
        programs: progress.programs(),
        jobs,
        interrupted: stop.load(Ordering::SeqCst),
        failure_dirs,
        qemu_runs,
    };
    let failure_dirs = autotriage::failure_dirs(&options.failures_dir, &options.campaign_id);
    let opening = reproduce::section(dir, options, &State::read(dir)?, &costs, programs_reached);
    write_report(dir, &stats, &session, &failure_dirs, options.previous.as_deref(), &opening)?;
    Ok(Report { dir: dir.to_path_buf(), stats, session })
}

/// Writes `stats.csv`, `failures.csv` and `summary.md` (with `opening`, the
/// [`reproduce`] section, under its title, and the nightly section) into `dir`.
pub fn write_report(
    dir: &Path,
    stats: &summary::Stats,
    session: &summary::Session,
    failure_dirs: &[PathBuf],
    previous: Option<&Path>,
    opening: &str,
) -> Result<()> {
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
    };
    write("stats.csv", &summary::stats_csv(stats, session))?;
    let distinct = nightly::distinct(failure_dirs);
    write("failures.csv", &nightly::failures_csv(&distinct)?)?;
    let current = nightly::read_stats(dir);
    let mut md = reproduce::insert_after_title(&summary::summary_md(stats, session), opening);
    md.push_str(&nightly::section(&distinct, &current, previous)?);
    md.push_str(&memory_log::section(&memory_log::read(dir)));
    md.push_str(&guide::section(dir));
    write("summary.md", &md)
}

/// What the workers of a session share.
struct Workers<'a> {
    checker: Checker,
    plan: Plan,
    options: &'a CampaignOptions,
    guide: guide::Guide,
    /// The mutational seed source, with `--seeds`.
    mutated: Option<mutated::Mutated>,
    records: Mutex<Records>,
    memory: Mutex<memory_log::MemoryLog>,
    /// Programs that failed so far, earlier sessions included (`stop_after_failing`).
    failing: AtomicU64,
    hook: Option<&'a FailureHook<'a>>,
    progress: Progress,
}

impl Workers<'_> {
    /// Whether as many programs failed as the campaign stops after.
    fn enough_failures(&self) -> bool {
        self.options.stop_after_failing.is_some_and(|n| self.failing.load(Ordering::SeqCst) >= n)
    }

    /// Checks program `index`, records it, saves its failures and reports it; returns its new
    /// failure directories.
    fn check_one(&self, index: u64) -> Result<Vec<String>> {
        let (checks, failures, dirs) = self.check_and_record(index)?;
        // A report, not a record: a full disk here must not stop the campaign.
        if let Ok(mut log) = self.memory.lock()
            && let Err(e) = log.record(index)
        {
            self.progress.println(format!("warning: {e:#}"));
        }
        for d in &dirs {
            self.progress.println(format!("failure: {}", d.display()));
        }
        self.progress.program_done(checks, failures);
        Ok(dirs.iter().map(|d| d.display().to_string()).collect())
    }

    /// Checks program `index`, records it and saves its failures; returns (checks, failures,
    /// new failure directories).
    fn check_and_record(&self, index: u64) -> Result<(u64, u64, Vec<PathBuf>)> {
        let Workers { checker, plan, options, guide, mutated, records, failing, hook, .. } = self;
        let faults = &checker.faults;
        let seed = program_seed(options.seed, index);
        let generate_start = Instant::now();
        let generate_here = || {
            let gen_config =
                if options.swarm { GenConfig::swarm_weighted(seed, &guide.weights_for(index)) } else { GenConfig::default() };
            generate(seed, &gen_config)
        };
        let mut variant = None;
        let program = match (&options.corpus, mutated) {
            (Some(dir), _) => corpus::program(dir, index)?,
            (None, Some(m)) if m.is_variant(seed) => {
                let v = m.variant(index, seed)?;
                let program = v.program.clone();
                variant = Some(v);
                match program {
                    Some(p) => p,
                    None => generate_here(),
                }
            }
            _ => generate_here(),
        };
        let generated = generate_start.elapsed();
        let configs = plan.for_program(seed);
        let mut checked = checker.check(index, &program, &configs);
        checked.line.timing.add(records::Phase::Generate, generated);
        if let Some(v) = &variant {
            checked.line.origin = v.origin.record();
        }
        if checked.line.status == records::ProgramStatus::Discarded && options.corpus.is_none() {
            failures::save_discarded(&options.failures_dir, &options.campaign_id, &program, &checked.line.reason)?;
        }

        // Group failures by symptom before saving (see `failures`).
        let mut groups: BTreeMap<(FailureKind, Stage), (Failure, Vec<String>)> = BTreeMap::new();
        for (row, failure) in checked.rows.iter().zip(&checked.failures) {
            let Some(f) = failure else { continue };
            groups.entry((f.kind, f.stage)).or_insert_with(|| (f.clone(), Vec::new())).1.push(row.config_id.clone());
        }
        for test in checked.selftests.iter().filter(|t| t.kind.is_some()) {
            let failure = Failure::new(test.kind.unwrap_or(FailureKind::HarnessError), Stage::Analysis, test.detail.clone());
            groups.entry((failure.kind, failure.stage)).or_insert_with(|| (failure, Vec::new()));
        }
        let by_id = |id: &str| configs.iter().find(|c| c.id() == id).cloned();
        let mut dirs = Vec::new();
        if let Some(truth) = &checked.truth {
            for (failure, ids) in groups.values() {
                let failing: Vec<Planned> = ids.iter().filter_map(|id| by_id(id)).collect();
                let saved = failures::save(&options.failures_dir, &options.campaign_id, &program, truth, failure, &failing, faults)?;
                if let Some(hook) = hook {
                    // Triage compiles in-process: a triage that killed the process is not
                    // repeated (see `isolate`; the hook itself skips compiler-crash failures
                    // and locates compiler hangs out of process).
                    if let Some(cause) = checker.crashed.get(index, isolate::TRIAGE) {
                        autotriage::not_triaged(&saved, &format!("triage of this program took the process down ({cause}); not repeated"));
                    } else {
                        checker.note(index, isolate::TRIAGE);
                        checked.line.timing.time(records::Phase::Triage, || hook(&saved));
                        checker.leave();
                    }
                }
                dirs.push(saved.dir);
            }
        }
        // Before the program's line: a program recorded complete always has its feedback (and
        // a variant its pool decision).
        let mut feedback = guide::Feedback::of(index, &program, &checked);
        if let (Some(m), Some(v)) = (mutated, &variant) {
            m.record(index, &v.origin, v.program.as_ref(), &feedback.changed, feedback.checked)?;
            // A variant is no sample of the swarm's knobs: it stays out of the weights.
            feedback.checked &= v.program.is_none();
        }
        guide.record(feedback)?;
        // Counted before the line is written: once it is in `programs.csv`, no program that
        // starts later can miss it (`stop_after_failing`).
        if checked.line.failures > 0 {
            failing.fetch_add(1, Ordering::SeqCst);
        }
        records
            .lock()
            .map_err(|_| anyhow::anyhow!("a worker panicked while writing records"))?
            .append_program(&checked.rows, &checked.selftests, &checked.line)?;
        Ok((checked.line.checks, checked.line.failures, dirs))
    }
}

/// Program `index` of the campaign of `seed` (swarm generator configurations or the
/// default one), with its generator seed.
pub fn program_of(seed: u64, swarm: bool, index: u64) -> (u64, sysy_generator::GeneratedProgram) {
    let seed = program_seed(seed, index);
    let gen_config = if swarm { GenConfig::swarm(seed) } else { GenConfig::default() };
    (seed, generate(seed, &gen_config))
}

/// The generator seed of program `index` of the campaign of `seed`: output `index` of the
/// SplitMix64 stream seeded with `seed` (state `seed + (index + 1)·γ`, then the SplitMix64
/// finaliser, a bijection).
///
/// Why not `seed + index`: campaigns whose seeds differ by a little (two nights seeded with
/// consecutive dates, two campaigns started a second apart) would check the same programs
/// shifted by a few numbers. Here two (seed, index) pairs meet only when their states do,
/// `seed − seed' ≡ (index' − index)·γ (mod 2⁶⁴)`: for seeds less than 2·10⁶ apart (every
/// pair of YYYYMMDD dates within two centuries) that needs an index difference of at least
/// 3.98·10¹² (computed over every such difference; see the test), far beyond any campaign.
/// Program seeds are also far from one another, so the generator's retry streams
/// (`seed + k·γ`) do not run into a neighbour's program.
pub fn program_seed(seed: u64, index: u64) -> u64 {
    const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut z = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(GAMMA));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A campaign id from the current time, the seed and the process:
/// `YYYYMMDD-HHMMSS.mmm-s<seed>-p<pid>` (UTC). Two campaigns of one machine started in the
/// same millisecond differ by pid; the default directory is also created atomically
/// ([`reserve_dir`]), so even ids that meet get distinct directories.
pub fn campaign_id(seed: u64) -> String {
    format!("{}-s{seed}-p{}", jiff::Timestamp::now().strftime("%Y%m%d-%H%M%S%.3f"), std::process::id())
}

/// Creates a new directory `parent/<id>` (or `parent/<id>-2`, `-3`, ... when that exists)
/// with one atomic `mkdir` each; returns the id used and the directory.
pub fn reserve_dir(parent: &Path, id: &str) -> Result<(String, PathBuf)> {
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    for n in 1u32.. {
        let name = if n == 1 { id.to_string() } else { format!("{id}-{n}") };
        let dir = parent.join(&name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok((name, dir)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", dir.display())),
        }
    }
    unreachable!("a free name below u32::MAX suffixes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_parse_and_program_numbers() {
        let s = Shard::parse("1/4").expect("valid");
        assert_eq!((0..4).filter_map(|k| s.nth(k)).collect::<Vec<_>>(), vec![1, 5, 9, 13]);
        assert!(s.contains(9) && !s.contains(8));
        for bad in ["4/4", "0/0", "1", "a/2", "-1/3"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn nearby_campaign_seeds_share_no_program_seed() {
        // γ⁻¹ mod 2⁶⁴ by Newton's iteration (each step doubles the correct low bits).
        const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut inverse = GAMMA;
        for _ in 0..6 {
            inverse = inverse.wrapping_mul(2u64.wrapping_sub(GAMMA.wrapping_mul(inverse)));
        }
        assert_eq!(GAMMA.wrapping_mul(inverse), 1);
        // States meet when seed − seed' ≡ (i' − i)·γ: the index gap a seed gap d needs.
        let closest = (1..2_000_000u64).map(|d| d.wrapping_mul(inverse)).map(|g| g.min(g.wrapping_neg())).min();
        assert!(closest.is_some_and(|g| g >= 3_980_000_000_000), "{closest:?}");
        // And concretely: consecutive dates and seeds, the first thousand programs each.
        for (a, b) in [(20260101, 20260102), (20261231, 20270101), (5, 6), (0, u64::MAX)] {
            let first: BTreeSet<u64> = (0..1000).map(|i| program_seed(a, i)).collect();
            assert_eq!(first.len(), 1000);
            assert!((0..1000).all(|i| !first.contains(&program_seed(b, i))), "{a} and {b}");
        }
    }

    #[test]
    fn default_campaign_directories_never_collide() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let (a, dir_a) = reserve_dir(tmp.path(), "x").expect("first");
        let (b, dir_b) = reserve_dir(tmp.path(), "x").expect("second");
        assert_eq!((a.as_str(), b.as_str()), ("x", "x-2"));
        assert!(dir_a.is_dir() && dir_b.is_dir());
    }

    #[test]
    fn campaign_ids_are_the_utc_time_the_seed_and_the_process() {
        let id = campaign_id(5);
        let (time, rest) = id.split_at(19);
        assert!(time.as_bytes()[8] == b'-' && time.as_bytes()[15] == b'.' && time.starts_with("20"), "{id}");
        assert_eq!(rest, format!("-s5-p{}", std::process::id()));
    }
}
