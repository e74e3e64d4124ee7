//! Measures the interpreter's Rust stack use per SysY call: runs an unbounded recursion with
//! the smallest stack the interpreter accepts and reports the depth at which its stack guard
//! stopped it. `cargo run --release -p harness --example stack_per_call`.

use sysy_check::refinterp::{self, RefConfig};

fn main() {
    let programs = [
        ("return f(n + 1);", "int f(int n) { return f(n + 1); } int main() { return f(0); }"),
        (
            "nested statements",
            "int f(int n) { int i = 0; while (i < 1) { if (n >= 0) { { return f(n + 1) + 1; } } i = i + 1; } return 0; }
             int main() { return f(0); }",
        ),
    ];
    for (what, src) in programs {
        let config = RefConfig {
            max_depth: u32::MAX,
            stack_bytes: 0,
            ..RefConfig::default()
        };
        match refinterp::run_source("deep.sy", src, b"", &config) {
            Ok(outcome) => {
                let trap = outcome.trap.expect("unbounded recursion traps");
                let depth: u64 = trap
                    .detail
                    .rsplit(' ')
                    .next()
                    .and_then(|d| d.parse().ok())
                    .unwrap_or(0);
                // The smallest stack is twice the margin, so the budget is one margin.
                let budget = refinterp::STACK_MARGIN as u64;
                println!(
                    "{what}: stopped at depth {depth}: {} bytes per call",
                    budget / depth.max(1)
                );
            }
            Err(e) => println!("{what}: {e}"),
        }
    }
}
