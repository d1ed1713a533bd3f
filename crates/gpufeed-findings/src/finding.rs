//! The findings model: what every check returns and every renderer formats.
//!
//! A [`Finding`] is one problem (or one fact worth knowing) with a stable rule id, a
//! severity, where it is, the evidence behind it and the fix. A [`Report`] is the list of
//! findings of one command; serialised, it is the `findings` document of docs/contract.md:
//!
//! ```
//! use gpufeed_findings::{Finding, Report, Severity};
//!
//! let finding = Finding::new("loader-in-main-thread", Severity::Warning, "no loader threads")
//!     .at("config.yaml", 3, 16)
//!     .evidence("`data.num_workers: 0`")
//!     .fix("data:\n  num_workers: 8");
//! let report = Report::new(vec![finding]);
//! assert_eq!(report.exit_code(), 0); // warnings do not fail a run
//! let json = serde_json::to_value(&report).unwrap();
//! assert_eq!(json["findings"][0]["line"], 3);
//! assert_eq!(json["findings"][0]["severity"], "warning");
//! ```
//!
//! Exit codes follow ruff (docs/contract.md): [`Report::exit_code`] is 1 when any finding
//! has error severity, else 0; 2 (bad input) is the binary's business, never a finding's.

use std::cmp::Ordering;
use std::fmt;
use std::path::Path;

use gpufeed_contract::Findings;
use serde::Serialize;

pub use gpufeed_contract::Severity;

/// A text edit that resolves a finding: replace `byte_start..byte_end` of the file with
/// `replacement`. Only findings whose fix is safe to apply mechanically carry one; they are
/// what `validate --fix` applies.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TextEdit {
    /// First byte replaced.
    pub byte_start: usize,
    /// One past the last byte replaced.
    pub byte_end: usize,
    /// The new text.
    pub replacement: String,
}

/// One finding, as the checks build it: the contract's [`gpufeed_contract::Finding`] (`id`,
/// `severity`, `message`, `path`, `line`, `column`, `evidence`, `fix`), which is what is
/// written, plus the text edit `validate --fix` applies, or why it would not apply one.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The rule's stable id (`tf-map-sequential`); see the crate docs for the list.
    pub id: &'static str,
    /// How much it matters.
    pub severity: Severity,
    /// What is wrong and why it matters.
    pub message: String,
    /// The file, as given on the command line; `None` when not about a file.
    pub path: Option<String>,
    /// Line, from 1.
    pub line: Option<usize>,
    /// Column, from 1, in characters.
    pub column: Option<usize>,
    /// What was seen: values, the offending text, other places involved.
    pub evidence: String,
    /// What to change: YAML for a config, code for a lint rule, a command.
    pub fix: String,
    /// The text edit `validate --fix` applies, when the fix is mechanical and safe.
    pub edit: Option<TextEdit>,
    /// Why `validate --fix` would not apply the finding's edit (which is then `None`), set
    /// by `gpufeed_validate::fix::preview`: the rename would give the key a value it refuses, say.
    pub not_fixed: Option<String>,
}

impl Finding {
    /// A finding with no place, evidence or fix yet.
    #[must_use]
    pub fn new(id: &'static str, severity: Severity, message: impl Into<String>) -> Self {
        Self {
            id,
            severity,
            message: message.into(),
            path: None,
            line: None,
            column: None,
            evidence: String::new(),
            fix: String::new(),
            edit: None,
            not_fixed: None,
        }
    }

    /// Ties the finding to a file, line and column (1-based).
    #[must_use]
    pub fn at(mut self, path: impl AsRef<Path>, line: usize, column: usize) -> Self {
        self.path = Some(path.as_ref().display().to_string());
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    /// Ties the finding to a file but no place in it.
    #[must_use]
    pub fn in_file(mut self, path: impl AsRef<Path>) -> Self {
        self.path = Some(path.as_ref().display().to_string());
        self
    }

    /// Sets the evidence.
    #[must_use]
    pub fn evidence(mut self, evidence: impl Into<String>) -> Self {
        self.evidence = evidence.into();
        self
    }

    /// Sets the fix.
    #[must_use]
    pub fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = fix.into();
        self
    }

