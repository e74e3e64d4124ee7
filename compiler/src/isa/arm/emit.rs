//! Assembly text for GNU `as` (unified syntax, ARM state).
//!
//! Pseudo-instructions are expanded here, with `ip` (`r12`, never allocated) as the scratch
//! register: stack offsets outside an instruction's immediate range
//! (`ldr`/`str` ±4095, `vldr`/`vstr` ±1020 in multiples of 4) are built in `ip` first,
//! 32-bit constants become `movw`/`movt`, symbol addresses `movw`/`movt` with
//! `:lower16:`/`:upper16:`. `d16`–`d19` (never allocated) serve the `putf` double
//! conversion and the zeroing loop.
//!
//! Layout of the output: the `.text` section opens with the global label
//! `__sysy_prog_begin` and closes with `__sysy_prog_end`, so tools can tell the program's own
//! instructions from the runtime library's. Initialised globals go to `.data` (or `.rodata`
//! when declared `const`), zero-initialised ones to `.bss`; runs of zero elements inside
//! initialisers become `.zero` directives. Every machine block gets a comment naming the IR
//! block (or CFG edge) it came from.

use std::fmt::{self, Write};

use regalloc2::Block;

use super::frame::FrameLayout;
use super::imm::{imm_text, is_arm_imm, load_imm};
use super::mir::{Addr, BlockOrigin, MInst, Op2, PFunction, Reg};
use super::{Symbols, regs, string_label};
use crate::ir::{Const, Module};

/// Register and operand texts are written straight into the output where they are
/// formatted rather than made into strings first: the emitter writes several per
/// instruction, and the campaign emits (and assembles) every configuration it checks.
fn reg(r: Reg) -> RegText {
    RegText::Reg(r)
}

#[derive(Clone, Copy)]
enum RegText {
    Reg(Reg),
    /// A register the emitter names itself (`sp`, `d16`).
    Named(&'static str),
}

impl fmt::Display for RegText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            RegText::Reg(Reg::Phys(p)) => regs::write_name(f, p),
            // Emission runs after allocation; a virtual register here is a bug, shown plainly.
            RegText::Reg(Reg::Virt(v)) => write!(f, "<unallocated {v}>"),
            RegText::Named(name) => f.write_str(name),
        }
    }
}

fn op2(o: Op2) -> Op2Text {
    Op2Text(o)
}

#[derive(Clone, Copy)]
struct Op2Text(Op2);

impl fmt::Display for Op2Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Op2::Imm(v) => write!(f, "#{}", imm_text(v)),
            Op2::Reg(r) => write!(f, "{}", reg(r)),
            Op2::Shifted(r, s, n) => write!(f, "{}, {} #{n}", reg(r), s.name()),
        }
    }
}

/// The immediate offsets of an access: `ldr`/`str` (±4095) or `vldr`/`vstr` (multiples of 4
/// up to ±1020).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Range {
    Word,
    Vfp,
}

impl Range {
    pub(super) fn fits(self, off: i64) -> bool {
        match self {
            Range::Word => (-4095..=4095).contains(&off),
            Range::Vfp => (-1020..=1020).contains(&off) && off % 4 == 0,
        }
    }
}

/// `base + off` is one `add`/`sub` (or a `mov` for 0) without a scratch register.
fn add_fits(off: i64) -> bool {
    let v = off as u32;
    off == 0 || is_arm_imm(v) || is_arm_imm(v.wrapping_neg())
}

/// The `sp`-relative or register-relative offset of a non-indexed address.
fn resolved_offset(addr: &Addr, layout: &FrameLayout) -> Option<i64> {
    match *addr {
        Addr::Index { .. } | Addr::PostInc { .. } => None,
        Addr::Imm { off, .. } => Some(i64::from(off)),
        Addr::Frame { obj, off } => Some(layout.offset(obj) + i64::from(off)),
    }
}

/// Whether emitting `pf` with `layout` needs `ip` as a scratch register inside some
/// instruction (an offset out of range, a frame address that is not an immediate).
pub fn needs_scratch(pf: &PFunction, layout: &FrameLayout) -> bool {
    pf.blocks.iter().flat_map(|(_, b)| &b.insts).any(|inst| inst_needs_scratch(inst, layout))
}

