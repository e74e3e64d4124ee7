//! A32 (ARM-state) instruction classification.
//!
//! Follows the top-level decode of ARM ARM (ARMv7-A/R, DDI 0406C) chapter A5,
//! and the VFP tables of A7.5/A7.8/A7.9, which T32 reuses through
//! [`decode_coprocessor`]. Assumes the ARMv7-A profile with the
//! virtualization/divide extensions (`sdiv`, `udiv`), VFPv4 and Advanced SIMD;
//! ARMv8 additions (`vrint*`, `crc32`, ...) decode as [`Flow::Undefined`].

use super::{Decoded, Flow, bit, bits, sign_extend, wrap_target};
use crate::class::InsnClass;

/// Classifies the A32 instruction `word` located at guest address `addr`
/// (needed only to resolve direct branch targets).
pub fn decode_a32(word: u32, addr: u64) -> Decoded {
    let cond = bits(word, 31, 28);
    if cond == 0b1111 {
        return unconditional(word, addr);
    }
    match bits(word, 27, 25) {
        0b000 | 0b001 => data_processing_and_misc(word),
        0b010 => load_store_word_byte(word),
        0b011 if !bit(word, 4) => load_store_word_byte(word),
        0b011 => media(word),
        0b100 => load_store_multiple(word),
        0b101 => {
            // B / BL (A8.8.18, A8.8.25): PC reads as the address + 8.
            let target = wrap_target(addr + 8, sign_extend(bits(word, 23, 0), 24) << 2);
            let class = if cond == 0b1110 {
                InsnClass::Branch
            } else {
                InsnClass::CondBranch
            };
            Decoded {
                class,
                flow: Flow::Direct {
                    target,
                    exchange: false,
                },
            }
        }
        _ => coprocessor_and_svc(word),
    }
}

/// A5.2: data processing, miscellaneous, multiplies, extra loads/stores.
fn data_processing_and_misc(word: u32) -> Decoded {
    let immediate = bit(word, 25);
    let op1 = bits(word, 24, 20);
    let op2 = bits(word, 7, 4);
    // op1 == 10xx0: the compare opcodes without S, reused for other things.
    let misc_space = op1 & 0b11001 == 0b10000;

    if immediate {
        if !misc_space {
            return data_processing_result(word, InsnClass::Alu);
        }
        return match op1 {
            // MOVW, MOVT.
            0b10000 | 0b10100 => Decoded::next(InsnClass::Alu),
            // MSR (immediate) and the hints NOP, YIELD, WFE, WFI, SEV, DBG.
            _ => Decoded::next(InsnClass::Other),
        };
    }
    if op2 == 0b1001 {
        return if op1 & 0b10000 == 0 {
            multiply(word)
        } else {
            synchronization(word)
        };
    }
    if op2 & 0b1001 == 0b1001 {
        return extra_load_store(word);
    }
    if !misc_space {
        if op2 & 0b0001 == 0 {
            // Register operand shifted by an immediate (A5.2.1).
            let shifted = bits(word, 11, 5) != 0; // imm5 or type non-zero
            let class = if shifted {
                InsnClass::AluShifted
            } else {
                InsnClass::Alu
            };
            return data_processing_result(word, class);
        }
        // Register-shifted register (A5.2.2); op2 == 0xx1 here.
        return Decoded::next(InsnClass::AluShifted);
    }
    if op2 & 0b1000 == 0 {
        return miscellaneous(word);
    }
    // Halfword multiply and multiply accumulate (A5.2.7); op2 == 1xx0.
    if bits(word, 22, 21) == 0b10 {
        Decoded::next(InsnClass::MulLong) // SMLAL<x><y>
    } else {
        Decoded::next(InsnClass::Mul)
    }
}

/// A data-processing instruction (register or immediate form): writing the
/// PC makes it an indirect branch, except for the compares, whose Rd field is
/// not a destination.
fn data_processing_result(word: u32, class: InsnClass) -> Decoded {
    let opcode = bits(word, 24, 21);
    let is_compare = (0b1000..=0b1011).contains(&opcode);
    if !is_compare && bits(word, 15, 12) == 15 {
        Decoded::indirect()
    } else {
        Decoded::next(class)
    }
}

