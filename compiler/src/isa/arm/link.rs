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
//! 0x10000  ELF header, program headers      ┐ one read+execute segment
//!          .text (program first, then the runtime), .rodata
//! next page .data, .bss                      ─ one read+write segment
//! ```
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
const PHNUM: u64 = 3;

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
            self.pieces.push(Piece { input, id, bytes: section.bytes.clone(), size: section.size, align: section.align, relocs, at: 0 });
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
            self.pieces.push(Piece { input, id, bytes: data, size: section.size(), align: section.align().max(1), relocs, at: 0 });
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
        Ok(())
    }
}

/// The output sections' addresses and sizes.
struct Layout {
    addr: BTreeMap<SectionId, u64>,
    size: BTreeMap<SectionId, u64>,
    /// File offsets of the two segments' contents.
    text_offset: u64,
    data_offset: u64,
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

    // Lay the pieces out: text, rodata (read+execute segment), then data, bss.
    let mut layout = Layout { addr: BTreeMap::new(), size: BTreeMap::new(), text_offset: 0, data_offset: 0 };
    let headers = EHDR + PHNUM * PHDR;
    let mut cursor = headers.next_multiple_of(16);
    layout.text_offset = cursor;
    for id in SectionId::ALL {
        if id == SectionId::Data {
            cursor = cursor.next_multiple_of(PAGE);
            layout.data_offset = cursor;
        }
        let mut size = 0u64;
        let start = cursor;
        for piece in inputs.pieces.iter_mut().filter(|p| p.id == id) {
            size = size.next_multiple_of(piece.align);
            piece.at = size;
            size += piece.size;
        }
        layout.addr.insert(id, BASE + start);
        layout.size.insert(id, size);
        cursor = start + size;
        if id == SectionId::Text {
            cursor = cursor.next_multiple_of(16);
        }
    }

