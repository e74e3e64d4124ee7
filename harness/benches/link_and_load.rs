//! What the campaign pays per distinct assembly text after the back end, on generated
//! programs' `-O2` assembly (the programs of campaign seed 42, as `harness campaign` checks
//! them):
//!
//! * `assemble` — the in-process assembler alone (text → object, in memory);
//! * `link` — [`steps::link`]: assemble, link with the freestanding runtime and write the
//!   executable into a fresh temporary directory (what the campaign's `link` phase times);
//! * `qemu-run` — one run of the linked executable under `qemu-arm -cpu cortex-a7` with the
//!   cost plugin, its counter file read back ([`Runner::run`], the campaign's `qemu` phase:
//!   served by a fork server); `qemu-run-single`, the same with a fresh qemu process per run;
//!   and `qemu-run-no-plugin`, served without the plugin: the plugin's share;
//! * `qemu-empty` — the run of a program whose `main` returns at once: the floor of one run
//!   (a fork server's fork, the plugin's fresh count); `qemu-empty-single`, the same with a
//!   fresh qemu (process start, qemu's own set-up, the plugin's loading).
//!
//! Throughput is in programs per second. The qemu groups are skipped, saying so, when
//! qemu-arm or the plugin is missing. Figures are for comparing revisions on one machine.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use harness::campaign::program_of;
use sysy_check::qemu::{CostMode, Runner};
use sysy_check::steps;
use sysy_check::subject::Subject;
use std::hint::black_box;
use std::time::Duration;
use sysyc::config::Config;
use sysyc::passes::OptLevel;
use sysyc::runtime::library::Assembler;

/// Campaign seed and program numbers of the measured programs.
const CAMPAIGN_SEED: u64 = 42;
const PROGRAMS: std::ops::Range<u64> = 0..8;

/// One generated program's `-O2` assembly and its input.
struct Prepared {
    asm: String,
    stdin: Vec<u8>,
}

fn prepare() -> Vec<Prepared> {
    let config = Config::level(OptLevel::O2);
    PROGRAMS
        .filter_map(|index| {
            let (_, p) = program_of(CAMPAIGN_SEED, true, index);
            let subject = Subject::from_ast("prog.sy", &p.unit, &p.source, &p.stdin).ok()?;
            let lowered = steps::lower(&subject).ok()?;
            let (module, _) = steps::optimise(&lowered, &config, None).ok()?;
            let asm = steps::select(&module, &config).ok()?;
            Some(Prepared { asm, stdin: p.stdin.clone() })
        })
        .collect()
}

const EMPTY: &str = "int main() { return 0; }";

fn empty_program() -> Prepared {
    let config = Config::level(OptLevel::O2);
    let (asm, _, _) = sysyc::driver::compile_asm("empty.sy", EMPTY, &config).expect("the empty program compiles");
    Prepared { asm, stdin: Vec::new() }
}

fn bench_link(c: &mut Criterion) {
    let programs = prepare();
    let mut group = c.benchmark_group("link-and-load");
    group.throughput(Throughput::Elements(programs.len() as u64));
    group.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3)).sample_size(10);
    group.bench_function("assemble", |b| {
        b.iter(|| {
            for p in &programs {
                black_box(sysyc::isa::arm::asm::assemble(&p.asm).expect("assembles"));
            }
        })
    });
    group.bench_function("link", |b| {
        b.iter(|| {
            for p in &programs {
                black_box(steps::link(&p.asm, Assembler::InProcess).expect("links"));
            }
        })
    });
    let timeout = Duration::from_secs(10);
    for (name, mode, served) in [
        ("qemu-run", CostMode::Measure, true),
        ("qemu-run-single", CostMode::Measure, false),
        ("qemu-run-no-plugin", CostMode::Off, true),
    ] {
        let Ok(runner) = Runner::new(mode).map(|r| r.with_fork_servers(served)) else {
            eprintln!("{name}: skipped (qemu-arm or the cost plugin not found)");
            continue;
        };
        let linked: Vec<_> =
            programs.iter().map(|p| (steps::link(&p.asm, Assembler::InProcess).expect("links"), &p.stdin)).collect();
        group.bench_function(name, |b| {
            b.iter(|| {
                for (exe, stdin) in &linked {
                    black_box(runner.run(&exe.path, stdin, timeout).expect("runs"));
                }
            })
        });
    }
    group.finish();

    let mut floor = c.benchmark_group("link-and-load-floor");
    floor.throughput(Throughput::Elements(1));
    floor.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3)).sample_size(10);
    for (name, served) in [("qemu-empty", true), ("qemu-empty-single", false)] {
        match Runner::new(CostMode::Measure) {
            Ok(runner) => {
                let runner = runner.with_fork_servers(served);
                let empty = empty_program();
                let exe = steps::link(&empty.asm, Assembler::InProcess).expect("links");
                floor.bench_function(name, |b| b.iter(|| black_box(runner.run(&exe.path, &empty.stdin, timeout).expect("runs"))));
            }
            Err(e) => eprintln!("{name}: skipped ({e})"),
        }
    }
    floor.finish();
}

criterion_group!(benches, bench_link);
criterion_main!(benches);
