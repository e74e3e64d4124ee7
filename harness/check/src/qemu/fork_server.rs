//! The qemu-arm fork server: one long-lived qemu per worker that runs each executable in a
//! forked child, so that a run costs a fork of an already started emulator instead of a
//! new qemu process.
//!
//! Why: starting qemu-arm (dynamic linking, TCG set-up, loading the cost plugin) takes about
//! 7 ms, more than a small generated program then runs. A campaign makes one run per
//! configuration, so start-up was most of its qemu time.
//!
//! How: qemu starts [`loader.c`](loader.c), a freestanding ARM program, with exactly the
//! `-cpu`, `argv[0]`, environment and plugin a single run would get. For each run the
//! harness writes the stdin file (and, when counting, the plugin's arguments to a file) in
//! the server's scratch directory and sends one request line; the loader forks, the child
//! opens the files onto fds 0–2, maps the executable's segments, asks the plugin for a fresh
//! count and jumps to the entry with the stack qemu built at start-up, untouched. The
//! protocol and the child's steps are documented in the loader. After the first child that
//! got through, the loader walks the child's path once itself (files opened aside, segments
//! mapped and unmapped, no jump): qemu's translation cache, which every later child
//! inherits, then holds that path, and a child translates about 7 loader blocks instead of
//! about 60 (300 served empty runs without the plugin: 3.1 → 2.5 ms of CPU each).
//!
//! The runtime library, translated once: the in-process linker puts the runtime at fixed
//! addresses, on pages of its own, identical in every executable (`sysyc`'s
//! `isa/arm/link.rs`). Before its first run a server is asked to warm up on that run's
//! executable ([`ForkServer::warm_up`]): the loader maps it, calls the runtime's functions
//! on their common paths (output to /dev/null, input from a sample text) so that qemu
//! translates them in the server, then unmaps everything but the runtime's code, which it
//! keeps. A child whose executable has the same runtime code (same segment, same bytes)
//! leaves it mapped and inherits its translations; one with another runtime unmaps it and
//! maps its own. The runtime's data is always the child's own. With the plugin, the
//! warm-up counts into a file of its own, with the executable's mapping symbols, and each
//! child's fresh count adopts the blocks translated before it (the plugin's
//! `CounterFile::adopt`), so a block inherited from the server counts in the run exactly as
//! one the run translated itself.
//!
//! What stays the same as a single run ([`super::Qemu::run`]): the program's stdout, exit
//! status or fatal signal, and every instruction count (program and runtime: the plugin
//! switches files at the program's entry block, and the stack and environment the program
//! finds are those of a fresh start). Tests in `harness/tests/fork_server.rs` compare both
//! ways on the same executables. What differs: the program's stdin and stdout are files (a
//! single counted run reads a file too), addresses outside the program's own segments
//! hold the loader instead of nothing, and the plugin's statistics of translations (a served
//! run translates fewer blocks).
//!
//! When a run cannot be served — the executable is not a static image of plain loadable
//! segments below the loader, a path cannot be sent, the loader reports it unloadable, or the
//! server misbehaves — [`super::Runner`] runs it the single way; a misbehaving server is
//! killed and replaced by the next run.
//!
//! Timeouts: the loader answers the child's pid first; at the deadline the harness kills
//! that pid (qemu-user's guest pids are host pids) and the run is [`RunStatus::TimedOut`].
//! The child also limits its own CPU time to the timeout (plus one second), so a run whose
//! harness died still ends.

use std::ffi::OsString;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use sysy_cost_model::{PluginConfig, ProgramRanges};
use sysyc::runtime::library::{TargetProgram, freestanding_cflags, target_program};

use super::{Qemu, RunOptions, RunStatus};

/// The loader's source and how it is built and cached (see `sysyc::runtime::library`).
static LOADER: TargetProgram = TargetProgram::new(
    "fork-server",
    "harness-fork-server-1",
    "loader.c",
    include_str!("loader.c"),
    "loader",
    loader_cflags,
);

