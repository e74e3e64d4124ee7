//! What a check of the `sysyc` compiler is, and how one is made.
//!
//! A [`subject::Subject`] (one program, parsed once, with its stdin) goes through the
//! [`steps`] (lower, optimise, interpret, select, link, run); every outcome is judged by
//! [`failure::judge`] into the one failure vocabulary of [`failure`]. The [`engines`] run a
//! subject one way each (the reference interpreter of [`refinterp`], the IR interpreter,
//! qemu-arm through [`qemu`], gcc on the [`cgen`] translation); the [`oracles`] check what a
//! run cannot show. `../doc/DESIGN.md` describes how the pieces fit.

pub mod cgen;
pub mod engine;
pub mod executor;
pub mod failure;
pub mod oracles;
pub mod qemu;
pub mod refinterp;
pub mod steps;
pub mod subject;
