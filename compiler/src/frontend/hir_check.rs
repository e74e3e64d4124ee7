//! Structural and type invariants of a [`hir::Program`], checked independently of how it was
//! built.
//!
//! Semantic analysis guarantees these; the checker makes the guarantee testable and lets
//! other producers or consumers of HIR (generators, reducers, interpreters) assert it:
//! * every `VarRef`/`LocalId`/`FuncId` is in range; parameters are the first locals,
//!   flagged `is_param`; `main` is `int main()`;
//! * types line up: binary operands have one type (comparisons give `Int`), `Logical`,
//!   `Not`, `if`/`while` conditions are `Int`, `Convert` really converts, assignments and
//!   returns carry the target's type, calls match the callee's signature (array arguments
//!   are `ArrayAddr` views whose inner dimensions match), `Str` appears only as `putf`'s first
//!   argument, `starttime`/`stoptime` carry one `Int` constant;
//! * a `Load` has as many indices as its variable's rank, an `ArrayAddr` fewer; no stores
//!   into `const` variables; array initialisers are sorted, unique and in bounds.
//!
//! The walk over expressions follows left spines of binary chains iteratively (they can be
//! thousands of nodes deep).

use super::hir::*;

type R = Result<(), String>;

/// Checks every invariant listed in the module documentation.
pub fn check(p: &Program) -> R {
    for g in &p.globals {
        check_var_type(&g.ty).map_err(|e| format!("global `{}`: {e}", g.name))?;
        check_const_init(&g.ty, &g.init).map_err(|e| format!("global `{}`: {e}", g.name))?;
    }
    let main = p.funcs.get(p.main.index()).ok_or("`main` index out of range")?;
    if main.name != "main" || main.ret != Some(Scalar::Int) || !main.params.is_empty() {
        return Err("`main` is not `int main()`".into());
    }
    for f in &p.funcs {
        let c = Checker { p, f };
        c.func().map_err(|e| format!("function `{}`: {e}", f.name))?;
    }
    Ok(())
}

fn check_var_type(ty: &VarType) -> R {
    match ty {
        VarType::Array { dims, .. } if dims.is_empty() => Err("array without dimensions".into()),
        VarType::Array { dims, .. } | VarType::ArrayParam { dims, .. } => {
            if dims.contains(&0) {
                return Err("zero dimension".into());
            }
            if dims.iter().map(|&d| d as u64).product::<u64>() > u32::MAX as u64 {
                return Err("array larger than u32 elements".into());
            }
            Ok(())
        }
        VarType::Scalar(_) => Ok(()),
    }
}

fn check_const_init(ty: &VarType, init: &ConstInit) -> R {
    let count = ty.element_count().ok_or("initialised array parameter")?;
    let mut prev: Option<u32> = None;
    for &(i, v) in &init.elems {
        if prev.is_some_and(|p| p >= i) {
            return Err("initialiser not sorted or has duplicates".into());
        }
        if i as u64 >= count {
            return Err(format!("initialiser index {i} out of bounds"));
        }
        if v.scalar() != ty.elem() {
            return Err("initialiser value of the wrong type".into());
        }
        prev = Some(i);
    }
    Ok(())
}

struct Checker<'a> {
    p: &'a Program,
    f: &'a Function,
}

