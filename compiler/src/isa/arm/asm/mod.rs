//! The in-process assembler: GNU `as` assembly text (unified syntax, ARM state, VFPv4) into
//! an [`Object`] — section bytes, symbols and relocations — exactly as `arm-linux-gnueabihf-as`
//! would produce them, so that linking ([`super::link`]) needs no external tool.
//!
//! # Why
//! A campaign checks thousands of assembly texts a minute; starting `as` and the gcc driver
//! for each costs far more than compiling them. The back end's output is a small,
//! regular subset of the GNU syntax, which this module accepts in full (and a good deal
//! more: every data-processing, multiply, bit-field, load/store, block-transfer, branch and
//! VFP instruction a compiler for this target would write, with conditions and the `s` flag).
//!
//! # How
//! One pass over the lines ([`parse`]) places every statement (instructions are 4 bytes;
//! data directives their contents) and labels, and writes the bytes of everything that does
//! not depend on where labels are ([`encode`]); what does — branches to labels and `.word`s
//! of symbols — is completed when every label is known ([`Assembler::finish`]). Branches to
//! local labels of the same section are resolved here; branches to other symbols,
//! `movw`/`movt` of symbol halves and `.word`s of symbols become relocations with the addend
//! stored in the instruction field (REL, as ARM ELF does), with the same choices GNU `as`
//! makes: `R_ARM_CALL` for an unconditional `bl`, `R_ARM_JUMP24` for other branches, local
//! `.L` labels referenced through their section.
//!
//! A campaign assembles every text it checks, so this is written not to allocate per line:
//! statements borrow their text, labels and symbol attributes are hashed by `&str`, and
//! sections are an array. The result is that of the two-pass assembler it replaced, byte for
//! byte and error for error (see [`Assembler`] on the order of errors).
//!
//! # Second opinion
//! [`compare_with_gnu`] assembles the same text with GNU `as` and compares every section's
//! bytes and every relocation ([`gnu_object`], [`compare_objects`]), so an encoding bug is
//! found (and triaged) like a compiler bug: the campaign does it for a sample of its
//! assembly texts (`harness::oracles::encoder`).

mod encode;
mod parse;

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};

use encode::{Context, Fixup};
use parse::{Half, Operand, Statement};

/// An error in assembly text: its line (1-based) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("assembly line {line}: {message}")]
pub struct AsmError {
    pub line: usize,
    pub message: String,
}

/// The sections an object can have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SectionId {
    Text,
    Rodata,
    Data,
    Bss,
}

impl SectionId {
    pub const ALL: [SectionId; 4] = [SectionId::Text, SectionId::Rodata, SectionId::Data, SectionId::Bss];

    pub fn name(self) -> &'static str {
        match self {
            SectionId::Text => ".text",
            SectionId::Rodata => ".rodata",
            SectionId::Data => ".data",
            SectionId::Bss => ".bss",
        }
    }

    pub fn from_name(name: &str) -> Option<SectionId> {
        SectionId::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The section's place in `ALL` (and in per-section arrays).
    fn index(self) -> usize {
        self as usize
    }
}

/// A section's contents (`.bss` has a size and no bytes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Section {
    pub bytes: Vec<u8>,
    pub size: u64,
    pub align: u64,
}

/// A named symbol of the object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    /// `None`: undefined here (another object defines it).
    pub section: Option<SectionId>,
    pub offset: u64,
    pub global: bool,
    pub function: bool,
    pub size: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RelocKind {
    Call,
    Jump24,
    MovwAbsNc,
    MovtAbs,
    Abs32,
}

impl RelocKind {
    /// The ELF relocation type number.
    pub fn elf_type(self) -> u32 {
        match self {
            RelocKind::Abs32 => 2,
            RelocKind::Call => 28,
            RelocKind::Jump24 => 29,
            RelocKind::MovwAbsNc => 43,
            RelocKind::MovtAbs => 44,
        }
    }
}

/// What a relocation refers to: a named symbol, or a section (for local labels).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RelocTarget {
    Symbol(String),
    Section(SectionId),
}

