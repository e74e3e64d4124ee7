//! `iv-reduce` (catalogue: InductionVariableReduce): strength reduction of values that are
//! affine in a basic induction variable, including array addresses.
//!
//! Why: `a[i][j]` walked along `i`, or `i * c + d`, costs a multiplication (or a scaled add
//! chain) per iteration; as an additive recurrence it costs one addition. Array addresses
//! become pointers that step by a constant number of bytes.
//!
//! # What is reduced
//! In a loop in canonical form (preheader `P`, one latch — the pass runs `loop-simplify`), a
//! *basic IV* is a header phi `i = phi [P: init], [latch: i + s]` with a constant step `s`
//! (as in [`crate::analysis::counted`]). A value `v` is *affine in `i`* with coefficient `c`
//! when it is `i`, a value defined outside the loop (coefficient 0), or an in-loop `add`,
//! `sub`, `mul` by a constant, or `gep` (`base + index·scale` bytes) of affine operands — so
//! that `v = c·i + r` with `r` loop-invariant. A *root* is such a value with `c ≠ 0` that
//! some instruction other than another affine one uses, and whose expression involves real
//! work: an IV-dependent `mul`, a `gep` whose scale is not a shift amount, or a `gep` of an
//! IV-dependent `gep` (a multi-dimensional address). Each root `v` is replaced by
//! `ψ = phi [P: v₀], [latch: ψ + c·s]`, where `v₀` is `v`'s expression cloned into `P` with
//! `i := init` (the add/sub/mul/gep copies are pure and cannot trap, and their other operands
//! are defined outside the loop, so they are available in `P`). At most [`MAX_NEW_PHIS`]
//! roots per loop, to bound register pressure.
//!
//! # Exactness under wrapping
//! `add`, `sub`, `mul` by a constant and `gep` offsets are ring operations modulo 2³² (the
//! IR wraps, pointers included), and `v` is a degree-1 polynomial in `i` over that ring. So
//! `v(i + s) − v(i) = c·s (mod 2³²)` for every `i`, overflow or not: the recurrence computes
//! exactly the original value in every iteration; nothing assumes the absence of overflow.
//!
//! Uses of `v` outside the loop also read `ψ`: `v`'s definition dominates such a use, so it
//! ran in the last iteration, where `ψ` has the same value; `ψ`'s header dominates the use.
//!
//! The IV itself and its exit test are left alone (no test replacement); dead leftovers of
//! the old expressions are removed by `dce`.

use rustc_hash::FxHashMap;

use super::loop_clone::phi_input;
use super::loop_simplify::LoopSimplify;
use super::{FunctionCx, FunctionPass};
use crate::analysis::{Loop, LoopForest};
use crate::ir::{Block, Function, Inst, InstData, Opcode, Type, Value, ValueDef};

pub struct IvReduce;

/// Most recurrences (new header phis) added to one loop.
pub const MAX_NEW_PHIS: usize = 6;
/// Deepest expression examined (generated programs can have very long chains).
const MAX_DEPTH: u32 = 24;

impl FunctionPass for IvReduce {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let mut changed = LoopSimplify.run(func, cx);
        let loops = cx.analyses.loops(func);
        let headers: Vec<Block> = loops.loops_inner_first().map(|l| loops.header(l)).collect();
        let mut reduced = 0u64;
        for h in headers {
            let cfg = cx.analyses.cfg(func);
            let loops = cx.analyses.loops(func);
            let Some(l) = loops.innermost_loop(h).filter(|&l| loops.header(l) == h) else { continue };
            let Some(pre) = loops.preheader(&cfg, l) else { continue };
            let [latch] = loops.latches(l) else { continue };
            let n = reduce_loop(func, &loops, l, pre, *latch);
            reduced += n as u64;
            changed |= n > 0;
        }
        cx.count("values_reduced", reduced);
        changed
    }
}

/// A basic IV of the loop being reduced.
#[derive(Clone, Copy)]
struct BasicIv {
    phi: Value,
    init: Value,
    step: i32,
}

/// `v = coef·iv + (invariant)`; `iv == None` means loop-invariant (coefficient 0).
#[derive(Clone, Copy)]
struct Affine {
    iv: Option<Value>,
    coef: i32,
    /// The expression contains work worth removing (see the module documentation).
    costly: bool,
}

