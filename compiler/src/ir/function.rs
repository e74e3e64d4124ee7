//! A function in SSA form: value, instruction and block arenas, the layout, and use lists.
//!
//! Layout: blocks are kept in a `Vec` (their order is the code layout, the first is the entry);
//! the instructions of a block form a doubly-linked list threaded through the instruction
//! arena, so inserting and removing anywhere is O(1) and iteration with a "next" pointer taken
//! before a mutation is safe.
//!
//! Use lists: for every value defined by an instruction or a parameter, the instructions that
//! use it, once per operand slot (an instruction using `v` twice appears twice). Constants,
//! global addresses and `undef` are interned per function and have no use lists (they are used
//! everywhere and never replaced). All operand mutation goes through methods of [`Function`]
//! so the lists stay exact; the verifier checks them.
//!
//! CFG epoch: every mutation that can change the control-flow graph (terminator targets,
//! block insertion/removal) gives the function a fresh [`Function::cfg_epoch`]; cached CFG
//! analyses compare it to the epoch they were computed at. Epochs come from one process-wide
//! counter, so an epoch identifies one CFG state of one function (a clone shares the state
//! until either copy changes): an analysis cached for one function can never be mistaken for
//! another's.
//!
//! Sequence numbers: every placed instruction carries a key that increases along its block
//! ([`Function::inst_seq`]), kept up to date by the insertion methods, so "does `a` come
//! before `b`" is one comparison (dominance queries need it after every transformation).
//! Keys are spaced [`SEQ_STRIDE`] apart; an insertion between two neighbours with no free key
//! renumbers forward only until the keys are increasing again.

use std::sync::atomic::{AtomicU64, Ordering};

use cranelift_entity::packed_option::PackedOption;
use cranelift_entity::{PrimaryMap, SecondaryMap};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::entities::{Block, GlobalRef, Inst, Value};
use super::instr::{InstData, Opcode};
use super::types::Type;

/// A constant. Floats are kept as bit patterns so that constants hash and compare exactly
/// (`-0.0` ≠ `0.0`, every NaN payload distinct).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Const {
    Bool(bool),
    Int(i32),
    Float(u32),
}

impl Const {
    pub fn float(f: f32) -> Const {
        Const::Float(f.to_bits())
    }

    pub fn ty(self) -> Type {
        match self {
            Const::Bool(_) => Type::I1,
            Const::Int(_) => Type::I32,
            Const::Float(_) => Type::F32,
        }
    }

