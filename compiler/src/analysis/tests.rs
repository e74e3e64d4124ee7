//! Tests of the CFG analyses on small hand-written functions.

use super::*;
use crate::ir::{Block, FuncRef, Function, InstData, Module, Opcode, Type, parse_module};
use crate::test_rng::Rng;

fn parse(text: &str) -> (Module, FuncRef) {
    let m = parse_module(text).unwrap_or_else(|e| panic!("{e}"));
    let f = m.func_refs()[0];
    (m, f)
}

/// Blocks by layout index (`bb(func, 2)` is `bb2` of the printed form).
fn bb(func: &Function, i: usize) -> Block {
    func.layout()[i]
}

fn blocks(func: &Function, idx: &[usize]) -> Vec<Block> {
    idx.iter().map(|&i| bb(func, i)).collect()
}

const DIAMOND: &str = "func @f(%c: i1) -> i32 {
bb0:
    br %c, bb1, bb2
bb1:
    jump bb3
bb2:
    jump bb3
bb3:
    %x = phi i32 [bb1: 1], [bb2: 2]
    ret %x
}
";

#[test]
fn diamond() {
    let (m, f) = parse(DIAMOND);
    let func = m.func(f);
    let cfg = ControlFlowGraph::compute(func);
    assert_eq!(cfg.succs(bb(func, 0)), &blocks(func, &[1, 2])[..]);
    assert_eq!(cfg.preds(bb(func, 3)), &blocks(func, &[1, 2])[..]);
    assert_eq!(cfg.rpo()[0], bb(func, 0));
    assert_eq!(*cfg.rpo().last().unwrap(), bb(func, 3));
    assert_eq!(cfg.rpo().len(), 4);
    let dt = DomTree::compute(&cfg);
    assert_eq!(dt.idom(bb(func, 0)), None);
    for i in 1..4 {
        assert_eq!(dt.idom(bb(func, i)), Some(bb(func, 0)));
    }
    assert!(dt.dominates(bb(func, 0), bb(func, 3)));
    assert!(!dt.dominates(bb(func, 1), bb(func, 3)));
    assert!(dt.dominates(bb(func, 1), bb(func, 1)));
    assert!(!dt.strictly_dominates(bb(func, 1), bb(func, 1)));
    assert_eq!(dt.children(bb(func, 0)).len(), 3);
    assert_eq!(dt.preorder()[0], bb(func, 0));
    assert_eq!(dt.common_dominator(bb(func, 1), bb(func, 2)), Some(bb(func, 0)));
    assert_eq!(dt.depth(bb(func, 3)), 1);
    let df = DominanceFrontiers::compute(&cfg, &dt);
    assert_eq!(df.frontier(bb(func, 1)), &blocks(func, &[3])[..]);
    assert_eq!(df.frontier(bb(func, 2)), &blocks(func, &[3])[..]);
    assert!(df.frontier(bb(func, 0)).is_empty());
    assert!(df.frontier(bb(func, 3)).is_empty());
    assert_eq!(df.iterated([bb(func, 1)]), blocks(func, &[3]));
    let loops = LoopForest::compute(&cfg, &dt);
    assert_eq!(loops.num_loops(), 0);
    assert!(loops.irreducible_edges().is_empty());
}

const NESTED: &str = "func @f(%c: i1) {
bb0:
    jump bb1
bb1:
    br %c, bb2, bb5
bb2:
    br %c, bb3, bb4
bb3:
    jump bb2
bb4:
    jump bb1
bb5:
    ret
}
";

