//! HIR → [`Code`]: frame layouts, global addresses, index steps and typed operations.
//!
//! Layout: global memory holds every global in declaration order, each taking its element
//! count in words. A function's frame gives each local slot (parameters first, in order) its
//! own words: 1 for a scalar, the element count for an array, [`VIEW_WORDS`] for an array
//! parameter. Slots of disjoint scopes are not shared: it keeps the layout obviously right and
//! costs only memory.
//!
//! Addresses and offsets are `u32` words. The memory limit of a run is below 2^32 words, so a
//! global area or frame that does not fit is reported (globals) or makes every call of the
//! function trap (frames, checked when a call enters them) before any offset could wrap.
//!
//! Declarations without effect: a local that nothing ever reads or writes (only its own
//! declaration names it), declared without initialiser or with constant initialisers, has no
//! observable state, so running its declaration changes nothing but the step count. Runs of
//! such declarations are lowered to one [`StKind::Skip`] node that accounts for their steps
//! (and their spans, should the step limit fall among them) without visiting each. Observable
//! behaviour, step counts and trap locations are exactly those of running every declaration;
//! only the time differs — which matters for programs like the competition's
//! dead-code-elimination cases (10^5 unused constant locals per call).
//!
//! The walks recurse over expressions; they run on the interpreter's large-stack thread, so
//! the deepest trees the front end accepts are fine.

use super::code::*;
use std::cell::RefCell;
use sysyc::frontend::ast::Span;
use sysyc::frontend::hir::{
    self, BinaryOp, Builtin, Callee, ConstVal, ExprKind, LogicalOp, Scalar, UnaryOp, VarType,
};

/// Why a program cannot be prepared: its globals do not fit in the memory limit.
#[derive(Debug)]
pub(super) struct GlobalsTooBig {
    pub words: u64,
}

/// Lowers `p`. Globals larger than `max_words` in all are refused.
pub(super) fn lower(p: &hir::Program, max_words: u64) -> Result<Code, GlobalsTooBig> {
    let mut global_addr = Vec::with_capacity(p.globals.len());
    let mut global_init = Vec::new();
    let mut next: u64 = 0;
    for g in &p.globals {
        let words = g.ty.element_count().unwrap_or(1);
        if next + words > max_words {
            return Err(GlobalsTooBig {
                words: p
                    .globals
                    .iter()
                    .map(|g| g.ty.element_count().unwrap_or(1))
                    .sum(),
            });
        }
        global_addr.push(next as u32);
        for &(i, v) in &g.init.elems {
            let bits = const_bits(v);
            if bits != 0 {
                global_init.push((next as u32 + i, bits));
            }
        }
        next += words;
    }
    let stmt_spans = RefCell::new(Vec::new());
    let funcs = p
        .funcs
        .iter()
        .map(|f| FuncLowerer::new(p, f, &global_addr, &stmt_spans).lower())
        .collect();
    Ok(Code {
        funcs,
        main: p.main.0,
        global_words: next,
        global_init,
        stmt_spans: stmt_spans.into_inner(),
    })
}

fn const_bits(v: ConstVal) -> u32 {
    match v {
        ConstVal::Int(i) => i as u32,
        ConstVal::Float(f) => f.to_bits(),
    }
}

fn slot_words(ty: &VarType) -> u64 {
    match ty {
        VarType::Scalar(_) => 1,
        VarType::Array { .. } => ty.element_count().unwrap_or(1),
        VarType::ArrayParam { .. } => VIEW_WORDS as u64,
    }
}

/// An offset that might not fit: only reachable in frames that can never be entered.
fn word(x: u64) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

struct FuncLowerer<'a> {
    p: &'a hir::Program,
    f: &'a hir::Function,
    global_addr: &'a [u32],
    local_off: Vec<u32>,
    /// Locals some expression or assignment refers to (a declaration does not count).
    used: Vec<bool>,
    /// The spans of the statements numbered so far, in the whole program.
    stmt_spans: &'a RefCell<Vec<Span>>,
}

