//! Differential test of the runtime library's Rust model (`sysyc::runtime::io`, used by the
//! interpreters) against both C runtimes run under qemu-arm: `sysy_rt.c` on glibc, and the
//! freestanding `sysy_rt_free.c` (no libc).
//!
//! A driver program (`data/runtime_driver.c` for glibc, `data/runtime_driver_free.c` for the
//! freestanding runtime) performs a list of runtime calls and prints what each produced; the
//! same calls are made on an `Io`, and each driver must agree with it byte for byte: every
//! `putf` format, `putfloat`/`putfarray` value, and for input every accepted value, every
//! rejected text, and how much input each read consumed. The two drivers' records must also
//! be identical, which covers what the model leaves open (the value and the unread input
//! after a failed read). The cases are fixed lists plus values drawn from a seeded
//! generator, so every run checks the same cases.

mod common;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use common::tools;
use sysy_check::qemu::{Qemu, RunOptions, RunStatus, Stdin};
use sysyc::runtime::{Io, PutfArg};
use sysyc::runtime::library;
use sysyc::toolchain::{self, Source};

/// One runtime call.
#[derive(Clone, Debug)]
enum Case {
    Putf(Vec<u8>, Vec<PutfArg>),
    PutInt(i32),
    PutCh(i32),
    PutFloat(f32),
    PutArray(Vec<i32>),
    PutFarray(Vec<f32>),
    /// Read with `kind` (d c f a b: getint getch getfloat getarray getfarray) from `input`.
    Get(u8, Vec<u8>),
}

fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "-".into();
    }
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

impl Case {
    /// The driver command performing this call.
    fn command(&self) -> String {
        match self {
            Case::Putf(fmt, args) => {
                let shape: String = args
                    .iter()
                    .map(|a| {
                        if matches!(a, PutfArg::Int(_)) {
                            'i'
                        } else {
                            'f'
                        }
                    })
                    .collect();
                let mut s = format!(
                    "P {} {}",
                    if shape.is_empty() { "-" } else { &shape },
                    hex(fmt)
                );
                for a in args {
                    match a {
                        PutfArg::Int(v) => write!(s, " {v}"),
                        PutfArg::Float(f) => write!(s, " {:08x}", f.to_bits()),
                    }
                    .expect("write to String");
                }
                s
            }
            Case::PutInt(v) => format!("I {v}"),
            Case::PutCh(v) => format!("C {v}"),
            Case::PutFloat(f) => format!("F {:08x}", f.to_bits()),
            Case::PutArray(a) => a
                .iter()
                .fold(format!("A {}", a.len()), |s, v| s + &format!(" {v}")),
            Case::PutFarray(a) => a.iter().fold(format!("B {}", a.len()), |s, v| {
                s + &format!(" {:08x}", v.to_bits())
            }),
            Case::Get(kind, input) => format!("G {} {}", *kind as char, hex(input)),
        }
    }

    /// The call, readably (format strings and input texts as escaped strings).
    fn describe(&self) -> String {
        let text = |b: &[u8]| format!("{:?}", String::from_utf8_lossy(b));
        match self {
            Case::Putf(fmt, args) => format!("putf({}, {args:?})", text(fmt)),
            Case::Get(kind, input) => format!("get{}({})", *kind as char, text(input)),
            other => format!("{other:?}"),
        }
    }

    /// Checks the driver's record for this call against the Rust model.
    fn check(&self, record: &[u8]) -> Result<(), String> {
        let mut io = Io::new(Vec::new());
        match self {
            Case::Putf(fmt, args) => io.put_f(fmt, args),
            Case::PutInt(v) => io.put_int(*v),
            Case::PutCh(v) => io.put_ch(*v),
            Case::PutFloat(f) => io.put_float(*f),
            Case::PutArray(a) => io.put_array(a),
            Case::PutFarray(a) => io.put_farray(a),
            Case::Get(kind, input) => return check_get(*kind, input, record),
        }
        let expected = io.take_stdout();
        if expected == record {
            Ok(())
        } else {
            Err(format!(
                "C printed {:?}, Io printed {:?}",
                String::from_utf8_lossy(record),
                String::from_utf8_lossy(&expected)
            ))
        }
    }
}

/// The record of a `G` command is "<scanf result> <value(s)> <unread input>". Io must accept
/// exactly when scanf converted (result 1), and then agree on the value and on the input left.
fn check_get(kind: u8, input: &[u8], record: &[u8]) -> Result<(), String> {
    let record = String::from_utf8_lossy(record);
    let fields: Vec<&str> = record.split(' ').collect();
    let [ret, value, rest] = fields[..] else {
        return Err(format!("malformed record {record:?}"));
    };
    let mut io = Io::new(input.to_vec());
    let model: Result<String, _> = match kind {
        b'd' => io.get_int().map(|v| v.to_string()),
        b'c' => io.get_ch().map(|v| v.to_string()),
        b'f' => io.get_float().map(|v| format!("{:08x}", v.to_bits())),
        b'a' => io.get_int().and_then(|n| {
            (0..n).try_fold(n.to_string(), |s, _| {
                io.get_int().map(|v| format!("{s},{v}"))
            })
        }),
        _ => io.get_int().and_then(|n| {
            (0..n).try_fold(n.to_string(), |s, _| {
                io.get_float().map(|v| format!("{s},{:08x}", v.to_bits()))
            })
        }),
    };
    match model {
        Ok(v) => {
            let mut unread = Vec::new();
            while let Ok(c) = io.get_ch() {
                unread.push(c as u8);
            }
            let expected = format!("1 {v} {}", hex(&unread));
            if expected == record {
                Ok(())
            } else {
                Err(format!("C read {record:?}, Io read {expected:?}"))
            }
        }
        Err(trap) if ret != "1" => {
            let _ = (value, rest, trap);
            Ok(())
        }
        Err(trap) => Err(format!("C read {record:?}, Io trapped ({trap})")),
    }
}

