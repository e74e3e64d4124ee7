//! `harness bench`: a suite of cases compiled by sysyc, run under qemu-arm with the cost
//! plugin, judged against their `.out` files, and optionally compared with gcc at `-O2` on the
//! C translation of the same program.
//!
//! Every case yields one [`BenchRow`]: our [`Measurement`] (verdict, exact executed
//! instructions by class and program/runtime split, estimated cycles, compile/build/run time)
//! and, under `--vs-gcc`, gcc's. A ratio ours/gcc is only formed when both runs passed (a wrong
//! answer has no meaningful cost); [`Summary`] gives the geometric means of those ratios.
//! `--overhead` additionally runs our executable under plain qemu-arm (no plugin) to measure
//! what the plugin costs in wall time.
//!
//! Cases run on a rayon pool of `jobs` threads; rows are returned in case order whatever the
//! scheduling, and counts are deterministic (see [`sysy_check::qemu`]), so two runs of the same
//! suite produce the same CSV apart from the time columns. The tables themselves are written
//! by [`report`].

pub mod report;

use crate::conform::{self, CaseFiles, Verdict};
use sysy_check::engine::{CompiledEngine, Engine, EngineRun, GccEngine, RunSettings};
use sysy_check::executor::timing::{Phase, Timing};
use sysy_check::qemu::RunCost;
use rayon::prelude::*;
use std::time::Duration;
use sysyc::config::Config;
use sysyc::passes::OptLevel;

/// One engine's run of one case.
#[derive(Clone, Debug)]
pub struct Measurement {
    pub verdict: Verdict,
    /// Why it did not pass (empty for a pass).
    pub reason: String,
    /// Present when the run was measured, also for a run killed at its time limit (then
    /// `counts.complete` is false and the counts are partial).
    pub cost: Option<RunCost>,
    pub timing: Timing,
}

impl Measurement {
    fn of(name: &str, run: &EngineRun) -> Measurement {
        let report = conform::report_run(name, run);
        Measurement { verdict: report.verdict, reason: report.reason, cost: run.cost.clone(), timing: run.timing }
    }

    /// Source to assembly (sysyc) or to an object file (gcc).
    pub fn compile(&self) -> Duration {
        self.timing.total().saturating_sub(self.build() + self.run())
    }

    /// Assembling and linking.
    pub fn build(&self) -> Duration {
        self.timing.duration(Phase::Link)
    }

    /// The qemu-arm run.
    pub fn run(&self) -> Duration {
        self.timing.duration(Phase::Qemu)
    }

    fn unloadable(reason: String) -> Measurement {
        Measurement {
            verdict: Verdict::Error,
            reason,
            cost: None,
            timing: Timing::default(),
        }
    }

    /// Executed instructions of a passing, completely measured run.
    pub fn passing_insns(&self) -> Option<u64> {
        self.passing_cost().map(|c| c.counts.total)
    }

    /// Estimated cycles of a passing, completely measured run.
    pub fn passing_cycles(&self) -> Option<u64> {
        self.passing_cost().map(|c| c.cycles.total)
    }

    /// Executed instructions of the program's own code (the runtime library and libc left
    /// out) of a passing, completely measured run.
    pub fn passing_program_insns(&self) -> Option<u64> {
        self.passing_cost().map(|c| c.counts.program_total())
    }

    /// Estimated cycles of the program's own code of a passing, completely measured run.
    pub fn passing_program_cycles(&self) -> Option<u64> {
        self.passing_cost().map(|c| c.cycles.program)
    }

    fn passing_cost(&self) -> Option<&RunCost> {
        self.cost
            .as_ref()
            .filter(|c| self.verdict == Verdict::Pass && c.counts.complete)
    }
}

/// Everything measured for one case.
#[derive(Clone, Debug)]
pub struct BenchRow {
    pub case: String,
    pub ours: Measurement,
    pub gcc: Option<Measurement>,
    /// Wall time of our executable under plain qemu-arm (`--overhead`).
    pub plain_run: Option<Duration>,
}

impl BenchRow {
    /// ours/gcc in instructions, when both passed.
    pub fn insn_ratio(&self) -> Option<f64> {
        ratio(self.ours.passing_insns(), self.gcc.as_ref()?.passing_insns())
    }

    /// ours/gcc in estimated cycles, when both passed.
    pub fn cycle_ratio(&self) -> Option<f64> {
        ratio(self.ours.passing_cycles(), self.gcc.as_ref()?.passing_cycles())
    }

    /// ours/gcc in instructions of the program's own code, when both passed: each side's
    /// runtime (our freestanding one, glibc's `scanf`/`printf` for gcc) left out.
    pub fn program_insn_ratio(&self) -> Option<f64> {
        ratio(self.ours.passing_program_insns(), self.gcc.as_ref()?.passing_program_insns())
    }

    /// ours/gcc in estimated cycles of the program's own code, when both passed.
    pub fn program_cycle_ratio(&self) -> Option<f64> {
        ratio(self.ours.passing_program_cycles(), self.gcc.as_ref()?.passing_program_cycles())
    }

