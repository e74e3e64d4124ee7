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
    let g =
        m.globals.push(crate::ir::GlobalData { name: "g".into(), elem: I32, words: 50, init: vec![], is_const: false });
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
    let margs: Vec<_> = types
        .iter()
        .enumerate()
        .map(|(i, &ty)| if ty == I32 { b.int(i as i32 * 3 - 5) } else { b.float(i as f32 * 1.5) })
        .collect();
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

    dump("arrayargs", &m);
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

#[test]
fn large_frames_and_stack_arguments() {
    use crate::ir::Type::{F32, I32};
    let mut m = Module::new();
    // int big(a, b, c, d, e, f, float x): a 20000-int local array pushes the incoming
    // arguments e, f beyond the ldr offset range.
    let mut types = vec![I32; 6];
    types.extend([F32; 17]);
    let mut f = FnBuilder::new("big", &types, I32);
    let arr = f.alloca(I32, 20_000);
    let farr = f.alloca(F32, 300);
    let (zero, n) = (f.int(0), f.int(20_000));
    f.counted_loop(zero, n, &[], |f, i, _| {
        let p = f.gep(arr, i, 4);
        f.store(p, i);
        vec![]
    });
    let c299 = f.int(299);
    let fp = f.gep(farr, c299, 4);
    let x = f.param(22);
    f.store(fp, x);
    let xv = f.load(fp, F32);
    let xi = f.fptosi(xv);
    let c19999 = f.int(19_999);
    let far = f.gep(arr, c19999, 4);
    let last = f.load(far, I32);
    let mut acc = f.add(last, xi);
    for i in 0..6 {
        let p = f.param(i);
        let w = f.int(1 << i);
        let t = f.mul(p, w);
        acc = f.add(acc, t);
    }
    f.ret(Some(acc));
    let big = m.add_function(f.finish());

    let mut b = FnBuilder::new("main", &[], I32);
    // A megabyte-scale local array: zeroed, sparsely written, summed.
    let huge = b.alloca(I32, 1 << 20);
    b.memzero(huge, 1 << 20);
    let (zero, k, step) = (b.int(0), b.int(1000), b.int(1000));
    b.counted_loop(zero, k, &[], |b, i, _| {
        let idx = b.mul(i, step);
        let p = b.gep(huge, idx, 4);
        b.store(p, i);
        vec![]
    });
    let top = b.int((1 << 20) - 1);
    let ptop = b.gep(huge, top, 4);
    let nine = b.int(9);
    b.store(ptop, nine);
    let total = b.counted_loop(zero, top, &[(I32, zero)], |b, i, s| {
        let p = b.gep(huge, i, 4);
        let v = b.load(p, I32);
        vec![b.add(s[0], v)]
    });
    let vtop = b.load(ptop, I32);
    let total = b.add(total[0], vtop);
    b.putint(total);
    b.putch(' ');
    let mut args: Vec<_> = (0..6).map(|i| b.int(i * 10 + 1)).collect();
    args.extend((0..17).map(|i| b.float(i as f32 + 0.75)));
    let r = b.call_fn(big, &args, I32).unwrap();
    b.putint(r);
    b.putch('\n');
    b.ret(Some(zero));
    m.add_function(b.finish());

    let total: i32 = (0..1000).sum::<i32>() + 9;
    dump("large", &m);
    let r = 19_999 + 16 + (0..6).map(|i| (i * 10 + 1) << i).sum::<i32>();
    let mut e = Expect::new();
    e.int(total).ch(' ').int(r).ch('\n');
    check(&m, "", &e.text(), 0);
}

