//! Interpreter tests on hand-written IR: results, output, every trap kind, exact step and
//! cost counts. Every program except the deliberately malformed ones is verified first.

use super::*;
use crate::ir::{parse_module, verify_module};
use crate::runtime::TrapKind;

fn module(text: &str) -> Module {
    let m = parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    if let Err(errors) = verify_module(&m) {
        panic!("{}", errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"));
    }
    m
}

fn run_with(text: &str, stdin: &[u8], config: &InterpConfig) -> InterpResult {
    run(&module(text), stdin, config).unwrap_or_else(|e| panic!("{e}"))
}

fn run_text(text: &str, stdin: &[u8]) -> InterpResult {
    run_with(text, stdin, &InterpConfig::default())
}

fn stdout(r: &InterpResult) -> String {
    String::from_utf8_lossy(&r.outcome.stdout).into_owned()
}

fn trap_of(r: &InterpResult) -> Option<TrapKind> {
    r.outcome.trap.as_ref().map(|t| t.kind)
}

/// Wraps `body` (blocks of a `main` returning i32) with `putint`-style helpers.
fn main_only(body: &str) -> String {
    format!("func @main() -> i32 {{\n{body}}}\n")
}

const COUNT_TO_TEN: &str = "func @main() -> i32 {
bb0:
    jump bb1
bb1:
    %i = phi i32 [bb0: 0], [bb1: %j]
    %j = add i32 %i, 1
    %c = icmp lt %j, 10
    br %c, bb1, bb2
bb2:
    ret %j
}
";

#[test]
fn loop_result_steps_and_costs() {
    let r = run_text(COUNT_TO_TEN, b"");
    assert_eq!(r.outcome.exit_status, Some(10));
    assert_eq!(r.outcome.trap, None);
    // jump + 10 × (phi, add, icmp, br) + ret
    assert_eq!(r.outcome.steps, 42);
    assert_eq!(r.cost.total(), 42);
    assert_eq!(r.cost.get(CostClass::Branch), 11);
    assert_eq!(r.cost.get(CostClass::Phi), 10);
    assert_eq!(r.cost.get(CostClass::Alu), 20);
    assert_eq!(r.cost.get(CostClass::Return), 1);
    assert_eq!(r.cost.to_string(), "alu=20 branch=11 return=1 phi=10");
}

#[test]
fn exit_status_is_low_byte() {
    let r = run_text(&main_only("bb0:\n    ret 1225\n"), b"");
    assert_eq!(r.outcome.exit_status, Some(201));
    let r = run_text(&main_only("bb0:\n    ret -8\n"), b"");
    assert_eq!(r.outcome.exit_status, Some(248));
    assert_eq!(r.outcome.expected_output().unwrap(), b"248\n");
}

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

#[test]
fn recursion() {
    let r = run_text(FIB, b"20");
    assert_eq!(stdout(&r), "6765\n");
    assert_eq!(r.outcome.exit_status, Some(0));
    // The same translated program serves several inputs.
    let p = Program::new(&module(FIB)).unwrap();
    assert_eq!(p.run(b"10", &InterpConfig::default()).outcome.stdout, b"55\n");
    assert_eq!(p.run(b" 1 ", &InterpConfig::default()).outcome.stdout, b"1\n");
}

const DEPTH: &str = "func @down(%n: i32) -> i32 {
bb0:
    %buf = alloca i32 x 4
    store %n -> %buf
    %c = icmp eq %n, 0
    br %c, done, more
done:
    ret 0
more:
    %m = sub i32 %n, 1
    %r = call i32 @down(%m)
    %v = load i32 %buf
    %s = add i32 %r, 1
    %t = add i32 %s, %v
    %u = sub i32 %t, %v
    ret %u
}

func @main() -> i32 {
bb0:
    %n = call i32 getint()
    %r = call i32 @down(%n)
    call putint(%r)
    ret 0
}
";

