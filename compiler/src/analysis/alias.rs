//! The memory model passes query: alias relations between memory locations and the
//! mod/ref effects of instructions, for one function.
//!
//! # Model
//! Memory is a set of disjoint *objects*: each global, and each `alloca`'s slot in each
//! activation (an `alloca` executed again in a loop reuses its slot and makes it
//! uninitialised). Every pointer addresses one object at some byte offset — pointers cannot be
//! stored in memory, so [`AddressMap`] finds, from the SSA def chains alone, the *roots* a
//! pointer may come from and its offset from a single root. Seen from inside one activation:
//!
//! * two different `alloca`s are different objects;
//! * an `alloca` of this activation is none of the globals and none of the objects behind
//!   this function's parameters (those existed before the call; only *callees* can receive
//!   pointers to our slots, through arguments);
//! * two different globals are different objects;
//! * parameter `i` points into one of the objects of [`FuncInfo::param_points_to`] — a
//!   global, or a caller's slot; it *may be the same array* as a global or as another
//!   parameter, and then nothing is known about the relative offsets.
//!
//! A [`MemLoc`] is `bytes` bytes starting at a pointer (a load or store: one 4-byte word; a
//! `memzero`: `4·words`). Two locations with the same single root are compared through the
//! difference of their offsets: a constant difference decides exactly; otherwise the largest
//! power of two dividing every coefficient of the difference gives the difference modulo that
//! power, which can still exclude overlap (`a[2i]` vs `a[2j+1]`). Everything is modulo 2³²,
//! like the address arithmetic itself.
//!
//! # Contexts: which values may be compared term by term
//! An offset like `4·%i + 8` names the value `%i` has *at the moment of the access*. Two
//! accesses executed at different times may see different values of `%i` (different loop
//! iterations), and then `a[i]` and `a[i+1]` can be the same word. Every query therefore
//! takes a [`Context`]:
//!
//! * [`Context::AcrossIterations`] — sound for *any* two executions of the two accesses within
//!   one activation of the function (different loop iterations included). Terms whose value
//!   is the same throughout an activation (parameters, and results of instructions in blocks
//!   on no CFG cycle — they execute at most once per call) are compared symbolically; any
//!   other term is treated as an unrelated unknown on each side. Use this for "does this loop
//!   write that location", LICM, and anything crossing a back edge.
//! * [`Context::SameIteration`] — assumes every SSA value both offsets mention has the *same*
//!   value at the two accesses; then all terms cancel symbolically. This holds e.g. for two
//!   accesses in one block, or when one access is reached from the other along a path that
//!   does not execute the definition of any value involved. [`super::memdep`] uses it only
//!   where that is guaranteed; prefer its queries over hand-made walks.
//!
//! Root-level facts (distinct objects) and call effects hold in both contexts.
//!
//! # Mod/ref
//! [`AliasAnalysis::mod_ref`] says whether an instruction may read or write a location: loads
//! read their word, stores and `memzero` write theirs, an `alloca` "writes" its whole slot
//! (it becomes uninitialised), and a call reads/writes whole objects as its callee's
//! [`FuncSummary`] says — the globals it names, and *the entire objects* behind the pointer
//! arguments at the positions it reads/writes through (a callee given `a[i]` may touch any
//! element of `a`). Runtime built-ins: `getarray`/`getfarray` write through their pointer,
//! `putarray`/`putfarray` read through theirs, the others touch no memory. I/O is not memory:
//! check [`FuncSummary::does_io`] (via [`AliasAnalysis::call_effects`]) to keep I/O calls in
//! order. Locations that can only be in `const` globals are never written (a store there
//! traps, so no later instruction observes it).
//!
//! # Recipes
//! * Reordering two memory instructions of one block (scheduling, sinking a store): they
//!   commute unless `alias(.., SameIteration) != No` and one of them writes; a call commutes
//!   with an access unless `mod_ref` says it reads (for a store) or writes the location — and
//!   never reorder two calls that both [`does_io`](FuncSummary::does_io).
//! * Load elimination, store-to-load forwarding: [`super::memdep::MemDepQuery::dependency`].
//! * Loop-invariant loads: the address is defined outside the loop and
//!   [`super::memdep::MemDepQuery::first_writer`] over the loop's blocks finds nothing
//!   (whether the load may then be executed speculatively is the pass's decision).
//! * Dead stores: a store is dead if a later instruction of its block [`must_overwrite`]s its
//!   location with nothing in between that [`inst_may_read`]s it (`SameIteration`), or if its
//!   location is in an `alloca` that no instruction reachable from the store may read
//!   (`AcrossIterations`; calls read an `alloca` only when it is passed to them).
//! * Calls of [`FuncSummary::is_pure`] functions with equal arguments are equal. Calls of
//!   [`FuncSummary::is_read_only`] functions with equal arguments are equal if no instruction
//!   on the way from one to the other has [`written_objects`] intersecting the first call's
//!   [`read_objects`].
//!
//! [`must_overwrite`]: AliasAnalysis::must_overwrite
//! [`inst_may_read`]: AliasAnalysis::inst_may_read
//! [`written_objects`]: AliasAnalysis::written_objects
//! [`read_objects`]: AliasAnalysis::read_objects
//!
//! # Lifetime
//! Build one [`AliasAnalysis`] per function with [`AliasAnalysis::new`]; it borrows only the
//! [`FuncInfo`], so the pass may keep mutating the function and pass it to each query.
//! Values created later are analysed on demand (see [`AddressMap`]). When the CFG changes
//! ([`Function::cfg_epoch`]) the cycle information is stale, and every instruction-defined
//! term is then treated as varying (still sound, less precise): rebuild after CFG changes.
//! The [`FuncInfo`] must describe the current module (see its snapshot rules).

