//! The machine IR: ARM instructions over virtual or physical registers.
//!
//! Instruction selection produces an [`MFunction`] whose registers are virtual
//! ([`Reg::Virt`], in SSA form: one definition each; values flowing into a block arrive as
//! block parameters, see [`MBlockData`]). Register allocation rewrites every register into a
//! physical one ([`Reg::Phys`]) and inserts moves, spills and reloads as ordinary
//! instructions, so the later stages (frame layout, peephole, emission) work on the same
//! instruction type.
//!
//! Each instruction reports its register operands through [`MInst::visit`], in a fixed
//! order, together with the constraint the allocator must honour (plain use/def, a temporary
//! live throughout the instruction, a definition tied to an input, a fixed register of the
//! calling convention). The allocator interface collects operands with a visitor and later
//! writes the allocations back with another visitor walking the same order.
//!
//! Addresses of stack objects ([`FrameObj`]) stay symbolic until the frame is laid out
//! after allocation (the number of spill slots is known only then).
//!
//! Flags: a flag-setting instruction (`cmp`, `cmn`, `tst`, `vcmp`+`vmrs`) is always placed right
//! before its consumers (`b<cc>`, `mov<cc>`, `vmov<cc>`, [`MInst::SetCond`]); the allocator
//! only inserts moves, loads and stores, none of which touch the flags.

use regalloc2::{Block, PReg, PRegSet, RegClass, VReg};
use smallvec::SmallVec;

use super::regs;

/// Up to this many 64-byte blocks, [`MInst::MemZeroLoop`] is fully unrolled.
pub const MEMZERO_UNROLLED_BLOCKS: u32 = 2;

/// A register operand: virtual before allocation, physical after.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reg {
    Virt(VReg),
    Phys(PReg),
}

impl Reg {
    pub fn class(self) -> RegClass {
        match self {
            Reg::Virt(v) => v.class(),
            Reg::Phys(p) => p.class(),
        }
    }

    /// The physical register (after allocation).
    pub fn preg(self) -> Option<PReg> {
        match self {
            Reg::Phys(p) => Some(p),
            Reg::Virt(_) => None,
        }
    }
}

/// ARM condition codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cond {
    Eq,
    Ne,
    Hs,
    Lo,
    Mi,
    Pl,
    Vs,
    Vc,
    Hi,
    Ls,
    Ge,
    Lt,
    Gt,
    Le,
}

impl Cond {
    /// The condition that holds exactly when `self` does not (on any flags).
    pub fn invert(self) -> Cond {
        match self {
            Cond::Eq => Cond::Ne,
            Cond::Ne => Cond::Eq,
            Cond::Hs => Cond::Lo,
            Cond::Lo => Cond::Hs,
            Cond::Mi => Cond::Pl,
            Cond::Pl => Cond::Mi,
            Cond::Vs => Cond::Vc,
            Cond::Vc => Cond::Vs,
            Cond::Hi => Cond::Ls,
            Cond::Ls => Cond::Hi,
            Cond::Ge => Cond::Lt,
            Cond::Lt => Cond::Ge,
            Cond::Gt => Cond::Le,
            Cond::Le => Cond::Gt,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Cond::Eq => "eq",
            Cond::Ne => "ne",
            Cond::Hs => "hs",
            Cond::Lo => "lo",
            Cond::Mi => "mi",
            Cond::Pl => "pl",
            Cond::Vs => "vs",
            Cond::Vc => "vc",
            Cond::Hi => "hi",
            Cond::Ls => "ls",
            Cond::Ge => "ge",
            Cond::Lt => "lt",
            Cond::Gt => "gt",
            Cond::Le => "le",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shift {
    Lsl,
    Lsr,
    Asr,
}

impl Shift {
    pub fn name(self) -> &'static str {
        match self {
            Shift::Lsl => "lsl",
            Shift::Lsr => "lsr",
            Shift::Asr => "asr",
        }
    }
}

/// The flexible second operand of data-processing instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op2 {
    /// An encodable modified immediate (see [`super::imm::is_arm_imm`]).
    Imm(u32),
    Reg(Reg),
    /// `reg, <shift> #amount` with `1 ≤ amount ≤ 31`.
    Shifted(Reg, Shift, u8),
}

/// Two-operand integer data-processing operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AluOp {
    Add,
    Sub,
    Rsb,
    And,
}

impl AluOp {
    pub fn name(self) -> &'static str {
        match self {
            AluOp::Add => "add",
            AluOp::Sub => "sub",
            AluOp::Rsb => "rsb",
            AluOp::And => "and",
        }
    }
}

