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
//! `sub`, `mul`, or `gep` (`base + index·scale` bytes) of affine operands — so that
//! `v = c·i + r` with `r` loop-invariant. A coefficient is a constant `k` or `k·f` for one
//! loop-invariant factor `f`: `i * n` with `n` invariant has coefficient `1·n` (the column
//! walk `a[j * n + i]` along `j`, the `b[k * n + j]` of a matrix product along `k`); a sum of
//! terms with different factors, or a product of two factors, is not affine here. A *root*
//! is such a value with `c ≠ 0` that some instruction other than another affine one uses,
//! and whose expression involves real work: an IV-dependent `mul`, a `gep` whose scale is
//! not a shift amount, or a `gep` of an IV-dependent `gep` (a multi-dimensional address).
//! Each root `v` is replaced by `ψ = phi [P: v₀], [latch: ψ + c·s]`, where `v₀` is `v`'s
//! expression cloned into `P` with `i := init`, and a factor's `c·s = (k·s)·f` is computed
//! in `P` too (the add/sub/mul/gep copies are pure and cannot trap, and their operands are
//! defined outside the loop or are such copies, so they are available in `P`). At most
//! [`MAX_NEW_PHIS`] roots per loop, to bound register pressure.
//!
//! A second kind of root is a float array's element address walked by the loop
//! ([`walks_float_array`]): no real work on most targets, but on ARM every VFP access pays
//! its `add` (at most [`MAX_FLOAT_WALKS`] distinct ones per loop). The replaced roots and
//! what only they used are deleted at once, since `unroll`, next, counts instructions.
//!
//! # Exactness under wrapping
//! `add`, `sub`, `mul` and `gep` offsets are ring operations modulo 2³² (the IR wraps,
//! pointers included), and `v` is a degree-1 polynomial in `i` over that ring (its
//! coefficient `k·f` is one ring element, whatever `f` is at run time). So
//! `v(i + s) − v(i) = c·s (mod 2³²)` for every `i`, overflow or not: the recurrence computes
//! exactly the original value in every iteration; nothing assumes the absence of overflow.
//!
//! Uses of `v` outside the loop also read `ψ`: `v`'s definition dominates such a use, so it
//! ran in the last iteration, where `ψ` has the same value; `ψ`'s header dominates the use.
//!
//! The IV itself and its exit test are left alone (no test replacement); dead leftovers of
//! the old expressions are removed by `dce`.

use rustc_hash::{FxHashMap, FxHashSet};

use super::loop_clone::phi_input;
use super::loop_simplify::LoopSimplify;
use super::{FunctionCx, FunctionPass};
use crate::analysis::{Loop, LoopForest};
use crate::ir::{Block, Function, Inst, InstData, Opcode, Type, Value, ValueDef};

pub struct IvReduce;

/// Most recurrences (new header phis) added to one loop.
pub const MAX_NEW_PHIS: usize = 6;
/// Most float-array pointers ([`walks_float_array`]) added to one loop, besides those: each
/// usually replaces its array's base in a register across the loop.
pub const MAX_FLOAT_WALKS: usize = 8;
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
    coef: Coef,
    /// The expression contains work worth removing (see the module documentation).
    costly: bool,
}

/// A coefficient `k` or `k·factor`, `factor` a loop-invariant affine value (coefficient 0);
/// `k = 0` is zero whatever the factor.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Coef {
    k: i32,
    factor: Option<Value>,
}

impl Coef {
    const ZERO: Coef = Coef { k: 0, factor: None };
    const ONE: Coef = Coef { k: 1, factor: None };

    fn is_zero(self) -> bool {
        self.k == 0
    }

    /// `self + sign·other`, when both are multiples of the same factor (or one is zero).
    fn add(self, other: Coef, sign: i32) -> Option<Coef> {
        let other = Coef { k: other.k.wrapping_mul(sign), ..other };
        if other.is_zero() {
            Some(self)
        } else if self.is_zero() {
            Some(other)
        } else if self.factor == other.factor {
            Some(Coef { k: self.k.wrapping_add(other.k), factor: self.factor })
        } else {
            None
        }
    }

