//! Instruction selection: IR function → [`MFunction`] over virtual registers.
//!
//! Structure of the result:
//! * One machine block per reachable IR block, in IR layout order; phis become block
//!   parameters and each jump passes the incoming values as branch arguments. A conditional
//!   branch never carries arguments: an edge from a two-successor block into a block with
//!   phis or with several incoming edges gets its own *edge block* (placed right after the
//!   source block) holding the jump with the arguments. That also splits every critical edge,
//!   as the register allocator requires. Edge blocks that end up empty are threaded away
//!   after allocation.
//! * If the IR entry block has predecessors (it heads a loop) a synthetic entry block is put
//!   first, because the allocator's entry block must not be a branch target.
//! * The entry block starts with [`MInst::Args`], defining the register-passed parameters in
//!   their ABI registers. Stack-passed parameters are loaded where they are used.
//!
//! Blocks are selected in reverse post-order, so every value is defined (or aliased) before
//! any use is selected. At the end the machine blocks are renumbered in reverse post-order
//! of the machine CFG (what the allocator and its checker expect); each remembers its
//! position in the IR layout, which is the emission order.
//!
//! Values that are not instruction results (constants, global addresses, `alloca`
//! addresses, `undef`) are *materialised* at their uses. One-instruction values are rebuilt
//! at each use; longer ones are built once and reused by later uses in the same block and in
//! the blocks it dominates (blocks are selected in reverse post-order, so a dominator's
//! materialisations already exist). For blocks inside a loop
//! (with the `arm-const-hoist` stage) the materialisation goes instead to one of the
//! block's hoisting points (see [`super::cfg`]), before that point's terminator, and is
//! shared by the loops below it — the outermost point with room, since each hoisted value
//! occupies a register throughout and the allocator cannot rematerialise (see
//! `materialise`). A constant passed
//! along a CFG edge is built on that edge (the edge needs a move anyway).
//!
//! Folding decisions (compare+branch, address modes, multiply-accumulate) are made up front
//! in [`fold`]; the per-opcode patterns are in [`lower`], calls in [`call`].

mod call;
pub(crate) mod fold;
mod lower;

use regalloc2::{Block, RegClass, VReg};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::cfg::{CfgInfo, Hoist};
use super::imm::{is_arm_imm, vfp_imm};
use super::mir::{AluOp, BlockOrigin, FrameObj, FrameRequest, MBlockData, MFunction, MInst, Op2, Reg};
use super::{BackendError, BackendOptions, BackendStage, Symbols, abi};
use crate::analysis::nonneg::NonNegative;
use crate::ir::{self, Const, Function, GlobalRef, Module, Opcode, StrId, Type, Value, ValueDef};
use fold::FoldInfo;

/// Something materialised into a register at its uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Mat {
    Int(i32),
    /// A float by bit pattern.
    Float(u32),
    /// A global's address plus a byte offset.
    Global(GlobalRef, i32),
    /// A `putf` format string's address.
    Str(StrId),
    /// An `alloca` area's address plus a byte offset.
    Frame(u32, i32),
    /// A stack-passed parameter (by offset in the incoming area; `true` for a float). The
    /// caller's slot never changes, so loading it at each use is as good as a reload from a
    /// spill slot, and saves the spill that keeping it in a register would often cost.
    Incoming(u32, bool),
}

pub fn select(
    module: &Module,
    func: &Function,
    sym: String,
    syms: &Symbols,
    opts: &BackendOptions,
) -> Result<MFunction, BackendError> {
    check_shapes(func)?;
    let cfg = CfgInfo::compute(func)?;
    let fold =
        FoldInfo::compute(func, &cfg.order, &cfg.reachable, opts.enabled(BackendStage::AddrFold), opts.enabled(BackendStage::OpFold));
    let mut s = ISel {
        sym,
        module,
        func,
        syms,
        opts,
        frame: FrameRequest { allocas: fold.alloca_sizes.clone(), ..FrameRequest::default() },
        cfg,
        fold,
        blocks: Vec::new(),
        mblock_of: FxHashMap::default(),
        edge_blocks: FxHashMap::default(),
        fresh_entry: false,
        term_start: Vec::new(),
        hoisted: Vec::new(),
        cheap_hoisted: Vec::new(),
        wide_hoisted: Vec::new(),
        value_regs: FxHashMap::default(),
        stack_params: FxHashMap::default(),
        num_vregs: 0,
        cur: Block::new(0),
        hoist_ctx: SmallVec::new(),
        local_cache: FxHashMap::default(),
        recent_cheap: FxHashMap::default(),
        dom_chain: Vec::new(),
        hoist_cache: FxHashMap::default(),
        nonneg: None,
        index_plus_cache: FxHashMap::default(),
        quotient_cache: FxHashMap::default(),
        held_flags: None,
    };
    s.create_blocks()?;
    if s.fresh_entry {
        s.lower_fresh_entry()?;
    }
    let rpo = s.cfg.rpo.clone();
    for b in rpo {
        s.lower_block(b)?;
    }
    Ok(s.finish())
}

