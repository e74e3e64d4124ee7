//! BackendStage `arm-if-convert`: small branch shapes become conditionally executed instructions.
//!
//! ARM instructions carry a condition, so a short block that runs only when the flags say so
//! can run unconditionally *predicated* on those flags instead of being branched around:
//!
//! * **diamond** — `b<cc> T`, falling into `F`; `F` and `T` each reached only from there
//!   and both going on to the same block `J`: both bodies move into the branching block,
//!   `F`'s under `!cc`, `T`'s under `cc`, followed by a jump to `J` (usually falling through);
//! * **triangle** — one side is such a block that goes on to the other side: its body moves
//!   into the branching block under its condition, the branch disappears;
//! * **loop latch** — one side is such a block that closes a natural loop (typically an edge
//!   block holding the moves of the back edge, jumping to the loop header) while the other
//!   side leaves that loop: its body moves up under its condition and the branch to it
//!   becomes a conditional branch straight to the header, saving the unconditional `b` of
//!   every iteration.
//!
//! Before those, **range checks** `0 <= x && x < c` (two compare-and-branch blocks) become one
//! unsigned comparison (see [`fuse_range_checks`]).
//!
//! Why: executing up to a few instructions whose condition fails is cheaper than a branch
//! (never mispredicted, and the `b` to the join disappears); the limits below keep the
//! always-executed instructions within what the branches cost.
//!
//! Soundness: predicated instructions do not write the flags, so every one of them, and the
//! branch after them, sees the flags of the comparison that ended the branching block; only
//! instructions whose whole expansion can carry a condition and that never set flags are
//! moved (no compares, calls, returns, `mov<cc>` pairs, zeroing loops). A moved block must
//! have no other way in (no other branch to it, no fall-through from another block), so it
//! disappears. Divisions are never predicated (too slow to execute for nothing).
//!
//! Runs on allocated code right before `arm-branch-opt` (which then threads, lays out and
//! drops the jumps to the next block): blocks end in a return, `b` or `b<cc>` + `b`
//! ([`MInst::CondBr`]). Blocks that end otherwise (after layout) are read as falling through, so
//! the stage also works there. Empty blocks (a lone `b`, such as edge blocks whose moves all
//! vanished) are sides of no cost, which turns a triangle with an edge block into a diamond.
//! Only `arm-branch-opt` runs after it: a conditional definition also keeps the old value,
//! which only [`MInst::phys_defs_uses`] knows about, and the earlier stages' liveness
//! reasoning does not.

use regalloc2::Block;
use rustc_hash::{FxHashMap, FxHashSet};
use smallvec::SmallVec;

use super::imm::is_arm_imm;
use super::mir::{CmpOp, Cond, MInst, Op2, PFunction, Reg, VOp};

/// Largest triangle side (instructions, model cycles).
const TRIANGLE_MAX: (u32, u32) = (3, 4);
/// Largest pair of diamond sides together.
const DIAMOND_MAX: (u32, u32) = (4, 5);
/// Largest loop-latch block.
const LATCH_MAX: (u32, u32) = (3, 4);

/// Where a block goes after its optional conditional branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Then {
    Goto(Block),
    /// A return, or falling off the end of the function.
    Leave,
}

/// How a block ends: `body` instructions, then the branches.
#[derive(Clone, Copy, Debug)]
struct Exit {
    cond: Option<(Cond, Block)>,
    then: Then,
    body_len: usize,
}

fn exit_of(pf: &PFunction, i: usize) -> Exit {
    let insts = &pf.blocks[i].1.insts;
    let next = pf.blocks.get(i + 1).map_or(Then::Leave, |(b, _)| Then::Goto(*b));
    let n = insts.len();
    match insts.last() {
        Some(MInst::Jump { target }) => match n.checked_sub(2).map(|k| &insts[k]) {
            Some(MInst::BranchCond { cc, target: x }) => {
                Exit { cond: Some((*cc, *x)), then: Then::Goto(*target), body_len: n - 2 }
            }
            _ => Exit { cond: None, then: Then::Goto(*target), body_len: n - 1 },
        },
        Some(MInst::CondBr { cc, taken, not_taken }) => {
            Exit { cond: Some((*cc, *taken)), then: Then::Goto(*not_taken), body_len: n - 1 }
        }
        Some(MInst::BranchCond { cc, target }) => Exit { cond: Some((*cc, *target)), then: next, body_len: n - 1 },
        Some(MInst::Ret { .. }) => Exit { cond: None, then: Then::Leave, body_len: n },
        _ => Exit { cond: None, then: next, body_len: n },
    }
}

