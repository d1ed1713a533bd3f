//! Real Python loops, each timing its own data wait (`tests/loops/truth.py`), sampled by
//! `gpufeed_attach::attach`: the `data_wait` share must be within 5 points of the loop's
//! own figure over the same window, with the right verdict. Skipped (with a message) where
//! `python3` is absent.

#![allow(clippy::unwrap_used)]
#![allow(clippy::print_stderr)] // the tests' own output: why one skipped, and the figures measured

use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use gpufeed_attach::{Options, attach};
use gpufeed_contract::{Attach, AttachVerdict};

/// One loop at a time: five CPU-bound loops at once on a 2-core machine measure the
/// machine's contention, not gpufeed (the residual over-count under overload is in
/// docs/attach.md); each test holds this while its loop runs.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn python() -> Option<&'static str> {
    Command::new("python3")
        .arg("-c")
        .arg("import sys; assert sys.version_info >= (3, 8)")
        .status()
        .ok()
        .filter(|s| s.success())
        .map(|_| "python3")
}

fn loops() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/loops")
}

/// A running loop, killed when dropped.
struct Loop {
    child: Child,
    truth: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Loop {
    fn drop(&mut self) {
        // The loop and its worker processes: its own process group.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The loop's last line: (steps, wait_s, elapsed_s).
fn truth_line(path: &Path) -> Option<(f64, f64, f64)> {
    let text = fs_err::read_to_string(path).ok()?;
    let last = text.lines().rev().find(|l| l.split(' ').count() == 3)?;
    let v: Vec<f64> = last.split(' ').filter_map(|x| x.parse().ok()).collect();
    (v.len() == 3).then(|| (v[0], v[1], v[2]))
}

fn start(script: &str, args: &[&str]) -> Option<Loop> {
    let Some(py) = python() else {
        eprintln!("skipped: python3 not found");
        return None;
    };
    let dir = tempfile::tempdir().unwrap();
    let truth = dir.path().join("truth.txt");
    let child = Command::new(py)
        .arg(loops().join(script))
        .arg(&truth)
        .args(args)
        .current_dir(loops())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let l = Loop {
        child,
        truth,
        _dir: dir,
    };
    // Warm up: a few steps done.
    let t = Instant::now();
    while truth_line(&l.truth).is_none_or(|(steps, _, _)| steps < 5.0) {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{script} did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Some(l)
}

/// Samples per second in the truth windows. With 8 s of them (1,600 samples) a share's
/// sampling error is within ±2.5 points at 95 % (`gpufeed_stats::sampling`), so the
/// 5-point tolerance below tests gpufeed's bias rather than its luck: at 100 Hz over 4 s
/// the error alone reached 5 points about one window in twenty.
const RATE_HZ: f64 = 200.0;
const WINDOW_S: f64 = 8.0;

/// Attaches for `secs`; the document and the loop's own wait share over the window.
fn sample(l: &Loop, secs: f64) -> (Attach, f64) {
    let before = truth_line(&l.truth).unwrap();
    let opts = Options {
        pid: l.child.id(),
        duration: Duration::from_secs_f64(secs),
        rate_hz: RATE_HZ,
        nvml: false,
        stop: None,
    };
    let doc = attach(&opts).unwrap();
    let after = truth_line(&l.truth).unwrap();
    let own = (after.1 - before.1) / (after.2 - before.2);
    eprintln!(
        "{}: truth {:.3}, gpufeed data_wait {:.3} sync {:.3} compute {:.3} other {:.3}, {} samples, {} torn, verdict {}\n{:#?}\nfix: {}",
        l.truth.display(),
        own,
        doc.shares.data_wait,
        doc.shares.sync,
        doc.shares.compute,
        doc.shares.other,
        doc.samples,
        doc.torn,
        doc.verdict,
        doc.evidence,
        doc.fix
    );
    (doc, own)
}

/// [`sample`] until `agrees(doc, own)`, three windows at most; the last one when none
/// agrees (its assertions then fail). The loop times itself and gpufeed samples it on a
/// shared 2-core VM: a burst of contention from outside (other VMs, the CI's own work)
/// skews one window, while a systematic error skews every window, so it still fails.
fn sample_agreeing(l: &Loop, secs: f64, agrees: impl Fn(&Attach, f64) -> bool) -> (Attach, f64) {
    let mut last = sample(l, secs);
    for _ in 1..3 {
        if agrees(&last.0, last.1) {
            break;
        }
        eprintln!("the window disagreed with the loop's own timing; sampling again");
        last = sample(l, secs);
    }
    last
}

fn sums_to_one(doc: &Attach) {
    let s = doc.shares;
    let sum = s.data_wait + s.sync + s.compute + s.checkpoint_logging + s.other;
    assert!((sum - 1.0).abs() < 1e-9, "{sum}");
}

#[test]
fn slow_source_is_input_bound_within_5_points() {
    let _one = serial();
    let Some(l) = start("slow_source.py", &[]) else {
        return;
    };
    let (doc, own) = sample_agreeing(&l, WINDOW_S, |d, own| {
        d.verdict == AttachVerdict::InputBound && (d.shares.data_wait - own).abs() <= 0.05
    });
    sums_to_one(&doc);
    assert_eq!(doc.verdict, AttachVerdict::InputBound);
    assert!(
        (doc.shares.data_wait - own).abs() <= 0.05,
        "gpufeed {} vs the loop's own {own}",
        doc.shares.data_wait
    );
    // What removing the wait is worth: 1 / (1 - data_wait), about 2.5x at 0.6.
    let f = doc
        .if_fixed
        .as_ref()
        .unwrap_or_else(|| panic!("no if_fixed"));
    assert!((f.speedup - 1.0 / (1.0 - doc.shares.data_wait)).abs() < 1e-9);
    assert!(doc.samples > 800, "{}", doc.samples);
    assert!(doc.ranks[0].training_thread.starts_with("main thread"));
    // The fix names the loop's own line.
    assert!(doc.fix.contains("slow_source.py:"), "{}", doc.fix);
}

#[test]
fn heavy_compute_is_compute_bound_within_5_points() {
    let _one = serial();
    let Some(l) = start("heavy_compute.py", &[]) else {
        return;
    };
    let (doc, own) = sample_agreeing(&l, WINDOW_S, |d, own| {
        d.verdict == AttachVerdict::ComputeBound && (d.shares.data_wait - own).abs() <= 0.05
    });
    sums_to_one(&doc);
    assert_eq!(doc.verdict, AttachVerdict::ComputeBound);
    assert!((doc.shares.data_wait - own).abs() <= 0.05);
    // The hottest line of the user's own code: the arithmetic of `burn` (truth.py).
    assert!(doc.fix.contains("`burn` (truth.py:"), "{}", doc.fix);
}

#[test]
fn slow_workers_are_input_bound_and_their_function_named() {
    let _one = serial();
    let Some(l) = start("pool_workers.py", &[]) else {
        return;
    };
    let (doc, own) = sample_agreeing(&l, WINDOW_S, |d, own| {
        d.verdict == AttachVerdict::InputBound && (d.shares.data_wait - own).abs() <= 0.05
    });
    sums_to_one(&doc);
    assert_eq!(doc.verdict, AttachVerdict::InputBound);
    assert!((doc.shares.data_wait - own).abs() <= 0.05);
    assert_eq!(doc.workers.len(), 2, "{:?}", doc.workers);
    for w in &doc.workers {
        assert_eq!(w.parent, l.child.id());
        let hot = &w.top_frames[0];
        // The innermost user frame of a busy worker: `burn` inside `load_item`, or
        // `load_item` itself.
        assert!(
            hot.function == "burn" || hot.function == "load_item",
            "{hot:?}"
        );
    }
    assert!(
        doc.evidence.iter().any(|e| e.starts_with("2 workers")),
        "{:?}",
        doc.evidence
    );
}

#[test]
fn a_sync_line_is_a_sync() {
    let _one = serial();
    let Some(l) = start("item_sync.py", &[]) else {
        return;
    };
    let (doc, own) = sample_agreeing(&l, WINDOW_S, |d, own| {
        d.verdict == AttachVerdict::SyncBound && (d.shares.sync - own).abs() <= 0.05
    });
    sums_to_one(&doc);
    // The loop's wait column holds its sync time here.
    assert!(
        (doc.shares.sync - own).abs() <= 0.05,
        "{} vs {own}",
        doc.shares.sync
    );
    // Without a GPU reading: 2 ms waits, hundreds a second: short and frequent.
    assert_eq!(doc.verdict, AttachVerdict::SyncBound);
    assert!(doc.fix.contains("item_sync.py:"), "{}", doc.fix);
    assert!(doc.evidence.iter().any(|e| e.contains("no GPU reading")));
}

#[test]
fn syncs_of_a_process_without_a_gpu_driver_wait_for_its_cpu() {
    let _one = serial();
    // The same loop, without the stand-in for CUDA's driver: a job on the CPU (JAX's or
    // TF's CPU backend), whose `block_until_ready` or `.numpy()` waits for the CPU's own
    // computation. Before the driver was looked for, it was sync-bound.
    let Some(l) = start("item_sync.py", &["--cpu"]) else {
        return;
    };
    let (doc, _) = sample_agreeing(&l, WINDOW_S, |d, own| {
        d.verdict == AttachVerdict::ComputeBound && (d.shares.sync - own).abs() <= 0.05
    });
    assert_eq!(doc.verdict, AttachVerdict::ComputeBound);
    assert!(
        doc.evidence.iter().any(|e| e.contains("no GPU driver")),
        "{:?}",
        doc.evidence
    );
}

#[test]
fn a_target_exiting_mid_window_still_gets_a_report() {
    let _one = serial();
    // About 300 steps of 10 ms: it ends 3 s in, well before the 8 s window.
    let Some(l) = start("slow_source.py", &["300"]) else {
        return;
    };
    let opts = Options {
        pid: l.child.id(),
        duration: Duration::from_secs(8),
        rate_hz: 100.0,
        nvml: false,
        stop: None,
    };
    let doc = attach(&opts).unwrap();
    assert!(doc.exited);
    assert!(doc.window_s < 7.0, "{}", doc.window_s);
    assert!(doc.samples > 20);
    assert_eq!(doc.verdict, AttachVerdict::InputBound);
    assert!(doc.evidence.iter().any(|e| e.contains("exited")));
}
