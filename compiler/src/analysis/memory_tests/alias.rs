//! Alias queries for every root combination, offsets, contexts, and mod/ref.

use super::Ir;
use crate::analysis::alias::{AliasAnalysis, AliasResult, Context, MemLoc, ModRef};
use crate::analysis::FuncInfo;
use crate::analysis::pointers::Root;

use AliasResult::{May, Must, No};
use Context::{AcrossIterations as Across, SameIteration as Same};

/// Checks `alias(a, b)` and `alias(b, a)` in context `ctx` for words at values `a`, `b` of
/// function `f`.
fn check(ir: &Ir, info: &FuncInfo, f: &str, pairs: &[(&str, &str, Context, AliasResult)]) {
    let func = ir.func(f);
    let aa = AliasAnalysis::new(info, ir.f(f), func);
    for &(a, b, ctx, want) in pairs {
        let (la, lb) = (MemLoc::word(ir.v(f, a)), MemLoc::word(ir.v(f, b)));
        assert_eq!(aa.alias(func, la, lb, ctx), want, "{f}: alias(%{a}, %{b}) in {ctx:?}");
        assert_eq!(aa.alias(func, lb, la, ctx), want, "{f}: alias(%{b}, %{a}) in {ctx:?}");
    }
}

const ROOTS: &str = "
global @G: i32 x 100 = zero
global @H: i32 x 100 = zero
global @P: i32 x 100 = zero
global @s: i32 x 1 = zero
global const @K: i32 x 4 = {0: 1}
; %a and %b: main passes @P to both; %c: only ever a local array of main or @G.
func @f(%a: ptr, %b: ptr, %c: ptr, %i: i32, %j: i32) -> void {
bb0:
    %x = alloca i32 x 10
    %y = alloca i32 x 10
    %x0 = gep %x, 0 * 4
    %x1 = gep %x, 1 * 4
    %xi = gep %x, %i * 4
    %xj = gep %x, %j * 4
    %y0 = gep %y, 0 * 4
    %g0 = gep @G, 0 * 4
    %g1 = gep @G, 1 * 4
    %gi = gep @G, %i * 4
    %h0 = gep @H, 0 * 4
    %s0 = gep @s, 0 * 4
    %p0 = gep @P, 0 * 4
    %a0 = gep %a, 0 * 4
    %a1 = gep %a, 1 * 4
    %ai = gep %a, %i * 4
    %ai1 = add i32 %i, 1
    %aip1 = gep %a, %ai1 * 4
    %b0 = gep %b, 0 * 4
    %c0 = gep %c, 0 * 4
    %k0 = gep @K, 0 * 4
    ret
}
func @main() -> i32 {
bb0:
    %loc = alloca i32 x 10
    call @f(@P, @P, %loc, 1, 2)
    call @f(@P, @P, @G, 1, 2)
    ret 0
}
";

#[test]
fn root_combinations() {
    let ir = Ir::parse(ROOTS);
    let info = FuncInfo::compute(&ir.m);
    check(
        &ir,
        &info,
        "f",
        &[
            // Allocas: distinct from each other and from everything outside the activation.
            ("x0", "y0", Across, No),
            ("x0", "g0", Across, No),
            ("x0", "a0", Across, No),
            ("x0", "c0", Across, No),
            ("xi", "c0", Across, No),
            // Same alloca: constant offsets decide, unknown ones don't.
            ("x0", "x1", Across, No),
            ("x0", "x", Across, Must),
            ("xi", "x0", Same, May),
            ("xi", "xj", Same, May),
            ("xi", "xi", Same, Must),
            // Globals.
            ("g0", "h0", Across, No),
            ("g0", "g1", Across, No),
            ("gi", "g1", Across, May),
            ("g0", "s0", Across, No),
            // Parameter vs global: only globals some call passes.
            ("a0", "p0", Across, May),
            ("a0", "g0", Across, No),
            ("a0", "h0", Across, No),
            ("a0", "s0", Across, No),
            ("c0", "g0", Across, May),
            ("c0", "h0", Across, No),
            // Two parameters: a and b both receive @P; c never receives @P.
            ("a0", "b0", Across, May),
            ("a0", "c0", Across, No),
            ("b0", "c0", Across, No),
            // Same parameter, offsets.
            ("a0", "a1", Across, No),
            ("a0", "a", Across, Must),
            ("ai", "a1", Same, May),
            ("ai", "aip1", Same, No),
            ("ai", "aip1", Across, No),
            // The same parameter seen as an offset atom: i is a parameter, so invariant.
            ("ai", "ai", Across, Must),
            ("k0", "g0", Across, No),
        ],
    );
}

