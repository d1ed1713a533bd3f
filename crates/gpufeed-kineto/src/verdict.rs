//! What a rank's steps mean: input-bound, transfer-bound, sync-bound, launch-bound,
//! host-bound, oscillating or compute-bound, with the evidence and the change to try.
//!
//! The shares are totals over the analysed steps divided by their total time (see
//! [`crate::steps`] for how each idle microsecond is charged). The rules, in the order of
//! `gpufeed profile step`'s verdict (gpufeed-train `verdict::judge`):
//!
//! 0. A GPU busy (by time, less the host-to-device copies no compute overlaps, which are
//!    input time) at least [`GPU_BUSY_BOUND`] of the steps is GPU-bound (unless its step
//!    times cycle with a stall the slow steps hold: oscillating, rule 3):
//!    communication-bound when exposed collectives (with no compute kernel beside them) run
//!    at least [`COMMUNICATION_BOUND_SHARE`] of its busy time, else compute-bound:
//!    communication overlapped with compute costs the step nothing the compute does not.
//!    Never host-, input- or transfer-bound: what idle is left cannot be the lever.
//! 1. input share = (data wait + copy wait + host-to-device copy time) / step: TF
//!    Profiler's input time, judged against [`INPUT_BOUND_MODERATE`] / [`INPUT_BOUND_HIGH`];
//!    transfer-bound when the copy part outweighs the data wait, else input-bound.
//!    sync share, launch share and the share of idle with the host elsewhere (host-bound)
//!    are judged against [`HOST_STALL_MODERATE`] / [`HOST_STALL_HIGH`].
//! 2. The largest cause at the high level whose median step also shows it (at least its
//!    moderate threshold) is the verdict: `input-bound` is for a median step that waits.
//! 3. Else, when the step times repeat a cycle (gpufeed-stats' step verdict): oscillating,
//!    naming what cycles (`cycles`): the largest cause that the median step does not show,
//!    concentrated in the slow steps (a slow worker in a round robin every k-th batch).
//! 4. Else the largest cause at the moderate level.
//! 5. Else compute-bound: the GPU's work is the step.

use gpufeed_stats::StepAnalysis;
use gpufeed_stats::fmt::pct1 as pct;
use gpufeed_stats::steps::StepVerdict;
use gpufeed_stats::thresholds::{
    COMMUNICATION_BOUND_SHARE, GPU_BUSY_BOUND, HOST_STALL_HIGH, HOST_STALL_MODERATE,
    INPUT_BOUND_HIGH, INPUT_BOUND_MODERATE, KERNEL_WAIT_US, PER_OP_GAP_US,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::steps::{LaunchStats, StepFigures};
use gpufeed_contract::IfFixed;

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
    /// The GPU is busy nearly the whole step, most of it in collectives (NCCL/RCCL
    /// all-reduce, all-gather, ...): the interconnect, or the ranks the collectives wait
    /// for, set the pace.
    CommunicationBound,
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
            Self::CommunicationBound => "communication-bound",
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
    /// Of `other_idle`, the part in gaps shorter than `PER_OP_GAP_US` (per-op overhead).
    #[serde(default)]
    pub other_idle_short: f64,
    /// Collectives (NCCL/RCCL) running.
    #[serde(default)]
    pub collective: f64,
    /// Of `collective`, with no compute beside it: exposed communication.
    #[serde(default)]
    pub collective_exposed: f64,
    /// The median step's own shares: a cause the median step does not show is
    /// concentrated in a few slow steps.
    #[serde(default)]
    pub median_step: MedianShares,
}

/// The median over the steps of each cause's share of its own step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema, Default)]
pub struct MedianShares {
    /// Data wait plus copies (TF Profiler's input time).
    pub input: f64,
    /// Idle after host synchronisations.
    pub sync_wait: f64,
    /// Idle in short gaps between kernels.
    pub launch_wait: f64,
    /// Idle with the host elsewhere.
    pub other_idle: f64,
    /// Collectives with no compute beside them.
    #[serde(default)]
    pub collective_exposed: f64,
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
            other_idle_short: sum(|s| s.other_idle_short_us),
            collective: sum(|s| s.collective_us),
            collective_exposed: sum(|s| s.collective_exposed_us),
            median_step: MedianShares {
                input: median_share(steps, |s| s.data_wait_us + s.copy_wait_us + s.h2d_us),
                sync_wait: median_share(steps, |s| s.sync_wait_us),
                launch_wait: median_share(steps, |s| s.launch_wait_us),
                other_idle: median_share(steps, |s| s.other_idle_us),
                collective_exposed: median_share(steps, |s| s.collective_exposed_us),
            },
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
    /// is one of them, unless it is oscillating, compute- or communication-bound).
    pub causes: Vec<CauseShare>,
    /// For `oscillating`: the cause that cycles (the stall the slow steps hold and the
    /// median step does not).
    pub cycles: Option<Bottleneck>,
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
    /// The expected median step with this cause alone removed (see
    /// [`crate::estimate`]); `None` only where no step lasted any time.
    #[serde(default)]
    pub if_fixed: Option<IfFixed>,
}