/// A relocation; its addend is stored in the bytes it patches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reloc {
    pub section: SectionId,
    pub offset: u64,
    pub kind: RelocKind,
    pub target: RelocTarget,
}

/// An assembled object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Object {
    pub sections: BTreeMap<SectionId, Section>,
    pub symbols: Vec<Symbol>,
    pub relocs: Vec<Reloc>,
}

/// Where each label is, with everything the directives say about symbols.
#[derive(Default)]
struct Layout<'a> {
    labels: FxHashMap<&'a str, (SectionId, u64)>,
    /// Numeric local labels: name → (sequence number, section, offset) of each definition.
    numeric: FxHashMap<&'a str, Vec<(usize, SectionId, u64)>>,
    globals: FxHashSet<&'a str>,
    functions: FxHashSet<&'a str>,
    sizes: FxHashMap<&'a str, u64>,
}

impl Layout<'_> {
    /// A label reference resolved to (section, offset): numeric `Nb`/`Nf` relative to the
    /// statement `seq`.
    fn resolve(&self, name: &str, seq: usize) -> Option<(SectionId, u64)> {
        let numeric = |digits: &str| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        if let Some(d) = name.strip_suffix('b').filter(|d| numeric(d)) {
            return self.numeric.get(d)?.iter().rev().find(|(s, ..)| *s <= seq).map(|&(_, sec, off)| (sec, off));
        }
        if let Some(d) = name.strip_suffix('f').filter(|d| numeric(d)) {
            return self.numeric.get(d)?.iter().find(|(s, ..)| *s > seq).map(|&(_, sec, off)| (sec, off));
        }
        self.labels.get(name).copied()
    }

    fn is_global(&self, name: &str) -> bool {
        self.globals.contains(name)
    }
}

/// A statement's place: its line, its sequence number among all statements (labels
/// included), its section and its offset there.
#[derive(Clone, Copy)]
struct Place {
    line: usize,
    seq: usize,
    section: SectionId,
    offset: u64,
}

struct Here<'l, 'a> {
    layout: &'l Layout<'a>,
    place: Place,
}

impl Context for Here<'_, '_> {
    fn local_branch(&self, label: &str) -> Option<i64> {
        if self.layout.is_global(label) {
            return None;
        }
        let (section, offset) = self.layout.resolve(label, self.place.seq)?;
        (section == self.place.section).then(|| offset as i64 - self.place.offset as i64)
    }
}

/// The context of an instruction that does not need the layout ([`encode::needs_layout`]):
/// never asked.
struct Unplaced;

impl Context for Unplaced {
    fn local_branch(&self, _: &str) -> Option<i64> {
        unreachable!("only a branch to a label asks, and it waits for the layout")
    }
}

/// A string literal's bytes (`\n`, `\t`, `\"`, `\\`, octal `\ooo`).
fn string_bytes(text: &str) -> Option<Vec<u8>> {
    let inner = text.trim().strip_prefix('"')?.strip_suffix('"')?;
    let mut out = Vec::new();
    let mut chars = inner.bytes().peekable();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match chars.next()? {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'"' => out.push(b'"'),
            b'\\' => out.push(b'\\'),
            d @ b'0'..=b'7' => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&n @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(n - b'0');
                            chars.next();
                        }
                        _ => break,
                    }
                }
                out.push(v as u8);
            }
            _ => return None,
        }
    }
    Some(out)
}

/// One item of a `.word` directive.
enum Word {
    Value(u32),
    /// A symbol (or label) with an addend: a relocation.
    Symbol(String, i64),
    /// Another operand (`.word r0`): read, but an error when the word is written.
    Other,
}

/// What a data directive puts in its section.
enum Data {
    Bytes(Vec<u8>),
    Zero(u64),
    Words(Vec<Word>),
    Align(u64),
}

