//! The reference interpreter: the oracle every other engine of the project is compared with.
//!
//! It executes the HIR of the front end directly — no IR, no optimisation — with exact SysY
//! semantics (see `/work/shared/SYSY.md`):
//! * `int` is 32-bit two's complement; `+ - *` and unary `-` wrap; `/ %` truncate toward zero;
//! * `float` is IEEE binary32, every operation rounded to single precision (no `f64`
//!   intermediates); NaN results are the target's (ARM VFP) NaNs, not the host's;
//! * int→float rounds to nearest, float→int truncates;
//! * `&&`/`||` short-circuit; operands, call arguments and initialiser elements are evaluated
//!   left to right (the project's fixed order); in an assignment the target's indices are
//!   evaluated and checked before the value;
//! * arrays are row-major; an array parameter is a view into the caller's storage (also for a
//!   partially indexed row `a[i]`);
//! * the exit status is `main`'s value & 0xFF; `main` falling off its end returns 0 (in
//!   every call of it, as gcc compiles it).
//!
//! Undefined behaviour traps instead of continuing ([`TrapKind`], located at a source
//! position): division or remainder by zero (at the `/`/`%` expression), `INT_MIN / -1` and
//! `INT_MIN % -1`; an index outside its dimension (at the index expression) — checked per
//! dimension, so `a[0][3]` of `int a[4][3]` traps, and for an array parameter the first
//! dimension is what remains of the underlying object from the view's start; a read of an
//! uninitialised local scalar or element (at the read; tracked per element; a declaration
//! without initialiser makes its variable uninitialised each time it runs; globals are zero
//! and local arrays with an initialiser list fully initialised); a float→int conversion out of
//! range or of NaN; a non-void function other than `main` reaching its closing brace (at the
//! brace; `main` returns 0 there, also when called recursively); running out of input in
//! `get*` (unless [`RefConfig::input_failure`] asks for the runtime library's 0). Resource
//! limits trap too: call depth (also used for the interpreter's own stack and for the memory
//! limit), and the step budget (one step per statement executed and per loop-condition
//! evaluation).
//!
//! Statement coverage: [`run_with_coverage`] also reports which statements ran
//! ([`Coverage`]); [`run`] does not record it and pays nothing for it.
//!
//! The program is first checked (`hir_check`), then lowered (module `lower`) to a tree whose
//! variables are frame offsets and global addresses, then executed (module `machine`) over
//! one flat word memory. The walks recurse on the Rust stack, so a run happens on a dedicated
//! thread with a large reserved stack ([`RefConfig::stack_bytes`], 1 GiB by default; only the
//! pages used are committed).

mod code;
mod lower;
mod machine;

use std::time::{Duration, Instant};
use sysyc::frontend::ast::Span;
use sysyc::frontend::{self, FrontendError, LineIndex, hir};
use sysyc::runtime::{Outcome, SrcLoc, Trap, TrapKind};

use machine::{Limits, Machine, Stop};

/// Limits of a run.
#[derive(Clone, Debug)]
pub struct RefConfig {
    /// Step budget ([`TrapKind::StepLimit`] when exceeded).
    pub max_steps: u64,
    /// Maximum number of active user-function calls, `main` included
    /// ([`TrapKind::CallDepth`] beyond it).
    pub max_depth: u32,
    /// Stack reserved for the interpreter thread.
    pub stack_bytes: usize,
    /// Memory limit in 32-bit words, for globals and frames together (frames beyond it trap
    /// with [`TrapKind::CallDepth`]; globals beyond it trap before `main` starts). At most
    /// 2^32 - 1.
    pub max_memory_words: u64,
    /// Wall-clock limit: the run ends with [`RefError::TimedOut`] once it is exceeded
    /// (checked every few tens of thousands of steps).
    pub timeout: Option<Duration>,
    /// What `getint` & co. do when the input cannot provide a value.
    pub input_failure: InputFailure,
}

/// What a read does that the input cannot satisfy (end of input, or text that is not a
/// number).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFailure {
    /// Trap with `input-exhausted`: a program that depends on it is suspect.
    #[default]
    Trap,
    /// Read 0 (`getch`: 0, `getarray`: store 0), as the project's runtime library does —
    /// some competition cases (`performance/fft0`) read past the end of their input.
    Zero,
}