fn median_share(steps: &[StepFigures], f: fn(&StepFigures) -> f64) -> f64 {
    let v: Vec<f64> = steps
        .iter()
        .filter(|s| s.dur_us > 0.0)
        .map(|s| f(s) / s.dur_us)
        .collect();
    if v.is_empty() {
        0.0
    } else {
        gpufeed_stats::summary::median(&v)
    }
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
    let mut causes = stall_causes(
        s,
        &input_line,
        &stall_scale,
        launch,
        syncs_per_step,
        kernels_per_step,
    );
    causes.sort_by(|a, b| b.share.total_cmp(&a.share));
    let oscillating = series.is_some_and(|a| a.verdict == StepVerdict::Oscillating);
    // A cause the median step does not show lives in a few slow steps: with a cycle in the
    // step times it is what cycles, not the steady state.
    let periodic = |c: &CauseShare| oscillating && !steady(s, c);
    let cycles = causes.iter().find(|c| periodic(c)).map(|c| c.bottleneck);
    // The GPU's own work: busy time less the host-to-device copies no compute overlaps,
    // which are input time (TF Profiler's definition) and judged as such. A cycle with a
    // stall the slow steps hold is named first: the steady state is then GPU-bound, but
    // every k-th step is not.
    if s.gpu_busy - s.h2d >= GPU_BUSY_BOUND && cycles.is_none() {
        let mut v = gpu_bound(s, busy_line, input_line, period_line);
        // What idle is left is no lever, but exposed communication is GPU time a fix can
        // take out of the step: listed as a cause whatever the verdict.
        v.causes = causes
            .into_iter()
            .filter(|c| c.bottleneck == Bottleneck::CommunicationBound)
            .collect();
        return v;
    }
    let pick = |c: &CauseShare| {
        let mut evidence = vec![c.evidence.clone(), busy_line.clone()];
        evidence.extend(period_line.clone());
        Verdict {
            verdict: c.bottleneck,
            level: Some(c.level),
            evidence,
            fix: c.fix.clone(),
            causes: causes.clone(),
            cycles: None,
        }
    };
    if let Some(c) = causes
        .iter()
        .find(|c| c.level == Level::High && !periodic(c))
    {
        return pick(c);
    }
    if oscillating {
        let mut evidence: Vec<String> = period_line.clone().into_iter().collect();
        let cycling = causes.iter().find(|c| Some(c.bottleneck) == cycles);
        if let Some(c) = cycling {
            evidence.push(format!(
                "what cycles: {} ({} of the steps' time, {} of the median step's)",
                c.bottleneck.as_str(),
                pct(c.share),
                pct(median_of(s, c.bottleneck))
            ));
        }
        evidence.push(input_line);
        evidence.push(busy_line);
        let mut fix = "a cycle in the step time is a periodic stall: compare its period with the \
                       number of loader workers (each worker's batch arriving at once), the \
                       logging and checkpoint intervals, and any host sync every N steps"
            .to_owned();
        if let Some(c) = cycling {
            fix = format!(
                "{fix}. Here the slow steps wait for {}: {}",
                match c.bottleneck {
                    Bottleneck::InputBound | Bottleneck::TransferBound =>
                        "input (one slow loader worker, or one slow shard, every period)",
                    Bottleneck::SyncBound => "a host synchronisation",
                    Bottleneck::LaunchBound => "kernel launches",
                    Bottleneck::CommunicationBound =>
                        "collectives (the interconnect, or another rank)",
                    _ => "the host",
                },
                c.fix
            );
        }
        return Verdict {
            verdict: Bottleneck::Oscillating,
            level: None,
            evidence,
            fix,
            causes,
            cycles,
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
        cycles: None,
    }
}

/// Every cause of the step at or past its moderate threshold, in no order: input or
/// transfer, sync, launch gaps, the host elsewhere, and exposed communication.
fn stall_causes(
    s: Shares,
    input_line: &str,
    stall_scale: &str,
    launch: LaunchStats,
    syncs_per_step: f64,
    kernels_per_step: f64,
) -> Vec<CauseShare> {
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
            evidence: input_line.to_owned(),
            fix,
            if_fixed: None,
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
            if_fixed: None,
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
            if_fixed: None,
        });
    }
    if let Some(l) = Level::of(s.other_idle, HOST_STALL_MODERATE, HOST_STALL_HIGH) {
        causes.push(CauseShare {
            bottleneck: Bottleneck::HostBound,
            share: s.other_idle,
            level: l,
            evidence: format!(
                "the GPU idles {} of the step while the host does other work: not fetching \
                 data, copying, synchronising or in short launch gaps; {} of the step in gaps \
                 shorter than {PER_OP_GAP_US:.0} µs between GPU ops ({stall_scale})",
                pct(s.other_idle),
                pct(s.other_idle_short)
            ),
            fix: host_fix(s),
            if_fixed: None,
        });
    }
    if let Some(c) = communication_cause(s, stall_scale) {
        causes.push(c);
    }
    causes
}

