//! A32 and VFP instruction encodings (ARM Architecture Reference Manual, ARMv7-A, chapters
//! A8 and A7), with the choices GNU `as` makes where the syntax allows several encodings:
//! the smallest rotation of a modified immediate, `add`↔`sub`/`mov`↔`mvn`/`cmp`↔`cmn`/
//! `and`↔`bic` when only the negated or inverted immediate encodes, one-register `push`/`pop`
//! as `str`/`ldr` with writeback, `lsl rd, rm, #0` as `mov`.

use smallvec::SmallVec;

use super::parse::{Base, Half, Instruction, Mem, MemOffset, Operand, Reg, ShiftBy, ShiftKind, Special};

/// A relocation an instruction needs (the addend is stored in the instruction, as GNU does).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fixup<'a> {
    /// A branch to `symbol`: `bl` (unconditional) is `R_ARM_CALL`, every other branch
    /// `R_ARM_JUMP24`; resolved here when the target is a local label of the same section.
    Branch { symbol: &'a str, call: bool },
    /// `movw`/`movt` with `:lower16:`/`:upper16:` of `symbol` (+ the addend in the field).
    Half { half: Half, symbol: &'a str },
}

/// What the encoder needs to know about the surroundings.
pub trait Context {
    /// The byte distance from this instruction to `label` when it is a local label of the
    /// current section (numeric local labels `1b`/`1f` included); `None` otherwise.
    fn local_branch(&self, label: &str) -> Option<i64>;
}

pub type Encoded<'a> = (u32, Option<Fixup<'a>>);

fn bad(ins: &Instruction, why: &str) -> String {
    format!("`{}{}`: {why}", ins.base, if ins.dt.is_empty() { String::new() } else { format!(".{}", ins.dt) })
}

fn core(op: &Operand) -> Option<u32> {
    match op {
        Operand::Reg(Reg::Core(r)) => Some(*r),
        _ => None,
    }
}

/// The 12-bit modified immediate of `v`, as GNU picks it (smallest rotation).
pub fn modified_immediate(v: u32) -> Option<u32> {
    (0..16).find_map(|rot| {
        let a = v.rotate_left(2 * rot);
        (a <= 0xff).then_some(a | (rot << 8))
    })
}

const DP_AND: u32 = 0;
const DP_EOR: u32 = 1;
const DP_SUB: u32 = 2;
const DP_RSB: u32 = 3;
const DP_ADD: u32 = 4;
const DP_ADC: u32 = 5;
const DP_SBC: u32 = 6;
const DP_RSC: u32 = 7;
const DP_TST: u32 = 8;
const DP_TEQ: u32 = 9;
const DP_CMP: u32 = 10;
const DP_CMN: u32 = 11;
const DP_ORR: u32 = 12;
const DP_MOV: u32 = 13;
const DP_BIC: u32 = 14;
const DP_MVN: u32 = 15;

fn dp_opcode(base: Base) -> Option<u32> {
    Some(match base {
        Base::And => DP_AND,
        Base::Eor => DP_EOR,
        Base::Sub => DP_SUB,
        Base::Rsb => DP_RSB,
        Base::Add => DP_ADD,
        Base::Adc => DP_ADC,
        Base::Sbc => DP_SBC,
        Base::Rsc => DP_RSC,
        Base::Tst => DP_TST,
        Base::Teq => DP_TEQ,
        Base::Cmp => DP_CMP,
        Base::Cmn => DP_CMN,
        Base::Orr => DP_ORR,
        Base::Mov => DP_MOV,
        Base::Bic => DP_BIC,
        Base::Mvn => DP_MVN,
        _ => return None,
    })
}

/// The alternative opcode whose immediate is the negation (or inversion) of this one's.
fn immediate_alternative(opcode: u32, v: u32) -> Option<(u32, u32)> {
    match opcode {
        DP_ADD => Some((DP_SUB, v.wrapping_neg())),
        DP_SUB => Some((DP_ADD, v.wrapping_neg())),
        DP_CMP => Some((DP_CMN, v.wrapping_neg())),
        DP_CMN => Some((DP_CMP, v.wrapping_neg())),
        DP_MOV => Some((DP_MVN, !v)),
        DP_MVN => Some((DP_MOV, !v)),
        DP_AND => Some((DP_BIC, !v)),
        DP_BIC => Some((DP_AND, !v)),
        DP_ADC => Some((DP_SBC, !v)),
        DP_SBC => Some((DP_ADC, !v)),
        _ => None,
    }
}

