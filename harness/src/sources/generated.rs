//! Generated programs: the `sysy_generator` crate's programs, each attempt probed by the
//! reference interpreter with statement coverage ([`sysy_check::subject::coverage_probe`]),
//! so that a probe run that ended is also the program's truth.

use sysy_check::subject::coverage_probe;
use sysy_generator::{GenConfig, GeneratedProgram};

/// The program of `seed` under `config` (deterministic).
pub fn generate(seed: u64, config: &GenConfig) -> GeneratedProgram {
    sysy_generator::generate(seed, config, &coverage_probe)
}
