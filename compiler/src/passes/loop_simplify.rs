//! `loop-simplify` (catalogue: LoopSimplify): puts every natural loop into canonical form.
//!
//! A canonical loop has
//! * a *preheader*: the header's only predecessor outside the loop, whose only successor is
//!   the header (a place to put hoisted code that runs once per entry into the loop);
//! * a *single latch*: exactly one block inside the loop branches back to the header;
//! * *dedicated exits*: every block outside the loop that a loop block branches to has only
//!   predecessors inside the loop (code placed there runs only when leaving this loop).
//!
//! Why: `licm`, `loop-rotate`, the unrollers and `iv-reduce` all rely on these three facts,
//! and the counted-loop recogniser ([`crate::analysis::counted`]) expects them.
//!
//! How: each missing property is established by *splitting predecessors*: a new block that
//! only jumps to the target takes over a set of incoming edges (all edges from outside the
//! loop into the header; all back edges; all edges from inside the loop into one exit block).
//! Phis of the target that had entries for those edges get one entry for the new block: the
//! common value when the moved entries agree, otherwise a new phi in the new block that
//! carries the moved entries unchanged (so a header with several outside predecessors ends up
//! with a preheader phi and a header phi, as the issue describes). Moving every edge of a
//! predecessor at once keeps the rule that a phi has one entry per incoming edge.
//!
//! Loops are fixed innermost first; after a loop changes the loop forest is recomputed (new
//! blocks belong to enclosing loops), so the pass is quadratic only in the number of loops
//! that need fixing. Irreducible cycles are not natural loops and are left alone; unreachable
//! predecessors of a header count as outside predecessors (their edges move to the
//! preheader like any other).

use smallvec::SmallVec;

use super::{FunctionCx, FunctionPass};
use crate::analysis::{ControlFlowGraph, Loop, LoopForest};
use crate::ir::{Block, Function, Inst, InstData, Opcode, Value};

pub struct LoopSimplify;

impl FunctionPass for LoopSimplify {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let mut changed = false;
        // Each round fixes one loop; every fix adds blocks that are canonical by
        // construction, so the number of rounds is bounded by three per loop.
        loop {
            let cfg = cx.analyses.cfg(func);
            let loops = cx.analyses.loops(func);
            let Some((l, fix)) = loops.loops_inner_first().find_map(|l| needed_fix(func, &cfg, &loops, l).map(|f| (l, f)))
            else {
                break;
            };
            apply_fix(func, &cfg, &loops, l, fix, cx);
            changed = true;
        }
        changed
    }
}

#[derive(Clone, Copy, Debug)]
enum Fix {
    Preheader,
    SingleLatch,
    DedicatedExit(Block),
}

/// The first canonical-form property loop `l` lacks.
fn needed_fix(func: &Function, cfg: &ControlFlowGraph, loops: &LoopForest, l: Loop) -> Option<Fix> {
    if loops.preheader(cfg, l).is_none() {
        return Some(Fix::Preheader);
    }
    if loops.latches(l).len() > 1 {
        return Some(Fix::SingleLatch);
    }
    let _ = func;
    loops
        .exit_blocks(l)
        .iter()
        .copied()
        .find(|&e| cfg.preds(e).iter().any(|&p| !loops.contains(l, p)))
        .map(Fix::DedicatedExit)
}

fn apply_fix(func: &mut Function, cfg: &ControlFlowGraph, loops: &LoopForest, l: Loop, fix: Fix, cx: &mut FunctionCx<'_>) {
    let header = loops.header(l);
    match fix {
        Fix::Preheader => {
            let outside: SmallVec<[Block; 4]> =
                cfg.unique_preds(header).into_iter().filter(|&p| !loops.contains(l, p)).collect();
            split_predecessors(func, header, &outside, header);
            cx.count("preheaders_inserted", 1);
        }
        Fix::SingleLatch => {
            let latches: SmallVec<[Block; 4]> = loops.latches(l).iter().copied().collect();
            let after = *loops.blocks(l).last().unwrap_or(&header);
            let before = next_in_layout(func, after);
            split_predecessors(func, header, &latches, before.unwrap_or(header));
            cx.count("latches_merged", 1);
        }
        Fix::DedicatedExit(exit) => {
            let inside: SmallVec<[Block; 4]> =
                cfg.unique_preds(exit).into_iter().filter(|&p| loops.contains(l, p)).collect();
            split_predecessors(func, exit, &inside, exit);
            cx.count("exits_dedicated", 1);
        }
    }
}

fn next_in_layout(func: &Function, b: Block) -> Option<Block> {
    let layout = func.layout();
    let pos = layout.iter().position(|&x| x == b)?;
    layout.get(pos + 1).copied()
}

/// Creates a block that jumps to `target` and takes over every edge from the (distinct)
/// blocks `preds` into `target`; the phis of `target` are rewritten as the module
/// documentation describes. The new block is placed just before `place_before` in the layout.
/// Returns the new block.
pub(crate) fn split_predecessors(func: &mut Function, target: Block, preds: &[Block], place_before: Block) -> Block {
    let new_block = func.create_block();
    let mut layout = func.layout().to_vec();
    layout.pop();
    let pos = layout.iter().position(|&b| b == place_before).unwrap_or(layout.len());
    layout.insert(pos, new_block);
    func.set_layout(layout);

    let phis: SmallVec<[Inst; 8]> = func.block_phis(target).collect();
    for phi in phis {
        let moved: SmallVec<[(Block, Value); 4]> =
            func.inst(phi).phi_incoming().filter(|(b, _)| preds.contains(b)).collect();
        let Some(&(_, first)) = moved.first() else { continue };
        let value = if moved.iter().all(|&(_, v)| v == first) {
            first
        } else {
            let ty = func.value_type(func.result(phi).expect("phi has a result"));
            let (_, v) = func.append(new_block, InstData::phi(ty, &moved));
            v.expect("phi has a result")
        };
        let mut i = 0;
        while i < func.targets(phi).len() {
            if preds.contains(&func.targets(phi)[i]) {
                func.remove_phi_incoming(phi, i);
            } else {
                i += 1;
            }
        }
        func.push_phi_incoming(phi, new_block, value);
    }
    func.append(new_block, InstData::jump(target));
    for &p in preds {
        func.retarget_edge(p, target, new_block);
    }
    debug_assert!(func.block_phis(new_block).all(|p| func.opcode(p) == Opcode::Phi));
    new_block
}
