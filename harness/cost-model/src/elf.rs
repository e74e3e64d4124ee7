//! What the cost model needs from the guest's ELF files: the address ranges
//! of the compiled program's own code, and the ARM/Thumb mapping symbols.
//!
//! # Program ranges: the convention
//!
//! Counts are split into the program's code and everything else (runtime
//! library, libc, startup) by address. The ranges come from the executable's
//! symbol table (static, unstripped executables are assumed):
//!
//! * **sysyc output** brackets all of its code with two symbols,
//!   [`PROG_BEGIN_SYMBOL`] at the start of its `.text` and [`PROG_END_SYMBOL`]
//!   just past its last instruction, in the same section of the same assembly
//!   file, so the linker keeps everything between them contiguous. Read them
//!   with [`ProgramRanges::from_markers`].
//! * **gcc-built reference programs** have no markers (and `gcc -O2` scatters
//!   functions over `.text`, `.text.startup`, `.text.unlikely`, which the
//!   linker places apart). Their ranges are the `FUNC` symbols of the program:
//!   either every function defined in the program's own object file
//!   ([`ProgramRanges::from_object`], which also catches gcc's clones such as
//!   `f.constprop.0`), or an explicit list of function names
//!   ([`ProgramRanges::from_functions`]).
//!
//! # Mapping symbols
//!
//! The ARM ELF ABI marks where ARM code (`$a`), Thumb code (`$t`) and literal
//! data (`$d`) begin inside a section (names may carry a `.suffix`). The state
//! at an address is that of the closest mapping symbol at or below it in the
//! same section. [`ModeMap`] answers that question for the plugin.

use std::path::{Path, PathBuf};

use object::{
    Object, ObjectSection, ObjectSymbol, SectionIndex, SectionKind, SymbolKind, SymbolSection,
};

use crate::decode::Mode;

/// Symbol the compiler puts at the first instruction of its code.
pub const PROG_BEGIN_SYMBOL: &str = "__sysy_prog_begin";
/// Symbol the compiler puts just past the last instruction of its code.
pub const PROG_END_SYMBOL: &str = "__sysy_prog_end";

/// Sorted, disjoint, non-empty half-open address ranges `[lo, hi)`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgramRanges {
    ranges: Vec<(u64, u64)>,
}

impl ProgramRanges {
    /// Normalises arbitrary ranges: drops empty ones, sorts, and merges
    /// overlapping or touching ones.
    pub fn new(ranges: impl IntoIterator<Item = (u64, u64)>) -> ProgramRanges {
        let mut sorted: Vec<(u64, u64)> = ranges.into_iter().filter(|(lo, hi)| lo < hi).collect();
        sorted.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(sorted.len());
        for (lo, hi) in sorted {
            match merged.last_mut() {
                Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        ProgramRanges { ranges: merged }
    }

    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Whether `addr` lies in one of the ranges.
    pub fn contains(&self, addr: u64) -> bool {
        let after = self.ranges.partition_point(|&(lo, _)| lo <= addr);
        after > 0 && addr < self.ranges[after - 1].1
    }

    /// The range between [`PROG_BEGIN_SYMBOL`] and [`PROG_END_SYMBOL`] of the
    /// executable at `exe`.
    pub fn from_markers(exe: &Path) -> Result<ProgramRanges, ElfError> {
        let symbols = SymbolTable::read(exe)?;
        let find = |name: &str| -> Result<u64, ElfError> {
            let mut hits = symbols
                .symbols
                .iter()
                .filter(|s| s.defined && s.name == name);
            let first = hits.next().ok_or_else(|| ElfError::MissingSymbol {
                path: exe.to_path_buf(),
                name: name.to_string(),
            })?;
            if hits.next().is_some() {
                return Err(ElfError::Ambiguous {
                    path: exe.to_path_buf(),
                    name: name.to_string(),
                });
            }
            Ok(first.code_address())
        };
        let (begin, end) = (find(PROG_BEGIN_SYMBOL)?, find(PROG_END_SYMBOL)?);
        if begin >= end {
            return Err(ElfError::EmptyMarkers {
                path: exe.to_path_buf(),
                begin,
                end,
            });
        }
        Ok(ProgramRanges::new([(begin, end)]))
    }

    /// The code of the named functions in the executable at `exe`. Each name
    /// must be a unique global function, or failing that a unique local one.
    pub fn from_functions<S: AsRef<str>>(
        exe: &Path,
        names: &[S],
    ) -> Result<ProgramRanges, ElfError> {
        let symbols = SymbolTable::read(exe)?;
        let mut ranges = Vec::with_capacity(names.len());
        for name in names {
            let wanted = FunctionRef {
                name: name.as_ref(),
                local: false,
                file: None,
            };
            ranges.push(symbols.function_range(exe, &wanted)?);
        }
        Ok(ProgramRanges::new(ranges))
    }

    /// The code, in the executable at `exe`, of every function defined in the
    /// relocatable object `object` (the program's own compiled code). Local
    /// functions that share a name with others are told apart by the source
    /// file symbol that precedes them.
    pub fn from_object(exe: &Path, object: &Path) -> Result<ProgramRanges, ElfError> {
        let object_symbols = SymbolTable::read(object)?;
        let wanted: Vec<FunctionRef<'_>> = object_symbols
            .symbols
            .iter()
            .filter(|s| s.defined && s.kind == SymbolKind::Text)
            .map(|s| FunctionRef {
                name: &s.name,
                local: s.local,
                file: s.file.as_deref(),
            })
            .collect();
        if wanted.is_empty() {
            return Err(ElfError::NoFunctions {
                path: object.to_path_buf(),
            });
        }
        let exe_symbols = SymbolTable::read(exe)?;
        let ranges = wanted
            .iter()
            .map(|f| exe_symbols.function_range(exe, f))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ProgramRanges::new(ranges))
    }
}

/// ARM/Thumb state by address, from an executable's mapping symbols.
#[derive(Clone, Debug, Default)]
pub struct ModeMap {
    /// Sorted by address; `None` marks data (`$d`).
    entries: Vec<MapEntry>,
}

#[derive(Clone, Copy, Debug)]
struct MapEntry {
    addr: u64,
    mode: Option<Mode>,
    /// End of the section holding the symbol: its state stops there.
    section_end: u64,
}

impl ModeMap {
    /// Reads the mapping symbols of the executable at `path`.
    pub fn from_elf(path: &Path) -> Result<ModeMap, ElfError> {
        let data = read(path)?;
        ModeMap::from_elf_bytes(&data, path)
    }

