//! `dce` (catalogue: DeadCodeElimination): deletes instructions whose results nothing needs.
//!
//! Why: folding, promotion and simplification leave computations behind whose results are no
//! longer used; removing them shrinks the code and the work later passes do.
//!
//! Algorithm: mark and sweep. Every instruction with an effect — stores, `memzero`, calls
//! that may do I/O, write memory or not return, and terminators — is live; so is every
//! instruction that defines an operand of a live instruction, transitively. Everything else is
//! deleted. Unlike deleting unused instructions one by one, this also removes cycles of phis
//! that only feed each other (a loop counter nobody reads).
//!
//! Calls: a call of a function that is read-only (no I/O, no writes outside its own frame)
//! and always returns ([`FuncSummary`](crate::analysis::FuncSummary), whose `always_returns`
//! includes proving that its loops finish) has no effect but its result, so it is dead when
//! its result is (`median`'s `swap` discarding the result of a pure helper with a loop).
//!
//! Decision on instructions that may trap: an unused `sdiv`/`srem` (which traps on a zero
//! divisor or `INT_MIN / -1`) and an unused `load` (which traps out of bounds) are deleted.
//! A trap is undefined behaviour in SysY, so a program that would trap there has no meaning
//! to preserve; valid programs are unaffected. (Passes that *move* code must still not
//! execute a trapping instruction where the program would not.)
//!
//! Assumes nothing about reachability: instructions in unreachable blocks are treated alike.

use cranelift_entity::SecondaryMap;

use super::{FunctionCx, FunctionPass};
use crate::ir::{Function, Inst, Opcode};

pub struct Dce;

impl FunctionPass for Dce {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let mut live: SecondaryMap<Inst, bool> = SecondaryMap::with_capacity(func.num_insts());
        let mut work: Vec<Inst> = Vec::new();
        let all: Vec<Inst> = func.all_insts().map(|(_, i)| i).collect();
        let info = cx.funcinfo(func);
        let removable_call = |func: &Function, inst: Inst| match func.opcode(inst) {
            Opcode::Call(callee) => {
                let s = info.callee_summary(callee);
                s.is_read_only() && s.always_returns()
            }
            _ => false,
        };
        for &inst in &all {
            if func.opcode(inst).has_side_effects() && !removable_call(func, inst) {
                live[inst] = true;
                work.push(inst);
            }
        }
        while let Some(inst) = work.pop() {
            for &arg in func.args(inst) {
                if let Some(def) = func.def_inst(arg)
                    && !live[def]
                {
                    live[def] = true;
                    work.push(def);
                }
            }
        }
        let dead: Vec<Inst> = all.into_iter().filter(|&i| !live[i]).collect();
        // Dead instructions may use each other (phi cycles): detach every result first.
        for &inst in &dead {
            if let Some(v) = func.result(inst)
                && func.has_uses(v)
            {
                let undef = func.undef(func.value_type(v));
                func.replace_all_uses(v, undef);
            }
        }
        for &inst in &dead {
            func.remove_inst(inst);
        }
        cx.count("insts_removed", dead.len() as u64);
        !dead.is_empty()
    }
}
