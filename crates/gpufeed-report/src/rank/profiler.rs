//! Causes from the user's profiler trace (`analyze --trace` with a PyTorch or TensorFlow
//! profiler trace): the `profiler` document of `gpufeed_kineto`.
//!
//! The trace is the user's own run, so every cause here is [`Source::YourRun`] and takes
//! gpufeed-kineto's own fix (which names PyTorch's and tf.data's settings, not gpufeed's
//! loader). The rank judged is the run's (`verdict_rank`: the straggler, else the slowest
//! rank), since a distributed run goes at its slowest rank.
//!
//! | id | when | cost (`lost_share`) |
//! |---|---|---|
//! | `input-bound`, `transfer-bound`, `sync-bound`, `launch-bound`, `host-bound` | the rank's share of the step past its moderate threshold (gpufeed-kineto's `causes`) | that share of the step time |
//! | `step-stall` | the rank's step times repeat a cycle (gpufeed-stats) | `(mean - median) / mean` of its step times |
//! | `straggler` | a rank's mean step time (else idle share) is an outlier among three or more ranks (modified Z-score) | by step time `(value - median) / value`: the share of the run's step the others wait; by idle share the extra idle, as a share of the span |

use gpufeed_kineto::report::{RankReport, StragglerBy};
use gpufeed_kineto::{Bottleneck, CauseShare};
use gpufeed_stats::StepVerdict;
use gpufeed_stats::summary::stall_share;
use gpufeed_stats::thresholds::{INPUT_BOUND_MODERATE, OUTLIER_MODIFIED_Z, PERIOD_MIN_STRENGTH};

use super::{ms, names, pct};
use crate::model::{Cause, Profiler, Severity, Source};

/// The stage whose evidence a profiler trace is: it stands in for the step profile.
pub(crate) const STAGE: &str = "profile step";

/// The rank the run's verdict is about.
pub(crate) fn judged_rank(p: &Profiler) -> Option<&RankReport> {
    let rank = p.verdict_rank?;
    p.ranks.iter().find(|r| r.rank == rank)
}

/// "your profiled run" or "your profiled run (rank 2 of 4, the straggler)".
fn whose(p: &Profiler, r: &RankReport) -> String {
    if p.ranks.len() < 2 {
        return "your profiled run".to_owned();
    }
    let why = match &p.straggler {
        Some(s) if s.rank == r.rank => "the straggler",
        _ => "the slowest",
    };
    format!(
        "your profiled run (rank {} of {}, {why})",
        r.rank,
        p.ranks.len()
    )
}

/// The figures every cause of the rank quotes: its steps and the GPU's busy share.
fn steps_line(p: &Profiler, r: &RankReport) -> Option<String> {
    let (st, sh) = (r.step_time.as_ref()?, r.shares?);
    Some(format!(
        "{} steps of `{}` analysed ({}): mean {}, median {}; GPU busy {} of the step \
         (compute {})",
        st.samples,
        r.file,
        p.format.name(),
        ms(st.mean_ms),
        ms(st.median_ms),
        pct(sh.gpu_busy),
        pct(sh.compute)
    ))
}

/// The other ranks' verdicts, when there are others.
fn others_line(p: &Profiler, r: &RankReport) -> Option<String> {
    let others: Vec<String> = p
        .ranks
        .iter()
        .filter(|o| o.rank != r.rank)
        .map(|o| {
            format!(
                "{} {}",
                o.rank,
                o.verdict.map_or("not judged", Bottleneck::as_str)
            )
        })
        .collect();
    (!others.is_empty()).then(|| format!("the other ranks: {}", others.join(", ")))
}

/// The title and the subject of a cause's summary.
fn words(b: Bottleneck) -> (&'static str, &'static str) {
    match b {
        Bottleneck::InputBound => (
            "input-bound step",
            "the GPU waits for data (data wait plus host-to-device copies)",
        ),
        Bottleneck::TransferBound => (
            "transfer-bound step",
            "the GPU waits for host-to-device copies (copies plus data wait)",
        ),
        Bottleneck::SyncBound => (
            "host synchronisations stall the GPU",
            "the GPU idles after the host synchronised with it",
        ),
        Bottleneck::LaunchBound => (
            "launch-bound step",
            "the GPU idles in short gaps between kernels (launch overhead)",
        ),
        Bottleneck::HostBound => (
            "host-bound step",
            "the GPU idles while the host does other work",
        ),
        Bottleneck::Oscillating => ("periodic step stall", "the step time repeats a cycle"),
        Bottleneck::ComputeBound => ("compute-bound step", "the GPU's work is the step"),
        Bottleneck::CommunicationBound => (
            "communication-bound step",
            "the GPU is busy, most of it in collectives",
        ),
    }
}

