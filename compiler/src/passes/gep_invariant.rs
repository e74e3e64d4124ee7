//! `gep-invariant`: splits the loop-invariant term off a `gep` index inside a loop:
//! `gep(p, inv + x) * s` becomes `gep(q, x) * s` with `q = gep(p, inv) * s` computed once in
//! the loop's preheader.
//!
//! Why: a flattened two-dimensional access `m[i * n + j]` in the loop over `j` computes
//! `i * n + j` on every iteration (`iv-reduce` has already turned `i * n` into an outer
//! recurrence, but the sum stays), only to scale it into the register-offset address
//! `[m, t, lsl #2]`. With the row's address `q = m + 4·(i * n)` computed before the loop, the
//! access is `[q, j, lsl #2]`: one `add` less per access and iteration (`transpose`'s inner
//! loop, a sliding window `a[k + j]`, the row of a matrix product).
//!
//! What is split: an `i32` `add` in loop `L` (its innermost loop) of a non-constant operand
//! defined outside `L` (`inv`) and one defined inside `L` (`x`), when every user of the
//! `add` is a `gep` using it as its index, all with the same base `p` and scale `s`, and `p`
//! is defined outside `L`. The `add` then becomes dead, so the split costs the register of
//! `q` and saves the `add` on every iteration. An `add` used for anything else (a value
//! stored, compared, or the index of another array too) is left alone: it stays computed,
//! and splitting would only add a live register. At most [`MAX_NEW_BASES`] distinct `q` per
//! loop, to bound register pressure; the accesses through one `(p, inv, s)` share one `q`.
//! Constant terms are `gep-offsets`' business; whole invariant addresses are `licm`'s.
//!
//! Soundness: a `gep` is `base + index·scale` in wrapping 32-bit arithmetic (pointers
//! included), so `p + (inv + x)·s = (p + inv·s) + x·s (mod 2³²)` for every value, overflow or
//! not, and an intermediate `q` outside the object is harmless (addresses are only checked
//! when accessed). `q` is placed at the end of the preheader: `p` and `inv` are defined outside
//! `L` and dominate a use inside `L`, so they dominate `L`'s header and hence its preheader;
//! the preheader dominates every block of `L` and every block a value of `L` reaches. Nothing
//! moves across memory operations and no accessed address changes, so aliasing is
//! unaffected. Each loop is revisited until nothing is left to split (a split `gep`'s new
//! index `x` may itself be such a sum, `x = inv' + y`); a second run changes nothing unless
//! the cap left sums unsplit.

use rustc_hash::FxHashMap;

use super::{FunctionCx, FunctionPass};
use crate::analysis::{Loop, LoopForest};
use crate::ir::{Function, Inst, InstData, Opcode, Type, Value};

pub struct GepInvariant;

/// Most row addresses (`q`) made for one loop: each holds a register across the loop.
pub const MAX_NEW_BASES: usize = 4;

/// The split of the index `add` `index` of loop `l`: `(p, inv, x, s)` and the `gep`s using it.
fn splittable(func: &Function, loops: &LoopForest, l: Loop, index: Inst) -> Option<((Value, Value, u32), Value, Vec<Inst>)> {
    let result = func.result(index)?;
    if func.opcode(index) != Opcode::Add || func.value_type(result) != Type::I32 {
        return None;
    }
    let [a, b] = *func.args(index) else { return None };
    let invariant = |v: Value| func.as_const(v).is_none() && loops.defines_outside(func, l, v);
    let (inv, x) = match (invariant(a), invariant(b)) {
        (true, false) if !loops.defines_outside(func, l, b) => (a, b),
        (false, true) if !loops.defines_outside(func, l, a) => (b, a),
        _ => return None,
    };
    let users = func.users(result);
    let mut key = None;
    for &g in users {
        let Opcode::Gep { scale } = func.opcode(g) else { return None };
        let [p, i] = *func.args(g) else { return None };
        if i != result || p == result || !loops.defines_outside(func, l, p) {
            return None;
        }
        match key {
            None => key = Some((p, inv, scale)),
            Some(k) if k == (p, inv, scale) => {}
            Some(_) => return None,
        }
    }
    let mut geps = users.to_vec();
    geps.sort();
    geps.dedup();
    Some((key?, x, geps))
}

impl FunctionPass for GepInvariant {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let loops = cx.analyses.loops(func);
        if loops.num_loops() == 0 {
            return false;
        }
        let cfg = cx.analyses.cfg(func);
        let mut split = 0u64;
        let mut bases = 0u64;
        for l in loops.loops_inner_first() {
            let Some(pre) = loops.preheader(&cfg, l) else { continue };
            if !cfg.is_reachable(pre) {
                continue;
            }
            let mut made: FxHashMap<(Value, Value, u32), Value> = FxHashMap::default();
            // Until nothing is left to split: a split `gep`'s new index may itself be a sum
            // of an invariant and a varying value, now used only by `gep`s of `q`.
            loop {
                // The loop's own index adds, in layout order (deterministic).
                let mut candidates = Vec::new();
                for &b in func.layout() {
                    if loops.innermost_loop(b) != Some(l) || !cfg.is_reachable(b) {
                        continue;
                    }
                    for inst in func.block_insts(b) {
                        if let Some(found) = splittable(func, &loops, l, inst) {
                            candidates.push(found);
                        }
                    }
                }
                let before = split;
                for (key, x, geps) in candidates {
                    let q = match made.get(&key) {
                        Some(&q) => q,
                        None if made.len() < MAX_NEW_BASES => {
                            let (p, inv, scale) = key;
                            let term = func.terminator(pre).expect("a reachable preheader ends in a terminator");
                            let q = func.insert_value_before(term, InstData::gep(p, inv, scale));
                            made.insert(key, q);
                            q
                        }
                        None => continue,
                    };
                    for g in geps {
                        func.replace_inst(g, InstData::gep(q, x, key.2));
                        split += 1;
                    }
                }
                if split == before {
                    break;
                }
            }
            bases += made.len() as u64;
        }
        cx.count("geps_split", split);
        cx.count("row_addresses", bases);
        split > 0
    }
}
