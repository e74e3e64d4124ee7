//! BackendStage `arm-shrink-wrap`: the prologue and epilogue only on the paths that need a frame.
//!
//! A recursive function's base case (`if (n < 2) return n;`), a search that returns at
//! once when a node was seen, a sort that returns for ranges of one element: the early
//! exit neither calls nor spills, yet with the prologue at the entry it pushes and pops
//! every callee-saved register of the slow path. Shrink-wrapping moves the prologue to the
//! start of the *frame region*, the part of the function that needs it, and leaves the
//! early exits as a bare `bx lr`.
//!
//! # The region
//! A block *needs the frame* when it calls, touches the stack (spill slots, allocas,
//! stack arguments) or mentions a callee-saved register or `lr`. The region is the set of
//! blocks dominated by `start`, the nearest common dominator of the blocks that need the
//! frame, and it is used only when
//! * `start` is not the entry (else nothing is gained);
//! * no edge leaves the region (every path through `start` ends in a return inside it, so
//!   each of those returns has the frame to pop and no block outside runs with it);
//! * no edge from inside the region enters `start` (the prologue runs once per call).
//!
//! Every block that needs the frame then runs after the prologue, and every block outside
//! the region runs without it, so its returns are `bx lr`: nothing outside writes a
//! callee-saved register, `lr` or the stack. The prologue at `start` saves the caller's
//! values exactly as it would at the entry, since nothing before it touched them.
//!
//! # Two halves
//! * Before allocation, [`split_entry_values`] copies every value that flows from outside
//!   the region into it at the start of `start`, and renames its uses inside. Without the
//!   copy, an argument used after a call lives in one callee-saved register from the entry
//!   on (`mov r9, r0` before the early exit's compare), and the early exit needs the frame
//!   too. With it, the original lives only outside the region and the allocator keeps it in
//!   its argument register; the copy is the one that crosses calls. When the slow path
//!   joins the early exit at a block that only returns (`if (n < 2) r = n; else r = …;
//!   return r;`), its jumps there first become returns of their own ([`fold_shared_returns`]),
//!   which closes the region.
//! * After allocation and the other stages, [`place`] computes the region from the
//!   allocated code (what the allocator actually chose) and the emitter puts the prologue
//!   at its start. When the allocated code has no such region (pressure forced a
//!   callee-saved register outside it) the frame is set up at the entry as usual.
//!
//! The prologue is never shrink-wrapped when it would need `ip` as a scratch (a frame too
//! large for one `sub sp, sp, #imm`): `ip` may hold a value at `start`.

use regalloc2::{PReg, RegClass, VReg};
use smallvec::SmallVec;

use super::frame::{FrameLayout, Region};
use super::imm::is_arm_imm;
use super::mir::{Addr, MBlockData, MFunction, MInst, Op2, OperandVisitor, PFunction, Reg};
use super::regs::{self, LR};

/// The frame region of a function whose block 0 is the entry, given each block's
/// successors and whether it needs the frame (see the module documentation); `None` when
/// the frame must be set up at the entry.
pub fn find_region(succs: &[SmallVec<[u32; 2]>], needs: &[bool]) -> Option<Region> {
    let n = succs.len();
    if n == 0 || needs[0] {
        return None;
    }
    let idom = immediate_dominators(succs);
    let mut start: Option<usize> = None;
    for b in (0..n).filter(|&b| needs[b]) {
        // A block that needs the frame but is never reached: keep the plain layout.
        idom[b]?;
        start = Some(match start {
            None => b,
            Some(s) => common_dominator(&idom, s, b),
        });
    }
    let start = start?;
    if start == 0 {
        return None;
    }
    let inside: Vec<bool> = (0..n).map(|b| idom[b].is_some() && dominated_by(&idom, b, start)).collect();
    let closed = (0..n).filter(|&b| inside[b]).all(|b| {
        succs[b].iter().all(|&s| inside[s as usize] && s as usize != start)
    });
    closed.then_some(Region { start, inside })
}

