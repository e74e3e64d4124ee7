//! Pretty-printer: [`ast::CompUnit`] → readable SysY source.
//!
//! Contract: for every tree the parser produces, `parse(print(t))` gives `t` again (spans
//! aside). That needs:
//! * parentheses exactly where precedence/left-associativity demand them (a left operand in
//!   parentheses if it binds looser, a right operand if it binds looser or equally);
//! * a space between two identical unary operators (`- -x`, never `--x`);
//! * literals that re-lex to the same value: ints keep their base and print the `u32`
//!   spelling of negative values (which lexes back to the same wrapped `i32`); floats print
//!   as Rust's shortest round-trip decimal (always a valid C literal for finite values, and
//!   both sides round correctly to f32); infinity prints as `1e39`, which overflows back to it;
//! * string literals re-escaped (3-digit octal escapes for non-printable bytes).
//!
//! Trees the parser cannot produce are still printed as valid SysY with the same meaning:
//! a negative literal prints in parentheses (`(-1.5)`, parsed back as a negation), NaN as
//! `(0.0 / 0.0)`, and a then-branch that would capture a following `else` is braced.

use super::ast::*;
use std::fmt::Write;

/// Prints a whole compilation unit, items separated by blank lines between functions.
pub fn print(unit: &CompUnit) -> String {
    let mut p = Printer { out: String::new(), indent: 0 };
    for (i, item) in unit.items.iter().enumerate() {
        if i > 0 && (matches!(item, Item::Func(_)) || matches!(unit.items[i - 1], Item::Func(_))) {
            p.out.push('\n');
        }
        match item {
            Item::Decl(d) => p.decl(d),
            Item::Func(f) => p.func(f),
        }
    }
    p.out
}

/// Prints one expression.
pub fn print_expr(e: &Expr) -> String {
    let mut s = String::new();
    expr(&mut s, e);
    s
}

struct Printer {
    out: String,
    indent: usize,
}

fn btype(t: BType) -> &'static str {
    match t {
        BType::Int => "int",
        BType::Float => "float",
    }
}

impl Printer {
    fn line_start(&mut self) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
    }

    fn decl(&mut self, d: &Decl) {
        self.line_start();
        if d.is_const {
            self.out.push_str("const ");
        }
        self.out.push_str(btype(d.ty));
        self.out.push(' ');
        for (i, def) in d.defs.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.out.push_str(&def.name.name);
            for dim in &def.dims {
                self.out.push('[');
                expr(&mut self.out, dim);
                self.out.push(']');
            }
            if let Some(init) = &def.init {
                self.out.push_str(" = ");
                init_val(&mut self.out, init);
            }
        }
        self.out.push_str(";\n");
    }

    fn func(&mut self, f: &FuncDef) {
        self.line_start();
        self.out.push_str(f.ret.map_or("void", btype));
        self.out.push(' ');
        self.out.push_str(&f.name.name);
        self.out.push('(');
        for (i, p) in f.params.iter().enumerate() {
            if i > 0 {
                self.out.push_str(", ");
            }
            self.out.push_str(btype(p.ty));
            self.out.push(' ');
            self.out.push_str(&p.name.name);
            if let Some(dims) = &p.array_dims {
                self.out.push_str("[]");
                for d in dims {
                    self.out.push('[');
                    expr(&mut self.out, d);
                    self.out.push(']');
                }
            }
        }
        self.out.push_str(") ");
        self.block(&f.body);
        self.out.push('\n');
    }

    /// Prints `{ ... }` starting at the current position (no leading indentation), without
    /// a trailing newline.
    fn block(&mut self, b: &Block) {
        self.out.push_str("{\n");
        self.indent += 1;
        for item in &b.items {
            match item {
                BlockItem::Decl(d) => self.decl(d),
                BlockItem::Stmt(s) => self.stmt(s),
            }
        }
        self.indent -= 1;
        self.line_start();
        self.out.push('}');
    }

    /// Prints a statement on its own line(s), indented.
    fn stmt(&mut self, s: &Stmt) {
        self.line_start();
        self.stmt_inline(s);
        self.out.push('\n');
    }

    /// Prints a statement starting at the current position, without a trailing newline.
    fn stmt_inline(&mut self, s: &Stmt) {
        match s {
            Stmt::Assign { target, value, .. } => {
                lval(&mut self.out, target);
                self.out.push_str(" = ");
                expr(&mut self.out, value);
                self.out.push(';');
            }
            Stmt::Expr(e, _) => {
                if let Some(e) = e {
                    expr(&mut self.out, e);
                }
                self.out.push(';');
            }
            Stmt::Block(b) => self.block(b),
            Stmt::If { cond, then_branch, else_branch, .. } => {
                self.out.push_str("if (");
                expr(&mut self.out, cond);
                self.out.push(')');
                // `if (a) if (b) x; else y;` binds the else to the inner `if`; a then-branch
                // that ends in an else-less `if` must be braced to keep the outer else.
                if else_branch.is_some() && ends_in_open_if(then_branch) {
                    self.out.push_str(" {\n");
                    self.indent += 1;
                    self.stmt(then_branch);
                    self.indent -= 1;
                    self.line_start();
                    self.out.push('}');
                } else {
                    self.body(then_branch);
                }
                if let Some(e) = else_branch {
                    if matches!(**then_branch, Stmt::Block(_)) || (ends_in_open_if(then_branch)) {
                        self.out.push_str(" else");
                    } else {
                        self.out.push('\n');
                        self.line_start();
                        self.out.push_str("else");
                    }
                    if matches!(**e, Stmt::If { .. }) {
                        self.out.push(' ');
                        self.stmt_inline(e);
                    } else {
                        self.body(e);
                    }
                }
            }
            Stmt::While { cond, body, .. } => {
                self.out.push_str("while (");
                expr(&mut self.out, cond);
                self.out.push(')');
                self.body(body);
            }
            Stmt::Break(_) => self.out.push_str("break;"),
            Stmt::Continue(_) => self.out.push_str("continue;"),
            Stmt::Return(e, _) => {
                self.out.push_str("return");
                if let Some(e) = e {
                    self.out.push(' ');
                    expr(&mut self.out, e);
                }
                self.out.push(';');
            }
        }
    }

    /// The body of `if`/`else`/`while`: a block on the same line, anything else indented on
    /// the next line. Leaves the position at the end of the body (no newline).
    fn body(&mut self, s: &Stmt) {
        if let Stmt::Block(b) = s {
            self.out.push(' ');
            self.block(b);
        } else {
            self.out.push('\n');
            self.indent += 1;
            self.line_start();
            self.stmt_inline(s);
            self.indent -= 1;
        }
    }
}

