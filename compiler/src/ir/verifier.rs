//! The IR verifier: everything a pass may assume about its input and must preserve.
//!
//! Checked per function:
//! * layout: at least one block; every block non-empty, ending in exactly one terminator,
//!   phis only at its start; each instruction's block link and sequence numbers consistent;
//! * operands: counts and types per opcode as tabled in [`super::instr`]; call arguments and
//!   result against the callee (module function or runtime library, see
//!   [`builtin_signature`]); `ret` against the function's return type; references to removed
//!   functions, blocks outside the layout, unknown globals or strings are errors;
//! * CFG: the entry block has no predecessors; a phi has exactly one incoming entry per
//!   incoming *edge* — the multiset of its incoming blocks equals the block's predecessor
//!   multiset, so after `bb0: br %c, bb1, bb1` every phi of `bb1` lists `bb0` twice, and
//!   both entries must carry the same value (at run time the two edges are indistinguishable);
//! * SSA: every use is dominated by its definition — in program order within a block, by
//!   block dominance across blocks, and for a phi operand at the end of its incoming block.
//!   Dominance is not checked for uses inside unreachable blocks (and phi operands arriving
//!   from them): nothing there executes and passes routinely leave such code half-rewritten
//!   until it is deleted. A value defined by an instruction outside the layout may not be
//!   used at all, reachable or not;
//! * use lists: for every parameter and instruction result, its use list equals the multiset
//!   of (value, instruction) operand slots over all instructions of the function (placed or
//!   detached); constants, globals and `undef` have empty lists.
//!
//! Module checks: unique function and global names; global element types `i32`/`f32`,
//! initialisers sorted, in range and of the element type; `main`, if present, is `() -> i32`.
//!
//! Errors name the function, the block (`bbN` of the printed form) and the instruction as
//! printed, so a failing pass can be debugged from the message alone.

use std::fmt;

use cranelift_entity::EntityRef;
use rustc_hash::FxHashSet;

use super::entities::{Block, FuncRef, Inst, Value};
use super::function::{Function, ValueDef};
use super::instr::{Callee, Opcode, builtin_signature};
use super::module::Module;
use super::printer::{Names, inst_to_string, value_to_string};
use super::types::Type;
use crate::analysis::{ControlFlowGraph, DomTree};

/// What rule an error breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum VerifierErrorKind {
    /// No blocks, a duplicated or removed block in the layout, inconsistent instruction links.
    Layout,
    /// A block that is empty or does not end in a terminator.
    MissingTerminator,
    /// A terminator before the end of its block.
    TerminatorInMiddle,
    /// A phi after a non-phi instruction.
    PhiNotAtStart,
    /// Phi incoming blocks differ from the predecessors, or one edge with two values.
    PhiPredecessors,
    /// The entry block is the target of a branch.
    EntryHasPredecessors,
    /// Wrong number of value or block operands.
    OperandCount,
    /// Wrong operand or result type.
    Type,
    /// A use not dominated by its definition (or of a value defined outside the layout).
    Dominance,
    /// A reference to something that does not exist: a removed function, a block outside the
    /// layout, an unknown value, global or string, or `putf` called as a plain built-in.
    BadReference,
    /// A use list that disagrees with the operands.
    UseList,
    /// Module-level problems: globals, duplicate names, `main`'s signature.
    Module,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifierError {
    pub kind: VerifierErrorKind,
    /// `@name` of the function, if the error is inside one.
    pub func: Option<String>,
    /// `bbN` of the block, if the error is inside one.
    pub block: Option<String>,
    /// The instruction as printed, if the error is about one.
    pub inst: Option<String>,
    pub message: String,
}

impl fmt::Display for VerifierError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sep = "";
        if let Some(func) = &self.func {
            write!(f, "@{func}")?;
            sep = ", ";
        }
        if let Some(block) = &self.block {
            write!(f, "{sep}{block}")?;
            sep = ", ";
        }
        if let Some(inst) = &self.inst {
            write!(f, "{sep}`{inst}`")?;
            sep = ", ";
        }
        if !sep.is_empty() {
            f.write_str(": ")?;
        }
        write!(f, "{:?}: {}", self.kind, self.message)
    }
}

