//! Semantic decisions of the reference interpreter that the corpus does not pin down:
//! evaluation order, aliasing, NaNs, step counting, limits and deep programs.

use sysy_check::refinterp::{self, InputFailure, RefConfig, RefError};
use std::time::Duration;
use sysyc::runtime::{Outcome, TrapKind};

fn run_with(src: &str, stdin: &str, config: &RefConfig) -> Outcome {
    refinterp::run_source("t.sy", src, stdin.as_bytes(), config).unwrap_or_else(|e| panic!("{e}"))
}

fn run(src: &str, stdin: &str) -> Outcome {
    run_with(src, stdin, &RefConfig::default())
}

/// stdout and exit status of a run that must not trap.
fn result(src: &str, stdin: &str) -> (String, u8) {
    let o = run(src, stdin);
    assert_eq!(o.trap, None, "unexpected trap");
    (String::from_utf8(o.stdout).unwrap(), o.exit_status.unwrap())
}

#[test]
fn operands_and_arguments_are_evaluated_left_to_right() {
    let src = "int f(int x) { putint(x); return x; }
        int g(int a, int b, int c) { return a * 100 + b * 10 + c; }
        int main() {
            putint(f(1) - f(2) * f(3)); putch(10);
            putint(g(getint(), getint(), getint())); putch(10);
            int a[3] = {getint(), getint(), 0};
            putint(a[0] - a[1]);
            return 0;
        }";
    assert_eq!(result(src, "4 5 6 7 9"), ("123-5\n456\n-2".into(), 0));
}

#[test]
fn assignment_evaluates_the_target_indices_first() {
    let src = "int a[4];
        int main() { a[getint()] = getint(); putarray(4, a); return 0; }";
    assert_eq!(result(src, "2 9").0, "4: 0 0 9 0\n");
    // The index is checked before the value is computed: nothing is read after it.
    let o = run(
        "int a[4]; int main() { a[getint()] = getint(); return 0; }",
        "7",
    );
    assert_eq!(o.trap.map(|t| t.kind), Some(TrapKind::OutOfBounds));
}

#[test]
fn short_circuit_skips_side_effects() {
    let src = "int n = 0;
        int t() { n = n + 1; return 1; }
        int main() { if (0 && t()) n = 100; if (1 || t()) n = n + 10; int v = t() || t(); return n * 10 + v; }";
    assert_eq!(result(src, ""), (String::new(), 111));
}

#[test]
fn array_parameters_alias_the_callers_storage() {
    let src =
        "void bump(int r[], int n) { int i = 0; while (i < n) { r[i] = r[i] + 1; i = i + 1; } }
        void fill(int m[][3]) { m[1][2] = 7; bump(m[1], 4); }
        int main() {
            int a[3][3] = {};
            fill(a);
            putarray(9, a[0]);
            float f[2][2] = {{1.5}};
            return a[2][0] + f[0][0];
        }";
    // bump(m[1], 4) reaches a[2][0] through the row view (4 elements remain from a[1]).
    assert_eq!(result(src, ""), ("9: 0 0 0 1 1 8 1 0 0\n".into(), 2));
}

#[test]
fn float_semantics_are_single_precision_and_target_nans() {
    // 16777217 is not a float: int→float rounds to even; 0.1f + 0.2f is 0x1.33333p-2 in
    // single precision (in double it would print differently).
    let src = "int main() {
            putfloat(16777217); putch(10);
            putfloat(0.1 + 0.2); putch(10);
            float z = 0.0; putfloat(z / z); putch(10);
            float inf = 1e30 * 1e30; putfloat(inf - inf); putch(10);
            putfloat(-(z / z)); putch(10);
            int t = -2.9; return t + 10;
        }";
    assert_eq!(
        result(src, ""),
        ("0x1p+24\n0x1.333334p-2\nnan\nnan\n-nan\n".into(), 8)
    );
}

#[test]
fn exit_status_and_falling_off_main() {
    assert_eq!(
        result("int main() { return -8; }", ""),
        (String::new(), 248)
    );
    assert_eq!(result("int main() { putint(3); }", ""), ("3".into(), 0));
    assert_eq!(
        result("int main() { return 1225; }", ""),
        (String::new(), 201)
    );
}

#[test]
fn steps_count_statements_and_loop_tests() {
    // decl (1) + while (1) + 4 condition tests + 3 bodies (block + assignment each: 6)
    // + return (1) = 13.
    let src = "int main() { int i = 0; while (i < 3) { i = i + 1; } return i; }";
    let o = run(src, "");
    assert_eq!((o.steps, o.exit_status), (13, Some(3)));
    // A budget of exactly the steps needed suffices; one less traps, reporting the budget.
    let exact = run_with(
        src,
        "",
        &RefConfig {
            max_steps: 13,
            ..RefConfig::default()
        },
    );
    assert_eq!(exact.exit_status, Some(3));
    let short = run_with(
        src,
        "",
        &RefConfig {
            max_steps: 12,
            ..RefConfig::default()
        },
    );
    assert_eq!(short.trap.map(|t| t.kind), Some(TrapKind::StepLimit));
    assert_eq!(short.steps, 12);
}

#[test]
fn deep_recursion_within_the_depth_limit() {
    let src = "int sum(int n) { if (n == 0) return 0; return n + sum(n - 1); }
        int main() { putint(sum(150000)); return 0; }";
    let wrapped = (150_000u64 * 150_001 / 2) as u32 as i32;
    assert_eq!(result(src, "").0, wrapped.to_string());
    let limited = run_with(
        src,
        "",
        &RefConfig {
            max_depth: 1000,
            ..RefConfig::default()
        },
    );
    assert_eq!(limited.trap.map(|t| t.kind), Some(TrapKind::CallDepth));
}

