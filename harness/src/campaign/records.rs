//! The campaign's records: `runs.csv` (one row per program × configuration) and
//! `programs.csv` (one row per finished program), both append-only and flushed per program.
//!
//! # Crash safety and `--resume`
//! All rows of one program are written with one `write_all` and flushed, and only then is the
//! program's line appended to `programs.csv`: a program is complete exactly when its
//! `programs.csv` line is. A campaign killed at any point (even `kill -9`) leaves at worst a
//! partial last line in either file, or rows of a program that has no `programs.csv` line yet.
//! [`Records::resume`] drops both (rewriting `runs.csv` through a temporary file and a rename
//! when rows must go) and returns the set of complete programs, which the campaign skips: no
//! row is lost, none is duplicated.
//!
//! Damage beyond a kill is handled the same way where it can be and refused where it cannot:
//! a program counts as complete only if `runs.csv` holds as many of its rows as its
//! `programs.csv` line says it checked (so a `runs.csv` truncated by hand or by a full disk
//! makes the affected programs run again, and their line is removed); a file cut inside its
//! header gets the header back; a foreign header or a malformed record in the middle of
//! `runs.csv` is an error that names the file and changes nothing. Every rewrite goes through
//! a synced temporary file and a rename, so a failure (a full disk) leaves the original.

use sysy_check::executor::Check;
pub use sysy_check::executor::timing::{Phase, Timing};
use sysy_check::failure::{Failure, FailureKind, Stage, one_line};
use anyhow::{Context, Result};
use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use sysy_cost_model::{InsnClass, NUM_CLASSES};

/// One check: a program under one configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    pub program: u64,
    pub seed: u64,
    pub gen_config: String,
    /// [`sysyc::config::Config::id`] of the configuration.
    pub config_id: String,
    pub label: String,
    /// The configuration as `sysyc` options ([`sysyc::config::Config`]'s text form).
    pub config: String,
    /// How the check failed (`None`: it passed).
    pub kind: Option<FailureKind>,
    pub stage: Option<Stage>,
    pub detail: String,
    /// Executed instructions (qemu with the cost plugin), all and in the program's code.
    pub insns: Option<u64>,
    pub program_insns: Option<u64>,
    pub cycles: Option<u64>,
    /// Executed instructions per class ([`InsnClass::ALL`] order), one column each.
    pub class_counts: Option<[u64; NUM_CLASSES]>,
    /// The configuration's pipeline (also of a prefix an earlier configuration ran), back end
    /// and link, when it ran them; not its qemu run.
    pub compile_us: u64,
    /// The qemu run's wall time (shared runs repeat it).
    pub run_us: u64,
    pub ir_hash: String,
    pub asm_hash: String,
    /// The back end was skipped: an earlier configuration had produced the same IR.
    pub ir_shared: bool,
    /// The qemu run was skipped: an earlier configuration had produced the same assembly.
    pub asm_shared: bool,
    /// One `0`/`1` per pipeline position: whether that pass changed the module.
    pub passes_changed: String,
}

/// The columns before the per-class counts.
const FIXED_COLUMNS: [&str; 20] = [
    "program",
    "seed",
    "gen_config",
    "config_id",
    "label",
    "config",
    "verdict",
    "kind",
    "stage",
    "detail",
    "insns",
    "program_insns",
    "cycles",
    "compile_us",
    "run_us",
    "ir_hash",
    "asm_hash",
    "ir_shared",
    "asm_shared",
    "passes_changed",
];

/// Header of `runs.csv`: the fixed columns, then `class_<name>` per instruction class.
pub fn runs_header() -> Vec<String> {
    FIXED_COLUMNS.iter().map(|s| s.to_string()).chain(InsnClass::ALL.iter().map(|c| format!("class_{}", c.name()))).collect()
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// The fields of a record by column name (a record read with its file's header).
struct Fields<'a> {
    header: &'a csv::StringRecord,
    record: &'a csv::StringRecord,
}

