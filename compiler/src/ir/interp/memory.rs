//! The interpreter's memory: objects (globals and stack slots) of 4-byte words.
//!
//! A pointer is `(object id << 32) | byte offset`; offsets wrap at 32 bits, so a pointer
//! stepped out of its object and back is still fine, while an access outside
//! `[0, 4·words)` is caught. Every object's words live in one arena of `u64`s holding a
//! word as a register holds it: the 32-bit value with a zero high half, or `UNDEF` for a
//! word not initialised (never written, or last written with `undef`). Global words start
//! initialised (zero unless the initialiser says otherwise), stack words become
//! uninitialised each time their `alloca` executes.
//!
//! Keeping the "initialised" state in the word itself costs twice the memory of a `u32`
//! arena with an init bit per word beside it (as before), but a load is one read of one
//! cache line and a store one write, where the bitmap took a second read (and a
//! read-modify-write to store) and kept a second cache line busy. Measured on the
//! interpreter benchmark (`benches/interp.rs`): the performance cases ran about a third
//! faster, generated programs about 5%; a byte per word beside a `u32` arena gained a
//! fraction of that. The price shows in programs that touch huge arrays: twice the page
//! faults (the competition's `65_color`, with a 53 MB array, runs 5% slower).
//!
//! Globals are objects `0..G`. Stack objects are pushed at function entry (one per `alloca`
//! of the function, as a real frame has one slot per alloca) and popped on return, so the
//! arena and the object table are stacks; a pointer to a popped object faults unless a
//! newer frame has reused its id (SysY cannot create such dangling pointers; only a wrong
//! transformation could).

use super::{HI, UNDEF};
use crate::runtime::TrapKind;

/// The object id of an `undef` pointer.
pub(super) const UNDEF_OBJECT: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
pub(super) struct Object {
    /// Index of the first word in the arena.
    base: u32,
    words: u32,
    writable: bool,
}

pub(super) type MemResult<T> = Result<T, (TrapKind, String)>;

#[derive(Clone, Debug, Default)]
pub(super) struct Memory {
    /// Words as register values: the `u32` zero-extended, or `UNDEF` when uninitialised.
    /// Zeroed memory is initialised zero, so the arena can be allocated zeroed.
    words: Vec<u64>,
    /// Words in use (the arena vectors keep their high-water length).
    top: usize,
    /// Arena words from here on have never belonged to an object, so they are still zero.
    fresh: usize,
    objects: Vec<Object>,
}

impl Memory {
    /// An empty memory whose arena starts with `words` zero words, allocated zeroed in one
    /// go (so the system provides them lazily: a large global array costs nothing until it
    /// is used). More than the address space holds is not preallocated.
    pub(super) fn with_arena(words: usize) -> Memory {
        let words = if words <= u32::MAX as usize { words } else { 0 };
        Memory { words: vec![0; words], ..Memory::default() }
    }

    /// Adds an object, initialised from `data` (zero beyond it) or uninitialised.
    pub(super) fn push(&mut self, words: u32, writable: bool, initialised: bool) -> Option<u32> {
        let id = u32::try_from(self.objects.len()).ok().filter(|&id| id != UNDEF_OBJECT)?;
        let base = self.top;
        let end = base.checked_add(words as usize)?;
        if end > u32::MAX as usize {
            return None;
        }
        if end > self.words.len() {
            self.words.resize(end, 0);
        }
        self.top = end;
        self.objects.push(Object { base: base as u32, words, writable });
        if initialised {
            // Only words that belonged to an object before can be other than zero (`base` is
            // at most `fresh`): clearing just those spares zeroing large global arrays a
            // second time.
            self.words[base..end.min(self.fresh)].fill(0);
        }
        self.fresh = self.fresh.max(end);
        Some(id)
    }

    pub(super) fn num_objects(&self) -> u32 {
        self.objects.len() as u32
    }

    pub(super) fn top(&self) -> usize {
        self.top
    }

    /// Pops every object from `objects` on, and the arena back to `top`.
    pub(super) fn pop_to(&mut self, objects: u32, top: usize) {
        self.objects.truncate(objects as usize);
        self.top = top;
    }

    pub(super) fn write_initial(&mut self, object: u32, index: u32, bits: u32) {
        let o = self.objects[object as usize];
        if index < o.words {
            self.words[(o.base + index) as usize] = bits as u64;
        }
    }