/// A C runtime under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Runtime {
    /// `sysy_rt.c` over glibc.
    Glibc,
    /// `sysy_rt_free.c`, without any C library.
    Freestanding,
}

impl Runtime {
    const ALL: [Runtime; 2] = [Runtime::Glibc, Runtime::Freestanding];
}

/// The driver executable for `runtime`, built once per test process.
fn driver(runtime: Runtime) -> Option<(Qemu, PathBuf)> {
    static DRIVERS: [OnceLock<Option<(Qemu, PathBuf)>>; 2] = [OnceLock::new(), OnceLock::new()];
    DRIVERS[runtime as usize]
        .get_or_init(|| {
            let qemu = tools("runtime_vs_io")?;
            // Test processes may run in parallel (cargo nextest): build under a private name,
            // then rename over the shared one (atomic; identical contents).
            let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
            let name = match runtime {
                Runtime::Glibc => "runtime_driver",
                Runtime::Freestanding => "runtime_driver_free",
            };
            let private = dir.join(format!("{name}.{}", std::process::id()));
            let shared = dir.join(name);
            let built = match runtime {
                Runtime::Glibc => library::compile_c(
                    Source::Text(include_str!("data/runtime_driver.c")),
                    &private,
                    &["-O1"],
                ),
                Runtime::Freestanding => {
                    build_freestanding_c(include_str!("data/runtime_driver_free.c"), &private)
                }
            };
            if let Err(e) = built {
                panic!("building the {runtime:?} driver failed: {e}");
            }
            std::fs::rename(&private, &shared).expect("rename the driver into place");
            Some((qemu, shared))
        })
        .clone()
}

/// Compiles a C program for the freestanding runtime with the runtime's own flags and links
/// it with nothing else (`-nostdlib -static`). The program reaches the runtime through
/// `#include "sysy_rt_free.c"` or `"sysy_rt.h"` (both in the runtime's cache directory);
/// with `link_object` the cached runtime object is linked in as well.
fn build_freestanding_c_with(
    c: &str,
    out: &std::path::Path,
    link_object: bool,
) -> Result<(), sysyc::toolchain::ToolchainError> {
    use std::ffi::OsString;
    let gcc = toolchain::arm_gcc()?;
    let runtime = library::freestanding_runtime()?;
    let mut args: Vec<OsString> = library::freestanding_cflags()
        .into_iter()
        .map(OsString::from)
        .collect();
    args.extend(["-static".into(), "-I".into(), runtime.dir.clone().into_os_string()]);
    args.extend(["-x", "c", "-", "-x", "none"].map(OsString::from));
    if link_object {
        args.push(runtime.object.into_os_string());
    }
    args.extend(["-o".into(), out.as_os_str().to_owned()]);
    toolchain::run_tool(&gcc, &args, Some(c.as_bytes()))?;
    Ok(())
}

fn build_freestanding_c(
    c: &str,
    out: &std::path::Path,
) -> Result<(), sysyc::toolchain::ToolchainError> {
    build_freestanding_c_with(c, out, false)
}

