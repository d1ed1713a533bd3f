//! The analysis behind the Python `StepTimer`: the CLI's phase-steps document.

use pyo3::prelude::*;

pub(crate) fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