/// Verifies every function and the module-level rules.
pub fn verify_module(module: &Module) -> Result<(), Vec<VerifierError>> {
    verify_module_rules_and(module, |_| true)
}

/// Verifies the module-level rules and the functions `only` holds: after a change confined to
/// those functions (the rest of the module verified before and untouched since), this reports
/// exactly what [`verify_module`] would.
pub fn verify_module_rules_and_functions(module: &Module, only: &[FuncRef]) -> Result<(), Vec<VerifierError>> {
    verify_module_rules_and(module, |f| only.contains(&f))
}

fn verify_module_rules_and(module: &Module, wanted: impl Fn(FuncRef) -> bool) -> Result<(), Vec<VerifierError>> {
    let mut errors = Vec::new();
    let module_error = |message: String| VerifierError {
        kind: VerifierErrorKind::Module,
        func: None,
        block: None,
        inst: None,
        message,
    };
    let mut names = FxHashSet::default();
    for (_, g) in module.globals.iter() {
        if !names.insert(g.name.as_str()) {
            errors.push(module_error(format!("global `@{}` defined twice", g.name)));
        }
        if !matches!(g.elem, Type::I32 | Type::F32) {
            errors.push(module_error(format!("global `@{}` has element type {}", g.name, g.elem)));
        }
        let mut last: Option<u32> = None;
        for &(idx, c) in &g.init {
            if last.is_some_and(|l| idx <= l) {
                errors.push(module_error(format!("initialiser of `@{}` not sorted by index at {idx}", g.name)));
            }
            if idx >= g.words {
                errors.push(module_error(format!("initialiser of `@{}` writes index {idx} of {}", g.name, g.words)));
            }
            if c.ty() != g.elem {
                errors.push(module_error(format!("initialiser of `@{}` has a {} at index {idx}", g.name, c.ty())));
            }
            last = Some(idx);
        }
    }
    let mut func_names = FxHashSet::default();
    for (f, func) in module.funcs() {
        if !func_names.insert(func.name.as_str()) {
            errors.push(module_error(format!("function `@{}` defined twice", func.name)));
        }
        if func.name == "main" && (!func.params.is_empty() || func.ret != Type::I32) {
            errors.push(module_error("`main` must take no parameters and return i32".into()));
        }
        if wanted(f)
            && let Err(mut e) = verify_function(module, f)
        {
            errors.append(&mut e);
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// Verifies one function of `module` (module-level rules excepted).
pub fn verify_function(module: &Module, f: FuncRef) -> Result<(), Vec<VerifierError>> {
    if !module.is_live(f) {
        return Err(vec![VerifierError {
            kind: VerifierErrorKind::BadReference,
            func: None,
            block: None,
            inst: None,
            message: format!("{f} is not a function of the module"),
        }]);
    }
    let func = module.func(f);
    let mut v = Verifier { module, func, names: std::cell::OnceCell::new(), errors: Vec::new() };
    v.run();
    if v.errors.is_empty() { Ok(()) } else { Err(v.errors) }
}

struct Verifier<'a> {
    module: &'a Module,
    func: &'a Function,
    /// The printer's names, made for the first error (a clean function needs none).
    names: std::cell::OnceCell<Names>,
    errors: Vec<VerifierError>,
}

impl Verifier<'_> {
    fn report(&mut self, kind: VerifierErrorKind, block: Option<Block>, inst: Option<Inst>, message: String) {
        let block = block.map(|b| self.names().block_name(b));
        let inst = inst.map(|i| inst_to_string(self.module, self.func, self.names(), i));
        self.errors.push(VerifierError { kind, func: Some(self.func.name.clone()), block, inst, message });
    }

    fn names(&self) -> &Names {
        self.names.get_or_init(|| Names::new(self.func))
    }

    fn value_str(&self, v: Value) -> String {
        value_to_string(self.module, self.func, self.names(), v)
    }

    fn run(&mut self) {
        let func = self.func;
        for (i, &p) in func.params.iter().enumerate() {
            if p.index() >= func.num_values() || func.value_def(p) != ValueDef::Param(i as u32) {
                self.report(VerifierErrorKind::Layout, None, None, format!("parameter {i} is not a parameter value"));
            }
        }
        if func.layout().is_empty() {
            self.report(VerifierErrorKind::Layout, None, None, "function has no blocks".into());
            return;
        }
        // Indexed by block: `is_block_live` has checked that the block exists.
        let mut seen = vec![false; func.num_blocks()];
        for &b in func.layout() {
            if !func.is_block_live(b) {
                self.report(VerifierErrorKind::Layout, None, None, format!("layout holds removed block {b}"));
                return;
            }
            if std::mem::replace(&mut seen[b.index()], true) {
                self.report(VerifierErrorKind::Layout, Some(b), None, "block appears twice in the layout".into());
                return;
            }
        }
        for &b in func.layout() {
            self.check_block_structure(b);
        }
        for (b, inst) in func.all_insts() {
            self.check_inst(b, inst);
        }
        let cfg = ControlFlowGraph::compute(func);
        let domtree = DomTree::compute(&cfg);
        let entry = func.entry();
        if !cfg.preds(entry).is_empty() {
            self.report(
                VerifierErrorKind::EntryHasPredecessors,
                Some(entry),
                None,
                format!("the entry block is a successor of {}", self.names().block_name(cfg.preds(entry)[0])),
            );
        }
        for &b in func.layout() {
            self.check_phi_preds(&cfg, b);
        }
        self.check_dominance(&cfg, &domtree);
        self.check_use_lists();
    }

    fn check_block_structure(&mut self, b: Block) {
        let func = self.func;
        let Some(last) = func.last_inst(b) else {
            self.report(VerifierErrorKind::MissingTerminator, Some(b), None, "empty block".into());
            return;
        };
        let mut prev: Option<Inst> = None;
        let mut seen_non_phi = false;
        for inst in func.block_insts(b) {
            if func.inst_block(inst) != Some(b) || func.prev_inst(inst) != prev {
                self.report(VerifierErrorKind::Layout, Some(b), Some(inst), "broken instruction links".into());
                return;
            }
            if prev.is_some_and(|p| func.inst_seq(p) >= func.inst_seq(inst)) {
                self.report(VerifierErrorKind::Layout, Some(b), Some(inst), "sequence numbers out of order".into());
            }
            let op = func.opcode(inst);
            if op.is_terminator() && inst != last {
                self.report(
                    VerifierErrorKind::TerminatorInMiddle,
                    Some(b),
                    Some(inst),
                    "terminator before the end of the block".into(),
                );
            }
            if op == Opcode::Phi {
                if seen_non_phi {
                    self.report(VerifierErrorKind::PhiNotAtStart, Some(b), Some(inst), "phi after a non-phi".into());
                }
            } else {
                seen_non_phi = true;
            }
            prev = Some(inst);
        }
        if !func.opcode(last).is_terminator() {
            self.report(VerifierErrorKind::MissingTerminator, Some(b), Some(last), "block does not end in a terminator".into());
        }
    }

    fn check_inst(&mut self, b: Block, inst: Inst) {
        use VerifierErrorKind as K;
        let func = self.func;
        let data = func.inst(inst);
        // Operands must name values of this function before anything looks at them.
        for &a in &data.args {
            if a.index() >= func.num_values() {
                self.report(K::BadReference, Some(b), Some(inst), format!("operand {a} is not a value of the function"));
                return;
            }
        }
        for &t in &data.targets {
            if !func.is_block_live(t) {
                self.report(K::BadReference, Some(b), Some(inst), format!("refers to block {t}, which is not in the layout"));
            }
        }
        match func.result(inst) {
            Some(r) => {
                let vd = func.value(r);
                if vd.def != ValueDef::Inst(inst) || vd.ty != data.ty {
                    self.report(K::Layout, Some(b), Some(inst), "result value does not match the instruction".into());
                }
            }
            None if !data.ty.is_void() => {
                self.report(K::Layout, Some(b), Some(inst), "non-void instruction without a result value".into());
            }
            None => {}
        }
        let ty = |v: Value| func.value_type(v);
        let args = &data.args;
        let n_targets = data.targets.len();
        let shape = |nargs: usize, ntargets: usize| args.len() == nargs && n_targets == ntargets;
        let mut count_ok: bool;
        let mut type_errors: Vec<String> = Vec::new();
        // A macro, not a closure: the message is formatted only when the rule is broken (the
        // verifier runs after every pass; formatting every phi's operands cost more than
        // checking them).
        macro_rules! want {
            ($cond:expr, $($message:tt)+) => {
                if !$cond {
                    type_errors.push(format!($($message)+));
                }
            };
        }
        match data.op {
            Opcode::Add | Opcode::Sub | Opcode::Mul | Opcode::SDiv | Opcode::SRem => {
                count_ok = shape(2, 0);
                if count_ok {
                    want!(ty(args[0]) == Type::I32 && ty(args[1]) == Type::I32, "operands must be i32");
                }
                want!(data.ty == Type::I32, "result must be i32");
            }
            Opcode::FAdd | Opcode::FSub | Opcode::FMul | Opcode::FDiv => {
                count_ok = shape(2, 0);
                if count_ok {
                    want!(ty(args[0]) == Type::F32 && ty(args[1]) == Type::F32, "operands must be f32");
                }
                want!(data.ty == Type::F32, "result must be f32");
            }
            Opcode::FNeg => {
                count_ok = shape(1, 0);
                if count_ok {
                    want!(ty(args[0]) == Type::F32, "operand must be f32");
                }
                want!(data.ty == Type::F32, "result must be f32");
            }
            Opcode::Icmp(_) | Opcode::Fcmp(_) => {
                let t = if matches!(data.op, Opcode::Icmp(_)) { Type::I32 } else { Type::F32 };
                count_ok = shape(2, 0);
                if count_ok {
                    want!(ty(args[0]) == t && ty(args[1]) == t, "operands must be {t}");
                }
                want!(data.ty == Type::I1, "result must be i1");
            }
            Opcode::Zext | Opcode::SiToFp | Opcode::FpToSi => {
                let (from, to) = match data.op {
                    Opcode::Zext => (Type::I1, Type::I32),
                    Opcode::SiToFp => (Type::I32, Type::F32),
                    _ => (Type::F32, Type::I32),
                };
                count_ok = shape(1, 0);
                if count_ok {
                    want!(ty(args[0]) == from, "operand must be {from}");
                }
                want!(data.ty == to, "result must be {to}");
            }
            Opcode::Select => {
                count_ok = shape(3, 0);
                if count_ok {
                    want!(ty(args[0]) == Type::I1, "condition must be i1");
                    want!(ty(args[1]) == data.ty && ty(args[2]) == data.ty, "both arms must have the result type");
                }
                want!(!data.ty.is_void(), "result must not be void");
            }
            Opcode::Alloca { elem, count } => {
                count_ok = shape(0, 0);
                want!(matches!(elem, Type::I32 | Type::F32), "element type must be i32 or f32");
                want!(count >= 1, "must allocate at least one element");
                want!(data.ty == Type::Ptr, "result must be ptr");
            }
            Opcode::Load => {
                count_ok = shape(1, 0);
                if count_ok {
                    want!(ty(args[0]) == Type::Ptr, "address must be ptr");
                }
                want!(matches!(data.ty, Type::I32 | Type::F32), "loaded type must be i32 or f32");
            }
            Opcode::Store => {
                count_ok = shape(2, 0);
                if count_ok {
                    want!(ty(args[0]) == Type::Ptr, "address must be ptr");
                    want!(matches!(ty(args[1]), Type::I32 | Type::F32), "stored value must be i32 or f32");
                }
                want!(data.ty == Type::Void, "store produces no value");
            }
            Opcode::Gep { .. } => {
                count_ok = shape(2, 0);
                if count_ok {
                    want!(ty(args[0]) == Type::Ptr, "base must be ptr");
                    want!(ty(args[1]) == Type::I32, "index must be i32");
                }
                want!(data.ty == Type::Ptr, "result must be ptr");
            }
            Opcode::MemZero { .. } => {
                count_ok = shape(1, 0);
                if count_ok {
                    want!(ty(args[0]) == Type::Ptr, "address must be ptr");
                }
                want!(data.ty == Type::Void, "memzero produces no value");
            }
            Opcode::Call(callee) => {
                count_ok = n_targets == 0;
                let sig: Option<(Vec<Type>, Type)> = match callee {
                    Callee::Func(f) if self.module.is_live(f) => {
                        let cf = self.module.func(f);
                        Some((cf.params.iter().map(|&p| cf.value_type(p)).collect(), cf.ret))
                    }
                    Callee::Func(f) => {
                        self.report(K::BadReference, Some(b), Some(inst), format!("calls removed function {f}"));
                        None
                    }
                    Callee::Builtin(bi) => match builtin_signature(bi) {
                        Some((params, ret)) => Some((params.to_vec(), ret)),
                        None => {
                            self.report(K::BadReference, Some(b), Some(inst), "putf must be called as `putf $n`".into());
                            None
                        }
                    },
                    Callee::PutF(s) => {
                        if self.module.strings.get(s).is_none() {
                            self.report(K::BadReference, Some(b), Some(inst), format!("unknown string {s}"));
                        }
                        for &a in args {
                            want!(matches!(ty(a), Type::I32 | Type::F32), "putf arguments must be i32 or f32");
                        }
                        want!(data.ty == Type::Void, "putf returns void");
                        None
                    }
                };
                if let Some((params, ret)) = sig {
                    if args.len() != params.len() {
                        count_ok = false;
                    } else {
                        for (i, (&a, &p)) in args.iter().zip(&params).enumerate() {
                            want!(ty(a) == p, "argument {i} must be {p}, is {}", ty(a));
                        }
                    }
                    want!(data.ty == ret, "result type must be the callee's {ret}");
                }
            }
            Opcode::Phi => {
                count_ok = args.len() == n_targets;
                want!(!data.ty.is_void(), "phi must have a type");
                for &a in args {
                    want!(ty(a) == data.ty, "incoming {} is {}, not {}", self.value_str(a), ty(a), data.ty);
                }
            }
            Opcode::Jump => count_ok = shape(0, 1),
            Opcode::Br => {
                count_ok = shape(1, 2);
                if count_ok {
                    want!(ty(args[0]) == Type::I1, "condition must be i1");
                }
            }
            Opcode::Ret => {
                if func.ret.is_void() {
                    count_ok = shape(0, 0);
                } else {
                    count_ok = shape(1, 0);
                    if count_ok {
                        want!(ty(args[0]) == func.ret, "returned value must be {}", func.ret);
                    }
                }
            }
            Opcode::Unreachable => count_ok = shape(0, 0),
        }
        if data.op.is_terminator() {
            want!(data.ty == Type::Void, "terminators produce no value");
        }
        if !count_ok {
            self.report(
                K::OperandCount,
                Some(b),
                Some(inst),
                format!("wrong operand count ({} values, {} blocks)", args.len(), n_targets),
            );
        }
        for message in type_errors {
            self.report(K::Type, Some(b), Some(inst), message);
        }
        for &a in args {
            match func.value_def(a) {
                ValueDef::Param(i) if func.params.get(i as usize) != Some(&a) => {
                    self.report(K::BadReference, Some(b), Some(inst), format!("operand {a} is a foreign parameter"));
                }
                ValueDef::Global(g) if self.module.globals.get(g).is_none() => {
                    self.report(K::BadReference, Some(b), Some(inst), format!("unknown global {g}"));
                }
                _ => {}
            }
        }
    }

    fn check_phi_preds(&mut self, cfg: &ControlFlowGraph, b: Block) {
        let func = self.func;
        let mut preds: Vec<Block> = cfg.preds(b).to_vec();
        preds.sort_unstable();
        let phis: Vec<Inst> = func.block_phis(b).collect();
        for phi in phis {
            let data = func.inst(phi);
            if data.args.len() != data.targets.len() {
                continue; // reported as an operand-count error
            }
            let mut incoming: Vec<(Block, Value)> = data.phi_incoming().collect();
            incoming.sort_unstable();
            let blocks: Vec<Block> = incoming.iter().map(|p| p.0).collect();
            if blocks != preds {
                let list = |bs: &[Block]| bs.iter().map(|&x| self.names().block_name(x)).collect::<Vec<_>>().join(", ");
                let message = format!("incoming blocks [{}] differ from predecessors [{}]", list(&blocks), list(&preds));
                self.report(VerifierErrorKind::PhiPredecessors, Some(b), Some(phi), message);
                continue;
            }
            for pair in incoming.windows(2) {
                if pair[0].0 == pair[1].0 && pair[0].1 != pair[1].1 {
                    let message = format!("two values arrive over edges from {}", self.names().block_name(pair[0].0));
                    self.report(VerifierErrorKind::PhiPredecessors, Some(b), Some(phi), message);
                }
            }
        }
    }

    fn check_dominance(&mut self, cfg: &ControlFlowGraph, domtree: &DomTree) {
        let func = self.func;
        for (b, inst) in func.all_insts() {
            let reachable = cfg.is_reachable(b);
            for (idx, &a) in func.args(inst).iter().enumerate() {
                if a.index() >= func.num_values() {
                    continue; // reported by check_inst
                }
                let ValueDef::Inst(def) = func.value_def(a) else { continue };
                let placed = func.inst_block(def).is_some_and(|db| func.is_block_live(db));
                if !placed {
                    // Also in unreachable blocks: the IR interpreter refuses such a function.
                    let message = format!("uses {}, defined by an instruction outside the layout", self.value_str(a));
                    self.report(VerifierErrorKind::Dominance, Some(b), Some(inst), message);
                } else if reachable && !domtree.dominates_operand(func, def, inst, idx) {
                    let message = format!("use of {} is not dominated by its definition", self.value_str(a));
                    self.report(VerifierErrorKind::Dominance, Some(b), Some(inst), message);
                }
            }
        }
    }

    fn check_use_lists(&mut self) {
        let func = self.func;
        if use_lists_match(func) {
            return;
        }
        let expected = expected_uses(func);
        let actual = recorded_uses(func);
        if expected == actual {
            return;
        }
        // Report the first few differences of the two sorted multisets.
        let (mut i, mut j, mut reported) = (0, 0, 0);
        while (i < expected.len() || j < actual.len()) && reported < 8 {
            let (e, a) = (expected.get(i), actual.get(j));
            let (pair, missing) = match (e, a) {
                (Some(e), Some(a)) if e == a => {
                    i += 1;
                    j += 1;
                    continue;
                }
                (Some(e), Some(a)) if e < a => {
                    i += 1;
                    (*e, true)
                }
                (Some(e), None) => {
                    i += 1;
                    (*e, true)
                }
                (_, Some(a)) => {
                    j += 1;
                    (*a, false)
                }
                (None, None) => break,
            };
            let (v, user) = pair;
            let in_arena = user.index() < func.num_insts();
            let block = if in_arena { func.inst_block(user) } else { None };
            let message = if missing {
                format!("use of {} missing from its use list", self.value_str(v))
            } else {
                format!("use list of {} names this instruction once too often", self.value_str(v))
            };
            let inst = in_arena.then_some(user);
            self.report(VerifierErrorKind::UseList, block, inst, message);
            reported += 1;
        }
    }
}

/// Whether every use list equals the multiset of operand slots naming its value (what
/// [`expected_uses`] and [`recorded_uses`] compare), decided without building either: one
/// sweep counts the slots per value, then each list must have that many entries and name
/// each of its instructions exactly as often as that instruction's operands name the value
/// (so the list's entries account for all the counted slots); a list of distinct
/// instructions needs no sorting for that (see inside).
///
/// The verifier runs after every pass, and materialising (and sorting) every operand slot of
/// the function was its largest cost; the pairs are only built to report a mismatch.
fn use_lists_match(func: &Function) -> bool {
    let n = func.num_values();
    let tracked = |a: Value| a.index() < n && matches!(func.value_def(a), ValueDef::Inst(_) | ValueDef::Param(_));
    let mut slots = vec![0usize; n];
    for i in 0..func.num_insts() {
        for &a in func.args(Inst::new(i)) {
            if tracked(a) {
                slots[a.index()] += 1;
            }
        }
    }
    let mut users: Vec<Inst> = Vec::new();
    // `named_by[u]`: the last value whose list named instruction `u` (to see repeats).
    let mut named_by = vec![u32::MAX; func.num_insts()];
    func.values().all(|v| {
        let list = func.users(v);
        if list.len() != slots[v.index()] {
            return false;
        }
        // Commonly every entry is a different instruction. Then each must name `v` at least
        // once, and that is enough: those distinct instructions hold at most `slots` (the
        // list's length) slots naming `v`, so each names it exactly once and none else does.
        let mut distinct = true;
        for &u in list {
            if u.index() >= func.num_insts() {
                return false;
            }
            if std::mem::replace(&mut named_by[u.index()], v.index() as u32) == v.index() as u32 {
                distinct = false;
                break;
            }
            if !func.args(u).contains(&v) {
                return false;
            }
        }
        if distinct {
            return true;
        }
        // An instruction listed twice: compare the counts, run by run.
        users.clear();
        users.extend_from_slice(list);
        users.sort_unstable();
        users.chunk_by(|a, b| a == b).all(|run| {
            let u = run[0];
            u.index() < func.num_insts() && func.args(u).iter().filter(|&&a| a == v).count() == run.len()
        })
    })
}

/// Every operand slot naming a parameter or an instruction result, as (value, instruction)
/// pairs sorted by value, then instruction, over all instructions (placed or detached).
///
/// A counting sort by value (instructions visited in index order keep each value's users
/// ascending), not a comparison sort (only called to report a mismatch, but functions with
/// broken use lists can be large).
fn expected_uses(func: &Function) -> Vec<(Value, Inst)> {
    let n = func.num_values();
    let tracked = |a: Value| a.index() < n && matches!(func.value_def(a), ValueDef::Inst(_) | ValueDef::Param(_));
    let insts = || (0..func.num_insts()).map(Inst::new);
    // `next[v]`: where value `v`'s next pair goes (first its count, then prefix sums).
    let mut next = vec![0usize; n + 1];
    for inst in insts() {
        for &a in func.args(inst) {
            if tracked(a) {
                next[a.index() + 1] += 1;
            }
        }
    }
    for i in 1..=n {
        next[i] += next[i - 1];
    }
    let mut out = vec![(Value::new(0), Inst::new(0)); next[n]];
    for inst in insts() {
        for &a in func.args(inst) {
            if tracked(a) {
                out[next[a.index()]] = (a, inst);
                next[a.index()] += 1;
            }
        }
    }
    out
}

/// What the use lists record, as (value, user) pairs in the order of [`expected_uses`]:
/// values ascending, each list sorted (lists are short, sorting each is cheap).
fn recorded_uses(func: &Function) -> Vec<(Value, Inst)> {
    let mut out: Vec<(Value, Inst)> = Vec::new();
    for v in func.values() {
        let start = out.len();
        out.extend(func.users(v).iter().map(|&u| (v, u)));
        out[start..].sort_unstable();
    }
    out
}

#[cfg(test)]
mod tests;
