//! Reductions that keep size-driven failures: the decisions the optimiser made by size in the
//! original compilation, held fixed while the program shrinks ([`sysyc::config::SizePins`]).
//!
//! Why: some failures need a callee that `inline` left outlined (a call in a loop next to
//! loads of what it writes) or a loop that `full-unroll` left rolled. Those decisions depend
//! on sizes — a callee above the inline budget, a trip count above the unroll limit — so a
//! reducer that shrinks the callee or the loop bound crosses the budget, the decision flips,
//! the failure goes away, and the reduction stops at a program still over the budget (the
//! reductions of 28 and 35 lines the issue measured). Narrowing the pipeline
//! ([`super::regression::reduction_config`]) helps only when the failure does not need the
//! deciding pass at all.
//!
//! How:
//! 1. [`decisions`]: compile the original under the reduction's configuration, up to the
//!    culprit pass (the decisions that shaped the IR it broke; the whole pipeline for a
//!    back-end culprit), and read the decisions off the IR: every function still called is
//!    *outlined* (when the pipeline inlines), every function that still has a loop is *rolled*
//!    (when it fully unrolls);
//! 2. [`pinned`]: the configuration with those pins when the original still fails exactly
//!    as located under it (a pin can also change a decision the original made the other way:
//!    a function inlined at one site and kept at another; a rolled function's other loops),
//!    else with the outlined pins or the rolled pins alone, else unpinned;
//! 3. the reduction runs under the pinned configuration, so the callee and the loop may
//!    shrink to nothing while the decisions hold;
//! 4. [`unpinned`]: the pins the reduced program does not need are dropped (all at once,
//!    else one by one), so the regression case carries only the decisions its failure
//!    needs — and carries those in its `// config:` line, which reproduces it.

use std::collections::BTreeSet;

use sysyc::config::{Config, SizePins};
use sysyc::ir::{Callee, Module, Opcode};
use sysy_check::steps;
use sysy_check::subject::Case;

use super::bisect::{Checks, Culprit, Located, still_fails};

/// Passes whose decisions the pins hold: inlining (callees left outlined) and full unrolling
/// (loops left rolled).
const INLINERS: [&str; 2] = ["inline", "recursive-inline"];
const UNROLLER: &str = "full-unroll";

/// The size-driven decisions of compiling `case` under `config` before `located`'s culprit
/// (see the module documentation); empty when the pipeline makes none or does not run.
pub fn decisions(case: &Case, config: &Config, located: &Located) -> SizePins {
    let upto = match located.culprit {
        Culprit::Pass { position, .. } => position,
        Culprit::Lowering | Culprit::NotReproduced => return SizePins::default(),
        Culprit::BackendStages(_) | Culprit::Backend => config.pipeline.len(),
    };
    let prefix = config.with_pipeline(config.pipeline[..upto.min(config.pipeline.len())].to_vec());
    let inlines = prefix.pipeline.iter().any(|p| INLINERS.contains(&p.name));
    let unrolls = prefix.pipeline.iter().any(|p| p.name == UNROLLER);
    if !inlines && !unrolls {
        return SizePins::default();
    }
    let Ok(lowered) = steps::lower(&case.subject) else { return SizePins::default() };
    let Ok((module, _)) = steps::optimise(&lowered, &Config { verify_each: false, ..prefix }, None) else {
        return SizePins::default();
    };
    SizePins {
        outlined: if inlines { called_functions(&module) } else { BTreeSet::new() },
        rolled: if unrolls { functions_with_loops(&module) } else { BTreeSet::new() },
    }
}

/// Names of the functions some call of `module` still calls.
fn called_functions(module: &Module) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (_, func) in module.funcs() {
        for (_, inst) in func.all_insts() {
            if let Opcode::Call(Callee::Func(g)) = func.opcode(inst) {
                names.insert(module.func(g).name.clone());
            }
        }
    }
    names
}

/// Names of the functions of `module` with at least one loop.
fn functions_with_loops(module: &Module) -> BTreeSet<String> {
    module
        .funcs()
        .filter(|(_, func)| sysyc::analysis::cache::AnalysisCache::default().loops(func).loops().next().is_some())
        .map(|(_, func)| func.name.clone())
        .collect()
}

fn with_pins(config: &Config, pins: SizePins) -> Config {
    Config { pins, ..config.clone() }
}

/// `config` with the pins of [`decisions`] under which `case` still fails as `located`
/// says (all, else one kind, else none).
pub fn pinned(case: &Case, config: &Config, checks: &Checks<'_>, located: &Located) -> Config {
    let found = decisions(case, config, located);
    if found.is_empty() {
        return config.clone();
    }
    let candidates = [
        found.clone(),
        SizePins { rolled: BTreeSet::new(), ..found.clone() },
        SizePins { outlined: BTreeSet::new(), ..found },
    ];
    candidates
        .into_iter()
        .filter(|pins| !pins.is_empty())
        .map(|pins| with_pins(config, pins))
        .find(|candidate| still_fails(case, candidate, checks, located))
        .unwrap_or_else(|| config.clone())
}

/// `config` without the pins `case` (the reduced program) does not need to fail as
/// `located` says: all dropped when it fails without them, else each one dropped whose
/// removal keeps the failure, in name order.
pub fn unpinned(case: &Case, config: &Config, checks: &Checks<'_>, located: &Located) -> Config {
    if config.pins.is_empty() {
        return config.clone();
    }
    let bare = with_pins(config, SizePins::default());
    if still_fails(case, &bare, checks, located) {
        return bare;
    }
    let mut pins = config.pins.clone();
    let names: Vec<(bool, String)> = pins
        .outlined
        .iter()
        .map(|n| (true, n.clone()))
        .chain(pins.rolled.iter().map(|n| (false, n.clone())))
        .collect();
    for (outlined, name) in names {
        let mut fewer = pins.clone();
        if outlined {
            fewer.outlined.remove(&name);
        } else {
            fewer.rolled.remove(&name);
        }
        if still_fails(case, &with_pins(config, fewer.clone()), checks, located) {
            pins = fewer;
        }
    }
    with_pins(config, pins)
}
