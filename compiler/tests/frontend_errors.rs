//! Invalid programs and the diagnostic each must produce.
//!
//! Each case marks the expected error position with `@` (removed before compiling); the
//! first rendered line must be exactly `t.sy:LINE:COL: error: ...` at that position and the
//! message must contain the given text.

use sysyc::frontend::{self, parser::MAX_NESTING};

/// Where the `@` marker sits (1-based line:col, columns in characters) and the source
/// without it.
fn unmark(marked: &str) -> (String, usize, usize) {
    let at = marked.find('@').expect("case has an @ marker");
    let before = &marked[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (marked.replacen('@', "", 1), line, col)
}

fn first_error(src: &str) -> String {
    match frontend::compile_source("t.sy", src) {
        Ok(_) => panic!("compiled without error:\n{src}"),
        Err(e) => e.to_string(),
    }
}

const CASES: &[(&str, &str)] = &[
    // Lexical.
    ("int main() { return @4294967296; }", "integer literal out of range"),
    ("int main() { return @0x100000000; }", "integer literal out of range"),
    ("int main() { return 0@9; }", "invalid digit `9` in octal literal"),
    ("int main() {\n  @/* never closed\n  return 0; }", "unterminated block comment"),
    ("int main() { putf(@\"abc); return 0; }", "unterminated string literal"),
    ("int main() { int a = 1 @# 2; return a; }", "unexpected character `#`"),
    ("int main() { int a = 1 @& 2; return a; }", "unexpected character `&`"),
    ("int main() { return @12ab; }", "invalid numeric literal `12ab`"),
    ("int main() { float f = @0x1.8; return 0; }", "requires a `p` exponent"),
    ("int main() { putf(\"@\\q\"); return 0; }", "unknown escape sequence"),
    ("int main() { return @1e+; }", "exponent has no digits"),
    // Syntactic.
    ("int main() { return 0 @}", "expected `;`, found `}`"),
    ("int main() { int @; return 0; }", "expected an identifier, found `;`"),
    ("int main() { if @1) return 0; return 1; }", "expected `(`"),
    ("@void x; int main() { return 0; }", "variables cannot have type `void`"),
    ("int main() { @else return 1; }", "`else` without a preceding `if`"),
    ("int main() { @1 = 2; return 0; }", "invalid assignment target"),
    ("int main() { return (1 + 2@; }", "expected `)`, found `;`"),
    ("int main() { int a[@] = {1}; return 0; }", "expected an expression"),
    ("int f(int a[@3]) { return 0; } int main() { return 0; }", "first dimension of an array parameter is omitted"),
    ("int main() {\n  return 0;\n@", "expected `}`, found end of file"),
    ("int main() { int a[2] = {1, 2@; return 0; }", "expected `,` or `}`"),
    ("int main() { putint(1 @2); return 0; }", "expected `,` or `)`"),
    ("@return 0;", "expected a declaration or function definition"),
    // Names and scopes.
    ("int main() { return @x; }", "undefined variable `x`"),
    ("int main() { int a; { int b; } return @b; }", "undefined variable `b`"),
    ("int main() { int a; int @a; return 0; }", "redefinition of `a`"),
    ("int g; float @g; int main() { return 0; }", "redefinition of `g`"),
    ("int f(int a) { int @a = 1; return a; } int main() { return 0; }", "redefinition of `a`"),
    ("int f(int a, float @a) { return 0; } int main() { return 0; }", "redefinition of parameter `a`"),
    ("void f() {} void @f() {} int main() { return 0; }", "redefinition of function `f`"),
    ("int f; void @f() {} int main() { return 0; }", "already defined as a global variable"),
    ("void f() {} int @f; int main() { return 0; }", "already defined as a function"),
    ("int @getint() { return 1; } int main() { return 0; }", "runtime library function and cannot be redefined"),
    ("int @putint; int main() { return 0; }", "runtime library function and cannot be a global variable"),
    ("int main() { return @g(); }", "undefined function `g`"),
    ("int main() { int g; return @g(); }", "`g` is a variable, not a function"),
    ("int f() { return 1; } int main() { return @f; }", "`f` is a function, not a variable"),
    ("int main() { int x = @h(); return x; } int h() { return 1; }", "undefined function `h`"),
    // Calls.
    ("int f(int a) { return a; } int main() { return @f(1, 2); }", "takes 1 argument, but 2 arguments were supplied"),
    ("int main() { @putint(); return 0; }", "`putint` takes 1 argument, but 0 arguments were supplied"),
    ("int main() { @starttime(1); return 0; }", "`starttime` takes 0 arguments"),
    (
        "int f(int a) { return a; } int main() { int b[3]; return f(@b); }",
        "argument 1 of `f` must be a scalar (`int`), found array `b`",
    ),
    (
        "int f(int a[]) { return a[0]; } int main() { int b; return f(@b); }",
        "must be an array (`int[]`), found a scalar",
    ),
    (
        "int f(int a[][3]) { return 0; } int main() { int b[2][4]; return f(@b); }",
        "has type `int[][4]`, but the parameter is `int[][3]`",
    ),
    ("int main() { float b[3]; return getarray(@b); }", "has type `float[]`, but the parameter is `int[]`"),
    ("int main() { int a[2][3]; putarray(2, @a); return 0; }", "has type `int[][3]`, but the parameter is `int[]`"),
    ("int main() { putf(@1); return 0; }", "first argument of `putf` must be a string literal"),
    ("int main() { @putf(); return 0; }", "`putf` needs a format string"),
    ("int main() { int a[2]; putf(\"%d\", @a); return 0; }", "argument 2 of `putf` must be a scalar"),
    ("int main() { int a = @\"s\"; return 0; }", "only allowed as the first argument of `putf`"),
    // Values and types.
    ("void f() {} int main() { return @f(); }", "`f` returns `void`"),
    ("void f() {} int main() { int x = 1 + @f(); return x; }", "`f` returns `void`"),
    ("int main() { int a[2]; return @a + 1; }", "array `a` used as a value"),
    ("int main() { int a[2][2]; return @a[1] + 1; }", "array `a` used as a value"),
    ("int main() { int a[2]; @a; return 0; }", "array `a` used as a statement"),
    ("int main() { int a[2]; return @a[0][1]; }", "too many indices for `a`: it has 1 dimension"),
    ("int main() { int a; return @a[0]; }", "`a` is a scalar and cannot be indexed"),
    ("int main() { int a[2]; return a[@1.5]; }", "array index must be an `int`"),
    ("int main() { float f = 1.0; return @f % 2; }", "invalid operands to `%`"),
    // Assignments.
    ("const int c = 1; int main() { @c = 2; return 0; }", "cannot assign to constant `c`"),
    (
        "int main() { const int a[2] = {1, 2}; @a[0] = 3; return 0; }",
        "cannot assign to an element of constant array `a`",
    ),
    ("int main() { int a[2]; @a = 1; return 0; }", "cannot assign to array `a`"),
    ("int f() { return 1; } int main() { @f = 1; return 0; }", "cannot assign to function `f`"),
    // Control flow.
    ("int main() { @break; }", "`break` outside of a loop"),
    ("int main() { if (1) @continue; return 0; }", "`continue` outside of a loop"),
    ("int main() { while (1) { } @break; }", "`break` outside of a loop"),
    ("void f() { return @1; } int main() { return 0; }", "`void` function `f` cannot return a value"),
    ("int main() { @return; }", "`return` needs a value"),
    // main.
    ("int f() { return 0; }@", "missing `int main()` function"),
    ("@", "missing `int main()` function"),
    ("int main(@int a) { return 0; }", "`main` must not have parameters"),
    ("void @main() {}", "`main` must return `int`"),
    ("float @main() { return 0; }", "`main` must return `int`"),
    // Declarations, constants and initialisers.
    ("int main() { int n = 3; int a[@n]; return 0; }", "`n` is not a constant"),
    ("int a[@-1]; int main() { return 0; }", "array dimension must be positive, found -1"),
    ("const int N = 0; int a[@N]; int main() { return 0; }", "array dimension must be positive, found 0"),
    ("int a[@1.5]; int main() { return 0; }", "array dimension must be an `int` constant"),
    ("int a[65536][@65536]; int main() { return 0; }", "array too large"),
    ("int f(int a[][@0]) { return 0; } int main() { return 0; }", "array dimension must be positive"),
    ("int a[2] = {1, 2, @3}; int main() { return 0; }", "too many initialisers"),
    ("int a[2][2] = {{1, 2, @3}}; int main() { return 0; }", "too many initialisers"),
    ("int main() { int x = {1, @2}; return 0; }", "too many initialisers for a scalar"),
    ("int main() { int x = @{}; return x; }", "empty initialiser for a scalar"),
    ("int main() { int a[2] = @3; return 0; }", "must be initialised with a braced list"),
    ("int main() { const int @c; return 0; }", "constant `c` must be initialised"),
    ("const int x = @1 / 0; int main() { return 0; }", "division by zero in constant expression"),
    ("const int x = @5 % (2 - 2); int main() { return 0; }", "division by zero in constant expression"),
    (
        "const int x = @-2147483647 - 1; const int y = @@x / -1; int main() { return 0; }",
        "integer overflow in constant expression",
    ),
    ("const int x = @1e10; int main() { return 0; }", "out of the range of `int`"),
    ("int g; int h = @g; int main() { return 0; }", "`g` is not a constant"),
    ("int f() { return 1; } const int c = @f(); int main() { return 0; }", "call to `f` in a constant expression"),
    ("int main() { int a = 1; const int b = @a; return 0; }", "`a` is not a constant"),
    ("const int a[2] = {1, 2}; const int b = a[@2]; int main() { return 0; }", "index 2 is out of bounds"),
    (
        "const int a[2] = {1, 2}; int b[@a[0] - 1]; int main() { return 0; }",
        "array dimension must be positive, found 0",
    ),
];

#[test]
fn invalid_programs_report_the_expected_error() {
    assert!(CASES.len() >= 40);
    let mut failures = Vec::new();
    for (marked, message) in CASES {
        // A doubled marker `@@` means "the error is at the second `@`" (for cases whose first
        // `@` is just documentation of an earlier, valid construct).
        let marked = match marked.find("@@") {
            Some(_) => marked.replacen('@', "", 1).replacen("@@", "@", 1),
            None => marked.to_string(),
        };
        let (src, line, col) = unmark(&marked);
        let rendered = first_error(&src);
        let first = rendered.lines().next().unwrap_or("");
        let expected_prefix = format!("t.sy:{line}:{col}: error: ");
        if !first.starts_with(&expected_prefix) || !first.contains(message) {
            failures.push(format!("source: {src}\n  expected: {expected_prefix}...{message}...\n  got:      {first}"));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), CASES.len(), failures.join("\n"));
}

fn assert_nesting_error(src: &str) {
    let rendered = first_error(src);
    let first = rendered.lines().next().unwrap_or("");
    assert!(first.starts_with("t.sy:") && first.ends_with("error: nesting too deep"), "{first}");
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let n = MAX_NESTING as usize + 10;
    assert_nesting_error(&format!("int main() {{ return {}1{}; }}", "(".repeat(n), ")".repeat(n)));
    assert_nesting_error(&format!("int main() {{ return {}1; }}", "-".repeat(n).replace('-', "- ")));
    assert_nesting_error(&format!("int main() {{ return {}1; }}", "!".repeat(n)));
    assert_nesting_error(&format!("int main() {} return 0; {}", "{".repeat(n), "}".repeat(n)));
    assert_nesting_error(&format!("int main() {{ {} return 0; }}", "if (1) ".repeat(n)));
    assert_nesting_error(&format!("int main() {{ {} ; return 0; }}", "while (1) ".repeat(n)));
    assert_nesting_error(&format!("int a[1] = {}1{}; int main() {{ return 0; }}", "{".repeat(n), "}".repeat(n)));
    assert_nesting_error(&format!("int main() {{ return {}1{}; }}", "putint(".repeat(n), ")".repeat(n)));
    assert_nesting_error(&format!("int a[2]; int main() {{ return {}0{}; }}", "a[".repeat(n), "]".repeat(n)));
    // A million open parentheses: still a clean error.
    assert_nesting_error(&format!("int main() {{ return {}", "(".repeat(1_000_000)));
    let chain = frontend::parser::MAX_EXPR_HEIGHT as usize + 10;
    assert_nesting_error(&format!("int main() {{ return {}1; }}", "1 + ".repeat(chain)));
}

#[test]
fn nesting_just_below_the_limits_is_accepted() {
    let n = MAX_NESTING as usize - 10;
    let src = format!("int main() {{ return {}1{}; }}", "(".repeat(n), ")".repeat(n));
    frontend::compile_source("t.sy", &src).expect("deep but legal nesting");
    let src = format!("int main() {{ {} return 0; }}", "while (0) ".repeat(n));
    frontend::compile_source("t.sy", &src).expect("deep but legal nesting");
    // Every recursive construct near the limit analyses without exhausting a test thread's
    // stack: nested calls, negations, indices, braces around a scalar, blocks.
    let n = MAX_NESTING as usize - 20;
    let sources = [
        format!("int f(int x) {{ return x; }} int main() {{ return {}1{}; }}", "f(".repeat(n), ")".repeat(n)),
        format!("int main() {{ return {}1{}; }}", "-(".repeat(n / 2), ")".repeat(n / 2)),
        format!("int main() {{ int a[2] = {{}}; return {}0{}; }}", "a[".repeat(n / 2), "]".repeat(n / 2)),
        format!("int main() {{ int x = {}1{}; return x; }}", "{".repeat(n), "}".repeat(n)),
        format!("int main() {} return 0; {}", "{".repeat(n), "}".repeat(n)),
        format!("int main() {{ int i = 0; {} i = 1; return i; }}", "if (i == 0) ".repeat(n)),
    ];
    for src in &sources {
        let p = frontend::compile_source("t.sy", src).unwrap_or_else(|e| panic!("{e}"));
        frontend::hir_check::check(&p).expect("invariants");
        let unit = frontend::parse(src).expect("parses");
        let printed = frontend::pretty::print(&unit);
        assert_eq!(frontend::parse(&printed).expect("reparses").without_spans(), unit.without_spans());
    }
    // Long operator chains are fine up to the expression height limit (the competition
    // suite has a 4000-term sum) — and analysing them must not overflow the stack.
    let chain = frontend::parser::MAX_EXPR_HEIGHT as usize - 20;
    let src = format!("int main() {{ int x = 1; return {}x; }}", "x + 2 * x - ".repeat(chain / 2));
    let program = frontend::compile_source("t.sy", &src).expect("long chain");
    assert_eq!(program.funcs.len(), 1);
    let src = format!("const int c = {}1; int main() {{ return c; }}", "1 + ".repeat(chain));
    frontend::compile_source("t.sy", &src).expect("long constant chain");
    let unit = frontend::parse(&src).expect("parses");
    let printed = frontend::pretty::print(&unit);
    assert_eq!(frontend::parse(&printed).expect("reparses").without_spans(), unit.without_spans());
}

#[test]
fn non_utf8_source_is_a_located_error() {
    let bytes = b"int main() {\n  int a\xff = 1;\n  return 0;\n}\n";
    let src = frontend::source_from_bytes(bytes);
    let rendered = first_error(&src);
    assert!(rendered.starts_with("t.sy:2:8: error: unexpected character"), "{rendered}");
}

#[test]
fn each_broken_item_reports_its_own_error() {
    let src = "int f() { return x; }\nint g() { return y; }\nint main() { return z; }\n";
    let err = frontend::compile_source("t.sy", src).expect_err("three errors");
    let lines: Vec<String> = err.to_string().lines().filter(|l| l.starts_with("t.sy:")).map(String::from).collect();
    assert_eq!(
        lines,
        vec![
            "t.sy:1:18: error: undefined variable `x`",
            "t.sy:2:18: error: undefined variable `y`",
            "t.sy:3:21: error: undefined variable `z`",
        ]
    );
}

#[test]
fn diagnostics_show_the_source_line_and_previous_definition() {
    let err = frontend::compile_source("t.sy", "int main() {\n\tint a;\n\tfloat a;\n\treturn 0;\n}\n")
        .expect_err("redefinition");
    let text = err.to_string();
    assert!(text.starts_with("t.sy:3:8: error: redefinition of `a`"), "{text}");
    assert!(text.contains("float a;"), "{text}");
    assert!(text.contains("previous definition here"), "{text}");
}
