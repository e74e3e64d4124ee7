//! The data-flow agreement oracle: every function of a program's IR — lowered, after
//! `mem2reg`, and after the `-O1` and `-O2` pipelines — is solved by the iterative and the
//! region-based data-flow solvers for every gen/kill problem the compiler poses (liveness,
//! dominators, stack-store reads; see `sysyc::analysis::dataflow::problems`), and the
//! solutions must be identical. A difference, or the region solver giving up, is an
//! `analysis-disagreement`.
//!
//! Cheap next to the other oracles: three compilations and a few bit-vector solves per
//! function, no execution. The campaign runs it once per program as a self-test of its own
//! (`selftests.csv`), apart from the differential checks.

use sysyc::analysis::alias::AliasAnalysis;
use sysyc::analysis::dataflow::problems::check_agreement;
use sysyc::analysis::funcinfo::FuncInfo;
use sysyc::config::Config;
use sysyc::ir::Module;
use sysyc::passes::{OptLevel, lookup};

use crate::failure::{Failure, FailureKind, Stage};
use crate::steps;

/// Functions compared, and functions skipped because the region solver gave up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Compared {
    pub functions: u64,
    pub skipped: u64,
}

impl std::ops::AddAssign for Compared {
    fn add_assign(&mut self, other: Compared) {
        self.functions += other.functions;
        self.skipped += other.skipped;
    }
}

/// Checks every function of `module`; what was compared, or the first disagreement (`what`
/// names the IR in the detail).
pub fn check_module(module: &Module, what: &str) -> Result<Compared, Failure> {
    let info = FuncInfo::compute(module);
    let mut compared = Compared::default();
    for fref in module.func_refs() {
        let func = module.func(fref);
        let aa = AliasAnalysis::new(&info, fref, func);
        match check_agreement(func, Some(&aa)) {
            Ok(_) => compared.functions += 1,
            Err(d) if d.gave_up => compared.skipped += 1,
            Err(d) => {
                let detail = format!("{what}, function {}: {d}", func.name);
                return Err(Failure::new(FailureKind::AnalysisDisagreement, Stage::Analysis, detail));
            }
        }
    }
    Ok(compared)
}

/// Checks the lowered module and its optimised forms (see the module documentation).
/// `optimised` gives the module a check already made with exactly a level's pipeline (the
/// campaign's `-O1` and `-O2` configurations), which saves running that pipeline again; the
/// others are optimised here. A pipeline that fails is not this oracle's business (the
/// differential checks report it), so it is skipped.
pub fn check_program<'m>(lowered: &Module, optimised: &dyn Fn(OptLevel) -> Option<&'m Module>) -> Result<Compared, Failure> {
    let mem2reg = Config::default().with_pipeline(lookup("mem2reg").into_iter().collect());
    let mut functions = steps::caught(Stage::Analysis, || check_module(lowered, "lowered IR"))??;
    let forms = [("after mem2reg", mem2reg, None), ("at -O1", Config::level(OptLevel::O1), Some(OptLevel::O1)), ("at -O2", Config::level(OptLevel::O2), Some(OptLevel::O2))];
    for (what, config, level) in forms {
        let made;
        let module = match level.and_then(optimised) {
            Some(module) => module,
            None => match steps::optimise(lowered, &config, None) {
                Ok((module, _)) => {
                    made = module;
                    &made
                }
                Err(_) => continue,
            },
        };
        functions += steps::caught(Stage::Analysis, || check_module(module, what))??;
    }
    Ok(functions)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Functions of the module at -O2.
    fn all_at_o2(lowered: &Module) -> u64 {
        let (module, _) = steps::optimise(lowered, &Config::level(OptLevel::O2), None).expect("optimises");
        module.func_refs().len() as u64
    }

    #[test]
    fn every_function_of_a_program_is_compared() {
        let source = "int f(int a[], int n) { int i = 0; int s = 0; while (i < n) { if (a[i] < 0) break; s = s + a[i]; i = i + 1; } return s; }\n\
                      int main() { int a[4] = {1, 2, -1, 3}; int b[2]; b[0] = 5; putint(f(a, 4)); return 0; }";
        let module = sysyc::driver::lower_source("t.sy", source).expect("valid program");
        assert_eq!(check_module(&module, "lowered"), Ok(Compared { functions: 2, skipped: 0 }));
        let all = check_program(&module, &|_| None).expect("the solvers agree");
        assert!(all.functions >= 6, "four forms of the program, inlining may merge functions: {all:?}");
        // Given the -O2 form, it is checked as given (here: the lowered module stands in).
        let given = check_program(&module, &|level| (level == OptLevel::O2).then_some(&module)).expect("the solvers agree");
        assert_eq!(given.functions, all.functions - all_at_o2(&module) + module.func_refs().len() as u64, "{given:?} against {all:?}");
    }
}
