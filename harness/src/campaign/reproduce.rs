//! The opening of `summary.md`: the exact commands that run the campaign again and that
//! continue it, what it ran (seed, compiler revision, strategies, limits) and what its
//! checks cost (totals of `runs.csv`).
//!
//! A time-limited campaign's programs depend on how fast the machine was; the second
//! reproduction command names the program count instead, which checks exactly the same
//! programs anywhere (rows are identical but for the time columns).

use super::records::Row;
use super::{CampaignOptions, State};
use std::fmt::Write as _;
use std::path::Path;
use sysyc::toolchain::shell_words;
use sysy_cost_model::{InsnClass, NUM_CLASSES};

/// The source revision this harness was built from (see `build.rs`).
pub const REVISION: &str = env!("SYSYC_REVISION");

/// The options of `harness campaign` that decide which rows exist (not the limits, the
/// output directory or the triage settings).
fn row_options(o: &CampaignOptions) -> Vec<String> {
    let mut args = vec!["--seed".to_string(), o.seed.to_string(), "--strategy".into(), o.strategies.join(",")];
    args.extend(["--random-configs".into(), o.random_per_program.to_string(), "--timeout".into(), o.timeout_secs.to_string()]);
    if !o.over.is_empty() {
        args.extend(["--over".into(), o.over.join(",")]);
    }
    if !o.swarm {
        args.push("--no-swarm".into());
    }
    if o.gcc {
        args.push("--gcc".into());
    }
    if !o.faults.is_empty() {
        args.extend(["--fault".into(), o.faults.join(",")]);
    }
    if let Some(s) = o.shard {
        args.extend(["--shard".into(), format!("{}/{}", s.index, s.count)]);
    }
    match &o.seeds {
        Some(seeds) => {
            for dir in &seeds.dirs {
                args.extend(["--seeds".into(), dir.display().to_string()]);
            }
            args.extend(["--seed-share".into(), seeds.share.to_string()]);
        }
        None if o.corpus.is_none() => args.push("--no-seeds".into()),
        None => {}
    }
    if let Some(corpus) = &o.corpus {
        args.extend(["--corpus".into(), corpus.display().to_string()]);
    }
    args
}

/// `harness campaign ...` with the row-defining options, `limit` and `--out dir`.
fn campaign_command(o: &CampaignOptions, limit: &[String], dir: &Path) -> String {
    let mut args: Vec<String> = vec!["harness".into(), "campaign".into()];
    args.extend(row_options(o));
    args.extend(limit.iter().cloned());
    args.extend(["--out".into(), dir.display().to_string()]);
    shell_words(args.iter().map(String::as_str))
}

/// The limit options as given: `--minutes M` or `--programs N`, and `--stop-after-failures N`.
fn limit_options(o: &CampaignOptions) -> Vec<String> {
    let mut args = match (o.seconds, o.programs) {
        (Some(s), _) => vec!["--minutes".into(), format!("{}", s / 60.0)],
        (None, Some(n)) => vec!["--programs".into(), n.to_string()],
        (None, None) => Vec::new(),
    };
    if let Some(n) = o.stop_after_failing {
        args.extend(["--stop-after-failures".into(), n.to_string()]);
    }
    if let Some(secs) = o.step_limit_secs {
        args.extend(["--step-limit".into(), secs.to_string()]);
    }
    if let Some(gib) = o.memory_limit_gib {
        args.extend(["--memory-limit".into(), gib.to_string()]);
    }
    args
}

/// Totals of the checks' costs: qemu runs actually made (a check that shared an earlier
/// run's assembly is not counted again), their instructions by class and cycles, and the
/// worker time of compiling and running.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CostTotals {
    pub checks: u64,
    pub qemu_runs: u64,
    pub insns: u64,
    pub program_insns: u64,
    pub cycles: u64,
    pub classes: [u64; NUM_CLASSES],
    pub compile_us: u64,
    pub run_us: u64,
}

impl CostTotals {
    pub fn compute(rows: &[Row]) -> CostTotals {
        let mut t = CostTotals::default();
        rows.iter().for_each(|r| t.add(r));
        t
    }

    /// Adds one row (the totals are a fold over `runs.csv`, read one row at a time).
    pub fn add(&mut self, r: &Row) {
        let t = self;
        t.checks += 1;
        t.compile_us += r.compile_us;
        t.run_us += r.run_us;
        if r.asm_shared || r.insns.is_none() {
            return;
        }
        t.qemu_runs += 1;
        t.insns += r.insns.unwrap_or(0);
        t.program_insns += r.program_insns.unwrap_or(0);
        t.cycles += r.cycles.unwrap_or(0);
        if let Some(counts) = r.class_counts {
            for (total, n) in t.classes.iter_mut().zip(counts) {
                *total += n;
            }
        }
    }
}