use std::borrow::Cow;
use std::sync::Arc;

use cranelift_entity::{EntityRef, SecondaryMap};
use smallvec::SmallVec;

use super::cfg::ControlFlowGraph;
use super::funcinfo::{FuncInfo, FuncSummary, MemObject, ObjectSet};
use super::pointers::{AddressMap, LinearExpr, PointerInfo, Root, Roots};
use super::scc::nodes_on_cycles;
use crate::ir::{Block, FuncRef, Function, Inst, Opcode, Value, ValueDef};

/// `bytes` bytes of memory starting at address `ptr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemLoc {
    pub ptr: Value,
    pub bytes: u32,
}

impl MemLoc {
    /// The 4-byte word at `ptr` (what a load or store accesses).
    pub fn word(ptr: Value) -> MemLoc {
        MemLoc { ptr, bytes: 4 }
    }

    /// `words` words starting at `ptr` (what a `memzero` writes).
    pub fn words(ptr: Value, words: u32) -> MemLoc {
        MemLoc { ptr, bytes: words.saturating_mul(4) }
    }
}

/// How two locations relate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AliasResult {
    /// No byte in common (in the given context).
    No,
    /// May overlap, or not.
    May,
    /// Exactly the same bytes (same start, same size).
    Must,
}

/// Which executions of two accesses a query is about (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Context {
    /// Any two executions within one activation of the function.
    AcrossIterations,
    /// Executions at which every SSA value involved has the same value.
    SameIteration,
}

/// Whether an instruction may read and/or write a location.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ModRef {
    None,
    Ref,
    Mod,
    ModRef,
}

impl ModRef {
    fn from_flags(may_read: bool, may_write: bool) -> ModRef {
        match (may_read, may_write) {
            (false, false) => ModRef::None,
            (true, false) => ModRef::Ref,
            (false, true) => ModRef::Mod,
            (true, true) => ModRef::ModRef,
        }
    }

    pub fn may_read(self) -> bool {
        matches!(self, ModRef::Ref | ModRef::ModRef)
    }

    pub fn may_write(self) -> bool {
        matches!(self, ModRef::Mod | ModRef::ModRef)
    }
}

/// A load, store or `memzero` and the location it accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Access {
    pub loc: MemLoc,
    pub is_write: bool,
}

/// The objects a pointer may point into, seen from one activation of the function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reach {
    /// Any object at all.
    pub unknown: bool,
    /// Slots of this activation (`alloca` instructions), sorted.
    pub locals: SmallVec<[Inst; 2]>,
    /// Objects outside this activation: globals and callers' slots.
    pub outer: ObjectSet,
}

