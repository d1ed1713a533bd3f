//! Short-time Fourier transform and mel spectrogram, computed exactly as librosa 0.11 does.
//!
//! For a mono signal `x[0..n)` and [`AudioSettings`] `s`, frame `t` (for `t` in
//! `0..frames_for(n)`) is
//!
//! ```text
//! pad      = if s.center { n_fft / 2 } else { 0 }
//! xp[i]    = x[i - pad], with x outside [0, n) given by pad_mode:
//!              constant: 0;  reflect: numpy's `reflect` (mirror without repeating the edge,
//!              repeated when the signal is shorter than the padding)
//! w[j]     = 0.5 - 0.5 cos(2π (j - off) / win_length)  for off <= j < off + win_length, else 0
//!            (the periodic Hann window, off = (n_fft - win_length) / 2)
//! X_t[k]   = Σ_j xp[t·hop + j] · w[j] · exp(-2πi·jk / n_fft),   k in 0..=n_fft/2
//! S_t[k]   = |X_t[k]|^power
//! M_t[m]   = Σ_k F[m][k] · S_t[k]                                 m in 0..n_mels
//! out[t,m] = ln(max(M_t[m], log_floor))  |  log10(...)  |  M_t[m]
//! ```
//!
//! and the number of frames is `1 + n / hop` when centred (librosa's `1 + len // hop`), and
//! `1 + (n - n_fft) / hop` when not (an error below `n_fft` samples, like librosa's
//! `center=False`).
//!
//! The filterbank `F` is built in f64 exactly like `librosa.filters.mel`
//! ([`mel_filterbank`]): `n_mels + 2` edge frequencies equally spaced on the mel scale
//! between `fmin` and `fmax` (`None` = `sample_rate / 2`), triangles over the FFT bin
//! frequencies `k · sr / n_fft`, and, with [`MelNorm::Slaney`], each triangle scaled by
//! `2 / (f[m+2] - f[m])` so it has unit area in Hz. The Slaney scale is linear below 1 kHz
//! (`f / (200/3)`) and logarithmic above (`15 + ln(f / 1000) / (ln(6.4) / 27)`); HTK is
//! `2595 log10(1 + f / 700)`.
//!
//! The librosa equivalents, which the integration tests check against committed fixtures:
//!
//! ```text
//! AudioSettings::librosa_melspectrogram()  ==  librosa.feature.melspectrogram(y=y, sr=22050,
//!     n_fft=1024, hop_length=256, win_length=1024, n_mels=80, fmin=0, fmax=8000,
//!     center=True, pad_mode="constant", power=2.0).T
//! AudioSettings::default()  ==  np.log(np.maximum(librosa.filters.mel(sr=22050, n_fft=1024,
//!     n_mels=80, fmin=0, fmax=8000) @ np.abs(librosa.stft(y, n_fft=1024, hop_length=256,
//!     win_length=1024, window="hann", center=True, pad_mode="reflect")), 1e-5)).T
//! ```
//!
//! Numerics, chosen as librosa does them: the window and the FFT in f64 (librosa multiplies
//! float32 frames by a float64 window, so numpy's FFT runs in f64), then the spectrum, the
//! filterbank product and the log in f32 (librosa's spectrum is complex64 and its
//! filterbank float32). Against librosa 0.11 the power mel agrees to 4e-7 relative and the
//! log mel to 1e-6 (one f32 ulp); see `tests/audio/librosa.rs`. An f32 FFT would be ~1.4x
//! faster but is off by up to 2e-3 relative on quiet bands next to loud ones, 3e-4 in
//! log-mel on speech, so it is not used.
//!
//! Cost, per frame: an eighth of a batch of eight. Two frames share one complex f64 FFT of
//! `n_fft` points (frame `t` as the real part, `t + 1` as the imaginary part, separated
//! afterwards: measured 1.5x cheaper than two real FFTs with realfft); the power is
//! computed only for the bins some filter uses; the filterbank is applied sparsely (each
//! filter spans a few bins) with the eight frames of a batch in the eight f32 lanes of an
//! AVX register; the log is a branch-free polynomial that vectorises. The batch loop is
//! compiled twice (`multiversion`): for x86-64 with AVX2 and FMA, picked at run time when
//! the CPU has them (12 % faster on the development machine), and for the baseline target.
//! FFT plan and buffers are made once in [`MelExtractor::new`]; nothing is allocated per
//! frame, and [`MelExtractor::compute_into`] allocates nothing at all once the caller's
//! buffer has grown. About 5,700 audio-seconds per second on one core of the development
//! machine including WAV decoding, 4.3x librosa (`benches/mel_throughput.rs`).
//!
//! # Example
//!
//! ```
//! use gpufeed_audio::AudioSettings;
//! use gpufeed_audio::mel::MelExtractor;
//!
//! let settings = AudioSettings::default();
//! let mut mel = MelExtractor::new(&settings)?;
//! // One second of a 440 Hz tone at 22050 Hz.
//! let tone: Vec<f32> = (0..22050)
//!     .map(|i| (2.0 * std::f32::consts::PI * 440.0 * i as f32 / 22050.0).sin() * 0.5)
//!     .collect();
//! let spec = mel.compute(&tone)?;
//! assert_eq!(spec.frames, 1 + 22050 / 256);
//! assert_eq!(spec.data.len(), spec.frames * 80);
//! # Ok::<(), gpufeed_audio::AudioError>(())
//! ```
//!
//! References: librosa 0.11 `feature.melspectrogram`, `filters.mel`, `stft`,
//! `core.convert.hz_to_mel`; Slaney, *Auditory Toolbox* (1998); `shared/research/speech-data.md`
//! section 1.

use std::fmt;
use std::sync::Arc;

use multiversion::multiversion;
use rustfft::num_complex::Complex;
use rustfft::{Fft, FftPlanner};

use crate::AudioError;
use crate::settings::{AudioSettings, LogKind, MelNorm, MelScale, PadMode};

/// A mel spectrogram, row-major `(frames, n_mels)`: `data[t * n_mels + m]`.
#[derive(Debug, Clone, PartialEq)]
pub struct MelSpectrogram {
    /// Number of frames (rows).
    pub frames: usize,
    /// Number of mel bands (columns).
    pub n_mels: usize,
    /// The values, frame after frame.
    pub data: Vec<f32>,
}

impl MelSpectrogram {
    /// The `n_mels` values of frame `t`, or `None` past the end.
    #[must_use]
    pub fn frame(&self, t: usize) -> Option<&[f32]> {
        self.data.get(t * self.n_mels..(t + 1) * self.n_mels)
    }

    /// `[frames, n_mels]`, the shape to write with [`crate::npy::write_f32`].
    #[must_use]
    pub fn shape(&self) -> [usize; 2] {
        [self.frames, self.n_mels]
    }
}

