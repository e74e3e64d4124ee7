//! Crash isolation: the campaign survives a compiler that takes the process down, and
//! records the crash like any other failure.
//!
//! # Why
//! The compiler runs in-process (no process start per configuration; see [`super::check`])
//! and its panics are caught per configuration. A stack overflow in a recursive pass or an
//! `abort` cannot be caught: it kills the process, and with it the campaign.
//!
//! # Design
//! * **Supervisor.** `harness campaign` (without `--in-process`) is a thin supervisor: it
//!   resolves the options, creates the campaign directory, then runs the real campaign as a
//!   child — the same executable with `campaign --resume DIR` and [`CHILD_ENV`] set — and
//!   waits. One process start per session; the compiler still runs in-process in the child.
//! * **Journal.** Before each step that runs compiler code (the front end and truth of a
//!   program, one configuration's compile/interpret/run, the triage of a new failure), a
//!   worker writes `program<TAB>step` to its own file `journal/worker-<i>` in the campaign
//!   directory, and empties it when the program is done. Plain writes, no fsync: a process
//!   killed by a signal loses nothing the kernel already has. Each write overwrites the
//!   file in place, padded to a fixed width ([`stamp`]): truncating would free the file's
//!   block, and on a disk file system mounted with `discard` (ext4 here) the truncating
//!   `open` waits for the device, 120 µs against 3.5 µs in place, about ten times per
//!   program, with the worker's core idle meanwhile.
//! * **Crash.** When the child dies by a signal other than an interruption (SIGINT, SIGTERM,
//!   SIGHUP), the supervisor reads the journal. One pair in flight: it is the culprit; the
//!   supervisor appends it to `crashed.txt` (`program<TAB>step<TAB>signal`) and restarts the
//!   child with resume. Several pairs in flight (`--jobs` > 1): the culprit is unknown, so
//!   nothing is blamed; the next session replays the unfinished programs up to the highest
//!   one in flight with one worker, where a crash names exactly one pair, then the campaign
//!   goes on with all workers.
//! * **Resume.** The records only hold finished programs, so the crashed program is checked
//!   again, but a configuration listed in `crashed.txt` is not run: it becomes a row of kind
//!   `compiler-crash` (oracle `pipeline`), saved in the failure corpus with a reproduction
//!   command that runs the whole compiler. A crashed front end discards the program; a
//!   crashed triage is not repeated (`triage.json` says so). `compiler-crash` failures are
//!   never triaged: triage compiles in-process and would die the same way.
//! * **Hang.** A step that hangs (a pass that never reaches its fixpoint) kills nothing,
//!   so the supervisor also watches the journal: a worker's entry older than the step limit
//!   (`--step-limit`, default [`DEFAULT_STEP_LIMIT`] or four run time limits, whichever is
//!   longer; a step's own runs are bounded by the run time limit) names the culprit exactly,
//!   even with several workers. The supervisor appends it to `crashed.txt` with the cause
//!   `hang after N s`, kills the child's process group and restarts it; on resume the pair
//!   is a row of kind `compiler-hang`. Triage, which runs for long, re-stamps its entry
//!   before each check of a candidate ([`Heartbeat`], from whichever thread runs the check),
//!   so only a single check is timed.
//! * **Memory.** The child runs under a data limit (`RLIMIT_DATA`, `--memory-limit`, default
//!   [`default_memory_limit`]), inherited by every qemu run it starts: a compiler step that
//!   allocates without bound fails an allocation and aborts (SIGABRT), which is a crash as
//!   above, instead of taking the machine's memory (and the OOM killer's pick) with it.
//! * **Termination.** Every restart after a crash adds a pair to `crashed.txt` that is never
//!   run again, so each session gets further; restarts are capped ([`MAX_CRASHES`]) all the
//!   same. A crash with nothing in flight (the harness itself) ends the campaign with an
//!   error: repeating it would crash the same way.
//! * **Ctrl-C.** The child runs in its own process group, so a terminal's Ctrl-C reaches the
//!   supervisor only, which forwards each SIGINT to the child: the child finishes the
//!   programs in progress and writes the summary (a second Ctrl-C quits at once), exactly as
//!   without the supervisor. The child asks the kernel to kill it if the supervisor dies
//!   (`PR_SET_PDEATHSIG`), so `kill -9` of the supervisor stops both, and `--resume`
//!   continues as before.
//!
//! Each session writes `summary.md` at its end, so the last one's summary covers the whole
//! campaign's records, its session figures (checks/s) the last session only.

