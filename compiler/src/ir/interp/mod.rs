//! An interpreter for the IR: the reference semantics every optimisation pass is checked
//! against (run the module before and after a pass; the outcomes must agree).
//!
//! Use [`run`] for one run, or [`Program::new`] once and [`Program::run`] per input.
//!
//! # Semantics
//! * Execution starts at `main` (`() -> i32`); the exit status is its result `& 0xFF`.
//!   The runtime library behaves as [`crate::runtime::Io`] describes.
//! * `i32` arithmetic wraps; `sdiv`/`srem` trap on a zero divisor ([`TrapKind::DivByZero`])
//!   and on `INT_MIN / -1` ([`TrapKind::DivOverflow`]). `f32` arithmetic is Rust's (IEEE
//!   binary32, round to nearest); `fptosi` saturates like ARM's `vcvt` (NaN → 0), `sitofp`
//!   rounds to nearest.
//! * Memory: every global and every `alloca` is an object of 4-byte words; a pointer is an
//!   object and a byte offset. Loads and stores check the object exists and is live
//!   ([`TrapKind::MemoryFault`] otherwise, also for misaligned offsets and stores to `const`
//!   globals) and that the word is inside it ([`TrapKind::OutOfBounds`]). Globals start
//!   initialised; an alloca's words become uninitialised each time it executes, and `store`
//!   or `memzero` initialise them. Loading an uninitialised word traps with
//!   [`TrapKind::UninitRead`] — or, with [`InterpConfig::trap_on_uninit_load`] off, yields
//!   `undef` (useful when checking passes that legitimately speculate loads).
//! * `undef` propagates through arithmetic, comparisons, conversions, `gep`, phis, `select`
//!   (an `undef` condition gives `undef`), calls and memory (storing `undef` makes the word
//!   uninitialised). Using it where it decides behaviour traps with
//!   [`TrapKind::UninitRead`]: as a branch condition, a load/store/`memzero` address, an
//!   operand of `sdiv`/`srem`, an argument of the runtime library, or `main`'s result.
//! * `unreachable` executed traps with [`TrapKind::MissingReturn`] (control fell off the end
//!   of a non-void function). Running out of input traps with [`TrapKind::InputExhausted`].
//! * Limits: [`InterpConfig::max_steps`] IR instructions ([`TrapKind::StepLimit`], checked a
//!   block at a time: a block that would cross the budget is not entered),
//!   [`InterpConfig::max_call_depth`] nested calls and [`InterpConfig::max_stack_words`] words
//!   of stack objects ([`TrapKind::CallDepth`]; one frame bigger than that on its own says
//!   "stack frame too large"). A streaming run ([`Program::run_streaming`]) also has a
//!   wall-clock limit, checked every 2²⁰ steps.
//!
//! # Counting
//! `Outcome::steps` is the number of IR instructions executed, phis included (a phi executes
//! when control enters its block over an edge), and [`CostCounts`] splits the same count by
//! [`CostClass`].
//!
//! # Design
//! See the private modules `code` (translation: registers, edges with phi copies,
//! per-block accounting data), `memory` (objects, words that know whether they are
//! initialised) and `machine` (the loop with its fast path, the explicit call stack).
//! Registers hold `u64`: an `i32`/`f32`/`i1` in the low half with a zero high half, a pointer
//! as `object << 32 | offset`. `undef` is all ones in the high half — for scalars a flag that
//! arithmetic propagates with one `or`, for pointers an object id that never exists. Memory
//! words are stored the same way (an uninitialised word is `undef`).

mod code;
mod cost;
mod machine;
mod memory;

#[cfg(test)]
mod tests;

use crate::ir::Module;
use crate::runtime::Outcome;
#[cfg(doc)]
use crate::runtime::TrapKind;

pub use code::Program;
pub use cost::{CostClass, CostCounts};

