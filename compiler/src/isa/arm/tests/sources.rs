//! Execution tests written as SysY source: the program is optimised at `-O2`, the IR
//! interpreter's output is the expectation, and the back end must reproduce it under every
//! option set of [`check`] (all stages, none, each one left out). Each program aims at the
//! shapes one back-end stage rewrites; the assembly checks make sure the stage fired.

use super::run::check;
use crate::driver::{self, CompileOptions};
use crate::ir::Module;
use crate::ir::interp::InterpConfig;
use crate::isa::arm::{BackendOptions, compile_module};
use crate::passes::OptLevel;

fn optimised(source: &str) -> Module {
    driver::compile_ir("test.sy", source, &CompileOptions::level(OptLevel::O2)).expect("valid program").0
}

/// Runs `source` with each stdin under every back-end option set against the IR interpreter.
fn check_source(source: &str, inputs: &[&str]) -> Module {
    let module = optimised(source);
    for stdin in inputs {
        let outcome = driver::interpret(&module, stdin.as_bytes(), &InterpConfig::default()).expect("runs").outcome;
        let stdout = String::from_utf8(outcome.stdout).expect("text output");
        let status = i32::from(outcome.exit_status.expect("no trap"));
        check(&module, stdin, &stdout, status);
    }
    module
}

/// Executed-path-independent count of conditional branches in the assembly.
fn conditional_branches(asm: &str) -> usize {
    const CONDS: [&str; 14] = ["eq", "ne", "hs", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le"];
    asm.lines()
        .filter_map(|l| l.trim_start().split_whitespace().next())
        .filter(|m| m.strip_prefix('b').is_some_and(|c| CONDS.contains(&c)))
        .count()
}

/// Lines whose mnemonic carries a condition although it is not a branch or the second half
/// of a `mov #0; mov<cc> #1` / select pair.
fn predicated_lines(asm: &str) -> usize {
    asm.lines()
        .filter_map(|l| l.trim_start().split_whitespace().next())
        .filter(|m| {
            ["add", "sub", "ldr", "str", "vadd", "vsub", "movw", "mul", "mla", "lsl", "asr"]
                .iter()
                .any(|base| m.strip_prefix(base).is_some_and(|rest| rest.len() >= 2 && !rest.starts_with('.')))
        })
        .count()
}

const IF_SHAPES: &str = r#"
int a[64];
float fa[64];
int main() {
    int n = getint();
    int i = 0;
    while (i < n) { a[i] = getint(); fa[i] = a[i]; fa[i] = fa[i] / 4.0; i = i + 1; }
    int m = -1000000;
    int s = 0;
    int neg = 0;
    float fm = 0.0;
    i = 0;
    while (i < n) {
        int x = a[i];
        if (x > m) m = x;
        if (x % 2 == 0) s = s + x; else s = s - 1;
        if (x < 0) { neg = neg + 1; s = s * 3; }
        if (fa[i] < fm) fm = fa[i];
        if (fa[i] != fm) fm = fm - 0.5;
        if (s > 1000) s = s - 1000; else if (s < -1000) s = s + 777;
        i = i + 1;
    }
    // A loop whose back edge carries swapped values (moves on the latch edge).
    int p = 1;
    int q = 2;
    i = 0;
    while (i < n + 5) {
        int t = p;
        p = q;
        q = t + q % 1000;
        i = i + 1;
    }
    putint(m); putch(32); putint(s); putch(32); putint(neg); putch(32);
    putfloat(fm); putch(32); putint(p); putch(32); putint(q); putch(10);
    return s % 256;
}
"#;

#[test]
fn if_conversion_keeps_every_path() {
    let module = check_source(
        IF_SHAPES,
        &[
            "0",
            "1 -5",
            "8 3 -4 2147483647 -2147483648 0 7 7 -1",
            "12 100 200 300 400 500 600 700 800 900 1000 -1100 1200",
        ],
    );
    let with = compile_module(&module, &BackendOptions::all()).expect("compiles");
    let without = compile_module(&module, &BackendOptions::without(&["arm-if-convert"]).unwrap()).expect("compiles");
    assert!(predicated_lines(&with) >= 4, "{with}");
    assert_eq!(predicated_lines(&without), 0, "{without}");
    assert!(conditional_branches(&with) < conditional_branches(&without), "{with}");
}

