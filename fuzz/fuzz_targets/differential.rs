//! Fuzzer bytes → a generator configuration and program plus a random pipeline → the
//! reference interpreter against the IR interpreter after every pass (no qemu).
#![no_main]

use harness::generators::GeneratedProgram;
use harness::oracles::{per_pass, random_pipeline};
use libfuzzer_sys::{arbitrary::Unstructured, fuzz_target};

fuzz_target!(|bytes: &[u8]| {
    let mut u = Unstructured::new(bytes);
    let Ok(pipeline) = random_pipeline(&mut u) else { return };
    let Ok(program) = u.arbitrary::<GeneratedProgram>() else { return };
    if let Err(violation) = per_pass::check(&program.source, &program.stdin, &pipeline, &Default::default()) {
        let names: Vec<&str> = pipeline.iter().map(|p| p.name).collect();
        panic!("--passes={}: {violation}\n{}", names.join(","), program.source);
    }
});
