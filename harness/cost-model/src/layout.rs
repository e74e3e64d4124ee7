//! The counter file written by the QEMU plugin: byte layout, shared by the
//! writer (the plugin) and the reader ([`crate::counts`]).
//!
//! # Why this shape
//!
//! Counts must survive the guest being killed (a timeout sends SIGKILL and
//! QEMU's atexit callback never runs), so the plugin keeps every counter in a
//! `MAP_SHARED` mapping of this file: whatever the process stored is in the
//! page cache when it dies. The plugin counts *block executions* with one
//! inline 64-bit add per translation block, and records each block's class
//! mix at translation time; instruction counts are `Σ executions × mix`,
//! computed by the reader. Every translation gets fresh records, so
//! retranslated blocks never share or lose a counter.
//!
//! # Layout (all integers little-endian)
//!
//! ```text
//! offset 0      header, HEADER_SIZE (4096) bytes:
//!   0   magic            8 bytes  "SYSYCOST"
//!   8   layout version   u32      LAYOUT_VERSION
//!   12  class count      u32      NUM_CLASSES (the class order of InsnClass::ALL)
//!   16  record size      u32      RECORD_SIZE
//!   20  header size      u32      HEADER_SIZE
//!   24  complete         u64      1 once QEMU's atexit ran, else 0
//!   32  record count     u64      records committed (valid records follow)
//!   40  translations     u64      translation blocks seen
//!   48  mode from symbols    u64  blocks whose mode came from ELF mapping symbols
//!   56  mode from heuristic  u64  blocks whose mode the heuristic decided
//!   64  heuristic disagreements u64  blocks with symbols where the heuristic
//!                                    would have picked the other mode
//!   72  mode map status  u64      0 not requested, 1 loaded, 2 unavailable
//!   80  failed           u64      1 if the plugin stopped counting (it could
//!                                 not grow this file): counts are unusable
//!   (rest zero)
//! offset HEADER_SIZE + i * RECORD_SIZE: record i, RECORD_SIZE (64) bytes:
//!   0   executions       u64      incremented by QEMU each time the block runs
//!   8   vaddr            u64      address of the record's first instruction
//!   16  instructions     u16      instructions the record covers
//!   18  origin           u8       0 runtime/libc, 1 program
//!   19  mode             u8       0 ARM, 1 Thumb
//!   20  mode source      u8       0 mapping symbols, 1 heuristic
//!   21  (3 bytes zero)
//!   24  class counts     CLASS_SLOTS × u16, instructions of each class
//!                                 (slots past NUM_CLASSES are zero)
//! ```
//!
//! A translation block gives one record per origin it contains (almost always
//! one). The file grows in chunks of [`RECORDS_PER_CHUNK`] records; records
//! past the committed count are zero and ignored. A record is fully written
//! before the count covering it is published.

use crate::class::{InsnClass, NUM_CLASSES};
use crate::decode::Mode;

pub const MAGIC: [u8; 8] = *b"SYSYCOST";
pub const LAYOUT_VERSION: u32 = 1;
pub const HEADER_SIZE: u64 = 4096;
pub const RECORD_SIZE: u64 = 64;
/// Class-count slots per record: room for growth without a layout change.
pub const CLASS_SLOTS: usize = 20;
/// Records added each time the file grows (256 KiB).
pub const RECORDS_PER_CHUNK: u64 = 4096;
pub const CHUNK_SIZE: u64 = RECORD_SIZE * RECORDS_PER_CHUNK;

/// Byte offset of the `complete` flag in the header.
pub const COMPLETE_OFFSET: usize = 24;
/// Byte offset of the committed-record count in the header.
pub const RECORD_COUNT_OFFSET: usize = 32;
/// Byte offset of the execution counter inside a record.
pub const EXECUTIONS_OFFSET: usize = 0;
const CLASS_COUNTS_OFFSET: usize = 24;

const _: () = assert!(NUM_CLASSES <= CLASS_SLOTS);
const _: () = assert!(CLASS_COUNTS_OFFSET + 2 * CLASS_SLOTS == RECORD_SIZE as usize);

/// Whether the plugin found the ELF mapping symbols it uses to tell ARM code
/// from Thumb code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeMapStatus {
    NotRequested = 0,
    Loaded = 1,
    Unavailable = 2,
}

/// The header fields (everything but the magic and the layout constants).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub complete: bool,
    pub records: u64,
    pub translations: u64,
    pub mode_from_symbols: u64,
    pub mode_from_heuristic: u64,
    pub heuristic_disagreements: u64,
    pub mode_map: ModeMapStatus,
    pub failed: bool,
}

impl Header {
    /// A header for an empty, incomplete file.
    pub const fn empty() -> Header {
        Header {
            complete: false,
            records: 0,
            translations: 0,
            mode_from_symbols: 0,
            mode_from_heuristic: 0,
            heuristic_disagreements: 0,
            mode_map: ModeMapStatus::NotRequested,
            failed: false,
        }
    }

