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
//! Two passes over the lines ([`parse`]): the first sizes every statement (instructions are
//! 4 bytes; data directives their contents) and places labels; the second encodes
//! ([`encode`]) with every label known. Branches to local labels of the same section are
//! resolved here; branches to other symbols, `movw`/`movt` of symbol halves and `.word`s of
//! symbols become relocations with the addend stored in the instruction field (REL, as ARM
//! ELF does), with the same choices GNU `as` makes: `R_ARM_CALL` for an unconditional `bl`,
//! `R_ARM_JUMP24` for other branches, local `.L` labels referenced through their section.
//!
//! # Second opinion
//! [`compare_with_gnu`] assembles the same text with GNU `as` and compares every section's
//! bytes and every relocation ([`gnu_object`], [`compare_objects`]), so an encoding bug is
//! found (and triaged) like a compiler bug: the campaign does it for a sample of its
//! assembly texts (`harness::oracles::encoder`).

mod encode;
mod parse;

use std::collections::BTreeMap;

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

/// A statement placed in a section.
struct Placed {
    line: usize,
    section: SectionId,
    offset: u64,
    /// Sequence number among all statements (orders numeric local labels).
    seq: usize,
    statement: Statement,
}

/// Where each label is, with everything pass 1 learnt about symbols.
#[derive(Default)]
struct Layout {
    labels: BTreeMap<String, (SectionId, u64)>,
    /// Numeric local labels: name → (sequence number, section, offset) of each definition.
    numeric: BTreeMap<String, Vec<(usize, SectionId, u64)>>,
    globals: Vec<String>,
    functions: Vec<String>,
    sizes: BTreeMap<String, u64>,
}

impl Layout {
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
        self.globals.iter().any(|g| g == name)
    }
}

struct Here<'a> {
    layout: &'a Layout,
    section: SectionId,
    offset: u64,
    seq: usize,
}

