//! Translation of a [`Module`] into the interpreter's compact form.
//!
//! * Every value a function mentions gets a register slot in its frame: parameters first,
//!   then instruction results, then constants, global addresses and `undef`s. The frame
//!   template holds the constants' values (and `UNDEF` everywhere else), so at run time every
//!   operand is a plain register read.
//! * The code of all functions is one array of [`Op`]s; blocks are ranges of it and branch
//!   targets are [`Edge`]s carrying the target's phis as parallel copies, so phis cost nothing
//!   unless control actually arrives over that edge.
//! * Per block, the number of IR instructions (phis included) and their cost classes are
//!   kept for the step and cost accounting, which happens once per block entry.
//! * An `icmp` used only by the `br` right after it becomes part of one `BrIcmp` op (the
//!   commonest loop exit test, one dispatch instead of two), an `fcmp` likewise of a
//!   `BrFcmp` (generated programs clamp floats with chains of them); accounting is per IR
//!   instruction, so the fusion is invisible in steps and costs. Likewise a `gep` used only
//!   as the address of the `load` or `store` right after it becomes part of a `LoadGep` or
//!   `StoreGep` op (array accesses).
//! * Comparisons carry their condition as a [`Cond`], the set of outcomes for which it
//!   holds, evaluated without a branch.
//!
//! Translation validates what execution relies on and reports malformed IR as an
//! [`InterpError`] instead of misbehaving later; it is not a substitute for the verifier
//! (e.g. it does not check types or dominance). Finally it checks (a panic would be a bug of
//! its own) that every register an op names is inside its function's frame: the machine
//! reads registers without bounds checks.

use cranelift_entity::{EntityRef, SecondaryMap};
use rustc_hash::FxHashMap;

use super::cost::CostClass;
use super::{InterpError, UNDEF};
use crate::frontend::hir::Builtin;
use crate::ir::instr::builtin_signature;
use crate::ir::{Block, Callee, FloatCC, FuncRef, Function, Inst, IntCC, Module, Opcode, StrId, Type, Value, ValueDef};

pub(super) type Reg = u32;
/// "No register" (void call result, `ret` without a value).
pub(super) const NO_REG: Reg = u32::MAX;

#[derive(Clone, Copy, Debug)]
pub(super) enum Op {
    Add(Reg, Reg, Reg),
    Sub(Reg, Reg, Reg),
    Mul(Reg, Reg, Reg),
    SDiv(Reg, Reg, Reg),
    SRem(Reg, Reg, Reg),
    FAdd(Reg, Reg, Reg),
    FSub(Reg, Reg, Reg),
    FMul(Reg, Reg, Reg),
    FDiv(Reg, Reg, Reg),
    FNeg(Reg, Reg),
    Icmp(Cond, Reg, Reg, Reg),
    Fcmp(Cond, Reg, Reg, Reg),
    Zext(Reg, Reg),
    SiToFp(Reg, Reg),
    FpToSi(Reg, Reg),
    /// `dst, cond, if_true, if_false`.
    Select(Reg, Reg, Reg, Reg),
    /// `dst, alloca slot of the frame`.
    Alloca(Reg, u32),
    Load(Reg, Reg),
    /// `addr, value`.
    Store(Reg, Reg),
    /// `dst, base, index, scale`.
    Gep(Reg, Reg, Reg, u32),
    MemZero(Reg, u32),
    /// `dst (or NO_REG), function index, first argument in `Program::args`, argument count`.
    Call(Reg, u32, u32, u32),
    CallBuiltin(Reg, Builtin, u32, u32),
    /// `string, first argument in `Program::putf_args`, argument count`.
    PutF(StrId, u32, u32),
    Jump(u32),
    /// `cond, edge if true, edge if false`.
    Br(Reg, u32, u32),
    /// An `icmp` whose only use is the `br` right after it, fused: `cc, lhs, rhs, edge if
    /// true, edge if false`. (The compare's register is not written.)
    BrIcmp(Cond, Reg, Reg, u32, u32),
    /// The same for an `fcmp`.
    BrFcmp(Cond, Reg, Reg, u32, u32),
    /// A `gep` whose only use is the address of the `load` right after it, fused: `dst, base,
    /// index, scale`. (The gep's register is not written.)
    LoadGep(Reg, Reg, Reg, u32),
    /// The same for a `store`: `base, index, scale, value`.
    StoreGep(Reg, Reg, u32, Reg),
    Ret(Reg),
    Unreachable,
}

