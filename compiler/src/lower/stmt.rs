//! Statements: declarations with their initialisers, assignments, `if`, `while`, `break`,
//! `continue` and `return`.
//!
//! `while (c) S` is `jump header; header: br c, body, exit; body: S; jump header; exit:`,
//! with `continue` jumping to the header and `break` to the exit. The exit block exists only
//! if the condition can be false or a `break` reaches it.

use super::builder::{FnBuilder, LoopCx, Slot, Target};
use super::is_zero_bits;
use crate::frontend::hir::{self, LocalId, LocalInit, StmtKind};
use crate::ir::{InstData, Type, Value};

impl FnBuilder<'_> {
    pub(super) fn stmts(&mut self, stmts: &[hir::Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &hir::Stmt) {
        self.at(s.span, |b| b.stmt_here(s));
    }

    fn stmt_here(&mut self, s: &hir::Stmt) {
        match &s.kind {
            StmtKind::Decl { local, init } => self.decl(*local, init.as_ref()),
            StmtKind::Assign { place, value } => self.store_place(place, value),
            StmtKind::Expr(e) => self.effect(e),
            StmtKind::Block(body) => self.stmts(body),
            StmtKind::If { cond, then_branch, else_branch } => {
                let mut then_t = Target::new();
                let mut else_t = Target::new();
                let mut join = Target::new();
                match else_branch {
                    Some(else_branch) => {
                        self.cond(cond, &mut then_t, &mut else_t);
                        self.arm(&then_t, then_branch, &mut join);
                        self.arm(&else_t, else_branch, &mut join);
                    }
                    None => {
                        self.cond(cond, &mut then_t, &mut join);
                        self.arm(&then_t, then_branch, &mut join);
                    }
                }
                self.continue_at(&join);
            }
            StmtKind::While { cond, body } => {
                let header = self.new_block();
                self.jump(header);
                self.switch_to(header);
                let mut body_t = Target::new();
                self.loops.push(LoopCx { header, exit: Target::new() });
                let mut exit = std::mem::take(&mut self.innermost_loop().exit);
                self.cond(cond, &mut body_t, &mut exit);
                self.innermost_loop().exit = exit;
                if let Some(b) = body_t.block {
                    self.switch_to(b);
                    self.stmt(body);
                    if self.is_open() {
                        self.jump(header);
                    }
                }
                let exit = self.loops.pop().map(|l| l.exit).unwrap_or_default();
                self.continue_at(&exit);
            }
            StmtKind::Break => {
                let mut exit = std::mem::take(&mut self.innermost_loop().exit);
                self.jump_to(&mut exit);
                self.innermost_loop().exit = exit;
            }
            StmtKind::Continue => {
                let header = self.innermost_loop().header;
                self.jump(header);
            }
            StmtKind::Return(value) => {
                let v = value.as_ref().map(|e| self.value(e));
                let v = match (v, self.func.ret) {
                    (None, ret) if !ret.is_void() => Some(self.func.undef(ret)),
                    (v, _) => v,
                };
                self.terminate(InstData::ret(v));
            }
        }
    }

    /// One arm of an `if`: lowered if its target is reachable, then on to the join.
    fn arm(&mut self, entry: &Target, body: &hir::Stmt, join: &mut Target) {
        if let Some(b) = entry.block {
            self.switch_to(b);
            self.stmt(body);
            if self.is_open() {
                self.jump_to(join);
            }
        }
    }

    fn innermost_loop(&mut self) -> &mut LoopCx {
        self.loops.last_mut().expect("`break`/`continue` outside a loop is rejected by semantic analysis")
    }

    fn decl(&mut self, local: LocalId, init: Option<&LocalInit>) {
        let Slot::Memory(addr) = self.slots[local.index()] else { return };
        match init {
            None => {}
            Some(LocalInit::Scalar(e)) => {
                let v = self.value(e);
                self.ins_void(InstData::store(addr, v));
            }
            Some(LocalInit::Array(elems)) => self.array_init(local, addr, elems),
        }
    }

    /// Zero-fill (unless every element is listed), then the listed elements in order.
    fn array_init(&mut self, local: LocalId, base: Value, elems: &[(u32, hir::Expr)]) {
        let count = self.hfunc.locals[local.index()].ty.element_count().unwrap_or(0);
        let dense = elems.len() as u64 == count;
        if !dense {
            let words = u32::try_from(count).unwrap_or(u32::MAX);
            self.ins_void(InstData::new(crate::ir::Opcode::MemZero { words }, &[base], &[], Type::Void));
        }
        for (index, e) in elems {
            let v = self.value(e);
            if !dense && self.func.as_const(v).is_some_and(is_zero_bits) {
                continue;
            }
            let addr = self.element_address(base, *index);
            self.ins_void(InstData::store(addr, v));
        }
    }

    /// Address of flat element `index` of the array at `base`.
    fn element_address(&mut self, base: Value, index: u32) -> Value {
        match i32::try_from(index) {
            Ok(i) => {
                let i = self.func.iconst(i);
                self.offset(base, i, 4)
            }
            // Beyond 2³¹ elements: two steps, each with an index that fits an i32.
            Err(_) => {
                let half = self.func.iconst((index / 2) as i32);
                let rest = self.func.iconst((index - index / 2) as i32);
                let mid = self.offset(base, half, 4);
                self.offset(mid, rest, 4)
            }
        }
    }
}
