//! The textual IR round trip on real programs: the lowered module, and the module after
//! every pass of a pipeline, printed, parsed and printed again is the same text; the verifier
//! runs after every pass.

use sysyc::config::Config;
use sysyc::ir::{Module, parser, printer};
use sysyc::passes::PassInfo;

use crate::failure::{Failure, FailureKind, Stage};
use crate::stages;
use crate::subject::Subject;

/// Checks `subject` under the pipeline of `config`.
pub fn check(subject: &Subject, config: &Config) -> Result<(), Failure> {
    let lowered = stages::lower(subject)?;
    roundtrip(&lowered).map_err(|detail| Failure::new(FailureKind::RoundtripMismatch, Stage::Roundtrip, format!("after lowering: {detail}")))?;
    let mut failure: Option<Failure> = None;
    let mut observe = |index: usize, pass: &'static PassInfo, module: &Module| {
        if failure.is_none() {
            failure = roundtrip(module).err().map(|detail| {
                Failure::new(FailureKind::RoundtripMismatch, Stage::Roundtrip, format!("after pass #{index} `{}`: {detail}", pass.name))
            });
        }
    };
    stages::optimise(&lowered, &Config { verify_each: true, ..config.clone() }, Some(&mut observe))?;
    failure.map_or(Ok(()), Err)
}

/// Print → parse → print; `Err` with the first differing line.
pub fn roundtrip(module: &Module) -> Result<(), String> {
    let text = printer::print_module(module);
    let parsed = parser::parse_module(&text).map_err(|e| format!("the printed IR does not parse: {e}"))?;
    let again = printer::print_module(&parsed);
    if again == text {
        return Ok(());
    }
    let (line, (a, b)) = text
        .lines()
        .zip(again.lines())
        .enumerate()
        .find(|(_, (a, b))| a != b)
        .unwrap_or((text.lines().count().min(again.lines().count()), ("<end>", "<end>")));
    Err(format!("line {}: printed `{a}`, reprinted `{b}`", line + 1))
}