#[test]
fn deep_recursion_does_not_use_the_native_stack() {
    let r = run_text(DEPTH, b"300000");
    assert_eq!(stdout(&r), "300000");
    let config = InterpConfig { max_call_depth: 1000, ..InterpConfig::default() };
    let r = run_with(DEPTH, b"1000", &config);
    assert_eq!(trap_of(&r), Some(TrapKind::CallDepth));
    let r = run_with(DEPTH, b"999", &config);
    assert_eq!(trap_of(&r), None);
    let config = InterpConfig { max_stack_words: 4 * 100, ..InterpConfig::default() };
    let r = run_with(DEPTH, b"200", &config);
    assert_eq!(trap_of(&r), Some(TrapKind::CallDepth));
    // Globals do not count against the stack.
    let big_global = format!("global @big: i32 x 1000 = zero\n{DEPTH}");
    assert_eq!(trap_of(&run_with(&big_global, b"90", &config)), None);
}

const ARRAYS: &str = "global @g: i32 x 8 = {1: 10, 7: 70}
global const @k: i32 x 2 = {0: 5, 1: 6}

func @sum(%a: ptr, %n: i32) -> i32 {
entry:
    jump head
head:
    %i = phi i32 [entry: 0], [body: %i2]
    %s = phi i32 [entry: 0], [body: %s2]
    %c = icmp lt %i, %n
    br %c, body, exit
body:
    %p = gep %a, %i * 4
    %x = load i32 %p
    %s2 = add i32 %s, %x
    %i2 = add i32 %i, 1
    jump head
exit:
    ret %s
}

func @main() -> i32 {
bb0:
    %arr = alloca i32 x 10
    %n = call i32 getarray(%arr)
    %s = call i32 @sum(%arr, %n)
    call putint(%s)
    call putch(10)
    %gs = call i32 @sum(@g, 8)
    call putint(%gs)
    call putch(10)
    %g2 = gep @g, 2 * 4
    store %s -> %g2
    call putarray(3, @g)
    %k1 = gep @k, 1 * 4
    %kv = load i32 %k1
    call putarray(%n, %arr)
    memzero %arr, 10
    call putarray(10, %arr)
    ret %kv
}
";

#[test]
fn arrays_globals_and_runtime_arrays() {
    let r = run_text(ARRAYS, b"4\n1 2 3 -4\n");
    assert_eq!(stdout(&r), "2\n80\n3: 0 10 2\n4: 1 2 3 -4\n10: 0 0 0 0 0 0 0 0 0 0\n");
    assert_eq!(r.outcome.exit_status, Some(6));
    // getarray past the end of the array.
    let r = run_text(ARRAYS, b"11\n1 2 3 4 5 6 7 8 9 10 11\n");
    assert_eq!(trap_of(&r), Some(TrapKind::OutOfBounds));
    // getarray with too little input.
    let r = run_text(ARRAYS, b"3 1 2");
    assert_eq!(trap_of(&r), Some(TrapKind::InputExhausted));
    // putarray of elements never written.
    let text = ARRAYS.replace("call putarray(%n, %arr)", "call putarray(5, %arr)");
    let r = run_text(&text, b"2 1 2");
    assert_eq!(trap_of(&r), Some(TrapKind::UninitRead));
}

#[test]
fn negative_count_putarray_prints_like_c() {
    let r = run_text(&main_only("bb0:\n    %a = alloca i32 x 1\n    call putarray(-3, %a)\n    ret 0\n"), b"");
    assert_eq!(stdout(&r), "-3:\n");
}