/// The high half of a register: `undef` where all ones (see the module documentation).
const HI: u64 = 0xFFFF_FFFF_0000_0000;
/// The `undef` register value.
const UNDEF: u64 = HI;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterpConfig {
    /// IR instructions executed before [`TrapKind::StepLimit`].
    pub max_steps: u64,
    /// Calls active at once (`main` itself not counted) before [`TrapKind::CallDepth`].
    pub max_call_depth: u32,
    /// Words of live stack objects before [`TrapKind::CallDepth`].
    pub max_stack_words: u64,
    /// Trap when loading a never-written word (otherwise the load yields `undef`).
    pub trap_on_uninit_load: bool,
}

impl InterpConfig {
    /// The limits of [`Default`], with loads of never-written words yielding `undef`: the
    /// semantics for judging lowered and optimised IR of a program whose source run was
    /// already found free of uninitialised reads. Passes may speculate loads (`licm` hoists a
    /// load out of a loop that runs zero times), so only a use of the loaded value that decides
    /// behaviour (a branch, an address, output, `main`'s result) is an error.
    pub fn speculative_loads() -> InterpConfig {
        InterpConfig { trap_on_uninit_load: false, ..InterpConfig::default() }
    }
}

impl Default for InterpConfig {
    /// 10¹⁰ steps (tens of seconds at the interpreter's speed); 500 000 frames (more than an
    /// 8 MiB ARM stack holds, so no program the target can run is cut short); 2²⁶ words
    /// (256 MiB) of stack objects; trapping on uninitialised loads.
    fn default() -> InterpConfig {
        InterpConfig {
            max_steps: 10_000_000_000,
            max_call_depth: 500_000,
            max_stack_words: 1 << 26,
            trap_on_uninit_load: true,
        }
    }
}

/// What a run produced, and what it executed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterpResult {
    pub outcome: Outcome,
    pub cost: CostCounts,
    /// Where in the source the trapping instruction comes from (a byte offset, see
    /// [`crate::ir::Function::src_offset`]), when the run trapped and lowering recorded it;
    /// `crate::frontend::LineIndex` turns it into the line and column of the trap.
    pub trap_src_offset: Option<u32>,
}

/// A module the interpreter cannot run at all (as opposed to a run that traps).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InterpError {
    #[error("the module has no function `main`")]
    NoMain,
    #[error("`main` must take no parameters and return i32")]
    BadMain,
    #[error("@{func}: {message} (run the verifier for details)")]
    Malformed { func: String, message: String },
}

/// Where a streaming run ([`Program::run_streaming`]) writes the program's output as it is
/// produced, and its wall-clock limit.
pub struct Stream<'w> {
    pub out: &'w mut dyn std::io::Write,
    pub timeout: Option<std::time::Duration>,
}

/// Why a streaming run stopped before the program ended or trapped.
#[derive(Debug)]
pub enum Interrupted {
    /// The run did not end within the timeout.
    TimedOut(std::time::Duration),
    /// Writing the output failed (a closed pipe, a full disk).
    Output(std::io::Error),
}

impl Program {
    /// Runs `main` with `stdin` as standard input.
    pub fn run(&self, stdin: &[u8], config: &InterpConfig) -> InterpResult {
        machine::execute(self, stdin, config, None).0
    }

    /// [`Program::run`] writing the output to `stream.out` as it is produced (buffered, at
    /// least every 64 KiB or 100 ms of running) instead of collecting it in the outcome,
    /// whose `stdout` stays empty. An interrupted run's outcome has neither a trap nor an
    /// exit status; a timed-out run's output so far is written out.
    pub fn run_streaming(&self, stdin: &[u8], config: &InterpConfig, stream: Stream<'_>) -> (InterpResult, Option<Interrupted>) {
        machine::execute(self, stdin, config, Some(stream))
    }
}

/// Translates and runs `module` once.
pub fn run(module: &Module, stdin: &[u8], config: &InterpConfig) -> Result<InterpResult, InterpError> {
    Ok(Program::new(module)?.run(stdin, config))
}
