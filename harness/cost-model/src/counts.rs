//! Reading a counter file into instruction counts.
//!
//! The plugin stores block execution counts and per-block class mixes (see
//! [`crate::layout`]); this module multiplies them out. It accepts files of
//! runs that were killed (then `complete` is false and the counts are those of
//! the blocks entered so far), and rejects anything malformed with a
//! [`CountsError`] instead of guessing.

use std::path::{Path, PathBuf};

use crate::class::ClassCounts;
use crate::latency::LatencyTable;
use crate::layout::{HEADER_SIZE, Header, LayoutError, ModeMapStatus, Origin, RECORD_SIZE, Record};

/// Executed-instruction counts of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CostCounts {
    /// QEMU's atexit callback ran: the guest called `exit`. False when the
    /// process died by a signal — killed from outside (a timeout's SIGKILL or
    /// SIGTERM) or by the guest's own fault (`abort`, SIGSEGV; QEMU 7.2 skips
    /// atexit callbacks then). Either way the counts cover every block
    /// entered before the end.
    pub complete: bool,
    /// All executed instructions.
    pub total: u64,
    /// All executed instructions by class.
    pub per_class: ClassCounts,
    /// Instructions inside the program's address ranges, by class.
    pub program: ClassCounts,
    /// Instructions elsewhere (runtime library, libc, startup), by class.
    pub runtime: ClassCounts,
    /// How the plugin told ARM from Thumb code; diagnostics only.
    pub mode_stats: ModeStats,
}

/// Diagnostics about instruction-set detection (see [`crate::block`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModeStats {
    pub translations: u64,
    pub from_symbols: u64,
    pub from_heuristic: u64,
    /// Blocks with mapping symbols where the heuristic alone would have
    /// picked the other instruction set.
    pub heuristic_disagreements: u64,
    pub mode_map: ModeMapStatus,
}

/// Estimated cycles of a run, split like [`CostCounts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CycleEstimate {
    pub total: u64,
    pub program: u64,
    pub runtime: u64,
}

impl CostCounts {
    /// Reads the counter file at `path`.
    ///
    /// Reads the header and the committed records only: the file grows by whole chunks of
    /// records ([`crate::layout::CHUNK_SIZE`], 256 KiB), of which a run uses a few KiB.
    pub fn read(path: &Path) -> Result<CostCounts, CountsError> {
        use std::io::Read;
        let io = |source| CountsError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let mut bytes = Vec::with_capacity(HEADER_SIZE as usize);
        (&file).take(HEADER_SIZE).read_to_end(&mut bytes).map_err(io)?;
        // A bad header is reported by `parse`, from what was read.
        if let Ok(header) = Header::decode(&bytes) {
            let records = header.records.saturating_mul(RECORD_SIZE);
            bytes.reserve(usize::try_from(records).unwrap_or(0).min(1 << 30));
            (&file).take(records).read_to_end(&mut bytes).map_err(io)?;
        }
        CostCounts::parse(&bytes).map_err(|error| error.in_file(path))
    }

    /// Parses the bytes of a counter file.
    pub fn parse(bytes: &[u8]) -> Result<CostCounts, CountsError> {
        let header = Header::decode(bytes)?;
        if header.failed {
            return Err(CountsError::PluginFailed);
        }
        let available = (bytes.len() as u64 - HEADER_SIZE) / RECORD_SIZE;
        if header.records > available {
            return Err(CountsError::Truncated {
                records: header.records,
                available,
            });
        }
        let mut program = ClassCounts::default();
        let mut runtime = ClassCounts::default();
        for index in 0..header.records {
            let start = (HEADER_SIZE + index * RECORD_SIZE) as usize;
            let record = Record::decode(&bytes[start..start + RECORD_SIZE as usize])
                .map_err(|error| CountsError::BadRecord { index, error })?;
            let side = match record.origin {
                Origin::Program => &mut program,
                Origin::Runtime => &mut runtime,
            };
            for (slot, &n) in side.0.iter_mut().zip(record.class_counts.iter()) {
                *slot = record
                    .executions
                    .checked_mul(u64::from(n))
                    .and_then(|product| slot.checked_add(product))
                    .ok_or(CountsError::Overflow { index })?;
            }
        }
        let per_class = program.merged(&runtime);
        Ok(CostCounts {
            complete: header.complete,
            total: per_class.total(),
            per_class,
            program,
            runtime,
            mode_stats: ModeStats {
                translations: header.translations,
                from_symbols: header.mode_from_symbols,
                from_heuristic: header.mode_from_heuristic,
                heuristic_disagreements: header.heuristic_disagreements,
                mode_map: header.mode_map,
            },
        })
    }

    /// Instructions executed in the program's own code.
    pub fn program_total(&self) -> u64 {
        self.program.total()
    }

    /// Instructions executed in the runtime library and libc.
    pub fn runtime_total(&self) -> u64 {
        self.runtime.total()
    }