#[test]
fn nested_loops() {
    let (m, f) = parse(NESTED);
    let func = m.func(f);
    let cfg = ControlFlowGraph::compute(func);
    let dt = DomTree::compute(&cfg);
    assert_eq!(dt.idom(bb(func, 3)), Some(bb(func, 2)));
    assert_eq!(dt.idom(bb(func, 4)), Some(bb(func, 2)));
    assert_eq!(dt.idom(bb(func, 5)), Some(bb(func, 1)));
    let df = DominanceFrontiers::compute(&cfg, &dt);
    assert_eq!(df.frontier(bb(func, 3)), &blocks(func, &[2])[..]);
    assert_eq!(df.frontier(bb(func, 4)), &blocks(func, &[1])[..]);
    assert_eq!(df.frontier(bb(func, 2)), &blocks(func, &[1, 2])[..]);
    assert_eq!(df.frontier(bb(func, 1)), &blocks(func, &[1])[..]);
    assert_eq!(df.iterated([bb(func, 3)]), blocks(func, &[1, 2]));
    assert_eq!(df.iterated([bb(func, 5)]), Vec::<Block>::new());

    let loops = LoopForest::compute(&cfg, &dt);
    assert_eq!(loops.num_loops(), 2);
    let outer = loops.top_level()[0];
    assert_eq!(loops.top_level().len(), 1);
    let inner = loops.children(outer)[0];
    assert_eq!(loops.header(outer), bb(func, 1));
    assert_eq!(loops.header(inner), bb(func, 2));
    assert_eq!(loops.parent(inner), Some(outer));
    assert_eq!(loops.parent(outer), None);
    assert_eq!((loops.depth(outer), loops.depth(inner)), (1, 2));
    assert_eq!(loops.blocks(outer)[0], bb(func, 1));
    let mut ob = loops.blocks(outer).to_vec();
    ob.sort();
    assert_eq!(ob, blocks(func, &[1, 2, 3, 4]));
    let mut ib = loops.blocks(inner).to_vec();
    ib.sort();
    assert_eq!(ib, blocks(func, &[2, 3]));
    assert_eq!(loops.latches(outer), &blocks(func, &[4])[..]);
    assert_eq!(loops.latches(inner), &blocks(func, &[3])[..]);
    assert_eq!(loops.exits(outer), &[(bb(func, 1), bb(func, 5))]);
    assert_eq!(loops.exits(inner), &[(bb(func, 2), bb(func, 4))]);
    assert_eq!(loops.exit_blocks(inner), &blocks(func, &[4])[..]);
    let depths: Vec<u32> = (0..6).map(|i| loops.loop_depth(bb(func, i))).collect();
    assert_eq!(depths, [0, 1, 2, 2, 1, 0]);
    assert!(loops.contains(outer, bb(func, 3)));
    assert!(!loops.contains(inner, bb(func, 4)));
    assert!(!loops.contains(outer, bb(func, 5)));
    assert!(loops.is_header(bb(func, 2)) && !loops.is_header(bb(func, 3)));
    assert_eq!(loops.innermost_loop(bb(func, 3)), Some(inner));
    assert_eq!(loops.preheader(&cfg, outer), Some(bb(func, 0)));
    assert_eq!(loops.preheader(&cfg, inner), None, "bb1 also branches to bb5");
    let order: Vec<_> = loops.loops_inner_first().collect();
    assert_eq!(order, [inner, outer]);
}

#[test]
fn self_loop_and_merged_back_edges() {
    let text = "func @f(%c: i1) {
bb0:
    jump bb1
bb1:
    br %c, bb1, bb2
bb2:
    br %c, bb3, bb4
bb3:
    br %c, bb2, bb4
bb4:
    br %c, bb2, bb5
bb5:
    ret
}
";
    let (m, f) = parse(text);
    let func = m.func(f);
    let cfg = ControlFlowGraph::compute(func);
    let dt = DomTree::compute(&cfg);
    let loops = LoopForest::compute(&cfg, &dt);
    assert_eq!(loops.num_loops(), 2);
    let self_loop = loops.innermost_loop(bb(func, 1)).unwrap();
    assert_eq!(loops.blocks(self_loop), &blocks(func, &[1])[..]);
    assert_eq!(loops.latches(self_loop), &blocks(func, &[1])[..]);
    let l = loops.innermost_loop(bb(func, 2)).unwrap();
    assert_eq!(loops.header(l), bb(func, 2));
    let mut latches = loops.latches(l).to_vec();
    latches.sort();
    assert_eq!(latches, blocks(func, &[3, 4]), "two back edges, one loop");
    assert_eq!(loops.exit_blocks(l), &blocks(func, &[5])[..]);
}

