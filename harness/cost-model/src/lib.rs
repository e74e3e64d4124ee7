//! Cost model for executed ARMv7 code, shared by the QEMU plugin
//! (`sysy-cost-plugin`) and the harness.
//!
//! * [`class`] — the instruction classes and their precise membership.
//! * [`decode`] — A32 and T32/T16 decoders mapping an instruction to a class.
//! * [`block`] — decoding a translation block, and guessing ARM vs Thumb.
//! * [`latency`] — the per-class cycle table and the cycle estimate.
//! * [`layout`] — the byte layout of the plugin's counter file.
//! * [`counts`] — reading a counter file into [`counts::CostCounts`].
//! * [`elf`] — program address ranges and ARM/Thumb mapping symbols from ELF files.
//! * [`plugin_args`] — the plugin's arguments, and building QEMU's `-plugin` option.
//!
//! Assumes a little-endian guest (armhf) and plugin host.

pub mod block;
pub mod class;
pub mod counts;
pub mod decode;
pub mod elf;
pub mod latency;
pub mod layout;
pub mod plugin_args;

pub use class::{ClassCounts, InsnClass, NUM_CLASSES};
pub use counts::{CostCounts, CountsError, CycleEstimate};
pub use decode::Mode;
pub use elf::{ModeMap, ProgramRanges};
pub use latency::LatencyTable;
pub use plugin_args::{PluginConfig, locate_plugin, plugin_option};
