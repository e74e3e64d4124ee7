//! Semantic analysis on small valid programs: the HIR it produces (constants, conversions,
//! conditions, scopes, initialisers, runtime-library calls).

use sysyc::frontend::compile_source;
use sysyc::frontend::hir::*;

fn compile(src: &str) -> Program {
    compile_source("t.sy", src).unwrap_or_else(|e| panic!("{e}"))
}

fn global<'p>(p: &'p Program, name: &str) -> &'p Global {
    p.globals.iter().find(|g| g.name == name).unwrap_or_else(|| panic!("no global {name}"))
}

/// The value of a scalar global (zero when its initialiser list is empty).
fn global_value(p: &Program, name: &str) -> ConstVal {
    let g = global(p, name);
    match (g.init.elems.first(), g.ty.elem()) {
        (Some(&(0, v)), _) => v,
        (None, Scalar::Int) => ConstVal::Int(0),
        (None, Scalar::Float) => ConstVal::Float(0.0),
        (Some(other), _) => panic!("scalar global with element {other:?}"),
    }
}

fn main_body(p: &Program) -> &[Stmt] {
    &p.funcs[p.main.index()].body
}

fn decl_init(s: &Stmt) -> &LocalInit {
    match &s.kind {
        StmtKind::Decl { init: Some(init), .. } => init,
        other => panic!("not an initialised declaration: {other:?}"),
    }
}

fn int(v: i32) -> ConstVal {
    ConstVal::Int(v)
}

#[test]
fn constant_evaluation_is_exact() {
    let p = compile(
        "const int MAX = 1e9, TWO = 2.9;\n\
         const int W = 2147483647 + 1, M = 0x7fffffff * 2, H = -7 / 2, I = -7 % 2, J = 3.9 * 2;\n\
         const int K = !0 + (1 < 2) + (2.5 == 2.5) + (0 && 1 / 0) + (1 || 1 / 0) + !3.3;\n\
         const float F = 1 / 2, G = 1 / 2.0, L = 16777217, P = 16777216.0 + 1.0 + 1.0, Q = -TWO;\n\
         const int NEG = -2147483648, T = -2.9;\n\
         int g_max = MAX, g_two = TWO, g_w = W, g_m = M, g_h = H, g_i = I, g_j = J, g_k = K, g_neg = NEG, g_t = T;\n\
         float g_f = F, g_g = G, g_l = L, g_p = P, g_q = Q;\n\
         int arr[TWO + 1][MAX / 500000000];\n\
         int main() { return 0; }",
    );
    let expect_int = [
        ("g_max", 1_000_000_000),
        ("g_two", 2),
        ("g_w", i32::MIN),
        ("g_m", -2),
        ("g_h", -3),
        ("g_i", -1),
        ("g_j", 7),
        ("g_k", 4),
        ("g_neg", i32::MIN),
        ("g_t", -2),
    ];
    for (name, v) in expect_int {
        assert_eq!(global_value(&p, name), int(v), "{name}");
    }
    let expect_float = [("g_f", 0.0f32), ("g_g", 0.5), ("g_l", 16777216.0), ("g_p", 16777216.0), ("g_q", -2.0)];
    for (name, v) in expect_float {
        match global_value(&p, name) {
            ConstVal::Float(f) => assert_eq!(f.to_bits(), v.to_bits(), "{name}: {f} vs {v}"),
            other => panic!("{name}: {other:?}"),
        }
    }
    // g_p checks binary32 arithmetic: in binary64 the sum would be 16777218.
    assert_eq!(global(&p, "arr").ty, VarType::Array { elem: Scalar::Int, dims: vec![3, 2] });
    // Const scalars have no storage.
    assert!(p.globals.iter().all(|g| g.name != "MAX" && g.name != "F"));
}

#[test]
fn const_arrays_feed_constant_expressions() {
    let p = compile(
        "const int a[4][2] = {{1, 2}, {3, 4}, {}, 7};\n\
         const float fa[3] = {1, 2.5};\n\
         int b[a[3][0]] = {a[1][1], a[3][0] * 2, fa[1] * 2};\n\
         int main() { return a[0][1]; }",
    );
    let a = global(&p, "a");
    assert!(a.is_const);
    assert_eq!(a.init.elems, vec![(0, int(1)), (1, int(2)), (2, int(3)), (3, int(4)), (6, int(7))]);
    let fa = global(&p, "fa");
    assert_eq!(fa.init.elems, vec![(0, ConstVal::Float(1.0)), (1, ConstVal::Float(2.5))]);
    let b = global(&p, "b");
    assert_eq!(b.ty, VarType::Array { elem: Scalar::Int, dims: vec![7] });
    assert_eq!(b.init.elems, vec![(0, int(4)), (1, int(14)), (2, int(5))]);
    // A read of a const array at run time stays a load.
    let StmtKind::Return(Some(e)) = &main_body(&p)[0].kind else { panic!() };
    assert!(matches!(e.kind, ExprKind::Load(_)));
}

