//! Physical registers of the target and the register-allocation environment.
//!
//! Conventions (AAPCS-VFP, as used by `arm-linux-gnueabihf`):
//! * `r0`–`r3`: arguments and results, caller-saved; `r4`–`r11`: callee-saved;
//!   `r12` (`ip`): intra-procedure scratch, caller-saved; `r13` = `sp`; `r14` = `lr`.
//! * `s0`–`s15` (= `d0`–`d7`): arguments and results, caller-saved; `s16`–`s31`
//!   (= `d8`–`d15`): callee-saved; `d16`–`d31`: caller-saved.
//!
//! Reservations of this back end:
//! * `r12` (`ip`) is the back end's scratch register *inside* the expansion of a single
//!   machine instruction: stack offsets beyond an instruction's immediate range, frame
//!   addresses that are not encodable immediates. Most functions never need that (small
//!   frames), so `ip` is first offered to the allocator as an ordinary caller-saved register;
//!   only when the laid-out frame turns out to need the scratch is the function allocated
//!   again with `ip` reserved (see [`super::compile_module`]). The prologue and epilogue may
//!   use `ip` either way (nothing lives in it there). `regalloc2` gets no dedicated scratch
//!   register: for a cyclic parallel move it borrows a free register itself.
//! * `lr` *is* allocatable (as a non-preferred register). A function that allocates it or
//!   makes a call pushes it in the prologue and returns with `pop {…, pc}`.
//! * No frame pointer: all frame accesses are `sp`-relative (`sp` is fixed after the
//!   prologue), so `r11` is an ordinary callee-saved register.
//! * `d16` is the private scratch register for the single→double conversion of `putf`'s
//!   variadic float arguments; `d16`–`d31` are never allocated (only `s0`–`s31` are).

use regalloc2::{MachineEnv, PReg, PRegSet, RegClass};

pub const IP: u8 = 12;
pub const SP: u8 = 13;
pub const LR: u8 = 14;
pub const PC: u8 = 15;

/// Core register `r{n}`.
pub fn gpr(n: u8) -> PReg {
    PReg::new(usize::from(n), RegClass::Int)
}

/// Single-precision VFP register `s{n}`.
pub fn spr(n: u8) -> PReg {
    PReg::new(usize::from(n), RegClass::Float)
}

/// Assembly name of a physical register.
pub fn name(p: PReg) -> String {
    let mut s = String::new();
    let _ = write_name(&mut s, p);
    s
}

/// Writes [`name`] of `p` to `out` (the emitter writes names straight into the assembly).
pub fn write_name(out: &mut impl std::fmt::Write, p: PReg) -> std::fmt::Result {
    match p.class() {
        RegClass::Int => match p.hw_enc() as u8 {
            IP => out.write_str("ip"),
            SP => out.write_str("sp"),
            LR => out.write_str("lr"),
            PC => out.write_str("pc"),
            n => write!(out, "r{n}"),
        },
        RegClass::Float | RegClass::Vector => write!(out, "s{}", p.hw_enc()),
    }
}

/// Registers a call may overwrite (besides its results): caller-saved registers that the
/// allocator can hand out (`d16`+ are never allocated, so they need no mention).
pub fn call_clobbers() -> PRegSet {
    let mut set = PRegSet::empty();
    for r in [0, 1, 2, 3, IP, LR] {
        set.add(gpr(r));
    }
    for s in 0..16 {
        set.add(spr(s));
    }
    set
}

/// True for registers a function must preserve for its caller.
pub fn is_callee_saved(p: PReg) -> bool {
    match p.class() {
        RegClass::Int => (4..=11).contains(&(p.hw_enc() as u8)),
        RegClass::Float | RegClass::Vector => p.hw_enc() >= 16,
    }
}

/// The allocation environment: caller-saved registers are preferred (free in leaf code),
/// callee-saved ones (a one-time push/pop) are the fallback. `ip` is allocatable unless
/// the function needs it as the emission scratch.
pub fn machine_env(ip_allocatable: bool) -> MachineEnv {
    let mut int_pref = PRegSet::empty();
    let mut int_other = PRegSet::empty();
    for r in 0..4 {
        int_pref.add(gpr(r));
    }
    if ip_allocatable {
        int_other.add(gpr(IP));
    }
    for r in 4..12 {
        int_other.add(gpr(r));
    }
    int_other.add(gpr(LR));
    let mut float_pref = PRegSet::empty();
    let mut float_other = PRegSet::empty();
    for s in 0..16 {
        float_pref.add(spr(s));
    }
    for s in 16..32 {
        float_other.add(spr(s));
    }
    MachineEnv {
        preferred_regs_by_class: [int_pref, float_pref, PRegSet::empty()],
        non_preferred_regs_by_class: [int_other, float_other, PRegSet::empty()],
        scratch_by_class: [None, None, None],
        fixed_stack_slots: Vec::new(),
    }
}
