//! Random SysY program generator: the fuzzer's source of test programs.
//!
//! Every generated program is valid SysY, free of undefined behaviour, terminates within an
//! estimated amount of work, never depends on the evaluation order of operands or
//! arguments (apart from `&&`/`||` short-circuiting), and reports everything it computed
//! through a checksum printed at exit — so a miscompilation anywhere changes its output, and
//! gcc, the reference interpreter and the compiler under test must all agree on it.
//!
//! # Design (after Csmith, YARPGen and wasm-smith)
//! * **Built as an AST** ([`sysyc::frontend::ast`]) and printed with the front end's
//!   pretty-printer; the front end parses the text back to the same tree.
//! * **UB avoided by construction, not filtered**: the generator tracks, per variable, its
//!   initialisation, whether it is locked against assignment, and a static value range
//!   (loop counters, constants, read-only globals, length parameters), and per expression a
//!   float magnitude bound and an int range. Division, indexing and float→int conversion
//!   are guarded exactly where those facts do not already prove safety (see `expr.rs`).
//!   Integer overflow wraps by the project's semantics (gcc: `-fwrapv`).
//! * **Terminating by construction**: counted loops with locked counters and immutable
//!   limits, guard counters for arbitrary conditions, a DAG call graph plus self-recursion on
//!   a decreasing depth parameter (`loops.rs`, `program.rs`).
//! * **Bounded work**: every construct is charged its estimated dynamic cost (loop bodies
//!   multiplied by their trip bound, calls by their callee's cost) against
//!   [`GenConfig::work_budget`].
//! * **Shapes that make optimisations fire** (YARPGen's generation policies): loop-invariant
//!   "frozen" variables, induction-variable indexing (`a[i * 2 + 1]`), triangular and
//!   constant-trip loops in four shapes, re-used subexpressions and conditions (CSE, GVN,
//!   load reuse), constant and read-only globals, dead stores and write-only arrays, small
//!   pure functions, array parameters aliasing globals, many-argument calls, values live
//!   across calls, late initialisation through both branches of an `if`. And, chosen from
//!   the passes' own preconditions, each behind a knob: straight-line counted loops with
//!   run-time trip counts and loop-carried recurrences (`unroll`, `iv-reduce`), trip counts
//!   that vary around the unrolling factors, global reads in loops that nothing writes or
//!   that are written right before the loop exits or by a call in the loop
//!   (`hoist-global-loads`, `licm`), loop-invariant local arrays (`array-hoist`), updates
//!   that change nothing (`trivial-phi`), many values live across a call, constant division
//!   of every kind on dividends near `INT_MIN`, `-0.0` and rounding floats, frames over 4096
//!   bytes, re-used expressions with swapped operands or converse comparisons, a small pool
//!   of variables per function (`idioms.rs`, `loops.rs`, `expr.rs`).
//! * **Swarm configuration** ([`GenConfig::swarm`]): per program, each feature knob is off
//!   with probability 0.3 and the sizes vary.
//! * **One code path for seeds and fuzzer bytes**: all decisions go through [`Choices`],
//!   implemented by a seeded PCG ([`generate`]) and by `arbitrary::Unstructured`
//!   ([`GeneratedProgram::from_unstructured`], and the [`Arbitrary`] impls).
//! * **Input**: `getint`/`getch`/`getfloat`/`getarray`/`getfarray` run only at the top level
//!   of `main`; the generator writes the matching stdin bytes as it emits them (`input.rs`).
//!   `main` reads its driver loop's trip count and seed values first, so no value of the
//!   program is a compile-time constant.
//! * **Code that runs** (a miscompilation in code that never executes cannot show): `main` is
//!   a *driver loop* that calls every function on every iteration, with arguments that vary
//!   with the iteration (`program.rs`); branch conditions are built to go both ways over the
//!   executions of their statement — tests of loop counters and other ranged variables
//!   (whose ranges the branches then narrow), data tests whose static ranges do not decide
//!   them, `break`s and early `return`s late in a counter's run (`cond.rs`, `stmt.rs`); loops
//!   get real trip counts, often a function of a caller's counter (trip-count parameters,
//!   so one loop runs 0, 1, 2, ... times over the calls). Finally [`generate`] *probes* each
//!   program (a [`Probe`]: the harness passes the reference interpreter with statement
//!   coverage) and, when too little of it ran (or it ran too long), draws another from a
//!   derived seed ([`GenConfig::attempts`]). The generator itself runs nothing: it depends
//!   on the compiler's AST, printer and semantic analysis only.
//! * **Modules in layers, state by concern**: every generating function takes a `Gen`
//!   (`state.rs`): the configuration and the decisions, the variables and scopes with their
//!   reuse pools and fresh names (`env.rs`), the function being generated with its loops
//!   and work (`function.rs`), and what the whole program gathers (features, helpers,
//!   input). Bottom up — `value.rs`, `env.rs`, `function.rs`, `state.rs`, `operand.rs`,
//!   `expr.rs`, `calls.rs`, `cond.rs`, `loops.rs`, `decl.rs`, `idioms.rs` and `kernels.rs`,
//!   `stmt.rs`, `params.rs`, `program.rs` — a module names only modules below it; the two
//!   recursions that cross them upwards (a call's arguments are expressions, a loop's body
//!   is statements) go through the `Calls` and `Statements` traits of `state.rs`, which
//!   `program.rs` fills in.
//!
//! # Use
//! * [`generate`]`(seed, &config, &probe)`, [`GeneratedProgram::from_unstructured`], or
//!   `GeneratedProgram::arbitrary` (swarm configuration and program from the same bytes);
//! * `harness gen --seed N [--swarm | --config FILE] [-o out.sy]` writes `out.sy` and
//!   `out.in` (without `-o`: the source on stdout, the input on stderr); `--dump-config`
//!   prints the configuration as JSON, the format `--config` reads;
//! * `harness gen-stats --seeds A..B [--swarm] [--gcc]` checks a range of seeds (front end,
//!   strict grammar, reference interpreter, optionally gcc under qemu) and prints counts,
//!   distributions and feature coverage.

