//! The one error type of this crate.
//!
//! Every message is one line: it names the file in backticks and, where there is one, the
//! 1-based line number; it quotes the offending value in backticks and says what to do.
//! [`TraceError::Io`] keeps the operating system's reason as its [`source`], so print
//! errors with anyhow's `{:#}` (the house style) to get
//! ``failed to read `run.csv`: No such file or directory (os error 2)``; every other
//! variant has the whole message in its `Display`.
//!
//! [`source`]: std::error::Error::source

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use crate::trace::{TraceFormat, TraceKind};

/// The command that records an nvidia-smi log gpufeed reads; quoted in hints.
pub const NVSMI_RECORD_COMMAND: &str =
    "nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv -lms 100";

/// Why a trace could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// The file could not be opened or read; the reason is the [`source`](Self::Io::source).
    #[error("failed to read `{}`", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason, without the path (it is in the message already).
        #[source]
        source: io::Error,
    },

    /// The file holds nothing but whitespace.
    #[error(
        "`{}` is empty: expected an nvidia-smi CSV log, a gpufeed JSONL recording or a list \
         of step times",
        path.display()
    )]
    Empty {
        /// The file.
        path: PathBuf,
    },

    /// A file of a kind gpufeed recognises but does not read (`nvidia-smi pmon`, a
    /// `dmon` recording without utilisation, `npu-smi` tables).
    #[error("`{}` line {line}: {what}; {instead}", path.display())]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What the file is.
        what: String,
        /// What to record or give instead.
        instead: String,
    },

    /// A line is not valid UTF-8.
    #[error(
        "`{}` line {line}: not valid UTF-8 text; gpufeed reads CSV, JSONL and plain-text \
         traces, check that this is the right file",
        path.display()
    )]
    InvalidUtf8 {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
    },

    /// A line is longer than any trace line can be (the file is probably not a trace).
    #[error(
        "`{}` line {line}: longer than {limit} bytes, so this is not a text trace; check \
         that this is the right file",
        path.display()
    )]
    LineTooLong {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The longest line accepted, in bytes.
        limit: usize,
    },

    /// The content does not match the kind the caller asked for.
    #[error(
        "`{}` looks like {}, not {}; drop `--kind {requested}` or pass `--kind {}`",
        path.display(),
        found.describe(),
        requested.describe(),
        found.kind()
    )]
    WrongKind {
        /// The file.
        path: PathBuf,
        /// What the content looks like.
        found: TraceFormat,
        /// What the caller asked for.
        requested: TraceKind,
    },

    /// A field that must be a number is not.
    #[error("`{}` line {line}: `{value}` is not a number{}", path.display(), in_column(column))]
    NotANumber {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The offending value (shortened if long).
        value: String,
        /// The column's header name, if the file has a header.
        column: Option<String>,
    },

    /// A timestamp that is none of the forms [`crate::nvsmi`] reads.
    #[error(
        "`{}` line {line}: `{value}` is not a timestamp (column `{column}`); expected \
         `YYYY/MM/DD HH:MM:SS.mmm` as nvidia-smi writes it, `YYYY-MM-DD HH:MM:SS`, or seconds \
         or milliseconds since 1970",
        path.display()
    )]
    InvalidTimestamp {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The offending value (shortened if long).
        value: String,
        /// The column's name.
        column: String,
    },

    /// A GPU index that is not a whole number.
    #[error(
        "`{}` line {line}: `{value}` is not a GPU index (column `{column}`); expected a whole \
         number such as `0`",
        path.display()
    )]
    InvalidGpuIndex {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The offending value (shortened if long).
        value: String,
        /// The column's name.
        column: String,
    },

    /// A utilisation outside 0..=100 %.
    #[error(
        "`{}` line {line}: utilisation `{value}` is outside 0..=100 % (column `{column}`){}",
        path.display(),
        if *guessed { GUESSED_HINT } else { "" }
    )]
    UtilOutOfRange {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The offending value.
        value: f64,
        /// The column's name.
        column: String,
        /// The file has no header, so the column was guessed.
        guessed: bool,
    },

    /// The header of an nvidia-smi log has no utilisation column.
    #[error(
        "`{}` line {line}: no utilisation column (found {}); record with `{NVSMI_RECORD_COMMAND}`",
        path.display(),
        list(found)
    )]
    NoUtilColumn {
        /// The file.
        path: PathBuf,
        /// 1-based line number of the header.
        line: usize,
        /// The columns the header has.
        found: Vec<String>,
    },

    /// An nvidia-smi log without a header in which no column looks like utilisation.
    #[error(
        "`{}` line {line}: no header, and no column looks like utilisation (found {}); \
         record with `{NVSMI_RECORD_COMMAND}`",
        path.display(),
        list(values)
    )]
    NoUtilGuess {
        /// The file.
        path: PathBuf,
        /// 1-based line number of the first row.
        line: usize,
        /// The values of the first row.
        values: Vec<String>,
    },

    /// A row with a different number of fields than the header (or the first row).
    #[error(
        "`{}` line {line}: {found} fields, but {} has {expected}; the line may be cut off or \
         two files were joined, fix or delete it",
        path.display(),
        if *headerless { "the first row" } else { "the header" }
    )]
    FieldCount {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// Fields on this line.
        found: usize,
        /// Fields in the header (or in the first row of a file without one).
        expected: usize,
        /// The file has no header; `expected` comes from its first row.
        headerless: bool,
    },

    /// Nothing usable after the header: no samples, or all were unavailable.
    #[error("`{}` has no utilisation samples{}", path.display(), no_samples_reason(*skipped))]
    NoSamples {
        /// The file.
        path: PathBuf,
        /// Values skipped because they were unavailable (`[N/A]`, or absent in JSONL).
        skipped: usize,
    },

    /// The first line of a JSONL file is not a gpufeed header.
    #[error(
        "`{}` line {line}: not a gpufeed recording header; expected a JSON object with \
         `\"format\":\"{}\"` and `\"version\"`, as `gpufeed monitor --record` writes on the \
         first line",
        path.display(),
        crate::jsonl::FORMAT
    )]
    NotAHeader {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
    },

    /// The first line of a step recording is not its header.
    #[error(
        "`{}` line {line}: not a gpufeed step recording header{}; expected a JSON object with \
         `\"format\":\"{}\"` and `\"version\"`, as `StepTimer.save` writes on the first line",
        path.display(),
        found.as_ref().map(|f| format!(" (its format is `{f}`)")).unwrap_or_default(),
        crate::phase_steps::FORMAT
    )]
    NotAStepsHeader {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The `format` the line declares, when it declares one.
        found: Option<String>,
    },

    /// A line of a step recording that is JSON but not a valid step.
    #[error("`{}` line {line}: {message}; fix or delete the line", path.display())]
    InvalidStep {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },

    /// A JSONL recording of a version this build cannot read.
    #[error(
        "`{}` line {line}: recording format version `{found}` is not supported: this build \
         of gpufeed reads version {supported}; {}",
        path.display(),
        if found.parse::<u64>().is_ok_and(|v| v > u64::from(*supported)) {
            "upgrade gpufeed to read it"
        } else {
            "the header is damaged"
        }
    )]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The version the file declares, as written.
        found: String,
        /// The version this build reads.
        supported: u32,
    },

    /// A JSONL line that is not valid JSON or not a valid header or sample.
    #[error(
        "`{}` line {line}{}: {message}; fix or delete the line",
        path.display(),
        column.map(|c| format!(" column {c}")).unwrap_or_default()
    )]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// 1-based column, when serde_json knows it.
        column: Option<usize>,
        /// serde_json's message, without its own position.
        message: String,
    },

    /// A step list with several columns and no header.
    #[error(
        "`{}` line {line}: {count} columns but no header; add a header line naming the \
         step-time column (such as `step_time_ms`) or keep a single column (for an \
         nvidia-smi log, pass `--kind util`)",
        path.display()
    )]
    StepColumnsWithoutHeader {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// Columns on that line.
        count: usize,
    },

    /// A step-list header with no or several step-time columns.
    #[error(
        "`{}` line {line}: {} step-time column among {}; keep a single column of step times, \
         or name exactly one column like `step_time_ms`",
        path.display(),
        if candidates.is_empty() { "no" } else { "more than one" },
        list(if candidates.is_empty() { columns } else { candidates })
    )]
    StepColumn {
        /// The file.
        path: PathBuf,
        /// 1-based line number of the header.
        line: usize,
        /// Every column of the header.
        columns: Vec<String>,
        /// The columns that could hold step times (empty when none could).
        candidates: Vec<String>,
    },

    /// A step time that is negative, NaN or infinite.
    #[error(
        "`{}` line {line}: `{value}` is not a valid step time{}; step times must be finite \
         and not negative",
        path.display(),
        in_column(column)
    )]
    InvalidStepTime {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The offending value.
        value: String,
        /// The column's header name, if the file has a header.
        column: Option<String>,
    },

    /// A step list with no values.
    #[error(
        "`{}` has no step times; expected one number per line, or a CSV with a header and a \
         step-time column",
        path.display()
    )]
    NoSteps {
        /// The file.
        path: PathBuf,
    },

    /// The file holds more than a reader keeps from one trace (see
    /// [`trace::MAX_SAMPLES`](crate::trace::MAX_SAMPLES) and the limits beside it): memory
    /// stays bounded whatever the file's size.
    #[error(
        "`{}` line {line}: more than {what}, the most gpufeed keeps from one trace ({memory} \
         in memory); cut the file into parts (the hours you want to look at) and pass one",
        path.display()
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// 1-based line number of the first value over the limit.
        line: usize,
        /// The limit, counted (`67108864 samples`).
        what: String,
        /// What the limit takes in memory (`1 GiB`).
        memory: String,
    },
}

