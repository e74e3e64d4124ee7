//! Throughput of the compiler's stages on the project's `corpus/lang` programs (and, when
//! present, the competition's performance suite for the front end and the optimiser):
//!
//! * `frontend` — parse + semantic analysis, in source lines per second;
//! * `lower+O2` — lowering to IR and the `-O2` pipeline, in functions per second;
//! * `ir-interp` — the IR interpreter on the `-O0` module, in executed IR instructions
//!   (interpreter steps) per second;
//! * `dataflow` — the iterative and the region-based data-flow solvers on liveness (backward)
//!   and dominators (forward) of every function of the `-O2` modules, in functions per
//!   second (problem construction and CFG outside the measurement);
//! * `backend` — `isa::arm::compile_module` on the `-O2` module, in assembly instructions
//!   emitted per second.
//!
//! Each group measures the whole input set per iteration, so the throughput is an aggregate
//! over the set. Measurement times are short (`cargo bench` of everything should take a few
//! minutes); the figures are for comparing revisions on one machine, not absolute claims.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;
use sysyc::config::Config;
use sysyc::driver;
use sysyc::frontend;
use sysyc::ir::Module;
use sysyc::ir::interp::InterpConfig;
use sysyc::isa::arm;
use sysyc::passes::OptLevel;

/// One SysY program with its standard input.
struct Program {
    name: String,
    source: String,
    stdin: Vec<u8>,
}

/// The `.sy` files of `dir` (sorted, so the set is the same on every run) with their `.in`.
fn programs_in(dir: &Path) -> Vec<Program> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sy"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|path| {
            let source = frontend::source_from_bytes(&std::fs::read(&path).ok()?);
            let stdin = std::fs::read(path.with_extension("in")).unwrap_or_default();
            let name = path.file_stem()?.to_string_lossy().into_owned();
            Some(Program { name, source, stdin })
        })
        .collect()
}

fn corpus() -> Vec<Program> {
    let programs = programs_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/lang"));
    assert!(!programs.is_empty(), "corpus/lang holds no programs");
    programs
}

/// The competition's performance suite, when present (otherwise its benchmarks are skipped).
fn performance_suite() -> Vec<Program> {
    sysyc::suites::sysy_tests_dir()
        .map(|dir| programs_in(&dir.join("performance")))
        .unwrap_or_default()
}

/// Programs the whole pipeline accepts, with their `-O0` and `-O2` modules.
fn compiled(programs: &[Program]) -> Vec<(&Program, Module, Module)> {
    let o2 = Config::level(OptLevel::O2);
    programs
        .iter()
        .filter_map(|p| {
            let lowered = driver::lower_source(&p.name, &p.source).ok()?;
            let (optimised, _) = driver::compile_ir(&p.name, &p.source, &o2).ok()?;
            Some((p, lowered, optimised))
        })
        .collect()
}

fn frontend_group(c: &mut Criterion, label: &str, programs: &[Program]) {
    let lines: u64 = programs.iter().map(|p| p.source.lines().count() as u64).sum();
    let mut group = c.benchmark_group("frontend");
    group.throughput(Throughput::Elements(lines));
    group.bench_function(label, |b| {
        b.iter(|| {
            for p in programs {
                let _ = black_box(frontend::compile_source(&p.name, &p.source));
            }
        })
    });
    group.finish();
}

fn optimise_group(c: &mut Criterion, label: &str, programs: &[Program]) {
    let accepted = compiled(programs);
    let functions: u64 = accepted.iter().map(|(_, o0, _)| o0.funcs().count() as u64).sum();
    let options = Config::level(OptLevel::O2);
    let mut group = c.benchmark_group("lower+O2");
    group.throughput(Throughput::Elements(functions));
    group.bench_function(label, |b| {
        b.iter(|| {
            for (p, _, _) in &accepted {
                let _ = black_box(driver::compile_ir(&p.name, &p.source, &options));
            }
        })
    });
    group.finish();
}

