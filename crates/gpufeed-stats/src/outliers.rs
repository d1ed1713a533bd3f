//! Outliers by the modified Z-score.
//!
//! The modified Z-score of `x` is `0.6745 (x - median) / MAD`, where MAD is the median of
//! `|x_i - median|` (Iglewicz & Hoaglin, *How to Detect and Handle Outliers*, 1993). The
//! factor 0.6745 is the 0.75 quantile of the standard normal, which makes MAD a consistent
//! estimator of the standard deviation for normal data, so the score reads like an ordinary
//! Z-score but is not dragged by the outliers it looks for. A value whose score exceeds
//! [`OUTLIER_MODIFIED_Z`](crate::thresholds::OUTLIER_MODIFIED_Z) (3.5, the authors'
//! recommendation) is an outlier. hyperfine detects outliers the same way.
//!
//! **MAD = 0** happens whenever more than half the values are equal (a steady step time
//! with a stall every 8th step is exactly that). Dividing by it would make every other
//! value infinitely far. Following IBM's documentation of the same score, the scale then
//! falls back to the mean absolute deviation around the median, `MeanAD`, with
//! `score = (x - median) / (1.253314 MeanAD)` (1.253314 = sqrt(pi/2) makes MeanAD consistent
//! for normal data). If MeanAD is 0 too, all values are equal and none is an outlier.
//! With few values the fallback cannot flag anything: one value apart from n - 1 equal ones
//! scores n / 1.253314, under 3.5 for n <= 4. A caller with few values (three or four ranks)
//! that must tell "all alike but one" reads [`median_absolute_deviation`] itself: at 0, more
//! than half the values are exactly equal and any other is infinitely many robust sigmas
//! away, so only a least meaningful distance (the caller's) can decide.
//!
//! ```
//! use gpufeed_stats::outliers::count_outliers;
//! assert_eq!(count_outliers(&[10.0, 11.0, 10.5, 10.2, 95.0]), 1);
//! ```

use crate::summary::median;
use crate::thresholds::{OUTLIER_MODIFIED_Z, WARMUP_STEP_RATIO};

/// 0.75 quantile of the standard normal distribution.
const MAD_CONSISTENCY: f64 = 0.6745;
/// sqrt(pi / 2): MeanAD's consistency factor for normal data.
const MEAN_AD_CONSISTENCY: f64 = 1.253_314;

/// Modified Z-scores of `values`, in order. All zeros when the values do not vary.
#[must_use]
pub fn modified_z_scores(values: &[f64]) -> Vec<f64> {
    if values.is_empty() {
        return Vec::new();
    }
    let med = median(values);
    let deviations: Vec<f64> = values.iter().map(|x| (x - med).abs()).collect();
    let mad = median_absolute_deviation(values);
    if mad > 0.0 {
        return values
            .iter()
            .map(|x| MAD_CONSISTENCY * (x - med) / mad)
            .collect();
    }
    let mean_ad = deviations.iter().sum::<f64>() / values.len() as f64;
    if mean_ad > 0.0 {
        values
            .iter()
            .map(|x| (x - med) / (MEAN_AD_CONSISTENCY * mean_ad))
            .collect()
    } else {
        vec![0.0; values.len()]
    }
}

/// The median absolute deviation of `values` around their median (0 for none): 0 exactly
/// when more than half the values are equal.
#[must_use]
pub fn median_absolute_deviation(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let med = median(values);
    let deviations: Vec<f64> = values.iter().map(|x| (x - med).abs()).collect();
    median(&deviations)
}

/// How many leading values are warm-up: the longest leading run, leaving at least three
/// values, of slow-side outliers (modified Z-score above the threshold) each more than
/// [`WARMUP_STEP_RATIO`] times every value after the run. 0 when there is none: a slow
/// first step that recurs later at its length is a cycle's, not warm-up.
#[must_use]
pub fn warmup_len(values: &[f64]) -> usize {
    let z = modified_z_scores(values);
    let leading = z.iter().take_while(|&&z| z > OUTLIER_MODIFIED_Z).count();
    (1..=leading.min(values.len().saturating_sub(3)))
        .rev()
        .find(|&k| {
            let slowest_after = values[k..].iter().copied().fold(f64::MIN, f64::max);
            values[..k]
                .iter()
                .all(|&v| v > WARMUP_STEP_RATIO * slowest_after)
        })
        .unwrap_or(0)
}