impl Default for RefConfig {
    fn default() -> Self {
        RefConfig {
            max_steps: u64::MAX,
            max_depth: DEFAULT_MAX_DEPTH,
            stack_bytes: DEFAULT_STACK_BYTES,
            max_memory_words: 1 << 29,
            timeout: None,
            input_failure: InputFailure::Trap,
        }
    }
}

/// Default [`RefConfig::max_depth`]: deep enough for every competition case, shallow enough
/// that the default stack holds it with a wide margin.
pub const DEFAULT_MAX_DEPTH: u32 = 200_000;
/// Default [`RefConfig::stack_bytes`].
pub const DEFAULT_STACK_BYTES: usize = 1 << 30;
/// Stack kept free below the point where a call is refused: room for the deepest statement
/// and expression nesting one function body can have (the front end bounds both). The
/// interpreter thread gets at least twice this much.
pub const STACK_MARGIN: usize = 64 << 20;

/// Why a run produced no [`Outcome`].
#[derive(Debug, thiserror::Error)]
pub enum RefError {
    #[error("{0}")]
    Frontend(#[from] FrontendError),
    /// The HIR violates an invariant of `hir_check` (a bug of whoever built it).
    #[error("invalid HIR: {0}")]
    InvalidProgram(String),
    #[error("timed out after {steps} steps")]
    TimedOut { steps: u64 },
    #[error("cannot start the interpreter thread: {0}")]
    Thread(std::io::Error),
}

/// Which statements of a program started to execute during a run.
///
/// The statements are those of the source (the HIR): declarations, assignments, expression
/// statements, blocks, `if`, `while`, `break`, `continue`, `return`, numbered per function in
/// pre-order (a statement before the statements it contains), functions in program order. A
/// statement counts as executed once control reached it, whatever happened inside it: a
/// `while` whose condition is false at once is executed, its body is not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// The span of every statement.
    pub spans: Vec<Span>,
    /// Per statement (same order as `spans`): whether it ran.
    pub executed: Vec<bool>,
}

impl Coverage {
    /// Number of statements of the program.
    pub fn total(&self) -> usize {
        self.spans.len()
    }

    /// Number of statements that ran.
    pub fn executed_count(&self) -> usize {
        self.executed.iter().filter(|&&e| e).count()
    }

    /// Executed / total (1 for a program without statements).
    pub fn fraction(&self) -> f64 {
        if self.spans.is_empty() {
            1.0
        } else {
            self.executed_count() as f64 / self.total() as f64
        }
    }

    /// The spans of the statements that never ran.
    pub fn missed(&self) -> impl Iterator<Item = Span> + '_ {
        self.spans
            .iter()
            .zip(&self.executed)
            .filter(|(_, e)| !**e)
            .map(|(s, _)| *s)
    }

    /// Where the statements that never ran start, in the source `lines` indexes.
    pub fn missed_locations(&self, lines: &LineIndex) -> Vec<SrcLoc> {
        self.missed().map(|s| lines.span_start(s)).collect()
    }
}

/// Runs `program` (whose spans index the source `lines` was built from) on `stdin`.
pub fn run(
    program: &hir::Program,
    lines: &LineIndex,
    stdin: &[u8],
    config: &RefConfig,
) -> Result<Outcome, RefError> {
    on_large_stack(config, |budget| {
        run_here::<false>(program, lines, stdin, config, budget).map(|(o, _)| o)
    })
}

/// [`run`], also recording which statements ran. The outcome (steps included) is exactly
/// [`run`]'s; the run is a little slower.
pub fn run_with_coverage(
    program: &hir::Program,
    lines: &LineIndex,
    stdin: &[u8],
    config: &RefConfig,
) -> Result<(Outcome, Coverage), RefError> {
    on_large_stack(config, |budget| {
        run_here::<true>(program, lines, stdin, config, budget)
    })
}

