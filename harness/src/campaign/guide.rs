//! Coverage-guided swarm: the campaign feeds back, per program, which passes and back-end
//! stages changed it and how much of it ran, and moves the swarm's knob probabilities
//! toward the generator features that make rarely-changed passes fire and raise executed
//! coverage.
//!
//! # Feedback
//! After each program the campaign appends a [`Feedback`] line to `feedback.csv`: the knobs
//! its swarm configuration switched on, the share of its statements the reference run
//! executed (the generator's probe), and the names of the IR passes and back-end stages that
//! changed it. A pass changed the program when some check ran it and it reported a change; a
//! back-end stage changed it when two checks with the same optimised IR and stage sets that
//! differ only in that stage produced different assembly (the `singles` and `leave-one-out`
//! strategies provide such pairs).
//!
//! # Weights, reproducibly
//! The shard's programs are taken in batches of `batch` (by their position in the shard).
//! The weights of batch `b` are a pure function ([`weights_from`]) of the feedback of the
//! [`WINDOW`] programs before batch `b - 1` — not `b`, so that with several workers the
//! programs of one batch can start while the last ones of the previous batch are still being
//! checked; a worker that would need a result not yet in waits for it. A window rather than
//! every earlier program: the guide then follows what the recent programs did, and a batch's
//! weights cost the same after hours as after minutes, as does the feedback kept in memory
//! (with every program, a night's campaign recomputed ever longer sums every eight programs
//! and held a few KiB per program it had checked). The programs of a campaign are
//! therefore a function of its seed and options only, whatever `--jobs`, and `--resume`
//! recomputes the same weights from `feedback.csv`. (A check the supervisor skipped after it
//! killed the process, or a run that timed out, can change what later programs see.)
//! `weights.csv` records, per batch, the probability that each knob is on.
//!
//! # Rule
//! A program's score is its executed coverage plus, for every pass or stage that changed it,
//! that pass's rarity weight (the inverse of the share of programs it changed so far,
//! normalised to sum to 1). A knob's effect is the difference of the mean score of the
//! programs that had it on and off, in units of the scores' standard deviation, shrunk
//! toward 0 while either group is small; its probability of being on becomes
//! `0.7 + 0.25·tanh(2·effect)` (between 0.45 and 0.95, so every knob stays off in a share of
//! the programs: a feature can mask a bug).

use super::Shard;
use super::check::CheckedProgram;
use super::records::Row;
use sysy_generator::config::SWARM_OFF;
use sysy_generator::{GeneratedProgram, Knobs, SwarmWeights};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use sysyc::config::Config;

/// Guidance settings, saved in `campaign.json`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct GuideOptions {
    /// Programs per batch (the weights change between batches).
    pub batch: u64,
}

/// The default batch size of a guided campaign.
pub const DEFAULT_BATCH: u64 = 8;

/// How many programs' feedback the weights of a batch are computed from (the last ones
/// before the batch before it).
pub const WINDOW: u64 = 2048;

/// What one program told the campaign.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Feedback {
    pub program: u64,
    /// Bit `i` set: knob `Knobs::NAMES[i]` was on (non-zero).
    pub knobs_on: u64,
    /// Executed statement coverage of the reference run (`None`: not probed).
    pub coverage: Option<f64>,
    /// IR passes and back-end stages that changed the program.
    pub changed: BTreeSet<String>,
    /// The program was judged (not discarded).
    pub checked: bool,
}

impl Feedback {
    /// The feedback of program `index` from its checks.
    pub fn of(index: u64, program: &GeneratedProgram, checked: &CheckedProgram) -> Feedback {
        let knobs_on = program.config.knobs.values().iter().enumerate().filter(|(_, v)| **v > 0).fold(0, |m, (i, _)| m | 1 << i);
        Feedback {
            program: index,
            knobs_on,
            // Rounded as `feedback.csv` stores it: a resumed campaign reads it back from
            // there, and must compute the same weights as one that ran straight through.
            coverage: program.coverage.map(|c| format!("{c:.4}").parse().unwrap_or(c)),
            changed: changed_by(&checked.rows),
            checked: checked.truth.is_some(),
        }
    }

