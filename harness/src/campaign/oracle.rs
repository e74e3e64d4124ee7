//! Judging: how an outcome compares with the reference interpreter's, and the distinct kinds
//! of failure a check can end in.
//!
//! The truth is the reference interpreter's [`Outcome`] of the source; generated programs are
//! free of undefined behaviour and always have enough input, so the truth never traps (a
//! program whose truth traps or times out is discarded as a generator problem, not judged).
//! A compiled or interpreted run is compared on standard output first (the checksum the
//! generator prints), then on the exit status.

use sysyc::runtime::Outcome;

/// What went wrong in one check. The names are the `kind` column of `runs.csv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Standard output differs from the truth.
    WrongOutput,
    /// Same output, different exit status.
    WrongExitStatus,
    /// The qemu run died by a signal, or the IR interpreter trapped (a miscompiled program
    /// doing something undefined).
    Crash,
    /// The run did not end within the time limit (the truth did).
    Timeout,
    /// The compiler panicked (caught per configuration).
    CompilerPanic,
    /// The IR verifier rejected the IR after lowering or after a pass.
    VerifierFailure,
    /// The back end refused the IR or failed internally (register allocation, ...).
    BackendError,
    /// The assembler or linker rejected the generated assembly.
    AsmLinkError,
    /// The harness could not make the check (a tool missing, a temporary file, ...).
    HarnessError,
    /// The compiler killed the process (abort, stack overflow): recorded by the supervisor
    /// (see [`super::isolate`]), never run again.
    CompilerCrash,
    /// The iterative and the region-based data-flow solvers gave different solutions.
    AnalysisDisagreement,
}

impl Kind {
    pub const ALL: [Kind; 11] = [
        Kind::WrongOutput,
        Kind::WrongExitStatus,
        Kind::Crash,
        Kind::Timeout,
        Kind::CompilerPanic,
        Kind::VerifierFailure,
        Kind::BackendError,
        Kind::AsmLinkError,
        Kind::HarnessError,
        Kind::CompilerCrash,
        Kind::AnalysisDisagreement,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::WrongOutput => "wrong-output",
            Kind::WrongExitStatus => "wrong-exit-status",
            Kind::Crash => "crash",
            Kind::Timeout => "timeout",
            Kind::CompilerPanic => "compiler-panic",
            Kind::VerifierFailure => "verifier-failure",
            Kind::BackendError => "backend-error",
            Kind::AsmLinkError => "asm-link-error",
            Kind::HarnessError => "harness-error",
            Kind::CompilerCrash => "compiler-crash",
            Kind::AnalysisDisagreement => "analysis-disagreement",
        }
    }

    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|k| k.name() == name)
    }
}

/// Which oracle (or compiler stage) found the failure: the `oracle` column of `runs.csv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Oracle {
    /// The IR pass pipeline (verifier, panics).
    Pipeline,
    /// The IR interpreter on the optimised IR.
    IrInterp,
    /// The ARM back end (instruction selection to emission).
    Backend,
    /// Assembling and linking.
    Toolchain,
    /// The executable under qemu-arm.
    Qemu,
    /// gcc's translation of the program under qemu-arm (the `--gcc` third opinion).
    Gcc,
    /// The data-flow solvers compared with each other (see `analysis.rs`).
    Analysis,
}

impl Oracle {
    pub fn name(self) -> &'static str {
        match self {
            Oracle::Pipeline => "pipeline",
            Oracle::IrInterp => "ir-interp",
            Oracle::Backend => "backend",
            Oracle::Toolchain => "toolchain",
            Oracle::Qemu => "qemu",
            Oracle::Gcc => "gcc",
            Oracle::Analysis => "analysis",
        }
    }
}

/// A failed check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub kind: Kind,
    pub oracle: Oracle,
    /// One line: what differed or the error message.
    pub detail: String,
    /// The wrong outcome in full, when there is one (for the failure corpus).
    pub actual: Option<Outcome>,
}

