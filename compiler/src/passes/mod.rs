//! IR optimisation passes and the one registry that lists them.
//!
//! A pass is a [`FunctionPass`] (run once per function, with read access to the rest of the
//! module) or a [`ModulePass`] (interprocedural). Each lives in its own file whose doc comment
//! says what it does, why, and what it assumes, and is listed exactly once in [`REGISTRY`] under a
//! stable name, so a pipeline is just a list of names (`--passes=mem2reg,gvn,licm`). The
//! [`manager`] runs pipelines with verification, statistics, printing and opt-bisect support.

pub mod array_hoist;
pub mod block_reorder;
pub mod cfg_edit;
pub mod const_arrays;
pub mod constfold;
pub mod constraint_elim;
pub mod dce;
pub mod dead_arrays;
pub mod dead_functions;
pub mod full_unroll;
pub mod fuse_blocks;
pub mod fuse_branch;
pub mod gcm;
pub mod gep_invariant;
pub mod gep_offsets;
pub mod global_to_local;
pub mod gvn;
pub mod hoist_global_loads;
pub mod if_to_select;
pub mod inline;
pub mod instcombine;
pub mod iv_reduce;
pub mod lcm;
pub mod licm;
pub mod load_elim;
pub mod loop_clone;
pub mod loop_deletion;
pub mod loop_idle_exit;
pub mod loop_load_elim;
pub mod loop_rotate;
pub mod loop_simplify;
pub mod manager;
pub mod mem2reg;
pub mod reassociate;
pub mod recursive_inline;
pub mod sccp;
pub mod simplify_cfg;
pub mod size_pins;
pub mod tail_recursion;
pub mod thread_known_branch;
pub mod thread_phi_branch;
pub mod trivial_phi;
pub mod unreachable_blocks;
pub mod unroll;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use std::sync::Arc;

use crate::analysis::cache::AnalysisCache;
use crate::analysis::funcinfo::{FuncInfo, FunctionsKey};
use crate::faults::FaultSet;
use size_pins::SizePins;
use crate::ir::{FuncRef, Function, Module};
use crate::isa::arm::BackendStage;


/// A pass over one function at a time.
pub trait FunctionPass: Sync {
    /// Transforms `func`; returns whether anything changed.
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool;
}

/// A pass over the whole module.
pub trait ModulePass: Sync {
    /// Transforms `module`; returns whether anything changed.
    fn run(&self, module: &mut Module, cx: &mut ModuleCx<'_>) -> bool;
}

pub enum PassBody {
    Function(&'static dyn FunctionPass),
    Module(&'static dyn ModulePass),
    /// An optional stage of the ARM back end: it runs on machine code, not on the IR, and is
    /// switched on and off by `--backend-stages` rather than placed in a pipeline.
    Backend(BackendStage),
}

/// A registry entry.
pub struct PassInfo {
    /// Stable name used in pipelines, reports and CSV files.
    pub name: &'static str,
    /// One line for `--list-passes`.
    pub description: &'static str,
    /// The name of the corresponding pass in the catalogue of the course compiler this project
    /// follows, when there is one.
    pub catalogue: Option<&'static str>,
    pub body: PassBody,
}

impl PassInfo {
    /// The registry entry of a back-end stage.
    const fn backend(stage: BackendStage) -> PassInfo {
        PassInfo { name: stage.name(), description: stage.description(), catalogue: None, body: PassBody::Backend(stage) }
    }

    pub fn is_backend(&self) -> bool {
        matches!(self.body, PassBody::Backend(_))
    }
}

impl PartialEq for PassInfo {
    /// Entries are unique by name.
    fn eq(&self, other: &PassInfo) -> bool {
        self.name == other.name
    }
}

impl Eq for PassInfo {}

impl std::hash::Hash for PassInfo {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl std::fmt::Debug for PassInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PassInfo({})", self.name)
    }
}

/// Counters a pass reports (e.g. `insts_removed`), summed over the functions it ran on.
pub type Counters = BTreeMap<&'static str, u64>;

/// What a function pass can see besides the function itself.
pub struct FunctionCx<'a> {
    /// The module with the function being transformed taken out (it is `func`).
    pub module: &'a Module,
    pub func_ref: FuncRef,
    /// CFG analyses of `func`, recomputed lazily when the CFG changed.
    pub analyses: &'a mut AnalysisCache,
    pub faults: &'a FaultSet,
    /// Size-driven decisions held fixed (see [`SizePins`]).
    pub pins: &'a SizePins,
    counters: &'a mut Counters,
    /// Interprocedural summaries, computed on first request and shared by every function of
    /// this pipeline position.
    pub(crate) funcinfo: &'a mut Option<Arc<FuncInfo>>,
    /// The summaries an earlier position computed, with what they were computed from: reused
    /// when the functions are still exactly those (see [`FunctionCx::funcinfo`]).
    pub(crate) kept_funcinfo: &'a mut Option<(FunctionsKey, Arc<FuncInfo>)>,
}

impl FunctionCx<'_> {
    /// Adds `n` to the pass's counter `name` (shown by `--stats`).
    pub fn count(&mut self, name: &'static str, n: u64) {
        *self.counters.entry(name).or_default() += n;
    }

