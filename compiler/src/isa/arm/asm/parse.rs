//! Lines of GNU `as` assembly (unified syntax, ARM state) into statements: labels,
//! directives, and instructions split into mnemonic (base, `s` flag, condition, data-type
//! suffix) and operands.
//!
//! A parsed line borrows from its text: labels, directive arguments, symbol names and
//! operand texts are slices of it, not copies (the assembler reads every line of every text
//! a campaign checks; allocating for each line and operand was much of its cost). The
//! scanning is done on bytes where that gives the same answer as the `char` methods:
//! the delimiters are ASCII, and an ASCII byte never occurs inside a multi-byte character.

use std::borrow::Cow;
use std::sync::LazyLock;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::AsmError;

/// `text` in lower case, copied only when it has an upper-case letter (the compiler writes
/// lower case: the in-process assembler reads every line it emits).
fn lowercase(text: &str) -> Cow<'_, str> {
    if text.bytes().any(|b| b.is_ascii_uppercase()) { Cow::Owned(text.to_ascii_lowercase()) } else { Cow::Borrowed(text) }
}

/// `char::is_whitespace` of an ASCII byte (vertical tab included, unlike
/// `u8::is_ascii_whitespace`).
#[inline]
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `str::trim`. Most texts it is given are trimmed already: that is checked inline.
#[inline]
pub fn trim(text: &str) -> &str {
    match text.as_bytes() {
        [] => text,
        [first, .., last] if first.is_ascii() && last.is_ascii() && !is_space(*first) && !is_space(*last) => text,
        _ => trim_ends(text),
    }
}

/// [`trim`] when there may be something to trim: ASCII white space byte by byte, and
/// `str::trim` when an end is not ASCII (it may be Unicode white space).
fn trim_ends(text: &str) -> &str {
    let bytes = text.as_bytes();
    let start = bytes.iter().position(|&b| !is_space(b)).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|&b| !is_space(b)).map_or(start, |last| last + 1);
    if bytes.get(start).is_some_and(|b| !b.is_ascii()) || bytes[..end].last().is_some_and(|b| !b.is_ascii()) {
        return text.trim();
    }
    &text[start..end]
}

/// `str::trim_start`, as [`trim`] does it.
fn trim_start(text: &str) -> &str {
    let start = text.bytes().position(|b| !is_space(b)).unwrap_or(text.len());
    if text.as_bytes().get(start).is_some_and(|b| !b.is_ascii()) { text.trim_start() } else { &text[start..] }
}

/// Where the first white-space character of `text` is (`text.find(char::is_whitespace)`).
fn find_space(text: &str) -> Option<usize> {
    for (i, &b) in text.as_bytes().iter().enumerate() {
        if is_space(b) {
            return Some(i);
        }
        if !b.is_ascii() {
            return text[i..].find(char::is_whitespace).map(|j| i + j);
        }
    }
    None
}

/// A condition code (`al` when none is written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cond(pub u32);

pub const AL: Cond = Cond(0b1110);

fn cond(text: &str) -> Option<Cond> {
    Some(Cond(match text {
        "eq" => 0,
        "ne" => 1,
        "cs" | "hs" => 2,
        "cc" | "lo" => 3,
        "mi" => 4,
        "pl" => 5,
        "vs" => 6,
        "vc" => 7,
        "hi" => 8,
        "ls" => 9,
        "ge" => 10,
        "lt" => 11,
        "gt" => 12,
        "le" => 13,
        "al" => 14,
        _ => return None,
    }))
}

/// Defines [`Base`] from the mnemonics that take the `s` (set flags) suffix and those that
/// do not.
macro_rules! bases {
    (flags: $($fv:ident $fname:literal),* ; plain: $($pv:ident $pname:literal),* $(;)?) => {
        /// A base mnemonic: the instruction without its `s` flag, condition and data type.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Base {
            $($fv,)*
            $($pv,)*
        }

        impl Base {
            pub fn name(self) -> &'static str {
                match self {
                    $(Base::$fv => $fname,)*
                    $(Base::$pv => $pname,)*
                }
            }

            fn takes_s(self) -> bool {
                matches!(self, $(Base::$fv)|*)
            }

            /// Every base.
            const ALL: &[Base] = &[$(Base::$fv,)* $(Base::$pv,)*];
        }
    };
}

