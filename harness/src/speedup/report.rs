//! The machine-readable and the human-readable speedup tables.
//!
//! `speedup.csv`: one row per benchmark × pair (mode, pass, position): both pipelines, the
//! verdicts, the costs, the speedups (reference/subject; empty when excluded), the pass's
//! compile time in microseconds, `performance_bug` and, when excluded, why.
//!
//! `report.md`: the per-pass geomean tables of each mode, the top passes, the performance-bug
//! rows, the excluded configurations, compile time per pass and the prefix curves.

use super::{Mode, PairResult, PairSummary, SpeedupData};
use std::fmt::Write as _;
use std::io;

fn join(p: &[&str]) -> String {
    if p.is_empty() { "-O0".to_string() } else { p.join(",") }
}

fn cell(x: Option<f64>) -> String {
    x.map(|x| format!("{x:.4}")).unwrap_or_default()
}

fn opt(x: Option<u64>) -> String {
    x.map(|x| x.to_string()).unwrap_or_default()
}

/// The section naming what this report does not measure with the families of `modes`:
/// registered IR passes outside the base pipeline (without `add-to-base`) and the back-end
/// stages (without `leave-one-out`, every configuration runs them all), so a missing row is
/// never mistaken for "no effect".
pub fn not_measured(base: &[&str], modes: &[Mode]) -> String {
    let outside: Vec<String> =
        sysyc::passes::ir_passes().map(|p| p.name).filter(|p| !base.contains(p)).map(|p| format!("`{p}`")).collect();
    let stages: Vec<String> = sysyc::isa::arm::BackendStage::ALL.iter().map(|st| format!("`{}`", st.name())).collect();
    let mut s = String::from("## Not measured here\n\n");
    let mut nothing = true;
    if !outside.is_empty() && !modes.contains(&Mode::AddToBase) {
        nothing = false;
        let _ = writeln!(s, "- IR passes outside the base pipeline (measured by `add-to-base`): {}.", outside.join(", "));
    }
    if !modes.contains(&Mode::LeaveOneOut) {
        nothing = false;
        let _ = writeln!(
            s,
            "- Back-end stages (on in every configuration here; measured by `leave-one-out`): {}.",
            stages.join(", ")
        );
    }
    if nothing {
        s.push_str(
            "Nothing: every registered IR pass and every back-end stage has a row (back-end stages in \
             `leave-one-out`; their compile time is not split per stage, so it reads 0).\n",
        );
    }
    s.push('\n');
    s
}

/// Writes the CSV.
pub fn write_csv(data: &SpeedupData, out: impl io::Write) -> csv::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record([
        "benchmark",
        "mode",
        "pass",
        "position",
        "reference",
        "subject",
        "reference_status",
        "subject_status",
        "reference_insns",
        "subject_insns",
        "reference_cycles",
        "subject_cycles",
        "speedup_insns",
        "speedup_cycles",
        "pass_compile_us",
        "performance_bug",
        "excluded_because",
    ])?;
    for r in data.results() {
        w.write_record([
            r.benchmark.to_string(),
            r.pair.mode.name().to_string(),
            r.pair.pass.to_string(),
            r.pair.position.to_string(),
            join(&r.pair.reference),
            join(&r.pair.subject),
            r.reference.status(),
            r.subject.status(),
            opt(r.reference.insns),
            opt(r.subject.insns),
            opt(r.reference.cycles),
            opt(r.subject.cycles),
            cell(r.speedup_insns()),
            cell(r.speedup_cycles()),
            r.pass_time().as_micros().to_string(),
            r.performance_bug().to_string(),
            r.exclusion().unwrap_or_default(),
        ])?;
    }
    w.flush()?;
    Ok(())
}

/// Passes ranked by leave-one-out geomean instruction speedup (what the pipeline would lose
/// without them), best first.
pub fn ranking<'a>(summaries: &'a [PairSummary<'a>]) -> Vec<&'a PairSummary<'a>> {
    let mut loo: Vec<&PairSummary<'_>> = summaries
        .iter()
        .filter(|s| s.pair.mode == Mode::LeaveOneOut && s.geomean_insns.is_some())
        .collect();
    loo.sort_by(|a, b| {
        let key = |s: &PairSummary<'_>| s.geomean_insns.unwrap_or(0.0);
        key(b).total_cmp(&key(a)).then(a.pair.pass.cmp(b.pair.pass))
    });
    loo
}

