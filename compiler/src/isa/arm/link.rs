//! The in-process static linker: the program's [`Object`] (from [`super::asm`]) and the
//! runtime library's relocatable ELF object into a static ARM executable, without `ld`.
//!
//! The inputs are small and regular: one program object and one freestanding runtime object
//! (no libc; see `runtime::library`), with `.text`, `.rodata`, `.data` and `.bss` and the
//! static relocations a non-PIC ARM compiler emits (`R_ARM_ABS32`, `R_ARM_REL32`,
//! `R_ARM_CALL`, `R_ARM_JUMP24`, `R_ARM_MOVW_ABS_NC`, `R_ARM_MOVT_ABS`; `R_ARM_V4BX` and
//! `R_ARM_NONE` change nothing). Anything else is an error naming it, never a silently wrong
//! executable.
//!
//! # Layout
//! ```text
//! file 0        ELF header, program headers (not loaded)
//! 0x10000       runtime .text, .rodata               ┐ the runtime's part: the same addresses
//! next page     runtime .data, .bss                  ┘ and bytes in every executable
//! next page     program .text, runtime entry code, program .rodata   ─ read+execute
//! next page     program .data, .bss                                  ─ read+write
//! ```
//! Why the runtime comes first, on pages of its own: its code and everything that code's
//! bytes depend on (its rodata, data and bss addresses) are then identical in every
//! executable linked with the same runtime object, so the harness's fork server can
//! translate the runtime once and let every run inherit the translations (qemu-user drops
//! the translations of a page range when it is mapped again, so the program's code must not
//! share a page with the runtime's). The runtime's code that refers to the program (its
//! entry, which calls `main`: any runtime text section with a relocation against a symbol
//! the runtime does not define) is placed after the program's code instead; runtime code
//! placed at the fixed addresses that refers to it is an error. The program's calls into the
//! runtime stay plain `bl`s (the whole image spans far less than their 32 MiB reach).
//!
//! The entry point is the runtime's `_start`. A symbol table (program markers
//! `__sysy_prog_begin`/`__sysy_prog_end`, functions, and the `$a`/`$d` mapping symbols) lets
//! the cost plugin tell the program's code from the runtime's, as with GNU `ld`.

use std::collections::BTreeMap;

use object::{Object as _, ObjectSection as _, ObjectSymbol as _, RelocationTarget, SectionKind, SymbolKind};

use super::asm::{Object, RelocTarget, SectionId};

/// Why linking failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("linking: {0}")]
pub struct LinkError(pub String);

fn fail<T>(message: impl Into<String>) -> Result<T, LinkError> {
    Err(LinkError(message.into()))
}

const BASE: u64 = 0x10000;
const PAGE: u64 = 0x1000;
const EHDR: u64 = 52;
const PHDR: u64 = 32;
/// The four loadable segments (see [`SEGMENTS`]) and the stack note.
const PHNUM: u64 = 5;

/// Which part of the image a piece goes to (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    /// At fixed addresses, the same in every executable.
    Runtime,
    /// After the runtime's part: the program and the runtime code that refers to it.
    Program,
}

/// An output section: a part's text, rodata, data or bss.
type OutputSection = (Part, SectionId);

/// The loadable segments in address order, each with its sections and ELF flags.
const SEGMENTS: [(Part, [SectionId; 2], u32); 4] = [
    (Part::Runtime, [SectionId::Text, SectionId::Rodata], 0x5),
    (Part::Runtime, [SectionId::Data, SectionId::Bss], 0x6),
    (Part::Program, [SectionId::Text, SectionId::Rodata], 0x5),
    (Part::Program, [SectionId::Data, SectionId::Bss], 0x6),
];

/// The output sections in address order (the section header table's order).
fn output_sections() -> impl Iterator<Item = OutputSection> {
    SEGMENTS.into_iter().flat_map(|(part, ids, _)| ids.map(|id| (part, id)))
}

/// A symbol reference of a relocation, resolved per input.
#[derive(Clone, Debug)]
enum Target {
    /// A named symbol (looked up among the input's locals, then the globals).
    Name(String),
    /// The start of an input section (a piece).
    Piece(usize),
}

