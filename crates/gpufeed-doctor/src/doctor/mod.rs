//! `gpufeed doctor`: the machine, the data and the environment a training runs on, checked
//! the way the training would meet them, as one findings report.
//!
//! Each check first collects *facts* (a plain struct: what NVML, `/proc`, `/sys`, the disk
//! or a framework's own process said) and then runs pure rule functions over them, so every
//! rule is tested on made-up facts, with a case that fires and one that does not:
//!
//! | check | facts | collected from |
//! |---|---|---|
//! | GPU | [`gpu::GpuFacts`] | NVML (`gpufeed_telemetry::nvml::gpu_inventory`) |
//! | Host | [`host::HostFacts`] | `/proc/meminfo`, `/proc/loadavg`, `/sys/devices/system/cpu/cpu*/cpufreq` |
//! | Storage | [`storage::StorageFacts`] | `stat`, `/sys/dev/block`, `/proc/self/mountinfo`, timed reads with the page cache bypassed |
//! | Frameworks | [`frameworks::FrameworkFacts`] | TensorFlow, PyTorch and JAX, each probed in its own `python3` with a timeout |
//! | Environment | [`env::EnvFacts`] | the environment variables, as a map (tests never touch the process's) |
//! | Runtime | [`runtime::RuntimeFacts`] | a short run of gpufeed's loader on the precomputed cache (the binary runs it) |
//!
//! Config and code findings come from [`crate::validate`] and [`crate::lint`] unchanged.
//!
//! ```
//! use gpufeed_doctor::doctor::{self, Check, Facts, gpu::GpuFacts};
//!
//! let facts = Facts {
//!     gpu: GpuFacts::NoDriver { reason: "`libnvidia-ml.so.1` could not be loaded".into() },
//!     ..Facts::default()
//! };
//! let findings = doctor::check(&facts);
//! assert_eq!(findings[0].id, "gpu-no-driver");
//! assert_eq!(Check::of(findings[0].id), Some(Check::Gpu));
//! ```

pub mod env;
pub mod frameworks;
pub mod gpu;
pub mod host;
pub mod runtime;
pub mod storage;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use crate::finding::{Finding, Severity};
use crate::lint::{self, LintError};
use crate::rules::{Origin, rule_info};
use crate::validate::{self, ValidateError};

/// The checks of `doctor`, in the order the text report lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Check {
    /// The GPUs, through NVML.
    Gpu,
    /// CPU, memory, swap, load.
    Host,
    /// The data and cache folders' storage.
    Storage,
    /// TensorFlow, PyTorch and JAX.
    Frameworks,
    /// Environment variables.
    Environment,
    /// The training config (`validate`).
    Config,
    /// The training code (`lint`).
    Code,
    /// A short loader run.
    Runtime,
}

impl Check {
    /// Every check, in report order.
    pub const ALL: [Self; 8] = [
        Self::Gpu,
        Self::Host,
        Self::Storage,
        Self::Frameworks,
        Self::Environment,
        Self::Config,
        Self::Code,
        Self::Runtime,
    ];

    /// The heading of its section.
    #[must_use]
    pub fn title(self) -> &'static str {
        match self {
            Self::Gpu => "GPU",
            Self::Host => "Host",
            Self::Storage => "Storage",
            Self::Frameworks => "Frameworks",
            Self::Environment => "Environment",
            Self::Config => "Config",
            Self::Code => "Code",
            Self::Runtime => "Runtime",
        }
    }

    /// The check a rule id belongs to (through the rule registry); `None` for an unknown id.
    #[must_use]
    pub fn of(id: &str) -> Option<Self> {
        Some(match rule_info(id)?.origin {
            Origin::Config | Origin::Validate => Self::Config,
            Origin::Lint => Self::Code,
            Origin::Doctor(check) => check,
        })
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.title())
    }
}

