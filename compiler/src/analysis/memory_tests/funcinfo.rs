//! FuncInfo: side-effect summaries and parameter points-to.

use super::Ir;
use crate::analysis::FuncInfo;
use crate::analysis::funcinfo::{MemObject, ObjectSet};
use crate::frontend::hir::Builtin;
use crate::ir::Callee;

const EFFECTS: &str = "
global @g: i32 x 1 = zero
global @h: i32 x 1 = zero
global const @k: i32 x 4 = {0: 1, 1: 2, 2: 3, 3: 4}
global @A: i32 x 100 = zero
global @B: i32 x 100 = zero

; writes through its pointer parameter, reads nothing else
func @fill(%a: ptr, %n: i32, %v: i32) -> void {
bb0:
    %p = gep %a, %n * 4
    store %v -> %p
    ret
}
; reads %src, writes %dst
func @copy(%dst: ptr, %src: ptr, %i: i32) -> void {
bb0:
    %s = gep %src, %i * 4
    %x = load i32 %s
    %d = gep %dst, %i * 4
    store %x -> %d
    ret
}
; passes a row of its parameter two levels down
func @twolevel(%x: ptr, %i: i32) -> void {
bb0:
    %row = gep %x, %i * 40
    call @fill(%row, 3, 7)
    ret
}
func @threelevel(%y: ptr) -> void {
bb0:
    call @twolevel(%y, 1)
    ret
}
; reads and writes a global
func @inc() -> void {
bb0:
    %x = load i32 @g
    %y = add i32 %x, 1
    store %y -> @g
    ret
}
func @get() -> i32 {
bb0:
    %x = load i32 @g
    ret %x
}
func @sq(%x: i32) -> i32 {
bb0:
    %a = alloca i32 x 2
    store %x -> %a
    %y = load i32 %a
    %z = mul i32 %y, %y
    ret %z
}
func @fromconst(%i: i32) -> i32 {
bb0:
    %p = gep @k, %i * 4
    %x = load i32 %p
    %y = sdiv i32 %x, 3
    ret %y
}
func @div(%x: i32, %y: i32) -> i32 {
bb0:
    %z = sdiv i32 %x, %y
    ret %z
}
func @divm1(%x: i32) -> i32 {
bb0:
    %z = srem i32 %x, -1
    ret %z
}
func @loop(%n: i32) -> i32 {
bb0:
    jump bb1
bb1:
    %i = phi i32 [bb0: 0], [bb1: %j]
    %j = add i32 %i, 1
    %c = icmp lt %j, %n
    br %c, bb1, bb2
bb2:
    ret %j
}
; `j <= n` holds forever when n is INT_MAX
func @spin(%n: i32) -> i32 {
bb0:
    jump bb1
bb1:
    %i = phi i32 [bb0: 0], [bb1: %j]
    %j = add i32 %i, 1
    %c = icmp le %j, %n
    br %c, bb1, bb2
bb2:
    ret %j
}
; reads through its parameter only
func @sum2(%a: ptr) -> i32 {
bb0:
    %x = load i32 %a
    %p = gep %a, 1 * 4
    %y = load i32 %p
    %z = add i32 %x, %y
    ret %z
}
func @print(%x: i32) -> void {
bb0:
    call putint(%x)
    ret
}
func @indirect_io() -> i32 {
bb0:
    call @print(1)
    %s = call i32 @sq(3)
    ret %s
}
func @read_into(%a: ptr) -> i32 {
bb0:
    %n = call i32 getarray(%a)
    ret %n
}
func @show(%a: ptr) -> void {
bb0:
    call putarray(10, %a)
    ret
}
; never returns normally when reached: falls off the end
func @noret() -> i32 {
bb0:
    unreachable
}
; the unreachable block is dead code: still always returns
func @deadcode() -> i32 {
bb0:
    ret 1
bb1:
    unreachable
}
func @main() -> i32 {
bb0:
    %a = alloca i32 x 10
    call @fill(%a, 0, 1)
    call @copy(@A, @B, 2)
    call @threelevel(@A)
    call @twolevel(%a, 0)
    call @inc()
    %x = call i32 @get()
    %s = call i32 @sum2(@B)
    ret %x
}
";

