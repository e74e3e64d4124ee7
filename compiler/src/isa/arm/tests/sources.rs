//! Execution tests written as SysY source: the program is optimised at `-O2`, the IR
//! interpreter's output is the expectation, and the back end must reproduce it under every
//! option set of [`check`] (all stages, none, each one left out). Each program aims at the
//! shapes one back-end stage rewrites; the assembly checks make sure the stage fired.

use super::run::check;
use crate::config::Config;
use crate::driver;
use crate::ir::Module;
use crate::ir::interp::InterpConfig;
use crate::isa::arm::{BackendOptions, compile_module};
use crate::passes::OptLevel;

fn optimised(source: &str) -> Module {
    driver::compile_ir("test.sy", source, &Config::level(OptLevel::O2)).expect("valid program").0
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
/// of a `mov #0; mov<cc> #1` / select pair (remainder sequences have a few too).
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
    assert!(predicated_lines(&with) >= predicated_lines(&without) + 4, "{with}");
    assert!(conditional_branches(&with) < conditional_branches(&without), "{with}");
}

const POWER_OF_TWO_REMAINDERS: &str = r#"
int main() {
    int n = getint();
    int i = 0;
    int zeros = 0;
    while (i < n) {
        int x = getint();
        putint(x % 2); putch(32);
        putint(x % -4); putch(32);
        putint(x % 256); putch(32);
        putint(x % 1024); putch(32);
        putint(x % 1073741824); putch(32);
        putint(x / 8); putch(32);
        if (x % 2 == 0) zeros = zeros + 1;
        if (0 != x % 8) zeros = zeros + 10;
        if (x % 512 == 0) zeros = zeros + 100;
        if (x % -16 != 0) zeros = zeros - 1000;
        putint(zeros); putch(10);
        i = i + 1;
    }
    return 0;
}
"#;

#[test]
fn power_of_two_remainders_keep_the_dividends_sign() {
    let module = check_source(
        POWER_OF_TWO_REMAINDERS,
        &["18 0 1 -1 7 -7 8 -8 255 -255 256 -256 1023 -1025 2147483647 -2147483648 -2147483647 1073741824 -1073741824"],
    );
    let asm = compile_module(&module, &BackendOptions::all()).expect("compiles");
    assert!(asm.contains("\ttst\t"), "{asm}");
    assert!(asm.contains("\tubfx\t"), "{asm}");
}

const POWER_OF_TWO_SIGNS: &str = r#"
int halve_bits(int b) {
    int bits = 0;
    while (b > 0) {
        if (b % 2 == 1) bits = bits + 1;
        b = b / 2;
    }
    return bits * 1000 + b % 4;
}
int main() {
    int n = getint();
    int k = 0;
    while (k < n) {
        int x = getint();
        int t = 0;
        if (x % 2 == 1) t = t + 1;
        if (x % 2 == -1) t = t + 2;
        if (x % 4 == 3) t = t + 4;
        if (x % 4 != -3) t = t + 8;
        if (x % -8 == 5) t = t + 16;
        putint(t); putch(32);
        putint(x / 2 + x % 2); putch(32);
        if (x >= 0) { putint(x / 8 + x % -16 + (x + 1) / 2 + (x + 1) % 4); putch(32); }
        if (x > 0) { putint((x - 1) / 4 + (x - 1) % 1024 + x % 2048); putch(32); }
        if (x < 0) { putint((0 - x) / 2 + (0 - x) % 2 + x / -4); putch(32); }
        putint(halve_bits(x)); putch(10);
        k = k + 1;
    }
    // Counters from zero: a zero-trip loop for a non-positive bound.
    int s = 0;
    int i = 0;
    while (i < n - 3) { s = s + i / 4 + i % 8; i = i + 1; }
    int j = 0;
    while (j + 1 < n * 7) { s = s + j % 16 - j / 2; j = j + 1; }
    putint(s); putch(10);
    return 0;
}
"#;

