//! Utilisation analysis: how much of the time the GPU works, how it idles, and in what
//! pattern.
//!
//! Input is one GPU's utilisation in percent, sampled at a fixed interval (the readers
//! derive it from the timestamps with [`sampling_interval`]).
//!
//! # Figures
//! - `idle_fraction`: share of samples below [`IDLE_UTIL_PCT`];
//! - `busy_fraction`: share of samples at or above [`BUSY_UTIL_PCT`];
//! - idle gaps: maximal runs of consecutive idle samples; a run of `k` samples lasts
//!   `k × interval` seconds (a run cut by the start or end of the log counts with the part
//!   that was seen);
//! - `swing`: p95 - p5 in percentage points;
//! - the dominant period of the training phase from [`detect_period`], in seconds; none
//!   when that phase is idle (an idle GPU's 0/1 % readings are noise, not a cycle).
//!
//! # Job start and end
//! A log usually begins with the job starting up (0 % while the CUDA context, the data
//! and the model load) and often ends with the minutes after training stopped. The
//! leading and the trailing stretch of idle samples (below [`IDLE_UTIL_PCT`]; idle for at
//! least [`EDGE_IDLE_SHARE`] of it, with fewer than [`TRAINING_MIN_SAMPLES`] warm-up
//! blips in it) are these edges when each is longer than every idle gap between them (a GPU sampled from the idle half
//! of its own cycle has no start-up edge): they are counted in [`UtilAnalysis::phase`] and left out of the verdict and the period,
//! which judge the training phase between them. With fewer than [`TRAINING_MIN_SAMPLES`]
//! samples between the edges (or none: a GPU idle throughout), nothing is left out. The
//! other figures (`summary`, fractions, `idle_gaps`) describe the whole log.
//!
//! # Phases
//! An idle stretch of at least [`PHASE_BREAK_S`] (and two samples) between busy ones is a
//! break between phases of work (evaluation on the CPU, a restart, another job), not a
//! stall of the training steps. Breaks are counted in [`Phase::breaks`] and left out of
//! the training phase's figures and verdict, which judge the busy phases together; they
//! do not stop an edge from being the job's start or end; with breaks, the period is that
//! of the longest phase.
//!
//! # Verdict of the training phase (first rule that holds)
//! 1. `idle`: p95 < [`IDLE_P95_UTIL_PCT`]: the GPU is idle at least 95 % of the time.
//!    (Every figure in these rules is the training phase's.)
//! 2. `oscillating`: a significant period (see [`crate::periodicity`]) **and**
//!    swing >= [`SWING_LARGE_PP`]: the GPU alternates between work and waiting in a cycle,
//!    the signature of a data pipeline that delivers in bursts (e.g. too few workers).
//! 3. `bursty`: no period, but at least [`BURSTY_MIN_GAPS`] idle gaps covering at least
//!    [`BURSTY_IDLE_FRACTION`] of the time, **and** swing >= [`SWING_LARGE_PP`]: irregular
//!    stalls (storage hiccups, garbage collection, uneven batch sizes). With fewer than
//!    [`PERIOD_MIN_CYCLES`] gaps evenly spaced (within [`CYCLE_SPACING_SPREAD`]),
//!    `too_short`: a cycle of their spacing could not show yet, so irregular and periodic
//!    cannot be told apart.
//! 4. `idle`: mean < [`IDLE_UTIL_PCT`]: below the idle level on average, with neither a
//!    cycle nor bursts (isolated readings of 16-32 % in an idle log are not work).
//! 5. `starved`: mean < [`STARVED_MEAN_UTIL_PCT`]: steadily under-used, e.g. a model too
//!    small for the GPU or a pipeline that is slow but even.
//! 6. `stable`: well fed.
//!
//! ```
//! use gpufeed_stats::util::{analyze_util, UtilVerdict};
//! let square: Vec<f64> = (0..600).map(|i| if i % 15 < 7 { 40.0 } else { 2.0 }).collect();
//! let a = analyze_util(&square, 0.1).unwrap();
//! assert_eq!(a.verdict, UtilVerdict::Oscillating);
//! assert!((a.period_s.unwrap() - 1.5).abs() < 0.05);
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::periodicity::{Periodicity, detect_period};
use crate::summary::{Summary, percentile_sorted, summarize};
use crate::thresholds::{
    BURSTY_IDLE_FRACTION, BURSTY_MIN_GAPS, BUSY_UTIL_PCT, CYCLE_SPACING_SPREAD, EDGE_IDLE_SHARE,
    IDLE_P95_UTIL_PCT, IDLE_UTIL_PCT, PERIOD_MIN_CYCLES, PHASE_BREAK_S, STARVED_MEAN_UTIL_PCT,
    SWING_LARGE_PP, TRAINING_MIN_SAMPLES,
};