const GUESSED_HINT: &str = "; the file has no header, so columns were guessed as `timestamp, \
                            index, utilization.gpu, ...`: record with a header to be sure";

fn in_column(column: &Option<String>) -> String {
    column
        .as_ref()
        .map(|c| format!(" (column `{c}`)"))
        .unwrap_or_default()
}

fn no_samples_reason(skipped: usize) -> String {
    if skipped == 0 {
        format!("; record with `{NVSMI_RECORD_COMMAND}` or `gpufeed monitor --record FILE`")
    } else {
        format!(
            ": all {skipped} values were unavailable (such as `[N/A]`); this GPU or driver \
             does not report utilisation"
        )
    }
}

/// `` `a`, `b`, `c` `` (at most 12 names, then a count).
fn list(names: &[String]) -> String {
    const MAX: usize = 12;
    let mut out = String::new();
    for (i, name) in names.iter().take(MAX).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "`{name}`");
    }
    if names.len() > MAX {
        let _ = write!(out, " and {} more", names.len() - MAX);
    }
    if names.is_empty() {
        out.push_str("nothing");
    }
    out
}

impl TraceError {
    /// An I/O error on `path`. fs-err puts the path into its errors; the path is in our
    /// message already, so keep only the operating system's reason as the source.
    pub(crate) fn io(path: &Path, error: io::Error) -> Self {
        TraceError::Io {
            path: path.to_owned(),
            source: error,
        }
    }
}

