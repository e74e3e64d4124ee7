//! The qemu fork server (`sysy_check::qemu::fork_server`) against single qemu runs: the same
//! executables, the same stdin, the same verdicts, stdout and every instruction count; the
//! runtime library it translates once and lends to every run; and what happens to runs it
//! cannot or should not serve.
//!
//! "Every count": the totals per class, program and runtime. Not the plugin's statistics of
//! the translations this process made (a served run inherits the runtime's blocks from the
//! server, so it translates fewer of them).

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use sysy_check::qemu::{CostMode, Run, RunStatus, Runner};
use sysy_cost_model::counts::ModeStats;
use sysyc::config::Config;
use sysyc::passes::OptLevel;
use sysyc::runtime::library::Assembler;

fn build(dir: &Path, name: &str, source: &str, level: OptLevel, assembler: Assembler) -> PathBuf {
    let subject = sysy_check::subject::Subject::parse(name, source, b"").expect("valid program");
    let module = sysy_check::steps::lower(&subject).expect("lowers");
    let config = Config::level(level);
    let (module, _) = sysy_check::steps::optimise(&module, &config, None).expect("optimises");
    let asm = sysy_check::steps::select(&module, &config).expect("compiles");
    let exe = sysy_check::steps::link(&asm, assembler).expect("links");
    let path = dir.join(format!("{name}-{level:?}"));
    std::fs::copy(&exe.path, &path).expect("keep the executable");
    path
}

fn runners() -> (Runner, Runner) {
    let served = Runner::new(CostMode::Measure).expect("runner").with_fork_servers(true);
    let single = Runner::new(CostMode::Measure).expect("runner").with_fork_servers(false);
    (served, single)
}

fn assert_same(what: &str, served: &Run, single: &Run) {
    assert_eq!(served.status, single.status, "{what}: status");
    assert_eq!(String::from_utf8_lossy(&served.stdout), String::from_utf8_lossy(&single.stdout), "{what}: stdout");
    let counts = |run: &Run| {
        run.cost.as_ref().map(|c| {
            let mut counts = c.counts.clone();
            counts.mode_stats = ModeStats { translations: 0, from_symbols: 0, from_heuristic: 0, heuristic_disagreements: 0, ..counts.mode_stats };
            counts
        })
    };
    assert_eq!(counts(served), counts(single), "{what}: counts");
}

/// Blocks the run translated itself (not inherited from the server).
fn translations(run: &Run) -> u64 {
    run.cost.as_ref().expect("counted").counts.mode_stats.translations
}

/// Every program of the language corpus (with its stdin) at -O0 and -O2: a served run and a
/// single run agree on everything, counts included, and the served ones really were served.
#[test]
fn served_runs_match_single_runs_in_output_status_and_every_count() {
    if !common::tools_with_plugin("served_runs_match_single_runs_in_output_status_and_every_count") {
        return;
    }
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/lang");
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .expect("corpus/lang")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sy"))
        .collect();
    sources.sort();
    assert!(sources.len() >= 15, "{} programs", sources.len());
    let dir = common::scratch();
    let (served, single) = runners();
    let mut runs = 0;
    for source in &sources {
        let name = source.file_stem().expect("stem").to_string_lossy().into_owned();
        let text = std::fs::read_to_string(source).expect("source");
        let stdin = std::fs::read(source.with_extension("in")).unwrap_or_default();
        for level in [OptLevel::O0, OptLevel::O2] {
            let exe = build(dir.path(), &name, &text, level, Assembler::InProcess);
            let a = served.run(&exe, &stdin, Duration::from_secs(30)).expect("served run");
            let b = single.run(&exe, &stdin, Duration::from_secs(30)).expect("single run");
            assert_same(&format!("{name} at {level:?}"), &a, &b);
            assert!(a.cost.as_ref().is_some_and(|c| c.counts.complete && c.counts.program.total() > 0), "{name}");
            runs += 1;
        }
    }
    assert_eq!(served.served_runs(), runs, "every run was served");
    assert_eq!(single.served_runs(), 0);
}

/// A crash (stack overflow), a loop past its timeout and a non-zero exit are reported as
/// a single run reports them, and the server goes on serving afterwards.
#[test]
fn served_crashes_timeouts_and_exit_statuses_are_reported_like_single_runs() {
    if !common::tools_with_plugin("served_crashes_timeouts_and_exit_statuses_are_reported_like_single_runs") {
        return;
    }
    let dir = common::scratch();
    let (served, single) = runners();
    let crash = build(
        dir.path(),
        "overflow",
        "int f(int n) { int a[4096]; a[n % 4096] = n; return f(n + 1) + a[(n * 7) % 4096]; } int main() { putint(1); return f(0); }",
        OptLevel::O0,
        Assembler::InProcess,
    );
    let a = served.run(&crash, b"", Duration::from_secs(30)).expect("served run");
    let b = single.run(&crash, b"", Duration::from_secs(30)).expect("single run");
    assert_eq!(a.status, RunStatus::Signaled(libc::SIGSEGV));
    assert_same("stack overflow", &a, &b);

    let exits = build(dir.path(), "exits", "int main() { putint(getint() * 2); return 300; }", OptLevel::O2, Assembler::InProcess);
    let a = served.run(&exits, b"21", Duration::from_secs(30)).expect("served run");
    assert_eq!((a.status, a.stdout.as_slice()), (RunStatus::Exited(44), b"42".as_slice()));
    assert_same("exit status", &a, &single.run(&exits, b"21", Duration::from_secs(30)).expect("single run"));

    let spin = build(dir.path(), "spin", "int main() { int i = 0; while (1) { i = i + 1; } return i; }", OptLevel::O0, Assembler::InProcess);
    let a = served.run(&spin, b"", Duration::from_secs(1)).expect("served run");
    assert_eq!(a.status, RunStatus::TimedOut);
    assert!(a.cost.as_ref().is_some_and(|c| !c.counts.complete && c.counts.program.total() > 0), "partial counts");

    // The server that saw the crash and the kill still serves, with the same counts as before.
    let again = served.run(&exits, b"21", Duration::from_secs(30)).expect("served run");
    assert_same("after a crash and a timeout", &again, &single.run(&exits, b"21", Duration::from_secs(30)).expect("single run"));
    assert_eq!(served.served_runs(), 4);
}