fn inst_needs_scratch(inst: &MInst, layout: &FrameLayout) -> bool {
    match inst {
        MInst::Ldr { addr, .. } | MInst::Str { addr, .. } => {
            resolved_offset(addr, layout).is_some_and(|off| !Range::Word.fits(off))
        }
        MInst::Vldr { addr, .. } | MInst::Vstr { addr, .. } | MInst::VStrF64 { addr, .. } => {
            resolved_offset(addr, layout).is_some_and(|off| !Range::Vfp.fits(off))
        }
        MInst::FrameAddr { obj, off, .. } => !add_fits(layout.offset(*obj) + i64::from(*off)),
        // An instruction `arm-if-convert` predicated is expanded like the plain one (a
        // predicated frame address far from `sp` clobbered an allocated `ip`: campaign seed
        // 20261129, program seed 4379732351734132056).
        MInst::Pred { inst, .. } => inst_needs_scratch(inst, layout),
        _ => false,
    }
}

struct FnEmitter<'a> {
    out: &'a mut String,
    layout: &'a FrameLayout,
    fn_index: usize,
    /// The current block runs with the frame set up (its returns run the epilogue).
    in_frame: bool,
}

impl FnEmitter<'_> {
    fn line(&mut self, line: fmt::Arguments<'_>) {
        let _ = writeln!(self.out, "\t{line}");
    }

    fn label(&self, b: Block) -> Label {
        Label { fn_index: self.fn_index, block: b }
    }

    /// `mnemonic reg, <address>`, going through `ip` for out-of-range offsets.
    fn mem(&mut self, mnemonic: &str, r: impl fmt::Display, addr: Addr, range: Range) {
        let (base, off) = match addr {
            Addr::Index { base, index, shift } => {
                let shift = if shift == 0 { String::new() } else { format!(", lsl #{shift}") };
                self.line(format_args!("{mnemonic}\t{r}, [{}, {}{shift}]", reg(base), reg(index)));
                return;
            }
            Addr::PostInc { base, inc } => {
                match range {
                    Range::Word => self.line(format_args!("{mnemonic}\t{r}, [{}], #{inc}", reg(base))),
                    // The VFP's post-indexed form is a one-register block transfer.
                    Range::Vfp => {
                        assert_eq!(inc, 4, "a VFP post-increment steps by one register");
                        let block = if mnemonic == "vldr" { "vldmia" } else { "vstmia" };
                        self.line(format_args!("{block}\t{}!, {{{r}}}", reg(base)));
                    }
                }
                return;
            }
            Addr::Imm { base, off } => (reg(base), i64::from(off)),
            Addr::Frame { obj, off } => (RegText::Named("sp"), self.layout.offset(obj) + i64::from(off)),
        };
        if range.fits(off) {
            if off == 0 {
                self.line(format_args!("{mnemonic}\t{r}, [{base}]"));
            } else {
                self.line(format_args!("{mnemonic}\t{r}, [{base}, #{off}]"));
            }
        } else if range == Range::Word {
            load_imm(self.out, "ip", off as u32);
            self.line(format_args!("{mnemonic}\t{r}, [{base}, ip]"));
        } else {
            self.add_const("ip", base, off);
            self.line(format_args!("{mnemonic}\t{r}, [ip]"));
        }
    }

    /// `rd = base + off` for any offset (through `ip` when not encodable).
    fn add_const(&mut self, rd: impl fmt::Display, base: impl fmt::Display, off: i64) {
        let v = off as u32;
        if off == 0 {
            self.line(format_args!("mov\t{rd}, {base}"));
        } else if is_arm_imm(v) {
            self.line(format_args!("add\t{rd}, {base}, #{}", imm_text(v)));
        } else if is_arm_imm(v.wrapping_neg()) {
            self.line(format_args!("sub\t{rd}, {base}, #{}", imm_text(v.wrapping_neg())));
        } else {
            load_imm(self.out, "ip", v);
            self.line(format_args!("add\t{rd}, {base}, ip"));
        }
    }

    fn inst(&mut self, inst: &MInst) {
        match inst {
            MInst::Args { .. } => {}
            MInst::Alu { op, rd, rn, op2: o } => {
                self.line(format_args!("{}\t{}, {}, {}", op.name(), reg(*rd), reg(*rn), op2(*o)))
            }
            MInst::AluS { op, rd, rn, op2: o } => {
                self.line(format_args!("{}s\t{}, {}, {}", op.name(), reg(*rd), reg(*rn), op2(*o)))
            }
            MInst::Mov { rd, op2: o } => match o {
                Op2::Shifted(rm, s, n) => self.line(format_args!("{}\t{}, {}, #{n}", s.name(), reg(*rd), reg(*rm))),
                _ => self.line(format_args!("mov\t{}, {}", reg(*rd), op2(*o))),
            },
            MInst::LoadImm { rd, value } => load_imm(self.out, reg(*rd), *value),
            MInst::LoadSym { rd, sym } => {
                self.line(format_args!("movw\t{}, #:lower16:{sym}", reg(*rd)));
                self.line(format_args!("movt\t{}, #:upper16:{sym}", reg(*rd)));
            }
            MInst::FrameAddr { rd, obj, off } => {
                let total = self.layout.offset(*obj) + i64::from(*off);
                self.add_const(reg(*rd), "sp", total);
            }
            MInst::Mul { rd, rn, rm } => self.line(format_args!("mul\t{}, {}, {}", reg(*rd), reg(*rn), reg(*rm))),
            MInst::Mla { rd, rn, rm, ra } => {
                self.line(format_args!("mla\t{}, {}, {}, {}", reg(*rd), reg(*rn), reg(*rm), reg(*ra)))
            }
            MInst::Mls { rd, rn, rm, ra } => {
                self.line(format_args!("mls\t{}, {}, {}, {}", reg(*rd), reg(*rn), reg(*rm), reg(*ra)))
            }
            MInst::Smmul { rd, rn, rm } => self.line(format_args!("smmul\t{}, {}, {}", reg(*rd), reg(*rn), reg(*rm))),
            MInst::Sdiv { rd, rn, rm } => self.line(format_args!("sdiv\t{}, {}, {}", reg(*rd), reg(*rn), reg(*rm))),
            MInst::SRemPow2 { rd, rn, k, tmp } => {
                let (rd, rn) = (reg(*rd), reg(*rn));
                match tmp {
                    Some(tmp) if *k > 1 => {
                        let tmp = reg(*tmp);
                        self.line(format_args!("rsbs\t{tmp}, {rn}, #0"));
                        self.line(format_args!("ubfx\t{rd}, {rn}, #0, #{k}"));
                        self.line(format_args!("ubfx\t{tmp}, {tmp}, #0, #{k}"));
                        self.line(format_args!("rsbpl\t{rd}, {tmp}, #0"));
                    }
                    _ if *k > 1 => {
                        self.line(format_args!("ands\t{rd}, {rn}, #{}", (1u32 << k) - 1));
                        self.line(format_args!("cmpne\t{rn}, #0"));
                        self.line(format_args!("submi\t{rd}, {rd}, #{}", 1u32 << k));
                    }
                    _ => {
                        self.line(format_args!("cmp\t{rn}, #0"));
                        self.line(format_args!("and\t{rd}, {rn}, #1"));
                        self.line(format_args!("rsblt\t{rd}, {rd}, #0"));
                    }
                }
            }
            MInst::Cmp { op, rn, op2: o } => {
                let m = match op {
                    super::mir::CmpOp::Cmp => "cmp",
                    super::mir::CmpOp::Cmn => "cmn",
                    super::mir::CmpOp::Tst => "tst",
                };
                self.line(format_args!("{m}\t{}, {}", reg(*rn), op2(*o)));
            }
            MInst::SetCond { cc, rd } => {
                self.line(format_args!("mov\t{}, #0", reg(*rd)));
                self.line(format_args!("mov{}\t{}, #1", cc.name(), reg(*rd)));
            }
            MInst::MovCond { cc, rd, rn, op2: o } => {
                if rd != rn {
                    self.line(format_args!("mov\t{}, {}", reg(*rd), reg(*rn)));
                }
                self.line(format_args!("mov{}\t{}, {}", cc.name(), reg(*rd), op2(*o)));
            }
            MInst::Ldr { rd, addr } => self.mem("ldr", reg(*rd), *addr, Range::Word),
            MInst::Str { rs, addr } => self.mem("str", reg(*rs), *addr, Range::Word),
            MInst::Vldr { sd, addr } => self.mem("vldr", reg(*sd), *addr, Range::Vfp),
            MInst::Vstr { ss, addr } => self.mem("vstr", reg(*ss), *addr, Range::Vfp),
            MInst::VArith { op, sd, sn, sm } => {
                self.line(format_args!("{}\t{}, {}, {}", op.name(), reg(*sd), reg(*sn), reg(*sm)))
            }
            MInst::VMac { op, sd, sa, sn, sm } => {
                if sd != sa {
                    self.line(format_args!("vmov.f32\t{}, {}", reg(*sd), reg(*sa)));
                }
                self.line(format_args!("{}\t{}, {}, {}", op.name(), reg(*sd), reg(*sn), reg(*sm)));
            }
            MInst::VNeg { sd, sm } => self.line(format_args!("vneg.f32\t{}, {}", reg(*sd), reg(*sm))),
            MInst::VMov { sd, sm } => self.line(format_args!("vmov.f32\t{}, {}", reg(*sd), reg(*sm))),
            MInst::VMovCond { cc, sd, sn, sm, neg } => {
                if sd != sn {
                    self.line(format_args!("vmov.f32\t{}, {}", reg(*sd), reg(*sn)));
                }
                let op = if *neg { "vneg" } else { "vmov" };
                self.line(format_args!("{op}{}.f32\t{}, {}", cc.name(), reg(*sd), reg(*sm)));
            }
            MInst::VMovImm { sd, imm } => self.line(format_args!("vmov.f32\t{}, #{imm:?}", reg(*sd))),
            MInst::VMovFromCore { sd, rn } => self.line(format_args!("vmov\t{}, {}", reg(*sd), reg(*rn))),
            MInst::VMovToCore { rd, sn } => self.line(format_args!("vmov\t{}, {}", reg(*rd), reg(*sn))),
            MInst::VCmp { sn, sm } => {
                match sm {
                    Some(sm) => self.line(format_args!("vcmp.f32\t{}, {}", reg(*sn), reg(*sm))),
                    None => self.line(format_args!("vcmp.f32\t{}, #0", reg(*sn))),
                }
                self.line(format_args!("vmrs\tAPSR_nzcv, fpscr"));
            }
            MInst::VCvtF32S32 { sd, sm } => self.line(format_args!("vcvt.f32.s32\t{}, {}", reg(*sd), reg(*sm))),
            MInst::VCvtS32F32 { sd, sm } => self.line(format_args!("vcvt.s32.f32\t{}, {}", reg(*sd), reg(*sm))),
            MInst::CvtF64Pair { lo, hi, src } => {
                self.line(format_args!("vcvt.f64.f32\td16, {}", reg(*src)));
                self.line(format_args!("vmov\t{}, {}, d16", reg(*lo), reg(*hi)));
            }
            MInst::VStrF64 { src, addr } => {
                self.line(format_args!("vcvt.f64.f32\td16, {}", reg(*src)));
                self.mem("vstr", RegText::Named("d16"), *addr, Range::Vfp);
            }
            MInst::MemZeroLoop { base, words, ptr, count, zero } => {
                self.memzero(reg(*base), *words, reg(*ptr), count.map(reg), reg(*zero))
            }
            MInst::Call { sym, .. } => self.line(format_args!("bl\t{sym}")),
            MInst::Jump { target } => self.line(format_args!("b\t{}", self.label(*target))),
            MInst::CondBr { cc, taken, not_taken } => {
                self.line(format_args!("b{}\t{}", cc.name(), self.label(*taken)));
                self.line(format_args!("b\t{}", self.label(*not_taken)));
            }
            MInst::BranchCond { cc, target } => self.line(format_args!("b{}\t{}", cc.name(), self.label(*target))),
            MInst::Ret { .. } if self.in_frame => self.layout.epilogue(self.out),
            MInst::Ret { .. } => self.line(format_args!("bx\tlr")),
            MInst::Pred { cc, inst } => {
                let mut text = String::new();
                FnEmitter { out: &mut text, layout: self.layout, fn_index: self.fn_index, in_frame: self.in_frame }.inst(inst);
                for line in text.lines() {
                    self.out.push_str(&predicated_line(line, *cc));
                    self.out.push('\n');
                }
            }
        }
    }

    /// Zeroes `words` words at `base`: `d16`–`d19` hold 32 zero bytes, each `vstmia` stores
    /// them; the loop does 64 bytes per iteration.
    fn memzero(&mut self, base: RegText, words: u32, ptr: RegText, count: Option<RegText>, zero: RegText) {
        self.line(format_args!("mov\t{zero}, #0"));
        self.line(format_args!("vmov\td16, {zero}, {zero}"));
        for d in 17..=19 {
            self.line(format_args!("vmov.f64\td{d}, d16"));
        }
        self.line(format_args!("mov\t{ptr}, {base}"));
        let blocks = words / 16;
        if let Some(count) = count {
            load_imm(self.out, count, blocks);
            self.out.push_str("1:\n");
            self.line(format_args!("vstmia\t{ptr}!, {{d16-d19}}"));
            self.line(format_args!("vstmia\t{ptr}!, {{d16-d19}}"));
            self.line(format_args!("subs\t{count}, {count}, #1"));
            self.line(format_args!("bne\t1b"));
        } else {
            for _ in 0..2 * blocks {
                self.line(format_args!("vstmia\t{ptr}!, {{d16-d19}}"));
            }
        }
        let mut rest = words % 16;
        if rest >= 8 {
            self.line(format_args!("vstmia\t{ptr}!, {{d16-d19}}"));
            rest -= 8;
        }
        match rest / 2 {
            0 => {}
            1 => self.line(format_args!("vstmia\t{ptr}!, {{d16}}")),
            n => self.line(format_args!("vstmia\t{ptr}!, {{d16-d{}}}", 15 + n)),
        }
        if rest % 2 == 1 {
            self.line(format_args!("str\t{zero}, [{ptr}]"));
        }
    }
}

