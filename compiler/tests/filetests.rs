//! Runs the filetests under `compiler/filetests/`: small `.ir` or `.sy` files, each naming a
//! compiler configuration and the shape the printed IR — or, with `output: asm`, the
//! assembly — must have after it.
//!
//! A file is read (`.ir`: parsed; `.sy`: front end and lowering), the pipeline of its
//! configuration (`config: <sysyc options>`, or `passes: a,b` for `--passes=a,b`) runs with
//! the IR verifier after every pass, and the printed module is checked against the file's
//! directives (format: see `filecheck/mod.rs`); it must also survive a print → parse → print
//! round trip unchanged. With `output: asm` the back end then runs with the configuration's
//! stages and the machine-code verifier after each, and the assembly text is checked instead.
//! Every failing file is reported, with the output it was checked against.

mod filecheck;

use std::path::{Path, PathBuf};

use filecheck::Output;
use sysyc::config::Config;
use sysyc::driver;
use sysyc::ir::{parse_module, print_module};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "ir" || e == "sy") {
            out.push(path);
        }
    }
}

fn run_one(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let is_sy = path.extension().is_some_and(|e| e == "sy");
    let spec = filecheck::parse_spec(&text, if is_sy { "//" } else { ";" })?;
    let mut config: Config = spec.config.parse().map_err(|e| format!("config `{}`: {e}", spec.config))?;
    config.verify_each = true;
    let mut module = if is_sy {
        driver::lower_source(&path.display().to_string(), &text).map_err(|e| e.to_string())?
    } else {
        parse_module(&text).map_err(|e| format!("parse error: {e}"))?
    };
    driver::optimise(&mut module, &config, None).map_err(|e| e.to_string())?;
    let ir = print_module(&module);
    let reparsed = parse_module(&ir).map_err(|e| format!("output does not parse back: {e}\n{ir}"))?;
    if print_module(&reparsed) != ir {
        return Err(format!("output does not round-trip through the parser:\n{ir}"));
    }
    let output = match spec.output {
        Output::Ir => ir,
        Output::Asm => driver::select(&module, &config).map_err(|e| e.to_string())?,
    };
    filecheck::check(&output, &spec.directives).map_err(|e| format!("{e}\n--- output ---\n{output}--------------"))
}

#[test]
fn filetests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("filetests");
    let mut files = Vec::new();
    collect(&root, &mut files);
    assert!(files.len() >= 30, "expected the filetests under {}, found {}", root.display(), files.len());
    let asm_tests = files.iter().filter(|f| f.components().any(|c| c.as_os_str() == "asm")).count();
    assert!(asm_tests >= 10, "expected the assembly filetests under {}/asm, found {asm_tests}", root.display());
    let failures: Vec<String> = files
        .iter()
        .filter_map(|path| {
            let rel = path.strip_prefix(&root).unwrap_or(path).display().to_string();
            run_one(path).err().map(|e| format!("FAIL {rel}: {e}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} filetests failed:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}