const ROWS: &str = "
; int f(int m[][10], int i, int j): rows of a 2-D array parameter, and a[2i] vs a[2j+1]
func @rows(%m: ptr, %i: i32, %j: i32) -> void {
bb0:
    %ri = gep %m, %i * 40
    %rij = gep %ri, %j * 4
    %i1 = add i32 %i, 1
    %ri1 = gep %m, %i1 * 40
    %ri1j = gep %ri1, %j * 4
    %j1 = add i32 %j, 1
    %rij1 = gep %ri, %j1 * 4
    %j10 = add i32 %j, 10
    %rij10 = gep %ri, %j10 * 4
    %rowstart = gep %ri, 0 * 4
    %ri0 = gep %m, %i * 40
    %two_i = mul i32 %i, 2
    %even = gep %m, %two_i * 4
    %two_j = mul i32 2, %j
    %two_j1 = add i32 %two_j, 1
    %odd = gep %m, %two_j1 * 4
    %four_j = mul i32 %j, 4
    %four_j2 = add i32 %four_j, 2
    %quad = gep %m, %four_j2 * 4
    %sub = sub i32 %i1, %i
    %one = gep %m, %sub * 4
    %m1 = gep %m, 1 * 4
    ret
}
";

#[test]
fn rows_and_linear_offsets() {
    let ir = Ir::parse(ROWS);
    let info = FuncInfo::compute(&ir.m);
    check(
        &ir,
        &info,
        "rows",
        &[
            ("rij", "ri1j", Same, No),
            ("rij", "rij1", Same, No),
            // m[i][j+10] is m[i+1][j] (rows are 10 wide): the byte arithmetic sees it.
            ("rij10", "ri1j", Same, Must),
            ("rowstart", "ri0", Same, Must),
            ("rij", "rowstart", Same, May),
            // 2i vs 2j+1: different parity whatever i and j are.
            ("even", "odd", Same, No),
            ("even", "odd", Across, No),
            // 2i vs 4j+2: 8i vs 16j+8 bytes, congruent mod 8: may overlap.
            ("even", "quad", Same, May),
            ("odd", "quad", Same, No),
            // (i+1)-i folds to 1.
            ("one", "m1", Same, Must),
        ],
    );
}

const LOOP: &str = "
func @lp(%a: ptr, %n: i32) -> void {
bb0:
    %an = gep %a, %n * 4
    %n1 = add i32 %n, 1
    %an1 = gep %a, %n1 * 4
    jump bb1
bb1:
    %i = phi i32 [bb0: 0], [bb1: %i1]
    %p = phi ptr [bb0: %a], [bb1: %p1]
    %ai = gep %a, %i * 4
    %i1 = add i32 %i, 1
    %ai1 = gep %a, %i1 * 4
    %p1 = gep %p, 1 * 4
    %p2 = gep %p, 2 * 4
    %c = icmp lt %i1, %n
    br %c, bb1, bb2
bb2:
    ret
}
";

