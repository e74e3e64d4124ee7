//! Fault injection: named, deliberate miscompilations that prove the harness finds bugs.
//!
//! Only compiled in with the cargo feature `fault-injection`; in normal builds
//! [`FaultSet::is_on`] is the constant `false` and every fault site folds away. Each fault
//! makes one pass or backend stage wrong in one specific, rare situation, so that a campaign
//! has to work to find it, bisection has to name the right culprit, and reduction has to keep
//! the triggering shape.

/// Every fault the compiler knows, with the situation in which it miscompiles.
pub const FAULTS: &[(&str, &str)] = &[
    (
        CONSTFOLD_SUB_SWAP,
        "constfold: `a - b` on two negative constants folds to `b - a`",
    ),
    (
        CONSTFOLD_SREM_SIGN,
        "constfold: a constant `%` with a negative result folds to its absolute value",
    ),
    (
        CONSTFOLD_SREM_ABORT,
        "constfold: folding a constant `%` with a negative result aborts the whole process (a crash no `catch_unwind` can catch)",
    ),
    (
        CONSTFOLD_SREM_HOARD,
        "constfold: folding a constant `%` with a negative result reserves 4 GiB of tables it never frees (a compiler that runs out of memory under a memory limit)",
    ),
    (
        CONSTFOLD_SREM_HANG,
        "constfold: a constant `%` with a negative result counts as folded but stays in the code, so every sweep reports a change and the pass never reaches its fixpoint (a compiler that hangs)",
    ),
    (
        ARM_POW2_DIV_NO_BIAS,
        "arm-const-div: division by 4, 8, 16, ... forgets the bias that rounds negative dividends toward zero",
    ),
    (
        ARM_COPY_PROP_CALL_CLOBBER,
        "arm-copy-prop: forwarding a copy's source to later reads ignores a call in between that clobbers the source register",
    ),
    (
        UNROLL_GUARD_OFF_BY_ONE,
        "unroll: the unrolled loop's guard (`<`, `<=`, `>`, `>=` tests) lets it start with only k-1 iterations left, so a run-time trip count of k-1 modulo k runs one iteration too many",
    ),
    (
        LOAD_ELIM_CALL_KEEPS_GLOBAL,
        "load-elim: a load of a global looks through a call that may write the global and reuses the value stored or loaded before the call",
    ),
    (
        ARM_IF_CONVERT_SWAPPED_INVERT,
        "arm-if-convert: the negated condition of a strict signed comparison is taken as the swapped one (`gt` becomes `lt` instead of `le`), so the side predicated on it (an else side, or a loop latch closing a `<=`/`>=` loop) is skipped when the operands are equal",
    ),
    (
        RECURSIVE_INLINE_STALE_ARG,
        "recursive-inline: a copy made at the second level or deeper binds the first parameter whose argument differs between its call and the enclosing copy's call to the enclosing call's argument",
    ),
    (
        LICM_CALL_WRITES_IGNORED,
        "licm: the objects a loop writes are collected without its calls, so a read-only call with invariant arguments leaves the loop even when a call in the loop writes what it reads",
    ),
    (
        GVN_READ_ONLY_CALL_AS_PURE,
        "gvn: calls of read-only functions are numbered like calls of pure ones, so a second call with the same arguments reuses the first one's result even when something between them (a store, a call) writes what the callee reads; only calls that `inline` left alone can show it",
    ),
    (
        ARM_BRANCH_OPT_FLOAT_INVERT,
        "arm-branch-opt: a two-way branch on a float `<` (`mi`) turned into a fall-through branch gets the integer inverse `ge` instead of `pl`, which is false for unordered operands: a NaN compare takes the wrong side",
    ),
];