/// True if `s` ends in an `if` without `else` (which would capture a following `else`).
fn ends_in_open_if(s: &Stmt) -> bool {
    match s {
        Stmt::If { else_branch: None, .. } => true,
        Stmt::If { else_branch: Some(e), .. } => ends_in_open_if(e),
        Stmt::While { body, .. } => ends_in_open_if(body),
        _ => false,
    }
}

fn init_val(out: &mut String, v: &InitVal) {
    match v {
        InitVal::Expr(e) => expr(out, e),
        InitVal::List(items, _) => {
            out.push('{');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                init_val(out, item);
            }
            out.push('}');
        }
    }
}

fn lval(out: &mut String, lv: &LVal) {
    out.push_str(&lv.name.name);
    for i in &lv.indices {
        out.push('[');
        expr(out, i);
        out.push(']');
    }
}

/// Precedence of an expression as an operand: binary operators 1..=6, unary 7, primary 8.
fn expr_prec(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Binary(op, ..) => op.precedence(),
        ExprKind::Unary(..) => 7,
        // A negative literal prints as a parenthesised negation.
        _ => 8,
    }
}

fn expr(out: &mut String, e: &Expr) {
    match &e.kind {
        ExprKind::IntLit(v, base) => int_lit(out, *v, *base),
        ExprKind::FloatLit(v) => float_lit(out, *v),
        ExprKind::StrLit(bytes) => str_lit(out, bytes),
        ExprKind::LVal(lv) => lval(out, lv),
        ExprKind::Call { name, args } => {
            out.push_str(&name.name);
            out.push('(');
            for (i, a) in args.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                expr(out, a);
            }
            out.push(')');
        }
        ExprKind::Unary(op, operand) => {
            let sym = match op {
                UnaryOp::Plus => '+',
                UnaryOp::Neg => '-',
                UnaryOp::Not => '!',
            };
            out.push(sym);
            let paren = expr_prec(operand) < 7;
            if paren {
                out.push('(');
            }
            let start = out.len();
            expr(out, operand);
            // Keep `- -x` / `+ +x` apart so they do not lex as `--`/`++` (or as a negative
            // number spelled by a literal).
            if !paren && sym != '!' && matches!(out.as_bytes().get(start), Some(&c) if c == sym as u8) {
                out.insert(start, ' ');
            }
            if paren {
                out.push(')');
            }
        }
        ExprKind::Binary(..) => {
            // Walk the left spine iteratively while no parentheses are needed there: operator
            // chains can be thousands of terms long.
            let mut spine = Vec::new();
            let mut leftmost = e;
            while let ExprKind::Binary(op, lhs, rhs) = &leftmost.kind {
                spine.push((*op, &**rhs));
                leftmost = lhs;
                if expr_prec(lhs) < op.precedence() {
                    break;
                }
            }
            let (innermost_op, _) = spine[spine.len() - 1];
            operand(out, leftmost, expr_prec(leftmost) < innermost_op.precedence());
            for (op, rhs) in spine.into_iter().rev() {
                out.push(' ');
                out.push_str(op.symbol());
                out.push(' ');
                operand(out, rhs, expr_prec(rhs) <= op.precedence());
            }
        }
    }
}

fn operand(out: &mut String, e: &Expr, paren: bool) {
    if paren {
        out.push('(');
        expr(out, e);
        out.push(')');
    } else {
        expr(out, e);
    }
}

