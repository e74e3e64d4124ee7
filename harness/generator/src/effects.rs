//! Calls that survive inlining, with memory effects, inside loops.
//!
//! Most generated helpers are small and get inlined at `-O2` before any loop pass sees a
//! call, and recursive ones mostly end in a self tail call that `tail-recursion` turns into
//! a loop (after which they are inlined too). So the loop passes (`licm`,
//! `hoist-global-loads`, `load-elim`, `loop-load-elim`, `gvn`, `gcm`, `lcm`, `dead-arrays`)
//! rarely have to respect what a call may read or write. This module makes that common:
//! * **effect callees** ([`effect_callees`]): functions with exactly one memory effect a call
//!   can have — nothing outside their frame, or reading or writing a global `int`, the `int`
//!   array passed as a parameter, or a rank-1 global `int` array — that escape inlining in
//!   one of two ways: recursion whose self-call is *not* in tail position (`return G % 1009 +
//!   f(d - 1, x + 3) * 3;`, a statement after a void self-call), or a straight-line body well
//!   over the inliner's budget for callees with several call sites (`inline::SMALL_CALLEE`,
//!   40 instructions), called from two sites. They are ordinary functions of the program
//!   afterwards (`env.funcs`, with their purity and written globals), so any later code may
//!   call them too;
//! * **effect loops** ([`effect_loop`]): a counted loop opening with loads and stores of one
//!   memory object interleaved with calls of the callees that read or write it — a read-only
//!   call beside a call that writes the same global (CSE or hoisting of the read across the
//!   write is wrong), a call reading an array between two stores to it (the first store is
//!   not dead), a load after a writing call (no reuse across it), a store before a reading
//!   call (no sinking past it). The memory is a global, or for array-parameter callees an
//!   array of the caller (a local one declared for the loop when none is visible).
//!
//! UB-free and terminating by construction: the depth parameter decreases by one per
//! self-call and the base case comes first; indices are `k % L` of parameters in `0..=L` and
//! of counters ≥ 0; `int` arithmetic wraps. Everything computed goes to the checksum (the
//! loop's accumulator is mixed in, the globals are folded by `checksum_globals`).

use super::build;
use super::calls::{array_views, callable};
use super::env::{self, Effect, Func, Param, ParamKind, Storage, Touch, VarId};
use super::features::Feature;
use super::loops::counted_loop_opening;
use super::operand::stmt_ctx;
use super::prelude::Helper;
use super::state::Gen;
use super::value::{ECtx, FLOAT_VAR_BOUND, Ty};
use sysyc::frontend::ast::{self, BType, BinaryOp, BlockItem, Expr, FuncDef, InitVal, Item, Span, Stmt};

/// Straight-line updates of a big callee's body: with two instructions each, well over the
/// inliner's 40-instruction budget even after folding.
const BIG_BODY_UPDATES: (i64, i64) = (24, 32);

/// Work of one invocation of a recursive callee, and of one update of a big one.
const INVOCATION_COST: u64 = 14;
const UPDATE_COST: u64 = 3;

/// One or two memory objects with their effect callees (and the globals they need,
/// declared first), registered as functions of the program: for each, one callee, and
/// mostly a second one with the other access (a reader and a writer of the same memory).
pub(super) fn effect_callees(g: &mut Gen) -> Vec<Item> {
    let mut items = Vec::new();
    for _ in 0..g.c.range(1, 2) {
        let (touch, writes) = choose_touch(g, &mut items);
        effect_callee(g, touch, writes, &mut items);
        if touch != Touch::Nothing && g.cfg.knobs.impure_functions > 0 && g.c.chance(0.75) {
            effect_callee(g, touch, !writes, &mut items);
        }
    }
    items
}

/// What the current program allows a callee to touch, with weights.
fn choose_touch(g: &mut Gen, items: &mut Vec<Item>) -> (Touch, bool) {
    let k = g.cfg.knobs.clone();
    let writes_ok = k.impure_functions > 0;
    let arrays = k.arrays > 0;
    let globals = k.globals > 0;
    let choice = g.c.weighted(&[1, if globals { 4 } else { 0 }, if arrays { 3 } else { 0 }, if arrays && globals { 3 } else { 0 }]);
    let writes = writes_ok && choice != 0 && g.c.chance(0.55);
    let touch = match choice {
        1 => Touch::Global(global_int(g, items)),
        2 => Touch::Param(0),
        3 => Touch::GlobalArray(global_int_array(g, items)),
        _ => Touch::Nothing,
    };
    (touch, writes)
}

