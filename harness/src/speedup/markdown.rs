//! The markdown the harness writes (`report.md`), as HTML: headings, paragraphs, ordered and
//! unordered lists, pipe tables (with their column alignment) and inline code. Only that
//! subset: the reports are ours, so anything else is shown as a paragraph of escaped text.

use std::fmt::Write as _;

/// `s` as HTML text (also inside attribute values in double quotes).
pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Inline markup of one line: `code` spans and `[text](relative/link)`, the rest escaped.
fn inline(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in text.split('`').enumerate() {
        // Odd parts are inside backticks (an unmatched last backtick stays code to the end).
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", escape(part));
        } else {
            out.push_str(&links(part));
        }
    }
    out
}

/// `[text](target)` as links, everything else escaped. Only relative targets (the report's own
/// files) become links; anything with a scheme or a quote stays text.
fn links(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let link = rest[open..].find("](").and_then(|mid| {
            let label = &rest[open + 1..open + mid];
            let after = &rest[open + mid + 2..];
            let close = after.find(')')?;
            let target = &after[..close];
            let relative = !target.is_empty() && !target.contains(':') && !target.contains('"') && !label.contains('[');
            relative.then_some((label, target, open + mid + 2 + close + 1))
        });
        match link {
            Some((label, target, end)) => {
                out.push_str(&escape(&rest[..open]));
                let _ = write!(out, "<a href=\"{}\">{}</a>", escape(target), escape(label));
                rest = &rest[end..];
            }
            None => {
                out.push_str(&escape(&rest[..=open]));
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(&escape(rest));
    out
}

/// Cells of a pipe-table line (`| a | b |`), with `\|` kept as a literal bar.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut out = vec![String::new()];
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                out.last_mut().expect("a cell").push('|');
                chars.next();
            }
            '|' => out.push(String::new()),
            _ => out.last_mut().expect("a cell").push(c),
        }
    }
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

fn is_separator(line: &str) -> bool {
    let cs = cells(line);
    !cs.is_empty() && cs.iter().all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':')))
}

fn align(spec: &str) -> &'static str {
    match (spec.starts_with(':'), spec.ends_with(':')) {
        (_, true) if spec.len() > 1 => " style=\"text-align:right\"",
        (true, false) => " style=\"text-align:left\"",
        _ => "",
    }
}

fn list_item(line: &str) -> Option<(bool, &str)> {
    if let Some(rest) = line.strip_prefix("- ") {
        return Some((false, rest));
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    (digits > 0).then(|| line[digits..].strip_prefix(". ").map(|rest| (true, rest))).flatten()
}

/// `markdown` as an HTML fragment.
pub fn to_html(markdown: &str) -> String {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_end();
        if line.trim().is_empty() {
            i += 1;
        } else if let Some(level) = (1..=6).find(|&n| line.starts_with(&format!("{} ", "#".repeat(n)))) {
            let _ = writeln!(out, "<h{level}>{}</h{level}>", inline(line[level + 1..].trim()));
            i += 1;
        } else if line.trim_start().starts_with('|') && lines.get(i + 1).is_some_and(|l| is_separator(l)) {
            let header = cells(line);
            let aligns: Vec<&str> = cells(lines[i + 1]).iter().map(|s| align(s)).collect();
            out.push_str("<table>\n<thead><tr>");
            for (k, h) in header.iter().enumerate() {
                let _ = write!(out, "<th{}>{}</th>", aligns.get(k).copied().unwrap_or(""), inline(h));
            }
            out.push_str("</tr></thead>\n<tbody>\n");
            i += 2;
            while i < lines.len() && lines[i].trim_start().starts_with('|') {
                out.push_str("<tr>");
                for (k, c) in cells(lines[i]).iter().enumerate() {
                    let _ = write!(out, "<td{}>{}</td>", aligns.get(k).copied().unwrap_or(""), inline(c));
                }
                out.push_str("</tr>\n");
                i += 1;
            }
            out.push_str("</tbody>\n</table>\n");
        } else if let Some((ordered, _)) = list_item(line) {
            let tag = if ordered { "ol" } else { "ul" };
            let _ = writeln!(out, "<{tag}>");
            while let Some((o, item)) = lines.get(i).and_then(|l| list_item(l.trim_end())) {
                if o != ordered {
                    break;
                }
                let _ = writeln!(out, "<li>{}</li>", inline(item));
                i += 1;
            }
            let _ = writeln!(out, "</{tag}>");
        } else {
            // A paragraph: this line and the following ones that start nothing else.
            let mut text = vec![inline(line.trim())];
            i += 1;
            while let Some(l) = lines.get(i).map(|l| l.trim_end()) {
                if l.trim().is_empty() || l.starts_with('#') || l.trim_start().starts_with('|') || list_item(l).is_some() {
                    break;
                }
                text.push(inline(l.trim()));
                i += 1;
            }
            let _ = writeln!(out, "<p>{}</p>", text.join("\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_markdown_becomes_html_tables_and_lists() {
        let md = "# Speedups on `perf`\n\nSome <text> & more\non two lines.\n\n## Top\n\n1. `mem2reg` — ×1.79\n2. `gvn`\n\n\
                  | pass | geomean | note |\n|---|--:|:--|\n| dce | 1.0100 | a \\| b |\n| gvn | 0.9900 | |\n\n- one\n- two\n";
        let html = to_html(md);
        assert!(html.contains("<h1>Speedups on <code>perf</code></h1>"), "{html}");
        assert!(html.contains("<p>Some &lt;text&gt; &amp; more\non two lines.</p>"), "{html}");
        assert!(html.contains("<ol>\n<li><code>mem2reg</code> — ×1.79</li>\n<li><code>gvn</code></li>\n</ol>"), "{html}");
        assert!(html.contains("<th>pass</th><th style=\"text-align:right\">geomean</th><th style=\"text-align:left\">note</th>"), "{html}");
        assert!(html.contains("<tr><td>dce</td><td style=\"text-align:right\">1.0100</td><td style=\"text-align:left\">a | b</td></tr>"), "{html}");
        assert_eq!(html.matches("<tr>").count(), 3, "{html}");
        assert!(html.contains("<ul>\n<li>one</li>\n<li>two</li>\n</ul>"), "{html}");
        assert!(!html.contains("<pre>"));
        assert_eq!(to_html("#no heading\n| not a table\n"), "<p>#no heading</p>\n<p>| not a table</p>\n");
    }

    #[test]
    fn relative_links_become_anchors_and_nothing_else_does() {
        assert_eq!(super::inline("see [a<b](diffs/x.diff) and `[c](d)`"), "see <a href=\"diffs/x.diff\">a&lt;b</a> and <code>[c](d)</code>");
        assert_eq!(super::inline("[x](javascript:alert(1))"), "[x](javascript:alert(1))");
        assert_eq!(super::inline("a[1] = b[2]"), "a[1] = b[2]");
    }
}