impl Fields<'_> {
    fn get(&self, column: &str) -> Option<&str> {
        self.header.iter().position(|h| h == column).and_then(|i| self.record.get(i))
    }

    fn text(&self, column: &str) -> Option<String> {
        self.get(column).map(str::to_string)
    }

    /// An optional typed value: empty is `None`, anything unparsable makes the row invalid.
    fn typed<T: FromStr>(&self, column: &str) -> Option<Option<T>> {
        match self.get(column)? {
            "" => Some(None),
            s => s.parse().ok().map(Some),
        }
    }

    fn number(&self, column: &str) -> Option<u64> {
        self.get(column)?.parse().ok()
    }
}

impl Row {
    /// Fills the row from the executor's check of its configuration.
    pub fn record_check(&mut self, check: &Check) {
        self.passes_changed = check.passes_changed.clone();
        self.ir_hash = check.ir_hash.clone();
        self.asm_hash = check.asm_hash.clone();
        self.ir_shared = check.ir_shared;
        self.asm_shared = check.asm_shared;
        self.compile_us = check.compile.as_micros() as u64;
        self.run_us = check.run.as_micros() as u64;
        if let Some(cost) = &check.cost {
            self.insns = Some(cost.counts.total);
            self.program_insns = Some(cost.counts.program.total());
            self.cycles = Some(cost.cycles.total);
            self.class_counts = Some(cost.counts.per_class.0);
        }
        self.set_result(&check.verdict);
    }

    /// A passing row, or the row of `failure`.
    pub fn set_result(&mut self, result: &Result<(), Failure>) {
        if let Err(f) = result {
            self.kind = Some(f.kind);
            self.stage = Some(f.stage);
            self.detail = one_line(&f.detail);
        }
    }

    pub fn failed(&self) -> bool {
        self.kind.is_some()
    }

    fn record(&self) -> Vec<String> {
        let mut r = vec![
            self.program.to_string(),
            self.seed.to_string(),
            self.gen_config.clone(),
            self.config_id.clone(),
            self.label.clone(),
            self.config.clone(),
            if self.failed() { "fail" } else { "pass" }.to_string(),
            opt(self.kind),
            opt(self.stage),
            one_line(&self.detail),
            opt(self.insns),
            opt(self.program_insns),
            opt(self.cycles),
            self.compile_us.to_string(),
            self.run_us.to_string(),
            self.ir_hash.clone(),
            self.asm_hash.clone(),
            u8::from(self.ir_shared).to_string(),
            u8::from(self.asm_shared).to_string(),
            self.passes_changed.clone(),
        ];
        match self.class_counts {
            Some(counts) => r.extend(counts.iter().map(u64::to_string)),
            None => r.extend(std::iter::repeat_n(String::new(), NUM_CLASSES)),
        }
        r
    }

    /// Reads a record written by [`Row::record`] under `header`; `None` when it is malformed.
    pub fn from_record(header: &csv::StringRecord, record: &csv::StringRecord) -> Option<Row> {
        let f = Fields { header, record };
        let counts: Option<Vec<u64>> =
            InsnClass::ALL.iter().map(|c| f.get(&format!("class_{}", c.name())).and_then(|s| s.parse().ok())).collect();
        Some(Row {
            program: f.number("program")?,
            seed: f.number("seed")?,
            gen_config: f.text("gen_config")?,
            config_id: f.text("config_id")?,
            label: f.text("label")?,
            config: f.text("config")?,
            kind: f.typed("kind")?,
            stage: f.typed("stage")?,
            detail: f.text("detail")?,
            insns: f.typed("insns")?,
            program_insns: f.typed("program_insns")?,
            cycles: f.typed("cycles")?,
            class_counts: counts.and_then(|c| <[u64; NUM_CLASSES]>::try_from(c).ok()),
            compile_us: f.number("compile_us").unwrap_or(0),
            run_us: f.number("run_us").unwrap_or(0),
            ir_hash: f.text("ir_hash")?,
            asm_hash: f.text("asm_hash")?,
            ir_shared: f.get("ir_shared")? == "1",
            asm_shared: f.get("asm_shared")? == "1",
            passes_changed: f.text("passes_changed")?,
        })
    }
}

