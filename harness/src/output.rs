//! Printing that cannot panic. `println!` and `eprintln!` panic when the stream is a closed
//! pipe (`harness ... | head`) or a full disk, which ends a command with status 101 and a
//! panic message; every command prints through these macros instead:
//! * [`out!`] / [`outln!`] write to stdout (flushed at once, so a lost write is seen where it
//!   happens) and return `Result<(), OutputError>`: the command stops with
//!   `harness: cannot write to stdout: ...` and a failure status;
//! * [`err!`] / [`errln!`] write to stderr and ignore errors: progress and diagnostics that
//!   cannot be shown are no reason to stop the work (the exit status still tells the result).
//!
//! The crate denies `clippy::print_stdout` and `clippy::print_stderr` outside tests, so a
//! `println!` cannot creep back in.

use std::fmt;
use std::io::Write;

/// Writing to stdout failed.
#[derive(Debug, thiserror::Error)]
#[error("cannot write to stdout: {0}")]
pub struct OutputError(#[from] pub std::io::Error);

/// What [`out!`] expands to.
pub fn write_stdout(args: fmt::Arguments<'_>) -> Result<(), OutputError> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)?;
    out.flush()?;
    Ok(())
}

/// What [`err!`] expands to.
pub fn write_stderr(args: fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// `print!` returning [`OutputError`] instead of panicking.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!($($arg)*))
    };
}

/// `println!` returning [`OutputError`] instead of panicking.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::output::write_stdout(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `eprint!` ignoring write errors.
#[macro_export]
macro_rules! err {
    ($($arg:tt)*) => {
        $crate::output::write_stderr(format_args!($($arg)*))
    };
}

/// `eprintln!` ignoring write errors.
#[macro_export]
macro_rules! errln {
    () => {
        $crate::output::write_stderr(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write_stderr(format_args!("{}\n", format_args!($($arg)*)))
    };
}
