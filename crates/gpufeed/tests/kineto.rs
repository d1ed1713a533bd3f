//! `gpufeed trace` on profiler traces, end to end: the built binary on the real V100 traces
//! of `shared/data/kineto` and on generated ones (PyTorch and TensorFlow format), with the
//! JSON contract (`ranks`, `temporal`, `idle_breakdown`, `steps`, `verdict`) and bad input.

// Test helpers outside `#[test]` fns: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use gpufeed_kineto::synth::{Case, generate};
use gpufeed_kineto::{RankReport, Report};
use serde::Serialize;

mod common;
use common::gpufeed;

/// The string a contract enum is written as (`input-bound`, `pytorch`, ...).
fn name<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned()
}

/// A verdict as written, when there is one.
fn verdict<T: Serialize>(v: Option<&T>) -> Option<String> {
    v.map(name)
}

fn shared(case: &str) -> PathBuf {
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

/// Runs `gpufeed trace PATH --format json`: the document, read by its contract type (which
/// refuses unknown fields), and stderr.
fn json(path: &Path, extra: &[&str]) -> (Report, String) {
    let out = gpufeed()
        .arg("trace")
        .arg(path)
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "exit {:?}: {stderr}",
        out.status.code()
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.trim_end().lines().count(), 1, "one JSON document");
    let doc: Report = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        doc.schema_version,
        <Report as gpufeed_contract::Document>::VERSION
    );
    (doc, stderr)
}

#[test]
fn resnet50_num_workers_0_is_input_bound_and_4_workers_idle_less() {
    let (nw0, _) = json(&shared("resnet50_nw0"), &[]);
    assert_eq!(
        (name(&nw0.kind).as_str(), name(&nw0.format).as_str()),
        ("profiler", "pytorch")
    );
    let r = &nw0.ranks[0];
    let t = r.temporal.as_ref().unwrap();
    // HTA 0.5.0 on the same trace.
    assert_eq!(
        (t.idle_pct, t.compute_pct, t.non_compute_pct),
        (39.43, 59.35, 1.22)
    );
    assert_eq!(t.span_us, t.idle_us + t.compute_us + t.non_compute_us);
    assert_eq!(r.idle_breakdown[0].stream, 7);
    assert_eq!(r.idle_breakdown[0].host_wait_us, 318_934.0);
    // One stream: its gaps add up to the rank's idle time (HTA's definitions).
    let b = &r.idle_breakdown[0];
    assert_eq!(b.host_wait_us + b.kernel_wait_us + b.other_us, t.idle_us);
    assert_eq!(verdict(r.verdict.as_ref()).as_deref(), Some("input-bound"));
    assert_eq!(
        verdict(nw0.verdict.as_ref()).as_deref(),
        Some("input-bound")
    );
    assert!(r.evidence[0].contains("data wait"), "{:?}", r.evidence);
    assert!(r.fix.as_deref().unwrap().contains("num_workers"));
    assert_eq!(
        r.steps.iter().map(|s| s.step).collect::<Vec<_>>(),
        [5, 6, 7, 8, 9]
    );
    for s in &r.steps {
        assert!(s.data_wait_us > 0.25 * s.dur_us, "{s:?}");
        assert!(s.idle_us <= s.dur_us && s.gpu_busy_pct <= 100.0, "{s:?}");
    }
    let (nw4, _) = json(&shared("resnet50_nw4"), &[]);
    let r4 = &nw4.ranks[0];
    assert_eq!(r4.temporal.as_ref().unwrap().idle_pct, 24.32);
    assert_ne!(verdict(r4.verdict.as_ref()).as_deref(), Some("input-bound"));
    let data = |r: &RankReport| r.steps.iter().map(|s| s.data_wait_us).sum::<f64>();
    assert!(data(r4) < 0.1 * data(r), "workers hide the loading");
}