/// Runs `work(stack budget)` on a thread with [`RefConfig::stack_bytes`] of stack.
fn on_large_stack<T: Send>(
    config: &RefConfig,
    work: impl FnOnce(usize) -> Result<T, RefError> + Send,
) -> Result<T, RefError> {
    let stack_bytes = config.stack_bytes.max(STACK_MARGIN * 2);
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("refinterp".into())
            .stack_size(stack_bytes)
            .spawn_scoped(scope, || work(stack_bytes - STACK_MARGIN))
            .map_err(RefError::Thread)?;
        match worker.join() {
            Ok(result) => result,
            // A panic is a bug of the interpreter, never a property of the program: re-raise.
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// Parses, analyses and runs SysY source text. Front-end errors come back as
/// [`RefError::Frontend`].
pub fn run_source(
    file_name: &str,
    source: &str,
    stdin: &[u8],
    config: &RefConfig,
) -> Result<Outcome, RefError> {
    let lines = LineIndex::new(source);
    // Parsing and analysis recurse too; the front end bounds its nesting for ordinary stacks.
    let program = frontend::compile_source(file_name, source)?;
    run(&program, &lines, stdin, config)
}

/// [`run_source`], also recording which statements ran (see [`run_with_coverage`]).
pub fn run_source_with_coverage(
    file_name: &str,
    source: &str,
    stdin: &[u8],
    config: &RefConfig,
) -> Result<(Outcome, Coverage), RefError> {
    let lines = LineIndex::new(source);
    let program = frontend::compile_source(file_name, source)?;
    run_with_coverage(&program, &lines, stdin, config)
}

/// The body of [`run`] (with `COV`: of [`run_with_coverage`]), on the interpreter thread.
fn run_here<const COV: bool>(
    program: &hir::Program,
    lines: &LineIndex,
    stdin: &[u8],
    config: &RefConfig,
    stack_budget: usize,
) -> Result<(Outcome, Coverage), RefError> {
    let start = Instant::now();
    frontend::hir_check::check(program).map_err(RefError::InvalidProgram)?;
    let max_words = config.max_memory_words.min(u32::MAX as u64);
    let code = match lower::lower(program, max_words) {
        Ok(code) => code,
        Err(too_big) => {
            return Ok((
                globals_too_big(too_big.words, max_words),
                Coverage::default(),
            ));
        }
    };
    let limits = Limits {
        max_steps: config.max_steps,
        max_depth: config.max_depth,
        max_words: usize::try_from(max_words).unwrap_or(usize::MAX),
        deadline: config.timeout.map(|t| start + t),
        stack_budget,
        input_failure: config.input_failure,
    };
    let unexecuted = || Coverage {
        executed: vec![false; code.stmt_spans.len()],
        spans: code.stmt_spans.clone(),
    };
    let mut machine = match Machine::<COV>::new(&code, stdin.to_vec(), limits) {
        Ok(m) => m,
        Err(words) => return Ok((globals_too_big(words, max_words), unexecuted())),
    };
    let result = machine.run_main();
    let mut outcome = Outcome {
        stdout: machine.io.take_stdout(),
        exit_status: None,
        trap: None,
        steps: machine.steps,
    };
    match (result, machine.stop.take()) {
        (Ok(value), _) => outcome.exit_status = Some((value & 0xff) as u8),
        (Err(_), Some(Stop::Trap { kind, span, detail })) => {
            outcome.trap = Some(Trap::at(kind, lines.span_start(span)).with_detail(detail));
        }
        (Err(_), Some(Stop::Timeout)) => {
            return Err(RefError::TimedOut {
                steps: machine.steps,
            });
        }
        (Err(_), None) => unreachable!("the machine halts only after recording why"),
    }
    let coverage = if COV {
        Coverage {
            spans: code.stmt_spans.clone(),
            executed: std::mem::take(&mut machine.executed),
        }
    } else {
        Coverage::default()
    };
    Ok((outcome, coverage))
}

fn globals_too_big(words: u64, limit: u64) -> Outcome {
    Outcome {
        trap: Some(Trap::new(TrapKind::CallDepth).with_detail(format!(
            "globals need {words} words; the memory limit is {limit}"
        ))),
        ..Outcome::default()
    }
}
