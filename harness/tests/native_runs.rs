//! End-to-end checks of the toolchain wrapper and the qemu runner: hand-written ARM assembly
//! is linked with the C runtime and run under qemu-arm; exit statuses, signals, timeouts,
//! stdin, stderr (timer report) and the fixed environment are checked.

mod common;

use std::time::Duration;

use common::{asm_main, build_c, link_asm, scratch, tools};
use sysy_check::qemu::{RunOptions, RunStatus, Stdin};
use sysyc::runtime::Io;
use sysyc::runtime::library;
use sysyc::toolchain::{self, Source, ToolchainError};

#[test]
fn putint_and_exit_status() {
    let Some(qemu) = tools("putint_and_exit_status") else {
        return;
    };
    let dir = scratch();
    let exe = link_asm(
        dir.path(),
        "p42",
        &asm_main(
            "\tpush {r4, lr}\n\tmov r0, #42\n\tbl putint\n\tmov r0, #10\n\tbl putch\n\tmov r0, #3\n\tpop {r4, pc}",
        ),
    );
    let run = qemu.run(&exe, &RunOptions::default()).expect("run");
    assert_eq!(run.stdout, b"42\n");
    assert_eq!(run.status, RunStatus::Exited(3));
    // The runtime's destructor always reports the total, even without timers.
    assert_eq!(run.stderr, b"TOTAL: 0H-0M-0S-0us\n");
}

#[test]
fn exit_status_is_truncated_to_a_byte() {
    let Some(qemu) = tools("exit_status_is_truncated_to_a_byte") else {
        return;
    };
    let dir = scratch();
    // main returns -8: the status is 248.
    let exe = link_asm(dir.path(), "neg", &asm_main("\tmvn r0, #7\n\tbx lr"));
    assert_eq!(
        qemu.run(&exe, &RunOptions::default()).expect("run").status,
        RunStatus::Exited(248)
    );
}

#[test]
fn stdin_from_bytes_and_from_a_file() {
    let Some(qemu) = tools("stdin_from_bytes_and_from_a_file") else {
        return;
    };
    let dir = scratch();
    // putint(getint() - getint()); return 0
    let exe = link_asm(
        dir.path(),
        "sub",
        &asm_main(
            "\tpush {r4, lr}\n\tbl getint\n\tmov r4, r0\n\tbl getint\n\tsub r0, r4, r0\n\tbl putint\n\tmov r0, #0\n\tpop {r4, pc}",
        ),
    );
    let opts = RunOptions {
        stdin: Stdin::Bytes(b"  50\n-8".to_vec()),
        ..RunOptions::default()
    };
    let run = qemu.run(&exe, &opts).expect("run");
    assert_eq!(
        (run.stdout.as_slice(), run.status),
        (&b"58"[..], RunStatus::Exited(0))
    );

    let input = dir.path().join("in.txt");
    std::fs::write(&input, "7 9\n").expect("write input");
    let opts = RunOptions {
        stdin: Stdin::File(input),
        ..RunOptions::default()
    };
    let run = qemu.run(&exe, &opts).expect("run");
    assert_eq!(
        (run.stdout.as_slice(), run.status),
        (&b"-2"[..], RunStatus::Exited(0))
    );
}

#[test]
fn undefined_instructions_are_reported_as_sigill() {
    let Some(qemu) = tools("undefined_instructions_are_reported_as_sigill") else {
        return;
    };
    let dir = scratch();
    let udf = link_asm(dir.path(), "udf", &asm_main("\tudf #0\n\tbx lr"));
    let run = qemu.run(&udf, &RunOptions::default()).expect("run");
    assert_eq!(
        run.status,
        RunStatus::Signaled(libc::SIGILL),
        "stderr: {}",
        String::from_utf8_lossy(&run.stderr)
    );

    // crc32b r0, r0, r0 (ARMv8 only; encoded by hand since the assembler is set to armv7ve).
    let crc = link_asm(
        dir.path(),
        "crc",
        &asm_main("\t.inst 0xe1000040\n\tmov r0, #0\n\tbx lr"),
    );
    assert_eq!(
        qemu.run(&crc, &RunOptions::default()).expect("run").status,
        RunStatus::Signaled(libc::SIGILL)
    );
}