/// Slaney scale: the linear part's slope, Hz per mel (librosa `f_sp`).
const SLANEY_HZ_PER_MEL: f64 = 200.0 / 3.0;
/// Slaney scale: where the logarithmic part starts, Hz (librosa `min_log_hz`).
const SLANEY_MIN_LOG_HZ: f64 = 1000.0;

/// Slaney scale: log step per mel above 1 kHz, `ln(6.4) / 27` (librosa `logstep`).
fn slaney_logstep() -> f64 {
    6.4f64.ln() / 27.0
}

/// Hz to mel, as `librosa.hz_to_mel(f, htk=...)`.
#[must_use]
pub fn hz_to_mel(hz: f64, scale: MelScale) -> f64 {
    match scale {
        MelScale::Htk => 2595.0 * (1.0 + hz / 700.0).log10(),
        MelScale::Slaney => {
            let min_log_mel = SLANEY_MIN_LOG_HZ / SLANEY_HZ_PER_MEL;
            if hz >= SLANEY_MIN_LOG_HZ {
                min_log_mel + (hz / SLANEY_MIN_LOG_HZ).ln() / slaney_logstep()
            } else {
                hz / SLANEY_HZ_PER_MEL
            }
        }
    }
}

/// Mel to Hz, as `librosa.mel_to_hz(m, htk=...)`.
#[must_use]
pub fn mel_to_hz(mel: f64, scale: MelScale) -> f64 {
    match scale {
        MelScale::Htk => 700.0 * (10f64.powf(mel / 2595.0) - 1.0),
        MelScale::Slaney => {
            let min_log_mel = SLANEY_MIN_LOG_HZ / SLANEY_HZ_PER_MEL;
            if mel >= min_log_mel {
                SLANEY_MIN_LOG_HZ * (slaney_logstep() * (mel - min_log_mel)).exp()
            } else {
                SLANEY_HZ_PER_MEL * mel
            }
        }
    }
}

/// `n` frequencies equally spaced in mel from `fmin` to `fmax`, in Hz, as
/// `librosa.mel_frequencies(n, fmin=fmin, fmax=fmax, htk=...)` (numpy `linspace`
/// arithmetic: `start + i * step`, the last one exactly `stop`).
#[must_use]
pub fn mel_frequencies(n: usize, fmin: f64, fmax: f64, scale: MelScale) -> Vec<f64> {
    let lo = hz_to_mel(fmin, scale);
    let hi = hz_to_mel(fmax, scale);
    let step = if n > 1 {
        (hi - lo) / (n - 1) as f64
    } else {
        0.0
    };
    (0..n)
        .map(|i| {
            let mel = if i + 1 == n && n > 1 {
                hi
            } else {
                i as f64 * step + lo
            };
            mel_to_hz(mel, scale)
        })
        .collect()
}

/// Centre frequency of each of the `1 + n_fft / 2` FFT bins, Hz, as
/// `numpy.fft.rfftfreq(n_fft, 1 / sr)` (which librosa's `fft_frequencies` calls).
#[must_use]
pub fn fft_frequencies(sample_rate: f64, n_fft: usize) -> Vec<f64> {
    let val = 1.0 / (n_fft as f64 * (1.0 / sample_rate));
    (0..=n_fft / 2).map(|k| k as f64 * val).collect()
}

/// The mel filterbank, row-major `(n_mels, 1 + n_fft / 2)`, in f64, computed like
/// `librosa.filters.mel(sr=sample_rate, n_fft=n_fft, n_mels=n_mels, fmin=fmin, fmax=fmax,
/// htk=scale == Htk, norm="slaney" | None, dtype=np.float64)`.
///
/// `fmax` must already be resolved (librosa's `None` is `sample_rate / 2`).
#[must_use]
pub fn mel_filterbank(
    sample_rate: f64,
    n_fft: usize,
    n_mels: usize,
    fmin: f64,
    fmax: f64,
    scale: MelScale,
    norm: MelNorm,
) -> Vec<f64> {
    let freqs = fft_frequencies(sample_rate, n_fft);
    let n_bins = freqs.len();
    let edges = mel_frequencies(n_mels + 2, fmin, fmax, scale);
    let mut weights = vec![0.0f64; n_mels * n_bins];
    for (m, row) in weights.chunks_exact_mut(n_bins).enumerate() {
        let (left, centre, right) = (edges[m], edges[m + 1], edges[m + 2]);
        let rise = centre - left;
        let fall = right - centre;
        // librosa: `enorm = 2 / (mel_f[2:] - mel_f[:-2])`, the triangle's unit-area scale.
        let scale_by = match norm {
            MelNorm::Slaney => 2.0 / (right - left),
            MelNorm::None => 1.0,
        };
        for (w, &f) in row.iter_mut().zip(&freqs) {
            let lower = (f - left) / rise;
            let upper = (right - f) / fall;
            *w = 0f64.max(lower.min(upper)) * scale_by;
        }
    }
    weights
}

/// The periodic Hann window of `win_length` points, zero-padded on both sides to `n_fft`
/// points (librosa: `pad_center(get_window("hann", win_length, fftbins=True), size=n_fft)`).
#[must_use]
pub fn hann_window(win_length: usize, n_fft: usize) -> Vec<f64> {
    let mut window = vec![0.0; n_fft];
    let off = n_fft.saturating_sub(win_length) / 2;
    for (j, w) in window.iter_mut().skip(off).take(win_length).enumerate() {
        *w = 0.5 - 0.5 * (2.0 * std::f64::consts::PI * j as f64 / win_length as f64).cos();
    }
    window
}

/// numpy `reflect` padding: the index of the sample that lands at position `i` (which may
/// be negative or past the end) of a signal of `len > 0` samples mirrored about its first
/// and last samples without repeating them, periodically (period `2 (len - 1)`), which is
/// what `np.pad(x, pad, mode="reflect")` gives for any pad width.
fn reflect_index(i: isize, len: usize) -> usize {
    if len == 1 {
        return 0;
    }
    let len = len as isize;
    let period = 2 * (len - 1);
    let m = i.rem_euclid(period);
    (if m >= len { period - m } else { m }) as usize
}

/// The arrays [`MelExtractor::compute_with`] computes beside the mel, from the same STFT:
/// each `Some` buffer is filled, each `None` is not computed.
#[derive(Debug, Default)]
pub struct Spectra<'a> {
    /// The linear (magnitude) spectrogram, `(frames, n_fft / 2 + 1)`.
    pub linear: Option<&'a mut Vec<f32>>,
    /// The frame energy, `(frames,)`.
    pub energy: Option<&'a mut Vec<f32>>,
}

/// The non-zero span of one filter: `weights[offset..offset + len]` multiply the power
/// spectrum bins `start..start + len`.
#[derive(Debug, Clone, Copy)]
struct Band {
    start: usize,
    len: usize,
    offset: usize,
}