struct ISel<'a> {
    sym: String,
    module: &'a Module,
    func: &'a Function,
    syms: &'a Symbols,
    opts: &'a BackendOptions,
    cfg: CfgInfo,
    fold: FoldInfo,
    frame: FrameRequest,
    blocks: Vec<MBlockData>,
    mblock_of: FxHashMap<ir::Block, Block>,
    /// Edge blocks by (source IR block, successor slot).
    edge_blocks: FxHashMap<(ir::Block, usize), Block>,
    fresh_entry: bool,
    /// Per machine block: where its terminator sequence starts (hoisted code goes there).
    term_start: Vec<usize>,
    hoisted: Vec<Vec<MInst>>,
    /// Per hoisting target: how many one-instruction values were hoisted there.
    cheap_hoisted: Vec<usize>,
    /// Per hoisting target: how many longer values (addresses, wide constants) were hoisted
    /// there.
    wide_hoisted: Vec<usize>,
    value_regs: FxHashMap<Value, Reg>,
    /// Stack-passed parameters and their offsets in the incoming argument area.
    stack_params: FxHashMap<Value, u32>,
    num_vregs: usize,
    /// The machine block being filled.
    cur: Block,
    /// Where materialisations for the current block may go: its hoisting points, outermost
    /// first (empty: in place).
    hoist_ctx: SmallVec<[Hoist; 4]>,
    local_cache: FxHashMap<(Block, Mat), Reg>,
    /// The last in-place build of each one-instruction value: its block, its position there
    /// and its register (see [`CHEAP_REUSE_WINDOW`]).
    recent_cheap: FxHashMap<Mat, (Block, usize, Reg)>,
    /// The machine blocks whose in-place materialisations are available in the block being
    /// filled: itself and the blocks of its dominators, innermost first.
    dom_chain: Vec<Block>,
    hoist_cache: FxHashMap<(Block, Mat), Reg>,
    /// Sign facts for division and remainder by powers of two, computed at the first one.
    nonneg: Option<NonNegative>,
    /// Index values `x + c` computed for addresses, by the machine block computing them.
    index_plus_cache: FxHashMap<(Block, Value, i32), Reg>,
    /// Quotients `a / b` of `sdiv`/`srem` (dividend, divisor), by the machine block
    /// computing them: a remainder or division by the same operands reuses them.
    quotient_cache: FxHashMap<(Block, Value, Value), Reg>,
    /// The folded comparison whose flags were set last: its machine block, the IR compare,
    /// the condition it gave and how many instructions the block had right after it. A
    /// later reader of the same comparison in that block reuses the flags when nothing
    /// emitted since writes them (several selects on one condition).
    held_flags: Option<(Block, ir::Inst, super::mir::Cond, usize)>,
}

fn class_of(ty: Type) -> RegClass {
    if ty == Type::F32 { RegClass::Float } else { RegClass::Int }
}

