//! Which IR instructions are folded into their users instead of being selected on their own.
//!
//! * **Address chains.** The address of a `gep` chain is summarised as an [`AddrExpr`]:
//!   a base (a register value, an `alloca` area or a global), a constant byte offset and at
//!   most one index scaled by a power of two. Constant indices fold into the offset (also the
//!   `c` of an index `i ± c` on frame and global arrays), one power-of-two scaled index folds
//!   into the `[base, index, lsl #k]` form; for a second one (`a[i][j]`) the inner `gep` stays
//!   a value (the row address) and becomes the base register. A `gep` whose expression is
//!   more than itself is *absorbable*; it is skipped (never computed) when every use is the
//!   address of a load or store, or the base of another skipped `gep` that absorbs it. This
//!   is a greatest fixpoint: start by skipping all absorbable `gep`s, un-skip any with a use
//!   that needs the value, repeat. A `gep` with a variable index that several VFP accesses
//!   (or word accesses of a global or frame array at two or more offsets) reach at constant
//!   offsets is never absorbed: it is computed once and the accesses take
//!   `[shared, #offset]` (see [`shared_bases`]). A word access at `x + c` uses the program's
//!   own `x + c` as the index when that is computed anyway.
//! * **Compares.** An `icmp`/`fcmp` whose every use is the condition of a `br` or `select`,
//!   or a `zext`, is skipped: each user re-emits the comparison right before the instruction
//!   reading the flags, so no 0/1 value is materialised.
//! * **Multiplications** with a single use by an `add`/`sub` in the same block fold into
//!   `mla`/`mls`, or into a shifted operand when multiplying by a power of two; a float
//!   multiplication used only by an `fadd`/`fsub` folds into `vmla.f32`/`vnmls.f32` (unfused,
//!   so the rounding is that of `vmul` + `vadd`/`vsub`) where the NaN the instruction returns
//!   is the one the IR's operation returns, see [`float_mac_operand`]. `vmls` (`a − x·y`) is
//!   never used: it negates the product, which flips the sign of a NaN product.
//!
//! * **Remainder tests.** `x % 2^k` (also `% -2^k`, `k ≤ 8`) whose only uses are `== 0` /
//!   `!= 0` compares is skipped: each compare becomes `tst x, #2^k-1`.
//!
//! Folding only extends live ranges of the folded instruction's operands up to the user;
//! the same-block condition for multiplications keeps loop-invariant products out of loops.

use cranelift_entity::SecondaryMap;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::ir::{Block, Const, Function, GlobalRef, Inst, Opcode, Type, Value, ValueDef};
use crate::isa::arm::imm::is_arm_imm;

/// What an address is based on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AddrBase {
    /// A pointer value held in a register.
    Reg(Value),
    /// An `alloca` area (by frame index).
    Alloca(u32),
    Global(GlobalRef),
}

/// `base + off + index << shift`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AddrExpr {
    pub base: AddrBase,
    pub off: i32,
    pub index: Option<(Value, u8)>,
}

impl AddrExpr {
    fn of_base(base: AddrBase) -> AddrExpr {
        AddrExpr { base, off: 0, index: None }
    }
}

/// Largest constant offset folded into an address (keeps all offset arithmetic far from
/// overflow; bigger offsets are materialised like variable ones).
const MAX_FOLDED_OFFSET: i64 = 1 << 28;

pub struct FoldInfo {
    pub skipped: SecondaryMap<Inst, bool>,
    /// For an `add`/`sub`/`fadd`: the operand index of the multiplication folded into it.
    pub folded_mul: FxHashMap<Inst, usize>,
    /// The frame index of each `alloca` result.
    pub allocas: FxHashMap<Value, u32>,
    /// Sizes of the `alloca` areas in bytes.
    pub alloca_sizes: Vec<u32>,
    gep_exprs: FxHashMap<Value, AddrExpr>,
    /// `gep`s with a variable index computed once as a value although they could be folded:
    /// several accesses reach memory through them at constant offsets (see [`shared_bases`]).
    shared_bases: FxHashSet<Value>,
}