    /// Attaches the edit that `validate --fix` applies.
    #[must_use]
    pub fn edit(mut self, edit: TextEdit) -> Self {
        self.edit = Some(edit);
        self
    }

    /// Order of reports: by file, then place (findings without a line first), then id.
    fn order(&self, other: &Self) -> Ordering {
        self.path
            .cmp(&other.path)
            .then(self.line.cmp(&other.line))
            .then(self.column.cmp(&other.column))
            .then(self.id.cmp(other.id))
            .then(self.message.cmp(&other.message))
    }
}

impl From<&Finding> for gpufeed_contract::Finding {
    fn from(f: &Finding) -> Self {
        Self {
            id: f.id.to_owned(),
            severity: f.severity,
            message: f.message.clone(),
            path: f.path.clone(),
            line: f.line,
            column: f.column,
            evidence: f.evidence.clone(),
            fix: f.fix.clone(),
        }
    }
}

impl From<Report> for Findings {
    fn from(r: Report) -> Self {
        r.document()
    }
}

/// Counts of findings by severity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Error-severity findings.
    pub errors: usize,
    /// Warnings.
    pub warnings: usize,
    /// Infos.
    pub infos: usize,
}

impl fmt::Display for Counts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        write!(
            f,
            "{}, {}, {}",
            plural(self.errors, "error", "errors"),
            plural(self.warnings, "warning", "warnings"),
            plural(self.infos, "info", "infos"),
        )
    }
}

/// The findings of one command. It serialises as the contract's `findings` document
/// ([`Findings`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[serde(into = "Findings")]
pub struct Report {
    /// Every finding, sorted by file and place.
    pub findings: Vec<Finding>,
}

impl Report {
    /// A report of these findings, sorted by file and place.
    #[must_use]
    pub fn new(mut findings: Vec<Finding>) -> Self {
        findings.sort_by(Finding::order);
        Self { findings }
    }

    /// The `findings` document of these findings.
    #[must_use]
    pub fn document(&self) -> Findings {
        Findings::new(self.findings.iter().map(Into::into).collect())
    }

    /// True when any finding has error severity.
    #[must_use]
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }

    /// The exit code of a command that reports these findings (ruff's convention): 1 when
    /// any finding has error severity, else 0.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        u8::from(self.has_errors())
    }

    /// How many findings of each severity.
    #[must_use]
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for f in &self.findings {
            match f.severity {
                Severity::Error => c.errors += 1,
                Severity::Warning => c.warnings += 1,
                Severity::Info => c.infos += 1,
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_code_is_one_only_with_an_error() {
        let info = Finding::new("a", Severity::Info, "i");
        let warning = Finding::new("b", Severity::Warning, "w");
        let error = Finding::new("c", Severity::Error, "e");
        assert_eq!(Report::new(vec![]).exit_code(), 0);
        assert_eq!(
            Report::new(vec![info.clone(), warning.clone()]).exit_code(),
            0
        );
        assert_eq!(Report::new(vec![info, warning, error]).exit_code(), 1);
    }

    #[test]
    fn json_has_exactly_the_contract_fields() {
        let f = Finding::new("x", Severity::Error, "m")
            .evidence("e")
            .fix("f")
            .edit(TextEdit {
                byte_start: 0,
                byte_end: 1,
                replacement: "y".into(),
            });
        let v = serde_json::to_value(Report::new(vec![f])).unwrap_or_default();
        let obj = v["findings"][0].as_object().cloned().unwrap_or_default();
        let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "column", "evidence", "fix", "id", "line", "message", "path", "severity"
            ]
        );
        assert!(obj["line"].is_null() && obj["column"].is_null() && obj["path"].is_null());
    }

    #[test]
    fn sorted_by_place() {
        let a = Finding::new("a", Severity::Info, "").at("b.py", 2, 1);
        let b = Finding::new("b", Severity::Info, "").at("a.py", 9, 1);
        let c = Finding::new("c", Severity::Info, "").at("b.py", 1, 5);
        let r = Report::new(vec![a, b, c]);
        let ids: Vec<_> = r.findings.iter().map(|f| f.id).collect();
        assert_eq!(ids, ["b", "c", "a"]);
        assert_eq!(r.counts().to_string(), "0 errors, 0 warnings, 3 infos");
    }
}