impl Context for Here<'_> {
    fn local_branch(&self, label: &str) -> Option<i64> {
        if self.layout.is_global(label) {
            return None;
        }
        let (section, offset) = self.layout.resolve(label, self.seq)?;
        (section == self.section).then(|| offset as i64 - self.offset as i64)
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

/// What a data directive puts in its section.
enum Data {
    Bytes(Vec<u8>),
    Zero(u64),
    /// Words, each a number or a symbol with an addend.
    Words(Vec<Operand>),
    Align(u64),
}

/// The data of a directive, or `None` for directives that place nothing.
fn data_directive(name: &str, args: &str) -> Result<Option<Data>, String> {
    let items = || args.split(',').map(str::trim).filter(|s| !s.is_empty());
    Ok(Some(match name {
        ".word" | ".long" | ".4byte" => Data::Words(
            items()
                .map(|i| match parse::integer(i) {
                    Some(v) => Ok(Operand::Imm(v)),
                    None => parse_symbol(i).ok_or_else(|| format!("cannot read `.word {i}`")),
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

fn parse_symbol(text: &str) -> Option<Operand> {
    match parse::line(&format!("b {text}"), 0).ok()?.pop()? {
        Statement::Instruction(mut i) => i.operands.pop(),
        _ => None,
    }
}

fn size_of(data: &Data, offset: u64) -> u64 {
    match data {
        Data::Bytes(b) => b.len() as u64,
        Data::Zero(n) => *n,
        Data::Words(w) => 4 * w.len() as u64,
        Data::Align(a) => offset.next_multiple_of(*a) - offset,
    }
}

/// Assembles `text` (see the module documentation).
pub fn assemble(text: &str) -> Result<Object, AsmError> {
    let mut placed: Vec<Placed> = Vec::new();
    let mut layout = Layout::default();
    let mut section = SectionId::Text;
    let mut offsets: BTreeMap<SectionId, u64> = BTreeMap::new();
    let mut aligns: BTreeMap<SectionId, u64> = BTreeMap::new();
    // Pass 1: place every statement and label.
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let err = |message: String| AsmError { line, message };
        for statement in parse::line(raw, line)? {
            let offset = *offsets.entry(section).or_insert(0);
            let seq = placed.len();
            match &statement {
                Statement::Label(name) => {
                    if name.bytes().all(|b| b.is_ascii_digit()) {
                        layout.numeric.entry(name.clone()).or_default().push((seq, section, offset));
                    } else if layout.labels.insert(name.clone(), (section, offset)).is_some() {
                        return Err(err(format!("label `{name}` defined twice")));
                    }
                }
                Statement::Directive(name, args) => match name.as_str() {
                    ".text" => section = SectionId::Text,
                    ".data" => section = SectionId::Data,
                    ".bss" => section = SectionId::Bss,
                    ".section" => {
                        let which = args.split(',').next().unwrap_or("").trim();
                        section = match SectionId::from_name(which) {
                            Some(s) => s,
                            // Notes and attributes carry nothing the program needs.
                            None if which.starts_with(".note") || which.starts_with(".ARM.attributes") => section,
                            None => return Err(err(format!("unsupported section `{which}`"))),
                        };
                    }
                    ".global" | ".globl" => layout.globals.extend(args.split(',').map(|s| s.trim().to_string())),
                    ".type" => {
                        if let Some((sym, kind)) = args.split_once(',')
                            && kind.trim() == "%function"
                        {
                            layout.functions.push(sym.trim().to_string());
                        }
                    }
                    ".size" => {
                        let (sym, expr) = args.split_once(',').ok_or_else(|| err("`.size SYM, SIZE`".into()))?;
                        let (sym, expr) = (sym.trim(), expr.trim());
                        let size = match parse::integer(expr) {
                            Some(v) => v as u64,
                            None if expr == format!(".-{sym}") => {
                                let start = layout.labels.get(sym).map_or(0, |&(_, o)| o);
                                offset - start
                            }
                            None => return Err(err(format!("unsupported size expression `{expr}`"))),
                        };
                        layout.sizes.insert(sym.to_string(), size);
                    }
                    ".arch" | ".fpu" | ".syntax" | ".arm" | ".eabi_attribute" | ".file" | ".ident" | ".code" => {}
                    other => {
                        let data = data_directive(other, args).map_err(&err)?.ok_or_else(|| err(format!("unsupported directive `{other}`")))?;
                        if let Data::Align(a) = data {
                            let entry = aligns.entry(section).or_insert(1);
                            *entry = (*entry).max(a);
                        }
                        offsets.insert(section, offset + size_of(&data, offset));
                    }
                },
                Statement::Instruction(_) => {
                    if section == SectionId::Bss {
                        return Err(err("an instruction in .bss".into()));
                    }
                    offsets.insert(section, offset + 4);
                }
            }
            placed.push(Placed { line, section, offset, seq, statement });
        }
    }
    // Pass 2: bytes and relocations.
    let mut object = Object::default();
    for &id in offsets.keys() {
        object.sections.insert(id, Section { align: aligns.get(&id).copied().unwrap_or(1).max(4), ..Section::default() });
    }
    let mut current = SectionId::Text;
    for p in &placed {
        let err = |message: String| AsmError { line: p.line, message };
        match &p.statement {
            Statement::Label(_) => {}
            Statement::Directive(name, args) => {
                match name.as_str() {
                    ".text" => current = SectionId::Text,
                    ".data" => current = SectionId::Data,
                    ".bss" => current = SectionId::Bss,
                    ".section" => {
                        if let Some(s) = SectionId::from_name(args.split(',').next().unwrap_or("").trim()) {
                            current = s;
                        }
                    }
                    _ => {}
                }
                let Some(data) = data_directive(name, args).map_err(&err)? else { continue };
                let sec = object.sections.entry(current).or_default();
                let offset = if current == SectionId::Bss { sec.size } else { sec.bytes.len() as u64 };
                match data {
                    Data::Bytes(b) => sec.bytes.extend(b),
                    Data::Zero(n) => sec.bytes.extend(std::iter::repeat_n(0, n as usize)),
                    Data::Align(a) => {
                        let pad = (offset.next_multiple_of(a) - offset) as usize;
                        if current == SectionId::Text {
                            // GNU fills ARMv7 code with `nop` hints.
                            for _ in 0..pad / 4 {
                                sec.bytes.extend(0xe320_f000u32.to_le_bytes());
                            }
                        } else {
                            sec.bytes.extend(std::iter::repeat_n(0, pad));
                        }
                    }
                    Data::Words(words) => {
                        let mut relocs = Vec::new();
                        for (i, w) in words.into_iter().enumerate() {
                            let value = match w {
                                Operand::Imm(v) => v as u32,
                                Operand::Symbol(name, addend) => {
                                    let (target, stored) = reloc_target(&layout, &name, addend, p.seq);
                                    let at = offset + 4 * i as u64;
                                    relocs.push(Reloc { section: current, offset: at, kind: RelocKind::Abs32, target });
                                    stored as u32
                                }
                                _ => return Err(err("bad .word".into())),
                            };
                            sec.bytes.extend(value.to_le_bytes());
                        }
                        object.relocs.extend(relocs);
                        continue;
                    }
                }
                if current == SectionId::Bss {
                    let sec = object.sections.entry(current).or_default();
                    sec.size += sec.bytes.len() as u64;
                    sec.bytes.clear();
                }
            }
            Statement::Instruction(ins) => {
                let here = Here { layout: &layout, section: p.section, offset: p.offset, seq: p.seq };
                let (word, fixup) = encode::encode(ins, &here).map_err(err)?;
                if let Some(fixup) = fixup {
                    let (kind, symbol) = match fixup {
                        Fixup::Branch { symbol, call } => (if call { RelocKind::Call } else { RelocKind::Jump24 }, symbol),
                        Fixup::Half { half: Half::Lower, symbol } => (RelocKind::MovwAbsNc, symbol),
                        Fixup::Half { half: Half::Upper, symbol } => (RelocKind::MovtAbs, symbol),
                    };
                    // Branches and `movw`/`movt` halves name their symbol, `.L` labels included
                    // (GNU keeps those in the symbol table for these relocations).
                    object.relocs.push(Reloc { section: p.section, offset: p.offset, kind, target: RelocTarget::Symbol(symbol) });
                }
                let sec = object.sections.entry(p.section).or_default();
                debug_assert_eq!(sec.bytes.len() as u64, p.offset, "pass 1 and pass 2 agree on offsets");
                sec.bytes.extend(word.to_le_bytes());
            }
        }
    }
    if let Some(sec) = object.sections.get_mut(&SectionId::Bss) {
        sec.size = offsets.get(&SectionId::Bss).copied().unwrap_or(0);
    }
    for sec in object.sections.values_mut() {
        if !sec.bytes.is_empty() {
            sec.size = sec.bytes.len() as u64;
        }
    }
    // Symbols: every named label but `.L` ones no relocation names, and every referenced
    // undefined name.
    let named = |name: &str| object.relocs.iter().any(|r| r.target == RelocTarget::Symbol(name.to_string()));
    let mut symbols = Vec::new();
    for (name, &(section, offset)) in &layout.labels {
        if name.starts_with(".L") && !named(name) {
            continue;
        }
        symbols.push(Symbol {
            name: name.clone(),
            section: Some(section),
            offset,
            global: layout.is_global(name),
            function: layout.functions.contains(name),
            size: layout.sizes.get(name).copied().unwrap_or(0),
        });
    }
    object.symbols = symbols;
    let mut undefined: Vec<String> = object
        .relocs
        .iter()
        .filter_map(|r| match &r.target {
            RelocTarget::Symbol(s) if !layout.labels.contains_key(s) => Some(s.clone()),
            _ => None,
        })
        .collect();
    undefined.sort();
    undefined.dedup();
    object.symbols.extend(undefined.into_iter().map(|name| Symbol { name, section: None, offset: 0, global: true, function: false, size: 0 }));
    Ok(object)
}

/// The relocation target of `.word sym+addend` and the value stored in the word: a local
/// label goes through its section (its offset stored), anything else through its name.
fn reloc_target(layout: &Layout, name: &str, addend: i64, seq: usize) -> (RelocTarget, i64) {
    match layout.resolve(name, seq) {
        Some((section, offset)) if !layout.is_global(name) => (RelocTarget::Section(section), offset as i64 + addend),
        _ => (RelocTarget::Symbol(name.to_string()), addend),
    }
}

/// Assembles `text` with GNU `as` too and compares every section's bytes and every
/// relocation with [`assemble`]'s; `Err` describes the first difference.
pub fn compare_with_gnu(text: &str) -> Result<(), String> {
    let ours = assemble(text).map_err(|e| format!("in-process assembler: {e}"))?;
    let gnu = gnu_object(text).map_err(|e| format!("GNU as: {e}"))?;
    compare_objects(&ours, &gnu)
}

/// The relocatable object GNU `as` makes of `text` (through the cross gcc driver, so the
/// `as` of the same toolchain).
pub fn gnu_object(text: &str) -> Result<Vec<u8>, crate::toolchain::ToolchainError> {
    use crate::toolchain::ToolchainError;
    let gcc = crate::toolchain::arm_gcc()?;
    let dir = tempfile::tempdir().map_err(|source| ToolchainError::Io {
        action: "cannot create a temporary directory in",
        path: std::env::temp_dir(),
        source,
    })?;
    let out = dir.path().join("gnu.o");
    let args: Vec<std::ffi::OsString> = ["-c", "-x", "assembler", "-", "-o"].iter().map(Into::into).chain([out.clone().into()]).collect();
    crate::toolchain::run_tool(&gcc, &args, Some(text.as_bytes()))?;
    std::fs::read(&out).map_err(|source| ToolchainError::Io { action: "cannot read", path: out, source })
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
