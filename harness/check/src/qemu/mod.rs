//! Running ARM executables under `qemu-arm`, deterministically, with a time limit, and with
//! the cost plugin counting executed instructions: the one place that knows how an
//! executable, its stdin and a time limit become an exit status, stdout and exact counts.
//!
//! [`Runner`] is what the rest of the harness uses; [`Qemu`] is the process underneath.
//!
//! Determinism: a guest's instruction count depends on its environment, its `argv[0]` and the
//! kind of its stdin/stdout (glibc's start-up code and stdio look at all three). Every run
//! therefore gets the same environment (empty unless [`RunOptions::env`] says otherwise; the
//! guest inherits qemu's environment), the same `argv[0]` (qemu's `-0`), stdout and stderr on
//! pipes, and stdin from a pipe, a file or `/dev/null` as requested. [`Runner`] runs also set
//! `SYSY_FIXED_CLOCK=1`, so that both runtime libraries' timers read 0 (the timer report's
//! digits would otherwise change its formatting cost with the run's duration), and give a
//! counted run its stdin as a file (a pipe's chunking changes the runtime's read loop). The
//! program's behaviour does not change: SysY cannot read the clock. Core dumps are disabled
//! (for the whole process: see [`no_core_dumps`]) so that a crashing guest leaves no
//! `qemu_*.core` files behind.
//!
//! Outcome: qemu-arm exits with the guest's exit status, and when the guest dies of a signal
//! it kills itself with the same signal, so the host's wait status tells the two apart
//! ([`RunStatus::Exited`] / [`RunStatus::Signaled`]). A run exceeding its timeout is killed
//! (SIGKILL to the qemu process, which is the whole guest: SysY programs cannot fork) and
//! reported as [`RunStatus::TimedOut`] with whatever output it had produced.
//!
//! Counting: the plugin (`harness/plugin`, found by [`sysy_cost_model::locate_plugin`]:
//! `$SYSY_COST_PLUGIN` or next to the running binary) writes its counters to a memory-mapped
//! file while the guest runs, so a run killed at its time limit still leaves the counts of
//! every block entered (`complete == false`). The program's own code is told apart from the
//! runtime library by the `__sysy_prog_begin`/`__sysy_prog_end` markers the back end emits;
//! executables without them (gcc's) count everything as runtime unless ranges are given.
//!
//! qemu itself is found through `$SYSYC_QEMU` (a path or a name on `PATH`), else `qemu-arm`
//! on `PATH`. qemu's own failures (a bad `-plugin` argument, say) also end with status 1 and a
//! message on stderr, so a caller that passes extra arguments should check stderr too.

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sysy_cost_model::{CostCounts, CycleEstimate, LatencyTable, PluginConfig, ProgramRanges, locate_plugin, plugin_option};
use sysyc::toolchain::{self, ToolchainError, command_line};

pub mod fork_server;

use fork_server::{ServerPool, Served};

/// The guest's `argv[0]` unless told otherwise.
pub const DEFAULT_ARGV0: &str = "prog";

#[derive(Debug, thiserror::Error)]
pub enum QemuError {
    #[error("cannot find {name}: {detail}")]
    NotFound { name: String, detail: String },
    #[error("no executable to run at {0}")]
    MissingExecutable(PathBuf),
    #[error("cannot run `{command}`: {source}")]
    Spawn {
        command: String,
        #[source]
        source: io::Error,
    },
    #[error("lost track of `{command}`: {source}")]
    Wait {
        command: String,
        #[source]
        source: io::Error,
    },
}

/// Where the guest's stdin comes from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Stdin {
    /// `/dev/null`.
    #[default]
    Null,
    /// These bytes, through a pipe.
    Bytes(Vec<u8>),
    /// This file.
    File(PathBuf),
}

/// How to run one executable.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub stdin: Stdin,
    /// Wall-clock limit; the run is killed when it is exceeded.
    pub timeout: Duration,
    /// `-cpu` model.
    pub cpu: String,
    /// The guest's `argv[0]`.
    pub argv0: OsString,
    /// The complete environment of qemu and hence of the guest.
    pub env: Vec<(OsString, OsString)>,
    /// Further qemu options, placed before the executable (e.g. `-plugin`, `/abs/lib.so,k=v`).
    pub extra_args: Vec<OsString>,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            stdin: Stdin::Null,
            timeout: Duration::from_secs(10),
            cpu: toolchain::QEMU_CPU.to_string(),
            argv0: DEFAULT_ARGV0.into(),
            env: Vec::new(),
            extra_args: Vec::new(),
        }
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunStatus {
    /// The guest exited with this status (`main`'s return value & 0xFF).
    Exited(u8),
    /// The guest was killed by this signal (SIGSEGV = 11, SIGILL = 4, ...).
    Signaled(i32),
    /// The time limit was exceeded and the run was killed.
    TimedOut,
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RunStatus::Exited(code) => write!(f, "exited with status {code}"),
            RunStatus::Signaled(signal) => match signal_name(signal) {
                Some(name) => write!(f, "killed by {name}"),
                None => write!(f, "killed by signal {signal}"),
            },
            RunStatus::TimedOut => f.write_str("timed out"),
        }
    }
}

