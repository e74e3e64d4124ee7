//! What the mutation operators need to know about a tree: the scopes (which names are
//! variables of which type, which functions return what) and walks that visit every
//! expression root and every block of the function bodies with the scope in force there.
//!
//! Operators on the syntactic AST must still produce programs that type-check; a small
//! syntactic type inference ([`Env::type_of`]) is enough for that, because SysY has two
//! scalar types and arrays are never values.

use std::collections::{BTreeSet, HashMap};
use sysyc::frontend::ast::*;

/// A variable in scope.
#[derive(Clone, Debug)]
pub struct Var {
    pub ty: BType,
    /// Number of dimensions (0: scalar).
    pub dims: usize,
    pub global: bool,
    pub is_const: bool,
}

/// A function's signature: its return type and, per parameter, its type and dimensions.
#[derive(Clone, Debug)]
pub struct Sig {
    pub ret: Option<BType>,
    pub params: Vec<(BType, usize)>,
    /// Index of its item in the unit (`usize::MAX` for the run-time library).
    pub item: usize,
}

/// The names in force at one point of a program.
#[derive(Clone, Debug, Default)]
pub struct Env {
    scopes: Vec<HashMap<String, Var>>,
    pub funcs: HashMap<String, Sig>,
}

/// Where a visited node is.
#[derive(Clone, Debug)]
pub struct Site {
    /// Item index of the enclosing function.
    pub func: usize,
    /// Inside a `while` of that function.
    pub in_loop: bool,
    /// In a constant context (a `const` initialiser, an array dimension): literals only.
    pub constant: bool,
}

fn builtins() -> HashMap<String, Sig> {
    use BType::*;
    let sig = |ret, params: &[(BType, usize)]| Sig { ret, params: params.to_vec(), item: usize::MAX };
    [
        ("getint", sig(Some(Int), &[])),
        ("getch", sig(Some(Int), &[])),
        ("getfloat", sig(Some(Float), &[])),
        ("getarray", sig(Some(Int), &[(Int, 1)])),
        ("getfarray", sig(Some(Int), &[(Float, 1)])),
        ("putint", sig(None, &[(Int, 0)])),
        ("putch", sig(None, &[(Int, 0)])),
        ("putfloat", sig(None, &[(Float, 0)])),
        ("putarray", sig(None, &[(Int, 0), (Int, 1)])),
        ("putfarray", sig(None, &[(Int, 0), (Float, 1)])),
    ]
    .into_iter()
    .map(|(n, s)| (n.to_string(), s))
    .collect()
}

/// Whether `name` is a run-time library function (calls to it do input or output).
pub fn is_builtin(name: &str) -> bool {
    builtins().contains_key(name) || name == "putf" || name.contains("time")
}

impl Env {
    fn new() -> Env {
        Env { scopes: vec![HashMap::new()], funcs: builtins() }
    }

    /// The variables in force of type `ty` with `dims` dimensions, sorted by name.
    pub fn vars_of(&self, ty: BType, dims: usize) -> Vec<String> {
        let mut out: Vec<String> = self
            .scopes
            .iter()
            .flat_map(|s| s.keys())
            .filter(|n| self.lookup(n).is_some_and(|v| v.ty == ty && v.dims == dims && !(v.is_const && dims > 0)))
            .cloned()
            .collect();
        out.sort();
        out.dedup();
        out
    }

    pub fn lookup(&self, name: &str) -> Option<&Var> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    fn declare(&mut self, decl: &Decl) {
        let global = self.scopes.len() == 1;
        for d in &decl.defs {
            let var = Var { ty: decl.ty, dims: d.dims.len(), global, is_const: decl.is_const };
            self.scopes.last_mut().expect("a scope").insert(d.name.name.clone(), var);
        }
    }

    /// The type of a scalar expression (`None`: an array, a `void` call, a string, unknown).
    pub fn type_of(&self, e: &Expr) -> Option<BType> {
        match &e.kind {
            ExprKind::IntLit(..) => Some(BType::Int),
            ExprKind::FloatLit(_) => Some(BType::Float),
            ExprKind::StrLit(_) => None,
            ExprKind::LVal(lv) => self.lookup(&lv.name.name).filter(|v| v.dims == lv.indices.len()).map(|v| v.ty),
            ExprKind::Call { name, .. } => self.funcs.get(&name.name).and_then(|s| s.ret),
            ExprKind::Unary(UnaryOp::Not, _) => Some(BType::Int),
            ExprKind::Unary(_, x) => self.type_of(x),
            ExprKind::Binary(op, l, r) => match op {
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => {
                    match (self.type_of(l)?, self.type_of(r)?) {
                        (BType::Int, BType::Int) => Some(BType::Int),
                        _ => Some(BType::Float),
                    }
                }
                _ => Some(BType::Int),
            },
        }
    }
}

