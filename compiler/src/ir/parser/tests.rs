//! Printer and parser: round trips, canonical numbering, constants, error positions.

use super::*;
use crate::ir::printer::{format_f32_bits, print_module};
use crate::ir::{InstData, Opcode, Value};

/// Every instruction form, string escapes, quoted names, forward references (the phi in
/// `bb1` names `%8`, defined later; `@main` calls `@later`, defined after it).
const ALL_FORMS: &str = r#"global @a: i32 x 100 = zero
global const @c: i32 x 4 = {0: 1, 1: -2, 3: 2147483647}
global @f: f32 x 3 = {0: 1.5, 1: -0.0, 2: f32:0x7fc00001}
global @"odd name": i32 x 1 = {0: -2147483648}
string $0 = "x=%d\n"
string $1 = "tab\there \"q\" \\ \x01\0"

func @main(%0: i32, %1: ptr) -> i32 {
bb0:
    %2 = alloca i32 x 10
    %3 = add i32 %0, 5
    store %3 -> %2
    %4 = load i32 %2
    %5 = gep %2, %3 * 4
    %6 = icmp lt %3, %4
    br %6, bb1, bb2
bb1:
    %7 = phi i32 [bb0: %3], [bb2: %8]
    %8 = call i32 @later(%7, 3.5)
    %9 = call i32 getint()
    call putf $0(%9, 1e-45)
    call putarray(%9, %2)
    memzero %2, 10
    jump bb2
bb2:
    %10 = phi i32 [bb0: %4], [bb1: %8]
    %11 = sub i32 %10, -7
    %12 = mul i32 %11, %11
    %13 = sdiv i32 %12, 3
    %14 = srem i32 %13, 2
    %15 = sitofp %14
    %16 = fadd f32 %15, inf
    %17 = fsub f32 %16, -inf
    %18 = fmul f32 %17, f32:0xffc00000
    %19 = fdiv f32 %18, 0.1
    %20 = fneg f32 %19
    %21 = fcmp ne %20, %19
    %22 = zext %21
    %23 = fptosi %20
    %24 = select i32 %21, %22, %23
    %25 = select ptr true, @a, @"odd name"
    %26 = load f32 @f
    %27 = icmp ge %24, undef:i32
    br %27, bb3, bb4
bb3:
    ret %24
bb4:
    unreachable
}

func @later(%0: i32, %1: f32) -> i32 {
bb0:
    call putfloat(%1)
    ret %0
}

func @v() -> void {
bb0:
    call starttime(3)
    ret
}
"#;

#[test]
fn round_trip_is_byte_identical() {
    let m = parse_module(ALL_FORMS).unwrap_or_else(|e| panic!("{e}"));
    let printed = print_module(&m);
    assert_eq!(printed, ALL_FORMS);
    let again = print_module(&parse_module(&printed).unwrap());
    assert_eq!(again, printed);
}

#[test]
fn names_are_canonicalised() {
    let text = "func @f(%n: i32) -> i32 {
entry:
    %twice = add i32 %n, %n   ; comment
    jump exit

exit:
    ret %twice
}
";
    let m = parse_module(text).unwrap();
    assert_eq!(
        print_module(&m),
        "func @f(%0: i32) -> i32 {\nbb0:\n    %1 = add i32 %0, %0\n    jump bb1\nbb1:\n    ret %1\n}\n"
    );
}

#[test]
fn use_lists_are_built() {
    let m = parse_module(ALL_FORMS).unwrap();
    let f = m.func_by_name("main").unwrap();
    let func = m.func(f);
    let names = crate::ir::printer::Names::new(func);
    let numbered = |n: u32| -> Value { func.values().find(|&v| names.value(v) == Some(n)).unwrap() };
    // %3 is used by the store, the gep, the icmp and the phi in bb1; %8 by both phis.
    assert_eq!(func.users(numbered(3)).len(), 4);
    assert_eq!(func.users(numbered(8)).len(), 2);
    assert!(func.users(numbered(26)).is_empty());
}

#[test]
fn floats_print_back_bit_exactly() {
    let mut bits: Vec<u32> = vec![0, 0x8000_0000, 1, 0x807f_ffff, 0x7f7f_ffff, 0x7f80_0000, 0xff80_0000, 0x7fc0_0000, 0x7fa0_0001];
    // A spread of patterns across every exponent.
    let mut x: u32 = 0x1234_5678;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        bits.push(x);
    }
    for b in bits {
        let text = format!("func @f() -> f32 {{\nbb0:\n    ret {}\n}}\n", format_f32_bits(b));
        let m = parse_module(&text).unwrap_or_else(|e| panic!("{b:#x}: {e}"));
        let func = m.func(m.func_by_name("f").unwrap());
        let ret = func.terminator(func.entry()).unwrap();
        let c = func.as_const(func.args(ret)[0]).unwrap();
        assert_eq!(c, Const::Float(b), "{text}");
    }
}

