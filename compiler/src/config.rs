//! One compiler configuration: what `sysyc` compiles with, and what every tool around it
//! (the harness's campaign, triage, conformance and benchmark runs, the filetests) names
//! when it says "compiled like this".
//!
//! A [`Config`] is the IR pass pipeline, the optional back-end stages, the injected faults,
//! the size-driven decisions held fixed ([`SizePins`]: how a reduction keeps a callee
//! outlined or a loop rolled while it shrinks them) and the two debugging switches that
//! change what a compilation does (`--verify-each`, `--opt-bisect-limit`). Its text form is
//! exactly the `sysyc` command-line options that select it, in a canonical order:
//!
//! ```text
//! -O2
//! -O0 --backend-stages=none
//! --passes=mem2reg,gvn,licm --backend-stages=arm-peephole,arm-branch-opt --fault=constfold-sub-swap
//! ```
//!
//! `Display` writes that form and `FromStr` reads it back (`parse(display(c)) == c`), so a
//! configuration recorded in a campaign row, a failure directory or a regression header is
//! also the command that reproduces it. The same options reach the command lines through
//! [`ConfigArgs`] (flattened into `sysyc` and every `harness` subcommand that compiles).

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use crate::faults::FaultSet;
use crate::isa::arm::{BackendOptions, BackendStage};
use crate::passes::{self, O1_PIPELINE, O2_PIPELINE, OptLevel, PassInfo};
pub use crate::passes::size_pins::SizePins;

/// How to compile (see the module documentation).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    /// IR passes in order (repeats allowed; empty is `-O0`).
    pub pipeline: Vec<&'static PassInfo>,
    /// The optional back-end stages that run (all of them by default).
    pub stages: BTreeSet<BackendStage>,
    /// When set, the optional stages run only in these functions (the others get the
    /// mandatory back end alone): how triage finds the function a stage miscompiles.
    pub stages_only_in: Option<BTreeSet<String>>,
    /// Injected miscompilations (builds with the `fault-injection` feature only).
    pub faults: FaultSet,
    /// Size-driven decisions held fixed whatever the sizes (`--keep-outlined`,
    /// `--keep-rolled`).
    pub pins: SizePins,
    /// Verify the IR after lowering and after every pass, and the machine code after every
    /// back-end stage.
    pub verify_each: bool,
    /// Opt-bisect: run only the first N (pass, function) steps and log every step.
    pub opt_bisect_limit: Option<u64>,
}

impl Default for Config {
    /// `-O0` with every back-end stage: what `sysyc` does without options.
    fn default() -> Config {
        Config::level(OptLevel::O0)
    }
}

impl Config {
    /// The pipeline of an optimisation level, every back-end stage, nothing else.
    pub fn level(level: OptLevel) -> Config {
        Config {
            pipeline: level.pipeline(),
            stages: BackendStage::ALL.into_iter().collect(),
            stages_only_in: None,
            faults: FaultSet::none(),
            pins: SizePins::default(),
            verify_each: false,
            opt_bisect_limit: None,
        }
    }

    /// This configuration with another pipeline.
    pub fn with_pipeline(&self, pipeline: Vec<&'static PassInfo>) -> Config {
        Config { pipeline, ..self.clone() }
    }

    /// This configuration with another set of back-end stages.
    pub fn with_stages(&self, stages: impl IntoIterator<Item = BackendStage>) -> Config {
        Config { stages: stages.into_iter().collect(), ..self.clone() }
    }

    /// The optimisation level whose pipeline this is, if any.
    pub fn opt_level(&self) -> Option<OptLevel> {
        [OptLevel::O0, OptLevel::O1, OptLevel::O2].into_iter().find(|l| l.pipeline() == self.pipeline)
    }

    /// The pipeline as `sysyc` options: `-O2`, or `--passes=a,b,c`.
    pub fn pipeline_words(&self) -> String {
        pipeline_words(&self.pipeline)
    }

