//! Every doctor check run as `gpufeed doctor` runs them, without printing.
//!
//! The checks live in `gpufeed-doctor` (facts, then pure rules); this module gathers the
//! inputs and the environment, runs them, and adds the runtime check: a short run of the
//! loader on the dataset's precomputed cache, which needs `gpufeed-data`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};

use gpufeed_analysis::config::TrainingConfig;
use gpufeed_analysis::profile;
use gpufeed_config::Config;
use gpufeed_data::cache::{self, Cache, FeatureSettings};
use gpufeed_data::loader::Loader;
use gpufeed_data::settings::cache_root;
use gpufeed_doctor::runtime::{self, LoaderRun, RuntimeFacts};
use gpufeed_doctor::{self as doctor, Check, Inputs, Validation, env, frameworks::Probe};
use gpufeed_findings::Report;
use gpufeed_findings::constants::RUNTIME_BATCHES;

/// What the doctor looks at: the training config, the dataset and the code, each optional.
#[derive(Debug, Clone, Default)]
pub struct DoctorSettings {
    /// The training config (YAML), read once: validated, and its cache folder and loader
    /// settings.
    pub config: Option<DoctorConfig>,
    /// The dataset: its storage measured, and its cache's loader run.
    pub data: Option<PathBuf>,
    /// The training code, linted.
    pub code: Option<PathBuf>,
}

/// The training config as the doctor takes it, read once: its validation (the config
/// check's findings) and, when it loads, its typed values (the cache folder and the loader
/// settings of the runtime check).
#[derive(Debug, Clone)]
pub struct DoctorConfig {
    validation: Validation,
    config: Option<Config>,
}

impl DoctorConfig {
    /// Reads `--config FILE` once.
    ///
    /// # Errors
    /// A file that cannot be read at all (missing, a folder): bad input.
    pub fn read(path: &Path) -> Result<Self> {
        let validation = doctor::read_config(path)?;
        // The text as read, parsed for its values; no second read.
        let config = validation
            .text
            .as_deref()
            .and_then(|text| gpufeed_config::check(text, path).ok())
            .map(|loaded| loaded.config);
        Ok(Self { validation, config })
    }

    /// The config `analyze` read for every stage, validated from its text; `None` without
    /// `--config`.
    #[must_use]
    pub fn of(training: &TrainingConfig) -> Option<Self> {
        let loaded = training.loaded()?;
        let source = &loaded.source;
        Some(Self {
            validation: doctor::validate_config_text(source.text(), source.path()),
            config: Some(loaded.config.clone()),
        })
    }
}

/// Environment variable naming the Python interpreter the frameworks are probed with.
pub const PYTHON_ENV: &str = "GPUFEED_PYTHON";

/// What the doctor found: the report, the checks it skipped (with the reason) and the
/// facts it collected (`analyze` quotes the storage speeds).
#[derive(Debug)]
pub struct DoctorRun {
    /// The findings.
    pub report: Report,
    /// Checks not run, with the reason.
    pub skipped: Vec<(Check, String)>,
    /// What the machine checks collected.
    pub facts: doctor::Facts,
}

