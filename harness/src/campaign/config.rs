//! Compiler configurations (an exact IR pass pipeline plus the set of optional back-end
//! stages) and the strategies that enumerate them.
//!
//! Every strategy reads the pass registry ([`sysyc::passes::REGISTRY`]), the level pipelines
//! and the back-end stages ([`sysyc::isa::arm::BackendStage`]) at run time, so passes added to the
//! compiler are covered without touching this file. A configuration's id is a hash of its
//! exact pipeline and stage set ([`Config::id`]): two strategies that produce the same
//! pipeline produce the same id (and the campaign runs it once per program).
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

use sysy_generator::{Choices, SeededChoices};
use sysyc::config::Config;
use sysyc::isa::arm::BackendStage;
use sysyc::passes::{O1_PIPELINE, O2_PIPELINE, PassInfo, ir_passes, lookup};

/// A configuration a strategy chose, with the name it gave it (`O2`, `single:dce`,
/// `loo:arm-peephole`, `random:3`, ...). Every check verifies the IR after every pass and the
/// machine code after every back-end stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    pub label: String,
    pub config: Config,
}

impl Planned {
    fn new(label: impl Into<String>, passes: &[&'static str], stages: impl IntoIterator<Item = BackendStage>) -> Planned {
        let pipeline = passes.iter().map(|p| pass(p)).collect();
        let config = Config { verify_each: true, ..Config::default() }.with_pipeline(pipeline).with_stages(stages);
        Planned { label: label.into(), config }
    }

    /// The configuration's stable id ([`Config::id`]).
    pub fn id(&self) -> String {
        self.config.id()
    }
}

fn pass(name: &str) -> &'static PassInfo {
    lookup(name).expect("strategies name registered passes")
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

/// The default strategies of `harness campaign`: `-O0`/`-O1`/`-O2` and 4 random pipelines per
/// program, chosen by bugs found per minute (`results/mutation/2026-11-26-defaults/`): against
/// 48 mechanical mutants in 20-second campaigns, these 8 configurations per program killed 18
/// mutants, every one of the 16 that `o-levels,singles,leave-one-out,random` (~100
/// configurations per program) killed and two more, each of the 16 sooner, because they check
/// about seven times more programs in the same time. Singles and leave-one-out added no kill;
/// they remain available (`--strategy`), e.g. for per-stage attribution in `summary.md`.
pub const DEFAULT_STRATEGIES: &str = "o-levels,random";

/// Which configurations every program is checked under.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Configurations shared by every program (deduplicated by id).
    pub fixed: Vec<Planned>,
    /// Random configurations drawn per program (0 without the `random` strategy).
    pub random_per_program: usize,
}

