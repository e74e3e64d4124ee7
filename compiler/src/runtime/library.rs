//! The runtime libraries compiled for the target, built once and cached on disk, and linking
//! programs with them: compiled SysY ([`build_program`]: in-process with the freestanding
//! runtime by default, or [`link_executable`] with GNU tools and glibc) and C translations of
//! SysY programs ([`compile_c`]).
//!
//! Two runtimes exist:
//! * `sysy_rt.c` ([`native_runtime`]): a thin layer over glibc's stdio, linked statically
//!   with glibc by gcc. It is the reference for the runtime's behaviour, and what
//!   [`link_executable`] (`--assembler=gnu`) and [`compile_c`] (the gcc third opinion) use.
//! * `sysy_rt_free.c` ([`freestanding_runtime`]): the same functions and bytes without any C
//!   library, plus the `_start` entry point, as one relocatable object whose only undefined
//!   symbol is `main` (see the file's own documentation). A program object linked with it
//!   alone starts in a fraction of glibc's start-up time under qemu. [`link_in_process`]
//!   (the default way programs are built) links with it.
//!
//! The C sources and the header are embedded in the compiler binary, so the compiler needs
//! no data files at run time. Each object is built by the cross gcc the first time it is
//! needed and then reused by every later link, in this process and in others.
//!
//! # Cache location
//! The cache root is, in order of preference: `$SYSYC_CACHE_DIR`; `$XDG_CACHE_HOME/sysyc`;
//! `$HOME/.cache/sysyc`; `<system temp dir>/sysyc-cache` (relative settings are ignored).
//! Each build lives in `<root>/runtime/<key>/` (`sysy_rt.c`, `sysy_rt.h`, `sysy_rt.o`) or
//! `<root>/runtime-free/<key>/` (`sysy_rt_free.c`, `sysy_rt.h`, `sysy_rt_free.o`), where
//! `<key>` is a BLAKE3 hash of everything the object depends on: the C source, the header,
//! the compiler flags, the compiler's path and its `--version` text. Changing any of them
//! selects a fresh directory; stale directories are harmless and may be deleted at any time.
//!
//! # Concurrency
//! Several processes (parallel test binaries, harness workers) may build at the same time.
//! Every file is written under a unique temporary name in its final directory and then
//! renamed into place, which is atomic: a reader sees either no file or a complete one, and
//! concurrent builders merely replace a file with an identical one. Within a process the
//! result is memoised per runtime and compiler path.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use std::ffi::OsString;

use crate::toolchain::{self, SYSY_C_FLAGS, Source, TARGET_FLAGS, ToolchainError};

/// The runtime library's C source.
pub const RUNTIME_C: &str = include_str!("sysy_rt.c");
/// The runtime library's C header (declarations and the `starttime()`/`stoptime()` macros).
pub const RUNTIME_H: &str = include_str!("sysy_rt.h");
/// The freestanding runtime library's C source (no libc; provides `_start`).
pub const FREESTANDING_RUNTIME_C: &str = include_str!("sysy_rt_free.c");

/// Environment variable overriding the cache root.
pub const CACHE_DIR_ENV: &str = "SYSYC_CACHE_DIR";

/// The flags the runtime object is compiled with (besides `-c`, `-I` and the file names).
pub fn runtime_cflags() -> Vec<&'static str> {
    let mut flags = vec!["-O2"];
    flags.extend(TARGET_FLAGS);
    flags
}

/// What makes the freestanding object self-contained: no libc headers' assumptions or
/// builtins turned into library calls (`-ffreestanding -fno-builtin`, and no loops turned
/// into memcpy/memset calls), absolute addressing only (`-fno-pic`: the object's relocations
/// are plain static ones), no stack-protector canary (it lives in glibc's TLS), no unwind
/// tables (no `.ARM.exidx` sections to link), no `.comment` section.
pub const FREESTANDING_FLAGS: [&str; 9] = [
    "-ffreestanding",
    "-fno-builtin",
    "-fno-pic",
    "-fno-stack-protector",
    "-fno-unwind-tables",
    "-fno-asynchronous-unwind-tables",
    "-fno-tree-loop-distribute-patterns",
    "-fno-ident",
    "-nostdlib",
];

