//! One test per rule: hand-written bad IR must be rejected with the right kind, and the
//! message must point at the offending instruction.

use super::*;
use crate::ir::{InstData, parse_module};

use VerifierErrorKind as K;

fn errors_of(text: &str) -> Vec<VerifierError> {
    let m = parse_module(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    match verify_module(&m) {
        Ok(()) => Vec::new(),
        Err(e) => e,
    }
}

/// Asserts that verifying `text` reports `kind`, with `needle` in that error's text.
fn expect(text: &str, kind: VerifierErrorKind, needle: &str) {
    let errors = errors_of(text);
    assert!(
        errors.iter().any(|e| e.kind == kind && e.to_string().contains(needle)),
        "expected {kind:?} mentioning {needle:?} for\n{text}\ngot: {:#?}",
        errors.iter().map(ToString::to_string).collect::<Vec<_>>()
    );
}

const GOOD: &str = "global @g: i32 x 4 = {0: 1, 2: 3}
string $0 = \"%d %f\\n\"

func @sum(%a: ptr, %n: i32) -> i32 {
entry:
    jump head
head:
    %i = phi i32 [entry: 0], [body: %i2]
    %s = phi i32 [entry: 0], [body: %s2]
    %c = icmp lt %i, %n
    br %c, body, exit
body:
    %p = gep %a, %i * 4
    %x = load i32 %p
    %s2 = add i32 %s, %x
    %i2 = add i32 %i, 1
    jump head
exit:
    ret %s
}

func @main() -> i32 {
bb0:
    %arr = alloca i32 x 8
    memzero %arr, 8
    %n = call i32 getarray(%arr)
    %s = call i32 @sum(%arr, %n)
    %f = sitofp %s
    call putf $0(%s, %f)
    call putarray(%n, %arr)
    %z = select ptr true, %arr, @g
    store 5 -> %z
    ret %s
dead:
    %u = add i32 %v, 1
    %v = add i32 %u, 1
    jump dead
}
";

#[test]
fn accepts_valid_ir() {
    let errors = errors_of(GOOD);
    assert!(errors.is_empty(), "{:#?}", errors.iter().map(ToString::to_string).collect::<Vec<_>>());
}

#[test]
fn block_structure() {
    expect("func @f() {\n}\n", K::Layout, "no blocks");
    expect("func @f() {\nbb0:\n    %x = add i32 1, 2\n}\n", K::MissingTerminator, "does not end");
    expect("func @f() {\nbb0:\n    jump bb1\nbb1:\nbb2:\n    ret\n}\n", K::MissingTerminator, "bb1: MissingTerminator: empty block");
    expect("func @f() {\nbb0:\n    ret\n    ret\n}\n", K::TerminatorInMiddle, "`ret`");
    expect(
        "func @f() -> i32 {\nbb0:\n    jump bb1\nbb1:\n    %x = add i32 1, 2\n    %p = phi i32 [bb0: 1]\n    ret %p\n}\n",
        K::PhiNotAtStart,
        "`%1 = phi i32 [bb0: 1]`",
    );
    expect("func @f() {\nbb0:\n    jump bb0\n}\n", K::EntryHasPredecessors, "bb0");
}

#[test]
fn phi_incoming_must_match_predecessor_edges() {
    let missing = "func @f(%c: i1) -> i32 {
bb0:
    br %c, bb1, bb2
bb1:
    jump bb2
bb2:
    %x = phi i32 [bb0: 1]
    ret %x
}
";
    expect(missing, K::PhiPredecessors, "incoming blocks [bb0] differ from predecessors [bb0, bb1]");
    let extra = "func @f() -> i32 {
bb0:
    jump bb1
bb1:
    %x = phi i32 [bb0: 1], [bb2: 2]
    ret %x
bb2:
    ret 0
}
";
    expect(extra, K::PhiPredecessors, "differ from predecessors [bb0]");
    // Two edges from one `br`: two entries are required, and they must agree.
    let once = "func @f(%c: i1) -> i32 {
bb0:
    br %c, bb1, bb1
bb1:
    %x = phi i32 [bb0: 1]
    ret %x
}
";
    expect(once, K::PhiPredecessors, "predecessors [bb0, bb0]");
    let disagree = "func @f(%c: i1) -> i32 {