#[test]
fn globals_scalars_arrays_and_constants() {
    use crate::ir::{Const, GlobalData, Type::F32, Type::I32};
    let mut m = Module::new();
    let gi = m.globals.push(GlobalData {
        name: "counter".into(),
        elem: I32,
        words: 1,
        init: vec![(0, Const::Int(42))],
        is_const: false,
    });
    let gf = m.globals.push(GlobalData {
        name: "scale".into(),
        elem: F32,
        words: 1,
        init: vec![(0, Const::float(3.5))],
        is_const: false,
    });
    let ga = m.globals.push(GlobalData {
        name: "index".into(), // a libc function name: must not clash
        elem: I32,
        words: 300,
        init: vec![(1, Const::Int(-1)), (2, Const::Int(7)), (250, Const::Int(1 << 30))],
        is_const: false,
    });
    let gz = m.globals.push(GlobalData { name: "zeros".into(), elem: I32, words: 5000, init: vec![], is_const: false });
    let gc = m.globals.push(GlobalData {
        name: "table".into(),
        elem: I32,
        words: 4,
        init: vec![(0, Const::Int(10)), (3, Const::Int(40))],
        is_const: true,
    });
    let mut b = FnBuilder::new("main", &[], I32);
    let (pi, pf, pa, pz, pc) =
        (b.f.global_addr(gi), b.f.global_addr(gf), b.f.global_addr(ga), b.f.global_addr(gz), b.f.global_addr(gc));
    let v = b.load(pi, I32);
    let one = b.int(1);
    let v1 = b.add(v, one);
    b.store(pi, v1);
    let again = b.load(pi, I32);
    b.putint(again);
    b.putch(' ');
    let s = b.load(pf, F32);
    let two = b.float(2.0);
    let s2 = b.fmul(s, two);
    b.store(pf, s2);
    let s3 = b.load(pf, F32);
    b.putfloat(s3);
    b.putch(' ');
    let (zero, n300, n5000) = (b.int(0), b.int(300), b.int(5000));
    let sa = b.counted_loop(zero, n300, &[(I32, zero)], |b, i, s| {
        let p = b.gep(pa, i, 4);
        let x = b.load(p, I32);
        vec![b.add(s[0], x)]
    });
    b.putint(sa[0]);
    b.putch(' ');
    let c4999 = b.int(4999);
    let pzl = b.gep(pz, c4999, 4);
    b.store(pzl, n5000);
    let sz = b.counted_loop(zero, n5000, &[(I32, zero)], |b, i, s| {
        let p = b.gep(pz, i, 4);
        let x = b.load(p, I32);
        vec![b.add(s[0], x)]
    });
    b.putint(sz[0]);
    b.putch(' ');
    let c3 = b.int(3);
    let p3 = b.gep(pc, c3, 4);
    let t3 = b.load(p3, I32);
    let t0 = b.load(pc, I32);
    let t = b.add(t3, t0);
    b.putint(t);
    b.putch('\n');
    b.ret(Some(zero));
    m.add_function(b.finish());
    let mut e = Expect::new();
    e.int(43).ch(' ').float(7.0).ch(' ').int(-1 + 7 + (1 << 30)).ch(' ').int(5000).ch(' ').int(50).ch('\n');
    check(&m, "", &e.text(), 0);
}

#[test]
fn putf_with_ints_and_floats() {
    use crate::ir::{Callee, Type::I32};
    use crate::runtime::PutfArg;
    let formats: [(&[u8], Vec<PutfArg>); 4] = [
        (b"%d %f\n", vec![PutfArg::Int(-7), PutfArg::Float(1.25)]),
        (
            b"%f|%d %d %f %d\n",
            vec![PutfArg::Float(-0.5), PutfArg::Int(1), PutfArg::Int(2), PutfArg::Float(3.75), PutfArg::Int(4)],
        ),
        (
            b"%d %d %d %f %f %f %f %d %f\n",
            vec![
                PutfArg::Int(10),
                PutfArg::Int(20),
                PutfArg::Int(30),
                PutfArg::Float(0.125),
                PutfArg::Float(1e6),
                PutfArg::Float(-2.5),
                PutfArg::Float(100.0),
                PutfArg::Int(-99),
                PutfArg::Float(7.0),
            ],
        ),
        (b"no args, 100%% \"quoted\"\t\\\n", vec![]),
    ];
    let mut m = Module::new();
    let ids: Vec<_> = formats.iter().map(|(f, _)| m.strings.push(f.to_vec())).collect();
    let mut b = FnBuilder::new("main", &[], I32);
    for ((_, args), &id) in formats.iter().zip(&ids) {
        let vals: Vec<_> = args
            .iter()
            .map(|a| match *a {
                PutfArg::Int(i) => b.int(i),
                PutfArg::Float(f) => b.float(f),
            })
            .collect();
        b.call(Callee::PutF(id), &vals, crate::ir::Type::Void);
    }
    let z = b.int(0);
    b.ret(Some(z));
    m.add_function(b.finish());
    let mut io = crate::runtime::Io::new(Vec::new());
    for (f, args) in &formats {
        io.put_f(f, args);
    }
    let expected = String::from_utf8(io.take_stdout()).unwrap();
    check(&m, "", &expected, 0);
}