/// The flags the freestanding runtime object is compiled with (besides `-c`, `-I` and the
/// file names). C programs that include `sysy_rt_free.c` (the test driver) use them too.
pub fn freestanding_cflags() -> Vec<&'static str> {
    let mut flags = runtime_cflags();
    flags.extend(FREESTANDING_FLAGS);
    flags
}

/// A built runtime: the object to link, and the header and source it was built from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativeRuntime {
    /// The cache directory of this build (it also holds the C source).
    pub dir: PathBuf,
    /// `sysy_rt.o` or `sysy_rt_free.o`, ready to be linked.
    pub object: PathBuf,
    /// `sysy_rt.h`, for C programs that call the runtime.
    pub header: PathBuf,
}

/// How one runtime object is built and where it is cached.
struct Recipe {
    /// Directory under the cache root.
    cache_dir: &'static str,
    /// Bumped when the way the cache is laid out or the key is computed changes.
    cache_format: &'static str,
    source_name: &'static str,
    source: &'static str,
    object_name: &'static str,
    cflags: fn() -> Vec<&'static str>,
    /// `-c` (an object to link programs with) or not (a whole executable: [`TargetProgram`]).
    compile_only: bool,
}

const GLIBC_RUNTIME: Recipe = Recipe {
    cache_dir: "runtime",
    cache_format: "sysyc-native-runtime-1",
    source_name: "sysy_rt.c",
    source: RUNTIME_C,
    object_name: "sysy_rt.o",
    cflags: runtime_cflags,
    compile_only: true,
};

const FREESTANDING_RUNTIME: Recipe = Recipe {
    cache_dir: "runtime-free",
    cache_format: "sysyc-freestanding-runtime-1",
    source_name: "sysy_rt_free.c",
    source: FREESTANDING_RUNTIME_C,
    object_name: "sysy_rt_free.o",
    cflags: freestanding_cflags,
    compile_only: true,
};

/// A freestanding executable for the target made from one C source with no runtime (the
/// harness's fork-server loader): built by the cross gcc and cached exactly like the
/// runtime objects, under `<root>/<cache_dir>/<key>/<executable_name>`. `cflags` must make
/// gcc link it on its own (`-nostdlib -static`, an entry point in the source).
pub struct TargetProgram(Recipe);

impl TargetProgram {
    /// `cache_format` is bumped when the way the program is built changes in a way its
    /// flags do not show.
    pub const fn new(
        cache_dir: &'static str,
        cache_format: &'static str,
        source_name: &'static str,
        source: &'static str,
        executable_name: &'static str,
        cflags: fn() -> Vec<&'static str>,
    ) -> TargetProgram {
        TargetProgram(Recipe { cache_dir, cache_format, source_name, source, object_name: executable_name, cflags, compile_only: false })
    }
}

/// The executable of `program`, building it into the cache if needed (memoised per process
/// like the runtimes).
pub fn target_program(program: &'static TargetProgram) -> Result<PathBuf, ToolchainError> {
    memoised(&program.0).map(|built| built.object)
}