/// Flag-setting comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Cmp,
    Cmn,
    /// `tst rn, op2`: the flags of `rn & op2` (only `eq`/`ne` are meaningful).
    Tst,
}

/// VFP single-precision arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl VOp {
    pub fn name(self) -> &'static str {
        match self {
            VOp::Add => "vadd.f32",
            VOp::Sub => "vsub.f32",
            VOp::Mul => "vmul.f32",
            VOp::Div => "vdiv.f32",
        }
    }
}

/// The unfused VFP multiply-accumulates (the product is rounded, then the sum: bit-identical
/// to `vmul` followed by the add or subtract whenever the NaN rules agree, see
/// [`MInst::VMac`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MacOp {
    /// `vmla.f32`: `sd = sa + sn·sm`.
    Mla,
    /// `vnmls.f32`: `sd = sn·sm − sa` (computed as `(−sa) + sn·sm`).
    Nmls,
}

impl MacOp {
    pub fn name(self) -> &'static str {
        match self {
            MacOp::Mla => "vmla.f32",
            MacOp::Nmls => "vnmls.f32",
        }
    }
}

/// A stack object whose `sp`-relative offset is fixed by the frame layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrameObj {
    /// The n-th `alloca` area of the function.
    Alloca(u32),
    /// Register-allocator spill slot n (4 bytes).
    Spill(u32),
    /// The caller's outgoing argument area, at this byte offset (stack-passed parameters).
    Incoming(u32),
    /// This function's outgoing argument area, at this byte offset (bottom of the frame).
    Outgoing(u32),
}

/// A memory operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Addr {
    /// `[base, #off]`. The emitter handles offsets beyond the instruction's range.
    Imm { base: Reg, off: i32 },
    /// `[base, index, lsl #shift]` (`ldr`/`str` only).
    Index { base: Reg, index: Reg, shift: u8 },
    /// `[sp, #offset(obj) + off]`.
    Frame { obj: FrameObj, off: i32 },
    /// `[base]`, then `base += inc` (post-indexed: `ldr rd, [base], #inc`, and for the VFP,
    /// which has no post-indexed `vldr`, `vldmia base!, {sd}` with `inc = 4`). The base is
    /// read and written; made only by [`super::post_increment`] on final code, never seen by
    /// the register allocator.
    PostInc { base: Reg, inc: i32 },
}

impl Addr {
    fn visit(&mut self, v: &mut impl OperandVisitor) {
        match self {
            Addr::Imm { base, .. } => v.reg_use(base),
            Addr::Index { base, index, .. } => {
                v.reg_use(base);
                v.reg_use(index);
            }
            Addr::Frame { .. } => {}
            Addr::PostInc { base, .. } => {
                v.reg_use(base);
                v.reg_def(base);
            }
        }
    }
}

