//! Execution tests: each builds an IR module, runs it under every back-end option set and
//! compares stdout and exit status with values computed here in Rust.

use super::builder::{FnBuilder, declare, define};
use super::run::check;
use crate::ir::{IntCC, Module, Type};

fn main_module(build: impl FnOnce(&mut FnBuilder)) -> Module {
    let mut m = Module::new();
    let mut b = FnBuilder::new("main", &[], Type::I32);
    build(&mut b);
    m.add_function(b.finish());
    m
}

#[test]
fn return_constant() {
    let m = main_module(|b| {
        let v = b.int(-8);
        b.ret(Some(v));
    });
    check(&m, "", "", 248);
}

#[test]
fn recursive_factorial() {
    let mut m = Module::new();
    let fact = declare(&mut m, "fact", &[Type::I32], Type::I32);
    let mut f = FnBuilder::new("fact", &[Type::I32], Type::I32);
    let n = f.param(0);
    let (base, rec) = (f.block(), f.block());
    let one = f.int(1);
    let c = f.icmp(IntCC::Le, n, one);
    f.br(c, base, rec);
    f.switch(base);
    f.ret(Some(one));
    f.switch(rec);
    let n1 = f.sub(n, one);
    let r = f.call_fn(fact, &[n1], Type::I32).unwrap();
    let p = f.mul(n, r);
    f.ret(Some(p));
    define(&mut m, fact, f.finish());

    let mut b = FnBuilder::new("main", &[], Type::I32);
    let ten = b.int(10);
    let r10 = b.call_fn(fact, &[ten], Type::I32).unwrap();
    b.putint(r10);
    b.putch('\n');
    let five = b.int(5);
    let r5 = b.call_fn(fact, &[five], Type::I32).unwrap();
    b.ret(Some(r5));
    m.add_function(b.finish());
    dump("fact", &m);
    let expected: i32 = (1..=10).product();
    check(&m, "", &format!("{expected}\n"), 120);
}

/// Prints the assembly of a test program when `SYSYC_DUMP_ASM` names it (debugging aid).
#[allow(dead_code)]
pub fn dump(name: &str, m: &Module) {
    if std::env::var("SYSYC_DUMP_ASM").is_ok_and(|v| v == name) {
        eprintln!("{}", crate::isa::arm::compile_module(m, &crate::isa::arm::BackendOptions::all()).unwrap());
    }
}

/// Expected output of a sequence of runtime calls, computed with the crate's `Io`.
struct Expect(crate::runtime::Io);

impl Expect {
    fn new() -> Expect {
        Expect(crate::runtime::Io::new(Vec::new()))
    }
    fn int(&mut self, v: i32) -> &mut Self {
        self.0.put_int(v);
        self
    }
    fn ch(&mut self, c: char) -> &mut Self {
        self.0.put_ch(c as i32);
        self
    }
    fn float(&mut self, v: f32) -> &mut Self {
        self.0.put_float(v);
        self
    }
    fn text(&mut self) -> String {
        String::from_utf8(self.0.take_stdout()).expect("utf-8 output")
    }
}

