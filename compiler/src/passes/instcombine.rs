//! `instcombine` (catalogue: InstructionCombiner): algebraic peepholes on single instructions
//! and the instructions that define their operands.
//!
//! Why: lowering and the other passes leave redundant arithmetic (`x + 0`, `x - x`, `0 - (0 -
//! x)`, chains of constant additions), comparisons in many equivalent spellings, and
//! `zext`/`icmp ne 0` round trips from condition lowering. Putting every expression into one
//! canonical shape makes it cheaper and lets value numbering see equal expressions as equal;
//! `(i + a) * b → i*b + a*b` gives the induction-variable passes linear forms.
//!
//! Canonical forms: the constant of a commutative integer operation (`add`, `mul`, `icmp eq/ne`)
//! is on the right, a constant on the left of any `icmp`/`fcmp` moves right (the condition is
//! swapped); `x - c` becomes `x + (-c)`; `icmp le/ge` against a constant become `lt/gt`;
//! constants of `+` chains float outwards (`(x + c) + y → (x + y) + c`) so they meet and fold,
//! and so that an address `i + (k + c)` becomes `(i + k) + c` next to an existing `i + k`.
//!
//! Rules (every one exact under i32 two's-complement wrapping):
//! * all-constant operands fold with [`crate::ir::fold::fold`] (never a trapping division);
//! * `x+0, x-0, x*1, x/1 → x`; `x*0, x%1, x-x → 0`; `x*-1 → 0-x`; `0-(0-x) → x`;
//!   `a+(0-b) → a-b`; `a-(0-b) → a+b`; `(x+y)-y → x`; `(x-y)+y → x`; `x-(x-y) → y`;
//! * `(x+c1)+c2 → x+(c1+c2)`, `(x*c1)*c2 → x*(c1*c2)`; `x+x → x*2`; `x*c+x → x*(c+1)`;
//!   `x*c1+x*c2 → x*(c1+c2)`; distributivity `a*f + b*f → (a+b)*f` (both products used only
//!   there, and not when that would undo the next rule); `(x+a)*b → x*b + a*b` and
//!   `(0-x)*b → x*(-b)` for constants `a`, `b` (the sum used only there);
//! * comparisons: `x cc x` folds; `x < INT_MIN`, `x > INT_MAX` are false, `x <= INT_MAX`,
//!   `x >= INT_MIN` true; `x <= c → x < c+1`, `x >= c → x > c-1`; for `eq`/`ne` only (order
//!   is not preserved by wrapping): `x+k == c → x == c-k`, `0-x == c → x == -c`,
//!   `zext(p) != 0 → p`, `zext(p) == 1 → p`, `zext(p) == 0 → inverse of p` when `p` is an
//!   integer comparison, `zext(p) == c → false` for other `c`;
//! * floats, only what IEEE makes exact: `x*1.0`, `x/1.0`, `x-(+0.0)`, `x+(-0.0) → x`;
//!   `fneg(fneg x) → x`. Never `x+0.0` (it turns `-0.0` into `+0.0`), never a reassociation;
//!   float operands are not reordered (which NaN an ARM operation returns depends on order);
//! * `gep p, 0 → p`; `select c, x, x → x`.
//!
//! Traps: `sdiv`/`srem` are never removed unless they provably cannot trap (`x/1`, `x%1`); in
//! particular `x % -1` stays (it traps for `INT_MIN`) and `0/x` stays (it traps for `x == 0`).
//!
//! Algorithm: a worklist seeded with the reachable instructions in reverse post-order; a
//! change re-queues the instruction, the users of its result and anything it created, and
//! deletes operand definitions it left without uses (pure ones only). Every rule either
//! removes an instruction or moves towards the canonical form; a budget proportional to the
//! function size bounds the work even so. Unreachable blocks are left alone (there SSA values
//! may refer to themselves).

use cranelift_entity::{EntityRef, SecondaryMap};

use super::{FunctionCx, FunctionPass};
use crate::ir::{Const, Function, Inst, InstData, IntCC, Opcode, Type, Value};

pub struct InstCombine;

/// What a rule does to the instruction.
enum Change {
    /// Its result is this existing value; the instruction goes.
    Value(Value),
    /// It becomes this instruction (same result value, same position).
    Rewrite(InstData),
}

