//! The `harness` subcommands as library functions, so the binary stays a dispatcher and the
//! commands can be tested without spawning processes.

pub mod conform;
pub mod interp;

use std::process::ExitCode;
use std::time::Duration;

/// Prints `harness: MESSAGE` on stderr and returns the generic failure status.
pub fn fail(message: &str) -> ExitCode {
    eprintln!("harness: {message}");
    ExitCode::FAILURE
}

/// A `--timeout` in seconds as a duration.
pub fn seconds(s: Option<f64>) -> Result<Option<Duration>, String> {
    s.map(|s| Duration::try_from_secs_f64(s).map_err(|e| format!("invalid --timeout {s}: {e}")))
        .transpose()
}
