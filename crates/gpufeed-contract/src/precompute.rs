//! The `precompute` document: what a feature-cache run read and built
//! (`gpufeed precompute --format json`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Document;

/// An item left out of the cache, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeftOut {
    /// Its id, when one could be read.
    pub id: Option<String>,
    /// Its line in the dataset's manifest (its position, for layouts of many files).
    pub line: usize,
    /// Why, and what to do.
    pub reason: String,
}

/// The dataset as read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DatasetRead {
    /// Its layout: `ljspeech`, `libritts`, `vctk`, `common_voice`, `nemo`, `kaldi`,
    /// `lhotse`, `webdataset`, `huggingface`, `table` or `gpufeed`.
    pub layout: String,
    /// How it was chosen: `given` (`--layout`), or what detection saw.
    pub detected: String,
    /// What the reader chose that a user should know (text column, microphone, table).
    pub notes: Vec<String>,
    /// Items listed.
    pub items: usize,
    /// Distinct speakers.
    pub speakers: usize,
    /// Distinct languages.
    pub languages: usize,
    /// The cleaner (`unicode`, `english`, `basic`, `none`).
    pub cleaner: String,
    /// Items whose text the cleaner transliterated or dropped characters of.
    pub text_changed: usize,
    /// Those characters (the first 24), each once.
    pub text_lost: String,
    /// Characters of the dataset's symbol table.
    pub symbols: usize,
}

/// `gpufeed precompute --format json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Precompute {
    /// [`Document::VERSION`] of this document.
    pub schema_version: u32,
    /// The cache folder (`CACHE/<key>`).
    pub cache_dir: String,
    /// The cache key (a hash of the feature settings).
    pub key: String,
    /// The dataset as read.
    pub dataset: DatasetRead,
    /// Shards of the whole cache.
    pub shards_total: usize,
    /// Shards this run built.
    pub shards_built: usize,
    /// Shards this run found already built.
    pub shards_reused: usize,
    /// Items this run computed.
    pub items_computed: usize,
    /// Audio seconds this run computed.
    pub audio_s_computed: f64,
    /// Items left out (over the whole cache when complete).
    pub skipped: Vec<LeftOut>,
    /// Whether every shard exists and the manifest is written.
    pub complete: bool,
    /// Whether the cache was already complete when the run started.
    pub was_complete: bool,
    /// Items with more tokens than `max_text_length` (kept and flagged).
    pub over_text_length: usize,
    /// Items with more frames than `max_mel_frames` (kept and flagged).
    pub over_mel_frames: usize,
    /// Wall time, seconds.
    pub elapsed_s: f64,
    /// Threads used.
    pub jobs: usize,
    /// The arrays cached per item, as `--features` names them (`mel` first).
    pub arrays: Vec<String>,
    /// Bytes of the cache's shards (0 until it is complete).
    pub cache_bytes: u64,
    /// Bytes of cache per hour of audio (0 until it is complete).
    pub bytes_per_hour: u64,
}

impl Document for Precompute {
    const NAME: &'static str = "precompute";
    const VERSION: u32 = 1;
    const WRITER: &'static str = "gpufeed precompute";
}
