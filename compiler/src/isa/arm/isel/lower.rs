//! Per-opcode selection patterns.
//!
//! Integer patterns: immediates are used whenever encodable (`add`↔`sub` and `cmp`↔`cmn`
//! with the negated constant otherwise), multiplications by `2^k`, `2^k+1`, `2^k-1` become
//! shifts or shifted-operand `add`/`rsb`, folded multiplications become `mla`/`mls` or a
//! shifted operand. Division and remainder by constants (stage `arm-const-div`) use an
//! arithmetic-shift sequence for powers of two (a plain `asr` / `and` when the dividend is
//! never negative there, see [`crate::analysis::nonneg`]) and `smmul` with a magic multiplier
//! otherwise (see [`super::super::imm::DivMagic`]); the general case is `sdiv` (+ `mls` for
//! `srem`). `x % 2^k == c` tests `x` directly (`tst`, or the sign and low bits under a mask).
//!
//! Float compares: after `vcmp.f32` + `vmrs`, an unordered result sets C and V. The ordered
//! predicates use conditions that are false for that flag state — `lt`→`mi`, `le`→`ls`,
//! `gt`→`gt`, `ge`→`ge`, `eq`→`eq` — and `ne` (unordered or not equal) uses `ne`. Inverting
//! a condition code negates the whole predicate, so branching on the inverse is exact.

use regalloc2::RegClass;

use super::fold::{AddrBase, AddrExpr, mul_by_power_of_two, rem_pow2_test};
use super::{ISel, Mat, class_of, int_const};
use crate::analysis::nonneg::NonNegative;
use crate::ir::{Const, FloatCC, Inst, IntCC, Opcode, Type, Value};
use crate::isa::arm::imm::{DivMagic, is_arm_imm};
use crate::isa::arm::mir::{Addr, AluOp, CmpOp, Cond, FrameObj, MEMZERO_UNROLLED_BLOCKS, MInst, MacOp, Op2, Reg, Shift, VOp};
use crate::isa::arm::{BackendError, BackendStage};

/// Which load/store encoding an address must fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MemKind {
    /// `ldr`/`str`: `±4095`, register index allowed.
    Word,
    /// `vldr`/`vstr`: `±1020`, multiple of 4, no register index.
    Vfp,
}

fn fits(kind: MemKind, off: i32) -> bool {
    match kind {
        MemKind::Word => (-4095..=4095).contains(&off),
        MemKind::Vfp => (-1020..=1020).contains(&off) && off % 4 == 0,
    }
}

fn shifted(r: Reg, shift: Shift, amount: u8) -> Op2 {
    if amount == 0 { Op2::Reg(r) } else { Op2::Shifted(r, shift, amount) }
}

fn int_cond(cc: IntCC) -> Cond {
    match cc {
        IntCC::Eq => Cond::Eq,
        IntCC::Ne => Cond::Ne,
        IntCC::Lt => Cond::Lt,
        IntCC::Le => Cond::Le,
        IntCC::Gt => Cond::Gt,
        IntCC::Ge => Cond::Ge,
    }
}

fn float_cond(cc: FloatCC) -> Cond {
    match cc {
        FloatCC::Eq => Cond::Eq,
        FloatCC::Ne => Cond::Ne,
        FloatCC::Lt => Cond::Mi,
        FloatCC::Le => Cond::Ls,
        FloatCC::Gt => Cond::Gt,
        FloatCC::Ge => Cond::Ge,
    }
}