/// Indices of the outliers of `values`.
#[must_use]
pub fn outlier_indices(values: &[f64]) -> Vec<usize> {
    modified_z_scores(values)
        .iter()
        .enumerate()
        .filter(|(_, z)| z.abs() > OUTLIER_MODIFIED_Z)
        .map(|(i, _)| i)
        .collect()
}

/// Number of outliers in `values`.
#[must_use]
pub fn count_outliers(values: &[f64]) -> usize {
    modified_z_scores(values)
        .iter()
        .filter(|z| z.abs() > OUTLIER_MODIFIED_Z)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn one_far_value() {
        let v = [10.0, 11.0, 10.5, 10.2, 9.8, 10.1, 95.0];
        assert_eq!(outlier_indices(&v), vec![6]);
    }

    #[test]
    fn mad_zero_falls_back_to_mean_ad() {
        // 7 of 8 values equal: MAD = 0. The stall is an outlier, the rest are not.
        let mut v = vec![100.0; 7];
        v.push(400.0);
        let z = modified_z_scores(&v);
        assert!(z.iter().all(|z| z.is_finite()));
        assert_eq!(outlier_indices(&v), vec![7]);
    }

    #[test]
    fn few_values_cannot_reach_the_threshold_under_mad_zero() {
        // Three equal ranks and one far off: MAD 0, and the fallback scores it 4 / 1.2533.
        let v = [50.0, 50.0, 12.0, 50.0];
        assert_eq!(median_absolute_deviation(&v), 0.0);
        let z = modified_z_scores(&v);
        assert!(
            (z[2].abs() - 4.0 / MEAN_AD_CONSISTENCY).abs() < 1e-9,
            "{z:?}"
        );
        assert!(outlier_indices(&v).is_empty());
        assert!(median_absolute_deviation(&[1.0, 2.0, 4.0]) > 0.0);
        assert_eq!(median_absolute_deviation(&[]), 0.0);
    }

    #[test]
    fn leading_slow_steps_are_warm_up_unless_they_recur() {
        assert_eq!(warmup_len(&[4489.0, 160.0, 146.0, 149.0, 194.0]), 1);
        assert_eq!(warmup_len(&[900.0, 700.0, 100.0, 101.0, 99.0, 102.0]), 2);
        // A cycle's slow step comes back: not warm-up.
        assert_eq!(
            warmup_len(&[40.0, 10.0, 10.0, 10.0, 40.0, 10.0, 10.0, 10.0]),
            0
        );
        // Three values must be left to judge.
        assert_eq!(warmup_len(&[4489.0, 160.0, 146.0]), 0);
        assert_eq!(warmup_len(&[10.0, 11.0, 10.0, 12.0]), 0);
        assert_eq!(warmup_len(&[]), 0);
    }

    #[test]
    fn constant_series_has_none() {
        assert_eq!(count_outliers(&[3.0; 10]), 0);
        assert!(modified_z_scores(&[]).is_empty());
    }

    #[test]
    fn normal_like_data_has_few() {
        // A deterministic, roughly uniform spread: no value is 3.5 robust sigmas away.
        let v: Vec<f64> = (0..100).map(|i| 50.0 + f64::from((i * 37) % 23)).collect();
        assert_eq!(count_outliers(&v), 0);
    }

    proptest! {
        #[test]
        fn scores_are_finite_and_scale_free(v in prop::collection::vec(-1e4f64..1e4, 1..100), e in -3i32..6) {
            // A power of two scales exactly, so the scores must not move at all.
            let k = 2f64.powi(e);
            let z = modified_z_scores(&v);
            prop_assert!(z.iter().all(|z| z.is_finite()));
            let scaled: Vec<f64> = v.iter().map(|x| x * k).collect();
            prop_assert_eq!(outlier_indices(&v), outlier_indices(&scaled));
        }
    }
}
