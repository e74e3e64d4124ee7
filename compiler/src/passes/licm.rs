//! `licm` (catalogue: SimpleInvariantHoist): loop-invariant code motion into the preheader.
//!
//! Why: lowering recomputes every expression of a loop body on every iteration, even those
//! whose operands never change inside the loop (sums of parameters, `i * multi` in an inner
//! loop, address computations of the outer index, calls of pure functions with invariant
//! arguments). Computing them once before the loop removes that work.
//!
//! What moves: an instruction of loop `L` whose operands are all defined outside `L` (or by
//! instructions already hoisted) moves to the end of `L`'s preheader, if it is one of
//! * a pure, non-trapping computation (arithmetic, comparisons, conversions, `select`, `gep`);
//! * `sdiv`/`srem` by a constant that can never trap (not 0; not −1 unless the dividend is a
//!   constant other than `INT_MIN`);
//! * a `load` whose word nothing in `L` may write in any iteration (stores, `memzero`,
//!   `alloca`s and calls, by [`MemDepQuery::first_writer`] with the alias analysis and the
//!   callees' FuncInfo summaries), provided the load cannot trap where it now runs: its
//!   address is a constant in-bounds offset into a global or a stack slot;
//! * a call of a `pure` function (its result depends on the arguments alone), or of a
//!   read-only function without I/O whose read objects nothing in `L` writes, provided the
//!   callee is speculatable: it always returns and its memory accesses are at constant
//!   in-bounds offsets ([`crate::analysis::funcinfo::FuncSummary::is_speculatable`];
//!   `always_returns` alone assumes the accesses in bounds, which a guard the hoisted call no
//!   longer sits behind may have been what ensured — `if (i < n) s = s + f(a, i);`).
//!
//! Trapping or possibly non-returning instructions (`sdiv`/`srem` by an unknown divisor,
//! loads of unknown addresses, calls that may not return or may access memory out of bounds)
//! are hoisted only when they are *guaranteed to execute* in the first iteration of every entry into the loop, before any
//! observable effect: their block is in `L` itself (not an inner loop), dominates every latch
//! and every exiting block, every block from the header to it lies in `L` itself, and nothing
//! before it in that part of the iteration is a call that may do I/O or not return. Then the
//! hoisted copy traps (or diverges) exactly when the loop would have on its first iteration,
//! before anything observable differs. A `while` loop that may run zero times has its body
//! outside that region — only its header qualifies — which is what `loop-rotate` fixes.
//!
//! Never moved: phis, stores, `memzero`, `alloca`s, terminators, calls with I/O or side
//! effects. The pass iterates over each loop until no further instruction becomes invariant,
//! inner loops first, so code hoisted into an inner preheader can leave the outer loop too.
//! Loops without a preheader are skipped (run `loop-simplify` first). The CFG is unchanged.
//! Irreducible control flow: the natural loops are still processed, but the
//! guaranteed-execution rule is not used (a cycle not through the header could run forever).

use cranelift_entity::SecondaryMap;
use rustc_hash::FxHashMap;

use super::{FunctionCx, FunctionPass};
use crate::analysis::alias::Reach;
use crate::analysis::funcinfo::FuncInfo;
use crate::analysis::{AliasAnalysis, ControlFlowGraph, DomTree, Loop, LoopForest, MemDepQuery, MemLoc};
use crate::ir::{Block, Function, Inst, Opcode, Value, ValueDef};

pub struct Licm;

/// Largest number of blocks walked when checking that an instruction executes in the first
/// iteration (keeps the pass near-linear on huge loop bodies; beyond it we just don't hoist
/// trapping instructions).
const GUARANTEE_WALK_LIMIT: usize = 64;

