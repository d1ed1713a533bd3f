//! gpufeed's application layer: the work between "settings resolved" and "document
//! printed", for the command line and the Python package alike.
//!
//! - [`analyze`]: `gpufeed analyze` end to end: every stage in turn (attach, demo data,
//!   precompute, doctor, profile data, profile step, telemetry), the GPUs sampled during the
//!   step profile, the report ranked and its three files written. Python's
//!   `gpufeed.analyze(...)` calls it in-process.
//! - [`doctor`]: every doctor check run as `gpufeed doctor` runs them, with the runtime
//!   check (a short loader run on the dataset's cache).
//! - [`rules`]: the `rules` document and text: every rule, or one explained with its fix
//!   and, for a lint rule, the code that fires it and the code that does not.
//!
//! Nothing here parses a command line or prints: what a run tells its caller goes through
//! [`Stages`] (the binary draws a spinner on stderr; Python writes lines or stays quiet).
//!
//! ```no_run
//! use gpufeed_app::analyze::{AnalyzeSettings, analyze};
//! use gpufeed_app::Silent;
//! let settings = AnalyzeSettings {
//!     trace: Some("run/gpu.csv".into()),
//!     ..AnalyzeSettings::new("gpufeed-report")
//! };
//! let report = analyze(&settings, &Silent)?;
//! println!("{}", report.verdict);
//! # Ok::<(), anyhow::Error>(())
//! ```

pub mod analyze;
pub mod doctor;
pub mod rules;

use gpufeed_analysis::{Quiet, Ui};

/// What `analyze` tells its caller while it runs, stage by stage.
pub trait Stages: Sync {
    /// How many stages will run or be skipped.
    fn begin(&self, stages: u64);
    /// What is being done now (a spinner's message).
    fn detail(&self, text: &str);
    /// A line that stays: a stage's outcome (`doctor: ok in 3.1 s (...)`).
    fn line(&self, text: &str);
    /// One stage done or skipped.
    fn advance(&self);
    /// Runs `f` with the stage display set aside: the stage draws its own progress bar.
    fn aside(&self, f: &mut dyn FnMut());
    /// The display of one stage's own progress (a precompute's bar), notes and warnings;
    /// one per stage.
    fn ui(&self) -> Box<dyn Ui + '_>;
    /// The run is over.
    fn finish(&self);
}

/// [`Stages`] that show nothing (tests, and Python with `progress=False`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Stages for Silent {
    fn begin(&self, _: u64) {}
    fn detail(&self, _: &str) {}
    fn line(&self, _: &str) {}
    fn advance(&self) {}
    fn aside(&self, f: &mut dyn FnMut()) {
        f();
    }
    fn ui(&self) -> Box<dyn Ui + '_> {
        Box::new(Quiet)
    }
    fn finish(&self) {}
}
