//! The campaign report: `summary.md` for people and `stats.csv` (`metric,value`) for
//! scripts, both computed from the records (`runs.csv`, `programs.csv`), so a resumed
//! campaign reports on everything it did, before and after the interruption.
//!
//! Throughput (checks/s) is the one figure that is not in the records: it is measured over
//! this session only (the checks made since the campaign started or resumed, divided by its
//! wall-clock time).
//!
//! Dedup ratio: the share of checks that reused an earlier configuration's result — of the
//! back end (same optimised IR and stage set) or of the qemu run (same assembly).

use super::records::{self, Phase, ProgramLine, Row, SelfTest, Timing};
use super::reproduce::CostTotals;
use anyhow::Result;
use std::path::Path;
use sysy_check::failure::FailureKind;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use sysyc::config::Config;
use sysyc::isa::arm::BackendStage;
use sysyc::passes::ir_passes;

/// Figures of this session (not derivable from the records).
#[derive(Clone, Debug, Default)]
pub struct Session {
    pub campaign_id: String,
    pub seconds: f64,
    pub checks: u64,
    pub programs: u64,
    pub jobs: usize,
    pub interrupted: bool,
    pub failure_dirs: Vec<String>,
    /// qemu runs (distinct assembly texts run) of the programs checked this session.
    pub qemu_runs: u64,
}

/// Figures derived from the records.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub programs: u64,
    pub discarded: u64,
    pub discard_reasons: BTreeMap<String, u64>,
    pub configs: u64,
    pub checks: u64,
    pub backend_runs: u64,
    pub backend_shared: u64,
    pub qemu_runs: u64,
    pub qemu_shared: u64,
    pub timeouts: u64,
    pub failures: u64,
    pub failing_programs: u64,
    pub by_kind: BTreeMap<FailureKind, u64>,
    /// label → (config id, failures)
    pub by_config: BTreeMap<String, (String, u64)>,
    /// pass → (pipeline positions run, positions that changed the module)
    pub pass_changes: BTreeMap<String, (u64, u64)>,
    pub insns: u64,
    /// Functions on which the data-flow solvers were compared.
    pub analysis_functions: u64,
    /// Self-tests that failed (programs).
    pub selftest_failures: u64,
    /// Assembly texts the encoder oracle compared with GNU as.
    pub encoder_texts: u64,
    /// Worker time per phase, summed over the programs.
    pub time: Timing,
}

/// What a campaign directory's records add up to, read one line at a time
/// ([`Totals::read`]).
pub struct Totals {
    pub stats: Stats,
    pub costs: CostTotals,
    /// One more than the highest program number recorded (`None`: none recorded).
    pub programs_reached: Option<u64>,
}

impl Totals {
    /// Folds `programs.csv`, `selftests.csv` and `runs.csv` of `dir`, handing each row to
    /// `each_row` as well (for a figure of the caller's own).
    pub fn read(dir: &Path, mut each_row: impl FnMut(&Row)) -> Result<Totals> {
        let mut stats = Stats::fold();
        let mut programs_reached = None;
        records::for_each_program(dir, |p| {
            programs_reached = programs_reached.max(Some(p.program + 1));
            stats.add_program(&p);
        })?;
        records::for_each_selftest(dir, |t| stats.add_selftest(&t))?;
        let mut costs = CostTotals::default();
        records::for_each_run(dir, |r| {
            stats.add(&r);
            costs.add(&r);
            each_row(&r);
        })?;
        Ok(Totals { stats: stats.finish(), costs, programs_reached })
    }
}

/// [`Stats`] being computed from `runs.csv` one row at a time ([`Stats::fold`]): the sets
/// behind its distinct counts.
pub struct StatsFold {
    stats: Stats,
    /// Hashes of the configuration ids seen (a night has millions of rows, most of them with
    /// a configuration of their own).
    configs: rustc_hash::FxHashSet<u64>,
    failing_programs: BTreeSet<u64>,
}