#[test]
fn contexts_in_loops() {
    let ir = Ir::parse(LOOP);
    let info = FuncInfo::compute(&ir.m);
    check(
        &ir,
        &info,
        "lp",
        &[
            // In one iteration a[i] and a[i+1] differ; across iterations they may meet.
            ("ai", "ai1", Same, No),
            ("ai", "ai1", Across, May),
            ("ai", "ai", Same, Must),
            ("ai", "ai", Across, May),
            // n is a parameter: invariant, so the comparison holds across iterations.
            ("an", "an1", Across, No),
            ("an", "an", Across, Must),
            // A pointer induction variable: p+4 vs p+8.
            ("p1", "p2", Same, No),
            ("p1", "p2", Across, May),
            ("p1", "ai", Same, May),
        ],
    );
    let func = ir.func("lp");
    let aa = AliasAnalysis::new(&info, ir.f("lp"), func);
    assert!(aa.is_varying(func, ir.v("lp", "i")));
    assert!(!aa.is_varying(func, ir.v("lp", "n1")));
    assert!(!aa.is_varying(func, ir.v("lp", "n")));
    assert_eq!(aa.pointer(func, ir.v("lp", "p2")).roots.single(), Some(Root::Param(0)));
}

const PHIS: &str = "
global @G: i32 x 8 = zero
func @ph(%c: i1) -> void {
bb0:
    %x = alloca i32 x 4
    %y = alloca i32 x 4
    %z = alloca i32 x 4
    br %c, bb1, bb2
bb1:
    jump bb3
bb2:
    jump bb3
bb3:
    %p = phi ptr [bb1: %x], [bb2: %y]
    %q = select ptr %c, %y, @G
    %p0 = gep %p, 0 * 4
    %z0 = gep %z, 0 * 4
    %x3 = gep %x, 3 * 4
    %g0 = gep @G, 0 * 4
    ret
}
";

#[test]
fn phis_and_selects_merge_roots() {
    let ir = Ir::parse(PHIS);
    let info = FuncInfo::compute(&ir.m);
    check(
        &ir,
        &info,
        "ph",
        &[
            ("p0", "z0", Across, No),
            ("p0", "x3", Across, May),
            ("p", "y", Across, May),
            ("q", "x", Across, No),
            ("q", "g0", Across, May),
            ("q", "p", Across, May),
            ("q", "z", Across, No),
        ],
    );
}

const MODREF: &str = "
global @g: i32 x 1 = zero
global @arr: i32 x 10 = zero
global const @K: i32 x 4 = {0: 1}
func @writes_param(%a: ptr) -> void {
bb0:
    %p = gep %a, 3 * 4
    store 1 -> %p
    ret
}
func @reads_param(%a: ptr) -> i32 {
bb0:
    %x = load i32 %a
    ret %x
}
func @writes_g() -> void {
bb0:
    store 2 -> @g
    ret
}
func @io() -> void {
bb0:
    call putint(1)
    ret
}
; main passes it @g, and @K (that call would trap): still, nothing writes @K
func @wk(%p: ptr) -> void {
bb0:
    store 1 -> %p ; S
    %k1 = gep @K, 1 * 4
    ret
}
func @main() -> i32 {
bb0:
    %A = alloca i32 x 10
    %B = alloca i32 x 10
    %A5 = gep %A, 5 * 4
    %B5 = gep %B, 5 * 4
    %arr2 = gep @arr, 2 * 4
    %K1 = gep @K, 1 * 4
    %g0 = gep @g, 0 * 4
    memzero %A, 10 ; Z
    call @writes_param(%A) ; C1
    %r = call i32 @reads_param(%B)
    %Ar = gep %A, %r * 4
    %A2 = gep %A, 2 * 4
    memzero %A2, 4 ; Z2
    call @writes_g() ; C2
    %n = call i32 getarray(%B)
    call putarray(10, %A) ; C3
    call @io() ; C4
    call @wk(@K) ; C5
    call @wk(@g)
    %ld = load i32 %A5
    store 7 -> %B5 ; S
    store 8 -> %arr2 ; S2
    ret 0
}
";