/// The 12-bit register form of operand 2: `rm`, `rm, <shift> #n`, `rm, <shift> rs`, `rrx`.
fn shifted_register(rm: u32, shift: Option<&Operand>) -> Result<u32, String> {
    let Some(shift) = shift else { return Ok(rm) };
    let Operand::Shift(kind, by) = shift else { return Err("expected a shift".into()) };
    Ok(match *by {
        ShiftBy::Rrx => (0b11 << 5) | rm,
        ShiftBy::Reg(rs) => (rs << 8) | ((*kind as u32) << 5) | (1 << 4) | rm,
        ShiftBy::Imm(n) => {
            let field = match (kind, n) {
                (ShiftKind::Lsl, 0..=31) => n,
                (ShiftKind::Lsr | ShiftKind::Asr, 1..=32) => n % 32,
                (ShiftKind::Ror, 1..=31) => n,
                _ => return Err(format!("shift amount {n} out of range")),
            };
            (field << 7) | ((*kind as u32) << 5) | rm
        }
    })
}

fn data_processing(ins: &Instruction, opcode: u32) -> Result<u32, String> {
    let ops = &ins.operands;
    let s = u32::from(ins.set_flags || matches!(opcode, DP_TST | DP_TEQ | DP_CMP | DP_CMN));
    let first = ops.first().and_then(core).ok_or_else(|| bad(ins, "expected a register"))?;
    let (rd, rn, rest) = match opcode {
        DP_TST | DP_TEQ | DP_CMP | DP_CMN => (0, first, &ops[1..]),
        DP_MOV | DP_MVN => (first, 0, &ops[1..]),
        _ => {
            let rd = first;
            // `add rd, #imm` means `add rd, rd, #imm`.
            match ops.get(1) {
                Some(Operand::Reg(Reg::Core(rn))) if ops.len() >= 3 => (rd, *rn, &ops[2..]),
                _ => (rd, rd, &ops[1..]),
            }
        }
    };
    let cond = ins.cond.0 << 28;
    match rest {
        [Operand::Imm(v)] => {
            let v = *v as u32;
            let (opcode, field) = match modified_immediate(v) {
                Some(f) => (opcode, f),
                None => match immediate_alternative(opcode, v).and_then(|(alt, w)| modified_immediate(w).map(|f| (alt, f))) {
                    Some(found) => found,
                    None => return Err(bad(ins, &format!("immediate {v:#x} cannot be encoded"))),
                },
            };
            Ok(cond | (1 << 25) | (opcode << 21) | (s << 20) | (rn << 16) | (rd << 12) | field)
        }
        [Operand::Reg(Reg::Core(rm)), shift @ ..] if shift.len() <= 1 => {
            Ok(cond | (opcode << 21) | (s << 20) | (rn << 16) | (rd << 12) | shifted_register(*rm, shift.first())?)
        }
        _ => Err(bad(ins, "unsupported operands")),
    }
}

/// `lsl rd, rm, #n` / `asr rd, rm, rs` / `rrx rd, rm`: `mov` with a shifted operand.
fn shift_alias(ins: &Instruction) -> Result<u32, String> {
    let ops = &ins.operands;
    let kind = match ins.base {
        Base::Lsl => ShiftKind::Lsl,
        Base::Lsr => ShiftKind::Lsr,
        Base::Asr => ShiftKind::Asr,
        _ => ShiftKind::Ror,
    };
    let rd = ops.first().and_then(core).ok_or_else(|| bad(ins, "expected a register"))?;
    let rm = core(ops.get(1).ok_or_else(|| bad(ins, "missing operand"))?).ok_or_else(|| bad(ins, "expected a register"))?;
    let by = match (ins.base, ops.get(2)) {
        (Base::Rrx, None) => ShiftBy::Rrx,
        (_, Some(Operand::Imm(0))) if kind == ShiftKind::Lsl => return Ok(mov_register(ins, rd, rm)),
        (_, Some(Operand::Imm(n))) => ShiftBy::Imm(*n as u32),
        (_, Some(Operand::Reg(Reg::Core(rs)))) => ShiftBy::Reg(*rs),
        _ => return Err(bad(ins, "unsupported operands")),
    };
    let field = shifted_register(rm, Some(&Operand::Shift(kind, by)))?;
    Ok((ins.cond.0 << 28) | (DP_MOV << 21) | (u32::from(ins.set_flags) << 20) | (rd << 12) | field)
}

fn mov_register(ins: &Instruction, rd: u32, rm: u32) -> u32 {
    (ins.cond.0 << 28) | (DP_MOV << 21) | (u32::from(ins.set_flags) << 20) | (rd << 12) | rm
}

