//! Lines of GNU `as` assembly (unified syntax, ARM state) into statements: labels,
//! directives, and instructions split into mnemonic (base, `s` flag, condition, data-type
//! suffix) and operands.

use std::borrow::Cow;

use super::AsmError;

/// `text` in lower case, copied only when it has an upper-case letter (the compiler writes
/// lower case: the in-process assembler reads every line it emits).
fn lowercase(text: &str) -> Cow<'_, str> {
    if text.bytes().any(|b| b.is_ascii_uppercase()) { Cow::Owned(text.to_ascii_lowercase()) } else { Cow::Borrowed(text) }
}

/// A condition code (`al` when none is written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cond(pub u32);

pub const AL: Cond = Cond(0b1110);

const CONDS: [(&str, u32); 17] = [
    ("eq", 0),
    ("ne", 1),
    ("cs", 2),
    ("hs", 2),
    ("cc", 3),
    ("lo", 3),
    ("mi", 4),
    ("pl", 5),
    ("vs", 6),
    ("vc", 7),
    ("hi", 8),
    ("ls", 9),
    ("ge", 10),
    ("lt", 11),
    ("gt", 12),
    ("le", 13),
    ("al", 14),
];

fn cond(text: &str) -> Option<Cond> {
    CONDS.iter().find(|(n, _)| *n == text).map(|&(_, c)| Cond(c))
}

/// A register operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reg {
    Core(u32),
    S(u32),
    D(u32),
}

pub fn register(text: &str) -> Option<Reg> {
    let t = text.trim();
    let named = match t {
        "sp" => Some(13),
        "lr" => Some(14),
        "pc" => Some(15),
        "ip" => Some(12),
        "fp" => Some(11),
        "sl" => Some(10),
        "sb" => Some(9),
        _ => None,
    };
    if let Some(n) = named {
        return Some(Reg::Core(n));
    }
    let (kind, digits) = t.split_at(1.min(t.len()));
    let n: u32 = digits.parse().ok().filter(|_| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))?;
    match kind {
        "r" if n < 16 => Some(Reg::Core(n)),
        "s" if n < 32 => Some(Reg::S(n)),
        "d" if n < 32 => Some(Reg::D(n)),
        _ => None,
    }
}

/// A shift of a register operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShiftKind {
    Lsl = 0,
    Lsr = 1,
    Asr = 2,
    Ror = 3,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShiftBy {
    Imm(u32),
    Reg(u32),
    /// `rrx`: rotate right through carry by one.
    Rrx,
}

/// Which half of a symbol's address a `movw`/`movt` immediate takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    Lower,
    Upper,
}

/// A memory operand `[base ...]` with what follows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mem {
    pub base: u32,
    /// Immediate offset, or register offset (negated when `subtract`) with its shift.
    pub offset: MemOffset,
    pub subtract: bool,
    /// `[...]!`
    pub writeback: bool,
    /// `[base], offset`
    pub post: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemOffset {
    Imm(i64),
    Reg(u32, ShiftKind, u32),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    Reg(Reg),
    /// A register followed by `!` (base writeback of `ldm`/`vstm`).
    RegWriteback(Reg),
    Imm(i64),
    /// A floating-point immediate (`vmov.f32 s0, #2.5`).
    Float(f64),
    Shift(ShiftKind, ShiftBy),
    Mem(Mem),
    List(Vec<Reg>),
    /// A symbol (or numeric local label `1b`/`1f`) with an addend.
    Symbol(String, i64),
    /// `#:lower16:sym+a` / `#:upper16:sym+a`.
    Half(Half, String, i64),
    /// `APSR_nzcv`, `fpscr` and other special names.
    Special(String),
}

/// One statement of a line.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    Label(String),
    Directive(String, String),
    Instruction(Instruction),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Instruction {
    pub base: &'static str,
    pub set_flags: bool,
    pub cond: Cond,
    /// The data-type suffix without its dot (`f32`, `f64.f32`), empty when none.
    pub dt: String,
    pub operands: Vec<Operand>,
}

