//! BackendStage `arm-branch-opt`: branch clean-up on allocated code.
//!
//! 1. *Threading*: a branch to a block that consists of a lone `b X` (typically an edge
//!    block whose moves all vanished) goes to `X` directly (following chains, stopping at
//!    cycles of such blocks).
//! 2. *Tail duplication*: a jump to a small block ending in a conditional branch (typically
//!    a loop header: a compare, perhaps the computation of the bound) is replaced by a copy
//!    of that block. At the bottom of a `while` loop this turns `b header` + header into the
//!    header's instructions + `b<cc>` back to the body (one branch less per iteration).
//!    A jump to the block that follows in the layout is left alone: it becomes a
//!    fall-through, and a copy would only move the header below the loop body (a header
//!    with an exit of its own then costs an extra `b` per iteration).
//!    Executing a copy of a block is executing the block: the registers are the same at the
//!    end of the jumping block as at the start of its target, and the copy branches to the
//!    same places.
//! 3. Blocks no branch refers to any more (other than the entry) are deleted. Before this
//!    stage every block ends in an explicit branch or return, so nothing falls into them.
//! 4. *Layout*: blocks are chained so that a successor follows its block where possible:
//!    the block that followed in the original order if it is a successor, else the
//!    successor that came first in the original order (loop bodies usually precede their
//!    exits), else the next unplaced block in the original order.
//! 5. *Fall-through*: a `b` to the next block in layout is removed; a two-way conditional
//!    branch whose one target is the next block becomes a single `b<cc>` (with the
//!    condition inverted when the taken side is the next block).

use std::collections::BTreeSet;

use regalloc2::Block;
use rustc_hash::FxHashMap;

use super::mir::{Cond, MInst, PFunction};

/// Largest block (instructions before the branch) copied into a jumping predecessor.
const MAX_DUPLICATED: usize = 4;

pub fn run(pf: &mut PFunction, faults: &crate::faults::FaultSet) {
    let float_invert_wrong = faults.is_on(crate::faults::ARM_BRANCH_OPT_FLOAT_INVERT);
    let Some(&(entry, _)) = pf.blocks.first() else {
        return;
    };
    let index: FxHashMap<Block, usize> = pf.blocks.iter().enumerate().map(|(i, (b, _))| (*b, i)).collect();
    let lone_jump = |b: Block| -> Option<Block> {
        let (_, block) = &pf.blocks[*index.get(&b)?];
        match block.insts.as_slice() {
            [MInst::Jump { target }] if b != entry => Some(*target),
            _ => None,
        }
    };
    let resolve = |mut b: Block| {
        let mut seen = BTreeSet::new();
        while let Some(next) = lone_jump(b) {
            if !seen.insert(b) {
                break;
            }
            b = next;
        }
        b
    };
    let compare_block = |b: Block| -> Option<Vec<MInst>> {
        let (_, block) = &pf.blocks[*index.get(&b)?];
        let body = &block.insts[..block.insts.len().checked_sub(1)?];
        let small = body.len() <= MAX_DUPLICATED && !body.is_empty();
        let plain = body.iter().all(|i| !matches!(i, MInst::Call { .. } | MInst::Args { .. } | MInst::Ret { .. }));
        match block.insts.last() {
            Some(MInst::CondBr { .. }) if b != entry && small && plain => Some(block.insts.clone()),
            _ => None,
        }
    };
    let mut new_targets: Vec<Vec<MInst>> = Vec::new();
    for (i, (_, block)) in pf.blocks.iter().enumerate() {
        let mut insts = block.insts.clone();
        // A jump to the block that follows costs nothing (it falls through); a copy there
        // would only pull the loop body up behind the copy and push the header below it.
        let next = pf.blocks.get(i + 1).map(|(b, _)| *b);
        if let Some(MInst::Jump { target }) = insts.last()
            && Some(resolve(*target)) != next
            && let Some(copy) = compare_block(resolve(*target))
        {
            insts.pop();
            insts.extend(copy);
        }
        if let Some(last) = insts.last_mut() {
            match last {
                MInst::Jump { target } => *target = resolve(*target),
                MInst::CondBr { cc, taken, not_taken } => {
                    let (t, n) = (resolve(*taken), resolve(*not_taken));
                    *last = if t == n {
                        MInst::Jump { target: t }
                    } else {
                        MInst::CondBr { cc: *cc, taken: t, not_taken: n }
                    };
                }
                _ => {}
            }
        }
        new_targets.push(insts);
    }
    for ((_, block), insts) in pf.blocks.iter_mut().zip(new_targets) {
        block.insts = insts;
    }

    let mut referenced: BTreeSet<Block> = BTreeSet::new();
    referenced.insert(entry);
    for (_, block) in &pf.blocks {
        match block.insts.last() {
            Some(MInst::Jump { target }) => {
                referenced.insert(*target);
            }
            Some(MInst::CondBr { taken, not_taken, .. }) => {
                referenced.insert(*taken);
                referenced.insert(*not_taken);
            }
            _ => {}
        }
    }
    pf.blocks.retain(|(b, _)| referenced.contains(b));
    reorder(pf);

    for i in 0..pf.blocks.len() {
        let next = pf.blocks.get(i + 1).map(|(b, _)| *b);
        let insts = &mut pf.blocks[i].1.insts;
        let Some(last) = insts.last().cloned() else {
            continue;
        };
        match last {
            MInst::Jump { target } if Some(target) == next => {
                insts.pop();
            }
            MInst::CondBr { cc, taken, not_taken } if Some(not_taken) == next => {
                insts.pop();
                insts.push(MInst::BranchCond { cc, target: taken });
            }
            MInst::CondBr { cc, taken, not_taken } if Some(taken) == next => {
                insts.pop();
                let inverse = if float_invert_wrong && cc == Cond::Mi { Cond::Ge } else { cc.invert() };
                insts.push(MInst::BranchCond { cc: inverse, target: not_taken });
            }
            MInst::CondBr { cc, taken, not_taken } => {
                insts.pop();
                insts.push(MInst::BranchCond { cc, target: taken });
                insts.push(MInst::Jump { target: not_taken });
            }
            _ => {}
        }
    }
}

fn reorder(pf: &mut PFunction) {
    let n = pf.blocks.len();
    let pos: FxHashMap<Block, usize> = pf.blocks.iter().enumerate().map(|(i, (b, _))| (*b, i)).collect();
    let succs: Vec<Vec<usize>> = pf
        .blocks
        .iter()
        .map(|(_, b)| match b.insts.last() {
            Some(MInst::Jump { target }) => vec![pos[target]],
            Some(MInst::CondBr { taken, not_taken, .. }) => vec![pos[taken], pos[not_taken]],
            _ => vec![],
        })
        .collect();
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut cur = 0;
    loop {
        placed[cur] = true;
        order.push(cur);
        let candidates: Vec<usize> = succs[cur].iter().copied().filter(|&s| !placed[s]).collect();
        let next = if candidates.contains(&(cur + 1)) {
            Some(cur + 1)
        } else {
            candidates.iter().copied().min().or_else(|| (0..n).find(|&i| !placed[i]))
        };
        match next {
            Some(b) => cur = b,
            None => break,
        }
    }
    let mut slots: Vec<Option<(Block, super::mir::PBlock)>> =
        std::mem::take(&mut pf.blocks).into_iter().map(Some).collect();
    pf.blocks = order.into_iter().filter_map(|i| slots[i].take()).collect();
}
