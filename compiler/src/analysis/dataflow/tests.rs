//! Both solvers on hand-built CFGs (expected facts spelled out), on random graphs (reducible
//! or not, every direction and meet), and on every function of the corpus and — when present —
//! the competition suites, after mem2reg and after -O2.

use std::path::Path;

use super::problems::{Dominators, Liveness, check_agreement};
use super::*;
use crate::analysis::alias::AliasAnalysis;
use crate::analysis::funcinfo::FuncInfo;
use crate::analysis::DomTree;
use crate::ir::{Function, InstData, Type};
use cranelift_entity::EntityRef;

/// A function whose block `i` branches to `succs[i]` (0, 1 or 2 targets), entry block 0.
fn graph(succs: &[&[usize]]) -> (Function, Vec<Block>) {
    let mut f = Function::new("g", &[Type::I1], Type::Void);
    let cond = f.params[0];
    let blocks: Vec<Block> = (0..succs.len()).map(|_| f.create_block()).collect();
    for (i, ss) in succs.iter().enumerate() {
        let data = match ss {
            [] => InstData::ret(None),
            [a] => InstData::jump(blocks[*a]),
            [a, b] => InstData::br(cond, blocks[*a], blocks[*b]),
            _ => panic!("at most two successors"),
        };
        f.append(blocks[i], data);
    }
    (f, blocks)
}

/// A problem given by a table: block number → (gen, kill) fact lists.
struct Table {
    direction: Direction,
    meet: Meet,
    facts: usize,
    boundary: Vec<usize>,
    blocks: Vec<(Vec<usize>, Vec<usize>)>,
}

fn bits(n: usize, list: &[usize]) -> FixedBitSet {
    let mut s = FixedBitSet::with_capacity(n);
    for &i in list {
        s.insert(i);
    }
    s
}

impl GenKillProblem for Table {
    fn direction(&self) -> Direction {
        self.direction
    }
    fn meet(&self) -> Meet {
        self.meet
    }
    fn num_facts(&self) -> usize {
        self.facts
    }
    fn boundary(&self) -> FixedBitSet {
        bits(self.facts, &self.boundary)
    }
    fn transfer(&self, b: Block) -> Transfer {
        let (g, k) = &self.blocks[b.index()];
        Transfer::new(bits(self.facts, g), bits(self.facts, k))
    }
}

/// Solves with both solvers, asserts they agree and the region solver did not fall back.
fn both(f: &Function, p: &impl GenKillProblem) -> Solution {
    let cfg = ControlFlowGraph::compute(f);
    let iterative = solve(&cfg, p, Solver::Iterative);
    let region = solve_by_regions(&cfg, p).expect("the region solver handles the graph");
    assert_eq!(iterative, region, "solvers disagree at block {:?}", iterative.first_difference(&region));
    iterative
}

fn ones(s: Option<&FixedBitSet>) -> Vec<usize> {
    s.expect("reachable block").ones().collect()
}

/// Reaching "definitions": block i defines fact i and kills the facts in `kills[i]`.
fn defs(n: usize, kills: &[(usize, &[usize])]) -> Table {
    let mut blocks: Vec<(Vec<usize>, Vec<usize>)> = (0..n).map(|i| (vec![i], vec![])).collect();
    for &(b, k) in kills {
        blocks[b].1 = k.to_vec();
    }
    Table { direction: Direction::Forward, meet: Meet::Union, facts: n, boundary: vec![], blocks }
}

#[test]
fn straight_line() {
    let (f, b) = graph(&[&[1], &[2], &[]]);
    let s = both(&f, &defs(3, &[(1, &[0])]));
    assert_eq!(ones(s.at_start(b[2])), vec![1]);
    assert_eq!(ones(s.at_end(b[2])), vec![1, 2]);
}

#[test]
fn diamond_union_and_intersection() {
    let (f, b) = graph(&[&[1, 2], &[3], &[3], &[]]);
    let s = both(&f, &defs(4, &[(2, &[0])]));
    assert_eq!(ones(s.at_start(b[3])), vec![0, 1, 2]);
    let mut must = defs(4, &[(2, &[0])]);
    must.meet = Meet::Intersection;
    let s = both(&f, &must);
    assert_eq!(ones(s.at_start(b[3])), Vec::<usize>::new());
    assert_eq!(ones(s.at_start(b[1])), vec![0]);
}

