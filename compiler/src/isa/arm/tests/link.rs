//! The in-process assembler and linker end to end: programs compiled by the back end,
//! assembled and linked in-process with a minimal freestanding runtime (a C shim with its own
//! `_start` and system calls, built by the cross gcc), run under `qemu-arm`. Skipped without
//! the cross tools.

use std::ffi::OsString;

use crate::config::Config;
use crate::toolchain::{self, TARGET_FLAGS};
use crate::isa::arm::{asm, link};
use crate::passes::OptLevel;

const SHIM: &str = r#"
static int sys3(int n, int a, int b, int c) {
    register int r0 __asm__("r0") = a; register int r1 __asm__("r1") = b;
    register int r2 __asm__("r2") = c; register int r7 __asm__("r7") = n;
    __asm__ volatile("svc #0" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r7) : "memory");
    return r0;
}
static char out[256]; static int used;
static void flush(void) { if (used) sys3(4, 1, (int)out, used); used = 0; }
void putch(int c) { if (used == sizeof out) flush(); out[used++] = (char)c; }
void putint(int v) {
    char d[12]; int n = 0; unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    if (v < 0) putch('-');
    do { d[n++] = (char)('0' + u % 10); u /= 10; } while (u);
    while (n) putch(d[--n]);
}
static int peeked = -2;
static int next(void) { char c; if (peeked != -2) { int p = peeked; peeked = -2; return p; } return sys3(3, 0, (int)&c, 1) == 1 ? (unsigned char)c : -1; }
int getint(void) {
    int c = next(), sign = 1, v = 0;
    while (c == ' ' || c == '\n') c = next();
    if (c == '-') { sign = -1; c = next(); }
    while (c >= '0' && c <= '9') { v = v * 10 + (c - '0'); c = next(); }
    peeked = c;
    return sign * v;
}
int main(void);
int table[4] = {3, 1, 4, 1};
void _start(void) { int s = main(); flush(); sys3(248, s & 255, 0, 0); }
"#;

const PROGRAM: &str = "int g[3] = {5, 6, 7};\n\
    int f(int x) { return x * 3 + g[x % 3]; }\n\
    int main() { int n = getint(); int s = 0; int i = 0;\n\
    while (i < n) { s = s + f(i); i = i + 1; }\n\
    putint(s); putch(10); putint(-42); putch(10); return s % 256; }";

fn shim_object(dir: &std::path::Path) -> Option<Vec<u8>> {
    let gcc = crate::toolchain::arm_gcc().ok()?;
    let src = dir.join("shim.c");
    let obj = dir.join("shim.o");
    std::fs::write(&src, SHIM).ok()?;
    let flags = ["-O2", "-ffreestanding", "-nostdlib", "-fno-pic", "-fno-builtin", "-fno-stack-protector", "-fno-unwind-tables", "-fno-asynchronous-unwind-tables", "-c"];
    let args: Vec<OsString> =
        TARGET_FLAGS.iter().chain(&flags).map(OsString::from).chain([src.into_os_string(), "-o".into(), obj.clone().into_os_string()]).collect();
    toolchain::run_tool(&gcc, &args, None).ok()?;
    std::fs::read(obj).ok()
}

#[test]
fn programs_assembled_and_linked_in_process_run_under_qemu() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let Some(shim) = shim_object(dir.path()) else {
        eprintln!("skipped: no ARM cross toolchain");
        return;
    };
    if toolchain::qemu_arm().is_err() {
        eprintln!("skipped: no qemu-arm");
        return;
    }
    for level in [OptLevel::O0, OptLevel::O2] {
        let (text, _, _) = crate::driver::compile_asm("t.sy", PROGRAM, &Config::level(level)).expect("compiles");
        let object = asm::assemble(&text).expect("assembles");
        let exe = link::link(&object, &shim).expect("links");
        let path = dir.path().join(format!("prog-{}", level.name()));
        std::fs::write(&path, &exe).expect("write");
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
        let out = toolchain::run_arm(&path, b"10\n").expect("qemu runs");
        // sum over i < 10 of 3i + g[i % 3] = 135 + (5+6+7)*3 + 5 = 194.
        assert_eq!(String::from_utf8_lossy(&out.stdout), "194\n-42\n", "{level:?}");
        assert_eq!(out.status.code(), Some(194), "{level:?}");
    }
}