/// The conventional name of a Linux signal number (`SIGSEGV`), when it has one.
pub fn signal_name(signal: i32) -> Option<&'static str> {
    nix::sys::signal::Signal::try_from(signal).ok().map(|s| s.as_str())
}

/// The result of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QemuRun {
    pub stdout: Vec<u8>,
    /// The guest's stderr (the runtime's timer report) and any messages of qemu itself.
    pub stderr: Vec<u8>,
    pub status: RunStatus,
    /// Wall-clock time from start to exit (or to the kill).
    pub wall: Duration,
}

/// A located qemu-arm binary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Qemu {
    binary: PathBuf,
}

impl Qemu {
    /// `$SYSYC_QEMU` if set, else `qemu-arm` on `PATH` ([`toolchain::qemu_arm`]).
    pub fn locate() -> Result<Qemu, QemuError> {
        match toolchain::qemu_arm() {
            Ok(binary) => Ok(Qemu { binary }),
            Err(ToolchainError::NotFound { tool, detail }) => Err(QemuError::NotFound { name: tool, detail }),
            Err(e) => Err(QemuError::NotFound { name: toolchain::DEFAULT_QEMU.into(), detail: e.to_string() }),
        }
    }

    /// A specific binary, used as given.
    pub fn with_binary(binary: impl Into<PathBuf>) -> Qemu {
        Qemu {
            binary: binary.into(),
        }
    }

    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// The arguments qemu is given for `exe` (after the qemu binary itself).
    pub fn args(&self, exe: &Path, opts: &RunOptions) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            "-cpu".into(),
            opts.cpu.clone().into(),
            "-0".into(),
            opts.argv0.clone(),
        ];
        args.extend(opts.extra_args.iter().cloned());
        args.push(exe.into());
        args
    }

    /// The full command line, for logs and for reproducing a run by hand (the environment and
    /// the stdin redirection are not shown).
    pub fn command_line(&self, exe: &Path, opts: &RunOptions) -> String {
        command_line(&self.binary, &self.args(exe, opts))
    }

    /// Runs `exe` to completion, to a signal, or to the timeout.
    pub fn run(&self, exe: &Path, opts: &RunOptions) -> Result<QemuRun, QemuError> {
        if !exe.is_file() {
            return Err(QemuError::MissingExecutable(exe.to_path_buf()));
        }
        let command = || self.command_line(exe, opts);
        let expr = duct::cmd(&self.binary, self.args(exe, opts))
            .full_env(opts.env.iter().cloned())
            .stdout_capture()
            .stderr_capture()
            .unchecked();
        no_core_dumps().map_err(|source| QemuError::Spawn { command: command(), source })?;
        let expr = match &opts.stdin {
            Stdin::Null => expr.stdin_null(),
            Stdin::Bytes(bytes) => expr.stdin_bytes(bytes.clone()),
            Stdin::File(path) => expr.stdin_path(path),
        };

        let start = Instant::now();
        let handle = expr.start().map_err(|source| QemuError::Spawn {
            command: command(),
            source,
        })?;
        let finished = handle
            .wait_deadline(start + opts.timeout)
            .map_err(|source| QemuError::Wait {
                command: command(),
                source,
            })?
            .is_some();
        if !finished {
            // The child may have exited just after the deadline; killing an exited child is
            // harmless, and its real status is then discarded in favour of the timeout.
            handle.kill().map_err(|source| QemuError::Wait {
                command: command(),
                source,
            })?;
        }
        let output = handle.into_output().map_err(|source| QemuError::Wait {
            command: command(),
            source,
        })?;
        let wall = start.elapsed();
        let status = if !finished {
            RunStatus::TimedOut
        } else {
            status_of(output.status)
        };
        Ok(QemuRun {
            stdout: output.stdout,
            stderr: output.stderr,
            status,
            wall,
        })
    }
}