use sysy_check::executor::watch::Watch;
use sysy_check::failure::{Failure, Stage};
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::cell::RefCell;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, SystemTime};

/// Set (to `1`) in the environment of the campaign child.
pub const CHILD_ENV: &str = "HARNESS_CAMPAIGN_CHILD";
/// The journal step of a program's truth and front end (before any configuration).
pub const FRONT_END: &str = "front-end";
/// The journal step of the data-flow solver agreement check (after the configurations).
pub const ANALYSIS: &str = "analysis";
/// The journal step of the triage of a program's new failures.
pub const TRIAGE: &str = "triage";
/// Restarts after crashes per supervisor run.
pub const MAX_CRASHES: u32 = 100;
/// The shortest default step limit (see the module documentation).
pub const DEFAULT_STEP_LIMIT: Duration = Duration::from_secs(60);
/// The cause column of `crashed.txt` for a step the watchdog stopped starts with this.
pub const HANG: &str = "hang";
/// How often the supervisor looks at the child and the journal.
const POLL: Duration = Duration::from_millis(200);

/// The step limit for runs limited to `run_timeout` each: [`DEFAULT_STEP_LIMIT`] or four
/// run limits (a step runs the IR interpreter and qemu, each bounded by it).
pub fn default_step_limit(run_timeout: Duration) -> Duration {
    DEFAULT_STEP_LIMIT.max(run_timeout * 4)
}

/// Half the physical memory, at least 2 GiB (a qemu run alone reserves about 1 GiB of
/// translation buffer, which counts as data).
pub fn default_memory_limit() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let (pages, page_size) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    let physical = u64::try_from(pages).unwrap_or(0).saturating_mul(u64::try_from(page_size).unwrap_or(0));
    (physical / 2).max(2 << 30)
}

/// Whether a `crashed.txt` cause is a hang (else it names a signal).
pub fn is_hang(cause: &str) -> bool {
    cause.starts_with(HANG)
}

thread_local! {
    /// This thread's journal file and entry while a step is in flight (for [`Heartbeat`]).
    static CURRENT: RefCell<Option<(PathBuf, String)>> = const { RefCell::new(None) };
}

/// A worker's journal entry as a handle that any thread can re-stamp: the step is making
/// progress (one check of a long triage is done).
///
/// Taken on the worker thread that entered the step and handed to the code it runs: triage
/// checks its reduction candidates on the rayon pool, so the thread that finishes a check
/// is often another worker's (re-stamping that thread's own entry would leave the triaging
/// worker's entry to go stale, and blame a long triage as a hang).
#[derive(Clone, Debug)]
pub struct Heartbeat {
    file: PathBuf,
    entry: String,
}

impl Heartbeat {
    /// The calling thread's entry; `None` outside a campaign worker's step.
    pub fn of_this_thread() -> Option<Heartbeat> {
        CURRENT.with(|current| current.borrow().as_ref().map(|(file, entry)| Heartbeat { file: file.clone(), entry: entry.clone() }))
    }

    /// Re-stamps the entry.
    pub fn beat(&self) {
        let _ = stamp(&self.file, &self.entry);
    }
}

/// A triage (or a hang probe) inside a journaled step: the step is entered and left around
/// it, so its checks only beat.
impl Watch for Heartbeat {
    fn enter(&self, _: &str) {}
    fn leave(&self) {}
    fn taken_down(&self, _: &str, _: Stage) -> Option<Failure> {
        None
    }
    fn beat(&self) {
        Heartbeat::beat(self);
    }
}

/// Bytes of a journal file: an entry, padded with spaces, then a newline.
const ENTRY_WIDTH: usize = 128;

