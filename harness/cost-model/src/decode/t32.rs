//! Thumb (T16 and T32) instruction classification.
//!
//! Follows ARM ARM (DDI 0406C) chapter A6: A6.2 for 16-bit encodings, A6.3 for
//! 32-bit ones. A 32-bit instruction is the pair `hw1, hw2` of halfwords in
//! memory order; `hw1` has top five bits `11101`, `11110` or `11111`.
//! The coprocessor/VFP space of T32 is the A32 one with the condition field
//! `1110`, so it is rewritten and handed to [`super::a32`].
//!
//! IT blocks make the instructions they cover conditional. That only changes
//! a class for branches (`b` inside an IT block is a conditional branch), and
//! needs state across instructions: [`ThumbDecoder`] carries it.

use super::a32::decode_coprocessor;
use super::{Decoded, Flow, bit, bits, sign_extend, wrap_target};
use crate::class::InsnClass;

/// Whether `hw` is the first halfword of a 32-bit Thumb instruction.
pub const fn is_t32_prefix(hw: u16) -> bool {
    hw >> 11 >= 0b11101
}

/// Decodes a sequence of Thumb instructions, tracking IT blocks.
#[derive(Clone, Debug, Default)]
pub struct ThumbDecoder {
    /// Instructions still covered by the last IT instruction.
    it_remaining: u8,
}

impl ThumbDecoder {
    pub fn new() -> ThumbDecoder {
        ThumbDecoder::default()
    }

    /// Classifies the instruction whose bytes are `bytes` (2 bytes for T16,
    /// 4 for T32, little-endian halfwords in memory order) at `addr`.
    /// Any other length decodes as undefined.
    pub fn decode(&mut self, bytes: &[u8], addr: u64) -> Decoded {
        let in_it_block = self.it_remaining > 0;
        self.it_remaining = self.it_remaining.saturating_sub(1);
        let decoded = match *bytes {
            [a, b] => {
                let hw = u16::from_le_bytes([a, b]);
                if let Some(covered) = it_block_length(hw) {
                    self.it_remaining = covered;
                }
                decode_t16(hw, addr)
            }
            [a, b, c, d] => {
                decode_t32(u16::from_le_bytes([a, b]), u16::from_le_bytes([c, d]), addr)
            }
            _ => Decoded::undefined(),
        };
        if in_it_block && decoded.class == InsnClass::Branch {
            Decoded {
                class: InsnClass::CondBranch,
                ..decoded
            }
        } else {
            decoded
        }
    }
}

/// For an IT instruction with a real condition, the number of instructions
/// it makes conditional.
fn it_block_length(hw: u16) -> Option<u8> {
    let hw = u32::from(hw);
    let mask = bits(hw, 3, 0);
    let first_cond = bits(hw, 7, 4);
    if bits(hw, 15, 8) != 0b1011_1111 || mask == 0 || first_cond == 0b1110 {
        return None;
    }
    Some(4 - mask.trailing_zeros() as u8)
}