/// What the utilisation pattern says about the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum UtilVerdict {
    /// Well fed.
    Stable,
    /// Steadily low utilisation.
    Starved,
    /// Utilisation swings in a cycle.
    Oscillating,
    /// Irregular idle gaps, no cycle.
    Bursty,
    /// The GPU hardly works at all.
    Idle,
    /// Stalls, but too few to tell a cycle from irregular ones: fewer than
    /// [`PERIOD_MIN_CYCLES`] idle gaps, evenly spaced, and no period; record longer.
    #[serde(rename = "too_short")]
    TooShort,
}

impl UtilVerdict {
    /// The verdict as it appears in JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stable => "stable",
            Self::Starved => "starved",
            Self::Oscillating => "oscillating",
            Self::Bursty => "bursty",
            Self::Idle => "idle",
            Self::TooShort => "too_short",
        }
    }
}

impl std::fmt::Display for UtilVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Idle gaps: runs of consecutive samples below the idle level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdleGaps {
    /// Number of gaps.
    pub count: usize,
    /// Mean gap length in seconds (0 when there is none).
    pub mean_s: f64,
    /// Longest gap in seconds (0 when there is none).
    pub max_s: f64,
}

/// Analysis of one GPU's utilisation series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UtilAnalysis {
    /// Summary of the percentages.
    pub summary: Summary,
    /// Sampling interval in seconds used to turn samples into time.
    pub interval_s: f64,
    /// Share of samples below [`IDLE_UTIL_PCT`].
    pub idle_fraction: f64,
    /// Share of samples at or above [`BUSY_UTIL_PCT`].
    pub busy_fraction: f64,
    /// p95 - p5 of the training phase, percentage points.
    pub swing: f64,
    /// Idle gaps.
    pub idle_gaps: IdleGaps,
    /// The training phase the verdict judges, and the job's idle edges left out.
    pub phase: Phase,
    /// The dominant cycle of the training phase, in samples.
    pub period: Option<Periodicity>,
    /// The dominant cycle in seconds (`period × interval_s`).
    pub period_s: Option<f64>,
    /// The verdict (see the module docs for the rules).
    pub verdict: UtilVerdict,
}

/// The training phase of a log: the samples between the job's idle start and end (see
/// the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Phase {
    /// Idle samples at the start left out (the job starting up).
    pub idle_start: usize,
    /// Idle samples at the end left out (after training stopped).
    pub idle_end: usize,
    /// Summary of the training phase's samples.
    pub summary: Summary,
    /// Share of the training phase's samples below [`IDLE_UTIL_PCT`].
    pub idle_fraction: f64,
    /// Idle gaps inside the training phase (breaks between phases not included).
    pub idle_gaps: IdleGaps,
    /// Idle stretches of at least [`PHASE_BREAK_S`] inside the training phase: breaks
    /// between phases, left out of its figures.
    pub breaks: IdleGaps,
}

/// The first and one-past-last sample of the training phase of `values`: the leading and
/// trailing runs below [`IDLE_UTIL_PCT`] left out, when at least [`TRAINING_MIN_SAMPLES`]
/// samples remain between them and each run is longer than every idle gap between them;
/// otherwise the whole series (or the side whose run is no longer than a gap inside).
///
/// ```
/// let v = [0.0, 0.0, 50.0, 60.0, 55.0, 52.0, 58.0, 61.0, 49.0, 57.0, 60.0, 53.0, 0.0];
/// assert_eq!(gpufeed_stats::util::training_phase(&v), 2..12);
/// assert_eq!(gpufeed_stats::util::training_phase(&[0.0, 50.0, 0.0]), 0..3);
/// ```
#[must_use]
pub fn training_phase(values: &[f64]) -> std::ops::Range<usize> {
    training_phase_within(values, usize::MAX)
}