/// `\tmnemonic\toperands` with the condition `cc` added to the mnemonic, in front of any
/// data-type suffix (`addne`, `ldrne`, `vaddne.f32`, `vcvtne.f32.s32`).
fn predicated_line(line: &str, cc: super::mir::Cond) -> String {
    let body = line.strip_prefix('\t').unwrap_or(line);
    let (mnemonic, operands) = body.split_once('\t').unwrap_or((body, ""));
    let (base, suffix) = mnemonic.split_at(mnemonic.find('.').unwrap_or(mnemonic.len()));
    format!("\t{base}{}{suffix}\t{operands}", cc.name())
}

fn origin_comment(origin: BlockOrigin) -> String {
    match origin {
        BlockOrigin::Ir(b) => format!("{b}"),
        BlockOrigin::Edge(from, to) => format!("edge {from} -> {to}"),
        BlockOrigin::Entry => "entry".to_string(),
    }
}

/// A block label, `.L<function>_<block>`.
struct Label {
    fn_index: usize,
    block: Block,
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ".L{}_{}", self.fn_index, self.block.index())
    }
}

pub fn emit_function(out: &mut String, pf: &PFunction, layout: &FrameLayout, fn_index: usize) {
    let sym = &pf.sym;
    let _ = writeln!(out, "\n\t.align\t2\n\t.global\t{sym}\n\t.type\t{sym}, %function\n{sym}:");
    if layout.wrap.is_none() {
        layout.prologue(out);
    }
    let mut e = FnEmitter { out, layout, fn_index, in_frame: true };
    for (position, (id, block)) in pf.blocks.iter().enumerate() {
        let label = e.label(*id);
        let _ = writeln!(e.out, "{label}:\t@ {}", origin_comment(block.origin));
        if layout.wrap.as_ref().is_some_and(|w| w.start == position) {
            layout.prologue(e.out);
        }
        e.in_frame = layout.in_frame(position);
        for inst in &block.insts {
            e.inst(inst);
        }
    }
    let _ = writeln!(out, "\t.size\t{sym}, .-{sym}");
}