impl ISel<'_> {
    pub(super) fn lower_inst(&mut self, inst: Inst) -> Result<(), BackendError> {
        let func = self.func;
        let data = func.inst(inst);
        let args = data.args.clone();
        let result = match data.op {
            Opcode::Add => Some(self.lower_add(inst)?),
            Opcode::Sub => Some(self.lower_sub(inst)?),
            Opcode::Mul => Some(self.lower_mul(args[0], args[1])?),
            Opcode::SDiv => Some(self.lower_div(inst, false)?),
            Opcode::SRem => Some(self.lower_div(inst, true)?),
            Opcode::FAdd | Opcode::FSub if self.fold.folded_mul.contains_key(&inst) => {
                let idx = self.fold.folded_mul[&inst];
                let sa = self.value_reg(args[1 - idx])?;
                let mi = func
                    .def_inst(args[idx])
                    .ok_or_else(|| BackendError::Internal(format!("{}: folded multiplication lost", func.name)))?;
                let sn = self.value_reg(func.args(mi)[0])?;
                let sm = self.value_reg(func.args(mi)[1])?;
                let sd = self.new_float();
                let op = if data.op == Opcode::FAdd { MacOp::Mla } else { MacOp::Nmls };
                self.emit(MInst::VMac { op, sd, sa, sn, sm });
                Some(sd)
            }
            Opcode::FAdd | Opcode::FSub | Opcode::FMul | Opcode::FDiv => {
                let op = match data.op {
                    Opcode::FAdd => VOp::Add,
                    Opcode::FSub => VOp::Sub,
                    Opcode::FMul => VOp::Mul,
                    _ => VOp::Div,
                };
                let sn = self.value_reg(args[0])?;
                let sm = self.value_reg(args[1])?;
                let sd = self.new_float();
                self.emit(MInst::VArith { op, sd, sn, sm });
                Some(sd)
            }
            Opcode::FNeg => {
                let sm = self.value_reg(args[0])?;
                let sd = self.new_float();
                self.emit(MInst::VNeg { sd, sm });
                Some(sd)
            }
            Opcode::Icmp(_) | Opcode::Fcmp(_) => {
                let cc = self.compare(inst)?;
                let rd = self.new_int();
                self.emit(MInst::SetCond { cc, rd });
                Some(rd)
            }
            Opcode::Zext => {
                let x = args[0];
                match func.def_inst(x) {
                    Some(ci) if self.fold.skipped[ci] => {
                        let cc = self.compare(ci)?;
                        let rd = self.new_int();
                        self.emit(MInst::SetCond { cc, rd });
                        Some(rd)
                    }
                    // An i1 in a register is already 0 or 1.
                    _ => Some(self.value_reg(x)?),
                }
            }
            Opcode::SiToFp => {
                let rn = self.value_reg(args[0])?;
                let t = self.new_float();
                self.emit(MInst::VMovFromCore { sd: t, rn });
                let sd = self.new_float();
                self.emit(MInst::VCvtF32S32 { sd, sm: t });
                Some(sd)
            }
            Opcode::FpToSi => {
                let sm = self.value_reg(args[0])?;
                let t = self.new_float();
                self.emit(MInst::VCvtS32F32 { sd: t, sm });
                let rd = self.new_int();
                self.emit(MInst::VMovToCore { rd, sn: t });
                Some(rd)
            }
            Opcode::Select => Some(self.lower_select(args[0], args[1], args[2], data.ty)?),
            Opcode::Alloca { .. } | Opcode::Phi => None,
            Opcode::Load => {
                let ty = data.ty;
                match ty {
                    Type::I32 | Type::Ptr => {
                        let addr = self.addr_mode(args[0], MemKind::Word)?;
                        let rd = self.new_int();
                        self.emit(MInst::Ldr { rd, addr });
                        Some(rd)
                    }
                    Type::F32 => {
                        let addr = self.addr_mode(args[0], MemKind::Vfp)?;
                        let sd = self.new_float();
                        self.emit(MInst::Vldr { sd, addr });
                        Some(sd)
                    }
                    _ => {
                        return Err(BackendError::InvalidIr(format!("{}: load of type {ty}", func.name)));
                    }
                }
            }
            Opcode::Store => {
                let value = args[1];
                match func.value_type(value) {
                    Type::F32 => {
                        let ss = self.value_reg(value)?;
                        let addr = self.addr_mode(args[0], MemKind::Vfp)?;
                        self.emit(MInst::Vstr { ss, addr });
                    }
                    Type::I32 | Type::Ptr => {
                        let rs = self.value_reg(value)?;
                        let addr = self.addr_mode(args[0], MemKind::Word)?;
                        self.emit(MInst::Str { rs, addr });
                    }
                    ty => {
                        return Err(BackendError::InvalidIr(format!("{}: store of type {ty}", func.name)));
                    }
                }
                None
            }
            Opcode::Gep { scale } => Some(self.lower_gep(args[0], args[1], scale)?),
            Opcode::MemZero { words } => {
                self.lower_memzero(args[0], words)?;
                None
            }
            Opcode::Call(callee) => self.lower_call(inst, callee)?,
            op => {
                return Err(BackendError::Internal(format!(
                    "{}: {} reached instruction lowering",
                    func.name,
                    op.mnemonic()
                )));
            }
        };
        if let (Some(r), Some(v)) = (result, func.result(inst)) {
            self.bind(v, r)?;
        }
        Ok(())
    }

    // ----- integer arithmetic -------------------------------------------------------------

    /// The operands of a multiplication folded into an add/sub: `(x, Some(k))` for `x << k`,
    /// `(x, None)` with the second factor in `y` otherwise.
    fn folded_mul_operands(&mut self, user: Inst, idx: usize) -> Result<(Reg, Option<u8>, Option<Reg>), BackendError> {
        let func = self.func;
        let m = func.args(user)[idx];
        let mi = func
            .def_inst(m)
            .ok_or_else(|| BackendError::Internal(format!("{}: folded multiplication lost", func.name)))?;
        let margs = func.args(mi);
        if let Some((x_idx, k)) = mul_by_power_of_two(func, mi) {
            return Ok((self.value_reg(margs[x_idx])?, Some(k), None));
        }
        let (x, y) = (margs[0], margs[1]);
        Ok((self.value_reg(x)?, None, Some(self.value_reg(y)?)))
    }

    fn lower_add(&mut self, inst: Inst) -> Result<Reg, BackendError> {
        let args = self.func.args(inst);
        let (a, b) = (args[0], args[1]);
        if let Some(&idx) = self.fold.folded_mul.get(&inst) {
            let other = self.value_reg(args[1 - idx])?;
            let (x, k, y) = self.folded_mul_operands(inst, idx)?;
            let rd = self.new_int();
            match (k, y) {
                (Some(k), _) => self.emit(MInst::Alu { op: AluOp::Add, rd, rn: other, op2: shifted(x, Shift::Lsl, k) }),
                (None, Some(y)) => self.emit(MInst::Mla { rd, rn: x, rm: y, ra: other }),
                (None, None) => {
                    return Err(BackendError::Internal("multiplication without operands".into()));
                }
            }
            return Ok(rd);
        }
        let (x, c) = match (int_const(self.func, a), int_const(self.func, b)) {
            (_, Some(c)) => (a, Some(c)),
            (Some(c), None) => (b, Some(c)),
            (None, None) => (a, None),
        };
        let rn = self.value_reg(x)?;
        match c {
            Some(c) => Ok(self.add_imm(rn, c)),
            None => {
                let rm = self.value_reg(b)?;
                let rd = self.new_int();
                self.emit(MInst::Alu { op: AluOp::Add, rd, rn, op2: Op2::Reg(rm) });
                Ok(rd)
            }
        }
    }

    fn lower_sub(&mut self, inst: Inst) -> Result<Reg, BackendError> {
        let args = self.func.args(inst);
        let (a, b) = (args[0], args[1]);
        if let Some(&idx) = self.fold.folded_mul.get(&inst) {
            let other = self.value_reg(args[1 - idx])?;
            let (x, k, y) = self.folded_mul_operands(inst, idx)?;
            let rd = self.new_int();
            match (idx, k, y) {
                (1, Some(k), _) => {
                    self.emit(MInst::Alu { op: AluOp::Sub, rd, rn: other, op2: shifted(x, Shift::Lsl, k) })
                }
                (1, None, Some(y)) => self.emit(MInst::Mls { rd, rn: x, rm: y, ra: other }),
                (0, Some(k), _) => {
                    self.emit(MInst::Alu { op: AluOp::Rsb, rd, rn: other, op2: shifted(x, Shift::Lsl, k) })
                }
                _ => {
                    return Err(BackendError::Internal("unsupported folded subtraction".into()));
                }
            }
            return Ok(rd);
        }
        if let Some(c) = int_const(self.func, b) {
            let rn = self.value_reg(a)?;
            return Ok(self.add_imm(rn, c.wrapping_neg()));
        }
        let rm = self.value_reg(b)?;
        let rd = self.new_int();
        match int_const(self.func, a) {
            Some(c) if is_arm_imm(c as u32) => {
                self.emit(MInst::Alu { op: AluOp::Rsb, rd, rn: rm, op2: Op2::Imm(c as u32) });
            }
            _ => {
                let rn = self.value_reg(a)?;
                self.emit(MInst::Alu { op: AluOp::Sub, rd, rn, op2: Op2::Reg(rm) });
            }
        }
        Ok(rd)
    }

    fn alu(&mut self, op: AluOp, rn: Reg, op2: Op2) -> Reg {
        let rd = self.new_int();
        self.emit(MInst::Alu { op, rd, rn, op2 });
        rd
    }

    fn mov(&mut self, op2: Op2) -> Reg {
        let rd = self.new_int();
        self.emit(MInst::Mov { rd, op2 });
        rd
    }

    pub(super) fn lower_mul(&mut self, a: Value, b: Value) -> Result<Reg, BackendError> {
        let (x, c) = match (int_const(self.func, a), int_const(self.func, b)) {
            (_, Some(c)) => (a, Some(c)),
            (Some(c), None) => (b, Some(c)),
            (None, None) => (a, None),
        };
        let rn = self.value_reg(x)?;
        let Some(c) = c else {
            let rm = self.value_reg(b)?;
            let rd = self.new_int();
            self.emit(MInst::Mul { rd, rn, rm });
            return Ok(rd);
        };
        let u = c as u32;
        Ok(match c {
            0 => self.materialise(Mat::Int(0)),
            1 => rn,
            -1 => self.alu(AluOp::Rsb, rn, Op2::Imm(0)),
            _ if u.is_power_of_two() => self.mov(Op2::Shifted(rn, Shift::Lsl, u.trailing_zeros() as u8)),
            _ if c > 2 && (u - 1).is_power_of_two() => {
                self.alu(AluOp::Add, rn, Op2::Shifted(rn, Shift::Lsl, (u - 1).trailing_zeros() as u8))
            }
            _ if c > 2 && (u + 1).is_power_of_two() => {
                self.alu(AluOp::Rsb, rn, Op2::Shifted(rn, Shift::Lsl, (u + 1).trailing_zeros() as u8))
            }
            _ => {
                let rm = self.materialise(Mat::Int(c));
                let rd = self.new_int();
                self.emit(MInst::Mul { rd, rn, rm });
                rd
            }
        })
    }

    /// The dividend of `div` (an `sdiv`/`srem`) is never negative where it executes.
    fn non_negative_dividend(&mut self, div: Inst) -> bool {
        let func = self.func;
        let Some(at) = func.inst_block(div) else { return false };
        self.nonneg.get_or_insert_with(|| NonNegative::compute(func)).is_non_negative(func, func.args(div)[0], at)
    }

    /// `sdiv`/`srem` `div` (`rem`: the remainder).
    pub(super) fn lower_div(&mut self, div: Inst, rem: bool) -> Result<Reg, BackendError> {
        let (a, b) = (self.func.args(div)[0], self.func.args(div)[1]);
        let divisor = int_const(self.func, b).filter(|_| self.opts.enabled(BackendStage::ConstDiv));
        if let Some(d) = divisor {
            let n = self.value_reg(a)?;
            let ad = d.unsigned_abs();
            if ad.is_power_of_two() && ad > 1 && d != i32::MIN && self.non_negative_dividend(div) {
                // No rounding correction: `n / 2^k` is a shift, `n % ±2^k` a mask.
                let k = ad.trailing_zeros() as u8;
                if rem {
                    return Ok(if is_arm_imm(ad - 1) {
                        self.alu(AluOp::And, n, Op2::Imm(ad - 1))
                    } else {
                        let high = self.mov(Op2::Shifted(n, Shift::Lsl, 32 - k));
                        self.mov(Op2::Shifted(high, Shift::Lsr, 32 - k))
                    });
                }
                let q = self.mov(Op2::Shifted(n, Shift::Asr, k));
                return Ok(if d < 0 { self.alu(AluOp::Rsb, q, Op2::Imm(0)) } else { q });
            }
            if ad == 1 {
                return Ok(if rem {
                    self.materialise(Mat::Int(0))
                } else if d == 1 {
                    n
                } else {
                    self.alu(AluOp::Rsb, n, Op2::Imm(0))
                });
            }
            if ad.is_power_of_two() && d != i32::MIN {
                let k = ad.trailing_zeros() as u8;
                if rem {
                    // `n % ±2^k` keeps the sign of `n`: mask `|n|` and negate back.
                    let rd = self.new_int();
                    let tmp = (k > 8).then(|| self.new_int());
                    self.emit(MInst::SRemPow2 { rd, rn: n, k, tmp });
                    return Ok(rd);
                }
                // Bias negative dividends by 2^k - 1 so the shift truncates toward zero.
                let sign = if k == 1 { n } else { self.mov(Op2::Shifted(n, Shift::Asr, 31)) };
                let biased = if k >= 2 && self.opts.faults.is_on(crate::faults::ARM_POW2_DIV_NO_BIAS) {
                    n // Fault injection (never on in normal builds): see `crate::faults`.
                } else {
                    self.alu(AluOp::Add, n, Op2::Shifted(sign, Shift::Lsr, 32 - k))
                };
                let q = self.mov(Op2::Shifted(biased, Shift::Asr, k));
                return Ok(if d < 0 { self.alu(AluOp::Rsb, q, Op2::Imm(0)) } else { q });
            }
            if let Some(magic) = DivMagic::for_divisor(d) {
                let q = match self.dominating_quotient(a, b) {
                    Some(q) => q,
                    None => {
                        // A non-negative dividend over a positive divisor has a non-negative
                        // quotient estimate: its rounding correction (adding the sign bit)
                        // adds nothing.
                        let non_negative = d > 0 && self.non_negative_dividend(div);
                        let q = self.magic_quotient(n, magic, non_negative);
                        self.quotient_cache.insert((self.cur, a, b), q);
                        q
                    }
                };
                if !rem {
                    return Ok(q);
                }
                let rm = self.materialise(Mat::Int(d));
                let rd = self.new_int();
                self.emit(MInst::Mls { rd, rn: q, rm, ra: n });
                return Ok(rd);
            }
        }
        let rn = self.value_reg(a)?;
        let rm = self.value_reg(b)?;
        let q = match self.dominating_quotient(a, b) {
            Some(q) => q,
            None => {
                let q = self.new_int();
                self.emit(MInst::Sdiv { rd: q, rn, rm });
                self.quotient_cache.insert((self.cur, a, b), q);
                q
            }
        };
        if !rem {
            return Ok(q);
        }
        let rd = self.new_int();
        self.emit(MInst::Mls { rd, rn: q, rm, ra: rn });
        Ok(rd)
    }

    /// The quotient `a / b` already computed in this block or a dominating one: `a % b`
    /// next to `a / b` (word and bit index, digit and carry) then costs one `mls`, and a
    /// repeated division nothing. The quotient instruction sequence depends only on `a`
    /// and `b` (SSA values, so unchanged since), and the dominating block ran before, so
    /// its register holds exactly the quotient this division would compute.
    fn dominating_quotient(&self, a: Value, b: Value) -> Option<Reg> {
        self.dom_chain.iter().find_map(|&d| self.quotient_cache.get(&(d, a, b)).copied())
    }

    /// `n / d` for a divisor with a magic multiplier: high word of the product, corrected
    /// and shifted, plus one when negative (truncation toward zero) unless `non_negative`
    /// (the quotient is known to be at least zero).
    fn magic_quotient(&mut self, n: Reg, magic: DivMagic, non_negative: bool) -> Reg {
        let m = self.materialise(Mat::Int(magic.multiplier));
        let hi = self.new_int();
        self.emit(MInst::Smmul { rd: hi, rn: n, rm: m });
        let corrected = match magic.correction {
            1 => self.alu(AluOp::Add, hi, Op2::Reg(n)),
            -1 => self.alu(AluOp::Sub, hi, Op2::Reg(n)),
            _ => hi,
        };
        let shifted_q = if magic.shift > 0 {
            self.mov(Op2::Shifted(corrected, Shift::Asr, magic.shift as u8))
        } else {
            corrected
        };
        if non_negative {
            return shifted_q;
        }
        self.alu(AluOp::Add, shifted_q, Op2::Shifted(shifted_q, Shift::Lsr, 31))
    }

    // ----- compares and selects -----------------------------------------------------------

    /// Emits the flag-setting comparison of the `icmp`/`fcmp` `inst`; returns the condition
    /// under which it holds.
    pub(super) fn compare(&mut self, inst: Inst) -> Result<Cond, BackendError> {
        let func = self.func;
        let (a, b) = (func.args(inst)[0], func.args(inst)[1]);
        if self.opts.enabled(BackendStage::OpFold)
            && let Some(test) = rem_pow2_test(func, inst)
            && let Some(ri) = func.def_inst(test.rem)
        {
            let cond = match func.opcode(inst) {
                Opcode::Icmp(cc) => int_cond(cc),
                op => return Err(BackendError::Internal(format!("remainder test of {}", op.mnemonic()))),
            };
            let rn = self.value_reg(func.args(ri)[0])?;
            if test.c == 0 {
                self.emit(MInst::Cmp { op: CmpOp::Tst, rn, op2: Op2::Imm(test.mask) });
                return Ok(cond);
            }
            if self.non_negative_dividend(ri) {
                if test.c < 0 {
                    // Never equal: compare `x` with a value it cannot have (`x ≥ 0`, so
                    // `cmn x, #1` is never equal).
                    self.emit(MInst::Cmp { op: CmpOp::Cmn, rn, op2: Op2::Imm(1) });
                    return Ok(cond);
                }
                if test.c as u32 == test.mask {
                    // All low bits set: `tst` against the complement would need a register;
                    // a single bit (`x % 2 == 1`) is `tst x, #1` with the condition inverted.
                    if test.mask == 1 {
                        self.emit(MInst::Cmp { op: CmpOp::Tst, rn, op2: Op2::Imm(1) });
                        return Ok(cond.invert());
                    }
                }
                let low = self.alu(AluOp::And, rn, Op2::Imm(test.mask));
                self.emit(MInst::Cmp { op: CmpOp::Cmp, rn: low, op2: Op2::Imm(test.c as u32) });
                return Ok(cond);
            }
            // The sign bit and the low bits of `x` against those of `c`.
            let signed_mask = 0x8000_0000 | test.mask;
            let bits = self.alu(AluOp::And, rn, Op2::Imm(signed_mask));
            let expected = test.c as u32 & signed_mask;
            let op2 =
                if is_arm_imm(expected) { Op2::Imm(expected) } else { Op2::Reg(self.materialise(Mat::Int(expected as i32))) };
            self.emit(MInst::Cmp { op: CmpOp::Cmp, rn: bits, op2 });
            return Ok(cond);
        }
        match func.opcode(inst) {
            Opcode::Icmp(cc) => {
                let (x, c, cc) = match (int_const(func, a), int_const(func, b)) {
                    (_, Some(c)) => (a, Some(c), cc),
                    (Some(c), None) => (b, Some(c), cc.swapped()),
                    (None, None) => (a, None, cc),
                };
                let rn = self.value_reg(x)?;
                let (op, op2) = match c {
                    Some(c) if is_arm_imm(c as u32) => (CmpOp::Cmp, Op2::Imm(c as u32)),
                    Some(c) if c != i32::MIN && is_arm_imm(c.wrapping_neg() as u32) => {
                        (CmpOp::Cmn, Op2::Imm(c.wrapping_neg() as u32))
                    }
                    Some(c) => (CmpOp::Cmp, Op2::Reg(self.materialise(Mat::Int(c)))),
                    None => (CmpOp::Cmp, Op2::Reg(self.value_reg(b)?)),
                };
                self.emit(MInst::Cmp { op, rn, op2 });
                Ok(int_cond(cc))
            }
            Opcode::Fcmp(cc) => {
                let is_zero = |v: Value| matches!(func.as_const(v), Some(Const::Float(0 | 0x8000_0000)));
                let (sn, sm, cc) = if is_zero(b) {
                    (self.value_reg(a)?, None, cc)
                } else if is_zero(a) {
                    (self.value_reg(b)?, None, cc.swapped())
                } else {
                    (self.value_reg(a)?, Some(self.value_reg(b)?), cc)
                };
                self.emit(MInst::VCmp { sn, sm });
                Ok(float_cond(cc))
            }
            op => Err(BackendError::Internal(format!("compare of {}", op.mnemonic()))),
        }
    }

    /// Sets the flags from an `i1` value and returns the condition meaning "true".
    pub(super) fn cond(&mut self, c: Value) -> Result<Cond, BackendError> {
        if let Some(ci) = self.func.def_inst(c)
            && self.fold.skipped[ci]
            && matches!(self.func.opcode(ci), Opcode::Icmp(_) | Opcode::Fcmp(_))
        {
            let insts = &self.blocks[self.cur.index()].insts;
            if let Some((b, held, cc, len)) = self.held_flags
                && b == self.cur
                && held == ci
                && len <= insts.len()
                && !insts[len..].iter().any(MInst::writes_flags)
            {
                return Ok(cc);
            }
            let cc = self.compare(ci)?;
            self.held_flags = Some((self.cur, ci, cc, self.blocks[self.cur.index()].insts.len()));
            return Ok(cc);
        }
        let rn = self.value_reg(c)?;
        self.emit(MInst::Cmp { op: CmpOp::Cmp, rn, op2: Op2::Imm(0) });
        Ok(Cond::Ne)
    }

    fn lower_select(&mut self, c: Value, a: Value, b: Value, ty: Type) -> Result<Reg, BackendError> {
        if a == b {
            return self.value_reg(a);
        }
        if let Some(Const::Bool(k)) = self.func.as_const(c) {
            return self.value_reg(if k { a } else { b });
        }
        if class_of(ty) == RegClass::Float {
            // `c ? -b : b` and `c ? a : -a`: a conditional negation (the `fneg` is folded).
            let negation = |x: Value, of: Value| {
                self.func.def_inst(x).is_some_and(|i| self.func.opcode(i) == Opcode::FNeg && self.func.args(i)[0] == of)
            };
            let (kept, negated_when) = if negation(a, b) {
                (Some(b), true)
            } else if negation(b, a) {
                (Some(a), false)
            } else {
                (None, false)
            };
            if let Some(x) = kept {
                let sn = self.value_reg(x)?;
                let cc = self.cond(c)?;
                let cc = if negated_when { cc } else { cc.invert() };
                let sd = self.new_float();
                self.emit(MInst::VMovCond { cc, sd, sn, sm: sn, neg: true });
                return Ok(sd);
            }
            let sn = self.value_reg(b)?;
            let sm = self.value_reg(a)?;
            let cc = self.cond(c)?;
            let sd = self.new_float();
            self.emit(MInst::VMovCond { cc, sd, sn, sm, neg: false });
            return Ok(sd);
        }
        match (int_const(self.func, a), int_const(self.func, b)) {
            (Some(1), Some(0)) | (Some(0), Some(1)) => {
                let cc = self.cond(c)?;
                let rd = self.new_int();
                let cc = if int_const(self.func, a) == Some(1) { cc } else { cc.invert() };
                self.emit(MInst::SetCond { cc, rd });
                return Ok(rd);
            }
            _ => {}
        }
        let rn = self.value_reg(b)?;
        let op2 = self.op2_of(a)?;
        let cc = self.cond(c)?;
        let rd = self.new_int();
        self.emit(MInst::MovCond { cc, rd, rn, op2 });
        Ok(rd)
    }

    // ----- memory -------------------------------------------------------------------------

    pub(super) fn addr_mode(&mut self, addr: Value, kind: MemKind) -> Result<Addr, BackendError> {
        let e = self.fold.addr_expr(self.func, addr);
        self.addr_from_expr(e, kind)
    }

    fn addr_from_expr(&mut self, e: AddrExpr, kind: MemKind) -> Result<Addr, BackendError> {
        match (e.base, e.index) {
            (AddrBase::Alloca(a), None) => Ok(Addr::Frame { obj: FrameObj::Alloca(a), off: e.off }),
            (AddrBase::Global(g), None) => {
                if fits(kind, e.off) {
                    let base = self.materialise(Mat::Global(g, 0));
                    Ok(Addr::Imm { base, off: e.off })
                } else {
                    let base = self.global_addr(g, e.off);
                    Ok(Addr::Imm { base, off: 0 })
                }
            }
            (AddrBase::Reg(v), None) => {
                let base = self.value_reg(v)?;
                if fits(kind, e.off) {
                    Ok(Addr::Imm { base, off: e.off })
                } else {
                    Ok(Addr::Imm { base: self.add_imm(base, e.off), off: 0 })
                }
            }
            (base, Some((iv, sh))) => {
                // `[base, (x + c), lsl #k]` when the program computes `x + c` anyway (a
                // neighbour index `j + 1`, often the induction step): no address arithmetic,
                // and no base register per offset.
                if kind == MemKind::Word && e.off != 0 && e.off % (1 << sh) == 0 {
                    let c = e.off >> sh;
                    let existing = self.existing_index_plus(iv, c);
                    let index = match (existing, base) {
                        (Some(r), _) => Some(r),
                        // A register base has no address to fold the offset into: one
                        // `add` of the index (cheaper than the shifted add of the base, and
                        // shared by every access at this index).
                        (None, AddrBase::Reg(_)) => {
                            let x = self.value_reg(iv)?;
                            Some(self.index_plus(x, iv, c))
                        }
                        (None, _) => None,
                    };
                    if let Some(index) = index {
                        let base = match base {
                            AddrBase::Alloca(a) => self.materialise(Mat::Frame(a, 0)),
                            AddrBase::Global(g) => self.materialise(Mat::Global(g, 0)),
                            AddrBase::Reg(v) => self.value_reg(v)?,
                        };
                        return Ok(Addr::Index { base, index, shift: sh });
                    }
                }
                let index = self.value_reg(iv)?;
                let (base, off) = match base {
                    AddrBase::Alloca(a) => (self.materialise(Mat::Frame(a, e.off)), 0),
                    AddrBase::Global(g) => (self.global_addr(g, e.off), 0),
                    AddrBase::Reg(v) => (self.value_reg(v)?, e.off),
                };
                if kind == MemKind::Word && off == 0 {
                    return Ok(Addr::Index { base, index, shift: sh });
                }
                let sum = self.alu(AluOp::Add, base, shifted(index, Shift::Lsl, sh));
                if fits(kind, off) {
                    Ok(Addr::Imm { base: sum, off })
                } else {
                    Ok(Addr::Imm { base: self.add_imm(sum, off), off: 0 })
                }
            }
        }
    }

    /// The register of an already computed IR value `x + c` (an `add`/`sub` of `x` and a
    /// constant) available here: selected, in this block or one dominating it, and used by
    /// something other than addresses.
    fn existing_index_plus(&self, x: Value, c: i32) -> Option<Reg> {
        let func = self.func;
        func.users(x).iter().find_map(|&u| {
            let r = func.result(u)?;
            if self.fold.skipped[u] || crate::analysis::pointers::split_index(func, r) != Some((x, c)) {
                return None;
            }
            // Only a value computed anyway is free: one only addresses use would be dead
            // once they fold the offset.
            if func.users(r).iter().all(|&w| matches!(func.opcode(w), Opcode::Gep { .. })) {
                return None;
            }
            let block = self.mblock_of.get(&func.inst_block(u)?)?;
            if !self.dom_chain.contains(block) {
                return None;
            }
            self.value_regs.get(&r).copied()
        })
    }

    /// `x + c` in a register, computed once per block and reused in the blocks it dominates.
    fn index_plus(&mut self, x: Reg, xv: Value, c: i32) -> Reg {
        if let Some(r) = self.dom_chain.iter().find_map(|&d| self.index_plus_cache.get(&(d, xv, c)).copied()) {
            return r;
        }
        let r = self.add_imm(x, c);
        self.index_plus_cache.insert((self.cur, xv, c), r);
        r
    }

    /// The value of an address expression in a register.
    pub(super) fn addr_expr_reg(&mut self, e: AddrExpr) -> Result<Reg, BackendError> {
        let (base, off) = match e.base {
            AddrBase::Alloca(a) => (self.materialise(Mat::Frame(a, e.off)), 0),
            AddrBase::Global(g) => (self.global_addr(g, e.off), 0),
            AddrBase::Reg(v) => (self.value_reg(v)?, e.off),
        };
        let sum = match e.index {
            Some((iv, sh)) => {
                let index = self.value_reg(iv)?;
                self.alu(AluOp::Add, base, shifted(index, Shift::Lsl, sh))
            }
            None => base,
        };
        Ok(self.add_imm(sum, off))
    }

    fn lower_gep(&mut self, base: Value, index: Value, scale: u32) -> Result<Reg, BackendError> {
        let rb = self.value_reg(base)?;
        if let Some(c) = int_const(self.func, index) {
            return Ok(self.add_imm(rb, c.wrapping_mul(scale as i32)));
        }
        if scale == 0 {
            return Ok(rb);
        }
        let ri = self.value_reg(index)?;
        if scale.is_power_of_two() {
            return Ok(self.alu(AluOp::Add, rb, shifted(ri, Shift::Lsl, scale.trailing_zeros() as u8)));
        }
        let rs = self.materialise(Mat::Int(scale as i32));
        let rd = self.new_int();
        self.emit(MInst::Mla { rd, rn: ri, rm: rs, ra: rb });
        Ok(rd)
    }

    /// Zeroes `words` words: single stores for a few words, else an inline loop.
    fn lower_memzero(&mut self, addr: Value, words: u32) -> Result<(), BackendError> {
        const INLINE_STORES: u32 = 8;
        if words == 0 {
            return Ok(());
        }
        if words <= INLINE_STORES {
            // Word k is at `at(off + 4k)`: a frame slot or a register plus an offset.
            let (at, off): (Box<dyn Fn(i32) -> Addr>, i32) = match self.addr_mode(addr, MemKind::Word)? {
                Addr::Index { base, index, shift } => {
                    let base = self.alu(AluOp::Add, base, shifted(index, Shift::Lsl, shift));
                    (Box::new(move |off| Addr::Imm { base, off }), 0)
                }
                Addr::Imm { base, off } => (Box::new(move |off| Addr::Imm { base, off }), off),
                Addr::Frame { obj, off } => (Box::new(move |off| Addr::Frame { obj, off }), off),
                Addr::PostInc { .. } => unreachable!("post-increments are made after allocation"),
            };
            let zero = self.materialise(Mat::Int(0));
            for k in 0..words as i32 {
                self.emit(MInst::Str { rs: zero, addr: at(off + 4 * k) });
            }
            return Ok(());
        }
        let base = self.value_reg(addr)?;
        let count = (words / 16 > MEMZERO_UNROLLED_BLOCKS).then(|| self.new_int());
        let (ptr, zero) = (self.new_int(), self.new_int());
        self.emit(MInst::MemZeroLoop { base, words, ptr, count, zero });
        Ok(())
    }
}
