//! Gen/kill problems the compiler poses, and the check that both solvers agree on them.
//!
//! * [`Liveness`] — SSA values live at block boundaries (backward, union). A phi's operand
//!   is used at the end of its incoming block, not in the phi's block, so it is counted
//!   there; a phi's result is defined at the start of its block.
//! * [`Dominators`] — the blocks dominating each block (forward, intersection; facts are
//!   block numbers). The same answer as [`DomTree`](crate::analysis::DomTree), by a different
//!   route: a cross-check of both and the forward/intersection test of the solvers.
//! * [`StackStoreReads`] — for stores into stack slots of this activation, "some instruction
//!   that may execute later may read the stored word" (backward, union, nothing killed).
//!   `load-elim` deletes a stack store whose fact does not hold after its block and that
//!   nothing later in its block reads.
//!
//! [`check_agreement`] solves every problem of a function with both solvers and compares.

use fixedbitset::FixedBitSet;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::{Direction, GenKillProblem, Meet, Solution, Transfer, iterative, region};
use crate::analysis::alias::{AliasAnalysis, Context, MemLoc};
use crate::analysis::cfg::ControlFlowGraph;
use crate::analysis::pointers::Root;
use crate::ir::{Block, Function, Inst, Opcode, Value, ValueDef};
use cranelift_entity::EntityRef;

/// Liveness of SSA values; facts are value numbers (instruction results and parameters).
pub struct Liveness<'f> {
    func: &'f Function,
    /// Per block number: values used by phis of its successors on edges from it.
    phi_uses: Vec<SmallVec<[Value; 4]>>,
}

impl<'f> Liveness<'f> {
    pub fn new(func: &'f Function) -> Liveness<'f> {
        let mut phi_uses: Vec<SmallVec<[Value; 4]>> = vec![SmallVec::new(); func.num_blocks()];
        for &b in func.layout() {
            for phi in func.block_phis(b) {
                for (pred, v) in func.inst(phi).phi_incoming() {
                    if let Some(uses) = phi_uses.get_mut(pred.index()) {
                        uses.push(v);
                    }
                }
            }
        }
        Liveness { func, phi_uses }
    }

    fn tracked(&self, v: Value) -> bool {
        matches!(self.func.value_def(v), ValueDef::Inst(_) | ValueDef::Param(_))
    }
}

impl GenKillProblem for Liveness<'_> {
    fn direction(&self) -> Direction {
        Direction::Backward
    }
    fn meet(&self) -> Meet {
        Meet::Union
    }
    fn num_facts(&self) -> usize {
        self.func.num_values()
    }
    fn boundary(&self) -> FixedBitSet {
        FixedBitSet::with_capacity(self.num_facts())
    }
    fn transfer(&self, b: Block) -> Transfer {
        let n = self.num_facts();
        let (mut uses, mut defs) = (FixedBitSet::with_capacity(n), FixedBitSet::with_capacity(n));
        for &v in self.phi_uses.get(b.index()).map_or(&[][..], |u| u.as_slice()) {
            if self.tracked(v) {
                uses.insert(v.index());
            }
        }
        let insts = self.func.block_insts_vec(b);
        for &inst in insts.iter().rev() {
            if let Some(r) = self.func.result(inst) {
                uses.set(r.index(), false);
                defs.insert(r.index());
            }
            if self.func.opcode(inst) != Opcode::Phi {
                for &a in self.func.args(inst) {
                    if self.tracked(a) {
                        uses.insert(a.index());
                    }
                }
            }
        }
        Transfer::new(uses, defs)
    }
}

/// Dominators as a data-flow problem; facts are block numbers.
pub struct Dominators {
    num_blocks: usize,
}

impl Dominators {
    pub fn new(func: &Function) -> Dominators {
        Dominators { num_blocks: func.num_blocks() }
    }
}

impl GenKillProblem for Dominators {
    fn direction(&self) -> Direction {
        Direction::Forward
    }
    fn meet(&self) -> Meet {
        Meet::Intersection
    }
    fn num_facts(&self) -> usize {
        self.num_blocks
    }
    fn boundary(&self) -> FixedBitSet {
        FixedBitSet::with_capacity(self.num_blocks)
    }
    fn transfer(&self, b: Block) -> Transfer {
        let mut gen_set = FixedBitSet::with_capacity(self.num_blocks);
        gen_set.insert(b.index());
        Transfer::new(gen_set, FixedBitSet::with_capacity(self.num_blocks))
    }
}

/// Alias queries [`StackStoreReads`] may make before it stops asking and assumes every
/// reading instruction may read every tracked store (sound, just less precise).
pub const STACK_STORE_QUERY_BUDGET: usize = 1 << 20;

/// Stores into stack slots that a later instruction may read. Facts are indices into
/// [`StackStoreReads::stores`].
pub struct StackStoreReads {
    stores: Vec<Inst>,
    /// Store → fact number (lookups only).
    index: FxHashMap<Inst, usize>,
    /// Per block number: the tracked stores some instruction of the block may read.
    reads: Vec<FixedBitSet>,
}