#[test]
fn irreducible_cycle_is_not_a_loop() {
    // bb1 and bb2 form a cycle entered at both: neither dominates the other.
    let text = "func @f(%c: i1) {
bb0:
    br %c, bb1, bb2
bb1:
    jump bb2
bb2:
    br %c, bb1, bb3
bb3:
    br %c, bb0x, bb4
bb0x:
    jump bb3
bb4:
    ret
}
";
    let (m, f) = parse(text);
    let func = m.func(f);
    let cfg = ControlFlowGraph::compute(func);
    let dt = DomTree::compute(&cfg);
    assert_eq!(dt.idom(bb(func, 1)), Some(bb(func, 0)));
    assert_eq!(dt.idom(bb(func, 2)), Some(bb(func, 0)));
    let df = DominanceFrontiers::compute(&cfg, &dt);
    assert_eq!(df.frontier(bb(func, 1)), &blocks(func, &[2])[..]);
    assert_eq!(df.frontier(bb(func, 2)), &blocks(func, &[1])[..]);
    let loops = LoopForest::compute(&cfg, &dt);
    // Only the reducible bb3 <-> bb4(bb0x) cycle is a loop.
    assert_eq!(loops.num_loops(), 1);
    assert_eq!(loops.header(loops.top_level()[0]), bb(func, 3));
    assert_eq!(loops.loop_depth(bb(func, 1)), 0);
    assert_eq!(loops.loop_depth(bb(func, 2)), 0);
    assert_eq!(loops.irreducible_edges().len(), 1);
    let (from, to) = loops.irreducible_edges()[0];
    assert!(blocks(func, &[1, 2]).contains(&from) && blocks(func, &[1, 2]).contains(&to));
}

#[test]
fn irreducible_cycle_inside_a_natural_loop() {
    let text = "func @f(%c: i1) {
bb0:
    jump bb1
bb1:
    br %c, bb2, bb3
bb2:
    br %c, bb3, bb4
bb3:
    br %c, bb2, bb4
bb4:
    br %c, bb1, bb5
bb5:
    ret
}
";
    let (m, f) = parse(text);
    let func = m.func(f);
    let cfg = ControlFlowGraph::compute(func);
    let dt = DomTree::compute(&cfg);
    let loops = LoopForest::compute(&cfg, &dt);
    assert_eq!(loops.num_loops(), 1);
    let l = loops.top_level()[0];
    assert_eq!(loops.blocks(l).len(), 4);
    assert_eq!(loops.loop_depth(bb(func, 2)), 1);
    assert_eq!(loops.loop_depth(bb(func, 3)), 1);
    assert_eq!(loops.irreducible_edges().len(), 1);
}

#[test]
fn unreachable_blocks() {
    let text = "func @f(%c: i1) {
bb0:
    br %c, bb1, bb3
bb1:
    jump bb3
bb2:
    jump bb1
bb3:
    ret
bb4:
    jump bb4
}
";
    let (m, f) = parse(text);
    let func = m.func(f);
    let cfg = ControlFlowGraph::compute(func);
    assert!(!cfg.is_reachable(bb(func, 2)));
    assert!(!cfg.is_reachable(bb(func, 4)));
    assert_eq!(cfg.rpo_number(bb(func, 2)), None);
    assert_eq!(cfg.rpo().len(), 3);
    // The unreachable predecessor is still listed.
    assert_eq!(cfg.preds(bb(func, 1)), &blocks(func, &[0, 2])[..]);
    let dt = DomTree::compute(&cfg);
    assert_eq!(dt.idom(bb(func, 1)), Some(bb(func, 0)));
    assert_eq!(dt.idom(bb(func, 2)), None);
    assert!(!dt.is_reachable(bb(func, 2)));
    assert!(dt.dominates(bb(func, 1), bb(func, 2)), "everything dominates unreachable code");
    assert!(!dt.dominates(bb(func, 2), bb(func, 1)));
    assert!(!dt.dominates(bb(func, 2), bb(func, 3)));
    assert_eq!(dt.common_dominator(bb(func, 2), bb(func, 1)), None);
    let df = DominanceFrontiers::compute(&cfg, &dt);
    assert!(df.frontier(bb(func, 2)).is_empty());
    assert_eq!(df.frontier(bb(func, 1)), &blocks(func, &[3])[..]);
    let loops = LoopForest::compute(&cfg, &dt);
    assert_eq!(loops.num_loops(), 0, "the unreachable self-loop is not reported");
}