/// Runs the commands through `runtime`'s driver; returns one record per case, or `None`
/// when the tools are missing.
fn records(runtime: Runtime, name: &str, commands: &str, cases: usize) -> Option<Vec<Vec<u8>>> {
    let (qemu, driver) = driver(runtime)?;
    let opts = RunOptions {
        stdin: Stdin::Bytes(commands.as_bytes().to_vec()),
        timeout: Duration::from_secs(300),
        ..RunOptions::default()
    };
    let run = qemu.run(&driver, &opts).expect("run the driver");
    assert_eq!(
        run.status,
        RunStatus::Exited(0),
        "{runtime:?} driver failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let records: Vec<Vec<u8>> = run.stdout.split(|&b| b == 0x1e).map(<[u8]>::to_vec).collect();
    assert_eq!(
        records.len(),
        cases + 1,
        "{runtime:?}: one record per case (and an empty tail)"
    );
    eprintln!("{name}: {runtime:?} driver ran {:?}", run.wall);
    Some(records)
}

fn shorten(mut e: String) -> String {
    if e.len() > 300 {
        let mut cut = 300;
        while !e.is_char_boundary(cut) {
            cut -= 1;
        }
        e.truncate(cut);
        e.push_str("...");
    }
    e
}

/// Runs all cases through both drivers and through `Io`; panics listing the disagreements:
/// a runtime with the model, or the two runtimes with each other.
fn compare(name: &str, cases: &[Case]) {
    let commands: String = cases.iter().map(|c| c.command() + "\n").collect();
    let mut all: Vec<(Runtime, Vec<Vec<u8>>)> = Vec::new();
    for runtime in Runtime::ALL {
        match records(runtime, name, &commands, cases.len()) {
            Some(r) => all.push((runtime, r)),
            None => return,
        }
    }
    let mut failures = Vec::new();
    for (runtime, records) in &all {
        for (case, record) in cases.iter().zip(records) {
            if let Err(e) = case.check(record) {
                failures.push(format!("{runtime:?}: {}: {}", case.describe(), shorten(e)));
            }
        }
    }
    let mut differing = 0;
    let (glibc, free) = (&all[0].1, &all[1].1);
    for ((case, g), f) in cases.iter().zip(glibc).zip(free) {
        if g != f {
            differing += 1;
            failures.push(format!(
                "runtimes differ: {}: glibc {:?}, freestanding {:?}",
                case.describe(),
                String::from_utf8_lossy(g),
                String::from_utf8_lossy(f)
            ));
        }
    }
    eprintln!(
        "{name}: {} cases checked against both runtimes, {} disagreements ({differing} between the runtimes)",
        cases.len(),
        failures.len(),
    );
    if !failures.is_empty() {
        let shown = failures
            .iter()
            .take(60)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        panic!(
            "{name}: {} disagreements over {} cases:\n{shown}",
            failures.len(),
            cases.len()
        );
    }
}

/// SplitMix64: a tiny, well-known deterministic generator (the cases must not change between
/// runs, so no entropy is involved).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Interesting floats: signed zeros, extremes, subnormals, infinities, NaNs (both signs, with
/// payloads), every power of two, powers of ten, simple fractions, and random bit patterns.
fn float_pool(rng: &mut Rng, random: usize) -> Vec<f32> {
    let mut v: Vec<f32> = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        0.1,
        -0.1,
        1.0 / 3.0,
        2.0 / 3.0,
        -2.5,
        3.5,
        std::f32::consts::PI,
        std::f32::consts::E,
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::EPSILON,
        1.0 + f32::EPSILON,
        1.0 - f32::EPSILON / 2.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        123456.79,
        16777216.0,
        16777215.0,
        9.999999e-5,
        f32::from_bits(0.0001f32.to_bits() - 1),
        0.0001,
        99999.99,
        999999.94,
        1e10,
        1e-10,
        6.1035156e-5,
        0.099999994,
        f32::from_bits(0.3f32.to_bits() + 1),
    ];
    for bits in [
        1u32,
        2,
        3,
        0x0000_ffff,
        0x0040_0000,
        0x007f_ffff,
        0x7f80_0001,
        0xff81_2345,
        0x7fff_ffff,
        0x0080_0001,
    ] {
        v.push(f32::from_bits(bits));
        v.push(-f32::from_bits(bits));
    }
    for e in -149..=127 {
        v.push(2f32.powi(e));
    }
    for e in -45..=38 {
        v.push(format!("1e{e}").parse().expect("power of ten"));
        v.push(format!("-5e{e}").parse().expect("power of ten"));
    }
    for n in 1..=40 {
        v.push(n as f32 / 8.0);
        v.push(n as f32 * 0.7);
    }
    for _ in 0..random {
        v.push(f32::from_bits(rng.next() as u32));
        // Random "decimal-looking" values: an integer scaled by a power of ten.
        let scaled: f32 = format!(
            "{}e{}",
            rng.below(2_000_000) as i64 - 1_000_000,
            rng.below(30) as i32 - 20
        )
        .parse()
        .expect("decimal");
        v.push(scaled);
    }
    v
}

fn int_pool(rng: &mut Rng, random: usize) -> Vec<i32> {
    let mut v = vec![
        0,
        1,
        -1,
        7,
        -7,
        9,
        10,
        42,
        -42,
        99,
        100,
        255,
        256,
        -255,
        -256,
        32767,
        32768,
        -32768,
        -32769,
        65535,
        65536,
        i32::MAX,
        i32::MIN,
        i32::MIN + 1,
        i32::MAX - 1,
        0x1234_5678,
        -0x1234_5678,
        0o777,
        0x7fff_ff00,
    ];
    let mut p: i32 = 1;
    while let Some(next) = p.checked_mul(10) {
        v.extend([p - 1, p, -p, next - 1]);
        p = next;
    }
    for _ in 0..random {
        let r = rng.next();
        v.push(match r % 3 {
            0 => r as i32 >> 16,
            1 => (r >> 32) as i32,
            _ => (r % 2000) as i32 - 1000,
        });
    }
    v
}

const FLAG_SETS: [&str; 13] = [
    "", "-", "+", " ", "#", "0", "-0", "+0", " 0", "#0", "-#", "+ ", "-+ #0",
];

fn putf(fmt: &str, args: &[PutfArg]) -> Case {
    Case::Putf(fmt.as_bytes().to_vec(), args.to_vec())
}

#[test]
fn putf_integer_conversions() {
    let mut rng = Rng(1);
    let pool = int_pool(&mut rng, 300);
    let mut cases = Vec::new();
    for conv in ["d", "i", "u", "x", "X", "o", "c"] {
        for flags in FLAG_SETS {
            for width in ["", "1", "6", "15"] {
                for prec in ["", ".", ".0", ".1", ".4", ".12"] {
                    let fmt = format!("%{flags}{width}{prec}{conv}");
                    for _ in 0..4 {
                        let mut v = *rng.pick(&pool);
                        if conv == "c" && v & 0xff == 0x1e {
                            v += 1; // 0x1e separates the driver's records.
                        }
                        cases.push(putf(&fmt, &[PutfArg::Int(v)]));
                    }
                    cases.push(putf(&fmt, &[PutfArg::Int(0)]));
                }
            }
        }
    }
    let anchors = [
        "%d", "%i", "%u", "%x", "%X", "%o", "%#x", "%#X", "%#o", "%+d", "% d", "%hd", "%hhd",
        "%hu", "%hhu", "%hx", "%hhX", "%ho", "%hhb", "%hb", "%ld", "%lu", "%lx", "%zd", "%zu",
        "%td", "%'d", "%'u", "%'12d",
    ];
    for fmt in anchors {
        for &v in &pool {
            cases.push(putf(fmt, &[PutfArg::Int(v)]));
        }
    }
    for c in (0..=255).filter(|&c| c != 0x1e) {
        for fmt in ["%c", "%3c", "%-3c", "%03c", "[%c]"] {
            cases.push(putf(fmt, &[PutfArg::Int(c)]));
        }
    }
    compare("putf_integer_conversions", &cases);
}

