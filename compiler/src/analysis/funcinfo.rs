//! "FuncInfo": interprocedural side-effect summaries of every function, and which objects
//! each array parameter may point to.
//!
//! # What a summary says
//! For a function `f`, [`FuncSummary`] over-approximates what one call of `f` (including
//! everything it calls) may do:
//! * [`FuncSummary::does_io`] — may read standard input or write output: calls (transitively)
//!   some runtime-library function — every one of them (`getint` … `putf`, and
//!   `starttime`/`stoptime`, which write the timer report) is I/O;
//! * [`FuncSummary::reads_global`] / [`FuncSummary::writes_global`] — may load / store (or
//!   `memzero`) that global *by name* (through its address in `f` or in a callee);
//! * [`FuncSummary::reads_param`] / [`FuncSummary::writes_param`] — may read / write memory
//!   reachable through pointer parameter `i` (anywhere in the object it points into, not just
//!   at or after the passed address), directly or by passing it (or a `gep` of it) on;
//! * writes to the function's own stack slots are never effects: they die with the call.
//!
//! A global passed *as an argument* is accounted for by the parameter, not by the global sets:
//! the effects of one call site are "the globals in the sets, plus whatever the arguments at
//! the flagged parameter positions point to". [`super::alias::AliasAnalysis::call_effects`]
//! turns that into object sets for a call instruction.
//!
//! Derived flags (each implies the guarantees listed, for every call, with any arguments):
//! * [`FuncSummary::is_read_only`] — no I/O, writes no memory outside its own frame. Two calls
//!   with equal arguments return the same value if nothing they may read (the read globals,
//!   the objects behind the read parameters) is written between them. An unused call may be
//!   deleted only if it also [`always_returns`](FuncSummary::always_returns).
//! * [`FuncSummary::is_pure`] — read-only, and reads no memory outside its own frame except
//!   `const` globals (which never change): the result is a function of the argument values
//!   alone. Calls with equal arguments can be merged (CSE/GVN) and hoisted to any point that
//!   still executes them; deleting an unused one needs `always_returns` too.
//! * [`FuncSummary::always_returns`] — every call terminates normally, whatever the arguments:
//!   every CFG cycle a natural loop that provably finishes ([`super::termination`]), no
//!   recursion, no division whose divisor is not a constant other than 0 and
//!   −1, no reachable `unreachable`, no input built-in (they trap when input runs out), and
//!   every callee always returns. Memory accesses are assumed in bounds and initialised
//!   (anything else is undefined behaviour in SysY, the same assumption passes make when they
//!   speculate loads). This is LLVM's `willreturn`: it is what makes a pure call removable
//!   or speculable.
//! * [`FuncSummary::is_speculatable`] — always returns, and cannot trap even when called
//!   where the program would not have called it: every memory access of it and its callees
//!   is at a constant offset inside a global or one of its own stack slots. `always_returns`
//!   assumes accesses in bounds, which holds for a call the program makes (anything else is
//!   undefined behaviour) but not for one a pass speculates — hoisted out of a branch that
//!   guarded the index (`if (i < n) s = f(a, i);`), where it may read past an array.
//! * [`FuncSummary::is_recursive`] — from the call graph.
//!
//! # Computation
//! Summaries are computed bottom-up over the call graph's strongly connected components
//! ([`CallGraph::sccs`]): callees outside the component are final by then; inside a
//! component every member starts at "no effect, always returns" and all members are
//! re-summarised until nothing changes. Summarising is monotone in the callees' summaries
//! (more callee effects never remove caller effects), so the iteration reaches the least
//! fixpoint, which covers every execution. Each function's memory accesses are attributed
//! through its [`AddressMap`]: a pointer rooted at a global adds that global, one rooted at a
//! parameter flags the parameter, one rooted at an `alloca` is local, and an unknown pointer
//! counts as every global and every pointer parameter. Instructions in unreachable blocks are
//! included (harmless over-approximation).
//!
//! Calls of removed functions (invalid IR) get the worst summary: I/O, every global and
//! every argument read and written, may not return.
//!
//! # Parameter points-to
//! Because pointers only travel through call arguments (never through memory), the objects a
//! pointer parameter may point into are exactly the union, over all call sites, of what the
//! argument may point into in the caller — a global, some activation of a caller's `alloca`
//! ([`MemObject::Alloca`]), or (for a caller's own parameter) that parameter's set. This is
//! solved top-down to a fixpoint ([`FuncInfo::param_points_to`]). It is what lets the alias
//! analysis prove that two array parameters, or a parameter and a global, are distinct: in
//! `mm(a, b, c)` called only with three different global arrays, the parameters never alias
//! each other, nor any global that no call passes. A function nobody calls gets empty sets
//! (it never runs, so any answer is vacuously true); `main` has no parameters.
//!
//! # Snapshot
//! A [`FuncInfo`] describes the module at the moment it was computed. Passes that add calls,
//! change call arguments, or add memory accesses (new stores, or loads of new globals) must
//! recompute it before relying on it again; semantics-preserving rewrites *within* function
//! bodies (removing code, moving code, forwarding values) keep it sound. Inside a function
//! pass (which holds its function outside the module) use [`FuncInfo::compute_with`].