impl<'a> FuncLowerer<'a> {
    fn new(
        p: &'a hir::Program,
        f: &'a hir::Function,
        global_addr: &'a [u32],
        stmt_spans: &'a RefCell<Vec<Span>>,
    ) -> Self {
        FuncLowerer {
            p,
            f,
            global_addr,
            local_off: Vec::with_capacity(f.locals.len()),
            used: used_locals(f),
            stmt_spans,
        }
    }

    /// Numbers the statement at `span` (see [`St::id`]).
    fn number(&self, span: Span) -> u32 {
        let mut spans = self.stmt_spans.borrow_mut();
        spans.push(span);
        word(spans.len() as u64 - 1)
    }

    fn lower(mut self) -> Func {
        let mut next: u64 = 0;
        let mut param_words: u64 = 0;
        for (k, l) in self.f.locals.iter().enumerate() {
            self.local_off.push(word(next));
            next += slot_words(&l.ty);
            if k < self.f.params.len() {
                param_words = next;
            }
        }
        let body = self.stmts(&self.f.body);
        // The closing brace of the function.
        let end = Span {
            lo: self.f.span.hi.saturating_sub(1),
            hi: self.f.span.hi,
        };
        Func {
            name: self.f.name.clone(),
            returns_value: self.f.ret.is_some(),
            frame_words: next,
            param_words: word(param_words),
            body,
            end,
        }
    }

