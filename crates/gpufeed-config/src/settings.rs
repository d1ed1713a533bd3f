//! Settings shared by the crates that compute features: the audio keys (listed in the
//! crate docs) and the text keys. They live here, in the config crate, so that the loader,
//! the profilers, the validator and the feature code read one schema (docs/ARCHITECTURE.md).
//!
//! Defaults are the NVIDIA Tacotron 2 / HiFi-GAN convention. With `power: 2`, `log: none`,
//! `pad_mode: constant` the mel output equals `librosa.feature.melspectrogram` with the same
//! parameters.

use serde::{Deserialize, Serialize};

/// Mel frequency scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum MelScale {
    /// Slaney's Auditory Toolbox scale (librosa's default, `htk=False`).
    #[default]
    Slaney,
    /// HTK: `2595 log10(1 + f / 700)`.
    Htk,
}

/// Normalisation of the mel filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum MelNorm {
    /// Slaney's area normalisation, `2 / (f[m+2] - f[m])` (librosa's default, `norm="slaney"`).
    #[default]
    Slaney,
    /// Triangles of height 1.
    None,
}

/// Padding of the signal when frames are centred.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PadMode {
    /// Mirror without repeating the edge (numpy `reflect`).
    #[default]
    Reflect,
    /// Zeros (librosa >= 0.10's default for `stft`).
    Constant,
}

/// Compression of the mel energies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LogKind {
    /// `ln(max(x, log_floor))`.
    #[default]
    Ln,
    /// `log10(max(x, log_floor))`.
    Log10,
    /// No compression.
    None,
}

/// The audio keys of the `data` section (the config schema, `gpufeed-config`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AudioSettings {
    /// Sample rate features are computed at; files at another rate are resampled.
    pub sample_rate: u32,
    /// FFT size.
    pub n_fft: usize,
    /// Hop between frames, samples.
    pub hop_length: usize,
    /// Window length, samples (<= n_fft; the window is centred in the FFT frame).
    pub win_length: usize,
    /// Number of mel bands.
    pub n_mels: usize,
    /// Lowest filter edge, Hz.
    pub fmin: f64,
    /// Highest filter edge, Hz; `None` means sample_rate / 2.
    pub fmax: Option<f64>,
    /// Mel scale.
    pub mel_scale: MelScale,
    /// Filter normalisation.
    pub mel_norm: MelNorm,
    /// Exponent of the magnitude: 1 = magnitude, 2 = power.
    pub power: f64,
    /// Centre frames on `t × hop` by padding `n_fft / 2` on both sides.
    pub center: bool,
    /// Padding used when centred.
    pub pad_mode: PadMode,
    /// Compression.
    pub log: LogKind,
    /// Floor applied before the logarithm.
    pub log_floor: f64,
}

impl Default for AudioSettings {
    fn default() -> Self {
        Self {
            sample_rate: 22050,
            n_fft: 1024,
            hop_length: 256,
            win_length: 1024,
            n_mels: 80,
            fmin: 0.0,
            fmax: Some(8000.0),
            mel_scale: MelScale::Slaney,
            mel_norm: MelNorm::Slaney,
            power: 1.0,
            center: true,
            pad_mode: PadMode::Reflect,
            log: LogKind::Ln,
            log_floor: 1e-5,
        }
    }
}

impl AudioSettings {
    /// `librosa.feature.melspectrogram`'s computation (power 2, no log, constant padding,
    /// Slaney scale and norm) on the TTS frames and filterbank of [`Default`] (n_fft 1024,
    /// hop 256, 80 mels up to 8 kHz), not librosa's own defaults: for those, see
    /// [`AudioSettings::librosa_defaults`].
    #[must_use]
    pub fn librosa_melspectrogram() -> Self {
        Self {
            power: 2.0,
            log: LogKind::None,
            pad_mode: PadMode::Constant,
            ..Self::default()
        }
    }

    /// Exactly `librosa.feature.melspectrogram(y=y, sr=sample_rate)` with every default
    /// (librosa 0.11, `feature.melspectrogram`, `filters.mel`, `stft`): n_fft 2048, hop 512,
    /// win_length = n_fft, periodic Hann, `center=True` with `pad_mode="constant"`, power 2,
    /// 128 mels from 0 Hz to sr / 2 (`fmax` `None`), Slaney scale (`htk=False`) and
    /// `norm="slaney"`, no log.
    #[must_use]
    pub fn librosa_defaults() -> Self {
        Self {
            n_fft: 2048,
            hop_length: 512,
            win_length: 2048,
            n_mels: 128,
            fmin: 0.0,
            fmax: None,
            ..Self::librosa_melspectrogram()
        }
    }
}

/// Text cleaning pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Cleaner {
    /// Keep every script: Unicode NFC, lowercase, collapse whitespace; no transliteration,
    /// digits stay digits. The default: datasets come in every language.
    #[default]
    Unicode,
    /// Transliterate to ASCII, lowercase, expand abbreviations and numbers, collapse
    /// whitespace (Keith Ito's `english_cleaners`, fixed).
    English,
    /// Unicode NFC, lowercase and collapse whitespace.
    Basic,
    /// Leave the text as it is.
    None,
}

/// The text keys of the `data` section.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default)]
pub struct TextSettings {
    /// Cleaning pipeline.
    pub cleaner: Cleaner,
    /// Intersperse the blank token between symbols (VITS-style).
    pub add_blank: bool,
    /// Append the end-of-sequence token.
    pub add_eos: bool,
    /// Which metadata column to read for LJSpeech: the normalised one (third) when present.
    pub use_normalized_text: bool,
}

impl Default for TextSettings {
    fn default() -> Self {
        Self {
            cleaner: Cleaner::Unicode,
            add_blank: false,
            add_eos: true,
            use_normalized_text: true,
        }
    }
}
