//! Assembling, linking and running compiled test programs with the cross toolchain and
//! `qemu-arm -cpu cortex-a7` (which also checks that only `armv7ve` instructions are used),
//! both found as [`crate::toolchain`] finds them (its environment overrides included). The
//! runtime library is replaced by a minimal C shim kept here; tests skip (with a note) when
//! the tools are missing.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::ir::Module;
use crate::isa::arm::{BackendOptions, compile_module};
use crate::toolchain::{self, TARGET_FLAGS};

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

/// The cross gcc, when it and qemu-arm are both installed.
fn tools() -> Option<&'static Path> {
    static GCC: OnceLock<Option<PathBuf>> = OnceLock::new();
    GCC.get_or_init(|| toolchain::arm_gcc().ok().filter(|_| toolchain::qemu_arm().is_ok())).as_deref()
}

/// `gcc` with the target flags and `args`; panics with gcc's diagnostics when it fails.
fn gcc(args: &[&dyn AsRef<std::ffi::OsStr>], what: &str) {
    let gcc = tools().expect("the tools are present");
    let args: Vec<OsString> = TARGET_FLAGS.iter().map(OsString::from).chain(args.iter().map(|a| a.as_ref().to_owned())).collect();
    if let Err(e) = toolchain::run_tool(gcc, &args, None) {
        panic!("{what} failed: {e}");
    }
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
        gcc(&[&"-O2", &"-c", &src, &"-o", &tmp], "compiling shim.c");
        std::fs::rename(&tmp, &obj).expect("install the shim object");
        let _ = std::fs::remove_file(&src);
        obj
    })
}

/// Compiles `module`, links it with the shim and runs it with `stdin`. `None` when the
/// cross tools are not installed.
pub fn build_and_run(module: &Module, opts: &BackendOptions, stdin: &str) -> Option<RunResult> {
    if tools().is_none() {
        eprintln!("note: the ARM cross gcc or qemu-arm not found; skipping the execution test");
        return None;
    }
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let asm = compile_module(module, opts).unwrap_or_else(|e| panic!("back end failed: {e}"));
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = work_dir();
    let s_path = dir.join(format!("t{}-{n}.s", std::process::id()));
    let exe = dir.join(format!("t{}-{n}", std::process::id()));
    std::fs::write(&s_path, &asm).expect("write assembly");
    gcc(&[&"-static", &s_path, &shim_object(), &"-o", &exe], &format!("assembling/linking\n--- assembly ---\n{asm}\n---"));
    let out = toolchain::run_arm(&exe, stdin.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
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
    for stage in crate::isa::arm::BackendStage::ALL {
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
