//! The C emitter: its translation, compiled by the ARM cross gcc at -O0 and -O2 and run
//! under qemu-arm, reproduces the expected result of every `corpus/lang` program (and of the
//! functional suite when it is present), and agrees with the reference
//! interpreter on programs whose result depends on SysY's left-to-right evaluation order.
//!
//! The cross checks are skipped, with a note, when `arm-linux-gnueabihf-gcc` or `qemu-arm` is
//! not installed; the order check also uses the host's `cc` when there is one.

use sysy_check::cgen;
use sysy_check::qemu::{Qemu, RunOptions, RunStatus, Stdin};
use sysy_check::refinterp::{self, RefConfig};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use sysyc::runtime::outcome::format_expected;
use sysyc::runtime::library;
use sysyc::toolchain::{self, Source};

/// qemu if both it and the cross gcc are installed (else a note and `None`).
fn cross_tools() -> Option<Qemu> {
    let found = toolchain::arm_gcc()
        .map_err(|e| e.to_string())
        .and_then(|_| Qemu::locate().map_err(|e| e.to_string()));
    match found {
        Ok(qemu) => Some(qemu),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn work_dir(group: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cgen_gcc")
        .join(group);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles `c_source` with the cross gcc at `opt` (plus the emitter's semantic flags), links
/// the project's runtime and runs it under qemu on `stdin`: the expected-output text.
fn gcc_run(
    qemu: &Qemu,
    dir: &Path,
    name: &str,
    c_source: &str,
    opt: &str,
    stdin: &[u8],
) -> Result<Vec<u8>, String> {
    let exe = dir.join(format!("{name}{opt}"));
    let mut flags = vec![opt];
    flags.extend(cgen::GCC_SEMANTIC_FLAGS);
    library::compile_c(Source::Text(c_source), &exe, &flags).map_err(|e| e.to_string())?;
    let opts = RunOptions {
        stdin: Stdin::Bytes(stdin.to_vec()),
        timeout: Duration::from_secs(60),
        ..RunOptions::default()
    };
    let run = qemu.run(&exe, &opts).map_err(|e| e.to_string())?;
    match run.status {
        RunStatus::Exited(status) => Ok(format_expected(&run.stdout, status)),
        other => Err(format!("{name}{opt}: {other}")),
    }
}

/// Every case of `dir` at -O0 and -O2; one message per mismatch.
fn check_dir(qemu: &Qemu, dir: &Path, group: &str) -> (usize, Vec<String>) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sy"))
        .collect();
    files.sort();
    let work = work_dir(group);
    let failures: Vec<String> = files
        .par_iter()
        .flat_map_iter(|path| {
            let name = path.file_stem().unwrap().to_string_lossy().to_string();
            let source = sysyc::frontend::source_from_bytes(&std::fs::read(path).unwrap());
            let stdin = std::fs::read(path.with_extension("in")).unwrap_or_default();
            let expected = std::fs::read(path.with_extension("out")).unwrap();
            let c = match sysyc::frontend::compile_source(&name, &source) {
                Ok(p) => cgen::emit(&p),
                Err(e) => return vec![format!("{name}: {e}")],
            };
            ["-O0", "-O2"]
                .into_iter()
                .filter_map(|opt| match gcc_run(qemu, &work, &name, &c, opt, &stdin) {
                    Ok(got) if got == expected => None,
                    Ok(got) => Some(format!(
                        "{name} {opt}: {}",
                        sysy_check::failure::first_difference(&expected, &got)
                    )),
                    Err(e) => Some(format!("{name} {opt}: {e}")),
                })
                .collect()
        })
        .collect();
    (files.len(), failures)
}

#[test]
fn lang_corpus_through_gcc() {
    let Some(qemu) = cross_tools() else { return };
    let (count, failures) = check_dir(&qemu, &root().join("corpus/lang"), "lang");
    assert!(count >= 20);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn functional_suite_through_gcc_when_present() {
    let Some(root) = sysyc::suites::sysy_tests_dir() else {
        eprintln!("skipped: the competition suites are not present (set $SYSY_TESTS)");
        return;
    };
    let dir = &root.join("functional");
    let Some(qemu) = cross_tools() else { return };
    let (count, failures) = check_dir(&qemu, dir, "functional");
    assert_eq!(count, 100);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Programs whose results depend on operand, argument and assignment order.
const ORDER_PROGRAMS: [(&str, &str, &str); 5] = [
    (
        "binary_operands",
        "int g = 1;
         int bump() { g = g * 2 + 1; return g; }
         int main() { int x = g - bump(); int y = bump() - g; putint(x); putch(32); putint(y);
                      putch(32); putint(g * 10 + bump() * 100 + g); return 0; }",
        "",
    ),
    (
        "arguments",
        "int three(int a, int b, int c) { return a * 100 + b * 10 + c; }
         float mix(float a, int b, float c) { return a - b * c; }
         int main() { putint(three(getint(), getint(), getint())); putch(10);
                      putfloat(mix(getfloat(), getint(), getfloat())); putch(10);
                      putint(three(getch(), getch(), getch())); return 0; }",
        "1 2 3 0x1.8p1 4 0.25 abc",
    ),
    (
        "assignment_target_first",
        "int a[5]; int i = 0;
         int next() { i = i + 1; return i; }
         int main() { a[i] = next(); a[next()] = next(); a[getint()] = getint(); putarray(5, a); return i; }",
        "4 9",
    ),
    (
        "views_and_indices",
        "int m[3][3]; int k = 0;
         int step() { k = k + 1; return k; }
         int put(int r[], int v) { r[0] = v; return v; }
         int main() { put(m[k], step()); put(m[step()], m[k][0] + step()); putarray(9, m[0]);
                      return k; }",
        "",
    ),
    (
        "nested_calls_in_conditions",
        "int n = 0;
         int t(int v) { n = n * 10 + v; return v; }
         int main() { int i = 0;
                      while (t(1) + t(2) * t(3) < 100 && i < 3) { i = i + 1; }
                      if (t(4) - t(5) || t(6)) putint(n);
                      return i; }",
        "",
    ),
];

/// Compiles `c_source` with the host's C compiler (with the project's runtime, built for the
/// host) and runs it natively.
fn host_run(
    dir: &Path,
    name: &str,
    c_source: &str,
    opt: &str,
    stdin: &[u8],
) -> Result<Vec<u8>, String> {
    let c_path = dir.join(format!("{name}.host.c"));
    let exe = dir.join(format!("{name}{opt}.host"));
    std::fs::write(&c_path, c_source).map_err(|e| e.to_string())?;
    let compiled = Command::new("cc")
        .args(cgen::GCC_SEMANTIC_FLAGS)
        .args([opt, "-w", "-o"])
        .arg(&exe)
        .arg(&c_path)
        .arg(root().join("compiler/src/runtime/sysy_rt.c"))
        .arg("-I")
        .arg(root().join("compiler/src/runtime"))
        .output()
        .map_err(|e| e.to_string())?;
    if !compiled.status.success() {
        return Err(format!(
            "cc {opt} failed:\n{}",
            String::from_utf8_lossy(&compiled.stderr)
        ));
    }
    let input_path = dir.join(format!("{name}.stdin"));
    std::fs::write(&input_path, stdin).map_err(|e| e.to_string())?;
    let run = Command::new(&exe)
        .stdin(std::fs::File::open(&input_path).map_err(|e| e.to_string())?)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    let status = run
        .status
        .code()
        .ok_or_else(|| format!("{name}{opt} died: {}", run.status))?;
    Ok(format_expected(&run.stdout, status as u8))
}

/// The order programs agree with the reference interpreter when compiled by the cross gcc
/// (run under qemu) and by the host's gcc (run natively). The host compiler matters: x86-64
/// gcc evaluates call arguments right to left, so there the temporaries are what makes the
/// results right (ARM gcc happens to go left to right in these programs anyway).
#[test]
fn evaluation_order_matches_the_reference_interpreter() {
    let host = Command::new("cc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let cross = cross_tools();
    if !host {
        eprintln!("note: no host C compiler (`cc`); checking with the cross gcc only");
    }
    let work = work_dir("order");
    let failures: Vec<String> = ORDER_PROGRAMS
        .par_iter()
        .flat_map_iter(|(name, src, stdin)| {
            let program = sysyc::frontend::compile_source(name, src).unwrap();
            let reference =
                refinterp::run_source(name, src, stdin.as_bytes(), &RefConfig::default()).unwrap();
            let expected = reference
                .expected_output()
                .expect("order programs do not trap");
            let c = cgen::emit(&program);
            let mut runs = Vec::new();
            for opt in ["-O0", "-O2"] {
                if let Some(qemu) = &cross {
                    runs.push((
                        format!("arm {opt}"),
                        gcc_run(qemu, &work, name, &c, opt, stdin.as_bytes()),
                    ));
                }
                if host {
                    runs.push((
                        format!("host {opt}"),
                        host_run(&work, name, &c, opt, stdin.as_bytes()),
                    ));
                }
            }
            runs.into_iter()
                .filter_map(|(how, r)| match r {
                    Ok(got) if got == expected => None,
                    Ok(got) => Some(format!(
                        "{name} {how}: {}",
                        sysy_check::failure::first_difference(&expected, &got)
                    )),
                    Err(e) => Some(format!("{name} {how}: {e}")),
                })
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The `gcc` engine plugs into the conformance runner: a passing and a failing case.
#[test]
fn gcc_engine_in_the_conformance_runner() {
    if cross_tools().is_none() {
        return;
    }
    let dir = work_dir("engine");
    std::fs::write(
        dir.join("ok.sy"),
        "int main() { putfloat(0.1 + 0.2); return getint() * 3; }",
    )
    .unwrap();
    std::fs::write(dir.join("ok.in"), "7").unwrap();
    std::fs::write(dir.join("ok.out"), "0x1.333334p-2\n21\n").unwrap();
    std::fs::write(dir.join("wrong.sy"), "int main() { return 1; }").unwrap();
    std::fs::write(dir.join("wrong.out"), "2\n").unwrap();
    let config = sysyc::config::Config::level(sysyc::passes::OptLevel::O1);
    let settings = sysy_check::engine::RunSettings::new(sysy_check::subject::Limits::SUITE);
    let engine = sysy_check::engine::engine_by_name("gcc", &config, &settings).expect("tools are present");
    assert_eq!(engine.name(), "gcc -O1");
    let cases = harness::conform::discover(&dir, None).unwrap();
    let mut report = Vec::new();
    let summary = harness::conform::run_all(engine.as_ref(), &cases, 2, &mut report).unwrap();
    let report = String::from_utf8(report).unwrap();
    assert_eq!((summary.passed, summary.failed), (1, 1), "{report}");
    assert!(report.contains("line 1: expected `2`, got `1`"), "{report}");
}