    /// Reads mapping symbols from ELF bytes; `path` only names errors.
    pub fn from_elf_bytes(data: &[u8], path: &Path) -> Result<ModeMap, ElfError> {
        let file = parse(data, path)?;
        let mut entries = Vec::new();
        for symbol in file.symbols() {
            let Ok(name) = symbol.name() else { continue };
            let mode = match name.split('.').next() {
                Some("$a") => Some(Mode::Arm),
                Some("$t") => Some(Mode::Thumb),
                Some("$d") => None,
                _ => continue,
            };
            let SymbolSection::Section(index) = symbol.section() else {
                continue;
            };
            let Some(section_end) = executable_section_end(&file, index) else {
                continue;
            };
            entries.push(MapEntry {
                addr: symbol.address(),
                mode,
                section_end,
            });
        }
        // At one address, code beats data: only executed addresses are looked up.
        entries.sort_by_key(|e| (e.addr, e.mode.is_some()));
        entries.dedup_by(|later, earlier| {
            if later.addr == earlier.addr {
                *earlier = *later;
                true
            } else {
                false
            }
        });
        Ok(ModeMap { entries })
    }

    /// Number of mapping symbols kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The instruction set at `addr`, if a code mapping symbol covers it.
    pub fn lookup(&self, addr: u64) -> Option<Mode> {
        let after = self.entries.partition_point(|e| e.addr <= addr);
        let entry = self.entries.get(after.checked_sub(1)?)?;
        if addr < entry.section_end {
            entry.mode
        } else {
            None
        }
    }
}

fn executable_section_end(file: &object::File<'_>, index: SectionIndex) -> Option<u64> {
    let section = file.section_by_index(index).ok()?;
    (section.kind() == SectionKind::Text).then(|| section.address() + section.size())
}

/// Why an ELF file could not provide what was asked.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a readable ELF file: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{path} is not a 32-bit ARM ELF file")]
    NotArm { path: PathBuf },
    #[error("{path} has no symbol `{name}` (stripped, or not built by the expected tool?)")]
    MissingSymbol { path: PathBuf, name: String },
    #[error("{path} defines `{name}` more than once; cannot tell which is meant")]
    Ambiguous { path: PathBuf, name: String },
    #[error("{path}: function `{name}` has no size")]
    NoSize { path: PathBuf, name: String },
    #[error("{path}: program markers enclose nothing ({begin:#x}..{end:#x})")]
    EmptyMarkers { path: PathBuf, begin: u64, end: u64 },
    #[error("{path} defines no functions")]
    NoFunctions { path: PathBuf },
}

/// The symbols of one ELF file, with the source file each local belongs to.
struct SymbolTable {
    symbols: Vec<Symbol>,
}

struct Symbol {
    name: String,
    /// Raw value; for Thumb functions bit 0 is set.
    value: u64,
    size: u64,
    kind: SymbolKind,
    local: bool,
    defined: bool,
    /// The `STT_FILE` symbol preceding this local symbol, if any.
    file: Option<String>,
}