#[test]
fn folder_of_two_ranks() {
    let (d, _) = json(&shared("sampled_2rank"), &[]);
    assert_eq!(d.ranks.iter().map(|r| r.rank).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(d.ranks[1].temporal.as_ref().unwrap().idle_pct, 54.72);
    assert_eq!(d.ranks[0].idle_breakdown.len(), 5);
    // Two ranks cannot show a straggler by the MAD rule.
    assert!(d.straggler.is_none());
}

#[test]
fn generated_straggler_and_verdicts_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let case = Case::straggler();
    for rank in 0..case.ranks {
        let p = dir.path().join(format!("rank-{rank}.pt.trace.json"));
        fs_err::write(&p, generate(&case, rank)).unwrap();
    }
    let (d, _) = json(dir.path(), &[]);
    assert_eq!(d.ranks.len(), 4);
    let s = d.straggler.unwrap();
    assert_eq!((s.rank, name(&s.by).as_str()), (2, "step_time"));
    assert_eq!(verdict(d.verdict.as_ref()).as_deref(), Some("input-bound"));
    for case in [
        Case::sync_bound(),
        Case::launch_bound(),
        Case::transfer_bound(),
    ] {
        let p = dir.path().join(format!("{}.json", case.name));
        fs_err::write(&p, generate(&case, 0)).unwrap();
        let (d, _) = json(&p, &[]);
        assert_eq!(
            verdict(d.verdict.as_ref()).as_deref(),
            Some(case.expect),
            "{}",
            case.name
        );
    }
}

#[test]
fn tensorflow_trace_is_detected_and_judged() {
    let dir = tempfile::tempdir().unwrap();
    let case = Case::input_bound().tensorflow();
    let p = dir.path().join("host.trace.json");
    fs_err::write(&p, generate(&case, 0)).unwrap();
    let (d, _) = json(&p, &[]);
    assert_eq!(name(&d.format), "tensorflow");
    assert_eq!(
        verdict(d.ranks[0].verdict.as_ref()).as_deref(),
        Some("input-bound")
    );
    assert_eq!(d.ranks[0].steps.len(), case.steps);
    // Text: the verdict first.
    let out = gpufeed().arg("trace").arg(&p).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("TensorFlow / JAX profiler trace"), "{text}");
    assert!(text.contains("input-bound (high)"), "{text}");
}

#[test]
fn of_two_files_of_one_rank_the_fuller_is_analysed_whichever_comes_last() {
    // `tensorboard_trace_handler` with `schedule(repeat=0)` writes one file per profiling
    // cycle, and a last one with what ran after the final full cycle: all rank 0. HTA keeps
    // the last file; gpufeed keeps the one with the most GPU events, and says so.
    let dir = tempfile::tempdir().unwrap();
    let full = generate(&Case::input_bound(), 0);
    let tail = br#"{"traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#40", "pid": 1, "tid": 1, "ts": 0, "dur": 50},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 5, "args": {"stream": 7, "correlation": 1}}
    ]}"#;
    for (first, second) in [("a", "b"), ("b", "a")] {
        let run = dir.path().join(first);
        fs_err::create_dir(&run).unwrap();
        fs_err::write(run.join(format!("{first}.pt.trace.json")), &full).unwrap();
        fs_err::write(run.join(format!("{second}.pt.trace.json")), tail).unwrap();
        let (d, stderr) = json(&run, &[]);
        assert_eq!(d.ranks.len(), 1);
        assert!(
            d.ranks[0].file.ends_with(&format!("{first}.pt.trace.json")),
            "{}: {stderr}",
            d.ranks[0].file
        );
        assert_eq!(
            verdict(d.verdict.as_ref()).as_deref(),
            Some("input-bound"),
            "{stderr}"
        );
        assert!(
            stderr.contains("2 files are rank 0") && stderr.contains("the fullest"),
            "{stderr}"
        );
        assert_eq!(stderr.matches("warning:").count(), 1, "{stderr}");
    }
}

#[test]
fn cut_off_trace_is_analysed_with_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let full = generate(&Case::input_bound(), 0);
    let p = dir.path().join("killed.json");
    let cut = full.len() * 2 / 3;
    fs_err::write(&p, &full[..cut]).unwrap();
    let (d, stderr) = json(&p, &[]);
    assert!(d.ranks[0].temporal.is_some());
    assert_eq!(stderr.matches("warning:").count(), 1, "{stderr}");
    assert!(stderr.contains("stops mid-write at byte"), "{stderr}");
    assert!(stderr.contains("killed.json"), "{stderr}");
}

