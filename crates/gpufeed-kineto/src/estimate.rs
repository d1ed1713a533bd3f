//! What fixing each cause of a rank is worth: the median step with that cause alone
//! removed (`if_fixed`), from the steps' own figures (see `docs/what-if.md` for the model
//! and its limits).
//!
//! Each step's GPU idle is already charged to one cause ([`crate::steps`]). Removing a
//! cause takes its idle out of every step; the step then lasts the rest of its time, and
//! never less than the GPU's own work in it:
//!
//! | cause | taken out of each step | the step never shorter than |
//! |---|---|---|
//! | input-bound | data wait | GPU busy |
//! | transfer-bound | copy wait + host-to-device copy time no compute overlaps | GPU busy less those copies |
//! | sync-bound | idle after host synchronisations | GPU busy |
//! | launch-bound | idle in short gaps between kernels | GPU busy |
//! | host-bound | idle with the host elsewhere | GPU busy |
//! | communication-bound | collectives with no compute beside them | GPU busy less those collectives |
//!
//! The estimate is the median over the steps of those times, against the median step now.
//! With several ranks the run goes at the rank that sets its pace (the straggler, else the
//! slowest): a cause of another rank gains the run nothing until that rank is fixed, and
//! its estimate says so ([`for_run`]).

use gpufeed_contract::IfFixed;
use gpufeed_stats::summary::median;

use crate::steps::StepFigures;
use crate::verdict::{Bottleneck, CauseShare};

/// What a fix of `b` takes out of a step, and the floor it leaves (µs).
fn removed(b: Bottleneck, s: &StepFigures) -> Option<(f64, f64)> {
    Some(match b {
        Bottleneck::InputBound => (s.data_wait_us, s.gpu_busy_us),
        Bottleneck::TransferBound => (s.copy_wait_us + s.h2d_us, s.gpu_busy_us - s.h2d_us),
        Bottleneck::SyncBound => (s.sync_wait_us, s.gpu_busy_us),
        Bottleneck::LaunchBound => (s.launch_wait_us, s.gpu_busy_us),
        Bottleneck::HostBound => (s.other_idle_us, s.gpu_busy_us),
        Bottleneck::CommunicationBound => (
            s.collective_exposed_us,
            s.gpu_busy_us - s.collective_exposed_us,
        ),
        Bottleneck::Oscillating | Bottleneck::ComputeBound => {
            return None;
        }
    })
}

/// The sentence each estimate takes for granted.
fn assumes(b: Bottleneck) -> &'static str {
    match b {
        Bottleneck::InputBound => {
            "loader workers make each batch while the GPU runs the step before (free cores, \
             batches ready in time), so the GPU's idle while the host fetched the batch goes \
             and the rest of the step, host and GPU, stays as measured"
        }
        Bottleneck::TransferBound => {
            "copies from pinned memory run ahead of the step on their own stream, so the idle \
             while the host issued them and the copy time no compute overlapped go, and the \
             GPU's compute stays as measured"
        }
        Bottleneck::SyncBound => {
            "without the synchronisations the host queues work ahead of the GPU, so the idle \
             after each goes and no other wait takes its place"
        }
        Bottleneck::LaunchBound => {
            "fusion or CUDA graphs remove the short gaps between kernels without making the \
             kernels slower"
        }
        Bottleneck::HostBound => {
            "the host's other work moves off the step or overlaps the GPU's, so the GPU's idle \
             while the host was elsewhere goes"
        }
        Bottleneck::CommunicationBound => {
            "the collectives overlap the compute (or take less time), so the communication \
             with no compute beside it goes and the GPU's other work stays as measured"
        }
        Bottleneck::Oscillating | Bottleneck::ComputeBound => "",
    }
}

/// The median step (ms) over `steps` with cause `b` removed; `None` for a verdict with no
/// step-time model or without steps.
#[must_use]
pub fn fixed_median_ms(b: Bottleneck, steps: &[StepFigures]) -> Option<f64> {
    let v: Vec<f64> = steps
        .iter()
        .map(|s| removed(b, s).map(|(gone, floor)| (s.dur_us - gone).max(floor).max(0.0) / 1e3))
        .collect::<Option<_>>()?;
    (!v.is_empty()).then(|| median(&v))
}