#[test]
fn floats() {
    let text = "string $0 = \"%d %d %d %d %d %d|\"
string $1 = \"%.3f %d %d %d\\n\"
func @main() -> i32 {
bb0:
    %z = fneg f32 0.0
    %e1 = fcmp eq %z, 0.0
    %n = fdiv f32 0.0, 0.0
    %e2 = fcmp ne %n, %n
    %e3 = fcmp lt %n, 1.0
    %e4 = fcmp eq %n, %n
    %e5 = fcmp ge inf, %n
    %e6 = fcmp le -inf, 1.5
    %i1 = zext %e1
    %i2 = zext %e2
    %i3 = zext %e3
    %i4 = zext %e4
    %i5 = zext %e5
    %i6 = zext %e6
    call putf $0(%i1, %i2, %i3, %i4, %i5, %i6)
    call putfloat(%z)
    call putch(32)
    %big = fptosi 1e10
    %small = fptosi -1e10
    %nan = fptosi %n
    %r = sitofp 16777217
    %third = fdiv f32 1.0, 3.0
    call putf $1(%third, %big, %small, %nan)
    call putfloat(%r)
    %m = fmul f32 %third, 3.0
    %s = fsub f32 %m, 1.0
    %a = fadd f32 %s, 0.5
    call putfloat(%a)
    %x = call f32 getfloat()
    call putfloat(%x)
    %t = fptosi -2.9
    ret %t
}
";
    let r = run_text(text, b"0x1.8p1");
    assert_eq!(
        stdout(&r),
        "1 1 0 0 0 1|-0x0p+0 0.333 2147483647 -2147483648 0\n0x1p+240x1p-10x1.8p+1"
    );
    assert_eq!(r.outcome.exit_status, Some(254));
    assert_eq!(r.cost.get(CostClass::FloatAlu), 9);
    assert_eq!(r.cost.get(CostClass::FloatDiv), 2);
    assert_eq!(r.cost.get(CostClass::FloatMul), 1);
    assert_eq!(r.cost.get(CostClass::Convert), 5);
}

#[test]
fn phis_copy_in_parallel() {
    // Fibonacci by swapping through phis: (a, b) <- (b, a + b) and a pure swap (x, y) <- (y, x).
    let text = "func @main() -> i32 {
bb0:
    jump bb1
bb1:
    %i = phi i32 [bb0: 0], [bb1: %i2]
    %a = phi i32 [bb0: 0], [bb1: %b]
    %b = phi i32 [bb0: 1], [bb1: %ab]
    %x = phi i32 [bb0: 7], [bb1: %y]
    %y = phi i32 [bb0: 9], [bb1: %x]
    %ab = add i32 %a, %b
    %i2 = add i32 %i, 1
    %c = icmp lt %i2, 11
    br %c, bb1, bb2
bb2:
    call putint(%a)
    call putch(32)
    call putint(%x)
    ret 0
}
";
    let r = run_text(text, b"");
    // Ten swaps: back to 7 (sequential copies would give 9).
    assert_eq!(stdout(&r), "55 7");
}

#[test]
fn putf_formats() {
    let text = "string $0 = \"[%5d|%-3d|%x|%c|%.2f|%e|%a]\\n\"
func @main() -> i32 {
bb0:
    call putf $0(42, 7, 255, 65, 3.14159, 1234.5, 1.0)
    ret 0
}
";
    assert_eq!(stdout(&run_text(text, b"")), "[   42|7  |ff|A|3.14|1.234500e+03|0x1p+0]\n");
}

#[test]
fn division_traps() {
    let div = |a: i32, b: i32, op: &str| {
        let text = format!(
            "func @main() -> i32 {{\nbb0:\n    %a = call i32 getint()\n    %b = call i32 getint()\n    %q = {op} i32 %a, %b\n    call putint(%q)\n    ret 0\n}}\n"
        );
        run_text(&text, format!("{a} {b}").as_bytes())
    };
    assert_eq!(stdout(&div(-7, 2, "sdiv")), "-3");
    assert_eq!(stdout(&div(-7, 2, "srem")), "-1");
    assert_eq!(trap_of(&div(5, 0, "sdiv")), Some(TrapKind::DivByZero));
    assert_eq!(trap_of(&div(5, 0, "srem")), Some(TrapKind::DivByZero));
    assert_eq!(trap_of(&div(i32::MIN, -1, "sdiv")), Some(TrapKind::DivOverflow));
    assert_eq!(trap_of(&div(i32::MIN, -1, "srem")), Some(TrapKind::DivOverflow));
    assert_eq!(stdout(&div(i32::MIN, 1, "sdiv")), "-2147483648");
}

