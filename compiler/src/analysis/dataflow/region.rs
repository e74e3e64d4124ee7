//! The region-based solver: region hierarchy by T1/T2 reduction, transfer functions of
//! regions bottom-up, `IN` values top-down. Design and invariants are in the
//! [parent module](super); this file follows it step by step.

use fixedbitset::FixedBitSet;

use super::graph::{FlowGraph, ROOT, reverse_postorder};
use super::transfer::Transfer;

/// The graph was still irreducible after node splitting had grown it past the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooIrreducible {
    pub nodes: usize,
}

/// How far node splitting may grow the graph: a multiple of the original node count plus a
/// constant, so small irreducible graphs always get solved and big ones cannot explode.
fn split_limit(original: usize) -> usize {
    original * 64 + 4096
}

/// A region of the hierarchy. Children always have smaller indices than their parent.
enum Region {
    /// One flow-graph node.
    Leaf(u32),
    /// An acyclic arrangement of child regions, children in a topological order, the first
    /// being the header. `incoming[j]` (for `j ≥ 1`) lists the edges into child `j`'s header
    /// as `(child index of the source, source node)`.
    Body { children: Vec<usize>, incoming: Vec<Vec<(usize, u32)>> },
    /// A body region `body` plus its back edges, from `latches` to the body's header.
    Loop { body: usize, latches: Vec<u32> },
}

/// The analysis copy of the graph: successors only, plus where each node came from (node
/// splitting appends copies).
struct SplitGraph {
    succs: Vec<Vec<u32>>,
    origin: Vec<u32>,
}

/// The region hierarchy of a reducible graph.
struct Hierarchy {
    regions: Vec<Region>,
    root: usize,
}

/// `IN` of every node of `g` (index = node), or an error if node splitting gave up.
pub fn solve(g: &FlowGraph) -> Result<Vec<FixedBitSet>, TooIrreducible> {
    let mut split = SplitGraph { succs: g.succs.iter().map(|s| s.to_vec()).collect(), origin: (0..g.len() as u32).collect() };
    let limit = split_limit(g.len());
    let hierarchy = loop {
        match reduce(&split.succs) {
            Ok(h) => break h,
            Err(stuck) => {
                split.split(&stuck);
                if split.succs.len() > limit {
                    return Err(TooIrreducible { nodes: split.succs.len() });
                }
            }
        }
    };
    let transfer: Vec<&Transfer> = split.origin.iter().map(|&o| &g.transfer[o as usize]).collect();
    let copy_ins = propagate(g, &hierarchy, &transfer);
    // A block split into copies: every path to it reaches exactly one copy, so its value is
    // the meet over the copies.
    let mut ins: Vec<Option<FixedBitSet>> = vec![None; g.len()];
    for (copy, value) in copy_ins.into_iter().enumerate() {
        let slot = &mut ins[split.origin[copy] as usize];
        match slot {
            None => *slot = Some(value),
            Some(acc) => match g.meet {
                super::Meet::Union => acc.union_with(&value),
                super::Meet::Intersection => acc.intersect_with(&value),
            },
        }
    }
    Ok(ins.into_iter().map(|v| v.unwrap_or_else(|| FixedBitSet::with_capacity(g.num_facts))).collect())
}

/// Where T1/T2 got stuck: the super-nodes left, as (header, members, distinct predecessor
/// super-node headers).
struct Stuck {
    nodes: Vec<(u32, Vec<u32>, Vec<u32>)>,
}