/// Fills each cause's `if_fixed` from a rank's steps and its median step (ms), and orders
/// the causes by gain.
pub fn fill(causes: &mut [CauseShare], steps: &[StepFigures], median_ms: f64) {
    for c in causes.iter_mut() {
        c.if_fixed = fixed_median_ms(c.bottleneck, steps)
            .and_then(|ms| IfFixed::new(median_ms, ms, assumes(c.bottleneck)));
    }
    sort_causes(causes);
}

/// Orders causes by gain, the largest first.
pub fn sort_causes(causes: &mut [CauseShare]) {
    gpufeed_contract::estimate::sort_by_gain(causes, |c| c.if_fixed.as_ref());
}

/// A cause of rank `rank`, whose median step is `own_ms`, in a run paced by rank `pace` at
/// `pace_ms`: the run's step is the pace rank's, so fixing another rank gains it nothing
/// until that one is fixed. The estimate becomes the run's, and says so.
pub fn for_run(f: &mut IfFixed, rank: u32, own_ms: f64, pace: u32, pace_ms: f64) {
    if rank == pace || pace_ms.is_nan() || pace_ms <= 0.0 {
        return;
    }
    let own = f.step_ms;
    f.step_ms = own.max(pace_ms);
    f.speedup = pace_ms / f.step_ms;
    f.assumes = format!(
        "{}; but rank {rank} is not the rank that sets the run's pace (rank {pace}, median step \
         {pace_ms:.1} ms): the run gains nothing from this fix until rank {pace} is fixed (rank \
         {rank} alone would go from {own_ms:.1} to {own:.1} ms)",
        f.assumes
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(dur: f64, busy: f64, data: f64, sync: f64) -> StepFigures {
        StepFigures {
            dur_us: dur,
            gpu_busy_us: busy,
            data_wait_us: data,
            sync_wait_us: sync,
            ..StepFigures::default()
        }
    }

    /// Known truth: each generated case is the compute-bound case plus one stall, so the
    /// step without that stall is the compute-bound case's step.
    #[test]
    fn a_generated_stall_fixed_leaves_the_compute_bound_step() {
        use crate::read::read_from;
        use crate::synth::{Case, generate};
        use std::path::Path;
        let median = |case: &Case| {
            let t = read_from(&generate(case, 0)[..], Path::new("t.json"))
                .unwrap_or_else(|e| panic!("{e}"));
            crate::analyze(Path::new("t"), vec![t], crate::Options::default())
        };
        let base = median(&Case::compute_bound()).ranks[0]
            .step_time
            .as_ref()
            .map_or(0.0, |s| s.median_ms);
        assert!(base > 0.0);
        for case in [
            Case::input_bound(),
            Case::transfer_bound(),
            Case::sync_bound(),
        ] {
            let r = median(&case);
            let c = &r.ranks[0].causes[0];
            let f = c.if_fixed.as_ref().unwrap_or_else(|| panic!("{c:?}"));
            assert!(
                (f.step_ms / base - 1.0).abs() < 0.01 && f.speedup > 1.4,
                "{}: {} ms against {base} ms",
                case.name,
                f.step_ms
            );
        }
    }

    #[test]
    fn each_cause_comes_out_of_its_own_steps() {
        let steps = [
            step(100e3, 50e3, 40e3, 10e3),
            step(120e3, 50e3, 60e3, 10e3),
            step(110e3, 50e3, 50e3, 10e3),
        ];
        let ms = |b| fixed_median_ms(b, &steps).unwrap_or(f64::NAN);
        assert!((ms(Bottleneck::InputBound) - 60.0).abs() < 1e-9);
        assert!((ms(Bottleneck::SyncBound) - 100.0).abs() < 1e-9);
        assert!(fixed_median_ms(Bottleneck::ComputeBound, &steps).is_none());
        let mut f = IfFixed::new(110.0, 60.0, "x").unwrap_or_else(|| panic!("valid"));
        for_run(&mut f, 1, 110.0, 0, 150.0);
        assert!((f.speedup - 1.0).abs() < 1e-12 && f.step_ms == 150.0);
        assert!(f.assumes.contains("gains nothing"), "{}", f.assumes);
    }
}