/// Writes `entry` (empty: nothing in flight) as the whole content of the journal file at
/// `path`, in place: the file keeps its length ([`ENTRY_WIDTH`], more only for a longer
/// entry) and its block, so no write truncates it (see the module documentation). Readers
/// trim the padding; the write renews the file's modification time, which the watchdog
/// reads.
fn stamp(path: &Path, entry: &str) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let entry = entry.trim_end();
    let width = ENTRY_WIDTH.max(entry.len() + 1);
    let line = format!("{entry:<0$}\n", width - 1);
    let file = std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(path)?;
    file.write_all_at(line.as_bytes(), 0)?;
    if file.metadata()?.len() != width as u64 {
        file.set_len(width as u64)?;
    }
    Ok(())
}

/// True in the campaign child started by the supervisor.
pub fn is_child() -> bool {
    std::env::var_os(CHILD_ENV).is_some_and(|v| v == "1")
}

fn journal_dir(campaign: &Path) -> PathBuf {
    campaign.join("journal")
}

/// The per-worker record of what is in flight (see the module documentation).
pub struct Journal {
    dir: PathBuf,
}

impl Journal {
    /// Opens the journal of `campaign`, emptying what a previous session left.
    pub fn open(campaign: &Path) -> Result<Journal> {
        let dir = journal_dir(campaign);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).with_context(|| format!("clearing {}", dir.display()))?;
        }
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(Journal { dir })
    }

    fn file(&self) -> PathBuf {
        self.dir.join(format!("worker-{}", rayon::current_thread_index().unwrap_or(0)))
    }

    /// Notes that this worker is about to run `step` of `program`. Best effort: a journal
    /// that cannot be written only costs the attribution of a crash.
    pub fn enter(&self, program: u64, step: &str) {
        let (file, entry) = (self.file(), format!("{program}\t{step}"));
        let _ = stamp(&file, &entry);
        CURRENT.with(|current| *current.borrow_mut() = Some((file, entry)));
    }

    /// Notes that this worker runs no compiler code.
    pub fn leave(&self) {
        CURRENT.with(|current| *current.borrow_mut() = None);
        let _ = stamp(&self.file(), "");
    }
}

/// The (program, step) pairs in flight according to the journal of `campaign`, sorted.
pub fn in_flight(campaign: &Path) -> Vec<(u64, String)> {
    let Ok(entries) = std::fs::read_dir(journal_dir(campaign)) else { return Vec::new() };
    let mut pairs: Vec<(u64, String)> = entries
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .filter_map(|text| {
            let (program, step) = text.trim_end().split_once('\t')?;
            Some((program.parse().ok()?, step.to_string()))
        })
        .collect();
    pairs.sort();
    pairs
}

/// The oldest step in flight whose journal entry is older than `limit` at `now`: the
/// program, the step and its age.
pub fn overdue(campaign: &Path, limit: Duration, now: SystemTime) -> Option<(u64, String, Duration)> {
    let entries = std::fs::read_dir(journal_dir(campaign)).ok()?;
    entries
        .filter_map(|e| {
            let path = e.ok()?.path();
            let age = now.duration_since(std::fs::metadata(&path).ok()?.modified().ok()?).ok()?;
            if age <= limit {
                return None;
            }
            let text = std::fs::read_to_string(&path).ok()?;
            let (program, step) = text.trim_end().split_once('\t')?;
            Some((program.parse().ok()?, step.to_string(), age))
        })
        .max_by_key(|(_, _, age)| *age)
}

fn crashed_path(campaign: &Path) -> PathBuf {
    campaign.join("crashed.txt")
}

/// `crashed.txt`: the (program, step) pairs that killed the process, with the signal, or that
/// hung (cause `hang after N s`).
#[derive(Clone, Debug, Default)]
pub struct Crashed {
    pairs: BTreeMap<(u64, String), String>,
}

