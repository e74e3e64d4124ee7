//! How a client watches the compiler code the executor runs.
//!
//! The compiler runs in-process, so a check can take the whole process down (an abort, a stack
//! overflow) or never return (a pass that never reaches its fixpoint). A long-running client
//! (the campaign's supervisor and watchdog) must know which step was in flight, must not run a
//! step again that took an earlier process down, and must hear that a long triage is still
//! making progress. The executor tells a [`Watch`] all three; clients that need none of it
//! pass [`Unwatched`].

use crate::failure::{Failure, Stage};

/// The step name of the data-flow self-test (configurations are named by their id).
pub const ANALYSIS: &str = "analysis";

/// What the executor tells its client about the compiler code it runs.
pub trait Watch: Sync {
    /// The executor starts `step` of the subject: a configuration (by its id) or
    /// [`ANALYSIS`].
    fn enter(&self, step: &str);
    /// The executor runs no more compiler code for the subject.
    fn leave(&self);
    /// The failure of `step` when it took the process down in an earlier session (it is not
    /// run again), as a failure of `stage`.
    fn taken_down(&self, step: &str, stage: Stage) -> Option<Failure>;
    /// A check starts: the client's work is making progress.
    fn beat(&self) {}
}

/// A client that watches nothing.
pub struct Unwatched;

impl Watch for Unwatched {
    fn enter(&self, _: &str) {}
    fn leave(&self) {}
    fn taken_down(&self, _: &str, _: Stage) -> Option<Failure> {
        None
    }
}