#[test]
fn trap_counts_only_executed_instructions() {
    let text = "func @g(%d: i32) -> i32 {
bb0:
    %x = sdiv i32 1, %d
    %y = add i32 %x, 1
    ret %y
}

func @main() -> i32 {
bb0:
    %a = add i32 1, 1
    %r = call i32 @g(0)
    %s = add i32 %r, %a
    %t = mul i32 %s, 2
    ret %t
}
";
    let r = run_text(text, b"");
    let trap = r.outcome.trap.clone().unwrap();
    assert_eq!(trap.kind, TrapKind::DivByZero);
    assert!(trap.detail.starts_with("in @g:"), "{}", trap.detail);
    assert_eq!(r.outcome.exit_status, None);
    // add, call, sdiv
    assert_eq!(r.outcome.steps, 3);
    assert_eq!((r.cost.get(CostClass::Alu), r.cost.get(CostClass::Call), r.cost.get(CostClass::Div)), (1, 1, 1));
    assert_eq!(r.cost.get(CostClass::Mul), 0);
}

#[test]
fn step_limit() {
    let spin = main_only("bb0:\n    jump bb1\nbb1:\n    jump bb1\n");
    let config = InterpConfig { max_steps: 1000, ..InterpConfig::default() };
    let r = run_with(&spin, b"", &config);
    assert_eq!(trap_of(&r), Some(TrapKind::StepLimit));
    assert_eq!(r.outcome.steps, 1000);
    // Exactly enough steps is fine.
    let config = InterpConfig { max_steps: 42, ..InterpConfig::default() };
    assert_eq!(run_with(COUNT_TO_TEN, b"", &config).outcome.exit_status, Some(10));
    let config = InterpConfig { max_steps: 41, ..InterpConfig::default() };
    let r = run_with(COUNT_TO_TEN, b"", &config);
    assert_eq!(trap_of(&r), Some(TrapKind::StepLimit));
    assert_eq!(r.outcome.steps, 41);
}

#[test]
fn input_exhausted() {
    let text = main_only("bb0:\n    %x = call i32 getint()\n    ret %x\n");
    assert_eq!(trap_of(&run_text(&text, b"  ")), Some(TrapKind::InputExhausted));
    assert_eq!(trap_of(&run_text(&text, b"abc")), Some(TrapKind::InputExhausted));
    assert_eq!(run_text(&text, b"-12").outcome.exit_status, Some(244));
    let text = main_only("bb0:\n    %x = call i32 getch()\n    %y = call i32 getch()\n    ret %y\n");
    assert_eq!(run_text(&text, b"ab").outcome.exit_status, Some(b'b'));
    assert_eq!(trap_of(&run_text(&text, b"a")), Some(TrapKind::InputExhausted));
    let text = main_only("bb0:\n    %a = alloca f32 x 2\n    %n = call i32 getfarray(%a)\n    call putfarray(%n, %a)\n    ret %n\n");
    let r = run_text(&text, b"2 1.5 -0x1p-2");
    assert_eq!(stdout(&r), "2: 0x1.8p+0 -0x1p-2\n");
    assert_eq!(trap_of(&run_text(&text, b"2 1.5")), Some(TrapKind::InputExhausted));
}

#[test]
fn missing_return() {
    let text = "func @f(%x: i32) -> i32 {
bb0:
    %c = icmp gt %x, 0
    br %c, bb1, bb2
bb1:
    ret %x
bb2:
    unreachable
}

func @main() -> i32 {
bb0:
    %a = call i32 @f(1)
    %b = call i32 @f(0)
    ret %b
}
";
    let r = run_text(text, b"");
    assert_eq!(trap_of(&r), Some(TrapKind::MissingReturn));
    assert_eq!(r.cost.get(CostClass::Other), 1);
}

