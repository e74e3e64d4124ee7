//! The plugin's arguments: one definition used by both the plugin (parsing)
//! and the harness (building QEMU's `-plugin` option), and the rule for
//! finding the plugin's shared library.
//!
//! QEMU 7.2 takes `-plugin /abs/path/libsysy_cost_plugin.so,key=value,...` and
//! passes each `key=value` to the plugin. Values cannot contain commas. Keys:
//!
//! * `out=PATH` (required): the counter file, created or truncated.
//! * `prog=0xLO-0xHI` (repeatable): a half-open range of program code;
//!   addresses outside every range count as runtime/libc.
//! * `mode=auto|heuristic` (default `auto`): `auto` reads ARM/Thumb mapping
//!   symbols from the guest executable and uses the heuristic only where they
//!   say nothing; `heuristic` ignores them (for testing the heuristic).
//! * `binary=PATH` (optional): the executable whose mapping symbols `auto`
//!   reads, instead of the one QEMU started. The fork server's children need
//!   it: QEMU started the loader, but the child runs the program it loaded.
//!
//! The same arguments, one per line, are what a guest hands the plugin when it
//! asks for a fresh count ([`RECOUNT_SYSCALL`]).

use std::path::{Path, PathBuf};

use crate::elf::ProgramRanges;

/// The system call number a guest makes to start a fresh count: `r0` holds a
/// file descriptor of a file with the new arguments, one `key=value` per line,
/// `r1` holds [`RECOUNT_MAGIC`] and `r2` the address where the counted code
/// starts. The plugin creates the new counter file at once and counts into it
/// every block translated from the first block at that address on; QEMU
/// answers `ENOSYS`, as for any number Linux does not define. The fork
/// server's loader makes this call in each child just before it jumps to the
/// program's entry.
pub const RECOUNT_SYSCALL: i64 = 0x5359;
/// The second argument of [`RECOUNT_SYSCALL`], so a stray call with the same
/// number cannot switch counters.
pub const RECOUNT_MAGIC: u64 = 0x636f_7374;

/// Environment variable naming the plugin's shared library explicitly.
pub const PLUGIN_ENV: &str = "SYSY_COST_PLUGIN";
/// File name cargo gives the plugin's shared library.
pub const PLUGIN_FILE_NAME: &str = "libsysy_cost_plugin.so";

/// How the plugin decides between ARM and Thumb.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ModeDetection {
    /// Mapping symbols where present, the heuristic elsewhere.
    #[default]
    Auto,
    /// The heuristic everywhere.
    Heuristic,
}

/// Everything the plugin is told on QEMU's command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginConfig {
    pub out: PathBuf,
    pub program: ProgramRanges,
    pub mode: ModeDetection,
    /// Where to read mapping symbols from (`None`: the executable QEMU runs).
    pub binary: Option<PathBuf>,
}

impl PluginConfig {
    pub fn new(out: impl Into<PathBuf>, program: ProgramRanges) -> PluginConfig {
        PluginConfig {
            out: out.into(),
            program,
            mode: ModeDetection::Auto,
            binary: None,
        }
    }

    /// Parses the `key=value` arguments QEMU hands the plugin.
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<PluginConfig, ArgError> {
        let mut out = None;
        let mut ranges = Vec::new();
        let mut mode = ModeDetection::Auto;
        let mut binary = None;
        for arg in args {
            let arg = arg.as_ref();
            let (key, value) = arg
                .split_once('=')
                .ok_or_else(|| ArgError::NotKeyValue(arg.to_string()))?;
            match key {
                "out" if value.is_empty() => {
                    return Err(ArgError::BadValue {
                        key: "out",
                        value: String::new(),
                    });
                }
                "out" => out = Some(PathBuf::from(value)),
                "prog" => ranges.push(parse_range(value)?),
                "binary" if value.is_empty() => {
                    return Err(ArgError::BadValue {
                        key: "binary",
                        value: String::new(),
                    });
                }
                "binary" => binary = Some(PathBuf::from(value)),
                "mode" => {
                    mode = match value {
                        "auto" => ModeDetection::Auto,
                        "heuristic" => ModeDetection::Heuristic,
                        _ => {
                            return Err(ArgError::BadValue {
                                key: "mode",
                                value: value.to_string(),
                            });
                        }
                    }
                }
                _ => return Err(ArgError::UnknownKey(key.to_string())),
            }
        }
        let out = out.ok_or(ArgError::MissingOut)?;
        Ok(PluginConfig {
            out,
            program: ProgramRanges::new(ranges),
            mode,
            binary,
        })
    }

    /// The `key=value` arguments for this configuration.
    pub fn to_args(&self) -> Result<Vec<String>, ArgError> {
        let out = self
            .out
            .to_str()
            .ok_or_else(|| ArgError::Unrepresentable(self.out.clone()))?;
        if out.is_empty() || out.contains(',') {
            return Err(ArgError::Unrepresentable(self.out.clone()));
        }
        let mut args = vec![format!("out={out}")];
        args.extend(
            self.program
                .ranges()
                .iter()
                .map(|(lo, hi)| format!("prog={lo:#x}-{hi:#x}")),
        );
        if self.mode == ModeDetection::Heuristic {
            args.push("mode=heuristic".to_string());
        }
        if let Some(binary) = &self.binary {
            let text = binary
                .to_str()
                .filter(|t| !t.is_empty() && !t.contains(','))
                .ok_or_else(|| ArgError::Unrepresentable(binary.clone()))?;
            args.push(format!("binary={text}"));
        }
        Ok(args)
    }
}

