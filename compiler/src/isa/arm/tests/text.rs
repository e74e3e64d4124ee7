//! Checks of the assembly text that need no toolchain.

use super::builder::FnBuilder;
use crate::ir::{Const, GlobalData, Module, Type};
use crate::isa::arm::{BackendOptions, backend_stages, compile_module};

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
fn stage_names_are_unique_and_settable() {
    let stages = backend_stages();
    for (i, (name, _)) in stages.iter().enumerate() {
        assert!(stages[i + 1..].iter().all(|(n, _)| n != name));
        let mut o = BackendOptions::all();
        o.set(name, false).unwrap();
        assert!(!o.is_enabled(name).unwrap());
    }
    assert!(BackendOptions::all().set("no-such-stage", true).is_err());
}
