//! `harness report speedup`: what each optimisation pass is worth, measured in executed ARM
//! instructions and estimated cycles (qemu-arm with the cost plugin) on a benchmark suite.
//!
//! Design. The base pipeline `P` (default: `sysyc::passes::O2_PIPELINE`, read at run time so
//! new passes show up without changes here) defines three families of configurations, each a
//! pair *(reference pipeline, subject pipeline)* whose **speedup** is
//! `cost(reference) / cost(subject)` — above 1 the pass helps, below 1 it hurts:
//! * **leave-one-out** for every distinct pass `p` of `P`: reference `P` without any
//!   occurrence of `p`, subject `P`;
//! * **add-one**: reference `-O0 + mem2reg`, subject `-O0 + mem2reg + p` (for `mem2reg`
//!   itself: reference `-O0`, subject `mem2reg`);
//! * **prefix** steps `k = 1..=|P|`: reference the first `k-1` passes, subject the first `k`;
//!   the costs of all prefixes form each benchmark's prefix curve;
//! * **add-to-base** for every registered IR pass `q` outside `P`: reference `P`, subject `P`
//!   followed by `q` (what appending it would still give);
//! * **leave-one-out** for every optional back-end stage `s` as well: reference `P` with every
//!   stage but `s`, subject `P` with all of them.
//!
//! A configuration is named by registry entries ([`Pipeline`]): the IR passes in order, then
//! the back-end stages that run. Every configuration of the IR families runs all stages
//! ([`with_all_stages`]), so a stage's pair differs from the base in that stage alone.
//!
//! Every distinct pipeline is compiled once per benchmark (timing each pass through the pass
//! manager's report); the assembly text is hashed and every distinct text is assembled and run
//! once (most configurations produce a text some other configuration already produced). A run
//! is judged against the benchmark's `.out`: a configuration whose output is wrong, that
//! crashed, timed out or failed to compile has no cost, and every pair involving it is marked
//! and left out of the geometric means, so a wrong result never counts as a speedup. A pair
//! with speedup below 1 is a **performance bug** row.
//!
//! Runs go in two waves so that long suites do not spend hours on numbers nobody can use:
//! first the texts that take part in more than two pairs (the shared references: `-O0 +
//! mem2reg` for every add-one pair, the base pipeline for every leave-one-out pair), then the
//! rest — except a text whose every pair has, on its other side, a configuration already
//! without a valid result (say `-O0 + mem2reg` timed out): such a text is **not run**, shows
//! as `SKIPPED` with the reason, and never counts as a failure. Its own correctness on that
//! benchmark is then unchecked, and the report says so.
//!
//! Outcomes are kept in a [`run_cache::RunCache`] keyed by the assembly text and everything
//! else a run depends on, so a suite too long for one sitting is measured over several.
//!
//! The tables and charts are written by [`report`] and [`chart`].

pub mod chart;
pub mod compare;
pub mod diffs;
pub mod markdown;
pub mod report;
pub mod run_cache;

use crate::bench::geomean;
use crate::conform::{self, CaseFiles, Verdict};
use sysy_check::engine::RunSettings;
use sysy_check::executor::watch::Unwatched;
use sysy_check::executor::{Check, Executor, Settings, Through};
use sysyc::config::Config;
use sysyc::isa::arm::BackendStage;
use rayon::prelude::*;
use run_cache::RunCache;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The family a configuration pair belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    LeaveOneOut,
    AddOne,
    Prefix,
    /// For each registered IR pass outside the base pipeline: the base vs the base with the
    /// pass appended, so that no registered pass goes unmeasured.
    AddToBase,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::LeaveOneOut, Mode::AddOne, Mode::Prefix, Mode::AddToBase];

    /// Parses a comma-separated list of family names.
    pub fn parse_list(spec: &str) -> Result<Vec<Mode>, String> {
        spec.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                Mode::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| {
                    format!("unknown mode `{s}`; valid modes: leave-one-out, add-one, prefix, add-to-base")
                })
            })
            .collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::LeaveOneOut => "leave-one-out",
            Mode::AddOne => "add-one",
            Mode::Prefix => "prefix",
            Mode::AddToBase => "add-to-base",
        }
    }
}

