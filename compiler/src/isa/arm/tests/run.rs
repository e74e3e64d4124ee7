//! Assembling, linking and running compiled test programs with the cross toolchain and
//! `qemu-arm -cpu cortex-a7` (which also checks that only `armv7ve` instructions are used).
//! The runtime library is replaced by a minimal C shim kept here; tests skip (with a note)
//! when the tools are missing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::ir::Module;
use crate::isa::arm::{BackendOptions, compile_module};

const GCC: &str = "arm-linux-gnueabihf-gcc";
const QEMU: &str = "qemu-arm";
const ARCH_FLAGS: [&str; 4] = ["-march=armv7ve", "-mfpu=vfpv4", "-mfloat-abi=hard", "-marm"];

/// The runtime functions the tests call, with the official library's formats.
const SHIM: &str = r#"
#include <stdio.h>
#include <stdarg.h>
int getint(void) { int x = 0; if (scanf("%d", &x) != 1) return 0; return x; }
int getch(void) { int c = getchar(); return c; }
float getfloat(void) { float x = 0; if (scanf("%a", &x) != 1) return 0; return x; }
int getarray(int a[]) { int n = 0; if (scanf("%d", &n) != 1) return 0; for (int i = 0; i < n; i++) scanf("%d", &a[i]); return n; }
int getfarray(float a[]) { int n = 0; if (scanf("%d", &n) != 1) return 0; for (int i = 0; i < n; i++) scanf("%a", &a[i]); return n; }
void putint(int x) { printf("%d", x); }
void putch(int c) { putchar(c); }
void putfloat(float f) { printf("%a", f); }
void putarray(int n, int a[]) { printf("%d:", n); for (int i = 0; i < n; i++) printf(" %d", a[i]); printf("\n"); }
void putfarray(int n, float a[]) { printf("%d:", n); for (int i = 0; i < n; i++) printf(" %a", a[i]); printf("\n"); }
void putf(char fmt[], ...) { va_list ap; va_start(ap, fmt); vfprintf(stdout, fmt, ap); va_end(ap); }
void _sysy_starttime(int line) { (void)line; }
void _sysy_stoptime(int line) { (void)line; }
"#;

pub struct RunResult {
    pub stdout: String,
    pub status: i32,
    pub asm: String,
}

fn tools_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        let ok = |tool: &str| {
            Command::new(tool)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        ok(GCC) && ok(QEMU)
    })
}

/// One shared directory for all runs: per-test files get unique names and are deleted after
/// the test; the compiled shim is kept (one per shim text) and reused by later runs.
fn work_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join("sysyc-arm-tests");
        std::fs::create_dir_all(&dir).expect("create test work directory");
        dir
    })
}

fn shim_object() -> &'static Path {
    static OBJ: OnceLock<PathBuf> = OnceLock::new();
    OBJ.get_or_init(|| {
        let dir = work_dir();
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(SHIM, &mut hasher);
        let obj = dir.join(format!("shim-{:016x}.o", std::hash::Hasher::finish(&hasher)));
        if obj.exists() {
            return obj;
        }
        // Built under a private name and renamed, so concurrent runs never see half a file.
        let tag = format!("{}", std::process::id());
        let src = dir.join(format!("shim-{tag}.c"));
        let tmp = dir.join(format!("shim-{tag}.o"));
        std::fs::write(&src, SHIM).expect("write shim.c");
        let out = Command::new(GCC)
            .args(ARCH_FLAGS)
            .args(["-O2", "-c"])
            .arg(&src)
            .arg("-o")
            .arg(&tmp)
            .output()
            .expect("run the cross compiler");
        assert!(out.status.success(), "shim.c failed to compile: {}", String::from_utf8_lossy(&out.stderr));
        std::fs::rename(&tmp, &obj).expect("install the shim object");
        let _ = std::fs::remove_file(&src);
        obj
    })
}

/// Compiles `module`, links it with the shim and runs it with `stdin`. `None` when the
/// cross tools are not installed.
pub fn build_and_run(module: &Module, opts: &BackendOptions, stdin: &str) -> Option<RunResult> {
    if !tools_present() {
        eprintln!("note: {GCC} or {QEMU} not found; skipping the execution test");
        return None;
    }
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let asm = compile_module(module, opts).unwrap_or_else(|e| panic!("back end failed: {e}"));
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = work_dir();
    let s_path = dir.join(format!("t{}-{n}.s", std::process::id()));
    let exe = dir.join(format!("t{}-{n}", std::process::id()));
    std::fs::write(&s_path, &asm).expect("write assembly");
    let link = Command::new(GCC)
        .arg("-static")
        .args(ARCH_FLAGS)
        .arg(&s_path)
        .arg(shim_object())
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("run the cross compiler");
    assert!(
        link.status.success(),
        "assembling/linking failed:\n{}\n--- assembly ---\n{asm}",
        String::from_utf8_lossy(&link.stderr)
    );
    let mut child = Command::new(QEMU)
        .args(["-cpu", "cortex-a7"])
        .arg(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start qemu-arm");
    if let Some(mut input) = child.stdin.take() {
        input.write_all(stdin.as_bytes()).expect("write stdin");
    }
    let out = child.wait_with_output().expect("wait for qemu-arm");
    let status = match out.status.code() {
        Some(c) => c,
        None => panic!(
            "program killed by a signal ({:?}); stderr: {}\n--- assembly ---\n{asm}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
    };
    let _ = std::fs::remove_file(&s_path);
    let _ = std::fs::remove_file(&exe);
    Some(RunResult { stdout: String::from_utf8_lossy(&out.stdout).into_owned(), status, asm })
}

/// Option sets every execution test runs under: everything on, everything off, and each
/// optional stage off alone.
pub fn option_sets() -> Vec<(String, BackendOptions)> {
    let mut sets =
        vec![("all".to_string(), BackendOptions::all()), ("none".to_string(), BackendOptions::mandatory_only())];
    for stage in crate::isa::arm::Stage::ALL {
        let name = stage.name();
        let opts = BackendOptions::without(&[name]).expect("known stage");
        sets.push((format!("without {name}"), opts));
    }
    sets
}

/// Runs `module` under every option set and checks stdout and the exit status.
pub fn check(module: &Module, stdin: &str, expected_stdout: &str, expected_status: i32) {
    for (label, opts) in option_sets() {
        let Some(r) = build_and_run(module, &opts, stdin) else {
            return;
        };
        assert_eq!(r.stdout, expected_stdout, "stdout differs ({label})\n--- assembly ---\n{}", r.asm);
        assert_eq!(r.status, expected_status, "exit status differs ({label})\n--- assembly ---\n{}", r.asm);
    }
}