bases! {
    flags:
        And "and", Eor "eor", Sub "sub", Rsb "rsb", Add "add", Adc "adc", Sbc "sbc", Rsc "rsc", Orr "orr", Mov "mov",
        Bic "bic", Mvn "mvn", Lsl "lsl", Lsr "lsr", Asr "asr", Ror "ror", Rrx "rrx", Mul "mul", Mla "mla", Smull "smull",
        Umull "umull";
    plain:
        Tst "tst", Teq "teq", Cmp "cmp", Cmn "cmn", Mls "mls", Smmul "smmul", Sdiv "sdiv", Udiv "udiv", Movw "movw",
        Movt "movt", Ubfx "ubfx", Sbfx "sbfx", Bfi "bfi", Bfc "bfc", Clz "clz", Nop "nop",
        Ldr "ldr", Str "str", Ldrb "ldrb", Strb "strb", Ldrh "ldrh", Strh "strh", Ldrsb "ldrsb", Ldrsh "ldrsh", Ldrd "ldrd",
        Strd "strd", Push "push", Pop "pop", Ldm "ldm", Ldmia "ldmia", Ldmfd "ldmfd", Stm "stm", Stmdb "stmdb", Stmfd "stmfd",
        B "b", Bl "bl", Bx "bx", Blx "blx",
        Vmov "vmov", Vadd "vadd", Vsub "vsub", Vmul "vmul", Vdiv "vdiv", Vmla "vmla", Vmls "vmls", Vnmls "vnmls", Vnmla "vnmla", Vnmul "vnmul",
        Vneg "vneg",
        Vabs "vabs", Vsqrt "vsqrt", Vcmp "vcmp", Vcmpe "vcmpe", Vcvt "vcvt", Vcvtr "vcvtr", Vmrs "vmrs", Vldr "vldr", Vstr "vstr",
        Vpush "vpush", Vpop "vpop", Vstm "vstm", Vstmia "vstmia", Vstmdb "vstmdb", Vldm "vldm", Vldmia "vldmia", Vldmdb "vldmdb";
}

impl Base {
    /// The base named `name`. A mnemonic is split by trying up to four of its prefixes, for
    /// every instruction: the names are looked up as numbers (their bytes and length), which
    /// is quicker than comparing strings.
    fn from_name(name: &str) -> Option<Base> {
        static BY_KEY: LazyLock<FxHashMap<u64, Base>> =
            LazyLock::new(|| Base::ALL.iter().map(|&b| (Base::key(b.name()).expect("base names are short"), b)).collect());
        BY_KEY.get(&Base::key(name)?).copied()
    }

    /// A name of at most 7 bytes as a number: the bytes, and the length in the top byte.
    fn key(name: &str) -> Option<u64> {
        let bytes = name.as_bytes();
        if bytes.len() > 7 {
            return None;
        }
        let key = bytes.iter().enumerate().fold(0u64, |key, (i, &b)| key | u64::from(b) << (8 * i));
        Some(key | (bytes.len() as u64) << 56)
    }
}

impl std::fmt::Display for Base {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A register operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reg {
    Core(u32),
    S(u32),
    D(u32),
}

/// A decimal number of one or more digits (no sign) that fits a `u32`.
fn decimal(digits: &[u8]) -> Option<u32> {
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u32, |n, &d| if d.is_ascii_digit() { n.checked_mul(10)?.checked_add(u32::from(d - b'0')) } else { None })
}