/// Where the loader is linked: far above programs (0x10000 up) and their data.
const LOADER_ADDRESS: u64 = 0xe000_0000;

fn loader_cflags() -> Vec<&'static str> {
    let mut flags = freestanding_cflags();
    flags.extend(["-static", "-Wl,-Ttext-segment=0xe0000000"]);
    flags
}

/// Extra time the server gets, beyond a run's own timeout, to answer after the kill.
const ANSWER_GRACE: Duration = Duration::from_secs(10);

/// Why a server could not serve a run (the run is then made the single way).
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("cannot build the fork server's loader: {0}")]
    Build(String),
    #[error("cannot start the fork server: {0}")]
    Start(io::Error),
    #[error("fork server scratch file {path}: {source}")]
    Scratch { path: PathBuf, source: io::Error },
    #[error("fork server: {0}")]
    Protocol(String),
}

/// How a served run ended.
#[derive(Debug)]
pub enum Served {
    Ran { status: RunStatus, stdout: Vec<u8>, wall: Duration },
    /// The loader could not start the program (its reason); run it the single way.
    Unloadable(String),
}

/// One running server: a qemu-arm process running the loader.
#[derive(Debug)]
pub struct ForkServer {
    process: Child,
    requests: ChildStdin,
    answers: ChildStdout,
    pending: Vec<u8>,
    scratch: tempfile::TempDir,
    /// Whether qemu runs with the cost plugin (warm-ups then count aside, see [`Self::warm_up`]).
    counting: bool,
    /// Whether a warm-up request was sent (one per server, whatever its answer).
    warm_up_sent: bool,
}