mod build;
mod calls;
pub mod choices;
mod cond;
pub mod config;
mod decl;
mod effects;
mod env;
mod expr;
pub mod features;
mod function;
pub mod grammar;
mod idioms;
mod input;
mod kernels;
mod loops;
pub mod mutate;
mod operand;
mod params;
mod prelude;
mod program;
mod specials;
mod state;
mod stmt;
mod value;

pub use choices::{Choices, SeededChoices, UnstructuredChoices};
pub use config::{GenConfig, KNOB_COUNT, Knobs, SwarmWeights};
pub use features::{Feature, FeatureSet};

use arbitrary::{Arbitrary, Unstructured};
use sysyc::frontend::ast::CompUnit;
use sysyc::frontend::{LineIndex, hir};
use sysyc::runtime::Outcome;

/// A generated program with its input.
#[derive(Clone, Debug)]
pub struct GeneratedProgram {
    pub unit: CompUnit,
    /// `unit` pretty-printed.
    pub source: String,
    /// The bytes the program reads from stdin.
    pub stdin: Vec<u8>,
    pub config: GenConfig,
    /// The seed, when generated from one (`None` for fuzzer bytes).
    pub seed: Option<u64>,
    /// The constructs the program uses.
    pub features: FeatureSet,
    /// The generator's estimate of the program's dynamic work, in its own units (statements
    /// plus expression nodes, loops at their trip bounds, both branches of every `if`), an
    /// upper bound of the interpreter's steps in practice (`harness gen-stats` reports the
    /// ratio: on seeds 0..1000 of the swarm a median of 9% of it, at most 57%).
    pub estimated_work: u64,
    /// The share of its statements the program's reference run executed, when
    /// [`generate`] probed it (`None` with one attempt, or when the probe run failed).
    pub coverage: Option<f64>,
    /// The outcome of that probe run, when it ended normally (no trap): the reference
    /// interpreter on the analysed tree, as the harness's `Subject::truth` runs it but
    /// with a smaller step budget, which a run that ended within it never felt. The campaign
    /// takes it as the program's truth instead of running the program a second time.
    pub reference: Option<Outcome>,
}

/// A probed program is kept when it runs at least this share of its statements.
pub const PROBE_COVERAGE: f64 = 0.9;
/// Step budget of a probe run: a program that needs more is rejected when another attempt
/// is left (it would make every check of a campaign slow).
pub const PROBE_STEPS: u64 = 1_000_000;

/// Runs an attempt for [`generate`] on its analysed tree with a step budget, and returns the
/// share of its statements that ran with the run's outcome; `None` for a run that exceeded
/// the budget or did not end normally (a generator bug, which the callers' own checks then
/// report). The harness passes the reference interpreter with statement coverage
/// (`sysy_check::subject::coverage_probe`), so that a probe run that ended is also the
/// program's truth (see [`GeneratedProgram::reference`]).
pub type Probe<'a> = dyn Fn(&hir::Program, &LineIndex, &[u8], u64) -> Option<(f64, Outcome)> + Sync + 'a;

