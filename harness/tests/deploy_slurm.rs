//! The Slurm recipe (`harness/deploy/slurm/`) on a real Slurm: a one-node cluster from
//! Debian's packages (munged, slurmctld, slurmd) in a scratch configuration of its own (its
//! slurm.conf, state, spool, munge key and socket, free ports, all under a temporary
//! directory), started here as root and stopped at the end whatever happens. One night of
//! four shards is submitted with `night.sh`, one task is requeued mid-run (`scontrol
//! requeue`) and must resume its shard, the merge job (afterany) runs once every task has
//! finished, and the merged rows must equal an unsharded campaign of the same programs
//! (`harness/deploy/compare-merged.py`, as `simulate-job.sh` checks the Kubernetes scripts).
//!
//! Skipped, saying why, without Slurm (`apt-get install slurm-wlm munge`, as `.ci/run` does),
//! without root (slurmd must start jobs as their user), python3 or the ARM tools. With
//! `SYSY_REQUIRE_SLURM` set (CI), a missing Slurm or root fails the test instead.

mod common;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const NIGHT: &str = "20260102";
const SHARDS: usize = 4;
const PROGRAMS: usize = 16;
/// The task requeued mid-run.
const REQUEUED: usize = 1;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

/// `program` on PATH or in the sbin directories (root's PATH may lack them under CI).
fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Why this machine cannot run the test, if it cannot.
fn missing_slurm() -> Option<String> {
    let missing: Vec<&str> = ["munged", "slurmctld", "slurmd", "sbatch", "scontrol", "squeue", "sinfo", "scancel"]
        .into_iter()
        .filter(|p| find_program(p).is_none())
        .collect();
    if !missing.is_empty() {
        return Some(format!("{} not installed (apt-get install slurm-wlm munge)", missing.join(", ")));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root: slurmd starts each job as its user, so it runs as root".into());
    }
    None
}

/// A port nothing listens on now (the kernel's choice; released for the daemon to bind).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("address").port()
}

fn short_hostname() -> String {
    let out = Command::new("hostname").arg("-s").output().expect("hostname runs");
    String::from_utf8(out.stdout).expect("utf-8").trim().to_string()
}

fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| format!("({}: {e})", path.display()));
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The scratch cluster: its daemons, in the order started.
struct ScratchSlurm {
    dir: PathBuf,
    conf: PathBuf,
    daemons: Vec<(&'static str, Child)>,
}

impl ScratchSlurm {
    fn start(dir: &Path) -> ScratchSlurm {
        let mut cluster = ScratchSlurm { dir: dir.to_path_buf(), conf: dir.join("slurm.conf"), daemons: Vec::new() };
        for sub in ["state", "spool", "log"] {
            std::fs::create_dir_all(dir.join(sub)).expect("mkdir");
        }
        // munged reaches its socket through every directory of its path.
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");

        // A key of its own: munge only checks that both sides share it (and that only its
        // owner can read it).
        let key = dir.join("munge.key");
        let mut bytes = vec![0u8; 1024];
        std::fs::File::open("/dev/urandom").and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes)).expect("random key");
        std::fs::write(&key, &bytes).expect("key");
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).expect("chmod key");
        let socket = dir.join("munge.sock");
        let mut munged = Command::new(find_program("munged").expect("munged"));
        // --force: run despite the warnings about a root-owned scratch directory.
        munged.arg("--foreground").arg("--force");
        for (option, file) in [("--key-file", "munge.key"), ("--socket", "munge.sock"), ("--pid-file", "munged.pid"), ("--seed-file", "munge.seed"), ("--log-file", "log/munged.log")] {
            munged.arg(format!("{option}={}", dir.join(file).display()));
        }
        cluster.spawn("munged", munged);
        cluster.wait_for("munged's socket", Duration::from_secs(20), || socket.exists().then_some(()));

        let host = short_hostname();
        let (controller_port, node_port) = (free_port(), free_port());
        let d = dir.display();
        let conf = format!(
            "# Scratch one-node cluster of harness/tests/deploy_slurm.rs\n\
             ClusterName=sysyc-test\n\
             SlurmctldHost={host}(127.0.0.1)\n\
             SlurmctldPort={controller_port}\n\
             SlurmdPort={node_port}\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             AuthType=auth/munge\n\
             CredType=cred/munge\n\
             # cred_expire also sets how long a requeued job waits before it may start again\n\
             # (default 120 s).\n\
             AuthInfo=socket={d}/munge.sock,cred_expire=10\n\
             StateSaveLocation={d}/state\n\
             SlurmdSpoolDir={d}/spool\n\
             SlurmctldPidFile={d}/slurmctld.pid\n\
             SlurmdPidFile={d}/slurmd.pid\n\
             SlurmctldLogFile={d}/log/slurmctld.log\n\
             SlurmdLogFile={d}/log/slurmd.log\n\
             # No cgroups (a container may not delegate them): processes tracked by parentage.\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             MpiDefault=none\n\
             SwitchType=switch/none\n\
             SelectType=select/cons_tres\n\
             SelectTypeParameters=CR_CPU\n\
             # Four CPUs on a smaller machine: the four shards run side by side, as on a cluster.\n\
             SlurmdParameters=config_overrides\n\
             ReturnToService=2\n\
             KillWait=5\n\
             # Finished jobs stay visible to scontrol for the assertions.\n\
             MinJobAge=3600\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs=4 RealMemory=4000 State=UNKNOWN\n\
             PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n"
        );
        std::fs::write(&cluster.conf, conf).expect("slurm.conf");
        let mut slurmctld = Command::new(find_program("slurmctld").expect("slurmctld"));
        slurmctld.arg("-D").arg("-i").arg("-f").arg(&cluster.conf);
        cluster.spawn("slurmctld", slurmctld);
        cluster.wait_for("slurmctld to answer", Duration::from_secs(60), || {
            cluster.command("scontrol").arg("ping").output().ok().filter(|o| String::from_utf8_lossy(&o.stdout).contains("UP")).map(|_| ())
        });
        let mut slurmd = Command::new(find_program("slurmd").expect("slurmd"));
        slurmd.arg("-D").arg("-f").arg(&cluster.conf);
        cluster.spawn("slurmd", slurmd);
        cluster.wait_for("the node to be idle", Duration::from_secs(60), || {
            (cluster.output("sinfo", &["-h", "-N", "-o", "%T"]).trim() == "idle").then_some(())
        });
        cluster
    }

    /// Starts a daemon in the foreground of its own process, its output in log/NAME.out;
    /// it gets SIGTERM if this test's thread dies before `drop` could stop it.
    fn spawn(&mut self, name: &'static str, mut command: Command) {
        let out = std::fs::File::create(self.dir.join(format!("log/{name}.out"))).expect("log file");
        command.stdin(Stdio::null()).stdout(out.try_clone().expect("dup")).stderr(out).env("SLURM_CONF", &self.conf);
        // SAFETY: prctl in the child between fork and exec, async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let child = command.spawn().unwrap_or_else(|e| panic!("starting {name}: {e}"));
        self.daemons.push((name, child));
    }

    /// A client command of this cluster.
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(find_program(program).unwrap_or_else(|| PathBuf::from(program)));
        c.env("SLURM_CONF", &self.conf);
        c
    }

    /// A client command's stdout (empty when it fails).
    fn output(&self, program: &str, args: &[&str]) -> String {
        self.command(program).args(args).output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default()
    }

    /// A job's state (`RUNNING`, `PENDING`, `COMPLETED`, ...), as slurmctld has it.
    fn job_state(&self, job: &str) -> String {
        let show = self.output("scontrol", &["show", "job", "-o", job]);
        show.split_whitespace().find_map(|f| f.strip_prefix("JobState=")).unwrap_or("").to_string()
    }

    /// Polls `ready` every half second until it yields a value; panics with the daemons' logs
    /// after `limit`.
    fn wait_for<T>(&self, what: &str, limit: Duration, mut ready: impl FnMut() -> Option<T>) -> T {
        let start = Instant::now();
        loop {
            if let Some(v) = ready() {
                return v;
            }
            if start.elapsed() > limit {
                let logs: Vec<String> = ["munged", "slurmctld", "slurmd"]
                    .iter()
                    .map(|n| format!("--- {n}:\n{}", tail(&self.dir.join(format!("log/{n}.out")), 15)))
                    .collect();
                panic!("waited {} s for {what}\n{}\n--- squeue:\n{}", limit.as_secs(), logs.join("\n"), self.output("squeue", &[]));
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

impl Drop for ScratchSlurm {
    /// Cancels every job (their processes belong to slurmstepd, not to the daemons), waits for
    /// them to go, then stops the daemons in reverse order: SIGTERM, and SIGKILL after 10 s.
    fn drop(&mut self) {
        if self.daemons.iter().any(|(n, _)| *n == "slurmctld") {
            let jobs = self.output("squeue", &["-h", "-o", "%i"]);
            if !jobs.trim().is_empty() {
                let _ = self.command("scancel").args(jobs.split_whitespace()).status();
                let start = Instant::now();
                while start.elapsed() < Duration::from_secs(30) && !self.output("squeue", &["-h", "-o", "%i"]).trim().is_empty() {
                    std::thread::sleep(Duration::from_millis(500));
                }
            }
        }
        while let Some((name, mut child)) = self.daemons.pop() {
            // SAFETY: kill(2) of a child we started and have not reaped.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let start = Instant::now();
            while matches!(child.try_wait(), Ok(None)) && start.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(100));
            }
            if matches!(child.try_wait(), Ok(None)) {
                eprintln!("note: {name} ignored SIGTERM for 10 s; killing it");
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}

/// The number after `label` in `text` ("array job 12 (..." → 12).
fn number_after(text: &str, label: &str) -> Option<String> {
    let rest = &text[text.find(label)? + label.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    (!digits.is_empty()).then_some(digits)
}

/// Data lines of a shard's programs.csv: the programs it has finished.
fn programs_finished(shard: &Path) -> usize {
    std::fs::read_to_string(shard.join("programs.csv")).map(|t| t.lines().count().saturating_sub(1)).unwrap_or(0)
}

#[test]
fn a_slurm_night_with_a_requeued_task_merges_to_the_unsharded_rows() {
    if let Some(why) = missing_slurm() {
        assert!(std::env::var_os("SYSY_REQUIRE_SLURM").is_none(), "SYSY_REQUIRE_SLURM is set but {why}");
        eprintln!("note: skipping the Slurm night: {why}");
        return;
    }
    if common::tools("Slurm night").is_none() {
        return;
    }
    if !Command::new("python3").arg("--version").output().is_ok_and(|o| o.status.success()) {
        eprintln!("note: skipping the Slurm night: no python3 (harness/deploy/compare-merged.py)");
        return;
    }
    let scratch = common::scratch();
    let cluster = ScratchSlurm::start(scratch.path());
    let results = scratch.path().join("results");
    let bin = Path::new(env!("CARGO_BIN_EXE_harness")).parent().expect("binary directory");
    let campaign_args = format!("--programs {PROGRAMS} --strategy o-levels --no-triage");

    let submitted = cluster
        .command("bash")
        .arg(repo().join("harness/deploy/slurm/night.sh"))
        .args(["--results", results.to_str().expect("utf-8"), "--night", NIGHT, "--shards", &SHARDS.to_string()])
        .args(["--cpus", "1", "--mem", "500M", "--time", "30", "--campaign-args", &campaign_args])
        .arg("--bin")
        .arg(bin)
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&submitted.stdout).into_owned();
    assert!(submitted.status.success(), "night.sh failed:\n{stdout}\n{}", String::from_utf8_lossy(&submitted.stderr));
    let array = number_after(&stdout, "array job ").unwrap_or_else(|| panic!("no array job id in: {stdout}"));
    let merge = number_after(&stdout, "merge job ").unwrap_or_else(|| panic!("no merge job id in: {stdout}"));
    eprintln!("slurm: {}", stdout.trim());

    // The merge waits for every task whatever its end, and each task has one CPU.
    let merge_job = cluster.output("scontrol", &["show", "job", "-o", &merge]);
    assert!(merge_job.contains(&format!("Dependency=afterany:{array}_*")), "{merge_job}");
    let task = cluster.output("scontrol", &["show", "job", "-o", &format!("{array}_0")]);
    assert!(task.contains("Requeue=1") && task.contains("NumCPUs=1"), "{task}");

    // Requeue the task once its shard has finished a program, well before it is done.
    let night_dir = results.join(format!("night-{NIGHT}"));
    let requeued = format!("{array}_{REQUEUED}");
    let shard = night_dir.join(format!("shard-{REQUEUED}"));
    let finished_before = cluster.wait_for("the task's first finished program", Duration::from_secs(300), || {
        let n = programs_finished(&shard);
        (n >= 1 && cluster.job_state(&requeued) == "RUNNING").then_some(n)
    });
    let requeue = cluster.command("scontrol").args(["requeue", &requeued]).output().expect("scontrol runs");
    assert!(requeue.status.success(), "scontrol requeue {requeued}: {}", String::from_utf8_lossy(&requeue.stderr));
    eprintln!("slurm: task {requeued} requeued after {finished_before} finished programs");

    let state = cluster.wait_for("the merge job to finish", Duration::from_secs(900), || {
        let s = cluster.job_state(&merge);
        matches!(s.as_str(), "COMPLETED" | "FAILED" | "CANCELLED" | "TIMEOUT" | "NODE_FAIL" | "OUT_OF_MEMORY").then_some(s)
    });
    let merge_log = std::fs::read_to_string(night_dir.join(format!("slurm/merge-{merge}.out"))).unwrap_or_default();
    assert_eq!(state, "COMPLETED", "merge job {merge}:\n{merge_log}");
    assert!(merge_log.contains(&format!("after array job {array}")), "{merge_log}");

    // The requeued task's output: both runs, the second one resuming the shard.
    let task_log = std::fs::read_to_string(night_dir.join(format!("slurm/shard-{REQUEUED}.out"))).expect("the task's output file");
    assert!(task_log.contains("DUE TO JOB REQUEUE"), "{task_log}");
    assert!(task_log.contains(", 1 CPUs,") && task_log.contains("requeued 1 times"), "{task_log}");
    let resumed_at: usize = number_after(&task_log, &format!("retry, resuming {} (", shard.display()))
        .unwrap_or_else(|| panic!("the requeued task did not resume its shard:\n{task_log}"))
        .parse()
        .expect("count");
    let per_shard = PROGRAMS.div_ceil(SHARDS);
    assert!((1..per_shard).contains(&resumed_at), "resumed after {resumed_at} of {per_shard} programs:\n{task_log}");
    for i in 0..SHARDS {
        let state = cluster.job_state(&format!("{array}_{i}"));
        assert_eq!(state, "COMPLETED", "task {array}_{i}:\n{}", tail(&night_dir.join(format!("slurm/shard-{i}.out")), 20));
    }
    let merged = night_dir.join("merged");
    assert!(merged.join("runs.csv.gz").is_file() && !merged.join("runs.csv").exists(), "the merge compacts runs.csv");
    assert!(merged.join("summary.md").is_file() && merged.join("failures.csv").is_file());

    // The same programs without shards, then row for row.
    let whole = scratch.path().join("whole");
    let unsharded = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["campaign", "--seed", NIGHT])
        .args(campaign_args.split_whitespace())
        .args(["--jobs", "2", "--out"])
        .arg(&whole)
        .output()
        .expect("harness runs");
    assert!(unsharded.status.success() || unsharded.status.code() == Some(1), "{}", String::from_utf8_lossy(&unsharded.stderr));
    let compared = Command::new("python3")
        .arg(repo().join("harness/deploy/compare-merged.py"))
        .arg(&merged)
        .arg(&whole)
        .arg(PROGRAMS.to_string())
        .output()
        .expect("python3 runs");
    let verdict = String::from_utf8_lossy(&compared.stdout);
    assert!(compared.status.success(), "{verdict}{}", String::from_utf8_lossy(&compared.stderr));
    assert!(verdict.contains(&format!("of {PROGRAMS} programs")), "{verdict}");
    eprintln!("slurm: merge job {merge} {state}: {}", verdict.trim());
    let _ = std::io::stderr().flush();
}