    pub fn as_int(self) -> Option<i32> {
        match self {
            Const::Int(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_float(self) -> Option<f32> {
        match self {
            Const::Float(bits) => Some(f32::from_bits(bits)),
            _ => None,
        }
    }

    pub fn as_bool(self) -> Option<bool> {
        match self {
            Const::Bool(b) => Some(b),
            _ => None,
        }
    }
}

/// Where a value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueDef {
    /// The result of an instruction.
    Inst(Inst),
    /// The n-th parameter of the function.
    Param(u32),
    Const(Const),
    /// The address of a global variable.
    Global(GlobalRef),
    /// An unspecified value of the given type (reading an uninitialised variable).
    Undef,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueData {
    pub def: ValueDef,
    pub ty: Type,
}

/// Gap between the sequence numbers of consecutively appended instructions.
pub const SEQ_STRIDE: u32 = 16;

static NEXT_CFG_EPOCH: AtomicU64 = AtomicU64::new(1);

/// A CFG epoch never handed out before (process-wide).
fn fresh_cfg_epoch() -> u64 {
    NEXT_CFG_EPOCH.fetch_add(1, Ordering::Relaxed)
}

#[derive(Clone, Debug)]
struct InstNode {
    data: InstData,
    result: PackedOption<Value>,
    block: PackedOption<Block>,
    prev: PackedOption<Inst>,
    next: PackedOption<Inst>,
    /// Position key within the block (see the module documentation).
    seq: u32,
}

#[derive(Clone, Debug, Default)]
struct BlockNode {
    first: PackedOption<Inst>,
    last: PackedOption<Inst>,
    /// In the layout (not removed).
    live: bool,
}

#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    /// The parameter values (`ValueDef::Param(i)`), in order.
    pub params: Vec<Value>,
    pub ret: Type,
    values: PrimaryMap<Value, ValueData>,
    insts: PrimaryMap<Inst, InstNode>,
    blocks: PrimaryMap<Block, BlockNode>,
    layout: Vec<Block>,
    interned: FxHashMap<ValueDef, Value>,
    undefs: FxHashMap<Type, Value>,
    users: SecondaryMap<Value, SmallVec<[Inst; 4]>>,
    cfg_epoch: u64,
    /// The source position (byte offset) each instruction comes from, where lowering
    /// recorded one: see [`Function::src_offset`].
    src_offsets: SecondaryMap<Inst, Option<u32>>,
    /// With `edits`, what [`Function::edit_stamp`] reports.
    identity: Identity,
    edits: u64,
}

/// A process-wide unique number per function object: a clone gets a fresh one, so a
/// function replaced by another object (a clone, a rebuilt one) never shows the stamp of the
/// one it replaced.
#[derive(Debug)]
struct Identity(u64);

static NEXT_IDENTITY: AtomicU64 = AtomicU64::new(1);

impl Identity {
    fn fresh() -> Identity {
        Identity(NEXT_IDENTITY.fetch_add(1, Ordering::Relaxed))
    }
}

impl Clone for Identity {
    fn clone(&self) -> Identity {
        Identity::fresh()
    }
}

impl Function {
    /// A function with the given signature and no blocks.
    pub fn new(name: impl Into<String>, param_types: &[Type], ret: Type) -> Function {
        let mut f = Function {
            name: name.into(),
            params: Vec::new(),
            ret,
            values: PrimaryMap::new(),
            insts: PrimaryMap::new(),
            blocks: PrimaryMap::new(),
            layout: Vec::new(),
            interned: FxHashMap::default(),
            undefs: FxHashMap::default(),
            users: SecondaryMap::new(),
            cfg_epoch: fresh_cfg_epoch(),
            src_offsets: SecondaryMap::new(),
            identity: Identity::fresh(),
            edits: 0,
        };
        for (i, &ty) in param_types.iter().enumerate() {
            let v = f.values.push(ValueData { def: ValueDef::Param(i as u32), ty });
            f.params.push(v);
        }
        f
    }

    // ----- values -------------------------------------------------------------------------

    pub fn value(&self, v: Value) -> ValueData {
        self.values[v]
    }

    pub fn value_type(&self, v: Value) -> Type {
        self.values[v].ty
    }

    pub fn value_def(&self, v: Value) -> ValueDef {
        self.values[v].def
    }

    /// The instruction defining `v`, if it is an instruction result.
    pub fn def_inst(&self, v: Value) -> Option<Inst> {
        match self.values[v].def {
            ValueDef::Inst(i) => Some(i),
            _ => None,
        }
    }

    pub fn as_const(&self, v: Value) -> Option<Const> {
        match self.values[v].def {
            ValueDef::Const(c) => Some(c),
            _ => None,
        }
    }

    pub fn as_int_const(&self, v: Value) -> Option<i32> {
        self.as_const(v).and_then(Const::as_int)
    }

    /// Number of value slots ever allocated (for sizing side tables).
    pub fn num_values(&self) -> usize {
        self.values.len()
    }

    pub fn values(&self) -> impl Iterator<Item = Value> + '_ {
        self.values.keys()
    }

    fn intern(&mut self, def: ValueDef, ty: Type) -> Value {
        self.edits += 1;
        if let Some(&v) = self.interned.get(&def) {
            debug_assert_eq!(self.values[v].ty, ty);
            return v;
        }
        let v = self.values.push(ValueData { def, ty });
        self.interned.insert(def, v);
        v
    }

    pub fn const_value(&mut self, c: Const) -> Value {
        self.edits += 1;
        self.intern(ValueDef::Const(c), c.ty())
    }

    pub fn iconst(&mut self, v: i32) -> Value {
        self.edits += 1;
        self.const_value(Const::Int(v))
    }

    pub fn fconst(&mut self, v: f32) -> Value {
        self.edits += 1;
        self.const_value(Const::float(v))
    }

    pub fn bconst(&mut self, v: bool) -> Value {
        self.edits += 1;
        self.const_value(Const::Bool(v))
    }

    pub fn global_addr(&mut self, g: GlobalRef) -> Value {
        self.edits += 1;
        self.intern(ValueDef::Global(g), Type::Ptr)
    }

    /// The `undef` of a type. (Each type has its own value.)
    pub fn undef(&mut self, ty: Type) -> Value {
        self.edits += 1;
        if let Some(&v) = self.undefs.get(&ty) {
            return v;
        }
        let v = self.values.push(ValueData { def: ValueDef::Undef, ty });
        self.undefs.insert(ty, v);
        v
    }

    /// Instructions using `v`, once per operand slot. Empty for constants, globals and undef.
    pub fn users(&self, v: Value) -> &[Inst] {
        &self.users[v]
    }

    pub fn has_uses(&self, v: Value) -> bool {
        !self.users[v].is_empty()
    }

    fn tracks_uses(&self, v: Value) -> bool {
        matches!(self.values[v].def, ValueDef::Inst(_) | ValueDef::Param(_))
    }

    fn add_user(&mut self, v: Value, inst: Inst) {
        self.edits += 1;
        if self.tracks_uses(v) {
            self.users[v].push(inst);
        }
    }

    fn remove_user(&mut self, v: Value, inst: Inst) {
        self.edits += 1;
        if self.tracks_uses(v) {
            let list = &mut self.users[v];
            if let Some(pos) = list.iter().position(|&u| u == inst) {
                list.swap_remove(pos);
            }
        }
    }

    /// Test hook: records a use that no operand makes (to check that the verifier notices).
    #[cfg(test)]
    pub(crate) fn add_bogus_user_for_test(&mut self, v: Value, inst: Inst) {
        self.edits += 1;
        self.users[v].push(inst);
    }

    /// Test hook: makes `v`'s use list name `new` in the place of `old` (same length).
    #[cfg(test)]
    pub(crate) fn replace_user_for_test(&mut self, v: Value, old: Inst, new: Inst) {
        self.edits += 1;
        if let Some(u) = self.users[v].iter_mut().find(|u| **u == old) {
            *u = new;
        }
    }

    /// Replaces every use of `old` by `new` (in instructions in or out of the layout).
    pub fn replace_all_uses(&mut self, old: Value, new: Value) {
        self.edits += 1;
        if old == new {
            return;
        }
        debug_assert!(self.tracks_uses(old), "replace_all_uses of an untracked value {old}");
        let mut users = std::mem::take(&mut self.users[old]);
        // Each user once (it appears once per operand slot); sorting keeps this linearithmic
        // for values with thousands of uses.
        users.sort_unstable();
        users.dedup();
        for inst in users {
            for a in self.insts[inst].data.args.iter_mut() {
                if *a == old {
                    *a = new;
                    if matches!(self.values[new].def, ValueDef::Inst(_) | ValueDef::Param(_)) {
                        self.users[new].push(inst);
                    }
                }
            }
        }
    }

    // ----- instructions ---------------------------------------------------------------------

    /// Creates an instruction (not yet in the layout) and its result value if its type is not
    /// void. Its operands' use lists include it from now on.
    /// The byte offset in the source of the construct `inst` was lowered from (the start of
    /// its expression or statement). Only for messages — the IR interpreter's traps point at
    /// the source with it; it is not printed, and passes need not keep it (an instruction a
    /// pass creates has none, one it moves keeps its own).
    pub fn src_offset(&self, inst: Inst) -> Option<u32> {
        self.src_offsets[inst]
    }

    pub fn set_src_offset(&mut self, inst: Inst, offset: u32) {
        self.edits += 1;
        self.src_offsets[inst] = Some(offset);
    }

    pub fn create_inst(&mut self, data: InstData) -> Inst {
        self.edits += 1;
        let ty = data.ty;
        let inst = self.insts.push(InstNode {
            data,
            result: None.into(),
            block: None.into(),
            prev: None.into(),
            next: None.into(),
            seq: 0,
        });
        if !ty.is_void() {
            let v = self.values.push(ValueData { def: ValueDef::Inst(inst), ty });
            self.insts[inst].result = v.into();
        }
        for i in 0..self.insts[inst].data.args.len() {
            let a = self.insts[inst].data.args[i];
            self.add_user(a, inst);
        }
        if self.insts[inst].data.op.is_terminator() {
            self.cfg_epoch = fresh_cfg_epoch();
        }
        inst
    }

    pub fn inst(&self, inst: Inst) -> &InstData {
        &self.insts[inst].data
    }

    pub fn opcode(&self, inst: Inst) -> Opcode {
        self.insts[inst].data.op
    }

    pub fn args(&self, inst: Inst) -> &[Value] {
        &self.insts[inst].data.args
    }

    pub fn targets(&self, inst: Inst) -> &[Block] {
        &self.insts[inst].data.targets
    }

    /// The value an instruction defines.
    pub fn result(&self, inst: Inst) -> Option<Value> {
        self.insts[inst].result.expand()
    }

    /// Number of instruction slots ever allocated (for sizing side tables).
    pub fn num_insts(&self) -> usize {
        self.insts.len()
    }

    /// The block containing `inst`, or `None` when it is not in the layout.
    pub fn inst_block(&self, inst: Inst) -> Option<Block> {
        self.insts[inst].block.expand()
    }

    pub fn next_inst(&self, inst: Inst) -> Option<Inst> {
        self.insts[inst].next.expand()
    }

    pub fn prev_inst(&self, inst: Inst) -> Option<Inst> {
        self.insts[inst].prev.expand()
    }

    /// Replaces value operand `idx` of `inst`.
    pub fn set_arg(&mut self, inst: Inst, idx: usize, v: Value) {
        self.edits += 1;
        let old = self.insts[inst].data.args[idx];
        if old == v {
            return;
        }
        self.remove_user(old, inst);
        self.insts[inst].data.args[idx] = v;
        self.add_user(v, inst);
    }

    /// Replaces block operand `idx` of `inst` (a successor of a terminator, or an incoming
    /// block of a phi).
    pub fn set_target(&mut self, inst: Inst, idx: usize, b: Block) {
        self.edits += 1;
        self.insts[inst].data.targets[idx] = b;
        if self.insts[inst].data.op.is_terminator() {
            self.cfg_epoch = fresh_cfg_epoch();
        }
    }

    /// The value a phi receives from `pred` (its first entry for `pred`), if it has one.
    pub fn phi_incoming_from(&self, phi: Inst, pred: Block) -> Option<Value> {
        let data = &self.insts[phi].data;
        data.targets.iter().position(|&b| b == pred).map(|i| data.args[i])
    }

    /// Appends an incoming `(block, value)` pair to a phi.
    pub fn push_phi_incoming(&mut self, phi: Inst, block: Block, value: Value) {
        self.edits += 1;
        debug_assert_eq!(self.opcode(phi), Opcode::Phi);
        self.insts[phi].data.targets.push(block);
        self.insts[phi].data.args.push(value);
        self.add_user(value, phi);
    }

    /// Removes the incoming pair at `idx` of a phi.
    pub fn remove_phi_incoming(&mut self, phi: Inst, idx: usize) {
        self.edits += 1;
        debug_assert_eq!(self.opcode(phi), Opcode::Phi);
        let v = self.insts[phi].data.args.remove(idx);
        self.insts[phi].data.targets.remove(idx);
        self.remove_user(v, phi);
    }

    /// Replaces an instruction's whole contents, keeping its identity, position and result
    /// value (the result type must stay the same when the result is used).
    pub fn replace_inst(&mut self, inst: Inst, data: InstData) {
        self.edits += 1;
        let old_args = std::mem::take(&mut self.insts[inst].data.args);
        for a in old_args {
            self.remove_user(a, inst);
        }
        let was_term = self.insts[inst].data.op.is_terminator();
        let is_term = data.op.is_terminator();
        let new_ty = data.ty;
        self.insts[inst].data = data;
        for i in 0..self.insts[inst].data.args.len() {
            let a = self.insts[inst].data.args[i];
            self.add_user(a, inst);
        }
        if was_term || is_term {
            self.cfg_epoch = fresh_cfg_epoch();
        }
        match self.insts[inst].result.expand() {
            Some(v) => {
                if new_ty.is_void() {
                    debug_assert!(self.users[v].is_empty(), "replace_inst dropped a used result");
                    self.insts[inst].result = None.into();
                } else {
                    self.values[v].ty = new_ty;
                }
            }
            None if !new_ty.is_void() => {
                let v = self.values.push(ValueData { def: ValueDef::Inst(inst), ty: new_ty });
                self.insts[inst].result = v.into();
            }
            None => {}
        }
    }

    /// Appends `inst` (not in the layout) at the end of `block`.
    pub fn append_inst(&mut self, block: Block, inst: Inst) {
        self.edits += 1;
        debug_assert!(self.insts[inst].block.is_none(), "{inst} is already placed");
        let last = self.blocks[block].last;
        let seq = match last.expand() {
            Some(l) => self.insts[l].seq.checked_add(SEQ_STRIDE),
            None => Some(SEQ_STRIDE),
        };
        {
            let node = &mut self.insts[inst];
            node.block = block.into();
            node.prev = last;
            node.next = None.into();
            node.seq = seq.unwrap_or(0);
        }
        match last.expand() {
            Some(l) => self.insts[l].next = inst.into(),
            None => self.blocks[block].first = inst.into(),
        }
        self.blocks[block].last = inst.into();
        if seq.is_none() {
            self.renumber_block(block);
        }
        if self.insts[inst].data.op.is_terminator() {
            self.cfg_epoch = fresh_cfg_epoch();
        }
    }

    /// Inserts `inst` (not in the layout) at the start of `block`.
    pub fn prepend_inst(&mut self, block: Block, inst: Inst) {
        self.edits += 1;
        match self.blocks[block].first.expand() {
            Some(first) => self.insert_inst_before(first, inst),
            None => self.append_inst(block, inst),
        }
    }

    /// Inserts `inst` (not in the layout) right before `pos`.
    pub fn insert_inst_before(&mut self, pos: Inst, inst: Inst) {
        self.edits += 1;
        debug_assert!(self.insts[inst].block.is_none(), "{inst} is already placed");
        let block = self.insts[pos].block.expect("insert_inst_before: position not placed");
        let prev = self.insts[pos].prev;
        {
            let node = &mut self.insts[inst];
            node.block = block.into();
            node.prev = prev;
            node.next = pos.into();
        }
        self.insts[pos].prev = inst.into();
        match prev.expand() {
            Some(p) => self.insts[p].next = inst.into(),
            None => self.blocks[block].first = inst.into(),
        }
        self.assign_seq_between(block, inst, prev.expand(), pos);
        if self.insts[inst].data.op.is_terminator() {
            self.cfg_epoch = fresh_cfg_epoch();
        }
    }

    /// Gives `inst`, just linked between `prev` and `next`, a sequence number between theirs,
    /// pushing later numbers up when there is no gap.
    fn assign_seq_between(&mut self, block: Block, inst: Inst, prev: Option<Inst>, next: Inst) {
        self.edits += 1;
        let lo = prev.map_or(0, |p| self.insts[p].seq);
        let hi = self.insts[next].seq;
        if hi.saturating_sub(lo) > 1 {
            self.insts[inst].seq = lo + (hi - lo) / 2;
            return;
        }
        // No gap: number forward from `inst` until the existing keys are large enough.
        let mut key = lo;
        let mut cur = Some(inst);
        while let Some(i) = cur {
            let Some(k) = key.checked_add(SEQ_STRIDE) else {
                self.renumber_block(block);
                return;
            };
            if i != inst && self.insts[i].seq > key {
                return;
            }
            self.insts[i].seq = k;
            key = k;
            cur = self.insts[i].next.expand();
        }
    }

    /// Spreads the sequence numbers of `block` evenly again (after they ran out of room).
    fn renumber_block(&mut self, block: Block) {
        self.edits += 1;
        let mut cur = self.blocks[block].first.expand();
        let count = self.block_insts(block).count().max(1) as u64;
        let stride = (u32::MAX as u64 / (count + 1)).clamp(1, SEQ_STRIDE as u64) as u32;
        let mut key = 0u32;
        while let Some(i) = cur {
            key += stride;
            self.insts[i].seq = key;
            cur = self.insts[i].next.expand();
        }
    }

    /// Position key of a placed instruction within its block: for `a` and `b` in the same
    /// block, `a` comes first iff `inst_seq(a) < inst_seq(b)`. Meaningless across blocks.
    pub fn inst_seq(&self, inst: Inst) -> u32 {
        self.insts[inst].seq
    }

    /// Inserts `inst` (not in the layout) right after `pos`.
    pub fn insert_inst_after(&mut self, pos: Inst, inst: Inst) {
        self.edits += 1;
        match self.insts[pos].next.expand() {
            Some(next) => self.insert_inst_before(next, inst),
            None => {
                let block = self.insts[pos].block.expect("insert_inst_after: position not placed");
                self.append_inst(block, inst);
            }
        }
    }

    /// Takes `inst` out of the layout, keeping it (and its operand uses) alive so it can be
    /// placed elsewhere.
    pub fn detach_inst(&mut self, inst: Inst) {
        self.edits += 1;
        let Some(block) = self.insts[inst].block.expand() else { return };
        let (prev, next) = (self.insts[inst].prev, self.insts[inst].next);
        match prev.expand() {
            Some(p) => self.insts[p].next = next,
            None => self.blocks[block].first = next,
        }
        match next.expand() {
            Some(n) => self.insts[n].prev = prev,
            None => self.blocks[block].last = prev,
        }
        let node = &mut self.insts[inst];
        node.block = None.into();
        node.prev = None.into();
        node.next = None.into();
        if node.data.op.is_terminator() {
            self.cfg_epoch = fresh_cfg_epoch();
        }
    }

    /// Removes `inst` for good: out of the layout and out of its operands' use lists. Its
    /// result must have no remaining uses.
    pub fn remove_inst(&mut self, inst: Inst) {
        self.edits += 1;
        self.detach_inst(inst);
        debug_assert!(
            self.result(inst).is_none_or(|v| self.users[v].iter().all(|&u| u == inst)),
            "remove_inst: result of {inst} still used"
        );
        let args = std::mem::take(&mut self.insts[inst].data.args);
        for a in args {
            self.remove_user(a, inst);
        }
        self.insts[inst].data.targets.clear();
    }

    /// Removes every instruction of `insts` for good, like [`Function::remove_inst`] on each,
    /// in time linear in the use lists involved: removing the users of a value one by one
    /// searches its use list each time, which is quadratic for a value with many users (an
    /// alloca loaded and stored thousands of times).
    pub fn remove_insts(&mut self, insts: &[Inst]) {
        self.edits += 1;
        let mut removed: SecondaryMap<Inst, bool> = SecondaryMap::new();
        let mut operands: Vec<Value> = Vec::new();
        for &inst in insts {
            if std::mem::replace(&mut removed[inst], true) {
                continue;
            }
            self.detach_inst(inst);
            operands.extend(std::mem::take(&mut self.insts[inst].data.args));
            self.insts[inst].data.targets.clear();
        }
        operands.sort_unstable();
        operands.dedup();
        for v in operands {
            if self.tracks_uses(v) {
                self.users[v].retain(|u| !removed[*u]);
            }
        }
        debug_assert!(
            insts.iter().all(|&i| self.result(i).is_none_or(|v| self.users[v].iter().all(|u| removed[*u]))),
            "remove_insts: a result is still used"
        );
    }

    /// Creates an instruction and appends it to `block`; returns its result (if any) and the
    /// instruction.
    pub fn append(&mut self, block: Block, data: InstData) -> (Inst, Option<Value>) {
        self.edits += 1;
        let inst = self.create_inst(data);
        self.append_inst(block, inst);
        (inst, self.result(inst))
    }

    /// Creates a value-producing instruction and appends it to `block`; returns the value.
    pub fn append_value(&mut self, block: Block, data: InstData) -> Value {
        self.edits += 1;
        let (_, v) = self.append(block, data);
        v.expect("append_value: instruction has no result")
    }

    /// Creates a value-producing instruction and inserts it before `pos`; returns the value.
    pub fn insert_value_before(&mut self, pos: Inst, data: InstData) -> Value {
        self.edits += 1;
        let inst = self.create_inst(data);
        self.insert_inst_before(pos, inst);
        self.result(inst).expect("insert_value_before: instruction has no result")
    }

    // ----- blocks -----------------------------------------------------------------------------

    /// Creates a block and appends it to the layout.
    pub fn create_block(&mut self) -> Block {
        self.edits += 1;
        let b = self.blocks.push(BlockNode { live: true, ..Default::default() });
        self.layout.push(b);
        self.cfg_epoch = fresh_cfg_epoch();
        b
    }

    /// Removes a block from the layout together with its instructions. Remaining uses of
    /// their results (only possible from other dead code) become `undef`; phis elsewhere that
    /// name this block as a predecessor must be fixed by the caller.
    pub fn remove_block(&mut self, block: Block) {
        self.edits += 1;
        for inst in self.block_insts_vec(block) {
            if let Some(v) = self.result(inst)
                && self.has_uses(v)
            {
                let undef = self.undef(self.values[v].ty);
                self.replace_all_uses(v, undef);
            }
        }
        while let Some(inst) = self.blocks[block].last.expand() {
            self.remove_inst(inst);
        }
        self.blocks[block].live = false;
        self.layout.retain(|&b| b != block);
        self.cfg_epoch = fresh_cfg_epoch();
    }

    /// Blocks in layout order; the first is the entry.
    pub fn layout(&self) -> &[Block] {
        &self.layout
    }

    /// Sets a new layout order (must be a permutation of the live blocks, entry first).
    pub fn set_layout(&mut self, order: Vec<Block>) {
        self.edits += 1;
        debug_assert_eq!(order.len(), self.layout.len());
        self.layout = order;
        self.cfg_epoch = fresh_cfg_epoch();
    }

    pub fn entry(&self) -> Block {
        self.layout[0]
    }

    pub fn is_block_live(&self, b: Block) -> bool {
        self.blocks.get(b).is_some_and(|n| n.live)
    }

    /// Number of block slots ever allocated (for sizing side tables).
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    pub fn first_inst(&self, b: Block) -> Option<Inst> {
        self.blocks[b].first.expand()
    }

    pub fn last_inst(&self, b: Block) -> Option<Inst> {
        self.blocks[b].last.expand()
    }

    /// The block's terminator (its last instruction, if that is a terminator).
    pub fn terminator(&self, b: Block) -> Option<Inst> {
        self.last_inst(b).filter(|&i| self.opcode(i).is_terminator())
    }

    /// Successors of `b` (from its terminator; possibly with repeats, e.g. `br c, b1, b1`).
    pub fn successors(&self, b: Block) -> &[Block] {
        match self.terminator(b) {
            Some(t) => self.targets(t),
            None => &[],
        }
    }

    /// Iterates over the instructions of a block. Do not mutate the block while iterating;
    /// collect with [`Function::block_insts_vec`] or walk with `next_inst` instead.
    pub fn block_insts(&self, b: Block) -> InstIter<'_> {
        InstIter { func: self, next: self.blocks[b].first.expand() }
    }

