//! Memory dependence: what last wrote a location before a program point — the query behind
//! load elimination, store-to-load forwarding and GVN of loads.
//!
//! # Query
//! [`MemDepQuery::dependency`]`(at, loc)` walks backwards from just before instruction `at`
//! and reports the nearest instruction that may write `loc` (or, on request, a load of exactly
//! `loc`), provided it is on *every* path to `at` — see [`MemDep`] for the answers.
//!
//! # Walk (why it is sound)
//! The walk scans `at`'s block backwards, then climbs the dominator tree: from block `B` to its
//! immediate dominator `D`, scanning `D` backwards from its end. Blocks *between* `D` and `B`
//! (those that reach `B` without passing through `D`, found by a backward search from `B`'s
//! predecessors that stops at `D`; `B` itself is among them when a cycle runs through it) are
//! not on every path, so any instruction there that may write `loc` ends the walk with
//! [`MemDep::Clobber`]; they are checked in [`Context::AcrossIterations`] because they may have
//! run in an earlier iteration than the values `loc` mentions.
//!
//! The instructions on the dominator chain (the part of `at`'s block before `at`, and each
//! dominator block's latest execution) are compared in [`Context::SameIteration`]. That is
//! sound: a value both addresses mention is defined in a block `X` dominating the scanned
//! block `D` (or earlier in `D`); had `X` run again after `D`'s latest execution, control
//! would have had to pass `D` again to reach `at` (every path from `X` to a block `D`
//! dominates goes through `D`), contradicting "latest". Earlier executions of `D` lie in the
//! region checked when the walk climbs past `D`. The same argument makes a stored value (or a
//! loaded result) found on the chain available, and equal to the location's contents, at `at`.
//!
//! A budget (instructions and blocks examined) bounds the cost; running out answers
//! [`MemDep::Unknown`].
//!
//! [`MemDepQuery::dependency_at_end`] asks the same at the end of a block (a preheader, a
//! predecessor for load PRE). [`MemDepQuery::first_writer`] answers the loop-invariance
//! question ("does anything in these blocks write `loc`, in any iteration?").
//!
//! # Using the answers
//! * Load elimination / GVN of loads: for `%v = load T %p`, ask
//!   `dependency(load, MemLoc::word(%p), true)`; on `Store(s)` replace `%v` by `s`'s stored
//!   value, on `Load(l)` by `l`'s result, on `Zero(_)` by the zero of `T` (if the types
//!   match — SysY never reinterprets, but check). `Uninit` may be replaced by `undef`.
//! * `Entry` for a global in `main` means the global still holds its initialiser — if
//!   `main` is not called by any function (see [`super::callgraph::CallGraph::num_calls_to`]).
//! * `Clobber` and `Unknown`: keep the load.

use cranelift_entity::SecondaryMap;

use super::alias::{AliasAnalysis, AliasResult, Context, MemLoc};
use super::cfg::ControlFlowGraph;
use super::domtree::DomTree;
use super::pointers::Root;
use crate::ir::{Block, Function, Inst, Opcode};

/// The answer to a memory-dependence query about `loc` just before an instruction `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemDep {
    /// On every path, the last write to `loc` is this store, which wrote exactly `loc`: the
    /// location holds the store's value operand (check its type against the use).
    Store(Inst),
    /// The last write is this `memzero`, which covers all of `loc`: it holds zero.
    Zero(Inst),
    /// (Only when loads were requested.) This load read exactly `loc` and nothing wrote `loc`
    /// since: the location holds the load's result.
    Load(Inst),
    /// The last event is the execution of this `alloca`, whose slot is `loc`'s only possible
    /// object: the location is uninitialised (its contents are undefined).
    Uninit(Inst),
    /// Nothing in this activation writes `loc` before `at` on any path from the entry: it
    /// holds whatever it held when the function was called.
    Entry,
    /// This instruction may write (part of) `loc` on some path to `at`; nothing more is known.
    Clobber(Inst),
    /// The budget ran out, or `at` is unreachable or not in the layout.
    Unknown,
}

