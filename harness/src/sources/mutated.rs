//! Mutational seeds (`--seeds DIR`, repeatable; by default the competition suites and
//! `corpus/`): a share of a campaign's programs are variants of real programs, made by
//! [`sysy_generator::mutate`] and judged by the reference interpreter.
//!
//! # A variant
//! Program `i` (generator seed `s`, see `campaign::program_seed`) is a variant with
//! probability `share`, decided from `s` alone ([`Mutated::is_variant`]). Its parent is drawn
//! from `s`: a seed file, or (one time in two, when there is one) an entry of the pool. The
//! parent's reference run (with coverage, [`VARIANT_STEPS`] steps) is made once and
//! memoised; a parent that traps or runs too long is never used. Up to [`ATTEMPTS`] variants
//! are drawn, each from its own stream; each is printed, parsed again (so its spans are its
//! own) and run by the reference interpreter: a trap, the step limit or a timeout discards it
//! (counted by kind in its origin), the first that ends is the program and its run the truth.
//! When every attempt is discarded the program is generated as usual. `programs.csv`'s
//! `origin` column records `parent=FILE|pool:J;ops=OPS;stream=N;discarded=KINDS`: the parent
//! and the stream reproduce the variant.
//!
//! # The pool, reproducibly
//! After its check, a variant is kept in the pool when it was judged and raised its parent's
//! statement coverage, or made a pass or back-end stage change (the campaign's swarm-guide
//! feedback, `guide::changed_by`) that neither its parent nor the parent's earlier variants
//! made. Kept variants go to `pool/J.sy` (and `.in`), every variant's decision to `pool.csv`,
//! before its line in `programs.csv`. The pool of program `i` holds the last [`POOL_SIZE`]
//! kept variants among the programs of the shard before the batch before `i`'s (batches of
//! [`BATCH`] positions, as the guide): a worker waits until those are recorded. So the
//! programs are a function of the seed and options whatever `--jobs`, and `--resume` reads
//! the same pool back from `pool.csv` and `pool/`.

use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use sysy_check::refinterp::{self, RefError};
use sysy_check::subject::Limits;
use sysy_generator::mutate::{self, Coverage};
use sysy_generator::{Choices, GeneratedProgram, SeededChoices};
use sysyc::frontend::{self, LineIndex};
use sysyc::runtime::Outcome;

/// Program `index + k·count` for `k = 0, 1, ...`: the campaign's shard, its positions.
#[derive(Clone, Copy, Debug)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    fn nth(self, k: u64) -> Option<u64> {
        k.checked_mul(self.count)?.checked_add(self.index)
    }
}

/// The seed directories of a campaign and the share of variants (saved in `campaign.json`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SeedOptions {
    pub dirs: Vec<PathBuf>,
    pub share: f64,
}

/// Default share of variants among a campaign's programs.
pub const DEFAULT_SHARE: f64 = 0.25;
/// Kept variants the pool offers as parents.
pub const POOL_SIZE: usize = 64;
/// Positions per batch of the pool (its content changes between batches).
pub const BATCH: u64 = 8;
/// Variants drawn per program before falling back to a generated program.
pub const ATTEMPTS: u64 = 4;
/// Step budget of a parent's and a variant's reference run.
pub const VARIANT_STEPS: u64 = 5_000_000;

/// The `.sy` files under `dirs` (recursively, each directory's in name order). A directory
/// that cannot be read, or seeds without any `.sy` file, are errors.
pub fn seed_files(dirs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("reading the seed directory {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out)?;
            } else if p.extension().is_some_and(|e| e == "sy") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    for dir in dirs {
        walk(dir, &mut files)?;
    }
    if files.is_empty() {
        bail!("the seed directories {} hold no .sy file", dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", "));
    }
    Ok(files)
}

/// A program variants are made of, with its reference run.
struct Parent {
    name: String,
    program: GeneratedProgram,
    missed: Coverage,
    coverage: f64,
    /// The passes that changed it (pool entries; unknown for seed files).
    changed: BTreeSet<String>,
}

/// Where a variant came from (see the module documentation).
#[derive(Clone, Debug, Default)]
pub struct Origin {
    pub parent: String,
    pub operators: String,
    pub stream: u64,
    /// Per discarded attempt, why (a trap kind, `timeout`, `ill-typed`).
    pub discarded: Vec<String>,
    parent_coverage: f64,
    /// What the parent and its earlier variants changed.
    parent_changed: BTreeSet<String>,
}