/// Classifies a 16-bit Thumb instruction (A6.2).
pub fn decode_t16(hw: u16, addr: u64) -> Decoded {
    let hw = u32::from(hw);
    match bits(hw, 15, 10) {
        0b000000..=0b001111 => shift_add_sub_move_compare(hw),
        0b010000 => match bits(hw, 9, 6) {
            0b0010 | 0b0011 | 0b0100 | 0b0111 => Decoded::next(InsnClass::AluShifted), // LSL/LSR/ASR/ROR (register)
            0b1101 => Decoded::next(InsnClass::Mul),
            _ => Decoded::next(InsnClass::Alu),
        },
        0b010001 => special_data_and_branch_exchange(hw),
        0b010010 | 0b010011 => Decoded::next(InsnClass::Load), // LDR (literal)
        0b010100..=0b010111 => {
            // Register offset: STR, STRH, STRB, then LDRSB, LDR, LDRH, LDRB, LDRSH.
            if bits(hw, 11, 9) <= 0b010 {
                Decoded::next(InsnClass::Store)
            } else {
                Decoded::next(InsnClass::Load)
            }
        }
        // Immediate and SP-relative offsets: bit 11 is L.
        0b011000..=0b100111 if bit(hw, 11) => Decoded::next(InsnClass::Load),
        0b011000..=0b100111 => Decoded::next(InsnClass::Store),
        0b101000..=0b101011 => Decoded::next(InsnClass::Alu), // ADR, ADD (SP plus immediate)
        0b101100..=0b101111 => miscellaneous_16(hw, addr),
        0b110000 | 0b110001 => Decoded::next(InsnClass::LoadStoreMultiple), // STM
        0b110010 | 0b110011 => Decoded::next(InsnClass::LoadStoreMultiple), // LDM (cannot load PC)
        0b110100..=0b110111 => match bits(hw, 11, 8) {
            0b1110 | 0b1111 => Decoded::stop(), // UDF, SVC
            _ => Decoded {
                class: InsnClass::CondBranch,
                flow: Flow::Direct {
                    target: wrap_target(addr + 4, sign_extend(bits(hw, 7, 0) << 1, 9)),
                    exchange: false,
                },
            },
        },
        0b111000 | 0b111001 => Decoded {
            class: InsnClass::Branch,
            flow: Flow::Direct {
                target: wrap_target(addr + 4, sign_extend(bits(hw, 10, 0) << 1, 12)),
                exchange: false,
            },
        },
        _ => Decoded::undefined(), // first halfword of a 32-bit instruction
    }
}

/// A6.2.1: shift (immediate), add, subtract, move and compare.
fn shift_add_sub_move_compare(hw: u32) -> Decoded {
    match bits(hw, 13, 11) {
        // LSL #0 is the flag-setting register MOV.
        0b000 if bits(hw, 10, 6) == 0 => Decoded::next(InsnClass::Alu),
        0b000..=0b010 => Decoded::next(InsnClass::AluShifted), // LSL, LSR, ASR (immediate)
        _ => Decoded::next(InsnClass::Alu), // ADD/SUB register and imm3, MOV/CMP/ADD/SUB imm8
    }
}

/// A6.2.3: special data instructions and branch and exchange.
fn special_data_and_branch_exchange(hw: u32) -> Decoded {
    let rd = (bits(hw, 7, 7) << 3) | bits(hw, 2, 0);
    match bits(hw, 9, 6) {
        0b0000..=0b0011 | 0b1000..=0b1011 if rd == 15 => Decoded::indirect(), // ADD/MOV to PC
        0b1100..=0b1111 => Decoded::indirect(),                               // BX, BLX (register)
        _ => Decoded::next(InsnClass::Alu), // ADD, CMP, MOV (high registers)
    }
}

/// A6.2.5: miscellaneous 16-bit instructions.
fn miscellaneous_16(hw: u32, addr: u64) -> Decoded {
    let op = bits(hw, 11, 5);
    match op {
        0b0110010 | 0b0110011 => Decoded::next(InsnClass::Other), // SETEND, CPS
        0b0000000..=0b0001111 if op & 0b0001000 == 0 => Decoded::next(InsnClass::Alu), // ADD/SUB SP, #imm
        _ if op & 0b0101000 == 0b0001000 => {
            // CBZ, CBNZ (0001xxx, 0011xxx, 1001xxx, 1011xxx): forward only.
            let offset = (bits(hw, 9, 9) << 6) | (bits(hw, 7, 3) << 1);
            Decoded {
                class: InsnClass::CondBranch,
                flow: Flow::Direct {
                    target: wrap_target(addr + 4, i64::from(offset)),
                    exchange: false,
                },
            }
        }
        0b0010000..=0b0010111 => Decoded::next(InsnClass::Alu), // SXTH, SXTB, UXTH, UXTB
        0b0100000..=0b0101111 => Decoded::next(InsnClass::LoadStoreMultiple), // PUSH
        0b1010000..=0b1010011 | 0b1010110 | 0b1010111 => Decoded::next(InsnClass::Alu), // REV, REV16, REVSH
        0b1100000..=0b1101111 if bit(hw, 8) => Decoded::indirect(), // POP with PC
        0b1100000..=0b1101111 => Decoded::next(InsnClass::LoadStoreMultiple), // POP
        0b1110000..=0b1110111 => Decoded::stop(),                   // BKPT
        0b1111000..=0b1111111 => Decoded::next(InsnClass::Other),   // IT, NOP and other hints
        _ => Decoded::undefined(),
    }
}

