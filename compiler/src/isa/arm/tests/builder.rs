//! A small test-only layer over the IR's `Function` API for writing programs by hand.

use crate::frontend::hir::Builtin;
use crate::ir::{Block, Callee, FloatCC, FuncRef, Function, Inst, InstData, IntCC, Module, Opcode, Type, Value};

pub struct FnBuilder {
    pub f: Function,
    pub cur: Block,
}

impl FnBuilder {
    pub fn new(name: &str, params: &[Type], ret: Type) -> FnBuilder {
        let mut f = Function::new(name, params, ret);
        let cur = f.create_block();
        FnBuilder { f, cur }
    }

    pub fn param(&self, i: usize) -> Value {
        self.f.params[i]
    }

    pub fn block(&mut self) -> Block {
        self.f.create_block()
    }

    pub fn switch(&mut self, b: Block) {
        self.cur = b;
    }

    pub fn int(&mut self, v: i32) -> Value {
        self.f.iconst(v)
    }

    pub fn float(&mut self, v: f32) -> Value {
        self.f.fconst(v)
    }

    fn value(&mut self, data: InstData) -> Value {
        self.f.append_value(self.cur, data)
    }

    pub fn bin(&mut self, op: Opcode, a: Value, b: Value) -> Value {
        let ty = self.f.value_type(a);
        self.value(InstData::binary(op, a, b, ty))
    }

