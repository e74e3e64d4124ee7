//! What the plugin does when QEMU translates a block, independent of QEMU's
//! API so it can be tested with plain byte slices.
//!
//! For each translation block: decide ARM or Thumb (mapping symbols, else the
//! heuristic of `sysy_cost_model::block`), classify every instruction, split
//! the instructions by origin (program or runtime, by address), and append one
//! record per origin present to the counter file. The caller registers one
//! inline add of 1 per returned counter, executed each time the block runs.
//! A block thus costs one add per execution (two in the rare block that
//! straddles the program/runtime boundary).

use std::io;
use std::path::PathBuf;

use sysy_cost_model::block::{ModeGuesser, RawInsn, decode_block};
use sysy_cost_model::layout::{ModeMapStatus, ModeSource, Origin, Record};
use sysy_cost_model::plugin_args::{ModeDetection, PluginConfig};
use sysy_cost_model::{Mode, ModeMap, ProgramRanges};

use crate::counter_file::CounterFile;

pub struct Plugin {
    file: CounterFile,
    program: ProgramRanges,
    mode_map: MapState,
    guesser: ModeGuesser,
    /// The executable named by `binary=`, read instead of QEMU's.
    binary: Option<PathBuf>,
}

enum MapState {
    /// `mode=auto`, binary not read yet (it is read at the first translation,
    /// when QEMU can tell its path).
    Pending,
    Loaded(ModeMap),
    Unavailable,
    NotRequested,
}

impl Plugin {
    /// Creates the counter file named by `config`.
    pub fn new(config: &PluginConfig) -> io::Result<Plugin> {
        let file = CounterFile::create(&config.out)?;
        let mode_map = match config.mode {
            ModeDetection::Auto => MapState::Pending,
            ModeDetection::Heuristic => MapState::NotRequested,
        };
        Ok(Plugin {
            file,
            program: config.program.clone(),
            mode_map,
            guesser: ModeGuesser::new(),
            binary: config.binary.clone(),
        })
    }

