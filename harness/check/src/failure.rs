//! The one failure vocabulary of the harness, and the one judge.
//!
//! Every client — the campaign's rows, triage's "same failure" test, the fuzz oracles, the
//! conformance runner, the reports — describes a failed check as a [`Failure`]: its
//! [`FailureKind`] (what went wrong), the [`Stage`] where it showed, a one-line detail, and
//! the wrong outcome when there is one. Kinds and stages print and parse under stable
//! kebab-case names (the `kind` and `stage` columns of `runs.csv`), and serialise as such.
//!
//! [`judge`] compares an outcome with what was expected: the reference interpreter's outcome
//! of the same program (differential checks) or a `.out` file (conformance suites).

use std::fmt;

use sysyc::runtime::Outcome;

/// Declares a fieldless enum with stable kebab-case names (`Display`/`FromStr`/serde): the
/// failure kinds and stages here, the records' other enumerations elsewhere.
#[macro_export]
macro_rules! named_enum {
    ($(#[$meta:meta])* pub enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, ::serde::Serialize, ::serde::Deserialize)]
        pub enum $name { $($(#[$vmeta])* #[serde(rename = $text)] $variant,)* }

        impl $name {
            pub const ALL: &[$name] = &[$($name::$variant,)*];

            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.pad(self.name())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<$name, String> {
                $name::ALL.iter().copied().find(|k| k.name() == s).ok_or_else(|| {
                    let known: Vec<&str> = $name::ALL.iter().map(|k| k.name()).collect();
                    format!("unknown {} `{s}` (known: {})", stringify!($name), known.join(", "))
                })
            }
        }
    };
}

named_enum! {
    /// What went wrong in one check.
    pub enum FailureKind {
        /// Standard output differs from what was expected.
        WrongOutput = "wrong-output",
        /// Same output, different exit status.
        WrongExitStatus = "wrong-exit-status",
        /// The binary died by a signal, or the IR interpreter trapped (a miscompiled program
        /// doing something undefined).
        Crash = "crash",
        /// The run did not end within its time limit or its step budget (the truth did).
        Timeout = "timeout",
        /// The front end rejected a program it must accept.
        FrontendError = "frontend-error",
        /// The compiler panicked (caught per configuration).
        CompilerPanic = "compiler-panic",
        /// The IR verifier rejected the IR after lowering or after a pass.
        VerifierFailure = "verifier-failure",
        /// The back end refused the IR or failed internally (register allocation, the
        /// machine-code verifier after a stage, ...).
        BackendError = "backend-error",
        /// The assembler or linker rejected the generated assembly.
        AsmLinkError = "asm-link-error",
        /// The in-process assembler encoded an assembly text differently from GNU `as`
        /// (`.text`, `.data`, ... bytes or relocations), or only one of them accepted it.
        EncoderDisagreement = "encoder-disagreement",
        /// The compiler killed the process (abort, stack overflow): recorded by the campaign's
        /// supervisor, never run again.
        CompilerCrash = "compiler-crash",
        /// A compiler step made no progress within the campaign's step limit (a pass that
        /// never reaches its fixpoint): the supervisor killed the process; never run again.
        CompilerHang = "compiler-hang",
        /// The iterative and the region-based data-flow solvers gave different solutions.
        AnalysisDisagreement = "analysis-disagreement",
        /// Printed IR does not parse back to the same text.
        RoundtripMismatch = "roundtrip-mismatch",
        /// The harness could not make the check (a tool missing, a temporary file, ...).
        HarnessError = "harness-error",
    }
}

named_enum! {
    /// Where a failure showed: the stage of the check that produced it.
    pub enum Stage {
        /// The reference interpreter (the truth itself).
        Reference = "reference",
        /// Parsing and semantic analysis.
        Frontend = "frontend",
        /// HIR → IR.
        Lowering = "lowering",
        /// The IR pass pipeline (verifier, panics).
        Pipeline = "pipeline",
        /// The IR interpreter on the optimised IR.
        IrInterp = "ir-interp",
        /// The ARM back end (instruction selection to emission).
        Backend = "backend",
        /// Assembling and linking.
        Toolchain = "toolchain",
        /// The executable under qemu-arm.
        Qemu = "qemu",
        /// gcc's translation of the program under qemu-arm (the third opinion).
        Gcc = "gcc",
        /// The data-flow solvers compared with each other.
        Analysis = "analysis",
        /// The textual IR printed and parsed back.
        Roundtrip = "roundtrip",
    }
}

impl FailureKind {
    /// A wrong answer of a program that ran (as opposed to a compiler or harness failure).
    pub fn is_wrong_run(self) -> bool {
        matches!(self, FailureKind::WrongOutput | FailureKind::WrongExitStatus | FailureKind::Crash | FailureKind::Timeout)
    }
}

/// A failed check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub kind: FailureKind,
    pub stage: Stage,
    /// One line: what differed, or the error message.
    pub detail: String,
    /// The wrong outcome in full, when there is one (for the failure corpus).
    pub actual: Option<Outcome>,
}

impl Failure {
    pub fn new(kind: FailureKind, stage: Stage, detail: impl Into<String>) -> Failure {
        Failure { kind, stage, detail: one_line(&detail.into()), actual: None }
    }

    pub fn with_actual(mut self, actual: Outcome) -> Failure {
        self.actual = Some(actual);
        self
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in the {} stage: {}", self.kind, self.stage, self.detail)
    }
}

impl std::error::Error for Failure {}

/// What a run is judged against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// The reference interpreter's outcome (never a trap).
    Outcome(Outcome),
    /// A conformance suite's `.out` file: stdout, a newline if it lacks one, the exit status.
    OutFile(Vec<u8>),
}

/// Compares `actual` (a run that ended) with what was expected; `stage` says which run it
/// was.
pub fn judge(expected: &Expected, actual: &Outcome, stage: Stage) -> Result<(), Failure> {
    let fail = |kind: FailureKind, detail: String| Err(Failure::new(kind, stage, detail).with_actual(actual.clone()));
    if let Some(trap) = &actual.trap {
        let kind = if trap.kind.is_resource_limit() { FailureKind::Timeout } else { FailureKind::Crash };
        let at = trap.loc.map(|l| format!(" at {}:{}", l.line, l.col)).unwrap_or_default();
        return fail(kind, format!("trap: {}{at} {}", trap.kind, trap.detail));
    }
    match expected {
        Expected::Outcome(truth) => {
            if actual.stdout != truth.stdout {
                fail(FailureKind::WrongOutput, format!("stdout {}", first_difference(&truth.stdout, &actual.stdout)))
            } else if actual.exit_status != truth.exit_status {
                fail(
                    FailureKind::WrongExitStatus,
                    format!("exit status {:?}, expected {:?}", actual.exit_status, truth.exit_status),
                )
            } else {
                Ok(())
            }
        }
        Expected::OutFile(bytes) => {
            let Some(text) = actual.expected_output() else {
                return fail(FailureKind::Crash, "no exit status".into());
            };
            if text == *bytes {
                return Ok(());
            }
            // The last line of the convention is the status: tell the two kinds apart.
            let body = |t: &[u8]| t.strip_suffix(b"\n").map_or(t.len(), |t| t.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1));
            let kind = if text[..body(&text)] == bytes[..body(bytes)] { FailureKind::WrongExitStatus } else { FailureKind::WrongOutput };
            fail(kind, first_difference(bytes, &text))
        }
    }
}

/// Where two outputs first differ: `line N: expected `..`, got `..``.
pub fn first_difference(expected: &[u8], actual: &[u8]) -> String {
    let mut expected_lines = expected.split(|&b| b == b'\n');
    let mut actual_lines = actual.split(|&b| b == b'\n');
    let mut line = 1;
    loop {
        match (expected_lines.next(), actual_lines.next()) {
            (Some(e), Some(a)) if e == a => line += 1,
            (e, a) => {
                let show = |l: Option<&[u8]>| match l {
                    Some(l) => format!("`{}`", shorten(&String::from_utf8_lossy(l))),
                    None => "end of output".to_string(),
                };
                return format!("line {line}: expected {}, got {}", show(e), show(a));
            }
        }
    }
}

fn shorten(s: &str) -> String {
    const MAX: usize = 60;
    if s.chars().count() <= MAX { s.to_string() } else { format!("{}...", s.chars().take(MAX).collect::<String>()) }
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

    fn kind(expected: &Expected, actual: &Outcome) -> Option<FailureKind> {
        judge(expected, actual, Stage::Qemu).err().map(|f| f.kind)
    }

    #[test]
    fn kinds_are_told_apart_against_the_truth() {
        let truth = Expected::Outcome(outcome("42\n", 3));
        assert_eq!(kind(&truth, &outcome("42\n", 3)), None);
        assert_eq!(kind(&truth, &outcome("43\n", 3)), Some(FailureKind::WrongOutput));
        assert_eq!(kind(&truth, &outcome("42\n", 4)), Some(FailureKind::WrongExitStatus));
        let trapped = Outcome { trap: Some(Trap::new(TrapKind::DivByZero)), ..outcome("", 0) };
        assert_eq!(kind(&truth, &trapped), Some(FailureKind::Crash));
        let out_of_steps = Outcome { trap: Some(Trap::new(TrapKind::StepLimit)), ..outcome("", 0) };
        assert_eq!(kind(&truth, &out_of_steps), Some(FailureKind::Timeout), "a step limit is a timeout everywhere");
    }

    #[test]
    fn kinds_are_told_apart_against_an_out_file() {
        let out = Expected::OutFile(b"1\n2\n0\n".to_vec());
        assert_eq!(kind(&out, &outcome("1\n2\n", 0)), None);
        assert_eq!(kind(&out, &outcome("1\n2", 0)), None, "a missing final newline is added");
        assert_eq!(kind(&out, &outcome("1\n2\n", 3)), Some(FailureKind::WrongExitStatus));
        let f = judge(&out, &outcome("1\n5\n", 0), Stage::Qemu).expect_err("differs");
        assert_eq!((f.kind, f.detail.as_str()), (FailureKind::WrongOutput, "line 2: expected `2`, got `5`"));
    }

    #[test]
    fn names_round_trip_and_details_fit_on_one_line() {
        for k in FailureKind::ALL {
            assert_eq!(k.name().parse::<FailureKind>(), Ok(*k));
            assert_eq!(serde_json::to_string(k).expect("json"), format!("\"{}\"", k.name()));
        }
        for s in Stage::ALL {
            assert_eq!(s.name().parse::<Stage>(), Ok(*s));
        }
        assert!("crashed".parse::<FailureKind>().expect_err("unknown").contains("known: wrong-output"));
        let f = judge(&Expected::Outcome(outcome("1\n2\n3\n", 0)), &outcome("1\n2\n4\n", 0), Stage::Qemu).expect_err("differs");
        assert!(!f.detail.contains('\n') && f.detail.contains("line 3"), "{}", f.detail);
    }
}