/// [`training_phase`], where idle runs of `break_len` samples or more inside are breaks
/// between phases: an edge need only be longer than the other idle gaps.
fn training_phase_within(values: &[f64], break_len: usize) -> std::ops::Range<usize> {
    let (Some(s), Some(e)) = (edge(values.iter()), edge(values.iter().rev())) else {
        return 0..values.len();
    };
    let e = values.len() - e;
    if s >= e || ((e - s) as f64) < TRAINING_MIN_SAMPLES {
        return 0..values.len();
    }
    // An edge is the job's start or end only when it is longer than every idle gap inside:
    // a GPU that idles a second in every cycle of its training and happens to be sampled
    // from (or to) one of those idle seconds has no start-up edge, only a cycle.
    let mut longest_inside = 0;
    let mut run = 0;
    for v in values[s..e].iter().chain(std::iter::once(&f64::INFINITY)) {
        if *v < IDLE_UTIL_PCT {
            run += 1;
        } else {
            // A run is judged whole: one of `break_len` or more is a break, not a gap.
            if run < break_len {
                longest_inside = longest_inside.max(run);
            }
            run = 0;
        }
    }
    let first = if s > longest_inside { s } else { 0 };
    let last = if values.len() - e > longest_inside {
        e
    } else {
        values.len()
    };
    first..last
}

/// The length of the idle edge at the start of `values` (its end, given reversed): the
/// longest prefix that ends where a non-idle run begins, is idle for at least
/// [`EDGE_IDLE_SHARE`] of its samples and holds fewer than [`TRAINING_MIN_SAMPLES`]
/// non-idle ones (a start-up's warm-up blips: a context created, a first kernel, a
/// cuDNN benchmark). `None` when no sample is non-idle.
fn edge<'a>(values: impl Iterator<Item = &'a f64>) -> Option<usize> {
    let mut best = None;
    let (mut busy, mut prev_idle) = (0usize, true);
    for (i, v) in values.enumerate() {
        let idle = *v < IDLE_UTIL_PCT;
        if !idle && prev_idle {
            // A non-idle run begins at `i`: the prefix before it is a candidate.
            if (busy as f64) >= TRAINING_MIN_SAMPLES {
                break;
            }
            if (i - busy) as f64 >= EDGE_IDLE_SHARE * i as f64 {
                best = Some(i);
            }
        }
        busy += usize::from(!idle);
        prev_idle = idle;
    }
    best
}

/// Median of the positive differences between consecutive timestamps: the sampling
/// interval of a log, robust to a paused logger or a clock step. When most consecutive
/// samples share their timestamp (a clock coarser than the sampling: whole seconds over
/// samples 5 a second), the median is divided by the samples per distinct timestamp.
/// `None` with fewer than two timestamps or no positive difference.
///
/// ```
/// use gpufeed_stats::util::sampling_interval;
/// assert_eq!(sampling_interval(&[0.0, 1.0, 2.0, 7.0, 8.0]), Some(1.0));
/// // Eight samples under two whole seconds: 0.25 s apart.
/// let coarse = [27.0, 27.0, 28.0, 28.0, 28.0, 28.0, 28.0, 28.0];
/// assert_eq!(sampling_interval(&coarse), Some(0.25));
/// ```
#[must_use]
pub fn sampling_interval(timestamps: &[f64]) -> Option<f64> {
    let mut diffs: Vec<f64> = timestamps
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 0.0)
        .collect();
    if diffs.is_empty() {
        return None;
    }
    let ties = timestamps.windows(2).filter(|w| w[1] == w[0]).count();
    diffs.sort_unstable_by(f64::total_cmp);
    let median = percentile_sorted(&diffs, 0.5);
    Some(if ties > diffs.len() {
        median * (diffs.len() + 1) as f64 / timestamps.len() as f64
    } else {
        median
    })
}