/// `(instructions, model cycles)` of `inst` when it can be predicated.
fn predicated_cost(inst: &MInst) -> Option<(u32, u32)> {
    let one_insn_imm = |v: u32| is_arm_imm(v) || is_arm_imm(!v) || v <= 0xffff;
    Some(match inst {
        MInst::Alu { op2: Op2::Shifted(..), .. } | MInst::Mov { op2: Op2::Shifted(..), .. } => (1, 2),
        MInst::Alu { .. } | MInst::Mov { .. } | MInst::FrameAddr { .. } => (1, 1),
        MInst::LoadImm { value, .. } => {
            if one_insn_imm(*value) {
                (1, 1)
            } else {
                (2, 2)
            }
        }
        MInst::LoadSym { .. } => (2, 2),
        MInst::Mul { .. } | MInst::Mla { .. } | MInst::Mls { .. } | MInst::Smmul { .. } => (1, 4),
        MInst::Ldr { .. } => (1, 3),
        MInst::Str { .. } => (1, 1),
        MInst::Vldr { .. } | MInst::Vstr { .. } | MInst::VMov { .. } | MInst::VNeg { .. } => (1, 2),
        MInst::VMovImm { .. } | MInst::VMovFromCore { .. } | MInst::VMovToCore { .. } => (1, 2),
        MInst::VCvtF32S32 { .. } | MInst::VCvtS32F32 { .. } => (1, 4),
        MInst::VArith { op: VOp::Add | VOp::Sub, .. } => (1, 4),
        MInst::VArith { op: VOp::Mul, .. } => (1, 5),
        MInst::VMac { sd, sa, .. } => {
            if sd == sa {
                (1, 5)
            } else {
                (2, 7)
            }
        }
        _ => return None,
    })
}

/// The body and destination of block `i` if it can move into a predecessor: no conditional
/// branch of its own, a `Goto` exit, every instruction predicable, within `limit`.
fn movable_side(pf: &PFunction, i: usize, limit: (u32, u32)) -> Option<(&[MInst], Block, (u32, u32))> {
    let exit = exit_of(pf, i);
    let (None, Then::Goto(dest)) = (exit.cond, exit.then) else {
        return None;
    };
    let body = &pf.blocks[i].1.insts[..exit.body_len];
    let mut cost = (0, 0);
    for inst in body {
        let (n, c) = predicated_cost(inst)?;
        cost = (cost.0 + n, cost.1 + c);
    }
    (cost.0 <= limit.0 && cost.1 <= limit.1).then_some((body, dest, cost))
}

fn predicated(body: &[MInst], cc: Cond) -> impl Iterator<Item = MInst> + '_ {
    body.iter().map(move |inst| MInst::Pred { cc, inst: Box::new(inst.clone()) })
}

/// The edges between blocks, kept up to date as rewrites change block ends: how many reach
/// each block (the function entry counts as one into the first block) and from where.
struct Edges {
    incoming: FxHashMap<Block, u32>,
    preds: FxHashMap<Block, SmallVec<[Block; 2]>>,
}

impl Edges {
    fn new(pf: &PFunction) -> Edges {
        let mut edges = Edges { incoming: FxHashMap::default(), preds: FxHashMap::default() };
        if let Some((entry, _)) = pf.blocks.first() {
            *edges.incoming.entry(*entry).or_default() += 1;
        }
        for i in 0..pf.blocks.len() {
            edges.add_exits(pf, i);
        }
        edges
    }

    fn successors(pf: &PFunction, i: usize) -> impl Iterator<Item = Block> {
        let exit = exit_of(pf, i);
        exit.cond.map(|(_, x)| x).into_iter().chain(match exit.then {
            Then::Goto(t) => Some(t),
            Then::Leave => None,
        })
    }

    fn add_exits(&mut self, pf: &PFunction, i: usize) {
        let from = pf.blocks[i].0;
        for to in Edges::successors(pf, i) {
            *self.incoming.entry(to).or_default() += 1;
            self.preds.entry(to).or_default().push(from);
        }
    }

    fn remove_exits(&mut self, pf: &PFunction, i: usize) {
        let from = pf.blocks[i].0;
        for to in Edges::successors(pf, i) {
            if let Some(n) = self.incoming.get_mut(&to) {
                *n -= 1;
            }
            if let Some(preds) = self.preds.get_mut(&to)
                && let Some(k) = preds.iter().position(|&p| p == from)
            {
                preds.swap_remove(k);
            }
        }
    }

