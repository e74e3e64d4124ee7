//! The campaign's records under damage and faults: truncated or corrupted `runs.csv` /
//! `programs.csv` on `--resume`, a missing campaign directory, a read-only directory and a
//! full disk. Each gives a clear error or a clean recovery — never a panic, never a finished
//! program's rows lost or duplicated.
//!
//! The read-only test uses permissions, or as root (who writes through them) a tmpfs
//! remounted read-only; the full-disk test needs a 64 KiB tmpfs. Tests that need `mount`
//! skip, saying so, where it is not allowed.

use harness::campaign::records::{self, ProgramLine, Records, Row};
use std::path::Path;
use std::process::Command;

fn row(program: u64, config: &str) -> Row {
    Row {
        program,
        seed: program + 7,
        config_id: config.into(),
        label: format!("label-{config}"),
        detail: "some detail, with a comma".into(),
        insns: Some(1234),
        passes_changed: "0110".into(),
        ..Row::default()
    }
}

fn line(program: u64, checks: u64) -> ProgramLine {
    ProgramLine { program, seed: program + 7, status: harness::campaign::records::ProgramStatus::Checked, checks, ..ProgramLine::default() }
}

/// Appends programs `range`, each with two rows.
fn append(records: &mut Records, range: std::ops::Range<u64>) {
    for p in range {
        records.append_program(&[row(p, "a"), row(p, "b")], &[], &line(p, 2)).expect("append");
    }
}

fn programs_of_rows(dir: &Path) -> Vec<u64> {
    records::read_runs(dir).expect("read runs").iter().map(|r| r.program).collect()
}

fn done_list(done: std::collections::BTreeSet<u64>) -> Vec<u64> {
    done.into_iter().collect()
}

fn set_len(path: &Path, len: u64) {
    std::fs::OpenOptions::new().write(true).open(path).expect("open").set_len(len).expect("truncate");
}

#[test]
fn a_runs_csv_cut_inside_finished_programs_makes_them_run_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut records = Records::create(dir.path()).expect("create");
    append(&mut records, 0..4);
    drop(records);
    // Cut in the middle of program 1's second row: programs 1..4 lose rows.
    let runs = records::runs_path(dir.path());
    let text = std::fs::read_to_string(&runs).expect("read");
    let second_row_of_1 = text.match_indices("\n1,8,").nth(1).expect("two rows of program 1").0;
    set_len(&runs, second_row_of_1 as u64 + 6);

    let (mut records, done) = Records::resume(dir.path()).expect("resume");
    assert_eq!(done_list(done), vec![0]);
    let lines: Vec<u64> = records::read_programs(dir.path()).expect("read").iter().map(|l| l.program).collect();
    assert_eq!(lines, vec![0], "lines of programs with missing rows are removed");
    assert_eq!(programs_of_rows(dir.path()), vec![0, 0]);
    append(&mut records, 1..4);
    assert_eq!(programs_of_rows(dir.path()), vec![0, 0, 1, 1, 2, 2, 3, 3]);
    assert_eq!(records::read_programs(dir.path()).expect("read").len(), 4);
}

#[test]
fn record_files_cut_inside_their_header_get_it_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut records = Records::create(dir.path()).expect("create");
    append(&mut records, 0..2);
    drop(records);
    set_len(&records::runs_path(dir.path()), 10);
    set_len(&records::programs_path(dir.path()), 0);

    let (mut records, done) = Records::resume(dir.path()).expect("resume");
    assert!(done.is_empty());
    append(&mut records, 0..2);
    assert_eq!(programs_of_rows(dir.path()), vec![0, 0, 1, 1]);
    assert_eq!(records::read_programs(dir.path()).expect("read").len(), 2);
    let header = std::fs::read_to_string(records::runs_path(dir.path())).expect("read");
    assert!(header.starts_with(&records::runs_header().join(",")), "{header}");
}

#[test]
fn a_corrupted_record_or_foreign_header_is_an_error_that_changes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut records = Records::create(dir.path()).expect("create");
    append(&mut records, 0..3);
    drop(records);
    let runs = records::runs_path(dir.path());
    let programs = records::programs_path(dir.path());
    let good = std::fs::read(&runs).expect("read");

    // Binary garbage in place of a row in the middle (a different number of fields).
    let text = String::from_utf8(good.clone()).expect("utf-8");
    let at = text.find("\n1,8,").expect("a row of program 1") + 1;
    let mut corrupted = good[..at].to_vec();
    corrupted.extend_from_slice(b"\x00\xff\xfe,garbage\n");
    corrupted.extend_from_slice(&good[at..]);
    std::fs::write(&runs, &corrupted).expect("write");
    let programs_before = std::fs::read(&programs).expect("read");
    let error = Records::resume(dir.path()).err().expect("a corrupted runs.csv is refused");
    assert!(format!("{error:#}").contains("runs.csv"), "{error:#}");
    assert_eq!(std::fs::read(&runs).expect("read"), corrupted);
    assert_eq!(std::fs::read(&programs).expect("read"), programs_before);

    std::fs::write(&runs, b"not,a,campaign\n1,2,3\n").expect("write");
    let error = Records::resume(dir.path()).err().expect("a foreign header is refused");
    assert!(format!("{error:#}").contains("header"), "{error:#}");
    assert_eq!(std::fs::read(&runs).expect("read"), b"not,a,campaign\n1,2,3\n");
    assert_eq!(std::fs::read(&programs).expect("read"), programs_before);
}