impl FoldInfo {
    pub fn compute(
        func: &Function,
        order: &[Block],
        reachable: &SecondaryMap<Block, bool>,
        fold_addresses: bool,
        fold_ops: bool,
    ) -> FoldInfo {
        let mut info = FoldInfo {
            skipped: SecondaryMap::new(),
            folded_mul: FxHashMap::default(),
            allocas: FxHashMap::default(),
            alloca_sizes: Vec::new(),
            gep_exprs: FxHashMap::default(),
            shared_bases: FxHashSet::default(),
        };
        let insts: Vec<Inst> = order.iter().flat_map(|&b| func.block_insts(b)).collect();
        let live_user = |u: Inst| func.inst_block(u).is_some_and(|b| reachable[b]);

        for &i in &insts {
            if let (Opcode::Alloca { count, .. }, Some(v)) = (func.opcode(i), func.result(i)) {
                info.allocas.insert(v, info.alloca_sizes.len() as u32);
                info.alloca_sizes.push(count.saturating_mul(4));
            }
        }

        if fold_addresses {
            info.shared_bases = shared_bases(&mut info, func, &insts, &live_user);
            // The expressions so far were computed without the shared bases as leaves.
            info.gep_exprs.clear();
            let mut candidates = Vec::new();
            for &i in &insts {
                if let (Opcode::Gep { .. }, Some(v)) = (func.opcode(i), func.result(i)) {
                    let e = info.gep_expr(func, v);
                    if e.base != AddrBase::Reg(v) && !info.shared_bases.contains(&v) {
                        candidates.push((i, v));
                        info.skipped[i] = true;
                    }
                }
            }
            let mut changed = true;
            while changed {
                changed = false;
                for &(i, v) in &candidates {
                    if !info.skipped[i] {
                        continue;
                    }
                    let all_fold = func.users(v).iter().filter(|&&u| live_user(u)).all(|&u| {
                        let args = func.args(u);
                        match func.opcode(u) {
                            Opcode::Load => true,
                            Opcode::Store => args[0] == v && args[1] != v,
                            // The user must absorb this gep, not take it as its base register.
                            Opcode::Gep { .. } => {
                                args[0] == v
                                    && args[1] != v
                                    && info.skipped[u]
                                    && func.result(u).and_then(|r| info.gep_exprs.get(&r)).is_some_and(|e| {
                                        e.base != AddrBase::Reg(v) && e.index.is_none_or(|(x, _)| x != v)
                                    })
                            }
                            _ => false,
                        }
                    });
                    if !all_fold {
                        info.skipped[i] = false;
                        changed = true;
                    }
                }
            }
        }

        for &i in &insts {
            let Some(v) = func.result(i) else { continue };
            // `fneg x` used only as the negated side of `select c, -x, x` (either order):
            // the select negates conditionally.
            if func.opcode(i) == Opcode::FNeg {
                let x = func.args(i)[0];
                let users: Vec<Inst> = func.users(v).iter().copied().filter(|&u| live_user(u)).collect();
                info.skipped[i] = !users.is_empty()
                    && users.iter().all(|&u| {
                        let args = func.args(u);
                        func.opcode(u) == Opcode::Select
                            && args[0] != v
                            && ((args[1] == v && args[2] == x) || (args[2] == v && args[1] == x))
                    });
                continue;
            }
            if matches!(func.opcode(i), Opcode::Icmp(_) | Opcode::Fcmp(_)) {
                let fused = func.users(v).iter().filter(|&&u| live_user(u)).all(|&u| {
                    let args = func.args(u);
                    match func.opcode(u) {
                        Opcode::Br | Opcode::Zext => true,
                        Opcode::Select => args[0] == v && args[1] != v && args[2] != v,
                        _ => false,
                    }
                });
                info.skipped[i] = fused;
            }
        }

        if fold_ops {
            // x % 2^k used only by `==`/`!=` tests with constants: each test reads `x` directly.
            for &i in &insts {
                let Some(v) = func.result(i) else { continue };
                if rem_pow2_mask(func, i).is_some()
                    && func
                        .users(v)
                        .iter()
                        .filter(|&&u| live_user(u))
                        .all(|&u| rem_pow2_test(func, u).is_some_and(|t| t.rem == v))
                {
                    info.skipped[i] = true;
                }
            }
            for &u in &insts {
                if matches!(func.opcode(u), Opcode::FAdd | Opcode::FSub) {
                    if let Some(idx) = float_mac_operand(func, u) {
                        let mi = func.def_inst(func.args(u)[idx]).expect("a folded multiplication is an instruction");
                        info.skipped[mi] = true;
                        info.folded_mul.insert(u, idx);
                    }
                    continue;
                }
                let op = func.opcode(u);
                if !matches!(op, Opcode::Add | Opcode::Sub) || func.inst(u).ty != Type::I32 {
                    continue;
                }
                let args = func.args(u);
                for idx in [1, 0] {
                    let m = args[idx];
                    if args[1 - idx] == m {
                        continue;
                    }
                    let Some(mi) = func.def_inst(m) else { continue };
                    if func.opcode(mi) != Opcode::Mul
                        || func.inst_block(mi) != func.inst_block(u)
                        || func.users(m).len() != 1
                    {
                        continue;
                    }
                    // Multiplications by 0 and ±1 are cheaper on their own.
                    if func.args(mi).iter().any(|&a| matches!(func.as_int_const(a), Some(-1..=1))) {
                        continue;
                    }
                    let shifted = mul_by_power_of_two(func, mi).is_some();
                    // `m - a` has no multiply-accumulate form; only the shifted form (`rsb`).
                    if op == Opcode::Sub && idx == 0 && !shifted {
                        continue;
                    }
                    info.skipped[mi] = true;
                    info.folded_mul.insert(u, idx);
                    break;
                }
            }
        }
        info
    }

