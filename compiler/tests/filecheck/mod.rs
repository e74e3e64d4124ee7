//! A small FileCheck: checks text (printed IR) against directives written in a test file.
//!
//! Directives are comment lines of the test file — `; ` in `.ir` files, `// ` in `.sy` files:
//! * `check: PATTERN` — some line at or after the current position matches; the position
//!   moves to the line after it;
//! * `nextln: PATTERN` — the line at the current position (right after the previous match)
//!   matches; the position moves past it;
//! * `not: PATTERN` — no line between the previous match and the next `check`/`nextln` match
//!   (or the end of the text, if none follows) matches.
//!
//! Patterns, without regular expressions:
//! * runs of whitespace in the pattern and in the text compare as one space; the pattern may
//!   match anywhere in a line, but its ends only at token boundaries (`ret %1` does not match
//!   `ret %12`), where tokens are runs of letters, digits and `_ % @ $ . -`;
//! * `{{*}}` matches any characters (possibly none) within the line;
//! * `[[name]]` matches one whole token. Its first match in a file binds `name` to that
//!   token; every later `[[name]]` must match the same token — so a test can follow a value
//!   through the IR without depending on its number.

use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Check,
    NextLn,
    Not,
}

#[derive(Clone, Debug)]
pub struct Directive {
    pub kind: Kind,
    pub pattern: String,
    /// 1-based line of the test file (for messages).
    pub line: usize,
}

/// What a test checks: the optimised IR, or the assembly the back end makes of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    Ir,
    Asm,
}

/// The header and directives of a test file.
#[derive(Clone, Debug)]
pub struct TestSpec {
    /// The compiler configuration as `sysyc` options: the `config:` line, or `--passes=LIST`
    /// for a `passes: LIST` line (the short form of pass tests).
    pub config: String,
    /// The `output:` line (`ir`, the default, or `asm`).
    pub output: Output,
    pub directives: Vec<Directive>,
}

/// Reads the header (`config:` or `passes:`, optional `output:`) and the directives from the
/// comment lines of a test file.
pub fn parse_spec(text: &str, comment: &str) -> Result<TestSpec, String> {
    let mut config = None;
    let mut output = Output::Ir;
    let mut directives = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix(comment) else { continue };
        let rest = rest.trim_start();
        let Some((key, value)) = rest.split_once(':') else { continue };
        let header = match key.trim() {
            "config" => Some(value.trim().to_string()),
            "passes" => Some(format!("--passes={}", value.split_whitespace().collect::<String>())),
            _ => None,
        };
        if let Some(header) = header {
            if config.replace(header).is_some() {
                return Err(format!("line {}: second `config:`/`passes:` line", i + 1));
            }
            continue;
        }
        let kind = match key.trim() {
            "output" => {
                output = match value.trim() {
                    "ir" => Output::Ir,
                    "asm" => Output::Asm,
                    other => return Err(format!("line {}: `output: {other}`: expected ir or asm", i + 1)),
                };
                continue;
            }
            "check" => Kind::Check,
            "nextln" => Kind::NextLn,
            "not" => Kind::Not,
            _ => continue,
        };
        let pattern = value.trim().to_string();
        if pattern.is_empty() {
            return Err(format!("line {}: empty pattern", i + 1));
        }
        directives.push(Directive { kind, pattern, line: i + 1 });
    }
    let config = config.ok_or("no `config:` or `passes:` line")?;
    if !directives.iter().any(|d| d.kind != Kind::Not) {
        return Err("no `check:` or `nextln:` directive".into());
    }
    Ok(TestSpec { config, output, directives })
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Lit(String),
    Wild,
    Capture(String),
}

fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '%' | '@' | '$' | '.' | '-')
}

fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn compile(pattern: &str) -> Result<Vec<Piece>, String> {
    let pattern = normalize(pattern);
    let mut pieces = Vec::new();
    let mut lit = String::new();
    let mut rest = pattern.as_str();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("{{*}}") {
            if !lit.is_empty() {
                pieces.push(Piece::Lit(std::mem::take(&mut lit)));
            }
            pieces.push(Piece::Wild);
            rest = after;
        } else if let Some(after) = rest.strip_prefix("[[") {
            let end = after.find("]]").ok_or_else(|| format!("unclosed `[[` in `{pattern}`"))?;
            let name = &after[..end];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!("bad variable name `{name}` in `{pattern}`"));
            }
            if !lit.is_empty() {
                pieces.push(Piece::Lit(std::mem::take(&mut lit)));
            }
            pieces.push(Piece::Capture(name.to_string()));
            rest = &after[end + 2..];
        } else {
            let c = rest.chars().next().expect("rest is not empty");
            lit.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    if !lit.is_empty() {
        pieces.push(Piece::Lit(lit));
    }
    Ok(pieces)
}

type Vars = BTreeMap<String, String>;

/// Matches `pieces` against `line` starting anywhere; returns the bindings on success.
fn match_line(pieces: &[Piece], line: &str, vars: &Vars) -> Option<Vars> {
    let starts_with_token = match pieces.first() {
        Some(Piece::Lit(l)) => l.chars().next().is_some_and(is_token_char),
        Some(Piece::Capture(_)) => true,
        _ => false,
    };
    for (start, _) in line.char_indices().chain(std::iter::once((line.len(), ' '))) {
        if starts_with_token && line[..start].chars().next_back().is_some_and(is_token_char) {
            continue;
        }
        let mut bound = vars.clone();
        if match_at(pieces, &line[start..], &mut bound) {
            return Some(bound);
        }
    }
    None
}

