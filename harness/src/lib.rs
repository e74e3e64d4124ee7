//! The differential fuzzing and benchmark harness of the `sysyc` compiler, as a library (the
//! `harness` binary is a thin front end over it).

pub mod generators;
pub mod qemu;
