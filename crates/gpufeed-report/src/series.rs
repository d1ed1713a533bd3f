//! The series behind the plots, made small enough for one HTML file.
//!
//! Statistics come from `gpufeed-stats` (the autocorrelation and its white-noise bound, the
//! idle-gap runs); this module only cuts long series into buckets for drawing:
//! a 24-hour log at 10 Hz has 864 000 samples per GPU, far more points than a plot has
//! pixels, so each GPU's series is cut into at most [`MAX_POINTS`] buckets that keep their
//! lowest and highest value (the envelope of an oscillation survives, an average would
//! flatten it).

use gpufeed_stats::periodicity::{autocorrelation, detect_period, white_noise_bound};
use gpufeed_stats::thresholds::IDLE_UTIL_PCT;
use gpufeed_stats::util::idle_gap_spans;

use crate::model::{AcfSeries, UtilSeries};

/// Most points a plotted series keeps.
pub const MAX_POINTS: usize = 1200;
/// Most idle gaps marked on a utilisation plot.
pub const MAX_GAPS: usize = 600;

/// One GPU's utilisation (%, one sample every `interval_s`) for the plot.
#[must_use]
pub fn util_series(gpu: u32, interval_s: f64, util: &[f64]) -> UtilSeries {
    let n = util.len();
    let per = n.div_ceil(MAX_POINTS).max(1);
    let mut out = UtilSeries {
        gpu,
        interval_s,
        samples: n,
        ..UtilSeries::default()
    };
    for (i, chunk) in util.chunks(per).enumerate() {
        let lo = chunk.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = chunk.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        out.t_s.push((i * per) as f64 * interval_s);
        out.min.push(lo);
        out.max.push(hi);
    }
    let spans = idle_gap_spans(util, IDLE_UTIL_PCT);
    out.idle_gaps_total = spans.len();
    out.idle_gaps_s = spans
        .iter()
        .take(MAX_GAPS)
        .map(|&(start, len)| (start as f64 * interval_s, len as f64 * interval_s))
        .collect();
    out
}

/// A series of times (ms) with its autocorrelation over lags 0..=n/2 and the white-noise
/// bound, as `gpufeed-stats` computes them for the period.
#[must_use]
pub fn acf_series(values: &[f64]) -> AcfSeries {
    let acf = autocorrelation(values, values.len() / 2);
    AcfSeries {
        values: values.iter().copied().take(MAX_POINTS).collect(),
        truncated: values.len().saturating_sub(MAX_POINTS),
        acf: acf.into_iter().take(MAX_POINTS).collect(),
        bound: white_noise_bound(values.len()),
        period: detect_period(values).map(|p| p.lag),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_series_keep_their_envelope() {
        let util: Vec<f64> = (0..10_000)
            .map(|i| if i % 15 < 7 { 40.0 } else { 2.0 })
            .collect();
        let s = util_series(0, 0.1, &util);
        assert!(s.t_s.len() <= MAX_POINTS);
        assert_eq!(s.samples, 10_000);
        // Every bucket of 9 samples holds a busy and an idle sample (but the last, of 1).
        let n = s.max.len() - 1;
        assert!(s.max[..n].iter().all(|&v| v == 40.0));
        assert!(s.min[..n].iter().all(|&v| v == 2.0));
        assert!(s.idle_gaps_total > 600 && s.idle_gaps_s.len() == MAX_GAPS);
        let (start, len) = s.idle_gaps_s[0];
        assert!((start - 0.7).abs() < 1e-9 && (len - 0.8).abs() < 1e-9);
    }

    #[test]
    fn short_series_are_kept_whole() {
        let s = util_series(1, 1.0, &[50.0, 0.0, 60.0]);
        assert_eq!(s.min, vec![50.0, 0.0, 60.0]);
        assert_eq!(s.t_s, vec![0.0, 1.0, 2.0]);
        assert_eq!(s.idle_gaps_s, vec![(1.0, 1.0)]);
        let empty = util_series(0, 0.1, &[]);
        assert!(empty.t_s.is_empty());
    }

    #[test]
    fn acf_of_a_stall_cycle() {
        let v: Vec<f64> = (0..96)
            .map(|i| if i % 8 == 0 { 400.0 } else { 100.0 })
            .collect();
        let a = acf_series(&v);
        assert_eq!(a.acf.len(), 49);
        assert_eq!(a.period, Some(8));
        assert!(a.acf[8] > a.bound.unwrap());
        let flat = acf_series(&[1.0; 10]);
        assert!(flat.acf.is_empty() && flat.period.is_none());
    }
}
