//! The `harness` command line: `interp` exit statuses and streams, `conform` tables,
//! summary line and exit status.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn harness(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("harness runs");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cli")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn interp_passes_streams_and_exit_status_through() {
    let dir = scratch("interp_ok");
    let file = write(
        &dir,
        "echo.sy",
        "int main() { int n = getint(); putint(n * 2); putch(10); return n + 256; }",
    );
    let out = harness(&["interp", &file], b"21");
    assert_eq!(text(&out.stdout), "42\n");
    assert_eq!(out.status.code(), Some(21), "status is main's value & 0xff");
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

#[test]
fn interp_reports_traps_with_status_125() {
    let dir = scratch("interp_trap");
    let file = write(
        &dir,
        "div.sy",
        "int main() {\n  putint(5);\n  int z = 0;\n  return 1 / z;\n}\n",
    );
    let out = harness(&["interp", &file], b"");
    assert_eq!(out.status.code(), Some(125));
    assert_eq!(text(&out.stdout), "5", "output before the trap is kept");
    let err = text(&out.stderr);
    assert!(
        err.starts_with(&format!("trap: div-by-zero at {file}:4:10")),
        "{err}"
    );

    let looping = write(&dir, "loop.sy", "int main() { while (1) {} return 0; }");
    let out = harness(&["interp", &looping, "--max-steps", "1000"], b"");
    assert_eq!(out.status.code(), Some(125));
    assert!(
        text(&out.stderr).starts_with("trap: step-limit"),
        "{}",
        text(&out.stderr)
    );

    let deep = write(
        &dir,
        "deep.sy",
        "int f(int n) { return f(n + 1); } int main() { return f(0); }",
    );
    let out = harness(&["interp", &deep, "--max-depth", "50"], b"");
    assert_eq!(out.status.code(), Some(125));
    assert!(
        text(&out.stderr).contains("call-depth"),
        "{}",
        text(&out.stderr)
    );

    let reading = write(&dir, "read.sy", "int main() { return getint(); }");
    let out = harness(&["interp", &reading], b"");
    assert_eq!(out.status.code(), Some(125));
    assert!(
        text(&out.stderr).contains("input-exhausted"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn interp_front_end_errors_exit_1() {
    let dir = scratch("interp_error");
    let file = write(&dir, "bad.sy", "int main() { return y; }");
    let out = harness(&["interp", &file], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("error: undefined variable `y`"), "{err}");
    assert!(out.stdout.is_empty());

    let missing = dir.join("absent.sy");
    let out = harness(&["interp", &missing.to_string_lossy()], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("cannot read"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn interp_timeout_exits_124() {
    let dir = scratch("interp_timeout");
    let file = write(&dir, "spin.sy", "int main() { while (1) {} return 0; }");
    let out = harness(&["interp", &file, "--timeout", "0.2"], b"");
    assert_eq!(out.status.code(), Some(124));
}

/// A directory with two passing cases, a wrong expectation, a trap and a front-end error.
fn mixed_suite() -> PathBuf {
    let dir = scratch("conform_mixed");
    write(
        &dir,
        "a_pass.sy",
        "int main() { putint(getint() + 1); return 3; }",
    );
    write(&dir, "a_pass.in", "41\n");
    write(&dir, "a_pass.out", "42\n3\n");
    write(&dir, "b_pass.sy", "int main() { return 0; }");
    write(&dir, "b_pass.out", "0\n");
    write(
        &dir,
        "c_wrong.sy",
        "int main() { putint(1); putch(10); putint(2); return 0; }",
    );
    write(&dir, "c_wrong.out", "1\n3\n0\n");
    write(&dir, "d_trap.sy", "int main() { int a[2]; return a[1]; }");
    write(&dir, "d_trap.out", "0\n");
    write(&dir, "e_error.sy", "int main() { return; }");
    write(&dir, "e_error.out", "0\n");
    dir
}

#[test]
fn conform_reports_every_case_and_fails_on_any_failure() {
    let dir = mixed_suite();
    let out = harness(
        &[
            "conform",
            &dir.to_string_lossy(),
            "--engine",
            "ref",
            "--jobs",
            "2",
        ],
        b"",
    );
    let report = text(&out.stdout);
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines.len(), 7, "{report}");
    assert!(lines[0].starts_with("CASE"));
    let row = |name: &str| {
        *lines
            .iter()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{report}"))
    };
    assert!(row("a_pass").contains(" PASS "), "{report}");
    assert!(row("b_pass").contains(" PASS "), "{report}");
    assert!(row("c_wrong").contains(" FAIL "), "{report}");
    assert!(
        row("c_wrong").contains("line 2: expected `3`, got `2`"),
        "{report}"
    );
    assert!(row("d_trap").contains(" FAIL "), "{report}");
    assert!(
        row("d_trap").contains("trap: uninit-read at 1:31"),
        "{report}"
    );
    assert!(row("e_error").contains(" ERROR "), "{report}");
    assert!(row("e_error").contains("compile error"), "{report}");
    // Rows in sorted order, then the summary.
    let names: Vec<&str> = lines[1..6]
        .iter()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(names, ["a_pass", "b_pass", "c_wrong", "d_trap", "e_error"]);
    assert_eq!(lines[6], "2 passed, 3 failed");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn conform_passes_with_filter_and_rejects_unknown_engines() {
    let dir = mixed_suite();
    let out = harness(
        &[
            "conform",
            &dir.to_string_lossy(),
            "--filter",
            "pass",
            "-O2",
        ],
        b"",
    );
    let report = text(&out.stdout);
    assert_eq!(
        report.lines().last(),
        Some("2 passed, 0 failed"),
        "{report}"
    );
    assert_eq!(out.status.code(), Some(0));

    let out = harness(
        &["conform", &dir.to_string_lossy(), "--engine", "nonesuch"],
        b"",
    );
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("unknown engine"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn conform_reads_zero_past_the_input_unless_told_to_trap() {
    let dir = scratch("conform_input");
    write(
        &dir,
        "short.sy",
        "int main() { int a = getint(); int b = getint(); return a + b + 1; }",
    );
    write(&dir, "short.in", "4");
    write(&dir, "short.out", "5\n");
    let out = harness(&["conform", &dir.to_string_lossy()], b"");
    assert_eq!(
        text(&out.stdout).lines().last(),
        Some("1 passed, 0 failed"),
        "{}",
        text(&out.stdout)
    );
    let out = harness(
        &["conform", &dir.to_string_lossy(), "--input-failure", "trap"],
        b"",
    );
    let report = text(&out.stdout);
    assert!(report.contains("trap: input-exhausted"), "{report}");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn conform_timeout_is_reported() {
    let dir = scratch("conform_timeout");
    write(&dir, "spin.sy", "int main() { while (1) {} return 0; }");
    write(&dir, "spin.out", "0\n");
    let out = harness(
        &["conform", &dir.to_string_lossy(), "--timeout", "0.2"],
        b"",
    );
    let report = text(&out.stdout);
    assert!(
        report
            .lines()
            .nth(1)
            .is_some_and(|l| l.contains(" TIMEOUT ")),
        "{report}"
    );
    assert_eq!(report.lines().last(), Some("0 passed, 1 failed"));
    assert_eq!(out.status.code(), Some(1));
}

/// Runs `harness` with stdout and/or stderr going into a pipe whose reading end is already
/// closed (as after `harness ... | head -c 10`), the other stream captured.
fn harness_into_closed_pipe(args: &[&str], close_stdout: bool, close_stderr: bool) -> Output {
    let closed = || {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        Stdio::from(writer)
    };
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(if close_stdout { closed() } else { Stdio::piped() })
        .stderr(if close_stderr { closed() } else { Stdio::piped() })
        .output()
        .unwrap()
}

#[test]
fn closed_pipes_end_commands_without_a_panic() {
    // stdout: a generated program, a conformance table.
    let out = harness_into_closed_pipe(&["gen", "--seed", "1"], true, false);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot write to stdout") && !err.contains("panicked"), "{err}");
    let suite = scratch("closed_pipes_suite");
    write(&suite, "a.sy", "int main() { return 0; }");
    write(&suite, "a.out", "0\n");
    let out = harness_into_closed_pipe(&["conform", suite.to_str().unwrap(), "--engine", "ref"], true, false);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot write") && !err.contains("panicked"), "{err}");

    // stderr: a trap message, an error message (both streams closed).
    let dir = scratch("closed_pipes");
    let trap = write(&dir, "div.sy", "int main() { int z = 0; putint(4); return 1 / z; }");
    let out = harness_into_closed_pipe(&["interp", &trap], false, true);
    assert_eq!(out.status.code(), Some(125));
    assert_eq!(text(&out.stdout), "4");
    let missing = dir.join("absent.sy");
    let out = harness_into_closed_pipe(&["interp", missing.to_str().unwrap()], true, true);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn bisect_and_reduce_exit_2_when_the_failure_does_not_reproduce() {
    let dir = scratch("not_reproduced");
    let file = write(&dir, "ok.sy", "int main() { int a = getint(); putint(a * 3); return a; }");
    let input = write(&dir, "ok.in", "5\n");
    for command in ["bisect", "reduce"] {
        let out = harness(&[command, &file, "--stdin", &input, "-O2", "--no-qemu"], b"");
        assert_eq!(out.status.code(), Some(2), "{command}: {}", text(&out.stderr));
        let out = harness(&[command, "--help"], b"");
        let help = text(&out.stdout);
        assert!(help.contains("Exit status") && help.contains("2 it does not reproduce"), "{command}: {help}");
    }
    let failure = scratch("not_reproduced_dir");
    write(&failure, "prog.sy", "int main() { return 3; }");
    let out = harness(&["triage", failure.to_str().unwrap(), "-O2", "--no-qemu", "--no-regression"], b"");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    // Errors are 1.
    let out = harness(&["bisect", &dir.join("absent.sy").to_string_lossy(), "--no-qemu"], b"");
    assert_eq!(out.status.code(), Some(1));
}