#[test]
fn undefined_symbols_and_missing_entry_points_are_errors() {
    let object = asm::assemble("\t.text\n\t.global\tmain\nmain:\n\tbl\tnowhere\n\tbx\tlr\n").expect("assembles");
    let dir = tempfile::tempdir().expect("temporary directory");
    let Some(shim) = shim_object(dir.path()) else { return };
    let err = link::link(&object, &shim).expect_err("undefined");
    assert!(err.0.contains("undefined symbol `nowhere`"), "{err}");
}

/// Uses the runtime's buffers, tables and strings (.bss, .rodata, .data relocations of the
/// freestanding object) through every kind of output.
const RUNTIME_PROGRAM: &str = "float h[4] = {1.5, -2.25, 0.1, 3e10};\n\
    int main() { int a[8]; int n = getarray(a); float f = getfloat();\n\
    putarray(n, a); putfarray(4, h); putfloat(f * 2.0); putch(10);\n\
    putf(\"%d %c %f|\\n\", n, 65, f); starttime(); stoptime(); return n + a[0]; }";

/// The default build (in-process, freestanding runtime) and the GNU build (as, gcc, glibc)
/// of the same assembly give the same output and exit status under qemu.
#[test]
fn in_process_and_gnu_builds_behave_alike() {
    use crate::runtime::library::{Assembler, build_program};
    if toolchain::arm_gcc().is_err() || toolchain::qemu_arm().is_err() {
        eprintln!("skipped: no ARM cross toolchain or qemu-arm");
        return;
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    for level in [OptLevel::O0, OptLevel::O2] {
        let (text, _, _) = crate::driver::compile_asm("t.sy", RUNTIME_PROGRAM, &Config::level(level)).expect("compiles");
        let mut results = Vec::new();
        for assembler in Assembler::ALL {
            let path = dir.path().join(format!("prog-{}-{assembler}", level.name()));
            build_program(&text, &path, assembler).unwrap_or_else(|e| panic!("{assembler}: {e}"));
            let out = toolchain::run_arm(&path, b"3 7 -8 9\n0x1.8p1\n").expect("qemu runs");
            results.push((String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code()));
        }
        assert_eq!(results[0], results[1], "{level:?}: in-process vs gnu");
        assert!(results[0].0.starts_with("3:"), "{:?}", results[0]);
        assert_eq!(results[0].1, Some(10), "{level:?}");
    }
}

/// The runtime's part of the image (its read+execute and read+write segments) is the same,
/// at the same addresses, whatever the program, and the program's code starts on a page
/// after it: what lets the harness's fork server translate the runtime once for all runs.
/// The entry code, which calls `main`, goes with the program, outside its markers.
#[test]
fn the_runtime_part_is_the_same_in_every_executable() {
    use object::{Object as _, ObjectSegment as _, ObjectSymbol as _};
    if crate::toolchain::arm_gcc().is_err() {
        eprintln!("skipped: no ARM cross toolchain");
        return;
    }
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut runtime_parts = Vec::new();
    for (name, source) in [("small", "int main() { putint(1); return 0; }"), ("runtime", RUNTIME_PROGRAM), ("linker", PROGRAM)] {
        let (text, _, _) = crate::driver::compile_asm("t.sy", source, &Config::level(OptLevel::O2)).expect("compiles");
        let path = dir.path().join(name);
        crate::runtime::library::link_in_process(&text, &path).expect("links");
        let bytes = std::fs::read(&path).expect("read");
        let file = object::File::parse(bytes.as_slice()).expect("ELF");
        let segments: Vec<_> = file.segments().map(|s| (s.address(), s.size(), s.data().expect("data").to_vec())).collect();
        assert_eq!(segments.len(), 4, "{name}");
        let symbol = |wanted: &str| file.symbols().find(|s| s.name() == Ok(wanted)).map(|s| s.address()).expect(wanted);
        let runtime_end = segments[1].0 + segments[1].1;
        assert_eq!(segments[0].0, 0x10000, "{name}");
        assert!(segments[2].0 >= runtime_end.next_multiple_of(0x1000), "{name}: the program on pages of its own");
        assert!((segments[0].0..segments[0].0 + segments[0].1).contains(&symbol("putint")), "{name}");
        let (begin, end, entry) = (symbol("__sysy_prog_begin"), symbol("__sysy_prog_end"), file.entry());
        assert_eq!(entry, symbol("_start"));
        assert!(begin >= segments[2].0 && entry >= end, "{name}: the entry code after the program's code");
        runtime_parts.push((segments[0].clone(), segments[1].clone(), symbol("putint"), symbol("getint")));
    }
    assert!(runtime_parts.windows(2).all(|w| w[0] == w[1]), "the runtime's part differs between programs");
}