/// A comparison's condition code as the set of outcomes for which it holds — bit 0 less,
/// bit 1 equal, bit 2 greater, bit 3 unordered (a NaN operand) — so that evaluating it is
/// a few flag instructions and a shift instead of a second indirect jump (the `match` of
/// [`IntCC::eval`]) after the op's own dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Cond(u8);

impl Cond {
    const LESS: u8 = 1;
    const EQUAL: u8 = 2;
    const GREATER: u8 = 4;
    const UNORDERED: u8 = 8;

    pub(super) fn int(cc: IntCC) -> Cond {
        Cond(match cc {
            IntCC::Eq => Cond::EQUAL,
            IntCC::Ne => Cond::LESS | Cond::GREATER,
            IntCC::Lt => Cond::LESS,
            IntCC::Le => Cond::LESS | Cond::EQUAL,
            IntCC::Gt => Cond::GREATER,
            IntCC::Ge => Cond::GREATER | Cond::EQUAL,
        })
    }

    /// Ordered comparisons, except `ne` (unordered or not equal), as [`FloatCC::eval`].
    pub(super) fn float(cc: FloatCC) -> Cond {
        Cond(match cc {
            FloatCC::Eq => Cond::EQUAL,
            FloatCC::Ne => Cond::LESS | Cond::GREATER | Cond::UNORDERED,
            FloatCC::Lt => Cond::LESS,
            FloatCC::Le => Cond::LESS | Cond::EQUAL,
            FloatCC::Gt => Cond::GREATER,
            FloatCC::Ge => Cond::GREATER | Cond::EQUAL,
        })
    }

    /// [`IntCC::eval`] of the condition this was made from.
    #[inline(always)]
    pub(super) fn eval_int(self, x: i32, y: i32) -> bool {
        // The outcome's bit number: 0 less, 1 equal, 2 greater.
        let outcome = (x >= y) as u8 + (x > y) as u8;
        self.0 >> outcome & 1 != 0
    }

    /// [`FloatCC::eval`] of the condition this was made from.
    #[inline(always)]
    pub(super) fn eval_float(self, x: f32, y: f32) -> bool {
        // 0 less, 1 equal, 2 greater, 3 unordered (none of the three).
        let outcome = (x >= y) as u8 + (x > y) as u8 + 3 * !(x < y || x >= y) as u8;
        self.0 >> outcome & 1 != 0
    }
}

/// A control-flow edge: where it goes and the phi copies it performs.
#[derive(Clone, Copy, Debug)]
pub(super) struct Edge {
    pub pc: u32,
    /// Global block index of the target.
    pub block: u32,
    /// IR instructions of the target block (for the step budget).
    pub steps: u32,
    /// The edge's copies are `Program::copies[copies_start..copies_end]`.
    pub copies_start: u32,
    pub copies_end: u32,
    /// Some copy reads a register another copy of the edge writes: copy through a buffer.
    pub parallel: bool,
}

#[derive(Clone, Debug)]
pub(super) struct BlockInfo {
    /// Index of the function in `Program::funcs`.
    pub func: u32,
    pub end_pc: u32,
    /// IR instructions in the block, phis included.
    pub steps: u32,
    /// Those instructions per cost class.
    pub classes: [u32; CostClass::COUNT],
}

#[derive(Clone, Debug)]
pub(super) struct FuncCode {
    pub name: String,
    pub entry_pc: u32,
    pub entry_block: u32,
    /// IR instructions of the entry block.
    pub entry_steps: u32,
    /// The frame's initial registers; parameters are the first.
    pub template: Vec<u64>,
    /// Words of each alloca slot.
    pub allocas: Vec<u32>,
    /// Their sum.
    pub frame_words: u64,
}

#[derive(Clone, Debug)]
pub(super) struct GlobalImage {
    pub words: u32,
    pub writable: bool,
    pub init: Vec<(u32, u32)>,
}

