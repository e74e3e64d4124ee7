//! Tests of triage: back-end stage bisection against a test-only oracle, the reducer with an
//! artificial interestingness test, configuration parsing, the regression corpus, and (in
//! builds with the `fault-injection` feature) bisection and reduction of injected faults.

use super::bisect::{Culprit, bisect_stages};
use super::case::FailureCase;
use super::reduce::{ReduceOptions, count_lines, reduce};
use super::regression::{check_case, header_value, unused_name};
use sysy_check::failure::{Failure, FailureKind, Stage};
use sysy_check::qemu::{CostMode, Runner};
use sysy_check::subject::{Case, Limits, Subject};
use sysyc::config::ConfigArgs;
use sysyc::isa::arm::BackendStage;

fn failure(kind: FailureKind) -> Failure {
    Failure::new(kind, Stage::Qemu, "test")
}

/// A test-only "binary": wrong (stdout) exactly when every stage of `culprits` is on.
fn fake_binary(culprits: &'static [&'static str]) -> impl FnMut(&[BackendStage]) -> Result<Result<(), Failure>, String> {
    move |on: &[BackendStage]| {
        let all_on = culprits.iter().all(|c| on.iter().any(|s| s.name() == *c));
        Ok(if all_on { Err(failure(FailureKind::WrongOutput)) } else { Ok(()) })
    }
}

/// Two failures of one program (under two configurations) become two regression cases.
#[test]
fn regression_names_never_overwrite_an_earlier_case() {
    let dir = tempfile::tempdir().expect("temporary directory");
    assert_eq!(unused_name(dir.path(), "prog"), "prog");
    std::fs::write(dir.path().join("prog.sy"), "").expect("write");
    assert_eq!(unused_name(dir.path(), "prog"), "prog-2");
    std::fs::write(dir.path().join("prog-2.sy"), "").expect("write");
    assert_eq!(unused_name(dir.path(), "prog"), "prog-3");
    // Other files of the case (`.out`, `.in`) do not count: the `.sy` names the case.
    std::fs::write(dir.path().join("other.out"), "").expect("write");
    assert_eq!(unused_name(dir.path(), "other"), "other");
}

#[test]
fn stage_bisection_names_a_single_stage() {
    let culprit = bisect_stages(&BackendStage::ALL, &failure(FailureKind::WrongOutput), fake_binary(&["arm-peephole"]));
    assert_eq!(culprit, Ok(Culprit::BackendStages(vec!["arm-peephole"])));
}

#[test]
fn stage_bisection_names_an_interaction_of_two_stages() {
    let culprit =
        bisect_stages(&BackendStage::ALL, &failure(FailureKind::WrongOutput), fake_binary(&["arm-const-div", "arm-copy-prop"]));
    assert_eq!(culprit, Ok(Culprit::BackendStages(vec!["arm-const-div", "arm-copy-prop"])));
}

#[test]
fn stage_bisection_blames_the_mandatory_back_end_when_no_stage_matters() {
    let crash = failure(FailureKind::Crash);
    let culprit = bisect_stages(&BackendStage::ALL, &crash, |_: &[BackendStage]| Ok(Err(failure(FailureKind::Crash))));
    assert_eq!(culprit, Ok(Culprit::Backend));
    // A different kind with the stages off is not the same failure.
    let culprit = bisect_stages(&BackendStage::ALL, &crash, |on: &[BackendStage]| {
        let kind = if on.contains(&BackendStage::LeafRegs) { FailureKind::Crash } else { FailureKind::WrongOutput };
        Ok(Err(failure(kind)))
    });
    assert_eq!(culprit, Ok(Culprit::BackendStages(vec!["arm-leaf-regs"])));
}

