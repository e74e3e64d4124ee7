//! The machine-code verifier: checks allocated code ([`PFunction`]) after register allocation
//! and after every optional stage that rewrites it (`--verify-each`), so that a stage which
//! breaks the code is named at once instead of showing as a wrong answer three stages later.
//!
//! regalloc2's own checker validates the allocation; nothing else checks what
//! `arm-spill-elim`, `arm-copy-prop`, `arm-leaf-regs`, `arm-peephole` and `arm-branch-opt` do
//! to the allocated code. The verifier checks, per function:
//!
//! * **Registers**: every operand is a physical register of the class its role needs (core
//!   for addresses and integer operands, VFP for float operands), one the allocator may hand
//!   out (never `sp` or `pc`; `ip` only when the function allocates it); fixed operands
//!   (arguments, results, call registers) sit in their fixed register and tied definitions
//!   in the register of their input.
//! * **Definitions before uses**: a forward must-analysis over the blocks of which registers
//!   hold a value: nothing at entry but the parameters the entry pseudo-instruction defines;
//!   a call clobbers the caller-saved registers before defining its results. Every read must
//!   find its register defined on every path. This is also the callee-saved discipline: a
//!   value live across a call must be in a register the call preserves, and a callee-saved
//!   register is never read before the function itself wrote it. Copies are not uses: a
//!   register-to-register move, a store to a spill slot and a reload from one carry
//!   definedness along (the slots are tracked like registers), because regalloc2 may save a
//!   register it borrows as the scratch of a cyclic move without knowing whether it holds a
//!   value (seen with `lr`). Whatever was copied is checked where it is really used. A spill
//!   store predicated by `arm-if-convert` defines its slot like a predicated definition.
//! * **Flags**: the same analysis for the condition flags: `cmp`/`cmn`/`tst`/`vcmp` set
//!   them, calls, the zeroing loop and the remainder sequence clobber them, and every
//!   conditional instruction (`b<cc>`, `mov<cc>`, `vmov<cc>`, set-on-condition, and any
//!   instruction predicated by `arm-if-convert`) must find them set on every path. A
//!   predicated definition counts as a definition (its condition is not tracked).
//! * **Stack offsets**: every frame operand names an existing object (alloca area, spill
//!   slot, argument area); accesses to spill slots and to the outgoing argument area stay
//!   inside them.
//! * **Branches**: targets are blocks of the function; `b`, `b<cc>`+`b` and returns end their
//!   block (a fall-through `b<cc>` may only be followed by a `b`); the last block does not
//!   fall off the end of the function.

use std::collections::VecDeque;

use regalloc2::{Block, PReg, PRegSet, RegClass};
use rustc_hash::FxHashSet;
use smallvec::SmallVec;

use super::mir::{Addr, FrameObj, MInst, Op2, OperandVisitor, PFunction, Reg};
use super::regs::{self, IP, PC, SP};

/// How an operand is used, after allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Use,
    Def,
    /// Written at the start, live throughout the instruction.
    Temp,
    /// A definition in the register of use operand `input`.
    Tied(usize),
    FixedUse(PReg),
    FixedDef(PReg),
}

/// The register operands of one instruction with their roles, in [`MInst::visit`] order
/// (inline: most instructions have at most a handful).
type Operands = SmallVec<[(Reg, Role); 6]>;

fn operands(inst: &MInst) -> Operands {
    struct Collect(Operands);
    impl OperandVisitor for Collect {
        fn reg_use(&mut self, r: &mut Reg) {
            self.0.push((*r, Role::Use));
        }
        fn reg_def(&mut self, r: &mut Reg) {
            self.0.push((*r, Role::Def));
        }
        fn reg_temp(&mut self, r: &mut Reg) {
            self.0.push((*r, Role::Temp));
        }
        fn reg_reuse_def(&mut self, r: &mut Reg, input: usize) {
            self.0.push((*r, Role::Tied(input)));
        }
        fn fixed_use(&mut self, r: &mut Reg, p: PReg) {
            self.0.push((*r, Role::FixedUse(p)));
        }
        fn fixed_def(&mut self, r: &mut Reg, p: PReg) {
            self.0.push((*r, Role::FixedDef(p)));
        }
    }
    let mut c = Collect(SmallVec::new());
    inst.visit_ref(&mut c);
    c.0
}

