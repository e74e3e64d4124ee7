//! Where the public competition suites (`functional/`, `performance/`) are, for the tests and
//! benchmarks that use them: `$SYSY_TESTS`, else the first `shared/sysy-tests` beside the
//! checkout or beside one of its ancestor directories (`scripts/suites.sh` looks the same
//! way). `None` when there is none (tests that use the suites then skip and say so).

use std::path::{Path, PathBuf};

/// Environment variable naming the competition test suites.
pub const SYSY_TESTS_ENV: &str = "SYSY_TESTS";

/// The suites' directory (see the module documentation).
pub fn sysy_tests_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(SYSY_TESTS_ENV).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir)).filter(|d| d.is_dir());
    }
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    checkout.ancestors().skip(1).map(|dir| dir.join("shared/sysy-tests")).find(|d| d.is_dir())
}