/// The data of a directive, or `None` for directives that place nothing.
fn data_directive(name: &str, args: &str) -> Result<Option<Data>, String> {
    let items = || args.split(',').map(str::trim).filter(|s| !s.is_empty());
    Ok(Some(match name {
        ".word" | ".long" | ".4byte" => Data::Words(
            items()
                .map(|i| match parse::integer(i) {
                    Some(v) => Ok(Word::Value(v as u32)),
                    None => word_operand(i).ok_or_else(|| format!("cannot read `.word {i}`")),
                })
                .collect::<Result<_, _>>()?,
        ),
        ".zero" | ".space" => Data::Zero(parse::integer(args).and_then(|v| u64::try_from(v).ok()).ok_or("bad size")?),
        ".asciz" | ".string" | ".ascii" => {
            let mut bytes = string_bytes(args).ok_or_else(|| format!("cannot read the string {args}"))?;
            if name != ".ascii" {
                bytes.push(0);
            }
            Data::Bytes(bytes)
        }
        ".byte" => Data::Bytes(
            items().map(|i| parse::integer(i).map(|v| v as u8).ok_or_else(|| format!("bad byte `{i}`"))).collect::<Result<_, _>>()?,
        ),
        ".align" | ".p2align" => Data::Align(1 << parse::integer(args).filter(|v| (0..16).contains(v)).ok_or("bad alignment")?),
        ".balign" => Data::Align(parse::integer(args).and_then(|v| u64::try_from(v).ok()).filter(|v| v.is_power_of_two()).ok_or("bad alignment")?),
        _ => return Ok(None),
    }))
}

/// A `.word` item that is not a number, read as the last operand of `b ITEM` would be.
fn word_operand(text: &str) -> Option<Word> {
    let line = format!("b {text}");
    let Some(Statement::Instruction(ins)) = parse::line(&line, 0).ok()?.statement else { return None };
    Some(match ins.operands.last()? {
        Operand::Imm(v) => Word::Value(*v as u32),
        Operand::Symbol(name, addend) => Word::Symbol(name.to_string(), *addend),
        _ => Word::Other,
    })
}

fn size_of(data: &Data, offset: u64) -> u64 {
    match data {
        Data::Bytes(b) => b.len() as u64,
        Data::Zero(n) => *n,
        Data::Words(w) => 4 * w.len() as u64,
        Data::Align(a) => offset.next_multiple_of(*a) - offset,
    }
}

/// A section being assembled.
#[derive(Default)]
struct Building {
    /// Whether any statement was placed in it (only those sections are in the object).
    used: bool,
    /// The offset of the next statement (the sum of the sizes before it): where labels are
    /// and where instructions' relocations point.
    offset: u64,
    /// The largest `.align`, 0 when none.
    align: u64,
    /// The bytes written. Outside `.bss` their length is `offset`, unless an `.align` in
    /// `.text` needed padding that is not a whole number of `nop`s (only whole `nop`s are
    /// written).
    bytes: Vec<u8>,
    /// `.bss` keeps no bytes: each data directive's are counted here, with those of the
    /// `.word`s before it, and dropped (the words stay in `bytes` until then).
    bss_size: u64,
    /// How many times `.bss` dropped its bytes (a `.word` written before a drop is gone).
    drops: usize,
}

/// What waits for the whole layout, in statement order (which is the order of the
/// relocations).
enum Late<'a> {
    /// A relocation known at once (`movw`/`movt` of a symbol).
    Reloc { seq: usize, reloc: Reloc },
    /// A branch to a label, whose word is at byte `at` of its section: resolved here when
    /// the label is local to the section, a relocation otherwise.
    Branch { place: Place, at: usize, ins: parse::Instruction<'a> },
    /// A `.word` of a symbol, whose word is at byte `at` (unless `.bss` dropped it since,
    /// after `drops` drops) and whose relocation is at `offset`: a local label goes through
    /// its section.
    Word { seq: usize, section: SectionId, offset: u64, at: usize, drops: usize, name: String, addend: i64 },
}

impl Late<'_> {
    fn seq(&self) -> usize {
        match self {
            Late::Reloc { seq, .. } | Late::Word { seq, .. } => *seq,
            Late::Branch { place, .. } => place.seq,
        }
    }
}