#[test]
fn failure_directories_read_their_config_and_the_command_line_overrides_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("prog.sy"), "int main() { return getint(); }").expect("write");
    std::fs::write(dir.path().join("prog.in"), "7").expect("write");
    std::fs::write(dir.path().join("config"), "--passes=mem2reg,dce --backend-stages=arm-peephole\n").expect("write");
    let case = FailureCase::from_dir(dir.path(), &ConfigArgs::default()).expect("valid");
    assert_eq!(case.config.to_string(), "--passes=mem2reg,dce --backend-stages=arm-peephole");
    assert_eq!(case.subject.stdin, b"7");
    let overrides = ConfigArgs { backend_stages: Some("none".into()), ..ConfigArgs::default() };
    let case = FailureCase::from_dir(dir.path(), &overrides).expect("valid");
    assert_eq!(case.config.to_string(), "--passes=mem2reg,dce --backend-stages=none");
    std::fs::write(dir.path().join("config"), "--passes=nosuchpass\n").expect("write");
    let err = FailureCase::from_dir(dir.path(), &ConfigArgs::default()).expect_err("unknown pass");
    assert!(err.contains("config") && err.contains("nosuchpass"), "{err}");
}

#[test]
fn header_values_are_read_from_the_leading_comment() {
    let text = "// culprit: x\n// config: --passes=mem2reg,dce\nint main() { return 0; }\n// config: no\n";
    assert_eq!(header_value(text, "config"), Some("--passes=mem2reg,dce"));
    assert_eq!(header_value(text, "backend-stages"), None);
}

/// A case with its truth (the source must be valid and trap-free).
fn judged(name: &str, source: &str, stdin: &[u8]) -> Case {
    let subject = Subject::parse(name, source, stdin).expect("valid program");
    Case::with_truth(subject, &Limits::GENERATED).expect("trap-free")
}

fn stdout_has(case: &Case, needle: &[u8]) -> bool {
    case.truth().is_some_and(|t| t.stdout.windows(needle.len()).any(|w| w == needle))
}

/// A program with plenty of irrelevant code around one interesting output (`777`), and an
/// array whose deletion or shrinking would make the interesting line trap (so a careless
/// reducer would produce undefined behaviour).
const NOISY: &str = r#"
const int N = 40;
int table[40];
float weights[8] = {1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5};

int square(int x) { return x * x; }

int collatz(int n) {
    int steps = 0;
    while (n != 1) {
        if (n % 2 == 0) n = n / 2;
        else n = 3 * n + 1;
        steps = steps + 1;
    }
    return steps;
}

float average(float a[], int n) {
    float s = 0.0;
    int i = 0;
    while (i < n) { s = s + a[i]; i = i + 1; }
    return s / n;
}

void fill() {
    int i = 0;
    while (i < N) {
        table[i] = square(i) % 97;
        i = i + 1;
    }
}

int main() {
    fill();
    int total = 0, k = 0;
    while (k < N) {
        total = total + table[k];
        k = k + 1;
    }
    putint(total);
    putch(10);
    putint(collatz(27));
    putch(10);
    putfloat(average(weights, 8));
    putch(10);
    if (table[9] > 50) {
        putint(700 + table[1] * 77);
    } else {
        putint(1);
    }
    putch(10);
    return total % 256;
}
"#;


#[test]
fn the_reducer_shrinks_to_the_interesting_part_and_stays_trap_free() {
    let before = judged("noisy.sy", NOISY, b"");
    assert!(stdout_has(&before, b"777"));
    let interesting = |c: &Case| stdout_has(c, b"777");
    let options = ReduceOptions { batch: 3, ..ReduceOptions::default() };
    let reduced = reduce("noisy.sy", NOISY, b"", &interesting, &options).expect("reduces");
    let (lines_before, lines_after) = (count_lines(NOISY), count_lines(&reduced.source));
    assert!(lines_after * 4 <= lines_before, "{lines_before} → {lines_after} lines:\n{}", reduced.source);
    // Still valid, trap-free and interesting when checked from scratch.
    let after = judged("reduced.sy", &reduced.source, b"");
    assert!(stdout_has(&after, b"777"));
    assert_eq!(after.truth(), Some(&reduced.expected));
    assert!(!reduced.source.contains("collatz"), "{}", reduced.source);

    // Deterministic, whatever the batch size.
    let sequential = ReduceOptions { batch: 1, ..ReduceOptions::default() };
    let again = reduce("noisy.sy", NOISY, b"", &interesting, &sequential).expect("reduces");
    assert_eq!(again.source, reduced.source);
}