#[test]
fn mod_ref_of_calls_and_memory_instructions() {
    let ir = Ir::parse(MODREF);
    let info = FuncInfo::compute(&ir.m);
    let func = ir.func("main");
    let aa = AliasAnalysis::new(&info, ir.f("main"), func);
    let loc = |name: &str| MemLoc::word(ir.v("main", name));
    let g = loc("g0");
    let mr = |inst: &str, l: MemLoc| aa.mod_ref(func, ir.i("main", inst), l, Across);

    // A call writing through its parameter writes the whole object behind the argument
    // (writes_param stores at index 3, but A5 is reported too), and nothing else.
    assert_eq!(mr("C1", loc("A5")), ModRef::Mod);
    assert_eq!(mr("C1", loc("B5")), ModRef::None);
    assert_eq!(mr("C1", g), ModRef::None);
    assert_eq!(mr("r", loc("B5")), ModRef::Ref);
    assert_eq!(mr("r", loc("A5")), ModRef::None);
    assert_eq!(mr("C2", g), ModRef::Mod);
    assert_eq!(mr("C2", loc("A5")), ModRef::None);
    assert_eq!(mr("C2", loc("arr2")), ModRef::None);
    // Built-ins.
    assert_eq!(mr("n", loc("B5")), ModRef::Mod);
    assert_eq!(mr("n", loc("A5")), ModRef::None);
    assert_eq!(mr("C3", loc("A5")), ModRef::Ref);
    assert_eq!(mr("C3", loc("B5")), ModRef::None);
    // I/O is not memory.
    assert_eq!(mr("C4", loc("A5")), ModRef::None);
    assert_eq!(mr("C4", g), ModRef::None);
    let fx = aa.call_effects(func, ir.i("main", "C4")).unwrap();
    assert!(fx.io && fx.reads.is_empty() && fx.writes.is_empty());

    // Memory instructions.
    assert_eq!(mr("Z", loc("A5")), ModRef::Mod);
    assert_eq!(mr("Z", loc("B5")), ModRef::None);
    assert_eq!(mr("ld", loc("A5")), ModRef::Ref);
    assert_eq!(mr("ld", loc("A")), ModRef::None);
    assert_eq!(mr("S", loc("B5")), ModRef::Mod);
    assert_eq!(mr("S", loc("B")), ModRef::None);
    // An alloca makes its own slot uninitialised.
    assert_eq!(mr("A", loc("A5")), ModRef::Mod);
    assert_eq!(mr("A", loc("B5")), ModRef::None);
    // Nothing writes a const global, not even a call that is passed it.
    assert_eq!(mr("S2", loc("K1")), ModRef::None);
    assert_eq!(mr("C5", loc("K1")), ModRef::None);
    let wk = ir.func("wk");
    let awk = AliasAnalysis::new(&info, ir.f("wk"), wk);
    let (p, k1) = (MemLoc::word(ir.v("wk", "p")), MemLoc::word(ir.v("wk", "k1")));
    assert_eq!(awk.alias(wk, p, k1, Across), May);
    assert_eq!(awk.mod_ref(wk, ir.i("wk", "S"), k1, Across), ModRef::None);
    assert_eq!(awk.mod_ref(wk, ir.i("wk", "S"), p, Across), ModRef::Mod);

    // memzero %A, 10 covers every word of %A, even at an unknown index (accesses are in
    // bounds); memzero of words 2..6 covers exactly those.
    assert!(aa.must_overwrite(func, ir.i("main", "Z"), loc("A5"), Same));
    assert!(aa.must_overwrite(func, ir.i("main", "Z"), MemLoc::words(ir.v("main", "A"), 10), Same));
    assert!(aa.must_overwrite(func, ir.i("main", "Z"), loc("Ar"), Across));
    assert!(!aa.must_overwrite(func, ir.i("main", "Z"), loc("B5"), Same));
    assert!(aa.must_overwrite(func, ir.i("main", "Z2"), loc("A5"), Same));
    assert!(aa.must_overwrite(func, ir.i("main", "Z2"), MemLoc::words(ir.v("main", "A2"), 4), Same));
    assert!(!aa.must_overwrite(func, ir.i("main", "Z2"), MemLoc::words(ir.v("main", "A5"), 2), Same));
    assert!(!aa.must_overwrite(func, ir.i("main", "Z2"), loc("A"), Same));
    assert!(!aa.must_overwrite(func, ir.i("main", "Z2"), loc("Ar"), Same));
    assert!(aa.must_overwrite(func, ir.i("main", "S"), loc("B5"), Same));
    assert!(!aa.must_overwrite(func, ir.i("main", "S"), loc("B"), Same));
    assert!(!aa.must_overwrite(func, ir.i("main", "ld"), loc("A5"), Same));
}