#[test]
fn memory_effects_through_params_and_globals() {
    let ir = Ir::parse(EFFECTS);
    let info = FuncInfo::compute(&ir.m);
    let (g, k) = (ir.g("g"), ir.g("k"));

    let fill = info.summary(ir.f("fill"));
    assert!(fill.writes_param(0) && !fill.reads_param(0));
    assert!(!fill.writes_param(1) && !fill.writes_param(2));
    assert!(fill.writes_param_memory() && !fill.reads_param_memory());
    assert_eq!(fill.writes_globals().count(), 0);
    assert!(!fill.does_io() && !fill.is_read_only() && !fill.is_pure());
    assert!(fill.always_returns());

    let copy = info.summary(ir.f("copy"));
    assert!(copy.writes_param(0) && !copy.reads_param(0));
    assert!(copy.reads_param(1) && !copy.writes_param(1));

    // Two and three levels of passing a (row of a) parameter on.
    for name in ["twolevel", "threelevel"] {
        let s = info.summary(ir.f(name));
        assert!(s.writes_param(0), "{name} writes through its parameter");
        assert!(!s.reads_param(0));
        assert!(s.always_returns());
    }

    let inc = info.summary(ir.f("inc"));
    assert!(inc.reads_global(g) && inc.writes_global(g));
    assert!(!inc.writes_global(ir.g("h")));
    assert!(!inc.is_read_only());

    let get = info.summary(ir.f("get"));
    assert!(get.reads_global(g) && !get.writes_global(g));
    assert!(get.is_read_only() && !get.is_pure());

    // A function's own stack slot is not an effect.
    let sq = info.summary(ir.f("sq"));
    assert!(sq.is_pure() && sq.is_read_only() && sq.always_returns());

    // Reading a const global keeps a function pure.
    let fc = info.summary(ir.f("fromconst"));
    assert!(fc.reads_global(k));
    assert!(fc.is_pure());
    assert!(fc.always_returns(), "division by the constant 3 cannot trap");

    let sum2 = info.summary(ir.f("sum2"));
    assert!(sum2.reads_param(0) && sum2.is_read_only() && !sum2.is_pure());

    // main: effects of callees on globals named in their bodies; the array arguments @A and
    // @B are accounted for by the parameters, and main's own slot is local.
    let main = info.summary(ir.f("main"));
    assert!(main.writes_global(g));
    assert!(main.writes_global(ir.g("A")) && main.reads_global(ir.g("B")));
    assert!(!main.writes_global(ir.g("B")));
    assert!(!main.does_io());
}

#[test]
fn termination_flags() {
    let ir = Ir::parse(EFFECTS);
    let info = FuncInfo::compute(&ir.m);
    let div = info.summary(ir.f("div"));
    assert!(div.is_pure() && !div.always_returns(), "division by a variable may trap");
    assert!(!info.summary(ir.f("divm1")).always_returns(), "INT_MIN % -1 traps");
    let lp = info.summary(ir.f("loop"));
    assert!(lp.is_pure() && lp.always_returns(), "a loop counting up to its bound finishes");
    let spin = info.summary(ir.f("spin"));
    assert!(spin.is_pure() && !spin.always_returns(), "a loop may not terminate");
    assert!(!info.summary(ir.f("noret")).always_returns());
    assert!(info.summary(ir.f("deadcode")).always_returns());
}

#[test]
fn io_is_transitive_and_builtins_touch_their_arrays() {
    let ir = Ir::parse(EFFECTS);
    let info = FuncInfo::compute(&ir.m);
    let print = info.summary(ir.f("print"));
    assert!(print.does_io() && !print.is_read_only() && !print.is_pure());
    let ind = info.summary(ir.f("indirect_io"));
    assert!(ind.does_io() && !ind.is_pure());

    let read_into = info.summary(ir.f("read_into"));
    assert!(read_into.does_io() && read_into.writes_param(0) && !read_into.reads_param(0));
    assert!(!read_into.always_returns(), "input may run out");
    let show = info.summary(ir.f("show"));
    assert!(show.does_io() && show.reads_param(0) && !show.writes_param(0));
    assert!(show.always_returns());

    let getarray = info.callee_summary(Callee::Builtin(Builtin::GetArray));
    assert!(getarray.writes_param(0) && getarray.does_io());
    let putarray = info.callee_summary(Callee::Builtin(Builtin::PutArray));
    assert!(putarray.reads_param(1) && !putarray.reads_param(0) && !putarray.writes_param(1));
    let getint = info.callee_summary(Callee::Builtin(Builtin::GetInt));
    assert!(getint.does_io() && !getint.writes_memory() && !getint.always_returns());
}

