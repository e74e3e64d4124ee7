//! Randomised tests of the registered passes: every pass alone, the level pipelines, and all
//! passes in sequence must keep random modules valid (verifier after every pass) and — for
//! runs that do not trap (a trap is undefined behaviour the passes may change) — keep what
//! they print and return.
//!
//! Two sources of modules: the IR's own random modules (forward CFGs with phis, calls,
//! memory, every opcode) and, for `mem2reg`, random functions over scalar stack slots with
//! arbitrary CFGs — diamonds, empty arms, back edges, irreducible loops, blocks without
//! predecessors — kept finite by a fuel variable that every block with a back edge decrements.

use cranelift_entity::EntityRef;

use super::{OptLevel, PassInfo, ir_passes, manager};
use crate::config::Config;
use crate::frontend::hir::Builtin;
use crate::ir::interp::{InterpConfig, InterpResult, run};
use crate::ir::random_tests::{Rng, random_module};
use crate::ir::{Block, Callee, Function, InstData, IntCC, Module, Opcode, Type, Value, print_module};

fn pipelines() -> Vec<(String, Vec<&'static PassInfo>)> {
    let mut out: Vec<(String, Vec<&'static PassInfo>)> =
        ir_passes().map(|p| (p.name.to_string(), vec![p])).collect();
    out.push(("-O1".into(), OptLevel::O1.pipeline()));
    out.push(("-O2".into(), OptLevel::O2.pipeline()));
    out.push(("all".into(), ir_passes().chain(ir_passes()).collect()));
    out
}

fn check_preserved(m: &Module, round: usize, config: &InterpConfig) -> usize {
    let before = run(m, b"", config).expect("runnable");
    let opts = Config { verify_each: true, ..Config::default() };
    let mut compared = 0;
    for (name, pipeline) in pipelines() {
        let mut opt = m.clone();
        if let Err(e) = manager::run(&mut opt, &opts.with_pipeline(pipeline), None) {
            panic!("round {round}, {name}: {e}\n{}", print_module(m));
        }
        if before.outcome.trap.is_some() {
            continue;
        }
        let after: InterpResult = run(&opt, b"", config).expect("runnable");
        assert!(
            before.outcome.same_behaviour(&after.outcome),
            "round {round}, {name}: {:?} became {:?}\n--- before ---\n{}--- after ---\n{}",
            before.outcome,
            after.outcome,
            print_module(m),
            print_module(&opt)
        );
        compared += 1;
    }
    compared
}

#[test]
fn passes_preserve_random_modules() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let config = InterpConfig { max_steps: 100_000, ..InterpConfig::default() };
    let mut compared = 0;
    for round in 0..300 {
        compared += check_preserved(&random_module(&mut rng), round, &config);
    }
    assert!(compared > 1000, "only {compared} comparisons of non-trapping runs");
}

/// Number of scalar variables of a random slot function; variable 0 is the fuel.
const VARS: usize = 4;

/// A `main` over `VARS` i32 stack slots and a random CFG (see the module documentation).
fn random_slot_function(rng: &mut Rng) -> Function {
    let mut f = Function::new("main", &[], Type::I32);
    let n = 2 + rng.below(9);
    let blocks: Vec<Block> = (0..n).map(|_| f.create_block()).collect();
    let exit = blocks[n - 1];
    let entry = blocks[0];
    let slots: Vec<Value> = (0..VARS).map(|_| f.append_value(entry, InstData::alloca(Type::I32, 1))).collect();
    let fuel = f.iconst(12 + rng.below(20) as i32);
    f.append(entry, InstData::store(slots[0], fuel));
    for &slot in &slots[1..] {
        // Most variables start initialised; an uninitialised one traps at -O0 when read
        // (such runs are not compared), after mem2reg it is undef.
        if rng.below(5) != 0 {
            let v = f.iconst(rng.below(10) as i32);
            f.append(entry, InstData::store(slot, v));
        }
    }
    for (i, &b) in blocks.iter().enumerate() {
        // Often nothing at all: empty blocks and, after mem2reg, blocks of phis only.
        let count = if rng.below(3) == 0 { 0 } else { rng.below(5) };
        for _ in 0..count {
            let var = slots[1 + rng.below(VARS - 1)];
            match rng.below(4) {
                0 => {
                    let v = f.iconst(rng.below(100) as i32 - 50);
                    f.append(b, InstData::store(var, v));
                }
                1 => {
                    let other = slots[1 + rng.below(VARS - 1)];
                    let x = f.append_value(b, InstData::load(var, Type::I32));
                    let y = f.append_value(b, InstData::load(other, Type::I32));
                    let op = [Opcode::Add, Opcode::Sub, Opcode::Mul][rng.below(3)];
                    let r = f.append_value(b, InstData::binary(op, x, y, Type::I32));
                    f.append(b, InstData::store(var, r));
                }
                2 => {
                    let x = f.append_value(b, InstData::load(var, Type::I32));
                    f.append(b, InstData::call(Callee::Builtin(Builtin::PutInt), &[x], Type::Void));
                }
                _ => {
                    let sum = f.iconst(0);
                    let mut acc = sum;
                    for &s in &slots[1..] {
                        let x = f.append_value(b, InstData::load(s, Type::I32));
                        acc = f.append_value(b, InstData::binary(Opcode::Add, acc, x, Type::I32));
                    }
                    f.append(b, InstData::call(Callee::Builtin(Builtin::PutInt), &[acc], Type::Void));
                }
            }
        }
        if b == exit {
            let r = slots[1 + rng.below(VARS - 1)];
            let v = f.append_value(b, InstData::load(r, Type::I32));
            f.append(b, InstData::ret(Some(v)));
        } else if rng.below(2) == 0 {
            // A loop block: burns one unit of fuel and goes anywhere but the entry — back
            // edges, self loops, irreducible cycles — or to the exit once the fuel is gone.
            // Every cycle passes through such a block, so every run ends.
            let fv = f.append_value(b, InstData::load(slots[0], Type::I32));
            let one = f.iconst(1);
            let left = f.append_value(b, InstData::binary(Opcode::Sub, fv, one, Type::I32));
            f.append(b, InstData::store(slots[0], left));
            let zero = f.iconst(0);
            let more = f.append_value(b, InstData::icmp(IntCC::Gt, left, zero));
            let target = blocks[1 + rng.below(n - 1)];
            f.append(b, InstData::br(more, target, exit));
        } else {
            // A forward block: a jump or a branch on a variable to later blocks (diamonds,
            // joins, empty arms).
            let mut forward = || blocks[i + 1 + rng.below(n - i - 1)];
            let (t, e) = (forward(), forward());
            if t == e || rng.below(3) == 0 {
                f.append(b, InstData::jump(t));
            } else {
                let var = slots[1 + rng.below(VARS - 1)];
                let x = f.append_value(b, InstData::load(var, Type::I32));
                let k = f.iconst(rng.below(10) as i32);
                let c = f.append_value(b, InstData::icmp(IntCC::Lt, x, k));
                f.append(b, InstData::br(c, t, e));
            }
        }
    }
    f
}

