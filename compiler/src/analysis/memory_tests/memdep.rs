//! Memory dependence: last writers along the dominator chain, regions between dominators,
//! loops, calls, budgets.

use super::Ir;
use crate::analysis::alias::{AliasAnalysis, MemLoc};
use crate::analysis::memdep::{MemDep, MemDepBudget, MemDepQuery};
use crate::analysis::{ControlFlowGraph, DomTree, FuncInfo};

/// The dependency of the load `%load` in function `f` (on its own address).
fn dep_of(ir: &Ir, f: &str, load: &str, want_loads: bool) -> MemDep {
    dep_with_budget(ir, f, load, want_loads, MemDepBudget::default())
}

fn dep_with_budget(ir: &Ir, f: &str, load: &str, want_loads: bool, budget: MemDepBudget) -> MemDep {
    let info = FuncInfo::compute(&ir.m);
    let func = ir.func(f);
    let aa = AliasAnalysis::new(&info, ir.f(f), func);
    let cfg = ControlFlowGraph::compute(func);
    let dt = DomTree::compute(&cfg);
    let mut q = MemDepQuery::new(func, &aa, &cfg, &dt);
    q.budget = budget;
    let at = ir.i(f, load);
    let loc = MemLoc::word(func.args(at)[0]);
    q.dependency(at, loc, want_loads)
}

const STRAIGHT: &str = "
global @g: i32 x 4 = zero
func @other(%p: ptr) -> void {
bb0:
    store 1 -> %p
    ret
}
func @f(%a: ptr, %i: i32) -> i32 {
bb0:
    %x = alloca i32 x 8
    %y = alloca i32 x 8
    %x0 = gep %x, 0 * 4
    %x1 = gep %x, 1 * 4
    %xi = gep %x, %i * 4
    %i1 = add i32 %i, 1
    %xi1 = gep %x, %i1 * 4
    store 5 -> %x0 ; S0
    store 6 -> %x1 ; S1
    %l0 = load i32 %x0
    call @other(%y)
    %l0b = load i32 %x0
    call @other(%x) ; C
    %l0c = load i32 %x0
    store 7 -> %xi ; Si
    store 8 -> %xi1 ; Si1
    %li = load i32 %xi
    %l1 = load i32 %x1
    %l1b = load i32 %x1
    %la = load i32 %a
    %lg = load i32 @g
    %x7 = gep %x, 7 * 4
    %l7 = load i32 %x7
    memzero %y, 8 ; Z
    %y3 = gep %y, 3 * 4
    %ly = load i32 %y3
    ret %l0
}
";

#[test]
fn straight_line() {
    let ir = Ir::parse(STRAIGHT);
    let i = |n: &str| ir.i("f", n);
    assert_eq!(dep_of(&ir, "f", "l0", false), MemDep::Store(i("S0")));
    // A call that writes another slot does not intervene.
    assert_eq!(dep_of(&ir, "f", "l0b", false), MemDep::Store(i("S0")));
    assert_eq!(dep_of(&ir, "f", "l0c", false), MemDep::Clobber(i("C")));
    // x[i+1] does not hide x[i] in the same iteration.
    assert_eq!(dep_of(&ir, "f", "li", false), MemDep::Store(i("Si")));
    // x[1] vs the stores to x[i], x[i+1]: unknown.
    assert_eq!(dep_of(&ir, "f", "l1", false), MemDep::Clobber(i("Si1")));
    // An earlier load of the same word, when loads are wanted.
    assert_eq!(dep_of(&ir, "f", "l1b", true), MemDep::Load(i("l1")));
    // Parameters and globals: nothing in the function writes them before.
    assert_eq!(dep_of(&ir, "f", "la", false), MemDep::Entry);
    assert_eq!(dep_of(&ir, "f", "lg", false), MemDep::Entry);
    // x[7]: the store to x[i+1] may be it.
    assert_eq!(dep_of(&ir, "f", "l7", false), MemDep::Clobber(i("Si1")));
    assert_eq!(dep_of(&ir, "f", "ly", false), MemDep::Zero(i("Z")));
}

