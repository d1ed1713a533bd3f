//! `gpufeed attach PID`: bad targets each exit 2 with one line saying what to do, and a
//! real Python loop gives a document valid against its published schema. Tests that need
//! `python3` (or root, for dropping privileges) skip with a message without it.
#![allow(clippy::unwrap_used)]
#![allow(clippy::print_stderr)] // the tests' own output: why one skipped, and the figures measured

use std::path::Path;
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{assert_valid, gpufeed};

/// A child process, killed when dropped.
struct Target(Child);

impl Drop for Target {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn python_loop() -> Option<Target> {
    python_running(
        "import time\nx = 0\nwhile True:\n    for i in range(100000):\n        x += i\n    time.sleep(0.005)\n",
    )
}

/// A Python loop that runs for `seconds`, then exits.
fn python_loop_for(seconds: f64) -> Option<Target> {
    python_running(&format!(
        "import time\nend = time.monotonic() + {seconds}\nx = 0\nwhile time.monotonic() < end:\n    for i in range(100000):\n        x += i\n    time.sleep(0.005)\n"
    ))
}

/// Whether python3 runs; says the test is skipped when not.
fn has_python() -> bool {
    let ok = StdCommand::new("python3")
        .args(["-c", "pass"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: python3 not found");
    }
    ok
}

/// `python3 -c code`, once its interpreter is set up; `None` (skipped) without python3.
fn python_running(code: &str) -> Option<Target> {
    if !has_python() {
        return None;
    }
    let child = StdCommand::new("python3")
        .args(["-c", code])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // The interpreter is set up once its maps hold it and a moment has passed.
    std::thread::sleep(Duration::from_millis(500));
    Some(Target(child))
}

/// The standard output of a run that must succeed (its stderr shown when it does not).
fn succeeded(cmd: &mut assert_cmd::Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Exit 2 and exactly one line on stderr, containing each of `parts`.
fn one_line_error(args: &[&str], parts: &[&str]) {
    let out = gpufeed().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    for p in parts {
        assert!(err.contains(p), "`{p}` not in: {err}");
    }
}

#[test]
fn a_pid_that_does_not_exist() {
    one_line_error(&["attach", "999999999"], &["no process 999999999"]);
}

#[test]
fn a_process_that_is_not_python() {
    let sleeper = Target(StdCommand::new("sleep").arg("30").spawn().unwrap());
    let pid = sleeper.0.id().to_string();
    one_line_error(&["attach", &pid], &["is not Python", "(sleep)"]);
}

#[test]
fn bad_durations_and_rates() {
    // clap's own usage error: exit 2, the accepted forms named (clap adds its `--help` hint).
    let out = gpufeed()
        .args(["attach", "1", "--duration", "10parsecs"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a duration"));
    one_line_error(&["attach", "1", "--rate", "0"], &["--rate"]);
}

/// Drops privileges (setpriv, as nobody) and attaches to a root-owned Python process:
/// the message names every way out.
#[test]
fn permission_denied_names_the_ways_out() {
    if !is_root() {
        eprintln!("skipped: not root, so privileges cannot be dropped");
        return;
    }
    let Some(setpriv) = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        eprintln!("skipped: setpriv not installed");
        return;
    };
    let Some(target) = python_loop() else { return };
    let pid = target.0.id().to_string();
    let out = StdCommand::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_gpufeed"))
        .args(["attach", &pid, "--duration", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if err.starts_with("setpriv:") {
        eprintln!("skipped: nobody cannot run the test binary here: {err}");
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    for part in [
        "permission denied",
        "same",
        "sudo",
        "--cap-add SYS_PTRACE",
        "kernel.yama.ptrace_scope",
    ] {
        assert!(err.contains(part), "`{part}` not in: {err}");
    }
}

fn is_root() -> bool {
    // `id -u` rather than a libc call: the test crate has no unsafe and no libc.
    StdCommand::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

#[test]
fn a_python_loop_gives_a_valid_document() {
    let Some(target) = python_loop() else { return };
    let pid = target.0.id().to_string();
    let stdout =
        succeeded(gpufeed().args(["attach", &pid, "--duration", "1s", "--format", "json"]));
    let doc: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    assert_valid("attach", &doc);
    assert!(doc["samples"].as_u64().unwrap() > 20, "{doc}");
    let text = gpufeed()
        .args(["attach", &pid, "--duration", "0.5"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.starts_with("verdict: "), "{text}");
    assert!(text.contains("fix: "), "{text}");
}

/// Waits up to `limit` for `child` to exit.
fn wait_for(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let t = Instant::now();
    while t.elapsed() < limit {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    None
}

#[test]
fn live_mode_reports_every_window_until_the_target_exits() {
    let Some(target) = python_loop_for(2.5) else {
        return;
    };
    let pid = target.0.id().to_string();
    let stdout = succeeded(gpufeed().args([
        "attach",
        &pid,
        "--live",
        "--duration",
        "0.5s",
        "--format",
        "json",
    ]));
    let docs: Vec<serde_json::Value> = String::from_utf8_lossy(&stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // About 2 s of the loop's life were left: 3 or 4 windows of 0.5 s, the last one
    // maybe cut short by the exit.
    assert!(docs.len() >= 3, "{} windows", docs.len());
    for d in &docs {
        assert_valid("attach", d);
    }
    assert!(docs[0]["samples"].as_u64().unwrap() > 10, "{}", docs[0]);
}

#[test]
fn live_mode_stops_on_ctrl_c_and_when_its_reader_leaves() {
    let Some(target) = python_loop() else { return };
    let pid = target.0.id().to_string();
    let args = ["attach", &pid, "--live", "--duration", "0.3s"];
    // Ctrl-C: the window under way is reported, and the run ends with success.
    let mut live = StdCommand::new(env!("CARGO_BIN_EXE_gpufeed"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    let sent = StdCommand::new("kill")
        .args(["-INT", &live.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = wait_for(&mut live, Duration::from_secs(5)).expect("still running after Ctrl-C");
    let out = live.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(status.success(), "{stderr}");
    // Piped text is one line per window: the time, the verdict and the shares.
    assert!(stdout.lines().count() >= 2, "{stdout}");
    for line in stdout.lines() {
        assert!(
            line.starts_with('+') && line.contains("data wait"),
            "{line}"
        );
    }
    assert!(stderr.contains("windows reported"), "{stderr}");
    assert!(
        target.0.id() > 0 && Path::new(&format!("/proc/{pid}")).exists(),
        "the target lives on"
    );
    // A reader that closes the pipe ends it too (`gpufeed attach PID --live | head -1`).
    let mut live = StdCommand::new(env!("CARGO_BIN_EXE_gpufeed"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(live.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    assert!(first.contains("data wait"), "{first}");
    let status = wait_for(&mut live, Duration::from_secs(5)).expect("still running with no reader");
    assert!(status.success());
}

/// The GPU branch of the sync rule, through NVML as `attach` loads it (the fake NVML of
/// gpufeed-telemetry, which reports the target's per-process utilisation): the same loop,
/// waiting 2 ms in a native call on its own line every 6 ms step, is compute-bound next to
/// a busy GPU and sync-bound next to an idle one, and the evidence says NVML decided.
#[test]
fn a_gpu_reading_decides_whether_syncs_starve_the_gpu() {
    if !has_python() {
        return;
    }
    let loops = Path::new(env!("CARGO_MANIFEST_DIR")).join("../gpufeed-attach/tests/loops");
    let dir = tempfile::tempdir().unwrap();
    let child = StdCommand::new("python3")
        .arg(loops.join("item_sync.py"))
        .arg(dir.path().join("truth.txt"))
        .current_dir(&loops)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let target = Target(child);
    std::thread::sleep(Duration::from_millis(500));
    let pid = target.0.id().to_string();
    for (sm, verdict, says) in [
        ("95", "compute-bound", "the host waits for a busy GPU"),
        ("10", "sync-bound", "the GPU idles around the syncs"),
    ] {
        let stdout = succeeded(
            gpufeed()
                .args(["attach", &pid, "--duration", "2.5s", "--format", "json"])
                .env("GPUFEED_NVML_LIB", common::fake_nvml())
                .env("FAKE_NVML_PROCESS_PID", &pid)
                .env("FAKE_NVML_PROCESS_SM", sm),
        );
        let doc: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
        assert_valid("attach", &doc);
        let gpus = doc["gpus"]
            .as_array()
            .unwrap_or_else(|| panic!("no GPU reading: {doc}"));
        assert_eq!(gpus.len(), 1, "only fake GPU 0 ran the target: {doc}");
        assert_eq!(
            gpus[0]["process_util_pct"],
            sm.parse::<f64>().unwrap(),
            "{doc}"
        );
        assert_eq!(doc["verdict"], verdict, "{doc}");
        let evidence = doc["evidence"].to_string();
        assert!(
            evidence.contains("GPU reading (NVML)") && evidence.contains(says),
            "{evidence}"
        );
    }
}