impl Origin {
    /// The `origin` column of `programs.csv`.
    pub fn record(&self) -> String {
        format!("parent={};ops={};stream={};discarded={}", self.parent, self.operators, self.stream, self.discarded.join(","))
    }
}

/// What one variant program became.
pub struct Variant {
    /// `None`: every attempt was discarded (the campaign generates the program instead).
    pub program: Option<GeneratedProgram>,
    pub origin: Origin,
}

/// One line of `pool.csv`.
#[derive(Clone, Debug)]
struct Decision {
    kept: bool,
    parent: String,
    changed: BTreeSet<String>,
}

struct State {
    decisions: BTreeMap<u64, Decision>,
    /// Kept variants already loaded as parents.
    loaded: HashMap<u64, Option<Arc<Parent>>>,
    aborted: bool,
}

/// The mutational seed source of one campaign session, shared by its workers.
pub struct Mutated {
    files: Vec<PathBuf>,
    share: f64,
    campaign_seed: u64,
    /// The campaign's generator seed of a program number (`campaign::program_seed`).
    program_seed: fn(u64, u64) -> u64,
    shard: Shard,
    dir: PathBuf,
    limits: Limits,
    /// Seed files' parents, once screened (`None`: unusable).
    screened: Mutex<HashMap<usize, Option<Arc<Parent>>>>,
    state: Mutex<State>,
    ready: Condvar,
    file: Mutex<File>,
}

const POOL_HEADER: &str = "program,kept,parent,changed\n";

impl Mutated {
    /// The source of the campaign in `dir` over the seed directories `dirs`, keeping the
    /// pool decisions of the `done` programs (a resume).
    pub fn open(
        dir: &Path,
        options: &SeedOptions,
        (campaign_seed, program_seed): (u64, fn(u64, u64) -> u64),
        shard: Shard,
        timeout: Duration,
        done: &BTreeSet<u64>,
    ) -> Result<Mutated> {
        let (dirs, share) = (&options.dirs, options.share);
        let files = seed_files(dirs)?;
        let path = dir.join("pool.csv");
        let mut decisions = BTreeMap::new();
        if path.exists() {
            let mut reader = csv::ReaderBuilder::new().flexible(true).from_path(&path).with_context(|| format!("reading {}", path.display()))?;
            for r in reader.records().map_while(Result::ok) {
                let Some(program) = r.get(0).and_then(|p| p.parse().ok()) else { continue };
                if done.contains(&program) && r.len() == 4 {
                    let changed = r[3].split_whitespace().map(str::to_string).collect();
                    decisions.insert(program, Decision { kept: &r[1] == "1", parent: r[2].to_string(), changed });
                }
            }
        }
        std::fs::create_dir_all(dir.join("pool")).with_context(|| format!("creating {}/pool", dir.display()))?;
        let fresh = !path.exists();
        let mut file = OpenOptions::new().create(true).append(true).open(&path).with_context(|| format!("opening {}", path.display()))?;
        file.write_all(if fresh { POOL_HEADER.as_bytes() } else { b"\n" })?;
        Ok(Mutated {
            files,
            share,
            campaign_seed,
            program_seed,
            shard,
            dir: dir.to_path_buf(),
            limits: Limits { timeout, max_steps: VARIANT_STEPS },
            screened: Mutex::new(HashMap::new()),
            state: Mutex::new(State { decisions, loaded: HashMap::new(), aborted: false }),
            ready: Condvar::new(),
            file: Mutex::new(file),
        })
    }

    /// Whether the program of generator seed `seed` is a variant.
    pub fn is_variant(&self, seed: u64) -> bool {
        SeededChoices::new(seed ^ 0x6d75_7461_6e74).chance(self.share)
    }

    fn position(&self, program: u64) -> u64 {
        program.saturating_sub(self.shard.index) / self.shard.count
    }