/// A visible, assignable global `int` scalar (mostly one another callee already touches,
/// so readers and writers meet), or a new one declared into `items`.
fn global_int(g: &mut Gen, items: &mut Vec<Item>) -> VarId {
    let fits = |v: &env::Var| v.storage == Storage::Global && v.is_scalar() && v.ty == Ty::Int && !v.is_const && !v.read_only;
    let touched = touched_globals(g);
    let shared: Vec<VarId> = touched.into_iter().filter(|&id| fits(&g.env.vars[id]) && !g.env.vars[id].is_array()).collect();
    if !shared.is_empty() && g.c.chance(0.7) {
        return shared[g.pick_index(shared.len())];
    }
    let visible: Vec<VarId> = g.env.visible().into_iter().filter(|&id| fits(&g.env.vars[id])).collect();
    if !visible.is_empty() && g.c.chance(0.6) {
        return visible[g.pick_index(visible.len())];
    }
    let name = g.env.global_name("g");
    let id = g.env.declare(env::scalar(name.clone(), Ty::Int, Storage::Global));
    g.feature(Feature::GlobalScalar);
    let v = g.c.range(-50, 50) as i32;
    items.push(Item::Decl(build::decl(false, BType::Int, &name, vec![], Some(InitVal::Expr(build::int(v))))));
    id
}

/// A visible rank-1 global `int` array (preferably one another callee touches), or a new
/// one declared into `items`.
fn global_int_array(g: &mut Gen, items: &mut Vec<Item>) -> VarId {
    let fits = |v: &env::Var| v.storage == Storage::Global && v.dims.len() == 1 && v.dims[0] >= 2 && v.ty == Ty::Int && !v.is_const && !v.read_only;
    let shared: Vec<VarId> = touched_globals(g).into_iter().filter(|&id| fits(&g.env.vars[id])).collect();
    if !shared.is_empty() && g.c.chance(0.7) {
        return shared[g.pick_index(shared.len())];
    }
    let visible: Vec<VarId> = g.env.visible().into_iter().filter(|&id| fits(&g.env.vars[id])).collect();
    if !visible.is_empty() && g.c.chance(0.5) {
        return visible[g.pick_index(visible.len())];
    }
    let name = g.env.global_name("ga");
    let len = g.c.range(4, 16) as u32;
    let id = g.env.declare(env::array(name.clone(), Ty::Int, vec![len], Storage::Global));
    g.feature(Feature::GlobalArray);
    g.feature(Feature::Array1);
    items.push(Item::Decl(build::decl(false, BType::Int, &name, vec![build::int(len as i32)], None)));
    id
}

/// Globals the effect callees so far touch.
fn touched_globals(g: &Gen) -> Vec<VarId> {
    g.env
        .funcs
        .iter()
        .filter_map(|f| match f.effect?.touch {
            Touch::Global(id) | Touch::GlobalArray(id) => Some(id),
            _ => None,
        })
        .collect()
}

/// The length every caller of an array-parameter callee guarantees: the length of a
/// visible `int` array's last dimension (so calls can pass it or its rows), or a small one.
fn param_len(g: &mut Gen) -> u32 {
    let lens: Vec<u32> = g
        .env
        .visible()
        .into_iter()
        .filter(|&id| g.env.vars[id].is_array() && g.env.vars[id].ty == Ty::Int && !g.env.vars[id].is_const)
        .filter_map(|id| g.env.vars[id].dims.last().copied())
        .filter(|&d| d >= 2)
        .collect();
    if !lens.is_empty() && g.c.chance(0.7) {
        let d = lens[g.pick_index(lens.len())];
        return g.c.range(2, (d as i64).min(12)) as u32;
    }
    g.c.range(2, 8) as u32
}

