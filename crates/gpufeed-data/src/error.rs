//! Errors of the data crate: each names the file, line or item and says what to do.

use std::io;
use std::path::{Path, PathBuf};

/// What went wrong reading a dataset or building or opening a cache.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    /// An I/O error on a file.
    #[error("`{}`: {cause}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause, in the message (not a `source`, which anyhow's `{:#}` would print
        /// again).
        cause: io::Error,
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
    /// No dataset layout takes the path.
    #[error(
        "`{}` is {what}; gpufeed reads the layouts {layouts}; if it is one of them, say which with `--layout NAME` (and `--columns` for a table)",
        path.display()
    )]
    UnknownLayout {
        /// The path given.
        path: PathBuf,
        /// What it looked like.
        what: String,
        /// The layouts tried.
        layouts: String,
    },
    /// Two layouts fit the path equally well.
    #[error(
        "`{}` fits two dataset layouts equally, `{first}` and `{second}`; say which with `--layout {first}` or `--layout {second}`",
        path.display()
    )]
    AmbiguousLayout {
        /// The path given.
        path: PathBuf,
        /// One layout.
        first: &'static str,
        /// The other.
        second: &'static str,
    },
    /// A run that cached no item.
    #[error(
        "no item was cached: all {skipped} were left out (listed in `{}`); first: {first}",
        list.display()
    )]
    NothingCached {
        /// Items left out.
        skipped: usize,
        /// `skipped.json`.
        list: PathBuf,
        /// The first reasons.
        first: String,
    },
    /// A run that left out more items than allowed.
    #[error(
        "{skipped} of {total} items ({percent:.1} %) were left out, more than the {allowed:.0} % allowed; the cache is not marked complete. They are listed in `{}`; first: {first}. Fix them, or pass `--max-skipped {:.2}` to accept this",
        list.display(),
        (percent / 100.0 + 0.005).min(1.0)
    )]
    TooManySkipped {
        /// Items left out.
        skipped: usize,
        /// Items in the dataset.
        total: usize,
        /// Their share, percent.
        percent: f64,
        /// The share allowed, percent.
        allowed: f64,
        /// `skipped.json`.
        list: PathBuf,
        /// The first reasons.
        first: String,
    },
    /// A dataset that cannot be read as given (a layout option, a folder where a file is
    /// needed, several manifests where one is): the message names the path and what to do.
    #[error("{0}")]
    Dataset(String),
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
        "cannot reserve {bytes} bytes of memory for a cache shard: {cause}; free some memory or run fewer jobs"
    )]
    Memory {
        /// Bytes asked for.
        bytes: usize,
        /// The OS error, in the message (not a `source`).
        cause: std::io::Error,
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
    pub(crate) fn io(path: &Path, cause: io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            cause,
        }
    }
}
