//! The ARM cross toolchain: finding `arm-linux-gnueabihf-gcc` and running it (and any other
//! tool) with stable messages. Linking programs with the runtime library is
//! [`crate::runtime::library`]'s business.
//!
//! Every tool is run directly (through `duct`, never a shell) with `LC_ALL=C`, so messages are
//! stable. A tool that fails is reported with the exact command line and everything it wrote
//! on stderr; nothing is swallowed.
//!
//! The compiler is found through the environment variable [`GCC_ENV`] (a path, or a name
//! looked up on `PATH`), else [`DEFAULT_GCC`] on `PATH`. All code is built for the project's
//! target ([`TARGET_FLAGS`]) and linked statically, so executables run under `qemu-arm`
//! without an ARM sysroot.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::process::Output;


/// Environment variable naming the cross gcc to use instead of [`DEFAULT_GCC`].
pub const GCC_ENV: &str = "SYSYC_ARM_GCC";
/// The cross gcc looked up on `PATH` by default.
pub const DEFAULT_GCC: &str = "arm-linux-gnueabihf-gcc";

/// The target: ARM (not Thumb) code for ARMv7-A with the virtualization extensions' integer
/// divide, VFPv4, hard-float calling convention.
pub const TARGET_FLAGS: [&str; 4] = ["-marm", "-march=armv7ve", "-mfpu=vfpv4", "-mfloat-abi=hard"];

/// Flags that make gcc's C agree with SysY: wrapping `int` arithmetic and single-precision
/// float constants (SysY's `0.1` is a float; in C it would be a double).
pub const SYSY_C_FLAGS: [&str; 2] = ["-fwrapv", "-fsingle-precision-constant"];

/// Why a toolchain step could not be done.
#[derive(Debug, thiserror::Error)]
pub enum ToolchainError {
    /// The tool is not installed (or the override names something that is not a program).
    #[error("cannot find {tool}: {detail}")]
    NotFound { tool: String, detail: String },
    /// The tool could not be started.
    #[error("cannot run `{command}`: {source}")]
    Spawn {
        command: String,
        #[source]
        source: io::Error,
    },
    /// The tool ran and failed: the command line, how it ended, and its stderr.
    #[error("`{command}` failed ({status}):\n{stderr}")]
    Failed { command: String, status: String, stderr: String },
    /// The in-process assembler refused the text (a compiler bug when the text is ours).
    #[error("in-process assembler: {0}")]
    Assemble(#[from] crate::isa::arm::asm::AsmError),
    /// The in-process linker refused the objects.
    #[error("in-process {0}")]
    Link(#[from] crate::isa::arm::link::LinkError),
    /// A file of the runtime cache could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// Source code handed to gcc: a file, or text passed on gcc's stdin.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    Path(&'a Path),
    Text(&'a str),
}

/// Looks a program up like a shell would: a name containing `/` is taken as a path, anything
/// else is searched in the directories of `PATH`. Returns the first executable regular file.
pub fn find_program(name: &OsStr) -> Option<PathBuf> {
    let is_executable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let as_path = Path::new(name);
    if name.as_encoded_bytes().contains(&b'/') {
        return is_executable(as_path).then(|| as_path.to_path_buf());
    }
    let path_var = std::env::var_os("PATH")?;
    std::env::split_paths(&path_var).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

/// The cross gcc: `$SYSYC_ARM_GCC` if set, else `arm-linux-gnueabihf-gcc` on `PATH`.
pub fn arm_gcc() -> Result<PathBuf, ToolchainError> {
    let (name, origin) = match std::env::var_os(GCC_ENV) {
        Some(v) if !v.is_empty() => (v, format!("named by ${GCC_ENV}")),
        _ => (OsString::from(DEFAULT_GCC), "searched on PATH".to_string()),
    };
    find_program(&name).ok_or_else(|| ToolchainError::NotFound {
        tool: name.to_string_lossy().into_owned(),
        detail: format!("{origin}; install gcc-arm-linux-gnueabihf or set ${GCC_ENV} to the cross compiler"),
    })
}

/// Runs `program args...` (stdin from `stdin`, or empty), capturing stdout and stderr.
/// A non-zero exit or a signal is an error carrying the command line and stderr.
pub fn run_tool(program: &Path, args: &[OsString], stdin: Option<&[u8]>) -> Result<Output, ToolchainError> {
    let expr = duct::cmd(program, args).env("LC_ALL", "C").stdout_capture().stderr_capture().unchecked();
    let expr = match stdin {
        Some(bytes) => expr.stdin_bytes(bytes.to_vec()),
        None => expr.stdin_null(),
    };
    let output = expr.run().map_err(|source| ToolchainError::Spawn { command: command_line(program, args), source })?;
    if output.status.success() {
        return Ok(output);
    }
    Err(ToolchainError::Failed {
        command: command_line(program, args),
        status: describe_status(output.status),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

fn describe_status(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => status.to_string(),
    }
}

/// A command line as text a shell would accept: arguments with unusual characters are put in
/// single quotes.
pub fn command_line(program: &Path, args: &[OsString]) -> String {
    std::iter::once(program.as_os_str())
        .chain(args.iter().map(OsString::as_os_str))
        .map(|a| quote_arg(&a.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn quote_arg(arg: &str) -> String {
    let plain = !arg.is_empty() && arg.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=+,:@%".contains(&b));
    if plain { arg.to_string() } else { format!("'{}'", arg.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_quoting() {
        let args: Vec<OsString> = ["-o", "a b", "it's", ""].iter().map(OsString::from).collect();
        assert_eq!(command_line(Path::new("/usr/bin/gcc"), &args), r"/usr/bin/gcc -o 'a b' 'it'\''s' ''");
    }

    #[test]
    fn finds_programs_by_path_and_rejects_missing_ones() {
        assert!(find_program(OsStr::new("/nonexistent/definitely-not-here")).is_none());
        assert!(find_program(OsStr::new("sysyc-no-such-program-xyz")).is_none());
        // `sh` exists on every system this project runs on; a directory is not a program.
        assert!(find_program(OsStr::new("sh")).is_some());
        assert!(find_program(OsStr::new("/")).is_none());
    }

    #[test]
    fn failed_tool_reports_command_and_stderr() {
        let Some(sh) = find_program(OsStr::new("sh")) else { return };
        let args: Vec<OsString> = ["-c", "echo broken >&2; exit 3"].iter().map(OsString::from).collect();
        match run_tool(&sh, &args, None) {
            Err(ToolchainError::Failed { command, status, stderr }) => {
                assert!(command.contains("'echo broken >&2; exit 3'"), "{command}");
                assert_eq!(status, "exit status 3");
                assert_eq!(stderr, "broken\n");
            }
            other => panic!("expected a failure, got {other:?}"),
        }
    }
}
