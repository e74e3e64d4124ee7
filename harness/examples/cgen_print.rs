//! Prints the C translation of a SysY file: `cargo run -p harness --example cgen_print FILE.sy`.

fn main() -> std::process::ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: cgen_print FILE.sy");
        return std::process::ExitCode::FAILURE;
    };
    let source = match std::fs::read(&path) {
        Ok(bytes) => sysyc::frontend::source_from_bytes(&bytes),
        Err(e) => {
            eprintln!("{path}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match sysyc::frontend::compile_source(&path, &source) {
        Ok(program) => {
            print!("{}", sysy_check::cgen::emit(&program));
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}