/// Computes mel spectrograms for one [`AudioSettings`]; holds the window, the filterbank,
/// the FFT plan and every scratch buffer, so building it once and calling
/// [`compute_into`](Self::compute_into) per clip allocates nothing per frame. `Send`: give
/// each worker thread its own (building one costs a filterbank and an FFT plan, well under
/// a millisecond).
pub struct MelExtractor {
    settings: AudioSettings,
    fmax: f64,
    n_bins: usize,
    /// Full `n_fft`-point window (for [`window`](Self::window)).
    window: Vec<f64>,
    /// Offset of the window's support in the FFT frame.
    win_offset: usize,
    /// Dense filterbank, `(n_mels, n_bins)`.
    filterbank: Vec<f64>,
    bands: Vec<Band>,
    /// Non-zero weights of all bands, back to back, rounded to f32 (as librosa's).
    weights: Vec<f32>,
    /// Bins `used.0..used.1` are the only ones any filter reads.
    used: (usize, usize),
    /// Bins whose power the FFT step computes: `used`, or every bin while a call asks for
    /// the linear spectrogram or the frame energy.
    computed: (usize, usize),
    /// Complex FFT of `n_fft` points, which transforms two real frames at once.
    fft: Arc<dyn Fft<f64>>,
    /// Frame `t` in the real parts, frame `t + 1` in the imaginary parts; transformed in place.
    buf: Vec<Complex<f64>>,
    scratch: Vec<Complex<f64>>,
    /// `|X|^power` of a batch of [`BATCH`] frames, f32 (as librosa's), interleaved:
    /// `power[k * BATCH + lane]` is bin `k` of frame `t0 + lane`.
    power: Vec<f32>,
    /// The batch's band energies, interleaved the same way: `energy[m * BATCH + lane]`.
    energy: Vec<f32>,
}

/// Frames computed together: four complex FFTs of two frames each, then the filterbank and
/// the log over all eight at once, one frame per f32 lane of an AVX register (no horizontal
/// sums, and the loop over a band's bins is paid once per eight frames; without AVX each
/// step is two SSE operations).
const BATCH: usize = 8;

impl fmt::Debug for MelExtractor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MelExtractor")
            .field("settings", &self.settings)
            .field("fmax", &self.fmax)
            .field("n_bins", &self.n_bins)
            .field("used_bins", &self.used)
            .finish_non_exhaustive()
    }
}

impl MelExtractor {
    /// Validates the settings and builds the window, filterbank and FFT plan.
    ///
    /// # Errors
    ///
    /// [`AudioError::InvalidSettings`] when `sample_rate` is 0, `n_fft < 2`,
    /// `win_length` is not in `2..=n_fft`, `hop_length` is 0, `n_mels` is 0, `fmin` is
    /// negative or not finite, `fmax` (or `sample_rate / 2` when `None`) is above
    /// `sample_rate / 2` or not above `fmin`, `power` is not a positive finite number, or
    /// `log_floor` is below 1.2e-38 (the smallest normal f32: the log is computed in f32)
    /// or not finite while `log` is not `none`.
    pub fn new(settings: &AudioSettings) -> Result<Self, AudioError> {
        let fmax = validate(settings)?;
        let n_fft = settings.n_fft;
        let n_bins = n_fft / 2 + 1;
        let filterbank = mel_filterbank(
            f64::from(settings.sample_rate),
            n_fft,
            settings.n_mels,
            settings.fmin,
            fmax,
            settings.mel_scale,
            settings.mel_norm,
        );
        let mut bands = Vec::with_capacity(settings.n_mels);
        let mut weights = Vec::new();
        let mut used = (n_bins, 0);
        for row in filterbank.chunks_exact(n_bins) {
            let first = row.iter().position(|&w| w > 0.0);
            let last = row.iter().rposition(|&w| w > 0.0);
            let band = match (first, last) {
                (Some(a), Some(b)) => {
                    used = (used.0.min(a), used.1.max(b + 1));
                    let band = Band {
                        start: a,
                        len: b + 1 - a,
                        offset: weights.len(),
                    };
                    weights.extend(row[a..=b].iter().map(|&w| w as f32));
                    band
                }
                _ => Band {
                    start: 0,
                    len: 0,
                    offset: weights.len(),
                },
            };
            bands.push(band);
        }
        if used.0 > used.1 {
            used = (0, 0);
        }
        let fft = FftPlanner::<f64>::new().plan_fft_forward(n_fft);
        let scratch = vec![Complex::default(); fft.get_inplace_scratch_len()];
        Ok(Self {
            settings: settings.clone(),
            fmax,
            n_bins,
            window: hann_window(settings.win_length, n_fft),
            win_offset: (n_fft - settings.win_length) / 2,
            filterbank,
            bands,
            weights,
            used,
            computed: used,
            fft,
            buf: vec![Complex::default(); n_fft],
            scratch,
            power: vec![0.0; n_bins * BATCH],
            energy: vec![0.0; settings.n_mels * BATCH],
        })
    }

    /// The settings this extractor was built with.
    #[must_use]
    pub fn settings(&self) -> &AudioSettings {
        &self.settings
    }

    /// The upper filter edge in use, Hz (`fmax`, or `sample_rate / 2` when it is `None`).
    #[must_use]
    pub fn fmax(&self) -> f64 {
        self.fmax
    }

    /// Number of mel bands.
    #[must_use]
    pub fn n_mels(&self) -> usize {
        self.settings.n_mels
    }

    /// Number of FFT bins, `1 + n_fft / 2`.
    #[must_use]
    pub fn n_bins(&self) -> usize {
        self.n_bins
    }

    /// The f64 filterbank, row-major `(n_mels, n_bins)`; equals `librosa.filters.mel(...,
    /// dtype=np.float64)`.
    #[must_use]
    pub fn filterbank(&self) -> &[f64] {
        &self.filterbank
    }

    /// The `n_fft`-point analysis window (periodic Hann of `win_length`, centred).
    #[must_use]
    pub fn window(&self) -> &[f64] {
        &self.window
    }

    /// Indices of the mel bands whose filter is zero on every FFT bin (too many mels for the
    /// FFT size: librosa warns "Empty filters detected"). Their output is 0 before the log
    /// and `log(log_floor)` after it.
    #[must_use]
    pub fn empty_bands(&self) -> Vec<usize> {
        self.bands
            .iter()
            .enumerate()
            .filter(|(_, b)| b.len == 0)
            .map(|(m, _)| m)
            .collect()
    }

    /// Number of frames [`compute`](Self::compute) returns for `n_samples` samples.
    ///
    /// Centred: `1 + n_samples / hop_length` (librosa's `1 + len // hop`), and 0 for no
    /// samples (which `compute` rejects). Not centred: `1 + (n_samples - n_fft) /
    /// hop_length` when `n_samples >= n_fft`, else 0 (which `compute` rejects as too short).
    #[must_use]
    pub fn frames_for(&self, n_samples: usize) -> usize {
        let s = &self.settings;
        if n_samples == 0 {
            0
        } else if s.center {
            1 + n_samples / s.hop_length
        } else if n_samples < s.n_fft {
            0
        } else {
            1 + (n_samples - s.n_fft) / s.hop_length
        }
    }