/// The assembler's state as it reads the text, once: every statement is placed, and encoded
/// unless it needs the layout ([`Late`]); [`Assembler::finish`] does the rest.
///
/// The errors are those of reading the text in two passes, placing and then encoding: an
/// error in reading or placing a statement is reported at once; the first error of an
/// encoding only when the whole text is placed without error.
struct Assembler<'a> {
    layout: Layout<'a>,
    /// Indexed by [`SectionId::index`].
    sections: [Building; 4],
    section: SectionId,
    /// The sequence number of the next statement.
    seq: usize,
    late: Vec<Late<'a>>,
    /// The first encoding that failed: its sequence number and error.
    encode_error: Option<(usize, AsmError)>,
}

impl<'a> Assembler<'a> {
    fn new() -> Self {
        Assembler { layout: Layout::default(), sections: Default::default(), section: SectionId::Text, seq: 0, late: Vec::new(), encode_error: None }
    }

    /// Places the next statement in the current section.
    fn place(&mut self, line: usize) -> Place {
        let sec = &mut self.sections[self.section.index()];
        sec.used = true;
        let place = Place { line, seq: self.seq, section: self.section, offset: sec.offset };
        self.seq += 1;
        place
    }

    fn encode_failed(&mut self, place: Place, message: String) {
        if self.encode_error.is_none() {
            self.encode_error = Some((place.seq, AsmError { line: place.line, message }));
        }
    }

    fn label(&mut self, name: &'a str, line: usize) -> Result<(), AsmError> {
        let place = self.place(line);
        if name.bytes().all(|b| b.is_ascii_digit()) {
            self.layout.numeric.entry(name).or_default().push((place.seq, place.section, place.offset));
        } else if self.layout.labels.insert(name, (place.section, place.offset)).is_some() {
            return Err(AsmError { line, message: format!("label `{name}` defined twice") });
        }
        Ok(())
    }

    fn directive(&mut self, name: &'a str, args: &'a str, line: usize) -> Result<(), AsmError> {
        let place = self.place(line);
        let err = |message: String| AsmError { line, message };
        match name {
            ".text" => self.section = SectionId::Text,
            ".data" => self.section = SectionId::Data,
            ".bss" => self.section = SectionId::Bss,
            ".section" => {
                let which = parse::trim(args.split(',').next().unwrap_or(""));
                self.section = match SectionId::from_name(which) {
                    Some(s) => s,
                    // Notes and attributes carry nothing the program needs.
                    None if which.starts_with(".note") || which.starts_with(".ARM.attributes") => self.section,
                    None => return Err(err(format!("unsupported section `{which}`"))),
                };
            }
            ".global" | ".globl" => self.layout.globals.extend(args.split(',').map(parse::trim)),
            ".type" => {
                if let Some((sym, kind)) = args.split_once(',')
                    && parse::trim(kind) == "%function"
                {
                    self.layout.functions.insert(parse::trim(sym));
                }
            }
            ".size" => {
                let (sym, expr) = args.split_once(',').ok_or_else(|| err("`.size SYM, SIZE`".into()))?;
                let (sym, expr) = (parse::trim(sym), parse::trim(expr));
                let size = match parse::integer(expr) {
                    Some(v) => v as u64,
                    None if expr.strip_prefix(".-") == Some(sym) => {
                        let start = self.layout.labels.get(sym).map_or(0, |&(_, o)| o);
                        place.offset - start
                    }
                    None => return Err(err(format!("unsupported size expression `{expr}`"))),
                };
                self.layout.sizes.insert(sym, size);
            }
            ".arch" | ".fpu" | ".syntax" | ".arm" | ".eabi_attribute" | ".file" | ".ident" | ".code" => {}
            other => {
                let data = data_directive(other, args).map_err(&err)?.ok_or_else(|| err(format!("unsupported directive `{other}`")))?;
                self.data(data, place);
            }
        }
        Ok(())
    }

