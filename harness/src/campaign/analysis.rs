//! The data-flow agreement oracle: every function of a program's IR — after `mem2reg` and
//! after every configuration's pipeline (each distinct IR once) — is solved by the iterative
//! and the region-based data-flow solvers for every gen/kill problem the compiler poses
//! (liveness, dominators, stack-store reads; see `sysyc::analysis::dataflow::problems`), and
//! the solutions must be identical. A difference, or the region solver giving up, is an
//! `analysis-disagreement`.
//!
//! Cheap next to the other oracles: a few bit-vector solves per function, no execution.

use super::oracle::{Kind, Mismatch, Oracle};
use sysyc::analysis::alias::AliasAnalysis;
use sysyc::analysis::dataflow::problems::check_agreement;
use sysyc::analysis::funcinfo::FuncInfo;
use sysyc::ir::Module;

/// Checks every function of `module`; the number of functions compared, or the first
/// disagreement (`what` names the IR in the detail).
pub fn check_module(module: &Module, what: &str) -> Result<u64, Mismatch> {
    let info = FuncInfo::compute(module);
    let mut functions = 0;
    for fref in module.func_refs() {
        let func = module.func(fref);
        let aa = AliasAnalysis::new(&info, fref, func);
        check_agreement(func, Some(&aa)).map_err(|d| {
            Mismatch::new(Kind::AnalysisDisagreement, Oracle::Analysis, format!("{what}, function {}: {d}", func.name))
        })?;
        functions += 1;
    }
    Ok(functions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_of_a_program_is_compared() {
        let source = "int f(int a[], int n) { int i = 0; int s = 0; while (i < n) { if (a[i] < 0) break; s = s + a[i]; i = i + 1; } return s; }\n\
                      int main() { int a[4] = {1, 2, -1, 3}; int b[2]; b[0] = 5; putint(f(a, 4)); return 0; }";
        let module = sysyc::driver::lower_source("t.sy", source).expect("valid program");
        assert_eq!(check_module(&module, "lowered"), Ok(2));
    }
}
