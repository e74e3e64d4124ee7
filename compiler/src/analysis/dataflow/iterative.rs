//! The classic iterative solver: a worklist visited in reverse post-order of the flow graph.
//!
//! Every `OUT` starts at the identity of the meet (∅ for union, all facts for intersection:
//! the optimistic start, giving the least resp. greatest fixed point), the root's `IN` is the
//! boundary value. A node is recomputed when the `OUT` of one of its predecessors changed
//! since it was last computed; sweeps go over the reverse post-order and skip clean nodes, so
//! an acyclic graph is solved in one sweep and a loop nest of depth d in about d + 2.
//! Transfer functions are monotone and the lattice finite, so it terminates.

use fixedbitset::FixedBitSet;

use super::Meet;
use super::graph::{FlowGraph, ROOT};

/// `IN` of every flow-graph node (index = node).
pub fn solve(g: &FlowGraph) -> Vec<FixedBitSet> {
    let n = g.len();
    let top = {
        let mut s = FixedBitSet::with_capacity(g.num_facts);
        if g.meet == Meet::Intersection {
            s.insert_range(..);
        }
        s
    };
    let mut ins = vec![top.clone(); n];
    let mut outs = vec![top; n];
    ins[ROOT as usize] = g.boundary.clone();
    let order = g.rpo();
    let mut dirty = FixedBitSet::with_capacity(n);
    dirty.insert_range(..);
    let mut scratch = FixedBitSet::with_capacity(g.num_facts);
    loop {
        let mut any = false;
        for &node in &order {
            let i = node as usize;
            if !dirty.contains(i) {
                continue;
            }
            dirty.set(i, false);
            if node != ROOT {
                let mut preds = g.preds[i].iter();
                let Some(&first) = preds.next() else { continue };
                scratch.clone_from(&outs[first as usize]);
                for &p in preds {
                    match g.meet {
                        Meet::Union => scratch.union_with(&outs[p as usize]),
                        Meet::Intersection => scratch.intersect_with(&outs[p as usize]),
                    }
                }
                ins[i].clone_from(&scratch);
            }
            scratch.clone_from(&ins[i]);
            g.transfer[i].apply_in_place(&mut scratch);
            if scratch != outs[i] {
                std::mem::swap(&mut outs[i], &mut scratch);
                for &s in &g.succs[i] {
                    dirty.insert(s as usize);
                    any = true;
                }
            }
        }
        if !any && dirty.is_clear() {
            return ins;
        }
    }
}