/// Immediate dominators by the Cooper–Harvey–Kennedy iteration; `None` for unreachable
/// blocks, `Some(0)` for the entry.
fn immediate_dominators(succs: &[SmallVec<[u32; 2]>]) -> Vec<Option<usize>> {
    let n = succs.len();
    // Post-order by an explicit depth-first search.
    let mut postorder = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    seen[0] = true;
    while let Some(&mut (b, ref mut next)) = stack.last_mut() {
        if let Some(&s) = succs[b].get(*next) {
            *next += 1;
            if !seen[s as usize] {
                seen[s as usize] = true;
                stack.push((s as usize, 0));
            }
        } else {
            postorder.push(b);
            stack.pop();
        }
    }
    let mut po_index = vec![usize::MAX; n];
    for (i, &b) in postorder.iter().enumerate() {
        po_index[b] = i;
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &b in &postorder {
        for &s in &succs[b] {
            preds[s as usize].push(b);
        }
    }
    let mut idom: Vec<Option<usize>> = vec![None; n];
    idom[0] = Some(0);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in postorder.iter().rev().filter(|&&b| b != 0) {
            let mut new_idom: Option<usize> = None;
            for &p in preds[b].iter().filter(|&&p| idom[p].is_some()) {
                new_idom = Some(match new_idom {
                    None => p,
                    Some(cur) => intersect(&idom, &po_index, p, cur),
                });
            }
            if new_idom.is_some() && idom[b] != new_idom {
                idom[b] = new_idom;
                changed = true;
            }
        }
    }
    idom
}

fn intersect(idom: &[Option<usize>], po_index: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while po_index[a] < po_index[b] {
            a = idom[a].unwrap_or(0);
        }
        while po_index[b] < po_index[a] {
            b = idom[b].unwrap_or(0);
        }
    }
    a
}

/// Whether `a` dominates the reachable block `b`.
fn dominated_by(idom: &[Option<usize>], mut b: usize, a: usize) -> bool {
    loop {
        if b == a {
            return true;
        }
        match idom[b] {
            Some(d) if d != b => b = d,
            _ => return false,
        }
    }
}

fn common_dominator(idom: &[Option<usize>], a: usize, b: usize) -> usize {
    let mut x = a;
    while !dominated_by(idom, b, x) {
        x = idom[x].unwrap_or(0);
    }
    x
}

/// Whether the instruction addresses the stack frame.
fn touches_frame(inst: &MInst) -> bool {
    match inst {
        MInst::Ldr { addr, .. }
        | MInst::Str { addr, .. }
        | MInst::Vldr { addr, .. }
        | MInst::Vstr { addr, .. }
        | MInst::VStrF64 { addr, .. } => matches!(addr, Addr::Frame { .. }),
        MInst::FrameAddr { .. } | MInst::Call { .. } => true,
        MInst::Pred { inst, .. } => touches_frame(inst),
        _ => false,
    }
}

