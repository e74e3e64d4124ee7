//! Whole programs: functions, the checksum epilogue, and the order of items.
//!
//! Layout: `int checksum;`, the helpers the program uses, then globals and functions
//! interleaved (a function sees the globals declared before it), then `checksum_globals()`
//! which folds every global into the checksum, then `main`. `main` ends by folding its own
//! top-level locals, printing the checksum, and returning 0 or (a function of) the checksum.
//!
//! Termination of calls: SysY has no prototypes, so a function can only call functions
//! defined before it and itself; the call graph is a DAG plus self-loops. A recursive
//! function's first parameter is a depth `d` that no statement assigns; it returns when
//! `d <= 0` and calls itself only with `d - 1` or `d - 2`, at most `s` times per invocation
//! (no self-call inside a loop). Callers pass a depth of at most `D`, chosen after the body
//! is known so that `(s^(D+1) - 1) / (s - 1)` invocations fit the function's budget.

use super::build;
use super::env::{self, FLOAT_VAR_BOUND, Func, Param, ParamKind, Storage, Ty, VarId};
use super::features::Feature;
use super::prelude::{CHECKSUM, Helper};
use super::state::{ECtx, FnCtx, GExpr, Gen, RecCtx};
use sysyc::frontend::ast::{self, BinaryOp, BlockItem, CompUnit, FuncDef, InitVal, Item, Span};

/// Smallest work budget of a generated function (room for a few statements).
const MIN_FUNCTION_BUDGET: u64 = 400;

/// Bounds of the driver loop's trip count, and the least work one iteration may cost.
const MIN_DRIVER_TRIPS: u64 = 12;
const MAX_DRIVER_TRIPS: u64 = 400;
const MIN_ITERATION_WORK: u64 = 4_000;

/// Name of `main`'s local holding the driver loop's trip count (read from the input).
pub(super) const DRIVER_LIMIT: &str = "n_iter";

/// Name of the function folding the globals into the checksum.
pub(super) const CHECKSUM_GLOBALS: &str = "checksum_globals";

/// Chance that a recursive function returning a value plans to hand its tail self-call a
/// local array (see `Gen::tail_local`), when it has an array parameter of its return type
/// and the `aliasing` knob lets self-calls pass other arrays at all.
const TAIL_LOCAL_CHANCE: f64 = 0.8;