const UNINIT: &str = "
func @u(%c: i1) -> i32 {
bb0:
    %x = alloca i32 x 2
    %l = load i32 %x
    ret %l
}
";

#[test]
fn alloca_means_uninitialised() {
    let ir = Ir::parse(UNINIT);
    assert_eq!(dep_of(&ir, "u", "l", false), MemDep::Uninit(ir.i("u", "x")));
}

const DIAMOND: &str = "
func @d(%c: i1) -> i32 {
bb0:
    %x = alloca i32 x 2
    %y = alloca i32 x 2
    store 1 -> %x ; S0
    br %c, bb1, bb2
bb1:
    store 2 -> %x ; S1
    store 3 -> %y
    jump bb3
bb2:
    store 4 -> %y
    jump bb3
bb3:
    %lx = load i32 %x
    %ly = load i32 %y
    ret %lx
}
";

#[test]
fn writes_between_dominators_clobber() {
    let ir = Ir::parse(DIAMOND);
    // bb1 writes x on one path: not a single store on every path.
    assert_eq!(dep_of(&ir, "d", "lx", false), MemDep::Clobber(ir.i("d", "S1")));
    // y is written on both paths, differently: still unknown.
    assert!(matches!(dep_of(&ir, "d", "ly", false), MemDep::Clobber(_)));
}

const DIAMOND_OK: &str = "
func @d(%c: i1) -> i32 {
bb0:
    %x = alloca i32 x 2
    %y = alloca i32 x 2
    store 1 -> %x ; S0
    br %c, bb1, bb2
bb1:
    store 3 -> %y
    jump bb3
bb2:
    %x1 = gep %x, 1 * 4
    store 4 -> %x1
    jump bb3
bb3:
    %lx = load i32 %x
    ret %lx
}
";

#[test]
fn unrelated_writes_between_dominators() {
    let ir = Ir::parse(DIAMOND_OK);
    assert_eq!(dep_of(&ir, "d", "lx", false), MemDep::Store(ir.i("d", "S0")));
}

const LOOP: &str = "
func @lp(%n: i32) -> i32 {
bb0:
    %a = alloca i32 x 100
    memzero %a, 100
    %a0 = gep %a, 0 * 4
    %a50 = gep %a, 50 * 4
    store 1 -> %a0 ; S0
    store 9 -> %a50 ; S50
    jump bb1
bb1:
    %i = phi i32 [bb0: 0], [bb2: %i1]
    %ai = gep %a, %i * 4
    %x = load i32 %ai
    %l50 = load i32 %a50
    %i1 = add i32 %i, 1
    %ai1 = gep %a, %i1 * 4
    %y = add i32 %x, 1
    %c0 = icmp lt %i1, 40
    br %c0, bb2, bb3
bb2:
    store %y -> %ai1 ; Snext
    jump bb1
bb3:
    %l0 = load i32 %a0
    ret %x
}
";

#[test]
fn loops_compare_across_iterations() {
    let ir = Ir::parse(LOOP);
    // a[i] at the loop head: the previous iteration stored a[i+1] = this iteration's a[i].
    // Comparing "i" with "i+1" symbolically would wrongly skip that store.
    assert_eq!(dep_of(&ir, "lp", "x", false), MemDep::Clobber(ir.i("lp", "Snext")));
    // a[50] is written at indices 1..40 only, but the analysis knows no range of i.
    assert_eq!(dep_of(&ir, "lp", "l50", false), MemDep::Clobber(ir.i("lp", "Snext")));
    // After the loop, a[0] may have been written by the loop (index i+1 >= 1, but unknown).
    assert!(matches!(dep_of(&ir, "lp", "l0", false), MemDep::Clobber(_)));
}