/// One effect callee (see the module documentation), with the globals it needs.
fn effect_callee(g: &mut Gen, touch: Touch, writes: bool, items: &mut Vec<Item>) {
    let big = g.cfg.knobs.recursion == 0 || g.c.chance(0.35);
    let name = g.env.global_name("f");
    let max_depth = g.c.range(2, (g.cfg.max_recursion_depth as i64).clamp(2, 6)) as u32;
    // Parameters: the depth (recursive), the array and its index (array parameter), the
    // index into a global array, and one scalar.
    let mut params: Vec<Param> = Vec::new();
    let p = |i: usize| format!("p{i}");
    if !big {
        params.push(Param { name: p(params.len()), ty: Ty::Int, kind: ParamKind::Depth });
    }
    let len = match touch {
        Touch::Param(_) => param_len(g),
        Touch::GlobalArray(id) => g.env.vars[id].dims[0],
        _ => 0,
    };
    let touch = match touch {
        Touch::Param(_) => {
            let at = params.len();
            params.push(Param { name: p(at), ty: Ty::Int, kind: ParamKind::Array { inner: vec![], min_len: len } });
            params.push(Param { name: p(at + 1), ty: Ty::Int, kind: ParamKind::Length { array: at } });
            g.feature(Feature::ArrayParam);
            g.feature(Feature::LengthParam);
            Touch::Param(at)
        }
        Touch::GlobalArray(id) => {
            params.push(Param { name: p(params.len()), ty: Ty::Int, kind: ParamKind::Count { max: len } });
            Touch::GlobalArray(id)
        }
        t => t,
    };
    params.push(Param { name: p(params.len()), ty: Ty::Int, kind: ParamKind::Scalar });
    let ret = if writes && g.c.chance(0.5) { None } else { Some(Ty::Int) };
    let effect = Effect { touch, writes, big };
    let shape = Shape { name: name.clone(), params: params.clone(), effect, len, ret };
    let (body, cost) = if big { big_body(g, &shape) } else { recursive_body(g, &shape, max_depth) };
    let (globals_used, globals_written) = match touch {
        Touch::Global(id) => (vec![], if writes { vec![id] } else { vec![] }),
        Touch::GlobalArray(id) => (vec![id], if writes { vec![id] } else { vec![] }),
        _ => (vec![], vec![]),
    };
    g.feature(Feature::OutlinedCallee);
    g.feature(if big { Feature::BigCallee } else { Feature::RecursiveCallee });
    g.feature(if writes { Feature::ImpureFunction } else { Feature::PureFunction });
    if !big {
        g.feature(Feature::Recursion);
    }
    if ret.is_none() {
        g.feature(Feature::VoidFunction);
    }
    let ast_params = params
        .iter()
        .map(|p| ast::Param {
            ty: BType::Int,
            name: build::ident(&p.name),
            array_dims: matches!(p.kind, ParamKind::Array { .. }).then(Vec::new),
            span: Span::DUMMY,
        })
        .collect();
    g.env.funcs.push(Func {
        name: name.clone(),
        ret,
        params,
        pure: !writes,
        cost,
        max_depth: (!big).then_some(max_depth),
        globals_used,
        ret_bound: FLOAT_VAR_BOUND,
        globals_written,
        effect: Some(effect),
    });
    items.push(Item::Func(FuncDef { ret: ret.map(Ty::btype), name: build::ident(&name), params: ast_params, body: build::block(body), span: Span::DUMMY }));
}

/// What a callee's body is built from.
struct Shape {
    name: String,
    params: Vec<Param>,
    effect: Effect,
    /// Length of the touched array (0 for scalars and nothing).
    len: u32,
    ret: Option<Ty>,
}

impl Shape {
    fn param(&self, kind: fn(&ParamKind) -> bool) -> Option<&str> {
        self.params.iter().find(|p| kind(&p.kind)).map(|p| p.name.as_str())
    }

    fn depth(&self) -> &str {
        self.param(|k| matches!(k, ParamKind::Depth)).unwrap_or("p0")
    }

    fn scalar(&self) -> &str {
        self.param(|k| matches!(k, ParamKind::Scalar)).unwrap_or("p0")
    }