impl Symbol {
    /// Address of the code the symbol names (Thumb bit cleared).
    fn code_address(&self) -> u64 {
        if self.kind == SymbolKind::Text {
            self.value & !1
        } else {
            self.value
        }
    }
}

/// A function to find in an executable.
struct FunctionRef<'a> {
    name: &'a str,
    local: bool,
    file: Option<&'a str>,
}

impl SymbolTable {
    fn read(path: &Path) -> Result<SymbolTable, ElfError> {
        let data = read(path)?;
        let file = parse(&data, path)?;
        let mut current_file: Option<String> = None;
        let mut symbols = Vec::new();
        for symbol in file.symbols() {
            let Ok(name) = symbol.name() else { continue };
            if symbol.kind() == SymbolKind::File {
                current_file = Some(name.to_string());
                continue;
            }
            symbols.push(Symbol {
                name: name.to_string(),
                value: symbol.address(),
                size: symbol.size(),
                kind: symbol.kind(),
                local: symbol.is_local(),
                defined: symbol.is_definition()
                    || matches!(symbol.section(), SymbolSection::Section(_)),
                file: if symbol.is_local() {
                    current_file.clone()
                } else {
                    None
                },
            });
        }
        Ok(SymbolTable { symbols })
    }

    /// `[start, end)` of the function `wanted` in this (executable's) table.
    fn function_range<'s>(
        &'s self,
        path: &Path,
        wanted: &FunctionRef<'_>,
    ) -> Result<(u64, u64), ElfError> {
        let candidates: Vec<&'s Symbol> = self
            .symbols
            .iter()
            .filter(|s| s.defined && s.kind == SymbolKind::Text && s.name == wanted.name)
            .collect();
        let missing = || ElfError::MissingSymbol {
            path: path.to_path_buf(),
            name: wanted.name.to_string(),
        };
        let ambiguous = || ElfError::Ambiguous {
            path: path.to_path_buf(),
            name: wanted.name.to_string(),
        };
        let pick = |list: Vec<&'s Symbol>| unique(list).map_err(|()| ambiguous());
        let (locals, globals): (Vec<&'s Symbol>, Vec<&'s Symbol>) =
            candidates.into_iter().partition(|s| s.local);
        let found = if !wanted.local {
            match pick(globals)? {
                Some(symbol) => symbol,
                None => pick(locals)?.ok_or_else(missing)?,
            }
        } else if locals.len() > 1 {
            let same_file: Vec<&'s Symbol> = locals
                .into_iter()
                .filter(|s| wanted.file.is_some() && s.file.as_deref() == wanted.file)
                .collect();
            pick(same_file)?.ok_or_else(ambiguous)?
        } else {
            pick(locals)?.ok_or_else(missing)?
        };
        if found.size == 0 {
            return Err(ElfError::NoSize {
                path: path.to_path_buf(),
                name: wanted.name.to_string(),
            });
        }
        let start = found.code_address();
        Ok((start, start + found.size))
    }
}

/// The only element of `list`, `None` if it is empty, `Err` if it has several.
fn unique<T>(mut list: Vec<T>) -> Result<Option<T>, ()> {
    if list.len() > 1 {
        Err(())
    } else {
        Ok(list.pop())
    }
}

fn read(path: &Path) -> Result<Vec<u8>, ElfError> {
    std::fs::read(path).map_err(|source| ElfError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn parse<'d>(data: &'d [u8], path: &Path) -> Result<object::File<'d>, ElfError> {
    let file = object::File::parse(data).map_err(|e| ElfError::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    if file.architecture() != object::Architecture::Arm || file.is_64() {
        return Err(ElfError::NotArm {
            path: path.to_path_buf(),
        });
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_normalise_and_contain() {
        let r = ProgramRanges::new([
            (0x30, 0x40),
            (0x10, 0x20),
            (0x18, 0x28),
            (0x50, 0x50),
            (0x28, 0x2c),
        ]);
        assert_eq!(r.ranges(), &[(0x10, 0x2c), (0x30, 0x40)]);
        assert!(r.contains(0x10));
        assert!(r.contains(0x2b));
        assert!(!r.contains(0x2c));
        assert!(!r.contains(0x0f));
        assert!(r.contains(0x3f));
        assert!(!r.contains(0x40));
        assert!(!ProgramRanges::default().contains(0));
    }

    #[test]
    fn non_elf_input_is_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("not-elf");
        std::fs::write(&path, b"hello").expect("write");
        assert!(matches!(
            ProgramRanges::from_markers(&path),
            Err(ElfError::Parse { .. })
        ));
        assert!(matches!(
            ModeMap::from_elf(&path),
            Err(ElfError::Parse { .. })
        ));
        assert!(matches!(
            ModeMap::from_elf(&dir.path().join("missing")),
            Err(ElfError::Io { .. })
        ));
    }
}