#[test]
fn json_that_is_not_a_trace_exits_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("config.json");
    fs_err::write(&p, br#"{"lr": 0.1, "epochs": 3}"#).unwrap();
    let out = gpufeed().arg("trace").arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("config.json") && stderr.contains("not a profiler trace"),
        "{stderr}"
    );
    assert!(stderr.contains("hint:"), "{stderr}");
}

/// A trace file that cannot be read: one line naming it and why, the reason once (the
/// operating system's error is in the message, not again as its source).
#[test]
fn a_missing_trace_file_says_why_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("rank0.pt.trace.json");
    let out = gpufeed().arg("trace").arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("rank0.pt.trace.json"), "{stderr}");
    assert_eq!(stderr.matches("No such file").count(), 1, "{stderr}");
}

/// A trace's events wait in a temporary file while it is analysed: a temporary folder that
/// is missing is one error naming the trace and `TMPDIR`, exit 2.
#[test]
fn a_missing_temporary_folder_exits_2_naming_tmpdir() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("rank0.pt.trace.json");
    fs_err::write(&p, generate(&Case::input_bound(), 0)).unwrap();
    let out = gpufeed()
        .arg("trace")
        .arg(&p)
        .env("TMPDIR", dir.path().join("gone"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("rank0.pt.trace.json")
            && stderr.contains("temporary file")
            && stderr.contains("hint:")
            && stderr.contains("TMPDIR"),
        "{stderr}"
    );
    // The cause once, not again as a source.
    assert_eq!(stderr.matches("No such file").count(), 1, "{stderr}");
}

#[test]
fn cpu_only_trace_says_so_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cpu.pt.trace.json");
    fs_err::write(
        &p,
        br#"{"traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 5},
            {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 50}
        ]}"#,
    )
    .unwrap();
    let (d, stderr) = json(&p, &[]);
    assert!(d.ranks[0].temporal.is_none() && d.verdict.is_none());
    assert!(stderr.contains("a CPU-only profile?"), "{stderr}");
}