    /// The touched element at `offset` from the index parameter (`a[(i + offset) % L]`),
    /// for array effects; the global's name for a scalar one.
    fn cell(&self, g: &Gen, offset: Option<Expr>) -> Option<Expr> {
        let index = |i: &str| {
            let i = match offset.clone() {
                Some(o) => build::bin(BinaryOp::Add, build::var(i), o),
                None => build::var(i),
            };
            build::bin(BinaryOp::Mod, i, build::int(self.len as i32))
        };
        match self.effect.touch {
            Touch::Nothing => None,
            Touch::Global(id) => Some(build::var(&g.env.vars[id].name)),
            Touch::Param(at) => {
                let i = self.param(|k| matches!(k, ParamKind::Length { .. }))?;
                Some(build::elem(&self.params[at].name, vec![index(i)]))
            }
            Touch::GlobalArray(id) => {
                let i = self.param(|k| matches!(k, ParamKind::Count { .. }))?;
                Some(build::elem(&g.env.vars[id].name, vec![index(i)]))
            }
        }
    }

    /// An lvalue of [`Shape::cell`].
    fn cell_lval(&self, g: &Gen, offset: Option<Expr>) -> Option<ast::LVal> {
        match self.cell(g, offset)?.kind {
            ast::ExprKind::LVal(lv) => Some(lv),
            _ => None,
        }
    }

    /// The self-call's arguments: the depth minus one, the array and indices passed on, the
    /// scalar changed by `step`.
    fn self_args(&self, step: Expr) -> Vec<Expr> {
        self.params
            .iter()
            .map(|p| match p.kind {
                ParamKind::Depth => build::bin(BinaryOp::Sub, build::var(&p.name), build::int(1)),
                ParamKind::Scalar => step.clone(),
                _ => build::var(&p.name),
            })
            .collect()
    }
}

/// A recursive body whose self-call is never a tail call, and its cost per call.
fn recursive_body(g: &mut Gen, s: &Shape, max_depth: u32) -> (Vec<BlockItem>, u64) {
    let (d, x) = (s.depth().to_string(), s.scalar().to_string());
    let base_test = if g.c.chance(0.5) {
        build::bin(BinaryOp::Le, build::var(&d), build::int(0))
    } else {
        build::bin(BinaryOp::Lt, build::var(&d), build::int(1))
    };
    let k = g.c.range(2, 9) as i32;
    let step = build::bin([BinaryOp::Add, BinaryOp::Mul][g.pick_index(2)], build::var(&x), build::int(k));
    let call = build::call(&s.name, s.self_args(step));
    let mut items = Vec::new();
    let cell = s.cell(g, None);
    match (s.effect.writes, s.ret) {
        (false, _) => {
            // int f(d, .., x) { if (d <= 0) return CELL + x; return CELL % 1009 + f(d - 1, .., x + k) * 3; }
            let base = match &cell {
                Some(c) => build::bin(BinaryOp::Add, c.clone(), build::var(&x)),
                None => build::bin(BinaryOp::Add, build::bin(BinaryOp::Mul, build::var(&x), build::int(3)), build::int(1)),
            };
            items.push(build::stmt(build::if_stmt(base_test, build::ret(Some(base)), None)));
            let scaled = build::bin(BinaryOp::Mul, call, build::int(g.c.range(2, 5) as i32));
            let own = match s.cell(g, Some(build::var(&d))) {
                Some(c) => build::bin(BinaryOp::Mod, c, build::int(1009)),
                None => build::bin(BinaryOp::Sub, build::var(&x), build::var(&d)),
            };
            let sum = if g.c.chance(0.5) { build::bin(BinaryOp::Add, own, scaled) } else { build::bin(BinaryOp::Sub, scaled, own) };
            items.push(build::stmt(build::ret(Some(sum))));
        }
        (true, ret) => {
            // if (d <= 0) { CELL = CELL + x; return [CELL % 1000]; } CELL' = CELL + x - d;
            // [int r =] f(d - 1, .., x * k); CELL = CELL - d; return [r + d];
            let lv = s.cell_lval(g, None).expect("a writer touches memory");
            let cell = cell.expect("a writer touches memory");
            let mut base = vec![build::stmt(build::assign(lv.clone(), build::bin(BinaryOp::Add, cell.clone(), build::var(&x))))];
            base.push(build::stmt(build::ret(ret.map(|_| build::bin(BinaryOp::Mod, cell.clone(), build::int(1000))))));
            items.push(build::stmt(build::if_stmt(base_test, build::block_stmt(base), None)));
            let before = s.cell_lval(g, Some(build::var(&d))).expect("memory");
            let before_value = build::bin(BinaryOp::Sub, build::bin(BinaryOp::Add, cell.clone(), build::var(&x)), build::var(&d));
            items.push(build::stmt(build::assign(before, before_value)));
            let r = "r".to_string();
            match ret {
                Some(_) => items.push(build::int_decl(&r, call)),
                None => items.push(build::stmt(build::expr_stmt(call))),
            }
            // After the self-call: it is not a tail call.
            items.push(build::stmt(build::assign(lv, build::bin(BinaryOp::Sub, cell, build::var(&d)))));
            match ret {
                Some(_) => items.push(build::stmt(build::ret(Some(build::bin(BinaryOp::Add, build::var(&r), build::var(&d)))))),
                None => {}
            }
        }
    }
    let per_call = INVOCATION_COST + s.params.len() as u64;
    (items, per_call.saturating_mul(max_depth as u64 + 1))
}