/// Classifies a 32-bit Thumb instruction (A6.3) made of `hw1` then `hw2`.
pub fn decode_t32(hw1: u16, hw2: u16, addr: u64) -> Decoded {
    let (hw1, hw2) = (u32::from(hw1), u32::from(hw2));
    let op2 = bits(hw1, 10, 4);
    match bits(hw1, 12, 11) {
        0b01 if op2 & 0b1100100 == 0b0000000 => load_store_multiple(hw1, hw2),
        0b01 if op2 & 0b1100100 == 0b0000100 => load_store_dual_exclusive_table(hw1, hw2),
        0b01 if op2 & 0b1100000 == 0b0100000 => {
            // Data processing (shifted register), A6.3.11: imm3:imm2 and type.
            let shifted = bits(hw2, 14, 12) != 0 || bits(hw2, 7, 4) != 0;
            Decoded::next(if shifted {
                InsnClass::AluShifted
            } else {
                InsnClass::Alu
            })
        }
        0b01 | 0b11 if op2 & 0b1000000 != 0 => coprocessor(hw1, hw2),
        // Data processing (modified / plain binary immediate), A6.3.1 and A6.3.3.
        0b10 if !bit(hw2, 15) => Decoded::next(InsnClass::Alu),
        0b10 => branches_and_misc_control(hw1, hw2, addr),
        0b11 => op1_11(hw1, hw2, op2),
        _ => Decoded::undefined(),
    }
}

/// A6.3.5: load/store multiple (and SRS/RFE).
fn load_store_multiple(hw1: u32, hw2: u32) -> Decoded {
    match bits(hw1, 8, 7) {
        0b01 | 0b10 if bit(hw1, 4) && bit(hw2, 15) => Decoded::indirect(), // LDM/POP with PC
        0b01 | 0b10 => Decoded::next(InsnClass::LoadStoreMultiple),
        _ if bit(hw1, 4) => Decoded::stop(),  // RFE
        _ => Decoded::next(InsnClass::Other), // SRS
    }
}

/// A6.3.6: load/store dual, exclusive, and table branch.
fn load_store_dual_exclusive_table(hw1: u32, hw2: u32) -> Decoded {
    let op1 = bits(hw1, 8, 7);
    let op2 = bits(hw1, 5, 4);
    match (op1, op2) {
        (0b00, 0b00) => Decoded::next(InsnClass::Store), // STREX
        (0b00, 0b01) => Decoded::next(InsnClass::Load),  // LDREX
        (0b01, 0b00) => Decoded::next(InsnClass::Store), // STREXB/H/D
        (0b01, 0b01) => match bits(hw2, 7, 4) {
            0b0000 | 0b0001 => Decoded::indirect(), // TBB, TBH
            0b0100 | 0b0101 | 0b0111 => Decoded::next(InsnClass::Load), // LDREXB/H/D
            _ => Decoded::undefined(),
        },
        // STRD/LDRD: 0x/1x or 1x/xx, L is op2 bit 0.
        _ if op2 & 1 == 1 => Decoded::next(InsnClass::Load),
        _ => Decoded::next(InsnClass::Store),
    }
}

