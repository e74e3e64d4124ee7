//! HIR → C, for gcc as a third opinion: the emitted C, compiled by
//! `arm-linux-gnueabihf-gcc` with [`GCC_SEMANTIC_FLAGS`] and linked with the project's
//! runtime library, computes exactly what the SysY program computes.
//!
//! How each SysY rule is kept:
//! * names: every user identifier gets a prefix (`g_` globals, `f_` functions, `l<slot>_`
//!   locals — one C variable per HIR slot, so shadowing is gone too), so nothing clashes with C
//!   keywords, libc or the runtime; the C `main` calls `f_main` and returns its value;
//! * types and constants: array bounds are numbers; float constants are exact hex-float
//!   literals with an `f` suffix (infinities and NaNs through gcc builtins); `INT_MIN` is
//!   written `(-2147483647 - 1)`; every int↔float conversion is an explicit cast;
//! * arithmetic: `-fwrapv` makes `+ - *` and negation wrap, `-fsingle-precision-constant`
//!   and the explicit types keep float arithmetic single precision, `-ffp-contract=off` stops
//!   gcc from fusing `a * b + c` (SysY rounds each operation); `/ %` are C's;
//! * evaluation order: C leaves the order of operands and arguments unspecified; SysY (this
//!   project) evaluates them left to right. Wherever order can matter — some operand contains
//!   a call and another operand is not a constant or a local scalar (which no call can
//!   change) — the operands are bound to temporaries in order inside a GNU statement
//!   expression `({ int t1 = a; int t2 = b; t1 - t2; })`. Array-view arguments bind their
//!   index expressions instead. In an assignment the target's indices come before the value.
//!   `&&`/`||` are C's own and already ordered;
//! * local array initialisers: C sequences initialiser-list elements indeterminately, so an
//!   initialised local array is zero-filled and then assigned element by element, in order;
//! * `main` falling off its end returns 0; `starttime()`/`stoptime()` become
//!   `_sysy_starttime(line)`/`_sysy_stoptime(line)`.
//!
//! Left-deep operator chains (thousands of terms) print without nested parentheses
//! (parentheses only where precedence needs them), so gcc parses them iteratively. The
//! emitter itself recurses over expressions and runs on a thread with a large stack.

use std::fmt::Write as _;
use sysyc::frontend::hir::{
    self, BinaryOp, Builtin, Callee, ConstVal, Expr, ExprKind, LogicalOp, Scalar, StmtKind,
    UnaryOp, VarRef, VarType,
};
use sysyc::runtime::io::format_hex_float;

/// Flags gcc needs to give the emitted C SysY's semantics (besides the target flags).
pub const GCC_SEMANTIC_FLAGS: [&str; 3] = [
    "-fwrapv",
    "-fsingle-precision-constant",
    "-ffp-contract=off",
];

/// The C translation of `program`.
pub fn emit(program: &hir::Program) -> String {
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new()
            .name("cgen".into())
            .stack_size(512 << 20)
            .spawn_scoped(s, || Emitter::new(program).program());
        match worker {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // Without a big stack, emit on this one (fine for all but pathological nesting).
            Err(_) => Emitter::new(program).program(),
        }
    })
}

const PRELUDE: &str = "\
/* C translation of a SysY program (harness::cgen). Compile with -fwrapv
 * -fsingle-precision-constant -ffp-contract=off and link with the SysY runtime. */
int getint(void);
int getch(void);
float getfloat(void);
int getarray(int a[]);
int getfarray(float a[]);
void putint(int v);
void putch(int c);
void putfloat(float v);
void putarray(int n, int a[]);
void putfarray(int n, float a[]);
void putf(const char fmt[], ...);
void _sysy_starttime(int line);
void _sysy_stoptime(int line);
";

