//! Fundamental frequency (F0) per frame: YIN, computed exactly as `librosa.yin` 0.11 does,
//! on the mel's frame grid, with a voiced flag.
//!
//! For frame `t` (centred on sample `c_t = t·hop`, or `t·hop + n_fft/2` when the mel is not
//! centred), `y[0..N)` are the `N = frame_length` samples from `c_t - N/2`, zeros outside the
//! signal (`librosa.yin`'s `center=True, pad_mode="constant"`), and
//!
//! ```text
//! r(k)     = Σ_{m=0}^{N-1-k} y[m]·y[m+k]                        autocorrelation, k in 0..=P
//! d(0)     = 0
//! d(k)     = 2·(r(0) - r(k)) - Σ_{m<k} y[m]²                      k in 1..=P
//! d'(k)    = d(k) / ((Σ_{j=1}^{k} d(j)) / k + tiny)               k in p..=P
//! trough   = the first k (from p) that is a local minimum of d' with d'(k) < threshold
//!            (k = p counts when d'(p) < d'(p+1), k = P when d'(P) < d'(P-1));
//!            none: the global minimum of d', and the frame is not voiced
//! period   = k + the vertex of the parabola through d'(k-1), d'(k), d'(k+1) (0 at the ends,
//!            or when it lies more than one lag away)
//! f0[t]    = sample_rate / period
//! ```
//!
//! with `p = floor(sr / fmax)` and `P = min(ceil(sr / fmin), N - 1)`. `voiced[t]` is 1 where a
//! trough under the threshold was found: YIN's own "periodic enough" test, which is what
//! `librosa.yin` uses to pick the period (it returns no flag itself). `f0` has a value on
//! every frame, as librosa's does; use `voiced` to mask or interpolate the rest.
//!
//! Numerics: librosa (numpy 2) computes YIN in float32; this computes it in f64 and returns
//! f32. On the shared LJSpeech clips the two agree within 0.1 % on all but a few frames (a
//! trough within rounding of the threshold); `tests/audio/pitch.rs` holds the figures, and
//! the agreement with `librosa.pyin` on the frames both call voiced.
//!
//! Cost: one real FFT of `2N` points and its inverse per frame (the autocorrelation), the
//! rest linear in `P`: about 4x a mel frame at `N = 2048`.

use std::sync::Arc;

use multiversion::multiversion;

use realfft::num_complex::Complex;
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use serde::{Deserialize, Serialize};

use crate::AudioError;

/// YIN's settings; the defaults are `librosa.yin`'s frame length and threshold with the
/// speech range used by TTS recipes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PitchSettings {
    /// pYIN (`librosa.pyin`: F0 and a voicing decision over the whole clip) or YIN
    /// (`librosa.yin`: per frame, faster, voiced only where a trough is under the threshold).
    pub method: PitchMethod,
    /// Lowest F0 searched, Hz (librosa recommends C2, 65.4 Hz).
    pub fmin: f64,
    /// Highest F0 searched, Hz.
    pub fmax: f64,
    /// Samples per analysis frame (`librosa.yin`'s `frame_length`, 2048).
    pub frame_length: usize,
    /// YIN's absolute threshold on `d'` (`trough_threshold`, 0.1).
    pub threshold: f64,
}

impl Default for PitchSettings {
    fn default() -> Self {
        Self {
            method: PitchMethod::Pyin,
            fmin: 65.0,
            fmax: 1000.0,
            frame_length: 2048,
            threshold: 0.1,
        }
    }
}

/// How F0 is tracked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PitchMethod {
    /// `librosa.pyin` with its defaults.
    #[default]
    Pyin,
    /// `librosa.yin`.
    Yin,
}

/// Computes F0 and the voiced flag per frame; holds the FFT plans and buffers, so one per
/// worker thread allocates nothing per clip once its outputs have grown.
pub struct PitchTracker {
    settings: PitchSettings,
    sample_rate: f64,
    hop: usize,
    /// Offset of frame 0's centre from sample 0.
    centre: usize,
    /// Shortest and longest lag searched, `p` and `P`.
    min_period: usize,
    max_period: usize,
    forward: Arc<dyn RealToComplex<f64>>,
    inverse: Arc<dyn ComplexToReal<f64>>,
    /// The frame, zero-padded to `2N` (no circular wrap in the autocorrelation).
    frame: Vec<f64>,
    spectrum: Vec<Complex<f64>>,
    acf: Vec<f64>,
    scratch_fwd: Vec<Complex<f64>>,
    scratch_inv: Vec<Complex<f64>>,
    /// `y[m]²` for `m < P`.
    squares: Vec<f64>,
    /// `d'` over `p..=P`.
    cmnd: Vec<f64>,
}