/// A machine instruction (or a pseudo-instruction expanded by the emitter).
#[derive(Clone, Debug, PartialEq)]
pub enum MInst {
    /// Defines the register-passed parameters at function entry (emits nothing).
    Args {
        defs: Vec<(Reg, PReg)>,
    },
    /// `op rd, rn, op2`.
    Alu {
        op: AluOp,
        rd: Reg,
        rn: Reg,
        op2: Op2,
    },
    /// `<op>s rd, rn, op2`: [`MInst::Alu`] that also sets the flags from its result. Made only
    /// by [`super::compare_fusion::fuse_compares`] (part of `arm-peephole`) on final code, in
    /// place of a later compare whose readers it serves alike.
    AluS {
        op: AluOp,
        rd: Reg,
        rn: Reg,
        op2: Op2,
    },
    /// `mov rd, op2` (also `lsl`/`lsr`/`asr` by an immediate via a shifted operand).
    Mov {
        rd: Reg,
        op2: Op2,
    },
    /// Any 32-bit constant: `mov`, `mvn`, `movw` or `movw`+`movt`.
    LoadImm {
        rd: Reg,
        value: u32,
    },
    /// The address of a symbol: `movw`+`movt` with `:lower16:`/`:upper16:`.
    LoadSym {
        rd: Reg,
        sym: String,
    },
    /// `add rd, sp, #offset(obj) + off`.
    FrameAddr {
        rd: Reg,
        obj: FrameObj,
        off: i32,
    },
    Mul {
        rd: Reg,
        rn: Reg,
        rm: Reg,
    },
    /// `mla rd, rn, rm, ra`: `ra + rn·rm`.
    Mla {
        rd: Reg,
        rn: Reg,
        rm: Reg,
        ra: Reg,
    },
    /// `mls rd, rn, rm, ra`: `ra - rn·rm`.
    Mls {
        rd: Reg,
        rn: Reg,
        rm: Reg,
        ra: Reg,
    },
    /// `smmul rd, rn, rm`: high word of the signed 64-bit product.
    Smmul {
        rd: Reg,
        rn: Reg,
        rm: Reg,
    },
    Sdiv {
        rd: Reg,
        rn: Reg,
        rm: Reg,
    },
    /// `rd = rn % 2^k` (C semantics: the sign of `rn`, `1 ≤ k ≤ 31`) with masks and a
    /// conditional correction; clobbers the flags. For `k = 1`: `cmp rn, #0; and rd, rn, #1;
    /// rsblt rd, rd, #0`. For `2 ≤ k ≤ 8` (`rn` read late, so `rd ≠ rn`):
    /// `ands rd, rn, #2^k-1; cmpne rn, #0; submi rd, rd, #2^k` (a negative `rn` with a
    /// non-zero remainder gets `2^k` taken off). Otherwise, with the temporary `tmp`:
    /// `rsbs tmp, rn, #0; ubfx rd, rn, #0, #k; ubfx tmp, tmp, #0, #k; rsbpl rd, tmp, #0`.
    SRemPow2 {
        rd: Reg,
        rn: Reg,
        k: u8,
        tmp: Option<Reg>,
    },
    /// `cmp rn, op2` / `cmn rn, op2`.
    Cmp {
        op: CmpOp,
        rn: Reg,
        op2: Op2,
    },
    /// `mov rd, #0; mov<cc> rd, #1` (after a comparison).
    SetCond {
        cc: Cond,
        rd: Reg,
    },
    /// `mov<cc> rd, op2`, where `rd` is tied to `rn` (the value when `cc` fails).
    MovCond {
        cc: Cond,
        rd: Reg,
        rn: Reg,
        op2: Op2,
    },
    Ldr {
        rd: Reg,
        addr: Addr,
    },
    Str {
        rs: Reg,
        addr: Addr,
    },
    Vldr {
        sd: Reg,
        addr: Addr,
    },
    Vstr {
        ss: Reg,
        addr: Addr,
    },
    VArith {
        op: VOp,
        sd: Reg,
        sn: Reg,
        sm: Reg,
    },
    VNeg {
        sd: Reg,
        sm: Reg,
    },
    /// `vmla.f32 sd, sn, sm` (`sd = sa + sn·sm`) or `vnmls.f32 sd, sn, sm` (`sd = sn·sm − sa`),
    /// rounding the product and then the sum (not fused); `sd` is tied to `sa`. The VFP
    /// computes the sum with the accumulator as the *first* operand (`FPAdd(sa, p)`, and
    /// `FPAdd(−sa, p)` for `vnmls`), so when two NaNs meet it returns the accumulator's: the
    /// instruction selector uses these only where that cannot differ from the IR's operation.
    VMac {
        op: MacOp,
        sd: Reg,
        sa: Reg,
        sn: Reg,
        sm: Reg,
    },
    /// `vmov.f32 sd, sm` (register copy).
    VMov {
        sd: Reg,
        sm: Reg,
    },
    /// `vmov<cc>.f32 sd, sm` (`vneg<cc>.f32 sd, sm` when `neg`), where `sd` is tied to `sn`.
    VMovCond {
        cc: Cond,
        sd: Reg,
        sn: Reg,
        sm: Reg,
        neg: bool,
    },
    /// `vmov.f32 sd, #imm` (an encodable VFP immediate).
    VMovImm {
        sd: Reg,
        imm: f32,
    },
    /// `vmov sd, rn`: raw bits core → VFP.
    VMovFromCore {
        sd: Reg,
        rn: Reg,
    },
    /// `vmov rd, sn`: raw bits VFP → core.
    VMovToCore {
        rd: Reg,
        sn: Reg,
    },
    /// `vcmp.f32 sn, sm` (or `#0`), then `vmrs APSR_nzcv, fpscr`.
    VCmp {
        sn: Reg,
        sm: Option<Reg>,
    },
    /// `vcvt.f32.s32 sd, sm` (`sm` holds an integer).
    VCvtF32S32 {
        sd: Reg,
        sm: Reg,
    },
    /// `vcvt.s32.f32 sd, sm` (truncating; `sd` receives an integer).
    VCvtS32F32 {
        sd: Reg,
        sm: Reg,
    },
    /// Promote `src` to double (in the scratch `d16`) and split it into a core register pair
    /// (`lo` = low word): a variadic double argument.
    CvtF64Pair {
        lo: Reg,
        hi: Reg,
        src: Reg,
    },
    /// Promote `src` to double and store it (8 bytes) at `addr`: a variadic double argument
    /// on the stack.
    VStrF64 {
        src: Reg,
        addr: Addr,
    },
    /// Zero `words` words from `base` with `vstmia` (a loop storing 64 bytes per iteration
    /// when there are more than [`MEMZERO_UNROLLED_BLOCKS`] such blocks; `count` is its
    /// counter).
    MemZeroLoop {
        base: Reg,
        words: u32,
        ptr: Reg,
        count: Option<Reg>,
        zero: Reg,
    },
    /// `bl sym`. `uses`/`defs` are the argument/result registers of the calling convention.
    Call {
        sym: String,
        uses: SmallVec<[(Reg, PReg); 4]>,
        defs: SmallVec<[(Reg, PReg); 1]>,
        clobbers: PRegSet,
    },
    Jump {
        target: Block,
    },
    /// `b<cc> taken; b not_taken`.
    CondBr {
        cc: Cond,
        taken: Block,
        not_taken: Block,
    },
    /// A conditional branch that falls through when `cc` fails (after block layout).
    BranchCond {
        cc: Cond,
        target: Block,
    },
    /// Epilogue and return; `val` is the result in `r0`/`s0`.
    Ret {
        val: Option<(Reg, PReg)>,
    },
    /// `inst` executed only when `cc` holds (every instruction of its expansion carries the
    /// condition). Created by `arm-if-convert` on allocated code (after it run only
    /// `arm-branch-opt` and, on final code, the post-increments and compare fusion of
    /// `arm-peephole`): a conditional definition also keeps the old value, so
    /// [`MInst::phys_defs_uses`] (and the liveness of those final-code rewrites) reports its
    /// definitions as uses too.
    Pred {
        cc: Cond,
        inst: Box<MInst>,
    },
}