/// Base mnemonics, longest first where one is a prefix of another, with whether they take
/// the `s` (set flags) suffix.
const BASES: &[(&str, bool)] = &[
    ("vcvtr", false),
    ("vpush", false),
    ("vstmia", false),
    ("vstmdb", false),
    ("vldmia", false),
    ("vldmdb", false),
    ("vcmpe", false),
    ("vmrs", false),
    ("vmov", false),
    ("vadd", false),
    ("vsub", false),
    ("vmul", false),
    ("vdiv", false),
    ("vmla", false),
    ("vmls", false),
    ("vnmul", false),
    ("vneg", false),
    ("vabs", false),
    ("vsqrt", false),
    ("vcmp", false),
    ("vcvt", false),
    ("vldr", false),
    ("vstr", false),
    ("vstm", false),
    ("vldm", false),
    ("vpop", false),
    ("smmul", false),
    ("smull", true),
    ("umull", true),
    ("ldmia", false),
    ("ldmfd", false),
    ("stmdb", false),
    ("stmfd", false),
    ("ldrsb", false),
    ("ldrsh", false),
    ("ldrb", false),
    ("ldrh", false),
    ("ldrd", false),
    ("strb", false),
    ("strh", false),
    ("strd", false),
    ("push", false),
    ("sdiv", false),
    ("udiv", false),
    ("movw", false),
    ("movt", false),
    ("ubfx", false),
    ("sbfx", false),
    ("bfi", false),
    ("bfc", false),
    ("clz", false),
    ("pop", false),
    ("ldm", false),
    ("stm", false),
    ("ldr", false),
    ("str", false),
    ("mul", true),
    ("mla", true),
    ("mls", false),
    ("and", true),
    ("eor", true),
    ("sub", true),
    ("rsb", true),
    ("add", true),
    ("adc", true),
    ("sbc", true),
    ("rsc", true),
    ("tst", false),
    ("teq", false),
    ("cmp", false),
    ("cmn", false),
    ("orr", true),
    ("mov", true),
    ("bic", true),
    ("mvn", true),
    ("lsl", true),
    ("lsr", true),
    ("asr", true),
    ("ror", true),
    ("rrx", true),
    ("nop", false),
    ("blx", false),
    ("bx", false),
    ("bl", false),
    ("b", false),
];

/// Splits a mnemonic like `addseq`, `vmovne.f32`, `bls` into its parts.
fn mnemonic(word: &str) -> Option<(&'static str, bool, Cond, String)> {
    let word = lowercase(word);
    let (head, dt) = word.split_once('.').unwrap_or((&word, ""));
    let dt = dt.to_string();
    // No base is empty: one whose first letter differs cannot be a prefix (a cheap test
    // before the comparison, for a table scanned for every instruction).
    let first = *head.as_bytes().first()?;
    for &(base, takes_s) in BASES {
        if base.as_bytes()[0] != first {
            continue;
        }
        let Some(rest) = head.strip_prefix(base) else { continue };
        let (set_flags, rest) = match rest.strip_prefix('s') {
            Some(r) if takes_s && (r.is_empty() || cond(r).is_some()) => (true, r),
            _ => (false, rest),
        };
        if rest.is_empty() {
            return Some((base, set_flags, AL, dt));
        }
        if let Some(c) = cond(rest) {
            return Some((base, set_flags, c, dt));
        }
    }
    None
}

/// Splits at top-level commas (not inside `[...]` or `{...}`), each part trimmed; a last
/// part that is empty is dropped. Slices of `text`, not copies (every operand of every
/// instruction passes through here).
fn split_operands(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    // Bytes, not chars: the delimiters are ASCII, which never occurs inside a multi-byte
    // character, so every split falls on a character boundary.
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                out.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = text[start..].trim();
    if !last.is_empty() {
        out.push(last);
    }
    out
}

/// An integer in GNU syntax: decimal, `0x` hex, `0b` binary, `0` octal, with a sign.
pub fn integer(text: &str) -> Option<i64> {
    let t = text.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d.trim()),
        None => (false, t.strip_prefix('+').unwrap_or(t).trim()),
    };
    let v = if let Some(h) = digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if let Some(b) = digits.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') && digits.bytes().all(|b| b.is_ascii_digit()) {
        i64::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

/// `sym`, `sym+4`, `sym-8`.
fn symbol_expr(text: &str) -> Option<(String, i64)> {
    let t = text.trim();
    let split = t.char_indices().skip(1).find(|&(_, c)| c == '+' || c == '-').map(|(i, _)| i);
    let (name, addend) = match split {
        Some(i) => (&t[..i], integer(&t[i..])?),
        None => (t, 0),
    };
    let ok = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "._$".contains(c))
        && !name.starts_with(|c: char| c.is_ascii_digit() && !name.ends_with(['b', 'f']));
    ok.then(|| (name.to_string(), addend))
}

fn shift_kind(text: &str) -> Option<ShiftKind> {
    match text {
        "lsl" | "asl" => Some(ShiftKind::Lsl),
        "lsr" => Some(ShiftKind::Lsr),
        "asr" => Some(ShiftKind::Asr),
        "ror" => Some(ShiftKind::Ror),
        _ => None,
    }
}

