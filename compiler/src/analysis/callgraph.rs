//! The call graph of a module: who calls whom, recursion, a bottom-up order, and what `main`
//! can reach.
//!
//! SysY has no function pointers, so every call names its callee ([`Callee::Func`]) and the
//! graph is exact. Runtime-library calls are not edges (they call no module function back).
//! Calls of removed functions (invalid IR, reported by the verifier) are ignored here.
//!
//! Strongly connected components come from [`super::scc::tarjan_sccs`] and are listed
//! *bottom-up*: a component comes after every component it calls, so interprocedural
//! summaries can be computed in one sweep (iterating to a fixpoint only inside a component).
//! A function is *recursive* when it is in a component of two or more functions or calls
//! itself; a function merely calling into a recursive component is not — `A → B → (C ↔ D)`
//! leaves `A` and `B` non-recursive.
//!
//! Everything is ordered deterministically: functions by [`FuncRef`], call sites in layout
//! order.
//!
//! The graph is a snapshot: recompute it after a pass adds, removes or retargets calls.
//! [`CallGraph::compute_with`] builds it while a function pass holds one function outside the
//! module (the pass manager takes the function being transformed out of the module).

use cranelift_entity::{EntityRef, SecondaryMap};

use super::scc::tarjan_sccs;
use crate::ir::{Callee, FuncRef, Function, Inst, Module, Opcode};

#[derive(Clone, Debug, Default)]
pub struct CallGraph {
    /// Live functions in [`FuncRef`] order.
    funcs: Vec<FuncRef>,
    /// Distinct callees, sorted.
    callees: SecondaryMap<FuncRef, Vec<FuncRef>>,
    /// Distinct callers, sorted.
    callers: SecondaryMap<FuncRef, Vec<FuncRef>>,
    /// Calls of module functions in the function, layout order.
    call_sites: SecondaryMap<FuncRef, Vec<(Inst, FuncRef)>>,
    /// Number of call instructions (anywhere in the module) calling the function.
    calls_to: SecondaryMap<FuncRef, u32>,
    /// Components, bottom-up; each sorted.
    sccs: Vec<Vec<FuncRef>>,
    scc_index: SecondaryMap<FuncRef, u32>,
    recursive: SecondaryMap<FuncRef, bool>,
    reachable: SecondaryMap<FuncRef, bool>,
    main: Option<FuncRef>,
}

/// The live functions of `module`, with `detached` (a function currently taken out of the
/// module) put in its place; sorted by [`FuncRef`].
pub(crate) fn module_functions<'a>(
    module: &'a Module,
    detached: Option<(FuncRef, &'a Function)>,
) -> Vec<(FuncRef, &'a Function)> {
    let mut funcs: Vec<(FuncRef, &Function)> = module.funcs().collect();
    if let Some((fref, func)) = detached {
        funcs.retain(|&(f, _)| f != fref);
        funcs.push((fref, func));
        funcs.sort_by_key(|&(f, _)| f);
    }
    funcs
}

impl CallGraph {
    /// The call graph of every live function of `module`.
    pub fn compute(module: &Module) -> CallGraph {
        CallGraph::from_functions(&module_functions(module, None))
    }

    /// The call graph of `module` plus `func`, which is function `fref` taken out of the
    /// module (as inside a function pass; see the module documentation).
    pub fn compute_with(module: &Module, fref: FuncRef, func: &Function) -> CallGraph {
        CallGraph::from_functions(&module_functions(module, Some((fref, func))))
    }