    /// The mel spectrogram of `samples` (mono, at `sample_rate`), shape `(frames, n_mels)`.
    ///
    /// # Errors
    ///
    /// [`AudioError::EmptyInput`] for no samples, [`AudioError::TooShort`] for fewer than
    /// `n_fft` samples when frames are not centred, [`AudioError::NonFiniteInput`] for a NaN
    /// or infinite sample.
    pub fn compute(&mut self, samples: &[f32]) -> Result<MelSpectrogram, AudioError> {
        let mut data = Vec::new();
        let frames = self.compute_into(samples, &mut data)?;
        Ok(MelSpectrogram {
            frames,
            n_mels: self.settings.n_mels,
            data,
        })
    }

    /// As [`compute`](Self::compute), writing into `out` (cleared first, then `frames *
    /// n_mels` values row-major), so a loop over a dataset reuses one buffer. Returns the
    /// number of frames.
    ///
    /// # Errors
    ///
    /// As [`compute`](Self::compute); `out` is left empty on error.
    pub fn compute_into(
        &mut self,
        samples: &[f32],
        out: &mut Vec<f32>,
    ) -> Result<usize, AudioError> {
        self.compute_with(samples, out, Spectra::default())
    }

    /// As [`compute_into`](Self::compute_into), and from the same STFT the arrays `spectra`
    /// asks for: the linear (magnitude) spectrogram `|X_t[k]|`, row-major `(frames,
    /// n_bins)` for every bin `k` in `0..=n_fft/2` (`np.abs(librosa.stft(...)).T` with the
    /// mel's framing, whatever `power` and `log` are), and the frame energy `sqrt(Σ_k
    /// |X_t[k]|²)` (`np.linalg.norm(np.abs(stft), axis=0)`: FastSpeech 2's `energy`, the L2
    /// norm of the magnitude frame). Each is cleared first; asking for either computes every
    /// bin's power instead of the filters' bins only (about 1.3x the mel's cost at 8 kHz
    /// `fmax`).
    ///
    /// # Errors
    ///
    /// As [`compute`](Self::compute); the outputs are left empty on error.
    pub fn compute_with(
        &mut self,
        samples: &[f32],
        out: &mut Vec<f32>,
        mut spectra: Spectra<'_>,
    ) -> Result<usize, AudioError> {
        out.clear();
        if let Some(v) = spectra.linear.as_deref_mut() {
            v.clear();
        }
        if let Some(v) = spectra.energy.as_deref_mut() {
            v.clear();
        }
        if samples.is_empty() {
            return Err(AudioError::EmptyInput);
        }
        let frames = self.frames_for(samples.len());
        if frames == 0 {
            return Err(AudioError::TooShort {
                samples: samples.len(),
                needed: self.settings.n_fft,
            });
        }
        if !all_finite(samples)
            && let Some(index) = samples.iter().position(|x| !x.is_finite())
        {
            return Err(AudioError::NonFiniteInput {
                index,
                value: samples[index],
            });
        }
        out.resize(frames * self.settings.n_mels, 0.0);
        let full = spectra.linear.is_some() || spectra.energy.is_some();
        self.computed = if full { (0, self.n_bins) } else { self.used };
        if let Some(v) = spectra.linear.as_deref_mut() {
            v.resize(frames * self.n_bins, 0.0);
        }
        if let Some(v) = spectra.energy.as_deref_mut() {
            v.resize(frames, 0.0);
        }
        all_batches(
            self,
            samples,
            out,
            spectra.linear.map(Vec::as_mut_slice),
            spectra.energy.map(Vec::as_mut_slice),
        );
        Ok(frames)
    }

    /// Index in `samples` of the first windowed sample of frame `t` (negative when it
    /// starts in the left padding).
    fn window_start(&self, t: usize) -> isize {
        let s = &self.settings;
        let pad = if s.center { s.n_fft / 2 } else { 0 };
        (t * s.hop_length + self.win_offset) as isize - pad as isize
    }

    /// The windowed samples of frame `a` into the real parts of `self.buf` and of frame `b`
    /// (or zeros) into the imaginary parts, zeros outside the window.
    #[inline(always)]
    fn fill_pair(&mut self, samples: &[f32], a: usize, b: Option<usize>) {
        let win = self.settings.win_length;
        let off = self.win_offset;
        // The FFT works in place, so the zeros around the window go back each time.
        let (head, rest) = self.buf.split_at_mut(off);
        for c in head.iter_mut().chain(&mut rest[win..]) {
            *c = Complex::default();
        }
        let len = samples.len();
        let interior = |start: isize| start >= 0 && start as usize + win <= len;
        let start_a = self.window_start(a);
        let start_b = b.map(|b| self.window_start(b));
        let window = &self.window[off..off + win];
        let dst = &mut self.buf[off..off + win];
        match start_b {
            // The common case: both frames lie inside the signal.
            Some(sb) if interior(start_a) && interior(sb) => {
                let xa = &samples[start_a as usize..start_a as usize + win];
                let xb = &samples[sb as usize..sb as usize + win];
                for (((d, &w), &x), &y) in dst.iter_mut().zip(window).zip(xa).zip(xb) {
                    *d = Complex::new(f64::from(x) * w, f64::from(y) * w);
                }
            }
            _ => {
                let pad_mode = self.settings.pad_mode;
                let sample = |i: isize| -> f64 {
                    let x = if i >= 0 && (i as usize) < len {
                        samples[i as usize]
                    } else {
                        match pad_mode {
                            PadMode::Constant => 0.0,
                            PadMode::Reflect => samples[reflect_index(i, len)],
                        }
                    };
                    f64::from(x)
                };
                for (j, (d, &w)) in dst.iter_mut().zip(window).enumerate() {
                    let re = sample(start_a + j as isize) * w;
                    let im = start_b.map_or(0.0, |sb| sample(sb + j as isize) * w);
                    *d = Complex::new(re, im);
                }
            }
        }
    }