    fn knob_on(&self, knob: usize) -> bool {
        self.knobs_on & (1 << knob) != 0
    }

    fn record(&self) -> Vec<String> {
        vec![
            self.program.to_string(),
            format!("{:x}", self.knobs_on),
            self.coverage.map(|c| format!("{c:.4}")).unwrap_or_default(),
            self.changed.iter().cloned().collect::<Vec<_>>().join(" "),
            u8::from(self.checked).to_string(),
        ]
    }

    fn from_record(r: &csv::StringRecord) -> Option<Feedback> {
        Some(Feedback {
            program: r.get(0)?.parse().ok()?,
            knobs_on: u64::from_str_radix(r.get(1)?, 16).ok()?,
            coverage: match r.get(2)? {
                "" => None,
                c => Some(c.parse().ok()?),
            },
            changed: r.get(3)?.split_whitespace().map(str::to_string).collect(),
            checked: r.get(4)? == "1",
        })
    }
}

const FEEDBACK_HEADER: [&str; 5] = ["program", "knobs_on", "coverage", "changed", "checked"];

/// The passes and back-end stages that changed a program, from its rows (see the module
/// documentation).
pub fn changed_by(rows: &[Row]) -> BTreeSet<String> {
    let mut changed = BTreeSet::new();
    let mut asm: BTreeMap<(&str, Vec<&str>), &str> = BTreeMap::new();
    let mut with_stages = Vec::new();
    for row in rows {
        let Ok(config) = row.config.parse::<Config>() else { continue };
        for (pass, flag) in config.pass_names().into_iter().zip(row.passes_changed.chars()) {
            if flag == '1' {
                changed.insert(pass.to_string());
            }
        }
        if row.asm_hash.is_empty() {
            continue;
        }
        let stages: Vec<&str> = config.stages.iter().map(|s| s.name()).collect();
        asm.insert((row.ir_hash.as_str(), stages.clone()), row.asm_hash.as_str());
        with_stages.push((row.ir_hash.as_str(), stages, row.asm_hash.as_str()));
    }
    for (ir, stages, hash) in &with_stages {
        for (i, stage) in stages.iter().enumerate() {
            let mut without = stages.clone();
            without.remove(i);
            if asm.get(&(*ir, without)).is_some_and(|other| other != hash) {
                changed.insert(stage.to_string());
            }
        }
    }
    changed
}

/// The weights after the feedback `results` (see the module documentation for the rule).
pub fn weights_from<'a>(results: impl IntoIterator<Item = &'a Feedback>) -> SwarmWeights {
    let results: Vec<&Feedback> = results.into_iter().filter(|f| f.checked).collect();
    let mut weights = SwarmWeights::default();
    if results.len() < 4 {
        return weights;
    }
    let n = results.len() as f64;
    let mut counts: BTreeMap<&str, f64> = BTreeMap::new();
    for f in &results {
        for name in &f.changed {
            *counts.entry(name).or_default() += 1.0;
        }
    }
    let rarity: BTreeMap<&str, f64> = counts.iter().map(|(name, c)| (*name, 1.0 / (c / n + 0.05))).collect();
    let total: f64 = rarity.values().sum();
    let mean_coverage = {
        let known: Vec<f64> = results.iter().filter_map(|f| f.coverage).collect();
        if known.is_empty() { 0.0 } else { known.iter().sum::<f64>() / known.len() as f64 }
    };
    let scores: Vec<f64> = results
        .iter()
        .map(|f| f.coverage.unwrap_or(mean_coverage) + f.changed.iter().map(|c| rarity[c.as_str()] / total).sum::<f64>())
        .collect();
    let mean = scores.iter().sum::<f64>() / n;
    let sd = (scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n).sqrt();
    if sd < 1e-9 {
        return weights;
    }
    for (knob, off) in weights.off.iter_mut().enumerate() {
        let (mut on_sum, mut on_n, mut off_sum, mut off_n) = (0.0, 0.0, 0.0, 0.0);
        for (f, s) in results.iter().zip(&scores) {
            if f.knob_on(knob) {
                on_sum += s;
                on_n += 1.0;
            } else {
                off_sum += s;
                off_n += 1.0;
            }
        }
        let smaller = f64::min(on_n, off_n);
        if smaller < 2.0 {
            continue;
        }
        let effect = (on_sum / on_n - off_sum / off_n) / sd * smaller / (smaller + 10.0);
        *off = 1.0 - ((1.0 - SWARM_OFF) + 0.25 * (2.0 * effect).tanh());
    }
    weights
}