    /// The reverse post-order number of every block reachable from the entry.
    fn reverse_postorder(pf: &PFunction) -> FxHashMap<Block, u32> {
        let pos: FxHashMap<Block, usize> = pf.blocks.iter().enumerate().map(|(k, (b, _))| (*b, k)).collect();
        let mut visited = vec![false; pf.blocks.len()];
        let mut postorder = Vec::with_capacity(pf.blocks.len());
        let mut stack: Vec<(usize, SmallVec<[Block; 2]>)> = Vec::new();
        if !pf.blocks.is_empty() {
            visited[0] = true;
            stack.push((0, Edges::successors(pf, 0).collect()));
        }
        while let Some((i, succs)) = stack.last_mut() {
            let i = *i;
            match succs.pop() {
                Some(s) => {
                    if let Some(&k) = pos.get(&s)
                        && !visited[k]
                    {
                        visited[k] = true;
                        stack.push((k, Edges::successors(pf, k).collect()));
                    }
                }
                None => {
                    postorder.push(pf.blocks[i].0);
                    stack.pop();
                }
            }
        }
        postorder.iter().rev().enumerate().map(|(n, b)| (*b, n as u32)).collect()
    }

    fn preds(&self, b: Block) -> &[Block] {
        self.preds.get(&b).map_or(&[][..], |v| v.as_slice())
    }
}

/// A conversion found at a branching block: its new tail and the blocks that disappear.
struct Rewrite {
    tail: Vec<MInst>,
    removed: Vec<Block>,
}

/// `swapped_invert`: the injected fault [`crate::faults::ARM_IF_CONVERT_SWAPPED_INVERT`].
fn find_rewrite(
    pf: &PFunction,
    i: usize,
    edges: &Edges,
    pos: &FxHashMap<Block, usize>,
    rpo: &FxHashMap<Block, u32>,
    swapped_invert: bool,
) -> Option<Rewrite> {
    let b = pf.blocks[i].0;
    let exit = exit_of(pf, i);
    let (Some((cc, t)), Then::Goto(n)) = (exit.cond, exit.then) else {
        return None;
    };
    let else_cc = match cc {
        Cond::Gt if swapped_invert => Cond::Lt,
        Cond::Lt if swapped_invert => Cond::Gt,
        _ => cc.invert(),
    };
    if t == n || t == b || n == b {
        return None;
    }
    let single = |x: Block| edges.incoming.get(&x) == Some(&1);
    let side = |x: Block, limit| if single(x) { movable_side(pf, pos[&x], limit) } else { None };
    let jump = |target| MInst::Jump { target };

    // Diamond.
    if let (Some((bn, jn, cn)), Some((bt, jt, ct))) = (side(n, DIAMOND_MAX), side(t, DIAMOND_MAX))
        && jn == jt
        && jn != t
        && jn != n
        && cn.0 + ct.0 <= DIAMOND_MAX.0
        && cn.1 + ct.1 <= DIAMOND_MAX.1
    {
        let mut tail: Vec<MInst> = predicated(bn, else_cc).chain(predicated(bt, cc)).collect();
        tail.push(jump(jn));
        return Some(Rewrite { tail, removed: vec![n, t] });
    }
    // Triangles.
    if let Some((bn, dest, _)) = side(n, TRIANGLE_MAX)
        && dest == t
    {
        let mut tail: Vec<MInst> = predicated(bn, else_cc).collect();
        tail.push(jump(t));
        return Some(Rewrite { tail, removed: vec![n] });
    }
    if let Some((bt, dest, _)) = side(t, TRIANGLE_MAX)
        && dest == n
    {
        let mut tail: Vec<MInst> = predicated(bt, cc).collect();
        tail.push(jump(n));
        return Some(Rewrite { tail, removed: vec![t] });
    }
    // Loop latches: the side's jump to `dest` closes a natural loop (`dest` dominates the
    // side) that the other successor leaves. Otherwise the side may be the exit of an inner
    // loop to an outer header: predicating it into the inner loop would run it on every
    // inner iteration.
    // A header dominates its latch, so it comes first in reverse post-order: an edge going
    // forward in that order closes no loop (checked first, as walking the loop is costly).
    let retreating = |side: Block, dest: Block| match (rpo.get(&side), rpo.get(&dest)) {
        (Some(s), Some(d)) => d <= s,
        _ => true,
    };
    let latch = |side: Block, dest: Block, other: Block| {
        retreating(side, dest) && matches!(natural_loop(pf, edges, side, dest), Some(body) if !body.contains(&other))
    };
    if let Some((bn, dest, _)) = side(n, LATCH_MAX)
        && dest != t
        && latch(n, dest, t)
    {
        let mut tail: Vec<MInst> = predicated(bn, else_cc).collect();
        tail.push(MInst::CondBr { cc: else_cc, taken: dest, not_taken: t });
        return Some(Rewrite { tail, removed: vec![n] });
    }
    if let Some((bt, dest, _)) = side(t, LATCH_MAX)
        && dest != n
        && latch(t, dest, n)
    {
        let mut tail: Vec<MInst> = predicated(bt, cc).collect();
        tail.push(MInst::CondBr { cc, taken: dest, not_taken: n });
        return Some(Rewrite { tail, removed: vec![t] });
    }
    None
}