bb0:
    br %c, bb1, bb1
bb1:
    %x = phi i32 [bb0: 1], [bb0: 2]
    ret %x
}
";
    expect(disagree, K::PhiPredecessors, "two values arrive over edges from bb0");
    let agree = disagree.replace("[bb0: 2]", "[bb0: 1]");
    assert!(errors_of(&agree).is_empty());
}

#[test]
fn operand_counts() {
    let text = "func @g(%a: i32) -> i32 {
bb0:
    ret %a
}
func @f() -> i32 {
bb0:
    %x = call i32 @g(1, 2)
    ret %x
}
";
    expect(text, K::OperandCount, "`%0 = call i32 @g(1, 2)`");
    expect("func @f() {\nbb0:\n    ret 1\n}\n", K::OperandCount, "`ret 1`");
    expect("func @f() -> i32 {\nbb0:\n    ret\n}\n", K::OperandCount, "`ret`");
    expect("func @f() {\nbb0:\n    call putint()\n    ret\n}\n", K::OperandCount, "putint");
}

#[test]
fn types() {
    let cases: &[(&str, &str)] = &[
        ("%x = add i32 1, 2.0", "operands must be i32"),
        ("%x = add f32 1, 2", "result must be i32"),
        ("%x = fmul f32 1.0, 2", "operands must be f32"),
        ("%x = icmp lt 1.0, 2.0", "operands must be i32"),
        ("%x = fcmp lt 1, 2", "operands must be f32"),
        ("%x = zext 1", "operand must be i1"),
        ("%x = sitofp 1.0", "operand must be i32"),
        ("%x = fptosi 1", "operand must be f32"),
        ("%x = fneg f32 1", "operand must be f32"),
        ("%x = select i32 1, 2, 3", "condition must be i1"),
        ("%x = select i32 true, 2, 3.0", "both arms"),
        ("%x = load i32 1", "address must be ptr"),
        ("%p = alloca i32 x 1\n    %x = load ptr %p", "loaded type"),
        ("%p = alloca i32 x 1\n    store %p -> %p", "stored value"),
        ("store 1 -> 2", "address must be ptr"),
        ("%p = alloca i32 x 1\n    %x = gep %p, 1.0 * 4", "index must be i32"),
        ("%p = alloca ptr x 1", "element type"),
        ("%p = alloca i32 x 0", "at least one"),
        ("memzero 3, 1", "address must be ptr"),
        ("%x = call f32 getint()", "callee's i32"),
        ("call putfloat(1)", "argument 0 must be f32"),
        ("%p = alloca i32 x 1\n    call putf $0(%p)", "putf arguments"),
        ("%x = phi i32 [bb0: 1.0]", "incoming 1.0 is f32"),
    ];
    for (body, needle) in cases {
        let text = format!("string $0 = \"\"\nfunc @f() {{\nbb0:\n    jump bb1\nbb1:\n    {body}\n    ret\n}}\n");
        let text = if body.contains("phi") { text } else { text.replace("bb0:\n    jump bb1\nbb1:\n", "bb0:\n") };
        expect(&text, K::Type, needle);
    }
    expect("func @f() -> i32 {\nbb0:\n    ret 1.5\n}\n", K::Type, "returned value must be i32");
    expect("func @f() {\nbb0:\n    br 1, bb1, bb1\nbb1:\n    ret\n}\n", K::Type, "condition must be i1");
}

#[test]
fn dominance() {
    let before_def = "func @f() -> i32 {
bb0:
    %y = add i32 %x, 1
    %x = add i32 2, 3
    ret %y
}
";
    expect(before_def, K::Dominance, "`%0 = add i32 %1, 1`: Dominance: use of %1 is not dominated");
    let self_use = "func @f() -> i32 {\nbb0:\n    %x = add i32 %x, 1\n    ret %x\n}\n";
    expect(self_use, K::Dominance, "use of %0");
    let sibling = "func @f(%c: i1) -> i32 {
bb0:
    br %c, bb1, bb2
bb1:
    %x = add i32 1, 2
    jump bb3
bb2:
    jump bb3
bb3:
    ret %x
}
";
    expect(sibling, K::Dominance, "bb3, `ret %1`");
    let phi_from_wrong_pred = "func @f(%c: i1) -> i32 {
