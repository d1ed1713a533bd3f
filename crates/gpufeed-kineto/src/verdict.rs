//! What a rank's steps mean: input-bound, transfer-bound, sync-bound, launch-bound,
//! host-bound, oscillating or compute-bound, with the evidence and the change to try.
//!
//! The shares are totals over the analysed steps divided by their total time (see
//! [`crate::steps`] for how each idle microsecond is charged). The rules, in the order of
//! `gpufeed profile step`'s verdict (gpufeed-train `verdict::judge`):
//!
//! 1. input share = (data wait + copy wait + host-to-device copy time) / step: TF
//!    Profiler's input time, judged against [`INPUT_BOUND_MODERATE`] / [`INPUT_BOUND_HIGH`];
//!    transfer-bound when the copy part outweighs the data wait, else input-bound.
//!    sync share, launch share and the share of idle with the host elsewhere (host-bound)
//!    are judged against [`HOST_STALL_MODERATE`] / [`HOST_STALL_HIGH`].
//! 2. The largest cause at the high level is the verdict.
//! 3. Else, when the step times repeat a cycle (gpufeed-stats' step verdict): oscillating.
//! 4. Else the largest cause at the moderate level.
//! 5. Else compute-bound: the GPU's work is the step.

use gpufeed_stats::StepAnalysis;
use gpufeed_stats::steps::StepVerdict;
use gpufeed_stats::thresholds::{
    HOST_STALL_HIGH, HOST_STALL_MODERATE, INPUT_BOUND_HIGH, INPUT_BOUND_MODERATE, KERNEL_WAIT_US,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::steps::{LaunchStats, StepFigures};

/// The bottleneck of a rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Bottleneck {
    /// The GPU waits for the input pipeline.
    InputBound,
    /// The GPU waits for host-to-device copies.
    TransferBound,
    /// The GPU idles after the host synchronised with it.
    SyncBound,
    /// The GPU idles between short kernels: the host cannot launch them fast enough.
    LaunchBound,
    /// The GPU idles while the host runs other work (CPU ops, Python, waits on other
    /// ranks): none of the causes above, but the host's time, not the GPU's.
    HostBound,
    /// The step time repeats a cycle.
    Oscillating,
    /// The GPU's work is the step.
    ComputeBound,
}

impl Bottleneck {
    /// As in JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InputBound => "input-bound",
            Self::TransferBound => "transfer-bound",
            Self::SyncBound => "sync-bound",
            Self::LaunchBound => "launch-bound",
            Self::HostBound => "host-bound",
            Self::Oscillating => "oscillating",
            Self::ComputeBound => "compute-bound",
        }
    }
}

/// How far past the moderate and high thresholds.
pub use gpufeed_stats::thresholds::Level;

/// Shares of the step time, over all analysed steps.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct Shares {
    /// GPU busy.
    pub gpu_busy: f64,
    /// Compute kernels running.
    pub compute: f64,
    /// GPU idle while the host fetched the batch.
    pub data_wait: f64,
    /// Host-to-device copies: GPU copy time plus idle while the host issued them.
    pub transfer: f64,
    /// Of `transfer`, the GPU's copy time.
    pub h2d: f64,
    /// Of `h2d`, copies from pageable memory.
    pub h2d_pageable: f64,
    /// GPU idle after host synchronisations.
    pub sync_wait: f64,
    /// GPU idle in short gaps between kernels.
    pub launch_wait: f64,
    /// GPU idle with the host elsewhere.
    pub other_idle: f64,
}

impl Shares {
    /// From the steps; `None` when they last no time.
    #[must_use]
    pub fn of(steps: &[StepFigures]) -> Option<Self> {
        let total: f64 = steps.iter().map(|s| s.dur_us).sum();
        if total <= 0.0 {
            return None;
        }
        let sum = |f: fn(&StepFigures) -> f64| steps.iter().map(f).sum::<f64>() / total;
        Some(Self {
            gpu_busy: sum(|s| s.gpu_busy_us),
            compute: sum(|s| s.compute_us),
            data_wait: sum(|s| s.data_wait_us),
            transfer: sum(|s| s.copy_wait_us + s.h2d_us),
            h2d: sum(|s| s.h2d_us),
            h2d_pageable: sum(|s| s.h2d_pageable_us),
            sync_wait: sum(|s| s.sync_wait_us),
            launch_wait: sum(|s| s.launch_wait_us),
            other_idle: sum(|s| s.other_idle_us),
        })
    }

    /// TF Profiler's input time: data wait plus copies.
    #[must_use]
    pub fn input(&self) -> f64 {
        self.data_wait + self.transfer
    }
}

/// The verdict with its evidence and fix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// The bottleneck.
    pub verdict: Bottleneck,
    /// For every verdict but compute-bound and oscillating.
    pub level: Option<Level>,
    /// The measured figures behind it, one sentence each.
    pub evidence: Vec<String>,
    /// The change to try.
    pub fix: String,
    /// Every cause at or past its moderate threshold, the largest share first (the verdict
    /// is one of them, unless it is oscillating or compute-bound).
    pub causes: Vec<CauseShare>,
}

