//! Register allocation with `regalloc2` (the Ion backtracking allocator).
//!
//! The machine function is flattened into one instruction array with per-block ranges, the
//! operands of every instruction are collected once through [`MInst::visit`], and the
//! allocator's [`regalloc2::Function`] view is served from those arrays. Its result is
//! applied by visiting every instruction again in the same operand order, replacing each
//! virtual register by its allocated physical register, and by turning the allocator's
//! edits (moves between registers and spill slots, already sequenced as parallel moves)
//! into `mov`/`vmov`/`ldr`/`str`/`vldr`/`vstr` instructions at their program points.
//!
//! All instruction operands are register-constrained, so allocations of operands are always
//! registers; only the allocator's own moves touch spill slots. In debug builds the SSA
//! validator and `regalloc2`'s checker run on every function.

use regalloc2::{
    Algorithm, Allocation, Block, Edit, Function, Inst, InstRange, MachineEnv, Operand, OperandConstraint,
    OperandKind, OperandPos, Output, PReg, PRegSet, ProgPoint, RegClass, RegallocOptions, VReg,
};

use super::BackendError;
use super::mir::{Addr, BlockOrigin, FrameObj, MFunction, MInst, Op2, OperandVisitor, PBlock, PFunction, Reg};
use super::regs;

struct RaFunc {
    insts: Vec<MInst>,
    ranges: Vec<(usize, usize)>,
    operands: Vec<Operand>,
    operand_ranges: Vec<(usize, usize)>,
    clobbers: Vec<PRegSet>,
    succs: Vec<Vec<Block>>,
    preds: Vec<Vec<Block>>,
    params: Vec<Vec<VReg>>,
    branch_args: Vec<Vec<Vec<VReg>>>,
    origins: Vec<BlockOrigin>,
    layout: Vec<u32>,
    num_vregs: usize,
}

impl Function for RaFunc {
    fn num_insts(&self) -> usize {
        self.insts.len()
    }
    fn num_blocks(&self) -> usize {
        self.ranges.len()
    }
    fn entry_block(&self) -> Block {
        Block::new(0)
    }
    fn block_insns(&self, block: Block) -> InstRange {
        let (a, b) = self.ranges[block.index()];
        InstRange::new(Inst::new(a), Inst::new(b))
    }
    fn block_succs(&self, block: Block) -> &[Block] {
        &self.succs[block.index()]
    }
    fn block_preds(&self, block: Block) -> &[Block] {
        &self.preds[block.index()]
    }
    fn block_params(&self, block: Block) -> &[VReg] {
        &self.params[block.index()]
    }
    fn is_ret(&self, insn: Inst) -> bool {
        matches!(self.insts[insn.index()], MInst::Ret { .. })
    }
    fn is_branch(&self, insn: Inst) -> bool {
        self.insts[insn.index()].is_branch()
    }
    fn branch_blockparams(&self, block: Block, _insn: Inst, succ_idx: usize) -> &[VReg] {
        &self.branch_args[block.index()][succ_idx]
    }
    fn inst_operands(&self, insn: Inst) -> &[Operand] {
        let (a, b) = self.operand_ranges[insn.index()];
        &self.operands[a..b]
    }
    fn inst_clobbers(&self, insn: Inst) -> PRegSet {
        self.clobbers[insn.index()]
    }
    fn num_vregs(&self) -> usize {
        self.num_vregs
    }
    fn spillslot_size(&self, _regclass: RegClass) -> usize {
        1
    }
}

/// Collects operands; records an error for a physical register (selection emits none).
struct Collector<'a> {
    ops: &'a mut Vec<Operand>,
    error: bool,
}

impl Collector<'_> {
    fn vreg(&mut self, r: &Reg) -> Option<VReg> {
        match *r {
            Reg::Virt(v) => Some(v),
            Reg::Phys(_) => {
                self.error = true;
                None
            }
        }
    }
}

