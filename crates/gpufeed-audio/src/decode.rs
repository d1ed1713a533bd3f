//! Loading audio files: decode, take a span and a channel, mix to mono, resample, and
//! measure.
//!
//! [`load`] reads a file and [`decode_bytes`] decodes bytes already in memory. Both return
//! mono `f32` samples at the rate asked for, plus facts about the source ([`AudioInfo`]).
//! [`load_span`] and [`decode_bytes_span`] do the same for a [`Span`]: a stretch of the file
//! (a Kaldi `segments` line, a NeMo `offset`/`duration`, a Lhotse supervision or cut) and
//! optionally one channel of it; `load` and `decode_bytes` are their [`Span::default`], the
//! whole file mixed to mono.
//!
//! - **Formats**: WAV (PCM 8-bit unsigned, 16/24/32-bit signed, 32/64-bit IEEE float, plain
//!   or `WAVE_FORMAT_EXTENSIBLE`), FLAC, MP3 and Ogg Vorbis, all demuxed and decoded by
//!   symphonia, except that 16-bit PCM packets are converted here (the same `x / 32768`,
//!   ten times faster than symphonia's PCM decoder; the container is still symphonia's).
//!   Anything else (ADPCM or A-law WAV, AAC ...) is [`AudioError::Unsupported`].
//! - **Opus** is refused by name: a `.opus` file, or an Ogg stream whose first packet is
//!   `OpusHead` whatever the file is called, is [`AudioError::Unsupported`] saying it is
//!   Opus, which gpufeed does not decode yet (no Opus decoder meets the dependency policy:
//!   symphonia has none, the others bind libopus), with the command that converts it:
//!   `ffmpeg -i IN.opus -ar 48000 IN.flac`, or for a folder
//!   `for f in *.opus; do ffmpeg -i "$f" -ar 48000 "${f%.opus}.flac"; done`.
//! - **Spans** are cut at the file's own rate, before resampling:
//!   `start = round(sr · offset_s)`, `end = start + round(sr · duration_s)`, rounded half
//!   to even (librosa's audioread loader; see [`Span`] for how its soundfile loader, which
//!   truncates, differs). The result is exactly the frames `[start, end)` of the whole
//!   decode, then the channel (or the mono mix), then resampling; [`AudioInfo`] is measured
//!   on the span. A span may end up to [`SPAN_END_TOLERANCE_S`] (50 ms, for durations
//!   rounded to milliseconds) past the end of the file and is cut there; one ending further
//!   past, starting at or past the end, holding no samples, with a negative or non-finite
//!   offset or duration, or naming a channel the file lacks is [`AudioError::Span`].
//! - **Seeking**: a span is read from where it is, not decoded from the start. The container
//!   is opened over the file (or over the bytes, for [`decode_bytes_span`]) and seeked with
//!   symphonia's accurate seek, which lands at or before the span; packets are decoded from
//!   there to the span's end and cut to its exact frames by their timestamps. WAV: the seek
//!   is arithmetic (a packet boundary's byte offset), so only the header and about the
//!   span's bytes are read; a segment of a recording larger than [`MAX_AUDIO_FILE_BYTES`]
//!   decodes, the span held to [`MAX_SAMPLES`] like any clip. FLAC: a bisection of the file
//!   on frame headers (or the SEEKTABLE where there is one); frames decode alone, so the
//!   cut is exact. Ogg Vorbis: a bisection on pages, which symphonia starts a random-access
//!   period early, so the block before the span is decoded and overlaps as in the whole
//!   decode. MP3: frame headers are
//!   parsed from the start to the span (no decoding), and decoding starts two frames early
//!   (`MP3_SEEK_PREROLL`) so the decoder's overlap and filterbank state is that of the whole
//!   decode. The span tests find all four sample-exact against the whole decode. Should a
//!   container refuse to seek, or land past the span, the file is decoded from the start and
//!   cut instead: as exact, only slower.
//! - **Channels**: `channel: Some(c)` takes that channel (Lhotse and Kaldi name one); the
//!   default mixes them.
//! - **Scaling**: integers map to `[-1, 1)` as libsndfile (soundfile, librosa) does: 8-bit
//!   `(x - 128) / 128`, 16-bit `x / 32768`, 24-bit `x / 2^23`, 32-bit `x / 2^31`.
//! - **Mono**: the mean of the channels, `(c_0 + ... + c_{k-1}) / k` per frame, in f32
//!   (`librosa.to_mono`).
//! - **Resampling** (only when the file's rate differs from `target_rate`): rubato's
//!   synchronous FFT resampler (`rubato::Fft`, exact rational ratio, windowed-sinc filter;
//!   see [`resample`]) in f64, with its start-up delay trimmed, giving
//!   `ceil(n · target / source)` samples like `librosa.resample`. It matches
//!   `librosa.resample(res_type="soxr_hq")` except in the top ~8 % of the lower Nyquist
//!   band, where soxr rolls off earlier.
//! - **Measurements** ([`AudioInfo`]) are taken on the source (the span, the channel taken),
//!   before resampling.
//!
//! Every failure is an [`AudioError`] naming the file: missing, 0 bytes, not audio,
//! truncated header, unsupported codec, corrupt stream, no samples, NaN samples, a span that
//! does not fit. Decoding never panics on any input (a property test feeds it arbitrary
//! bytes). A file whose data ends early (its header promises more than is there) decodes to
//! the samples present, as soundfile does; a span is checked against those.
//!
//! # Example
//!
//! ```no_run
//! use std::path::Path;
//! use gpufeed_audio::decode::{self, Span};
//!
//! let audio = decode::load(Path::new("wavs/LJ001-0001.wav"), 22050)?;
//! assert_eq!(audio.sample_rate, 22050);
//! println!("{:.2} s, peak {:.3}", audio.info.duration_s, audio.info.peak);
//!
//! // A Kaldi segment: `utt1 rec1 12.34 15.67`, channel 1 of a stereo recording.
//! let span = Span { offset_s: 12.34, duration_s: Some(15.67 - 12.34), channel: Some(1) };
//! let segment = decode::load_span(Path::new("rec1.wav"), 16000, &span)?;
//! # Ok::<(), gpufeed_audio::AudioError>(())
//! ```

use std::io::{Cursor, Read as _, Seek as _, SeekFrom};
use std::path::Path;

use rubato::audioadapter_buffers::direct::InterleavedSlice;
use rubato::{Fft, FixedSync, Resampler, WindowFunction};
use serde::Serialize;
use symphonia::core::codecs::audio::well_known::{CODEC_ID_MP3, CODEC_ID_PCM_S16LE};
use symphonia::core::codecs::audio::{
    AudioCodecId, AudioCodecParameters, AudioDecoder, AudioDecoderOptions,
};
use symphonia::core::errors::{Error as SymphoniaError, SeekErrorKind};
use symphonia::core::formats::probe::Hint;
use symphonia::core::formats::{FormatOptions, FormatReader, SeekMode, SeekTo, TrackType};
use symphonia::core::io::{MediaSource, MediaSourceStream};
use symphonia::core::meta::MetadataOptions;
use symphonia::core::packet::Packet;
use symphonia::core::units::Timestamp;

use crate::AudioError;
use crate::span;
pub use crate::span::{SPAN_END_TOLERANCE_S, Span};

/// A sample whose magnitude reaches this counts as clipped: within 0.1 % of full scale
/// (a 16-bit sample of ±32735 or more).
pub const CLIP_THRESHOLD: f32 = 0.999;

/// A 10 ms block whose RMS is below this level counts as silent, dB relative to full scale
/// (an RMS of 1.0 is 0 dBFS, so a full-scale sine is -3 dBFS). -50 dBFS is an RMS of
/// 0.00316, about 104 on the 16-bit scale: below speech, above the noise floor of a clean
/// studio recording such as LJSpeech.
pub const SILENCE_DBFS: f64 = -50.0;

/// Length of the blocks [`AudioInfo::silence_fraction`] is measured over, seconds.
pub const SILENCE_BLOCK_S: f64 = 0.010;

/// Smallest input block of the resampler, frames: the anti-aliasing filter is as long as
/// the block, so this sets how sharp it is (cutoff 0.99 of Nyquist at 1280 frames).
pub const RESAMPLE_MIN_BLOCK: usize = 1024;