/// The register class each operand of `inst` needs, in [`MInst::visit`] order (fixed
/// operands: the class of their fixed register).
///
/// Inline and filled by pushes: the verifier asks this of every instruction after every
/// stage, and building it from small concatenated vectors allocated several times each.
fn classes(inst: &MInst) -> SmallVec<[RegClass; 6]> {
    let mut out = SmallVec::new();
    push_classes(inst, &mut out);
    out
}

fn push_classes(inst: &MInst, out: &mut SmallVec<[RegClass; 6]>) {
    use RegClass::{Float as F, Int as I};
    fn op2(out: &mut SmallVec<[RegClass; 6]>, o: &Op2) {
        if o.reg().is_some() {
            out.push(I);
        }
    }
    fn addr(out: &mut SmallVec<[RegClass; 6]>, a: &Addr) {
        match a {
            Addr::Imm { .. } => out.push(I),
            Addr::Index { .. } | Addr::PostInc { .. } => out.extend([I, I]),
            Addr::Frame { .. } => {}
        }
    }
    let n = |class: RegClass, count: usize| std::iter::repeat_n(class, count);
    match inst {
        MInst::Args { defs } => out.extend(defs.iter().map(|(_, p)| p.class())),
        MInst::Alu { op2: o, .. } | MInst::AluS { op2: o, .. } | MInst::MovCond { op2: o, .. } => {
            out.push(I);
            op2(out, o);
            out.push(I);
        }
        MInst::Mov { op2: o, .. } => {
            op2(out, o);
            out.push(I);
        }
        MInst::LoadImm { .. } | MInst::LoadSym { .. } | MInst::FrameAddr { .. } | MInst::SetCond { .. } => out.push(I),
        MInst::Mul { .. } | MInst::Smmul { .. } | MInst::Sdiv { .. } => out.extend(n(I, 3)),
        MInst::SRemPow2 { tmp, .. } => out.extend(n(I, 2 + usize::from(tmp.is_some()))),
        MInst::Mla { .. } | MInst::Mls { .. } => out.extend(n(I, 4)),
        MInst::Cmp { op2: o, .. } => {
            out.push(I);
            op2(out, o);
        }
        MInst::Ldr { addr: a, .. } => {
            addr(out, a);
            out.push(I);
        }
        MInst::Str { addr: a, .. } => {
            out.push(I);
            addr(out, a);
        }
        MInst::Vldr { addr: a, .. } => {
            addr(out, a);
            out.push(F);
        }
        MInst::Vstr { addr: a, .. } | MInst::VStrF64 { addr: a, .. } => {
            out.push(F);
            addr(out, a);
        }
        MInst::VArith { .. } | MInst::VMovCond { .. } => out.extend(n(F, 3)),
        MInst::VNeg { .. } | MInst::VMov { .. } | MInst::VCvtF32S32 { .. } | MInst::VCvtS32F32 { .. } => out.extend(n(F, 2)),
        MInst::VMac { .. } => out.extend(n(F, 4)),
        MInst::VMovImm { .. } => out.push(F),
        MInst::VMovFromCore { .. } => out.extend([I, F]),
        MInst::VMovToCore { .. } => out.extend([F, I]),
        MInst::VCmp { sm, .. } => out.extend(n(F, 1 + usize::from(sm.is_some()))),
        MInst::CvtF64Pair { .. } => out.extend([F, I, I]),
        MInst::MemZeroLoop { count, .. } => out.extend(n(I, 3 + usize::from(count.is_some()))),
        MInst::Call { uses, defs, .. } => out.extend(uses.iter().chain(defs.iter()).map(|(_, p)| p.class())),
        MInst::Jump { .. } | MInst::CondBr { .. } | MInst::BranchCond { .. } => {}
        MInst::Ret { val } => out.extend(val.iter().map(|(_, p)| p.class())),
        MInst::Pred { inst, .. } => push_classes(inst, out),
    }
}

fn sets_flags(inst: &MInst) -> bool {
    matches!(inst, MInst::Cmp { .. } | MInst::AluS { .. } | MInst::VCmp { .. })
}

fn reads_flags(inst: &MInst) -> bool {
    inst.flag_condition().is_some()
}

/// Instructions whose expansion changes the flags without producing a comparison result
/// (calls, the zeroing loop's `subs`, the remainder sequence's internal compares).
fn clobbers_flags(inst: &MInst) -> bool {
    match inst {
        MInst::Call { .. } | MInst::MemZeroLoop { count: Some(_), .. } | MInst::SRemPow2 { .. } => true,
        MInst::Pred { inst, .. } => clobbers_flags(inst) || sets_flags(inst),
        _ => false,
    }
}