#[test]
fn swap_rotate_and_lost_copy_loops() {
    use crate::ir::Type::I32;
    let m = main_module(|b| {
        // Single-block loop: (a, b) = (b, a); the back edge is critical (edge block).
        let entry = b.cur;
        let (lp, exit) = (b.block(), b.block());
        let (one, two, zero, five) = (b.int(1), b.int(2), b.int(0), b.int(5));
        b.jump(lp);
        b.switch(lp);
        let (pa, a) = b.phi(I32, &[(entry, one)]);
        let (pb, bb) = b.phi(I32, &[(entry, two)]);
        let (pn, n) = b.phi(I32, &[(entry, zero)]);
        let n1 = b.add(n, one);
        let c = b.icmp(IntCC::Lt, n1, five);
        b.br(c, lp, exit);
        b.add_incoming(pa, lp, bb);
        b.add_incoming(pb, lp, a);
        b.add_incoming(pn, lp, n1);
        b.switch(exit);
        b.putint(a);
        b.putch(' ');
        b.putint(bb);
        b.putch('\n');

        // Rotation of three values over a counted loop with a separate body block.
        let (x0, y0, z0, seven) = (b.int(1), b.int(2), b.int(3), b.int(7));
        let out = b.counted_loop(zero, seven, &[(I32, x0), (I32, y0), (I32, z0)], |_, _, v| vec![v[1], v[2], v[0]]);
        for v in out {
            b.putint(v);
            b.putch(' ');
        }
        b.putch('\n');

        // Lost copy: the exit uses the phi's old value after the increment is computed.
        let entry2 = b.cur;
        let (lp2, exit2) = (b.block(), b.block());
        let ten = b.int(10);
        b.jump(lp2);
        b.switch(lp2);
        let (pi, i) = b.phi(I32, &[(entry2, zero)]);
        let i2 = b.add(i, one);
        let c2 = b.icmp(IntCC::Lt, i2, ten);
        b.br(c2, lp2, exit2);
        b.add_incoming(pi, lp2, i2);
        b.switch(exit2);
        b.putint(i);
        b.putch('\n');
        b.ret(Some(i2));
    });
    // Simulate the loops.
    let (mut a, mut bb, mut n) = (1, 2, 0);
    loop {
        let n1 = n + 1;
        if n1 < 5 {
            (a, bb, n) = (bb, a, n1);
        } else {
            break;
        }
    }
    let mut v = [1, 2, 3];
    for _ in 0..7 {
        v = [v[1], v[2], v[0]];
    }
    let mut e = Expect::new();
    e.int(a).ch(' ').int(bb).ch('\n');
    for x in v {
        e.int(x).ch(' ');
    }
    e.ch('\n').int(9).ch('\n');
    dump("swap", &m);
    check(&m, "", &e.text(), 10);
}

#[test]
fn arrays_with_gep_chains() {
    use crate::ir::Type::I32;
    let mut m = Module::new();
    let g = m.globals.push(crate::ir::GlobalData { name: "g".into(), elem: I32, words: 50, init: vec![], is_const: false });
    let mut b = FnBuilder::new("main", &[], I32);
    // int a[100]; a[i] = i*i - 3*i; sum.
    let a = b.alloca(I32, 100);
    let (zero, hundred, three) = (b.int(0), b.int(100), b.int(3));
    b.counted_loop(zero, hundred, &[], |b, i, _| {
        let sq = b.mul(i, i);
        let t = b.mul(i, three);
        let v = b.sub(sq, t);
        let p = b.gep(a, i, 4);
        b.store(p, v);
        vec![]
    });
    let sum = b.counted_loop(zero, hundred, &[(I32, zero)], |b, i, s| {
        let p = b.gep(a, i, 4);
        let v = b.load(p, I32);
        vec![b.add(s[0], v)]
    });
    b.putint(sum[0]);
    b.putch('\n');
    // int mat[7][13]; mat[i][j] = i*13 + j*j; sum of mat[i][j] * (j+1).
    let mat = b.alloca(I32, 7 * 13);
    let (seven, thirteen, one) = (b.int(7), b.int(13), b.int(1));
    b.counted_loop(zero, seven, &[], |b, i, _| {
        b.counted_loop(zero, thirteen, &[], |b, j, _| {
            let row = b.gep(mat, i, 52);
            let p = b.gep(row, j, 4);
            let x = b.mul(i, thirteen);
            let y = b.mul(j, j);
            let v = b.add(x, y);
            b.store(p, v);
            vec![]
        });
        vec![]
    });
    let total = b.counted_loop(zero, seven, &[(I32, zero)], |b, i, s| {
        let inner = b.counted_loop(zero, thirteen, &[(I32, s[0])], |b, j, t| {
            let row = b.gep(mat, i, 52);
            let p = b.gep(row, j, 4);
            let v = b.load(p, I32);
            let w = b.add(j, one);
            let prod = b.mul(v, w);
            vec![b.add(t[0], prod)]
        });
        vec![inner[0]]
    });
    b.putint(total[0]);
    b.putch('\n');
    // A global array, constant and variable indices.
    let gv = b.f.global_addr(g);
    let fifty = b.int(50);
    let k = b.int(7);
    b.counted_loop(zero, fifty, &[], |b, i, _| {
        let p = b.gep(gv, i, 4);
        let v = b.mul(i, k);
        b.store(p, v);
        vec![]
    });
    let c49 = b.int(49);
    let p49 = b.gep(gv, c49, 4);
    let last = b.load(p49, I32);
    b.putint(last);
    b.putch('\n');
    let gs = b.counted_loop(zero, fifty, &[(I32, zero)], |b, i, s| {
        let p = b.gep(gv, i, 4);
        let v = b.load(p, I32);
        vec![b.add(s[0], v)]
    });
    b.ret(Some(gs[0]));
    m.add_function(b.finish());

    let sum: i32 = (0..100).map(|i| i * i - 3 * i).sum();
    let total: i32 = (0..7).flat_map(|i| (0..13).map(move |j| (i * 13 + j * j) * (j + 1))).sum();
    let gs: i32 = (0..50).map(|i| i * 7).sum();
    let mut e = Expect::new();
    e.int(sum).ch('\n').int(total).ch('\n').int(49 * 7).ch('\n');
    dump("arrays", &m);
    check(&m, "", &e.text(), gs & 0xff);
}

