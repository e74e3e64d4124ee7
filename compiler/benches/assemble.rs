//! Throughput of the in-process assembler (`isa::arm::asm::assemble`) on the back end's own
//! output: every `corpus/lang` and `corpus/bench` program compiled at `-O0` and at `-O2`,
//! and, when present, the competition's functional suite at both levels. Each iteration
//! assembles the whole set; throughput is in assembly lines per second.
//!
//! A campaign assembles every text it checks in-process, so this is the assembler's cost in
//! a campaign's worker. The texts are compiled once, outside the measurement.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;
use sysyc::config::Config;
use sysyc::driver;
use sysyc::frontend;
use sysyc::isa::arm::asm;
use sysyc::passes::OptLevel;

/// The `-O0` and `-O2` assembly of every `.sy` file of `dirs` the compiler accepts (sorted,
/// so the set is the same on every run).
fn texts(dirs: &[PathBuf]) -> Vec<String> {
    let mut paths: Vec<PathBuf> = dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sy"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for path in &paths {
        let Ok(bytes) = std::fs::read(path) else { continue };
        let source = frontend::source_from_bytes(&bytes);
        for level in [OptLevel::O0, OptLevel::O2] {
            if let Ok((text, _, _)) = driver::compile_asm("bench.sy", &source, &Config::level(level)) {
                out.push(text);
            }
        }
    }
    out
}

fn bench_set(c: &mut Criterion, name: &str, texts: &[String]) {
    if texts.is_empty() {
        return;
    }
    let lines: usize = texts.iter().map(|t| t.lines().count()).sum();
    let mut group = c.benchmark_group("assemble");
    group.throughput(Throughput::Elements(lines as u64));
    group.measurement_time(Duration::from_secs(10));
    group.bench_function(name, |b| {
        b.iter(|| {
            for text in texts {
                black_box(asm::assemble(black_box(text)).expect("the back end's output assembles"));
            }
        })
    });
    group.finish();
}

fn assemble(c: &mut Criterion) {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let own = texts(&[corpus.join("lang"), corpus.join("bench")]);
    assert!(!own.is_empty(), "corpus/lang and corpus/bench hold no programs");
    bench_set(c, "corpus", &own);
    let functional = sysyc::suites::sysy_tests_dir().map(|d| texts(&[d.join("functional")])).unwrap_or_default();
    bench_set(c, "functional", &functional);
}

criterion_group!(benches, assemble);
criterion_main!(benches);
