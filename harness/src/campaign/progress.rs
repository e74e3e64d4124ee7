//! The progress line on stderr: programs and checks per second, failures so far.
//!
//! A bar when the number of programs is known (`--programs N`), a spinner with the elapsed
//! time otherwise. indicatif draws nothing when stderr is not a terminal, so logs and tests
//! stay clean.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    programs: AtomicU64,
    checks: AtomicU64,
    failures: AtomicU64,
}

impl Progress {
    /// `total`: the number of programs still to check, when known.
    pub fn new(total: Option<u64>) -> Progress {
        let (bar, template) = match total {
            Some(n) => (ProgressBar::new(n), "{elapsed_precise} [{bar:30}] {pos}/{len} programs  {msg}"),
            None => (ProgressBar::new_spinner(), "{spinner} {elapsed_precise} {pos} programs  {msg}"),
        };
        bar.set_draw_target(ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.enable_steady_tick(Duration::from_millis(500));
        Progress {
            bar,
            start: Instant::now(),
            programs: AtomicU64::new(0),
            checks: AtomicU64::new(0),
            failures: AtomicU64::new(0),
        }
    }

    /// Records one finished program.
    pub fn program_done(&self, checks: u64, failures: u64) {
        let programs = self.programs.fetch_add(1, Ordering::Relaxed) + 1;
        let checks = self.checks.fetch_add(checks, Ordering::Relaxed) + checks;
        let failures = self.failures.fetch_add(failures, Ordering::Relaxed) + failures;
        let secs = self.start.elapsed().as_secs_f64().max(1e-3);
        self.bar.set_message(format!(
            "{:.2} programs/s  {checks} checks ({:.1}/s)  {failures} failures",
            programs as f64 / secs,
            checks as f64 / secs
        ));
        self.bar.inc(1);
    }

    /// Prints a line above the bar.
    pub fn println(&self, line: String) {
        self.bar.println(line);
    }

    pub fn programs(&self) -> u64 {
        self.programs.load(Ordering::Relaxed)
    }

    pub fn checks(&self) -> u64 {
        self.checks.load(Ordering::Relaxed)
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
