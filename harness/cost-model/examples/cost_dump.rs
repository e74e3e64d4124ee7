//! Prints a counter file written by the QEMU cost plugin.
//!
//! Usage: `cargo run -p sysy-cost-model --example cost_dump -- FILE`

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use sysy_cost_model::{CostCounts, InsnClass, LatencyTable};

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: cost_dump COUNTER_FILE");
        return ExitCode::FAILURE;
    };
    match CostCounts::read(&path) {
        // A closed stdout (e.g. `| head`) is not worth an error.
        Ok(counts) => {
            let _ = print(&counts, &mut std::io::stdout().lock());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}

fn print(counts: &CostCounts, out: &mut impl Write) -> std::io::Result<()> {
    let table = LatencyTable::CORTEX_A9_LIKE;
    let cycles = counts.cycles(&table);
    writeln!(out, "complete: {}", counts.complete)?;
    writeln!(
        out,
        "instructions: total {} program {} runtime {}",
        counts.total,
        counts.program_total(),
        counts.runtime_total()
    )?;
    writeln!(
        out,
        "cycles:       total {} program {} runtime {}",
        cycles.total, cycles.program, cycles.runtime
    )?;
    writeln!(
        out,
        "{:<22}{:>14}{:>14}{:>6}",
        "class", "program", "runtime", "cost"
    )?;
    for class in InsnClass::ALL {
        writeln!(
            out,
            "{:<22}{:>14}{:>14}{:>6}",
            class.name(),
            counts.program.get(class),
            counts.runtime.get(class),
            table.cost(class)
        )?;
    }
    writeln!(out, "mode detection: {:?}", counts.mode_stats)
}