/// A configuration as registry names: IR passes in order (repetitions allowed), then the
/// back-end stages that run. No names at all is `-O0` without optional stages.
pub type Pipeline = Vec<&'static str>;

/// `ir` followed by every optional back-end stage (the IR families' configurations).
pub fn with_all_stages(ir: &[&'static str]) -> Pipeline {
    ir.iter().copied().chain(BackendStage::ALL.iter().map(|s| s.name())).collect()
}

/// Whether `name` is a back-end stage rather than an IR pass.
pub fn is_stage(name: &str) -> bool {
    BackendStage::ALL.iter().any(|s| s.name() == name)
}

/// The compiler configuration a [`Pipeline`] names.
pub(crate) fn config_of(pipeline: &Pipeline) -> Config {
    let entries: Vec<&'static sysyc::passes::PassInfo> = pipeline.iter().filter_map(|p| sysyc::passes::lookup(p)).collect();
    let stages = entries.iter().filter_map(|e| match e.body {
        sysyc::passes::PassBody::Backend(stage) => Some(stage),
        _ => None,
    });
    let ir = entries.iter().copied().filter(|e| !e.is_backend()).collect();
    Config::default().with_pipeline(ir).with_stages(stages)
}

/// One (reference, subject) pair: what adding `pass` changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    pub mode: Mode,
    pub pass: &'static str,
    /// For prefix pairs the step `k` (1-based pipeline position); 0 otherwise.
    pub position: usize,
    pub reference: Pipeline,
    pub subject: Pipeline,
}

/// The name of the pass that the add-one family always includes (without it the IR keeps
/// every scalar in memory and no other pass has much to work on).
pub const ADD_ONE_BASE: &str = "mem2reg";