#[test]
fn brace_elision_of_local_arrays_matches_sysy_md() {
    let p = compile(
        "int main(){\n\
             const int a[4][2] = {{1, 2}, {3, 4}, {}, 7};\n\
             const int N = 3;\n\
             int b[4][2] = {};\n\
             int c[4][2] = {1, 2, 3, 4, 5, 6, 7, 8};\n\
             int d[N + 1][2] = {1, 2, {3}, {5}, a[3][0], 8};\n\
             int e[4][2][1] = {{d[2][1], {c[2][1]}}, {3, 4}, {5, 6}, {7, 8}};\n\
             return e[3][1][0] + e[0][0][0] + e[0][1][0] + d[3][0];\n\
         }",
    );
    let body = main_body(&p);
    let indices = |s: &Stmt| -> Vec<u32> {
        match decl_init(s) {
            LocalInit::Array(elems) => elems.iter().map(|(i, _)| *i).collect(),
            other => panic!("{other:?}"),
        }
    };
    // body: a, b, c, d, e, return (N has no storage).
    assert_eq!(body.len(), 6);
    assert_eq!(indices(&body[1]), Vec::<u32>::new());
    assert_eq!(indices(&body[2]), (0..8).collect::<Vec<_>>());
    assert_eq!(indices(&body[3]), vec![0, 1, 2, 4, 6, 7]);
    assert_eq!(indices(&body[4]), (0..8).collect::<Vec<_>>());
    let LocalInit::Array(e_elems) = decl_init(&body[4]) else { panic!() };
    // e[0][0][0] = d[2][1]: a load with two indices.
    match &e_elems[0].1.kind {
        ExprKind::Load(place) => assert_eq!(place.indices.len(), 2),
        other => panic!("{other:?}"),
    }
    let f = &p.funcs[p.main.index()];
    let d = f.locals.iter().find(|l| l.name == "d").unwrap();
    assert_eq!(d.ty, VarType::Array { elem: Scalar::Int, dims: vec![4, 2] });
    assert!(f.locals.iter().find(|l| l.name == "a").unwrap().is_const);
}

#[test]
fn implicit_conversions_are_explicit() {
    let p = compile("int main() { float f = 1; int i = f; i = f * 2; return i + f; }");
    let body = main_body(&p);
    match decl_init(&body[0]) {
        LocalInit::Scalar(e) => assert_eq!(e.kind, ExprKind::Const(ConstVal::Float(1.0))),
        other => panic!("{other:?}"),
    }
    match decl_init(&body[1]) {
        LocalInit::Scalar(e) => {
            assert_eq!(e.ty, Some(Scalar::Int));
            let ExprKind::Convert(inner) = &e.kind else { panic!("{e:?}") };
            assert_eq!(inner.ty, Some(Scalar::Float));
        }
        other => panic!("{other:?}"),
    }
    let StmtKind::Assign { value, .. } = &body[2].kind else { panic!() };
    let ExprKind::Convert(mul) = &value.kind else { panic!("{value:?}") };
    let ExprKind::Binary(BinaryOp::Mul, _, two) = &mul.kind else { panic!() };
    assert_eq!(two.kind, ExprKind::Const(ConstVal::Float(2.0)));
    let StmtKind::Return(Some(ret)) = &body[3].kind else { panic!() };
    assert_eq!(ret.ty, Some(Scalar::Int));
    let ExprKind::Convert(sum) = &ret.kind else { panic!() };
    let ExprKind::Binary(BinaryOp::Add, l, _) = &sum.kind else { panic!() };
    assert!(matches!(l.kind, ExprKind::Convert(_)) && l.ty == Some(Scalar::Float));
}

#[test]
fn out_of_range_float_constant_conversion_stays_at_run_time() {
    // Not a constant context: converting 1e10 to int is a run-time trap, not a compile error.
    let p = compile("int main() { int x = 1e10; return x; }");
    match decl_init(&main_body(&p)[0]) {
        LocalInit::Scalar(e) => assert!(matches!(e.kind, ExprKind::Convert(_))),
        other => panic!("{other:?}"),
    }
}

