//! Strongly connected components of a small directed graph given as adjacency lists
//! (Tarjan's algorithm, iterative).
//!
//! Shared by the call graph (recursion, bottom-up order) and the memory analyses (which blocks
//! lie on a CFG cycle). Nodes are `0..n`.
//!
//! Design: the classic algorithm keeps, per node, a DFS index and a "low link" (the smallest
//! index reachable through tree edges followed by one back or cross edge into a node still on
//! the Tarjan stack); a node whose low link equals its own index roots a component, which is
//! everything above it on the Tarjan stack. The recursion is replaced by an explicit stack of
//! `(node, next successor position)` frames, so graphs with long paths cannot overflow the
//! native stack. A component is emitted only after every component reachable from it, so the
//! output is in *reverse topological order* of the condensation: sinks first.

/// The components of the graph `succs` (node `i`'s successors are `succs[i]`; out-of-range
/// successors are ignored), sinks first. Each component lists its nodes in increasing order.
/// Roots of the depth-first searches are taken in increasing node order and successors in
/// list order, so the result is a deterministic function of the input.
pub fn tarjan_sccs(succs: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNVISITED: u32 = u32::MAX;
    let n = succs.len();
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    // Each holds a node at most once: sized for all of them rather than grown.
    let mut tarjan_stack: Vec<usize> = Vec::with_capacity(n);
    let mut dfs: Vec<(usize, usize)> = Vec::with_capacity(n);
    let mut next_index = 0u32;
    let mut out = Vec::new();

    for root in 0..n {
        if index[root] != UNVISITED {
            continue;
        }
        index[root] = next_index;
        low[root] = next_index;
        next_index += 1;
        tarjan_stack.push(root);
        on_stack[root] = true;
        dfs.push((root, 0));
        while let Some(&mut (v, ref mut pos)) = dfs.last_mut() {
            if let Some(&w) = succs[v].get(*pos) {
                *pos += 1;
                if w >= n {
                    continue;
                }
                if index[w] == UNVISITED {
                    index[w] = next_index;
                    low[w] = next_index;
                    next_index += 1;
                    tarjan_stack.push(w);
                    on_stack[w] = true;
                    dfs.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            // All successors of `v` done: pop the frame, pass the low link to the parent.
            dfs.pop();
            if let Some(&(parent, _)) = dfs.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                loop {
                    let w = tarjan_stack.pop().expect("Tarjan stack holds the component");
                    on_stack[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                comp.sort_unstable();
                out.push(comp);
            }
        }
    }
    out
}

/// For every node: whether it lies on a cycle (a component of two or more nodes, or a node
/// with an edge to itself).
pub fn nodes_on_cycles(succs: &[Vec<usize>]) -> Vec<bool> {
    let mut on_cycle = vec![false; succs.len()];
    for comp in tarjan_sccs(succs) {
        if comp.len() > 1 {
            for &v in &comp {
                on_cycle[v] = true;
            }
        } else if succs[comp[0]].contains(&comp[0]) {
            on_cycle[comp[0]] = true;
        }
    }
    on_cycle
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: `a` and `b` are in one component iff each reaches the other.
    fn reach(succs: &[Vec<usize>]) -> Vec<Vec<bool>> {
        let n = succs.len();
        let mut r = vec![vec![false; n]; n];
        for (s, row) in r.iter_mut().enumerate() {
            let mut work = vec![s];
            row[s] = true;
            while let Some(v) = work.pop() {
                for &w in &succs[v] {
                    if !row[w] {
                        row[w] = true;
                        work.push(w);
                    }
                }
            }
        }
        r
    }

    #[test]
    fn components_sinks_first() {
        // 0 -> 1 <-> 2 -> 3, 3 -> 3, 4 isolated
        let g = vec![vec![1], vec![2], vec![1, 3], vec![3], vec![]];
        let sccs = tarjan_sccs(&g);
        assert_eq!(sccs, vec![vec![3], vec![1, 2], vec![0], vec![4]]);
        assert_eq!(nodes_on_cycles(&g), vec![false, true, true, true, false]);
    }

    #[test]
    fn long_chain_does_not_overflow() {
        let n = 200_000;
        let g: Vec<Vec<usize>> = (0..n).map(|i| if i + 1 < n { vec![i + 1] } else { vec![0] }).collect();
        let sccs = tarjan_sccs(&g);
        assert_eq!(sccs.len(), 1);
        assert_eq!(sccs[0].len(), n);
    }

    #[test]
    fn random_graphs_match_brute_force() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..300 {
            let n = (next() % 12) as usize + 1;
            let g: Vec<Vec<usize>> =
                (0..n).map(|_| (0..next() % 4).map(|_| (next() % n as u64) as usize).collect()).collect();
            let sccs = tarjan_sccs(&g);
            let r = reach(&g);
            let mut comp_of = vec![usize::MAX; n];
            for (c, comp) in sccs.iter().enumerate() {
                for &v in comp {
                    assert_eq!(comp_of[v], usize::MAX, "node in two components");
                    comp_of[v] = c;
                }
            }
            for a in 0..n {
                for b in 0..n {
                    assert_eq!(comp_of[a] == comp_of[b], r[a][b] && r[b][a]);
                    // Sinks first: an edge never goes to a later component.
                    if g[a].contains(&b) {
                        assert!(comp_of[b] <= comp_of[a]);
                    }
                }
            }
        }
    }
}
