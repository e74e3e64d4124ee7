//! The observable result of running a SysY program, shared by every engine (reference
//! interpreter, IR interpreter, qemu) so that outcomes can be compared field by field.

use std::fmt;

/// Why a run stopped before `main` returned. Every kind is either undefined behaviour of the
/// source program (the interpreters report it instead of continuing) or a resource limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TrapKind {
    /// `x / 0` or `x % 0`.
    DivByZero,
    /// `INT_MIN / -1` or `INT_MIN % -1`.
    DivOverflow,
    /// An array index outside its dimension (checked per dimension by the reference
    /// interpreter; per allocation by the IR interpreter).
    OutOfBounds,
    /// Read of an uninitialised local scalar or array element.
    UninitRead,
    /// A float→int conversion of a value outside the `int` range (or NaN).
    FloatToIntRange,
    /// Control fell off the end of a non-void function other than `main`.
    MissingReturn,
    /// Call depth limit exceeded.
    CallDepth,
    /// The step budget was exhausted.
    StepLimit,
    /// A read past the end of stdin, or input that does not parse as the requested value.
    InputExhausted,
    /// IR interpreter only: a memory access through a pointer outside any allocation.
    MemoryFault,
}

impl TrapKind {
    pub const ALL: [TrapKind; 10] = [
        TrapKind::DivByZero,
        TrapKind::DivOverflow,
        TrapKind::OutOfBounds,
        TrapKind::UninitRead,
        TrapKind::FloatToIntRange,
        TrapKind::MissingReturn,
        TrapKind::CallDepth,
        TrapKind::StepLimit,
        TrapKind::InputExhausted,
        TrapKind::MemoryFault,
    ];

    /// Stable kebab-case name (used in CSV files and on the command line).
    pub fn slug(self) -> &'static str {
        match self {
            TrapKind::DivByZero => "div-by-zero",
            TrapKind::DivOverflow => "div-overflow",
            TrapKind::OutOfBounds => "out-of-bounds",
            TrapKind::UninitRead => "uninit-read",
            TrapKind::FloatToIntRange => "float-to-int-range",
            TrapKind::MissingReturn => "missing-return",
            TrapKind::CallDepth => "call-depth",
            TrapKind::StepLimit => "step-limit",
            TrapKind::InputExhausted => "input-exhausted",
            TrapKind::MemoryFault => "memory-fault",
        }
    }

    pub fn from_slug(s: &str) -> Option<TrapKind> {
        TrapKind::ALL.iter().copied().find(|k| k.slug() == s)
    }

    /// True for limits of the run rather than undefined behaviour of the program.
    pub fn is_resource_limit(self) -> bool {
        matches!(self, TrapKind::StepLimit | TrapKind::CallDepth)
    }
}

impl fmt::Display for TrapKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.slug())
    }
}

/// A source position, 1-based.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SrcLoc {
    pub line: u32,
    pub col: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trap {
    pub kind: TrapKind,
    /// Where in the source (reference interpreter) — the IR interpreter has no source
    /// positions and reports `None`.
    pub loc: Option<SrcLoc>,
    /// Free-form detail for humans (e.g. "index 10 of dimension 0 (size 10)").
    pub detail: String,
}

impl Trap {
    pub fn new(kind: TrapKind) -> Trap {
        Trap { kind, loc: None, detail: String::new() }
    }

    pub fn at(kind: TrapKind, loc: SrcLoc) -> Trap {
        Trap { kind, loc: Some(loc), detail: String::new() }
    }

    pub fn with_detail(mut self, detail: impl Into<String>) -> Trap {
        self.detail = detail.into();
        self
    }
}

/// What a run produced.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Outcome {
    pub stdout: Vec<u8>,
    /// `main`'s return value & 0xFF; `None` when the run trapped.
    pub exit_status: Option<u8>,
    pub trap: Option<Trap>,
    /// Engine-specific amount of work done (statements, IR instructions, ...).
    pub steps: u64,
}

impl Outcome {
    /// The expected-output text of the competition's convention: stdout, a newline if stdout
    /// is non-empty and does not end in one, then the exit status and a newline. `None` if the
    /// run trapped.
    pub fn expected_output(&self) -> Option<Vec<u8>> {
        let status = self.exit_status?;
        Some(format_expected(&self.stdout, status))
    }

    /// Same observable behaviour: stdout, exit status and trap kind (not location or steps).
    pub fn same_behaviour(&self, other: &Outcome) -> bool {
        self.stdout == other.stdout
            && self.exit_status == other.exit_status
            && self.trap.as_ref().map(|t| t.kind) == other.trap.as_ref().map(|t| t.kind)
    }
}

/// `stdout` + optional `"\n"` + `status` + `"\n"` (see `sysy-tests/README.md`).
pub fn format_expected(stdout: &[u8], status: u8) -> Vec<u8> {
    let mut out = stdout.to_vec();
    if !out.is_empty() && !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    out.extend_from_slice(status.to_string().as_bytes());
    out.push(b'\n');
    out
}
