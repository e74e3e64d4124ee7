//! `recursive-inline`: inlines a self-recursive function into itself a few levels deep
//! (gcc's recursive inlining).
//!
//! Why: `inline` never copies a recursive function, so in a double recursion (`fib`, a tree
//! of float evaluations, `hanoi`) every node of the call tree pays a call: argument moves,
//! `bl`, a frame with saved registers, the return. With the self-calls replaced by copies of
//! the body, level by level, each remaining call does the work of a whole subtree of nodes
//! (`2^levels` of them in a double recursion) and the copies see the arguments they get:
//! a copy's base-case test is often decided by the conditions that led to it (in
//! `cheb(n)`, past `n == 0` and `n == 1`, the copy of `cheb(n - 1)` tests `n - 1 == 0`),
//! which `constraint-elim` and `sccp` then fold away.
//!
//! Which functions: a function other than `main` that calls itself directly, of at most
//! [`MAX_BODY`] instructions, whose entry block has no predecessors (the copies are entered
//! from the call only) and that has no `alloca`. A copy's stack slots would join the frame
//! (`inline` moves them to the entry block): in a tree recursion a frame would then hold the
//! arrays of every copy while only one path of copies is active, so the stack could grow by
//! far more than the frames saved. A function the configuration pins outlined
//! (`--keep-outlined`) is left alone.
//!
//! How: the body as it stands is kept as the callee of every copy. The self-calls are inlined
//! breadth first — the function's own sites, then the self-calls inside those copies, and so
//! on for at most [`MAX_LEVELS`] levels — while the function stays within
//! `min(MAX_GROWN, GROWTH_FACTOR × original size)` instructions (and, in a function with a
//! loop of several exits, makes at most [`MAX_COPIES_WITH_EXITING_LOOPS`] copies); each copy
//! is made by
//! [`super::inline::inline_call`] (its documentation describes the splice). Calls copied in
//! at the last level stay calls of the function.
//!
//! Soundness: the kept body is exactly what every call of the function ran before this pass,
//! so a copy in place of a call computes what the call did, with the same effects in the
//! same order (by induction over the depth of the recursion: the calls left inside copies
//! call the new body, which by the hypothesis behaves like the old one). Deep recursion: the
//! number of frames on the stack falls by a factor of up to `levels + 1`, each frame holding
//! what the allocator spills for the bigger body; no stack slot is added.

use super::inline::{inline_call, inlinable_body};
use super::{FunctionCx, FunctionPass};
use crate::faults;
use crate::ir::{Callee, Function, Inst, Opcode, Value};

pub struct RecursiveInline;

/// Largest body (in instructions, before this pass) that is inlined into itself.
pub const MAX_BODY: usize = 80;
/// Most instructions the function may grow to.
pub const MAX_GROWN: usize = 400;
/// The function grows to at most this many times its original size.
pub const GROWTH_FACTOR: usize = 16;
/// Most levels of copies.
pub const MAX_LEVELS: u32 = 8;
/// Most copies made in a function with a loop of several exit edges (a `return` inside the
/// loop body, as in a depth-first search): each copy nests its loops in the loop around the
/// call, and reversed, as backward data-flow problems see them, such loops have several
/// entries, so a deep nest of them is irreducible beyond what node splitting can handle,
/// while the call saved is shared by the loop's iterations anyway. (Loops with one exit,
/// such as those `tail-recursion` makes, nest harmlessly.)
pub const MAX_COPIES_WITH_EXITING_LOOPS: u64 = 4;

/// A self-call still to be inlined, with the arguments of the call whose copy contains it
/// (none for the function's own sites).
struct Site {
    call: Inst,
    parent_args: Option<Vec<Value>>,
}

impl FunctionPass for RecursiveInline {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let me = cx.func_ref;
        let is_self_call = |f: &Function, inst: Inst| f.opcode(inst) == Opcode::Call(Callee::Func(me));
        let original = func.inst_count();
        if func.name == "main" || original > MAX_BODY || !inlinable_body(func) || cx.pins.outlined.contains(&func.name) {
            return false;
        }
        if func.all_insts().any(|(_, i)| matches!(func.opcode(i), Opcode::Alloca { .. })) {
            return false;
        }
        let mut frontier: Vec<Site> = func
            .all_insts()
            .filter(|&(_, i)| is_self_call(func, i))
            .map(|(_, call)| Site { call, parent_args: None })
            .collect();
        if frontier.is_empty() {
            return false;
        }
        let loops = cx.analyses.loops(func);
        let exiting_loop = loops.loops().any(|l| loops.exits(l).len() > 1);
        let max_copies = if exiting_loop { MAX_COPIES_WITH_EXITING_LOOPS } else { u64::MAX };
        let body = func.clone();
        let budget = MAX_GROWN.min(GROWTH_FACTOR * original);
        let stale_arg_fault = cx.faults.is_on(faults::RECURSIVE_INLINE_STALE_ARG);
        let mut size = original;
        let mut copies = 0u64;
        'levels: for _ in 0..MAX_LEVELS {
            let mut next = Vec::new();
            for site in frontier {
                if size + original > budget || copies == max_copies {
                    break 'levels;
                }
                let args = func.args(site.call).to_vec();
                if let (true, Some(parent)) = (stale_arg_fault, &site.parent_args) {
                    // Deliberate fault: the copy gets the enclosing call's first argument
                    // that differs from its own.
                    if let Some(i) = (0..args.len()).find(|&i| args[i] != parent[i]) {
                        func.set_arg(site.call, i, parent[i]);
                    }
                }
                let calls = inline_call(func, site.call, &body);
                size += original;
                copies += 1;
                next.extend(
                    calls
                        .into_iter()
                        .filter(|&c| is_self_call(func, c))
                        .map(|call| Site { call, parent_args: Some(args.clone()) }),
                );
            }
            frontier = next;
        }
        cx.count("copies", copies);
        copies > 0
    }
}