/// Lowers this process's soft core-file limit to zero, once; every qemu started afterwards
/// inherits it.
///
/// Why the whole process and not a `pre_exec` hook in the child: any `pre_exec` hook makes
/// the standard library start children with `fork` instead of `posix_spawn` (a `vfork`),
/// and a fork of the campaign process — a large heap, 256 MiB worker stacks — copies its
/// page tables and then write-faults the parent's pages back, per qemu run. The harness
/// process itself then dumps no core either, which nothing relies on: a crash is read from
/// the wait status (the campaign's supervisor, `campaign::isolate`). The hard limit is kept.
fn no_core_dumps() -> io::Result<()> {
    static DONE: std::sync::OnceLock<Result<(), i32>> = std::sync::OnceLock::new();
    let done = DONE.get_or_init(|| {
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit/setrlimit with a valid pointer to a local rlimit.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_CORE, &mut limit) != 0 {
                return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
            }
            limit.rlim_cur = 0;
            if libc::setrlimit(libc::RLIMIT_CORE, &limit) != 0 {
                return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
            }
        }
        Ok(())
    });
    done.map_err(io::Error::from_raw_os_error)
}

fn status_of(status: std::process::ExitStatus) -> RunStatus {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => RunStatus::Exited((code & 0xff) as u8),
        (None, Some(signal)) => RunStatus::Signaled(signal),
        // Stopped/continued statuses are not reported by a plain wait.
        (None, None) => RunStatus::Signaled(0),
    }
}

/// Why a run could not be made or measured (as opposed to a run whose program misbehaved).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Qemu(#[from] QemuError),
    #[error("cost plugin: {0}")]
    Plugin(String),
    #[error("cannot create a temporary directory: {0}")]
    TempDir(std::io::Error),
    #[error("cannot write the run's stdin file: {0}")]
    StdinFile(std::io::Error),
}

/// The environment variable that makes the runtime libraries' timers read 0 (see the module
/// documentation).
pub const FIXED_CLOCK: &str = "SYSY_FIXED_CLOCK";

/// Whether runs are measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostMode {
    /// Load the plugin; a missing plugin or an unreadable counter file is an error.
    Measure,
    /// Plain qemu-arm.
    Off,
}

/// What one run cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunCost {
    pub counts: CostCounts,
    /// Under [`LatencyTable::default`].
    pub cycles: CycleEstimate,
}

/// One finished (or killed) run.
#[derive(Clone, Debug)]
pub struct Run {
    pub status: RunStatus,
    pub stdout: Vec<u8>,
    pub wall: Duration,
    pub cost: Option<RunCost>,
}

/// Environment variable that, set to `0`, makes every [`Runner`] start a qemu process per run
/// instead of using fork servers (to compare the two, or to rule the server out).
pub const FORK_SERVER_ENV: &str = "SYSY_FORK_SERVER";

/// qemu-arm, with the cost plugin when measuring: the one place the harness runs an ARM
/// executable. Runs go through fork servers ([`fork_server`]) where they can, one per
/// concurrent run, shared by the clones of a runner; otherwise each run is its own qemu.
#[derive(Clone, Debug)]
pub struct Runner {
    qemu: Qemu,
    plugin: Option<PathBuf>,
    table: LatencyTable,
    servers: Option<std::sync::Arc<ServerPool>>,
}

impl Runner {
    /// Finds qemu-arm, and the plugin under [`CostMode::Measure`].
    pub fn new(mode: CostMode) -> Result<Runner, RunError> {
        let qemu = Qemu::locate()?;
        let plugin = match mode {
            CostMode::Measure => {
                Some(locate_plugin().map_err(|e| RunError::Plugin(e.to_string()))?)
            }
            CostMode::Off => None,
        };
        let servers = (std::env::var_os(FORK_SERVER_ENV).as_deref() != Some("0".as_ref()))
            .then(|| std::sync::Arc::new(ServerPool::default()));
        Ok(Runner {
            qemu,
            plugin,
            table: LatencyTable::default(),
            servers,
        })
    }

    /// How many of this runner's runs (and its clones') ran in a fork server.
    pub fn served_runs(&self) -> u64 {
        self.servers.as_ref().map_or(0, |pool| pool.served())
    }

    /// This runner with fork servers on or off (each run its own qemu process).
    pub fn with_fork_servers(mut self, on: bool) -> Runner {
        self.servers = on.then(|| std::sync::Arc::new(ServerPool::default()));
        self
    }

    pub fn measures(&self) -> bool {
        self.plugin.is_some()
    }

    pub fn qemu(&self) -> &Qemu {
        &self.qemu
    }

    /// Runs `exe` on `stdin` for at most `timeout`; the program's code is located by the
    /// back end's markers (none found: everything counts as runtime).
    pub fn run(
        &self,
        exe: &Path,
        stdin: &[u8],
        timeout: Duration,
    ) -> Result<Run, RunError> {
        let ranges = ProgramRanges::from_markers(exe).unwrap_or_else(|_| ProgramRanges::new([]));
        self.run_with_ranges(exe, stdin, timeout, ranges)
    }

