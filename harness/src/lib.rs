//! The differential fuzzing and benchmark harness of the `sysyc` compiler, as a library (the
//! `harness` binary is a thin front end over it). `doc/DESIGN.md` describes how the pieces
//! fit: a [`subject::Subject`] goes through the [`stages`], and every outcome is judged by
//! [`failure::judge`] into the one failure vocabulary of [`failure`].

// Printing goes through `output`'s macros, which cannot panic on a closed pipe or full disk.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

#[macro_use]
pub mod output;

pub mod bench;
pub mod campaign;
pub mod cgen;
pub mod cli;
pub mod conform;
pub mod engine;
pub mod failure;
pub mod generators;
pub mod memory;
pub mod mutants;
pub mod oracles;
pub mod qemu;
pub mod refinterp;
pub mod scratch;
pub mod speedup;
pub mod stages;
pub mod subject;
pub mod triage;