impl std::fmt::Debug for PitchTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PitchTracker")
            .field("settings", &self.settings)
            .field("sample_rate", &self.sample_rate)
            .field("hop", &self.hop)
            .field("periods", &(self.min_period..=self.max_period))
            .finish_non_exhaustive()
    }
}

impl PitchTracker {
    /// YIN on the frame grid of a mel with this `hop`, at `sample_rate`: frame `t` is
    /// centred on sample `t·hop + centre` (`centre` is 0 for a centred mel, `n_fft / 2` for
    /// an uncentred one).
    ///
    /// # Errors
    ///
    /// [`AudioError::InvalidSettings`] when `fmin` is not positive, `fmax` is not above
    /// `fmin` or above `sample_rate / 2`, the frame is shorter than 4 samples or the longest
    /// period `sample_rate / fmin` does not leave two lags in the frame, or the threshold
    /// is not positive.
    pub fn new(
        settings: &PitchSettings,
        sample_rate: u32,
        hop: usize,
        centre: usize,
    ) -> Result<Self, AudioError> {
        let s = settings;
        let sr = f64::from(sample_rate);
        if !(s.fmin.is_finite() && s.fmin > 0.0) {
            return Err(AudioError::settings(
                "f0_min",
                s.fmin,
                "give a frequency above 0 Hz",
            ));
        }
        if !(s.fmax.is_finite() && s.fmax > s.fmin && s.fmax <= sr / 2.0) {
            return Err(AudioError::settings(
                "f0_max",
                s.fmax,
                format!(
                    "give a frequency above f0_min ({} Hz) and at most half the sample rate \
                     ({} Hz)",
                    s.fmin,
                    sr / 2.0
                ),
            ));
        }
        if !(s.threshold.is_finite() && s.threshold > 0.0) {
            return Err(AudioError::settings(
                "f0_threshold",
                s.threshold,
                "give a positive number (librosa's default is 0.1)",
            ));
        }
        if hop == 0 {
            return Err(AudioError::settings("hop_length", hop, "must be positive"));
        }
        let n = s.frame_length;
        // `floor`/`ceil` of positive finite ratios below 2^53: exact as integers.
        let min_period = (sr / s.fmax).floor() as usize;
        let max_period = ((sr / s.fmin).ceil() as usize).min(n.saturating_sub(1));
        if n < 4 || min_period < 1 || max_period < min_period + 2 {
            return Err(AudioError::settings(
                "f0_frame_length",
                n,
                format!(
                    "F0 from {} to {} Hz at {sample_rate} Hz searches lags {min_period} to {}, \
                     which need a frame of more samples: raise f0_min or f0_frame_length",
                    s.fmin,
                    s.fmax,
                    (sr / s.fmin).ceil()
                ),
            ));
        }
        let bins = (PYIN_BINS_PER_OCTAVE * (s.fmax / s.fmin).log2()).floor() + 1.0;
        if s.method == PitchMethod::Pyin && 2.0 * bins > f64::from(u16::MAX) {
            return Err(AudioError::settings(
                "f0_max",
                s.fmax,
                format!("pYIN tracks at most 272 octaves; f0_min is {} Hz", s.fmin),
            ));
        }
        let mut planner = RealFftPlanner::<f64>::new();
        let forward = planner.plan_fft_forward(2 * n);
        let inverse = planner.plan_fft_inverse(2 * n);
        Ok(Self {
            settings: *s,
            sample_rate: sr,
            hop,
            centre,
            min_period,
            max_period,
            frame: forward.make_input_vec(),
            spectrum: forward.make_output_vec(),
            acf: inverse.make_output_vec(),
            scratch_fwd: forward.make_scratch_vec(),
            scratch_inv: inverse.make_scratch_vec(),
            forward,
            inverse,
            squares: Vec::with_capacity(max_period),
            cmnd: Vec::with_capacity(max_period + 1),
        })
    }

    /// The settings.
    #[must_use]
    pub fn settings(&self) -> &PitchSettings {
        &self.settings
    }

