//! `inline` (catalogue: FunctionInline): replaces calls of small or single-use, non-recursive
//! functions by a copy of the callee's body.
//!
//! Why: a call costs argument moves, a branch and link, a frame and the caller-saved register
//! traffic around it, and it hides the callee's body from every function-local pass (constant
//! arguments, loop-invariant code, redundant loads). SysY benchmarks call tiny helpers in hot
//! loops.
//!
//! Which calls: the callee must not be recursive — decided with the strongly connected
//! components of the call graph ([`CallGraph::is_recursive`]), so `A → B` is inlined even when
//! `B` calls into a recursive pair `C ↔ D` further down. Its entry block must have no
//! predecessors (the copy of the entry is entered from the call only). Size heuristics, in
//! instructions of the callee as it stands when its callers are processed (callees are
//! processed first, bottom-up, so a callee's size already includes what was inlined into it):
//! * a callee of at most [`SMALL_CALLEE`] instructions is inlined at every call site;
//! * a callee with exactly one call site in the module (counting the copies made by this pass)
//!   is inlined when it has at most [`SINGLE_SITE_CALLEE`] instructions (the original then
//!   dies, see `dead-functions`), so code size does not grow;
//! * no caller grows beyond [`MAX_CALLER`] instructions through inlining (compile time and
//!   register pressure of huge functions);
//! * a callee the configuration pins outlined (`--keep-outlined`) is never inlined.
//!
//! How one call `r = call @g(a…)` in block `B` is inlined:
//! 1. `B` is split after the call: the instructions after it move to a new continuation block
//!    `K`, and the phis of `B`'s successors name `K` as their predecessor instead;
//! 2. every block of `g` is copied (in `g`'s layout order, placed between `B` and `K`), with
//!    `g`'s parameters replaced by the arguments `a…` and constants, globals and `undef`
//!    re-interned in the caller. Array parameters are pointers, so the copy reads and writes
//!    exactly the caller's arrays (or globals) the call passed — aliasing between them is
//!    whatever it was at the call. Operands defined later in `g`'s layout (phis on back
//!    edges, or layouts that do not follow dominance) are patched once every copy exists;
//! 3. `g`'s `alloca`s move to the start of the caller's entry block: the back end gives every
//!    alloca its own frame slot anyway, and passes that look for stack slots (mem2reg, the
//!    memory passes) expect them in the entry. (A slot is then uninitialised only on the first
//!    execution instead of on every call; only a program reading uninitialised memory could
//!    tell.)
//! 4. every `ret v` becomes `jump K`; `r` is replaced by `v` when there is one return, by a phi
//!    of `K` over the returning blocks when there are several, and by `undef` when `g` never
//!    returns (then `K` is unreachable and `unreachable-blocks` deletes it);
//! 5. `B` ends with `jump` to the copy of `g`'s entry. Merging the resulting jump chains is
//!    left to `simplify-cfg`/`fuse-blocks`.
//!
//! Only the call sites the caller had before this pass are considered, so calls copied in
//! from an inlined body are not inlined again in the same run (they were already judged in
//! the callee, which was processed first).

use cranelift_entity::{EntityRef, SecondaryMap};
use rustc_hash::FxHashMap;

use super::{ModuleCx, ModulePass};
use crate::analysis::callgraph::CallGraph;
use crate::ir::{Block, Callee, FuncRef, Function, Inst, InstData, Module, Opcode, Value, ValueDef};

pub struct Inline;

/// Callees up to this many instructions are inlined at every call site.
pub const SMALL_CALLEE: usize = 40;
/// A callee with a single call site is inlined up to this many instructions.
pub const SINGLE_SITE_CALLEE: usize = 2000;
/// Inlining stops adding code to a caller of this many instructions.
pub const MAX_CALLER: usize = 6000;

impl ModulePass for Inline {
    fn run(&self, module: &mut Module, cx: &mut ModuleCx<'_>) -> bool {
        let graph = CallGraph::compute(module);
        // Live count of call instructions per callee, updated as bodies are copied.
        let mut calls_to: SecondaryMap<FuncRef, u32> = SecondaryMap::new();
        for &f in graph.functions() {
            calls_to[f] = graph.num_calls_to(f);
        }
        let mut changed = false;
        for f in graph.bottom_up() {
            let sites: Vec<(Inst, FuncRef)> =
                graph.call_sites(f).iter().copied().filter(|&(_, g)| g != f && !graph.is_recursive(g)).collect();
            if sites.is_empty() || !cx.may_transform(f) {
                continue;
            }
            let mut caller = module.take_function(f);
            let mut size = caller.inst_count();
            for (call, g) in sites {
                let callee = module.func(g);
                let callee_size = callee.inst_count();
                let wanted = (callee_size <= SMALL_CALLEE
                    || (calls_to[g] == 1 && callee_size <= SINGLE_SITE_CALLEE && callee.name != "main"))
                    && !cx.pins.outlined.contains(&callee.name);
                if !wanted || size + callee_size > MAX_CALLER || !inlinable_body(callee) {
                    continue;
                }
                if caller.inst_block(call).is_none() {
                    continue;
                }
                inline_call(&mut caller, call, callee);
                size += callee_size;
                calls_to[g] -= 1;
                for (_, inst) in callee.all_insts() {
                    if let Opcode::Call(Callee::Func(h)) = callee.opcode(inst) {
                        calls_to[h] += 1;
                    }
                }
                cx.count("calls_inlined", 1);
                cx.count("insts_copied", callee_size as u64);
                changed = true;
            }
            module.put_back(f, caller);
        }
        changed
    }
}