fn regs<const N: usize>(ins: &Instruction) -> Result<[u32; N], String> {
    let mut out = [0; N];
    if ins.operands.len() != N {
        return Err(bad(ins, &format!("expected {N} registers")));
    }
    for (slot, op) in out.iter_mut().zip(&ins.operands) {
        *slot = core(op).ok_or_else(|| bad(ins, "expected a core register"))?;
    }
    Ok(out)
}

fn multiply(ins: &Instruction) -> Result<u32, String> {
    let c = ins.cond.0 << 28;
    let s = u32::from(ins.set_flags) << 20;
    Ok(match ins.base {
        Base::Mul => {
            // `mul rd, rn` means `mul rd, rd, rn`.
            let [rd, rn, rm] = if ins.operands.len() == 2 {
                let [rd, rm] = regs::<2>(ins)?;
                [rd, rd, rm]
            } else {
                regs::<3>(ins)?
            };
            c | s | (rd << 16) | (rm << 8) | 0x90 | rn
        }
        Base::Mla => {
            let [rd, rn, rm, ra] = regs::<4>(ins)?;
            c | (1 << 21) | s | (rd << 16) | (ra << 12) | (rm << 8) | 0x90 | rn
        }
        Base::Mls => {
            let [rd, rn, rm, ra] = regs::<4>(ins)?;
            c | 0x0060_0090 | (rd << 16) | (ra << 12) | (rm << 8) | rn
        }
        Base::Smull | Base::Umull => {
            let [lo, hi, rn, rm] = regs::<4>(ins)?;
            let op = if ins.base == Base::Smull { 0x00c0_0090 } else { 0x0080_0090 };
            c | op | s | (hi << 16) | (lo << 12) | (rm << 8) | rn
        }
        Base::Smmul => {
            let [rd, rn, rm] = regs::<3>(ins)?;
            c | 0x0750_f010 | (rd << 16) | (rm << 8) | rn
        }
        Base::Sdiv | Base::Udiv => {
            let [rd, rn, rm] = regs::<3>(ins)?;
            let op = if ins.base == Base::Sdiv { 0x0710_f010 } else { 0x0730_f010 };
            c | op | (rd << 16) | (rm << 8) | rn
        }
        _ => unreachable!("multiply called for {}", ins.base),
    })
}

fn bitfield(ins: &Instruction) -> Result<u32, String> {
    let c = ins.cond.0 << 28;
    let imm = |i: usize| match ins.operands.get(i) {
        Some(Operand::Imm(v)) if (0..=32).contains(v) => Ok(*v as u32),
        _ => Err(bad(ins, "expected #lsb, #width")),
    };
    let reg = |i: usize| ins.operands.get(i).and_then(core).ok_or_else(|| bad(ins, "expected a register"));
    match ins.base {
        Base::Ubfx | Base::Sbfx => {
            let (rd, rn, lsb, width) = (reg(0)?, reg(1)?, imm(2)?, imm(3)?);
            if width == 0 || lsb + width > 32 {
                return Err(bad(ins, "bit field out of range"));
            }
            let op = if ins.base == Base::Ubfx { 0x07e0_0050 } else { 0x07a0_0050 };
            Ok(c | op | ((width - 1) << 16) | (rd << 12) | (lsb << 7) | rn)
        }
        Base::Bfi | Base::Bfc => {
            let (rd, rn, at) = if ins.base == Base::Bfi { (reg(0)?, reg(1)?, 2) } else { (reg(0)?, 15, 1) };
            let (lsb, width) = (imm(at)?, imm(at + 1)?);
            if width == 0 || lsb + width > 32 {
                return Err(bad(ins, "bit field out of range"));
            }
            Ok(c | 0x07c0_0010 | ((lsb + width - 1) << 16) | (rd << 12) | (lsb << 7) | rn)
        }
        _ => {
            let (rd, rm) = (reg(0)?, reg(1)?);
            Ok(c | 0x016f_0f10 | (rd << 12) | rm)
        }
    }
}

/// The memory operand of a load or store, with a post-index offset taken from the next
/// operand when there is one.
fn memory_operand(ins: &Instruction, at: usize) -> Result<Mem, String> {
    let Some(Operand::Mem(mem)) = ins.operands.get(at) else { return Err(bad(ins, "expected a memory operand")) };
    let mut mem = mem.clone();
    match &ins.operands[at + 1..] {
        [] => {}
        [Operand::Imm(v)] => {
            mem.post = true;
            mem.offset = MemOffset::Imm(*v);
        }
        [Operand::Reg(Reg::Core(rm)), shift @ ..] if shift.len() <= 1 => {
            let (kind, amount) = match shift.first() {
                Some(Operand::Shift(k, ShiftBy::Imm(n))) => (*k, *n),
                None => (ShiftKind::Lsl, 0),
                _ => return Err(bad(ins, "unsupported post-index shift")),
            };
            mem.post = true;
            mem.offset = MemOffset::Reg(*rm, kind, amount);
        }
        _ => return Err(bad(ins, "unsupported operands after the address")),
    }
    Ok(mem)
}