    fn var_type(&self, v: hir::VarRef) -> &'a VarType {
        match v {
            hir::VarRef::Global(g) => &self.p.globals[g.index()].ty,
            hir::VarRef::Local(l) => &self.f.locals[l.index()].ty,
        }
    }

    fn stmts(&self, stmts: &[hir::Stmt]) -> Box<[St]> {
        let mut out: Vec<St> = Vec::with_capacity(stmts.len());
        // Spans of the current run of declarations without effect.
        let mut inert: Vec<Span> = Vec::new();
        let flush = |out: &mut Vec<St>, inert: &mut Vec<Span>| {
            if let Some((&first, rest)) = inert.split_first() {
                // Consecutive ids: the first statement's, then one per span of `rest`.
                let id = self.number(first);
                rest.iter().for_each(|&span| {
                    self.number(span);
                });
                out.push(St {
                    kind: StKind::Skip { rest: rest.into() },
                    span: first,
                    id,
                });
                inert.clear();
            }
        };
        for s in stmts {
            if self.is_inert_decl(s) {
                inert.push(s.span);
            } else {
                flush(&mut out, &mut inert);
                out.push(self.stmt(s));
            }
        }
        flush(&mut out, &mut inert);
        out.into_boxed_slice()
    }

    /// A declaration of an unused local whose initialiser (if any) is constants only.
    fn is_inert_decl(&self, s: &hir::Stmt) -> bool {
        let hir::StmtKind::Decl { local, init } = &s.kind else {
            return false;
        };
        let is_const = |e: &hir::Expr| matches!(e.kind, ExprKind::Const(_));
        !self.used[local.index()]
            && match init {
                None => true,
                Some(hir::LocalInit::Scalar(e)) => is_const(e),
                Some(hir::LocalInit::Array(elems)) => elems.iter().all(|(_, e)| is_const(e)),
            }
    }

    fn stmt(&self, s: &hir::Stmt) -> St {
        use hir::StmtKind as K;
        // Numbered before the statements it contains (pre-order).
        let id = self.number(s.span);
        let kind = match &s.kind {
            K::Decl { local, init } => {
                let off = self.local_off[local.index()];
                let ty = &self.f.locals[local.index()].ty;
                match init {
                    None => StKind::Decl {
                        off,
                        len: word(slot_words(ty)),
                    },
                    Some(hir::LocalInit::Scalar(e)) => StKind::DeclScalar {
                        off,
                        value: self.expr(e),
                    },
                    Some(hir::LocalInit::Array(elems)) => StKind::DeclArray {
                        off,
                        len: word(slot_words(ty)),
                        elems: elems.iter().map(|(i, e)| (*i, self.expr(e))).collect(),
                    },
                }
            }
            K::Assign { place, value } => {
                let target = match (place.var, place.indices.is_empty()) {
                    (hir::VarRef::Local(l), true) => Target::Local {
                        off: self.local_off[l.index()],
                    },
                    (hir::VarRef::Global(g), true) => Target::Global {
                        addr: self.global_addr[g.index()],
                    },
                    _ => Target::Elem(Box::new(self.access(place, s.span))),
                };
                StKind::Assign {
                    target,
                    value: self.expr(value),
                }
            }
            K::Expr(e) => StKind::Expr(self.expr(e)),
            K::Block(b) => StKind::Block(self.stmts(b)),
            K::If {
                cond,
                then_branch,
                else_branch,
            } => StKind::If {
                cond: self.expr(cond),
                then_branch: Box::new(self.stmt(then_branch)),
                else_branch: else_branch.as_ref().map(|e| Box::new(self.stmt(e))),
            },
            K::While { cond, body } => StKind::While {
                cond: self.expr(cond),
                body: Box::new(self.stmt(body)),
            },
            K::Break => StKind::Break,
            K::Continue => StKind::Continue,
            K::Return(v) => StKind::Return(v.as_ref().map(|e| self.expr(e))),
        };
        St {
            kind,
            span: s.span,
            id,
        }
    }

    /// The index steps of `place` (as many as it has indices).
    fn access(&self, place: &hir::Place, span: Span) -> Access {
        let ty = self.var_type(place.var);
        let strides = ty.strides();
        let (base, dims): (ArrayBase, &[u32]) = match (place.var, ty) {
            (hir::VarRef::Global(g), VarType::Array { dims, .. }) => (
                ArrayBase::Global {
                    addr: self.global_addr[g.index()],
                    len: word(slot_words(ty)),
                },
                dims,
            ),
            (hir::VarRef::Local(l), VarType::Array { dims, .. }) => (
                ArrayBase::Local {
                    off: self.local_off[l.index()],
                    len: word(slot_words(ty)),
                },
                dims,
            ),
            (hir::VarRef::Local(l), VarType::ArrayParam { dims, .. }) => (
                ArrayBase::Param {
                    off: self.local_off[l.index()],
                },
                dims,
            ),
            // The HIR invariants (checked by `hir_check`) rule out indexing scalars and
            // global parameters; an empty access of a scalar never reaches here.
            _ => unreachable!("indexed scalar in checked HIR"),
        };
        let is_param = matches!(base, ArrayBase::Param { .. });
        let steps = place
            .indices
            .iter()
            .enumerate()
            .map(|(k, index)| {
                let bound = match (is_param, k) {
                    (true, 0) => 0,
                    (true, _) => dims[k - 1],
                    (false, _) => dims[k],
                };
                IndexStep {
                    index: self.expr(index),
                    bound,
                    stride: word(strides[k]),
                    span: index.span,
                }
            })
            .collect();
        Access { base, steps, span }
    }

    fn expr(&self, e: &hir::Expr) -> Ex {
        match &e.kind {
            ExprKind::Const(c) => Ex::Const(const_bits(*c)),
            ExprKind::Load(place) if place.indices.is_empty() => match place.var {
                hir::VarRef::Local(l) => Ex::Local {
                    off: self.local_off[l.index()],
                    span: e.span,
                },
                hir::VarRef::Global(g) => Ex::Global {
                    addr: self.global_addr[g.index()],
                },
            },
            ExprKind::Load(place) => Ex::Elem(Box::new(self.access(place, e.span))),
            ExprKind::ArrayAddr(_) | ExprKind::Str(_) => {
                unreachable!("array views and strings only appear as call arguments in checked HIR")
            }
            ExprKind::Call {
                callee: Callee::User(f),
                args,
            } => {
                let callee = &self.p.funcs[f.index()];
                let args = args
                    .iter()
                    .zip(&callee.params)
                    .map(|(a, p)| match (&a.kind, &callee.locals[p.index()].ty) {
                        (ExprKind::ArrayAddr(place), pty) => Arg::View {
                            access: self.access(place, a.span),
                            param_stride: word(pty.strides().first().copied().unwrap_or(1)),
                        },
                        _ => Arg::Scalar(self.expr(a)),
                    })
                    .collect();
                Ex::Call(Box::new(Call {
                    func: f.0,
                    args,
                    span: e.span,
                }))
            }
            ExprKind::Call {
                callee: Callee::Builtin(b),
                args,
            } => Ex::Builtin(Box::new(self.builtin(*b, args, e.span))),
            ExprKind::Unary(UnaryOp::Neg, a) => match a.ty {
                Some(Scalar::Float) => Ex::NegF(Box::new(self.expr(a))),
                _ => Ex::NegI(Box::new(self.expr(a))),
            },
            ExprKind::Unary(UnaryOp::Not, a) => Ex::Not(Box::new(self.expr(a))),
            ExprKind::Binary(..) => self.binary_chain(e),
            ExprKind::Logical(LogicalOp::And, a, b) => {
                Ex::And(Box::new(self.expr(a)), Box::new(self.expr(b)))
            }
            ExprKind::Logical(LogicalOp::Or, a, b) => {
                Ex::Or(Box::new(self.expr(a)), Box::new(self.expr(b)))
            }
            ExprKind::Convert(a) => match e.ty {
                Some(Scalar::Float) => Ex::IntToFloat(Box::new(self.expr(a))),
                _ => Ex::FloatToInt(Box::new(self.expr(a)), e.span),
            },
        }
    }

    /// A binary operation, or the whole left spine of nested ones as a [`Chain`] (walked
    /// iteratively: spines can be thousands of operations long).
    fn binary_chain(&self, e: &hir::Expr) -> Ex {
        let mut spine = Vec::new();
        let mut leftmost = e;
        while let ExprKind::Binary(op, a, b) = &leftmost.kind {
            spine.push((
                typed_op(*op, a.ty == Some(Scalar::Float)),
                &**b,
                leftmost.span,
            ));
            leftmost = a;
        }
        let first = self.expr(leftmost);
        if let [(op, b, span)] = spine[..] {
            let second = self.expr(b);
            if let (Some(a), Some(b)) = (Leaf::of(&first), Leaf::of(&second)) {
                return Ex::Pair(Box::new(Pair { op, a, b, span }));
            }
            return Ex::binary(op, first, second, span);
        }
        let links = spine
            .iter()
            .rev()
            .map(|&(op, b, span)| Link {
                op,
                rhs: self.expr(b),
                span,
            })
            .collect();
        Ex::Chain(Box::new(Chain { first, links }))
    }

    fn array_arg(&self, a: &hir::Expr) -> Access {
        match &a.kind {
            ExprKind::ArrayAddr(place) => self.access(place, a.span),
            _ => unreachable!("array argument of a runtime function is a view in checked HIR"),
        }
    }

    fn builtin(&self, b: Builtin, args: &[hir::Expr], span: Span) -> BuiltinCall {
        let line = || match args.first().map(|a| &a.kind) {
            Some(ExprKind::Const(ConstVal::Int(l))) => *l as u32,
            _ => 0,
        };
        match b {
            Builtin::GetInt => BuiltinCall::GetInt(span),
            Builtin::GetCh => BuiltinCall::GetCh(span),
            Builtin::GetFloat => BuiltinCall::GetFloat(span),
            Builtin::GetArray | Builtin::GetFArray => BuiltinCall::GetArray {
                array: self.array_arg(&args[0]),
                float: b == Builtin::GetFArray,
                span,
            },
            Builtin::PutInt => BuiltinCall::PutInt(self.expr(&args[0])),
            Builtin::PutCh => BuiltinCall::PutCh(self.expr(&args[0])),
            Builtin::PutFloat => BuiltinCall::PutFloat(self.expr(&args[0])),
            Builtin::PutArray | Builtin::PutFArray => BuiltinCall::PutArray {
                count: self.expr(&args[0]),
                array: self.array_arg(&args[1]),
                float: b == Builtin::PutFArray,
                span,
            },
            Builtin::PutF => {
                let format = match args.first().map(|a| &a.kind) {
                    Some(ExprKind::Str(s)) => s.clone().into_boxed_slice(),
                    _ => Box::default(),
                };
                let args = args
                    .iter()
                    .skip(1)
                    .map(|a| match a.ty {
                        Some(Scalar::Float) => PutfArg::Float(self.expr(a)),
                        _ => PutfArg::Int(self.expr(a)),
                    })
                    .collect();
                BuiltinCall::PutF { format, args }
            }
            Builtin::StartTime => BuiltinCall::StartTime(line()),
            Builtin::StopTime => BuiltinCall::StopTime(line()),
        }
    }
}