impl ForkServer {
    /// Starts qemu on the loader with `opts`' cpu, argv[0] and environment, and the cost
    /// plugin (counting nothing of interest until a child asks) when `plugin` is given.
    pub fn start(qemu: &Qemu, plugin: Option<&Path>, opts: &RunOptions) -> Result<ForkServer, ServerError> {
        let loader = target_program(&LOADER).map_err(|e| ServerError::Build(e.to_string()))?;
        let scratch = tempfile::Builder::new().prefix("harness-fork-server-").tempdir().map_err(ServerError::Start)?;
        let mut run_opts = RunOptions { extra_args: Vec::new(), ..opts.clone() };
        if let Some(plugin) = plugin {
            let idle = PluginConfig::new(scratch.path().join("loader.counts"), ProgramRanges::new([]));
            let option = sysy_cost_model::plugin_option(plugin, &idle)
                .map_err(|e| ServerError::Start(io::Error::other(e.to_string())))?;
            run_opts.extra_args = vec!["-plugin".into(), option.into()];
        }
        super::no_core_dumps().map_err(ServerError::Start)?;
        let log = std::fs::File::create(scratch.path().join("server.stderr")).map_err(ServerError::Start)?;
        let mut process = Command::new(qemu.binary())
            .args(qemu.args(&loader, &run_opts))
            .env_clear()
            .envs(opts.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .map_err(ServerError::Start)?;
        let requests = process.stdin.take().expect("piped stdin");
        let answers = process.stdout.take().expect("piped stdout");
        Ok(ForkServer { process, requests, answers, pending: Vec::new(), scratch, counting: plugin.is_some(), warm_up_sent: false })
    }

    /// Runs `exe` on `stdin` for at most `timeout`, counting into a fresh file with
    /// `counts` when given (its `out` is the file to read afterwards).
    pub fn run(
        &mut self,
        exe: &Path,
        stdin: &[u8],
        counts: Option<&PluginConfig>,
        timeout: Duration,
    ) -> Result<Served, ServerError> {
        let exe = std::path::absolute(exe).map_err(|e| ServerError::Protocol(format!("{}: {e}", exe.display())))?;
        let stdin_path = self.scratch_file("stdin", stdin)?;
        let stdout_path = self.scratch.path().join("stdout");
        let stderr_path = self.scratch.path().join("stderr");
        let config_path = match counts {
            Some(config) => {
                let args = config.to_args().map_err(|e| ServerError::Protocol(e.to_string()))?;
                Some(self.scratch_file("counts.args", args.join("\n").as_bytes())?)
            }
            None => None,
        };
        let mut fields: Vec<OsString> = vec![exe.into(), stdin_path.into(), stdout_path.clone().into(), stderr_path.into()];
        fields.push(config_path.map_or_else(|| "-".into(), Into::into));
        fields.push(timeout.as_secs().saturating_add(1).to_string().into());
        let Some(mut line) = request_line(&fields) else {
            return Ok(Served::Unloadable(format!("{fields:?} cannot be sent to the loader")));
        };
        line.push(b'\n');

        let start = Instant::now();
        let deadline = start + timeout;
        self.requests.write_all(&line).map_err(|e| self.broken(format!("request: {e}")))?;
        let first = self.answer(deadline + ANSWER_GRACE)?;
        let pid = match words(&first)[..] {
            ["pid", pid] => pid.parse::<libc::pid_t>().map_err(|_| self.broken(format!("answer `{first}`")))?,
            ["unloadable", stage, error] => return Ok(Served::Unloadable(unloadable(stage, error))),
            _ => return Err(self.broken(format!("answer `{first}`"))),
        };
        let (last, timed_out) = match self.answer_by(deadline)? {
            Some(line) => (line, false),
            None => {
                // SAFETY: kill(2) on the child the loader just named; the loader answers before
                // it reaps the child, and it has not answered, so the pid is still that child's.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                (self.answer(Instant::now() + ANSWER_GRACE)?, true)
            }
        };
        let wall = start.elapsed();
        let status = match words(&last)[..] {
            _ if timed_out => RunStatus::TimedOut,
            ["status", raw] => wait_status(raw.parse().map_err(|_| self.broken(format!("answer `{last}`")))?),
            ["unloadable", stage, error] => return Ok(Served::Unloadable(unloadable(stage, error))),
            _ => return Err(self.broken(format!("answer `{last}`"))),
        };
        let stdout = std::fs::read(&stdout_path).map_err(|source| ServerError::Scratch { path: stdout_path, source })?;
        Ok(Served::Ran { status, stdout, wall })
    }

    /// Whether this server has not been asked to warm up yet.
    pub fn needs_warm_up(&self) -> bool {
        !self.warm_up_sent
    }

    /// Asks the loader to translate `exe`'s runtime library once, in the server itself, and
    /// keep it mapped (see the loader's `warm_up`): `Ok(true)` when it did, `Ok(false)` when
    /// `exe` has no runtime at fixed addresses apart from its program, or the loader could not
    /// (the server serves as before), an error when the server broke.
    pub fn warm_up(&mut self, exe: &Path) -> Result<bool, ServerError> {
        let Some(functions) = runtime_functions(exe) else { return Ok(false) };
        let exe = std::path::absolute(exe).map_err(|e| ServerError::Protocol(format!("{}: {e}", exe.display())))?;
        let input = self.scratch_file("warm-up.stdin", WARM_UP_INPUT)?;
        let config = if self.counting {
            let config = PluginConfig {
                binary: Some(exe.clone()),
                ..PluginConfig::new(self.scratch.path().join("warm-up.counts"), ProgramRanges::new([]))
            };
            let args = config.to_args().map_err(|e| ServerError::Protocol(e.to_string()))?;
            Some(self.scratch_file("warm-up.args", args.join("\n").as_bytes())?)
        } else {
            None
        };
        let mut fields: Vec<OsString> = vec!["warm".into(), exe.into(), input.into()];
        fields.push(config.map_or_else(|| "-".into(), Into::into));
        fields.extend(functions.iter().map(|address| OsString::from(address.to_string())));
        let Some(mut line) = request_line(&fields) else { return Ok(false) };
        line.push(b'\n');
        self.warm_up_sent = true;
        self.requests.write_all(&line).map_err(|e| self.broken(format!("warm-up request: {e}")))?;
        let answer = self.answer(Instant::now() + WARM_UP_LIMIT)?;
        match words(&answer)[..] {
            ["warmed", _] => Ok(true),
            ["unwarmed", _, _] => Ok(false),
            _ => Err(self.broken(format!("warm-up answer `{answer}`"))),
        }
    }

    /// What the server and its children wrote to stderr (qemu's and the plugin's messages;
    /// the last child's program stderr), for error reports.
    pub fn messages(&self) -> String {
        let read = |name: &str| std::fs::read(self.scratch.path().join(name)).unwrap_or_default();
        let mut text = String::from_utf8_lossy(&read("server.stderr")).into_owned();
        text.push_str(&String::from_utf8_lossy(&read("stderr")));
        text
    }

    fn scratch_file(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, ServerError> {
        let path = self.scratch.path().join(name);
        std::fs::write(&path, bytes).map_err(|source| ServerError::Scratch { path: path.clone(), source })?;
        Ok(path)
    }

    /// The next answer line; the deadline passing is a broken server.
    fn answer(&mut self, deadline: Instant) -> Result<String, ServerError> {
        self.answer_by(deadline)?.ok_or_else(|| self.broken("no answer".to_string()))
    }

    /// The next answer line, or `None` if none came by `deadline`.
    fn answer_by(&mut self, deadline: Instant) -> Result<Option<String>, ServerError> {
        loop {
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                return Ok(Some(String::from_utf8_lossy(&line[..end]).into_owned()));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let mut poll = libc::pollfd { fd: self.answers.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            let millis = libc::c_int::try_from(left.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
            // SAFETY: one valid pollfd for the duration of the call.
            let ready = unsafe { libc::poll(&mut poll, 1, millis) };
            if ready < 0 {
                let error = io::Error::last_os_error();
                if error.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(self.broken(format!("poll: {error}")));
            }
            if ready == 0 {
                continue;
            }
            let mut chunk = [0u8; 256];
            // SAFETY: reading into a local buffer of the given length.
            let got = unsafe { libc::read(poll.fd, chunk.as_mut_ptr().cast(), chunk.len()) };
            match got {
                n if n > 0 => self.pending.extend_from_slice(&chunk[..n as usize]),
                0 => return Err(self.broken("the loader exited".to_string())),
                _ => {
                    let error = io::Error::last_os_error();
                    if error.kind() != io::ErrorKind::Interrupted {
                        return Err(self.broken(format!("read: {error}")));
                    }
                }
            }
        }
    }

    fn broken(&self, what: String) -> ServerError {
        let messages = self.messages();
        let messages = messages.trim();
        if messages.is_empty() {
            ServerError::Protocol(what)
        } else {
            ServerError::Protocol(format!("{what} (stderr: {messages})"))
        }
    }
}

impl Drop for ForkServer {
    fn drop(&mut self) {
        // The loader exits at the end of its input, but a server dropped mid-run (a broken
        // one) may have a child; its children are killed with it by nobody, so the CPU limit
        // ends them.
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// The fields joined by tabs, or `None` if a field is empty or holds a tab, newline or NUL.
fn request_line(fields: &[OsString]) -> Option<Vec<u8>> {
    let mut line = Vec::new();
    for (i, field) in fields.iter().enumerate() {
        let bytes = field.as_encoded_bytes();
        if bytes.is_empty() || bytes.iter().any(|&b| b == b'\t' || b == b'\n' || b == 0) {
            return None;
        }
        if i > 0 {
            line.push(b'\t');
        }
        line.extend_from_slice(bytes);
    }
    Some(line)
}

/// The runtime functions a warm-up calls, in the order the loader expects their addresses
/// (`sink_flush` is the runtime's own, which its exit path calls).
const WARMED_FUNCTIONS: [&str; 14] = [
    "putint", "putch", "putarray", "putfloat", "putfarray", "putf", "getint", "getch", "getarray", "getfloat",
    "getfarray", "_sysy_starttime", "_sysy_stoptime", "sink_flush",
];

/// What the warm-up's input functions read: numbers, characters, an array and floats of the
/// forms programs (generated ones in particular) read, then the end of the input.
/// In the order the loader reads: four getint, two getch, getarray, eight getfloat, getfarray.
const WARM_UP_INPUT: &[u8] =
    b"12 -34 +5 7ab\n3 1 -2 3\n1.5 -0x1.bap+8 -445.61 -9.125 0x1.ffbae2p+8 123456.789 0.1 2.5e+3\n2 0.25 1e3\n";

/// How long a warm-up may take (it runs a few hundred thousand guest instructions).
const WARM_UP_LIMIT: Duration = Duration::from_secs(30);

/// The addresses of [`WARMED_FUNCTIONS`] in `exe` (0 for one it lacks), when its runtime
/// library sits in a read+execute segment of its own, the first one, apart from the
/// program's code (the in-process linker's layout); `None` otherwise.
fn runtime_functions(exe: &Path) -> Option<Vec<u64>> {
    use object::{Object as _, ObjectSegment as _, ObjectSymbol as _, SegmentFlags};
    let bytes = std::fs::read(exe).ok()?;
    let file = object::File::parse(bytes.as_slice()).ok()?;
    let runtime_text = file.segments().find(|segment| matches!(segment.flags(), SegmentFlags::Elf { p_flags, .. } if p_flags.0 == 5))?;
    let (start, end) = (runtime_text.address(), runtime_text.address() + runtime_text.file_range().1);
    let address_of = |name: &str| {
        let function = |s: &object::Symbol<'_, '_>| s.is_definition() && s.kind() == object::SymbolKind::Text && s.name() == Ok(name);
        let mut found = file.symbols().filter(function);
        // A local name must be unique to be trusted.
        match (found.next(), found.next()) {
            (Some(symbol), None) => Some(symbol.address()),
            _ => None,
        }
    };
    let program_begin =
        file.symbols().find(|s| s.name() == Ok(sysy_cost_model::elf::PROG_BEGIN_SYMBOL)).map(|s| s.address())?;
    if (start..end).contains(&program_begin) {
        return None;
    }
    let functions: Vec<u64> = WARMED_FUNCTIONS.iter().map(|name| address_of(name).unwrap_or(0)).collect();
    let inside = |address: &u64| *address == 0 || (start..end).contains(address);
    (functions.iter().all(inside) && functions.iter().any(|&a| a != 0)).then_some(functions)
}

fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

fn unloadable(stage: &str, error: &str) -> String {
    let stage = match stage {
        "0" => "request",
        "1" => "opening stdin",
        "2" => "opening stdout",
        "3" => "opening stderr",
        "4" => "opening the executable",
        "5" => "reading the ELF header",
        "6" => "checking the segments",
        "7" => "placing a segment",
        "8" => "reading a segment",
        "9" => "opening the counts configuration",
        other => other,
    };
    format!("the fork server's loader failed {stage} (error {error})")
}

/// A Linux wait status as the loader's `wait4` returned it.
fn wait_status(raw: i32) -> RunStatus {
    match raw & 0x7f {
        0 => RunStatus::Exited(((raw >> 8) & 0xff) as u8),
        signal => RunStatus::Signaled(signal),
    }
}

/// Whether the loader can run `exe`: a 32-bit little-endian ARM static executable made only
/// of loadable segments (and the stack and unwind-index notes) below the loader. Anything
/// else (a glibc executable has TLS, say) is run the single way without asking.
pub fn servable(exe: &Path) -> bool {
    fn check(exe: &Path) -> io::Result<bool> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = std::fs::File::open(exe)?;
        let mut header = [0u8; 52];
        file.read_exact(&mut header)?;
        let half = |at: usize| u16::from_le_bytes([header[at], header[at + 1]]);
        let word = |bytes: &[u8], at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        let elf32_arm_exec = header[..4] == *b"\x7fELF" && header[4] == 1 && header[5] == 1 && half(16) == 2 && half(18) == 40;
        if !elf32_arm_exec || half(42) != 32 || half(44) > 16 {
            return Ok(false);
        }
        let mut headers = vec![0u8; 32 * usize::from(half(44))];
        file.seek(SeekFrom::Start(u64::from(word(&header, 28))))?;
        file.read_exact(&mut headers)?;
        Ok(headers.chunks(32).all(|ph| match word(ph, 0) {
            1 => u64::from(word(ph, 8)) + u64::from(word(ph, 20)) < LOADER_ADDRESS,
            0x6474_e551 | 0x7000_0001 => true,
            _ => false,
        }))
    }
    check(exe).unwrap_or(false)
}

/// Idle servers, shared by the clones of one [`super::Runner`]: a run takes one (or starts
/// one) and gives it back, so there are as many servers as runs at the same time.
#[derive(Debug, Default)]
pub struct ServerPool {
    idle: Mutex<Vec<ForkServer>>,
    /// Set when a server cannot be started; every run is then made the single way.
    unavailable: AtomicBool,
    /// Runs served (the program ran in a server's child), for reports and tests.
    served: AtomicU64,
    /// Set when a server first failed (said once on stderr: a server failing over and over
    /// would silently make every run a fresh qemu, at several times the cost).
    failed: AtomicBool,
    /// Set when a warm-up broke its server: later servers serve without warming up.
    no_warm_up: AtomicBool,
}

impl ServerPool {
    /// Runs `exe` on an idle server (one is started if none is idle). `None`: the run was not
    /// served and must be made the single way (the reason is dropped: the single run will
    /// say what is wrong if anything is).
    pub fn run(
        &self,
        qemu: &Qemu,
        plugin: Option<&Path>,
        opts: &RunOptions,
        exe: &Path,
        stdin: &[u8],
        counts: Option<&PluginConfig>,
    ) -> Option<Served> {
        if self.unavailable.load(Ordering::Relaxed) || !servable(exe) {
            return None;
        }
        let taken = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut server = match taken {
            Some(server) => server,
            None => match ForkServer::start(qemu, plugin, opts) {
                Ok(server) => server,
                Err(error) => {
                    if !self.unavailable.swap(true, Ordering::Relaxed) {
                        eprintln!("warning: {error}; running every executable in its own qemu");
                    }
                    return None;
                }
            },
        };
        if server.needs_warm_up() && !self.no_warm_up.load(Ordering::Relaxed)
            && let Err(error) = server.warm_up(exe)
        {
            if !self.no_warm_up.swap(true, Ordering::Relaxed) {
                eprintln!("warning: {error}; fork servers no longer warm the runtime up");
            }
            return None;
        }
        // A server that failed is dropped (killed); the next run starts a new one.
        let served = match server.run(exe, stdin, counts, opts.timeout) {
            Ok(served) => served,
            Err(error) => {
                if !self.failed.swap(true, Ordering::Relaxed) {
                    eprintln!("warning: {error}; the server is replaced and this run made in its own qemu");
                }
                return None;
            }
        };
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).push(server);
        if matches!(served, Served::Ran { .. }) {
            self.served.fetch_add(1, Ordering::Relaxed);
        }
        Some(served)
    }

    /// How many runs ran in a server's child so far.
    pub fn served(&self) -> u64 {
        self.served.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_statuses_decode_as_linux_encodes_them() {
        assert_eq!(wait_status(0), RunStatus::Exited(0));
        assert_eq!(wait_status(14 << 8), RunStatus::Exited(14));
        assert_eq!(wait_status(11), RunStatus::Signaled(11));
        assert_eq!(wait_status(0x80 | 6), RunStatus::Signaled(6), "a core-dump bit is not the signal");
    }

    /// A server that dies between runs costs that one run its service (it is made the single
    /// way) and is replaced for the next.
    #[test]
    fn a_dead_server_is_replaced() {
        let Ok(qemu) = Qemu::locate() else { return };
        if sysyc::toolchain::arm_gcc().is_err() {
            return;
        }
        let subject = crate::subject::Subject::parse("p.sy", "int main() { putint(7); return 3; }", b"").expect("parses");
        let config = sysyc::config::Config::default();
        let module = crate::steps::lower(&subject).expect("lowers");
        let asm = crate::steps::select(&module, &config).expect("compiles");
        let exe = crate::steps::link(&asm, sysyc::runtime::library::Assembler::InProcess).expect("links");
        let pool = ServerPool::default();
        let opts = RunOptions::default();
        let run = || pool.run(&qemu, None, &opts, &exe.path, b"", None);
        assert!(matches!(run(), Some(Served::Ran { status: RunStatus::Exited(3), .. })));
        for server in pool.idle.lock().expect("pool").iter_mut() {
            server.process.kill().expect("kill the server");
            server.process.wait().expect("reap it");
        }
        assert!(run().is_none(), "the dead server cannot serve");
        assert!(pool.failed.load(Ordering::Relaxed));
        match run() {
            Some(Served::Ran { status, stdout, .. }) => assert_eq!((status, stdout.as_slice()), (RunStatus::Exited(3), b"7".as_slice())),
            other => panic!("a new server serves: {other:?}"),
        }
        assert_eq!(pool.served(), 2);
    }

    #[test]
    fn only_plain_static_images_are_servable() {
        let dir = tempfile::tempdir().expect("tempdir");
        let elf = |phdrs: &[(u32, u32, u32)]| {
            let mut bytes = vec![0u8; 52];
            bytes[..6].copy_from_slice(b"\x7fELF\x01\x01");
            bytes[16..18].copy_from_slice(&2u16.to_le_bytes());
            bytes[18..20].copy_from_slice(&40u16.to_le_bytes());
            bytes[28..32].copy_from_slice(&52u32.to_le_bytes());
            bytes[42..44].copy_from_slice(&32u16.to_le_bytes());
            bytes[44..46].copy_from_slice(&(phdrs.len() as u16).to_le_bytes());
            for &(kind, vaddr, memsz) in phdrs {
                let mut ph = [0u8; 32];
                ph[0..4].copy_from_slice(&kind.to_le_bytes());
                ph[8..12].copy_from_slice(&vaddr.to_le_bytes());
                ph[20..24].copy_from_slice(&memsz.to_le_bytes());
                bytes.extend(ph);
            }
            bytes
        };
        let check = |name: &str, bytes: Vec<u8>| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).expect("write");
            servable(&path)
        };
        assert!(check("plain", elf(&[(1, 0x10000, 0x4000), (1, 0x15000, 0x2000), (0x6474_e551, 0, 0)])));
        assert!(!check("tls", elf(&[(1, 0x10000, 0x4000), (7, 0x20000, 8)])), "PT_TLS needs a C library");
        assert!(!check("interp", elf(&[(3, 0, 0), (1, 0x10000, 0x4000)])), "dynamic executables need ld.so");
        assert!(!check("high", elf(&[(1, 0x10000, 0x4000), (1, 0x20000, 0xe000_0000)])), "reaches the loader");
        assert!(!check("short", b"\x7fELF".to_vec()));
        let mut not_arm = elf(&[(1, 0x10000, 0x4000)]);
        not_arm[18] = 3;
        assert!(!check("x86", not_arm));
    }
}