/// `lsl #2`, `asr r3`, `rrx`.
fn shift(text: &str) -> Option<(ShiftKind, ShiftBy)> {
    let t = lowercase(text.trim());
    if t == "rrx" {
        return Some((ShiftKind::Ror, ShiftBy::Rrx));
    }
    let (kind, amount) = t.split_once(char::is_whitespace)?;
    let kind = shift_kind(kind)?;
    let amount = amount.trim();
    if let Some(imm) = amount.strip_prefix('#') {
        return Some((kind, ShiftBy::Imm(u32::try_from(integer(imm)?).ok()?)));
    }
    match register(amount)? {
        Reg::Core(r) => Some((kind, ShiftBy::Reg(r))),
        _ => None,
    }
}

fn memory(inner: &str, writeback: bool) -> Option<Mem> {
    let parts = split_operands(inner);
    let base = match register(parts.first()?)? {
        Reg::Core(r) => r,
        _ => return None,
    };
    let mut mem = Mem { base, offset: MemOffset::Imm(0), subtract: false, writeback, post: false };
    match parts.len() {
        1 => {}
        2 | 3 => {
            let (offset, subtract) = offset(parts[1], parts.get(2).copied())?;
            mem.offset = offset;
            mem.subtract = subtract;
        }
        _ => return None,
    }
    Some(mem)
}

/// An offset: `#imm`, `rm`, `-rm`, optionally with a shift.
fn offset(text: &str, shift_text: Option<&str>) -> Option<(MemOffset, bool)> {
    let t = text.trim();
    if let Some(imm) = t.strip_prefix('#') {
        if shift_text.is_some() {
            return None;
        }
        return Some((MemOffset::Imm(integer(imm)?), false));
    }
    let (subtract, reg) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let Reg::Core(rm) = register(reg)? else { return None };
    let (kind, amount) = match shift_text {
        Some(s) => match shift(s)? {
            (k, ShiftBy::Imm(n)) => (k, n),
            _ => return None,
        },
        None => (ShiftKind::Lsl, 0),
    };
    Some((MemOffset::Reg(rm, kind, amount), subtract))
}

fn register_list(inner: &str) -> Option<Vec<Reg>> {
    let mut regs = Vec::new();
    for item in inner.split(',') {
        let item = item.trim();
        match item.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (register(a)?, register(b)?);
                let range = match (a, b) {
                    (Reg::Core(x), Reg::Core(y)) if x <= y => (x..=y).map(Reg::Core).collect::<Vec<_>>(),
                    (Reg::S(x), Reg::S(y)) if x <= y => (x..=y).map(Reg::S).collect(),
                    (Reg::D(x), Reg::D(y)) if x <= y => (x..=y).map(Reg::D).collect(),
                    _ => return None,
                };
                regs.extend(range);
            }
            None => regs.push(register(item)?),
        }
    }
    Some(regs)
}

fn float(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.contains(['.', 'e', 'E']) || t.contains("inf") || t.contains("nan") {
        t.parse().ok()
    } else {
        None
    }
}

fn operand(text: &str) -> Option<Operand> {
    let t = text.trim();
    if let Some(inner) = t.strip_prefix('[') {
        let (inner, writeback) = match inner.strip_suffix("]!") {
            Some(i) => (i, true),
            None => (inner.strip_suffix(']')?, false),
        };
        return memory(inner, writeback).map(Operand::Mem);
    }
    if let Some(inner) = t.strip_prefix('{') {
        return register_list(inner.strip_suffix('}')?).map(Operand::List);
    }
    if let Some(imm) = t.strip_prefix('#') {
        let imm = imm.trim();
        for (prefix, half) in [(":lower16:", Half::Lower), (":upper16:", Half::Upper)] {
            if let Some(sym) = imm.strip_prefix(prefix) {
                let (name, addend) = symbol_expr(sym)?;
                return Some(Operand::Half(half, name, addend));
            }
        }
        if let Some(v) = integer(imm) {
            return Some(Operand::Imm(v));
        }
        return float(imm).map(Operand::Float);
    }
    if let Some(r) = t.strip_suffix('!').and_then(register) {
        return Some(Operand::RegWriteback(r));
    }
    if let Some(r) = register(t) {
        return Some(Operand::Reg(r));
    }
    if let Some((kind, by)) = shift(t) {
        return Some(Operand::Shift(kind, by));
    }
    let lower = lowercase(t);
    if matches!(&*lower, "apsr_nzcv" | "fpscr") {
        return Some(Operand::Special(lower.into_owned()));
    }
    symbol_expr(t).map(|(name, addend)| Operand::Symbol(name, addend))
}

