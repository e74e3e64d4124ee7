//! Calls: argument placement by [`crate::isa::arm::abi`], results in `r0`/`s0`.
//!
//! Register arguments become fixed-register uses of the call instruction, so the allocator
//! moves them into place (resolving any permutation as a parallel move). Stack arguments are
//! stored into the outgoing area at the bottom of the frame right before the call. For
//! `putf`, floats are promoted to double: into a core register pair ([`MInst::CvtF64Pair`])
//! or an 8-byte stack slot ([`MInst::VStrF64`]).
//!
//! Every call clobbers the caller-saved registers (`r0`–`r3`, `lr`, `s0`–`s15`) except the
//! ones it defines as results.

use regalloc2::RegClass;
use smallvec::SmallVec;

use super::{ISel, Mat};
use crate::ir::{Callee, Inst, Type};
use crate::isa::arm::abi::{self, ArgLoc, VarArgLoc};
use crate::isa::arm::mir::{Addr, FrameObj, MInst, Reg, result_reg};
use crate::isa::arm::{BackendError, regs};

impl ISel<'_> {
    pub(super) fn lower_call(&mut self, inst: Inst, callee: Callee) -> Result<Option<Reg>, BackendError> {
        let func = self.func;
        let args: Vec<_> = func.args(inst).to_vec();
        let types: Vec<Type> = args.iter().map(|&a| func.value_type(a)).collect();
        let sym = match callee {
            Callee::Func(f) => {
                if !self.module.is_live(f) {
                    return Err(BackendError::InvalidIr(format!("{}: call to a removed function", func.name)));
                }
                self.syms.funcs[f].clone()
            }
            Callee::Builtin(b) => b.link_name().to_string(),
            Callee::PutF(_) => "putf".to_string(),
        };
        self.frame.has_calls = true;

        let mut uses: SmallVec<[(Reg, regalloc2::PReg); 4]> = SmallVec::new();
        let outgoing = |off: u32| Addr::Frame { obj: FrameObj::Outgoing(off), off: 0 };
        let stack_bytes = if let Callee::PutF(s) = callee {
            let mut all_types = vec![Type::Ptr];
            all_types.extend(&types);
            let (locs, stack) = abi::variadic_args(&all_types);
            let fmt = self.materialise(Mat::Str(s));
            uses.push((fmt, regs::gpr(0)));
            for (&a, &loc) in args.iter().zip(&locs[1..]) {
                let r = self.value_reg(a)?;
                match loc {
                    VarArgLoc::Reg(p) => uses.push((r, p)),
                    VarArgLoc::Stack(off) => self.emit(MInst::Str { rs: r, addr: outgoing(off) }),
                    VarArgLoc::RegPair(lo_p, hi_p) => {
                        let (lo, hi) = (self.new_int(), self.new_int());
                        self.emit(MInst::CvtF64Pair { lo, hi, src: r });
                        uses.push((lo, lo_p));
                        uses.push((hi, hi_p));
                    }
                    VarArgLoc::StackDouble(off) => self.emit(MInst::VStrF64 { src: r, addr: outgoing(off) }),
                }
            }
            stack
        } else {
            let (locs, stack) = abi::fixed_args(&types);
            for (&a, &loc) in args.iter().zip(&locs) {
                let r = self.value_reg(a)?;
                match loc {
                    ArgLoc::Reg(p) => uses.push((r, p)),
                    ArgLoc::Stack(off) if r.class() == RegClass::Float => {
                        self.emit(MInst::Vstr { ss: r, addr: outgoing(off) })
                    }
                    ArgLoc::Stack(off) => self.emit(MInst::Str { rs: r, addr: outgoing(off) }),
                }
            }
            stack.next_multiple_of(8)
        };
        self.frame.outgoing = self.frame.outgoing.max(stack_bytes);

        let mut clobbers = regs::call_clobbers();
        let ret_ty = func.inst(inst).ty;
        let mut defs: SmallVec<[(Reg, regalloc2::PReg); 1]> = SmallVec::new();
        let result = if ret_ty.is_void() {
            None
        } else {
            let class = if ret_ty == Type::F32 { RegClass::Float } else { RegClass::Int };
            let rd = self.new_vreg(class);
            let p = result_reg(class);
            clobbers.remove(p);
            defs.push((rd, p));
            Some(rd)
        };
        self.emit(MInst::Call { sym, uses, defs, clobbers });
        Ok(result)
    }
}