/// Issue 39, pattern 4: launch calls on the host but no kernel records are lost records
/// (a full activity buffer, driver-API launches), not a CPU-only profile.
#[test]
fn launches_without_kernels_say_the_records_were_lost() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("lost.pt.trace.json");
    let mut events = vec![
        r#"{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 500}"#.to_owned(),
    ];
    for k in 0..24 {
        events.push(format!(
            r#"{{"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 1, "tid": 1, "ts": {}, "dur": 4, "args": {{"correlation": {k}}}}}"#,
            10 + k * 10
        ));
    }
    events.push(r#"{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 300, "dur": 4, "args": {"correlation": 99}}"#.to_owned());
    fs_err::write(
        &p,
        format!(r#"{{"traceEvents": [{}]}}"#, events.join(",\n")),
    )
    .unwrap();
    let (d, stderr) = json(&p, &[]);
    assert!(d.ranks[0].temporal.is_none() && d.verdict.is_none());
    assert_eq!(d.ranks[0].window.launch_calls, 25);
    assert!(
        stderr.contains("25 kernel launch call(s)") && stderr.contains("lost"),
        "{stderr}"
    );
    assert!(!stderr.contains("CPU-only"), "{stderr}");
}

/// `gpufeed analyze --quick --data DATA --config CONFIG --trace TRACE --out OUT`, as the
/// analyze tests run it: no NVML, the fake interpreter, the user cache in `dir`, a small
/// dataset and batches of 4, so that it takes seconds.
fn analyze(dir: &Path, trace: &Path) -> (std::process::Output, PathBuf) {
    let data = dir.join("data");
    if !data.is_dir() {
        let out = gpufeed()
            .args(["demo-data", data.to_str().unwrap(), "--clips", "16"])
            .output()
            .unwrap();
        assert!(out.status.success());
        fs_err::write(
            dir.join("config.yaml"),
            "data:\n  batch_size: 4\n  num_workers: 2\n",
        )
        .unwrap();
    }
    let out_dir = dir.join(format!(
        "report-{}",
        trace.file_name().unwrap().to_string_lossy()
    ));
    let out = gpufeed()
        .arg("analyze")
        .arg("--quick")
        .arg("--data")
        .arg(&data)
        .arg("--config")
        .arg(dir.join("config.yaml"))
        .arg("--trace")
        .arg(trace)
        .arg("--out")
        .arg(&out_dir)
        .env("GPUFEED_NVML_LIB", dir.join("no-libnvidia-ml.so.1"))
        .env("GPUFEED_PYTHON", common::fake_python(dir))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .output()
        .unwrap();
    (out, out_dir)
}

/// A profiler trace given to `analyze --trace` is the run's evidence: analysed as `trace`
/// analyses it, its verdict the report's first cause (the user's run's), its document
/// `report.json`'s `profiler`, its plots in `report.html`; the demo model does not run.
#[test]
fn analyze_takes_a_profiler_trace_as_the_run_s_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let (out, report) = analyze(dir.path(), &shared("resnet50_nw0"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout
            .starts_with("Most likely cause of starvation: input-bound step: in your profiled run"),
        "{stdout}"
    );
    let text = fs_err::read_to_string(report.join("report.json")).unwrap();
    // The report's own type, which refuses unknown fields, reads it.
    let r: gpufeed_report::Report = serde_json::from_str(&text).unwrap();
    let p = r.profiler.as_ref().unwrap();
    assert_eq!(p.ranks[0].temporal.unwrap().idle_pct, 39.43);
    let first = &r.causes[0];
    assert_eq!(first.id, "input-bound");
    assert_eq!(first.source, gpufeed_report::model::Source::YourRun);
    assert_eq!(first.lost_share, Some(p.ranks[0].causes[0].share));
    assert!(first.fix.contains("num_workers"), "{}", first.fix);
    // What fixing it is worth: the trace's own estimate; a cause with no step-time model
    // says why it has none.
    assert_eq!(first.if_fixed, p.ranks[0].causes[0].if_fixed);
    assert!(first.if_fixed.is_some() && first.no_estimate.is_none());
    for c in r.causes.iter().filter(|c| c.if_fixed.is_none()) {
        assert!(c.no_estimate.is_some(), "{c:?}");
    }
    assert_eq!(r.inputs.device, "", "the demo model did not run");
    let stage = |name: &str| r.stages.iter().find(|s| s.name == name).unwrap();
    let step = stage("profile step");
    assert_eq!(step.status, gpufeed_report::model::Status::Ok);
    assert!(
        step.note
            .as_deref()
            .unwrap()
            .contains("PyTorch profiler trace"),
        "{step:?}"
    );
    assert!(r.profile_step.is_none());
    assert_eq!(
        stage("telemetry").status,
        gpufeed_report::model::Status::Skipped
    );
    let md = fs_err::read_to_string(report.join("summary.md")).unwrap();
    assert!(md.contains("### Profiler trace (your own run, `--trace`)"));
    assert!(md.contains("| 0 | 7 | 327 ms | 319 ms (97 %)"), "{md}");
    assert!(
        md.contains("- **if fixed:** fix the input pipeline: 176 -> ~116 ms per step (1.5x)"),
        "{md}"
    );
    let html = fs_err::read_to_string(report.join("report.html")).unwrap();
    assert!(
        html.contains("id=\"plot-profiler-steps\"") && html.contains("id=\"plot-profiler-idle\"")
    );

    // A folder of per-rank traces with a straggler: the straggler is a cause, and the
    // run's verdict is its rank's.
    let run = dir.path().join("run");
    fs_err::create_dir(&run).unwrap();
    let case = Case::straggler();
    for rank in 0..case.ranks {
        let p = run.join(format!("rank-{rank}.pt.trace.json"));
        fs_err::write(&p, generate(&case, rank)).unwrap();
    }
    let (out, report) = analyze(dir.path(), &run);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: gpufeed_report::Report =
        serde_json::from_str(&fs_err::read_to_string(report.join("report.json")).unwrap()).unwrap();
    let ids: Vec<&str> = r.causes.iter().map(|c| c.id.as_str()).collect();
    assert!(
        ids.contains(&"straggler") && ids.contains(&"input-bound"),
        "{ids:?}"
    );
    assert!(r.verdict.contains("rank 2 of 4"), "{}", r.verdict);
}
