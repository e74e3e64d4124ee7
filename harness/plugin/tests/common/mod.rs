//! Shared helpers for the plugin's integration tests: finding the cross
//! toolchain and QEMU (tests skip with a note when they are missing), building
//! guest programs, and running them under the plugin.

#![allow(dead_code)] // each test binary uses a subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use sysy_cost_model::plugin_args::{ModeDetection, PluginConfig};
use sysy_cost_model::{CostCounts, ProgramRanges, locate_plugin, plugin_option};

pub const QEMU: &str = "qemu-arm";
pub const GCC: &str = "arm-linux-gnueabihf-gcc";
/// Flags matching the project's target (ARM mode, VFPv4, hard float).
pub const TARGET_FLAGS: &[&str] = &["-march=armv7ve", "-mfpu=vfpv4", "-mfloat-abi=hard", "-marm"];

/// Whether qemu-arm and the cross gcc are installed; prints a skip note if not.
pub fn tools_available(test: &str) -> bool {
    let works = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let missing: Vec<&str> = [QEMU, GCC]
        .into_iter()
        .filter(|tool| !works(tool))
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "note: skipping {test}: {} not installed",
            missing.join(", ")
        );
    }
    missing.is_empty()
}

/// The plugin built by cargo for this test run.
pub fn plugin_library() -> PathBuf {
    locate_plugin().unwrap_or_else(|e| panic!("{e}"))
}

/// Source files shipped with the tests.
pub fn test_file(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(relative)
}

fn run_checked(command: &mut Command) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Assembles and links a stand-alone assembly program (no libc).
pub fn build_bare(source: &Path, exe: &Path) {
    run_checked(
        Command::new(GCC)
            .args(["-static", "-nostdlib"])
            .arg(source)
            .arg("-o")
            .arg(exe),
    );
}

/// Compiles a C file to an object, then links it statically with glibc.
pub fn build_c(source: &Path, object: &Path, exe: &Path) {
    run_checked(
        Command::new(GCC)
            .args(["-O2", "-c"])
            .args(TARGET_FLAGS)
            .arg(source)
            .arg("-o")
            .arg(object),
    );
    run_checked(
        Command::new(GCC)
            .arg("-static")
            .args(TARGET_FLAGS)
            .arg(object)
            .arg("-o")
            .arg(exe),
    );
}

/// The qemu-arm command for `exe` in a fixed environment (no inherited
/// variables, stdin from /dev/null), with the plugin configured if given.
pub fn qemu_command(exe: &Path, config: Option<&PluginConfig>) -> Command {
    let mut command = Command::new(QEMU);
    command
        .env_clear()
        .args(["-cpu", "cortex-a7"])
        .stdin(Stdio::null());
    if let Some(config) = config {
        command
            .arg("-plugin")
            .arg(plugin_option(&plugin_library(), config).expect("plugin option"));
    }
    command.arg(exe);
    command
}

/// Runs `exe` under the plugin, asserting a zero exit status, and reads the counts.
pub fn run_counted(
    exe: &Path,
    out: &Path,
    program: ProgramRanges,
    mode: ModeDetection,
) -> (Output, CostCounts) {
    let config = PluginConfig {
        out: out.to_path_buf(),
        program,
        mode,
        binary: None,
    };
    let output = qemu_command(exe, Some(&config))
        .output()
        .expect("run qemu-arm");
    assert!(
        output.status.success(),
        "guest failed: {:?}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let counts = CostCounts::read(out).unwrap_or_else(|e| panic!("{e}"));
    (output, counts)
}
