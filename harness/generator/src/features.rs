//! The constructs a generated program actually contains, for coverage statistics.
//!
//! The generator records a [`Feature`] whenever it emits the construct, so the set describes
//! what is in the program (not what the configuration allowed). `harness gen-stats` prints the
//! fraction of programs using each one.

use serde::{Deserialize, Serialize};

macro_rules! features {
    ($($name:ident => $slug:literal,)*) => {
        /// One construct of the language or one optimisation-relevant shape.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Feature {
            $($name,)*
        }

        impl Feature {
            pub const ALL: &'static [Feature] = &[$(Feature::$name,)*];

            /// Stable kebab-case name.
            pub fn slug(self) -> &'static str {
                match self {
                    $(Feature::$name => $slug,)*
                }
            }
        }
    };
}

features! {
    FloatVar => "float-var",
    MixedArith => "int-float-mixed",
    FloatToInt => "float-to-int",
    GlobalScalar => "global-scalar",
    ReadOnlyGlobal => "read-only-global",
    GlobalArray => "global-array",
    LocalArray => "local-array",
    ConstScalar => "const-scalar",
    ConstArray => "const-array",
    ConstDim => "const-in-dim",
    Array1 => "array-rank-1",
    Array2 => "array-rank-2",
    Array3 => "array-rank-3",
    Array4 => "array-rank-4",
    NestedInit => "nested-init",
    ElidedInit => "brace-elided-init",
    PartialInit => "zero-filled-init",
    LateInit => "late-init",
    LoopFilledArray => "loop-filled-array",
    Shadowing => "shadowing",
    PureFunction => "pure-function",
    ImpureFunction => "impure-function",
    VoidFunction => "void-function",
    FloatFunction => "float-function",
    Recursion => "recursion",
    RecursionOtherArray => "recursion-other-array",
    ArrayParam => "array-param",
    MultiDimArrayParam => "multi-dim-array-param",
    PartialRowArg => "partial-row-arg",
    ManyIntParams => "many-int-params",
    ManyFloatParams => "many-float-params",
    LengthParam => "length-param",
    TripParam => "trip-count-param",
    Aliasing => "aliasing",
    If => "if",
    IfElse => "if-else",
    ElseIf => "else-if",
    While => "while",
    NestedLoop => "nested-loop",
    ConstTripLoop => "const-trip-loop",
    RuntimeTripLoop => "runtime-trip-loop",
    DownLoop => "down-counting-loop",
    InfiniteLoopBreak => "while-1-break",
    BottomTestLoop => "bottom-test-loop",
    GuardedLoop => "guarded-condition-loop",
    StraightLoop => "straight-line-loop",
    LoopCarried => "loop-carried-recurrence",
    HoistableGlobalLoad => "hoistable-global-load",
    GlobalClobberedInLoop => "global-written-by-call-in-loop",
    GlobalWrittenAtLoopExit => "global-written-at-loop-exit",
    InvariantLocalArray => "loop-invariant-local-array",
    ArrayToWriter => "loop-array-to-writer",
    TrivialUpdate => "trivial-update",
    RegisterPressure => "register-pressure",
    BigFrame => "big-frame",
    DivCorner => "div-corner",
    FloatCorner => "float-corner",
    NearRedundant => "near-redundant-expr",
    VarPool => "small-variable-pool",
    Break => "break",
    Continue => "continue",
    EarlyReturn => "early-return",
    Block => "nested-block",
    EmptyStmt => "empty-stmt",
    ShortCircuit => "short-circuit",
    EffectInCondition => "effect-in-condition",
    Not => "not",
    ComparisonChain => "comparison-chain",
    InductionCond => "induction-condition",
    Div => "div",
    Mod => "mod",
    SafeWrapper => "safe-wrapper",
    InlineGuard => "inline-div-guard",
    ConstDivisor => "const-divisor",
    FloatDiv => "float-div",
    Call => "call",
    ImpureCallInExpr => "impure-call-in-expr",
    Reuse => "reused-expr",
    Identity => "algebraic-identity",
    Invariant => "loop-invariant-vars",
    InductionIndex => "induction-index",
    ArrayWalk => "array-walk",
    DeadStore => "dead-store",
    LiteralBase => "oct-hex-literal",
    GetInt => "getint",
    GetCh => "getch",
    GetFloat => "getfloat",
    GetArray => "getarray",
    GetFArray => "getfarray",
    PutInt => "putint",
    PutCh => "putch",
    PutFloat => "putfloat",
    PutArray => "putarray",
    PutFArray => "putfarray",
    PutF => "putf",
    Timers => "timers",
    MixCall => "mix-call",
    StatusChecksum => "status-checksum",
    TailSelfCall => "tail-self-call",
    TailCallLocal => "tail-call-local",
    FloatStencil => "float-stencil",
    TriangleSkip => "triangle-skip",
    SkipCount => "triangle-skip-count",
    FloatSweep => "float-sweep",
    FlagSearch => "flag-search",
    TriangleNest => "triangle-nest",
    OutlinedCallee => "outlined-callee",
    RecursiveCallee => "non-tail-recursive-callee",
    BigCallee => "over-inline-budget-callee",
    EffectLoop => "call-effects-in-loop",
    ReadCallBesideWrite => "read-call-beside-write-call",
    CallBetweenStores => "call-between-stores",
    FloatSpecial => "float-special",
    FloatSpecialInput => "float-special-input",
    FloatSpecialCall => "float-special-call",
    RowSweep => "row-sweep",
}

/// A set of [`Feature`]s (a bitset; `Feature::ALL` has fewer than 128 entries).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FeatureSet(u128);

impl FeatureSet {
    pub fn insert(&mut self, f: Feature) {
        self.0 |= 1u128 << (f as u32);
    }

    pub fn contains(&self, f: Feature) -> bool {
        self.0 & (1u128 << (f as u32)) != 0
    }

    pub fn iter(&self) -> impl Iterator<Item = Feature> + '_ {
        Feature::ALL.iter().copied().filter(|&f| self.contains(f))
    }

    pub fn len(&self) -> usize {
        self.0.count_ones() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        assert!(Feature::ALL.len() < 128);
        let mut s = FeatureSet::default();
        assert!(s.is_empty());
        s.insert(Feature::Recursion);
        s.insert(Feature::PutF);
        s.insert(Feature::PutF);
        assert_eq!(s.len(), 2);
        assert!(s.contains(Feature::PutF) && !s.contains(Feature::If));
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            vec![Feature::Recursion, Feature::PutF]
        );
        let slugs: std::collections::BTreeSet<_> = Feature::ALL.iter().map(|f| f.slug()).collect();
        assert_eq!(slugs.len(), Feature::ALL.len(), "slugs are unique");
    }
}