pub fn register(text: &str) -> Option<Reg> {
    let t = trim(text);
    let (&kind, digits) = t.as_bytes().split_first()?;
    // A letter and a number (`r4`, `s31`, `d16`), or a name (none is a letter and digits).
    if let Some(n) = decimal(digits) {
        return match kind {
            b'r' if n < 16 => Some(Reg::Core(n)),
            b's' if n < 32 => Some(Reg::S(n)),
            b'd' if n < 32 => Some(Reg::D(n)),
            _ => None,
        };
    }
    Some(Reg::Core(match t {
        "sp" => 13,
        "lr" => 14,
        "pc" => 15,
        "ip" => 12,
        "fp" => 11,
        "sl" => 10,
        "sb" => 9,
        _ => return None,
    }))
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

/// The special registers `vmrs` reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    ApsrNzcv,
    Fpscr,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Operand<'a> {
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
    Symbol(&'a str, i64),
    /// `#:lower16:sym+a` / `#:upper16:sym+a`.
    Half(Half, &'a str, i64),
    /// `APSR_nzcv`, `fpscr` (in any case).
    Special(Special),
}

/// What follows a line's labels.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement<'a> {
    /// A directive's name (with its dot) and its arguments, trimmed.
    Directive(&'a str, &'a str),
    Instruction(Instruction<'a>),
}

/// One line: its labels (`name:` at the start, numeric local labels included) and the
/// statement after them, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct Line<'a> {
    pub labels: SmallVec<[&'a str; 1]>,
    pub statement: Option<Statement<'a>>,
}

/// The operands of an instruction (four at most in the instructions the back end writes).
pub type Operands<'a> = SmallVec<[Operand<'a>; 4]>;

#[derive(Clone, Debug, PartialEq)]
pub struct Instruction<'a> {
    pub base: Base,
    pub set_flags: bool,
    pub cond: Cond,
    /// The data-type suffix without its dot (`f32`, `f64.f32`), in lower case; empty when
    /// none.
    pub dt: Cow<'a, str>,
    pub operands: Operands<'a>,
}

/// The `s` flag and condition that follow a base mnemonic (`rest`), when they are valid for
/// `base`.
fn suffixes(base: Base, rest: &str) -> Option<(bool, Cond)> {
    let (set_flags, rest) = match rest.strip_prefix('s') {
        Some(r) if base.takes_s() && (r.is_empty() || cond(r).is_some()) => (true, r),
        _ => (false, rest),
    };
    if rest.is_empty() { Some((set_flags, AL)) } else { cond(rest).map(|c| (set_flags, c)) }
}

/// Splits a lower-case mnemonic without its data type (`addseq`, `bls`) into base, `s` flag
/// and condition. What follows the base is at most three letters (`s` and a condition), so
/// the base is one of the four longest prefixes; the longest valid split wins (`bls` is `b`
/// with `ls`: `bl` with `s` is not valid, as `bl` has no `s` flag).
fn split_mnemonic(head: &str) -> Option<(Base, bool, Cond)> {
    let n = head.len();
    for cut in (n.saturating_sub(3)..=n).rev() {
        let Some(rest) = head.get(cut..) else { continue };
        // Only `s`, a condition or both can follow a base (checked before the look-up).
        let plausible = match rest.len() {
            0 => true,
            1 => rest == "s",
            2 => cond(rest).is_some(),
            _ => rest.strip_prefix('s').is_some_and(|c| cond(c).is_some()),
        };
        if let Some(base) = Base::from_name(&head[..cut]).filter(|_| plausible)
            && let Some((set_flags, cond)) = suffixes(base, rest)
        {
            return Some((base, set_flags, cond));
        }
    }
    None
}

/// `text` split at its first dot (`text.split_once('.')`, without a string search).
fn split_at_dot(text: &str) -> (&str, &str) {
    match text.bytes().position(|b| b == b'.') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, ""),
    }
}

/// Splits a mnemonic like `addseq`, `vmovne.f32`, `bls` into its parts.
fn mnemonic(word: &str) -> Option<(Base, bool, Cond, Cow<'_, str>)> {
    match lowercase(word) {
        Cow::Borrowed(word) => {
            let (head, dt) = split_at_dot(word);
            let (base, set_flags, cond) = split_mnemonic(head)?;
            Some((base, set_flags, cond, Cow::Borrowed(dt)))
        }
        Cow::Owned(word) => {
            let (head, dt) = split_at_dot(&word);
            let (base, set_flags, cond) = split_mnemonic(head)?;
            Some((base, set_flags, cond, Cow::Owned(dt.to_string())))
        }
    }
}