    /// The address expression of a pointer value.
    pub fn addr_expr(&mut self, func: &Function, v: Value) -> AddrExpr {
        if let Some(&a) = self.allocas.get(&v) {
            return AddrExpr::of_base(AddrBase::Alloca(a));
        }
        match func.value_def(v) {
            ValueDef::Global(g) => AddrExpr::of_base(AddrBase::Global(g)),
            ValueDef::Inst(i) if matches!(func.opcode(i), Opcode::Gep { .. }) && self.skipped[i] => {
                self.gep_expr(func, v)
            }
            _ => AddrExpr::of_base(AddrBase::Reg(v)),
        }
    }

    fn gep_expr(&mut self, func: &Function, v: Value) -> AddrExpr {
        if let Some(&e) = self.gep_exprs.get(&v) {
            return e;
        }
        let leaf = AddrExpr::of_base(AddrBase::Reg(v));
        let Some(i) = func.def_inst(v) else {
            return leaf;
        };
        let Opcode::Gep { scale } = func.opcode(i) else {
            return leaf;
        };
        let (base, index) = (func.args(i)[0], func.args(i)[1]);
        let inner = if let Some(&a) = self.allocas.get(&base) {
            AddrExpr::of_base(AddrBase::Alloca(a))
        } else {
            match func.value_def(base) {
                ValueDef::Global(g) => AddrExpr::of_base(AddrBase::Global(g)),
                ValueDef::Inst(bi)
                    if matches!(func.opcode(bi), Opcode::Gep { .. }) && !self.shared_bases.contains(&base) =>
                {
                    self.gep_expr(func, base)
                }
                _ => AddrExpr::of_base(AddrBase::Reg(base)),
            }
        };
        let e = match func.as_const(index) {
            Some(Const::Int(c)) => {
                let off = i64::from(inner.off) + i64::from(c) * i64::from(scale);
                if off.abs() <= MAX_FOLDED_OFFSET { AddrExpr { off: off as i32, ..inner } } else { leaf }
            }
            _ if scale == 0 => inner,
            _ if scale.is_power_of_two() && inner.index.is_none() && func.value_type(index) == Type::I32 => {
                // `a[i ± c]` on a frame or global array: the constant joins the offset (free
                // there), saving the add in the index.
                let (index, extra) = match split_constant(func, index) {
                    Some((x, c)) if !matches!(inner.base, AddrBase::Reg(_)) => (x, i64::from(c) * i64::from(scale)),
                    _ => (index, 0),
                };
                let off = i64::from(inner.off) + extra;
                if off.abs() > MAX_FOLDED_OFFSET {
                    return leaf;
                }
                AddrExpr { index: Some((index, scale.trailing_zeros() as u8)), off: off as i32, ..inner }
            }
            // A second scaled index (`a[i][j]`): the row address is computed once as a value
            // and the column becomes the index of the addressing mode.
            _ if scale.is_power_of_two()
                && inner.index.is_some()
                && func.value_type(index) == Type::I32
                && func.value_type(base) == Type::Ptr =>
            {
                AddrExpr { base: AddrBase::Reg(base), off: 0, index: Some((index, scale.trailing_zeros() as u8)) }
            }
            _ => leaf,
        };
        self.gep_exprs.insert(v, e);
        e
    }
}

