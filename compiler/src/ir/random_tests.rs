//! Randomised whole-module tests: modules built through the `Function` API from random
//! choices (every opcode, random CFGs with phis, calls, memory) must verify, print and
//! parse back to the same text, and run to the same outcome before and after the trip.

use cranelift_entity::EntityRef;

use super::instr::{Callee, FloatCC, InstData, IntCC, Opcode};
use super::interp::{InterpConfig, run};
use super::{Block, FuncRef, Function, GlobalData, Module, Type, Value, parse_module, print_module, verify_module};
use crate::frontend::hir::Builtin;
pub(crate) use crate::test_rng::Rng;


/// Values of each type usable at the current point of a block.
#[derive(Default, Clone)]
struct Pool {
    ints: Vec<Value>,
    floats: Vec<Value>,
    bools: Vec<Value>,
    ptrs: Vec<Value>,
}

fn int_operand(rng: &mut Rng, f: &mut Function, pool: &Pool) -> Value {
    if rng.below(4) == 0 || pool.ints.is_empty() {
        let c = [0, 1, -1, 2, 7, 100, i32::MIN, i32::MAX][rng.below(8)];
        f.iconst(c)
    } else {
        rng.pick(&pool.ints)
    }
}

fn float_operand(rng: &mut Rng, f: &mut Function, pool: &Pool) -> Value {
    if rng.below(4) == 0 || pool.floats.is_empty() {
        let c = [0.0, -0.0, 1.5, -2.25, f32::INFINITY, f32::NAN, 1e-40][rng.below(7)];
        f.fconst(c)
    } else {
        rng.pick(&pool.floats)
    }
}

/// Appends random non-terminator instructions to `b`, growing `pool`.
fn fill_block(rng: &mut Rng, f: &mut Function, b: Block, pool: &mut Pool, callees: &[(FuncRef, usize)]) {
    for _ in 0..rng.below(8) {
        match rng.below(12) {
            0..=2 => {
                let op = rng.pick(&[Opcode::Add, Opcode::Sub, Opcode::Mul, Opcode::SDiv, Opcode::SRem]);
                let (a, c) = (int_operand(rng, f, pool), int_operand(rng, f, pool));
                pool.ints.push(f.append_value(b, InstData::binary(op, a, c, Type::I32)));
            }
            3 => {
                let op = rng.pick(&[Opcode::FAdd, Opcode::FSub, Opcode::FMul, Opcode::FDiv]);
                let (a, c) = (float_operand(rng, f, pool), float_operand(rng, f, pool));
                pool.floats.push(f.append_value(b, InstData::binary(op, a, c, Type::F32)));
            }
            4 => {
                let (a, c) = (int_operand(rng, f, pool), int_operand(rng, f, pool));
                let cc = rng.pick(&IntCC::ALL);
                pool.bools.push(f.append_value(b, InstData::icmp(cc, a, c)));
            }
            5 => {
                let (a, c) = (float_operand(rng, f, pool), float_operand(rng, f, pool));
                let cc = rng.pick(&FloatCC::ALL);
                pool.bools.push(f.append_value(b, InstData::fcmp(cc, a, c)));
            }
            6 => {
                let x = float_operand(rng, f, pool);
                pool.ints.push(f.append_value(b, InstData::unary(Opcode::FpToSi, x, Type::I32)));
                let y = int_operand(rng, f, pool);
                pool.floats.push(f.append_value(b, InstData::unary(Opcode::SiToFp, y, Type::F32)));
                pool.floats.push(f.append_value(b, InstData::unary(Opcode::FNeg, x, Type::F32)));
            }
            7 if !pool.bools.is_empty() => {
                let c = rng.pick(&pool.bools);
                pool.ints.push(f.append_value(b, InstData::unary(Opcode::Zext, c, Type::I32)));
                let (x, y) = (int_operand(rng, f, pool), int_operand(rng, f, pool));
                pool.ints.push(f.append_value(b, InstData::new(Opcode::Select, &[c, x, y], &[], Type::I32)));
            }
            8 if !pool.ptrs.is_empty() => {
                // Index in [-1, 4]: mostly in bounds of the 4-word objects, sometimes not.
                let p = rng.pick(&pool.ptrs);
                let idx = f.iconst(rng.below(6) as i32 - 1);
                let q = f.append_value(b, InstData::gep(p, idx, 4));
                if rng.below(2) == 0 {
                    let v = int_operand(rng, f, pool);
                    f.append(b, InstData::store(q, v));
                } else {
                    pool.ints.push(f.append_value(b, InstData::load(q, Type::I32)));
                }
            }
            9 if !callees.is_empty() => {
                let (callee, nparams) = rng.pick(callees);
                let args: Vec<Value> = (0..nparams).map(|_| int_operand(rng, f, pool)).collect();
                pool.ints.push(f.append_value(b, InstData::call(Callee::Func(callee), &args, Type::I32)));
            }
            10 => {
                let v = int_operand(rng, f, pool);
                f.append(b, InstData::call(Callee::Builtin(Builtin::PutInt), &[v], Type::Void));
                let w = float_operand(rng, f, pool);
                f.append(b, InstData::call(Callee::PutF(crate::ir::StrId::new(0)), &[v, w], Type::Void));
            }
            _ => {
                let v = int_operand(rng, f, pool);
                f.append(b, InstData::call(Callee::Builtin(Builtin::PutCh), &[v], Type::Void));
            }
        }
    }
}

