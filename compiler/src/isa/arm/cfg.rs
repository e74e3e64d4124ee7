//! Control-flow facts about an IR function that instruction selection needs.
//!
//! * The *effective* successors of each block: a `br` on a constant (or `undef`) condition
//!   or with two equal targets is selected as a jump, so it has one successor.
//! * Reachability from the entry over those edges (unreachable blocks are not selected).
//! * Loop nesting from dominators (Cooper–Harvey–Kennedy iteration over reverse post-order)
//!   and back edges (`b → h` with `h` dominating `b`); a natural loop is `h` plus every block
//!   reaching a latch without passing `h`.
//! * *Hoisting points* for each block inside a loop: the immediate dominator of the header of
//!   each loop containing it, outermost first. Constants and addresses that need
//!   instructions to materialise are computed at one of them once instead of on every
//!   iteration (see `isel::materialise` for which). A point is kept only when it lies in
//!   exactly the loops enclosing its loop (in code from structured sources the idom of a
//!   header is its preheader), so it runs once per entry into that loop; it dominates the
//!   whole loop.

use cranelift_entity::SecondaryMap;
use smallvec::SmallVec;

use super::BackendError;
use crate::ir::{Block, Const, Function, Opcode, ValueDef};

/// Where loop-invariant materialisations of a block's instructions may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hoist {
    /// At the end of this block (before its terminator).
    Block(Block),
    /// In the synthetic entry block (the IR entry block heads a loop).
    Entry,
}

pub struct CfgInfo {
    /// Reachable blocks in layout order; the first is the entry.
    pub order: Vec<Block>,
    /// Reachable blocks in reverse post-order (every block after its dominators).
    pub rpo: Vec<Block>,
    pub reachable: SecondaryMap<Block, bool>,
    pub succs: SecondaryMap<Block, SmallVec<[Block; 2]>>,
    /// One entry per incoming edge.
    pub preds: SecondaryMap<Block, SmallVec<[Block; 4]>>,
    pub loop_depth: SecondaryMap<Block, u32>,
    /// Headers of the loops containing each block, outermost first (`loop_depth` entries).
    pub loops: SecondaryMap<Block, SmallVec<[Block; 4]>>,
    /// Hoisting points, outermost first (empty outside loops).
    pub hoist: SecondaryMap<Block, SmallVec<[Hoist; 4]>>,
    /// Immediate dominators (`None` for the entry block).
    pub idom: SecondaryMap<Block, Option<Block>>,
}

/// The successors of `b` after folding constant and degenerate branches.
pub fn effective_succs(func: &Function, b: Block) -> Result<SmallVec<[Block; 2]>, BackendError> {
    let term = func
        .terminator(b)
        .ok_or_else(|| BackendError::InvalidIr(format!("{}: block {b} has no terminator", func.name)))?;
    let targets = func.targets(term);
    Ok(match func.opcode(term) {
        Opcode::Jump => SmallVec::from_slice(&targets[..1]),
        Opcode::Br => {
            let cond = func.args(term)[0];
            match func.value_def(cond) {
                ValueDef::Const(Const::Bool(c)) => SmallVec::from_slice(&[targets[usize::from(!c)]]),
                ValueDef::Undef => SmallVec::from_slice(&[targets[1]]),
                _ if targets[0] == targets[1] => SmallVec::from_slice(&targets[..1]),
                _ => SmallVec::from_slice(&targets[..2]),
            }
        }
        _ => SmallVec::new(),
    })
}