fn cost_section(s: &mut String, t: &CostTotals) {
    let _ = writeln!(s, "### Cost totals (from runs.csv)\n");
    let _ = writeln!(s, "| figure | value |\n|---|---|");
    let _ = writeln!(s, "| checks | {} |", t.checks);
    let _ = writeln!(s, "| qemu runs (not shared with an earlier configuration) | {} |", t.qemu_runs);
    let _ = writeln!(s, "| instructions executed (all / in the program's code) | {} / {} |", t.insns, t.program_insns);
    let _ = writeln!(s, "| estimated cycles (cost model) | {} |", t.cycles);
    if t.insns > 0 {
        let _ = writeln!(s, "| cycles per instruction | {:.3} |", t.cycles as f64 / t.insns as f64);
    }
    let _ = writeln!(s, "| compile time (worker seconds) | {:.1} |", t.compile_us as f64 / 1e6);
    let _ = writeln!(s, "| run time: interpreters and qemu (worker seconds) | {:.1} |", t.run_us as f64 / 1e6);
    let classified: u64 = t.classes.iter().sum();
    if classified > 0 {
        let _ = writeln!(s, "\n| instruction class | executed | share |\n|---|---|---|");
        for (class, n) in InsnClass::ALL.iter().zip(t.classes) {
            let _ = writeln!(s, "| {} | {n} | {:.1}% |", class.name(), 100.0 * n as f64 / classified as f64);
        }
    }
    s.push('\n');
}

/// The section for the campaign directory `dir`.
/// `programs_reached`: one more than the highest program number recorded (none recorded:
/// `None`).
pub fn section(dir: &Path, options: &CampaignOptions, state: &State, costs: &CostTotals, programs_reached: Option<u64>) -> String {
    let mut s = String::from("## Reproduce\n\n");
    let _ = writeln!(s, "Run the same campaign again (same seed, strategies and limits):\n");
    let _ = writeln!(s, "```sh\n{}\n```\n", campaign_command(options, &limit_options(options), dir));
    if let Some(n) = programs_reached {
        let _ = writeln!(s, "Check exactly these programs again (any machine speed):\n");
        let _ = writeln!(s, "```sh\n{}\n```\n", campaign_command(options, &["--programs".into(), n.to_string()], dir));
    }
    let _ = writeln!(s, "Continue this campaign (what is left of its limit):\n");
    let _ = writeln!(s, "```sh\nharness campaign --resume {}\n```\n", shell_words([dir.display().to_string().as_str()]));
    let _ = writeln!(s, "| setting | value |\n|---|---|");
    let _ = writeln!(s, "| seed | {} (program i: `program_seed({0}, i)`, SplitMix64) |", options.seed);
    let _ = writeln!(s, "| compiler revision | {} |", revisions(state));
    let _ = writeln!(s, "| strategies | {} ({} random configurations per program) |", options.strategies.join(", "), options.random_per_program);
    let used = format!("{:.0} s used in {} session{}", state.elapsed_secs, state.sessions, if state.sessions == 1 { "" } else { "s" });
    let limit = match (options.seconds, options.programs) {
        // A program in flight at the deadline is finished, so the time used can pass the limit.
        (Some(secs), _) => format!("{secs:.0} s; {used}"),
        (None, Some(n)) => format!("{n} programs; {used}"),
        (None, None) => "none".into(),
    };
    let _ = writeln!(s, "| limit | {limit} |");
    let _ = writeln!(s, "| timeout of each run | {} s |", options.timeout_secs);
    let _ = writeln!(s, "| step limit (a longer compiler step is a hang) | {} s |", options.step_limit().as_secs_f64());
    let _ = writeln!(s, "| memory limit (data, per process) | {:.1} GiB |", options.memory_limit() as f64 / (1u64 << 30) as f64);
    let generator = match &options.corpus {
        Some(corpus) => format!("none: the programs of `{}`", corpus.display()),
        None if options.swarm => "swarm configurations".to_string(),
        None => "default configuration".to_string(),
    };
    let _ = writeln!(s, "| generator | {generator} |");
    if let Some(shard) = options.shard {
        let _ = writeln!(s, "| shard | {} of {} (programs p with p mod {} = {}) |", shard.index, shard.count, shard.count, shard.index);
    }
    if !options.faults.is_empty() {
        let _ = writeln!(s, "| injected faults | {} |", options.faults.join(", "));
    }
    if let Some(n) = options.stop_after_failing {
        let _ = writeln!(s, "| stop after | {n} failing program{} |", if n == 1 { "" } else { "s" });
    }
    s.push('\n');
    cost_section(&mut s, costs);
    s
}

fn revisions(state: &State) -> String {
    match state.revisions.as_slice() {
        [] => format!("{REVISION} (this report)"),
        [one] => one.clone(),
        several => format!("{} (sessions ran different builds)", several.join(", ")),
    }
}

