//! The check executor: its caches (shared pipeline prefixes, dedup by IR and assembly hash)
//! and its runs in flight change what a check costs, never what it finds.

use harness::campaign::config::{Plan, Strategy};
use harness::campaign::{program_of, program_seed};
use sysy_check::executor::prefix::{MAX_SNAPSHOTS, Optimised, PrefixCache, run_order, uncached};
use sysy_check::executor::watch::Unwatched;
use sysy_check::executor::{Executor, Settings};
use sysy_check::failure::{Expected, Failure};
use sysy_check::qemu::{CostMode, Runner};
use sysy_check::steps;
use sysy_check::subject::{Case, Limits, Subject};
use sysyc::config::Config;
use sysyc::ir::Module;

fn lowered(index: u64) -> Module {
    let (_, p) = program_of(11, true, index);
    let subject = Subject::from_ast("prog.sy", &p.unit, &p.source, &p.stdin).expect("generated programs are valid");
    steps::lower(&subject).expect("lowering")
}

fn outcome(result: &Result<Optimised, Failure>) -> Result<(String, String), String> {
    match result {
        Ok(o) => Ok((o.ir_hash.clone(), o.changed_bits())),
        Err(f) => Err(format!("{:?} {:?} {}", f.kind, f.stage, f.detail)),
    }
}

/// Every strategy's configurations, run through the cache in the campaign's order and
/// in the planned order, give each exactly the IR and changed bits of an uncached run,
/// while running fewer pass applications.
#[test]
fn prefix_cache_is_exact() {
    let over = ["constfold", "gvn", "licm", "arm-peephole"].map(String::from);
    let plan = Plan::new(&Strategy::ALL, &over, 12).expect("plan");
    for index in 0..4 {
        let module = lowered(index);
        let planned = plan.for_program(program_seed(11, index));
        let configs: Vec<Config> = planned.iter().map(|p| p.config.clone()).collect();
        let expected: Vec<_> = configs.iter().map(|c| outcome(&uncached(&module, c))).collect();
        let planned_order: Vec<usize> = (0..configs.len()).collect();
        for order in [run_order(&configs), planned_order] {
            let run: Vec<&Config> = order.iter().map(|&i| &configs[i]).collect();
            let mut cache = PrefixCache::new(&module, &run);
            for (k, &i) in order.iter().enumerate() {
                let got = outcome(&cache.optimise(k, &configs[i]));
                assert_eq!(got, expected[i], "program {index}, {}", planned[i].label);
                assert!(cache.kept() <= MAX_SNAPSHOTS);
            }
            assert_eq!(cache.kept(), 0, "every state is dropped after its last use");
            let total: usize = configs.iter().map(|c| c.pipeline.len()).sum();
            assert!(cache.positions_run * 2 < total, "{} of {total} positions ran", cache.positions_run);
        }
    }
}

/// What one check found, without the times.
fn found(check: &sysy_check::executor::Check) -> String {
    let verdict = match &check.verdict {
        Ok(()) => "pass".to_string(),
        Err(f) => format!("{} {} {}", f.kind, f.stage, f.detail),
    };
    let insns = check.cost.as_ref().map(|c| (c.counts.total, c.counts.program.total(), c.cycles.total));
    format!("{verdict} ir={} asm={} changed={} insns={insns:?}", check.ir_hash, check.asm_hash, check.passes_changed)
}