    /// Wall time with the plugin over wall time without it, minus one (`--overhead`).
    pub fn plugin_overhead(&self) -> Option<f64> {
        let plain = self.plain_run?.as_secs_f64();
        (plain > 0.0 && self.ours.cost.is_some())
            .then(|| self.ours.run().as_secs_f64() / plain - 1.0)
    }
}

fn ratio(ours: Option<u64>, theirs: Option<u64>) -> Option<f64> {
    match (ours, theirs) {
        (Some(a), Some(b)) if a > 0 && b > 0 => Some(a as f64 / b as f64),
        _ => None,
    }
}

/// The geometric mean of positive values (`None` for none).
pub fn geomean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values
        .into_iter()
        .filter(|v| *v > 0.0 && v.is_finite())
        .fold((0.0, 0usize), |(s, n), v| (s + v.ln(), n + 1));
    (n > 0).then(|| (sum / n as f64).exp())
}

/// What a suite run adds up to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub cases: usize,
    pub passed: usize,
    pub gcc_passed: usize,
    /// Cases with a ratio (both passed).
    pub compared: usize,
    pub geomean_insn_ratio: Option<f64>,
    pub geomean_cycle_ratio: Option<f64>,
    /// The same over the program's own code only.
    pub geomean_program_insn_ratio: Option<f64>,
    pub geomean_program_cycle_ratio: Option<f64>,
    /// Mean plugin overhead over the cases run with `--overhead`.
    pub mean_plugin_overhead: Option<f64>,
}

impl Summary {
    pub fn of(rows: &[BenchRow]) -> Summary {
        let overheads: Vec<f64> = rows.iter().filter_map(BenchRow::plugin_overhead).collect();
        Summary {
            cases: rows.len(),
            passed: rows.iter().filter(|r| r.ours.verdict == Verdict::Pass).count(),
            gcc_passed: rows
                .iter()
                .filter(|r| r.gcc.as_ref().is_some_and(|g| g.verdict == Verdict::Pass))
                .count(),
            compared: rows.iter().filter(|r| r.insn_ratio().is_some()).count(),
            geomean_insn_ratio: geomean(rows.iter().filter_map(BenchRow::insn_ratio)),
            geomean_cycle_ratio: geomean(rows.iter().filter_map(BenchRow::cycle_ratio)),
            geomean_program_insn_ratio: geomean(rows.iter().filter_map(BenchRow::program_insn_ratio)),
            geomean_program_cycle_ratio: geomean(rows.iter().filter_map(BenchRow::program_cycle_ratio)),
            mean_plugin_overhead: (!overheads.is_empty())
                .then(|| overheads.iter().sum::<f64>() / overheads.len() as f64),
        }
    }
}

/// The engines of a bench run.
pub struct Engines {
    pub ours: CompiledEngine,
    pub gcc: Option<GccEngine>,
    /// Our executables without the plugin (`--overhead`).
    pub plain: Option<CompiledEngine>,
}

impl Engines {
    /// Our engine measuring `config` under `settings` (whose `measure_cost` is forced on);
    /// gcc at `-O2` with the same limits when `vs_gcc`; plain qemu when `overhead`.
    pub fn new(config: &Config, settings: &RunSettings, vs_gcc: bool, overhead: bool) -> Result<Engines, String> {
        let measured = RunSettings { measure_cost: true, ..settings.clone() };
        let plain = RunSettings { measure_cost: false, ..settings.clone() };
        Ok(Engines {
            ours: CompiledEngine::qemu(config, &measured)?,
            gcc: if vs_gcc { Some(GccEngine::new(OptLevel::O2, &measured)?) } else { None },
            plain: if overhead { Some(CompiledEngine::qemu(config, &plain)?) } else { None },
        })
    }
}

/// Runs one case with every engine.
pub fn bench_case(engines: &Engines, files: &CaseFiles) -> BenchRow {
    let case = match conform::load(files) {
        Ok(case) => case,
        Err(reason) => {
            return BenchRow {
                case: files.name.clone(),
                ours: Measurement::unloadable(reason.clone()),
                gcc: engines.gcc.as_ref().map(|_| Measurement::unloadable(reason)),
                plain_run: None,
            };
        }
    };
    let ours = Measurement::of(&files.name, &engines.ours.run(&case));
    let gcc = engines.gcc.as_ref().map(|gcc| Measurement::of(&files.name, &gcc.run(&case)));
    let plain_run = engines.plain.as_ref().and_then(|plain| {
        let run = plain.run(&case);
        run.verdict.is_ok().then(|| run.timing.duration(Phase::Qemu))
    });
    BenchRow { case: files.name.clone(), ours, gcc, plain_run }
}