impl ISel<'_> {
    // ----- structure --------------------------------------------------------------------

    fn push_block(&mut self, origin: BlockOrigin) -> Block {
        let b = Block::new(self.blocks.len());
        self.blocks.push(MBlockData {
            insts: Vec::new(),
            params: Vec::new(),
            succs: SmallVec::new(),
            preds: SmallVec::new(),
            branch_args: SmallVec::new(),
            origin,
            layout: self.blocks.len() as u32,
        });
        self.term_start.push(0);
        self.hoisted.push(Vec::new());
        self.cheap_hoisted.push(0);
        self.wide_hoisted.push(0);
        b
    }

    fn create_blocks(&mut self) -> Result<(), BackendError> {
        let func = self.func;
        let entry = self.cfg.order[0];
        self.fresh_entry = !self.cfg.preds[entry].is_empty();
        if self.fresh_entry {
            self.push_block(BlockOrigin::Entry);
        }
        let order = self.cfg.order.clone();
        for &b in &order {
            let mb = self.push_block(BlockOrigin::Ir(b));
            self.mblock_of.insert(b, mb);
            let succs = self.cfg.succs[b].clone();
            if succs.len() == 2 {
                for (slot, &s) in succs.iter().enumerate() {
                    let in_edges = self.cfg.preds[s].len() + usize::from(s == entry && self.fresh_entry);
                    if func.block_phis(s).next().is_some() || in_edges > 1 {
                        let e = self.push_block(BlockOrigin::Edge(b, s));
                        self.edge_blocks.insert((b, slot), e);
                    }
                }
            }
        }
        for &b in &order {
            let mb = self.mblock_of[&b];
            let phis: Vec<ir::Inst> = func.block_phis(b).collect();
            for phi in phis {
                let v = func
                    .result(phi)
                    .ok_or_else(|| BackendError::InvalidIr(format!("{}: phi without result", func.name)))?;
                let r = self.new_vreg(class_of(func.value_type(v)));
                self.value_regs.insert(v, r);
                self.blocks[mb.index()].params.push(vreg(r));
            }
        }
        Ok(())
    }

    fn finish(mut self) -> MFunction {
        for (i, hoisted) in std::mem::take(&mut self.hoisted).into_iter().enumerate() {
            if !hoisted.is_empty() {
                let at = self.term_start[i];
                self.blocks[i].insts.splice(at..at, hoisted);
            }
        }
        self.renumber_in_rpo();
        for i in 0..self.blocks.len() {
            for s in self.blocks[i].succs.clone() {
                self.blocks[s.index()].preds.push(Block::new(i));
            }
        }
        MFunction { sym: self.sym, blocks: self.blocks, num_vregs: self.num_vregs, frame: self.frame }
    }

    /// Renumbers the blocks in a reverse post-order that keeps every loop contiguous: the
    /// allocator's heuristics (loop depth) and `regalloc2`'s checker expect every block after
    /// at least one predecessor, and `regalloc2` derives loop depth from the block numbering
    /// (a block is inside a loop when it lies between the header and a back edge). A plain
    /// depth-first order can place the code after a loop between its header and its body,
    /// which then counts as loop code while the body does not, and spill weights go wrong.
    /// Visiting, at every block, the successors that leave more loops first makes them finish
    /// first, so they are numbered after the loop they leave.
    fn renumber_in_rpo(&mut self) {
        let n = self.blocks.len();
        let loops: Vec<SmallVec<[ir::Block; 4]>> = self.blocks.iter().map(|b| self.enclosing_loops(b.origin)).collect();
        let common = |a: usize, b: usize| loops[a].iter().zip(loops[b].iter()).take_while(|(x, y)| x == y).count();
        let succ_order: Vec<SmallVec<[usize; 2]>> = (0..n)
            .map(|b| {
                let mut succs: SmallVec<[usize; 2]> = self.blocks[b].succs.iter().map(|s| s.index()).collect();
                // Stable: successors staying in the same loops keep their original order.
                succs.sort_by_key(|&s| common(b, s));
                succs
            })
            .collect();
        let mut visited = vec![false; n];
        let mut postorder = Vec::with_capacity(n);
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        visited[0] = true;
        while let Some(&mut (b, ref mut i)) = stack.last_mut() {
            if let Some(&s) = succ_order[b].get(*i) {
                *i += 1;
                if !visited[s] {
                    visited[s] = true;
                    stack.push((s, 0));
                }
            } else {
                postorder.push(b);
                stack.pop();
            }
        }
        // Every block is reachable by construction; keep any stragglers at the end anyway.
        let mut order: Vec<usize> = postorder.into_iter().rev().collect();
        order.extend((0..n).filter(|&b| !visited[b]));
        let mut new_index = vec![0usize; n];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        let remap = |b: Block| Block::new(new_index[b.index()]);
        let mut old_blocks: Vec<Option<MBlockData>> = std::mem::take(&mut self.blocks).into_iter().map(Some).collect();
        for &old in &order {
            if let Some(mut data) = old_blocks[old].take() {
                for s in data.succs.iter_mut() {
                    *s = remap(*s);
                }
                for inst in data.insts.iter_mut() {
                    inst.map_targets(remap);
                }
                self.blocks.push(data);
            }
        }
    }

    /// Headers of the IR loops containing a machine block, outermost first: an edge block
    /// lies in the loops containing both ends of its edge.
    fn enclosing_loops(&self, origin: BlockOrigin) -> SmallVec<[ir::Block; 4]> {
        match origin {
            BlockOrigin::Ir(b) => self.cfg.loops[b].clone(),
            BlockOrigin::Edge(from, to) => {
                self.cfg.loops[from].iter().copied().take(self.cfg.common_loop_depth(from, to)).collect()
            }
            BlockOrigin::Entry => SmallVec::new(),
        }
    }

    fn emit(&mut self, inst: MInst) {
        self.blocks[self.cur.index()].insts.push(inst);
    }

    fn new_vreg(&mut self, class: RegClass) -> Reg {
        let v = VReg::new(self.num_vregs, class);
        self.num_vregs += 1;
        Reg::Virt(v)
    }

    fn new_int(&mut self) -> Reg {
        self.new_vreg(RegClass::Int)
    }

    fn new_float(&mut self) -> Reg {
        self.new_vreg(RegClass::Float)
    }

    /// Records the register holding the result of an instruction.
    fn bind(&mut self, v: Value, r: Reg) -> Result<(), BackendError> {
        if self.value_regs.insert(v, r).is_some() {
            return Err(BackendError::Internal(format!(
                "{}: {v} used before its definition was selected",
                self.func.name
            )));
        }
        Ok(())
    }

    // ----- entry and parameters -----------------------------------------------------------

    fn lower_params(&mut self) -> Result<(), BackendError> {
        let func = self.func;
        let types: Vec<Type> = func.params.iter().map(|&p| func.value_type(p)).collect();
        let (locs, _) = abi::fixed_args(&types);
        let mut defs = Vec::new();
        for (&p, loc) in func.params.iter().zip(locs) {
            if !func.has_uses(p) {
                continue;
            }
            match loc {
                abi::ArgLoc::Reg(preg) => {
                    let r = self.new_vreg(class_of(func.value_type(p)));
                    self.bind(p, r)?;
                    defs.push((r, preg));
                }
                // Loaded where used (see `Mat::Incoming`).
                abi::ArgLoc::Stack(off) => {
                    self.stack_params.insert(p, off);
                }
            }
        }
        self.emit(MInst::Args { defs });
        Ok(())
    }

    fn lower_fresh_entry(&mut self) -> Result<(), BackendError> {
        self.cur = Block::new(0);
        self.dom_chain = vec![Block::new(0)];
        self.hoist_ctx = SmallVec::new();
        self.lower_params()?;
        self.term_start[0] = self.blocks[0].insts.len();
        let entry = self.cfg.order[0];
        let args = self.phi_args(None, entry)?;
        let target = self.mblock_of[&entry];
        self.emit(MInst::Jump { target });
        self.blocks[0].succs.push(target);
        self.blocks[0].branch_args.push(args);
        Ok(())
    }

    // ----- blocks and terminators ---------------------------------------------------------

    /// The dominator chain of IR block `b` as machine blocks, starting with `first`.
    fn set_dom_chain(&mut self, first: Option<Block>, b: ir::Block) {
        self.dom_chain.clear();
        self.dom_chain.extend(first);
        let mut cur = Some(b);
        while let Some(x) = cur {
            self.dom_chain.push(self.mblock_of[&x]);
            cur = self.cfg.idom[x];
        }
        if self.fresh_entry {
            self.dom_chain.push(Block::new(0));
        }
    }

    fn lower_block(&mut self, b: ir::Block) -> Result<(), BackendError> {
        self.cur = self.mblock_of[&b];
        self.set_dom_chain(None, b);
        self.hoist_ctx =
            if self.opts.enabled(BackendStage::ConstHoist) { self.cfg.hoist[b].clone() } else { SmallVec::new() };
        if b == self.cfg.order[0] && !self.fresh_entry {
            self.lower_params()?;
        }
        let insts: Vec<ir::Inst> = self.func.block_insts(b).collect();
        for inst in insts {
            let op = self.func.opcode(inst);
            if op.is_terminator() {
                self.lower_terminator(b, inst)?;
                break;
            }
            if op == Opcode::Phi || self.fold.skipped[inst] {
                continue;
            }
            self.lower_inst(inst)?;
        }
        Ok(())
    }

    fn lower_terminator(&mut self, b: ir::Block, inst: ir::Inst) -> Result<(), BackendError> {
        let func = self.func;
        let cur = self.cur;
        self.term_start[cur.index()] = self.blocks[cur.index()].insts.len();
        match func.opcode(inst) {
            Opcode::Ret => {
                let val = match func.args(inst).first() {
                    Some(&v) => {
                        let r = self.value_reg(v)?;
                        Some((r, super::mir::result_reg(r.class())))
                    }
                    None => None,
                };
                self.emit(MInst::Ret { val });
            }
            // Falling into `unreachable` is undefined behaviour; returning (with whatever
            // is in r0/s0) is the most forgiving choice.
            Opcode::Unreachable => self.emit(MInst::Ret { val: None }),
            Opcode::Jump | Opcode::Br => {
                let succs = self.cfg.succs[b].clone();
                if succs.len() == 1 {
                    let s = succs[0];
                    let args = self.phi_args(Some(b), s)?;
                    let target = self.mblock_of[&s];
                    self.emit(MInst::Jump { target });
                    self.blocks[cur.index()].succs.push(target);
                    self.blocks[cur.index()].branch_args.push(args);
                } else {
                    let cc = self.cond(func.args(inst)[0])?;
                    let mut targets = [Block::new(0); 2];
                    for (slot, &s) in succs.iter().enumerate() {
                        targets[slot] = match self.edge_blocks.get(&(b, slot)) {
                            Some(&e) => e,
                            None => self.mblock_of[&s],
                        };
                    }
                    self.emit(MInst::CondBr { cc, taken: targets[0], not_taken: targets[1] });
                    self.blocks[cur.index()].succs.extend(targets);
                    self.blocks[cur.index()].branch_args.extend([Vec::new(), Vec::new()]);
                    for (slot, &s) in succs.iter().enumerate() {
                        if let Some(&e) = self.edge_blocks.get(&(b, slot)) {
                            self.lower_edge(e, b, s)?;
                        }
                    }
                    self.cur = cur;
                    self.set_dom_chain(None, b);
                }
            }
            op => {
                return Err(BackendError::InvalidIr(format!("{}: unexpected terminator {}", func.name, op.mnemonic())));
            }
        }
        Ok(())
    }

    fn lower_edge(&mut self, e: Block, from: ir::Block, to: ir::Block) -> Result<(), BackendError> {
        self.cur = e;
        self.set_dom_chain(Some(e), from);
        self.term_start[e.index()] = 0;
        let args = self.phi_args(Some(from), to)?;
        let target = self.mblock_of[&to];
        self.emit(MInst::Jump { target });
        self.blocks[e.index()].succs.push(target);
        self.blocks[e.index()].branch_args.push(args);
        Ok(())
    }

    /// The registers passed to the phis of `to` along the edge from `from` (`None`: from the
    /// synthetic entry, where the phis are undefined).
    fn phi_args(&mut self, from: Option<ir::Block>, to: ir::Block) -> Result<Vec<VReg>, BackendError> {
        let func = self.func;
        let phis: Vec<ir::Inst> = func.block_phis(to).collect();
        let mut args = Vec::with_capacity(phis.len());
        for phi in phis {
            let ty = func.inst(phi).ty;
            let v = match from {
                Some(p) => func.inst(phi).phi_incoming().find(|&(b, _)| b == p).map(|(_, v)| v).ok_or_else(|| {
                    BackendError::InvalidIr(format!("{}: phi in {to} has no value for predecessor {p}", func.name))
                })?,
                None => {
                    let r = self.materialise(if ty == Type::F32 { Mat::Float(0) } else { Mat::Int(0) });
                    args.push(vreg(r));
                    continue;
                }
            };
            // A one-instruction constant passed along an edge costs the same as the copy the
            // edge needs anyway: build it here rather than keeping a hoisted register alive.
            let saved = self.hoist_ctx.clone();
            if let Some(c) = func.as_const(v)
                && is_cheap(match c {
                    Const::Int(i) => Mat::Int(i),
                    Const::Bool(b) => Mat::Int(i32::from(b)),
                    Const::Float(bits) => Mat::Float(bits),
                })
            {
                self.hoist_ctx.clear();
            }
            let r = self.value_reg(v);
            self.hoist_ctx = saved;
            args.push(vreg(r?));
        }
        Ok(args)
    }

    // ----- values -------------------------------------------------------------------------

    /// A register holding `v` at the current point.
    fn value_reg(&mut self, v: Value) -> Result<Reg, BackendError> {
        if let Some(&r) = self.value_regs.get(&v) {
            return Ok(r);
        }
        if let Some(&a) = self.fold.allocas.get(&v) {
            return Ok(self.materialise(Mat::Frame(a, 0)));
        }
        if let Some(&off) = self.stack_params.get(&v) {
            return Ok(self.materialise(Mat::Incoming(off, self.func.value_type(v) == Type::F32)));
        }
        let func = self.func;
        match func.value_def(v) {
            ValueDef::Const(Const::Int(c)) => Ok(self.materialise(Mat::Int(c))),
            ValueDef::Const(Const::Bool(b)) => Ok(self.materialise(Mat::Int(i32::from(b)))),
            ValueDef::Const(Const::Float(bits)) => Ok(self.materialise(Mat::Float(bits))),
            ValueDef::Global(g) => Ok(self.materialise(Mat::Global(g, 0))),
            ValueDef::Undef => {
                Ok(self.materialise(if func.value_type(v) == Type::F32 { Mat::Float(0) } else { Mat::Int(0) }))
            }
            // A folded instruction whose value is needed after all: folding only ever skips
            // pure instructions, and their operands dominate every use of their result, so
            // computing them right here is correct (if redundant).
            ValueDef::Inst(i) if self.fold.skipped[i] => match func.opcode(i) {
                Opcode::Gep { .. } => {
                    let e = self.fold.addr_expr(func, v);
                    self.addr_expr_reg(e)
                }
                Opcode::Mul => self.lower_mul(func.args(i)[0], func.args(i)[1]),
                Opcode::SRem => self.lower_div(i, true),
                Opcode::FMul => {
                    let sn = self.value_reg(func.args(i)[0])?;
                    let sm = self.value_reg(func.args(i)[1])?;
                    let sd = self.new_float();
                    self.emit(MInst::VArith { op: super::mir::VOp::Mul, sd, sn, sm });
                    Ok(sd)
                }
                Opcode::Icmp(_) | Opcode::Fcmp(_) => {
                    let cc = self.compare(i)?;
                    let rd = self.new_int();
                    self.emit(MInst::SetCond { cc, rd });
                    Ok(rd)
                }
                op => {
                    Err(BackendError::Internal(format!("{}: folded {} is needed as a value", func.name, op.mnemonic())))
                }
            },
            ValueDef::Inst(_) | ValueDef::Param(_) => Err(BackendError::Internal(format!(
                "{}: {v} is used but was never selected (unreachable definition or folded instruction)",
                func.name
            ))),
        }
    }

    /// `Op2::Imm` for encodable integer constants, a register otherwise.
    fn op2_of(&mut self, v: Value) -> Result<Op2, BackendError> {
        if let Some(c) = int_const(self.func, v)
            && is_arm_imm(c as u32)
        {
            return Ok(Op2::Imm(c as u32));
        }
        Ok(Op2::Reg(self.value_reg(v)?))
    }

    /// Builds (or reuses) a register holding `m`, where the current hoisting context says.
    ///
    /// A hoisted value occupies a register through the whole loop nest below its point, and
    /// the allocator cannot rematerialise it: a nest that uses many constants and global
    /// addresses (a `main` with every function inlined) would keep them all live in its
    /// innermost loops and spill there. So each point takes a few values: a value goes to
    /// the outermost point with room, or to the innermost one when none has room (a
    /// one-instruction value is then rebuilt at its use instead). A value already hoisted to
    /// an enclosing point is reused.
    fn materialise(&mut self, m: Mat) -> Reg {
        /// One-instruction values hoisted per point, at most.
        const MAX_CHEAP_HOISTED: usize = 6;
        /// Longer values hoisted per point before the next inner point is used (on
        /// `corpus/bench`, 3 to 6 all beat unlimited by about 1% in cycles and instructions).
        const MAX_WIDE_HOISTED: usize = 4;
        let cheap = is_cheap(m);
        let points: SmallVec<[Block; 4]> = self
            .hoist_ctx
            .iter()
            .map(|h| match *h {
                Hoist::Block(b) => self.mblock_of[&b],
                Hoist::Entry => Block::new(0),
            })
            .collect();
        if let Some(r) = points.iter().find_map(|&p| self.hoist_cache.get(&(p, m)).copied()) {
            return r;
        }
        let has_room = |this: &Self, p: Block| {
            if cheap {
                this.cheap_hoisted[p.index()] < MAX_CHEAP_HOISTED
            } else {
                this.wide_hoisted[p.index()] < MAX_WIDE_HOISTED
            }
        };
        let fallback = if cheap { None } else { points.last().copied() };
        let chosen = points.iter().copied().find(|&p| has_room(self, p)).or(fallback);
        let (target, hoisted) = match chosen {
            Some(p) => {
                let count = if cheap { &mut self.cheap_hoisted } else { &mut self.wide_hoisted };
                count[p.index()] += 1;
                (p, true)
            }
            None => (self.cur, false),
        };
        if !hoisted
            && let Some(r) = self.dom_chain.iter().find_map(|&d| self.local_cache.get(&(d, m)).copied())
        {
            // Built earlier in this block or in a dominating one.
            return r;
        }
        if !hoisted
            && cheap
            && let Some(&(b, at, r)) = self.recent_cheap.get(&m)
        {
            let insts = &self.blocks[self.cur.index()].insts;
            if b == self.cur
                && insts.len() - at <= CHEAP_REUSE_WINDOW
                && !insts[at..].iter().any(|i| matches!(i, MInst::Call { .. }))
            {
                return r;
            }
        }
        let mut insts = Vec::new();
        let r = match m {
            Mat::Int(c) => {
                let rd = self.new_int();
                insts.push(MInst::LoadImm { rd, value: c as u32 });
                rd
            }
            Mat::Float(bits) => {
                let sd = self.new_float();
                match vfp_imm(f32::from_bits(bits)) {
                    Some(imm) => insts.push(MInst::VMovImm { sd, imm }),
                    None => {
                        // Built right here: the two instructions must land in the same place.
                        let rn = self.new_int();
                        insts.push(MInst::LoadImm { rd: rn, value: bits });
                        insts.push(MInst::VMovFromCore { sd, rn });
                    }
                }
                sd
            }
            Mat::Global(g, off) => {
                let rd = self.new_int();
                let base = self.syms.globals[g].clone();
                let sym = if off == 0 { base } else { format!("{base}{off:+}") };
                insts.push(MInst::LoadSym { rd, sym });
                rd
            }
            Mat::Str(s) => {
                let rd = self.new_int();
                insts.push(MInst::LoadSym { rd, sym: super::string_label(s) });
                rd
            }
            Mat::Frame(a, off) => {
                let rd = self.new_int();
                insts.push(MInst::FrameAddr { rd, obj: FrameObj::Alloca(a), off });
                rd
            }
            Mat::Incoming(off, is_float) => {
                let addr = super::mir::Addr::Frame { obj: FrameObj::Incoming(off), off: 0 };
                if is_float {
                    let sd = self.new_float();
                    insts.push(MInst::Vldr { sd, addr });
                    sd
                } else {
                    let rd = self.new_int();
                    insts.push(MInst::Ldr { rd, addr });
                    rd
                }
            }
        };
        if hoisted {
            self.hoisted[target.index()].extend(insts);
            self.hoist_cache.insert((target, m), r);
        } else {
            let at = self.blocks[target.index()].insts.len();
            self.blocks[target.index()].insts.extend(insts);
            if cheap {
                self.recent_cheap.insert(m, (target, at, r));
            } else {
                self.local_cache.insert((target, m), r);
            }
        }
        r
    }

    /// The address of global `g` plus `off`. The offset rides on the `movw`/`movt`
    /// relocations when it fits their signed 16-bit addend (ELF REL relocations keep the
    /// addend in the instruction), else it is added separately.
    fn global_addr(&mut self, g: GlobalRef, off: i32) -> Reg {
        if i16::try_from(off).is_ok() {
            self.materialise(Mat::Global(g, off))
        } else {
            let base = self.materialise(Mat::Global(g, 0));
            self.add_imm(base, off)
        }
    }

    /// `rn + c` in a register.
    fn add_imm(&mut self, rn: Reg, c: i32) -> Reg {
        if c == 0 {
            return rn;
        }
        let rd = self.new_int();
        let (op, op2) = if is_arm_imm(c as u32) {
            (AluOp::Add, Op2::Imm(c as u32))
        } else if is_arm_imm(c.wrapping_neg() as u32) {
            (AluOp::Sub, Op2::Imm(c.wrapping_neg() as u32))
        } else {
            (AluOp::Add, Op2::Reg(self.materialise(Mat::Int(c))))
        };
        self.emit(MInst::Alu { op, rd, rn, op2 });
        rd
    }
}