#[test]
fn edits_enumerate_sites_in_a_fixed_order() {
    use super::reduce::edits::{EditKind, apply, count};
    use sysyc::frontend::{parse, pretty::print};
    let unit = parse("int f(int a, int b) { return a - b; }\nint main() { putint(f(3, 4)); return 0; }")
        .expect("parses");
    // One site per parameter; deleting `a` drops the first argument of every call.
    assert_eq!(count(&unit, EditKind::DeleteParam), 2);
    let edited = apply(&unit, EditKind::DeleteParam, 0).expect("site 0");
    let text = print(&edited);
    assert!(text.contains("int f(int b)") && text.contains("f(4)"), "{text}");
    assert!(apply(&unit, EditKind::DeleteParam, 2).is_none());
    // `f` can be deleted, `main` cannot.
    assert_eq!(count(&unit, EditKind::DeleteItem), 1);
    // Items in order, expressions outside-in: site 0 replaces `a - b` (in `f`) by 0.
    let first = print(&apply(&unit, EditKind::ReplaceExpr, 0).expect("site 0"));
    assert!(first.contains("return 0;") && first.contains("f(3, 4)"), "{first}");
    let n = count(&unit, EditKind::ReplaceExpr);
    let all: Vec<String> = (0..n)
        .map(|i| print(&apply(&unit, EditKind::ReplaceExpr, i).expect("in range")))
        .collect();
    assert!(all.iter().any(|t| t.contains("putint(4)")), "{all:?}");
    assert_eq!(count(&unit, EditKind::ReplaceExpr), n, "counting does not change the tree");
}

#[test]
fn a_call_statement_becomes_putint_of_an_argument_and_its_last_call_takes_the_callee_along() {
    use super::reduce::edits::{EditKind, apply, count};
    use sysyc::frontend::{parse, pretty::print};
    let unit = parse(
        "int c;\nvoid mix(int v) { c = c + v; }\nvoid two(int a, int b) { c = a - b; }\n\
         int main() { mix(3); two(4, 5); mix(6); putint(c); return 0; }",
    )
    .expect("parses");
    let all: Vec<String> = (0..count(&unit, EditKind::SimplifyStmt))
        .map(|i| print(&apply(&unit, EditKind::SimplifyStmt, i).expect("in range")))
        .collect();
    // One site per argument of each call statement; `putint(c)` itself is not one.
    assert_eq!(all.len(), 4, "{all:?}");
    assert!(all[0].contains("putint(3);") && all[0].contains("void mix(") && all[0].contains("mix(6);"), "{}", all[0]);
    // `two` had one call: it goes with it.
    assert!(all[2].contains("putint(5);") && !all[2].contains("void two("), "{}", all[2]);
}

#[test]
fn deleting_a_declaration_rewrites_its_uses() {
    use super::reduce::edits::{EditKind, apply};
    use sysyc::frontend::{parse, pretty::print};
    let unit = parse(
        "int g(int v) { return v; }\n\
         int main() { int x = 3; int y = x + 1; x = 5; x = g(7); if (y) x = 1; { int x = 9; putint(x); } putint(x + y); return 0; }",
    )
    .expect("parses");
    // Site 0 of the block items of `g` is its return; site 1 is `int x = 3;` in `main`.
    let text = print(&apply(&unit, EditKind::DeleteBlockItem, 1).expect("site 1"));
    // Reads become 0; a plain assignment goes, one with a call keeps the call; a branch
    // keeps an empty statement; the inner `x` shadows the deleted one and stays.
    assert!(text.contains("int y = 0 + 1;"), "{text}");
    assert!(!text.contains("x = 5") && text.contains("g(7);") && !text.contains("x = g(7)"), "{text}");
    assert!(text.contains("int x = 9;") && text.contains("putint(x);"), "{text}");
    assert!(text.contains("putint(0 + y);"), "{text}");
    let after = judged("scrubbed.sy", &text, b"");
    assert_eq!(after.truth().map(|t| t.stdout.as_slice()), Some(&b"91"[..]), "{text}");

    // Deleting a function turns its calls into 0.
    let text = print(&apply(&unit, EditKind::DeleteItem, 0).expect("site 0"));
    assert!(!text.contains("int g(") && text.contains("0;") && !text.contains("g(7)"), "{text}");
}