/// A module translated for execution; immutable, reusable for many runs.
#[derive(Clone, Debug)]
pub struct Program {
    pub(super) code: Vec<Op>,
    /// Global block index of each op (for trap-time accounting).
    pub(super) op_block: Vec<u32>,
    /// Source offset of each op's instruction, where lowering recorded one (for trap
    /// messages; see [`Function::src_offset`]).
    pub(super) op_src: Vec<Option<u32>>,
    pub(super) blocks: Vec<BlockInfo>,
    pub(super) edges: Vec<Edge>,
    /// `(dst, src)` phi copies, referenced by edges.
    pub(super) copies: Vec<(Reg, Reg)>,
    /// Argument registers of calls.
    pub(super) args: Vec<Reg>,
    /// `(register, is_float)` arguments of `putf`.
    pub(super) putf_args: Vec<(Reg, bool)>,
    pub(super) funcs: Vec<FuncCode>,
    pub(super) globals: Vec<GlobalImage>,
    pub(super) strings: Vec<Vec<u8>>,
    pub(super) main: u32,
}

impl Program {
    /// Translates every function of `module`; `main` must exist and be `() -> i32`.
    pub fn new(module: &Module) -> Result<Program, InterpError> {
        let main_ref = module.func_by_name("main").ok_or(InterpError::NoMain)?;
        let main_fn = module.func(main_ref);
        if !main_fn.params.is_empty() || main_fn.ret != Type::I32 {
            return Err(InterpError::BadMain);
        }
        let mut index_of: SecondaryMap<FuncRef, u32> = SecondaryMap::with_default(u32::MAX);
        for (i, (f, _)) in module.funcs().enumerate() {
            index_of[f] = i as u32;
        }
        let mut prog = Program {
            code: Vec::new(),
            op_block: Vec::new(),
            op_src: Vec::new(),
            blocks: Vec::new(),
            edges: Vec::new(),
            copies: Vec::new(),
            args: Vec::new(),
            putf_args: Vec::new(),
            funcs: Vec::new(),
            globals: Vec::new(),
            strings: module.strings.values().cloned().collect(),
            main: index_of[main_ref],
        };
        for (_, g) in module.globals.iter() {
            let init = g
                .init
                .iter()
                .map(|&(i, c)| {
                    let bits = match c {
                        crate::ir::Const::Int(v) => v as u32,
                        crate::ir::Const::Float(b) => b,
                        crate::ir::Const::Bool(b) => b as u32,
                    };
                    (i, bits)
                })
                .collect();
            prog.globals.push(GlobalImage { words: g.words, writable: !g.is_const, init });
        }
        for (i, (_, func)) in module.funcs().enumerate() {
            let code = Translator::new(module, func, i as u32, &index_of, &mut prog).translate()?;
            prog.funcs.push(code);
        }
        prog.check_registers();
        Ok(prog)
    }