#[test]
fn input_and_output() {
    use crate::ir::Type::I32;
    let input = "5\n1 -2 3 -4 2147483647\n";
    let m = main_module(|b| {
        let n = b.getint();
        let zero = b.int(0);
        let s = b.counted_loop(zero, n, &[(I32, zero)], |b, _, s| {
            let x = b.getint();
            let two = b.int(2);
            let d = b.mul(x, two);
            b.putint(d);
            b.putch(' ');
            vec![b.add(s[0], x)]
        });
        b.putch('\n');
        b.putint(s[0]);
        b.ret(Some(s[0]));
    });
    let vals = [1i32, -2, 3, -4, i32::MAX];
    let mut e = Expect::new();
    for v in vals {
        e.int(v.wrapping_mul(2)).ch(' ');
    }
    let sum = vals.iter().fold(0i32, |a, &v| a.wrapping_add(v));
    e.ch('\n').int(sum);
    check(&m, input, &e.text(), sum & 0xff);
}

/// A reference implementation of a binary integer operation.
type IntOp = fn(i32, i32) -> i32;

/// Reads `values.len()` integers from stdin and applies `op` with each constant of
/// `constants` (as an immediate operand) and with the same constant read at run time.
fn binary_op_table(values: &[i32], constants: &[i32], ops: &[(crate::ir::Opcode, IntOp)]) -> (Module, String, String) {
    use crate::ir::Type::I32;
    let mut input = format!("{}\n", values.len());
    for v in values {
        input.push_str(&format!("{v} "));
    }
    input.push_str(&format!("\n{}\n", constants.len()));
    for c in constants {
        input.push_str(&format!("{c} "));
    }
    input.push('\n');
    let m = main_module(|b| {
        let arr = b.alloca(I32, values.len() as u32);
        let carr = b.alloca(I32, constants.len() as u32);
        let n = b.getint();
        let zero = b.int(0);
        b.counted_loop(zero, n, &[], |b, i, _| {
            let x = b.getint();
            let p = b.gep(arr, i, 4);
            b.store(p, x);
            vec![]
        });
        let nc = b.getint();
        b.counted_loop(zero, nc, &[], |b, i, _| {
            let x = b.getint();
            let p = b.gep(carr, i, 4);
            b.store(p, x);
            vec![]
        });
        for &(op, _) in ops {
            for (ci, &c) in constants.iter().enumerate() {
                let cv = b.int(c);
                let cidx = b.int(ci as i32);
                b.counted_loop(zero, n, &[], |b, i, _| {
                    let p = b.gep(arr, i, 4);
                    let x = b.load(p, I32);
                    let r1 = b.bin(op, x, cv);
                    b.putint(r1);
                    b.putch(' ');
                    let pc = b.gep(carr, cidx, 4);
                    let cr = b.load(pc, I32);
                    let r2 = b.bin(op, x, cr);
                    b.putint(r2);
                    b.putch(' ');
                    let r3 = b.bin(op, cv, x);
                    b.putint(r3);
                    b.putch(' ');
                    vec![]
                });
                b.putch('\n');
            }
        }
        b.ret(Some(zero));
    });
    let mut e = Expect::new();
    for &(_, f) in ops {
        for &c in constants {
            for &x in values {
                e.int(f(x, c)).ch(' ').int(f(x, c)).ch(' ').int(f(c, x)).ch(' ');
            }
            e.ch('\n');
        }
    }
    (m, input, e.text())
}

#[test]
fn division_and_remainder() {
    use crate::ir::Opcode;
    // No zero dividends/divisors on either side, and no INT_MIN / -1.
    let values =
        [1, -1, 2, -2, 3, 7, -7, 100, -100, 1234567, -1234567, 2147483647, -2147483647, 65536, -65537, 999999937];
    let constants = [
        1,
        -1,
        2,
        -2,
        3,
        -3,
        4,
        -8,
        7,
        10,
        -10,
        16,
        641,
        1000,
        65535,
        65536,
        1_000_000_007,
        -1_000_000_007,
        2147483647,
    ];
    let ops: [(Opcode, IntOp); 2] = [(Opcode::SDiv, i32::wrapping_div), (Opcode::SRem, i32::wrapping_rem)];
    let (m, input, expected) = binary_op_table(&values, &constants, &ops);
    check(&m, &input, &expected, 0);
}