/// The parts of a text between top-level commas (not inside `[...]` or `{...}`), each
/// trimmed; a last part that is empty is left out.
struct Parts<'a> {
    /// What is left to split, `None` after the last part.
    rest: Option<&'a str>,
}

fn split_operands(text: &str) -> Parts<'_> {
    Parts { rest: Some(text) }
}

impl<'a> Iterator for Parts<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        // Leading white space is trimmed off the part anyway (here, ASCII: quicker).
        let text = self.rest?;
        let text = &text[text.bytes().position(|b| !is_space(b)).unwrap_or(text.len())..];
        // A part ends at depth 0, so each starts there.
        let mut depth = 0i32;
        for (i, b) in text.bytes().enumerate() {
            match b {
                b'[' | b'{' => depth += 1,
                b']' | b'}' => depth -= 1,
                b',' if depth == 0 => {
                    self.rest = Some(&text[i + 1..]);
                    return Some(trim(&text[..i]));
                }
                _ => {}
            }
        }
        self.rest = None;
        Some(trim(text)).filter(|last| !last.is_empty())
    }
}

/// An integer in GNU syntax: decimal, `0x` hex, `0b` binary, `0` octal, with a sign.
pub fn integer(text: &str) -> Option<i64> {
    let t = trim(text);
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, trim(d)),
        None => (false, trim(t.strip_prefix('+').unwrap_or(t))),
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
fn symbol_expr(text: &str) -> Option<(&str, i64)> {
    let t = trim(text);
    // The sign is looked for after the first character (a byte search from 1 finds the same
    // one: the rest of a multi-byte first character is no ASCII sign).
    let split = t.bytes().skip(1).position(|b| b == b'+' || b == b'-').map(|i| i + 1);
    let (name, addend) = match split {
        Some(i) => (&t[..i], integer(&t[i..])?),
        None => (t, 0),
    };
    let ok = !name.is_empty()
        && name.bytes().all(is_label_byte)
        && !name.starts_with(|c: char| c.is_ascii_digit() && !name.ends_with(['b', 'f']));
    ok.then_some((name, addend))
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
    let t = lowercase(trim(text));
    if t == "rrx" {
        return Some((ShiftKind::Ror, ShiftBy::Rrx));
    }
    let space = find_space(&t)?;
    let kind = shift_kind(&t[..space])?;
    // The space itself is trimmed with the rest.
    let amount = trim(&t[space..]);
    if let Some(imm) = amount.strip_prefix('#') {
        return Some((kind, ShiftBy::Imm(u32::try_from(integer(imm)?).ok()?)));
    }
    match register(amount)? {
        Reg::Core(r) => Some((kind, ShiftBy::Reg(r))),
        _ => None,
    }
}

fn memory(inner: &str, writeback: bool) -> Option<Mem> {
    let mut parts = split_operands(inner);
    let base = match register(parts.next()?)? {
        Reg::Core(r) => r,
        _ => return None,
    };
    let mut mem = Mem { base, offset: MemOffset::Imm(0), subtract: false, writeback, post: false };
    // Up to two parts after the base: the offset and its shift.
    match (parts.next(), parts.next(), parts.next()) {
        (None, ..) => {}
        (Some(offset_text), shift_text, None) => {
            let (offset, subtract) = offset(offset_text, shift_text)?;
            mem.offset = offset;
            mem.subtract = subtract;
        }
        _ => return None,
    }
    Some(mem)
}

