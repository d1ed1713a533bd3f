//! `gpufeed attach PID`: explain a running training job without restarting it.
//!
//! The Python stacks of the process (or, under a launcher such as `torchrun` or `mpirun`,
//! of each training process it started) and of its child processes (DataLoader workers,
//! `multiprocessing` pools) are read with [py-spy](https://github.com/benfred/py-spy) as a
//! library, in its non-blocking mode: the target is never stopped, so ending gpufeed at any
//! moment leaves it running as before. A stack that changed under three reads in a row
//! (torn) is counted and reported, never used. The instants are a Poisson process of the
//! rate asked (no loop rhythm can lock onto them), read at real-time priority
//! (`SCHED_FIFO`) where allowed, else at nice -10 where allowed.
//!
//! Each sample of the training thread is classified by one table ([`rules::RULES`]) into
//! data wait, sync, compute, checkpoint/logging or other, and the shares are judged with
//! the thresholds of `StepTimer` and `trace` (`gpufeed_stats::thresholds`): the result is
//! the `attach` document of `gpufeed-contract`.
//!
//! ```no_run
//! let doc = gpufeed_attach::attach(&gpufeed_attach::Options::new(1234)).unwrap();
//! assert!(doc.shares.data_wait <= 1.0);
//! ```

mod analysis;
mod error;
pub mod procs;
mod render;
pub mod rules;
mod sample;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub use analysis::{Sources, context, judge, rules_table};
pub use error::AttachError;
pub use gpufeed_contract::Attach;
pub use render::{live_line, live_panel, render};
pub use sample::{ProcRecord, Recording, ThreadSample, record};

/// What to sample and how.
#[derive(Debug, Clone)]
pub struct Options {
    /// The process given.
    pub pid: u32,
    /// How long to sample.
    pub duration: Duration,
    /// Samples per second.
    pub rate_hz: f64,
    /// Whether to read the GPUs through NVML (when it loads).
    pub nvml: bool,
    /// Ends the window early when set (`gpufeed watch`: the command exited).
    pub stop: Option<Arc<AtomicBool>>,
}

impl Options {
    /// Whether `stop` has been set (Ctrl-C in live mode; the command's exit in `watch`).
    #[must_use]
    pub fn stopped(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// 10 s at 100 Hz, with NVML.
    #[must_use]
    pub fn new(pid: u32) -> Self {
        Self {
            pid,
            duration: Duration::from_secs(10),
            rate_hz: 100.0,
            nvml: true,
            stop: None,
        }
    }
}

/// Samples the target for the window and judges it.
pub fn attach(opts: &Options) -> Result<Attach, AttachError> {
    check(opts)?;
    let target = procs::resolve(opts.pid)?;
    let rec = record(&target, opts)?;
    Ok(judge(&target, &rec, opts))
}

fn check(opts: &Options) -> Result<(), AttachError> {
    if !(opts.rate_hz.is_finite() && (1.0..=1000.0).contains(&opts.rate_hz)) {
        return Err(AttachError::Usage(format!(
            "--rate must be between 1 and 1000 samples per second, not {}",
            opts.rate_hz
        )));
    }
    if opts.pid == std::process::id() {
        return Err(AttachError::OwnProcess { pid: opts.pid });
    }
    Ok(())
}

/// Live mode (`gpufeed attach PID --live`): [`attach`] over one window after another,
/// each of `opts.duration`, handing each window's document to `each` as it ends, until
/// `opts.stop` is set (Ctrl-C), the target exits, or `each` returns `false`. The target is
/// resolved again for every window, so ranks a launcher starts later are found. Returns
/// how many windows were reported.
///
/// # Errors
///
/// The first window's error, as [`attach`]'s (a bad target). Once a window has been
/// reported, a target that is gone ends the loop without an error.
pub fn live(opts: &Options, mut each: impl FnMut(&Attach) -> bool) -> Result<usize, AttachError> {
    check(opts)?;
    let mut windows = 0;
    while !opts.stopped() {
        // The target may exit between two windows, or as one opens.
        let doc = match procs::resolve(opts.pid)
            .and_then(|target| record(&target, opts).map(|rec| judge(&target, &rec, opts)))
        {
            Ok(doc) => doc,
            Err(AttachError::NoSuchProcess { .. }) if windows > 0 => break,
            Err(e) => return Err(e),
        };
        windows += 1;
        // A window cut short by Ctrl-C is still reported: it is what was sampled.
        if !each(&doc) || doc.exited {
            break;
        }
    }
    Ok(windows)
}

/// How often [`follow`] looks again for a Python interpreter to read.
const RETRY: Duration = Duration::from_millis(250);

/// [`attach`] for a process this one started (`gpufeed watch -- CMD`): waits until it, or
/// a process below it (`sh -c`, a launcher), runs a Python interpreter py-spy can read,
/// then samples until `opts.stop` is set or the window ends. A command that never runs
/// Python gives the last error ([`AttachError::NotPython`]); one that exits first, too.
pub fn follow(opts: &Options) -> Result<Attach, AttachError> {
    check(opts)?;
    let start = std::time::Instant::now();
    let mut last: Option<AttachError> = None;
    loop {
        let tried = procs::resolve(opts.pid).and_then(|target| {
            let rest = Options {
                duration: opts.duration.saturating_sub(start.elapsed()),
                ..opts.clone()
            };
            let rec = record(&target, &rest)?;
            Ok(judge(&target, &rec, &rest))
        });
        match tried {
            Ok(doc) => return Ok(doc),
            // Not Python yet (a shell before its exec), or an interpreter not yet set up.
            Err(e @ (AttachError::NotPython { .. } | AttachError::Unreadable { .. })) => {
                if opts.stopped() || start.elapsed() >= opts.duration || !procs::exists(opts.pid) {
                    return Err(e);
                }
                last = Some(e);
                std::thread::sleep(RETRY);
            }
            // Gone after it was seen: what it was when last seen (a command without Python).
            Err(AttachError::NoSuchProcess { .. }) if last.is_some() => {
                return Err(last.unwrap_or(AttachError::NoSuchProcess { pid: opts.pid }));
            }
            Err(e) => return Err(e),
        }
    }
}
