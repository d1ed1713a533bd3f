//! Step-time analysis: is every training step (or batch) as fast as the last?
//!
//! Input is a series of step times in milliseconds, warm-up already removed.
//!
//! # Figures
//! The [`Summary`] in milliseconds, the number of outliers by modified Z-score
//! ([`crate::outliers`]) and the dominant period in steps. A stall every k-th step is the
//! classic cycle: a round-robin over k data workers where one is slow, a cache flush, a
//! checkpoint or logging step every k steps.
//!
//! # Verdict (first rule that holds)
//! 1. `oscillating`: a significant period **and** cv >= [`STEP_CV_OSCILLATING`]; a cycle
//!    that moves the step time by less than that is reported but harmless.
//! 2. `unstable`: cv >= [`STEP_CV_UNSTABLE`] without such a cycle.
//! 3. `stable`.
//!
//! ```
//! use gpufeed_stats::steps::{analyze_steps, StepVerdict};
//! let stall: Vec<f64> = (0..96).map(|i| if i % 8 == 7 { 400.0 } else { 100.0 }).collect();
//! let a = analyze_steps(&stall).unwrap();
//! assert_eq!(a.verdict, StepVerdict::Oscillating);
//! assert_eq!(a.period.unwrap().lag, 8);
//! ```

use serde::Serialize;

use crate::outliers::count_outliers;
use crate::periodicity::{Periodicity, detect_period};
use crate::summary::{Summary, summarize};
use crate::thresholds::{STEP_CV_OSCILLATING, STEP_CV_UNSTABLE};

/// What the step times say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepVerdict {
    /// Steady step times.
    Stable,
    /// Step times repeat a cycle.
    Oscillating,
    /// Step times vary without a cycle.
    Unstable,
}

impl StepVerdict {
    /// The verdict as it appears in JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stable => "stable",
            Self::Oscillating => "oscillating",
            Self::Unstable => "unstable",
        }
    }
}

/// Analysis of a step-time series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepAnalysis {
    /// Summary in milliseconds.
    pub summary: Summary,
    /// The dominant cycle, in steps.
    pub period: Option<Periodicity>,
    /// Number of outliers by modified Z-score.
    pub outliers: usize,
    /// The verdict (see the module docs for the rules).
    pub verdict: StepVerdict,
}

/// Analyses step times in milliseconds; `None` for an empty series.
#[must_use]
pub fn analyze_steps(ms: &[f64]) -> Option<StepAnalysis> {
    let summary = summarize(ms)?;
    let period = detect_period(ms);
    let verdict = if period.is_some() && summary.cv >= STEP_CV_OSCILLATING {
        StepVerdict::Oscillating
    } else if summary.cv >= STEP_CV_UNSTABLE {
        StepVerdict::Unstable
    } else {
        StepVerdict::Stable
    };
    Some(StepAnalysis {
        summary,
        period,
        outliers: count_outliers(ms),
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Rng;

    #[test]
    fn stall_every_eighth_step() {
        let mut g = Rng::new(4);
        let v: Vec<f64> = (0..200)
            .map(|i| if i % 8 == 3 { 350.0 } else { 100.0 } + 3.0 * g.normal())
            .collect();
        let a = analyze_steps(&v).unwrap();
        assert_eq!(a.verdict, StepVerdict::Oscillating);
        assert_eq!(a.period.unwrap().lag, 8);
        assert_eq!(a.outliers, 25);
    }

    #[test]
    fn steady_steps_are_stable() {
        let mut g = Rng::new(8);
        let v: Vec<f64> = (0..300).map(|_| 120.0 + 2.0 * g.normal()).collect();
        let a = analyze_steps(&v).unwrap();
        assert_eq!(a.verdict, StepVerdict::Stable);
        assert!(a.period.is_none());
    }

    #[test]
    fn erratic_steps_are_unstable() {
        let mut g = Rng::new(9);
        let v: Vec<f64> = (0..300).map(|_| 50.0 + 200.0 * g.uniform()).collect();
        let a = analyze_steps(&v).unwrap();
        assert_eq!(a.verdict, StepVerdict::Unstable);
    }

    #[test]
    fn small_cycle_is_harmless() {
        let v: Vec<f64> = (0..200)
            .map(|i| if i % 4 == 0 { 101.0 } else { 100.0 })
            .collect();
        let a = analyze_steps(&v).unwrap();
        assert_eq!(a.period.unwrap().lag, 4);
        assert_eq!(a.verdict, StepVerdict::Stable);
    }

    #[test]
    fn empty_is_none() {
        assert!(analyze_steps(&[]).is_none());
    }
}
