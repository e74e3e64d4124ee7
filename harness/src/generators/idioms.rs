//! Shapes chosen from the preconditions of the optimisation passes, so that the passes get
//! work (and get it wrong, if they are wrong) on executed code:
//! * global reads in loops (`hoist-global-loads`, `licm`): a loop whose body reads a global
//!   scalar or a fixed element of a global array that nothing in the function writes — or
//!   writes only right before leaving the loop (`if (..) { g = e; break; }`: no path from
//!   that write leads back to the read, which `hoist-global-loads` can hoist and `licm`
//!   cannot) — or, as the counter-case, reads it around a call that writes it;
//! * loop-invariant local arrays (`array-hoist`): `int k[3] = {a, b, c};` declared inside a
//!   loop with the same contents every iteration, then read — sometimes with one element
//!   that changes, which must stay in the loop;
//! * updates that change nothing (`trivial-phi` after `instcombine`): `x = x + 0;`, the same
//!   value assigned on both sides of an `if`;
//! * register pressure: many int and float values computed before a call and all used after
//!   it.
//!
//! Each is switched by a knob (`hoist_shapes`, `array_hoist`, `trivial_phis`,
//! `register_pressure`); straight-line loops with recurrences are in `loops.rs`.

use super::build;
use super::env::{self, ParamKind, Storage, Ty, VarId};
use super::features::Feature;
use super::prelude::Helper;
use super::state::{ECtx, GExpr, Gen};
use sysyc::frontend::ast::{BinaryOp, BlockItem, Expr, InitVal};

/// Statements a loop body opens with, requested by an idiom before the loop is generated.
#[derive(Clone, Debug)]
pub(super) enum LoopIdiom {
    /// Reads of global `var` (a scalar, or the element at constant indices `at` of an
    /// array); with `clobber`, a call of that function (which writes the global) between two
    /// reads; with `exit_write`, a write of the same word followed by `break`.
    GlobalReads {
        var: VarId,
        at: Vec<i32>,
        clobber: Option<usize>,
        exit_write: bool,
    },
    /// A local array with loop-invariant contents, then reads of it.
    InvariantArray,
    /// A counted loop with the triangular skip (`kernels.rs`).
    TriangleInner,
}

/// Largest array parameter length of a function an invariant local array is passed to (the
/// array then has at least that many elements).
const WRITER_MAX_LEN: u32 = 16;

