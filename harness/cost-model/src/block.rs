//! Decoding whole translation blocks, and guessing their instruction set.
//!
//! QEMU's plugin API v1 hands the plugin a translation block as a list of
//! instructions (address, bytes) but does not say whether the block is ARM or
//! Thumb code. Static glibc mixes both, so the plugin has to decide. The
//! authoritative answer comes from the ELF mapping symbols (`$a`, `$t`, see
//! [`crate::elf::ModeMap`]); this module provides the fallback used where
//! there are none (stripped binaries, code outside any symbol).
//!
//! # The mode heuristic ([`ModeGuesser`])
//!
//! 1. A 2-byte instruction, or one at an address that is 2 mod 4, can only be
//!    Thumb.
//! 2. Otherwise every instruction is 4 bytes and word aligned. The block can be
//!    Thumb only if every word starts with a T32 first halfword (top five bits
//!    `11101`, `11110` or `11111`); if one does not, it is ARM.
//! 3. Both remain possible. An interpretation is *consistent* if every
//!    instruction decodes to an allocated encoding and none but the last
//!    transfers control: QEMU ends a block at the first branch, so a branch in
//!    the middle means the interpretation is wrong. If exactly one is
//!    consistent, it wins.
//! 4. Otherwise a *hint* decides: whenever a block's mode has been decided,
//!    the targets of its direct branches (`b`, `bl`, `cbz`, same mode; `blx
//!    <label>`, the other mode) and its fall-through address (where a call
//!    returns to) are remembered with their mode. Blocks are translated the
//!    first time they run, so a block is usually reached from one decided
//!    before it.
//! 5. Without a hint, an interpretation whose last instruction transfers
//!    control is preferred (blocks normally end at branches); ties go to ARM.
//!
//! The plugin measures how often this disagrees with the mapping symbols and
//! records it in the counter file header ([`crate::layout::Header`]).

use rustc_hash::FxHashMap;

use crate::class::InsnClass;
use crate::decode::a32::decode_a32;
use crate::decode::t32::{ThumbDecoder, is_t32_prefix};
use crate::decode::{Decoded, Flow, Mode};

/// One guest instruction as the plugin sees it at translation time.
#[derive(Clone, Copy, Debug)]
pub struct RawInsn<'a> {
    pub vaddr: u64,
    /// The instruction's bytes in memory order (2 or 4 bytes).
    pub bytes: &'a [u8],
}