/// Escapes bytes for a GNU `as` string literal.
fn escape(bytes: &[u8]) -> String {
    let mut s = String::new();
    for &b in bytes {
        match b {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'\n' => s.push_str("\\n"),
            b'\t' => s.push_str("\\t"),
            0x20..=0x7e => s.push(b as char),
            _ => {
                let _ = write!(s, "\\{b:03o}");
            }
        }
    }
    s
}

/// Module header: target directives and the EABI attributes of a hard-float object (the
/// linker refuses to mix objects that disagree on `Tag_ABI_VFP_args`).
pub fn header(out: &mut String) {
    out.push_str(
        "\t.arch\tarmv7ve\n\t.fpu\tvfpv4\n\t.syntax\tunified\n\t.arm\n\
         \t.eabi_attribute\t28, 1\t@ Tag_ABI_VFP_args: VFP registers\n\
         \t.eabi_attribute\t20, 1\t@ Tag_ABI_FP_denormal\n\
         \t.eabi_attribute\t21, 1\t@ Tag_ABI_FP_exceptions\n\
         \t.eabi_attribute\t23, 3\t@ Tag_ABI_FP_number_model\n\
         \t.eabi_attribute\t24, 1\t@ Tag_ABI_align8_needed\n\
         \t.eabi_attribute\t25, 1\t@ Tag_ABI_align8_preserved\n\
         \t.eabi_attribute\t26, 2\t@ Tag_ABI_enum_size\n\
         \t.eabi_attribute\t30, 2\t@ Tag_ABI_optimization_goals\n\
         \t.eabi_attribute\t34, 1\t@ Tag_CPU_unaligned_access\n\
         \t.eabi_attribute\t18, 4\t@ Tag_ABI_PCS_wchar_t\n\
         \n\t.text\n\t.global\t__sysy_prog_begin\n__sysy_prog_begin:\n",
    );
}