impl FunctionPass for InstCombine {
    fn run(&self, func: &mut Function, cx: &mut FunctionCx<'_>) -> bool {
        let cfg = cx.analyses.cfg(func);
        let mut queued: SecondaryMap<Inst, bool> = SecondaryMap::new();
        let mut work: Vec<Inst> = Vec::new();
        for &b in cfg.rpo().iter().rev() {
            let insts = func.block_insts_vec(b);
            for &i in insts.iter().rev() {
                queued[i] = true;
                work.push(i);
            }
        }
        let mut budget = 16 * func.inst_count() + 64;
        let (mut simplified, mut rewritten, mut removed) = (0u64, 0u64, 0u64);
        while let Some(inst) = work.pop() {
            queued[inst] = false;
            if func.inst_block(inst).is_none() || budget == 0 {
                continue;
            }
            let Some(result) = func.result(inst) else { continue };
            let before = func.num_insts();
            let Some(change) = combine(func, inst) else { continue };
            budget -= 1;
            let old_args: Vec<Value> = func.args(inst).to_vec();
            let mut requeue: Vec<Inst> = func.users(result).to_vec();
            match change {
                Change::Value(v) => {
                    func.replace_all_uses(result, v);
                    func.remove_inst(inst);
                    simplified += 1;
                }
                Change::Rewrite(data) => {
                    func.replace_inst(inst, data);
                    requeue.push(inst);
                    rewritten += 1;
                }
            }
            // Instructions the rule created have indices past the old arena end.
            requeue.extend((before..func.num_insts()).map(Inst::new));
            removed += remove_dead_operands(func, &old_args);
            for i in requeue {
                if !queued[i] && func.inst_block(i).is_some_and(|b| cfg.is_reachable(b)) {
                    queued[i] = true;
                    work.push(i);
                }
            }
        }
        cx.count("insts_simplified", simplified);
        cx.count("insts_rewritten", rewritten);
        cx.count("dead_operands_removed", removed);
        simplified + rewritten > 0
    }
}

/// Deletes the definitions among `args` that are pure, cannot trap and lost their last use,
/// transitively. Returns how many it deleted.
fn remove_dead_operands(func: &mut Function, args: &[Value]) -> u64 {
    let mut stack: Vec<Value> = args.to_vec();
    let mut n = 0;
    while let Some(v) = stack.pop() {
        let Some(def) = func.def_inst(v) else { continue };
        let op = func.opcode(def);
        if func.inst_block(def).is_none() || !op.is_pure() || op.may_trap() || func.has_uses(v) {
            continue;
        }
        stack.extend_from_slice(func.args(def));
        func.remove_inst(def);
        n += 1;
    }
    n
}

fn int(func: &Function, v: Value) -> Option<i32> {
    func.as_int_const(v)
}

fn float_bits(func: &Function, v: Value) -> Option<u32> {
    match func.as_const(v) {
        Some(Const::Float(bits)) => Some(bits),
        _ => None,
    }
}

/// The opcode and operands of the instruction defining `v`, if it is `op`.
fn def_args(func: &Function, v: Value, op: Opcode) -> Option<[Value; 2]> {
    let d = func.def_inst(v)?;
    if func.opcode(d) != op || func.inst_block(d).is_none() {
        return None;
    }
    let a = func.args(d);
    (a.len() == 2).then(|| [a[0], a[1]])
}

/// `v` is `0 - x`: returns `x`.
fn negated(func: &Function, v: Value) -> Option<Value> {
    let [z, x] = def_args(func, v, Opcode::Sub)?;
    (int(func, z) == Some(0)).then_some(x)
}

/// `v` is `x * c` with a constant `c`.
fn times_const(func: &Function, v: Value) -> Option<(Value, i32)> {
    let [x, c] = def_args(func, v, Opcode::Mul)?;
    Some((x, int(func, c)?))
}

/// `v` is `x + c` with a constant `c`.
fn plus_const(func: &Function, v: Value) -> Option<(Value, i32)> {
    let [x, c] = def_args(func, v, Opcode::Add)?;
    Some((x, int(func, c)?))
}

fn single_use(func: &Function, v: Value) -> bool {
    func.users(v).len() == 1
}

fn bin(op: Opcode, a: Value, b: Value) -> InstData {
    InstData::binary(op, a, b, Type::I32)
}