impl OperandVisitor for Collector<'_> {
    fn reg_use(&mut self, r: &mut Reg) {
        if let Some(v) = self.vreg(r) {
            self.ops.push(Operand::reg_use(v));
        }
    }
    fn reg_use_late(&mut self, r: &mut Reg) {
        if let Some(v) = self.vreg(r) {
            self.ops.push(Operand::new(v, OperandConstraint::Reg, OperandKind::Use, OperandPos::Late));
        }
    }
    fn reg_def(&mut self, r: &mut Reg) {
        if let Some(v) = self.vreg(r) {
            self.ops.push(Operand::reg_def(v));
        }
    }
    fn reg_temp(&mut self, r: &mut Reg) {
        if let Some(v) = self.vreg(r) {
            self.ops.push(Operand::reg_temp(v));
        }
    }
    fn reg_reuse_def(&mut self, r: &mut Reg, input: usize) {
        if let Some(v) = self.vreg(r) {
            self.ops.push(Operand::reg_reuse_def(v, input));
        }
    }
    fn fixed_use(&mut self, r: &mut Reg, p: PReg) {
        if let Some(v) = self.vreg(r) {
            self.ops.push(Operand::reg_fixed_use(v, p));
        }
    }
    fn fixed_def(&mut self, r: &mut Reg, p: PReg) {
        if let Some(v) = self.vreg(r) {
            self.ops.push(Operand::reg_fixed_def(v, p));
        }
    }
}

/// Writes allocations back in operand order.
struct Applier<'a> {
    allocs: &'a [Allocation],
    next: usize,
    error: bool,
}

impl Applier<'_> {
    fn apply(&mut self, r: &mut Reg) {
        match self.allocs.get(self.next).and_then(|a| a.as_reg()) {
            Some(p) => *r = Reg::Phys(p),
            None => self.error = true,
        }
        self.next += 1;
    }
}

impl OperandVisitor for Applier<'_> {
    fn reg_use(&mut self, r: &mut Reg) {
        self.apply(r)
    }
    fn reg_def(&mut self, r: &mut Reg) {
        self.apply(r)
    }
    fn reg_temp(&mut self, r: &mut Reg) {
        self.apply(r)
    }
    fn reg_reuse_def(&mut self, r: &mut Reg, _input: usize) {
        self.apply(r)
    }
    fn fixed_use(&mut self, r: &mut Reg, _p: PReg) {
        self.apply(r)
    }
    fn fixed_def(&mut self, r: &mut Reg, _p: PReg) {
        self.apply(r)
    }
}

fn internal(sym: &str, what: impl std::fmt::Display) -> BackendError {
    BackendError::Internal(format!("{sym}: {what}"))
}

/// Allocates registers for `mf` and returns the function over physical registers.
pub fn allocate(mf: MFunction, ip_allocatable: bool) -> Result<PFunction, BackendError> {
    let sym = mf.sym.clone();
    // Sized from the function (one entry per block or per instruction) rather than grown.
    let (num_blocks, num_insts) = (mf.blocks.len(), mf.blocks.iter().map(|b| b.insts.len()).sum());
    let mut f = RaFunc {
        insts: Vec::with_capacity(num_insts),
        ranges: Vec::with_capacity(num_blocks),
        operands: Vec::new(),
        operand_ranges: Vec::with_capacity(num_insts),
        clobbers: Vec::with_capacity(num_insts),
        succs: Vec::with_capacity(num_blocks),
        preds: Vec::with_capacity(num_blocks),
        params: Vec::with_capacity(num_blocks),
        branch_args: Vec::with_capacity(num_blocks),
        origins: Vec::with_capacity(num_blocks),
        layout: Vec::with_capacity(num_blocks),
        num_vregs: mf.num_vregs,
    };
    for b in mf.blocks {
        let start = f.insts.len();
        f.insts.extend(b.insts);
        f.ranges.push((start, f.insts.len()));
        f.succs.push(b.succs.into_vec());
        f.preds.push(b.preds.into_vec());
        f.params.push(b.params);
        f.branch_args.push(b.branch_args.into_vec());
        f.origins.push(b.origin);
        f.layout.push(b.layout);
    }
    for inst in &mut f.insts {
        let start = f.operands.len();
        let mut c = Collector { ops: &mut f.operands, error: false };
        inst.visit(&mut c);
        if c.error {
            return Err(internal(&sym, "physical register before allocation"));
        }
        f.operand_ranges.push((start, f.operands.len()));
        f.clobbers.push(inst.clobbers());
    }

    let env: MachineEnv = regs::machine_env(ip_allocatable);
    let options =
        RegallocOptions { verbose_log: false, validate_ssa: cfg!(debug_assertions), algorithm: Algorithm::Ion };
    let output = regalloc2::run(&f, &env, &options)
        .map_err(|e| BackendError::RegAlloc { func: sym.clone(), err: e.to_string() })?;
    if cfg!(debug_assertions) {
        let mut checker = regalloc2::checker::Checker::new(&f, &env);
        checker.prepare(&output);
        checker.run().map_err(|e| internal(&sym, format!("regalloc2 checker: {e:?}")))?;
    }
    rewrite(f, &output, sym, mf.frame)
}

