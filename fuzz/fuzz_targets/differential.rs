//! Fuzzer bytes → a generator configuration and program plus a random pipeline → the
//! reference interpreter against the IR interpreter after every pass (no qemu).
#![no_main]

use sysy_generator::GeneratedProgram;
use sysy_check::executor::each_pass::{Budget, first_failure};
use sysy_check::oracles::random_config;
use sysy_check::subject::{Case, Limits, Subject};
use libfuzzer_sys::{arbitrary::Unstructured, fuzz_target};

fuzz_target!(|bytes: &[u8]| {
    let mut u = Unstructured::new(bytes);
    let Ok(config) = random_config(&mut u) else { return };
    let Ok(program) = u.arbitrary::<GeneratedProgram>() else { return };
    let Ok(subject) = Subject::from_ast("fuzz.sy", &program.unit, &program.source, &program.stdin) else { return };
    // Programs the reference interpreter cannot judge within a small budget are skipped.
    let limits = Limits { max_steps: 2_000_000, ..Limits::GENERATED };
    let Ok(case) = Case::with_truth(subject, &limits) else { return };
    // Generous enough that only a pass making the program loop (or much slower) runs out.
    let steps = case.truth().map_or(0, |t| t.steps).saturating_mul(200).saturating_add(1_000_000);
    let budget = Budget { timeout: limits.timeout, max_steps: Some(steps) };
    if let Some(found) = first_failure(&case, &config, budget) {
        panic!("{config}: {:?}: {}\n{}", found.pass, found.failure, program.source);
    }
});