#[test]
fn repeated_edges_are_counted() {
    let text = "func @f(%c: i1) -> i32 {
bb0:
    br %c, bb1, bb1
bb1:
    %x = phi i32 [bb0: 4], [bb0: 4]
    ret %x
}
";
    let (m, f) = parse(text);
    let func = m.func(f);
    let cfg = ControlFlowGraph::compute(func);
    assert_eq!(cfg.preds(bb(func, 1)), &blocks(func, &[0, 0])[..]);
    assert_eq!(cfg.unique_preds(bb(func, 1)).as_slice(), &blocks(func, &[0])[..]);
    let dt = DomTree::compute(&cfg);
    let df = DominanceFrontiers::compute(&cfg, &dt);
    assert!(df.frontier(bb(func, 0)).is_empty());
}

#[test]
fn instruction_dominance_follows_sequence_numbers() {
    let (mut m, f) = parse(DIAMOND);
    let func = m.func_mut(f);
    let b3 = bb(func, 3);
    let b1 = bb(func, 1);
    let phi = func.first_inst(b3).unwrap();
    let ret = func.last_inst(b3).unwrap();
    let x = func.result(phi).unwrap();
    // Insert many instructions at the same place to force renumbering.
    let mut inserted = Vec::new();
    for _ in 0..100 {
        let one = func.iconst(1);
        let inst = func.create_inst(InstData::binary(Opcode::Add, x, one, Type::I32));
        func.insert_inst_before(ret, inst);
        inserted.push(inst);
    }
    // Each inserted instruction went right before `ret`, so they are in insertion order.
    let order = func.block_insts_vec(b3);
    assert_eq!(order.len(), 102);
    assert!(order.windows(2).all(|w| func.inst_seq(w[0]) < func.inst_seq(w[1])));
    // Also insert at the very start, repeatedly.
    for _ in 0..40 {
        let inst = func.create_inst(InstData::binary(Opcode::Add, x, x, Type::I32));
        func.prepend_inst(b1, inst);
    }
    let order = func.block_insts_vec(b1);
    assert!(order.windows(2).all(|w| func.inst_seq(w[0]) < func.inst_seq(w[1])));

    let cfg = ControlFlowGraph::compute(func);
    let dt = DomTree::compute(&cfg);
    assert!(dt.inst_dominates(func, phi, inserted[0]));
    assert!(dt.inst_dominates(func, inserted[3], inserted[50]));
    assert!(!dt.inst_dominates(func, inserted[50], inserted[3]));
    assert!(!dt.inst_dominates(func, ret, ret));
    let br = func.terminator(bb(func, 0)).unwrap();
    assert!(dt.inst_dominates(func, br, ret));
    assert!(!dt.inst_dominates(func, func.first_inst(b1).unwrap(), ret));
    // The phi's operand from bb1 is available at the end of bb1.
    assert!(dt.dominates_phi_use(func, func.first_inst(b1).unwrap(), b1));
}

#[test]
fn cache_recomputes_only_after_cfg_changes() {
    let (mut m, f) = parse(NESTED);
    let mut cache = AnalysisCache::new();
    let func = m.func(f);
    let d1 = cache.domtree(func);
    let l1 = cache.loops(func);
    let c1 = cache.cfg(func);
    assert!(std::sync::Arc::ptr_eq(&d1, &cache.domtree(func)));
    // A non-CFG change keeps everything.
    let func = m.func_mut(f);
    let b5 = bb(func, 5);
    let one = func.iconst(1);
    let add = func.create_inst(InstData::binary(Opcode::Add, one, one, Type::I32));
    func.prepend_inst(b5, add);
    assert!(std::sync::Arc::ptr_eq(&d1, &cache.domtree(func)));
    assert!(std::sync::Arc::ptr_eq(&l1, &cache.loops(func)));
    assert!(std::sync::Arc::ptr_eq(&c1, &cache.cfg(func)));
    // Redirect the inner latch bb3 -> bb2 to bb4: the inner loop disappears.
    let (b2, b3, b4) = (bb(func, 2), bb(func, 3), bb(func, 4));
    func.retarget_edge(b3, b2, b4);
    let l2 = cache.loops(func);
    assert!(!std::sync::Arc::ptr_eq(&l1, &l2));
    assert_eq!(l2.num_loops(), 1);
    assert_eq!(cache.cfg(func).preds(b4).len(), 2);
    assert_eq!(cache.domtree(func).idom(b4), Some(b2));
    // A clone shares the state; a different function never hits the cache.
    let other = parse(DIAMOND).0;
    let of = other.func(other.func_refs()[0]);
    assert_eq!(cache.cfg(of).rpo().len(), 4);
    cache.invalidate();
    assert_eq!(cache.frontiers(m.func(f)).frontier(b3), &[b4]);
}