/// Receives the register operands of an instruction, in a fixed order.
pub trait OperandVisitor {
    /// Read at the start of the instruction.
    fn reg_use(&mut self, r: &mut Reg);
    /// Read throughout the instruction, so never in the register of one of its definitions
    /// (an expansion that writes its result before its last read of this operand).
    fn reg_use_late(&mut self, r: &mut Reg) {
        self.reg_use(r)
    }
    /// Written at the end of the instruction (may share a register with a use).
    fn reg_def(&mut self, r: &mut Reg);
    /// A scratch register written at the start and live throughout the instruction.
    fn reg_temp(&mut self, r: &mut Reg);
    /// Written at the end, in the same register as operand number `input` (a use).
    fn reg_reuse_def(&mut self, r: &mut Reg, input: usize);
    fn fixed_use(&mut self, r: &mut Reg, p: PReg);
    fn fixed_def(&mut self, r: &mut Reg, p: PReg);
}

impl Op2 {
    fn visit(&mut self, v: &mut impl OperandVisitor) {
        match self {
            Op2::Imm(_) => {}
            Op2::Reg(r) | Op2::Shifted(r, ..) => v.reg_use(r),
        }
    }

    pub fn reg(&self) -> Option<Reg> {
        match *self {
            Op2::Imm(_) => None,
            Op2::Reg(r) | Op2::Shifted(r, ..) => Some(r),
        }
    }
}

