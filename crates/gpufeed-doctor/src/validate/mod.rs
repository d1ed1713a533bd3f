//! `gpufeed validate`: the trainer's YAML checked by `gpufeed-config` (every load error and
//! warning becomes a finding) and by the data-pipeline and GPU rules listed in the crate docs.
//!
//! ```
//! use std::path::Path;
//! use gpufeed_doctor::validate::{Context, CoresOf, validate_text};
//!
//! let text = "data:\n  num_workers: 0\ntraining:\n  learning_rate: 1e-4\n";
//! let v = validate_text(text, Path::new("c.yaml"), &Context::new(Some(8), CoresOf::TrainingMachine));
//! let ids: Vec<&str> = v.findings.iter().map(|f| f.id).collect();
//! assert!(ids.contains(&"loader-in-main-thread"));
//! assert!(ids.contains(&"config-float-is-string-for-pyyaml"));
//! assert!(v.parsed);
//! ```
//!
//! A file that cannot be read at all (missing, a folder, no permission) is a
//! [`ValidateError`]: bad input, exit code 2. Everything about the file's *content* (not
//! YAML, a list at the top, duplicate keys, too large, not UTF-8) is a finding.

mod config;
mod rules;
pub mod trainers;

use std::path::{Path, PathBuf};

use gpufeed_stats::fmt::bytes;

use crate::constants::MAX_CONFIG_BYTES;
use crate::finding::Finding;
use crate::rules::finding;

/// What the rules may know about the machine the trainer runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Context {
    /// Cores of the machine the findings about cores are judged against; `None` skips
    /// those rules.
    pub cores: Option<usize>,
    /// Whose cores these are.
    pub cores_of: CoresOf,
}

/// Whose cores [`Context::cores`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CoresOf {
    /// The machine running `validate` (`std::thread::available_parallelism`): an assumption
    /// about the training machine, so findings about cores are info and say so.
    #[default]
    ThisMachine,
    /// The training machine: `validate --cores N`, or `doctor`, which runs on it.
    TrainingMachine,
}

impl Context {
    /// A context with `cores` of the machine `of`.
    #[must_use]
    pub fn new(cores: Option<usize>, of: CoresOf) -> Self {
        Self {
            cores,
            cores_of: of,
        }
    }

    /// True when the cores are the training machine's.
    #[must_use]
    pub fn cores_of_training_machine(&self) -> bool {
        self.cores_of == CoresOf::TrainingMachine
    }

    /// `the training machine has 16 cores (--cores)`, for evidence.
    #[must_use]
    pub fn describe(&self) -> String {
        match (self.cores, self.cores_of) {
            (None, _) => "cores unknown".to_owned(),
            (Some(c), CoresOf::TrainingMachine) => format!("the training machine has {c} cores"),
            (Some(c), CoresOf::ThisMachine) => format!(
                "this machine has {c} cores (an assumption about the training machine; \
                 `--cores N` gives its count)"
            ),
        }
    }
}

/// The outcome of validating one config.
#[derive(Debug, Clone, PartialEq)]
pub struct Validation {
    /// The file, as given.
    pub path: PathBuf,
    /// Its text, when it was read as UTF-8.
    pub text: Option<String>,
    /// True when the YAML parsed, so the spans of the edits are valid (`--fix` needs it).
    pub parsed: bool,
    /// Every finding, in file order.
    pub findings: Vec<Finding>,
}

impl Validation {
    /// How many findings have error severity.
    #[must_use]
    pub fn error_count(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == crate::Severity::Error)
            .count()
    }
}

/// A config file that could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum ValidateError {
    /// The path is missing or unreadable.
    #[error("cannot read config file `{}`: {reason}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// The path is a folder.
    #[error("`{}` is a folder; `validate` takes the training config file (YAML)", path.display())]
    NotAFile {
        /// The folder.
        path: PathBuf,
    },
}

/// Validates config text; `path` names the file in findings.
#[must_use]
pub fn validate_text(text: &str, path: &Path, ctx: &Context) -> Validation {
    // Whose config is it? MyXTTS' keeps every rule below; another trainer's is checked
    // under its own key names; a file that is neither says so once.
    if let Ok(outline) = gpufeed_config::outline(text, path) {
        let findings = match trainers::whose(&outline) {
            trainers::Whose::Myxtts => None,
            trainers::Whose::Other(t) => Some(trainers::check(&outline, t, ctx, path)),
            // A file with no top-level keys (a list, a scalar, nothing) is no trainer's
            // config: the checks below say what is wrong with it.
            trainers::Whose::Unknown if outline.top_keys().is_empty() => None,
            trainers::Whose::Unknown => Some(vec![trainers::unrecognised(&outline, path)]),
        };
        if let Some(findings) = findings {
            return Validation {
                path: path.to_path_buf(),
                text: Some(text.to_owned()),
                parsed: true,
                findings,
            };
        }
    }
    let (mut findings, parsed) = match gpufeed_config::check(text, path) {
        Ok(loaded) => {
            let mut findings = config::warnings(&loaded.warnings, Some(&loaded.source), text, path);
            findings.extend(rules::check(&loaded, ctx, path));
            (findings, true)
        }
        Err(rejected) => {
            let source = rejected.source.as_deref();
            let mut findings = config::errors(&rejected.errors, text, path);
            findings.extend(config::warnings(&rejected.warnings, source, text, path));
            (findings, source.is_some())
        }
    };
    // `text-cap-mismatch` is the sharper form of gpufeed-config's `config-two-text-caps`.
    if findings.iter().any(|f| f.id == "text-cap-mismatch") {
        findings.retain(|f| f.id != "config-two-text-caps");
    }
    Validation {
        path: path.to_path_buf(),
        text: Some(text.to_owned()),
        parsed,
        findings,
    }
}