    /// Function summaries (purity, globals and parameters read/written, ...) of the module,
    /// computed when a function pass first asks and kept for the rest of this pipeline
    /// position. Sound for function passes that do not add new calls or new memory effects:
    /// a summary only over-approximates once a pass has removed effects from some function.
    ///
    /// The first request of a position reuses the summaries of an earlier position when every
    /// function is the very object, at the very edit stamp and with the signature, they were
    /// computed from (and no module pass ran since: the manager forgets them then). They are
    /// then what computing them again would give: `FuncInfo` is a function of the functions
    /// and the module's globals, which function passes cannot change. Most positions change
    /// nothing, and the summaries (an address map of every function) were about a tenth of an
    /// `-O2` compilation's instructions.
    pub fn funcinfo(&mut self, func: &Function) -> Arc<FuncInfo> {
        if let Some(info) = self.funcinfo.as_ref() {
            return Arc::clone(info);
        }
        let key = FunctionsKey::of(self.module, self.func_ref, func);
        let info = match self.kept_funcinfo.as_ref().filter(|(kept, _)| *kept == key) {
            Some((_, info)) => Arc::clone(info),
            None => {
                let previous = self.kept_funcinfo.as_ref().map(|(_, info)| &**info);
                let info = Arc::new(FuncInfo::compute_with_reusing(self.module, self.func_ref, func, previous));
                *self.kept_funcinfo = Some((key, Arc::clone(&info)));
                info
            }
        };
        *self.funcinfo = Some(Arc::clone(&info));
        info
    }
}

/// What a module pass can see besides the module.
pub struct ModuleCx<'a> {
    pub faults: &'a FaultSet,
    /// Size-driven decisions held fixed (see [`SizePins`]).
    pub pins: &'a SizePins,
    /// Per-function analysis caches; a module pass that rewrites a function's CFG need not
    /// invalidate them (they check the function's CFG epoch).
    pub analyses: &'a mut Vec<AnalysisCache>,
    /// Opt-bisect: whether the pass may transform the given function (module passes that work
    /// function by function ask before each; see `PipelineOptions::opt_bisect_limit`).
    step_gate: &'a mut dyn FnMut(FuncRef) -> bool,
    counters: &'a mut Counters,
}

impl ModuleCx<'_> {
    pub fn count(&mut self, name: &'static str, n: u64) {
        *self.counters.entry(name).or_default() += n;
    }

    /// The analysis cache of function `f`.
    pub fn analyses_of(&mut self, f: FuncRef) -> &mut AnalysisCache {
        use cranelift_entity::EntityRef;
        let i = f.index();
        if self.analyses.len() <= i {
            self.analyses.resize_with(i + 1, AnalysisCache::default);
        }
        &mut self.analyses[i]
    }

    /// Opt-bisect gate for per-function work inside a module pass: returns false when the
    /// step budget is exhausted and the pass must leave `f` alone.
    pub fn may_transform(&mut self, f: FuncRef) -> bool {
        (self.step_gate)(f)
    }
}