    /// Places and writes the data of a directive.
    fn data(&mut self, data: Data, place: Place) {
        let sec = &mut self.sections[place.section.index()];
        if let Data::Align(a) = data {
            sec.align = sec.align.max(a);
        }
        sec.offset = place.offset + size_of(&data, place.offset);
        let bss = place.section == SectionId::Bss;
        // Where the data goes (padding is counted from here).
        let start = if bss { sec.bss_size } else { sec.bytes.len() as u64 };
        let length = match &data {
            Data::Words(words) => {
                for (i, word) in words.iter().enumerate() {
                    match word {
                        Word::Value(v) => sec.bytes.extend(v.to_le_bytes()),
                        Word::Symbol(name, addend) => {
                            let (offset, at, drops) = (start + 4 * i as u64, sec.bytes.len(), sec.drops);
                            let (name, addend) = (name.clone(), *addend);
                            self.late.push(Late::Word { seq: place.seq, section: place.section, offset, at, drops, name, addend });
                            sec.bytes.extend([0; 4]);
                        }
                        Word::Other => return self.encode_failed(place, "bad .word".into()),
                    }
                }
                // Words stay, even in `.bss` (until its next data directive).
                return;
            }
            Data::Bytes(b) => b.len() as u64,
            Data::Zero(n) => *n,
            Data::Align(a) => start.next_multiple_of(*a) - start,
        };
        if bss {
            sec.bss_size += sec.bytes.len() as u64 + length;
            sec.bytes.clear();
            sec.drops += 1;
            return;
        }
        match data {
            Data::Bytes(b) => sec.bytes.extend(b),
            // GNU fills ARMv7 code with `nop` hints.
            Data::Align(_) if place.section == SectionId::Text => {
                for _ in 0..length / 4 {
                    sec.bytes.extend(0xe320_f000u32.to_le_bytes());
                }
            }
            _ => sec.bytes.resize(sec.bytes.len() + length as usize, 0),
        }
    }

    fn instruction(&mut self, ins: &parse::Instruction<'a>, line: usize) -> Result<(), AsmError> {
        let place = self.place(line);
        if place.section == SectionId::Bss {
            return Err(AsmError { line, message: "an instruction in .bss".into() });
        }
        let sec = &mut self.sections[place.section.index()];
        sec.offset = place.offset + 4;
        let at = sec.bytes.len();
        if encode::needs_layout(ins) {
            sec.bytes.extend([0; 4]);
            self.late.push(Late::Branch { place, at, ins: ins.clone() });
            return Ok(());
        }
        match encode::encode(ins, &Unplaced) {
            Ok((word, fixup)) => {
                sec.bytes.extend(word.to_le_bytes());
                if let Some(fixup) = fixup {
                    self.late.push(Late::Reloc { seq: place.seq, reloc: fixup_reloc(place, fixup) });
                }
            }
            Err(message) => self.encode_failed(place, message),
        }
        Ok(())
    }

