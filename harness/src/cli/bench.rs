//! `harness bench DIR`: the command-line front end of [`crate::bench`].
//!
//! Prints one progress line per finished case on stderr, then writes the CSV (`--out`,
//! default `bench.csv`) and the markdown table next to it (same name, `.md`), and prints the
//! summary. The exit status is 0 when every case ran and passed (gcc's failures included under
//! `--vs-gcc`), 1 otherwise, so a script can tell a complete table from a partial one.

use crate::bench::report::{self, RunInfo};
use crate::bench::{BenchRow, Engines, Summary};
use crate::cli::fail;
use crate::conform::{self, Verdict};
use sysy_check::engine::RunSettings;
use sysy_check::subject::Limits;
use sysyc::config::{Config, ConfigArgs};
use sysyc::passes::OptLevel;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Directory of cases (NAME.sy, NAME.in, NAME.out).
    pub dir: PathBuf,
    /// Our configuration (default -O2).
    #[command(flatten)]
    pub config: ConfigArgs,
    /// Also build every case with the ARM cross gcc at -O2 (from the C translation of the
    /// program), check its answer and add ratio columns ours/gcc.
    #[arg(long)]
    pub vs_gcc: bool,
    /// Also run our executables under plain qemu-arm and report the plugin's wall-time
    /// overhead.
    #[arg(long)]
    pub overhead: bool,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// Time limit per run in seconds (default 600; a run killed at the limit keeps its
    /// partial counts).
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Only cases whose name contains this.
    #[arg(long)]
    pub filter: Option<String>,
    /// The CSV file; the markdown goes next to it with the extension `.md`.
    #[arg(long, default_value = "bench.csv")]
    pub out: PathBuf,
}

impl BenchArgs {
    fn config(&self) -> Result<Config, String> {
        self.config.config(OptLevel::O2).map_err(|e| e.to_string())
    }

    /// The command line that reproduces this run.
    fn command(&self) -> Result<String, String> {
        let mut c = format!("harness bench {} {}", self.dir.display(), self.config()?);
        if self.vs_gcc {
            c.push_str(" --vs-gcc");
        }
        if self.overhead {
            c.push_str(" --overhead");
        }
        if let Some(f) = &self.filter {
            c.push_str(&format!(" --filter {f}"));
        }
        // The limit decides which cases finish, so a non-default one is part of the result.
        if let Some(t) = self.timeout {
            c.push_str(&format!(" --timeout {t}"));
        }
        c.push_str(&format!(" --out {}", self.out.display()));
        Ok(c)
    }
}

fn progress_line(row: &BenchRow) -> String {
    // Instructions and cycles, so a log of an interrupted run still holds the measurements.
    let insns = |m: &crate::bench::Measurement| {
        m.cost.as_ref().map_or("-".to_string(), |c| {
            format!("{} cycles={}", c.counts.total, c.cycles.total)
        })
    };
    let mut line = format!(
        "{} {} insns={} run={:.2}s",
        row.case,
        row.ours.verdict,
        insns(&row.ours),
        row.ours.run().as_secs_f64()
    );
    if let Some(g) = &row.gcc {
        line.push_str(&format!(" | gcc {} insns={}", g.verdict, insns(g)));
    }
    line
}

pub fn run(args: &BenchArgs) -> ExitCode {
    match run_inner(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => fail(&e),
    }
}

fn run_inner(args: &BenchArgs) -> Result<bool, String> {
    let config = args.config()?;
    let settings = RunSettings { assembler: args.config.assembler, ..RunSettings::new(Limits::SUITE.with_timeout(args.timeout)?) };
    let engines = Engines::new(&config, &settings, args.vs_gcc, args.overhead)?;
    let cases = conform::discover(&args.dir, args.filter.as_deref())
        .map_err(|e| format!("cannot list {}: {e}", args.dir.display()))?;
    if cases.is_empty() {
        return Err(format!("no .sy cases in {}", args.dir.display()));
    }
    let progress = |row: &BenchRow| errln!("{}", progress_line(row));
    let rows = crate::bench::bench_suite(&engines, &cases, args.jobs, &progress)?;

    if let Some(parent) = args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let csv_file = std::fs::File::create(&args.out)
        .map_err(|e| format!("cannot create {}: {e}", args.out.display()))?;
    report::write_csv(&rows, std::io::BufWriter::new(csv_file))
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    let md_path = args.out.with_extension("md");
    let info = RunInfo {
        suite: args.dir.display().to_string(),
        pipeline: config.to_string(),
        command: args.command()?,
    };
    std::fs::write(&md_path, report::markdown(&rows, &info))
        .map_err(|e| format!("cannot write {}: {e}", md_path.display()))?;

    let summary = Summary::of(&rows);
    outln!("{} cases, {} passed", summary.cases, summary.passed).map_err(|e| e.to_string())?;
    if args.vs_gcc {
        let show = |r: Option<f64>| r.map_or("n/a".to_string(), |r| format!("{r:.4}"));
        outln!(
            "gcc -O2 passed {}; geomean ours/gcc over {} cases: insns {}, cycles {}",
            summary.gcc_passed,
            summary.compared,
            show(summary.geomean_insn_ratio),
            show(summary.geomean_cycle_ratio)
        ).map_err(|e| e.to_string())?;
        outln!(
            "own code only (runtimes left out): insns {}, cycles {}",
            show(summary.geomean_program_insn_ratio),
            show(summary.geomean_program_cycle_ratio)
        ).map_err(|e| e.to_string())?;
    }
    if let Some(o) = summary.mean_plugin_overhead {
        outln!("plugin overhead (mean wall time): {:+.1}%", o * 100.0).map_err(|e| e.to_string())?;
    }
    outln!("wrote {} and {}", args.out.display(), md_path.display()).map_err(|e| e.to_string())?;
    let all_passed = rows.iter().all(|r| {
        r.ours.verdict == Verdict::Pass
            && r.gcc.as_ref().is_none_or(|g| g.verdict == Verdict::Pass)
    });
    Ok(all_passed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: BenchArgs,
    }

    fn command(line: &[&str]) -> String {
        let args = Wrapper::try_parse_from(std::iter::once("bench").chain(line.iter().copied())).expect("valid arguments").args;
        args.command().expect("valid configuration")
    }

    #[test]
    fn the_reproducing_command_names_every_choice_that_changes_the_result() {
        assert_eq!(command(&["suite", "--out", "b.csv"]), "harness bench suite -O2 --out b.csv");
        assert_eq!(
            command(&["suite", "-O0", "--vs-gcc", "--filter", "dce", "--timeout", "2700", "--jobs", "1", "--out", "b.csv"]),
            "harness bench suite -O0 --vs-gcc --filter dce --timeout 2700 --out b.csv"
        );
        assert_eq!(
            command(&["suite", "--passes=mem2reg,dce", "--backend-stages=none", "--out", "b.csv"]),
            "harness bench suite --passes=mem2reg,dce --backend-stages=none --out b.csv"
        );
    }
}
