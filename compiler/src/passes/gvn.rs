//! `gvn` (catalogue: SimpleGVN): global value numbering scoped by the dominator tree, with
//! canonicalisation, pure calls, and loads whose memory nothing wrote in between.
//!
//! Why: source code and lowering compute the same address, index or subexpression many times
//! (`a[i][j]` in every statement of a loop body); computing it once and reusing it saves the
//! work and the registers for the operands of the repeated copies.
//!
//! Algorithm: walk the dominator tree in preorder with a scoped table from a *key* — a hash of
//! (opcode, result type, canonical operands, and for phis the incoming blocks) — to the value
//! that first computed it. An instruction whose key is in the table is redundant: the earlier
//! instruction dominates it and computed the same value, so its uses take that value and it
//! goes. Leaving a block's subtree drops the keys its blocks added, so only dominating
//! definitions are ever reused. The table is keyed on the key, never on instruction identity.
//!
//! Canonical keys (each an exact identity):
//! * chains of i32 `add` (and of `mul`) are flattened into their sorted list of leaves (up to
//!   [`MAX_LEAVES`]), so `(a+b)+c ≡ (c+a)+b` — exact under wrapping arithmetic; a sum of two
//!   equal leaves `x+x` is keyed as `x*2`;
//! * other commutative integer operations and `icmp`/`fcmp eq/ne` sort their two operands;
//!   any `icmp`/`fcmp` puts the lower-numbered operand first and swaps its condition;
//! * float `fadd`/`fmul` are not reordered (on ARM which NaN comes out depends on the order)
//!   and float chains are never reassociated.
//!
//! What is numbered: pure instructions (`Opcode::is_pure`), including `sdiv`/`srem` — the
//! dominating copy already ran with the same operands, so removing the later one cannot remove
//! a trap; phis of one block with the same incoming pairs; calls of functions that
//! `FuncInfo` calls pure (no I/O, no writes, no reads of mutable memory — their result depends
//! on the arguments only). Loads are handled in a second sweep with memory dependence
//! ([`MemDepQuery`]): a load whose location was last read by a dominating load of the same
//! location, with nothing in between that may write it, takes that load's value; one whose
//! location was last written by a store of exactly that word (or zeroed by a `memzero`) takes
//! the stored value. `Clobber`/`Unknown` answers keep the load.
//!
//! Unreachable blocks are not visited (they are not in the dominator tree).

use std::collections::hash_map::Entry;
use std::rc::Rc;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::{FunctionCx, FunctionPass};
use crate::analysis::{AliasAnalysis, MemDep, MemDepQuery, MemLoc};
use crate::ir::{Block, Callee, Const, Function, Inst, IntCC, Opcode, Type, Value};

/// Longest `+`/`*` chain flattened into one key; longer chains key on their two operands.
pub const MAX_LEAVES: usize = 16;

pub struct Gvn;

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    op: Opcode,
    ty: Type,
    args: SmallVec<[Value; 4]>,
    /// Incoming blocks for phis (with the phi's own block first); empty otherwise.
    blocks: SmallVec<[Block; 4]>,
}

impl FunctionPass for Gvn {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let (pure, calls) = number_values(func, cx);
        let (loads, forwarded) = number_loads(func, cx);
        cx.count("values_numbered", pure);
        cx.count("calls_numbered", calls);
        cx.count("loads_numbered", loads);
        cx.count("loads_forwarded", forwarded);
        pure + calls + loads + forwarded > 0
    }
}

/// The scoped walk over pure instructions, phis and pure calls. Returns (pure insts and
/// phis, calls) removed.
fn number_values(func: &mut Function, cx: &mut FunctionCx<'_>) -> (u64, u64) {
    let domtree = cx.analyses.domtree(func);
    let info = cx.funcinfo(func);
    let read_only_as_pure = cx.faults.is_on(crate::faults::GVN_READ_ONLY_CALL_AS_PURE);
    let Some(entry) = domtree.preorder().first().copied() else { return (0, 0) };
    let mut table: FxHashMap<Key, Value> = FxHashMap::default();
    let mut added: Vec<Key> = Vec::new();
    let mut leaves: FxHashMap<Value, Rc<[Value]>> = FxHashMap::default();
    let (mut pure, mut calls) = (0, 0);
    // (block, Some(undo mark)) = leave the block's scope; (block, None) = enter it.
    let mut stack: Vec<(Block, Option<usize>)> = vec![(entry, None)];
    while let Some((block, mark)) = stack.pop() {
        if let Some(mark) = mark {
            for key in added.drain(mark..) {
                table.remove(&key);
            }
            continue;
        }
        stack.push((block, Some(added.len())));
        for &child in domtree.children(block).iter().rev() {
            stack.push((child, None));
        }
        let mut next = func.first_inst(block);
        while let Some(inst) = next {
            next = func.next_inst(inst);
            let Some(result) = func.result(inst) else { continue };
            let op = func.opcode(inst);
            let is_call = match op {
                Opcode::Call(Callee::Func(f)) => {
                    let s = info.summary(f);
                    s.is_pure() || read_only_as_pure && s.is_read_only()
                }
                _ => false,
            };
            if !(op.is_pure() || op == Opcode::Phi || is_call) {
                continue;
            }
            let key = key_of(func, inst, block, &mut leaves);
            match table.entry(key) {
                Entry::Occupied(e) => {
                    func.replace_all_uses(result, *e.get());
                    func.remove_inst(inst);
                    if is_call {
                        calls += 1;
                    } else {
                        pure += 1;
                    }
                }
                Entry::Vacant(e) => {
                    added.push(e.key().clone());
                    e.insert(result);
                }
            }
        }
    }
    (pure, calls)
}

