//! Shared by the CLI test binaries: the built binary, the example logs, the fake NVML and
//! interpreter, and a check of the `findings` document (the contract's types,
//! gpufeed-contract, which reject unknown fields).
// Each test binary uses part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use gpufeed_contract::{Document as _, Finding, Findings, Severity};

/// The gpufeed binary under test.
pub fn gpufeed() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gpufeed"))
}

/// A file of the repository's `examples/`.
pub fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name)
}

/// The address `monitor --prometheus` serves, from its first line on stderr (read from
/// `stderr`, which the caller keeps reading, or drops).
pub fn served_address(stderr: &mut impl std::io::BufRead) -> String {
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    first
        .trim()
        .strip_prefix("serving Prometheus metrics on http://")
        .and_then(|r| r.strip_suffix("/metrics"))
        .unwrap_or_else(|| panic!("{first}"))
        .to_owned()
}

// `gpufeed-telemetry`'s fake NVML and its builder, `fake_nvml()`.
include!("../../../gpufeed-telemetry/tests/fake_nvml/builder.rs");

/// The published JSON Schema `docs/schemas/NAME.json` as a validator.
pub fn published_schema(name: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/schemas")
        .join(format!("{name}.json"));
    let schema: serde_json::Value =
        serde_json::from_str(&fs_err::read_to_string(path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// Fails, with every error and where it is, unless `doc` validates against the published
/// schema `NAME`.
pub fn assert_valid(name: &str, doc: &serde_json::Value) {
    let errors: Vec<String> = published_schema(name)
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{name}: {}\n{doc}", errors.join("\n"));
}

/// A finished run of the binary.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(out: Output) -> Self {
        Self {
            code: out.status.code(),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }
}

/// The findings of a `--format json` run, whose whole stdout must be exactly one findings
/// document with well-formed findings: a known severity, a message, a fix for every
/// error and warning, a line only with a column.
pub fn findings(run: &Run) -> Vec<Finding> {
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    let doc: Findings =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    assert_eq!(doc.schema_version, Findings::VERSION);
    for f in &doc.findings {
        assert!(!f.message.is_empty(), "{f:?}");
        // Every problem carries its fix; an info finding may only report (a summary).
        assert!(f.severity == Severity::Info || !f.fix.is_empty(), "{f:?}");
        assert_eq!(f.line.is_some(), f.column.is_some(), "{f:?}");
    }
    doc.findings
}

/// A fake `python3` that answers every framework probe of `doctor` with "not installed".
pub fn fake_python(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join("python3");
    fs_err::write(
        &path,
        "#!/bin/sh\necho 'GPUFEED_PROBE {\"installed\": false}'\n",
    )
    .unwrap();
    fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}