const RECURSION: &str = "
global @g: i32 x 1 = zero
global @cnt: i32 x 1 = zero
; even/odd: mutually recursive and pure
func @even(%n: i32) -> i32 {
bb0:
    %z = icmp eq %n, 0
    br %z, bb1, bb2
bb1:
    ret 1
bb2:
    %m = sub i32 %n, 1
    %r = call i32 @odd(%m)
    ret %r
}
func @odd(%n: i32) -> i32 {
bb0:
    %z = icmp eq %n, 0
    br %z, bb1, bb2
bb1:
    ret 0
bb2:
    %m = sub i32 %n, 1
    %r = call i32 @even(%m)
    ret %r
}
; ping writes @g itself; pong only calls ping, but through the cycle both write @g and
; both write through their parameter (pong writes it via ping).
func @ping(%a: ptr, %n: i32) -> void {
bb0:
    store %n -> @g
    %c = icmp gt %n, 0
    br %c, bb1, bb2
bb1:
    %m = sub i32 %n, 1
    call @pong(%a, %m)
    ret
bb2:
    store 0 -> %a
    ret
}
func @pong(%b: ptr, %n: i32) -> void {
bb0:
    %x = load i32 @cnt
    call @ping(%b, %n)
    ret
}
; a self-recursive function passing its own slot to itself: the writes land in its own
; frames, so nothing is visible outside.
func @selfslot(%n: i32) -> i32 {
bb0:
    %s = alloca i32 x 1
    store %n -> %s
    %c = icmp gt %n, 0
    br %c, bb1, bb2
bb1:
    %m = sub i32 %n, 1
    %r = call i32 @selfslot(%m)
    ret %r
bb2:
    %v = load i32 %s
    ret %v
}
func @main() -> i32 {
bb0:
    %a = alloca i32 x 4
    call @ping(%a, 3)
    %e = call i32 @even(10)
    %s = call i32 @selfslot(4)
    ret %e
}
";

#[test]
fn recursive_components_reach_a_fixpoint() {
    let ir = Ir::parse(RECURSION);
    let info = FuncInfo::compute(&ir.m);
    let (g, cnt) = (ir.g("g"), ir.g("cnt"));
    for name in ["even", "odd"] {
        let s = info.summary(ir.f(name));
        assert!(s.is_pure(), "{name} is pure");
        assert!(s.is_recursive() && !s.always_returns());
    }
    for name in ["ping", "pong"] {
        let s = info.summary(ir.f(name));
        assert!(s.writes_global(g), "{name} writes @g through the cycle");
        assert!(s.reads_global(cnt), "{name} reads @cnt through the cycle");
        assert!(s.writes_param(0), "{name} writes through its parameter through the cycle");
        assert!(!s.is_read_only());
    }
    let selfslot = info.summary(ir.f("selfslot"));
    assert!(selfslot.is_pure() && selfslot.is_recursive());
    let main = info.summary(ir.f("main"));
    assert!(main.writes_global(g) && !main.does_io());
}

const POINTS_TO: &str = "
global @A: i32 x 100 = zero
global @B: i32 x 100 = zero
global @C: i32 x 100 = zero
global @s: i32 x 1 = zero
func @mm(%a: ptr, %b: ptr, %c: ptr) -> void {
bb0:
    %x = load i32 %a
    store %x -> %c
    ret
}
func @pass(%p: ptr, %q: ptr) -> void {
bb0:
    call @mm(%p, %q, @C)
    ret
}
func @rowuser(%r: ptr) -> void {
bb0:
    store 1 -> %r
    ret
}
func @uncalled(%u: ptr) -> void {
bb0:
    store 1 -> %u
    ret
}
func @main() -> i32 {
bb0:
    %loc = alloca i32 x 10
    call @mm(@A, @B, @C)
    call @pass(%loc, @A)
    %row = gep @B, 2 * 40
    call @rowuser(%row)
    ret 0
}
";

#[test]
fn parameter_points_to() {
    let ir = Ir::parse(POINTS_TO);
    let info = FuncInfo::compute(&ir.m);
    let (a, b, c) = (MemObject::Global(ir.g("A")), MemObject::Global(ir.g("B")), MemObject::Global(ir.g("C")));
    let loc = MemObject::Alloca(ir.f("main"), ir.i("main", "loc"));
    let set = |objs: &[MemObject]| -> Vec<MemObject> {
        let mut v = objs.to_vec();
        v.sort();
        v
    };
    let pts = |f: &str, i: usize| -> &ObjectSet { info.param_points_to(ir.f(f), i) };

    // mm's parameters: through main directly and through pass (which forwards its own).
    assert_eq!(pts("mm", 0).iter().collect::<Vec<_>>(), set(&[a, loc]));
    assert_eq!(pts("mm", 1).iter().collect::<Vec<_>>(), set(&[b, a]));
    assert_eq!(pts("mm", 2).iter().collect::<Vec<_>>(), set(&[c]));
    assert!(pts("mm", 0).intersects(pts("mm", 1)), "@A can be both a and b");
    assert!(!pts("mm", 0).intersects(pts("mm", 2)));
    assert!(!pts("mm", 1).contains(MemObject::Global(ir.g("s"))));
    // A row of @B is @B.
    assert_eq!(pts("rowuser", 0).iter().collect::<Vec<_>>(), vec![b]);
    // Nobody calls it: never runs.
    assert!(pts("uncalled", 0).is_empty());
    // Scalars have no points-to set.
    assert!(pts("pass", 5).is_empty());
}