#[derive(Clone, Debug)]
struct InputReloc {
    offset: u64,
    r_type: u32,
    target: Target,
}

/// One input section before layout.
#[derive(Clone, Debug)]
struct Piece {
    input: usize,
    part: Part,
    id: SectionId,
    bytes: Vec<u8>,
    size: u64,
    align: u64,
    relocs: Vec<InputReloc>,
    /// Output offset within its output section (set by layout).
    at: u64,
}

#[derive(Clone, Debug)]
struct InputSymbol {
    name: String,
    input: usize,
    /// The piece holding it.
    piece: usize,
    section: SectionId,
    offset: u64,
    global: bool,
    function: bool,
    size: u64,
}

/// The inputs, gathered into one shape.
#[derive(Default)]
struct Inputs {
    pieces: Vec<Piece>,
    symbols: Vec<InputSymbol>,
}

impl Inputs {
    fn add_program(&mut self, object: &Object) {
        let input = 0;
        let first = self.pieces.len();
        let piece_of = |id: SectionId| first + object.sections.keys().position(|&k| k == id).unwrap_or(0);
        for (&id, section) in &object.sections {
            let relocs = object
                .relocs
                .iter()
                .filter(|r| r.section == id)
                .map(|r| InputReloc {
                    offset: r.offset,
                    r_type: r.kind.elf_type(),
                    target: match &r.target {
                        RelocTarget::Symbol(s) => Target::Name(s.clone()),
                        RelocTarget::Section(s) => Target::Piece(piece_of(*s)),
                    },
                })
                .collect();
            self.pieces.push(Piece { input, part: Part::Program, id, bytes: section.bytes.clone(), size: section.size, align: section.align, relocs, at: 0 });
        }
        for s in &object.symbols {
            if let Some(section) = s.section {
                self.symbols.push(InputSymbol {
                    name: s.name.clone(),
                    input,
                    piece: piece_of(section),
                    section,
                    offset: s.offset,
                    global: s.global,
                    function: s.function,
                    size: s.size,
                });
            }
        }
    }

    fn add_elf(&mut self, input: usize, bytes: &[u8]) -> Result<(), LinkError> {
        let file = object::File::parse(bytes).map_err(|e| LinkError(format!("the runtime object: {e}")))?;
        // Every kept section's piece number first: a relocation may refer to a section that
        // comes later in the file.
        let mut ids = BTreeMap::new();
        for section in file.sections() {
            let name = section.name().unwrap_or("");
            let id = match section.kind() {
                SectionKind::Text => SectionId::Text,
                SectionKind::ReadOnlyData | SectionKind::ReadOnlyString => SectionId::Rodata,
                SectionKind::Data => SectionId::Data,
                SectionKind::UninitializedData => SectionId::Bss,
                _ if name.starts_with(".ARM.exidx") || name.starts_with(".ARM.extab") => {
                    return fail(format!("the runtime object has unwind tables ({name}); build it without them"));
                }
                _ => continue,
            };
            if section.size() > 0 {
                ids.insert(section.index().0, (id, self.pieces.len() + ids.len()));
            }
        }
        for section in file.sections() {
            let Some(&(id, _)) = ids.get(&section.index().0) else { continue };
            let name = section.name().unwrap_or("");
            let data = if id == SectionId::Bss { Vec::new() } else { section.data().map_err(|e| LinkError(e.to_string()))?.to_vec() };
            let mut relocs = Vec::new();
            for (offset, r) in section.relocations() {
                let object::RelocationFlags::Elf { r_type } = r.flags() else { return fail("a non-ELF relocation") };
                let target = match r.target() {
                    RelocationTarget::Symbol(i) => {
                        let sym = file.symbol_by_index(i).map_err(|e| LinkError(e.to_string()))?;
                        if sym.kind() == SymbolKind::Section {
                            let sec = sym.section_index().ok_or_else(|| LinkError("a section symbol without a section".into()))?;
                            Target::Piece(ids.get(&sec.0).ok_or_else(|| LinkError(format!("a relocation against a dropped section of {name}")))?.1)
                        } else {
                            Target::Name(sym.name().map_err(|e| LinkError(e.to_string()))?.to_string())
                        }
                    }
                    other => return fail(format!("relocation target {other:?} in {name}")),
                };
                relocs.push(InputReloc { offset, r_type: r_type.0, target });
            }
            self.pieces.push(Piece { input, part: Part::Runtime, id, bytes: data, size: section.size(), align: section.align().max(1), relocs, at: 0 });
        }
        // Several input sections of one kind (.text.foo, .rodata.str1.1, ...) become one piece
        // each; a symbol names its own piece by section index, resolved below.
        for sym in file.symbols() {
            let Some(index) = sym.section_index() else { continue };
            let Some(&(section, piece)) = ids.get(&index.0) else { continue };
            if sym.kind() == SymbolKind::Section || sym.kind() == SymbolKind::File {
                continue;
            }
            let name = sym.name().map_err(|e| LinkError(e.to_string()))?.to_string();
            let in_section = file.section_by_index(index).map_err(|e| LinkError(e.to_string()))?.address();
            self.symbols.push(InputSymbol {
                name,
                input,
                piece,
                section,
                offset: sym.address() - in_section,
                global: sym.is_global(),
                function: sym.kind() == SymbolKind::Text,
                size: sym.size(),
            });
        }
        self.place_program_dependent_pieces(input)
    }

