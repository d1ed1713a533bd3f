//! Statistics for gpufeed: pure functions, no I/O.
//!
//! Every figure gpufeed reports about a series comes from here, so that a percentile or a
//! period means the same thing in `trace`, `monitor`, `profile data` and `profile step`.
//!
//! - [`summary`]: n, mean, population std, min, max, median, p5/p95/p99 (numpy's linear
//!   interpolation), cv.
//! - [`outliers`]: modified Z-score from the MAD (Iglewicz & Hoaglin), safe when MAD is 0.
//! - [`periodicity`]: autocorrelation of the detrended series with significance bounds;
//!   the dominant period, refined below one sample, and its strength.
//! - [`util`]: utilisation analysis (idle and busy fractions, idle gaps, swing, period in
//!   seconds) and its verdict: `idle`, `oscillating`, `bursty`, `starved`, `stable`.
//! - [`steps`]: step-time analysis and its verdict: `stable`, `oscillating`, `unstable`.
//! - [`sampling`]: time shares from samples at random instants: Poisson gaps, effective
//!   sample size, the 95 % margin of a share.
//! - [`thresholds`]: the one table of thresholds, each with its source.
//! - [`fmt`]: figures written for people (`38 %`, `850 ms`, `1.5 GiB`), one way everywhere.
//! - [`duration`]: durations as people type them (`100ms`, `1s`, `60`), for `--interval`.
//! - [`size`]: sizes as people type them (`64MB`, `1GiB`), for `synth-job --rank-size`.
//!
//! ```
//! use gpufeed_stats::{steps::analyze_steps, util::analyze_util};
//! let util: Vec<f64> = (0..300).map(|i| if i % 10 < 5 { 38.0 } else { 2.0 }).collect();
//! let a = analyze_util(&util, 0.1).unwrap();
//! assert_eq!(a.verdict.as_str(), "oscillating");
//! assert!((a.period_s.unwrap() - 1.0).abs() < 1e-3);
//! ```
#![deny(missing_docs)]

pub mod duration;
pub mod fmt;
pub mod outliers;
pub mod periodicity;
pub mod sampling;
pub mod size;
pub mod steps;
pub mod summary;
pub mod thresholds;
pub mod util;

#[cfg(test)]
mod testutil;

pub use periodicity::{Periodicity, detect_period};
pub use steps::{
    PartialBatches, StepAnalysis, StepVerdict, analyze_batches, analyze_steps, whole_batches,
};
pub use summary::{Summary, summarize};
pub use util::{IdleGaps, UtilAnalysis, UtilVerdict, analyze_util};
