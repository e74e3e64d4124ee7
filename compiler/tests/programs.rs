//! Whole programs through lowering and every pipeline, judged by the IR interpreter.
//!
//! For every program of `corpus/lang` — and, when the competition suites are present ($SYSY_TESTS), every
//! functional case of the competition suite — the IR interpreter's result must equal the
//! expected `.out`:
//! * at -O0 (lowering only), at -O1 and at -O2;
//! * after `mem2reg,P` and after `P` alone, for every registered pass P.
//!
//! The verifier runs after every pass. The printed IR of every pipeline's result, and of every
//! intermediate step of -O2, must round-trip through the parser unchanged.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sysyc::config::Config;
use sysyc::driver;
use sysyc::ir::interp::InterpConfig;
use sysyc::ir::{Module, parse_module, print_module};
use sysyc::passes::{self, OptLevel, PassInfo};

struct Case {
    name: String,
    source: String,
    stdin: Vec<u8>,
    expected: Vec<u8>,
}

fn load_cases(dir: &Path) -> Vec<Case> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sy"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| Case {
            name: p.file_stem().expect("file name").to_string_lossy().into_owned(),
            source: sysyc::frontend::source_from_bytes(&std::fs::read(&p).expect("readable source")),
            stdin: std::fs::read(p.with_extension("in")).unwrap_or_default(),
            expected: std::fs::read(p.with_extension("out"))
                .unwrap_or_else(|e| panic!("{}: no expected output: {e}", p.display())),
        })
        .collect()
}

/// The pipelines every case goes through, with their names for messages.
fn pipelines() -> Vec<(String, Vec<&'static PassInfo>)> {
    let mut out = vec![
        ("-O0".to_string(), OptLevel::O0.pipeline()),
        ("-O1".to_string(), OptLevel::O1.pipeline()),
        ("-O2".to_string(), OptLevel::O2.pipeline()),
    ];
    for p in passes::ir_passes() {
        out.push((
            format!("mem2reg,{}", p.name),
            passes::parse_pipeline(&format!("mem2reg,{}", p.name)).expect("registered"),
        ));
        out.push((p.name.to_string(), vec![p]));
    }
    out
}

fn round_trips(module: &Module) -> Result<(), String> {
    let text = print_module(module);
    let reparsed = parse_module(&text).map_err(|e| format!("printed IR does not parse: {e}"))?;
    if print_module(&reparsed) != text {
        return Err("printed IR does not round-trip through the parser".into());
    }
    Ok(())
}

/// Checks one case under every pipeline; returns the failures.
fn check_case(case: &Case, pipelines: &[(String, Vec<&'static PassInfo>)]) -> Vec<String> {
    let mut failures = Vec::new();
    let lowered = match driver::lower_source(&case.name, &case.source) {
        Ok(m) => m,
        Err(e) => return vec![format!("{}: front end: {e}", case.name)],
    };
    for (label, pipeline) in pipelines {
        let mut module = lowered.clone();
        let options = Config { verify_each: true, ..Config::default() }.with_pipeline(pipeline.clone());
        let mut step_errors = Vec::new();
        let result = if label == "-O2" {
            let mut observer = |pos: usize, pass: &'static PassInfo, m: &Module| {
                if let Err(e) = round_trips(m) {
                    step_errors.push(format!("after {} (position {}): {e}", pass.name, pos + 1));
                }
            };
            driver::optimise(&mut module, &options, Some(&mut observer))
        } else {
            driver::optimise(&mut module, &options, None)
        };
        if let Err(e) = result {
            failures.push(format!("{} [{label}]: {e}", case.name));
            continue;
        }
        failures.extend(step_errors.into_iter().map(|e| format!("{} [{label}]: {e}", case.name)));
        if let Err(e) = round_trips(&module) {
            failures.push(format!("{} [{label}]: {e}", case.name));
        }
        let run = match driver::interpret(&module, &case.stdin, &InterpConfig::default()) {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{} [{label}]: cannot interpret: {e}", case.name));
                continue;
            }
        };
        match run.outcome.expected_output() {
            Some(out) if out == case.expected => {}
            Some(out) => failures.push(format!(
                "{} [{label}]: output differs\n  expected: {:?}\n  got:      {:?}",
                case.name,
                String::from_utf8_lossy(&case.expected),
                String::from_utf8_lossy(&out)
            )),
            None => failures.push(format!("{} [{label}]: trapped: {:?}", case.name, run.outcome.trap)),
        }
    }
    failures
}

/// Runs every case on a few threads and asserts that none failed.
fn check_all(cases: Vec<Case>, what: &str) {
    assert!(!cases.is_empty(), "no cases in {what}");
    let pipelines = pipelines();
    let queue = Mutex::new(cases.iter());
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(4);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let next = queue.lock().expect("queue").next();
                    let Some(case) = next else { break };
                    let f = check_case(case, &pipelines);
                    failures.lock().expect("failures").extend(f);
                }
            });
        }
    });
    let mut failures = failures.into_inner().expect("failures");
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} failures over {} cases of {what} × {} pipelines:\n{}",
        failures.len(),
        cases.len(),
        pipelines.len(),
        failures.join("\n")
    );
}

#[test]
fn corpus_lang_under_every_pipeline() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/lang");
    check_all(load_cases(&dir), "corpus/lang");
}

#[test]
fn functional_suite_under_every_pipeline() {
    let Some(root) = sysyc::suites::sysy_tests_dir() else {
        eprintln!("skipped: the competition suites are not present (set $SYSY_TESTS)");
        return;
    };
    check_all(load_cases(&root.join("functional")), "the functional suite");
}
