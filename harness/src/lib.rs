//! The differential fuzzing and benchmark harness of the `sysyc` compiler: the campaign,
//! triage, the reports and the command line (the `harness` binary is a thin front end over
//! this library). Checks are made by `sysy_check` and programs come from [`sources`] (the
//! `sysy_generator` crate's programs, corpus directories); `doc/DESIGN.md` describes how the
//! crates fit.

// Printing goes through `output`'s macros, which cannot panic on a closed pipe or full disk.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

#[macro_use]
pub mod output;

pub mod bench;
pub mod campaign;
pub mod cli;
pub mod conform;
pub mod gen_stats;
pub mod memory;
pub mod mutants;
pub mod scratch;
pub mod sources;
pub mod speedup;
pub mod triage;
