//! The `sysyc` command line: options, outputs on stdout/stderr, exit statuses.

mod common;

use std::io::Write;
use std::process::Output;

use sysyc::passes::REGISTRY;

fn sysyc(args: &[&str], stdin: &str) -> Output {
    common::run_sysyc(args, stdin)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Writes `src` to a fresh temporary `.sy` file.
fn source_file(src: &str) -> tempfile::TempPath {
    let mut f = tempfile::Builder::new().suffix(".sy").tempfile().expect("temp file");
    f.write_all(src.as_bytes()).expect("write source");
    f.into_temp_path()
}

const PROGRAM: &str = "int main() { int n = getint(); int s = 0; while (n > 0) { s = s + n; n = n - 1; } \
                       putint(s); putch(10); return s % 7; }";

#[test]
fn list_passes_names_every_registered_pass_with_a_description() {
    let out = sysyc(&["--list-passes"], "");
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), REGISTRY.len());
    assert!(REGISTRY.iter().any(|p| p.is_backend()), "the back-end stages are registry entries");
    for (line, pass) in lines.iter().zip(REGISTRY) {
        let (name, description) = line.split_once(' ').expect("name and description");
        assert_eq!(name, pass.name);
        let kind = if pass.is_backend() { "(back end) " } else { "" };
        assert_eq!(description.trim(), format!("{kind}{}", pass.description));
    }
}

#[test]
fn interpret_at_every_level_gives_the_program_result() {
    let file = source_file(PROGRAM);
    let path = file.to_str().expect("utf-8 path");
    for level in ["-O0", "-O1", "-O2"] {
        let out = sysyc(&[path, level, "--interpret", "--verify-each"], "10");
        assert_eq!(text(&out.stdout), "55\n", "{level}");
        assert_eq!(out.status.code(), Some(55 % 7), "{level}");
    }
}

#[test]
fn a_trap_is_reported_with_exit_status_125() {
    let file = source_file("int main() { int z = getint(); return 5 / z; }");
    let out = sysyc(&[file.to_str().expect("path"), "--interpret"], "0");
    assert_eq!(out.status.code(), Some(125));
    assert!(text(&out.stderr).contains("trap: div-by-zero"), "{}", text(&out.stderr));
}

#[test]
fn emit_ir_prints_parsable_ir_to_stdout_or_a_file() {
    let file = source_file(PROGRAM);
    let path = file.to_str().expect("path");
    let out = sysyc(&[path, "-O2", "--emit-ir"], "");
    assert!(out.status.success());
    let ir = text(&out.stdout);
    let module = sysyc::ir::parse_module(&ir).expect("emitted IR parses");
    sysyc::ir::verify_module(&module).expect("emitted IR verifies");
    assert!(ir.contains("phi i32") && !ir.contains("alloca"), "{ir}");

    let dir = tempfile::tempdir().expect("temp dir");
    let target = dir.path().join("out.ir");
    let out = sysyc(&[path, "-O0", "--emit-ir", "-o", target.to_str().expect("path")], "");
    assert!(out.status.success() && out.stdout.is_empty());
    let written = std::fs::read_to_string(&target).expect("output file");
    assert!(written.contains("alloca i32 x 1"), "{written}");
}

#[test]
fn explicit_pipelines_and_unknown_pass_names() {
    let file = source_file(PROGRAM);
    let path = file.to_str().expect("path");
    let out = sysyc(&[path, "--passes=mem2reg,dce", "--interpret"], "4");
    assert_eq!(text(&out.stdout), "10\n");

    let out = sysyc(&[path, "--passes=mem2reg,bogus"], "");
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("unknown pass `bogus`"), "{stderr}");
    for pass in REGISTRY.iter().filter(|p| !p.is_backend()) {
        assert!(stderr.contains(pass.name), "the error lists `{}`: {stderr}", pass.name);
    }
    let out = sysyc(&[path, "--passes=mem2reg,arm-peephole"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("back-end stage"), "{}", text(&out.stderr));
}