    /// Program `index` (generator seed `seed`, a variant by [`Mutated::is_variant`]).
    pub fn variant(&self, index: u64, seed: u64) -> Result<Variant> {
        let mut choices = SeededChoices::new(seed ^ 0x7061_7265_6e74);
        let pool = self.pool_for(index)?;
        let mut parent = None;
        for _ in 0..8 {
            let candidate = if !pool.is_empty() && choices.chance(0.5) {
                let j = pool[choices.below(pool.len() as u64) as usize];
                self.pool_parent(j)
            } else {
                self.seed_parent(choices.below(self.files.len() as u64) as usize)
            };
            if candidate.is_some() {
                parent = candidate;
                break;
            }
        }
        let Some(parent) = parent else {
            return Ok(Variant { program: None, origin: Origin { parent: "-".into(), operators: "-".into(), ..Origin::default() } });
        };
        let mut origin = Origin {
            parent: parent.name.clone(),
            operators: "-".into(),
            parent_coverage: parent.coverage,
            parent_changed: self.changed_so_far(&parent, index),
            ..Origin::default()
        };
        for attempt in 0..ATTEMPTS {
            let stream = choices.below(u64::MAX);
            origin.stream = stream;
            let mutant = mutate::mutate(&parent.program.unit, Some(&parent.missed), stream);
            origin.operators = mutant.operators();
            let source = sysyc::frontend::pretty::print(&mutant.unit);
            let name = format!("variant-{index}-{attempt}.sy");
            let Ok(mut program) = GeneratedProgram::from_source(Path::new(&name), source, parent.program.stdin.clone()) else {
                origin.discarded.push("ill-typed".into());
                continue;
            };
            match self.reference(&program) {
                Ok((outcome, coverage)) => {
                    program.seed = Some(seed);
                    program.coverage = Some(coverage.fraction());
                    program.reference = Some(outcome);
                    return Ok(Variant { program: Some(program), origin });
                }
                Err(why) => origin.discarded.push(why),
            }
        }
        Ok(Variant { program: None, origin })
    }

    /// The reference run of `p` with coverage, or why it is discarded.
    fn reference(&self, p: &GeneratedProgram) -> Result<(Outcome, refinterp::Coverage), String> {
        let lines = LineIndex::new(&p.source);
        let Ok(program) = frontend::analyze(&p.unit, &lines) else { return Err("ill-typed".into()) };
        match refinterp::run_with_coverage(&program, &lines, &p.stdin, &self.limits.truth_config()) {
            Ok((outcome, coverage)) => match &outcome.trap {
                None => Ok((outcome, coverage)),
                Some(trap) => Err(trap.kind.slug().to_string()),
            },
            Err(RefError::TimedOut { .. }) => Err("timeout".into()),
            Err(e) => Err(format!("internal: {e}").replace([',', ';'], " ")),
        }
    }

    fn make_parent(&self, name: String, program: GeneratedProgram, changed: BTreeSet<String>) -> Option<Arc<Parent>> {
        let (_, coverage) = self.reference(&program).ok()?;
        let missed = Coverage { missed: coverage.missed().collect() };
        Some(Arc::new(Parent { name, program, missed, coverage: coverage.fraction(), changed }))
    }

    /// Seed file `k` as a parent (screened once).
    fn seed_parent(&self, k: usize) -> Option<Arc<Parent>> {
        if let Some(p) = self.screened.lock().ok()?.get(&k) {
            return p.clone();
        }
        let path = &self.files[k];
        let name = path.display().to_string().replace([',', ';'], "_");
        let parent = crate::sources::corpus::read(path).ok().and_then(|p| self.make_parent(name, p, BTreeSet::new()));
        self.screened.lock().ok()?.insert(k, parent.clone());
        parent
    }

    /// The kept variant of program `j` as a parent.
    fn pool_parent(&self, j: u64) -> Option<Arc<Parent>> {
        if let Some(p) = self.state.lock().ok()?.loaded.get(&j) {
            return p.clone();
        }
        let changed = self.state.lock().ok()?.decisions.get(&j).map(|d| d.changed.clone()).unwrap_or_default();
        let path = self.dir.join("pool").join(format!("{j}.sy"));
        let parent = crate::sources::corpus::read(&path).ok().and_then(|p| self.make_parent(format!("pool:{j}"), p, changed));
        self.state.lock().ok()?.loaded.insert(j, parent.clone());
        parent
    }