/// A6.3.4: branches and miscellaneous control.
fn branches_and_misc_control(hw1: u32, hw2: u32, addr: u64) -> Decoded {
    let op = bits(hw1, 10, 4);
    let s = bits(hw1, 10, 10);
    let (j1, j2) = (bits(hw2, 13, 13), bits(hw2, 11, 11));
    match bits(hw2, 14, 12) {
        0b000 | 0b010 if op & 0b0111000 != 0b0111000 => {
            // B<cond> (T3): S:J2:J1:imm6:imm11:'0'.
            let imm = (s << 20)
                | (j2 << 19)
                | (j1 << 18)
                | (bits(hw1, 5, 0) << 12)
                | (bits(hw2, 10, 0) << 1);
            Decoded {
                class: InsnClass::CondBranch,
                flow: Flow::Direct {
                    target: wrap_target(addr + 4, sign_extend(imm, 21)),
                    exchange: false,
                },
            }
        }
        0b000 | 0b010 => match op {
            0b0111100 | 0b0111101 => Decoded::indirect(), // BXJ, SUBS PC, LR (exception return)
            0b1111111 if bits(hw2, 14, 12) == 0b010 => Decoded::stop(), // UDF
            0b1111110 | 0b1111111 => Decoded::stop(),     // HVC, SMC
            _ => Decoded::next(InsnClass::Other),         // MSR, MRS, hints, CPS, barriers
        },
        low_bits => {
            // B (T4), BL, BLX (immediate): S:I1:I2:imm10:imm11:'0', I = NOT(J xor S).
            let i1 = (!(j1 ^ s)) & 1;
            let i2 = (!(j2 ^ s)) & 1;
            let imm = (s << 24)
                | (i1 << 23)
                | (i2 << 22)
                | (bits(hw1, 9, 0) << 12)
                | (bits(hw2, 10, 0) << 1);
            let offset = sign_extend(imm, 25);
            let flow = if low_bits & 0b101 == 0b100 {
                // BLX: the target is ARM code, relative to Align(PC, 4); imm's bit 1 must be 0.
                Flow::Direct {
                    target: wrap_target((addr + 4) & !3, offset & !3),
                    exchange: true,
                }
            } else {
                Flow::Direct {
                    target: wrap_target(addr + 4, offset),
                    exchange: false,
                }
            };
            Decoded {
                class: InsnClass::Branch,
                flow,
            }
        }
    }
}

/// The `op1 == 11` half of A6.3 (loads, stores, register data processing,
/// multiplies, divides).
fn op1_11(hw1: u32, hw2: u32, op2: u32) -> Decoded {
    let rt_is_pc = bits(hw2, 15, 12) == 15;
    match op2 {
        _ if op2 & 0b1110001 == 0b0000000 => Decoded::next(InsnClass::Store), // store single
        _ if op2 & 0b1100111 == 0b0000111 => Decoded::undefined(),
        // Byte and halfword loads; with Rt = PC they are the PLD/PLI hints.
        _ if op2 & 0b1100101 == 0b0000001 && rt_is_pc => Decoded::next(InsnClass::Other),
        _ if op2 & 0b1100101 == 0b0000001 => Decoded::next(InsnClass::Load),
        _ if op2 & 0b1100111 == 0b0000101 && rt_is_pc => Decoded::indirect(), // LDR PC
        _ if op2 & 0b1100111 == 0b0000101 => Decoded::next(InsnClass::Load),
        _ if op2 & 0b1110001 == 0b0010000 => Decoded::next(InsnClass::VfpLoadStoreMove), // VLDn/VSTn
        0b0100000..=0b0101111 => {
            // Data processing (register), A6.3.12: op1 0xxx with op2 0000 is a
            // shift by register; the rest are extends, parallel and misc ops.
            if bits(hw1, 7, 7) == 0 && bits(hw2, 7, 4) == 0 {
                Decoded::next(InsnClass::AluShifted)
            } else {
                Decoded::next(InsnClass::Alu)
            }
        }
        0b0110000..=0b0110111 => {
            // A6.3.16; op1 = 111 is USAD8/USADA8.
            if bits(hw1, 6, 4) == 0b111 {
                Decoded::next(InsnClass::Alu)
            } else {
                Decoded::next(InsnClass::Mul)
            }
        }
        0b0111000..=0b0111111 => match bits(hw1, 6, 4) {
            0b001 | 0b011 => Decoded::next(InsnClass::Div), // SDIV, UDIV
            _ => Decoded::next(InsnClass::MulLong),         // SMULL, UMULL, SMLAL*, UMAAL, ...
        },
        _ => Decoded::undefined(),
    }
}