#[test]
fn arithmetic_with_immediates() {
    use crate::ir::Opcode;
    let values = [0, 1, -1, 5, -5, 1000, -123456, 2147483647, -2147483648, 65535];
    let constants = [
        0,
        1,
        -1,
        2,
        3,
        5,
        7,
        8,
        9,
        15,
        16,
        17,
        31,
        33,
        100,
        -3,
        255,
        256,
        257,
        4095,
        65535,
        -65536,
        0x12345678,
        -2147483648,
    ];
    let ops: [(Opcode, IntOp); 3] =
        [(Opcode::Add, i32::wrapping_add), (Opcode::Sub, i32::wrapping_sub), (Opcode::Mul, i32::wrapping_mul)];
    let (m, input, expected) = binary_op_table(&values, &constants, &ops);
    check(&m, &input, &expected, 0);
}

#[test]
fn compares_selects_and_folded_operands() {
    let values = [0, 1, -1, 256, -257, 1000, 65537, -2147483648, 2147483647];
    let constants = [0, 1, -1, 255, -256, 257, 65537, -65537, 2147483647, -2147483648];
    let mut input = String::new();
    for v in values {
        input.push_str(&format!("{v} "));
    }
    let m = main_module(|b| {
        let zero = b.int(0);
        let n = b.int(values.len() as i32);
        b.counted_loop(zero, n, &[], |b, _, _| {
            let x = b.getint();
            for &c in &constants {
                let cv = b.int(c);
                for cc in IntCC::ALL {
                    // x <cc> c and c <cc> x, as selects of a register and an immediate.
                    let p = b.icmp(cc, x, cv);
                    let seven = b.int(7);
                    let s = b.select(p, seven, x);
                    b.putint(s);
                    let q = b.icmp(cc, cv, x);
                    let z = b.zext(q);
                    b.putint(z);
                }
                b.putch(' ');
            }
            // Folded multiplications: x + 4*c, x - c*8, c*x + x, x - c*x (mla / mls),
            // and 2*x - c (rsb with a shifted operand).
            let four = b.int(4);
            let eight = b.int(8);
            let two = b.int(2);
            let k = b.int(1234);
            let m1 = b.mul(k, four);
            let r1 = b.add(x, m1);
            let m2 = b.mul(x, eight);
            let r2 = b.sub(k, m2);
            let m3 = b.mul(k, x);
            let r3 = b.add(m3, x);
            let m4 = b.mul(k, x);
            let r4 = b.sub(x, m4);
            let m5 = b.mul(x, two);
            let r5 = b.sub(m5, k);
            for r in [r1, r2, r3, r4, r5] {
                b.putint(r);
                b.putch(',');
            }
            b.putch('\n');
            vec![]
        });
        b.ret(Some(zero));
    });
    let mut e = Expect::new();
    for x in values {
        for c in constants {
            for cc in IntCC::ALL {
                e.int(if cc.eval(x, c) { 7 } else { x }).int(i32::from(cc.eval(c, x)));
            }
            e.ch(' ');
        }
        let k = 1234i32;
        let rs = [
            x.wrapping_add(k.wrapping_mul(4)),
            k.wrapping_sub(x.wrapping_mul(8)),
            k.wrapping_mul(x).wrapping_add(x),
            x.wrapping_sub(k.wrapping_mul(x)),
            x.wrapping_mul(2).wrapping_sub(k),
        ];
        for r in rs {
            e.int(r).ch(',');
        }
        e.ch('\n');
    }
    check(&m, &input, &e.text(), 0);
}