/// The pairs of all three families for the IR pipeline `base`, in a stable order:
/// leave-one-out and add-one per distinct pass in order of first appearance, then the prefix
/// steps, then leave-one-out per back-end stage. Every side names its stages
/// ([`with_all_stages`]).
pub fn pairs(base: &[&'static str]) -> Vec<Pair> {
    let mut out = ir_pairs(base);
    for pair in &mut out {
        pair.reference = with_all_stages(&pair.reference);
        pair.subject = with_all_stages(&pair.subject);
    }
    let full = with_all_stages(base);
    for stage in BackendStage::ALL {
        out.push(Pair {
            mode: Mode::LeaveOneOut,
            pass: stage.name(),
            position: 0,
            reference: full.iter().copied().filter(|&q| q != stage.name()).collect(),
            subject: full.clone(),
        });
    }
    out
}

/// The IR families' pairs, as bare IR pipelines.
fn ir_pairs(base: &[&'static str]) -> Vec<Pair> {
    let mut distinct: Vec<&'static str> = Vec::new();
    for &p in base {
        if !distinct.contains(&p) {
            distinct.push(p);
        }
    }
    let mut out = Vec::new();
    for &p in &distinct {
        out.push(Pair {
            mode: Mode::LeaveOneOut,
            pass: p,
            position: 0,
            reference: base.iter().copied().filter(|&q| q != p).collect(),
            subject: base.to_vec(),
        });
    }
    for &p in &distinct {
        let (reference, subject) = if p == ADD_ONE_BASE {
            (vec![], vec![p])
        } else {
            (vec![ADD_ONE_BASE], vec![ADD_ONE_BASE, p])
        };
        out.push(Pair {
            mode: Mode::AddOne,
            pass: p,
            position: 0,
            reference,
            subject,
        });
    }
    for k in 1..=base.len() {
        out.push(Pair {
            mode: Mode::Prefix,
            pass: base[k - 1],
            position: k,
            reference: base[..k - 1].to_vec(),
            subject: base[..k].to_vec(),
        });
    }
    for pass in sysyc::passes::ir_passes().map(|p| p.name).filter(|p| !base.contains(p)) {
        out.push(Pair {
            mode: Mode::AddToBase,
            pass,
            position: 0,
            reference: base.to_vec(),
            subject: base.iter().copied().chain([pass]).collect(),
        });
    }
    out
}

/// The base pipeline: `spec` (comma-separated pass names, checked against the registry), or
/// `sysyc::passes::O2_PIPELINE`.
pub fn base_pipeline(spec: Option<&str>) -> Result<Pipeline, String> {
    match spec {
        Some(spec) => Ok(sysyc::passes::parse_pipeline(spec)?
            .into_iter()
            .map(|p| p.name)
            .collect()),
        None => Ok(sysyc::passes::O2_PIPELINE.to_vec()),
    }
}

/// The cost of one configuration of one benchmark, or why it has none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigRun {
    /// `None`: not run, because nothing it would be compared with has a valid result.
    pub verdict: Option<Verdict>,
    pub reason: String,
    /// Present only for a passing, completely measured run.
    pub insns: Option<u64>,
    pub cycles: Option<u64>,
    /// Hash of the assembly text (empty when compilation failed).
    pub asm_hash: String,
    /// Compile time of each pass occurrence, in pipeline order.
    pub pass_times: Vec<(&'static str, Duration)>,
}

impl ConfigRun {
    pub fn valid(&self) -> bool {
        self.verdict == Some(Verdict::Pass) && self.insns.is_some()
    }

    /// Whether the run was left out because none of its pairs could use it.
    pub fn skipped(&self) -> bool {
        self.verdict.is_none()
    }

    /// The verdict's name, or `SKIPPED`.
    pub fn status(&self) -> String {
        self.verdict.map_or_else(|| "SKIPPED".to_string(), |v| v.to_string())
    }
}

/// One benchmark's measurements: every distinct pipeline's run.
#[derive(Clone, Debug)]
pub struct BenchmarkRuns {
    pub name: String,
    pub runs: BTreeMap<Pipeline, ConfigRun>,
    /// Distinct assembly texts run (the rest were deduplicated or skipped).
    pub distinct_asm: usize,
    /// Of those, the texts whose outcome came from the run cache instead of a run.
    pub cached_asm: usize,
    /// Distinct texts not run because none of their pairs could use them.
    pub skipped_asm: usize,
}

/// One pair evaluated on one benchmark.
#[derive(Clone, Debug)]
pub struct PairResult<'a> {
    pub benchmark: &'a str,
    pub pair: &'a Pair,
    pub reference: &'a ConfigRun,
    pub subject: &'a ConfigRun,
}

impl PairResult<'_> {
    /// Both sides ran correctly and were measured.
    pub fn valid(&self) -> bool {
        self.reference.valid() && self.subject.valid()
    }

    pub fn speedup_insns(&self) -> Option<f64> {
        speedup(self.reference.insns, self.subject.insns).filter(|_| self.valid())
    }

    pub fn speedup_cycles(&self) -> Option<f64> {
        speedup(self.reference.cycles, self.subject.cycles).filter(|_| self.valid())
    }

    /// The pass made this benchmark slower (in instructions or cycles) by a visible amount:
    /// below [`SLOWER_THAN`], so that a row never reads 1.0000 in the four-decimal tables.
    pub fn performance_bug(&self) -> bool {
        self.speedup_insns().is_some_and(|s| s < SLOWER_THAN) || self.speedup_cycles().is_some_and(|s| s < SLOWER_THAN)
    }

    /// Compile time of the pass's occurrences in the subject pipeline.
    pub fn pass_time(&self) -> Duration {
        match self.pair.mode {
            // The prefix step adds one occurrence: the last pass of the subject.
            Mode::Prefix => self.subject.pass_times.last().map_or(Duration::ZERO, |t| t.1),
            _ => self
                .subject
                .pass_times
                .iter()
                .filter(|(p, _)| *p == self.pair.pass)
                .map(|t| t.1)
                .sum(),
        }
    }

    /// "wrong output in the subject" and the like, for rows left out of the means.
    pub fn exclusion(&self) -> Option<String> {
        let why = |side: &str, run: &ConfigRun| {
            (!run.valid()).then(|| {
                let reason = if run.reason.is_empty() { "not measured" } else { &run.reason };
                format!("{side} {}: {reason}", run.status())
            })
        };
        why("reference", self.reference).or_else(|| why("subject", self.subject))
    }
}

