//! `array-hoist` (catalogue: LocalArrayHoist): the initialisation of a local array declared
//! inside a loop moves to the loop's preheader when it writes the same contents on every
//! iteration.
//!
//! Why: `int k[3][3] = {{1, 2, 1}, ...};` in a loop body is lowered to a `memzero` plus one
//! store per element, executed on every iteration although the contents never change. Done
//! once before the loop, the array reads the same.
//!
//! What must hold, for a local array `A` (an `alloca`) and the innermost loop `L` around the
//! block `B` holding its writes:
//! 1. `A`'s address reaches only `gep`s (followed), loads, stores and `memzero`s *through*
//!    it, and call arguments; anything else (a `phi`, a `select`, a stored value) gives up;
//! 2. every write of `A` — stores, `memzero`s, calls whose callee may write that parameter
//!    (FuncInfo) — is in `B`, before every read of `A` in `B`; every other access (loads,
//!    reading calls) is in a block of `L` dominated by `B`; nothing outside `L` touches `A`;
//! 3. every write stores a value defined outside `L` (or a constant), at an address defined
//!    outside `L` or computed by `gep`s from such values.
//!
//! Then each iteration overwrites `A` with the same contents before reading it: any path
//! from the preheader to an access passes through `B` (otherwise the entry-to-access path
//! through the preheader would avoid `B`, contradicting dominance), and no write stores
//! anything else. So the array holds the initial contents whenever it is read, and the writes
//! can run once in the preheader instead. Nothing outside `L` reads `A`, so a loop that runs
//! zero times does not care that the writes happened. The writes move in their order (a
//! `memzero` before the stores that refine it); the address `gep`s are cloned into the
//! preheader. After moving, the preheader (in the parent loop) is the new `B` and the check
//! repeats, so an array can leave a whole nest.
//!
//! Loops without a preheader stop the climb (`loop-simplify` makes them). The CFG is not
//! changed. Calls writing `A` are never moved, so a callee's side effects keep their place.

use super::{FunctionCx, FunctionPass};
use crate::analysis::funcinfo::FuncInfo;
use crate::analysis::{ControlFlowGraph, DomTree, Loop, LoopForest};
use crate::ir::{Block, Function, Inst, InstData, Opcode, Value, ValueDef};

pub struct ArrayHoist;

/// How the array is touched by one instruction.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    /// A store or `memzero` through a derived pointer.
    Write,
    /// A load, or a call that may only read it.
    Read,
    /// A call that may write it: never moved, so the array is not hoistable.
    CallWrite,
}

/// Every instruction accessing the array at `addr` (not counting the `gep`s deriving
/// pointers from it), or `None` when the address escapes to something we do not follow.
fn accesses(func: &Function, info: &FuncInfo, addr: Value) -> Option<Vec<(Inst, Access)>> {
    let mut out = Vec::new();
    let mut work = vec![addr];
    while let Some(p) = work.pop() {
        for &user in func.users(p) {
            if func.inst_block(user).is_none() {
                continue;
            }
            let args = func.args(user);
            let access = match func.opcode(user) {
                Opcode::Store if args[0] == p && args[1] != p => Access::Write,
                Opcode::MemZero { .. } => Access::Write,
                Opcode::Load => Access::Read,
                Opcode::Gep { .. } if args[0] == p && args[1] != p => {
                    work.push(func.result(user)?);
                    continue;
                }
                Opcode::Call(callee) => {
                    let summary = info.callee_summary(callee);
                    let written = args.iter().enumerate().any(|(k, &a)| a == p && summary.writes_param(k));
                    if written { Access::CallWrite } else { Access::Read }
                }
                _ => return None,
            };
            if !out.iter().any(|&(i, _)| i == user) {
                out.push((user, access));
            }
        }
    }
    Some(out)
}

struct Hoister<'a> {
    cfg: &'a ControlFlowGraph,
    domtree: &'a DomTree,
    loops: &'a LoopForest,
}

