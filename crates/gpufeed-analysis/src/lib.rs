//! The analyses behind gpufeed's commands, as a library: the binary (`crates/gpufeed`)
//! parses arguments, resolves settings, calls these and prints; the Python package calls
//! them too. Nothing here parses a command line or prints.
//!
//! - [`detect`]: the one trace-format detector: `detect(path) -> TraceSource` for files,
//!   folders, compressed files and log folders, and one [`detect::Format`] enum.
//! - [`trace`]: utilisation logs, step-time logs and step recordings analysed with
//!   `gpufeed-stats`, their documents and text reports.
//! - [`profiler`]: profiler traces (gpufeed-kineto) analysed and rendered as text.
//! - [`phase_steps`]: the `phase-steps` document of a `StepTimer` recording.
//! - [`monitor`]: a monitor session (sources, sampler, recorder) and its end report.
//! - [`profile`]: the loader measured (`profile data`, its benchmark grid) and the training
//!   step profiled (`profile step`).
//! - [`config`]: the config file loaded with its warnings returned, not printed.
//! - [`registry`]: every `--format json` document of the contract with its schema.
//!
//! ```no_run
//! use gpufeed_analysis::detect::{detect, TraceSource};
//! let source = detect(std::path::Path::new("run/gpu.csv"), None)?;
//! assert!(matches!(source, TraceSource::Log { .. }));
//! # Ok::<(), anyhow::Error>(())
//! ```

pub mod compare;
pub mod config;
pub mod detect;
pub mod monitor;
pub mod phase_steps;
pub mod profile;
pub mod profiler;
pub mod registry;
pub mod trace;

use gpufeed_data::precompute::Progress;

/// What a long analysis tells its caller while it runs: the progress of a precompute,
/// notes and warnings. The binary draws a progress bar and prints to stderr; Python and
/// tests stay silent ([`Quiet`]). Libraries never print (docs/ARCHITECTURE.md).
pub trait Ui: Progress {
    /// A note on what is being done (a cache built, a step skipped).
    fn note(&self, msg: &str);
    /// Something the user should know (a config key ignored, a value clamped).
    fn warn(&self, msg: &str);
}

/// A [`Ui`] that shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quiet;

impl Progress for Quiet {
    fn start(&self, _: u64, _: u64) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
}

impl Ui for Quiet {
    fn note(&self, _: &str) {}
    fn warn(&self, _: &str) {}
}