/// `ldr`/`str`/`ldrb`/`strb` (word and byte, 12-bit immediate or shifted register).
fn load_store_word(ins: &Instruction, rt: u32, mem: &Mem, load: bool, byte: bool) -> Result<u32, String> {
    let p = u32::from(!mem.post);
    let w = u32::from(mem.writeback && !mem.post);
    let base = (ins.cond.0 << 28) | (1 << 26) | (p << 24) | (u32::from(byte) << 22) | (w << 21) | (u32::from(load) << 20);
    match &mem.offset {
        MemOffset::Imm(off) => {
            let (u, mag) = if *off < 0 || (*off == 0 && mem.subtract) { (0, off.unsigned_abs()) } else { (1, *off as u64) };
            if mag > 4095 {
                return Err(bad(ins, &format!("offset {off} out of range")));
            }
            Ok(base | (u << 23) | (mem.base << 16) | (rt << 12) | mag as u32)
        }
        MemOffset::Reg(rm, kind, amount) => {
            let u = u32::from(!mem.subtract);
            let shift_operand = Operand::Shift(*kind, ShiftBy::Imm(*amount));
            let shift = shifted_register(*rm, (*amount != 0).then_some(&shift_operand))?;
            Ok(base | (1 << 25) | (u << 23) | (mem.base << 16) | (rt << 12) | shift)
        }
    }
}

/// `ldrh`/`strh`/`ldrsb`/`ldrsh`/`ldrd`/`strd` (8-bit split immediate or plain register).
fn load_store_half(ins: &Instruction, rt: u32, mem: &Mem) -> Result<u32, String> {
    let (load, sh) = match ins.base {
        Base::Ldrh => (1, 0b01),
        Base::Strh => (0, 0b01),
        Base::Ldrsb => (1, 0b10),
        Base::Ldrsh => (1, 0b11),
        Base::Ldrd => (0, 0b10),
        _ => (0, 0b11), // strd
    };
    let p = u32::from(!mem.post);
    let w = u32::from(mem.writeback && !mem.post);
    let base = (ins.cond.0 << 28) | (p << 24) | (w << 21) | (load << 20) | (mem.base << 16) | (rt << 12) | (1 << 7) | (sh << 5) | (1 << 4);
    match &mem.offset {
        MemOffset::Imm(off) => {
            let (u, mag) = if *off < 0 { (0, off.unsigned_abs()) } else { (1, *off as u64) };
            if mag > 255 {
                return Err(bad(ins, &format!("offset {off} out of range")));
            }
            let mag = mag as u32;
            Ok(base | (u << 23) | (1 << 22) | ((mag >> 4) << 8) | (mag & 0xf))
        }
        MemOffset::Reg(rm, _, 0) => Ok(base | (u32::from(!mem.subtract) << 23) | rm),
        MemOffset::Reg(..) => Err(bad(ins, "a halfword access cannot shift its index")),
    }
}

fn load_store(ins: &Instruction) -> Result<u32, String> {
    let rt = ins.operands.first().and_then(core).ok_or_else(|| bad(ins, "expected a register"))?;
    let at = if matches!(ins.base, Base::Ldrd | Base::Strd) { 2 } else { 1 };
    let mem = memory_operand(ins, at)?;
    match ins.base {
        Base::Ldr | Base::Str | Base::Ldrb | Base::Strb => {
            load_store_word(ins, rt, &mem, matches!(ins.base, Base::Ldr | Base::Ldrb), matches!(ins.base, Base::Ldrb | Base::Strb))
        }
        _ => load_store_half(ins, rt, &mem),
    }
}

fn core_list(ins: &Instruction, list: &[Reg]) -> Result<u32, String> {
    list.iter().try_fold(0u32, |mask, r| match r {
        Reg::Core(n) => Ok(mask | (1 << n)),
        _ => Err(bad(ins, "expected core registers")),
    })
}