#[test]
fn float_arithmetic_and_nan_compares() {
    use crate::ir::FloatCC;
    let (xv, yv) = (1.5f32, -2.25f32);
    let m = main_module(|b| {
        let x = b.float(xv);
        let y = b.float(yv);
        let zero = b.float(0.0);
        let nan = b.fdiv(zero, zero);
        for v in [b.fadd(x, y), b.fsub(x, y), b.fmul(x, y), b.fdiv(x, y), b.fneg(y)] {
            b.putfloat(v);
            b.putch(' ');
        }
        b.putch('\n');
        let pairs = [(x, y), (y, x), (x, x), (x, nan), (nan, x), (nan, nan), (zero, y), (y, zero)];
        for &(p, q) in &pairs {
            for cc in FloatCC::ALL {
                // As a value.
                let c = b.fcmp(cc, p, q);
                let z = b.zext(c);
                b.putint(z);
                // As a branch.
                let c2 = b.fcmp(cc, p, q);
                let (t, f, j) = (b.block(), b.block(), b.block());
                b.br(c2, t, f);
                b.switch(t);
                b.putch('T');
                b.jump(j);
                b.switch(f);
                b.putch('F');
                b.jump(j);
                b.switch(j);
                // As a select condition.
                let c3 = b.fcmp(cc, p, q);
                let one = b.float(1.0);
                let two = b.float(2.0);
                let s = b.select(c3, one, two);
                let si = b.fptosi(s);
                b.putint(si);
            }
            b.putch('\n');
        }
        let r = b.int(0);
        b.ret(Some(r));
    });
    let nan = f32::NAN;
    let mut e = Expect::new();
    for v in [xv + yv, xv - yv, xv * yv, xv / yv, -yv] {
        e.float(v).ch(' ');
    }
    e.ch('\n');
    for (p, q) in [(xv, yv), (yv, xv), (xv, xv), (xv, nan), (nan, xv), (nan, nan), (0.0, yv), (yv, 0.0)] {
        for cc in FloatCC::ALL {
            let r = cc.eval(p, q);
            e.int(i32::from(r)).ch(if r { 'T' } else { 'F' }).int(if r { 1 } else { 2 });
        }
        e.ch('\n');
    }
    check(&m, "", &e.text(), 0);
}

#[test]
fn int_float_conversions() {
    let floats = [3.7f32, -3.7, 0.5, -0.5, 1e10, -1e10, 2147483520.0, 16777217.0, 0.0];
    let ints = [0, 1, -1, 16777217, i32::MAX, i32::MIN, 123456789];
    let m = main_module(|b| {
        for f in floats {
            let v = b.float(f);
            let i = b.fptosi(v);
            b.putint(i);
            b.putch(' ');
        }
        b.putch('\n');
        for i in ints {
            let v = b.int(i);
            let f = b.sitofp(v);
            b.putfloat(f);
            b.putch(' ');
        }
        b.putch('\n');
        let r = b.int(0);
        b.ret(Some(r));
    });
    let mut e = Expect::new();
    for f in floats {
        e.int(f as i32).ch(' ');
    }
    e.ch('\n');
    for i in ints {
        e.float(i as f32).ch(' ');
    }
    e.ch('\n');
    check(&m, "", &e.text(), 0);
}

