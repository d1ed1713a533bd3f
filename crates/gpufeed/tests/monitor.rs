//! `gpufeed monitor` and `gpufeed watch` end to end: the built binary on synthetic and
//! replayed sources (no GPU needed), the recording round trip, bad input, and `watch`'s
//! exit codes and signal forwarding with small child programs.
//!
//! JSON output is deserialised into the contract's `monitor` document (gpufeed-contract),
//! which rejects unknown fields, and `trace`'s into its `util` document.

// Test helpers outside `#[test]` fns: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::print_stderr)] // why a test skipped

use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{example, fake_nvml, gpufeed};
use gpufeed_contract::{Document as _, Monitor, Util};

/// Runs gpufeed with `args`, expects exit `code`; returns (stdout, stderr).
fn run(args: &[&str], code: i32) -> (String, String) {
    let out = gpufeed().args(args).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        out.status.code(),
        Some(code),
        "gpufeed {args:?}\nstdout: {stdout}\nstderr: {stderr}"
    );
    (stdout, stderr)
}

/// Runs `gpufeed ARGS --format json`, expects success and one JSON document.
fn json(args: &[&str]) -> (Monitor, String) {
    let mut all = args.to_vec();
    // Before a `--` (watch's command), else last.
    let at = all.iter().position(|a| *a == "--").unwrap_or(all.len());
    all.splice(at..at, ["--format", "json"]);
    let (stdout, stderr) = run(&all, 0);
    assert_eq!(
        stdout.trim_end().lines().count(),
        1,
        "one JSON document: {stdout}"
    );
    (serde_json::from_str(&stdout).unwrap(), stderr)
}

fn synthetic(pattern: &str, seconds: &str) -> Monitor {
    json(&[
        "monitor",
        "--synthetic",
        pattern,
        "--speed",
        "max",
        "--duration",
        seconds,
    ])
    .0
}

#[test]
fn every_synthetic_pattern_gives_its_verdict() {
    for (pattern, verdict) in [
        ("stable", "stable"),
        ("oscillating", "oscillating"),
        ("bursty", "bursty"),
        ("starved", "starved"),
        ("idle", "idle"),
    ] {
        let r = synthetic(pattern, "60");
        assert_eq!(r.schema_version, Monitor::VERSION);
        assert_eq!(r.samples, 601, "{pattern}: 0 to 60 s every 100 ms");
        assert!((r.interval_s - 0.1).abs() < 1e-9);
        assert_eq!(r.gpus.len(), 1);
        assert_eq!(
            r.gpus[0].verdict.as_str(),
            verdict,
            "{pattern}: {:?}",
            r.gpus[0]
        );
        assert_eq!(r.exit_code, None, "only watch has an exit code");
        // A virtual-time run reads no host metrics: this machine's now is not the run's.
        assert_eq!(r.host.samples, 0);
        assert_eq!(r.host.sampler.ticks, 601);
        assert_eq!(r.host.sampler.cpu_pct, None);
    }
}

#[test]
fn the_seeds_oscillation_and_its_parameters() {
    let r = synthetic("oscillating", "30");
    let g = &r.gpus[0];
    assert!((g.period_s.unwrap() - 1.5).abs() < 0.05, "{g:?}");
    assert!(g.p5 < 5.0 && (36.0..46.0).contains(&g.p95), "{g:?}");
    let r = synthetic("oscillating:period=4,low=10,high=80,gpus=2,seed=7", "120");
    assert_eq!(r.gpus.len(), 2);
    for g in &r.gpus {
        assert_eq!(g.verdict.as_str(), "oscillating");
        assert!((g.period_s.unwrap() - 4.0).abs() < 0.1, "{g:?}");
    }
    // Deterministic: the same pattern and seed give the same report.
    assert_eq!(
        synthetic("bursty:seed=3", "40").gpus,
        synthetic("bursty:seed=3", "40").gpus
    );
}

