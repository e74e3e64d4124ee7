//! `harness report speedup`: the command-line front end of [`crate::speedup`].
//!
//! Writes `speedup.csv`, `report.md` and `index.html` into `--out` (default
//! `results/speedup/<UTC date>/`) and prints the top five passes by leave-one-out geomean
//! instruction speedup.

use crate::speedup::run_cache::RunCache;
use crate::speedup::{BenchmarkRuns, base_pipeline, chart, measure, report};
use crate::cli::fail;
use crate::conform;
use sysy_check::engine::RunSettings;
use sysy_check::subject::Limits;
use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The project's own benchmark programs, relative to the repository root.
pub const DEFAULT_SUITE: &str = "corpus/bench";

#[derive(Args, Debug)]
pub struct SpeedupArgs {
    /// Directory of benchmarks (NAME.sy, NAME.in, NAME.out); default: the repository's
    /// `corpus/bench`.
    #[arg(long)]
    pub suite: Option<PathBuf>,
    /// The base pipeline as comma-separated pass names (default: the -O2 pipeline).
    #[arg(long)]
    pub base: Option<String>,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    pub jobs: usize,
    /// Time limit per run in seconds (default 600).
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Only benchmarks whose name contains this (comma-separated: any of these), e.g. the
    /// cases of a long suite that fit in one sitting.
    #[arg(long)]
    pub filter: Option<String>,
    /// Which families to measure: leave-one-out (IR passes and back-end stages), add-one,
    /// prefix, add-to-base (passes outside the base pipeline), comma-separated. Fewer
    /// families need fewer pipelines, which matters on long-running suites.
    #[arg(long, default_value = "leave-one-out,add-one,prefix,add-to-base")]
    pub modes: String,
    /// An earlier report's directory (its `speedup.csv`): the report compares each pass's
    /// geomeans with it.
    #[arg(long)]
    pub previous: Option<PathBuf>,
    /// Output directory (default: results/speedup/<UTC date>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Where run outcomes are cached, keyed by assembly text, input, runtime library, plugin
    /// and time limit (default: `speedup-runs` under sysyc's cache root, see
    /// `sysyc::runtime::library`). An interrupted or repeated measurement reruns only what it
    /// has not run yet.
    #[arg(long)]
    pub run_cache: Option<PathBuf>,
    /// Run every distinct assembly text again, ignoring and not filling the run cache.
    #[arg(long)]
    pub no_run_cache: bool,
}

fn default_suite() -> PathBuf {
    let here = PathBuf::from(DEFAULT_SUITE);
    if here.is_dir() {
        return here;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(DEFAULT_SUITE)
}

pub fn run(args: &SpeedupArgs) -> ExitCode {
    match run_inner(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

fn run_inner(args: &SpeedupArgs) -> Result<(), String> {
    let suite = args.suite.clone().unwrap_or_else(default_suite);
    let base = base_pipeline(args.base.as_deref())?;
    let settings = RunSettings { measure_cost: true, ..RunSettings::new(Limits::SUITE.with_timeout(args.timeout)?) };
    let mut cases = conform::discover(&suite, None).map_err(|e| format!("cannot list {}: {e}", suite.display()))?;
    if let Some(filter) = &args.filter {
        let wanted: Vec<&str> = filter.split(',').map(str::trim).filter(|f| !f.is_empty()).collect();
        cases.retain(|c| wanted.iter().any(|f| c.name.contains(f)));
    }
    if cases.is_empty() {
        return Err(format!("no .sy benchmarks in {} (after --filter)", suite.display()));
    }
    let out = match &args.out {
        Some(dir) => dir.clone(),
        None => {
            PathBuf::from("results/speedup").join(jiff::Timestamp::now().strftime("%Y-%m-%d").to_string())
        }
    };
    let progress = |b: &BenchmarkRuns| {
        let valid = b.runs.values().filter(|r| r.valid()).count();
        errln!(
            "{}: {} configurations, {} distinct assembly texts run ({} from the run cache, {} skipped), {} valid",
            b.name,
            b.runs.len(),
            b.distinct_asm,
            b.cached_asm,
            b.skipped_asm,
            valid
        );
    };
    let modes = crate::speedup::Mode::parse_list(&args.modes)?;
    if modes.is_empty() {
        return Err("--modes names no family".to_string());
    }
    let cache = if args.no_run_cache {
        None
    } else {
        let dir = args.run_cache.clone().unwrap_or_else(|| sysyc::runtime::library::cache_root().join("speedup-runs"));
        Some(RunCache::open(&dir, settings.limits.timeout)?)
    };
    let data = measure(&cases, base, &modes, &settings, args.jobs, cache.as_ref(), &progress)?;

    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let mut command = format!("harness report speedup --suite {}", suite.display());
    if let Some(b) = &args.base {
        command.push_str(&format!(" --base {b}"));
    }
    if let Some(f) = &args.filter {
        command.push_str(&format!(" --filter {f}"));
    }
    if modes.len() < crate::speedup::Mode::ALL.len() {
        command.push_str(&format!(" --modes {}", args.modes));
    }
    // The limit decides which runs count (a timeout is excluded), so it is part of the recipe.
    if let Some(t) = args.timeout {
        command.push_str(&format!(" --timeout {t}"));
    }
    if let Some(p) = &args.previous {
        command.push_str(&format!(" --previous {}", p.display()));
    }
    let links = crate::speedup::diffs::write(&out, &data, &cases)?;
    let mut markdown = report::markdown(&data, &suite.display().to_string(), &command);
    markdown.push_str(&crate::speedup::diffs::section(&links));
    let write = |name: &str, text: &str| {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    let csv_path = out.join("speedup.csv");
    let file = std::fs::File::create(&csv_path)
        .map_err(|e| format!("cannot create {}: {e}", csv_path.display()))?;
    report::write_csv(&data, std::io::BufWriter::new(file))
        .map_err(|e| format!("cannot write {}: {e}", csv_path.display()))?;
    if let Some(previous) = &args.previous {
        let read = |dir: &Path| {
            let path = dir.join("speedup.csv");
            std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))
        };
        let then = crate::speedup::compare::means(&read(previous)?).map_err(|e| format!("{}: {e}", previous.display()))?;
        let now = crate::speedup::compare::means(&read(&out)?)?;
        markdown.push_str(&crate::speedup::compare::section(previous, &then, &now));
    }
    write("report.md", &markdown)?;
    write("index.html", &chart::html(&data, &markdown, &links)?)?;

    let summaries = data.summaries();
    outln!("top passes by leave-one-out geomean speedup (insns, cycles):").map_err(|e| e.to_string())?;
    for (i, s) in report::ranking(&summaries).iter().take(5).enumerate() {
        let show = |x: Option<f64>| x.map_or("n/a".to_string(), |x| format!("{x:.4}"));
        outln!("  {}. {} {} {}", i + 1, s.pair.pass, show(s.geomean_insns), show(s.geomean_cycles)).map_err(|e| e.to_string())?;
    }
    outln!("wrote {}/{{speedup.csv,report.md,index.html}}", out.display()).map_err(|e| e.to_string())?;
    Ok(())
}
