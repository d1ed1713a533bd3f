//! What gpufeed's checks return: [`Finding`]s with a stable rule id, a severity, the place,
//! the evidence, why it matters and the fix; the [`Report`] of one command; the one rule
//! registry ([`RULES`]) with each rule's severity, origin, why and fix; the checkers'
//! limits ([`constants::TABLE`]); and the renderers ([`render`]: text, JSON, Markdown, the
//! doctor's sections).
//!
//! The checks live in their own crates and all return these findings: `gpufeed-validate`
//! (the trainer's config, and `--fix`), `gpufeed-lint` (Python training code) and
//! `gpufeed-doctor` (the machine, the data and the environment, plus both of the others).
//! Each of those crates' docs holds the reference table of its rules; a test in each keeps
//! it in step with [`RULES`].
//!
//! ```
//! use gpufeed_findings::render::{Json, Renderer};
//! use gpufeed_findings::{Report, Severity, finding};
//!
//! let f = finding("loader-in-main-thread", "`data.num_workers` is 0")
//!     .at("config.yaml", 3, 16)
//!     .fix("data:\n  num_workers: 8");
//! assert_eq!(f.severity, Severity::Warning);
//! let report = Report::new(vec![f]);
//! assert_eq!(report.exit_code(), 0); // warnings only
//! assert!(Json.render(&report).starts_with("{\"schema_version\":1,\"findings\":["));
//! ```
//!
//! Exit codes (docs/contract.md, ruff's convention): [`Report::exit_code`] is 1 when any
//! finding has error severity, else 0; a file that cannot be read at all is the binary's
//! exit code 2.
//!
//! # Rules
//!
//! Ids are stable (scripts and `# gpufeed: ignore[...]` comments name them). Each finding's
//! message says what was found and why it matters; `evidence` holds the values or code seen;
//! `fix` is YAML to paste (config), code (lint), or a command. The thresholds the rules
//! compare with are in gpufeed's one table, `gpufeed_stats::thresholds`; the checkers'
//! input limits and MyXTTS' defaults are in [`constants::TABLE`], each with its source.

pub mod check;
pub mod constants;
pub mod finding;
pub mod render;
pub mod rules;

pub use check::Check;
pub use finding::{Counts, Finding, Report, Severity, TextEdit};
pub use rules::{Origin, RULES, Rule, finding, rule_info};
