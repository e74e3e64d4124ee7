//! What the command-line test binaries share.

use std::ffi::OsStr;
use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs the `sysyc` binary with `args`, feeding it `stdin`; returns everything it printed.
pub fn run_sysyc<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>, stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sysyc"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sysyc runs");
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("write stdin");
    child.wait_with_output().expect("sysyc finishes")
}
