//! Analyses shared by the optimisation passes.
//!
//! Control flow of one function:
//! * [`cfg`](mod@cfg) — predecessor and successor tables, reverse post-order, reachability;
//! * [`domtree`] — the dominator tree (Cooper–Harvey–Kennedy), block and instruction dominance;
//! * [`frontier`] — dominance frontiers and iterated frontiers (phi placement);
//! * [`loops`] — the natural-loop forest; [`counted`] — counted-loop recognition;
//!   [`termination`] — which loops provably finish; [`nonneg`] — which `i32` values are never
//!   negative at a block (for the selection of division and remainder by powers of two);
//! * [`dataflow`] — gen/kill data-flow problems (liveness, dominators, stack-store reads)
//!   with an iterative and a region-based solver;
//! * [`cache`] — lazily recomputed, per-function results keyed by [`Function::cfg_epoch`].
//!
//! Interprocedural and memory analyses:
//! * [`callgraph`] — the call graph, its strongly connected components (bottom-up), recursion
//!   and reachability from `main`;
//! * [`funcinfo`] — per-function side-effect summaries (I/O, globals and parameters read and
//!   written, pure / read-only / always-returns) and parameter points-to sets;
//! * [`pointers`] — pointer provenance: address roots and linear byte offsets;
//! * [`alias`] — the memory model: alias queries and mod/ref of instructions;
//! * [`memdep`] — memory dependence (the last write of a location before a point);
//! * [`scc`] — Tarjan's strongly connected components (shared helper).
//!
//! All of them look only at blocks in the layout; terminator targets outside it (invalid IR,
//! reported by the verifier) are ignored rather than followed. Results are deterministic:
//! every order comes from the layout and terminator operand order, never from hashing.
//!
//! [`Function::cfg_epoch`]: crate::ir::Function::cfg_epoch

pub mod alias;
pub mod cache;
pub mod callgraph;
pub mod constraints;
pub mod cfg;
pub mod counted;
pub mod dataflow;
pub mod domtree;
pub mod excluded;
pub mod frontier;
pub mod funcinfo;
pub mod loops;
pub mod memdep;
pub mod nonneg;
pub mod pointers;
pub mod scc;
pub mod termination;

pub use cache::AnalysisCache;
pub use cfg::ControlFlowGraph;
pub use domtree::DomTree;
pub use frontier::DominanceFrontiers;
pub use loops::{Loop, LoopForest};
pub use alias::{AliasAnalysis, AliasResult, Context, MemLoc, ModRef};
pub use callgraph::CallGraph;
pub use funcinfo::{FuncInfo, FuncSummary};
pub use memdep::{MemDep, MemDepQuery};

#[cfg(test)]
mod memory_tests;
#[cfg(test)]
mod tests;
