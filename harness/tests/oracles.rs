//! The in-process oracles on generated programs and on hand-made failures: they pass on the
//! clean compiler, and they do report what they exist to catch.

use harness::generators::{GenConfig, generate};
use harness::oracles::{Checked, frontend, per_pass, roundtrip};
use sysyc::passes::{OptLevel, REGISTRY};

#[test]
fn generated_programs_pass_the_per_pass_oracle_at_o2_and_with_every_pass() {
    let mut passed = 0;
    for seed in 0..12u64 {
        let program = generate(seed, &GenConfig::swarm(seed));
        let o2 = OptLevel::O2.pipeline();
        let result = per_pass::check(&program.source, &program.stdin, &o2, &Default::default());
        assert!(result.is_ok(), "seed {seed}: {}", result.unwrap_err());
        passed += usize::from(result == Ok(Checked::Passed));
        let pass = &REGISTRY[seed as usize % REGISTRY.len()];
        let pipeline = [sysyc::passes::lookup("mem2reg").unwrap(), pass];
        let result = per_pass::check(
            &program.source,
            &program.stdin,
            &pipeline,
            &Default::default(),
        );
        assert!(
            result.is_ok(),
            "seed {seed}, mem2reg,{}: {}",
            pass.name,
            result.unwrap_err()
        );
    }
    assert!(passed >= 10, "only {passed} of 12 programs could be judged");
}

#[test]
fn programs_whose_truth_traps_are_skipped_not_judged() {
    // Undefined behaviour in the source gives the compiler licence to do anything, so the
    // oracle must not call any result of it a miscompile.
    let traps = "int main() { int a[2]; return a[getint()]; }";
    let result = per_pass::check(traps, b"5", &OptLevel::O2.pipeline(), &Default::default());
    assert_eq!(result, Ok(Checked::Skipped));
    let fine = "int main() { int a[2] = {3, 4}; putint(a[getint()]); return 0; }";
    let result = per_pass::check(fine, b"1", &OptLevel::O2.pipeline(), &Default::default());
    assert_eq!(result, Ok(Checked::Passed));
}

#[test]
fn printed_ir_roundtrips_after_every_pass() {
    for seed in 100..106u64 {
        let program = generate(seed, &GenConfig::swarm(seed));
        let result = roundtrip::check(&program.source, &OptLevel::O2.pipeline());
        assert_eq!(result, Ok(Checked::Passed), "seed {seed}");
    }
}

#[test]
fn the_front_end_accepts_programs_and_explains_rejections() {
    assert_eq!(frontend::check_bytes(b"int main() { return 0; }"), Ok(true));
    for garbage in [
        &b"int main( {"[..],
        b"\xff\xfe\x00",
        b"int x = y;",
        b"",
        b"}}}}",
    ] {
        assert_eq!(frontend::check_bytes(garbage), Ok(false), "{garbage:?}");
    }
}

/// With the compiler's injected fault on, the per-pass oracle catches the miscompile and
/// names the pass that has it.
#[cfg(feature = "fault-injection")]
#[test]
fn fault_constfold_srem_sign_is_named_by_the_per_pass_oracle() {
    use sysyc::driver::CompileOptions;
    use sysyc::faults::FaultSet;
    let source = "int main() { int a = -7; int b = 3; putint(a % b); return 0; }";
    let options = CompileOptions {
        faults: FaultSet::parse("constfold-srem-sign").expect("known fault"),
        // constfold must see the `%` (in -O2, sccp folds it first).
        ..CompileOptions::passes("mem2reg,dce,constfold,simplify-cfg").expect("registered passes")
    };
    let violation = per_pass::check_with(source, b"", &options, &Default::default())
        .expect_err("the fault must be caught");
    assert_eq!(violation.kind, "wrong-output");
    assert_eq!(violation.after_pass.map(|(_, name)| name), Some("constfold"));
}
