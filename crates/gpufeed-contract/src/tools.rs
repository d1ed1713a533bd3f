//! The documents of the small commands: `rules` (the rule table, or one rule),
//! `mel` (one file's mel spectrogram written) and `demo-data` (a demo dataset written).
//! Each is printed with `--format json`, as every command's document is.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Document;

/// A lint rule's examples: code that fires it and the same code fixed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleExample {
    /// Code that fires the rule (its line marked `# expect: ID`).
    pub fires_on: String,
    /// The same code fixed: no finding.
    pub not_on: String,
}

/// One rule of `validate`, `lint` or `doctor`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuleEntry {
    /// Its id, as in the findings (`host-sync-in-loop`).
    pub id: String,
    /// The severity of its findings: `error`, `warning` or `info`.
    pub severity: String,
    /// The command that gives its findings: `validate`, `lint`, `doctor (storage)`.
    pub command: String,
    /// Why it matters.
    pub why: String,
    /// The usual fix.
    pub fix: String,
    /// For a lint rule asked for by id: code that fires it and code that does not.
    pub example: Option<RuleExample>,
}

/// `gpufeed rules [ID] --format json`: every rule, or the one asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    /// [`Document::VERSION`] of this document.
    pub schema_version: u32,
    /// The rules, in the registry's order (one with an id).
    pub rules: Vec<RuleEntry>,
}

impl Document for Rules {
    const NAME: &'static str = "rules";
    const VERSION: u32 = 1;
    const WRITER: &'static str = "gpufeed rules";
}

/// `gpufeed mel WAV --out FILE.npy --format json`: the file written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Mel {
    /// [`Document::VERSION`] of this document.
    pub schema_version: u32,
    /// The audio file read.
    pub input: String,
    /// The `.npy` written: float32, shape `(frames, n_mels)`.
    pub output: String,
    /// Frames.
    pub frames: usize,
    /// Mel bands.
    pub n_mels: usize,
    /// The sample rate the mel was computed at (the file resampled to it when needed), Hz.
    pub sample_rate: u32,
    /// The audio's duration, seconds.
    pub duration_s: f64,
}

impl Document for Mel {
    const NAME: &'static str = "mel";
    const VERSION: u32 = 1;
    const WRITER: &'static str = "gpufeed mel";
}

/// `gpufeed demo-data DIR --format json`: the dataset written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DemoData {
    /// [`Document::VERSION`] of this document.
    pub schema_version: u32,
    /// The folder written, in LJSpeech's layout (`metadata.csv`, `wavs/`).
    pub dir: String,
    /// Clips written.
    pub clips: usize,
    /// Their audio, seconds.
    pub audio_s: f64,
    /// The command to run next.
    pub next: String,
}

impl Document for DemoData {
    const NAME: &'static str = "demo-data";
    const VERSION: u32 = 1;
    const WRITER: &'static str = "gpufeed demo-data";
}
