//! Frame layout, prologue and epilogue.
//!
//! After the prologue `sp` stays fixed, and every stack object is addressed relative to it:
//!
//! ```text
//!   higher addresses
//!   ┌──────────────────────────────┐
//!   │ incoming stack arguments     │  ← caller's sp            (Incoming)
//!   ├──────────────────────────────┤
//!   │ push {r4-r11 used, lr}       │
//!   │ vpush {d8-dN}                │  (callee-saved s16–s31 in use)
//!   ├──────────────────────────────┤
//!   │ alloca areas (small first)   │                           (Alloca)
//!   │ spill slots (4 bytes each)   │                           (Spill)
//!   │ outgoing stack arguments     │  ← sp                     (Outgoing)
//!   └──────────────────────────────┘
//! ```
//!
//! Only the callee-saved registers the code mentions are saved; `lr` is saved when the
//! function calls or allocates it, and then the epilogue returns with `pop {…, pc}`.
//! `vpush` needs a contiguous range, so `d8` up to the highest used callee-saved D register
//! is saved. The total (`push` + `vpush` + locals) is a multiple of 8 so `sp` stays 8-byte
//! aligned at calls; when there are no locals, an odd `push` list is padded with one more
//! register instead of a separate `sub sp`. Small objects sit closest to `sp` so their offsets
//! fit the load/store immediates; anything beyond is reached through `ip` by the emitter.

use std::fmt::Write;

use super::BackendError;
use super::imm::is_arm_imm;
use super::mir::{FrameObj, PFunction};
use super::regs::{self, LR};

/// Largest frame accepted (1 GiB; `qemu-arm`'s default stack is 8 MiB anyway).
const MAX_FRAME: u64 = 1 << 30;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameLayout {
    /// Core registers pushed by the prologue, ascending (may include `lr`).
    pub saved_gprs: Vec<u8>,
    /// D registers `d8..=dN` pushed by the prologue, as `N` (`None`: no `vpush`).
    pub saved_dregs_last: Option<u8>,
    /// Bytes reserved below the saved registers (`sub sp, sp, #locals`).
    pub locals: u32,
    spill_base: u32,
    alloca_offsets: Vec<u32>,
    incoming_base: u32,
    /// Where the prologue goes when `arm-shrink-wrap` moved it off the entry: the region's
    /// start and the blocks inside, as positions in the function's block list (see
    /// [`super::shrinkwrap`]); returns outside it are a bare `bx lr`.
    pub wrap: Option<Region>,
}

/// The blocks that run with the frame set up: `start` and everything it dominates, as
/// positions of the block list they were computed on (found by [`super::shrinkwrap`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub start: usize,
    pub inside: Vec<bool>,
}

impl FrameLayout {
    /// Lays out the frame; fails when it would not fit the address space comfortably.
    pub fn compute(pf: &PFunction) -> Result<FrameLayout, BackendError> {
        let mentioned = pf.mentioned_regs();
        let mut saved_gprs: Vec<u8> = (4..=11).filter(|&r| mentioned.contains(regs::gpr(r))).collect();
        if pf.frame.has_calls || mentioned.contains(regs::gpr(LR)) {
            saved_gprs.push(LR);
        }
        let saved_dregs_last = (16..32).filter(|&s| mentioned.contains(regs::spr(s))).map(|s| s / 2).max();
        let dregs_bytes = saved_dregs_last.map_or(0, |last| 8 * u32::from(last - 7));

        let outgoing = pf.frame.outgoing.next_multiple_of(8);
        let spill_base = outgoing;
        let mut next = u64::from(spill_base) + 4 * u64::from(pf.num_spill_slots);
        let mut order: Vec<usize> = (0..pf.frame.allocas.len()).collect();
        order.sort_by_key(|&i| (pf.frame.allocas[i], i));
        let mut alloca_offsets = vec![0; pf.frame.allocas.len()];
        for i in order {
            alloca_offsets[i] = u32::try_from(next).unwrap_or(u32::MAX);
            next += u64::from(pf.frame.allocas[i].next_multiple_of(4));
        }
        if next > MAX_FRAME {
            return Err(BackendError::InvalidIr(format!(
                "{}: stack frame of {next} bytes is too large (limit {MAX_FRAME})",
                pf.sym
            )));
        }
        let mut locals = next as u32;
        if locals == 0 && saved_gprs.len() % 2 == 1 {
            match (4..=11).find(|r| !saved_gprs.contains(r)) {
                Some(pad) => {
                    saved_gprs.push(pad);
                    saved_gprs.sort_unstable();
                }
                None => locals = 4,
            }
        }
        let push_bytes = 4 * saved_gprs.len() as u32;
        while !(locals + push_bytes).is_multiple_of(8) {
            locals += 4;
        }
        Ok(FrameLayout {
            incoming_base: locals + dregs_bytes + push_bytes,
            saved_gprs,
            saved_dregs_last,
            locals,
            spill_base,
            alloca_offsets,
            wrap: None,
        })
    }

    /// Whether the prologue does anything (saves a register or reserves stack).
    pub fn has_prologue(&self) -> bool {
        !self.saved_gprs.is_empty() || self.saved_dregs_last.is_some() || self.locals > 0
    }

    /// Whether the block at `position` runs with the frame set up.
    pub fn in_frame(&self, position: usize) -> bool {
        self.wrap.as_ref().is_none_or(|w| w.inside[position])
    }

    /// Offset of a stack object from `sp` (after the prologue).
    pub fn offset(&self, obj: FrameObj) -> i64 {
        i64::from(match obj {
            FrameObj::Alloca(i) => self.alloca_offsets[i as usize],
            FrameObj::Spill(i) => self.spill_base + 4 * i,
            FrameObj::Incoming(off) => self.incoming_base + off,
            FrameObj::Outgoing(off) => off,
        })
    }

    fn reg_list(&self, for_return: bool) -> String {
        let names: Vec<String> = self
            .saved_gprs
            .iter()
            .map(|&r| if r == LR && for_return { "pc".to_string() } else { regs::name(regs::gpr(r)) })
            .collect();
        names.join(", ")
    }

    fn dreg_range(&self) -> Option<String> {
        self.saved_dregs_last.map(|last| if last == 8 { "d8".to_string() } else { format!("d8-d{last}") })
    }

    pub fn prologue(&self, out: &mut String) {
        if !self.saved_gprs.is_empty() {
            let _ = writeln!(out, "\tpush\t{{{}}}", self.reg_list(false));
        }
        if let Some(range) = self.dreg_range() {
            let _ = writeln!(out, "\tvpush\t{{{range}}}");
        }
        adjust_sp(out, "sub", self.locals);
    }

    pub fn epilogue(&self, out: &mut String) {
        adjust_sp(out, "add", self.locals);
        if let Some(range) = self.dreg_range() {
            let _ = writeln!(out, "\tvpop\t{{{range}}}");
        }
        if !self.saved_gprs.is_empty() {
            let _ = writeln!(out, "\tpop\t{{{}}}", self.reg_list(true));
        }
        if !self.saved_gprs.contains(&LR) {
            let _ = writeln!(out, "\tbx\tlr");
        }
    }
}

fn adjust_sp(out: &mut String, op: &str, bytes: u32) {
    if bytes == 0 {
        return;
    }
    if is_arm_imm(bytes) {
        let _ = writeln!(out, "\t{op}\tsp, sp, #{bytes}");
    } else {
        super::imm::load_imm(out, "ip", bytes);
        let _ = writeln!(out, "\t{op}\tsp, sp, ip");
    }
}
