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
//!
//! A fix quotes only settings of the run its evidence came from: `gpufeed profile step`
//! passes its loader's [`LoaderSettings`] and gets fixes that quote them ("raise
//! `num_workers` (now 2)") and name its own flags (`--dtype bf16`); a loop gpufeed does not
//! know (a user's own, timed by the Python `StepTimer`) passes `None` and gets fixes that
//! say what to change, in the words of the common frameworks, without numbers.

use gpufeed_stats::StepAnalysis;
// One decimal, never `-0.0 %` (an empty sum: no input phase).
use gpufeed_stats::fmt::pct1 as pct;
use gpufeed_stats::steps::StepVerdict;
use gpufeed_stats::thresholds::{INPUT_BOUND_HIGH, INPUT_BOUND_MODERATE};
use serde::Serialize;

use crate::profile::Phase;

/// The bottleneck: the step documents' verdict (gpufeed-contract). [`judge`] gives
/// `input-bound`, `transfer-bound`, `compute-bound` or `oscillating`, never `undetermined`,
/// which only a user's loop with no timed data wait gets.
pub use gpufeed_contract::PhaseVerdict as Bottleneck;

/// How far past TF Profiler's input-bound thresholds.
pub use gpufeed_stats::thresholds::Level;

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

/// The loader settings of the run judged, quoted in the fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoaderSettings {
    /// Loader worker threads (`num_workers`).
    pub workers: usize,
    /// Batches prepared ahead (`prefetch_buffer_size`).
    pub prefetch: usize,
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

/// Judges a profile.
///
/// `loader` is the loader of the run when it is gpufeed's own (`gpufeed profile step`):
/// the fix quotes its settings and gpufeed's flags. `None` for a loop gpufeed does not
/// know: the fix says what to change without quoting a setting it never saw.
#[must_use]
pub fn judge(shares: Shares, steps: &StepAnalysis, loader: Option<LoaderSettings>) -> Verdict {
    let input = shares.input();
    let level = Level::of(input, INPUT_BOUND_MODERATE, INPUT_BOUND_HIGH);
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
                fix: transfer_fix(loader.is_some()),
            }
        } else {
            Verdict {
                bottleneck: Bottleneck::InputBound,
                level: Some(level),
                evidence,
                fix: input_fix(loader),
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
            let compute = if loader.is_some() {
                "forward, loss, backward and optimizer are"
            } else {
                "the compute phases (every phase but data wait and copies) are"
            };
            let mut evidence = vec![
                format!("{compute} {} of the step", pct(shares.compute)),
                input_line,
            ];
            evidence.extend(period_line);
            Verdict {
                bottleneck: Bottleneck::ComputeBound,
                level: None,
                evidence,
                fix: compute_fix(loader.is_some()),
            }
        }
    }
}

/// The fix of an input-bound step.
fn input_fix(loader: Option<LoaderSettings>) -> String {
    match loader {
        Some(l) => format!(
            "the loader does not keep up: precompute the features (`gpufeed precompute`), \
             raise `num_workers` (now {}) and `prefetch_buffer_size` (now {}), and measure \
             with `gpufeed profile data --benchmark`",
            l.workers, l.prefetch
        ),
        None => "the input pipeline does not keep up: give the loader more worker processes \
                 and a deeper prefetch (PyTorch `DataLoader` `num_workers` and \
                 `prefetch_factor`; tf.data `num_parallel_calls` and `prefetch`), and do \
                 per-item work such as decoding and feature extraction once, before training \
                 (`gpufeed precompute` for speech features)"
            .to_owned(),
    }
}

/// The fix of a transfer-bound step: gpufeed's own loop has config keys for it.
fn transfer_fix(gpufeed_loop: bool) -> String {
    if gpufeed_loop {
        "copies dominate the input time: pin the host buffers and copy asynchronously ahead \
         of the step (prefetch to the device), keep the batch on the model's GPU (`data_gpu` \
         = `model_gpu`), or send fewer bytes (bf16 features, less padding: \
         `pad_to_fixed_length: false` with bucketing)"
            .to_owned()
    } else {
        "copies dominate the input time: pin the host memory and copy asynchronously ahead of \
         the step (PyTorch `pin_memory=True` and `.to(device, non_blocking=True)` one batch \
         ahead), keep the batch on the model's device, or send fewer bytes (half-precision \
         features, less padding)"
            .to_owned()
    }
}