/// Everything the machine checks collected: the input of [`check`].
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// The GPUs.
    pub gpu: gpu::GpuFacts,
    /// The host.
    pub host: host::HostFacts,
    /// The data folder, then the cache folder beside it (when `--data` was given).
    pub storage: Vec<storage::StorageFacts>,
    /// The frameworks.
    pub frameworks: frameworks::FrameworkFacts,
    /// The environment.
    pub env: env::EnvFacts,
}

/// The rules of the machine checks (GPU, host, storage, frameworks, environment) over the
/// facts. Pure: the same facts give the same findings.
#[must_use]
pub fn check(facts: &Facts) -> Vec<Finding> {
    let mut out = gpu::check(&facts.gpu);
    out.extend(host::check(&facts.host));
    for s in &facts.storage {
        out.extend(storage::check(s));
    }
    out.extend(frameworks::check(
        &facts.frameworks,
        facts.gpu.gpu_count().filter(|&n| n > 0),
    ));
    out.extend(env::check(&facts.env));
    out
}

/// What `doctor` is asked to look at.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// `--config FILE`.
    pub config: Option<PathBuf>,
    /// `--data DIR`.
    pub data: Option<PathBuf>,
    /// The cache root beside the data, when one exists (`gpufeed precompute`'s output).
    pub cache: Option<PathBuf>,
    /// `--code DIR`.
    pub code: Option<PathBuf>,
    /// The environment variables (all of them, or only [`env::VARS`]).
    pub env: BTreeMap<String, String>,
    /// How frameworks are probed.
    pub probe: frameworks::Probe,
    /// How much the storage check reads.
    pub budget: storage::Budget,
    /// Where `/proc` and `/sys` are.
    pub roots: host::Roots,
}

