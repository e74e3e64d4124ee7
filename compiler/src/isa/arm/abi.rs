//! Argument passing of the AAPCS with the VFP variant (`arm-linux-gnueabihf`).
//!
//! Fixed-argument calls (all SysY functions and runtime built-ins except `putf`):
//! integers and pointers take `r0`–`r3` in order, floats take `s0`–`s15` in order (with only
//! single-precision arguments the VFP back-filling rule degenerates to "next free register").
//! Whatever does not fit goes to the stack in argument order, 4 bytes each, starting at the
//! caller's `sp`; once a float has gone to the stack no later float uses a register (they are
//! all taken anyway).
//!
//! Variadic calls (`putf(fmt, ...)`): the base standard applies to every argument. Floats are
//! promoted to double; a double needs an even core-register pair (`r0:r1` or `r2:r3`, the
//! next even register after rounding up) or else an 8-byte aligned stack slot, and once an
//! argument has gone to the stack, all later ones do too (the register file is "closed").

use regalloc2::PReg;

use super::regs::{gpr, spr};
use crate::ir::Type;

/// Where a fixed argument is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgLoc {
    Reg(PReg),
    /// Byte offset from the stack pointer at the call.
    Stack(u32),
}

/// Where an argument of a variadic call is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarArgLoc {
    /// A word (integer, pointer) in a core register.
    Reg(PReg),
    /// A word on the stack at this offset.
    Stack(u32),
    /// A float promoted to double, in the core register pair (low word first).
    RegPair(PReg, PReg),
    /// A float promoted to double, on the stack at this (8-aligned) offset.
    StackDouble(u32),
}

/// The locations of the arguments of a fixed-argument call and the stack bytes it needs.
pub fn fixed_args(types: &[Type]) -> (Vec<ArgLoc>, u32) {
    let (mut next_core, mut next_vfp, mut stack) = (0u8, 0u8, 0u32);
    let locs = types
        .iter()
        .map(|&ty| {
            if ty == Type::F32 {
                if next_vfp < 16 {
                    next_vfp += 1;
                    return ArgLoc::Reg(spr(next_vfp - 1));
                }
            } else if next_core < 4 {
                next_core += 1;
                return ArgLoc::Reg(gpr(next_core - 1));
            }
            stack += 4;
            ArgLoc::Stack(stack - 4)
        })
        .collect();
    (locs, stack)
}

/// The locations of the arguments of a variadic call whose first argument (the format
/// string) is fixed, and the stack bytes it needs. Float arguments are passed as doubles.
pub fn variadic_args(types: &[Type]) -> (Vec<VarArgLoc>, u32) {
    let (mut ncrn, mut nsaa) = (0u8, 0u32);
    let locs = types
        .iter()
        .map(|&ty| {
            if ty == Type::F32 {
                ncrn += ncrn % 2;
                if ncrn + 2 <= 4 {
                    ncrn += 2;
                    return VarArgLoc::RegPair(gpr(ncrn - 2), gpr(ncrn - 1));
                }
                ncrn = 4;
                nsaa = nsaa.next_multiple_of(8);
                nsaa += 8;
                VarArgLoc::StackDouble(nsaa - 8)
            } else {
                if ncrn < 4 {
                    ncrn += 1;
                    return VarArgLoc::Reg(gpr(ncrn - 1));
                }
                nsaa += 4;
                VarArgLoc::Stack(nsaa - 4)
            }
        })
        .collect();
    (locs, nsaa.next_multiple_of(8))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Type::{F32, I32, Ptr};

    #[test]
    fn fixed_mixed() {
        let types = [I32, F32, I32, I32, I32, I32, F32];
        let (locs, stack) = fixed_args(&types);
        assert_eq!(
            locs,
            vec![
                ArgLoc::Reg(gpr(0)),
                ArgLoc::Reg(spr(0)),
                ArgLoc::Reg(gpr(1)),
                ArgLoc::Reg(gpr(2)),
                ArgLoc::Reg(gpr(3)),
                ArgLoc::Stack(0),
                ArgLoc::Reg(spr(1)),
            ]
        );
        assert_eq!(stack, 4);
    }

    #[test]
    fn fixed_many_floats() {
        let types = vec![F32; 18];
        let (locs, stack) = fixed_args(&types);
        assert_eq!(locs[15], ArgLoc::Reg(spr(15)));
        assert_eq!(locs[16], ArgLoc::Stack(0));
        assert_eq!(locs[17], ArgLoc::Stack(4));
        assert_eq!(stack, 8);
    }

    #[test]
    fn variadic_double_alignment() {
        // putf(fmt, f): fmt in r0, r1 skipped, the double in r2:r3.
        let (locs, stack) = variadic_args(&[Ptr, F32]);
        assert_eq!(locs, vec![VarArgLoc::Reg(gpr(0)), VarArgLoc::RegPair(gpr(2), gpr(3))]);
        assert_eq!(stack, 0);
        // putf(fmt, i, i, f, i): the double cannot start at r3, goes to the stack, and the
        // trailing int follows it on the stack (the core registers are closed).
        let (locs, stack) = variadic_args(&[Ptr, I32, I32, F32, I32]);
        assert_eq!(
            locs,
            vec![
                VarArgLoc::Reg(gpr(0)),
                VarArgLoc::Reg(gpr(1)),
                VarArgLoc::Reg(gpr(2)),
                VarArgLoc::StackDouble(0),
                VarArgLoc::Stack(8),
            ]
        );
        assert_eq!(stack, 16);
        // putf(fmt, f, i, f): r2:r3, stack 0, stack 8 (aligned up from 4).
        let (locs, _) = variadic_args(&[Ptr, F32, I32, F32]);
        assert_eq!(
            locs,
            vec![
                VarArgLoc::Reg(gpr(0)),
                VarArgLoc::RegPair(gpr(2), gpr(3)),
                VarArgLoc::Stack(0),
                VarArgLoc::StackDouble(8),
            ]
        );
    }
}