/// A straight-line body over the inliner's budget, with its effect in the middle, and its
/// cost per call.
fn big_body(g: &mut Gen, s: &Shape) -> (Vec<BlockItem>, u64) {
    let x = s.scalar().to_string();
    let t = "t".to_string();
    let mut items = vec![build::int_decl(&t, build::var(&x))];
    let updates = g.c.range(BIG_BODY_UPDATES.0, BIG_BODY_UPDATES.1);
    let effect_at = g.c.range(updates / 3, 2 * updates / 3);
    for u in 0..updates {
        let c = g.c.range(3, 97) as i32 | 1;
        let value = match g.c.below(3) {
            0 => build::bin(BinaryOp::Add, build::bin(BinaryOp::Mul, build::var(&t), build::int(c)), build::var(&x)),
            1 => build::bin(BinaryOp::Sub, build::var(&t), build::bin(BinaryOp::Mul, build::var(&x), build::int(c))),
            _ => build::bin(BinaryOp::Add, build::bin(BinaryOp::Mul, build::var(&t), build::var(&x)), build::int(c)),
        };
        items.push(build::stmt(build::assign_var(&t, value)));
        if u == effect_at {
            match (s.effect.writes, s.cell_lval(g, None), s.cell(g, None)) {
                (true, Some(lv), Some(cell)) => {
                    let value = build::bin(BinaryOp::Add, cell, build::bin(BinaryOp::Mod, build::var(&t), build::int(1000)));
                    items.push(build::stmt(build::assign(lv, value)));
                }
                (false, _, Some(cell)) => items.push(build::stmt(build::assign_var(&t, build::bin(BinaryOp::Add, build::var(&t), cell)))),
                _ => {}
            }
        }
    }
    if s.ret.is_some() {
        items.push(build::stmt(build::ret(Some(build::var(&t)))));
    }
    (items, UPDATE_COST * updates as u64 + 8)
}

/// An effect loop (see the module documentation), or an assignment when no effect callee
/// is callable here.
pub(super) fn effect_loop(g: &mut Gen) -> Vec<BlockItem> {
    let ctx = ECtx { impure_ok: !g.fcx.pure, ..stmt_ctx(g) };
    let callees: Vec<usize> = callable(g, None, ctx).into_iter().filter(|&f| g.env.funcs[f].effect.is_some()).collect();
    if callees.is_empty() {
        return g.statements.assignment(g);
    }
    let first = callees[g.pick_index(callees.len())];
    let touch = g.env.funcs[first].effect.map_or(Touch::Nothing, |e| e.touch);
    // The callees that touch the same memory (any array-parameter callee can be handed the
    // same array, if it is long enough).
    let same: Vec<usize> = callees
        .iter()
        .copied()
        .filter(|&f| match (g.env.funcs[f].effect.map(|e| e.touch), touch) {
            (Some(Touch::Param(_)), Touch::Param(_)) => true,
            (Some(a), b) => a == b,
            _ => false,
        })
        .collect();
    let mut out = Vec::new();
    let memory = match touch {
        Touch::Nothing => Memory::None,
        Touch::Global(id) | Touch::GlobalArray(id) => {
            if g.env.lookup(&g.env.vars[id].name) != Some(id) {
                // A local hides the global here: its callees still touch it, the loop cannot.
                Memory::None
            } else if g.env.vars[id].is_array() {
                Memory::Array { id, len: g.env.vars[id].dims[0] }
            } else {
                Memory::Scalar(id)
            }
        }
        Touch::Param(_) => {
            let need = same.iter().map(|&f| array_len_of(&g.env.funcs[f])).max().unwrap_or(1);
            array_for(g, need, &mut out)
        }
    };
    g.feature(Feature::EffectLoop);
    let acc = g.env.local_name("acc");
    out.push(build::int_decl(&acc, build::int(0)));
    let acc_id = g.env.declare(env::scalar(acc.clone(), Ty::Int, Storage::Local));
    // The accumulator belongs to the loop's events: nothing else assigns it meanwhile.
    g.env.lock(acc_id);
    out.extend(counted_loop_opening(g, &mut |g, counter| events(g, &same, memory, &acc, counter)));
    g.env.unlock(acc_id);
    if !g.fcx.pure {
        g.use_helper(Helper::Mix);
        g.work.charge(Helper::Mix.cost());
        out.push(build::stmt(build::expr_stmt(build::call(Helper::Mix.name(), vec![build::var(&acc)]))));
    }
    out
}