fn block_transfer(ins: &Instruction) -> Result<u32, String> {
    let c = ins.cond.0 << 28;
    let (base, writeback, list) = match ins.base {
        Base::Push | Base::Pop => {
            let [Operand::List(list)] = ins.operands.as_slice() else { return Err(bad(ins, "expected a register list")) };
            (13, true, list)
        }
        _ => match ins.operands.as_slice() {
            [Operand::Reg(Reg::Core(b)), Operand::List(list)] => (*b, false, list),
            [Operand::RegWriteback(Reg::Core(b)), Operand::List(list)] => (*b, true, list),
            _ => return Err(bad(ins, "expected a base register and a register list")),
        },
    };
    let mask = core_list(ins, list)?;
    // GNU `as` turns a one-register push/pop into str/ldr with writeback.
    if matches!(ins.base, Base::Push | Base::Pop) && mask.count_ones() == 1 {
        let rt = mask.trailing_zeros();
        return Ok(if ins.base == Base::Push { c | 0x052d_0004 | (rt << 12) } else { c | 0x049d_0004 | (rt << 12) });
    }
    let (p, u, l) = match ins.base {
        Base::Push | Base::Stmdb | Base::Stmfd => (1, 0, 0),
        Base::Pop | Base::Ldm | Base::Ldmia | Base::Ldmfd => (0, 1, 1),
        _ => (0, 1, 0), // stm, stmia
    };
    Ok(c | (0b100 << 25) | (p << 24) | (u << 23) | (u32::from(writeback) << 21) | (l << 20) | (base << 16) | mask)
}

fn branch<'a>(ins: &Instruction<'a>, cx: &dyn Context) -> Result<Encoded<'a>, String> {
    let c = ins.cond.0 << 28;
    if ins.base == Base::Bx || ins.base == Base::Blx {
        let rm = ins.operands.first().and_then(core).ok_or_else(|| bad(ins, "expected a register"))?;
        let op = if ins.base == Base::Bx { 0x012f_ff10 } else { 0x012f_ff30 };
        return Ok((c | op | rm, None));
    }
    let Some(Operand::Symbol(target, 0)) = ins.operands.first() else { return Err(bad(ins, "expected a label")) };
    let link = u32::from(ins.base == Base::Bl) << 24;
    let word = c | (0b101 << 25) | link;
    match cx.local_branch(target) {
        Some(distance) => {
            let field = (distance - 8) >> 2;
            if distance % 4 != 0 || !(-(1 << 23)..(1 << 23)).contains(&field) {
                return Err(bad(ins, "branch target out of range"));
            }
            Ok((word | (field as u32 & 0x00ff_ffff), None))
        }
        // The addend -8 (the pc bias), as GNU stores it.
        None => Ok((word | 0x00ff_fffe, Some(Fixup::Branch { symbol: target, call: ins.base == Base::Bl && ins.cond.0 == 14 }))),
    }
}

fn mov_wide<'a>(ins: &Instruction<'a>) -> Result<Encoded<'a>, String> {
    let rd = ins.operands.first().and_then(core).ok_or_else(|| bad(ins, "expected a register"))?;
    let top = if ins.base == Base::Movt { 0x0340_0000 } else { 0x0300_0000 };
    let pack = |v: u32| (ins.cond.0 << 28) | top | ((v >> 12) << 16) | (rd << 12) | (v & 0xfff);
    match ins.operands.get(1) {
        Some(Operand::Imm(v)) if (0..=0xffff).contains(v) => Ok((pack(*v as u32), None)),
        Some(Operand::Half(half, symbol, addend)) => {
            let expected = if ins.base == Base::Movt { Half::Upper } else { Half::Lower };
            if *half != expected {
                return Err(bad(ins, "movw takes :lower16:, movt :upper16:"));
            }
            Ok((pack(*addend as u32 & 0xffff), Some(Fixup::Half { half: *half, symbol })))
        }
        _ => Err(bad(ins, "expected #imm16 or #:lower16:/#:upper16: of a symbol")),
    }
}

// ---- VFP -----------------------------------------------------------------------------------

/// A single (`s`) register's 5-bit number split as (Vx, x) — `Vd:D` — or a double's (`D:Vd`).
fn vreg(r: &Reg) -> Option<(u32, u32, bool)> {
    match *r {
        Reg::S(n) => Some((n >> 1, n & 1, false)),
        Reg::D(n) => Some((n & 0xf, n >> 4, true)),
        Reg::Core(_) => None,
    }
}

fn vd(r: &Reg) -> u32 {
    let (v, x, _) = vreg(r).unwrap_or((0, 0, false));
    (x << 22) | (v << 12)
}

fn vn(r: &Reg) -> u32 {
    let (v, x, _) = vreg(r).unwrap_or((0, 0, false));
    (x << 7) | (v << 16)
}

fn vm(r: &Reg) -> u32 {
    let (v, x, _) = vreg(r).unwrap_or((0, 0, false));
    (x << 5) | v
}