/// C operator precedence levels (higher binds tighter).
const PREC_OR: u8 = 4;
const PREC_AND: u8 = 5;
const PREC_EQ: u8 = 9;
const PREC_REL: u8 = 10;
const PREC_ADD: u8 = 12;
const PREC_MUL: u8 = 13;
const PREC_UNARY: u8 = 14;
const PREC_ATOM: u8 = 16;

/// An expression's C text and the precedence of its top operator.
struct Text {
    s: String,
    prec: u8,
}

impl Text {
    fn atom(s: String) -> Text {
        Text { s, prec: PREC_ATOM }
    }

    /// The text, parenthesised unless it binds at least as tightly as `min`.
    fn at(self, min: u8) -> String {
        if self.prec >= min {
            self.s
        } else {
            format!("({})", self.s)
        }
    }
}

struct Emitter<'p> {
    p: &'p hir::Program,
    out: String,
    /// The function being emitted.
    f: Option<&'p hir::Function>,
    temps: u32,
    indent: usize,
}

fn c_type(s: Scalar) -> &'static str {
    match s {
        Scalar::Int => "int",
        Scalar::Float => "float",
    }
}

fn int_literal(v: i32) -> Text {
    match v {
        i32::MIN => Text::atom("(-2147483647 - 1)".into()),
        v if v < 0 => Text {
            s: v.to_string(),
            prec: PREC_UNARY,
        },
        v => Text::atom(v.to_string()),
    }
}

fn float_literal(f: f32) -> Text {
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let body = if f.is_nan() {
        format!("__builtin_nanf(\"0x{:x}\")", f.to_bits() & 0x003f_ffff)
    } else if f.is_infinite() {
        "__builtin_inff()".to_string()
    } else {
        format!("{}f", format_hex_float(f.abs() as f64))
    };
    if sign.is_empty() {
        Text::atom(body)
    } else {
        Text {
            s: format!("-{body}"),
            prec: PREC_UNARY,
        }
    }
}

fn const_text(c: ConstVal) -> Text {
    match c {
        ConstVal::Int(v) => int_literal(v),
        ConstVal::Float(f) => float_literal(f),
    }
}

/// A C string literal with exactly these bytes.
fn c_string(bytes: &[u8]) -> String {
    let mut s = String::from("\"");
    for &b in bytes {
        match b {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'\n' => s.push_str("\\n"),
            b'\t' => s.push_str("\\t"),
            // `?` escaped to rule out trigraphs.
            b'?' => s.push_str("\\?"),
            0x20..=0x7e => s.push(b as char),
            _ => {
                let _ = write!(s, "\\{b:03o}");
            }
        }
    }
    s.push('"');
    s
}

/// True if evaluating `e` may have a side effect (it contains a call).
fn has_call(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call { .. } => true,
        ExprKind::Const(_) | ExprKind::Str(_) => false,
        ExprKind::Load(p) | ExprKind::ArrayAddr(p) => p.indices.iter().any(has_call),
        ExprKind::Unary(_, a) | ExprKind::Convert(a) => has_call(a),
        ExprKind::Binary(_, a, b) | ExprKind::Logical(_, a, b) => has_call(a) || has_call(b),
    }
}

/// True if no call can change the value of `e` and evaluating it changes nothing: constants,
/// local scalars (SysY has no pointers to scalars) and operators over them.
fn is_stable(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Str(_) => true,
        ExprKind::Load(p) => matches!(p.var, VarRef::Local(_)) && p.indices.is_empty(),
        ExprKind::Unary(_, a) | ExprKind::Convert(a) => is_stable(a),
        ExprKind::Binary(_, a, b) | ExprKind::Logical(_, a, b) => is_stable(a) && is_stable(b),
        ExprKind::ArrayAddr(_) | ExprKind::Call { .. } => false,
    }
}

/// Operands whose relative order must be fixed: some operand has a call and another one
/// could observe or change what it does.
fn order_matters(operands: &[&Expr]) -> bool {
    operands.iter().enumerate().any(|(i, a)| {
        has_call(a)
            && operands
                .iter()
                .enumerate()
                .any(|(j, b)| i != j && !is_stable(b))
    })
}