/// The memory an effect loop's accesses go to.
#[derive(Clone, Copy, Debug)]
enum Memory {
    None,
    Scalar(VarId),
    /// An `int` array whose last dimension has at least `len` elements (row 0 of a
    /// multi-dimensional one).
    Array { id: VarId, len: u32 },
}

/// The guaranteed length of an array-parameter callee's array.
fn array_len_of(f: &Func) -> u32 {
    f.params
        .iter()
        .find_map(|p| match p.kind {
            ParamKind::Array { min_len, .. } => Some(min_len),
            _ => None,
        })
        .unwrap_or(1)
}

/// An `int` array of at least `need` elements for array-parameter callees: a visible local
/// one, else any visible one, else a local declared into `out`.
fn array_for(g: &mut Gen, need: u32, out: &mut Vec<BlockItem>) -> Memory {
    let writes = !g.fcx.pure;
    let rank1 = |id: VarId| g.env.vars[id].dims.len() == 1 && g.env.vars[id].locks == 0 && g.env.lookup(&g.env.vars[id].name) == Some(id);
    let views: Vec<VarId> = array_views(g, Ty::Int, &[], need, writes).into_iter().map(|(id, _)| id).filter(|&id| rank1(id)).collect();
    let locals: Vec<VarId> = views.iter().copied().filter(|&id| g.env.vars[id].storage == Storage::Local).collect();
    if !locals.is_empty() && g.c.chance(0.8) {
        let id = locals[g.pick_index(locals.len())];
        return Memory::Array { id, len: g.env.vars[id].dims[0] };
    }
    if !views.is_empty() && g.c.chance(0.4) {
        let id = views[g.pick_index(views.len())];
        return Memory::Array { id, len: g.env.vars[id].dims[0] };
    }
    let len = need.max(g.c.range(2, 8) as u32);
    let name = g.env.local_name("la");
    let elems: Vec<InitVal> = (0..len).map(|_| InitVal::Expr(build::int(g.c.range(-9, 99) as i32))).collect();
    g.work.charge(len as u64);
    out.push(BlockItem::Decl(build::decl(false, BType::Int, &name, vec![build::int(len as i32)], Some(build::init_list(elems)))));
    let id = g.env.declare(env::array(name, Ty::Int, vec![len], Storage::Local));
    g.feature(Feature::LocalArray);
    Memory::Array { id, len }
}

/// One access or call of an effect loop.
#[derive(Clone, Debug, PartialEq)]
enum Event {
    Load,
    Store,
    /// A call of function `f`, with these arguments (`None`: fresh ones).
    Call(usize, Option<Vec<Expr>>),
}