    /// FFT of `self.buf`, split into the two frames' spectra, `|X|²` into lanes `lane` and
    /// `lane + 1` of `self.power` for the bins in use.
    ///
    /// With `z = a + i b` for real frames `a` and `b`, `Z[k] = A[k] + i B[k]`, and since
    /// `A[N-k] = conj(A[k])`: `A[k] = (Z[k] + conj(Z[N-k])) / 2`, `B[k] = (Z[k] -
    /// conj(Z[N-k])) / 2i`. One complex FFT of `N` points costs less than two real ones
    /// (each a complex FFT of `N/2` plus a post-processing pass), and the powers come
    /// straight from `|Z[k] ± conj(Z[N-k])|² / 4`. In f64 the two frames do not disturb each
    /// other: the error a loud frame leaves in a quiet one is ~1e-16 of the loud one.
    ///
    /// The FFT is f64 because its rounding is what an f32 FFT gets wrong (quiet bins next
    /// to loud ones: 3e-4 in log-mel on speech); from here on values are f32, as in librosa
    /// (its spectrum is complex64), which lets the square roots run eight at a time (AVX).
    #[inline(always)]
    fn transform(&mut self, lane: usize) {
        self.fft
            .process_with_scratch(&mut self.buf, &mut self.scratch);
        let n = self.buf.len();
        let (mut a, b) = self.computed;
        if a >= b {
            return;
        }
        let split = |z: Complex<f64>, c: Complex<f64>| {
            let (sr, si) = (z.re + c.re, z.im - c.im);
            let (dr, di) = (z.re - c.re, z.im + c.im);
            (
                ((sr * sr + si * si) * 0.25) as f32,
                ((dr * dr + di * di) * 0.25) as f32,
            )
        };
        if a == 0 {
            // Bin 0 pairs with itself.
            let (pa, pb) = split(self.buf[0], self.buf[0]);
            self.power[lane] = pa;
            self.power[lane + 1] = pb;
            a = 1;
        }
        // Bins a..b against their mirrors n-a down to n-b+1 (all >= 1 since b <= n/2 + 1).
        let mirror = self.buf[n + 1 - b..=n - a].iter().rev();
        let out = self.power[a * BATCH..b * BATCH].chunks_exact_mut(BATCH);
        for ((p, &z), &c) in out.zip(&self.buf[a..b]).zip(mirror) {
            let (pa, pb) = split(z, c);
            p[lane] = pa;
            p[lane + 1] = pb;
        }
    }

    /// The linear spectrogram and energy of the batch's `count` frames from their `|X|²`
    /// (every bin computed), into `linear` (rows of `n_bins`) and `energy`.
    #[inline(always)]
    fn spectra(&self, count: usize, linear: Option<&mut [f32]>, energy: Option<&mut [f32]>) {
        let n_bins = self.n_bins;
        if let Some(linear) = linear {
            for (k, p) in self.power.chunks_exact(BATCH).enumerate().take(n_bins) {
                for (lane, &v) in p.iter().enumerate().take(count) {
                    linear[lane * n_bins + k] = v.sqrt();
                }
            }
        }
        if let Some(energy) = energy {
            // Summed in f64: 513 f32 terms would lose up to ~3e-5 relative.
            let mut sum = [0.0f64; BATCH];
            for p in self.power.chunks_exact(BATCH).take(n_bins) {
                for l in 0..BATCH {
                    sum[l] += f64::from(p[l]);
                }
            }
            for (e, s) in energy.iter_mut().zip(sum).take(count) {
                *e = s.sqrt() as f32;
            }
        }
    }

    /// `|X|²` to `|X|^power` over the batch.
    #[inline(always)]
    fn finish_power(&mut self) {
        let (a, b) = self.used;
        let power = &mut self.power[a * BATCH..b * BATCH];
        let p = self.settings.power;
        if p == 1.0 {
            for s in power.iter_mut() {
                *s = s.sqrt();
            }
        } else if p != 2.0 {
            let half = (p * 0.5) as f32;
            for s in power.iter_mut() {
                *s = s.powf(half);
            }
        }
    }

    /// Filterbank times the batch's power, then the log, into the batch's output rows.
    #[inline(always)]
    fn project(&mut self, rows: &mut [f32]) {
        let n_mels = self.settings.n_mels;
        for (e, band) in self.energy.chunks_exact_mut(BATCH).zip(&self.bands) {
            let w = &self.weights[band.offset..band.offset + band.len];
            let p = &self.power[band.start * BATCH..(band.start + band.len) * BATCH];
            let mut acc = [0.0f32; BATCH];
            for (&w, p) in w.iter().zip(p.chunks_exact(BATCH)) {
                for l in 0..BATCH {
                    acc[l] += w * p[l];
                }
            }
            e.copy_from_slice(&acc);
        }
        // The floor was checked to be a normal f32 in `new`.
        let floor = self.settings.log_floor as f32;
        let scale = match self.settings.log {
            LogKind::None => 0.0,
            LogKind::Ln => 1.0,
            LogKind::Log10 => std::f32::consts::LOG10_E,
        };
        if self.settings.log != LogKind::None {
            // Energies are sums of non-negative terms, so the only non-finite value possible
            // is +inf, which the largest one shows (a max reduction vectorises; `all` with its
            // early exit does not).
            let largest = self
                .energy
                .iter()
                .fold(0.0f32, |m, &e| if e > m { e } else { m });
            if largest.is_finite() {
                // max(e, floor) is a normal positive number: the branch-free log applies.
                for e in &mut self.energy {
                    let x = if *e > floor { *e } else { floor };
                    *e = ln_normal(x) * scale;
                }
            } else {
                // Only for absurd inputs whose band energy overflows f32.
                for e in &mut self.energy {
                    *e = e.max(floor).ln() * scale;
                }
            }
        }
        for (lane, row) in rows.chunks_exact_mut(n_mels).enumerate() {
            for (out, e) in row.iter_mut().zip(self.energy.chunks_exact(BATCH)) {
                *out = e[lane];
            }
        }
    }
}

/// Every batch of [`BATCH`] frames of `samples` into `out` (already `frames * n_mels`
/// long). Compiled twice and picked once per process by `multiversion`: for x86-64 with
/// AVX2 and FMA (eight f32 lanes: the batch's frames side by side in one register, so the
/// square roots, the filterbank and the log run a batch per instruction) and for the
/// baseline target. The helpers are `#[inline(always)]` so they are compiled inside each
/// version; the FFT is rustfft's, which picks its own AVX code at run time.
#[multiversion(targets("x86_64+avx2+fma"))]
fn all_batches(
    ex: &mut MelExtractor,
    samples: &[f32],
    out: &mut [f32],
    mut linear: Option<&mut [f32]>,
    mut energy: Option<&mut [f32]>,
) {
    let n_mels = ex.settings.n_mels;
    let n_bins = ex.n_bins;
    for (batch, rows) in out.chunks_mut(BATCH * n_mels).enumerate() {
        let t0 = batch * BATCH;
        let count = rows.len() / n_mels;
        // Two frames per FFT: frame t as the real part, t + 1 as the imaginary part.
        // Lanes past the last frame keep stale values, whose results are dropped.
        for pair in 0..BATCH / 2 {
            let lane = 2 * pair;
            if lane >= count {
                break;
            }
            let second = (lane + 1 < count).then_some(t0 + lane + 1);
            ex.fill_pair(samples, t0 + lane, second);
            ex.transform(lane);
        }
        if linear.is_some() || energy.is_some() {
            ex.spectra(
                count,
                linear
                    .as_deref_mut()
                    .map(|l| &mut l[t0 * n_bins..(t0 + count) * n_bins]),
                energy.as_deref_mut().map(|e| &mut e[t0..t0 + count]),
            );
        }
        ex.finish_power();
        ex.project(rows);
    }
}

