//! Data-flow analysis of gen/kill problems, with two interchangeable solvers: the classic
//! iterative one and a region-based (elimination) one.
//!
//! # What
//! A [`GenKillProblem`] gives, per block, a [`Transfer`] `f(x) = gen ∪ (x − kill)` over a
//! fixed universe of facts, a [`Direction`], a [`Meet`] (union for "on some path", intersection
//! for "on every path") and the boundary value (at the entry, or after the exits). [`solve`]
//! returns the maximal-fixed-point [`Solution`]: the facts at the start and at the end of every
//! reachable block, in program order whatever the direction.
//!
//! * [`Solver::Iterative`] ([`iterative`]): worklist in reverse post-order.
//! * [`Solver::Region`] ([`region`]): builds the region hierarchy of the flow graph, computes
//!   the transfer function of every region bottom-up by composition, meet and closure, then
//!   pushes `IN` values top-down to every block.
//!
//! Both solve the same equations on the same [`graph::FlowGraph`] (a virtual root carries the
//! boundary; backward problems run on the reversed CFG), so their results must be identical —
//! the agreement tests and the campaign's `analysis-disagreement` oracle check exactly that.
//! Instances the compiler uses live in [`problems`]: SSA liveness, dominators, and the reads
//! of stack stores that `load-elim` uses to find stores nobody reads.
//!
//! # Why two solvers
//! The region solver summarises every loop once (closure) instead of iterating it, and its
//! summaries are reusable; the iterative solver is simpler and, on the small CFGs SysY
//! produces, cheaper to set up. Which one passes use is a measured choice ([`PREFERRED`];
//! the `dataflow` group of `benches/compiler.rs`), and keeping both makes each a test oracle
//! for the other.
//!
//! # Region hierarchy (T1/T2)
//! Super-nodes start as single nodes (leaf regions). Repeatedly, over the nodes in reverse
//! post-order:
//! * **T1**: edges from inside super-node `h` back to its header are removed; `h`'s region
//!   becomes a *loop region* around it, the sources of those edges being its latches.
//! * **T2**: a super-node `h` (not the root) whose in-edges all come from one other
//!   super-node `p` is merged into `p`; `p`'s region becomes (or, if it already is one, grows)
//!   a *body region* whose children are kept in merge order, which is a topological order of
//!   the edges between them, and which records those edges.
//!
//! Invariants: every super-node has a single entry, its header (all edges into it from
//! other super-nodes go to the header), so the edges between children of a body region
//! always end at a child's header; body regions are acyclic once back edges are consumed by
//! T1; a graph is reducible iff this ends with one super-node — the root's, whose region is
//! the top of the hierarchy.
//!
//! # Transfer functions
//! Bottom-up, for each region `R` and node `u` in it, `F(R, u)` maps the value at the entry
//! of `R` to the value at the end of `u`, and `E(R, c)` maps it to the entry of child `c`:
//! * leaf `u`: `F = f_u`;
//! * body: `E(R, header) = id`; for the other children in order,
//!   `E(R, c) = ∧ { F(P, u) ∘ E(R, P) | edge u → header(c), u ∈ child P }`;
//!   `F(R, u) = F(c, u) ∘ E(R, c)` for `u` in child `c`;
//! * loop around body `B` with latches `L`: `E(R, B) = (∧ { F(B, l) | l ∈ L })*` and
//!   `F(R, u) = F(B, u) ∘ E(R, B)`.
//!
//! Gen/kill functions are closed under all three operations ([`Transfer`] has the closed
//! forms), and are distributive, so the result is the meet-over-paths solution, which for
//! distributive problems is also the fixed point the iterative solver finds: the two agree
//! bit for bit. Top-down, `IN(root region) = boundary` and `IN(c) = E(R, c)(IN(R))`.
//!
//! # Irreducible graphs: node splitting
//! When T1/T2 get stuck, the smallest remaining super-node with several predecessor
//! super-nodes is split: its first predecessor keeps it, every other predecessor is given a
//! private copy of all its nodes (same transfer functions, same edges leaving the copy, its
//! internal edges between copies), and reduction restarts. This happens on an analysis copy
//! of the successor lists, never on the IR. It terminates for the graphs we meet; a size
//! limit ([`region::TooIrreducible`]) guards the rest, and then [`solve`] falls back to the
//! iterative solver.
//!
//! Why the results are right: splitting maps every path of the original graph from the root
//! to exactly one path of the split graph (each edge into the split super-node is redirected
//! to exactly one copy, and a copy's edges mirror the original's), and back, with the same
//! transfer functions along it. So the meet-over-paths value at a block equals the meet over
//! its copies of their meet-over-paths values, which is how results are folded back. SysY has
//! no `goto`, so lowered code is reducible and forward problems never split. Backward problems
//! run on the *reversed* CFG, and a loop with several exits (`break`, `return` inside it) is
//! a cycle with several entries there: irreducible. Splitting resolves it, at a cost that
//! grows with the nesting of such loops (the functional suite's `94_nested_loops` grows
//! several-fold), which is why the limit is generous and one reason the iterative solver is
//! the [`PREFERRED`] one.
//!
//! # Cost
//! Bit sets are [`FixedBitSet`]s, so every operation is a few word-wide loops over
//! `facts / 64` words. Iterative: O((loop depth + 2) · edges) transfers. Region: T1/T2 is
//! near-linear per sweep (union-find), one sweep per nesting level; the functions cost
//! O(nodes · nesting depth) transfer operations.