use std::collections::BTreeSet;
use std::sync::Arc;

use cranelift_entity::SecondaryMap;

use super::callgraph::{CallGraph, module_functions};
use super::cfg::ControlFlowGraph;
use super::pointers::{AddressMap, Root, Roots};
use super::domtree::DomTree;
use super::loops::LoopForest;
use super::scc::nodes_on_cycles;
use super::termination::all_loops_terminate;
use crate::frontend::hir::Builtin;
use crate::ir::instr::builtin_signature;
use crate::ir::{Callee, FuncRef, Function, GlobalRef, Inst, Module, Opcode, Type, Value};

/// A memory object, named from outside any particular activation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemObject {
    Global(GlobalRef),
    /// The stack slot of `alloca` `Inst` in *some* activation of the function.
    Alloca(FuncRef, Inst),
}

/// A set of [`MemObject`]s, possibly "any object".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectSet {
    any: bool,
    objects: BTreeSet<MemObject>,
}

impl ObjectSet {
    /// The set of every object.
    pub fn any() -> ObjectSet {
        ObjectSet { any: true, objects: BTreeSet::new() }
    }

    pub fn is_any(&self) -> bool {
        self.any
    }

    pub fn is_empty(&self) -> bool {
        !self.any && self.objects.is_empty()
    }

    pub fn contains(&self, o: MemObject) -> bool {
        self.any || self.objects.contains(&o)
    }

    /// The listed objects (meaningless when [`ObjectSet::is_any`]).
    pub fn iter(&self) -> impl Iterator<Item = MemObject> + '_ {
        self.objects.iter().copied()
    }

    /// Some object is in both sets.
    pub fn intersects(&self, other: &ObjectSet) -> bool {
        if self.is_empty() || other.is_empty() {
            return false;
        }
        if self.any || other.any {
            return true;
        }
        let (small, big) =
            if self.objects.len() <= other.objects.len() { (self, other) } else { (other, self) };
        small.objects.iter().any(|o| big.objects.contains(o))
    }

    pub fn insert(&mut self, o: MemObject) -> bool {
        !self.any && self.objects.insert(o)
    }

    /// Adds every object of `other`; returns whether the set grew.
    pub fn union_with(&mut self, other: &ObjectSet) -> bool {
        if self.any {
            return false;
        }
        if other.any {
            *self = ObjectSet::any();
            return true;
        }
        let before = self.objects.len();
        self.objects.extend(other.objects.iter().copied());
        self.objects.len() != before
    }
}

/// The side effects of calling one function (see the module documentation for exactly what
/// each answer guarantees).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FuncSummary {
    io: bool,
    reads_globals: BTreeSet<GlobalRef>,
    writes_globals: BTreeSet<GlobalRef>,
    /// Per parameter index; `false` for scalar parameters.
    reads_params: Vec<bool>,
    writes_params: Vec<bool>,
    /// Every parameter read and written, whatever its index (unknown callee).
    all_params: bool,
    recursive: bool,
    always_returns: bool,
    speculatable: bool,
    pure: bool,
    read_only: bool,
}

