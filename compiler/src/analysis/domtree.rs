//! The dominator tree, computed with the iterative algorithm of Cooper, Harvey and Kennedy
//! ("A Simple, Fast Dominance Algorithm", 2001).
//!
//! Design: blocks are renamed to their reverse-post-order numbers, so the immediate-dominator
//! array is a plain `Vec<u32>` and the "intersect" walk compares numbers (a dominator always
//! has a smaller RPO number than the blocks it dominates). The fixpoint loop visits blocks in
//! RPO; for reducible graphs it converges after two passes.
//!
//! Queries are O(1): a depth-first preorder numbering of the tree gives every block the
//! interval `[pre, last]` of its subtree, and `a` dominates `b` iff `b`'s number lies in `a`'s
//! interval.
//!
//! Unreachable blocks are not in the tree. Following the usual convention (as in LLVM), an
//! unreachable block is dominated by every block — there is no path from the entry to it, so
//! "every path passes through `a`" holds vacuously — while it dominates nothing but itself.
//! The verifier therefore does not check SSA dominance inside unreachable code.

use cranelift_entity::{EntityRef, SecondaryMap};
use cranelift_entity::packed_option::PackedOption;
use smallvec::SmallVec;

use super::cfg::ControlFlowGraph;
use crate::ir::{Block, Function, Inst, Opcode};

const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
pub struct DomTree {
    idom: SecondaryMap<Block, PackedOption<Block>>,
    children: SecondaryMap<Block, SmallVec<[Block; 4]>>,
    preorder: Vec<Block>,
    /// Preorder number, `NONE` for unreachable blocks.
    pre: SecondaryMap<Block, u32>,
    /// Largest preorder number in the block's subtree.
    last: SecondaryMap<Block, u32>,
    depth: SecondaryMap<Block, u32>,
    cfg_epoch: u64,
}

impl DomTree {
    pub fn compute(cfg: &ControlFlowGraph) -> DomTree {
        let rpo = cfg.rpo();
        let n = rpo.len();
        // idom by RPO number; the entry (number 0) is its own idom during the iteration.
        let mut idom = vec![NONE; n];
        if n > 0 {
            idom[0] = 0;
        }
        let mut changed = true;
        while changed {
            changed = false;
            for (i, &b) in rpo.iter().enumerate().skip(1) {
                let mut new_idom = NONE;
                for &p in cfg.preds(b) {
                    let Some(p) = cfg.rpo_number(p) else { continue };
                    if idom[p as usize] == NONE {
                        continue; // not processed yet in this pass
                    }
                    new_idom = if new_idom == NONE { p } else { intersect(&idom, p, new_idom) };
                }
                if idom[i] != new_idom {
                    idom[i] = new_idom;
                    changed = true;
                }
            }
        }

        // Every map sized once for the reachable blocks (the only ones written): growing them
        // one index at a time as blocks are visited reallocated them repeatedly. Children
        // lists come from a vector of fresh lists rather than by cloning an empty default.
        let slots = rpo.iter().map(|b| b.index() + 1).max().unwrap_or(0);
        let sized = |default: u32| {
            let mut map = SecondaryMap::with_default(default);
            map.resize(slots);
            map
        };
        let mut tree = DomTree {
            idom: {
                let mut map = SecondaryMap::new();
                map.resize(slots);
                map
            },
            children: SecondaryMap::from(std::iter::repeat_with(SmallVec::new).take(slots).collect::<Vec<_>>()),
            preorder: Vec::with_capacity(n),
            pre: sized(NONE),
            last: sized(NONE),
            depth: sized(0),
            cfg_epoch: cfg.cfg_epoch(),
        };
        for (i, &b) in rpo.iter().enumerate().skip(1) {
            let parent = rpo[idom[i] as usize];
            tree.idom[b] = parent.into();
            // Children end up in RPO order because `b` is visited in RPO.
            tree.children[parent].push(b);
        }
        if let Some(&entry) = rpo.first() {
            tree.number_preorder(entry, n);
        }
        tree
    }

