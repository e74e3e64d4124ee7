//! `mem2reg` (catalogue: Mem2Reg): promotes scalar stack slots to SSA values.
//!
//! Why: lowering keeps every local variable in an `alloca` (simple and obviously correct);
//! this pass turns the loads and stores of scalar variables into SSA values and phis, which is
//! what every later optimisation works on.
//!
//! What is promoted: an `alloca` of one `i32` or `f32` in the entry block whose every use is a
//! `load` of its type from it or a `store` of a value of its type to it. An alloca whose
//! address escapes — passed to a call, offset by a `gep`, stored as a value, `memzero`ed — or
//! that is an array stays in memory.
//!
//! Algorithm (Cytron et al., with the minimal-SSA placement):
//! 1. phis for a variable go at the iterated dominance frontier of the blocks that store to it
//!    ([`crate::analysis::frontier`]); this is minimal SSA, which can place phis where the
//!    variable is dead. Stores in unreachable blocks do not count: nothing flows from there;
//! 2. renaming walks the dominator tree in preorder (with an explicit stack, so deep trees
//!    cannot overflow the native stack), keeping the current value of every variable: a load
//!    is replaced by it, a store sets it, and the phis of each successor receive it for the
//!    edge. The value before any store is `undef` of the variable's type. Phi entries are
//!    then written in the block's predecessor order;
//! 3. phis that no real instruction uses (directly or through other such phis) are deleted,
//!    so the result has the phis of pruned SSA.
//!
//! Loads and stores in unreachable blocks are not on the dominator tree; they are deleted
//! (a load's uses become `undef`), and phis get `undef` for edges from unreachable blocks.
//! Trivial phis (all entries the same value) are left to `trivial-phi`.

use cranelift_entity::SecondaryMap;
use smallvec::SmallVec;

use super::{FunctionCx, FunctionPass};
use crate::ir::{Block, Function, Inst, InstData, Opcode, Type, Value};

pub struct Mem2Reg;

/// Index of a promoted variable.
type Var = usize;

impl FunctionPass for Mem2Reg {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let vars = promotable_allocas(func);
        if vars.is_empty() {
            return false;
        }
        let cfg = cx.analyses.cfg(func);
        let domtree = cx.analyses.domtree(func);
        let frontiers = cx.analyses.frontiers(func);

        // The variable of every promoted alloca's result.
        let mut var_of: SecondaryMap<Value, Option<Var>> = SecondaryMap::new();
        let mut types = Vec::with_capacity(vars.len());
        for (k, &(alloca, ty)) in vars.iter().enumerate() {
            var_of[func.result(alloca).expect("alloca has a result")] = Some(k);
            types.push(ty);
        }

        // 1. Phi placement.
        let mut phi_var: SecondaryMap<Inst, Option<Var>> = SecondaryMap::new();
        let mut placed: Vec<Inst> = Vec::new();
        // Last variable first: each phi goes to the front of its block, so a block's phis end
        // up in variable order.
        for (k, &(alloca, ty)) in vars.iter().enumerate().rev() {
            let addr = func.result(alloca).expect("alloca has a result");
            let mut def_blocks: SmallVec<[Block; 8]> = SmallVec::new();
            for &user in func.users(addr) {
                if func.opcode(user) == Opcode::Store
                    && let Some(b) = func.inst_block(user)
                    && cfg.is_reachable(b)
                    && !def_blocks.contains(&b)
                {
                    def_blocks.push(b);
                }
            }
            for b in frontiers.iterated(def_blocks) {
                let phi = func.create_inst(InstData::phi(ty, &[]));
                func.prepend_inst(b, phi);
                phi_var[phi] = Some(k);
                placed.push(phi);
            }
        }

        // 2. Renaming along the dominator tree.
        let undefs: Vec<Value> = types.iter().map(|&ty| func.undef(ty)).collect();
        let mut current = undefs.clone();
        // The value each placed phi receives from each reachable predecessor.
        let mut incoming: SecondaryMap<Inst, SmallVec<[(Block, Value); 4]>> = SecondaryMap::new();
        let mut loads_replaced = 0u64;
        let mut stores_removed = 0u64;
        enum Work {
            Visit(Block),
            /// Restore the variables a block redefined: (variable, value before the block).
            Restore(Vec<(Var, Value)>),
        }
        let mut work = vec![Work::Visit(func.entry())];
        let mut promoted: Vec<Inst> = Vec::new();
        while let Some(item) = work.pop() {
            let b = match item {
                Work::Visit(b) => b,
                Work::Restore(undo) => {
                    for (k, v) in undo.into_iter().rev() {
                        current[k] = v;
                    }
                    continue;
                }
            };
            let mut undo = Vec::new();
            let mut next = func.first_inst(b);
            while let Some(inst) = next {
                next = func.next_inst(inst);
                match func.opcode(inst) {
                    Opcode::Phi => {
                        if let Some(k) = phi_var[inst] {
                            undo.push((k, current[k]));
                            current[k] = func.result(inst).expect("phi has a result");
                        }
                    }
                    Opcode::Load => {
                        if let Some(k) = var_of[func.args(inst)[0]] {
                            let result = func.result(inst).expect("load has a result");
                            func.replace_all_uses(result, current[k]);
                            promoted.push(inst);
                            loads_replaced += 1;
                        }
                    }
                    Opcode::Store => {
                        if let Some(k) = var_of[func.args(inst)[0]] {
                            undo.push((k, current[k]));
                            current[k] = func.args(inst)[1];
                            promoted.push(inst);
                            stores_removed += 1;
                        }
                    }
                    _ => {}
                }
            }
            let mut succs: SmallVec<[Block; 2]> = func.successors(b).iter().copied().collect();
            succs.dedup();
            for succ in succs {
                for phi in func.block_phis(succ) {
                    if let Some(k) = phi_var[phi] {
                        incoming[phi].push((b, current[k]));
                    }
                }
            }
            work.push(Work::Restore(undo));
            for &child in domtree.children(b).iter().rev() {
                work.push(Work::Visit(child));
            }
        }