    /// [`Runner::run`] with explicit program address ranges.
    pub fn run_with_ranges(
        &self,
        exe: &Path,
        stdin: &[u8],
        timeout: Duration,
        ranges: ProgramRanges,
    ) -> Result<Run, RunError> {
        let mut opts = RunOptions {
            stdin: Stdin::Bytes(stdin.to_vec()),
            timeout,
            env: vec![(FIXED_CLOCK.into(), "1".into())],
            ..RunOptions::default()
        };
        let run_dir = match &self.plugin {
            Some(_) => Some(
                tempfile::Builder::new()
                    .prefix("harness-cost-")
                    .tempdir()
                    .map_err(RunError::TempDir)?,
            ),
            None => None,
        };
        let counter_file = run_dir.as_ref().map(|d| d.path().join("counts"));
        let counted = counter_file.as_ref().map(|file| PluginConfig {
            // The served child's plugin reads the program's mapping symbols from here.
            binary: std::path::absolute(exe).ok(),
            ..PluginConfig::new(file, ranges.clone())
        });
        if let Some(servers) = &self.servers
            && let Some(Served::Ran { status, stdout, wall }) =
                servers.run(&self.qemu, self.plugin.as_deref(), &opts, exe, stdin, counted.as_ref())
        {
            match &counter_file {
                None => return Ok(Run { status, stdout, wall, cost: None }),
                // Counts that cannot be read are the server's fault until the single run
                // says otherwise.
                Some(file) => {
                    if let Ok(counts) = CostCounts::read(file) {
                        let cycles = counts.cycles(&self.table);
                        return Ok(Run { status, stdout, wall, cost: Some(RunCost { counts, cycles }) });
                    }
                }
            }
        }

        // Counted runs read stdin from a file, as served runs do: from a pipe, how the input
        // arrives in chunks (the writer racing the reader) changes how often the runtime's
        // input loop runs, so the same binary on the same input would count differently.
        if let Some(dir) = &run_dir
            && !stdin.is_empty()
        {
            let path = dir.path().join("stdin");
            std::fs::write(&path, stdin).map_err(RunError::StdinFile)?;
            opts.stdin = Stdin::File(path);
        }
        if let (Some(plugin), Some(file)) = (&self.plugin, &counter_file) {
            let option = plugin_option(plugin, &PluginConfig::new(file, ranges))
                .map_err(|e| RunError::Plugin(e.to_string()))?;
            opts.extra_args = vec!["-plugin".into(), option.into()];
        }
        let run = self.qemu.run(exe, &opts)?;
        let cost = match &counter_file {
            Some(file) => {
                let counts = CostCounts::read(file).map_err(|e| {
                    RunError::Plugin(format!(
                        "{e} (qemu stderr: {})",
                        String::from_utf8_lossy(&run.stderr).trim()
                    ))
                })?;
                let cycles = counts.cycles(&self.table);
                Some(RunCost { counts, cycles })
            }
            None => None,
        };
        Ok(Run {
            status: run.status,
            stdout: run.stdout,
            wall: run.wall,
            cost,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_display_names_signals() {
        assert_eq!(RunStatus::Exited(3).to_string(), "exited with status 3");
        assert_eq!(RunStatus::Signaled(4).to_string(), "killed by SIGILL");
        assert_eq!(RunStatus::Signaled(11).to_string(), "killed by SIGSEGV");
        assert_eq!(RunStatus::Signaled(64).to_string(), "killed by signal 64");
        assert_eq!(RunStatus::TimedOut.to_string(), "timed out");
    }

    #[test]
    fn command_line_has_cpu_argv0_and_extra_args_before_the_program() {
        let qemu = Qemu::with_binary("/usr/bin/qemu-arm");
        let opts = RunOptions {
            extra_args: vec!["-plugin".into(), "/p/libcost.so,out=/tmp/x".into()],
            ..RunOptions::default()
        };
        assert_eq!(
            qemu.command_line(Path::new("/w/a.out"), &opts),
            "/usr/bin/qemu-arm -cpu cortex-a7 -0 prog -plugin '/p/libcost.so,out=/tmp/x' /w/a.out"
        );
    }

    #[test]
    fn missing_executable_is_an_error_not_a_run() {
        let qemu = Qemu::with_binary("/usr/bin/qemu-arm");
        let err = qemu
            .run(Path::new("/nonexistent/prog"), &RunOptions::default())
            .unwrap_err();
        assert!(matches!(err, QemuError::MissingExecutable(_)), "{err}");
    }
}
