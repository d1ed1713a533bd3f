//! Integration tests of gpufeed-audio: decoding real and broken files, mel spectrograms and
//! resampling against librosa fixtures (`tests/fixtures/make_fixtures.py`), `.npy` files.
//!
//! The real clips come from `shared/data/ljspeech-mini` beside the repository.

// Test helpers outside `#[test]` functions unwrap too, and the accuracy figures go to
// stderr (`cargo test -p gpufeed-audio -- --nocapture` shows them).
#![allow(clippy::unwrap_used, clippy::print_stderr)]

mod arrays;
mod common;
mod decode;
mod librosa;
mod resample;
mod span;
// Shared with the unit tests and `fuzz_regressions.rs`: not every writer is used here.
#[allow(dead_code)]
mod write;