    /// Moves the runtime's text pieces that refer to the program (to a symbol the runtime
    /// does not define) to the program's part, so the rest of the runtime does not depend
    /// on the program; anything else of the runtime that refers to the program, or to a
    /// moved piece, is an error.
    fn place_program_dependent_pieces(&mut self, input: usize) -> Result<(), LinkError> {
        let defined = |name: &str| self.symbols.iter().any(|s| s.input == input && s.name == name);
        let refers_to_program: Vec<usize> = (0..self.pieces.len())
            .filter(|&i| {
                let piece = &self.pieces[i];
                piece.input == input && piece.relocs.iter().any(|r| matches!(&r.target, Target::Name(n) if !defined(n)))
            })
            .collect();
        for &i in &refers_to_program {
            if self.pieces[i].id != SectionId::Text {
                return fail(format!("the runtime's {} refers to the program", self.pieces[i].id.name()));
            }
            self.pieces[i].part = Part::Program;
        }
        let part_of_name = |name: &str| {
            let mut defining = self.symbols.iter().filter(|s| s.input == input && s.name == name);
            defining.next().map(|s| self.pieces[s.piece].part)
        };
        for piece in self.pieces.iter().filter(|p| p.input == input && p.part == Part::Runtime) {
            for r in &piece.relocs {
                let target_part = match &r.target {
                    Target::Piece(i) => Some(self.pieces[*i].part),
                    Target::Name(name) => part_of_name(name),
                };
                if target_part == Some(Part::Program) {
                    return fail(format!(
                        "the runtime's {} at fixed addresses refers to its code placed with the program",
                        piece.id.name()
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Where the output sections and segments are.
struct Layout {
    addr: BTreeMap<OutputSection, u64>,
    size: BTreeMap<OutputSection, u64>,
    /// Per segment of [`SEGMENTS`]: file offset, address, bytes in the file, bytes in memory.
    segments: Vec<Segment>,
}

#[derive(Clone, Copy, Debug)]
struct Segment {
    offset: u64,
    vaddr: u64,
    filesz: u64,
    memsz: u64,
}

impl Layout {
    /// Places the pieces: each segment on fresh pages (in memory and in the file), its
    /// sections in order, each piece at its alignment. The headers take the file's first
    /// page, which is not loaded.
    fn of(pieces: &mut [Piece]) -> Layout {
        let mut layout = Layout { addr: BTreeMap::new(), size: BTreeMap::new(), segments: Vec::new() };
        let (mut vaddr, mut offset) = (BASE, PAGE);
        for (part, ids, _) in SEGMENTS {
            let start = vaddr;
            let mut cursor = start;
            let mut file_end = start;
            for id in ids {
                let mut size = 0u64;
                let mut align = 16u64;
                for piece in pieces.iter_mut().filter(|p| p.part == part && p.id == id) {
                    size = size.next_multiple_of(piece.align);
                    piece.at = size;
                    size += piece.size;
                    align = align.max(piece.align);
                }
                cursor = cursor.next_multiple_of(align);
                layout.addr.insert((part, id), cursor);
                layout.size.insert((part, id), size);
                cursor += size;
                if id != SectionId::Bss {
                    file_end = cursor;
                }
            }
            let segment = Segment { offset, vaddr: start, filesz: file_end - start, memsz: cursor - start };
            layout.segments.push(segment);
            vaddr = cursor.next_multiple_of(PAGE).max(start + PAGE);
            offset = (offset + segment.filesz).next_multiple_of(PAGE);
        }
        layout
    }

    /// The file offset of an output section's first byte.
    fn file_offset(&self, section: OutputSection) -> u64 {
        let index = SEGMENTS.iter().position(|(part, ids, _)| *part == section.0 && ids.contains(&section.1)).unwrap_or(0);
        let segment = self.segments[index];
        segment.offset + (self.addr[&section] - segment.vaddr)
    }
}

fn put32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn get32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default())
}

fn sign_extend(v: u32, bits: u32) -> i64 {
    let shift = 32 - bits;
    i64::from(((v << shift) as i32) >> shift)
}

/// Patches the word at `at` (address `place`) for relocation `r_type` against `value` (S).
fn relocate(bytes: &mut [u8], at: usize, place: u64, r_type: u32, value: u64) -> Result<(), LinkError> {
    if at + 4 > bytes.len() {
        return fail("a relocation beyond its section");
    }
    let word = get32(bytes, at);
    let s = value as i64;
    let p = place as i64;
    let patched = match r_type {
        0 | 40 => return Ok(()), // R_ARM_NONE, R_ARM_V4BX
        2 => (s + i64::from(word as i32)) as u32,
        3 => (s + i64::from(word as i32) - p) as u32,
        28 | 29 => {
            let addend = sign_extend(word & 0x00ff_ffff, 24) << 2;
            let offset = s + addend - p;
            if offset % 4 != 0 || !(-(1 << 25)..(1 << 25)).contains(&offset) {
                return fail(format!("branch at {place:#x} out of range"));
            }
            (word & 0xff00_0000) | ((offset >> 2) as u32 & 0x00ff_ffff)
        }
        43 | 44 => {
            let addend = sign_extend(((word >> 4) & 0xf000) | (word & 0xfff), 16);
            let total = (s + addend) as u32;
            let half = if r_type == 43 { total & 0xffff } else { total >> 16 };
            (word & 0xfff0_f000) | ((half >> 12) << 16) | (half & 0xfff)
        }
        other => return fail(format!("unsupported relocation type {other} at {place:#x}")),
    };
    put32(bytes, at, patched);
    Ok(())
}

/// Links the program `object` with the runtime object (ELF bytes) into an executable.
pub fn link(program: &Object, runtime: &[u8]) -> Result<Vec<u8>, LinkError> {
    let mut inputs = Inputs::default();
    inputs.add_program(program);
    inputs.add_elf(1, runtime)?;
    let layout = Layout::of(&mut inputs.pieces);

    // Symbols: globals in one namespace, locals per input.
    let address = |s: &InputSymbol, pieces: &[Piece]| -> u64 { layout.addr[&(pieces[s.piece].part, s.section)] + pieces[s.piece].at + s.offset };
    let mut globals: BTreeMap<&str, u64> = BTreeMap::new();
    for s in inputs.symbols.iter().filter(|s| s.global) {
        if globals.insert(&s.name, address(s, &inputs.pieces)).is_some() {
            return fail(format!("`{}` is defined twice", s.name));
        }
    }
    let lookup = |input: usize, target: &Target| -> Result<u64, LinkError> {
        match target {
            Target::Piece(i) => {
                let piece = &inputs.pieces[*i];
                Ok(layout.addr[&(piece.part, piece.id)] + piece.at)
            }
            Target::Name(name) => {
                if let Some(local) = inputs.symbols.iter().find(|s| s.input == input && !s.global && s.name == *name) {
                    return Ok(address(local, &inputs.pieces));
                }
                globals.get(name.as_str()).copied().ok_or_else(|| LinkError(format!("undefined symbol `{name}`")))
            }
        }
    };
    let entry = *globals.get("_start").ok_or_else(|| LinkError("the runtime defines no `_start`".into()))?;

    // Section contents with relocations applied.
    let mut contents: BTreeMap<OutputSection, Vec<u8>> = BTreeMap::new();
    for section in output_sections().filter(|(_, id)| *id != SectionId::Bss) {
        let mut bytes = vec![0u8; layout.size[&section] as usize];
        for piece in inputs.pieces.iter().filter(|p| (p.part, p.id) == section) {
            let at = piece.at as usize;
            bytes[at..at + piece.bytes.len()].copy_from_slice(&piece.bytes);
            for r in &piece.relocs {
                let value = lookup(piece.input, &r.target)?;
                let place = layout.addr[&section] + piece.at + r.offset;
                relocate(&mut bytes, at + r.offset as usize, place, r.r_type, value)?;
            }
        }
        contents.insert(section, bytes);
    }
    if inputs.pieces.iter().any(|p| p.id == SectionId::Bss && !p.relocs.is_empty()) {
        return fail("relocations in .bss");
    }

    // The symbol table: every named symbol of both inputs, plus a mapping symbol at the start
    // of each part's text (its code is ARM unless its own mapping symbols say otherwise).
    let shndx = |section: OutputSection| -> u16 { 1 + output_sections().position(|s| s == section).unwrap_or(0) as u16 };
    let mut symtab: Vec<(String, u64, u64, u8, u16)> = Vec::new();
    for part in [Part::Runtime, Part::Program] {
        symtab.push(("$a".into(), layout.addr[&(part, SectionId::Text)], 0, 0, shndx((part, SectionId::Text))));
    }
    for s in &inputs.symbols {
        let kind = if s.name.starts_with('$') { 0 } else if s.function { 2 } else if s.section == SectionId::Text { 0 } else { 1 };
        let bind = if s.global { 1 } else { 0 };
        let section = (inputs.pieces[s.piece].part, s.section);
        symtab.push((s.name.clone(), address(s, &inputs.pieces), s.size, (bind << 4) | kind, shndx(section)));
    }
    symtab.sort_by_key(|s| (s.3 >> 4, s.1));

    Ok(write_elf(&layout, &contents, entry, &symtab))
}

/// The section header names of the output sections, in [`output_sections`] order.
const SECTION_NAMES: [&str; 8] =
    [".text.sysy_rt", ".rodata.sysy_rt", ".data.sysy_rt", ".bss.sysy_rt", ".text", ".rodata", ".data", ".bss"];

/// Writes the executable: headers, segments, and section headers for tools.
fn write_elf(layout: &Layout, contents: &BTreeMap<OutputSection, Vec<u8>>, entry: u64, symtab: &[(String, u64, u64, u8, u16)]) -> Vec<u8> {
    let image_end = layout.segments.iter().map(|s| s.offset + s.filesz).max().unwrap_or(PAGE);
    let mut out = vec![0u8; image_end as usize];
    for (section, bytes) in contents {
        let at = layout.file_offset(*section) as usize;
        out[at..at + bytes.len()].copy_from_slice(bytes);
    }
    // String tables and the symbol table.
    let mut strtab = vec![0u8];
    let mut syms = vec![0u8; 16];
    for (name, value, size, info, section) in symtab {
        let name_at = strtab.len() as u32;
        strtab.extend(name.as_bytes());
        strtab.push(0);
        let mut entry = [0u8; 16];
        entry[0..4].copy_from_slice(&name_at.to_le_bytes());
        entry[4..8].copy_from_slice(&(*value as u32).to_le_bytes());
        entry[8..12].copy_from_slice(&(*size as u32).to_le_bytes());
        entry[12] = *info;
        entry[14..16].copy_from_slice(&section.to_le_bytes());
        syms.extend(entry);
    }
    let first_global = 1 + symtab.iter().take_while(|s| s.3 >> 4 == 0).count() as u32;
    let mut shstrtab = vec![0u8];
    let mut name_at = Vec::new();
    for n in SECTION_NAMES.iter().chain(&[".symtab", ".strtab", ".shstrtab"]) {
        name_at.push(shstrtab.len() as u32);
        shstrtab.extend(n.as_bytes());
        shstrtab.push(0);
    }
    let symtab_at = out.len().next_multiple_of(4);
    out.resize(symtab_at, 0);
    out.extend(&syms);
    let strtab_at = out.len();
    out.extend(&strtab);
    let shstrtab_at = out.len();
    out.extend(&shstrtab);
    let shoff = out.len().next_multiple_of(4);
    out.resize(shoff, 0);
    // Section headers: null, the output sections, .symtab, .strtab, .shstrtab.
    let mut sh = |name: u32, kind: u32, flags: u32, addr: u64, offset: u64, size: u64, link: u32, info: u32, align: u32, entsize: u32| {
        for v in [name, kind, flags, addr as u32, offset as u32, size as u32, link, info, align, entsize] {
            out.extend(v.to_le_bytes());
        }
    };
    sh(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    for (i, section) in output_sections().enumerate() {
        let (kind, flags, align) = match section.1 {
            SectionId::Text => (1, 0x6, 4),
            SectionId::Rodata => (1, 0x2, 4),
            SectionId::Data => (1, 0x3, 4),
            SectionId::Bss => (8, 0x3, 8),
        };
        sh(name_at[i], kind, flags, layout.addr[&section], layout.file_offset(section), layout.size[&section], 0, 0, align, 0);
    }
    let sections = SECTION_NAMES.len() as u32;
    sh(name_at[sections as usize], 2, 0, 0, symtab_at as u64, syms.len() as u64, sections + 2, first_global, 4, 16);
    sh(name_at[sections as usize + 1], 3, 0, 0, strtab_at as u64, strtab.len() as u64, 0, 0, 1, 0);
    sh(name_at[sections as usize + 2], 3, 0, 0, shstrtab_at as u64, shstrtab.len() as u64, 0, 0, 1, 0);

    // ELF header.
    let mut h = Vec::with_capacity(EHDR as usize);
    h.extend([0x7f, b'E', b'L', b'F', 1, 1, 1, 0]);
    h.extend([0u8; 8]);
    h.extend(2u16.to_le_bytes()); // ET_EXEC
    h.extend(40u16.to_le_bytes()); // EM_ARM
    h.extend(1u32.to_le_bytes());
    h.extend((entry as u32).to_le_bytes());
    h.extend((EHDR as u32).to_le_bytes());
    h.extend((shoff as u32).to_le_bytes());
    h.extend(0x0500_0400u32.to_le_bytes()); // EABI version 5, hard-float
    h.extend((EHDR as u16).to_le_bytes());
    h.extend((PHDR as u16).to_le_bytes());
    h.extend((PHNUM as u16).to_le_bytes());
    h.extend(40u16.to_le_bytes());
    h.extend((sections as u16 + 4).to_le_bytes());
    h.extend((sections as u16 + 3).to_le_bytes());
    out[..EHDR as usize].copy_from_slice(&h);
    // Program headers: the four loadable segments and a non-executable stack.
    let mut ph = Vec::new();
    let mut push = |kind: u32, offset: u64, vaddr: u64, filesz: u64, memsz: u64, flags: u32, align: u64| {
        for v in [kind, offset as u32, vaddr as u32, vaddr as u32, filesz as u32, memsz as u32, flags, align as u32] {
            ph.extend(v.to_le_bytes());
        }
    };
    for (segment, (_, _, flags)) in layout.segments.iter().zip(SEGMENTS) {
        push(1, segment.offset, segment.vaddr, segment.filesz, segment.memsz, flags, PAGE);
    }
    push(0x6474_e551, 0, 0, 0, 0, 0x6, 16); // PT_GNU_STACK
    out[EHDR as usize..(EHDR + PHNUM * PHDR) as usize].copy_from_slice(&ph);
    out
}