    /// Pushes one uninitialised object per entry of `sizes` (a function's alloca slots) —
    /// or nothing, returning false, when they would not all fit in the object ids or the
    /// address space (the caller then pushes them one by one to find out which one fails).
    #[inline]
    pub(super) fn push_frame(&mut self, sizes: &[u32], total_words: u64) -> bool {
        if sizes.is_empty() {
            return true;
        }
        let ids_fit = self.objects.len() as u64 + sizes.len() as u64 <= UNDEF_OBJECT as u64;
        let end = self.top as u64 + total_words;
        if !ids_fit || end > u32::MAX as u64 {
            return false;
        }
        let end = end as usize;
        if end > self.words.len() {
            self.words.resize(end, 0);
        }
        let mut base = self.top as u32;
        self.objects.extend(sizes.iter().map(|&words| {
            let object = Object { base, words, writable: true };
            base += words;
            object
        }));
        self.top = end;
        self.fresh = self.fresh.max(end);
        true
    }

    /// Makes every word of a stack object uninitialised (its `alloca` executed again).
    pub(super) fn reset(&mut self, object: u32) {
        let o = self.objects[object as usize];
        self.words[o.base as usize..(o.base + o.words) as usize].fill(UNDEF);
    }

    /// Arena index of `count` words at `ptr`, checked.
    fn locate(&self, ptr: u64, count: u32) -> MemResult<(usize, &Object)> {
        let id = (ptr >> 32) as u32;
        if id == UNDEF_OBJECT {
            return Err((TrapKind::UninitRead, "memory access through an undef pointer".into()));
        }
        let Some(obj) = self.objects.get(id as usize) else {
            return Err((TrapKind::MemoryFault, format!("object {id} does not exist (dangling pointer)")));
        };
        let off = ptr as u32;
        if !off.is_multiple_of(4) {
            return Err((TrapKind::MemoryFault, format!("misaligned access at byte {off} of object {id}")));
        }
        let index = off / 4;
        if index >= obj.words || obj.words - index < count {
            return Err((
                TrapKind::OutOfBounds,
                format!("word {} (+{count}) of a {}-word object", off as i32 / 4, obj.words),
            ));
        }
        Ok(((obj.base + index) as usize, obj))
    }

    /// The fast path of [`Memory::locate`] for one word, used by every load and store: the
    /// arena index and the object, or `None` for a faulting access ([`Memory::fault`] then
    /// says why). The `undef` object id needs no test of its own: no object has it.
    #[inline(always)]
    fn word(&self, ptr: u64) -> Option<(usize, Object)> {
        let obj = *self.objects.get((ptr >> 32) as usize)?;
        let off = ptr as u32;
        let index = off / 4;
        (off.is_multiple_of(4) && index < obj.words).then_some(((obj.base + index) as usize, obj))
    }

    /// Why a one-word access at `ptr` faults (kept out of line: the hot paths only test).
    #[cold]
    #[inline(never)]
    fn fault(&self, ptr: u64) -> (TrapKind, String) {
        match self.locate(ptr, 1) {
            Err(e) => e,
            Ok(_) => unreachable!("`word` refused an access `locate` accepts"),
        }
    }

    /// Loads a word as a register value: `UNDEF` when it was never written (or last written
    /// with `undef`).
    pub(super) fn load(&self, ptr: u64) -> MemResult<u64> {
        self.load_fast(ptr).ok_or_else(|| self.fault(ptr))
    }

    /// [`Memory::load`] without the reason of a fault: `None` when the access faults.
    #[inline(always)]
    pub(super) fn load_fast(&self, ptr: u64) -> Option<u64> {
        let (w, _) = self.word(ptr)?;
        Some(self.words[w])
    }

    /// Stores a register value: its low half, or an uninitialised word for an `undef` (a
    /// pointer's object id, in the high half, is not kept).
    pub(super) fn store(&mut self, ptr: u64, value: u64) -> MemResult<()> {
        if self.store_fast(ptr, value) {
            return Ok(());
        }
        match self.word(ptr) {
            Some(_) => Err(store_to_constant()),
            None => Err(self.fault(ptr)),
        }
    }

    /// [`Memory::store`] without the reason of a fault: false (and nothing stored) when the
    /// access faults or the object is a constant global.
    #[inline(always)]
    pub(super) fn store_fast(&mut self, ptr: u64, value: u64) -> bool {
        match self.word(ptr) {
            Some((w, obj)) if obj.writable => {
                self.words[w] = if value & UNDEF == UNDEF { UNDEF } else { value & !HI };
                true
            }
            _ => false,
        }
    }

    /// Sets `count` words at `ptr` to zero (initialised).
    pub(super) fn zero(&mut self, ptr: u64, count: u32) -> MemResult<()> {
        if count == 0 {
            return Ok(());
        }
        let (w, obj) = self.locate(ptr, count)?;
        if !obj.writable {
            return Err((TrapKind::MemoryFault, "memzero of a constant global".into()));
        }
        self.words[w..w + count as usize].fill(0);
        Ok(())
    }
}

#[cold]
#[inline(never)]
fn store_to_constant() -> (TrapKind, String) {
    (TrapKind::MemoryFault, "store to a constant global".into())
}