/// Builds made by this process, per recipe (its cache directory) and compiler path.
static BUILT: Mutex<Vec<(&'static str, PathBuf, NativeRuntime)>> = Mutex::new(Vec::new());

/// The glibc runtime (`sysy_rt.c`) built with the current cross gcc (see
/// [`toolchain::arm_gcc`]), building it into the cache if needed.
pub fn native_runtime() -> Result<NativeRuntime, ToolchainError> {
    memoised(&GLIBC_RUNTIME)
}

/// The freestanding runtime (`sysy_rt_free.c`: no libc, defines `_start`) built with the
/// current cross gcc, building it into the cache if needed. Link a program object with it
/// alone: `arm-linux-gnueabihf-ld -static prog.o sysy_rt_free.o -o prog`.
pub fn freestanding_runtime() -> Result<NativeRuntime, ToolchainError> {
    memoised(&FREESTANDING_RUNTIME)
}

fn memoised(recipe: &'static Recipe) -> Result<NativeRuntime, ToolchainError> {
    let gcc = toolchain::arm_gcc()?;
    // Holding the lock while building keeps the threads of one process from building the
    // same object twice; other processes are handled by the atomic renames.
    let mut built = BUILT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    // A cache directory deleted while the process runs is simply rebuilt.
    built.retain(|(_, _, rt)| rt.object.is_file() && rt.header.is_file());
    if let Some((_, _, rt)) = built.iter().find(|(dir, g, _)| *dir == recipe.cache_dir && *g == gcc) {
        return Ok(rt.clone());
    }
    let rt = build(recipe, &cache_root(), &gcc)?;
    built.push((recipe.cache_dir, gcc, rt.clone()));
    Ok(rt)
}

/// The path of the runtime object, building it if needed.
pub fn runtime_object() -> Result<PathBuf, ToolchainError> {
    native_runtime().map(|rt| rt.object)
}

/// The path of the runtime header, writing it if needed.
pub fn runtime_header() -> Result<PathBuf, ToolchainError> {
    native_runtime().map(|rt| rt.header)
}

/// How assembly text becomes an executable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Assembler {
    /// The in-process assembler and linker ([`crate::isa::arm::asm`], [`crate::isa::arm::link`])
    /// with the freestanding runtime: no external process, a small static executable that
    /// starts fast under qemu. The default.
    #[default]
    InProcess,
    /// GNU `as` and the gcc driver, linked statically with glibc and `sysy_rt.o`
    /// ([`link_executable`]): the second opinion.
    Gnu,
}

impl Assembler {
    pub const ALL: [Assembler; 2] = [Assembler::InProcess, Assembler::Gnu];

    pub fn name(self) -> &'static str {
        match self {
            Assembler::InProcess => "in-process",
            Assembler::Gnu => "gnu",
        }
    }
}

impl std::fmt::Display for Assembler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Assembler {
    type Err = String;

    fn from_str(s: &str) -> Result<Assembler, String> {
        Assembler::ALL.into_iter().find(|a| a.name() == s).ok_or_else(|| format!("unknown assembler `{s}` (known: in-process, gnu)"))
    }
}

/// Assembles `asm` and links it with the runtime into the executable `out`, the way
/// `assembler` says.
pub fn build_program(asm: &str, out: &Path, assembler: Assembler) -> Result<(), ToolchainError> {
    match assembler {
        Assembler::Gnu => link_executable(Source::Text(asm), out),
        Assembler::InProcess => link_in_process(asm, out),
    }
}

/// The freestanding runtime object's bytes, read once per process (per cache path).
static FREESTANDING_BYTES: Mutex<Option<(PathBuf, std::sync::Arc<[u8]>)>> = Mutex::new(None);

fn freestanding_object_bytes() -> Result<std::sync::Arc<[u8]>, ToolchainError> {
    let object = freestanding_runtime()?.object;
    let mut cached = FREESTANDING_BYTES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((path, bytes)) = cached.as_ref()
        && *path == object
    {
        return Ok(bytes.clone());
    }
    let bytes: std::sync::Arc<[u8]> = std::fs::read(&object)
        .map_err(|source| ToolchainError::Io { action: "cannot read", path: object.clone(), source })?
        .into();
    *cached = Some((object, bytes.clone()));
    Ok(bytes)
}

/// Assembles `asm` in-process and links it in-process with the freestanding runtime into the
/// static executable `out` (mode 0755).
pub fn link_in_process(asm: &str, out: &Path) -> Result<(), ToolchainError> {
    let object = crate::isa::arm::asm::assemble(asm)?;
    let executable = crate::isa::arm::link::link(&object, &freestanding_object_bytes()?)?;
    let io = |source| ToolchainError::Io { action: "cannot write", path: out.to_path_buf(), source };
    std::fs::write(out, executable).map_err(io)?;
    std::fs::set_permissions(out, std::os::unix::fs::PermissionsExt::from_mode(0o755)).map_err(io)
}