/// Checks operand counts and result presence, which selection relies on when it indexes
/// operands (the IR verifier guarantees them; this turns a broken invariant into an error).
fn check_shapes(func: &Function) -> Result<(), BackendError> {
    for &b in func.layout() {
        for inst in func.block_insts(b) {
            let data = func.inst(inst);
            let (args, targets) = (data.args.len(), data.targets.len());
            let ok = match data.op {
                Opcode::Add
                | Opcode::Sub
                | Opcode::Mul
                | Opcode::SDiv
                | Opcode::SRem
                | Opcode::FAdd
                | Opcode::FSub
                | Opcode::FMul
                | Opcode::FDiv
                | Opcode::Icmp(_)
                | Opcode::Fcmp(_)
                | Opcode::Store
                | Opcode::Gep { .. } => args == 2,
                Opcode::FNeg
                | Opcode::Zext
                | Opcode::SiToFp
                | Opcode::FpToSi
                | Opcode::Load
                | Opcode::MemZero { .. } => args == 1,
                Opcode::Select => args == 3,
                Opcode::Alloca { .. } | Opcode::Unreachable => args == 0,
                Opcode::Call(_) => true,
                Opcode::Phi => args == targets,
                Opcode::Jump => args == 0 && targets == 1,
                Opcode::Br => args == 1 && targets == 2,
                Opcode::Ret => args <= 1,
            };
            let result_ok = data.ty.is_void() || func.result(inst).is_some();
            if !ok || !result_ok {
                return Err(BackendError::InvalidIr(format!(
                    "{}: malformed {} in {b} ({args} operands, {targets} targets)",
                    func.name,
                    data.op.mnemonic()
                )));
            }
        }
    }
    Ok(())
}

