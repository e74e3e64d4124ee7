//! The size-driven decisions a configuration holds fixed ([`SizePins`]), read by the passes
//! that decide by size (`inline`, `recursive-inline`, `full-unroll`).

use std::collections::BTreeSet;

/// Decisions the optimiser makes by size, held fixed by function name: `outlined` functions
/// are never inlined (`inline` leaves every call of them; `recursive-inline` leaves them
/// alone), and loops of `rolled` functions are never fully unrolled (`full-unroll` skips the
/// function). A program reduced while a failure needs a callee too big to inline, or a loop
/// too long to unroll, shrinks them below the budgets and the failure would go away; triage
/// pins the decisions the original compilation made instead (see the harness's
/// `triage::pins`). Names of functions that do not exist are ignored. Part of a
/// [`crate::config::Config`] (`--keep-outlined`, `--keep-rolled`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SizePins {
    pub outlined: BTreeSet<String>,
    pub rolled: BTreeSet<String>,
}

impl SizePins {
    pub fn is_empty(&self) -> bool {
        self.outlined.is_empty() && self.rolled.is_empty()
    }
}