impl FunctionPass for Licm {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let loops = cx.analyses.loops(func);
        if loops.num_loops() == 0 {
            return false;
        }
        let cfg = cx.analyses.cfg(func);
        let domtree = cx.analyses.domtree(func);
        let info = cx.funcinfo(func);
        let aa = AliasAnalysis::new(&info, cx.func_ref, func);
        let mut hoisted = 0u64;
        for l in loops.loops_inner_first() {
            let Some(pre) = loops.preheader(&cfg, l) else { continue };
            if !cfg.is_reachable(pre) {
                continue;
            }
            let mut h = LoopHoister {
                func: &mut *func,
                cfg: &cfg,
                domtree: &domtree,
                loops: &loops,
                info: &info,
                aa: &aa,
                l,
                pre,
                written: None,
                writers: None,
                written_words: FxHashMap::default(),
                ignore_call_writes: cx.faults.is_on(crate::faults::LICM_CALL_WRITES_IGNORED),
            };
            hoisted += h.run();
        }
        cx.count("insts_hoisted", hoisted);
        hoisted > 0
    }
}

struct LoopHoister<'a, 'i> {
    func: &'a mut Function,
    cfg: &'a ControlFlowGraph,
    domtree: &'a DomTree,
    loops: &'a LoopForest,
    info: &'a FuncInfo,
    aa: &'a AliasAnalysis<'i>,
    l: Loop,
    pre: Block,
    /// Objects written by instructions of the loop (computed on first need).
    written: Option<Vec<Reach>>,
    /// The instructions of the loop that may write memory (computed on first need).
    writers: Option<Vec<Inst>>,
    /// Per load address: whether one of `writers` may write its word.
    written_words: FxHashMap<Value, bool>,
    /// The fault `licm-call-writes-ignored`: [`LoopHoister::loop_writes`] leaves calls out.
    ignore_call_writes: bool,
}

impl LoopHoister<'_, '_> {
    fn run(&mut self) -> u64 {
        let blocks: Vec<Block> = self.loops.blocks(self.l).to_vec();
        let mut hoisted = 0;
        loop {
            let mut changed = false;
            for &b in &blocks {
                let mut cur = self.func.first_inst(b);
                while let Some(inst) = cur {
                    cur = self.func.next_inst(inst);
                    if self.can_hoist(inst) {
                        let term = self.func.terminator(self.pre).expect("preheader has a terminator");
                        self.func.detach_inst(inst);
                        self.func.insert_inst_before(term, inst);
                        hoisted += 1;
                        changed = true;
                    }
                }
            }
            if !changed {
                return hoisted;
            }
            // A hoisted call is no longer the loop's: collect the writers again.
            self.writers = None;
            self.written_words.clear();
        }
    }

    fn in_loop(&self, b: Block) -> bool {
        self.loops.contains(self.l, b)
    }

    fn is_invariant(&self, v: Value) -> bool {
        match self.func.value_def(v) {
            ValueDef::Inst(i) => self.func.inst_block(i).is_some_and(|b| !self.in_loop(b)),
            _ => true,
        }
    }

    fn can_hoist(&mut self, inst: Inst) -> bool {
        let op = self.func.opcode(inst);
        if matches!(op, Opcode::Phi | Opcode::Alloca { .. } | Opcode::Store | Opcode::MemZero { .. }) || op.is_terminator() {
            return false;
        }
        if !self.func.args(inst).iter().all(|&a| self.is_invariant(a)) {
            return false;
        }
        match op {
            Opcode::SDiv | Opcode::SRem => {
                let args = self.func.args(inst);
                let safe = match self.func.as_int_const(args[1]) {
                    Some(0) | None => false,
                    Some(-1) => self.func.as_int_const(args[0]).is_some_and(|x| x != i32::MIN),
                    Some(_) => true,
                };
                safe || self.guaranteed(inst)
            }
            Opcode::Load => {
                let addr = self.func.args(inst)[0];
                // Hoisting never moves a writer, so the loop's writers are collected once and
                // the answer for an address is remembered (a loop with thousands of loads of a
                // few variables made this quadratic in its size).
                let written = match self.written_words.get(&addr) {
                    Some(&written) => written,
                    None => {
                        let mq = MemDepQuery::new(self.func, self.aa, self.cfg, self.domtree);
                        let writers = self.writers.get_or_insert_with(|| mq.writers(self.loops.blocks(self.l)));
                        let written = mq.first_writer_among(writers, MemLoc::word(addr)).is_some();
                        self.written_words.insert(addr, written);
                        written
                    }
                };
                !written && (self.in_bounds_constant_address(addr) || self.guaranteed(inst))
            }
            Opcode::Call(callee) => {
                if self.func.result(inst).is_none() {
                    return false;
                }
                let s = self.info.callee_summary(callee);
                let allowed = if s.is_pure() {
                    true
                } else if s.is_read_only() && !s.does_io() {
                    let reads = self.aa.read_objects(self.func, inst);
                    !self.loop_writes().iter().any(|w| w.intersects(&reads))
                } else {
                    false
                };
                allowed && (s.is_speculatable() || self.guaranteed(inst))
            }
            _ => op.is_pure() && !op.may_trap(),
        }
    }