fn match_at(pieces: &[Piece], text: &str, vars: &mut Vars) -> bool {
    let Some((first, rest)) = pieces.split_first() else { return true };
    match first {
        Piece::Lit(l) => {
            let Some(after) = text.strip_prefix(l.as_str()) else { return false };
            let at_end = rest.is_empty();
            if at_end
                && l.chars().next_back().is_some_and(is_token_char)
                && after.chars().next().is_some_and(is_token_char)
            {
                return false;
            }
            match_at(rest, after, vars)
        }
        Piece::Wild => {
            for (i, _) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
                let mut attempt = vars.clone();
                if match_at(rest, &text[i..], &mut attempt) {
                    *vars = attempt;
                    return true;
                }
            }
            false
        }
        Piece::Capture(name) => {
            let len = text.find(|c: char| !is_token_char(c)).unwrap_or(text.len());
            if len == 0 {
                return false;
            }
            let token = &text[..len];
            match vars.get(name) {
                Some(v) if v != token => return false,
                Some(_) => {}
                None => {
                    vars.insert(name.clone(), token.to_string());
                }
            }
            match_at(rest, &text[len..], vars)
        }
    }
}

/// Checks `output` against the directives; the error explains the first failure.
pub fn check(output: &str, directives: &[Directive]) -> Result<(), String> {
    let lines: Vec<String> = output.lines().map(normalize).collect();
    let mut vars = Vars::new();
    let mut pos = 0usize;
    let mut pending_nots: Vec<(&Directive, Vec<Piece>)> = Vec::new();
    for d in directives {
        let pieces = compile(&d.pattern).map_err(|e| format!("line {}: {e}", d.line))?;
        let found = match d.kind {
            Kind::Not => {
                pending_nots.push((d, pieces));
                continue;
            }
            Kind::Check => (pos..lines.len()).find_map(|i| match_line(&pieces, &lines[i], &vars).map(|v| (i, v))),
            Kind::NextLn => lines.get(pos).and_then(|l| match_line(&pieces, l, &vars)).map(|v| (pos, v)),
        };
        let Some((at, bound)) = found else {
            let what = if d.kind == Kind::NextLn { "the next line" } else { "any later line" };
            return Err(format!(
                "line {}: `{}: {}` does not match {what} (searching from output line {})",
                d.line,
                if d.kind == Kind::NextLn { "nextln" } else { "check" },
                d.pattern,
                pos + 1
            ));
        };
        check_nots(&lines, pos, at, &pending_nots, &vars)?;
        pending_nots.clear();
        vars = bound;
        pos = at + 1;
    }
    check_nots(&lines, pos, lines.len(), &pending_nots, &vars)
}

fn check_nots(
    lines: &[String],
    from: usize,
    to: usize,
    nots: &[(&Directive, Vec<Piece>)],
    vars: &Vars,
) -> Result<(), String> {
    for (d, pieces) in nots {
        if let Some(i) = (from..to).find(|&i| match_line(pieces, &lines[i], vars).is_some()) {
            return Err(format!("line {}: `not: {}` matches output line {}: {}", d.line, d.pattern, i + 1, lines[i]));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(output: &str, directives: &str) -> Result<(), String> {
        let spec = parse_spec(&format!("; passes:\n{directives}"), ";")?;
        check(output, &spec.directives)
    }

    const IR: &str =
        "func @f(%0: i32) -> i32 {\nbb0:\n    %1 = add i32 %0, 1\n    %12 = mul i32 %1, %1\n    ret %12\n}\n";

    #[test]
    fn check_and_nextln_follow_the_order() {
        assert!(run(IR, "; check: add i32\n; nextln: mul i32\n; nextln: ret").is_ok());
        assert!(run(IR, "; check: mul i32\n; check: add i32").is_err(), "order matters");
        assert!(run(IR, "; check: bb0:\n; nextln: mul").is_err(), "nextln is the very next line");
        assert!(run(IR, "; check: sub i32").is_err());
    }

    #[test]
    fn token_boundaries_at_pattern_ends() {
        assert!(run(IR, "; check: ret %1").is_err(), "`%1` must not match inside `%12`");
        assert!(run(IR, "; check: ret %12").is_ok());
        assert!(run(IR, "; check: dd i32").is_err(), "must start at a token boundary");
    }

    #[test]
    fn whitespace_is_normalised_and_wildcards_span_text() {
        assert!(run(IR, ";   check:    %1   =  add   i32 %0,   1").is_ok());
        assert!(run(IR, "; check: %1 = {{*}}, 1").is_ok());
        assert!(run(IR, "; check: %1 = {{*}}, 2").is_err());
    }

    #[test]
    fn variables_bind_once_and_must_agree() {
        assert!(run(IR, "; check: [[x]] = add\n; check: mul i32 [[x]], [[x]]").is_ok());
        assert!(run(IR, "; check: [[x]] = add\n; check: ret [[x]]").is_err());
        assert!(run(IR, "; check: [[y]] = mul\n; check: ret [[y]]").is_ok());
    }

    #[test]
    fn not_covers_the_range_between_matches() {
        assert!(run(IR, "; check: add\n; not: sub\n; check: ret").is_ok());
        assert!(run(IR, "; check: bb0:\n; not: mul\n; check: ret").is_err());
        assert!(run(IR, "; check: mul\n; not: add").is_ok(), "the add is before the range");
        assert!(run(IR, "; check: bb0:\n; not: ret").is_err(), "a trailing not runs to the end");
    }

    #[test]
    fn malformed_specs_are_rejected() {
        assert!(parse_spec("; check: x", ";").is_err(), "missing passes line");
        assert!(parse_spec("; passes: dce", ";").is_err(), "no positive directive");
        assert!(parse_spec("; passes: dce\n; check:", ";").is_err(), "empty pattern");
        assert!(run(IR, "; check: [[x").is_err());
    }
}