impl<'p> Emitter<'p> {
    fn new(p: &'p hir::Program) -> Self {
        Emitter {
            p,
            out: String::new(),
            f: None,
            temps: 0,
            indent: 0,
        }
    }

    fn program(mut self) -> String {
        self.out.push_str(PRELUDE);
        for g in &self.p.globals {
            self.global(g);
        }
        for f in &self.p.funcs {
            self.prototype(f);
            self.out.push_str(";\n");
        }
        for f in &self.p.funcs {
            self.function(f);
        }
        let main = &self.p.funcs[self.p.main.index()];
        let _ = writeln!(
            self.out,
            "\nint main(void) {{\n    return f_{}();\n}}",
            main.name
        );
        self.out
    }

    fn global(&mut self, g: &hir::Global) {
        let _ = write!(
            self.out,
            "{} g_{}{}",
            c_type(g.ty.elem()),
            g.name,
            dims_text(&g.ty)
        );
        match &g.ty {
            VarType::Array { .. } if !g.init.elems.is_empty() => {
                let strides = g.ty.strides();
                self.out.push_str(" = {");
                for (k, &(i, v)) in g.init.elems.iter().enumerate() {
                    if k > 0 {
                        self.out.push_str(", ");
                    }
                    // A designator naming the element: flat index → one index per dimension.
                    let mut rest = i as u64;
                    for stride in &strides {
                        let _ = write!(self.out, "[{}]", rest / stride);
                        rest %= stride;
                    }
                    let _ = write!(self.out, " = {}", const_text(v).s);
                }
                self.out.push('}');
            }
            VarType::Scalar(_) => {
                if let Some(&(_, v)) = g.init.elems.first() {
                    let _ = write!(self.out, " = {}", const_text(v).s);
                }
            }
            _ => {}
        }
        self.out.push_str(";\n");
    }

    fn prototype(&mut self, f: &hir::Function) {
        let ret = f.ret.map_or("void", c_type);
        let _ = write!(self.out, "{ret} f_{}(", f.name);
        if f.params.is_empty() {
            self.out.push_str("void");
        }
        for (k, p) in f.params.iter().enumerate() {
            if k > 0 {
                self.out.push_str(", ");
            }
            let l = &f.locals[p.index()];
            let _ = write!(
                self.out,
                "{} {}{}",
                c_type(l.ty.elem()),
                local_name(*p, l),
                dims_text(&l.ty)
            );
        }
        self.out.push(')');
    }