/// The operand walk of [`MInst::visit`] and [`MInst::visit_ref`], written once so both see
/// the operands in the same order: `$slot!(x)` turns a bound register, `Op2` or `Addr` into
/// what the visitor gets (itself when visiting in place, a mutable copy when only reading).
macro_rules! visit_operands {
    ($inst:expr, $v:ident, $slot:ident, $recurse:ident) => {
        match $inst {
            MInst::Args { defs } => {
                for (r, p) in defs {
                    $v.fixed_def($slot!(r), *p);
                }
            }
            MInst::Alu { rd, rn, op2, .. } | MInst::AluS { rd, rn, op2, .. } => {
                $v.reg_use($slot!(rn));
                $slot!(op2).visit($v);
                $v.reg_def($slot!(rd));
            }
            MInst::Mov { rd, op2 } => {
                $slot!(op2).visit($v);
                $v.reg_def($slot!(rd));
            }
            MInst::LoadImm { rd, .. } | MInst::LoadSym { rd, .. } | MInst::FrameAddr { rd, .. } => $v.reg_def($slot!(rd)),
            MInst::Mul { rd, rn, rm } | MInst::Smmul { rd, rn, rm } | MInst::Sdiv { rd, rn, rm } => {
                $v.reg_use($slot!(rn));
                $v.reg_use($slot!(rm));
                $v.reg_def($slot!(rd));
            }
            MInst::SRemPow2 { rd, rn, tmp, k } => {
                if (2..=8).contains(k) {
                    $v.reg_use_late($slot!(rn));
                } else {
                    $v.reg_use($slot!(rn));
                }
                if let Some(tmp) = tmp {
                    $v.reg_temp($slot!(tmp));
                }
                $v.reg_def($slot!(rd));
            }
            MInst::Mla { rd, rn, rm, ra } | MInst::Mls { rd, rn, rm, ra } => {
                $v.reg_use($slot!(rn));
                $v.reg_use($slot!(rm));
                $v.reg_use($slot!(ra));
                $v.reg_def($slot!(rd));
            }
            MInst::Cmp { rn, op2, .. } => {
                $v.reg_use($slot!(rn));
                $slot!(op2).visit($v);
            }
            MInst::SetCond { rd, .. } => $v.reg_def($slot!(rd)),
            MInst::MovCond { rd, rn, op2, .. } => {
                $v.reg_use($slot!(rn));
                $slot!(op2).visit($v);
                $v.reg_reuse_def($slot!(rd), 0);
            }
            MInst::Ldr { rd, addr } => {
                $slot!(addr).visit($v);
                $v.reg_def($slot!(rd));
            }
            MInst::Vldr { sd, addr } => {
                $slot!(addr).visit($v);
                $v.reg_def($slot!(sd));
            }
            MInst::Str { rs, addr } => {
                $v.reg_use($slot!(rs));
                $slot!(addr).visit($v);
            }
            MInst::Vstr { ss, addr } => {
                $v.reg_use($slot!(ss));
                $slot!(addr).visit($v);
            }
            MInst::VArith { sd, sn, sm, .. } => {
                $v.reg_use($slot!(sn));
                $v.reg_use($slot!(sm));
                $v.reg_def($slot!(sd));
            }
            MInst::VNeg { sd, sm }
            | MInst::VMov { sd, sm }
            | MInst::VCvtF32S32 { sd, sm }
            | MInst::VCvtS32F32 { sd, sm } => {
                $v.reg_use($slot!(sm));
                $v.reg_def($slot!(sd));
            }
            MInst::VMac { sd, sa, sn, sm, .. } => {
                $v.reg_use($slot!(sa));
                $v.reg_use($slot!(sn));
                $v.reg_use($slot!(sm));
                $v.reg_reuse_def($slot!(sd), 0);
            }
            MInst::VMovCond { sd, sn, sm, .. } => {
                $v.reg_use($slot!(sn));
                $v.reg_use($slot!(sm));
                $v.reg_reuse_def($slot!(sd), 0);
            }
            MInst::VMovImm { sd, .. } => $v.reg_def($slot!(sd)),
            MInst::VMovFromCore { sd, rn } => {
                $v.reg_use($slot!(rn));
                $v.reg_def($slot!(sd));
            }
            MInst::VMovToCore { rd, sn } => {
                $v.reg_use($slot!(sn));
                $v.reg_def($slot!(rd));
            }
            MInst::VCmp { sn, sm } => {
                $v.reg_use($slot!(sn));
                if let Some(sm) = sm {
                    $v.reg_use($slot!(sm));
                }
            }
            MInst::CvtF64Pair { lo, hi, src } => {
                $v.reg_use($slot!(src));
                $v.reg_def($slot!(lo));
                $v.reg_def($slot!(hi));
            }
            MInst::VStrF64 { src, addr } => {
                $v.reg_use($slot!(src));
                $slot!(addr).visit($v);
            }
            MInst::MemZeroLoop { base, ptr, count, zero, .. } => {
                $v.reg_use($slot!(base));
                $v.reg_temp($slot!(ptr));
                if let Some(count) = count {
                    $v.reg_temp($slot!(count));
                }
                $v.reg_temp($slot!(zero));
            }
            MInst::Call { uses, defs, .. } => {
                for (r, p) in uses {
                    $v.fixed_use($slot!(r), *p);
                }
                for (r, p) in defs {
                    $v.fixed_def($slot!(r), *p);
                }
            }
            MInst::Jump { .. } | MInst::CondBr { .. } | MInst::BranchCond { .. } => {}
            MInst::Ret { val } => {
                if let Some((r, p)) = val {
                    $v.fixed_use($slot!(r), *p);
                }
            }
            MInst::Pred { inst, .. } => inst.$recurse($v),
        }
    };
}

