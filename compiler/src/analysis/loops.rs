//! The loop forest: natural loops, their nesting, and per-block loop depth.
//!
//! A back edge is an edge `latch → header` whose target dominates its source. The natural
//! loop of a header is the header plus every block that can reach one of its latches
//! without passing through the header; all back edges to one header form one loop. Two
//! natural loops with different headers are either disjoint or nested (the outer header
//! strictly dominates the inner one), so they form a forest.
//!
//! Algorithm: visit headers in reverse post-order — an enclosing loop's header dominates the
//! inner header and so comes first — and collect each body by a backward walk from the
//! latches. A body's blocks record the loop as their innermost loop, overwriting the enclosing
//! loop recorded earlier; the loop's parent is whatever the header recorded just before.
//!
//! Irreducible control flow: a cycle entered at more than one block has a retreating edge
//! (to a block no later in reverse post-order) whose target does not dominate its source.
//! Such an edge is not a back edge and forms no loop: the blocks of an irreducible cycle
//! belong only to the natural loops that enclose it (if any). The edges are listed by
//! [`LoopForest::irreducible_edges`] so passes can tell that the CFG is irreducible (which
//! retreating edges are found depends on the depth-first order of [`ControlFlowGraph`]).
//! Unreachable blocks are in no loop.

use cranelift_entity::packed_option::PackedOption;
use cranelift_entity::{PrimaryMap, SecondaryMap, entity_impl};
use smallvec::SmallVec;

use super::cfg::ControlFlowGraph;
use super::domtree::DomTree;
use crate::ir::{Block, Function, Value, ValueDef};

/// A loop of a [`LoopForest`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Loop(u32);
entity_impl!(Loop, "loop");

#[derive(Clone, Debug)]
struct LoopData {
    header: Block,
    parent: PackedOption<Loop>,
    children: Vec<Loop>,
    /// 1 for an outermost loop.
    depth: u32,
    /// Reverse post-order, so the header comes first.
    blocks: Vec<Block>,
    latches: SmallVec<[Block; 2]>,
    exits: Vec<(Block, Block)>,
    exit_blocks: Vec<Block>,
}

#[derive(Clone, Debug)]
pub struct LoopForest {
    loops: PrimaryMap<Loop, LoopData>,
    innermost: SecondaryMap<Block, PackedOption<Loop>>,
    top_level: Vec<Loop>,
    irreducible_edges: Vec<(Block, Block)>,
    cfg_epoch: u64,
}

impl LoopForest {
    pub fn compute(cfg: &ControlFlowGraph, domtree: &DomTree) -> LoopForest {
        let mut forest = LoopForest {
            loops: PrimaryMap::new(),
            innermost: SecondaryMap::new(),
            top_level: Vec::new(),
            irreducible_edges: Vec::new(),
            cfg_epoch: cfg.cfg_epoch(),
        };
        // `in_body[b] == Some(l)` while loop `l`'s body is being collected.
        let mut in_body: SecondaryMap<Block, PackedOption<Loop>> = SecondaryMap::new();
        for &header in cfg.rpo() {
            let mut latches: SmallVec<[Block; 2]> = SmallVec::new();
            for p in cfg.unique_preds(header) {
                if !cfg.is_reachable(p) {
                    continue;
                }
                if domtree.dominates(header, p) {
                    latches.push(p);
                } else if cfg.is_retreating(p, header) {
                    forest.irreducible_edges.push((p, header));
                }
            }
            if latches.is_empty() {
                continue;
            }
            let parent = forest.innermost[header];
            let depth = parent.expand().map_or(1, |p| forest.loops[p].depth + 1);
            let lp = forest.loops.push(LoopData {
                header,
                parent,
                children: Vec::new(),
                depth,
                blocks: Vec::new(),
                latches: latches.clone(),
                exits: Vec::new(),
                exit_blocks: Vec::new(),
            });
            match parent.expand() {
                Some(p) => forest.loops[p].children.push(lp),
                None => forest.top_level.push(lp),
            }

            let mut blocks = vec![header];
            in_body[header] = lp.into();
            let mut work: Vec<Block> = latches.iter().copied().filter(|&l| l != header).collect();
            for &l in &work {
                in_body[l] = lp.into();
            }
            blocks.extend(work.iter().copied());
            while let Some(b) = work.pop() {
                for &p in cfg.preds(b) {
                    if cfg.is_reachable(p) && in_body[p] != lp.into() {
                        in_body[p] = lp.into();
                        blocks.push(p);
                        work.push(p);
                    }
                }
            }
            blocks.sort_unstable_by_key(|&b| cfg.rpo_number(b));
            let mut exits: Vec<(Block, Block)> = Vec::new();
            let mut exit_blocks: Vec<Block> = Vec::new();
            for &b in &blocks {
                forest.innermost[b] = lp.into();
                for &s in cfg.succs(b) {
                    if in_body[s] != lp.into() {
                        if !exits.contains(&(b, s)) {
                            exits.push((b, s));
                        }
                        if !exit_blocks.contains(&s) {
                            exit_blocks.push(s);
                        }
                    }
                }
            }
            let data = &mut forest.loops[lp];
            data.blocks = blocks;
            data.exits = exits;
            data.exit_blocks = exit_blocks;
        }
        forest
    }