    /// Iterative DFS over the tree assigning preorder intervals and depths.
    fn number_preorder(&mut self, entry: Block, num_reachable: usize) {
        // At most every reachable block once: sized for that rather than grown.
        let mut stack: Vec<(Block, usize)> = Vec::with_capacity(num_reachable);
        stack.push((entry, 0));
        self.pre[entry] = 0;
        self.preorder.push(entry);
        while let Some(&mut (b, ref mut next)) = stack.last_mut() {
            if let Some(&c) = self.children[b].get(*next) {
                *next += 1;
                self.pre[c] = self.preorder.len() as u32;
                self.depth[c] = self.depth[b] + 1;
                self.preorder.push(c);
                stack.push((c, 0));
            } else {
                self.last[b] = self.preorder.len() as u32 - 1;
                stack.pop();
            }
        }
    }

    /// The epoch of the function when the underlying CFG was computed.
    pub fn cfg_epoch(&self) -> u64 {
        self.cfg_epoch
    }

    /// Immediate dominator; `None` for the entry and for unreachable blocks.
    pub fn idom(&self, b: Block) -> Option<Block> {
        self.idom[b].expand()
    }

    /// Blocks immediately dominated by `b`, in reverse post-order.
    pub fn children(&self, b: Block) -> &[Block] {
        &self.children[b]
    }

    /// Reachable blocks in dominator-tree preorder (every block after its dominators;
    /// siblings in reverse post-order).
    pub fn preorder(&self) -> &[Block] {
        &self.preorder
    }

    pub fn is_reachable(&self, b: Block) -> bool {
        self.pre[b] != NONE
    }

    /// Depth in the tree (entry 0). Unreachable blocks report 0.
    pub fn depth(&self, b: Block) -> u32 {
        self.depth[b]
    }

    /// `a` dominates `b` (reflexive). True for every `a` when `b` is unreachable.
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        if a == b {
            return true;
        }
        let pb = self.pre[b];
        if pb == NONE {
            return true;
        }
        let pa = self.pre[a];
        pa != NONE && pa <= pb && pb <= self.last[a]
    }

    /// `a` dominates `b` and `a != b`.
    pub fn strictly_dominates(&self, a: Block, b: Block) -> bool {
        a != b && self.dominates(a, b)
    }

    /// The nearest block dominating both `a` and `b` (both must be reachable).
    pub fn common_dominator(&self, mut a: Block, b: Block) -> Option<Block> {
        if !self.is_reachable(a) || !self.is_reachable(b) {
            return None;
        }
        while !self.dominates(a, b) {
            a = self.idom(a)?;
        }
        Some(a)
    }

    /// `def` dominates `user` as instructions: the result of `def` is available when `user`
    /// executes. Within a block this is program order (`def` strictly before `user`); across
    /// blocks it is block dominance. A phi `user` is treated like any instruction of its block
    /// — for a phi *operand* use [`DomTree::dominates_phi_use`]. Both must be placed.
    pub fn inst_dominates(&self, func: &Function, def: Inst, user: Inst) -> bool {
        let (Some(db), Some(ub)) = (func.inst_block(def), func.inst_block(user)) else {
            return false;
        };
        if db == ub {
            func.inst_seq(def) < func.inst_seq(user)
        } else {
            self.dominates(db, ub)
        }
    }

    /// The value defined by `def` is available at the end of `incoming` (the predecessor a
    /// phi operand flows from): `def`'s block dominates `incoming`.
    pub fn dominates_phi_use(&self, func: &Function, def: Inst, incoming: Block) -> bool {
        func.inst_block(def).is_some_and(|db| self.dominates(db, incoming))
    }

    /// Whether the operand `idx` of `user` is dominated by `def`, using the phi rule for
    /// phis and the instruction rule otherwise.
    pub fn dominates_operand(&self, func: &Function, def: Inst, user: Inst, idx: usize) -> bool {
        if func.opcode(user) == Opcode::Phi {
            match func.targets(user).get(idx) {
                Some(&incoming) => self.dominates_phi_use(func, def, incoming),
                None => false,
            }
        } else {
            self.inst_dominates(func, def, user)
        }
    }
}

/// Walks two RPO numbers up the (partial) idom array to their common ancestor.
fn intersect(idom: &[u32], mut a: u32, mut b: u32) -> u32 {
    while a != b {
        while a > b {
            a = idom[a as usize];
        }
        while b > a {
            b = idom[b as usize];
        }
    }
    a
}
