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
    let out = sysyc(&[path, "--passes=mem2reg,constfold", "--print-after-all", "--stats", "--emit-ir", "-o", "/dev/null"], "");
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

/// Runs `sysyc` in `dir` (so a default `a.out` lands there).
fn sysyc_in(dir: &std::path::Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_sysyc"))
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("sysyc runs")
}

#[test]
fn no_output_flag_links_a_out_like_a_c_driver() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("p.sy"), PROGRAM).expect("write source");
    let out = sysyc_in(dir.path(), &["p.sy", "-O2"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let exe = std::fs::read(dir.path().join("a.out")).expect("a.out written");
    assert!(exe.starts_with(b"\x7fELF"), "a.out is an ELF executable");
    let help = text(&sysyc(&["--help"], "").stdout);
    assert!(help.contains("a.out") && help.contains("Exit status"), "{help}");
}

#[test]
fn dash_output_means_stdout_for_text_outputs() {
    let file = source_file(PROGRAM);
    let path = file.to_str().expect("path");
    let dir = tempfile::tempdir().expect("temp dir");
    for mode in ["-S", "--emit-ir"] {
        let out = sysyc_in(dir.path(), &[path, mode, "-o", "-"]);
        assert!(out.status.success(), "{mode}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("main"), "{mode}");
        assert!(!dir.path().join("-").exists(), "{mode} wrote a file named -");
    }
    let out = sysyc_in(dir.path(), &[path, "-o", "-"]);
    assert_eq!(out.status.code(), Some(1), "an executable cannot go to stdout");
}

#[test]
fn contradictory_modes_are_usage_errors() {
    let file = source_file(PROGRAM);
    let path = file.to_str().expect("path");
    for args in [
        &[path, "--emit-ir", "-S"][..],
        &[path, "--interpret", "-S"],
        &[path, "--interpret", "--emit-ir"],
        &[path, "--interpret", "-o", "x"],
    ] {
        let out = sysyc(args, "");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn a_bad_executable_path_is_a_user_error_naming_it() {
    let file = source_file(PROGRAM);
    let path = file.to_str().expect("path");
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("no/such/dir/prog");
    let read_only = dir.path().join("read-only");
    std::fs::create_dir(&read_only).expect("mkdir");
    std::fs::set_permissions(&read_only, std::os::unix::fs::PermissionsExt::from_mode(0o555)).expect("chmod");
    let in_read_only = read_only.join("prog");
    // (root may write anywhere: then only the first two apply.)
    let root = tempfile::tempfile_in(&read_only).is_ok();
    let targets = [dir.path().to_str().expect("path"), missing.to_str().expect("path"), in_read_only.to_str().expect("path")];
    for target in &targets[..if root { 2 } else { 3 }] {
        let target = *target;
        let out = sysyc(&[path, "-o", target], "");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{target}: {err}");
        assert!(err.contains(target) && !err.contains("internal"), "{err}");
    }
}

#[test]
fn interpret_stops_at_the_step_limit_with_status_125() {
    let file = source_file("int main() { while (1) {} return 0; }");
    let out = sysyc(&[file.to_str().expect("path"), "--interpret", "--max-steps", "1000"], "");
    assert_eq!(out.status.code(), Some(125));
    assert!(text(&out.stderr).starts_with("trap: step-limit"), "{}", text(&out.stderr));
}

#[test]
fn interpret_timeout_exits_124() {
    let file = source_file("int main() { while (1) {} return 0; }");
    let out = sysyc(&[file.to_str().expect("path"), "--interpret", "--timeout", "0.3"], "");
    assert_eq!(out.status.code(), Some(124), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("time limit"), "{}", text(&out.stderr));
}

const COUNTER: &str = "int main() { int i = 0; while (1) { putint(i); putch(10); i = i + 1; } return 0; }";

#[test]
fn interpret_output_stopped_by_the_step_limit_is_the_whole_prefix() {
    let file = source_file(COUNTER);
    let out = sysyc(&[file.to_str().expect("path"), "-O2", "--interpret", "--max-steps", "3000000"], "");
    assert_eq!(out.status.code(), Some(125));
    let stdout = text(&out.stdout);
    let complete = &stdout[..stdout.rfind('\n').expect("some lines") + 1];
    let lines: Vec<&str> = complete.lines().collect();
    assert!(lines.len() > 10_000, "{} lines", lines.len());
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(*line, i.to_string());
    }
}

#[test]
fn interpret_streams_output_while_the_program_runs() {
    use std::io::Read;
    let file = source_file(COUNTER);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sysyc"))
        .args([file.to_str().expect("path"), "--interpret", "--timeout", "120"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("sysyc runs");
    // The program never ends by itself: these bytes can only come from a run still going.
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = vec![0u8; 100_000];
    stdout.read_exact(&mut first).expect("output while running");
    let still_running = child.try_wait().expect("status").is_none();
    let _ = child.kill();
    let _ = child.wait();
    drop(stdout);
    assert!(still_running);
    assert!(first.starts_with(b"0\n1\n2\n3\n"), "{}", text(&first[..20]));
}

#[test]
fn a_frame_bigger_than_the_stack_is_named_as_such() {
    let file = source_file("int main() { int a[100000000]; a[0] = 1; return a[0]; }");
    let out = sysyc(&[file.to_str().expect("path"), "--interpret"], "");
    assert_eq!(out.status.code(), Some(125));
    let err = text(&out.stderr);
    assert!(err.contains("stack frame of @main too large (400000000 bytes"), "{err}");
}

#[test]
fn interpret_traps_name_the_source_location_and_the_values() {
    let file = source_file("int main() {\n  int a[10];\n  int i = getint();\n  a[i] = 1;\n  return 7 / (i - 10);\n}\n");
    let path = file.to_str().expect("path");
    let out = sysyc(&[path, "--interpret"], "10");
    assert_eq!(out.status.code(), Some(125));
    let err = text(&out.stderr);
    assert!(err.starts_with(&format!("trap: out-of-bounds at {path}:4:3: ")), "{err}");
    assert!(err.contains("word 10 (+1) of a 10-word object"), "{err}");
    let div = source_file("int main() {\n  int z = getint();\n  return 7 / z;\n}\n");
    let out = sysyc(&[div.to_str().expect("path"), "--interpret", "-O2"], "0");
    let err = text(&out.stderr);
    assert!(err.starts_with(&format!("trap: div-by-zero at {}:3:10: ", div.to_str().expect("path"))), "{err}");
    assert!(err.contains("7 / 0"), "{err}");
}

/// The trap corpus's expected kinds and locations (`// expect-trap: KIND at LINE:COL`), for
/// the kinds the IR interpreter detects as the reference interpreter does (its bounds are
/// per allocation, not per dimension, and float conversions saturate).
#[test]
fn interpret_trap_locations_agree_with_the_trap_corpus() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/traps");
    let same_semantics = ["div-by-zero", "div-overflow", "call-depth", "input-exhausted", "missing-return"];
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("corpus/traps") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "sy") {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("source");
        let expect = source.lines().find_map(|l| l.strip_prefix("// expect-trap: ")).expect("expectation");
        let (kind, at) = expect.split_once(" at ").expect("KIND at LINE:COL");
        if !same_semantics.contains(&kind) {
            continue;
        }
        let stdin = std::fs::read_to_string(path.with_extension("in")).unwrap_or_default();
        let name = path.to_str().expect("path");
        let out = sysyc(&[name, "--interpret"], &stdin);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(125), "{name}: {err}");
        assert!(err.starts_with(&format!("trap: {kind} at {name}:{at}")), "{name}: expected {expect}, got {err}");
        checked += 1;
    }
    assert!(checked >= 5, "{checked} corpus cases checked");
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