impl StatsFold {
    pub fn add(&mut self, r: &Row) {
        let s = &mut self.stats;
        self.configs.insert(std::hash::BuildHasher::hash_one(&rustc_hash::FxBuildHasher, &r.config_id));
        s.checks += 1;
        if !r.asm_hash.is_empty() {
            if r.ir_shared { s.backend_shared += 1 } else { s.backend_runs += 1 }
            if r.asm_shared { s.qemu_shared += 1 } else { s.qemu_runs += 1 }
        }
        if !r.asm_shared {
            s.insns += r.insns.unwrap_or(0);
        }
        if let Some(kind) = r.kind {
            s.failures += 1;
            self.failing_programs.insert(r.program);
            *s.by_kind.entry(kind).or_default() += 1;
            s.by_config.entry(r.label.clone()).or_insert_with(|| (r.config_id.clone(), 0)).1 += 1;
            if kind == FailureKind::Timeout {
                s.timeouts += 1;
            }
        }
        // Rows of a compiler that had passes this one does not know parse to nothing.
        let passes = r.config.parse::<Config>().map(|c| c.pass_names()).unwrap_or_default();
        for (pass, changed) in passes.into_iter().zip(r.passes_changed.chars()) {
            let e = match s.pass_changes.get_mut(pass) {
                Some(e) => e,
                None => s.pass_changes.entry(pass.to_string()).or_default(),
            };
            e.0 += 1;
            e.1 += u64::from(changed == '1');
        }
    }

    pub fn add_program(&mut self, p: &ProgramLine) {
        let s = &mut self.stats;
        s.time.merge(&p.timing);
        s.analysis_functions += p.analysis_functions;
        if p.status == records::ProgramStatus::Checked {
            s.programs += 1;
        } else {
            s.discarded += 1;
            let reason: String = p.reason.chars().take(80).collect();
            *s.discard_reasons.entry(reason).or_default() += 1;
        }
    }

    pub fn add_selftest(&mut self, t: &SelfTest) {
        self.stats.selftest_failures += u64::from(t.kind.is_some());
        if t.oracle == "encoder" {
            self.stats.encoder_texts += t.checked;
        }
    }

    pub fn finish(self) -> Stats {
        Stats { configs: self.configs.len() as u64, failing_programs: self.failing_programs.len() as u64, ..self.stats }
    }
}

impl Stats {
    pub fn compute(rows: &[Row], programs: &[ProgramLine], selftests: &[SelfTest]) -> Stats {
        let mut fold = Stats::fold();
        programs.iter().for_each(|p| fold.add_program(p));
        selftests.iter().for_each(|t| fold.add_selftest(t));
        rows.iter().for_each(|r| fold.add(r));
        fold.finish()
    }

    /// Nothing yet: the lines of `programs.csv`, `selftests.csv` and `runs.csv` are then
    /// added one by one.
    pub fn fold() -> StatsFold {
        StatsFold { stats: Stats::default(), configs: Default::default(), failing_programs: BTreeSet::new() }
    }

    /// Share of checks (that reached the back end) that reused an earlier back-end result.
    pub fn backend_dedup(&self) -> f64 {
        ratio(self.backend_shared, self.backend_shared + self.backend_runs)
    }

    /// Share of checks (that reached qemu) that reused an earlier qemu run.
    pub fn qemu_dedup(&self) -> f64 {
        ratio(self.qemu_shared, self.qemu_shared + self.qemu_runs)
    }

    /// Registered IR passes that never changed a program (with whether they ran at all).
    pub fn never_fired(&self) -> Vec<(&'static str, bool)> {
        ir_passes()
            .filter(|p| self.pass_changes.get(p.name).is_none_or(|(_, changed)| *changed == 0))
            .map(|p| (p.name, self.pass_changes.get(p.name).is_some_and(|(runs, _)| *runs > 0)))
            .collect()
    }
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 / whole as f64 }
}

fn per_second(n: u64, seconds: f64) -> f64 {
    if seconds > 0.0 { n as f64 / seconds } else { 0.0 }
}

/// `stats.csv`: one `metric,value` line per figure.
pub fn stats_csv(stats: &Stats, session: &Session) -> String {
    let mut out = String::from("metric,value\n");
    let mut put = |k: &str, v: String| {
        let _ = writeln!(out, "{k},{v}");
    };
    put("programs", stats.programs.to_string());
    put("discarded_programs", stats.discarded.to_string());
    put("configs", stats.configs.to_string());
    put("checks", stats.checks.to_string());
    put("failures", stats.failures.to_string());
    put("failing_programs", stats.failing_programs.to_string());
    put("timeouts", stats.timeouts.to_string());
    put("backend_dedup_ratio", format!("{:.4}", stats.backend_dedup()));
    put("qemu_dedup_ratio", format!("{:.4}", stats.qemu_dedup()));
    put("qemu_runs", stats.qemu_runs.to_string());
    put("session_seconds", format!("{:.1}", session.seconds));
    put("session_checks", session.checks.to_string());
    put("session_programs", session.programs.to_string());
    put("session_checks_per_s", format!("{:.2}", per_second(session.checks, session.seconds)));
    put("session_programs_per_s", format!("{:.3}", per_second(session.programs, session.seconds)));
    put("session_qemu_runs", session.qemu_runs.to_string());
    put("session_qemu_runs_per_s", format!("{:.2}", per_second(session.qemu_runs, session.seconds)));
    put("encoder_texts_compared", stats.encoder_texts.to_string());
    for phase in Phase::ALL {
        put(&format!("worker_s:{}", phase.name()), format!("{:.3}", stats.time.get(phase) as f64 / 1e6));
    }
    put("jobs", session.jobs.to_string());
    for kind in FailureKind::ALL {
        put(&format!("failures:{kind}"), stats.by_kind.get(kind).copied().unwrap_or(0).to_string());
    }
    put("selftest_failures", stats.selftest_failures.to_string());
    for (pass, (runs, changed)) in &stats.pass_changes {
        put(&format!("pass_runs:{pass}"), runs.to_string());
        put(&format!("pass_changed:{pass}"), changed.to_string());
    }
    out
}

