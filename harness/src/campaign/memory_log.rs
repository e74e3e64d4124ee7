//! `memory.csv`: the campaign process's memory after every program, so that "memory stays
//! flat over hours" is a recorded figure rather than a hope.
//!
//! One line per finished program: wall-clock time (Unix seconds, so lines of resumed
//! sessions stay in order), the program number, RSS, live heap and heap high-water mark in
//! KiB (see [`crate::memory`]; an empty field where a figure is unavailable). The summary
//! compares the first and last lines of the file.
//!
//! Every [`RELEASE_INTERVAL`] the worker that records also hands free heap memory back to the
//! kernel first ([`crate::memory::release_free_memory`]): without it, the allocator keeps the
//! pages of the largest program seen so far in every worker's arena, and RSS climbs in steps
//! although the live heap does not grow. Not after every program: a campaign checks a dozen
//! programs a second, and purging that often cost about 3% of its CPU time (`perf`: the purge,
//! its `madvise` calls, and the page faults of touching the returned pages again).

use crate::memory::{self, Sample};
use anyhow::{Context, Result};
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const HEADER: &str = "unix_s,program,rss_kib,heap_kib,heap_peak_kib\n";

pub fn path(dir: &Path) -> PathBuf {
    dir.join("memory.csv")
}

/// How often free heap memory is handed back to the kernel before a reading.
pub const RELEASE_INTERVAL: Duration = Duration::from_secs(5);

/// The open `memory.csv` of a campaign directory.
pub struct MemoryLog {
    file: File,
    /// When free memory was last handed back (`None`: not yet).
    released: Option<Instant>,
}

impl MemoryLog {
    /// Opens (or creates, with its header) `memory.csv` in `dir` for appending.
    pub fn open(dir: &Path) -> Result<MemoryLog> {
        let path = path(dir);
        let mut file = OpenOptions::new().create(true).append(true).open(&path).with_context(|| format!("opening {}", path.display()))?;
        let len = file.metadata().with_context(|| format!("reading {}", path.display()))?.len();
        if len == 0 {
            file.write_all(HEADER.as_bytes()).with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(MemoryLog { file, released: None })
    }

    /// Releases free heap memory (at most once per [`RELEASE_INTERVAL`]), then appends the
    /// process's figures after `program`.
    pub fn record(&mut self, program: u64) -> Result<()> {
        if self.released.is_none_or(|at| at.elapsed() >= RELEASE_INTERVAL) {
            memory::release_free_memory();
            self.released = Some(Instant::now());
        }
        let s = memory::sample();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        let field = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
        let line = format!("{now:.1},{program},{},{},{}\n", field(s.rss_kib), field(s.heap_kib), field(s.heap_peak_kib));
        self.file.write_all(line.as_bytes()).context("appending to memory.csv")
    }
}

/// One line of `memory.csv`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line {
    pub unix_s: f64,
    pub program: u64,
    pub sample: Sample,
}

