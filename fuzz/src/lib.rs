//! The bodies of gpufeed's fuzz targets, one module a reader of users' files. Each module
//! is a plain `pub fn run(data: &[u8])` that panics only when the reader breaks its
//! promise (it panicked, or it returned an error that does not name the input, or a
//! property such as "`validate --fix` is a fixed point" failed). `fuzz_targets/*.rs` hands
//! them to libFuzzer; the owning crates' `tests/fuzz_regressions.rs` include the same files
//! by path and [`replay`] the seed corpora in `cargo test`, without libFuzzer.

pub mod audio;
pub mod cache;
pub mod config;
pub mod jsonl;
pub mod kineto;
pub mod lint;
pub mod manifest;
pub mod nvsmi;
pub mod replay;
pub mod scratch;
pub mod steps;
pub mod validate_fix;
