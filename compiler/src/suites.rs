//! Where the public competition suites (`functional/`, `performance/`) are, for the tests and
//! benchmarks that use them: `$SYSY_TESTS`, else `shared/sysy-tests` beside the checkout.
//! `None` when neither exists (tests that use the suites then skip and say so). The scripts
//! (`scripts/test.sh`, `.ci/run`) set `$SYSY_TESTS` when they know better.

use std::path::{Path, PathBuf};

/// Environment variable naming the competition test suites.
pub const SYSY_TESTS_ENV: &str = "SYSY_TESTS";

/// The suites' directory (see the module documentation).
pub fn sysy_tests_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(SYSY_TESTS_ENV).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir)).filter(|d| d.is_dir());
    }
    Some(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/sysy-tests")).filter(|d| d.is_dir())
}
