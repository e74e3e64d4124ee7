//! The run cache of `harness report speedup`: the judged outcome of every assembly text it
//! has run, on disk, so that a long suite can be measured over several sittings.
//!
//! Compiling a configuration takes milliseconds; running it on a performance case takes up to
//! minutes, and a leave-one-out sweep of the performance suite is hours of qemu time. Running
//! the same assembly on the same input with the same runtime library, plugin and time limit
//! gives the same counts (the plugin is exact and the programs are deterministic), so an
//! outcome is stored under a key made of exactly those inputs:
//!
//! `blake3(assembly text, stdin, expected output, runtime library build, plugin file, time limit)`
//!
//! Every configuration is still compiled on every sitting, so a compiler change that alters
//! the assembly simply misses the cache; one that does not is free. A killed run loses only
//! the texts in flight. Entries are small JSON files written through a temporary file and a
//! rename, so concurrent workers and a kill never leave a half-written entry; an unreadable
//! entry is a miss.

use super::Judged;
use crate::conform::Verdict;
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The cache directory and the identity of the run environment.
pub struct RunCache {
    dir: PathBuf,
    /// Hash of everything besides the assembly and the case that decides an outcome.
    environment: blake3::Hash,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    verdict: String,
    reason: String,
    insns: Option<u64>,
    cycles: Option<u64>,
}

/// The verdict whose `Display` name (as stored) is `name`.
fn verdict_from(name: &str) -> Option<Verdict> {
    [Verdict::Pass, Verdict::Fail, Verdict::Error, Verdict::Timeout].into_iter().find(|v| v.to_string() == name)
}

impl RunCache {
    /// A cache in `dir` (created if needed) for runs with this runtime library, plugin and
    /// time limit.
    pub fn open(dir: &Path, timeout: Duration) -> Result<RunCache, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let runtime = sysyc::runtime::library::native_runtime().map_err(|e| format!("the runtime library: {e}"))?;
        let plugin = sysy_cost_model::locate_plugin().map_err(|e| format!("the cost plugin: {e}"))?;
        let plugin_bytes = std::fs::read(&plugin).map_err(|e| format!("cannot read {}: {e}", plugin.display()))?;
        Ok(Self::with_environment(dir, &[runtime.dir.display().to_string().as_bytes(), &plugin_bytes], Some(timeout)))
    }

    /// A cache whose environment is described by `parts` (for tests).
    fn with_environment(dir: &Path, parts: &[&[u8]], timeout: Option<Duration>) -> RunCache {
        let mut h = blake3::Hasher::new();
        for part in parts {
            h.update(&(part.len() as u64).to_le_bytes());
            h.update(part);
        }
        h.update(&timeout.map_or(u128::MAX, |t| t.as_nanos()).to_le_bytes());
        RunCache { dir: dir.to_path_buf(), environment: h.finalize() }
    }

    /// The key of running `asm` on `stdin`, judged against `expected`.
    pub fn key(&self, asm: &str, stdin: &[u8], expected: &[u8]) -> String {
        let mut h = blake3::Hasher::new();
        h.update(self.environment.as_bytes());
        for part in [asm.as_bytes(), stdin, expected] {
            h.update(&(part.len() as u64).to_le_bytes());
            h.update(part);
        }
        h.finalize().to_hex().to_string()
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// The stored outcome of `key`, if any.
    pub fn get(&self, key: &str) -> Option<Judged> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        let e: Entry = serde_json::from_str(&text).ok()?;
        let cost = match (e.insns, e.cycles) {
            (Some(i), Some(c)) => Some((i, c)),
            _ => None,
        };
        Some((verdict_from(&e.verdict)?, e.reason, cost))
    }

    /// Stores the outcome of `key`.
    pub fn put(&self, key: &str, judged: &Judged) -> Result<(), String> {
        let (verdict, reason, cost) = judged;
        let entry = Entry {
            verdict: verdict.to_string(),
            reason: reason.clone(),
            insns: cost.map(|c| c.0),
            cycles: cost.map(|c| c.1),
        };
        let text = serde_json::to_string(&entry).map_err(|e| e.to_string())?;
        let context = |e: std::io::Error| format!("cannot write the run cache in {}: {e}", self.dir.display());
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir).map_err(context)?;
        tmp.write_all(text.as_bytes()).map_err(context)?;
        tmp.persist(self.path(key)).map_err(|e| context(e.error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_round_trip_under_keys_of_every_input() {
        let dir = tempfile::tempdir().expect("tempdir");
        let limit = Some(Duration::from_secs(600));
        let cache = RunCache::with_environment(dir.path(), &[b"runtime-a", b"plugin"], limit);
        let key = cache.key("main: bx lr", b"3\n", b"0\n");
        assert_eq!(cache.get(&key), None);
        cache.put(&key, &(Verdict::Pass, String::new(), Some((1234, 2345)))).expect("put");
        assert_eq!(cache.get(&key), Some((Verdict::Pass, String::new(), Some((1234, 2345)))));
        let failed = cache.key("main: bx lr", b"4\n", b"0\n");
        cache.put(&failed, &(Verdict::Timeout, "time limit exceeded".into(), None)).expect("put");
        assert_eq!(cache.get(&failed), Some((Verdict::Timeout, "time limit exceeded".into(), None)));

        // Each input of the key changes it: assembly, input, expected output, environment,
        // time limit.
        let others = [
            cache.key("main: mov r0, #0", b"3\n", b"0\n"),
            cache.key("main: bx lr", b"3\n", b"1\n"),
            RunCache::with_environment(dir.path(), &[b"runtime-b", b"plugin"], limit).key("main: bx lr", b"3\n", b"0\n"),
            RunCache::with_environment(dir.path(), &[b"runtime-a", b"plugin"], None).key("main: bx lr", b"3\n", b"0\n"),
        ];
        for other in others {
            assert_ne!(other, key);
            assert_eq!(cache.get(&other), None);
        }
    }

    #[test]
    fn a_damaged_entry_is_a_miss() {
        let dir = tempfile::tempdir().expect("tempdir");
        let cache = RunCache::with_environment(dir.path(), &[b"x"], None);
        let key = cache.key("a", b"", b"");
        std::fs::write(cache.path(&key), "{\"verdict\":\"PA").expect("write");
        assert_eq!(cache.get(&key), None);
        std::fs::write(cache.path(&key), "{\"verdict\":\"MAYBE\",\"reason\":\"\",\"insns\":1,\"cycles\":1}").expect("write");
        assert_eq!(cache.get(&key), None);
    }
}