/// Idle gaps of `values` at the given idle level.
#[must_use]
pub fn idle_gaps(values: &[f64], idle_below: f64, interval_s: f64) -> IdleGaps {
    let mut count = 0usize;
    let mut total = 0usize;
    let mut longest = 0usize;
    let mut run = 0usize;
    for &v in values.iter().chain(std::iter::once(&f64::INFINITY)) {
        if v < idle_below {
            run += 1;
        } else if run > 0 {
            count += 1;
            total += run;
            longest = longest.max(run);
            run = 0;
        }
    }
    IdleGaps {
        count,
        mean_s: if count == 0 {
            0.0
        } else {
            total as f64 / count as f64 * interval_s
        },
        max_s: longest as f64 * interval_s,
    }
}

/// Whether the idle gaps of `values` start at even spacings (each within
/// [`CYCLE_SPACING_SPREAD`] of their mean): few gaps spaced so could be a cycle not yet
/// long enough to show; unevenly spaced ones are irregular however few.
fn evenly_spaced(values: &[f64]) -> bool {
    let starts: Vec<usize> = idle_gap_spans(values, IDLE_UTIL_PCT)
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    let spacings: Vec<f64> = starts.windows(2).map(|w| (w[1] - w[0]) as f64).collect();
    if spacings.is_empty() {
        return true;
    }
    let mean = spacings.iter().sum::<f64>() / spacings.len() as f64;
    spacings
        .iter()
        .all(|d| (d - mean).abs() <= CYCLE_SPACING_SPREAD * mean)
}

/// The idle gaps of `values` as `(first sample, number of samples)`, in order: the same
/// runs that [`idle_gaps`] counts, for plots that mark them. A run cut by the start or the
/// end of the series is included with the part that was seen.
///
/// ```
/// let spans = gpufeed_stats::util::idle_gap_spans(&[0.0, 50.0, 1.0, 2.0, 60.0], 10.0);
/// assert_eq!(spans, vec![(0, 1), (2, 2)]);
/// ```
#[must_use]
pub fn idle_gap_spans(values: &[f64], idle_below: f64) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = None;
    for (i, &v) in values.iter().enumerate() {
        match (v < idle_below, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push((s, i - s));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, values.len() - s));
    }
    spans
}

/// Samples an idle run needs to be a break between phases: [`PHASE_BREAK_S`] at this
/// interval, and at least two (one reading is no stretch).
fn phase_break_samples(interval_s: f64) -> usize {
    if interval_s > 0.0 && interval_s.is_finite() {
        ((PHASE_BREAK_S / interval_s).ceil() as usize).max(2)
    } else {
        usize::MAX
    }
}

/// `phase` without its idle runs of `break_len` samples or more between busy ones: the
/// samples left, the breaks (timed at `interval_s`), and the longest stretch between
/// breaks (its range in `phase`).
fn without_breaks(
    phase: &[f64],
    break_len: usize,
    interval_s: f64,
) -> (Vec<f64>, IdleGaps, std::ops::Range<usize>) {
    let spans: Vec<(usize, usize)> = idle_gap_spans(phase, IDLE_UTIL_PCT)
        .into_iter()
        // Between busy stretches only: an idle run at either end of the phase is an edge
        // (or the whole of an idle log), not a break.
        .filter(|&(start, len)| len >= break_len && start > 0 && start + len < phase.len())
        .collect();
    let mut kept = Vec::with_capacity(phase.len());
    let (mut at, mut longest) = (0, 0..0);
    for &(start, len) in spans.iter().chain(std::iter::once(&(phase.len(), 0))) {
        kept.extend_from_slice(&phase[at..start]);
        if start - at > longest.len() {
            longest = at..start;
        }
        at = start + len;
    }
    let total: usize = spans.iter().map(|s| s.1).sum();
    let breaks = IdleGaps {
        count: spans.len(),
        mean_s: if spans.is_empty() {
            0.0
        } else {
            total as f64 / spans.len() as f64 * interval_s
        },
        max_s: spans.iter().map(|s| s.1).max().unwrap_or(0) as f64 * interval_s,
    };
    (kept, breaks, longest)
}

