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

use crate::isa::arm::asm;


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

/// Environment variable naming the qemu binary to use instead of [`DEFAULT_QEMU`].
pub const QEMU_ENV: &str = "SYSYC_QEMU";
/// The qemu binary looked up on `PATH` by default (the dynamic build: only it accepts `-plugin`).
pub const DEFAULT_QEMU: &str = "qemu-arm";
/// The emulated CPU: it has `sdiv`/`udiv` and VFPv4 and traps on anything newer.
pub const QEMU_CPU: &str = "cortex-a7";

/// The user-mode emulator: `$SYSYC_QEMU` if set, else `qemu-arm` on `PATH`.
pub fn qemu_arm() -> Result<PathBuf, ToolchainError> {
    let (name, origin) = match std::env::var_os(QEMU_ENV) {
        Some(v) if !v.is_empty() => (v, format!("named by ${QEMU_ENV}")),
        _ => (OsString::from(DEFAULT_QEMU), "searched on PATH".to_string()),
    };
    find_program(&name).ok_or_else(|| ToolchainError::NotFound {
        tool: name.to_string_lossy().into_owned(),
        detail: format!("{origin}; install qemu-user or set ${QEMU_ENV}"),
    })
}

/// Runs the ARM executable `exe` under `qemu-arm -cpu cortex-a7` on `stdin`, uncounted and
/// with no time limit (the compiler's own tests; the harness runs executables through its
/// runner): the finished process's output, whatever its status.
pub fn run_arm(exe: &Path, stdin: &[u8]) -> Result<Output, ToolchainError> {
    let qemu = qemu_arm()?;
    let args: Vec<OsString> = ["-cpu", QEMU_CPU].into_iter().map(OsString::from).chain([exe.as_os_str().to_owned()]).collect();
    let spawn = |source| ToolchainError::Spawn { command: command_line(&qemu, &args), source };
    let mut child = std::process::Command::new(&qemu)
        .args(&args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(spawn)?;
    let input = child.stdin.take();
    // Written (then closed) while the output is read, so a program that ignores its input
    // cannot block us.
    std::thread::scope(|scope| {
        scope.spawn(move || input.map(|mut i| std::io::Write::write_all(&mut i, stdin)));
        child.wait_with_output().map_err(spawn)
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
/// words as gcc quotes them (a POSIX shell's double quotes: `shlex`).
fn assembler_command(listing: &str) -> Option<AssemblerCommand> {
    let mut commands = listing.lines().filter(|l| l.starts_with(' '));
    let line = commands.next()?;
    if commands.next().is_some() {
        return None;
    }
    let words = shlex::split(line)?;
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

/// A command line as text a shell would accept (see [`shell_words`]).
pub fn command_line(program: &Path, args: &[OsString]) -> String {
    let words: Vec<String> = std::iter::once(program.as_os_str()).chain(args.iter().map(OsString::as_os_str)).map(|a| a.to_string_lossy().into_owned()).collect();
    shell_words(words.iter().map(String::as_str))
}

/// `words` as text a POSIX shell reads back as the same words, each quoted when it needs it
/// (`shlex`; a NUL byte, which no shell word can hold, is dropped).
pub fn shell_words<'a>(words: impl IntoIterator<Item = &'a str>) -> String {
    let quoted = |word: &str| shlex::try_quote(&word.replace('\0', "")).map(|q| q.into_owned()).unwrap_or_default();
    words.into_iter().map(quoted).collect::<Vec<_>>().join(" ")
}

/// Assembles `text` with GNU `as` too and compares every section's bytes and every
/// relocation with [`asm::assemble`]'s; `Err` describes the first difference.
pub fn compare_with_gnu(text: &str) -> Result<(), String> {
    let ours = asm::assemble(text).map_err(|e| format!("in-process assembler: {e}"))?;
    let gnu = gnu_object(text).map_err(|e| format!("GNU as: {e}"))?;
    asm::compare_objects(&ours, &gnu)
}

/// The relocatable object GNU `as` makes of `text`: the `as` of the cross gcc's toolchain
/// with the options the driver gives it, run directly when gcc names the command
/// ([`gnu_assembler`]), else through the driver.
pub fn gnu_object(text: &str) -> Result<Vec<u8>, ToolchainError> {
    gnu_object_with(text, true)
}

/// [`gnu_object`], through the gcc driver unless `direct`.
pub(crate) fn gnu_object_with(text: &str, direct: bool) -> Result<Vec<u8>, ToolchainError> {
    let gcc = arm_gcc()?;
    let dir = tempfile::tempdir().map_err(|source| ToolchainError::Io {
        action: "cannot create a temporary directory in",
        path: std::env::temp_dir(),
        source,
    })?;
    let out = dir.path().join("gnu.o");
    let command = if direct { gnu_assembler(&gcc) } else { None };
    match command {
        Some(command) => run_tool(&command.program, &command.args_for(&out), Some(text.as_bytes()))?,
        None => {
            let args: Vec<std::ffi::OsString> = ASSEMBLE_STDIN.iter().map(Into::into).chain([out.clone().into()]).collect();
            run_tool(&gcc, &args, Some(text.as_bytes()))?
        }
    };
    std::fs::read(&out).map_err(|source| ToolchainError::Io { action: "cannot read", path: out, source })
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
    fn command_lines_read_back_as_their_words() {
        let words = ["/usr/bin/gcc", "-o", "a b", "it's", "", "$HOME", "x\"y\\z"];
        let args: Vec<OsString> = words[1..].iter().map(OsString::from).collect();
        let line = command_line(Path::new(words[0]), &args);
        assert!(line.starts_with("/usr/bin/gcc -o "), "plain words stay plain: {line}");
        assert_eq!(shlex::split(&line).expect("a shell reads it"), words);
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