/// A function `(i32 × nparams) -> i32` over a random CFG. Values cross blocks only through
/// phis (fed from each predecessor's end-of-block pool), so SSA holds by construction.
fn random_function(rng: &mut Rng, name: &str, nparams: usize, callees: &[(FuncRef, usize)], global: crate::ir::GlobalRef) -> Function {
    let mut f = Function::new(name, &vec![Type::I32; nparams], Type::I32);
    let n = 1 + rng.below(6);
    let blocks: Vec<Block> = (0..n).map(|_| f.create_block()).collect();
    // Terminator shape first, so every block knows its predecessors.
    let mut succs: Vec<Vec<Block>> = Vec::new();
    for i in 0..n {
        // Forward edges only: every run terminates (loops are covered by the hand-written tests).
        let forward: Vec<Block> = blocks[i + 1..].to_vec();
        let s = match (forward.is_empty(), rng.below(3)) {
            (true, _) | (false, 0) => vec![],
            (false, 1) => vec![rng.pick(&forward)],
            _ => vec![rng.pick(&forward), rng.pick(&forward)],
        };
        succs.push(s);
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, s) in succs.iter().enumerate() {
        for t in s {
            preds[blocks.iter().position(|x| x == t).unwrap()].push(i);
        }
    }
    let mut end_pools: Vec<Pool> = Vec::new();
    let mut phi_fixups: Vec<(Value, usize)> = Vec::new(); // (phi, index of its block)
    for i in 0..n {
        let b = blocks[i];
        let mut pool = Pool::default();
        if i == 0 {
            pool.ints.extend(f.params.clone());
            let a = f.append_value(b, InstData::alloca(Type::I32, 4));
            f.append(b, InstData::new(Opcode::MemZero { words: 4 }, &[a], &[], Type::Void));
            let g = f.global_addr(global);
            pool.ptrs.extend([a, g]);
        } else {
            for _ in 0..1 + rng.below(2) {
                let phi = f.append_value(b, InstData::phi(Type::I32, &[]));
                phi_fixups.push((phi, i));
                pool.ints.push(phi);
            }
            // Pointers reach later blocks as the entry block's values (the entry dominates all).
            pool.ptrs.extend(end_pools[0].ptrs.clone());
        }
        fill_block(rng, &mut f, b, &mut pool, callees);
        match succs[i].as_slice() {
            [] => {
                let v = int_operand(rng, &mut f, &pool);
                f.append(b, InstData::ret(Some(v)));
            }
            [t] => {
                f.append(b, InstData::jump(*t));
            }
            [t, e] => {
                let (x, y) = (int_operand(rng, &mut f, &pool), int_operand(rng, &mut f, &pool));
                let c = f.append_value(b, InstData::icmp(IntCC::Lt, x, y));
                f.append(b, InstData::br(c, *t, *e));
            }
            _ => unreachable!("at most two successors"),
        }
        end_pools.push(pool);
    }
    // Phi operands: one per incoming edge, from the predecessor's pool (same value for
    // repeated edges, as the verifier requires).
    for (phi, i) in phi_fixups {
        let inst = f.def_inst(phi).unwrap();
        let mut chosen: Vec<(usize, Value)> = Vec::new();
        for &p in &preds[i] {
            let v = match chosen.iter().find(|c| c.0 == p) {
                Some(&(_, v)) => v,
                None => {
                    let pool = end_pools[p].clone();
                    let v = int_operand(rng, &mut f, &pool);
                    chosen.push((p, v));
                    v
                }
            };
            f.push_phi_incoming(inst, blocks[p], v);
        }
    }
    f
}

pub(crate) fn random_module(rng: &mut Rng) -> Module {
    let mut m = Module::new();
    let g = m.globals.push(GlobalData { name: "g".into(), elem: Type::I32, words: 4, init: vec![(1, crate::ir::Const::Int(5))], is_const: false });
    m.strings.push(b"<%d %.3f>".to_vec());
    let mut callees: Vec<(FuncRef, usize)> = Vec::new();
    for k in 0..rng.below(3) {
        let nparams = rng.below(3);
        let f = random_function(rng, &format!("f{k}"), nparams, &callees, g);
        callees.push((m.add_function(f), nparams));
    }
    let main = random_function(rng, "main", 0, &callees, g);
    m.add_function(main);
    m
}

#[test]
fn random_modules_verify_round_trip_and_run_alike() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let config = InterpConfig { max_steps: 100_000, ..InterpConfig::default() };
    let mut finished = 0;
    let mut trapped = 0;
    for round in 0..300 {
        let m = random_module(&mut rng);
        let text = print_module(&m);
        if let Err(errors) = verify_module(&m) {
            panic!("round {round}: {errors:#?}\n{text}");
        }
        let parsed = parse_module(&text).unwrap_or_else(|e| panic!("round {round}: {e}\n{text}"));
        assert_eq!(print_module(&parsed), text, "round {round}");
        assert!(verify_module(&parsed).is_ok());
        let before = run(&m, b"", &config).unwrap();
        let after = run(&parsed, b"", &config).unwrap();
        assert_eq!(before, after, "round {round}\n{text}");
        assert_eq!(before.outcome.steps, before.cost.total());
        if before.outcome.trap.is_some() {
            trapped += 1;
        } else {
            finished += 1;
        }
    }
    assert!(finished > 50 && trapped > 20, "finished {finished}, trapped {trapped}");
}
