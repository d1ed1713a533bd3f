//! The `findings` document of `doctor`, `validate` and `lint`: one object per problem (or
//! fact worth knowing), with its rule id, severity, place, evidence and fix.
//!
//! The checks build their findings with `gpufeed_findings::Finding` (which also carries the
//! text edit `validate --fix` applies); the document written is this one, and `analyze`'s
//! report holds these findings too.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Document;

/// How much a finding matters.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing to change unless it applies to you.
    Info,
    /// Costs speed or hides a mistake; the run still works.
    Warning,
    /// The run fails, gives wrong results, or a setting does not do what it says. Makes the
    /// command exit with 1.
    Error,
}

impl Severity {
    /// The lowercase name used in every output format.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// The rule's stable id (`tf-map-sequential`, `storage-slow-random`, ...).
    pub id: String,
    /// How much it matters.
    pub severity: Severity,
    /// What is wrong and why it matters.
    pub message: String,
    /// The file, as given on the command line; `null` when not about a file.
    pub path: Option<String>,
    /// Line, from 1; `null` when not tied to a place.
    pub line: Option<usize>,
    /// Column, from 1, in characters; `null` when not tied to a place.
    pub column: Option<usize>,
    /// What was seen: values, the offending text, other places involved.
    pub evidence: String,
    /// What to change: YAML for a config, code for a lint rule, a command.
    pub fix: String,
}

/// The findings of one `doctor`, `validate` or `lint` run, sorted by file and place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Findings {
    /// [`Document::VERSION`] of this document.
    pub schema_version: u32,
    /// Every finding.
    pub findings: Vec<Finding>,
}

impl Findings {
    /// A document of these findings, of this version.
    #[must_use]
    pub fn new(findings: Vec<Finding>) -> Self {
        Self {
            schema_version: Self::VERSION,
            findings,
        }
    }
}

impl Document for Findings {
    const NAME: &'static str = "findings";
    const VERSION: u32 = 1;
    const WRITER: &'static str = "gpufeed doctor | validate | lint --format json";
}