    /// F0 (Hz) and the voiced flag (1 or 0) of `frames` frames of `samples` into `f0` and
    /// `voiced` (cleared first, then `frames` values each), by the settings' method. Frames
    /// past the signal's end see zeros, like the mel's padding.
    pub fn compute_into(
        &mut self,
        samples: &[f32],
        frames: usize,
        f0: &mut Vec<f32>,
        voiced: &mut Vec<u8>,
    ) {
        f0.clear();
        voiced.clear();
        match self.settings.method {
            PitchMethod::Yin => {
                for t in 0..frames {
                    self.cmnd(samples, t);
                    let (index, found) = self.yin_pick();
                    f0.push((self.sample_rate / self.period(index)) as f32);
                    voiced.push(u8::from(found));
                }
            }
            PitchMethod::Pyin => self.pyin(samples, frames, f0, voiced),
        }
    }

    /// `d'` of frame `t` into `self.cmnd` (lags `p..=P`).
    fn cmnd(&mut self, samples: &[f32], t: usize) {
        let n = self.settings.frame_length;
        let start = (t * self.hop + self.centre) as isize - (n / 2) as isize;
        self.frame.fill(0.0);
        for (j, v) in self.frame[..n].iter_mut().enumerate() {
            let i = start + j as isize;
            if i >= 0
                && let Some(&x) = samples.get(i as usize)
            {
                *v = f64::from(x);
            }
        }
        let (p_min, p_max) = (self.min_period, self.max_period);
        // y[m]² for m < P, before the FFT overwrites `frame`: their running sum is
        // Σ_{m<k} y[m]² while d(k) is formed below.
        self.squares.clear();
        self.squares
            .extend(self.frame[..p_max].iter().map(|x| x * x));
        // r(k) by the Wiener-Khinchin theorem: |FFT|² back through the inverse FFT (2N
        // points, so no lag wraps around); realfft's inverse is unnormalised.
        let ok = self
            .forward
            .process_with_scratch(&mut self.frame, &mut self.spectrum, &mut self.scratch_fwd)
            .is_ok();
        debug_assert!(ok, "buffers are the plan's own sizes");
        for c in &mut self.spectrum {
            *c = Complex::new(c.norm_sqr(), 0.0);
        }
        let ok = self
            .inverse
            .process_with_scratch(&mut self.spectrum, &mut self.acf, &mut self.scratch_inv)
            .is_ok();
        debug_assert!(ok, "buffers are the plan's own sizes");
        let scale = 1.0 / (2 * n) as f64;
        let r0 = self.acf[0] * scale;
        self.cmnd.clear();
        // librosa divides by the cumulative mean plus float32's `tiny`.
        let tiny = f64::from(f32::MIN_POSITIVE);
        let (mut head_energy, mut sum_d) = (0.0f64, 0.0f64);
        for k in 1..=p_max {
            head_energy += self.squares[k - 1];
            let d = 2.0 * (r0 - self.acf[k] * scale) - head_energy;
            sum_d += d;
            if k >= p_min {
                self.cmnd.push(d / (sum_d / k as f64 + tiny));
            }
        }
    }

    /// Whether lag index `i` of `self.cmnd` is a trough (librosa's `localmin`, with its
    /// ends: the first counts when below the second, the last when below the one before).
    fn is_trough(&self, i: usize) -> bool {
        let y = &self.cmnd;
        let last = y.len() - 1;
        if i == 0 {
            y[0] < y[1]
        } else if i == last {
            y[last] < y[last - 1]
        } else {
            y[i] < y[i - 1] && y[i] <= y[i + 1]
        }
    }

    /// YIN's choice: the first trough under the threshold, else the global minimum (the
    /// first of equal ones, as numpy's `argmin`); and whether a trough was under it.
    fn yin_pick(&self) -> (usize, bool) {
        let y = &self.cmnd;
        let threshold = self.settings.threshold;
        let found = (0..y.len()).find(|&i| self.is_trough(i) && y[i] < threshold);
        let index =
            found.unwrap_or_else(|| (0..y.len()).fold(0, |b, i| if y[i] < y[b] { i } else { b }));
        (index, found.is_some())
    }

    /// The period at lag index `i`, refined by the parabola through its neighbours (none
    /// at the ends, nor when its vertex lies more than one lag away).
    fn period(&self, i: usize) -> f64 {
        let y = &self.cmnd;
        let shift = if i == 0 || i + 1 == y.len() {
            0.0
        } else {
            let a = y[i - 1] + y[i + 1] - 2.0 * y[i];
            let b = (y[i + 1] - y[i - 1]) / 2.0;
            if b.abs() >= a.abs() { 0.0 } else { -b / a }
        };
        (self.min_period + i) as f64 + shift
    }

