//! Analyses of one function's control flow, shared by the optimisation passes.
//!
//! * [`cfg`](mod@cfg) — predecessor and successor tables, reverse post-order, reachability;
//! * [`domtree`] — the dominator tree (Cooper–Harvey–Kennedy), block and instruction dominance;
//! * [`frontier`] — dominance frontiers and iterated frontiers (phi placement);
//! * [`loops`] — the natural-loop forest;
//! * [`cache`] — lazily recomputed, per-function results keyed by [`Function::cfg_epoch`].
//!
//! All of them look only at blocks in the layout; terminator targets outside it (invalid IR,
//! reported by the verifier) are ignored rather than followed. Results are deterministic:
//! every order comes from the layout and terminator operand order, never from hashing.
//!
//! [`Function::cfg_epoch`]: crate::ir::Function::cfg_epoch

pub mod cache;
pub mod cfg;
pub mod domtree;
pub mod frontier;
pub mod loops;

pub use cache::AnalysisCache;
pub use cfg::ControlFlowGraph;
pub use domtree::DomTree;
pub use frontier::DominanceFrontiers;
pub use loops::{Loop, LoopForest};

#[cfg(test)]
mod tests;