/// Assembles `asm` (ARM assembly for the target) and links it statically with the runtime
/// library into the executable `out`:
/// `arm-linux-gnueabihf-gcc -static <TARGET_FLAGS> asm.s sysy_rt.o -o out`.
pub fn link_executable(asm: Source<'_>, out: &Path) -> Result<(), ToolchainError> {
    let gcc = toolchain::arm_gcc()?;
    let runtime = runtime_object()?;
    let mut args: Vec<OsString> = vec!["-static".into()];
    args.extend(TARGET_FLAGS.iter().map(OsString::from));
    push_source(&mut args, asm, "assembler");
    args.push(runtime.into());
    args.push("-o".into());
    args.push(out.into());
    toolchain::run_tool(&gcc, &args, stdin_of(asm))?;
    Ok(())
}

/// Compiles a C program (a C translation of a SysY program) with gcc and links it statically
/// with the runtime library into `out`. `opt_flags` chooses the optimisation (`["-O0"]`,
/// `["-O2"]`, ...); [`SYSY_C_FLAGS`] and [`TARGET_FLAGS`] are always added, and the runtime
/// header is force-included (`-include sysy_rt.h`), so the program needs no declarations of
/// `getint`, `putf`, `starttime()` and the rest (an explicit `#include "sysy_rt.h"` works too).
pub fn compile_c(c: Source<'_>, out: &Path, opt_flags: &[&str]) -> Result<(), ToolchainError> {
    let gcc = toolchain::arm_gcc()?;
    let runtime = native_runtime()?;
    let mut args: Vec<OsString> = opt_flags.iter().map(OsString::from).collect();
    args.extend(SYSY_C_FLAGS.iter().map(OsString::from));
    args.extend(TARGET_FLAGS.iter().map(OsString::from));
    args.push("-static".into());
    args.push("-I".into());
    args.push(runtime.dir.into());
    args.push("-include".into());
    args.push(runtime.header.into());
    push_source(&mut args, c, "c");
    args.push(runtime.object.into());
    args.push("-o".into());
    args.push(out.into());
    toolchain::run_tool(&gcc, &args, stdin_of(c))?;
    Ok(())
}

/// Adds the source operand: the file, or `-x <language> -` (stdin) followed by `-x none` so
/// that later operands are again recognised by their extension.
fn push_source(args: &mut Vec<OsString>, source: Source<'_>, language: &str) {
    match source {
        Source::Path(p) => args.push(p.into()),
        Source::Text(_) => {
            args.extend(["-x", language, "-", "-x", "none"].map(OsString::from));
        }
    }
}

fn stdin_of(source: Source<'_>) -> Option<&[u8]> {
    match source {
        Source::Path(_) => None,
        Source::Text(t) => Some(t.as_bytes()),
    }
}

/// The cache root chosen by the policy in the module documentation.
pub fn cache_root() -> PathBuf {
    let absolute = |var: &str| std::env::var_os(var).map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(dir) = absolute(CACHE_DIR_ENV) {
        return dir;
    }
    if let Some(dir) = absolute("XDG_CACHE_HOME") {
        return dir.join("sysyc");
    }
    if let Some(home) = absolute("HOME") {
        return home.join(".cache").join("sysyc");
    }
    std::env::temp_dir().join("sysyc-cache")
}

/// Builds (or finds already built) the glibc runtime under `cache_root` with the compiler
/// `gcc`. No in-process memoisation: [`native_runtime`] adds that.
pub fn build_runtime(cache_root: &Path, gcc: &Path) -> Result<NativeRuntime, ToolchainError> {
    build(&GLIBC_RUNTIME, cache_root, gcc)
}

/// Builds (or finds already built) the freestanding runtime under `cache_root` with the
/// compiler `gcc`. No in-process memoisation: [`freestanding_runtime`] adds that.
pub fn build_freestanding_runtime(cache_root: &Path, gcc: &Path) -> Result<NativeRuntime, ToolchainError> {
    build(&FREESTANDING_RUNTIME, cache_root, gcc)
}