/// Before allocation: when the function has a frame region, copies the values flowing into
/// it at its start and renames their uses inside (see the module documentation). Returns
/// whether it changed the function.
pub fn split_entry_values(mf: &mut MFunction) -> bool {
    let needs: Vec<bool> = mf.blocks.iter().map(|b| b.insts.iter().any(touches_frame)).collect();
    let (region, folded) = match find_region(&machine_succs(mf), &needs) {
        Some(region) => (region, false),
        None => match fold_shared_returns(mf, &needs) {
            Some(region) => (region, true),
            None => return false,
        },
    };
    let returns_outside = mf
        .blocks
        .iter()
        .enumerate()
        .any(|(b, data)| !region.inside[b] && matches!(data.insts.last(), Some(MInst::Ret { .. })));
    if !returns_outside {
        return folded;
    }

    // Values defined inside the region; every other value used inside flows in.
    let mut defined = vec![false; mf.num_vregs];
    struct Defs<'a>(&'a mut [bool]);
    impl OperandVisitor for Defs<'_> {
        fn reg_use(&mut self, _: &mut Reg) {}
        fn reg_def(&mut self, r: &mut Reg) {
            mark(self.0, *r)
        }
        fn reg_temp(&mut self, r: &mut Reg) {
            mark(self.0, *r)
        }
        fn reg_reuse_def(&mut self, r: &mut Reg, _: usize) {
            mark(self.0, *r)
        }
        fn fixed_use(&mut self, _: &mut Reg, _: PReg) {}
        fn fixed_def(&mut self, r: &mut Reg, _: PReg) {
            mark(self.0, *r)
        }
    }
    fn mark(set: &mut [bool], r: Reg) {
        if let Reg::Virt(v) = r {
            set[v.vreg()] = true;
        }
    }
    for (_, data) in mf.blocks.iter().enumerate().filter(|&(b, _)| region.inside[b]) {
        for &p in &data.params {
            defined[p.vreg()] = true;
        }
        for inst in &data.insts {
            inst.visit_ref(&mut Defs(&mut defined));
        }
    }

    // The renaming, made on first sight of each value flowing in.
    let mut renamed: Vec<Option<VReg>> = vec![None; mf.num_vregs];
    let mut copies: Vec<MInst> = Vec::new();
    let mut num_vregs = mf.num_vregs;
    let mut rename = |v: VReg, copies: &mut Vec<MInst>| -> VReg {
        if defined[v.vreg()] {
            return v;
        }
        *renamed[v.vreg()].get_or_insert_with(|| {
            let new = VReg::new(num_vregs, v.class());
            num_vregs += 1;
            copies.push(match v.class() {
                RegClass::Int => MInst::Mov { rd: Reg::Virt(new), op2: Op2::Reg(Reg::Virt(v)) },
                RegClass::Float | RegClass::Vector => MInst::VMov { sd: Reg::Virt(new), sm: Reg::Virt(v) },
            });
            new
        })
    };
    struct Uses<'a, F: FnMut(VReg, &mut Vec<MInst>) -> VReg> {
        rename: &'a mut F,
        copies: &'a mut Vec<MInst>,
    }
    impl<F: FnMut(VReg, &mut Vec<MInst>) -> VReg> Uses<'_, F> {
        fn map(&mut self, r: &mut Reg) {
            if let Reg::Virt(v) = r {
                *v = (self.rename)(*v, self.copies);
            }
        }
    }
    impl<F: FnMut(VReg, &mut Vec<MInst>) -> VReg> OperandVisitor for Uses<'_, F> {
        fn reg_use(&mut self, r: &mut Reg) {
            self.map(r)
        }
        fn reg_def(&mut self, _: &mut Reg) {}
        fn reg_temp(&mut self, _: &mut Reg) {}
        fn reg_reuse_def(&mut self, _: &mut Reg, _: usize) {}
        fn fixed_use(&mut self, r: &mut Reg, _: PReg) {
            self.map(r)
        }
        fn fixed_def(&mut self, _: &mut Reg, _: PReg) {}
    }
    for b in (0..mf.blocks.len()).filter(|&b| region.inside[b]) {
        let data = &mut mf.blocks[b];
        for inst in &mut data.insts {
            inst.visit(&mut Uses { rename: &mut rename, copies: &mut copies });
        }
        for args in &mut data.branch_args {
            for v in args.iter_mut() {
                *v = rename(*v, &mut copies);
            }
        }
    }
    if copies.is_empty() {
        return folded;
    }
    mf.num_vregs = num_vregs;
    mf.blocks[region.start].insts.splice(0..0, copies);
    true
}

fn machine_succs(mf: &MFunction) -> Vec<SmallVec<[u32; 2]>> {
    mf.blocks.iter().map(|b| b.succs.iter().map(|s| s.index() as u32).collect()).collect()
}

/// Whether the block only returns (one of its parameters, a value from elsewhere, or
/// nothing).
fn returns_only(block: &MBlockData) -> bool {
    matches!(block.insts.as_slice(), [MInst::Ret { .. }])
}

/// A function whose slow path joins the early exit at a shared return block
/// (`if (n < 2) r = n; else r = …; return r;`) has no region as it stands: an edge leaves
/// the slow path. Each jump of the slow path to a block that only returns becomes that
/// return itself (its parameter replaced by the jump's argument), which closes the region;
/// the early exit keeps the shared block. Changes the function only when that yields a
/// region, which it returns.
fn fold_shared_returns(mf: &mut MFunction, needs: &[bool]) -> Option<Region> {
    let jumps_to_return = |b: usize| match mf.blocks[b].insts.last() {
        Some(MInst::Jump { target }) if target.index() != b && returns_only(&mf.blocks[target.index()]) => {
            Some(target.index())
        }
        _ => None,
    };
    // The graph as if every such jump were a return.
    let mut succs = machine_succs(mf);
    for (b, s) in succs.iter_mut().enumerate() {
        if jumps_to_return(b).is_some() {
            s.clear();
        }
    }
    let region = find_region(&succs, needs)?;
    let folds: Vec<(usize, usize)> =
        (0..mf.blocks.len()).filter(|&b| region.inside[b]).filter_map(|b| Some((b, jumps_to_return(b)?))).collect();
    // Every shared return block keeps a way in from outside the region.
    if folds.iter().any(|&(_, j)| mf.blocks[j].preds.iter().all(|q| region.inside[q.index()])) {
        return None;
    }
    for (b, j) in folds {
        let val = match mf.blocks[j].insts.as_slice() {
            [MInst::Ret { val }] => *val,
            _ => unreachable!("returns_only"),
        };
        let params = mf.blocks[j].params.clone();
        let data = &mut mf.blocks[b];
        let args = data.branch_args.first().cloned().unwrap_or_default();
        let val = val.map(|(r, p)| match r {
            Reg::Virt(v) => match params.iter().position(|&q| q == v) {
                Some(i) => (Reg::Virt(args[i]), p),
                None => (r, p),
            },
            Reg::Phys(_) => (r, p),
        });
        *data.insts.last_mut().expect("ends in a jump") = MInst::Ret { val };
        data.succs.clear();
        data.branch_args.clear();
        let from = regalloc2::Block::new(b);
        mf.blocks[j].preds.retain(|q| *q != from);
    }
    let region_now = find_region(&machine_succs(mf), needs);
    debug_assert_eq!(region_now.as_ref().map(|r| r.start), Some(region.start));
    region_now
}