bb0:
    br %c, bb1, bb2
bb1:
    %x = add i32 1, 2
    jump bb3
bb2:
    jump bb3
bb3:
    %p = phi i32 [bb1: %x], [bb2: %x]
    ret %p
}
";
    expect(phi_from_wrong_pred, K::Dominance, "phi i32 [bb1: %1], [bb2: %1]");
    let ok = phi_from_wrong_pred.replace("[bb2: %x]", "[bb2: 0]");
    assert!(errors_of(&ok).is_empty());
    // A loop phi may use a value defined later in the loop.
    let loop_phi = "func @f() -> i32 {
bb0:
    jump bb1
bb1:
    %i = phi i32 [bb0: 0], [bb1: %j]
    %j = add i32 %i, 1
    %c = icmp lt %j, 10
    br %c, bb1, bb2
bb2:
    ret %i
}
";
    assert!(errors_of(loop_phi).is_empty());
}

#[test]
fn detached_definitions_and_removed_things() {
    let text = "func @g() -> i32 {
bb0:
    ret 1
}
func @f() -> i32 {
bb0:
    %x = add i32 1, 2
    %y = add i32 %x, 1
    jump bb1
bb1:
    ret %y
}
";
    let mut m = parse_module(text).unwrap();
    let f = m.func_by_name("f").unwrap();
    let g = m.func_by_name("g").unwrap();
    {
        let func = m.func_mut(f);
        let b0 = func.layout()[0];
        let x_inst = func.first_inst(b0).unwrap();
        func.detach_inst(x_inst);
    }
    let errors = verify_function(&m, f).unwrap_err();
    assert!(errors.iter().any(|e| e.kind == K::Dominance && e.message.contains("outside the layout")), "{errors:?}");

    // Also from an unreachable block (where dominance is not checked): the IR interpreter
    // refuses the function, as it did after a `loop-idle-exit` that deleted the block
    // computing a counter its unreachable latch still read.
    let unreachable_use = "func @f() -> i32 {
bb0:
    %x = add i32 1, 2
    ret 0
bb1:
    %y = add i32 %x, 1
    ret %y
}
";
    let mut um = parse_module(unreachable_use).unwrap();
    let uf = um.func_by_name("f").unwrap();
    assert!(verify_function(&um, uf).is_ok(), "an unreachable block may use a placed value");
    {
        let func = um.func_mut(uf);
        let b0 = func.layout()[0];
        let x_inst = func.first_inst(b0).unwrap();
        func.detach_inst(x_inst);
    }
    let errors = verify_function(&um, uf).unwrap_err();
    assert!(errors.iter().any(|e| e.kind == K::Dominance && e.message.contains("outside the layout")), "{errors:?}");

    // A call to a removed function and a branch to a removed block.
    let mut m = parse_module(text).unwrap();
    {
        let func = m.func_mut(f);
        let b0 = func.layout()[0];
        let b1 = func.layout()[1];
        let call = func.create_inst(InstData::call(Callee::Func(g), &[], Type::I32));
        func.prepend_inst(b0, call);
        let putf_as_builtin = func.create_inst(InstData::call(Callee::Builtin(crate::frontend::hir::Builtin::PutF), &[], Type::Void));
        func.prepend_inst(b0, putf_as_builtin);
        func.remove_block(b1);
    }
    m.remove_function(g);
    let errors = verify_module(&m).unwrap_err();
    let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert!(errors.iter().any(|e| e.kind == K::BadReference && e.message.contains("calls removed function")), "{shown:#?}");
    assert!(errors.iter().any(|e| e.kind == K::BadReference && e.message.contains("putf must be called")), "{shown:#?}");
    assert!(errors.iter().any(|e| e.kind == K::BadReference && e.message.contains("not in the layout")), "{shown:#?}");
    assert!(verify_function(&m, g).is_err());
}

#[test]
fn use_lists_must_match_operands() {
    let mut m = parse_module("func @f(%a: i32) -> i32 {\nbb0:\n    %x = add i32 %a, %a\n    ret %x\n}\n").unwrap();
    let f = m.func_refs()[0];
    assert!(verify_function(&m, f).is_ok());
    let func = m.func_mut(f);
    let b0 = func.layout()[0];
    let ret = func.last_inst(b0).unwrap();
    let a = func.params[0];
    func.add_bogus_user_for_test(a, ret);
    let errors = verify_function(&m, f).unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].kind, K::UseList);
    assert_eq!(errors[0].to_string(), "@f, bb0, `ret %1`: UseList: use list of %0 names this instruction once too often");
}

