//! Summary statistics of a series.
//!
//! Conventions, chosen to match numpy so that users can check any figure by hand:
//! - `std` is the **population** standard deviation (`numpy.std`, `ddof=0`);
//! - percentiles interpolate linearly between the closest ranks (`numpy.percentile`'s
//!   default `method="linear"`, Hyndman & Fan 1996 definition 7): for sorted values
//!   `s[0..n]` and fraction `p`, `h = (n - 1) p`, result `s[⌊h⌋] + (h - ⌊h⌋)(s[⌊h⌋+1] - s[⌊h⌋])`;
//! - `cv = std / mean`, and 0 when the mean is 0.
//!
//! ```
//! let s = gpufeed_stats::summarize(&[100.0, 105.0, 98.0, 102.0, 101.0]).unwrap();
//! assert!((s.mean - 101.2).abs() < 1e-12);
//! assert!((s.p95 - 104.4).abs() < 1e-12);
//! ```

use serde::Serialize;

/// Summary of a series of finite values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Population standard deviation (ddof = 0).
    pub std: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// 50th percentile.
    pub median: f64,
    /// 5th percentile.
    pub p5: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Coefficient of variation, `std / mean` (0 when the mean is 0).
    pub cv: f64,
}

impl Summary {
    /// p95 - p5: how far the series swings, ignoring the extreme 5 % at each end.
    #[must_use]
    pub fn swing(&self) -> f64 {
        self.p95 - self.p5
    }

    /// Share of the total time spent above the median: see [`stall_share`].
    #[must_use]
    pub fn stall_share(&self) -> f64 {
        stall_share(self.mean, self.median)
    }
}

/// Share of a series' total spent above its median, `(mean - median) / mean`, 0 when the
/// mean is not above the median (or not positive).
///
/// For step times this is the time a run would save if every step took the median step:
/// a stall of 350 ms every 8th step of 100 ms gives mean 131.25, median 100, share 0.24.
/// It is the figure `gpufeed analyze` ranks a cyclic or irregular stall by, next to the
/// input-bound share of TF Profiler (both are shares of the step time). Skewed right, as
/// stalls make step times, the mean exceeds the median; a symmetric jitter gives about 0.
#[must_use]
pub fn stall_share(mean: f64, median: f64) -> f64 {
    if mean > 0.0 && mean > median && median.is_finite() {
        (mean - median) / mean
    } else {
        0.0
    }
}

/// Summarises `values`; `None` when empty.
///
/// Values must be finite (the readers reject NaN and infinities); a NaN would sort last
/// and poison the mean, but never panics.
#[must_use]
pub fn summarize(values: &[f64]) -> Option<Summary> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let mean = mean(values);
    let std = population_std(values, mean);
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    Some(Summary {
        n,
        mean,
        std,
        min: sorted[0],
        max: sorted[n - 1],
        median: percentile_sorted(&sorted, 0.5),
        p5: percentile_sorted(&sorted, 0.05),
        p95: percentile_sorted(&sorted, 0.95),
        p99: percentile_sorted(&sorted, 0.99),
        cv: if mean == 0.0 { 0.0 } else { std / mean },
    })
}

/// Arithmetic mean (0 for an empty slice).
#[must_use]
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.iter().sum::<f64>() / values.len() as f64
}

/// Population standard deviation around a given mean, computed in a second pass
/// (the two-pass form avoids the cancellation of `E[x²] - E[x]²`).
#[must_use]
pub fn population_std(values: &[f64], mean: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let ss: f64 = values.iter().map(|x| (x - mean) * (x - mean)).sum();
    (ss / values.len() as f64).sqrt()
}