    /// Handles one translation block; returns the execution counters to
    /// increment each time it runs. `binary` yields the guest executable's
    /// path; it is asked at most once, and not at all when the configuration
    /// names the executable (`binary=`).
    pub fn translate(
        &mut self,
        insns: &[RawInsn<'_>],
        binary: impl FnOnce() -> Option<PathBuf>,
    ) -> Vec<*mut u64> {
        if self.file.header().failed {
            return Vec::new();
        }
        let Some(first) = insns.first() else {
            return Vec::new();
        };
        if matches!(self.mode_map, MapState::Pending) {
            let path = self.binary.clone().or_else(binary);
            self.load_mode_map(path);
        }
        let (mode, source) = self.decide_mode(first.vaddr, insns);
        let decoded = decode_block(insns, mode);

        let mut program: Option<Record> = None;
        let mut runtime: Option<Record> = None;
        for (insn, decoded) in insns.iter().zip(&decoded) {
            let (slot, origin) = if self.program.contains(insn.vaddr) {
                (&mut program, Origin::Program)
            } else {
                (&mut runtime, Origin::Runtime)
            };
            slot.get_or_insert_with(|| Record::new(insn.vaddr, origin, mode, source))
                .add(decoded.class);
        }

        let mut counters = Vec::with_capacity(2);
        for record in [program, runtime].into_iter().flatten() {
            match self.file.push(&record) {
                Ok(counter) => counters.push(counter),
                Err(_) => {
                    // Counting stops; the reader reports the file as unusable.
                    self.file.update_header(|h| h.failed = true);
                    return Vec::new();
                }
            }
        }
        self.file.update_header(|h| h.translations += 1);
        counters
    }

    /// Takes over the blocks `earlier` (the state this fresh count replaces) translated, so
    /// that their executions from now on count here (see [`CounterFile::adopt`]). A block of
    /// `earlier` inside this state's program ranges would be counted as runtime code: that
    /// makes this state's counts unusable (the harness then reruns the program on its own).
    pub fn adopt_translations(&mut self, earlier: &Plugin) -> io::Result<()> {
        let program = &self.program;
        self.file.adopt(&earlier.file, |record| {
            let instructions: u64 = record.class_counts.iter().map(|&n| u64::from(n)).sum();
            let end = record.vaddr + 4 * instructions.max(1);
            program.contains(record.vaddr) || program.ranges().iter().any(|&(lo, _)| (record.vaddr..end).contains(&lo))
        })
    }

    /// Marks the counts as complete (QEMU's atexit callback).
    pub fn finish(&mut self) {
        self.file.update_header(|h| h.complete = true);
    }

    fn load_mode_map(&mut self, binary: Option<PathBuf>) {
        let map = binary
            .and_then(|path| ModeMap::from_elf(&path).ok())
            .filter(|map| !map.is_empty());
        let (state, status) = match map {
            Some(map) => (MapState::Loaded(map), ModeMapStatus::Loaded),
            None => (MapState::Unavailable, ModeMapStatus::Unavailable),
        };
        self.mode_map = state;
        self.file.update_header(|h| h.mode_map = status);
    }

    /// The block's mode and where it came from. The heuristic runs on every
    /// block (learning from its own guesses only), so that where symbols exist
    /// its disagreements with them are measured honestly.
    fn decide_mode(&mut self, start: u64, insns: &[RawInsn<'_>]) -> (Mode, ModeSource) {
        let guess = self.guesser.guess(insns);
        self.guesser.learn(insns, guess);
        let from_symbols = match &self.mode_map {
            MapState::Loaded(map) => map.lookup(start),
            _ => None,
        };
        match from_symbols {
            Some(mode) => {
                self.file.update_header(|h| {
                    h.mode_from_symbols += 1;
                    h.heuristic_disagreements += u64::from(mode != guess);
                });
                (mode, ModeSource::Symbols)
            }
            None => {
                self.file.update_header(|h| h.mode_from_heuristic += 1);
                (guess, ModeSource::Heuristic)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysy_cost_model::{CostCounts, InsnClass};

    fn insn(vaddr: u64, bytes: &[u8]) -> RawInsn<'_> {
        RawInsn { vaddr, bytes }
    }

    /// Stands in for QEMU's inline add.
    fn run(counter: *mut u64, times: u64) {
        // SAFETY: counters point into the plugin's live mapping.
        unsafe { *counter += times };
    }

    #[test]
    fn counts_are_executions_times_mix_split_by_origin() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("counts");
        let config = PluginConfig::new(&out, ProgramRanges::new([(0x1000, 0x1008)]));
        let mut plugin = Plugin::new(&config).expect("create counter file");

        let add = 0xe081_0002u32.to_le_bytes(); // add r0, r1, r2
        let ldr = 0xe591_0004u32.to_le_bytes(); // ldr r0, [r1, #4]
        let bne = 0x1aff_fffcu32.to_le_bytes(); // bne
        // A block straddling the boundary at 0x1008: two program instructions,
        // one runtime instruction, hence two counters.
        let block = [insn(0x1000, &add), insn(0x1004, &ldr), insn(0x1008, &bne)];
        let counters = plugin.translate(&block, || None);
        assert_eq!(counters.len(), 2);
        for &c in &counters {
            run(c, 10);
        }
        // The same block translated again (e.g. after a flush) gets its own counters.
        let again = plugin.translate(&block, || panic!("binary asked twice"));
        for &c in &again {
            run(c, 5);
        }
        // Thumb `bx lr` in the runtime.
        let bx = 0x4770u16.to_le_bytes();
        let thumb = plugin.translate(&[insn(0x2000, &bx)], || None);
        run(thumb[0], 3);

        let before_exit = CostCounts::read(&out).expect("readable before exit");
        assert!(!before_exit.complete);
        plugin.finish();
        let counts = CostCounts::read(&out).expect("readable");
        assert!(counts.complete);
        assert_eq!(counts.total, 15 * 3 + 3);
        assert_eq!(counts.program.get(InsnClass::Alu), 15);
        assert_eq!(counts.program.get(InsnClass::Load), 15);
        assert_eq!(counts.runtime.get(InsnClass::CondBranch), 15);
        assert_eq!(counts.runtime.get(InsnClass::IndirectBranch), 3);
        assert_eq!(counts.mode_stats.translations, 3);
        assert_eq!(counts.mode_stats.mode_map, ModeMapStatus::Unavailable);
        assert_eq!(counts.mode_stats.from_heuristic, 3);
    }

    #[test]
    fn file_grows_past_one_chunk() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("counts");
        let mut config = PluginConfig::new(&out, ProgramRanges::default());
        config.mode = ModeDetection::Heuristic;
        let mut plugin = Plugin::new(&config).expect("create counter file");
        let add = 0xe081_0002u32.to_le_bytes();
        let blocks = sysy_cost_model::layout::RECORDS_PER_CHUNK * 2 + 7;
        let mut counters = Vec::new();
        for i in 0..blocks {
            counters.extend(plugin.translate(&[insn(0x1_0000 + 4 * i, &add)], || None));
        }
        // Every counter stays valid after later growth.
        for (i, &c) in counters.iter().enumerate() {
            run(c, i as u64 % 3);
        }
        plugin.finish();
        let counts = CostCounts::read(&out).expect("readable");
        let expected: u64 = (0..blocks).map(|i| i % 3).sum();
        assert_eq!(counts.per_class.get(InsnClass::Alu), expected);
        assert_eq!(counts.mode_stats.mode_map, ModeMapStatus::NotRequested);
    }
}