/// The rule that applies to `inst`, if any (it may insert helper instructions before `inst`).
fn combine(func: &mut Function, inst: Inst) -> Option<Change> {
    let op = func.opcode(inst);
    let args: Vec<Value> = func.args(inst).to_vec();
    let ty = func.inst(inst).ty;
    if !matches!(op, Opcode::Phi | Opcode::Call(_) | Opcode::Load | Opcode::Alloca { .. }) && !args.is_empty() {
        let consts: Option<Vec<Const>> = args.iter().map(|&a| func.as_const(a)).collect();
        if let Some(c) = consts.and_then(|cs| crate::ir::fold::fold(op, &cs, ty)) {
            return Some(Change::Value(func.const_value(c)));
        }
    }
    match op {
        Opcode::Add => combine_add(func, inst, args[0], args[1]),
        Opcode::Sub => combine_sub(func, inst, args[0], args[1]),
        Opcode::Mul => combine_mul(func, inst, args[0], args[1]),
        Opcode::SDiv => (int(func, args[1]) == Some(1)).then_some(Change::Value(args[0])),
        Opcode::SRem => (int(func, args[1]) == Some(1)).then(|| Change::Value(func.iconst(0))),
        Opcode::Icmp(cc) => combine_icmp(func, cc, args[0], args[1]),
        Opcode::Fcmp(cc) => (func.as_const(args[0]).is_some() && func.as_const(args[1]).is_none())
            .then(|| Change::Rewrite(InstData::fcmp(cc.swapped(), args[1], args[0]))),
        Opcode::FAdd => {
            const NEG_ZERO: u32 = 0x8000_0000;
            if float_bits(func, args[1]) == Some(NEG_ZERO) {
                Some(Change::Value(args[0]))
            } else if float_bits(func, args[0]) == Some(NEG_ZERO) {
                Some(Change::Value(args[1]))
            } else {
                None
            }
        }
        Opcode::FSub => (float_bits(func, args[1]) == Some(0)).then_some(Change::Value(args[0])),
        Opcode::FMul => {
            let one = 1.0f32.to_bits();
            if float_bits(func, args[1]) == Some(one) {
                Some(Change::Value(args[0]))
            } else if float_bits(func, args[0]) == Some(one) {
                Some(Change::Value(args[1]))
            } else {
                None
            }
        }
        Opcode::FDiv => (float_bits(func, args[1]) == Some(1.0f32.to_bits())).then_some(Change::Value(args[0])),
        Opcode::FNeg => {
            let d = func.def_inst(args[0])?;
            (func.opcode(d) == Opcode::FNeg && func.inst_block(d).is_some()).then(|| Change::Value(func.args(d)[0]))
        }
        Opcode::Gep { .. } => (int(func, args[1]) == Some(0)).then_some(Change::Value(args[0])),
        Opcode::Select => (args[1] == args[2]).then_some(Change::Value(args[1])),
        _ => None,
    }
}

fn combine_add(func: &mut Function, inst: Inst, a: Value, b: Value) -> Option<Change> {
    let (ca, cb) = (int(func, a), int(func, b));
    if ca.is_some() && cb.is_none() {
        return Some(Change::Rewrite(bin(Opcode::Add, b, a)));
    }
    if cb == Some(0) {
        return Some(Change::Value(a));
    }
    if let Some(x) = negated(func, a) {
        return Some(Change::Rewrite(bin(Opcode::Sub, b, x)));
    }
    if let Some(y) = negated(func, b) {
        return Some(Change::Rewrite(bin(Opcode::Sub, a, y)));
    }
    if let Some([x, y]) = def_args(func, a, Opcode::Sub)
        && y == b
    {
        return Some(Change::Value(x));
    }
    if let Some([x, y]) = def_args(func, b, Opcode::Sub)
        && y == a
    {
        return Some(Change::Value(x));
    }
    if let Some(c2) = cb
        && let Some((x, c1)) = plus_const(func, a)
    {
        let c = func.iconst(c1.wrapping_add(c2));
        return Some(Change::Rewrite(bin(Opcode::Add, x, c)));
    }
    if a == b {
        let two = func.iconst(2);
        return Some(Change::Rewrite(bin(Opcode::Mul, a, two)));
    }
    // x*c + x, x + x*c, x*c1 + x*c2: one multiply by the summed constant.
    let (ma, mb) = (times_const(func, a), times_const(func, b));
    let merged = match (ma, mb) {
        (Some((x, c1)), Some((y, c2))) if x == y => Some((x, c1.wrapping_add(c2))),
        (Some((x, c)), _) if x == b => Some((x, c.wrapping_add(1))),
        (_, Some((x, c))) if x == a => Some((x, c.wrapping_add(1))),
        _ => None,
    };
    if let Some((x, c)) = merged {
        let c = func.iconst(c);
        return Some(Change::Rewrite(bin(Opcode::Mul, x, c)));
    }
    if let Some(change) = distribute(func, inst, a, b) {
        return Some(change);
    }
    // Constants float outwards: (x + c) + y → (x + y) + c. When `x + c` has other uses it
    // stays, so the rule applies only where `x + y` is already computed before `inst` in its
    // block (the lanes of an unrolled loop: `i + (k + 1)` next to `i + k`), and then costs
    // nothing while exposing the constant offset from an existing value.
    if cb.is_none() {
        for (inner, other) in [(a, b), (b, a)] {
            let Some((x, c)) = plus_const(func, inner) else { continue };
            if int(func, other).is_some() {
                continue;
            }
            let t = if single_use(func, inner) {
                func.insert_value_before(inst, bin(Opcode::Add, x, other))
            } else if let Some(t) = earlier_sum(func, inst, x, other) {
                t
            } else {
                continue;
            };
            let c = func.iconst(c);
            return Some(Change::Rewrite(bin(Opcode::Add, t, c)));
        }
    }
    None
}

