//! `load-elim` (catalogue: ReplaceUnnecessaryLoad): removes loads whose value is already
//! known and stores nobody can observe.
//!
//! Why: lowering reloads array elements and globals at every mention (`a[i] = a[i] + 1;
//! b = a[i];` loads `a[i]` twice) and initialises local arrays with stores that are often
//! overwritten or never read; each of those is a memory access the target pays for.
//!
//! # Loads
//! For every load (blocks in reverse post-order), [`MemDepQuery::dependency`] finds what last
//! wrote — or last read — the loaded word on *every* path to the load:
//! * a store of exactly that word: the load becomes the stored value (store-to-load
//!   forwarding);
//! * an earlier load of exactly that word with no possible write in between: the load becomes
//!   that load's result (redundant load);
//! * a `memzero` covering the word: the load becomes zero of its type;
//! * in `main` (when nothing calls `main`), nothing since function entry, and the word is at a
//!   constant offset inside one global: the global still holds its initialiser, so the load
//!   becomes that constant.
//!
//! A forwarded value is only used when its type equals the load's (SysY never reinterprets
//! memory, but the IR allows it). Everything else keeps the load — in particular reads of
//! uninitialised stack slots, whose value the program must not depend on but which we do not
//! exploit.
//!
//! # Stores
//! A store is dead when
//! * a later instruction of its own block certainly overwrites its whole word
//!   ([`AliasAnalysis::must_overwrite`]) and nothing in between may read it
//!   (a load of a possibly-overlapping word, or a call that may read the object), or
//! * it writes a stack slot of this activation (single `alloca` root) and no instruction that
//!   can run after it — the rest of its block, then every block reachable from there, its own
//!   block included when a cycle leads back — may read the word. Reads after the store in its
//!   own block are compared with [`Context::SameIteration`] (the store's address operands are
//!   defined before it and unchanged there); everything else with
//!   [`Context::AcrossIterations`]. The slot dies with the activation, so nothing after `ret`
//!   reads it. "Every block reachable from there" is the backward data-flow problem
//!   [`StackStoreReads`](crate::analysis::dataflow::problems::StackStoreReads), solved once
//!   per function (no block or instruction budget across blocks, unlike a search per store).
//!
//! Soundness rests on the alias analysis and memory-dependence modules (see their
//! documentation): two array parameters may be one array, a parameter may be a global, and a
//! call writes whatever its callee's summary says. Loads are only *replaced*, never moved, so
//! no trap is introduced.
//!
//! Cost: each query has a fixed budget ([`MemDepBudget`](crate::analysis::memdep::MemDepBudget),
//! and [`MAX_SCAN`] for the forward scans of dead-store detection), so the pass is linear in
//! the number of memory instructions times a constant.


use super::{FunctionCx, FunctionPass};
use crate::analysis::alias::{AliasAnalysis, Context, MemLoc};
use crate::analysis::cfg::ControlFlowGraph;
use crate::analysis::dataflow::problems::StackStoreReads;
use crate::analysis::dataflow::{self, Solution};
use crate::analysis::memdep::{MemDep, MemDepQuery};
use crate::analysis::pointers::Root;
use crate::ir::{Const, Function, Inst, Module, Opcode, Type, Value};

pub struct LoadElim;

/// Instructions examined by one forward scan of dead-store detection before giving up.
pub const MAX_SCAN: usize = 4096;

impl FunctionPass for LoadElim {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let info = cx.funcinfo(func);
        let cfg = cx.analyses.cfg(func);
        let domtree = cx.analyses.domtree(func);
        let aa = AliasAnalysis::new(&info, cx.func_ref, func);
        let in_fresh_main = func.name == "main" && info.call_graph().num_calls_to(cx.func_ref) == 0;

        let mut changed = false;
        // Loads.
        let loads: Vec<Inst> = cfg
            .rpo()
            .iter()
            .flat_map(|&b| func.block_insts(b))
            .filter(|&i| func.opcode(i) == Opcode::Load)
            .collect();
        for load in loads {
            let Some(result) = func.result(load) else { continue };
            let ty = func.value_type(result);
            let addr = func.args(load)[0];
            let query = MemDepQuery::new(func, &aa, &cfg, &domtree);
            let mut dep = query.dependency(load, MemLoc::word(addr), true);
            if let MemDep::Clobber(call) = dep
                && cx.faults.is_on(crate::faults::LOAD_ELIM_CALL_KEEPS_GLOBAL)
                && matches!(func.opcode(call), Opcode::Call(_))
                && func.inst_block(call) == func.inst_block(load)
                && matches!(aa.pointer(func, addr).single(), Some((Root::Global(_), _)))
            {
                // (Around a loop the search from the call can come back to this very load.)
                match query.dependency(call, MemLoc::word(addr), true) {
                    MemDep::Load(l) if l == load => {}
                    before_call => dep = before_call,
                }
            }
            let (replacement, counter) = match dep {
                MemDep::Store(s) => (Some(func.args(s)[1]), "loads_forwarded_from_store"),
                MemDep::Load(l) => (func.result(l), "loads_reused"),
                MemDep::Zero(_) => (zero_of(func, ty), "loads_of_zero"),
                MemDep::Entry if in_fresh_main => (initial_value(func, cx.module, &aa, addr, ty), "loads_of_initialiser"),
                _ => (None, ""),
            };
            let Some(v) = replacement.filter(|&v| func.value_type(v) == ty) else { continue };
            func.replace_all_uses(result, v);
            func.remove_inst(load);
            cx.count(counter, 1);
            changed = true;
        }