fn typed_op(op: BinaryOp, float: bool) -> Op {
    use BinaryOp as B;
    match (op, float) {
        (B::Add, false) => Op::AddI,
        (B::Sub, false) => Op::SubI,
        (B::Mul, false) => Op::MulI,
        (B::Div, false) => Op::DivI,
        (B::Mod, false) => Op::ModI,
        (B::Lt, false) => Op::LtI,
        (B::Gt, false) => Op::GtI,
        (B::Le, false) => Op::LeI,
        (B::Ge, false) => Op::GeI,
        (B::Eq, false) => Op::EqI,
        (B::Ne, false) => Op::NeI,
        (B::Add, true) => Op::AddF,
        (B::Sub, true) => Op::SubF,
        (B::Mul, true) => Op::MulF,
        (B::Div, true) => Op::DivF,
        // `%` on floats is rejected by semantic analysis; the checker enforces it.
        (B::Mod, true) => unreachable!("float % in checked HIR"),
        (B::Lt, true) => Op::LtF,
        (B::Gt, true) => Op::GtF,
        (B::Le, true) => Op::LeF,
        (B::Ge, true) => Op::GeF,
        (B::Eq, true) => Op::EqF,
        (B::Ne, true) => Op::NeF,
    }
}

/// Which locals of `f` are referred to by some expression or assignment.
fn used_locals(f: &hir::Function) -> Vec<bool> {
    let mut used = vec![false; f.locals.len()];
    for s in &f.body {
        mark_stmt(s, &mut used);
    }
    used
}

