//! `hoist-global-loads` (catalogue: HoistGlobalArrayLoad): loads of globals that nothing can
//! have written since the function was entered move to the end of the entry block.
//!
//! Why: a loop reading a global scalar (a size `n`) or a fixed element of a global array
//! reloads it every iteration when the loop body contains anything the back end must assume
//! may write memory; if nothing on any path from the entry to the load may write the word,
//! its value is the one it had on entry, and one load at the entry serves every iteration.
//!
//! Which loads: inside a loop (loop depth > 0), from a single global at a constant, aligned,
//! in-bounds offset — such a load cannot trap, so executing it at the entry even when the
//! original would not run is safe. [`MemDepQuery::dependency`] must answer [`MemDep::Entry`]:
//! no instruction on any path from the entry to the load may write the word (calls count
//! with everything their callee summaries say, stores through parameters with every global
//! the parameter may point to). The hoisted load goes just before the entry block's
//! terminator (nothing in the entry writes the word either); loads of the same word share
//! one hoisted load.

use rustc_hash::FxHashMap;

use super::{FunctionCx, FunctionPass};
use crate::analysis::alias::{AliasAnalysis, MemLoc};
use crate::analysis::memdep::{MemDep, MemDepQuery};
use crate::analysis::pointers::Root;
use crate::ir::{Function, GlobalRef, Inst, InstData, Module, Opcode, Type, Value};

pub struct HoistGlobalLoads;

impl FunctionPass for HoistGlobalLoads {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let info = cx.funcinfo(func);
        let cfg = cx.analyses.cfg(func);
        let domtree = cx.analyses.domtree(func);
        let loops = cx.analyses.loops(func);
        let aa = AliasAnalysis::new(&info, cx.func_ref, func);
        let entry = func.entry();

        // Candidates, decided before any change (hoisting adds no writes, so answers stay valid).
        let mut plan: Vec<(Inst, GlobalRef, i32, Type)> = Vec::new();
        for &b in cfg.rpo() {
            if b == entry || loops.loop_depth(b) == 0 {
                continue;
            }
            for inst in func.block_insts(b) {
                if func.opcode(inst) != Opcode::Load {
                    continue;
                }
                let Some(result) = func.result(inst) else { continue };
                let ty = func.value_type(result);
                let addr = func.args(inst)[0];
                let Some((g, offset)) = global_word(cx.module, &aa, func, addr, ty) else { continue };
                let query = MemDepQuery::new(func, &aa, &cfg, &domtree);
                if query.dependency(inst, MemLoc::word(addr), false) == MemDep::Entry {
                    plan.push((inst, g, offset, ty));
                }
            }
        }
        let Some(term) = func.terminator(entry) else { return false };
        let mut hoisted: FxHashMap<(GlobalRef, i32, Type), Value> = FxHashMap::default();
        for &(load, g, offset, ty) in &plan {
            let v = *hoisted.entry((g, offset, ty)).or_insert_with(|| {
                let base = func.global_addr(g);
                let addr = if offset == 0 {
                    base
                } else {
                    let index = func.iconst(offset / 4);
                    func.insert_value_before(term, InstData::gep(base, index, 4))
                };
                func.insert_value_before(term, InstData::load(addr, ty))
            });
            let result = func.result(load).expect("planned loads have results");
            func.replace_all_uses(result, v);
            func.remove_inst(load);
        }
        cx.count("loads_hoisted", plan.len() as u64);
        cx.count("entry_loads_created", hoisted.len() as u64);
        !plan.is_empty()
    }
}

/// The global and constant byte offset of an in-bounds, aligned word of element type `ty`.
fn global_word(module: &Module, aa: &AliasAnalysis<'_>, func: &Function, addr: Value, ty: Type) -> Option<(GlobalRef, i32)> {
    let pointer = aa.pointer(func, addr);
    let (Root::Global(g), offset) = pointer.single()? else { return None };
    let offset = offset.as_constant()?;
    let data = &module.globals[g];
    let in_bounds = offset >= 0 && offset % 4 == 0 && ((offset / 4) as u32) < data.words;
    (in_bounds && data.elem == ty).then_some((g, offset))
}
