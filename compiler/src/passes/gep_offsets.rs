//! `gep-offsets`: splits the constant term off a `gep` index when another address uses the
//! same base and variable part: `gep(p, x + c) * s` becomes `gep(gep(p, x) * s, c) * s`.
//!
//! Why: `a[j - 1]`, `a[j]`, `a[j + 1]` (and the lanes `a[j + k]` of an unrolled loop) each
//! compute their own address from `j ± c`. Split, they share one address `gep(p, j)` (`gvn`
//! merges the copies) and differ only by constant byte offsets, which the ARM back end folds
//! into the load/store immediate (`vldr s0, [r1, #-4]`): one address computation and one
//! register instead of one per access.
//!
//! What is split: a `gep` in a reachable block whose index is an `add` of a non-constant `x`
//! and an `i32` constant `c` (either order) or a `sub x, c`, when the function has at least
//! two addresses with the same base, scale and variable part `x` but different constants
//! (`gep(p, x)` itself counts with `c = 0`), and one of them is loaded or stored as an `f32`.
//! A lone `a[j + 1]` is left alone: splitting it shares nothing. Integer-only groups are
//! split only on a global or local array (`p` a global or an `alloca`) with at least two
//! distinct non-zero constants: ARM word accesses have a register-offset mode, but there the
//! back end folds `c` into the base, `[sy.a+8, j, lsl #2]`, and every `a + 4c` is a constant
//! of its own in a register across the loop (the four lanes of an unrolled copy loop between
//! two global arrays took eight registers and made the enclosing loop spill). Split, the back
//! end computes `gep(p, j)` once and takes `[t, #4c]`: one `add` per iteration for the
//! registers. On an array parameter the back end already adds `j + c` once per offset, shared
//! by every array, so a parameter's integer group stays as it is, and so does a group with one
//! non-zero constant (the induction step `j + 1`, usually computed anyway, is its index).
//!
//! Soundness: a `gep` is `base + index·scale` in wrapping 32-bit arithmetic (pointers
//! included), and so are `add`/`sub`, so `p + (x + c)·s = (p + x·s) + c·s (mod 2³²)` for
//! every value, overflow or not; `sub x, c` is `x + (−c)` with the wrapping negation (also for
//! `c = INT_MIN`). The inner `gep` is inserted right before the split one; its operands `p`
//! and `x` are operands of the split `gep` and of its index, so they dominate it. Nothing
//! moves across memory operations and no value changes, so aliasing is unaffected. The pass
//! is idempotent: the split `gep` has a constant index and the inner one index `x`. The
//! index sum a split leaves without uses (an `add`/`sub`, pure) is deleted.

use rustc_hash::FxHashMap;

use super::{FunctionCx, FunctionPass};
use crate::analysis::pointers::split_index;
use crate::ir::{Function, Inst, InstData, Opcode, Type, Value, ValueDef};

pub struct GepOffsets;

/// A `gep`'s base, the variable part of its index, and its scale.
type GroupKey = (Value, Value, u32);

/// Distinct non-zero constant terms from which an integer-only group on a global or local
/// array is split (the ARM back end's `SHARED_BASE_MIN_WORD_OFFSETS`).
const MIN_WORD_OFFSETS: usize = 2;

/// Whether `base` is a global or an `alloca`: an address the back end folds constant offsets
/// into, so each `base + c` would be a constant of its own.
fn has_constant_address(func: &Function, base: Value) -> bool {
    match func.value_def(base) {
        ValueDef::Global(_) => true,
        ValueDef::Inst(i) => matches!(func.opcode(i), Opcode::Alloca { .. }),
        _ => false,
    }
}

/// Whether a load or store of an `f32` goes through `gep`'s result directly.
fn accesses_float(func: &Function, gep: Inst) -> bool {
    let Some(v) = func.result(gep) else { return false };
    func.users(v).iter().any(|&u| {
        let args = func.args(u);
        match func.opcode(u) {
            Opcode::Load => func.inst(u).ty == Type::F32,
            Opcode::Store => args[0] == v && func.value_type(args[1]) == Type::F32,
            _ => false,
        }
    })
}

impl FunctionPass for GepOffsets {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        // (base, variable index part, scale) -> the constant terms seen and the geps to split.
        #[derive(Default)]
        struct Group {
            constants: Vec<i32>,
            to_split: Vec<(Inst, i32)>,
            float_access: bool,
        }
        let mut groups: FxHashMap<GroupKey, Group> = FxHashMap::default();
        let cfg = cx.analyses.cfg(func);
        for &b in func.layout() {
            if !cfg.is_reachable(b) {
                continue;
            }
            for inst in func.block_insts(b) {
                let Opcode::Gep { scale } = func.opcode(inst) else { continue };
                let (base, index) = (func.args(inst)[0], func.args(inst)[1]);
                if func.as_const(index).is_some() {
                    continue;
                }
                let (x, c) = split_index(func, index).unwrap_or((index, 0));
                let group = groups.entry((base, x, scale)).or_default();
                if !group.constants.contains(&c) {
                    group.constants.push(c);
                }
                if c != 0 {
                    group.to_split.push((inst, c));
                }
                group.float_access |= accesses_float(func, inst);
            }
        }
        // Deterministic order: by the first instruction of each group.
        let mut splits: Vec<(GroupKey, Vec<(Inst, i32)>)> = groups
            .into_iter()
            .filter(|((base, ..), g)| {
                let nonzero = g.constants.iter().filter(|&&c| c != 0).count();
                let worth = if g.float_access {
                    g.constants.len() >= 2
                } else {
                    nonzero >= MIN_WORD_OFFSETS && has_constant_address(func, *base)
                };
                worth && !g.to_split.is_empty()
            })
            .map(|(key, g)| (key, g.to_split))
            .collect();
        splits.sort_by_key(|(_, to_split)| to_split[0].0);
        let mut split = 0u64;
        for ((base, x, scale), to_split) in splits {
            for (inst, c) in to_split {
                let old_index = func.args(inst)[1];
                let inner = func.insert_value_before(inst, InstData::gep(base, x, scale));
                let offset = func.iconst(c);
                func.replace_inst(inst, InstData::gep(inner, offset, scale));
                // The sum `x + c` it no longer reads goes when nothing else does: `iv-reduce`
                // and `unroll` run next and count a loop's instructions.
                if let Some(sum) = func.def_inst(old_index).filter(|_| !func.has_uses(old_index)) {
                    func.remove_inst(sum);
                }
                split += 1;
            }
        }
        cx.count("geps_split", split);
        split > 0
    }
}
