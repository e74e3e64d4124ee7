//! The failure corpus: one directory per (program, failure kind, stage), holding everything
//! needed to reproduce and triage it without the campaign:
//! `prog.sy`, `prog.in` (stdin), `expected.txt` (the reference interpreter's outcome),
//! `actual.txt`, `failure.txt` (the first failing configuration, the generator configuration
//! id and every other configuration that failed the same way) and `repro.sh` (one command).
//! The configuration is also written as the one-line file `config` (the `sysyc` options)
//! that `harness triage` reads (see [`crate::triage::case`]), so a failure directory is a
//! triage input as it stands. Automatic triage adds `triage.txt`, `triage.json` and
//! `reduced.sy` (see [`super::autotriage`]).
//!
//! A program the campaign discarded (the front end or the reference interpreter rejected it:
//! a generator problem) gets a directory too, `discarded-<campaign>-s<seed>` (outside the
//! failure directories' `<campaign>-s` names, which reports and merges read), with
//! `prog.sy`, `prog.in`, `gen-config.json` and `reason.txt` (see [`save_discarded`]): the
//! generator's configuration depends on the guide's weights when the program was made, so the
//! seed alone does not regenerate it.
//!
//! A program usually fails under many configurations at once; grouping by kind and stage
//! keeps the corpus to one directory per distinct symptom, with the failing configurations
//! listed, the shortest pipeline first (the best starting point for bisection).

use super::config::Planned;
use sysy_check::failure::{Failure, FailureKind, Stage, describe};
use sysy_generator::GeneratedProgram;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use sysyc::config::Config;
use sysyc::faults::FaultSet;
use sysyc::runtime::Outcome;

/// A failure written to the corpus (what a triage hook receives).
#[derive(Clone, Debug)]
pub struct SavedFailure {
    /// Directory name: `<campaign>-s<seed>-<kind>-<stage>`.
    pub id: String,
    pub dir: PathBuf,
    pub seed: u64,
    pub kind: FailureKind,
    pub stage: Stage,
    /// The failing configuration chosen for reproduction (faults included).
    pub config: Config,
    /// The one-line reproduction command (run inside `dir`).
    pub repro: String,
}

/// The command reproducing a failure found in `stage` under `config`.
pub fn repro_command(config: &Config, stage: Stage) -> String {
    match stage {
        Stage::Lowering | Stage::Pipeline | Stage::IrInterp => {
            format!("sysyc prog.sy {config} --interpret < prog.in; echo \"exit $?\"")
        }
        Stage::Backend | Stage::Toolchain => format!("sysyc prog.sy {config} -o p"),
        Stage::Qemu => format!("sysyc prog.sy {config} -o p && qemu-arm -cpu cortex-a7 p < prog.in; echo \"exit $?\""),
        Stage::Analysis => format!("sysyc prog.sy {config} --emit-ir  # then compare the data-flow solvers on it (cargo test -p sysyc dataflow)"),
        Stage::Gcc | Stage::Reference | Stage::Frontend | Stage::Roundtrip => {
            "harness interp prog.sy < prog.in; echo \"exit $?\"  # the truth, which the failing run contradicted".into()
        }
    }
}

/// The command reproducing a configuration that killed the process: the whole compiler (to
/// assembly, then the IR interpreter), since the crash could be anywhere in it.
pub fn crash_repro_command(config: &Config) -> String {
    format!("sysyc prog.sy {config} -S -o p.s && sysyc prog.sy {config} --interpret < prog.in; echo \"exit $?\"")
}

/// The command reproducing a configuration that hung: the whole compiler under a time limit
/// (status 124: still compiling when the limit struck).
pub fn hang_repro_command(config: &Config) -> String {
    format!("timeout 120 sysyc prog.sy {config} -S -o p.s; echo \"exit $? (124: still compiling after 120 s)\"")
}

