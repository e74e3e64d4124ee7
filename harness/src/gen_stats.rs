//! `harness gen-stats`: generate a range of seeds, check each program, and summarise.
//!
//! Per program: generation time; front end (parse, printer round trip to the same tree,
//! semantic analysis, HIR invariants, strict SysY grammar); the reference interpreter (no
//! trap within the step budget); the statement coverage of that run (which share of the
//! program's statements ran at all, from [`refinterp::run_with_coverage`], whose outcome must
//! equal the interpreter's); optionally gcc (`--gcc`: the HIR→C emitter, the ARM cross gcc at
//! `-O0 -fwrapv -fsingle-precision-constant`, qemu) agreeing with the interpreter on stdout and
//! exit status; optionally sysyc itself (`--qemu`: `-O0`, qemu), agreeing likewise, with the
//! time of the qemu run. The summary gives pass/fail counts, distributions of size, steps,
//! coverage and run time, the statements that never ran by kind and place, the generation
//! speed, and a feature coverage table.
//!
//! gcc and sysyc run as engines ([`sysy_check::engine`]), judged against the interpreter's
//! outcome by the one judge.

use crate::cli::generate::GenConfigArgs;
use sysy_check::executor::timing::Phase;
use sysy_check::failure::Expected;
use sysy_check::subject::Case;
use crate::sources::generated::generate;
use sysy_generator::{Feature, FeatureSet, GeneratedProgram};
use sysy_check::engine::{CompiledEngine, Engine, GccEngine, RunSettings};
use sysy_check::subject::{Limits, Subject};
use sysy_check::refinterp::{self, RefConfig};
use anyhow::{Result, bail};
use rayon::prelude::*;
use std::fmt::Write as _;
use std::time::{Duration, Instant};
use sysyc::frontend::{self, LineIndex, hir};
use sysyc::passes::OptLevel;
use sysyc::runtime::Outcome;

/// The engines `gen-stats` runs besides the reference interpreter, judged against it.
#[derive(Default)]
struct Engines {
    /// gcc at `-O0` on the C translation (`--gcc`).
    gcc: Option<GccEngine>,
    /// sysyc at `-O0` under qemu (`--qemu`).
    qemu: Option<CompiledEngine>,
}

/// `harness gen-stats --seeds A..B [--swarm | --config FILE] [--gcc]`
#[derive(clap::Args, Debug)]
pub struct StatsArgs {
    /// Seed range `A..B` (B exclusive).
    #[arg(long, default_value = "0..1000")]
    pub seeds: String,
    #[command(flatten)]
    pub config: GenConfigArgs,
    /// Interpreter step budget per program.
    #[arg(long, default_value_t = 100_000_000)]
    pub max_steps: u64,
    /// Print the first failures (seed and reason).
    #[arg(long, default_value_t = 5)]
    pub show_failures: usize,
    /// Also run each program's C translation (gcc `-O0 -fwrapv -fsingle-precision-constant`,
    /// qemu) and require the interpreter's stdout and exit status.
    #[arg(long)]
    pub gcc: bool,
    /// Also compile each program with sysyc at `-O0`, run it under qemu, require the
    /// interpreter's stdout and exit status, and report the run times.
    #[arg(long)]
    pub qemu: bool,
    /// List the programs with the lowest statement coverage (seed, coverage, first lines of
    /// the statements that never ran).
    #[arg(long, default_value_t = 0)]
    pub show_low_coverage: usize,
}

/// What happened to one program.
#[derive(Clone, Debug)]
pub struct Record {
    pub seed: u64,
    pub lines: usize,
    /// The generator's work estimate ([`GeneratedProgram::estimated_work`]).
    pub estimated_work: u64,
    pub gen_time: Duration,
    pub features: FeatureSet,
    /// `Err(stage: reason)` for the first failed check.
    pub result: Result<PassedChecks, String>,
}

/// The results of a program that passed the checks.
#[derive(Clone, Debug, Default)]
pub struct PassedChecks {
    /// Interpreter steps (`None`: not interpreted).
    pub steps: Option<u64>,
    /// Statement coverage of the interpreter's run (`None`: not interpreted).
    pub coverage: Option<ProgramCoverage>,
    /// gcc agreed with the interpreter (`None`: not run).
    pub gcc_agrees: Option<bool>,
    /// Time of the qemu run of sysyc's `-O0` binary, which agreed with the interpreter
    /// (`None`: not run).
    pub qemu_run: Option<Duration>,
}

/// Which statements of one program ran.
#[derive(Clone, Debug, Default)]
pub struct ProgramCoverage {
    pub executed: usize,
    pub total: usize,
    /// The statements that never ran: (kind, where, 1-based source line).
    pub missed: Vec<(StmtKind, Place, u32)>,
}

