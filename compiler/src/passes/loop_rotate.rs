//! `loop-rotate` (catalogue: LoopRotate): turns a top-tested `while` loop into a guarded
//! `do-while`.
//!
//! Before: `P: jump H`, `H: phis; test; br c, B, E`, body `B … L: jump H`.
//! After: `P: test'; br c', P2, E`, `P2: jump B`, body `B … L: jump H`, `H: test; br c, B, E`.
//! The test' in `P` is a copy of `H`'s instructions with `H`'s phis replaced by their values
//! from `P` — the first execution of the header, done once before the loop. The loop is now
//! entered only when it runs at least once, its header is `B` and `H` became its latch, so
//! every block of the old body that dominated the latch executes in every iteration — which
//! is what lets `licm` hoist loads and divisions out of loops that could run zero times.
//!
//! Exactness: the guard executes exactly what the first execution of `H` executed, at the
//! same point (nothing runs between `P` and `H`), so any instruction may be copied except
//! `alloca` (a second slot). Header size is limited ([`MAX_HEADER_INSTS`]) to bound code
//! growth.
//!
//! SSA repair: a value `v` defined in `H` and used outside it now has two definitions
//! reaching the body (the guard's copy and `H`'s own) and two reaching the exit `E`. `B`
//! gets `v_b = phi [P2: v'], [H: v]` and `E` gets `v_e = phi [P: v'], [H: v], [X: v_b]` for
//! the loop's other edges `X → E`; uses in blocks dominated by `B` take `v_b`, uses in blocks
//! dominated by `E` take `v_e` (phi operands count as uses at the end of their incoming
//! block). A loop with a use anywhere else is not rotated. `H`'s phis keep only their latch
//! entry and are replaced by it.
//!
//! Requirements (otherwise the loop is skipped): canonical form (run `loop-simplify`; it is
//! re-established after each rotation), the header ends in a `br` with one target `B` inside
//! and one `E` outside the loop, `B`'s only predecessor is `H`, and the latch does not exit
//! already (the loop is not bottom-tested — this also keeps the pass from rotating a loop
//! twice).

use smallvec::SmallVec;

use super::loop_simplify::LoopSimplify;
use super::{FunctionCx, FunctionPass};
use crate::analysis::{ControlFlowGraph, DomTree, Loop, LoopForest};
use crate::ir::{Block, Function, Inst, InstData, Opcode, Value};

pub struct LoopRotate;

/// Largest number of non-phi instructions (terminator included) of a header we duplicate.
pub const MAX_HEADER_INSTS: usize = 16;

impl FunctionPass for LoopRotate {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let mut changed = LoopSimplify.run(func, cx);
        let mut rotated = 0u64;
        // One rotation per round (the CFG changes); each loop is rotated at most once
        // because a rotated loop's latch exits.
        loop {
            let cfg = cx.analyses.cfg(func);
            let domtree = cx.analyses.domtree(func);
            let loops = cx.analyses.loops(func);
            let Some(plan) = loops.loops_inner_first().find_map(|l| plan_rotation(func, &cfg, &domtree, &loops, l))
            else {
                break;
            };
            rotate(func, plan);
            rotated += 1;
            changed = true;
            LoopSimplify.run(func, cx);
        }
        cx.count("loops_rotated", rotated);
        changed
    }
}

/// Where each use of a header value must be redirected.
#[derive(Clone, Copy, PartialEq, Eq)]
enum UseSite {
    Body,
    Exit,
}

/// One use of a header value: the using instruction, the operand index, where it sits.
type Use = (Inst, usize, UseSite);

struct Plan {
    pre: Block,
    header: Block,
    body: Block,
    exit: Block,
    /// Predecessors of `exit` (one entry per edge), before rotation.
    exit_preds: SmallVec<[Block; 4]>,
    /// For each header value used outside the header: (value, uses as (inst, operand, site)).
    escaping: Vec<(Value, Vec<Use>)>,
}

fn plan_rotation(func: &Function, cfg: &ControlFlowGraph, dt: &DomTree, loops: &LoopForest, l: Loop) -> Option<Plan> {
    let pre = loops.preheader(cfg, l)?;
    let header = loops.header(l);
    let [latch] = loops.latches(l) else { return None };
    if *latch == header || loops.exits(l).iter().any(|&(b, _)| b == *latch) {
        return None;
    }
    let term = func.terminator(header)?;
    if func.opcode(term) != Opcode::Br {
        return None;
    }
    let t = func.targets(term);
    let (body, exit) = match (loops.contains(l, t[0]), loops.contains(l, t[1])) {
        (true, false) => (t[0], t[1]),
        (false, true) => (t[1], t[0]),
        _ => return None,
    };
    if body == header || cfg.preds(body) != [header] || cfg.preds(exit).iter().any(|&p| !loops.contains(l, p)) {
        return None;
    }
    let insts: Vec<Inst> = func.block_insts(header).collect();
    let non_phi = insts.iter().filter(|&&i| func.opcode(i) != Opcode::Phi).count();
    if non_phi > MAX_HEADER_INSTS || insts.iter().any(|&i| matches!(func.opcode(i), Opcode::Alloca { .. })) {
        return None;
    }
    let mut escaping = Vec::new();
    for &inst in &insts {
        let Some(v) = func.result(inst) else { continue };
        let mut uses: Vec<Use> = Vec::new();
        let mut users: Vec<Inst> = func.users(v).to_vec();
        users.sort_unstable();
        users.dedup();
        for u in users {
            let is_phi = func.opcode(u) == Opcode::Phi;
            for (k, &a) in func.args(u).iter().enumerate() {
                if a != v {
                    continue;
                }
                let site_block = if is_phi { func.targets(u)[k] } else { func.inst_block(u)? };
                if site_block == header {
                    // Inside the header, or a phi operand on an edge leaving the header: the
                    // header's own value is still the right one there.
                    continue;
                }
                let site = if dt.dominates(body, site_block) {
                    UseSite::Body
                } else if dt.dominates(exit, site_block) {
                    UseSite::Exit
                } else {
                    return None;
                };
                uses.push((u, k, site));
            }
        }
        if !uses.is_empty() {
            escaping.push((v, uses));
        }
    }
    Some(Plan { pre, header, body, exit, exit_preds: cfg.preds(exit).iter().copied().collect(), escaping })
}

