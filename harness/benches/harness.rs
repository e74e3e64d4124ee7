//! Throughput of the harness's in-process engines:
//!
//! * `generator` — `sources::generated::generate` with the default configuration, in programs per
//!   second (fixed seeds, so every run generates the same programs);
//! * `refinterp` — the reference interpreter (front end excluded: the HIR is built once), in
//!   interpreter steps per second, on `corpus/lang` and on generated programs;
//! * `ir-interp` — the IR interpreter on the same generated programs' `-O0` modules, in
//!   executed IR instructions per second (`sysyc`'s own bench covers it on `corpus/lang`);
//! * `compile-isolation` — how the campaign should run the compiler: compiling the
//!   generated programs at -O2 to assembly in-process (`driver::compile_asm`) against one
//!   `sysyc -S -O2` process per program (the `sysyc` next to the bench executable in the
//!   target directory; skipped, saying so, when it is not built), in programs per second;
//!   and `process-start`, one start of a trivial process (`sysyc --version`): the cost of
//!   the campaign supervisor, which starts one child per session (see
//!   `harness::campaign::isolate`);
//! * `guide-weights` — the coverage-guided swarm's weights of one batch (`campaign::guide`),
//!   from its window of `WINDOW` programs' feedback, against the 50,000 programs (an hour of a
//!   campaign) every earlier program would be.
//!
//! Steps are counted by one run outside the measurement. Measurement times are short; the
//! figures are for comparing revisions on one machine.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use harness::campaign::guide::{Feedback, WINDOW, weights_from};
use sysy_generator::{self, GenConfig};
use sysy_check::refinterp::{self, RefConfig};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;
use std::process::{Command, Stdio};
use sysyc::config::Config;
use sysyc::driver;
use sysyc::passes::OptLevel;
use sysyc::frontend::{self, LineIndex, hir};
use sysyc::ir::Module;
use sysyc::ir::interp::InterpConfig;

/// Seeds of the generated programs (fixed: the set must not change between runs).
const SEEDS: std::ops::Range<u64> = 1..33;
/// Generated programs whose reference run exceeds this many steps are left out, so one
/// outlier does not dominate the set.
const MAX_STEPS: u64 = 5_000_000;

/// A program ready for the reference interpreter.
struct Analysed {
    lines: LineIndex,
    program: hir::Program,
    source: String,
    stdin: Vec<u8>,
    steps: u64,
}

fn analyse(name: &str, source: String, stdin: Vec<u8>) -> Option<Analysed> {
    let program = frontend::compile_source(name, &source).ok()?;
    let lines = LineIndex::new(&source);
    let config = RefConfig { max_steps: MAX_STEPS, ..RefConfig::default() };
    let outcome = refinterp::run(&program, &lines, &stdin, &config).ok()?;
    Some(Analysed { lines, program, source, stdin, steps: outcome.steps })
}

fn corpus() -> Vec<Analysed> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/lang");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    paths.retain(|p| p.extension().is_some_and(|x| x == "sy"));
    paths.sort();
    let programs: Vec<Analysed> = paths
        .iter()
        .filter_map(|path| {
            let source = frontend::source_from_bytes(&std::fs::read(path).ok()?);
            let stdin = std::fs::read(path.with_extension("in")).unwrap_or_default();
            analyse(&path.to_string_lossy(), source, stdin)
        })
        .collect();
    assert!(!programs.is_empty(), "corpus/lang holds no programs");
    programs
}

fn generated() -> Vec<Analysed> {
    let config = GenConfig::default();
    SEEDS
        .filter_map(|seed| {
            let generated = harness::sources::generated::generate(seed, &config);
            analyse("generated.sy", generated.source, generated.stdin)
        })
        .collect()
}

