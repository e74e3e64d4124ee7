//! Instruction cloning shared by the unrolling passes (`full-unroll`, `unroll`).
//!
//! A loop body is copied by cloning its instructions in order, with every operand that names
//! a value of the loop replaced by that value's counterpart in the current copy. The map from
//! original values to their counterparts is kept by the caller: it seeds the header phis
//! (with the values they have in the iteration being copied) and reads the copies' results.

use rustc_hash::FxHashMap;

use crate::ir::{Block, Function, Inst, Value};

/// Value of each loop-defined value in the copy being built.
pub type ValueMap = FxHashMap<Value, Value>;

/// `v`'s counterpart in the current copy (`v` itself when it is defined outside the loop).
pub fn mapped(map: &ValueMap, v: Value) -> Value {
    map.get(&v).copied().unwrap_or(v)
}

/// The incoming value of `phi` from `from` (a canonical loop phi has exactly one).
pub fn phi_input(func: &Function, phi: Inst, from: Block) -> Option<Value> {
    func.inst(phi).phi_incoming().find(|&(b, _)| b == from).map(|(_, v)| v)
}

/// Clones `insts` (in order) before `pos`, mapping operands through `map` and recording each
/// result's copy in `map`. Returns the copies.
pub fn clone_before(func: &mut Function, insts: &[Inst], map: &mut ValueMap, pos: Inst) -> Vec<Inst> {
    let mut copies = Vec::with_capacity(insts.len());
    for &inst in insts {
        let mut data = func.inst(inst).clone();
        for a in data.args.iter_mut() {
            *a = mapped(map, *a);
        }
        let copy = func.create_inst(data);
        func.insert_inst_before(pos, copy);
        if let (Some(r), Some(c)) = (func.result(inst), func.result(copy)) {
            map.insert(r, c);
        }
        copies.push(copy);
    }
    copies
}

/// The values the header phis `phis` take in the next iteration, given `map` for the current
/// one: their inputs from `latch`, mapped.
pub fn next_phi_values(func: &Function, phis: &[Inst], latch: Block, map: &ValueMap) -> Vec<(Value, Value)> {
    phis.iter()
        .filter_map(|&phi| {
            let r = func.result(phi)?;
            let v = phi_input(func, phi, latch)?;
            Some((r, mapped(map, v)))
        })
        .collect()
}
