//! `dead-arrays` (catalogue: RemoveUnnecessaryArray): arrays that are written but never read
//! disappear together with their writes.
//!
//! Why: after loads are forwarded (`load-elim`, `const-arrays`) many arrays — local scratch
//! arrays, globals only ever filled — have no reader left; their initialisation (`memzero`
//! plus one store per element) is pure waste.
//!
//! An *object* here is a local `alloca` or a global. Starting from its address, the pass
//! follows every derived pointer (`gep` results, transitively) within each function. The
//! object is dead when every use found is one of
//! * the address operand of a `store` or a `memzero`,
//! * the base operand of a `gep` (whose result is followed in turn);
//!
//! and anything else — a `load`, a call argument (the callee, or `putarray`, may read it),
//! a `phi`/`select` merging it with other addresses, use as a stored value — keeps it. For a
//! global every function of the module is searched. A dead object's stores, `memzero`s and
//! `gep`s are deleted, and a local's `alloca` too; a dead global stays declared (its storage
//! is no longer touched).
//!
//! Soundness: pointers never travel through memory (see `analysis::pointers`), so the uses
//! followed are every way the object can be reached; with no reader, no write to it can
//! affect output or a later read. Deleting stores cannot remove a trap a valid program
//! relies on (out-of-bounds stores are undefined behaviour).

use cranelift_entity::SecondaryMap;

use super::{ModuleCx, ModulePass};
use crate::ir::{FuncRef, Function, GlobalRef, Inst, Module, Opcode, Value, ValueDef};

pub struct DeadArrays;

/// The instructions deriving from or writing through `addr` (gep first, then writers), or
/// `None` when something may read the object.
fn write_only_uses(func: &Function, addr: Value, out: &mut Vec<Inst>) -> bool {
    let mut work = vec![addr];
    while let Some(p) = work.pop() {
        for &user in func.users(p) {
            if func.inst_block(user).is_none() {
                continue;
            }
            let args = func.args(user);
            match func.opcode(user) {
                Opcode::Store if args[0] == p && args[1] != p => {}
                Opcode::MemZero { .. } => {}
                Opcode::Gep { .. } if args[0] == p && args[1] != p => {
                    work.push(func.result(user).expect("gep has a result"));
                }
                _ => return false,
            }
            // Once per use slot, and the conditions above admit one slot per instruction.
            out.push(user);
        }
    }
    true
}

/// Deletes `insts` (writes and geps of a dead object): writers first, then geps from the
/// last derived to the first, so nothing is deleted while still used.
fn delete(func: &mut Function, insts: &[Inst]) {
    for &i in insts {
        if func.result(i).is_none() {
            func.remove_inst(i);
        }
    }
    for &i in insts.iter().rev() {
        if func.result(i).is_some() {
            func.remove_inst(i);
        }
    }
}

/// Global uses are not in use lists: the uses of `g`'s address in `func`, all write-only?
fn global_write_only(func: &Function, g: GlobalRef, out: &mut Vec<Inst>) -> bool {
    for (_, inst) in func.all_insts() {
        let args = func.args(inst);
        for (k, &a) in args.iter().enumerate() {
            if func.value_def(a) != ValueDef::Global(g) {
                continue;
            }
            match (func.opcode(inst), k) {
                (Opcode::Store, 0) if func.value_def(args[1]) != ValueDef::Global(g) => out.push(inst),
                (Opcode::MemZero { .. }, 0) => out.push(inst),
                (Opcode::Gep { .. }, 0) if func.value_def(args[1]) != ValueDef::Global(g) => {
                    // The gep before what derives from it, so deletion in reverse is safe.
                    out.push(inst);
                    if !write_only_uses(func, func.result(inst).expect("gep has a result"), out) {
                        return false;
                    }
                }
                _ => return false,
            }
        }
    }
    true
}

impl ModulePass for DeadArrays {
    fn run(&self, module: &mut Module, cx: &mut ModuleCx<'_>) -> bool {
        let mut changed = false;

        // Globals: write-only in every function.
        let funcs: Vec<FuncRef> = module.func_refs();
        let mut dead_globals: SecondaryMap<GlobalRef, bool> = SecondaryMap::new();
        'globals: for g in module.globals.keys() {
            let mut any = false;
            for &f in &funcs {
                let mut uses = Vec::new();
                if !global_write_only(module.func(f), g, &mut uses) {
                    continue 'globals;
                }
                any |= !uses.is_empty();
            }
            dead_globals[g] = any;
        }

        for f in funcs {
            if !cx.may_transform(f) {
                continue;
            }
            let func = module.func_mut(f);
            let mut removed_writes = 0u64;
            for g in module_globals_of(func) {
                if !dead_globals[g] {
                    continue;
                }
                let mut uses = Vec::new();
                if global_write_only(func, g, &mut uses) && !uses.is_empty() {
                    removed_writes += uses.iter().filter(|&&i| func.result(i).is_none()).count() as u64;
                    delete(func, &uses);
                }
            }
            let allocas: Vec<Inst> =
                func.all_insts().map(|(_, i)| i).filter(|&i| matches!(func.opcode(i), Opcode::Alloca { .. })).collect();
            let mut removed_locals = 0u64;
            for alloca in allocas {
                let addr = func.result(alloca).expect("alloca has a result");
                let mut uses = Vec::new();
                if write_only_uses(func, addr, &mut uses) {
                    removed_writes += uses.iter().filter(|&&i| func.result(i).is_none()).count() as u64;
                    delete(func, &uses);
                    func.remove_inst(alloca);
                    removed_locals += 1;
                }
            }
            if removed_writes + removed_locals > 0 {
                cx.count("writes_removed", removed_writes);
                cx.count("allocas_removed", removed_locals);
                changed = true;
            }
        }
        let n = dead_globals.values().filter(|&&d| d).count() as u64;
        if n > 0 {
            cx.count("globals_unread", n);
        }
        changed
    }
}

/// Globals whose address `func` mentions, in a stable order.
fn module_globals_of(func: &Function) -> Vec<GlobalRef> {
    let mut gs: Vec<GlobalRef> = func
        .all_insts()
        .flat_map(|(_, i)| func.args(i).iter().copied())
        .filter_map(|a| match func.value_def(a) {
            ValueDef::Global(g) => Some(g),
            _ => None,
        })
        .collect();
    gs.sort_unstable();
    gs.dedup();
    gs
}
