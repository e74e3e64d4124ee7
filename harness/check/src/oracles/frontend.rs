//! Arbitrary bytes through the front end (parse and semantic analysis): the result is a
//! program or diagnostics; a panic is the only other outcome and libFuzzer reports it.

use sysyc::frontend;

use crate::failure::{Failure, FailureKind, Stage};

/// Runs the front end on `bytes` (decoded as the CLI decodes files). `Ok(true)` for a valid
/// program, `Ok(false)` for input rejected with diagnostics, `Err` for input rejected without
/// any diagnostic (the user would get no explanation).
pub fn check_bytes(bytes: &[u8]) -> Result<bool, Failure> {
    let source = frontend::source_from_bytes(bytes);
    match frontend::compile_source("fuzz.sy", &source) {
        Ok(_) => Ok(true),
        Err(error) if error.diagnostics.is_empty() => Err(Failure::new(
            FailureKind::FrontendError,
            Stage::Frontend,
            "the front end rejected the input without a diagnostic",
        )),
        Err(_) => Ok(false),
    }
}
