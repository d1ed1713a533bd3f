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