/// `$slot` of [`visit_operands`] for [`MInst::visit`]: the operand itself.
macro_rules! in_place {
    ($x:expr) => {
        $x
    };
}

/// `$slot` of [`visit_operands`] for [`MInst::visit_ref`]: a copy (registers, `Op2` and
/// `Addr` are plain data).
macro_rules! copied {
    ($x:expr) => {
        &mut { *$x }
    };
}

impl MInst {
    /// Visits every register operand in the order the allocator sees them.
    pub fn visit(&mut self, v: &mut impl OperandVisitor) {
        visit_operands!(self, v, in_place, visit)
    }

    /// Visits the register operands like [`MInst::visit`], leaving the instruction as it is
    /// (the visitor receives copies of the registers): for visitors that only read.
    ///
    /// Instead of visiting a clone: the verifier, copy propagation and the peephole stage
    /// visit every instruction after every stage, and cloning an instruction copies the
    /// whole (large) enum, and allocates for calls, symbol loads, `Args` and predicated
    /// instructions.
    pub fn visit_ref(&self, v: &mut impl OperandVisitor) {
        visit_operands!(self, v, copied, visit_ref)
    }

    /// The condition on the flags that the instruction reads, if it reads them: conditional
    /// branches, moves and selects, and predicated instructions.
    pub fn flag_condition(&self) -> Option<Cond> {
        match *self {
            MInst::CondBr { cc, .. }
            | MInst::BranchCond { cc, .. }
            | MInst::SetCond { cc, .. }
            | MInst::MovCond { cc, .. }
            | MInst::VMovCond { cc, .. }
            | MInst::Pred { cc, .. } => Some(cc),
            _ => None,
        }
    }

    /// [`MInst::flag_condition`], to rewrite.
    pub fn flag_condition_mut(&mut self) -> Option<&mut Cond> {
        match self {
            MInst::CondBr { cc, .. }
            | MInst::BranchCond { cc, .. }
            | MInst::SetCond { cc, .. }
            | MInst::MovCond { cc, .. }
            | MInst::VMovCond { cc, .. }
            | MInst::Pred { cc, .. } => Some(cc),
            _ => None,
        }
    }

    /// Whether the instruction (its whole expansion) may change the condition flags: a
    /// comparison, or an expansion that uses the flags internally (calls, the zeroing loop,
    /// the remainder sequence).
    pub fn writes_flags(&self) -> bool {
        match self {
            MInst::Cmp { .. } | MInst::AluS { .. } | MInst::VCmp { .. } | MInst::Call { .. } | MInst::SRemPow2 { .. } => {
                true
            }
            MInst::MemZeroLoop { count, .. } => count.is_some(),
            MInst::Pred { inst, .. } => inst.writes_flags(),
            _ => false,
        }
    }

    pub fn clobbers(&self) -> PRegSet {
        match self {
            MInst::Call { clobbers, .. } => *clobbers,
            _ => PRegSet::empty(),
        }
    }

    pub fn is_branch(&self) -> bool {
        matches!(self, MInst::Jump { .. } | MInst::CondBr { .. } | MInst::BranchCond { .. })
    }

    pub fn is_terminator(&self) -> bool {
        self.is_branch() || matches!(self, MInst::Ret { .. })
    }

    /// Physical registers written and read (after allocation), for the peephole pass.
    pub fn phys_defs_uses(&self) -> (SmallVec<[PReg; 4]>, SmallVec<[PReg; 4]>) {
        struct Collect {
            defs: SmallVec<[PReg; 4]>,
            uses: SmallVec<[PReg; 4]>,
        }
        impl OperandVisitor for Collect {
            fn reg_use(&mut self, r: &mut Reg) {
                self.uses.extend(r.preg());
            }
            fn reg_def(&mut self, r: &mut Reg) {
                self.defs.extend(r.preg());
            }
            fn reg_temp(&mut self, r: &mut Reg) {
                self.defs.extend(r.preg());
                self.uses.extend(r.preg());
            }
            fn reg_reuse_def(&mut self, r: &mut Reg, _input: usize) {
                self.defs.extend(r.preg());
            }
            fn fixed_use(&mut self, r: &mut Reg, _p: PReg) {
                self.uses.extend(r.preg());
            }
            fn fixed_def(&mut self, r: &mut Reg, _p: PReg) {
                self.defs.extend(r.preg());
            }
        }
        let mut c = Collect { defs: SmallVec::new(), uses: SmallVec::new() };
        self.visit_ref(&mut c);
        if let MInst::Pred { .. } = self {
            // When the condition fails the old value stays: a conditional write reads it.
            c.uses.extend(c.defs.iter().copied());
        }
        (c.defs, c.uses)
    }
}