    /// What `parent` and its variants recorded before `index`'s pool boundary changed.
    fn changed_so_far(&self, parent: &Parent, index: u64) -> BTreeSet<String> {
        let mut changed = parent.changed.clone();
        let boundary = self.boundary(index);
        if let Ok(state) = self.state.lock() {
            for (_, d) in state.decisions.iter().filter(|(j, d)| self.position(**j) < boundary && d.parent == parent.name) {
                changed.extend(d.changed.iter().cloned());
            }
        }
        changed
    }

    /// The first position whose decisions program `index` does not see.
    fn boundary(&self, index: u64) -> u64 {
        (self.position(index) / BATCH).saturating_sub(1) * BATCH
    }

    /// The kept variants program `index` may take as parents (waits until every variant
    /// before its boundary is recorded).
    fn pool_for(&self, index: u64) -> Result<Vec<u64>> {
        let boundary = self.boundary(index);
        let needed: Vec<u64> = (0..boundary)
            .filter_map(|k| self.shard.nth(k))
            .filter(|&j| self.is_variant((self.program_seed)(self.campaign_seed, j)))
            .collect();
        let mut state = self.state.lock().map_err(|_| anyhow::anyhow!("a worker panicked"))?;
        while !state.aborted && !needed.iter().all(|j| state.decisions.contains_key(j)) {
            state = self.ready.wait(state).map_err(|_| anyhow::anyhow!("a worker panicked"))?;
        }
        let kept: Vec<u64> = needed.iter().copied().filter(|j| state.decisions.get(j).is_some_and(|d| d.kept)).collect();
        Ok(kept[kept.len().saturating_sub(POOL_SIZE)..].to_vec())
    }

    /// Records the check of variant program `index` (see the module documentation); `changed`
    /// are the passes and stages that changed it, `checked` whether it was judged.
    pub fn record(&self, index: u64, origin: &Origin, program: Option<&GeneratedProgram>, changed: &BTreeSet<String>, checked: bool) -> Result<()> {
        let raised = program.and_then(|p| p.coverage).is_some_and(|c| c > origin.parent_coverage + 1e-9);
        let kept = program.is_some() && checked && (raised || !changed.is_subset(&origin.parent_changed));
        if let (true, Some(p)) = (kept, program) {
            let stem = self.dir.join("pool").join(index.to_string());
            std::fs::write(stem.with_extension("sy"), &p.source).with_context(|| format!("writing {}.sy", stem.display()))?;
            std::fs::write(stem.with_extension("in"), &p.stdin).with_context(|| format!("writing {}.in", stem.display()))?;
        }
        let names = changed.iter().cloned().collect::<Vec<_>>().join(" ");
        let line = format!("{index},{},{},{names}\n", u8::from(kept), origin.parent);
        self.file.lock().map_err(|_| anyhow::anyhow!("a worker panicked"))?.write_all(line.as_bytes()).context("writing pool.csv")?;
        if let Ok(mut state) = self.state.lock() {
            state.decisions.insert(index, Decision { kept, parent: origin.parent.clone(), changed: changed.clone() });
        }
        self.ready.notify_all();
        Ok(())
    }