#[test]
fn use_lists_of_the_right_length_must_name_the_right_instructions() {
    let text = "func @f(%a: i32) -> i32 {\nbb0:\n    %x = add i32 %a, 1\n    %y = add i32 %a, 2\n    %z = add i32 %x, %y\n    ret %z\n}\n";
    let corrupt = |value: &str, old: usize, new: usize| {
        let mut m = parse_module(text).unwrap();
        let f = m.func_refs()[0];
        assert!(verify_function(&m, f).is_ok());
        let func = m.func_mut(f);
        let insts: Vec<Inst> = func.block_insts(func.layout()[0]).collect();
        let v = if value == "a" { func.params[0] } else { func.result(insts[0]).unwrap() };
        func.replace_user_for_test(v, insts[old], insts[new]);
        verify_function(&m, f).unwrap_err()
    };
    // %x's one user is the `ret`, which does not use it (and %z's list misses nothing).
    let errors = corrupt("x", 2, 3);
    assert!(errors.iter().all(|e| e.kind == K::UseList) && !errors.is_empty(), "{errors:?}");
    assert!(errors.iter().any(|e| e.message.contains("use of %1 missing from its use list")), "{errors:?}");
    // %a's list names the first add twice and the second not at all.
    let errors = corrupt("a", 1, 0);
    assert!(errors.iter().any(|e| e.kind == K::UseList && e.message.contains("use list of %0 names this instruction once too often")), "{errors:?}");
}

#[test]
fn module_rules() {
    expect("global @a: i32 x 2 = {1: 1, 0: 2}\n", K::Module, "not sorted");
    expect("global @a: i32 x 2 = {2: 1}\n", K::Module, "writes index 2 of 2");
    expect("global @a: i32 x 2 = {0: 1.5}\n", K::Module, "has a f32 at index 0");
    expect("global @a: ptr x 2 = zero\n", K::Module, "element type ptr");
    expect("func @main(%x: i32) -> i32 {\nbb0:\n    ret %x\n}\n", K::Module, "`main` must take no parameters");
}

#[test]
fn core_mutations_keep_ir_valid() {
    // replace_all_uses with repeated uses, then removing a block and its phi entries.
    let text = "func @f(%c: i1, %a: i32) -> i32 {
bb0:
    %x = add i32 %a, %a
    %y = mul i32 %x, %x
    br %c, bb1, bb2
bb1:
    %z = add i32 %y, %x
    jump bb2
bb2:
    %p = phi i32 [bb0: %x], [bb1: %z]
    ret %p
}
";
    let mut m = parse_module(text).unwrap();
    let f = m.func_refs()[0];
    let func = m.func_mut(f);
    let (b0, b1, b2) = (func.layout()[0], func.layout()[1], func.layout()[2]);
    let x_inst = func.first_inst(b0).unwrap();
    let x = func.result(x_inst).unwrap();
    let a = func.params[1];
    func.replace_all_uses(x, a);
    assert!(!func.has_uses(x));
    assert_eq!(func.users(a).len(), 2 + 2 + 1 + 1);
    func.remove_inst(x_inst);
    assert!(verify_function(&m, f).is_ok(), "{:?}", verify_function(&m, f));
    let func = m.func_mut(f);
    let br = func.terminator(b0).unwrap();
    let jump = func.create_inst(InstData::jump(b2));
    func.remove_inst(br);
    func.append_inst(b0, jump);
    func.remove_phi_pred(b2, b1);
    func.remove_block(b1);
    let errors = verify_function(&m, f);
    assert!(errors.is_ok(), "{errors:?}");
    assert_eq!(
        crate::ir::print_function(&m, f),
        "func @f(%0: i1, %1: i32) -> i32 {\nbb0:\n    %2 = mul i32 %1, %1\n    jump bb1\nbb1:\n    %3 = phi i32 [bb0: %1]\n    ret %3\n}\n"
    );
}