/// The value of QEMU's `-plugin` option: the library path then the arguments,
/// comma separated. The library path must not contain `,` or `=` (QEMU's
/// option parser would split it); it is made absolute if it is not.
pub fn plugin_option(library: &Path, config: &PluginConfig) -> Result<String, ArgError> {
    let library = std::path::absolute(library)
        .map_err(|_| ArgError::Unrepresentable(library.to_path_buf()))?;
    let lib = library
        .to_str()
        .ok_or_else(|| ArgError::Unrepresentable(library.clone()))?;
    if lib.contains(',') || lib.contains('=') {
        return Err(ArgError::Unrepresentable(library.clone()));
    }
    let mut option = lib.to_string();
    for arg in config.to_args()? {
        option.push(',');
        option.push_str(&arg);
    }
    Ok(option)
}

/// Finds the plugin's shared library: `$SYSY_COST_PLUGIN` if set, otherwise
/// `libsysy_cost_plugin.so` next to the running executable or one directory
/// up (cargo puts binaries in `target/<profile>/` and test binaries in
/// `target/<profile>/deps/`, and the workspace build puts the library in
/// `target/<profile>/`).
pub fn locate_plugin() -> Result<PathBuf, ArgError> {
    if let Some(explicit) = std::env::var_os(PLUGIN_ENV) {
        let path = PathBuf::from(explicit);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(ArgError::PluginNotFound(vec![path]))
        };
    }
    let exe = std::env::current_exe().map_err(|_| ArgError::PluginNotFound(Vec::new()))?;
    let tried: Vec<PathBuf> = exe
        .ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join(PLUGIN_FILE_NAME))
        .collect();
    tried
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or(ArgError::PluginNotFound(tried))
}

fn parse_range(value: &str) -> Result<(u64, u64), ArgError> {
    let bad = || ArgError::BadValue {
        key: "prog",
        value: value.to_string(),
    };
    let (lo, hi) = value.split_once('-').ok_or_else(bad)?;
    let number = |text: &str| {
        let digits = text
            .strip_prefix("0x")
            .or_else(|| text.strip_prefix("0X"))
            .ok_or_else(bad)?;
        u64::from_str_radix(digits, 16).map_err(|_| bad())
    };
    let (lo, hi) = (number(lo)?, number(hi)?);
    if lo >= hi {
        return Err(bad());
    }
    Ok((lo, hi))
}

/// A plugin argument that is malformed or cannot be expressed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ArgError {
    #[error("plugin argument `{0}` is not key=value")]
    NotKeyValue(String),
    #[error("unknown plugin argument key `{0}` (expected out, prog, mode, binary)")]
    UnknownKey(String),
    #[error("bad value `{value}` for plugin argument `{key}`")]
    BadValue { key: &'static str, value: String },
    #[error("plugin argument `out=PATH` is required")]
    MissingOut,
    #[error("path {0:?} cannot be passed to QEMU (not UTF-8, empty, or contains ',' or '=')")]
    Unrepresentable(PathBuf),
    #[error(
        "QEMU cost plugin not found (tried {0:?}); build it with `cargo build -p sysy-cost-plugin` or set SYSY_COST_PLUGIN"
    )]
    PluginNotFound(Vec<PathBuf>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let config = PluginConfig {
            out: PathBuf::from("/tmp/x.counts"),
            program: ProgramRanges::new([(0x10000, 0x10400), (0x20000, 0x20010)]),
            mode: ModeDetection::Heuristic,
            binary: Some(PathBuf::from("/w/prog")),
        };
        let args = config.to_args().expect("representable");
        assert_eq!(
            args,
            [
                "out=/tmp/x.counts",
                "prog=0x10000-0x10400",
                "prog=0x20000-0x20010",
                "mode=heuristic",
                "binary=/w/prog"
            ]
        );
        assert_eq!(PluginConfig::parse(&args), Ok(config.clone()));
        let option =
            plugin_option(Path::new("/opt/libsysy_cost_plugin.so"), &config).expect("option");
        assert_eq!(
            option,
            "/opt/libsysy_cost_plugin.so,out=/tmp/x.counts,prog=0x10000-0x10400,prog=0x20000-0x20010,mode=heuristic,binary=/w/prog"
        );
    }

    #[test]
    fn bad_arguments_are_reported() {
        assert_eq!(PluginConfig::parse::<&str>(&[]), Err(ArgError::MissingOut));
        assert_eq!(
            PluginConfig::parse(&["out"]),
            Err(ArgError::NotKeyValue("out".into()))
        );
        assert_eq!(
            PluginConfig::parse(&["out=/x", "speed=11"]),
            Err(ArgError::UnknownKey("speed".into()))
        );
        for bad in [
            "prog=10-20",
            "prog=0x20-0x10",
            "prog=0x10",
            "prog=0xzz-0x30",
        ] {
            assert!(
                matches!(
                    PluginConfig::parse(&["out=/x", bad]),
                    Err(ArgError::BadValue { key: "prog", .. })
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            PluginConfig::parse(&["out=/x", "binary="]),
            Err(ArgError::BadValue { key: "binary", .. })
        ));
        assert!(matches!(
            PluginConfig::parse(&["out=/x", "mode=magic"]),
            Err(ArgError::BadValue { key: "mode", .. })
        ));
        let comma = PluginConfig::new("/tmp/a,b", ProgramRanges::default());
        assert!(matches!(comma.to_args(), Err(ArgError::Unrepresentable(_))));
        let config = PluginConfig::new("/tmp/ok", ProgramRanges::default());
        assert!(matches!(
            plugin_option(Path::new("/x=y/lib.so"), &config),
            Err(ArgError::Unrepresentable(_))
        ));
    }
}