fn int_lit(out: &mut String, v: i32, base: IntBase) {
    let u = v as u32;
    // Writing to a String cannot fail.
    let _ = match base {
        IntBase::Dec => write!(out, "{u}"),
        IntBase::Oct => write!(out, "0{u:o}"),
        IntBase::Hex => write!(out, "0x{u:x}"),
    };
}

fn float_lit(out: &mut String, v: f32) {
    if v.is_nan() {
        out.push_str("(0.0 / 0.0)");
    } else if v.is_sign_negative() {
        out.push_str("(-");
        float_lit(out, -v);
        out.push(')');
    } else if v.is_infinite() {
        out.push_str("1e39");
    } else {
        // `{:?}` is the shortest decimal that reads back as the same f32, always with a `.`
        // or an exponent (`1.0`, `1e-7`, `3.4028235e38`), i.e. a C float literal.
        let _ = write!(out, "{v:?}");
    }
}

fn str_lit(out: &mut String, bytes: &[u8]) {
    out.push('"');
    for &b in bytes {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:03o}");
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::parse;

    fn roundtrip(src: &str) -> String {
        let ast = parse(src).expect("parses");
        let printed = print(&ast);
        let again = parse(&printed).unwrap_or_else(|e| panic!("reparse of\n{printed}\nfailed: {e:?}"));
        assert_eq!(again.without_spans(), ast.without_spans(), "printed:\n{printed}");
        printed
    }

    #[test]
    fn parentheses_follow_precedence() {
        let p = roundtrip("int main(){ return (1 - (2 - 3)) * (4 + 5) - -(-6) / !(7 < 8); }");
        assert!(p.contains("(1 - (2 - 3)) * (4 + 5) - - -6 / !(7 < 8)"), "{p}");
        let p = roundtrip("int main(){ return 1 + 2 * 3 < 4 == 5 && 6 || 7 && (8 || 9); }");
        assert!(p.contains("return 1 + 2 * 3 < 4 == 5 && 6 || 7 && (8 || 9);"), "{p}");
        let p = roundtrip("int main(){ return - -x + + +y - !!z; }");
        assert!(p.contains("- -x + + +y - !!z"), "{p}");
        let p = roundtrip("int main(){ return -(1 + 2); }");
        assert!(p.contains("-(1 + 2)"), "{p}");
    }

    #[test]
    fn literals_roundtrip() {
        let p = roundtrip(
            "int main(){ putf(\"a\\n\\t\\\\\\\"\\x01\\177\\0%d\", 0x7fFFffff, 0777, 4294967295, 2147483648, 0, 00); \
             float f = 1e-45 + 3.4028235e38 + 0x1.921fb6p+1 + .1 + 1e39 + 2. + 03.5; return 0; }",
        );
        assert!(p.contains("0x7fffffff, 0777, 4294967295, 2147483648, 0, 00"), "{p}");
        assert!(p.contains("\"a\\n\\t\\\\\\\"\\001\\177\\000%d\""), "{p}");
        assert!(p.contains("1e39"), "{p}");
    }

    #[test]
    fn dangling_else_and_layout() {
        let p = roundtrip(
            "int f(int a[][3], float b){ if (a[0][1]) if (b) return 1; else return 2; else { while (1) break; } \
             if (1) ; else if (2) {} else ; return 0; }\nconst int N = 3, M[2] = {1, {}}; int g[N][2] = {{1}, 2};",
        );
        assert!(p.contains("int f(int a[][3], float b) {\n"), "{p}");
        assert!(p.contains("const int N = 3, M[2] = {1, {}};\n"), "{p}");
    }

    #[test]
    fn generated_shapes_print_validly() {
        // An else-less inner `if` with an outer `else`: the parser never builds this, a
        // generator might.
        let inner = Stmt::If {
            cond: Expr::int(1),
            then_branch: Box::new(Stmt::Break(Span::DUMMY)),
            else_branch: None,
            span: Span::DUMMY,
        };
        let outer = Stmt::If {
            cond: Expr::int(2),
            then_branch: Box::new(inner),
            else_branch: Some(Box::new(Stmt::Continue(Span::DUMMY))),
            span: Span::DUMMY,
        };
        let mut p = Printer { out: String::new(), indent: 0 };
        p.stmt(&outer);
        let reparsed = parse(&format!("void f() {{ while (1) {} }}", p.out)).expect("valid");
        let Item::Func(f) = &reparsed.items[0] else { panic!() };
        let BlockItem::Stmt(Stmt::While { body, .. }) = &f.body.items[0] else { panic!() };
        let Stmt::If { else_branch, then_branch, .. } = &**body else { panic!("{:?}", body) };
        assert!(else_branch.is_some());
        assert!(matches!(**then_branch, Stmt::Block(_)));
        assert_eq!(print_expr(&Expr::float(-1.5)), "(-1.5)");
        assert_eq!(
            print_expr(&Expr::new(ExprKind::Unary(UnaryOp::Neg, Box::new(Expr::float(-1.5))), Span::DUMMY)),
            "-(-1.5)"
        );
        assert_eq!(print_expr(&Expr::float(f32::NAN)), "(0.0 / 0.0)");
    }
}
