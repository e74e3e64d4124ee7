//! `harness reduce`: shrinks a SysY program while it stays interesting, on the AST.
//!
//! # Design
//!
//! The program is parsed once; candidates are the current tree with one edit applied (the
//! families and their site numbering are in [`edits`]), printed with the front end's
//! pretty-printer. A candidate is kept when it is
//! 1. smaller: by the measure (printed length, sum of literal magnitudes), compared
//!    lexicographically — strictly decreasing, so reduction terminates;
//! 2. valid and free of undefined behaviour: the front end accepts it and the reference
//!    interpreter runs it to the end without any trap, within a step budget tied to the
//!    original's (so a reduction cannot turn a loop endless or much longer) — this is what
//!    [`Case::with_truth`] checks;
//! 3. interesting: the caller's test (for triage: the same failure kind in the same stage
//!    with the same culprit) holds on the candidate's [`Case`].
//!
//! The driver walks the edit families coarse to fine; within a family it tries sites in
//! order, in batches evaluated in parallel (rayon), and takes the lowest-numbered interesting
//! candidate of a batch — exactly the candidate a sequential walk would take, so the result
//! does not depend on the batch size or on timing. After an accepted edit the same site
//! number is tried again on the new tree (the next site slid into it). Rounds over all
//! families repeat until one changes nothing: a fixpoint for every move. Texts found
//! uninteresting are remembered (by hash) and never tested twice.
//!
//! Finally stdin is cut to the shortest prefix (at a token boundary) that keeps the reduced
//! program interesting, by binary search over the number of tokens kept (reads past the end
//! trap in the reference interpreter, so a cut that starves the program is rejected).

pub mod edits;
mod scrub;

use std::time::Instant;

use rayon::prelude::*;
use rustc_hash::FxHashSet;
use sysyc::frontend::{self, ast::CompUnit, pretty};
use sysyc::runtime::Outcome;

use sysy_check::subject::{Case, Limits, Subject};
use edits::EditKind;

/// Settings of a reduction.
#[derive(Clone, Debug)]
pub struct ReduceOptions {
    /// Limits of the reference runs of candidates (the step budget is further capped at
    /// [`ReduceOptions::step_factor`] times the original program's steps).
    pub limits: Limits,
    /// A candidate may take at most this many times the original's reference steps (but at
    /// least [`MIN_STEP_BUDGET`]).
    pub step_factor: u64,
    /// Candidates evaluated in parallel per batch (the result does not depend on it).
    pub batch: usize,
    /// Stop after testing this many candidates (the result so far is returned).
    pub max_candidates: usize,
}

/// Step budget a candidate always gets, however short the original.
pub const MIN_STEP_BUDGET: u64 = 1_000_000;

impl Default for ReduceOptions {
    fn default() -> ReduceOptions {
        ReduceOptions {
            limits: Limits::GENERATED,
            step_factor: 4,
            batch: rayon::current_num_threads().max(1),
            max_candidates: 20_000,
        }
    }
}

/// Counters of a reduction.
#[derive(Clone, Debug, Default)]
pub struct ReduceStats {
    /// Candidates tested (reference interpreter run, and the interestingness test if valid).
    pub tested: usize,
    pub accepted: usize,
    pub rounds: usize,
    pub lines_before: usize,
    pub lines_after: usize,
    pub bytes_before: usize,
    pub bytes_after: usize,
    pub seconds: f64,
}

/// The reduced program.
#[derive(Clone, Debug)]
pub struct Reduced {
    pub source: String,
    pub stdin: Vec<u8>,
    /// Its reference outcome.
    pub expected: Outcome,
    pub stats: ReduceStats,
}

/// The interestingness test: called with the candidate (valid, trap-free, with its truth).
pub type Interesting<'a> = dyn Fn(&Case) -> bool + Sync + 'a;

/// A candidate program judged by the reference interpreter within `limits`: `None` when it
/// does not parse or is not trap-free.
fn candidate(file_name: &str, text: &str, stdin: &[u8], limits: &Limits) -> Option<Case> {
    Case::with_truth(Subject::parse(file_name, text, stdin).ok()?, limits).ok()
}