    /// Estimated cycles under `table`.
    pub fn cycles(&self, table: &LatencyTable) -> CycleEstimate {
        let program = table.cycles(&self.program);
        let runtime = table.cycles(&self.runtime);
        CycleEstimate {
            total: program.saturating_add(runtime),
            program,
            runtime,
        }
    }
}

/// Why a counter file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CountsError {
    #[error("cannot read counter file {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error("counter file claims {records} records but holds only {available}")]
    Truncated { records: u64, available: u64 },
    #[error("counter file record {index}: {error}")]
    BadRecord { index: u64, error: LayoutError },
    #[error(
        "the plugin stopped counting (it could not grow its counter file); counts are incomplete"
    )]
    PluginFailed,
    #[error("counter file record {index}: instruction count overflows 64 bits")]
    Overflow { index: u64 },
    #[error("{path}: {error}")]
    InFile {
        path: PathBuf,
        error: Box<CountsError>,
    },
}

impl CountsError {
    fn in_file(self, path: &Path) -> CountsError {
        CountsError::InFile {
            path: path.to_path_buf(),
            error: Box::new(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::class::InsnClass;
    use crate::decode::Mode;
    use crate::layout::ModeSource;

    fn file(header: Header, records: &[Record], extra_records: u64) -> Vec<u8> {
        let n = records.len() as u64 + extra_records;
        let mut bytes = vec![0u8; (HEADER_SIZE + n * RECORD_SIZE) as usize];
        header.encode_into(&mut bytes);
        for (i, record) in records.iter().enumerate() {
            let at = HEADER_SIZE as usize + i * RECORD_SIZE as usize;
            record.encode_into(&mut bytes[at..]);
        }
        bytes
    }

    fn record(executions: u64, origin: Origin, classes: &[InsnClass]) -> Record {
        let mut r = Record::new(0x8000, origin, Mode::Arm, ModeSource::Symbols);
        for &c in classes {
            r.add(c);
        }
        r.executions = executions;
        r
    }

    #[test]
    fn totals_are_executions_times_mix() {
        let records = [
            record(
                10,
                Origin::Program,
                &[InsnClass::Alu, InsnClass::Load, InsnClass::CondBranch],
            ),
            record(1, Origin::Runtime, &[InsnClass::Alu, InsnClass::Other]),
            // A retranslation of the first block: its own counter, summed in.
            record(
                5,
                Origin::Program,
                &[InsnClass::Alu, InsnClass::Load, InsnClass::CondBranch],
            ),
            // Translated but never run.
            record(0, Origin::Runtime, &[InsnClass::Div]),
        ];
        let header = Header {
            records: 4,
            ..Header::empty()
        };
        // Spare zero records past the count are ignored.
        let counts = CostCounts::parse(&file(header, &records, 3)).expect("valid file");
        assert!(!counts.complete);
        assert_eq!(counts.total, 15 * 3 + 2);
        assert_eq!(counts.program.get(InsnClass::Load), 15);
        assert_eq!(counts.program_total(), 45);
        assert_eq!(counts.runtime_total(), 2);
        assert_eq!(counts.per_class.get(InsnClass::Alu), 16);
        assert_eq!(counts.per_class.get(InsnClass::Div), 0);
        let cycles = counts.cycles(&LatencyTable::CORTEX_A9_LIKE);
        assert_eq!(cycles.program, 15 * (1 + 3 + 2));
        assert_eq!(cycles.total, cycles.program + 2);
    }

    #[test]
    fn malformed_files_are_errors() {
        let header = Header {
            records: 2,
            complete: true,
            ..Header::empty()
        };
        let one = [record(1, Origin::Program, &[InsnClass::Alu])];
        match CostCounts::parse(&file(header, &one, 0)) {
            Err(CountsError::Truncated {
                records: 2,
                available: 1,
            }) => {}
            other => panic!("expected truncation error, got {other:?}"),
        }
        assert!(matches!(
            CostCounts::parse(b"short"),
            Err(CountsError::Layout(LayoutError::TooShort { .. }))
        ));
        let mut bad_magic = file(Header::empty(), &[], 0);
        bad_magic[0] = b'X';
        assert!(matches!(
            CostCounts::parse(&bad_magic),
            Err(CountsError::Layout(LayoutError::BadMagic))
        ));
        let huge = [record(
            u64::MAX,
            Origin::Program,
            &[InsnClass::Alu, InsnClass::Alu],
        )];
        let header = Header {
            records: 1,
            ..Header::empty()
        };
        assert!(matches!(
            CostCounts::parse(&file(header, &huge, 0)),
            Err(CountsError::Overflow { index: 0 })
        ));
        let failed = Header {
            failed: true,
            ..Header::empty()
        };
        assert!(matches!(
            CostCounts::parse(&file(failed, &[], 0)),
            Err(CountsError::PluginFailed)
        ));
    }

    #[test]
    fn missing_file_names_the_path() {
        let error =
            CostCounts::read(Path::new("/nonexistent/counts.bin")).expect_err("no such file");
        assert!(
            error.to_string().contains("/nonexistent/counts.bin"),
            "{error}"
        );
    }
}