#[test]
fn passes_preserve_random_slot_programs() {
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let config = InterpConfig::default();
    let mut compared = 0;
    let mut promoted_loops = 0;
    for round in 0..1000 {
        let mut m = Module::new();
        m.add_function(random_slot_function(&mut rng));
        compared += check_preserved(&m, round, &config);
        let mut opt = m.clone();
        manager::run(&mut opt, &Config::level(OptLevel::O2), None).expect("pipeline runs");
        let main = opt.func(crate::ir::FuncRef::new(0));
        let has_allocas = main.all_insts().any(|(_, i)| matches!(main.opcode(i), Opcode::Alloca { .. }));
        assert!(!has_allocas, "round {round}: mem2reg left an alloca\n{}", print_module(&opt));
        // Promotion across loops is counted after O1: at O2 the loop passes fully unroll the
        // fuel-counting loops with constant trip counts, which removes their phis.
        let mut o1 = m.clone();
        manager::run(&mut o1, &Config::level(OptLevel::O1), None).expect("pipeline runs");
        let main1 = o1.func(crate::ir::FuncRef::new(0));
        if main1.all_insts().any(|(_, i)| main1.opcode(i) == Opcode::Phi) {
            promoted_loops += 1;
        }
    }
    assert!(compared > 4000 && promoted_loops > 150, "compared {compared}, with phis {promoted_loops}");
}

/// Removes the terminator of every function's entry block and says it changed nothing: the
/// verifier after it must still see the broken function (what it checks is chosen by the
/// functions' edit stamps, not by the pass's answer).
struct BreaksAndDeniesIt;

impl super::FunctionPass for BreaksAndDeniesIt {
    fn run(&self, func: &mut Function, _cx: &mut super::FunctionCx<'_>) -> bool {
        let entry = func.entry();
        if let Some(last) = func.last_inst(entry) {
            func.detach_inst(last);
        }
        false
    }
}

static BREAKS_AND_DENIES_IT: PassInfo = PassInfo {
    name: "test-breaks-and-denies-it",
    description: "removes the entry block's terminator, reports no change",
    catalogue: None,
    body: super::PassBody::Function(&BreaksAndDeniesIt),
};

#[test]
fn a_pass_denying_its_change_is_still_verified() {
    let text = "func @f(%x: i32) -> i32 {\nentry:\n    ret %x\n}\n\nfunc @main() -> i32 {\nentry:\n    %r = call i32 @f(3)\n    ret %r\n}\n";
    let module = crate::ir::parse_module(text);
    let mut module = match module {
        Ok(m) => m,
        Err(e) => panic!("test module: {e}\n{text}"),
    };
    let opts = Config { verify_each: true, ..Config::default() }.with_pipeline(vec![&BREAKS_AND_DENIES_IT]);
    let err = manager::run(&mut module, &opts, None).expect_err("the broken functions are verified");
    let message = err.to_string();
    assert!(message.contains("test-breaks-and-denies-it"), "{message}");
    assert!(message.contains("@f") && message.contains("@main"), "both functions are reported: {message}");
}