    /// Writes every header field into `out` (the fields are contiguous and
    /// end at byte 88; the rest of the header stays as it is, zero in a
    /// fresh file).
    ///
    /// # Panics
    /// If `out` is shorter than [`HEADER_SIZE`] (a writer bug, not input).
    pub fn encode_into(&self, out: &mut [u8]) {
        let out = &mut out[..HEADER_SIZE as usize];
        out[0..8].copy_from_slice(&MAGIC);
        put_u32(out, 8, LAYOUT_VERSION);
        put_u32(out, 12, NUM_CLASSES as u32);
        put_u32(out, 16, RECORD_SIZE as u32);
        put_u32(out, 20, HEADER_SIZE as u32);
        put_u64(out, COMPLETE_OFFSET, u64::from(self.complete));
        put_u64(out, RECORD_COUNT_OFFSET, self.records);
        put_u64(out, 40, self.translations);
        put_u64(out, 48, self.mode_from_symbols);
        put_u64(out, 56, self.mode_from_heuristic);
        put_u64(out, 64, self.heuristic_disagreements);
        put_u64(out, 72, self.mode_map as u64);
        put_u64(out, 80, u64::from(self.failed));
    }

    /// Parses and validates a header.
    pub fn decode(bytes: &[u8]) -> Result<Header, LayoutError> {
        if bytes.len() < HEADER_SIZE as usize {
            return Err(LayoutError::TooShort {
                len: bytes.len() as u64,
            });
        }
        if bytes[0..8] != MAGIC {
            return Err(LayoutError::BadMagic);
        }
        let checks = [
            ("layout version", get_u32(bytes, 8), LAYOUT_VERSION),
            ("class count", get_u32(bytes, 12), NUM_CLASSES as u32),
            ("record size", get_u32(bytes, 16), RECORD_SIZE as u32),
            ("header size", get_u32(bytes, 20), HEADER_SIZE as u32),
        ];
        for (field, found, expected) in checks {
            if found != expected {
                return Err(LayoutError::Mismatch {
                    field,
                    found,
                    expected,
                });
            }
        }
        let complete = match get_u64(bytes, COMPLETE_OFFSET) {
            0 => false,
            1 => true,
            other => {
                return Err(LayoutError::BadField {
                    field: "complete",
                    value: other,
                });
            }
        };
        let mode_map = match get_u64(bytes, 72) {
            0 => ModeMapStatus::NotRequested,
            1 => ModeMapStatus::Loaded,
            2 => ModeMapStatus::Unavailable,
            other => {
                return Err(LayoutError::BadField {
                    field: "mode map status",
                    value: other,
                });
            }
        };
        let failed = match get_u64(bytes, 80) {
            0 => false,
            1 => true,
            other => {
                return Err(LayoutError::BadField {
                    field: "failed",
                    value: other,
                });
            }
        };
        Ok(Header {
            failed,
            complete,
            records: get_u64(bytes, RECORD_COUNT_OFFSET),
            translations: get_u64(bytes, 40),
            mode_from_symbols: get_u64(bytes, 48),
            mode_from_heuristic: get_u64(bytes, 56),
            heuristic_disagreements: get_u64(bytes, 64),
            mode_map,
        })
    }
}

/// Which code an instruction belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Runtime library, libc, startup code: everything outside the program ranges.
    Runtime = 0,
    /// The compiled program's own code.
    Program = 1,
}

/// How a block's instruction set was decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeSource {
    Symbols = 0,
    Heuristic = 1,
}

/// One record: the instructions of one origin in one translation block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub executions: u64,
    pub vaddr: u64,
    pub origin: Origin,
    pub mode: Mode,
    pub mode_source: ModeSource,
    /// Instructions of each class, indexed by [`InsnClass::index`].
    pub class_counts: [u16; NUM_CLASSES],
}

impl Record {
    /// A record with no executions and no instructions yet.
    pub fn new(vaddr: u64, origin: Origin, mode: Mode, mode_source: ModeSource) -> Record {
        Record {
            executions: 0,
            vaddr,
            origin,
            mode,
            mode_source,
            class_counts: [0; NUM_CLASSES],
        }
    }

    /// Counts one more instruction of `class`.
    pub fn add(&mut self, class: InsnClass) {
        let slot = &mut self.class_counts[class.index()];
        *slot = slot.saturating_add(1);
    }

    /// Instructions covered.
    pub fn instructions(&self) -> u16 {
        self.class_counts
            .iter()
            .fold(0u16, |sum, &n| sum.saturating_add(n))
    }