fn dataflow_group(c: &mut Criterion, label: &str, programs: &[Program]) {
    use sysyc::analysis::ControlFlowGraph;
    use sysyc::analysis::dataflow::problems::{Dominators, Liveness};
    use sysyc::analysis::dataflow::{self, Solver};
    let accepted = compiled(programs);
    let functions: Vec<(&sysyc::ir::Function, ControlFlowGraph)> = accepted
        .iter()
        .flat_map(|(_, _, o2)| o2.funcs().map(|(_, f)| (f, ControlFlowGraph::compute(f))).collect::<Vec<_>>())
        .collect();
    let problems: Vec<(&ControlFlowGraph, Liveness<'_>, Dominators)> =
        functions.iter().map(|(f, cfg)| (cfg, Liveness::new(f), Dominators::new(f))).collect();
    let mut group = c.benchmark_group("dataflow");
    group.throughput(Throughput::Elements(problems.len() as u64));
    for (name, solver) in [("iterative", Solver::Iterative), ("region", Solver::Region)] {
        group.bench_function(format!("{name}/{label}"), |b| {
            b.iter(|| {
                for (cfg, live, dom) in &problems {
                    black_box(dataflow::solve(cfg, live, solver));
                    black_box(dataflow::solve(cfg, dom, solver));
                }
            })
        });
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    let corpus = corpus();
    let performance = performance_suite();

    frontend_group(c, "corpus-lang", &corpus);
    if !performance.is_empty() {
        frontend_group(c, "sysy-performance", &performance);
    }
    optimise_group(c, "corpus-lang", &corpus);
    if !performance.is_empty() {
        optimise_group(c, "sysy-performance", &performance);
    }

    dataflow_group(c, "corpus-lang", &corpus);
    if !performance.is_empty() {
        dataflow_group(c, "sysy-performance", &performance);
    }

    let accepted = compiled(&corpus);

    // IR interpreter on the -O0 modules: steps counted once, outside the measurement.
    let config = InterpConfig::default();
    let runnable: Vec<(&Program, &Module, u64)> = accepted
        .iter()
        .filter_map(|(p, o0, _)| {
            let result = driver::interpret(o0, &p.stdin, &config).ok()?;
            Some((*p, o0, result.cost.total()))
        })
        .collect();
    let steps: u64 = runnable.iter().map(|(_, _, s)| s).sum();
    let mut group = c.benchmark_group("ir-interp");
    group.throughput(Throughput::Elements(steps));
    group.bench_function("corpus-lang-O0", |b| {
        b.iter(|| {
            for (p, module, _) in &runnable {
                let _ = black_box(driver::interpret(module, &p.stdin, &config));
            }
        })
    });
    group.finish();

    // Back end on the -O2 modules: instructions emitted counted once from the output.
    let backend = arm::BackendOptions::default();
    let emitting: Vec<(&Module, u64)> = accepted
        .iter()
        .filter_map(|(_, _, o2)| {
            let asm = arm::compile_module(o2, &backend).ok()?;
            Some((o2, count_instructions(&asm)))
        })
        .collect();
    let instructions: u64 = emitting.iter().map(|(_, n)| n).sum();
    let mut group = c.benchmark_group("backend");
    group.throughput(Throughput::Elements(instructions));
    group.bench_function("corpus-lang-O2", |b| {
        b.iter(|| {
            for (module, _) in &emitting {
                let _ = black_box(arm::compile_module(module, &backend));
            }
        })
    });
    group.finish();
}

/// Lines of assembly that are instructions: not blank, not a label, not a directive, not a
/// comment.
fn count_instructions(asm: &str) -> u64 {
    asm.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('.') && !l.starts_with('@') && !l.ends_with(':'))
        .count() as u64
}

criterion_group! {
    name = group;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = benches
}
criterion_main!(group);
