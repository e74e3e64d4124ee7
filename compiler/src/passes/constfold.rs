//! `constfold` (catalogue: ConstantFolding): evaluates instructions whose operands are
//! constants.
//!
//! Why: lowering and earlier passes leave arithmetic on constants (`2 * 4`, conversions of
//! literals, comparisons of constants from `while (1)`-style code); folding them shrinks the
//! code and turns constant conditional branches into jumps, which exposes dead blocks.
//!
//! What it folds, with exactly the interpreter's (and the target's) semantics:
//! * `i32` arithmetic wrapping (`wrapping_add` ...); `sdiv`/`srem` only when they cannot trap
//!   — a zero divisor or `INT_MIN / -1` stays in the code, because folding must never change
//!   whether a program traps;
//! * `f32` arithmetic with Rust's `f32` operations (IEEE binary32, round to nearest) — but
//!   never when the result is NaN: the NaN a host produces (x86: negative default NaN) is not
//!   the one the target produces (ARM: positive), and `putfloat` shows the sign. `fneg` flips
//!   the sign bit, which is exact everywhere;
//! * `icmp`/`fcmp` to `i1` constants (float comparisons with IEEE NaN rules); `zext` of
//!   `i1`; `sitofp` (round to nearest, `as f32`); `fptosi` (truncating, saturating, NaN → 0,
//!   like `vcvt` and the interpreter: Rust's `as i32`);
//! * `select` with a constant condition (or two equal operands) becomes the chosen operand;
//! * `br` on a constant becomes a `jump`; the phis of the successor no longer reached lose
//!   that edge's entry.
//!
//! `undef` operands are not folded. Instructions are visited in reverse post-order, so chains
//! fold in one sweep; the pass repeats until a sweep changes nothing.

use super::cfg_edit::remove_one_phi_entry;
use super::{FunctionCx, FunctionPass};
use crate::ir::fold::fold;
use crate::ir::{Const, Function, Inst, InstData, Opcode, Value};

pub struct ConstFold;

impl FunctionPass for ConstFold {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let mut folded = 0u64;
        let mut branches = 0u64;
        let faults = FoldFaults {
            swap_negative_sub: cx.faults.is_on(crate::faults::CONSTFOLD_SUB_SWAP),
            srem_sign: cx.faults.is_on(crate::faults::CONSTFOLD_SREM_SIGN),
            srem_abort: cx.faults.is_on(crate::faults::CONSTFOLD_SREM_ABORT),
            srem_hang: cx.faults.is_on(crate::faults::CONSTFOLD_SREM_HANG),
            srem_hoard: cx.faults.is_on(crate::faults::CONSTFOLD_SREM_HOARD),
        };
        loop {
            let mut changed = false;
            let order = cx.analyses.cfg(func).rpo().to_vec();
            for b in order {
                let mut next = func.first_inst(b);
                while let Some(inst) = next {
                    next = func.next_inst(inst);
                    match fold_one(func, inst, faults) {
                        Folded::Nothing => {}
                        Folded::Value => {
                            folded += 1;
                            changed = true;
                        }
                        Folded::Branch => {
                            branches += 1;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        cx.count("insts_folded", folded);
        cx.count("branches_folded", branches);
        folded + branches > 0
    }
}

enum Folded {
    Nothing,
    Value,
    Branch,
}

/// Injected faults (see [`crate::faults`]); all false in normal builds.
#[derive(Clone, Copy)]
struct FoldFaults {
    swap_negative_sub: bool,
    srem_sign: bool,
    srem_abort: bool,
    srem_hang: bool,
    srem_hoard: bool,
}

fn fold_one(func: &mut Function, inst: Inst, faults: FoldFaults) -> Folded {
    let op = func.opcode(inst);
    match op {
        Opcode::Br => {
            let Some(Const::Bool(c)) = func.as_const(func.args(inst)[0]) else { return Folded::Nothing };
            let targets = func.targets(inst);
            let (kept, dropped) = if c { (targets[0], targets[1]) } else { (targets[1], targets[0]) };
            let block = func.inst_block(inst).expect("visited instructions are placed");
            remove_one_phi_entry(func, dropped, block);
            func.replace_inst(inst, InstData::jump(kept));
            Folded::Branch
        }
        Opcode::Select => {
            let args = func.args(inst);
            let chosen = match func.as_const(args[0]) {
                Some(Const::Bool(c)) => Some(if c { args[1] } else { args[2] }),
                _ if args[1] == args[2] => Some(args[1]),
                _ => None,
            };
            match chosen {
                Some(v) => replace_with(func, inst, v),
                None => Folded::Nothing,
            }
        }
        _ => {
            let Some(result) = func.result(inst) else { return Folded::Nothing };
            let mut consts: Option<Vec<Const>> = func.args(inst).iter().map(|&a| func.as_const(a)).collect();
            // Fault injection (never on in normal builds): see `crate::faults`.
            if faults.swap_negative_sub
                && op == Opcode::Sub
                && let Some(args) = consts.as_deref_mut()
                && matches!(args, [Const::Int(a), Const::Int(b)] if *a < 0 && *b < 0)
            {
                args.swap(0, 1);
            }
            let Some(c) = consts.and_then(|args| fold(op, &args, func.value_type(result))) else {
                return Folded::Nothing;
            };
            if faults.srem_abort && op == Opcode::SRem && matches!(c, Const::Int(r) if r < 0) {
                abort_for_fault_injection();
            }
            if faults.srem_hoard && op == Opcode::SRem && matches!(c, Const::Int(r) if r < 0) {
                hoard_for_fault_injection();
            }
            if faults.srem_hang && op == Opcode::SRem && matches!(c, Const::Int(r) if r < 0) {
                return Folded::Value; // claims a fold, replaces nothing: the sweep never settles
            }
            let c = match c {
                Const::Int(r) if faults.srem_sign && op == Opcode::SRem && r < 0 => Const::Int(r.wrapping_neg()),
                c => c,
            };
            let v = func.const_value(c);
            replace_with(func, inst, v)
        }
    }
}

/// The `constfold-srem-abort` fault: the process dies (SIGABRT). Compiled only with the
/// `fault-injection` feature; elsewhere the flag is constant false and this is unreachable.
#[cfg(feature = "fault-injection")]
fn abort_for_fault_injection() {
    std::process::abort();
}

#[cfg(not(feature = "fault-injection"))]
fn abort_for_fault_injection() {}

/// The `constfold-srem-hoard` fault: 4 GiB reserved and leaked, 256 MiB at a time, never
/// touched (no physical memory). Only with the `fault-injection` feature.
#[cfg(feature = "fault-injection")]
fn hoard_for_fault_injection() {
    for _ in 0..16 {
        std::mem::forget(std::hint::black_box(Vec::<u8>::with_capacity(256 << 20)));
    }
}

#[cfg(not(feature = "fault-injection"))]
fn hoard_for_fault_injection() {}

fn replace_with(func: &mut Function, inst: Inst, v: Value) -> Folded {
    let result = func.result(inst).expect("folded instructions have results");
    if v == result {
        return Folded::Nothing; // a self-referential select in unreachable code
    }
    func.replace_all_uses(result, v);
    func.remove_inst(inst);
    Folded::Value
}
