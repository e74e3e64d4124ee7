//! The `sysyc` command line on hostile input: binary garbage, expressions and statements
//! nested to (and past) the front end's limits, and array dimensions far beyond memory. Each
//! ends in a diagnostic (exit status 1) or in correct output — never a panic (exit status
//! 101) or a crash by signal, in any stage from the front end to the back end.

mod common;

use std::ffi::OsStr;
use std::io::Write;
use std::process::Output;

fn sysyc(source: &[u8], args: &[&str], stdin: &str) -> Output {
    let mut file = tempfile::Builder::new().suffix(".sy").tempfile().expect("temp file");
    file.write_all(source).expect("write source");
    let path = file.into_temp_path();
    common::run_sysyc(std::iter::once(path.as_os_str()).chain(args.iter().map(OsStr::new)), stdin)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit status 1 with an `error:` diagnostic containing `what`, and nothing on stdout.
fn assert_diagnostic(out: &Output, what: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "expected a diagnostic, got {:?}: {err}", out.status);
    assert!(err.contains("error") && err.contains(what), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.stdout.is_empty());
}

/// Deterministic pseudo-random bytes (xorshift), so a failure reproduces.
fn garbage(len: usize, mut state: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

#[test]
fn binary_garbage_gets_a_diagnostic() {
    for (seed, len) in [(1, 4096), (2, 1), (3, 65_536)] {
        let out = sysyc(&garbage(len, seed), &["-S", "-O2"], "");
        assert_diagnostic(&out, "");
    }
    // NULs, invalid UTF-8 and a valid prefix.
    let mut bytes = b"int main() { return 0; }\n".to_vec();
    bytes.extend_from_slice(b"\0\xff\xfe\xc3\x28 int x;");
    assert_diagnostic(&sysyc(&bytes, &["-S"], ""), "");
}

#[test]
fn nesting_past_the_limits_gets_a_diagnostic() {
    let n = 100_000;
    let chain = format!("int main() {{ int a = 1; return {}; }}", vec!["a"; n].join("+"));
    assert_diagnostic(&sysyc(chain.as_bytes(), &["-S", "-O2"], ""), "nest");
    let parens = format!("int main() {{ return {}1{}; }}", "(".repeat(n), ")".repeat(n));
    assert_diagnostic(&sysyc(parens.as_bytes(), &["-S", "-O2"], ""), "nest");
    let blocks = format!("int main() {} return 0; {}", "{".repeat(n), "}".repeat(n));
    assert_diagnostic(&sysyc(blocks.as_bytes(), &["-S", "-O2"], ""), "nest");
    let init = format!("int a[2] = {}1{}; int main() {{ return 0; }}", "{".repeat(n), "}".repeat(n));
    assert_diagnostic(&sysyc(init.as_bytes(), &["-S", "-O2"], ""), "");
}

#[test]
fn nesting_just_within_the_limits_compiles_and_runs_at_o2() {
    // An operator chain of 8000 terms: every stage (lowering, passes, back end) sees a
    // deep expression tree or a long def-use chain.
    let chain = format!("int main() {{ int a = getint(); return {}; }}", vec!["a"; 8000].join("+"));
    let out = sysyc(chain.as_bytes(), &["-O2", "--interpret"], "3");
    assert_eq!(out.status.code(), Some(3 * 8000 % 256), "{}", stderr(&out));
    let out = sysyc(chain.as_bytes(), &["-O2", "-S"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let conds = format!("int main() {{ int a = getint(); if ({}) return 1; return 2; }}", vec!["a"; 8000].join(" && "));
    let out = sysyc(conds.as_bytes(), &["-O2", "--interpret"], "1");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = sysyc(conds.as_bytes(), &["-O2", "-S"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // Nested ifs: 100 levels (each is a statement and a block: 200 of the 256 allowed).
    let ifs = format!("int main() {{ int a = getint(); {} a = a + 1; {} return a; }}", "if (a) {".repeat(100), "}".repeat(100));
    let out = sysyc(ifs.as_bytes(), &["-O2", "--interpret"], "4");
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let out = sysyc(ifs.as_bytes(), &["-O2", "-S"], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn huge_array_dimensions_get_a_diagnostic() {
    for src in [
        "int a[2147483647][2147483647]; int main() { return 0; }",
        "int main() { int a[1000000000]; return 0; }",
        "int f(int a[][2147483647][2147483647]) { return 0; } int main() { return 0; }",
        "const int N = 65536; int a[N][N][N]; int main() { return 0; }",
        "int a[-1]; int main() { return 0; }",
        "int a[4294967296]; int main() { return 0; }",
    ] {
        let out = sysyc(src.as_bytes(), &["-S", "-O2"], "");
        assert_diagnostic(&out, "");
    }
}

/// Runs `sysyc` on `source` with stdout and/or stderr going into a pipe whose reading end is
/// already closed (as after `sysyc ... | head -c 10`), the other stream captured.
fn sysyc_into_closed_pipe(source: &[u8], args: &[&str], close_stdout: bool, close_stderr: bool) -> Output {
    let mut file = tempfile::Builder::new().suffix(".sy").tempfile().expect("temp file");
    file.write_all(source).expect("write source");
    let path = file.into_temp_path();
    let closed = || {
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        std::process::Stdio::from(writer)
    };
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_sysyc"));
    command.arg(&path).args(args).stdin(std::process::Stdio::null());
    command.stdout(if close_stdout { closed() } else { std::process::Stdio::piped() });
    command.stderr(if close_stderr { closed() } else { std::process::Stdio::piped() });
    command.output().expect("sysyc runs")
}

#[test]
fn closed_pipes_end_runs_without_a_panic() {
    let parens = format!("int main() {{ return {}1{}; }}", "(".repeat(100_000), ")".repeat(100_000));
    // `sysyc nest.sy -S 2>&1 | head -c 10`: the diagnostic cannot be written.
    let out = sysyc_into_closed_pipe(parens.as_bytes(), &["-S"], true, true);
    assert_eq!(out.status.code(), Some(1));

    let program = b"int main() { int i = 0; while (1) { putint(i); i = i + 1; } return 0; }";
    for args in [&["-S"][..], &["--emit-ir"], &["--interpret"], &["-S", "-o", "-"]] {
        let out = sysyc_into_closed_pipe(program, args, true, false);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("cannot write to stdout") && !err.contains("panicked"), "{args:?}: {err}");
    }
    // Trap messages and --stats on a closed stderr.
    let trapping = b"int main() { int z = 0; putint(7); return 1 / z; }";
    let out = sysyc_into_closed_pipe(trapping, &["--interpret", "--stats", "-O2"], false, true);
    assert_eq!(out.status.code(), Some(125));
    assert_eq!(out.stdout, b"7");
}

#[test]
fn diagnostics_show_a_window_of_a_long_line() {
    // One line of about a megabyte, the error near its end.
    let statements = "a = a + 1; ".repeat(90_000);
    let src = format!("int main() {{ int a = 0; {statements}return a + x; }}");
    let col = src.find('x').expect("x") + 1;
    let out = sysyc(src.as_bytes(), &["-S"], "");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.len() < 2000, "{} bytes of diagnostic", err.len());
    assert!(err.lines().next().expect("first line").ends_with(&format!(":1:{col}: error: undefined variable `x`")), "{err}");
    assert_eq!(err.matches(&format!(":1:{col}")).count(), 2, "the snippet's header has the real column: {err}");
    assert!(err.contains("...") && err.contains("+ x; }"), "{err}");
    let caret = err.lines().find(|l| l.contains('^')).expect("a caret line");
    let source_line = err.lines().find(|l| l.contains("+ x; }")).expect("the window");
    assert_eq!(caret.find('^'), source_line.find('x'), "the caret is under x:\n{err}");
}

#[test]
fn invalid_utf8_in_a_string_literal_is_an_error_at_its_location() {
    let out = sysyc(b"int main() {\n  putf(\"ok \xff\xfe\\n\");\n  return 0;\n}\n", &["-S"], "");
    assert_diagnostic(&out, ":2:12: error: invalid UTF-8 in a string literal");
    // In comments (GBK in the competition's tests) it is still fine.
    let out = sysyc(b"// \xc4\xe3\xba\xc3\n/* \xff */ int main() { putf(\"ok\\n\"); return 3; }\n", &["--interpret"], "");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert_eq!(out.stdout, b"ok\n");
}
