//! `gpufeed trace` end to end: the built binary on fixtures of every input format.
//!
//! JSON output is deserialised into the contract's documents (gpufeed-contract: `util`,
//! `steps`, `phase-steps`), whose types reject unknown fields, so a field added or renamed
//! without changing the contract fails here.
//! Fixtures come from `tests/fixtures/make_fixtures.py` (committed outputs; no Python at
//! test time).

// Test helpers outside `#[test]` fns: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

mod common;
use common::{example, gpufeed};
use gpufeed_contract::Util;

/// The `steps` document, as its writer defines it (gpufeed-contract).
use gpufeed_contract::Steps;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Runs `gpufeed trace FILE --format json [extra]`, expects success, returns stdout.
fn trace_json(file: &Path, extra: &[&str]) -> String {
    let out = gpufeed()
        .arg("trace")
        .arg(file)
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}: {stderr}",
        out.status.code()
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        stdout.trim_end().lines().count(),
        1,
        "one JSON document on one line"
    );
    stdout
}

/// Checks the 2-GPU fixture: GPU 0 oscillates 2/40 % every 1.5 s, GPU 1 is well fed.
fn check_two_gpus(r: &Util) {
    assert_eq!(
        r.schema_version,
        <Util as gpufeed_contract::Document>::VERSION
    );
    assert_eq!(r.samples, 1200);
    assert!(
        (r.interval_s - 0.1).abs() < 0.005,
        "interval {}",
        r.interval_s
    );
    assert_eq!(r.gpus.len(), 2);
    let g0 = &r.gpus[0];
    assert_eq!(g0.gpu, 0);
    assert_eq!(g0.verdict.as_str(), "oscillating");
    let period = g0.period_s.unwrap();
    assert!((period - 1.5).abs() < 0.15, "period {period}");
    assert!(g0.period_strength.unwrap() > 0.8);
    assert!((g0.mean - 21.5).abs() < 2.0, "mean {}", g0.mean);
    assert!(g0.p5 < 5.0 && g0.p95 > 38.0 && g0.p95 < 46.0);
    assert!(g0.p5 <= g0.p50 && g0.p50 <= g0.p95);
    assert!(
        (g0.idle_fraction - 7.0 / 15.0).abs() < 0.05,
        "{}",
        g0.idle_fraction
    );
    assert_eq!(g0.busy_fraction, 0.0);
    // 600 samples, a gap per 15: 40 gaps of 7 samples (0.7 s).
    assert!(
        (38..=41).contains(&g0.idle_gaps.count),
        "{:?}",
        g0.idle_gaps
    );
    assert!(
        (g0.idle_gaps.mean_s - 0.7).abs() < 0.08,
        "{:?}",
        g0.idle_gaps
    );
    assert!(g0.idle_gaps.max_s >= g0.idle_gaps.mean_s);
    assert!(g0.cv > 0.5 && g0.std > 10.0);
    let g1 = &r.gpus[1];
    assert_eq!((g1.gpu, g1.verdict.as_str()), (1, "stable"));
    assert!(g1.busy_fraction > 0.95 && g1.idle_gaps.count == 0 && g1.period_s.is_none());
    assert!(g1.cv < 0.05);
}

#[test]
fn nvidia_smi_with_header_and_units() {
    let json = trace_json(&example("nvidia-smi-2gpu.csv"), &[]);
    check_two_gpus(&serde_json::from_str(&json).unwrap());
}

#[test]
fn nvidia_smi_without_header_and_units() {
    let json = trace_json(&fixture("nvsmi_noheader_nounits.csv"), &["--kind", "util"]);
    check_two_gpus(&serde_json::from_str(&json).unwrap());
}

#[test]
fn nvidia_smi_other_column_order_crlf() {
    let json = trace_json(&fixture("nvsmi_reordered_crlf.csv"), &[]);
    check_two_gpus(&serde_json::from_str(&json).unwrap());
}