#[test]
fn runs_of_block_items_split_like_ddmin() {
    use super::reduce::edits::{EditKind, apply, count};
    use sysyc::frontend::{parse, pretty::print};
    let unit = parse("int main() { putint(1); putint(2); putint(3); putint(4); putint(5); return 0; }").expect("parses");
    // Six items: runs of 4 ([0,4), [4,6)), then of 2 ([0,2), [2,4), [4,6)).
    assert_eq!(count(&unit, EditKind::DeleteRun), 5);
    let first = print(&apply(&unit, EditKind::DeleteRun, 0).expect("site 0"));
    assert!(first.contains("putint(5);") && !first.contains("putint(4)") && !first.contains("putint(1)"), "{first}");
    let last = print(&apply(&unit, EditKind::DeleteRun, 4).expect("site 4"));
    assert!(last.contains("putint(4);") && !last.contains("putint(5)") && !last.contains("return"), "{last}");
}

#[test]
fn the_reducer_cuts_stdin_to_what_is_read() {
    let source = "int main() { int a = getint(); int b = getint(); putint(a * 10 + b); return 0; }";
    let stdin = b"4 2 99 100\n17 -3\n";
    let interesting = |c: &Case| stdout_has(c, b"42");
    let reduced = reduce("in.sy", source, stdin, &interesting, &ReduceOptions::default()).expect("reduces");
    assert_eq!(reduced.stdin, b"4 2");
    let after = judged("in.sy", &reduced.source, &reduced.stdin);
    assert_eq!(after.truth().map(|t| t.stdout.as_slice()), Some(&b"42"[..]));
}

#[test]
fn the_reducer_refuses_programs_with_undefined_behaviour() {
    let ub = "int main() { int a[2] = {1, 2}; putint(a[2]); return 0; }";
    let always = |_: &Case| true;
    let err = reduce("ub.sy", ub, b"", &always, &ReduceOptions::default()).expect_err("UB");
    assert!(err.contains("undefined behaviour"), "{err}");
}