/// Every pass of the compiler, in a stable order: the IR passes, then the optional back-end
/// stages (in back-end order).
pub static REGISTRY: &[PassInfo] = &[
    PassInfo {
        name: "mem2reg",
        description: "promote scalar stack slots to SSA values and phis",
        catalogue: Some("Mem2Reg"),
        body: PassBody::Function(&mem2reg::Mem2Reg),
    },
    PassInfo {
        name: "constfold",
        description: "fold instructions on constants; constant branches become jumps",
        catalogue: Some("ConstantFolding"),
        body: PassBody::Function(&constfold::ConstFold),
    },
    PassInfo {
        name: "dce",
        description: "delete instructions whose results nothing with an effect needs",
        catalogue: Some("DeadCodeElimination"),
        body: PassBody::Function(&dce::Dce),
    },
    PassInfo {
        name: "unreachable-blocks",
        description: "delete blocks not reachable from the entry",
        catalogue: Some("ClearUnreachableBlock"),
        body: PassBody::Function(&unreachable_blocks::UnreachableBlocks),
    },
    PassInfo {
        name: "trivial-phi",
        description: "replace phis whose incoming values are all one value (or the phi itself)",
        catalogue: Some("RemoveTrivialPhi"),
        body: PassBody::Function(&trivial_phi::TrivialPhi),
    },
    PassInfo {
        name: "simplify-cfg",
        description: "fuse-blocks and fuse-branch together, until neither applies",
        catalogue: Some("SimplifyCFG"),
        body: PassBody::Function(&simplify_cfg::SimplifyCfg),
    },
    PassInfo {
        name: "instcombine",
        description: "algebraic peepholes into canonical forms (x+0, x-x, constant chains, linear forms)",
        catalogue: Some("InstructionCombiner"),
        body: PassBody::Function(&instcombine::InstCombine),
    },
    PassInfo {
        name: "reassociate",
        description: "rewrite trees of integer add/sub/mul-by-constant as a minimal sum of scaled operands",
        catalogue: None,
        body: PassBody::Function(&reassociate::Reassociate),
    },
    PassInfo {
        name: "load-elim",
        description: "forward stored/loaded values to redundant loads; delete overwritten and never-read stores",
        catalogue: Some("ReplaceUnnecessaryLoad"),
        body: PassBody::Function(&load_elim::LoadElim),
    },
    PassInfo {
        name: "loop-simplify",
        description: "give every natural loop a preheader, a single latch and dedicated exits",
        catalogue: Some("LoopSimplify"),
        body: PassBody::Function(&loop_simplify::LoopSimplify),
    },
    PassInfo {
        name: "loop-deletion",
        description: "delete loops without effects whose values nothing outside uses, when they provably finish",
        catalogue: None,
        body: PassBody::Function(&loop_deletion::LoopDeletion),
    },
    PassInfo {
        name: "loop-idle-exit",
        description: "leave a counted loop at the first iteration of a skipped tail (`if (i < j) continue;`)",
        catalogue: None,
        body: PassBody::Function(&loop_idle_exit::LoopIdleExit),
    },
    PassInfo {
        name: "loop-load-elim",
        description: "loads of what the previous loop iteration loaded or stored take the value from a phi",
        catalogue: None,
        body: PassBody::Function(&loop_load_elim::LoopLoadElim),
    },
    PassInfo {
        name: "loop-rotate",
        description: "turn top-tested loops into guarded bottom-tested loops (while -> if + do-while)",
        catalogue: Some("LoopRotate"),
        body: PassBody::Function(&loop_rotate::LoopRotate),
    },
    PassInfo {
        name: "full-unroll",
        description: "replace single-block loops with a small constant trip count by straight-line copies",
        catalogue: Some("FullyUnroll"),
        body: PassBody::Function(&full_unroll::FullUnroll),
    },
    PassInfo {
        name: "array-hoist",
        description: "move the initialisation of a local array that is the same on every iteration out of its loop",
        catalogue: Some("LocalArrayHoist"),
        body: PassBody::Function(&array_hoist::ArrayHoist),
    },
    PassInfo {
        name: "iv-reduce",
        description: "strength-reduce values affine in an induction variable (incl. array addresses) to additive recurrences",
        catalogue: Some("InductionVariableReduce"),
        body: PassBody::Function(&iv_reduce::IvReduce),
    },
    PassInfo {
        name: "unroll",
        description: "unroll counted single-block loops with a run-time trip count by 2 or 4, with a remainder loop",
        catalogue: Some("LoopUnroll"),
        body: PassBody::Function(&unroll::LoopUnroll),
    },
    PassInfo {
        name: "gep-invariant",
        description: "split the loop-invariant term off gep indices in loops (gep(p, inv+x) -> gep(q, x), q = gep(p, inv) in the preheader)",
        catalogue: None,
        body: PassBody::Function(&gep_invariant::GepInvariant),
    },
    PassInfo {
        name: "gep-offsets",
        description: "split constant terms off gep indices (gep(p, x+c) -> gep(gep(p, x), c)) when addresses share p and x",
        catalogue: None,
        body: PassBody::Function(&gep_offsets::GepOffsets),
    },
    PassInfo {
        name: "licm",
        description: "hoist loop-invariant computations, loads and pure calls into the preheader",
        catalogue: Some("SimpleInvariantHoist"),
        body: PassBody::Function(&licm::Licm),
    },
    PassInfo {
        name: "fuse-blocks",
        description: "merge a block into its single predecessor when that only jumps to it",
        catalogue: Some("FuseBasicBlock"),
        body: PassBody::Function(&fuse_blocks::FuseBlocks),
    },
    PassInfo {
        name: "fuse-branch",
        description: "bypass blocks that only jump or branch on; fold br to one target",
        catalogue: Some("FuseImmediatelyBranch"),
        body: PassBody::Function(&fuse_branch::FuseBranch),
    },
    PassInfo {
        name: "thread-known-branch",
        description: "copy a small block branching on a condition into the predecessors that already decided it (a dominating edge of a branch on the same value, or the ranges of the compared values on the edge), each copy jumping straight to its side",
        catalogue: None,
        body: PassBody::Function(&thread_known_branch::ThreadKnownBranch),
    },
    PassInfo {
        name: "thread-phi-branch",
        description: "send predecessors of a block branching on a phi straight on when their incoming value (constant, 0/1 of a comparison) decides the branch",
        catalogue: None,
        body: PassBody::Function(&thread_phi_branch::ThreadPhiBranch),
    },
    PassInfo {
        name: "if-to-select",
        description: "small diamonds and triangles in loops whose arms only compute become straight-line code with selects",
        catalogue: None,
        body: PassBody::Function(&if_to_select::IfToSelect),
    },
    PassInfo {
        name: "block-reorder",
        description: "lay blocks out: dominators first, loop bodies before exits, jump targets next",
        catalogue: Some("BlockReorder"),
        body: PassBody::Function(&block_reorder::BlockReorder),
    },
    PassInfo {
        name: "tail-recursion",
        description: "turn self tail calls (`return f(...)`) into a loop over the function body",
        catalogue: None,
        body: PassBody::Function(&tail_recursion::TailRecursion),
    },
    PassInfo {
        name: "inline",
        description: "inline calls of small or single-use non-recursive functions",
        catalogue: Some("FunctionInline"),
        body: PassBody::Module(&inline::Inline),
    },
    PassInfo {
        name: "recursive-inline",
        description: "inline self-recursive functions into themselves a few levels deep, under a size budget",
        catalogue: None,
        body: PassBody::Function(&recursive_inline::RecursiveInline),
    },
    PassInfo {
        name: "dead-functions",
        description: "delete functions main cannot reach",
        catalogue: Some("ClearUselessFunction"),
        body: PassBody::Module(&dead_functions::DeadFunctions),
    },
    PassInfo {
        name: "gvn",
        description: "dominator-scoped value numbering: reassociated keys, pure calls, loads via memdep",
        catalogue: Some("SimpleGVN"),
        body: PassBody::Function(&gvn::Gvn),
    },
    PassInfo {
        name: "sccp",
        description: "sparse conditional constant propagation: constants through phis, dead branches folded",
        catalogue: None,
        body: PassBody::Function(&sccp::Sccp),
    },
    PassInfo {
        name: "constraint-elim",
        description: "fold compares, branches, remainders and quotients decided by dominating conditions and loop induction facts",
        catalogue: None,
        body: PassBody::Function(&constraint_elim::ConstraintElim),
    },
    PassInfo {
        name: "gcm",
        description: "global code motion: each pure instruction to the least loop-nested block between its earliest and latest",
        catalogue: Some("GlobalCodeMotion"),
        body: PassBody::Function(&gcm::Gcm),
    },
    PassInfo {
        name: "lcm",
        description: "local code motion: move a single-use instruction right before its user in the block",
        catalogue: Some("LocalCodeMotion"),
        body: PassBody::Function(&lcm::Lcm),
    },
    PassInfo {
        name: "global-to-local",
        description: "never-written scalar globals become constants; scalars only main uses become its locals",
        catalogue: Some("GlobalVariableToValue"),
        body: PassBody::Module(&global_to_local::GlobalToLocal),
    },
    PassInfo {
        name: "const-arrays",
        description: "loads at constant indices of global arrays nothing writes become constants",
        catalogue: Some("ReplaceConstantArray"),
        body: PassBody::Module(&const_arrays::ConstArrays),
    },
    PassInfo {
        name: "dead-arrays",
        description: "delete arrays (locals and globals) that are only written, never read, with their writes",
        catalogue: Some("RemoveUnnecessaryArray"),
        body: PassBody::Module(&dead_arrays::DeadArrays),
    },
    PassInfo {
        name: "hoist-global-loads",
        description: "loads in loops of global words unwritten since function entry move to the entry block",
        catalogue: Some("HoistGlobalArrayLoad"),
        body: PassBody::Function(&hoist_global_loads::HoistGlobalLoads),
    },
    PassInfo::backend(BackendStage::AddrFold),
    PassInfo::backend(BackendStage::OpFold),
    PassInfo::backend(BackendStage::ConstDiv),
    PassInfo::backend(BackendStage::ConstHoist),
    PassInfo::backend(BackendStage::ShrinkWrap),
    PassInfo::backend(BackendStage::SpillElim),
    PassInfo::backend(BackendStage::Remat),
    PassInfo::backend(BackendStage::CopyProp),
    PassInfo::backend(BackendStage::LeafRegs),
    PassInfo::backend(BackendStage::Peephole),
    PassInfo::backend(BackendStage::IfConvert),
    PassInfo::backend(BackendStage::BranchOpt),
];