/// Bytes an access through `addr` by `inst` reads or writes (0 for an address computation).
fn access_width(inst: &MInst) -> u32 {
    match inst {
        MInst::VStrF64 { .. } => 8,
        MInst::FrameAddr { .. } => 0,
        _ => 4,
    }
}

/// The registers and spill slots defined at each block's entry and whether the flags are, as
/// a must-analysis.
#[derive(Clone, PartialEq, Eq)]
struct State {
    defined: PRegSet,
    /// Spill slot `k` is defined when bit `k` is set.
    slots: Vec<u64>,
    flags: bool,
}

/// A move that only copies a value: definedness goes from `from` to `to` (see the module
/// documentation).
enum ValueCopy {
    Reg { from: PReg, to: PReg },
    ToSlot { from: PReg, slot: usize },
    FromSlot { slot: usize, to: PReg },
}

fn copy_of(inst: &MInst) -> Option<ValueCopy> {
    let spill = |a: &Addr| match a {
        Addr::Frame { obj: FrameObj::Spill(k), off: 0 } => Some(*k as usize),
        _ => None,
    };
    match inst {
        MInst::Mov { rd, op2: Op2::Reg(rs) } => Some(ValueCopy::Reg { from: rs.preg()?, to: rd.preg()? }),
        MInst::VMov { sd, sm } => Some(ValueCopy::Reg { from: sm.preg()?, to: sd.preg()? }),
        MInst::Str { rs: r, addr } | MInst::Vstr { ss: r, addr } => {
            Some(ValueCopy::ToSlot { from: r.preg()?, slot: spill(addr)? })
        }
        MInst::Ldr { rd: r, addr } | MInst::Vldr { sd: r, addr } => {
            Some(ValueCopy::FromSlot { slot: spill(addr)?, to: r.preg()? })
        }
        // A spill store that `arm-if-convert` predicated: like a predicated definition, it
        // counts as a store (its condition is not tracked).
        MInst::Pred { inst, .. } => match copy_of(inst)? {
            store @ ValueCopy::ToSlot { .. } => Some(store),
            _ => None,
        },
        _ => None,
    }
}

impl State {
    fn new(defined: PRegSet, slots: usize, slots_defined: bool, flags: bool) -> State {
        let fill = if slots_defined { u64::MAX } else { 0 };
        State { defined, slots: vec![fill; slots.div_ceil(64)], flags }
    }

    /// Meet of two paths (defined on both), in place; returns whether `self` changed.
    /// In place rather than into a new state: the fixpoint meets along every edge it visits.
    fn meet_with(&mut self, other: &State) -> bool {
        let before = (self.defined, self.flags);
        self.defined = self.defined & other.defined;
        self.flags = self.flags && other.flags;
        let mut changed = before != (self.defined, self.flags);
        for (a, b) in self.slots.iter_mut().zip(&other.slots) {
            changed |= *a & b != *a;
            *a &= b;
        }
        changed
    }

    fn slot_defined(&self, k: usize) -> bool {
        self.slots.get(k / 64).is_some_and(|w| w & (1 << (k % 64)) != 0)
    }

    fn set_slot(&mut self, k: usize, defined: bool) {
        if let Some(w) = self.slots.get_mut(k / 64) {
            if defined {
                *w |= 1 << (k % 64);
            } else {
                *w &= !(1 << (k % 64));
            }
        }
    }

    fn set_reg(&mut self, p: PReg, defined: bool) {
        if defined {
            self.defined.add(p);
        } else {
            self.defined.remove(p);
        }
    }