/// A path given to `doctor` that cannot be used: bad input (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum DoctorError {
    /// `--data` is missing or not readable.
    #[error("`--data {}`: {reason}", path.display())]
    Data {
        /// The path as given.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// `--config` cannot be read.
    #[error(transparent)]
    Config(#[from] ValidateError),
    /// `--code` does not exist.
    #[error(transparent)]
    Code(#[from] LintError),
}

/// The outcome of [`run`].
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// What the checks collected.
    pub facts: Facts,
    /// Every finding of the machine checks, the config and the code.
    pub findings: Vec<Finding>,
    /// The checks not run, with the reason (for the text report).
    pub skipped: Vec<(Check, String)>,
}

/// Checks that the paths given exist, before any slow work: a bad path is exit code 2.
///
/// # Errors
/// [`DoctorError::Data`] for a `--data` that does not exist, [`DoctorError::Code`] for a
/// `--code` that does not exist.
pub fn check_inputs(inputs: &Inputs) -> Result<(), DoctorError> {
    if let Some(data) = &inputs.data {
        std::fs::metadata(data).map_err(|e| DoctorError::Data {
            path: data.clone(),
            reason: match e.kind() {
                std::io::ErrorKind::NotFound => "no such file or folder".to_owned(),
                _ => e.to_string(),
            },
        })?;
    }
    if let Some(code) = &inputs.code {
        std::fs::metadata(code).map_err(|e| LintError::NotFound {
            path: code.clone(),
            reason: e.to_string(),
        })?;
    }
    Ok(())
}

/// Runs every check but the runtime one (the binary owns the loader): GPU, host, storage,
/// frameworks, environment, then the config and the code when given. `progress` is told
/// which check starts, for a line on stderr.
///
/// # Errors
/// A `--data`, `--config` or `--code` path that cannot be read ([`DoctorError`]).
pub fn run(inputs: &Inputs, progress: &mut dyn FnMut(Check)) -> Result<Outcome, DoctorError> {
    check_inputs(inputs)?;
    // Read the config first: a file that cannot be read is bad input, before any slow check.
    let cores = std::thread::available_parallelism().ok().map(usize::from);
    let validation = match &inputs.config {
        Some(path) => Some(validate::validate_file(
            path,
            &validate::Context::new(cores, validate::CoresOf::TrainingMachine),
        )?),
        None => None,
    };
    let num_workers = validation
        .as_ref()
        .and_then(|v| v.text.as_deref().map(|t| (t, &v.path)))
        .and_then(|(text, path)| gpufeed_config::check(text, path).ok())
        .map(|loaded| loaded.config.data.effective_num_workers());
    let mut facts = Facts::default();
    let mut skipped = Vec::new();

    progress(Check::Host);
    facts.host = host::HostFacts::collect(&inputs.roots, cores);
    facts.host.num_workers = num_workers;
    progress(Check::Gpu);
    facts.gpu = gpu::GpuFacts::collect();
    match &inputs.data {
        Some(data) => {
            progress(Check::Storage);
            let dir = if data.is_dir() {
                data.clone()
            } else {
                // A manifest file: its folder (`.` for a bare file name).
                data.parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .map_or_else(|| PathBuf::from("."), PathBuf::from)
            };
            let cache = inputs.cache.as_deref();
            let mut d = storage::StorageFacts::collect(
                storage::Role::Data,
                &dir,
                cache,
                &inputs.budget,
                &inputs.roots,
            );
            d.cache_beside = cache.is_some();
            facts.host.data_bytes = Some(d.files.bytes);
            facts.storage.push(d);
            if let Some(cache) = cache {
                let c = storage::StorageFacts::collect(
                    storage::Role::Cache,
                    cache,
                    None,
                    &inputs.budget,
                    &inputs.roots,
                );
                facts.host.cache_bytes = Some(c.files.bytes);
                facts.storage.push(c);
            }
        }
        None => skipped.push((
            Check::Storage,
            "pass `--data DIR` to measure the dataset's storage".to_owned(),
        )),
    }
    progress(Check::Frameworks);
    facts.frameworks = inputs.probe.run_all();
    progress(Check::Environment);
    facts.env = env::EnvFacts::new(&inputs.env, &facts.gpu, &facts.frameworks);
    facts.env.cores = cores;
    facts.env.num_workers = num_workers;

    let mut findings = check(&facts);
    match validation {
        Some(v) => {
            progress(Check::Config);
            findings.extend(v.findings);
        }
        None => skipped.push((
            Check::Config,
            "pass `--config FILE` to validate the training config".to_owned(),
        )),
    }
    match &inputs.code {
        Some(code) => {
            progress(Check::Code);
            findings.extend(lint::lint_paths(std::slice::from_ref(code))?.findings);
        }
        None => skipped.push((
            Check::Code,
            "pass `--code DIR` to lint the training code".to_owned(),
        )),
    }
    Ok(Outcome {
        facts,
        findings,
        skipped,
    })
}

/// A finding of a registered rule whose message is `message` alone: for the summaries
/// (`gpu-inventory`, `host-summary`, ...), where the rule's "why" would read oddly.
pub(crate) fn fact(id: &'static str, message: impl Into<String>) -> Finding {
    let info = rule_info(id);
    debug_assert!(info.is_some(), "unregistered rule `{id}`");
    Finding::new(id, info.map_or(Severity::Info, |r| r.severity), message)
}

pub(crate) use gpufeed_stats::fmt::bytes as human_bytes;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::RULES;

    #[test]
    fn every_doctor_rule_has_a_check_and_checks_cover_every_rule() {
        for r in RULES {
            assert!(Check::of(r.id).is_some(), "{}", r.id);
        }
        assert_eq!(Check::of("gpu-prefetch-off"), Some(Check::Config));
        assert_eq!(Check::of("sleep-in-loop"), Some(Check::Code));
        assert_eq!(Check::of("storage-rotational"), Some(Check::Storage));
        assert_eq!(Check::of("no-such-rule"), None);
    }

    #[test]
    fn missing_data_is_bad_input_before_any_check() {
        let inputs = Inputs {
            data: Some(PathBuf::from("/no/such/gpufeed/data")),
            ..Inputs::default()
        };
        let mut started = Vec::new();
        let e = run(&inputs, &mut |c| started.push(c)).err();
        assert!(
            e.as_ref().is_some_and(
                |e| e.to_string() == "`--data /no/such/gpufeed/data`: no such file or folder"
            ),
            "{e:?}"
        );
        assert!(started.is_empty());
    }
}
