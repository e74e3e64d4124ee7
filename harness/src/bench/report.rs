//! The tables of `harness bench`: a CSV with one row per case (every count the plugin gives)
//! and a markdown summary for people.
//!
//! CSV columns: `case, status, reason, insns, cycles, program_insns, runtime_insns,
//! program_cycles, runtime_cycles, complete`, one `class_<name>` column per instruction class
//! (whole run), `compile_s, build_s, run_s`; with gcc the same measures prefixed `gcc_`
//! (`gcc_program_cycles` and the `gcc_class_<name>` columns after the others), `insn_ratio,
//! cycle_ratio` (ours/gcc of whole runs; empty unless both passed) and `program_insn_ratio,
//! program_cycle_ratio` (the same over each program's own code: every runtime left out);
//! with `--overhead`, `plain_run_s, plugin_overhead`. Empty cells mean "not measured".

use super::{BenchRow, Measurement, Summary};
use std::fmt::Write as _;
use std::io;
use sysy_cost_model::{ClassCounts, InsnClass};

/// What the tables say about how they were made.
#[derive(Clone, Debug)]
pub struct RunInfo {
    /// The suite directory as given.
    pub suite: String,
    /// Our pipeline (`-O2`, `--passes=...`).
    pub pipeline: String,
    /// The command that regenerates the tables.
    pub command: String,
}

fn header(with_gcc: bool, with_overhead: bool) -> Vec<String> {
    let mut h: Vec<String> = [
        "case",
        "status",
        "reason",
        "insns",
        "cycles",
        "program_insns",
        "runtime_insns",
        "program_cycles",
        "runtime_cycles",
        "complete",
    ]
    .map(String::from)
    .to_vec();
    h.extend(InsnClass::ALL.iter().map(|c| format!("class_{}", c.name())));
    h.extend(["compile_s", "build_s", "run_s"].map(String::from));
    if with_gcc {
        h.extend(
            [
                "gcc_status",
                "gcc_reason",
                "gcc_insns",
                "gcc_cycles",
                "gcc_program_insns",
                "gcc_runtime_insns",
                "gcc_compile_s",
                "gcc_run_s",
                "insn_ratio",
                "cycle_ratio",
                "gcc_program_cycles",
                "program_insn_ratio",
                "program_cycle_ratio",
            ]
            .map(String::from),
        );
        h.extend(InsnClass::ALL.iter().map(|c| format!("gcc_class_{}", c.name())));
    }
    if with_overhead {
        h.extend(["plain_run_s", "plugin_overhead"].map(String::from));
    }
    h
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn secs(d: std::time::Duration) -> String {
    format!("{:.3}", d.as_secs_f64())
}

fn ratio_cell(r: Option<f64>) -> String {
    r.map(|r| format!("{r:.4}")).unwrap_or_default()
}

fn record(row: &BenchRow, with_gcc: bool, with_overhead: bool) -> Vec<String> {
    let m = &row.ours;
    let cost = m.cost.as_ref();
    let mut r = vec![
        row.case.clone(),
        m.verdict.to_string(),
        m.reason.clone(),
        opt(cost.map(|c| c.counts.total)),
        opt(cost.map(|c| c.cycles.total)),
        opt(cost.map(|c| c.counts.program_total())),
        opt(cost.map(|c| c.counts.runtime_total())),
        opt(cost.map(|c| c.cycles.program)),
        opt(cost.map(|c| c.cycles.runtime)),
        opt(cost.map(|c| c.counts.complete)),
    ];
    r.extend(
        InsnClass::ALL
            .iter()
            .map(|&class| opt(cost.map(|c| c.counts.per_class.get(class)))),
    );
    r.extend([secs(m.compile()), secs(m.build()), secs(m.run())]);
    if with_gcc {
        match &row.gcc {
            Some(g) => {
                let gc = g.cost.as_ref();
                r.extend([
                    g.verdict.to_string(),
                    g.reason.clone(),
                    opt(gc.map(|c| c.counts.total)),
                    opt(gc.map(|c| c.cycles.total)),
                    opt(gc.map(|c| c.counts.program_total())),
                    opt(gc.map(|c| c.counts.runtime_total())),
                    secs(g.compile()),
                    secs(g.run()),
                ]);
            }
            None => r.extend(std::iter::repeat_n(String::new(), 8)),
        }
        r.push(ratio_cell(row.insn_ratio()));
        r.push(ratio_cell(row.cycle_ratio()));
        let gc = row.gcc.as_ref().and_then(|g| g.cost.as_ref());
        r.push(opt(gc.map(|c| c.cycles.program)));
        r.push(ratio_cell(row.program_insn_ratio()));
        r.push(ratio_cell(row.program_cycle_ratio()));
        r.extend(InsnClass::ALL.iter().map(|&class| opt(gc.map(|c| c.counts.per_class.get(class)))));
    }
    if with_overhead {
        r.push(opt(row.plain_run.map(secs)));
        r.push(row.plugin_overhead().map(|o| format!("{o:.4}")).unwrap_or_default());
    }
    r
}

/// Writes the CSV of `rows` to `out`.
pub fn write_csv(rows: &[BenchRow], out: impl io::Write) -> csv::Result<()> {
    let with_gcc = rows.iter().any(|r| r.gcc.is_some());
    let with_overhead = rows.iter().any(|r| r.plain_run.is_some());
    let mut w = csv::Writer::from_writer(out);
    w.write_record(header(with_gcc, with_overhead))?;
    for row in rows {
        w.write_record(record(row, with_gcc, with_overhead))?;
    }
    w.flush()?;
    Ok(())
}

/// `12345678` as `12.35M`: big counts stay readable in the markdown table.
fn human(n: u64) -> String {
    let n = n as f64;
    if n >= 1e9 {
        format!("{:.2}G", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.2}M", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.1}k", n / 1e3)
    } else {
        format!("{n}")
    }
}