#[test]
fn record_then_replay_gives_the_same_analysis() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("run.jsonl");
    let rec_s = rec.to_str().unwrap();
    let (original, _) = json(&[
        "monitor",
        "--synthetic",
        "oscillating:gpus=2",
        "--speed",
        "max",
        "--duration",
        "30",
        "--record",
        rec_s,
    ]);
    let text = fs_err::read_to_string(&rec).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["format"], "gpufeed-telemetry");
    assert_eq!(header["source"], "synthetic");
    assert_eq!(header["interval_ms"], 100);
    assert_eq!(header["gpus"].as_array().unwrap().len(), 2);
    assert_eq!(text.lines().count(), 1 + 2 * 301);

    // `trace` on the recording.
    let out = gpufeed()
        .args(["trace", rec_s, "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let traced: Util = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(traced.gpus, original.gpus);
    assert_eq!(traced.samples, original.samples);

    // The recording replayed, as fast as possible.
    let (replayed, stderr) = json(&["monitor", "--replay", rec_s, "--speed", "max"]);
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(replayed.gpus, original.gpus);
    for g in &replayed.gpus {
        assert_eq!(g.verdict.as_str(), "oscillating");
    }

    // Replayed and recorded again: still the same.
    let again = dir.path().join("again.jsonl");
    let (twice, _) = json(&[
        "monitor",
        "--replay",
        rec_s,
        "--speed",
        "max",
        "--record",
        again.to_str().unwrap(),
    ]);
    assert_eq!(twice.gpus, original.gpus);
    let header: serde_json::Value = serde_json::from_str(
        fs_err::read_to_string(&again)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(header["source"], "replay");
}

#[test]
fn nvidia_smi_log_replays_like_trace() {
    let csv = example("nvidia-smi-2gpu.csv");
    let out = gpufeed()
        .arg("trace")
        .arg(&csv)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let traced: Util = serde_json::from_slice(&out.stdout).unwrap();
    let (replayed, _) = json(&[
        "monitor",
        "--replay",
        csv.to_str().unwrap(),
        "--speed",
        "max",
    ]);
    assert_eq!(replayed.samples, traced.samples);
    assert_eq!(replayed.gpus.len(), 2);
    for (r, t) in replayed.gpus.iter().zip(&traced.gpus) {
        assert_eq!(r.verdict, t.verdict);
        assert_eq!(r.mean, t.mean);
        assert_eq!(r.idle_gaps.count, t.idle_gaps.count);
        let (rp, tp) = (r.period_s.unwrap_or(0.0), t.period_s.unwrap_or(0.0));
        assert!((rp - tp).abs() < 1e-6, "{rp} vs {tp}");
    }
}

#[test]
fn corrupt_line_in_the_middle_is_named_and_the_rest_analysed() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("run.jsonl");
    json(&[
        "monitor",
        "--synthetic",
        "oscillating",
        "--speed",
        "max",
        "--duration",
        "30",
        "--record",
        rec.to_str().unwrap(),
    ]);
    let text = fs_err::read_to_string(&rec).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[56] = "{\"t\":5.5,\"gpu\":0,\"util\":4";
    fs_err::write(&rec, lines.join("\n") + "\n").unwrap();
    let (r, stderr) = json(&[
        "monitor",
        "--replay",
        rec.to_str().unwrap(),
        "--speed",
        "max",
    ]);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!("warning: `{}` line 57 column ", rec.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("skipped it, the other lines are analysed"),
        "{stderr}"
    );
    assert_eq!(r.samples, 300);
    assert_eq!(r.gpus[0].verdict.as_str(), "oscillating");
    // `trace` refuses the same file, naming the line.
    let (_, stderr) = run(&["trace", rec.to_str().unwrap()], 2);
    assert!(stderr.contains("line 57"), "{stderr}");
}

#[test]
fn replay_at_recorded_speed_waits() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("run.jsonl");
    json(&[
        "monitor",
        "--synthetic",
        "stable",
        "--speed",
        "max",
        "--duration",
        "2",
        "--record",
        rec.to_str().unwrap(),
    ]);
    // 2 s of recording at 4× takes half a second at least; `max` does not wait.
    let start = Instant::now();
    let (r, _) = json(&["monitor", "--replay", rec.to_str().unwrap(), "--speed", "4"]);
    assert!(
        start.elapsed() >= Duration::from_millis(450),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(r.samples, 21);
    let (r, _) = json(&[
        "monitor",
        "--replay",
        rec.to_str().unwrap(),
        "--speed",
        "max",
        "--duration",
        "1",
    ]);
    assert_eq!(r.samples, 11, "--duration cuts a replay");
}

#[test]
fn plain_lines_then_the_text_report() {
    let (stdout, stderr) = run(
        &[
            "monitor",
            "--synthetic",
            "oscillating",
            "--speed",
            "max",
            "--duration",
            "20",
            "--plain",
        ],
        0,
    );
    assert!(stderr.is_empty(), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("    0.0 s  gpu0 "), "{}", lines[0]);
    assert!(lines[0].ends_with("warming up"), "{}", lines[0]);
    assert!(lines[200].starts_with("   20.0 s  gpu0 "), "{}", lines[200]);
    assert!(lines[200].contains("oscillating 1.50 s"), "{}", lines[200]);
    let report = lines[201..].join("\n");
    assert!(
        report.starts_with("synthetic oscillating: 1 GPU, 201 samples every 100 ms"),
        "{report}"
    );
    assert!(
        report.contains("GPU 0  oscillating: swings between"),
        "{report}"
    );
    assert!(report.contains("sampler  201 ticks"), "{report}");
}

#[test]
fn plain_with_json_keeps_stdout_one_document() {
    let (r, stderr) = json(&[
        "monitor",
        "--synthetic",
        "idle",
        "--speed",
        "max",
        "--duration",
        "2",
        "--plain",
    ]);
    assert_eq!(r.gpus[0].verdict.as_str(), "idle");
    assert_eq!(stderr.lines().count(), 21, "{stderr}");
}

#[test]
fn live_synthetic_run_samples_the_host() {
    if !Path::new("/proc/stat").exists() {
        return;
    }
    let (r, _) = json(&[
        "monitor",
        "--synthetic",
        "stable",
        "--duration",
        "1.2",
        "--interval-ms",
        "50",
    ]);
    assert_eq!(r.gpus[0].verdict.as_str(), "stable");
    assert!(r.host.samples >= 10, "{:?}", r.host);
    let cpu = r.host.cpu_pct.unwrap();
    assert!(
        (0.0..=100.0).contains(&cpu.mean) && cpu.max <= 100.0,
        "{cpu:?}"
    );
    assert!(r.host.sampler.cpu_pct.is_some());
    assert!(
        r.host.process_cpu_pct.is_none(),
        "only watch has a process tree"
    );
}

#[test]
fn without_a_driver_monitor_says_so() {
    let out = gpufeed()
        .args(["monitor", "--duration", "1"])
        .env("GPUFEED_NVML_LIB", "/nonexistent/libnvidia-ml.so.1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr,
        "error: no NVIDIA driver found (`/nonexistent/libnvidia-ml.so.1` could not be loaded); \
         pass `--replay FILE` (a gpufeed recording or an nvidia-smi log) or `--synthetic \
         oscillating` to try gpufeed without a GPU\n"
    );
    assert!(out.stdout.is_empty());
}

/// Issue 26: `--interval DURATION` as `trace` takes it, `--interval-ms` kept as its alias.
#[test]
fn interval_as_a_duration_or_in_milliseconds() {
    for args in [
        ["--interval", "50ms"],
        ["--interval", "0.05"],
        ["--interval-ms", "50"],
    ] {
        let mut all = vec![
            "monitor",
            "--synthetic",
            "stable",
            "--speed",
            "max",
            "--duration",
            "5",
        ];
        all.extend(args);
        let (r, _) = json(&all);
        assert!(
            (r.interval_s - 0.05).abs() < 1e-9,
            "{args:?}: {}",
            r.interval_s
        );
    }
    // Usage errors, as clap reports them (exit 2).
    for (args, says) in [
        (vec!["--interval", "0s"], "`0s` is not a positive duration"),
        (
            vec!["--interval", "1s", "--interval-ms", "100"],
            "cannot be used with",
        ),
    ] {
        let mut all = vec!["monitor", "--synthetic", "idle"];
        all.extend(args);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_gpufeed"))
            .args(&all)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains(says), "{all:?}: {stderr}");
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let steps = dir.path().join("steps.txt");
    fs_err::write(&steps, "12.5\n13\n").unwrap();
    let missing_dir = dir.path().join("no/such/dir/run.jsonl");
    let missing = dir.path().join("missing.jsonl");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["monitor", "--synthetic", "idle", "--interval-ms", "0"],
            "`--interval-ms` must be at least 1",
        ),
        (
            vec![
                "monitor",
                "--synthetic",
                "idle",
                "--record",
                missing_dir.to_str().unwrap(),
            ],
            "does not exist; create it first",
        ),
        (
            vec!["monitor", "--speed", "max"],
            "`--speed` needs `--replay FILE` or `--synthetic PATTERN`",
        ),
        (
            vec!["monitor", "--synthetic", "idle", "--speed", "fast"],
            "`--speed` must be a positive factor",
        ),
        (
            vec!["monitor", "--synthetic", "idle", "--speed", "max"],
            "never ends by itself",
        ),
        (
            vec!["monitor", "--synthetic", "idle", "--duration", "0"],
            "`--duration` must be",
        ),
        (
            vec!["monitor", "--synthetic", "wobbly"],
            "unknown pattern `wobbly`",
        ),
        (
            vec!["monitor", "--synthetic", "oscillating:period=-1"],
            "`period` is a time",
        ),
        (
            vec!["monitor", "--replay", missing.to_str().unwrap()],
            "failed to read",
        ),
        (
            vec!["monitor", "--replay", steps.to_str().unwrap()],
            "looks like a list of step times",
        ),
        (
            vec!["monitor", "--synthetic", "idle", "--prometheus", "nope"],
            "is not an address",
        ),
        (
            vec!["watch", "--interval-ms", "0", "--", "true"],
            "`--interval-ms` must be at least 1",
        ),
        (
            vec!["watch", "--", "gpufeed-no-such-program"],
            "failed to run `gpufeed-no-such-program`",
        ),
    ];
    for (args, want) in cases {
        let (stdout, stderr) = run(&args, 2);
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        // One message; `watch` may warn first that there is no driver.
        let last = stderr.lines().last().unwrap_or_default();
        assert!(last.starts_with("error: "), "{args:?}: {stderr}");
        assert!(last.contains(want), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    assert!(!missing_dir.exists());
}

#[test]
fn watch_returns_the_commands_exit_code() {
    for (script, code) in [("exit 0", 0), ("exit 1", 1), ("kill -KILL $$", 137)] {
        let (report, _) = {
            let out = gpufeed()
                .args(["watch", "--format", "json", "--", "sh", "-c", script])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(code), "{script}");
            (
                serde_json::from_slice::<Monitor>(&out.stdout).unwrap(),
                out.stderr,
            )
        };
        assert_eq!(report.exit_code, Some(code), "{script}");
        assert_eq!(report.schema_version, Monitor::VERSION);
    }
}