/// The callee has a body and its entry block is entered only from outside.
pub(crate) fn inlinable_body(callee: &Function) -> bool {
    let Some(&entry) = callee.layout().first() else { return false };
    callee.layout().iter().all(|&b| !callee.successors(b).contains(&entry))
}

/// Inlines `call` (a placed call of `callee`) into `caller`. See the module documentation.
/// Returns the copies of the callee's calls of functions, in the callee's layout order.
pub(crate) fn inline_call(caller: &mut Function, call: Inst, callee: &Function) -> Vec<Inst> {
    let block = caller.inst_block(call).expect("call is placed");

    // 1. Split after the call.
    let cont = caller.create_block();
    while let Some(next) = caller.next_inst(call) {
        caller.detach_inst(next);
        caller.append_inst(cont, next);
    }
    let mut succs: Vec<Block> = caller.successors(cont).to_vec();
    succs.sort_unstable();
    succs.dedup();
    for s in succs {
        caller.rename_phi_pred(s, block, cont);
    }

    // 2. Copy the blocks.
    let mut block_map: FxHashMap<Block, Block> = FxHashMap::default();
    let mut new_blocks = Vec::with_capacity(callee.layout().len());
    for &b in callee.layout() {
        let nb = caller.create_block();
        block_map.insert(b, nb);
        new_blocks.push(nb);
    }
    let mut value_map: FxHashMap<Value, Value> = FxHashMap::default();
    for (&p, &a) in callee.params.iter().zip(caller.args(call).to_vec().iter()) {
        value_map.insert(p, a);
    }
    let entry = caller.entry();
    let mut last_alloca: Option<Inst> = None;
    // Operands not yet copied when their user was: (new instruction, operand index, old value).
    let mut pending: Vec<(Inst, usize, Value)> = Vec::new();
    // Returning blocks of the copy and the (old) value they return.
    let mut returns: Vec<(Block, Option<Value>)> = Vec::new();
    let mut copied_calls = Vec::new();
    for &b in callee.layout() {
        let nb = block_map[&b];
        for inst in callee.block_insts(b) {
            let old = callee.inst(inst);
            if old.op == Opcode::Ret {
                returns.push((nb, old.args.first().copied()));
                caller.append(nb, InstData::jump(cont));
                continue;
            }
            let mut data = old.clone();
            for t in data.targets.iter_mut() {
                *t = block_map[t];
            }
            let mut unresolved = Vec::new();
            for (i, a) in data.args.iter_mut().enumerate() {
                match map_value(caller, callee, &value_map, *a) {
                    Some(v) => *a = v,
                    None => {
                        unresolved.push((i, *a));
                        *a = caller.undef(callee.value_type(*a));
                    }
                }
            }
            let new = caller.create_inst(data);
            if let Some(offset) = callee.src_offset(inst) {
                caller.set_src_offset(new, offset);
            }
            if matches!(old.op, Opcode::Alloca { .. }) {
                match last_alloca {
                    Some(prev) => caller.insert_inst_after(prev, new),
                    None => caller.prepend_inst(entry, new),
                }
                last_alloca = Some(new);
            } else {
                caller.append_inst(nb, new);
            }
            if matches!(old.op, Opcode::Call(Callee::Func(_))) {
                copied_calls.push(new);
            }
            if let (Some(ov), Some(nv)) = (callee.result(inst), caller.result(new)) {
                value_map.insert(ov, nv);
            }
            pending.extend(unresolved.into_iter().map(|(i, v)| (new, i, v)));
        }
    }
    for (inst, idx, old) in pending {
        let v = map_value(caller, callee, &value_map, old).expect("every callee value is copied");
        caller.set_arg(inst, idx, v);
    }

    // 4. The returned value.
    if let Some(result) = caller.result(call) {
        let ty = caller.value_type(result);
        let mut incoming: Vec<(Block, Value)> = Vec::with_capacity(returns.len());
        for &(b, v) in &returns {
            let nv = match v {
                Some(v) => map_value(caller, callee, &value_map, v).expect("every callee value is copied"),
                None => caller.undef(ty),
            };
            incoming.push((b, nv));
        }
        let replacement = match incoming.as_slice() {
            [] => caller.undef(ty),
            [(_, v)] => *v,
            _ => {
                let phi = caller.create_inst(InstData::phi(ty, &incoming));
                caller.prepend_inst(cont, phi);
                caller.result(phi).expect("phi has a result")
            }
        };
        caller.replace_all_uses(result, replacement);
    }

    // 5. Enter the copy.
    caller.remove_inst(call);
    caller.append(block, InstData::jump(block_map[&callee.entry()]));

    let mut layout: Vec<Block> = Vec::with_capacity(caller.layout().len());
    for &b in caller.layout() {
        // The continuation and the copies are the newest blocks.
        if b.index() >= cont.index() {
            continue;
        }
        layout.push(b);
        if b == block {
            layout.extend_from_slice(&new_blocks);
            layout.push(cont);
        }
    }
    caller.set_layout(layout);
    copied_calls
}

/// The caller's value for callee value `v`, if it exists yet.
fn map_value(caller: &mut Function, callee: &Function, map: &FxHashMap<Value, Value>, v: Value) -> Option<Value> {
    match callee.value_def(v) {
        ValueDef::Const(c) => Some(caller.const_value(c)),
        ValueDef::Global(g) => Some(caller.global_addr(g)),
        ValueDef::Undef => Some(caller.undef(callee.value_type(v))),
        ValueDef::Inst(_) | ValueDef::Param(_) => map.get(&v).copied(),
    }
}