#[test]
fn empty_function() {
    let func = Function::new("e", &[], Type::Void);
    let cfg = ControlFlowGraph::compute(&func);
    assert!(cfg.rpo().is_empty());
    assert_eq!(cfg.entry(), None);
    let dt = DomTree::compute(&cfg);
    assert!(dt.preorder().is_empty());
    let loops = LoopForest::compute(&cfg, &dt);
    assert_eq!(loops.num_loops(), 0);
}

/// A function with `n` blocks whose terminators are random `ret`, `jump` or `br` (entry
/// excluded as a target, as the verifier requires).
fn random_cfg(rng: &mut Rng, n: usize) -> Function {
    let mut f = Function::new("r", &[Type::I1], Type::Void);
    let blocks: Vec<Block> = (0..n).map(|_| f.create_block()).collect();
    let c = f.params[0];
    for &b in &blocks {
        let target = |rng: &mut Rng| blocks[1 + rng.below(n - 1)];
        let data = match if n == 1 { 0 } else { rng.below(6) } {
            0 => InstData::ret(None),
            1 | 2 => InstData::jump(target(rng)),
            _ => InstData::br(c, target(rng), target(rng)),
        };
        f.append(b, data);
    }
    f
}

/// Dominator sets by the textbook data-flow iteration, as bit masks.
fn naive_dominators(func: &Function, cfg: &ControlFlowGraph) -> Vec<u64> {
    let n = func.layout().len();
    let idx = |b: Block| func.layout().iter().position(|&x| x == b).unwrap();
    let all = (1u64 << n) - 1;
    let mut dom = vec![all; n];
    dom[0] = 1;
    let mut changed = true;
    while changed {
        changed = false;
        for &b in func.layout().iter().skip(1) {
            if !cfg.is_reachable(b) {
                continue;
            }
            let mut d = all;
            for &p in cfg.preds(b) {
                if cfg.is_reachable(p) {
                    d &= dom[idx(p)];
                }
            }
            d |= 1 << idx(b);
            if d != dom[idx(b)] {
                dom[idx(b)] = d;
                changed = true;
            }
        }
    }
    dom
}