    // Symbols: globals in one namespace, locals per input.
    let address = |s: &InputSymbol, pieces: &[Piece]| -> u64 { layout.addr[&s.section] + pieces[s.piece].at + s.offset };
    let mut globals: BTreeMap<&str, u64> = BTreeMap::new();
    for s in inputs.symbols.iter().filter(|s| s.global) {
        if globals.insert(&s.name, address(s, &inputs.pieces)).is_some() {
            return fail(format!("`{}` is defined twice", s.name));
        }
    }
    let lookup = |input: usize, target: &Target| -> Result<u64, LinkError> {
        match target {
            Target::Piece(i) => Ok(layout.addr[&inputs.pieces[*i].id] + inputs.pieces[*i].at),
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
    let mut contents: BTreeMap<SectionId, Vec<u8>> = BTreeMap::new();
    for id in [SectionId::Text, SectionId::Rodata, SectionId::Data] {
        let mut bytes = vec![0u8; layout.size[&id] as usize];
        for piece in inputs.pieces.iter().filter(|p| p.id == id) {
            let at = piece.at as usize;
            bytes[at..at + piece.bytes.len()].copy_from_slice(&piece.bytes);
            for r in &piece.relocs {
                let value = lookup(piece.input, &r.target)?;
                let place = layout.addr[&id] + piece.at + r.offset;
                relocate(&mut bytes, at + r.offset as usize, place, r.r_type, value)?;
            }
        }
        contents.insert(id, bytes);
    }
    if inputs.pieces.iter().any(|p| p.id == SectionId::Bss && !p.relocs.is_empty()) {
        return fail("relocations in .bss");
    }

    // The symbol table: every named symbol of both inputs, plus the mapping symbols.
    let mut symtab: Vec<(String, u64, u64, u8, u16)> = Vec::new();
    let shndx = |id: SectionId| -> u16 {
        match id {
            SectionId::Text => 1,
            SectionId::Rodata => 2,
            SectionId::Data => 3,
            SectionId::Bss => 4,
        }
    };
    symtab.push(("$a".into(), layout.addr[&SectionId::Text], 0, 0, 1));
    for s in &inputs.symbols {
        let kind = if s.name.starts_with('$') { 0 } else if s.function { 2 } else if s.section == SectionId::Text { 0 } else { 1 };
        let bind = if s.global { 1 } else { 0 };
        symtab.push((s.name.clone(), address(s, &inputs.pieces), s.size, (bind << 4) | kind, shndx(s.section)));
    }
    symtab.sort_by_key(|s| (s.3 >> 4, s.1));

    Ok(write_elf(&layout, &contents, entry, &symtab))
}

/// Writes the executable: headers, segments, and section headers for tools.
fn write_elf(layout: &Layout, contents: &BTreeMap<SectionId, Vec<u8>>, entry: u64, symtab: &[(String, u64, u64, u8, u16)]) -> Vec<u8> {
    let text_end = layout.text_offset + (layout.addr[&SectionId::Rodata] - layout.addr[&SectionId::Text]) + layout.size[&SectionId::Rodata];
    let data_len = layout.size[&SectionId::Data];
    let bss_len = layout.addr[&SectionId::Bss] + layout.size[&SectionId::Bss] - layout.addr[&SectionId::Data] - data_len;
    let mut out = vec![0u8; (layout.data_offset + data_len) as usize];
    for id in [SectionId::Text, SectionId::Rodata, SectionId::Data] {
        let at = (layout.addr[&id] - BASE) as usize;
        out[at..at + contents[&id].len()].copy_from_slice(&contents[&id]);
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
    let names = [".text", ".rodata", ".data", ".bss", ".symtab", ".strtab", ".shstrtab"];
    let mut shstrtab = vec![0u8];
    let mut name_at = Vec::new();
    for n in names {
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
    // Section headers: null, .text, .rodata, .data, .bss, .symtab, .strtab, .shstrtab.
    let mut sh = |name: u32, kind: u32, flags: u32, addr: u64, offset: u64, size: u64, link: u32, info: u32, align: u32, entsize: u32| {
        for v in [name, kind, flags, addr as u32, offset as u32, size as u32, link, info, align, entsize] {
            out.extend(v.to_le_bytes());
        }
    };
    sh(0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    let file_offset = |id: SectionId| layout.addr[&id] - BASE;
    sh(name_at[0], 1, 0x6, layout.addr[&SectionId::Text], file_offset(SectionId::Text), layout.size[&SectionId::Text], 0, 0, 4, 0);
    sh(name_at[1], 1, 0x2, layout.addr[&SectionId::Rodata], file_offset(SectionId::Rodata), layout.size[&SectionId::Rodata], 0, 0, 4, 0);
    sh(name_at[2], 1, 0x3, layout.addr[&SectionId::Data], file_offset(SectionId::Data), data_len, 0, 0, 4, 0);
    sh(name_at[3], 8, 0x3, layout.addr[&SectionId::Bss], file_offset(SectionId::Bss), layout.size[&SectionId::Bss], 0, 0, 8, 0);
    sh(name_at[4], 2, 0, 0, symtab_at as u64, syms.len() as u64, 6, first_global, 4, 16);
    sh(name_at[5], 3, 0, 0, strtab_at as u64, strtab.len() as u64, 0, 0, 1, 0);
    sh(name_at[6], 3, 0, 0, shstrtab_at as u64, shstrtab.len() as u64, 0, 0, 1, 0);

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
    h.extend(8u16.to_le_bytes());
    h.extend(7u16.to_le_bytes());
    out[..EHDR as usize].copy_from_slice(&h);
    // Program headers: the read+execute segment (from the file start), the read+write one,
    // and a non-executable stack.
    let mut ph = Vec::new();
    let mut push = |kind: u32, offset: u64, vaddr: u64, filesz: u64, memsz: u64, flags: u32, align: u64| {
        for v in [kind, offset as u32, vaddr as u32, vaddr as u32, filesz as u32, memsz as u32, flags, align as u32] {
            ph.extend(v.to_le_bytes());
        }
    };
    push(1, 0, BASE, text_end, text_end, 0x5, PAGE);
    push(1, layout.data_offset, BASE + layout.data_offset, data_len, data_len + bss_len, 0x6, PAGE);
    push(0x6474_e551, 0, 0, 0, 0, 0x6, 16); // PT_GNU_STACK
    out[EHDR as usize..(EHDR + PHNUM * PHDR) as usize].copy_from_slice(&ph);
    out
}
