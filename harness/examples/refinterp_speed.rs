//! Speed of the reference interpreter, in process CPU time (robust on a shared machine):
//! * per-run cost of a small program (front end, lowering, interpreter thread, run) — what a
//!   fuzzing campaign pays per program;
//! * steps/s and simple statements/s of a tight loop;
//! * steps/s of any SysY files given on the command line (`FILE.sy`, stdin from `FILE.in`).
//!
//! `cargo run --release -p harness --example refinterp_speed [FILE.sy ...]`

use sysy_check::refinterp::{self, RefConfig};
use std::path::Path;

fn cpu_seconds() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given and nothing else.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

const SMALL: &str = "int a[10];
int f(int n) { if (n < 2) return n; return f(n - 1) + f(n - 2); }
int main() { int i = 0; while (i < 10) { a[i] = f(i); i = i + 1; } putarray(10, a); return a[9]; }";

const LOOP: &str = "int main() {
  int i = 0; int s = 0;
  while (i < 50000000) { s = s + i * 3; i = i + 1; }
  putint(s);
  return 0;
}";

fn main() {
    let config = RefConfig::default();
    let runs = 2000;
    let start = cpu_seconds();
    for _ in 0..runs {
        let o = refinterp::run_source("small.sy", SMALL, b"", &config).expect("runs");
        assert_eq!(o.exit_status, Some(34));
    }
    let per_run = (cpu_seconds() - start) / runs as f64;
    println!(
        "small program: {:.1} us per run (front end + lowering + thread + run)",
        per_run * 1e6
    );

    let start = cpu_seconds();
    let o = refinterp::run_source("loop.sy", LOOP, b"", &config).expect("runs");
    let secs = cpu_seconds() - start;
    // Per iteration: the loop test, the body block and two assignments.
    let assignments = 2.0 * 50_000_000.0;
    println!(
        "tight loop: {} steps in {secs:.2} s: {:.1} M steps/s, {:.1} M simple statements/s",
        o.steps,
        o.steps as f64 / secs / 1e6,
        assignments / secs / 1e6
    );

    for file in std::env::args().skip(1) {
        let path = Path::new(&file);
        let Ok(bytes) = std::fs::read(path) else {
            println!("{file}: cannot read");
            continue;
        };
        let source = sysyc::frontend::source_from_bytes(&bytes);
        let stdin = std::fs::read(path.with_extension("in")).unwrap_or_default();
        let start = cpu_seconds();
        match refinterp::run_source(&file, &source, &stdin, &config) {
            Ok(o) => {
                let secs = cpu_seconds() - start;
                println!(
                    "{file}: {} steps in {secs:.2} s: {:.1} M steps/s",
                    o.steps,
                    o.steps as f64 / secs / 1e6
                );
            }
            Err(e) => println!("{file}: {e}"),
        }
    }
}