/// Speedups below this are performance bugs: a slowdown of at least 0.005%, the resolution
/// of the reports' four decimals. Counts are exact, so anything smaller is real too, but it
/// is a handful of instructions in millions and would only bury the rows that matter.
pub const SLOWER_THAN: f64 = 0.99995;

fn speedup(reference: Option<u64>, subject: Option<u64>) -> Option<f64> {
    match (reference, subject) {
        (Some(r), Some(s)) if r > 0 && s > 0 => Some(r as f64 / s as f64),
        _ => None,
    }
}

/// The whole measurement: the pairs and every benchmark's runs.
#[derive(Clone, Debug)]
pub struct SpeedupData {
    pub base: Pipeline,
    pub pairs: Vec<Pair>,
    pub benchmarks: Vec<BenchmarkRuns>,
}

/// Geometric means of one pair over the benchmarks where it is valid.
#[derive(Clone, Debug)]
pub struct PairSummary<'a> {
    pub pair: &'a Pair,
    pub geomean_insns: Option<f64>,
    pub geomean_cycles: Option<f64>,
    /// Benchmarks in the means.
    pub valid: usize,
    /// Benchmarks left out (wrong output, crash, ...).
    pub excluded: usize,
    /// Benchmarks made slower.
    pub slower: usize,
    /// Summed compile time of the pass over all benchmarks.
    pub pass_time: Duration,
}

impl SpeedupData {
    /// Whether the pairs of family `mode` were measured.
    pub fn has_mode(&self, mode: Mode) -> bool {
        self.pairs.iter().any(|p| p.mode == mode)
    }

    /// Every pair on every benchmark, benchmarks outermost.
    pub fn results(&self) -> Vec<PairResult<'_>> {
        let mut out = Vec::new();
        for b in &self.benchmarks {
            for pair in &self.pairs {
                if let (Some(reference), Some(subject)) =
                    (b.runs.get(&pair.reference), b.runs.get(&pair.subject))
                {
                    out.push(PairResult {
                        benchmark: &b.name,
                        pair,
                        reference,
                        subject,
                    });
                }
            }
        }
        out
    }

    /// Per-pair geometric means, in pair order.
    pub fn summaries(&self) -> Vec<PairSummary<'_>> {
        let results = self.results();
        self.pairs
            .iter()
            .map(|pair| {
                let of_pair: Vec<&PairResult<'_>> =
                    results.iter().filter(|r| std::ptr::eq(r.pair, pair)).collect();
                PairSummary {
                    pair,
                    geomean_insns: geomean(of_pair.iter().filter_map(|r| r.speedup_insns())),
                    geomean_cycles: geomean(of_pair.iter().filter_map(|r| r.speedup_cycles())),
                    valid: of_pair.iter().filter(|r| r.valid()).count(),
                    excluded: of_pair.iter().filter(|r| !r.valid()).count(),
                    slower: of_pair.iter().filter(|r| r.performance_bug()).count(),
                    pass_time: of_pair.iter().map(|r| r.pass_time()).sum(),
                }
            })
            .collect()
    }

    /// A benchmark's prefix curve: the cost after the first `k` passes, `k = 0..=|P|`
    /// (`None` where that prefix has no valid run).
    pub fn prefix_curve(&self, benchmark: &BenchmarkRuns) -> Vec<(usize, Option<u64>, Option<u64>)> {
        (0..=self.base.len())
            .map(|k| {
                let run = benchmark.runs.get(&with_all_stages(&self.base[..k])).filter(|r| r.valid());
                (k, run.and_then(|r| r.insns), run.and_then(|r| r.cycles))
            })
            .collect()
    }
}

/// A judged run: verdict, reason, and (instructions, cycles) when completely measured.
pub type Judged = (Verdict, String, Option<(u64, u64)>);

