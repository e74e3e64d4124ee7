//! Randomised end-to-end test: straight-line code, diamonds and small loops over runtime
//! inputs, generated together with their expected output (the generator evaluates every
//! operation as it emits it). Many values stay live to the end, which exercises spilling;
//! the mix of operands exercises every selection pattern.

use super::builder::FnBuilder;
use super::run::build_and_run;
use crate::ir::{FloatCC, FuncRef, GlobalData, IntCC, Module, Opcode, Type, Value};
use crate::isa::arm::BackendOptions;

#[derive(Clone, Copy, Debug)]
enum Val {
    I(i32),
    F(f32),
}

use crate::test_rng::Rng;

/// Operand values that exercise the encodings: immediates at their limits, powers of two.
impl Rng {
    fn int(&mut self) -> i32 {
        match self.below(6) {
            0 => self.below(16) as i32 - 8,
            1 => [i32::MIN, i32::MAX, 255, 256, 4095, 65535, 65536, -65536, 1 << 20, 1000000007][self.below(10)],
            2 => 1 << self.below(31),
            _ => self.next() as i32 >> self.below(31),
        }
    }
    fn float(&mut self) -> f32 {
        match self.below(4) {
            0 => [0.0, -0.0, 1.0, 0.5, -2.0, 10.0, 0.1, 1e30, -1e-30][self.below(9)],
            _ => (self.next() as i32 >> self.below(24)) as f32 / (1 + self.below(1000)) as f32,
        }
    }
}

/// Side tables of a generated program: the arrays it reads and writes and its helpers.
struct Env {
    /// A local `int[16]` (alloca) and a global `int[16]`, and their modelled contents.
    local: Value,
    global: Value,
    local_mem: [i32; 16],
    global_mem: [i32; 16],
    /// `int mix(int a0..a5, float f0, float f1)`.
    mix: FuncRef,
    /// `float fmix(float a, int b, float c)`.
    fmix: FuncRef,
}

fn mix(a: [i32; 6], f0: f32, f1: f32) -> i32 {
    let mut acc = (f0 * f1) as i32;
    for (i, x) in a.into_iter().enumerate() {
        acc = acc.wrapping_add(x.wrapping_mul(i as i32 * 2 - 5));
    }
    acc
}

fn fmix(a: f32, b: i32, c: f32) -> f32 {
    a * c - b as f32
}

struct Gen<'a> {
    b: &'a mut FnBuilder,
    rng: Rng,
    vals: Vec<(Value, Val)>,
    out: String,
    env: Env,
    /// Whether the code being generated runs (false inside the arm of a diamond that is not
    /// taken): only running code prints or changes the memory model.
    running: bool,
}