impl Reach {
    pub fn is_empty(&self) -> bool {
        !self.unknown && self.locals.is_empty() && self.outer.is_empty()
    }

    /// Some object may be in both.
    pub fn intersects(&self, other: &Reach) -> bool {
        if self.is_empty() || other.is_empty() {
            return false;
        }
        if self.unknown || other.unknown {
            return true;
        }
        self.locals.iter().any(|l| other.locals.binary_search(l).is_ok()) || self.outer.intersects(&other.outer)
    }

    fn add_local(&mut self, a: Inst) {
        if let Err(pos) = self.locals.binary_search(&a) {
            self.locals.insert(pos, a);
        }
    }

    fn union_with(&mut self, other: &Reach) {
        self.unknown |= other.unknown;
        for &a in &other.locals {
            self.add_local(a);
        }
        self.outer.union_with(&other.outer);
    }
}

/// What a call instruction may do, in terms of this activation's view of memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallEffects {
    /// May do I/O (calls must then stay in order with other I/O and not be removed).
    pub io: bool,
    pub reads: Reach,
    pub writes: Reach,
}

/// The difference `off(b) − off(a)` of two offsets from the same root.
enum OffsetDiff {
    /// Exactly this many bytes (mod 2³²).
    Exact(u32),
    /// Congruent to `residue` modulo `modulus` (a power of two below 2³²).
    Modular { modulus: u64, residue: u64 },
}

/// Alias and mod/ref queries for one function (see the module documentation).
pub struct AliasAnalysis<'a> {
    info: &'a FuncInfo,
    func_ref: FuncRef,
    addrs: Arc<AddressMap>,
    in_cycle: SecondaryMap<Block, bool>,
    /// Blocks that existed when `in_cycle` was computed.
    known_blocks: usize,
    cfg_epoch: u64,
}

impl<'a> AliasAnalysis<'a> {
    /// Analyses `func`, which is function `func_ref` of the module `info` describes.
    ///
    /// The CFG and address map come from `info` when it was computed from `func` as it is
    /// now (a pass usually asks for both before editing anything): most passes build an
    /// alias analysis, and computing the address map again was a good part of their time.
    pub fn new(info: &'a FuncInfo, func_ref: FuncRef, func: &Function) -> AliasAnalysis<'a> {
        let (cfg, addrs) = info.unedited_body(func_ref, func).unwrap_or_else(|| {
            let cfg = ControlFlowGraph::compute(func);
            let addrs = AddressMap::compute_with_cfg(func, &cfg);
            (Arc::new(cfg), Arc::new(addrs))
        });
        let rpo = cfg.rpo();
        let mut dense: SecondaryMap<Block, usize> = SecondaryMap::new();
        for (i, &b) in rpo.iter().enumerate() {
            dense[b] = i;
        }
        let succs: Vec<Vec<usize>> = rpo.iter().map(|&b| cfg.succs(b).iter().map(|&s| dense[s]).collect()).collect();
        let mut in_cycle = SecondaryMap::new();
        for (i, on) in nodes_on_cycles(&succs).into_iter().enumerate() {
            in_cycle[rpo[i]] = on;
        }
        AliasAnalysis {
            info,
            func_ref,
            addrs,
            in_cycle,
            known_blocks: func.num_blocks(),
            cfg_epoch: func.cfg_epoch(),
        }
    }

    pub fn func_info(&self) -> &'a FuncInfo {
        self.info
    }