#[test]
fn calls_with_many_and_mixed_arguments() {
    use crate::ir::Type::{F32, I32};
    let mut m = Module::new();
    // int many_ints(a0..a9) = sum a_i * (i + 1)
    let ints = [I32; 10];
    let mut f = FnBuilder::new("many_ints", &ints, I32);
    let mut acc = f.int(0);
    for i in 0..10 {
        let w = f.int(i as i32 + 1);
        let p = f.param(i);
        let t = f.mul(p, w);
        acc = f.add(acc, t);
    }
    f.ret(Some(acc));
    let many_ints = m.add_function(f.finish());
    // int permute(a0..a9) = many_ints(a9, a8, ..., a0)  (a parallel move of the arguments)
    let mut f = FnBuilder::new("permute", &ints, I32);
    let args: Vec<_> = (0..10).rev().map(|i| f.param(i)).collect();
    let r = f.call_fn(many_ints, &args, I32).unwrap();
    f.ret(Some(r));
    let permute = m.add_function(f.finish());
    // float many_floats(f0..f19) = sum f_i * (i + 1)
    let floats = [F32; 20];
    let mut f = FnBuilder::new("many_floats", &floats, F32);
    let mut acc = f.float(0.0);
    for i in 0..20 {
        let w = f.float(i as f32 + 1.0);
        let p = f.param(i);
        let t = f.fmul(p, w);
        acc = f.fadd(acc, t);
    }
    f.ret(Some(acc));
    let many_floats = m.add_function(f.finish());
    // float mixed(i0, f0, i1, f1, ..., i6, f6, f7 .. f17): ints 7 (3 on the stack),
    // floats 18 (2 on the stack), interleaved on the stack in argument order.
    let mut types = Vec::new();
    for _ in 0..7 {
        types.extend([I32, F32]);
    }
    types.extend([F32; 11]);
    let mut f = FnBuilder::new("mixed", &types, F32);
    let mut acc = f.float(0.0);
    for (i, &ty) in types.iter().enumerate() {
        let p = f.param(i);
        let x = if ty == I32 { f.sitofp(p) } else { p };
        let w = f.float((i % 7) as f32 + 0.5);
        let t = f.fmul(x, w);
        acc = f.fadd(acc, t);
    }
    f.ret(Some(acc));
    let mixed = m.add_function(f.finish());

    let mut b = FnBuilder::new("main", &[], I32);
    let args: Vec<_> = (0..10).map(|i| b.int(i * i - 7)).collect();
    let r1 = b.call_fn(many_ints, &args, I32).unwrap();
    b.putint(r1);
    b.putch(' ');
    let r2 = b.call_fn(permute, &args, I32).unwrap();
    b.putint(r2);
    b.putch(' ');
    let fargs: Vec<_> = (0..20).map(|i| b.float(i as f32 * 0.25 - 1.0)).collect();
    let r3 = b.call_fn(many_floats, &fargs, F32).unwrap();
    b.putfloat(r3);
    b.putch(' ');
    let margs: Vec<_> =
        types.iter().enumerate().map(|(i, &ty)| if ty == I32 { b.int(i as i32 * 3 - 5) } else { b.float(i as f32 * 1.5) }).collect();
    let r4 = b.call_fn(mixed, &margs, F32).unwrap();
    b.putfloat(r4);
    b.putch('\n');
    let z = b.int(0);
    b.ret(Some(z));
    m.add_function(b.finish());

    let vals: Vec<i32> = (0..10).map(|i| i * i - 7).collect();
    let many = |v: &[i32]| v.iter().enumerate().map(|(i, &x)| x * (i as i32 + 1)).sum::<i32>();
    let rev: Vec<i32> = vals.iter().rev().copied().collect();
    let mut acc = 0.0f32;
    for i in 0..20 {
        acc += (i as f32 * 0.25 - 1.0) * (i as f32 + 1.0);
    }
    let mut macc = 0.0f32;
    for (i, &ty) in types.iter().enumerate() {
        let x = if ty == I32 { (i as i32 * 3 - 5) as f32 } else { i as f32 * 1.5 };
        macc += x * ((i % 7) as f32 + 0.5);
    }
    let mut e = Expect::new();
    e.int(many(&vals)).ch(' ').int(many(&rev)).ch(' ').float(acc).ch(' ').float(macc).ch('\n');
    check(&m, "", &e.text(), 0);
}