#[test]
fn gpufeed_jsonl_recording() {
    let json = trace_json(&fixture("recording.jsonl"), &[]);
    check_two_gpus(&serde_json::from_str(&json).unwrap());
}

#[test]
fn all_util_formats_agree() {
    let a = trace_json(&example("nvidia-smi-2gpu.csv"), &[]);
    let b = trace_json(&fixture("nvsmi_noheader_nounits.csv"), &[]);
    let c = trace_json(&fixture("recording.jsonl"), &[]);
    // `nvidia-smi dmon -s u` output of the same samples; dmon writes no time without
    // `-o DT`, so the interval is given.
    let d = trace_json(&fixture("dmon_su.txt"), &["--interval", "100ms"]);
    let (a, b, c, d): (Util, Util, Util, Util) = (
        serde_json::from_str(&a).unwrap(),
        serde_json::from_str(&b).unwrap(),
        serde_json::from_str(&c).unwrap(),
        serde_json::from_str(&d).unwrap(),
    );
    for i in 0..2 {
        assert_eq!(a.gpus[i].mean, b.gpus[i].mean);
        assert_eq!(a.gpus[i].mean, c.gpus[i].mean);
        assert_eq!(a.gpus[i].p95, c.gpus[i].p95);
        assert_eq!(a.gpus[i].verdict, c.gpus[i].verdict);
        assert_eq!(a.gpus[i].mean, d.gpus[i].mean);
        assert_eq!(a.gpus[i].verdict, d.gpus[i].verdict);
        assert_eq!(a.gpus[i].period_s.is_some(), d.gpus[i].period_s.is_some());
    }
}