/// The IR passes of the registry.
pub fn ir_passes() -> impl Iterator<Item = &'static PassInfo> {
    REGISTRY.iter().filter(|p| !p.is_backend())
}

pub fn lookup(name: &str) -> Option<&'static PassInfo> {
    REGISTRY.iter().find(|p| p.name == name)
}

/// Parses a comma-separated pipeline of IR passes; unknown names (and back-end stages) are
/// an error listing the valid ones.
pub fn parse_pipeline(spec: &str) -> Result<Vec<&'static PassInfo>, String> {
    let mut out = Vec::new();
    for name in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match lookup(name) {
            Some(p) if p.is_backend() => {
                return Err(format!("`{name}` is a back-end stage, not an IR pass: use --backend-stages"));
            }
            Some(p) => out.push(p),
            None => {
                let valid: Vec<&str> = ir_passes().map(|p| p.name).collect();
                return Err(format!("unknown pass `{name}`; valid passes: {}", valid.join(", ")));
            }
        }
    }
    Ok(out)
}

/// Optimisation levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OptLevel {
    O0,
    O1,
    O2,
}

impl OptLevel {
    pub fn parse(s: &str) -> Option<OptLevel> {
        match s.trim_start_matches('-') {
            "O0" | "0" => Some(OptLevel::O0),
            "O1" | "1" => Some(OptLevel::O1),
            "O2" | "2" => Some(OptLevel::O2),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            OptLevel::O0 => "O0",
            OptLevel::O1 => "O1",
            OptLevel::O2 => "O2",
        }
    }

