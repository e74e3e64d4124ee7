//! `sysyc`: the command-line compiler. A thin layer over [`sysyc::driver`]: parse the
//! options, compile to optimised IR, then print it, interpret it, or hand it to the ARM back
//! end for assembly (`-S -o out.s`) or a linked static executable (`-o prog`).
//!
//! Exit status: 0 on success (with `--interpret`: the program's exit status; 125 when it
//! trapped); 1 for an invalid program, an unreadable file or bad options; 2 for command-line
//! syntax errors (clap); 3 for an internal compiler error (the IR verifier failed).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use sysyc::config::{Config, ConfigArgs};
use sysyc::driver::{self, CompileError};
use sysyc::ir::interp::InterpConfig;
use sysyc::ir::print_module;
use sysyc::passes::{self, OptLevel, PassInfo};

/// Exit status of a run of the interpreted program that trapped.
const TRAP_EXIT: u8 = 125;

#[derive(Parser, Debug)]
#[command(name = "sysyc", version, about = "Optimising SysY compiler for ARMv7")]
struct Cli {
    /// The SysY source file.
    file: Option<PathBuf>,

    /// The pipeline, back-end stages and faults (-O0 when neither -O nor --passes is given).
    #[command(flatten)]
    config: ConfigArgs,

    /// List every registered pass (name and description) and exit.
    #[arg(long)]
    list_passes: bool,

    /// Print the optimised IR (to stdout, or to the file of -o).
    #[arg(long)]
    emit_ir: bool,

    /// Output file: assembly with -S, IR with --emit-ir, otherwise a linked executable.
    #[arg(short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,

    /// Emit ARM assembly (to the file of -o, or stdout) instead of an executable.
    #[arg(short = 'S')]
    assembly: bool,

    /// Print the IR after every pass to stderr.
    #[arg(long)]
    print_after_all: bool,

    /// Run the IR verifier after lowering and after every pass, and the machine-code verifier
    /// after register allocation and every back-end stage.
    #[arg(long)]
    verify_each: bool,

    /// Print per-pass statistics to stderr.
    #[arg(long)]
    stats: bool,

    /// Run only the first N (pass, function) steps; logs every step to stderr.
    #[arg(long, value_name = "N")]
    opt_bisect_limit: Option<u64>,

    /// Run the optimised IR in the IR interpreter (stdin → stdout; exit status = the program's).
    #[arg(long)]
    interpret: bool,

    /// With --interpret: print dynamic instruction counts per class to stderr.
    #[arg(long, requires = "interpret")]
    cost: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(code) => code,
        Err(Failure::User(message)) => {
            eprintln!("{message}");
            ExitCode::from(1)
        }
        Err(Failure::Internal(message)) => {
            eprintln!("{message}");
            ExitCode::from(3)
        }
    }
}

enum Failure {
    User(String),
    Internal(String),
}

fn run(cli: &Cli) -> Result<ExitCode, Failure> {
    if cli.list_passes {
        print!("{}", list_passes(passes::REGISTRY));
        return Ok(ExitCode::SUCCESS);
    }
    let Some(path) = &cli.file else {
        return Err(Failure::User("sysyc: no input file (see --help)".into()));
    };
    let config = compile_config(cli)?;
    let bytes =
        std::fs::read(path).map_err(|e| Failure::User(format!("sysyc: cannot read {}: {e}", path.display())))?;
    let source = sysyc::frontend::source_from_bytes(&bytes);
    let name = path.display().to_string();

    let mut print_after = |pos: usize, pass: &'static PassInfo, module: &sysyc::ir::Module| {
        eprintln!("; *** IR after pass {} ({}) ***", pass.name, pos + 1);
        eprint!("{}", print_module(module));
    };
    let observer: Option<&mut sysyc::passes::manager::Observer<'_>> =
        if cli.print_after_all { Some(&mut print_after) } else { None };
    let result = driver::compile_ir_observed(&name, &source, &config, observer);
    let (module, report) = match result {
        Ok(r) => r,
        Err(e @ CompileError::Frontend(_)) => return Err(Failure::User(e.to_string())),
        Err(e) => return Err(Failure::Internal(e.to_string())),
    };
    if config.opt_bisect_limit.is_some() {
        eprint!("{}", driver::bisect_log_text(&report));
    }
    if cli.stats {
        eprint!("{}", report.stats_table());
    }
    if cli.emit_ir {
        let text = print_module(&module);
        match &cli.output {
            Some(out) => std::fs::write(out, text)
                .map_err(|e| Failure::User(format!("sysyc: cannot write {}: {e}", out.display())))?,
            None => print!("{text}"),
        }
    }
    if cli.interpret {
        return interpret(&module, cli.cost);
    }
    if cli.assembly || (cli.output.is_some() && !cli.emit_ir) {
        let asm = driver::select(&module, &config).map_err(|e| Failure::Internal(CompileError::Backend(e).to_string()))?;
        match (&cli.output, cli.assembly) {
            (Some(out), true) => std::fs::write(out, asm)
                .map_err(|e| Failure::User(format!("sysyc: cannot write {}: {e}", out.display())))?,
            (None, true) => print!("{asm}"),
            (Some(out), false) => driver::build_executable(&asm, out, cli.config.assembler).map_err(|e| match e {
                CompileError::Toolchain(sysyc::toolchain::ToolchainError::NotFound { .. }) => {
                    Failure::User(format!("sysyc: {e}"))
                }
                e => Failure::Internal(e.to_string()),
            })?,
            (None, false) => unreachable!("guarded above"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn compile_config(cli: &Cli) -> Result<Config, Failure> {
    let mut config = cli.config.config(OptLevel::O0).map_err(|e| Failure::User(format!("sysyc: {e}")))?;
    config.verify_each = cli.verify_each;
    config.opt_bisect_limit = cli.opt_bisect_limit;
    Ok(config)
}

fn interpret(module: &sysyc::ir::Module, cost: bool) -> Result<ExitCode, Failure> {
    let mut stdin = Vec::new();
    std::io::stdin().read_to_end(&mut stdin).map_err(|e| Failure::User(format!("sysyc: cannot read stdin: {e}")))?;
    let result = driver::interpret(module, &stdin, &InterpConfig::default())
        .map_err(|e| Failure::User(format!("sysyc: cannot interpret: {e}")))?;
    let mut out = std::io::stdout().lock();
    // A closed stdout must not turn into a panic; the exit status still reports the run.
    let _ = out.write_all(&result.outcome.stdout).and_then(|()| out.flush());
    if cost {
        eprintln!("{}", result.cost);
    }
    match (&result.outcome.trap, result.outcome.exit_status) {
        (Some(trap), _) => {
            eprintln!("trap: {}", trap.kind);
            Ok(ExitCode::from(TRAP_EXIT))
        }
        (None, Some(status)) => Ok(ExitCode::from(status)),
        (None, None) => Err(Failure::Internal("sysyc: the interpreter reported neither a result nor a trap".into())),
    }
}

/// `--list-passes`: one registry entry per line, its name padded, then its description; IR
/// passes first, then the optional back-end stages.
fn list_passes(registry: &[PassInfo]) -> String {
    let width = registry.iter().map(|p| p.name.len()).max().unwrap_or(0);
    registry
        .iter()
        .map(|p| {
            let kind = if p.is_backend() { "(back end) " } else { "" };
            format!("{:<width$}  {kind}{}\n", p.name, p.description)
        })
        .collect()
}