impl Gen<'_> {
    /// Generates the whole compilation unit.
    pub(super) fn program(&mut self) -> CompUnit {
        let n_globals = self.c.range(0, self.cfg.max_globals as i64) as u32;
        let first = n_globals - n_globals / 3;
        self.global_decls(first);
        let mut later = n_globals - first;
        let k = &self.cfg.knobs;
        let any_functions = k.pure_functions > 0 || k.impure_functions > 0;
        let n_funcs = if any_functions {
            self.c.range(0, self.cfg.max_functions as i64) as u32
        } else {
            0
        };
        // `main` calls the functions from its driver loop: each function's budget is a share
        // of what one iteration may cost.
        self.driver_trips = self.driver_trip_count();
        let per_iteration = self.cfg.work_budget / self.driver_trips;
        let share = per_iteration / n_funcs.max(1) as u64;
        for _ in 0..n_funcs {
            if later > 0 && self.c.chance(0.3) {
                self.global_decls(1);
                later -= 1;
            }
            let budget = self
                .c
                .range((share / 2) as i64, (share * 3 / 2) as i64)
                .max(MIN_FUNCTION_BUDGET as i64) as u64;
            self.function(budget);
        }
        self.global_decls(later);
        let fold_cost = self.checksum_function();
        self.main_function(fold_cost);

        let mut items = vec![Item::Decl(build::decl(
            false,
            ast::BType::Int,
            CHECKSUM,
            Vec::new(),
            if self.c.chance(0.5) {
                Some(InitVal::Expr(build::int(0)))
            } else {
                None
            },
        ))];
        for h in Helper::ALL {
            if self.helpers.contains(&h) {
                items.extend(h.items());
            }
        }
        items.append(&mut self.items);
        CompUnit { items }
    }

    fn start_function(&mut self, pure: bool, ret: Option<Ty>, budget: u64) {
        self.fcx = FnCtx {
            pure,
            ret,
            budget,
            mult: 1,
            ..FnCtx::default()
        };
        self.pool.clear();
        self.cond_pool.clear();
    }

    /// The planned tail-call local (`RecCtx::tail_plan`): the tail self-call passes the
    /// local array declared for that parameter on, right after
    /// `local[0].. = local[0].. % 1000 + param[0].. % 1000 + d;` (`fclamp(local + param + d)`
    /// for floats; `d` the depth, at most 24), which reads the parameter after the local's
    /// initialiser ran; the base case returns `param[0].. % 1000` (`fclamp(param[0]..)`), so
    /// a correct program returns a sum over every activation's depth. A `tail-recursion` that
    /// let the loop reuse the frame's array for both would have the callee's initialiser
    /// overwrite what it was handed, dropping the earlier activations' terms (the depth term
    /// makes that visible where arrays hold zeros).
    fn tail_local(&mut self, items: &mut Vec<BlockItem>) {
        let Some(rec) = self.fcx.rec.as_ref() else { return };
        let Some(pi) = rec.tail_plan else { return };
        let Some((_, local)) = rec.locals.iter().find(|(i, _)| *i == pi) else { return };
        let (local, param, depth) = (local.clone(), rec.params[pi].clone(), rec.params[0].name.clone());
        let Some(id) = self.env.lookup(&local) else { return };
        let rank = self.env.vars[id].dims.len();
        let at = |name: &str| build::elem(name, vec![build::int(0); rank]);
        let value = match param.ty {
            Ty::Float => {
                let sum = build::bin(BinaryOp::Add, at(&local), at(&param.name));
                let sum = build::bin(BinaryOp::Add, sum, build::var(&depth));
                self.clamp(GExpr::float(sum, 3.0 * FLOAT_VAR_BOUND, false, 4)).e
            }
            _ => {
                self.charge(5);
                let low = |name: &str| build::bin(BinaryOp::Mod, at(name), build::int(1000));
                let sum = build::bin(BinaryOp::Add, low(&local), low(&param.name));
                build::bin(BinaryOp::Add, sum, build::var(&depth))
            }
        };
        items.push(build::stmt(build::assign(build::lval(&local, vec![build::int(0); rank]), value)));
        self.charge(1);
        self.feature(Feature::TailCallLocal);
        if let Some(rec) = &mut self.fcx.rec {
            rec.tail_local = Some((pi, local));
        }
    }

    /// `param[0].. % 1000` for an `int` array parameter, `fclamp(param[0]..)` for a float one.
    fn low_first_elem(&mut self, param: &Param) -> ast::Expr {
        let rank = match &param.kind {
            ParamKind::Array { inner, .. } => 1 + inner.len(),
            _ => 0,
        };
        let first = build::elem(&param.name, vec![build::int(0); rank]);
        self.charge(3);
        match param.ty {
            Ty::Float => self.clamp(GExpr::float(first, FLOAT_VAR_BOUND, false, 2)).e,
            _ => build::bin(BinaryOp::Mod, first, build::int(1000)),
        }
    }

    /// One generated function, appended to the program and made callable.
    fn function(&mut self, budget: u64) {
        let k = self.cfg.knobs.clone();
        let pure = match (k.pure_functions > 0, k.impure_functions > 0) {
            (true, true) => {
                self.c
                    .weighted(&[k.pure_functions as u32, k.impure_functions as u32])
                    == 0
            }
            (pure, _) => pure,
        };
        let floats = k.float > 0;
        let ret = match self
            .c
            .weighted(&[5, if pure { 0 } else { 2 }, if floats { 2 } else { 0 }])
        {
            1 => None,
            2 => Some(Ty::Float),
            _ => Some(Ty::Int),
        };
        let recursive = self.knob(k.recursion);
        let name = self.global_name("f");
        let (params, affinity) = self.params(recursive, budget);

        let body_budget = if recursive {
            (budget / 16).max(200)
        } else {
            budget
        };
        self.start_function(pure, ret, body_budget);
        self.fcx.affinity = affinity;
        self.push_scope();
        let mut ast_params = Vec::new();
        for p in &params {
            ast_params.push(self.declare_param(p, &params));
        }
        let mut items = Vec::new();
        if recursive {
            // The base case comes first, before any self-call can be generated.
            let depth_name = params[0].name.clone();
            let test = if self.c.chance(0.5) {
                build::bin(BinaryOp::Le, build::var(&depth_name), build::int(0))
            } else {
                build::bin(BinaryOp::Lt, build::var(&depth_name), build::int(1))
            };
            // A planned tail-call local (see `tail_local`): the base case returns what the
            // parameter it will be passed holds, so the values handed down are observed.
            let tail_plan = ret
                .filter(|_| k.aliasing > 0 && self.c.chance(TAIL_LOCAL_CHANCE))
                .and_then(|ty| params.iter().position(|p| p.ty == ty && matches!(p.kind, ParamKind::Array { .. })));
            let r = match tail_plan {
                Some(pi) => build::ret(Some(self.low_first_elem(&params[pi]))),
                None => self.return_value(),
            };
            let r = if self.c.chance(0.5) {
                r
            } else {
                build::block_stmt(vec![build::stmt(r)])
            };
            items.push(build::stmt(build::if_stmt(test, r, None)));
            let max_sites = self.c.range(1, 2) as u32;
            self.fcx.rec = Some(RecCtx {
                name: name.clone(),
                ret,
                params: params.clone(),
                pure,
                sites: 0,
                max_sites,
                locals: Vec::new(),
                tail_plan,
                tail_local: None,
            });
            // Sometimes a local array shaped like an array parameter: the self-calls may pass
            // it on (see `self_call`), handing the callee memory of this activation.
            for (pi, p) in params.iter().enumerate() {
                if let ParamKind::Array { inner, min_len } = &p.kind
                    && (tail_plan == Some(pi) || self.c.chance(f64::from(k.aliasing) / 100.0))
                {
                    let mut dims = vec![*min_len];
                    dims.extend(inner);
                    let decl = self.local_array_with_dims(p.ty, dims);
                    let local = decl.defs[0].name.name.clone();
                    if let Some(rec) = &mut self.fcx.rec {
                        rec.locals.push((pi, local));
                    }
                    items.push(BlockItem::Decl(decl));
                }
            }
        }
        items.extend(self.stmts_in_scope(self.cfg.max_block_stmts.max(2)));
        // A recursive function often ends in a self tail call (`return f(d - 1, ..);`, or the
        // call as a void function's last statement): what `tail-recursion` turns into a loop.
        let ctx = self.stmt_ctx();
        let tail_call = recursive && self.self_call_possible_for(ret, ctx) && self.c.chance(0.9);
        if tail_call {
            self.tail_local(&mut items);
            let call = self.self_call(ctx);
            self.charge(1);
            self.feature(Feature::TailSelfCall);
            items.push(build::stmt(match ret {
                Some(_) => build::ret(Some(call.e)),
                None => build::expr_stmt(call.e),
            }));
        } else if ret.is_some() {
            items.push(build::stmt(self.return_value()));
        } else if self.c.chance(0.2) {
            items.push(build::stmt(build::ret(None)));
        }
        self.pop_scope();

        let per_call = self.fcx.cost.saturating_add(params.len() as u64 + 2);
        let (cost, max_depth) = match &self.fcx.rec {
            Some(r) => {
                let (calls, depth) = recursion_depth(
                    r.sites as u64,
                    per_call,
                    budget,
                    self.cfg.max_recursion_depth,
                );
                (calls.saturating_mul(per_call), Some(depth))
            }
            None => (per_call, None),
        };
        if recursive {
            self.feature(Feature::Recursion);
        }
        self.feature(if pure {
            Feature::PureFunction
        } else {
            Feature::ImpureFunction
        });
        match ret {
            None => self.feature(Feature::VoidFunction),
            Some(Ty::Float) => self.feature(Feature::FloatFunction),
            _ => {}
        }
        let ints = params
            .iter()
            .filter(|p| p.ty == Ty::Int && p.kind == ParamKind::Scalar)
            .count();
        let floats_n = params
            .iter()
            .filter(|p| p.ty == Ty::Float && p.kind == ParamKind::Scalar)
            .count();
        if ints > 4 {
            self.feature(Feature::ManyIntParams);
        }
        if floats_n > 16 {
            self.feature(Feature::ManyFloatParams);
        }
        let globals_used = std::mem::take(&mut self.fcx.globals_used);
        let globals_written = std::mem::take(&mut self.fcx.globals_written);
        self.env.funcs.push(Func {
            name: name.clone(),
            ret,
            params,
            pure,
            cost,
            max_depth,
            globals_used,
            ret_bound: FLOAT_VAR_BOUND,
            globals_written,
        });
        self.fcx = FnCtx::default();
        self.items.push(Item::Func(FuncDef {
            ret: ret.map(Ty::btype),
            name: build::ident(&name),
            params: ast_params,
            body: build::block(items),
            span: Span::DUMMY,
        }));
    }

    /// Parameter list of a new function whose calls may cost `budget`.
    fn params(&mut self, recursive: bool, budget: u64) -> (Vec<Param>, Vec<VarId>) {
        let k = self.cfg.knobs.clone();
        let floats = k.float > 0;
        let mut kinds: Vec<(Ty, bool)> = Vec::new(); // (type, is array)
        if self.knob(k.many_params) {
            for _ in 0..self.c.range(5, 10) {
                kinds.push((Ty::Int, false));
            }
            let nf = if floats && self.c.chance(0.6) {
                self.c.range(17, 20)
            } else if floats {
                self.c.range(0, 3)
            } else {
                0
            };
            for _ in 0..nf {
                kinds.push((Ty::Float, false));
            }
            // Interleave so that int and float argument registers fill in mixed order.
            for i in (1..kinds.len()).rev() {
                let j = self.c.below(i as u64 + 1) as usize;
                kinds.swap(i, j);
            }
        } else {
            for _ in 0..self.c.range(0, self.cfg.max_params as i64) {
                let ty = if floats && self.c.chance(0.3) {
                    Ty::Float
                } else {
                    Ty::Int
                };
                let array = k.arrays > 0 && self.knob(k.array_params);
                kinds.push((ty, array));
            }
        }
        let mut params = Vec::new();
        let mut affinity = Vec::new();
        let mut next = 0;
        let mut fresh = |params: &Vec<Param>| -> String {
            loop {
                let n = format!("p{next}");
                next += 1;
                if !params.iter().any(|p: &Param| p.name == n) {
                    return n;
                }
            }
        };
        if recursive {
            let name = fresh(&params);
            params.push(Param {
                name,
                ty: Ty::Int,
                kind: ParamKind::Depth,
            });
        }
        for (ty, array) in kinds {
            let name = self.param_name(&params).unwrap_or_else(|| fresh(&params));
            if array {
                let (inner, min_len, source) = self.array_param_shape(ty);
                // The body then tends to use the global its parameter was shaped after, and
                // callers tend to pass that global: aliasing.
                if let Some(id) = source.filter(|_| self.knob(k.aliasing)) {
                    affinity.push(id);
                }
                let index = params.len();
                params.push(Param {
                    name,
                    ty,
                    kind: ParamKind::Array { inner, min_len },
                });
                if self.knob(k.length_params) {
                    let name = fresh(&params);
                    params.push(Param {
                        name,
                        ty: Ty::Int,
                        kind: ParamKind::Length { array: index },
                    });
                }
            } else {
                params.push(Param {
                    name,
                    ty,
                    kind: ParamKind::Scalar,
                });
            }
        }
        // A trip count for the body's loops, small enough that a loop of a few statements
        // fits the budget.
        let max_trips =
            (budget / (4 * super::stmt::STMT_COST * 4)).min(self.cfg.max_trip_count as u64);
        if max_trips >= 2 && self.knob(k.trip_params) {
            let max = self.c.range(2, max_trips as i64) as u32;
            let name = fresh(&params);
            let at = self
                .c
                .range(usize::from(recursive) as i64, params.len() as i64)
                as usize;
            for p in &mut params {
                if let ParamKind::Length { array } = &mut p.kind
                    && *array >= at
                {
                    *array += 1;
                }
            }
            params.insert(
                at,
                Param {
                    name,
                    ty: Ty::Int,
                    kind: ParamKind::Count { max },
                },
            );
        }
        (params, affinity)
    }

    /// With the shadowing knob, a parameter may take the name of a global it then hides.
    fn param_name(&mut self, params: &[Param]) -> Option<String> {
        if !self.knob(self.cfg.knobs.shadowing / 2) {
            return None;
        }
        let globals: Vec<String> = self
            .env
            .visible()
            .into_iter()
            .map(|id| self.env.vars[id].name.clone())
            .filter(|n| !params.iter().any(|p| &p.name == n))
            .collect();
        if globals.is_empty() {
            return None;
        }
        self.feature(Feature::Shadowing);
        Some(globals[self.pick_index(globals.len())].clone())
    }

    /// `(inner dims, guaranteed length)` for an array parameter: mostly the shape of a
    /// visible global array (so calls can pass it), otherwise a fresh shape.
    fn array_param_shape(&mut self, ty: Ty) -> (Vec<u32>, u32, Option<VarId>) {
        let globals: Vec<VarId> = self
            .env
            .visible()
            .into_iter()
            .filter(|&id| {
                let v = &self.env.vars[id];
                v.is_array() && v.ty == ty && !v.is_const
            })
            .collect();
        let (dims, level, source) = if !globals.is_empty() && self.c.chance(0.8) {
            let id = globals[self.pick_index(globals.len())];
            let dims = self.env.vars[id].dims.clone();
            // Deeper levels let callers pass rows (`a[i]`).
            let level = if dims.len() > 1 && self.c.chance(0.6) {
                self.c.range(1, dims.len() as i64 - 1) as usize
            } else {
                self.c.below(dims.len() as u64) as usize
            };
            (dims, level, Some(id))
        } else {
            (self.array_dims(), 0, None)
        };
        let inner = dims[level + 1..].to_vec();
        // Often a short guaranteed length, so that many arrays and rows qualify as arguments.
        let max_len = if self.c.chance(0.5) {
            (dims[level] as i64).min(4)
        } else {
            dims[level] as i64
        };
        let min_len = self.c.range(1, max_len) as u32;
        self.feature(Feature::ArrayParam);
        if !inner.is_empty() {
            self.feature(Feature::MultiDimArrayParam);
        }
        (inner, min_len, source)
    }

    /// Declares a parameter in the function scope and returns its AST.
    fn declare_param(&mut self, p: &Param, all: &[Param]) -> ast::Param {
        let array_dims = match &p.kind {
            ParamKind::Array { inner, min_len } => {
                let mut dims = vec![*min_len];
                dims.extend(inner);
                self.env
                    .declare(env::array(p.name.clone(), p.ty, dims, Storage::Param));
                Some(inner.iter().map(|&d| build::int(d as i32)).collect())
            }
            ParamKind::Length { array } => {
                let id = self
                    .env
                    .declare(env::scalar(p.name.clone(), Ty::Int, Storage::Param));
                let len = match &all[*array].kind {
                    ParamKind::Array { min_len, .. } => *min_len as i64,
                    _ => 0,
                };
                self.env.lock(id);
                self.env.vars[id].range = Some((0, len));
                self.feature(Feature::LengthParam);
                None
            }
            ParamKind::Depth => {
                let id = self
                    .env
                    .declare(env::scalar(p.name.clone(), Ty::Int, Storage::Param));
                self.env.lock(id);
                None
            }
            ParamKind::Count { max } => {
                let id = self
                    .env
                    .declare(env::scalar(p.name.clone(), Ty::Int, Storage::Param));
                self.env.lock(id);
                self.env.vars[id].range = Some((0, *max as i64));
                self.feature(Feature::TripParam);
                None
            }
            ParamKind::Scalar => {
                self.env
                    .declare(env::scalar(p.name.clone(), p.ty, Storage::Param));
                None
            }
        };
        ast::Param {
            ty: p.ty.btype(),
            name: build::ident(&p.name),
            array_dims,
            span: Span::DUMMY,
        }
    }

    /// `void checksum_globals()` folding every global variable; returns the work of one call
    /// (0 if there is nothing to fold and no function was emitted).
    fn checksum_function(&mut self) -> u64 {
        let globals: Vec<VarId> = self
            .env
            .visible()
            .into_iter()
            .rev()
            .filter(|&id| {
                let v = &self.env.vars[id];
                v.storage == Storage::Global && !v.is_const
            })
            .collect();
        if globals.is_empty() {
            return 0;
        }
        self.start_function(false, None, u64::MAX);
        self.push_scope();
        let mut items = Vec::new();
        for id in globals {
            if self.env.vars[id].is_scalar() {
                items.push(build::stmt(self.mix_of(id)));
            } else {
                items.extend(self.fold_array(id));
            }
        }
        self.pop_scope();
        let cost = self.fcx.cost + 2;
        self.fcx = FnCtx::default();
        self.items.push(Item::Func(FuncDef {
            ret: None,
            name: build::ident(CHECKSUM_GLOBALS),
            params: Vec::new(),
            body: build::block(items),
            span: Span::DUMMY,
        }));
        cost
    }

    /// Loops folding every element of an array into the checksum.
    fn fold_array(&mut self, id: VarId) -> Vec<BlockItem> {
        let (name, ty) = (self.env.vars[id].name.clone(), self.env.vars[id].ty);
        let h = if ty == Ty::Float {
            Helper::MixF
        } else {
            Helper::Mix
        };
        self.use_helper(h);
        self.for_each_element(id, &mut |g, idx| {
            g.charge(h.cost() + 2);
            build::expr_stmt(build::call(h.name(), vec![build::elem(&name, idx)]))
        })
    }

    /// The driver loop's trip count: log-uniform in `MIN_DRIVER_TRIPS..=MAX_DRIVER_TRIPS`,
    /// fewer when the budget would leave an iteration less than `MIN_ITERATION_WORK`.
    fn driver_trip_count(&mut self) -> u64 {
        let cap =
            (self.cfg.work_budget / MIN_ITERATION_WORK).clamp(MIN_DRIVER_TRIPS, MAX_DRIVER_TRIPS);
        let (lo, hi) = ((MIN_DRIVER_TRIPS as f64).ln(), (cap as f64).ln());
        // 1000 steps between the bounds of the logarithm.
        let x = lo + (hi - lo) * self.c.below(1001) as f64 / 1000.0;
        (x.exp().round() as u64).clamp(MIN_DRIVER_TRIPS, cap)
    }

    /// `main`'s first statements: `int n_iter = getint();` (the driver loop's trip count,
    /// locked, its value known to the generator), a few seed values read into locals, and
    /// perhaps some global scalars read from the input — so that no value of the program is
    /// known at compile time.
    fn input_prologue(&mut self) -> Vec<BlockItem> {
        self.feature(Feature::GetInt);
        let n = self.driver_trips as i32;
        self.input.int(n, false);
        let id = self
            .env
            .declare(env::scalar(DRIVER_LIMIT.into(), Ty::Int, Storage::Local));
        self.env.lock(id);
        self.env.vars[id].range = Some((n as i64, n as i64));
        let mut items = vec![BlockItem::Decl(build::decl(
            false,
            ast::BType::Int,
            DRIVER_LIMIT,
            Vec::new(),
            Some(InitVal::Expr(build::call("getint", Vec::new()))),
        ))];
        for _ in 0..self.c.range(1, 3) {
            let v = self.random_input_int();
            self.input.int(v, self.c.chance(0.3));
            let name = self.local_name("s");
            self.env
                .declare(env::scalar(name.clone(), Ty::Int, Storage::Local));
            items.push(BlockItem::Decl(build::decl(
                false,
                ast::BType::Int,
                &name,
                Vec::new(),
                Some(InitVal::Expr(build::call("getint", Vec::new()))),
            )));
        }
        if self.cfg.knobs.float > 0 && self.c.chance(0.5) {
            self.feature(Feature::GetFloat);
            let v = self.random_input_float();
            self.input.float(v, self.c.chance(0.4), false);
            let name = self.local_name("s");
            self.env
                .declare(env::scalar(name.clone(), Ty::Float, Storage::Local));
            items.push(BlockItem::Decl(build::decl(
                false,
                ast::BType::Float,
                &name,
                Vec::new(),
                Some(InitVal::Expr(build::call("getfloat", Vec::new()))),
            )));
        }
        let globals: Vec<VarId> = self
            .assignable()
            .into_iter()
            .filter(|&id| {
                let v = &self.env.vars[id];
                v.storage == Storage::Global && v.is_scalar()
            })
            .collect();
        for id in globals {
            if !self.c.chance(0.5) {
                continue;
            }
            let (name, ty) = (self.env.vars[id].name.clone(), self.env.vars[id].ty);
            let call = if ty == Ty::Int {
                let v = self.random_input_int();
                self.input.int(v, false);
                "getint"
            } else {
                let v = self.random_input_float();
                self.input.float(v, self.c.chance(0.4), false);
                self.feature(Feature::GetFloat);
                "getfloat"
            };
            self.note_global_write(id);
            items.push(build::stmt(build::assign_var(
                &name,
                build::call(call, Vec::new()),
            )));
        }
        self.charge(items.len() as u64 * 5);
        items
    }

    /// Local arrays of `main` for the array parameters no visible array can be passed to,
    /// so that every function can be called from the driver loop.
    fn argument_arrays(&mut self) -> Vec<BlockItem> {
        let mut items = Vec::new();
        for fi in 0..self.env.funcs.len() {
            let f = self.env.funcs[fi].clone();
            for p in &f.params {
                if let ParamKind::Array { inner, min_len } = &p.kind
                    && self.array_views(p.ty, inner, *min_len, !f.pure).is_empty()
                {
                    let mut dims = vec![*min_len];
                    dims.extend(inner);
                    items.push(BlockItem::Decl(self.local_array_with_dims(p.ty, dims)));
                }
            }
        }
        items
    }

    /// Calls, at the current point, of every function (the latest-defined first): calls
    /// from other functions and earlier in `main` may sit in branches that never run.
    pub(super) fn calls_of_every_function(&mut self) -> Vec<BlockItem> {
        let mut out = Vec::new();
        for f in (0..self.env.funcs.len()).rev() {
            let func = &self.env.funcs[f];
            // An array argument may have become unavailable (a declaration hiding its name).
            let satisfiable = func.params.iter().all(|p| match &p.kind {
                ParamKind::Array { inner, min_len } => !self
                    .array_views(p.ty, inner, *min_len, !func.pure)
                    .is_empty(),
                _ => true,
            });
            if !satisfiable {
                continue;
            }
            // Often a second call site: a function called once is inlined whatever its
            // size, and then nothing of it (its frame, its calls, its loads of globals)
            // reaches the back end as a function.
            let sites = if self.c.chance(0.5) { 2 } else { 1 };
            for _ in 0..sites {
                let ctx = ECtx {
                    impure_ok: true,
                    stable: false,
                    depth: self.cfg.max_expr_depth,
                };
                let g = self.call_user(f, ctx);
                out.push(build::stmt(build::expr_stmt(g.e)));
            }
        }
        out
    }

    fn main_function(&mut self, fold_cost: u64) {
        let budget = self
            .cfg
            .work_budget
            .saturating_sub(fold_cost)
            .max(self.cfg.work_budget / 10);
        self.start_function(false, Some(Ty::Int), budget);
        self.fcx.is_main = true;
        self.push_scope();
        self.fcx.main_top = Some(self.env.depth());
        // The input: the driver loop's trip count, seed values, perhaps globals.
        let mut items = self.input_prologue();
        let limit = self.env.lookup(DRIVER_LIMIT);
        // Arrays the functions need as arguments, then a few statements that run once.
        items.extend(self.argument_arrays());
        let setup = self.c.range(1, 3);
        for _ in 0..setup {
            if self.fcx.stmts >= self.cfg.max_function_stmts / 3
                || !self.affordable(super::stmt::STMT_COST)
            {
                break;
            }
            items.extend(self.stmt());
        }
        // The driver loop: the functions are called from it, with arguments that vary from
        // one iteration to the next.
        if let Some(limit) = limit {
            items.extend(self.driver_loop(limit, self.driver_trips));
        }
        // A statement or two after it (a global written only there is written on no path
        // into the loop: `hoist-global-loads` may hoist its loads, `const-arrays` may not
        // fold them).
        for _ in 0..self.c.range(0, 2) {
            if !self.affordable(super::stmt::STMT_COST) {
                break;
            }
            items.extend(self.stmt());
        }
        // The epilogue: everything observable goes into the checksum.
        self.fcx.budget = u64::MAX;
        self.fcx.cost = self.fcx.cost.saturating_add(fold_cost);
        if fold_cost > 0 {
            items.push(build::stmt(build::expr_stmt(build::call(
                CHECKSUM_GLOBALS,
                Vec::new(),
            ))));
        }
        for id in self.env.current_scope() {
            let v = &self.env.vars[id];
            if !v.readable() {
                continue;
            }
            if v.is_scalar() {
                items.push(build::stmt(self.mix_of(id)));
            } else {
                items.extend(self.fold_array(id));
            }
        }
        self.use_helper(Helper::Mix);
        items.push(build::stmt(build::expr_stmt(build::call(
            "putint",
            vec![build::var(CHECKSUM)],
        ))));
        items.push(build::stmt(build::expr_stmt(build::call(
            "putch",
            vec![build::int(10)],
        ))));
        let status = if self.knob(self.cfg.knobs.status_checksum) {
            self.feature(Feature::StatusChecksum);
            if self.c.chance(0.5) {
                build::bin(BinaryOp::Mod, build::var(CHECKSUM), build::int(256))
            } else {
                build::var(CHECKSUM)
            }
        } else {
            build::int(0)
        };
        items.push(build::stmt(build::ret(Some(status))));
        self.pop_scope();
        self.estimated_work = self.fcx.cost;
        self.fcx = FnCtx::default();
        self.items.push(Item::Func(FuncDef {
            ret: Some(ast::BType::Int),
            name: build::ident("main"),
            params: Vec::new(),
            body: build::block(items),
            span: Span::DUMMY,
        }));
    }
}

