//! Records the source revision the harness (and the compiler it links) is built from, as
//! `SYSYC_REVISION` for campaign reports: `$SYSYC_REVISION` when set (an image built without
//! `.git`), else `git describe --always --dirty --tags`, else `unknown`.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-env-changed=SYSYC_REVISION");
    let revision = match std::env::var("SYSYC_REVISION") {
        Ok(r) if !r.trim().is_empty() => r.trim().to_string(),
        _ => {
            // Rebuild when a commit, a checkout or the index (dirty or not) changes.
            for file in ["HEAD", "logs/HEAD", "index"] {
                if let Some(path) = git(&["rev-parse", "--git-path", file]) {
                    println!("cargo:rerun-if-changed={path}");
                }
            }
            git(&["describe", "--always", "--dirty", "--tags"]).unwrap_or_else(|| "unknown".into())
        }
    };
    println!("cargo:rustc-env=SYSYC_REVISION={revision}");
}
