//! Measures the IR interpreter's speed on two hand-written programs: a 200×200 integer
//! matrix product (loop- and memory-heavy) and naive recursive Fibonacci (call-heavy).
//!
//! `cargo run --release -p sysyc --example interp_speed [n] [fib]`

use std::time::Instant;

use sysyc::ir::interp::{InterpConfig, Program};
use sysyc::ir::{parse_module, verify_module};

const MATMUL: &str = "global @a: i32 x 250000 = zero
global @b: i32 x 250000 = zero
global @c: i32 x 250000 = zero

func @main() -> i32 {
entry:
    %n = call i32 getint()
    %nn = mul i32 %n, %n
    jump init
init:
    %i = phi i32 [entry: 0], [init: %i1]
    %pa = gep @a, %i * 4
    %va = srem i32 %i, 7
    store %va -> %pa
    %pb = gep @b, %i * 4
    %vb = srem i32 %i, 5
    store %vb -> %pb
    %i1 = add i32 %i, 1
    %ci = icmp lt %i1, %nn
    br %ci, init, rows
rows:
    %r = phi i32 [init: 0], [rows_next: %r1]
    %rowbase = mul i32 %r, %n
    jump cols
cols:
    %col = phi i32 [rows: 0], [cols_next: %col1]
    jump inner
inner:
    %k = phi i32 [cols: 0], [inner: %k1]
    %s = phi i32 [cols: 0], [inner: %s1]
    %ai = add i32 %rowbase, %k
    %pa2 = gep @a, %ai * 4
    %x = load i32 %pa2
    %bk = mul i32 %k, %n
    %bi = add i32 %bk, %col
    %pb2 = gep @b, %bi * 4
    %y = load i32 %pb2
    %xy = mul i32 %x, %y
    %s1 = add i32 %s, %xy
    %k1 = add i32 %k, 1
    %ck = icmp lt %k1, %n
    br %ck, inner, cols_next
cols_next:
    %ci2 = add i32 %rowbase, %col
    %pc = gep @c, %ci2 * 4
    store %s1 -> %pc
    %col1 = add i32 %col, 1
    %cc = icmp lt %col1, %n
    br %cc, cols, rows_next
rows_next:
    %r1 = add i32 %r, 1
    %cr = icmp lt %r1, %n
    br %cr, rows, sum
sum:
    %j = phi i32 [rows_next: 0], [sum: %j1]
    %h = phi i32 [rows_next: 0], [sum: %h2]
    %pc2 = gep @c, %j * 4
    %v = load i32 %pc2
    %h1 = mul i32 %h, 31
    %h2 = add i32 %h1, %v
    %j1 = add i32 %j, 1
    %cj = icmp lt %j1, %nn
    br %cj, sum, done
done:
    call putint(%h2)
    call putch(10)
    ret 0
}
";

const FIB: &str = "func @fib(%n: i32) -> i32 {
bb0:
    %c = icmp lt %n, 2
    br %c, base, rec
base:
    ret %n
rec:
    %a = sub i32 %n, 1
    %b = sub i32 %n, 2
    %x = call i32 @fib(%a)
    %y = call i32 @fib(%b)
    %s = add i32 %x, %y
    ret %s
}

func @main() -> i32 {
bb0:
    %n = call i32 getint()
    %f = call i32 @fib(%n)
    call putint(%f)
    call putch(10)
    ret 0
}
";

/// CPU time of this thread in seconds (Linux `schedstat`), else wall-clock time: the
/// machine may be shared, and CPU time is what the interpreter itself spends.
fn cpu_seconds(wall: Instant) -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or_else(|| wall.elapsed().as_secs_f64(), |ns| ns as f64 / 1e9)
}

fn measure(name: &str, text: &str, input: &str) {
    let module = parse_module(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    if let Err(errors) = verify_module(&module) {
        panic!("{name}: {errors:?}");
    }
    let program = Program::new(&module).unwrap_or_else(|e| panic!("{name}: {e}"));
    let config = InterpConfig::default();
    let mut best = f64::INFINITY;
    let mut result = None;
    for _ in 0..3 {
        let wall = Instant::now();
        let start = cpu_seconds(wall);
        let r = program.run(input.as_bytes(), &config);
        best = best.min(cpu_seconds(wall) - start);
        result = Some(r);
    }
    let r = result.expect("ran three times");
    let steps = r.outcome.steps;
    println!(
        "{name}({input}): output {:?}, {steps} IR instructions, best of 3 {best:.3} s CPU, {:.0} M instructions/s",
        String::from_utf8_lossy(&r.outcome.stdout).trim(),
        steps as f64 / best / 1e6
    );
    println!("    {}", r.cost);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n = args.get(1).map_or("200", String::as_str);
    let fib = args.get(2).map_or("30", String::as_str);
    measure("matmul", MATMUL, n);
    measure("fib", FIB, fib);
}