impl FuncSummary {
    /// May read standard input or write standard output/error (or touch the timers).
    pub fn does_io(&self) -> bool {
        self.io
    }

    /// May read global `g` directly (not counting reads through pointer parameters).
    pub fn reads_global(&self, g: GlobalRef) -> bool {
        self.reads_globals.contains(&g)
    }

    /// May write global `g` directly (not counting writes through pointer parameters).
    pub fn writes_global(&self, g: GlobalRef) -> bool {
        self.writes_globals.contains(&g)
    }

    /// The globals read directly, sorted.
    pub fn reads_globals(&self) -> impl Iterator<Item = GlobalRef> + '_ {
        self.reads_globals.iter().copied()
    }

    /// The globals written directly, sorted.
    pub fn writes_globals(&self) -> impl Iterator<Item = GlobalRef> + '_ {
        self.writes_globals.iter().copied()
    }

    /// May read memory of the object parameter `i` points into (false for scalars).
    pub fn reads_param(&self, i: usize) -> bool {
        self.all_params || self.reads_params.get(i).copied().unwrap_or(false)
    }

    /// May write memory of the object parameter `i` points into (false for scalars).
    pub fn writes_param(&self, i: usize) -> bool {
        self.all_params || self.writes_params.get(i).copied().unwrap_or(false)
    }

    /// May read through some pointer parameter.
    pub fn reads_param_memory(&self) -> bool {
        self.all_params || self.reads_params.contains(&true)
    }

    /// May write through some pointer parameter.
    pub fn writes_param_memory(&self) -> bool {
        self.all_params || self.writes_params.contains(&true)
    }

    /// May write memory outside its own frame (a global or through a parameter).
    pub fn writes_memory(&self) -> bool {
        !self.writes_globals.is_empty() || self.writes_param_memory()
    }

    /// In a call-graph cycle or calling itself.
    pub fn is_recursive(&self) -> bool {
        self.recursive
    }

    /// Every call terminates normally (see the module documentation).
    pub fn always_returns(&self) -> bool {
        self.always_returns
    }

    /// A call may be executed where the program would not have made it (see the module
    /// documentation): it always returns and its memory accesses are in bounds whatever the
    /// arguments.
    pub fn is_speculatable(&self) -> bool {
        self.speculatable
    }

    /// The result depends only on the argument values; no I/O, no writes outside its frame,
    /// no reads of memory outside its frame except `const` globals.
    pub fn is_pure(&self) -> bool {
        self.pure
    }

    /// No I/O and no writes outside its own frame (may read globals and parameter memory).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Fills in the derived flags.
    fn finish(&mut self, const_globals: &BTreeSet<GlobalRef>) {
        self.read_only = !self.io && !self.writes_memory();
        self.pure = self.read_only
            && !self.reads_param_memory()
            && self.reads_globals.iter().all(|g| const_globals.contains(g));
    }
}

/// Whether an access reads or writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Effect {
    Read,
    Write,
}

/// What a [`FuncInfo`] computed inside a function pass was computed from, as far as function
/// passes can change it: each function's object and edit stamp, and the signature fields the
/// stamp does not cover (see [`Function::edit_stamp`]). Function passes see the module
/// read-only, so its globals and strings cannot change between two equal keys' computations
/// unless a module pass ran in between (the pass manager forgets the key then).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionsKey(Vec<(FuncRef, (u64, u64), String, Vec<Value>, Type)>);

impl FunctionsKey {
    /// The key of [`FuncInfo::compute_with`]`(module, fref, func)`.
    pub fn of(module: &Module, fref: FuncRef, func: &Function) -> FunctionsKey {
        let entry = |(f, func): (FuncRef, &Function)| (f, func.edit_stamp(), func.name.clone(), func.params.clone(), func.ret);
        FunctionsKey(module_functions(module, Some((fref, func))).into_iter().map(entry).collect())
    }
}

