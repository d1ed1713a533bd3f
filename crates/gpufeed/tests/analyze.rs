//! `gpufeed analyze` end to end, through the built binary: the ranking on a replayed
//! oscillating trace, a failing stage, usage errors, and the HTML opened in headless
//! Chromium (skipped, saying so, when `/usr/bin/chromium` is absent; `.ci/run` installs it).
//!
//! Every run points NVML at a library that does not exist (`GPUFEED_NVML_LIB`) and probes
//! the frameworks with a fake interpreter (`GPUFEED_PYTHON`), as the doctor's tests do, so
//! runs are fast and the same on any machine; datasets are small and the batches tiny
//! (`batch_size: 4`), so a run takes seconds.

// Test helpers outside `#[test]` fns: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]
#![allow(clippy::print_stderr)] // why a test skipped

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::Run;
use serde_json::Value;

/// The Chromium of Debian's `chromium` package.
const CHROMIUM: &str = "/usr/bin/chromium";

/// `gpufeed ARGS` with no NVML, the fake interpreter, and the user cache in `dir`.
fn gpufeed(dir: &Path, args: &[&str]) -> Run {
    let python = common::fake_python(dir);
    common::gpufeed()
        .args(args)
        .env("GPUFEED_NVML_LIB", dir.join("no-libnvidia-ml.so.1"))
        .env("GPUFEED_PYTHON", python)
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env_remove("CUDA_VISIBLE_DEVICES")
        .env_remove("OMP_NUM_THREADS")
        .output()
        .unwrap()
        .into()
}

/// A small config: batches of 4, so that a CPU step takes milliseconds.
fn small_config(dir: &Path, extra: &str) -> PathBuf {
    let path = dir.join("config.yaml");
    fs_err::write(
        &path,
        format!("data:\n  batch_size: 4\n  num_workers: 2\n{extra}"),
    )
    .unwrap();
    path
}