    /// pYIN: per frame, a probability for each trough from a beta prior over thresholds
    /// and a Boltzmann prior over the troughs' order; then the most likely path through
    /// pitch bins (10 cents) and an unvoiced state per bin, by Viterbi. As `librosa.pyin`
    /// with its defaults (beta (2, 18), 100 thresholds, Boltzmann 2, resolution 0.1,
    /// 35.92 octaves/s, switch 0.01, no-trough 0.01), F0 0 where unvoiced.
    fn pyin(&mut self, samples: &[f32], frames: usize, f0: &mut Vec<f32>, voiced: &mut Vec<u8>) {
        let prior = PyinPriors::new();
        let n = self.pyin_bins();
        let width = self.transition_width();
        let mut obs = vec![0.0f64; 2 * n];
        // The observations are made frame by frame as the Viterbi pass reaches them: only
        // its back-pointers (2 bytes per state and frame) are kept for the whole clip.
        let states = viterbi(frames, n, width, |t, log_obs| {
            self.cmnd(samples, t);
            self.observe(&prior, n, &mut obs);
            for (l, &o) in log_obs.iter_mut().zip(&obs) {
                *l = (o + f64::MIN_POSITIVE).ln();
            }
        });
        for s in states {
            if s < n {
                f0.push((self.settings.fmin * ((s as f64) / PYIN_BINS_PER_OCTAVE).exp2()) as f32);
                voiced.push(1);
            } else {
                f0.push(0.0);
                voiced.push(0);
            }
        }
    }

    /// Pitch bins from `fmin` to `fmax`, 10 cents apart.
    fn pyin_bins(&self) -> usize {
        (PYIN_BINS_PER_OCTAVE * (self.settings.fmax / self.settings.fmin).log2()).floor() as usize
            + 1
    }

    /// Width of the pitch-transition triangle, bins: the largest jump in one hop at
    /// 35.92 octaves/s, in semitones rounded half to even (Python's `round`), times ten, plus
    /// one.
    fn transition_width(&self) -> usize {
        let semitones = 35.92 * 12.0 * self.hop as f64 / self.sample_rate;
        semitones.round_ties_even().max(0.0) as usize * 10 + 1
    }

    /// The frame's observation probabilities: `obs[0..n)` the voiced pitch bins, `obs[n..2n)`
    /// the unvoiced ones, `(1 - voiced probability) / n` each.
    fn observe(&self, prior: &PyinPriors, n: usize, obs: &mut [f64]) {
        obs.fill(0.0);
        let y = &self.cmnd;
        let troughs: Vec<usize> = (0..y.len()).filter(|&i| self.is_trough(i)).collect();
        if !troughs.is_empty() {
            let probs = prior.trough_probabilities(troughs.iter().map(|&i| y[i]));
            for (&i, &p) in troughs.iter().zip(&probs) {
                // librosa keeps these in the float32 array of `d'`, and only the non-zero ones.
                let p = f64::from(p as f32);
                if p == 0.0 {
                    continue;
                }
                let f = self.sample_rate / self.period(i);
                let bin = (PYIN_BINS_PER_OCTAVE * (f / self.settings.fmin).log2())
                    .round_ties_even()
                    .max(0.0) as usize;
                // librosa clips to `n` and later overwrites state `n` (the first unvoiced
                // one): a candidate above the top bin is dropped. Later troughs (longer
                // periods) overwrite earlier ones in the same bin, as numpy's assignment.
                if bin < n {
                    obs[bin] = p;
                }
            }
        }
        let voiced: f64 = obs[..n].iter().sum::<f64>().clamp(0.0, 1.0);
        obs[n..].fill((1.0 - voiced) / n as f64);
    }
}

/// pYIN's pitch resolution: 10 bins per semitone.
const PYIN_BINS_PER_OCTAVE: f64 = 120.0;

/// pYIN's priors: the beta(2, 18) mass of each of 100 thresholds, and the Boltzmann
/// parameter 2 over the troughs below a threshold.
struct PyinPriors {
    /// `thresholds[q]` is `q / 100`, `q` in `0..=100` (numpy's `linspace(0, 1, 101)`).
    thresholds: Vec<f64>,
    /// `beta[q]`: the prior mass between thresholds `q` and `q + 1`.
    beta: Vec<f64>,
}