const ESCAPE: &str = "
; main's slot is passed to a callee that writes it; the callee's parameter may be that slot,
; but inside main the slot is still distinct from the globals.
global @G: i32 x 10 = zero
func @w(%p: ptr, %q: ptr) -> void {
bb0:
    store 1 -> %p
    %x = load i32 %q
    ret
}
func @main() -> i32 {
bb0:
    %s = alloca i32 x 10
    %t = alloca i32 x 10
    call @w(%s, @G) ; C
    %s0 = gep %s, 0 * 4
    %t0 = gep %t, 0 * 4
    %g0 = gep @G, 0 * 4
    ret 0
}
";

#[test]
fn slot_passed_to_callee() {
    let ir = Ir::parse(ESCAPE);
    let info = FuncInfo::compute(&ir.m);
    let func = ir.func("main");
    let aa = AliasAnalysis::new(&info, ir.f("main"), func);
    let loc = |name: &str| MemLoc::word(ir.v("main", name));
    let call = ir.i("main", "C");
    assert_eq!(aa.mod_ref(func, call, loc("s0"), Across), ModRef::Mod);
    assert_eq!(aa.mod_ref(func, call, loc("t0"), Across), ModRef::None);
    assert_eq!(aa.mod_ref(func, call, loc("g0"), Across), ModRef::Ref);
    assert_eq!(aa.alias(func, loc("s0"), loc("g0"), Across), No);
    // In the callee, p and q are distinct: p is only ever main's slot, q only @G.
    let w = ir.func("w");
    let aw = AliasAnalysis::new(&info, ir.f("w"), w);
    let (p, q) = (MemLoc::word(ir.v("w", "p")), MemLoc::word(ir.v("w", "q")));
    assert_eq!(aw.alias(w, p, q, Across), No);
}

#[test]
fn recursion_frames_are_distinct() {
    // f passes its own slot to itself: inside one activation, the parameter is a *caller's*
    // slot, never this activation's.
    let ir = Ir::parse(
        "
func @f(%p: ptr, %n: i32) -> void {
bb0:
    %s = alloca i32 x 4
    store %n -> %p
    call @f(%s, %n) ; C
    ret
}
func @main() -> i32 {
bb0:
    %m = alloca i32 x 4
    call @f(%m, 3)
    ret 0
}
",
    );
    let info = FuncInfo::compute(&ir.m);
    let func = ir.func("f");
    let aa = AliasAnalysis::new(&info, ir.f("f"), func);
    let (p, s) = (MemLoc::word(ir.v("f", "p")), MemLoc::word(ir.v("f", "s")));
    assert_eq!(aa.alias(func, p, s, Across), No);
    let call = ir.i("f", "C");
    assert_eq!(aa.mod_ref(func, call, s, Across), ModRef::Mod);
    // The recursive call writes through its parameter, which is our slot, not our parameter.
    assert_eq!(aa.mod_ref(func, call, p, Across), ModRef::None);
}

