//! Markdown, for issues and pull requests: a count, then one section per finding with the
//! evidence and the fix in code blocks.

use std::fmt::Write as _;

use super::{Renderer, location};
use crate::finding::Report;

/// Markdown.
#[derive(Debug, Clone, Copy, Default)]
pub struct Markdown;

impl Renderer for Markdown {
    fn render(&self, report: &Report) -> String {
        let mut out = String::from("# gpufeed findings\n\n");
        if report.findings.is_empty() {
            out.push_str("No findings.\n");
            return out;
        }
        let _ = writeln!(out, "{}\n", report.counts());
        for f in &report.findings {
            let _ = write!(out, "## {} `{}`", f.severity, f.id);
            if let Some(place) = location(f) {
                let _ = write!(out, " at `{place}`");
            }
            let _ = writeln!(out, "\n\n{}\n", f.message);
            if !f.evidence.is_empty() {
                let _ = writeln!(out, "Evidence:\n\n{}\n", fence(&f.evidence, "text"));
            }
            if !f.fix.is_empty() {
                let _ = writeln!(out, "Fix:\n\n{}\n", fence(&f.fix, "text"));
            }
        }
        out
    }
}

/// A fenced code block long enough not to be closed by backticks inside `body`.
fn fence(body: &str, lang: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let ticks = "`".repeat(longest.max(2) + 1);
    format!("{ticks}{lang}\n{body}\n{ticks}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Finding, Severity};

    #[test]
    fn sections_and_fences() {
        let r = Report::new(vec![
            Finding::new("x", Severity::Warning, "m")
                .at("a.py", 1, 2)
                .evidence("uses ```")
                .fix("do y"),
        ]);
        let md = Markdown.render(&r);
        assert!(md.contains("## warning `x` at `a.py:1:2`\n\nm\n"), "{md}");
        assert!(md.contains("````text\nuses ```\n````"), "{md}");
        assert!(Markdown.render(&Report::default()).contains("No findings."));
    }
}