#[test]
fn nested_loops_backward() {
    // 0 → 1 (outer header) → 2 (inner header) ⇄ 3; 2 → 4 (outer latch) → 1; 1 → 5 exit.
    let (f, b) = graph(&[&[1], &[2, 5], &[3, 4], &[2], &[1], &[]]);
    // Liveness-like: fact 0 used in 3 (inner body), defined (killed) in 0; fact 1 used in 5.
    let mut blocks = vec![(vec![], vec![]); 6];
    blocks[0] = (vec![], vec![0, 1]);
    blocks[3] = (vec![0], vec![]);
    blocks[5] = (vec![1], vec![]);
    let p = Table { direction: Direction::Backward, meet: Meet::Union, facts: 2, boundary: vec![], blocks };
    let s = both(&f, &p);
    assert_eq!(ones(s.at_end(b[0])), vec![0, 1]);
    assert_eq!(ones(s.at_start(b[4])), vec![0, 1], "live around the outer loop");
    assert_eq!(ones(s.at_start(b[5])), vec![1]);
    assert_eq!(ones(s.at_start(b[0])), Vec::<usize>::new());
}

#[test]
fn loop_with_break_and_continue() {
    // 1 header; 2 body: break to 5 or go on to 3; 3: continue (to 1) or 4; 4 latch → 1.
    let (f, b) = graph(&[&[1], &[2, 5], &[5, 3], &[1, 4], &[1], &[]]);
    let must = Table {
        direction: Direction::Forward,
        meet: Meet::Intersection,
        facts: 3,
        boundary: vec![],
        blocks: vec![(vec![0], vec![]), (vec![], vec![]), (vec![1], vec![]), (vec![], vec![]), (vec![2], vec![1]), (vec![], vec![])],
    };
    let s = both(&f, &must);
    assert_eq!(ones(s.at_start(b[1])), vec![0], "fact 1 is killed on the latch path, 2 missing on continue");
    assert_eq!(ones(s.at_start(b[5])), vec![0]);
    assert_eq!(ones(s.at_start(b[4])), vec![0, 1]);
}

#[test]
fn irreducible_graph_is_split() {
    // Two-entry cycle 1 ⇄ 2 entered from 0 at both; 2 → 3 exit.
    let (f, b) = graph(&[&[1, 2], &[2], &[1, 3], &[]]);
    let s = both(&f, &defs(4, &[(1, &[2]), (2, &[1])]));
    assert_eq!(ones(s.at_start(b[1])), vec![0, 2]);
    assert_eq!(ones(s.at_start(b[2])), vec![0, 1]);
    assert_eq!(ones(s.at_start(b[3])), vec![0, 2]);
    let mut backward = defs(4, &[(1, &[2]), (2, &[1])]);
    backward.direction = Direction::Backward;
    backward.meet = Meet::Intersection;
    both(&f, &backward);
}

#[test]
fn unreachable_blocks_have_no_facts() {
    // Block 2 is unreachable and jumps into the loop.
    let (f, b) = graph(&[&[1], &[1, 3], &[1], &[]]);
    let s = both(&f, &defs(4, &[]));
    assert_eq!(s.at_start(b[2]), None);
    assert_eq!(ones(s.at_start(b[3])), vec![0, 1]);
}

#[test]
fn endless_loop_backward() {
    // 1 ⇄ 2 never exits: backward facts still flow round it.
    let (f, b) = graph(&[&[1], &[2], &[1]]);
    let mut blocks = vec![(vec![], vec![]); 3];
    blocks[2] = (vec![0], vec![]);
    let p = Table { direction: Direction::Backward, meet: Meet::Union, facts: 1, boundary: vec![], blocks };
    let s = both(&f, &p);
    assert_eq!(ones(s.at_start(b[1])), vec![0]);
    assert_eq!(ones(s.at_end(b[0])), vec![0]);
}