    fn scale(self, c: i32) -> Coef {
        Coef { k: self.k.wrapping_mul(c), ..self }
    }
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
        let invariant = Affine { iv: None, coef: Coef::ZERO, costly: false };
        if self.ivs.iter().any(|iv| iv.phi == v) {
            return Some(Affine { iv: Some(v), coef: Coef::ONE, costly: false });
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
            Opcode::Add => (a.coef.add(b.coef, 1)?, costly),
            Opcode::Sub => (a.coef.add(b.coef, -1)?, costly),
            Opcode::Mul => {
                if a.iv.is_some() && b.iv.is_some() {
                    return None;
                }
                if iv.is_none() {
                    (Coef::ZERO, costly)
                } else {
                    let (var, other) = if a.iv.is_some() { (a, args[1]) } else { (b, args[0]) };
                    match (func.as_int_const(other), var.coef.factor) {
                        (Some(k), _) => (var.coef.scale(k), true),
                        // `other` is invariant (the operands do not both vary) and affine.
                        (None, None) => (Coef { k: var.coef.k, factor: Some(other) }, true),
                        (None, Some(_)) => return None,
                    }
                }
            }
            Opcode::Gep { scale } => {
                let index_varies = b.iv.is_some();
                let scaled_work = index_varies && !matches!(scale, 1 | 2 | 4 | 8);
                let nested = a.iv.is_some() && index_varies;
                let coef = a.coef.add(b.coef.scale(scale as i32), 1)?;
                (coef, costly || scaled_work || nested)
            }
            _ => return None,
        };
        match iv {
            None => Some(invariant),
            // The IV cancelled (`i - i`, `i * 0`): the value is invariant, but its expression
            // still reads the IV phi (and perhaps another IV's), which cannot be cloned into
            // the preheader; such a value is left alone.
            Some(_) if coef.is_zero() => None,
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
        let Some(inst) = through_single_input_phis(func, next) else { continue };
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

/// The instruction defining `v`, looking through phis of one input (such as a latch's
/// `phi [body: i + 1]` that `loop-idle-exit` leaves): they equal their input.
fn through_single_input_phis(func: &Function, mut v: Value) -> Option<Inst> {
    for _ in 0..MAX_DEPTH {
        let inst = func.def_inst(v)?;
        match func.args(inst) {
            [only] if func.opcode(inst) == Opcode::Phi => v = *only,
            _ => return Some(inst),
        }
    }
    None
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
    let mut costly_roots = 0;
    let mut walk_shapes: FxHashSet<InstData> = FxHashSet::default();
    for &b in loops.blocks(l) {
        for inst in func.block_insts(b) {
            let Some(v) = func.result(inst) else { continue };
            if !matches!(func.opcode(inst), Opcode::Add | Opcode::Sub | Opcode::Mul | Opcode::Gep { .. }) {
                continue;
            }
            let Some(a) = an.affine(v, 0) else { continue };
            if a.iv.is_none() {
                continue;
            }
            if !a.costly {
                // Copies of one address (no `gvn` since `gep-offsets`) share one pointer.
                let shape = func.inst(inst);
                let known = walk_shapes.contains(shape);
                if (known || walk_shapes.len() < MAX_FLOAT_WALKS) && walks_float_array(&mut an, inst) {
                    walk_shapes.insert(shape.clone());
                    roots.push((inst, v, a));
                }
                continue;
            }
            if costly_roots >= MAX_NEW_PHIS {
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
                costly_roots += 1;
                roots.push((inst, v, a));
            }
        }
    }
    drop(an);
    let pre_term = func.terminator(pre).expect("preheader has a terminator");
    let latch_term = func.terminator(latch).expect("latch has a terminator");
    let n = roots.len();
    // All start values first: a root's expression may contain another root, which must
    // still be its original instruction when cloned. Copies are shared per IV (a root's
    // expression involves one IV only), factors included.
    let mut copies = PreheaderCopies::default();
    let starts: Vec<Value> = roots
        .iter()
        .map(|&(_, v, a)| {
            let iv = ivs.iter().find(|x| Some(x.phi) == a.iv).expect("root depends on a basic IV");
            clone_at_init(func, loops, l, iv, v, pre_term, &mut copies)
        })
        .collect();
    // Roots with the same start and step are the same sequence: one recurrence serves them.
    let mut recurrences: FxHashMap<(Value, Value), Value> = FxHashMap::default();
    // Each distinct step `c·s` once: roots along the same column share it.
    let mut deltas: FxHashMap<(Option<Value>, i32), Value> = FxHashMap::default();
    let mut replaced = Vec::with_capacity(n);
    for ((inst, v, a), start) in roots.into_iter().zip(starts) {
        let iv = ivs.iter().find(|x| Some(x.phi) == a.iv).expect("root depends on a basic IV");
        let ty = func.value_type(v);
        let k = a.coef.k.wrapping_mul(iv.step);
        let delta = match deltas.get(&(a.coef.factor, k)) {
            Some(&d) => d,
            None => {
                let d = match a.coef.factor {
                    None => func.iconst(k),
                    Some(f) => {
                        let f = clone_at_init(func, loops, l, iv, f, pre_term, &mut copies);
                        if k == 1 {
                            f
                        } else {
                            let k = func.iconst(k);
                            func.insert_value_before(pre_term, InstData::binary(Opcode::Mul, f, k, Type::I32))
                        }
                    }
                };
                deltas.insert((a.coef.factor, k), d);
                d
            }
        };
        let psi = match recurrences.get(&(start, delta)) {
            Some(&psi) => psi,
            None => {
                let phi = func.create_inst(InstData::phi(ty, &[(pre, start)]));
                func.prepend_inst(header, phi);
                let psi = func.result(phi).expect("phi has a result");
                let next = match ty {
                    Type::Ptr => InstData::gep(psi, delta, 1),
                    _ => InstData::binary(Opcode::Add, psi, delta, Type::I32),
                };
                let next = func.insert_value_before(latch_term, next);
                func.push_phi_incoming(phi, latch, next);
                recurrences.insert((start, delta), psi);
                psi
            }
        };
        func.replace_all_uses(v, psi);
        debug_assert!(!func.has_uses(v), "{inst} still used");
        replaced.push(inst);
    }
    remove_dead_expressions(func, replaced);
    n
}

/// Deletes the replaced roots and the parts of their expressions nothing else uses (pure
/// `add`/`sub`/`mul`/`gep`), so that the loop's size is right for `unroll`, which runs next
/// and counts instructions (three dead ones made a 16-instruction body look too big for four
/// copies).
fn remove_dead_expressions(func: &mut Function, mut work: Vec<Inst>) {
    while let Some(inst) = work.pop() {
        if func.inst_block(inst).is_none() || func.result(inst).is_some_and(|r| func.has_uses(r)) {
            continue;
        }
        let operands: Vec<Inst> = func
            .args(inst)
            .iter()
            .filter_map(|&a| func.def_inst(a))
            .filter(|&d| matches!(func.opcode(d), Opcode::Add | Opcode::Sub | Opcode::Mul | Opcode::Gep { .. }))
            .collect();
        func.remove_inst(inst);
        work.extend(operands);
    }
}

/// Whether `gep` is an element address of a float array walked by the loop: its index
/// varies with an IV, its base does not, and an `f32` load or store reads it, directly or
/// at a constant offset (`a[j - 1]` split by `gep-offsets`). Such an address is cheap to
/// compute (`base + j·4` is one shifted `add`), but on ARM every VFP access pays that `add`
/// (the VFP has no register-offset mode), while a pointer stepping by 4 folds its step into
/// the access (`vldmia rX!, {s0}`, `arm-peephole`): reducing it removes one instruction per
/// access and iteration.
fn walks_float_array(an: &mut Analysis<'_>, gep: Inst) -> bool {
    let func = an.func;
    if !matches!(func.opcode(gep), Opcode::Gep { .. }) {
        return false;
    }
    let args = func.args(gep);
    let (Some(base), Some(index)) = (an.affine(args[0], 0), an.affine(args[1], 0)) else { return false };
    if base.iv.is_some() || index.iv.is_none() {
        return false;
    }
    let v = func.result(gep).expect("gep has a result");
    let float_access = |addr: Value, u: Inst| match func.opcode(u) {
        Opcode::Load => func.inst(u).ty == Type::F32,
        Opcode::Store => func.args(u)[0] == addr && func.value_type(func.args(u)[1]) == Type::F32,
        _ => false,
    };
    func.users(v).iter().any(|&u| {
        float_access(v, u)
            || (matches!(func.opcode(u), Opcode::Gep { .. })
                && func.args(u)[0] == v
                && func.as_int_const(func.args(u)[1]).is_some()
                && func.result(u).is_some_and(|w| func.users(w).iter().any(|&x| float_access(w, x))))
    })
}

/// The copies made in a loop's preheader.
#[derive(Default)]
struct PreheaderCopies {
    /// Per basic IV (its phi): loop value → its copy with the IV at its initial value.
    by_iv: FxHashMap<Value, FxHashMap<Value, Value>>,
    /// Every copy by its contents: identical copies are one value (they are pure), so that
    /// two roots spelling the same expression get the same start.
    consed: FxHashMap<InstData, Value>,
}

/// `v`'s expression cloned before `pos` (in the preheader) with the IV replaced by its initial
/// value, identical copies shared (see [`PreheaderCopies`]). Only called on values
/// [`Analysis::affine`] accepted. Iterative (post-order with an explicit stack): the analysis
/// accepts chains of any length through its memo, so the expression can be far deeper than
/// the native stack allows recursion.
fn clone_at_init(
    func: &mut Function,
    loops: &LoopForest,
    l: Loop,
    iv: &BasicIv,
    v: Value,
    pos: Inst,
    copies: &mut PreheaderCopies,
) -> Value {
    let PreheaderCopies { by_iv, consed } = copies;
    let clones = by_iv.entry(iv.phi).or_default();
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
        let c = match consed.get(&data) {
            Some(&c) => c,
            None => {
                let c = func.insert_value_before(pos, data.clone());
                consed.insert(data, c);
                c
            }
        };
        clones.insert(x, c);
    }
    if v == iv.phi { iv.init } else { clones.get(&v).copied().unwrap_or(v) }
}