/// Analyses one GPU's utilisation (percent) sampled every `interval_s` seconds.
/// `None` for an empty series.
#[must_use]
pub fn analyze_util(values: &[f64], interval_s: f64) -> Option<UtilAnalysis> {
    let summary = summarize(values)?;
    let n = values.len() as f64;
    let idle_fraction = values.iter().filter(|v| **v < IDLE_UTIL_PCT).count() as f64 / n;
    let busy_fraction = values.iter().filter(|v| **v >= BUSY_UTIL_PCT).count() as f64 / n;
    let gaps = idle_gaps(values, IDLE_UTIL_PCT, interval_s);
    let break_len = phase_break_samples(interval_s);
    let range = training_phase_within(values, break_len);
    let (training, breaks, longest) = without_breaks(&values[range.clone()], break_len, interval_s);
    let phase_summary = summarize(&training)?;
    let phase_idle =
        training.iter().filter(|v| **v < IDLE_UTIL_PCT).count() as f64 / training.len() as f64;
    let phase_gaps = idle_gaps(&training, IDLE_UTIL_PCT, interval_s);
    let idle = phase_summary.p95 < IDLE_P95_UTIL_PCT;
    // An idle GPU's readings are 0/1 % noise: any "cycle" in them means nothing. Across
    // a break the series is not one signal: the longest phase carries the cycle.
    let period = if idle {
        None
    } else if breaks.count > 0 {
        detect_period(&values[range.start + longest.start..range.start + longest.end])
    } else {
        detect_period(&training)
    };
    let swing = phase_summary.swing();
    let large_swing = swing >= SWING_LARGE_PP;
    let verdict = if idle {
        UtilVerdict::Idle
    } else if period.is_some() && large_swing {
        UtilVerdict::Oscillating
    } else if large_swing
        && phase_gaps.count as f64 >= BURSTY_MIN_GAPS
        && phase_idle >= BURSTY_IDLE_FRACTION
    {
        if (phase_gaps.count as f64) < PERIOD_MIN_CYCLES && evenly_spaced(&training) {
            UtilVerdict::TooShort
        } else {
            UtilVerdict::Bursty
        }
    } else if phase_summary.mean < IDLE_UTIL_PCT {
        // Below the idle level on average, with no cycle and no bursts: a few isolated
        // readings in an idle log, not a GPU steadily at work.
        UtilVerdict::Idle
    } else if phase_summary.mean < STARVED_MEAN_UTIL_PCT {
        UtilVerdict::Starved
    } else {
        UtilVerdict::Stable
    };
    Some(UtilAnalysis {
        summary,
        interval_s,
        idle_fraction,
        busy_fraction,
        swing,
        idle_gaps: gaps,
        phase: Phase {
            idle_start: range.start,
            idle_end: values.len() - range.end,
            summary: phase_summary,
            idle_fraction: phase_idle,
            idle_gaps: phase_gaps,
            breaks,
        },
        period,
        period_s: period.map(|p| p.period * interval_s),
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_edge_no_longer_than_the_gaps_inside_is_part_of_the_cycle() {
        // Sampled from the idle half of a 95/5 % cycle: the short idle edges are the
        // cycle's, not a job starting or ending.
        let cycle: Vec<f64> = (0..48)
            .map(|i| if (i + 2) % 12 < 6 { 5.0 } else { 95.0 })
            .collect();
        assert_eq!(training_phase(&cycle), 0..48);
        // A start-up far longer than the cycle's gaps is still left out.
        let mut job = vec![0.0; 30];
        job.extend(&cycle[4..40]);
        assert_eq!(training_phase(&job), 30..job.len());
    }
    use crate::testutil::Rng;

    fn noisy(base: impl Fn(usize) -> f64, n: usize, sd: f64, seed: u64) -> Vec<f64> {
        let mut g = Rng::new(seed);
        (0..n)
            .map(|i| (base(i) + sd * g.normal()).clamp(0.0, 100.0))
            .collect()
    }

    #[test]
    fn issue_square_wave_is_oscillating() {
        // 2 % / 40 %, 1.5 s period, sampled every 100 ms, with noise: the acceptance case.
        for seed in 0..5 {
            let v = noisy(|i| if (i % 15) < 8 { 40.0 } else { 2.0 }, 600, 2.0, seed);
            let a = analyze_util(&v, 0.1).unwrap();
            assert_eq!(a.verdict, UtilVerdict::Oscillating, "seed {seed}: {a:?}");
            let p = a.period_s.unwrap();
            assert!((p - 1.5).abs() <= 0.15, "seed {seed}: period {p}");
            assert!(a.idle_gaps.count >= 35, "{:?}", a.idle_gaps);
            assert!((a.idle_fraction - 7.0 / 15.0).abs() < 0.1);
        }
    }

    #[test]
    fn well_fed_gpu_is_stable() {
        let v = noisy(|_| 95.0, 600, 2.0, 1);
        let a = analyze_util(&v, 0.1).unwrap();
        assert_eq!(a.verdict, UtilVerdict::Stable);
        assert!(a.busy_fraction > 0.99);
        assert_eq!(a.idle_gaps.count, 0);
    }

    #[test]
    fn steady_low_is_starved() {
        let a = analyze_util(&noisy(|_| 30.0, 600, 3.0, 2), 0.1).unwrap();
        assert_eq!(a.verdict, UtilVerdict::Starved);
        assert_eq!(a.idle_fraction, 0.0);
    }

    #[test]
    fn near_zero_is_idle() {
        let a = analyze_util(&noisy(|_| 1.0, 300, 1.0, 3), 1.0).unwrap();
        assert_eq!(a.verdict, UtilVerdict::Idle);
    }

    #[test]
    fn irregular_gaps_are_bursty() {
        // Busy at 90 % with idle gaps of random length at random places.
        let mut g = Rng::new(5);
        let mut v = Vec::new();
        while v.len() < 1200 {
            let busy = 20 + (g.uniform() * 200.0) as usize;
            let idle = 3 + (g.uniform() * 40.0) as usize;
            v.extend(std::iter::repeat_n(90.0, busy));
            v.extend(std::iter::repeat_n(1.0, idle));
        }
        let a = analyze_util(&v, 0.1).unwrap();
        assert!(a.period.is_none(), "{:?}", a.period);
        assert_eq!(a.verdict, UtilVerdict::Bursty, "{a:?}");
    }

    /// Issue 26: a 15 s log of five busy stretches (about 40 %) with 2-27 min of idle
    /// between them (evaluation, restarts), a 45 s start-up and 13 min after the end: the
    /// long idle stretches are breaks between phases, not stalls, and the busy phases
    /// are `starved`, not `bursty`.
    #[test]
    fn long_idle_stretches_are_breaks_between_phases() {
        let mut v = vec![0.0; 3];
        for (i, (busy, idle)) in [(32, 9), (32, 13), (25, 110), (49, 14), (34, 51)]
            .into_iter()
            .enumerate()
        {
            v.extend(noisy(|_| 40.0, busy, 6.0, 40 + i as u64));
            v.extend(std::iter::repeat_n(0.0, idle));
        }
        let a = analyze_util(&v, 15.0).unwrap();
        assert_eq!(a.verdict, UtilVerdict::Starved, "{a:?}");
        assert_eq!((a.phase.idle_start, a.phase.idle_end), (3, 51));
        assert_eq!(a.phase.breaks.count, 4);
        assert_eq!(a.phase.breaks.max_s, 110.0 * 15.0);
        assert_eq!(a.phase.summary.n, 32 + 32 + 25 + 49 + 34);
        assert_eq!(a.phase.idle_gaps.count, 0);
        // The whole log's figures still count every idle sample.
        assert_eq!(a.idle_gaps.count, 6);
        // Read as a 1 s log, the same samples hold 9-14 s gaps (stalls: with the 3 s
        // start, no longer than them, they make it `bursty`) and one 110 s break.
        let b = analyze_util(&v, 1.0).unwrap();
        assert_eq!(b.phase.breaks.count, 1, "{b:?}");
        assert_eq!(b.phase.idle_gaps.count, 4, "{b:?}");
        assert_eq!(b.verdict, UtilVerdict::Bursty);
    }

    /// An idle log longer than a break has no phases: nothing is a break, it is idle.
    #[test]
    fn an_idle_log_has_no_breaks() {
        let a = analyze_util(&[0.0; 600], 1.0).unwrap();
        assert_eq!(a.verdict, UtilVerdict::Idle);
        assert_eq!(a.phase.breaks.count, 0);
        assert_eq!(a.phase.summary.n, 600);
    }

    /// Issue 26: a flat 30 % training phase between a job's start-up zeros and the idle
    /// minutes after it ended is `starved`; the edges are not bursts.
    #[test]
    fn flat_low_between_idle_edges_is_starved() {
        for (head, tail) in [(5, 0), (0, 40), (3, 60), (12, 12)] {
            let mut v = vec![0.0; head];
            v.extend(noisy(|_| 30.0, 200, 3.0, 7));
            v.extend(std::iter::repeat_n(0.0, tail));
            let a = analyze_util(&v, 1.0).unwrap();
            assert_eq!(
                a.verdict,
                UtilVerdict::Starved,
                "head {head} tail {tail}: {a:?}"
            );
        }
    }

    /// Issue 26 (a real 0.1 s log): warm-up blips inside a long start-up (a context
    /// created, a first kernel) leave the start-up an edge, not a gap of the training.
    #[test]
    fn warm_up_blips_stay_in_the_start_up() {
        let mut v = vec![0.0; 75];
        v.extend([40.0, 35.0, 30.0, 45.0, 0.0, 50.0, 20.0, 30.0, 25.0]);
        v.extend(vec![0.0; 280]);
        let start = v.len();
        v.extend(noisy(|_| 45.0, 150, 5.0, 3));
        let a = analyze_util(&v, 0.1).unwrap();
        assert_eq!(a.phase.idle_start, start, "{:?}", a.phase);
        assert_eq!(a.verdict, UtilVerdict::Starved, "{a:?}");
        // Ten non-idle samples are a training of their own: the edge stops before them,
        // and the 280-sample gap after them is the training's, longer than the 75-sample
        // edge, so nothing is left out.
        let mut w = vec![0.0; 75];
        w.extend([40.0; 10]);
        w.extend(vec![0.0; 280]);
        w.extend([40.0; 20]);
        assert_eq!(training_phase(&w), 0..w.len());
    }

    /// Issue 26 (a real 2 s log of an H200): isolated readings of 16-32 % in an idle log
    /// are `idle`, not a `starved` GPU at work.
    #[test]
    fn isolated_readings_in_an_idle_log_are_idle() {
        let mut v = vec![0.0; 93];
        for (i, x) in [(44, 32.0), (67, 16.0), (71, 19.0)] {
            v[i] = x;
        }
        let a = analyze_util(&v, 2.0).unwrap();
        assert_eq!(a.verdict, UtilVerdict::Idle, "{a:?}");
        // A steady 12 % is at work, however little: `starved`.
        let a = analyze_util(&noisy(|_| 14.0, 100, 1.0, 4), 1.0).unwrap();
        assert_eq!(a.verdict, UtilVerdict::Starved, "{a:?}");
    }

    /// Issue 26: a well-fed GPU whose log starts with the job's start-up and ends with
    /// minutes of 0 % is `stable`, not `bursty`.
    #[test]
    fn busy_between_idle_edges_is_stable() {
        let mut v = vec![0.0, 0.0, 1.0];
        v.extend(noisy(|_| 94.0, 120, 4.0, 8));
        v.extend(std::iter::repeat_n(0.0, 30));
        let a = analyze_util(&v, 1.0).unwrap();
        assert_eq!(a.verdict, UtilVerdict::Stable, "{a:?}");
    }

    /// Issue 26: an idle GPU's 0/1 % jitter has no period, whatever its pattern.
    #[test]
    fn idle_noise_has_no_period() {
        // A 0/1 % reading that repeats every 12 samples: a perfect, meaningless cycle.
        let v: Vec<f64> = (0..600)
            .map(|i| if i % 12 < 2 { 1.0 } else { 0.0 })
            .collect();
        let a = analyze_util(&v, 1.0).unwrap();
        assert_eq!(a.verdict, UtilVerdict::Idle);
        assert_eq!((a.period, a.period_s), (None, None), "{a:?}");
        let mut g = Rng::new(9);
        let v: Vec<f64> = (0..600)
            .map(|_| if g.uniform() < 0.3 { 1.0 } else { 0.0 })
            .collect();
        assert_eq!(analyze_util(&v, 1.0).unwrap().period_s, None);
    }

    proptest::proptest! {
        /// A steady level below the starved mean, with any start-up and end of idle
        /// samples, is `starved`: the edges never make it `bursty`.
        #[test]
        fn steady_low_with_any_idle_edges_is_starved(
            level in 20.0f64..45.0,
            head in 0usize..120,
            tail in 0usize..300,
            seed in 0u64..1000,
        ) {
            let mut v = vec![0.0; head];
            v.extend(noisy(|_| level, 200, 2.0, seed));
            v.extend(std::iter::repeat_n(1.0, tail));
            let a = analyze_util(&v, 1.0).unwrap();
            proptest::prop_assert_eq!(a.verdict, UtilVerdict::Starved);
            proptest::prop_assert_eq!((a.phase.idle_start, a.phase.idle_end), (head, tail));
        }

        /// An idle GPU's readings, any pattern of 0 and 1 %, have no period.
        #[test]
        fn idle_readings_have_no_period(bits in proptest::collection::vec(0u8..2, 20..600)) {
            let v: Vec<f64> = bits.iter().map(|b| f64::from(*b)).collect();
            let a = analyze_util(&v, 1.0).unwrap();
            proptest::prop_assert_eq!(a.verdict, UtilVerdict::Idle);
            proptest::prop_assert!(a.period_s.is_none());
        }
    }

    #[test]
    fn idle_gap_lengths() {
        let v = [50.0, 0.0, 0.0, 50.0, 1.0, 50.0, 0.0, 0.0, 0.0];
        let g = idle_gaps(&v, 10.0, 0.5);
        assert_eq!(g.count, 3);
        assert!((g.mean_s - 1.0).abs() < 1e-12); // (2 + 1 + 3) / 3 samples × 0.5 s
        assert!((g.max_s - 1.5).abs() < 1e-12);
        let none = idle_gaps(&[50.0; 4], 10.0, 0.5);
        assert_eq!((none.count, none.mean_s, none.max_s), (0, 0.0, 0.0));
    }

    #[test]
    fn gap_spans_agree_with_gap_counts() {
        let v = [50.0, 0.0, 0.0, 50.0, 1.0, 50.0, 0.0, 0.0, 0.0];
        let spans = idle_gap_spans(&v, 10.0);
        assert_eq!(spans, vec![(1, 2), (4, 1), (6, 3)]);
        let g = idle_gaps(&v, 10.0, 1.0);
        assert_eq!(spans.len(), g.count);
        assert!(idle_gap_spans(&[50.0; 3], 10.0).is_empty());
        assert_eq!(idle_gap_spans(&[0.0; 3], 10.0), vec![(0, 3)]);
    }

    #[test]
    fn interval_is_the_median_step() {
        let t = [0.0, 0.1, 0.2, 0.3, 5.0, 5.1, 5.2];
        assert!((sampling_interval(&t).unwrap() - 0.1).abs() < 1e-9);
        assert_eq!(sampling_interval(&[1.0]), None);
        assert_eq!(sampling_interval(&[1.0, 1.0]), None);
    }

    /// Three evenly spaced stalls in 5 s of a 1.5 s cycle: too few to tell a cycle from
    /// irregular stalls, which was called bursty (issue 41); at 15 s the cycle shows.
    #[test]
    fn too_few_stalls_are_too_short_to_judge() {
        let cycle = |n: usize| -> Vec<f64> {
            (0..n)
                .map(|i| if i % 15 < 9 { 40.0 } else { 1.0 })
                .collect()
        };
        let short = analyze_util(&cycle(50), 0.1).unwrap();
        assert_eq!(short.verdict, UtilVerdict::TooShort, "{short:?}");
        assert_eq!(UtilVerdict::TooShort.as_str(), "too_short");
        let long = analyze_util(&cycle(150), 0.1).unwrap();
        assert_eq!(long.verdict, UtilVerdict::Oscillating, "{long:?}");
    }

    #[test]
    fn verdict_serialises_lowercase() {
        assert_eq!(serde_json_like(UtilVerdict::Oscillating), "oscillating");
    }

    fn serde_json_like(v: UtilVerdict) -> &'static str {
        v.as_str()
    }
}