impl Gen<'_> {
    /// A counted loop reading a global (see [`LoopIdiom::GlobalReads`]).
    pub(super) fn global_read_loop(&mut self) -> Vec<BlockItem> {
        let globals: Vec<VarId> = self
            .env
            .visible()
            .into_iter()
            .filter(|&id| {
                let v = &self.env.vars[id];
                v.storage == Storage::Global && v.readable() && !v.dims.contains(&0)
            })
            .collect();
        if globals.is_empty() {
            return self.counted_loop();
        }
        // Hoisting needs a global nothing wrote since the function was entered.
        let unwritten: Vec<VarId> = globals
            .iter()
            .copied()
            .filter(|id| !self.fcx.globals_written.contains(id))
            .collect();
        let var = if !unwritten.is_empty() && self.c.chance(0.8) {
            unwritten[self.pick_index(unwritten.len())]
        } else {
            globals[self.pick_index(globals.len())]
        };
        let writers: Vec<usize> = if self.fcx.pure {
            Vec::new()
        } else {
            let ctx = ECtx {
                impure_ok: true,
                stable: false,
                depth: self.cfg.max_expr_depth,
            };
            self.callable(None, ctx)
                .into_iter()
                .filter(|&f| self.env.funcs[f].globals_written.contains(&var))
                .collect()
        };
        let clobber = if !writers.is_empty() && self.c.chance(0.4) {
            self.feature(Feature::GlobalClobberedInLoop);
            Some(writers[self.pick_index(writers.len())])
        } else {
            self.feature(Feature::HoistableGlobalLoad);
            None
        };
        // Nothing in the loop may assign the global by name while hoisting is possible.
        let lock = clobber.is_none();
        if lock {
            self.env.lock(var);
        }
        // A write just before leaving the loop: only in a loop no other loop repeats, in a
        // function (`main` writes its globals first), of a global it may write.
        let v = &self.env.vars[var];
        let exit_write = lock
            && self.fcx.loops.is_empty()
            && !self.fcx.is_main
            && !self.fcx.pure
            && !v.read_only
            && !v.is_const
            && self.c.chance(0.8);
        if exit_write {
            self.feature(Feature::GlobalWrittenAtLoopExit);
        }
        let at = self.env.vars[var]
            .dims
            .clone()
            .iter()
            .map(|&d| self.c.range(0, d as i64 - 1) as i32)
            .collect();
        self.fcx.affinity.push(var);
        let out = self.loop_opening_with(LoopIdiom::GlobalReads {
            var,
            at,
            clobber,
            exit_write,
        });
        self.fcx.affinity.pop();
        if lock {
            self.env.unlock(var);
        }
        out
    }

    /// A counted loop opening with a loop-invariant local array.
    pub(super) fn invariant_array_loop(&mut self) -> Vec<BlockItem> {
        self.loop_opening_with(LoopIdiom::InvariantArray)
    }

    /// A counted loop whose body opens with the statements of `idiom`.
    pub(super) fn loop_opening_with(&mut self, idiom: LoopIdiom) -> Vec<BlockItem> {
        self.fcx.pending_idiom = Some(idiom);
        let out = self.counted_loop();
        self.fcx.pending_idiom = None;
        out
    }

    /// The statements of `idiom` at the start of a loop body whose counter is `counter`
    /// (in the body's scope).
    pub(super) fn idiom_statements(&mut self, idiom: LoopIdiom, counter: VarId) -> Vec<BlockItem> {
        match idiom {
            LoopIdiom::GlobalReads {
                var,
                at,
                clobber,
                exit_write,
            } => self.global_reads(var, &at, clobber, exit_write, counter),
            LoopIdiom::InvariantArray => self.invariant_array(counter),
            LoopIdiom::TriangleInner => self.triangle_inner(),
        }
    }

    /// A read of global `var`: the scalar, or the element at constant indices `at`.
    fn global_read(&mut self, var: VarId, at: &[i32]) -> GExpr {
        let v = &self.env.vars[var];
        let (name, ty, dims) = (v.name.clone(), v.ty, v.dims.clone());
        self.charge(2);
        let idx: Vec<Expr> = at.iter().map(|&i| build::int(i)).collect();
        let e = build::elem(&name, idx);
        match ty {
            Ty::Int => GExpr::int(
                e,
                self.env.vars[var].range.filter(|_| dims.is_empty()),
                false,
                2,
            ),
            Ty::Float => GExpr::float(e, env::FLOAT_VAR_BOUND, false, 2),
        }
    }

    /// `acc = acc + g * i;` [`f(...);`] `acc = acc - g;` [`if (i == c) { g = e; break; }`]
    /// for a fresh local accumulator `acc`.
    fn global_reads(
        &mut self,
        var: VarId,
        at: &[i32],
        clobber: Option<usize>,
        exit_write: bool,
        counter: VarId,
    ) -> Vec<BlockItem> {
        let mut out = Vec::new();
        let ty = self.env.vars[var].ty;
        let acc = self.accumulator(ty, &mut out);
        let i = self.env.read(counter);
        let first = self.global_read(var, at);
        let update = |g: &mut Self, value: Expr, op: BinaryOp| {
            let sum = build::bin(op, build::var(&acc), value);
            match ty {
                Ty::Int => build::assign_var(&acc, sum),
                Ty::Float => {
                    let bound = 2.0 * env::FLOAT_VAR_BOUND * 1.0e4;
                    let clamped = g.clamp(GExpr::float(sum, bound, false, 2));
                    build::assign_var(&acc, clamped.e)
                }
            }
        };
        let scaled = build::bin(BinaryOp::Mul, first.e, i);
        out.push(build::stmt(update(self, scaled, BinaryOp::Add)));
        if let Some(f) = clobber {
            let ctx = ECtx {
                impure_ok: true,
                stable: false,
                depth: self.cfg.max_expr_depth,
            };
            let call = self.call_user(f, ctx);
            out.push(build::stmt(build::expr_stmt(call.e)));
        }
        let second = self.global_read(var, at);
        out.push(build::stmt(update(self, second.e, BinaryOp::Sub)));
        self.charge(8);
        if exit_write {
            let (lo, hi) = self.env.vars[counter].range.unwrap_or((0, 0));
            let c = self.c.range(lo + (hi - lo) / 2, hi);
            let test = build::bin(BinaryOp::Eq, self.env.read(counter), build::int(c as i32));
            let ctx = ECtx {
                impure_ok: false,
                stable: false,
                depth: 2,
            };
            let value = self.value_for(ty, ctx);
            let name = self.env.vars[var].name.clone();
            let target = build::lval(&name, at.iter().map(|&i| build::int(i)).collect());
            self.note_global_write(var);
            self.charge(4);
            out.push(build::stmt(build::if_stmt(
                test,
                build::block_stmt(vec![
                    build::stmt(build::assign(target, value.e)),
                    build::stmt(build::brk()),
                ]),
                None,
            )));
        }
        out
    }

    /// A fresh local accumulator of type `ty` starting at 0 (its declaration goes to `out`).
    fn accumulator(&mut self, ty: Ty, out: &mut Vec<BlockItem>) -> String {
        let name = self.local_name("acc");
        self.env
            .declare(env::scalar(name.clone(), ty, Storage::Local));
        let zero = match ty {
            Ty::Int => build::int(0),
            Ty::Float => build::float(0.0),
        };
        out.push(BlockItem::Decl(build::decl(
            false,
            ty.btype(),
            &name,
            vec![],
            Some(InitVal::Expr(zero)),
        )));
        name
    }

    /// `int k[d] = {a, b, ...};` with loop-invariant elements (constants, variables the loop
    /// does not assign), sometimes one element depending on the counter, sometimes then passed
    /// to a function that may write it; then `acc = acc + k[i % d];`.
    fn invariant_array(&mut self, counter: VarId) -> Vec<BlockItem> {
        self.feature(Feature::InvariantLocalArray);
        let mut out = Vec::new();
        let floor = (0..self.env.funcs.len()).filter_map(|fi| self.writer_len(fi)).max();
        let to_writer = !self.fcx.pure && floor.is_some() && self.c.chance(0.6);
        let floor = if to_writer { floor.unwrap_or(0) } else { 0 };
        let d = (self.c.range(2, 8) as u32).max(floor);
        let name = self.local_name("k");
        let invariant: Vec<VarId> = self
            .env
            .visible()
            .into_iter()
            .filter(|&id| {
                let v = &self.env.vars[id];
                v.is_scalar()
                    && v.ty == Ty::Int
                    && v.readable()
                    && id != counter
                    && (v.is_const || v.read_only || v.locks > 0 && v.storage != Storage::Global)
            })
            .collect();
        let varying_at = if self.c.chance(0.3) {
            Some(self.c.below(d as u64) as usize)
        } else {
            None
        };
        let mut elems = Vec::new();
        for k in 0..d as usize {
            let e = if varying_at == Some(k) {
                self.charge(2);
                build::bin(
                    BinaryOp::Mul,
                    self.env.read(counter),
                    build::int(self.c.range(2, 9) as i32),
                )
            } else if !invariant.is_empty() && self.c.chance(0.5) {
                let id = invariant[self.pick_index(invariant.len())];
                self.charge(1);
                self.env.read(id)
            } else {
                self.int_literal().e
            };
            elems.push(InitVal::Expr(e));
        }
        self.charge(d as u64);
        self.env
            .declare(env::array(name.clone(), Ty::Int, vec![d], Storage::Local));
        out.push(BlockItem::Decl(build::decl(
            false,
            sysyc::frontend::ast::BType::Int,
            &name,
            vec![build::int(d as i32)],
            Some(build::init_list(elems)),
        )));
        if to_writer {
            out.extend(self.pass_to_writer());
        }
        let acc = self.accumulator(Ty::Int, &mut out);
        let index = self.index(
            d,
            ECtx {
                impure_ok: false,
                stable: false,
                depth: 2,
            },
        );
        self.charge(4);
        out.push(build::stmt(build::assign_var(
            &acc,
            build::bin(
                BinaryOp::Add,
                build::var(&acc),
                build::elem(&name, vec![index.e]),
            ),
        )));
        out
    }

    /// Whether `f` may write an `int` array parameter of at most [`WRITER_MAX_LEN`] elements;
    /// the longest such parameter's length.
    fn writer_len(&self, fi: usize) -> Option<u32> {
        let f = &self.env.funcs[fi];
        let lens = f.params.iter().filter_map(|p| match &p.kind {
            ParamKind::Array { inner, min_len } if p.ty == Ty::Int && inner.is_empty() => Some(*min_len),
            _ => None,
        });
        lens.max().filter(|&len| !f.pure && len <= WRITER_MAX_LEN)
    }

    /// Right after a loop's invariant array `int k[d] = {...};` is declared (`d` at least
    /// every [`Self::writer_len`]), a call of a function that may write an `int` array
    /// parameter, with local arrays preferred as arguments (usually `k`): the initialisation
    /// then does not repeat the same contents each iteration, so `array-hoist` must leave it
    /// in the loop.
    fn pass_to_writer(&mut self) -> Option<BlockItem> {
        let ctx = ECtx {
            impure_ok: true,
            ..self.stmt_ctx()
        };
        let writers: Vec<usize> =
            self.callable(None, ctx).into_iter().filter(|&fi| self.writer_len(fi).is_some()).collect();
        if writers.is_empty() {
            return None;
        }
        let fi = writers[self.pick_index(writers.len())];
        self.feature(Feature::ArrayToWriter);
        let call = self.call_user_with(fi, ctx, true);
        Some(build::stmt(build::expr_stmt(call.e)))
    }

    /// An update that leaves a local scalar unchanged, or the same value on both sides of an
    /// `if`: `x = x + 0;`, `x = (x + k) - k;`, `x = x * 1;`, `if (c) x = e; else x = e;`.
    pub(super) fn trivial_update(&mut self) -> Vec<BlockItem> {
        let targets: Vec<VarId> = self
            .assignable()
            .into_iter()
            .filter(|&id| {
                let v = &self.env.vars[id];
                v.is_scalar() && v.storage != Storage::Global
            })
            .collect();
        if targets.is_empty() {
            return self.assign_stmt(true);
        }
        self.feature(Feature::TrivialUpdate);
        let id = targets[self.pick_index(targets.len())];
        let (name, ty) = (self.env.vars[id].name.clone(), self.env.vars[id].ty);
        let x = || build::var(&name);
        self.charge(4);
        let same = |g: &mut Self| -> Expr {
            match (ty, g.c.below(4)) {
                (Ty::Int, 0) => build::bin(BinaryOp::Add, x(), build::int(0)),
                (Ty::Int, 1) => {
                    let k = g.c.range(1, 1000) as i32;
                    build::bin(
                        BinaryOp::Sub,
                        build::bin(BinaryOp::Add, x(), build::int(k)),
                        build::int(k),
                    )
                }
                (Ty::Int, 2) => build::bin(BinaryOp::Mul, x(), build::int(1)),
                (Ty::Float, 0) => build::bin(BinaryOp::Mul, x(), build::float(1.0)),
                _ => x(),
            }
        };
        let ctx = self.stmt_ctx();
        if self.fcx.straight || self.c.chance(0.4) {
            let e = same(self);
            return vec![build::stmt(build::assign_var(&name, e))];
        }
        let (cond, _) = self.branch_cond(ctx, [1, 3, 2, 2]);
        let (then_e, else_e) = if self.c.chance(0.5) {
            (same(self), same(self))
        } else {
            let v = self.value_for(
                ty,
                ECtx {
                    impure_ok: false,
                    ..ctx
                },
            );
            (v.e.clone(), v.e)
        };
        vec![build::stmt(build::if_stmt(
            cond,
            build::assign_var(&name, then_e),
            Some(build::assign_var(&name, else_e)),
        ))]
    }

    /// `int r0 = e0, ...; float q0 = ..., ...;` then a call, then every value used:
    /// `mix(r0 + r1 * 3 - ...); mixf(q0 + ...);`.
    pub(super) fn pressure_block(&mut self) -> Vec<BlockItem> {
        self.feature(Feature::RegisterPressure);
        let mut out = Vec::new();
        let ctx = ECtx {
            impure_ok: false,
            stable: false,
            depth: 2,
        };
        let ints = self.c.range(6, 14);
        let floats = if self.cfg.knobs.float > 0 {
            self.c.range(0, 10)
        } else {
            0
        };
        let mut names: Vec<(String, Ty)> = Vec::new();
        for k in 0..ints + floats {
            let ty = if k < ints { Ty::Int } else { Ty::Float };
            let name = self.local_name(if ty == Ty::Int { "r" } else { "q" });
            let id = self
                .env
                .declare(env::scalar(name.clone(), ty, Storage::Local));
            self.env.vars[id].init = false;
            let v = self.value_for(ty, ctx);
            self.env.vars[id].init = true;
            self.charge(1);
            out.push(BlockItem::Decl(build::decl(
                false,
                ty.btype(),
                &name,
                vec![],
                Some(InitVal::Expr(v.e)),
            )));
            names.push((name, ty));
        }
        // The call in between: a user function if one is callable, else output.
        let call_ctx = ECtx {
            impure_ok: !self.fcx.pure,
            ..self.stmt_ctx()
        };
        let calls = self.callable(None, call_ctx);
        if !calls.is_empty() {
            let f = calls[self.pick_index(calls.len())];
            let g = self.call_user(f, call_ctx);
            out.push(build::stmt(build::expr_stmt(g.e)));
        } else if !self.fcx.pure {
            self.use_helper(Helper::Mix);
            self.charge(Helper::Mix.cost());
            out.push(build::stmt(build::expr_stmt(build::call(
                Helper::Mix.name(),
                vec![build::var(&names[0].0)],
            ))));
        }
        if self.fcx.pure {
            // No mix here: fold the values into a local the function already has.
            return out;
        }
        for ty in [Ty::Int, Ty::Float] {
            let mut sum: Option<Expr> = None;
            for (k, (n, t)) in names.iter().enumerate() {
                if *t != ty {
                    continue;
                }
                let term = if ty == Ty::Int && k % 3 == 1 {
                    build::bin(BinaryOp::Mul, build::var(n), build::int(3))
                } else {
                    build::var(n)
                };
                sum = Some(match sum {
                    None => term,
                    Some(s) if k % 2 == 0 => build::bin(BinaryOp::Sub, s, term),
                    Some(s) => build::bin(BinaryOp::Add, s, term),
                });
            }
            let Some(sum) = sum else { continue };
            let h = if ty == Ty::Int {
                Helper::Mix
            } else {
                Helper::MixF
            };
            self.use_helper(h);
            self.charge(h.cost() + names.len() as u64);
            out.push(build::stmt(build::expr_stmt(build::call(
                h.name(),
                vec![sum],
            ))));
        }
        out
    }
}
