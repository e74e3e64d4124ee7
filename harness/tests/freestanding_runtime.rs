//! Programs linked with the freestanding runtime (`sysy_rt_free.o`: no libc, its own
//! `_start`) and nothing else: compiled SysY from `corpus/lang` and the functional suite
//! (when present) must produce their expected results, and hand-written `main`s check the
//! entry and exit path (status truncated to a byte, the timer report after main, stdout
//! flushed at exit). The byte-level agreement of each runtime function with glibc is
//! `runtime_vs_io.rs`'s business.
//!
//! Linking is `gcc -nostdlib -static prog.s sysy_rt_free.o`, i.e. GNU as and ld with no other
//! object or library. Skipped, with a note, without the cross gcc or qemu-arm.

mod common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{asm_main, scratch, tools};
use sysy_check::qemu::{Qemu, RunOptions, RunStatus, Stdin};
use rayon::prelude::*;
use sysyc::config::Config;
use sysyc::passes::OptLevel;
use sysyc::runtime::library;
use sysyc::runtime::outcome::format_expected;
use sysyc::toolchain::{self, TARGET_FLAGS};

/// Assembles `asm` and links it with the freestanding runtime object alone into `out`.
fn link_freestanding(asm: &str, out: &Path) {
    let gcc = toolchain::arm_gcc().expect("cross gcc");
    let runtime = library::freestanding_runtime().expect("freestanding runtime");
    let mut args: Vec<OsString> = TARGET_FLAGS.iter().map(OsString::from).collect();
    args.extend(["-nostdlib", "-static", "-x", "assembler", "-", "-x", "none"].map(OsString::from));
    args.extend([runtime.object.into_os_string(), "-o".into(), out.as_os_str().to_owned()]);
    if let Err(e) = toolchain::run_tool(&gcc, &args, Some(asm.as_bytes())) {
        panic!("linking {} failed: {e}", out.display());
    }
}

fn run(qemu: &Qemu, exe: &Path, stdin: &[u8]) -> sysy_check::qemu::QemuRun {
    let opts = RunOptions {
        stdin: Stdin::Bytes(stdin.to_vec()),
        timeout: Duration::from_secs(60),
        ..RunOptions::default()
    };
    qemu.run(exe, &opts).expect("run under qemu")
}

#[test]
fn exit_status_is_mains_value_truncated_to_a_byte() {
    let Some(qemu) = tools("exit_status_is_mains_value_truncated_to_a_byte") else { return };
    let dir = scratch();
    for (value, status) in [(0, 0), (3, 3), (-8, 248), (1225, 201), (256, 0)] {
        let exe = dir.path().join(format!("status{status}"));
        let body = format!("\tmovw r0, #{}\n\tmovt r0, #{}\n\tbx lr", value as u32 & 0xffff, value as u32 >> 16);
        link_freestanding(&asm_main(&body), &exe);
        let run = run(&qemu, &exe, b"");
        assert_eq!(run.status, RunStatus::Exited(status), "main returned {value}");
        assert_eq!(run.stdout, b"");
        assert_eq!(run.stderr, b"TOTAL: 0H-0M-0S-0us\n");
    }
}

/// main misaligns nothing itself, but _start must hand it an 8-byte aligned stack: a callee
/// that checks `sp & 7` at entry (AAPCS requires 8-byte alignment at public interfaces).
#[test]
fn main_gets_an_aligned_stack_and_output_is_flushed_at_exit() {
    let Some(qemu) = tools("main_gets_an_aligned_stack_and_output_is_flushed_at_exit") else { return };
    let dir = scratch();
    let exe = dir.path().join("aligned");
    // putint(sp & 7 at main's entry); putch('\n'); starttime(); stoptime(); return 5.
    let body = "\tand r0, sp, #7\n\tpush {r4, lr}\n\tbl putint\n\tmov r0, #10\n\tbl putch\n\
                \tmov r0, #7\n\tbl _sysy_starttime\n\tmov r0, #8\n\tbl _sysy_stoptime\n\
                \tmov r0, #5\n\tpop {r4, pc}";
    link_freestanding(&asm_main(body), &exe);
    let run = run(&qemu, &exe, b"");
    assert_eq!((run.stdout.as_slice(), run.status), (&b"0\n"[..], RunStatus::Exited(5)));
    let stderr = String::from_utf8_lossy(&run.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].starts_with("Timer@0007-0008: 0H-0M-0S-"), "{stderr}");
    assert!(lines[1].starts_with("TOTAL: 0H-0M-0S-"), "{stderr}");
}

/// Compiles every case of `dir` at -O2, links it with the freestanding runtime and runs it;
/// returns the number of cases and one message per mismatch.
fn check_dir(qemu: &Qemu, dir: &Path, work: &Path) -> (usize, Vec<String>) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sy"))
        .collect();
    files.sort();
    let config = Config::level(OptLevel::O2);
    let failures = files
        .par_iter()
        .filter_map(|path| {
            let name = path.file_stem().expect("file name").to_string_lossy().into_owned();
            let source = sysyc::frontend::source_from_bytes(&std::fs::read(path).expect("source"));
            let stdin = std::fs::read(path.with_extension("in")).unwrap_or_default();
            let expected = std::fs::read(path.with_extension("out")).expect("expected output");
            let asm = match sysyc::driver::compile_asm(&name, &source, &config) {
                Ok((asm, _, _)) => asm,
                Err(e) => return Some(format!("{name}: {e}")),
            };
            let exe = work.join(&name);
            link_freestanding(&asm, &exe);
            let run = run(qemu, &exe, &stdin);
            match run.status {
                RunStatus::Exited(status) if format_expected(&run.stdout, status) == expected => None,
                RunStatus::Exited(status) => Some(format!(
                    "{name}: {}",
                    sysy_check::failure::first_difference(&expected, &format_expected(&run.stdout, status))
                )),
                other => Some(format!("{name}: {other}")),
            }
        })
        .collect();
    (files.len(), failures)
}

#[test]
fn lang_corpus_linked_with_the_freestanding_runtime() {
    let Some(qemu) = tools("lang_corpus_linked_with_the_freestanding_runtime") else { return };
    let work = scratch();
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/lang");
    let (count, failures) = check_dir(&qemu, &corpus, work.path());
    assert!(count >= 20);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn functional_suite_linked_with_the_freestanding_runtime_when_present() {
    let Some(root) = sysyc::suites::sysy_tests_dir() else {
        eprintln!("skipped: the competition suites are not present (set $SYSY_TESTS)");
        return;
    };
    let Some(qemu) = tools("functional_suite_linked_with_the_freestanding_runtime_when_present") else { return };
    let work = scratch();
    let (count, failures) = check_dir(&qemu, &root.join("functional"), work.path());
    assert_eq!(count, 100);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