#[test]
fn register_pressure_across_calls() {
    use crate::ir::Type::{F32, I32};
    // 24 integers and 40 floats live across a call, then combined.
    let input = "3\n";
    let m = main_module(|b| {
        let x = b.getint();
        let xf = b.sitofp(x);
        let ints: Vec<_> = (0..24)
            .map(|i| {
                let c = b.int(i * 37 + 1);
                b.mul(x, c)
            })
            .collect();
        let floats: Vec<_> = (0..40)
            .map(|i| {
                let c = b.float(i as f32 * 0.5 + 0.25);
                b.fmul(xf, c)
            })
            .collect();
        b.putint(x);
        b.putch('\n');
        let mut acc = b.int(0);
        for (i, &v) in ints.iter().enumerate() {
            let w = b.int(i as i32 + 1);
            let t = b.mul(v, w);
            acc = b.add(acc, t);
        }
        let mut facc = b.float(0.0);
        for &v in &floats {
            facc = b.fadd(facc, v);
        }
        b.putint(acc);
        b.putch(' ');
        b.putfloat(facc);
        b.putch('\n');
        let _ = (I32, F32);
        b.ret(Some(acc));
    });
    let x = 3i32;
    let acc: i32 = (0..24).map(|i| x * (i * 37 + 1) * (i + 1)).sum();
    let mut facc = 0.0f32;
    for i in 0..40 {
        facc += x as f32 * (i as f32 * 0.5 + 0.25);
    }
    let mut e = Expect::new();
    e.int(3).ch('\n').int(acc).ch(' ').float(facc).ch('\n');
    check(&m, input, &e.text(), acc & 0xff);
}

#[test]
fn memzero_of_every_shape() {
    use crate::ir::Type::I32;
    let sizes = [1u32, 3, 8, 9, 15, 16, 17, 31, 33, 47, 48, 49, 100, 1000];
    let m = main_module(|b| {
        let zero = b.int(0);
        for &k in &sizes {
            // Fill k + 2 words with garbage, zero the middle k, print sum and sentinels.
            let arr = b.alloca(I32, k + 2);
            let total = b.int(k as i32 + 2);
            b.counted_loop(zero, total, &[], |b, i, _| {
                let p = b.gep(arr, i, 4);
                let g = b.int(-3);
                let v = b.mul(i, g);
                let one = b.int(1);
                let v = b.sub(v, one);
                b.store(p, v);
                vec![]
            });
            let one = b.int(1);
            let mid = b.gep(arr, one, 4);
            b.memzero(mid, k);
            let s = b.counted_loop(zero, total, &[(I32, zero)], |b, i, s| {
                let p = b.gep(arr, i, 4);
                let v = b.load(p, I32);
                vec![b.add(s[0], v)]
            });
            b.putint(s[0]);
            b.putch(' ');
        }
        b.ret(Some(zero));
    });
    let mut e = Expect::new();
    for k in sizes {
        let last = k as i32 + 1;
        e.int(-1 + (-3 * last - 1)).ch(' ');
    }
    check(&m, "", &e.text(), 0);
}

#[test]
fn control_flow_corner_cases() {
    use crate::ir::{Const, GlobalData, Type::I32};
    let mut m = Module::new();
    let g = m.globals.push(GlobalData {
        name: "n".into(),
        elem: I32,
        words: 1,
        init: vec![(0, Const::Int(0))],
        is_const: false,
    });
    // The entry block heads a loop: counts the global up to 5, printing each value.
    let mut f = FnBuilder::new("spin", &[I32], I32);
    let entry = f.cur;
    let exit = f.block();
    let gp = f.f.global_addr(g);
    let x = f.load(gp, I32);
    f.putint(x);
    let one = f.int(1);
    let x1 = f.add(x, one);
    f.store(gp, x1);
    let limit = f.param(0);
    let c = f.icmp(IntCC::Lt, x1, limit);
    f.br(c, entry, exit);
    f.switch(exit);
    f.ret(Some(x1));
    let spin = m.add_function(f.finish());

    let mut b = FnBuilder::new("main", &[], I32);
    let five = b.int(5);
    let r = b.call_fn(spin, &[five], I32).unwrap();
    b.putch(' ');
    b.putint(r);
    b.putch('\n');
    // A branch on a constant, a branch with equal targets, an unreachable block.
    let (t, f2, dead, j) = (b.block(), b.block(), b.block(), b.block());
    let yes = b.f.bconst(true);
    b.br(yes, t, f2);
    b.switch(dead);
    b.putch('X');
    b.jump(j);
    b.switch(f2);
    b.putch('F');
    b.jump(j);
    b.switch(t);
    b.putch('T');
    let cz = b.getint();
    let zero = b.int(0);
    let c1 = b.icmp(IntCC::Gt, cz, zero);
    b.br(c1, j, j);
    b.switch(j);
    // An i1 phi: (x > 3) from one side, (x < -3) from the other; then a branch and select.
    let x = b.getint();
    let (p1, p2, merge, yes_b, no_b, done) = (b.block(), b.block(), b.block(), b.block(), b.block(), b.block());
    let cpos = b.icmp(IntCC::Ge, x, zero);
    b.br(cpos, p1, p2);
    b.switch(p1);
    let three = b.int(3);
    let big = b.icmp(IntCC::Gt, x, three);
    b.jump(merge);
    b.switch(p2);
    let m3 = b.int(-3);
    let small = b.icmp(IntCC::Lt, x, m3);
    b.jump(merge);
    b.switch(merge);
    let (_, far) = b.phi(crate::ir::Type::I1, &[(p1, big), (p2, small)]);
    let hundred = b.int(100);
    let sel = b.select(far, hundred, x);
    b.putint(sel);
    b.br(far, yes_b, no_b);
    b.switch(yes_b);
    b.putch('+');
    b.jump(done);
    b.switch(no_b);
    b.putch('-');
    b.jump(done);
    b.switch(done);
    b.putch('\n');
    b.ret(Some(zero));
    m.add_function(b.finish());
    check(&m, "1 -7", "01234 5\nT100+\n", 0);
    check(&m, "0 2", "01234 5\nT2-\n", 0);
}