fn vfp_regs(ins: &Instruction) -> Result<SmallVec<[Reg; 4]>, String> {
    ins.operands
        .iter()
        .map(|o| match o {
            Operand::Reg(r @ (Reg::S(_) | Reg::D(_))) => Ok(*r),
            _ => Err(bad(ins, "expected VFP registers")),
        })
        .collect()
}

/// `sz` (bit 8) for `.f32`/`.f64`, checked against the registers.
fn size_bit(ins: &Instruction, regs: &[Reg]) -> Result<u32, String> {
    let double = match &*ins.dt {
        "f32" => false,
        "f64" => true,
        _ => return Err(bad(ins, "expected .f32 or .f64")),
    };
    if regs.iter().any(|r| matches!(r, Reg::D(_)) != double) {
        return Err(bad(ins, "register size does not match the data type"));
    }
    Ok(u32::from(double) << 8)
}

fn vfp_arith(ins: &Instruction) -> Result<u32, String> {
    let regs = vfp_regs(ins)?;
    let sz = size_bit(ins, &regs)?;
    let c = (ins.cond.0 << 28) | 0x0e00_0a00 | sz;
    let three = |op: u32| -> Result<u32, String> {
        let [d, n, m] = regs.as_slice() else { return Err(bad(ins, "expected three registers")) };
        Ok(c | op | vd(d) | vn(n) | vm(m))
    };
    let two = |op: u32| -> Result<u32, String> {
        let [d, m] = regs.as_slice() else { return Err(bad(ins, "expected two registers")) };
        Ok(c | op | vd(d) | vm(m))
    };
    match ins.base {
        Base::Vadd => three(0x0030_0000),
        Base::Vsub => three(0x0030_0040),
        Base::Vmul => three(0x0020_0000),
        Base::Vnmul => three(0x0020_0040),
        Base::Vdiv => three(0x0080_0000),
        Base::Vmla => three(0),
        Base::Vmls => three(0x0000_0040),
        Base::Vnmls => three(0x0010_0000),
        Base::Vnmla => three(0x0010_0040),
        Base::Vneg => two(0x00b1_0040),
        Base::Vabs => two(0x00b0_00c0),
        Base::Vsqrt => two(0x00b1_00c0),
        _ => unreachable!("vfp_arith called for {}", ins.base),
    }
}

/// The 8-bit VFP immediate of `v` (`±(16..31)/16 · 2^(-3..4)`), as `imm4H:imm4L`.
fn vfp_immediate(v: f64) -> Option<u32> {
    let f = v as f32;
    if f64::from(f) != v || f == 0.0 || !f.is_finite() {
        return None;
    }
    let bits = f.to_bits();
    let sign = bits >> 31;
    let exp = ((bits >> 23) & 0xff) as i32 - 127;
    let frac = bits & 0x7f_ffff;
    if frac & 0x7_ffff != 0 || !(-3..=4).contains(&exp) {
        return None;
    }
    // imm8 = a:b:cd:efgh with b = NOT(exp bit 7)...; for single precision the exponent is
    // NOT(b):b:b:b:b:b:cd, so exp - 127 + 3 fits in 3 bits with the rules below.
    let e = (exp + 3) as u32; // 0..=7
    let b = u32::from(e & 0b100 == 0);
    let cd = e & 0b11;
    Some((sign << 7) | (b << 6) | (cd << 4) | (frac >> 19))
}

fn vmov(ins: &Instruction) -> Result<u32, String> {
    let c = ins.cond.0 << 28;
    match ins.operands.as_slice() {
        [Operand::Reg(d @ (Reg::S(_) | Reg::D(_))), Operand::Float(v)] => {
            let sz = size_bit(ins, &[*d])?;
            let imm = vfp_immediate(*v).ok_or_else(|| bad(ins, &format!("{v} is not a VFP immediate")))?;
            Ok(c | 0x0eb0_0a00 | sz | vd(d) | ((imm >> 4) << 16) | (imm & 0xf))
        }
        [Operand::Reg(d @ (Reg::S(_) | Reg::D(_))), Operand::Reg(m @ (Reg::S(_) | Reg::D(_)))] => {
            let sz = size_bit(ins, &[*d, *m])?;
            Ok(c | 0x0eb0_0a40 | sz | vd(d) | vm(m))
        }
        [Operand::Reg(n @ Reg::S(_)), Operand::Reg(Reg::Core(rt))] => Ok(c | 0x0e00_0a10 | vn(n) | (rt << 12)),
        [Operand::Reg(Reg::Core(rt)), Operand::Reg(n @ Reg::S(_))] => Ok(c | 0x0e10_0a10 | vn(n) | (rt << 12)),
        [Operand::Reg(m @ Reg::D(_)), Operand::Reg(Reg::Core(rt)), Operand::Reg(Reg::Core(rt2))] => {
            Ok(c | 0x0c40_0b10 | (rt2 << 16) | (rt << 12) | vm(m))
        }
        [Operand::Reg(Reg::Core(rt)), Operand::Reg(Reg::Core(rt2)), Operand::Reg(m @ Reg::D(_))] => {
            Ok(c | 0x0c50_0b10 | (rt2 << 16) | (rt << 12) | vm(m))
        }
        _ => Err(bad(ins, "unsupported operands")),
    }
}