/// Exposed communication (collectives with no compute beside them) as a cause of its own,
/// at or past the host stalls' moderate share of the step: time the step waits on the
/// interconnect or on other ranks, judged on the same scale as the other stalls.
fn communication_cause(s: Shares, stall_scale: &str) -> Option<CauseShare> {
    let level = Level::of(s.collective_exposed, HOST_STALL_MODERATE, HOST_STALL_HIGH)?;
    Some(CauseShare {
        bottleneck: Bottleneck::CommunicationBound,
        share: s.collective_exposed,
        level,
        evidence: format!(
            "collectives (NCCL/RCCL, all-to-all) run {} of the step with no compute beside \
             them, {} in all ({stall_scale})",
            pct(s.collective_exposed),
            pct(s.collective)
        ),
        fix: COMMUNICATION_FIX.to_owned(),
        if_fixed: None,
    })
}

/// The fix of communication that the step waits for.
const COMMUNICATION_FIX: &str = "the collectives are the step: overlap them with compute \
     (DDP's gradient buckets: `bucket_cap_mb`, `gradient_as_bucket_view=True`; FSDP's \
     prefetch), send fewer bytes (gradient compression, bf16 gradients, a larger batch per \
     all-reduce), check the interconnect (`NCCL_DEBUG=INFO`: NVLink/InfiniBand, not \
     sockets), and look for a slower rank the collectives wait for";

/// The median step's share of a cause.
fn median_of(s: Shares, b: Bottleneck) -> f64 {
    let m = s.median_step;
    match b {
        Bottleneck::InputBound | Bottleneck::TransferBound => m.input,
        Bottleneck::SyncBound => m.sync_wait,
        Bottleneck::LaunchBound => m.launch_wait,
        Bottleneck::HostBound => m.other_idle,
        Bottleneck::CommunicationBound => m.collective_exposed,
        _ => 0.0,
    }
}

/// Whether the median step shows the cause at least at its moderate threshold.
fn steady(s: Shares, c: &CauseShare) -> bool {
    let moderate = match c.bottleneck {
        Bottleneck::InputBound | Bottleneck::TransferBound => INPUT_BOUND_MODERATE,
        _ => HOST_STALL_MODERATE,
    };
    median_of(s, c.bottleneck) >= moderate
}