struct Analysis<'a> {
    func: &'a Function,
    loops: &'a LoopForest,
    l: Loop,
    ivs: &'a [BasicIv],
    memo: FxHashMap<Value, Option<Affine>>,
}

impl Analysis<'_> {
    fn in_loop_inst(&self, v: Value) -> Option<Inst> {
        match self.func.value_def(v) {
            ValueDef::Inst(i) => self.func.inst_block(i).filter(|&b| self.loops.contains(self.l, b)).map(|_| i),
            _ => None,
        }
    }

    fn affine(&mut self, v: Value, depth: u32) -> Option<Affine> {
        if let Some(&a) = self.memo.get(&v) {
            return a;
        }
        let a = self.compute(v, depth);
        self.memo.insert(v, a);
        a
    }

    fn compute(&mut self, v: Value, depth: u32) -> Option<Affine> {
        let invariant = Affine { iv: None, coef: 0, costly: false };
        if self.ivs.iter().any(|iv| iv.phi == v) {
            return Some(Affine { iv: Some(v), coef: 1, costly: false });
        }
        let Some(inst) = self.in_loop_inst(v) else { return Some(invariant) };
        if depth >= MAX_DEPTH {
            return None;
        }
        let func = self.func;
        let args = func.args(inst);
        let op = func.opcode(inst);
        if !matches!(op, Opcode::Add | Opcode::Sub | Opcode::Mul | Opcode::Gep { .. }) {
            return None;
        }
        let a = self.affine(args[0], depth + 1)?;
        let b = self.affine(args[1], depth + 1)?;
        let iv = match (a.iv, b.iv) {
            (Some(x), Some(y)) if x != y => return None,
            (x, y) => x.or(y),
        };
        let costly = a.costly || b.costly;
        let (coef, costly) = match op {
            Opcode::Add => (a.coef.wrapping_add(b.coef), costly),
            Opcode::Sub => (a.coef.wrapping_sub(b.coef), costly),
            Opcode::Mul => {
                if a.iv.is_some() && b.iv.is_some() {
                    return None;
                }
                if iv.is_none() {
                    (0, costly)
                } else {
                    let (var, k) = if a.iv.is_some() { (a, args[1]) } else { (b, args[0]) };
                    let k = func.as_int_const(k)?;
                    (var.coef.wrapping_mul(k), true)
                }
            }
            Opcode::Gep { scale } => {
                let index_varies = b.iv.is_some();
                let scaled_work = index_varies && !matches!(scale, 1 | 2 | 4 | 8);
                let nested = a.iv.is_some() && index_varies;
                let coef = a.coef.wrapping_add(b.coef.wrapping_mul(scale as i32));
                (coef, costly || scaled_work || nested)
            }
            _ => return None,
        };
        match iv {
            None => Some(invariant),
            // The IV cancelled (`i - i`, `i * 0`): the value is invariant, but its expression
            // still reads the IV phi (and perhaps another IV's), which cannot be cloned into
            // the preheader; such a value is left alone.
            Some(_) if coef == 0 => None,
            Some(_) => Some(Affine { iv, coef, costly }),
        }
    }
}

fn basic_ivs(func: &Function, header: Block, pre: Block, latch: Block) -> Vec<BasicIv> {
    let mut ivs = Vec::new();
    for phi in func.block_phis(header) {
        let Some(r) = func.result(phi) else { continue };
        if func.value_type(r) != Type::I32 || func.args(phi).len() != 2 {
            continue;
        }
        let (Some(init), Some(next)) = (phi_input(func, phi, pre), phi_input(func, phi, latch)) else { continue };
        let Some(inst) = func.def_inst(next) else { continue };
        let args = func.args(inst);
        let step = match func.opcode(inst) {
            Opcode::Add if args[0] == r => func.as_int_const(args[1]),
            Opcode::Add if args[1] == r => func.as_int_const(args[0]),
            Opcode::Sub if args[0] == r => func.as_int_const(args[1]).map(i32::wrapping_neg),
            _ => None,
        };
        if let Some(step) = step.filter(|&s| s != 0) {
            ivs.push(BasicIv { phi: r, init, step });
        }
    }
    ivs
}

