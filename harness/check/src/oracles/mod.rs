//! In-process oracles: checks that need no qemu, shared by the libFuzzer targets (`fuzz/`),
//! the campaign, the harness tests and the CLI. Generators make programs; oracles decide
//! whether the compiler treated them right (the wasmtime split).
//!
//! * the per-pass oracles — the expected outcome against the IR interpreter's after every
//!   pass of a pipeline (the first disagreeing pass is the culprit), and the lowered IR
//!   printed, parsed and printed again unchanged after every pass — are part of a check
//!   ([`crate::executor::each_pass`]);
//! * [`dataflow`] — the iterative and the region-based data-flow solvers agree on every
//!   function;
//! * [`encoder`] — the in-process assembler's objects against GNU `as`'s, byte for byte;
//! * [`frontend`] — arbitrary bytes through the front end: a diagnostic or a program, never a
//!   panic.
//!
//! Every oracle reports what it found as a [`crate::failure::Failure`], in the same
//! vocabulary as the campaign.

pub mod dataflow;
pub mod encoder;
pub mod frontend;

use sysyc::config::Config;
use sysyc::passes::{ir_passes, lookup};

/// A configuration drawn from fuzzer bytes: `mem2reg` first (most passes expect SSA) most of
/// the time, then up to 16 IR passes in any order, repeats allowed — swarm testing over
/// passes — with every back-end stage.
pub fn random_config(u: &mut arbitrary::Unstructured<'_>) -> arbitrary::Result<Config> {
    let passes: Vec<_> = ir_passes().collect();
    let mut pipeline = Vec::new();
    if u.arbitrary::<bool>()? {
        pipeline.extend(lookup("mem2reg"));
    }
    for _ in 0..u.int_in_range(0..=16)? {
        pipeline.push(*u.choose(&passes)?);
    }
    Ok(Config { verify_each: true, ..Config::default() }.with_pipeline(pipeline))
}