impl PyinPriors {
    const NO_TROUGH: f64 = 0.01;
    const BOLTZMANN: f64 = 2.0;

    fn new() -> Self {
        // numpy's linspace: `arange(101) * 0.01`, the last set to the stop exactly.
        let mut thresholds: Vec<f64> = (0..=100).map(|q| f64::from(q) * 0.01).collect();
        thresholds[100] = 1.0;
        // The regularised incomplete beta I_x(2, 18) in closed form (integer parameters):
        // 1 - (1-x)^19 - 19 x (1-x)^18.
        let cdf = |x: f64| 1.0 - (1.0 - x).powi(19) - 19.0 * x * (1.0 - x).powi(18);
        let beta = thresholds
            .windows(2)
            .map(|w| cdf(w[1]) - cdf(w[0]))
            .collect();
        Self { thresholds, beta }
    }

    /// Each trough's probability from its height `d'` (in lag order).
    fn trough_probabilities(&self, heights: impl Iterator<Item = f64>) -> Vec<f64> {
        let heights: Vec<f64> = heights.collect();
        let mut probs = vec![0.0f64; heights.len()];
        let lambda = Self::BOLTZMANN;
        for (q, &beta) in self.beta.iter().enumerate() {
            let threshold = self.thresholds[q + 1];
            let below = heights.iter().filter(|&&h| h < threshold).count();
            if below == 0 {
                continue;
            }
            // Boltzmann pmf over the position among the troughs below the threshold.
            let norm = (1.0 - (-lambda).exp()) / (1.0 - (-lambda * below as f64).exp());
            let mut position = 0usize;
            for (p, &h) in probs.iter_mut().zip(&heights) {
                if h < threshold {
                    *p += norm * (-lambda * position as f64).exp() * beta;
                    position += 1;
                }
            }
        }
        // The first global minimum takes the mass of the thresholds at or under it.
        let global = (0..heights.len()).fold(0, |b, i| if heights[i] < heights[b] { i } else { b });
        let under = self.thresholds[1..]
            .iter()
            .filter(|&&thr| heights[global].partial_cmp(&thr) != Some(std::cmp::Ordering::Less))
            .count();
        probs[global] += Self::NO_TROUGH * self.beta[..under].iter().sum::<f64>();
        probs
    }
}

/// One source offset of the Viterbi step for a run of targets: source `first + k` (value
/// `src[k]`, transition `trans[k]`) replaces target `k`'s best when strictly better.
/// Branch-free, so that it vectorises across targets; compiled for AVX2 as well and picked
/// at run time, as the mel's batch loop.
#[multiversion(targets("x86_64+avx2+fma"))]
fn offer_band(best_v: &mut [f64], best_k: &mut [u32], src: &[f64], trans: &[f64], first: u32) {
    for (k, (((bv, bk), &v), &tr)) in best_v
        .iter_mut()
        .zip(best_k.iter_mut())
        .zip(src)
        .zip(trans)
        .enumerate()
    {
        let c = v + tr;
        let better = c > *bv;
        *bv = if better { c } else { *bv };
        *bk = if better { first + k as u32 } else { *bk };
    }
}