    /// The pipeline's pass names.
    pub fn pass_names(&self) -> Vec<&'static str> {
        self.pipeline.iter().map(|p| p.name).collect()
    }

    /// The enabled stages' names, in back-end order.
    pub fn stage_names(&self) -> Vec<&'static str> {
        self.stages.iter().map(|s| s.name()).collect()
    }

    /// The pipeline as `--passes` takes it (`a,b,c`; empty for none).
    pub fn pipeline_spec(&self) -> String {
        self.pass_names().join(",")
    }

    /// The stage set as `--backend-stages` takes it: `all`, `none` or `a,b`.
    pub fn stages_spec(&self) -> String {
        if self.stages.len() == BackendStage::ALL.len() {
            "all".into()
        } else if self.stages.is_empty() {
            "none".into()
        } else {
            self.stage_names().join(",")
        }
    }

    /// A short stable identifier of the pipeline and stage set (what a campaign row keys
    /// on): the first 10 hex digits of the BLAKE3 hash of `passes=..;stages=..`.
    pub fn id(&self) -> String {
        let text = format!("passes={};stages={}", self.pipeline_spec(), self.stage_names().join(","));
        blake3::hash(text.as_bytes()).to_hex()[..10].to_string()
    }

    /// What the back end needs of this configuration, for the function `name`.
    pub fn backend_options(&self) -> BackendOptions {
        BackendOptions {
            stages: self.stages.clone(),
            faults: self.faults.clone(),
            stages_only_in: self.stages_only_in.clone(),
            verify: self.verify_each,
        }
    }
}

fn name_list(spec: &str) -> BTreeSet<String> {
    spec.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
}

fn join(names: &BTreeSet<String>) -> String {
    names.iter().cloned().collect::<Vec<_>>().join(",")
}

/// The first words of the canonical form: the level, or the pass list.
fn pipeline_words(pipeline: &[&'static PassInfo]) -> String {
    let names: Vec<&str> = pipeline.iter().map(|p| p.name).collect();
    if names.is_empty() {
        "-O0".into()
    } else if names == O1_PIPELINE {
        "-O1".into()
    } else if names == O2_PIPELINE {
        "-O2".into()
    } else {
        format!("--passes={}", names.join(","))
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&pipeline_words(&self.pipeline))?;
        if self.stages.len() != BackendStage::ALL.len() {
            write!(f, " --backend-stages={}", self.stages_spec())?;
        }
        if let Some(only) = &self.stages_only_in {
            write!(f, " --stages-only-in={}", only.iter().cloned().collect::<Vec<_>>().join(","))?;
        }
        if !self.faults.is_empty() {
            write!(f, " --fault={}", self.faults.names().join(","))?;
        }
        if !self.pins.outlined.is_empty() {
            write!(f, " --keep-outlined={}", join(&self.pins.outlined))?;
        }
        if !self.pins.rolled.is_empty() {
            write!(f, " --keep-rolled={}", join(&self.pins.rolled))?;
        }
        if self.verify_each {
            f.write_str(" --verify-each")?;
        }
        if let Some(n) = self.opt_bisect_limit {
            write!(f, " --opt-bisect-limit={n}")?;
        }
        Ok(())
    }
}

/// Why a configuration text or option could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// `-O0`, `-O1`, `-O2` (also `O2` and `2`).
pub fn parse_level(text: &str) -> Result<OptLevel, ConfigError> {
    OptLevel::parse(text).ok_or_else(|| ConfigError(format!("unknown optimisation level `{text}` (known: -O0, -O1, -O2)")))
}

/// `all`, `none`, or a comma-separated list of back-end stage names.
pub fn parse_stages(spec: &str) -> Result<BTreeSet<BackendStage>, ConfigError> {
    match spec.trim() {
        "all" => Ok(BackendStage::ALL.into_iter().collect()),
        "none" | "" => Ok(BTreeSet::new()),
        list => list
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| {
                BackendStage::from_name(n).ok_or_else(|| {
                    let known: Vec<&str> = BackendStage::ALL.iter().map(|s| s.name()).collect();
                    let hint = if passes::lookup(n).is_some() { " (an IR pass: use --passes)" } else { "" };
                    ConfigError(format!("unknown back-end stage `{n}`{hint}; known stages: {}", known.join(", ")))
                })
            })
            .collect(),
    }
}

fn parse_pipeline(spec: &str) -> Result<Vec<&'static PassInfo>, ConfigError> {
    passes::parse_pipeline(spec).map_err(ConfigError)
}

impl FromStr for Config {
    type Err = ConfigError;