/// Whether no sample is NaN or infinite. A branch-free OR over eight lanes of "exponent
/// bits all ones": it vectorises, where `iter().all(..)` (an early exit per sample) cost a
/// tenth of the whole mel computation.
fn all_finite(x: &[f32]) -> bool {
    const EXP: u32 = 0x7f80_0000;
    let mut bad = [0u32; 8];
    let chunks = x.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for i in 0..8 {
            bad[i] |= u32::from(c[i].to_bits() & EXP == EXP);
        }
    }
    bad.iter().all(|&b| b == 0) && tail.iter().all(|v| v.is_finite())
}

/// 2^23: a small integer `k` or-ed into its mantissa makes the f32 `2^23 + k`.
const TWO_23: f32 = 8_388_608.0;
/// `ln 2` split so that `e * LN2_HI` is exact for any f32 exponent (Cody and Waite): the
/// high part has 16 significant bits, the low part is the rest.
const LN2_HI: f32 = 0.693_145_75;
const LN2_LO: f32 = 1.428_606_8e-6;

/// Natural logarithm of a **normal positive finite** f32, within about one unit in the last
/// place (measured <= 1.5 ulp; the f64 `ln` rounded to f32 is 0.5 ulp): `x = m · 2^e` with
/// `m` in `[√½, √2)`, then `ln m = 2 atanh(s) = 2 (s + s³/3 + ... + s⁹/9)` with `s = (m - 1)
/// / (m + 1)`; `|s| <= 0.1716`, so the first term left out, `2 s¹¹/11`, is below 1e-9. It is
/// branch-free integer and float arithmetic, so the loop over a batch's energies
/// vectorises (four lanes with SSE2); libm's `ln` is a call per value and cost a third as
/// much as the FFT. Other inputs give garbage: callers clamp to a normal floor first.
#[inline(always)]
fn ln_normal(x: f32) -> f32 {
    let bits = x.to_bits();
    // The biased exponent as a float without an int-to-float conversion: 2^23 + k - 2^23.
    let biased = f32::from_bits(TWO_23.to_bits() | (bits >> 23)) - TWO_23;
    let m = f32::from_bits((bits & 0x007f_ffff) | 1f32.to_bits());
    let big = m > std::f32::consts::SQRT_2;
    let m = if big { m * 0.5 } else { m };
    let e = biased - 127.0 + if big { 1.0 } else { 0.0 };
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    // Horner on 1 + s²/3 + s⁴/5 + s⁶/7 + s⁸/9.
    let mut poly = 1.0 / 9.0;
    for k in [7.0, 5.0, 3.0, 1.0] {
        poly = poly * s2 + 1.0 / k;
    }
    e * LN2_HI + (e * LN2_LO + 2.0 * s * poly)
}

