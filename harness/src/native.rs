//! Running ARM executables under `qemu-arm` with the cost plugin: the one place that knows
//! how an executable, its stdin and a time limit become an exit status, stdout and exact
//! instruction counts.
//!
//! The plugin (`harness/plugin`, found by [`sysy_cost_model::locate_plugin`]: `$SYSY_COST_PLUGIN`
//! or next to the running binary) writes its counters to a memory-mapped file while the guest
//! runs, so a run killed at its time limit still leaves the counts of every block entered
//! (`complete == false`). The program's own code is told apart from the runtime library by the
//! `__sysy_prog_begin`/`__sysy_prog_end` markers the back end emits; executables without them
//! (gcc's) count everything as runtime unless ranges are given.

use crate::qemu::{Qemu, QemuError, RunOptions, RunStatus, Stdin};
use std::path::{Path, PathBuf};
use std::time::Duration;
use sysy_cost_model::{
    CostCounts, CycleEstimate, LatencyTable, PluginConfig, ProgramRanges, locate_plugin,
    plugin_option,
};

/// Why a run could not be made or measured (as opposed to a run whose program misbehaved).
#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    #[error(transparent)]
    Qemu(#[from] QemuError),
    #[error("cost plugin: {0}")]
    Plugin(String),
    #[error("cannot create a temporary directory: {0}")]
    TempDir(std::io::Error),
}

/// Whether runs are measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CostMode {
    /// Load the plugin; a missing plugin or an unreadable counter file is an error.
    Measure,
    /// Plain qemu-arm.
    Off,
}

/// What one run cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunCost {
    pub counts: CostCounts,
    /// Under [`LatencyTable::default`].
    pub cycles: CycleEstimate,
}

/// One finished (or killed) run.
#[derive(Clone, Debug)]
pub struct NativeRun {
    pub status: RunStatus,
    pub stdout: Vec<u8>,
    pub wall: Duration,
    pub cost: Option<RunCost>,
}

/// qemu-arm, with the plugin when measuring.
#[derive(Clone, Debug)]
pub struct NativeRunner {
    qemu: Qemu,
    plugin: Option<PathBuf>,
    table: LatencyTable,
}

impl NativeRunner {
    /// Finds qemu-arm, and the plugin under [`CostMode::Measure`].
    pub fn new(mode: CostMode) -> Result<NativeRunner, NativeError> {
        let qemu = Qemu::locate()?;
        let plugin = match mode {
            CostMode::Measure => {
                Some(locate_plugin().map_err(|e| NativeError::Plugin(e.to_string()))?)
            }
            CostMode::Off => None,
        };
        Ok(NativeRunner {
            qemu,
            plugin,
            table: LatencyTable::default(),
        })
    }

    pub fn measures(&self) -> bool {
        self.plugin.is_some()
    }

    pub fn qemu(&self) -> &Qemu {
        &self.qemu
    }

    /// Runs `exe` on `stdin` for at most `timeout`; the program's code is located by the
    /// back end's markers (none found: everything counts as runtime).
    pub fn run(
        &self,
        exe: &Path,
        stdin: &[u8],
        timeout: Duration,
    ) -> Result<NativeRun, NativeError> {
        let ranges = ProgramRanges::from_markers(exe).unwrap_or_else(|_| ProgramRanges::new([]));
        self.run_with_ranges(exe, stdin, timeout, ranges)
    }

    /// [`NativeRunner::run`] with explicit program address ranges.
    pub fn run_with_ranges(
        &self,
        exe: &Path,
        stdin: &[u8],
        timeout: Duration,
        ranges: ProgramRanges,
    ) -> Result<NativeRun, NativeError> {
        let mut opts = RunOptions {
            stdin: Stdin::Bytes(stdin.to_vec()),
            timeout,
            ..RunOptions::default()
        };
        let counter_dir = match &self.plugin {
            Some(_) => Some(
                tempfile::Builder::new()
                    .prefix("harness-cost-")
                    .tempdir()
                    .map_err(NativeError::TempDir)?,
            ),
            None => None,
        };
        let counter_file = counter_dir.as_ref().map(|d| d.path().join("counts"));
        if let (Some(plugin), Some(file)) = (&self.plugin, &counter_file) {
            let option = plugin_option(plugin, &PluginConfig::new(file, ranges))
                .map_err(|e| NativeError::Plugin(e.to_string()))?;
            opts.extra_args = vec!["-plugin".into(), option.into()];
        }
        let run = self.qemu.run(exe, &opts)?;
        let cost = match &counter_file {
            Some(file) => {
                let counts = CostCounts::read(file).map_err(|e| {
                    NativeError::Plugin(format!(
                        "{e} (qemu stderr: {})",
                        String::from_utf8_lossy(&run.stderr).trim()
                    ))
                })?;
                let cycles = counts.cycles(&self.table);
                Some(RunCost { counts, cycles })
            }
            None => None,
        };
        Ok(NativeRun {
            status: run.status,
            stdout: run.stdout,
            wall: run.wall,
            cost,
        })
    }
}