/// The loop's opening: loads and stores of `memory` and calls of `callees`, with at least
/// one call; when a reader and a writer of the same memory are both callable, often
/// `read; write; read` (a read-only call beside a writing one), and around a reading call of
/// an array often a store on each side.
fn events(g: &mut Gen, callees: &[usize], memory: Memory, acc: &str, counter: VarId) -> Vec<BlockItem> {
    let writes_ok = !g.fcx.pure;
    let writable = match memory {
        Memory::Scalar(id) | Memory::Array { id, .. } => {
            let v = &g.env.vars[id];
            v.locks == 0 && !v.read_only && !v.is_const && (writes_ok || v.storage == Storage::Local)
        }
        Memory::None => false,
    };
    let readable = !matches!(memory, Memory::None);
    let readers: Vec<usize> = callees.iter().copied().filter(|&f| g.env.funcs[f].effect.is_some_and(|e| !e.writes)).collect();
    let writers: Vec<usize> = callees
        .iter()
        .copied()
        .filter(|&f| g.env.funcs[f].effect.is_some_and(|e| e.writes) && writes_ok && writer_allowed(g, f, memory))
        .collect();
    let pick = |g: &mut Gen, from: &[usize]| from[g.pick_index(from.len())];
    let mut plan: Vec<Event> = Vec::new();
    if !readers.is_empty() && !writers.is_empty() && g.c.chance(0.6) {
        // The two reads with the same arguments: merging them, or hoisting the first out of
        // the loop, is what the write between them forbids.
        let r = pick(g, &readers);
        let w = pick(g, &writers);
        let args = arguments(g, r, memory, acc, counter, true);
        plan.extend([Event::Call(r, Some(args.clone())), Event::Call(w, None), Event::Call(r, Some(args))]);
        g.feature(Feature::ReadCallBesideWrite);
    } else if matches!(memory, Memory::Array { .. }) && writable && !readers.is_empty() && g.c.chance(0.6) {
        let r = pick(g, &readers);
        plan.extend([Event::Store, Event::Call(r, None), Event::Store]);
        g.feature(Feature::CallBetweenStores);
    }
    let extra = g.c.range(1, 4);
    for _ in 0..extra {
        let choice = g.c.weighted(&[
            if readable { 3 } else { 0 },
            if writable { 3 } else { 0 },
            if readers.is_empty() { 0 } else { 3 },
            if writers.is_empty() { 0 } else { 3 },
        ]);
        let e = match choice {
            0 => Event::Load,
            1 => Event::Store,
            2 => Event::Call(pick(g, &readers), None),
            _ => Event::Call(pick(g, &writers), None),
        };
        let at = g.c.range(0, plan.len() as i64) as usize;
        plan.insert(at, e);
    }
    if !plan.iter().any(|e| matches!(e, Event::Call(..))) {
        let all: Vec<usize> = readers.iter().chain(&writers).copied().collect();
        if all.is_empty() {
            return Vec::new();
        }
        plan.push(Event::Call(pick(g, &all), None));
    }
    // A big callee escapes inlining only with several call sites: call it twice.
    let called = |f: usize, plan: &[Event]| plan.iter().filter(|e| matches!(e, Event::Call(h, _) if *h == f)).count();
    let big: Vec<usize> = plan.iter().filter_map(|e| match e {
        Event::Call(f, _) if g.env.funcs[*f].effect.is_some_and(|e| e.big) => Some(*f),
        _ => None,
    }).collect();
    for f in big {
        if called(f, &plan) < 2 {
            plan.push(Event::Call(f, None));
        }
    }
    let mut out = Vec::new();
    for e in plan {
        if let Some(s) = event(g, e, memory, acc, counter) {
            out.push(build::stmt(s));
        }
    }
    out
}

/// Whether writer `f` may be called in a loop over `memory` here: the global it writes must
/// not be locked (an enclosing loop relies on nothing writing it).
fn writer_allowed(g: &Gen, f: usize, memory: Memory) -> bool {
    match g.env.funcs[f].effect.map(|e| e.touch) {
        Some(Touch::Global(id) | Touch::GlobalArray(id)) => g.env.vars[id].locks == 0,
        Some(Touch::Param(_)) => match memory {
            Memory::Array { id, .. } => {
                let v = &g.env.vars[id];
                v.locks == 0 && !v.read_only && !v.is_const
            }
            _ => false,
        },
        _ => true,
    }
}

/// An index into `0..len` from the counter (`i % len`) or a constant.
fn index_expr(g: &mut Gen, counter: VarId, len: u32) -> Expr {
    g.work.charge(2);
    if g.c.chance(0.6) {
        build::bin(BinaryOp::Mod, g.env.read(counter), build::int(len as i32))
    } else {
        build::int(g.c.range(0, len as i64 - 1) as i32)
    }
}

