//! The control-flow graph of a function: per-edge predecessor and successor lists, a
//! reverse post-order of the reachable blocks, and reachability.
//!
//! Edges are counted with multiplicity: `br %c, bb1, bb1` gives `bb1` two predecessor entries
//! for the same block, matching the verifier's rule that a phi has one incoming entry per
//! edge. Predecessor lists are ordered by the predecessor's layout position, then by operand
//! position in its terminator.
//!
//! The reverse post-order comes from an iterative depth-first search from the entry that
//! visits successors in terminator operand order (no recursion, so huge functions cannot
//! overflow the native stack).

use cranelift_entity::SecondaryMap;
use smallvec::SmallVec;

use crate::ir::{Block, Function};

/// `rpo_number` of a block the search never reached.
const UNREACHED: u32 = u32::MAX;

/// A map with `default` for every one of `n` block slots (indexing past them still works).
fn sized_map<V: Clone>(default: V, n: usize) -> SecondaryMap<Block, V> {
    let mut map = SecondaryMap::with_default(default);
    map.resize(n);
    map
}

/// A map of `n` empty lists (indexing past them still works). Built from a vector of fresh
/// lists: [`sized_map`] would clone the default into every slot, and cloning even an empty
/// `SmallVec` goes through its generic `extend` (the CFG is rebuilt after most passes).
fn empty_lists<V: Clone + Default>(n: usize) -> SecondaryMap<Block, V> {
    SecondaryMap::from(std::iter::repeat_with(V::default).take(n).collect::<Vec<V>>())
}

#[derive(Clone, Debug)]
pub struct ControlFlowGraph {
    succs: SecondaryMap<Block, SmallVec<[Block; 2]>>,
    preds: SecondaryMap<Block, SmallVec<[Block; 4]>>,
    rpo: Vec<Block>,
    rpo_number: SecondaryMap<Block, u32>,
    entry: Option<Block>,
    cfg_epoch: u64,
}

impl ControlFlowGraph {
    pub fn compute(func: &Function) -> ControlFlowGraph {
        // Sized once for every block slot: growing the maps one index at a time as edges are
        // found reallocated and moved them repeatedly (the CFG is rebuilt after most passes).
        let n = func.num_blocks();
        let mut succs: SecondaryMap<Block, SmallVec<[Block; 2]>> = empty_lists(n);
        let mut preds: SecondaryMap<Block, SmallVec<[Block; 4]>> = empty_lists(n);
        for &b in func.layout() {
            for &s in func.successors(b) {
                if func.is_block_live(s) {
                    succs[b].push(s);
                    preds[s].push(b);
                }
            }
        }
        let entry = func.layout().first().copied();
        let mut cfg = ControlFlowGraph {
            succs,
            preds,
            rpo: Vec::new(),
            rpo_number: sized_map(UNREACHED, n),
            entry,
            cfg_epoch: func.cfg_epoch(),
        };
        if let Some(entry) = entry {
            cfg.compute_rpo(entry, n);
        }
        cfg
    }

    fn compute_rpo(&mut self, entry: Block, num_blocks: usize) {
        // Explicit DFS stack of (block, index of the next successor to visit).
        let mut visited: SecondaryMap<Block, bool> = sized_map(false, num_blocks);
        // Both hold at most every block once: sized for that rather than grown.
        let mut postorder = Vec::with_capacity(num_blocks);
        let mut stack: Vec<(Block, usize)> = Vec::with_capacity(num_blocks);
        stack.push((entry, 0));
        visited[entry] = true;
        while let Some(&mut (b, ref mut next)) = stack.last_mut() {
            if let Some(&s) = self.succs[b].get(*next) {
                *next += 1;
                if !visited[s] {
                    visited[s] = true;
                    stack.push((s, 0));
                }
            } else {
                postorder.push(b);
                stack.pop();
            }
        }
        postorder.reverse();
        for (i, &b) in postorder.iter().enumerate() {
            self.rpo_number[b] = i as u32;
        }
        self.rpo = postorder;
    }

    /// The epoch of the function when this was computed.
    pub fn cfg_epoch(&self) -> u64 {
        self.cfg_epoch
    }

    /// The entry block (`None` for a function without blocks).
    pub fn entry(&self) -> Option<Block> {
        self.entry
    }

    /// Successors, one per edge, in terminator operand order.
    pub fn succs(&self, b: Block) -> &[Block] {
        &self.succs[b]
    }

    /// Predecessors, one per edge (see the module documentation for the order).
    pub fn preds(&self, b: Block) -> &[Block] {
        &self.preds[b]
    }

    /// Distinct predecessors, in first-occurrence order.
    pub fn unique_preds(&self, b: Block) -> SmallVec<[Block; 4]> {
        let mut out: SmallVec<[Block; 4]> = SmallVec::new();
        for &p in &self.preds[b] {
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }

    /// Reachable blocks in reverse post-order (entry first).
    pub fn rpo(&self) -> &[Block] {
        &self.rpo
    }

    /// Reachable blocks in post-order.
    pub fn postorder(&self) -> impl DoubleEndedIterator<Item = Block> + '_ {
        self.rpo.iter().rev().copied()
    }

    /// Position of `b` in [`ControlFlowGraph::rpo`], `None` if unreachable.
    pub fn rpo_number(&self, b: Block) -> Option<u32> {
        let n = self.rpo_number[b];
        (n != UNREACHED).then_some(n)
    }

    pub fn is_reachable(&self, b: Block) -> bool {
        self.rpo_number[b] != UNREACHED
    }

    /// True when the edge `from → to` goes to a block not later in reverse post-order: every
    /// cycle contains at least one such edge. (Back edges of natural loops are retreating;
    /// a retreating edge whose target does not dominate its source marks an irreducible cycle.)
    pub fn is_retreating(&self, from: Block, to: Block) -> bool {
        match (self.rpo_number(from), self.rpo_number(to)) {
            (Some(f), Some(t)) => t <= f,
            _ => false,
        }
    }
}