        // Phi entries in predecessor order, one per edge; edges from unreachable predecessors
        // (which renaming never visits) carry `undef`.
        for &phi in &placed {
            let (Some(b), Some(k)) = (func.inst_block(phi), phi_var[phi]) else { continue };
            for &pred in cfg.preds(b) {
                let v = incoming[phi].iter().find(|&&(p, _)| p == pred).map_or(undefs[k], |&(_, v)| v);
                func.push_phi_incoming(phi, pred, v);
            }
        }

        // The promoted loads and stores (at once: one by one is quadratic in the number of
        // uses of an alloca), those left in unreachable blocks, then the allocas themselves.
        func.remove_insts(&promoted);
        let mut dead = Vec::new();
        for &(alloca, ty) in &vars {
            let addr = func.result(alloca).expect("alloca has a result");
            let mut users: Vec<Inst> = func.users(addr).to_vec();
            users.sort_unstable();
            users.dedup();
            for user in users {
                if let Some(v) = func.result(user) {
                    let undef = func.undef(ty);
                    func.replace_all_uses(v, undef);
                }
                dead.push(user);
            }
            dead.push(alloca);
        }
        func.remove_insts(&dead);

        // 3. Dead phis.
        let phis_removed = remove_dead_phis(func, &placed, &phi_var);
        cx.count("allocas_promoted", vars.len() as u64);
        cx.count("loads_replaced", loads_replaced);
        cx.count("stores_removed", stores_removed);
        cx.count("phis_inserted", placed.len() as u64 - phis_removed);
        true
    }
}

/// The promotable allocas with their element types (see the module documentation).
fn promotable_allocas(func: &Function) -> Vec<(Inst, Type)> {
    let mut out = Vec::new();
    for inst in func.block_insts(func.entry()) {
        let Opcode::Alloca { elem, count: 1 } = func.opcode(inst) else { continue };
        if !matches!(elem, Type::I32 | Type::F32) {
            continue;
        }
        let addr = func.result(inst).expect("alloca has a result");
        let only_loads_and_stores = func.users(addr).iter().all(|&user| {
            let args = func.args(user);
            match func.opcode(user) {
                Opcode::Load => func.inst(user).ty == elem,
                Opcode::Store => args[0] == addr && args[1] != addr && func.value_type(args[1]) == elem,
                _ => false,
            }
        });
        if only_loads_and_stores {
            out.push((inst, elem));
        }
    }
    out
}

/// Deletes the phis among `placed` that no instruction other than such phis uses; returns how
/// many were deleted.
fn remove_dead_phis(func: &mut Function, placed: &[Inst], phi_var: &SecondaryMap<Inst, Option<usize>>) -> u64 {
    let is_placed = |i: Inst| phi_var[i].is_some();
    let mut live: SecondaryMap<Inst, bool> = SecondaryMap::with_capacity(func.num_insts());
    let mut work: Vec<Inst> = Vec::new();
    for &phi in placed {
        let v = func.result(phi).expect("phi has a result");
        if func.users(v).iter().any(|&u| !is_placed(u)) {
            live[phi] = true;
            work.push(phi);
        }
    }
    while let Some(phi) = work.pop() {
        for &arg in func.args(phi) {
            if let Some(def) = func.def_inst(arg)
                && is_placed(def)
                && !live[def]
            {
                live[def] = true;
                work.push(def);
            }
        }
    }
    let dead: Vec<Inst> = placed.iter().copied().filter(|&p| !live[p]).collect();
    for &phi in &dead {
        let v = func.result(phi).expect("phi has a result");
        let undef = func.undef(func.value_type(v));
        func.replace_all_uses(v, undef);
    }
    for &phi in &dead {
        func.remove_inst(phi);
    }
    dead.len() as u64
}