/// Generates the program of `seed` under `config` (deterministic: the same seed, config and
/// probe give byte-identical source and stdin).
///
/// Up to [`GenConfig::attempts`] programs are drawn (the first from `seed`, the others from
/// seeds derived from it); each is run by `probe`, and the first that runs at least
/// [`PROBE_COVERAGE`] of its statements within [`PROBE_STEPS`] steps is returned — else the
/// one with the highest coverage among those within the step budget (else the first).
pub fn generate(seed: u64, config: &GenConfig, probe: &Probe<'_>) -> GeneratedProgram {
    let attempts = config.attempts.clamp(1, 16);
    let mut best: Option<(f64, GeneratedProgram)> = None;
    for attempt in 0..attempts {
        let stream = if attempt == 0 {
            seed
        } else {
            // A different stream per attempt (splitmix64's increment, odd).
            seed.wrapping_add((attempt as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
        };
        let mut choices = SeededChoices::new(stream);
        let mut p = generate_with(&mut choices, config);
        p.seed = Some(seed);
        if attempts == 1 {
            return p;
        }
        let probed = run_probe(&p, probe);
        let score = probed.as_ref().map_or(-1.0, |(coverage, _)| *coverage);
        p.coverage = probed.as_ref().map(|(coverage, _)| *coverage);
        p.reference = probed.map(|(_, outcome)| outcome);
        if score >= PROBE_COVERAGE {
            return p;
        }
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((score, p));
        }
    }
    best.map(|(_, p)| p).expect("at least one attempt")
}

/// `probe` on the analysed tree of `p` (analysed as the harness's `Subject::from_ast` does,
/// so that the probe's run is the campaign's truth run step for step).
fn run_probe(p: &GeneratedProgram, probe: &Probe<'_>) -> Option<(f64, Outcome)> {
    let lines = LineIndex::new(&p.source);
    let program = sysyc::frontend::analyze(&p.unit, &lines).ok()?;
    probe(&program, &lines, &p.stdin, PROBE_STEPS)
}

/// Whether `name` is one of the functions every generated program has (the fixed helpers
/// such as `mix` and `safe_div`, and the checksum of the globals), not one it generated.
pub fn is_fixed_helper(name: &str) -> bool {
    prelude::is_reserved(name) || name == program::CHECKSUM_GLOBALS
}

/// Generates a program from an arbitrary stream of decisions.
pub fn generate_with(choices: &mut dyn Choices, config: &GenConfig) -> GeneratedProgram {
    let config = config.clone().normalized();
    let (unit, stdin, features, estimated_work) = program::generate(&config, choices);
    let source = sysyc::frontend::pretty::print(&unit);
    GeneratedProgram {
        unit,
        source,
        stdin,
        config,
        seed: None,
        features,
        estimated_work,
        coverage: None,
        reference: None,
    }
}

impl GeneratedProgram {
    /// A program whose every decision is read from fuzzer bytes (small programs when the
    /// bytes run out).
    pub fn from_unstructured(u: &mut Unstructured<'_>, config: &GenConfig) -> GeneratedProgram {
        generate_with(&mut UnstructuredChoices::new(u), config)
    }

    /// A program read from a file instead of generated (a campaign over a corpus: another
    /// generator's output, earlier failures): parsed with the compiler's front end; the
    /// generator's own facts (configuration, features, work estimate, coverage) are unknown
    /// and left at their defaults. A parse error is returned as `file:line:col: message`.
    pub fn from_source(path: &std::path::Path, source: String, stdin: Vec<u8>) -> Result<GeneratedProgram, String> {
        let unit = sysyc::frontend::parse(&source)
            .map_err(|diagnostics| sysyc::frontend::diag::render(&path.display().to_string(), &source, &diagnostics))?;
        Ok(GeneratedProgram {
            unit,
            source,
            stdin,
            config: GenConfig::default(),
            seed: None,
            features: FeatureSet::default(),
            estimated_work: 0,
            coverage: None,
            reference: None,
        })
    }

    /// Number of lines of the source.
    pub fn lines(&self) -> usize {
        self.source.lines().count()
    }
}

impl<'a> Arbitrary<'a> for GeneratedProgram {
    /// A swarm configuration and a program, both from the bytes.
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<GeneratedProgram> {
        let config = GenConfig::arbitrary(u)?;
        Ok(GeneratedProgram::from_unstructured(u, &config))
    }
}

#[cfg(test)]
mod tests;