/// The markdown report.
pub fn markdown(data: &SpeedupData, suite: &str, command: &str) -> String {
    let summaries = data.summaries();
    let results = data.results();
    let mut s = String::new();
    let _ = writeln!(s, "# Per-pass speedups on `{suite}`\n");
    let _ = writeln!(s, "Regenerate with `{command}`.\n");
    let _ = writeln!(s, "Base pipeline ({} passes): `{}`.\n", data.base.len(), join(&data.base));
    let _ = writeln!(
        s,
        "Speedup = cost(reference) / cost(subject), from exact executed-instruction counts and \
         estimated cycles (qemu-arm + cost plugin). Above 1 the pass helps. Leave-one-out: the \
         base pipeline without the pass vs with it; add-one: -O0+mem2reg vs -O0+mem2reg+pass \
         (mem2reg: -O0 vs mem2reg); prefix: the first k-1 passes vs the first k. Geomeans are \
         over the benchmarks where both configurations produced the expected output.\n"
    );
    let runs: usize = data.benchmarks.iter().map(|b| b.runs.len()).sum();
    let distinct: usize = data.benchmarks.iter().map(|b| b.distinct_asm).sum();
    let cached: usize = data.benchmarks.iter().map(|b| b.cached_asm).sum();
    let skipped: usize = data.benchmarks.iter().map(|b| b.skipped_asm).sum();
    let _ = writeln!(
        s,
        "{} benchmarks, {} configurations compiled, {} distinct assembly texts run (identical \
         texts run once; {} of them taken from the run cache of an earlier sitting), {} not run \
         because everything they would be compared with had no valid result.\n",
        data.benchmarks.len(),
        runs,
        distinct,
        cached,
        skipped
    );

    let modes: Vec<Mode> = Mode::ALL.into_iter().filter(|&m| data.has_mode(m)).collect();
    s.push_str(&not_measured(&data.base, &modes));

    let _ = writeln!(s, "## Top passes (leave-one-out geomean, instructions)\n");
    for (i, r) in ranking(&summaries).iter().take(5).enumerate() {
        let _ = writeln!(
            s,
            "{}. `{}` — insns ×{}, cycles ×{}",
            i + 1,
            r.pair.pass,
            cell(r.geomean_insns),
            cell(r.geomean_cycles)
        );
    }
    let _ = writeln!(s);

    for mode in Mode::ALL.into_iter().filter(|&m| data.has_mode(m)) {
        let _ = writeln!(s, "## {}\n", mode.name());
        let _ = writeln!(
            s,
            "| {}pass | geomean insns | geomean cycles | valid | excluded | slower | compile ms (all benchmarks) |",
            if mode == Mode::Prefix { "k | " } else { "" }
        );
        let _ = writeln!(s, "|{}---|--:|--:|--:|--:|--:|--:|", if mode == Mode::Prefix { "--:|" } else { "" });
        for sum in summaries.iter().filter(|x| x.pair.mode == mode) {
            let k = if mode == Mode::Prefix { format!("{} | ", sum.pair.position) } else { String::new() };
            let _ = writeln!(
                s,
                "| {k}{} | {} | {} | {} | {} | {} | {:.3} |",
                sum.pair.pass,
                cell(sum.geomean_insns),
                cell(sum.geomean_cycles),
                sum.valid,
                sum.excluded,
                sum.slower,
                sum.pass_time.as_secs_f64() * 1e3
            );
        }
        let _ = writeln!(s);
    }

    let bugs: Vec<&PairResult<'_>> = results.iter().filter(|r| r.performance_bug()).collect();
    let _ = writeln!(s, "## Performance bugs (a pass made a benchmark slower by 0.005% or more)\n");
    if bugs.is_empty() {
        let _ = writeln!(s, "None.\n");
    } else {
        let _ = writeln!(s, "| benchmark | mode | pass | k | speedup insns | speedup cycles |\n|---|---|---|--:|--:|--:|");
        for r in bugs {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                r.benchmark,
                r.pair.mode.name(),
                r.pair.pass,
                r.pair.position,
                cell(r.speedup_insns()),
                cell(r.speedup_cycles())
            );
        }
        let _ = writeln!(s);
    }

    let _ = writeln!(s, "## Configurations without a valid result (excluded)\n");
    let mut bad: Vec<String> = Vec::new();
    let mut skipped: Vec<String> = Vec::new();
    for b in &data.benchmarks {
        for (pipeline, run) in &b.runs {
            if run.skipped() {
                skipped.push(format!("`{}`", join(pipeline)));
            } else if !run.valid() {
                bad.push(format!("- {} `{}`: {} {}", b.name, join(pipeline), run.status(), run.reason));
            }
        }
        if !skipped.is_empty() {
            bad.push(format!(
                "- {}: {} configurations not run (SKIPPED: everything they would be compared with has no valid result, so their own output is unchecked here): {}",
                b.name,
                skipped.len(),
                skipped.join(", ")
            ));
            skipped.clear();
        }
    }
    if bad.is_empty() {
        let _ = writeln!(s, "None.\n");
    } else {
        let _ = writeln!(s, "{}\n", bad.join("\n"));
    }

    if data.has_mode(Mode::Prefix) {
        let _ = writeln!(s, "## Prefix curves (instructions after the first k passes)\n");
        let _ = write!(s, "| benchmark |");
        for k in 0..=data.base.len() {
            let _ = write!(s, " {k} |");
        }
        let _ = writeln!(s, "\n|---|{}", "--:|".repeat(data.base.len() + 1));
        for b in &data.benchmarks {
            let _ = write!(s, "| {} |", b.name);
            for (_, insns, _) in data.prefix_curve(b) {
                let _ = write!(s, " {} |", opt(insns));
            }
            let _ = writeln!(s);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::{Mode, not_measured};
    use sysyc::isa::arm::BackendStage;

    #[test]
    fn what_the_chosen_families_leave_out_is_named() {
        let s = not_measured(sysyc::passes::O2_PIPELINE, &[Mode::Prefix]);
        assert!(s.contains("`fuse-blocks`") && s.contains("`fuse-branch`"), "{s}");
        assert!(!s.contains("`gvn`"), "gvn is in -O2: {s}");
        for stage in BackendStage::ALL {
            assert!(s.contains(&format!("`{}`", stage.name())), "{s}");
        }
        let s = not_measured(sysyc::passes::O2_PIPELINE, &[Mode::LeaveOneOut, Mode::AddToBase]);
        assert!(s.contains("Nothing") && !s.contains("`fuse-blocks`") && !s.contains("`arm-peephole`"), "{s}");
    }
}