#[test]
fn memory_faults() {
    let oob = |idx: i32| {
        let text = format!(
            "func @main() -> i32 {{\nbb0:\n    %a = alloca i32 x 4\n    memzero %a, 4\n    %p = gep %a, {idx} * 4\n    %x = load i32 %p\n    ret %x\n}}\n"
        );
        run_text(&text, b"")
    };
    assert_eq!(oob(3).outcome.exit_status, Some(0));
    assert_eq!(trap_of(&oob(4)), Some(TrapKind::OutOfBounds));
    assert_eq!(trap_of(&oob(-1)), Some(TrapKind::OutOfBounds));
    // A pointer may leave its object and come back.
    let text = main_only(
        "bb0:\n    %a = alloca i32 x 4\n    %p = gep %a, -100 * 4\n    %q = gep %p, 101 * 4\n    store 9 -> %q\n    %x = load i32 %q\n    ret %x\n",
    );
    assert_eq!(run_text(&text, b"").outcome.exit_status, Some(9));
    let misaligned = main_only("bb0:\n    %a = alloca i32 x 4\n    %p = gep %a, 1 * 2\n    store 1 -> %p\n    ret 0\n");
    assert_eq!(trap_of(&run_text(&misaligned, b"")), Some(TrapKind::MemoryFault));
    let const_store = "global const @k: i32 x 1 = {0: 1}\nfunc @main() -> i32 {\nbb0:\n    store 2 -> @k\n    ret 0\n}\n";
    assert_eq!(trap_of(&run_text(const_store, b"")), Some(TrapKind::MemoryFault));
    let memzero_oob = main_only("bb0:\n    %a = alloca i32 x 4\n    %p = gep %a, 1 * 4\n    memzero %p, 4\n    ret 0\n");
    assert_eq!(trap_of(&run_text(memzero_oob.as_str(), b"")), Some(TrapKind::OutOfBounds));
    // A pointer to a returned function's stack slot dangles.
    let dangling = "func @leak() -> ptr {
bb0:
    %a = alloca i32 x 1
    store 1 -> %a
    ret %a
}

func @main() -> i32 {
bb0:
    %p = call ptr @leak()
    %x = load i32 %p
    ret %x
}
";
    assert_eq!(trap_of(&run_text(dangling, b"")), Some(TrapKind::MemoryFault));
}

#[test]
fn uninitialised_memory() {
    let text = main_only("bb0:\n    %a = alloca i32 x 2\n    store 1 -> %a\n    %p = gep %a, 1 * 4\n    %x = load i32 %p\n    ret 0\n");
    assert_eq!(trap_of(&run_text(&text, b"")), Some(TrapKind::UninitRead));
    // Without eager trapping, the unused load is harmless...
    let lazy = InterpConfig { trap_on_uninit_load: false, ..InterpConfig::default() };
    assert_eq!(run_with(&text, b"", &lazy).outcome.exit_status, Some(0));
    // ...but branching on the loaded value is not.
    let text = main_only(
        "bb0:\n    %a = alloca i32 x 1\n    %x = load i32 %a\n    %y = add i32 %x, 1\n    %c = icmp eq %y, 0\n    br %c, bb1, bb1\nbb1:\n    ret 0\n",
    );
    assert_eq!(trap_of(&run_with(&text, b"", &lazy)), Some(TrapKind::UninitRead));
    // An alloca executed again (a fresh variable in a loop) forgets its contents.
    let text = "func @main() -> i32 {
bb0:
    jump bb1
bb1:
    %i = phi i32 [bb0: 0], [bb2: %j]
    %a = alloca i32 x 1
    %c = icmp eq %i, 0
    br %c, bb2, bb3
bb3:
    %x = load i32 %a
    ret %x
bb2:
    store 5 -> %a
    %j = add i32 %i, 1
    jump bb1
}
";
    assert_eq!(trap_of(&run_text(text, b"")), Some(TrapKind::UninitRead));
    // Storing undef makes a word uninitialised.
    let text = main_only("bb0:\n    %a = alloca i32 x 1\n    store 1 -> %a\n    store undef:i32 -> %a\n    %x = load i32 %a\n    ret %x\n");
    assert_eq!(trap_of(&run_text(&text, b"")), Some(TrapKind::UninitRead));
}