/// Largest block the resampler may need for an exact ratio, frames (a 2^16-point FFT).
pub const RESAMPLE_MAX_BLOCK: usize = 1 << 16;

/// Most output samples the resampler makes per input sample. 8 kHz telephone audio to
/// 48 kHz is 6; a file whose rate is far below any audio's (a header saying 1 Hz) would
/// otherwise turn a few KB into GB of samples (an 8 KB WAV at 1 Hz: 88 million samples,
/// 3 GB resident while resampled to 22 050 Hz).
pub const RESAMPLE_MAX_UPSAMPLE: u32 = 16;

/// Facts about a file's audio, measured on the source (the span decoded, all channels or the
/// one taken, source rate) before mixing down and resampling. A channel not taken is not
/// measured: its clipping is not the clip's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AudioInfo {
    /// Frames (of the span) / source rate, seconds.
    pub duration_s: f64,
    /// Largest `|x|` over the channels measured, full scale 1.0.
    pub peak: f32,
    /// Number of samples (over the channels measured) with `|x| >=` [`CLIP_THRESHOLD`].
    pub clipped_samples: usize,
    /// Share of the 10 ms blocks of the mono mix or the channel taken (at the source rate;
    /// `round(rate / 100)` samples, the last block possibly shorter) whose RMS is below
    /// [`SILENCE_DBFS`]; 0.0 to 1.0.
    pub silence_fraction: f64,
}

/// Decoded audio: mono samples at the requested rate, and what the source was.
#[derive(Debug, Clone, PartialEq)]
pub struct Audio {
    /// Mono samples, full scale ±1.0, at `sample_rate`.
    pub samples: Vec<f32>,
    /// Rate of `samples`, Hz (the target rate asked for).
    pub sample_rate: u32,
    /// Rate of the file, Hz.
    pub source_rate: u32,
    /// Number of channels in the file.
    pub channels: u16,
    /// Measurements of the source.
    pub info: AudioInfo,
}

/// The largest audio file read whole ([`load`], and [`load_span`] for a span of the whole
/// file): 512 MiB, four times 16-bit PCM of [`MAX_SAMPLES`] samples. Any other span of a
/// file reads only its part of it, whatever the file's size; the span is held to
/// [`MAX_SAMPLES`], at most 512 MiB of even 64-bit WAV samples.
pub const MAX_AUDIO_FILE_BYTES: u64 = 1 << 29;

/// The most samples one file may decode to, all channels together, and the most a clip may
/// have after resampling: 2^26 (256 MiB of `f32`), 23 minutes of 48 kHz mono. A training
/// clip is seconds long; the limit keeps a decompression bomb (a 28 KB FLAC of constant
/// blocks claims 131 million samples) from taking gigabytes.
pub const MAX_SAMPLES: usize = 1 << 26;

/// Why a file decoding to more than [`MAX_SAMPLES`] samples is refused, with what that is
/// at its rate: `decodes to more than 67108864 samples (23.3 minutes at 48000 Hz, 1
/// channel)`.
fn over_samples(rate: u32, channels: usize) -> String {
    let at = if rate > 0 && channels > 0 {
        #[allow(clippy::cast_precision_loss)] // a duration in words
        let minutes = MAX_SAMPLES as f64 / (f64::from(rate) * channels as f64) / 60.0;
        format!(
            " ({minutes:.1} minutes at {rate} Hz, {channels} channel{})",
            if channels == 1 { "" } else { "s" }
        )
    } else {
        String::new()
    };
    format!(
        "it decodes to more than {MAX_SAMPLES} samples{at}, the most gpufeed decodes from one file"
    )
}

/// Opens `path` for reading: [`AudioError::NotFound`] or [`AudioError::Io`] on failure.
pub(crate) fn open(path: &Path) -> Result<std::fs::File, AudioError> {
    // std rather than fs-err: the OS reason is kept whole in `AudioError::Io`, which names
    // the path itself (fs-err would put the path in the message a second time).
    #[allow(clippy::disallowed_methods)]
    std::fs::File::open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            AudioError::NotFound {
                path: path.to_path_buf(),
            }
        } else {
            AudioError::io("read", path, e)
        }
    })
}

/// Reads and decodes `path`, mixes it to mono and resamples it to `target_rate`: the whole
/// file, [`load_span`] with [`Span::default`].
///
/// The whole file is read into memory first (speech clips are small; this also lets a
/// 0-byte file be told apart from a damaged one).
///
/// # Errors
///
/// [`AudioError::NotFound`] or [`AudioError::Io`] when the file cannot be read,
/// [`AudioError::TooLong`] when it is larger than [`MAX_AUDIO_FILE_BYTES`], and every error
/// of [`decode_bytes`].
pub fn load(path: &Path, target_rate: u32) -> Result<Audio, AudioError> {
    load_span(path, target_rate, &Span::default())
}

/// Decodes `span` of `path` (see [`Span`]): its channel, or all channels mixed to mono, resampled
/// to `target_rate`, with [`AudioInfo`] measured on the span.
///
/// A span from the start to the end of the file is decoded as [`load`] does, reading the
/// whole file. Any other span is read from the file without reading the rest: the container
/// is opened from the file and seeked to the span (see the module docs), so a segment of a
/// recording larger than [`MAX_AUDIO_FILE_BYTES`] decodes; the span itself is held to
/// [`MAX_SAMPLES`].
///
/// # Errors
///
/// [`AudioError::Span`] for a span that is negative or not finite, holds no samples, starts
/// at or past the end of the file, ends more than [`SPAN_END_TOLERANCE_S`] past it, or names
/// a channel the file lacks; otherwise those of [`load`].
pub fn load_span(path: &Path, target_rate: u32, span: &Span) -> Result<Audio, AudioError> {
    span.check()
        .map_err(|reason| AudioError::span(path, span, reason))?;
    if span.covers_whole_file() {
        let bytes = read_whole(path)?;
        return decode_bytes_span(&bytes, path, target_rate, span);
    }
    let mut file = open(path)?;
    check_target_rate(target_rate)?;
    let len = file.metadata().map_or(0, |m| m.len());
    let mut head = Vec::new();
    (&mut file)
        .take(HEAD_BYTES)
        .read_to_end(&mut head)
        .and_then(|_| file.seek(SeekFrom::Start(0)))
        .map_err(|e| AudioError::io("read", path, e))?;
    // The file is opened again only if a failed seek makes the span decode from the start.
    let mut file = Some(file);
    let mut source = || -> Result<Box<dyn MediaSource>, AudioError> {
        Ok(Box::new(match file.take() {
            Some(f) => f,
            None => open(path)?,
        }))
    };
    let decoded = decode_span(&mut source, &head, len, path, span)?;
    finish(decoded, path, target_rate, span)
}

/// Reads the whole of `path`, at most [`MAX_AUDIO_FILE_BYTES`].
fn read_whole(path: &Path) -> Result<Vec<u8>, AudioError> {
    let file = open(path)?;
    let too_long = |size: String| AudioError::TooLong {
        path: path.to_path_buf(),
        reason: format!(
            "the file is {size}, more than the {} MiB gpufeed reads",
            MAX_AUDIO_FILE_BYTES >> 20
        ),
    };
    let size = file.metadata().map_or(0, |m| m.len());
    if size > MAX_AUDIO_FILE_BYTES {
        return Err(too_long(format!("{size} bytes")));
    }
    // Sized from the metadata so the read does not grow (and copy) the buffer repeatedly;
    // at most one byte past the cap, for a file with no size (a pipe, a device).
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    file.take(MAX_AUDIO_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| AudioError::io("read", path, e))?;
    if bytes.len() as u64 > MAX_AUDIO_FILE_BYTES {
        return Err(too_long("larger than that".to_owned()));
    }
    Ok(bytes)
}

/// Decodes a whole file held in memory; `name_for_messages` names it in errors and its
/// extension is a hint to the container probe. See [`load`].
///
/// # Errors
///
/// [`AudioError::EmptyFile`], [`AudioError::NotAudio`], [`AudioError::Truncated`],
/// [`AudioError::Unsupported`], [`AudioError::Corrupt`], [`AudioError::NoSamples`],
/// [`AudioError::NonFinite`], [`AudioError::Resample`], and
/// [`AudioError::InvalidSettings`] for a `target_rate` of 0.
pub fn decode_bytes(
    bytes: &[u8],
    name_for_messages: &Path,
    target_rate: u32,
) -> Result<Audio, AudioError> {
    decode_bytes_span(bytes, name_for_messages, target_rate, &Span::default())
}