#[test]
fn float_matrix_multiply() {
    use crate::ir::{GlobalData, Type::F32, Type::I32};
    const N: i32 = 12;
    let mut m = Module::new();
    let ga = m.globals.push(GlobalData {
        name: "a".into(),
        elem: F32,
        words: (N * N) as u32,
        init: vec![],
        is_const: false,
    });
    let gb = m.globals.push(GlobalData {
        name: "b".into(),
        elem: F32,
        words: (N * N) as u32,
        init: vec![],
        is_const: false,
    });
    let gc = m.globals.push(GlobalData {
        name: "c".into(),
        elem: F32,
        words: (N * N) as u32,
        init: vec![],
        is_const: false,
    });
    let mut b = FnBuilder::new("main", &[], I32);
    let (pa, pb, pc) = (b.f.global_addr(ga), b.f.global_addr(gb), b.f.global_addr(gc));
    let (zero, n) = (b.int(0), b.int(N));
    let row_bytes = (N * 4) as u32;
    b.counted_loop(zero, n, &[], |b, i, _| {
        b.counted_loop(zero, n, &[], |b, j, _| {
            let ra = b.gep(pa, i, row_bytes);
            let ea = b.gep(ra, j, 4);
            let s = b.add(i, j);
            let fs = b.sitofp(s);
            let q = b.float(0.25);
            let v = b.fmul(fs, q);
            b.store(ea, v);
            let rb = b.gep(pb, i, row_bytes);
            let eb = b.gep(rb, j, 4);
            let d = b.sub(i, j);
            let fd = b.sitofp(d);
            b.store(eb, fd);
            vec![]
        });
        vec![]
    });
    let fz = b.float(0.0);
    b.counted_loop(zero, n, &[], |b, i, _| {
        let ra = b.gep(pa, i, row_bytes);
        let rc = b.gep(pc, i, row_bytes);
        b.counted_loop(zero, n, &[], |b, j, _| {
            let acc = b.counted_loop(zero, n, &[(F32, fz)], |b, k, acc| {
                let ea = b.gep(ra, k, 4);
                let x = b.load(ea, F32);
                let rb = b.gep(pb, k, row_bytes);
                let eb = b.gep(rb, j, 4);
                let y = b.load(eb, F32);
                let p = b.fmul(x, y);
                vec![b.fadd(acc[0], p)]
            });
            let ec = b.gep(rc, j, 4);
            b.store(ec, acc[0]);
            vec![]
        });
        vec![]
    });
    let total = b.counted_loop(zero, n, &[(F32, fz)], |b, i, acc| {
        let rc = b.gep(pc, i, row_bytes);
        let ec = b.gep(rc, i, 4);
        let v = b.load(ec, F32);
        vec![b.fadd(acc[0], v)]
    });
    b.putfloat(total[0]);
    b.putch('\n');
    b.ret(Some(zero));
    m.add_function(b.finish());
    dump("matmul", &m);

    let n = N as usize;
    let a: Vec<f32> = (0..n * n).map(|x| ((x / n + x % n) as i32) as f32 * 0.25).collect();
    let bm: Vec<f32> = (0..n * n).map(|x| ((x / n) as i32 - (x % n) as i32) as f32).collect();
    let mut total = 0.0f32;
    for i in 0..n {
        let mut acc = 0.0f32;
        for k in 0..n {
            acc += a[i * n + k] * bm[k * n + i];
        }
        total += acc;
    }
    let mut e = Expect::new();
    e.float(total).ch('\n');
    check(&m, "", &e.text(), 0);
}

