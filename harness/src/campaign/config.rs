//! Compiler configurations (an exact IR pass pipeline plus the set of optional back-end
//! stages) and the strategies that enumerate them.
//!
//! Every strategy reads the pass registry ([`sysyc::passes::REGISTRY`]), the level pipelines
//! and the back-end stage list ([`sysyc::isa::arm::backend_stages`]) at run time, so passes
//! added to the compiler are covered without touching this file. A configuration's id is a
//! hash of its exact pipeline and stage set: two strategies that produce the same pipeline
//! produce the same id (and the campaign runs it once per program).
//!
//! Strategies:
//! * `o-levels` — `-O0`, `-O1`, `-O2` (all back-end stages) and `-O0` with no optional
//!   back-end stage (the plainest code the compiler can emit);
//! * `singles` — each IR pass alone after `mem2reg` (no optional back-end stage), and each
//!   back-end stage alone after `mem2reg`;
//! * `leave-one-out` — `-O2` without every occurrence of one IR pass, and `-O2` with one
//!   back-end stage off;
//! * `pairs` — every unordered pair of (IR passes and back-end stages) after `mem2reg`;
//! * `random` — per program, random pipelines: random passes in random order with repeats
//!   (swarm testing over passes, `mem2reg` first most of the time) and a random stage subset;
//! * `exhaustive` — `-O2` with every subset of the passes named by `--over` switched on
//!   (named passes missing from `-O2` are appended when on): 2^k configurations.

use crate::generators::{Choices, SeededChoices};
use sysyc::driver::CompileOptions;
use sysyc::faults::FaultSet;
use sysyc::isa::arm::{BackendOptions, backend_stages};
use sysyc::passes::{self, O1_PIPELINE, O2_PIPELINE, REGISTRY};

/// One way to compile: exact IR pipeline and enabled optional back-end stages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Configuration {
    /// How the strategy named it (`O2`, `single:dce`, `loo:arm-peephole`, `random:3`, ...).
    pub label: String,
    /// IR passes in order (repeats allowed).
    pub passes: Vec<&'static str>,
    /// Enabled optional back-end stages, in the back end's order.
    pub stages: Vec<&'static str>,
}

impl Configuration {
    fn new(label: impl Into<String>, passes: Vec<&'static str>, stages: Vec<&'static str>) -> Self {
        let mut stages = stages;
        stages.sort_by_key(|s| stage_position(s));
        stages.dedup();
        Configuration { label: label.into(), passes, stages }
    }

    /// Stable id: the first 10 hex digits of the BLAKE3 hash of the exact configuration.
    pub fn id(&self) -> String {
        let text = format!("passes={};stages={}", self.passes.join(","), self.stages.join(","));
        blake3::hash(text.as_bytes()).to_hex()[..10].to_string()
    }

    /// The pipeline as `sysyc --passes` takes it (empty for no pass).
    pub fn passes_arg(&self) -> String {
        self.passes.join(",")
    }

    /// The stage set as `sysyc --backend-stages` takes it (`all`, `none` or a list).
    pub fn stages_arg(&self) -> String {
        if self.stages.is_empty() {
            "none".to_string()
        } else if self.stages.len() == backend_stages().len() {
            "all".to_string()
        } else {
            self.stages.join(",")
        }
    }

    /// The `sysyc` options selecting this configuration.
    pub fn sysyc_args(&self) -> String {
        let passes = if self.passes.is_empty() { "-O0".to_string() } else { format!("--passes={}", self.passes_arg()) };
        format!("{passes} --backend-stages={}", self.stages_arg())
    }

    /// Back-end options (with `faults` for the stages that have fault sites).
    pub fn backend_options(&self, faults: &FaultSet) -> BackendOptions {
        let mut options = BackendOptions::mandatory_only();
        for stage in &self.stages {
            // Stage names come from the back end's own list.
            let _ = options.set(stage, true);
        }
        options.faults = faults.clone();
        options
    }

    /// Compiler options: the pipeline, verification after every pass, the faults.
    pub fn compile_options(&self, faults: &FaultSet) -> CompileOptions {
        CompileOptions {
            pipeline: self.passes.iter().filter_map(|p| passes::lookup(p)).collect(),
            verify_each: true,
            faults: faults.clone(),
            backend: self.backend_options(faults),
            ..CompileOptions::default()
        }
    }
}

/// A way of choosing configurations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    OLevels,
    Singles,
    LeaveOneOut,
    Pairs,
    Random,
    Exhaustive,
}

