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

/// gcc's arguments for assembling a text from stdin, the output path to follow: what
/// [`gnu_assembler`] asks gcc about and what is run through the driver otherwise.
pub const ASSEMBLE_STDIN: [&str; 5] = ["-c", "-x", "assembler", "-", "-o"];

/// The assembler command the cross gcc runs for `gcc -c -x assembler - -o OUT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssemblerCommand {
    pub program: PathBuf,
    /// The arguments, with [`AssemblerCommand::OUTPUT`] where the output path goes.
    pub args: Vec<OsString>,
}

impl AssemblerCommand {
    /// The stand-in for the output path in the driver query (only characters gcc prints
    /// unquoted).
    pub const OUTPUT: &'static str = "/sysyc-gnu-as-output.o";

    /// The arguments for writing the object to `out` (the text comes on stdin).
    pub fn args_for(&self, out: &Path) -> Vec<OsString> {
        self.args.iter().map(|a| if a == Self::OUTPUT { out.as_os_str().to_owned() } else { a.clone() }).collect()
    }
}

/// What `gcc` runs to assemble a text from stdin, asked of gcc itself (`-###`, which prints
/// the commands without running them) once per gcc and process: running that command
/// directly assembles exactly as the driver would, for one process start instead of two (the
/// encoder oracle assembles thousands of texts per campaign). `None` when gcc's answer is not
/// one assembler command naming the output once; callers then go through the driver.
pub fn gnu_assembler(gcc: &Path) -> Option<AssemblerCommand> {
    use std::sync::Mutex;
    static ASKED: Mutex<Vec<(PathBuf, Option<AssemblerCommand>)>> = Mutex::new(Vec::new());
    let mut asked = ASKED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, command)) = asked.iter().find(|(g, _)| g == gcc) {
        return command.clone();
    }
    let args: Vec<OsString> = std::iter::once("-###").chain(ASSEMBLE_STDIN).chain([AssemblerCommand::OUTPUT]).map(Into::into).collect();
    let command = run_tool(gcc, &args, Some(b"")).ok().and_then(|out| assembler_command(&String::from_utf8_lossy(&out.stderr)));
    asked.push((gcc.to_path_buf(), command.clone()));
    command
}

/// The one command of a `gcc -###` listing (its lines that start with a space), split into
/// words as gcc quotes them: a word with characters other than letters, digits and `_/-.`
/// is in double quotes, with `"`, `\` and `$` escaped by a backslash.
fn assembler_command(listing: &str) -> Option<AssemblerCommand> {
    let mut commands = listing.lines().filter(|l| l.starts_with(' '));
    let line = commands.next()?;
    if commands.next().is_some() {
        return None;
    }
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if_eq(&' ').is_some() {}
        let Some(first) = chars.next() else { break };
        let mut word = String::new();
        if first == '"' {
            loop {
                match chars.next()? {
                    '"' => break,
                    '\\' => word.push(chars.next()?),
                    c => word.push(c),
                }
            }
        } else {
            word.push(first);
            while let Some(c) = chars.next_if(|&c| c != ' ') {
                word.push(c);
            }
        }
        words.push(word);
    }
    let mut words = words.into_iter();
    let program = PathBuf::from(words.next()?);
    let args: Vec<OsString> = words.map(OsString::from).collect();
    let outputs = args.iter().filter(|a| *a == AssemblerCommand::OUTPUT).count();
    // An absolute path only: a bare name would be looked up on PATH, where the host's `as` is.
    (outputs == 1 && program.is_absolute() && find_program(program.as_os_str()).is_some()).then_some(AssemblerCommand { program, args })
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

    /// gcc's `-###` quoting is undone word by word; a listing that is not exactly one
    /// command naming the output once gives no command (the driver is used instead).
    #[test]
    fn reads_the_assembler_command_of_a_driver_listing() {
        let listing = "Target: arm-linux-gnueabihf\nCOLLECT_GCC_OPTIONS='-c'\n /bin/sh \"-march=armv7-a+fp\" \"a \\\"b\\\\\" -o /sysyc-gnu-as-output.o -\n";
        let command = assembler_command(listing).expect("one command");
        assert_eq!(command.program, PathBuf::from("/bin/sh"));
        let words: Vec<OsString> = ["-march=armv7-a+fp", "a \"b\\", "-o", AssemblerCommand::OUTPUT, "-"].iter().map(OsString::from).collect();
        assert_eq!(command.args, words);
        let out = Path::new("/tmp/x y/gnu.o");
        assert_eq!(command.args_for(out)[3], out.as_os_str());
        assert!(assembler_command(" /bin/sh -o /other.o -\n").is_none(), "no output stand-in");
        assert!(assembler_command(" /bin/sh -o /sysyc-gnu-as-output.o -\n /bin/sh -\n").is_none(), "two commands");
        assert!(assembler_command(" /nonexistent/as -o /sysyc-gnu-as-output.o -\n").is_none(), "no such program");
        assert!(assembler_command(" sh -o /sysyc-gnu-as-output.o -\n").is_none(), "a bare name");
        assert!(assembler_command(" /bin/sh \"unterminated -o /sysyc-gnu-as-output.o\n").is_none());
    }

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
