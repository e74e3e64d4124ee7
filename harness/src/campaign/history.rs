//! `harness report history DIR... [--out DIR]`: campaign nights side by side.
//!
//! Each DIR is a campaign or merged directory; only its small files are read
//! (`stats.csv`, `failures.csv`, `campaign.json` or `merge.json`), so nights whose raw rows
//! were compressed or expired still report. Nights are shown in the order given (pass them
//! oldest first). For each night: throughput (checks/s of its last session, or of the
//! shards side by side for a merge), programs, checks, failing checks, and the distinct
//! failures ([`super::nightly`] keys) compared with the night before: new, fixed (gone
//! since), still open, per culprit pass; and how often each pass changed the program it ran
//! on. Writes `history.md` and `index.html` (HTML tables and SVG charts drawn with
//! `plotters`) into the output directory.

use super::nightly::{read_failure_keys, read_stats};
use crate::speedup::chart::{PALETTE, draw_error};
use crate::speedup::markdown::escape;
use anyhow::{Context, Result, bail};
use plotters::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct HistoryArgs {
    /// Campaign or merged directories, oldest first.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where `history.md` and `index.html` go.
    #[arg(long, default_value = "results/history")]
    pub out: PathBuf,
}

/// One night's figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Night {
    pub name: String,
    pub seed: Option<u64>,
    pub programs: u64,
    pub checks: u64,
    pub failures: u64,
    pub checks_per_s: f64,
    /// Distinct failure key → culprit.
    pub distinct: BTreeMap<String, String>,
    /// Pass → (pipeline positions run, positions that changed the program).
    pub pass_changes: BTreeMap<String, (u64, u64)>,
}

impl Night {
    /// Reads the night of `dir`.
    pub fn read(dir: &Path) -> Result<Night> {
        let stats = read_stats(dir);
        if stats.is_empty() {
            bail!("{}: no stats.csv (not a campaign directory, or it has not reported yet)", dir.display());
        }
        let num = |k: &str| stats.get(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        let mut pass_changes: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for (k, v) in &stats {
            let n = v.parse().unwrap_or(0);
            if let Some(pass) = k.strip_prefix("pass_runs:") {
                pass_changes.entry(pass.to_string()).or_default().0 = n;
            } else if let Some(pass) = k.strip_prefix("pass_changed:") {
                pass_changes.entry(pass.to_string()).or_default().1 = n;
            }
        }
        let distinct = read_failure_keys(dir)?.into_iter().map(|(key, (culprit, _))| (key, culprit)).collect();
        let seed = std::fs::read_to_string(dir.join("campaign.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["seed"].as_u64());
        let name = dir
            .canonicalize()
            .unwrap_or_else(|_| dir.to_path_buf())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| dir.display().to_string());
        Ok(Night {
            name,
            seed,
            programs: num("programs") as u64,
            checks: num("checks") as u64,
            failures: num("failures") as u64,
            checks_per_s: num("session_checks_per_s"),
            distinct,
            pass_changes,
        })
    }
}

/// A night's distinct failures compared with the night before it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Change {
    pub new: BTreeSet<String>,
    pub fixed: BTreeSet<String>,
    pub open: BTreeSet<String>,
}

/// The changes of each night (the first night's failures are all new).
pub fn changes(nights: &[Night]) -> Vec<Change> {
    let empty = BTreeMap::new();
    nights
        .iter()
        .enumerate()
        .map(|(i, night)| {
            let before = if i == 0 { &empty } else { &nights[i - 1].distinct };
            Change {
                new: night.distinct.keys().filter(|k| !before.contains_key(*k)).cloned().collect(),
                fixed: before.keys().filter(|k| !night.distinct.contains_key(*k)).cloned().collect(),
                open: night.distinct.keys().filter(|k| before.contains_key(*k)).cloned().collect(),
            }
        })
        .collect()
}

fn rate(runs: u64, changed: u64) -> Option<f64> {
    (runs > 0).then(|| changed as f64 / runs as f64)
}

/// Culprit → per night (new, fixed, open).
fn by_culprit(nights: &[Night], changes: &[Change]) -> BTreeMap<String, Vec<(u64, u64, u64)>> {
    let mut out: BTreeMap<String, Vec<(u64, u64, u64)>> = BTreeMap::new();
    let culprit_of = |key: &String, i: usize| {
        nights[i].distinct.get(key).or_else(|| i.checked_sub(1).and_then(|j| nights[j].distinct.get(key))).cloned().unwrap_or_default()
    };
    for (i, c) in changes.iter().enumerate() {
        for (set, slot) in [(&c.new, 0), (&c.fixed, 1), (&c.open, 2)] {
            for key in set {
                let row = out.entry(culprit_of(key, i)).or_insert_with(|| vec![(0, 0, 0); nights.len()]);
                match slot {
                    0 => row[i].0 += 1,
                    1 => row[i].1 += 1,
                    _ => row[i].2 += 1,
                }
            }
        }
    }
    out
}

fn all_passes(nights: &[Night]) -> BTreeSet<String> {
    nights.iter().flat_map(|n| n.pass_changes.keys().cloned()).collect()
}

/// `history.md`.
pub fn markdown(nights: &[Night]) -> String {
    let changes = changes(nights);
    let mut s = String::from("# Campaign history\n\n");
    let _ = writeln!(s, "| night | seed | programs | checks | checks/s | failing checks | distinct failures | new | fixed | still open |");
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|---|");
    for (n, c) in nights.iter().zip(&changes) {
        let seed = n.seed.map(|s| s.to_string()).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            s,
            "| {} | {seed} | {} | {} | {:.2} | {} | {} | {} | {} | {} |",
            n.name,
            n.programs,
            n.checks,
            n.checks_per_s,
            n.failures,
            n.distinct.len(),
            c.new.len(),
            c.fixed.len(),
            c.open.len()
        );
    }
    let culprits = by_culprit(nights, &changes);
    let _ = writeln!(s, "\n## Distinct failures by culprit (new / fixed / still open)\n");
    if culprits.is_empty() {
        let _ = writeln!(s, "No failures in any night.");
    } else {
        let header: Vec<&str> = nights.iter().map(|n| n.name.as_str()).collect();
        let _ = writeln!(s, "| culprit | {} |\n|---|{}", header.join(" | "), "---|".repeat(nights.len()));
        for (culprit, row) in &culprits {
            let cells: Vec<String> = row.iter().map(|(a, b, c)| format!("{a} / {b} / {c}")).collect();
            let _ = writeln!(s, "| {culprit} | {} |", cells.join(" | "));
        }
    }
    let _ = writeln!(s, "\n## How often each pass changed the program (share of pipeline positions)\n");
    let header: Vec<&str> = nights.iter().map(|n| n.name.as_str()).collect();
    let _ = writeln!(s, "| pass | {} |\n|---|{}", header.join(" | "), "---|".repeat(nights.len()));
    for pass in all_passes(nights) {
        let cells: Vec<String> = nights
            .iter()
            .map(|n| {
                let (runs, changed) = n.pass_changes.get(&pass).copied().unwrap_or_default();
                rate(runs, changed).map_or("-".into(), |r| format!("{:.1}%", 100.0 * r))
            })
            .collect();
        let _ = writeln!(s, "| {pass} | {} |", cells.join(" | "));
    }
    s
}