/// Runs every check as `gpufeed doctor` does, without printing; `progress` is told which
/// check starts (`storage of ...`, `runtime`).
pub fn doctor_run(settings: &DoctorSettings, progress: &mut dyn FnMut(&str)) -> Result<DoctorRun> {
    // The config's own findings come from `validate` (the config check); here it only
    // gives the cache folder and the loader settings. A config that does not load gives
    // neither: the runtime check, which needs them, is skipped and says why, rather than
    // running on defaults the user did not choose.
    let unloadable = settings.config.as_ref().is_some_and(|c| c.config.is_none());
    let config = settings
        .config
        .as_ref()
        .and_then(|c| c.config.clone())
        .unwrap_or_default();
    let cache_root = settings
        .data
        .as_deref()
        .map(|d| cache_root(None, &config, d))
        .filter(|root| root.is_dir());
    let mut vars = BTreeMap::new();
    for name in env::VARS {
        if let Some(v) = std::env::var_os(name) {
            vars.insert((*name).to_owned(), v.to_string_lossy().into_owned());
        }
    }
    let mut probe = Probe::default();
    if let Some(python) = std::env::var_os(PYTHON_ENV).filter(|p| !p.is_empty()) {
        probe.python = python;
    }
    let inputs = Inputs {
        config: settings.config.as_ref().map(|c| c.validation.clone()),
        data: settings.data.clone(),
        cache: cache_root,
        code: settings.code.clone(),
        env: vars,
        probe,
        ..Inputs::default()
    };
    let mut outcome = doctor::run(&inputs, &mut |check| {
        progress(&describe(check, &inputs));
    })?;
    match &settings.data {
        Some(_) if unloadable => outcome.skipped.push((
            Check::Runtime,
            format!(
                "`{}` does not load (its errors are among the config findings): the loader \
                 run needs its cache and loader settings; fix it, or leave `--config` out for \
                 the defaults",
                settings
                    .config
                    .as_ref()
                    .map_or(Path::new(""), |c| c.validation.path.as_path())
                    .display()
            ),
        )),
        Some(data) => {
            progress("runtime");
            outcome
                .findings
                .extend(runtime::check(&runtime_facts(data, &config)));
        }
        None => outcome.skipped.push((
            Check::Runtime,
            "pass `--data DIR` (with its `gpufeed precompute` cache) for a short loader run"
                .to_owned(),
        )),
    }
    Ok(DoctorRun {
        report: Report::new(outcome.findings),
        skipped: outcome.skipped,
        facts: outcome.facts,
    })
}

/// What a check is about to do, for the progress line on stderr.
fn describe(check: Check, inputs: &Inputs) -> String {
    match check {
        Check::Storage => format!(
            "storage of `{}` (cold reads, at most {} MiB and a few seconds per folder)",
            inputs
                .data
                .as_deref()
                .map_or_else(String::new, |d| d.display().to_string()),
            inputs.budget.bytes / (1024 * 1024)
        ),
        Check::Frameworks => format!(
            "frameworks (TensorFlow, PyTorch, JAX, each in its own `{}`, at most {} s)",
            inputs.probe.python.to_string_lossy(),
            inputs.probe.timeout.as_secs()
        ),
        other => other.title().to_lowercase(),
    }
}

/// The runtime facts of dataset `data`: a short loader run when its cache for the config's
/// feature settings is complete; never a precompute.
fn runtime_facts(data: &Path, config: &Config) -> RuntimeFacts {
    // A bad `data.features` falls back to the mel alone here: `validate` and `precompute`
    // name it; doctor only looks for the cache.
    let key = gpufeed_data::settings::feature_settings(config)
        .unwrap_or_else(|_| FeatureSettings::new(config.data.audio(), config.data.text()))
        .key();
    let dir = cache_root(None, config, data).join(key);
    if !dir.join(cache::MANIFEST).is_file() {
        return RuntimeFacts::NoCache {
            data: data.to_path_buf(),
        };
    }
    match loader_run(&dir, config) {
        Ok(run) => RuntimeFacts::Measured(Box::new(run)),
        Err(e) => RuntimeFacts::Failed {
            cache: dir,
            error: format!("{e:#}"),
        },
    }
}

/// Warm-up, then [`RUNTIME_BATCHES`] batches timed as the consumer waits for each.
fn loader_run(dir: &Path, config: &Config) -> Result<LoaderRun> {
    let cache = Arc::new(Cache::open(dir)?);
    let items = cache.len();
    let lc = profile::loader_config(config, None, None)?;
    let loader = Loader::new(cache, lc.clone())?;
    let warmup = profile::warmup_batches(&lc);
    let run = profile::measure(&loader, warmup, RUNTIME_BATCHES as usize, Duration::ZERO)?;
    // Judged as `profile data` judges a run with no consumer: the workers' time per batch,
    // of whole batches (an epoch's short last batch is no cycle).
    let judged = profile::judged_of(Duration::ZERO);
    let (work, partial) = gpufeed_stats::analyze_batches(profile::series(judged, &run), &run.items)
        .context("no batch was timed")?;
    let (samples, elapsed) = (run.samples, run.elapsed_s);
    Ok(LoaderRun {
        cache: PathBuf::from(dir),
        items,
        batch_size: lc.batch_size,
        workers: lc.workers,
        warmup,
        work,
        mean_wait_ms: gpufeed_stats::summary::mean(&run.waits_ms),
        partial,
        samples,
        samples_per_s: samples as f64 / elapsed.max(f64::MIN_POSITIVE),
    })
}