    pub fn block_insts_vec(&self, b: Block) -> Vec<Inst> {
        self.block_insts(b).collect()
    }

    /// The leading phis of a block.
    pub fn block_phis(&self, b: Block) -> impl Iterator<Item = Inst> + '_ {
        self.block_insts(b).take_while(move |&i| self.opcode(i) == Opcode::Phi)
    }

    /// Every placed instruction, block by block in layout order.
    pub fn all_insts(&self) -> impl Iterator<Item = (Block, Inst)> + '_ {
        self.layout.iter().flat_map(move |&b| self.block_insts(b).map(move |i| (b, i)))
    }

    /// Number of placed instructions.
    pub fn inst_count(&self) -> usize {
        self.layout.iter().map(|&b| self.block_insts(b).count()).sum()
    }

    /// Identifies the current CFG state: replaced by a fresh, process-wide unique number on
    /// every CFG-changing mutation.
    pub fn cfg_epoch(&self) -> u64 {
        self.cfg_epoch
    }

    /// Changes whenever the function's body is edited (any `&mut self` method of
    /// `Function`) or the object is replaced by another (see `Identity`). The
    /// public signature fields (`name`, `params`, `ret`) are not covered: compare them too.
    /// The pass manager verifies only the functions whose stamp moved.
    pub fn edit_stamp(&self) -> (u64, u64) {
        (self.identity.0, self.edits)
    }

    /// Rewrites every edge `from → old` to `from → new` in `from`'s terminator.
    pub fn retarget_edge(&mut self, from: Block, old: Block, new: Block) {
        self.edits += 1;
        if let Some(t) = self.terminator(from) {
            for i in 0..self.targets(t).len() {
                if self.targets(t)[i] == old {
                    self.set_target(t, i, new);
                }
            }
        }
    }

    /// In every phi of `block`, renames the incoming block `old` to `new`.
    pub fn rename_phi_pred(&mut self, block: Block, old: Block, new: Block) {
        self.edits += 1;
        let phis: SmallVec<[Inst; 8]> = self.block_phis(block).collect();
        for phi in phis {
            for i in 0..self.targets(phi).len() {
                if self.targets(phi)[i] == old {
                    self.set_target(phi, i, new);
                }
            }
        }
    }

    /// In every phi of `block`, removes the incoming entries from `pred`.
    pub fn remove_phi_pred(&mut self, block: Block, pred: Block) {
        self.edits += 1;
        let phis: SmallVec<[Inst; 8]> = self.block_phis(block).collect();
        for phi in phis {
            let mut i = 0;
            while i < self.targets(phi).len() {
                if self.targets(phi)[i] == pred {
                    self.remove_phi_incoming(phi, i);
                } else {
                    i += 1;
                }
            }
        }
    }
}