impl Strategy {
    pub const ALL: [Strategy; 6] = [
        Strategy::OLevels,
        Strategy::Singles,
        Strategy::LeaveOneOut,
        Strategy::Pairs,
        Strategy::Random,
        Strategy::Exhaustive,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Strategy::OLevels => "o-levels",
            Strategy::Singles => "singles",
            Strategy::LeaveOneOut => "leave-one-out",
            Strategy::Pairs => "pairs",
            Strategy::Random => "random",
            Strategy::Exhaustive => "exhaustive",
        }
    }

    /// Parses a comma-separated list of strategy names.
    pub fn parse_list(spec: &str) -> Result<Vec<Strategy>, String> {
        let mut out = Vec::new();
        for name in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let Some(s) = Strategy::ALL.iter().copied().find(|s| s.name() == name) else {
                let known: Vec<&str> = Strategy::ALL.iter().map(|s| s.name()).collect();
                return Err(format!("unknown strategy `{name}` (known: {})", known.join(", ")));
            };
            if !out.contains(&s) {
                out.push(s);
            }
        }
        if out.is_empty() {
            return Err("no strategy given".into());
        }
        Ok(out)
    }
}

/// The default strategies of `harness campaign`.
pub const DEFAULT_STRATEGIES: &str = "o-levels,singles,leave-one-out,random";

/// Which configurations every program is checked under.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Configurations shared by every program (deduplicated by id).
    pub fixed: Vec<Configuration>,
    /// Random configurations drawn per program (0 without the `random` strategy).
    pub random_per_program: usize,
}

impl Plan {
    /// The plan of `strategies`; `over` names the passes of `exhaustive`.
    pub fn new(strategies: &[Strategy], over: &[String], random_per_program: usize) -> Result<Plan, String> {
        let mut fixed: Vec<Configuration> = Vec::new();
        for strategy in strategies {
            let configs = match strategy {
                Strategy::OLevels => o_levels(),
                Strategy::Singles => singles(),
                Strategy::LeaveOneOut => leave_one_out(),
                Strategy::Pairs => pairs(),
                Strategy::Exhaustive => exhaustive(over)?,
                Strategy::Random => Vec::new(),
            };
            for c in configs {
                if !fixed.iter().any(|f| f.id() == c.id()) {
                    fixed.push(c);
                }
            }
        }
        if strategies.contains(&Strategy::Exhaustive) && over.is_empty() {
            return Err("the exhaustive strategy needs --over a,b,...".into());
        }
        let random_per_program = if strategies.contains(&Strategy::Random) { random_per_program } else { 0 };
        Ok(Plan { fixed, random_per_program })
    }

    /// Every configuration of one program: the fixed ones, then its random ones (drawn from
    /// `seed`, so a resumed campaign redraws the same), without duplicate ids.
    pub fn for_program(&self, seed: u64) -> Vec<Configuration> {
        let mut out = self.fixed.clone();
        for c in random_configs(seed, self.random_per_program) {
            if !out.iter().any(|f| f.id() == c.id()) {
                out.push(c);
            }
        }
        out
    }
}

fn ir_pass_names() -> Vec<&'static str> {
    REGISTRY.iter().map(|p| p.name).collect()
}

fn stage_names() -> Vec<&'static str> {
    backend_stages().iter().map(|(n, _)| *n).collect()
}

fn stage_position(name: &str) -> usize {
    backend_stages().iter().position(|(n, _)| *n == name).unwrap_or(usize::MAX)
}

const MEM2REG: &str = "mem2reg";

fn o_levels() -> Vec<Configuration> {
    vec![
        Configuration::new("O0-plain", vec![], vec![]),
        Configuration::new("O0", vec![], stage_names()),
        Configuration::new("O1", O1_PIPELINE.to_vec(), stage_names()),
        Configuration::new("O2", O2_PIPELINE.to_vec(), stage_names()),
    ]
}

fn singles() -> Vec<Configuration> {
    let mut out = Vec::new();
    for pass in ir_pass_names() {
        let pipeline = if pass == MEM2REG { vec![MEM2REG] } else { vec![MEM2REG, pass] };
        out.push(Configuration::new(format!("single:{pass}"), pipeline, vec![]));
    }
    for stage in stage_names() {
        out.push(Configuration::new(format!("single:{stage}"), vec![MEM2REG], vec![stage]));
    }
    out
}

fn leave_one_out() -> Vec<Configuration> {
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for &pass in O2_PIPELINE {
        if seen.contains(&pass) {
            continue;
        }
        seen.push(pass);
        let pipeline: Vec<&'static str> = O2_PIPELINE.iter().copied().filter(|p| *p != pass).collect();
        out.push(Configuration::new(format!("loo:{pass}"), pipeline, stage_names()));
    }
    for stage in stage_names() {
        let stages = stage_names().into_iter().filter(|s| *s != stage).collect();
        out.push(Configuration::new(format!("loo:{stage}"), O2_PIPELINE.to_vec(), stages));
    }
    out
}

fn pairs() -> Vec<Configuration> {
    let items: Vec<&'static str> =
        ir_pass_names().into_iter().filter(|p| *p != MEM2REG).chain(stage_names()).collect();
    let is_stage = |name: &str| stage_position(name) != usize::MAX;
    let mut out = Vec::new();
    for (i, &a) in items.iter().enumerate() {
        for &b in &items[i + 1..] {
            let mut pipeline = vec![MEM2REG];
            let mut stages = Vec::new();
            for x in [a, b] {
                if is_stage(x) { stages.push(x) } else { pipeline.push(x) }
            }
            out.push(Configuration::new(format!("pair:{a}+{b}"), pipeline, stages));
        }
    }
    out
}

