//! `dead-functions` (catalogue: ClearUselessFunction): deletes the functions that `main`
//! cannot call, directly or transitively.
//!
//! Why: after `inline` a function whose every call was inlined is dead weight — compile time
//! in every later pass and code in the executable. SysY has no function pointers, so the call
//! graph is exact and reachability from `main` decides liveness
//! ([`CallGraph::unreachable_from_main`]); dead functions calling each other go together.
//! A module without `main` (a test fragment) is left alone: nothing is known to be dead.

use super::{ModuleCx, ModulePass};
use crate::analysis::callgraph::CallGraph;
use crate::ir::Module;

pub struct DeadFunctions;

impl ModulePass for DeadFunctions {
    fn run(&self, module: &mut Module, cx: &mut ModuleCx<'_>) -> bool {
        let graph = CallGraph::compute(module);
        let mut changed = false;
        for f in graph.unreachable_from_main() {
            if !cx.may_transform(f) {
                continue;
            }
            let insts = module.func(f).inst_count() as u64;
            module.remove_function(f);
            cx.count("functions_removed", 1);
            cx.count("insts_removed", insts);
            changed = true;
        }
        changed
    }
}