/// Percentile of already sorted values, `p` in `[0, 1]`, numpy's linear method.
/// Returns NaN for an empty slice; `p` is clamped to `[0, 1]`.
#[must_use]
pub fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
    // `h` is in [0, n-1], so the cast truncates a non-negative value in range.
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Median of unsorted values (sorts a copy); NaN when empty.
#[must_use]
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    percentile_sorted(&sorted, 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn stall_share_is_the_time_above_the_median() {
        let v: Vec<f64> = (0..96)
            .map(|i| if i % 8 == 7 { 350.0 } else { 100.0 })
            .collect();
        let s = summarize(&v).unwrap();
        assert!(close(s.stall_share(), 31.25 / 131.25, 1e-12));
        assert_eq!(stall_share(100.0, 100.0), 0.0);
        assert_eq!(stall_share(0.0, 0.0), 0.0);
        assert_eq!(stall_share(90.0, 100.0), 0.0);
    }

    #[test]
    fn issue_reference_values() {
        // The acceptance values of issue 2, which are numpy's.
        let s = summarize(&[100.0, 105.0, 98.0, 102.0, 101.0]).unwrap();
        assert_eq!(s.n, 5);
        assert!(close(s.mean, 101.2, 1e-12));
        assert!(close(s.std, 2.315167, 5e-7), "{}", s.std);
        assert_eq!(s.median, 101.0);
        assert!(close(s.p95, 104.4, 1e-12));
        assert!(close(s.p99, 104.88, 1e-12));
        assert_eq!((s.min, s.max), (98.0, 105.0));
        assert!(close(s.cv, 2.315167 / 101.2, 1e-8));
    }

    #[test]
    fn numpy_percentiles_even_length() {
        // numpy.percentile([1, 2, 3, 4], [5, 50, 95]) == [1.15, 2.5, 3.85]
        let s = summarize(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert!(close(s.p5, 1.15, 1e-12));
        assert!(close(s.median, 2.5, 1e-12));
        assert!(close(s.p95, 3.85, 1e-12));
    }

    #[test]
    fn edge_cases() {
        assert!(summarize(&[]).is_none());
        let one = summarize(&[7.0]).unwrap();
        assert_eq!((one.std, one.p5, one.p99, one.cv), (0.0, 7.0, 7.0, 0.0));
        let zeros = summarize(&[0.0, 0.0]).unwrap();
        assert_eq!(zeros.cv, 0.0);
        assert!(percentile_sorted(&[], 0.5).is_nan());
    }

    proptest! {
        #[test]
        fn ordered_and_bounded(v in prop::collection::vec(-1e6f64..1e6, 1..200)) {
            let s = summarize(&v).unwrap();
            prop_assert!(s.min <= s.p5 && s.p5 <= s.median && s.median <= s.p95);
            prop_assert!(s.p95 <= s.p99 && s.p99 <= s.max);
            prop_assert!(s.min <= s.mean + 1e-6 && s.mean <= s.max + 1e-6);
            prop_assert!(s.std >= 0.0 && s.std <= (s.max - s.min) + 1e-6);
        }

        #[test]
        fn shift_and_scale(v in prop::collection::vec(-1e3f64..1e3, 2..100), a in -100.0f64..100.0, b in 0.1f64..10.0) {
            let s = summarize(&v).unwrap();
            let w: Vec<f64> = v.iter().map(|x| a + b * x).collect();
            let t = summarize(&w).unwrap();
            prop_assert!(close(t.mean, a + b * s.mean, 1e-7 * (1.0 + t.mean.abs())));
            prop_assert!(close(t.std, b * s.std, 1e-7 * (1.0 + t.std)));
            prop_assert!(close(t.p95, a + b * s.p95, 1e-7 * (1.0 + t.p95.abs())));
        }

        #[test]
        fn order_does_not_matter(mut v in prop::collection::vec(-1e3f64..1e3, 1..100)) {
            let s = summarize(&v).unwrap();
            v.reverse();
            let t = summarize(&v).unwrap();
            prop_assert_eq!(s.median, t.median);
            prop_assert_eq!(s.p99, t.p99);
            prop_assert!(close(s.mean, t.mean, 1e-9));
        }
    }
}