#[test]
fn undef_traps_only_where_it_matters() {
    let cases: &[(&str, Option<TrapKind>)] = &[
        // Arithmetic, comparison, conversion, select and calls carry undef along.
        ("%x = add i32 undef:i32, 1\n    %f = sitofp %x\n    %c = fcmp lt %f, 1.0\n    %s = select i32 %c, 1, 2\n    %r = call i32 @id(%s)\n    ret 0", None),
        ("%c = icmp eq undef:i32, 0\n    br %c, bb1, bb1\nbb1:\n    ret 0", Some(TrapKind::UninitRead)),
        ("br undef:i1, bb1, bb1\nbb1:\n    ret 0", Some(TrapKind::UninitRead)),
        ("%x = load i32 undef:ptr\n    ret 0", Some(TrapKind::UninitRead)),
        ("%p = gep undef:ptr, 1 * 4\n    store 1 -> %p\n    ret 0", Some(TrapKind::UninitRead)),
        ("%a = alloca i32 x 2\n    %p = gep %a, undef:i32 * 4\n    store 1 -> %p\n    ret 0", Some(TrapKind::UninitRead)),
        ("%x = sdiv i32 7, undef:i32\n    ret 0", Some(TrapKind::UninitRead)),
        ("%x = srem i32 undef:i32, 3\n    ret 0", Some(TrapKind::UninitRead)),
        ("call putint(undef:i32)\n    ret 0", Some(TrapKind::UninitRead)),
        ("%x = add i32 undef:i32, 0\n    ret %x", Some(TrapKind::UninitRead)),
        ("%x = call i32 @id(undef:i32)\n    ret %x", Some(TrapKind::UninitRead)),
        ("%s = select i32 undef:i1, 1, 1\n    ret %s", Some(TrapKind::UninitRead)),
    ];
    for (body, expected) in cases {
        let text = format!(
            "func @id(%x: i32) -> i32 {{\nbb0:\n    ret %x\n}}\n\nfunc @main() -> i32 {{\nbb0:\n    {body}\n}}\n"
        );
        assert_eq!(trap_of(&run_text(&text, b"")), *expected, "{text}");
    }
    // A phi with an undef entry is fine until the value is used.
    let text = "func @main() -> i32 {
bb0:
    %n = call i32 getint()
    jump bb1
bb1:
    %i = phi i32 [bb0: 0], [bb1: %i2]
    %t = phi i32 [bb0: undef:i32], [bb1: %i]
    %i2 = add i32 %i, 1
    %c = icmp lt %i2, %n
    br %c, bb1, bb2
bb2:
    ret %t
}
";
    assert_eq!(run_text(text, b"5").outcome.exit_status, Some(3));
    assert_eq!(trap_of(&run_text(text, b"1")), Some(TrapKind::UninitRead));
}

#[test]
fn timers_and_void_functions() {
    let text = "func @say(%x: i32) {
bb0:
    call putint(%x)
    ret
}

func @main() -> i32 {
bb0:
    call starttime(3)
    call @say(1)
    call stoptime(5)
    ret 0
}
";
    let r = run_text(text, b"");
    assert_eq!(stdout(&r), "1");
    assert_eq!(r.cost.get(CostClass::Call), 4);
}