/// Closes `.text` and emits globals and strings.
pub fn trailer(out: &mut String, module: &Module, syms: &Symbols) -> Result<(), super::BackendError> {
    out.push_str("\n\t.global\t__sysy_prog_end\n__sysy_prog_end:\n");
    for (g, data) in module.globals.iter() {
        let sym = &syms.globals[g];
        let bytes = 4 * u64::from(data.words.max(1));
        let section = if data.is_const {
            "\t.section\t.rodata"
        } else if data.init.iter().all(|&(_, c)| const_bits(c) == 0) {
            "\t.bss"
        } else {
            "\t.data"
        };
        let _ = writeln!(out, "\n{section}\n\t.align\t2\n\t.type\t{sym}, %object\n\t.size\t{sym}, {bytes}\n{sym}:");
        let mut next = 0u32;
        let mut words: Vec<u32> = Vec::new();
        let flush = |out: &mut String, words: &mut Vec<u32>| {
            for chunk in words.chunks(8) {
                let list: Vec<String> = chunk.iter().map(|w| format!("{w:#x}")).collect();
                let _ = writeln!(out, "\t.word\t{}", list.join(", "));
            }
            words.clear();
        };
        let mut init: Vec<(u32, Const)> = data.init.clone();
        init.sort_by_key(|&(i, _)| i);
        let mut prev: Option<u32> = None;
        for (i, c) in init {
            if i >= data.words || prev.is_some_and(|p| p >= i) {
                return Err(super::BackendError::InvalidIr(format!(
                    "global {}: initialiser index {i} repeated or beyond {} elements",
                    data.name, data.words
                )));
            }
            prev = Some(i);
            let bits = const_bits(c);
            if bits == 0 {
                continue;
            }
            if i > next {
                flush(out, &mut words);
                let _ = writeln!(out, "\t.zero\t{}", 4 * u64::from(i - next));
            }
            words.push(bits);
            next = i + 1;
        }
        flush(out, &mut words);
        if bytes > 4 * u64::from(next) {
            let _ = writeln!(out, "\t.zero\t{}", bytes - 4 * u64::from(next));
        }
    }
    if !module.strings.is_empty() {
        out.push_str("\n\t.section\t.rodata\n");
        for (s, bytes) in module.strings.iter() {
            let _ = writeln!(out, "{}:\n\t.asciz\t\"{}\"", string_label(s), escape(bytes));
        }
    }
    out.push_str("\n\t.section\t.note.GNU-stack,\"\",%progbits\n");
    Ok(())
}

fn const_bits(c: Const) -> u32 {
    match c {
        Const::Int(v) => v as u32,
        Const::Float(bits) => bits,
        Const::Bool(b) => u32::from(b),
    }
}
