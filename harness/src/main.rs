//! `harness`: command-line entry point of the differential fuzzing and benchmark harness.

use clap::{Parser, Subcommand};
use harness::generators;

#[derive(Parser)]
#[command(
    name = "harness",
    about = "Differential fuzzing and benchmark harness for sysyc"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate one random SysY program (and its stdin).
    Gen(generators::cli::GenArgs),
    /// Generate, check and run a range of seeds; print statistics.
    GenStats(generators::stats::StatsArgs),
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Gen(args) => generators::cli::run_gen(&args),
        Command::GenStats(args) => {
            // The reference interpreter and the gcc engine plug in here once they are part of
            // the harness (see `generators::stats::Runners`).
            print!(
                "{}",
                generators::stats::run_stats(&args, generators::stats::Runners::default())?
            );
            Ok(())
        }
    }
}