/// Decodes `span` of a file held in memory (audio inside a tar shard or a parquet column);
/// `name_for_messages` names it in errors and its extension is a hint to the container
/// probe. The container is seeked to the span over the bytes, as [`load_span`] does over a
/// file.
///
/// # Errors
///
/// [`AudioError::Span`] as for [`load_span`], and those of [`decode_bytes`].
pub fn decode_bytes_span(
    bytes: &[u8],
    name_for_messages: &Path,
    target_rate: u32,
    span: &Span,
) -> Result<Audio, AudioError> {
    let path = name_for_messages;
    span.check()
        .map_err(|reason| AudioError::span(path, span, reason))?;
    check_target_rate(target_rate)?;
    let decoded = if span.covers_whole_file() {
        decode_interleaved(bytes, path)?
    } else {
        let mut source = || -> Result<Box<dyn MediaSource + '_>, AudioError> {
            Ok(Box::new(Cursor::new(bytes)))
        };
        decode_span(&mut source, bytes, bytes.len() as u64, path, span)?
    };
    finish(decoded, path, target_rate, span)
}

fn check_target_rate(target_rate: u32) -> Result<(), AudioError> {
    if target_rate == 0 {
        return Err(AudioError::settings(
            "sample_rate",
            0,
            "the target sample rate must be positive",
        ));
    }
    Ok(())
}

/// Takes `span.channel` of `decoded` (or mixes all channels to mono), measures it and
/// resamples it to `target_rate`.
fn finish(
    decoded: Decoded,
    path: &Path,
    target_rate: u32,
    span: &Span,
) -> Result<Audio, AudioError> {
    let file_channels = decoded.channels;
    let channels = usize::from(file_channels);
    let frames = decoded.samples.len() / channels;
    if frames == 0 {
        return Err(AudioError::NoSamples {
            path: path.to_path_buf(),
        });
    }
    span::check_channel(span.channel, file_channels)
        .map_err(|reason| AudioError::span(path, span, reason))?;
    // One channel asked for: it is the source measured, the others are not used.
    let (samples, channels) = match span.channel {
        Some(c) if channels > 1 => (
            decoded
                .samples
                .iter()
                .skip(usize::from(c))
                .step_by(channels)
                .copied()
                .collect(),
            1,
        ),
        _ => (decoded.samples, channels),
    };
    let (peak, clipped_samples, finite) = scan(&samples);
    if !finite {
        let i = samples.iter().position(|x| !x.is_finite()).unwrap_or(0);
        return Err(AudioError::NonFinite {
            path: path.to_path_buf(),
            frame: i / channels,
        });
    }
    let mono = if channels == 1 {
        samples
    } else {
        let k = channels as f32;
        samples
            .chunks_exact(channels)
            .map(|frame| frame.iter().sum::<f32>() / k)
            .collect()
    };
    let info = AudioInfo {
        duration_s: frames as f64 / f64::from(decoded.rate),
        peak,
        clipped_samples,
        silence_fraction: silence_fraction(&mono, decoded.rate),
    };
    let out_frames =
        (mono.len() as u128 * u128::from(target_rate)).div_ceil(u128::from(decoded.rate));
    // A rate the resampler refuses (upsampling more than 16x) is its error, said first.
    let resamplable = target_rate <= decoded.rate.saturating_mul(RESAMPLE_MAX_UPSAMPLE);
    if resamplable && out_frames > MAX_SAMPLES as u128 {
        return Err(AudioError::TooLong {
            path: path.to_path_buf(),
            reason: format!(
                "resampled from {} Hz to {target_rate} Hz it would have {out_frames} samples, \
                 more than the {MAX_SAMPLES} gpufeed keeps of one clip",
                decoded.rate
            ),
        });
    }
    let samples = if decoded.rate == target_rate {
        mono
    } else {
        resample(&mono, decoded.rate, target_rate, path)?
    };
    Ok(Audio {
        samples,
        sample_rate: target_rate,
        source_rate: decoded.rate,
        channels: file_channels,
        info,
    })
}

/// Resamples mono `samples` from `from` Hz to `to` Hz with rubato's synchronous FFT
/// resampler, returning exactly `ceil(len · to / from)` samples aligned with the input (the
/// resampler's delay is trimmed), as `librosa.resample` does.
///
/// Parameters: `rubato::Fft::<f32>::new_custom(from, to, chunk, 1, 1, BlackmanHarris2,
/// FixedSync::Input)`. The FFT resampler works on blocks of `k · from / g` input and
/// `k · to / g` output frames (`g = gcd(from, to)`), which makes the ratio exact (no
/// interpolation error). `k` is the smallest **even** number giving an input block of at
/// least [`RESAMPLE_MIN_BLOCK`] frames: even, because rubato trims a delay of half the output
/// block rounded down, and an odd block would leave the output half a sample late (a 29 %
/// error on speech against soxr). The anti-aliasing filter is a sinc, windowed by a squared
/// Blackman-Harris window, as long as the block, with rubato's automatic cutoff (0.99 of
/// the lower Nyquist frequency for 16 kHz → 22.05 kHz).
///
/// Against `librosa.resample(res_type="soxr_hq")`, 16 kHz to 22.05 kHz on speech: the
/// waveforms differ by 0.18 % of the peak RMS (1.2 % at most), nearly all of it between 7.3
/// and 8 kHz, because soxr's `HQ` filter starts rolling off at 0.913 of the lower Nyquist
/// frequency while rubato's passes up to 0.99; away from the clip's ends the log mel below
/// 7.2 kHz agrees to 6e-4 (`tests/audio/resample.rs`).
///
/// `name_for_messages` names the audio in errors.
///
/// # Errors
///
/// [`AudioError::Resample`] when either rate is 0, when `to` is more than
/// [`RESAMPLE_MAX_UPSAMPLE`] times `from`, when the rates have so small a common
/// divisor that a block would exceed [`RESAMPLE_MAX_BLOCK`] frames (96001 Hz to 22050 Hz,
/// say; every standard rate pair is far below), or when rubato fails.
pub fn resample(
    samples: &[f32],
    from: u32,
    to: u32,
    name_for_messages: &Path,
) -> Result<Vec<f32>, AudioError> {
    let fail = |reason: String| AudioError::Resample {
        path: name_for_messages.to_path_buf(),
        from,
        to,
        reason,
    };
    if from == 0 || to == 0 {
        return Err(fail("sample rates must be positive".to_string()));
    }
    if to > from.saturating_mul(RESAMPLE_MAX_UPSAMPLE) {
        return Err(fail(format!(
            "{from} Hz is not an audio sample rate (it would make {} samples of each one, at \
             most {RESAMPLE_MAX_UPSAMPLE}); check the file's header, or convert it to a \
             standard rate first",
            to / from
        )));
    }
    if from == to {
        return Ok(samples.to_vec());
    }
    if samples.is_empty() {
        return Ok(Vec::new());
    }
    let (from_us, to_us) = (from as usize, to as usize);
    let g = gcd(from_us, to_us);
    let (block_in, block_out) = (from_us / g, to_us / g);
    if block_in.max(block_out) > RESAMPLE_MAX_BLOCK {
        return Err(fail(format!(
            "the rates' greatest common divisor is only {g} Hz, so one exact resampling block \
             would be {} frames (at most {RESAMPLE_MAX_BLOCK}); convert the file to a \
             standard rate first",
            block_in.max(block_out)
        )));
    }
    let k = RESAMPLE_MIN_BLOCK.div_ceil(block_in).next_multiple_of(2);
    // One resampler per rate pair and thread, kept: designing its filter and planning its
    // FFTs cost as much as resampling a short clip. `process_all` resets it first.
    RESAMPLERS.with_borrow_mut(|cache| {
        let i = match cache.iter().position(|(key, _)| *key == (from, to)) {
            Some(i) => i,
            None => {
                let made = Fft::<f32>::new_custom(
                    from_us,
                    to_us,
                    k * block_in,
                    1,
                    1,
                    WindowFunction::BlackmanHarris2,
                    FixedSync::Input,
                )
                .map_err(|e| fail(e.to_string()))?;
                if cache.len() >= RESAMPLERS_KEPT {
                    cache.remove(0);
                }
                cache.push(((from, to), made));
                cache.len() - 1
            }
        };
        let resampler = &mut cache[i].1;
        let adapter =
            InterleavedSlice::new(samples, 1, samples.len()).map_err(|e| fail(e.to_string()))?;
        let out = resampler
            .process_all(&adapter, samples.len(), None)
            .map_err(|e| fail(e.to_string()))?;
        Ok(out.take_data())
    })
}