/// Accesses through a shared base that folding would have to pay an `add` for before this
/// many of them make the base worth a register of its own.
const SHARED_BASE_MIN_ADDS: usize = 2;

/// Distinct non-zero offsets of word accesses at which a global or frame array's shared
/// base saves enough registers to pay its `add` (the `gep-offsets` pass splits such groups;
/// corpus/bench at -O2: 2 gives 0.9945 of the cycles, 3 gives 0.9979).
const SHARED_BASE_MIN_WORD_OFFSETS: usize = 2;

/// The `gep`s with a variable index worth computing once as a value: `p + x·s` reached by
/// several VFP loads and stores, directly or through `gep`s with constant indices
/// (`a[j - 1]`, `a[j]`, `a[j + 1]` after `gep-offsets`). VFP accesses have no register-offset
/// mode, so folded into each of them the address costs a shifted `add` per access; computed
/// once, it costs one and every access takes `[shared, #offset]`. Word accesses pay no `add`:
/// they take `[base, index, lsl #k]` (with `index = x + c` for an offset, see
/// `addr_from_expr`). A base is shared when at least [`SHARED_BASE_MIN_ADDS`] accesses would
/// pay that `add` (a use that needs the value anyway, not a load or store, counts as one), or
/// when it is a global or frame array reached by word accesses at
/// [`SHARED_BASE_MIN_WORD_OFFSETS`] distinct non-zero offsets: folded, each offset would be a
/// base constant of its own (`sy.a+4`, `sy.a+8`, ...), a register live across the loop.
fn shared_bases(
    info: &mut FoldInfo,
    func: &Function,
    insts: &[Inst],
    live_user: &dyn Fn(Inst) -> bool,
) -> FxHashSet<Value> {
    let needs_add = |ty: Type| ty == Type::F32;
    // The type accessed by `u` through the address `v`, when `u` is a load or store of it.
    let access_type = |u: Inst, v: Value| {
        let args = func.args(u);
        match func.opcode(u) {
            Opcode::Load => Some(func.inst(u).ty),
            Opcode::Store if args[0] == v && args[1] != v => Some(func.value_type(args[1])),
            _ => None,
        }
    };
    let mut shared = FxHashSet::default();
    for &i in insts {
        let (Opcode::Gep { scale }, Some(v)) = (func.opcode(i), func.result(i)) else { continue };
        if func.as_const(func.args(i)[1]).is_some() || !scale.is_power_of_two() {
            continue;
        }
        let e = info.gep_expr(func, v);
        if e.index.is_none() {
            continue;
        }
        let mut adds = 0;
        // Distinct non-zero offsets of word accesses: folded, each is a base register of its
        // own when the base is a global or frame array (`sy.a+4`, `sy.a+8`, ...).
        let mut word_offsets: Vec<i32> = Vec::new();
        for &u in func.users(v).iter().filter(|&&u| live_user(u)) {
            if let Some(ty) = access_type(u, v) {
                adds += usize::from(needs_add(ty));
                continue;
            }
            let args = func.args(u);
            let offset_gep = matches!(func.opcode(u), Opcode::Gep { .. })
                && args[0] == v
                && args[1] != v
                && func.as_int_const(args[1]).is_some_and(|c| c != 0);
            let Some(w) = func.result(u).filter(|_| offset_gep) else {
                adds += 1;
                continue;
            };
            let offset = func.as_int_const(args[1]).unwrap_or(0);
            for &a in func.users(w).iter().filter(|&&a| live_user(a)) {
                let ty = access_type(a, w);
                adds += ty.map_or(1, |ty| usize::from(needs_add(ty)));
                if ty.is_some_and(|ty| !needs_add(ty)) && !word_offsets.contains(&offset) {
                    word_offsets.push(offset);
                }
            }
        }
        let constant_bases = !matches!(e.base, AddrBase::Reg(_)) && word_offsets.len() >= SHARED_BASE_MIN_WORD_OFFSETS;
        if adds >= SHARED_BASE_MIN_ADDS || constant_bases {
            shared.insert(v);
        }
    }
    shared
}

