//! Randomised soundness test: random modules full of array traffic (locals, globals, array
//! parameters, rows, pointer induction variables, calls that read and write through their
//! parameters, `getarray`/`putarray`, `memzero`, loops and branches) are transformed using
//! the analyses' answers, and the IR interpreter must produce the same outcome before and
//! after. Each transformation trusts a different kind of answer:
//!
//! * load forwarding — [`MemDep::Store`] / [`MemDep::Zero`] / [`MemDep::Load`] (must-alias,
//!   the dominator walk, the regions between dominators, call mod/ref);
//! * dead-store elimination within a block — `must_overwrite` and "may read" (mod/ref of
//!   loads and calls) in [`Context::SameIteration`];
//! * moving loads and stores up their block past independent memory operations and calls —
//!   `alias == No` and call mod/ref in [`Context::SameIteration`];
//! * hoisting loads out of loops — [`MemDepQuery::first_writer`] in
//!   [`Context::AcrossIterations`].
//!
//! Every address the generator builds is in bounds whenever it is computed and every array
//! is zeroed first, so the transformations may also speculate loads.

use crate::analysis::alias::{AliasAnalysis, AliasResult, Context, MemLoc, ModRef};
use crate::analysis::memdep::{MemDep, MemDepQuery};
use crate::analysis::{ControlFlowGraph, DomTree, FuncInfo, LoopForest};
use crate::frontend::hir::Builtin;
use crate::test_rng::Rng;
use crate::ir::interp::{InterpConfig, run};
use crate::ir::{
    Block, Callee, Const, FuncRef, Function, GlobalData, GlobalRef, Inst, InstData, IntCC, Module, Opcode, Type,
    Value, print_module, verify_module,
};


/// Pointers and the number of words from them that are in bounds.
type Bases = Vec<(Value, u32)>;

/// What ops in one block may use.
#[derive(Clone, Default)]
struct Scope {
    bases: Bases,
    /// Like `bases`, but only to be read (the `const` global).
    readonly: Bases,
    /// Non-negative `i32` values usable as indices, with their maximum.
    indices: Vec<(Value, u32)>,
    /// Values to store or print.
    ints: Vec<Value>,
    /// Element pointers built so far (writable bases only), for reuse.
    elems: Vec<Value>,
}

struct Callees {
    /// `h0(p: ptr, q: ptr, k: i32) -> i32` — needs 12 words behind `p`, `q`; `k` in 0..=3.
    h0: Option<FuncRef>,
    /// `h1(r: ptr) -> i32` — needs 4 words behind `r`.
    h1: Option<FuncRef>,
}

struct Gen<'r> {
    rng: &'r mut Rng,
    globals: [GlobalRef; 4],
    /// Source of distinct constants, so that a wrongly forwarded or lost value shows.
    next_const: i32,
}

