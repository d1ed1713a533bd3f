//! Reads PyTorch profiler (Kineto) and TensorFlow profiler traces, gives Holistic Trace
//! Analysis' GPU time breakdowns, then says where the GPU idles inside each step, and why.
//!
//! - [`read`]: the streaming reader of Chrome trace JSON, `.gz` included; a file cut off
//!   mid-write is read up to the cut.
//! - [`hta`]: HTA 0.5.0's figures by its own rules: temporal breakdown (idle, compute,
//!   non-compute), idle time per stream (host wait, kernel wait, other), kernel types.
//! - [`steps`]: per step, the GPU's busy share and where the host was while it idled
//!   (data loader, host-to-device copies, synchronisations, launch gaps).
//! - [`verdict`]: input-, transfer-, sync-, launch- or compute-bound, or oscillating, with
//!   evidence, thresholds and a fix.
//! - [`report`]: a file or folder of per-rank traces → the `profiler` JSON document ([`Report`],
//!   a contract document: `schema_version`, its JSON Schema, `gpufeed_contract::Document`), with
//!   the straggler across ranks.
//! - [`job`]: a folder of N ranks read `jobs` files at a time, each kept only as its
//!   summary; the fan-out of a job over an array job's tasks (`read_part`, `merge`).
//! - [`stream`]: a PyTorch trace analysed from its events spilled to disk, in memory bounded
//!   by its steps and streams: the same summary as the in-memory route, field for field.
//! - [`tf`]: TensorFlow's trace viewer JSON mapped onto the same rows.
//! - [`xplane`]: TensorFlow's `*.xplane.pb` (an `XSpace` protobuf) read onto the rows of its
//!   trace viewer JSON.
//! - [`synth`]: a generator of traces with known truth, in PyTorch's and TensorFlow's formats
//!   (trace viewer JSON and xplane).
//!
//! ```
//! use gpufeed_kineto::synth::{Case, generate};
//! let trace = generate(&Case::input_bound(), 0);
//! let report = gpufeed_kineto::analyze_bytes(&trace, "input.json".as_ref()).unwrap();
//! assert_eq!(report.ranks[0].verdict.unwrap().as_str(), "input-bound");
//! ```
//!
//! References: HTA (`facebookresearch/HolisticTraceAnalysis`, v0.5.0), the Chrome trace
//! event format, TF Profiler's input-pipeline analyzer.

pub mod error;
pub mod estimate;
pub mod hta;
pub mod job;
pub mod read;
pub mod report;
pub mod steps;
pub mod stream;
pub mod synth;
pub mod tf;
pub mod verdict;
pub mod xplane;

use std::path::Path;

pub use error::{Error, Result};
pub use report::{Options, RankReport, Report, analyze, analyze_path};
pub use verdict::{Bottleneck, CauseShare};

/// Reads one trace from bytes (a generated one, in tests) and analyses it.
pub fn analyze_bytes(json: &[u8], name: &Path) -> Result<Report> {
    let t = read::read_from(json, name)?;
    Ok(analyze(name, vec![t], Options::default()))
}
