//! What a failure is made of: the program, its stdin and the compiler configuration, and how
//! they are read from files.
//!
//! A configuration is written the way a user types it: a pipeline is `-O2` (or `O2`, `2`)
//! or a comma-separated pass list `mem2reg,constfold`; back-end stages are `all`, `none` or
//! the list of optional stages that run; faults are a comma-separated list of injected
//! faults (builds with the `fault-injection` feature only).
//!
//! A failure directory (as the campaign saves them) holds `prog.sy`, optionally its stdin
//! (`stdin`, or `prog.in` as the campaign names it), and
//! optionally one-line files `pipeline`, `backend-stages` and `faults` in the syntax above.
//! Command-line options override the files.

use std::path::{Path, PathBuf};

use sysyc::driver::CompileOptions;
use sysyc::faults::FaultSet;
use sysyc::isa::arm::{BackendOptions, backend_stages};
use sysyc::passes::{self, OptLevel, PassInfo};

/// How the failing program was compiled.
#[derive(Clone, Debug, Default)]
pub struct BuildConfig {
    pub pipeline: Vec<&'static PassInfo>,
    pub backend: BackendOptions,
    pub faults: FaultSet,
}

impl BuildConfig {
    /// Parses a pipeline (`-O2` or `a,b,c`), back-end stages (`all`, `none`, `a,b`) and
    /// faults (`a,b`); `None` means the default (no passes, all stages, no faults).
    pub fn parse(
        pipeline: Option<&str>,
        stages: Option<&str>,
        faults: Option<&str>,
    ) -> Result<BuildConfig, String> {
        Ok(BuildConfig {
            pipeline: pipeline.map(parse_pipeline).transpose()?.unwrap_or_default(),
            backend: stages
                .map(parse_backend_stages)
                .transpose()?
                .unwrap_or_default(),
            faults: faults
                .map(FaultSet::parse)
                .transpose()?
                .unwrap_or_default(),
        })
    }

    /// Compile options with this configuration and `pipeline` in place of its own.
    pub fn options_with(&self, pipeline: &[&'static PassInfo]) -> CompileOptions {
        CompileOptions {
            pipeline: pipeline.to_vec(),
            faults: self.faults.clone(),
            backend: self.backend.clone(),
            ..CompileOptions::default()
        }
    }

    pub fn options(&self) -> CompileOptions {
        self.options_with(&self.pipeline)
    }

    /// The pipeline as `a,b,c` (empty for no passes).
    pub fn pipeline_spec(&self) -> String {
        pipeline_spec(&self.pipeline)
    }

    /// The enabled optional back-end stages, in pipeline order.
    pub fn enabled_stages(&self) -> Vec<&'static str> {
        enabled_stages(&self.backend)
    }

    /// The back-end stages as `all`, `none` or `a,b`.
    pub fn stages_spec(&self) -> String {
        let on = self.enabled_stages();
        if on.len() == backend_stages().len() {
            "all".to_string()
        } else if on.is_empty() {
            "none".to_string()
        } else {
            on.join(",")
        }
    }
}

/// A pipeline as `a,b,c`.
pub fn pipeline_spec(pipeline: &[&'static PassInfo]) -> String {
    pipeline.iter().map(|p| p.name).collect::<Vec<_>>().join(",")
}

/// `-O2`, `O2`, `2`, or a comma-separated pass list (possibly empty).
pub fn parse_pipeline(spec: &str) -> Result<Vec<&'static PassInfo>, String> {
    let spec = spec.trim();
    let level = spec.strip_prefix('-').unwrap_or(spec);
    if level.starts_with('O') || level.chars().all(|c| c.is_ascii_digit()) && !level.is_empty() {
        return OptLevel::parse(level)
            .map(OptLevel::pipeline)
            .ok_or_else(|| format!("unknown optimisation level `{spec}` (known: -O0, -O1, -O2)"));
    }
    passes::parse_pipeline(spec)
}

/// `all`, `none`, or the comma-separated optional stages that run.
pub fn parse_backend_stages(spec: &str) -> Result<BackendOptions, String> {
    match spec.trim() {
        "all" => Ok(BackendOptions::all()),
        "none" | "" => Ok(BackendOptions::mandatory_only()),
        list => {
            let mut options = BackendOptions::mandatory_only();
            for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                options.set(name, true).map_err(|e| e.to_string())?;
            }
            Ok(options)
        }
    }
}

/// The optional stages `options` enables, in pipeline order.
pub fn enabled_stages(options: &BackendOptions) -> Vec<&'static str> {
    backend_stages()
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| options.is_enabled(name).unwrap_or(false))
        .collect()
}

/// Back-end options running exactly `stages` among the optional ones.
pub fn only_stages(stages: &[&'static str]) -> BackendOptions {
    let mut options = BackendOptions::mandatory_only();
    for name in stages {
        // The names come from `backend_stages()`, so they are known.
        let _ = options.set(name, true);
    }
    options
}

/// A failing program and how it was compiled.
#[derive(Clone, Debug)]
pub struct FailureCase {
    /// A name for reports and for the regression file.
    pub name: String,
    /// The source file name used in diagnostics.
    pub file_name: String,
    pub source: String,
    pub stdin: Vec<u8>,
    pub config: BuildConfig,
}

/// Configuration given on the command line; each field overrides the failure directory's file.
#[derive(Clone, Debug, Default)]
pub struct ConfigOverrides {
    pub pipeline: Option<String>,
    pub backend_stages: Option<String>,
    pub faults: Option<String>,
}

impl FailureCase {
    /// Reads a source file and an optional stdin file.
    pub fn from_files(
        source: &Path,
        stdin: Option<&Path>,
        config: BuildConfig,
    ) -> Result<FailureCase, String> {
        let bytes =
            std::fs::read(source).map_err(|e| format!("cannot read {}: {e}", source.display()))?;
        let stdin = match stdin {
            Some(p) => std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?,
            None => Vec::new(),
        };
        Ok(FailureCase {
            name: stem(source),
            file_name: source.display().to_string(),
            source: sysyc::frontend::source_from_bytes(&bytes),
            stdin,
            config,
        })
    }

    /// Reads a failure directory (see the module documentation).
    pub fn from_dir(dir: &Path, overrides: &ConfigOverrides) -> Result<FailureCase, String> {
        let file = |name: &str| -> Result<Option<String>, String> {
            let path = dir.join(name);
            match std::fs::read_to_string(&path) {
                Ok(s) => Ok(Some(s.lines().next().unwrap_or("").trim().to_string())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(format!("cannot read {}: {e}", path.display())),
            }
        };
        let pipeline = overrides.pipeline.clone().or(file("pipeline")?);
        let stages = overrides.backend_stages.clone().or(file("backend-stages")?);
        let faults = overrides.faults.clone().or(file("faults")?);
        let config = BuildConfig::parse(pipeline.as_deref(), stages.as_deref(), faults.as_deref())?;
        let stdin_path = ["stdin", "prog.in"].iter().map(|n| dir.join(n)).find(|p| p.exists());
        let stdin = stdin_path.as_deref();
        let mut case = FailureCase::from_files(&dir.join("prog.sy"), stdin, config)?;
        case.name = stem(dir);
        Ok(case)
    }
}

fn stem(path: &Path) -> String {
    let path: PathBuf = path.components().collect();
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "case".to_string())
}