    pub fn add(&mut self, a: Value, b: Value) -> Value {
        self.bin(Opcode::Add, a, b)
    }
    pub fn sub(&mut self, a: Value, b: Value) -> Value {
        self.bin(Opcode::Sub, a, b)
    }
    pub fn mul(&mut self, a: Value, b: Value) -> Value {
        self.bin(Opcode::Mul, a, b)
    }
    /// `a % m + k` for constants `m`, `k` (a value in a known range).
    pub fn srem_const(&mut self, a: Value, m: i32, k: Value) -> Value {
        let mv = self.int(m);
        let r = self.bin(Opcode::SRem, a, mv);
        self.add(r, k)
    }
    pub fn fadd(&mut self, a: Value, b: Value) -> Value {
        self.bin(Opcode::FAdd, a, b)
    }
    pub fn fsub(&mut self, a: Value, b: Value) -> Value {
        self.bin(Opcode::FSub, a, b)
    }
    pub fn fmul(&mut self, a: Value, b: Value) -> Value {
        self.bin(Opcode::FMul, a, b)
    }
    pub fn fdiv(&mut self, a: Value, b: Value) -> Value {
        self.bin(Opcode::FDiv, a, b)
    }
    pub fn fneg(&mut self, a: Value) -> Value {
        self.value(InstData::unary(Opcode::FNeg, a, Type::F32))
    }
    pub fn icmp(&mut self, cc: IntCC, a: Value, b: Value) -> Value {
        self.value(InstData::icmp(cc, a, b))
    }
    pub fn fcmp(&mut self, cc: FloatCC, a: Value, b: Value) -> Value {
        self.value(InstData::fcmp(cc, a, b))
    }
    pub fn zext(&mut self, a: Value) -> Value {
        self.value(InstData::unary(Opcode::Zext, a, Type::I32))
    }
    pub fn sitofp(&mut self, a: Value) -> Value {
        self.value(InstData::unary(Opcode::SiToFp, a, Type::F32))
    }
    pub fn fptosi(&mut self, a: Value) -> Value {
        self.value(InstData::unary(Opcode::FpToSi, a, Type::I32))
    }
    pub fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        let ty = self.f.value_type(a);
        self.value(InstData::new(Opcode::Select, &[c, a, b], &[], ty))
    }
    pub fn alloca(&mut self, elem: Type, count: u32) -> Value {
        self.value(InstData::alloca(elem, count))
    }
    pub fn load(&mut self, addr: Value, ty: Type) -> Value {
        self.value(InstData::load(addr, ty))
    }
    pub fn store(&mut self, addr: Value, v: Value) {
        self.f.append(self.cur, InstData::store(addr, v));
    }
    pub fn gep(&mut self, base: Value, index: Value, scale: u32) -> Value {
        self.value(InstData::gep(base, index, scale))
    }
    pub fn memzero(&mut self, addr: Value, words: u32) {
        self.f.append(self.cur, InstData::new(Opcode::MemZero { words }, &[addr], &[], Type::Void));
    }

    /// A phi at the current position (create phis before other instructions of a block).
    pub fn phi(&mut self, ty: Type, incoming: &[(Block, Value)]) -> (Inst, Value) {
        let (inst, v) = self.f.append(self.cur, InstData::phi(ty, incoming));
        (inst, v.expect("phi has a result"))
    }
    pub fn add_incoming(&mut self, phi: Inst, b: Block, v: Value) {
        self.f.push_phi_incoming(phi, b, v);
    }

    pub fn call(&mut self, callee: Callee, args: &[Value], ret: Type) -> Option<Value> {
        self.f.append(self.cur, InstData::call(callee, args, ret)).1
    }
    pub fn call_fn(&mut self, f: FuncRef, args: &[Value], ret: Type) -> Option<Value> {
        self.call(Callee::Func(f), args, ret)
    }
    pub fn builtin(&mut self, b: Builtin, args: &[Value], ret: Type) -> Option<Value> {
        self.call(Callee::Builtin(b), args, ret)
    }
    pub fn putint(&mut self, v: Value) {
        self.builtin(Builtin::PutInt, &[v], Type::Void);
    }
    pub fn putch(&mut self, c: char) {
        let v = self.int(c as i32);
        self.builtin(Builtin::PutCh, &[v], Type::Void);
    }
    pub fn putfloat(&mut self, v: Value) {
        self.builtin(Builtin::PutFloat, &[v], Type::Void);
    }
    pub fn getint(&mut self) -> Value {
        self.builtin(Builtin::GetInt, &[], Type::I32).expect("getint returns")
    }

    pub fn jump(&mut self, b: Block) {
        self.f.append(self.cur, InstData::jump(b));
    }
    pub fn br(&mut self, c: Value, t: Block, e: Block) {
        self.f.append(self.cur, InstData::br(c, t, e));
    }
    pub fn ret(&mut self, v: Option<Value>) {
        self.f.append(self.cur, InstData::ret(v));
    }

    /// A counted loop `for i in from..to { body(i) }` with the current block falling into it;
    /// extra loop-carried values are given as `(type, initial)` and updated by `body`.
    /// Returns the final carried values; afterwards the builder is in the exit block.
    pub fn counted_loop(
        &mut self,
        from: Value,
        to: Value,
        carried: &[(Type, Value)],
        body: impl FnOnce(&mut FnBuilder, Value, &[Value]) -> Vec<Value>,
    ) -> Vec<Value> {
        let pre = self.cur;
        let header = self.block();
        let body_b = self.block();
        let exit = self.block();
        self.jump(header);
        self.switch(header);
        let (iphi, i) = self.phi(Type::I32, &[(pre, from)]);
        let phis: Vec<(Inst, Value)> = carried.iter().map(|&(ty, init)| self.phi(ty, &[(pre, init)])).collect();
        let c = self.icmp(IntCC::Lt, i, to);
        self.br(c, body_b, exit);
        self.switch(body_b);
        let vals: Vec<Value> = phis.iter().map(|&(_, v)| v).collect();
        let updated = body(self, i, &vals);
        let one = self.int(1);
        let next = self.add(i, one);
        let latch = self.cur;
        self.jump(header);
        self.add_incoming(iphi, latch, next);
        for (&(phi, _), &u) in phis.iter().zip(&updated) {
            self.add_incoming(phi, latch, u);
        }
        self.switch(exit);
        vals
    }

    pub fn finish(self) -> Function {
        self.f
    }
}

/// Adds a function with a placeholder body to reserve its `FuncRef` (for recursion and
/// calls before definition); replace it with [`define`].
pub fn declare(m: &mut Module, name: &str, params: &[Type], ret: Type) -> FuncRef {
    let mut f = Function::new(name, params, ret);
    let b = f.create_block();
    f.append(b, InstData::new(Opcode::Unreachable, &[], &[], Type::Void));
    m.add_function(f)
}

pub fn define(m: &mut Module, r: FuncRef, f: Function) {
    *m.func_mut(r) = f;
}