/// Where a machine block comes from (for the comments of the assembly listing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockOrigin {
    /// The IR block of the same code.
    Ir(crate::ir::Block),
    /// A block splitting the CFG edge between two IR blocks (holds the moves of that edge).
    Edge(crate::ir::Block, crate::ir::Block),
    /// The synthetic entry block added when the IR entry block is a loop header.
    Entry,
}

/// A machine block before allocation.
#[derive(Clone, Debug)]
pub struct MBlockData {
    pub insts: Vec<MInst>,
    /// Values arriving from predecessors (the IR block's phis).
    pub params: Vec<VReg>,
    pub succs: SmallVec<[Block; 2]>,
    pub preds: SmallVec<[Block; 4]>,
    /// For each successor, the values passed to its parameters.
    pub branch_args: SmallVec<[Vec<VReg>; 2]>,
    pub origin: BlockOrigin,
    /// Position in the code layout (blocks are numbered in reverse post-order for the
    /// allocator, but emitted in layout order).
    pub layout: u32,
}

/// Stack requirements known after instruction selection.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameRequest {
    /// Size in bytes of each `alloca` area, by [`FrameObj::Alloca`] index.
    pub allocas: Vec<u32>,
    /// Largest outgoing stack-argument area of any call (bytes).
    pub outgoing: u32,
    /// The function calls something (so `lr` must be saved).
    pub has_calls: bool,
}

/// A function after instruction selection.
#[derive(Clone, Debug)]
pub struct MFunction {
    /// Assembly symbol.
    pub sym: String,
    pub blocks: Vec<MBlockData>,
    pub num_vregs: usize,
    pub frame: FrameRequest,
}

/// A block after register allocation (physical registers only).
#[derive(Clone, Debug, PartialEq)]
pub struct PBlock {
    pub insts: Vec<MInst>,
    pub origin: BlockOrigin,
}

impl MInst {
    /// Rewrites the block operands of a branch.
    pub fn map_targets(&mut self, f: impl Fn(Block) -> Block) {
        match self {
            MInst::Jump { target } | MInst::BranchCond { target, .. } => *target = f(*target),
            MInst::CondBr { taken, not_taken, .. } => {
                *taken = f(*taken);
                *not_taken = f(*not_taken);
            }
            _ => {}
        }
    }
}

/// A function after register allocation.
#[derive(Clone, Debug, PartialEq)]
pub struct PFunction {
    pub sym: String,
    /// Blocks in emission order; `id` is the label number (the allocator's block index).
    pub blocks: Vec<(Block, PBlock)>,
    pub frame: FrameRequest,
    pub num_spill_slots: u32,
}

#[cfg(test)]
impl PFunction {
    /// A function `f` of the given blocks for tests: block `i` has label `i`, the entry first.
    pub(crate) fn of_blocks(blocks: Vec<Vec<MInst>>, frame: FrameRequest, num_spill_slots: u32) -> PFunction {
        PFunction {
            sym: "f".into(),
            blocks: blocks
                .into_iter()
                .enumerate()
                .map(|(i, insts)| (Block::new(i), PBlock { insts, origin: BlockOrigin::Entry }))
                .collect(),
            frame,
            num_spill_slots,
        }
    }
}

