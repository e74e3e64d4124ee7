//! What a failure is made of: the program, its stdin and the compiler configuration, and how
//! they are read from files.
//!
//! A failure directory (as the campaign saves them) holds `prog.sy`, optionally its stdin
//! (`prog.in`, or `stdin`), and a one-line `config` file: the `sysyc` options of the failing
//! compilation (see [`sysyc::config::Config`]), e.g. `--passes=mem2reg,gvn
//! --backend-stages=none --fault=constfold-sub-swap`. Options given on the command line
//! replace the corresponding parts of it.

use std::path::Path;

use sysyc::config::{Config, ConfigArgs};

use sysy_check::subject::Subject;

/// A failing program and how it was compiled.
#[derive(Clone, Debug)]
pub struct FailureCase {
    /// A name for reports and for the regression file.
    pub name: String,
    pub subject: Subject,
    pub config: Config,
}

impl FailureCase {
    /// Reads a source file and an optional stdin file.
    pub fn from_files(source: &Path, stdin: Option<&Path>, config: Config) -> Result<FailureCase, String> {
        Ok(FailureCase { name: stem(source), subject: Subject::read(source, stdin)?, config })
    }

    /// Reads a failure directory (see the module documentation); `overrides` replace what
    /// they name.
    pub fn from_dir(dir: &Path, overrides: &ConfigArgs) -> Result<FailureCase, String> {
        let path = dir.join("config");
        let base: Config = match std::fs::read_to_string(&path) {
            Ok(text) => text.trim().parse().map_err(|e| format!("{}: {e}", path.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Config::default(),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let config = overrides.apply(base).map_err(|e| e.to_string())?;
        let stdin = ["prog.in", "stdin"].iter().map(|n| dir.join(n)).find(|p| p.exists());
        let mut case = FailureCase::from_files(&dir.join("prog.sy"), stdin.as_deref(), config)?;
        case.name = stem(dir);
        Ok(case)
    }
}

fn stem(path: &Path) -> String {
    let path: std::path::PathBuf = path.components().collect();
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "case".to_string())
}