impl Hoister<'_> {
    /// Whether the address `v` can be computed in the preheader of `l`: defined outside, or
    /// a `gep` of such values.
    fn address_available(&self, func: &Function, l: Loop, v: Value) -> bool {
        if self.loops.defines_outside(func, l, v) {
            return true;
        }
        match func.value_def(v) {
            ValueDef::Inst(i) if matches!(func.opcode(i), Opcode::Gep { .. }) => {
                let args = func.args(i);
                self.loops.defines_outside(func, l, args[1]) && self.address_available(func, l, args[0])
            }
            _ => false,
        }
    }

    /// The writes of the array (in `block` order) when they can leave `l` (see the module
    /// documentation), else `None`.
    fn movable_writes(&self, func: &Function, l: Loop, block: Block, accesses: &[(Inst, Access)]) -> Option<Vec<Inst>> {
        let mut writes = Vec::new();
        for &(inst, access) in accesses {
            let b = func.inst_block(inst)?;
            if !self.loops.contains(l, b) || access == Access::CallWrite {
                return None;
            }
            if access == Access::Write {
                if b != block {
                    return None;
                }
                writes.push(inst);
            } else if !self.domtree.dominates(block, b) {
                return None;
            }
        }
        // In `block`, every write comes before every read.
        let mut seen_read = false;
        let mut ordered = Vec::with_capacity(writes.len());
        for inst in func.block_insts(block) {
            match accesses.iter().find(|&&(i, _)| i == inst).map(|&(_, a)| a) {
                Some(Access::Write) if seen_read => return None,
                Some(Access::Write) => ordered.push(inst),
                Some(_) => seen_read = true,
                None => {}
            }
        }
        for &w in &ordered {
            let args = func.args(w);
            if !self.address_available(func, l, args[0]) {
                return None;
            }
            if func.opcode(w) == Opcode::Store && !self.loops.defines_outside(func, l, args[1]) {
                return None;
            }
        }
        Some(ordered)
    }
}

/// A copy of the address `v` usable before `pos` (cloning in-loop `gep`s; see
/// [`Hoister::address_available`]).
fn materialise(func: &mut Function, hoister: &Hoister<'_>, l: Loop, pos: Inst, v: Value) -> Value {
    if hoister.loops.defines_outside(func, l, v) {
        return v;
    }
    let gep = func.def_inst(v).expect("checked: an in-loop gep");
    let Opcode::Gep { scale } = func.opcode(gep) else { unreachable!("checked: a gep") };
    let (base, index) = (func.args(gep)[0], func.args(gep)[1]);
    let base = materialise(func, hoister, l, pos, base);
    func.insert_value_before(pos, InstData::gep(base, index, scale))
}

impl FunctionPass for ArrayHoist {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let loops = cx.analyses.loops(func);
        if loops.num_loops() == 0 {
            return false;
        }
        let cfg = cx.analyses.cfg(func);
        let domtree = cx.analyses.domtree(func);
        let info = cx.funcinfo(func);
        let hoister = Hoister { cfg: &cfg, domtree: &domtree, loops: &loops };
        let allocas: Vec<Inst> =
            func.all_insts().map(|(_, i)| i).filter(|&i| matches!(func.opcode(i), Opcode::Alloca { .. })).collect();
        let (mut arrays, mut moved) = (0u64, 0u64);
        for alloca in allocas {
            let addr = func.result(alloca).expect("alloca has a result");
            let mut hoisted = false;
            while let Some(accesses) = accesses(func, &info, addr) {
                let Some(block) = accesses
                    .iter()
                    .find(|&&(_, a)| a == Access::Write)
                    .and_then(|&(i, _)| func.inst_block(i))
                else {
                    break;
                };
                let Some(l) = loops.innermost_loop(block) else { break };
                let Some(pre) = loops.preheader(hoister.cfg, l) else { break };
                let Some(writes) = hoister.movable_writes(func, l, block, &accesses) else { break };
                let term = func.terminator(pre).expect("preheader has a terminator");
                for w in writes {
                    let address = func.args(w)[0];
                    let address = materialise(func, &hoister, l, term, address);
                    func.set_arg(w, 0, address);
                    func.detach_inst(w);
                    func.insert_inst_before(term, w);
                    moved += 1;
                }
                hoisted = true;
            }
            arrays += u64::from(hoisted);
        }
        cx.count("arrays_hoisted", arrays);
        cx.count("writes_hoisted", moved);
        arrays > 0
    }
}