/// A Python loop fed by a sleeping generator: `watch` samples its stacks over the run, as
/// `gpufeed attach` does, and the end report carries the `attach` document.
#[test]
fn watch_samples_a_python_commands_stacks() {
    if !StdCommand::new("python3")
        .arg("-c")
        .arg("pass")
        .status()
        .is_ok_and(|s| s.success())
    {
        eprintln!("skipped: python3 not found");
        return;
    }
    let script = "import time\n\
def source():\n    while True:\n        time.sleep(0.01)\n        yield 1\n\
n = 0\n\
for item in source():\n    sum(range(2000))\n    n += 1\n    if n >= 150:\n        break\n";
    // A file, as training scripts are: the rules read the loop's own lines.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("train.py");
    fs_err::write(&file, script).unwrap();
    let (report, _) = json(&[
        "watch",
        "--attach-rate",
        "100",
        "--",
        "sh",
        "-c",
        &format!("python3 {}", file.display()),
    ]);
    let a = report.attach.expect("an attach document");
    assert_eq!(a.verdict.to_string(), "input-bound", "{:?}", a.evidence);
    assert!(a.shares.data_wait > 0.5, "{:?}", a.shares);
    assert!(a.exited);
    assert_eq!(a.launcher.as_deref(), Some("sh"));
    // Off: no document, and a command without Python gets a note, not an error.
    let (report, _) = json(&["watch", "--no-attach", "--", "python3", "-c", "pass"]);
    assert!(report.attach.is_none());
    let (report, stderr) = json(&["watch", "--", "sh", "-c", "sleep 0.3"]);
    assert!(report.attach.is_none());
    assert!(stderr.contains("ran no Python"), "{stderr}");
}