/// The distinct pipelines `pairs` need, in a stable order.
fn pipelines_of(pairs: &[Pair]) -> Vec<Pipeline> {
    pairs
        .iter()
        .flat_map(|p| [p.reference.clone(), p.subject.clone()])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Which distinct texts to run now: with the outcomes known so far, a text is worth running
/// unless, in every pair it takes part in, the other side has no valid result (failed to
/// compile — `None` — or already judged without a passing, measured run). `sides` gives each
/// pair's (reference, subject) text.
fn worth_running<'t>(
    candidates: impl IntoIterator<Item = &'t str>,
    sides: &[(Option<&str>, Option<&str>)],
    outcomes: &BTreeMap<String, Judged>,
) -> (Vec<&'t str>, Vec<&'t str>) {
    let usable = |h: Option<&str>| {
        h.is_some_and(|h| outcomes.get(h).is_none_or(|(v, _, cost)| *v == Verdict::Pass && cost.is_some()))
    };
    candidates.into_iter().partition(|&text| {
        sides.iter().any(|&(r, s)| (r == Some(text) && usable(s)) || (s == Some(text) && usable(r)))
    })
}

/// Compiles one benchmark under every pipeline of `pairs` (the check executor through the
/// assembly, pipeline prefixes shared), runs every distinct assembly text once — shared
/// references first, then what can still be used (see the module doc) — with the executor's
/// runs, and judges the runs (or takes them from `cache`). Runs go on the current rayon pool.
pub fn measure_benchmark(
    files: &CaseFiles,
    pairs: &[Pair],
    settings: &RunSettings,
    cache: Option<&RunCache>,
) -> Result<BenchmarkRuns, String> {
    let case = conform::load(files)?;
    let expected = match &case.expected {
        sysy_check::failure::Expected::OutFile(bytes) => bytes.clone(),
        sysy_check::failure::Expected::Outcome(_) => unreachable!("suite cases are judged against their .out"),
    };
    sysyc::toolchain::arm_gcc().map_err(|e| e.to_string())?;
    let measured = RunSettings { measure_cost: true, ..settings.clone() };
    let executor_settings = Settings {
        interpret: false,
        through: Through::Assembly,
        caches: true,
        keep_outputs: true,
        assembler: settings.assembler,
        ..Settings::plain(settings.limits.clone(), true)
    };
    let executor = Executor::new(executor_settings, Some(measured.runner()?));
    // Compile every configuration.
    let pipelines = pipelines_of(pairs);
    let configs: Vec<Config> = pipelines.iter().map(config_of).collect();
    let checks: Vec<Check> = match executor.check(&case, &configs, 0, &Unwatched) {
        Ok(checked) => checked.checks,
        Err(lowering) => vec![Check { verdict: Err(lowering), ..Check::default() }; configs.len()],
    };
    let compiled: Vec<(&Pipeline, &Check)> = pipelines.iter().zip(&checks).collect();
    let hash_of: BTreeMap<&Pipeline, &str> =
        compiled.iter().filter(|(_, c)| c.verdict.is_ok()).map(|(p, c)| (*p, c.asm_hash.as_str())).collect();
    let texts: BTreeMap<&str, &str> =
        checks.iter().filter_map(|c| Some((c.asm_hash.as_str(), c.assembly.as_deref()?))).collect();
    let sides: Vec<(Option<&str>, Option<&str>)> =
        pairs.iter().map(|p| (hash_of.get(&p.reference).copied(), hash_of.get(&p.subject).copied())).collect();
    let mut pair_sides: BTreeMap<&str, usize> = BTreeMap::new();
    for h in sides.iter().flat_map(|&(r, s)| [r, s]).flatten() {
        *pair_sides.entry(h).or_default() += 1;
    }

    // Run every distinct text at most once, in two waves.
    let cached = std::sync::atomic::AtomicUsize::new(0);
    let run_wave = |wave: &[&str]| -> Result<Vec<(String, Judged)>, String> {
        wave.par_iter()
            .map(|&hash| {
                let asm = texts[hash];
                let key = cache.map(|c| c.key(asm, &case.subject.stdin, &expected));
                if let Some(judged) = cache.zip(key.as_deref()).and_then(|(c, k)| c.get(k)) {
                    cached.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    return Ok((hash.to_string(), judged));
                }
                let run = executor.run_assembly(&case, asm, 0);
                let (verdict, reason) = conform::verdict_of(&run.verdict);
                let cost = run.cost.filter(|c| c.counts.complete).map(|c| (c.counts.total, c.cycles.total));
                let judged = (verdict, reason, cost);
                if let Some((c, k)) = cache.zip(key.as_deref()) {
                    c.put(k, &judged)?;
                }
                Ok((hash.to_string(), judged))
            })
            .collect()
    };
    let (shared, rest): (Vec<&str>, Vec<&str>) = texts.keys().copied().partition(|h| pair_sides.get(h).is_some_and(|&n| n > 2));
    let mut outcomes: BTreeMap<String, Judged> = run_wave(&shared)?.into_iter().collect();
    let (second, skipped) = worth_running(rest, &sides, &outcomes);
    outcomes.extend(run_wave(&second)?);
    let distinct_asm = shared.len() + second.len();
    let skip_reason = "not run: every configuration it is compared with has no valid result";
    let mut runs = BTreeMap::new();
    for (pipeline, check) in compiled {
        let run = match &check.verdict {
            Ok(()) => {
                let (verdict, reason, cost) = match outcomes.get(&check.asm_hash) {
                    Some((verdict, reason, cost)) => (Some(*verdict), reason.clone(), *cost),
                    None => (None, skip_reason.to_string(), None),
                };
                let cost = cost.filter(|_| verdict == Some(Verdict::Pass));
                let pass_times = check.optimised.as_ref().map(|s| s.report().runs.iter().map(|r| (r.pass, r.time)).collect()).unwrap_or_default();
                ConfigRun { verdict, reason, insns: cost.map(|c| c.0), cycles: cost.map(|c| c.1), asm_hash: check.asm_hash.clone(), pass_times }
            }
            Err(_) => {
                let (verdict, reason) = conform::verdict_of(&check.verdict);
                ConfigRun { verdict: Some(verdict), reason, insns: None, cycles: None, asm_hash: String::new(), pass_times: Vec::new() }
            }
        };
        runs.insert(pipeline.clone(), run);
    }
    Ok(BenchmarkRuns {
        name: files.name.clone(),
        runs,
        distinct_asm,
        skipped_asm: skipped.len(),
        cached_asm: cached.into_inner(),
    })
}