#[test]
fn unknown_pointers_and_detached_functions() {
    let text = "
global @g: i32 x 1 = zero
global @h: i32 x 4 = zero
func @wild(%a: ptr, %n: i32) -> void {
bb0:
    store 1 -> undef:ptr
    ret
}
func @caller() -> void {
bb0:
    call @wild(@h, 1)
    ret
}
func @main() -> i32 {
bb0:
    call @caller()
    ret 0
}
";
    let mut ir = Ir::parse(text);
    let info = FuncInfo::compute(&ir.m);
    let wild = info.summary(ir.f("wild"));
    assert!(wild.writes_global(ir.g("g")) && wild.writes_global(ir.g("h")));
    assert!(wild.writes_param(0) && !wild.writes_param(1));

    // Inside a function pass the function is out of the module: compute_with puts it back.
    let caller = ir.f("caller");
    let func = ir.m.take_function(caller);
    let without = FuncInfo::compute(&ir.m);
    assert!(without.summary(caller).does_io(), "an unknown function gets the worst summary");
    assert!(without.param_points_to(ir.f("wild"), 0).is_empty());
    let with = FuncInfo::compute_with(&ir.m, caller, &func);
    assert!(!with.summary(caller).does_io());
    assert!(with.summary(caller).writes_global(ir.g("h")));
    assert_eq!(with.param_points_to(ir.f("wild"), 0).iter().collect::<Vec<_>>(), vec![MemObject::Global(ir.g("h"))]);
    ir.m.put_back(caller, func);
}

#[test]
fn reused_body_facts_give_the_summaries_of_a_fresh_computation() {
    let text = "
global @h: i32 x 4 = zero
func @caller() -> void {
bb0:
    %a = alloca i32 x 4
    %p = gep @h, 1 * 4
    store 1 -> %p
    ret
}
func @main() -> i32 {
bb0:
    call @caller()
    ret 0
}
";
    let mut ir = Ir::parse(text);
    let (caller, h) = (ir.f("caller"), ir.g("h"));
    let (a, p) = (ir.v("caller", "a"), ir.v("caller", "p"));
    let mut func = ir.m.take_function(caller);
    let before = FuncInfo::compute_with(&ir.m, caller, &func);
    assert!(before.summary(caller).writes_global(h));
    // Unedited: the caller's facts are reused, with the same answers.
    let same = FuncInfo::compute_with_reusing(&ir.m, caller, &func, Some(&before));
    assert!(same.summary(caller).writes_global(h));
    // The store now goes to the caller's own array: its address map must not be reused
    // (with the old one, `%p` would still point into @h).
    let gep = func.all_insts().map(|(_, i)| i).find(|&i| func.result(i) == Some(p)).expect("the gep");
    func.set_arg(gep, 0, a);
    for info in [FuncInfo::compute_with_reusing(&ir.m, caller, &func, Some(&before)), FuncInfo::compute_with(&ir.m, caller, &func)] {
        assert!(!info.summary(caller).writes_global(h), "the edit is seen");
        assert!(info.summary(caller).is_read_only(), "a store to its own frame is no effect");
    }
    ir.m.put_back(caller, func);
}

/// Speculatable: always returns, and every access is at a constant offset inside a global or
/// an own stack slot, so a call may run where the program would not have made it.
#[test]
fn speculatable_calls_access_memory_in_bounds_whatever_the_arguments() {
    let ir = Ir::parse(EFFECTS);
    let info = FuncInfo::compute(&ir.m);
    let s = |name: &str| info.summary(ir.f(name)).is_speculatable();
    assert!(s("get"), "a global's first word");
    assert!(s("sq"), "its own slot at offset 0");
    assert!(s("loop"), "no memory access, a loop that finishes");
    assert!(!s("fromconst"), "a const global at an index the argument gives");
    assert!(!s("sum2"), "the memory of a pointer parameter");
    assert!(!s("div"), "may trap: not even always returning");
    assert!(!s("main"), "calls getint, which traps when input runs out");
}
