//! Step-time analysis: is every training step (or batch) as fast as the last?
//!
//! Input is a series of step times in milliseconds, warm-up already removed.
//!
//! # Figures
//! The [`Summary`] in milliseconds, the number of outliers by modified Z-score
//! ([`crate::outliers`]) and the dominant period in steps. A stall every k-th step is the
//! classic cycle: a round-robin over k data workers where one is slow, a cache flush, a
//! checkpoint or logging step every k steps.
//!
//! # Verdict (first rule that holds)
//! 1. `oscillating`: a significant period **and** cv >= [`STEP_CV_OSCILLATING`]; a cycle
//!    that moves the step time by less than that is reported but harmless.
//! 2. `unstable`: cv >= [`STEP_CV_UNSTABLE`] without such a cycle.
//! 3. `stable`.
//!
//! # Partial batches
//! An epoch whose length is not a multiple of the batch size ends with a short batch, which
//! is faster to read and to train on: with 64 items and batches of 56, every other batch
//! holds 8 items, and the raw series zig-zags with a "period" of 2 that is no cycle at all.
//! [`analyze_batches`] therefore judges the whole batches only: their summary and outliers,
//! and the period of the series with each short batch replaced by the median of the whole
//! ones, so that a real stall every k-th batch keeps its place and its period. The short
//! batches left out are counted and named ([`PartialBatches`]).
//!
//! ```
//! use gpufeed_stats::steps::{analyze_steps, StepVerdict};
//! let stall: Vec<f64> = (0..96).map(|i| if i % 8 == 7 { 400.0 } else { 100.0 }).collect();
//! let a = analyze_steps(&stall).unwrap();
//! assert_eq!(a.verdict, StepVerdict::Oscillating);
//! assert_eq!(a.period.unwrap().lag, 8);
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::outliers::count_outliers;
use crate::periodicity::{Periodicity, detect_period};
use crate::summary::{Summary, summarize};
use crate::thresholds::{STEP_CV_OSCILLATING, STEP_CV_UNSTABLE};

/// What the step times say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepVerdict {
    /// Steady step times.
    Stable,
    /// Step times repeat a cycle.
    Oscillating,
    /// Step times vary without a cycle.
    Unstable,
}

impl StepVerdict {
    /// The verdict as it appears in JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stable => "stable",
            Self::Oscillating => "oscillating",
            Self::Unstable => "unstable",
        }
    }
}

impl std::fmt::Display for StepVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Analysis of a step-time series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepAnalysis {
    /// Summary in milliseconds.
    pub summary: Summary,
    /// The dominant cycle, in steps.
    pub period: Option<Periodicity>,
    /// Number of outliers by modified Z-score.
    pub outliers: usize,
    /// The verdict (see the module docs for the rules).
    pub verdict: StepVerdict,
}

/// Analyses step times in milliseconds; `None` for an empty series.
#[must_use]
pub fn analyze_steps(ms: &[f64]) -> Option<StepAnalysis> {
    let summary = summarize(ms)?;
    let period = detect_period(ms);
    Some(judged(summary, period, count_outliers(ms)))
}

/// The verdict rules of the module docs.
fn judged(summary: Summary, period: Option<Periodicity>, outliers: usize) -> StepAnalysis {
    let verdict = if period.is_some() && summary.cv >= STEP_CV_OSCILLATING {
        StepVerdict::Oscillating
    } else if summary.cv >= STEP_CV_UNSTABLE {
        StepVerdict::Unstable
    } else {
        StepVerdict::Stable
    };
    StepAnalysis {
        summary,
        period,
        outliers,
        verdict,
    }
}

/// Short batches that [`analyze_batches`] left out of the judgement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PartialBatches {
    /// How many were left out.
    pub count: usize,
    /// Items in a whole batch (the most any batch held).
    pub whole_items: usize,
    /// Fewest items in a left-out batch.
    pub min_items: usize,
    /// Most items in a left-out batch.
    pub max_items: usize,
}

impl PartialBatches {
    /// "20 epoch-tail batches of 8 items" (or "of 2 to 8 items"): the left-out batches, as
    /// every report names them.
    #[must_use]
    pub fn describe(&self) -> String {
        let items = if self.min_items == self.max_items {
            self.min_items.to_string()
        } else {
            format!("{} to {}", self.min_items, self.max_items)
        };
        let noun = if self.count == 1 { "batch" } else { "batches" };
        format!("{} epoch-tail {noun} of {items} items", self.count)
    }
}

/// Which batches are whole: those holding as many items as the fullest batch of the series
/// (the rule of [`analyze_batches`], for figures that must leave out the same batches).
#[must_use]
pub fn whole_batches(items: &[usize]) -> Vec<bool> {
    let most = items.iter().copied().max().unwrap_or(0);
    items.iter().map(|&n| n == most).collect()
}