    fn function(&mut self, f: &'p hir::Function) {
        self.f = Some(f);
        self.temps = 0;
        self.out.push('\n');
        self.prototype(f);
        self.out.push_str(" {\n");
        self.indent = 1;
        for s in &f.body {
            self.stmt(s);
        }
        if std::ptr::eq(f, &self.p.funcs[self.p.main.index()]) {
            self.line("return 0;");
        }
        self.indent = 0;
        self.out.push_str("}\n");
    }

    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn func(&self) -> &'p hir::Function {
        self.f.expect("statements are emitted inside a function")
    }

    fn var_name(&self, v: VarRef) -> String {
        match v {
            VarRef::Global(g) => format!("g_{}", self.p.globals[g.index()].name),
            VarRef::Local(l) => local_name(l, &self.func().locals[l.index()]),
        }
    }

    fn temp(&mut self) -> String {
        self.temps += 1;
        format!("t{}", self.temps)
    }

    fn stmt(&mut self, s: &hir::Stmt) {
        match &s.kind {
            StmtKind::Decl { local, init } => {
                let l = &self.func().locals[local.index()];
                let name = local_name(*local, l);
                let decl = format!("{} {name}{}", c_type(l.ty.elem()), dims_text(&l.ty));
                match init {
                    None => self.line(&format!("{decl};")),
                    Some(hir::LocalInit::Scalar(e)) => {
                        let v = self.expr(e).s;
                        self.line(&format!("{decl} = {v};"));
                    }
                    Some(hir::LocalInit::Array(elems)) => {
                        self.line(&format!("{decl} = {{0}};"));
                        let strides = l.ty.strides();
                        for (i, e) in elems {
                            let mut target = name.clone();
                            let mut rest = *i as u64;
                            for stride in &strides {
                                let _ = write!(target, "[{}]", rest / stride);
                                rest %= stride;
                            }
                            let v = self.expr(e).s;
                            self.line(&format!("{target} = {v};"));
                        }
                    }
                }
            }
            StmtKind::Assign { place, value } => {
                let mut operands: Vec<&Expr> = place.indices.iter().collect();
                operands.push(value);
                let (prelude, texts) = self.operands(&operands);
                let (index_texts, value_text) = texts.split_at(place.indices.len());
                let target = self.indexed(place.var, index_texts);
                let assign = format!("{target} = {};", value_text[0]);
                if prelude.is_empty() {
                    self.line(&assign);
                } else {
                    self.line(&format!("{{ {prelude}{assign} }}"));
                }
            }
            StmtKind::Expr(e) => {
                let t = self.expr(e).s;
                self.line(&format!("{t};"));
            }
            StmtKind::Block(b) => {
                self.line("{");
                self.indent += 1;
                for s in b {
                    self.stmt(s);
                }
                self.indent -= 1;
                self.line("}");
            }
            StmtKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                let c = self.expr(cond).s;
                self.line(&format!("if ({c}) {{"));
                self.nested(then_branch);
                if let Some(e) = else_branch {
                    self.line("} else {");
                    self.nested(e);
                }
                self.line("}");
            }
            StmtKind::While { cond, body } => {
                let c = self.expr(cond).s;
                self.line(&format!("while ({c}) {{"));
                self.nested(body);
                self.line("}");
            }
            StmtKind::Break => self.line("break;"),
            StmtKind::Continue => self.line("continue;"),
            StmtKind::Return(None) => self.line("return;"),
            StmtKind::Return(Some(e)) => {
                let v = self.expr(e).s;
                self.line(&format!("return {v};"));
            }
        }
    }

    fn nested(&mut self, s: &hir::Stmt) {
        self.indent += 1;
        match &s.kind {
            StmtKind::Block(b) => b.iter().for_each(|s| self.stmt(s)),
            _ => self.stmt(s),
        }
        self.indent -= 1;
    }

    /// `var[i0][i1]...` from index texts.
    fn indexed(&self, var: VarRef, indices: &[String]) -> String {
        let mut s = self.var_name(var);
        for i in indices {
            let _ = write!(s, "[{i}]");
        }
        s
    }

    /// The texts of `operands`, in order. When their order matters, each is bound to a
    /// temporary by the returned prelude (declarations to put before the use).
    fn operands(&mut self, operands: &[&Expr]) -> (String, Vec<String>) {
        if !order_matters(operands) {
            return (
                String::new(),
                operands.iter().map(|e| self.expr(e).s).collect(),
            );
        }
        let mut prelude = String::new();
        let mut texts = Vec::with_capacity(operands.len());
        for e in operands {
            let text = self.expr(e).s;
            let t = self.temp();
            let ty = c_type(e.ty.unwrap_or(Scalar::Int));
            let _ = write!(prelude, "{ty} {t} = {text}; ");
            texts.push(t);
        }
        (prelude, texts)
    }

    /// `({ prelude result; })`, or just `result` without a prelude.
    fn sequenced(prelude: String, result: Text) -> Text {
        if prelude.is_empty() {
            result
        } else {
            Text::atom(format!("({{ {prelude}{}; }})", result.s))
        }
    }

    fn expr(&mut self, e: &Expr) -> Text {
        match &e.kind {
            ExprKind::Const(c) => const_text(*c),
            ExprKind::Str(bytes) => Text::atom(c_string(bytes)),
            ExprKind::Load(place) | ExprKind::ArrayAddr(place) => {
                let operands: Vec<&Expr> = place.indices.iter().collect();
                let (prelude, texts) = self.operands(&operands);
                Self::sequenced(prelude, Text::atom(self.indexed(place.var, &texts)))
            }
            ExprKind::Call { callee, args } => self.call(*callee, args),
            ExprKind::Unary(UnaryOp::Neg, a) => {
                let a = self.expr(a).s;
                Text {
                    s: format!("-({a})"),
                    prec: PREC_UNARY,
                }
            }
            ExprKind::Unary(UnaryOp::Not, a) => {
                let a = self.expr(a).s;
                Text {
                    s: format!("!({a})"),
                    prec: PREC_UNARY,
                }
            }
            ExprKind::Convert(a) => {
                let a = self.expr(a).s;
                Text {
                    s: format!("({})({a})", c_type(e.ty.unwrap_or(Scalar::Int))),
                    prec: PREC_UNARY,
                }
            }
            ExprKind::Logical(op, a, b) => {
                let (sym, prec) = match op {
                    LogicalOp::And => ("&&", PREC_AND),
                    LogicalOp::Or => ("||", PREC_OR),
                };
                let a = self.expr(a).at(prec);
                let b = self.expr(b).at(prec + 1);
                Text {
                    s: format!("{a} {sym} {b}"),
                    prec,
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (sym, prec) = binary_op(*op);
                let (prelude, texts) = if order_matters(&[a, b]) {
                    self.operands(&[a, b])
                } else {
                    let a = self.expr(a).at(prec);
                    let b = self.expr(b).at(prec + 1);
                    (String::new(), vec![a, b])
                };
                Self::sequenced(
                    prelude,
                    Text {
                        s: format!("{} {sym} {}", texts[0], texts[1]),
                        prec,
                    },
                )
            }
        }
    }

    fn call(&mut self, callee: Callee, args: &[Expr]) -> Text {
        let name = match callee {
            Callee::User(f) => format!("f_{}", self.p.funcs[f.index()].name),
            Callee::Builtin(b) => b.link_name().to_string(),
        };
        if let Callee::Builtin(Builtin::StartTime | Builtin::StopTime) = callee {
            let line = match args.first().map(|a| &a.kind) {
                Some(ExprKind::Const(ConstVal::Int(l))) => *l,
                _ => 0,
            };
            return Text::atom(format!("{name}({line})"));
        }
        // Scalar arguments are operands themselves; array views contribute their indices.
        let mut operands: Vec<&Expr> = Vec::new();
        for a in args {
            match &a.kind {
                ExprKind::ArrayAddr(place) => operands.extend(place.indices.iter()),
                _ => operands.push(a),
            }
        }
        let (prelude, texts) = self.operands(&operands);
        let mut texts = texts.into_iter();
        let mut arg_texts = Vec::with_capacity(args.len());
        for a in args {
            match &a.kind {
                ExprKind::ArrayAddr(place) => {
                    let indices: Vec<String> = texts.by_ref().take(place.indices.len()).collect();
                    arg_texts.push(self.indexed(place.var, &indices));
                }
                _ => arg_texts.push(texts.next().unwrap_or_default()),
            }
        }
        Self::sequenced(
            prelude,
            Text::atom(format!("{name}({})", arg_texts.join(", "))),
        )
    }
}

