//! The in-process assembler against GNU `as`: the same assembly text assembled by both must
//! give the same section bytes and relocations ([`sysyc::isa::arm::asm::compare_objects`]).
//! Executables are built in-process by default, so an encoding bug would otherwise show
//! only as a wrong run — or not at all, for an instruction the run never reaches; this
//! oracle names it as an [`FailureKind::EncoderDisagreement`] of the check whose text it was.
//!
//! GNU `as` costs a process start per text, so the campaign asks it about a sample: the texts
//! [`sampled`] picks, deterministically from the program's seed and the text's hash.

use crate::failure::{Failure, FailureKind, Stage};
use sysyc::isa::arm::asm::{self, Object};
use sysyc::toolchain::ToolchainError;

/// Whether the text with hash `text_hash` of the program of `seed` is compared, when one
/// text in `one_in` is (0: none, 1: all).
pub fn sampled(seed: u64, text_hash: &str, one_in: u64) -> bool {
    if one_in == 0 {
        return false;
    }
    let digest = blake3::hash(format!("{seed}/{text_hash}").as_bytes());
    let draw = u64::from_le_bytes(digest.as_bytes()[..8].try_into().unwrap_or_default());
    draw % one_in == 0
}

/// Assembles `text` in-process and with GNU `as` and compares the objects.
pub fn check(text: &str) -> Result<(), Failure> {
    let ours = asm::assemble(text);
    let gnu = sysyc::toolchain::gnu_object(text);
    let disagree = |detail: String| Failure::new(FailureKind::EncoderDisagreement, Stage::Toolchain, detail);
    match (ours, gnu) {
        (_, Err(e @ (ToolchainError::NotFound { .. } | ToolchainError::Spawn { .. } | ToolchainError::Io { .. }))) => {
            Err(Failure::new(FailureKind::HarnessError, Stage::Toolchain, format!("GNU as for the encoder oracle: {e}")))
        }
        // Both refuse the text: not the encoder's business (the link stage reports it).
        (Err(_), Err(_)) => Ok(()),
        (Ok(_), Err(e)) => Err(disagree(format!("GNU as refuses what the in-process assembler accepts: {e}"))),
        (Err(e), Ok(_)) => Err(disagree(format!("the in-process assembler refuses what GNU as accepts: {e}"))),
        (Ok(ours), Ok(gnu)) => compare(&ours, &gnu),
    }
}

/// Compares an in-process object with GNU's (ELF bytes).
pub fn compare(ours: &Object, gnu: &[u8]) -> Result<(), Failure> {
    asm::compare_objects(ours, gnu)
        .map_err(|d| Failure::new(FailureKind::EncoderDisagreement, Stage::Toolchain, format!("in-process encoding differs from GNU as: {d}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysyc::isa::arm::asm::SectionId;

    const TEXT: &str = "\t.text\n\t.global\tmain\n\t.type\tmain, %function\nmain:\n\tpush\t{r4, lr}\n\tmovw\tr0, #:lower16:g\n\tmovt\tr0, #:upper16:g\n\
        \tldr\tr0, [r0, #4]\n\tbl\tputint\n\tmov\tr0, #0\n\tpop\t{r4, pc}\n\t.data\ng:\n\t.word\t1, 2, 3\n";

    #[test]
    fn sampling_is_deterministic_and_near_its_rate() {
        assert!(!sampled(1, "abc", 0));
        assert!(sampled(1, "abc", 1));
        let picks: Vec<bool> = (0..4000).map(|i| sampled(7, &format!("{i:x}"), 10)).collect();
        assert_eq!(picks, (0..4000).map(|i| sampled(7, &format!("{i:x}"), 10)).collect::<Vec<_>>());
        let n = picks.iter().filter(|&&p| p).count();
        assert!((300..500).contains(&n), "{n} of 4000 sampled at 1 in 10");
    }

    /// A deliberately wrong encoding (one bit of one instruction, one word of data) is
    /// reported as an encoder disagreement naming the section; the right one agrees.
    #[test]
    fn a_wrong_encoding_is_a_disagreement() {
        let Ok(gnu) = sysyc::toolchain::gnu_object(TEXT) else {
            eprintln!("note: skipping: no ARM cross toolchain");
            return;
        };
        let right = asm::assemble(TEXT).expect("assembles");
        compare(&right, &gnu).expect("the right encoding agrees");
        check(TEXT).expect("agrees");
        for (section, at) in [(SectionId::Text, 8), (SectionId::Data, 4)] {
            let mut wrong = right.clone();
            wrong.sections.get_mut(&section).expect("section").bytes[at] ^= 0x10;
            let failure = compare(&wrong, &gnu).expect_err("a flipped bit");
            assert_eq!((failure.kind, failure.stage), (FailureKind::EncoderDisagreement, Stage::Toolchain));
            assert!(failure.detail.contains(&format!("{}: bytes differ at offset {at:#x}", section.name())), "{}", failure.detail);
        }
        let mut moved = right.clone();
        moved.relocs[0].offset += 4;
        assert!(compare(&moved, &gnu).expect_err("a moved relocation").detail.contains("relocations differ"));
    }

    #[test]
    fn a_text_only_one_side_accepts_is_a_disagreement() {
        if sysyc::toolchain::gnu_object(TEXT).is_err() {
            return;
        }
        // GNU as accepts `.hword`; the in-process assembler does not know it.
        let failure = check("\t.data\n\t.hword\t1\n").expect_err("only GNU accepts");
        assert_eq!(failure.kind, FailureKind::EncoderDisagreement);
        assert!(failure.detail.contains("in-process assembler refuses"), "{}", failure.detail);
        // Neither accepts: nothing for this oracle.
        check("\tfrobnicate\tr0\n").expect("both refuse");
    }
}
