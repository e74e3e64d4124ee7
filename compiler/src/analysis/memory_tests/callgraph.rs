//! Call graph: components, bottom-up order, recursion, reachability.

use super::Ir;
use crate::analysis::CallGraph;

/// `main → a → b → (c ↔ d)`, `d → d`, `main → e` (self-recursive), `b → leaf`, `dead → a`.
const CHAIN: &str = "
func @leaf() -> i32 {
bb0:
    ret 1
}
func @c(%n: i32) -> i32 {
bb0:
    %r = call i32 @d(%n)
    ret %r
}
func @d(%n: i32) -> i32 {
bb0:
    %r = call i32 @c(%n)
    %s = call i32 @d(%r)
    ret %s
}
func @b() -> i32 {
bb0:
    %x = call i32 @c(1)
    %y = call i32 @leaf()
    %z = call i32 @leaf()
    ret %x
}
func @a() -> i32 {
bb0:
    %x = call i32 @b()
    ret %x
}
func @e(%n: i32) -> i32 {
bb0:
    %r = call i32 @e(%n)
    ret %r
}
func @dead() -> i32 {
bb0:
    %x = call i32 @a()
    ret %x
}
func @main() -> i32 {
bb0:
    %x = call i32 @a()
    %y = call i32 @e(3)
    %p = call i32 getint()
    ret %x
}
";

#[test]
fn components_bottom_up_and_recursion() {
    let ir = Ir::parse(CHAIN);
    let cg = CallGraph::compute(&ir.m);
    let [leaf, c, d, b, a, e, dead, main] = ["leaf", "c", "d", "b", "a", "e", "dead", "main"].map(|n| ir.f(n));

    assert_eq!(cg.scc_of(c), &[c, d]);
    assert_eq!(cg.scc_of(d), &[c, d]);
    assert_eq!(cg.scc_of(a), &[a]);
    for f in [c, d, e] {
        assert!(cg.is_recursive(f), "{f} is recursive");
    }
    // Calling into a recursive component does not make a function recursive.
    for f in [leaf, b, a, dead, main] {
        assert!(!cg.is_recursive(f), "{f} is not recursive");
    }

    // Bottom-up: every callee's component comes no later than its caller's.
    let order = cg.bottom_up();
    assert_eq!(order.len(), 8);
    let pos = |f| order.iter().position(|&x| x == f).unwrap();
    for &f in cg.functions() {
        for &callee in cg.callees(f) {
            if cg.scc_index(callee) != cg.scc_index(f) {
                assert!(cg.scc_index(callee) < cg.scc_index(f));
                assert!(pos(callee) < pos(f));
            }
        }
    }
    let top = cg.top_down();
    // Sources last bottom-up (first top-down); `main` is the last root the search starts from.
    assert_eq!(top.first(), Some(&main));
    assert_eq!(top.last(), Some(&leaf));

    assert_eq!(cg.callees(b), &[leaf, c]);
    assert_eq!(cg.callees(d), &[c, d]);
    assert_eq!(cg.callers(a), &[dead, main]);
    assert_eq!(cg.callers(d), &[c, d]);
    assert_eq!(cg.num_calls_to(leaf), 2);
    assert_eq!(cg.num_calls_to(main), 0);
    // Runtime calls are not edges.
    assert_eq!(cg.call_sites(main).len(), 2);
    assert_eq!(cg.call_sites(main)[0], (ir.i("main", "x"), a));

    assert_eq!(cg.main(), Some(main));
    for f in [leaf, c, d, b, a, e, main] {
        assert!(cg.is_reachable_from_main(f));
    }
    assert!(!cg.is_reachable_from_main(dead));
    assert_eq!(cg.unreachable_from_main(), vec![dead]);
}

#[test]
fn detached_function_is_included() {
    let mut ir = Ir::parse(CHAIN);
    let b = ir.f("b");
    let c = ir.f("c");
    let func = ir.m.take_function(b);
    let cg = CallGraph::compute(&ir.m);
    assert!(!cg.functions().contains(&b));
    assert!(!cg.callers(c).contains(&b));
    let cg = CallGraph::compute_with(&ir.m, b, &func);
    assert!(cg.functions().contains(&b));
    assert_eq!(cg.callers(c), &[ir.m.func_by_name("d").unwrap(), b]);
    assert!(cg.is_reachable_from_main(c));
    ir.m.put_back(b, func);
}

#[test]
fn no_main_means_nothing_is_dead() {
    let ir = Ir::parse(
        "func @f() -> void {
bb0:
    ret
}
",
    );
    let cg = CallGraph::compute(&ir.m);
    assert_eq!(cg.main(), None);
    assert!(!cg.is_reachable_from_main(ir.f("f")));
    assert!(cg.unreachable_from_main().is_empty());
    assert_eq!(cg.sccs().len(), 1);
}