    pub fn cfg_epoch(&self) -> u64 {
        self.cfg_epoch
    }

    /// All loops, outer loops before the loops they contain.
    pub fn loops(&self) -> impl DoubleEndedIterator<Item = Loop> + '_ {
        self.loops.keys()
    }

    /// All loops, inner loops before the loops containing them.
    pub fn loops_inner_first(&self) -> impl Iterator<Item = Loop> + '_ {
        self.loops.keys().rev()
    }

    pub fn num_loops(&self) -> usize {
        self.loops.len()
    }

    /// Outermost loops, in header reverse post-order.
    pub fn top_level(&self) -> &[Loop] {
        &self.top_level
    }

    pub fn header(&self, l: Loop) -> Block {
        self.loops[l].header
    }

    pub fn parent(&self, l: Loop) -> Option<Loop> {
        self.loops[l].parent.expand()
    }

    /// Loops immediately inside `l`, in header reverse post-order.
    pub fn children(&self, l: Loop) -> &[Loop] {
        &self.loops[l].children
    }

    /// Nesting depth: 1 for an outermost loop.
    pub fn depth(&self, l: Loop) -> u32 {
        self.loops[l].depth
    }

    /// The loop's blocks (nested loops' included) in reverse post-order; the header first.
    pub fn blocks(&self, l: Loop) -> &[Block] {
        &self.loops[l].blocks
    }

    /// Sources of the back edges, distinct, in the header's predecessor order.
    pub fn latches(&self, l: Loop) -> &[Block] {
        &self.loops[l].latches
    }

    /// Edges leaving the loop as distinct `(inside, outside)` pairs, by source in reverse
    /// post-order, then terminator operand order.
    pub fn exits(&self, l: Loop) -> &[(Block, Block)] {
        &self.loops[l].exits
    }

    /// Distinct targets of exit edges, in order of first appearance in [`LoopForest::exits`].
    pub fn exit_blocks(&self, l: Loop) -> &[Block] {
        &self.loops[l].exit_blocks
    }

    /// The innermost loop containing `b`.
    pub fn innermost_loop(&self, b: Block) -> Option<Loop> {
        self.innermost[b].expand()
    }

    /// Number of loops containing `b` (0 outside every loop).
    pub fn loop_depth(&self, b: Block) -> u32 {
        self.innermost_loop(b).map_or(0, |l| self.depth(l))
    }

    pub fn is_header(&self, b: Block) -> bool {
        self.innermost_loop(b).is_some_and(|l| self.header(l) == b)
    }

    /// Whether `v` is defined outside `l`: a parameter, global or constant, or an instruction
    /// in a block that `l` does not contain (the same value in every iteration of `l`).
    pub fn defines_outside(&self, func: &Function, l: Loop, v: Value) -> bool {
        match func.value_def(v) {
            ValueDef::Inst(i) => func.inst_block(i).is_some_and(|b| !self.contains(l, b)),
            _ => true,
        }
    }

    /// `b` is in `l` (or in a loop nested in it).
    pub fn contains(&self, l: Loop, b: Block) -> bool {
        let target_depth = self.depth(l);
        let mut cur = self.innermost_loop(b);
        while let Some(c) = cur {
            let d = self.depth(c);
            if d == target_depth {
                return c == l;
            }
            if d < target_depth {
                return false;
            }
            cur = self.parent(c);
        }
        false
    }

    /// The preheader of `l`: the header's only predecessor outside the loop, if that block
    /// has exactly one edge, to the header. Not `br c, header, header`: the header's phis
    /// have an entry per edge, so a pass adding a phi with one value "from the preheader"
    /// would leave it with one entry too few.
    pub fn preheader(&self, cfg: &ControlFlowGraph, l: Loop) -> Option<Block> {
        let header = self.header(l);
        let mut outside = cfg.unique_preds(header).into_iter().filter(|&p| !self.contains(l, p));
        let pre = outside.next()?;
        if outside.next().is_some() {
            return None;
        }
        (cfg.succs(pre) == [header]).then_some(pre)
    }

    /// Retreating edges whose target does not dominate their source (entries into irreducible
    /// cycles), in header reverse post-order.
    pub fn irreducible_edges(&self) -> &[(Block, Block)] {
        &self.irreducible_edges
    }
}
