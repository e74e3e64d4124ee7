//! In-process oracles over generated programs: checks that need no qemu, shared by the
//! libFuzzer targets (`fuzz/`), the harness tests and the CLI.
//!
//! * [`per_pass`] — the reference interpreter's outcome against the IR interpreter's after
//!   every pass of a pipeline (the first disagreeing pass is the culprit);
//! * [`roundtrip`] — lowered IR printed, parsed and printed again is unchanged, and the
//!   verifier accepts the module after every pass;
//! * [`frontend`] — arbitrary bytes through the front end: a diagnostic or a program, never a
//!   panic.
//!
//! Each check returns `Ok(Checked)` (with `Checked::Skipped` when the program is outside what
//! the oracle can judge, e.g. it exhausts the reference interpreter's budget) or a
//! [`Violation`] that says what went wrong, precisely enough to file a bug.

pub mod frontend;
pub mod per_pass;
pub mod roundtrip;

use std::fmt;

/// A check that ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checked {
    Passed,
    /// The program could not be judged (the truth itself trapped or ran out of budget).
    Skipped,
}

/// What an oracle found wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// `wrong-output`, `wrong-exit-status`, `trap`, `verifier`, `panic`, `roundtrip`, ...
    pub kind: &'static str,
    /// The pass after which it showed (pipeline position and name), if any.
    pub after_pass: Option<(usize, &'static str)>,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if let Some((index, name)) = self.after_pass {
            write!(f, " after pass #{index} `{name}`")?;
        }
        write!(f, ": {}", self.detail)
    }
}

impl std::error::Error for Violation {}

/// A pipeline drawn from fuzzer bytes: `mem2reg` first (most passes expect SSA), then up to
/// 16 registered passes in any order, repeats allowed — swarm testing over passes.
pub fn random_pipeline(
    u: &mut arbitrary::Unstructured<'_>,
) -> arbitrary::Result<Vec<&'static sysyc::passes::PassInfo>> {
    use sysyc::passes::{REGISTRY, lookup};
    let mut pipeline = Vec::new();
    if u.arbitrary::<bool>()? {
        pipeline.extend(lookup("mem2reg"));
    }
    let len = u.int_in_range(0..=16)?;
    for _ in 0..len {
        pipeline.push(u.choose(REGISTRY)?);
    }
    Ok(pipeline)
}