/// Subsets of more passes than this are refused (2^12 configurations per program).
const MAX_EXHAUSTIVE: usize = 12;

fn exhaustive(over: &[String]) -> Result<Vec<Configuration>, String> {
    let ir = ir_pass_names();
    let stages = stage_names();
    let mut named: Vec<&'static str> = Vec::new();
    for name in over {
        let Some(&n) = ir.iter().chain(stages.iter()).find(|n| **n == name.as_str()) else {
            return Err(format!("--over: unknown pass or back-end stage `{name}`"));
        };
        if !named.contains(&n) {
            named.push(n);
        }
    }
    if named.len() > MAX_EXHAUSTIVE {
        return Err(format!("--over names {} passes; at most {MAX_EXHAUSTIVE} (2^k configurations)", named.len()));
    }
    let mut out = Vec::new();
    for mask in 0u32..(1 << named.len()) {
        let on = |name: &str| named.iter().position(|n| *n == name).is_none_or(|i| mask & (1 << i) != 0);
        let mut pipeline: Vec<&'static str> = O2_PIPELINE.iter().copied().filter(|p| on(p)).collect();
        for (i, n) in named.iter().enumerate() {
            if mask & (1 << i) != 0 && ir.contains(n) && !O2_PIPELINE.contains(n) {
                pipeline.push(n);
            }
        }
        let enabled: Vec<&'static str> = stages.iter().copied().filter(|s| on(s)).collect();
        let on_names: Vec<&str> = named.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, n)| *n).collect();
        out.push(Configuration::new(format!("subset:{{{}}}", on_names.join("+")), pipeline, enabled));
    }
    Ok(out)
}

/// `n` random configurations for the program of `seed`.
pub fn random_configs(seed: u64, n: usize) -> Vec<Configuration> {
    // A stream separate from the generator's use of the same seed.
    let mut rng = SeededChoices::new(seed ^ 0x005e_ed0f_c0f1_6500);
    let ir = ir_pass_names();
    let stages = stage_names();
    (0..n)
        .map(|i| {
            let len = rng.range(1, 2 * ir.len() as i64) as usize;
            let mut pipeline = Vec::with_capacity(len + 1);
            if rng.chance(0.85) {
                pipeline.push(MEM2REG);
            }
            for _ in 0..len {
                pipeline.push(ir[rng.below(ir.len() as u64) as usize]);
            }
            let enabled = stages.iter().copied().filter(|_| rng.chance(0.5)).collect();
            Configuration::new(format!("random:{i}"), pipeline, enabled)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_strategies_cover_every_pass_and_stage() {
        let strategies = Strategy::parse_list(DEFAULT_STRATEGIES).expect("valid");
        let plan = Plan::new(&strategies, &[], 3).expect("plan");
        for pass in ir_pass_names() {
            assert!(plan.fixed.iter().any(|c| c.label == format!("single:{pass}")), "{pass}");
        }
        for stage in stage_names() {
            assert!(plan.fixed.iter().any(|c| c.passes == vec![MEM2REG] && c.stages == vec![stage]));
        }
        let ids: std::collections::BTreeSet<String> = plan.fixed.iter().map(Configuration::id).collect();
        assert_eq!(ids.len(), plan.fixed.len(), "ids are unique");
        assert_eq!(plan.for_program(7), plan.for_program(7), "random configurations are seeded");
        assert!(plan.for_program(7).len() > plan.fixed.len());
    }

    #[test]
    fn exhaustive_enumerates_every_subset() {
        let over = vec!["constfold".to_string(), "arm-peephole".to_string()];
        let plan = Plan::new(&[Strategy::Exhaustive], &over, 0).expect("plan");
        assert_eq!(plan.fixed.len(), 4);
        let none = &plan.fixed[0];
        assert!(!none.passes.contains(&"constfold") && !none.stages.contains(&"arm-peephole"));
        let all = &plan.fixed[3];
        assert!(all.passes.contains(&"constfold") && all.stages.contains(&"arm-peephole"));
        assert!(Plan::new(&[Strategy::Exhaustive], &["nope".into()], 0).is_err());
        assert!(Strategy::parse_list("o-levels,bogus").is_err());
    }

    #[test]
    fn sysyc_arguments_spell_the_configuration() {
        let c = Configuration::new("x", vec![MEM2REG, "dce"], vec![]);
        assert_eq!(c.sysyc_args(), "--passes=mem2reg,dce --backend-stages=none");
        let o0 = Configuration::new("y", vec![], stage_names());
        assert_eq!(o0.sysyc_args(), "-O0 --backend-stages=all");
    }
}