fn mark_place(p: &hir::Place, used: &mut [bool]) {
    if let hir::VarRef::Local(l) = p.var {
        used[l.index()] = true;
    }
    p.indices.iter().for_each(|i| mark_expr(i, used));
}

fn mark_stmt(s: &hir::Stmt, used: &mut [bool]) {
    use hir::StmtKind as K;
    match &s.kind {
        K::Decl { init: None, .. } | K::Break | K::Continue | K::Return(None) => {}
        K::Decl {
            init: Some(hir::LocalInit::Scalar(e)),
            ..
        }
        | K::Expr(e)
        | K::Return(Some(e)) => mark_expr(e, used),
        K::Decl {
            init: Some(hir::LocalInit::Array(elems)),
            ..
        } => elems.iter().for_each(|(_, e)| mark_expr(e, used)),
        K::Assign { place, value } => {
            mark_place(place, used);
            mark_expr(value, used);
        }
        K::Block(b) => b.iter().for_each(|s| mark_stmt(s, used)),
        K::If {
            cond,
            then_branch,
            else_branch,
        } => {
            mark_expr(cond, used);
            mark_stmt(then_branch, used);
            if let Some(e) = else_branch {
                mark_stmt(e, used);
            }
        }
        K::While { cond, body } => {
            mark_expr(cond, used);
            mark_stmt(body, used);
        }
    }
}

fn mark_expr(e: &hir::Expr, used: &mut [bool]) {
    match &e.kind {
        ExprKind::Const(_) | ExprKind::Str(_) => {}
        ExprKind::Load(p) | ExprKind::ArrayAddr(p) => mark_place(p, used),
        ExprKind::Call { args, .. } => args.iter().for_each(|a| mark_expr(a, used)),
        ExprKind::Unary(_, a) | ExprKind::Convert(a) => mark_expr(a, used),
        ExprKind::Binary(_, a, b) | ExprKind::Logical(_, a, b) => {
            mark_expr(a, used);
            mark_expr(b, used);
        }
    }
}
