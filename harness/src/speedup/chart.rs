//! The HTML page of the speedup report: SVG charts drawn with `plotters` (SVG backend) and
//! the markdown's tables, self-contained in one file.
//!
//! Charts: (1) a horizontal-free bar chart of each pass's leave-one-out and add-one geomean
//! instruction speedup (bars start at 1.0, so a pass that hurts goes below the line);
//! (2) the prefix curves: for each benchmark, instructions after the first k passes relative
//! to -O0 (k = 0), so benchmarks of very different sizes share one axis.

use super::markdown::{escape, to_html};
use super::{Mode, SpeedupData};
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

pub(crate) fn draw_error<E: std::fmt::Debug>(e: E) -> String {
    format!("drawing a chart: {e:?}")
}

/// What a chart measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Instructions,
    Cycles,
}

impl Metric {
    fn name(self) -> &'static str {
        match self {
            Metric::Instructions => "instruction",
            Metric::Cycles => "estimated-cycle",
        }
    }
}

/// Horizontal bar chart of geomean speedups per pass (`metric`), leave-one-out and add-one
/// side by side, passes sorted by their leave-one-out speedup (largest first). Horizontal, so
/// that thirty-odd pass names stay readable at page width.
pub fn pass_bars_svg(data: &SpeedupData, metric: Metric) -> Result<String, String> {
    let summaries = data.summaries();
    let value = |mode: Mode, pass: &str| {
        summaries
            .iter()
            .find(|s| s.pair.mode == mode && s.pair.pass == pass)
            .and_then(|s| match metric {
                Metric::Instructions => s.geomean_insns,
                Metric::Cycles => s.geomean_cycles,
            })
    };
    let mut passes: Vec<&str> = Vec::new();
    for s in &summaries {
        if matches!(s.pair.mode, Mode::LeaveOneOut | Mode::AddOne) && !passes.contains(&s.pair.pass) {
            passes.push(s.pair.pass);
        }
    }
    let key = |p: &str| value(Mode::LeaveOneOut, p).or(value(Mode::AddOne, p)).unwrap_or(1.0);
    passes.sort_by(|a, b| key(b).total_cmp(&key(a)).then(a.cmp(b)));
    let values: Vec<f64> = passes
        .iter()
        .flat_map(|p| [value(Mode::LeaveOneOut, p), value(Mode::AddOne, p)])
        .flatten()
        .collect();
    let hi = values.iter().copied().fold(1.0f64, f64::max) * 1.05 + 0.01;
    let lo = values.iter().copied().fold(1.0f64, f64::min).min(0.95) - 0.01;
    let n = passes.len().max(1);
    let height = (110 + 30 * n) as u32;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (1000, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(format!("Geomean {} speedup per pass", metric.name()), ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(170)
            .build_cartesian_2d(lo..hi, 0.0..n as f64)
            .map_err(draw_error)?;
        let labels = passes.clone();
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n * 2 + 1)
            .y_label_formatter(&|y| {
                // Row i (from the top) spans [n-1-i, n-i); its label sits at the middle.
                let from_top = n as f64 - y;
                let i = from_top.floor() as usize;
                if (from_top - from_top.floor() - 0.5).abs() < 0.26 {
                    labels.get(i).map(|s| s.to_string()).unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc("speedup (×, >1 = faster)")
            .x_label_formatter(&|x| format!("{x:.2}"))
            .label_style(("sans-serif", 14))
            .draw()
            .map_err(draw_error)?;
        let families = [(Mode::LeaveOneOut, 0.52), (Mode::AddOne, 0.12)];
        // Only the measured families get a series, so the legend never names one without bars.
        for (series, (mode, offset)) in families.into_iter().enumerate().filter(|(_, (m, _))| data.has_mode(*m)) {
            let color = PALETTE[series];
            let bars: Vec<Rectangle<(f64, f64)>> = passes
                .iter()
                .enumerate()
                .filter_map(|(i, p)| {
                    let v = value(mode, p)?;
                    let y = (n - 1 - i) as f64 + offset;
                    Some(Rectangle::new([(1.0, y), (v, y + 0.36)], color.filled()))
                })
                .collect();
            chart
                .draw_series(bars)
                .map_err(draw_error)?
                .label(mode.name())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], PALETTE[series].filled()));
        }
        chart
            .draw_series(LineSeries::new([(1.0, 0.0), (1.0, n as f64)], BLACK.stroke_width(1)))
            .map_err(draw_error)?;
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(draw_error)?;
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// Prefix curves: instructions after the first k passes relative to -O0, one line per benchmark.
pub fn prefix_curves_svg(data: &SpeedupData) -> Result<String, String> {
    let curves: Vec<(String, Vec<(f64, f64)>)> = data
        .benchmarks
        .iter()
        .map(|b| {
            let curve = data.prefix_curve(b);
            let base = curve.first().and_then(|c| c.1);
            let points = curve
                .iter()
                .filter_map(|&(k, insns, _)| Some((k as f64, insns? as f64 / base? as f64)))
                .collect();
            (b.name.clone(), points)
        })
        .collect();
    let hi = curves
        .iter()
        .flat_map(|c| c.1.iter().map(|p| p.1))
        .fold(1.0f64, f64::max)
        * 1.05;
    let k_max = data.base.len().max(1) as f64;
    let mut svg = String::new();
    {
        // Tall enough for one legend line per benchmark.
        let height = 460_u32.max(70 + 20 * curves.len() as u32);
        let root = SVGBackend::with_string(&mut svg, (900, height)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        // The legend gets its own column so that it never hides a curve.
        let (plot_area, legend_area) = root.split_horizontally(700);
        let mut chart = ChartBuilder::on(&plot_area)
            .caption("Prefix curves: instructions after the first k passes, relative to -O0", ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..k_max, 0.0..hi)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_labels(data.base.len() + 1)
            .x_label_formatter(&|x| {
                if (x - x.round()).abs() > 0.01 { String::new() } else { format!("{}", x.round() as usize) }
            })
            .x_desc("k (passes of the base pipeline applied, listed below)")
            .y_desc("insns / insns at -O0")
            .y_label_formatter(&|y| format!("{y:.2}"))
            .draw()
            .map_err(draw_error)?;
        for (i, (name, points)) in curves.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            chart
                .draw_series(LineSeries::new(points.iter().copied(), color.stroke_width(2)))
                .map_err(draw_error)?;
            chart
                .draw_series(points.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(draw_error)?;
            let y = 50 + 20 * i as i32;
            legend_area
                .draw(&PathElement::new([(10, y), (34, y)], color.stroke_width(3)))
                .map_err(draw_error)?;
            legend_area
                .draw(&Text::new(name.clone(), (40, y - 7), ("sans-serif", 13)))
                .map_err(draw_error)?;
        }
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// Width of a heat-map cell, and the room for the row and column labels.
const CELL: usize = 16;
const ROW_LABELS: usize = 230;
const COLUMN_LABELS: usize = 130;

/// The heat map's colour of a speedup: green above 1, red below, the shade saturating at
/// ×1.5 / ×(1/1.5) (log scale, so that a slowdown and a speedup of one factor look alike; one
/// pass rarely moves a benchmark further); grey without a value.
pub fn heat_colour(speedup: Option<f64>) -> String {
    let Some(s) = speedup else { return "#bbbbbb".to_string() };
    let t = (s.ln() / 1.5f64.ln()).clamp(-1.0, 1.0);
    let fade = |t: f64| (255.0 * (1.0 - t.abs()).powf(0.8)).round() as u8;
    let f = fade(t);
    if t >= 0.0 { format!("#{f:02x}{:02x}{f:02x}", 200u8.max(f)) } else { format!("#{:02x}{f:02x}{f:02x}", 220u8.max(f)) }
}

/// A benchmark × pass heat map of leave-one-out instruction speedups (cycles in each cell's
/// tooltip), hand-written SVG so that a cell can link to its differences (`links`, keyed by
/// benchmark and pass).
pub fn heatmap_svg(data: &SpeedupData, links: &BTreeMap<(String, Mode, String), String>) -> String {
    let results = data.results();
    let mut passes: Vec<&str> = Vec::new();
    for p in data.pairs.iter().filter(|p| p.mode == Mode::LeaveOneOut) {
        if !passes.contains(&p.pass) {
            passes.push(p.pass);
        }
    }
    // Wide enough for the title even with few columns.
    let width = (ROW_LABELS + CELL * passes.len() + 20).max(900);
    let height = COLUMN_LABELS + CELL * data.benchmarks.len() + 40;
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" class=\"heatmap\" \
         width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"sans-serif\" font-size=\"11\">\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\
         <text x=\"4\" y=\"16\" font-size=\"14\">Leave-one-out instruction speedup, benchmark × pass \
         (green: the pass helps, red: it hurts, grey: no valid pair)</text>"
    );
    for (j, pass) in passes.iter().enumerate() {
        let x = ROW_LABELS + CELL * j + CELL / 2 + 4;
        let _ = write!(
            svg,
            "<text transform=\"translate({x},{}) rotate(-60)\">{}</text>",
            COLUMN_LABELS - 4,
            escape(pass)
        );
    }
    for (i, bench) in data.benchmarks.iter().enumerate() {
        let y = COLUMN_LABELS + CELL * i;
        let _ = write!(svg, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", ROW_LABELS - 6, y + CELL - 4, escape(&bench.name));
        for (j, pass) in passes.iter().enumerate() {
            let r = results.iter().find(|r| r.benchmark == bench.name && r.pair.mode == Mode::LeaveOneOut && r.pair.pass == *pass);
            let (insns, cycles) = r.map_or((None, None), |r| (r.speedup_insns(), r.speedup_cycles()));
            let show = |x: Option<f64>| x.map_or("n/a".to_string(), |x| format!("{x:.4}"));
            let cell = format!(
                "<rect x=\"{}\" y=\"{y}\" width=\"{CELL}\" height=\"{CELL}\" fill=\"{}\" stroke=\"#ffffff\">\
                 <title>{} without {}: instructions ×{}, cycles ×{}</title></rect>",
                ROW_LABELS + CELL * j,
                heat_colour(insns),
                escape(&bench.name),
                escape(pass),
                show(insns),
                show(cycles)
            );
            match links.get(&(bench.name.clone(), Mode::LeaveOneOut, pass.to_string())) {
                Some(href) => {
                    let _ = write!(svg, "<a href=\"{0}\" xlink:href=\"{0}\">{cell}</a>", escape(href));
                }
                None => svg.push_str(&cell),
            }
        }
    }
    svg.push_str("</svg>");
    svg
}

/// The HTML page: the instruction and cycle bar charts, the heat map (cells linking to
/// `links`), the prefix curves, then the markdown report as HTML (tables, lists, headings).
pub fn html(data: &SpeedupData, markdown: &str, links: &BTreeMap<(String, Mode, String), String>) -> Result<String, String> {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>sysyc per-pass speedups</title>\
         <style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}}\
         table{{border-collapse:collapse;margin:1em 0;font-size:13px}}th,td{{border:1px solid #ccc;padding:2px 6px}}\
         thead{{background:#eee}}code{{background:#f6f6f6}}\
         figure{{margin:1.5em 0}}figure svg{{max-width:100%;height:auto}}</style></head><body>\n\
         <h1>sysyc per-pass speedups</h1>\n<p>Base pipeline: <code>{}</code>; {} benchmarks.</p>\n",
        escape(&data.base.join(",")),
        data.benchmarks.len()
    );
    let _ = writeln!(page, "<figure>{}</figure>", pass_bars_svg(data, Metric::Instructions)?);
    let _ = writeln!(page, "<figure>{}</figure>", pass_bars_svg(data, Metric::Cycles)?);
    if data.has_mode(Mode::LeaveOneOut) {
        let _ = writeln!(page, "<figure>{}</figure>", heatmap_svg(data, links));
    }
    if data.has_mode(super::Mode::Prefix) {
        let _ = write!(page, "<figure>{}<figcaption><ol start=\"1\">", prefix_curves_svg(data)?);
        for pass in &data.base {
            let _ = write!(page, "<li>{}</li>", escape(pass));
        }
        let _ = writeln!(page, "</ol></figcaption></figure>");
    }
    let _ = write!(page, "<section class=\"report\">\n{}</section>\n</body></html>\n", to_html(markdown));
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conform::Verdict;
    use crate::speedup::{BenchmarkRuns, ConfigRun, pairs, with_all_stages};
    use std::time::Duration;

    fn data() -> SpeedupData {
        let base = vec!["mem2reg", "dce"];
        let run = |insns: u64| ConfigRun {
            verdict: Some(Verdict::Pass),
            reason: String::new(),
            insns: Some(insns),
            cycles: Some(insns * 2),
            asm_hash: String::new(),
            pass_times: vec![("mem2reg", Duration::from_micros(3))],
        };
        let runs = [
            (vec![], run(400)),
            (vec!["mem2reg"], run(200)),
            (vec!["dce"], run(390)),
            (vec!["mem2reg", "dce"], run(100)),
        ];
        SpeedupData {
            pairs: pairs(&base),
            base,
            benchmarks: vec![BenchmarkRuns {
                name: "bench<1>".into(),
                runs: runs.into_iter().map(|(p, r)| (with_all_stages(&p), r)).collect(),
                distinct_asm: 4,
                skipped_asm: 0,
                cached_asm: 0,
            }],
        }
    }

    #[test]
    fn page_holds_both_charts_and_escaped_text() {
        let links: BTreeMap<(String, Mode, String), String> =
            [(("bench<1>".to_string(), Mode::LeaveOneOut, "dce".to_string()), "diffs/x.diff".to_string())].into_iter().collect();
        let page = html(&data(), "a <b> & c\n\n| pass | x |\n|---|--:|\n| dce | 1.0 |\n", &links).expect("page");
        assert_eq!(page.matches("<svg").count(), 4, "instructions, cycles, heat map, prefix curves");
        assert!(page.contains("Geomean instruction speedup") && page.contains("Geomean estimated-cycle speedup"));
        assert!(page.contains("href=\"diffs/x.diff\""), "a heat-map cell links to its differences");
        assert!(page.contains("mem2reg") && page.contains("dce"));
        assert!(page.contains("<p>a &lt;b&gt; &amp; c</p>"));
        assert!(page.contains("<td>dce</td>") && !page.contains("<pre>"), "the report's tables are HTML tables");
        assert!(page.contains("<li>dce</li>"), "the prefix chart lists its passes");
    }

    #[test]
    fn bars_have_one_rectangle_per_pass_and_mode() {
        let svg = pass_bars_svg(&data(), Metric::Instructions).expect("svg");
        // Two passes × two modes of bars (plus the background and legend rectangles).
        let filled_bars = svg.matches("<rect").count();
        assert!(filled_bars >= 4, "{filled_bars} rectangles");
        let curves = prefix_curves_svg(&data()).expect("svg");
        assert!(curves.contains("bench&lt;1&gt;"), "legend names the benchmark, escaped");
        assert_eq!(curves.matches("<circle").count(), 3, "one marker per prefix k = 0, 1, 2");
    }

    #[test]
    fn legend_names_only_measured_families() {
        let mut loo_only = data();
        loo_only.pairs.retain(|p| p.mode == Mode::LeaveOneOut);
        let svg = pass_bars_svg(&loo_only, Metric::Cycles).expect("svg");
        assert!(svg.contains("leave-one-out"));
        assert!(!svg.contains("add-one"), "no add-one series without add-one pairs");
        assert!(pass_bars_svg(&data(), Metric::Instructions).expect("svg").contains("add-one"));
    }

    #[test]
    fn heat_map_has_a_cell_per_benchmark_and_pass_coloured_by_direction() {
        let d = data();
        let svg = heatmap_svg(&d, &BTreeMap::new());
        let columns = d.pairs.iter().filter(|p| p.mode == Mode::LeaveOneOut).count();
        // One rectangle per cell plus the background.
        assert_eq!(svg.matches("<rect").count(), columns + 1, "{svg}");
        assert!(svg.contains("arm-peephole"), "back-end stages are columns too");
        // Without dce 200 instructions, with it 100: ×2, saturated green.
        assert!(svg.contains("bench&lt;1&gt; without dce: instructions ×2.0000"), "{svg}");
        assert!(svg.contains("fill=\"#00c800\""), "{svg}");
        assert_eq!(heat_colour(Some(4.0)), heat_colour(Some(1.5)), "saturates at ×1.5");
        assert_eq!(heat_colour(Some(1.0)), "#ffffff");
        let (up, down) = (heat_colour(Some(1.2)), heat_colour(Some(1.0 / 1.2)));
        assert!(up[1..3] < up[3..5] && down[1..3] > down[3..5], "green up, red down: {up} {down}");
        assert_eq!(heat_colour(None), "#bbbbbb");
    }
}