#[test]
fn the_cpu_model_decides_which_instructions_exist() {
    let Some(qemu) = tools("the_cpu_model_decides_which_instructions_exist") else {
        return;
    };
    let dir = scratch();
    // 100 / 7 with sdiv: cortex-a7 has it, cortex-a9 does not.
    let exe = link_asm(
        dir.path(),
        "sdiv",
        &asm_main("\tmov r0, #100\n\tmov r1, #7\n\tsdiv r0, r0, r1\n\tbx lr"),
    );
    assert_eq!(
        qemu.run(&exe, &RunOptions::default()).expect("run").status,
        RunStatus::Exited(14)
    );
    let a9 = RunOptions {
        cpu: "cortex-a9".into(),
        ..RunOptions::default()
    };
    assert_eq!(
        qemu.run(&exe, &a9).expect("run").status,
        RunStatus::Signaled(libc::SIGILL)
    );
}

#[test]
fn bad_memory_access_is_reported_as_sigsegv() {
    let Some(qemu) = tools("bad_memory_access_is_reported_as_sigsegv") else {
        return;
    };
    let dir = scratch();
    let exe = link_asm(
        dir.path(),
        "segv",
        &asm_main("\tmov r0, #0\n\tldr r0, [r0]\n\tbx lr"),
    );
    let run = qemu.run(&exe, &RunOptions::default()).expect("run");
    assert_eq!(run.status, RunStatus::Signaled(libc::SIGSEGV));
    assert_eq!(run.status.to_string(), "killed by SIGSEGV");
}

#[test]
fn endless_loop_times_out() {
    let Some(qemu) = tools("endless_loop_times_out") else {
        return;
    };
    let dir = scratch();
    let exe = link_asm(dir.path(), "spin", &asm_main("1:\tb 1b"));
    let timeout = Duration::from_millis(300);
    let run = qemu
        .run(
            &exe,
            &RunOptions {
                timeout,
                ..RunOptions::default()
            },
        )
        .expect("run");
    assert_eq!(run.status, RunStatus::TimedOut);
    assert!(run.wall >= timeout, "killed after {:?}", run.wall);
}

/// The timer report matches the interpreters' (`Io::timer_report`) once durations are
/// zeroed, including a `stoptime` without `starttime` and a restarted `starttime`.
#[test]
fn timers_are_reported_on_stderr_at_exit() {
    let Some(qemu) = tools("timers_are_reported_on_stderr_at_exit") else {
        return;
    };
    let dir = scratch();
    let calls = [
        ("start", 12),
        ("stop", 34),
        ("start", 5),
        ("stop", 12345),
        ("stop", 7),
        ("start", 1),
        ("start", 2),
        ("stop", 3),
    ];
    let mut body = String::from("\tpush {r4, lr}\n");
    let mut io = Io::new(Vec::new());
    for (what, line) in calls {
        body += &format!("\tmovw r0, #{line}\n\tbl _sysy_{what}time\n");
        if what == "start" {
            io.start_time(line)
        } else {
            io.stop_time(line)
        }
    }
    body += "\tmov r0, #0\n\tpop {r4, pc}";
    let exe = link_asm(dir.path(), "timers", &asm_main(&body));
    let run = qemu.run(&exe, &RunOptions::default()).expect("run");
    assert_eq!(run.status, RunStatus::Exited(0));
    let stderr = String::from_utf8(run.stderr).expect("utf-8");
    let mut zeroed = String::new();
    for line in stderr.lines() {
        let (label, duration) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("no duration in {line:?}"));
        // xH-xM-xS-xus with decimal numbers.
        let fields: Vec<&str> = duration.split('-').collect();
        assert_eq!(fields.len(), 4, "{line}");
        for (field, unit) in fields.iter().zip(["H", "M", "S", "us"]) {
            let number = field
                .strip_suffix(unit)
                .unwrap_or_else(|| panic!("{line}: {field} lacks {unit}"));
            assert!(
                !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()),
                "{line}"
            );
        }
        zeroed += &format!("{label} 0H-0M-0S-0us\n");
    }
    assert_eq!(zeroed, io.timer_report());
    // With the harness's fixed clock the report is exactly the interpreters'.
    let fixed = RunOptions { env: vec![(sysy_check::qemu::FIXED_CLOCK.into(), "1".into())], ..RunOptions::default() };
    assert_eq!(String::from_utf8_lossy(&qemu.run(&exe, &fixed).expect("run").stderr), io.timer_report());
    assert!(
        zeroed.starts_with(
            "Timer@0012-0034: 0H-0M-0S-0us\nTimer@0005-12345: 0H-0M-0S-0us\nTimer@0000-0007: "
        ),
        "{zeroed}"
    );
}

