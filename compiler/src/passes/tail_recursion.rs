//! `tail-recursion`: turns self tail calls into a branch back to the top of the function.
//!
//! Why: `return gcd(b, a % b)` costs a frame, a branch and link and a return per step, and
//! a recursive function is never inlined. As a loop the body is a few instructions, the
//! parameters live in registers, and — the function no longer being recursive — `inline`
//! may copy it into its callers.
//!
//! Which calls: a call of the function itself whose result is returned unchanged — the call
//! is the last instruction before `ret` of its result (`ret` alone for a void call), or the
//! block ends with `jump` through blocks holding nothing but a `jump` to a block that holds
//! only `ret` of the call's value (directly, or through that block's only phi, whose entry
//! for the path is the call). Nothing happens between the call and the return, so running
//! the callee's body in place of the call performs the same effects in the same order and
//! returns the same value.
//!
//! Soundness of reusing the frame: the callee would get fresh stack slots; the loop reuses
//! the caller's. That is unobservable unless the callee can reach the caller's slots, which
//! in SysY (no pointer variables) only happens through array arguments. So a tail call
//! whose pointer arguments may derive from an `alloca` of this function (followed through
//! `gep`, `phi` and `select`) is left alone. A slot then only differs by holding the
//! previous iteration's contents where the callee's would be uninitialised — only a
//! program reading uninitialised memory could tell (`inline` makes the same argument).
//!
//! Rewrite: a new entry block `E` takes the `alloca`s of the old entry `H` (passes look for
//! stack slots in the entry, and a slot must not be re-created per iteration) and jumps to
//! `H`. `H` gets one phi per parameter: the parameter from `E`, the call's arguments from
//! each tail-call block, and every other use of the parameter uses the phi. Each tail call
//! and its return become `jump H`; phi entries of the abandoned path are removed (a return
//! block left without predecessors is deleted by `unreachable-blocks`). A function whose
//! entry already has predecessors (not produced by lowering) is left alone.
//!
//! Non-terminating recursion turns from a stack overflow into an endless loop, as with any
//! C compiler; neither is a defined outcome.

use super::{FunctionCx, FunctionPass};
use crate::ir::{Block, Callee, Function, Inst, InstData, Opcode, Type, Value, ValueDef};

pub struct TailRecursion;

/// How deep pointer provenance is followed before giving up (treating the value as possibly
/// derived from a stack slot).
const MAX_PROVENANCE_STEPS: usize = 64;
/// How many `jump`s are followed from a call to its `ret`.
const MAX_PATH_BLOCKS: usize = 8;

/// A self tail call: the call, and the phi entries of the return block for the edge from
/// the call's block (removed once that edge is gone).
struct TailCall {
    call: Inst,
    abandoned_phi_entries: Vec<(Inst, Block)>,
}

impl FunctionPass for TailRecursion {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let Some(&entry) = func.layout().first() else { return false };
        if func.layout().iter().any(|&b| func.successors(b).contains(&entry)) {
            return false;
        }
        let me = cx.func_ref;
        let calls: Vec<TailCall> = func
            .layout()
            .iter()
            .filter_map(|&b| {
                let term = func.terminator(b)?;
                let call = func.prev_inst(term)?;
                (func.opcode(call) == Opcode::Call(Callee::Func(me))).then_some(call)
            })
            .filter_map(|call| tail_call(func, call))
            .filter(|tc| func.args(tc.call).iter().all(|&a| !may_point_to_stack(func, a)))
            .collect();
        if calls.is_empty() {
            return false;
        }

        // New entry holding the stack slots; the old entry becomes the loop header.
        let new_entry = func.create_block();
        let mut order = vec![new_entry];
        order.extend(func.layout().iter().copied().filter(|&b| b != new_entry));
        func.set_layout(order);
        let allocas: Vec<Inst> =
            func.block_insts(entry).filter(|&i| matches!(func.opcode(i), Opcode::Alloca { .. })).collect();
        for a in allocas {
            func.detach_inst(a);
            func.append_inst(new_entry, a);
        }
        func.append(new_entry, InstData::jump(entry));