#[test]
fn watch_text_report_names_the_command_and_its_cpu() {
    let (stdout, _) = run(
        &[
            "watch",
            "--interval-ms",
            "50",
            "--",
            "sh",
            "-c",
            "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done",
        ],
        0,
    );
    assert!(stdout.contains("command `sh -c 'i=0; while"), "{stdout}");
    assert!(
        stdout.contains("exited with 0; its processes used"),
        "{stdout}"
    );
}

#[test]
fn watch_keeps_the_command_output_off_the_json() {
    let out = gpufeed()
        .args([
            "watch",
            "--format",
            "json",
            "--",
            "sh",
            "-c",
            "echo hello from the command",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let r: Monitor = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r.exit_code, Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hello from the command"));
}

/// `gpufeed watch --no-attach --interval-ms 50 --record DIR/watch.jsonl -- sh -c SCRIPT`;
/// the recording's path.
fn record_watch(dir: &Path, script: &str) -> PathBuf {
    let rec = dir.join("watch.jsonl");
    let rec_arg = rec.to_str().unwrap();
    let args = [
        "watch",
        "--no-attach",
        "--interval-ms",
        "50",
        "--record",
        rec_arg,
        "--",
        "sh",
        "-c",
        script,
    ];
    run(&args, 0);
    rec
}

#[test]
fn watch_records_the_process_tree() {
    let dir = tempfile::tempdir().unwrap();
    let rec = record_watch(dir.path(), "sleep 0.6");
    let text = fs_err::read_to_string(&rec).unwrap();
    let hosts: Vec<serde_json::Value> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v.get("host").is_some())
        .collect();
    assert!(hosts.len() >= 5, "{text}");
    assert!(
        hosts
            .iter()
            .any(|h| h["host"]["proc_count"].as_u64() >= Some(1)),
        "{text}"
    );
}

/// Everything gpufeed writes, `trace` reads: a `watch --record` file of a machine with no
/// GPU holds the host's samples alone, which `trace` refused ("no utilisation samples;
/// record with ... `gpufeed monitor --record`", issue 41). Its host figures are given.
#[test]
fn trace_reads_what_watch_records() {
    let dir = tempfile::tempdir().unwrap();
    let rec = record_watch(dir.path(), "sleep 0.4");
    let out = StdCommand::new(env!("CARGO_BIN_EXE_gpufeed"))
        .args(["trace", rec.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let gpus = doc["gpus"].as_array().unwrap();
    if gpus.is_empty() {
        // No GPU was visible: the host's figures, said so.
        assert!(doc["host"]["samples"].as_u64() >= Some(5), "{doc}");
        assert!(stderr.contains("recording of the host alone"), "{stderr}");
    }
}

/// Starts `gpufeed watch -- sh -c SCRIPT` where the script touches `mark` once it runs,
/// waits for the mark, sends `signal` to gpufeed, and returns gpufeed's exit code.
fn signal_watch(script: &str, signal: &str) -> i32 {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("started");
    let script = format!(
        "{script}; touch '{}'; while :; do sleep 0.05; done",
        mark.display()
    );
    let child = StdCommand::new(env!("CARGO_BIN_EXE_gpufeed"))
        .args(["watch", "--format", "json", "--", "sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !mark.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the command never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let ok = StdCommand::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let out = child.wait_with_output().unwrap();
    let r: Monitor = serde_json::from_slice(&out.stdout).unwrap();
    let code = out.status.code().unwrap();
    assert_eq!(r.exit_code, Some(code));
    code
}

#[test]
fn watch_forwards_sigint_and_sigterm() {
    assert_eq!(signal_watch("trap 'exit 42' INT", "-INT"), 42);
    assert_eq!(signal_watch("trap 'exit 43' TERM", "-TERM"), 43);
    // Without a trap, the shell dies of the signal: 128 + 15.
    assert_eq!(signal_watch("true", "-TERM"), 143);
}

#[test]
fn watch_needs_a_command() {
    let (_, stderr) = run(&["watch"], 2);
    assert!(stderr.contains("required"), "{stderr}");
}

/// One HTTP GET of `/metrics` on `addr`; `None` when nothing answers.
fn scrape(addr: &str) -> Option<String> {
    use std::io::{Read as _, Write as _};
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: gpufeed\r\n\r\n")
        .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    Some(out)
}

#[test]
fn prometheus_is_scraped_while_a_synthetic_source_runs() {
    let mut child = StdCommand::new(env!("CARGO_BIN_EXE_gpufeed"))
        .args([
            "monitor",
            "--synthetic",
            "oscillating",
            "--interval-ms",
            "5",
            "--speed",
            "20",
            "--duration",
            "600",
            "--prometheus",
            "127.0.0.1:0",
            "--format",
            "json",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let addr = common::served_address(&mut stderr);
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    let start = Instant::now();
    let page = loop {
        let page = scrape(&addr).unwrap_or_default();
        // dcgm-exporter's labels: `gpu`, `modelName`, `Hostname` (a synthetic GPU has no UUID).
        if page.lines().any(|l| {
            l.starts_with("gpufeed_gpu_verdict{gpu=\"0\",modelName=\"synthetic (oscillating)\",")
                && l.ends_with(",verdict=\"oscillating\"} 1")
        }) {
            break page;
        }
        assert!(
            start.elapsed() < Duration::from_secs(25),
            "never oscillating: {page}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(page.starts_with("HTTP/1.1 200 OK\r\n"), "{page}");
    assert!(
        page.contains("# TYPE gpufeed_gpu_utilization_percent gauge"),
        "{page}"
    );
    let period: f64 = page
        .lines()
        .filter(|l| l.starts_with("gpufeed_gpu_oscillation_period_seconds{gpu=\"0\","))
        .find_map(|l| l.rsplit_once("} ").map(|(_, v)| v))
        .unwrap_or_else(|| panic!("{page}"))
        .parse()
        .unwrap();
    assert!((period - 1.5).abs() < 0.2, "{period}");
    // SIGTERM ends a monitor run like Ctrl-C: the report is still printed.
    let ok = StdCommand::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let r: Monitor = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r.gpus[0].verdict.as_str(), "oscillating");
}

#[test]
fn prometheus_port_in_use() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let (stdout, stderr) = run(
        &[
            "monitor",
            "--synthetic",
            "idle",
            "--duration",
            "1",
            "--prometheus",
            &addr,
        ],
        2,
    );
    assert!(stdout.is_empty());
    assert!(
        stderr.starts_with(&format!(
            "error: cannot serve Prometheus metrics on `{addr}`"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("pick another one"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn monitor_samples_a_fake_nvidia_driver() {
    // GPU 0 of the fake swings between 95 % and 5 % every second (a 2 s period) with a
    // reading every 1/6 s while busy; GPU 1 holds 42 % and fails to read its temperature.
    // 8 s is four periods, the fewest for which the analysis finds the period (at 6 s it
    // says `bursty`).
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("nvml.jsonl");
    let out = gpufeed()
        .args(["monitor", "--duration", "8", "--format", "json", "--record"])
        .arg(&rec)
        .env("GPUFEED_NVML_LIB", fake_nvml())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    // Each failing reading once (a loaded machine may add a note about late ticks).
    let unavailable: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("not available"))
        .collect();
    assert_eq!(
        unavailable,
        [
            "warning: GPU 1: temperature is not available (an internal driver error \
             occurred); it is left out",
            "warning: GPU 1: PCIe throughput is not available (the requested operation is \
             not available on the target device); it is left out"
        ],
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let r: Monitor = serde_json::from_str(&stdout).unwrap();
    assert_eq!(r.schema_version, Monitor::VERSION);
    assert_eq!(r.gpus.len(), 2, "{r:?}");
    let (g0, g1) = (&r.gpus[0], &r.gpus[1]);
    assert_eq!(g0.verdict.as_str(), "oscillating", "{g0:?}");
    assert!((g0.period_s.unwrap() - 2.0).abs() < 0.2, "{g0:?}");
    assert_eq!((g0.p5, g0.p95), (5.0, 95.0), "{g0:?}");
    assert_eq!((g1.mean, g1.std), (42.0, 0.0), "{g1:?}");
    // The recording: the driver's names, and each reading where it belongs.
    let text = fs_err::read_to_string(&rec).unwrap();
    let header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(header["source"], "nvml");
    let names: Vec<&str> = header["gpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Fake GPU 0", "Fake GPU 1"]);
    let samples: Vec<serde_json::Value> = text
        .lines()
        .skip(1)
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v.get("gpu").is_some())
        .collect();
    let gpu0: Vec<&serde_json::Value> = samples.iter().filter(|v| v["gpu"] == 0).collect();
    assert!(
        gpu0.iter()
            .any(|v| v["power_w"] == 287.5 && v["temp_c"] == 61)
    );
    assert!(gpu0.iter().any(|v| v["sm_active_pct"] == 37.5));
    assert!(
        samples
            .iter()
            .all(|v| v["gpu"] == 0 || v.get("temp_c").is_none())
    );
    // One sample per reading of the driver, 1/6 s apart (two steps at most where a dry
    // spell ends), none repeated at a poll's time.
    let t: Vec<f64> = gpu0.iter().map(|v| v["t"].as_f64().unwrap()).collect();
    for w in t.windows(2) {
        let steps = (w[1] - w[0]) * 6.0;
        assert!(
            (steps - 1.0).abs() < 1e-3 || (steps - 2.0).abs() < 1e-3,
            "{w:?} in {t:?}"
        );
    }
}

#[test]
fn a_lost_gpu_is_left_out_and_the_others_are_watched() {
    // The fake lists a third GPU whose handle fails with "GPU is lost".
    let out = gpufeed()
        .args(["monitor", "--duration", "1", "--format", "json"])
        .env("GPUFEED_NVML_LIB", fake_nvml())
        .env("FAKE_NVML_LOST_GPU", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "warning: GPU 2: the GPU itself (nvmlDeviceGetHandleByIndex) is not available"
        ),
        "{stderr}"
    );
    let r: Monitor = serde_json::from_str(&stdout).unwrap();
    assert_eq!(r.gpus.len(), 2, "{r:?}");
}

#[test]
fn nvidia_smi_replay_skips_a_corrupt_line_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("gpu.csv");
    let clean = fs_err::read_to_string(example("nvidia-smi-2gpu.csv")).unwrap();
    let mut lines: Vec<&str> = clean.lines().collect();
    // A row of GPU 1 cut off.
    lines[4] = "2026/11/21 23:59:30.103, 1, 9";
    fs_err::write(&csv, lines.join("\n") + "\n").unwrap();
    let csv_s = csv.to_str().unwrap();
    let (whole, _) = json(&[
        "monitor",
        "--replay",
        example("nvidia-smi-2gpu.csv").to_str().unwrap(),
        "--speed",
        "max",
    ]);
    let (r, stderr) = json(&["monitor", "--replay", csv_s, "--speed", "max"]);
    assert_eq!(
        stderr,
        format!(
            "warning: `{csv_s}` line 5: 3 fields, but the header has 4; the line may be cut \
             off or two files were joined, fix or delete it; skipped it, the other lines are \
             analysed\n"
        )
    );
    assert_eq!(r.samples, whole.samples - 1);
    assert_eq!(r.gpus.len(), 2);
    assert_eq!(r.gpus[0], whole.gpus[0], "GPU 0 lost nothing");
    assert_eq!(r.gpus[1].verdict, whole.gpus[1].verdict);
    // `trace` refuses the same file, naming the line.
    let (_, stderr) = run(&["trace", csv_s], 2);
    assert!(stderr.contains("line 5"), "{stderr}");
}

#[test]
fn a_driver_without_nvml_init_is_too_old() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("old.c");
    fs_err::write(&src, "int nvmlShutdown(void) { return 0; }\n").unwrap();
    let lib = dir.path().join("libnvidia-ml.so.1");
    let ok = StdCommand::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&src)
        .status()
        .unwrap_or_else(|e| panic!("cannot run `cc` ({e}); install gcc"));
    assert!(ok.success());
    let out = gpufeed()
        .args(["monitor", "--duration", "1"])
        .env("GPUFEED_NVML_LIB", &lib)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!(
            "error: no NVIDIA driver found (`{}` lacks `nvmlInit_v2`; the driver is too old); \
             pass `--replay FILE`",
            lib.display()
        )),
        "{stderr}"
    );
}
