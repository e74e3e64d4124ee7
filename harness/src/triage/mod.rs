//! Triage of a miscompilation: name the culprit ([`bisect`]) and shrink the program
//! ([`reduce`]), so a failure found by the fuzzer reaches a human as "pass X breaks this
//! 12-line program" instead of a generated program and a wrong output.
//!
//! A failure is a [`FailureCase`]: SysY source, its stdin, and the compiler configuration
//! ([`BuildConfig`]: the pass pipeline, the optional back-end stages, the injected faults).
//! The truth is the reference interpreter ([`crate::refinterp`]); a program on which the
//! reference interpreter traps or times out has undefined behaviour and is no failure at all
//! (and never a reduction candidate).
//!
//! * [`oracle`] — runs the reference interpreter once and compares compiled runs with it
//!   (the IR interpreter after any pipeline prefix, or the ARM binary under qemu-arm),
//!   classifying a difference as a [`FailureKind`].
//! * [`ddmin`] — Zeller's delta debugging over a list (passes, back-end stages).
//! * [`bisect`] — per-pass oracle, back-end stage bisection, minimal sub-pipeline,
//!   opt-bisect step.
//! * [`reduce`] — AST-level test-case reduction to a fixpoint.
//! * [`regression`] — `harness triage`: both, and the reduced case written as a regression
//!   test (`corpus/regressions/`).
//! * [`cli`] — the `bisect`, `reduce` and `triage` subcommands.

pub mod bisect;
pub mod case;
pub mod cli;
pub mod ddmin;
pub mod oracle;
pub mod reduce;
pub mod regression;

pub use bisect::{BisectReport, Culprit, bisect};
pub use case::{BuildConfig, FailureCase};
pub use oracle::{FailureKind, Level, Oracle, OracleSettings};
pub use reduce::{ReduceOptions, Reduced, reduce};

#[cfg(test)]
mod tests;
