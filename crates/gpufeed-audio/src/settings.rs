//! The audio settings: what [`MelExtractor`](crate::MelExtractor) computes, as plain values.
//! They are owned here, by the code that uses them; gpufeed-config reads the `data` keys of
//! the trainer's YAML onto them (`DataConfig::audio`) and re-exports them, so the serde
//! names below are the YAML keys, the JSON fields and part of the feature cache key.
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

/// The audio keys of the config's `data` section (read by `gpufeed-config`).
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The serde names are the YAML keys and part of the feature cache key: a rename here
    /// invalidates every cache, so it has to be on purpose.
    #[test]
    fn the_json_of_the_defaults_is_pinned() {
        let json = serde_json::to_string(&AudioSettings::default()).unwrap();
        assert_eq!(
            json,
            r#"{"sample_rate":22050,"n_fft":1024,"hop_length":256,"win_length":1024,"n_mels":80,"fmin":0.0,"fmax":8000.0,"mel_scale":"slaney","mel_norm":"slaney","power":1.0,"center":true,"pad_mode":"reflect","log":"ln","log_floor":0.00001}"#
        );
        let back: AudioSettings = serde_json::from_str(&json).unwrap();
        assert_eq!(back, AudioSettings::default());
    }

    #[test]
    fn librosa_defaults_are_librosas() {
        let s = AudioSettings::librosa_defaults();
        assert_eq!(
            (s.n_fft, s.hop_length, s.win_length, s.n_mels),
            (2048, 512, 2048, 128)
        );
        assert_eq!(s.fmax, None);
        assert_eq!(
            (s.power, s.log, s.pad_mode),
            (2.0, LogKind::None, PadMode::Constant)
        );
    }
}