    /// Checks what the machine's unchecked register accesses rely on: every register an op
    /// reads or writes — operands, results, the copies of its edges, the arguments of its
    /// calls — is inside the frame of the op's function, and a call passes no more arguments
    /// than its callee's frame holds. `NO_REG` appears only where the machine tests for it
    /// (`Ret`, the result of `Call` and `CallBuiltin`). Registers are only ever allocated as
    /// slots of the template, so this holds by construction; the check (one pass over the
    /// code) makes a translator bug a panic here instead of memory unsafety later.
    fn check_registers(&self) {
        let edge = |regs: &mut Vec<Reg>, e: u32| {
            let e = &self.edges[e as usize];
            for &(dst, src) in &self.copies[e.copies_start as usize..e.copies_end as usize] {
                regs.extend([dst, src]);
            }
        };
        let mut regs: Vec<Reg> = Vec::new();
        for (pc, op) in self.code.iter().enumerate() {
            let func = self.blocks[self.op_block[pc] as usize].func as usize;
            let size = self.funcs[func].template.len();
            regs.clear();
            match *op {
                Op::Add(d, a, b)
                | Op::Sub(d, a, b)
                | Op::Mul(d, a, b)
                | Op::SDiv(d, a, b)
                | Op::SRem(d, a, b)
                | Op::FAdd(d, a, b)
                | Op::FSub(d, a, b)
                | Op::FMul(d, a, b)
                | Op::FDiv(d, a, b)
                | Op::Icmp(_, d, a, b)
                | Op::Fcmp(_, d, a, b)
                | Op::Gep(d, a, b, _)
                | Op::LoadGep(d, a, b, _)
                | Op::StoreGep(d, a, _, b) => regs.extend([d, a, b]),
                Op::FNeg(d, a)
                | Op::Zext(d, a)
                | Op::SiToFp(d, a)
                | Op::FpToSi(d, a)
                | Op::Load(d, a)
                | Op::Store(d, a) => regs.extend([d, a]),
                Op::Select(d, c, a, b) => regs.extend([d, c, a, b]),
                Op::Alloca(d, _) | Op::MemZero(d, _) => regs.push(d),
                Op::Call(d, callee, start, n) => {
                    assert!(n as usize <= self.funcs[callee as usize].template.len(), "call passes more arguments than the callee's frame holds");
                    regs.extend(&self.args[start as usize..(start + n) as usize]);
                    regs.extend([d].into_iter().filter(|&d| d != NO_REG));
                }
                Op::CallBuiltin(d, _, start, n) => {
                    regs.extend(&self.args[start as usize..(start + n) as usize]);
                    regs.extend([d].into_iter().filter(|&d| d != NO_REG));
                }
                Op::PutF(_, start, n) => {
                    regs.extend(self.putf_args[start as usize..(start + n) as usize].iter().map(|&(r, _)| r))
                }
                Op::Jump(e) => edge(&mut regs, e),
                Op::Br(c, t, e) => {
                    regs.push(c);
                    edge(&mut regs, t);
                    edge(&mut regs, e);
                }
                Op::BrIcmp(_, a, b, t, e) | Op::BrFcmp(_, a, b, t, e) => {
                    regs.extend([a, b]);
                    edge(&mut regs, t);
                    edge(&mut regs, e);
                }
                Op::Ret(v) => regs.extend([v].into_iter().filter(|&v| v != NO_REG)),
                Op::Unreachable => {}
            }
            assert!(
                regs.iter().all(|&r| (r as usize) < size),
                "op {pc} ({op:?}) of @{} names a register outside its {size}-register frame",
                self.funcs[func].name
            );
        }
    }
}

struct Translator<'a> {
    module: &'a Module,
    func: &'a Function,
    func_index: u32,
    index_of: &'a SecondaryMap<FuncRef, u32>,
    prog: &'a mut Program,
    regs: SecondaryMap<Value, u32>,
    template: Vec<u64>,
    /// Global block index of each layout block.
    block_index: FxHashMap<Block, u32>,
    allocas: Vec<u32>,
}

impl<'a> Translator<'a> {
    fn new(
        module: &'a Module,
        func: &'a Function,
        func_index: u32,
        index_of: &'a SecondaryMap<FuncRef, u32>,
        prog: &'a mut Program,
    ) -> Self {
        Translator {
            module,
            func,
            func_index,
            index_of,
            prog,
            regs: SecondaryMap::with_default(NO_REG),
            template: Vec::new(),
            block_index: FxHashMap::default(),
            allocas: Vec::new(),
        }
    }

    fn error(&self, message: impl Into<String>) -> InterpError {
        InterpError::Malformed { func: self.func.name.clone(), message: message.into() }
    }

    fn new_reg(&mut self, v: Value, init: u64) -> Reg {
        let r = self.template.len() as Reg;
        self.template.push(init);
        self.regs[v] = r;
        r
    }

    /// The register of an operand, creating constant registers on first use.
    fn reg(&mut self, v: Value) -> Result<Reg, InterpError> {
        if v.index() >= self.func.num_values() {
            return Err(self.error(format!("operand {v} is not a value of the function")));
        }
        let r = self.regs[v];
        if r != NO_REG {
            return Ok(r);
        }
        let init = match self.func.value_def(v) {
            ValueDef::Const(c) => match c {
                crate::ir::Const::Int(i) => i as u32 as u64,
                crate::ir::Const::Float(b) => b as u64,
                crate::ir::Const::Bool(b) => b as u64,
            },
            ValueDef::Global(g) => {
                if self.module.globals.get(g).is_none() {
                    return Err(self.error(format!("unknown global {g}")));
                }
                (g.index() as u64) << 32
            }
            ValueDef::Undef => UNDEF,
            ValueDef::Inst(_) | ValueDef::Param(_) => {
                return Err(self.error(format!("{v} is defined outside the layout")));
            }
        };
        Ok(self.new_reg(v, init))
    }