/// Every case of `corpus/regressions` passes with the configuration in its header (on the
/// IR interpreter, and as an ARM binary when qemu-arm is installed).
#[test]
fn regression_corpus_passes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/regressions");
    let Ok(entries) = std::fs::read_dir(&dir) else { return };
    let mut cases: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sy"))
        .collect();
    cases.sort();
    let runner = Runner::new(CostMode::Off).ok();
    let failures: Vec<String> = cases.iter().filter_map(|c| check_case(c, runner.as_ref()).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The decisions read off a compilation: a loop of 100 trips is over `full-unroll`'s limit
/// (rolled), one of 3 is unrolled; a callee over the inline budget with two call sites
/// stays outlined, a small one is inlined. Before the culprit pass only: with the culprit at
/// position 0 there are none.
#[test]
fn size_decisions_are_read_off_the_compilation_before_the_culprit() {
    use super::bisect::Located;
    use super::pins::decisions;
    let case = judged(
        "d.sy",
        "int g[4];
int big(int x) {
    int s = x * 7 + x / 3 - x % 5;
    int t = s * s + g[1] * x - g[2] / (x * x + 1);
    int u = (t + s) * (x - 2) + (s % 7) * (t % 11) - g[3];
    int v = u * 3 + t * 5 - s * 2 + x * x * x;
    int w = (v / 3 + u % 13) * 2 + (t - v) % 17 + g[0] * g[1];
    int y = (w % 19) * (v % 23) + (u / 7) * (t / 9) - w * v;
    return w + y + v - u + t - s;
}
int small(int x) { return x + 1; }
int three() {
    int i = 0, s = 0;
    while (i < 3) { s = s + g[i]; i = i + 1; }
    return s;
}
int main() {
    int i = 0, s = 0;
    while (i < 100) { s = s + i * getint(); i = i + 1; }
    putint(s + big(s) + big(small(s)) + three());
    return 0;
}
",
        &b"1 ".repeat(100),
    );
    let config: sysyc::config::Config = "-O2".parse().expect("valid");
    let at = |culprit| Located { stage: Stage::IrInterp, kind: FailureKind::WrongOutput, culprit };
    let pins = decisions(&case, &config, &at(Culprit::Backend));
    assert!(pins.outlined.contains("big") && !pins.outlined.contains("small"), "{pins:?}");
    assert!(pins.rolled.contains("main") && !pins.rolled.contains("three"), "{pins:?}");
    assert!(decisions(&case, &config, &at(Culprit::Pass { position: 0, name: "mem2reg" })).is_empty());
}

#[cfg(feature = "fault-injection")]
mod faults {
    use super::super::bisect::{Checks, Culprit, bisect};
    use super::super::case::FailureCase;
    use super::super::reduce::count_lines;
    use super::super::regression::{TriageOptions, triage};
    use super::judged;
    use sysy_check::executor::watch::Unwatched;
    use sysy_check::failure::{FailureKind, Stage};
    use sysy_check::qemu::{CostMode, Runner};
    use sysy_check::subject::{Limits, Subject};
    use sysyc::config::Config;

    fn failure_case(name: &str, source: &str, stdin: &[u8], config: &str) -> FailureCase {
        FailureCase {
            name: name.to_string(),
            subject: Subject::parse(&format!("{name}.sy"), source, stdin).expect("valid program"),
            config: config.parse::<Config>().expect("a valid configuration with a known fault"),
        }
    }

    fn ir_only() -> Checks<'static> {
        Checks { timeout: Limits::GENERATED.timeout, runner: None, watch: &Unwatched }
    }

    /// `constfold-srem-sign` needs a constant `%` with a negative result, which only exists
    /// after mem2reg has turned the variables into constants: an interaction of two passes.
    const SREM: &str = r#"
int g[10];
int helper(int a, int b) {
    int i = 0;
    while (i < 10) {
        g[i] = a * i + b;
        i = i + 1;
    }
    return g[3];
}
int unused(int n) {
    if (n > 3) return n * 2;
    return n - 1;
}
int main() {
    int x = 7, y = 3, z = 11;
    int s = helper(x, y);
    putint(s);
    putch(10);
    if (z > 5) {
        int r = -x % y;
        putint(r + unused(2) - 1);
        putch(10);
    }
    while (z > 0) {
        s = s + z;
        z = z - 2;
    }
    putint(s);
    return 0;
}
"#;

    fn case() -> FailureCase {
        // A fixed pipeline, so that later -O2 changes (e.g. sccp folding first) do not hide
        // the constfold fault.
        failure_case(
            "srem",
            SREM,
            b"",
            "--passes=mem2reg,constfold,unreachable-blocks,simplify-cfg,trivial-phi,dce --fault=constfold-srem-sign",
        )
    }

    #[test]
    fn bisect_names_the_faulty_pass_the_interaction_and_the_step() {
        let report = bisect(&case(), &ir_only(), &Limits::GENERATED).expect("bisects");
        let located = report.located.clone().expect("the fault shows");
        assert_eq!(located.stage, Stage::IrInterp);
        assert_eq!(located.kind, FailureKind::WrongOutput);
        assert_eq!(located.culprit, Culprit::Pass { position: 1, name: "constfold" });
        assert_eq!(report.minimal_pipeline, Some(vec!["mem2reg", "constfold"]));
        let step = report.step.expect("an opt-bisect step");
        assert_eq!((step.pass, step.function.as_str()), ("constfold", "main"));
        let diff = &report.ir_diff.expect("a diff").diff;
        assert!(diff.contains("-") && diff.contains("srem"), "{diff}");
        // Without the fault the same program is compiled correctly.
        let mut healthy = case();
        healthy.config.faults = Default::default();
        let report = bisect(&healthy, &ir_only(), &Limits::GENERATED).expect("bisects");
        assert_eq!(report.culprit(), Culprit::NotReproduced);
    }

    /// Reducing a pass culprit checks candidates with the per-pass oracle, not with
    /// `Checks::check`; each such check still re-stamps the campaign worker's journal entry,
    /// or the watchdog would take a reduction longer than a step's limit for a hang.
    #[test]
    fn checks_of_a_pass_culprit_beat_the_heartbeat() {
        use super::super::bisect::still_fails;
        use crate::campaign::isolate::{Heartbeat, Journal, in_flight};
        use sysy_check::subject::Case;
        let dir = tempfile::tempdir().expect("temporary directory");
        let journal = Journal::open(dir.path()).expect("journal");
        journal.enter(7, "triage");
        let heartbeat = Heartbeat::of_this_thread().expect("a step in flight");
        let checks = Checks { timeout: Limits::GENERATED.timeout, runner: None, watch: &heartbeat };
        let case = case();
        let located = bisect(&case, &checks, &Limits::GENERATED).expect("bisects").located.expect("the fault shows");
        assert!(matches!(located.culprit, Culprit::Pass { .. }));
        // The entry emptied, as if gone stale; one reduction check from another thread.
        journal.leave();
        assert!(in_flight(dir.path()).is_empty());
        let judged = Case::with_truth(case.subject.clone(), &Limits::GENERATED).expect("judged");
        std::thread::scope(|scope| {
            scope.spawn(|| assert!(still_fails(&judged, &case.config, &checks, &located)));
        });
        assert_eq!(in_flight(dir.path()), vec![(7, "triage".to_string())]);
    }

    #[test]
    fn triage_reduces_the_fault_to_a_few_trap_free_lines() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let options = TriageOptions {
            regressions_dir: Some(dir.path().to_path_buf()),
            ..TriageOptions::default()
        };
        let report = triage(&case(), &ir_only(), &options).expect("triages");
        let reduced = report.reduced.expect("reduced");
        let st = &reduced.stats;
        eprintln!(
            "reduced {} -> {} lines in {:.1} s ({} candidates)",
            st.lines_before, st.lines_after, st.seconds, st.tested
        );
        assert!(count_lines(&reduced.source) <= 10, "{}", reduced.source);
        assert!(reduced.stats.lines_before >= 30);
        // Never a trap in the reference interpreter.
        judged("r.sy", &reduced.source, &reduced.stdin);
        let rb = report.reduced_bisect.expect("bisected again");
        assert_eq!(rb.culprit(), Culprit::Pass { position: 1, name: "constfold" });
        let written = std::fs::read_to_string(report.regression.expect("written")).expect("readable");
        assert!(written.contains("// culprit: pass `constfold`"), "{written}");
        assert!(dir.path().join("srem.out").exists());
    }

    /// A failure that needs `inline` — the two calls of the read-only `r` meet in `main` only
    /// once the writing wrapper `bump` is inlined (before, faulty `gvn` sees calls of a
    /// function that writes) — and needs `r` left outlined (inlined, there is no call for it
    /// to merge). `r` stays outlined by size: above `inline::SMALL_CALLEE` and called from
    /// two places. Shrinking `r` would flip that decision, so the reduction pins it.
    const OUTLINED: &str = r#"
