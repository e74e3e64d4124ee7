//! Triage of a miscompilation: name the culprit ([`bisect`]) and shrink the program
//! ([`reduce`]), so a failure found by the fuzzer reaches a human as "pass X breaks this
//! 12-line program" instead of a generated program and a wrong output.
//!
//! A failure is a [`FailureCase`]: SysY source, its stdin, and the compiler configuration
//! ([`sysyc::config::Config`]: the pass pipeline, the optional back-end stages, the injected
//! faults).
//! The truth is the reference interpreter ([`sysy_check::refinterp`]); a program on which the
//! reference interpreter traps or times out has undefined behaviour and is no failure at all
//! (and never a reduction candidate).
//!
//! Runs are the harness's stages ([`sysy_check::steps`]) judged by its one judge, so a failure
//! is described exactly as the campaign described it ([`sysy_check::failure`]).
//! * [`ddmin`] — Zeller's delta debugging over a list (passes, back-end stages).
//! * [`bisect`] — per-pass oracle, back-end stage bisection, minimal sub-pipeline,
//!   opt-bisect step.
//! * [`reduce`] — AST-level test-case reduction to a fixpoint.
//! * [`pins`] — the size-driven decisions (callees outlined, loops rolled) held fixed while a
//!   reduction shrinks them.
//! * [`regression`] — `harness triage`: both, and the reduced case written as a regression
//!   test (`corpus/regressions/`).
//! * [`hang`] — the pass of a compiler hang, located by probes in child processes.
//! * [`cli`] — the `bisect`, `reduce` and `triage` subcommands.

pub mod bisect;
pub mod case;
pub mod ddmin;
pub mod hang;
pub mod pins;
pub mod reduce;
pub mod regression;

pub use bisect::{BisectReport, Checks, Culprit, bisect};
pub use case::FailureCase;
pub use reduce::{ReduceOptions, Reduced, reduce};

#[cfg(test)]
mod tests;