    /// The call graph of the given functions (sorted by [`FuncRef`], distinct). Calls to
    /// functions not in the list are ignored.
    pub fn from_functions(funcs: &[(FuncRef, &Function)]) -> CallGraph {
        let mut g = CallGraph { funcs: funcs.iter().map(|&(f, _)| f).collect(), ..CallGraph::default() };
        let mut present: SecondaryMap<FuncRef, bool> = SecondaryMap::new();
        for &(f, _) in funcs {
            present[f] = true;
        }
        for &(f, func) in funcs {
            let mut sites = Vec::new();
            for (_, inst) in func.all_insts() {
                if let Opcode::Call(Callee::Func(callee)) = func.opcode(inst)
                    && present[callee]
                {
                    sites.push((inst, callee));
                    g.calls_to[callee] += 1;
                }
            }
            let mut callees: Vec<FuncRef> = sites.iter().map(|&(_, c)| c).collect();
            callees.sort_unstable();
            callees.dedup();
            for &c in &callees {
                g.callers[c].push(f);
            }
            g.callees[f] = callees;
            g.call_sites[f] = sites;
            if func.name == "main" && g.main.is_none() {
                g.main = Some(f);
            }
        }
        // `callers` lists were filled in caller order, which is FuncRef order: already sorted.

        // Tarjan over dense node numbers (positions in `funcs`).
        let mut dense: SecondaryMap<FuncRef, u32> = SecondaryMap::new();
        for (i, &f) in g.funcs.iter().enumerate() {
            dense[f] = i as u32;
        }
        let succs: Vec<Vec<usize>> =
            g.funcs.iter().map(|&f| g.callees[f].iter().map(|&c| dense[c] as usize).collect()).collect();
        for comp in tarjan_sccs(&succs) {
            let members: Vec<FuncRef> = comp.iter().map(|&i| g.funcs[i]).collect();
            let idx = g.sccs.len() as u32;
            for &f in &members {
                g.scc_index[f] = idx;
                g.recursive[f] = members.len() > 1 || g.callees[f].contains(&f);
            }
            g.sccs.push(members);
        }

        if let Some(main) = g.main {
            let mut work = vec![main];
            g.reachable[main] = true;
            while let Some(f) = work.pop() {
                for i in 0..g.callees[f].len() {
                    let c = g.callees[f][i];
                    if !g.reachable[c] {
                        g.reachable[c] = true;
                        work.push(c);
                    }
                }
            }
        }
        g
    }

    /// The functions of the graph, in [`FuncRef`] order.
    pub fn functions(&self) -> &[FuncRef] {
        &self.funcs
    }

    /// Distinct module functions `f` calls, sorted.
    pub fn callees(&self, f: FuncRef) -> &[FuncRef] {
        &self.callees[f]
    }

    /// Distinct functions calling `f`, sorted.
    pub fn callers(&self, f: FuncRef) -> &[FuncRef] {
        &self.callers[f]
    }

    /// The calls of module functions inside `f`: `(call instruction, callee)` in layout order.
    pub fn call_sites(&self, f: FuncRef) -> &[(Inst, FuncRef)] {
        &self.call_sites[f]
    }

    /// Number of call instructions in the whole module that call `f`.
    pub fn num_calls_to(&self, f: FuncRef) -> u32 {
        self.calls_to[f]
    }

    /// The strongly connected components, bottom-up: every component comes after all the
    /// components it calls into. Members of a component are sorted.
    pub fn sccs(&self) -> &[Vec<FuncRef>] {
        &self.sccs
    }

    /// Index (into [`CallGraph::sccs`]) of the component of `f`.
    pub fn scc_index(&self, f: FuncRef) -> usize {
        self.scc_index[f] as usize
    }

    /// The members of `f`'s component (just `f` unless it is mutually recursive).
    pub fn scc_of(&self, f: FuncRef) -> &[FuncRef] {
        &self.sccs[self.scc_index(f)]
    }

    /// `f` can call itself, directly or through other functions.
    pub fn is_recursive(&self, f: FuncRef) -> bool {
        self.recursive[f]
    }

    /// Every function, callees before callers (within a cycle, in [`FuncRef`] order).
    pub fn bottom_up(&self) -> Vec<FuncRef> {
        self.sccs.iter().flatten().copied().collect()
    }

    /// Every function, callers before callees (reverse of [`CallGraph::bottom_up`] by
    /// component; within a cycle, in [`FuncRef`] order).
    pub fn top_down(&self) -> Vec<FuncRef> {
        self.sccs.iter().rev().flatten().copied().collect()
    }

    /// The function named `main`, if any.
    pub fn main(&self) -> Option<FuncRef> {
        self.main
    }

    /// `f` is `main` or called (transitively) from it. False for everything when there is no
    /// `main`.
    pub fn is_reachable_from_main(&self, f: FuncRef) -> bool {
        self.reachable[f]
    }

    /// Functions not reachable from `main` (dead code a module pass may delete), in
    /// [`FuncRef`] order. Empty when the module has no `main` (nothing is known to be dead).
    pub fn unreachable_from_main(&self) -> Vec<FuncRef> {
        if self.main.is_none() {
            return Vec::new();
        }
        self.funcs.iter().copied().filter(|&f| !self.reachable[f]).collect()
    }

    /// Size of side tables indexed by [`FuncRef`] that cover every function of the graph.
    pub fn num_func_slots(&self) -> usize {
        self.funcs.last().map_or(0, |f| f.index() + 1)
    }
}