    fn translate(mut self) -> Result<FuncCode, InterpError> {
        let func = self.func;
        if func.layout().is_empty() {
            return Err(self.error("function has no blocks"));
        }
        for &p in &func.params {
            self.new_reg(p, UNDEF);
        }
        let base_block = self.prog.blocks.len() as u32;
        for (i, &b) in func.layout().iter().enumerate() {
            self.block_index.insert(b, base_block + i as u32);
            for inst in func.block_insts(b) {
                if let Some(v) = func.result(inst) {
                    self.new_reg(v, UNDEF);
                }
            }
        }
        // Block start pcs, so edges can be filled in as terminators are translated.
        let mut pc = self.prog.code.len() as u32;
        let mut start_pc = Vec::with_capacity(func.layout().len());
        for &b in func.layout() {
            start_pc.push(pc);
            pc += func.block_insts(b).filter(|&i| func.opcode(i) != Opcode::Phi).count() as u32;
            pc -= self.fused_compare(b).is_some() as u32;
            pc -= func.block_insts(b).filter(|&i| self.is_fused_gep(i)).count() as u32;
        }
        for (i, &b) in func.layout().iter().enumerate() {
            debug_assert_eq!(self.prog.code.len() as u32, start_pc[i]);
            self.translate_block(b, base_block + i as u32, &start_pc, base_block)?;
        }
        Ok(FuncCode {
            name: func.name.clone(),
            entry_pc: start_pc[0],
            entry_block: base_block,
            entry_steps: func.block_insts(func.layout()[0]).count() as u32,
            template: self.template,
            frame_words: self.allocas.iter().map(|&w| w as u64).sum(),
            allocas: self.allocas,
        })
    }

    /// The `icmp` or `fcmp` to fuse into `b`'s terminator: the instruction right before a
    /// `br` whose condition it computes, with no other use.
    fn fused_compare(&self, b: Block) -> Option<Inst> {
        let func = self.func;
        let term = func.last_inst(b)?;
        let cmp = func.prev_inst(term)?;
        let cond = func.result(cmp)?;
        let fusable = func.opcode(term) == Opcode::Br
            && matches!(func.opcode(cmp), Opcode::Icmp(_) | Opcode::Fcmp(_))
            && func.args(cmp).len() == 2
            && func.args(term).first() == Some(&cond)
            && func.users(cond) == [term];
        fusable.then_some(cmp)
    }

    /// Whether `inst` is a `gep` to fuse into the `load` or `store` right after it: that
    /// access's address (and not a stored value) is the gep's only use.
    fn is_fused_gep(&self, inst: Inst) -> bool {
        let func = self.func;
        let (Opcode::Gep { .. }, Some(p), Some(next)) = (func.opcode(inst), func.result(inst), func.next_inst(inst))
        else {
            return false;
        };
        let args = func.args(next);
        let used_as_address = match func.opcode(next) {
            Opcode::Load => args.len() == 1 && args[0] == p,
            Opcode::Store => args.len() == 2 && args[0] == p && args[1] != p,
            _ => false,
        };
        used_as_address && func.args(inst).len() == 2 && func.users(p) == [next]
    }

    fn translate_block(&mut self, b: Block, gb: u32, start_pc: &[u32], base_block: u32) -> Result<(), InterpError> {
        let func = self.func;
        let fused = self.fused_compare(b);
        let mut classes = [0u32; CostClass::COUNT];
        let mut steps = 0u32;
        let mut terminated = false;
        let mut gep_before: Option<Inst> = None;
        for inst in func.block_insts(b) {
            let op = func.opcode(inst);
            steps += 1;
            classes[CostClass::of(op) as usize] += 1;
            if terminated {
                return Err(self.error(format!("instruction after the terminator of {b}")));
            }
            if op == Opcode::Phi || Some(inst) == fused {
                continue;
            }
            if self.is_fused_gep(inst) {
                gep_before = Some(inst);
                continue;
            }
            let mut translated = self.translate_inst(b, inst, start_pc, base_block)?;
            if let Some(gep) = gep_before.take()
                && let Opcode::Gep { scale } = func.opcode(gep)
            {
                let a = self.args(gep, 2)?;
                translated = match translated {
                    Op::Load(d, _) => Op::LoadGep(d, a[0], a[1], scale),
                    Op::Store(_, v) => Op::StoreGep(a[0], a[1], scale, v),
                    other => other,
                };
            }
            if let (Some(cmp), Op::Br(_, t, e)) = (fused, translated) {
                let a = self.args(cmp, 2)?;
                translated = match func.opcode(cmp) {
                    Opcode::Icmp(cc) => Op::BrIcmp(Cond::int(cc), a[0], a[1], t, e),
                    Opcode::Fcmp(cc) => Op::BrFcmp(Cond::float(cc), a[0], a[1], t, e),
                    _ => unreachable!("fused_compare fuses compares only"),
                };
            }
            self.prog.code.push(translated);
            self.prog.op_block.push(gb);
            self.prog.op_src.push(func.src_offset(inst));
            terminated = op.is_terminator();
        }
        if !terminated {
            return Err(self.error(format!("block {b} does not end in a terminator")));
        }
        self.prog.blocks.push(BlockInfo { func: self.func_index, end_pc: self.prog.code.len() as u32, steps, classes });
        Ok(())
    }