/// A 16-clip demo dataset.
fn small_dataset(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    let run = gpufeed(dir, &["demo-data", data.to_str().unwrap(), "--clips", "16"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    data
}

/// A minute of a GPU oscillating between 3 % and 45 % every 2.5 s, sampled every 100 ms,
/// recorded as gpufeed JSONL by `monitor --synthetic`.
fn oscillating_trace(dir: &Path) -> PathBuf {
    let path = dir.join("gpu.jsonl");
    let run = gpufeed(
        dir,
        &[
            "monitor",
            "--synthetic",
            "oscillating:period=2.5,low=3,high=45",
            "--duration",
            "60",
            "--speed",
            "max",
            "--record",
            path.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    path
}

/// `gpufeed analyze --quick --data DATA --config CONFIG --trace TRACE --out OUT` in `dir`.
fn analyze_quick(dir: &Path, data: &Path, config: &Path, trace: &Path, out: &Path) -> Run {
    gpufeed(
        dir,
        &[
            "analyze",
            "--quick",
            "--data",
            data.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    )
}

/// `report.json`, checked against its published schema (docs/schemas/report.json) and
/// read back as the report's own type, which refuses unknown fields.
fn report_json(out: &Path) -> Value {
    let text = fs_err::read_to_string(out.join("report.json")).unwrap();
    let report: Value = serde_json::from_str(&text).unwrap();
    common::assert_valid("report", &report);
    let typed: gpufeed_report::Report = serde_json::from_str(&text).unwrap();
    assert_eq!(typed.schema_version, gpufeed_report::model::SCHEMA);
    report
}

fn stage<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no stage `{name}` in {report}"))
}

/// `--format json` prints the report's document on stdout, exactly one, the same as
/// `report.json` (issue 40: every command's document through one exporter). The config is
/// read once for every stage: its warning (a misspelt key) is said once.
#[test]
fn format_json_prints_the_report_document() {
    let dir = tempfile::tempdir().unwrap();
    let data = small_dataset(dir.path());
    let trace = oscillating_trace(dir.path());
    let config = small_config(dir.path(), "  batch_sizee: 3\n");
    let out = dir.path().join("report");
    let run = gpufeed(
        dir.path(),
        &[
            "analyze",
            "--quick",
            "--data",
            data.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let printed: Value = serde_json::from_str(&run.stdout).unwrap();
    common::assert_valid("report", &printed);
    assert_eq!(printed, report_json(&out));
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    assert_eq!(
        run.stderr.matches("batch_sizee").count(),
        1,
        "{}",
        run.stderr
    );
}

/// The acceptance case: a replayed oscillating trace is the first cause, with its period.
#[test]
fn oscillating_trace_ranks_first_with_its_period() {
    let dir = tempfile::tempdir().unwrap();
    let data = small_dataset(dir.path());
    let trace = oscillating_trace(dir.path());
    let config = small_config(dir.path(), "");
    let out = dir.path().join("report");
    let run = analyze_quick(dir.path(), &data, &config, &trace, &out);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let r = report_json(&out);
    let first = &r["causes"][0];
    assert_eq!(first["id"], "oscillating-utilisation", "{}", r["causes"]);
    assert_eq!(first["rank"], 1);
    assert!(
        first["summary"].as_str().unwrap().contains("every 2.50 s"),
        "{first}"
    );
    let period = r["telemetry"]["util"]["gpus"][0]["period_s"]
        .as_f64()
        .unwrap();
    assert!((period - 2.5).abs() < 0.05, "{period}");
    assert!(first["fix"].as_str().unwrap().contains("num_workers"));
    // Every stage ran but the demo's: the user's own data, config and log were given.
    assert_eq!(stage(&r, "demo data")["status"], "skipped");
    let step = stage(&r, "profile step");
    assert_eq!(step["status"], "skipped");
    assert!(
        step["note"].as_str().unwrap().contains("`--demo`"),
        "{step}"
    );
    for name in ["precompute", "doctor", "profile data", "telemetry"] {
        assert_eq!(
            stage(&r, name)["status"],
            "ok",
            "{name}: {}",
            stage(&r, name)
        );
    }
    assert!(
        r["profile_data"].get("grid").is_none(),
        "--quick runs no grid"
    );
    // The verdict comes first, in the summary and on stdout.
    let summary = fs_err::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.starts_with(
            "# gpufeed analyze\n\n**Verdict:** Most likely cause of starvation: oscillating utilisation"
        ),
        "{summary}"
    );
    assert!(
        run.stdout
            .starts_with("Most likely cause of starvation: oscillating utilisation"),
        "{}",
        run.stdout
    );
    // Nothing half-written is left beside the three files.
    let mut names: Vec<String> = fs_err::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["report.html", "report.json", "summary.md"]);
}

/// A user's own log alone: the verdict is the log's, and gpufeed's demo (a generated
/// dataset, minutes of a demo model trained on the CPU) does not run unless asked for
/// (issue 41: `analyze --trace gpu.csv` spent 1-5 minutes and 3.4 GB on the demo model).
#[test]
fn a_log_alone_runs_no_demo() {
    let dir = tempfile::tempdir().unwrap();
    let trace = oscillating_trace(dir.path());
    let out = dir.path().join("report");
    let run = gpufeed(
        dir.path(),
        &[
            "analyze",
            "--trace",
            trace.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let r = report_json(&out);
    assert_eq!(r["inputs"]["demo"], false);
    assert!(!dir.path().join("cache/gpufeed/demo-112-0").exists());
    for name in ["demo data", "precompute", "profile data", "profile step"] {
        let s = stage(&r, name);
        assert_eq!(s["status"], "skipped", "{s}");
        assert!(s["note"].as_str().unwrap().contains("`--demo`"), "{s}");
    }
    assert_eq!(stage(&r, "telemetry")["status"], "ok");
    assert_eq!(r["causes"][0]["id"], "oscillating-utilisation");
    assert!(!run.stdout.contains("demo dataset"), "{}", run.stdout);
}

/// A config that breaks the loader (every utterance over `max_mel_frames`) fails the two
/// profiles; the doctor, the precompute and the report still run; a binary file given as
/// code is a finding at error severity; the exit code is 1.
#[test]
fn a_failing_stage_is_reported_and_the_rest_runs() {
    let dir = tempfile::tempdir().unwrap();
    let data = small_dataset(dir.path());
    let config = small_config(
        dir.path(),
        "  pad_to_fixed_length: true\n  max_mel_frames: 10\n",
    );
    let code = dir.path().join("train.bin");
    fs_err::write(&code, [0u8, 159, 146, 150, 0, 1, 2, 3]).unwrap();
    let out = dir.path().join("report");
    let run = gpufeed(
        dir.path(),
        &[
            "analyze",
            "--quick",
            "--demo",
            "--data",
            data.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--code",
            code.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    let r = report_json(&out);
    for name in ["profile data", "profile step"] {
        let s = stage(&r, name);
        assert_eq!(s["status"], "failed", "{s}");
        assert!(
            s["error"]
                .as_str()
                .unwrap()
                .contains("over the length caps"),
            "{s}"
        );
    }
    assert_eq!(stage(&r, "precompute")["status"], "ok");
    assert_eq!(stage(&r, "doctor")["status"], "ok");
    assert_eq!(stage(&r, "demo data")["status"], "skipped");
    let telemetry = stage(&r, "telemetry");
    assert_eq!(telemetry["status"], "skipped");
    assert!(
        telemetry["note"]
            .as_str()
            .unwrap()
            .starts_with("no NVIDIA driver found"),
        "{telemetry}"
    );
    let findings = r["doctor"]["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .any(|f| f["id"] == "file-not-linted" && f["severity"] == "error"),
        "{findings:?}"
    );
    let summary = fs_err::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("| profile data | failed |"), "{summary}");
    assert!(
        summary.contains("Not measured: `profile step` failed"),
        "{summary}"
    );
    assert!(
        run.stdout.contains("failed: profile data, profile step"),
        "{}",
        run.stdout
    );
    let html = fs_err::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("id=\"findings-table\""));
}

#[test]
fn usage_errors_exit_2_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let run = gpufeed(
        dir.path(),
        &[
            "analyze",
            "--data",
            "/no/such/gpufeed/data",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert_eq!(
        run.stderr.trim(),
        "error: `--data /no/such/gpufeed/data`: no such file or folder"
    );
    assert!(!out.exists());

    let file = dir.path().join("a-file");
    fs_err::write(&file, "x").unwrap();
    let run = gpufeed(dir.path(), &["analyze", "--out", file.to_str().unwrap()]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("is a file; the report needs a folder"),
        "{}",
        run.stderr
    );
    assert!(!dir.path().join("cache").exists(), "no work was done");
}

/// `--attach PID`: a running loop fed by a sleeping source is sampled first, and its
/// verdict is ranked with the other causes; a PID that is not there is bad usage.
#[test]
fn a_running_job_is_sampled_and_ranked() {
    if !Command::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .is_ok_and(|s| s.success())
    {
        eprintln!("skipped: python3 not found");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let run = gpufeed(
        dir.path(),
        &[
            "analyze",
            "--attach",
            "999999999",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("no process 999999999"),
        "{}",
        run.stderr
    );

    let data = small_dataset(dir.path());
    let config = small_config(dir.path(), "");
    let script = dir.path().join("train.py");
    fs_err::write(
        &script,
        "import time\n\
def source():\n    while True:\n        time.sleep(0.02)\n        yield 1\n\
for item in source():\n    sum(range(5000))\n",
    )
    .unwrap();
    let mut job = Command::new("python3").arg(&script).spawn().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let pid = job.id().to_string();
    let run = gpufeed(
        dir.path(),
        &[
            "analyze",
            "--quick",
            "--data",
            data.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--attach",
            &pid,
            "--attach-duration",
            "2s",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    let _ = job.kill();
    let _ = job.wait();
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let r = report_json(&out);
    assert_eq!(stage(&r, "attach")["status"], "ok");
    assert_eq!(r["inputs"]["attach"], job.id());
    assert_eq!(r["attach"]["verdict"], "input-bound", "{}", r["attach"]);
    let first = &r["causes"][0];
    assert_eq!(first["id"], "running-input-bound", "{first}");
    assert_eq!(first["source"], "your-run");
    assert!(
        first["fix"].as_str().unwrap().contains("train.py:"),
        "{first}"
    );
}

/// Runs Chromium with `args`, killed after a minute.
fn chromium(profile: &Path, args: &[&str]) -> Run {
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap().into()
}

/// Records errors, CSP violations and console errors, then, once loaded, how many plots
/// have a drawn size and how many rows the findings table has, into `#e2e-result`.
const PROBE: &str = r"<script>
var errors = [];
window.addEventListener('error', function (e) {
  errors.push('error: ' + (e.message || (e.target && (e.target.src || e.target.href)) || 'a resource failed'));
}, true);
document.addEventListener('securitypolicyviolation', function (e) {
  errors.push('csp: ' + e.violatedDirective + ' ' + e.blockedURI);
});
var consoleError = console.error;
console.error = function () {
  errors.push('console: ' + Array.prototype.join.call(arguments, ' '));
  consoleError.apply(console, arguments);
};
window.addEventListener('load', function () {
  var drawn = [];
  document.querySelectorAll('svg.plot').forEach(function (s) {
    var r = s.getBoundingClientRect();
    var b = s.getBBox();
    if (r.width > 100 && r.height > 50 && b.width > 0 && b.height > 0) { drawn.push(s.id); }
  });
  var out = document.createElement('pre');
  out.id = 'e2e-result';
  out.textContent = JSON.stringify({
    errors: errors,
    drawn: drawn,
    findings_rows: document.querySelectorAll('#findings-table tbody tr').length,
    causes: document.querySelectorAll('ol.causes > li').length
  });
  document.body.appendChild(out);
});
</script>
";

/// The HTML of a full run (benchmark grid included) in headless Chromium: every plot and the
/// findings table render, no error reaches the console, and a screenshot is saved. Without
/// `--data`, as on a fresh machine: the demo dataset is generated into the user cache folder.
#[test]
fn report_html_renders_in_headless_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let config = small_config(dir.path(), "");
    let trace = oscillating_trace(dir.path());
    let out = dir.path().join("report");
    let run = gpufeed(
        dir.path(),
        &[
            "analyze",
            "--demo",
            "--config",
            config.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let demo = dir.path().join("cache/gpufeed/demo-112-0");
    assert!(demo.join("metadata.csv").is_file());
    let r = report_json(&out);
    assert_eq!(r["inputs"]["demo"], true);
    assert_eq!(r["inputs"]["data"], demo.display().to_string());
    // On the CPU the demo's step runs in small batches (the config's 56 peaked at 3.2 GB).
    assert_eq!(r["profile_step"]["config"]["loader"]["batch_size"], 16);
    let html = fs_err::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("id=\"plot-grid\""),
        "the full run has the grid"
    );

    if !Path::new(CHROMIUM).exists() {
        println!("skipped: chromium not installed ({CHROMIUM}; `apt-get install chromium`)");
        return;
    }
    // The probe goes first in <head>, before the page's Content-Security-Policy, which
    // applies only to what follows it.
    let probed = html.replacen("<head>\n", &format!("<head>\n{PROBE}"), 1);
    assert_ne!(probed, html);
    let page = out.join("probe.html");
    fs_err::write(&page, probed).unwrap();
    let url = format!("file://{}", page.display());
    let dom = chromium(
        &dir.path().join("chromium-dom"),
        &["--virtual-time-budget=5000", "--dump-dom", &url],
    );
    let start = dom
        .stdout
        .find("<pre id=\"e2e-result\">")
        .unwrap_or_else(|| {
            panic!(
                "no probe result in the DOM:\n{}\n{}",
                dom.stdout, dom.stderr
            )
        });
    let rest = &dom.stdout[start + "<pre id=\"e2e-result\">".len()..];
    let json = rest[..rest.find("</pre>").unwrap()]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let result: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(result["errors"], serde_json::json!([]), "{result}");
    let drawn: Vec<&str> = result["drawn"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for id in [
        "plot-util-0",
        "plot-batches",
        "plot-batches-acf",
        "plot-steps",
        "plot-steps-acf",
        "plot-phases",
        "plot-grid",
    ] {
        assert!(drawn.contains(&id), "{id} not drawn: {result}");
    }
    assert!(result["findings_rows"].as_u64().unwrap() >= 3, "{result}");
    assert!(result["causes"].as_u64().unwrap() >= 1, "{result}");

    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("analyze-report.png");
    let _ = fs_err::remove_file(&shot);
    let report_url = format!("file://{}", out.join("report.html").display());
    let run = chromium(
        &dir.path().join("chromium-shot"),
        &[
            "--window-size=1000,2600",
            &format!("--screenshot={}", shot.display()),
            &report_url,
        ],
    );
    let png = fs_err::read(&shot).unwrap_or_else(|e| panic!("{e}\n{}", run.stderr));
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{}",
        png.len()
    );
    println!("screenshot: {}", shot.display());
}

/// `--trace` with a step recording of the user's own loop (as `StepTimer.save` writes it):
/// it is the step evidence, labelled as theirs; the demo model's step profile does not run;
/// the first cause is the user's verdict with the user's fix, quoting none of gpufeed's
/// loader settings.
#[test]
fn own_step_recording_is_the_step_evidence() {
    use gpufeed_analysis::phase_steps::{Meta, StepRecord, write_jsonl};
    let dir = tempfile::tempdir().unwrap();
    let data = small_dataset(dir.path());
    let config = small_config(dir.path(), "");
    let steps_file = dir.path().join("steps.jsonl");
    // 1 warm-up step, then 60 steps of 100 ms waiting 30 ms for data: highly input-bound.
    let steps: Vec<StepRecord> = (0..61)
        .map(|i| StepRecord {
            total_ms: 100.0 + f64::from(i % 2),
            phases: vec![
                ("data_wait".to_owned(), 30.0 + f64::from(i % 2)),
                ("forward".to_owned(), 30.0),
                ("backward".to_owned(), 39.0),
            ],
            items: Some(16),
        })
        .collect();
    let meta = Meta {
        source: "python StepTimer".to_owned(),
        sync: true,
        warmup: 1,
        batch_size: None,
    };
    write_jsonl(&steps_file, &meta, &steps).unwrap();
    let out = dir.path().join("report");
    let run = analyze_quick(dir.path(), &data, &config, &steps_file, &out);
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let r = report_json(&out);
    let step = &r["profile_step"];
    assert_eq!(step["kind"], "phase-steps", "{step}");
    assert_eq!(step["source"], "python StepTimer");
    assert_eq!(step["verdict"], "input-bound");
    assert_eq!(step["level"], "high");
    assert!(
        step.get("series").is_none(),
        "the per-step series stays out of report.json"
    );
    assert_eq!(step["step"]["samples"], 60);
    assert_eq!(r["inputs"]["device"], "");
    let s = stage(&r, "profile step");
    assert_eq!(s["status"], "ok", "{s}");
    assert!(
        s["note"]
            .as_str()
            .unwrap()
            .starts_with(&format!("your own loop, from `{}`", steps_file.display())),
        "{s}"
    );
    let t = stage(&r, "telemetry");
    assert_eq!(t["status"], "skipped");
    assert!(
        t["note"]
            .as_str()
            .unwrap()
            .contains("step recording of your own loop"),
        "{t}"
    );
    assert_eq!(stage(&r, "profile data")["status"], "ok");
    // The user's verdict leads, with the user's fix.
    let first = &r["causes"][0];
    assert_eq!(first["id"], "input-bound", "{}", r["causes"]);
    assert!(
        first["summary"]
            .as_str()
            .unwrap()
            .starts_with("in your own loop, data wait is 30 % of the step"),
        "{first}"
    );
    assert_eq!(first["fix"], step["fix"]);
    let fix = first["fix"].as_str().unwrap();
    assert!(
        !fix.contains("(now") && !fix.contains(" from 2 to "),
        "{fix}"
    );
    assert_eq!(
        r["series"]["step_ms"]["values"].as_array().unwrap().len(),
        60
    );
    assert!(
        run.stdout
            .starts_with("Most likely cause of starvation: input-bound step: in your own loop"),
        "{}",
        run.stdout
    );
    let summary = fs_err::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.contains(
            "### Training step (your own loop, `--trace`)\n\nyour own training loop, timed by \
             `python StepTimer`, the device synchronised at each phase boundary: 60 timed steps \
             after 1 warm-up."
        ),
        "{summary}"
    );
    let html = fs_err::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("Your own loop: the time of each step"));
}
