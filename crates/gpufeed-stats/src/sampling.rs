//! Estimating time shares from samples at random instants (`gpufeed attach`).
//!
//! - [`poisson_gap`]: the gap to the next instant, exponential with the mean asked, so that
//!   the instants form a Poisson process. Poisson arrivals see time averages (PASTA, Wolff
//!   1982): the share of samples in a state estimates the share of time in it whatever the
//!   target's own rhythm. Instants on a fixed grid can lock onto a loop whose step is near
//!   a multiple of the grid and see the same phase of every step.
//! - [`effective_n`]: Kish's effective sample size of weighted samples, `(Σw)² / Σw²`.
//! - [`share_margin`]: the half-width of the 95 % interval of a share estimated from
//!   `n` independent samples, at its widest (a share of one half).
//!
//! ```
//! use gpufeed_stats::sampling::{effective_n, share_margin};
//! assert!((effective_n(400.0, 400.0) - 400.0).abs() < 1e-9);
//! assert!((share_margin(400.0) - 0.049).abs() < 1e-3);
//! ```

/// z of a two-sided 95 % normal interval.
const Z95: f64 = 1.959_963_984_540_054;

/// The gap to the next sampling instant, in units of the mean gap, for a uniform draw
/// `u` in `[0, 1)`: `-ln(1 - u)`, the exponential distribution's quantile.
#[must_use]
pub fn poisson_gap(u: f64) -> f64 {
    -(1.0 - u.clamp(0.0, 1.0 - f64::EPSILON)).ln()
}

/// Kish's effective sample size of weighted samples from the sum of their weights and
/// the sum of the squared weights: `(Σw)² / Σw²`; `n` when the weights are equal, 0 for
/// no weight.
#[must_use]
pub fn effective_n(weight_sum: f64, weight_sq_sum: f64) -> f64 {
    if weight_sq_sum > 0.0 {
        weight_sum * weight_sum / weight_sq_sum
    } else {
        0.0
    }
}

/// The half-width of the 95 % interval (normal approximation) of a share estimated from
/// `n` independent samples, at a share of one half where it is widest: `1.96 √(0.25 / n)`.
/// 1 when there is no sample.
#[must_use]
pub fn share_margin(n: f64) -> f64 {
    if n > 0.0 {
        (Z95 * (0.25 / n).sqrt()).min(1.0)
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_gaps_have_the_mean_asked() {
        // The quantile function on a fine uniform grid: the mean of Exp(1) is 1.
        let n = 100_000;
        let mean = (0..n)
            .map(|i| poisson_gap((i as f64 + 0.5) / n as f64))
            .sum::<f64>()
            / n as f64;
        assert!((mean - 1.0).abs() < 1e-3, "{mean}");
        assert_eq!(poisson_gap(0.0), 0.0);
        assert!(poisson_gap(1.0).is_finite());
    }

    #[test]
    fn unequal_weights_count_for_fewer_samples() {
        let n = |w: &[f64]| effective_n(w.iter().sum(), w.iter().map(|x| x * x).sum());
        assert!((n(&[1.0, 1.0, 1.0, 1.0]) - 4.0).abs() < 1e-12);
        // One sample carrying all the weight is one sample.
        assert!((n(&[1.0, 0.0, 0.0]) - 1.0).abs() < 1e-12);
        assert!((n(&[2.0, 1.0]) - 1.8).abs() < 1e-12);
        assert_eq!(n(&[]), 0.0);
    }

    #[test]
    fn the_margin_shrinks_with_the_square_root_of_n() {
        assert!((share_margin(100.0) - 0.098).abs() < 1e-3);
        assert!((share_margin(400.0) * 2.0 - share_margin(100.0)).abs() < 1e-12);
        assert_eq!(share_margin(0.0), 1.0);
    }
}
