//! The one place that writes to stdout and stderr.
//!
//! stdout carries data only (a report, or exactly one JSON document); warnings, errors and
//! hints go to stderr. gpufeed prints no colour yet, so `NO_COLOR` is honoured trivially;
//! output reads right in a log file.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{self, Write};

use crate::cli::Format;

/// Writes data to stdout. A closed pipe (`gpufeed trace x | head`) is not an error.
pub fn data(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// The one way a command's document reaches stdout: with `--format json`, exactly one JSON
/// document on one line; as text, what `text` writes of it (as hyperfine's exporters:
/// one document, several renderings).
pub fn export<D: serde::Serialize>(
    format: Format,
    doc: &D,
    text: impl FnOnce(&D) -> String,
) -> anyhow::Result<()> {
    let out = match format {
        Format::Json => serde_json::to_string(doc)? + "\n",
        Format::Text => text(doc),
    };
    data(&out)?;
    Ok(())
}

/// [`data`] for output that goes on (`attach --live`): `Ok(false)` once the reader has
/// closed the pipe (`gpufeed attach PID --live | head`), so the caller can stop.
pub fn data_while_read(text: &str) -> io::Result<bool> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(false),
        other => other.map(|()| true),
    }
}

/// A warning on stderr.
pub fn warn(message: &str) {
    eprintln!("warning: {message}");
}

/// An error on stderr, on one line.
pub fn error(message: &str) {
    eprintln!("error: {message}");
}

/// Progress and context for people, on stderr.
pub fn note(message: &str) {
    eprintln!("{message}");
}
