//! Addresses of variables and array elements.
//!
//! `a[i][j]` of `int a[N][M]` is `gep(gep(a, i * 4M), j * 4)`: one `gep` per index, each scaled
//! by its row stride in bytes ([`VarType::strides`] × 4); indices are evaluated left to right.
//! A constant index 0 adds nothing and emits no `gep`. Scales that do not fit the `u32` of a
//! `gep` (arrays of more than 2³⁰ elements, which no 32-bit target can hold anyway) are split
//! over several `gep`s of the same index, so the address is still exact.

use cranelift_entity::EntityRef;

use super::builder::{FnBuilder, Slot};
use crate::frontend::hir::{Place, VarRef, VarType};
use crate::ir::{GlobalRef, InstData, Type, Value};

/// Bytes per array element (`i32` and `f32` alike).
const ELEM_BYTES: u64 = 4;

impl FnBuilder<'_> {
    pub(super) fn var_type(&self, var: VarRef) -> &VarType {
        match var {
            VarRef::Global(g) => &self.program.globals[g.index()].ty,
            VarRef::Local(l) => &self.hfunc.locals[l.index()].ty,
        }
    }

    /// The base address of a variable (its first element), or `None` for a scalar parameter
    /// used directly (it has no address).
    fn base_address(&mut self, var: VarRef) -> Option<Value> {
        match var {
            VarRef::Global(g) => Some(self.func.global_addr(GlobalRef::new(g.index()))),
            VarRef::Local(l) => match self.slots[l.index()] {
                Slot::Memory(addr) => Some(addr),
                Slot::Direct(v) if self.func.value_type(v) == Type::Ptr => Some(v),
                Slot::Direct(_) => None,
            },
        }
    }

    /// The address a place names: a scalar, an element, or (with fewer indices than the rank)
    /// the first element of a sub-array.
    pub(super) fn address(&mut self, place: &Place) -> Value {
        let strides = self.var_type(place.var).strides();
        let mut addr = self
            .base_address(place.var)
            .expect("only scalar parameters lack an address, and they are read and written directly");
        for (index, &stride) in place.indices.iter().zip(&strides) {
            let i = self.value(index);
            addr = self.offset(addr, i, stride * ELEM_BYTES);
        }
        addr
    }

    /// `base + index * scale` bytes.
    pub(super) fn offset(&mut self, base: Value, index: Value, scale: u64) -> Value {
        if self.func.as_int_const(index) == Some(0) || scale == 0 {
            return base;
        }
        let mut addr = base;
        let mut remaining = scale;
        while remaining > 0 {
            let chunk = remaining.min(1 << 31);
            addr = self.ins(InstData::gep(addr, index, chunk as u32));
            remaining -= chunk;
        }
        addr
    }

    /// Reads a scalar place (a scalar variable or a fully indexed element).
    pub(super) fn load_place(&mut self, place: &Place, ty: Type) -> Value {
        if let VarRef::Local(l) = place.var
            && let Slot::Direct(v) = self.slots[l.index()]
            && place.indices.is_empty()
        {
            return v;
        }
        let addr = self.address(place);
        self.ins(InstData::load(addr, ty))
    }

    /// Writes a scalar place; the indices are evaluated before the value.
    pub(super) fn store_place(&mut self, place: &Place, value: &crate::frontend::hir::Expr) {
        let addr = self.address(place);
        let v = self.value(value);
        self.ins_void(InstData::store(addr, v));
    }
}