/// An `add x, y` (either order) computed before `inst` in `inst`'s block.
fn earlier_sum(func: &Function, inst: Inst, x: Value, y: Value) -> Option<Value> {
    let block = func.inst_block(inst)?;
    func.users(x)
        .iter()
        .copied()
        .filter(|&u| {
            let args = func.args(u);
            func.opcode(u) == Opcode::Add
                && func.inst_block(u) == Some(block)
                && func.inst_seq(u) < func.inst_seq(inst)
                && ((args[0] == x && args[1] == y) || (args[0] == y && args[1] == x))
        })
        .min_by_key(|&u| func.inst_seq(u))
        .and_then(|u| func.result(u))
}

/// `p*f + q*f → (p+q)*f` when both products are used only here. Not when `f` is a constant
/// and `p` or `q` is too: `(p + k)*f` would be expanded right back by the linear-form rule.
fn distribute(func: &mut Function, inst: Inst, a: Value, b: Value) -> Option<Change> {
    let [p1, p2] = def_args(func, a, Opcode::Mul)?;
    let [q1, q2] = def_args(func, b, Opcode::Mul)?;
    if a == b || !single_use(func, a) || !single_use(func, b) {
        return None;
    }
    let (f, p, q) = if p1 == q1 {
        (p1, p2, q2)
    } else if p1 == q2 {
        (p1, p2, q1)
    } else if p2 == q1 {
        (p2, p1, q2)
    } else if p2 == q2 {
        (p2, p1, q1)
    } else {
        return None;
    };
    let is_const = |v: Value| func.as_int_const(v).is_some();
    if is_const(p) && is_const(q) {
        return None; // x*c1 + x*c2 is handled by merging the constants
    }
    if is_const(f) && (is_const(p) || is_const(q)) {
        return None;
    }
    let sum = func.insert_value_before(inst, bin(Opcode::Add, p, q));
    Some(Change::Rewrite(bin(Opcode::Mul, sum, f)))
}

fn combine_sub(func: &mut Function, inst: Inst, a: Value, b: Value) -> Option<Change> {
    let cb = int(func, b);
    if cb == Some(0) {
        return Some(Change::Value(a));
    }
    if a == b {
        return Some(Change::Value(func.iconst(0)));
    }
    if let Some(c) = cb {
        let neg = func.iconst(c.wrapping_neg());
        return Some(Change::Rewrite(bin(Opcode::Add, a, neg)));
    }
    if let Some(y) = negated(func, b) {
        if int(func, a) == Some(0) {
            return Some(Change::Value(y));
        }
        return Some(Change::Rewrite(bin(Opcode::Add, a, y)));
    }
    if let Some([x, y]) = def_args(func, a, Opcode::Add) {
        if y == b {
            return Some(Change::Value(x));
        }
        if x == b {
            return Some(Change::Value(y));
        }
    }
    if let Some([x, y]) = def_args(func, b, Opcode::Sub)
        && x == a
    {
        return Some(Change::Value(y));
    }
    // (x + c) - y → (x - y) + c.
    if let Some((x, c)) = plus_const(func, a)
        && single_use(func, a)
    {
        let t = func.insert_value_before(inst, bin(Opcode::Sub, x, b));
        let c = func.iconst(c);
        return Some(Change::Rewrite(bin(Opcode::Add, t, c)));
    }
    None
}

