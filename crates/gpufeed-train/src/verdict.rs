//! What a step profile means: input-bound, transfer-bound, compute-bound or oscillating,
//! with the evidence (the measured shares, with the thresholds they were compared to) and
//! the change to try.
//!
//! The rules, in order (thresholds from `gpufeed_stats::thresholds`):
//! 1. input share = (data wait + copies) / step. At or above [`INPUT_BOUND_HIGH`] (TF
//!    Profiler's "highly input-bound"): transfer-bound when the copies outweigh the data
//!    wait, else input-bound; level `high`.
//! 2. The step times repeat a cycle (gpufeed-stats' step verdict `oscillating`):
//!    oscillating, with the period.
//! 3. Input share at or above [`INPUT_BOUND_MODERATE`]: as 1, level `moderate`.
//! 4. Otherwise compute-bound: the device's work is the step.

use gpufeed_stats::StepAnalysis;
use gpufeed_stats::steps::StepVerdict;
use gpufeed_stats::thresholds::{INPUT_BOUND_HIGH, INPUT_BOUND_MODERATE};
use serde::Serialize;

use crate::profile::Phase;

/// The bottleneck.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bottleneck {
    /// The step waits for the loader.
    InputBound,
    /// The step waits for copies between memories.
    TransferBound,
    /// The device's work is the step.
    ComputeBound,
    /// The step time repeats a cycle.
    Oscillating,
}

impl Bottleneck {
    /// The verdict as it appears in JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InputBound => "input-bound",
            Self::TransferBound => "transfer-bound",
            Self::ComputeBound => "compute-bound",
            Self::Oscillating => "oscillating",
        }
    }
}

/// How far past the threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// At or above TF Profiler's moderate threshold.
    Moderate,
    /// At or above TF Profiler's high threshold.
    High,
}

/// The verdict with its evidence and the change to try.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// The bottleneck.
    pub bottleneck: Bottleneck,
    /// For input- and transfer-bound.
    pub level: Option<Level>,
    /// The measured figures behind it, one sentence each.
    pub evidence: Vec<String>,
    /// The change to try.
    pub fix: String,
}

/// Mean share of the step per phase.
#[derive(Debug, Clone, Copy)]
pub struct Shares {
    /// Data wait.
    pub data_wait: f64,
    /// Host-to-device and device-to-device copies.
    pub copy: f64,
    /// Forward, loss, backward, optimizer.
    pub compute: f64,
}

impl Shares {
    /// From phase means (ms) and the mean step (ms).
    #[must_use]
    pub fn of(phases: &[(Phase, f64)], step_ms: f64) -> Self {
        let sum = |f: fn(Phase) -> bool| -> f64 {
            phases
                .iter()
                .filter(|(p, _)| f(*p))
                .map(|(_, m)| m)
                .sum::<f64>()
                / step_ms
        };
        Self {
            data_wait: sum(|p| p == Phase::DataWait),
            copy: sum(Phase::is_copy),
            compute: sum(|p| !p.is_input()),
        }
    }

    /// Data wait plus copies: TF Profiler's input time.
    #[must_use]
    pub fn input(&self) -> f64 {
        self.data_wait + self.copy
    }
}

fn pct(x: f64) -> String {
    format!("{:.1} %", 100.0 * x)
}

