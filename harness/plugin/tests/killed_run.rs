//! Runs that do not end normally: a guest killed by SIGKILL (what a timeout
//! does) leaves a readable, incomplete counter file; bad plugin arguments
//! stop QEMU with a message.

mod common;

use std::time::Duration;

use sysy_cost_model::plugin_args::PluginConfig;
use sysy_cost_model::{CostCounts, InsnClass, ProgramRanges};

#[test]
fn sigkilled_run_leaves_partial_counts() {
    if !common::tools_available("sigkilled_run_leaves_partial_counts") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = dir.path().join("spin");
    common::build_bare(&common::test_file("asm/spin.s"), &exe);
    let out = dir.path().join("spin.counts");
    let config = PluginConfig::new(&out, ProgramRanges::default());
    let mut child = common::qemu_command(&exe, Some(&config))
        .spawn()
        .expect("start qemu-arm");
    std::thread::sleep(Duration::from_secs(1));
    child.kill().expect("SIGKILL qemu-arm"); // Child::kill sends SIGKILL
    let status = child.wait().expect("reap qemu-arm");
    assert!(
        !status.success(),
        "the guest spins forever, it cannot have exited by itself"
    );

    let counts = CostCounts::read(&out).unwrap_or_else(|e| panic!("{e}"));
    assert!(!counts.complete, "atexit cannot have run");
    // spin.s: one `mov` then `add; b` forever; a second of QEMU is far more
    // than a thousand iterations.
    let branches = counts.per_class.get(InsnClass::Branch);
    assert!(branches > 1000, "implausibly few iterations: {counts:?}");
    assert_eq!(counts.per_class.get(InsnClass::Alu), branches + 1);
    assert_eq!(counts.total, 2 * branches + 1);
}

#[test]
fn bad_plugin_arguments_stop_qemu_with_a_message() {
    if !common::tools_available("bad_plugin_arguments_stop_qemu_with_a_message") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let exe = dir.path().join("spin");
    common::build_bare(&common::test_file("asm/spin.s"), &exe);
    let library = common::plugin_library();
    let output = std::process::Command::new(common::QEMU)
        .arg("-plugin")
        .arg(format!("{},prog=0x10-0x20", library.display()))
        .arg(&exe)
        .output()
        .expect("run qemu-arm");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("sysy-cost-plugin: plugin argument `out=PATH` is required"),
        "{stderr}"
    );
}