fn cause(id: &str, title: &str, summary: String, lost: f64, evidence: Vec<String>) -> Cause {
    Cause {
        rank: 0,
        id: id.to_owned(),
        title: title.to_owned(),
        summary,
        lost_share: Some(lost.clamp(0.0, 1.0)),
        severity: Severity::Warning,
        evidence,
        thresholds: Vec::new(),
        fix: String::new(),
        stages: vec![STAGE.to_owned()],
        source: Source::YourRun,
        if_fixed: None,
        no_estimate: Some(
            "no step-time model for it: the estimates are on the causes of the rank's idle"
                .to_owned(),
        ),
    }
}

/// A cause of the judged rank past its moderate threshold.
fn share_cause(p: &Profiler, r: &RankReport, c: &CauseShare) -> Cause {
    let (title, subject) = words(c.bottleneck);
    let level = match c.level {
        gpufeed_stats::thresholds::Level::High => "high",
        gpufeed_stats::thresholds::Level::Moderate => "moderate",
    };
    let mut evidence = vec![c.evidence.clone()];
    evidence.extend(steps_line(p, r));
    evidence.extend(others_line(p, r));
    let mut out = cause(
        c.bottleneck.as_str(),
        title,
        format!(
            "in {}, {subject} {} of the step ({level})",
            whose(p, r),
            pct(c.share)
        ),
        c.share,
        evidence,
    );
    out.thresholds = match c.bottleneck {
        Bottleneck::InputBound | Bottleneck::TransferBound => {
            names(&["INPUT_BOUND_MODERATE", "INPUT_BOUND_HIGH"])
        }
        Bottleneck::LaunchBound => {
            names(&["HOST_STALL_MODERATE", "HOST_STALL_HIGH", "KERNEL_WAIT_US"])
        }
        _ => names(&["HOST_STALL_MODERATE", "HOST_STALL_HIGH"]),
    };
    out.fix = c.fix.clone();
    out.if_fixed.clone_from(&c.if_fixed);
    out.no_estimate = c
        .if_fixed
        .is_none()
        .then(|| "the rank's steps give no estimate".to_owned());
    out
}

/// A cycle in the judged rank's step times.
fn cycle_cause(p: &Profiler, r: &RankReport) -> Option<Cause> {
    let st = r.step_time.as_ref()?;
    let period = st.period_steps?;
    if st.series_verdict != StepVerdict::Oscillating {
        return None;
    }
    let lost = stall_share(st.mean_ms, st.median_ms);
    if lost <= 0.0 {
        return None;
    }
    let mut evidence = vec![format!(
        "step time mean {}, median {}, max {}, cv {:.2}; autocorrelation {:.2} at a lag of \
         {period} steps (a period needs >= {PERIOD_MIN_STRENGTH}): {} of the time is above the \
         median step",
        ms(st.mean_ms),
        ms(st.median_ms),
        ms(st.max_ms),
        st.cv,
        st.period_strength.unwrap_or(f64::NAN),
        pct(lost)
    )];
    evidence.extend(steps_line(p, r));
    let mut c = cause(
        "step-stall",
        "periodic step stall",
        format!(
            "in {}, a slow step every {period} steps: max {} against a median of {}",
            whose(p, r),
            ms(st.max_ms),
            ms(st.median_ms)
        ),
        lost,
        evidence,
    );
    c.thresholds = names(&["STEP_CV_OSCILLATING", "PERIOD_MIN_STRENGTH"]);
    c.fix = match (r.verdict, &r.fix) {
        (Some(Bottleneck::Oscillating), Some(fix)) => fix.clone(),
        _ => format!(
            "a cycle in the step time is a periodic stall: compare its period ({period} steps) \
             with the number of loader workers, the logging and checkpoint intervals, and any \
             host sync every N steps"
        ),
    };
    Some(c)
}