#[test]
fn ranges_in_both_orders() {
    let ir = Ir::parse(
        "
func @r(%a: ptr, %i: i32) -> void {
bb0:
    %a2 = gep %a, 2 * 4
    %a5 = gep %a, 5 * 4
    %a6 = gep %a, 6 * 4
    %a1 = gep %a, 1 * 4
    %im1 = sub i32 %i, 1
    %ai = gep %a, %i * 4
    %aim1 = gep %a, %im1 * 4
    ret
}
",
    );
    let info = FuncInfo::compute(&ir.m);
    let func = ir.func("r");
    let aa = AliasAnalysis::new(&info, ir.f("r"), func);
    let word = |n: &str| MemLoc::word(ir.v("r", n));
    let range = |n: &str, w: u32| MemLoc::words(ir.v("r", n), w);
    let both = |x: MemLoc, y: MemLoc, want: AliasResult| {
        assert_eq!(aa.alias(func, x, y, Same), want, "{x:?} vs {y:?}");
        assert_eq!(aa.alias(func, y, x, Same), want, "{y:?} vs {x:?}");
    };
    // Words 2..6 contain word 5 but not words 6 or 1.
    both(range("a2", 4), word("a5"), May);
    both(range("a2", 4), word("a6"), No);
    both(range("a2", 4), word("a1"), No);
    both(range("a2", 4), range("a5", 4), May);
    both(range("a2", 4), range("a2", 4), Must);
    both(range("a2", 4), word("a2"), May);
    // a[i-1] vs a[i]: a negative constant difference.
    both(word("aim1"), word("ai"), No);
    both(range("aim1", 2), word("ai"), May);
    both(range("aim1", 1), range("ai", 3), No);
}

#[test]
fn object_level_reads_and_writes() {
    let ir = Ir::parse(MODREF);
    let info = FuncInfo::compute(&ir.m);
    let func = ir.func("main");
    let aa = AliasAnalysis::new(&info, ir.f("main"), func);
    let i = |n: &str| ir.i("main", n);
    // reads_param(%B) reads B; getarray(%B) writes it; writes_param(%A) writes only A.
    let reads_b = aa.read_objects(func, i("r"));
    assert!(aa.written_objects(func, i("n")).intersects(&reads_b));
    assert!(!aa.written_objects(func, i("C1")).intersects(&reads_b));
    assert!(!aa.written_objects(func, i("C2")).intersects(&reads_b));
    assert!(aa.written_objects(func, i("S")).intersects(&reads_b));
    assert!(aa.written_objects(func, i("B")).intersects(&reads_b));
    assert!(!aa.written_objects(func, i("A")).intersects(&reads_b));
    assert!(aa.read_objects(func, i("ld")).intersects(&aa.written_objects(func, i("Z"))));
    assert!(aa.read_objects(func, i("C4")).is_empty() && aa.written_objects(func, i("C4")).is_empty());
    assert!(aa.written_objects(func, i("ld")).is_empty());
}

#[test]
fn an_alias_analysis_reuses_the_address_map_only_of_the_unedited_function() {
    let text = "
global @h: i32 x 4 = zero
func @f() -> void {
bb0:
    %a = alloca i32 x 4
    %p = gep @h, 1 * 4
    store 1 -> %p
    ret
}
func @main() -> i32 {
bb0:
    call @f()
    ret 0
}
";
    let mut ir = Ir::parse(text);
    let (f, h) = (ir.f("f"), ir.g("h"));
    let (a, p) = (ir.v("f", "a"), ir.v("f", "p"));
    let mut func = ir.m.take_function(f);
    let info = FuncInfo::compute_with(&ir.m, f, &func);
    assert!(info.unedited_body(f, &func).is_some(), "computed from this very function");
    assert_eq!(AliasAnalysis::new(&info, f, &func).pointer(&func, p).roots.single(), Some(Root::Global(h)));
    // After an edit the summaries' address map is stale (`%p` into @h): a fresh one is made.
    let gep = func.all_insts().map(|(_, i)| i).find(|&i| func.result(i) == Some(p)).expect("the gep");
    func.set_arg(gep, 0, a);
    assert!(info.unedited_body(f, &func).is_none(), "edited since");
    let alloca = func.all_insts().map(|(_, i)| i).find(|&i| func.result(i) == Some(a)).expect("the alloca");
    assert_eq!(AliasAnalysis::new(&info, f, &func).pointer(&func, p).roots.single(), Some(Root::Alloca(alloca)));
    ir.m.put_back(f, func);
}
