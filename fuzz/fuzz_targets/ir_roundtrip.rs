//! Generated programs lowered to IR: print → parse → print is the identity after lowering
//! and after every pass of a random pipeline, and the verifier accepts every step.
#![no_main]

use sysy_generator::GeneratedProgram;
use sysy_check::executor::each_pass::roundtrip_check;
use sysy_check::oracles::random_config;
use sysy_check::subject::Subject;
use libfuzzer_sys::{arbitrary::Unstructured, fuzz_target};

fuzz_target!(|bytes: &[u8]| {
    let mut u = Unstructured::new(bytes);
    let Ok(config) = random_config(&mut u) else { return };
    let Ok(program) = u.arbitrary::<GeneratedProgram>() else { return };
    let Ok(subject) = Subject::from_ast("fuzz.sy", &program.unit, &program.source, &program.stdin) else { return };
    if let Err(failure) = roundtrip_check(&subject, &config) {
        panic!("{config}: {failure}\n{}", program.source);
    }
});
