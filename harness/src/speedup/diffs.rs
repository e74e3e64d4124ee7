//! Per-case differences behind the numbers: for a chosen (benchmark, pass) pair, the optimised
//! IR and the assembly of the reference and of the subject, as unified diffs in one text file
//! that the report and the heat map link to.
//!
//! Which pairs: every performance bug (the pass made the benchmark slower) and, for each pass
//! of a measured family, the benchmark where it changed the instruction count most. Writing
//! every pair of a 46-benchmark suite would be thousands of files nobody reads; these are the
//! ones a reader of the tables asks about. The texts are compiled again here (compiling is
//! milliseconds; the measurement kept only hashes), with the same configurations.

use super::{Mode, Pair, PairResult, SpeedupData, config_of};
use crate::conform::{self, CaseFiles};
use sysy_check::steps;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// The pairs whose differences are written: performance bugs, and per (family, pass) the
/// benchmark with the largest change in instructions (either way). Keyed by (benchmark,
/// mode, pass) so that a pair appears once.
pub fn chosen<'a>(data: &'a SpeedupData) -> Vec<PairResult<'a>> {
    let results = data.results();
    let mut out: BTreeMap<(String, Mode, &str), PairResult<'a>> = BTreeMap::new();
    let key = |r: &PairResult<'a>| (r.benchmark.to_string(), r.pair.mode, r.pair.pass);
    for r in results.iter().filter(|r| r.pair.mode != Mode::Prefix && r.performance_bug()) {
        out.insert(key(r), r.clone());
    }
    let mut largest: BTreeMap<(Mode, &str), (f64, PairResult<'a>)> = BTreeMap::new();
    for r in results.iter().filter(|r| r.pair.mode != Mode::Prefix) {
        let Some(effect) = r.speedup_insns().map(|s| s.ln().abs()).filter(|e| *e > 0.0) else { continue };
        let slot = largest.entry((r.pair.mode, r.pair.pass)).or_insert((effect, r.clone()));
        if effect > slot.0 {
            *slot = (effect, r.clone());
        }
    }
    for (_, r) in largest.into_values() {
        out.insert(key(&r), r);
    }
    out.into_values().collect()
}

/// The file name of a pair's differences, relative to the report directory.
pub fn file_name(benchmark: &str, pair: &Pair) -> String {
    let safe = crate::triage::regression::sanitize;
    format!("diffs/{}--{}--{}.diff", safe(benchmark), pair.mode.name(), safe(pair.pass))
}

/// IR and assembly of one configuration of a case.
fn compile(case: &sysy_check::subject::Case, pipeline: &super::Pipeline) -> Result<(String, String), String> {
    let config = config_of(pipeline);
    let lowered = steps::lower(&case.subject).map_err(|f| f.detail)?;
    let (module, _) = steps::optimise(&lowered, &config, None).map_err(|f| f.detail)?;
    let asm = steps::select(&module, &config).map_err(|f| f.detail)?;
    Ok((sysyc::ir::print_module(&module), asm))
}

fn unified(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    similar::TextDiff::from_lines(old, new).unified_diff().context_radius(CONTEXT).header(old_name, new_name).to_string()
}

/// The text of one pair's differences on `case`.
pub fn render(case: &sysy_check::subject::Case, r: &PairResult<'_>) -> Result<String, String> {
    let (ref_ir, ref_asm) = compile(case, &r.pair.reference)?;
    let (sub_ir, sub_asm) = compile(case, &r.pair.subject)?;
    let mut text = String::new();
    let show = |x: Option<f64>| x.map_or("n/a".to_string(), |x| format!("{x:.4}"));
    let _ = writeln!(text, "# {} — {} `{}`", r.benchmark, r.pair.mode.name(), r.pair.pass);
    let _ = writeln!(text, "# reference: {}", r.pair.reference.join(","));
    let _ = writeln!(text, "# subject:   {}", r.pair.subject.join(","));
    let _ = writeln!(
        text,
        "# speedup: instructions {}, cycles {} (reference {} / subject {} instructions)",
        show(r.speedup_insns()),
        show(r.speedup_cycles()),
        r.reference.insns.map_or("n/a".into(), |i| i.to_string()),
        r.subject.insns.map_or("n/a".into(), |i| i.to_string()),
    );
    let _ = writeln!(text, "\n## optimised IR\n");
    text.push_str(&if ref_ir == sub_ir { "(identical)\n".to_string() } else { unified(&ref_ir, &sub_ir, "reference.ir", "subject.ir") });
    let _ = writeln!(text, "\n## assembly\n");
    text.push_str(&if ref_asm == sub_asm { "(identical)\n".to_string() } else { unified(&ref_asm, &sub_asm, "reference.s", "subject.s") });
    Ok(text)
}

/// Writes the chosen pairs' differences under `out/diffs/`; returns, per (benchmark, mode,
/// pass), the file's path relative to `out`. A case that no longer compiles gets a file
/// saying why instead (its numbers are in the tables all the same).
pub fn write(out: &Path, data: &SpeedupData, cases: &[CaseFiles]) -> Result<BTreeMap<(String, Mode, String), String>, String> {
    let dir = out.join("diffs");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut loaded = BTreeMap::new();
    let mut written = BTreeMap::new();
    for r in chosen(data) {
        let Some(files) = cases.iter().find(|c| c.name == r.benchmark) else { continue };
        if !loaded.contains_key(r.benchmark) {
            loaded.insert(r.benchmark.to_string(), conform::load(files)?);
        }
        let text = render(&loaded[r.benchmark], &r).unwrap_or_else(|e| format!("cannot compile the pair again: {e}\n"));
        let name = file_name(r.benchmark, r.pair);
        let path = out.join(&name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.insert((r.benchmark.to_string(), r.pair.mode, r.pair.pass.to_string()), name);
    }
    Ok(written)
}

/// The report section listing the written differences.
pub fn section(written: &BTreeMap<(String, Mode, String), String>) -> String {
    let mut s = String::from("## Differences behind the numbers\n\n");
    if written.is_empty() {
        s.push_str("No pair changed an instruction count.\n\n");
        return s;
    }
    s.push_str(
        "The optimised IR and the assembly of both sides, as unified diffs, for every performance bug \
         and, per pass, the benchmark it changed most (also linked from the heat map's cells).\n\n\
         | benchmark | family | pass | differences |\n|---|---|---|---|\n",
    );
    for ((benchmark, mode, pass), path) in written {
        let _ = writeln!(s, "| {benchmark} | {} | `{pass}` | [{path}]({path}) |", mode.name());
    }
    s.push('\n');
    s
}