/// Reduces the roots of loop `l`; returns how many.
fn reduce_loop(func: &mut Function, loops: &LoopForest, l: Loop, pre: Block, latch: Block) -> usize {
    let header = loops.header(l);
    let ivs = basic_ivs(func, header, pre, latch);
    if ivs.is_empty() {
        return 0;
    }
    let mut an = Analysis { func, loops, l, ivs: &ivs, memo: FxHashMap::default() };
    let mut roots: Vec<(Inst, Value, Affine)> = Vec::new();
    for &b in loops.blocks(l) {
        for inst in func.block_insts(b) {
            if roots.len() >= MAX_NEW_PHIS {
                break;
            }
            let Some(v) = func.result(inst) else { continue };
            if !matches!(func.opcode(inst), Opcode::Add | Opcode::Sub | Opcode::Mul | Opcode::Gep { .. }) {
                continue;
            }
            let Some(a) = an.affine(v, 0) else { continue };
            if a.iv.is_none() || !a.costly {
                continue;
            }
            // A root: some user is not itself an IV-dependent affine instruction of the loop.
            let users: Vec<Inst> = func.users(v).to_vec();
            let is_root = users.iter().any(|&u| {
                let Some(r) = func.result(u) else { return true };
                if an.in_loop_inst(r).is_none() {
                    return true;
                }
                an.affine(r, 0).is_none_or(|x| x.iv.is_none())
            });
            if is_root {
                roots.push((inst, v, a));
            }
        }
    }
    drop(an);
    let pre_term = func.terminator(pre).expect("preheader has a terminator");
    let latch_term = func.terminator(latch).expect("latch has a terminator");
    let n = roots.len();
    // All start values first: a root's expression may contain another root, which must
    // still be its original instruction when cloned.
    let starts: Vec<Value> = roots
        .iter()
        .map(|&(_, v, a)| {
            let iv = ivs.iter().find(|x| Some(x.phi) == a.iv).expect("root depends on a basic IV");
            clone_at_init(func, loops, l, iv, v, pre_term, &mut FxHashMap::default())
        })
        .collect();
    for ((inst, v, a), start) in roots.into_iter().zip(starts) {
        let iv = ivs.iter().find(|x| Some(x.phi) == a.iv).expect("root depends on a basic IV");
        let ty = func.value_type(v);
        let phi = func.create_inst(InstData::phi(ty, &[(pre, start)]));
        func.prepend_inst(header, phi);
        let psi = func.result(phi).expect("phi has a result");
        let delta = func.iconst(a.coef.wrapping_mul(iv.step));
        let next = match ty {
            Type::Ptr => InstData::gep(psi, delta, 1),
            _ => InstData::binary(Opcode::Add, psi, delta, Type::I32),
        };
        let next = func.insert_value_before(latch_term, next);
        func.push_phi_incoming(phi, latch, next);
        func.replace_all_uses(v, psi);
        debug_assert!(!func.has_uses(v), "{inst} still used");
    }
    n
}

/// `v`'s expression cloned before `pos` (in the preheader) with the IV replaced by its initial
/// value. Only called on values [`Analysis::affine`] accepted. Iterative (post-order with an
/// explicit stack): the analysis accepts chains of any length through its memo, so the
/// expression can be far deeper than the native stack allows recursion.
fn clone_at_init(
    func: &mut Function,
    loops: &LoopForest,
    l: Loop,
    iv: &BasicIv,
    v: Value,
    pos: Inst,
    clones: &mut FxHashMap<Value, Value>,
) -> Value {
    let in_loop = |func: &Function, x: Value| match func.value_def(x) {
        ValueDef::Inst(i) if func.inst_block(i).is_some_and(|b| loops.contains(l, b)) => Some(i),
        _ => None,
    };
    let mut stack = vec![(v, false)];
    while let Some((x, operands_done)) = stack.pop() {
        if x == iv.phi || clones.contains_key(&x) {
            continue;
        }
        let Some(inst) = in_loop(func, x) else { continue };
        if !operands_done {
            stack.push((x, true));
            stack.extend(func.args(inst).iter().map(|&a| (a, false)));
            continue;
        }
        let mut data = func.inst(inst).clone();
        for arg in data.args.iter_mut() {
            *arg = if *arg == iv.phi { iv.init } else { clones.get(arg).copied().unwrap_or(*arg) };
        }
        let c = func.insert_value_before(pos, data);
        clones.insert(x, c);
    }
    if v == iv.phi { iv.init } else { clones.get(&v).copied().unwrap_or(v) }
}
