//! The SysY runtime library: its semantics in Rust (for the interpreters) and, for compiled
//! programs, its C implementation `sysy_rt.c`.

pub mod io;
pub mod library;
pub mod outcome;
mod printf;
pub mod vfp;

pub use io::{Io, PutfArg};
pub use outcome::{Outcome, SrcLoc, Trap, TrapKind};
