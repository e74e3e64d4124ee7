//! `sysyc`: the command-line compiler. A thin layer over [`sysyc::driver`]: parse the
//! options, compile to optimised IR, then print it (`--emit-ir`), interpret it
//! (`--interpret`), or hand it to the ARM back end for assembly (`-S`) or, like a C compiler
//! driver, a linked static executable (`-o prog`, `a.out` by default).
//!
//! Nothing printed can panic: write errors on stderr are ignored, a failed write of stdout
//! (a closed pipe, a full disk) ends the run with a short message and exit status 1.

#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use sysyc::config::{Config, ConfigArgs};
use sysyc::driver::{self, CompileError};
use sysyc::frontend::LineIndex;
use sysyc::ir::interp::{InterpConfig, Interrupted, Program, Stream};
use sysyc::ir::print_module;
use sysyc::passes::{self, OptLevel, PassInfo};
use sysyc::toolchain::ToolchainError;

/// Exit status of a run of the interpreted program that trapped.
const TRAP_EXIT: u8 = 125;
/// Exit status of a run of the interpreted program that exceeded `--timeout`.
const TIMEOUT_EXIT: u8 = 124;
/// The executable written when linking without `-o`.
const DEFAULT_EXECUTABLE: &str = "a.out";

#[derive(Parser, Debug)]
#[command(
    name = "sysyc",
    version,
    about = "Optimising SysY compiler for ARMv7",
    after_help = "Without --emit-ir, -S or --interpret, sysyc links a static ARM executable: \
                  the file of -o, or a.out.\n\n\
                  Exit status: 0 success (with --interpret: the program's exit status); 1 an \
                  invalid program, an unreadable or unwritable file, a failed write of stdout; \
                  2 bad command-line syntax; 3 internal compiler error; with --interpret, 125 \
                  when the program trapped (`trap: <kind> at FILE:LINE:COL: <detail>` on stderr, also for \
                  --max-steps) and 124 when it exceeded --timeout."
)]
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
    #[arg(long, conflicts_with_all = ["assembly", "interpret"])]
    emit_ir: bool,

    /// Output file: assembly with -S, IR with --emit-ir (`-` for stdout, the default for
    /// both), otherwise the linked executable (default a.out).
    #[arg(short = 'o', value_name = "FILE", conflicts_with = "interpret")]
    output: Option<PathBuf>,

    /// Emit ARM assembly (to the file of -o, or stdout) instead of an executable.
    #[arg(short = 'S', conflicts_with = "interpret")]
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

    /// Run the optimised IR in the IR interpreter (stdin → stdout, written as it is
    /// produced; exit status = the program's).
    #[arg(long)]
    interpret: bool,

    /// With --interpret: print dynamic instruction counts per class to stderr.
    #[arg(long, requires = "interpret")]
    cost: bool,

    /// With --interpret: stop after N IR instructions (a `step-limit` trap, status 125).
    #[arg(long, value_name = "N", requires = "interpret")]
    max_steps: Option<u64>,

    /// With --interpret: stop after SECS seconds of wall-clock time (status 124).
    #[arg(long, value_name = "SECS", requires = "interpret", value_parser = parse_seconds)]
    timeout: Option<Duration>,
}

fn parse_seconds(text: &str) -> Result<Duration, String> {
    let secs: f64 = text.parse().map_err(|e| format!("{e}"))?;
    Duration::try_from_secs_f64(secs).map_err(|e| format!("{e}"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(code) => code,
        Err(Failure::User(message)) => {
            note(&message);
            ExitCode::from(1)
        }
        Err(Failure::Internal(message)) => {
            note(&message);
            ExitCode::from(3)
        }
    }
}

enum Failure {
    User(String),
    Internal(String),
}

/// Writes `text` and a newline to stderr; a closed or full stderr is not worth failing for.
fn note(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| if text.ends_with('\n') { Ok(()) } else { err.write_all(b"\n") });
}

/// Writes `text` to stdout; a failure (closed pipe, full disk) is an error of the run.
fn print_out(text: &[u8]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    out.write_all(text).and_then(|()| out.flush()).map_err(stdout_failure)
}

fn stdout_failure(e: std::io::Error) -> Failure {
    Failure::User(format!("sysyc: cannot write to stdout: {e}"))
}

/// Writes a textual output (IR or assembly) to `-o FILE`, or to stdout without `-o` or with
/// `-o -`.
fn write_output(output: Option<&Path>, text: &str) -> Result<(), Failure> {
    match output {
        Some(out) if out != Path::new("-") => std::fs::write(out, text)
            .map_err(|e| Failure::User(format!("sysyc: cannot write {}: {e}", out.display()))),
        _ => print_out(text.as_bytes()),
    }
}