/// The feedback and weights of one campaign session, shared by its workers.
pub struct Guide {
    dir: PathBuf,
    options: Option<GuideOptions>,
    shard: Shard,
    state: Mutex<State>,
    ready: Condvar,
    file: Mutex<File>,
}

struct State {
    /// The feedback still needed: of the programs in the windows of the batches to come.
    results: BTreeMap<u64, Feedback>,
    /// Weights per batch, once computed.
    weights: BTreeMap<u64, SwarmWeights>,
    aborted: bool,
}

/// The first position whose feedback the weights of batch `batch` or a later one read.
fn window_start(batch: u64, batch_size: u64) -> u64 {
    (batch.saturating_sub(1) * batch_size).saturating_sub(WINDOW)
}

pub fn feedback_path(dir: &Path) -> PathBuf {
    dir.join("feedback.csv")
}

pub fn weights_path(dir: &Path) -> PathBuf {
    dir.join("weights.csv")
}

/// Reads `feedback.csv` (the last line of each program; a cut last line is ignored).
pub fn read_feedback(dir: &Path) -> Result<BTreeMap<u64, Feedback>> {
    let mut out = BTreeMap::new();
    for_each_feedback(dir, |f| {
        out.insert(f.program, f);
    })?;
    Ok(out)
}

/// Hands every line of `feedback.csv` to `f` in file order (a program checked again after a
/// resume has a later line too); a cut last line is ignored. One line at a time: a night's
/// campaign writes hundreds of thousands.
pub fn for_each_feedback(dir: &Path, mut f: impl FnMut(Feedback)) -> Result<()> {
    let path = feedback_path(dir);
    if !path.exists() {
        return Ok(());
    }
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_path(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut record = csv::StringRecord::new();
    while reader.read_record(&mut record).unwrap_or(false) {
        if let Some(line) = Feedback::from_record(&record) {
            f(line);
        }
    }
    Ok(())
}

impl Guide {
    /// Opens the guide of the campaign in `dir`, keeping the feedback of the `done` programs.
    pub fn open(dir: &Path, options: Option<GuideOptions>, shard: Shard, done: &BTreeSet<u64>) -> Result<Guide> {
        let options = options.filter(|o| o.batch > 0);
        let position = |program: u64| program.saturating_sub(shard.index) / shard.count;
        let mut results = BTreeMap::new();
        let mut last = 0;
        for_each_feedback(dir, |f| {
            // An unguided campaign reads no feedback back.
            if options.is_none() || !done.contains(&f.program) {
                return;
            }
            last = last.max(position(f.program));
            results.insert(f.program, f);
            // What no batch to come reads goes as the file is read (see `window_start`; the
            // bound only rises with `last`), so a night's file is never held whole.
            if let Some(o) = &options
                && results.len() as u64 > 2 * (WINDOW + 4 * o.batch)
            {
                let keep_from = window_start((last / o.batch).saturating_sub(2), o.batch);
                results.retain(|&p, _| position(p) >= keep_from);
            }
        })?;
        let path = feedback_path(dir);
        let fresh = !path.exists();
        let mut file = OpenOptions::new().create(true).append(true).open(&path).with_context(|| format!("opening {}", path.display()))?;
        if fresh {
            file.write_all(&csv_line(FEEDBACK_HEADER.map(String::from).to_vec())?)?;
        } else {
            // A kill can leave a partial last line: start ours on a fresh one.
            file.write_all(b"\n")?;
        }
        let guide = Guide {
            dir: dir.to_path_buf(),
            options,
            shard,
            state: Mutex::new(State { results, weights: BTreeMap::new(), aborted: false }),
            ready: Condvar::new(),
            file: Mutex::new(file),
        };
        // What no batch to come reads goes.
        if let (Some(options), Ok(mut state)) = (&guide.options, guide.state.lock()) {
            let keep_from = window_start((last / options.batch).saturating_sub(2), options.batch);
            state.results.retain(|&p, _| guide.position(p) >= keep_from);
        }
        Ok(guide)
    }

    fn position(&self, program: u64) -> u64 {
        program.saturating_sub(self.shard.index) / self.shard.count
    }

    /// The weights for program `program`: waits until every result they depend on is in.
    pub fn weights_for(&self, program: u64) -> SwarmWeights {
        let Some(options) = &self.options else { return SwarmWeights::default() };
        let batch = self.position(program) / options.batch;
        if batch < 2 {
            return SwarmWeights::default();
        }
        let needed = (batch - 1) * options.batch;
        let Ok(mut state) = self.state.lock() else { return SwarmWeights::default() };
        loop {
            if let Some(w) = state.weights.get(&batch) {
                return w.clone();
            }
            let window = needed.saturating_sub(WINDOW)..needed;
            let prefix: Vec<&Feedback> =
                window.clone().filter_map(|k| self.shard.nth(k)).filter_map(|p| state.results.get(&p)).collect();
            if prefix.len() as u64 == window.end - window.start {
                let w = weights_from(prefix);
                state.weights.insert(batch, w.clone());
                // A worker asks for the weights of its batch before it checks its program, and
                // a batch's weights wait for the results up to the batch before it: no worker
                // can still ask for a batch three or more below this one, so what only earlier
                // windows read can go.
                let keep_from = window_start(batch.saturating_sub(2), options.batch);
                state.results.retain(|&p, _| self.position(p) >= keep_from);
                return w;
            }
            if state.aborted {
                return SwarmWeights::default();
            }
            state = match self.ready.wait(state) {
                Ok(s) => s,
                Err(_) => return SwarmWeights::default(),
            };
        }
    }

    /// Records a program's feedback (in `feedback.csv` first, then for the waiting workers).
    pub fn record(&self, feedback: Feedback) -> Result<()> {
        let line = csv_line(feedback.record())?;
        self.file
            .lock()
            .map_err(|_| anyhow::anyhow!("a worker panicked while writing feedback.csv"))?
            .write_all(&line)
            .context("writing feedback.csv")?;
        if self.options.is_some()
            && let Ok(mut state) = self.state.lock()
        {
            state.results.insert(feedback.program, feedback);
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

    /// `weights.csv`: per batch, its first program, how many programs' feedback its weights
    /// came from, and the probability of each knob being on. The batches of this session come
    /// from the weights computed; those of earlier sessions of the campaign, whose feedback is
    /// no longer kept, from the `weights.csv` they wrote.
    pub fn weights_csv(&self) -> Result<String> {
        let state = self.state.lock().map_err(|_| anyhow::anyhow!("a worker panicked"))?;
        let mut header = vec!["batch".to_string(), "first_program".into(), "programs_used".into()];
        header.extend(Knobs::NAMES.iter().map(|n| format!("on_{n}")));
        let mut out = csv_line(header.clone())?;
        let Some(options) = &self.options else { return Ok(String::from_utf8_lossy(&out).into_owned()) };
        let mut rows: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        if let Ok(mut reader) = csv::Reader::from_path(weights_path(&self.dir))
            && reader.headers().is_ok_and(|h| h.iter().eq(header.iter().map(String::as_str)))
        {
            for record in reader.records().map_while(Result::ok) {
                if let Some(batch) = record.get(0).and_then(|b| b.parse().ok()) {
                    rows.insert(batch, record.iter().map(str::to_string).collect());
                }
            }
        }
        // Batches 0 and 1 have the plain swarm's weights (none are computed for them).
        let last = state.results.keys().next_back().map(|&p| self.position(p) / options.batch);
        let plain = (0..2).filter(|&b| last.is_some_and(|last| b <= last));
        let computed = state.weights.iter().map(|(&batch, w)| (batch, w.clone()));
        for (batch, w) in plain.map(|b| (b, SwarmWeights::default())).chain(computed) {
            let used = (batch.saturating_sub(1) * options.batch).min(WINDOW);
            let mut line = vec![batch.to_string(), self.shard.nth(batch * options.batch).unwrap_or(0).to_string(), used.to_string()];
            line.extend(w.off.iter().map(|off| format!("{:.3}", 1.0 - off)));
            rows.insert(batch, line);
        }
        for line in rows.into_values() {
            out.extend(csv_line(line)?);
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}

fn csv_line(fields: Vec<String>) -> Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    w.write_record(&fields)?;
    w.into_inner().map_err(|e| anyhow::anyhow!("csv buffer: {e}"))
}

/// The `summary.md` section on coverage and pass activity, from `feedback.csv` and
/// `weights.csv` in `dir` (empty when the directory has no feedback, e.g. a merge).
pub fn section(dir: &Path) -> String {
    // Per program, its last line, kept small: a night has hundreds of thousands of programs,
    // and a line's pass names are held as indices into one table of names.
    let mut names: Vec<String> = Vec::new();
    let mut index: BTreeMap<String, u16> = BTreeMap::new();
    let mut programs: BTreeMap<u64, (bool, Option<f64>, Box<[u16]>)> = BTreeMap::new();
    let read = for_each_feedback(dir, |f| {
        let changed = f
            .changed
            .into_iter()
            .map(|name| {
                *index.entry(name).or_insert_with_key(|name| {
                    names.push(name.clone());
                    (names.len() - 1) as u16
                })
            })
            .collect();
        programs.insert(f.program, (f.checked, f.coverage, changed));
    });
    if read.is_err() {
        return String::new();
    }
    let checked: Vec<(Option<f64>, &[u16])> = programs.values().filter(|p| p.0).map(|p| (p.1, &p.2[..])).collect();
    if checked.is_empty() {
        return String::new();
    }
    let mut s = String::new();
    let n = checked.len();
    let _ = writeln!(s, "\n## Executed coverage and what changed the programs\n");
    let mut coverage: Vec<f64> = checked.iter().filter_map(|f| f.0).collect();
    coverage.sort_by(f64::total_cmp);
    if coverage.is_empty() {
        let _ = writeln!(s, "Statement coverage: not measured (programs generated with one attempt are not probed).\n");
    } else {
        let at = |q: f64| coverage[((coverage.len() - 1) as f64 * q).round() as usize];
        let high = coverage.iter().filter(|&&c| c >= sysy_generator::PROBE_COVERAGE).count();
        let _ = writeln!(
            s,
            "Statements executed by the reference run ({} programs): median {:.1}%, p10 {:.1}%, min {:.1}%; {} programs ({:.0}%) ran at least {:.0}% of their statements.\n",
            coverage.len(),
            100.0 * at(0.5),
            100.0 * at(0.1),
            100.0 * coverage[0],
            high,
            100.0 * high as f64 / coverage.len() as f64,
            100.0 * sysy_generator::PROBE_COVERAGE
        );
    }
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for name in sysyc::passes::ir_passes().map(|p| p.name).chain(sysyc::isa::arm::BackendStage::ALL.iter().map(|s| s.name())) {
        counts.insert(name.to_string(), 0);
    }
    for (_, changed) in &checked {
        for &c in *changed {
            *counts.entry(names[c as usize].clone()).or_default() += 1;
        }
    }
    // A stage's effect shows only between two checks that differ in that stage alone; without
    // such pairs (the default strategies have none) every stage would read 0%.
    let stage_names: Vec<&str> = sysyc::isa::arm::BackendStage::ALL.iter().map(|s| s.name()).collect();
    let stages_attributed = stage_names.iter().any(|name| counts.get(*name).is_some_and(|&c| c > 0));
    if !stages_attributed {
        counts.retain(|name, _| !stage_names.contains(&name.as_str()));
    }
    let mut by_share: Vec<(String, usize)> = counts.into_iter().collect();
    by_share.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    if !stages_attributed {
        let _ = writeln!(
            s,
            "Back-end stages: not attributed in this campaign (a stage's effect shows only between two checks that differ in that stage alone: the `singles` and `leave-one-out` strategies have such pairs).\n"
        );
    }
    let _ = writeln!(s, "Programs each IR pass or back-end stage changed (rarest first; a stage counts when turning it off alone changed the assembly):\n");
    let _ = writeln!(s, "| pass or stage | programs changed | share |\n|---|---|---|");
    for (name, c) in by_share {
        let _ = writeln!(s, "| {name} | {c} | {:.1}% |", 100.0 * c as f64 / n as f64);
    }
    if let Some(moved) = weights_section(dir) {
        s.push_str(&moved);
    }
    s
}

/// The knobs the guidance moved most, from the last line of `weights.csv`.
fn weights_section(dir: &Path) -> Option<String> {
    let mut reader = csv::Reader::from_path(weights_path(dir)).ok()?;
    let header = reader.headers().ok()?.clone();
    let last = reader.records().map_while(Result::ok).last()?;
    let batch = last.get(0)?.to_string();
    let mut moved: Vec<(&str, f64)> = header
        .iter()
        .zip(last.iter())
        .filter_map(|(h, v)| Some((h.strip_prefix("on_")?, v.parse::<f64>().ok()?)))
        .filter(|(_, on)| (on - (1.0 - SWARM_OFF)).abs() >= 0.005)
        .collect();
    let mut s = format!("\nCoverage-guided swarm (`weights.csv`): {} batches", last.get(0)?.parse::<u64>().ok()? + 1);
    if moved.is_empty() {
        s.push_str("; no knob has moved from its default probability of being on yet.\n");
        return Some(s);
    }
    let default_on = 1.0 - SWARM_OFF;
    moved.sort_by(|a, b| (b.1 - default_on).abs().total_cmp(&(a.1 - default_on).abs()).then(a.0.cmp(b.0)));
    let list: Vec<String> = moved.iter().take(10).map(|(k, on)| format!("`{k}` {:.0}%", 100.0 * on)).collect();
    let _ = writeln!(s, "; probability of being on in batch {batch}, the knobs moved most (default {:.0}%): {}.", 100.0 * (1.0 - SWARM_OFF), list.join(", "));
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::Shard;
    use sysy_generator::KNOB_COUNT;

    fn feedback(program: u64, knobs_on: u64, coverage: f64, changed: &[&str]) -> Feedback {
        Feedback { program, knobs_on, coverage: Some(coverage), changed: changed.iter().map(|s| s.to_string()).collect(), checked: true }
    }

    /// Programs with knob 3 on make the rare `unroll` fire; the other knobs vary without
    /// effect. The weight of knob 3 must rise, and configurations drawn with the new weights
    /// must have it on more often.
    #[test]
    fn weights_move_toward_a_knob_that_makes_a_rare_pass_fire() {
        let mut results = Vec::new();
        for p in 0..60u64 {
            let knobs = (p + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 12 & ((1 << KNOB_COUNT) - 1);
            let unroll: &[&str] = if knobs & (1 << 3) != 0 { &["unroll", "dce"] } else { &["dce"] };
            results.push(feedback(p, knobs, 0.9, unroll));
        }
        let w = weights_from(&results);
        assert!(w.off[3] < SWARM_OFF - 0.1, "knob 3 off with probability {}", w.off[3]);
        let others = w.off.iter().enumerate().filter(|(k, _)| *k != 3).map(|(_, o)| o);
        assert!(others.clone().all(|o| *o > w.off[3]));
        let on = |w: &SwarmWeights| {
            (0..400).filter(|&s| sysy_generator::GenConfig::swarm_weighted(s, w).knobs.values()[3] > 0).count()
        };
        assert!(on(&w) > on(&SwarmWeights::default()) + 20, "{} vs {}", on(&w), on(&SwarmWeights::default()));
        // Coverage alone moves the weights too: knob 5 on raises it.
        let results: Vec<Feedback> = results
            .iter()
            .map(|f| Feedback { coverage: Some(if f.knobs_on & (1 << 5) != 0 { 0.99 } else { 0.5 }), changed: BTreeSet::new(), ..f.clone() })
            .collect();
        let w = weights_from(&results);
        assert!(w.off[5] < SWARM_OFF - 0.1 && (w.off[3] - SWARM_OFF).abs() < 0.1, "{:?}", w.off);
        assert_eq!(weights_from(&results[..3]), SwarmWeights::default(), "too few programs: no move");
    }

    /// Far into a campaign, a batch's weights come from the last [`WINDOW`] programs before
    /// the batch before it, and the feedback no batch to come reads is no longer held.
    #[test]
    fn weights_come_from_a_window_and_older_feedback_is_dropped() {
        let dir = tempfile::tempdir().expect("temp dir");
        let whole = Shard { index: 0, count: 1 };
        let guide = Guide::open(dir.path(), Some(GuideOptions { batch: 8 }), whole, &BTreeSet::new()).expect("guide");
        let programs = WINDOW + 8 * 6;
        let made = |p: u64| {
            let knobs = (p + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 12 & ((1 << KNOB_COUNT) - 1);
            // The early programs say knob 3 matters, the later ones knob 5.
            let key = if p < 64 { 3 } else { 5 };
            let changed: &[&str] = if knobs & (1 << key) != 0 { &["unroll", "dce"] } else { &["dce"] };
            feedback(p, knobs, 0.9, changed)
        };
        for p in 0..programs {
            guide.record(made(p)).expect("record");
        }
        let batch = programs / 8;
        let needed = (batch - 1) * 8;
        let window: Vec<Feedback> = (needed - WINDOW..needed).map(made).collect();
        let w = guide.weights_for(batch * 8);
        assert_eq!(w, weights_from(&window));
        let all: Vec<Feedback> = (0..needed).map(made).collect();
        assert_ne!(w, weights_from(&all), "the window leaves out the first programs");
        let state = guide.state.lock().expect("state");
        let oldest = *state.results.keys().next().expect("recent feedback is kept");
        assert_eq!(oldest, (batch - 3) * 8 - WINDOW, "kept: what batches {} and later read", batch - 2);
        drop(state);
        // The earlier batches of the campaign are still computed right (from what is kept).
        assert_eq!(guide.weights_for((batch - 2) * 8), weights_from(&(((batch - 3) * 8 - WINDOW)..(batch - 3) * 8).map(made).collect::<Vec<_>>()));
        // A reopened guide (a resumed campaign) keeps the same.
        drop(guide);
        let done: BTreeSet<u64> = (0..programs).collect();
        let reopened = Guide::open(dir.path(), Some(GuideOptions { batch: 8 }), whole, &done).expect("guide");
        assert_eq!(reopened.weights_for(batch * 8), w);
        let state = reopened.state.lock().expect("state");
        assert!(*state.results.keys().next().expect("kept") >= (batch - 3) * 8 - WINDOW);
    }

    #[test]
    fn feedback_round_trips_and_stages_count_by_assembly() {
        let f = feedback(7, 0xf00f, 0.8125, &["arm-peephole", "unroll"]);
        let bytes = csv_line(f.record()).expect("csv");
        let record = csv::ReaderBuilder::new().has_headers(false).from_reader(&bytes[..]).records().next().expect("a line").expect("valid");
        assert_eq!(Feedback::from_record(&record), Some(f));

        let row = |config: &str, changed: &str, ir: &str, asm: &str| Row {
            config: config.into(),
            passes_changed: changed.into(),
            ir_hash: ir.into(),
            asm_hash: asm.into(),
            ..Row::default()
        };
        let rows = [
            row("--passes=mem2reg --backend-stages=none", "1", "i1", "a"),
            row("--passes=mem2reg --backend-stages=arm-peephole", "1", "i1", "b"),
            row("--passes=mem2reg --backend-stages=arm-const-div", "1", "i1", "a"),
            row("--passes=mem2reg,dce --backend-stages=none", "10", "i2", "c"),
        ];
        let changed: Vec<String> = changed_by(&rows).into_iter().collect();
        assert_eq!(changed, vec!["arm-peephole", "mem2reg"]);
    }
}