/// A5.2.5: MUL, MLA, MLS, UMULL, UMLAL, SMULL, SMLAL, UMAAL.
fn multiply(word: u32) -> Decoded {
    match bits(word, 23, 20) {
        0b0000..=0b0011 | 0b0110 => Decoded::next(InsnClass::Mul),
        0b0100 | 0b1000..=0b1111 => Decoded::next(InsnClass::MulLong),
        _ => Decoded::undefined(),
    }
}

/// A5.2.10: SWP and the exclusive loads/stores.
fn synchronization(word: u32) -> Decoded {
    let op = bits(word, 23, 20);
    match op {
        0b0000 | 0b0100 => Decoded::next(InsnClass::Load), // SWP, SWPB
        0b1000..=0b1111 if op & 1 == 1 => Decoded::next(InsnClass::Load),
        0b1000..=0b1111 => Decoded::next(InsnClass::Store),
        _ => Decoded::undefined(),
    }
}

/// A5.2.8/A5.2.9: halfword, signed byte and doubleword loads/stores.
fn extra_load_store(word: u32) -> Decoded {
    let load = bit(word, 20);
    match bits(word, 6, 5) {
        0b01 if load => Decoded::next(InsnClass::Load), // LDRH
        0b01 => Decoded::next(InsnClass::Store),        // STRH
        0b10 => Decoded::next(InsnClass::Load),         // LDRSB / LDRD
        0b11 if load => Decoded::next(InsnClass::Load), // LDRSH
        _ => Decoded::next(InsnClass::Store),           // STRD
    }
}

/// A5.2.12: miscellaneous instructions.
fn miscellaneous(word: u32) -> Decoded {
    let op = bits(word, 22, 21);
    match (bits(word, 6, 4), op) {
        (0b000, _) => Decoded::next(InsnClass::Other), // MRS, MSR (register)
        (0b001, 0b01) => Decoded::indirect(),          // BX
        (0b001, 0b11) => Decoded::next(InsnClass::Alu), // CLZ
        (0b010, 0b01) | (0b011, 0b01) => Decoded::indirect(), // BXJ, BLX (register)
        (0b101, _) => Decoded::next(InsnClass::Alu),   // QADD, QSUB, QDADD, QDSUB
        (0b110, 0b11) => Decoded::stop(),              // ERET
        (0b111, 0b01..=0b11) => Decoded::stop(),       // BKPT, HVC, SMC
        _ => Decoded::undefined(),
    }
}

/// A5.3: LDR, STR, LDRB, STRB (immediate and register offsets, unprivileged
/// forms included). A word load into the PC is a branch.
fn load_store_word_byte(word: u32) -> Decoded {
    let load = bit(word, 20);
    let byte = bit(word, 22);
    if !load {
        Decoded::next(InsnClass::Store)
    } else if !byte && bits(word, 15, 12) == 15 {
        Decoded::indirect()
    } else {
        Decoded::next(InsnClass::Load)
    }
}

/// A5.4: media instructions (bit 25 and bit 4 set).
fn media(word: u32) -> Decoded {
    let op1 = bits(word, 24, 20);
    let op2 = bits(word, 7, 5);
    match op1 {
        0b00001..=0b00111 => Decoded::next(InsnClass::Alu), // parallel add/subtract
        0b01000..=0b01111 => Decoded::next(InsnClass::Alu), // pack, saturate, reverse, extend
        0b10000..=0b10111 => signed_multiply_divide(word),
        0b11000 if op2 == 0b000 => Decoded::next(InsnClass::Alu), // USAD8, USADA8
        0b11010 | 0b11011 | 0b11110 | 0b11111 if op2 & 0b011 == 0b010 => {
            Decoded::next(InsnClass::Alu) // SBFX, UBFX
        }
        0b11100 | 0b11101 if op2 & 0b011 == 0b000 => Decoded::next(InsnClass::Alu), // BFC, BFI
        0b11111 if op2 == 0b111 => Decoded::stop(),                                 // UDF
        _ => Decoded::undefined(),
    }
}

/// A5.4.4: signed multiplies and the integer divides.
fn signed_multiply_divide(word: u32) -> Decoded {
    let op2 = bits(word, 7, 5);
    match bits(word, 22, 20) {
        0b000 if op2 & 0b100 == 0 => Decoded::next(InsnClass::Mul), // SMLAD, SMUAD, SMLSD, SMUSD
        0b001 | 0b011 if op2 == 0 => Decoded::next(InsnClass::Div), // SDIV, UDIV
        0b100 if op2 & 0b100 == 0 => Decoded::next(InsnClass::MulLong), // SMLALD, SMLSLD
        0b101 => Decoded::next(InsnClass::Mul),                     // SMMLA, SMMUL, SMMLS
        _ => Decoded::undefined(),
    }
}

