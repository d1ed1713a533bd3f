//! The one error type of this crate.
//!
//! Every message is one line. Errors about a file name it in backticks and say why it was
//! rejected, so `{}` alone is enough to act on: ``failed to read `wavs`: Is a directory (os
//! error 21)``, ``` `a.wav` is truncated: the WAV header ends after 20 bytes```. The
//! operating system's error is kept as a field (not as the
//! [`source`](std::error::Error::source)), so anyhow's `{:#}` does not print the reason twice.

use std::io;
use std::path::PathBuf;

use crate::span::Span;

/// Why audio could not be loaded, a feature computed or an array file read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AudioError {
    /// The file does not exist.
    #[error("audio file `{}` does not exist", path.display())]
    NotFound {
        /// The file.
        path: PathBuf,
    },

    /// The file could not be opened, read, written or renamed.
    #[error("failed to {op} `{}`: {error}", path.display())]
    Io {
        /// What was being done: `read`, `write`, `rename into`.
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        error: io::Error,
    },

    /// The file is longer than a training clip can be: larger than
    /// [`MAX_AUDIO_FILE_BYTES`](crate::decode::MAX_AUDIO_FILE_BYTES), or decoding (or
    /// resampling) to more than [`MAX_SAMPLES`](crate::decode::MAX_SAMPLES) samples, such as
    /// a few KB of FLAC that expand to hours of silence.
    #[error("`{}` is too long for a training clip: {reason}; cut it into clips", path.display())]
    TooLong {
        /// The file.
        path: PathBuf,
        /// What crossed which limit.
        reason: String,
    },

    /// The file has 0 bytes.
    #[error("`{}` is empty (0 bytes): expected an audio file", path.display())]
    EmptyFile {
        /// The file.
        path: PathBuf,
    },

    /// No audio container was recognised in the file.
    #[error(
        "`{}` is not an audio file gpufeed can read (expected WAV, FLAC, MP3 or Ogg Vorbis)",
        path.display()
    )]
    NotAudio {
        /// The file.
        path: PathBuf,
    },

    /// The file starts like an audio container but ends before its header does.
    #[error("`{}` is truncated: {reason}", path.display())]
    Truncated {
        /// The file.
        path: PathBuf,
        /// What was missing.
        reason: String,
    },

    /// The container or codec is recognised but not supported (ADPCM, A-law WAV, AAC ...),
    /// or the file is Opus (the message then gives the `ffmpeg` command that converts it).
    #[error("`{}` uses an unsupported format or codec: {reason}", path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// What the decoder reported.
        reason: String,
    },

    /// The stream is malformed.
    #[error("`{}` is corrupt: {reason}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What the decoder reported.
        reason: String,
    },

    /// The span asked of a file does not fit it: an offset or duration that is negative or
    /// not finite, a span holding no samples, one starting at or past the end of the file or
    /// ending more than [`SPAN_END_TOLERANCE_S`](crate::decode::SPAN_END_TOLERANCE_S) past
    /// it, or a channel the file does not have.
    #[error("cannot decode `{}` {span}: {reason}", path.display())]
    Span {
        /// The file.
        path: PathBuf,
        /// The span asked for.
        span: Span,
        /// Why it does not fit.
        reason: String,
    },

    /// A valid header, but no samples.
    #[error("`{}` contains no audio samples (0-length audio)", path.display())]
    NoSamples {
        /// The file.
        path: PathBuf,
    },

    /// A float sample is NaN or infinite.
    #[error("`{}` has a non-finite sample (NaN or infinity) at frame {frame}", path.display())]
    NonFinite {
        /// The file.
        path: PathBuf,
        /// Index of the first bad frame, at the source rate.
        frame: usize,
    },

    /// The resampler could not be built or failed.
    #[error("failed to resample `{}` from {from} Hz to {to} Hz: {reason}", path.display())]
    Resample {
        /// The file.
        path: PathBuf,
        /// Source rate, Hz.
        from: u32,
        /// Target rate, Hz.
        to: u32,
        /// What rubato reported.
        reason: String,
    },

    /// An [`AudioSettings`](crate::AudioSettings) value is out of range.
    #[error("invalid audio settings: `{field}` = `{value}`: {reason}")]
    InvalidSettings {
        /// The settings key.
        field: &'static str,
        /// The offending value.
        value: String,
        /// The rule it breaks.
        reason: String,
    },

    /// The input to [`MelExtractor::compute`](crate::mel::MelExtractor::compute) is too short.
    #[error(
        "input of {samples} samples is too short: at least {needed} are needed for one frame \
         when frames are not centred (set `center: true` to pad)"
    )]
    TooShort {
        /// Number of samples given.
        samples: usize,
        /// Minimum number of samples (n_fft).
        needed: usize,
    },

    /// The input to [`MelExtractor::compute`](crate::mel::MelExtractor::compute) is empty.
    #[error("cannot compute a mel spectrogram of empty input (0 samples)")]
    EmptyInput,

    /// The samples contain NaN or infinity.
    #[error("input sample {index} is not finite (`{value}`)")]
    NonFiniteInput {
        /// Index of the first bad sample.
        index: usize,
        /// Its value.
        value: f32,
    },

    /// A `.npy` file is not a C-order little-endian float32 array, or is damaged.
    #[error("`{}` is not a float32 .npy array gpufeed can read: {reason}", path.display())]
    Npy {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },

    /// The shape given to [`npy::write_f32`](crate::npy::write_f32) does not match the data.
    #[error(
        "cannot write `{}`: shape {shape:?} holds {expected} values but {actual} were given",
        path.display()
    )]
    ShapeMismatch {
        /// The file.
        path: PathBuf,
        /// The shape given.
        shape: Vec<usize>,
        /// Its product.
        expected: usize,
        /// The length of the data.
        actual: usize,
    },
}

impl AudioError {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, error: io::Error) -> Self {
        Self::Io {
            op,
            path: path.into(),
            error,
        }
    }

    pub(crate) fn span(path: impl Into<PathBuf>, span: &Span, reason: impl Into<String>) -> Self {
        Self::Span {
            path: path.into(),
            span: *span,
            reason: reason.into(),
        }
    }

    pub(crate) fn settings(
        field: &'static str,
        value: impl ToString,
        reason: impl Into<String>,
    ) -> Self {
        Self::InvalidSettings {
            field,
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}