/// The most likely state path through `frames` frames of `2n` states (`n` voiced pitch
/// bins, then `n` unvoiced), as `librosa.sequence.viterbi` on pyin's transition matrix:
/// within each voicing, a triangle of `width` bins around the source bin, normalised per
/// source row; between voicings, the same times 0.01 (staying, 0.99). Everything outside
/// the triangle has probability 0, whose log is `ln(tiny)`: those sources are taken from
/// prefix and suffix maxima, so a target costs its band, not all `2n` sources, with the
/// same result and the same ties (the lowest source index wins, as numpy's `argmax`).
fn viterbi(
    frames: usize,
    n: usize,
    width: usize,
    mut observe: impl FnMut(usize, &mut [f64]),
) -> Vec<usize> {
    let tiny = f64::MIN_POSITIVE;
    let half = width / 2;
    let states = 2 * n;
    if frames == 0 {
        return Vec::new();
    }
    // The triangle (scipy's symmetric `triang(width)`, width odd): (half+1-|d|)/(half+1).
    let tri = |d: usize| (half + 1 - d) as f64 / (half + 1) as f64;
    // Row sums of the band of each source bin (cut at the ends).
    let row_sum: Vec<f64> = (0..n)
        .map(|i| {
            (i.saturating_sub(half)..(i + half + 1).min(n))
                .map(|j| tri(i.abs_diff(j)))
                .sum()
        })
        .collect();
    // ln(switch · local + tiny) into target bin `j` from source bin `j + d - half` (`d` in
    // `0..width`), switching voicing or staying: `into[stay][d * n + j]` (-inf where the
    // source is outside the bins), laid out by offset so that one offset is a contiguous
    // run over every target; computed once (a logarithm per source and target each frame
    // was the pass's whole cost).
    let mut into = [
        vec![f64::NEG_INFINITY; n * width],
        vec![f64::NEG_INFINITY; n * width],
    ];
    for d in 0..width {
        for j in 0..n {
            let Some(i) = (j + d).checked_sub(half).filter(|&i| i < n) else {
                continue;
            };
            let local = tri(d.abs_diff(half)) / row_sum[i];
            into[0][d * n + j] = (0.01 * local + tiny).ln();
            into[1][d * n + j] = (0.99 * local + tiny).ln();
        }
    }
    let log_zero = tiny.ln();
    let log_init = (1.0 / states as f64 + tiny).ln();
    let mut log_obs = vec![0.0f64; states];
    observe(0, &mut log_obs);
    let mut value: Vec<f64> = log_obs.iter().map(|&o| o + log_init).collect();
    let mut next = vec![0.0f64; states];
    let mut ptr = vec![0u16; frames * states];
    // Prefix and suffix maxima of the previous values, per voicing block, with their first
    // index.
    let mut prefix = vec![(f64::NEG_INFINITY, 0usize); states];
    let mut suffix = vec![(f64::NEG_INFINITY, 0usize); states];
    // The best source so far of each target bin of one voicing block.
    let mut best_v = vec![f64::NEG_INFINITY; n];
    let mut best_k = vec![0u32; n];
    for t in 1..frames {
        observe(t, &mut log_obs);
        for block in 0..2 {
            let base = block * n;
            let mut best = (f64::NEG_INFINITY, base);
            for i in 0..n {
                if value[base + i] > best.0 {
                    best = (value[base + i], base + i);
                }
                prefix[base + i] = best;
            }
            let mut best = (f64::NEG_INFINITY, base + n - 1);
            for i in (0..n).rev() {
                if value[base + i] >= best.0 {
                    best = (value[base + i], base + i);
                }
                suffix[base + i] = best;
            }
        }
        for to_block in 0..2 {
            best_v.fill(f64::NEG_INFINITY);
            best_k.fill(0);
            // Sources in index order, a strictly better one replacing the best: numpy's
            // first argmax. Per source block: those below the band, the band, those above.
            for block in 0..2 {
                let base = block * n;
                let offer_outside =
                    |best_v: &mut [f64], best_k: &mut [u32], j: usize, at: (f64, usize)| {
                        let v = at.0 + log_zero;
                        if v > best_v[j] {
                            best_v[j] = v;
                            best_k[j] = at.1 as u32;
                        }
                    };
                for j in half + 1..n {
                    offer_outside(&mut best_v, &mut best_k, j, prefix[base + j - half - 1]);
                }
                let tab = &into[usize::from(block == to_block)];
                for d in 0..width {
                    // Targets whose source `j + d - half` is a bin.
                    let (lo, hi) = (half.saturating_sub(d), (n + half).saturating_sub(d).min(n));
                    if lo >= hi {
                        continue;
                    }
                    let src = &value[base + lo + d - half..base + hi + d - half];
                    let trans = &tab[d * n + lo..d * n + hi];
                    let first = (base + lo + d - half) as u32;
                    offer_band(&mut best_v[lo..hi], &mut best_k[lo..hi], src, trans, first);
                }
                for j in 0..n.saturating_sub(half + 1) {
                    offer_outside(&mut best_v, &mut best_k, j, suffix[base + j + half + 1]);
                }
            }
            let to = to_block * n;
            for j in 0..n {
                next[to + j] = log_obs[to + j] + best_v[j];
                ptr[t * states + to + j] = u16::try_from(best_k[j]).unwrap_or(u16::MAX);
            }
        }
        std::mem::swap(&mut value, &mut next);
    }
    let mut path = vec![0usize; frames];
    path[frames - 1] = (0..states).fold(0, |b, s| if value[s] > value[b] { s } else { b });
    for t in (0..frames - 1).rev() {
        path[t] = usize::from(ptr[(t + 1) * states + path[t + 1]]);
    }
    path
}