/// A5.5: LDM/STM in every addressing mode (PUSH and POP included).
fn load_store_multiple(word: u32) -> Decoded {
    let load = bit(word, 20);
    if load && bit(word, 15) {
        Decoded::indirect() // LDM with the PC in the list: a return or jump
    } else {
        Decoded::next(InsnClass::LoadStoreMultiple)
    }
}

/// A5.6: supervisor call and the coprocessor space, which holds VFP and the
/// Advanced SIMD register transfers (coprocessors 10 and 11).
fn coprocessor_and_svc(word: u32) -> Decoded {
    if bits(word, 25, 24) == 0b11 {
        return Decoded::stop(); // SVC
    }
    decode_coprocessor(word)
}

/// The coprocessor instruction space of A5.6 (bits 27..25 = 11x, not SVC),
/// also used by T32 (A6.3.18) after rewriting its first halfword into the A32
/// layout. Only bits 27..0 are examined.
pub(crate) fn decode_coprocessor(word: u32) -> Decoded {
    let op1 = bits(word, 25, 20);
    let is_vfp = bits(word, 11, 9) == 0b101; // coprocessor 10 or 11
    if op1 & 0b111110 == 0 {
        return Decoded::undefined(); // 00000x
    }
    if !is_vfp {
        // LDC, STC, MCRR, MRRC, CDP, MCR, MRC: e.g. `mrc p15` reading the TLS pointer.
        return Decoded::next(InsnClass::Other);
    }
    if op1 & 0b100000 == 0 {
        // Extension register loads/stores (A7.6) and 64-bit transfers (A7.8).
        return Decoded::next(InsnClass::VfpLoadStoreMove);
    }
    if bit(word, 4) {
        // 8, 16 and 32-bit transfers: VMOV core <-> scalar, VMRS, VMSR, VDUP (A7.8).
        return Decoded::next(InsnClass::VfpLoadStoreMove);
    }
    vfp_data_processing(word)
}

/// A7.5 table A7-16: VFP data-processing instructions.
fn vfp_data_processing(word: u32) -> Decoded {
    let opc1 = bits(word, 23, 20) & 0b1011; // bit 22 is the D register bit
    let opc2 = bits(word, 19, 16);
    let opc3 = bits(word, 7, 6);
    let class = match opc1 {
        0b0000..=0b0010 => InsnClass::VfpMul, // VMLA/VMLS, VNMLA/VNMLS, VMUL/VNMUL
        0b0011 => InsnClass::VfpAdd,          // VADD, VSUB
        0b1000 => InsnClass::VfpDiv,          // VDIV
        0b1001 | 0b1010 => InsnClass::VfpMul, // VFNMA/VFNMS, VFMA/VFMS
        0b1011 => return vfp_other_data_processing(opc2, opc3),
        _ => return Decoded::undefined(),
    };
    Decoded::next(class)
}

/// A7.5 table A7-17: the `opc1 == 1x11` group.
fn vfp_other_data_processing(opc2: u32, opc3: u32) -> Decoded {
    if opc3 & 1 == 0 {
        return Decoded::next(InsnClass::VfpLoadStoreMove); // VMOV (immediate)
    }
    let class = match (opc2, opc3) {
        (0b0000, _) => InsnClass::VfpLoadStoreMove, // VMOV (register), VABS
        (0b0001, 0b01) => InsnClass::VfpLoadStoreMove, // VNEG
        (0b0001, _) => InsnClass::VfpDiv,           // VSQRT
        (0b0010 | 0b0011, _) => InsnClass::VfpConvert, // VCVTB, VCVTT
        (0b0100 | 0b0101, _) => InsnClass::VfpAdd,  // VCMP, VCMPE
        (0b0111, 0b11) => InsnClass::VfpConvert,    // VCVT double <-> single
        (0b1000 | 0b1010..=0b1111, _) => InsnClass::VfpConvert, // VCVT int/fixed <-> float
        _ => return Decoded::undefined(),
    };
    Decoded::next(class)
}