    /// The state after `inst`, whose operands are `ops` (its [`operands`], collected once per
    /// instruction by [`verify`]: collecting them clones the instruction, and the dataflow
    /// fixpoint transfers every instruction several times).
    fn transfer(mut self, inst: &MInst, ops: &[(Reg, Role)], mut problem: impl FnMut(String)) -> State {
        match copy_of(inst) {
            Some(ValueCopy::Reg { from, to }) => {
                let d = self.defined.contains(from);
                self.set_reg(to, d);
                return self;
            }
            Some(ValueCopy::ToSlot { from, slot }) => {
                let d = self.defined.contains(from);
                self.set_slot(slot, d);
                return self;
            }
            Some(ValueCopy::FromSlot { slot, to }) => {
                let d = self.slot_defined(slot);
                self.set_reg(to, d);
                return self;
            }
            None => {}
        }
        for &(r, role) in ops {
            let reads = matches!(role, Role::Use | Role::FixedUse(_));
            if let (true, Some(p)) = (reads, r.preg())
                && !self.defined.contains(p)
            {
                problem(format!("reads {} before any definition reaches it on every path", regs::name(p)));
            }
        }
        if reads_flags(inst) && !self.flags {
            problem("reads the condition flags, which no comparison sets on every path to it".into());
        }
        if clobbers_flags(inst) {
            self.flags = false;
        }
        if sets_flags(inst) {
            self.flags = true;
        }
        self.defined = self.defined & inst.clobbers().invert();
        for &(r, role) in ops {
            if !matches!(role, Role::Use | Role::FixedUse(_))
                && let Some(p) = r.preg()
            {
                self.defined.add(p);
            }
        }
        self
    }
}

/// Checks `pf` (see the module documentation); `ip_allocatable` says whether the function
/// was allocated with `ip` available. Returns every problem found, one line each, naming the
/// block and instruction.
pub fn verify(pf: &PFunction, ip_allocatable: bool) -> Result<(), Vec<String>> {
    let mut problems = Vec::new();
    let labels: FxHashSet<Block> = pf.blocks.iter().map(|(b, _)| *b).collect();
    let ops: Vec<Vec<Operands>> = pf.blocks.iter().map(|(_, block)| block.insts.iter().map(operands).collect()).collect();
    for (pos, (label, block)) in pf.blocks.iter().enumerate() {
        for (i, inst) in block.insts.iter().enumerate() {
            let mut problem = |m: String| problems.push(format!("block {} (#{pos}) instruction {i} `{inst:?}`: {m}", label.index()));
            check_registers(inst, &ops[pos][i], ip_allocatable, &mut problem);
            check_frame(pf, inst, &mut problem);
            check_branch(inst, i, &block.insts, &labels, &mut problem);
        }
    }
    if pf.blocks.last().is_some_and(|(_, b)| falls_through(&b.insts)) {
        problems.push("the last block falls off the end of the function".into());
    }
    check_dataflow(pf, &ops, &mut problems);
    if problems.is_empty() { Ok(()) } else { Err(problems) }
}

fn falls_through(insts: &[MInst]) -> bool {
    !matches!(insts.last(), Some(MInst::Jump { .. } | MInst::CondBr { .. } | MInst::Ret { .. }))
}

fn check_registers(inst: &MInst, ops: &[(Reg, Role)], ip_allocatable: bool, problem: &mut impl FnMut(String)) {
    let want = classes(inst);
    if ops.len() != want.len() {
        problem(format!("{} register operands, the instruction has {}", ops.len(), want.len()));
        return;
    }
    for (n, (&(r, role), &class)) in ops.iter().zip(&want).enumerate() {
        let Some(p) = r.preg() else {
            problem(format!("operand {n} is still a virtual register"));
            continue;
        };
        if p.class() != class {
            problem(format!("operand {n} is {}, a {:?} register where a {class:?} one is needed", regs::name(p), p.class()));
        }
        let enc = p.hw_enc() as u8;
        let forbidden = match p.class() {
            RegClass::Int => enc == SP || enc == PC || (enc == IP && !ip_allocatable),
            RegClass::Float | RegClass::Vector => enc >= 32,
        };
        if forbidden {
            problem(format!("operand {n} uses the reserved register {}", regs::name(p)));
        }
        match role {
            Role::FixedUse(f) | Role::FixedDef(f) if p != f => {
                problem(format!("operand {n} must be in {} but is in {}", regs::name(f), regs::name(p)));
            }
            Role::Tied(input) => {
                if let Some(&(tied, _)) = ops.get(input)
                    && tied != r
                {
                    problem(format!("operand {n} must share the register of operand {input}"));
                }
            }
            _ => {}
        }
    }
}