/// The blocks of the natural loop closed by the edge `latch → header`: those reaching
/// `latch` without passing `header`, plus both. `None` when the entry reaches `latch` that
/// way (`header` does not dominate it: no natural loop).
fn natural_loop(pf: &PFunction, edges: &Edges, latch: Block, header: Block) -> Option<FxHashSet<Block>> {
    let entry = pf.blocks.first()?.0;
    let mut body: FxHashSet<Block> = [header, latch].into_iter().collect();
    let mut stack = vec![latch];
    while let Some(b) = stack.pop() {
        if b == entry && b != header {
            return None;
        }
        for &p in edges.preds(b) {
            if body.insert(p) {
                stack.push(p);
            }
        }
    }
    Some(body)
}

/// Cost: the edges and block positions are built once and updated per rewrite, and blocks
/// that disappear are marked and dropped at the end, so a function costs time linear in its
/// blocks (plus the natural-loop walks of latch candidates). Marking is safe for
/// [`exit_of`]'s fall-through reading: a removed side had one way in, the branch of the
/// block rewritten, whose new tail ends in explicit branches; so no remaining block falls
/// through into a removed one.
pub fn run(pf: &mut PFunction, faults: &crate::faults::FaultSet) {
    let swapped_invert = faults.is_on(crate::faults::ARM_IF_CONVERT_SWAPPED_INVERT);
    fuse_range_checks(pf);
    let mut edges = Edges::new(pf);
    let pos: FxHashMap<Block, usize> = pf.blocks.iter().enumerate().map(|(k, (b, _))| (*b, k)).collect();
    // Rewrites keep every path between the remaining blocks (through the branching block
    // instead of the side), so the order computed once stays valid for them.
    let rpo = Edges::reverse_postorder(pf);
    let mut removed: FxHashSet<Block> = FxHashSet::default();
    let mut i = 0;
    while i < pf.blocks.len() {
        if removed.contains(&pf.blocks[i].0) {
            i += 1;
            continue;
        }
        match find_rewrite(pf, i, &edges, &pos, &rpo, swapped_invert) {
            Some(rewrite) => {
                edges.remove_exits(pf, i);
                for r in &rewrite.removed {
                    edges.remove_exits(pf, pos[r]);
                }
                let body_len = exit_of(pf, i).body_len;
                let block = &mut pf.blocks[i].1;
                block.insts.truncate(body_len);
                block.insts.extend(rewrite.tail);
                edges.add_exits(pf, i);
                removed.extend(rewrite.removed);
                // Look at the same block again; every rewrite removes a block, so this ends.
            }
            None => i += 1,
        }
    }
    if !removed.is_empty() {
        pf.blocks.retain(|(b, _)| !removed.contains(b));
    }
}

/// The register `x` and the successor taken when `x >= 0`, and the other one, if block
/// `i` ends in a sign test of `x`: `cmp x, #0` + `b<ge|lt|pl|mi>` or `cmn x, #1` +
/// `b<gt|le>` (`x > -1`).
fn sign_test(pf: &PFunction, i: usize) -> Option<(Reg, Block, Block)> {
    let exit = exit_of(pf, i);
    let (Some((cc, taken)), Then::Goto(not_taken)) = (exit.cond, exit.then) else { return None };
    let MInst::Cmp { op, rn, op2: Op2::Imm(k) } = pf.blocks[i].1.insts.get(exit.body_len.checked_sub(1)?)? else {
        return None;
    };
    let non_negative_taken = match (op, k, cc) {
        (CmpOp::Cmp, 0, Cond::Ge | Cond::Pl) | (CmpOp::Cmn, 1, Cond::Gt) => true,
        (CmpOp::Cmp, 0, Cond::Lt | Cond::Mi) | (CmpOp::Cmn, 1, Cond::Le) => false,
        _ => return None,
    };
    Some(if non_negative_taken { (*rn, taken, not_taken) } else { (*rn, not_taken, taken) })
}