/// `2^k - 1` when `srem` computes `x % ±2^k` with a mask that `tst` can encode (`1 ≤ k ≤ 8`).
pub fn rem_pow2_mask(func: &Function, srem: Inst) -> Option<u32> {
    if func.opcode(srem) != Opcode::SRem {
        return None;
    }
    let d = func.as_int_const(func.args(srem)[1])?.unsigned_abs();
    (d.is_power_of_two() && (2..=256).contains(&d) && func.as_const(func.args(srem)[0]).is_none()).then(|| d - 1)
}

/// A test `x % ±2^k == c` (or `!=`; see [`rem_pow2_mask`]) that needs no remainder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemPow2Test {
    /// The `srem` result.
    pub rem: Value,
    /// `2^k - 1`.
    pub mask: u32,
    /// The constant compared with, `|c| < 2^k`.
    pub c: i32,
}

/// For an `icmp eq/ne` of `x % ±2^k` with a constant `c`, `|c| < 2^k`, when it can be
/// tested on `x` directly. `x % 2^k == 0` exactly when `x & (2^k - 1) == 0`, whatever the
/// sign of `x`. For `c ≠ 0` the remainder is `c` exactly when `x` has the sign of `c` and
/// its low bits are those of `c`: `x & M == c & M` with `M = 0x80000000 | (2^k - 1)`, which
/// needs `M` to be an ARM immediate (`k ≤ 7`).
pub fn rem_pow2_test(func: &Function, icmp: Inst) -> Option<RemPow2Test> {
    if !matches!(func.opcode(icmp), Opcode::Icmp(crate::ir::IntCC::Eq | crate::ir::IntCC::Ne)) {
        return None;
    }
    let args = func.args(icmp);
    let (rem, c) = match (func.as_int_const(args[0]), func.as_int_const(args[1])) {
        (None, Some(c)) => (args[0], c),
        (Some(c), None) => (args[1], c),
        _ => return None,
    };
    let mask = rem_pow2_mask(func, func.def_inst(rem)?)?;
    let fits = c.unsigned_abs() <= mask && (c == 0 || is_arm_imm(0x8000_0000 | mask));
    fits.then_some(RemPow2Test { rem, mask, c })
}