fn status_cell(m: &Measurement) -> String {
    let partial = m.cost.as_ref().filter(|c| !c.counts.complete);
    match partial {
        Some(c) => format!("{} (partial {})", m.verdict, human(c.counts.total)),
        None => m.verdict.to_string(),
    }
}

/// The markdown report: how it was made, the summary, one table row per case, and where the
/// instructions went by class over the whole suite.
pub fn markdown(rows: &[BenchRow], info: &RunInfo) -> String {
    let summary = Summary::of(rows);
    let with_gcc = rows.iter().any(|r| r.gcc.is_some());
    let with_overhead = rows.iter().any(|r| r.plain_run.is_some());
    let mut s = String::new();
    let _ = writeln!(s, "# Benchmark: sysyc {} on `{}`\n", info.pipeline, info.suite);
    let _ = writeln!(s, "Regenerate with `{}`.\n", info.command);
    let _ = writeln!(
        s,
        "Instructions are exact counts of executed ARM instructions (qemu-arm 7.2 with the \
         cost plugin); cycles are the plugin's per-class estimate (Cortex-A7/A9-like table). \
         `prog%` is the share of instructions in the program's own code (the rest is the \
         runtime library and libc).\n"
    );
    let _ = writeln!(s, "## Summary\n");
    let _ = writeln!(s, "- cases: {}, sysyc passed: {}", summary.cases, summary.passed);
    if with_gcc {
        let _ = writeln!(
            s,
            "- gcc -O2 passed: {}; compared (both passed): {}",
            summary.gcc_passed, summary.compared
        );
        let _ = writeln!(
            s,
            "- **geomean ours/gcc: instructions {}, cycles {}**",
            ratio_cell(summary.geomean_insn_ratio),
            ratio_cell(summary.geomean_cycle_ratio)
        );
        let _ = writeln!(
            s,
            "- **geomean ours/gcc, the program's own code (runtimes left out): instructions {}, cycles {}**",
            ratio_cell(summary.geomean_program_insn_ratio),
            ratio_cell(summary.geomean_program_cycle_ratio)
        );
    }
    if let Some(o) = summary.mean_plugin_overhead {
        let _ = writeln!(
            s,
            "- plugin overhead (wall time of the measured run over plain qemu-arm, mean): {:+.1}%",
            o * 100.0
        );
    }
    let _ = writeln!(s);
    let mut head = "| case | status | insns | cycles | prog% | compile s | run s |".to_string();
    let mut rule = "|---|---|--:|--:|--:|--:|--:|".to_string();
    if with_gcc {
        head.push_str(" gcc | gcc insns | gcc cycles | insns ours/gcc | cycles ours/gcc | own insns ours/gcc | own cycles ours/gcc |");
        rule.push_str("---|--:|--:|--:|--:|--:|--:|");
    }
    if with_overhead {
        head.push_str(" plain run s | overhead |");
        rule.push_str("--:|--:|");
    }
    let _ = writeln!(s, "{head}\n{rule}");
    for row in rows {
        let m = &row.ours;
        let cost = m.cost.as_ref();
        let share = cost
            .filter(|c| c.counts.total > 0)
            .map(|c| format!("{:.1}", 100.0 * c.counts.program_total() as f64 / c.counts.total as f64));
        let _ = write!(
            s,
            "| {} | {} | {} | {} | {} | {:.3} | {:.3} |",
            row.case,
            status_cell(m),
            opt(cost.map(|c| human(c.counts.total))),
            opt(cost.map(|c| human(c.cycles.total))),
            opt(share),
            m.compile().as_secs_f64(),
            m.run().as_secs_f64()
        );
        if with_gcc {
            let g = row.gcc.as_ref();
            let gc = g.and_then(|g| g.cost.as_ref());
            let _ = write!(
                s,
                " {} | {} | {} | {} | {} | {} | {} |",
                opt(g.map(status_cell)),
                opt(gc.map(|c| human(c.counts.total))),
                opt(gc.map(|c| human(c.cycles.total))),
                ratio_cell(row.insn_ratio()),
                ratio_cell(row.cycle_ratio()),
                ratio_cell(row.program_insn_ratio()),
                ratio_cell(row.program_cycle_ratio())
            );
        }
        if with_overhead {
            let _ = write!(
                s,
                " {} | {} |",
                opt(row.plain_run.map(|d| format!("{:.3}", d.as_secs_f64()))),
                opt(row.plugin_overhead().map(|o| format!("{:+.1}%", o * 100.0)))
            );
        }
        let _ = writeln!(s);
    }
    let failures: Vec<&BenchRow> = rows
        .iter()
        .filter(|r| !r.ours.reason.is_empty() || r.gcc.as_ref().is_some_and(|g| !g.reason.is_empty()))
        .collect();
    if !failures.is_empty() {
        let _ = writeln!(s, "\n## Cases that did not pass\n");
        for r in failures {
            if !r.ours.reason.is_empty() {
                let _ = writeln!(s, "- {} (sysyc): {}", r.case, r.ours.reason);
            }
            if let Some(g) = r.gcc.as_ref().filter(|g| !g.reason.is_empty()) {
                let _ = writeln!(s, "- {} (gcc): {}", r.case, g.reason);
            }
        }
    }
    s.push_str(&class_table(rows, with_gcc));
    s
}

