//! `sysyc`: an optimising compiler for SysY (the C subset of the Chinese compiler competition)
//! targeting ARMv7 (`armv7ve`, VFPv4, hard-float AAPCS, ARM mode).

pub mod frontend;
pub mod ir;
pub mod isa;
pub mod runtime;