#[test]
fn power_of_two_divisions_with_sign_facts() {
    let module = check_source(
        POWER_OF_TWO_SIGNS,
        &[
            "0",
            "1 -2147483648",
            "12 0 1 -1 2 -2 3 -3 5 -5 2147483647 -2147483647 -2147483648",
            "6 7 -7 1023 -1024 2048 -2049",
        ],
    );
    let asm = compile_module(&module, &BackendOptions::all()).expect("compiles");
    assert!(asm.contains("#0x80000001"), "{asm}");
    assert!(asm.contains("\ttst\t"), "{asm}");
}

const QUOTIENT_AND_REMAINDER: &str = r#"
int main() {
    int n = getint();
    int d = getint();
    int i = 0;
    int acc = 0;
    while (i < n) {
        int x = getint();
        int w = x / 30;
        int b = x % 30;
        int q = x / d;
        if (x > 0) {
            int r = x % d;
            acc = acc + r;
        }
        if (x >= 0) {
            putint(x / 7); putch(32); putint(x % 1000003); putch(32); putint(x / 641 % 97); putch(32);
        }
        putint(w); putch(32); putint(b); putch(32); putint(q); putch(32); putint(x % -7); putch(10);
        acc = acc + w * 3 + b;
        i = i + 1;
    }
    putint(acc);
    putch(10);
    return 0;
}
"#;

#[test]
fn a_remainder_reuses_the_quotient_of_the_same_operands() {
    let module = check_source(
        QUOTIENT_AND_REMAINDER,
        &[
            "0 1",
            "12 7 0 1 -1 29 30 -31 2147483647 -2147483648 123456 2147483646 1000003 2000005",
            "4 -1 -2147483647 2147483647 -30 0",
        ],
    );
    let asm = compile_module(&module, &BackendOptions::all()).expect("compiles");
    // One magic multiply for `x / 30` and `x % 30`, one for `x % -7`, four under `x >= 0`
    // (without the sign correction); one `sdiv` for `x / d` and the dominated `x % d`.
    assert_eq!(asm.matches("\tsmmul\t").count(), 6, "{asm}");
    assert_eq!(asm.matches("\tsdiv\t").count(), 1, "{asm}");
}

const RANGE_CHECKS: &str = r#"
int grid[10][10];
int main() {
    int n = getint();
    int i = 0;
    int inside = 0, edge = 0;
    while (i < n) {
        int r = getint();
        int c = getint();
        int e = getint();
        if (r >= 0 && r < 10 && c > -1 && c <= 9) {
            grid[r][c] = grid[r][c] + 1;
            inside = inside + 1;
        }
        // A value of its own: a second range check of `r` would be decided on the edges
        // out of the first (`thread-known-branch`), which leaves nothing to merge.
        if (e >= 0 && e <= 2147483646) edge = edge + 1;
        i = i + 1;
    }
    putint(inside); putch(32); putint(edge); putch(32); putint(grid[0][0] + grid[9][9] * 10);
    putch(10);
    return 0;
}
"#;

#[test]
fn range_checks_become_one_unsigned_comparison() {
    let module = check_source(
        RANGE_CHECKS,
        &[
            "0",
            "9 0 0 0 9 9 9 10 0 10 0 10 -1 0 -1 0 -1 -2147483648 -2147483648 5 2147483647 \
             5 -2147483648 2147483646 2147483647 2147483647 5 0",
            "4 3 3 3 9 9 -5 9 9 2147483646 -5 20 -2147483648",
        ],
    );
    let with = compile_module(&module, &BackendOptions::all()).expect("compiles");
    let without = compile_module(&module, &BackendOptions::without(&["arm-if-convert"]).unwrap()).expect("compiles");
    let unsigned = |asm: &str| -> usize {
        ["\tblo\t", "\tbls\t", "\tbhs\t", "\tbhi\t"].iter().map(|b| asm.matches(b).count()).sum()
    };
    assert!(unsigned(&with) >= 2, "{with}");
    assert!(conditional_branches(&with) < conditional_branches(&without), "{with}");
}