fn run(cli: &Cli) -> Result<ExitCode, Failure> {
    if cli.list_passes {
        print_out(list_passes(passes::REGISTRY).as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    let Some(path) = &cli.file else {
        return Err(Failure::User("sysyc: no input file (see --help)".into()));
    };
    let config = compile_config(cli)?;
    let executable = if cli.emit_ir || cli.assembly || cli.interpret {
        None
    } else {
        Some(executable_path(cli.output.as_deref())?)
    };
    let bytes =
        std::fs::read(path).map_err(|e| Failure::User(format!("sysyc: cannot read {}: {e}", path.display())))?;
    let source = sysyc::frontend::source_from_bytes(&bytes);
    let name = path.display().to_string();

    let mut print_after = |pos: usize, pass: &'static PassInfo, module: &sysyc::ir::Module| {
        note(&format!("; *** IR after pass {} ({}) ***\n{}", pass.name, pos + 1, print_module(module)));
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
        note(&driver::bisect_log_text(&report));
    }
    if cli.stats {
        note(&report.stats_table());
    }
    if cli.emit_ir {
        write_output(cli.output.as_deref(), &print_module(&module))?;
        return Ok(ExitCode::SUCCESS);
    }
    if cli.interpret {
        return interpret(&module, cli, &name, &source);
    }
    let asm = driver::select(&module, &config).map_err(|e| Failure::Internal(CompileError::Backend(e).to_string()))?;
    match executable {
        None => write_output(cli.output.as_deref(), &asm)?,
        Some(out) => driver::build_executable(&asm, &out, cli.config.assembler).map_err(|e| match e {
            CompileError::Toolchain(ToolchainError::NotFound { .. }) => Failure::User(format!("sysyc: {e}")),
            e => Failure::Internal(e.to_string()),
        })?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Where the linked executable goes: `-o FILE` or `a.out`. A path that cannot be written (a
/// directory, a missing or read-only directory) is the user's error, found before compiling.
fn executable_path(output: Option<&Path>) -> Result<PathBuf, Failure> {
    let out = output.unwrap_or(Path::new(DEFAULT_EXECUTABLE));
    let bad = |why: &str| Err(Failure::User(format!("sysyc: cannot write the executable {}: {why}", out.display())));
    if out == Path::new("-") {
        return bad("an executable cannot go to stdout (use -S or --emit-ir)");
    }
    if out.is_dir() {
        return bad("it is a directory");
    }
    let parent = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return bad(&format!("no directory {}", parent.display()));
    }
    // The linker replaces the file, so what matters is that the directory takes new files.
    if let Err(e) = tempfile::tempfile_in(parent) {
        return bad(&format!("cannot create files in {}: {e}", parent.display()));
    }
    Ok(out.to_path_buf())
}

fn compile_config(cli: &Cli) -> Result<Config, Failure> {
    let mut config = cli.config.config(OptLevel::O0).map_err(|e| Failure::User(format!("sysyc: {e}")))?;
    config.verify_each = cli.verify_each;
    config.opt_bisect_limit = cli.opt_bisect_limit;
    Ok(config)
}

/// `--interpret`: the program's output goes to stdout as it is produced; the exit status is
/// the program's, [`TRAP_EXIT`] when it trapped, [`TIMEOUT_EXIT`] past `--timeout`.
fn interpret(module: &sysyc::ir::Module, cli: &Cli, name: &str, source: &str) -> Result<ExitCode, Failure> {
    let mut stdin = Vec::new();
    std::io::stdin().read_to_end(&mut stdin).map_err(|e| Failure::User(format!("sysyc: cannot read stdin: {e}")))?;
    let program = Program::new(module).map_err(|e| Failure::User(format!("sysyc: cannot interpret: {e}")))?;
    let defaults = InterpConfig::default();
    let config = InterpConfig { max_steps: cli.max_steps.unwrap_or(defaults.max_steps), ..defaults };
    let mut out = std::io::stdout().lock();
    let (result, interrupted) =
        program.run_streaming(&stdin, &config, Stream { out: &mut out, timeout: cli.timeout });
    if cli.cost {
        note(&result.cost.to_string());
    }
    match interrupted {
        Some(Interrupted::Output(e)) => return Err(stdout_failure(e)),
        Some(Interrupted::TimedOut(limit)) => {
            note(&format!("sysyc: time limit exceeded ({} s) after {} steps", limit.as_secs_f64(), result.outcome.steps));
            return Ok(ExitCode::from(TIMEOUT_EXIT));
        }
        None => {}
    }
    match (&result.outcome.trap, result.outcome.exit_status) {
        (Some(trap), _) => {
            let at = result.trap_src_offset.map_or(String::new(), |offset| {
                let loc = LineIndex::new(source).line_col(offset);
                format!(" at {name}:{}:{}", loc.line, loc.col)
            });
            let detail = if trap.detail.is_empty() { String::new() } else { format!(": {}", trap.detail) };
            note(&format!("trap: {}{at}{detail}", trap.kind));
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
