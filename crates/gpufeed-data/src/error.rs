//! Errors of the data crate: each names the file, line or item and says what to do.

use std::io;
use std::path::{Path, PathBuf};

/// What went wrong reading a dataset or building or opening a cache.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    /// An I/O error on a file.
    #[error("`{}`: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The dataset path does not exist.
    #[error("`{}` does not exist; pass a dataset folder (LJSpeech layout) or a manifest", path.display())]
    NotFound {
        /// The path given.
        path: PathBuf,
    },
    /// A folder without a manifest.
    #[error(
        "`{}` has no `metadata.csv`, `manifest.jsonl` or `manifest.csv`; create one, or run `gpufeed demo-data DIR` for an example",
        dir.display()
    )]
    NoManifest {
        /// The folder.
        dir: PathBuf,
    },
    /// A generic CSV manifest without lines.
    #[error("`{}` is empty; expected a header `audio_path,text` and one line per utterance", path.display())]
    EmptyManifest {
        /// The manifest.
        path: PathBuf,
    },
    /// A generic CSV manifest whose header lacks a column.
    #[error("`{}` line {line}: the header needs `audio_path` and `text` (last); found `{found}`", path.display())]
    ManifestHeader {
        /// The manifest.
        path: PathBuf,
        /// Its line.
        line: usize,
        /// The columns found.
        found: String,
    },
    /// A manifest with no usable utterance.
    #[error("`{}` has no usable utterance ({problems} line(s) left out, first: line {first_line}: {first_reason})", path.display())]
    NoItems {
        /// The manifest.
        path: PathBuf,
        /// Lines left out.
        problems: usize,
        /// The first one's line.
        first_line: usize,
        /// And its reason.
        first_reason: String,
    },
    /// A malformed manifest line under `--on-error fail`.
    #[error("`{}` line {line}: {reason}", path.display())]
    BadLine {
        /// The manifest.
        path: PathBuf,
        /// Its line.
        line: usize,
        /// Why.
        reason: String,
    },
    /// One utterance failed (decode, features) under `--on-error fail`.
    #[error("item `{id}` (`{}`, line {line}): {reason}", audio.display())]
    Item {
        /// Its id.
        id: String,
        /// Its audio file.
        audio: PathBuf,
        /// Its manifest line.
        line: usize,
        /// Why.
        reason: String,
    },
    /// Another run holds the cache.
    #[error("the cache `{}` is being built by another run ({holder}); wait for it, or pass another `--cache`", dir.display())]
    Locked {
        /// The cache folder.
        dir: PathBuf,
        /// Who holds it, as written in the lock file.
        holder: String,
    },
    /// A shard or manifest that does not parse.
    #[error("`{}` is not a valid gpufeed cache file: {reason}; delete it and run `gpufeed precompute` again", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// An invalid `--shard` spec.
    #[error("`--shard {spec}`: expected I/N with 0 <= I < N, e.g. `--shard 0/4`")]
    ShardSpec {
        /// What was given.
        spec: String,
    },
    /// `--shard auto` found no usable array-job index in the environment.
    #[error("`--shard auto`: {message}")]
    ArrayJob {
        /// What was read and what to do.
        message: String,
    },
    /// The merge after an array job found shards that no task wrote (or wrote whole).
    #[error(
        "cannot merge the cache `{}`: {missing} of {total} shard(s) missing or damaged: {list}; \
         run the array task(s) that build them again (or `gpufeed precompute --shard I/N` \
         with their slice), then merge again",
        dir.display()
    )]
    MissingShards {
        /// The cache folder.
        dir: PathBuf,
        /// How many are missing or damaged.
        missing: usize,
        /// Shards of the whole cache.
        total: usize,
        /// Each one: its index, file, slice when known, and what is wrong.
        list: String,
    },
    /// No memory for a shard's arrays.
    #[error(
        "cannot reserve {bytes} bytes of memory for a cache shard: {source}; free some memory or run fewer jobs"
    )]
    Memory {
        /// Bytes asked for.
        bytes: usize,
        /// The OS error.
        source: std::io::Error,
    },
    /// Loader settings that cannot work.
    #[error("invalid loader settings: {0}")]
    Loader(String),
    /// Feature settings rejected by the feature extractor.
    #[error("invalid feature settings: {0}")]
    Settings(String),
}

impl DataError {
    /// Wraps an I/O error with its path.
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