/// Writes one failure directory under `root`; `failing` lists every configuration of the
/// program that failed with the same kind in the same stage (the first is reproduced).
pub fn save(
    root: &Path,
    campaign_id: &str,
    p: &GeneratedProgram,
    truth: &Outcome,
    failure: &Failure,
    failing: &[Planned],
    faults: &FaultSet,
) -> Result<SavedFailure> {
    let seed = p.seed.unwrap_or_default();
    let id = format!("{campaign_id}-s{seed}-{}-{}", failure.kind, failure.stage);
    let dir = root.join(&id);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut sorted: Vec<&Planned> = failing.iter().collect();
    sorted.sort_by_key(|c| (c.config.pipeline.len() + c.config.stages.len(), c.label.clone()));
    // A self-test failure has no configuration of its own: the program at -O0 reproduces it.
    let with_faults = |c: &Config| Config { faults: faults.clone(), ..c.clone() };
    let (label, config) = match sorted.first() {
        Some(c) => (c.label.clone(), with_faults(&c.config)),
        None => ("self-test".to_string(), with_faults(&Config::default())),
    };
    let repro = match failure.kind {
        FailureKind::CompilerCrash => crash_repro_command(&config),
        FailureKind::CompilerHang => hang_repro_command(&config),
        FailureKind::EncoderDisagreement => format!("sysyc prog.sy {config} -S -o p.s && harness asm-agree p.s"),
        _ => repro_command(&config, failure.stage),
    };
    let actual = match &failure.actual {
        Some(outcome) => format!("{}-- {}\n", describe(outcome), failure.detail),
        None => format!("{}\n", failure.detail),
    };
    let mut text = format!(
        "kind: {}\nstage: {}\nconfig: {} ({label})\nseed: {seed}\ngen-config: {} (swarm: `harness gen --seed {seed} --swarm`)\n\nevery configuration that failed this way:\n",
        failure.kind,
        failure.stage,
        config.id(),
        p.config.id(),
    );
    for c in &sorted {
        text.push_str(&format!("{} {:<24} {}\n", c.id(), c.label, c.config));
    }
    let expected = describe(truth);
    let script = format!("#!/bin/sh\n# run inside this directory\n{repro}\n");
    let config_line = format!("{config}\n");
    let files: [(&str, &[u8]); 7] = [
        ("prog.sy", p.source.as_bytes()),
        ("prog.in", &p.stdin),
        ("expected.txt", expected.as_bytes()),
        ("actual.txt", actual.as_bytes()),
        ("failure.txt", text.as_bytes()),
        ("repro.sh", script.as_bytes()),
        ("config", config_line.as_bytes()),
    ];
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).with_context(|| format!("writing {}/{name}", dir.display()))?;
    }
    std::fs::write(dir.join("gen-config.json"), p.config.to_json())?;
    Ok(SavedFailure { id, dir, seed, kind: failure.kind, stage: failure.stage, config, repro })
}

/// Writes the directory of a program the campaign discarded (see the module documentation)
/// under `root`; returns it.
pub fn save_discarded(root: &Path, campaign_id: &str, p: &GeneratedProgram, reason: &str) -> Result<PathBuf> {
    let seed = p.seed.unwrap_or_default();
    let dir = root.join(format!("discarded-{campaign_id}-s{seed}"));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let text = format!(
        "discarded: {reason}\nseed: {seed}\ngen-config: {}\nregenerate: harness gen --seed {seed} --config gen-config.json -o prog.sy\n",
        p.config.id()
    );
    let json = p.config.to_json();
    let files: [(&str, &[u8]); 4] = [
        ("prog.sy", p.source.as_bytes()),
        ("prog.in", &p.stdin),
        ("gen-config.json", json.as_bytes()),
        ("reason.txt", text.as_bytes()),
    ];
    for (name, bytes) in files {
        std::fs::write(dir.join(name), bytes).with_context(|| format!("writing {}/{name}", dir.display()))?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::generated::generate;
    use sysy_generator::GenConfig;

    /// A discarded program's directory regenerates exactly that program.
    #[test]
    fn discarded_program_is_kept_with_its_generator_configuration() {
        let root = tempfile::tempdir().expect("temporary directory");
        let config = GenConfig::swarm(7);
        let program = generate(31, &config);
        let dir = save_discarded(root.path(), "camp", &program, "the front end rejected the program: test").expect("saved");
        assert_eq!(dir.file_name().and_then(|n| n.to_str()), Some("discarded-camp-s31"));
        assert!(crate::campaign::autotriage::failure_dirs(root.path(), "camp").is_empty());
        let source = std::fs::read_to_string(dir.join("prog.sy")).expect("prog.sy");
        assert_eq!(source, program.source);
        let reason = std::fs::read_to_string(dir.join("reason.txt")).expect("reason.txt");
        assert!(reason.contains("the front end rejected the program: test"), "{reason}");
        let json = std::fs::read_to_string(dir.join("gen-config.json")).expect("gen-config.json");
        let again = generate(31, &GenConfig::from_json(&json).expect("parses"));
        assert_eq!(again.source, program.source);
    }
}