#[test]
fn dmon_without_a_time_column_is_read_at_its_default_second_and_says_so() {
    let out = gpufeed()
        .arg("trace")
        .arg(fixture("dmon_su.txt"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("dmon's default interval of 1 s"), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("nvidia-smi dmon output, 2 GPUs"), "{text}");
}

fn check_stall8(r: &Steps) {
    assert_eq!(r.kind, gpufeed_contract::StepsKind::Steps);
    assert_eq!(r.samples, 240);
    assert_eq!(r.verdict.as_str(), "oscillating");
    assert_eq!(r.period_steps, Some(8));
    assert!(r.period_strength.unwrap() > 0.8);
    // 30 stalls at 350 ms among 210 steps at 100 ms.
    assert_eq!(r.outliers, 30);
    assert!(
        (r.mean_ms - (30.0 * 350.0 + 210.0 * 100.0) / 240.0).abs() < 1.0,
        "{}",
        r.mean_ms
    );
    assert!((r.median_ms - 100.0).abs() < 2.0);
    assert!(r.min_ms < r.median_ms && r.p95_ms > 340.0 && r.p99_ms <= r.max_ms);
    assert!(r.std_ms > 80.0 && (r.cv - r.std_ms / r.mean_ms).abs() < 1e-9);
}

#[test]
fn step_list_in_milliseconds() {
    let json = trace_json(&fixture("steps_stall8.txt"), &[]);
    check_stall8(&serde_json::from_str(&json).unwrap());
}

#[test]
fn step_csv_column_in_seconds() {
    let json = trace_json(&fixture("steps_seconds.csv"), &["--kind", "steps"]);
    let r: Steps = serde_json::from_str(&json).unwrap();
    check_stall8(&r);
}

#[test]
fn text_report_puts_the_verdict_first() {
    let out = gpufeed()
        .arg("trace")
        .arg(example("nvidia-smi-2gpu.csv"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let first_gpu_line = text.lines().find(|l| l.starts_with("GPU 0")).unwrap();
    assert!(
        first_gpu_line.starts_with("GPU 0  oscillating"),
        "{first_gpu_line}"
    );
    assert!(first_gpu_line.contains("every 1."), "{first_gpu_line}");
    assert!(text.contains("GPU 1  stable"));
    let out = gpufeed()
        .arg("trace")
        .arg(fixture("steps_stall8.txt"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("oscillating: a cycle every 8 steps"),
        "{text}"
    );
}

/// Runs a command expected to fail with exit 2 and one line on stderr; returns that line.
fn fails_with_one_line(args: &[&str]) -> String {
    let out = gpufeed().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    assert!(out.stdout.is_empty(), "nothing on stdout");
    let stderr = String::from_utf8(out.stderr).unwrap();
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    lines[0].to_string()
}

#[test]
fn empty_file() {
    let f = fixture("bad_empty.csv");
    let line = fails_with_one_line(&["trace", f.to_str().unwrap()]);
    assert!(
        line.contains("bad_empty.csv") && line.contains("empty"),
        "{line}"
    );
}

#[test]
fn csv_without_utilisation_column() {
    let f = fixture("bad_no_util_column.csv");
    let line = fails_with_one_line(&["trace", f.to_str().unwrap()]);
    assert!(line.contains("bad_no_util_column.csv"), "{line}");
    assert!(
        line.contains("line 1") && line.contains("utilization.gpu"),
        "{line}"
    );
}

#[test]
fn non_numeric_value_on_line_57() {
    let f = fixture("bad_line57.txt");
    for format in ["text", "json"] {
        let line = fails_with_one_line(&["trace", f.to_str().unwrap(), "--format", format]);
        assert!(
            line.contains("bad_line57.txt") && line.contains("line 57"),
            "{line}"
        );
        assert!(line.contains("12.5ms?"), "{line}");
    }
}

#[test]
fn missing_file() {
    let line = fails_with_one_line(&["trace", "/nonexistent/gpu.csv"]);
    assert!(line.contains("/nonexistent/gpu.csv"), "{line}");
}

#[test]
fn wrong_kind_is_refused() {
    let f = example("nvidia-smi-2gpu.csv");
    let line = fails_with_one_line(&["trace", f.to_str().unwrap(), "--kind", "steps"]);
    assert!(line.contains("nvidia-smi"), "{line}");
}

#[test]
fn usage_errors_exit_2() {
    let out = gpufeed().args(["trace"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = gpufeed()
        .args(["trace", "x", "--kind", "bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = gpufeed().arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8(out.stdout).unwrap().contains("trace"));
}

#[test]
fn reads_standard_input() {
    let log = fs_err::read(example("nvidia-smi-2gpu.csv")).unwrap();
    let out = gpufeed()
        .args(["trace", "-", "--format", "json"])
        .write_stdin(log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    check_two_gpus(&serde_json::from_slice(&out.stdout).unwrap());
}

#[test]
fn holes_in_the_log_are_warned_about() {
    // Cut ten seconds out of the example: the logger was paused.
    let log = fs_err::read_to_string(example("nvidia-smi-2gpu.csv")).unwrap();
    let holed: String = log
        .lines()
        .enumerate()
        .filter(|(i, _)| !(300..500).contains(i))
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    let out = gpufeed()
        .args(["trace", "-"])
        .write_stdin(holed)
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("GPU 0 has 1 hole(s)"), "{stderr}");
    assert!(stderr.contains("GPU 1 has 1 hole(s)"), "{stderr}");
}

// Step recordings of the Python `StepTimer` (`timer.save`): written here through the
// library's writer, the way the binding writes them.

/// 2 warm-up steps (slow, as a first step compiling), then 60 steps of about 100 ms that
/// wait 30 ms for data, copy 1 ms, and compute the rest: highly input-bound.
fn input_bound_recording(dir: &Path) -> PathBuf {
    use gpufeed_analysis::phase_steps::{Meta, StepRecord, write_jsonl};
    let path = dir.join("steps.jsonl");
    let steps: Vec<StepRecord> = (0..62)
        .map(|i| {
            let warm = if i < 2 { 900.0 } else { 0.0 };
            let wait = 30.0 + f64::from(i % 3) * 0.5;
            StepRecord {
                total_ms: wait + 1.0 + 30.0 + warm + 38.0 + 1.0,
                phases: vec![
                    ("data_wait".to_owned(), wait),
                    ("h2d_copy".to_owned(), 1.0),
                    ("forward".to_owned(), 30.0 + warm),
                    ("backward".to_owned(), 38.0),
                ],
                items: None,
            }
        })
        .collect();
    let meta = Meta {
        source: "python StepTimer".to_owned(),
        sync: true,
        warmup: 2,
        batch_size: Some(32),
    };
    write_jsonl(&path, &meta, &steps).unwrap();
    path
}

#[test]
fn step_recording_text_is_the_verdict_then_evidence_fix_and_phases() {
    let dir = tempfile::tempdir().unwrap();
    let path = input_bound_recording(dir.path());
    let out = gpufeed().arg("trace").arg(&path).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // Exactly the library's rendering of the library's document.
    let (meta, steps) = gpufeed_analysis::phase_steps::read_jsonl(&path).unwrap();
    let doc = gpufeed_analysis::phase_steps::document(&meta, &steps).unwrap();
    assert_eq!(text, gpufeed_analysis::phase_steps::render_text(&doc));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "input-bound (high)");
    assert!(lines[1].starts_with("  data wait 30."), "{text}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("  fix: the input pipeline"))
    );
    assert!(text.contains("your own loop (python StepTimer): 60 steps timed after 2 warm-up"));
    let order: Vec<usize> = [
        "data_wait ",
        "h2d_copy ",
        "forward ",
        "backward ",
        "unaccounted ",
    ]
    .iter()
    .map(|p| lines.iter().position(|l| l.starts_with(p)).unwrap())
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
}

#[test]
fn step_recording_json_is_the_phase_steps_document() {
    let dir = tempfile::tempdir().unwrap();
    let path = input_bound_recording(dir.path());
    let json = trace_json(&path, &[]);
    // The contract's type, which refuses unknown fields.
    let d: gpufeed_contract::PhaseSteps = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (
            d.kind,
            d.schema_version,
            d.source.as_str(),
            d.sync,
            d.warmup
        ),
        (
            gpufeed_contract::PhaseStepsKind::PhaseSteps,
            2,
            "python StepTimer",
            true,
            2
        )
    );
    assert_eq!(
        (d.verdict.as_str(), d.level.map(|l| l.as_str())),
        ("input-bound", Some("high"))
    );
    assert_eq!(d.batch_size, Some(32));
    assert_eq!(d.step.samples, 60);
    assert_eq!(d.step.kind, gpufeed_contract::StepsKind::Steps);
    assert!(d.step.max_ms < 110.0, "warm-up left out: {}", d.step.max_ms);
    let wait = d.phases.get("data_wait").unwrap();
    assert_eq!(
        (wait.order, wait.category.as_str(), wait.steps),
        (0, "input", 60)
    );
    assert!((wait.share - 30.5 / 100.5).abs() < 1e-3, "{}", wait.share);
    assert!((wait.mean_ms - 30.5).abs() < 1e-9, "{}", wait.mean_ms);
    assert!(
        (wait.std_ms - (0.5f64 / 3.0).sqrt()).abs() < 1e-9,
        "{}",
        wait.std_ms
    );
    assert_eq!(d.phases.get("h2d_copy").unwrap().category.as_str(), "copy");
    assert_eq!(
        d.phases.get("forward").unwrap().category.as_str(),
        "compute"
    );
    assert!((d.unaccounted_share - 1.0 / 100.5).abs() < 1e-3);
    assert!((d.samples_per_s.unwrap() - 32.0 * d.steps_per_s).abs() < 1e-6);
    assert!(
        d.fix.contains("num_workers") && !d.fix.contains("(now"),
        "{}",
        d.fix
    );
    assert!(!d.evidence.is_empty());
    let series = d.series.unwrap();
    assert_eq!(series.total_ms.len(), 60);
    assert_eq!(series.phases.get("backward").unwrap().len(), 60);
    // The loop's order in the document itself.
    let at = |k: &str| json.find(&format!("\"{k}\":{{\"order\"")).unwrap();
    assert!(at("data_wait") < at("h2d_copy") && at("forward") < at("backward"));

    // `--kind steps`: the step times alone, the document's `step`.
    let steps = trace_json(&path, &["--kind", "steps"]);
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let steps: serde_json::Value = serde_json::from_str(&steps).unwrap();
    assert_eq!(steps, doc["step"]);
}

#[test]
fn step_recording_with_kind_util_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = input_bound_recording(dir.path());
    let line = fails_with_one_line(&["trace", path.to_str().unwrap(), "--kind", "util"]);
    assert_eq!(
        line,
        format!(
            "error: `{}` looks like a gpufeed step recording, not a GPU utilisation log; drop \
             `--kind util` or pass `--kind steps`",
            path.display()
        )
    );
}

#[test]
fn step_recording_cut_off_warns_once_and_reads_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let path = input_bound_recording(dir.path());
    let mut text = fs_err::read_to_string(&path).unwrap();
    text.push_str("{\"step\":62,\"ms\":101.5,\"phases\":{\"data_w");
    fs_err::write(&path, text).unwrap();
    for extra in [&[][..], &["--format", "json"], &["--kind", "steps"]] {
        let out = gpufeed()
            .arg("trace")
            .arg(&path)
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{extra:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(
            stderr,
            format!(
                "warning: `{}` line 64: cut off mid-line (was the job killed while writing \
                 it?); skipped, the 62 step(s) before it are read\n",
                path.display()
            )
        );
    }
}

#[test]
fn step_recording_bad_line_or_too_few_steps_is_one_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    fs_err::write(
        &path,
        "{\"format\":\"gpufeed-steps\",\"version\":1,\"warmup\":1}\n\
         {\"step\":0,\"ms\":10,\"phases\":{\"data_wait\":1}}\n\
         {\"step\":1,\"ms\":10,\"phases\":{\"data_wait\":1}}\n\
         \n\
         {\"step\":2,\"ms\":10,\"phases\":{\"data_wait\":-1}}\n",
    )
    .unwrap();
    let line = fails_with_one_line(&["trace", path.to_str().unwrap()]);
    assert_eq!(
        line,
        format!(
            "error: `{}` line 5: phase `data_wait` is `-1` ms; phase times must be finite and \
             not negative; fix or delete the line",
            path.display()
        )
    );
    let newer = dir.path().join("newer.jsonl");
    fs_err::write(&newer, "{\"format\":\"gpufeed-steps\",\"version\":2}\n").unwrap();
    let line = fails_with_one_line(&["trace", newer.to_str().unwrap()]);
    assert!(line.ends_with("upgrade gpufeed to read it"), "{line}");
    let few = dir.path().join("few.jsonl");
    fs_err::write(
        &few,
        "{\"format\":\"gpufeed-steps\",\"version\":1,\"warmup\":1}\n{\"ms\":10}\n{\"ms\":11}\n",
    )
    .unwrap();
    let line = fails_with_one_line(&["trace", few.to_str().unwrap()]);
    assert_eq!(
        line,
        format!(
            "error: `{}`: 2 step(s) recorded, 1 after the 1 warm-up step(s): a verdict needs at \
             least 13 (fewer cannot show a cycle; `STEPS_MIN_JUDGED` in \
             gpufeed_stats::thresholds); record at least 14 steps",
            few.display()
        )
    );
}

/// A case of `shared/data/real-world` (README there), or `None`, saying so, when the
/// shared data is not checked out beside the repository.
#[allow(clippy::print_stderr)] // the test's own output: why it skipped
fn real_world(case: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/real-world")
        .join(case);
    if p.exists() {
        Some(p)
    } else {
        eprintln!(
            "skipped: `{}` is missing (check out shared/ beside the repository)",
            p.display()
        );
        None
    }
}

/// Issue 26, `smi_rpf_epoch_ts`: epoch-second timestamps, 60 s apart, mean 57.7 % by hand.
/// The three samples of 0 % while the job starts are named and left out of the verdict.
#[test]
fn real_log_with_epoch_seconds() {
    let Some(f) = real_world("smi_rpf_epoch_ts/gpu_usage.csv") else {
        return;
    };
    let r: Util = serde_json::from_str(&trace_json(&f, &[])).unwrap();
    assert!((r.interval_s - 60.0).abs() < 1.0, "{}", r.interval_s);
    let g = &r.gpus[0];
    assert!((g.mean - 57.7).abs() < 0.05, "mean {}", g.mean);
    assert_eq!(g.training.idle_start_s, 180.0);
    assert_eq!(g.training.idle_end_s, 0.0);
    assert_ne!(g.verdict, gpufeed_stats::UtilVerdict::Bursty);
}

/// Issue 26, `smi_slowfast_no_ts`: the header before every sample, no timestamps: refused
/// naming `--interval` without it, read with it (40 samples, mean 94.8 % by hand, stable).
#[test]
fn real_log_without_timestamps_takes_interval() {
    let Some(f) = real_world("smi_slowfast_no_ts/gpu_utilization.csv") else {
        return;
    };
    let line = fails_with_one_line(&["trace", f.to_str().unwrap()]);
    assert!(line.contains("--interval"), "{line}");
    for interval in ["1s", "1000ms", "1"] {
        let r: Util = serde_json::from_str(&trace_json(&f, &["--interval", interval])).unwrap();
        assert_eq!(r.interval_s, 1.0);
        assert_eq!(r.samples, 40);
        assert!((r.gpus[0].mean - 94.8).abs() < 0.05, "{}", r.gpus[0].mean);
        assert_eq!(r.gpus[0].verdict, gpufeed_stats::UtilVerdict::Stable);
    }
    // A usage error, as clap reports them (exit 2).
    let out = gpufeed()
        .args(["trace", f.to_str().unwrap(), "--interval", "soon"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("`soon` is not a duration"), "{stderr}");
}

/// Issue 26: a hand-written header over real `noheader,nounits` rows, and a single column
/// named `gpu_utilization` (once read as step times in ms), are utilisation logs.
#[test]
fn hand_written_utilisation_headers() {
    let dir = tempfile::tempdir().unwrap();
    for header in ["gpu_utilization[%]", "gpu_utilization", "gpu_util", "util"] {
        let f = dir.path().join("gpu.csv");
        let rows: String = (0..30).map(|i| format!("{}\n", 90 + i % 7)).collect();
        fs_err::write(&f, format!("{header}\n{rows}")).unwrap();
        let r: Util = serde_json::from_str(&trace_json(&f, &["--interval", "100ms"])).unwrap();
        assert_eq!(r.samples, 30, "{header}");
        assert_eq!(r.interval_s, 0.1);
    }
}

/// Issue 26: LSF job output with `date; nvidia-smi` every minute (gpufeed-telemetry's
/// fixture): two GPUs, the start-up and the end named, GPU 0 stable, GPU 1 starved.
#[test]
fn lsf_job_output_with_tables() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../gpufeed-telemetry/tests/fixtures/lsf_job_tables.out");
    let r: Util = serde_json::from_str(&trace_json(&f, &[])).unwrap();
    assert_eq!(r.interval_s, 60.0);
    let verdicts: Vec<_> = r.gpus.iter().map(|g| g.verdict).collect();
    use gpufeed_stats::UtilVerdict::{Stable, Starved};
    assert_eq!(verdicts, vec![Stable, Starved]);
    assert_eq!(r.gpus[0].training.idle_start_s, 120.0);
    assert_eq!(r.gpus[0].training.idle_end_s, 180.0);
    let text = gpufeed().arg("trace").arg(&f).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("job start and end"), "{text}");
}
