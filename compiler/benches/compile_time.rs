//! Compile time against program size: `driver::compile_asm` (front end, `-O0` or `-O2`
//! pipeline, back end with every stage of the level) on generated programs of four shapes,
//! each at several sizes counted in statements. Throughput is in statements per second, so
//! a flat throughput across sizes is linear growth; a falling one shows the super-linear
//! shapes. `scripts/compile-time-table.sh` turns criterion's estimates into a growth table
//! (time per size and the ratio of successive sizes).
//!
//! Shapes:
//! * `straight` — one `main` of `x = x + 1;` statements (long blocks: the back-end stages'
//!   block-local rewrites, use lists of one hot variable);
//! * `functions` — many small functions with a branch each, all called from `main` (the
//!   call graph, inlining, a huge `main` after inlining);
//! * `nesting` — `if` statements nested 32 deep, repeated (many blocks, deep dominator trees,
//!   if-conversion). Its sizes, and those of `functions`, stop at 50k: `simplify-cfg` and
//!   `constraint-elim` (nesting) and the inliner's block splitting in a huge `main`
//!   (functions) still grow faster than linearly;
//! * `loops` — many small counted loops over a global array in one function (the loop
//!   passes). Its sizes stop at 2k statements: the loop passes (`loop-simplify`,
//!   `loop-rotate`, `full-unroll`) still recompute their analyses once per loop they change,
//!   so the shape grows as loops × blocks (see the growth table); 200k statements would
//!   take hours.
//!
//! The sizes are few and the samples the minimum criterion allows: a whole `cargo bench
//! --bench compile_time` takes several minutes.

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use std::fmt::Write as _;
use std::hint::black_box;
use std::time::Duration;
use sysyc::config::Config;
use sysyc::driver;
use sysyc::passes::OptLevel;

#[derive(Clone, Copy)]
enum Shape {
    Straight,
    Functions,
    Nesting,
    Loops,
}

impl Shape {
    const ALL: [Shape; 4] = [Shape::Straight, Shape::Functions, Shape::Nesting, Shape::Loops];

    fn name(self) -> &'static str {
        match self {
            Shape::Straight => "straight",
            Shape::Functions => "functions",
            Shape::Nesting => "nesting",
            Shape::Loops => "loops",
        }
    }

    fn sizes(self) -> &'static [usize] {
        match self {
            Shape::Loops => &[500, 1_000, 2_000],
            Shape::Nesting | Shape::Functions => &[1_000, 10_000, 50_000],
            Shape::Straight => &[1_000, 10_000, 50_000, 200_000],
        }
    }

    /// A valid program of about `statements` statements.
    fn source(self, statements: usize) -> String {
        let mut s = String::new();
        match self {
            Shape::Straight => {
                s.push_str("int main(){int x=0;\n");
                s.push_str(&"x=x+1;\n".repeat(statements));
                s.push_str("putint(x);return 0;}\n");
            }
            Shape::Functions => {
                // Four statements per function and one call in main.
                let n = statements / 5;
                for i in 0..n {
                    let _ = writeln!(s, "int f{i}(int a){{int b=a*3;if(b>{})b=b-{};a=a+b;return a%1000;}}", i % 97, i % 13);
                }
                s.push_str("int main(){int s=getint();\n");
                for i in 0..n {
                    let _ = writeln!(s, "s=f{i}(s);");
                }
                s.push_str("putint(s);return 0;}\n");
            }
            Shape::Nesting => {
                const DEPTH: usize = 32;
                s.push_str("int main(){int x=getint();\n");
                for c in 0..statements / (2 * DEPTH) {
                    for d in 0..DEPTH {
                        let _ = writeln!(s, "if(x%{}!={}){{x=x+{};", d + 2, c % (d + 2), d + c % 7);
                    }
                    s.push_str(&"}".repeat(DEPTH));
                    s.push('\n');
                }
                s.push_str("putint(x);return 0;}\n");
            }
            Shape::Loops => {
                // Five statements per loop (the counter reset, the loop, three in its body).
                s.push_str("int a[16];\nint main(){int x=getint();int i;\n");
                for c in 0..statements / 5 {
                    let _ = writeln!(
                        s,
                        "i=0;while(i<{}){{a[i%16]=a[i%16]+i*x;x=x+a[(i+{})%16];i=i+1;}}",
                        10 + c % 5,
                        c % 7
                    );
                }
                s.push_str("putint(x);return 0;}\n");
            }
        }
        s
    }
}

fn compile_time(c: &mut Criterion) {
    for level in [OptLevel::O0, OptLevel::O2] {
        let config = Config::level(level);
        for shape in Shape::ALL {
            let mut group = c.benchmark_group(format!("compile-time/{}/{level:?}", shape.name()));
            group.sampling_mode(SamplingMode::Flat).sample_size(10).warm_up_time(Duration::from_millis(1));
            for &size in shape.sizes() {
                let source = shape.source(size);
                // The programs must compile: a bench of an error path measures nothing.
                driver::compile_asm("bench.sy", &source, &config).expect("generated program compiles");
                group.throughput(Throughput::Elements(size as u64));
                group.bench_with_input(BenchmarkId::from_parameter(size), &source, |b, source| {
                    b.iter(|| black_box(driver::compile_asm("bench.sy", source, &config)))
                });
            }
            group.finish();
        }
    }
}

criterion_group!(benches, compile_time);
criterion_main!(benches);