#[test]
fn unrunnable_modules() {
    let no_main = parse_module("func @f() {\nbb0:\n    ret\n}\n").unwrap();
    assert_eq!(run(&no_main, b"", &InterpConfig::default()).unwrap_err(), InterpError::NoMain);
    let bad_main = parse_module("func @main(%x: i32) -> i32 {\nbb0:\n    ret %x\n}\n").unwrap();
    assert_eq!(run(&bad_main, b"", &InterpConfig::default()).unwrap_err(), InterpError::BadMain);
    let cases = [
        "func @main() -> i32 {\nbb0:\n    %x = add i32 1, 2\n}\n",
        "func @main() -> i32 {\n}\n",
        "func @main() -> i32 {\nbb0:\n    jump bb1\nbb1:\n    %p = phi i32 [bb2: 1]\n    ret %p\nbb2:\n    jump bb1\n}\n",
        "func @f(%x: i32) {\nbb0:\n    ret\n}\nfunc @main() -> i32 {\nbb0:\n    call @f()\n    ret 0\n}\n",
        "func @main() -> i32 {\nbb0:\n    %x = add i32 %y, 1\n    ret %x\n}\n",
    ];
    for text in cases {
        let m = match parse_module(text) {
            Ok(m) => m,
            Err(e) => {
                assert!(text.contains("%y"), "{e}");
                continue;
            }
        };
        let err = run(&m, b"", &InterpConfig::default()).unwrap_err();
        assert!(matches!(err, InterpError::Malformed { .. }), "{text}: {err}");
    }
}

#[test]
fn fused_compare_and_branch_counts_as_two_instructions() {
    // The icmp feeding only the br is fused at translation; counts must not notice.
    let text = "func @main() -> i32 {
bb0:
    %d = call i32 getint()
    %x = sdiv i32 10, %d
    %c = icmp lt %x, 3
    br %c, bb1, bb2
bb1:
    ret 1
bb2:
    ret 2
}
";
    let r = run_text(text, b"5");
    assert_eq!(r.outcome.exit_status, Some(1));
    assert_eq!(r.outcome.steps, 5);
    assert_eq!((r.cost.get(CostClass::Alu), r.cost.get(CostClass::Branch)), (1, 1));
    let r = run_text(text, b"0");
    assert_eq!(trap_of(&r), Some(TrapKind::DivByZero));
    assert_eq!(r.outcome.steps, 2);
    assert_eq!((r.cost.get(CostClass::Alu), r.cost.get(CostClass::Branch)), (0, 0));
    // A compare with a second use is not fused and still produces its value.
    let text = text.replace("ret 2", "%z = zext %c\n    ret %z");
    assert_eq!(run_text(&text, b"1").outcome.exit_status, Some(0));
}

#[test]
fn condition_sets_evaluate_like_the_condition_codes() {
    use super::code::Cond;
    use crate::ir::{FloatCC, IntCC};
    let ints = [i32::MIN, i32::MIN + 1, -7, -1, 0, 1, 7, i32::MAX - 1, i32::MAX];
    for cc in IntCC::ALL {
        for &x in &ints {
            for &y in &ints {
                assert_eq!(Cond::int(cc).eval_int(x, y), cc.eval(x, y), "{x} {} {y}", cc.name());
            }
        }
    }
    let floats =
        [f32::NEG_INFINITY, -1.5, -0.0, 0.0, f32::MIN_POSITIVE, 1.5, f32::INFINITY, f32::NAN, -f32::NAN];
    for cc in FloatCC::ALL {
        for &x in &floats {
            for &y in &floats {
                assert_eq!(Cond::float(cc).eval_float(x, y), cc.eval(x, y), "{x} {} {y}", cc.name());
            }
        }
    }
}

#[test]
fn fused_float_compare_and_branch_counts_as_two_instructions() {
    // Like the integer case: an fcmp feeding only the br is fused; a trap before it in the
    // block takes back both.
    let text = "func @main() -> i32 {
bb0:
    %d = call i32 getint()
    %x = sdiv i32 10, %d
    %f = sitofp %x
    %c = fcmp lt %f, 3.0
    br %c, bb1, bb2
bb1:
    ret 1
bb2:
    ret 2
}
";
    let r = run_text(text, b"5");
    assert_eq!(r.outcome.exit_status, Some(1));
    assert_eq!(r.outcome.steps, 6);
    assert_eq!((r.cost.get(CostClass::FloatAlu), r.cost.get(CostClass::Branch)), (1, 1));
    let r = run_text(text, b"0");
    assert_eq!(trap_of(&r), Some(TrapKind::DivByZero));
    assert_eq!(r.outcome.steps, 2);
    assert_eq!((r.cost.get(CostClass::FloatAlu), r.cost.get(CostClass::Branch)), (0, 0));
    // NaN: only `ne` holds.
    let nan = text.replace("%f = sitofp %x", "%z = sitofp %x\n    %f = fdiv f32 0.0, 0.0");
    assert_eq!(run_text(&nan, b"5").outcome.exit_status, Some(2));
    assert_eq!(run_text(&nan.replace("fcmp lt", "fcmp ne"), b"5").outcome.exit_status, Some(1));
    // Branching on an undef comparison traps at the branch.
    let undef = text.replace("%c = fcmp lt %f, 3.0", "%c = fcmp lt undef:f32, 3.0");
    assert_eq!(trap_of(&run_text(&undef, b"5")), Some(TrapKind::UninitRead));
}