/// A6.3.18: coprocessor, VFP and Advanced SIMD. `111U 1111` is Advanced SIMD
/// data processing; everything else matches A32 with the condition `1110`
/// (`hw1` bit 12 clear) or the A32 unconditional `...2` coprocessor forms.
fn coprocessor(hw1: u32, hw2: u32) -> Decoded {
    if bits(hw1, 9, 8) == 0b11 {
        return Decoded::next(InsnClass::Other); // Advanced SIMD data processing
    }
    if bit(hw1, 12) {
        // STC2, LDC2, MCR2, ...: never VFP.
        return Decoded::next(InsnClass::Other);
    }
    decode_coprocessor(((hw1 & 0x0fff) << 16) | hw2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        assert!(is_t32_prefix(0xe92d)); // push.w
        assert!(is_t32_prefix(0xf000)); // bl
        assert!(!is_t32_prefix(0xe7fe)); // b . (16-bit)
        assert!(!is_t32_prefix(0x4770)); // bx lr
    }

    #[test]
    fn branch_targets() {
        // b . (T2): e7fe
        assert_eq!(
            decode_t16(0xe7fe, 0x2000).flow,
            Flow::Direct {
                target: 0x2000,
                exchange: false
            }
        );
        // bl to addr + 4: f000 f800
        assert_eq!(
            decode_t32(0xf000, 0xf800, 0x2000).flow,
            Flow::Direct {
                target: 0x2004,
                exchange: false
            }
        );
        // blx to Align(addr + 4, 4) from a halfword-aligned address: f000 e800
        assert_eq!(
            decode_t32(0xf000, 0xe800, 0x2002).flow,
            Flow::Direct {
                target: 0x2004,
                exchange: true
            }
        );
        // cbz r0, addr + 4 + 8: b110
        assert_eq!(
            decode_t16(0xb110, 0x2000).flow,
            Flow::Direct {
                target: 0x2008,
                exchange: false
            }
        );
    }

    #[test]
    fn it_block_makes_branches_conditional() {
        let mut decoder = ThumbDecoder::new();
        // it eq; beq.n would be illegal inside IT, so use b.n (e7fe) as the last instruction.
        assert_eq!(
            decoder.decode(&0xbf08u16.to_le_bytes(), 0).class,
            InsnClass::Other
        );
        assert_eq!(
            decoder.decode(&0xe7feu16.to_le_bytes(), 2).class,
            InsnClass::CondBranch
        );
        // Outside the block, the same branch is unconditional again.
        assert_eq!(
            decoder.decode(&0xe7feu16.to_le_bytes(), 4).class,
            InsnClass::Branch
        );
        // itte: three instructions covered.
        assert_eq!(it_block_length(0xbf06), Some(3));
        // nop is a hint, not an IT.
        assert_eq!(it_block_length(0xbf00), None);
    }

    #[test]
    fn never_panics() {
        let mut x: u32 = 0xdead_beef;
        let mut decoder = ThumbDecoder::new();
        for _ in 0..200_000 {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let _ = decode_t16(x as u16, 0x1000);
            let _ = decode_t32((x >> 16) as u16 | 0xe800, x as u16, 0x1000);
            let _ = decoder.decode(&x.to_le_bytes()[..(x as usize & 3) + 1], 0x1000);
        }
    }
}