/// Builds the hierarchy by T1/T2 reductions (see the module documentation of the parent),
/// or reports the super-nodes it could not reduce.
fn reduce(succs: &[Vec<u32>]) -> Result<Hierarchy, Stuck> {
    let n = succs.len();
    // In-edges of every node, with a flag for back edges already consumed by a T1.
    let mut in_edges: Vec<Vec<(u32, bool)>> = vec![Vec::new(); n];
    for (u, ss) in succs.iter().enumerate() {
        for &v in ss {
            in_edges[v as usize].push((u as u32, false));
        }
    }
    // Union-find: a super-node is named by its header; `parent` leads to it.
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn find(parent: &mut [u32], mut x: u32) -> u32 {
        let mut root = x;
        while parent[root as usize] != root {
            root = parent[root as usize];
        }
        while parent[x as usize] != root {
            let next = parent[x as usize];
            parent[x as usize] = root;
            x = next;
        }
        root
    }
    let mut regions: Vec<Region> = (0..n as u32).map(Region::Leaf).collect();
    // Per super-node header: its region, its member nodes, and for each member the index of
    // the child of the header's region (when that is a body region) holding it.
    let mut region_of: Vec<usize> = (0..n).collect();
    let mut members: Vec<Vec<u32>> = (0..n as u32).map(|u| vec![u]).collect();
    let mut slot: Vec<usize> = vec![0; n];
    let order = reverse_postorder(succs, ROOT);

    loop {
        let mut changed = false;
        for &h in &order {
            if find(&mut parent, h) != h {
                continue;
            }
            // T1: remove the self-loops of super-node `h`.
            let mut latches = Vec::new();
            for k in 0..in_edges[h as usize].len() {
                let (u, consumed) = in_edges[h as usize][k];
                if !consumed && find(&mut parent, u) == h {
                    in_edges[h as usize][k].1 = true;
                    latches.push(u);
                }
            }
            if !latches.is_empty() {
                regions.push(Region::Loop { body: region_of[h as usize], latches });
                region_of[h as usize] = regions.len() - 1;
                changed = true;
            }
            if h == ROOT {
                continue;
            }
            // T2: a super-node with one predecessor super-node merges into it.
            let mut pred = None;
            let mut unique = true;
            for &(u, consumed) in &in_edges[h as usize] {
                if consumed {
                    continue;
                }
                let p = find(&mut parent, u);
                match pred {
                    None => pred = Some(p),
                    Some(q) if q != p => unique = false,
                    Some(_) => {}
                }
            }
            let Some(p) = pred.filter(|_| unique) else { continue };
            let (pu, hu) = (p as usize, h as usize);
            let absorbing = region_of[pu];
            let body = if let Region::Body { .. } = regions[absorbing] {
                absorbing
            } else {
                regions.push(Region::Body { children: vec![absorbing], incoming: vec![Vec::new()] });
                for &m in &members[pu] {
                    slot[m as usize] = 0;
                }
                region_of[pu] = regions.len() - 1;
                regions.len() - 1
            };
            let incoming: Vec<(usize, u32)> =
                in_edges[hu].iter().filter(|(_, consumed)| !consumed).map(|&(u, _)| (slot[u as usize], u)).collect();
            let Region::Body { children, incoming: all_incoming } = &mut regions[body] else { unreachable!() };
            let index = children.len();
            children.push(region_of[hu]);
            all_incoming.push(incoming);
            let moved = std::mem::take(&mut members[hu]);
            for &m in &moved {
                slot[m as usize] = index;
            }
            members[pu].extend(moved);
            parent[hu] = p;
            changed = true;
        }
        if !changed {
            break;
        }
    }

    let alive: Vec<u32> = order.iter().copied().filter(|&h| find(&mut parent, h) == h).collect();
    if alive.len() == 1 {
        return Ok(Hierarchy { root: region_of[ROOT as usize], regions });
    }
    let mut nodes = Vec::new();
    for h in alive {
        let mut preds: Vec<u32> = Vec::new();
        for &(u, consumed) in &in_edges[h as usize] {
            let p = find(&mut parent, u);
            if !consumed && !preds.contains(&p) {
                preds.push(p);
            }
        }
        nodes.push((h, std::mem::take(&mut members[h as usize]), preds));
    }
    Err(Stuck { nodes })
}

impl SplitGraph {
    /// Splits the smallest stuck super-node with several predecessors: the first
    /// predecessor keeps it, every other one gets its own copy of all its members.
    fn split(&mut self, stuck: &Stuck) {
        let Some((header, nodes, preds)) = stuck
            .nodes
            .iter()
            .filter(|(h, _, preds)| *h != ROOT && preds.len() > 1)
            .min_by_key(|(_, members, _)| members.len())
        else {
            // Unreachable for a stuck reduction (some node always has two predecessors);
            // making no progress here ends in the size limit, never in a wrong answer.
            return;
        };
        let mut inside = FixedBitSet::with_capacity(self.succs.len());
        for &m in nodes {
            inside.insert(m as usize);
        }
        let pred_members: Vec<FixedBitSet> = preds
            .iter()
            .map(|&p| {
                let mut s = FixedBitSet::with_capacity(self.succs.len());
                for (h, members, _) in &stuck.nodes {
                    if *h == p {
                        for &m in members {
                            s.insert(m as usize);
                        }
                    }
                }
                s
            })
            .collect();
        for pred_set in &pred_members[1..] {
            let base = self.succs.len() as u32;
            let mut index_of = vec![0u32; base as usize];
            for (k, &m) in nodes.iter().enumerate() {
                index_of[m as usize] = k as u32;
            }
            let copy_of = |m: u32| base + index_of[m as usize];
            for &m in nodes {
                let succs: Vec<u32> =
                    self.succs[m as usize].iter().map(|&s| if inside.contains(s as usize) { copy_of(s) } else { s }).collect();
                self.succs.push(succs);
                self.origin.push(self.origin[m as usize]);
            }
            for u in pred_set.ones() {
                for s in &mut self.succs[u] {
                    if *s == *header {
                        *s = copy_of(*header);
                    }
                }
            }
        }
    }
}