/// A glibc executable (TLS, a C library's start-up) is not the loader's business: it runs the
/// single way through the same runner, with the same results.
#[test]
fn executables_the_loader_cannot_take_run_the_single_way() {
    if !common::tools_with_plugin("executables_the_loader_cannot_take_run_the_single_way") {
        return;
    }
    let dir = common::scratch();
    let (served, single) = runners();
    let exe = build(dir.path(), "glibc", "int main() { putint(getint() + 1); putch(10); return 0; }", OptLevel::O2, Assembler::Gnu);
    assert!(!sysy_check::qemu::fork_server::servable(&exe));
    let a = served.run(&exe, b"41", Duration::from_secs(30)).expect("run");
    assert_eq!(a.stdout, b"42\n");
    assert_same("glibc executable", &a, &single.run(&exe, b"41", Duration::from_secs(30)).expect("single run"));
    assert_eq!(served.served_runs(), 0);
}

/// Uses every runtime function the server warms up, with input.
const EVERY_RUNTIME_FUNCTION: &str = "int a[16]; float f[16];\n\
    int main() { int n = getint(); int c = getch(); int m = getarray(a); float x = getfloat(); int k = getfarray(f);\n\
    starttime(); putint(n); putch(c); putarray(m, a); putfloat(x); putfarray(k, f);\n\
    putf(\"%d %c %f|\\n\", n, c, x); stoptime(); return n + m + k; }";

/// The runtime the server translated once, in itself, and every child inherits: counted as if
/// each run had translated it (a block inherited from the server counts in the child's file,
/// exactly once per execution); none of the server's own use of the runtime (its output
/// buffer, input buffer, timers) shows in a run; and an executable whose runtime differs
/// from the one the server keeps runs its own.
#[test]
fn the_runtime_translated_by_the_server_counts_as_in_single_runs_and_keeps_no_state() {
    if !common::tools_with_plugin("the_runtime_translated_by_the_server_counts_as_in_single_runs_and_keeps_no_state") {
        return;
    }
    let dir = common::scratch();
    let (served, single) = runners();
    let every = build(dir.path(), "every", EVERY_RUNTIME_FUNCTION, OptLevel::O2, Assembler::InProcess);
    let quiet = build(dir.path(), "quiet", "int main() { putint(getint() + 1); return 0; }", OptLevel::O0, Assembler::InProcess);
    let stdin = b"-17\nq 3 1 2 3 2.5e-1 2 1.5 -0x1p3\n";
    let mut served_translations = Vec::new();
    for round in 0..3 {
        for (name, exe, input) in [("every", &every, &stdin[..]), ("quiet", &quiet, &b"41"[..])] {
            let a = served.run(exe, input, Duration::from_secs(30)).expect("served run");
            let b = single.run(exe, input, Duration::from_secs(30)).expect("single run");
            assert_same(&format!("{name}, round {round}"), &a, &b);
            served_translations.push((translations(&a), translations(&b)));
        }
    }
    // Nothing of the warm-up's output (70,000 bytes), input or timers leaked into a run.
    let a = served.run(&quiet, b"41", Duration::from_secs(30)).expect("served run");
    assert_eq!((a.status, a.stdout.as_slice()), (RunStatus::Exited(0), b"42".as_slice()));
    // The runtime really came translated: every served run translated fewer blocks.
    assert!(served_translations.iter().all(|(a, b)| a < b), "{served_translations:?}");

    // The same executable with `getint` returning 99: the server's runtime is not this one.
    let patched = dir.path().join("quiet-patched");
    let mut bytes = std::fs::read(&quiet).expect("read");
    let offset = file_offset_of(&bytes, "getint");
    bytes[offset..offset + 4].copy_from_slice(&0xe3a0_0063u32.to_le_bytes()); // mov r0, #99
    bytes[offset + 4..offset + 8].copy_from_slice(&0xe12f_ff1eu32.to_le_bytes()); // bx lr
    std::fs::write(&patched, &bytes).expect("write");
    std::fs::set_permissions(&patched, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let a = served.run(&patched, b"41", Duration::from_secs(30)).expect("served run");
    assert_eq!(a.stdout, b"100");
    assert_same("a different runtime", &a, &single.run(&patched, b"41", Duration::from_secs(30)).expect("single run"));
    // And the server's runtime is intact for the next run.
    let a = served.run(&every, stdin, Duration::from_secs(30)).expect("served run");
    assert_same("after a different runtime", &a, &single.run(&every, stdin, Duration::from_secs(30)).expect("single run"));
    assert!(translations(&a) < served_translations[0].1);
    assert_eq!(served.served_runs(), 2 * 3 + 3);
}

/// Where function `name`'s first instruction is in the executable file `elf`.
fn file_offset_of(elf: &[u8], name: &str) -> usize {
    use object::{Object as _, ObjectSegment as _, ObjectSymbol as _};
    let file = object::File::parse(elf).expect("an ELF file");
    let address = file.symbols().find(|s| s.name() == Ok(name)).expect("the symbol").address();
    let segment = file
        .segments()
        .find(|s| (s.address()..s.address() + s.file_range().1).contains(&address))
        .expect("a segment holding it");
    (segment.file_range().0 + address - segment.address()) as usize
}