/// `(x, c)` when `v` is `x + c` or `x - c` for an `i32` constant `c` (wrapping arithmetic, so
/// `(x + c)·s = x·s + c·s` in addresses too). `x` must not be a multiplication: that one may
/// be folded into `v` (as `mla`) and then never exist on its own.
fn split_constant(func: &Function, v: Value) -> Option<(Value, i32)> {
    let i = func.def_inst(v)?;
    let args = func.args(i);
    let (x, c) = split_constant_operands(func, i, args)?;
    if func.def_inst(x).is_some_and(|xi| func.opcode(xi) == Opcode::Mul) {
        return None;
    }
    Some((x, c))
}

fn split_constant_operands(func: &Function, i: Inst, args: &[Value]) -> Option<(Value, i32)> {
    match func.opcode(i) {
        Opcode::Add => match (func.as_int_const(args[0]), func.as_int_const(args[1])) {
            (_, Some(c)) if func.as_const(args[0]).is_none() => Some((args[0], c)),
            (Some(c), None) => Some((args[1], c)),
            _ => None,
        },
        Opcode::Sub => {
            let c = func.as_int_const(args[1])?;
            (func.as_const(args[0]).is_none() && c != i32::MIN).then(|| (args[0], -c))
        }
        _ => None,
    }
}

/// `Some(k)` when `mul` multiplies by the constant `2^k` (`1 ≤ k ≤ 31`), with the index of
/// the non-constant operand.
pub fn mul_by_power_of_two(func: &Function, mul: Inst) -> Option<(usize, u8)> {
    let args = func.args(mul);
    for (c_idx, x_idx) in [(1, 0), (0, 1)] {
        if let Some(c) = func.as_int_const(args[c_idx]) {
            let c = c as u32;
            if c.is_power_of_two() && (1..=31).contains(&c.trailing_zeros()) && func.as_const(args[x_idx]).is_none() {
                return Some((x_idx, c.trailing_zeros() as u8));
            }
        }
    }
    None
}

/// The operand index of the multiplication that `u` (an `fadd` or `fsub`) computes exactly
/// as a multiply-accumulate, if any: a `fmul` in `u`'s block used only by `u`.
///
/// The VFP adds with the accumulator as the first operand, and when both operands of an
/// addition are NaNs it returns the first one (see [`crate::runtime::vfp`]), so:
/// * `a + x·y` is `vmla` with `a` as the accumulator: `FPAdd(a, p)`, the IR's own order;
/// * `x·y + a` is `vmla` too only when `a` is never a NaN: `FPAdd(a, p)` returns `a` where
///   the IR's `FPAdd(p, a)` returns `p` if both are NaNs;
/// * `x·y − a` is `vnmls`, `FPAdd(−a, p)`, only when `a` is never a NaN (negating a NaN `a`
///   flips its sign, and `p − a` returns `a` itself when only `a` is a NaN).
pub fn float_mac_operand(func: &Function, u: Inst) -> Option<usize> {
    let args = func.args(u);
    if args[0] == args[1] {
        return None;
    }
    let candidates: &[usize] = match func.opcode(u) {
        Opcode::FAdd => &[1, 0],
        Opcode::FSub => &[0],
        _ => return None,
    };
    candidates.iter().copied().find(|&idx| {
        let m = args[idx];
        let foldable = func.def_inst(m).is_some_and(|mi| {
            func.opcode(mi) == Opcode::FMul && func.inst_block(mi) == func.inst_block(u) && func.users(m).len() == 1
        });
        foldable && (idx == 1 || never_nan(func, args[1 - idx]))
    })
}

/// `v` is never a NaN: a float constant other than a NaN, or an integer converted to float.
fn never_nan(func: &Function, v: Value) -> bool {
    match func.value_def(v) {
        ValueDef::Const(Const::Float(bits)) => !f32::from_bits(bits).is_nan(),
        ValueDef::Inst(i) => func.opcode(i) == Opcode::SiToFp,
        _ => false,
    }
}