fn check_frame(pf: &PFunction, inst: &MInst, problem: &mut impl FnMut(String)) {
    let (obj, off) = match inst {
        MInst::FrameAddr { obj, off, .. } => (*obj, *off),
        MInst::Ldr { addr: Addr::Frame { obj, off }, .. }
        | MInst::Str { addr: Addr::Frame { obj, off }, .. }
        | MInst::Vldr { addr: Addr::Frame { obj, off }, .. }
        | MInst::Vstr { addr: Addr::Frame { obj, off }, .. }
        | MInst::VStrF64 { addr: Addr::Frame { obj, off }, .. } => (*obj, *off),
        _ => return,
    };
    let (width, off) = (i64::from(access_width(inst)), i64::from(off));
    // The bounds that hold for every access: the compiler's own slots are used whole. An
    // alloca may be addressed anywhere (array arithmetic, or a constant index on a path the
    // program never takes), so only its existence is checked.
    let bounds = match obj {
        FrameObj::Alloca(n) => pf.frame.allocas.get(n as usize).map(|_| None),
        FrameObj::Spill(n) => (n < pf.num_spill_slots).then_some(Some(4)),
        FrameObj::Outgoing(base) => Some(Some(i64::from(pf.frame.outgoing) - i64::from(base))),
        FrameObj::Incoming(base) => (base % 4 == 0).then_some(None),
    };
    match bounds {
        None => problem(format!("names the stack object {obj:?}, which the frame does not have")),
        Some(Some(size)) if width > 0 && (off < 0 || off + width > size) => {
            problem(format!("accesses bytes {off}..{} of the stack object {obj:?} of {size} bytes", off + width));
        }
        Some(_) => {}
    }
}

fn check_branch(inst: &MInst, i: usize, insts: &[MInst], labels: &FxHashSet<Block>, problem: &mut impl FnMut(String)) {
    let mut targets = Vec::new();
    match inst {
        MInst::Jump { target } | MInst::BranchCond { target, .. } => targets.push(*target),
        MInst::CondBr { taken, not_taken, .. } => targets.extend([*taken, *not_taken]),
        _ => {}
    }
    for t in targets {
        if !labels.contains(&t) {
            problem(format!("branches to block {}, which the function does not have", t.index()));
        }
    }
    let last = i + 1 == insts.len();
    let ends_block = matches!(inst, MInst::Jump { .. } | MInst::CondBr { .. } | MInst::Ret { .. });
    if ends_block && !last {
        problem("ends the block but is followed by more instructions".into());
    }
    if matches!(inst, MInst::BranchCond { .. }) && !last && !(i + 2 == insts.len() && matches!(insts[i + 1], MInst::Jump { .. })) {
        problem("a fall-through conditional branch may only be followed by a jump".into());
    }
}

/// Definitions before uses and flags before their readers (see the module documentation);
/// `ops` holds the [`operands`] of every instruction, by block position.
fn check_dataflow(pf: &PFunction, ops: &[Vec<Operands>], problems: &mut Vec<String>) {
    let n = pf.blocks.len();
    if n == 0 {
        return;
    }
    let succs = pf.successor_positions();
    let slots = pf.num_spill_slots as usize;
    let top = State::new(PRegSet::empty().invert(), slots, true, true);
    let mut entry = vec![top; n];
    entry[0] = State::new(PRegSet::empty(), slots, false, false);
    let ignore = |_: String| {};
    // A worklist of blocks whose entry state changed (all of them at first), instead of
    // sweeping every block until a sweep changes nothing: the transfer functions and the
    // meet are monotone, so any such iteration from these initial states reaches the same
    // (greatest) fixpoint, and this one transfers each block only when its input moved.
    let mut work: VecDeque<usize> = (0..n).collect();
    let mut queued = vec![true; n];
    while let Some(i) = work.pop_front() {
        queued[i] = false;
        let insts = pf.blocks[i].1.insts.iter().zip(&ops[i]);
        let out = insts.fold(entry[i].clone(), |s, (inst, ops)| s.transfer(inst, ops, ignore));
        for &s in &succs[i] {
            let s = s as usize;
            if s != 0 && entry[s].meet_with(&out) {
                if !std::mem::replace(&mut queued[s], true) {
                    work.push_back(s);
                }
            }
        }
    }
    // The entry block may also be a branch target (a loop back to it): then nothing is
    // known there beyond what the entry state says, which is already the minimum.
    for (pos, (label, block)) in pf.blocks.iter().enumerate() {
        let mut state = entry[pos].clone();
        for (i, (inst, ops)) in block.insts.iter().zip(&ops[pos]).enumerate() {
            state = state.transfer(inst, ops, |m| {
                problems.push(format!("block {} (#{pos}) instruction {i} `{inst:?}`: {m}", label.index()))
            });
        }
    }
}
