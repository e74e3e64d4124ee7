//! The flow graph both solvers run on: one node per reachable block, oriented in the
//! direction of the problem, plus a virtual root that carries the boundary value.
//!
//! Building it once for both solvers is what makes "the two solvers agree" a statement about
//! the solvers alone: they see the same nodes, edges and transfer functions, and solve the
//! same equations
//!
//! ```text
//! IN(root) = boundary
//! IN(n)    = ∧ { OUT(p) | p → n }        (n ≠ root; one term per edge)
//! OUT(n)   = f_n(IN(n))
//! ```
//!
//! * Forward problems: `root → entry`, edges as in the CFG.
//! * Backward problems: edges reversed, `root → b` for every exit block `b` (a block without
//!   successors: `ret`, `unreachable`). Blocks that reach no exit (an endless loop) would be
//!   unreachable from the root; a *filler* node with the constant function "identity of the
//!   meet" (∅ for union, all facts for intersection) gets an edge to one block of each such
//!   part. Meeting with the identity changes no equation, so the solution is the one the
//!   equations without the filler have, but now every node is reachable from the root —
//!   which the region hierarchy (single entry) needs.
//!
//! Blocks unreachable from the function entry are left out: they never execute, and their
//! facts are not defined ([`Solution`](super::Solution) says `None` for them).

use fixedbitset::FixedBitSet;
use smallvec::SmallVec;

use super::transfer::Transfer;
use super::{Direction, GenKillProblem, Meet};
use crate::analysis::cfg::ControlFlowGraph;
use crate::ir::Block;

/// Node index of the virtual root.
pub const ROOT: u32 = 0;

pub struct FlowGraph {
    pub succs: Vec<SmallVec<[u32; 2]>>,
    pub preds: Vec<SmallVec<[u32; 2]>>,
    pub transfer: Vec<Transfer>,
    /// The block of each node (`None` for the root and the filler).
    pub block: Vec<Option<Block>>,
    pub meet: Meet,
    pub direction: Direction,
    pub boundary: FixedBitSet,
    pub num_facts: usize,
}

impl FlowGraph {
    pub fn build(cfg: &ControlFlowGraph, problem: &impl GenKillProblem) -> FlowGraph {
        let num_facts = problem.num_facts();
        let meet = problem.meet();
        let direction = problem.direction();
        let boundary = problem.boundary();
        assert_eq!(boundary.len(), num_facts, "boundary value over the wrong fact universe");
        let mut g = FlowGraph {
            succs: vec![SmallVec::new()],
            preds: vec![SmallVec::new()],
            transfer: vec![Transfer::identity(num_facts)],
            block: vec![None],
            meet,
            direction,
            boundary,
            num_facts,
        };
        // Nodes in reverse post-order of the CFG: node numbers are deterministic and, for
        // forward problems, already a topological order of the forward edges.
        let mut node_of = vec![u32::MAX; cfg.rpo().iter().map(|b| b.as_u32() as usize + 1).max().unwrap_or(0)];
        for &b in cfg.rpo() {
            node_of[b.as_u32() as usize] = g.add_node(problem.transfer(b), Some(b));
        }
        let node = |b: Block| node_of[b.as_u32() as usize];
        for &b in cfg.rpo() {
            for &s in cfg.succs(b) {
                match direction {
                    Direction::Forward => g.add_edge(node(b), node(s)),
                    Direction::Backward => g.add_edge(node(s), node(b)),
                }
            }
        }
        match direction {
            Direction::Forward => {
                if let Some(&entry) = cfg.rpo().first() {
                    g.add_edge(ROOT, node(entry));
                }
            }
            Direction::Backward => {
                for &b in cfg.rpo().iter().rev() {
                    if cfg.succs(b).is_empty() {
                        g.add_edge(ROOT, node(b));
                    }
                }
                g.connect_stragglers();
            }
        }
        g
    }

    pub fn len(&self) -> usize {
        self.succs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.succs.is_empty()
    }

    fn add_node(&mut self, transfer: Transfer, block: Option<Block>) -> u32 {
        self.succs.push(SmallVec::new());
        self.preds.push(SmallVec::new());
        self.transfer.push(transfer);
        self.block.push(block);
        (self.succs.len() - 1) as u32
    }

    fn add_edge(&mut self, from: u32, to: u32) {
        self.succs[from as usize].push(to);
        self.preds[to as usize].push(from);
    }

    /// Adds the filler node and its edges (see the module documentation).
    fn connect_stragglers(&mut self) {
        let mut reached = FixedBitSet::with_capacity(self.len());
        self.mark_reachable(ROOT, &mut reached);
        let mut filler = None;
        for n in 1..self.len() as u32 {
            if reached.contains(n as usize) {
                continue;
            }
            let f = *filler.get_or_insert_with(|| {
                let identity = match self.meet {
                    Meet::Union => FixedBitSet::with_capacity(self.num_facts),
                    Meet::Intersection => {
                        let mut all = FixedBitSet::with_capacity(self.num_facts);
                        all.insert_range(..);
                        all
                    }
                };
                let f = self.add_node(Transfer::constant(identity), None);
                self.add_edge(ROOT, f);
                f
            });
            reached.grow(self.len());
            reached.insert(f as usize);
            self.add_edge(f, n);
            self.mark_reachable(n, &mut reached);
        }
    }

    /// Marks `from` and everything reachable from it that is not marked yet.
    fn mark_reachable(&self, from: u32, seen: &mut FixedBitSet) {
        if seen.put(from as usize) {
            return;
        }
        let mut stack = vec![from];
        while let Some(n) = stack.pop() {
            for &s in &self.succs[n as usize] {
                if !seen.put(s as usize) {
                    stack.push(s);
                }
            }
        }
    }

    /// Nodes in reverse post-order from the root (every node is reachable by construction).
    pub fn rpo(&self) -> Vec<u32> {
        reverse_postorder(&self.succs, ROOT)
    }
}

/// Reverse post-order of the nodes reachable from `root` in the graph given by `succs`
/// (iterative depth-first search, successors in list order).
pub fn reverse_postorder<S: AsRef<[u32]>>(succs: &[S], root: u32) -> Vec<u32> {
    let mut seen = FixedBitSet::with_capacity(succs.len());
    let mut post = Vec::with_capacity(succs.len());
    let mut stack: Vec<(u32, usize)> = vec![(root, 0)];
    seen.insert(root as usize);
    while let Some(&mut (n, ref mut next)) = stack.last_mut() {
        if let Some(&s) = succs[n as usize].as_ref().get(*next) {
            *next += 1;
            if !seen.put(s as usize) {
                stack.push((s, 0));
            }
        } else {
            post.push(n);
            stack.pop();
        }
    }
    post.reverse();
    post
}