/// An offset: `#imm`, `rm`, `-rm`, optionally with a shift.
fn offset(text: &str, shift_text: Option<&str>) -> Option<(MemOffset, bool)> {
    let t = trim(text);
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
        let item = trim(item);
        match item.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (register(a)?, register(b)?);
                match (a, b) {
                    (Reg::Core(x), Reg::Core(y)) if x <= y => regs.extend((x..=y).map(Reg::Core)),
                    (Reg::S(x), Reg::S(y)) if x <= y => regs.extend((x..=y).map(Reg::S)),
                    (Reg::D(x), Reg::D(y)) if x <= y => regs.extend((x..=y).map(Reg::D)),
                    _ => return None,
                }
            }
            None => regs.push(register(item)?),
        }
    }
    Some(regs)
}

fn float(text: &str) -> Option<f64> {
    let t = trim(text);
    if t.contains(['.', 'e', 'E']) || t.contains("inf") || t.contains("nan") { t.parse().ok() } else { None }
}

fn operand(text: &str) -> Option<Operand<'_>> {
    let t = trim(text);
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
        let imm = trim(imm);
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
    if t.eq_ignore_ascii_case("apsr_nzcv") {
        return Some(Operand::Special(Special::ApsrNzcv));
    }
    if t.eq_ignore_ascii_case("fpscr") {
        return Some(Operand::Special(Special::Fpscr));
    }
    symbol_expr(t).map(|(name, addend)| Operand::Symbol(name, addend))
}