/// Analyses the times of batches holding `items[i]` items each, judging the whole batches
/// only (see "Partial batches" in the module docs). A batch is whole when it holds as many
/// items as the fullest batch of the series. `None` for an empty series or when the two
/// slices differ in length.
///
/// ```
/// use gpufeed_stats::steps::{analyze_batches, analyze_steps, StepVerdict};
/// // 64 items in batches of 56: 56, 8, 56, 8, ... and the short batch is quicker.
/// let items: Vec<usize> = (0..120).map(|i| if i % 2 == 0 { 56 } else { 8 }).collect();
/// let ms: Vec<f64> = items.iter().enumerate().map(|(i, &n)| n as f64 * 0.5 + (i % 3) as f64 * 0.1).collect();
/// assert_eq!(analyze_steps(&ms).unwrap().verdict, StepVerdict::Oscillating);
/// let (a, partial) = analyze_batches(&ms, &items).unwrap();
/// assert_eq!(a.verdict, StepVerdict::Stable);
/// assert_eq!(a.summary.n, 60);
/// assert_eq!(partial.unwrap().count, 60);
/// ```
#[must_use]
pub fn analyze_batches(
    ms: &[f64],
    items: &[usize],
) -> Option<(StepAnalysis, Option<PartialBatches>)> {
    if ms.len() != items.len() {
        return None;
    }
    let whole_items = items.iter().copied().max()?;
    let keep = whole_batches(items);
    let whole: Vec<f64> = ms
        .iter()
        .zip(&keep)
        .filter(|&(_, &k)| k)
        .map(|(&v, _)| v)
        .collect();
    if whole.len() == ms.len() {
        return analyze_steps(ms).map(|a| (a, None));
    }
    let summary = summarize(&whole)?;
    let filled: Vec<f64> = ms
        .iter()
        .zip(&keep)
        .map(|(&v, &k)| if k { v } else { summary.median })
        .collect();
    let short = items.iter().copied().filter(|&n| n < whole_items);
    let partial = PartialBatches {
        count: ms.len() - whole.len(),
        whole_items,
        min_items: short.clone().min().unwrap_or(0),
        max_items: short.max().unwrap_or(0),
    };
    let analysis = judged(summary, detect_period(&filled), count_outliers(&whole));
    Some((analysis, Some(partial)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Rng;

    #[test]
    fn stall_every_eighth_step() {
        let mut g = Rng::new(4);
        let v: Vec<f64> = (0..200)
            .map(|i| if i % 8 == 3 { 350.0 } else { 100.0 } + 3.0 * g.normal())
            .collect();
        let a = analyze_steps(&v).unwrap();
        assert_eq!(a.verdict, StepVerdict::Oscillating);
        assert_eq!(a.period.unwrap().lag, 8);
        assert_eq!(a.outliers, 25);
    }

    #[test]
    fn steady_steps_are_stable() {
        let mut g = Rng::new(8);
        let v: Vec<f64> = (0..300).map(|_| 120.0 + 2.0 * g.normal()).collect();
        let a = analyze_steps(&v).unwrap();
        assert_eq!(a.verdict, StepVerdict::Stable);
        assert!(a.period.is_none());
    }

    #[test]
    fn erratic_steps_are_unstable() {
        let mut g = Rng::new(9);
        let v: Vec<f64> = (0..300).map(|_| 50.0 + 200.0 * g.uniform()).collect();
        let a = analyze_steps(&v).unwrap();
        assert_eq!(a.verdict, StepVerdict::Unstable);
    }

    #[test]
    fn small_cycle_is_harmless() {
        let v: Vec<f64> = (0..200)
            .map(|i| if i % 4 == 0 { 101.0 } else { 100.0 })
            .collect();
        let a = analyze_steps(&v).unwrap();
        assert_eq!(a.period.unwrap().lag, 4);
        assert_eq!(a.verdict, StepVerdict::Stable);
    }

    #[test]
    fn empty_is_none() {
        assert!(analyze_steps(&[]).is_none());
        assert!(analyze_batches(&[], &[]).is_none());
        assert!(analyze_batches(&[1.0], &[]).is_none());
    }

    #[test]
    fn whole_batches_only_is_analyze_steps() {
        let mut g = Rng::new(3);
        let v: Vec<f64> = (0..100)
            .map(|i| if i % 5 == 0 { 300.0 } else { 100.0 } + g.normal())
            .collect();
        let (a, partial) = analyze_batches(&v, &vec![32; v.len()]).unwrap();
        assert_eq!(Some(a), analyze_steps(&v));
        assert_eq!(partial, None);
    }

    #[test]
    fn the_demo_tail_is_named_and_not_judged() {
        // 64 items in batches of 56, the short batch already prefetched (a wait near 0).
        let items: Vec<usize> = (0..200).map(|i| if i % 2 == 0 { 56 } else { 8 }).collect();
        let mut g = Rng::new(5);
        let ms: Vec<f64> = items
            .iter()
            .map(|&n| {
                if n == 56 {
                    40.0 + 0.5 * g.normal()
                } else {
                    0.01
                }
            })
            .collect();
        assert_eq!(
            analyze_steps(&ms).unwrap().verdict,
            StepVerdict::Oscillating
        );
        let (a, partial) = analyze_batches(&ms, &items).unwrap();
        assert_eq!(a.verdict, StepVerdict::Stable);
        assert_eq!(a.summary.n, 100);
        assert!((a.summary.mean - 40.0).abs() < 0.5);
        let p = partial.unwrap();
        assert_eq!(
            (p.count, p.whole_items, p.min_items, p.max_items),
            (100, 56, 8, 8)
        );
    }

    /// An epoch of `per_epoch` whole batches of `b` items and one of `tail` items, repeated
    /// over `n` batches: the items of each batch.
    fn epochs(n: usize, per_epoch: usize, b: usize, tail: usize) -> Vec<usize> {
        (0..n)
            .map(|i| {
                if i % (per_epoch + 1) == per_epoch {
                    tail
                } else {
                    b
                }
            })
            .collect()
    }

    /// Batch size, whole batches per epoch, items in the short last batch, and its time
    /// relative to a whole batch's.
    fn epoch_shape() -> impl proptest::strategy::Strategy<Value = (usize, usize, usize, f64)> {
        use proptest::strategy::Strategy as _;
        (2usize..=128, 1usize..=6, 0.0f64..1.0, 0.0f64..3.0).prop_map(|(b, per, frac, time)| {
            (b, per, ((b as f64 * frac) as usize).clamp(1, b - 1), time)
        })
    }

    proptest::proptest! {
        /// A perfectly regular loader (every whole batch takes the same time, 2 % noise)
        /// whose epochs end with a short batch of any size and any time is never judged
        /// `oscillating`, whatever the number of batches per epoch.
        #[test]
        fn a_partial_tail_is_never_a_cycle(
            (b, per_epoch, tail, tail_time) in epoch_shape(),
            n in 60usize..=240,
            t in 1.0f64..1000.0,
            seed in 0u64..1000,
        ) {
            let items = epochs(n, per_epoch, b, tail);
            let mut g = Rng::new(seed);
            let ms: Vec<f64> = items
                .iter()
                .map(|&k| if k == b { t * (1.0 + 0.02 * g.normal()) } else { t * tail_time })
                .collect();
            let (a, partial) = analyze_batches(&ms, &items).unwrap();
            proptest::prop_assert_ne!(a.verdict, StepVerdict::Oscillating);
            proptest::prop_assert_eq!(partial.map(|p| p.min_items), Some(tail));
        }

        /// A real stall every k-th batch is still `oscillating` with the partial tails left
        /// out, its period a multiple of k (k itself unless the tails fall on the stalls in
        /// a pattern of their own), as long as most stalls land on whole batches and at most
        /// half the whole batches stall (when every whole batch stalls, as with k = 2 and
        /// epochs of one whole batch and a tail, the stall is indistinguishable from the
        /// tail: no series of whole batches can show it).
        #[test]
        fn a_real_stall_is_still_a_cycle(
            (b, per_epoch, tail, tail_time) in epoch_shape(),
            k in 2usize..=8,
            offset in 0usize..8,
            stall in 3.0f64..6.0,
            seed in 0u64..1000,
        ) {
            let n = 240;
            let items = epochs(n, per_epoch, b, tail);
            let stalled = |i: usize| i % k == offset % k;
            let on_whole = (0..n).filter(|&i| stalled(i) && items[i] == b).count();
            let stalls = (0..n).filter(|&i| stalled(i)).count();
            let whole = items.iter().filter(|&&m| m == b).count();
            proptest::prop_assume!(3 * on_whole >= 2 * stalls && 2 * on_whole <= whole);
            let mut g = Rng::new(seed);
            let ms: Vec<f64> = (0..n)
                .map(|i| {
                    let base = if items[i] == b { 1.0 + 0.02 * g.normal() } else { tail_time };
                    if stalled(i) { base * stall } else { base }
                })
                .collect();
            let (a, _) = analyze_batches(&ms, &items).unwrap();
            proptest::prop_assert_eq!(a.verdict, StepVerdict::Oscillating);
            proptest::prop_assert_eq!(a.period.unwrap().lag % k, 0, "lag {}", a.period.unwrap().lag);
        }
    }
}