    /// What every instruction of the loop may write (whole objects).
    fn loop_writes(&mut self) -> &[Reach] {
        if self.written.is_none() {
            let mut w = Vec::new();
            for &b in self.loops.blocks(self.l) {
                for i in self.func.block_insts(b) {
                    if self.ignore_call_writes && matches!(self.func.opcode(i), Opcode::Call(_)) {
                        continue;
                    }
                    let r = self.aa.written_objects(self.func, i);
                    if !r.is_empty() {
                        w.push(r);
                    }
                }
            }
            self.written = Some(w);
        }
        self.written.as_deref().unwrap_or(&[])
    }

    /// `addr` is a constant, word-aligned, in-bounds offset into one global or stack slot: a
    /// load from it cannot trap wherever the address is available.
    fn in_bounds_constant_address(&self, addr: Value) -> bool {
        self.aa.pointer(self.func, addr).constant_in_bounds(self.func, |g| self.info.global_words(g), 1)
    }

    fn guaranteed(&self, inst: Inst) -> bool {
        guaranteed_to_execute(self.func, self.cfg, self.domtree, self.loops, self.info, self.l, inst)
    }
}

/// A call that may do I/O or may not return: nothing observable may be moved above it.
fn is_barrier(func: &Function, info: &FuncInfo, inst: Inst) -> bool {
    match func.opcode(inst) {
        Opcode::Call(callee) => {
            let s = info.callee_summary(callee);
            s.does_io() || !s.always_returns()
        }
        _ => false,
    }
}

/// `inst` executes in the first iteration of every entry into loop `l`, before any observable
/// effect of that iteration (see the module documentation): a trapping or non-returning
/// instruction may then be executed once before the loop instead. Shared with
/// `loop-load-elim`, which loads the first iteration's value in the preheader.
pub(crate) fn guaranteed_to_execute(
    func: &Function,
    cfg: &ControlFlowGraph,
    domtree: &DomTree,
    loops: &LoopForest,
    info: &FuncInfo,
    l: Loop,
    inst: Inst,
) -> bool {
    if !loops.irreducible_edges().is_empty() {
        return false;
    }
    let Some(b) = func.inst_block(inst) else { return false };
    if loops.innermost_loop(b) != Some(l) {
        return false;
    }
    let dominates_all = |x: Block| domtree.dominates(b, x);
    if !loops.latches(l).iter().all(|&x| dominates_all(x)) || !loops.exits(l).iter().all(|&(x, _)| dominates_all(x)) {
        return false;
    }
    // Nothing before `inst` in its block may be a barrier.
    let mut cur = func.first_inst(b);
    while let Some(i) = cur {
        if i == inst {
            break;
        }
        if is_barrier(func, info, i) {
            return false;
        }
        cur = func.next_inst(i);
    }
    // Every block that can run before `b` in this iteration: within `l` itself, no barrier.
    let header = loops.header(l);
    if b == header {
        return true;
    }
    let mut seen: SecondaryMap<Block, bool> = SecondaryMap::new();
    let mut work: Vec<Block> = cfg.preds(b).to_vec();
    let mut visited = 0;
    while let Some(x) = work.pop() {
        if seen[x] {
            continue;
        }
        seen[x] = true;
        visited += 1;
        if visited > GUARANTEE_WALK_LIMIT || loops.innermost_loop(x) != Some(l) {
            return false;
        }
        if func.block_insts(x).any(|i| is_barrier(func, info, i)) {
            return false;
        }
        if x != header {
            work.extend(cfg.preds(x).iter().copied());
        }
    }
    true
}