/// Limits of one query.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemDepBudget {
    /// Instructions examined.
    pub max_insts: u32,
    /// Blocks entered (dominators and blocks between them).
    pub max_blocks: u32,
}

impl Default for MemDepBudget {
    fn default() -> MemDepBudget {
        MemDepBudget { max_insts: 512, max_blocks: 64 }
    }
}

/// Memory-dependence queries over one function in its current state. Cheap to create (it only
/// borrows); the CFG and dominator tree must be current.
pub struct MemDepQuery<'q, 'a> {
    pub func: &'q Function,
    pub aa: &'q AliasAnalysis<'a>,
    pub cfg: &'q ControlFlowGraph,
    pub domtree: &'q DomTree,
    pub budget: MemDepBudget,
}

/// Result of examining one instruction on the dominator chain.
enum Step {
    Continue,
    Stop(MemDep),
}

impl<'q, 'a> MemDepQuery<'q, 'a> {
    pub fn new(
        func: &'q Function,
        aa: &'q AliasAnalysis<'a>,
        cfg: &'q ControlFlowGraph,
        domtree: &'q DomTree,
    ) -> MemDepQuery<'q, 'a> {
        MemDepQuery { func, aa, cfg, domtree, budget: MemDepBudget::default() }
    }

    /// What `loc` holds just before `at` (see [`MemDep`]). With `want_loads`, an earlier load
    /// of exactly `loc` also ends the walk ([`MemDep::Load`]).
    pub fn dependency(&self, at: Inst, loc: MemLoc, want_loads: bool) -> MemDep {
        match self.func.inst_block(at) {
            Some(block) => self.walk(block, self.func.prev_inst(at), loc, want_loads),
            None => MemDep::Unknown,
        }
    }

    /// What `loc` holds at the end of `block`, after its last instruction (e.g. a loop
    /// preheader, for hoisting or promoting a load there).
    pub fn dependency_at_end(&self, block: Block, loc: MemLoc, want_loads: bool) -> MemDep {
        self.walk(block, self.func.last_inst(block), loc, want_loads)
    }

    /// The walk of the module documentation, starting at `cursor` (inclusive) in `block`.
    fn walk(&self, mut block: Block, mut cursor: Option<Inst>, loc: MemLoc, want_loads: bool) -> MemDep {
        let func = self.func;
        if !func.is_block_live(block) || !self.domtree.is_reachable(block) {
            return MemDep::Unknown;
        }
        let mut insts_left = self.budget.max_insts;
        let mut blocks_left = self.budget.max_blocks;
        let mut seen: SecondaryMap<Block, u32> = SecondaryMap::new();
        let mut stamp = 0u32;
        loop {
            while let Some(inst) = cursor {
                if insts_left == 0 {
                    return MemDep::Unknown;
                }
                insts_left -= 1;
                if let Step::Stop(answer) = self.examine(inst, loc, want_loads) {
                    return answer;
                }
                cursor = func.prev_inst(inst);
            }
            // Blocks between the immediate dominator and `block` (for the entry block, which
            // has no dominator: every block reaching it — none in valid IR).
            let idom = self.domtree.idom(block);
            stamp += 1;
            if let Some(d) = idom {
                seen[d] = stamp;
            }
            let mut work: Vec<Block> = self.cfg.preds(block).to_vec();
            while let Some(b) = work.pop() {
                if seen[b] == stamp || !self.domtree.is_reachable(b) {
                    continue;
                }
                seen[b] = stamp;
                if blocks_left == 0 {
                    return MemDep::Unknown;
                }
                blocks_left -= 1;
                for inst in func.block_insts(b) {
                    if insts_left == 0 {
                        return MemDep::Unknown;
                    }
                    insts_left -= 1;
                    if self.aa.inst_may_write(func, inst, loc, Context::AcrossIterations) {
                        return MemDep::Clobber(inst);
                    }
                }
                work.extend(self.cfg.preds(b).iter().copied());
            }
            let Some(idom) = idom else { return MemDep::Entry };
            if blocks_left == 0 {
                return MemDep::Unknown;
            }
            blocks_left -= 1;
            block = idom;
            cursor = func.last_inst(idom);
        }
    }