/// Reads and validates a config file.
///
/// # Errors
/// [`ValidateError`] when the file cannot be read at all.
pub fn validate_file(path: &Path, ctx: &Context) -> Result<Validation, ValidateError> {
    let read_error = |e: &std::io::Error| ValidateError::Read {
        path: path.to_path_buf(),
        reason: innermost(e),
    };
    let meta = std::fs::metadata(path).map_err(|e| read_error(&e))?;
    if meta.is_dir() {
        return Err(ValidateError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let unreadable = |f: Finding| Validation {
        path: path.to_path_buf(),
        text: None,
        parsed: false,
        findings: vec![f],
    };
    // Read at most one byte over the cap: a pipe or a device (`/dev/zero`) has no size to
    // check first.
    let bytes = match gpufeed_config::read_capped(path, MAX_CONFIG_BYTES) {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(size)) => {
            let (size, evidence) = match size {
                Some(n) => (bytes(n), format!("file size {n} bytes")),
                None => (
                    format!("more than {}", bytes(MAX_CONFIG_BYTES)),
                    format!("more than {MAX_CONFIG_BYTES} bytes read (a pipe or a device)"),
                ),
            };
            return Ok(unreadable(
                finding(
                    "config-too-large",
                    &format!(
                        "`{}` is {size}, more than the {} a config may have; it was not parsed",
                        path.display(),
                        bytes(MAX_CONFIG_BYTES)
                    ),
                )
                .in_file(path)
                .evidence(evidence)
                .fix("pass the training config (a YAML file of a few KB)"),
            ));
        }
        Err(e) => return Err(read_error(&e)),
    };
    match String::from_utf8(bytes) {
        Ok(text) => Ok(validate_text(&text, path, ctx)),
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let before = String::from_utf8_lossy(&e.as_bytes()[..valid]);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            Ok(unreadable(
                finding(
                    "config-not-utf8",
                    &format!("`{}` is not UTF-8 text", path.display()),
                )
                .at(path, line, column)
                .evidence(format!(
                    "byte {valid} (0x{:02x}) is not valid UTF-8",
                    e.as_bytes().get(valid).copied().unwrap_or(0)
                ))
                .fix("save the file as UTF-8 (or pass the YAML config, not a binary file)"),
            ))
        }
    }
}

/// The reason of an I/O error. Metadata comes from `std::fs` (its message is the operating
/// system's, without a path, since ours names it); reads go through fs-err, whose message
/// names the file and the operation.
fn innermost(error: &std::io::Error) -> String {
    error.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_over_the_cap_is_a_finding_not_a_read() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("c.yaml");
        let file = fs_err::File::create(&big).unwrap();
        file.set_len(MAX_CONFIG_BYTES + 1).unwrap();
        // `/dev/zero` has no size and no end: read no further than the cap.
        for (path, evidence) in [
            (big.as_path(), "file size 10485761 bytes"),
            (
                Path::new("/dev/zero"),
                "more than 10485760 bytes read (a pipe or a device)",
            ),
        ] {
            if !path.exists() {
                continue;
            }
            let v = validate_file(path, &Context::default()).unwrap();
            assert!(!v.parsed);
            let [f] = v.findings.as_slice() else {
                panic!("{:?}", v.findings);
            };
            assert_eq!(f.id, "config-too-large");
            assert!(
                f.message
                    .contains("more than the 10.0 MiB a config may have"),
                "{}",
                f.message
            );
            assert_eq!(f.evidence, evidence);
        }
    }

    #[test]
    fn rejected_config_keeps_warnings_and_spans() {
        let v = validate_text(
            "data:\n  batch_size: \"32x\"\ntraining:\n  learning_rate: 1e-4\n",
            Path::new("c.yaml"),
            &Context::default(),
        );
        assert!(v.parsed);
        let ids: Vec<_> = v.findings.iter().map(|f| (f.id, f.line)).collect();
        assert!(ids.contains(&("config-wrong-type", Some(2))), "{ids:?}");
        assert!(
            ids.contains(&("config-float-is-string-for-pyyaml", Some(4))),
            "{ids:?}"
        );
        assert_eq!(v.error_count(), 1);
    }

    #[test]
    fn syntax_error_is_not_parsed() {
        let v = validate_text("data: [1, 2\n", Path::new("c.yaml"), &Context::default());
        assert!(!v.parsed);
        assert_eq!(v.findings.len(), 1);
        assert_eq!(v.findings[0].id, "config-syntax");
        assert!(v.findings[0].line.is_some());
    }
}
