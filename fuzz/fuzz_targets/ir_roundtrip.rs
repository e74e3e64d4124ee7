//! Generated programs lowered to IR: print → parse → print is the identity after lowering
//! and after every pass of a random pipeline, and the verifier accepts every step.
#![no_main]

use harness::generators::GeneratedProgram;
use harness::oracles::{random_pipeline, roundtrip};
use libfuzzer_sys::{arbitrary::Unstructured, fuzz_target};

fuzz_target!(|bytes: &[u8]| {
    let mut u = Unstructured::new(bytes);
    let Ok(pipeline) = random_pipeline(&mut u) else { return };
    let Ok(program) = u.arbitrary::<GeneratedProgram>() else { return };
    if let Err(violation) = roundtrip::check(&program.source, &pipeline) {
        panic!("{violation}\n{}", program.source);
    }
});
