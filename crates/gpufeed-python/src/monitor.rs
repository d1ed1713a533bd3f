//! `Monitor`: GPU and host sampling on a Rust thread while Python code runs.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use gpufeed_analysis::monitor::report::MonitorReport;
use gpufeed_analysis::monitor::{MonitorSource, sample_until};

use crate::errors;
use crate::features::to_py;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Monitor>()?;
    Ok(())
}

type Outcome = anyhow::Result<(MonitorReport, Vec<String>)>;

/// Samples the GPUs (and this host) on a Rust thread from `start()` (or `with`) to
/// `stop()`; `report()` is then the document of `gpufeed monitor --format json`.
#[pyclass(frozen, module = "gpufeed._gpufeed")]
pub(crate) struct Monitor {
    source: MonitorSource,
    interval: f64,
    speed: f64,
    stop: Arc<AtomicBool>,
    thread: Mutex<Option<JoinHandle<Outcome>>>,
    result: Mutex<Option<(MonitorReport, Vec<String>)>>,
    pid: u32,
}

/// The exception for a run that could not sample `source`: no NVIDIA driver or GPU is a
/// `ConfigError` naming the `source=` values that work without one (the command line's
/// text names its flags); a recording that cannot be replayed a `TraceError`; a synthetic
/// pattern that does not parse a `ConfigError`.
fn source_error(source: &MonitorSource, e: &anyhow::Error) -> PyErr {
    use gpufeed_telemetry::source::SourceError;
    let message = format!("{e:#}");
    match (source, e.downcast_ref::<SourceError>()) {
        (_, Some(SourceError::NoDriver { .. } | SourceError::NoGpu)) => errors::config(format!(
            "{message}; to try gpufeed without a GPU, pass              `gpufeed.Monitor(source=\"synthetic:oscillating\")`, or replay a recording or an              nvidia-smi log with `source=\"replay:PATH\"`"
        )),
        (MonitorSource::Replay(_), _) => errors::trace(message),
        (MonitorSource::Synthetic(_), _) => errors::config(message),
        (MonitorSource::Nvml, _) => PyRuntimeError::new_err(message),
    }
}

impl Monitor {
    fn check_process(&self) -> PyResult<()> {
        errors::same_process("Monitor", self.pid)
    }
}