impl ProgramCoverage {
    pub fn percent(&self) -> f64 {
        if self.total == 0 {
            100.0
        } else {
            100.0 * self.executed as f64 / self.total as f64
        }
    }
}

/// The kind of a statement, for the report of statements that never ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum StmtKind {
    Decl,
    Assign,
    Call,
    Block,
    If,
    While,
    Break,
    Continue,
    Return,
    Empty,
}

/// The function a statement is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Place {
    Main,
    Generated,
    /// The fixed helpers (`mix`, `safe_div`, ...) and `checksum_globals`.
    Helper,
}

/// Statement kinds by the text a statement starts with.
fn stmt_kind(text: &str) -> StmtKind {
    let word: String = text
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    match word.as_str() {
        "int" | "float" | "const" => StmtKind::Decl,
        "if" => StmtKind::If,
        "while" => StmtKind::While,
        "break" => StmtKind::Break,
        "continue" => StmtKind::Continue,
        "return" => StmtKind::Return,
        "" if text.starts_with('{') => StmtKind::Block,
        "" => StmtKind::Empty,
        _ => {
            // `name = ...`, `name[...] = ...` or a call `name(...)`.
            let rest = text[word.len()..].trim_start();
            if rest.starts_with('(') {
                StmtKind::Call
            } else {
                StmtKind::Assign
            }
        }
    }
}

/// The statement coverage of `p`'s run, checking that the recording run behaves exactly as
/// the interpreter's `outcome`.
fn coverage_of(
    p: &GeneratedProgram,
    program: &hir::Program,
    max_steps: u64,
    outcome: &Outcome,
) -> Result<ProgramCoverage, String> {
    let lines = LineIndex::new(&p.source);
    let config = RefConfig {
        max_steps,
        ..RefConfig::default()
    };
    let (recorded, coverage) = refinterp::run_with_coverage(program, &lines, &p.stdin, &config)
        .map_err(|e| e.to_string())?;
    if !recorded.same_behaviour(outcome) || recorded.steps != outcome.steps {
        return Err("the coverage run differs from the interpreter's run".into());
    }
    let place_of = |span: sysyc::frontend::ast::Span| {
        let f = program
            .funcs
            .iter()
            .find(|f| f.span.lo <= span.lo && span.lo < f.span.hi);
        match f.map(|f| f.name.as_str()) {
            Some("main") => Place::Main,
            Some(name)
                if sysy_generator::is_fixed_helper(name) =>
            {
                Place::Helper
            }
            _ => Place::Generated,
        }
    };
    let missed = coverage
        .missed()
        .map(|span| {
            let text = p.source.get(span.lo as usize..).unwrap_or("");
            (stmt_kind(text), place_of(span), lines.line(span))
        })
        .collect();
    Ok(ProgramCoverage {
        executed: coverage.executed_count(),
        total: coverage.total(),
        missed,
    })
}

/// Parses `A..B`.
pub fn parse_range(s: &str) -> Result<std::ops::Range<u64>> {
    let Some((a, b)) = s.split_once("..") else {
        bail!("expected a range A..B, found `{s}`")
    };
    let (a, b): (u64, u64) = (a.trim().parse()?, b.trim().parse()?);
    if b < a {
        bail!("empty seed range {a}..{b}");
    }
    Ok(a..b)
}

/// Front-end checks of a generated program; returns its HIR.
pub fn front_end(p: &GeneratedProgram) -> Result<hir::Program, String> {
    let parsed = frontend::parse(&p.source).map_err(|d| format!("parse: {d:?}"))?;
    if parsed.without_spans() != p.unit.without_spans() {
        return Err("round trip: the re-parsed tree differs".into());
    }
    let program = frontend::analyze(&parsed, &LineIndex::new(&p.source))
        .map_err(|d| format!("sema: {d:?}"))?;
    frontend::hir_check::check(&program).map_err(|e| format!("hir-check: {e:?}"))?;
    sysy_generator::grammar::strict(&p.unit).map_err(|e| format!("grammar: {e}"))?;
    Ok(program)
}

