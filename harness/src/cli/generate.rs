//! The `harness gen` command: write one generated program and its stdin.

use crate::sources::generated::generate;
use sysy_generator::GenConfig;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// Configuration source shared by `gen` and `gen-stats`.
#[derive(clap::Args, Debug, Clone)]
pub struct GenConfigArgs {
    /// A generator configuration (JSON, as written by `--dump-config`).
    #[arg(long, conflicts_with = "swarm")]
    pub config: Option<PathBuf>,
    /// A random configuration per seed (swarm testing).
    #[arg(long)]
    pub swarm: bool,
}

impl GenConfigArgs {
    /// The configuration for `seed`.
    pub fn config_for(&self, seed: u64, fixed: &Option<GenConfig>) -> GenConfig {
        match fixed {
            Some(c) => c.clone(),
            None if self.swarm => GenConfig::swarm(seed),
            None => GenConfig::default(),
        }
    }

    /// Reads the `--config` file, if any.
    pub fn load(&self) -> Result<Option<GenConfig>> {
        let Some(path) = &self.config else {
            return Ok(None);
        };
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let config =
            GenConfig::from_json(&text).with_context(|| format!("parsing {}", path.display()))?;
        Ok(Some(config))
    }
}

/// `harness gen --seed N [--config FILE | --swarm] [-o out.sy]`
#[derive(clap::Args, Debug)]
pub struct GenArgs {
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub config: GenConfigArgs,
    /// Output file; its stdin goes next to it with extension `.in`. Without it the source
    /// goes to stdout (and the input, if any, to stderr).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Print the configuration used (JSON) instead of generating.
    #[arg(long)]
    pub dump_config: bool,
}

pub fn run_gen(args: &GenArgs) -> Result<()> {
    let fixed = args.config.load()?;
    let config = args.config.config_for(args.seed, &fixed);
    if args.dump_config {
        outln!("{}", config.to_json())?;
        return Ok(());
    }
    let p = generate(args.seed, &config);
    match &args.output {
        Some(path) => {
            std::fs::write(path, &p.source)
                .with_context(|| format!("writing {}", path.display()))?;
            let input = path.with_extension("in");
            std::fs::write(&input, &p.stdin)
                .with_context(|| format!("writing {}", input.display()))?;
        }
        None => {
            out!("{}", p.source)?;
            if !p.stdin.is_empty() {
                err!("{}", String::from_utf8_lossy(&p.stdin));
            }
        }
    }
    Ok(())
}
