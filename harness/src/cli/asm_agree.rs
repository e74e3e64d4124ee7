//! `harness asm-agree`: the encoder oracle ([`sysy_check::oracles::encoder`]) over whole suites —
//! every assembly text given (`.s` files), or every `.sy` case of the given directories
//! compiled by sysyc at each requested level — reporting each disagreement with GNU `as` and
//! the totals.

use super::fail;
use sysy_check::oracles::encoder;
use clap::Args;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use sysyc::config::Config;
use sysyc::passes::OptLevel;

#[derive(Args)]
pub struct AsmAgreeArgs {
    /// Assembly files (`.s`), SysY files (`.sy`) or directories of `.sy` cases.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Optimisation levels the SysY programs are compiled at (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "0,2")]
    pub opt: Vec<String>,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
}

/// One assembly text to compare: where it came from and how it is made.
enum Text {
    Assembly(PathBuf),
    Compiled(PathBuf, OptLevel),
}

impl Text {
    fn name(&self) -> String {
        match self {
            Text::Assembly(p) => p.display().to_string(),
            Text::Compiled(p, level) => format!("{} -{}", p.display(), level.name()),
        }
    }

    fn text(&self) -> Result<String, String> {
        let read = |p: &Path| std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
        match self {
            Text::Assembly(p) => Ok(String::from_utf8_lossy(&read(p)?).into_owned()),
            Text::Compiled(p, level) => {
                let source = sysyc::frontend::source_from_bytes(&read(p)?);
                sysyc::driver::compile_asm(&p.display().to_string(), &source, &Config::level(*level))
                    .map(|(asm, _, _)| asm)
                    .map_err(|e| e.to_string())
            }
        }
    }
}

fn texts(args: &AsmAgreeArgs) -> Result<Vec<Text>, String> {
    let levels = args
        .opt
        .iter()
        .map(|l| match l.trim_start_matches(['-', 'O']) {
            "0" => Ok(OptLevel::O0),
            "1" => Ok(OptLevel::O1),
            "2" => Ok(OptLevel::O2),
            _ => Err(format!("unknown level `{l}` (0, 1 or 2)")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::new();
    for path in &args.paths {
        let mut sources = Vec::new();
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|e| format!("cannot list {}: {e}", path.display()))?;
            sources.extend(entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "sy")));
            sources.sort();
        } else if path.extension().is_some_and(|e| e == "sy") {
            sources.push(path.clone());
        } else {
            out.push(Text::Assembly(path.clone()));
        }
        out.extend(sources.into_iter().flat_map(|p| levels.iter().map(move |&l| Text::Compiled(p.clone(), l))));
    }
    Ok(out)
}

pub fn run(args: &AsmAgreeArgs) -> ExitCode {
    let texts = match texts(args) {
        Ok(t) => t,
        Err(e) => return fail(&e),
    };
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(args.jobs.max(1)).build() {
        Ok(p) => p,
        Err(e) => return fail(&format!("cannot start workers: {e}")),
    };
    let verdicts: Vec<(String, Result<u64, String>)> = pool.install(|| {
        texts
            .par_iter()
            .map(|t| {
                let verdict = t.text().map_err(|e| format!("not compared: {e}")).and_then(|asm| {
                    encoder::check(&asm).map(|()| asm.len() as u64).map_err(|f| format!("{}: {}", f.kind, f.detail))
                });
                (t.name(), verdict)
            })
            .collect()
    });
    let mut bytes = 0;
    let mut bad = 0;
    for (name, verdict) in &verdicts {
        match verdict {
            Ok(n) => bytes += n,
            Err(e) => {
                bad += 1;
                if crate::outln!("{name}: {e}").is_err() {
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    let summary = crate::outln!(
        "{} assembly texts ({bytes} bytes of text) compared with GNU as: {} agree, {bad} do not",
        verdicts.len(),
        verdicts.len() - bad
    );
    if bad == 0 && summary.is_ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
