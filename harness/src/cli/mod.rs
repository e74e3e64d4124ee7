//! The `harness` subcommands as library functions, so the binary stays a dispatcher and the
//! commands can be tested without spawning processes.

pub mod asm_agree;
pub mod conform;
pub mod interp;

use std::process::ExitCode;

/// Prints `harness: MESSAGE` on stderr and returns the generic failure status.
pub fn fail(message: &str) -> ExitCode {
    errln!("harness: {message}");
    ExitCode::FAILURE
}

