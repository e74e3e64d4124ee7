//! The in-process oracles on generated programs and on hand-made failures: they pass on the
//! clean compiler, and they do report what they exist to catch.

use std::time::Duration;

#[cfg(feature = "fault-injection")]
use sysy_check::failure::FailureKind;
use harness::sources::generated::generate;
use sysy_generator::GenConfig;
use sysy_check::executor::each_pass::{Budget, first_failure, roundtrip_check};
use sysy_check::oracles::frontend;
use sysy_check::subject::{Case, Limits, Rejected, Subject};
use sysyc::config::Config;
use sysyc::passes::{OptLevel, ir_passes, lookup};

const BUDGET: Budget = Budget { timeout: Duration::from_secs(10), max_steps: None };

fn generated(seed: u64) -> Subject {
    let p = generate(seed, &GenConfig::swarm(seed));
    Subject::from_ast("generated.sy", &p.unit, &p.source, &p.stdin).expect("generated programs are valid")
}

#[test]
fn generated_programs_pass_the_per_pass_oracle_at_o2_and_with_every_pass() {
    let passes: Vec<_> = ir_passes().collect();
    let mut judged = 0;
    for seed in 0..12u64 {
        let Ok(case) = Case::with_truth(generated(seed), &Limits::GENERATED) else { continue };
        judged += 1;
        let found = first_failure(&case, &Config::level(OptLevel::O2), BUDGET);
        assert!(found.is_none(), "seed {seed}: {:?}", found.map(|f| f.failure));
        let pass = passes[seed as usize % passes.len()];
        let pipeline = Config::default().with_pipeline(vec![lookup("mem2reg").expect("registered"), pass]);
        let found = first_failure(&case, &pipeline, BUDGET);
        assert!(found.is_none(), "seed {seed}, mem2reg,{}: {:?}", pass.name, found.map(|f| f.failure));
    }
    assert!(judged >= 10, "only {judged} of 12 programs could be judged");
}

#[test]
fn programs_whose_truth_traps_are_refused_not_judged() {
    // Undefined behaviour in the source gives the compiler licence to do anything, so no
    // result of it may be called a miscompile.
    let traps = Subject::parse("t.sy", "int main() { int a[2]; return a[getint()]; }", b"5").expect("valid");
    assert!(matches!(Case::with_truth(traps, &Limits::GENERATED), Err(Rejected::Trap(_))));
    let fine = Subject::parse("t.sy", "int main() { int a[2] = {3, 4}; putint(a[getint()]); return 0; }", b"1").expect("valid");
    let case = Case::with_truth(fine, &Limits::GENERATED).expect("trap-free");
    assert!(first_failure(&case, &Config::level(OptLevel::O2), BUDGET).is_none());
}

#[test]
fn printed_ir_roundtrips_after_every_pass() {
    for seed in 100..106u64 {
        assert_eq!(roundtrip_check(&generated(seed), &Config::level(OptLevel::O2)), Ok(()), "seed {seed}");
    }
}

#[test]
fn the_front_end_accepts_programs_and_explains_rejections() {
    assert_eq!(frontend::check_bytes(b"int main() { return 0; }"), Ok(true));
    for garbage in [&b"int main( {"[..], b"\xff\xfe\x00", b"int x = y;", b"", b"}}}}"] {
        assert_eq!(frontend::check_bytes(garbage), Ok(false), "{garbage:?}");
    }
}

/// With the compiler's injected fault on, the per-pass oracle catches the miscompile and
/// names the pass that has it.
#[cfg(feature = "fault-injection")]
#[test]
fn fault_constfold_srem_sign_is_named_by_the_per_pass_oracle() {
    let source = "int main() { int a = -7; int b = 3; putint(a % b); return 0; }";
    let case = Case::with_truth(Subject::parse("t.sy", source, b"").expect("valid"), &Limits::GENERATED).expect("trap-free");
    // constfold must see the `%` (in -O2, sccp folds it first).
    let config: Config = "--passes=mem2reg,dce,constfold,simplify-cfg --fault=constfold-srem-sign".parse().expect("known fault");
    let found = first_failure(&case, &config, BUDGET).expect("the fault must be caught");
    assert_eq!(found.failure.kind, FailureKind::WrongOutput);
    assert_eq!(found.pass.map(|(_, name)| name), Some("constfold"));
}
