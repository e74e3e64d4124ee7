//! Generator configuration: size limits and feature probabilities.
//!
//! A [`GenConfig`] is plain data (serialised as JSON) so a run can be recorded and replayed.
//! [`GenConfig::default`] enables everything with moderate sizes; [`GenConfig::swarm`] draws a
//! random configuration per program ("swarm testing", Groce et al.): every feature knob is
//! switched off with some probability and the sizes vary, so that programs differ in *kind*
//! and not only in detail — a feature that masks a bug (say, calls that spill everything) is
//! absent from a good share of the programs. [`GenConfig::id`] is a short stable hash for
//! records.

use super::choices::{Choices, SeededChoices, UnstructuredChoices};
use arbitrary::{Arbitrary, Unstructured};
use serde::{Deserialize, Serialize};

/// Size limits and feature probabilities of the generator.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenConfig {
    /// Generated functions besides `main` and the fixed helpers.
    pub max_functions: u32,
    /// Parameters of a generated function (more when `knobs.many_params` fires).
    pub max_params: u32,
    /// Statements of one block.
    pub max_block_stmts: u32,
    /// Statements of one function, all blocks together.
    pub max_function_stmts: u32,
    /// Nesting depth of statements (blocks, ifs, loops).
    pub max_stmt_depth: u32,
    /// Depth of expression trees.
    pub max_expr_depth: u32,
    /// Global variables and arrays.
    pub max_globals: u32,
    /// Local declarations of one block.
    pub max_block_locals: u32,
    /// Rank of arrays (1..=4).
    pub max_array_rank: u32,
    /// Elements of one array.
    pub max_array_elems: u32,
    /// Size of one array dimension.
    pub max_dim: u32,
    /// Trip count of one loop.
    pub max_trip_count: u32,
    /// Depth bound of a recursive function.
    pub max_recursion_depth: u32,
    /// Estimated dynamic work of the whole program (statements and expression nodes).
    pub work_budget: u64,
    /// Estimated dynamic number of output calls before the final checksum.
    pub output_budget: u64,
    /// Programs generated per seed at most: each is run in the reference interpreter, and
    /// the first that runs at least `PROBE_COVERAGE` of its statements within `PROBE_STEPS`
    /// steps (see `generate`) is kept (else the one that ran the most). 1 keeps the first
    /// program as it is.
    #[serde(default = "default_attempts")]
    pub attempts: u32,
    pub knobs: Knobs,
}

fn default_attempts() -> u32 {
    3
}