/// After allocation: the frame region of the allocated code, as block positions of
/// `pf.blocks` (see the module documentation); `None` when the frame is set up at the entry.
pub fn place(pf: &PFunction, layout: &FrameLayout) -> Option<Region> {
    if !layout.has_prologue() || !is_arm_imm(layout.locals) {
        return None;
    }
    let needs: Vec<bool> = pf
        .blocks
        .iter()
        .map(|(_, block)| {
            block.insts.iter().any(|inst| {
                touches_frame(inst) || {
                    let (defs, uses) = inst.phys_defs_uses();
                    defs.iter().chain(&uses).any(|&p| needs_saving(p))
                }
            })
        })
        .collect();
    find_region(&pf.successor_positions(), &needs)
}

/// Registers a block cannot touch without the prologue having saved them.
fn needs_saving(p: PReg) -> bool {
    regs::is_callee_saved(p) || p == regs::gpr(LR)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn succs(edges: &[&[u32]]) -> Vec<SmallVec<[u32; 2]>> {
        edges.iter().map(|s| s.iter().copied().collect()).collect()
    }

    #[test]
    fn early_exit_leaves_the_region() {
        // 0 → {1 (return), 2 (calls) → 3 (return)}
        let s = succs(&[&[1, 2], &[], &[3], &[]]);
        let r = find_region(&s, &[false, false, true, false]).expect("region");
        assert_eq!(r.start, 2);
        assert_eq!(r.inside, vec![false, false, true, true]);
    }

    #[test]
    fn no_region_when_the_entry_or_a_join_needs_the_frame() {
        let s = succs(&[&[1, 2], &[3], &[3], &[]]);
        assert_eq!(find_region(&s, &[true, false, false, false]), None);
        // The calls on both sides meet at the entry.
        assert_eq!(find_region(&s, &[false, true, true, false]), None);
        // Block 2 calls, then joins the early exit's return block: an edge leaves the region.
        assert_eq!(find_region(&s, &[false, false, true, false]), None);
    }

    #[test]
    fn no_region_around_a_loop_header() {
        // 0 → 1 ⇄ 2, 1 → 3: block 2 calls; its dominator subtree {2} is left by the back edge.
        let s = succs(&[&[1], &[2, 3], &[1], &[]]);
        assert_eq!(find_region(&s, &[false, false, true, false]), None);
        // The header itself needs the frame: the back edge enters `start`.
        let s = succs(&[&[1, 3], &[2, 4], &[1], &[], &[]]);
        assert_eq!(find_region(&s, &[false, true, false, false, false]), None);
    }

    #[test]
    fn region_after_a_chain_of_early_exits() {
        // 0 → {1 ret, 2}, 2 → {3 ret, 4}, 4 calls → 5 ret.
        let s = succs(&[&[1, 2], &[], &[3, 4], &[], &[5], &[]]);
        let r = find_region(&s, &[false, false, false, false, true, true]).expect("region");
        assert_eq!(r.start, 4);
    }

    #[test]
    fn unreachable_needy_block_keeps_the_entry_prologue() {
        let s = succs(&[&[1, 2], &[], &[], &[]]);
        assert_eq!(find_region(&s, &[false, false, true, true]), None);
    }
}