/// Rate pairs whose resampler a thread keeps (a dataset has one or a few source rates).
const RESAMPLERS_KEPT: usize = 4;

/// A resampler with its `(from, to)` rates.
type Kept = ((u32, u32), Fft<f32>);

thread_local! {
    /// This thread's resamplers.
    static RESAMPLERS: std::cell::RefCell<Vec<Kept>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Lanes of the hand-vectorised loops below: float reductions do not auto-vectorise (their
/// order would change), so they keep `LANES` independent partial results.
const LANES: usize = 8;

/// `(max |x|, count of |x| >= CLIP_THRESHOLD, all finite)` in one pass.
fn scan(x: &[f32]) -> (f32, usize, bool) {
    let mut peak = [0.0f32; LANES];
    let mut finite = [true; LANES];
    let mut clipped_total = 0usize;
    let body = x.len() - x.len() % LANES;
    // u32 lanes, folded into the usize total every 2^20 chunks so they cannot overflow.
    for block in x[..body].chunks(LANES << 20) {
        let mut clipped = [0u32; LANES];
        for c in block.chunks_exact(LANES) {
            for i in 0..LANES {
                let a = c[i].abs();
                peak[i] = if a > peak[i] { a } else { peak[i] };
                clipped[i] += u32::from(a >= CLIP_THRESHOLD);
                finite[i] &= c[i].is_finite();
            }
        }
        clipped_total += clipped.iter().map(|&c| c as usize).sum::<usize>();
    }
    let mut peak = peak.iter().copied().fold(0.0f32, f32::max);
    let mut finite = finite.iter().all(|&f| f);
    for &v in &x[body..] {
        peak = peak.max(v.abs());
        clipped_total += usize::from(v.abs() >= CLIP_THRESHOLD);
        finite &= v.is_finite();
    }
    (peak, clipped_total, finite)
}

/// `Σ x²` with f32 lanes, summed in f64 at the end.
fn sum_squares(x: &[f32]) -> f64 {
    let mut acc = [0.0f32; LANES];
    let body = x.len() - x.len() % LANES;
    for c in x[..body].chunks_exact(LANES) {
        for i in 0..LANES {
            acc[i] += c[i] * c[i];
        }
    }
    let tail: f64 = x[body..].iter().map(|&v| f64::from(v * v)).sum();
    acc.iter().map(|&a| f64::from(a)).sum::<f64>() + tail
}

/// Share of blocks of `round(rate / 100)` samples whose RMS is below [`SILENCE_DBFS`].
fn silence_fraction(mono: &[f32], rate: u32) -> f64 {
    let block = ((f64::from(rate) * SILENCE_BLOCK_S).round() as usize).max(1);
    // RMS < 10^(dB/20)  <=>  mean square < 10^(dB/10).
    let threshold = 10f64.powf(SILENCE_DBFS / 10.0);
    let mut blocks = 0usize;
    let mut silent = 0usize;
    for chunk in mono.chunks(block) {
        let mean_square = sum_squares(chunk) / chunk.len() as f64;
        blocks += 1;
        silent += usize::from(mean_square < threshold);
    }
    if blocks == 0 {
        0.0
    } else {
        silent as f64 / blocks as f64
    }
}

/// What the container and codec gave: interleaved f32 samples.
struct Decoded {
    samples: Vec<f32>,
    rate: u32,
    channels: u16,
}

/// Leading bytes of the containers symphonia reads here, to tell a damaged audio file from
/// something that is not audio at all.
const MAGICS: [(&[u8], &str); 5] = [
    (b"RIFF", "WAV"),
    (b"RIFX", "WAV"),
    (b"fLaC", "FLAC"),
    (b"OggS", "Ogg"),
    (b"ID3", "MP3"),
];

fn container_by_magic(bytes: &[u8]) -> Option<&'static str> {
    MAGICS
        .iter()
        .find(|(magic, _)| bytes.starts_with(magic))
        .map(|(_, name)| *name)
}

/// Maps a symphonia error while opening the container.
fn probe_error(e: SymphoniaError, head: &[u8], len: u64, path: &Path) -> AudioError {
    let path_buf = path.to_path_buf();
    let magic = container_by_magic(head);
    match e {
        SymphoniaError::IoError(io) if io.kind() == std::io::ErrorKind::UnexpectedEof => {
            AudioError::Truncated {
                path: path_buf,
                reason: format!(
                    "the {} header ends after {} bytes",
                    magic.unwrap_or("container"),
                    len
                ),
            }
        }
        SymphoniaError::Unsupported(msg) if msg.contains("no suitable format reader") => {
            match magic {
                // Starts like a known container, but no reader accepted it: a header too
                // short to be scored.
                Some(name) => AudioError::Truncated {
                    path: path_buf,
                    reason: format!(
                        "it starts like a {name} file but its header is incomplete ({} bytes)",
                        len
                    ),
                },
                None => AudioError::NotAudio { path: path_buf },
            }
        }
        SymphoniaError::Unsupported(msg) => AudioError::Unsupported {
            path: path_buf,
            reason: msg.to_string(),
        },
        other => AudioError::Corrupt {
            path: path_buf,
            reason: other.to_string(),
        },
    }
}

/// Rejects WAV `fmt ` chunks that symphonia 0.6.1 mishandles: it computes the block size
/// as `channels * (bits / 8)` in `u16`, which overflows (a panic in debug builds, a wrong
/// size in release) for absurd channel counts only a damaged header has.
///
/// Symphonia's probe reads the first container it finds: at the start of a file that
/// begins with one, else after any junk or tag (the `audio` fuzzer's find: a `RIFF` header
/// 101 bytes into a file). So a file that starts with `fLaC` or `OggS` has no WAV header
/// to check, one that starts with `RIFF` has it there, and any other has every `RIFF` in
/// it checked.
fn check_wav_fmt(bytes: &[u8]) -> Result<(), String> {
    if bytes.starts_with(b"RIFF") {
        return check_riff_fmt(bytes);
    }
    if bytes.starts_with(b"fLaC") || bytes.starts_with(b"OggS") {
        return Ok(());
    }
    let mut from = 0;
    while let Some(k) = bytes[from..].windows(4).position(|w| w == b"RIFF") {
        check_riff_fmt(&bytes[from + k..])?;
        from += k + 1;
    }
    Ok(())
}

/// [`check_wav_fmt`] for a file that starts with `RIFF`.
fn check_riff_fmt(bytes: &[u8]) -> Result<(), String> {
    if bytes.get(8..12) != Some(b"WAVE") {
        return Ok(());
    }
    let mut at = 12usize;
    while let Some(head) = bytes.get(at..at + 8) {
        let size = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
        if &head[..4] == b"fmt " {
            if let Some(fmt) = bytes.get(at + 8..at + 24) {
                let channels = u16::from_le_bytes([fmt[2], fmt[3]]);
                let bits = u16::from_le_bytes([fmt[14], fmt[15]]);
                if channels.checked_mul(bits.div_ceil(8)).is_none() {
                    return Err(format!(
                        "the WAV header gives {channels} channels of {bits}-bit samples, \
                         more than a frame can hold"
                    ));
                }
            }
            return Ok(());
        }
        // Chunks are padded to an even size.
        at = match at.checked_add(8 + size + (size & 1)) {
            Some(next) => next,
            None => return Ok(()),
        };
    }
    Ok(())
}

/// Refuses, then guards: an empty file, Opus, and the WAV headers symphonia mishandles are
/// errors before symphonia sees them, and a panic inside it on damaged input becomes an error
/// for this file instead of taking the worker down. (The default panic hook may still report
/// it on stderr; the known cases are checked before.) `head` is the file's first bytes.
fn guarded<T>(
    head: &[u8],
    path: &Path,
    decode: impl FnOnce() -> Result<T, AudioError>,
) -> Result<T, AudioError> {
    if head.is_empty() {
        return Err(AudioError::EmptyFile {
            path: path.to_path_buf(),
        });
    }
    refuse_opus(head, path)?;
    check_wav_fmt(head).map_err(|reason| AudioError::Corrupt {
        path: path.to_path_buf(),
        reason,
    })?;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(decode)).unwrap_or_else(|_| {
        Err(AudioError::Corrupt {
            path: path.to_path_buf(),
            reason: "the decoder failed on damaged data".to_string(),
        })
    })
}