/// A GPU busy nearly the whole step: compute-bound, or communication-bound when
/// collectives take most of its busy time. No cause of idle is listed: what idle is left
/// cannot be the lever.
fn gpu_bound(
    s: Shares,
    busy_line: String,
    input_line: String,
    period_line: Option<String>,
) -> Verdict {
    let comm = s.gpu_busy > 0.0 && s.collective_exposed >= COMMUNICATION_BOUND_SHARE * s.gpu_busy;
    let mut evidence = vec![
        format!(
            "GPU busy {} of the step by time (>= {:.0} % is GPU-bound); collectives \
             (NCCL/RCCL, all-to-all) {} of the step, {} exposed with no compute beside them: \
             {} of the GPU's busy time (>= {:.0} % is communication-bound)",
            pct(s.gpu_busy),
            100.0 * GPU_BUSY_BOUND,
            pct(s.collective),
            pct(s.collective_exposed),
            pct(if s.gpu_busy > 0.0 {
                s.collective_exposed / s.gpu_busy
            } else {
                0.0
            }),
            100.0 * COMMUNICATION_BOUND_SHARE
        ),
        busy_line,
        input_line,
    ];
    evidence.extend(period_line);
    let (verdict, fix) = if comm {
        (Bottleneck::CommunicationBound, COMMUNICATION_FIX)
    } else {
        (
            Bottleneck::ComputeBound,
            "the GPU's work is the step: make it cheaper (mixed precision with \
             `torch.autocast`/`tf.keras.mixed_precision`, channels-last, fused optimizers, \
             `torch.compile` or XLA), or accept it: the input side is not what limits the run",
        )
    };
    Verdict {
        verdict,
        level: None,
        evidence,
        fix: fix.to_owned(),
        causes: Vec::new(),
        cycles: None,
    }
}

/// The fix of a host-bound step: per-op overhead when most of the idle lies in short gaps
/// between GPU ops, else host work to move off the step.
fn host_fix(s: Shares) -> String {
    if 2.0 * s.other_idle_short >= s.other_idle {
        format!(
            "most of the idle lies in gaps under {PER_OP_GAP_US:.0} µs between GPU ops: per-op \
             launch and dispatch overhead (the framework's host time per op) sets the pace: \
             fewer, larger ops (`torch.compile`, CUDA graphs with \
             `torch.compile(mode=\"reduce-overhead\")`, XLA with `jit_compile=True`), a larger \
             batch so each op does more work, mixed precision (AMP) so the GPU's work does not \
             grow while the host's stays"
        )
    } else {
        "the host, not the GPU, sets the pace: find the CPU work in the idle gaps (the \
         profiler's CPU ops between the step's kernels: metrics, logging, Python loops, an \
         optimizer or loss on the CPU, waits on other ranks) and move it off the step, batch \
         it every N steps, or overlap it with the GPU's work"
            .to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(data: f64, transfer: f64, sync: f64, launch: f64) -> Shares {
        Shares {
            gpu_busy: 1.0 - data - transfer - sync - launch,
            compute: 0.5,
            data_wait: data,
            transfer,
            sync_wait: sync,
            launch_wait: launch,
            median_step: MedianShares {
                input: data + transfer,
                sync_wait: sync,
                launch_wait: launch,
                other_idle: 0.0,
                collective_exposed: 0.0,
            },
            ..Shares::default()
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
        // Judged only below GPU_BUSY_BOUND: the rest of the idle elsewhere.
        let mut m = shares(0.0, 0.0, HOST_STALL_MODERATE, 0.0);
        m.gpu_busy = 0.8;
        let m = j(m);
        assert_eq!(
            (m.verdict, m.level),
            (Bottleneck::SyncBound, Some(Level::Moderate))
        );
        let mut host = shares(0.0, 0.0, 0.0, 0.0);
        host.other_idle = 0.3;
        host.gpu_busy = 0.7;
        host.median_step.other_idle = 0.3;
        assert_eq!(j(host).verdict, Bottleneck::HostBound);
        // The largest high cause wins.
        assert_eq!(
            j(shares(0.21, 0.0, 0.3, 0.0)).verdict,
            Bottleneck::SyncBound
        );
    }

    #[test]
    fn a_busy_gpu_is_gpu_bound_whatever_its_idle_holds() {
        let j = |s| judge(s, None, LaunchStats::default(), 0.0, 100.0);
        // 92 % busy, the 8 % idle all data wait: past the moderate input level, yet the
        // GPU's work is the step.
        let mut s = shares(0.08, 0.0, 0.0, 0.0);
        assert_eq!(j(s).verdict, Bottleneck::ComputeBound);
        assert!(j(s).causes.is_empty());
        // Collectives 60 % of the step: overlapped with compute they cost nothing; exposed
        // they are the step.
        s.collective = 0.6;
        assert_eq!(j(s).verdict, Bottleneck::ComputeBound);
        s.collective_exposed = 0.55;
        assert_eq!(j(s).verdict, Bottleneck::CommunicationBound);
        // Exposed host-to-device copies are input time, not the GPU's own work.
        let mut t = shares(0.0, 0.25, 0.0, 0.0);
        t.gpu_busy = 1.0;
        t.h2d = 0.25;
        assert_eq!(j(t).verdict, Bottleneck::TransferBound);
    }
}