#[test]
fn limits_reached_at_a_call_stop_before_the_callee() {
    // The step budget runs out exactly at the callee's entry block: the call is counted,
    // nothing of the callee is.
    let text = "func @g(%x: i32) -> i32 {
bb0:
    %y = add i32 %x, 1
    ret %y
}

func @main() -> i32 {
bb0:
    %a = add i32 1, 1
    %r = call i32 @g(%a)
    ret %r
}
";
    assert_eq!(run_text(text, b"").outcome.exit_status, Some(3));
    for max_steps in [0, 1, 2, 3, 4, 5] {
        let config = InterpConfig { max_steps, ..InterpConfig::default() };
        let r = run_with(text, b"", &config);
        // main's block (3 instructions) and g's (2) are entered whole or not at all.
        let expected = if max_steps < 3 { 0 } else if max_steps < 5 { 2 } else { 5 };
        assert_eq!(r.outcome.steps, expected, "max_steps {max_steps}");
        assert_eq!(trap_of(&r), (max_steps < 5).then_some(TrapKind::StepLimit), "max_steps {max_steps}");
    }
}

#[test]
fn memory_words_keep_their_value_and_initialisation() {
    // A word written, overwritten with undef (uninitialised again), zeroed, and read back;
    // memory of a returned frame reused by the next call starts uninitialised again.
    let text = "func @fill(%v: i32) -> i32 {
bb0:
    %a = alloca i32 x 2
    %p = gep %a, 1 * 4
    %c = icmp eq %v, 0
    br %c, skip, write
write:
    store %v -> %a
    store -1 -> %p
    %x = load i32 %a
    %y = load i32 %p
    %s = add i32 %x, %y
    ret %s
skip:
    %z = load i32 %p
    ret %z
}

func @main() -> i32 {
bb0:
    %g = alloca i32 x 1
    store 7 -> %g
    store undef:i32 -> %g
    memzero %g, 1
    %z = load i32 %g
    %r = call i32 @fill(5)
    call putint(%r)
    %s = call i32 @fill(0)
    ret %z
}
";
    let r = run_text(text, b"");
    assert_eq!(stdout(&r), "4");
    assert_eq!(trap_of(&r), Some(TrapKind::UninitRead));
    let lazy = InterpConfig { trap_on_uninit_load: false, ..InterpConfig::default() };
    let r = run_with(text, b"", &lazy);
    assert_eq!(r.outcome.exit_status, Some(0));
}

/// Invalid operations give the target's positive default NaN, not the host's negative one
/// (x86), and a NaN operand propagates with its sign: `putfloat` prints the sign.
#[test]
fn float_nans_are_the_targets() {
    let text = "\
func @main() -> i32 {
bb0:
    %zero = call f32 getfloat()
    %n = fdiv f32 %zero, %zero
    call putfloat(%n)
    call putch(32)
    %big = fmul f32 %n, 0.0
    %i = fsub f32 inf, inf
    %m = fmul f32 inf, %zero
    call putfloat(%i)
    call putch(32)
    call putfloat(%m)
    call putch(32)
    %neg = fneg f32 %n
    %p = fadd f32 1.0, %neg
    call putfloat(%p)
    ret 0
}
";
    let r = run_text(text, b"0");
    assert_eq!(stdout(&r), "nan nan nan -nan");
}