impl Hierarchy {
    /// The regions of the tree under the root, children before parents. (Region indices do
    /// not give that order: a body region created early may receive children created later.)
    fn postorder(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.regions.len());
        let mut stack = vec![(self.root, false)];
        while let Some((r, expanded)) = stack.pop() {
            if expanded {
                out.push(r);
                continue;
            }
            stack.push((r, true));
            match &self.regions[r] {
                Region::Leaf(_) => {}
                Region::Body { children, .. } => stack.extend(children.iter().rev().map(|&c| (c, false))),
                Region::Loop { body, .. } => stack.push((*body, false)),
            }
        }
        out
    }
}

/// Bottom-up transfer functions, then top-down `IN` values of every node.
fn propagate(g: &FlowGraph, h: &Hierarchy, transfer: &[&Transfer]) -> Vec<FixedBitSet> {
    let n = transfer.len();
    let identity = Transfer::identity(g.num_facts);
    // Bottom-up. `exits[r]`: for every node u of region r, the function from the entry of r
    // to the end of u, sorted by node (dropped once the parent has used them). `entry_fns[r]`:
    // per child of r, the function from the entry of r to the entry of that child.
    let mut exits: Vec<Vec<(u32, Transfer)>> = vec![Vec::new(); h.regions.len()];
    let mut entry_fns: Vec<Vec<Transfer>> = vec![Vec::new(); h.regions.len()];
    let lookup = |list: &[(u32, Transfer)], u: u32| -> Option<usize> { list.binary_search_by_key(&u, |(x, _)| *x).ok() };
    let order = h.postorder();
    for &r in &order {
        match &h.regions[r] {
            Region::Leaf(u) => exits[r] = vec![(*u, transfer[*u as usize].clone())],
            Region::Body { children, incoming } => {
                let mut fns: Vec<Transfer> = Vec::with_capacity(children.len());
                fns.push(identity.clone());
                for edges in &incoming[1..children.len()] {
                    let mut met: Option<Transfer> = None;
                    for &(from_child, u) in edges {
                        let list = &exits[children[from_child]];
                        let Some(at) = lookup(list, u) else { continue };
                        let f = fns[from_child].then(&list[at].1);
                        met = Some(match met {
                            None => f,
                            Some(m) => m.meet(&f, g.meet),
                        });
                    }
                    fns.push(met.unwrap_or_else(|| identity.clone()));
                }
                let mut out = Vec::new();
                for (j, &c) in children.iter().enumerate() {
                    for (u, f) in std::mem::take(&mut exits[c]) {
                        out.push((u, fns[j].then(&f)));
                    }
                }
                out.sort_unstable_by_key(|(u, _)| *u);
                exits[r] = out;
                entry_fns[r] = fns;
            }
            Region::Loop { body, latches } => {
                let mut met: Option<Transfer> = None;
                for &u in latches {
                    let list = &exits[*body];
                    let Some(at) = lookup(list, u) else { continue };
                    met = Some(match met {
                        None => list[at].1.clone(),
                        Some(m) => m.meet(&list[at].1, g.meet),
                    });
                }
                let star = met.map_or_else(|| identity.clone(), |f| f.closure(g.meet));
                exits[r] = std::mem::take(&mut exits[*body]).into_iter().map(|(u, f)| (u, star.then(&f))).collect();
                entry_fns[r] = vec![star];
            }
        }
    }
    // Top-down.
    let mut region_in: Vec<Option<FixedBitSet>> = vec![None; h.regions.len()];
    region_in[h.root] = Some(g.boundary.clone());
    let mut ins = vec![FixedBitSet::with_capacity(g.num_facts); n];
    for &r in order.iter().rev() {
        let Some(at_entry) = region_in[r].take() else { continue };
        match &h.regions[r] {
            Region::Leaf(u) => ins[*u as usize] = at_entry,
            Region::Body { children, .. } => {
                for (j, &c) in children.iter().enumerate() {
                    region_in[c] = Some(entry_fns[r][j].apply(&at_entry));
                }
            }
            Region::Loop { body, .. } => region_in[*body] = Some(entry_fns[r][0].apply(&at_entry)),
        }
    }
    ins
}