    fn args(&mut self, inst: Inst, n: usize) -> Result<Vec<Reg>, InterpError> {
        let args = self.func.args(inst);
        if args.len() != n {
            return Err(self.error(format!("{inst} has {} operands, expected {n}", args.len())));
        }
        args.iter().map(|&a| self.reg(a)).collect()
    }

    fn dst(&self, inst: Inst) -> Result<Reg, InterpError> {
        match self.func.result(inst) {
            Some(v) => Ok(self.regs[v]),
            None => Err(self.error(format!("{inst} has no result"))),
        }
    }

    fn edge(&mut self, from: Block, to: Block, start_pc: &[u32], base_block: u32) -> Result<u32, InterpError> {
        let Some(&gb) = self.block_index.get(&to) else {
            return Err(self.error(format!("branch from {from} to {to}, which is not in the layout")));
        };
        let copies_start = self.prog.copies.len() as u32;
        let phis: Vec<Inst> = self.func.block_phis(to).collect();
        for phi in phis {
            let Some((_, v)) = self.func.inst(phi).phi_incoming().find(|&(p, _)| p == from) else {
                return Err(self.error(format!("phi {phi} in {to} has no value for the edge from {from}")));
            };
            let src = self.reg(v)?;
            let dst = self.dst(phi)?;
            self.prog.copies.push((dst, src));
        }
        let copies = &self.prog.copies[copies_start as usize..];
        let parallel = copies.iter().any(|&(_, src)| copies.iter().any(|&(dst, _)| dst == src));
        let edge = Edge {
            pc: start_pc[(gb - base_block) as usize],
            block: gb,
            steps: self.func.block_insts(to).count() as u32,
            copies_start,
            copies_end: self.prog.copies.len() as u32,
            parallel,
        };
        self.prog.edges.push(edge);
        Ok(self.prog.edges.len() as u32 - 1)
    }