#[test]
fn multiply_accumulate_is_bit_identical() {
    use super::run::build_and_run;
    use crate::isa::arm::BackendOptions;
    // a + x*y, x*y + a, x*y - a and a - x*y over special values, with NaNs of both signs as
    // computed values (the fold must not apply where the VFP would return the other NaN) and
    // every non-NaN special as a constant accumulator (where it applies): the folded program
    // must print exactly what vmul + vadd/vsub prints, NaN signs included, on the target.
    let specials = [0.0f32, -0.0, 1.0, -1.5, 3.4e38, -3.4e38, 1e-40, f32::INFINITY, f32::NEG_INFINITY, 7.25];
    let m = main_module(|b| {
        let zero = b.float(0.0);
        let nan = b.fdiv(zero, zero);
        let negative_nan = b.fneg(nan);
        let mut vals: Vec<_> = specials.iter().map(|&f| b.float(f)).collect();
        vals.push(nan);
        vals.push(negative_nan);
        let factors = [vals[2], vals[4], vals[7], vals[10], vals[11]];
        for &acc in &vals {
            for &x in &vals {
                for &y in &factors {
                    for shape in 0..4 {
                        let p = b.fmul(x, y);
                        let s = match shape {
                            0 => b.fadd(acc, p),
                            1 => b.fadd(p, acc),
                            2 => b.fsub(p, acc),
                            _ => b.fsub(acc, p),
                        };
                        b.putfloat(s);
                        b.putch(' ');
                    }
                }
            }
            b.putch('\n');
        }
        let r = b.int(0);
        b.ret(Some(r));
    });
    let asm = crate::isa::arm::compile_module(&m, &BackendOptions::all()).unwrap();
    for mac in ["vmla.f32", "vnmls.f32"] {
        assert!(asm.contains(mac), "the fold into {mac} should apply:\n{asm}");
    }
    assert!(!asm.contains("vmls.f32"), "a - x*y must not fold (vmls flips a NaN product's sign)");
    let Some(folded) = build_and_run(&m, &BackendOptions::all(), "") else {
        return;
    };
    let Some(plain) = build_and_run(&m, &BackendOptions::without(&["arm-op-fold"]).unwrap(), "") else {
        return;
    };
    assert_eq!(folded.stdout, plain.stdout);
    assert!(folded.stdout.contains("-nan") && folded.stdout.contains("inf"));
}

#[test]
fn many_constants_in_a_loop() {
    use crate::ir::Type::{F32, I32};
    // More one-instruction constants than are hoisted, then float constants that need an
    // integer register: everything must stay defined where it is used.
    let m = main_module(|b| {
        let arr = b.alloca(I32, 12);
        let farr = b.alloca(F32, 3);
        let (zero, n) = (b.int(0), b.int(5));
        let sums = b.counted_loop(zero, n, &[(I32, zero)], |b, i, s| {
            for k in 0..12 {
                let idx = b.int(k);
                let p = b.gep(arr, idx, 4);
                let v = b.int(k * 11 + 1);
                b.store(p, v);
            }
            for (k, f) in [0.0f32, 1.1, -7.3].into_iter().enumerate() {
                let idx = b.int(k as i32);
                let p = b.gep(farr, idx, 4);
                let c = b.float(f);
                b.store(p, c);
            }
            let five = b.int(5);
            let p5 = b.gep(arr, five, 4);
            let v = b.load(p5, I32);
            let two = b.int(2);
            let p2 = b.gep(farr, two, 4);
            let f = b.load(p2, F32);
            let fi = b.fptosi(f);
            let t = b.add(v, fi);
            let t = b.add(t, i);
            vec![b.add(s[0], t)]
        });
        b.putint(sums[0]);
        b.ret(Some(zero));
    });
    let expected: i32 = (0..5).map(|i| 5 * 11 + 1 + i - 7).sum();
    check(&m, "", &expected.to_string(), 0);
}