/// Declares [`Knobs`] (one field per knob, with its doc and default), [`KNOB_COUNT`], and the
/// knobs in declaration order: [`Knobs::NAMES`], [`Knobs::values`] and a mutable view. One
/// list, so a new knob cannot be missing from one of them.
macro_rules! knobs {
    ($($(#[$attr:meta])* $name:ident: $default:literal,)*) => {
        /// Feature probabilities in percent; 0 switches the feature off.
        #[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct Knobs {
            $($(#[$attr])* pub $name: u8,)*
        }

        impl Default for Knobs {
            fn default() -> Knobs {
                Knobs { $($name: $default,)* }
            }
        }

        /// Number of knobs in [`Knobs`].
        pub const KNOB_COUNT: usize = [$(stringify!($name)),*].len();

        impl Knobs {
            /// The knobs' field names, in declaration order (the order of [`SwarmWeights`]).
            pub const NAMES: [&'static str; KNOB_COUNT] = [$(stringify!($name)),*];

            /// The knobs' values in [`Knobs::NAMES`] order.
            pub fn values(&self) -> [u8; KNOB_COUNT] {
                [$(self.$name),*]
            }

            fn all_mut(&mut self) -> [&mut u8; KNOB_COUNT] {
                [$(&mut self.$name),*]
            }
        }
    };
}

knobs! {
    /// `float` variables, arithmetic and functions.
    float: 50,
    /// Arrays at all.
    arrays: 60,
    /// Arrays of rank 2 and more.
    multi_dim: 40,
    /// `const` scalars and arrays.
    consts: 40,
    /// Global scalars and arrays (besides the checksum).
    globals: 60,
    /// Globals that are only ever read.
    read_only_globals: 30,
    /// Functions without side effects.
    pure_functions: 50,
    /// Functions with side effects (globals, arrays, output).
    impure_functions: 50,
    /// Self-recursive functions with a decreasing depth parameter.
    recursion: 35,
    /// Array parameters.
    array_params: 50,
    /// A partially indexed array (`a[i]`) passed as an array argument.
    partial_rows: 40,
    /// Functions with many parameters (> 4 ints, > 16 floats).
    many_params: 15,
    /// A length parameter telling a callee how much of an array to walk.
    length_params: 40,
    /// `if` statements.
    ifs: 50,
    /// `else` branches.
    elses: 50,
    /// `while` loops.
    loops: 50,
    /// Loops inside loops.
    nested_loops: 40,
    /// `break`.
    breaks: 25,
    /// `continue`.
    continues: 20,
    /// `return` before the end of a function.
    early_returns: 20,
    /// `&&` / `||`.
    short_circuit: 40,
    /// Calls with side effects inside `&&` / `||` operands.
    effects_in_conditions: 30,
    /// `/` and `%`.
    div_mod: 30,
    /// Csmith-style `safe_div`/`safe_mod` wrappers (versus inline guards).
    safe_wrappers: 50,
    /// Reading stdin (`getint`, `getch`, `getfloat`, `getarray`, `getfarray`).
    input: 40,
    /// Output along the way (`putint`, `putch`, `putfloat`, `putarray`, `putfarray`).
    output: 20,
    /// `putf`.
    putf: 20,
    /// `starttime` / `stoptime`.
    timers: 10,
    /// Declarations that shadow an outer name.
    shadowing: 25,
    /// The same array reachable under two names in one function; also self-calls of a
    /// recursive function that pass other arrays than the one received (locals of the
    /// calling activation among them).
    aliasing: 40,
    /// Stores overwritten before being read.
    dead_stores: 15,
    /// Re-use of an earlier expression (CSE, load reuse).
    reuse: 25,
    /// Variables kept unchanged inside a loop (loop-invariant code).
    invariants: 40,
    /// `int x; if (c) x = ..; else x = ..;` and arrays filled by a loop after declaration.
    late_init: 20,
    /// float→int conversions.
    float_to_int: 30,
    /// Octal and hexadecimal literals.
    literal_bases: 15,
    /// Nested `{ }` blocks with their own declarations.
    blocks: 20,
    /// Calls of the checksum mixer inside the program (not only at the end).
    mix_calls: 30,
    /// Comparison chains like `a < b == c`.
    comparison_chains: 10,
    /// `main` returns (a function of) the checksum as exit status.
    status_checksum: 50,
    /// Algebraic identities (`e + 0`, `(e + c) - c`, `e - e`, ...).
    identities: 20,
    /// A trip-count parameter bounding the loops of a function, which callers vary (so the
    /// loops run 0, 1, 2, ... times, remainders of unrolling included).
    #[serde(default)]
    trip_params: 70,
    /// Counted loops with a straight-line body and a run-time trip count (single-block
    /// loops for `unroll`), with loop-carried recurrences through locals and arrays.
    #[serde(default)]
    straight_loops: 50,
    /// Loops reading global scalars and fixed global elements that nothing in the function
    /// writes (`hoist-global-loads`, `licm`), and loops reading a global around calls that
    /// write it.
    #[serde(default)]
    hoist_shapes: 40,
    /// Local arrays declared in a loop body with the same contents every iteration
    /// (`array-hoist`), sometimes with one element that changes.
    #[serde(default)]
    array_hoist: 30,
    /// Updates that leave a variable unchanged (`x = x + 0` in one branch, the same value
    /// in both), whose phis become trivial after simplification (`trivial-phi`).
    #[serde(default)]
    trivial_phis: 50,
    /// Many int and float values live across a call (register pressure, callee-saved
    /// registers).
    #[serde(default)]
    register_pressure: 25,
    /// Division and remainder by constants of every kind (powers of two, others,
    /// negative) of dividends near `INT_MIN`, `INT_MAX` and negative.
    #[serde(default)]
    div_corners: 40,
    /// Float values `-0.0` and ints that round when converted, with comparisons and
    /// output that tell them apart.
    #[serde(default)]
    float_corners: 30,
    /// Local arrays over 4096 bytes (stack offsets beyond the immediate ranges).
    #[serde(default)]
    big_frames: 20,
    /// Re-used expressions with their operands in another order or the converse
    /// comparison (`b * a` for `a * b`, `b > a` for `a < b`).
    #[serde(default)]
    near_redundant: 30,
    /// YARPGen-style reads from a small pool of variables per function, so the same
    /// operands meet often.
    #[serde(default)]
    var_pool: 40,
    /// Callees that survive inlining (recursive without a tail call, or over the inliner's
    /// size budget with two call sites), each with one memory effect a call can have (reads
    /// or writes a global, an array parameter or a global array, or nothing), called in
    /// loops next to loads and stores of what they touch (`effects.rs`).
    #[serde(default)]
    call_effects: 45,
    /// Float special values (NaN, ±inf, -0.0 from arithmetic, overflow and input) compared
    /// under every predicate, in both branch directions, with operands swapped, as values
    /// and in if-convertible shapes (`specials.rs`).
    #[serde(default)]
    float_specials: 35,
}


impl Default for GenConfig {
    fn default() -> GenConfig {
        GenConfig {
            max_functions: 6,
            max_params: 5,
            max_block_stmts: 6,
            max_function_stmts: 40,
            max_stmt_depth: 4,
            max_expr_depth: 4,
            max_globals: 8,
            max_block_locals: 4,
            max_array_rank: 4,
            max_array_elems: 256,
            max_dim: 16,
            max_trip_count: 64,
            max_recursion_depth: 8,
            work_budget: 4_000_000,
            output_budget: 200,
            attempts: default_attempts(),
            knobs: Knobs::default(),
        }
    }
}

impl GenConfig {
    /// A random configuration for one program, a pure function of `seed`.
    pub fn swarm(seed: u64) -> GenConfig {
        // A stream distinct from the program's own, so config and program choices do not
        // correlate when both use the same seed.
        GenConfig::swarm_from(&mut SeededChoices::new(seed ^ 0x5741_524d_5741_524d))
    }

    /// [`GenConfig::swarm`] with each knob switched off with the probability `weights` give
    /// it (the coverage-guided swarm of the campaign; [`SwarmWeights::default`] gives exactly
    /// [`GenConfig::swarm`]).
    pub fn swarm_weighted(seed: u64, weights: &SwarmWeights) -> GenConfig {
        GenConfig::swarm_from_weighted(&mut SeededChoices::new(seed ^ 0x5741_524d_5741_524d), weights)
    }

    /// A random configuration drawn from `c` (shared by [`GenConfig::swarm`] and the
    /// `Arbitrary` implementation).
    pub fn swarm_from(c: &mut impl Choices) -> GenConfig {
        GenConfig::swarm_from_weighted(c, &SwarmWeights::default())
    }

    fn swarm_from_weighted(c: &mut impl Choices, weights: &SwarmWeights) -> GenConfig {
        let d = GenConfig::default();
        let mut k = Knobs::default();
        for (knob, &off) in k.all_mut().into_iter().zip(&weights.off) {
            // Off with probability `off` (swarm), otherwise 1/4 .. 2x of the default.
            *knob = if c.chance(off) {
                0
            } else {
                let base = (*knob).max(4) as i64;
                c.range(base / 4, (base * 2).min(100)) as u8
            };
        }
        let mut size = |default: u32, lo: u32, hi: u32| -> u32 {
            debug_assert!(lo <= default && default <= hi);
            if c.chance(0.5) {
                default
            } else {
                c.range(lo as i64, hi as i64) as u32
            }
        };
        GenConfig {
            max_functions: size(d.max_functions, 0, 12),
            max_params: size(d.max_params, 1, 8),
            max_block_stmts: size(d.max_block_stmts, 2, 10),
            max_function_stmts: size(d.max_function_stmts, 8, 80),
            max_stmt_depth: size(d.max_stmt_depth, 1, 6),
            max_expr_depth: size(d.max_expr_depth, 1, 6),
            max_globals: size(d.max_globals, 0, 16),
            max_block_locals: size(d.max_block_locals, 1, 8),
            max_array_rank: size(d.max_array_rank, 1, 4),
            max_array_elems: size(d.max_array_elems, 8, 1024),
            max_dim: size(d.max_dim, 2, 40),
            max_trip_count: size(d.max_trip_count, 2, 200),
            max_recursion_depth: size(d.max_recursion_depth, 1, 12),
            work_budget: size(d.work_budget as u32, 100_000, 12_000_000) as u64,
            output_budget: size(d.output_budget as u32, 0, 400) as u64,
            attempts: d.attempts,
            knobs: k,
        }
    }

    /// Brings every limit into the range the generator supports (configs read from files or
    /// built by hand may hold anything).
    pub fn normalized(mut self) -> GenConfig {
        self.max_functions = self.max_functions.min(64);
        self.max_params = self.max_params.clamp(1, 32);
        self.max_block_stmts = self.max_block_stmts.clamp(1, 64);
        self.max_function_stmts = self.max_function_stmts.clamp(1, 1000);
        self.max_stmt_depth = self.max_stmt_depth.clamp(1, 12);
        self.max_expr_depth = self.max_expr_depth.clamp(1, 10);
        self.max_globals = self.max_globals.min(128);
        self.max_block_locals = self.max_block_locals.clamp(1, 32);
        self.max_array_rank = self.max_array_rank.clamp(1, 4);
        self.max_array_elems = self.max_array_elems.clamp(1, 1 << 16);
        self.max_dim = self.max_dim.clamp(1, 1024);
        self.max_trip_count = self.max_trip_count.clamp(1, 10_000);
        self.max_recursion_depth = self.max_recursion_depth.clamp(1, 24);
        self.work_budget = self.work_budget.clamp(1_000, 100_000_000);
        self.attempts = self.attempts.clamp(1, 16);
        for knob in self.knobs.all_mut() {
            *knob = (*knob).min(100);
        }
        self
    }

    /// Canonical JSON text.
    pub fn to_json(&self) -> String {
        // Serialising plain data with string keys cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    pub fn from_json(text: &str) -> Result<GenConfig, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// A short stable identifier: the first 12 hex digits of the BLAKE3 hash of the
    /// canonical JSON.
    pub fn id(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_default();
        blake3::hash(json.as_bytes()).to_hex()[..12].to_string()
    }
}

/// Per knob (in [`Knobs::NAMES`] order), the probability that a swarm configuration switches
/// it off. The default, [`SWARM_OFF`] for every knob, is the unguided swarm.
#[derive(Clone, Debug, PartialEq)]
pub struct SwarmWeights {
    pub off: [f64; KNOB_COUNT],
}

/// The unguided swarm's probability of switching a knob off.
pub const SWARM_OFF: f64 = 0.3;

impl Default for SwarmWeights {
    fn default() -> SwarmWeights {
        SwarmWeights { off: [SWARM_OFF; KNOB_COUNT] }
    }
}


impl<'a> Arbitrary<'a> for GenConfig {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<GenConfig> {
        Ok(GenConfig::swarm_from(&mut UnstructuredChoices::new(u)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_round_trip_and_stable_id() {
        let c = GenConfig::swarm(3);
        let back = GenConfig::from_json(&c.to_json()).expect("own JSON parses");
        assert_eq!(back, c);
        assert_eq!(back.id(), c.id());
        assert_eq!(c.id().len(), 12);
        assert_ne!(GenConfig::default().id(), c.id());
        assert!(
            GenConfig::from_json("{\"max_functions\": 1}").is_err(),
            "missing fields are an error"
        );
    }

    #[test]
    fn swarm_is_deterministic_and_varied() {
        assert_eq!(GenConfig::swarm(11), GenConfig::swarm(11));
        let configs: Vec<GenConfig> = (0..50).map(GenConfig::swarm).collect();
        let off_float = configs.iter().filter(|c| c.knobs.float == 0).count();
        assert!(
            off_float > 3 && off_float < 30,
            "float off in {off_float}/50"
        );
        assert!(
            configs
                .iter()
                .any(|c| c.max_functions != configs[0].max_functions)
        );
        for c in &configs {
            assert_eq!(
                c.clone().normalized(),
                *c,
                "swarm configs are already normal"
            );
        }
    }

    #[test]
    fn knob_names_follow_the_fields() {
        let json = serde_json::to_value(Knobs::default()).expect("knobs serialise");
        let fields: std::collections::BTreeSet<&str> =
            json.as_object().expect("an object").keys().map(String::as_str).collect();
        let names: std::collections::BTreeSet<&str> = Knobs::NAMES.into_iter().collect();
        assert_eq!(fields, names);
        let knobs = Knobs { float: 1, float_specials: 2, ..Knobs::default() };
        let values = knobs.values();
        assert_eq!((values[0], values[KNOB_COUNT - 1]), (1, 2));
        let json = serde_json::to_value(&knobs).expect("knobs serialise");
        for (name, value) in Knobs::NAMES.iter().zip(values) {
            assert_eq!(json[name], u64::from(value), "{name}");
        }
    }

    #[test]
    fn weighted_swarm_follows_the_weights() {
        for seed in 0..20 {
            assert_eq!(GenConfig::swarm_weighted(seed, &SwarmWeights::default()), GenConfig::swarm(seed));
        }
        let mut weights = SwarmWeights::default();
        weights.off[0] = 0.0;
        weights.off[1] = 1.0;
        for seed in 0..20 {
            let c = GenConfig::swarm_weighted(seed, &weights);
            assert!(c.knobs.float > 0 && c.knobs.arrays == 0);
        }
    }

    #[test]
    fn normalization_clamps_limits() {
        let c = GenConfig {
            max_array_rank: 9,
            max_dim: 0,
            knobs: Knobs {
                float: 250,
                ..Knobs::default()
            },
            ..GenConfig::default()
        };
        let n = c.normalized();
        assert_eq!((n.max_array_rank, n.max_dim, n.knobs.float), (4, 1, 100));
    }
}