/// Interprocedural summaries and parameter points-to sets of a module (see the module
/// documentation).
#[derive(Clone, Debug)]
pub struct FuncInfo {
    call_graph: CallGraph,
    present: SecondaryMap<FuncRef, bool>,
    summaries: SecondaryMap<FuncRef, FuncSummary>,
    builtins: Vec<(Builtin, FuncSummary)>,
    putf: FuncSummary,
    /// For calls of unknown (removed) functions.
    worst: FuncSummary,
    points_to: SecondaryMap<FuncRef, Vec<ObjectSet>>,
    const_globals: BTreeSet<GlobalRef>,
    global_words: SecondaryMap<GlobalRef, u32>,
    empty_set: ObjectSet,
    any_set: ObjectSet,
    /// What each function's body gave (its CFG and address map), for a later computation to
    /// reuse for the functions not edited since ([`FuncInfo::compute_with_reusing`]).
    bodies: SecondaryMap<FuncRef, Option<BodyFacts>>,
}

/// The per-function inputs of the summaries that depend on the function's body alone.
#[derive(Clone, Debug)]
struct BodyFacts {
    /// The function object's edit stamp and parameters when computed: equal stamps mean the
    /// same object, unedited (see [`Function::edit_stamp`]); the parameter list is a public
    /// field the stamp does not cover.
    stamp: (u64, u64),
    params: Vec<Value>,
    cfg: Arc<ControlFlowGraph>,
    addrs: Arc<AddressMap>,
}

impl FuncInfo {
    /// Summaries of every live function of `module`.
    pub fn compute(module: &Module) -> FuncInfo {
        FuncInfo::from_functions(module, &module_functions(module, None), None)
    }

    /// Summaries of `module` plus `func`, which is function `fref` taken out of the module
    /// (inside a function pass). Without it, calls of `fref` would look like calls of a
    /// removed function and `fref`'s own call sites would be missing from the points-to sets.
    pub fn compute_with(module: &Module, fref: FuncRef, func: &Function) -> FuncInfo {
        FuncInfo::compute_with_reusing(module, fref, func, None)
    }

    /// [`FuncInfo::compute_with`], taking the CFG and address map of every function that
    /// `previous` saw and that has not been edited since from `previous` instead of computing
    /// them again: both are functions of the body alone, so the result is the same. A
    /// function pass asks for summaries again after every edit of any function, and building
    /// every function's address map each time was about half of the summaries' cost.
    pub fn compute_with_reusing(module: &Module, fref: FuncRef, func: &Function, previous: Option<&FuncInfo>) -> FuncInfo {
        FuncInfo::from_functions(module, &module_functions(module, Some((fref, func))), previous)
    }

