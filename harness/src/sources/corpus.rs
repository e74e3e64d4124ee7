//! A campaign over a directory of programs instead of generated ones (`--corpus DIR`).
//!
//! Program `i` is the `i`-th `.sy` file of the directory in byte order of the names, read
//! with the `.in` file of the same stem as its stdin (none: empty input); the campaign stops
//! after the last one. Each program still goes through every configuration of the plan, so a
//! corpus written by another generator (an older version of this one, for the mutation
//! table's "before" figure), a night's saved programs or the reduced regressions can be
//! checked exactly as generated ones are. The listing is read again for every program: a
//! corpus is small next to the cost of checking one program, and a resumed campaign sees the
//! same order as long as the directory is unchanged.

use sysy_generator::GeneratedProgram;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// The `.sy` files of `dir`, sorted by name.
pub fn files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading the corpus {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sy") && p.is_file())
        .collect();
    files.sort();
    Ok(files)
}

/// Number of programs in the corpus; an empty corpus is an error (the campaign would check
/// nothing and look clean).
pub fn len(dir: &Path) -> Result<u64> {
    let n = files(dir)?.len();
    if n == 0 {
        bail!("the corpus {} holds no .sy file", dir.display());
    }
    Ok(n as u64)
}

/// Program `index` of the corpus.
pub fn program(dir: &Path, index: u64) -> Result<GeneratedProgram> {
    let files = files(dir)?;
    let Some(path) = usize::try_from(index).ok().and_then(|i| files.get(i)) else {
        bail!("the corpus {} has {} programs, not {}", dir.display(), files.len(), index + 1);
    };
    read(path)
}

/// The program of the file `path`, its stdin the `.in` file of the same stem (none: empty).
pub fn read(path: &Path) -> Result<GeneratedProgram> {
    let source = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let input = path.with_extension("in");
    let stdin = if input.exists() { std::fs::read(&input).with_context(|| format!("reading {}", input.display()))? } else { Vec::new() };
    GeneratedProgram::from_source(path, source, stdin).map_err(anyhow::Error::msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_come_in_name_order_with_their_input() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("b.sy"), "int main() { return getint(); }\n").unwrap();
        std::fs::write(dir.path().join("b.in"), "7\n").unwrap();
        std::fs::write(dir.path().join("a.sy"), "int main() { return 3; }\n").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a program").unwrap();
        assert_eq!(len(dir.path()).unwrap(), 2);
        let first = program(dir.path(), 0).unwrap();
        assert!(first.source.contains("return 3"), "{}", first.source);
        assert!(first.stdin.is_empty());
        let second = program(dir.path(), 1).unwrap();
        assert_eq!(second.stdin, b"7\n");
        assert!(program(dir.path(), 2).unwrap_err().to_string().contains("has 2 programs"));
    }

    #[test]
    fn a_bad_program_is_an_error_with_its_place() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("bad.sy"), "int main() { return 1 }\n").unwrap();
        let message = program(dir.path(), 0).unwrap_err().to_string();
        assert!(message.contains("bad.sy:1:"), "{message}");
        let empty = tempfile::tempdir().expect("temp dir");
        assert!(len(empty.path()).unwrap_err().to_string().contains("no .sy file"));
    }
}