fn build(recipe: &Recipe, cache_root: &Path, gcc: &Path) -> Result<NativeRuntime, ToolchainError> {
    let dir = cache_root.join(recipe.cache_dir).join(cache_key(recipe, gcc)?);
    let rt = NativeRuntime { object: dir.join(recipe.object_name), header: dir.join("sysy_rt.h"), dir };
    if rt.object.is_file() && rt.header.is_file() {
        return Ok(rt);
    }
    std::fs::create_dir_all(&rt.dir).map_err(|source| ToolchainError::Io {
        action: "cannot create directory",
        path: rt.dir.clone(),
        source,
    })?;
    write_atomically(&rt.header, RUNTIME_H.as_bytes())?;
    let source = rt.dir.join(recipe.source_name);
    write_atomically(&source, recipe.source.as_bytes())?;

    let object = temp_file_in(&rt.dir, ".o")?;
    let mut args: Vec<std::ffi::OsString> = (recipe.cflags)().into_iter().map(Into::into).collect();
    if recipe.compile_only {
        args.push("-c".into());
    }
    args.extend(["-I".into(), rt.dir.clone().into_os_string(), source.into_os_string()]);
    args.extend(["-o".into(), object.path().into()]);
    toolchain::run_tool(gcc, &args, None)?;
    persist(object, &rt.object)?;
    Ok(rt)
}