    /// Reads the canonical form (and any order of the same options; `--opt=value` or
    /// `--opt value`). Without a level or `--passes` the pipeline is empty (`-O0`).
    fn from_str(text: &str) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        let mut pipeline_given = false;
        let mut words = text.split_whitespace();
        while let Some(word) = words.next() {
            let (option, inline) = match word.split_once('=') {
                Some((o, v)) => (o, Some(v.to_string())),
                None => (word, None),
            };
            let mut value = |name: &str| -> Result<String, ConfigError> {
                match &inline {
                    Some(v) => Ok(v.clone()),
                    None => words.next().map(str::to_string).ok_or_else(|| ConfigError(format!("{name} needs a value"))),
                }
            };
            let mut set_pipeline = |pipeline: Vec<&'static PassInfo>| {
                if std::mem::replace(&mut pipeline_given, true) {
                    return Err(ConfigError(format!("`{word}`: the pipeline is given twice (-O and --passes exclude each other)")));
                }
                config.pipeline = pipeline;
                Ok(())
            };
            match option {
                "-O" => set_pipeline(parse_level(&value("-O")?)?.pipeline())?,
                o if o.starts_with("-O") && inline.is_none() => set_pipeline(parse_level(o)?.pipeline())?,
                "--passes" => set_pipeline(parse_pipeline(&value("--passes")?)?)?,
                "--backend-stages" => config.stages = parse_stages(&value("--backend-stages")?)?,
                "--stages-only-in" => {
                    config.stages_only_in =
                        Some(value("--stages-only-in")?.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect());
                }
                "--fault" => config.faults = FaultSet::parse(&value("--fault")?).map_err(ConfigError)?,
                "--keep-outlined" => config.pins.outlined = name_list(&value("--keep-outlined")?),
                "--keep-rolled" => config.pins.rolled = name_list(&value("--keep-rolled")?),
                "--verify-each" if inline.is_none() => config.verify_each = true,
                "--opt-bisect-limit" => {
                    let v = value("--opt-bisect-limit")?;
                    config.opt_bisect_limit = Some(
                        v.parse().map_err(|_| ConfigError(format!("--opt-bisect-limit: `{v}` is not a number of steps")))?,
                    );
                }
                _ => return Err(ConfigError(format!("unknown compiler option `{word}` in configuration `{text}`"))),
            }
        }
        Ok(config)
    }
}

/// The configuration options of a command line, shared by `sysyc` and every `harness`
/// subcommand that compiles (flatten it with `#[command(flatten)]`).
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigArgs {
    /// Optimisation level: -O0, -O1 or -O2.
    #[arg(short = 'O', value_name = "LEVEL", value_parser = ["0", "1", "2"], conflicts_with = "passes")]
    pub opt_level: Option<String>,
    /// Run exactly these IR passes, in order (comma-separated), instead of a level's pipeline.
    #[arg(long, value_name = "PASS,...")]
    pub passes: Option<String>,
    /// Optional back-end stages to run: all (the default), none, or a comma-separated list.
    #[arg(long, value_name = "all|none|STAGE,...")]
    pub backend_stages: Option<String>,
    /// Run the optional back-end stages only in these functions (comma-separated).
    #[arg(long, value_name = "FUNCTION,...")]
    pub stages_only_in: Option<String>,
    /// Enable named miscompilations (builds with the `fault-injection` feature only).
    #[arg(long, value_name = "NAME,...", hide = !cfg!(feature = "fault-injection"))]
    pub fault: Option<String>,
    /// Never inline calls of these functions, whatever their size (comma-separated).
    #[arg(long, value_name = "FUNCTION,...")]
    pub keep_outlined: Option<String>,
    /// Never fully unroll loops of these functions, whatever their trip count (comma-separated).
    #[arg(long, value_name = "FUNCTION,...")]
    pub keep_rolled: Option<String>,
    /// How executables are built: `in-process` (assembler and linker in the compiler, the
    /// freestanding runtime) or `gnu` (GNU as, the gcc driver, glibc).
    #[arg(long, value_name = "in-process|gnu", default_value_t)]
    pub assembler: crate::runtime::library::Assembler,
}

impl ConfigArgs {
    /// The configuration these options select; `default` is the level used when neither
    /// `-O` nor `--passes` is given.
    pub fn config(&self, default: OptLevel) -> Result<Config, ConfigError> {
        self.apply(Config::level(default))
    }

