//! Text: one `path:line:col: severity[id] message` line per finding (the compiler and
//! ruff convention, so editors can jump to it), then indented evidence and fix lines, then a
//! count. Reads right without colour.

use std::fmt::Write as _;

use super::{Renderer, location};
use crate::finding::{Finding, Report};

/// The human report.
#[derive(Debug, Clone, Copy, Default)]
pub struct Text;

impl Renderer for Text {
    fn render(&self, report: &Report) -> String {
        let mut out = String::new();
        for f in &report.findings {
            finding(&mut out, f, "");
        }
        if report.findings.is_empty() {
            out.push_str("no findings\n");
        } else {
            let _ = writeln!(out, "{}", report.counts());
        }
        out
    }
}

/// One finding: `place: severity[id] message`, then its evidence and fix (saying whether
/// `--fix` applies it, and why not when it has an edit `--fix` leaves out), every line
/// prefixed with `indent`.
pub(crate) fn finding(out: &mut String, f: &Finding, indent: &str) {
    let _ = write!(out, "{indent}");
    if let Some(place) = location(f) {
        let _ = write!(out, "{place}: ");
    }
    let _ = writeln!(out, "{}[{}] {}", f.severity, f.id, f.message);
    field(out, indent, "evidence", &f.evidence);
    let label = if f.edit.is_some() {
        "fix (--fix applies it)"
    } else {
        "fix"
    };
    field(out, indent, label, &f.fix);
    if let Some(why) = &f.not_fixed {
        field(out, indent, "--fix does not apply it", why);
    }
}

/// `  label: value` on one line, or the label and the value's lines indented below it.
fn field(out: &mut String, indent: &str, label: &str, value: &str) {
    if value.is_empty() {
        return;
    }
    if value.contains('\n') {
        let _ = writeln!(out, "{indent}  {label}:");
        for line in value.lines() {
            let _ = writeln!(out, "{indent}    {line}");
        }
    } else {
        let _ = writeln!(out, "{indent}  {label}: {value}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Finding, Severity, TextEdit};

    #[test]
    fn layout() {
        let r = Report::new(vec![
            Finding::new("a-rule", Severity::Error, "broken")
                .at("c.yaml", 3, 5)
                .evidence("`x: 1`")
                .fix("data:\n  x: 2"),
            Finding::new("b-rule", Severity::Info, "about the file")
                .in_file("c.yaml")
                .fix("one line")
                .edit(TextEdit {
                    byte_start: 0,
                    byte_end: 0,
                    replacement: String::new(),
                }),
        ]);
        assert_eq!(
            Text.render(&r),
            "c.yaml: info[b-rule] about the file\n  fix (--fix applies it): one line\n\
             c.yaml:3:5: error[a-rule] broken\n  evidence: `x: 1`\n  fix:\n    data:\n      x: 2\n\
             1 error, 0 warnings, 1 info\n"
        );
        assert_eq!(Text.render(&Report::default()), "no findings\n");
    }

    #[test]
    fn a_fix_that_fix_leaves_out_says_why() {
        let mut f = Finding::new("c-rule", Severity::Warning, "typo")
            .at("c.yaml", 2, 3)
            .fix("rename `a` to `b`");
        f.not_fixed = Some("renamed to `b`, the config would have a new error".to_owned());
        assert_eq!(
            Text.render(&Report::new(vec![f])),
            "c.yaml:2:3: warning[c-rule] typo\n  fix: rename `a` to `b`\n  \
             --fix does not apply it: renamed to `b`, the config would have a new error\n\
             0 errors, 1 warning, 0 infos\n"
        );
    }
}