#[pymethods]
impl Monitor {
    /// `source`: `"nvml"` (the default: this machine's GPUs), `"synthetic:PATTERN"` (e.g.
    /// `"synthetic:oscillating"`, as `gpufeed monitor --synthetic`), or `"replay:PATH"`.
    /// `speed` runs a synthetic or replayed source faster than real time. Every argument
    /// after `interval` is keyword-only.
    #[new]
    #[pyo3(signature = (interval = 0.1, *, source = "nvml", speed = 1.0))]
    fn new(interval: f64, source: &str, speed: f64) -> PyResult<Self> {
        if !(interval.is_finite() && interval > 0.0) {
            return Err(PyValueError::new_err(format!(
                "interval={interval}: pass a positive number of seconds, e.g. 0.1"
            )));
        }
        if !(speed.is_finite() && speed > 0.0) {
            return Err(PyValueError::new_err(format!(
                "speed={speed}: pass a positive factor (1 = real time)"
            )));
        }
        let source = match source.split_once(':') {
            None if source == "nvml" => MonitorSource::Nvml,
            Some(("synthetic", pattern)) => MonitorSource::Synthetic(pattern.to_owned()),
            Some(("replay", path)) => MonitorSource::Replay(PathBuf::from(path)),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "source='{source}': expected 'nvml', 'synthetic:PATTERN' (e.g. 'synthetic:oscillating') \
                     or 'replay:PATH'"
                )));
            }
        };
        if matches!(source, MonitorSource::Nvml) && speed != 1.0 {
            return Err(PyValueError::new_err(
                "speed applies to a synthetic or replayed source: live GPUs run at their own speed",
            ));
        }
        Ok(Self {
            source,
            interval,
            speed,
            stop: Arc::new(AtomicBool::new(false)),
            thread: Mutex::new(None),
            result: Mutex::new(None),
            pid: std::process::id(),
        })
    }

    /// Starts sampling on a Rust thread. An error opening the source (no NVIDIA driver, a
    /// bad pattern) is raised by `stop()`.
    fn start(&self) -> PyResult<()> {
        self.check_process()?;
        let mut thread = self
            .thread
            .lock()
            .map_err(|_| PyRuntimeError::new_err("Monitor lock poisoned"))?;
        if thread.is_some() {
            return Err(PyRuntimeError::new_err("the Monitor is already running"));
        }
        self.stop.store(false, Ordering::Relaxed);
        let (source, interval, speed, stop) = (
            self.source.clone(),
            self.interval,
            self.speed,
            Arc::clone(&self.stop),
        );
        *thread = Some(
            std::thread::Builder::new()
                .name("gpufeed-monitor".into())
                .spawn(move || sample_until(&source, interval, speed, &stop))
                .map_err(|e| {
                    PyRuntimeError::new_err(format!("cannot start the sampling thread: {e}"))
                })?,
        );
        Ok(())
    }

    /// Stops sampling, joins the thread (the GIL released meanwhile) and keeps the report.
    /// Warnings of the run become Python warnings.
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        self.check_process()?;
        let handle = self
            .thread
            .lock()
            .map_err(|_| PyRuntimeError::new_err("Monitor lock poisoned"))?
            .take();
        let Some(handle) = handle else {
            return Err(PyRuntimeError::new_err(
                "the Monitor is not running: call start() first",
            ));
        };
        self.stop.store(true, Ordering::Relaxed);
        let outcome = py.detach(move || handle.join()).map_err(|_| {
            PyRuntimeError::new_err("the sampling thread panicked; please report it")
        })?;
        let (report, warnings) = outcome.map_err(|e| source_error(&self.source, &e))?;
        let w = py.import("warnings")?;
        for msg in &warnings {
            w.call_method1("warn", (msg.as_str(),))?;
        }
        *self
            .result
            .lock()
            .map_err(|_| PyRuntimeError::new_err("Monitor lock poisoned"))? =
            Some((report, warnings));
        Ok(())
    }

    /// Whether the sampling thread runs.
    #[getter]
    fn running(&self) -> bool {
        self.thread.lock().is_ok_and(|t| t.is_some())
    }

    /// The document of `gpufeed monitor --format json` for the last run, as a dict: per
    /// GPU the utilisation statistics, idle gaps, period and verdict; the host figures.
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let result = self
            .result
            .lock()
            .map_err(|_| PyRuntimeError::new_err("Monitor lock poisoned"))?;
        match result.as_ref() {
            Some((report, _)) => to_py(py, report),
            None => Err(PyRuntimeError::new_err(
                "no report yet: sample first (`with gpufeed.Monitor() as m: ...`, or start() then stop())",
            )),
        }
    }

    /// The report as `gpufeed monitor` prints it.
    fn text(&self) -> PyResult<String> {
        let result = self
            .result
            .lock()
            .map_err(|_| PyRuntimeError::new_err("Monitor lock poisoned"))?;
        match result.as_ref() {
            Some((report, _)) => {
                let title = match &self.source {
                    MonitorSource::Nvml => "nvml".to_owned(),
                    MonitorSource::Synthetic(p) => format!("synthetic {p}"),
                    MonitorSource::Replay(p) => p.display().to_string(),
                };
                Ok(gpufeed_analysis::monitor::report::render(
                    report, &title, None,
                ))
            }
            None => Err(PyRuntimeError::new_err("no report yet: sample first")),
        }
    }

    fn __enter__(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        slf.get().start()?;
        Ok(slf)
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.stop(py)?;
        Ok(false)
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        // A monitor dropped while sampling: stop its thread (never in a forked child,
        // which does not have it).
        if std::process::id() == self.pid
            && let Ok(mut t) = self.thread.lock()
            && let Some(handle) = t.take()
        {
            self.stop.store(true, Ordering::Relaxed);
            let _ = handle.join();
        }
    }
}
