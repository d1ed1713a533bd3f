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
    let ok = StdCommand::new("python3")
        .args(["-c", "pass"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: python3 not found");
        return None;
    }
    let child = StdCommand::new("python3")
        .args([
            "-c",
            "import time\nx = 0\nwhile True:\n    for i in range(100000):\n        x += i\n    time.sleep(0.005)\n",
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // The interpreter is set up once its maps hold it and a moment has passed.
    let t = Instant::now();
    while t.elapsed() < Duration::from_millis(500) {
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(Target(child))
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
    let out = gpufeed()
        .args(["attach", &pid, "--duration", "1s", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
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
