//! The `doctor` text report: a one-line summary, then one section per check (GPU, Host,
//! Storage, Frameworks, Environment, Config, Code, Runtime), worst finding first, each in
//! the [`Text`](super::Text) layout indented under its heading. A check with no finding
//! says `ok`; a check not run says how to run it.

use std::fmt::Write as _;

use super::Renderer;
use super::text::finding;
use crate::check::Check;
use crate::finding::Report;

/// The grouped `doctor` report.
#[derive(Debug, Clone, Default)]
pub struct DoctorText {
    /// Checks not run, with how to run them.
    pub skipped: Vec<(Check, String)>,
}

impl Renderer for DoctorText {
    fn render(&self, report: &Report) -> String {
        let counts = report.counts();
        let mut out = String::new();
        let verdict = if counts.errors > 0 {
            "problems found"
        } else if counts.warnings > 0 {
            "warnings"
        } else {
            "nothing wrong found"
        };
        let _ = writeln!(out, "gpufeed doctor: {verdict} ({counts})");
        for check in Check::ALL {
            let mut fs: Vec<_> = report
                .findings
                .iter()
                .filter(|f| Check::of(f.id) == Some(check))
                .collect();
            // Worst first; the report's order (place, id) among equals.
            fs.sort_by_key(|f| std::cmp::Reverse(f.severity));
            let _ = writeln!(out, "\n{}", check.title());
            if fs.is_empty() {
                match self.skipped.iter().find(|(c, _)| *c == check) {
                    Some((_, how)) => {
                        let _ = writeln!(out, "  not run: {how}");
                    }
                    None => out.push_str("  ok\n"),
                }
            }
            for f in fs {
                finding(&mut out, f, "  ");
            }
        }
        let other: Vec<_> = report
            .findings
            .iter()
            .filter(|f| Check::of(f.id).is_none())
            .collect();
        if !other.is_empty() {
            out.push_str("\nOther\n");
            for f in other {
                finding(&mut out, f, "  ");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Finding, Severity};

    #[test]
    fn grouped_worst_first_with_summary() {
        let r = Report::new(vec![
            Finding::new("host-summary", Severity::Info, "2 cores"),
            Finding::new("host-load-high", Severity::Warning, "load 3.0")
                .evidence("1-minute load 3.00"),
            Finding::new("gpu-no-driver", Severity::Info, "no NVIDIA driver found"),
            Finding::new("config-syntax", Severity::Error, "bad YAML").at("c.yaml", 2, 1),
        ]);
        let text = DoctorText {
            skipped: vec![(Check::Code, "pass `--code DIR`".into())],
        }
        .render(&r);
        assert!(
            text.starts_with("gpufeed doctor: problems found (1 error, 1 warning, 2 infos)\n\nGPU\n  info[gpu-no-driver] no NVIDIA driver found\n\nHost\n  warning[host-load-high] load 3.0\n    evidence: 1-minute load 3.00\n  info[host-summary] 2 cores\n"),
            "{text}"
        );
        assert!(text.contains("\nStorage\n  ok\n"), "{text}");
        assert!(
            text.contains("\nConfig\n  c.yaml:2:1: error[config-syntax] bad YAML\n"),
            "{text}"
        );
        assert!(
            text.contains("\nCode\n  not run: pass `--code DIR`\n"),
            "{text}"
        );
    }
}