impl Checker<'_> {
    fn func(&self) -> R {
        for (k, &param) in self.f.params.iter().enumerate() {
            if param.index() != k || !self.f.locals.get(k).is_some_and(|l| l.is_param) {
                return Err(format!("parameter {k} is not local slot {k} flagged as parameter"));
            }
        }
        for (k, l) in self.f.locals.iter().enumerate() {
            check_var_type(&l.ty).map_err(|e| format!("local `{}`: {e}", l.name))?;
            if l.is_param != (k < self.f.params.len()) {
                return Err(format!("local `{}` has a wrong is_param flag", l.name));
            }
            if matches!(l.ty, VarType::ArrayParam { .. }) && !l.is_param {
                return Err(format!("local `{}` has a parameter array type", l.name));
            }
        }
        self.stmts(&self.f.body, 0)
    }

    fn var_type(&self, v: VarRef) -> Result<(&VarType, bool), String> {
        match v {
            VarRef::Global(g) => {
                self.p.globals.get(g.index()).map(|g| (&g.ty, g.is_const)).ok_or_else(|| format!("{g:?} out of range"))
            }
            VarRef::Local(l) => {
                self.f.locals.get(l.index()).map(|l| (&l.ty, l.is_const)).ok_or_else(|| format!("{l:?} out of range"))
            }
        }
    }

    fn stmts(&self, stmts: &[Stmt], loops: u32) -> R {
        stmts.iter().try_for_each(|s| self.stmt(s, loops))
    }

    fn stmt(&self, s: &Stmt, loops: u32) -> R {
        match &s.kind {
            StmtKind::Decl { local, init } => {
                let l = self.f.locals.get(local.index()).ok_or("declared local out of range")?;
                if l.is_param {
                    return Err("declaration of a parameter slot".into());
                }
                match (init, &l.ty) {
                    (None, _) => Ok(()),
                    (Some(LocalInit::Scalar(e)), VarType::Scalar(t)) => self.value(e, *t),
                    (Some(LocalInit::Array(elems)), ty @ VarType::Array { .. }) => {
                        let count = ty.element_count().unwrap_or(0);
                        let mut prev: Option<u32> = None;
                        for (i, e) in elems {
                            if prev.is_some_and(|p| p >= *i) || *i as u64 >= count {
                                return Err(format!("array initialiser of `{}` unsorted or out of bounds", l.name));
                            }
                            prev = Some(*i);
                            self.value(e, ty.elem())?;
                        }
                        Ok(())
                    }
                    _ => Err(format!("initialiser of `{}` does not match its type", l.name)),
                }
            }
            StmtKind::Assign { place, value } => {
                let (ty, is_const) = self.var_type(place.var)?;
                if is_const {
                    return Err("assignment to a const variable".into());
                }
                if place.indices.len() != ty.rank() {
                    return Err("assignment to an array".into());
                }
                self.indices(place)?;
                self.value(value, ty.elem())
            }
            StmtKind::Expr(e) => self.expr(e),
            StmtKind::Block(b) => self.stmts(b, loops),
            StmtKind::If { cond, then_branch, else_branch } => {
                self.value(cond, Scalar::Int)?;
                self.stmt(then_branch, loops)?;
                else_branch.as_ref().map_or(Ok(()), |e| self.stmt(e, loops))
            }
            StmtKind::While { cond, body } => {
                self.value(cond, Scalar::Int)?;
                self.stmt(body, loops + 1)
            }
            StmtKind::Break | StmtKind::Continue if loops == 0 => Err("break/continue outside a loop".into()),
            StmtKind::Break | StmtKind::Continue => Ok(()),
            StmtKind::Return(v) => match (v, self.f.ret) {
                (None, None) => Ok(()),
                (Some(e), Some(t)) => self.value(e, t),
                _ => Err("return does not match the function's type".into()),
            },
        }
    }

    fn indices(&self, place: &Place) -> R {
        place.indices.iter().try_for_each(|i| self.value(i, Scalar::Int))
    }

    /// `e` is a valid scalar expression of type `t`.
    fn value(&self, e: &Expr, t: Scalar) -> R {
        self.expr(e)?;
        if e.ty != Some(t) || matches!(e.kind, ExprKind::ArrayAddr(_) | ExprKind::Str(_)) {
            return Err(format!("expected a {t:?} value, found {:?} ({:?})", e.ty, kind_name(&e.kind)));
        }
        Ok(())
    }

    fn expr(&self, e: &Expr) -> R {
        // Left spines of binary/logical chains iteratively; everything else recursively.
        let mut spine = Vec::new();
        let mut cur = e;
        loop {
            match &cur.kind {
                ExprKind::Binary(op, a, b) => {
                    let operand_ty = a.ty.ok_or("binary operand without type")?;
                    let result = if op.is_comparison() { Scalar::Int } else { operand_ty };
                    if cur.ty != Some(result) || (*op == BinaryOp::Mod && operand_ty == Scalar::Float) {
                        return Err(format!("ill-typed {op:?}"));
                    }
                    spine.push((&**b, operand_ty));
                    cur = a;
                }
                ExprKind::Logical(_, a, b) => {
                    if cur.ty != Some(Scalar::Int) || a.ty != Some(Scalar::Int) {
                        return Err("ill-typed logical operator".into());
                    }
                    spine.push((&**b, Scalar::Int));
                    cur = a;
                }
                _ => break,
            }
        }
        if !spine.is_empty() {
            // `cur` is the leftmost operand; its type was compared with the operand type above.
            self.expr(cur)?;
            if matches!(cur.kind, ExprKind::ArrayAddr(_) | ExprKind::Str(_)) {
                return Err("array or string as an operand".into());
            }
            return spine.iter().try_for_each(|(b, t)| self.value(b, *t));
        }
        match &e.kind {
            ExprKind::Const(c) => (e.ty == Some(c.scalar())).then_some(()).ok_or_else(|| "mistyped constant".into()),
            ExprKind::Load(place) => {
                let (ty, _) = self.var_type(place.var)?;
                if place.indices.len() != ty.rank() || e.ty != Some(ty.elem()) {
                    return Err("load with the wrong number of indices or type".into());
                }
                self.indices(place)
            }
            ExprKind::ArrayAddr(place) => {
                let (ty, _) = self.var_type(place.var)?;
                if place.indices.len() >= ty.rank() || e.ty != Some(ty.elem()) {
                    return Err("array view of a scalar, or with the wrong type".into());
                }
                self.indices(place)
            }
            ExprKind::Call { callee, args } => self.call(e, *callee, args),
            ExprKind::Unary(UnaryOp::Neg, a) => {
                self.expr(a)?;
                (a.ty.is_some() && a.ty == e.ty).then_some(()).ok_or_else(|| "ill-typed negation".into())
            }
            ExprKind::Unary(UnaryOp::Not, a) => {
                self.value(a, Scalar::Int)?;
                (e.ty == Some(Scalar::Int)).then_some(()).ok_or_else(|| "ill-typed `!`".into())
            }
            ExprKind::Convert(a) => {
                self.expr(a)?;
                if a.ty.is_none() || e.ty.is_none() || a.ty == e.ty {
                    return Err("conversion that does not convert".into());
                }
                Ok(())
            }
            ExprKind::Str(_) => Err("string literal outside `putf`".into()),
            ExprKind::Binary(..) | ExprKind::Logical(..) => unreachable!("handled by the spine walk"),
        }
    }

    fn call(&self, e: &Expr, callee: Callee, args: &[Expr]) -> R {
        let (ret, params): (Option<Scalar>, Vec<VarType>) = match callee {
            Callee::User(id) => {
                let f = self.p.funcs.get(id.index()).ok_or("callee out of range")?;
                (f.ret, f.params.iter().map(|p| f.locals[p.index()].ty.clone()).collect())
            }
            Callee::Builtin(Builtin::PutF) => {
                let (first, rest) = args.split_first().ok_or("putf without arguments")?;
                if !matches!(first.kind, ExprKind::Str(_)) {
                    return Err("putf without a format string".into());
                }
                for a in rest {
                    self.expr(a)?;
                    if a.ty.is_none() || matches!(a.kind, ExprKind::ArrayAddr(_) | ExprKind::Str(_)) {
                        return Err("putf argument is not a scalar".into());
                    }
                }
                return (e.ty.is_none()).then_some(()).ok_or_else(|| "putf has a value".into());
            }
            Callee::Builtin(b @ (Builtin::StartTime | Builtin::StopTime)) => {
                return match args {
                    [Expr { kind: ExprKind::Const(ConstVal::Int(_)), .. }] if e.ty.is_none() => Ok(()),
                    _ => Err(format!("{b:?} must carry its line as one Int constant")),
                };
            }
            Callee::Builtin(b) => {
                let int_arr = VarType::ArrayParam { elem: Scalar::Int, dims: vec![] };
                let float_arr = VarType::ArrayParam { elem: Scalar::Float, dims: vec![] };
                let int = VarType::Scalar(Scalar::Int);
                let params = match b {
                    Builtin::GetArray => vec![int_arr],
                    Builtin::GetFArray => vec![float_arr],
                    Builtin::PutInt | Builtin::PutCh => vec![int],
                    Builtin::PutFloat => vec![VarType::Scalar(Scalar::Float)],
                    Builtin::PutArray => vec![int, int_arr],
                    Builtin::PutFArray => vec![int, float_arr],
                    _ => vec![],
                };
                (b.ret(), params)
            }
        };
        if e.ty != ret || args.len() != params.len() {
            return Err("call with the wrong type or arity".into());
        }
        for (a, p) in args.iter().zip(&params) {
            match p {
                VarType::Scalar(t) => self.value(a, *t)?,
                VarType::ArrayParam { elem, dims } | VarType::Array { elem, dims } => {
                    let ExprKind::ArrayAddr(place) = &a.kind else {
                        return Err("array parameter given a non-array".into());
                    };
                    self.expr(a)?;
                    let (ty, _) = self.var_type(place.var)?;
                    let k = place.indices.len();
                    let inner: &[u32] = match ty {
                        VarType::Array { dims, .. } => &dims[k + 1..],
                        VarType::ArrayParam { dims, .. } => &dims[k..],
                        VarType::Scalar(_) => return Err("array view of a scalar".into()),
                    };
                    if ty.elem() != *elem || inner != dims.as_slice() {
                        return Err("array argument of the wrong shape".into());
                    }
                }
            }
        }
        Ok(())
    }
}

