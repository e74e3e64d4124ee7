//! Speedup reports across dates: `--previous DIR` reads an earlier report's `speedup.csv` and
//! the new report gets a section with each pass's geomean then and now.
//!
//! Both sides are recomputed from the CSV rows the same way (the geometric mean of the rows'
//! speedups, over the benchmarks where the pair was valid), so a pass measured on different
//! benchmarks on the two dates is flagged rather than silently compared: the section gives
//! both benchmark counts.

use crate::bench::geomean;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Per (family, pass): geomean instruction and cycle speedups and the number of valid rows.
pub type Means = BTreeMap<(String, String), (Option<f64>, Option<f64>, usize)>;

/// The means of a `speedup.csv` text (prefix steps are left out: their pass names repeat).
pub fn means(csv_text: &str) -> Result<Means, String> {
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let headers = reader.headers().map_err(|e| format!("speedup.csv: {e}"))?.clone();
    let col = |name: &str| headers.iter().position(|h| h == name).ok_or_else(|| format!("speedup.csv has no `{name}` column"));
    let (mode, pass, insns, cycles) = (col("mode")?, col("pass")?, col("speedup_insns")?, col("speedup_cycles")?);
    let mut rows: BTreeMap<(String, String), (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for record in reader.records() {
        let record = record.map_err(|e| format!("speedup.csv: {e}"))?;
        if &record[mode] == "prefix" {
            continue;
        }
        let entry = rows.entry((record[mode].to_string(), record[pass].to_string())).or_default();
        if let (Ok(i), Ok(c)) = (record[insns].parse::<f64>(), record[cycles].parse::<f64>()) {
            entry.0.push(i);
            entry.1.push(c);
        }
    }
    Ok(rows.into_iter().map(|(k, (i, c))| (k, (geomean(i.iter().copied()), geomean(c), i.len()))).collect())
}

/// The comparison section: every (family, pass) of either report, then and now.
pub fn section(previous_dir: &Path, previous: &Means, current: &Means) -> String {
    let mut s = format!("## Compared with `{}`\n\n", previous_dir.display());
    s.push_str(
        "Geomean speedups recomputed from both reports' `speedup.csv` (valid rows only); \
         `n` is the number of benchmarks in each mean. Δ is now / then for instructions.\n\n\
         | family | pass | insns then | insns now | Δ insns | cycles then | cycles now | n then | n now |\n\
         |---|---|--:|--:|--:|--:|--:|--:|--:|\n",
    );
    let show = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.4}"));
    let keys: std::collections::BTreeSet<&(String, String)> = previous.keys().chain(current.keys()).collect();
    for key in keys {
        let (pi, pc, pn) = previous.get(key).copied().unwrap_or((None, None, 0));
        let (ci, cc, cn) = current.get(key).copied().unwrap_or((None, None, 0));
        let delta = pi.zip(ci).map(|(p, c)| c / p);
        let _ = writeln!(
            s,
            "| {} | `{}` | {} | {} | {} | {} | {} | {pn} | {cn} |",
            key.0,
            key.1,
            show(pi),
            show(ci),
            show(delta),
            show(pc),
            show(cc)
        );
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "benchmark,mode,pass,position,speedup_insns,speedup_cycles\n";

    #[test]
    fn means_skip_prefix_steps_and_invalid_rows() {
        let text = format!(
            "{HEADER}a,leave-one-out,gvn,0,2.0,1.0\nb,leave-one-out,gvn,0,0.5,4.0\nc,leave-one-out,gvn,0,,\na,prefix,gvn,3,9.0,9.0\n"
        );
        let m = means(&text).expect("parses");
        let (i, c, n) = m[&("leave-one-out".to_string(), "gvn".to_string())];
        assert_eq!(n, 2, "the row without a speedup is not in the mean");
        assert!((i.expect("mean") - 1.0).abs() < 1e-12 && (c.expect("mean") - 2.0).abs() < 1e-12);
        assert!(!m.keys().any(|k| k.0 == "prefix"));
        assert!(means("benchmark,pass\n").is_err(), "a CSV without the columns is an error");
    }

    #[test]
    fn section_lists_passes_of_either_date() {
        let then = means(&format!("{HEADER}a,leave-one-out,gvn,0,2.0,2.0\na,leave-one-out,old-pass,0,1.5,1.5\n")).expect("then");
        let now = means(&format!("{HEADER}a,leave-one-out,gvn,0,3.0,2.0\na,leave-one-out,arm-peephole,0,1.1,1.2\n")).expect("now");
        let s = section(Path::new("results/speedup/old"), &then, &now);
        assert!(s.contains("| leave-one-out | `gvn` | 2.0000 | 3.0000 | 1.5000 | 2.0000 | 2.0000 | 1 | 1 |"), "{s}");
        assert!(s.contains("`old-pass` | 1.5000 | - | - |"), "{s}");
        assert!(s.contains("`arm-peephole` | - | 1.1000 | - |"), "{s}");
    }
}