#[test]
fn tiny_stack_reports_call_depth_instead_of_overflowing() {
    // With a stack far too small for the configured depth, the stack guard stops the run.
    let src = "int down(int n) { if (n == 0) return 0; return 1 + down(n - 1); }
        int main() { return down(10000000); }";
    let config = RefConfig {
        max_depth: u32::MAX,
        stack_bytes: 0,
        ..RefConfig::default()
    };
    let o = run_with(src, "", &config);
    let trap = o.trap.expect("trapped");
    assert_eq!(trap.kind, TrapKind::CallDepth);
    assert!(trap.detail.contains("stack"), "{}", trap.detail);
}

#[test]
fn long_operator_chains() {
    // A left-deep chain of 8000 additions: an expression tree 8000 levels deep.
    let terms = vec!["1"; 8000].join(" + ");
    let src = format!("int main() {{ int x = {terms}; putint(x); return 0; }}");
    assert_eq!(result(&src, "").0, "8000");
}

#[test]
fn memory_limit_traps_instead_of_allocating() {
    let src = "int big[100000]; int main() { return big[5]; }";
    let o = run_with(
        src,
        "",
        &RefConfig {
            max_memory_words: 1000,
            ..RefConfig::default()
        },
    );
    assert_eq!(o.trap.map(|t| t.kind), Some(TrapKind::CallDepth));
    let src =
        "int f() { int local[5000]; local[0] = 1; return local[0]; } int main() { return f(); }";
    let o = run_with(
        src,
        "",
        &RefConfig {
            max_memory_words: 1000,
            ..RefConfig::default()
        },
    );
    assert_eq!(
        o.trap.map(|t| (t.kind, t.loc.map(|l| l.col))),
        Some((TrapKind::CallDepth, Some(81)))
    );
}

#[test]
fn timeout_ends_an_endless_loop() {
    let config = RefConfig {
        timeout: Some(Duration::from_millis(50)),
        ..RefConfig::default()
    };
    let r = refinterp::run_source(
        "t.sy",
        "int main() { while (1) {} return 0; }",
        b"",
        &config,
    );
    assert!(
        matches!(r, Err(RefError::TimedOut { steps }) if steps > 0),
        "{r:?}"
    );
}

#[test]
fn front_end_errors_are_reported() {
    let r = refinterp::run_source(
        "t.sy",
        "int main() { return x; }",
        b"",
        &RefConfig::default(),
    );
    match r {
        Err(RefError::Frontend(e)) => {
            assert!(e.to_string().contains("undefined variable `x`"), "{e}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn runtime_library_io() {
    let src = "int main() {
            int a[4]; float f[2];
            int n = getarray(a); int m = getfarray(f);
            putarray(n, a); putfarray(m, f);
            // getch reads the newline after the last array element.
            putf(\"%d-%c-%.2f|\", getch(), 65, getfloat());
            starttime(); stoptime();
            putarray(-1, a);
            return n + m;
        }";
    assert_eq!(
        result(src, "3 1 2 3\n2 0x1p1 -0.5\n 2.25"),
        ("3: 1 2 3\n2: 0x1p+1 -0x1p-1\n10-A-2.25|-1:\n".into(), 5)
    );
}

#[test]
fn main_called_recursively_returns_zero_at_its_end() {
    let src = "int n = 0; int main() { n = n + 1; if (n < 3) { putint(main()); } }";
    assert_eq!(result(src, ""), ("00".into(), 0));
}

#[test]
fn unused_constant_declarations_count_as_steps_without_running() {
    let src = "int f(int x) { int a = 1; int b = 2; int c[3] = {1, 2, 3}; int d; return x; } int main() { return f(5); }";
    // main's return, f's four declarations, f's return.
    let o = run(src, "");
    assert_eq!((o.steps, o.exit_status), (6, Some(5)));
    // A budget ending among the declarations traps at the exact one: the fourth step is
    // the declaration of `c`.
    let o = run_with(
        src,
        "",
        &RefConfig {
            max_steps: 3,
            ..RefConfig::default()
        },
    );
    let trap = o.trap.expect("trapped");
    let col = src.find("c[3]").unwrap() as u32 + 1;
    assert_eq!(
        (trap.kind, trap.loc.map(|l| (l.line, l.col))),
        (TrapKind::StepLimit, Some((1, col)))
    );
    assert_eq!(o.steps, 3);
    // Declarations with effects still run: a call in an initialiser, a read of another
    // variable (which may trap), a local that is used later.
    let src =
        "int g() { putint(7); return 1; } int main() { int u; int y = g(); int z = u; return 0; }";
    let o = run(src, "");
    assert_eq!(o.stdout, b"7");
    assert_eq!(o.trap.map(|t| t.kind), Some(TrapKind::UninitRead));
}

#[test]
fn input_failure_policy() {
    let src = "int a[4]; int main() {
            int n = getarray(a); int x = getint(); int c = getch(); float f = getfloat();
            putarray(4, a); putint(n); putint(x); putint(c); putfloat(f); return 0; }";
    let strict = run(src, "3 5 6");
    assert_eq!(strict.trap.map(|t| t.kind), Some(TrapKind::InputExhausted));
    let lenient = RefConfig {
        input_failure: InputFailure::Zero,
        ..RefConfig::default()
    };
    let o = run_with(src, "3 5 6", &lenient);
    assert_eq!(
        (String::from_utf8(o.stdout).unwrap(), o.exit_status),
        ("4: 5 6 0 0\n3000x0p+0".into(), Some(0))
    );
}
