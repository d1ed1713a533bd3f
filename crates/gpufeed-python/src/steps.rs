//! The analysis behind the Python `StepTimer`: the CLI's phase-steps document
//! (`gpufeed_analysis::phase_steps`), so Python computes no statistic and no verdict of its own.

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use gpufeed_analysis::phase_steps::{self, Meta, StepRecord};

use crate::errors;
use crate::features::to_py;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(phase_steps_report, m)?)?;
    m.add_function(wrap_pyfunction!(phase_steps_save, m)?)?;
    Ok(())
}

/// One step as the Python timer keeps it: total ms, [(phase, ms)], items.
type PyStep = (f64, Vec<(String, f64)>, Option<u64>);

fn meta_of(meta: &Bound<'_, PyDict>) -> PyResult<Meta> {
    let get = |k: &str| meta.get_item(k);
    Ok(Meta {
        source: get("source")?
            .map(|v| v.extract::<String>())
            .transpose()?
            .unwrap_or_else(|| "python StepTimer".to_owned()),
        sync: get("sync")?
            .map(|v| v.extract::<bool>())
            .transpose()?
            .unwrap_or(false),
        warmup: get("warmup")?
            .map(|v| v.extract::<usize>())
            .transpose()?
            .unwrap_or(0),
        batch_size: get("batch_size")?
            .filter(|v| !v.is_none())
            .map(|v| v.extract::<u64>())
            .transpose()?,
    })
}

fn records_of(steps: Vec<PyStep>) -> Vec<StepRecord> {
    steps
        .into_iter()
        .map(|(total_ms, phases, items)| StepRecord {
            total_ms,
            phases,
            items,
        })
        .collect()
}

/// The document and its text for the recorded steps.
#[pyfunction]
fn phase_steps_report<'py>(
    py: Python<'py>,
    meta: &Bound<'py, PyDict>,
    steps: Vec<PyStep>,
) -> PyResult<(Bound<'py, PyAny>, String)> {
    let meta = meta_of(meta)?;
    let records = records_of(steps);
    let doc = phase_steps::document(&meta, &records)
        .map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
    let text = phase_steps::render_text(&doc);
    Ok((to_py(py, &doc)?, text))
}

/// Writes the recording as JSONL (a temporary file renamed into place).
#[pyfunction]
fn phase_steps_save(
    py: Python<'_>,
    path: PathBuf,
    meta: &Bound<'_, PyDict>,
    steps: Vec<PyStep>,
) -> PyResult<()> {
    let meta = meta_of(meta)?;
    let records = records_of(steps);
    py.detach(move || phase_steps::write_jsonl(&path, &meta, &records))
        .map_err(|e| errors::any(&e))
}