impl Plan {
    /// The plan of `strategies`; `over` names the passes of `exhaustive`.
    pub fn new(strategies: &[Strategy], over: &[String], random_per_program: usize) -> Result<Plan, String> {
        let mut fixed: Vec<Planned> = Vec::new();
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
    pub fn for_program(&self, seed: u64) -> Vec<Planned> {
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
    ir_passes().map(|p| p.name).collect()
}

const MEM2REG: &str = "mem2reg";

fn o_levels() -> Vec<Planned> {
    vec![
        Planned::new("O0-plain", &[], []),
        Planned::new("O0", &[], BackendStage::ALL),
        Planned::new("O1", O1_PIPELINE, BackendStage::ALL),
        Planned::new("O2", O2_PIPELINE, BackendStage::ALL),
    ]
}

fn singles() -> Vec<Planned> {
    let mut out = Vec::new();
    for pass in ir_pass_names() {
        let pipeline = if pass == MEM2REG { vec![MEM2REG] } else { vec![MEM2REG, pass] };
        out.push(Planned::new(format!("single:{pass}"), &pipeline, []));
    }
    for stage in BackendStage::ALL {
        out.push(Planned::new(format!("single:{}", stage.name()), &[MEM2REG], [stage]));
    }
    out
}

fn leave_one_out() -> Vec<Planned> {
    let mut out = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for &pass in O2_PIPELINE {
        if seen.contains(&pass) {
            continue;
        }
        seen.push(pass);
        let pipeline: Vec<&'static str> = O2_PIPELINE.iter().copied().filter(|p| *p != pass).collect();
        out.push(Planned::new(format!("loo:{pass}"), &pipeline, BackendStage::ALL));
    }
    for stage in BackendStage::ALL {
        out.push(Planned::new(format!("loo:{}", stage.name()), O2_PIPELINE, BackendStage::ALL.into_iter().filter(|s| *s != stage)));
    }
    out
}

fn pairs() -> Vec<Planned> {
    let ir = ir_pass_names();
    let items: Vec<&'static str> =
        ir.iter().copied().filter(|p| *p != MEM2REG).chain(BackendStage::ALL.map(BackendStage::name)).collect();
    let mut out = Vec::new();
    for (i, &a) in items.iter().enumerate() {
        for &b in &items[i + 1..] {
            let mut pipeline = vec![MEM2REG];
            let mut stages = Vec::new();
            for x in [a, b] {
                match BackendStage::from_name(x) {
                    Some(stage) => stages.push(stage),
                    None => pipeline.push(x),
                }
            }
            out.push(Planned::new(format!("pair:{a}+{b}"), &pipeline, stages));
        }
    }
    out
}

/// Subsets of more passes than this are refused (2^12 configurations per program).
const MAX_EXHAUSTIVE: usize = 12;

fn exhaustive(over: &[String]) -> Result<Vec<Planned>, String> {
    let ir = ir_pass_names();
    let mut named: Vec<&'static str> = Vec::new();
    for name in over {
        let Some(n) = lookup(name).map(|p| p.name) else {
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
        let enabled = BackendStage::ALL.into_iter().filter(|s| on(s.name()));
        let on_names: Vec<&str> = named.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, n)| *n).collect();
        out.push(Planned::new(format!("subset:{{{}}}", on_names.join("+")), &pipeline, enabled));
    }
    Ok(out)
}

/// `n` random configurations for the program of `seed`.
pub fn random_configs(seed: u64, n: usize) -> Vec<Planned> {
    // A stream separate from the generator's use of the same seed.
    let mut rng = SeededChoices::new(seed ^ 0x005e_ed0f_c0f1_6500);
    let ir = ir_pass_names();
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
            let enabled: Vec<BackendStage> = BackendStage::ALL.into_iter().filter(|_| rng.chance(0.5)).collect();
            Planned::new(format!("random:{i}"), &pipeline, enabled)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_strategies_are_the_levels_and_random_pipelines() {
        let strategies = Strategy::parse_list(DEFAULT_STRATEGIES).expect("valid");
        let plan = Plan::new(&strategies, &[], 4).expect("plan");
        let labels: Vec<&str> = plan.fixed.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["O0-plain", "O0", "O1", "O2"]);
        assert_eq!(plan.for_program(7).len(), 8, "four random pipelines per program");
    }

    #[test]
    fn singles_and_leave_one_out_cover_every_pass_and_stage() {
        let strategies = Strategy::parse_list("o-levels,singles,leave-one-out,random").expect("valid");
        let plan = Plan::new(&strategies, &[], 3).expect("plan");
        for pass in ir_pass_names() {
            assert!(plan.fixed.iter().any(|c| c.label == format!("single:{pass}")), "{pass}");
        }
        for stage in BackendStage::ALL {
            assert!(plan.fixed.iter().any(|c| c.config.pass_names() == vec![MEM2REG] && c.config.stages == [stage].into()));
        }
        let ids: std::collections::BTreeSet<String> = plan.fixed.iter().map(Planned::id).collect();
        assert_eq!(ids.len(), plan.fixed.len(), "ids are unique");
        assert_eq!(plan.for_program(7), plan.for_program(7), "random configurations are seeded");
        assert!(plan.for_program(7).len() > plan.fixed.len());
        assert!(plan.fixed.iter().all(|c| c.config.verify_each));
    }

    #[test]
    fn exhaustive_enumerates_every_subset() {
        let over = vec!["constfold".to_string(), "arm-peephole".to_string()];
        let plan = Plan::new(&[Strategy::Exhaustive], &over, 0).expect("plan");
        assert_eq!(plan.fixed.len(), 4);
        let none = &plan.fixed[0].config;
        assert!(!none.pass_names().contains(&"constfold") && !none.stages.contains(&BackendStage::Peephole));
        let all = &plan.fixed[3].config;
        assert!(all.pass_names().contains(&"constfold") && all.stages.contains(&BackendStage::Peephole));
        assert!(Plan::new(&[Strategy::Exhaustive], &["nope".into()], 0).is_err());
        assert!(Strategy::parse_list("o-levels,bogus").is_err());
    }

    #[test]
    fn configurations_print_as_sysyc_options() {
        let c = Planned::new("x", &[MEM2REG, "dce"], []);
        assert_eq!(c.config.to_string(), "--passes=mem2reg,dce --backend-stages=none --verify-each");
        let o0 = Planned::new("y", &[], BackendStage::ALL);
        assert_eq!(o0.config.to_string(), "-O0 --verify-each");
    }
}