pub mod graph;
pub mod iterative;
pub mod problems;
pub mod region;
mod transfer;

#[cfg(test)]
mod tests;

pub use fixedbitset::FixedBitSet;
pub use transfer::Transfer;

use crate::analysis::cfg::ControlFlowGraph;
use crate::ir::Block;
use graph::FlowGraph;

/// Which way facts flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From the entry along edges; the boundary is the value at the entry.
    Forward,
    /// Against edges; the boundary is the value after every exit block.
    Backward,
}

/// How values meet where paths join.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Meet {
    /// A fact holds if it holds on some path (may-analysis).
    Union,
    /// A fact holds if it holds on every path (must-analysis).
    Intersection,
}

/// A monotone data-flow problem with gen/kill transfer functions.
pub trait GenKillProblem {
    fn direction(&self) -> Direction;
    fn meet(&self) -> Meet;
    /// Size of the fact universe (bit sets have this length).
    fn num_facts(&self) -> usize;
    /// The value at the entry (forward) or after the exits (backward).
    fn boundary(&self) -> FixedBitSet;
    /// The effect of block `b`, in the direction of the problem (for backward problems: from
    /// the value at the end of `b` to the value at its start). Called once per reachable
    /// block per solve.
    fn transfer(&self, b: Block) -> Transfer;
}

/// Which algorithm solves a problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solver {
    Iterative,
    Region,
}

/// The solver passes use: the faster one (`cargo bench --bench compiler -- dataflow`,
/// liveness + dominators of every `-O2` function: iterative 1.7 ms vs region 8.1 ms on the
/// performance suite, 0.48 ms vs 1.6 ms on `corpus/lang`, on the development machine).
pub const PREFERRED: Solver = Solver::Iterative;

/// Facts at the start and end of every reachable block (program order, whatever the
/// direction of the problem).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    /// Indexed by block number; `None` for blocks unreachable from the entry.
    blocks: Vec<Option<(FixedBitSet, FixedBitSet)>>,
}

impl Solution {
    /// Facts at the start of `b` (`None` if `b` is unreachable).
    pub fn at_start(&self, b: Block) -> Option<&FixedBitSet> {
        self.blocks.get(b.as_u32() as usize)?.as_ref().map(|(start, _)| start)
    }

    /// Facts at the end of `b` (`None` if `b` is unreachable).
    pub fn at_end(&self, b: Block) -> Option<&FixedBitSet> {
        self.blocks.get(b.as_u32() as usize)?.as_ref().map(|(_, end)| end)
    }

    /// The first block where `self` and `other` differ, for reports.
    pub fn first_difference(&self, other: &Solution) -> Option<usize> {
        let len = self.blocks.len().max(other.blocks.len());
        (0..len).find(|&i| self.blocks.get(i).cloned().flatten() != other.blocks.get(i).cloned().flatten())
    }

    fn from_ins(g: &FlowGraph, ins: Vec<FixedBitSet>) -> Solution {
        let len = g.block.iter().flatten().map(|b| b.as_u32() as usize + 1).max().unwrap_or(0);
        let mut blocks = vec![None; len];
        for (node, value) in ins.into_iter().enumerate() {
            let Some(b) = g.block[node] else { continue };
            let after = g.transfer[node].apply(&value);
            blocks[b.as_u32() as usize] = Some(match g.direction {
                Direction::Forward => (value, after),
                Direction::Backward => (after, value),
            });
        }
        Solution { blocks }
    }
}

/// Solves `problem` over `cfg` with `solver` (the region solver falls back to the iterative
/// one on graphs that stay irreducible past its splitting limit).
pub fn solve(cfg: &ControlFlowGraph, problem: &impl GenKillProblem, solver: Solver) -> Solution {
    let g = FlowGraph::build(cfg, problem);
    let ins = match solver {
        Solver::Iterative => iterative::solve(&g),
        Solver::Region => region::solve(&g).unwrap_or_else(|_| iterative::solve(&g)),
    };
    Solution::from_ins(&g, ins)
}

/// Solves `problem` with the region solver only, reporting when it gave up on an irreducible
/// graph (for the agreement oracles, which must not hide a fallback).
pub fn solve_by_regions(cfg: &ControlFlowGraph, problem: &impl GenKillProblem) -> Result<Solution, region::TooIrreducible> {
    let g = FlowGraph::build(cfg, problem);
    region::solve(&g).map(|ins| Solution::from_ins(&g, ins))
}