impl Gen<'_> {
    /// A pointer to a random in-bounds word of a random base (possibly a read-only one).
    fn element(&mut self, f: &mut Function, b: Block, scope: &mut Scope, for_read: bool) -> Value {
        if !scope.elems.is_empty() && self.rng.below(3) == 0 {
            return self.rng.pick(&scope.elems);
        }
        let readonly = for_read && !scope.readonly.is_empty() && self.rng.below(5) == 0;
        let (base, words) = if readonly {
            self.rng.pick(&scope.readonly)
        } else {
            self.rng.pick(&scope.bases)
        };
        let fitting: Vec<(Value, u32)> = scope.indices.iter().copied().filter(|&(_, max)| 2 * max < words).collect();
        let index = match self.rng.below(4) {
            1 | 2 if !fitting.is_empty() => {
                let (v, max) = self.rng.pick(&fitting);
                let scaled = if self.rng.below(3) == 0 {
                    let two = f.iconst(2);
                    f.append_value(b, InstData::binary(Opcode::Mul, v, two, Type::I32))
                } else {
                    v
                };
                let used = if scaled == v { max } else { 2 * max };
                let c = self.rng.below((words - used) as usize) as i32;
                if c == 0 && self.rng.below(2) == 0 {
                    scaled
                } else {
                    let cv = f.iconst(c);
                    f.append_value(b, InstData::binary(Opcode::Add, scaled, cv, Type::I32))
                }
            }
            3 if !fitting.is_empty() => {
                // (max + c) - v, in [c, max + c].
                let (v, max) = self.rng.pick(&fitting);
                let c = self.rng.below((words - max) as usize) as i32;
                let top = f.iconst(max as i32 + c);
                f.append_value(b, InstData::binary(Opcode::Sub, top, v, Type::I32))
            }
            _ => f.iconst(self.rng.below(words as usize) as i32),
        };
        let p = f.append_value(b, InstData::gep(base, index, 4));
        if !readonly {
            scope.elems.push(p);
        }
        p
    }

    /// A value to store or print: a fresh constant, a loaded value, or (in loops) one that
    /// differs between iterations.
    fn int_operand(&mut self, f: &mut Function, b: Block, scope: &Scope) -> Value {
        self.next_const += 1;
        let fresh = f.iconst(self.next_const);
        match self.rng.below(4) {
            0 if !scope.ints.is_empty() => self.rng.pick(&scope.ints),
            1 if !scope.indices.is_empty() => {
                let (i, _) = self.rng.pick(&scope.indices);
                f.append_value(b, InstData::binary(Opcode::Add, i, fresh, Type::I32))
            }
            _ => fresh,
        }
    }

    /// A base with at least `words` words.
    fn base_with(&mut self, scope: &Scope, words: u32) -> Option<Value> {
        let ok: Vec<Value> = scope.bases.iter().filter(|&&(_, w)| w >= words).map(|&(v, _)| v).collect();
        (!ok.is_empty()).then(|| self.rng.pick(&ok))
    }

    /// Appends random memory traffic to `b`; loaded values join `scope.ints`.
    fn ops(&mut self, f: &mut Function, b: Block, scope: &mut Scope, callees: &Callees, count: usize) {
        for _ in 0..count {
            match self.rng.below(14) {
                0..=3 => {
                    let p = self.element(f, b, scope, false);
                    let v = self.int_operand(f, b, scope);
                    f.append(b, InstData::store(p, v));
                }
                4..=7 => {
                    let p = self.element(f, b, scope, true);
                    let v = f.append_value(b, InstData::load(p, Type::I32));
                    scope.ints.push(v);
                    if self.rng.below(3) == 0 {
                        f.append(b, InstData::call(Callee::Builtin(Builtin::PutInt), &[v], Type::Void));
                    }
                }
                8 if callees.h0.is_some() => {
                    let (Some(p), Some(q)) = (self.base_with(scope, 12), self.base_with(scope, 12)) else { continue };
                    let small: Vec<Value> =
                        scope.indices.iter().filter(|&&(_, m)| m <= 3).map(|&(v, _)| v).collect();
                    let k = if small.is_empty() || self.rng.below(2) == 0 {
                        f.iconst(self.rng.below(4) as i32)
                    } else {
                        self.rng.pick(&small)
                    };
                    let callee = Callee::Func(callees.h0.expect("checked"));
                    let r = f.append_value(b, InstData::call(callee, &[p, q, k], Type::I32));
                    scope.ints.push(r);
                }
                9 if callees.h1.is_some() => {
                    let Some(r) = self.base_with(scope, 4) else { continue };
                    let callee = Callee::Func(callees.h1.expect("checked"));
                    let v = f.append_value(b, InstData::call(callee, &[r], Type::I32));
                    scope.ints.push(v);
                }
                10 => {
                    // getarray reads "2 x y": writes two words.
                    let Some(p) = self.base_with(scope, 2) else { continue };
                    f.append(b, InstData::call(Callee::Builtin(Builtin::GetArray), &[p], Type::I32));
                }
                11 => {
                    let (p, w) = self.rng.pick(&scope.bases);
                    let n = f.iconst(1 + self.rng.below(w as usize) as i32);
                    f.append(b, InstData::call(Callee::Builtin(Builtin::PutArray), &[n, p], Type::Void));
                }
                12 => {
                    let (p, w) = self.rng.pick(&scope.bases);
                    let start = self.rng.below(w as usize) as u32;
                    let words = 1 + self.rng.below((w - start) as usize) as u32;
                    let s = f.iconst(start as i32);
                    let at = f.append_value(b, InstData::gep(p, s, 4));
                    f.append(b, InstData::new(Opcode::MemZero { words }, &[at], &[], Type::Void));
                }
                _ => {
                    let v = self.int_operand(f, b, scope);
                    f.append(b, InstData::call(Callee::Builtin(Builtin::PutInt), &[v], Type::Void));
                }
            }
        }
    }

    /// `acc = Σ ints` (for helper results).
    fn sum(&mut self, f: &mut Function, b: Block, scope: &Scope) -> Value {
        let mut acc = f.iconst(0);
        for &v in &scope.ints {
            acc = f.append_value(b, InstData::binary(Opcode::Add, acc, v, Type::I32));
        }
        acc
    }

    /// Writable global bases, and the read-only one.
    fn global_bases(&self, f: &mut Function) -> (Bases, Bases) {
        let [g0, g1, s, k] = self.globals;
        (vec![(f.global_addr(g0), 16), (f.global_addr(g1), 16), (f.global_addr(s), 1)], vec![(f.global_addr(k), 16)])
    }

    fn h1(&mut self) -> Function {
        let mut f = Function::new("h1", &[Type::Ptr], Type::I32);
        let b = f.create_block();
        let mut scope = Scope { bases: vec![(f.params[0], 4)], ..Scope::default() };
        let n = 1 + self.rng.below(4);
        self.ops(&mut f, b, &mut scope, &Callees { h0: None, h1: None }, n);
        let acc = self.sum(&mut f, b, &scope);
        f.append(b, InstData::ret(Some(acc)));
        f
    }

    fn h0(&mut self, h1: FuncRef) -> Function {
        let mut f = Function::new("h0", &[Type::Ptr, Type::Ptr, Type::I32], Type::I32);
        let b = f.create_block();
        let (p, q, k) = (f.params[0], f.params[1], f.params[2]);
        let p4 = f.iconst(4);
        let p_plus = f.append_value(b, InstData::gep(p, p4, 4));
        let mut bases = vec![(p, 12), (q, 12), (p_plus, 8)];
        let (globals, readonly) = self.global_bases(&mut f);
        bases.extend(globals);
        let mut scope = Scope { bases, readonly, indices: vec![(k, 3)], ..Scope::default() };
        let n = 2 + self.rng.below(7);
        self.ops(&mut f, b, &mut scope, &Callees { h0: None, h1: Some(h1) }, n);
        let acc = self.sum(&mut f, b, &scope);
        f.append(b, InstData::ret(Some(acc)));
        f
    }

    /// `main`: zeroed local arrays, a counted loop (i = 0..4) with a branch inside and a
    /// pointer induction variable, then prints every array.
    fn main(&mut self, callees: &Callees) -> Function {
        let mut f = Function::new("main", &[], Type::I32);
        let [entry, header, then_b, else_b, latch, exit] = [(); 6].map(|_| f.create_block());
        let a0 = f.append_value(entry, InstData::alloca(Type::I32, 16));
        let a1 = f.append_value(entry, InstData::alloca(Type::I32, 16));
        let carry = f.append_value(entry, InstData::alloca(Type::I32, 16));
        for a in [a0, a1, carry] {
            f.append(entry, InstData::new(Opcode::MemZero { words: 16 }, &[a], &[], Type::Void));
        }
        let four = f.iconst(4);
        let row = f.append_value(entry, InstData::gep(a1, four, 4));
        let mut bases = vec![(a0, 16), (a1, 16), (row, 12)];
        let (globals, readonly) = self.global_bases(&mut f);
        bases.extend(globals);
        let mut scope = Scope { bases, readonly, ..Scope::default() };
        let n = self.rng.below(5);
        self.ops(&mut f, entry, &mut scope, callees, n);
        f.append(entry, InstData::jump(header));

        // header: i and a pointer induction variable into a0.
        let zero = f.iconst(0);
        let i = f.append_value(header, InstData::phi(Type::I32, &[(entry, zero)]));
        let pp = f.append_value(header, InstData::phi(Type::Ptr, &[(entry, a0)]));
        let mut hs = scope.clone();
        hs.indices.push((i, 3));
        hs.bases.push((pp, 12));
        // Sometimes a loop-carried dependence through an array nothing else touches: read
        // X[i + c] in the header, write X[i + c + d] in the latch (iteration k + d reads it).
        let carried = (self.rng.below(2) == 0).then(|| {
            let d = 1 + self.rng.below(3) as i32;
            (carry, self.rng.below(13 - d as usize) as i32, d)
        });
        if let Some((base, c, _)) = carried {
            let cv = f.iconst(c);
            let idx = f.append_value(header, InstData::binary(Opcode::Add, i, cv, Type::I32));
            let p = f.append_value(header, InstData::gep(base, idx, 4));
            let v = f.append_value(header, InstData::load(p, Type::I32));
            f.append(header, InstData::call(Callee::Builtin(Builtin::PutInt), &[v], Type::Void));
            hs.ints.push(v);
        }
        let n = self.rng.below(5);
        self.ops(&mut f, header, &mut hs, callees, n);
        let two = f.iconst(2);
        let cond_on = if hs.ints.is_empty() || self.rng.below(2) == 0 { i } else { self.rng.pick(&hs.ints) };
        let c = f.append_value(header, InstData::icmp(IntCC::Lt, cond_on, two));
        f.append(header, InstData::br(c, then_b, else_b));

        for arm in [then_b, else_b] {
            let mut s = hs.clone();
            let n = self.rng.below(5);
            self.ops(&mut f, arm, &mut s, callees, n);
            f.append(arm, InstData::jump(latch));
        }

        let mut ls = hs.clone();
        let one = f.iconst(1);
        let i1 = f.append_value(latch, InstData::binary(Opcode::Add, i, one, Type::I32));
        ls.indices.push((i1, 4));
        let n = self.rng.below(5);
        self.ops(&mut f, latch, &mut ls, callees, n);
        if let Some((base, c, d)) = carried {
            let cv = f.iconst(c + d);
            let idx = f.append_value(latch, InstData::binary(Opcode::Add, i, cv, Type::I32));
            let p = f.append_value(latch, InstData::gep(base, idx, 4));
            let v = self.int_operand(&mut f, latch, &ls);
            f.append(latch, InstData::store(p, v));
        }
        let pp_next = f.append_value(latch, InstData::gep(pp, one, 4));
        let more = f.append_value(latch, InstData::icmp(IntCC::Lt, i1, four));
        f.append(latch, InstData::br(more, header, exit));
        let (phi_i, phi_p) = (f.def_inst(i).expect("phi"), f.def_inst(pp).expect("phi"));
        f.push_phi_incoming(phi_i, latch, i1);
        f.push_phi_incoming(phi_p, latch, pp_next);

        let mut es = ls.clone();
        let n = self.rng.below(5);
        self.ops(&mut f, exit, &mut es, callees, n);
        let [g0, g1, s, _] = self.globals;
        let sixteen = f.iconst(16);
        for arr in [a0, a1, carry, f.global_addr(g0), f.global_addr(g1)] {
            f.append(exit, InstData::call(Callee::Builtin(Builtin::PutArray), &[sixteen, arr], Type::Void));
        }
        let s_addr = f.global_addr(s);
        let sv = f.append_value(exit, InstData::load(s_addr, Type::I32));
        f.append(exit, InstData::call(Callee::Builtin(Builtin::PutInt), &[sv], Type::Void));
        f.append(exit, InstData::ret(Some(zero)));
        f
    }
}