impl PFunction {
    /// The successors of every block, as positions in [`PFunction::blocks`]: the targets of
    /// its final `b`/`b<cc>` (both of a final `b<cc>` + `b` pair); a block ending otherwise than in `b`, `b<cc>` + `b` or a return
    /// (a fall-through branch after layout) also reaches the next block.
    pub fn successor_positions(&self) -> Vec<SmallVec<[u32; 2]>> {
        let pos: rustc_hash::FxHashMap<Block, u32> =
            self.blocks.iter().enumerate().map(|(i, (b, _))| (*b, i as u32)).collect();
        let at = |b: &Block| pos.get(b).copied();
        (0..self.blocks.len())
            .map(|i| {
                let mut out: SmallVec<[u32; 2]> = SmallVec::new();
                let insts = &self.blocks[i].1.insts;
                let falls_through = match insts.last() {
                    Some(MInst::Jump { target }) => {
                        // `b<cc> x; b y`, as `arm-if-convert` leaves a loop latch.
                        if let Some(MInst::BranchCond { target: x, .. }) = insts.len().checked_sub(2).map(|k| &insts[k]) {
                            out.extend(at(x));
                        }
                        out.extend(at(target));
                        false
                    }
                    Some(MInst::CondBr { taken, not_taken, .. }) => {
                        out.extend(at(taken));
                        out.extend(at(not_taken));
                        false
                    }
                    Some(MInst::BranchCond { target, .. }) => {
                        out.extend(at(target));
                        true
                    }
                    Some(MInst::Ret { .. }) => false,
                    _ => true,
                };
                if falls_through && i + 1 < self.blocks.len() {
                    out.push(i as u32 + 1);
                }
                out
            })
            .collect()
    }

    /// Every physical register the code mentions (to decide what the prologue saves).
    pub fn mentioned_regs(&self) -> PRegSet {
        let mut set = PRegSet::empty();
        for (_, b) in &self.blocks {
            for inst in &b.insts {
                let (defs, uses) = inst.phys_defs_uses();
                for p in defs.into_iter().chain(uses) {
                    set.add(p);
                }
            }
        }
        set
    }
}

/// Shorthand used throughout the back end.
pub fn phys(p: PReg) -> Reg {
    Reg::Phys(p)
}

/// The `r0`/`s0` result register of a class.
pub fn result_reg(class: RegClass) -> PReg {
    match class {
        RegClass::Int => regs::gpr(0),
        RegClass::Float | RegClass::Vector => regs::spr(0),
    }
}

#[cfg(test)]
mod tests {
    use smallvec::smallvec;

    use super::*;

    /// Every operand with how it is visited, for comparing the two visits.
    #[derive(Default)]
    struct Log(Vec<(Reg, &'static str, Option<PReg>)>);
    impl OperandVisitor for Log {
        fn reg_use(&mut self, r: &mut Reg) {
            self.0.push((*r, "use", None));
        }
        fn reg_use_late(&mut self, r: &mut Reg) {
            self.0.push((*r, "use-late", None));
        }
        fn reg_def(&mut self, r: &mut Reg) {
            self.0.push((*r, "def", None));
        }
        fn reg_temp(&mut self, r: &mut Reg) {
            self.0.push((*r, "temp", None));
        }
        fn reg_reuse_def(&mut self, r: &mut Reg, _input: usize) {
            self.0.push((*r, "reuse-def", None));
        }
        fn fixed_use(&mut self, r: &mut Reg, p: PReg) {
            self.0.push((*r, "fixed-use", Some(p)));
        }
        fn fixed_def(&mut self, r: &mut Reg, p: PReg) {
            self.0.push((*r, "fixed-def", Some(p)));
        }
    }

    #[test]
    fn visit_ref_sees_what_visit_sees() {
        let (r0, r1, r4, s0) = (phys(regs::gpr(0)), phys(regs::gpr(1)), phys(regs::gpr(4)), phys(regs::spr(0)));
        let call = MInst::Call {
            sym: "f".into(),
            uses: smallvec![(r4, regs::gpr(0)), (r1, regs::gpr(1))],
            defs: smallvec![(r0, regs::gpr(0))],
            clobbers: PRegSet::empty(),
        };
        let insts = [
            MInst::Args { defs: vec![(r4, regs::gpr(0)), (s0, regs::spr(0))] },
            MInst::LoadSym { rd: r1, sym: "g".into() },
            call.clone(),
            MInst::Pred { cc: Cond::Eq, inst: Box::new(MInst::Mov { rd: r0, op2: Op2::Reg(r4) }) },
            MInst::Pred { cc: Cond::Ne, inst: Box::new(call) },
            MInst::Mla { rd: r0, rn: r1, rm: r4, ra: r0 },
        ];
        for inst in insts {
            let (mut by_ref, mut by_clone) = (Log::default(), Log::default());
            inst.visit_ref(&mut by_ref);
            inst.clone().visit(&mut by_clone);
            assert_eq!(by_ref.0, by_clone.0, "{inst:?}");
        }
    }
}