fn rotate(func: &mut Function, plan: Plan) {
    let Plan { pre, header, body, exit, exit_preds, escaping } = plan;
    // 1. The guard: the header's first execution, in the preheader.
    let mut map: rustc_hash::FxHashMap<Value, Value> = rustc_hash::FxHashMap::default();
    let pre_term = func.terminator(pre).expect("preheader has a terminator");
    let header_insts: Vec<Inst> = func.block_insts(header).collect();
    let mut header_phis: Vec<Inst> = Vec::new();
    for &inst in &header_insts {
        match func.opcode(inst) {
            Opcode::Phi => {
                header_phis.push(inst);
                let from_pre = func.inst(inst).phi_incoming().find(|&(b, _)| b == pre).map(|(_, v)| v);
                if let (Some(r), Some(v)) = (func.result(inst), from_pre) {
                    map.insert(r, v);
                }
            }
            op if op.is_terminator() => {}
            _ => {
                let mut data = func.inst(inst).clone();
                for a in data.args.iter_mut() {
                    if let Some(&m) = map.get(a) {
                        *a = m;
                    }
                }
                let copy = func.create_inst(data);
                func.insert_inst_before(pre_term, copy);
                if let (Some(r), Some(c)) = (func.result(inst), func.result(copy)) {
                    map.insert(r, c);
                }
            }
        }
    }
    let mapped = |map: &rustc_hash::FxHashMap<Value, Value>, v: Value| map.get(&v).copied().unwrap_or(v);
    let term = func.terminator(header).expect("header has a terminator");
    let cond = mapped(&map, func.args(term)[0]);
    let body_first = func.targets(term)[0] == body;

    // 2. The new preheader of the rotated loop and the guard branch.
    let pre2 = func.create_block();
    let mut layout = func.layout().to_vec();
    layout.pop();
    let pos = layout.iter().position(|&b| b == body).unwrap_or(layout.len());
    layout.insert(pos, pre2);
    func.set_layout(layout);
    func.append(pre2, InstData::jump(body));
    let guard = if body_first { InstData::br(cond, pre2, exit) } else { InstData::br(cond, exit, pre2) };
    func.replace_inst(pre_term, guard);

    // 3. Existing phis of the body and the exit get entries for their new predecessors.
    for phi in func.block_phis(body).collect::<Vec<_>>() {
        let w = func.inst(phi).phi_incoming().find(|&(b, _)| b == header).map(|(_, v)| v);
        if let Some(w) = w {
            func.push_phi_incoming(phi, pre2, mapped(&map, w));
        }
    }
    for phi in func.block_phis(exit).collect::<Vec<_>>() {
        let w = func.inst(phi).phi_incoming().find(|&(b, _)| b == header).map(|(_, v)| v);
        if let Some(w) = w {
            func.push_phi_incoming(phi, pre, mapped(&map, w));
        }
    }

    // 4. New phis for header values used outside the header.
    for (v, uses) in escaping {
        let ty = func.value_type(v);
        let v_guard = mapped(&map, v);
        let v_body = create_phi_at_start(func, body, ty, &[(header, v), (pre2, v_guard)]);
        let needs_exit = uses.iter().any(|&(_, _, s)| s == UseSite::Exit);
        let v_exit = needs_exit.then(|| {
            let mut incoming: Vec<(Block, Value)> =
                exit_preds.iter().map(|&p| (p, if p == header { v } else { v_body })).collect();
            incoming.push((pre, v_guard));
            create_phi_at_start(func, exit, ty, &incoming)
        });
        for (u, k, site) in uses {
            let new = match site {
                UseSite::Body => v_body,
                UseSite::Exit => v_exit.unwrap_or(v_body),
            };
            func.set_arg(u, k, new);
        }
    }

    // 5. The header's phis keep only their latch entry; replace them by it.
    for phi in header_phis {
        let mut i = 0;
        while i < func.targets(phi).len() {
            if func.targets(phi)[i] == pre {
                func.remove_phi_incoming(phi, i);
            } else {
                i += 1;
            }
        }
        let r = func.result(phi).expect("phi has a result");
        let only = func.args(phi).first().copied();
        match only {
            Some(x) if x != r && func.args(phi).iter().all(|&a| a == x) => {
                func.replace_all_uses(r, x);
                func.remove_inst(phi);
            }
            _ => {}
        }
    }
}

fn create_phi_at_start(func: &mut Function, block: Block, ty: crate::ir::Type, incoming: &[(Block, Value)]) -> Value {
    let inst = func.create_inst(InstData::phi(ty, incoming));
    func.prepend_inst(block, inst);
    func.result(inst).expect("phi has a result")
}