        // Stores.
        let stores: Vec<Inst> = cfg
            .rpo()
            .iter()
            .flat_map(|&b| func.block_insts(b))
            .filter(|&i| func.opcode(i) == Opcode::Store)
            .collect();
        // Computed after the loads are gone (fewer reads) and before any store is removed
        // (removing stores adds no read, so the facts stay valid while stores go).
        let later = LaterReads::compute(func, &aa, &cfg);
        for store in stores {
            let loc = MemLoc::word(func.args(store)[0]);
            let counter = if overwritten_in_block(func, &aa, store, loc) {
                "stores_overwritten"
            } else if local_never_read_again(func, &aa, &later, store, loc) {
                "stores_never_read"
            } else {
                continue;
            };
            func.remove_inst(store);
            cx.count(counter, 1);
            changed = true;
        }
        changed
    }
}

/// The zero of a memory type (`memzero` writes `+0.0` for floats).
fn zero_of(func: &mut Function, ty: Type) -> Option<Value> {
    match ty {
        Type::I32 => Some(func.iconst(0)),
        Type::F32 => Some(func.const_value(Const::Float(0))),
        _ => None,
    }
}

/// The initial contents of the word at `addr`, if it is at a constant, aligned, in-bounds
/// offset of one global of element type `ty`.
fn initial_value(func: &mut Function, module: &Module, aa: &AliasAnalysis<'_>, addr: Value, ty: Type) -> Option<Value> {
    let pointer = aa.pointer(func, addr);
    let (Root::Global(g), offset) = pointer.single()? else { return None };
    let offset = offset.as_constant()?;
    let global = &module.globals[g];
    if offset < 0 || offset % 4 != 0 || (offset / 4) as u32 >= global.words || global.elem != ty {
        return None;
    }
    let index = (offset / 4) as u32;
    let c = match global.init.binary_search_by_key(&index, |&(i, _)| i) {
        Ok(pos) => global.init[pos].1,
        Err(_) => return zero_of(func, ty),
    };
    (c.ty() == ty).then(|| func.const_value(c))
}

/// A later instruction of `store`'s block certainly overwrites `loc` before anything may
/// read it.
fn overwritten_in_block(func: &Function, aa: &AliasAnalysis<'_>, store: Inst, loc: MemLoc) -> bool {
    let mut cursor = func.next_inst(store);
    let mut budget = MAX_SCAN;
    while let Some(inst) = cursor {
        if budget == 0 {
            return false;
        }
        budget -= 1;
        let ctx = Context::SameIteration;
        if aa.inst_may_read(func, inst, loc, ctx) {
            return false;
        }
        if matches!(func.opcode(inst), Opcode::Store | Opcode::MemZero { .. }) && aa.must_overwrite(func, inst, loc, ctx)
        {
            return true;
        }
        cursor = func.next_inst(inst);
    }
    false
}

/// `loc` is in a stack slot of this activation and nothing that can execute after `store`
/// may read it: nothing later in its block, and the store's fact of [`StackStoreReads`] does
/// not hold at the end of its block (no reachable block, its own one included through a
/// cycle, may read the word).
fn local_never_read_again(func: &Function, aa: &AliasAnalysis<'_>, later: &LaterReads, store: Inst, loc: MemLoc) -> bool {
    let Some(fact) = later.reads.fact(store) else { return false };
    let Some(home) = func.inst_block(store) else { return false };
    let mut budget = MAX_SCAN;
    // The rest of the store's own block, in the same execution.
    let mut cursor = func.next_inst(store);
    while let Some(inst) = cursor {
        if budget == 0 || aa.inst_may_read(func, inst, loc, Context::SameIteration) {
            return false;
        }
        budget -= 1;
        cursor = func.next_inst(inst);
    }
    later.solution.at_end(home).is_some_and(|after| !after.contains(fact))
}

/// The stack stores of a function and, at the end of every block, those a later
/// instruction may read.
struct LaterReads {
    reads: StackStoreReads,
    solution: Solution,
}

impl LaterReads {
    fn compute(func: &Function, aa: &AliasAnalysis<'_>, cfg: &ControlFlowGraph) -> LaterReads {
        let reads = StackStoreReads::new(func, aa, cfg);
        let solution = dataflow::solve(cfg, &reads, dataflow::PREFERRED);
        LaterReads { reads, solution }
    }
}
