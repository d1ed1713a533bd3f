//! Causes from the user's running job (`analyze --attach PID`): `gpufeed attach`'s
//! document of its training thread's samples.
//!
//! The job is the user's own, so every cause here is [`Source::YourRun`] and takes the
//! attach document's own fix (which names the user's line).
//!
//! | id | when | cost (`lost_share`) |
//! |---|---|---|
//! | `running-input-bound` | the attach verdict is `input-bound` (data wait at or above [`INPUT_BOUND_MODERATE`] of the samples) | the data-wait share of the samples |
//! | `running-sync-bound` | the attach verdict is `sync-bound` (sync waits at or above [`HOST_STALL_MODERATE`] while the GPU idles, or short and frequent without a GPU reading) | the sync share of the samples |
//!
//! A `compute-bound` job is no cause (the verdict sentence says so when nothing else is
//! found), nor is an `undetermined` one.
//!
//! [`INPUT_BOUND_MODERATE`]: gpufeed_stats::thresholds::INPUT_BOUND_MODERATE
//! [`HOST_STALL_MODERATE`]: gpufeed_stats::thresholds::HOST_STALL_MODERATE

use gpufeed_contract::{Attach, AttachVerdict};

use super::{names, pct, secs};
use crate::model::{Cause, Severity, Source};

/// The stage whose evidence the running job's samples are.
pub(crate) const STAGE: &str = "attach";

/// The causes of the running job's samples.
pub(crate) fn causes(a: &Attach) -> Option<Cause> {
    let (id, title, share, what, thresholds): (_, _, _, _, &[&str]) = match a.verdict {
        AttachVerdict::InputBound => (
            "running-input-bound",
            "input-bound (your running job)",
            a.shares.data_wait,
            "waited for data",
            &["INPUT_BOUND_MODERATE", "INPUT_BOUND_HIGH"],
        ),
        AttachVerdict::SyncBound => (
            "running-sync-bound",
            "sync-bound (your running job)",
            a.shares.sync,
            "waited in host-device syncs while the GPU idled",
            if a.gpus.is_some() {
                &["HOST_STALL_MODERATE", "HOST_STALL_HIGH"]
            } else {
                &[
                    "HOST_STALL_MODERATE",
                    "HOST_STALL_HIGH",
                    "ATTACH_SYNC_SHORT_MS",
                    "ATTACH_SYNC_FREQUENT_PER_S",
                ]
            },
        ),
        AttachVerdict::ComputeBound | AttachVerdict::Undetermined => return None,
    };
    Some(Cause {
        rank: 0,
        id: id.to_owned(),
        title: title.to_owned(),
        summary: format!(
            "the training thread of process {} {what} in {} of {} stack samples over {} \
             (gpufeed attach, without stopping it)",
            a.pid,
            pct(share),
            a.samples,
            secs(a.window_s)
        ),
        lost_share: Some(share),
        severity: Severity::Warning,
        evidence: a.evidence.clone(),
        thresholds: names(thresholds),
        fix: a.fix.clone(),
        stages: vec![STAGE.to_owned()],
        source: Source::YourRun,
        if_fixed: None,
        no_estimate: Some(match &a.if_fixed {
            Some(f) => format!(
                "stack samples give shares of the loop's time, not its step time: fixing it \
                 would give {} the steps per second (the attach document's `if_fixed`); \
                 record the loop with gpufeed.StepTimer (or a profiler trace) for step times",
                gpufeed_contract::estimate::speedup_text(f.speedup)
            ),
            None => "stack samples give shares of the loop's time, not its step time: record \
                     the loop with gpufeed.StepTimer (or a profiler trace) for an estimate"
                .to_owned(),
        }),
    })
}