/// Random graphs (many irreducible), random gen/kill sets, every direction and meet.
#[test]
fn random_graphs_agree() {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    for _ in 0..400 {
        let n = 2 + next(12);
        let succs: Vec<Vec<usize>> = (0..n)
            .map(|_| match next(5) {
                0 => vec![],
                1 | 2 => vec![next(n)],
                _ => vec![next(n), next(n)],
            })
            .collect();
        let refs: Vec<&[usize]> = succs.iter().map(|s| s.as_slice()).collect();
        let (f, _) = graph(&refs);
        for direction in [Direction::Forward, Direction::Backward] {
            for meet in [Meet::Union, Meet::Intersection] {
                let facts = 1 + next(6);
                let blocks = (0..n)
                    .map(|_| {
                        let g: Vec<usize> = (0..facts).filter(|_| next(3) == 0).collect();
                        let k: Vec<usize> = (0..facts).filter(|_| next(3) == 0).collect();
                        (g, k)
                    })
                    .collect();
                let boundary = (0..facts).filter(|_| next(2) == 0).collect();
                both(&f, &Table { direction, meet, facts, boundary, blocks });
            }
        }
    }
}

#[test]
fn dominators_match_the_dominator_tree() {
    let (f, b) = graph(&[&[1, 4], &[2, 3], &[1], &[5], &[5], &[]]);
    let s = both(&f, &Dominators::new(&f));
    let cfg = ControlFlowGraph::compute(&f);
    let dt = DomTree::compute(&cfg);
    for &x in &b {
        let expected: Vec<usize> = b.iter().filter(|&&d| dt.dominates(d, x)).map(|d| d.index()).collect();
        assert_eq!(ones(s.at_end(x)), expected, "dominators of {x}");
    }
}

/// Every function of `modules`: both solvers agree on every problem, and the dominator
/// problem equals the dominator tree. Returns the number of functions checked.
fn agree_on(module: &crate::ir::Module, what: &str) -> usize {
    let info = FuncInfo::compute(module);
    let mut n = 0;
    for fref in module.func_refs() {
        let func = module.func(fref);
        let aa = AliasAnalysis::new(&info, fref, func);
        if let Err(e) = check_agreement(func, Some(&aa)) {
            panic!("{what}, function {}: {e}", func.name);
        }
        let live = both(func, &Liveness::new(func));
        let cfg = ControlFlowGraph::compute(func);
        if let Some(entry) = cfg.entry() {
            // Only parameters can be live into the entry block of verified SSA.
            for v in ones(live.at_start(entry)) {
                assert!(func.params.iter().any(|p| p.index() == v), "{what}, {}: v{v} live at entry", func.name);
            }
        }
        n += 1;
    }
    n
}

fn check_dir(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "sy")).collect();
    paths.sort();
    let mut functions = 0;
    for path in paths {
        let Ok(bytes) = std::fs::read(&path) else { continue };
        let source = crate::frontend::source_from_bytes(&bytes);
        let name = path.display().to_string();
        let Ok(lowered) = crate::driver::lower_source(&name, &source) else { continue };
        for (label, pipeline) in [("mem2reg", vec!["mem2reg"]), ("-O2", vec![])] {
            let mut module = lowered.clone();
            let options = if pipeline.is_empty() {
                crate::config::Config::level(crate::passes::OptLevel::O2)
            } else {
                let passes = pipeline.iter().map(|p| crate::passes::lookup(p).expect("registered pass")).collect();
                crate::config::Config::default().with_pipeline(passes)
            };
            crate::driver::optimise(&mut module, &options, None).expect("pipeline runs");
            functions += agree_on(&module, &format!("{name} after {label}"));
        }
    }
    functions
}

#[test]
fn solvers_agree_on_the_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus");
    let mut functions = 0;
    for sub in ["lang", "bench", "regressions", "traps"] {
        functions += check_dir(&root.join(sub));
    }
    assert!(functions > 50, "only {functions} functions checked: corpus missing?");
}

#[test]
fn solvers_agree_on_the_competition_suites() {
    let Some(root) = crate::suites::sysy_tests_dir() else {
        eprintln!("skipped: the competition suites are not present (set $SYSY_TESTS)");
        return;
    };
    let functions = check_dir(&root.join("functional")) + check_dir(&root.join("performance"));
    assert!(functions > 0, "no function checked in {}", root.display());
    eprintln!("solvers agreed on {functions} functions of the competition suites");
}
