//! `gpufeed._gpufeed`: the Rust half of the Python package `gpufeed` (python/gpufeed).
//!
//! - [`features`]: `mel` (librosa-exact, the GIL released) and `precompute`.
//! - [`cache`]: `Cache`, whose items are read-only numpy views into the mapped shards.
//! - [`loader`]: `Loader`, batches assembled on Rust threads and handed to Python as numpy
//!   arrays that own their buffers; resumable and sharded over ranks.
//! - [`steps`]: the analysis behind `StepTimer` (the phase-steps document of the CLI).
//! - [`monitor`]: `Monitor`, GPU and host sampling on a Rust thread.
//! - [`attach`]: `attach`, the Python stacks of another process sampled with
//!   `gpufeed-attach`, in this process.
//! - [`analyze`]: `analyze`, every stage of `gpufeed analyze` through `gpufeed-app`,
//!   returning the report's document.
//! - `schema_text`: the JSON Schema of a document, as `gpufeed schema NAME` prints it.
//!
//! Python never runs on the worker threads, except the user's own function of
//! `Cache.add` and `precompute(extra=)` (`user`), which takes the GIL for its call only; no
//! call holds the GIL while it waits.
//! Every bad input raises a Python exception that names the value and the fix.

use pyo3::prelude::*;

mod analyze;
mod attach;
mod cache;
mod errors;
mod features;
mod loader;
mod monitor;
mod steps;
mod user;

/// The JSON Schema of a gpufeed document (`gpufeed schema NAME`), as published under
/// `docs/schemas/`: the `phase-steps` document is what `StepTimer.report().to_dict()` is.
#[pyfunction]
fn schema_text(name: &str) -> PyResult<String> {
    let all = gpufeed_analysis::registry::documents();
    match all.iter().find(|e| e.name == name) {
        Some(e) => Ok(gpufeed_analysis::registry::published(e)),
        None => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "no document named `{name}`: the documents are {}",
            all.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// The extension module.
#[pymodule]
fn _gpufeed(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(schema_text, m)?)?;
    analyze::register(m)?;
    attach::register(m)?;
    features::register(m)?;
    cache::register(m)?;
    loader::register(m)?;
    steps::register(m)?;
    monitor::register(m)?;
    Ok(())
}