sysy_check::named_enum! {
    /// What became of a program.
    pub enum ProgramStatus {
        /// Judged under its configurations.
        Checked = "checked",
        /// Not judged: the truth trapped or timed out, or the front end refused the generated
        /// source (a generator problem).
        Discarded = "discarded",
    }
}

impl Default for ProgramStatus {
    fn default() -> ProgramStatus {
        ProgramStatus::Discarded
    }
}

/// One finished program (`programs.csv`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgramLine {
    pub program: u64,
    pub seed: u64,
    pub gen_config: String,
    pub status: ProgramStatus,
    pub reason: String,
    pub lines: u64,
    pub ref_steps: u64,
    /// Differential checks recorded in `runs.csv`.
    pub checks: u64,
    pub failures: u64,
    pub millis: u64,
    /// Functions on which the two data-flow solvers were compared.
    pub analysis_functions: u64,
    /// Where the program's time went (columns `us_<phase>`).
    pub timing: Timing,
    /// A variant's origin (`sources::mutated::Origin::record`; empty for other programs).
    pub origin: String,
}

const PROGRAM_COLUMNS: [&str; 11] = [
    "program",
    "seed",
    "gen_config",
    "status",
    "reason",
    "lines",
    "ref_steps",
    "checks",
    "failures",
    "millis",
    "analysis_functions",
];

fn program_header() -> Vec<String> {
    PROGRAM_COLUMNS
        .iter()
        .map(|s| s.to_string())
        .chain(Phase::ALL.iter().map(|p| format!("us_{}", p.name())))
        .chain(["origin".to_string()])
        .collect()
}

impl ProgramLine {
    fn record(&self) -> Vec<String> {
        let mut r = vec![
            self.program.to_string(),
            self.seed.to_string(),
            self.gen_config.clone(),
            self.status.to_string(),
            one_line(&self.reason),
            self.lines.to_string(),
            self.ref_steps.to_string(),
            self.checks.to_string(),
            self.failures.to_string(),
            self.millis.to_string(),
            self.analysis_functions.to_string(),
        ];
        r.extend(self.timing.0.iter().map(u64::to_string));
        r.push(self.origin.clone());
        r
    }

    pub fn from_record(r: &csv::StringRecord) -> Option<ProgramLine> {
        let num = |i: usize| r.get(i).and_then(|s| s.parse::<u64>().ok());
        let mut timing = Timing::default();
        for (i, slot) in timing.0.iter_mut().enumerate() {
            *slot = num(PROGRAM_COLUMNS.len() + i).unwrap_or(0);
        }
        Some(ProgramLine {
            program: num(0)?,
            seed: num(1)?,
            gen_config: r.get(2)?.to_string(),
            status: r.get(3)?.parse().ok()?,
            reason: r.get(4)?.to_string(),
            lines: num(5)?,
            ref_steps: num(6)?,
            checks: num(7)?,
            failures: num(8)?,
            millis: num(9)?,
            analysis_functions: num(10).unwrap_or(0),
            timing,
            origin: r.get(PROGRAM_COLUMNS.len() + Phase::ALL.len()).unwrap_or_default().to_string(),
        })
    }
}

/// The self-test of one program (`selftests.csv`): an oracle that checks the compiler's own
/// consistency rather than a configuration's output (today the data-flow agreement).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SelfTest {
    pub program: u64,
    pub oracle: String,
    pub kind: Option<FailureKind>,
    pub detail: String,
    /// Functions (or other units) the oracle checked.
    pub checked: u64,
    pub micros: u64,
}

const SELFTEST_COLUMNS: [&str; 6] = ["program", "oracle", "kind", "detail", "checked", "micros"];

impl SelfTest {
    fn record(&self) -> Vec<String> {
        vec![
            self.program.to_string(),
            self.oracle.clone(),
            opt(self.kind),
            one_line(&self.detail),
            self.checked.to_string(),
            self.micros.to_string(),
        ]
    }

