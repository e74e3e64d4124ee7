//! `global-to-local` (catalogue: GlobalVariableToValue): scalar globals that need not live in
//! memory stop living there.
//!
//! Why: every read of a global scalar is a load (and an address materialisation on ARM), and
//! calls in between force reloads. Two common cases need no memory at all:
//! * a scalar global that nothing ever writes is a constant: each load of it becomes its
//!   initial value (in every function);
//! * a scalar global that only `main` mentions, where nothing calls `main`, is a local
//!   variable of `main`: it becomes an `alloca` in `main`'s entry block initialised with the
//!   global's initial value, which `mem2reg` then promotes to SSA values (so this pass goes
//!   before `mem2reg` in a pipeline).
//!
//! What counts as a use: the global's address as the address operand of a `load` or a
//! `store`. Any other use (a `gep`, a call argument, `memzero`, a `phi` or `select` of
//! addresses) means the address escapes into pointer arithmetic this pass does not follow,
//! and the global is left alone. Because pointers never travel through memory (see
//! `analysis::pointers`), these direct uses are all the ways a scalar global can be reached.
//!
//! Assumes `main` runs once per program execution when no call instruction targets it, so on
//! entry to `main` every global still holds its initialiser. Arrays are not handled here (see
//! `const-arrays` and `dead-arrays`). The global itself stays declared (unused globals cost
//! only their storage).

use cranelift_entity::SecondaryMap;

use super::{ModuleCx, ModulePass};
use crate::analysis::callgraph::CallGraph;
use crate::ir::{Const, FuncRef, GlobalRef, Inst, InstData, Module, Opcode, Type, ValueDef};

pub struct GlobalToLocal;

/// How a global is used across the module.
#[derive(Clone, Copy, Default)]
struct Usage {
    /// Some use is neither a load from nor a store to the address itself.
    escapes: bool,
    stored: bool,
    /// Some function other than `main` uses it.
    outside_main: bool,
    used: bool,
}

impl ModulePass for GlobalToLocal {
    fn run(&self, module: &mut Module, cx: &mut ModuleCx<'_>) -> bool {
        let graph = CallGraph::compute(module);
        let main = graph.main().filter(|&m| graph.num_calls_to(m) == 0);

        let mut usage: SecondaryMap<GlobalRef, Usage> = SecondaryMap::new();
        for (fref, func) in module.funcs() {
            for (_, inst) in func.all_insts() {
                for (k, &arg) in func.args(inst).iter().enumerate() {
                    let ValueDef::Global(g) = func.value_def(arg) else { continue };
                    let u = &mut usage[g];
                    u.used = true;
                    u.outside_main |= Some(fref) != main;
                    match (func.opcode(inst), k) {
                        (Opcode::Load, 0) => {}
                        (Opcode::Store, 0) => u.stored = true,
                        _ => u.escapes = true,
                    }
                }
            }
        }

        let mut constant: Vec<GlobalRef> = Vec::new();
        let mut localise: Vec<GlobalRef> = Vec::new();
        for (g, data) in module.globals.iter() {
            let u = usage[g];
            if data.words != 1 || !matches!(data.elem, Type::I32 | Type::F32) || !u.used || u.escapes {
                continue;
            }
            if initial_value(module, g).ty() != data.elem {
                continue;
            }
            if !u.stored {
                constant.push(g);
            } else if !u.outside_main && main.is_some() {
                localise.push(g);
            }
        }
        if constant.is_empty() && localise.is_empty() {
            return false;
        }

        let mut changed = false;
        for fref in module.func_refs() {
            if !cx.may_transform(fref) {
                continue;
            }
            let mut replaced = 0u64;
            for &g in &constant {
                replaced += replace_loads_by_initialiser(module, fref, g);
            }
            if replaced > 0 {
                cx.count("loads_replaced_by_constant", replaced);
                changed = true;
            }
            if Some(fref) == main {
                for &g in &localise {
                    localise_in(module, fref, g);
                    cx.count("globals_localised", 1);
                    changed = true;
                }
            }
        }
        changed
    }
}

/// The initial value of scalar global `g`.
fn initial_value(module: &Module, g: GlobalRef) -> Const {
    let data = &module.globals[g];
    match data.init.iter().find(|&&(i, _)| i == 0) {
        Some(&(_, c)) => c,
        None if data.elem == Type::F32 => Const::Float(0),
        None => Const::Int(0),
    }
}

/// Replaces every load of `g` in function `fref` by its initial value; returns how many.
fn replace_loads_by_initialiser(module: &mut Module, fref: FuncRef, g: GlobalRef) -> u64 {
    let init = initial_value(module, g);
    let func = module.func_mut(fref);
    let loads: Vec<Inst> = func
        .all_insts()
        .map(|(_, i)| i)
        .filter(|&i| func.opcode(i) == Opcode::Load && func.value_def(func.args(i)[0]) == ValueDef::Global(g))
        .collect();
    let mut n = 0;
    for load in loads {
        let Some(result) = func.result(load) else { continue };
        if func.value_type(result) != init.ty() {
            continue;
        }
        let c = func.const_value(init);
        func.replace_all_uses(result, c);
        func.remove_inst(load);
        n += 1;
    }
    n
}

/// Gives `main` a stack slot for `g`, initialised at entry, and points every use at it.
fn localise_in(module: &mut Module, main: FuncRef, g: GlobalRef) {
    let init = initial_value(module, g);
    let elem = module.globals[g].elem;
    let func = module.func_mut(main);
    let users: Vec<Inst> = func
        .all_insts()
        .map(|(_, i)| i)
        .filter(|&i| func.args(i).iter().any(|&a| func.value_def(a) == ValueDef::Global(g)))
        .collect();
    let entry = func.entry();
    let alloca = func.create_inst(InstData::alloca(elem, 1));
    func.prepend_inst(entry, alloca);
    let slot = func.result(alloca).expect("alloca has a result");
    let value = func.const_value(init);
    let store = func.create_inst(InstData::store(slot, value));
    func.insert_inst_after(alloca, store);
    let addr = func.global_addr(g);
    for inst in users {
        for k in 0..func.args(inst).len() {
            if func.args(inst)[k] == addr {
                func.set_arg(inst, k, slot);
            }
        }
    }
}