    /// One instruction on the dominator chain.
    fn examine(&self, inst: Inst, loc: MemLoc, want_loads: bool) -> Step {
        let (func, aa) = (self.func, self.aa);
        let ctx = Context::SameIteration;
        match func.opcode(inst) {
            Opcode::Store => match aa.access(func, inst) {
                Some(acc) => match aa.alias(func, acc.loc, loc, ctx) {
                    AliasResult::No => Step::Continue,
                    AliasResult::Must if aa.inst_may_write(func, inst, loc, ctx) => Step::Stop(MemDep::Store(inst)),
                    AliasResult::Must => Step::Continue,
                    AliasResult::May => Step::Stop(MemDep::Clobber(inst)),
                },
                None => Step::Stop(MemDep::Clobber(inst)),
            },
            Opcode::MemZero { .. } => {
                if !aa.inst_may_write(func, inst, loc, ctx) {
                    Step::Continue
                } else if aa.must_overwrite(func, inst, loc, ctx) {
                    Step::Stop(MemDep::Zero(inst))
                } else {
                    Step::Stop(MemDep::Clobber(inst))
                }
            }
            Opcode::Load if want_loads => match aa.access(func, inst) {
                Some(acc) if aa.must_alias(func, acc.loc, loc, ctx) => Step::Stop(MemDep::Load(inst)),
                _ => Step::Continue,
            },
            Opcode::Alloca { .. } => {
                if !aa.inst_may_write(func, inst, loc, ctx) {
                    Step::Continue
                } else if aa.pointer(func, loc.ptr).roots.single() == Some(Root::Alloca(inst)) {
                    Step::Stop(MemDep::Uninit(inst))
                } else {
                    Step::Stop(MemDep::Clobber(inst))
                }
            }
            Opcode::Call(_) if aa.inst_may_write(func, inst, loc, ctx) => Step::Stop(MemDep::Clobber(inst)),
            _ => Step::Continue,
        }
    }

    /// The first instruction (in the given block order, then program order) that may write
    /// `loc` in any execution ([`Context::AcrossIterations`]); `None` when no instruction of
    /// `blocks` writes it — e.g. `blocks` = a loop's body: `loc` is then invariant in the loop.
    pub fn first_writer(&self, blocks: &[Block], loc: MemLoc) -> Option<Inst> {
        self.first_writer_among(&self.writers(blocks), loc)
    }

    /// The instructions of `blocks` (in order) that may write some location: stores,
    /// `memzero`s, `alloca`s and calls (and a malformed load, which the alias analysis treats
    /// as writing anything). No other instruction writes memory, so [`Self::first_writer`]
    /// needs only these; a caller asking about many locations collects them once.
    pub fn writers(&self, blocks: &[Block]) -> Vec<Inst> {
        blocks
            .iter()
            .flat_map(|&b| self.func.block_insts(b))
            .filter(|&inst| match self.func.opcode(inst) {
                Opcode::Store | Opcode::MemZero { .. } | Opcode::Alloca { .. } | Opcode::Call(_) => true,
                Opcode::Load => self.aa.access(self.func, inst).is_none(),
                _ => false,
            })
            .collect()
    }

    /// [`Self::first_writer`] over instructions already collected by [`Self::writers`].
    pub fn first_writer_among(&self, writers: &[Inst], loc: MemLoc) -> Option<Inst> {
        writers.iter().copied().find(|&inst| self.aa.inst_may_write(self.func, inst, loc, Context::AcrossIterations))
    }
}