    fn from_record(r: &csv::StringRecord) -> Option<SelfTest> {
        let kind = match r.get(2)? {
            "" => None,
            k => Some(k.parse().ok()?),
        };
        Some(SelfTest {
            program: r.get(0)?.parse().ok()?,
            oracle: r.get(1)?.to_string(),
            kind,
            detail: r.get(3)?.to_string(),
            checked: r.get(4)?.parse().ok()?,
            micros: r.get(5)?.parse().ok()?,
        })
    }
}

/// The open record files of a campaign directory.
pub struct Records {
    runs: File,
    programs: File,
    selftests: File,
}

fn csv_bytes(records: impl IntoIterator<Item = Vec<String>>) -> Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
    for r in records {
        w.write_record(&r)?;
    }
    w.into_inner().map_err(|e| anyhow::anyhow!("csv buffer: {e}"))
}

fn append_file(path: &Path) -> Result<File> {
    OpenOptions::new().create(true).append(true).open(path).with_context(|| format!("opening {}", path.display()))
}

pub fn runs_path(dir: &Path) -> PathBuf {
    dir.join("runs.csv")
}

pub fn programs_path(dir: &Path) -> PathBuf {
    dir.join("programs.csv")
}

pub fn selftests_path(dir: &Path) -> PathBuf {
    dir.join("selftests.csv")
}

fn header_of(columns: &[&str]) -> Vec<String> {
    columns.iter().map(|s| s.to_string()).collect()
}

impl Records {
    /// Creates fresh record files in `dir` (which must not hold records yet).
    pub fn create(dir: &Path) -> Result<Records> {
        for path in [runs_path(dir), programs_path(dir), selftests_path(dir)] {
            if path.exists() {
                anyhow::bail!("{} exists; use --resume {} to continue that campaign", path.display(), dir.display());
            }
        }
        let open = |path: PathBuf, header: Vec<String>| -> Result<File> {
            let mut file = append_file(&path)?;
            file.write_all(&csv_bytes([header])?).with_context(|| format!("writing {}", path.display()))?;
            Ok(file)
        };
        Ok(Records {
            runs: open(runs_path(dir), runs_header())?,
            programs: open(programs_path(dir), program_header())?,
            selftests: open(selftests_path(dir), header_of(&SELFTEST_COLUMNS))?,
        })
    }

