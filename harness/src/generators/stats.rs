//! `harness gen-stats`: generate a range of seeds, check each program, and summarise.
//!
//! Per program: generation time; front end (parse, printer round trip to the same tree,
//! semantic analysis, HIR invariants, strict SysY grammar); the reference interpreter (no
//! trap within the step budget); optionally gcc (`--gcc`: the HIR→C emitter, the ARM cross
//! gcc at `-O0 -fwrapv -fsingle-precision-constant`, qemu) agreeing with the interpreter on
//! stdout and exit status. The summary gives pass/fail counts, distributions of size and
//! steps, the generation speed, and a feature coverage table.
//!
//! The interpreter and gcc are passed in as [`Runners`] (the binary wires the engines), so
//! this module depends on nothing but the front end and the generator.

use super::cli::ConfigArgs;
use super::{Feature, FeatureSet, GeneratedProgram, generate};
use anyhow::{Result, bail};
use rayon::prelude::*;
use std::fmt::Write as _;
use std::time::{Duration, Instant};
use sysyc::frontend::{self, LineIndex, hir};
use sysyc::runtime::Outcome;

/// Runs a program in the reference interpreter: `(program, its HIR, step budget)`.
pub type InterpRunner<'a> =
    dyn Fn(&GeneratedProgram, &hir::Program, u64) -> Result<Outcome, String> + Sync + 'a;
/// Runs a program's C translation compiled by gcc (at `-O0`) under qemu.
pub type GccRunner<'a> = dyn Fn(&GeneratedProgram) -> Result<Outcome, String> + Sync + 'a;

/// The engines `gen-stats` can use.
#[derive(Default, Clone, Copy)]
pub struct Runners<'a> {
    pub interp: Option<&'a InterpRunner<'a>>,
    pub gcc: Option<&'a GccRunner<'a>>,
}

/// `harness gen-stats --seeds A..B [--swarm | --config FILE] [--gcc]`
#[derive(clap::Args, Debug)]
pub struct StatsArgs {
    /// Seed range `A..B` (B exclusive).
    #[arg(long, default_value = "0..1000")]
    pub seeds: String,
    #[command(flatten)]
    pub config: ConfigArgs,
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
}

/// What happened to one program.
#[derive(Clone, Debug)]
pub struct Record {
    pub seed: u64,
    pub lines: usize,
    pub gen_time: Duration,
    pub features: FeatureSet,
    /// `Err(stage: reason)` for the first failed check.
    pub result: Result<Checked, String>,
}

/// The results of a program that passed the checks.
#[derive(Clone, Debug, Default)]
pub struct Checked {
    /// Interpreter steps (`None`: not interpreted).
    pub steps: Option<u64>,
    /// gcc agreed with the interpreter (`None`: not run).
    pub gcc_agrees: Option<bool>,
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
    super::grammar::strict(&p.unit).map_err(|e| format!("grammar: {e}"))?;
    Ok(program)
}

/// Runs the interpreter, then gcc, on a program that passed the front end.
fn run_checks(
    p: &GeneratedProgram,
    program: &hir::Program,
    args: &StatsArgs,
    runners: Runners<'_>,
) -> Result<Checked, String> {
    let mut checked = Checked::default();
    let Some(interp) = runners.interp else {
        return Ok(checked);
    };
    let outcome = interp(p, program, args.max_steps).map_err(|e| format!("interpreter: {e}"))?;
    if let Some(trap) = &outcome.trap {
        return Err(format!(
            "trap: {} at {:?} {}",
            trap.kind, trap.loc, trap.detail
        ));
    }
    checked.steps = Some(outcome.steps);
    if let Some(gcc) = runners.gcc {
        let native = gcc(p).map_err(|e| format!("gcc: {e}"))?;
        if !native.same_behaviour(&outcome) {
            return Err(format!(
                "gcc: disagrees with the interpreter (exit {:?} vs {:?}, stdout {} vs {} bytes)",
                native.exit_status,
                outcome.exit_status,
                native.stdout.len(),
                outcome.stdout.len()
            ));
        }
        checked.gcc_agrees = Some(true);
    }
    Ok(checked)
}

fn check_one(
    seed: u64,
    args: &StatsArgs,
    fixed: &Option<super::GenConfig>,
    runners: Runners<'_>,
) -> Record {
    let config = args.config.config_for(seed, fixed);
    let start = Instant::now();
    let p = generate(seed, &config);
    let gen_time = start.elapsed();
    let result = front_end(&p).and_then(|program| run_checks(&p, &program, args, runners));
    Record {
        seed,
        lines: p.lines(),
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

/// Runs the checks over the seed range and returns the report text.
pub fn run_stats(args: &StatsArgs, runners: Runners<'_>) -> Result<String> {
    let seeds = parse_range(&args.seeds)?;
    let fixed = args.config.load()?;
    if args.gcc && (runners.gcc.is_none() || runners.interp.is_none()) {
        bail!(
            "--gcc needs the reference interpreter and the gcc engine, which this build does not provide"
        );
    }
    let runners = Runners {
        gcc: if args.gcc { runners.gcc } else { None },
        ..runners
    };
    let start = Instant::now();
    let records: Vec<Record> = seeds
        .clone()
        .into_par_iter()
        .map(|s| check_one(s, args, &fixed, runners))
        .collect();
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
    for r in failed.iter().take(args.show_failures) {
        if let Err(e) = &r.result {
            let _ = writeln!(out, "--- seed {} failed: {e}", r.seed);
        }
    }
    out
}