/// A one-instruction value built in place is reused by later uses in its block up to this
/// many instructions further and with no call in between; beyond, it is built again. Rebuilding
/// at every use keeps live ranges short (a value held across a call needs a callee-saved
/// register, one held through a long block competes for registers), but a value used twice
/// within a few instructions (`0.5` in `x*0.5 + 0.25` and the next `y*0.5 - 0.125`) costs one
/// instruction per extra use for a register held a few instructions longer.
const CHEAP_REUSE_WINDOW: usize = 12;

/// Materialised in one instruction.
fn is_cheap(m: Mat) -> bool {
    match m {
        Mat::Int(c) => is_arm_imm(c as u32) || is_arm_imm(!(c as u32)) || (c as u32) <= 0xffff,
        Mat::Float(bits) => vfp_imm(f32::from_bits(bits)).is_some(),
        Mat::Frame(..) | Mat::Incoming(..) => true,
        Mat::Global(..) | Mat::Str(_) => false,
    }
}

/// The integer value of an `i32` or `i1` constant.
fn int_const(func: &Function, v: Value) -> Option<i32> {
    match func.as_const(v)? {
        Const::Int(c) => Some(c),
        Const::Bool(b) => Some(i32::from(b)),
        Const::Float(_) => None,
    }
}

fn vreg(r: Reg) -> VReg {
    match r {
        Reg::Virt(v) => v,
        // Selection only creates virtual registers.
        Reg::Phys(_) => unreachable!("physical register during instruction selection"),
    }
}