#[test]
fn random_cfgs_match_brute_force() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut loops_seen, mut nested_seen, mut irreducible_seen, mut unreachable_seen) = (0, 0, 0, 0);
    for round in 0..400 {
        let n = 1 + rng.below(12);
        let func = random_cfg(&mut rng, n);
        let cfg = ControlFlowGraph::compute(&func);
        let dt = DomTree::compute(&cfg);
        let df = DominanceFrontiers::compute(&cfg, &dt);
        let loops = LoopForest::compute(&cfg, &dt);
        let dom = naive_dominators(&func, &cfg);
        let layout = func.layout();
        let reach = |b: Block| cfg.is_reachable(b);
        for (i, &a) in layout.iter().enumerate() {
            for (j, &b) in layout.iter().enumerate() {
                if !reach(a) || !reach(b) {
                    continue;
                }
                let expected = dom[j] >> i & 1 == 1;
                assert_eq!(dt.dominates(a, b), expected, "round {round}: dominates({a}, {b})");
            }
            if reach(a) && i > 0 {
                // idom: the strict dominator dominated by every other strict dominator.
                let idom = dt.idom(a).unwrap();
                let strict = dom[i] & !(1 << i);
                let k = layout.iter().position(|&x| x == idom).unwrap();
                assert!(strict >> k & 1 == 1);
                assert_eq!(dom[k], strict, "round {round}: idom of {a}");
            }
        }
        // Frontier by definition: y ∈ DF(x) iff x dominates a reachable predecessor of y and
        // does not strictly dominate y.
        for &x in layout.iter().filter(|&&b| reach(b)) {
            let mut expected: Vec<Block> = layout
                .iter()
                .copied()
                .filter(|&y| {
                    reach(y)
                        && cfg.preds(y).iter().any(|&p| reach(p) && dt.dominates(x, p))
                        && !dt.strictly_dominates(x, y)
                })
                .collect();
            expected.sort();
            assert_eq!(df.frontier(x), &expected[..], "round {round}: DF({x})");
        }
        // Loops: headers are exactly the targets of back edges; bodies are closed under
        // "reaches a latch without the header"; depth counts containing loops.
        for &h in layout.iter().filter(|&&b| reach(b)) {
            let latches: Vec<Block> = cfg.unique_preds(h).into_iter().filter(|&p| reach(p) && dt.dominates(h, p)).collect();
            assert_eq!(loops.is_header(h), !latches.is_empty(), "round {round}: header {h}");
        }
        for l in loops.loops() {
            let h = loops.header(l);
            let body = loops.blocks(l);
            assert_eq!(body[0], h);
            for &b in body {
                assert!(dt.dominates(h, b));
                assert!(loops.contains(l, b));
                if b != h {
                    assert!(cfg.preds(b).iter().filter(|&&p| reach(p)).all(|p| body.contains(p)), "round {round}");
                }
            }
            for &(from, to) in loops.exits(l) {
                assert!(body.contains(&from) && !body.contains(&to));
            }
            if let Some(p) = loops.parent(l) {
                assert!(body.iter().all(|b| loops.blocks(p).contains(b)));
                assert_eq!(loops.depth(l), loops.depth(p) + 1);
            }
        }
        for &b in layout {
            let containing = loops.loops().filter(|&l| loops.blocks(l).contains(&b)).count() as u32;
            assert_eq!(loops.loop_depth(b), containing, "round {round}: depth of {b}");
        }
        loops_seen += loops.num_loops();
        nested_seen += loops.loops().filter(|&l| loops.parent(l).is_some()).count();
        irreducible_seen += loops.irreducible_edges().len();
        unreachable_seen += layout.iter().filter(|&&b| !reach(b)).count();
        // Every retreating edge is either a back edge or listed as irreducible.
        for &b in layout.iter().filter(|&&b| reach(b)) {
            for &s in cfg.succs(b) {
                if cfg.is_retreating(b, s) {
                    let back = dt.dominates(s, b);
                    assert_eq!(!back, loops.irreducible_edges().contains(&(b, s)), "round {round}: {b}->{s}");
                }
            }
        }
    }
    // The generator must actually exercise the interesting shapes.
    assert!(loops_seen > 100 && nested_seen > 10 && irreducible_seen > 10 && unreachable_seen > 100);
}

#[test]
fn sequence_numbers_survive_random_insertions_and_removals() {
    let mut rng = Rng(12345);
    let mut f = Function::new("s", &[Type::I32], Type::Void);
    let b = f.create_block();
    let p = f.params[0];
    f.append(b, InstData::ret(None));
    for step in 0..3000 {
        let insts = f.block_insts_vec(b);
        match rng.below(5) {
            0 if insts.len() > 1 => {
                let victim = insts[rng.below(insts.len() - 1)];
                if f.result(victim).is_some_and(|v| f.has_uses(v)) {
                    continue;
                }
                f.remove_inst(victim);
            }
            1 => {
                let inst = f.create_inst(InstData::binary(Opcode::Add, p, p, Type::I32));
                f.prepend_inst(b, inst);
            }
            _ => {
                let pos = insts[rng.below(insts.len())];
                let inst = f.create_inst(InstData::binary(Opcode::Add, p, p, Type::I32));
                if rng.below(2) == 0 {
                    f.insert_inst_before(pos, inst);
                } else if pos != *insts.last().unwrap() {
                    f.insert_inst_after(pos, inst);
                } else {
                    f.insert_inst_before(pos, inst);
                }
            }
        }
        let order = f.block_insts_vec(b);
        assert!(order.windows(2).all(|w| f.inst_seq(w[0]) < f.inst_seq(w[1])), "step {step}");
    }
    assert!(f.block_insts(b).count() > 1000);
}