impl Gen<'_> {
    fn pick_int(&mut self) -> (Value, i32) {
        loop {
            let (v, x) = self.vals[self.rng.below(self.vals.len())];
            if let Val::I(i) = x {
                return (v, i);
            }
        }
    }
    fn pick_float(&mut self) -> (Value, f32) {
        loop {
            let (v, x) = self.vals[self.rng.below(self.vals.len())];
            if let Val::F(f) = x {
                return (v, f);
            }
        }
    }
    /// An int operand: a live value or a fresh constant.
    fn int_operand(&mut self) -> (Value, i32) {
        if self.rng.below(3) == 0 {
            let c = self.rng.int();
            (self.b.int(c), c)
        } else {
            self.pick_int()
        }
    }
    fn float_operand(&mut self) -> (Value, f32) {
        if self.rng.below(4) == 0 {
            let c = self.rng.float();
            (self.b.float(c), c)
        } else {
            self.pick_float()
        }
    }

    /// Emits one operation and records its value.
    fn op(&mut self) {
        let r = match self.rng.below(16) {
            0..=2 => {
                let (a, x) = self.int_operand();
                let (c, y) = self.int_operand();
                let (op, z) = match self.rng.below(3) {
                    0 => (Opcode::Add, x.wrapping_add(y)),
                    1 => (Opcode::Sub, x.wrapping_sub(y)),
                    _ => (Opcode::Mul, x.wrapping_mul(y)),
                };
                (self.b.bin(op, a, c), Val::I(z))
            }
            3 => {
                // Division or remainder by a constant or by a value made non-zero.
                let (a, x) = self.int_operand();
                let (d, y) = if self.rng.below(2) == 0 {
                    let mut c = self.rng.int();
                    if c == 0 {
                        c = 7;
                    }
                    (self.b.int(c), c)
                } else {
                    let (v, y) = self.pick_int();
                    let zero = self.b.int(0);
                    let is_zero = self.b.icmp(IntCC::Eq, v, zero);
                    let three = self.b.int(3);
                    (self.b.select(is_zero, three, v), if y == 0 { 3 } else { y })
                };
                if x == i32::MIN && y == -1 {
                    return;
                }
                if self.rng.below(2) == 0 {
                    (self.b.bin(Opcode::SDiv, a, d), Val::I(x.wrapping_div(y)))
                } else {
                    (self.b.bin(Opcode::SRem, a, d), Val::I(x.wrapping_rem(y)))
                }
            }
            4..=5 => {
                let (a, x) = self.float_operand();
                let (c, y) = self.float_operand();
                let (op, z) = match self.rng.below(5) {
                    0 => (Opcode::FAdd, x + y),
                    1 => (Opcode::FSub, x - y),
                    2 => (Opcode::FMul, x * y),
                    3 => (Opcode::FDiv, x / y),
                    _ => {
                        // x * y + w (a multiply-accumulate candidate).
                        let p = self.b.fmul(a, c);
                        let (w, wv) = self.pick_float();
                        let s = self.b.fadd(w, p);
                        return self.push(s, Val::F(wv + x * y));
                    }
                };
                (self.b.bin(op, a, c), Val::F(z))
            }
            6 => {
                let (a, x) = self.pick_float();
                (self.b.fneg(a), Val::F(-x))
            }
            7 => {
                let (a, x) = self.pick_int();
                (self.b.sitofp(a), Val::F(x as f32))
            }
            8 => {
                let (a, x) = self.pick_float();
                (self.b.fptosi(a), Val::I(x as i32))
            }
            9 => {
                let cc = IntCC::ALL[self.rng.below(6)];
                let (a, x) = self.int_operand();
                let (c, y) = self.int_operand();
                let p = self.b.icmp(cc, a, c);
                let t = cc.eval(x, y);
                if self.rng.below(2) == 0 {
                    (self.b.zext(p), Val::I(i32::from(t)))
                } else {
                    let (u, uv) = self.int_operand();
                    let (w, wv) = self.pick_int();
                    (self.b.select(p, u, w), Val::I(if t { uv } else { wv }))
                }
            }
            10 => {
                let cc = FloatCC::ALL[self.rng.below(6)];
                let (a, x) = self.float_operand();
                let (c, y) = self.float_operand();
                let p = self.b.fcmp(cc, a, c);
                let t = cc.eval(x, y);
                if self.rng.below(2) == 0 {
                    (self.b.zext(p), Val::I(i32::from(t)))
                } else {
                    let (u, uv) = self.pick_float();
                    let (w, wv) = self.pick_float();
                    (self.b.select(p, u, w), Val::F(if t { uv } else { wv }))
                }
            }
            11 => return self.diamond(),
            12 => return self.small_loop(),
            13 => return self.memory(),
            14 => return self.call(),
            _ => return self.print_some(),
        };
        self.push(r.0, r.1);
    }

    fn push(&mut self, v: Value, x: Val) {
        self.vals.push((v, x));
    }

    /// `if (a < b) t = f(..) else t = g(..)` merged by a phi.
    fn diamond(&mut self) {
        let (a, x) = self.pick_int();
        let (c, y) = self.int_operand();
        let cond = self.b.icmp(IntCC::Lt, a, c);
        let (then_b, else_b, join) = (self.b.block(), self.b.block(), self.b.block());
        self.b.br(cond, then_b, else_b);
        let keep = self.vals.len();
        let taken = x < y;
        // Output printed by an arm only happens when that arm runs.
        let arm = |g: &mut Gen, block, runs: bool| {
            let outer = g.running;
            g.running = outer && runs;
            g.b.switch(block);
            for _ in 0..g.rng.below(4) {
                g.op();
            }
            let (v, val) = g.pick_int();
            let end = g.b.cur;
            g.b.jump(join);
            g.vals.truncate(keep);
            g.running = outer;
            (end, v, val)
        };
        let (t_end, tv, tval) = arm(self, then_b, taken);
        let (e_end, ev, eval) = arm(self, else_b, !taken);
        self.b.switch(join);
        let (_, phi) = self.b.phi(Type::I32, &[(t_end, tv), (e_end, ev)]);
        self.push(phi, Val::I(if taken { tval } else { eval }));
    }

    /// `for (i = 0; i < n; i++) acc = acc * 3 + v; facc = facc + w;` with n small.
    fn small_loop(&mut self) {
        let n = self.rng.below(6) as i32;
        let (v, vv) = self.pick_int();
        let (w, wv) = self.pick_float();
        let (acc0, a0) = self.pick_int();
        let (facc0, f0) = self.pick_float();
        let zero = self.b.int(0);
        let nv = self.b.int(n);
        let out = self.b.counted_loop(zero, nv, &[(Type::I32, acc0), (Type::F32, facc0)], |b, _, c| {
            let three = b.int(3);
            let m = b.mul(c[0], three);
            let s = b.add(m, v);
            let f = b.fadd(c[1], w);
            vec![s, f]
        });
        let (mut a, mut f) = (a0, f0);
        for _ in 0..n {
            a = a.wrapping_mul(3).wrapping_add(vv);
            f += wv;
        }
        self.push(out[0], Val::I(a));
        self.push(out[1], Val::F(f));
    }

    fn print_some(&mut self) {
        let (v, x) = self.pick_int();
        self.b.putint(v);
        self.b.putch(' ');
        if self.running {
            self.out.push_str(&format!("{x} "));
        }
    }

    /// A store to and a load from one of the arrays, at a constant index or at an index
    /// computed from a value (`((x % 16) + 16) % 16`).
    fn memory(&mut self) {
        let global = self.rng.below(2) == 0;
        let base = if global { self.env.global } else { self.env.local };
        let index = |g: &mut Gen| -> (Value, usize) {
            if g.rng.below(2) == 0 {
                let k = g.rng.below(16);
                (g.b.int(k as i32), k)
            } else {
                let (x, xv) = g.pick_int();
                let sixteen = g.b.int(16);
                let r = g.b.bin(Opcode::SRem, x, sixteen);
                let r = g.b.add(r, sixteen);
                let r = g.b.bin(Opcode::SRem, r, sixteen);
                (r, ((xv % 16) + 16) as usize % 16)
            }
        };
        let (si, sk) = index(self);
        let (v, vv) = self.int_operand();
        let p = self.b.gep(base, si, 4);
        self.b.store(p, v);
        let (li, lk) = index(self);
        let q = self.b.gep(base, li, 4);
        let loaded = self.b.load(q, Type::I32);
        let mem = if global { &mut self.env.global_mem } else { &mut self.env.local_mem };
        if self.running {
            mem[sk] = vv;
        }
        let lv = mem[lk];
        self.push(loaded, Val::I(lv));
    }

    fn call(&mut self) {
        if self.rng.below(2) == 0 {
            let ints: Vec<(Value, i32)> = (0..6).map(|_| self.int_operand()).collect();
            let (f0, f0v) = self.float_operand();
            let (f1, f1v) = self.float_operand();
            let mut args: Vec<Value> = ints.iter().map(|&(v, _)| v).collect();
            args.extend([f0, f1]);
            let r = self.b.call_fn(self.env.mix, &args, Type::I32).expect("int result");
            let a: Vec<i32> = ints.iter().map(|&(_, x)| x).collect();
            let a: [i32; 6] = a.try_into().expect("six ints");
            self.push(r, Val::I(mix(a, f0v, f1v)));
        } else {
            let (a, av) = self.float_operand();
            let (b, bv) = self.int_operand();
            let (c, cv) = self.float_operand();
            let r = self.b.call_fn(self.env.fmix, &[a, b, c], Type::F32).expect("float result");
            self.push(r, Val::F(fmix(av, bv, cv)));
        }
    }
}

