//! `harness`: the command-line front end of the harness library; each subcommand lives in
//! [`harness::cli`] or next to the module it drives.

#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

use clap::{Parser, Subcommand};
use harness::cli::{self, conform, interp};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "harness", version, about = "Differential fuzzing and benchmark harness for sysyc")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a SysY program in the reference interpreter, like running the compiled program.
    ///
    /// Standard input and output are the program's; the exit status is the program's
    /// (main's value & 0xFF). When the program traps (undefined behaviour or a resource
    /// limit), the output so far is written, `trap: <kind> at FILE:LINE:COL: <detail>` goes
    /// to stderr and the exit status is 125. A program the front end rejects gets its
    /// diagnostics on stderr and status 1 (as does an unreadable file). Exceeding --timeout
    /// gives status 124.
    Interp(interp::InterpArgs),
    /// Run every NAME.sy of a directory (stdin NAME.in if present) and compare with NAME.out.
    ///
    /// Prints one row per case (name, PASS/FAIL/ERROR/TIMEOUT, seconds, reason) and the line
    /// `N passed, N failed`; the exit status is 1 if any case did not pass.
    Conform(conform::ConformArgs),
    /// Generate one random SysY program (and its stdin).
    Gen(harness::cli::generate::GenArgs),
    /// Generate, check and run a range of seeds; print statistics.
    GenStats(harness::gen_stats::StatsArgs),
    /// Name the pass (or back-end stage), minimal pipeline and step that miscompile a program.
    ///
    /// Exit status (the same for bisect, reduce and triage): 0 the failure reproduces (and
    /// was handled), 2 it does not reproduce under this configuration (nothing to do), 1 an
    /// error (unreadable file, bad option, a program the reference interpreter cannot judge,
    /// missing tools).
    Bisect(harness::cli::triage::BisectArgs),
    /// Shrink a miscompiled program (on the AST) while the same failure persists.
    ///
    /// Exit status (the same for bisect, reduce and triage): 0 the failure reproduces (and
    /// was handled), 2 it does not reproduce under this configuration (nothing to do), 1 an
    /// error (unreadable file, bad option, a program the reference interpreter cannot judge,
    /// missing tools).
    Reduce(harness::cli::triage::ReduceArgs),
    /// Bisect and reduce a failure directory; write the result as a regression case.
    ///
    /// Exit status (the same for bisect, reduce and triage): 0 the failure reproduces (and
    /// was handled), 2 it does not reproduce under this configuration (nothing to do), 1 an
    /// error (unreadable file, bad option, a program the reference interpreter cannot judge,
    /// missing tools).
    Triage(harness::cli::triage::TriageArgs),
    /// The differential campaign: generate programs, check each under many pass
    /// configurations against the reference interpreter, record, report.
    Campaign(harness::cli::campaign::CampaignArgs),
    /// Merge the shard directories of a sharded campaign into one campaign directory.
    Merge(harness::campaign::merge::MergeArgs),
    /// The campaign's mutation score: build mechanical mutants of the passes and back end,
    /// run a short campaign against each, tabulate killed / survived per pass.
    Mutants(harness::mutants::experiment::MutantsArgs),
    /// Run a suite compiled by sysyc under qemu-arm with the cost plugin (optionally against
    /// gcc -O2); write a CSV and a markdown table of instruction and cycle counts.
    Bench(harness::cli::bench::BenchArgs),
    /// Compare the in-process assembler with GNU as byte for byte (`.text`, `.data`, ...,
    /// relocations) on assembly files, or on every `.sy` of directories compiled at -O0 and -O2.
    AsmAgree(cli::asm_agree::AsmAgreeArgs),
    /// Reports over measurements (`speedup`: per-pass speedups; `history`: campaign nights
    /// side by side).
    #[command(subcommand)]
    Report(ReportCommand),
    /// One probe of a compiler hang's triage (run by the campaign in a child process).
    #[command(name = harness::triage::hang::PROBE_COMMAND, hide = true)]
    HangProbe(harness::triage::hang::ProbeArgs),
}

#[derive(Subcommand)]
enum ReportCommand {
    /// Per-pass leave-one-out, add-one and prefix speedups in instructions and cycles; writes
    /// results/speedup/<date>/{speedup.csv,report.md,index.html}.
    Speedup(harness::cli::speedup::SpeedupArgs),
    /// Campaign nights side by side: throughput, programs, failures new / fixed / still open
    /// by culprit, per-pass change rates; writes history.md and index.html (with charts).
    History(harness::campaign::history::HistoryArgs),
}

/// Counts the live heap so that a campaign can tell a leak from allocator retention (see
/// [`harness::memory`]).
#[global_allocator]
static ALLOC: harness::memory::CountingAlloc = harness::memory::CountingAlloc;

fn main() -> ExitCode {
    harness::memory::CountingAlloc::declare_installed();
    // SAFETY: first thing in main, before any thread exists.
    unsafe { harness::scratch::prefer_memory_scratch() };
    match Cli::parse().command {
        Command::Interp(args) => interp::run(&args),
        Command::Conform(args) => conform::run(args),
        Command::Gen(args) => report(harness::cli::generate::run_gen(&args)),
        Command::GenStats(args) => report(gen_stats(&args)),
        Command::Bisect(args) => status(harness::cli::triage::run_bisect(&args)),
        Command::Reduce(args) => status(harness::cli::triage::run_reduce(&args)),
        Command::Triage(args) => status(harness::cli::triage::run_triage(&args)),
        Command::Campaign(args) => match harness::cli::campaign::run(&args) {
            Ok(code) => ExitCode::from(code),
            Err(e) => cli::fail(&format!("{e:#}")),
        },
        Command::Bench(args) => harness::cli::bench::run(&args),
        Command::Report(ReportCommand::Speedup(args)) => harness::cli::speedup::run(&args),
        Command::Report(ReportCommand::History(args)) => report(harness::campaign::history::run(&args)),
        Command::Merge(args) => report(harness::campaign::merge::run(&args)),
        Command::AsmAgree(args) => cli::asm_agree::run(&args),
        Command::Mutants(args) => report(harness::mutants::experiment::run(&args)),
        Command::HangProbe(args) => report(harness::triage::hang::run_probe(&args)),
    }
}

fn report(result: anyhow::Result<()>) -> ExitCode {
    status(result.map(|()| ExitCode::SUCCESS))
}

fn status(result: anyhow::Result<ExitCode>) -> ExitCode {
    result.unwrap_or_else(|e| cli::fail(&format!("{e:#}")))
}

/// `gen-stats`: the generator's programs through the reference interpreter and the engines
/// asked for.
fn gen_stats(args: &harness::gen_stats::StatsArgs) -> anyhow::Result<()> {
    harness::out!("{}", harness::gen_stats::run_stats(args)?)?;
    Ok(())
}