/// Removes a comment (`@` to the end of the line, outside string literals).
fn strip_comment(line: &str) -> &str {
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            '@' if !in_string => return &line[..i],
            _ => {}
        }
    }
    line
}

/// The statements of one line (a label may precede a directive or an instruction).
pub fn line(text: &str, number: usize) -> Result<Vec<Statement>, AsmError> {
    let err = |message: String| AsmError { line: number, message };
    let mut rest = strip_comment(text).trim();
    let mut out = Vec::new();
    // Labels: `name:` at the start (numeric local labels included).
    while let Some(colon) = rest.find(':') {
        let name = rest[..colon].trim();
        let is_label = !name.is_empty()
            && !name.contains(char::is_whitespace)
            && name.chars().all(|c| c.is_ascii_alphanumeric() || "._$".contains(c));
        if !is_label {
            break;
        }
        out.push(Statement::Label(name.to_string()));
        rest = rest[colon + 1..].trim();
    }
    if rest.is_empty() {
        return Ok(out);
    }
    let (word, args) = match rest.find(char::is_whitespace) {
        Some(i) => (&rest[..i], rest[i..].trim()),
        None => (rest, ""),
    };
    if word.starts_with('.') {
        out.push(Statement::Directive(word.to_string(), args.to_string()));
        return Ok(out);
    }
    let (base, set_flags, cond, dt) = mnemonic(word).ok_or_else(|| err(format!("unknown instruction `{word}`")))?;
    let parts = split_operands(args);
    let mut operands = Vec::with_capacity(parts.len());
    for part in parts {
        operands.push(operand(part).ok_or_else(|| err(format!("cannot read operand `{part}` of `{word}`")))?);
    }
    out.push(Statement::Instruction(Instruction { base, set_flags, cond, dt, operands }));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mnemonics_split_into_base_flags_condition_and_type() {
        assert_eq!(mnemonic("addseq"), Some(("add", true, Cond(0), String::new())));
        assert_eq!(mnemonic("bls"), Some(("b", false, Cond(9), String::new())));
        assert_eq!(mnemonic("blne"), Some(("bl", false, Cond(1), String::new())));
        assert_eq!(mnemonic("vmovne.f32"), Some(("vmov", false, Cond(1), "f32".into())));
        assert_eq!(mnemonic("vcvt.f64.f32"), Some(("vcvt", false, AL, "f64.f32".into())));
        assert_eq!(mnemonic("mls"), Some(("mls", false, AL, String::new())));
        assert_eq!(mnemonic("lsls"), Some(("lsl", true, AL, String::new())));
        assert_eq!(mnemonic("subs"), Some(("sub", true, AL, String::new())));
        assert_eq!(mnemonic("cmpne"), Some(("cmp", false, Cond(1), String::new())));
        assert_eq!(mnemonic("ldrsh"), Some(("ldrsh", false, AL, String::new())));
        assert_eq!(mnemonic("frob"), None);
    }

    #[test]
    fn operands_of_every_shape() {
        let st = line("\tldr\tr0, [r1, -r2, lsl #2]", 1).expect("parses");
        let Statement::Instruction(i) = &st[0] else { panic!() };
        assert_eq!(
            i.operands[1],
            Operand::Mem(Mem { base: 1, offset: MemOffset::Reg(2, ShiftKind::Lsl, 2), subtract: true, writeback: false, post: false })
        );
        let st = line(".L0_3:\t@ bb2", 1).expect("parses");
        assert_eq!(st, vec![Statement::Label(".L0_3".into())]);
        let st = line("\tmovw\tr1, #:lower16:sy.a+20", 1).expect("parses");
        let Statement::Instruction(i) = &st[0] else { panic!() };
        assert_eq!(i.operands[1], Operand::Half(Half::Lower, "sy.a".into(), 20));
        let st = line("\tvstmia\tr2!, {d16-d19}", 1).expect("parses");
        let Statement::Instruction(i) = &st[0] else { panic!() };
        assert_eq!(i.operands[1], Operand::List(vec![Reg::D(16), Reg::D(17), Reg::D(18), Reg::D(19)]));
        assert!(line("\tfrob\tr0", 3).is_err());
        let st = line("\t.asciz\t\"a@b\"", 1).expect("parses");
        assert_eq!(st, vec![Statement::Directive(".asciz".into(), "\"a@b\"".into())]);
    }
}
