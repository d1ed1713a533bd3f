//! `gpufeed.attach(pid)`: `gpufeed-attach` called in this process, as the command line
//! calls it. py-spy reads the target's memory through `process_vm_readv` and never stops
//! it, so the sampling needs no process of its own: it runs on a Rust thread while the
//! calling thread waits with the GIL released, and Ctrl-C ends the window early (then
//! raises `KeyboardInterrupt`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::errors;
use crate::features::to_py;

/// How long the caller waits with the GIL released before it checks for signals.
const WAIT_SLICE: Duration = Duration::from_millis(50);

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(attach_run, m)?)?;
    Ok(())
}

/// Samples process `pid` for `duration` seconds at `rate` Hz and returns the `attach`
/// document as a dict.
#[pyfunction]
#[pyo3(signature = (pid, *, duration, rate))]
fn attach_run(py: Python<'_>, pid: u32, duration: f64, rate: f64) -> PyResult<Bound<'_, PyAny>> {
    if !(duration.is_finite() && duration > 0.0) {
        return Err(PyValueError::new_err(format!(
            "duration={duration}: pass a positive number of seconds, e.g. 10"
        )));
    }
    // gpufeed-attach's own limits, checked here to name the keyword argument.
    if !(rate.is_finite() && (1.0..=1000.0).contains(&rate)) {
        return Err(PyValueError::new_err(format!(
            "rate={rate}: pass between 1 and 1000 samples per second, e.g. 100"
        )));
    }
    if pid == std::process::id() {
        return Err(PyValueError::new_err(
            "gpufeed.attach samples another process; to time this process's own loop, use \
             gpufeed.StepTimer",
        ));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let opts = gpufeed_attach::Options {
        duration: Duration::from_secs_f64(duration),
        rate_hz: rate,
        stop: Some(Arc::clone(&stop)),
        ..gpufeed_attach::Options::new(pid)
    };
    let handle = std::thread::Builder::new()
        .name("gpufeed-attach".into())
        .spawn(move || gpufeed_attach::attach(&opts))
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the sampling thread: {e}")))?;
    let mut interrupted = None;
    while !handle.is_finished() {
        py.detach(|| std::thread::sleep(WAIT_SLICE));
        if let Err(e) = py.check_signals() {
            stop.store(true, Ordering::Relaxed);
            interrupted = Some(e);
            break;
        }
    }
    let outcome = py
        .detach(move || handle.join())
        .map_err(|_| PyRuntimeError::new_err("the sampling thread panicked; please report it"))?;
    if let Some(e) = interrupted {
        return Err(e);
    }
    let doc = outcome.map_err(|e| errors::attach(&e))?;
    to_py(py, &doc)
}