/// Runs every case on `jobs` threads; `progress` is called with each row as it finishes
/// (in completion order). Rows come back in the order of `cases`.
pub fn bench_suite(
    engines: &Engines,
    cases: &[CaseFiles],
    jobs: usize,
    progress: &(dyn Fn(&BenchRow) + Sync),
) -> Result<Vec<BenchRow>, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| format!("cannot start worker threads: {e}"))?;
    Ok(pool.install(|| {
        cases
            .par_iter()
            .map(|files| {
                let row = bench_case(engines, files);
                progress(&row);
                row
            })
            .collect()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysy_cost_model::counts::ModeStats;
    use sysy_cost_model::layout::ModeMapStatus;
    use sysy_cost_model::{ClassCounts, CostCounts, CycleEstimate, InsnClass};

    fn cost(total: u64, complete: bool) -> RunCost {
        let mut per_class = ClassCounts::default();
        per_class.add(InsnClass::Alu, total);
        let counts = CostCounts {
            complete,
            total,
            per_class,
            program: per_class,
            runtime: ClassCounts::default(),
            mode_stats: ModeStats {
                translations: 0,
                from_symbols: 0,
                from_heuristic: 0,
                heuristic_disagreements: 0,
                mode_map: ModeMapStatus::NotRequested,
            },
        };
        let cycles = CycleEstimate {
            total: total * 2,
            program: total * 2,
            runtime: 0,
        };
        RunCost { counts, cycles }
    }

    fn measured(verdict: Verdict, cost: Option<RunCost>) -> Measurement {
        Measurement {
            verdict,
            reason: if verdict == Verdict::Pass { String::new() } else { "line 1: expected `1`, got `2`".into() },
            cost,
            timing: Timing::default(),
        }
    }

    fn row(name: &str, ours: Measurement, gcc: Measurement) -> BenchRow {
        BenchRow { case: name.into(), ours, gcc: Some(gcc), plain_run: None }
    }

    #[test]
    fn geomean_of_ratios() {
        assert_eq!(geomean([]), None);
        let g = geomean([2.0, 8.0]).expect("mean");
        assert!((g - 4.0).abs() < 1e-12);
    }

    #[test]
    fn ratios_only_between_passing_complete_runs() {
        let rows = vec![
            row("a", measured(Verdict::Pass, Some(cost(300, true))), measured(Verdict::Pass, Some(cost(100, true)))),
            row("b", measured(Verdict::Pass, Some(cost(100, true))), measured(Verdict::Pass, Some(cost(300, true)))),
            // Wrong answer: no ratio, whatever it cost.
            row("c", measured(Verdict::Fail, Some(cost(1, true))), measured(Verdict::Pass, Some(cost(100, true)))),
            // Timed out with partial counts: no ratio either.
            row("d", measured(Verdict::Timeout, Some(cost(50, false))), measured(Verdict::Pass, Some(cost(100, true)))),
        ];
        assert_eq!(rows[0].insn_ratio(), Some(3.0));
        assert_eq!(rows[2].insn_ratio(), None);
        assert_eq!(rows[3].cycle_ratio(), None);
        let s = Summary::of(&rows);
        assert_eq!((s.cases, s.passed, s.gcc_passed, s.compared), (4, 2, 4, 2));
        assert!((s.geomean_insn_ratio.expect("mean") - 1.0).abs() < 1e-12);
        assert!((s.geomean_cycle_ratio.expect("mean") - 1.0).abs() < 1e-12);
    }

    #[test]
    fn csv_and_markdown_tables() {
        let rows = vec![
            row("a", measured(Verdict::Pass, Some(cost(300, true))), measured(Verdict::Pass, Some(cost(100, true)))),
            row("d", measured(Verdict::Timeout, Some(cost(5_000_000, false))), measured(Verdict::Pass, Some(cost(100, true)))),
        ];
        let mut csv = Vec::new();
        report::write_csv(&rows, &mut csv).expect("csv");
        let mut reader = csv::Reader::from_reader(csv.as_slice());
        let header: Vec<String> = reader.headers().expect("header").iter().map(String::from).collect();
        let records: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("record")).collect();
        assert_eq!(records.len(), 2);
        assert!(header.iter().any(|h| h == "class_vfp_div") && header.iter().any(|h| h == "insn_ratio"));
        let col = |name: &str| header.iter().position(|h| h == name).expect(name);
        let first = &records[0];
        assert_eq!(first.len(), header.len());
        assert_eq!(&first[col("insns")], "300");
        assert_eq!(&first[col("class_alu")], "300");
        assert_eq!(&first[col("insn_ratio")], "3.0000");
        let second = &records[1];
        assert_eq!((&second[col("complete")], &second[col("insn_ratio")]), ("false", ""));
        assert_eq!(&second[col("reason")], "line 1: expected `1`, got `2`");

        let info = report::RunInfo { suite: "s".into(), pipeline: "-O2".into(), command: "harness bench s".into() };
        let md = report::markdown(&rows, &info);
        assert!(md.contains("geomean ours/gcc: instructions 3.0000, cycles 3.0000"), "{md}");
        assert!(md.contains("TIMEOUT (partial 5.00M)"), "{md}");
        assert!(md.contains("| alu | 300 | 100 | 3.0000 |"), "{md}");
    }
}