    /// Reopens the records of an interrupted campaign; returns them and the complete programs.
    ///
    /// A file cut inside its header (or to nothing) gets its header back; a header that is not
    /// ours, or a record that is malformed anywhere but at the end, is an error that leaves
    /// the files as they are (the user decides what to keep).
    pub fn resume(dir: &Path) -> Result<(Records, BTreeSet<u64>)> {
        let programs_file = programs_path(dir);
        truncate_partial_line(&programs_file)?;
        restore_header(&programs_file, &program_header())?;
        let runs_file = runs_path(dir);
        truncate_partial_line(&runs_file)?;
        restore_header(&runs_file, &runs_header())?;
        let selftests_file = selftests_path(dir);
        truncate_partial_line(&selftests_file)?;
        restore_header(&selftests_file, &header_of(&SELFTEST_COLUMNS))?;

        // The files are read a record at a time, twice where something must go: a night's
        // shard has millions of rows, more than a retried pod should hold in memory.
        let bad_run = || format!("parsing {} (fix or remove the bad line to resume)", runs_file.display());
        let mut rows_of: BTreeMap<u64, u64> = BTreeMap::new();
        let mut rows = 0u64;
        for_each_record(&runs_file, |header, record| {
            let record = record.with_context(bad_run)?;
            rows += 1;
            if let Some(row) = Row::from_record(header, record) {
                *rows_of.entry(row.program).or_insert(0) += 1;
            }
            Ok(())
        })?;
        // Complete: a `programs.csv` line and exactly as many rows as it says it checked (a
        // `runs.csv` cut short by hand or by a full disk loses rows of finished programs;
        // those are checked again rather than reported with rows missing).
        let complete_lines = |mut keep: Box<dyn FnMut(&ProgramLine) -> Result<()> + '_>| -> Result<(BTreeSet<u64>, u64)> {
            let (mut done, mut lines_read) = (BTreeSet::new(), 0u64);
            for_each_record(&programs_file, |_, record| {
                lines_read += 1;
                let line = record.ok().and_then(ProgramLine::from_record);
                if let Some(line) = line.filter(|l| rows_of.get(&l.program) == Some(&l.checks) && !done.contains(&l.program)) {
                    done.insert(line.program);
                    keep(&line)?;
                }
                Ok(())
            })?;
            Ok((done, lines_read))
        };
        let (done, lines_read) = complete_lines(Box::new(|_| Ok(())))?;
        if (done.len() as u64) < lines_read {
            rewrite_with(dir, &programs_file, &program_header(), |w| {
                complete_lines(Box::new(|line| Ok(w.write_record(line.record())?))).map(drop)
            })?;
        }
        if rows_of.iter().filter(|(p, _)| done.contains(p)).map(|(_, n)| n).sum::<u64>() < rows {
            rewrite_with(dir, &runs_file, &runs_header(), |w| {
                for_each_record(&runs_file, |header, record| {
                    let record = record.with_context(bad_run)?;
                    if Row::from_record(header, record).is_some_and(|row| done.contains(&row.program)) {
                        w.write_record(record)?;
                    }
                    Ok(())
                })
            })?;
        }
        let (mut tests, mut kept_tests) = (0u64, 0u64);
        for_each_record(&selftests_file, |_, record| {
            if let Some(test) = record.ok().and_then(SelfTest::from_record) {
                tests += 1;
                kept_tests += u64::from(done.contains(&test.program));
            }
            Ok(())
        })?;
        if kept_tests < tests {
            rewrite_with(dir, &selftests_file, &header_of(&SELFTEST_COLUMNS), |w| {
                for_each_record(&selftests_file, |_, record| {
                    if let Some(test) = record.ok().and_then(SelfTest::from_record).filter(|t| done.contains(&t.program)) {
                        w.write_record(test.record())?;
                    }
                    Ok(())
                })
            })?;
        }
        let records = Records {
            runs: append_file(&runs_file)?,
            programs: append_file(&programs_file)?,
            selftests: append_file(&selftests_file)?,
        };
        Ok((records, done))
    }

    /// Appends one program's rows and self-tests, then its `programs.csv` line (see the
    /// module docs).
    pub fn append_program(&mut self, rows: &[Row], tests: &[SelfTest], line: &ProgramLine) -> Result<()> {
        self.runs.write_all(&csv_bytes(rows.iter().map(Row::record))?).context("appending to runs.csv")?;
        self.runs.flush().context("appending to runs.csv")?;
        self.selftests.write_all(&csv_bytes(tests.iter().map(SelfTest::record))?).context("appending to selftests.csv")?;
        self.selftests.flush().context("appending to selftests.csv")?;
        self.programs.write_all(&csv_bytes([line.record()])?).context("appending to programs.csv")?;
        self.programs.flush().context("appending to programs.csv")?;
        Ok(())
    }
}

/// Replaces the record file `path` by `columns` and `records`, through a synced temporary
/// file in `dir` and a rename: a failure (a full disk) leaves the original as it was.
/// Replaces `path` by `header` and the records `fill` writes, streamed to a temporary file
/// in `dir` that then takes the file's place.
fn rewrite_with(dir: &Path, path: &Path, header: &[String], fill: impl FnOnce(&mut csv::Writer<std::io::BufWriter<&File>>) -> Result<()>) -> Result<()> {
    let tmp = tempfile::NamedTempFile::new_in(dir).with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    let context = || format!("writing the new {}", path.display());
    {
        let mut w = csv::WriterBuilder::new().has_headers(false).from_writer(std::io::BufWriter::new(tmp.as_file()));
        w.write_record(header).with_context(context)?;
        fill(&mut w).with_context(context)?;
        w.flush().with_context(context)?;
    }
    tmp.as_file().sync_all().with_context(context)?;
    // On failure the temporary file is removed when `tmp` drops.
    tmp.persist(path).map_err(|e| e.error).with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

/// Hands the header and each record (or its parse error) of the CSV file `path` to `f`, one
/// at a time; stops at `f`'s first error.
fn for_each_record(path: &Path, mut f: impl FnMut(&csv::StringRecord, csv::Result<&csv::StringRecord>) -> Result<()>) -> Result<()> {
    let mut reader = csv::Reader::from_path(path).with_context(|| format!("reading {}", path.display()))?;
    let header = reader.headers().with_context(|| format!("reading {}", path.display()))?.clone();
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => return Ok(()),
            Ok(true) => f(&header, Ok(&record))?,
            Err(e) => f(&header, Err(e))?,
        }
    }
}