/// Defines the helpers `mix` and `fmix` (see their Rust models above).
fn helpers(m: &mut Module) -> (FuncRef, FuncRef) {
    let mut types = vec![Type::I32; 6];
    types.extend([Type::F32, Type::F32]);
    let mut f = FnBuilder::new("mix", &types, Type::I32);
    let p = f.fmul(f.param(6), f.param(7));
    let mut acc = f.fptosi(p);
    for i in 0..6 {
        let w = f.int(i as i32 * 2 - 5);
        let t = f.mul(f.param(i), w);
        acc = f.add(acc, t);
    }
    f.ret(Some(acc));
    let mix = m.add_function(f.finish());
    let mut f = FnBuilder::new("fmix", &[Type::F32, Type::I32, Type::F32], Type::F32);
    let prod = f.fmul(f.param(0), f.param(2));
    let bf = f.sitofp(f.param(1));
    let r = f.fsub(prod, bf);
    f.ret(Some(r));
    let fmix = m.add_function(f.finish());
    (mix, fmix)
}

fn generate(seed: u64, ops: usize) -> (Module, String, String) {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let inputs: Vec<i32> = (0..6).map(|_| rng.int()).collect();
    let finputs: Vec<f32> = (0..3).map(|_| rng.float()).collect();
    let input = inputs.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" ");
    let mut m = Module::new();
    let (mix, fmix) = helpers(&mut m);
    let garr =
        m.globals.push(GlobalData { name: "garr".into(), elem: Type::I32, words: 16, init: vec![], is_const: false });
    let mut b = FnBuilder::new("main", &[], Type::I32);
    let local = b.alloca(Type::I32, 16);
    b.memzero(local, 16);
    let global = b.f.global_addr(garr);
    let env = Env { local, global, local_mem: [0; 16], global_mem: [0; 16], mix, fmix };
    let mut g = Gen { b: &mut b, rng, vals: Vec::new(), out: String::new(), env, running: true };
    for &x in &inputs {
        let v = g.b.getint();
        g.push(v, Val::I(x));
    }
    for &f in &finputs {
        let c = g.b.float(f);
        // Route float inputs through memory so they are not compile-time constants.
        let slot = g.b.alloca(Type::F32, 1);
        g.b.store(slot, c);
        let v = g.b.load(slot, Type::F32);
        g.push(v, Val::F(f));
    }
    for _ in 0..ops {
        g.op();
    }
    // Print everything still live; floats as scaled integers (no NaN text involved).
    let vals = g.vals.clone();
    for (v, x) in vals {
        match x {
            Val::I(i) => {
                g.b.putint(v);
                g.out.push_str(&i.to_string());
            }
            Val::F(f) => {
                let k = g.b.float(64.0);
                let s = g.b.fmul(v, k);
                let i = g.b.fptosi(s);
                g.b.putint(i);
                g.out.push_str(&((f * 64.0) as i32).to_string());
            }
        }
        g.b.putch(',');
        g.out.push(',');
    }
    let expected = g.out.clone();
    let zero = b.int(0);
    b.ret(Some(zero));
    m.add_function(b.finish());
    (m, input, expected)
}

#[test]
fn random_programs_match_their_evaluation() {
    // `SYSYC_RANDOM_SEEDS=n` runs more programs (for longer local campaigns).
    let seeds: u64 = std::env::var("SYSYC_RANDOM_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(24);
    for seed in 1..=seeds {
        let (m, input, expected) = generate(seed, 120);
        for opts in [BackendOptions::all(), BackendOptions::mandatory_only()] {
            if let Err(e) = crate::isa::arm::compile_module(&m, &opts) {
                panic!("seed {seed}, options {opts:?}: {e}");
            }
            let Some(r) = build_and_run(&m, &opts, &input) else {
                return;
            };
            assert_eq!(r.stdout, expected, "seed {seed}, options {opts:?}\n--- assembly ---\n{}", r.asm);
            assert_eq!(r.status, 0);
        }
    }
}