impl CfgInfo {
    pub fn compute(func: &Function) -> Result<CfgInfo, BackendError> {
        if func.layout().is_empty() {
            return Err(BackendError::InvalidIr(format!("{}: function has no blocks", func.name)));
        }
        let entry = func.entry();
        let mut succs: SecondaryMap<Block, SmallVec<[Block; 2]>> = SecondaryMap::new();
        for &b in func.layout() {
            let s = effective_succs(func, b)?;
            if let Some(&bad) = s.iter().find(|&&t| !func.is_block_live(t)) {
                return Err(BackendError::InvalidIr(format!("{}: {b} branches to removed block {bad}", func.name)));
            }
            succs[b] = s;
        }

        // Depth-first search for reachability and post-order.
        let mut reachable: SecondaryMap<Block, bool> = SecondaryMap::new();
        let mut postorder = Vec::new();
        let mut stack: Vec<(Block, usize)> = vec![(entry, 0)];
        reachable[entry] = true;
        while let Some(&mut (b, ref mut i)) = stack.last_mut() {
            if let Some(&s) = succs[b].get(*i) {
                *i += 1;
                if !reachable[s] {
                    reachable[s] = true;
                    stack.push((s, 0));
                }
            } else {
                postorder.push(b);
                stack.pop();
            }
        }
        let order: Vec<Block> = func.layout().iter().copied().filter(|&b| reachable[b]).collect();
        let mut preds: SecondaryMap<Block, SmallVec<[Block; 4]>> = SecondaryMap::new();
        for &b in &order {
            for &s in &succs[b] {
                preds[s].push(b);
            }
        }

        // Dominators.
        let rpo: Vec<Block> = postorder.iter().rev().copied().collect();
        let mut rpo_index: SecondaryMap<Block, u32> = SecondaryMap::new();
        for (i, &b) in rpo.iter().enumerate() {
            rpo_index[b] = i as u32;
        }
        let mut idom: SecondaryMap<Block, Option<Block>> = SecondaryMap::new();
        idom[entry] = Some(entry);
        let mut changed = true;
        while changed {
            changed = false;
            for &b in rpo.iter().skip(1) {
                let mut new_idom: Option<Block> = None;
                for &p in &preds[b] {
                    if idom[p].is_none() {
                        continue;
                    }
                    new_idom = Some(match new_idom {
                        None => p,
                        Some(cur) => intersect(&idom, &rpo_index, p, cur),
                    });
                }
                if new_idom.is_some() && idom[b] != new_idom {
                    idom[b] = new_idom;
                    changed = true;
                }
            }
        }
        let dominates = |a: Block, mut b: Block| loop {
            if a == b {
                return true;
            }
            match idom[b] {
                Some(p) if p != b => b = p,
                _ => return false,
            }
        };

        // Natural loops.
        let mut loop_depth: SecondaryMap<Block, u32> = SecondaryMap::new();
        let mut loops: SecondaryMap<Block, SmallVec<[Block; 4]>> = SecondaryMap::new();
        for &h in &rpo {
            let latches: Vec<Block> = preds[h].iter().copied().filter(|&p| dominates(h, p)).collect();
            if latches.is_empty() {
                continue;
            }
            let mut in_loop: SecondaryMap<Block, bool> = SecondaryMap::new();
            in_loop[h] = true;
            let mut work = latches;
            while let Some(b) = work.pop() {
                if !in_loop[b] {
                    in_loop[b] = true;
                    work.extend(preds[b].iter().copied());
                }
            }
            for &b in &rpo {
                if in_loop[b] {
                    loop_depth[b] += 1;
                    // Headers are visited in RPO, so `loops[b]` lists the outermost first.
                    loops[b].push(h);
                }
            }
        }
        let mut hoist: SecondaryMap<Block, SmallVec<[Hoist; 4]>> = SecondaryMap::new();
        for &b in &rpo {
            hoist[b] = loops[b]
                .iter()
                .enumerate()
                .filter_map(|(depth, &h)| {
                    if h == entry {
                        return (depth == 0).then_some(Hoist::Entry);
                    }
                    let p = idom[h]?;
                    (loops[p][..] == loops[b][..depth]).then_some(Hoist::Block(p))
                })
                .collect();
        }
        idom[entry] = None;
        Ok(CfgInfo { order, rpo, reachable, succs, preds, loop_depth, loops, hoist, idom })
    }

    /// The number of loops containing both `a` and `b`.
    pub fn common_loop_depth(&self, a: Block, b: Block) -> usize {
        self.loops[a].iter().zip(self.loops[b].iter()).take_while(|(x, y)| x == y).count()
    }
}

fn intersect(
    idom: &SecondaryMap<Block, Option<Block>>,
    rpo_index: &SecondaryMap<Block, u32>,
    mut a: Block,
    mut b: Block,
) -> Block {
    while a != b {
        while rpo_index[a] > rpo_index[b] {
            a = idom[a].unwrap_or(a);
        }
        while rpo_index[b] > rpo_index[a] {
            b = idom[b].unwrap_or(b);
        }
    }
    a
}
