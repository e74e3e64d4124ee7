//! The differential fuzzing and benchmark harness of the `sysyc` compiler, as a library (the
//! `harness` binary is a thin front end over it).

pub mod bench;
pub mod campaign;
pub mod cgen;
pub mod cli;
pub mod conform;
pub mod engine;
pub mod generators;
pub mod memory;
pub mod native;
pub mod oracles;
pub mod qemu;
pub mod refinterp;
pub mod speedup;
pub mod triage;