#[test]
fn conditions_are_int_tests() {
    let p = compile("int main() { float f = 0.5; if (f) return 1; while (!f) {} return f && 2 || 0; }");
    let body = main_body(&p);
    let StmtKind::If { cond, .. } = &body[1].kind else { panic!() };
    assert!(
        matches!(&cond.kind, ExprKind::Binary(BinaryOp::Ne, _, z) if z.kind == ExprKind::Const(ConstVal::Float(0.0)))
    );
    let StmtKind::While { cond, .. } = &body[2].kind else { panic!() };
    let ExprKind::Unary(UnaryOp::Not, inner) = &cond.kind else { panic!() };
    assert_eq!(inner.ty, Some(Scalar::Int));
    assert!(matches!(inner.kind, ExprKind::Binary(BinaryOp::Ne, ..)));
    let StmtKind::Return(Some(r)) = &body[3].kind else { panic!() };
    let ExprKind::Logical(LogicalOp::Or, and, _) = &r.kind else { panic!("{r:?}") };
    let ExprKind::Logical(LogicalOp::And, f, _) = &and.kind else { panic!() };
    assert!(matches!(f.kind, ExprKind::Binary(BinaryOp::Ne, ..)));
}

#[test]
fn scopes_and_shadowing() {
    let p = compile(
        "int a = 1;\n\
         int f() { return a; }\n\
         int main() { int r = a; int a = 2; { int a = a + 1; putint(a); } { float f = 1.5; r = r + f + f(); } return a + r; }",
    );
    let g = VarRef::Global(GlobalId(0));
    let main = &p.funcs[p.main.index()];
    assert_eq!(main.locals.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(), vec!["r", "a", "a", "f"]);
    let body = &main.body;
    match decl_init(&body[0]) {
        LocalInit::Scalar(e) => assert_eq!(e.kind, ExprKind::Load(Place { var: g, indices: vec![] })),
        other => panic!("{other:?}"),
    }
    let StmtKind::Block(inner) = &body[2].kind else { panic!() };
    // C scoping: the inner `a` is visible in its own initialiser.
    match decl_init(&inner[0]) {
        LocalInit::Scalar(e) => {
            let ExprKind::Binary(_, l, _) = &e.kind else { panic!() };
            assert_eq!(l.kind, ExprKind::Load(Place { var: VarRef::Local(LocalId(2)), indices: vec![] }));
        }
        other => panic!("{other:?}"),
    }
    let StmtKind::Expr(call) = &inner[1].kind else { panic!() };
    let ExprKind::Call { callee: Callee::Builtin(Builtin::PutInt), args } = &call.kind else { panic!() };
    assert_eq!(args[0].kind, ExprKind::Load(Place { var: VarRef::Local(LocalId(2)), indices: vec![] }));
    let StmtKind::Return(Some(r)) = &body[4].kind else { panic!() };
    let ExprKind::Binary(_, l, _) = &r.kind else { panic!() };
    assert_eq!(l.kind, ExprKind::Load(Place { var: VarRef::Local(LocalId(1)), indices: vec![] }));
}

#[test]
fn array_arguments_and_partial_indexing() {
    let p = compile(
        "int sum(int r[], int n) { return r[n - 1]; }\n\
         float g(float m[][3][2]) { return m[0][1][1]; }\n\
         int main() { int a[4][3]; float b[5][3][2]; sum(a[1], 3); g(b); return getarray(a[2]) + sum(a[0], 1); }",
    );
    let sum = &p.funcs[0];
    assert_eq!(sum.locals[0].ty, VarType::ArrayParam { elem: Scalar::Int, dims: vec![] });
    assert!(sum.locals[0].is_param);
    let body = main_body(&p);
    let StmtKind::Expr(call) = &body[2].kind else { panic!() };
    let ExprKind::Call { callee: Callee::User(FuncId(0)), args } = &call.kind else { panic!() };
    let ExprKind::ArrayAddr(place) = &args[0].kind else { panic!("{:?}", args[0]) };
    assert_eq!(place.indices.len(), 1);
    assert_eq!(args[0].ty, Some(Scalar::Int));
    let StmtKind::Expr(call) = &body[3].kind else { panic!() };
    let ExprKind::Call { args, .. } = &call.kind else { panic!() };
    let ExprKind::ArrayAddr(place) = &args[0].kind else { panic!() };
    assert!(place.indices.is_empty());
}