fn decode_interleaved(bytes: &[u8], path: &Path) -> Result<Decoded, AudioError> {
    guarded(bytes, path, || decode_with_symphonia(bytes, path, true))
}

/// Demuxes with symphonia and decodes with its codecs, except 16-bit little-endian PCM when
/// `raw_pcm16` is set: those packets (whole frames of interleaved samples) are converted
/// here, `i16 / 32768`, which is exactly what symphonia's PCM decoder produces but about
/// ten times faster (its per-sample reader cost ~3 ns a sample, a fifth of the whole
/// decode + mel pipeline on LJSpeech). The container (RIFF chunks, data bounds, truncation)
/// is still symphonia's.
fn decode_with_symphonia(
    bytes: &[u8],
    path: &Path,
    raw_pcm16: bool,
) -> Result<Decoded, AudioError> {
    let mss = MediaSourceStream::new(Box::new(Cursor::new(bytes)), Default::default());
    let mut track = Track::open(mss, bytes, bytes.len() as u64, path, raw_pcm16)?;
    // Exact for 16-bit PCM, the common case; bounded by the file size, so a lying header
    // cannot make this allocate more than the file.
    let mut samples: Vec<f32> = Vec::with_capacity(bytes.len() / 2);
    track.decode_into(Keep::All, &mut samples)?;
    track.into_decoded(samples)
}

/// The first bytes of a file read to check it before symphonia opens it (magic numbers,
/// the WAV `fmt ` chunk, an Ogg stream's first packet): 64 KiB.
const HEAD_BYTES: u64 = 1 << 16;

/// Frames an MP3 span's decode starts before the span: two MPEG-1 layer 3 frames. Symphonia's
/// accurate seek starts at the frame holding the target, or the few before it whose bytes
/// that frame's data begins in (the bit reservoir), but the decoder's state from the frame
/// before — the second half of the overlapped MDCT window and the synthesis filterbank's
/// history — is missing there; one frame decoded before the span restores both, the
/// second is margin.
const MP3_SEEK_PREROLL: u64 = 2 * 1152;

/// Decodes the frames of `span` (all channels, source rate) from the container that
/// `source` opens. `head` is the file's first bytes and `len` its size, for the checks and
/// messages of [`guarded`] and [`probe_error`].
///
/// The first packet's timestamp is read (frame 0 of the file, as [`decode_bytes`] counts
/// frames), the container seeked to the span's first frame (less [`MP3_SEEK_PREROLL`] for
/// MP3), and packets decoded until the span's end, keeping the frames whose timestamps fall
/// in the span. Where the container cannot seek, or its seek lands after the span's first
/// frame (an accurate seek never should), `source` opens the file again and it is decoded
/// from the start instead, as exact, only slower.
fn decode_span<'s>(
    source: &mut dyn FnMut() -> Result<Box<dyn MediaSource + 's>, AudioError>,
    head: &[u8],
    len: u64,
    path: &Path,
    span: &Span,
) -> Result<Decoded, AudioError> {
    guarded(head, path, || {
        let mut open = || {
            let mss = MediaSourceStream::new(source()?, Default::default());
            let mut track = Track::open(mss, head, len, path, true)?;
            let first = track.first_ts()?;
            Ok::<_, AudioError>((track, first))
        };
        let (mut track, first) = open()?;
        let span_error = |reason: String| AudioError::span(path, span, reason);
        let rate = track.rate;
        if rate == 0 {
            return Err(AudioError::Corrupt {
                path: path.to_path_buf(),
                reason: "the header gives no sample rate, which a span needs".to_string(),
            });
        }
        let (start, end) = span.frames(rate);
        if end == Some(start) {
            return Err(span_error(format!("it holds no samples at {rate} Hz")));
        }
        if let Ok(channels) = u16::try_from(track.channels)
            && channels > 0
        {
            span::check_channel(span.channel, channels).map_err(span_error)?;
        }
        let wanted = end.map_or(0, |end| end - start);
        if wanted.saturating_mul(track.channels as u64) > MAX_SAMPLES as u64 {
            return Err(AudioError::TooLong {
                path: path.to_path_buf(),
                reason: format!(
                    "the span is {wanted} frames of {} channel(s), more than the {MAX_SAMPLES} \
                     samples gpufeed decodes at once",
                    track.channels
                ),
            });
        }
        let Some(t0) = first else {
            return Err(AudioError::NoSamples {
                path: path.to_path_buf(),
            });
        };
        let at = |frame: u64| t0.saturating_add(i64::try_from(frame).unwrap_or(i64::MAX));
        let keep = Keep::Range {
            from: at(start),
            to: end.map(at),
        };
        // Past the end of the file as its header counts frames, when a seek finds nothing.
        let past_header_end = |track: &Track<'_>| {
            let total = track.num_frames.filter(|&n| start >= n)?;
            Some(span_error(span::starts_past_end(start, total, rate)))
        };
        let mut samples = Vec::with_capacity(usize::try_from(wanted).unwrap_or(0) * track.channels);
        let preroll = if track.codec == CODEC_ID_MP3 {
            MP3_SEEK_PREROLL
        } else {
            0
        };
        let mut seeked = false;
        if start > preroll {
            match track.seek(at(start - preroll)) {
                Ok(()) => seeked = true,
                Err(e) => {
                    if matches!(e, SymphoniaError::SeekError(SeekErrorKind::OutOfRange))
                        && let Some(e) = past_header_end(&track)
                    {
                        return Err(e);
                    }
                    // A container that cannot seek: decode from the start and cut.
                    (track, _) = open()?;
                }
            }
        }
        let mut seen = track.decode_into(keep, &mut samples)?;
        if seeked && seen.first.is_none_or(|first| first > at(start)) {
            if seen.first.is_none()
                && let Some(e) = past_header_end(&track)
            {
                return Err(e);
            }
            // The seek landed past the span's start (an accurate seek should not), or at the
            // end of a stream whose length the header does not give: decode from the start.
            samples.clear();
            (track, _) = open()?;
            seen = track.decode_into(keep, &mut samples)?;
        }
        if seen.ended {
            // The file ends before the span does: a span ending just past the end is kept
            // (its frames past the end were never there), others are refused.
            let total = seen
                .end
                .map_or(0, |e| e.saturating_sub(t0).max(0).unsigned_abs());
            span::fit(start, end, total, rate).map_err(span_error)?;
        }
        track.into_decoded(samples)
    })
}

/// Which decoded frames [`Track::decode_into`] keeps.
#[derive(Debug, Clone, Copy)]
enum Keep {
    /// Every frame, whatever the timestamps say (the whole file).
    All,
    /// The frames with timestamps in `[from, to)`, `to` `None` for the end of the stream;
    /// decoding stops at `to`.
    Range { from: i64, to: Option<i64> },
}

impl Keep {
    /// The frames `[lo, hi)` to keep of `n` decoded from timestamp `at`.
    fn of(self, at: i64, n: usize) -> (usize, usize) {
        match self {
            Keep::All => (0, n),
            Keep::Range { from, to } => {
                let index = |ts: i64| {
                    usize::try_from(ts.saturating_sub(at).max(0))
                        .unwrap_or(usize::MAX)
                        .min(n)
                };
                let hi = to.map_or(n, index);
                (index(from).min(hi), hi)
            }
        }
    }

    fn ends_by(self, ts: i64) -> bool {
        matches!(self, Keep::Range { to: Some(to), .. } if ts >= to)
    }
}

/// What [`Track::decode_into`] decoded, in the track's timestamps.
#[derive(Debug, Default)]
struct Seen {
    /// The first frame decoded, kept or not.
    first: Option<i64>,
    /// One past the last frame decoded.
    end: Option<i64>,
    /// Whether decoding stopped at the end of the stream (rather than at the range's end).
    ended: bool,
}

