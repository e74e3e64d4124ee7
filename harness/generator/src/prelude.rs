//! Fixed helper functions a generated program may call: the checksum mixers and the
//! Csmith-style safe-math wrappers.
//!
//! Each helper is total (defined for every argument the generator can pass) and returns a
//! value the generator has a static bound for:
//! * `mix(v)` folds an `int` into the global `checksum` (wrapping arithmetic);
//! * `mixf(x)` folds a float via `f2i(x * 1024.0)`;
//! * `mixz(x)` folds a float and the sign of a zero: `mixf(x)`, then `f2i(1.0 / x)` (±10^9
//!   for ±0.0 — the only place a generated program divides by a float that may be zero; the
//!   infinity goes straight into `f2i`'s comparisons);
//! * `f2i(x)` converts any finite float to `int`, saturating at ±10^9 (so the conversion
//!   itself is always in range);
//! * `fclamp(x)` clamps a finite float to ±[`FLOAT_VAR_BOUND`](super::value::FLOAT_VAR_BOUND);
//! * `safe_div`, `safe_mod` never trap: divisor 0 gives the dividend, divisor −1 gives the
//!   (wrapping) negation / 0, so `INT_MIN / -1` is never computed;
//! * `safe_fdiv(a, b)` divides only by `|b| ≥ 1`, so its result is at most `|a|`.
//!
//! Only the helpers a program uses are emitted (with their dependencies), in a fixed order
//! after the `checksum` global.

use sysyc::frontend::ast::Item;

/// Name of the global checksum every program prints at exit.
pub(super) const CHECKSUM: &str = "checksum";

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Helper {
    // Dependencies come first: the emission order is this order.
    Mix,
    F2I,
    MixF,
    MixZ,
    FClamp,
    SafeDiv,
    SafeMod,
    SafeFDiv,
}

impl Helper {
    pub(super) const ALL: [Helper; 8] = [
        Helper::Mix,
        Helper::F2I,
        Helper::MixF,
        Helper::MixZ,
        Helper::FClamp,
        Helper::SafeDiv,
        Helper::SafeMod,
        Helper::SafeFDiv,
    ];

    pub(super) fn name(self) -> &'static str {
        match self {
            Helper::Mix => "mix",
            Helper::F2I => "f2i",
            Helper::MixF => "mixf",
            Helper::MixZ => "mixz",
            Helper::FClamp => "fclamp",
            Helper::SafeDiv => "safe_div",
            Helper::SafeMod => "safe_mod",
            Helper::SafeFDiv => "safe_fdiv",
        }
    }

    /// Helpers this one calls.
    pub(super) fn deps(self) -> &'static [Helper] {
        match self {
            Helper::MixF => &[Helper::Mix, Helper::F2I],
            Helper::MixZ => &[Helper::Mix, Helper::F2I, Helper::MixF],
            _ => &[],
        }
    }

    /// Estimated work of one call (same units as the generator's budget).
    pub(super) fn cost(self) -> u64 {
        match self {
            Helper::Mix => 8,
            Helper::F2I | Helper::FClamp => 8,
            Helper::MixF => 20,
            Helper::MixZ => 40,
            Helper::SafeDiv | Helper::SafeMod => 10,
            Helper::SafeFDiv => 10,
        }
    }

    fn source(self) -> &'static str {
        match self {
            Helper::Mix => {
                "void mix(int v) {\n    checksum = checksum * 16777619 + v + 1013904223;\n}\n"
            }
            Helper::F2I => {
                "int f2i(float x) {\n    if (x > 1000000000.0) return 1000000000;\n    \
                 if (x < -1000000000.0) return -1000000000;\n    return x;\n}\n"
            }
            Helper::MixF => "void mixf(float x) {\n    mix(f2i(x * 1024.0));\n}\n",
            Helper::MixZ => "void mixz(float x) {\n    mixf(x);\n    mix(f2i(1.0 / x));\n}\n",
            Helper::FClamp => {
                "float fclamp(float x) {\n    if (x > 100000.0) return 100000.0;\n    \
                 if (x < -100000.0) return -100000.0;\n    return x;\n}\n"
            }
            Helper::SafeDiv => {
                "int safe_div(int a, int b) {\n    if (b == 0) return a;\n    if (b == -1) return -a;\n    \
                 return a / b;\n}\n"
            }
            Helper::SafeMod => {
                "int safe_mod(int a, int b) {\n    if (b == 0) return a;\n    if (b == -1) return 0;\n    \
                 return a % b;\n}\n"
            }
            Helper::SafeFDiv => {
                "float safe_fdiv(float a, float b) {\n    if (b > -1.0 && b < 1.0) return a;\n    \
                 return a / b;\n}\n"
            }
        }
    }

    /// The helper's definition as AST items (spans cleared).
    pub(super) fn items(self) -> Vec<Item> {
        // The sources above are fixed text covered by a test; a parse failure is a bug here.
        sysyc::frontend::parse(self.source())
            .expect("helper source parses")
            .without_spans()
            .items
    }
}

/// Names the generator must never declare.
pub(super) fn is_reserved(name: &str) -> bool {
    name == CHECKSUM || Helper::ALL.iter().any(|h| h.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_parse_and_check() {
        let mut src = String::from("int checksum = 0;\n");
        for h in Helper::ALL {
            assert!(!h.items().is_empty());
            src.push_str(h.source());
        }
        src.push_str(
            "int main() { mix(safe_div(-2147483647 - 1, -1) + safe_mod(7, 0)); return 0; }\n",
        );
        sysyc::frontend::compile_source("prelude.sy", &src).unwrap_or_else(|e| panic!("{e}"));
        assert!(is_reserved("safe_fdiv") && is_reserved(CHECKSUM) && !is_reserved("g0"));
    }
}