/// The straggler among the ranks.
fn straggler_cause(p: &Profiler) -> Option<Cause> {
    let s = p.straggler.as_ref()?;
    let (what, lost) = match s.by {
        StragglerBy::StepTime if s.value > 0.0 => (
            format!(
                "its mean step is {} against a median of {} over the {} ranks",
                ms(s.value),
                ms(s.median),
                p.ranks.len()
            ),
            (s.value - s.median) / s.value,
        ),
        StragglerBy::StepTime => return None,
        StragglerBy::IdleShare => (
            format!(
                "its GPU idles {:.1} % of the span against a median of {:.1} % over the {} ranks",
                s.value,
                s.median,
                p.ranks.len()
            ),
            (s.value - s.median) / 100.0,
        ),
        // Under collectives the others wait for it: the gap in the share is the step time
        // they lose.
        StragglerBy::ComputeShare | StragglerBy::CollectiveWait => (
            format!("its {} over the {} ranks", s.describe(), p.ranks.len()),
            (s.value - s.median).abs() / 100.0,
        ),
    };
    let verdict = p
        .ranks
        .iter()
        .find(|r| r.rank == s.rank)
        .and_then(|r| r.verdict)
        .map_or("not judged", Bottleneck::as_str);
    let mut c = cause(
        "straggler",
        "straggler rank",
        format!(
            "in your profiled run, rank {} holds the others back: {what}",
            s.rank
        ),
        lost,
        vec![
            format!(
                "modified Z-score {:.1} (an outlier above {OUTLIER_MODIFIED_Z}, Iglewicz and \
                 Hoaglin's MAD rule); a distributed run goes at its slowest rank",
                s.z
            ),
            format!("rank {}'s own verdict: {verdict}", s.rank),
        ],
    );
    c.thresholds = names(&["OUTLIER_MODIFIED_Z"]);
    c.fix = format!(
        "look at rank {} alone: its own causes are listed beside this one; a straggler is most \
         often a slower input pipeline on its node, a host shared with other jobs, or a GPU \
         that throttles (run `gpufeed doctor` on that node)",
        s.rank
    );
    Some(c)
}

/// Every cause the trace shows.
pub(crate) fn causes(p: &Profiler) -> Vec<Cause> {
    let mut out = Vec::new();
    if let Some(r) = judged_rank(p) {
        out.extend(r.causes.iter().map(|c| share_cause(p, r, c)));
        out.extend(cycle_cause(p, r));
    }
    out.extend(straggler_cause(p));
    out
}

/// The sentence of a GPU-bound run (compute- or communication-bound), for the report's
/// verdict: no starvation, the GPU is busy nearly the whole step.
pub(crate) fn compute_bound(p: &Profiler) -> Option<String> {
    let r = judged_rank(p)?;
    let s = r.shares?;
    match r.verdict? {
        Bottleneck::ComputeBound => Some(format!(
            "{} is compute-bound: the GPU is busy {} of the step, data wait and copies are {}, \
             below TF Profiler's {} for moderately input-bound",
            whose(p, r),
            pct(s.gpu_busy),
            pct(s.input()),
            pct(INPUT_BOUND_MODERATE)
        )),
        Bottleneck::CommunicationBound => Some(format!(
            "{} is communication-bound: the GPU is busy {} of the step, collectives (NCCL/RCCL) \
             {} of the step with no compute beside them: the interconnect, or a rank the \
             collectives wait for, sets the pace{}",
            whose(p, r),
            pct(s.gpu_busy),
            pct(s.collective_exposed),
            r.fix
                .as_deref()
                .map_or_else(String::new, |f| format!("; to try: {f}"))
        )),
        _ => None,
    }
}

/// Why a trace gave no verdict: no GPU events, or no steps.
pub(crate) fn unjudged(p: &Profiler) -> Option<String> {
    if p.verdict.is_some() {
        return None;
    }
    let launches: usize = p.ranks.iter().map(|r| r.window.launch_calls).sum();
    if p.ranks.iter().all(|r| r.temporal.is_none()) && launches > 0 {
        return Some(format!(
            "The profiler trace `{}` holds {launches} kernel launch call(s) but no kernel \
             records: the GPU ran, and the profiler lost what it did (its activity buffer \
             overflowed, or the kernels were launched through the driver API, as Triton's \
             are). Profile fewer steps with a `schedule`, or with a newer PyTorch.",
            p.path
        ));
    }
    if p.ranks.iter().all(|r| r.temporal.is_none()) {
        return Some(format!(
            "The profiler trace `{}` holds no GPU events (kernels, copies or sets): a CPU-only \
             profile? Profile with `ProfilerActivity.CUDA` (PyTorch) on a machine with a GPU to \
             see where the GPU idles.",
            p.path
        ));
    }
    Some(format!(
        "The profiler trace `{}` has no step markers, so no step was judged: profile with a \
         schedule and call `prof.step()` each step (PyTorch), or trace with `step_num` \
         (TensorFlow).",
        p.path
    ))
}