const LOOP_INVARIANT: &str = "
func @inv(%n: i32, %k: i32) -> i32 {
bb0:
    %a = alloca i32 x 100
    %b = alloca i32 x 100
    %ak = gep %a, %k * 4
    %k1 = add i32 %k, 1
    %ak1 = gep %a, %k1 * 4
    store 1 -> %ak ; Sk
    jump bb1
bb1:
    %i = phi i32 [bb0: 0], [bb1: %i1]
    %bi = gep %b, %i * 4
    store %i -> %bi
    store %i -> %ak1 ; Sk1
    %x = load i32 %ak
    %i1 = add i32 %i, 1
    %c = icmp lt %i1, %n
    br %c, bb1, bb2
bb2:
    ret %x
}
";

#[test]
fn invariant_addresses_survive_loops() {
    let ir = Ir::parse(LOOP_INVARIANT);
    // The loop writes b[i] and a[k+1], never a[k] (k is a parameter: the same every iteration).
    assert_eq!(dep_of(&ir, "inv", "x", false), MemDep::Store(ir.i("inv", "Sk")));

    let info = FuncInfo::compute(&ir.m);
    let func = ir.func("inv");
    let aa = AliasAnalysis::new(&info, ir.f("inv"), func);
    let cfg = ControlFlowGraph::compute(func);
    let dt = DomTree::compute(&cfg);
    let q = MemDepQuery::new(func, &aa, &cfg, &dt);
    let body = [func.layout()[1]];
    assert_eq!(q.first_writer(&body, MemLoc::word(ir.v("inv", "ak"))), None);
    assert_eq!(q.first_writer(&body, MemLoc::word(ir.v("inv", "ak1"))), Some(ir.i("inv", "Sk1")));
    // b[5] may be b[i] for some i.
    let b = ir.v("inv", "b");
    assert!(q.first_writer(&body, MemLoc::word(b)).is_some());
}

#[test]
fn budget_exhaustion_is_unknown() {
    let ir = Ir::parse(STRAIGHT);
    let tiny = MemDepBudget { max_insts: 3, max_blocks: 64 };
    assert_eq!(dep_with_budget(&ir, "f", "l7", false, tiny), MemDep::Unknown);
    assert_eq!(dep_with_budget(&ir, "f", "l0", false, tiny), MemDep::Store(ir.i("f", "S0")));
    let ir = Ir::parse(DIAMOND_OK);
    let no_blocks = MemDepBudget { max_insts: 100, max_blocks: 1 };
    assert_eq!(dep_with_budget(&ir, "d", "lx", false, no_blocks), MemDep::Unknown);
}

#[test]
fn at_the_end_of_a_block() {
    let ir = Ir::parse(LOOP_INVARIANT);
    let info = FuncInfo::compute(&ir.m);
    let func = ir.func("inv");
    let aa = AliasAnalysis::new(&info, ir.f("inv"), func);
    let cfg = ControlFlowGraph::compute(func);
    let dt = DomTree::compute(&cfg);
    let q = MemDepQuery::new(func, &aa, &cfg, &dt);
    let [entry, body, exit] = [0, 1, 2].map(|i| func.layout()[i]);
    let ak = MemLoc::word(ir.v("inv", "ak"));
    assert_eq!(q.dependency_at_end(entry, ak, false), MemDep::Store(ir.i("inv", "Sk")));
    assert_eq!(q.dependency_at_end(body, ak, false), MemDep::Store(ir.i("inv", "Sk")));
    assert_eq!(q.dependency_at_end(exit, ak, false), MemDep::Store(ir.i("inv", "Sk")));
    assert_eq!(q.dependency_at_end(exit, ak, true), MemDep::Load(ir.i("inv", "x")));
    let ak1 = MemLoc::word(ir.v("inv", "ak1"));
    assert_eq!(q.dependency_at_end(entry, ak1, false), MemDep::Uninit(ir.i("inv", "a")));
    assert_eq!(q.dependency_at_end(exit, ak1, false), MemDep::Store(ir.i("inv", "Sk1")));
}