#[test]
fn putf_float_conversions() {
    let mut rng = Rng(2);
    let pool = float_pool(&mut rng, 800);
    let mut cases = Vec::new();
    for conv in ["a", "A", "e", "E", "f", "F", "g", "G"] {
        for flags in FLAG_SETS {
            for width in ["", "1", "9", "24"] {
                for prec in [
                    "", ".", ".0", ".1", ".2", ".3", ".6", ".9", ".13", ".17", ".30",
                ] {
                    let fmt = format!("%{flags}{width}{prec}{conv}");
                    for _ in 0..3 {
                        cases.push(putf(&fmt, &[PutfArg::Float(*rng.pick(&pool))]));
                    }
                }
            }
        }
    }
    let anchors = [
        "%a", "%.0a", "%.1a", "%.3a", "%.6a", "%.13a", "%.20a", "%#a", "%#.0a", "%A", "%f", "%.0f",
        "%.1f", "%.2f", "%.10f", "%.45f", "%#.0f", "%e", "%.0e", "%.1e", "%.3e", "%.8e", "%.20e",
        "%#.0e", "%E", "%g", "%.0g", "%.1g", "%.2g", "%.5g", "%.9g", "%.17g", "%.40g", "%#g",
        "%#.3g", "%G", "%lf", "%Lf", "%le", "%'f", "%'.2f",
    ];
    for fmt in anchors {
        for &v in &pool {
            cases.push(putf(fmt, &[PutfArg::Float(v)]));
        }
    }
    compare("putf_float_conversions", &cases);
}

/// Values exactly halfway between two outputs: decimal ties (dyadic fractions printed with
/// just too few digits) and hexadecimal ties for `%.Na`.
#[test]
fn putf_rounding_ties() {
    let mut rng = Rng(3);
    let mut cases = Vec::new();
    for k in 1..=24u32 {
        for _ in 0..12 {
            let int_bits = 24 - k;
            let int_part = if int_bits == 0 {
                0
            } else {
                rng.below(1 << int_bits.min(12)) as u32
            };
            let odd = (rng.below(1 << (k - 1)) as u32) * 2 + 1;
            let v = int_part as f32 + odd as f32 / 2f32.powi(k as i32);
            for p in 0..=(k as usize + 1) {
                for conv in ["f", "e", "g"] {
                    cases.push(putf(&format!("%.{p}{conv}"), &[PutfArg::Float(v)]));
                    cases.push(putf(&format!("%.{p}{conv}"), &[PutfArg::Float(-v)]));
                }
            }
        }
    }
    // Hex ties: keep p hex digits of the fraction, then exactly half a unit.
    for p in 0..=5u32 {
        for _ in 0..40 {
            let keep_mask = !((1u32 << (23 - 4 * p.min(5))) - 1) & 0x007f_ffff;
            let tie_bit = 1u32 << (22 - 4 * p);
            let exponent = (rng.below(250) as u32 + 2) << 23;
            let bits = exponent | (rng.next() as u32 & keep_mask) | tie_bit;
            for f in [f32::from_bits(bits), -f32::from_bits(bits)] {
                cases.push(putf(&format!("%.{p}a"), &[PutfArg::Float(f)]));
                cases.push(putf(&format!("%#.{p}A"), &[PutfArg::Float(f)]));
            }
        }
    }
    // Digits that round up into a new leading digit.
    for v in [
        0.95f32, 9.5, 99.5, 0.0095, 999999.5, 9.999999, 1.9999999, 0.99999994,
    ] {
        for fmt in [
            "%.0f", "%.1f", "%.0e", "%.1e", "%.0g", "%.1g", "%.2g", "%.0a", "%.1a", "%.2a",
        ] {
            cases.push(putf(fmt, &[PutfArg::Float(v)]));
        }
    }
    compare("putf_rounding_ties", &cases);
}