#[test]
fn assembler_errors_carry_the_command_and_its_stderr() {
    if toolchain::arm_gcc().is_err() {
        eprintln!("note: skipping assembler_errors_carry_the_command_and_its_stderr: no cross gcc");
        return;
    }
    let dir = scratch();
    let out = dir.path().join("never");
    let err = library::link_executable(Source::Text(&asm_main("\tfrobnicate r0, r1")), &out)
        .unwrap_err();
    let ToolchainError::Failed {
        command,
        status,
        stderr,
    } = &err
    else {
        panic!("unexpected error {err:?}")
    };
    assert!(
        command.contains("-static")
            && command.contains("-march=armv7ve")
            && command.contains("sysy_rt.o"),
        "{command}"
    );
    assert!(stderr.contains("frobnicate"), "{stderr}");
    assert!(status.starts_with("exit status"), "{status}");
    assert!(err.to_string().contains(command.as_str()));
    assert!(!out.exists());

    // An undefined symbol is a link error, reported the same way.
    let err = library::link_executable(Source::Text(&asm_main("\tb no_such_function")), &out)
        .unwrap_err();
    assert!(
        matches!(&err, ToolchainError::Failed { stderr, .. } if stderr.contains("no_such_function")),
        "{err}"
    );
}

#[test]
fn guests_see_a_fixed_argv0_and_an_empty_environment() {
    let Some(qemu) = tools("guests_see_a_fixed_argv0_and_an_empty_environment") else {
        return;
    };
    let dir = scratch();
    let exe = build_c(
        dir.path(),
        "argv",
        "#include <stdio.h>\nextern char **environ;\n\
         int main(int argc, char **argv) { int n = 0; while (environ[n]) n++;\n\
         printf(\"%d %s %d\\n\", argc, argv[0], n); return 0; }\n",
        "-O1",
    );
    let run = qemu.run(&exe, &RunOptions::default()).expect("run");
    assert_eq!(String::from_utf8_lossy(&run.stdout), "1 prog 0\n");
    let opts = RunOptions {
        argv0: "other".into(),
        env: vec![("A".into(), "1".into()), ("B".into(), "2".into())],
        ..RunOptions::default()
    };
    assert_eq!(
        String::from_utf8_lossy(&qemu.run(&exe, &opts).expect("run").stdout),
        "1 other 2\n"
    );
}

#[test]
fn c_programs_use_sysy_semantics() {
    let Some(qemu) = tools("c_programs_use_sysy_semantics") else {
        return;
    };
    let dir = scratch();
    // A SysY program is C once the runtime header is force-included: constants are single
    // precision (0.1f * 3 = 0x1.333334p-2, not the double 0x1.3333333333334p-2) and int
    // overflow wraps.
    let sysy = "int main() { float x = 0.1; putfloat(x * 3); putch(10);\n\
                int big = 2147483647; putint(big + 1); putch(10); starttime(); stoptime(); return 7; }\n";
    for opt in ["-O0", "-O2"] {
        let exe = build_c(dir.path(), &format!("sysy{opt}"), sysy, opt);
        let run = qemu.run(&exe, &RunOptions::default()).expect("run");
        assert_eq!(
            String::from_utf8_lossy(&run.stdout),
            "0x1.333334p-2\n-2147483648\n",
            "{opt}"
        );
        assert_eq!(run.status, RunStatus::Exited(7));
        assert!(
            String::from_utf8_lossy(&run.stderr).starts_with("Timer@0002-0002: "),
            "{opt}"
        );
    }
}