/// An audio track opened by symphonia: its container and decoder, and what the header says.
struct Track<'s> {
    format: Box<dyn FormatReader + 's>,
    track_id: u32,
    codec: AudioCodecId,
    /// `None` for 16-bit PCM, converted here (see [`decode_with_symphonia`]).
    decoder: Option<Box<dyn AudioDecoder>>,
    /// 0 until known, when the header does not say.
    rate: u32,
    /// 0 until known, when the header does not say.
    channels: usize,
    /// Frames in the track as the header counts them.
    num_frames: Option<u64>,
    /// A packet read by [`Track::first_ts`], decoded first.
    pending: Option<Packet>,
    packets: usize,
    path: &'s Path,
}

impl<'s> Track<'s> {
    /// Probes the container in `mss` and opens its default audio track's decoder. `head` is
    /// the file's first bytes and `len` its size, for [`probe_error`].
    fn open(
        mss: MediaSourceStream<'s>,
        head: &[u8],
        len: u64,
        path: &'s Path,
        raw_pcm16: bool,
    ) -> Result<Self, AudioError> {
        let unsupported = |reason: String| AudioError::Unsupported {
            path: path.to_path_buf(),
            reason,
        };
        let mut hint = Hint::new();
        if let Some(ext) = path.extension().and_then(|e| e.to_str()) {
            hint.with_extension(ext);
        }
        let format = symphonia::default::get_probe()
            .probe(
                &hint,
                mss,
                FormatOptions::default(),
                MetadataOptions::default(),
            )
            .map_err(|e| probe_error(e, head, len, path))?;
        let track = format
            .default_track(TrackType::Audio)
            .ok_or_else(|| unsupported("the container has no audio track".to_string()))?;
        let track_id = track.id;
        let num_frames = track.num_frames;
        let params = track
            .codec_params
            .as_ref()
            .and_then(|p| p.audio())
            .ok_or_else(|| unsupported("the track has no audio codec parameters".to_string()))?
            .clone();
        let rate = params.sample_rate.unwrap_or(0);
        let channels = params.channels.as_ref().map_or(0, |c| c.count());
        let pcm16 = raw_pcm16
            && params.codec == CODEC_ID_PCM_S16LE
            && params.bits_per_sample == Some(16)
            && params.bits_per_coded_sample.is_none_or(|b| b == 16)
            && channels > 0
            && rate > 0;
        let decoder = if pcm16 {
            None
        } else {
            Some(
                symphonia::default::get_codecs()
                    .make_audio_decoder(&params, &AudioDecoderOptions::default())
                    .map_err(|e| match e {
                        SymphoniaError::Unsupported(_) => unsupported(format!(
                            "no decoder for the {} codec in this build",
                            describe_codec(&params)
                        )),
                        other => AudioError::Corrupt {
                            path: path.to_path_buf(),
                            reason: other.to_string(),
                        },
                    })?,
            )
        };
        Ok(Self {
            format,
            track_id,
            codec: params.codec,
            decoder,
            rate,
            channels,
            num_frames,
            pending: None,
            packets: 0,
            path,
        })
    }

    fn corrupt(&self, reason: String) -> AudioError {
        AudioError::Corrupt {
            path: self.path.to_path_buf(),
            reason,
        }
    }

    /// The track's next packet; `None` at the end of the stream, or where the data ends before
    /// the header said it would (what was read is kept), or where a chained Ogg stream
    /// starts a new logical stream (only the first is read).
    fn next_packet(&mut self) -> Result<Option<Packet>, AudioError> {
        if let Some(packet) = self.pending.take() {
            return Ok(Some(packet));
        }
        loop {
            match self.format.next_packet() {
                Ok(Some(p)) if p.track_id == self.track_id => return Ok(Some(p)),
                Ok(Some(_)) => {}
                Ok(None) | Err(SymphoniaError::ResetRequired) => return Ok(None),
                Err(SymphoniaError::IoError(e))
                    if e.kind() == std::io::ErrorKind::UnexpectedEof =>
                {
                    return Ok(None);
                }
                Err(e) => return Err(self.corrupt(format!("packet {}: {e}", self.packets))),
            }
        }
    }

    /// The timestamp of frame 0 of the whole decode (`None` for a track without packets):
    /// that of the first packet's first frame, or 0 where that is negative. Symphonia's
    /// readers give an encoder's delay negative timestamps and its decoders drop those
    /// frames, so the first frame played is at 0 (an MP3's 1105 frames of LAME delay span
    /// its first two packets at 22.05 kHz; a Vorbis stream's first packet is all delay). A
    /// stream that starts later (an Ogg stream cut from a longer one) starts at its first
    /// packet. The packet read is decoded first.
    fn first_ts(&mut self) -> Result<Option<i64>, AudioError> {
        self.pending = self.next_packet()?;
        Ok(self.pending.as_ref().map(|p| first_frame_ts(p).max(0)))
    }

    /// Seeks to the packet holding timestamp `ts`, or one before it.
    fn seek(&mut self, ts: i64) -> Result<(), SymphoniaError> {
        let to = SeekTo::Timestamp {
            ts: Timestamp::from(ts),
            track_id: self.track_id,
        };
        self.format.seek(SeekMode::Accurate, to)?;
        self.pending = None;
        if let Some(decoder) = self.decoder.as_mut() {
            decoder.reset();
        }
        Ok(())
    }

    /// Decodes packets to the end of the stream (or of `keep`'s range), appending the
    /// interleaved samples of the frames `keep` keeps to `samples`.
    fn decode_into(&mut self, keep: Keep, samples: &mut Vec<f32>) -> Result<Seen, AudioError> {
        let path = self.path;
        let corrupt = |reason: String| AudioError::Corrupt {
            path: path.to_path_buf(),
            reason,
        };
        let too_long = |rate: u32, channels: usize| AudioError::TooLong {
            path: path.to_path_buf(),
            reason: over_samples(rate, channels),
        };
        let mut seen = Seen::default();
        let mut frame = Vec::new();
        while let Some(packet) = self.next_packet()? {
            let at = first_frame_ts(&packet);
            if keep.ends_by(at) {
                return Ok(seen);
            }
            let Some(decoder) = self.decoder.as_mut() else {
                // 16-bit PCM: whole frames of little-endian samples.
                let channels = self.channels;
                if packet.data.len() % (2 * channels) != 0 {
                    return Err(corrupt(format!(
                        "packet {} holds {} bytes, not whole {channels}-channel 16-bit frames",
                        self.packets,
                        packet.data.len()
                    )));
                }
                self.packets += 1;
                let n = packet.data.len() / (2 * channels);
                let (lo, hi) = keep.of(at, n);
                if samples.len() + (hi - lo) * channels > MAX_SAMPLES {
                    return Err(too_long(self.rate, channels));
                }
                samples.extend(
                    packet.data[2 * channels * lo..2 * channels * hi]
                        .chunks_exact(2)
                        .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) * (1.0 / 32768.0)),
                );
                if seen.saw(at, n, keep) {
                    return Ok(seen);
                }
                continue;
            };
            let buf = decoder.decode(&packet).map_err(|e| match e {
                SymphoniaError::Unsupported(msg) => AudioError::Unsupported {
                    path: path.to_path_buf(),
                    reason: msg.to_string(),
                },
                other => corrupt(format!("packet {}: {other}", self.packets)),
            })?;
            self.packets += 1;
            let spec = buf.spec();
            let channels = spec.channels().count();
            if self.channels == 0 {
                self.channels = channels;
            }
            if self.rate == 0 {
                self.rate = spec.rate();
            }
            if channels != self.channels {
                return Err(corrupt(format!(
                    "packet {} has {channels} channels, the stream {}",
                    self.packets, self.channels
                )));
            }
            let n = buf.frames();
            let (lo, hi) = keep.of(at, n);
            let (lo, hi) = (lo * channels, hi * channels);
            if samples.len() + (hi - lo) > MAX_SAMPLES {
                return Err(too_long(self.rate, channels));
            }
            if (lo, hi) == (0, buf.samples_interleaved()) {
                let old = samples.len();
                samples.resize(old + hi, 0.0);
                buf.copy_to_slice_interleaved::<f32, _>(&mut samples[old..]);
            } else if lo < hi {
                frame.resize(buf.samples_interleaved(), 0.0);
                buf.copy_to_slice_interleaved::<f32, _>(&mut frame[..]);
                samples.extend_from_slice(&frame[lo..hi]);
            }
            if seen.saw(at, n, keep) {
                return Ok(seen);
            }
        }
        seen.ended = true;
        Ok(seen)
    }

    /// What was decoded, checked: a sample rate and a channel count.
    fn into_decoded(self, samples: Vec<f32>) -> Result<Decoded, AudioError> {
        if self.rate == 0 {
            return Err(self.corrupt("the header gives no sample rate".to_string()));
        }
        let channels = u16::try_from(self.channels)
            .ok()
            .filter(|&c| c > 0)
            .ok_or_else(|| self.corrupt(format!("unusable channel count {}", self.channels)))?;
        Ok(Decoded {
            samples,
            rate: self.rate,
            channels,
        })
    }
}

