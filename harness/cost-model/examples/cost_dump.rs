//! Prints a counter file written by the QEMU cost plugin.
//!
//! Usage: `cargo run -p sysy-cost-model --example cost_dump -- FILE`

use std::path::PathBuf;
use std::process::ExitCode;

use sysy_cost_model::{CostCounts, InsnClass, LatencyTable};

fn main() -> ExitCode {
    let Some(path) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: cost_dump COUNTER_FILE");
        return ExitCode::FAILURE;
    };
    let counts = match CostCounts::read(&path) {
        Ok(counts) => counts,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::FAILURE;
        }
    };
    let table = LatencyTable::CORTEX_A9_LIKE;
    let cycles = counts.cycles(&table);
    println!("complete: {}", counts.complete);
    println!("instructions: total {} program {} runtime {}", counts.total, counts.program_total(), counts.runtime_total());
    println!("cycles:       total {} program {} runtime {}", cycles.total, cycles.program, cycles.runtime);
    println!("{:<22}{:>14}{:>14}{:>6}", "class", "program", "runtime", "cost");
    for class in InsnClass::ALL {
        println!("{:<22}{:>14}{:>14}{:>6}", class.name(), counts.program.get(class), counts.runtime.get(class), table.cost(class));
    }
    println!("mode detection: {:?}", counts.mode_stats);
    ExitCode::SUCCESS
}