/// Every identifier of the unit (for fresh names).
pub fn names(unit: &CompUnit) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let add_expr = |e: &Expr, out: &mut BTreeSet<String>| visit_expr(e, &mut |x| {
        match &x.kind {
            ExprKind::LVal(lv) => {
                out.insert(lv.name.name.clone());
            }
            ExprKind::Call { name, .. } => {
                out.insert(name.name.clone());
            }
            _ => {}
        }
    });
    for item in &unit.items {
        match item {
            Item::Decl(d) => d.defs.iter().for_each(|v| {
                out.insert(v.name.name.clone());
            }),
            Item::Func(f) => {
                out.insert(f.name.name.clone());
                f.params.iter().for_each(|p| {
                    out.insert(p.name.name.clone());
                });
                visit_block(&f.body, &mut |item| match item {
                    BlockItem::Decl(d) => d.defs.iter().for_each(|v| {
                        out.insert(v.name.name.clone());
                    }),
                    BlockItem::Stmt(s) => stmt_exprs(s).into_iter().for_each(|e| add_expr(e, &mut out)),
                });
            }
        }
    }
    out
}

/// A name starting with `prefix` that the unit does not use.
pub fn fresh(unit: &CompUnit, prefix: &str) -> String {
    let used = names(unit);
    (0..).map(|k| format!("{prefix}{k}")).find(|n| !used.contains(n)).expect("a free name")
}

/// Visits `e` and its subexpressions (pre-order).
pub fn visit_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::LVal(lv) => lv.indices.iter().for_each(|i| visit_expr(i, f)),
        ExprKind::Call { args, .. } => args.iter().for_each(|a| visit_expr(a, f)),
        ExprKind::Unary(_, x) => visit_expr(x, f),
        ExprKind::Binary(_, l, r) => {
            visit_expr(l, f);
            visit_expr(r, f);
        }
        _ => {}
    }
}

/// Visits `e` and its subexpressions mutably (pre-order); `f` answers whether to go on into
/// the children of the node it was given.
pub fn visit_expr_mut(e: &mut Expr, f: &mut dyn FnMut(&mut Expr) -> bool) {
    if !f(e) {
        return;
    }
    match &mut e.kind {
        ExprKind::LVal(lv) => lv.indices.iter_mut().for_each(|i| visit_expr_mut(i, f)),
        ExprKind::Call { args, .. } => args.iter_mut().for_each(|a| visit_expr_mut(a, f)),
        ExprKind::Unary(_, x) => visit_expr_mut(x, f),
        ExprKind::Binary(_, l, r) => {
            visit_expr_mut(l, f);
            visit_expr_mut(r, f);
        }
        _ => {}
    }
}

/// The expressions a statement holds directly (not those of nested statements).
fn stmt_exprs(s: &Stmt) -> Vec<&Expr> {
    match s {
        Stmt::Assign { target, value, .. } => target.indices.iter().chain([value]).collect(),
        Stmt::Expr(Some(e), _) | Stmt::Return(Some(e), _) => vec![e],
        Stmt::If { cond, .. } | Stmt::While { cond, .. } => vec![cond],
        _ => Vec::new(),
    }
}

/// Visits every block item of `block` and of the blocks nested in it.
fn visit_block(block: &Block, f: &mut dyn FnMut(&BlockItem)) {
    for item in &block.items {
        f(item);
        if let BlockItem::Stmt(s) = item {
            visit_stmt_blocks(s, f);
        }
    }
}

fn visit_stmt_blocks(s: &Stmt, f: &mut dyn FnMut(&BlockItem)) {
    match s {
        Stmt::Block(b) => visit_block(b, f),
        Stmt::If { then_branch, else_branch, .. } => {
            visit_stmt_blocks(then_branch, f);
            if let Some(e) = else_branch {
                visit_stmt_blocks(e, f);
            }
        }
        Stmt::While { body, .. } => visit_stmt_blocks(body, f),
        _ => {}
    }
}