/// Checks the `version` of a JSONL header (`value`, line `line` of `path`) against the one
/// this gpufeed reads: `missing()` when there is none, [`TraceError::UnsupportedVersion`]
/// when it differs.
pub(crate) fn check_version(
    value: &serde_json::Value,
    supported: u32,
    path: &Path,
    line: usize,
    missing: impl FnOnce() -> TraceError,
) -> Result<(), TraceError> {
    let version = value.get("version").ok_or_else(missing)?;
    if version.as_u64() == Some(u64::from(supported)) {
        Ok(())
    } else {
        Err(TraceError::UnsupportedVersion {
            path: path.to_owned(),
            line,
            found: shown(&version.to_string()),
            supported,
        })
    }
}

/// A value as quoted in a message: at most 60 characters, control characters escaped, so
/// that a message stays on one line whatever the file holds.
pub(crate) fn shown(value: &str) -> String {
    shown_max(value, 60)
}

/// [`shown`] with another length limit, in characters.
pub(crate) fn shown_max(value: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in value.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::chain;

    #[test]
    fn missing_file_is_one_line_with_the_os_reason_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.csv");
        let e = crate::trace::read_trace(&path, None).unwrap_err();
        let expected = format!(
            "failed to read `{}`: {}",
            path.display(),
            io::Error::from_raw_os_error(2)
        );
        assert_eq!(chain(&e), expected);
        assert!(
            matches!(&e, TraceError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
        );
    }

    #[test]
    fn plain_io_error_is_kept() {
        let e = TraceError::io(Path::new("a.csv"), io::Error::other("disk on fire"));
        assert_eq!(chain(&e), "failed to read `a.csv`: disk on fire");
    }

    #[test]
    fn shown_escapes_and_shortens() {
        assert_eq!(shown("a\u{1b}b"), "a\\u{1b}b");
        let long = "x".repeat(100);
        assert_eq!(shown(&long).chars().count(), 61);
    }

    #[test]
    fn lists_are_capped() {
        let names: Vec<String> = (0..20).map(|i| i.to_string()).collect();
        assert!(list(&names).ends_with("`11` and 8 more"));
        assert_eq!(list(&[]), "nothing");
    }
}