/// Runs the interpreter (with coverage), then gcc, then sysyc under qemu, on a program that
/// passed the front end.
fn run_checks(p: &GeneratedProgram, program: &hir::Program, args: &StatsArgs, engines: &Engines) -> Result<PassedChecks, String> {
    let lines = LineIndex::new(&p.source);
    let config = RefConfig { max_steps: args.max_steps, ..RefConfig::default() };
    let outcome = refinterp::run(program, &lines, &p.stdin, &config).map_err(|e| format!("interpreter: {e}"))?;
    if let Some(trap) = &outcome.trap {
        return Err(format!("trap: {} at {:?} {}", trap.kind, trap.loc, trap.detail));
    }
    let mut checked = PassedChecks {
        steps: Some(outcome.steps),
        coverage: Some(coverage_of(p, program, args.max_steps, &outcome).map_err(|e| format!("coverage: {e}"))?),
        ..PassedChecks::default()
    };
    if engines.gcc.is_none() && engines.qemu.is_none() {
        return Ok(checked);
    }
    let name = format!("seed-{}", p.seed.unwrap_or_default());
    let subject = Subject::from_ast(&name, &p.unit, &p.source, &p.stdin).map_err(|f| format!("front end: {f}"))?;
    let case = Case { subject, expected: Expected::Outcome(outcome) };
    if let Some(gcc) = &engines.gcc {
        gcc.run(&case).verdict.map_err(|f| format!("gcc: disagrees with the interpreter: {f}"))?;
        checked.gcc_agrees = Some(true);
    }
    if let Some(qemu) = &engines.qemu {
        let run = qemu.run(&case);
        run.verdict.map_err(|f| format!("qemu: sysyc -O0 disagrees with the interpreter: {f}"))?;
        checked.qemu_run = Some(run.timing.duration(Phase::Qemu));
    }
    Ok(checked)
}

fn check_one(
    seed: u64,
    args: &StatsArgs,
    fixed: &Option<sysy_generator::GenConfig>,
    engines: &Engines,
) -> Record {
    let config = args.config.config_for(seed, fixed);
    let start = Instant::now();
    let p = generate(seed, &config);
    let gen_time = start.elapsed();
    let result = front_end(&p).and_then(|program| run_checks(&p, &program, args, engines));
    Record {
        seed,
        lines: p.lines(),
        estimated_work: p.estimated_work,
        gen_time,
        features: p.features,
        result,
    }
}

/// `min / median / p90 / max` of a list.
fn distribution(mut xs: Vec<u64>) -> String {
    if xs.is_empty() {
        return "-".into();
    }
    xs.sort_unstable();
    let at = |q: f64| xs[((xs.len() - 1) as f64 * q).round() as usize];
    format!(
        "min {} / median {} / p90 {} / max {}",
        xs[0],
        at(0.5),
        at(0.9),
        xs[xs.len() - 1]
    )
}

/// Coverage distribution (percent of each program's statements that ran) and the statements
/// that never ran, by kind and by place.
fn coverage_report(out: &mut String, coverages: &[&ProgramCoverage]) {
    let mut percents: Vec<f64> = coverages.iter().map(|c| c.percent()).collect();
    percents.sort_by(f64::total_cmp);
    let at = |q: f64| percents[((percents.len() - 1) as f64 * q).round() as usize];
    let _ = writeln!(
        out,
        "statement coverage (%): min {:.1} / p10 {:.1} / median {:.1} / p90 {:.1} / max {:.1}",
        percents[0],
        at(0.1),
        at(0.5),
        at(0.9),
        percents[percents.len() - 1]
    );
    let total: usize = coverages.iter().map(|c| c.total).sum();
    let mut by_kind: std::collections::BTreeMap<(Place, StmtKind), usize> = Default::default();
    for c in coverages {
        for &(kind, place, _) in &c.missed {
            *by_kind.entry((place, kind)).or_default() += 1;
        }
    }
    let missed: usize = by_kind.values().sum();
    let _ = writeln!(
        out,
        "statements never run: {missed} of {total} ({:.1}%), by place and kind:",
        100.0 * missed as f64 / total.max(1) as f64
    );
    let mut rows: Vec<_> = by_kind.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1));
    for ((place, kind), n) in rows {
        let _ = writeln!(
            out,
            "  {:<10} {:<9} {:>7} ({:.1}% of all statements)",
            format!("{place:?}"),
            format!("{kind:?}"),
            n,
            100.0 * n as f64 / total.max(1) as f64
        );
    }
}

/// Runs the checks over the seed range and returns the report text.
pub fn run_stats(args: &StatsArgs) -> Result<String> {
    let seeds = parse_range(&args.seeds)?;
    let fixed = args.config.load()?;
    let settings = RunSettings::new(Limits::GENERATED);
    let o0 = sysyc::config::Config::level(OptLevel::O0);
    let engines = Engines {
        gcc: if args.gcc { Some(GccEngine::new(OptLevel::O0, &settings).map_err(anyhow::Error::msg)?) } else { None },
        qemu: if args.qemu { Some(CompiledEngine::qemu(&o0, &settings).map_err(anyhow::Error::msg)?) } else { None },
    };
    let start = Instant::now();
    let records: Vec<Record> = seeds.clone().into_par_iter().map(|s| check_one(s, args, &fixed, &engines)).collect();
    let wall = start.elapsed();
    Ok(report(&records, wall, args))
}