/// `summary.md`.
pub fn summary_md(stats: &Stats, session: &Session) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Campaign {}\n", session.campaign_id);
    if session.interrupted {
        let _ = writeln!(s, "_Interrupted (Ctrl-C); every finished program is recorded. Continue with `--resume`._\n");
    }
    let _ = writeln!(s, "| figure | value |\n|---|---|");
    let disagreements = stats.selftest_failures;
    let rows: [(&str, String); 14] = [
        ("programs checked", stats.programs.to_string()),
        ("programs discarded (generator problems)", stats.discarded.to_string()),
        ("configurations", stats.configs.to_string()),
        ("checks (program × configuration)", stats.checks.to_string()),
        (
            "checks/s (this session)",
            format!("{:.2} ({} checks in {:.0} s, {} jobs)", per_second(session.checks, session.seconds), session.checks, session.seconds, session.jobs),
        ),
        ("programs/s (this session)", format!("{:.3}", per_second(session.programs, session.seconds))),
        ("qemu runs/s (this session)", format!("{:.2}", per_second(session.qemu_runs, session.seconds))),
        ("encoder vs GNU as (sampled assembly texts)", format!("{} texts compared", stats.encoder_texts)),
        ("dedup: checks sharing the back end (same IR)", format!("{:.1}%", 100.0 * stats.backend_dedup())),
        ("dedup: checks sharing the qemu run (same asm)", format!("{:.1}% ({} qemu runs)", 100.0 * stats.qemu_dedup(), stats.qemu_runs)),
        ("timeouts", stats.timeouts.to_string()),
        ("failures (checks)", stats.failures.to_string()),
        ("failing programs", stats.failing_programs.to_string()),
        (
            "data-flow solvers (iterative vs region)",
            if disagreements == 0 {
                format!("{} functions compared, all agreed", stats.analysis_functions)
            } else {
                format!("{} functions compared, {disagreements} programs disagreed", stats.analysis_functions)
            },
        ),
    ];
    for (k, v) in rows {
        let _ = writeln!(s, "| {k} | {v} |");
    }
    time_breakdown(&mut s, &stats.time);
    let _ = writeln!(s, "\n## Failures by kind\n");
    if stats.by_kind.is_empty() {
        let _ = writeln!(s, "None.");
    } else {
        let _ = writeln!(s, "| kind | checks |\n|---|---|");
        for (k, n) in &stats.by_kind {
            let _ = writeln!(s, "| {k} | {n} |");
        }
        let _ = writeln!(s, "\n## Failures by configuration\n\n| configuration | id | checks |\n|---|---|---|");
        let mut by_config: Vec<_> = stats.by_config.iter().collect();
        by_config.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(b.0)));
        for (label, (id, n)) in by_config {
            let _ = writeln!(s, "| {label} | {id} | {n} |");
        }
    }
    if !session.failure_dirs.is_empty() {
        let _ = writeln!(s, "\n## Failures saved this session\n");
        for d in &session.failure_dirs {
            let _ = writeln!(s, "- `{d}`");
        }
    }
    if !stats.discard_reasons.is_empty() {
        let _ = writeln!(
            s,
            "\n## Discarded programs\n\nEach is kept, with its generator configuration, in `discarded-<campaign>-s<seed>/` \
             next to the failure directories.\n\n| reason | programs |\n|---|---|"
        );
        for (r, n) in &stats.discard_reasons {
            let _ = writeln!(s, "| {} | {n} |", r.replace('|', "\\|"));
        }
    }
    let _ = writeln!(s, "\n## How often each pass changed the program\n");
    let _ = writeln!(s, "| pass | pipeline positions run | changed | share |\n|---|---|---|---|");
    for (pass, (runs, changed)) in &stats.pass_changes {
        let _ = writeln!(s, "| {pass} | {runs} | {changed} | {:.1}% |", 100.0 * ratio(*changed, *runs));
    }
    let never = stats.never_fired();
    if never.is_empty() {
        let _ = writeln!(s, "\nEvery registered IR pass changed at least one program.");
    } else {
        let _ = writeln!(s, "\nPasses that never changed a program (the generator is not feeding them, or they were not run):\n");
        for (pass, ran) in never {
            let _ = writeln!(s, "- `{pass}`{}", if ran { "" } else { " (never run by the chosen strategies)" });
        }
    }
    let stages: Vec<&str> = BackendStage::ALL.iter().map(|s| s.name()).collect();
    let _ = writeln!(
        s,
        "\nBack-end stages ({}) do not report whether they changed the code; their effect shows as the share of checks whose assembly differs.",
        stages.join(", ")
    );
    s
}

