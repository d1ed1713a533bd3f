//! The gpufeed config: the trainer's YAML with sections `model`, `data`, `training`.
//!
//! [`settings`] holds the feature settings shared by every crate that computes or reads
//! features.
#![deny(missing_docs)]

pub mod settings;

pub use settings::{AudioSettings, Cleaner, LogKind, MelNorm, MelScale, PadMode, TextSettings};
