//! Shared by the CLI test binaries: the built binary, the example logs, and the `trace`
//! utilisation document of DESIGN.md section 3 as typed structs that reject unknown fields
//! (`monitor` and `watch` end reports embed it), so the contract is mirrored once.
// Each test binary uses part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde::Deserialize;

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

/// `trace --format json` for utilisation.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UtilJson {
    pub kind: String,
    pub samples: usize,
    pub interval_s: f64,
    pub gpus: Vec<GpuJson>,
}

/// One GPU of it.
#[derive(Debug, Deserialize, PartialEq, Clone)]
#[serde(deny_unknown_fields)]
pub struct GpuJson {
    pub gpu: u32,
    pub mean: f64,
    pub std: f64,
    pub cv: f64,
    pub p5: f64,
    pub p50: f64,
    pub p95: f64,
    pub idle_fraction: f64,
    pub busy_fraction: f64,
    pub period_s: Option<f64>,
    pub period_strength: Option<f64>,
    pub idle_gaps: GapsJson,
    pub verdict: String,
}

/// Its idle gaps.
#[derive(Debug, Deserialize, PartialEq, Clone)]
#[serde(deny_unknown_fields)]
pub struct GapsJson {
    pub count: usize,
    pub mean_s: f64,
    pub max_s: f64,
}