fn rewrite(
    mut f: RaFunc,
    output: &Output,
    sym: String,
    frame: super::mir::FrameRequest,
) -> Result<PFunction, BackendError> {
    for (i, inst) in f.insts.iter_mut().enumerate() {
        let mut a = Applier { allocs: output.inst_allocs(Inst::new(i)), next: 0, error: false };
        inst.visit(&mut a);
        if a.error || a.next != a.allocs.len() {
            return Err(internal(&sym, format!("allocation mismatch at instruction {i}")));
        }
    }
    let mut edits = output.edits.iter().peekable();
    let mut insts = f.insts.into_iter();
    let mut blocks = Vec::with_capacity(f.ranges.len());
    for (bi, &(start, end)) in f.ranges.iter().enumerate() {
        let mut out = Vec::with_capacity(end - start);
        for i in start..end {
            let inst = insts.next().ok_or_else(|| internal(&sym, "instruction stream ended early"))?;
            while let Some((_, edit)) = edits.next_if(|(pt, _)| *pt <= ProgPoint::before(Inst::new(i))) {
                push_move(&mut out, edit, &sym)?;
            }
            out.push(inst);
            while let Some((_, edit)) = edits.next_if(|(pt, _)| *pt == ProgPoint::after(Inst::new(i))) {
                push_move(&mut out, edit, &sym)?;
            }
        }
        blocks.push((Block::new(bi), PBlock { insts: out, origin: f.origins[bi] }));
    }
    // Emission follows the layout order, the entry block first.
    blocks.sort_by_key(|(b, _)| (b.index() != 0, f.layout[b.index()]));
    Ok(PFunction { sym, blocks, frame, num_spill_slots: output.num_spillslots as u32 })
}

fn push_move(out: &mut Vec<MInst>, edit: &Edit, sym: &str) -> Result<(), BackendError> {
    let Edit::Move { from, to } = *edit;
    if from == to {
        return Ok(());
    }
    let slot = |a: Allocation| a.as_stack().map(|s| Addr::Frame { obj: FrameObj::Spill(s.index() as u32), off: 0 });
    let inst = match (from.as_reg(), to.as_reg()) {
        (Some(src), Some(dst)) => match dst.class() {
            RegClass::Int => MInst::Mov { rd: Reg::Phys(dst), op2: Op2::Reg(Reg::Phys(src)) },
            _ => MInst::VMov { sd: Reg::Phys(dst), sm: Reg::Phys(src) },
        },
        (Some(src), None) => {
            let addr = slot(to).ok_or_else(|| internal(sym, "move to nowhere"))?;
            match src.class() {
                RegClass::Int => MInst::Str { rs: Reg::Phys(src), addr },
                _ => MInst::Vstr { ss: Reg::Phys(src), addr },
            }
        }
        (None, Some(dst)) => {
            let addr = slot(from).ok_or_else(|| internal(sym, "move from nowhere"))?;
            match dst.class() {
                RegClass::Int => MInst::Ldr { rd: Reg::Phys(dst), addr },
                _ => MInst::Vldr { sd: Reg::Phys(dst), addr },
            }
        }
        (None, None) => return Err(internal(sym, "stack-to-stack move")),
    };
    out.push(inst);
    Ok(())
}