/// Name of the constant-folding fault (see [`FAULTS`]).
pub const CONSTFOLD_SUB_SWAP: &str = "constfold-sub-swap";
/// Name of the constant-folding remainder fault (see [`FAULTS`]).
pub const CONSTFOLD_SREM_SIGN: &str = "constfold-srem-sign";
/// Name of the constant-folding crash fault (see [`FAULTS`]): `std::process::abort`, to test
/// that the campaign survives a compiler that takes the process down.
pub const CONSTFOLD_SREM_ABORT: &str = "constfold-srem-abort";
/// Name of the constant-folding memory fault (see [`FAULTS`]): reserved, never touched, so it
/// costs no physical memory, but a process under a data limit of less than 4 GiB dies.
pub const CONSTFOLD_SREM_HOARD: &str = "constfold-srem-hoard";
/// Name of the constant-folding hang fault (see [`FAULTS`]): the compiler never finishes,
/// to test that the campaign's watchdog stops it and names the pass.
pub const CONSTFOLD_SREM_HANG: &str = "constfold-srem-hang";
/// Name of the back-end division fault (see [`FAULTS`]).
pub const ARM_POW2_DIV_NO_BIAS: &str = "arm-pow2-div-no-bias";

/// Name of the post-allocation copy-propagation fault (see [`FAULTS`]): the machine-code
/// verifier must name `arm-copy-prop` as the stage that broke the code.
pub const ARM_COPY_PROP_CALL_CLOBBER: &str = "arm-copy-prop-call-clobber";

/// Name of the loop-unrolling fault (see [`FAULTS`]).
pub const UNROLL_GUARD_OFF_BY_ONE: &str = "unroll-guard-off-by-one";

/// Name of the load-elimination fault (see [`FAULTS`]): memory effects of calls.
pub const LOAD_ELIM_CALL_KEEPS_GLOBAL: &str = "load-elim-call-keeps-global";

/// Name of the if-conversion fault (see [`FAULTS`]).
pub const ARM_IF_CONVERT_SWAPPED_INVERT: &str = "arm-if-convert-swapped-invert";

/// Name of the recursive-inlining fault (see [`FAULTS`]).
pub const RECURSIVE_INLINE_STALE_ARG: &str = "recursive-inline-stale-arg";

/// Name of the loop-invariant code motion fault (see [`FAULTS`]): memory effects of calls in
/// a loop pass.
pub const LICM_CALL_WRITES_IGNORED: &str = "licm-call-writes-ignored";

/// Name of the value-numbering fault (see [`FAULTS`]): needs a callee that survives inlining.
pub const GVN_READ_ONLY_CALL_AS_PURE: &str = "gvn-read-only-call-as-pure";

/// Name of the branch clean-up fault (see [`FAULTS`]): float special values in a back-end
/// stage.
pub const ARM_BRANCH_OPT_FLOAT_INVERT: &str = "arm-branch-opt-float-invert";

/// The set of faults enabled for one compilation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FaultSet {
    enabled: Vec<String>,
}

impl FaultSet {
    /// No faults (the only possibility without the `fault-injection` feature).
    pub fn none() -> FaultSet {
        FaultSet::default()
    }

    /// Enables the named faults; unknown names are an error listing the known ones.
    pub fn parse(names: &str) -> Result<FaultSet, String> {
        let mut set = FaultSet::default();
        for name in names.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            if !cfg!(feature = "fault-injection") {
                return Err("fault injection needs a build with the `fault-injection` feature".into());
            }
            if !FAULTS.iter().any(|(n, _)| *n == name) {
                let known: Vec<&str> = FAULTS.iter().map(|(n, _)| *n).collect();
                return Err(format!("unknown fault `{name}`; known faults: {}", known.join(", ")));
            }
            set.enabled.push(name.to_string());
        }
        Ok(set)
    }

    /// True when fault `name` is enabled (always false without the feature).
    #[inline]
    pub fn is_on(&self, name: &str) -> bool {
        cfg!(feature = "fault-injection") && self.enabled.iter().any(|n| n == name)
    }

    pub fn is_empty(&self) -> bool {
        self.enabled.is_empty()
    }

    pub fn names(&self) -> &[String] {
        &self.enabled
    }
}