#[test]
fn a_missing_campaign_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("no-such-campaign");
    let error = Records::resume(&missing).err().expect("nothing to resume");
    assert!(format!("{error:#}").contains("no-such-campaign"), "{error:#}");
    let error = harness::campaign::load_options(&missing).expect_err("no campaign.json");
    assert!(format!("{error:#}").contains("campaign.json"), "{error:#}");

    // The command line says the same and exits 1 (a panic would exit 101).
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["campaign", "--resume"])
        .arg(&missing)
        .output()
        .expect("harness runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("campaign.json") && !stderr.contains("panicked"), "{stderr}");
}

/// Fills `dir` with records of two finished programs plus rows of an unfinished one (so that
/// resuming must rewrite `runs.csv`) and an empty `fresh/`; returns the `runs.csv` text.
fn records_needing_a_rewrite(dir: &Path) -> String {
    let mut records = Records::create(dir).expect("create");
    append(&mut records, 0..2);
    drop(records);
    let runs = records::runs_path(dir);
    let mut text = std::fs::read_to_string(&runs).expect("read");
    text.push_str("2,9,,a,label-a,,,pass,,,,,,,0,0,,,0,0,,,\n");
    std::fs::write(&runs, &text).expect("write");
    std::fs::create_dir(dir.join("fresh")).expect("mkdir");
    text
}

/// In a read-only `dir` prepared by [`records_needing_a_rewrite`]: clear errors, no change.
fn assert_read_only_refused(dir: &Path, text: &str) {
    let error = Records::create(&dir.join("fresh")).err().expect("no records in a read-only directory");
    assert!(format!("{error:#}").contains("runs.csv"), "{error:#}");
    let error = Records::resume(dir).err().expect("runs.csv cannot be rewritten");
    assert!(format!("{error:#}").contains(&dir.display().to_string()), "{error:#}");
    assert_eq!(std::fs::read_to_string(records::runs_path(dir)).expect("read"), text, "the records are kept");
}

#[cfg(unix)]
#[test]
fn a_read_only_directory_is_a_clear_error_and_keeps_the_records() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let text = records_needing_a_rewrite(dir.path());
    let fresh = dir.path().join("fresh");
    let mode = |m: u32| {
        for d in [dir.path(), fresh.as_path()] {
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(m)).expect("chmod");
        }
    };
    mode(0o555);
    let writable = std::fs::write(fresh.join("probe"), b"").is_ok();
    if !writable {
        assert_read_only_refused(dir.path(), &text);
    }
    mode(0o755);
    if writable {
        // Root writes through permissions: use a file system mounted read-only instead.
        let Some(disk) = TinyDisk::mount("1m") else {
            eprintln!("skipping read-only directory test: root, and no tmpfs to remount read-only");
            return;
        };
        let text = records_needing_a_rewrite(disk.dir.path());
        assert!(disk.remount_read_only(), "remounting the tmpfs read-only");
        assert_read_only_refused(disk.dir.path(), &text);
    }
}

/// A small tmpfs mounted on a fresh directory, unmounted on drop.
struct TinyDisk {
    dir: tempfile::TempDir,
}

impl TinyDisk {
    fn mount(size: &str) -> Option<TinyDisk> {
        let dir = tempfile::tempdir().ok()?;
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .ok()?;
        status.success().then_some(TinyDisk { dir })
    }

    fn remount_read_only(&self) -> bool {
        Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(self.dir.path())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl Drop for TinyDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn a_full_disk_is_an_error_and_resume_keeps_every_finished_program() {
    let Some(disk) = TinyDisk::mount("64k") else {
        eprintln!("skipping full-disk test: cannot mount a tmpfs (needs root)");
        return;
    };
    let dir = disk.dir.path().join("campaign");
    std::fs::create_dir(&dir).expect("mkdir");
    let mut records = Records::create(&dir).expect("create");
    // Space the user can free later.
    let ballast = disk.dir.path().join("ballast");
    std::fs::write(&ballast, vec![0u8; 24 << 10]).expect("ballast");
    let mut finished = 0u64;
    let error = loop {
        assert!(finished < 10_000, "a 64 KiB disk never filled up");
        match records.append_program(&[row(finished, "a"), row(finished, "b")], &[], &line(finished, 2)) {
            Ok(()) => finished += 1,
            Err(e) => break e,
        }
    };
    drop(records);
    assert!(format!("{error:#}").contains("No space left"), "{error:#}");
    assert!(finished > 10, "only {finished} programs fit");

    // Still full: resuming has to rewrite runs.csv (the failed program left rows), which
    // fails cleanly; the complete lines are kept, and no temporary file is left behind.
    let runs = records::runs_path(&dir);
    let before = std::fs::read(&runs).expect("read");
    let complete_lines = &before[..before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)];
    if let Err(e) = Records::resume(&dir) {
        assert!(format!("{e:#}").contains("No space left"), "{e:#}");
        assert_eq!(std::fs::read(&runs).expect("read"), complete_lines);
        let names: Vec<String> = std::fs::read_dir(&dir)
            .expect("ls")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }
    // Room again: every finished program survives, once, and the campaign can go on.
    std::fs::remove_file(&ballast).expect("free space");
    let (mut records, done) = Records::resume(&dir).expect("resume");
    assert_eq!(done_list(done), (0..finished).collect::<Vec<_>>());
    let expected: Vec<u64> = (0..finished).flat_map(|p| [p, p]).collect();
    assert_eq!(programs_of_rows(&dir), expected);
    append(&mut records, finished..finished + 1);
    assert_eq!(records::read_programs(&dir).expect("read").len() as u64, finished + 1);
}