fn report(records: &[Record], wall: Duration, args: &StatsArgs) -> String {
    let n = records.len().max(1);
    let mut out = String::new();
    let failed: Vec<&Record> = records.iter().filter(|r| r.result.is_err()).collect();
    let _ = writeln!(
        out,
        "programs: {}   passed: {}   failed: {}",
        records.len(),
        records.len() - failed.len(),
        failed.len()
    );
    let mut stages: std::collections::BTreeMap<String, usize> = Default::default();
    for r in &failed {
        if let Err(e) = &r.result {
            *stages
                .entry(e.split(':').next().unwrap_or("").to_string())
                .or_default() += 1;
        }
    }
    for (stage, count) in &stages {
        let _ = writeln!(out, "  failed at {stage}: {count}");
    }
    let _ = writeln!(
        out,
        "lines: {}",
        distribution(records.iter().map(|r| r.lines as u64).collect())
    );
    let steps: Vec<u64> = records
        .iter()
        .filter_map(|r| r.result.as_ref().ok()?.steps)
        .collect();
    if steps.is_empty() {
        let _ = writeln!(out, "interpreter: not run (not available in this build)");
    } else {
        let _ = writeln!(
            out,
            "interpreter: {} ran without a trap; steps: {}",
            steps.len(),
            distribution(steps)
        );
    }
    let mut ratios: Vec<f64> = records
        .iter()
        .filter_map(|r| {
            let steps = r.result.as_ref().ok()?.steps?;
            Some(steps as f64 / r.estimated_work.max(1) as f64)
        })
        .collect();
    if !ratios.is_empty() {
        ratios.sort_by(f64::total_cmp);
        let _ = writeln!(
            out,
            "steps / estimated work: median {:.3}, p90 {:.3}, max {:.3}",
            ratios[ratios.len() / 2],
            ratios[(ratios.len() - 1) * 9 / 10],
            ratios[ratios.len() - 1]
        );
    }
    let coverages: Vec<&ProgramCoverage> = records
        .iter()
        .filter_map(|r| r.result.as_ref().ok()?.coverage.as_ref())
        .collect();
    if !coverages.is_empty() {
        coverage_report(&mut out, &coverages);
    }
    if args.gcc {
        let agreed = records
            .iter()
            .filter(|r| r.result.as_ref().is_ok_and(|c| c.gcc_agrees == Some(true)))
            .count();
        let _ = writeln!(
            out,
            "gcc -O0 under qemu agrees with the interpreter: {agreed} / {}",
            records.len()
        );
    }
    let qemu_runs: Vec<u64> = records
        .iter()
        .filter_map(|r| r.result.as_ref().ok()?.qemu_run)
        .map(|d| d.as_millis() as u64)
        .collect();
    if args.qemu {
        let _ = writeln!(
            out,
            "sysyc -O0 under qemu agrees with the interpreter: {} / {}; run time (ms): {}",
            qemu_runs.len(),
            records.len(),
            distribution(qemu_runs)
        );
    }
    let gen_total: Duration = records.iter().map(|r| r.gen_time).sum();
    let _ = writeln!(
        out,
        "generation: {:.0} programs/s per thread ({:.2} ms each); wall time of the whole run {:.1} s",
        records.len() as f64 / gen_total.as_secs_f64().max(1e-9),
        gen_total.as_secs_f64() * 1000.0 / n as f64,
        wall.as_secs_f64()
    );
    let _ = writeln!(out, "feature coverage (fraction of programs):");
    for &f in Feature::ALL {
        let used = records.iter().filter(|r| r.features.contains(f)).count();
        let _ = writeln!(
            out,
            "  {:<26} {:>6.1}%",
            f.slug(),
            100.0 * used as f64 / n as f64
        );
    }
    let mut low: Vec<(&Record, &ProgramCoverage)> = records
        .iter()
        .filter_map(|r| Some((r, r.result.as_ref().ok()?.coverage.as_ref()?)))
        .collect();
    low.sort_by(|a, b| a.1.percent().total_cmp(&b.1.percent()));
    for (r, c) in low.iter().take(args.show_low_coverage) {
        let lines: Vec<String> = c.missed.iter().take(12).map(|m| m.2.to_string()).collect();
        let _ = writeln!(
            out,
            "--- seed {}: coverage {:.1}% ({} of {}); not run, lines {}",
            r.seed,
            c.percent(),
            c.executed,
            c.total,
            lines.join(" ")
        );
    }
    for r in failed.iter().take(args.show_failures) {
        if let Err(e) = &r.result {
            let _ = writeln!(out, "--- seed {} failed: {e}", r.seed);
        }
    }
    out
}