/// The campaign's executor (every cache, runs in flight, the self-tests) and the plain one
/// (triage's: nothing shared, runs on the caller's thread) find the same for every
/// configuration of every strategy; the campaign's shares some of the work.
#[test]
fn caches_and_runs_in_flight_change_no_check() {
    let runner = Runner::new(CostMode::Measure).expect("qemu-arm and the cost plugin");
    let over = ["constfold", "gvn", "licm", "arm-peephole"].map(String::from);
    let plan = Plan::new(&[Strategy::OLevels, Strategy::Singles, Strategy::Random], &over, 4).expect("plan");
    let campaign = Settings { caches: true, runs_in_flight: 3, encoder_sample: 1, dataflow: true, ..Settings::plain(Limits::GENERATED, true) };
    let campaign = Executor::new(campaign, Some(runner.clone()));
    let plain = Executor::new(Settings::plain(Limits::GENERATED, true), Some(runner));
    let mut shared = 0;
    for index in 0..3 {
        let (seed, p) = program_of(11, true, index);
        let subject = Subject::from_ast("prog.sy", &p.unit, &p.source, &p.stdin).expect("generated programs are valid");
        let case = Case::with_truth(subject, &Limits::GENERATED).expect("generated programs have a truth");
        let configs: Vec<Config> = plan.for_program(seed).into_iter().map(|p| p.config).collect();
        let cached = campaign.check(&case, &configs, seed, &Unwatched).expect("lowers");
        let uncached = plain.check(&case, &configs, seed, &Unwatched).expect("lowers");
        assert_eq!(cached.checks.len(), configs.len());
        for (i, (a, b)) in cached.checks.iter().zip(&uncached.checks).enumerate() {
            assert_eq!(found(a), found(b), "program {index}, configuration {}", configs[i]);
            assert!(!b.ir_shared && !b.asm_shared, "the plain executor shares nothing");
            shared += usize::from(a.ir_shared || a.asm_shared);
        }
        let oracles: Vec<&str> = cached.selftests.iter().map(|t| t.oracle).collect();
        assert_eq!(oracles, ["encoder", "dataflow"]);
        assert!(cached.selftests.iter().all(|t| t.failure.is_none() && t.checked > 0), "every text compared, every function solved");
    }
    assert!(shared > 0, "singles share the back end of their unchanged IR");
}

/// A case the configuration miscompiles fails the same way through every client's settings.
#[test]
fn a_wrong_expectation_is_the_same_failure_cached_or_not() {
    let subject = Subject::parse("t.sy", "int main() { putint(6 * 7); return 3; }", b"").expect("valid");
    let case = Case { subject, expected: Expected::OutFile(b"41\n3\n".to_vec()) };
    let runner = Runner::new(CostMode::Off).expect("qemu-arm");
    let configs = [Config::level(sysyc::passes::OptLevel::O0), Config::level(sysyc::passes::OptLevel::O2)];
    let campaign = Settings { caches: true, runs_in_flight: 3, ..Settings::plain(Limits::GENERATED, true) };
    for settings in [campaign, Settings::plain(Limits::GENERATED, true), Settings { interpret: false, ..Settings::plain(Limits::GENERATED, true) }] {
        let interpret = settings.interpret;
        let checked = Executor::new(settings, Some(runner.clone())).check(&case, &configs, 0, &Unwatched).expect("lowers");
        for check in &checked.checks {
            let failure = check.verdict.as_ref().expect_err("41 is not 42");
            assert_eq!(failure.kind, sysy_check::failure::FailureKind::WrongOutput);
            let stage = if interpret { sysy_check::failure::Stage::IrInterp } else { sysy_check::failure::Stage::Qemu };
            assert_eq!(failure.stage, stage, "{}", failure.detail);
        }
    }
}

#[test]
fn configurations_the_cache_was_not_made_for_run_uncached() {
    let module = lowered(0);
    let o2 = Config { verify_each: true, ..Config::level(sysyc::passes::OptLevel::O2) };
    let mut cache = PrefixCache::new(&module, &[&o2]);
    let other = Config { verify_each: false, ..o2.clone() };
    let expected = outcome(&uncached(&module, &o2));
    assert_eq!(outcome(&cache.optimise(0, &other)), expected);
    assert_eq!(cache.positions_run, 0);
    assert_eq!(outcome(&cache.optimise(0, &o2)), expected);
    assert_eq!(cache.positions_run, o2.pipeline.len());
}
