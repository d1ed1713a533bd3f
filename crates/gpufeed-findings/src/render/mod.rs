//! Renderers: a [`Report`] as text, JSON or Markdown, and `doctor`'s text grouped by check
//! ([`DoctorText`]). One file per format; renderers only
//! format (they never read files or the machine) and return the text for the binary's
//! printer.
//!
//! ```
//! use gpufeed_findings::render::{Renderer, Text};
//! use gpufeed_findings::{Finding, Report, Severity};
//!
//! let report = Report::new(vec![
//!     Finding::new("sleep-in-loop", Severity::Warning, "`time.sleep` in the training loop")
//!         .at("train.py", 12, 9)
//!         .evidence("time.sleep(0.1)")
//!         .fix("delete the sleep"),
//! ]);
//! let text = Text.render(&report);
//! assert!(text.starts_with("train.py:12:9: warning[sleep-in-loop] `time.sleep` in the training loop\n"));
//! ```

mod doctor;
mod json;
mod markdown;
mod text;

pub use doctor::DoctorText;
pub use json::Json;
pub use markdown::Markdown;
pub use text::Text;

use crate::finding::{Finding, Report};

/// Formats a report.
pub trait Renderer {
    /// The whole output, ending with a newline.
    fn render(&self, report: &Report) -> String;
}

/// `path:line:column`, `path`, or nothing, as far as the finding is tied to a place.
pub(crate) fn location(f: &Finding) -> Option<String> {
    let path = f.path.as_deref()?;
    Some(match (f.line, f.column) {
        (Some(line), Some(column)) => format!("{path}:{line}:{column}"),
        (Some(line), None) => format!("{path}:{line}"),
        _ => path.to_owned(),
    })
}