    /// Resolves what waited for the layout and makes the object.
    fn finish(self) -> Result<Object, AsmError> {
        let Assembler { layout, mut sections, late, encode_error, .. } = self;
        let mut relocs = Vec::new();
        for item in late {
            // The first error in statement order is reported: a branch out of range before
            // the first failed encoding, or that encoding.
            if encode_error.as_ref().is_some_and(|(seq, _)| item.seq() > *seq) {
                break;
            }
            match item {
                Late::Reloc { reloc, .. } => relocs.push(reloc),
                Late::Branch { place, at, ins } => {
                    let here = Here { layout: &layout, place };
                    let (word, fixup) = encode::encode(&ins, &here).map_err(|message| AsmError { line: place.line, message })?;
                    sections[place.section.index()].bytes[at..at + 4].copy_from_slice(&word.to_le_bytes());
                    if let Some(fixup) = fixup {
                        // Branches name their symbol, `.L` labels included (GNU keeps those in
                        // the symbol table for these relocations).
                        relocs.push(fixup_reloc(place, fixup));
                    }
                }
                Late::Word { seq, section, offset, at, drops, name, addend } => {
                    let (target, stored) = reloc_target(&layout, &name, addend, seq);
                    let sec = &mut sections[section.index()];
                    if sec.drops == drops {
                        sec.bytes[at..at + 4].copy_from_slice(&(stored as u32).to_le_bytes());
                    }
                    relocs.push(Reloc { section, offset, kind: RelocKind::Abs32, target });
                }
            }
        }
        if let Some((_, error)) = encode_error {
            return Err(error);
        }
        let mut object = Object::default();
        for id in SectionId::ALL {
            let sec = &mut sections[id.index()];
            if !sec.used {
                continue;
            }
            let bytes = std::mem::take(&mut sec.bytes);
            let size = match id {
                _ if !bytes.is_empty() => bytes.len() as u64,
                SectionId::Bss => sec.offset,
                _ => 0,
            };
            object.sections.insert(id, Section { bytes, size, align: sec.align.max(4) });
        }
        // Symbols: every named label but `.L` ones no relocation names (in name order), then
        // every referenced undefined name.
        let named: FxHashSet<&str> = relocs
            .iter()
            .filter_map(|r| match &r.target {
                RelocTarget::Symbol(s) => Some(s.as_str()),
                RelocTarget::Section(_) => None,
            })
            .collect();
        let mut defined: Vec<(&str, (SectionId, u64))> =
            layout.labels.iter().filter(|(name, _)| !name.starts_with(".L") || named.contains(*name)).map(|(&n, &at)| (n, at)).collect();
        defined.sort_unstable_by_key(|&(name, _)| name);
        let mut undefined: Vec<&str> = named.iter().copied().filter(|name| !layout.labels.contains_key(name)).collect();
        undefined.sort_unstable();
        object.symbols = defined
            .into_iter()
            .map(|(name, (section, offset))| Symbol {
                name: name.to_string(),
                section: Some(section),
                offset,
                global: layout.is_global(name),
                function: layout.functions.contains(name),
                size: layout.sizes.get(name).copied().unwrap_or(0),
            })
            .chain(undefined.into_iter().map(|name| Symbol {
                name: name.to_string(),
                section: None,
                offset: 0,
                global: true,
                function: false,
                size: 0,
            }))
            .collect();
        object.relocs = relocs;
        Ok(object)
    }
}

/// The relocation an instruction's fixup needs.
fn fixup_reloc(place: Place, fixup: Fixup) -> Reloc {
    let (kind, symbol) = match fixup {
        Fixup::Branch { symbol, call } => (if call { RelocKind::Call } else { RelocKind::Jump24 }, symbol),
        Fixup::Half { half: Half::Lower, symbol } => (RelocKind::MovwAbsNc, symbol),
        Fixup::Half { half: Half::Upper, symbol } => (RelocKind::MovtAbs, symbol),
    };
    Reloc { section: place.section, offset: place.offset, kind, target: RelocTarget::Symbol(symbol.to_string()) }
}

/// Assembles `text` (see the module documentation).
pub fn assemble(text: &str) -> Result<Object, AsmError> {
    let mut asm = Assembler::new();
    for (index, raw) in lines(text).enumerate() {
        let line = index + 1;
        let parsed = parse::line(raw, line)?;
        for &label in &parsed.labels {
            asm.label(label, line)?;
        }
        match &parsed.statement {
            None => {}
            Some(Statement::Directive(name, args)) => asm.directive(name, args, line)?,
            Some(Statement::Instruction(ins)) => asm.instruction(ins, line)?,
        }
    }
    asm.finish()
}

/// The lines of `text`, as `str::lines` splits them, found by a loop over the bytes: lines
/// of assembly are short, and the loop is quicker than a `memchr` call for each.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let line = match rest.bytes().position(|b| b == b'\n') {
            Some(end) => {
                let line = &rest[..end];
                rest = &rest[end + 1..];
                line.strip_suffix('\r').unwrap_or(line)
            }
            None => std::mem::take(&mut rest),
        };
        Some(line)
    })
}