fn refinterp_bench(c: &mut Criterion, label: &str, programs: &[Analysed]) {
    let config = RefConfig::default();
    let steps: u64 = programs.iter().map(|p| p.steps).sum();
    let mut group = c.benchmark_group("refinterp");
    group.throughput(Throughput::Elements(steps));
    group.bench_function(label, |b| {
        b.iter(|| {
            for p in programs {
                let _ = black_box(refinterp::run(&p.program, &p.lines, &p.stdin, &config));
            }
        })
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    let config = GenConfig::default();
    let seeds = SEEDS.end - SEEDS.start;
    let mut group = c.benchmark_group("generator");
    group.throughput(Throughput::Elements(seeds));
    group.bench_function("default-config", |b| {
        b.iter(|| {
            for seed in SEEDS {
                black_box(harness::sources::generated::generate(seed, &config));
            }
        })
    });
    group.finish();

    let corpus = corpus();
    let generated = generated();
    refinterp_bench(c, "corpus-lang", &corpus);
    refinterp_bench(c, "generated", &generated);

    let interp_config = InterpConfig::default();
    let modules: Vec<(&Analysed, Module, u64)> = generated
        .iter()
        .filter_map(|p| {
            let module = driver::lower_source("generated.sy", &p.source).ok()?;
            let steps = driver::interpret(&module, &p.stdin, &interp_config).ok()?.cost.total();
            Some((p, module, steps))
        })
        .collect();
    let steps: u64 = modules.iter().map(|(_, _, s)| s).sum();
    let mut group = c.benchmark_group("ir-interp");
    group.throughput(Throughput::Elements(steps));
    group.bench_function("generated-O0", |b| {
        b.iter(|| {
            for (p, module, _) in &modules {
                let _ = black_box(driver::interpret(module, &p.stdin, &interp_config));
            }
        })
    });
    group.finish();
}

/// The `sysyc` binary of the same target directory (`target/<profile>/sysyc`; benches run from
/// `target/<profile>/deps/`).
fn sysyc_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let profile_dir = exe.parent()?.parent()?;
    Some(profile_dir.join("sysyc")).filter(|p| p.is_file())
}

fn isolation(c: &mut Criterion) {
    let options = Config::level(OptLevel::O2);
    let config = GenConfig::default();
    let sources: Vec<String> = SEEDS
        .map(|seed| harness::sources::generated::generate(seed, &config).source)
        .filter(|source| driver::compile_asm("generated.sy", source, &options).is_ok())
        .collect();
    let mut group = c.benchmark_group("compile-isolation");
    group.throughput(Throughput::Elements(sources.len() as u64));
    group.bench_function("in-process", |b| {
        b.iter(|| {
            for source in &sources {
                let _ = black_box(driver::compile_asm("generated.sy", source, &options));
            }
        })
    });
    let Some(sysyc) = sysyc_binary() else {
        eprintln!("note: compile-isolation/subprocess skipped: no sysyc binary next to the bench (cargo build --release -p sysyc)");
        group.finish();
        return;
    };
    let dir = tempfile::tempdir().expect("temporary directory");
    let files: Vec<PathBuf> = sources
        .iter()
        .enumerate()
        .map(|(i, source)| {
            let path = dir.path().join(format!("p{i}.sy"));
            std::fs::write(&path, source).expect("writing a program");
            path
        })
        .collect();
    let out = dir.path().join("out.s");
    group.bench_function("subprocess", |b| {
        b.iter(|| {
            for file in &files {
                let status = Command::new(&sysyc).arg("-S").arg("-O2").arg(file).arg("-o").arg(&out).status();
                assert!(status.is_ok_and(|s| s.success()), "sysyc -S -O2 {} failed", file.display());
            }
        })
    });
    group.finish();
    let mut group = c.benchmark_group("compile-isolation");
    group.bench_function("process-start", |b| {
        b.iter(|| {
            let status = Command::new(&sysyc).arg("--version").stdout(Stdio::null()).status();
            assert!(status.is_ok_and(|s| s.success()));
        })
    });
    group.finish();
}

/// Feedback like a campaign's: 12 of the knobs, and a pass set that depends on two of them.
fn feedback(programs: u64) -> Vec<Feedback> {
    let passes = ["mem2reg", "gvn", "licm", "dce", "instcombine", "simplify-cfg", "sccp", "unroll", "inline", "gcm"];
    (0..programs)
        .map(|p| {
            let knobs = (p + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20 & 0xfff;
            let changed = passes.iter().enumerate().filter(|(i, _)| knobs >> (i % 12) & 1 == 1 || *i < 4).map(|(_, n)| n.to_string()).collect();
            Feedback { program: p, knobs_on: knobs, coverage: Some(0.5 + (knobs & 0xf) as f64 / 32.0), changed, checked: true }
        })
        .collect()
}

fn guide_weights(c: &mut Criterion) {
    let mut group = c.benchmark_group("guide-weights");
    for programs in [WINDOW, 50_000] {
        let results = feedback(programs);
        group.bench_function(format!("{programs}-programs"), |b| b.iter(|| black_box(weights_from(&results))));
    }
    group.finish();
}

criterion_group! {
    name = group;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = benches, isolation, guide_weights
}
criterion_main!(group);