#[test]
fn builds_from_api_and_prints() {
    let mut m = Module::new();
    let mut f = Function::new("g", &[Type::I32], Type::I32);
    let b0 = f.create_block();
    let b1 = f.create_block();
    let p = f.params[0];
    let one = f.iconst(1);
    let x = f.append_value(b0, InstData::binary(Opcode::Add, p, one, Type::I32));
    f.append(b0, InstData::jump(b1));
    let phi = f.append_value(b1, InstData::phi(Type::I32, &[(b0, x)]));
    f.append(b1, InstData::ret(Some(phi)));
    assert_eq!(
        crate::ir::printer::function_to_string(&m, &f),
        "func @g(%0: i32) -> i32 {\nbb0:\n    %1 = add i32 %0, 1\n    jump bb1\nbb1:\n    %2 = phi i32 [bb0: %1]\n    ret %2\n}\n"
    );
    m.add_function(f);
    let text = print_module(&m);
    assert_eq!(
        text,
        "func @g(%0: i32) -> i32 {\nbb0:\n    %1 = add i32 %0, 1\n    jump bb1\nbb1:\n    %2 = phi i32 [bb0: %1]\n    ret %2\n}\n"
    );
    assert_eq!(print_module(&parse_module(&text).unwrap()), text);
}

fn parse_err(text: &str) -> String {
    match parse_module(text) {
        Ok(_) => panic!("parsed:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn errors_have_positions() {
    let cases: &[(&str, &str)] = &[
        ("func @f() -> i32 {\nbb0:\n    ret %x\n}\n", "3:9: undefined value `%x`"),
        ("func @f() -> i32 {\nbb0:\n    jump nowhere\n}\n", "3:10: undefined block `nowhere`"),
        ("func @f() -> i32 {\nbb0:\n    %1 = call i32 @g()\n    ret %1\n}\n", "3:19: undefined function `@g`"),
        ("func @f() -> ptr {\nbb0:\n    ret @nope\n}\n", "3:9: undefined global `@nope`"),
        ("func @f() {\nbb0:\n    call putf $3()\n    ret\n}\n", "3:10: undefined string `$3`"),
        ("func @f() {\nbb0:\n    frob\n}\n", "3:5: unknown instruction `frob`"),
        ("func @f() {\nbb0:\n    %1 = store 1 -> %1\n}\n", "3:5: `store` here produces no value to name"),
        ("func @f() -> i32 {\nbb0:\n    add i32 1, 2\n}\n", "3:5: the i32 result of `add` needs a name"),
        ("func @f() -> i32 {\nbb0:\n    ret 2147483648\n}\n", "3:9: integer constant out of the i32 range"),
        ("func @f() {\n    ret\n}\n", "2:5: instruction before the first block label"),
        ("func @f() {\nbb0:\n    ret\n", "1:6: function `@f` is missing its closing `}`"),
        ("func @f() {\nbb0:\nbb0:\n    ret\n}\n", "3:1: block `bb0` defined twice"),
        ("func @f(%a: i32, %a: i32) {\nbb0:\n    ret\n}\n", "1:18: value `%a` defined twice"),
        ("func @f() {\nbb0:\n    ret\n}\nfunc @f() {\nbb0:\n    ret\n}\n", "5:6: function `@f` defined twice"),
        ("global @a: i32 x 1 = zero\nglobal @a: i32 x 1 = zero\n", "2:8: global `@a` defined twice"),
        ("string $0 = \"a\\q\"\n", "1:15: unknown escape sequence"),
        ("string $0 = \"abc\n", "1:13: unterminated string literal"),
        ("func @f() {\nbb0:\n    %1 = icmp zz 1, 2\n}\n", "3:15: unknown condition `zz`"),
        ("func @f() {\nbb0:\n    %1 = add i64 1, 2\n}\n", "3:14: expected a type, found `i64`"),
        ("func @f() {\nbb0:\n    ret 1 2\n}\n", "3:11: expected end of line, found `2`"),
        ("func @f() {\nbb0:\n    ret #\n}\n", "3:9: unexpected character `#`"),
        ("func @f() {\nbb0:\n    call frob()\n}\n", "3:10: unknown runtime function `frob`"),
        ("blah\n", "1:1: expected `global`, `string` or `func`, found `blah`"),
        ("func @f() -> f32 {\nbb0:\n    ret f32:0x100000000\n}\n", "3:13: f32 bit pattern wider than 32 bits"),
        ("func @f() -> f32 {\nbb0:\n    ret 1e\n}\n", "3:9: missing exponent digits"),
    ];
    for (text, expected) in cases {
        let got = parse_err(text);
        assert!(got.starts_with(expected), "for:\n{text}\nexpected: {expected}\n     got: {got}");
    }
}

#[test]
fn malformed_input_never_panics() {
    // Every prefix of a valid module, and a few byte-level corruptions, parse or fail cleanly.
    let text = ALL_FORMS;
    for end in (0..text.len()).filter(|&i| text.is_char_boundary(i)) {
        let _ = parse_module(&text[..end]);
    }
    let bytes = text.as_bytes();
    for (i, replacement) in [(10, b'%'), (200, b'@'), (300, b'"'), (450, b'['), (600, b'$'), (700, b'\n')] {
        let mut b = bytes.to_vec();
        b[i] = replacement;
        if let Ok(s) = String::from_utf8(b) {
            let _ = parse_module(&s);
        }
    }
}
