//! `gpufeed compare BEFORE AFTER` and the `if_fixed` estimates behind its prediction, end to
//! end: the real ResNet-50 pair of `shared/data/kineto` (0 loader workers, then 4), step
//! recordings with known truth, utilisation logs, a distributed run with a straggler, and
//! pairs that cannot be compared.

// Test helpers outside `#[test]` fns: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use gpufeed_analysis::phase_steps::{Meta, StepRecord, write_jsonl};
use gpufeed_contract::Compare;
use serde_json::Value;

mod common;
use common::{assert_valid, example, gpufeed};

fn kineto(case: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/kineto")
        .join(case);
    assert!(
        p.is_dir(),
        "`{}` is missing: check out shared/ beside the repository",
        p.display()
    );
    p
}

/// `gpufeed compare BEFORE AFTER --format json`: the document, valid against its published
/// schema and read back by its contract type (which refuses unknown fields).
fn compare(before: &Path, after: &Path) -> (Compare, Value) {
    let out = gpufeed()
        .arg("compare")
        .arg(before)
        .arg(after)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_valid("compare", &value);
    (serde_json::from_value(value.clone()).unwrap(), value)
}

fn text(before: &Path, after: &Path) -> String {
    let out = gpufeed()
        .arg("compare")
        .arg(before)
        .arg(after)
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// The real pair: the estimate made from the 0-worker trace alone against the
/// 4-worker trace's measured median step, within 15 %.
#[test]
fn resnet50_nw0_predicts_nw4_within_15_percent() {
    let (nw0, nw4) = (kineto("resnet50_nw0"), kineto("resnet50_nw4"));
    let (c, _) = compare(&nw0, &nw4);
    let p = c.prediction.as_ref().unwrap();
    println!(
        "resnet50 nw0 -> nw4: median step {:.1} ms; predicted {:.1} ms; measured {:.1} ms \
         ({:+.1} %)\n{}",
        p.before_ms,
        p.predicted_ms,
        p.measured_ms,
        100.0 * p.error,
        text(&nw0, &nw4)
    );
    assert_eq!(p.cause, "input-bound");
    assert!((p.before_ms - 176.5).abs() < 0.5, "{p:?}");
    assert!((p.measured_ms - 126.8).abs() < 0.5, "{p:?}");
    assert!(p.error.abs() <= 0.15, "{p:?}");
    assert_eq!(c.causes_gone, ["input-bound"]);
    assert!((c.speedup.unwrap() - 176.5 / 126.8).abs() < 0.01);
    let data = c.shares.iter().find(|s| s.name == "data_wait").unwrap();
    assert!(data.change < -0.3, "{data:?}");
    // The trace's own document carries the estimate, with its assumption.
    let out = gpufeed()
        .arg("trace")
        .arg(&nw0)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cause = &doc["ranks"][0]["causes"][0];
    assert_eq!(cause["bottleneck"], "input-bound");
    assert_eq!(cause["if_fixed"]["step_ms"].as_f64(), Some(p.predicted_ms));
    assert!(
        cause["if_fixed"]["assumes"]
            .as_str()
            .unwrap()
            .contains("workers")
    );
    let out = gpufeed().arg("trace").arg(&nw0).output().unwrap();
    let t = String::from_utf8(out.stdout).unwrap();
    assert!(
        t.contains("fix the input pipeline: 176 -> ~116 ms per step (1.5x)"),
        "{t}"
    );
}

fn recording(dir: &Path, name: &str, data_ms: f64, batch: Option<u64>) -> PathBuf {
    let p = dir.join(name);
    let steps: Vec<StepRecord> = (0..30)
        .map(|i| {
            let jitter = f64::from(i % 3);
            StepRecord {
                total_ms: data_ms + 30.0 + jitter,
                phases: vec![
                    ("data_wait".into(), data_ms),
                    ("forward".into(), 30.0 + jitter),
                ],
                items: None,
            }
        })
        .collect();
    let meta = Meta {
        source: "python StepTimer".to_owned(),
        sync: true,
        warmup: 0,
        batch_size: batch,
    };
    write_jsonl(&p, &meta, &steps).unwrap();
    p
}

/// Known truth: a loop waiting 40 ms for each batch predicts its 31 ms step without the
/// wait; the fixed loop waits 1 ms.
#[test]
fn step_recordings_compare_with_their_prediction() {
    let tmp = tempfile::tempdir().unwrap();
    let before = recording(tmp.path(), "before.jsonl", 40.0, Some(8));
    let after = recording(tmp.path(), "after.jsonl", 1.0, Some(8));
    let (c, _) = compare(&before, &after);
    assert_eq!(c.before.verdict.as_deref(), Some("input-bound"));
    let p = c.prediction.unwrap();
    assert!((p.predicted_ms - 31.0).abs() < 1e-9, "{p:?}");
    assert!((p.measured_ms - 32.0).abs() < 1e-9, "{p:?}");
    assert!((c.speedup.unwrap() - 71.0 / 32.0).abs() < 1e-9);
    // Other batch sizes: samples per second are compared, and no step prediction.
    let bigger = recording(tmp.path(), "bigger.jsonl", 1.0, Some(16));
    let (c, v) = compare(&before, &bigger);
    assert_eq!(v["speedup_by"], "samples-per-s");
    assert!(c.prediction.is_none());
    assert!(c.notes[0].contains("batch sizes differ"), "{:?}", c.notes);
}

/// Utilisation logs have no steps: utilisation and idle are compared, with no speedup.
#[test]
fn utilisation_logs_compare_without_a_speedup() {
    let log = example("nvidia-smi-2gpu.csv");
    let (c, v) = compare(&log, &log);
    assert!(v.get("speedup").is_none() && c.prediction.is_none());
    assert!(c.before.util_mean.is_some() && c.before.idle_share.is_some());
    assert!(c.shares.iter().any(|s| s.name == "idle"));
}

/// Two kinds are refused in one line naming both.
#[test]
fn different_kinds_are_refused_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let rec = recording(tmp.path(), "steps.jsonl", 40.0, None);
    let out = gpufeed()
        .arg("compare")
        .arg(kineto("resnet50_nw0"))
        .arg(&rec)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("a profiler trace") && err.contains("a step recording"),
        "{err}"
    );
}

/// In a distributed run the step is the straggler's: its fix brings the run to the other
/// ranks' step (the generated straggler is the others plus a slow loader).
#[test]
fn the_stragglers_fix_brings_the_run_to_the_other_ranks_step() {
    use gpufeed_kineto::synth::{Case, generate};
    let dir = tempfile::tempdir().unwrap();
    let case = Case::straggler();
    for rank in 0..case.ranks {
        let p = dir.path().join(format!("rank-{rank}.pt.trace.json"));
        fs_err::write(&p, generate(&case, rank)).unwrap();
    }
    let out = gpufeed()
        .arg("trace")
        .arg(dir.path())
        .args(["--format", "json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pace = doc["verdict_rank"].as_u64().unwrap();
    let ranks = doc["ranks"].as_array().unwrap();
    let others: Vec<f64> = ranks
        .iter()
        .filter(|r| r["rank"].as_u64() != Some(pace))
        .map(|r| r["step_time"]["median_ms"].as_f64().unwrap())
        .collect();
    let fixed = ranks
        .iter()
        .find(|r| r["rank"].as_u64() == Some(pace))
        .unwrap()["causes"][0]["if_fixed"]["step_ms"]
        .as_f64()
        .unwrap();
    for o in others {
        assert!((fixed / o - 1.0).abs() < 0.01, "{fixed} against {o}");
    }
}
