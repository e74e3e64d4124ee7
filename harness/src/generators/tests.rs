//! Properties of generated programs: determinism, printer/parser round trip, front-end
//! validity, and the `Arbitrary` path.

use super::*;
use sysyc::frontend::{self, LineIndex};

/// Parses and analyses a generated program, panicking with the source on failure.
pub(crate) fn front_end(p: &GeneratedProgram) -> sysyc::frontend::hir::Program {
    let parsed = frontend::parse(&p.source)
        .unwrap_or_else(|d| panic!("seed {:?}: parse error {d:?}\n{}", p.seed, p.source));
    assert_eq!(
        parsed.without_spans(),
        p.unit.without_spans(),
        "seed {:?}: round trip changed the tree",
        p.seed
    );
    let hir = frontend::analyze(&parsed, &LineIndex::new(&p.source))
        .unwrap_or_else(|d| panic!("seed {:?}: semantic error {d:?}\n{}", p.seed, p.source));
    frontend::hir_check::check(&hir)
        .unwrap_or_else(|e| panic!("seed {:?}: HIR invariant {e:?}", p.seed));
    hir
}

#[test]
fn same_seed_same_program_different_seeds_differ() {
    for seed in [0u64, 1, 77, 123_456_789] {
        let config = GenConfig::swarm(seed);
        let a = generate(seed, &config);
        let b = generate(seed, &config);
        assert_eq!(a.source, b.source);
        assert_eq!(a.stdin, b.stdin);
        assert_eq!(a.features, b.features);
        let c = generate(seed + 1, &config);
        assert_ne!(
            a.source,
            c.source,
            "seeds {seed} and {} gave the same program",
            seed + 1
        );
    }
}

#[test]
fn default_and_swarm_programs_pass_the_front_end() {
    for seed in 0..150u64 {
        let config = if seed % 3 == 0 {
            GenConfig::default()
        } else {
            GenConfig::swarm(seed)
        };
        let p = generate(seed, &config);
        front_end(&p);
    }
}

#[test]
fn arbitrary_bytes_give_valid_programs() {
    let mut state = 0x1234_5678_9abc_def0u64;
    for len in [0usize, 1, 7, 64, 512, 4096, 20_000] {
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (state >> 56) as u8
            })
            .collect();
        let mut u = arbitrary::Unstructured::new(&bytes);
        let p: GeneratedProgram = arbitrary::Arbitrary::arbitrary(&mut u).expect("never fails");
        assert!(p.seed.is_none());
        front_end(&p);
    }
}

#[test]
fn programs_stay_within_the_strict_grammar() {
    for seed in 0..150u64 {
        let p = generate(seed, &GenConfig::swarm(seed));
        if let Err(e) = super::grammar::strict(&p.unit) {
            panic!("seed {seed}: {e}\n{}", p.source);
        }
    }
    let bad = sysyc::frontend::parse("int main() { if ((1 || 2) && 3) return 1; return 0; }")
        .expect("parses");
    assert!(super::grammar::strict(&bad).is_err());
    let good = sysyc::frontend::parse(
        "int main() { while (1 < 2 == 3 && !(4 + 5) || 6) return 1; return 0; }",
    )
    .expect("parses");
    assert!(super::grammar::strict(&good).is_ok());
}