/// `*` widths and precisions, several arguments, literal text, and malformed specifications.
#[test]
fn putf_star_multiple_arguments_and_odd_formats() {
    use PutfArg::{Float as F, Int as I};
    let mut rng = Rng(4);
    let floats = float_pool(&mut rng, 50);
    let ints = int_pool(&mut rng, 50);
    let mut cases = Vec::new();
    for _ in 0..400 {
        let (w, p, i, f) = (
            rng.below(41) as i32 - 20,
            rng.below(25) as i32 - 4,
            *rng.pick(&ints),
            *rng.pick(&floats),
        );
        cases.push(putf("%*d|", &[I(w), I(i)]));
        cases.push(putf("%-*d|", &[I(w), I(i)]));
        cases.push(putf("%.*d|", &[I(p), I(i)]));
        cases.push(putf("%*x|", &[I(w), I(i)]));
        cases.push(putf("%*c|", &[I(w), I(65 + i.rem_euclid(26))]));
        cases.push(putf("%*.*f|", &[I(w), I(p), F(f)]));
        cases.push(putf("%0*.*e|", &[I(w), I(p), F(f)]));
        cases.push(putf("%*.*g|", &[I(w), I(p), F(f)]));
        cases.push(putf("%+*.*a|", &[I(w), I(p), F(f)]));
        cases.push(putf("%.*a", &[I(p), F(f)]));
        cases.push(putf(
            "x=%d, y=%f; z=%5d w=%-10.3e.\n",
            &[I(i), F(f), I(w), F(-f)],
        ));
        cases.push(putf("%f%f", &[F(f), F(-f)]));
        cases.push(putf("%5.1f|%-8.3e", &[F(f), F(f * 3.0)]));
        cases.push(putf("%d%%%d", &[I(i), I(w)]));
        cases.push(putf("%c%c%c", &[I(72), I(105), I(33)]));
    }
    for fmt in [
        "",
        "hello, world\n",
        "100%%",
        "%%d",
        "tab\there\n",
        "%5%",
        "%-5%",
        "%",
        "abc%",
        "%5",
        "%.",
        "%k",
        "%5k",
        "%-08.3k",
        "%+ #k",
        "%y%%",
        "%'k",
        "%-+0'5.2y",
        "%.0k",
        "%00k",
        "%-0k",
        "%0-k",
        "%hk",
        "%5.3hhk",
        "%lk",
        "%I5k",
        "%#'I+ -0k",
    ] {
        cases.push(putf(fmt, &[]));
    }
    for fmt in [
        "%d%k", "%k%d", "%5k%x", "%d %", "%p", "%10p", "%-10p", "%+p", "%#p", "% p", "%010p",
        "%.5p", "%.0p", "%010.5p", "%+010p", "%*k", "%.*k|", "%b", "%#b", "%B", "%#B", "%12.5b",
        "%Id", "%I5x", "%-I5d",
    ] {
        for v in [0, 1, 255, -1, 0x1234_5678] {
            cases.push(putf(fmt, &[I(v)]));
        }
    }
    compare("putf_star_multiple_arguments_and_odd_formats", &cases);
}

/// Shapes (argument kinds, in order) the driver can pass to `putf`.
const DRIVER_SHAPES: [&str; 18] = [
    "", "i", "f", "ii", "if", "fi", "ff", "iii", "iif", "ifif", "iff", "fif", "iiii", "iiif",
    "iifi", "iiff", "ifii", "fiif",
];

/// Random specifications: flags in any order and number, widths and precisions (also `*`),
/// length modifiers, known and unknown conversions, between random literal text; one or two
/// per format.
#[test]
fn putf_random_specifications() {
    let mut rng = Rng(5);
    let floats = float_pool(&mut rng, 300);
    let ints = int_pool(&mut rng, 300);
    let mut cases = Vec::new();
    while cases.len() < 50_000 {
        let mut fmt = String::new();
        let mut args = Vec::new();
        for _ in 0..1 + rng.below(2) {
            fmt.push_str(rng.pick::<&str>(&["", "", "x", "ab ", "\n", "=", " "]));
            fmt.push('%');
            for _ in 0..rng.below(4) {
                fmt.push(*rng.pick(&['-', '+', ' ', '#', '0', '\'', 'I']));
            }
            match rng.below(4) {
                0 => {
                    fmt.push('*');
                    args.push(PutfArg::Int(rng.below(41) as i32 - 20));
                }
                1 => fmt.push_str(&rng.below(30).to_string()),
                _ => {}
            }
            match rng.below(5) {
                0 => fmt.push('.'),
                1 => fmt.push_str(&format!(".{}", rng.below(20))),
                2 => {
                    fmt.push_str(".*");
                    args.push(PutfArg::Int(rng.below(30) as i32 - 6));
                }
                _ => {}
            }
            let conv = *rng.pick(&[
                'd', 'i', 'u', 'x', 'X', 'o', 'b', 'B', 'c', 'p', 'f', 'F', 'e', 'E', 'g', 'G',
                'a', 'A', '%', 'k', 'y', 'v', 'r', 'K', 'Q', 'w', 'W',
            ]);
            let float_conv = "fFeEgGaA".contains(conv);
            let length = if float_conv {
                *rng.pick(&["", "", "", "l", "L"])
            } else {
                *rng.pick(&["", "", "", "", "h", "hh", "l", "z", "t"])
            };
            fmt.push_str(length);
            fmt.push(conv);
            if float_conv {
                args.push(PutfArg::Float(*rng.pick(&floats)));
            } else if "diuxXobBp".contains(conv) {
                args.push(PutfArg::Int(*rng.pick(&ints)));
            } else if conv == 'c' {
                args.push(PutfArg::Int(*rng.pick(&[65, 0, 255, 32, 10, 0x141, -1])));
            }
        }
        fmt.push_str(rng.pick::<&str>(&["", "|", "%%"]));
        let shape: String = args
            .iter()
            .map(|a| {
                if matches!(a, PutfArg::Int(_)) {
                    'i'
                } else {
                    'f'
                }
            })
            .collect();
        if DRIVER_SHAPES.contains(&shape.as_str()) {
            cases.push(Case::Putf(fmt.into_bytes(), args));
        }
    }
    compare("putf_random_specifications", &cases);
}