pub struct InstIter<'a> {
    func: &'a Function,
    next: Option<Inst>,
}

impl Iterator for InstIter<'_> {
    type Item = Inst;
    fn next(&mut self) -> Option<Inst> {
        let cur = self.next?;
        self.next = self.func.next_inst(cur);
        Some(cur)
    }
}

#[cfg(test)]
mod edit_stamp_tests {
    use super::*;

    #[test]
    fn the_edit_stamp_moves_on_every_edit_and_for_every_copy() {
        let mut f = Function::new("f", &[Type::I32], Type::I32);
        let entry = f.create_block();
        let x = f.params[0];
        f.append(entry, InstData::ret(Some(x)));
        let stamp = f.edit_stamp();
        // Reading leaves it alone.
        let _ = (f.inst_count(), f.layout().len(), f.users(x).len());
        assert_eq!(f.edit_stamp(), stamp);
        // A copy is another object: another stamp, and the original keeps its own.
        let copy = f.clone();
        assert_ne!(copy.edit_stamp(), stamp);
        assert_eq!(f.edit_stamp(), stamp);
        // Any edit, even one that only interns a constant.
        f.iconst(7);
        assert_ne!(f.edit_stamp(), stamp);
        let stamp = f.edit_stamp();
        let last = f.last_inst(entry).expect("ret");
        f.detach_inst(last);
        assert_ne!(f.edit_stamp(), stamp);
    }
}
