//! `trivial-phi` (catalogue: RemoveTrivialPhi): replaces phis that merge only one value.
//!
//! A phi is trivial when every incoming value is the same value `v` or the phi itself
//! (`x = phi [a: v], [b: x]`: a loop that never changes the variable). It is replaced by `v`
//! everywhere — or by `undef` when its only entries are itself (possible only in unreachable
//! code or a block without predecessors). `v` dominates the phi's block, because it reaches
//! the end of every predecessor, so the replacement keeps SSA valid.
//!
//! Why: minimal SSA construction, block merging and deleted edges leave such phis; they hide
//! constants and equalities from later passes and cost a copy per edge in the back end.
//!
//! Replacing one phi can make the phis that use it trivial, so users that are phis go back on
//! the worklist until nothing changes (Braun et al., "Simple and Efficient Construction of
//! SSA Form", 2013, use the same recursion).

use cranelift_entity::SecondaryMap;

use super::{FunctionCx, FunctionPass};
use crate::ir::{Function, Inst, Opcode, Value};

pub struct TrivialPhi;

impl FunctionPass for TrivialPhi {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let mut work: Vec<Inst> =
            func.all_insts().filter(|&(_, i)| func.opcode(i) == Opcode::Phi).map(|(_, i)| i).collect();
        // Pop in program order.
        work.reverse();
        let mut removed: SecondaryMap<Inst, bool> = SecondaryMap::new();
        let mut count = 0u64;
        while let Some(phi) = work.pop() {
            if removed[phi] {
                continue;
            }
            let Some(replacement) = trivial_value(func, phi) else { continue };
            let result = func.result(phi).expect("phi has a result");
            let users: Vec<Inst> = func.users(result).iter().copied().filter(|&u| u != phi).collect();
            func.replace_all_uses(result, replacement);
            func.remove_inst(phi);
            removed[phi] = true;
            count += 1;
            for u in users {
                if func.opcode(u) == Opcode::Phi && !removed[u] {
                    work.push(u);
                }
            }
        }
        cx.count("phis_removed", count);
        count > 0
    }
}

/// The single value a trivial phi merges (`undef` if it merges nothing but itself).
fn trivial_value(func: &mut Function, phi: Inst) -> Option<Value> {
    let result = func.result(phi)?;
    let mut same: Option<Value> = None;
    for &v in func.args(phi) {
        if v == result || Some(v) == same {
            continue;
        }
        if same.is_some() {
            return None;
        }
        same = Some(v);
    }
    Some(same.unwrap_or_else(|| func.undef(func.value_type(result))))
}
