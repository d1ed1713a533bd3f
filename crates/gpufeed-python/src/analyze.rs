//! `gpufeed.analyze(...)`: every stage of `gpufeed analyze` run in this process by
//! `gpufeed-app`, the GIL released for the whole run; returns the report's document (what
//! `report.json` holds) and writes the three files into `out`, as the CLI does.

use std::path::PathBuf;
use std::time::Duration;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use gpufeed_analysis::{Quiet, Ui};
use gpufeed_app::analyze::{AnalyzeSettings, analyze, document};
use gpufeed_app::{Silent, Stages};
use gpufeed_data::precompute::Progress;

use crate::errors;
use crate::features::to_py;

/// The stages' outcomes as lines on stderr (`analyze: doctor: ok in 3.1 s (...)`), and the
/// config's warnings, as the CLI writes them when stderr is not a terminal.
struct Lines;

impl Stages for Lines {
    fn begin(&self, _: u64) {}
    fn detail(&self, _: &str) {}
    #[allow(clippy::print_stderr)] // Python's `gpufeed.analyze(progress=True)` asks for these.
    fn line(&self, text: &str) {
        eprintln!("analyze: {text}");
    }
    fn advance(&self) {}
    fn aside(&self, f: &mut dyn FnMut()) {
        f();
    }
    fn ui(&self) -> Box<dyn Ui + '_> {
        Box::new(Warnings)
    }
    fn finish(&self) {}
}

/// A stage's [`Ui`] under [`Lines`]: warnings on stderr, no bars.
struct Warnings;

impl Progress for Warnings {
    fn start(&self, total: u64, done: u64) {
        Quiet.start(total, done);
    }
    fn advance(&self, n: u64) {
        Quiet.advance(n);
    }
    fn finish(&self) {
        Quiet.finish();
    }
}

impl Ui for Warnings {
    fn note(&self, _: &str) {}
    #[allow(clippy::print_stderr)] // As the CLI says them: a config key ignored, a value clamped.
    fn warn(&self, msg: &str) {
        eprintln!("warning: {msg}");
    }
}

/// Runs `gpufeed analyze` with these settings; returns the report's document.
#[pyfunction]
#[pyo3(signature = (out, *, data=None, config=None, code=None, trace=None, attach=None, attach_duration=10.0, quick=false, demo=false, progress=true))]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments, one per CLI option.
fn analyze_run(
    py: Python<'_>,
    out: PathBuf,
    data: Option<PathBuf>,
    config: Option<PathBuf>,
    code: Option<PathBuf>,
    trace: Option<PathBuf>,
    attach: Option<u32>,
    attach_duration: f64,
    quick: bool,
    demo: bool,
    progress: bool,
) -> PyResult<Bound<'_, PyAny>> {
    if !(attach_duration.is_finite() && attach_duration > 0.0) {
        return Err(PyValueError::new_err(format!(
            "attach_duration={attach_duration}: give the seconds to sample, above 0"
        )));
    }
    let settings = AnalyzeSettings {
        data,
        config,
        code,
        trace,
        attach,
        attach_duration: Duration::from_secs_f64(attach_duration),
        quick,
        demo,
        out,
    };
    let doc = py
        .detach(|| {
            let stages: &dyn Stages = if progress { &Lines } else { &Silent };
            analyze(&settings, stages).and_then(|report| document(&report))
        })
        .map_err(|e| match e.downcast_ref::<gpufeed_config::ConfigError>() {
            // A config that does not load: `ConfigError`, as `Loader(config=...)` raises.
            Some(c) => errors::config(c.to_string()),
            None => errors::any(&e),
        })?;
    to_py(py, &doc)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(analyze_run, m)?)?;
    Ok(())
}
