//! gpufeed's live sessions, for the command line: `gpufeed monitor` and `gpufeed watch --
//! CMD`.
//!
//! - [`session`]: a session end to end: the source opened (gpufeed-analysis'
//!   `MonitorSource::open`), the sampler run by gpufeed-analysis' one sampling loop, every
//!   tick recorded (`--record`), collected, exported (`--prometheus`) and shown, then the
//!   end report.
//! - [`tui`]: the ratatui panel; [`plain`]: the `--plain` line of a tick.
//! - [`child`]: `watch`'s command: started from argv, its signals forwarded, its exit code.
//!
//! A session writes through a [`Console`]: the binary's goes to stdout and stderr. The
//! Python `Monitor` does not come here: it samples without a view
//! (`gpufeed_analysis::monitor::sample_until`).

pub mod child;
pub mod plain;
pub mod session;
pub mod tui;

pub use session::{MonitorSettings, WatchSettings, Watched, monitor, watch};

/// Where a session's lines go.
pub trait Console {
    /// A line of data on stdout (a `--plain` tick).
    ///
    /// # Errors
    ///
    /// stdout cannot be written.
    fn data(&self, line: &str) -> anyhow::Result<()>;
    /// A line for people on stderr (what is served, how to stop).
    fn note(&self, line: &str);
    /// A warning on stderr.
    fn warn(&self, message: &str);
}