/// Measures every benchmark under every pipeline the pairs of `base` in `modes` need, on `jobs` threads;
/// `progress` is told about each finished benchmark.
pub fn measure(
    cases: &[CaseFiles],
    base: Pipeline,
    modes: &[Mode],
    settings: &RunSettings,
    jobs: usize,
    cache: Option<&RunCache>,
    progress: &(dyn Fn(&BenchmarkRuns) + Sync),
) -> Result<SpeedupData, String> {
    let pairs: Vec<Pair> = pairs(&base).into_iter().filter(|p| modes.contains(&p.mode)).collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| format!("cannot start worker threads: {e}"))?;
    let benchmarks = pool.install(|| {
        cases
            .par_iter()
            .map(|files| {
                let runs = measure_benchmark(files, &pairs, settings, cache)
                    .map_err(|e| format!("{}: {e}", files.name))?;
                progress(&runs);
                Ok(runs)
            })
            .collect::<Result<Vec<_>, String>>()
    })?;
    Ok(SpeedupData {
        base,
        pairs,
        benchmarks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_cover_every_distinct_pass_and_prefix() {
        let base = vec!["mem2reg", "constfold", "dce", "constfold"];
        let pairs = ir_pairs(&base);
        let loo: Vec<&Pair> = pairs.iter().filter(|p| p.mode == Mode::LeaveOneOut).collect();
        assert_eq!(loo.len(), 3);
        assert_eq!(loo[1].pass, "constfold");
        assert_eq!(loo[1].reference, vec!["mem2reg", "dce"], "every occurrence removed");
        assert_eq!(loo[1].subject, base);
        let add: Vec<&Pair> = pairs.iter().filter(|p| p.mode == Mode::AddOne).collect();
        assert_eq!(add[0].reference, Vec::<&str>::new());
        assert_eq!(add[0].subject, vec!["mem2reg"]);
        assert_eq!(add[2].reference, vec!["mem2reg"]);
        assert_eq!(add[2].subject, vec!["mem2reg", "dce"]);
        let outside: Vec<&Pair> = pairs.iter().filter(|p| p.mode == Mode::AddToBase).collect();
        assert_eq!(outside.len(), sysyc::passes::ir_passes().count() - 3, "every other registered IR pass");
        assert!(outside.iter().all(|p| p.reference == base && p.subject[..4] == base[..] && p.subject.len() == 5));
        assert!(outside.iter().any(|p| p.pass == "gvn") && !outside.iter().any(|p| p.pass == "dce"));
        let prefix: Vec<&Pair> = pairs.iter().filter(|p| p.mode == Mode::Prefix).collect();
        assert_eq!(prefix.len(), 4);
        assert_eq!(prefix[3].position, 4);
        assert_eq!(prefix[3].pass, "constfold");
        assert_eq!(prefix[3].reference, base[..3].to_vec());
        assert_eq!(prefix[3].subject, base);
    }

    #[test]
    fn every_side_runs_all_stages_but_a_stage_pair_leaves_out_its_stage() {
        let base = vec!["mem2reg", "dce"];
        let all = pairs(&base);
        assert_eq!(all.len(), ir_pairs(&base).len() + BackendStage::ALL.len());
        let full = with_all_stages(&base);
        for pair in all.iter().filter(|p| !is_stage(p.pass)) {
            for side in [&pair.reference, &pair.subject] {
                assert!(BackendStage::ALL.iter().all(|s| side.contains(&s.name())), "{pair:?}");
            }
        }
        for stage in BackendStage::ALL {
            let pair = all.iter().find(|p| p.pass == stage.name()).expect("a pair per stage");
            assert_eq!(pair.mode, Mode::LeaveOneOut);
            assert_eq!(pair.subject, full);
            assert_eq!(pair.reference.len(), full.len() - 1);
            assert!(!pair.reference.contains(&stage.name()));
            let config = config_of(&pair.reference);
            assert_eq!(config.pipeline.iter().map(|p| p.name).collect::<Vec<_>>(), base);
            assert!(!config.stages.contains(&stage) && config.stages.len() == BackendStage::ALL.len() - 1);
        }
        assert!(config_of(&Vec::new()).stages.is_empty() && config_of(&Vec::new()).pipeline.is_empty());
    }

    fn run(verdict: Verdict, insns: Option<u64>) -> ConfigRun {
        ConfigRun {
            verdict: Some(verdict),
            reason: if verdict == Verdict::Pass { String::new() } else { "line 1: expected `1`, got `2`".into() },
            insns,
            cycles: insns.map(|i| i * 2),
            asm_hash: String::new(),
            pass_times: vec![("dce", Duration::from_micros(5))],
        }
    }

    #[test]
    fn speedups_performance_bugs_and_exclusions() {
        let pair = pairs(&["mem2reg", "dce"]).remove(1);
        let (slow, fast) = (run(Verdict::Pass, Some(200)), run(Verdict::Pass, Some(100)));
        let r = PairResult { benchmark: "b", pair: &pair, reference: &slow, subject: &fast };
        assert_eq!(r.speedup_insns(), Some(2.0));
        assert!(!r.performance_bug());
        assert_eq!(r.pass_time(), Duration::from_micros(5));
        let r = PairResult { benchmark: "b", pair: &pair, reference: &fast, subject: &slow };
        assert_eq!(r.speedup_cycles(), Some(0.5));
        assert!(r.performance_bug());
        // Three instructions in 100 000 print as 1.0000: not a row; ten (0.9999) are.
        let (base, plus3, plus10) = (run(Verdict::Pass, Some(100_000)), run(Verdict::Pass, Some(100_003)), run(Verdict::Pass, Some(100_010)));
        assert!(!PairResult { benchmark: "b", pair: &pair, reference: &base, subject: &plus3 }.performance_bug());
        assert!(PairResult { benchmark: "b", pair: &pair, reference: &base, subject: &plus10 }.performance_bug());
        let wrong = run(Verdict::Fail, None);
        let r = PairResult { benchmark: "b", pair: &pair, reference: &slow, subject: &wrong };
        assert_eq!(r.speedup_insns(), None, "a wrong result is never a speedup");
        assert!(!r.performance_bug());
        assert!(r.exclusion().is_some_and(|e| e.starts_with("subject FAIL")), "{:?}", r.exclusion());
    }

    #[test]
    fn texts_nothing_can_be_compared_with_are_not_run() {
        // Pairs (reference, subject): add-one style "m" vs "m+a", "m" vs "m+b", and a
        // prefix-style chain "m+a" vs "m+a+c" whose other side is not judged yet.
        let sides = [(Some("m"), Some("ma")), (Some("m"), Some("mb")), (Some("ma"), Some("mac")), (None, Some("x"))];
        let timed_out: Judged = (Verdict::Timeout, "time limit exceeded".into(), None);
        let outcomes: BTreeMap<String, Judged> = [("m".to_string(), timed_out)].into_iter().collect();
        let (to_run, skipped) = worth_running(["ma", "mb", "mac", "x"], &sides, &outcomes);
        assert_eq!(to_run, vec!["ma", "mac"], "ma is still the reference of an unjudged pair");
        assert_eq!(skipped, vec!["mb", "x"], "mb is only compared with a timeout, x with a compile failure");
        let passed: Judged = (Verdict::Pass, String::new(), Some((10, 20)));
        let outcomes: BTreeMap<String, Judged> = [("m".to_string(), passed)].into_iter().collect();
        let (to_run, skipped) = worth_running(["ma", "mb"], &sides, &outcomes);
        assert_eq!((to_run, skipped), (vec!["ma", "mb"], vec![]));
        // A pass without complete counts is no valid reference either.
        let unmeasured: Judged = (Verdict::Pass, String::new(), None);
        let outcomes: BTreeMap<String, Judged> = [("m".to_string(), unmeasured)].into_iter().collect();
        assert_eq!(worth_running(["mb"], &sides, &outcomes).1, vec!["mb"]);
        let skipped_run = ConfigRun { verdict: None, ..run(Verdict::Pass, None) };
        assert!(skipped_run.skipped() && !skipped_run.valid());
        assert_eq!(skipped_run.status(), "SKIPPED");
    }

    #[test]
    fn summaries_exclude_invalid_benchmarks() {
        let base = vec!["mem2reg", "dce"];
        let pairs = pairs(&base);
        let mk = |runs: &[(Pipeline, ConfigRun)], name: &str| BenchmarkRuns {
            name: name.into(),
            runs: runs.iter().map(|(p, r)| (with_all_stages(p), r.clone())).collect(),
            distinct_asm: runs.len(),
            skipped_asm: 0,
            cached_asm: 0,
        };
        let a = mk(
            &[
                (vec![], run(Verdict::Pass, Some(400))),
                (vec!["mem2reg"], run(Verdict::Pass, Some(200))),
                (vec!["dce"], run(Verdict::Pass, Some(300))),
                (vec!["mem2reg", "dce"], run(Verdict::Pass, Some(100))),
            ],
            "a",
        );
        let b = mk(
            &[
                (vec![], run(Verdict::Pass, Some(100))),
                (vec!["mem2reg"], run(Verdict::Pass, Some(50))),
                (vec!["dce"], run(Verdict::Pass, Some(100))),
                (vec!["mem2reg", "dce"], run(Verdict::Fail, None)),
            ],
            "b",
        );
        let data = SpeedupData { base, pairs, benchmarks: vec![a, b] };
        let summaries = data.summaries();
        let loo_dce = summaries
            .iter()
            .find(|s| s.pair.mode == Mode::LeaveOneOut && s.pair.pass == "dce")
            .expect("pair");
        assert_eq!((loo_dce.valid, loo_dce.excluded), (1, 1));
        assert_eq!(loo_dce.geomean_insns, Some(2.0));
        let add_mem2reg = summaries
            .iter()
            .find(|s| s.pair.mode == Mode::AddOne && s.pair.pass == "mem2reg")
            .expect("pair");
        assert_eq!(add_mem2reg.valid, 2);
        assert!((add_mem2reg.geomean_insns.expect("mean") - 2.0).abs() < 1e-12);
        let curve = data.prefix_curve(&data.benchmarks[1]);
        assert_eq!(curve.iter().map(|c| c.1).collect::<Vec<_>>(), vec![Some(100), Some(50), None]);
    }
}
