//! Compiles SysY programs to IR at an optimisation level and measures the IR interpreter on
//! them: steps (IR instructions executed), CPU seconds of the run alone (best of three) and
//! steps per second, and whether the result matches `NAME.out` when there is one.
//!
//! `cargo run --release -p sysyc --example ir_run_speed -- [-O0|-O1|-O2|--passes=...] FILE.sy...`
//! (stdin of each program: `FILE.in` next to it, if present).

use std::path::Path;
use std::time::Instant;

use sysyc::config::Config;
use sysyc::driver;
use sysyc::ir::interp::{InterpConfig, Program};

/// CPU time of this thread in seconds (Linux `schedstat`), else wall-clock time.
fn cpu_seconds(wall: Instant) -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or_else(|| wall.elapsed().as_secs_f64(), |ns| ns as f64 / 1e9)
}

fn main() {
    // Options (`-O2`, `--passes=...`, any `sysyc` configuration option) and files.
    let (options, files): (Vec<String>, Vec<String>) = std::env::args().skip(1).partition(|a| a.starts_with('-'));
    let compile: Config = if options.is_empty() { "-O2".parse() } else { options.join(" ").parse() }
        .unwrap_or_else(|e| panic!("bad options: {e}"));
    for file in files {
        let path = Path::new(&file);
        let source = match std::fs::read(path) {
            Ok(bytes) => sysyc::frontend::source_from_bytes(&bytes),
            Err(e) => {
                eprintln!("{file}: {e}");
                continue;
            }
        };
        let stdin = std::fs::read(path.with_extension("in")).unwrap_or_default();
        let expected = std::fs::read(path.with_extension("out")).ok();
        let module = match driver::compile_ir(&file, &source, &compile) {
            Ok((module, _)) => module,
            Err(e) => {
                eprintln!("{e}");
                continue;
            }
        };
        let program = match Program::new(&module) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("{file}: {e}");
                continue;
            }
        };
        let config = InterpConfig { max_steps: u64::MAX, ..InterpConfig::default() };
        let mut best = f64::INFINITY;
        let mut last = None;
        for _ in 0..3 {
            let wall = Instant::now();
            let start = cpu_seconds(wall);
            let r = program.run(&stdin, &config);
            best = best.min(cpu_seconds(wall) - start);
            last = Some(r);
        }
        let Some(r) = last else { continue };
        let verdict = match (&expected, r.outcome.expected_output()) {
            (Some(e), Some(got)) if *e == got => "matches .out",
            (Some(_), _) => "DIFFERS from .out",
            (None, _) => "no .out",
        };
        println!(
            "{} {compile}: {} steps, {best:.3} s CPU, {:.1} M steps/s, {verdict}",
            path.file_name().map_or(file.clone(), |n| n.to_string_lossy().into_owned()),
            r.outcome.steps,
            r.outcome.steps as f64 / best / 1e6
        );
    }
}