        // One phi per parameter in the header.
        let params = func.params.clone();
        let mut phis = Vec::with_capacity(params.len());
        // Prepended last to first, so the phis end up in parameter order.
        for &p in params.iter().rev() {
            let ty = func.value_type(p);
            let phi = func.create_inst(InstData::phi(ty, &[]));
            let phi_value = func.result(phi).expect("phi has a result");
            func.replace_all_uses(p, phi_value);
            func.prepend_inst(entry, phi);
            func.push_phi_incoming(phi, new_entry, p);
            phis.push(phi);
        }
        phis.reverse();

        for tc in &calls {
            let block = func.inst_block(tc.call).expect("tail call is placed");
            let args: Vec<Value> = func.args(tc.call).to_vec();
            for (&phi, &arg) in phis.iter().zip(&args) {
                func.push_phi_incoming(phi, block, arg);
            }
            for &(phi, pred) in &tc.abandoned_phi_entries {
                if let Some(i) = func.targets(phi).iter().position(|&p| p == pred) {
                    func.remove_phi_incoming(phi, i);
                }
            }
            let term = func.terminator(block).expect("block has a terminator");
            func.remove_inst(term);
            if let Some(r) = func.result(tc.call)
                && func.has_uses(r)
            {
                // Only the abandoned return path used it.
                let undef = func.undef(func.value_type(r));
                func.replace_all_uses(r, undef);
            }
            func.remove_inst(tc.call);
            func.append(block, InstData::jump(entry));
        }
        cx.count("tail_calls_to_loops", calls.len() as u64);
        true
    }
}

/// `call` as a tail call, when the value it returns is what the function returns.
fn tail_call(func: &Function, call: Inst) -> Option<TailCall> {
    let call_block = func.inst_block(call)?;
    let mut abandoned_phi_entries = Vec::new();
    // The value that must reach `ret` (the phi of the return block once past it).
    let mut carried = func.result(call);
    let mut block = call_block;
    let mut term = func.terminator(block)?;
    for _ in 0..MAX_PATH_BLOCKS {
        match func.opcode(term) {
            Opcode::Ret => {
                let returned = func.args(term).first().copied();
                let same = match returned {
                    Some(v) => carried == Some(v),
                    None => func.ret == Type::Void,
                };
                return same.then_some(TailCall { call, abandoned_phi_entries });
            }
            Opcode::Jump => {
                let next = func.targets(term)[0];
                let insts: Vec<Inst> = func.block_insts(next).collect();
                let (&last, body) = insts.split_last()?;
                if body.iter().any(|&i| func.opcode(i) != Opcode::Phi) {
                    return None;
                }
                if !body.is_empty() {
                    // Phis only in the block that returns: a phi there is dead unless `ret`
                    // returns it (nothing else can use it), so the path matters only for the
                    // returned phi.
                    if func.opcode(last) != Opcode::Ret {
                        return None;
                    }
                    let returned = func.args(last).first().copied();
                    for &phi in body {
                        if func.result(phi) == returned {
                            let from_here = func.inst(phi).phi_incoming().find(|&(p, _)| p == block).map(|(_, v)| v);
                            if carried.is_none() || from_here != carried {
                                return None;
                            }
                            carried = returned;
                        }
                        // Blocks past the first one on the path become unreachable with the call
                        // (the call's block dominates them), so only the first edge's entries go.
                        if block == call_block {
                            abandoned_phi_entries.push((phi, block));
                        }
                    }
                }
                block = next;
                term = last;
            }
            _ => return None,
        }
    }
    None
}

/// Whether pointer `v` may be (derived from) a stack slot of this function.
fn may_point_to_stack(func: &Function, v: Value) -> bool {
    if func.value_type(v) != Type::Ptr {
        return false;
    }
    let mut work = vec![v];
    let mut seen = Vec::new();
    while let Some(v) = work.pop() {
        if seen.contains(&v) {
            continue;
        }
        seen.push(v);
        if seen.len() > MAX_PROVENANCE_STEPS {
            return true;
        }
        match func.value_def(v) {
            ValueDef::Param(_) | ValueDef::Global(_) | ValueDef::Undef | ValueDef::Const(_) => {}
            ValueDef::Inst(i) => match func.opcode(i) {
                Opcode::Gep { .. } => work.push(func.args(i)[0]),
                Opcode::Phi => work.extend(func.args(i).iter().copied()),
                Opcode::Select => work.extend(func.args(i)[1..].iter().copied()),
                _ => return true,
            },
        }
    }
    false
}