#[test]
fn print_after_all_and_stats_go_to_stderr() {
    let file = source_file(PROGRAM);
    let path = file.to_str().expect("path");
    let out = sysyc(&[path, "--passes=mem2reg,constfold", "--print-after-all", "--stats"], "");
    assert!(out.status.success() && out.stdout.is_empty());
    let stderr = text(&out.stderr);
    let first = stderr.find("; *** IR after pass mem2reg (1) ***").expect("header of pass 1");
    let second = stderr.find("; *** IR after pass constfold (2) ***").expect("header of pass 2");
    assert!(first < second);
    assert!(stderr[first..second].contains("func @main() -> i32 {"));
    assert!(stderr.contains("allocas_promoted=2"), "{stderr}");
}

#[test]
fn opt_bisect_limit_logs_every_step_and_skips_beyond_the_limit() {
    let file = source_file("int f() { return 1; } int main() { int x = f(); return x; }");
    let path = file.to_str().expect("path");
    let out = sysyc(&[path, "--passes=mem2reg,dce", "--opt-bisect-limit=3", "--emit-ir"], "");
    assert!(out.status.success());
    let log: Vec<String> = text(&out.stderr).lines().map(str::to_string).collect();
    assert_eq!(
        log,
        [
            "BISECT: running pass (1) mem2reg on function f",
            "BISECT: running pass (2) mem2reg on function main",
            "BISECT: running pass (3) dce on function f",
            "BISECT: NOT running pass (4) dce on function main",
        ]
    );
    // mem2reg ran on main (no alloca left).
    assert!(!text(&out.stdout).contains("alloca"));
}

#[test]
fn cost_prints_instruction_counts() {
    let file = source_file(PROGRAM);
    let out = sysyc(&[file.to_str().expect("path"), "-O2", "--interpret", "--cost"], "3");
    assert_eq!(text(&out.stdout), "6\n");
    let stderr = text(&out.stderr);
    assert!(stderr.contains("phi") && stderr.contains("branch"), "{stderr}");
}

#[test]
fn invalid_programs_and_bad_options_exit_1() {
    let file = source_file("int main() { return x; }");
    let out = sysyc(&[file.to_str().expect("path"), "--interpret"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("error"), "{}", text(&out.stderr));

    let out = sysyc(&["/nonexistent/file.sy"], "");
    assert_eq!(out.status.code(), Some(1));

    let out = sysyc(&[], "");
    assert_eq!(out.status.code(), Some(1));

    let good = source_file(PROGRAM);
    let out = sysyc(&[good.to_str().expect("path"), "--fault=anything"], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--fault"), "{}", text(&out.stderr));
}

/// `-o` builds a small static executable in-process by default; `--assembler=gnu` builds the
/// glibc one with GNU tools; an unknown assembler is a command-line error.
#[test]
fn executables_are_built_in_process_or_with_gnu_tools() {
    if sysyc::toolchain::arm_gcc().is_err() {
        eprintln!("note: skipping: no ARM cross gcc");
        return;
    }
    let file = source_file(PROGRAM);
    let path = file.to_str().expect("utf-8 path");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut sizes = Vec::new();
    for (assembler, name) in [(None, "default"), (Some("--assembler=gnu"), "gnu"), (Some("--assembler=in-process"), "in-process")] {
        let exe = dir.path().join(name);
        let mut args = vec![path, "-O2", "-o", exe.to_str().expect("utf-8 path")];
        args.extend(assembler);
        let out = sysyc(&args, "");
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        let bytes = std::fs::read(&exe).expect("the executable");
        assert_eq!(&bytes[..4], b"\x7fELF", "{name}");
        sizes.push(bytes.len());
    }
    assert_eq!(sizes[0], sizes[2], "the default is in-process");
    assert!(sizes[0] * 5 < sizes[1], "in-process {} bytes, glibc {} bytes", sizes[0], sizes[1]);
    let out = sysyc(&[path, "--assembler=llvm", "-o", "x"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown assembler `llvm`"), "{}", text(&out.stderr));
}
