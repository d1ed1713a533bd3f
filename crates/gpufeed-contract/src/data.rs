//! The `profile-data` document: how fast and how steadily the loader delivers batches
//! (`gpufeed profile data --format json`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::{Document, Steps};

/// The per-batch series a `profile-data` document judges.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Judged {
    /// The time a worker took to make each batch: runs with no consumer, whose waits only
    /// show the workers' batches arriving in rounds.
    Work,
    /// The consumer's wait for each batch: runs with a consumer (`--consumer-ms`).
    #[default]
    Wait,
}

impl Judged {
    /// "worker time per batch" or "wait per batch".
    #[must_use]
    pub fn what(self) -> &'static str {
        match self {
            Self::Work => "worker time per batch",
            Self::Wait => "wait per batch",
        }
    }

    /// "the time a worker takes to make a batch" or "the wait for a batch".
    #[must_use]
    pub fn subject(self) -> &'static str {
        match self {
            Self::Work => "the time a worker takes to make a batch",
            Self::Wait => "the wait for a batch",
        }
    }
}

/// Utterances over the length caps, per epoch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OverLengthCount {
    /// `skip` or `truncate` (`data.over_length`).
    pub policy: String,
    /// Utterances left out.
    pub skipped: usize,
    /// Utterances cut to the cap.
    pub truncated: usize,
}

/// What was measured, and how.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DataConfig {
    /// The cache folder.
    pub cache: String,
    /// Utterances in the cache.
    pub items: usize,
    /// The loader's settings (`gpufeed_data::loader::LoaderConfig`): `batch_size`,
    /// `workers`, `prefetch` and the padding, shuffling and sharding settings.
    pub loader: serde_json::Value,
    /// Batches timed.
    pub batches: usize,
    /// Batches pulled before the timing.
    pub warmup_batches: usize,
    /// The simulated step of the consumer, ms (0: none).
    pub consumer_ms: f64,
    /// Utterances over the length caps.
    pub over_length: OverLengthCount,
    /// Utterances per epoch left out by `drop_last`.
    pub dropped_last: usize,
}

/// The loader settings that every profile reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LoaderSettings {
    /// Batch size.
    pub batch_size: usize,
    /// Worker threads.
    pub workers: usize,
    /// Batches prepared ahead.
    pub prefetch: usize,
}

impl LoaderSettings {
    /// `config.loader` of a profile document (`profile data`, `profile step`), when it has
    /// the three fields.
    #[must_use]
    pub fn of(config: &serde_json::Value) -> Option<Self> {
        serde_json::from_value(config.get("loader")?.clone()).ok()
    }
}

impl DataConfig {
    /// Batch size, workers and prefetch, when `loader` has them.
    #[must_use]
    pub fn loader_settings(&self) -> Option<LoaderSettings> {
        serde_json::from_value(self.loader.clone()).ok()
    }
}

/// Where a batch's time goes: mean ms per batch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Breakdown {
    /// Copying items out of the cache with its pages dropped (`null`: the kernel refused).
    pub read_cold_ms: Option<f64>,
    /// Copying items out of the cache from the page cache.
    pub read_warm_ms: f64,
    /// Padding and lengths.
    pub assemble_ms: f64,
    /// The consumer's wait for the next batch.
    pub queue_wait_ms: f64,
    /// Why the cold figure is missing, when it is.
    pub cold_note: Option<String>,
    /// Share of the batch bytes that is padding.
    pub padding_share: f64,
}

/// One cell of the `--benchmark` grid.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cell {
    /// Batch size.
    pub batch_size: usize,
    /// Loader workers.
    pub workers: usize,
    /// Throughput.
    pub samples_per_s: f64,
    /// Mean wait per batch, ms.
    pub mean_wait_ms: f64,
    /// cv of the judged series (see [`Judged`]).
    pub cv: f64,
}

/// The benchmark's recommended loader settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Recommendation {
    /// Batch size.
    pub batch_size: usize,
    /// Loader workers.
    pub num_workers: usize,
    /// Batches prepared ahead.
    pub prefetch_buffer_size: usize,
    /// Throughput of the cell.
    pub samples_per_s: f64,
    /// Mean wait per batch, ms.
    pub mean_wait_ms: f64,
    /// The `data:` block to paste into the config.
    pub yaml: String,
    /// No cell of the grid is faster than the settings as configured (the profile's own
    /// run): the recommendation is to keep them, with their figures.
    #[serde(default)]
    pub keep_current: bool,
}

impl Recommendation {
    /// ": keep the current settings, no cell of the grid is faster" where none beats them;
    /// "" otherwise.
    #[must_use]
    pub fn keep_words(&self) -> &'static str {
        if self.keep_current {
            ": keep the current settings, no cell of the grid is faster"
        } else {
            ""
        }
    }
}

/// `gpufeed profile data --format json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DataProfile {
    /// [`Document::VERSION`] of this document.
    pub schema_version: u32,
    /// What was measured, and how.
    pub config: DataConfig,
    /// What `batches` judges: `work` (no consumer) or `wait`.
    pub judged: Judged,
    /// The judged series of the whole batches: statistics, period and verdict.
    pub batches: Steps,
    /// Utterances per second over the timed batches.
    pub samples_per_s: f64,
    /// Batch bytes (padding included) per second.
    pub bytes_per_s: f64,
    /// Where a batch's time goes.
    pub breakdown: Breakdown,
    /// The `--benchmark` grid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<Vec<Cell>>,
    /// The `--benchmark` recommendation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recommendation: Option<Recommendation>,
}

impl DataProfile {
    /// The loader settings measured, when `config.loader` has them.
    #[must_use]
    pub fn loader(&self) -> Option<LoaderSettings> {
        self.config.loader_settings()
    }
}

impl Default for DataProfile {
    /// An empty document of this version (for tests that fill in a few fields).
    fn default() -> Self {
        Self {
            schema_version: Self::VERSION,
            config: DataConfig::default(),
            judged: Judged::default(),
            batches: Steps::default(),
            samples_per_s: 0.0,
            bytes_per_s: 0.0,
            breakdown: Breakdown::default(),
            grid: None,
            recommendation: None,
        }
    }
}

impl Document for DataProfile {
    const NAME: &'static str = "profile-data";
    /// 2: `recommendation.keep_current`, where no cell beats the settings as configured.
    const VERSION: u32 = 2;
    const WRITER: &'static str = "gpufeed profile data";
}