impl Mismatch {
    pub fn new(kind: Kind, oracle: Oracle, detail: impl Into<String>) -> Mismatch {
        Mismatch { kind, oracle, detail: one_line(&detail.into()), actual: None }
    }
}

/// Compares `actual` with the truth; `None` when they agree.
pub fn judge(truth: &Outcome, actual: &Outcome, oracle: Oracle) -> Option<Mismatch> {
    let (kind, detail) = if let Some(trap) = &actual.trap {
        (Kind::Crash, format!("trapped: {} {}", trap.kind, trap.detail))
    } else if actual.stdout != truth.stdout {
        (Kind::WrongOutput, format!("stdout differs: {}", first_difference(&truth.stdout, &actual.stdout)))
    } else if actual.exit_status != truth.exit_status {
        (Kind::WrongExitStatus, format!("exit status {:?}, expected {:?}", actual.exit_status, truth.exit_status))
    } else {
        return None;
    };
    Some(Mismatch { kind, oracle, detail: one_line(&detail), actual: Some(actual.clone()) })
}

/// Where two outputs first differ, with a little context.
fn first_difference(expected: &[u8], actual: &[u8]) -> String {
    let at = expected.iter().zip(actual).position(|(a, b)| a != b).unwrap_or(expected.len().min(actual.len()));
    let show = |bytes: &[u8]| {
        let end = (at + 24).min(bytes.len());
        format!("{:?}", String::from_utf8_lossy(&bytes[at.min(end)..end]))
    };
    format!("at byte {at}: expected {} got {}", show(expected), show(actual))
}

/// `text` on one line, at most 300 characters (for CSV cells and tables).
pub fn one_line(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 300 { flat.chars().take(297).chain("...".chars()).collect() } else { flat }
}

/// An outcome as text: output, then how it ended.
pub fn describe(outcome: &Outcome) -> String {
    let mut s = String::from_utf8_lossy(&outcome.stdout).into_owned();
    if !s.ends_with('\n') && !s.is_empty() {
        s.push('\n');
    }
    match (&outcome.trap, outcome.exit_status) {
        (Some(trap), _) => s.push_str(&format!("-- trapped: {} {}\n", trap.kind, trap.detail)),
        (None, Some(status)) => s.push_str(&format!("-- exit status {status}\n")),
        (None, None) => s.push_str("-- no exit status\n"),
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysyc::runtime::{Trap, TrapKind};

    fn outcome(stdout: &str, status: u8) -> Outcome {
        Outcome { stdout: stdout.as_bytes().to_vec(), exit_status: Some(status), trap: None, steps: 0 }
    }

    #[test]
    fn kinds_are_told_apart() {
        let truth = outcome("42\n", 3);
        assert_eq!(judge(&truth, &outcome("42\n", 3), Oracle::Qemu), None);
        assert_eq!(judge(&truth, &outcome("43\n", 3), Oracle::Qemu).map(|m| m.kind), Some(Kind::WrongOutput));
        assert_eq!(judge(&truth, &outcome("42\n", 4), Oracle::Qemu).map(|m| m.kind), Some(Kind::WrongExitStatus));
        let trapped = Outcome { trap: Some(Trap::new(TrapKind::DivByZero)), ..outcome("", 0) };
        assert_eq!(judge(&truth, &trapped, Oracle::IrInterp).map(|m| m.kind), Some(Kind::Crash));
        for k in Kind::ALL {
            assert_eq!(Kind::from_name(k.name()), Some(k));
        }
    }

    #[test]
    fn details_fit_on_one_line() {
        let m = judge(&outcome("1\n2\n3\n", 0), &outcome("1\n2\n4\n", 0), Oracle::Qemu).expect("differs");
        assert!(!m.detail.contains('\n'));
        assert!(m.detail.contains("at byte 4"), "{}", m.detail);
    }
}