/// Range checks `0 <= x && x < c` become one unsigned comparison, `cmp x, #c; blo`.
///
/// Shape: block `a` ends in a sign test of `x` (see [`sign_test`]) whose `x >= 0` side is a
/// block `b` reached from nowhere else holding only `cmp x, #c` (`c > 0`) and a branch on
/// `lt`/`ge` (or `le`/`gt`: `x <= c`, unsigned `ls`), whose failing side is `a`'s failing
/// side `f` itself or a block with the same instructions as `f` reached only from `b` (the
/// edge blocks of the two exits of a short-circuit condition usually hold the same moves).
/// `a` then compares `x` with `c` itself and branches on `lo` (`ls`) to `b`'s passing side
/// and to `f` otherwise; `b` and the copy of `f` disappear.
///
/// Sound: for `c ≥ 0`, `x` read as unsigned is below `c` exactly when `0 ≤ x < c` (a
/// negative `x` reads as at least 2³¹ > `c`). `b` reads `x` in the same register with
/// nothing in between, and both failing sides run the same instructions from the same
/// registers (only the flags differ, and no block reads flags it did not set: this runs
/// before if-conversion moves code under conditions). `b`'s branch was the only way into `b`
/// and into the copy of `f`, so no other path changes.
fn fuse_range_checks(pf: &mut PFunction) {
    let edges = Edges::new(pf);
    let pos: FxHashMap<Block, usize> = pf.blocks.iter().enumerate().map(|(k, (b, _))| (*b, k)).collect();
    let single = |x: Block| edges.incoming.get(&x) == Some(&1);
    let ends_in_jump = |pf: &PFunction, k: usize| matches!(pf.blocks[k].1.insts.last(), Some(MInst::Jump { .. }));
    let mut removed: FxHashSet<Block> = FxHashSet::default();
    for i in 0..pf.blocks.len() {
        let a = pf.blocks[i].0;
        if removed.contains(&a) {
            continue;
        }
        let Some((x, b, f)) = sign_test(pf, i) else { continue };
        if b == a || f == a || b == f || !single(b) || removed.contains(&b) || removed.contains(&f) {
            continue;
        }
        let Some(&bi) = pos.get(&b) else { continue };
        let exit_b = exit_of(pf, bi);
        let (Some((cc, taken)), Then::Goto(not_taken)) = (exit_b.cond, exit_b.then) else { continue };
        let (1, Some(&MInst::Cmp { op: CmpOp::Cmp, rn, op2: Op2::Imm(c) })) =
            (exit_b.body_len, pf.blocks[bi].1.insts.first())
        else {
            continue;
        };
        if rn != x || c == 0 || c > i32::MAX as u32 {
            continue;
        }
        let (unsigned_cc, pass, fail) = match cc {
            Cond::Lt => (Cond::Lo, taken, not_taken),
            Cond::Ge => (Cond::Lo, not_taken, taken),
            Cond::Le => (Cond::Ls, taken, not_taken),
            Cond::Gt => (Cond::Ls, not_taken, taken),
            _ => continue,
        };
        if pass == b || fail == b || pass == fail || removed.contains(&pass) || removed.contains(&fail) {
            continue;
        }
        let copy_of_f = if fail == f {
            None
        } else {
            let (Some(&fi), Some(&gi)) = (pos.get(&f), pos.get(&fail)) else { continue };
            let same = single(fail)
                && fail != a
                && ends_in_jump(pf, fi)
                && ends_in_jump(pf, gi)
                && pf.blocks[fi].1.insts == pf.blocks[gi].1.insts;
            if !same {
                continue;
            }
            Some(fail)
        };
        let body_len = exit_of(pf, i).body_len;
        let insts = &mut pf.blocks[i].1.insts;
        insts.truncate(body_len - 1);
        insts.push(MInst::Cmp { op: CmpOp::Cmp, rn: x, op2: Op2::Imm(c) });
        insts.push(MInst::CondBr { cc: unsigned_cc, taken: pass, not_taken: f });
        removed.insert(b);
        removed.extend(copy_of_f);
    }
    if !removed.is_empty() {
        pf.blocks.retain(|(b, _)| !removed.contains(b));
    }
}
