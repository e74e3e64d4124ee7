//! Checks of the assembly text that need no toolchain.

use super::builder::FnBuilder;
use crate::ir::{Const, GlobalData, Module, Type};
use crate::isa::arm::{BackendOptions, BackendStage, compile_module};

#[test]
fn zero_filled_globals_use_bss_and_zero() {
    let mut m = Module::new();
    m.globals.push(GlobalData { name: "big".into(), elem: Type::I32, words: 1 << 20, init: vec![], is_const: false });
    m.globals.push(GlobalData {
        name: "sparse".into(),
        elem: Type::I32,
        words: 1000,
        init: vec![(0, Const::Int(1)), (1, Const::Int(2)), (999, Const::Int(3))],
        is_const: false,
    });
    let mut b = FnBuilder::new("main", &[], Type::I32);
    let z = b.int(0);
    b.ret(Some(z));
    m.add_function(b.finish());
    let asm = compile_module(&m, &BackendOptions::all()).unwrap();
    assert!(asm.contains("\t.bss\n"), "{asm}");
    assert!(asm.contains(&format!("\t.zero\t{}", 4 << 20)), "{asm}");
    assert!(asm.contains("\t.zero\t3988\n"), "{asm}");
    assert!(asm.matches(".word").count() < 5, "{asm}");
    assert!(asm.contains("__sysy_prog_begin:") && asm.contains("__sysy_prog_end:"));
}

#[test]
fn stage_names_are_unique_and_each_is_registered() {
    for (i, stage) in BackendStage::ALL.iter().enumerate() {
        assert!(BackendStage::ALL[i + 1..].iter().all(|s| s.name() != stage.name()));
        assert_eq!(BackendStage::from_name(stage.name()), Some(*stage));
        let entry = crate::passes::lookup(stage.name()).expect("every stage is in the registry");
        assert!(matches!(entry.body, crate::passes::PassBody::Backend(s) if s == *stage));
        let o = BackendOptions::without(&[stage.name()]).unwrap();
        assert!(!o.enabled(*stage) && o.stages.len() == BackendStage::ALL.len() - 1);
    }
    assert!(BackendOptions::without(&["no-such-stage"]).is_err());
}

#[test]
fn malformed_ir_is_an_error_not_a_panic() {
    use crate::ir::{InstData, Opcode};
    // A block without a terminator.
    let mut m = Module::new();
    let mut b = FnBuilder::new("main", &[], Type::I32);
    let x = b.int(1);
    b.add(x, x);
    m.add_function(b.finish());
    let err = compile_module(&m, &BackendOptions::all()).unwrap_err();
    assert!(err.to_string().contains("no terminator"), "{err}");

    // A phi without a value for one of its predecessors.
    let mut m = Module::new();
    let mut b = FnBuilder::new("main", &[], Type::I32);
    let (l, r, j) = (b.block(), b.block(), b.block());
    let one = b.int(1);
    let cnd = b.icmp(crate::ir::IntCC::Eq, one, one);
    b.br(cnd, l, r);
    b.switch(l);
    b.jump(j);
    b.switch(r);
    b.jump(j);
    b.switch(j);
    let (_, p) = b.phi(Type::I32, &[(l, one)]);
    b.ret(Some(p));
    m.add_function(b.finish());
    let err = compile_module(&m, &BackendOptions::all()).unwrap_err();
    assert!(err.to_string().contains("no value for predecessor"), "{err}");

    // A branch with a missing target.
    let mut m = Module::new();
    let mut b = FnBuilder::new("main", &[], Type::I32);
    let t = b.block();
    let c = b.f.bconst(false);
    b.f.append(b.cur, InstData::new(Opcode::Br, &[c], &[t], Type::Void));
    b.switch(t);
    let z = b.int(0);
    b.ret(Some(z));
    m.add_function(b.finish());
    let err = compile_module(&m, &BackendOptions::all()).unwrap_err();
    assert!(err.to_string().contains("malformed br"), "{err}");
}

#[test]
fn symbols_are_mangled_and_main_is_global() {
    let mut m = Module::new();
    m.globals.push(GlobalData { name: "write".into(), elem: Type::I32, words: 1, init: vec![], is_const: false });
    let mut f = FnBuilder::new("malloc", &[], Type::Void);
    f.ret(None);
    m.add_function(f.finish());
    let mut b = FnBuilder::new("main", &[], Type::I32);
    let z = b.int(0);
    b.ret(Some(z));
    m.add_function(b.finish());
    let asm = compile_module(&m, &BackendOptions::all()).unwrap();
    assert!(asm.contains("\t.global\tmain\n") && asm.contains("\nmain:"), "{asm}");
    assert!(asm.contains("\nsy.malloc:") && asm.contains("\nsy.write:"), "{asm}");
    assert!(!asm.contains("\nmalloc:") && !asm.contains("\nwrite:"), "{asm}");
}

#[test]
fn oversized_frame_is_an_error() {
    let mut m = Module::new();
    let mut b = FnBuilder::new("main", &[], Type::I32);
    let a = b.alloca(Type::I32, 1 << 29);
    let z = b.int(0);
    b.store(a, z);
    b.ret(Some(z));
    m.add_function(b.finish());
    let err = compile_module(&m, &BackendOptions::all()).unwrap_err();
    assert!(err.to_string().contains("too large"), "{err}");
}

#[test]
fn shifted_operand_of_the_same_value_needs_no_copy() {
    // state = state + state * 8192: one `add rd, rx, rx, lsl #13`, no register copy.
    let mut m = Module::new();
    let g =
        m.globals.push(GlobalData { name: "state".into(), elem: Type::I32, words: 1, init: vec![], is_const: false });
    let mut b = FnBuilder::new("main", &[], Type::I32);
    let p = b.f.global_addr(g);
    let x = b.load(p, Type::I32);
    let k = b.int(8192);
    let m8 = b.mul(x, k);
    let s = b.add(x, m8);
    b.store(p, s);
    b.ret(Some(s));
    m.add_function(b.finish());
    let asm = compile_module(&m, &BackendOptions::all()).unwrap();
    let body: Vec<&str> =
        asm.lines().skip_while(|l| !l.starts_with("main:")).take_while(|l| !l.contains(".size")).collect();
    assert!(body.iter().any(|l| l.contains("lsl #13")), "{asm}");
    assert!(
        !body.iter().any(|l| l.trim_start().starts_with("mov\tr")),
        "a register copy remains:\n{}",
        body.join("\n")
    );
}