impl Seen {
    /// Notes `n` frames decoded from timestamp `at`; whether `keep`'s range is complete.
    fn saw(&mut self, at: i64, n: usize, keep: Keep) -> bool {
        let end = at.saturating_add(i64::try_from(n).unwrap_or(i64::MAX));
        if n > 0 {
            self.first.get_or_insert(at);
            self.end = Some(end);
        }
        keep.ends_by(end)
    }
}

/// The timestamp of the first frame `packet` decodes to: its timestamp, after the frames
/// the decoder trims from its start (an encoder's delay, which symphonia's decoders drop).
/// A packet that renders nothing (one all delay, or Vorbis's first after a seek) places no
/// frame; the next renders from its own timestamp.
fn first_frame_ts(packet: &Packet) -> i64 {
    packet
        .pts
        .get()
        .saturating_add(i64::try_from(packet.trim_start.get()).unwrap_or(i64::MAX))
}

/// Refuses Opus by name: a file named `*.opus`, or an Ogg stream whose first packet is an
/// Opus identification header. No Opus decoder is in the dependency policy yet (symphonia
/// has none; the others bind libopus), so the message says how to convert it.
fn refuse_opus(head: &[u8], path: &Path) -> Result<(), AudioError> {
    let named = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("opus"));
    if !named && !is_ogg_opus(head) {
        return Ok(());
    }
    let mut flac = path.with_extension("flac");
    if flac == path {
        flac = path.with_extension("from-opus.flac");
    }
    Err(AudioError::Unsupported {
        path: path.to_path_buf(),
        reason: format!(
            "it is Opus audio, which gpufeed does not decode yet; convert it to FLAC first: \
             `ffmpeg -i {} -ar 48000 {}` (a folder of them: `for f in *.opus; do ffmpeg -i \
             \"$f\" -ar 48000 \"${{f%.opus}}.flac\"; done`)",
            shell_word(path),
            shell_word(&flac)
        ),
    })
}

/// Whether `bytes` start with an Ogg page whose first packet begins `OpusHead`, the magic of
/// Opus's identification header (RFC 7845 section 5.1). An Ogg page header is 27 bytes, the
/// last of them the number of lacing values; the table of those follows, then the packets
/// (RFC 3533 section 6).
fn is_ogg_opus(bytes: &[u8]) -> bool {
    let Some(&lacing) = bytes.get(26) else {
        return false;
    };
    bytes.starts_with(b"OggS")
        && bytes
            .get(27 + usize::from(lacing)..)
            .is_some_and(|packet| packet.starts_with(b"OpusHead"))
}