/// Checks the header line of a record file: an empty file (cut inside its header) gets
/// `columns` written back; a different header is an error naming the file.
fn restore_header(path: &Path, columns: &[String]) -> Result<()> {
    let expected = csv_bytes([columns.to_vec()])?;
    // The file's start only: the records after the header can be gigabytes.
    let mut bytes = Vec::with_capacity(expected.len());
    File::open(path)
        .and_then(|f| f.take(expected.len() as u64).read_to_end(&mut bytes))
        .with_context(|| format!("reading {}", path.display()))?;
    if bytes.is_empty() {
        return append_file(path)?.write_all(&expected).with_context(|| format!("writing {}", path.display()));
    }
    if !bytes.starts_with(&expected) {
        anyhow::bail!(
            "{} does not start with the expected header `{}`: not a campaign record file, or corrupted",
            path.display(),
            String::from_utf8_lossy(&expected).trim_end()
        );
    }
    Ok(())
}

/// Cuts a file after its last newline (a line half-written when the campaign was killed).
fn truncate_partial_line(path: &Path) -> Result<()> {
    let context = || format!("reading {}", path.display());
    let mut f = OpenOptions::new().read(true).write(true).open(path).with_context(|| format!("opening {}", path.display()))?;
    let len = f.metadata().with_context(context)?.len();
    // Backwards from the end, a block at a time, to the last newline.
    let mut end = len;
    let mut keep = 0;
    let mut block = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(block.len() as u64);
        let chunk = &mut block[..(end - start) as usize];
        f.seek(std::io::SeekFrom::Start(start)).with_context(context)?;
        f.read_exact(chunk).with_context(context)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            keep = start + i as u64 + 1;
            break;
        }
        end = start;
    }
    if keep < len {
        f.set_len(keep).with_context(|| format!("truncating {}", path.display()))?;
    }
    Ok(())
}

/// Every row of `runs.csv` in `dir`.
pub fn read_runs(dir: &Path) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for_each_run(dir, |row| rows.push(row))?;
    Ok(rows)
}

/// Hands every row of `runs.csv` in `dir` to `f`, one at a time: a night's campaign writes
/// millions of rows, more than its reports should hold in memory at once.
pub fn for_each_run(dir: &Path, mut f: impl FnMut(Row)) -> Result<()> {
    let path = runs_path(dir);
    let mut reader = csv::Reader::from_path(&path).with_context(|| format!("reading {}", path.display()))?;
    let header = reader.headers().with_context(|| format!("reading {}", path.display()))?.clone();
    let mut record = csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => return Ok(()),
            Ok(true) => {
                if let Some(row) = Row::from_record(&header, &record) {
                    f(row);
                }
            }
            // A partial last record (the campaign is being killed right now) is skipped.
            Err(_) => {}
        }
    }
}

/// Every self-test of `selftests.csv` in `dir` (none when the file is absent).
pub fn read_selftests(dir: &Path) -> Result<Vec<SelfTest>> {
    let mut tests = Vec::new();
    for_each_selftest(dir, |t| tests.push(t))?;
    Ok(tests)
}

/// Every line of `programs.csv` in `dir`.
pub fn read_programs(dir: &Path) -> Result<Vec<ProgramLine>> {
    let mut lines = Vec::new();
    for_each_program(dir, |line| lines.push(line))?;
    Ok(lines)
}