/// Checks every rule of [`MelExtractor::new`]; returns the resolved `fmax`.
fn validate(s: &AudioSettings) -> Result<f64, AudioError> {
    use AudioError as E;
    if s.sample_rate == 0 {
        return Err(E::settings(
            "sample_rate",
            s.sample_rate,
            "must be positive",
        ));
    }
    if s.n_fft < 2 {
        return Err(E::settings("n_fft", s.n_fft, "must be at least 2"));
    }
    if s.win_length < 2 || s.win_length > s.n_fft {
        return Err(E::settings(
            "win_length",
            s.win_length,
            format!("must be between 2 and n_fft = {}", s.n_fft),
        ));
    }
    if s.hop_length == 0 {
        return Err(E::settings("hop_length", 0, "must be positive"));
    }
    if s.n_mels == 0 {
        return Err(E::settings("n_mels", 0, "must be positive"));
    }
    let nyquist = f64::from(s.sample_rate) / 2.0;
    if !(s.fmin.is_finite() && s.fmin >= 0.0) {
        return Err(E::settings(
            "fmin",
            s.fmin,
            "must be a finite frequency >= 0 Hz",
        ));
    }
    let fmax = s.fmax.unwrap_or(nyquist);
    if !fmax.is_finite() || fmax > nyquist {
        return Err(E::settings(
            "fmax",
            fmax,
            format!("must not exceed sample_rate / 2 = {nyquist} Hz"),
        ));
    }
    if fmax <= s.fmin {
        return Err(E::settings(
            "fmax",
            fmax,
            format!("must be above fmin = {} Hz", s.fmin),
        ));
    }
    if !(s.power.is_finite() && s.power > 0.0) {
        return Err(E::settings(
            "power",
            s.power,
            "must be positive (1 = magnitude, 2 = power)",
        ));
    }
    // The log runs in f32: the floor must be a normal f32.
    if s.log != LogKind::None
        && !(s.log_floor.is_finite() && s.log_floor >= f64::from(f32::MIN_POSITIVE))
    {
        return Err(E::settings(
            "log_floor",
            s.log_floor,
            "must be at least 1.2e-38 (a normal f32) when a log is taken",
        ));
    }
    Ok(fmax)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn extractor(f: impl FnOnce(&mut AudioSettings)) -> MelExtractor {
        let mut s = AudioSettings::default();
        f(&mut s);
        MelExtractor::new(&s).unwrap()
    }

    #[test]
    fn slaney_scale_known_points() {
        // Linear part: 1000 Hz is mel 15 exactly, 200/3 Hz is mel 1.
        assert!((hz_to_mel(1000.0, MelScale::Slaney) - 15.0).abs() < 1e-14);
        assert!((hz_to_mel(200.0 / 3.0, MelScale::Slaney) - 1.0).abs() < 1e-15);
        // Log part: 6400 Hz is 27 log steps above 1 kHz.
        assert!((hz_to_mel(6400.0, MelScale::Slaney) - 42.0).abs() < 1e-12);
        // HTK: 700 Hz is 2595 log10 2.
        assert!((hz_to_mel(700.0, MelScale::Htk) - 2595.0 * 2f64.log10()).abs() < 1e-12);
    }

    proptest! {
        #[test]
        fn mel_scale_round_trips(hz in 0.0f64..24000.0) {
            for scale in [MelScale::Slaney, MelScale::Htk] {
                let back = mel_to_hz(hz_to_mel(hz, scale), scale);
                prop_assert!((back - hz).abs() <= 1e-9 * hz.max(1.0));
            }
        }

        #[test]
        fn frames_for_matches_compute(
            n in 1usize..6000,
            hop in 1usize..700,
            center in any::<bool>(),
        ) {
            let mut m = extractor(|s| {
                s.n_fft = 512;
                s.win_length = 400;
                s.hop_length = hop;
                s.center = center;
                s.n_mels = 40;
            });
            let x: Vec<f32> = (0..n).map(|i| ((i * 7919) % 101) as f32 / 101.0 - 0.5).collect();
            match m.compute(&x) {
                Ok(spec) => {
                    prop_assert_eq!(spec.frames, m.frames_for(n));
                    prop_assert_eq!(spec.data.len(), spec.frames * 40);
                    prop_assert!(spec.data.iter().all(|v| v.is_finite()));
                }
                Err(AudioError::TooShort { .. }) => {
                    prop_assert!(!center && n < 512);
                    prop_assert_eq!(m.frames_for(n), 0);
                }
                Err(e) => prop_assert!(false, "unexpected error {e}"),
            }
        }
    }

    #[test]
    fn reflect_index_matches_numpy() {
        // np.pad(np.arange(n), (9, 9), mode="reflect") from numpy 2.4, for n = 2, 3, 5.
        let numpy: [(usize, &[usize]); 3] = [
            (
                2,
                &[1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0],
            ),
            (
                3,
                &[
                    1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1,
                ],
            ),
            (
                5,
                &[
                    1, 0, 1, 2, 3, 4, 3, 2, 1, 0, 1, 2, 3, 4, 3, 2, 1, 0, 1, 2, 3, 4, 3,
                ],
            ),
        ];
        for (n, expect) in numpy {
            let got: Vec<usize> = (0..n + 18)
                .map(|p| reflect_index(p as isize - 9, n))
                .collect();
            assert_eq!(got, expect, "n = {n}");
        }
        assert_eq!(reflect_index(-5, 1), 0);
        assert_eq!(reflect_index(7, 1), 0);
    }

    proptest! {
        #[test]
        fn fast_ln_matches_libm(mantissa in 1.0f32..2.0, exp in -126i32..128) {
            let x = mantissa * 2f32.powi(exp);
            prop_assume!(x.is_normal());
            let exact = f64::from(x).ln();
            let ulp = f64::from(f32::EPSILON) * exact.abs().max(f64::from(f32::MIN_POSITIVE));
            let err = (f64::from(ln_normal(x)) - exact).abs();
            prop_assert!(err <= 1.5 * ulp + 1e-9, "{x}: {} vs {exact}", ln_normal(x));
        }
    }

    #[test]
    fn all_finite_finds_every_kind_of_bad_value() {
        for n in [0usize, 1, 7, 8, 9, 33] {
            let x = vec![0.5f32; n];
            assert!(all_finite(&x));
            for i in 0..n {
                for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                    let mut y = x.clone();
                    y[i] = bad;
                    assert!(!all_finite(&y), "n {n} i {i} {bad}");
                }
            }
        }
        assert!(all_finite(&[
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            -0.0,
            1e-45
        ]));
    }

    #[test]
    fn fast_ln_known_values() {
        assert_eq!(ln_normal(1.0), 0.0);
        assert!((ln_normal(std::f32::consts::E) - 1.0).abs() < 2e-7);
        assert!((ln_normal(1e-5) - 1e-5f32.ln()).abs() < 2e-6);
        assert!((ln_normal(f32::MIN_POSITIVE) - f32::MIN_POSITIVE.ln()).abs() < 2e-5);
        assert!((ln_normal(f32::MAX) - f32::MAX.ln()).abs() < 2e-5);
    }

    #[test]
    fn overflowing_power_falls_back_to_libm() {
        // |X|^2 of a full-scale-1e20 signal overflows f32: the log must be huge (or +inf),
        // never NaN or garbage from the bit-level logarithm.
        let mut m = extractor(|s| s.power = 2.0);
        let x = vec![1e20f32; 4096];
        let spec = m.compute(&x).unwrap();
        assert!(spec.data.iter().all(|v| !v.is_nan()));
        assert!(spec.data.iter().any(|&v| v > 80.0), "ln of a huge energy");
    }

    /// The whole recipe of the module docs, written the slow and obvious way: explicit
    /// padding, an O(N²) DFT per frame, the dense filterbank, libm's log.
    fn naive_mel(s: &AudioSettings, x: &[f32]) -> Vec<f32> {
        let n = x.len() as isize;
        let pad = if s.center { (s.n_fft / 2) as isize } else { 0 };
        let sample = |i: isize| -> f64 {
            if (0..n).contains(&i) {
                f64::from(x[i as usize])
            } else {
                match s.pad_mode {
                    PadMode::Constant => 0.0,
                    PadMode::Reflect => f64::from(x[reflect_index(i, x.len())]),
                }
            }
        };
        let m = MelExtractor::new(s).unwrap();
        let window = hann_window(s.win_length, s.n_fft);
        let n_bins = s.n_fft / 2 + 1;
        let mut out = Vec::new();
        for t in 0..m.frames_for(x.len()) {
            let frame: Vec<f64> = (0..s.n_fft)
                .map(|j| sample((t * s.hop_length + j) as isize - pad) * window[j])
                .collect();
            let spec: Vec<f64> = (0..n_bins)
                .map(|k| {
                    let (mut re, mut im) = (0.0, 0.0);
                    for (j, &v) in frame.iter().enumerate() {
                        let phase = -2.0 * std::f64::consts::PI * (j * k) as f64 / s.n_fft as f64;
                        re += v * phase.cos();
                        im += v * phase.sin();
                    }
                    (re * re + im * im).sqrt().powf(s.power)
                })
                .collect();
            for row in m.filterbank().chunks_exact(n_bins) {
                let e: f64 = row.iter().zip(&spec).map(|(w, p)| w * p).sum();
                out.push(match s.log {
                    LogKind::None => e as f32,
                    LogKind::Ln => e.max(s.log_floor).ln() as f32,
                    LogKind::Log10 => e.max(s.log_floor).log10() as f32,
                });
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn matches_a_naive_dft(
            n_fft in 16usize..96,
            win_cut in 0usize..16,
            hop in 1usize..40,
            n in 1usize..400,
            center in any::<bool>(),
            reflect in any::<bool>(),
            power in prop_oneof![Just(1.0), Just(2.0), Just(1.5)],
            log in prop_oneof![Just(LogKind::None), Just(LogKind::Ln), Just(LogKind::Log10)],
            seed in any::<u32>(),
        ) {
            let s = AudioSettings {
                sample_rate: 16000,
                n_fft,
                hop_length: hop,
                win_length: (n_fft - win_cut).max(2),
                n_mels: 6,
                fmax: None,
                power,
                center,
                pad_mode: if reflect { PadMode::Reflect } else { PadMode::Constant },
                log,
                ..AudioSettings::default()
            };
            let mut m = MelExtractor::new(&s).unwrap();
            prop_assume!(m.empty_bands().is_empty());
            let x: Vec<f32> = (0..n)
                .map(|i| {
                    let h = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed);
                    (h >> 8) as f32 / (1u32 << 24) as f32 - 0.5
                })
                .collect();
            let ours = match m.compute(&x) {
                Ok(spec) => spec.data,
                Err(AudioError::TooShort { .. }) => return Ok(()),
                Err(e) => return Err(TestCaseError::fail(e.to_string())),
            };
            let theirs = naive_mel(&s, &x);
            prop_assert_eq!(ours.len(), theirs.len());
            let max = theirs.iter().fold(0.0f32, |a, &b| a.max(b.abs()));
            for (i, (&a, &b)) in ours.iter().zip(&theirs).enumerate() {
                let tol = if log == LogKind::None { 1e-5 * b.abs() + 1e-6 * max } else { 1e-5 };
                prop_assert!((a - b).abs() <= tol, "element {}: {} vs naive {}", i, a, b);
            }
        }
    }

    #[test]
    fn periodic_hann() {
        let w = hann_window(4, 4);
        let expect = [0.0, 0.5, 1.0, 0.5];
        for (a, b) in w.iter().zip(expect) {
            assert!((a - b).abs() < 1e-15, "{w:?}");
        }
        // Centred in a larger frame: (8 - 4) / 2 = 2 zeros on the left.
        let w = hann_window(4, 8);
        assert_eq!(&w[..2], &[0.0, 0.0]);
        assert!((w[4] - 1.0).abs() < 1e-15);
        assert_eq!(&w[6..], &[0.0, 0.0]);
    }

    #[test]
    fn slaney_filters_have_unit_area_in_hz() {
        // A triangle of height 2/(right-left) over [left, right] has area 1; sampled on a
        // fine grid (n_fft large), the sum times the bin width approaches 1.
        let sr = 16000.0;
        let n_fft = 1 << 16;
        let fb = mel_filterbank(
            sr,
            n_fft,
            40,
            0.0,
            8000.0,
            MelScale::Slaney,
            MelNorm::Slaney,
        );
        let bin_hz = sr / n_fft as f64;
        for row in fb.chunks_exact(n_fft / 2 + 1) {
            let area: f64 = row.iter().sum::<f64>() * bin_hz;
            assert!((area - 1.0).abs() < 1e-3, "area {area}");
        }
    }

    #[test]
    fn unnormalised_filters_peak_near_one() {
        let fb = mel_filterbank(
            22050.0,
            4096,
            20,
            0.0,
            11025.0,
            MelScale::Htk,
            MelNorm::None,
        );
        for row in fb.chunks_exact(2049) {
            let peak = row.iter().copied().fold(0.0, f64::max);
            assert!(peak > 0.9 && peak <= 1.0, "peak {peak}");
        }
    }

    #[test]
    fn settings_validation() {
        type Change = fn(&mut AudioSettings);
        let bad: [(&str, Change); 10] = [
            ("sample_rate", |s| s.sample_rate = 0),
            ("n_fft", |s| s.n_fft = 1),
            ("win_length", |s| s.win_length = 2048),
            ("hop_length", |s| s.hop_length = 0),
            ("n_mels", |s| s.n_mels = 0),
            ("fmin", |s| s.fmin = -1.0),
            ("fmax", |s| s.fmax = Some(12000.0)),
            ("fmax", |s| s.fmin = 8000.0),
            ("power", |s| s.power = 0.0),
            ("log_floor", |s| s.log_floor = 0.0),
        ];
        for (field, change) in bad {
            let mut s = AudioSettings::default();
            change(&mut s);
            match MelExtractor::new(&s) {
                Err(AudioError::InvalidSettings { field: f, .. }) => assert_eq!(f, field),
                other => panic!("{field}: expected InvalidSettings, got {other:?}"),
            }
        }
        // No log: a zero floor is fine.
        let mut s = AudioSettings::librosa_melspectrogram();
        s.log_floor = 0.0;
        assert!(MelExtractor::new(&s).is_ok());
        // fmax None resolves to sr/2.
        s.fmax = None;
        assert_eq!(MelExtractor::new(&s).unwrap().fmax(), 11025.0);
        let msg = MelExtractor::new(&AudioSettings {
            hop_length: 0,
            ..AudioSettings::default()
        })
        .unwrap_err()
        .to_string();
        assert_eq!(
            msg,
            "invalid audio settings: `hop_length` = `0`: must be positive"
        );
    }

    #[test]
    fn short_and_empty_input() {
        let mut m = extractor(|s| s.center = false);
        assert!(matches!(m.compute(&[]), Err(AudioError::EmptyInput)));
        assert!(matches!(
            m.compute(&[0.1; 1023]),
            Err(AudioError::TooShort {
                samples: 1023,
                needed: 1024
            })
        ));
        assert_eq!(m.compute(&[0.1; 1024]).unwrap().frames, 1);
        // Centred, even one sample gives a frame (reflect of one sample repeats it).
        let mut m = extractor(|_| {});
        assert_eq!(m.compute(&[0.25]).unwrap().frames, 1);
        let nan = m.compute(&[0.0, f32::NAN]).unwrap_err();
        assert!(matches!(nan, AudioError::NonFiniteInput { index: 1, .. }));
    }

    #[test]
    fn compute_into_reuses_and_clears_the_buffer() {
        let mut m = extractor(|_| {});
        let x: Vec<f32> = (0..5000).map(|i| (i as f32 * 0.01).sin()).collect();
        let mut buf = vec![9.0; 10];
        let frames = m.compute_into(&x, &mut buf).unwrap();
        assert_eq!(buf.len(), frames * 80);
        let first = buf.clone();
        let frames2 = m.compute_into(&x[..3000], &mut buf).unwrap();
        assert_eq!(buf.len(), frames2 * 80);
        m.compute_into(&x, &mut buf).unwrap();
        assert_eq!(buf, first, "state must not leak between calls");
        assert!(m.compute_into(&[], &mut buf).is_err());
        assert!(buf.is_empty());
    }

    #[test]
    fn silence_gives_the_log_floor() {
        let mut m = extractor(|_| {});
        let spec = m.compute(&[0.0; 2048]).unwrap();
        let floor = 1e-5f64.ln() as f32;
        assert!(spec.data.iter().all(|&v| v == floor));
    }

    #[test]
    fn a_tone_lands_in_the_right_band() {
        let mut m = extractor(|s| {
            s.log = LogKind::None;
            s.power = 2.0;
        });
        let f0 = 1000.0;
        let x: Vec<f32> = (0..22050)
            .map(|i| (2.0 * std::f64::consts::PI * f0 * i as f64 / 22050.0).sin() as f32)
            .collect();
        let spec = m.compute(&x).unwrap();
        let row = spec.frame(40).unwrap();
        let best = (0..80).max_by(|&a, &b| row[a].total_cmp(&row[b])).unwrap();
        let centres = mel_frequencies(82, 0.0, 8000.0, MelScale::Slaney);
        assert!(
            (centres[best + 1] - f0).abs() < 60.0,
            "band {best} centred at {} Hz",
            centres[best + 1]
        );
    }

    #[test]
    fn empty_bands_are_reported() {
        let m = extractor(|s| {
            s.n_fft = 64;
            s.win_length = 64;
            s.n_mels = 128;
        });
        assert!(!m.empty_bands().is_empty());
        assert!(extractor(|_| {}).empty_bands().is_empty());
    }

    #[test]
    fn extractor_is_send() {
        fn is_send<T: Send>() {}
        is_send::<MelExtractor>();
    }
}