/// A generated run analysed, as `analyze --trace DIR` would: for the tests of the ranking
/// and the renderers.
#[cfg(test)]
pub(crate) fn profiled(case: &gpufeed_kineto::synth::Case, dir: &str) -> Profiler {
    use std::path::Path;
    let traces = (0..case.ranks)
        .map(|r| {
            let name = format!("<{}-rank{r}>.json", case.name);
            gpufeed_kineto::read::read_from(
                &gpufeed_kineto::synth::generate(case, r)[..],
                Path::new(&name),
            )
        })
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_else(|e| panic!("{e}"));
    gpufeed_kineto::analyze(Path::new(dir), traces, gpufeed_kineto::Options::default())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use gpufeed_kineto::synth::Case;

    use super::*;
    use crate::rank::{Evidence, rank, threshold, verdict};

    fn judged(p: &Profiler) -> (Vec<Cause>, String) {
        let e = Evidence {
            profiler: Some(p),
            ..Evidence::default()
        };
        let causes = rank(&e);
        let v = verdict(&e, &causes);
        (causes, v)
    }

    /// Each generated case's cause is ranked first, as the user's run's, with its fix and
    /// thresholds; none is found in the compute-bound case.
    #[test]
    fn each_case_ranks_its_cause_first() {
        for (case, id) in [
            (Case::input_bound(), "input-bound"),
            (Case::transfer_bound(), "transfer-bound"),
            (Case::sync_bound(), "sync-bound"),
            (Case::launch_bound(), "launch-bound"),
            (Case::host_bound(), "host-bound"),
        ] {
            let p = profiled(&case, case.name);
            let (causes, v) = judged(&p);
            let first = causes
                .first()
                .unwrap_or_else(|| panic!("{}: no cause", case.name));
            assert_eq!(first.id, id, "{}: {causes:#?}", case.name);
            assert_eq!(first.source, Source::YourRun);
            assert_eq!(first.stages, [STAGE]);
            assert!(first.summary.starts_with("in your profiled run,"), "{v}");
            assert!(!first.fix.is_empty() && !first.thresholds.is_empty());
            assert!(first.thresholds.iter().all(|t| threshold(t).is_some()));
            let share = p.ranks[0].causes[0].share;
            assert_eq!(first.lost_share, Some(share));
            assert!(v.starts_with("Most likely cause of starvation"), "{v}");
        }
        let p = profiled(&Case::compute_bound(), "run");
        let (causes, v) = judged(&p);
        assert!(causes.is_empty(), "{causes:#?}");
        assert!(
            v.starts_with("No starvation found: your profiled run is compute-bound"),
            "{v}"
        );
    }

    /// The straggler is a cause of its own, and the run's causes are its causes.
    #[test]
    fn the_straggler_and_its_causes() {
        let p = profiled(&Case::straggler(), "run");
        let (causes, _) = judged(&p);
        let ids: Vec<&str> = causes.iter().map(|c| c.id.as_str()).collect();
        assert!(ids.contains(&"straggler"), "{ids:?}");
        assert!(ids.contains(&"input-bound"), "{ids:?}");
        let s = causes
            .iter()
            .find(|c| c.id == "straggler")
            .unwrap_or_else(|| panic!());
        assert!(
            s.summary.contains("rank 2 holds the others back"),
            "{}",
            s.summary
        );
        assert!(s.lost_share.is_some_and(|l| l > 0.0 && l < 1.0));
        let input = causes
            .iter()
            .find(|c| c.id == "input-bound")
            .unwrap_or_else(|| panic!());
        assert!(
            input.summary.contains("rank 2 of 4, the straggler"),
            "{}",
            input.summary
        );
        assert!(
            input
                .evidence
                .iter()
                .any(|e| e.starts_with("the other ranks: 0 compute-bound"))
        );
        // Most costly first.
        for w in causes.windows(2) {
            assert!(w[0].lost_share >= w[1].lost_share, "{causes:#?}");
        }
        assert_eq!(
            crate::rank::profiler_step_ms(&p).len(),
            p.ranks[2].steps.len()
        );
    }

    /// A cycle in the step times is a stall of its own.
    #[test]
    fn a_cycle_is_a_step_stall() {
        let p = profiled(&Case::oscillating(), "run");
        let (causes, v) = judged(&p);
        let stall = causes.iter().find(|c| c.id == "step-stall");
        let stall = stall.unwrap_or_else(|| panic!("{causes:#?}"));
        assert!(
            stall.summary.contains("a slow step every 4 steps"),
            "{}",
            stall.summary
        );
        // Every 4th batch late: the data wait that makes the cycle is a cause of its own.
        assert_eq!(p.verdict, Some(Bottleneck::Oscillating));
        assert!(stall.fix.contains("period"), "{}", stall.fix);
        assert!(causes.iter().any(|c| c.id == "input-bound"), "{v}");
    }

    /// A CPU-only profile: no cause, and the verdict says why.
    #[test]
    fn a_cpu_only_profile_says_so() {
        let json = br#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add",
            "ts": 1, "dur": 2, "pid": 1, "tid": 1}]}"#;
        let p = gpufeed_kineto::analyze_bytes(json, Path::new("cpu.json"))
            .unwrap_or_else(|e| panic!("{e}"));
        let (causes, v) = judged(&p);
        assert!(causes.is_empty());
        assert!(
            v.contains("holds no GPU events (kernels, copies or sets): a CPU-only"),
            "{v}"
        );
    }
}