/// Hands every well-formed line of `programs.csv` in `dir` to `f`, one at a time.
pub fn for_each_program(dir: &Path, mut f: impl FnMut(ProgramLine)) -> Result<()> {
    for_each_record(&programs_path(dir), |_, record| {
        if let Some(line) = record.ok().and_then(ProgramLine::from_record) {
            f(line);
        }
        Ok(())
    })
}

/// Hands every well-formed line of `selftests.csv` in `dir` to `f` (none when the file is
/// absent), one at a time.
pub fn for_each_selftest(dir: &Path, mut f: impl FnMut(SelfTest)) -> Result<()> {
    let path = selftests_path(dir);
    if !path.exists() {
        return Ok(());
    }
    for_each_record(&path, |_, record| {
        if let Some(test) = record.ok().and_then(SelfTest::from_record) {
            f(test);
        }
        Ok(())
    })
}


#[cfg(test)]
mod tests {
    use super::*;

    fn row(program: u64, config: &str) -> Row {
        Row {
            program,
            seed: program + 100,
            config_id: config.into(),
            kind: Some(FailureKind::WrongOutput),
            stage: Some(Stage::Qemu),
            detail: "a, \"quoted\"\nline".into(),
            insns: Some(5),
            class_counts: Some([1; NUM_CLASSES]),
            passes_changed: "101".into(),
            ..Row::default()
        }
    }

    fn line(program: u64) -> ProgramLine {
        ProgramLine { program, status: ProgramStatus::Checked, checks: 2, ..ProgramLine::default() }
    }

    #[test]
    fn a_partial_last_line_is_cut_however_long() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("f.csv");
        let long = "x".repeat(200 * 1024);
        for (text, kept) in [
            (format!("a,b\n1,2\n3,{long}"), "a,b\n1,2\n".to_string()),
            (format!("a,b\n{long}\n"), format!("a,b\n{long}\n")),
            (long.clone(), String::new()),
            (String::new(), String::new()),
        ] {
            std::fs::write(&path, &text).expect("write");
            truncate_partial_line(&path).expect("truncate");
            assert_eq!(std::fs::read_to_string(&path).expect("read"), kept);
        }
    }

    #[test]
    fn rows_round_trip_and_resume_drops_incomplete_programs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut records = Records::create(dir.path()).expect("create");
        let test = |program| SelfTest { program, oracle: "dataflow".into(), checked: 3, ..SelfTest::default() };
        records.append_program(&[row(0, "a"), row(0, "b")], &[test(0)], &line(0)).expect("append");
        records.append_program(&[row(1, "a"), row(1, "b")], &[test(1)], &line(1)).expect("append");
        drop(records);
        // A kill while program 2 was being written: one whole row, one half row, no line.
        let mut runs = append_file(&runs_path(dir.path())).expect("open");
        runs.write_all(&csv_bytes([row(2, "a").record()]).expect("csv")).expect("write");
        runs.write_all(b"2,102,,b,").expect("write");
        drop(runs);
        assert!(Records::create(dir.path()).is_err(), "fresh records refuse an existing campaign");

        let (mut records, done) = Records::resume(dir.path()).expect("resume");
        assert_eq!(done.into_iter().collect::<Vec<_>>(), vec![0, 1]);
        records.append_program(&[row(2, "a"), row(2, "b")], &[test(2)], &line(2)).expect("append");
        let rows = read_runs(dir.path()).expect("read");
        assert_eq!(rows.len(), 6);
        assert_eq!(rows[0], row(0, "a").clone_with_detail_flattened());
        assert_eq!(read_programs(dir.path()).expect("read").len(), 3);
        assert_eq!(read_selftests(dir.path()).expect("read").iter().map(|t| t.program).collect::<Vec<_>>(), vec![0, 1, 2]);
    }

    impl Row {
        fn clone_with_detail_flattened(&self) -> Row {
            Row { detail: one_line(&self.detail), ..self.clone() }
        }
    }
}
