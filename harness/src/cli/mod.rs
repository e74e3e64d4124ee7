//! The `harness` subcommands as library functions, so the binary stays a dispatcher and the
//! commands can be tested without spawning processes: one file per subcommand (or family of
//! them), with its arguments and what it prints; the work is in the module it drives.

pub mod asm_agree;
pub mod bench;
pub mod campaign;
pub mod conform;
pub mod generate;
pub mod interp;
pub mod speedup;
pub mod triage;

use std::process::ExitCode;

/// Prints `harness: MESSAGE` on stderr and returns the generic failure status.
pub fn fail(message: &str) -> ExitCode {
    errln!("harness: {message}");
    ExitCode::FAILURE
}