/// The canonical key of `inst` (see the module documentation); records the leaves of `+`/`*`
/// chains in `leaves` for the instructions that use this one.
fn key_of(func: &mut Function, inst: Inst, block: Block, leaves: &mut FxHashMap<Value, Rc<[Value]>>) -> Key {
    let data = func.inst(inst);
    let (mut op, ty) = (data.op, data.ty);
    let mut args: SmallVec<[Value; 4]> = data.args.iter().copied().collect();
    let mut blocks: SmallVec<[Block; 4]> = SmallVec::new();
    match op {
        Opcode::Phi => {
            blocks.push(block);
            blocks.extend(data.targets.iter().copied());
        }
        Opcode::Add | Opcode::Mul if ty == Type::I32 => {
            let leaf_list = |v: Value| -> SmallVec<[Value; 4]> {
                match leaves.get(&v) {
                    Some(l) if func.def_inst(v).is_some_and(|d| func.opcode(d) == op) => l.iter().copied().collect(),
                    _ => SmallVec::from_slice(&[v]),
                }
            };
            let mut list = leaf_list(args[0]);
            list.extend(leaf_list(args[1]));
            if list.len() > MAX_LEAVES {
                list = args.clone();
            }
            list.sort_unstable();
            if let Some(result) = func.result(inst) {
                leaves.insert(result, Rc::from(&list[..]));
            }
            if op == Opcode::Add && list.len() == 2 && list[0] == list[1] {
                // x + x ≡ x * 2.
                let two = func.iconst(2);
                op = Opcode::Mul;
                list[1] = two;
                list.sort_unstable();
            }
            args = list;
        }
        Opcode::Icmp(cc) if args[0] > args[1] => {
            args.swap(0, 1);
            op = Opcode::Icmp(cc.swapped());
        }
        Opcode::Fcmp(cc) if args[0] > args[1] => {
            args.swap(0, 1);
            op = Opcode::Fcmp(cc.swapped());
        }
        Opcode::Icmp(IntCC::Eq | IntCC::Ne) | Opcode::Fcmp(_) => {}
        _ if op.is_commutative() && ty == Type::I32 => args.sort_unstable(),
        _ => {}
    }
    Key { op, ty, args, blocks }
}

/// What a redundant load reads.
enum Source {
    /// The result of an earlier load, or a stored value.
    Value(Value, bool),
    /// The zero a `memzero` wrote.
    Zero(Const),
}

/// The load sweep: finds, for every reachable load, an earlier load or store whose value it
/// must read, then replaces. Returns (loads replaced by loads, by stored values or zeros).
fn number_loads(func: &mut Function, cx: &mut FunctionCx<'_>) -> (u64, u64) {
    let cfg = cx.analyses.cfg(func);
    let domtree = cx.analyses.domtree(func);
    let info = cx.funcinfo(func);
    let mut found: Vec<(Inst, Source)> = Vec::new();
    {
        let aa = AliasAnalysis::new(&info, cx.func_ref, func);
        let query = MemDepQuery::new(func, &aa, &cfg, &domtree);
        for &b in cfg.rpo() {
            for inst in func.block_insts(b) {
                if func.opcode(inst) != Opcode::Load {
                    continue;
                }
                let Some(result) = func.result(inst) else { continue };
                let ty = func.value_type(result);
                let source = match query.dependency(inst, MemLoc::word(func.args(inst)[0]), true) {
                    MemDep::Load(l) => func.result(l).map(|v| Source::Value(v, true)),
                    MemDep::Store(s) => Some(Source::Value(func.args(s)[1], false)),
                    MemDep::Zero(_) => match ty {
                        Type::I32 => Some(Source::Zero(Const::Int(0))),
                        Type::F32 => Some(Source::Zero(Const::Float(0))),
                        _ => None,
                    },
                    _ => None,
                };
                let fits = match source {
                    Some(Source::Value(v, _)) => func.value_type(v) == ty,
                    Some(Source::Zero(_)) => true,
                    None => false,
                };
                if let (true, Some(source)) = (fits, source) {
                    found.push((inst, source));
                }
            }
        }
    }
    // Loads are visited in reverse post-order, so a load's source load was either kept or
    // already replaced (by something that is itself final).
    let mut replaced: FxHashMap<Value, Value> = FxHashMap::default();
    let (mut from_loads, mut forwarded) = (0, 0);
    for (inst, source) in found {
        let Some(result) = func.result(inst) else { continue };
        let value = match source {
            Source::Value(v, from_load) => {
                if from_load {
                    from_loads += 1;
                } else {
                    forwarded += 1;
                }
                replaced.get(&v).copied().unwrap_or(v)
            }
            Source::Zero(c) => {
                forwarded += 1;
                func.const_value(c)
            }
        };
        replaced.insert(result, value);
        func.replace_all_uses(result, value);
        func.remove_inst(inst);
    }
    (from_loads, forwarded)
}