/// A cause at or past its moderate threshold: its share of the step time, with the figure
/// behind it and its fix. `gpufeed analyze` ranks each of them by its share.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CauseShare {
    /// Which cause.
    pub bottleneck: Bottleneck,
    /// Its share of the step time, 0..1 (for input- and transfer-bound, data wait plus
    /// copies: TF Profiler's input time).
    pub share: f64,
    /// Past the moderate or the high threshold.
    pub level: Level,
    /// The figure behind it, with the thresholds.
    pub evidence: String,
    /// What to try.
    pub fix: String,
}

fn pct(x: f64) -> String {
    format!("{:.1} %", 100.0 * x + 0.0)
}

/// Judges one rank from its shares, its step series, its launch medians and the number
/// of syncs per step.
#[must_use]
pub fn judge(
    s: Shares,
    series: Option<&StepAnalysis>,
    launch: LaunchStats,
    syncs_per_step: f64,
    kernels_per_step: f64,
) -> Verdict {
    let input_line = format!(
        "data wait {} + host-to-device copies {} = {} of the step (TF Profiler: >= {:.0} % \
         moderately, >= {:.0} % highly input-bound)",
        pct(s.data_wait),
        pct(s.transfer),
        pct(s.input()),
        100.0 * INPUT_BOUND_MODERATE,
        100.0 * INPUT_BOUND_HIGH
    );
    let stall_scale = format!(
        ">= {:.0} % moderate, >= {:.0} % high",
        100.0 * HOST_STALL_MODERATE,
        100.0 * HOST_STALL_HIGH
    );
    let busy_line = format!(
        "GPU busy {} of the step (compute {}); idle with the host elsewhere {}",
        pct(s.gpu_busy),
        pct(s.compute),
        pct(s.other_idle)
    );
    let period_line = series.and_then(|a| {
        a.period.map(|p| {
            format!(
                "the step time repeats every {} steps (autocorrelation {:.2}); step cv {:.2}",
                p.lag, p.strength, a.summary.cv
            )
        })
    });
    let medians = match (launch.kernel_median_us, launch.launch_median_us) {
        (Some(k), Some(l)) => format!(
            "; median compute kernel {k:.1} µs, median launch call {l:.1} µs{}",
            if k < l {
                ": kernels end before the host can launch the next"
            } else {
                ""
            }
        ),
        (Some(k), None) => format!("; median compute kernel {k:.1} µs"),
        _ => String::new(),
    };
    let transfer = s.transfer > s.data_wait;
    let mut causes: Vec<CauseShare> = Vec::new();
    if let Some(l) = Level::of(s.input(), INPUT_BOUND_MODERATE, INPUT_BOUND_HIGH) {
        let (b, fix) = if transfer {
            let mut fix = "copies dominate the input time: pin the host memory and copy \
                           asynchronously ahead of the step (PyTorch `DataLoader(pin_memory=True)` \
                           and `.to(device, non_blocking=True)`; tf.data `prefetch_to_device`), \
                           or send fewer bytes (half-precision inputs, less padding)"
                .to_owned();
            if s.h2d_pageable > 0.0 && 2.0 * s.h2d_pageable >= s.h2d {
                fix = format!(
                    "the copies come from pageable memory ({} of the step on the GPU), which \
                     the driver stages through a pinned buffer while the host waits: {fix}",
                    pct(s.h2d_pageable)
                );
            }
            (Bottleneck::TransferBound, fix)
        } else {
            (
                Bottleneck::InputBound,
                "the input pipeline does not keep up: give the loader worker processes and a \
                 deeper prefetch (PyTorch `DataLoader(num_workers=N, prefetch_factor=2, \
                 persistent_workers=True)`; tf.data `num_parallel_calls=tf.data.AUTOTUNE` and \
                 `.prefetch(tf.data.AUTOTUNE)`), and do per-item work such as decoding once, \
                 before training"
                    .to_owned(),
            )
        };
        causes.push(CauseShare {
            bottleneck: b,
            share: s.input(),
            level: l,
            evidence: input_line.clone(),
            fix,
        });
    }
    if let Some(l) = Level::of(s.sync_wait, HOST_STALL_MODERATE, HOST_STALL_HIGH) {
        causes.push(CauseShare {
            bottleneck: Bottleneck::SyncBound,
            share: s.sync_wait,
            level: l,
            evidence: format!(
                "the GPU idles {} of the step after the host synchronised with it \
                 ({syncs_per_step:.1} syncs per step; {stall_scale})",
                pct(s.sync_wait)
            ),
            fix: "each synchronisation drains the GPU's queue, which then idles until the host \
             launches new work: drop per-step `.item()`, `.cpu()`, `print(loss)` and \
             `torch.cuda.synchronize()` from the loop (accumulate the loss on the GPU and read \
             it every N steps), and look for data-dependent shapes (`nonzero`, boolean masks)"
                .to_owned(),
        });
    }
    if let Some(l) = Level::of(s.launch_wait, HOST_STALL_MODERATE, HOST_STALL_HIGH) {
        causes.push(CauseShare {
            bottleneck: Bottleneck::LaunchBound,
            share: s.launch_wait,
            level: l,
            evidence: format!(
                "the GPU idles {} of the step in gaps shorter than {KERNEL_WAIT_US:.0} µs \
                 between kernels ({kernels_per_step:.0} kernels per step{medians}; {stall_scale})",
                pct(s.launch_wait)
            ),
            fix: "the host cannot launch kernels as fast as the GPU runs them: give each kernel \
             more work (a larger batch), fuse small operations (`torch.compile`, XLA with \
             `jit_compile=True`) or replay the step as a CUDA graph \
             (`torch.compile(mode=\"reduce-overhead\")`)"
                .to_owned(),
        });
    }
    if let Some(l) = Level::of(s.other_idle, HOST_STALL_MODERATE, HOST_STALL_HIGH) {
        causes.push(CauseShare {
            bottleneck: Bottleneck::HostBound,
            share: s.other_idle,
            level: l,
            evidence: format!(
                "the GPU idles {} of the step while the host does other work: not fetching \
                 data, copying, synchronising or in short launch gaps ({stall_scale})",
                pct(s.other_idle)
            ),
            fix: "the host, not the GPU, sets the pace: find the CPU work in the idle gaps (the \
             profiler's CPU ops between the step's kernels: metrics, logging, Python loops, an \
             optimizer or loss on the CPU, waits on other ranks) and move it off the step, \
             batch it every N steps, or overlap it with the GPU's work"
                .to_owned(),
        });
    }
    causes.sort_by(|a, b| b.share.total_cmp(&a.share));
    let oscillating = series.is_some_and(|a| a.verdict == StepVerdict::Oscillating);
    let pick = |c: &CauseShare| {
        let mut evidence = vec![c.evidence.clone(), busy_line.clone()];
        evidence.extend(period_line.clone());
        Verdict {
            verdict: c.bottleneck,
            level: Some(c.level),
            evidence,
            fix: c.fix.clone(),
            causes: causes.clone(),
        }
    };
    if let Some(c) = causes.iter().find(|c| c.level == Level::High) {
        return pick(c);
    }
    if oscillating {
        let mut evidence: Vec<String> = period_line.clone().into_iter().collect();
        evidence.push(input_line);
        evidence.push(busy_line);
        return Verdict {
            verdict: Bottleneck::Oscillating,
            level: None,
            evidence,
            fix: "a cycle in the step time is a periodic stall: compare its period with the \
                  number of loader workers (each worker's batch arriving at once), the logging \
                  and checkpoint intervals, and any host sync every N steps"
                .to_owned(),
            causes,
        };
    }
    if let Some(c) = causes.first() {
        return pick(c);
    }
    let mut evidence = vec![busy_line, input_line];
    evidence.push(format!(
        "sync wait {}, launch gaps {} of the step ({stall_scale})",
        pct(s.sync_wait),
        pct(s.launch_wait)
    ));
    evidence.extend(period_line);
    Verdict {
        verdict: Bottleneck::ComputeBound,
        level: None,
        evidence,
        fix: "the GPU's work is the step: make it cheaper (mixed precision with \
              `torch.autocast`/`tf.keras.mixed_precision`, channels-last, fused optimizers, \
              `torch.compile` or XLA), or accept it: the input side is not what limits the run"
            .to_owned(),
        causes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(data: f64, transfer: f64, sync: f64, launch: f64) -> Shares {
        Shares {
            gpu_busy: 1.0 - data - sync - launch,
            compute: 0.5,
            data_wait: data,
            transfer,
            h2d: 0.0,
            h2d_pageable: 0.0,
            sync_wait: sync,
            launch_wait: launch,
            other_idle: 0.0,
        }
    }

    #[test]
    fn each_cause_at_its_threshold() {
        let j = |s| judge(s, None, LaunchStats::default(), 0.0, 100.0);
        assert_eq!(
            j(shares(0.3, 0.0, 0.0, 0.0)).verdict,
            Bottleneck::InputBound
        );
        assert_eq!(
            j(shares(0.01, 0.25, 0.0, 0.0)).verdict,
            Bottleneck::TransferBound
        );
        assert_eq!(
            j(shares(0.0, 0.0, 0.25, 0.0)).verdict,
            Bottleneck::SyncBound
        );
        assert_eq!(
            j(shares(0.0, 0.0, 0.0, 0.25)).verdict,
            Bottleneck::LaunchBound
        );
        assert_eq!(
            j(shares(0.0, 0.0, 0.04, 0.04)).verdict,
            Bottleneck::ComputeBound
        );
        let m = j(shares(0.0, 0.0, HOST_STALL_MODERATE, 0.0));
        assert_eq!(
            (m.verdict, m.level),
            (Bottleneck::SyncBound, Some(Level::Moderate))
        );
        let mut host = shares(0.0, 0.0, 0.0, 0.0);
        host.other_idle = 0.3;
        assert_eq!(j(host).verdict, Bottleneck::HostBound);
        // The largest high cause wins.
        assert_eq!(
            j(shares(0.21, 0.0, 0.3, 0.0)).verdict,
            Bottleneck::SyncBound
        );
    }
}