    /// Roots and offset of pointer `v`.
    pub fn pointer<'s>(&'s self, func: &Function, v: Value) -> Cow<'s, PointerInfo> {
        self.addrs.pointer(func, v)
    }

    /// The linear decomposition of `i32` value `v`.
    pub fn linear(&self, func: &Function, v: Value) -> LinearExpr {
        self.addrs.linear(func, v)
    }

    /// `v` may take different values at different times within one activation (it is defined
    /// by an instruction on a CFG cycle, or its block is unknown to the analysis).
    pub fn is_varying(&self, func: &Function, v: Value) -> bool {
        let ValueDef::Inst(inst) = func.value_def(v) else { return false };
        if func.cfg_epoch() != self.cfg_epoch {
            return true;
        }
        match func.inst_block(inst) {
            Some(b) => b.index() >= self.known_blocks || self.in_cycle[b],
            None => true,
        }
    }

    /// The objects pointer `v` may point into.
    pub fn reach(&self, func: &Function, v: Value) -> Reach {
        self.reach_of_roots(&self.pointer(func, v).roots)
    }

    fn reach_of_roots(&self, roots: &Roots) -> Reach {
        let mut reach = Reach::default();
        let Some(roots) = roots.known() else {
            reach.unknown = true;
            return reach;
        };
        for &r in roots {
            match r {
                Root::Alloca(a) => reach.add_local(a),
                Root::Global(g) => {
                    reach.outer.insert(MemObject::Global(g));
                }
                Root::Param(i) => {
                    reach.outer.union_with(self.info.param_points_to(self.func_ref, i as usize));
                }
            }
        }
        reach
    }

    /// Two roots of this function may be the same object.
    fn roots_may_overlap(&self, a: Root, b: Root) -> bool {
        let pts = |i: u32| self.info.param_points_to(self.func_ref, i as usize);
        match (a, b) {
            (Root::Alloca(x), Root::Alloca(y)) => x == y,
            (Root::Alloca(_), _) | (_, Root::Alloca(_)) => false,
            (Root::Global(g), Root::Global(h)) => g == h,
            (Root::Global(g), Root::Param(i)) | (Root::Param(i), Root::Global(g)) => {
                pts(i).contains(MemObject::Global(g))
            }
            (Root::Param(i), Root::Param(j)) => i == j || pts(i).intersects(pts(j)),
        }
    }

    /// How locations `a` and `b` relate in context `ctx`.
    pub fn alias(&self, func: &Function, a: MemLoc, b: MemLoc, ctx: Context) -> AliasResult {
        if a.bytes == 0 || b.bytes == 0 {
            return AliasResult::No;
        }
        let (pa, pb) = (self.pointer(func, a.ptr), self.pointer(func, b.ptr));
        let (Some(ra), Some(rb)) = (pa.roots.known(), pb.roots.known()) else { return AliasResult::May };
        if !ra.iter().any(|&x| rb.iter().any(|&y| self.roots_may_overlap(x, y))) {
            return AliasResult::No;
        }
        let (Some((root_a, off_a)), Some((root_b, off_b))) = (pa.single(), pb.single()) else {
            return AliasResult::May;
        };
        if root_a != root_b {
            return AliasResult::May;
        }
        let (sa, sb) = (a.bytes as u64, b.bytes as u64);
        match self.offset_diff(func, off_a, off_b, ctx) {
            OffsetDiff::Exact(d) => {
                if d == 0 && sa == sb {
                    AliasResult::Must
                } else if ranges_overlap(1 << 32, d as u64, sa, sb) {
                    AliasResult::May
                } else {
                    AliasResult::No
                }
            }
            OffsetDiff::Modular { modulus, residue } => {
                if ranges_overlap(modulus, residue, sa, sb) {
                    AliasResult::May
                } else {
                    AliasResult::No
                }
            }
        }
    }

    /// `alias(..) == Must`.
    pub fn must_alias(&self, func: &Function, a: MemLoc, b: MemLoc, ctx: Context) -> bool {
        self.alias(func, a, b, ctx) == AliasResult::Must
    }

    /// `alias(..) != No`.
    pub fn may_alias(&self, func: &Function, a: MemLoc, b: MemLoc, ctx: Context) -> bool {
        self.alias(func, a, b, ctx) != AliasResult::No
    }

    /// `off_b − off_a`, comparing terms as `ctx` allows.
    fn offset_diff(&self, func: &Function, off_a: &LinearExpr, off_b: &LinearExpr, ctx: Context) -> OffsetDiff {
        let mut coefficients: SmallVec<[i32; 8]> = SmallVec::new();
        let constant = match ctx {
            Context::SameIteration => {
                let d = off_b.plus_scaled(off_a, -1);
                coefficients.extend(d.terms().iter().map(|&(_, c)| c));
                d.constant_part()
            }
            Context::AcrossIterations => {
                // Invariant terms cancel; each side's varying terms stay as separate unknowns.
                let (inv_a, var_a) = self.split_varying(func, off_a);
                let (inv_b, var_b) = self.split_varying(func, off_b);
                let d = inv_b.plus_scaled(&inv_a, -1);
                coefficients.extend(d.terms().iter().map(|&(_, c)| c));
                coefficients.extend(var_a.iter().chain(var_b.iter()).copied());
                d.constant_part()
            }
        };
        if coefficients.is_empty() {
            return OffsetDiff::Exact(constant as u32);
        }
        let shift = coefficients.iter().map(|&c| c.trailing_zeros()).min().unwrap_or(0).min(31);
        let modulus = 1u64 << shift;
        OffsetDiff::Modular { modulus, residue: (constant as u32 as u64) & (modulus - 1) }
    }

    /// The invariant part of an offset, and the coefficients of its varying terms.
    fn split_varying(&self, func: &Function, e: &LinearExpr) -> (LinearExpr, SmallVec<[i32; 4]>) {
        let mut invariant = LinearExpr::constant(e.constant_part());
        let mut varying = SmallVec::new();
        for &(v, c) in e.terms() {
            if self.is_varying(func, v) {
                varying.push(c);
            } else {
                invariant = invariant.plus_scaled(&LinearExpr::atom(v), c);
            }
        }
        (invariant, varying)
    }

    /// The location a load, store or `memzero` accesses.
    pub fn access(&self, func: &Function, inst: Inst) -> Option<Access> {
        let args = func.args(inst);
        match func.opcode(inst) {
            Opcode::Load if args.len() == 1 => Some(Access { loc: MemLoc::word(args[0]), is_write: false }),
            Opcode::Store if args.len() == 2 => Some(Access { loc: MemLoc::word(args[0]), is_write: true }),
            Opcode::MemZero { words } if args.len() == 1 => {
                Some(Access { loc: MemLoc::words(args[0], words), is_write: true })
            }
            _ => None,
        }
    }

    /// What call instruction `inst` may read and write (`None` if it is not a call).
    pub fn call_effects(&self, func: &Function, inst: Inst) -> Option<CallEffects> {
        let Opcode::Call(callee) = func.opcode(inst) else { return None };
        let s: &FuncSummary = self.info.callee_summary(callee);
        let mut fx = CallEffects { io: s.does_io(), ..CallEffects::default() };
        for g in s.reads_globals() {
            fx.reads.outer.insert(MemObject::Global(g));
        }
        for g in s.writes_globals() {
            fx.writes.outer.insert(MemObject::Global(g));
        }
        for (k, &arg) in func.args(inst).iter().enumerate() {
            let (r, w) = (s.reads_param(k), s.writes_param(k));
            if (r || w) && func.value_type(arg) == crate::ir::Type::Ptr {
                let reach = self.reach(func, arg);
                if r {
                    fx.reads.union_with(&reach);
                }
                if w {
                    fx.writes.union_with(&reach);
                }
            }
        }
        Some(fx)
    }

    /// The objects `inst` may write (whole objects, no offsets): a store's or `memzero`'s
    /// target, an `alloca`'s own slot, a call's [`CallEffects::writes`]; empty otherwise.
    /// Meant for object-level questions such as "may anything between two calls of a
    /// read-only function write what it reads": `written_objects(x).intersects(&read_objects(call))`.
    pub fn written_objects(&self, func: &Function, inst: Inst) -> Reach {
        match func.opcode(inst) {
            Opcode::Store | Opcode::MemZero { .. } => match func.args(inst).first() {
                Some(&p) => self.reach(func, p),
                None => Reach { unknown: true, ..Reach::default() },
            },
            Opcode::Alloca { .. } => {
                let mut r = Reach::default();
                r.add_local(inst);
                r
            }
            Opcode::Call(_) => self.call_effects(func, inst).map(|fx| fx.writes).unwrap_or_default(),
            _ => Reach::default(),
        }
    }

    /// The objects `inst` may read (whole objects): a load's source, a call's
    /// [`CallEffects::reads`]; empty otherwise.
    pub fn read_objects(&self, func: &Function, inst: Inst) -> Reach {
        match func.opcode(inst) {
            Opcode::Load => match func.args(inst).first() {
                Some(&p) => self.reach(func, p),
                None => Reach { unknown: true, ..Reach::default() },
            },
            Opcode::Call(_) => self.call_effects(func, inst).map(|fx| fx.reads).unwrap_or_default(),
            _ => Reach::default(),
        }
    }

    /// The location can only be in `const` globals (so nothing writes it).
    fn only_const_globals(&self, reach: &Reach) -> bool {
        !reach.unknown
            && reach.locals.is_empty()
            && !reach.outer.is_any()
            && reach.outer.iter().all(|o| matches!(o, MemObject::Global(g) if self.info.is_const_global(g)))
    }

    /// Whether `inst` may read and/or write `loc` (see the module documentation).
    pub fn mod_ref(&self, func: &Function, inst: Inst, loc: MemLoc, ctx: Context) -> ModRef {
        if loc.bytes == 0 {
            return ModRef::None;
        }
        let (may_read, may_write) = match func.opcode(inst) {
            Opcode::Load | Opcode::Store | Opcode::MemZero { .. } => {
                let Some(acc) = self.access(func, inst) else { return ModRef::ModRef };
                let overlaps = self.may_alias(func, acc.loc, loc, ctx);
                (overlaps && !acc.is_write, overlaps && acc.is_write)
            }
            Opcode::Alloca { .. } => {
                let reach = self.reach(func, loc.ptr);
                (false, reach.unknown || reach.locals.contains(&inst))
            }
            Opcode::Call(_) => {
                let Some(fx) = self.call_effects(func, inst) else { return ModRef::ModRef };
                let reach = self.reach(func, loc.ptr);
                (fx.reads.intersects(&reach), fx.writes.intersects(&reach))
            }
            _ => (false, false),
        };
        let may_write = may_write && !self.only_const_globals(&self.reach(func, loc.ptr));
        ModRef::from_flags(may_read, may_write)
    }

    /// `inst` may write (part of) `loc`.
    pub fn inst_may_write(&self, func: &Function, inst: Inst, loc: MemLoc, ctx: Context) -> bool {
        self.mod_ref(func, inst, loc, ctx).may_write()
    }

    /// `inst` may read (part of) `loc`.
    pub fn inst_may_read(&self, func: &Function, inst: Inst, loc: MemLoc, ctx: Context) -> bool {
        self.mod_ref(func, inst, loc, ctx).may_read()
    }

    /// `inst` (a store or `memzero`) certainly writes every byte of `loc`, so the old contents
    /// of `loc` are dead after it. A write covering a whole `alloca` or global from its first
    /// byte covers every location rooted there, whatever its offset: accesses are assumed in
    /// bounds (out-of-bounds accesses are undefined behaviour in SysY).
    pub fn must_overwrite(&self, func: &Function, inst: Inst, loc: MemLoc, ctx: Context) -> bool {
        let Some(acc) = self.access(func, inst).filter(|a| a.is_write) else { return false };
        let (pw, pl) = (self.pointer(func, acc.loc.ptr), self.pointer(func, loc.ptr));
        let (Some((rw, ow)), Some((rl, ol))) = (pw.single(), pl.single()) else { return false };
        if rw != rl {
            return false;
        }
        let object_bytes = match rw {
            Root::Alloca(a) => match func.opcode(a) {
                Opcode::Alloca { count, .. } => Some(count as u64 * 4),
                _ => None,
            },
            Root::Global(g) => Some(self.info.global_words(g) as u64 * 4),
            Root::Param(_) => None,
        };
        if ow.as_constant() == Some(0) && object_bytes.is_some_and(|size| acc.loc.bytes as u64 >= size) {
            return true;
        }
        match self.offset_diff(func, ow, ol, ctx) {
            OffsetDiff::Exact(d) => d as u64 + loc.bytes as u64 <= acc.loc.bytes as u64,
            OffsetDiff::Modular { .. } => false,
        }
    }
}

/// Byte ranges `[0, sa)` and `[d, d + sb)` overlap on a circle of `modulus` bytes, for every
/// `d ≡ residue`? (`modulus` a power of two up to 2³²; true when undecidable.)
fn ranges_overlap(modulus: u64, residue: u64, sa: u64, sb: u64) -> bool {
    if sa + sb > modulus {
        return true;
    }
    residue < sa || modulus - residue < sb
}