/// The section for a merged directory `out` of the shards `dirs` (with their options).
pub fn merged_section(out: &Path, dirs: &[std::path::PathBuf], shards: &[CampaignOptions], states: &[State], costs: &CostTotals) -> String {
    let mut s = String::from("## Reproduce\n\n");
    let _ = writeln!(s, "Run the shards again, then merge:\n\n```sh");
    for (dir, o) in dirs.iter().zip(shards) {
        let _ = writeln!(s, "{}", campaign_command(o, &limit_options(o), dir));
    }
    let mut merge: Vec<String> = vec!["harness".into(), "merge".into()];
    merge.extend(dirs.iter().map(|d| d.display().to_string()));
    merge.extend(["--out".into(), out.display().to_string()]);
    let _ = writeln!(s, "{}\n```\n", shell_words(merge.iter().map(String::as_str)));
    let _ = writeln!(s, "Continue unfinished shards with `harness campaign --resume <shard directory>`, then merge again.\n");
    let mut all = State::default();
    for st in states {
        all.elapsed_secs = all.elapsed_secs.max(st.elapsed_secs);
        all.sessions += st.sessions;
        for r in &st.revisions {
            if !all.revisions.contains(r) {
                all.revisions.push(r.clone());
            }
        }
    }
    if let Some(o) = shards.first() {
        let _ = writeln!(s, "| setting | value |\n|---|---|");
        let _ = writeln!(s, "| seed | {} |", o.seed);
        let _ = writeln!(s, "| compiler revision | {} |", revisions(&all));
        let _ = writeln!(s, "| strategies | {} ({} random configurations per program) |", o.strategies.join(", "), o.random_per_program);
        let _ = writeln!(s, "| shards | {} ({} sessions; longest shard {:.0} s) |", shards.len(), all.sessions, all.elapsed_secs);
        let _ = writeln!(s, "| timeout of each run | {} s |", o.timeout_secs);
        s.push('\n');
    }
    cost_section(&mut s, costs);
    s
}

/// `summary` with `section` inserted right under its title line.
pub fn insert_after_title(summary: &str, section: &str) -> String {
    match summary.split_once("\n\n") {
        Some((title, rest)) => format!("{title}\n\n{section}{rest}"),
        None => format!("{summary}\n\n{section}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::campaign::Shard;

    fn options() -> CampaignOptions {
        CampaignOptions {
            campaign_id: "c".into(),
            seed: 42,
            programs: None,
            seconds: Some(90.0),
            strategies: vec!["o-levels".into(), "random".into()],
            over: vec![],
            random_per_program: 4,
            gcc: false,
            timeout_secs: 10.0,
            swarm: true,
            faults: vec![],
            failures_dir: "f".into(),
            shard: Some(Shard { index: 1, count: 4 }),
            previous: None,
            gnu_assembler: false,
            encoder_sample: 20,
            guide: None,
            corpus: None,
            seeds: None,
            stop_after_failing: None,
            step_limit_secs: None,
            memory_limit_gib: None,
        }
    }

    #[test]
    fn the_section_names_the_commands_and_the_costs() {
        let rows = vec![
            Row { insns: Some(10), program_insns: Some(8), cycles: Some(30), class_counts: Some([1; NUM_CLASSES]), ..Row::default() },
            Row { insns: Some(10), cycles: Some(30), asm_shared: true, ..Row::default() },
        ];
        let state = State { elapsed_secs: 61.0, sessions: 2, revisions: vec!["v1-3-gabc".into()] };
        let md = section(Path::new("/r/my night"), &options(), &state, &CostTotals::compute(&rows), Some(6));
        // No seed directories in `options()`: the rerun must say so (seeds are on by default).
        let run = "harness campaign --seed 42 --strategy 'o-levels,random' --random-configs 4 --timeout 10 --shard 1/4 --no-seeds";
        assert!(md.contains(&format!("{run} --minutes 1.5 --out '/r/my night'")), "{md}");
        assert!(md.contains(&format!("{run} --programs 6 --out '/r/my night'")), "{md}");
        assert!(md.contains("harness campaign --resume '/r/my night'"), "{md}");
        assert!(md.contains("| compiler revision | v1-3-gabc |"), "{md}");
        assert!(md.contains("| limit | 90 s; 61 s used in 2 sessions |"), "{md}");
        assert!(md.contains("| qemu runs (not shared with an earlier configuration) | 1 |"), "{md}");
        assert!(md.contains("| instructions executed (all / in the program's code) | 10 / 8 |"), "{md}");
        assert!(md.contains("| alu | 1 |"), "{md}");
        let summary = insert_after_title("# Campaign c\n\n| figure |", "## Reproduce\n\n");
        assert!(summary.starts_with("# Campaign c\n\n## Reproduce\n\n| figure |"), "{summary}");
    }
}
