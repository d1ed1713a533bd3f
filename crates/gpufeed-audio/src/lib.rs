//! Speech features for gpufeed's fast data pipeline: decode audio files, mix to mono,
//! resample, and compute mel spectrograms that match librosa to float precision, fast
//! enough to precompute a whole dataset on a few cores.
//!
//! - [`decode`]: WAV/FLAC/MP3/Ogg Vorbis to mono `f32` at a target rate ([`decode::load`]),
//!   or a span and channel of a longer recording, seeked to ([`decode::load_span`],
//!   [`Span`]), with measurements of the source ([`AudioInfo`]: duration, peak, clipping,
//!   silence). Opus is refused with the command that converts it.
//! - [`mel`]: [`MelExtractor`], the STFT and mel filterbank of `librosa.stft` /
//!   `librosa.filters.mel` / `librosa.feature.melspectrogram`, plus the log compression
//!   TTS models use, driven by [`AudioSettings`].
//!   [`MelExtractor::compute_with`] gives the linear spectrogram and the frame energy from
//!   the same STFT.
//! - [`pitch`]: [`PitchTracker`], F0 and a voiced flag per mel frame, as `librosa.yin` computes it.
//! - [`npy`]: float32 `.npy` files, written atomically.
//! - [`settings`]: [`AudioSettings`] and its enums, owned here; gpufeed-config reads the
//!   YAML onto them.
//!
//! The defaults of `AudioSettings` are the NVIDIA Tacotron 2 / HiFi-GAN features:
//! `ln(max(mel_slaney(|STFT_reflect|), 1e-5))` with 1024/256/1024, 80 mels, 0-8000 Hz.
//! `AudioSettings::librosa_melspectrogram()` gives exactly
//! `librosa.feature.melspectrogram(...)` (power 2, no log, zero padding).
//!
//! Unlike the original MyXTTS pipeline (see `shared/research/myxtts.md` section 3.2), the
//! file's sample rate is read and honoured (resampled when it differs), channels are
//! averaged rather than dropped, the mel scale asked for is the one used, and no
//! per-utterance min-max scaling is applied.
//!
//! # Example
//!
//! ```no_run
//! use std::path::Path;
//! use gpufeed_audio::{AudioSettings, decode, mel::MelExtractor, npy};
//!
//! let settings = AudioSettings::default();
//! let mut mel = MelExtractor::new(&settings)?;
//! let mut buf = Vec::new();
//! for name in ["LJ001-0001", "LJ001-0002"] {
//!     let audio = decode::load(Path::new(&format!("wavs/{name}.wav")), settings.sample_rate)?;
//!     let frames = mel.compute_into(&audio.samples, &mut buf)?;
//!     npy::write_f32(Path::new(&format!("mels/{name}.npy")), &[frames, mel.n_mels()], &buf)?;
//! }
//! # Ok::<(), gpufeed_audio::AudioError>(())
//! ```

pub mod decode;
mod error;
pub mod mel;
pub mod npy;
pub mod pitch;
pub mod settings;
mod span;

/// The file writers of the integration tests (WAV, FLAC, Ogg), for the unit tests.
#[cfg(test)]
#[allow(dead_code)]
#[path = "../tests/audio/write.rs"]
mod test_write;

pub use decode::{Audio, AudioInfo, Span};
pub use error::AudioError;
pub use mel::{MelExtractor, MelSpectrogram, Spectra};
pub use pitch::{PitchMethod, PitchSettings, PitchTracker};
pub use settings::{AudioSettings, LogKind, MelNorm, MelScale, PadMode};