/// Reduces `source` (see the module documentation). Fails if the program is not valid,
/// not trap-free, or not interesting to begin with.
pub fn reduce(
    file_name: &str,
    source: &str,
    stdin: &[u8],
    interesting: &Interesting<'_>,
    options: &ReduceOptions,
) -> Result<Reduced, String> {
    let start = Instant::now();
    let subject = Subject::parse(file_name, source, stdin).map_err(|e| format!("cannot reduce: {}", e.detail))?;
    let original = Case::with_truth(subject, &options.limits).map_err(|e| format!("cannot reduce: {e}"))?;
    if !interesting(&original) {
        return Err("cannot reduce: the program is not interesting to begin with".to_string());
    }
    let unit = frontend::parse(source).map_err(|_| "cannot reduce: the program does not parse")?;
    let original_steps = original.truth().map_or(0, |t| t.steps);
    let step_budget = original_steps.saturating_mul(options.step_factor).max(MIN_STEP_BUDGET).min(options.limits.max_steps);
    let candidate_limits = Limits { max_steps: step_budget, ..options.limits.clone() };
    let mut state = Search {
        file_name,
        stdin,
        interesting,
        limits: candidate_limits,
        rejected: FxHashSet::default(),
        tested: 0,
        max_candidates: options.max_candidates,
        batch: options.batch.max(1),
    };
    // The printed form is the starting point when it is interesting too (it normally is:
    // printing keeps the meaning); otherwise the original text stays the fallback.
    let printed = pretty::print(&unit);
    let mut best = match candidate(file_name, &printed, stdin, &state.limits) {
        Some(c) if interesting(&c) => Current::new(unit, printed, c),
        _ => Current::new(unit, source.to_string(), original),
    };
    let mut stats = ReduceStats {
        lines_before: count_lines(source),
        bytes_before: source.len(),
        ..ReduceStats::default()
    };
    loop {
        stats.rounds += 1;
        let mut progress = false;
        for kind in EditKind::ALL {
            best.resume = 0;
            while let Some(next) = state.sweep(&best, kind) {
                best = next;
                stats.accepted += 1;
                progress = true;
            }
        }
        if !progress || state.exhausted() {
            break;
        }
    }
    let stdin = match state.shrink_stdin(&best.text) {
        Some((shorter, case)) => {
            best.case = case;
            shorter
        }
        None => stdin.to_vec(),
    };
    stats.tested = state.tested;
    stats.lines_after = count_lines(&best.text);
    stats.bytes_after = best.text.len();
    stats.seconds = start.elapsed().as_secs_f64();
    Ok(Reduced { source: best.text, stdin, expected: best.case.truth().cloned().unwrap_or_default(), stats })
}

/// Non-empty lines.
pub fn count_lines(text: &str) -> usize {
    text.lines().filter(|l| !l.trim().is_empty()).count()
}

/// The smallest interesting program so far.
struct Current {
    unit: CompUnit,
    text: String,
    measure: (usize, u64),
    case: Case,
    /// The site the current family's sweep resumes at (the site of the last accepted edit).
    resume: usize,
}

impl Current {
    fn new(unit: CompUnit, text: String, case: Case) -> Current {
        let measure = (text.len(), edits::literal_weight(&unit));
        Current { unit, text, measure, case, resume: 0 }
    }
}

struct Search<'a> {
    file_name: &'a str,
    stdin: &'a [u8],
    interesting: &'a Interesting<'a>,
    limits: Limits,
    rejected: FxHashSet<[u8; 32]>,
    tested: usize,
    max_candidates: usize,
    batch: usize,
}

impl Search<'_> {
    fn exhausted(&self) -> bool {
        self.tested >= self.max_candidates
    }

    /// Tries the sites of `kind` from `current.resume` on; returns the first interesting
    /// candidate (with `resume` at its site), or `None` when no site of `kind` is.
    fn sweep(&mut self, current: &Current, kind: EditKind) -> Option<Current> {
        let total = edits::count(&current.unit, kind);
        let mut site = current.resume.min(total);
        while site < total && !self.exhausted() {
            let end = (site + self.batch).min(total);
            let candidates: Vec<(usize, CompUnit, String)> = (site..end)
                .filter_map(|i| {
                    let unit = edits::apply(&current.unit, kind, i)?;
                    let text = pretty::print(&unit);
                    let smaller = (text.len(), edits::literal_weight(&unit)) < current.measure;
                    let hash = *blake3::hash(text.as_bytes()).as_bytes();
                    (smaller && !self.rejected.contains(&hash)).then_some((i, unit, text))
                })
                .collect();
            self.tested += candidates.len();
            let verdicts: Vec<Option<Case>> = candidates
                .par_iter()
                .map(|(_, _, text)| self.test(text))
                .collect();
            let mut winner = None;
            for ((i, unit, text), verdict) in candidates.into_iter().zip(verdicts) {
                match verdict {
                    Some(case) if winner.is_none() => winner = Some((i, unit, text, case)),
                    Some(_) => {}
                    None => {
                        self.rejected.insert(*blake3::hash(text.as_bytes()).as_bytes());
                    }
                }
            }
            if let Some((i, unit, text, case)) = winner {
                let mut next = Current::new(unit, text, case);
                next.resume = i;
                return Some(next);
            }
            site = end;
        }
        None
    }

    /// The candidate if it is valid, trap-free and interesting.
    fn test(&self, text: &str) -> Option<Case> {
        self.test_with(text, self.stdin)
    }

    fn test_with(&self, text: &str, stdin: &[u8]) -> Option<Case> {
        let case = candidate(self.file_name, text, stdin, &self.limits)?;
        (self.interesting)(&case).then_some(case)
    }

    /// The shortest token-boundary prefix of stdin with which `text` stays interesting, if
    /// shorter than stdin (see the module documentation).
    fn shrink_stdin(&mut self, text: &str) -> Option<(Vec<u8>, Case)> {
        // Candidate lengths: empty, then the end of each token but the last.
        let mut cuts = vec![0usize];
        let bytes = self.stdin;
        for i in 1..bytes.len() {
            if !bytes[i - 1].is_ascii_whitespace() && bytes[i].is_ascii_whitespace() {
                cuts.push(i);
            }
        }
        cuts.retain(|&c| c < bytes.len());
        // Invariant: cuts[hi] (or the whole input when hi == cuts.len()) is interesting.
        let (mut lo, mut hi) = (0usize, cuts.len());
        let mut best = None;
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            self.tested += 1;
            match self.test_with(text, &bytes[..cuts[mid]]) {
                Some(case) => {
                    best = Some((bytes[..cuts[mid]].to_vec(), case));
                    hi = mid;
                }
                None => lo = mid + 1,
            }
        }
        best
    }
}