fn combine_mul(func: &mut Function, inst: Inst, a: Value, b: Value) -> Option<Change> {
    let (ca, cb) = (int(func, a), int(func, b));
    if ca.is_some() && cb.is_none() {
        return Some(Change::Rewrite(bin(Opcode::Mul, b, a)));
    }
    let c = cb?;
    match c {
        0 => return Some(Change::Value(func.iconst(0))),
        1 => return Some(Change::Value(a)),
        -1 => {
            let zero = func.iconst(0);
            return Some(Change::Rewrite(bin(Opcode::Sub, zero, a)));
        }
        _ => {}
    }
    if let Some((x, c1)) = times_const(func, a) {
        let k = func.iconst(c1.wrapping_mul(c));
        return Some(Change::Rewrite(bin(Opcode::Mul, x, k)));
    }
    if let Some(x) = negated(func, a) {
        let k = func.iconst(c.wrapping_neg());
        return Some(Change::Rewrite(bin(Opcode::Mul, x, k)));
    }
    // (x + k) * c → x*c + k*c: the linear form induction-variable analysis wants.
    if let Some((x, k)) = plus_const(func, a)
        && single_use(func, a)
    {
        let t = func.insert_value_before(inst, bin(Opcode::Mul, x, b));
        let kc = func.iconst(k.wrapping_mul(c));
        return Some(Change::Rewrite(bin(Opcode::Add, t, kc)));
    }
    None
}

fn combine_icmp(func: &mut Function, cc: IntCC, a: Value, b: Value) -> Option<Change> {
    let icmp = |cc, x, y| Some(Change::Rewrite(InstData::icmp(cc, x, y)));
    if int(func, a).is_some() && int(func, b).is_none() {
        return icmp(cc.swapped(), b, a);
    }
    if a == b {
        return Some(Change::Value(func.bconst(cc.eval(0, 0))));
    }
    let c = int(func, b)?;
    let always = |func: &mut Function, v: bool| Some(Change::Value(func.bconst(v)));
    match cc {
        IntCC::Lt if c == i32::MIN => return always(func, false),
        IntCC::Gt if c == i32::MAX => return always(func, false),
        IntCC::Le if c == i32::MAX => return always(func, true),
        IntCC::Ge if c == i32::MIN => return always(func, true),
        IntCC::Le => {
            let k = func.iconst(c + 1);
            return icmp(IntCC::Lt, a, k);
        }
        IntCC::Ge => {
            let k = func.iconst(c - 1);
            return icmp(IntCC::Gt, a, k);
        }
        IntCC::Eq | IntCC::Ne => {}
        _ => return None,
    }
    // Equality survives wrapping: x + k == c ⇔ x == c - k, 0 - x == c ⇔ x == -c.
    if let Some((x, k)) = plus_const(func, a) {
        let k = func.iconst(c.wrapping_sub(k));
        return icmp(cc, x, k);
    }
    if let Some(x) = negated(func, a) {
        let k = func.iconst(c.wrapping_neg());
        return icmp(cc, x, k);
    }
    let d = func.def_inst(a)?;
    if func.opcode(d) != Opcode::Zext || func.inst_block(d).is_none() {
        return None;
    }
    let p = func.args(d)[0];
    // zext(p) == c: p itself when that means "p is true", its inverse when "p is false".
    let wants_true = match (cc, c) {
        (IntCC::Ne, 0) | (IntCC::Eq, 1) => true,
        (IntCC::Eq, 0) | (IntCC::Ne, 1) => false,
        (IntCC::Eq, _) => return always(func, false),
        _ => return always(func, true),
    };
    if wants_true {
        return Some(Change::Value(p));
    }
    let pd = func.def_inst(p)?;
    match func.opcode(pd) {
        Opcode::Icmp(pcc) if func.inst_block(pd).is_some() => {
            let pa = func.args(pd);
            icmp(pcc.inverse(), pa[0], pa[1])
        }
        _ => None,
    }
}