/// A line chart of one figure per night.
fn line_svg(title: &str, nights: &[Night], series: &[(&str, Vec<f64>)]) -> Result<String, String> {
    let n = nights.len().max(1);
    let hi = series.iter().flat_map(|(_, v)| v.iter().copied()).fold(0.0f64, f64::max) * 1.15 + 1e-9;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 340)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..(n as f64 - 0.5), 0.0..hi)
            .map_err(draw_error)?;
        let names: Vec<String> = nights.iter().map(|n| n.name.clone()).collect();
        chart
            .configure_mesh()
            .x_labels(n)
            .x_label_formatter(&|x| night_label(&names, *x))
            .draw()
            .map_err(draw_error)?;
        for (k, (label, values)) in series.iter().enumerate() {
            let color = PALETTE[k % PALETTE.len()];
            let points: Vec<(f64, f64)> = values.iter().enumerate().map(|(i, v)| (i as f64, *v)).collect();
            chart
                .draw_series(LineSeries::new(points.iter().copied(), color.stroke_width(2)))
                .map_err(draw_error)?
                .label(*label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
            chart.draw_series(points.iter().map(|&p| Circle::new(p, 4, color.filled()))).map_err(draw_error)?;
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(draw_error)?;
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// The axis label at `x`: the night's name at whole positions, nothing between them.
fn night_label(names: &[String], x: f64) -> String {
    let i = x.round();
    if (x - i).abs() < 1e-6 && i >= 0.0 { names.get(i as usize).cloned().unwrap_or_default() } else { String::new() }
}

/// Grouped bars per night: new, fixed and still-open distinct failures.
fn failures_svg(nights: &[Night], changes: &[Change]) -> Result<String, String> {
    let n = nights.len().max(1);
    let groups: [(&str, Vec<usize>); 3] = [
        ("new", changes.iter().map(|c| c.new.len()).collect()),
        ("fixed", changes.iter().map(|c| c.fixed.len()).collect()),
        ("still open", changes.iter().map(|c| c.open.len()).collect()),
    ];
    let hi = groups.iter().flat_map(|(_, v)| v.iter().copied()).max().unwrap_or(0).max(1) as f64 * 1.2;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, 340)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption("Distinct failures per night", ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d(-0.5..(n as f64 - 0.5), 0.0..hi)
            .map_err(draw_error)?;
        let names: Vec<String> = nights.iter().map(|n| n.name.clone()).collect();
        chart
            .configure_mesh()
            .x_labels(n)
            .x_label_formatter(&|x| night_label(&names, *x))
            .draw()
            .map_err(draw_error)?;
        for (k, (label, values)) in groups.iter().enumerate() {
            let color = PALETTE[k % PALETTE.len()];
            let left = -0.35 + 0.24 * k as f64;
            let bars = values.iter().enumerate().map(move |(i, v)| {
                Rectangle::new([(i as f64 + left, 0.0), (i as f64 + left + 0.22, *v as f64)], color.filled())
            });
            chart
                .draw_series(bars)
                .map_err(draw_error)?
                .label(*label)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
        }
        chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw().map_err(draw_error)?;
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut s = String::from("<table>\n<thead><tr>");
    for h in header {
        let _ = write!(s, "<th>{}</th>", escape(h));
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        s.push_str("<tr>");
        for cell in row {
            // Cells are escaped text, except pre-rendered ones marked by a leading NUL.
            match cell.strip_prefix('\0') {
                Some(html) => s.push_str(html),
                None => {
                    let _ = write!(s, "<td>{}</td>", escape(cell));
                }
            }
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody>\n</table>\n");
    s
}

/// `index.html`: the tables of [`markdown`] as HTML tables, with charts.
pub fn html(nights: &[Night]) -> Result<String> {
    let changes = changes(nights);
    let throughput = line_svg("Checks per second", nights, &[("checks/s", nights.iter().map(|n| n.checks_per_s).collect())])
        .map_err(anyhow::Error::msg)?;
    let volume = line_svg(
        "Programs and failing checks per night",
        nights,
        &[
            ("programs", nights.iter().map(|n| n.programs as f64).collect()),
            ("failing checks", nights.iter().map(|n| n.failures as f64).collect()),
        ],
    )
    .map_err(anyhow::Error::msg)?;
    let failures = failures_svg(nights, &changes).map_err(anyhow::Error::msg)?;

    let mut page = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Campaign history</title>\n<style>\
         body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;margin:1em 0}\
         th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}th:first-child,td:first-child{text-align:left}\
         thead{background:#eee}</style></head><body>\n<h1>Campaign history</h1>\n",
    );
    let header: Vec<String> =
        ["night", "seed", "programs", "checks", "checks/s", "failing checks", "distinct failures", "new", "fixed", "still open"]
            .map(String::from)
            .to_vec();
    let rows: Vec<Vec<String>> = nights
        .iter()
        .zip(&changes)
        .map(|(n, c)| {
            vec![
                n.name.clone(),
                n.seed.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
                n.programs.to_string(),
                n.checks.to_string(),
                format!("{:.2}", n.checks_per_s),
                n.failures.to_string(),
                n.distinct.len().to_string(),
                c.new.len().to_string(),
                c.fixed.len().to_string(),
                c.open.len().to_string(),
            ]
        })
        .collect();
    page.push_str(&table(&header, &rows));
    for svg in [&throughput, &volume, &failures] {
        let _ = writeln!(page, "<figure>{svg}</figure>");
    }

    let names: Vec<String> = nights.iter().map(|n| n.name.clone()).collect();
    page.push_str("<h2>Distinct failures by culprit (new / fixed / still open)</h2>\n");
    let culprits = by_culprit(nights, &changes);
    if culprits.is_empty() {
        page.push_str("<p>No failures in any night.</p>\n");
    } else {
        let header: Vec<String> = std::iter::once("culprit".to_string()).chain(names.iter().cloned()).collect();
        let rows: Vec<Vec<String>> = culprits
            .iter()
            .map(|(culprit, row)| {
                std::iter::once(culprit.clone()).chain(row.iter().map(|(a, b, c)| format!("{a} / {b} / {c}"))).collect()
            })
            .collect();
        page.push_str(&table(&header, &rows));
    }

    page.push_str("<h2>How often each pass changed the program</h2>\n<p>Share of the pipeline positions of the pass that changed the module; darker is more often.</p>\n");
    let header: Vec<String> = std::iter::once("pass".to_string()).chain(names.iter().cloned()).collect();
    let rows: Vec<Vec<String>> = all_passes(nights)
        .into_iter()
        .map(|pass| {
            let cells = nights.iter().map(|n| {
                let (runs, changed) = n.pass_changes.get(&pass).copied().unwrap_or_default();
                match rate(runs, changed) {
                    Some(r) => {
                        let light = 97.0 - 45.0 * r;
                        format!("\0<td style=\"background:hsl(210,70%,{light:.0}%)\">{:.1}%</td>", 100.0 * r)
                    }
                    None => "-".into(),
                }
            });
            std::iter::once(pass.clone()).chain(cells).collect()
        })
        .collect();
    page.push_str(&table(&header, &rows));
    page.push_str("</body></html>\n");
    Ok(page)
}

/// `harness report history`.
pub fn run(args: &HistoryArgs) -> Result<()> {
    let nights: Vec<Night> = args.dirs.iter().map(|d| Night::read(d)).collect::<Result<_>>()?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let write = |name: &str, text: &str| {
        let path = args.out.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
    };
    write("history.md", &markdown(&nights))?;
    write("index.html", &html(&nights)?)?;
    crate::outln!("{} nights; report: {}", nights.len(), args.out.join("index.html").display())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn night(name: &str, keys: &[(&str, &str)], cps: f64) -> Night {
        Night {
            name: name.into(),
            programs: 10,
            checks: 40,
            checks_per_s: cps,
            distinct: keys.iter().map(|(k, c)| (k.to_string(), c.to_string())).collect(),
            pass_changes: BTreeMap::from([("dce".into(), (10, 4)), ("gvn".into(), (0, 0))]),
            ..Night::default()
        }
    }

    #[test]
    fn nights_compare_with_the_night_before() {
        let nights = vec![
            night("n1", &[("a", "gvn"), ("b", "licm")], 2.0),
            night("n2", &[("b", "licm"), ("c", "gvn")], 3.0),
            night("n3", &[], 4.0),
        ];
        let c = changes(&nights);
        assert_eq!(c[0].new.len(), 2);
        assert_eq!((c[1].new.len(), c[1].fixed.len(), c[1].open.len()), (1, 1, 1));
        assert_eq!((c[2].new.len(), c[2].fixed.len(), c[2].open.len()), (0, 2, 0));
        let md = markdown(&nights);
        assert!(md.contains("| n2 | - | 10 | 40 | 3.00 | 0 | 2 | 1 | 1 | 1 |"), "{md}");
        assert!(md.contains("| gvn | 1 / 0 / 0 | 1 / 1 / 0 | 0 / 1 / 0 |"), "{md}");
        assert!(md.contains("| licm | 1 / 0 / 0 | 0 / 0 / 1 | 0 / 1 / 0 |"), "{md}");
        assert!(md.contains("| dce | 40.0% | 40.0% | 40.0% |") && md.contains("| gvn | - | - | - |"), "{md}");
        let page = html(&nights).expect("html");
        assert_eq!(page.matches("<svg").count(), 3, "three charts");
        assert!(page.contains("<th>still open</th>") && page.contains("40.0%</td>"));
        assert!(!page.contains('\0'));
    }

    #[test]
    fn nights_are_read_from_their_small_files() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("night-1");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(
            dir.join("stats.csv"),
            "metric,value\nprograms,12\nchecks,48\nfailures,2\nsession_checks_per_s,3.50\npass_runs:dce,12\npass_changed:dce,6\n",
        )
        .expect("write");
        std::fs::write(dir.join("failures.csv"), "key,culprit,kind\ngvn|crash|aa,gvn,crash\n").expect("write");
        std::fs::write(dir.join("campaign.json"), r#"{"seed": 77}"#).expect("write");
        let night = Night::read(&dir).expect("night");
        assert_eq!((night.name.as_str(), night.seed, night.programs, night.checks, night.failures), ("night-1", Some(77), 12, 48, 2));
        assert_eq!(night.checks_per_s, 3.5);
        assert_eq!(night.pass_changes["dce"], (12, 6));
        assert_eq!(night.distinct["gvn|crash|aa"], "gvn");
        let out = tmp.path().join("report");
        run(&HistoryArgs { dirs: vec![dir.clone(), dir], out: out.clone() }).expect("report");
        assert!(std::fs::read_to_string(out.join("history.md")).expect("md").contains("| night-1 | 77 | 12 | 48 | 3.50 | 2 | 1 | 0 | 0 | 1 |"));
        assert!(out.join("index.html").exists());
        let err = Night::read(tmp.path()).expect_err("no stats.csv");
        assert!(err.to_string().contains("no stats.csv"), "{err}");
    }
}
