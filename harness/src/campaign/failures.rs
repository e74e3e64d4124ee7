//! The failure corpus: one directory per (program, failure kind, oracle), holding everything
//! needed to reproduce and triage it without the campaign:
//! `prog.sy`, `prog.in` (stdin), `expected.txt` (the reference interpreter's outcome),
//! `actual.txt`, `config.txt` (the first failing configuration, the generator configuration
//! id and every other configuration that failed the same way) and `repro.sh` (one command).
//! The configuration is also written in the one-line files `harness triage` reads
//! (`pipeline`, `backend-stages`, `faults`; see [`crate::triage::case`]), so a failure
//! directory is a triage input as it stands. Automatic triage adds `triage.txt`,
//! `triage.json` and `reduced.sy` (see [`super::autotriage`]).
//!
//! A program usually fails under many configurations at once; grouping by kind and oracle
//! keeps the corpus to one directory per distinct symptom, with the failing configurations
//! listed, the shortest pipeline first (the best starting point for bisection).

use super::config::Configuration;
use super::oracle::{Kind, Mismatch, Oracle, describe};
use crate::generators::GeneratedProgram;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use sysyc::faults::FaultSet;
use sysyc::runtime::Outcome;

/// A failure written to the corpus (what a triage hook receives).
#[derive(Clone, Debug)]
pub struct SavedFailure {
    /// Directory name: `<campaign>-s<seed>-<kind>-<oracle>`.
    pub id: String,
    pub dir: PathBuf,
    pub seed: u64,
    pub kind: &'static str,
    pub oracle: &'static str,
    /// The failing configuration chosen for reproduction.
    pub config: Configuration,
    /// The one-line reproduction command (run inside `dir`).
    pub repro: String,
}

/// The command reproducing a failure found by `oracle` under `config`.
pub fn repro_command(config: &Configuration, oracle: Oracle, faults: &FaultSet) -> String {
    let fault = if faults.is_empty() { String::new() } else { format!(" --fault={}", faults.names().join(",")) };
    let args = config.sysyc_args();
    match oracle {
        Oracle::Pipeline | Oracle::IrInterp => {
            format!("sysyc prog.sy {args}{fault} --verify-each --interpret < prog.in; echo \"exit $?\"")
        }
        Oracle::Backend | Oracle::Toolchain => format!("sysyc prog.sy {args}{fault} -o p"),
        Oracle::Qemu => {
            format!("sysyc prog.sy {args}{fault} -o p && qemu-arm -cpu cortex-a7 p < prog.in; echo \"exit $?\"")
        }
        Oracle::Analysis => format!("sysyc prog.sy {args}{fault} --emit-ir  # then compare the data-flow solvers on it (cargo test -p sysyc dataflow)"),
        Oracle::Gcc => "harness interp prog.sy < prog.in; echo \"exit $?\"  # the truth, which gcc's translation contradicted".into(),
    }
}

/// The command reproducing a configuration that killed the process: the whole compiler (to
/// assembly, then the IR interpreter), since the crash could be anywhere in it.
pub fn crash_repro_command(config: &Configuration, faults: &FaultSet) -> String {
    let fault = if faults.is_empty() { String::new() } else { format!(" --fault={}", faults.names().join(",")) };
    let args = config.sysyc_args();
    format!("sysyc prog.sy {args}{fault} -S -o p.s && sysyc prog.sy {args}{fault} --interpret < prog.in; echo \"exit $?\"")
}

/// Writes one failure directory under `root`; `failing` lists every configuration of the
/// program that failed with the same kind and oracle (the first is reproduced).
#[allow(clippy::too_many_arguments)]
pub fn save(
    root: &Path,
    campaign_id: &str,
    p: &GeneratedProgram,
    truth: &Outcome,
    mismatch: &Mismatch,
    failing: &[Configuration],
    faults: &FaultSet,
) -> Result<SavedFailure> {
    let seed = p.seed.unwrap_or_default();
    let id = format!("{campaign_id}-s{seed}-{}-{}", mismatch.kind.name(), mismatch.oracle.name());
    let dir = root.join(&id);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut sorted: Vec<&Configuration> = failing.iter().collect();
    sorted.sort_by_key(|c| (c.passes.len() + c.stages.len(), c.label.clone()));
    let Some(&config) = sorted.first() else { anyhow::bail!("a failure without a configuration") };
    let repro = match mismatch.kind {
        Kind::CompilerCrash => crash_repro_command(config, faults),
        _ => repro_command(config, mismatch.oracle, faults),
    };
    let actual = match &mismatch.actual {
        Some(outcome) => format!("{}-- {}\n", describe(outcome), mismatch.detail),
        None => format!("{}\n", mismatch.detail),
    };
    let mut config_text = format!(
        "kind: {}\noracle: {}\nconfig: {} ({})\nsysyc: {}\nfaults: {}\nseed: {seed}\ngen-config: {} (swarm: `harness gen --seed {seed} --swarm`)\n\nevery configuration that failed this way:\n",
        mismatch.kind.name(),
        mismatch.oracle.name(),
        config.id(),
        config.label,
        config.sysyc_args(),
        faults.names().join(","),
        p.config.id(),
    );
    for c in &sorted {
        config_text.push_str(&format!("{} {:<24} {}\n", c.id(), c.label, c.sysyc_args()));
    }
    let expected = describe(truth);
    let script = format!("#!/bin/sh\n# run inside this directory\n{repro}\n");
    let pipeline = format!("{}\n", config.passes_arg());
    let stages = format!("{}\n", config.stages_arg());
    let fault_names = format!("{}\n", faults.names().join(","));
    let files: [(&str, &[u8]); 9] = [
        ("prog.sy", p.source.as_bytes()),
        ("prog.in", &p.stdin),
        ("expected.txt", expected.as_bytes()),
        ("actual.txt", actual.as_bytes()),
        ("config.txt", config_text.as_bytes()),
        ("repro.sh", script.as_bytes()),
        ("pipeline", pipeline.as_bytes()),
        ("backend-stages", stages.as_bytes()),
        ("faults", fault_names.as_bytes()),
    ];
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).with_context(|| format!("writing {}/{name}", dir.display()))?;
    }
    std::fs::write(dir.join("gen-config.json"), p.config.to_json())?;
    Ok(SavedFailure {
        id,
        dir,
        seed,
        kind: mismatch.kind.name(),
        oracle: mismatch.oracle.name(),
        config: config.clone(),
        repro,
    })
}