fn vcmp(ins: &Instruction) -> Result<u32, String> {
    let c = ins.cond.0 << 28;
    let e = u32::from(ins.base == Base::Vcmpe) << 7;
    match ins.operands.as_slice() {
        [Operand::Reg(d), Operand::Reg(m)] => {
            let sz = size_bit(ins, &[*d, *m])?;
            Ok(c | 0x0eb4_0a40 | sz | e | vd(d) | vm(m))
        }
        [Operand::Reg(d), Operand::Imm(0) | Operand::Float(0.0)] => {
            let sz = size_bit(ins, &[*d])?;
            Ok(c | 0x0eb5_0a40 | sz | e | vd(d))
        }
        _ => Err(bad(ins, "unsupported operands")),
    }
}

fn vcvt(ins: &Instruction) -> Result<u32, String> {
    let c = ins.cond.0 << 28;
    let [d, m] = vfp_regs(ins)?[..] else { return Err(bad(ins, "expected two registers")) };
    let s = |r: &Reg| matches!(r, Reg::S(_));
    let round_zero = u32::from(ins.base == Base::Vcvt) << 7;
    let word = match &*ins.dt {
        "f64.f32" if matches!(d, Reg::D(_)) && s(&m) => 0x0eb7_0ac0,
        "f32.f64" if s(&d) && matches!(m, Reg::D(_)) => 0x0eb7_0bc0,
        "f32.s32" if s(&d) && s(&m) => 0x0eb8_0ac0,
        "f32.u32" if s(&d) && s(&m) => 0x0eb8_0a40,
        "f64.s32" if matches!(d, Reg::D(_)) && s(&m) => 0x0eb8_0bc0,
        "s32.f32" if s(&d) && s(&m) => 0x0ebd_0a40 | round_zero,
        "u32.f32" if s(&d) && s(&m) => 0x0ebc_0a40 | round_zero,
        "s32.f64" if s(&d) && matches!(m, Reg::D(_)) => 0x0ebd_0b40 | round_zero,
        _ => return Err(bad(ins, "unsupported conversion")),
    };
    Ok(c | word | vd(&d) | vm(&m))
}

fn vldr_vstr(ins: &Instruction) -> Result<u32, String> {
    let Some(Operand::Reg(r @ (Reg::S(_) | Reg::D(_)))) = ins.operands.first() else {
        return Err(bad(ins, "expected a VFP register"));
    };
    let mem = memory_operand(ins, 1)?;
    let MemOffset::Imm(off) = mem.offset else { return Err(bad(ins, "expected an immediate offset")) };
    if mem.post || mem.writeback || off % 4 != 0 || off.unsigned_abs() > 1020 {
        return Err(bad(ins, &format!("offset {off} out of range")));
    }
    let u = u32::from(off >= 0) << 23;
    let l = u32::from(ins.base == Base::Vldr) << 20;
    let sz = u32::from(matches!(r, Reg::D(_))) << 8;
    Ok((ins.cond.0 << 28) | 0x0d00_0a00 | u | l | sz | vd(r) | (mem.base << 16) | (off.unsigned_abs() as u32 / 4))
}

