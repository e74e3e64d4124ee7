//! Lowering: stack safety on deep expressions, determinism, and properties of the produced
//! code that filetests cannot state as easily (counts over whole modules).

use super::*;
use crate::frontend;
use crate::ir::interp::{InterpConfig, run};
use crate::ir::{Opcode, print_module, verify_module};

fn lower(src: &str) -> Module {
    let program = frontend::compile_source("t.sy", src).unwrap_or_else(|e| panic!("{e}"));
    let module = lower_program(&program);
    if let Err(errors) = verify_module(&module) {
        panic!("{}\n{}", errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"), print_module(&module));
    }
    module
}

fn exit_status(module: &Module, stdin: &str) -> u8 {
    let r = run(module, stdin.as_bytes(), &InterpConfig::default()).expect("runnable");
    r.outcome.exit_status.unwrap_or_else(|| panic!("trapped: {:?}", r.outcome.trap))
}

fn count(module: &Module, pred: impl Fn(Opcode) -> bool) -> usize {
    module.funcs().map(|(_, f)| f.all_insts().filter(|&(_, i)| pred(f.opcode(i))).count()).sum()
}

#[test]
fn deep_expressions_lower_without_exhausting_the_test_thread_stack() {
    // Left-leaning chains of the maximal height the parser accepts, in value and condition
    // positions, and right-leaning nesting through parentheses.
    let terms = frontend::parser::MAX_EXPR_HEIGHT as usize - 100;
    let sum = format!("int main() {{ return {}1; }}", "1 + ".repeat(terms));
    assert_eq!(exit_status(&lower(&sum), ""), (terms + 1) as u8);

    let and_chain = format!(
        "int main() {{ int x = getint(); int y = {}x; if ({}x) return y + 1; return y; }}",
        "x && ".repeat(terms / 2),
        "x || ".repeat(terms / 2)
    );
    let m = lower(&and_chain);
    assert_eq!(exit_status(&m, "1"), 2);
    assert_eq!(exit_status(&m, "0"), 0);
}

#[test]
fn lowering_is_deterministic() {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../corpus/lang/short_circuit.sy"))
        .expect("corpus program");
    let a = print_module(&lower(&src));
    let b = print_module(&lower(&src));
    assert_eq!(a, b);
    let program = frontend::compile_source("t.sy", &src).expect("valid");
    assert_eq!(print_module(&lower_on_this_thread(&program)), a, "same result with and without the thread");
}

#[test]
fn huge_arrays_stay_compact() {
    // A 4-million-element global and a 1-million-element local initialised with two values:
    // the module holds a handful of instructions and initialiser entries, not millions.
    let m = lower(
        "int g[2000][2000]; int main() { int a[1000][1000] = {{1}, {2}}; g[1999][1999] = 3; \
         return a[1][0] + g[1999][1999]; }",
    );
    let g = &m.globals[crate::ir::GlobalRef::new(0)];
    assert_eq!((g.words, g.init.len()), (4_000_000, 0));
    assert_eq!(count(&m, |op| matches!(op, Opcode::MemZero { words: 1_000_000 })), 1);
    assert_eq!(count(&m, |op| op == Opcode::Store), 3);
    assert!(m.funcs().map(|(_, f)| f.inst_count()).sum::<usize>() < 30);
    assert_eq!(exit_status(&m, ""), 5);
}

#[test]
fn locals_declared_in_loops_are_allocated_once_in_the_entry_block() {
    let m = lower(
        "int main() { int i = 0, s = 0; while (i < 5) { int t[3] = {i, i, i}; int u = t[2]; \
         s = s + u; i = i + 1; } return s; }",
    );
    let main = m.func(m.func_by_name("main").expect("main"));
    for (b, inst) in main.all_insts() {
        if matches!(main.opcode(inst), Opcode::Alloca { .. }) {
            assert_eq!(b, main.entry(), "alloca outside the entry block");
        }
    }
    assert_eq!(count(&m, |op| matches!(op, Opcode::Alloca { .. })), 4);
    // Dense initialiser: stores only, no memzero, re-executed every iteration.
    assert_eq!(count(&m, |op| matches!(op, Opcode::MemZero { .. })), 0);
    assert_eq!(exit_status(&m, ""), 10);
}

#[test]
fn no_empty_or_orphan_blocks_without_dead_code() {
    // Without code after return/break/continue, every block but the entry has a predecessor
    // and every block holds more than a lone jump unless it is a loop header or join.
    let m = lower(
        "int f(int n) { int s = 0; while (1) { if (n < 1) break; if (n % 2) s = s + n; else s = s - 1; \
         n = n - 1; } return s; } int main() { return f(getint()) && f(3) || !f(2); }",
    );
    for (_, func) in m.funcs() {
        let cfg = crate::analysis::ControlFlowGraph::compute(func);
        for &b in func.layout() {
            assert!(cfg.is_reachable(b), "@{}: block {b} is unreachable", func.name);
        }
    }
}

#[test]
fn dead_code_after_jumps_goes_to_blocks_without_predecessors() {
    let m = lower("int main() { while (1) { break; putint(1); } return 0; putint(2); }");
    let main = m.func(m.func_by_name("main").expect("main"));
    let cfg = crate::analysis::ControlFlowGraph::compute(main);
    let dead: Vec<_> = main.layout().iter().filter(|&&b| !cfg.is_reachable(b)).collect();
    assert_eq!(dead.len(), 2, "{}", print_module(&m));
    for &&b in &dead {
        assert!(cfg.preds(b).is_empty());
    }
    assert_eq!(exit_status(&m, ""), 0);
}