int g = 3;
int h[8];
int r() {
    int s = g * 7 + g / 3 - g % 5;
    int t = s * s + h[1] * g - h[2] / (g * g + 1);
    int u = (t + s) * (g - 2) + (s % 7) * (t % 11) - h[3];
    int v = u * 3 + t * 5 - s * 2 + g * g * g;
    int w = (v / 3 + u % 13) * 2 + (t - v) % 17 + h[4] * h[5];
    return w + v - u + t - s;
}
int bump(int k) {
    g = g + k;
    h[k] = g;
    return r();
}
int main() {
    int a = bump(1);
    int b = bump(2);
    putint(a);
    putch(32);
    putint(b);
    putch(32);
    putint(r());
    putch(10);
    return 0;
}
"#;

    #[test]
    fn a_failure_that_needs_an_outlined_callee_reduces_with_the_decision_pinned() {
        use super::super::bisect::still_fails;
        use super::super::regression::check_case;
        use sysyc::config::SizePins;
        let dir = tempfile::tempdir().expect("temporary directory");
        let options = TriageOptions { regressions_dir: Some(dir.path().to_path_buf()), ..TriageOptions::default() };
        let case = failure_case("outlined", OUTLINED, b"", "-O2 --fault=gvn-read-only-call-as-pure");
        let report = triage(&case, &ir_only(), &options).expect("triages");
        let config = report.reduced_config.clone().expect("reduced under a configuration");
        assert!(config.pass_names().contains(&"inline"), "{config}");
        assert!(config.pins.outlined.contains("r"), "{config}");
        let reduced = report.reduced.expect("reduced");
        eprintln!("reduced {} -> {} lines under `{config}`:\n{}", reduced.stats.lines_before, reduced.stats.lines_after, reduced.source);
        assert!(count_lines(&reduced.source) <= 25, "{}", reduced.source);
        // The pin is what keeps the failure: without it the reduced `r` is small enough to
        // inline, and the program compiles correctly.
        let reduced_case = judged("r.sy", &reduced.source, &reduced.stdin);
        let located = report.reduced_bisect.and_then(|b| b.located).expect("the reduced program fails");
        assert!(still_fails(&reduced_case, &config, &ir_only(), &located));
        let bare = Config { pins: SizePins::default(), ..config.clone() };
        assert!(!still_fails(&reduced_case, &bare, &ir_only(), &located), "{}", reduced.source);
        // The regression case carries the pin and passes on the correct compiler.
        let sy = report.regression.expect("written");
        let written = std::fs::read_to_string(&sy).expect("readable");
        assert!(written.contains("--keep-outlined=r"), "{written}");
        check_case(&sy, None).expect("passes without the fault");
    }

    /// qemu-arm, when it and the ARM cross toolchain are both installed (else the test says
    /// it is skipped).
    fn native_tools() -> Option<Runner> {
        let Ok(runner) = Runner::new(CostMode::Off) else {
            eprintln!("skipped: qemu-arm not found");
            return None;
        };
        if sysyc::toolchain::arm_gcc().is_err() {
            eprintln!("skipped: the ARM cross toolchain is not installed");
            return None;
        }
        Some(runner)
    }

    fn with(runner: &Runner) -> Checks<'_> {
        Checks { timeout: Limits::GENERATED.timeout, runner: Some(runner), watch: &Unwatched }
    }

    /// The back-end fault `arm-pow2-div-no-bias` (division by a power of two forgets the
    /// rounding bias of negative dividends) shows only in the ARM binary: bisect finds the IR
    /// right after every pass and names the back-end stage. Skipped without qemu.
    #[test]
    fn bisect_names_the_faulty_back_end_stage() {
        let Some(runner) = native_tools() else { return };
        let source = "int f(int x) { return x / 8; }\n\
                      int main() { int i = 0; int s = 0;\n\
                      while (i < 20) { s = s + f(getint() - 100); i = i + 1; }\n\
                      putint(s); return 0; }\n";
        let stdin: Vec<u8> = (1..=20).map(|n| format!("{n} ")).collect::<String>().into_bytes();
        let case = failure_case("div", source, &stdin, "-O2 --fault=arm-pow2-div-no-bias");
        let report = bisect(&case, &with(&runner), &Limits::GENERATED).expect("bisects");
        let located = report.located.clone().expect("the fault shows");
        assert_eq!(located.stage, Stage::Qemu);
        assert_eq!(located.culprit, Culprit::BackendStages(vec!["arm-const-div"]));
    }

    /// A program of several functions and some 40 lines whose only faulty operation (a
    /// negative dividend divided by 8) sits in `scale`: bisect names the stage and the
    /// function, and triage reduces it to a few trap-free lines with the same culprit.
    const SPREAD: &str = r#"