impl Crashed {
    /// Reads `crashed.txt` of `campaign` (none: no crashes). Malformed lines (a partial last
    /// line) are ignored.
    pub fn read(campaign: &Path) -> Result<Crashed> {
        let path = crashed_path(campaign);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Crashed::default()),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let pairs = text
            .lines()
            .filter_map(|line| {
                let mut cells = line.splitn(3, '\t');
                let program = cells.next()?.parse().ok()?;
                let step = cells.next()?.to_string();
                Some(((program, step), cells.next()?.to_string()))
            })
            .collect();
        Ok(Crashed { pairs })
    }

    /// How `step` of `program` took the process down (a signal name or a hang), if it did.
    pub fn get(&self, program: u64, step: &str) -> Option<&str> {
        self.pairs.get(&(program, step.to_string())).map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

/// Appends one crashed pair to `crashed.txt`.
fn record_crash(campaign: &Path, program: u64, step: &str, signal: &str) -> Result<()> {
    let path = crashed_path(campaign);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    file.write_all(format!("{program}\t{step}\t{signal}\n").as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", path.display()))
}

/// A signal's name (`SIGABRT`), or its number.
pub fn signal_name(signal: i32) -> String {
    sysy_check::qemu::signal_name(signal).map_or_else(|| format!("signal {signal}"), str::to_string)
}

/// The child's session: its extra arguments after `campaign --resume DIR`. Without a
/// program limit the child runs what is left of the campaign's own limits (saved in
/// `campaign.json`, with the time already used in `state.json`: see [`super::State`]).
pub struct Session {
    /// Worker threads.
    pub jobs: usize,
    /// Check program numbers below this one only, without a time limit (a replay).
    pub programs: Option<u64>,
}

/// How the supervisor starts a child: the arguments that do not change between sessions
/// (triage settings, `--previous`).
pub struct Supervisor {
    pub dir: PathBuf,
    pub jobs: usize,
    /// Arguments passed to every child as they are.
    pub fixed_args: Vec<OsString>,
    /// A journal entry older than this is a hang (see the module documentation).
    pub step_limit: Duration,
    /// The child's data limit in bytes (see the module documentation).
    pub memory_limit: u64,
}

/// How a child session ended.
enum SessionEnd {
    /// By itself: exited or killed by a signal.
    Status(ExitStatus),
    /// Killed by the watchdog: this step of this program made no progress.
    Hung { program: u64, step: String },
}

/// The process id of the running child (0: none), for the Ctrl-C handler.
static CHILD: AtomicI32 = AtomicI32::new(0);

impl Supervisor {
    /// Runs sessions until one ends other than by a crash; returns the exit code to end with.
    pub fn run(&self) -> Result<u8> {
        let interrupted = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&interrupted);
        ctrlc::set_handler(move || {
            flag.store(true, Ordering::SeqCst);
            let pid = CHILD.load(Ordering::SeqCst);
            if pid > 0 {
                // SAFETY: kill(2) with a pid we started; a stale pid at worst gets a signal
                // it already ignores (the child is reaped only after this is cleared).
                unsafe { libc::kill(pid, libc::SIGINT) };
            }
        })
        .context("installing the Ctrl-C handler")?;
        let mut crashes = 0u32;
        // After a crash with several pairs in flight: replay up to this program with one worker.
        let mut replay_below: Option<u64> = None;
        loop {
            let session = match replay_below {
                Some(n) => Session { jobs: 1, programs: Some(n) },
                None => Session { jobs: self.jobs, programs: None },
            };
            let status = match self.session(&session)? {
                SessionEnd::Status(status) => status,
                SessionEnd::Hung { program, step } => {
                    crashes += 1;
                    errln!(
                        "harness: program {program}, step {step} made no progress in {} s (a compiler hang); recorded, restarting",
                        self.step_limit.as_secs_f64()
                    );
                    if crashes >= MAX_CRASHES {
                        anyhow::bail!("{crashes} crashes and hangs in one run; stopping (continue with --resume {})", self.dir.display());
                    }
                    continue;
                }
            };
            if let Some(code) = status.code() {
                if replay_below.take().is_some() && !interrupted.load(Ordering::SeqCst) {
                    continue; // the replay is done: on with the whole campaign
                }
                return Ok(u8::try_from(code).unwrap_or(1));
            }
            let signal = status.signal().unwrap_or(0);
            if interrupted.load(Ordering::SeqCst) || [libc::SIGINT, libc::SIGTERM, libc::SIGHUP].contains(&signal) {
                errln!("harness: the campaign was stopped by {}; continue with --resume {}", signal_name(signal), self.dir.display());
                return Ok(130);
            }
            let name = signal_name(signal);
            let pairs = in_flight(&self.dir);
            match pairs.as_slice() {
                [] => anyhow::bail!(
                    "the campaign process died by {name} outside any compiler step; continue with --resume {}",
                    self.dir.display()
                ),
                [(program, step)] => {
                    crashes += 1;
                    record_crash(&self.dir, *program, step, &name)?;
                    errln!("harness: program {program}, step {step} killed the process ({name}); recorded, restarting");
                }
                several => {
                    let last = several.iter().map(|(p, _)| *p).max().unwrap_or(0);
                    errln!(
                        "harness: the process died by {name} with {} steps in flight; replaying programs up to {last} with one worker",
                        several.len()
                    );
                    crashes += 1;
                    replay_below = Some(last + 1);
                }
            }
            if crashes >= MAX_CRASHES {
                anyhow::bail!("{crashes} crashes in one run; stopping (continue with --resume {})", self.dir.display());
            }
        }
    }

    /// Starts one child session and waits for it, or kills it when a step hangs.
    fn session(&self, session: &Session) -> Result<SessionEnd> {
        let exe = std::env::current_exe().context("locating the harness executable")?;
        let mut command = Command::new(exe);
        command.arg("campaign").arg("--resume").arg(&self.dir).arg("--jobs").arg(session.jobs.to_string());
        if let Some(n) = session.programs {
            command.arg("--programs").arg(n.to_string());
        }
        command.args(&self.fixed_args).env(CHILD_ENV, "1").stdin(Stdio::null());
        let supervisor = std::process::id() as libc::pid_t;
        let memory_limit = self.memory_limit as libc::rlim_t;
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                // Own process group: a terminal's Ctrl-C reaches the supervisor, which
                // forwards it once.
                libc::setpgid(0, 0);
                // Die with the supervisor (and do not start if it is already gone).
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != supervisor {
                    libc::_exit(1);
                }
                // The soft limit only (within the hard one), so a lower limit set by the user
                // stands.
                let mut data = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
                if libc::getrlimit(libc::RLIMIT_DATA, &mut data) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                data.rlim_cur = data.rlim_cur.min(memory_limit).min(data.rlim_max);
                if libc::setrlimit(libc::RLIMIT_DATA, &data) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        // The previous session's entries are stale by now: the child starts a fresh journal,
        // and until it does the watchdog must not blame them again.
        let _ = std::fs::remove_dir_all(journal_dir(&self.dir));
        let mut child = command.spawn().context("starting the campaign process")?;
        let pid = child.id() as libc::pid_t;
        CHILD.store(pid, Ordering::SeqCst);
        let end = loop {
            if let Some(status) = child.try_wait().context("waiting for the campaign process")? {
                break SessionEnd::Status(status);
            }
            if let Some((program, step, _)) = overdue(&self.dir, self.step_limit, SystemTime::now()) {
                // Recorded first: a supervisor killed now still leaves the culprit behind.
                record_crash(&self.dir, program, &step, &format!("{HANG} after {} s", self.step_limit.as_secs_f64()))?;
                // SAFETY: kill(2) of the child's own process group (it called setpgid(0, 0)),
                // which also holds the qemu runs it started.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
                child.wait().context("waiting for the campaign process")?;
                break SessionEnd::Hung { program, step };
            }
            std::thread::sleep(POLL);
        };
        CHILD.store(0, Ordering::SeqCst);
        Ok(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_journal_and_crashed_txt_round_trip() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let journal = Journal::open(dir.path()).expect("journal");
        journal.enter(7, "abc123");
        assert_eq!(in_flight(dir.path()), vec![(7, "abc123".to_string())]);
        journal.leave();
        assert!(in_flight(dir.path()).is_empty());

        record_crash(dir.path(), 7, "abc123", "SIGABRT").expect("recorded");
        record_crash(dir.path(), 9, FRONT_END, "SIGSEGV").expect("recorded");
        // A partial last line (the supervisor killed while writing) is ignored.
        std::fs::OpenOptions::new()
            .append(true)
            .open(crashed_path(dir.path()))
            .and_then(|mut f| f.write_all(b"11\tdef"))
            .expect("appended");
        let crashed = Crashed::read(dir.path()).expect("read");
        assert_eq!(crashed.len(), 2);
        assert_eq!(crashed.get(7, "abc123"), Some("SIGABRT"));
        assert_eq!(crashed.get(9, FRONT_END), Some("SIGSEGV"));
        assert_eq!(crashed.get(11, "def"), None);
        assert!(!is_hang("SIGABRT"));
        assert_eq!(signal_name(libc::SIGABRT), "SIGABRT");
        assert_eq!(signal_name(64), "signal 64");
    }

    /// Entries overwrite the file in place: its length stays put (no truncation, which
    /// would free its block), and a short entry after a long one reads back exactly.
    #[test]
    fn journal_entries_overwrite_the_file_in_place() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let journal = Journal::open(dir.path()).expect("journal");
        let length = || std::fs::metadata(journal.file()).expect("journal file").len();
        journal.enter(12345, FRONT_END);
        assert_eq!(length(), ENTRY_WIDTH as u64);
        journal.leave();
        assert_eq!(length(), ENTRY_WIDTH as u64, "leaving keeps the length");
        assert!(in_flight(dir.path()).is_empty());
        let long = "x".repeat(ENTRY_WIDTH * 2);
        journal.enter(1, &long);
        assert_eq!(in_flight(dir.path()), vec![(1, long.clone())]);
        journal.enter(2, "abc");
        assert_eq!(in_flight(dir.path()), vec![(2, "abc".to_string())], "nothing of the long entry is left");
        assert_eq!(length(), ENTRY_WIDTH as u64);
    }

    #[test]
    fn the_watchdog_blames_the_stale_entry_and_a_heartbeat_freshens_it() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let journal = Journal::open(dir.path()).expect("journal");
        let limit = Duration::from_secs(60);
        let later = |secs| SystemTime::now() + Duration::from_secs(secs);
        journal.enter(3, "abc");
        assert_eq!(overdue(dir.path(), limit, SystemTime::now()), None, "a fresh step");
        let (program, step, age) = overdue(dir.path(), limit, later(90)).expect("stale after 90 s");
        assert_eq!((program, step.as_str()), (3, "abc"));
        assert!(age > limit);

        // A step that began long ago but beat just now is not overdue.
        let file = std::fs::read_dir(journal_dir(dir.path())).expect("journal dir").next().expect("one file").expect("entry").path();
        let old = SystemTime::now() - Duration::from_secs(600);
        std::fs::File::options().write(true).open(&file).and_then(|f| f.set_modified(old)).expect("back-dated");
        assert!(overdue(dir.path(), limit, SystemTime::now()).is_some(), "back-dated entry is stale");
        let heartbeat = Heartbeat::of_this_thread().expect("a step in flight");
        // Another thread beats for this worker (as triage's parallel candidate checks do).
        std::thread::scope(|scope| {
            scope.spawn(|| heartbeat.beat());
        });
        assert_eq!(overdue(dir.path(), limit, SystemTime::now()), None, "the heartbeat re-stamped it");
        assert_eq!(in_flight(dir.path()), vec![(3, "abc".to_string())], "with the same entry");

        // Nothing in flight: nothing to blame, and no heartbeat to take.
        journal.leave();
        assert!(Heartbeat::of_this_thread().is_none());
        assert_eq!(overdue(dir.path(), limit, later(600)), None);
        assert!(in_flight(dir.path()).is_empty());
        assert!(is_hang(&format!("{HANG} after 60 s")));
        assert_eq!(default_step_limit(Duration::from_secs(10)), DEFAULT_STEP_LIMIT);
        assert_eq!(default_step_limit(Duration::from_secs(30)), Duration::from_secs(120));
    }
}
