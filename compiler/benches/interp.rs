//! Speed of the IR interpreter alone (`Program::run`, and `Program::new` separately) on
//! fixed workloads, compiled at `-O0` and `-O2` outside the measurement:
//!
//! * `lang` — the project's `corpus/lang` programs and the competition's functional cases
//!   (small, call- and I/O-heavy, like fuzzing programs);
//! * `performance` — the competition's performance cases, each stopped after
//!   [`PERFORMANCE_STEPS`] steps (loop- and memory-heavy);
//! * `extra` — the `.sy` files (with their `.in`) of the directory named by the environment
//!   variable `INTERP_BENCH_DIR`, when set: e.g. programs written by `harness gen --swarm`,
//!   the shape of a fuzzing campaign's oracle runs. Capped like `performance`.
//!
//! Throughput is in interpreter steps (IR instructions executed) per second, counted once
//! outside the measurement. Time is the CPU time of the measuring thread (Linux
//! `schedstat`), not wall-clock time: the machine may be shared, and another process's
//! work should not count. The suites are found as the `compiler` bench finds them
//! (`SYSY_TESTS`); without them only `corpus/lang` is measured.
//!
//! `cargo bench -p sysyc --bench interp [-- --save-baseline NAME | --baseline NAME]`

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;
use sysyc::config::Config;
use sysyc::driver;
use sysyc::frontend;
use sysyc::ir::Module;
use sysyc::ir::interp::{InterpConfig, Program};
use sysyc::passes::OptLevel;

/// Step budget of each run of the `performance` and `extra` sets (a run stops there with a
/// step-limit trap, the same on every revision).
const PERFORMANCE_STEPS: u64 = 2_000_000;

/// CPU time of the calling thread, in nanoseconds.
struct CpuTime;

fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .expect("/proc/thread-self/schedstat (Linux) gives the thread's CPU time")
}

impl Measurement for CpuTime {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        thread_cpu_ns() - start
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &NanosecondFormatter
    }
}

struct NanosecondFormatter;

impl ValueFormatter for NanosecondFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = match typical {
            t if t < 1e3 => (1.0, "ns"),
            t if t < 1e6 => (1e-3, "µs"),
            t if t < 1e9 => (1e-6, "ms"),
            _ => (1e-9, "s"),
        };
        values.iter_mut().for_each(|v| *v *= factor);
        unit
    }

    fn scale_throughputs(&self, _typical: f64, throughput: &Throughput, values: &mut [f64]) -> &'static str {
        let per_ns = match *throughput {
            Throughput::Elements(n) | Throughput::Bytes(n) | Throughput::BytesDecimal(n) => n as f64,
            Throughput::ElementsAndBytes { elements, .. } => elements as f64,
            Throughput::Bits(n) => n as f64,
        };
        // Millions per second.
        values.iter_mut().for_each(|v| *v = per_ns / *v * 1e3);
        "M/s"
    }

    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

/// One SysY program with its standard input.
struct Source {
    name: String,
    text: String,
    stdin: Vec<u8>,
}

/// The `.sy` files of `dir` (sorted, so the set is the same on every run) with their `.in`.
fn sources_in(dir: &Path) -> Vec<Source> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sy"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|path| {
            let text = frontend::source_from_bytes(&std::fs::read(&path).ok()?);
            let stdin = std::fs::read(path.with_extension("in")).unwrap_or_default();
            let name = path.file_stem()?.to_string_lossy().into_owned();
            Some(Source { name, text, stdin })
        })
        .collect()
}

/// The programs of a set compiled at one level, with their step counts under `config`.
struct Workload<'s> {
    modules: Vec<(&'s Source, Module)>,
    programs: Vec<(&'s Source, Program)>,
    steps: u64,
}

fn workload<'s>(sources: &'s [Source], level: OptLevel, config: &InterpConfig) -> Workload<'s> {
    let compile = Config::level(level);
    let modules: Vec<(&Source, Module)> = sources
        .iter()
        .filter_map(|s| Some((s, driver::compile_ir(&s.name, &s.text, &compile).ok()?.0)))
        .collect();
    let programs: Vec<(&Source, Program)> =
        modules.iter().filter_map(|(s, m)| Some((*s, Program::new(m).ok()?))).collect();
    let steps = programs.iter().map(|(s, p)| p.run(&s.stdin, config).outcome.steps).sum();
    Workload { modules, programs, steps }
}

fn group(c: &mut Criterion<CpuTime>, label: &str, sources: &[Source], config: &InterpConfig) {
    if sources.is_empty() {
        return;
    }
    for (level, name) in [(OptLevel::O0, "O0"), (OptLevel::O2, "O2")] {
        let w = workload(sources, level, config);
        let mut g = c.benchmark_group("interp-run");
        g.throughput(Throughput::Elements(w.steps));
        g.bench_function(format!("{label}-{name}"), |b| {
            b.iter(|| {
                for (s, p) in &w.programs {
                    black_box(p.run(&s.stdin, config));
                }
            })
        });
        g.finish();
        let mut g = c.benchmark_group("interp-translate");
        g.throughput(Throughput::Elements(w.modules.len() as u64));
        g.bench_function(format!("{label}-{name}"), |b| {
            b.iter(|| {
                for (_, m) in &w.modules {
                    let _ = black_box(Program::new(m));
                }
            })
        });
        g.finish();
    }
}

fn benches(c: &mut Criterion<CpuTime>) {
    let suites = sysyc::suites::sysy_tests_dir();
    let mut lang = sources_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/lang"));
    if let Some(dir) = &suites {
        lang.extend(sources_in(&dir.join("functional")));
    }
    let performance = suites.map(|dir| sources_in(&dir.join("performance"))).unwrap_or_default();
    let extra = std::env::var_os("INTERP_BENCH_DIR").map(|d| sources_in(Path::new(&d))).unwrap_or_default();

    let full = InterpConfig::default();
    let capped = InterpConfig { max_steps: PERFORMANCE_STEPS, ..InterpConfig::default() };
    group(c, "lang", &lang, &full);
    group(c, "performance", &performance, &capped);
    group(c, "extra", &extra, &capped);
}

criterion_group! {
    name = interp;
    config = Criterion::default().with_measurement(CpuTime).sample_size(20).measurement_time(Duration::from_secs(8)).warm_up_time(Duration::from_secs(2));
    targets = benches
}
criterion_main!(interp);