/// Hex digest identifying one build (see the module documentation).
fn cache_key(recipe: &Recipe, gcc: &Path) -> Result<String, ToolchainError> {
    let version = toolchain::run_tool(gcc, &["--version".into()], None)?.stdout;
    let gcc_path = std::fs::canonicalize(gcc).unwrap_or_else(|_| gcc.to_path_buf());
    let mut hasher = blake3::Hasher::new();
    // Each part is length-prefixed so that no two different inputs hash the same stream.
    let mut part = |bytes: &[u8]| {
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    part(recipe.cache_format.as_bytes());
    part(recipe.source.as_bytes());
    part(RUNTIME_H.as_bytes());
    part((recipe.cflags)().join(" ").as_bytes());
    part(gcc_path.as_os_str().as_encoded_bytes());
    part(&version);
    Ok(hasher.finalize().to_hex()[..24].to_string())
}

fn temp_file_in(dir: &Path, suffix: &str) -> Result<tempfile::NamedTempFile, ToolchainError> {
    tempfile::Builder::new().prefix(".tmp-").suffix(suffix).tempfile_in(dir).map_err(|source| ToolchainError::Io {
        action: "cannot create a temporary file in",
        path: dir.to_path_buf(),
        source,
    })
}

fn persist(file: tempfile::NamedTempFile, to: &Path) -> Result<(), ToolchainError> {
    file.persist(to).map(drop).map_err(|e| ToolchainError::Io {
        action: "cannot rename a temporary file to",
        path: to.to_path_buf(),
        source: e.error,
    })
}

/// Writes `bytes` to `path` through a temporary file and a rename, unless the file exists.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ToolchainError> {
    if path.is_file() {
        return Ok(());
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut file = temp_file_in(dir, "")?;
    std::io::Write::write_all(&mut file, bytes).map_err(|source| ToolchainError::Io {
        action: "cannot write",
        path: file.path().to_path_buf(),
        source,
    })?;
    persist(file, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cflags_are_the_target_flags_at_o2() {
        assert_eq!(runtime_cflags(), ["-O2", "-marm", "-march=armv7ve", "-mfpu=vfpv4", "-mfloat-abi=hard"]);
    }

    #[test]
    fn header_declares_every_runtime_function_the_source_defines() {
        for name in [
            "getint",
            "getch",
            "getfloat",
            "getarray",
            "getfarray",
            "putint",
            "putch",
            "putfloat",
            "putarray",
            "putfarray",
            "putf",
            "_sysy_starttime",
            "_sysy_stoptime",
        ] {
            let call = format!("{name}(");
            assert!(RUNTIME_H.contains(&call), "header lacks {name}");
            assert!(RUNTIME_C.contains(&call), "source lacks {name}");
        }
    }

    /// The freestanding object is what a static linker needs and nothing more: one ELF
    /// relocatable whose only undefined symbol is `main`, whose global symbols are the runtime
    /// functions and `_start`, and whose relocations are the five plain static ARM kinds.
    #[test]
    fn freestanding_object_is_self_contained() {
        use object::{Object, ObjectSection, ObjectSymbol, RelocationFlags, SectionKind, elf};
        let Ok(gcc) = toolchain::arm_gcc() else {
            eprintln!("note: skipping: no ARM cross gcc");
            return;
        };
        let root = tempfile::tempdir().expect("temp dir");
        let rt = build_freestanding_runtime(root.path(), &gcc).expect("build");
        assert!(rt.dir.starts_with(root.path().join("runtime-free")));
        let data = std::fs::read(&rt.object).expect("object");
        let file = object::File::parse(&*data).expect("an ELF object");
        assert_eq!(file.kind(), object::ObjectKind::Relocatable);
        assert_eq!(file.architecture(), object::Architecture::Arm);

        let name = |s: &object::Symbol<'_, '_>| s.name().expect("symbol name").to_string();
        let undefined: Vec<String> =
            file.symbols().filter(|s| s.is_undefined() && !s.name().unwrap_or("").is_empty()).map(|s| name(&s)).collect();
        assert_eq!(undefined, ["main"]);
        let mut globals: Vec<String> = file.symbols().filter(|s| s.is_global() && s.is_definition()).map(|s| name(&s)).collect();
        globals.sort();
        assert_eq!(
            globals,
            [
                "_start",
                "_sysy_starttime",
                "_sysy_stoptime",
                "getarray",
                "getch",
                "getfarray",
                "getfloat",
                "getint",
                "putarray",
                "putch",
                "putf",
                "putfarray",
                "putfloat",
                "putint"
            ]
        );

        let allowed = [
            elf::R_ARM_CALL,
            elf::R_ARM_JUMP24,
            elf::R_ARM_MOVW_ABS_NC,
            elf::R_ARM_MOVT_ABS,
            elf::R_ARM_ABS32,
        ];
        let mut relocations = 0;
        for section in file.sections() {
            let section_name = section.name().unwrap_or("?").to_string();
            assert!(!section_name.starts_with(".ARM.exidx"), "unwind table {section_name}");
            assert_ne!(section.kind(), SectionKind::Tls, "thread-local data in {section_name}");
            for (_, relocation) in section.relocations() {
                let RelocationFlags::Elf { r_type } = relocation.flags() else { panic!("not an ELF relocation") };
                assert!(allowed.contains(&r_type), "relocation type {r_type} in {section_name}");
                relocations += 1;
            }
        }
        assert!(relocations > 0);
    }

    /// Builds into a fresh cache root from several threads at once (each without the
    /// in-process memo), then checks that everybody got the same complete object and that no
    /// temporary file was left behind.
    #[test]
    fn concurrent_builds_agree_and_leave_no_temporaries() {
        let Ok(gcc) = toolchain::arm_gcc() else {
            eprintln!("note: skipping: no ARM cross gcc");
            return;
        };
        let root = tempfile::tempdir().expect("temp dir");
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..3).map(|_| s.spawn(|| build_runtime(root.path(), &gcc))).collect();
            handles.into_iter().map(|h| h.join().expect("builder thread")).collect()
        });
        let first = results[0].as_ref().expect("build").clone();
        for r in &results {
            assert_eq!(r.as_ref().expect("build"), &first);
        }
        let object = std::fs::read(&first.object).expect("object");
        assert_eq!(&object[..4], b"\x7fELF");
        let names: Vec<String> = std::fs::read_dir(&first.dir)
            .expect("cache dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(sorted, ["sysy_rt.c", "sysy_rt.h", "sysy_rt.o"]);
        // A second build finds the cached object and does not rewrite it.
        let mtime = std::fs::metadata(&first.object).and_then(|m| m.modified()).expect("mtime");
        assert_eq!(build_runtime(root.path(), &gcc).expect("rebuild"), first);
        assert_eq!(std::fs::metadata(&first.object).and_then(|m| m.modified()).expect("mtime"), mtime);
    }
}
