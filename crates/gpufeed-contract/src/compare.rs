//! The `compare` document: two traces of one job side by side (`gpufeed compare BEFORE
//! AFTER`): their step times and the speedup, the shares that changed, the causes that went
//! away or appeared, and how the estimate made from BEFORE (`if_fixed`) compares with
//! AFTER's measured step.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Document;

/// Always `compare`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CompareKind {
    /// A compare document.
    #[default]
    Compare,
}

/// What the two traces are (both the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ComparedKind {
    /// PyTorch or TensorFlow profiler traces (the `profiler` document).
    Profiler,
    /// Step recordings of the user's loop (`StepTimer`; the `phase-steps` document).
    PhaseSteps,
    /// Step-time lists (the `steps` document).
    Steps,
    /// GPU utilisation logs (nvidia-smi, gpufeed JSONL; the `util` document).
    Util,
}

impl ComparedKind {
    /// As in JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Profiler => "profiler",
            Self::PhaseSteps => "phase-steps",
            Self::Steps => "steps",
            Self::Util => "util",
        }
    }
}

/// How `speedup` was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SpeedupBy {
    /// BEFORE's median step over AFTER's.
    MedianStep,
    /// AFTER's samples per second over BEFORE's (the batch sizes differ).
    SamplesPerS,
}

/// One trace's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareSide {
    /// The file or folder.
    pub path: String,
    /// Its verdict (`input-bound`, `stable`, ...); `null` when it has none.
    pub verdict: Option<String>,
    /// For profiler traces of several ranks: the rank whose figures these are (the one
    /// that sets the run's pace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
    /// Steps analysed (`null` for a utilisation log).
    pub steps: Option<usize>,
    /// Median step, ms.
    pub median_ms: Option<f64>,
    /// 95th percentile step, ms.
    pub p95_ms: Option<f64>,
    /// Items per step, when known.
    pub batch_size: Option<u64>,
    /// Items per second, when known.
    pub samples_per_s: Option<f64>,
    /// Mean GPU utilisation over the GPUs, percent (utilisation logs).
    pub util_mean: Option<f64>,
    /// Share of samples with the GPU idle, averaged over the GPUs (utilisation logs).
    pub idle_share: Option<f64>,
    /// Its causes (ids), the largest gain first.
    pub causes: Vec<String>,
}

/// A share of the step (or of the samples) in both traces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShareChange {
    /// What the share is of: `data_wait`, `gpu_busy`, a phase's name, ...
    pub name: String,
    /// In BEFORE, 0..1 (`null` when BEFORE has no such share, such as a phase it did
    /// not time).
    pub before: Option<f64>,
    /// In AFTER, 0..1.
    pub after: Option<f64>,
    /// `after - before` (a missing share counts as 0).
    pub change: f64,
}

/// The estimate made from BEFORE against AFTER's measured step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Prediction {
    /// The cause of BEFORE whose `if_fixed` is compared.
    pub cause: String,
    /// Why that cause: it went away in AFTER, its share fell the most, or it was BEFORE's
    /// largest gain.
    pub chosen: String,
    /// BEFORE's median step, ms.
    pub before_ms: f64,
    /// The expected median step, ms (BEFORE's `if_fixed.step_ms`).
    pub predicted_ms: f64,
    /// AFTER's measured median step, ms.
    pub measured_ms: f64,
    /// `predicted / measured - 1`: below 0 the estimate was too hopeful.
    pub error: f64,
    /// The estimate's assumption (BEFORE's `if_fixed.assumes`).
    pub assumes: String,
}

/// `gpufeed compare BEFORE AFTER --format json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Compare {
    /// [`Document::VERSION`] of this document.
    pub schema_version: u32,
    /// Always `compare`.
    pub kind: CompareKind,
    /// What both traces are.
    pub compared: ComparedKind,
    /// The trace before the change.
    pub before: CompareSide,
    /// The trace after it.
    pub after: CompareSide,
    /// How many times faster AFTER goes: BEFORE's median step over AFTER's, or, when the
    /// batch sizes differ, AFTER's samples per second over BEFORE's. Left out for
    /// utilisation logs, which have no steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup: Option<f64>,
    /// How `speedup` was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speedup_by: Option<SpeedupBy>,
    /// The shares in both, those that changed most first.
    pub shares: Vec<ShareChange>,
    /// Causes of BEFORE that AFTER no longer has.
    pub causes_gone: Vec<String>,
    /// Causes of AFTER that BEFORE did not have.
    pub causes_new: Vec<String>,
    /// Causes of both.
    pub causes_kept: Vec<String>,
    /// BEFORE's estimate against AFTER's step; `null` when BEFORE has no cause with an
    /// estimate (or the traces have no steps).
    pub prediction: Option<Prediction>,
    /// What the reader should know: differing batch sizes, ranks, a prediction that
    /// cannot be compared.
    pub notes: Vec<String>,
}

impl Document for Compare {
    const NAME: &'static str = "compare";
    const VERSION: u32 = 1;
    const WRITER: &'static str = "gpufeed compare BEFORE AFTER";
}
