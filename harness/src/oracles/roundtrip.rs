//! The textual IR round trip on real programs: the lowered module, and the module after
//! every pass of a pipeline, printed, parsed and printed again is the same text; the verifier
//! runs after every pass (the pipeline's `verify_each`).

use super::{Checked, Violation};
use sysyc::driver::{self, CompileError, CompileOptions};
use sysyc::ir::{parser, printer};
use sysyc::passes::PassInfo;

/// Checks `source` under `pipeline`. Programs the front end rejects are skipped.
pub fn check(source: &str, pipeline: &[&'static PassInfo]) -> Result<Checked, Violation> {
    let options = CompileOptions {
        pipeline: pipeline.to_vec(),
        verify_each: true,
        ..CompileOptions::default()
    };
    let mut failure: Option<Violation> = None;
    let mut observe = |index: usize, pass: &'static PassInfo, module: &sysyc::ir::Module| {
        if failure.is_none() {
            failure = roundtrip(module).err().map(|detail| Violation {
                kind: "roundtrip",
                after_pass: Some((index, pass.name)),
                detail,
            });
        }
    };
    let lowered = match driver::lower_source("roundtrip.sy", source) {
        Ok(module) => module,
        Err(_) => return Ok(Checked::Skipped),
    };
    roundtrip(&lowered).map_err(|detail| Violation {
        kind: "roundtrip",
        after_pass: None,
        detail,
    })?;
    match driver::compile_ir_observed("roundtrip.sy", source, &options, Some(&mut observe)) {
        Ok(_) => {}
        Err(CompileError::Pipeline(e)) => {
            return Err(Violation {
                kind: "verifier",
                after_pass: None,
                detail: e.to_string(),
            });
        }
        Err(e) => {
            return Err(Violation {
                kind: "compile",
                after_pass: None,
                detail: e.to_string(),
            });
        }
    }
    match failure {
        Some(violation) => Err(violation),
        None => Ok(Checked::Passed),
    }
}

/// Print → parse → print; `Err` with the first differing line.
pub fn roundtrip(module: &sysyc::ir::Module) -> Result<(), String> {
    let text = printer::print_module(module);
    let parsed =
        parser::parse_module(&text).map_err(|e| format!("the printed IR does not parse: {e}"))?;
    let again = printer::print_module(&parsed);
    if again == text {
        return Ok(());
    }
    let (line, (a, b)) = text
        .lines()
        .zip(again.lines())
        .enumerate()
        .find(|(_, (a, b))| a != b)
        .unwrap_or((
            text.lines().count().min(again.lines().count()),
            ("<end>", "<end>"),
        ));
    Err(format!("line {}: printed `{a}`, reprinted `{b}`", line + 1))
}