    /// The pipeline of this level: `-O0` runs no pass at all, `-O2` the best we have.
    pub fn pipeline(self) -> Vec<&'static PassInfo> {
        let names: &[&str] = match self {
            OptLevel::O0 => &[],
            OptLevel::O1 => O1_PIPELINE,
            OptLevel::O2 => O2_PIPELINE,
        };
        names.iter().map(|n| lookup(n).expect("level pipelines name registered passes")).collect()
    }
}

/// SSA construction and cheap cleanups: each pass runs once, in an order where each feeds
/// the next (dead blocks go before the CFG is simplified, trivial phis before dead code).
pub const O1_PIPELINE: &[&str] = &["mem2reg", "unreachable-blocks", "simplify-cfg", "trivial-phi", "dce"];

/// The best pipeline we have:
/// 1. SSA, self tail calls turned into loops (the function may then be inlined), then
///    inlining (every later pass sees the inlined bodies; `dead-functions` drops
///    callees left without calls); globals that became `main`-only turn into locals, and a
///    second `mem2reg` promotes them.
/// 2. Constants and memory: sparse constant propagation, constant arrays, redundant loads.
/// 3. Two rounds of folding, combining, value numbering and CFG clean-up (folding branches
///    exposes dead blocks, merges and new constants), with loop-invariant code and loads of
///    globals leaving loops between them; branches on phis of constants and 0/1
///    comparisons (inlined boolean functions, flags) are threaded before the clean-up.
/// 4. Full unrolling of small constant-trip loops, and a clean-up of what it exposes;
///    neighbouring float accesses (`a[j-1]`, `a[j+1]`, unrolled lanes) get one shared
///    address (`gep-offsets` before `iv-reduce`, which walks it with one pointer, and again
///    on the unrolled copies before the last `gvn`).
/// 5. Scheduling (`gcm` then `lcm`) and, once the CFG no longer changes, the block layout.
pub const O2_PIPELINE: &[&str] = &[
    "mem2reg",
    "tail-recursion",
    "inline",
    "dead-functions",
    "global-to-local",
    "mem2reg",
    "sccp",
    "const-arrays",
    "load-elim",
    "constfold",
    "instcombine",
    "reassociate",
    "gvn",
    "thread-phi-branch",
    "unreachable-blocks",
    "simplify-cfg",
    "trivial-phi",
    "dce",
    "loop-deletion",
    "recursive-inline",
    "inline",
    "dead-functions",
    "loop-simplify",
    "loop-rotate",
    "array-hoist",
    "licm",
    "hoist-global-loads",
    "load-elim",
    "loop-load-elim",
    "dead-arrays",
    "constraint-elim",
    "constfold",
    "instcombine",
    "reassociate",
    "gvn",
    "thread-phi-branch",
    "if-to-select",
    "unreachable-blocks",
    "simplify-cfg",
    "trivial-phi",
    "thread-known-branch",
    "dce",
    "loop-deletion",
    "loop-idle-exit",
    "full-unroll",
    "gep-offsets",
    "iv-reduce",
    "unroll",
    "constfold",
    "instcombine",
    "gep-invariant",
    "gep-offsets",
    "gvn",
    "simplify-cfg",
    "dce",
    "gcm",
    "lcm",
    "block-reorder",
];