/// Removes a comment (`@` to the end of the line, outside string literals).
fn strip_comment(line: &str) -> &str {
    // Up to the first `@` or `"` nothing is in a string.
    let Some(first) = line.bytes().position(|b| b == b'@' || b == b'"') else { return line };
    if line.as_bytes()[first] == b'@' {
        return &line[..first];
    }
    let mut in_string = false;
    let mut escaped = false;
    for (i, b) in line.bytes().enumerate().skip(first) {
        match b {
            _ if escaped => escaped = false,
            b'\\' if in_string => escaped = true,
            b'"' => in_string = !in_string,
            b'@' if !in_string => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Whether `b` can be in a label: letters, digits, `.`, `_` and `$`.
fn is_label_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'$')
}

/// The label `rest` starts with (white space may come before its colon), and what follows
/// it, trimmed. (The name before a line's first colon, trimmed, when it is one: `rest` is
/// trimmed, and a label has no colon or space.)
fn leading_label(rest: &str) -> Option<(&str, &str)> {
    let end = rest.bytes().position(|b| !is_label_byte(b)).unwrap_or(rest.len());
    let after = trim_start(&rest[end..]).strip_prefix(':')?;
    (end > 0).then(|| (&rest[..end], trim(after)))
}

/// The labels and the statement of one line.
pub fn line(text: &str, number: usize) -> Result<Line<'_>, AsmError> {
    let err = |message: String| AsmError { line: number, message };
    let mut rest = trim(strip_comment(text));
    let mut labels = SmallVec::new();
    while let Some((name, after)) = leading_label(rest) {
        labels.push(name);
        rest = after;
    }
    if rest.is_empty() {
        return Ok(Line { labels, statement: None });
    }
    let (word, args) = match find_space(rest) {
        Some(i) => (&rest[..i], trim(&rest[i..])),
        None => (rest, ""),
    };
    if word.starts_with('.') {
        return Ok(Line { labels, statement: Some(Statement::Directive(word, args)) });
    }
    let (base, set_flags, cond, dt) = mnemonic(word).ok_or_else(|| err(format!("unknown instruction `{word}`")))?;
    let mut operands = Operands::new();
    for part in split_operands(args) {
        operands.push(operand(part).ok_or_else(|| err(format!("cannot read operand `{part}` of `{word}`")))?);
    }
    Ok(Line { labels, statement: Some(Statement::Instruction(Instruction { base, set_flags, cond, dt, operands })) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(word: &str) -> Option<(&'static str, bool, Cond, String)> {
        mnemonic(word).map(|(base, s, c, dt)| (base.name(), s, c, dt.into_owned()))
    }

    #[test]
    fn mnemonics_split_into_base_flags_condition_and_type() {
        assert_eq!(parts("addseq"), Some(("add", true, Cond(0), String::new())));
        assert_eq!(parts("bls"), Some(("b", false, Cond(9), String::new())));
        assert_eq!(parts("blne"), Some(("bl", false, Cond(1), String::new())));
        assert_eq!(parts("vmovne.f32"), Some(("vmov", false, Cond(1), "f32".into())));
        assert_eq!(parts("vcvt.f64.f32"), Some(("vcvt", false, AL, "f64.f32".into())));
        assert_eq!(parts("VCVT.F64.F32"), Some(("vcvt", false, AL, "f64.f32".into())));
        assert_eq!(parts("mls"), Some(("mls", false, AL, String::new())));
        assert_eq!(parts("lsls"), Some(("lsl", true, AL, String::new())));
        assert_eq!(parts("subs"), Some(("sub", true, AL, String::new())));
        assert_eq!(parts("cmpne"), Some(("cmp", false, Cond(1), String::new())));
        assert_eq!(parts("ldrsh"), Some(("ldrsh", false, AL, String::new())));
        assert_eq!(parts("strhi"), Some(("str", false, Cond(8), String::new())));
        assert_eq!(parts("ldrhs"), Some(("ldr", false, Cond(2), String::new())));
        assert_eq!(parts("frob"), None);
        assert_eq!(parts("é"), None);
    }

    /// The longest valid split is the one the assembler's original rule gives: the first
    /// match in a table that lists every base before the bases that are prefixes of it.
    #[test]
    fn the_longest_valid_split_is_the_first_in_prefix_order() {
        let mut table = Base::ALL.to_vec();
        table.sort_by_key(|b| std::cmp::Reverse(b.name().len()));
        let first_match = |head: &str| table.iter().find_map(|&b| suffixes(b, head.strip_prefix(b.name())?).map(|(s, c)| (b, s, c)));
        let conds = ["", "eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le", "al", "x"];
        for &base in Base::ALL {
            for s in ["", "s", "l", "sb", "h", "x"] {
                for c in conds {
                    let head = format!("{}{s}{c}", base.name());
                    assert_eq!(split_mnemonic(&head), first_match(&head), "{head}");
                }
            }
        }
    }

    #[test]
    fn operands_of_every_shape() {
        let st = line("\tldr\tr0, [r1, -r2, lsl #2]", 1).expect("parses");
        let Some(Statement::Instruction(i)) = &st.statement else { panic!() };
        assert_eq!(
            i.operands[1],
            Operand::Mem(Mem { base: 1, offset: MemOffset::Reg(2, ShiftKind::Lsl, 2), subtract: true, writeback: false, post: false })
        );
        let st = line(".L0_3:\t@ bb2", 1).expect("parses");
        assert_eq!(st, Line { labels: [".L0_3"].into_iter().collect(), statement: None });
        let st = line("\tmovw\tr1, #:lower16:sy.a+20", 1).expect("parses");
        let Some(Statement::Instruction(i)) = &st.statement else { panic!() };
        assert_eq!(i.operands[1], Operand::Half(Half::Lower, "sy.a", 20));
        let st = line("\tvstmia\tr2!, {d16-d19}", 1).expect("parses");
        let Some(Statement::Instruction(i)) = &st.statement else { panic!() };
        assert_eq!(i.operands[1], Operand::List(vec![Reg::D(16), Reg::D(17), Reg::D(18), Reg::D(19)]));
        assert!(line("\tfrob\tr0", 3).is_err());
        let st = line("\t.asciz\t\"a@b\"", 1).expect("parses");
        assert_eq!(st.statement, Some(Statement::Directive(".asciz", "\"a@b\"")));
    }

    #[test]
    fn trimming_and_splitting_agree_with_the_char_methods() {
        for text in ["", " ", "\u{b}a\u{b}", "\u{a0}x\u{2003}", " a b ", "é ", " \u{85}", "a\u{3000}b c"] {
            assert_eq!(trim(text), text.trim(), "{text:?}");
            assert_eq!(trim_start(text), text.trim_start(), "{text:?}");
            assert_eq!(find_space(text), text.find(char::is_whitespace), "{text:?}");
        }
    }
}