/// The lines of `memory.csv` in `dir` (none if it does not exist). Lines that do not parse —
/// a line cut by a kill — are skipped: these figures are a report, not a record to resume.
pub fn read(dir: &Path) -> Vec<Line> {
    let Ok(text) = std::fs::read_to_string(path(dir)) else {
        return Vec::new();
    };
    text.lines().skip(1).filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Line> {
    let fields: Vec<&str> = line.split(',').collect();
    if fields.len() != 5 {
        return None;
    }
    let opt = |s: &str| if s.is_empty() { Some(None) } else { s.parse::<u64>().ok().map(Some) };
    Some(Line {
        unix_s: fields[0].parse().ok()?,
        program: fields[1].parse().ok()?,
        sample: Sample { rss_kib: opt(fields[2])?, heap_kib: opt(fields[3])?, heap_peak_kib: opt(fields[4])? },
    })
}

/// The summary's memory section: first and last readings, the maximum, and the floor (lowest
/// reading) of the first and of the last quarter of the readings. With several workers a
/// reading includes the programs the other workers are in the middle of, so single readings
/// are noisy; a leak shows as a floor that rises. Empty when there are fewer than two
/// readings.
pub fn section(lines: &[Line]) -> String {
    let (Some(first), Some(last)) = (lines.first(), lines.last()) else {
        return String::new();
    };
    if lines.len() < 2 {
        return String::new();
    }
    let mib = |k: Option<u64>| k.map_or("n/a".to_string(), |k| format!("{:.1} MiB", k as f64 / 1024.0));
    let quarter = lines.len().div_ceil(4);
    let (early, late) = (&lines[..quarter], &lines[lines.len() - quarter..]);
    let floor = |part: &[Line], f: fn(&Sample) -> Option<u64>| part.iter().filter_map(|l| f(&l.sample)).min();
    let max = |f: fn(&Sample) -> Option<u64>| lines.iter().filter_map(|l| f(&l.sample)).max();
    let rss: fn(&Sample) -> Option<u64> = |s| s.rss_kib;
    let heap: fn(&Sample) -> Option<u64> = |s| s.heap_kib;
    let mut s = String::new();
    let _ = writeln!(s, "\n## Memory of the campaign process\n");
    let _ = writeln!(
        s,
        "{} readings (one after each program, `memory.csv`) over {:.1} min; a floor is the lowest \
         reading of the first or last quarter of them.\n",
        lines.len(),
        (last.unix_s - first.unix_s) / 60.0
    );
    let _ = writeln!(s, "| figure | first reading | floor, first quarter | floor, last quarter | last reading | maximum |");
    let _ = writeln!(s, "|---|--:|--:|--:|--:|--:|");
    for (name, f) in [("RSS", rss), ("live heap", heap)] {
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} | {} | {} |",
            mib(f(&first.sample)),
            mib(floor(early, f)),
            mib(floor(late, f)),
            mib(f(&last.sample)),
            mib(max(f))
        );
    }
    let _ = writeln!(s, "\nHeap high-water mark since the process started: {}.", mib(last.sample.heap_peak_kib));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_summarise() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut log = MemoryLog::open(dir.path()).expect("open");
        log.record(0).expect("record");
        log.record(1).expect("record");
        drop(log);
        // Reopening appends without a second header.
        MemoryLog::open(dir.path()).expect("reopen").record(2).expect("record");
        let lines = read(dir.path());
        assert_eq!(lines.iter().map(|l| l.program).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert!(lines.iter().all(|l| l.sample.rss_kib.is_some_and(|k| k > 0)));
        // The test binary does not install the counting allocator.
        assert!(lines.iter().all(|l| l.sample.heap_kib.is_none()));
        let md = section(&lines);
        assert!(md.contains("3 readings"), "{md}");
        assert!(md.contains("| RSS |") && md.contains("MiB"), "{md}");
        assert!(md.contains("| live heap | n/a | n/a | n/a | n/a | n/a |"), "{md}");
    }

    #[test]
    fn floors_come_from_the_first_and_last_quarters() {
        let reading = |t: f64, rss: u64| Line {
            unix_s: t,
            program: t as u64,
            sample: Sample { rss_kib: Some(rss * 1024), heap_kib: Some(1024), heap_peak_kib: Some(2048) },
        };
        let lines: Vec<Line> =
            [30, 10, 50, 40, 90, 20, 60, 25].iter().enumerate().map(|(i, &m)| reading(60.0 * i as f64, m)).collect();
        let md = section(&lines);
        // Quarters of 2: floors 10 and 25; first 30, last 25, maximum 90.
        assert!(md.contains("| RSS | 30.0 MiB | 10.0 MiB | 25.0 MiB | 25.0 MiB | 90.0 MiB |"), "{md}");
        assert!(md.contains("over 7.0 min"), "{md}");
        assert!(md.contains("high-water mark since the process started: 2.0 MiB"), "{md}");
    }

    #[test]
    fn a_cut_line_is_skipped_and_one_reading_gives_no_section() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(path(dir.path()), format!("{HEADER}1.0,0,100,,\n2.0,1,1")).expect("write");
        let lines = read(dir.path());
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].sample, Sample { rss_kib: Some(100), heap_kib: None, heap_peak_kib: None });
        assert_eq!(section(&lines), "");
    }
}
