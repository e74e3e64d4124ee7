//! The HTML reports rendered by a real browser: headless Chromium (Debian's `chromium`) loads
//! the speedup report of a tiny suite and the history report of the committed nights, and
//! the DOM it builds must hold the charts (inline SVG), the tables and the heat map's links,
//! and its screenshot must not be blank.
//!
//! Chromium is large, so only CI installs it (`.ci/run` sets `SYSY_REQUIRE_BROWSER=1`, which
//! turns a missing browser into a failure); elsewhere the test says it skipped.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn browser() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser", "google-chrome"].iter().find_map(|name| {
        std::env::var_os("PATH")
            .and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(name)).find(|p| p.is_file()))
    });
    if found.is_none() {
        assert!(
            std::env::var_os("SYSY_REQUIRE_BROWSER").is_none(),
            "SYSY_REQUIRE_BROWSER is set but no chromium is on PATH (apt-get install chromium)"
        );
        eprintln!("note: skipping the browser test: no chromium on PATH (apt-get install chromium)");
    }
    found
}

fn harness(args: &[&str], cwd: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_harness")).args(args).current_dir(cwd).output().expect("run harness");
    assert!(out.status.success(), "harness {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Headless Chromium's serialised DOM of `page`, and a screenshot of it into `png`.
fn render(browser: &Path, page: &Path, png: &Path) -> String {
    let url = format!("file://{}", page.canonicalize().expect("page path").display());
    let common = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"];
    let dom = Command::new(browser).args(common).arg("--dump-dom").arg(&url).output().expect("run chromium");
    assert!(dom.status.success(), "chromium --dump-dom: {}", String::from_utf8_lossy(&dom.stderr));
    let shot = Command::new(browser)
        .args(common)
        .arg(format!("--screenshot={}", png.display()))
        .arg("--window-size=1200,2000")
        .arg(&url)
        .output()
        .expect("run chromium");
    assert!(shot.status.success(), "chromium --screenshot: {}", String::from_utf8_lossy(&shot.stderr));
    String::from_utf8_lossy(&dom.stdout).to_string()
}

/// A PNG of more than one colour (a page that failed to render is one flat colour), judged by
/// the size of the compressed image: a flat 1200×2000 PNG is a few kilobytes.
fn assert_not_blank(png: &Path) {
    let bytes = std::fs::read(png).expect("screenshot written");
    assert!(bytes.starts_with(b"\x89PNG"), "not a PNG");
    assert!(bytes.len() > 20_000, "{} bytes: the page looks blank", bytes.len());
}

#[test]
fn reports_render_in_headless_chromium() {
    let Some(browser) = browser() else { return };
    if !common::tools_with_plugin("reports_render_in_headless_chromium") {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report_browser");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("cases")).expect("scratch directory");
    std::fs::write(
        dir.join("cases/sum.sy"),
        "int a[100];\nint main() {\n  int i = 0; int s = 0;\n  while (i < 100) { a[i] = i * 3; i = i + 1; }\n  \
         i = 0;\n  while (i < 100) { s = s + a[i] / 2; i = i + 1; }\n  putint(s); putch(10);\n  return 0;\n}\n",
    )
    .expect("write case");
    // Sum of floor(3i/2) for i < 100 = 7400.
    std::fs::write(dir.join("cases/sum.out"), "7400\n0\n").expect("write expected");
    harness(
        &["report", "speedup", "--suite", "cases", "--base", "mem2reg,gvn,licm,dce", "--no-run-cache", "--out", "speedup"],
        &dir,
    );
    let dom = render(&browser, &dir.join("speedup/index.html"), &dir.join("speedup.png"));
    assert_eq!(dom.matches("<svg").count(), 4, "instructions and cycles bars, heat map, prefix curves");
    assert!(dom.contains("class=\"heatmap\""), "the heat map is in the DOM");
    assert!(dom.contains("<table") && dom.contains("<td>arm-peephole</td>"), "report tables, back-end stages included");
    assert!(dom.contains("href=\"diffs/"), "links to the per-case differences");
    assert_not_blank(&dir.join("speedup.png"));

    let nights = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/nights");
    let mut args: Vec<String> = vec!["report".into(), "history".into()];
    let mut night_dirs: Vec<PathBuf> = std::fs::read_dir(&nights).expect("committed nights").flatten().map(|e| e.path()).collect();
    night_dirs.sort();
    args.extend(night_dirs.iter().map(|p| p.display().to_string()));
    args.extend(["--out".into(), dir.join("history").display().to_string()]);
    harness(&args.iter().map(String::as_str).collect::<Vec<_>>(), &dir);
    let dom = render(&browser, &dir.join("history/index.html"), &dir.join("history.png"));
    assert!(dom.matches("<svg").count() >= 2, "the history charts");
    assert!(dom.contains("<table"), "the history tables");
    assert_not_blank(&dir.join("history.png"));
}