int total;
int weights[8] = {3, 1, 4, 1, 5, 9, 2, 6};

int bump(int x) {
    return x + 1;
}

int mix(int a, int b) {
    int t = a * 31 + b;
    if (t > 1000) {
        t = t - 1000;
    }
    return t;
}

int scale(int v) {
    int d = v - 50;
    int q = d / 8;
    return q + bump(d);
}

int main() {
    int i = 0;
    int acc = 0;
    while (i < 8) {
        int w = weights[i];
        acc = mix(acc, w);
        acc = acc + scale(w * 3);
        total = total + bump(i);
        i = i + 1;
    }
    putint(acc);
    putch(10);
    putint(total);
    putch(10);
    return 0;
}
"#;

    #[test]
    fn back_end_fault_is_bisected_to_its_function_and_reduced() {
        let Some(runner) = native_tools() else { return };
        // No inlining, so the functions stay apart.
        let case = failure_case("spread", SPREAD, b"", "--passes=mem2reg,constfold,dce --fault=arm-pow2-div-no-bias");
        let report = bisect(&case, &with(&runner), &Limits::GENERATED).expect("bisects");
        assert_eq!(report.culprit(), Culprit::BackendStages(vec!["arm-const-div"]));
        assert_eq!(report.backend_function.as_deref(), Some("scale"));
        assert!(report.render(&case.config).contains("function: scale"));

        let dir = tempfile::tempdir().expect("temporary directory");
        let options = TriageOptions { regressions_dir: Some(dir.path().to_path_buf()), ..TriageOptions::default() };
        let report = triage(&case, &with(&runner), &options).expect("triages");
        let reduced = report.reduced.expect("reduced");
        let st = &reduced.stats;
        eprintln!(
            "reduced {} -> {} lines in {:.1} s ({} candidates)",
            st.lines_before, st.lines_after, st.seconds, st.tested
        );
        assert!(reduced.stats.lines_before >= 30, "{}", reduced.stats.lines_before);
        assert!(count_lines(&reduced.source) <= 25, "{}", reduced.source);
        judged("r.sy", &reduced.source, &reduced.stdin);
        let rb = report.reduced_bisect.expect("bisected again");
        assert_eq!(rb.culprit(), Culprit::BackendStages(vec!["arm-const-div"]));
    }

    /// The post-allocation fault `arm-copy-prop-call-clobber` forwards a register across a
    /// call that clobbers it: the machine-code verifier rejects the code right after
    /// `arm-copy-prop` (a back-end error naming the stage), and bisection names the stage.
    #[test]
    fn machine_verifier_fault_is_caught_at_the_stage_that_introduced_it() {
        let Some(runner) = native_tools() else { return };
        let source = "int g(int x) { putint(x); return x * 2; }\n\
                      int f(int a, int b) { return g(a) + b; }\n\
                      int main() { putint(f(getint(), getint())); return 0; }\n";
        let case = failure_case("clobber", source, b"3 4", "--passes=mem2reg --fault=arm-copy-prop-call-clobber");
        let report = bisect(&case, &with(&runner), &Limits::GENERATED).expect("bisects");
        let located = report.located.clone().expect("the fault shows");
        assert_eq!((located.kind, located.stage), (FailureKind::BackendError, Stage::Backend));
        assert_eq!(located.culprit, Culprit::BackendStages(vec!["arm-copy-prop"]));
        let detail = &report.failure.expect("the failure").detail;
        assert!(detail.contains("after stage `arm-copy-prop`") && detail.contains("before any definition reaches it"), "{detail}");
        // `g` keeps its argument across `putint` and `f` its second one across `g`: the stage
        // breaks both, and each alone reproduces the failure (the smallest is named).
        assert!(matches!(report.backend_function.as_deref(), Some("g" | "f")), "{:?}", report.backend_function);
        // Without the verifier the same fault compiles to a binary that reads a clobbered
        // register: the code really is wrong, whatever it happens to print.
        let unverified = Config { verify_each: false, ..case.config.clone() };
        let judged_case = judged("clobber.sy", source, b"3 4");
        let lowered = sysy_check::steps::lower(&judged_case.subject).expect("lowers");
        let (module, _) = sysy_check::steps::optimise(&lowered, &unverified, None).expect("optimises");
        assert!(sysy_check::steps::select(&module, &unverified).is_ok(), "compiles without the verifier");
    }
}