/// Judges a profile.
///
/// `workers` and `prefetch` are the loader's settings, quoted in the fix.
#[must_use]
pub fn judge(shares: Shares, steps: &StepAnalysis, workers: usize, prefetch: usize) -> Verdict {
    let input = shares.input();
    let level = if input >= INPUT_BOUND_HIGH {
        Some(Level::High)
    } else if input >= INPUT_BOUND_MODERATE {
        Some(Level::Moderate)
    } else {
        None
    };
    let tf = format!(
        "TF Profiler: >= {:.0} % moderately, >= {:.0} % highly input-bound",
        100.0 * INPUT_BOUND_MODERATE,
        100.0 * INPUT_BOUND_HIGH
    );
    let input_line = format!(
        "data wait {} + copies {} = {} of the step ({tf})",
        pct(shares.data_wait),
        pct(shares.copy),
        pct(input)
    );
    let oscillating = steps.verdict == StepVerdict::Oscillating;
    let period_line = steps.period.map(|p| {
        format!(
            "the step time repeats every {} steps (autocorrelation {:.2}); step cv {:.2}",
            p.lag, p.strength, steps.summary.cv
        )
    });
    let input_verdict = |level: Level| {
        let transfer = shares.copy > shares.data_wait;
        let mut evidence = vec![input_line.clone()];
        evidence.extend(period_line.clone());
        if transfer {
            Verdict {
                bottleneck: Bottleneck::TransferBound,
                level: Some(level),
                evidence,
                fix: "copies dominate the input time: pin the host buffers and copy \
                      asynchronously ahead of the step (prefetch to the device), keep the \
                      batch on the model's GPU (`data_gpu` = `model_gpu`), or send fewer \
                      bytes (bf16 features, less padding: `pad_to_fixed_length: false` \
                      with bucketing)"
                    .to_owned(),
            }
        } else {
            Verdict {
                bottleneck: Bottleneck::InputBound,
                level: Some(level),
                evidence,
                fix: format!(
                    "the loader does not keep up: precompute the features \
                     (`gpufeed precompute`), raise `num_workers` (now {workers}) and \
                     `prefetch_buffer_size` (now {prefetch}), and measure with \
                     `gpufeed profile data --benchmark`"
                ),
            }
        }
    };
    match level {
        Some(Level::High) => input_verdict(Level::High),
        _ if oscillating => {
            let mut evidence: Vec<String> = period_line.clone().into_iter().collect();
            evidence.push(input_line.clone());
            Verdict {
                bottleneck: Bottleneck::Oscillating,
                level: None,
                evidence,
                fix: "a cycle in the step time is a periodic stall: compare its period with \
                      the number of loader workers (each worker's batch arriving at once), \
                      the logging and checkpoint intervals, and any host sync in the loop \
                      (`gpufeed lint`)"
                    .to_owned(),
            }
        }
        Some(Level::Moderate) => input_verdict(Level::Moderate),
        None => {
            let mut evidence = vec![
                format!(
                    "forward, loss, backward and optimizer are {} of the step",
                    pct(shares.compute)
                ),
                input_line,
            ];
            evidence.extend(period_line);
            Verdict {
                bottleneck: Bottleneck::ComputeBound,
                level: None,
                evidence,
                fix: "the input pipeline keeps up; to go faster, make the step cheaper: \
                      mixed precision (`--dtype bf16`), a larger batch while samples/s \
                      still rises, or a smaller model"
                    .to_owned(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpufeed_stats::analyze_steps;

    fn steady() -> StepAnalysis {
        let v: Vec<f64> = (0..100).map(|i| 100.0 + f64::from(i % 3)).collect();
        analyze_steps(&v).unwrap()
    }

    fn shares(wait: f64, copy: f64) -> Shares {
        Shares {
            data_wait: wait,
            copy,
            compute: 1.0 - wait - copy,
        }
    }

    #[test]
    fn input_bound_levels_follow_the_tf_profiler_thresholds() {
        let s = steady();
        let v = judge(shares(0.30, 0.02), &s, 2, 4);
        assert_eq!(
            (v.bottleneck, v.level),
            (Bottleneck::InputBound, Some(Level::High))
        );
        assert!(v.fix.contains("num_workers` (now 2)"), "{}", v.fix);
        assert!(v.evidence[0].contains("32.0 %"), "{:?}", v.evidence);
        let v = judge(shares(0.06, 0.0), &s, 2, 4);
        assert_eq!(
            (v.bottleneck, v.level),
            (Bottleneck::InputBound, Some(Level::Moderate))
        );
        let v = judge(shares(0.04, 0.0), &s, 2, 4);
        assert_eq!(v.bottleneck, Bottleneck::ComputeBound);
    }

    #[test]
    fn copies_over_the_wait_are_transfer_bound() {
        let v = judge(shares(0.02, 0.25), &steady(), 8, 16);
        assert_eq!(
            (v.bottleneck, v.level),
            (Bottleneck::TransferBound, Some(Level::High))
        );
    }

    #[test]
    fn a_cycle_beats_a_moderate_input_share_but_not_a_high_one() {
        let v: Vec<f64> = (0..200)
            .map(|i| if i % 8 == 3 { 350.0 } else { 100.0 })
            .collect();
        let cyc = analyze_steps(&v).unwrap();
        assert_eq!(cyc.verdict, StepVerdict::Oscillating);
        let v = judge(shares(0.08, 0.0), &cyc, 8, 16);
        assert_eq!(v.bottleneck, Bottleneck::Oscillating);
        assert!(v.evidence[0].contains("every 8 steps"), "{:?}", v.evidence);
        let v = judge(shares(0.25, 0.0), &cyc, 8, 16);
        assert_eq!(v.bottleneck, Bottleneck::InputBound);
    }
}