fn vfp_block(ins: &Instruction) -> Result<u32, String> {
    let (base, writeback, list) = match (ins.base, ins.operands.as_slice()) {
        (Base::Vpush | Base::Vpop, [Operand::List(list)]) => (13, true, list),
        (_, [Operand::Reg(Reg::Core(b)), Operand::List(list)]) => (*b, false, list),
        (_, [Operand::RegWriteback(Reg::Core(b)), Operand::List(list)]) => (*b, true, list),
        _ => return Err(bad(ins, "expected a base register and a register list")),
    };
    let first = list.first().ok_or_else(|| bad(ins, "empty register list"))?;
    let double = matches!(first, Reg::D(_));
    let contiguous = list.windows(2).all(|w| match (w[0], w[1]) {
        (Reg::S(a), Reg::S(b)) | (Reg::D(a), Reg::D(b)) => b == a + 1,
        _ => false,
    });
    if !contiguous {
        return Err(bad(ins, "the register list must be consecutive registers of one kind"));
    }
    let (p, u, l) = match ins.base {
        Base::Vpush | Base::Vstmdb => (1, 0, 0),
        Base::Vpop | Base::Vldm | Base::Vldmia => (0, 1, 1),
        Base::Vldmdb => (1, 0, 1),
        _ => (0, 1, 0), // vstm, vstmia
    };
    let words = if double { 2 * list.len() } else { list.len() } as u32;
    let sz = u32::from(double) << 8;
    Ok((ins.cond.0 << 28)
        | 0x0c00_0a00
        | (p << 24)
        | (u << 23)
        | (u32::from(writeback) << 21)
        | (l << 20)
        | (base << 16)
        | sz
        | vd(first)
        | words)
}

fn vmrs(ins: &Instruction) -> Result<u32, String> {
    match ins.operands.as_slice() {
        [Operand::Special(Special::ApsrNzcv), Operand::Special(Special::Fpscr)] => Ok((ins.cond.0 << 28) | 0x0ef1_fa10),
        [Operand::Reg(Reg::Core(rt)), Operand::Special(Special::Fpscr)] => Ok((ins.cond.0 << 28) | 0x0ef1_0a10 | (rt << 12)),
        _ => Err(bad(ins, "unsupported operands")),
    }
}

/// Whether encoding `ins` needs to know where labels are: a `b`/`bl` to a label (which
/// [`encode`] resolves through its [`Context`] when the label is local). Every other
/// instruction encodes from its text alone, and never asks its context.
pub fn needs_layout(ins: &Instruction) -> bool {
    matches!(ins.base, Base::B | Base::Bl) && matches!(ins.operands.first(), Some(Operand::Symbol(_, 0)))
}

/// Encodes one instruction.
pub fn encode<'a>(ins: &Instruction<'a>, cx: &dyn Context) -> Result<Encoded<'a>, String> {
    let plain = |w: Result<u32, String>| w.map(|w| (w, None));
    if let Some(op) = dp_opcode(ins.base) {
        return plain(data_processing(ins, op));
    }
    match ins.base {
        Base::And | Base::Eor | Base::Sub | Base::Rsb | Base::Add | Base::Adc | Base::Sbc | Base::Rsc | Base::Tst | Base::Teq | Base::Cmp
        | Base::Cmn | Base::Orr | Base::Mov | Base::Bic | Base::Mvn => unreachable!("data processing is encoded above"),
        Base::Lsl | Base::Lsr | Base::Asr | Base::Ror | Base::Rrx => plain(shift_alias(ins)),
        Base::Nop => Ok(((ins.cond.0 << 28) | 0x0320_f000, None)),
        Base::Mul | Base::Mla | Base::Mls | Base::Smull | Base::Umull | Base::Smmul | Base::Sdiv | Base::Udiv => plain(multiply(ins)),
        Base::Ubfx | Base::Sbfx | Base::Bfi | Base::Bfc | Base::Clz => plain(bitfield(ins)),
        Base::Ldr | Base::Str | Base::Ldrb | Base::Strb | Base::Ldrh | Base::Strh | Base::Ldrsb | Base::Ldrsh | Base::Ldrd | Base::Strd => {
            plain(load_store(ins))
        }
        Base::Push | Base::Pop | Base::Ldm | Base::Ldmia | Base::Ldmfd | Base::Stm | Base::Stmdb | Base::Stmfd => plain(block_transfer(ins)),
        Base::B | Base::Bl | Base::Bx | Base::Blx => branch(ins, cx),
        Base::Movw | Base::Movt => mov_wide(ins),
        Base::Vadd | Base::Vsub | Base::Vmul | Base::Vnmul | Base::Vdiv | Base::Vmla | Base::Vmls | Base::Vnmls | Base::Vnmla | Base::Vneg | Base::Vabs | Base::Vsqrt => {
            plain(vfp_arith(ins))
        }
        Base::Vmov => plain(vmov(ins)),
        Base::Vcmp | Base::Vcmpe => plain(vcmp(ins)),
        Base::Vcvt | Base::Vcvtr => plain(vcvt(ins)),
        Base::Vldr | Base::Vstr => plain(vldr_vstr(ins)),
        Base::Vpush | Base::Vpop | Base::Vstm | Base::Vstmia | Base::Vstmdb | Base::Vldm | Base::Vldmia | Base::Vldmdb => {
            plain(vfp_block(ins))
        }
        Base::Vmrs => plain(vmrs(ins)),
    }
}