/// The statement of one event (`None` when the budget cannot afford a call).
fn event(g: &mut Gen, e: Event, memory: Memory, acc: &str, counter: VarId) -> Option<Stmt> {
    let cell = |g: &mut Gen| -> Option<(String, Vec<Expr>)> {
        match memory {
            Memory::None => None,
            Memory::Scalar(id) => Some((g.env.vars[id].name.clone(), vec![])),
            Memory::Array { id, len } => {
                let i = index_expr(g, counter, len);
                Some((g.env.vars[id].name.clone(), vec![i]))
            }
        }
    };
    let add_to_acc = |value: Expr| build::assign_var(acc, build::bin(BinaryOp::Add, build::var(acc), value));
    match e {
        Event::Load => {
            let (name, idx) = cell(g)?;
            g.work.charge(3);
            Some(add_to_acc(build::elem(&name, idx)))
        }
        Event::Store => {
            let (name, idx) = cell(g)?;
            if let Memory::Scalar(id) | Memory::Array { id, .. } = memory {
                g.note_global_write(id);
            }
            g.work.charge(4);
            let value = build::bin(BinaryOp::Add, build::bin(BinaryOp::Mod, build::var(acc), build::int(1000)), g.env.read(counter));
            Some(build::assign(build::lval(&name, idx), value))
        }
        Event::Call(f, args) => {
            let func = g.env.funcs[f].clone();
            if !g.work.affordable(func.cost + func.params.len() as u64 + 1) {
                return None;
            }
            let args = match args {
                Some(args) => args,
                None => {
                    let invariant = g.c.chance(0.4);
                    arguments(g, f, memory, acc, counter, invariant)
                }
            };
            for id in &func.globals_written {
                g.note_global_write(*id);
            }
            if let (true, Memory::Array { id, .. }) = (func.effect.is_some_and(|e| e.writes && matches!(e.touch, Touch::Param(_))), memory) {
                g.note_global_write(id);
            }
            g.work.charge(func.cost + func.params.len() as u64 + 1);
            g.feature(Feature::Call);
            let call = build::call(&func.name, args);
            Some(match func.ret {
                Some(_) => add_to_acc(call),
                None => build::expr_stmt(call),
            })
        }
    }
}

/// The arguments of a call of effect callee `f` in an effect loop: loop-invariant ones
/// (constants and the memory) when `invariant`, else mostly varying with the counter.
fn arguments(g: &mut Gen, f: usize, memory: Memory, acc: &str, counter: VarId, invariant: bool) -> Vec<Expr> {
    let func = g.env.funcs[f].clone();
    func.params.iter().map(|p| argument(g, &func, p, memory, acc, counter, invariant)).collect()
}

/// The argument for parameter `p` of effect callee `f` in an effect loop.
fn argument(g: &mut Gen, f: &Func, p: &Param, memory: Memory, acc: &str, counter: VarId, invariant: bool) -> Expr {
    g.work.charge(1);
    let constant = |g: &mut Gen, len: u32| build::int(g.c.range(0, len as i64 - 1) as i32);
    match &p.kind {
        ParamKind::Depth => {
            let max = f.max_depth.unwrap_or(1) as i32;
            if invariant || g.c.chance(0.5) {
                build::int(g.c.range(1, max as i64) as i32)
            } else {
                build::bin(BinaryOp::Mod, g.env.read(counter), build::int(max + 1))
            }
        }
        ParamKind::Array { .. } => match memory {
            Memory::Array { id, .. } => build::var(&g.env.vars[id].name),
            _ => build::int(0),
        },
        ParamKind::Length { array } => {
            let len = match &f.params[*array].kind {
                ParamKind::Array { min_len, .. } => *min_len,
                _ => 1,
            };
            if invariant { constant(g, len + 1) } else { index_expr(g, counter, len + 1) }
        }
        ParamKind::Count { max } => {
            if invariant { constant(g, max + 1) } else { index_expr(g, counter, max + 1) }
        }
        ParamKind::Scalar if invariant => build::int(g.c.range(-20, 20) as i32),
        ParamKind::Scalar => match g.c.below(3) {
            0 => g.env.read(counter),
            1 => build::var(acc),
            _ => build::int(g.c.range(-20, 20) as i32),
        },
    }
}