#[test]
fn array_arguments_and_float_returns() {
    use crate::ir::Type::{F32, I32, Ptr};
    let mut m = Module::new();
    // int sum(int a[], int n)
    let mut f = FnBuilder::new("sum", &[Ptr, I32], I32);
    let (a, n) = (f.param(0), f.param(1));
    let zero = f.int(0);
    let s = f.counted_loop(zero, n, &[(I32, zero)], |f, i, s| {
        let p = f.gep(a, i, 4);
        let v = f.load(p, I32);
        vec![f.add(s[0], v)]
    });
    f.ret(Some(s[0]));
    let sum = m.add_function(f.finish());
    // float avg(float a[], int n)
    let mut f = FnBuilder::new("favg", &[Ptr, I32], F32);
    let (a, n) = (f.param(0), f.param(1));
    let (zero, fz) = (f.int(0), f.float(0.0));
    let s = f.counted_loop(zero, n, &[(F32, fz)], |f, i, s| {
        let p = f.gep(a, i, 4);
        let v = f.load(p, F32);
        vec![f.fadd(s[0], v)]
    });
    let nf = f.sitofp(n);
    let r = f.fdiv(s[0], nf);
    f.ret(Some(r));
    let favg = m.add_function(f.finish());

    let mut b = FnBuilder::new("main", &[], I32);
    let mat = b.alloca(I32, 4 * 6);
    let fa = b.alloca(F32, 10);
    let (zero, c24, c10, c6, c3) = (b.int(0), b.int(24), b.int(10), b.int(6), b.int(3));
    b.counted_loop(zero, c24, &[], |b, i, _| {
        let p = b.gep(mat, i, 4);
        let v = b.mul(i, c3);
        b.store(p, v);
        vec![]
    });
    b.counted_loop(zero, c10, &[], |b, i, _| {
        let p = b.gep(fa, i, 4);
        let v = b.sitofp(i);
        let h = b.float(0.5);
        let w = b.fmul(v, h);
        b.store(p, w);
        vec![]
    });
    let whole = b.call_fn(sum, &[mat, c24], I32).unwrap();
    b.putint(whole);
    b.putch(' ');
    let two = b.int(2);
    let row = b.gep(mat, two, 24); // &mat[2][0] of int mat[4][6]
    let r = b.call_fn(sum, &[row, c6], I32).unwrap();
    b.putint(r);
    b.putch(' ');
    let avg = b.call_fn(favg, &[fa, c10], F32).unwrap();
    b.putfloat(avg);
    b.putch('\n');
    b.ret(Some(zero));
    m.add_function(b.finish());

    let whole: i32 = (0..24).map(|i| i * 3).sum();
    let row: i32 = (12..18).map(|i| i * 3).sum();
    let mut s = 0.0f32;
    for i in 0..10 {
        s += i as f32 * 0.5;
    }
    let mut e = Expect::new();
    e.int(whole).ch(' ').int(row).ch(' ').float(s / 10.0).ch('\n');
    check(&m, "", &e.text(), 0);
}

#[test]
fn deep_recursion() {
    use crate::ir::Type::I32;
    let mut m = Module::new();
    let depth = declare(&mut m, "depth", &[I32], I32);
    let mut f = FnBuilder::new("depth", &[I32], I32);
    let n = f.param(0);
    let (base, rec) = (f.block(), f.block());
    let zero = f.int(0);
    let c = f.icmp(IntCC::Eq, n, zero);
    f.br(c, base, rec);
    f.switch(base);
    f.ret(Some(zero));
    f.switch(rec);
    let one = f.int(1);
    let n1 = f.sub(n, one);
    let r = f.call_fn(depth, &[n1], I32).unwrap();
    let r1 = f.add(r, one);
    f.ret(Some(r1));
    define(&mut m, depth, f.finish());
    let mut b = FnBuilder::new("main", &[], I32);
    let n = b.int(200_000);
    let r = b.call_fn(depth, &[n], I32).unwrap();
    b.putint(r);
    b.ret(Some(r));
    m.add_function(b.finish());
    check(&m, "", "200000", 200_000 & 0xff);
}