/// `path` as one word of a POSIX shell command: as it is when it holds only characters the
/// shell takes literally, else in single quotes.
fn shell_word(path: &Path) -> String {
    let s = path.display().to_string();
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:=@%".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A name for the codec of `params`, for messages: the ones a speech dataset may contain
/// and this build cannot decode, else symphonia's id.
fn describe_codec(params: &AudioCodecParameters) -> String {
    use symphonia::core::codecs::audio::well_known as ids;
    let id = params.codec;
    let name = match id {
        ids::CODEC_ID_OPUS => "Opus",
        ids::CODEC_ID_AAC => "AAC",
        ids::CODEC_ID_ALAC => "ALAC",
        ids::CODEC_ID_SPEEX => "Speex",
        ids::CODEC_ID_WMA => "WMA",
        ids::CODEC_ID_AC3 => "AC-3",
        ids::CODEC_ID_MP1 => "MPEG layer 1",
        ids::CODEC_ID_MP2 => "MPEG layer 2",
        ids::CODEC_ID_WAVPACK => "WavPack",
        ids::CODEC_ID_MONKEYS_AUDIO => "Monkey's Audio",
        ids::CODEC_ID_ADPCM_MS
        | ids::CODEC_ID_ADPCM_IMA_WAV
        | ids::CODEC_ID_ADPCM_IMA_QT
        | ids::CODEC_ID_ADPCM_G722
        | ids::CODEC_ID_ADPCM_G726
        | ids::CODEC_ID_ADPCM_G726LE => "ADPCM",
        _ => return format!("with symphonia id {id}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_write::{verbatim, wav, wav_extensible};
    use proptest::prelude::*;

    fn decode(bytes: &[u8], rate: u32) -> Result<Audio, AudioError> {
        decode_bytes(bytes, Path::new("test.wav"), rate)
    }

    #[test]
    fn pcm16_scales_like_soundfile() {
        let values: [i16; 4] = [0, 16384, -32768, 32767];
        let data: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let a = decode(&wav(1, 1, 8000, 16, &data), 8000).unwrap();
        assert_eq!(a.samples, vec![0.0, 0.5, -1.0, 32767.0 / 32768.0]);
        assert_eq!((a.channels, a.source_rate, a.sample_rate), (1, 8000, 8000));
        assert_eq!(a.info.peak, 1.0);
        assert_eq!(a.info.clipped_samples, 2);
        assert_eq!(a.info.duration_s, 4.0 / 8000.0);
    }

    #[test]
    fn raw_pcm16_path_equals_symphonias_decoder() {
        // Every 16-bit value, in stereo, and an odd-length tail of one frame.
        let data: Vec<u8> = (i16::MIN..=i16::MAX)
            .chain([7, -7])
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let bytes = wav(1, 2, 44100, 16, &data);
        let path = Path::new("all.wav");
        let fast = decode_with_symphonia(&bytes, path, true).unwrap();
        let slow = decode_with_symphonia(&bytes, path, false).unwrap();
        assert_eq!(fast.samples, slow.samples);
        assert_eq!((fast.rate, fast.channels), (slow.rate, slow.channels));
        assert_eq!(fast.samples.len(), 65538);
        // And on a real clip, when the shared data is there (the integration tests require it).
        let clip = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/ljspeech-mini/wavs/LJ001-0001.wav");
        if let Ok(bytes) = fs_err::read(&clip) {
            let fast = decode_with_symphonia(&bytes, &clip, true).unwrap();
            let slow = decode_with_symphonia(&bytes, &clip, false).unwrap();
            assert_eq!(fast.samples, slow.samples);
        }
    }

    #[test]
    fn wave_format_extensible() {
        let v: [i16; 4] = [0, 16384, -32768, 8192];
        let data: Vec<u8> = v.iter().flat_map(|v| v.to_le_bytes()).collect();
        let a = decode(&wav_extensible(1, 2, 16000, 16, &data), 16000).unwrap();
        assert_eq!((a.channels, a.source_rate), (2, 16000));
        assert_eq!(a.samples, vec![0.25, -0.375]);
        let f: [f32; 2] = [0.5, -0.25];
        let data: Vec<u8> = f.iter().flat_map(|v| v.to_le_bytes()).collect();
        let a = decode(&wav_extensible(3, 1, 16000, 32, &data), 16000).unwrap();
        assert_eq!(a.samples, f);
        let v: [i32; 2] = [1 << 22, -(1 << 23)];
        let data: Vec<u8> = v
            .iter()
            .flat_map(|v| v.to_le_bytes()[..3].to_vec())
            .collect();
        let a = decode(&wav_extensible(1, 1, 16000, 24, &data), 16000).unwrap();
        assert_eq!(a.samples, vec![0.5, -1.0]);
    }

    #[test]
    fn pcm8_is_unsigned() {
        let a = decode(&wav(1, 1, 8000, 8, &[128, 192, 0, 255]), 8000).unwrap();
        assert_eq!(a.samples, vec![0.0, 0.5, -1.0, 127.0 / 128.0]);
    }

    #[test]
    fn pcm24_and_pcm32() {
        let v24: [i32; 3] = [0, 1 << 22, -(1 << 23)];
        let data: Vec<u8> = v24
            .iter()
            .flat_map(|v| v.to_le_bytes()[..3].to_vec())
            .collect();
        let a = decode(&wav(1, 1, 8000, 24, &data), 8000).unwrap();
        assert_eq!(a.samples, vec![0.0, 0.5, -1.0]);

        let v32: [i32; 3] = [0, 1 << 30, i32::MIN];
        let data: Vec<u8> = v32.iter().flat_map(|v| v.to_le_bytes()).collect();
        let a = decode(&wav(1, 1, 8000, 32, &data), 8000).unwrap();
        assert_eq!(a.samples, vec![0.0, 0.5, -1.0]);
    }

    #[test]
    fn float32_and_float64() {
        let v: [f32; 3] = [0.25, -0.5, 0.125];
        let data: Vec<u8> = v.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(
            decode(&wav(3, 1, 8000, 32, &data), 8000).unwrap().samples,
            v
        );
        let data: Vec<u8> = v.iter().flat_map(|&v| f64::from(v).to_le_bytes()).collect();
        assert_eq!(
            decode(&wav(3, 1, 8000, 64, &data), 8000).unwrap().samples,
            v
        );
    }

    #[test]
    fn stereo_is_averaged() {
        let frames: [[i16; 2]; 3] = [[16384, 0], [-16384, -16384], [8192, -8192]];
        let data: Vec<u8> = frames
            .iter()
            .flatten()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let a = decode(&wav(1, 2, 8000, 16, &data), 8000).unwrap();
        assert_eq!(a.channels, 2);
        assert_eq!(a.samples, vec![0.25, -0.5, 0.0]);
        assert_eq!(a.info.peak, 0.5);
        assert_eq!(a.info.duration_s, 3.0 / 8000.0);
    }

    #[test]
    fn nan_samples_are_rejected() {
        let v: [f32; 3] = [0.25, f32::NAN, 0.0];
        let data: Vec<u8> = v.iter().flat_map(|v| v.to_le_bytes()).collect();
        let e = decode(&wav(3, 1, 8000, 32, &data), 8000).unwrap_err();
        assert!(matches!(e, AudioError::NonFinite { frame: 1, .. }), "{e}");
    }

    proptest! {
        #[test]
        fn scan_matches_a_plain_loop(x in proptest::collection::vec(-1.2f32..1.2, 0..100)) {
            let peak = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let clipped = x.iter().filter(|v| v.abs() >= CLIP_THRESHOLD).count();
            prop_assert_eq!(scan(&x), (peak, clipped, true));
            let plain: f64 = x.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
            prop_assert!((sum_squares(&x) - plain).abs() <= 1e-5 * plain.max(1e-30));
        }
    }

    #[test]
    fn scan_finds_non_finite_values() {
        let mut x = vec![0.5f32; 37];
        assert!(scan(&x).2);
        x[20] = f32::INFINITY;
        assert!(!scan(&x).2);
        x[20] = 0.0;
        x[36] = f32::NAN;
        assert!(!scan(&x).2);
    }

    #[test]
    fn silence_fraction_counts_quiet_blocks() {
        // 8000 Hz: blocks of 80 samples. Two silent blocks, then two loud ones.
        let mut x = vec![0.0f32; 160];
        x.extend(std::iter::repeat_n(0.5f32, 160));
        assert_eq!(silence_fraction(&x, 8000), 0.5);
        // -50 dBFS is an RMS of 0.003162: just above is not silent, just below is.
        assert_eq!(silence_fraction(&[0.0032; 80], 8000), 0.0);
        assert_eq!(silence_fraction(&[0.0031; 80], 8000), 1.0);
        assert_eq!(silence_fraction(&[], 8000), 0.0);
    }

    #[test]
    fn resampling_changes_length_and_keeps_a_tone() {
        let from = 16000;
        let to = 22050;
        let f0 = 440.0;
        let x: Vec<f32> = (0..16000)
            .map(|i| (2.0 * std::f64::consts::PI * f0 * i as f64 / f64::from(from)).sin() as f32)
            .collect();
        let y = resample(&x, from, to, Path::new("tone")).unwrap();
        assert_eq!(y.len(), 22050);
        // Away from the edges the output is the same tone at the new rate.
        let worst = (1000..21000)
            .map(|i| {
                let expect = (2.0 * std::f64::consts::PI * f0 * i as f64 / f64::from(to)).sin();
                (f64::from(y[i]) - expect).abs()
            })
            .fold(0.0, f64::max);
        assert!(worst < 1e-3, "worst error {worst}");
    }

    #[test]
    fn target_rate_zero_is_rejected() {
        let data = [0u8, 0, 0, 0];
        let e = decode(&wav(1, 1, 8000, 16, &data), 0).unwrap_err();
        assert!(matches!(e, AudioError::InvalidSettings { .. }), "{e}");
    }

    proptest! {
        #[test]
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
            let _ = decode(&bytes, 22050);
        }

        #[test]
        fn never_panics_on_damaged_wav(
            cut in 0usize..120,
            flip in 0usize..60,
            value in any::<u8>(),
        ) {
            let data: Vec<u8> = (0..64u8).collect();
            let mut bytes = wav(1, 1, 8000, 16, &data);
            if flip < bytes.len() {
                bytes[flip] = value;
            }
            bytes.truncate(cut.min(bytes.len()));
            let _ = decode(&bytes, 16000);
        }
    }

    /// A source over bytes that counts the bytes read from it.
    struct Counting<'a> {
        inner: Cursor<&'a [u8]>,
        read: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    }

    impl std::io::Read for Counting<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.read.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            Ok(n)
        }
    }

    impl std::io::Seek for Counting<'_> {
        fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
            self.inner.seek(to)
        }
    }

    impl MediaSource for Counting<'_> {
        fn is_seekable(&self) -> bool {
            true
        }
        fn byte_len(&self) -> Option<u64> {
            Some(self.inner.get_ref().len() as u64)
        }
    }

    /// Decodes `span` of `bytes` as [`decode_bytes_span`] does, counting the bytes read
    /// (every opening of the source together, so a fallback to decoding from the start
    /// shows).
    fn span_counting_reads(bytes: &[u8], name: &str, span: &Span) -> (Decoded, usize) {
        let read = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut source = || -> Result<Box<dyn MediaSource + '_>, AudioError> {
            Ok(Box::new(Counting {
                inner: Cursor::new(bytes),
                read: read.clone(),
            }))
        };
        let decoded = decode_span(
            &mut source,
            bytes,
            bytes.len() as u64,
            Path::new(name),
            span,
        )
        .unwrap();
        (decoded, read.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// A span of a long WAV or FLAC reads the header and about the span's bytes, not the
    /// file: the container is seeked, not read through (nor decoded from the start).
    #[test]
    fn spans_read_only_their_part() {
        // 4 minutes of 16 kHz mono, a sample's value its index (modulo a prime): 7.7 MB.
        let n = 16_000 * 240;
        let samples: Vec<i16> = (0..n).map(|i| (i % 32_749) as i16).collect();
        let data: Vec<u8> = samples.iter().flat_map(|v| v.to_le_bytes()).collect();
        let span = Span {
            offset_s: 200.0,
            duration_s: Some(0.5),
            channel: None,
        };
        let expect: Vec<f32> = samples[3_200_000..3_208_000]
            .iter()
            .map(|&v| f32::from(v) / 32768.0)
            .collect();
        let files = [
            ("long.wav", wav(1, 1, 16_000, 16, &data)),
            ("long.flac", verbatim(16_000, 1, 4096, &samples)),
        ];
        for (name, bytes) in files {
            let (decoded, read) = span_counting_reads(&bytes, name, &span);
            eprintln!(
                "{name}: {} bytes, {read} read for a 0.5 s span",
                bytes.len()
            );
            assert_eq!(decoded.samples, expect, "{name}");
            // The span is 16 KB; symphonia reads ahead in blocks of up to 32 KB, FLAC's
            // seek bisects the file (a frame header at each step).
            assert!(read < 512 << 10, "{name}: {read} bytes read");
        }
    }
}