    /// Writes the record into `out[..RECORD_SIZE]`.
    ///
    /// # Panics
    /// If `out` is shorter than [`RECORD_SIZE`] (a writer bug, not input).
    pub fn encode_into(&self, out: &mut [u8]) {
        let out = &mut out[..RECORD_SIZE as usize];
        out.fill(0);
        put_u64(out, EXECUTIONS_OFFSET, self.executions);
        put_u64(out, 8, self.vaddr);
        out[16..18].copy_from_slice(&self.instructions().to_le_bytes());
        out[18] = self.origin as u8;
        out[19] = match self.mode {
            Mode::Arm => 0,
            Mode::Thumb => 1,
        };
        out[20] = self.mode_source as u8;
        for (i, &n) in self.class_counts.iter().enumerate() {
            let at = CLASS_COUNTS_OFFSET + 2 * i;
            out[at..at + 2].copy_from_slice(&n.to_le_bytes());
        }
    }

    /// Parses and validates one record.
    pub fn decode(bytes: &[u8]) -> Result<Record, LayoutError> {
        if bytes.len() < RECORD_SIZE as usize {
            return Err(LayoutError::TooShort {
                len: bytes.len() as u64,
            });
        }
        let origin = match bytes[18] {
            0 => Origin::Runtime,
            1 => Origin::Program,
            other => {
                return Err(LayoutError::BadField {
                    field: "origin",
                    value: other.into(),
                });
            }
        };
        let mode = match bytes[19] {
            0 => Mode::Arm,
            1 => Mode::Thumb,
            other => {
                return Err(LayoutError::BadField {
                    field: "mode",
                    value: other.into(),
                });
            }
        };
        let mode_source = match bytes[20] {
            0 => ModeSource::Symbols,
            1 => ModeSource::Heuristic,
            other => {
                return Err(LayoutError::BadField {
                    field: "mode source",
                    value: other.into(),
                });
            }
        };
        let slot = |i: usize| {
            let at = CLASS_COUNTS_OFFSET + 2 * i;
            u16::from_le_bytes([bytes[at], bytes[at + 1]])
        };
        let mut class_counts = [0u16; NUM_CLASSES];
        for (i, count) in class_counts.iter_mut().enumerate() {
            *count = slot(i);
        }
        if let Some(unused) = (NUM_CLASSES..CLASS_SLOTS).find(|&i| slot(i) != 0) {
            return Err(LayoutError::BadField {
                field: "unused class slot",
                value: unused as u64,
            });
        }
        let record = Record {
            executions: get_u64(bytes, EXECUTIONS_OFFSET),
            vaddr: get_u64(bytes, 8),
            origin,
            mode,
            mode_source,
            class_counts,
        };
        let stated = u16::from_le_bytes([bytes[16], bytes[17]]);
        let summed: u32 = class_counts.iter().map(|&n| u32::from(n)).sum();
        if u32::from(stated) != summed {
            return Err(LayoutError::BadField {
                field: "instruction count",
                value: stated.into(),
            });
        }
        Ok(record)
    }
}

/// A counter file that does not match this layout.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LayoutError {
    #[error("counter file too short ({len} bytes)")]
    TooShort { len: u64 },
    #[error("not a counter file (bad magic)")]
    BadMagic,
    #[error("counter file {field} is {found}, this reader expects {expected}")]
    Mismatch {
        field: &'static str,
        found: u32,
        expected: u32,
    },
    #[error("counter file has an invalid {field} ({value})")]
    BadField { field: &'static str, value: u64 },
}

fn put_u32(out: &mut [u8], at: usize, value: u32) {
    out[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

fn put_u64(out: &mut [u8], at: usize, value: u64) {
    out[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

fn get_u32(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(b)
}

fn get_u64(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let header = Header {
            complete: true,
            records: 7,
            translations: 6,
            mode_from_symbols: 5,
            mode_from_heuristic: 1,
            heuristic_disagreements: 0,
            mode_map: ModeMapStatus::Loaded,
            failed: false,
        };
        let mut buf = vec![0; HEADER_SIZE as usize];
        header.encode_into(&mut buf);
        assert_eq!(Header::decode(&buf), Ok(header));
        buf[8] = 9;
        assert_eq!(
            Header::decode(&buf),
            Err(LayoutError::Mismatch {
                field: "layout version",
                found: 9,
                expected: LAYOUT_VERSION
            })
        );
    }

    #[test]
    fn record_round_trip_and_validation() {
        let mut record = Record::new(
            0x1_0000,
            Origin::Program,
            Mode::Thumb,
            ModeSource::Heuristic,
        );
        record.add(InsnClass::Load);
        record.add(InsnClass::Load);
        record.add(InsnClass::CondBranch);
        record.executions = 42;
        let mut buf = [0u8; RECORD_SIZE as usize];
        record.encode_into(&mut buf);
        assert_eq!(Record::decode(&buf), Ok(record));
        assert_eq!(record.instructions(), 3);
        // A stated instruction count that disagrees with the mix is rejected.
        buf[16] = 4;
        assert!(matches!(
            Record::decode(&buf),
            Err(LayoutError::BadField {
                field: "instruction count",
                ..
            })
        ));
        buf[16] = 3;
        buf[18] = 7;
        assert_eq!(
            Record::decode(&buf),
            Err(LayoutError::BadField {
                field: "origin",
                value: 7
            })
        );
    }
}