impl StackStoreReads {
    /// Tracks the stores of the reachable blocks whose address has one root, an `alloca`.
    /// Reads are judged with [`Context::AcrossIterations`]: the store and the read may be in
    /// different iterations of a loop.
    pub fn new(func: &Function, aa: &AliasAnalysis<'_>, cfg: &ControlFlowGraph) -> StackStoreReads {
        let stores: Vec<Inst> = cfg
            .rpo()
            .iter()
            .flat_map(|&b| func.block_insts(b))
            .filter(|&i| func.opcode(i) == Opcode::Store)
            .filter(|&i| matches!(aa.pointer(func, func.args(i)[0]).roots.single(), Some(Root::Alloca(_))))
            .collect();
        let n = stores.len();
        let mut reads = vec![FixedBitSet::with_capacity(n); func.num_blocks()];
        let mut budget = STACK_STORE_QUERY_BUDGET;
        if n > 0 {
            for &b in cfg.rpo() {
                for inst in func.block_insts(b) {
                    if !func.opcode(inst).reads_memory() {
                        continue;
                    }
                    let set = &mut reads[b.index()];
                    if budget < n {
                        set.insert_range(..);
                        continue;
                    }
                    budget -= n;
                    for (k, &s) in stores.iter().enumerate() {
                        if !set.contains(k) && aa.inst_may_read(func, inst, MemLoc::word(func.args(s)[0]), Context::AcrossIterations) {
                            set.insert(k);
                        }
                    }
                }
            }
        }
        let index = stores.iter().enumerate().map(|(k, &s)| (s, k)).collect();
        StackStoreReads { stores, index, reads }
    }

    /// The tracked stores, in reverse post-order of their blocks, then block order.
    pub fn stores(&self) -> &[Inst] {
        &self.stores
    }

    /// The fact number of `store`, if it is tracked.
    pub fn fact(&self, store: Inst) -> Option<usize> {
        self.index.get(&store).copied()
    }
}

impl GenKillProblem for StackStoreReads {
    fn direction(&self) -> Direction {
        Direction::Backward
    }
    fn meet(&self) -> Meet {
        Meet::Union
    }
    fn num_facts(&self) -> usize {
        self.stores.len()
    }
    fn boundary(&self) -> FixedBitSet {
        FixedBitSet::with_capacity(self.stores.len())
    }
    fn transfer(&self, b: Block) -> Transfer {
        let n = self.stores.len();
        let reads = self.reads.get(b.index()).cloned().unwrap_or_else(|| FixedBitSet::with_capacity(n));
        Transfer::new(reads, FixedBitSet::with_capacity(n))
    }
}

/// What [`check_agreement`] compared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Agreement {
    /// Problems solved by both solvers (and found equal).
    pub problems: usize,
}

/// The solvers disagree (or the region solver gave up).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    pub problem: &'static str,
    pub detail: String,
    /// The region solver gave up on a graph too irreducible for its node-splitting limit (a
    /// designed limit, not a wrong answer: callers may skip such functions).
    pub gave_up: bool,
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.problem, self.detail)
    }
}

/// Solves `problem` with both solvers and compares (no fallback hides a region failure).
pub fn compare(name: &'static str, cfg: &ControlFlowGraph, problem: &impl GenKillProblem) -> Result<Solution, Disagreement> {
    let g = super::graph::FlowGraph::build(cfg, problem);
    let by_iteration = Solution::from_ins(&g, iterative::solve(&g));
    let by_regions = region::solve(&g).map_err(|e| Disagreement {
        problem: name,
        detail: format!("the region solver gave up: {} nodes after splitting", e.nodes),
        gave_up: true,
    })?;
    let by_regions = Solution::from_ins(&g, by_regions);
    match by_iteration.first_difference(&by_regions) {
        None => Ok(by_iteration),
        Some(block) => Err(Disagreement {
            problem: name,
            detail: format!("block {block}: iterative {}, region {}", show(&by_iteration, block), show(&by_regions, block)),
            gave_up: false,
        }),
    }
}

/// The facts of block number `block`, for reports.
fn show(s: &Solution, block: usize) -> String {
    let ones = |set: &FixedBitSet| set.ones().map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    match s.blocks.get(block).and_then(|b| b.as_ref()) {
        Some((start, end)) => format!("start {{{}}} end {{{}}}", ones(start), ones(end)),
        None => "unreachable".to_string(),
    }
}

/// Solves liveness and dominators of `func` (and, given an alias analysis, the stack-store
/// reads) with both solvers; `Err` on the first disagreement.
pub fn check_agreement(func: &Function, aa: Option<&AliasAnalysis<'_>>) -> Result<Agreement, Disagreement> {
    let cfg = ControlFlowGraph::compute(func);
    let mut problems = 0;
    compare("liveness", &cfg, &Liveness::new(func))?;
    problems += 1;
    compare("dominators", &cfg, &Dominators::new(func))?;
    problems += 1;
    if let Some(aa) = aa {
        compare("stack-store-reads", &cfg, &StackStoreReads::new(func, aa, &cfg))?;
        problems += 1;
    }
    Ok(Agreement { problems })
}
