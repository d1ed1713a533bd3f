//! What the analyses tell the user while they run (`gpufeed_analysis::Ui`): a precompute's
//! progress bar (items/s and ETA, hidden when stderr is not a terminal), notes and warnings,
//! all on stderr through the printer.

use gpufeed_data::precompute::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::printer;

/// The terminal's [`gpufeed_analysis::Ui`].
#[derive(Debug)]
pub struct Terminal(ProgressBar);

impl Terminal {
    /// A hidden bar, drawn once a precompute starts.
    pub fn new() -> Self {
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} utterances  {per_sec}  ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix("precompute");
        Self(bar)
    }
}

impl Progress for Terminal {
    fn start(&self, total: u64, done: u64) {
        self.0.set_length(total);
        self.0.set_position(done);
        self.0.reset_eta();
    }
    fn advance(&self, n: u64) {
        self.0.inc(n);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

impl gpufeed_analysis::Ui for Terminal {
    fn note(&self, msg: &str) {
        printer::note(msg);
    }
    fn warn(&self, msg: &str) {
        printer::warn(msg);
    }
}

/// Runs `read` (a long read of profiler traces) with a bar on stderr of the bytes read of
/// the total and the files done, polled from `progress`. Drawn only on a terminal, and only
/// once the read has lasted half a second: a small trace shows nothing.
pub fn trace_progress<T>(progress: &gpufeed_kineto::job::Progress, read: impl FnOnce() -> T) -> T {
    use std::sync::atomic::Ordering::Relaxed;
    use std::time::Duration;
    // The read's end wakes the bar at once: a small trace's run is not held up.
    let (done, wait) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let start = std::time::Instant::now();
            let mut bar: Option<ProgressBar> = None;
            while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                wait.recv_timeout(Duration::from_millis(100))
            {
                if start.elapsed() < Duration::from_millis(500) {
                    continue;
                }
                let files = || {
                    format!(
                        "{}/{} files",
                        progress.files_done.load(Relaxed),
                        progress.files_total.load(Relaxed)
                    )
                };
                let b = bar.get_or_insert_with(|| {
                    // Set up hidden, so that the first frame shows the totals and the rate
                    // counts from now.
                    let b = ProgressBar::hidden();
                    b.set_style(
                        ProgressStyle::with_template(
                            "{prefix} [{bar:20}] {bytes}/{total_bytes}  {msg}  {bytes_per_sec}  ETA {eta}",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                    );
                    b.set_prefix("trace");
                    b.set_length(progress.bytes_total.load(Relaxed));
                    b.set_position(progress.bytes_read.load(Relaxed));
                    b.set_message(files());
                    b.reset_eta();
                    b.set_draw_target(ProgressDrawTarget::stderr());
                    b
                });
                b.set_length(progress.bytes_total.load(Relaxed));
                b.set_position(progress.bytes_read.load(Relaxed));
                b.set_message(files());
            }
            if let Some(b) = bar {
                b.finish_and_clear();
            }
        });
        let out = read();
        drop(done);
        out
    })
}