/// The relocation target of `.word sym+addend` and the value stored in the word: a local
/// label goes through its section (its offset stored), anything else through its name.
fn reloc_target(layout: &Layout, name: &str, addend: i64, seq: usize) -> (RelocTarget, i64) {
    match layout.resolve(name, seq) {
        Some((section, offset)) if !layout.is_global(name) => (RelocTarget::Section(section), offset as i64 + addend),
        _ => (RelocTarget::Symbol(name.to_string()), addend),
    }
}

/// Compares `ours` with GNU's relocatable object (ELF bytes): every section's bytes and size
/// and every relocation; `Err` describes the first difference.
pub fn compare_objects(ours: &Object, gnu: &[u8]) -> Result<(), String> {
    use object::{Object as _, ObjectSection as _, ObjectSymbol as _, RelocationTarget};
    let file = object::File::parse(gnu).map_err(|e| format!("reading GNU's object: {e}"))?;
    for id in SectionId::ALL {
        let theirs = file.section_by_name(id.name());
        let mine = ours.sections.get(&id);
        let their_bytes = match &theirs {
            Some(s) if id != SectionId::Bss => s.data().map_err(|e| e.to_string())?.to_vec(),
            _ => Vec::new(),
        };
        let my_bytes = mine.map(|s| s.bytes.clone()).unwrap_or_default();
        if their_bytes != my_bytes {
            let at = their_bytes.iter().zip(&my_bytes).position(|(a, b)| a != b).unwrap_or(their_bytes.len().min(my_bytes.len()));
            let word = |b: &[u8]| b.get(at & !3..(at & !3) + 4).map(|w| format!("{:08x}", u32::from_le_bytes(w.try_into().unwrap_or_default())));
            return Err(format!(
                "{}: bytes differ at offset {at:#x}: GNU {:?}, ours {:?} ({} vs {} bytes)",
                id.name(),
                word(&their_bytes),
                word(&my_bytes),
                their_bytes.len(),
                my_bytes.len()
            ));
        }
        let their_size = theirs.as_ref().map_or(0, |s| s.size());
        let my_size = mine.map_or(0, |s| s.size);
        if their_size != my_size {
            return Err(format!("{}: size {their_size} in GNU's object, {my_size} in ours", id.name()));
        }
        let mut their_relocs: Vec<(u64, u32, String)> = Vec::new();
        if let Some(s) = &theirs {
            for (offset, r) in s.relocations() {
                let object::RelocationFlags::Elf { r_type } = r.flags() else { continue };
                let r_type = r_type.0;
                let target = match r.target() {
                    RelocationTarget::Symbol(i) => {
                        let sym = file.symbol_by_index(i).map_err(|e| e.to_string())?;
                        if sym.kind() == object::SymbolKind::Section {
                            file.section_by_index(sym.section_index().ok_or("section symbol without section")?)
                                .and_then(|s| s.name().map(str::to_string))
                                .map_err(|e| e.to_string())?
                        } else {
                            sym.name().map_err(|e| e.to_string())?.to_string()
                        }
                    }
                    _ => "?".into(),
                };
                their_relocs.push((offset, r_type, target));
            }
        }
        let mut my_relocs: Vec<(u64, u32, String)> = ours
            .relocs
            .iter()
            .filter(|r| r.section == id)
            .map(|r| {
                let target = match &r.target {
                    RelocTarget::Symbol(s) => s.clone(),
                    RelocTarget::Section(s) => s.name().to_string(),
                };
                (r.offset, r.kind.elf_type(), target)
            })
            .collect();
        their_relocs.sort();
        my_relocs.sort();
        if their_relocs != my_relocs {
            let first = their_relocs.iter().zip(&my_relocs).find(|(a, b)| a != b);
            return Err(format!(
                "{}: relocations differ ({} in GNU's object, {} in ours); first difference {first:?}",
                id.name(),
                their_relocs.len(),
                my_relocs.len()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
