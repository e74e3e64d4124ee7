//! Helpers shared by the tests that build and run ARM programs: they skip (with a note on
//! stderr) when the cross gcc or qemu-arm is not installed.

#![allow(dead_code)] // Each test binary uses its own subset.

use std::path::{Path, PathBuf};

use sysy_check::qemu::Qemu;
use sysyc::runtime::library;
use sysyc::toolchain::{self, Source};

/// Whether the cross gcc, qemu-arm and the cost plugin are all there (after printing why
/// not): what the tests that measure costs need.
pub fn tools_with_plugin(test: &str) -> bool {
    if tools(test).is_none() {
        return false;
    }
    if let Err(e) = sysy_cost_model::locate_plugin() {
        eprintln!("note: skipping {test}: {e}");
        return false;
    }
    true
}

/// The located qemu, or `None` (after printing why) when a tool is missing.
pub fn tools(test: &str) -> Option<Qemu> {
    if let Err(e) = toolchain::arm_gcc() {
        eprintln!("note: skipping {test}: {e}");
        return None;
    }
    match Qemu::locate() {
        Ok(q) => Some(q),
        Err(e) => {
            eprintln!("note: skipping {test}: {e}");
            None
        }
    }
}

/// A scratch directory that lives as long as the returned guard.
pub fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("sysyc-test-")
        .tempdir()
        .expect("temporary directory")
}

/// Assembles and links `asm` with the runtime into `dir/name`.
pub fn link_asm(dir: &Path, name: &str, asm: &str) -> PathBuf {
    let exe = dir.join(name);
    if let Err(e) = library::link_executable(Source::Text(asm), &exe) {
        panic!("linking {name} failed: {e}");
    }
    exe
}

/// Compiles and links the C program `c` with the runtime into `dir/name`.
pub fn build_c(dir: &Path, name: &str, c: &str, opt: &str) -> PathBuf {
    let exe = dir.join(name);
    if let Err(e) = library::compile_c(Source::Text(c), &exe, &[opt]) {
        panic!("compiling {name} failed: {e}");
    }
    exe
}

/// Wraps the body of an ARM-mode `main` (which must end by returning) in the directives the
/// assembler needs.
pub fn asm_main(body: &str) -> String {
    format!(
        "\t.arch armv7ve\n\t.fpu vfpv4\n\t.arm\n\t.text\n\t.global main\n\t.type main, %function\nmain:\n{body}\n\t.size main, .-main\n"
    )
}