/// The fix of a compute-bound step: gpufeed's own loop has a flag for the precision.
fn compute_fix(gpufeed_loop: bool) -> String {
    let precision = if gpufeed_loop {
        "mixed precision (`--dtype bf16`)"
    } else {
        "mixed precision"
    };
    format!(
        "the input pipeline keeps up; to go faster, make the step cheaper: {precision}, a \
         larger batch while samples/s still rises, or a smaller model"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpufeed_stats::analyze_steps;

    fn steady() -> StepAnalysis {
        let v: Vec<f64> = (0..100).map(|i| 100.0 + f64::from(i % 3)).collect();
        analyze_steps(&v).unwrap()
    }

    /// gpufeed's own loop: 2 workers, 4 batches prefetched.
    const GPUFEED: Option<LoaderSettings> = Some(LoaderSettings {
        workers: 2,
        prefetch: 4,
    });

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
        let v = judge(shares(0.30, 0.02), &s, GPUFEED);
        assert_eq!(
            (v.bottleneck, v.level),
            (Bottleneck::InputBound, Some(Level::High))
        );
        assert!(v.fix.contains("num_workers` (now 2)"), "{}", v.fix);
        assert!(v.evidence[0].contains("32.0 %"), "{:?}", v.evidence);
        let v = judge(shares(0.06, 0.0), &s, GPUFEED);
        assert_eq!(
            (v.bottleneck, v.level),
            (Bottleneck::InputBound, Some(Level::Moderate))
        );
        let v = judge(shares(0.04, 0.0), &s, GPUFEED);
        assert_eq!(v.bottleneck, Bottleneck::ComputeBound);
    }

    #[test]
    fn no_input_time_reads_zero_not_minus_zero() {
        let empty: f64 = std::iter::empty::<f64>().sum();
        let v = judge(shares(empty, empty), &steady(), GPUFEED);
        assert!(
            v.evidence.iter().all(|e| !e.contains("-0.0")),
            "{:?}",
            v.evidence
        );
    }

    #[test]
    fn copies_over_the_wait_are_transfer_bound() {
        let v = judge(shares(0.02, 0.25), &steady(), GPUFEED);
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
        let v = judge(shares(0.08, 0.0), &cyc, GPUFEED);
        assert_eq!(v.bottleneck, Bottleneck::Oscillating);
        assert!(v.evidence[0].contains("every 8 steps"), "{:?}", v.evidence);
        let v = judge(shares(0.25, 0.0), &cyc, None);
        assert_eq!(v.bottleneck, Bottleneck::InputBound);
    }

    #[test]
    fn an_unknown_loop_gets_fixes_that_quote_no_setting() {
        let s = steady();
        let digits = |f: &str| f.chars().any(|c| c.is_ascii_digit());
        for (wait, copy) in [(0.30, 0.0), (0.06, 0.0), (0.0, 0.25), (0.01, 0.0)] {
            let own = judge(shares(wait, copy), &s, None);
            let ours = judge(shares(wait, copy), &s, GPUFEED);
            assert_eq!((own.bottleneck, own.level), (ours.bottleneck, ours.level));
            assert!(!digits(&own.fix), "{}", own.fix);
            for flag in ["(now", "--dtype", "data_gpu", "pad_to_fixed_length"] {
                assert!(!own.fix.contains(flag), "{flag} in {}", own.fix);
            }
        }
        let v = judge(shares(0.30, 0.0), &s, None);
        assert!(v.fix.contains("num_workers"), "{}", v.fix);
        let v = judge(shares(0.01, 0.0), &s, None);
        assert!(
            v.evidence[0].starts_with("the compute phases (every phase but data wait"),
            "{:?}",
            v.evidence
        );
        let v = judge(shares(0.01, 0.0), &s, GPUFEED);
        assert!(v.fix.contains("`--dtype bf16`"), "{}", v.fix);
        assert!(
            v.evidence[0].starts_with("forward, loss, backward and optimizer are 99.0 %"),
            "{:?}",
            v.evidence
        );
    }
}