/// A5.7: the unconditional (cond == 1111) space.
fn unconditional(word: u32, addr: u64) -> Decoded {
    let op1 = bits(word, 27, 20);
    if op1 & 0b1000_0000 == 0 {
        return memory_hints_simd_misc(word);
    }
    match op1 >> 5 {
        0b100 if op1 & 0b101 == 0b100 => Decoded::next(InsnClass::Other), // SRS
        0b100 if op1 & 0b101 == 0b001 => Decoded::stop(),                 // RFE
        0b101 => {
            // BLX (immediate): always switches to Thumb; H supplies bit 1.
            let offset =
                (sign_extend(bits(word, 23, 0), 24) << 2) | ((bits(word, 24, 24) as i64) << 1);
            Decoded {
                class: InsnClass::Branch,
                flow: Flow::Direct {
                    target: wrap_target(addr + 8, offset),
                    exchange: true,
                },
            }
        }
        // STC2, LDC2, MCRR2, MRRC2 (110xxxxx except 1100000x).
        0b110 if op1 & 0b1111_1110 != 0b1100_0000 => Decoded::next(InsnClass::Other),
        // CDP2, MCR2, MRC2 (1110xxxx).
        0b111 if op1 & 0b0001_0000 == 0 => Decoded::next(InsnClass::Other),
        _ => Decoded::undefined(),
    }
}

/// A5.7.1: memory hints, Advanced SIMD and miscellaneous instructions.
fn memory_hints_simd_misc(word: u32) -> Decoded {
    let op1 = bits(word, 26, 20);
    let op2 = bits(word, 7, 4);
    match op1 {
        0b0010000 => Decoded::next(InsnClass::Other), // CPS, SETEND
        0b0100000..=0b0111111 => Decoded::next(InsnClass::Other), // Advanced SIMD data processing
        _ if op1 & 0b1110001 == 0b1000000 => Decoded::next(InsnClass::VfpLoadStoreMove), // VLDn/VSTn
        _ if op1 & 0b1110111 == 0b1000001 => Decoded::next(InsnClass::Other), // unallocated hint
        _ if op1 & 0b1110111 == 0b1000101 => Decoded::next(InsnClass::Other), // PLI (immediate)
        _ if op1 & 0b1110011 == 0b1010001 => Decoded::next(InsnClass::Other), // PLD, PLDW (immediate)
        0b1010111 => match op2 {
            0b0001 | 0b0100 | 0b0101 | 0b0110 => Decoded::next(InsnClass::Other), // CLREX, DSB, DMB, ISB
            _ => Decoded::undefined(),
        },
        _ if op1 & 0b1100011 == 0b1100001 && op2 & 1 == 0 => Decoded::next(InsnClass::Other), // PLI/PLD (register)
        _ => Decoded::undefined(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(word: u32) -> InsnClass {
        decode_a32(word, 0x1000).class
    }

    #[test]
    fn branch_targets_and_exchange() {
        // b . (offset -8 → target = addr)
        assert_eq!(
            decode_a32(0xeaff_fffe, 0x1000).flow,
            Flow::Direct {
                target: 0x1000,
                exchange: false
            }
        );
        // blx <label> with H = 1: target = addr + 8 + 2
        assert_eq!(
            decode_a32(0xfb00_0000, 0x1000).flow,
            Flow::Direct {
                target: 0x100a,
                exchange: true
            }
        );
        assert_eq!(class(0x1aff_fffe), InsnClass::CondBranch); // bne .
    }

    #[test]
    fn pc_writes_are_indirect_branches() {
        assert_eq!(class(0xe1a0_f00e), InsnClass::IndirectBranch); // mov pc, lr
        assert_eq!(class(0xe12f_ff1e), InsnClass::IndirectBranch); // bx lr
        assert_eq!(class(0xe8bd_8010), InsnClass::IndirectBranch); // pop {r4, pc}
        assert_eq!(class(0xe49d_f004), InsnClass::IndirectBranch); // pop {pc} (ldr pc, [sp], #4)
        assert_eq!(class(0xe08f_f103), InsnClass::IndirectBranch); // add pc, pc, r3, lsl #2
        // cmp with Rd field 0 is not a branch; `cmp pc, #0` would not be either.
        assert_eq!(class(0xe350_0000), InsnClass::Alu);
    }

    #[test]
    fn never_panics_on_any_top_byte_pattern() {
        // Walk a spread of words across every opcode region.
        let mut word: u32 = 0x1234_5678;
        for _ in 0..200_000 {
            word = word.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let _ = decode_a32(word, 0x8000);
        }
    }
}