    /// Wakes every waiting worker for good (the campaign is stopping on an error).
    pub fn abort(&self) {
        if let Ok(mut state) = self.state.lock() {
            state.aborted = true;
        }
        self.ready.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysyc::runtime::TrapKind;

    /// A program-seed function for the tests (the campaign passes its own).
    fn seed_of(seed: u64, index: u64) -> u64 {
        seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(index.wrapping_mul(0xbf58_476d_1ce4_e5b9))
    }

    /// A seed whose variants often trap: indexing by loop counters, division by input.
    const SEED: &str = "int a[8];
int div(int x, int y) { return x / y; }
int main() {
    int n = getint(), i = 0, s = 0;
    while (i < 8) {
        a[i] = i * n;
        i = i + 1;
    }
    i = 0;
    while (i < 8) {
        s = s + div(a[i], n + 1);
        if (s > 100000) { s = 0; }
        i = i + 1;
    }
    putint(s);
    return 0;
}
";

    /// The source of a campaign in `dir` over `seeds` (created with the one seed program).
    fn source(dir: &Path, seeds: &Path) -> Mutated {
        let seeds = seeds.to_path_buf();
        std::fs::create_dir_all(&seeds).unwrap();
        std::fs::write(seeds.join("s.sy"), SEED).unwrap();
        std::fs::write(seeds.join("s.in"), "3\n").unwrap();
        let options = SeedOptions { dirs: vec![seeds], share: 1.0 };
        Mutated::open(dir, &options, (9, seed_of), Shard { index: 0, count: 1 }, Duration::from_secs(10), &BTreeSet::new()).unwrap()
    }

    #[test]
    fn bad_seed_directories_are_clear_errors() {
        let missing = seed_files(&[PathBuf::from("/nonexistent/seeds")]).unwrap_err();
        assert!(format!("{missing:#}").contains("reading the seed directory /nonexistent/seeds"), "{missing:#}");
        let empty = tempfile::tempdir().unwrap();
        std::fs::write(empty.path().join("notes.txt"), "x").unwrap();
        let none = seed_files(&[empty.path().to_path_buf()]).unwrap_err();
        assert!(none.to_string().contains("hold no .sy file"), "{none}");
    }

    #[test]
    fn variants_are_deterministic_judged_and_their_discards_counted_by_kind() {
        let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let seeds = one.path().join("seeds");
        let (a, b) = (source(one.path(), &seeds), source(two.path(), &seeds));
        let kinds: BTreeSet<&str> = TrapKind::ALL.iter().map(|k| k.slug()).chain(["timeout", "ill-typed"]).collect();
        let (mut judged, mut discarded) = (0, BTreeMap::<String, u32>::new());
        // Programs of the first two batches: their pool is empty, nothing to wait for.
        for index in 0..2 * BATCH {
            let seed = seed_of(9, index);
            let (x, y) = (a.variant(index, seed).unwrap(), b.variant(index, seed).unwrap());
            assert_eq!(x.origin.record(), y.origin.record(), "program {index}");
            assert_eq!(x.program.as_ref().map(|p| &p.source), y.program.as_ref().map(|p| &p.source));
            assert!(x.origin.record().contains("s.sy;ops="), "{}", x.origin.record());
            for why in &x.origin.discarded {
                assert!(kinds.contains(why.as_str()), "unknown discard kind {why}");
                *discarded.entry(why.clone()).or_default() += 1;
            }
            if let Some(p) = &x.program {
                judged += 1;
                let truth = p.reference.as_ref().expect("a variant's run is its truth");
                assert!(truth.trap.is_none());
                assert_eq!(p.stdin, b"3\n");
            }
        }
        assert!(judged >= 8, "{judged} of {} judged", 2 * BATCH);
        assert!(discarded.keys().any(|k| k == "out-of-bounds" || k == "div-by-zero"), "{discarded:?}");
    }

    #[test]
    fn kept_variants_become_parents_after_the_batch_boundary() {
        let dir = tempfile::tempdir().unwrap();
        let m = source(dir.path(), &dir.path().join("seeds"));
        let mut kept = 0;
        for index in 0..2 * BATCH {
            let v = m.variant(index, seed_of(9, index)).unwrap();
            // Every variant made a new pass change: all are kept (when judged).
            let changed: BTreeSet<String> = [format!("pass{index}")].into();
            m.record(index, &v.origin, v.program.as_ref(), &changed, true).unwrap();
            kept += u64::from(v.program.is_some());
        }
        assert!(kept > 0);
        assert_eq!(std::fs::read_dir(dir.path().join("pool")).unwrap().count() as u64, 2 * kept, ".sy and .in per kept variant");
        let pool = m.pool_for(3 * BATCH).unwrap();
        assert!(!pool.is_empty() && pool.iter().all(|&j| j < 2 * BATCH), "{pool:?}");
        // Program 3·BATCH sees the first two batches; a resumed source reads them back.
        let done: BTreeSet<u64> = (0..2 * BATCH).collect();
        let options = SeedOptions { dirs: vec![dir.path().join("seeds")], share: 1.0 };
        let again = Mutated::open(dir.path(), &options, (9, seed_of), Shard { index: 0, count: 1 }, Duration::from_secs(10), &done).unwrap();
        assert_eq!(again.pool_for(3 * BATCH).unwrap(), pool);
        let from_pool = (3 * BATCH..4 * BATCH).filter_map(|i| m.variant(i, seed_of(9, i)).ok()).filter(|v| v.origin.parent.starts_with("pool:")).count();
        assert!(from_pool > 0, "some variants of the pool's programs");
    }
}
