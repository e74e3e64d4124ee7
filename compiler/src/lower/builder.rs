//! The per-function lowering state: the function being built, the insertion point, variable
//! slots, the loop stack, and lazily created branch targets.
//!
//! Insertion point: `cur` is the block being filled, or `None` right after a terminator
//! (`return`, `break`, ...). Emitting into `None` first opens a fresh block without
//! predecessors — the code there is dead, and `unreachable-blocks` removes it.
//!
//! A [`Target`] is a block that exists only once some edge goes to it, so conditions with a
//! constant outcome leave no orphan blocks behind; it also remembers the blocks its edges come
//! from (the phi of a `&&`/`||` value needs them).
//!
//! Layout: a block enters the layout order when it becomes the insertion point, which follows
//! the source order of the constructs.

use cranelift_entity::SecondaryMap;
use smallvec::SmallVec;

use super::StringTable;
use crate::frontend::ast::Span;
use crate::frontend::hir::{self, LocalId, StmtKind, VarType};
use crate::ir::{Block, Function, InstData, Type, Value};

/// Where a local variable lives.
#[derive(Clone, Copy, Debug)]
pub(super) enum Slot {
    /// In memory at this address (an `alloca`).
    Memory(Value),
    /// A parameter used directly: a scalar that is never assigned, or an array's `ptr`.
    Direct(Value),
}

/// A lazily created block (see the module documentation).
#[derive(Default)]
pub(super) struct Target {
    pub block: Option<Block>,
    /// The source block of every edge to the target, one entry per edge.
    pub sources: SmallVec<[Block; 4]>,
}

impl Target {
    pub fn new() -> Target {
        Target::default()
    }

    fn get(&mut self, func: &mut Function) -> Block {
        *self.block.get_or_insert_with(|| func.create_block())
    }
}

/// The `break` and `continue` destinations of the innermost loop.
pub(super) struct LoopCx {
    pub header: Block,
    pub exit: Target,
}

pub(super) struct FnBuilder<'a> {
    pub program: &'a hir::Program,
    pub hfunc: &'a hir::Function,
    pub func: Function,
    pub strings: &'a mut StringTable,
    /// The insertion block (`None` after a terminator).
    cur: Option<Block>,
    /// Blocks in the order they became the insertion point: the final layout.
    order: Vec<Block>,
    in_order: SecondaryMap<Block, bool>,
    pub slots: Vec<Slot>,
    pub loops: Vec<LoopCx>,
    is_main: bool,
    /// Source offset of the innermost expression or statement being lowered: recorded for
    /// every instruction emitted ([`Function::set_src_offset`]).
    src_offset: u32,
}

impl<'a> FnBuilder<'a> {
    /// Lowers one HIR function.
    pub fn lower(
        program: &'a hir::Program,
        hfunc: &'a hir::Function,
        is_main: bool,
        strings: &'a mut StringTable,
    ) -> Function {
        let param_types: Vec<Type> = hfunc.params.iter().map(|&p| slot_type(&hfunc.locals[p.index()].ty)).collect();
        let ret = hfunc.ret.map_or(Type::Void, Type::from);
        let func = Function::new(hfunc.name.clone(), &param_types, ret);
        let mut b = FnBuilder {
            program,
            hfunc,
            func,
            strings,
            cur: None,
            order: Vec::new(),
            in_order: SecondaryMap::new(),
            slots: Vec::new(),
            loops: Vec::new(),
            is_main,
            src_offset: hfunc.span.lo,
        };
        let entry = b.func.create_block();
        b.switch_to(entry);
        b.create_slots();
        b.stmts(&hfunc.body);
        if b.cur.is_some() {
            b.fall_off_end();
        }
        b.finish()
    }

    /// Allocas for every local, stores of assigned scalar parameters.
    fn create_slots(&mut self) {
        let mut assigned = vec![false; self.hfunc.locals.len()];
        mark_assigned(&self.hfunc.body, &mut assigned);
        let mut param_values = self.func.params.clone().into_iter();
        for (i, local) in self.hfunc.locals.iter().enumerate() {
            let slot = match &local.ty {
                VarType::Scalar(s) => {
                    let elem = Type::from(*s);
                    if local.is_param {
                        let p = param_values.next().expect("one IR parameter per HIR parameter");
                        if assigned[i] {
                            let addr = self.ins(InstData::alloca(elem, 1));
                            self.ins_void(InstData::store(addr, p));
                            Slot::Memory(addr)
                        } else {
                            Slot::Direct(p)
                        }
                    } else {
                        Slot::Memory(self.ins(InstData::alloca(elem, 1)))
                    }
                }
                VarType::ArrayParam { .. } => {
                    Slot::Direct(param_values.next().expect("one IR parameter per HIR parameter"))
                }
                ty @ VarType::Array { elem, .. } => {
                    let count = ty.element_count().map_or(1, |n| u32::try_from(n).unwrap_or(u32::MAX));
                    Slot::Memory(self.ins(InstData::alloca(Type::from(*elem), count)))
                }
            };
            self.slots.push(slot);
        }
    }

    /// Control reaches the end of the body.
    /// Ends a function whose control reaches its closing brace (attributed to the brace).
    fn fall_off_end(&mut self) {
        self.src_offset = self.hfunc.span.hi.saturating_sub(1);
        let ret = if self.is_main {
            let zero = self.func.iconst(0);
            InstData::ret(Some(zero))
        } else if self.func.ret.is_void() {
            InstData::ret(None)
        } else {
            InstData::new(crate::ir::Opcode::Unreachable, &[], &[], Type::Void)
        };
        self.terminate(ret);
    }