/// The "where the time went" table: worker seconds per phase and their shares.
fn time_breakdown(s: &mut String, time: &Timing) {
    let total: u64 = Phase::ALL.iter().map(|&p| time.get(p)).sum();
    let _ = writeln!(
        s,
        "\n## Where the time went\n\nWall time per phase, summed over the recorded programs ({:.1} s in all). Phases overlap: a \
         configuration's link and qemu run go on while its worker optimises the next one, so the sum exceeds the workers' \
         time and each phase's time includes its share of waiting for a core.\n",
        total as f64 / 1e6
    );
    let _ = writeln!(s, "| phase | worker s | share |\n|---|---|---|");
    for phase in Phase::ALL {
        let us = time.get(phase);
        let _ = writeln!(s, "| {} | {:.1} | {:.1}% |", phase.name(), us as f64 / 1e6, 100.0 * ratio(us, total));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(program: u64, passes: &str, changed: &str, kind: &str, shared: bool) -> Row {
        Row {
            program,
            config_id: format!("c-{passes}"),
            label: passes.into(),
            config: format!("--passes={passes}"),
            passes_changed: changed.into(),
            kind: (!kind.is_empty()).then(|| kind.parse().expect("a failure kind")),
            asm_hash: "h".into(),
            ir_shared: shared,
            asm_shared: shared,
            ..Row::default()
        }
    }

    #[test]
    fn figures_come_from_the_rows() {
        let rows = vec![
            row(0, "mem2reg,dce", "10", "", false),
            row(0, "mem2reg", "1", "", true),
            row(1, "mem2reg,dce", "11", "timeout", false),
        ];
        let mut timing = Timing::default();
        timing.add(Phase::Qemu, std::time::Duration::from_millis(1500));
        timing.add(Phase::Link, std::time::Duration::from_millis(500));
        let programs = vec![
            ProgramLine { program: 0, status: records::ProgramStatus::Checked, timing, ..ProgramLine::default() },
            ProgramLine { program: 1, status: records::ProgramStatus::Checked, ..ProgramLine::default() },
            ProgramLine { program: 2, status: records::ProgramStatus::Discarded, reason: "trap".into(), ..ProgramLine::default() },
        ];
        let s = Stats::compute(&rows, &programs, &[]);
        assert_eq!((s.programs, s.discarded, s.checks, s.configs), (2, 1, 3, 2));
        assert_eq!((s.failures, s.timeouts, s.failing_programs), (1, 1, 1));
        assert_eq!(s.pass_changes["dce"], (2, 1));
        assert_eq!(s.pass_changes["mem2reg"], (3, 3));
        assert!((s.qemu_dedup() - 1.0 / 3.0).abs() < 1e-9);
        let never: Vec<&str> = s.never_fired().into_iter().map(|(p, _)| p).collect();
        assert!(never.contains(&"constfold") && !never.contains(&"dce"));
        let selftests = [SelfTest { oracle: "encoder".into(), checked: 4, ..SelfTest::default() }];
        let s = Stats::compute(&rows, &programs, &selftests);
        assert_eq!(s.encoder_texts, 4);
        let md = summary_md(&s, &Session::default());
        assert!(md.contains("| timeout | 1 |"), "{md}");
        assert!(md.contains("| qemu | 1.5 | 75.0% |") && md.contains("| link | 0.5 | 25.0% |"), "{md}");
        assert!(md.contains("| generate | 0.0 | 0.0% |"), "{md}");
        let csv = stats_csv(&s, &Session { seconds: 2.0, qemu_runs: 5, ..Session::default() });
        assert!(csv.contains("worker_s:qemu,1.500\n") && csv.contains("session_qemu_runs_per_s,2.50\n"), "{csv}");
    }
}