#[test]
fn putint_putch_putfloat_putarray_putfarray() {
    let mut rng = Rng(6);
    let floats = float_pool(&mut rng, 1500);
    let ints = int_pool(&mut rng, 500);
    let mut cases: Vec<Case> = ints.iter().map(|&v| Case::PutInt(v)).collect();
    cases.extend((-300..300).filter(|c| c & 0xff != 0x1e).map(Case::PutCh));
    cases.extend(floats.iter().map(|&f| Case::PutFloat(f)));
    for n in [0usize, 1, 2, 7, 100] {
        for _ in 0..10 {
            cases.push(Case::PutArray((0..n).map(|_| *rng.pick(&ints)).collect()));
            cases.push(Case::PutFarray(
                (0..n).map(|_| *rng.pick(&floats)).collect(),
            ));
        }
    }
    compare("putint_putch_putfloat_putarray_putfarray", &cases);
}

/// Texts for `getint`: valid, malformed, overflowing, with assorted whitespace and trailers.
#[test]
fn getint_getch_getarray() {
    let mut rng = Rng(7);
    let mut texts: Vec<Vec<u8>> = [
        "0",
        "42",
        "-42",
        "+7",
        "  12",
        "\n\t 9x",
        "-0",
        "007",
        "0x1A",
        "12abc",
        "2147483647",
        "2147483648",
        "-2147483648",
        "-2147483649",
        "99999999999999999999999",
        "-99999999999999999999",
        "+",
        "-",
        "- 1",
        "+-1",
        "",
        "   ",
        "x",
        ".5",
        "1.5",
        "1e3",
        "\x0b\x0c\r 5",
        "++1",
        "--1",
        "0000000000000000000000000012",
        "3 4",
        "-",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    for _ in 0..300 {
        texts.push(format!("{} {}", rng.next() as i32, rng.next() as i64).into_bytes());
    }
    let mut cases = Vec::new();
    for t in &texts {
        cases.push(Case::Get(b'd', t.clone()));
        cases.push(Case::Get(b'c', t.clone()));
    }
    for b in 0..=255u8 {
        cases.push(Case::Get(b'c', vec![b, b'z']));
    }
    let alphabet = b"0123456789+- \n\tx";
    for _ in 0..2000 {
        let text: Vec<u8> = (0..1 + rng.below(14))
            .map(|_| *rng.pick(alphabet))
            .collect();
        cases.push(Case::Get(b'd', text));
    }
    for n in [0usize, 1, 3, 50] {
        for _ in 0..5 {
            let text = (0..n).fold(format!("{n}\n"), |s, _| {
                s + &format!("{} ", rng.next() as i32)
            });
            cases.push(Case::Get(b'a', text.into_bytes()));
        }
    }
    compare("getint_getch_getarray", &cases);
}

/// Texts for `getfloat`: decimal and hex floats (including exact ties between two floats),
/// long digit strings, special names, and every kind of truncated or malformed number.
#[test]
fn getfloat_getfarray() {
    let mut rng = Rng(8);
    let mut texts: Vec<String> = [
        "0",
        "-0",
        "1",
        "+.5",
        ".5",
        "5.",
        "-.33E+5",
        "1e-6",
        "03.141592653589793",
        "0x1.921fb6p+1",
        "0x.AP-3",
        "0X1P3",
        "0x1p-149",
        "0x1p-150",
        "0x1.8p-150",
        "0x1p128",
        "0x1.fffffep127",
        "0x1.ffffffp127",
        "1e39",
        "-1e39",
        "1e-46",
        "1.4e-45",
        "7e-46",
        "3.4028235e38",
        "3.4028236e38",
        "3.40282357e38",
        "1.17549435e-38",
        "inf",
        "-inf",
        "INF",
        "infinity",
        "-Infinity",
        "infinit",
        "infx",
        "infinityx",
        "nan",
        "-nan",
        "NaN",
        "nan(123)",
        "na",
        "n",
        "i",
        "in",
        "0x",
        "0X",
        "-0x",
        "0xg",
        "0x.",
        "0x.p1",
        "0x1p",
        "0x1p+",
        "0x1p-x",
        "0x1.",
        "0x.8",
        "1e",
        "1e+",
        "1e-",
        "1E5",
        "1e+5x",
        "1.5.3",
        ".",
        "-.",
        "+",
        "-",
        "e5",
        ".e5",
        "0.e",
        "1..2",
        "  \n 2.5",
        "",
        "   ",
        "x",
        "1,5",
        "0e0",
        "00x1p1",
        "0x0p0",
        "-0x0p0",
        "1p3",
        "0x1e3",
        "0x1e+3",
        "0xep1",
        "0x1P-1",
        "1e0000000000000000000005",
        "1e-99999999999999999",
        "0x1p99999999999",
        "0x1p-99999999999",
        "100000000000000000000000000000000000000000",
        "0.000000000000000000000000000000000000000000001401298464324817070923729583289916131280",
        "0.000000000000000000000000000000000000000000000700649232162408535461864791644958065640",
        "0.000000000000000000000000000000000000000000000700649232162408535461864791644958065641",
        "16777217",
        "16777219",
        "16777217.000000001",
        "33554434",
        "33554438",
        "0x1.000001p0",
        "0x1.000003p0",
        "0x1.0000010000000000000000001p0",
        "0x1.00000100000000000000000000000000000000p0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Decimal ties: the exact midpoint between two adjacent floats, printed in full, plus
    // the same text nudged by one unit in the last digit either way.
    for _ in 0..120 {
        let bits = (rng.next() as u32) & 0x7f7f_ffff;
        let lo = f32::from_bits(bits) as f64;
        let hi = f32::from_bits(bits + 1) as f64;
        let mid = lo + (hi - lo) / 2.0; // exact in f64: one more bit than f32 needs
        let text = format!("{mid:.200}");
        let text = text.trim_end_matches('0').to_string();
        texts.push(text.clone());
        texts.push(format!("{text}1"));
        if let Some(stripped) = text.strip_suffix('5') {
            texts.push(format!("{stripped}4999999999999999999999"));
        }
        texts.push(format!("{mid:e}"));
        texts.push(format!("{:e}", lo));
    }
    // Significands longer than any exact tie needs (a binary32 midpoint has at most 112
    // significant digits; the freestanding runtime keeps 200 and folds the rest into a sticky
    // digit): ties followed by hundreds of zeros, with or without a last nonzero digit, and
    // long runs of leading zeros balanced by the exponent.
    let zeros = "0".repeat(300);
    for _ in 0..40 {
        let bits = (rng.next() as u32) & 0x7f7f_ffff;
        let lo = f32::from_bits(bits) as f64;
        let hi = f32::from_bits(bits + 1) as f64;
        let mid = lo + (hi - lo) / 2.0;
        let text = format!("{mid:.200}");
        let text = text.trim_end_matches('0');
        let text = if text.contains('.') { text.to_string() } else { format!("{text}.") };
        texts.push(format!("{text}{zeros}"));
        texts.push(format!("{text}{zeros}1"));
        texts.push(format!("{text}{zeros}1e0"));
        let digits: String = (0..250).map(|_| char::from(b'0' + rng.below(10) as u8)).collect();
        texts.push(format!("{digits}e-{}", 200 + rng.below(80)));
        texts.push(format!("0.{zeros}{digits}e{}", 280 + rng.below(40)));
    }
    texts.push(format!("0.{zeros}1e301"));
    texts.push(format!("1{zeros}e-300"));
    texts.push(format!("{}e-{}", "9".repeat(400), 400 + 39));
    texts.push(format!("340282356779733661637539395458142568448.{zeros}"));
    texts.push(format!("340282356779733661637539395458142568447.{zeros}9"));
    texts.push(format!("0.{}7006492321624085354618647916449580656401{zeros}", "0".repeat(45)));
    texts.push(format!("0.{}7006492321624085354618647916449580656400{zeros}", "0".repeat(45)));
    texts.push(format!("0.{}7006492321624085354618647916449580656400{zeros}1", "0".repeat(45)));
    for _ in 0..300 {
        let f = f32::from_bits(rng.next() as u32);
        texts.push(format!("{f:e}"));
        texts.push(sysyc::runtime::io::format_hex_float(f as f64));
        texts.push(format!("{}", rng.next() as i64));
        let digits: String = (0..rng.below(60) + 1)
            .map(|_| char::from(b'0' + rng.below(10) as u8))
            .collect();
        texts.push(format!("{digits}.{digits}e-{}", rng.below(60)));
        texts.push(format!(
            "0x{:x}.{:x}p{}",
            rng.next(),
            rng.next() as u16,
            rng.below(300) as i32 - 150
        ));
    }
    // Random texts over an alphabet of number-like characters.
    let alphabet = b"0123456789.+-eEpPxXaAfFiInNtTyY( )\n";
    for _ in 0..4000 {
        let len = 1 + rng.below(12);
        texts.push((0..len).map(|_| char::from(*rng.pick(alphabet))).collect());
    }
    let mut cases = Vec::new();
    for t in &texts {
        cases.push(Case::Get(b'f', t.as_bytes().to_vec()));
        cases.push(Case::Get(b'f', format!("{t} 7").into_bytes()));
    }
    for n in [0usize, 1, 4, 30] {
        for _ in 0..5 {
            let text = (0..n).fold(format!(" {n}\n"), |s, _| {
                s + &format!("{} ", rng.pick(&texts[..20]))
            });
            cases.push(Case::Get(b'b', text.into_bytes()));
        }
    }
    compare("getfloat_getfarray", &cases);
}

/// The cases above read from memory (`fmemopen` for glibc, the runtime's buffer for the
/// freestanding driver); scanf's one-character pushback is the same on a pipe, which is how
/// compiled programs get their input. Check a few of the inputs where the pushback decides
/// the outcome through a real pipe, with each runtime as programs link it (the freestanding
/// one as its cached object, with `_start`).
#[test]
fn getfloat_through_a_pipe() {
    let program = "#include \"sysy_rt.h\"\n\
        int main(void) { union { float f; unsigned u; } v = { getfloat() }; putf(\"%08x\", v.u);\n\
        int c; while ((c = getch()) != 0) putf(\" %02x\", c); return 0; }\n";
    let dir = common::scratch();
    for runtime in Runtime::ALL {
        let Some((qemu, _)) = driver(runtime) else { return };
        let exe = dir.path().join(format!("pipe_getfloat_{runtime:?}"));
        let built = match runtime {
            Runtime::Glibc => library::compile_c(Source::Text(program), &exe, &["-O1"]),
            Runtime::Freestanding => build_freestanding_c_with(program, &exe, true),
        };
        if let Err(e) = built {
            panic!("building the {runtime:?} pipe test failed: {e}");
        }
        for input in [
            "1e+x",
            "0x1p-!",
            "infinityx",
            "nan(1)",
            "  -0x.8p1",
            "1.5.3",
            "0x.p",
            "-.5e-",
        ] {
            let opts = RunOptions {
                stdin: Stdin::Bytes(input.as_bytes().to_vec()),
                ..RunOptions::default()
            };
            let run = qemu.run(&exe, &opts).expect("run");
            let mut io = Io::new(input.as_bytes().to_vec());
            let value = io
                .get_float()
                .unwrap_or_else(|trap| panic!("Io cannot read {input:?}: {trap}"));
            let mut expected = format!("{:08x}", value.to_bits());
            while let Ok(c) = io.get_ch() {
                let _ = write!(expected, " {c:02x}");
            }
            assert_eq!(
                String::from_utf8_lossy(&run.stdout),
                expected,
                "{runtime:?}: input {input:?}"
            );
        }
    }
}

/// A program linked with each runtime reads an input of several hundred KiB through a pipe
/// (so numbers straddle the freestanding runtime's 64 KiB read blocks), echoes it with every
/// output function (more than 64 KiB of output: several buffer flushes) and records timers:
/// stdout, the exit status and the stderr report's lines (durations aside) must agree.
#[test]
fn long_io_through_pipes_agrees_between_runtimes() {
    let program = r#"#include "sysy_rt.h"
int a[64];
float b[64];
int main(void) {
    int rounds = getint();
    starttime();
    for (int r = 0; r < rounds; r++) {
        int n = getarray(a);
        putarray(n, a);
        int m = getfarray(b);
        putfarray(m, b);
        float f = getfloat();
        putfloat(f);
        int i = getint();
        int c = getch();
        putf(" %d %.3f %e %g|%-6x|%5c\n", i, f, f, f, r, c);
    }
    stoptime();
    starttime();
    int c;
    unsigned k = 0;
    while ((c = getch()) != 0)
        k = k * 31 + c;
    putint((int)k);
    putch('\n');
    stoptime();
    stoptime();
    return rounds + (int)(k & 0xff);
}
"#;
    let mut rng = Rng(9);
    let ints = int_pool(&mut rng, 200);
    let floats = float_pool(&mut rng, 200);
    let float_texts = ["1e+5", "-0x1.8p-3", "inf", "-nan", "3.25", ".5e1", "1e-46", "0X1P3", "16777217"];
    let rounds = 6000;
    let mut input = format!("{rounds}\n");
    for _ in 0..rounds {
        let n = rng.below(20);
        input += &format!("{n}");
        for _ in 0..n {
            input += &format!(" {}", rng.pick(&ints));
        }
        let m = rng.below(6);
        input += &format!("\n{m}");
        for _ in 0..m {
            match rng.below(3) {
                0 => input += &format!(" {:e}", rng.pick(&floats)),
                1 => input += &format!(" {}", sysyc::runtime::io::format_hex_float(*rng.pick(&floats) as f64)),
                _ => input += &format!(" {}", rng.pick(&float_texts)),
            }
        }
        // getch reads the byte right after the int.
        input += &format!("\n{} {}{}", rng.pick(&float_texts), rng.pick(&ints), char::from(b'a' + rng.below(26) as u8));
        input += if rng.below(2) == 0 { "\n" } else { "\t " };
    }
    input += "trailing text that getch reads to the end";
    assert!(input.len() > 3 * 65536, "the input spans several read blocks");

    let dir = common::scratch();
    let mut results = Vec::new();
    for runtime in Runtime::ALL {
        let Some((qemu, _)) = driver(runtime) else { return };
        let exe = dir.path().join(format!("long_io_{runtime:?}"));
        let built = match runtime {
            Runtime::Glibc => library::compile_c(Source::Text(program), &exe, &["-O1"]),
            Runtime::Freestanding => build_freestanding_c_with(program, &exe, true),
        };
        if let Err(e) = built {
            panic!("building the {runtime:?} long-input program failed: {e}");
        }
        let opts = RunOptions {
            stdin: Stdin::Bytes(input.clone().into_bytes()),
            ..RunOptions::default()
        };
        let run = qemu.run(&exe, &opts).expect("run");
        // The durations differ from run to run; the lines and their shape must not.
        let stderr: Vec<String> = String::from_utf8_lossy(&run.stderr)
            .lines()
            .map(|l| {
                let (label, duration) = l.split_once(": ").expect("a timer line");
                let shape: String = duration.chars().map(|c| if c.is_ascii_digit() { '9' } else { c }).collect();
                let shape = shape.replace("99", "9").replace("99", "9").replace("99", "9");
                format!("{label}: {shape}")
            })
            .collect();
        results.push((runtime, run.status, run.stdout, stderr));
    }
    let (_, glibc_status, glibc_out, glibc_err) = &results[0];
    let (_, free_status, free_out, free_err) = &results[1];
    assert!(glibc_out.len() > 65536, "the output spans several buffers");
    assert_eq!(glibc_status, free_status);
    if glibc_out != free_out {
        let at = glibc_out.iter().zip(free_out).position(|(a, b)| a != b).unwrap_or(glibc_out.len().min(free_out.len()));
        panic!(
            "stdout differs at byte {at}: glibc {:?}, freestanding {:?}",
            String::from_utf8_lossy(&glibc_out[at.saturating_sub(40)..(at + 40).min(glibc_out.len())]),
            String::from_utf8_lossy(&free_out[at.saturating_sub(40)..(at + 40).min(free_out.len())])
        );
    }
    assert_eq!(glibc_err, free_err);
    assert_eq!(glibc_err.len(), 4, "three timer pairs and the total: {glibc_err:?}");
}