fn binary_op(op: BinaryOp) -> (&'static str, u8) {
    match op {
        BinaryOp::Add => ("+", PREC_ADD),
        BinaryOp::Sub => ("-", PREC_ADD),
        BinaryOp::Mul => ("*", PREC_MUL),
        BinaryOp::Div => ("/", PREC_MUL),
        BinaryOp::Mod => ("%", PREC_MUL),
        BinaryOp::Lt => ("<", PREC_REL),
        BinaryOp::Gt => (">", PREC_REL),
        BinaryOp::Le => ("<=", PREC_REL),
        BinaryOp::Ge => (">=", PREC_REL),
        BinaryOp::Eq => ("==", PREC_EQ),
        BinaryOp::Ne => ("!=", PREC_EQ),
    }
}

fn local_name(id: hir::LocalId, l: &hir::Local) -> String {
    format!("l{}_{}", id.0, l.name)
}

/// `[d0][d1]...` of an array, `[][d1]...` of an array parameter, nothing for a scalar.
fn dims_text(ty: &VarType) -> String {
    match ty {
        VarType::Scalar(_) => String::new(),
        VarType::Array { dims, .. } => dims.iter().map(|d| format!("[{d}]")).collect(),
        VarType::ArrayParam { dims, .. } => std::iter::once("[]".to_string())
            .chain(dims.iter().map(|d| format!("[{d}]")))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c_of(src: &str) -> String {
        emit(&sysyc::frontend::compile_source("t.sy", src).expect("valid program"))
    }

    #[test]
    fn literals_are_exact() {
        assert_eq!(float_literal(0.1).s, "0x1.99999ap-4f");
        assert_eq!(float_literal(-1.5).s, "-0x1.8p+0f");
        assert_eq!(float_literal(f32::from_bits(1)).s, "0x1p-149f");
        assert_eq!(float_literal(f32::NEG_INFINITY).s, "-__builtin_inff()");
        assert_eq!(int_literal(i32::MIN).s, "(-2147483647 - 1)");
        assert_eq!(int_literal(-5).s, "-5");
        assert_eq!(
            c_string(b"a\"b\\c\n%d?\x01"),
            "\"a\\\"b\\\\c\\n%d\\?\\001\""
        );
    }

    #[test]
    fn names_are_prefixed_and_main_wraps_f_main() {
        let c = c_of(
            "int int_ = 1; int f(int x) { int while_ = x; return while_; } int main() { return f(int_); }",
        );
        assert!(c.contains("int g_int_ = 1;"), "{c}");
        assert!(c.contains("int f_f(int l0_x)"), "{c}");
        assert!(c.contains("int l1_while_ = l0_x;"), "{c}");
        assert!(
            c.contains("int main(void) {\n    return f_main();\n}"),
            "{c}"
        );
    }

    #[test]
    fn order_dependent_operands_get_temporaries() {
        let c = c_of(
            "int g = 1; int f() { g = 2; return 3; } int main() { int x = g - f(); int y = x - f(); return x + y; }",
        );
        // `g - f()`: g may change in f, so both operands are bound in order.
        assert!(
            c.contains("({ int t1 = g_g; int t2 = f_f(); t1 - t2; })"),
            "{c}"
        );
        // `x - f()`: a local scalar cannot change in a call; no temporaries needed.
        assert!(c.contains("= l0_x - f_f();"), "{c}");
    }

    #[test]
    fn chains_print_without_nesting_and_precedence_is_kept() {
        let c = c_of("int main() { int a = 1; return a - (a - a) * 2 + a / a % 3 - -a; }");
        assert!(
            c.contains("return l0_a - (l0_a - l0_a) * 2 + l0_a / l0_a % 3 - -(l0_a);"),
            "{c}"
        );
    }

    #[test]
    fn local_array_initialisers_become_ordered_stores() {
        let c = c_of("int main() { int x = 2; int a[2][2] = {{x}, {3, x + 1}}; return a[1][1]; }");
        assert!(c.contains("int l1_a[2][2] = {0};\n    l1_a[0][0] = l0_x;\n    l1_a[1][0] = 3;\n    l1_a[1][1] = l0_x + 1;"), "{c}");
    }
}