fn kind_name(k: &ExprKind) -> &'static str {
    match k {
        ExprKind::Const(_) => "Const",
        ExprKind::Load(_) => "Load",
        ExprKind::ArrayAddr(_) => "ArrayAddr",
        ExprKind::Call { .. } => "Call",
        ExprKind::Unary(..) => "Unary",
        ExprKind::Binary(..) => "Binary",
        ExprKind::Logical(..) => "Logical",
        ExprKind::Convert(_) => "Convert",
        ExprKind::Str(_) => "Str",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::compile_source;

    const SRC: &str = "int g[2][3];\n\
        int f(int a[][3], float x) { return a[1][2] + x; }\n\
        int main() { int i = 0; while (i < 2) { g[i][0] = f(g, 1.5); i = i + 1; } putf(\"%d\", i); return g[1][0]; }";

    fn program() -> Program {
        let p = compile_source("t.sy", SRC).expect("valid");
        check(&p).expect("analysis output satisfies the invariants");
        p
    }

    fn main_body(p: &mut Program) -> &mut Vec<Stmt> {
        let m = p.main.index();
        &mut p.funcs[m].body
    }

    #[test]
    fn detects_break_outside_loop() {
        let mut p = program();
        main_body(&mut p).push(Stmt { kind: StmtKind::Break, span: Default::default() });
        assert!(check(&p).unwrap_err().contains("outside a loop"));
    }

    #[test]
    fn detects_wrong_rank_load() {
        let mut p = program();
        let body = main_body(&mut p);
        let Some(Stmt { kind: StmtKind::Return(Some(e)), .. }) = body.last_mut() else { panic!() };
        let ExprKind::Load(place) = &mut e.kind else { panic!() };
        place.indices.pop();
        assert!(check(&p).unwrap_err().contains("load"));
    }

    #[test]
    fn detects_mistyped_binary_and_missing_conversion() {
        let mut p = program();
        // f's `return a[1][2] + x;` is Convert(Binary(Add, Convert(load), x)): drop the
        // outer conversion.
        let Some(Stmt { kind: StmtKind::Return(Some(e)), .. }) = p.funcs[0].body.last_mut() else { panic!() };
        let ExprKind::Convert(inner) = &e.kind else { panic!("{e:?}") };
        let inner = (**inner).clone();
        *e = inner;
        assert!(check(&p).is_err());
        let mut p = program();
        let Some(Stmt { kind: StmtKind::Return(Some(e)), .. }) = p.funcs[0].body.last_mut() else { panic!() };
        let ExprKind::Convert(inner) = &mut e.kind else { panic!() };
        let ExprKind::Binary(_, a, _) = &mut inner.kind else { panic!() };
        let ExprKind::Convert(load) = &a.kind else { panic!() };
        let load = (**load).clone();
        **a = load;
        assert!(check(&p).unwrap_err().contains("ill-typed"));
    }

    #[test]
    fn detects_bad_array_argument_and_const_store() {
        let mut p = program();
        let VarType::ArrayParam { dims, .. } = &mut p.funcs[0].locals[0].ty else { panic!() };
        dims[0] = 4;
        assert!(check(&p).unwrap_err().contains("wrong shape"));
        let mut p = program();
        p.globals[0].is_const = true;
        assert!(check(&p).unwrap_err().contains("const"));
    }

    #[test]
    fn detects_unsorted_initialiser_and_stray_string() {
        let mut p = program();
        p.globals[0].init.elems = vec![(3, ConstVal::Int(1)), (1, ConstVal::Int(2))];
        assert!(check(&p).unwrap_err().contains("sorted"));
        let mut p = program();
        p.globals[0].init.elems = vec![(6, ConstVal::Int(1))];
        assert!(check(&p).unwrap_err().contains("out of bounds"));
        let mut p = program();
        let body = main_body(&mut p);
        body.insert(
            0,
            Stmt {
                kind: StmtKind::Expr(Expr { kind: ExprKind::Str(vec![]), ty: None, span: Default::default() }),
                span: Default::default(),
            },
        );
        assert!(check(&p).unwrap_err().contains("string"));
    }
}