#[test]
fn far_global_offsets() {
    use crate::ir::{GlobalData, Type::I32};
    // Constant offsets beyond the ±32 KiB addend of movw/movt relocations.
    let mut m = Module::new();
    let g = m.globals.push(GlobalData { name: "a".into(), elem: I32, words: 100_000, init: vec![], is_const: false });
    let mut b = FnBuilder::new("main", &[], I32);
    let base = b.f.global_addr(g);
    let mut total = b.int(0);
    for (k, idx) in [99_999, 8_192, 8_191, 50_000].into_iter().enumerate() {
        let i = b.int(idx);
        let p = b.gep(base, i, 4);
        let v = b.int(k as i32 + 1);
        b.store(p, v);
        let x = b.load(p, I32);
        total = b.add(total, x);
        // Variable index plus a far constant offset.
        let row = b.gep(base, i, 4);
        let z = b.getint();
        let q = b.gep(row, z, 4);
        let y = b.load(q, I32);
        total = b.add(total, y);
    }
    b.putint(total);
    let zero = b.int(0);
    b.ret(Some(zero));
    m.add_function(b.finish());
    check(&m, "0 0 0 0", "20", 0);
}

#[test]
fn stencil_with_offset_indices() {
    use crate::ir::{GlobalData, Type::I32};
    // b[i] = a[i-1] + 2*a[i] + a[i+1] over a local and a global array; the constant parts of
    // the indices fold into the addresses.
    let mut m = Module::new();
    let g = m.globals.push(GlobalData { name: "gb".into(), elem: I32, words: 64, init: vec![], is_const: false });
    let mut b = FnBuilder::new("main", &[], I32);
    let a = b.alloca(I32, 64);
    let gb = b.f.global_addr(g);
    let (zero, one, n, last) = (b.int(0), b.int(1), b.int(64), b.int(63));
    b.counted_loop(zero, n, &[], |b, i, _| {
        let p = b.gep(a, i, 4);
        let v = b.mul(i, i);
        let seven = b.int(7);
        let v = b.srem_const(v, 97, seven);
        b.store(p, v);
        vec![]
    });
    b.counted_loop(one, last, &[], |b, i, _| {
        let one = b.int(1);
        let im1 = b.sub(i, one);
        let ip1 = b.add(i, one);
        let pl = b.gep(a, im1, 4);
        let pc = b.gep(a, i, 4);
        let pr = b.gep(a, ip1, 4);
        let (l, c, r) = (b.load(pl, I32), b.load(pc, I32), b.load(pr, I32));
        let two = b.int(2);
        let c2 = b.mul(c, two);
        let s = b.add(l, c2);
        let s = b.add(s, r);
        let q = b.gep(gb, ip1, 4);
        b.store(q, s);
        vec![]
    });
    let total = b.counted_loop(zero, n, &[(I32, zero)], |b, i, s| {
        let p = b.gep(gb, i, 4);
        let v = b.load(p, I32);
        let w = b.add(i, one);
        let t = b.mul(v, w);
        vec![b.add(s[0], t)]
    });
    b.putint(total[0]);
    b.ret(Some(zero));
    m.add_function(b.finish());
    dump("stencil", &m);
    let a: Vec<i32> = (0..64).map(|i: i32| (i * i) % 97 + 7).collect();
    let mut gbv = [0i32; 64];
    for i in 1..63 {
        gbv[i + 1] = a[i - 1] + 2 * a[i] + a[i + 1];
    }
    let total: i32 = (0..64).map(|i| gbv[i] * (i as i32 + 1)).sum();
    check(&m, "", &total.to_string(), 0);
}

#[test]
fn index_plus_constant_over_a_folded_multiplication() {
    use crate::ir::{GlobalData, Type::I32};
    // a[x*y + 1]: the multiplication folds into the add (mla), so the address must use the
    // add's result, not split the constant off the index.
    let mut m = Module::new();
    let g = m.globals.push(GlobalData { name: "arr".into(), elem: I32, words: 64, init: vec![], is_const: false });
    let mut b = FnBuilder::new("main", &[], I32);
    let (x, y) = (b.getint(), b.getint());
    let prod = b.mul(x, y);
    let one = b.int(1);
    let idx = b.add(prod, one);
    let base = b.f.global_addr(g);
    let p = b.gep(base, idx, 4);
    b.store(p, idx);
    let q = b.gep(base, idx, 4);
    let v = b.load(q, I32);
    b.putint(v);
    b.ret(Some(v));
    m.add_function(b.finish());
    check(&m, "5 7", "36", 36);
}
