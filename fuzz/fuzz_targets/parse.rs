//! Arbitrary bytes into the front end: a program or diagnostics, never a panic, a hang or a
//! stack overflow.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Err(problem) = sysy_check::oracles::frontend::check_bytes(bytes) {
        panic!("{problem}");
    }
});
