//! Speech datasets for gpufeed: read them, precompute their features once, serve them fast.
//!
//! - [`layout`]: every common corpus layout (LJSpeech and its multi-speaker variants,
//!   LibriTTS, VCTK, Common Voice, NeMo, Kaldi, Lhotse, WebDataset, Hugging Face, generic
//!   CSV/TSV/JSONL, gpufeed's own manifest), detected or named, read into [`manifest::Item`]s
//!   with their segment, speaker, language and fields; every malformed line or missing file
//!   reported with its line and reason.
//! - [`manifest`]: the item and dataset model every layout yields, and the checks they
//!   share.
//! - [`precompute`]: features of every utterance on all cores into the cache, resumable,
//!   lockable, shardable over machines ([`array_job`]: the slice of a Slurm or Kubernetes
//!   array task; [`precompute::merge_slices`]: the manifest once every slice has run).
//! - [`arrays`]: the arrays a cache holds besides the mel (linear spectrogram, energy, F0
//!   and voicing, the hop-aligned waveform), computed from one decode and one STFT.
//! - [`user`]: arrays a user's own function computes per item (codec tokens, speaker
//!   embeddings), added beside the shards without computing the rest again.
//! - [`cache`]: the cache format (safetensors shards + JSON manifest, readable from Python)
//!   and its zero-copy reader.
//! - [`loader`]: batches from the cache on worker threads, always ahead of the consumer:
//!   static or bucketed shapes, deterministic order, reused buffers.
//! - [`settings`]: the effective loader and precompute settings, resolved once from the
//!   defaults, the config, the environment and the arguments (the CLI and Python both).
//! - [`aligned`]: 64-byte aligned buffers, so that frameworks take batches without a copy.
//! - [`demo`]: a generated LJSpeech-format dataset, the default on a fresh machine.
//!
//! ```no_run
//! use gpufeed_data::precompute::{run, Options, Silent};
//! let opts = Options {
//!     max_text_length: Some(200),
//!     max_mel_frames: Some(800),
//!     ..Options::new("LJSpeech-1.1", "cache")
//! };
//! let report = run(&opts, &Silent)?;
//! let cache = gpufeed_data::cache::Cache::open(&report.cache_dir)?;
//! let first_mel = cache.mel(0); // (frames, n_mels) f32, zero-copy
//! # Ok::<(), gpufeed_data::DataError>(())
//! ```
#![deny(missing_docs)]

pub mod aligned;
pub mod array_job;
pub mod arrays;
pub mod cache;
pub mod demo;
pub mod layout;
pub mod loader;
pub mod manifest;
pub mod precompute;
pub mod rng;
pub mod settings;
pub mod user;

mod stream_store;

mod error;
mod fsx;

pub use error::DataError;

/// `shared/data` beside the repository, where the real LJSpeech test clips are.
#[cfg(test)]
pub(crate) fn test_data() -> std::path::PathBuf {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data");
    assert!(
        p.is_dir(),
        "{} is missing: tests need the team's shared/ folder beside the repository",
        p.display()
    );
    p
}
