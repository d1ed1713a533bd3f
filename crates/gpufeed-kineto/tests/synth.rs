//! The generator's cases: each verdict found where it is built in, none where it is not,
//! the idle breakdown equal to the generator's own tally, in PyTorch and TensorFlow format.

// Test helpers outside `#[test]` fns: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use gpufeed_kineto::synth::{Case, generate_with_truth};
use gpufeed_kineto::{Options, Report, analyze, read};

fn run(case: &Case) -> (Report, Vec<gpufeed_kineto::synth::Truth>) {
    let mut traces = Vec::new();
    let mut truths = Vec::new();
    for rank in 0..case.ranks {
        let (bytes, truth) = generate_with_truth(case, rank);
        let name = format!("{}-rank{rank}.json", case.name);
        traces.push(read::read_from(&bytes[..], Path::new(&name)).unwrap());
        truths.push(truth);
    }
    (
        analyze(Path::new(case.name), traces, Options::default()),
        truths,
    )
}

fn check(case: &Case) {
    let (r, truths) = run(case);
    let label = format!("{} ({:?})", case.name, case.flavor);
    assert_eq!(r.ranks.len(), case.ranks, "{label}");
    assert_eq!(
        r.verdict.map(|v| v.as_str()),
        Some(case.expect),
        "{label}: {:#?}",
        r.ranks
            .iter()
            .map(|x| (&x.verdict, &x.evidence))
            .collect::<Vec<_>>()
    );
    for (rank, truth) in r.ranks.iter().zip(&truths) {
        let s = &rank.idle_breakdown[0];
        let close = |a: f64, b: f64| (a - b).abs() <= 1.0 + 1e-3 * b;
        assert!(
            close(s.host_wait_us, truth.host_wait_us),
            "{label}: host wait {s:?} vs {truth:?}"
        );
        assert!(
            close(s.kernel_wait_us, truth.kernel_wait_us),
            "{label}: kernel wait {s:?} vs {truth:?}"
        );
        assert!(
            close(s.other_us, truth.other_us),
            "{label}: other {s:?} vs {truth:?}"
        );
        let t = rank.temporal.unwrap();
        assert!(
            close(t.span_us, truth.span_us),
            "{label}: span {t:?} vs {truth:?}"
        );
        assert!(
            close(t.span_us - t.idle_us, truth.busy_us),
            "{label}: busy {t:?} vs {truth:?}"
        );
    }
    if case.straggler.is_some() {
        let s = r.straggler.as_ref().unwrap();
        assert_eq!(
            Some(s.rank as usize),
            case.straggler.map(|x| x.0),
            "{label}"
        );
        for rank in r.ranks.iter().filter(|x| x.rank != s.rank) {
            assert_eq!(
                rank.verdict.map(|v| v.as_str()),
                Some("compute-bound"),
                "{label}"
            );
        }
    } else {
        assert!(r.straggler.is_none(), "{label}: {:?}", r.straggler);
    }
    // The verdict's rank lists its cause among `causes` (what `analyze` ranks); a
    // compute-bound rank lists none.
    let judged = r
        .ranks
        .iter()
        .find(|x| Some(x.rank) == r.verdict_rank)
        .unwrap();
    let listed: Vec<&str> = judged
        .causes
        .iter()
        .map(|c| c.bottleneck.as_str())
        .collect();
    match case.expect {
        "compute-bound" => assert!(listed.is_empty(), "{label}: {listed:?}"),
        "oscillating" => {}
        expect => assert!(listed.contains(&expect), "{label}: {listed:?}"),
    }
    for w in judged.causes.windows(2) {
        assert!(w[0].share >= w[1].share, "{label}: largest first");
    }
    if case.expect == "oscillating" {
        let st = r.ranks[0].step_time.as_ref().unwrap();
        assert_eq!(st.period_steps, case.slow_every.map(|x| x.0), "{label}");
    }
}

#[test]
fn every_case_in_pytorch_format() {
    for case in Case::all() {
        check(&case);
    }
}

#[test]
fn every_case_in_tensorflow_format() {
    for case in Case::all().into_iter().filter(|c| c.ranks == 1) {
        check(&case.tensorflow());
    }
}

/// A case's cause, removed, takes its verdict with it: none is found where it is absent.
#[test]
fn no_cause_without_its_evidence() {
    let base = Case::compute_bound();
    let (r, _) = run(&base);
    let s = r.ranks[0].shares.unwrap();
    assert!(s.data_wait < 0.05 && s.transfer < 0.05, "{s:?}");
    assert!(s.sync_wait < 0.05 && s.launch_wait < 0.05, "{s:?}");
    // Pinned copies of the same size are still copies, but the fix does not blame pageable
    // memory.
    let pinned = Case {
        pageable: false,
        ..Case::transfer_bound()
    };
    let (r, _) = run(&pinned);
    let fix = r.ranks[0].fix.clone().unwrap();
    assert!(!fix.contains("pageable"), "{fix}");
    let (r, _) = run(&Case::transfer_bound());
    assert!(r.ranks[0].fix.clone().unwrap().contains("pageable"));
}
