//! `const-arrays` (catalogue: ReplaceConstantArray): reads of global arrays that never change,
//! at constant indices, become the constants they read.
//!
//! Why: lookup tables (`const int days[12] = {...}`, or plain global arrays only ever read)
//! indexed by constants — often constants only after folding or unrolling — cost a load
//! each; the value is known at compile time.
//!
//! Which globals: those declared `const` (a correct program never writes them) and those no
//! instruction of the module may write. "May write" is decided with the memory model
//! ([`AliasAnalysis::written_objects`] over every store, `memzero` and call of every
//! function): a store through an array parameter counts as a write of every global that
//! parameter may point to, and a call (of a module function or a built-in like `getarray`)
//! writes whatever its summary says. Any write the model cannot attribute (an unknown
//! pointer) makes every global count as written, and the pass does nothing.
//!
//! Which loads: a load whose address has that global as its single root at a constant byte
//! offset, aligned and inside the array, of the array's element type, in any function. The
//! load becomes the initialiser's element (zero where the initialiser is silent).
//! Out-of-bounds or misaligned constant offsets are left alone (undefined behaviour, not
//! ours to define). Local constant arrays are `load-elim`'s business: their initialising
//! stores forward to the loads.

use cranelift_entity::SecondaryMap;

use super::{ModuleCx, ModulePass};
use crate::analysis::alias::AliasAnalysis;
use crate::analysis::funcinfo::{FuncInfo, MemObject};
use crate::analysis::pointers::Root;
use crate::ir::{Const, GlobalRef, Inst, Module, Opcode, Type, Value};

pub struct ConstArrays;

impl ModulePass for ConstArrays {
    fn run(&self, module: &mut Module, cx: &mut ModuleCx<'_>) -> bool {
        let info = FuncInfo::compute(module);
        let Some(written) = written_globals(module, &info) else { return false };
        let unchanging: SecondaryMap<GlobalRef, bool> = {
            let mut m = SecondaryMap::new();
            for (g, data) in module.globals.iter() {
                m[g] = data.is_const || !written[g];
            }
            m
        };
        if !module.globals.keys().any(|g| unchanging[g]) {
            return false;
        }

        let mut changed = false;
        for fref in module.func_refs() {
            if !cx.may_transform(fref) {
                continue;
            }
            // Find the replacements with the function borrowed immutably, then apply them.
            let plan: Vec<(Inst, Const)> = {
                let func = module.func(fref);
                let aa = AliasAnalysis::new(&info, fref, func);
                func.all_insts()
                    .map(|(_, i)| i)
                    .filter(|&i| func.opcode(i) == Opcode::Load)
                    .filter_map(|load| {
                        let ty = func.value_type(func.result(load)?);
                        let c = constant_at(module, &aa, func, func.args(load)[0], ty, &unchanging)?;
                        Some((load, c))
                    })
                    .collect()
            };
            if plan.is_empty() {
                continue;
            }
            let func = module.func_mut(fref);
            for &(load, c) in &plan {
                let result = func.result(load).expect("planned loads have results");
                let v = func.const_value(c);
                func.replace_all_uses(result, v);
                func.remove_inst(load);
            }
            cx.count("loads_replaced", plan.len() as u64);
            changed = true;
        }
        changed
    }
}

/// Globals some instruction of the module may write; `None` when some write cannot be
/// attributed (it may write anything).
fn written_globals(module: &Module, info: &FuncInfo) -> Option<SecondaryMap<GlobalRef, bool>> {
    let mut written: SecondaryMap<GlobalRef, bool> = SecondaryMap::new();
    for (fref, func) in module.funcs() {
        let aa = AliasAnalysis::new(info, fref, func);
        for (_, inst) in func.all_insts() {
            if !matches!(func.opcode(inst), Opcode::Store | Opcode::MemZero { .. } | Opcode::Call(_)) {
                continue;
            }
            let reach = aa.written_objects(func, inst);
            if reach.unknown || reach.outer.is_any() {
                return None;
            }
            for o in reach.outer.iter() {
                if let MemObject::Global(g) = o {
                    written[g] = true;
                }
            }
        }
    }
    Some(written)
}

/// The initial element a load of type `ty` from `addr` reads, if `addr` is a constant,
/// aligned, in-bounds offset into an unchanging global of that element type.
fn constant_at(
    module: &Module,
    aa: &AliasAnalysis<'_>,
    func: &crate::ir::Function,
    addr: Value,
    ty: Type,
    unchanging: &SecondaryMap<GlobalRef, bool>,
) -> Option<Const> {
    let pointer = aa.pointer(func, addr);
    let (Root::Global(g), offset) = pointer.single()? else { return None };
    let offset = offset.as_constant()?;
    let data = &module.globals[g];
    if !unchanging[g] || data.elem != ty || offset < 0 || offset % 4 != 0 || (offset / 4) as u32 >= data.words {
        return None;
    }
    let index = (offset / 4) as u32;
    let c = match data.init.binary_search_by_key(&index, |&(i, _)| i) {
        Ok(pos) => data.init[pos].1,
        Err(_) if ty == Type::F32 => Const::Float(0),
        Err(_) => Const::Int(0),
    };
    (c.ty() == ty).then_some(c)
}