/// For a recursive function with `sites` self-calls per invocation and `per_call` work per
/// invocation: the largest depth bound `D ≤ max_depth` (at least 1) whose worst-case number of
/// invocations `1 + s + s² + … + s^D` keeps the total within `budget`, and that number.
fn recursion_depth(sites: u64, per_call: u64, budget: u64, max_depth: u32) -> (u64, u32) {
    let invocations = |d: u32| -> u64 {
        (0..=d).fold(0u64, |acc, j| acc.saturating_add(sites.saturating_pow(j)))
    };
    let mut depth = 1;
    while depth < max_depth && invocations(depth + 1).saturating_mul(per_call) <= budget {
        depth += 1;
    }
    (invocations(depth), depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recursion_depth_respects_budget() {
        // One self-call: D + 1 invocations.
        assert_eq!(recursion_depth(1, 10, 1000, 50), (51, 50));
        assert_eq!(recursion_depth(1, 10, 45, 50), (4, 3));
        // Two self-calls: 2^(D+1) - 1 invocations.
        assert_eq!(recursion_depth(2, 10, 700, 12), (63, 5));
        // Never below depth 1, even over budget.
        assert_eq!(recursion_depth(2, 1000, 10, 12), (3, 1));
        // No self-call at all.
        assert_eq!(recursion_depth(0, 10, 100, 7), (1, 7));
    }
}