/// What a walk's callback is given.
pub enum Visit<'a> {
    /// An expression root (an initialiser, an assignment's value or index, a condition, a
    /// returned value, an expression statement), with the scope in force.
    Root(&'a mut Expr),
    /// A block, before its items are walked, with the scope in force at its start.
    Block(&'a mut Block),
}

/// Walks the function bodies of `unit` in order, calling `f` on every expression root and
/// block with the scope and the site.
pub fn walk(unit: &mut CompUnit, f: &mut dyn FnMut(Visit<'_>, &Env, &Site)) {
    let mut env = Env::new();
    for (index, item) in unit.items.iter_mut().enumerate() {
        match item {
            Item::Decl(d) => env.declare(d),
            Item::Func(func) => {
                let params = func.params.iter().map(|p| (p.ty, p.array_dims.as_ref().map_or(0, |d| d.len() + 1))).collect();
                env.funcs.insert(func.name.name.clone(), Sig { ret: func.ret, params, item: index });
                let mut scope = HashMap::new();
                for p in &func.params {
                    let dims = p.array_dims.as_ref().map_or(0, |d| d.len() + 1);
                    scope.insert(p.name.name.clone(), Var { ty: p.ty, dims, global: false, is_const: false });
                }
                env.scopes.push(scope);
                let site = Site { func: index, in_loop: false, constant: false };
                walk_block(&mut func.body, &mut env, &site, f);
                env.scopes.pop();
            }
        }
    }
}

fn walk_block(block: &mut Block, env: &mut Env, site: &Site, f: &mut dyn FnMut(Visit<'_>, &Env, &Site)) {
    f(Visit::Block(block), env, site);
    env.scopes.push(HashMap::new());
    for item in &mut block.items {
        match item {
            BlockItem::Decl(d) => {
                let constant = Site { constant: true, ..site.clone() };
                for def in &mut d.defs {
                    if let Some(init) = &mut def.init {
                        walk_init(init, env, if d.is_const { &constant } else { site }, f);
                    }
                }
                env.declare(d);
            }
            BlockItem::Stmt(s) => walk_stmt(s, env, site, f),
        }
    }
    env.scopes.pop();
}

fn walk_init(init: &mut InitVal, env: &Env, site: &Site, f: &mut dyn FnMut(Visit<'_>, &Env, &Site)) {
    match init {
        InitVal::Expr(e) => f(Visit::Root(e), env, site),
        InitVal::List(items, _) => items.iter_mut().for_each(|i| walk_init(i, env, site, f)),
    }
}

fn walk_stmt(s: &mut Stmt, env: &mut Env, site: &Site, f: &mut dyn FnMut(Visit<'_>, &Env, &Site)) {
    match s {
        Stmt::Assign { target, value, .. } => {
            target.indices.iter_mut().for_each(|i| f(Visit::Root(i), env, site));
            f(Visit::Root(value), env, site);
        }
        Stmt::Expr(Some(e), _) | Stmt::Return(Some(e), _) => f(Visit::Root(e), env, site),
        Stmt::Block(b) => walk_block(b, env, site, f),
        Stmt::If { cond, then_branch, else_branch, .. } => {
            f(Visit::Root(cond), env, site);
            walk_stmt(then_branch, env, site, f);
            if let Some(e) = else_branch {
                walk_stmt(e, env, site, f);
            }
        }
        Stmt::While { cond, body, .. } => {
            f(Visit::Root(cond), env, site);
            let inner = Site { in_loop: true, ..site.clone() };
            walk_stmt(body, env, &inner, f);
        }
        _ => {}
    }
}

/// Applies `f` to the `k`-th site (in walk order) of those `count` accepts; `count` and `f`
/// see the same sites in the same order. Returns what `f` returned, `None` without sites.
pub fn at_random_site<T>(
    unit: &mut CompUnit,
    choices: &mut dyn crate::Choices,
    accept: &mut dyn FnMut(&mut Visit<'_>, &Env, &Site) -> bool,
    apply: &mut dyn FnMut(Visit<'_>, &Env, &Site) -> T,
) -> Option<T> {
    let mut n = 0u64;
    walk(unit, &mut |mut v, env, site| n += u64::from(accept(&mut v, env, site)));
    if n == 0 {
        return None;
    }
    let k = choices.below(n);
    let mut seen = 0u64;
    let mut out = None;
    walk(unit, &mut |mut v, env, site| {
        if accept(&mut v, env, site) {
            if seen == k && out.is_none() {
                out = Some(apply(v, env, site));
            }
            seen += 1;
        }
    });
    out
}
