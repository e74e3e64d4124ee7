//! The dedup cache around the steps after the optimiser, for one subject: a configuration
//! whose optimised IR was seen before shares its IR-interpreter verdict and its back end (per
//! stage set), and one whose assembly was seen before shares its qemu run. The cache keeps
//! hashes and results only, never modules or assembly texts. Off ([`Dedup::new`] with
//! `false`), every configuration runs every step itself: the same code, nothing remembered.

use std::sync::Arc;

use rustc_hash::FxHashMap;
use sysyc::passes::OptLevel;
use sysyc::passes::manager::PipelineState;

use crate::failure::Failure;
use crate::qemu::RunCost;

/// Hash of a text (IR or assembly), as the campaign's rows record it.
pub fn hash_text(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex()[..16].to_string()
}

/// A qemu run, shared by every configuration with the same assembly.
#[derive(Clone)]
pub struct Native {
    pub verdict: Result<(), Failure>,
    pub cost: Option<RunCost>,
    pub wall: std::time::Duration,
}

/// The cache of one subject (see the module documentation).
pub struct Dedup {
    enabled: bool,
    /// IR hash → the IR interpreter's verdict.
    ir: FxHashMap<String, Result<(), Failure>>,
    /// "IR hash/stage set" → assembly hash, or the back end's failure.
    asm: FxHashMap<String, Result<String, Failure>>,
    /// Assembly hash → the qemu run (kept also when off, to count the texts run).
    pub native: FxHashMap<String, Native>,
    /// The optimised IR of the configurations whose pipeline is exactly `-O1`'s or `-O2`'s:
    /// the data-flow self-test checks these instead of running the pipelines again.
    pub levels: Vec<(OptLevel, Arc<PipelineState>)>,
}

impl Dedup {
    pub fn new(enabled: bool) -> Dedup {
        Dedup { enabled, ir: FxHashMap::default(), asm: FxHashMap::default(), native: FxHashMap::default(), levels: Vec::new() }
    }

    /// The IR interpreter's verdict on the IR of `ir_hash`, computed once.
    pub fn ir_verdict(&mut self, ir_hash: &str, run: impl FnOnce() -> Result<(), Failure>) -> Result<(), Failure> {
        if !self.enabled {
            return run();
        }
        self.ir.entry(ir_hash.to_string()).or_insert_with(run).clone()
    }

    /// The assembly hash of the back end's output for `key`, selected only when the key was
    /// not seen; with the text when it was selected now. Also whether the back end was shared.
    pub fn assembly(&mut self, key: &str, select: impl FnOnce() -> Result<String, Failure>) -> (Result<(String, Option<String>), Failure>, bool) {
        if let Some(asm) = self.asm.get(key) {
            return (asm.clone().map(|hash| (hash, None)), true);
        }
        let selected = select();
        let asm_hash = selected.as_ref().map(|text| hash_text(text)).map_err(Failure::clone);
        if self.enabled {
            self.asm.insert(key.to_string(), asm_hash.clone());
        }
        (selected.and_then(|text| asm_hash.map(|hash| (hash, Some(text)))), false)
    }

    /// The run of the assembly of `asm_hash`, when one was made and runs are shared.
    pub fn run_of(&self, asm_hash: &str) -> Option<&Native> {
        self.native.get(asm_hash).filter(|_| self.enabled)
    }

    /// Keeps a run: for the configurations after it, and to count the distinct texts run.
    pub fn keep_run(&mut self, asm_hash: String, native: Native) {
        self.native.insert(asm_hash, native);
    }

    /// Whether runs are shared (so that a run in flight can be joined).
    pub fn enabled(&self) -> bool {
        self.enabled
    }
}
