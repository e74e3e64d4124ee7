//! Tests of the ARM back end: hand-built IR programs compiled, linked with a C shim of the
//! runtime library and run under `qemu-arm` (skipped without the cross tools), plus checks
//! of the assembly text itself.

mod builder;
mod link;
mod programs;
mod random;
mod run;
mod sources;
mod text;
mod verify;