#[test]
fn runtime_library_calls() {
    let p = compile(
        "int main() {\n\
           starttime();\n\
           int n = getint(); float x = getfloat(); int c = getch();\n\
           int a[10]; float b[10];\n\
           n = getarray(a) + getfarray(b);\n\
           putint(x); putch(65); putfloat(n); putarray(n, a); putfarray(2, b);\n\
           putf(\"%d %f\\n\", n, x);\n\
           stoptime();\n\
           return 0;\n\
         }",
    );
    let mut calls = Vec::new();
    fn collect(e: &Expr, out: &mut Vec<(Builtin, Vec<Expr>)>) {
        if let ExprKind::Call { callee: Callee::Builtin(b), args } = &e.kind {
            out.push((*b, args.clone()));
        }
        match &e.kind {
            ExprKind::Binary(_, a, b) | ExprKind::Logical(_, a, b) => {
                collect(a, out);
                collect(b, out);
            }
            _ => {}
        }
    }
    for s in main_body(&p) {
        match &s.kind {
            StmtKind::Expr(e) | StmtKind::Assign { value: e, .. } => collect(e, &mut calls),
            StmtKind::Decl { init: Some(LocalInit::Scalar(e)), .. } => collect(e, &mut calls),
            _ => {}
        }
    }
    let names: Vec<Builtin> = calls.iter().map(|(b, _)| *b).collect();
    use Builtin::*;
    assert_eq!(
        names,
        vec![
            StartTime, GetInt, GetFloat, GetCh, GetArray, GetFArray, PutInt, PutCh, PutFloat, PutArray, PutFArray,
            PutF, StopTime
        ]
    );
    assert_eq!(calls[0].1[0].kind, ExprKind::Const(ConstVal::Int(2)));
    assert_eq!(calls[12].1[0].kind, ExprKind::Const(ConstVal::Int(8)));
    // putint(x) converts the float; putfloat(n) converts the int.
    assert!(matches!(calls[6].1[0].kind, ExprKind::Convert(_)) && calls[6].1[0].ty == Some(Scalar::Int));
    assert_eq!(calls[8].1[0].ty, Some(Scalar::Float));
    // putf: the string, then the arguments with their own types (no conversion).
    let putf = &calls[11].1;
    assert_eq!(putf[0].kind, ExprKind::Str(b"%d %f\n".to_vec()));
    assert_eq!(putf[1].ty, Some(Scalar::Int));
    assert_eq!(putf[2].ty, Some(Scalar::Float));
    assert!(!matches!(putf[2].kind, ExprKind::Convert(_)));
}

#[test]
fn functions_and_variables_have_separate_namespaces() {
    let p =
        compile("int f() { return 1; }\nint main() { int f = 2; int getint = 3; return f + f() + getint + getint(); }");
    assert_eq!(p.funcs.len(), 2);
    assert_eq!(p.funcs[p.main.index()].name, "main");
}

#[test]
fn globals_are_converted_and_zeros_left_out() {
    let p =
        compile("float g = 3; int h = 2.7; int z = 0; float nz = -0.0; int arr[3] = {0, 5}; int main() { return 0; }");
    assert_eq!(global_value(&p, "g"), ConstVal::Float(3.0));
    assert_eq!(global_value(&p, "h"), ConstVal::Int(2));
    assert!(global(&p, "z").init.elems.is_empty());
    // -0.0 is not all-zero bits: it must be kept.
    assert_eq!(global(&p, "nz").init.elems.len(), 1);
    assert_eq!(global(&p, "arr").init.elems, vec![(1, ConstVal::Int(5))]);
}

#[test]
fn scalar_with_braced_initialiser() {
    let p = compile("int g = {4}; int main() { int x = {g}; float y = {{2}}; return x + y; }");
    assert_eq!(global_value(&p, "g"), ConstVal::Int(4));
    match decl_init(&main_body(&p)[1]) {
        LocalInit::Scalar(e) => assert_eq!(e.kind, ExprKind::Const(ConstVal::Float(2.0))),
        other => panic!("{other:?}"),
    }
}

#[test]
fn recursion_and_void_functions() {
    let p = compile(
        "int fib(int n) { if (n < 2) return n; return fib(n - 1) + fib(n - 2); }\n\
         void hello() { putch(104); return; }\n\
         int main() { hello(); return fib(10); }",
    );
    assert_eq!(p.funcs[1].ret, None);
    assert_eq!(p.funcs[0].ret, Some(Scalar::Int));
    assert_eq!(p.main, FuncId(2));
}

#[test]
fn analysing_a_tree_without_source_works() {
    // Trees built by a generator have dummy spans and no source text.
    let unit = sysyc::frontend::parse("int main() { starttime(); return 0; }").expect("parses").without_spans();
    let p = sysyc::frontend::analyze(&unit, &sysyc::frontend::LineIndex::default()).expect("analyses");
    let StmtKind::Expr(call) = &main_body(&p)[0].kind else { panic!() };
    let ExprKind::Call { args, .. } = &call.kind else { panic!() };
    assert_eq!(args[0].kind, ExprKind::Const(ConstVal::Int(1)));
}
