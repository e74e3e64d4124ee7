//! `sysyc`: an optimising compiler for SysY (the C subset of the Chinese compiler competition)
//! targeting ARMv7 (`armv7ve`, VFPv4, hard-float AAPCS, ARM mode).
//!
//! Pipeline: [`frontend`] (source → typed HIR) → lowering to the SSA [`ir`] → [`passes`]
//! (a pipeline of registered optimisations) → ARM back end. [`analysis`] holds the CFG
//! analyses passes share, [`runtime`] the runtime library's semantics and C source, and
//! [`faults`] the fault-injection switches used to test the harness.

pub mod analysis;
pub mod config;
pub mod driver;
pub mod faults;
pub mod frontend;
pub mod ir;
pub mod isa;
pub mod lower;
pub mod passes;
pub mod runtime;
pub mod suites;
pub mod toolchain;
#[cfg(test)]
mod test_rng;