    fn finish(mut self) -> Function {
        // Every created block became the insertion point at some time and was terminated; a
        // block that somehow did not is still given a place and a terminator, so the function
        // stays valid.
        for &b in self.func.layout().to_vec().iter() {
            if !self.in_order[b] {
                debug_assert!(false, "block {b} was created but never filled");
                self.in_order[b] = true;
                self.order.push(b);
            }
            if self.func.terminator(b).is_none() {
                let inst = self.func.create_inst(InstData::new(crate::ir::Opcode::Unreachable, &[], &[], Type::Void));
                self.func.append_inst(b, inst);
            }
        }
        self.func.set_layout(self.order);
        self.func
    }

    // ----- insertion point ----------------------------------------------------------------

    /// The insertion block, opening a fresh (unreachable) one after a terminator.
    pub fn block(&mut self) -> Block {
        match self.cur {
            Some(b) => b,
            None => {
                let b = self.func.create_block();
                self.switch_to(b);
                b
            }
        }
    }

    /// True when control can reach the insertion point from the previous statement.
    pub fn is_open(&self) -> bool {
        self.cur.is_some()
    }

    pub fn switch_to(&mut self, b: Block) {
        debug_assert!(
            self.cur.is_none_or(|c| c == b || self.func.terminator(c).is_some()),
            "switching away from an unterminated block"
        );
        if !self.in_order[b] {
            self.in_order[b] = true;
            self.order.push(b);
        }
        self.cur = Some(b);
    }

    /// Lowers with the instructions emitted by `lower` attributed to the construct at `span`.
    pub fn at<T>(&mut self, span: Span, lower: impl FnOnce(&mut Self) -> T) -> T {
        let outer = std::mem::replace(&mut self.src_offset, span.lo);
        let result = lower(self);
        self.src_offset = outer;
        result
    }

    /// Appends to the insertion block, recording the source offset.
    fn append(&mut self, data: InstData) -> Option<Value> {
        let b = self.block();
        let (inst, result) = self.func.append(b, data);
        self.func.set_src_offset(inst, self.src_offset);
        result
    }

    /// Emits a value-producing instruction; returns its result.
    pub fn ins(&mut self, data: InstData) -> Value {
        self.append(data).expect("ins: instruction has no result")
    }

    /// Emits an instruction whose result (if any) is not needed.
    pub fn ins_void(&mut self, data: InstData) {
        self.append(data);
    }

    /// Emits a terminator; the insertion point is closed afterwards.
    pub fn terminate(&mut self, data: InstData) {
        self.append(data);
        self.cur = None;
    }

    /// `jump` to a target.
    pub fn jump_to(&mut self, t: &mut Target) {
        let from = self.block();
        let dest = t.get(&mut self.func);
        t.sources.push(from);
        self.terminate(InstData::jump(dest));
    }

    /// `jump` to an existing block.
    pub fn jump(&mut self, dest: Block) {
        self.terminate(InstData::jump(dest));
    }

    /// `br cond, t, f`.
    pub fn branch(&mut self, cond: Value, t: &mut Target, f: &mut Target) {
        let from = self.block();
        let then_dest = t.get(&mut self.func);
        let else_dest = f.get(&mut self.func);
        t.sources.push(from);
        f.sources.push(from);
        self.terminate(InstData::br(cond, then_dest, else_dest));
    }

    /// Continues at a target if any edge reaches it; otherwise the insertion point stays
    /// closed (everything up to the next reachable construct is dead).
    pub fn continue_at(&mut self, t: &Target) {
        if let Some(b) = t.block {
            self.switch_to(b);
        }
    }

    /// A fresh block, not yet in the layout order.
    pub fn new_block(&mut self) -> Block {
        self.func.create_block()
    }

    pub fn ret_type_of(&self, f: hir::FuncId) -> Type {
        self.program.funcs[f.index()].ret.map_or(Type::Void, Type::from)
    }
}

/// The IR type a variable is passed as.
fn slot_type(ty: &VarType) -> Type {
    match ty {
        VarType::Scalar(s) => Type::from(*s),
        VarType::Array { .. } | VarType::ArrayParam { .. } => Type::Ptr,
    }
}

/// Marks every local assigned as a whole scalar (`x = ...`) somewhere in `stmts`.
fn mark_assigned(stmts: &[hir::Stmt], assigned: &mut [bool]) {
    for s in stmts {
        mark_assigned_stmt(s, assigned);
    }
}

fn mark_assigned_stmt(s: &hir::Stmt, assigned: &mut [bool]) {
    match &s.kind {
        StmtKind::Assign { place, .. } => {
            if let hir::VarRef::Local(LocalId(l)) = place.var
                && place.indices.is_empty()
                && let Some(flag) = assigned.get_mut(l as usize)
            {
                *flag = true;
            }
        }
        StmtKind::Block(body) => mark_assigned(body, assigned),
        StmtKind::If { then_branch, else_branch, .. } => {
            mark_assigned_stmt(then_branch, assigned);
            if let Some(e) = else_branch {
                mark_assigned_stmt(e, assigned);
            }
        }
        StmtKind::While { body, .. } => mark_assigned_stmt(body, assigned),
        StmtKind::Decl { .. } | StmtKind::Expr(_) | StmtKind::Break | StmtKind::Continue | StmtKind::Return(_) => {}
    }
}