/// Decodes every instruction of a block in `mode`.
pub fn decode_block(insns: &[RawInsn<'_>], mode: Mode) -> Vec<Decoded> {
    match mode {
        Mode::Arm => insns
            .iter()
            .map(|insn| match *insn.bytes {
                [a, b, c, d] => decode_a32(u32::from_le_bytes([a, b, c, d]), insn.vaddr),
                _ => Decoded::undefined(),
            })
            .collect(),
        Mode::Thumb => {
            let mut decoder = ThumbDecoder::new();
            insns
                .iter()
                .map(|insn| decoder.decode(insn.bytes, insn.vaddr))
                .collect()
        }
    }
}

/// The classes of every instruction of a block in `mode`.
pub fn classify_block(insns: &[RawInsn<'_>], mode: Mode) -> Vec<InsnClass> {
    decode_block(insns, mode)
        .into_iter()
        .map(|d| d.class)
        .collect()
}

/// Guesses the instruction set of blocks without mapping symbols; see the
/// module documentation for the rules.
#[derive(Clone, Debug, Default)]
pub struct ModeGuesser {
    hints: FxHashMap<u64, Mode>,
}

impl ModeGuesser {
    pub fn new() -> ModeGuesser {
        ModeGuesser::default()
    }

    /// The most plausible mode of the block `insns`.
    pub fn guess(&self, insns: &[RawInsn<'_>]) -> Mode {
        let Some(first) = insns.first() else {
            return Mode::Arm;
        };
        if insns.iter().any(|i| i.bytes.len() == 2 || i.vaddr % 4 == 2) {
            return Mode::Thumb;
        }
        if insns.iter().any(|i| i.bytes.len() != 4) {
            return Mode::Arm;
        }
        if !insns
            .iter()
            .all(|i| is_t32_prefix(u16::from_le_bytes([i.bytes[0], i.bytes[1]])))
        {
            return Mode::Arm;
        }
        let arm = decode_block(insns, Mode::Arm);
        let thumb = decode_block(insns, Mode::Thumb);
        match (is_consistent(&arm), is_consistent(&thumb)) {
            (true, false) => return Mode::Arm,
            (false, true) => return Mode::Thumb,
            _ => {}
        }
        if let Some(&mode) = self.hints.get(&first.vaddr) {
            return mode;
        }
        let ends = |decoded: &[Decoded]| decoded.last().is_some_and(Decoded::ends_block);
        if ends(&thumb) && !ends(&arm) {
            Mode::Thumb
        } else {
            Mode::Arm
        }
    }

    /// Records what a block decided to be in `mode` says about other blocks.
    pub fn learn(&mut self, insns: &[RawInsn<'_>], mode: Mode) {
        for decoded in decode_block(insns, mode) {
            if let Flow::Direct { target, exchange } = decoded.flow {
                self.hints
                    .insert(target, if exchange { mode.other() } else { mode });
            }
        }
        if let Some(last) = insns.last() {
            self.hints
                .insert(last.vaddr + last.bytes.len() as u64, mode);
        }
    }
}

/// No undefined encodings, and no control transfer before the last instruction.
fn is_consistent(decoded: &[Decoded]) -> bool {
    let Some((_, body)) = decoded.split_last() else {
        return true;
    };
    decoded.iter().all(|d| d.flow != Flow::Undefined) && !body.iter().any(Decoded::ends_block)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insn(vaddr: u64, bytes: &[u8]) -> RawInsn<'_> {
        RawInsn { vaddr, bytes }
    }

    #[test]
    fn short_instructions_mean_thumb() {
        let bx_lr = 0x4770u16.to_le_bytes();
        let g = ModeGuesser::new();
        assert_eq!(g.guess(&[insn(0x1000, &bx_lr)]), Mode::Thumb);
    }

    #[test]
    fn non_t32_prefix_means_arm() {
        // add r0, r0, #1 ; bx lr — the low halfword 0x0001 is no T32 prefix.
        let add = 0xe280_0001u32.to_le_bytes();
        let bx = 0xe12f_ff1eu32.to_le_bytes();
        let g = ModeGuesser::new();
        assert_eq!(g.guess(&[insn(0x1000, &add), insn(0x1004, &bx)]), Mode::Arm);
    }

    #[test]
    fn ambiguous_block_follows_the_branch_hint() {
        // Thumb `bl` f000 fa00 (offset +0x400). Read as an ARM word it is
        // 0xfa00f000, a valid `blx <label>`: both readings are consistent
        // single-branch blocks, so only a hint can tell them apart.
        let bl = [0x00, 0xf0, 0x00, 0xfa];
        let block = [insn(0x2000, &bl)];
        let mut g = ModeGuesser::new();
        assert_eq!(g.guess(&block), Mode::Arm, "tie without a hint goes to ARM");
        // A Thumb `b .` at 0x2000 has 0x2000 as target: a Thumb hint.
        g.learn(&[insn(0x2000, &0xe7feu16.to_le_bytes())], Mode::Thumb);
        assert_eq!(g.guess(&block), Mode::Thumb);
    }

    #[test]
    fn exchanging_branches_and_fall_through_give_hints() {
        let mut g = ModeGuesser::new();
        // Thumb `blx` f000 e800 (offset 0) at 0x0ffe.
        g.learn(&[insn(0x0ffe, &[0x00, 0xf0, 0x00, 0xe8])], Mode::Thumb);
        // target = Align(0x0ffe + 4, 4) + 0 = 0x1000, ARM; fall-through 0x1002, Thumb.
        assert_eq!(g.hints.get(&0x1000), Some(&Mode::Arm));
        assert_eq!(g.hints.get(&0x1002), Some(&Mode::Thumb));
    }

    #[test]
    fn word_aligned_all_wide_thumb_block_is_thumb() {
        // ldr.w r0, [r4, #4]; add.w r1, r0, r5, lsl #1; mul r2, r1, r5;
        // sdiv r3, r2, r5; str.w r3, [r4, #8]; subs.w r5, r5, #1; bne.w back
        // (objdump of tests/asm/thumb_counts.s in the plugin crate), at a
        // word-aligned address: sizes and alignment say nothing.
        let words: [[u16; 2]; 7] = [
            [0xf8d4, 0x0004],
            [0xeb00, 0x0145],
            [0xfb01, 0xf205],
            [0xfb92, 0xf3f5],
            [0xf8c4, 0x3008],
            [0xf1b5, 0x0501],
            [0xf47f, 0xaff2],
        ];
        let bytes: Vec<[u8; 4]> = words
            .iter()
            .map(|[a, b]| {
                let (a, b) = (a.to_le_bytes(), b.to_le_bytes());
                [a[0], a[1], b[0], b[1]]
            })
            .collect();
        let block: Vec<RawInsn<'_>> = bytes
            .iter()
            .enumerate()
            .map(|(i, b)| insn(0x100e0 + 4 * i as u64, b))
            .collect();
        assert_eq!(ModeGuesser::new().guess(&block), Mode::Thumb);
    }

    #[test]
    fn classify_block_uses_it_state() {
        let it = 0xbf08u16.to_le_bytes();
        let b = 0xe7feu16.to_le_bytes();
        let classes = classify_block(&[insn(0, &it), insn(2, &b)], Mode::Thumb);
        assert_eq!(classes, vec![InsnClass::Other, InsnClass::CondBranch]);
    }
}