    fn from_functions(module: &Module, funcs: &[(FuncRef, &Function)], previous: Option<&FuncInfo>) -> FuncInfo {
        let const_globals: BTreeSet<GlobalRef> =
            module.globals.iter().filter(|(_, g)| g.is_const).map(|(r, _)| r).collect();
        let all_globals: BTreeSet<GlobalRef> = module.globals.keys().collect();
        let mut global_words = SecondaryMap::new();
        for (g, data) in module.globals.iter() {
            global_words[g] = data.words;
        }
        let call_graph = CallGraph::from_functions(funcs);

        let mut worst = FuncSummary {
            io: true,
            reads_globals: all_globals.clone(),
            writes_globals: all_globals,
            all_params: true,
            ..FuncSummary::default()
        };
        worst.finish(&const_globals);
        let mut putf = FuncSummary { io: true, always_returns: true, ..FuncSummary::default() };
        putf.finish(&const_globals);
        let builtins = Builtin::ALL
            .iter()
            .filter_map(|&b| {
                let (params, _) = builtin_signature(b)?;
                let mut s = FuncSummary {
                    io: true,
                    reads_params: vec![false; params.len()],
                    writes_params: vec![false; params.len()],
                    always_returns: !matches!(
                        b,
                        Builtin::GetInt | Builtin::GetCh | Builtin::GetFloat | Builtin::GetArray | Builtin::GetFArray
                    ),
                    ..FuncSummary::default()
                };
                match b {
                    Builtin::GetArray | Builtin::GetFArray => s.writes_params[0] = true,
                    Builtin::PutArray | Builtin::PutFArray => s.reads_params[1] = true,
                    _ => {}
                }
                s.finish(&const_globals);
                Some((b, s))
            })
            .collect();

        let mut info = FuncInfo {
            call_graph,
            present: SecondaryMap::new(),
            summaries: SecondaryMap::new(),
            builtins,
            putf,
            worst,
            points_to: SecondaryMap::new(),
            const_globals,
            global_words,
            empty_set: ObjectSet::default(),
            any_set: ObjectSet::any(),
            bodies: SecondaryMap::new(),
        };

        let mut index_of: SecondaryMap<FuncRef, usize> = SecondaryMap::new();
        // One CFG per function, shared by its address map and every summary of it (the
        // functions do not change while this runs); both taken from `previous` when the
        // function is the same, unedited.
        let unedited = |f: FuncRef, func: &Function| {
            let stamp = func.edit_stamp();
            previous?.bodies.get(f)?.as_ref().filter(|b| b.stamp == stamp && b.params == func.params).cloned()
        };
        for (i, &(f, func)) in funcs.iter().enumerate() {
            let facts = unedited(f, func).unwrap_or_else(|| {
                let cfg = ControlFlowGraph::compute(func);
                let addrs = AddressMap::compute_with_cfg(func, &cfg);
                BodyFacts { stamp: func.edit_stamp(), params: func.params.clone(), cfg: Arc::new(cfg), addrs: Arc::new(addrs) }
            });
            info.bodies[f] = Some(facts);
            info.present[f] = true;
            index_of[f] = i;
            info.summaries[f] = FuncSummary {
                reads_params: vec![false; func.params.len()],
                writes_params: vec![false; func.params.len()],
                recursive: info.call_graph.is_recursive(f),
                always_returns: true,
                speculatable: true,
                ..FuncSummary::default()
            };
            info.points_to[f] = vec![ObjectSet::default(); func.params.len()];
        }

        // Summaries, bottom-up; iterate inside recursive components.
        let sccs = info.call_graph.sccs().to_vec();
        for scc in &sccs {
            let needs_iteration = scc.len() > 1 || info.call_graph.is_recursive(scc[0]);
            loop {
                let mut changed = false;
                for &f in scc {
                    let (_, func) = funcs[index_of[f]];
                    let facts = info.bodies[f].as_ref().expect("every function's facts are computed first");
                    let s = info.summarise(f, func, &facts.cfg, &facts.addrs);
                    if s != info.summaries[f] {
                        info.summaries[f] = s;
                        changed = true;
                    }
                }
                if !changed || !needs_iteration {
                    break;
                }
            }
        }

        // Parameter points-to, top-down to a fixpoint.
        let top_down = info.call_graph.top_down();
        loop {
            let mut changed = false;
            for &caller in &top_down {
                let (_, func) = funcs[index_of[caller]];
                let map = Arc::clone(&info.bodies[caller].as_ref().expect("every function's facts are computed first").addrs);
                let sites = info.call_graph.call_sites(caller).to_vec();
                for (inst, callee) in sites {
                    let (_, callee_func) = funcs[index_of[callee]];
                    for (k, &arg) in func.args(inst).iter().enumerate() {
                        let Some(&param) = callee_func.params.get(k) else { break };
                        if callee_func.value_type(param) != Type::Ptr || func.value_type(arg) != Type::Ptr {
                            continue;
                        }
                        let objs = info.objects_of_roots(caller, &map.pointer(func, arg).roots);
                        if info.points_to[callee][k].union_with(&objs) {
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        info
    }

    /// The objects (outside any particular activation) a pointer with these roots in `f`
    /// may point into.
    fn objects_of_roots(&self, f: FuncRef, roots: &Roots) -> ObjectSet {
        let Some(roots) = roots.known() else { return ObjectSet::any() };
        let mut set = ObjectSet::default();
        for &r in roots {
            match r {
                Root::Alloca(a) => {
                    set.insert(MemObject::Alloca(f, a));
                }
                Root::Global(g) => {
                    set.insert(MemObject::Global(g));
                }
                Root::Param(i) => {
                    set.union_with(self.param_points_to(f, i as usize));
                }
            }
        }
        set
    }

    /// One function's summary from its body and the current summaries of its callees.
    fn summarise(&self, f: FuncRef, func: &Function, cfg: &ControlFlowGraph, addrs: &AddressMap) -> FuncSummary {
        let n = func.params.len();
        let mut s = FuncSummary {
            reads_params: vec![false; n],
            writes_params: vec![false; n],
            recursive: self.call_graph.is_recursive(f),
            always_returns: !self.call_graph.is_recursive(f),
            speculatable: true,
            ..FuncSummary::default()
        };
        let in_bounds =
            |addr: Value, words: u32| addrs.pointer(func, addr).constant_in_bounds(func, |g| self.global_words[g], words);
        let touch = |s: &mut FuncSummary, v: Value, effect: Effect| {
            let (globals, params) = match effect {
                Effect::Read => (&mut s.reads_globals, &mut s.reads_params),
                Effect::Write => (&mut s.writes_globals, &mut s.writes_params),
            };
            match &addrs.pointer(func, v).roots {
                Roots::Unknown => {
                    globals.extend(self.worst.reads_globals.iter().copied());
                    for (i, &p) in func.params.iter().enumerate() {
                        params[i] |= func.value_type(p) == Type::Ptr;
                    }
                }
                Roots::Known(roots) => {
                    for &r in roots {
                        match r {
                            Root::Alloca(_) => {}
                            Root::Global(g) => {
                                globals.insert(g);
                            }
                            Root::Param(i) => {
                                if let Some(flag) = params.get_mut(i as usize) {
                                    *flag = true;
                                }
                            }
                        }
                    }
                }
            }
        };
        for &b in func.layout() {
            let live = cfg.is_reachable(b);
            for inst in func.block_insts(b) {
                let args = func.args(inst);
                let opcode = func.opcode(inst);
                if live {
                    match opcode {
                        Opcode::Load => s.speculatable &= args.first().is_some_and(|&a| in_bounds(a, 1)),
                        Opcode::Store => s.speculatable &= args.first().is_some_and(|&a| in_bounds(a, 1)),
                        Opcode::MemZero { words } => s.speculatable &= args.first().is_some_and(|&a| in_bounds(a, words)),
                        _ => {}
                    }
                }
                match opcode {
                    Opcode::Load if !args.is_empty() => touch(&mut s, args[0], Effect::Read),
                    Opcode::Store | Opcode::MemZero { .. } if !args.is_empty() => touch(&mut s, args[0], Effect::Write),
                    Opcode::SDiv | Opcode::SRem if live => {
                        let safe = args.get(1).and_then(|&d| func.as_int_const(d)).is_some_and(|d| d != 0 && d != -1);
                        s.always_returns &= safe;
                    }
                    Opcode::Unreachable if live => s.always_returns = false,
                    Opcode::Call(callee) => {
                        let cs = self.callee_summary(callee);
                        s.io |= cs.io;
                        s.reads_globals.extend(cs.reads_globals.iter().copied());
                        s.writes_globals.extend(cs.writes_globals.iter().copied());
                        for (k, &arg) in args.iter().enumerate() {
                            if func.value_type(arg) != Type::Ptr {
                                continue;
                            }
                            if cs.reads_param(k) {
                                touch(&mut s, arg, Effect::Read);
                            }
                            if cs.writes_param(k) {
                                touch(&mut s, arg, Effect::Write);
                            }
                        }
                        if live {
                            s.always_returns &= cs.always_returns;
                            s.speculatable &= cs.speculatable;
                        }
                    }
                    _ => {}
                }
            }
        }
        if s.always_returns {
            // A CFG cycle must be a natural loop that provably finishes.
            let rpo = cfg.rpo();
            let mut dense: SecondaryMap<crate::ir::Block, usize> = SecondaryMap::new();
            for (i, &b) in rpo.iter().enumerate() {
                dense[b] = i;
            }
            let succs: Vec<Vec<usize>> = rpo.iter().map(|&b| cfg.succs(b).iter().map(|&t| dense[t]).collect()).collect();
            if nodes_on_cycles(&succs).contains(&true) {
                let domtree = DomTree::compute(cfg);
                let loops = LoopForest::compute(cfg, &domtree);
                s.always_returns = all_loops_terminate(func, &domtree, &loops);
            }
        }
        s.speculatable &= s.always_returns;
        s.finish(&self.const_globals);
        s
    }

    /// The summary of module function `f` (the worst summary if `f` is not a function of the
    /// analysed module).
    /// The CFG and address map these summaries were computed from for `f`, when `func` is
    /// that same function object, unedited since (its edit stamp and parameters unchanged):
    /// then they are exactly what computing them from `func` again would give.
    pub fn unedited_body(&self, f: FuncRef, func: &Function) -> Option<(Arc<ControlFlowGraph>, Arc<AddressMap>)> {
        let facts = self.bodies.get(f)?.as_ref()?;
        (facts.stamp == func.edit_stamp() && facts.params == func.params).then(|| (facts.cfg.clone(), facts.addrs.clone()))
    }

    pub fn summary(&self, f: FuncRef) -> &FuncSummary {
        if self.present.get(f).copied().unwrap_or(false) { &self.summaries[f] } else { &self.worst }
    }

    /// The summary of whatever a call instruction calls: a module function, a runtime
    /// built-in (I/O; `getarray`/`getfarray` write through argument 0, `putarray`/`putfarray`
    /// read through argument 1; the input built-ins may trap) or `putf`.
    pub fn callee_summary(&self, callee: Callee) -> &FuncSummary {
        match callee {
            Callee::Func(f) => self.summary(f),
            Callee::Builtin(b) => {
                self.builtins.iter().find(|(x, _)| *x == b).map(|(_, s)| s).unwrap_or(&self.putf)
            }
            Callee::PutF(_) => &self.putf,
        }
    }

    /// The objects pointer parameter `i` of `f` may point into over all calls in the module
    /// (empty for scalar parameters and for functions nobody calls; "any" for functions
    /// outside the analysed module).
    pub fn param_points_to(&self, f: FuncRef, i: usize) -> &ObjectSet {
        if !self.present.get(f).copied().unwrap_or(false) {
            return &self.any_set;
        }
        self.points_to[f].get(i).unwrap_or(&self.empty_set)
    }

    pub fn call_graph(&self) -> &CallGraph {
        &self.call_graph
    }

    /// `g` is declared `const` (a correct program never writes it; a store to it traps).
    pub fn is_const_global(&self, g: GlobalRef) -> bool {
        self.const_globals.contains(&g)
    }

    /// Size of global `g` in 4-byte words.
    pub fn global_words(&self, g: GlobalRef) -> u32 {
        self.global_words[g]
    }
}

#[cfg(test)]
mod key_tests {
    use super::FunctionsKey;
    use crate::ir::{FuncRef, InstData, Module, Opcode, Type, parse_module};

    const CALLER_AND_CALLEE: &str = "func @g(%x: i32) -> i32 {
bb0:
    ret %x
}
func @f(%y: i32) -> i32 {
bb0:
    %r = call i32 @g(%y)
    ret %r
}
";

    fn module() -> (Module, FuncRef, FuncRef) {
        let m = parse_module(CALLER_AND_CALLEE).unwrap_or_else(|e| panic!("{e}"));
        let (g, f) = (m.func_refs()[0], m.func_refs()[1]);
        (m, g, f)
    }

    #[test]
    fn the_key_holds_while_no_function_changes() {
        let (mut m, g, f) = module();
        let func = m.take_function(f);
        let key = FunctionsKey::of(&m, f, &func);
        assert_eq!(key, FunctionsKey::of(&m, f, &func));
        m.put_back(f, func);
        let mut func = m.take_function(f);
        assert_eq!(key, FunctionsKey::of(&m, f, &func), "taking a function out and back is no edit");
        assert_ne!(key, FunctionsKey::of(&m, f, &func.clone()), "a copy is another object");
        func.name = "h".into();
        assert_ne!(key, FunctionsKey::of(&m, f, &func), "a rename moves no stamp but changes the key");
        func.name = "f".into();
        assert_eq!(key, FunctionsKey::of(&m, f, &func));
        // An edit of another function.
        let callee = m.func_mut(g);
        let one = callee.iconst(1);
        let entry = callee.layout()[0];
        let add = callee.create_inst(InstData::binary(Opcode::Add, one, one, Type::I32));
        callee.prepend_inst(entry, add);
        assert_ne!(key, FunctionsKey::of(&m, f, &func));
    }
}