    /// `base` with the parts these options name replaced.
    pub fn apply(&self, base: Config) -> Result<Config, ConfigError> {
        fn named(option: &'static str) -> impl Fn(ConfigError) -> ConfigError {
            move |e| ConfigError(format!("{option}: {}", e.0))
        }
        let mut config = base;
        if let Some(level) = &self.opt_level {
            config.pipeline = parse_level(level).map_err(named("-O"))?.pipeline();
        }
        if let Some(spec) = &self.passes {
            config.pipeline = parse_pipeline(spec).map_err(named("--passes"))?;
        }
        if let Some(spec) = &self.backend_stages {
            config.stages = parse_stages(spec).map_err(named("--backend-stages"))?;
        }
        if let Some(only) = &self.stages_only_in {
            config.stages_only_in = Some(only.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect());
        }
        if let Some(names) = &self.fault {
            config.faults = FaultSet::parse(names).map_err(|e| named("--fault")(ConfigError(e)))?;
        }
        if let Some(names) = &self.keep_outlined {
            config.pins.outlined = name_list(names);
        }
        if let Some(names) = &self.keep_rolled {
            config.pins.rolled = name_list(names);
        }
        Ok(config)
    }

    /// Whether any option was given (commands that read a configuration from a file let the
    /// command line override it only then).
    pub fn is_empty(&self) -> bool {
        *self == ConfigArgs::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::REGISTRY;
    use proptest::prelude::*;

    fn ir_pass() -> impl Strategy<Value = &'static PassInfo> {
        let ir: Vec<&'static PassInfo> = REGISTRY.iter().filter(|p| !p.is_backend()).collect();
        proptest::sample::select(ir)
    }

    fn config() -> impl Strategy<Value = Config> {
        (
            prop_oneof![
                Just(OptLevel::O0.pipeline()),
                Just(OptLevel::O1.pipeline()),
                Just(OptLevel::O2.pipeline()),
                proptest::collection::vec(ir_pass(), 0..12),
            ],
            proptest::collection::btree_set(proptest::sample::select(BackendStage::ALL.to_vec()), 0..=BackendStage::ALL.len()),
            proptest::option::of(proptest::collection::btree_set("[a-z][a-z0-9_]{0,6}", 1..3)),
            proptest::collection::btree_set("[a-z][a-z0-9_]{0,6}", 0..3),
            proptest::collection::btree_set("[a-z][a-z0-9_]{0,6}", 0..3),
            any::<bool>(),
            proptest::option::of(0u64..1000),
        )
            .prop_map(|(pipeline, stages, stages_only_in, outlined, rolled, verify_each, opt_bisect_limit)| Config {
                pipeline,
                stages,
                stages_only_in,
                faults: FaultSet::none(),
                pins: SizePins { outlined, rolled },
                verify_each,
                opt_bisect_limit,
            })
    }

    proptest! {
        #[test]
        fn text_form_round_trips(c in config()) {
            let text = c.to_string();
            let back: Config = text.parse().map_err(|e: ConfigError| TestCaseError::fail(e.0))?;
            prop_assert_eq!(&back, &c, "{}", text);
            prop_assert_eq!(back.to_string(), text);
        }
    }

    #[test]
    fn canonical_forms() {
        assert_eq!(Config::default().to_string(), "-O0");
        assert_eq!(Config::level(OptLevel::O2).to_string(), "-O2");
        let plain = Config::default().with_stages([]);
        assert_eq!(plain.to_string(), "-O0 --backend-stages=none");
        let c: Config = "--verify-each --backend-stages arm-peephole --passes=mem2reg,dce".parse().expect("valid");
        assert_eq!(c.to_string(), "--passes=mem2reg,dce --backend-stages=arm-peephole --verify-each");
        assert_eq!("-O 2".parse::<Config>().expect("valid"), Config::level(OptLevel::O2));
    }

    #[test]
    fn bad_texts_say_what_is_wrong() {
        let err = |t: &str| t.parse::<Config>().expect_err(t).0;
        assert!(err("-O2 --passes=dce").contains("twice"));
        assert!(err("-O3").contains("unknown optimisation level"));
        assert!(err("--passes=nope").contains("unknown pass `nope`"));
        assert!(err("--passes=arm-peephole").contains("back-end stage"));
        assert!(err("--backend-stages=dce").contains("an IR pass"));
        assert!(err("--frobnicate").contains("unknown compiler option"));
        assert!(err("--opt-bisect-limit=x").contains("not a number"));
    }

    #[test]
    fn ids_depend_on_pipeline_and_stages_only() {
        let a = Config::level(OptLevel::O2);
        let b = Config { verify_each: true, ..a.clone() };
        assert_eq!(a.id(), b.id());
        assert_ne!(a.id(), a.with_stages([]).id());
        assert_ne!(a.id(), Config::level(OptLevel::O1).id());
    }
}