fn random_module(seed: u64) -> Module {
    let mut rng = Rng(seed);
    let mut m = Module::new();
    let global = |name: &str, words: u32, init: Vec<(u32, Const)>, is_const: bool| GlobalData {
        name: name.into(),
        elem: Type::I32,
        words,
        init,
        is_const,
    };
    let g0 = m.globals.push(global("g0", 16, vec![(3, Const::Int(30))], false));
    let g1 = m.globals.push(global("g1", 16, Vec::new(), false));
    let s = m.globals.push(global("s", 1, vec![(0, Const::Int(-4))], false));
    let k = m.globals.push(global("k", 16, vec![(0, Const::Int(11)), (5, Const::Int(55))], true));
    let mut g = Gen { rng: &mut rng, globals: [g0, g1, s, k], next_const: 100 };
    let h1 = g.h1();
    let h1 = m.add_function(h1);
    let h0 = g.h0(h1);
    let h0 = m.add_function(h0);
    let main = g.main(&Callees { h0: Some(h0), h1: Some(h1) });
    m.add_function(main);
    m
}

/// Runs a module and returns what is observable.
fn observe(m: &Module) -> (Vec<u8>, Option<u8>, Option<crate::runtime::TrapKind>) {
    let input = b"2 5 6 2 7 8 2 9 10 2 11 12 2 13 14 2 15 16 2 17 18 2 19 20 2 21 22 2 23 24 2 25 26 2 27 28 ".repeat(8);
    let config = InterpConfig { max_steps: 1_000_000, ..InterpConfig::default() };
    let r = run(m, &input, &config).expect("module runs");
    (r.outcome.stdout, r.outcome.exit_status, r.outcome.trap.map(|t| t.kind))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Transform {
    ForwardLoads,
    DeadStores,
    MoveUp,
    HoistLoads,
}

/// Applies `t` to every function of a copy of `m`; returns it and the number of changes.
fn transformed(m: &Module, t: Transform) -> (Module, usize) {
    let mut m = m.clone();
    let mut changes = 0;
    for f in m.func_refs() {
        let mut func = m.take_function(f);
        let info = FuncInfo::compute_with(&m, f, &func);
        changes += match t {
            Transform::ForwardLoads => forward_loads(&mut func, &info, f),
            Transform::DeadStores => dead_stores(&mut func, &info, f),
            Transform::MoveUp => move_up(&mut func, &info, f),
            Transform::HoistLoads => hoist_loads(&mut func, &info, f),
        };
        m.put_back(f, func);
    }
    (m, changes)
}

fn loads(func: &Function) -> Vec<Inst> {
    func.all_insts().map(|(_, i)| i).filter(|&i| func.opcode(i) == Opcode::Load).collect()
}

fn forward_loads(func: &mut Function, info: &FuncInfo, f: FuncRef) -> usize {
    let aa = AliasAnalysis::new(info, f, func);
    let cfg = ControlFlowGraph::compute(func);
    let dt = DomTree::compute(&cfg);
    let mut changes = 0;
    for load in loads(func) {
        let loc = MemLoc::word(func.args(load)[0]);
        let dep = MemDepQuery::new(func, &aa, &cfg, &dt).dependency(load, loc, true);
        let replacement = match dep {
            MemDep::Store(s) => func.args(s)[1],
            MemDep::Load(l) => func.result(l).expect("load result"),
            MemDep::Zero(_) => func.iconst(0),
            _ => continue,
        };
        let v = func.result(load).expect("load result");
        func.replace_all_uses(v, replacement);
        func.remove_inst(load);
        changes += 1;
    }
    changes
}

fn dead_stores(func: &mut Function, info: &FuncInfo, f: FuncRef) -> usize {
    let aa = AliasAnalysis::new(info, f, func);
    let stores: Vec<Inst> =
        func.all_insts().map(|(_, i)| i).filter(|&i| func.opcode(i) == Opcode::Store).collect();
    let mut changes = 0;
    for s in stores {
        let loc = MemLoc::word(func.args(s)[0]);
        let mut next = func.next_inst(s);
        while let Some(i) = next {
            if aa.must_overwrite(func, i, loc, Context::SameIteration) {
                func.remove_inst(s);
                changes += 1;
                break;
            }
            if aa.inst_may_read(func, i, loc, Context::SameIteration) {
                break;
            }
            next = func.next_inst(i);
        }
    }
    changes
}

/// Moves every load and store as far up its block as the analyses allow: not above the
/// definition of an operand, nor above an instruction that may write what it reads or
/// (for a store) may read or write what it writes.
fn move_up(func: &mut Function, info: &FuncInfo, f: FuncRef) -> usize {
    let aa = AliasAnalysis::new(info, f, func);
    let mut changes = 0;
    let accesses: Vec<Inst> = func.all_insts().map(|(_, i)| i).filter(|&i| aa.access(func, i).is_some()).collect();
    for inst in accesses {
        let acc = aa.access(func, inst).expect("load or store");
        let mut target = None;
        let mut pos = inst;
        while let Some(prev) = func.prev_inst(pos) {
            if func.opcode(prev) == Opcode::Phi || func.result(prev).is_some_and(|r| func.args(inst).contains(&r)) {
                break;
            }
            let conflict = match aa.access(func, prev) {
                Some(pa) => {
                    (pa.is_write || acc.is_write)
                        && aa.alias(func, pa.loc, acc.loc, Context::SameIteration) != AliasResult::No
                }
                None => {
                    let mr = aa.mod_ref(func, prev, acc.loc, Context::SameIteration);
                    if acc.is_write { mr != ModRef::None } else { mr.may_write() }
                }
            };
            if conflict {
                break;
            }
            target = Some(prev);
            pos = prev;
        }
        if let Some(t) = target {
            func.detach_inst(inst);
            func.insert_inst_before(t, inst);
            changes += 1;
        }
    }
    changes
}

fn hoist_loads(func: &mut Function, info: &FuncInfo, f: FuncRef) -> usize {
    let aa = AliasAnalysis::new(info, f, func);
    let cfg = ControlFlowGraph::compute(func);
    let dt = DomTree::compute(&cfg);
    let forest = LoopForest::compute(&cfg, &dt);
    let mut changes = 0;
    for lp in forest.loops_inner_first() {
        let Some(pre) = forest.preheader(&cfg, lp) else { continue };
        let blocks = forest.blocks(lp).to_vec();
        for load in loads(func) {
            let Some(b) = func.inst_block(load) else { continue };
            if !blocks.contains(&b) {
                continue;
            }
            let addr = func.args(load)[0];
            let invariant = match func.def_inst(addr) {
                Some(d) => func.inst_block(d).is_some_and(|db| !blocks.contains(&db)),
                None => true,
            };
            if !invariant {
                continue;
            }
            let writer = MemDepQuery::new(func, &aa, &cfg, &dt).first_writer(&blocks, MemLoc::word(addr));
            if writer.is_none() {
                let term = func.terminator(pre).expect("preheader terminator");
                func.detach_inst(load);
                func.insert_inst_before(term, load);
                changes += 1;
            }
        }
    }
    changes
}

#[test]
fn transformations_driven_by_the_analyses_preserve_behaviour() {
    let transforms = [Transform::ForwardLoads, Transform::DeadStores, Transform::MoveUp, Transform::HoistLoads];
    let mut totals = [0usize; 4];
    let mut ran_to_completion = 0;
    for seed in 1..=1000u64 {
        let m = random_module(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        if let Err(e) = verify_module(&m) {
            panic!("seed {seed}: generator produced invalid IR: {e:?}\n{}", print_module(&m));
        }
        let before = observe(&m);
        if before.2.is_none() {
            ran_to_completion += 1;
        }
        for (t, total) in transforms.iter().zip(totals.iter_mut()) {
            let (after_m, changes) = transformed(&m, *t);
            if let Err(e) = verify_module(&after_m) {
                panic!("seed {seed}: {t:?} produced invalid IR: {e:?}\n{}", print_module(&after_m));
            }
            let after = observe(&after_m);
            assert_eq!(
                before,
                after,
                "seed {seed}: {t:?} changed behaviour\nbefore:\n{}\nafter:\n{}",
                print_module(&m),
                print_module(&after_m)
            );
            *total += changes;
        }
    }
    // The test means something only if the generated programs run and the analyses enable
    // plenty of transformations.
    assert!(ran_to_completion > 900, "only {ran_to_completion} runs completed");
    let minimum = [1000, 250, 2000, 60];
    for ((t, total), min) in transforms.iter().zip(totals).zip(minimum) {
        assert!(total >= min, "{t:?} applied only {total} times");
    }
}



/// The decomposition of integer values into linear expressions is exact modulo 2³² for all
/// inputs, overflow included: evaluating the expression gives the value itself.
#[test]
fn linear_decomposition_is_exact() {
    use crate::analysis::pointers::AddressMap;
    use std::collections::HashMap;

    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..300 {
        let mut f = Function::new("e", &[Type::I32, Type::I32, Type::I32], Type::I32);
        let b = f.create_block();
        let mut vals: Vec<Value> = f.params.clone();
        for _ in 0..12 {
            let pick = |rng: &mut Rng, f: &mut Function, vals: &[Value]| {
                if rng.below(3) == 0 {
                    f.iconst(rng.pick(&[0, 1, -1, 3, 4, 1 << 30, i32::MIN, i32::MAX, -7]))
                } else {
                    rng.pick(vals)
                }
            };
            let (x, y) = (pick(&mut rng, &mut f, &vals), pick(&mut rng, &mut f, &vals));
            let op = rng.pick(&[Opcode::Add, Opcode::Sub, Opcode::Mul, Opcode::Mul, Opcode::SRem]);
            let y = if op == Opcode::SRem { f.iconst(5) } else { y };
            vals.push(f.append_value(b, InstData::binary(op, x, y, Type::I32)));
        }
        let last = *vals.last().expect("values");
        f.append(b, InstData::ret(Some(last)));
        let map = AddressMap::compute(&f);
        for _ in 0..20 {
            // Concrete values of every value, by direct evaluation.
            let mut env: HashMap<Value, i32> = HashMap::new();
            for &p in &f.params {
                env.insert(p, rng.next() as i32);
            }
            let get = |env: &HashMap<Value, i32>, v: Value| f.as_int_const(v).unwrap_or_else(|| env[&v]);
            for inst in f.block_insts(b) {
                let Some(v) = f.result(inst) else { continue };
                let (x, y) = (get(&env, f.args(inst)[0]), get(&env, f.args(inst)[1]));
                let r = match f.opcode(inst) {
                    Opcode::Add => x.wrapping_add(y),
                    Opcode::Sub => x.wrapping_sub(y),
                    Opcode::Mul => x.wrapping_mul(y),
                    _ => x.wrapping_rem(y),
                };
                env.insert(v, r);
            }
            for &v in &vals {
                let e = map.linear(&f, v);
                assert!(e.terms().len() <= crate::analysis::pointers::MAX_TERMS);
                assert_eq!(e.eval(|t| get(&env, t)), get(&env, v), "{e:?}");
            }
        }
    }
}
