//! The `steps` document: the statistics and verdict of a series of step or batch times.
//! `gpufeed trace --kind steps` writes it alone; `profile data` (`batches`) and `profile
//! step` (`step`) embed it.

use gpufeed_stats::{PartialBatches, StepAnalysis, StepVerdict};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Document;

/// Always `steps`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepsKind {
    /// A step-time document.
    #[default]
    Steps,
}

/// Statistics, cycle and verdict of step or batch times (ms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Steps {
    /// [`Document::VERSION`] of this document.
    pub schema_version: u32,
    /// Always `steps`.
    pub kind: StepsKind,
    /// Number of times judged.
    pub samples: usize,
    /// Mean, ms.
    pub mean_ms: f64,
    /// Population standard deviation, ms.
    pub std_ms: f64,
    /// Fastest, ms.
    pub min_ms: f64,
    /// Slowest, ms.
    pub max_ms: f64,
    /// Median, ms.
    pub median_ms: f64,
    /// 95th percentile, ms.
    pub p95_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Coefficient of variation.
    pub cv: f64,
    /// Period of a cyclic pattern, in steps.
    pub period_steps: Option<usize>,
    /// Autocorrelation at the period.
    pub period_strength: Option<f64>,
    /// Outliers by modified Z-score.
    pub outliers: usize,
    /// `stable`, `oscillating` or `unstable` (gpufeed-stats' rules).
    pub verdict: StepVerdict,
    /// Short batches (an epoch's partial last batch) left out of the figures and the
    /// verdict, when the series is of batches and some were short.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial_batches: Option<PartialBatches>,
}

impl Document for Steps {
    const NAME: &'static str = "steps";
    const VERSION: u32 = 1;
    const WRITER: &'static str = "gpufeed trace --kind steps";
}

impl Default for Steps {
    /// An empty, `stable` document of this version (for tests that fill in a few fields).
    fn default() -> Self {
        Self {
            schema_version: Self::VERSION,
            kind: StepsKind::Steps,
            samples: 0,
            mean_ms: 0.0,
            std_ms: 0.0,
            min_ms: 0.0,
            max_ms: 0.0,
            median_ms: 0.0,
            p95_ms: 0.0,
            p99_ms: 0.0,
            cv: 0.0,
            period_steps: None,
            period_strength: None,
            outliers: 0,
            verdict: StepVerdict::Stable,
            partial_batches: None,
        }
    }
}

impl Steps {
    /// The document of an analysis, with the short batches it left out.
    #[must_use]
    pub fn new(a: &StepAnalysis, partial_batches: Option<PartialBatches>) -> Self {
        let s = a.summary;
        Self {
            schema_version: Self::VERSION,
            kind: StepsKind::Steps,
            samples: s.n,
            mean_ms: s.mean,
            std_ms: s.std,
            min_ms: s.min,
            max_ms: s.max,
            median_ms: s.median,
            p95_ms: s.p95,
            p99_ms: s.p99,
            cv: s.cv,
            period_steps: a.period.map(|p| p.period.round() as usize),
            period_strength: a.period.map(|p| p.strength),
            outliers: a.outliers,
            verdict: a.verdict,
            partial_batches,
        }
    }

    /// "25 epoch-tail batches of 8 items (a whole one: 56) left out of these figures", when
    /// the figures leave short batches out.
    #[must_use]
    pub fn partial_note(&self) -> Option<String> {
        self.partial_batches.map(|p| {
            format!(
                "{} (a whole one: {}) left out of these figures",
                p.describe(),
                p.whole_items
            )
        })
    }
}
