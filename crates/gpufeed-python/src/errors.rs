//! Rust errors as Python exceptions: the message is the Rust one (it already names the
//! file, line or value and the fix); the class is what a Python user would catch.

use std::path::Path;

use pyo3::PyErr;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyRuntimeError, PyValueError};

use gpufeed_data::DataError;

/// A data error: a missing file is `FileNotFoundError`, other I/O `OSError`, bad settings
/// or a corrupt cache `ValueError`.
pub(crate) fn data(e: DataError) -> PyErr {
    classify(&e, e.to_string())
}

/// An `anyhow` error from the CLI's library code, its context chain on one line; classed
/// as [`data`] classes a data error inside it.
pub(crate) fn any(e: &anyhow::Error) -> PyErr {
    let message = format!("{e:#}");
    match e.downcast_ref::<DataError>() {
        Some(d) => classify(d, message),
        None => PyValueError::new_err(message),
    }
}

fn classify(e: &DataError, message: String) -> PyErr {
    match e {
        DataError::NotFound { .. } | DataError::NoManifest { .. } => {
            PyFileNotFoundError::new_err(message)
        }
        DataError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(message)
        }
        DataError::Io { .. } => PyOSError::new_err(message),
        _ => PyValueError::new_err(message),
    }
}

/// `FileNotFoundError` for a path that should exist.
pub(crate) fn missing(path: &Path, what: &str, fix: &str) -> PyErr {
    PyFileNotFoundError::new_err(format!("`{}`: {what}; {fix}", path.display()))
}

/// Ok in the process that created the object (`created`), else the error of [`forked`]:
/// after `fork()` the object's Rust threads do not exist.
pub(crate) fn same_process(what: &str, created: u32) -> Result<(), PyErr> {
    if std::process::id() == created {
        Ok(())
    } else {
        Err(forked(what, created))
    }
}

/// An object used in a process it was not created in (after `fork()`).
fn forked(what: &str, created: u32) -> PyErr {
    PyRuntimeError::new_err(format!(
        "this {what} was created in process {created} and is used in process {} after \
         fork(): its Rust threads do not exist here, so it would hang. Create the {what} in \
         the process that uses it (after the fork, e.g. inside the worker function), or use \
         the 'spawn' start method",
        std::process::id()
    ))
}