/// Instructions by class summed over the cases both engines passed (all measured cases
/// without gcc), for whole runs and for the programs' own code: where the difference comes
/// from.
fn class_table(rows: &[BenchRow], with_gcc: bool) -> String {
    let mut whole = (ClassCounts::default(), ClassCounts::default());
    let mut own = (ClassCounts::default(), ClassCounts::default());
    for row in rows {
        let Some(c) = row.ours.cost.as_ref().filter(|c| c.counts.complete) else {
            continue;
        };
        if with_gcc {
            let Some(g) = row.gcc.as_ref().and_then(|g| g.passing_cost()) else {
                continue;
            };
            if row.insn_ratio().is_none() {
                continue;
            }
            whole.1 = whole.1.merged(&g.counts.per_class);
            own.1 = own.1.merged(&g.counts.program);
        }
        whole.0 = whole.0.merged(&c.counts.per_class);
        own.0 = own.0.merged(&c.counts.program);
    }
    if whole.0.total() == 0 {
        return String::new();
    }
    let mut s = String::new();
    for (title, (ours, gcc)) in [("whole runs", whole), ("the programs' own code", own)] {
        let _ = writeln!(s, "\n## Instructions by class ({title}, summed over the compared cases)\n");
        if with_gcc {
            s.push_str("| class | sysyc | gcc -O2 | ours/gcc |\n|---|--:|--:|--:|\n");
        } else {
            s.push_str("| class | sysyc |\n|---|--:|\n");
        }
        for class in InsnClass::ALL {
            let (a, b) = (ours.get(class), gcc.get(class));
            if a == 0 && b == 0 {
                continue;
            }
            if with_gcc {
                let r = super::ratio(Some(a), Some(b));
                let _ = writeln!(s, "| {} | {} | {} | {} |", class.name(), human(a), human(b), ratio_cell(r));
            } else {
                let _ = writeln!(s, "| {} | {} |", class.name(), human(a));
            }
        }
    }
    s
}