    fn translate_inst(&mut self, b: Block, inst: Inst, start_pc: &[u32], base_block: u32) -> Result<Op, InterpError> {
        let func = self.func;
        let data = func.inst(inst);
        let op = data.op;
        let targets = data.targets.clone();
        if !op.is_terminator() && !targets.is_empty() {
            return Err(self.error(format!("{inst} has block operands")));
        }
        macro_rules! binary {
            ($variant:ident) => {{
                let a = self.args(inst, 2)?;
                Op::$variant(self.dst(inst)?, a[0], a[1])
            }};
        }
        macro_rules! unary {
            ($variant:ident) => {{
                let a = self.args(inst, 1)?;
                Op::$variant(self.dst(inst)?, a[0])
            }};
        }
        Ok(match op {
            Opcode::Add => binary!(Add),
            Opcode::Sub => binary!(Sub),
            Opcode::Mul => binary!(Mul),
            Opcode::SDiv => binary!(SDiv),
            Opcode::SRem => binary!(SRem),
            Opcode::FAdd => binary!(FAdd),
            Opcode::FSub => binary!(FSub),
            Opcode::FMul => binary!(FMul),
            Opcode::FDiv => binary!(FDiv),
            Opcode::FNeg => unary!(FNeg),
            Opcode::Zext => unary!(Zext),
            Opcode::SiToFp => unary!(SiToFp),
            Opcode::FpToSi => unary!(FpToSi),
            Opcode::Load => unary!(Load),
            Opcode::Icmp(cc) => {
                let a = self.args(inst, 2)?;
                Op::Icmp(Cond::int(cc), self.dst(inst)?, a[0], a[1])
            }
            Opcode::Fcmp(cc) => {
                let a = self.args(inst, 2)?;
                Op::Fcmp(Cond::float(cc), self.dst(inst)?, a[0], a[1])
            }
            Opcode::Select => {
                let a = self.args(inst, 3)?;
                Op::Select(self.dst(inst)?, a[0], a[1], a[2])
            }
            Opcode::Alloca { elem, count } => {
                if elem.bytes() != 4 {
                    return Err(self.error(format!("alloca of {elem}")));
                }
                self.args(inst, 0)?;
                self.allocas.push(count);
                Op::Alloca(self.dst(inst)?, self.allocas.len() as u32 - 1)
            }
            Opcode::Store => {
                let a = self.args(inst, 2)?;
                Op::Store(a[0], a[1])
            }
            Opcode::Gep { scale } => {
                let a = self.args(inst, 2)?;
                Op::Gep(self.dst(inst)?, a[0], a[1], scale)
            }
            Opcode::MemZero { words } => {
                let a = self.args(inst, 1)?;
                Op::MemZero(a[0], words)
            }
            Opcode::Call(callee) => self.translate_call(inst, callee)?,
            Opcode::Phi => return Err(self.error("phi after a non-phi instruction")),
            Opcode::Jump => {
                self.args(inst, 0)?;
                if targets.len() != 1 {
                    return Err(self.error(format!("{inst}: jump needs one target")));
                }
                Op::Jump(self.edge(b, targets[0], start_pc, base_block)?)
            }
            Opcode::Br => {
                let a = self.args(inst, 1)?;
                if targets.len() != 2 {
                    return Err(self.error(format!("{inst}: br needs two targets")));
                }
                let t = self.edge(b, targets[0], start_pc, base_block)?;
                let e = self.edge(b, targets[1], start_pc, base_block)?;
                Op::Br(a[0], t, e)
            }
            Opcode::Ret => {
                let n = func.args(inst).len();
                if n > 1 {
                    return Err(self.error(format!("{inst}: ret with {n} values")));
                }
                let a = self.args(inst, n)?;
                Op::Ret(a.first().copied().unwrap_or(NO_REG))
            }
            Opcode::Unreachable => Op::Unreachable,
        })
    }

    fn translate_call(&mut self, inst: Inst, callee: Callee) -> Result<Op, InterpError> {
        let func = self.func;
        let n = func.args(inst).len();
        let regs = self.args(inst, n)?;
        let dst = match func.result(inst) {
            Some(v) => self.regs[v],
            None => NO_REG,
        };
        match callee {
            Callee::Func(f) => {
                if !self.module.is_live(f) {
                    return Err(self.error(format!("call of removed function {f}")));
                }
                let target = self.module.func(f);
                if target.params.len() != n {
                    return Err(self.error(format!("call of @{} with {n} arguments", target.name)));
                }
                if (dst == NO_REG) != target.ret.is_void() {
                    return Err(self.error(format!("call of @{} disagrees about its result", target.name)));
                }
                let start = self.prog.args.len() as u32;
                self.prog.args.extend_from_slice(&regs);
                Ok(Op::Call(dst, self.index_of[f], start, n as u32))
            }
            Callee::Builtin(bi) => {
                let Some((params, ret)) = builtin_signature(bi) else {
                    return Err(self.error("putf called as a plain built-in"));
                };
                if params.len() != n || (dst == NO_REG) != ret.is_void() {
                    return Err(self.error(format!("call of {} with a wrong signature", bi.source_name())));
                }
                let start = self.prog.args.len() as u32;
                self.prog.args.extend_from_slice(&regs);
                Ok(Op::CallBuiltin(dst, bi, start, n as u32))
            }
            Callee::PutF(s) => {
                if s.index() >= self.prog.strings.len() {
                    return Err(self.error(format!("unknown string {s}")));
                }
                let start = self.prog.putf_args.len() as u32;
                for (&r, &v) in regs.iter().zip(func.args(inst)) {
                    self.prog.putf_args.push((r, func.value_type(v) == Type::F32));
                }
                Ok(Op::PutF(s, start, n as u32))
            }
        }
    }
}