/// The same binary on the same input counts the same instructions every time, even with an
/// input larger than a pipe's buffer (read in chunks that depend on how the writer races the
/// reader, if it came through a pipe).
#[test]
fn counts_of_a_run_reading_much_input_are_the_same_every_time() {
    if !common::tools_with_plugin("counts_of_a_run_reading_much_input_are_the_same_every_time") {
        return;
    }
    let source = "int main() { int n = getint(); int s = 0; int i = 0; while (i < n) { s = s + getint(); i = i + 1; } putint(s); return 0; }";
    let n = 100_000;
    let mut input = format!("{n}\n");
    for i in 0..n {
        input.push_str(&format!("{}\n", i % 1000 - 500));
    }
    assert!(input.len() > 4 * 65_536, "more than a pipe buffer");
    let subject = sysy_check::subject::Subject::parse("sum.sy", source, input.as_bytes()).expect("valid program");
    let module = sysy_check::steps::lower(&subject).expect("lowers");
    let config = sysyc::config::Config::level(sysyc::passes::OptLevel::O2);
    let (module, _) = sysy_check::steps::optimise(&module, &config, None).expect("optimises");
    let asm = sysy_check::steps::select(&module, &config).expect("compiles");
    let exe = sysy_check::steps::link(&asm, library::Assembler::default()).expect("links");
    let runner = sysy_check::qemu::Runner::new(sysy_check::qemu::CostMode::Measure).expect("runner");
    let counts: Vec<u64> = (0..4)
        .map(|_| {
            let run = runner.run(&exe.path, input.as_bytes(), Duration::from_secs(60)).expect("runs");
            assert_eq!(run.status, RunStatus::Exited(0));
            assert_eq!(run.stdout, b"-50000");
            run.cost.expect("counted").counts.total
        })
        .collect();
    assert!(counts.iter().all(|&c| c == counts[0]), "{counts:?}");
}

/// A program that times itself counts the same instructions every time under the harness's
/// runner: its timers read 0 (`SYSY_FIXED_CLOCK`), in the freestanding runtime too, so the
/// report's digits do not vary with the run's duration.
#[test]
fn counts_of_a_timed_run_do_not_depend_on_its_duration() {
    if !common::tools_with_plugin("counts_of_a_timed_run_do_not_depend_on_its_duration") {
        return;
    }
    let source = "int main() { int n = getint(); int s = 0; starttime(); int i = 0; while (i < n) { s = s + i % 7; i = i + 1; } stoptime(); putint(s % 10); return 0; }";
    let runner = sysy_check::qemu::Runner::new(sysy_check::qemu::CostMode::Measure).expect("runner");
    let exe = |n: &str| {
        let subject = sysy_check::subject::Subject::parse("timed.sy", source, n.as_bytes()).expect("valid program");
        let module = sysy_check::steps::lower(&subject).expect("lowers");
        let asm = sysy_check::steps::select(&module, &sysyc::config::Config::default()).expect("compiles");
        sysy_check::steps::link(&asm, library::Assembler::InProcess).expect("links")
    };
    let program = exe("0");
    // Runs of very different lengths (inputs of the same digits, an output of one digit): the
    // timed loop's own instructions differ, the runtime's not.
    let runtime = |input: &str| {
        let run = runner.run(&program.path, input.as_bytes(), Duration::from_secs(60)).expect("runs");
        assert_eq!(run.status, RunStatus::Exited(0));
        let counts = run.cost.expect("counted").counts;
        counts.total - counts.program.total()
    };
    let short = runtime("0000010");
    assert_eq!(runtime("0000010"), short);
    assert_eq!(runtime("3000000"), short, "the timer report costs the same after a long run");
}
