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
//! | Host | [`host::HostFacts`] | `/proc/meminfo`, `/proc/loadavg`, `/sys/devices/system/cpu/cpu*/cpufreq`; `/proc/stat` and `/proc/self/stat` at the start and the end of the run ([`host::others_use`]) |
//! | Storage | [`storage::StorageFacts`] | `stat`, `/sys/dev/block`, `/proc/self/mountinfo`, timed reads with the page cache bypassed |
//! | Frameworks | [`frameworks::FrameworkFacts`] | TensorFlow, PyTorch and JAX, each probed in its own `python3` with a timeout |
//! | Environment | [`env::EnvFacts`] | the environment variables, as a map (tests never touch the process's) |
//! | Runtime | [`runtime::RuntimeFacts`] | a short run of gpufeed's loader on the precomputed cache (the binary runs it) |
//!
//! Config and code findings come from [`gpufeed_validate`] and [`gpufeed_lint`] unchanged.
//!
//! ```
//! use gpufeed_doctor::{Check, Facts, check, gpu::GpuFacts};
//!
//! let facts = Facts {
//!     gpu: GpuFacts::NoDriver { reason: "`libnvidia-ml.so.1` could not be loaded".into() },
//!     ..Facts::default()
//! };
//! let findings = check(&facts);
//! assert_eq!(findings[0].id, "gpu-no-driver");
//! assert_eq!(Check::of(findings[0].id), Some(Check::Gpu));
//! ```
//!
//! # `doctor`: the machine, the data and the environment
//!
//! Each check collects facts, then pure rules judge them (see [`doctor`]). Every check
//! reports what it read as an info finding (`gpu-inventory`, `host-summary`,
//! `storage-summary`, `framework-found`, `runtime-loader-stable`), so the report shows what
//! was measured even when nothing is wrong. Thresholds are in `gpufeed_stats::thresholds`
//! (`POWER_LIMIT_LOW_RATIO`, `OTHERS_CPU_SHARE_HIGH`, `SWAP_IN_USE_MIB`, `SEQ_READ_SLOW_MB_S`,
//! `RANDOM_READ_IOPS_LOW`, `MANY_FILES`, `SMALL_FILE_MEAN_KIB`, `TENSOR_CORE_MIN_CC`); the
//! measuring budgets (bytes and seconds read, probe timeout) in [`constants::TABLE`].
//!
//! | id | severity | fires when | fix |
//! |---|---|---|---|
//! | `gpu-no-driver` | info | NVML cannot be loaded (no NVIDIA driver) | install the driver, or nothing on a machine without NVIDIA GPUs |
//! | `gpu-not-found` | info | the driver lists no GPU | `nvidia-smi`, `dmesg`; `--gpus all` in a container |
//! | `gpu-nvml-error` | warning | NVML fails after loading | `nvidia-smi`; reboot after a driver upgrade |
//! | `gpu-inventory` | info | always, per GPU: model, memory, driver, CUDA, PCIe, persistence, power, clocks, throttle, ECC, MIG, processes | - |
//! | `gpu-pcie-degraded` | warning | fewer PCIe lanes than the maximum, or (not idle) an older generation | a x16 slot wired to the CPU; BIOS settings |
//! | `gpu-unreachable` | error | NVML lists a GPU but cannot open it (`GPU is lost`) | `dmesg` for Xid; `nvidia-smi -r`; reboot |
//! | `gpu-persistence-off` | info | persistence mode off | `nvidia-smi -pm 1` |
//! | `gpu-power-limit-low` | warning | power limit below `POWER_LIMIT_LOW_RATIO` of the default | `nvidia-smi -pl DEFAULT` |
//! | `gpu-throttled` | warning | an active throttle reason other than `gpu_idle` | as the reason says |
//! | `gpu-ecc-errors` | error | uncorrected (volatile) ECC errors | reset or replace the GPU |
//! | `gpu-mig-enabled` | warning | MIG mode on | `nvidia-smi -mig 0`, or size for the instance |
//! | `gpu-memory-held` | warning | another process has a compute context holding memory | stop it, or another GPU |
//! | `host-summary` | info | always: cores, RAM, swap, governor, load, data and cache sizes | - |
//! | `host-ram-below-data` | warning | what an epoch reads (the cache, else the data) exceeds `MemAvailable` | a smaller cache, more RAM, faster storage |
//! | `host-swap-in-use` | warning | swap in use above `SWAP_IN_USE_MIB` | use less memory |
//! | `host-cpu-powersave` | warning | governor `powersave` (or, with intel_pstate/amd-pstate-epp, energy preference `power`) | `cpupower frequency-set -g performance` |
//! | `host-load-high` | warning | other processes (and steal) took at least `OTHERS_CPU_SHARE_HIGH` of the host's CPU time while doctor ran (at least `HOST_WINDOW_MIN_MS`), never the load average alone | find them; stop the training before running doctor |
//! | `storage-summary` | info | always, per folder: files, mount, device, sequential MB/s, random 4 KiB reads/s, bypass method | - |
//! | `storage-rotational` | warning | `queue/rotational` is 1, unless measured random reads reach `RANDOM_READ_IOPS_LOW` (virtual disks are often marked rotational) | an SSD |
//! | `storage-network-fs` | warning | nfs, cifs/smb, 9p, ceph, lustre, virtiofs, `fuse.*`, ... | copy to a local disk |
//! | `storage-slow-sequential` | warning | cold sequential reads below `SEQ_READ_SLOW_MB_S` (at least 16 MiB read) | a local SSD; precompute |
//! | `storage-slow-random` | warning | cold random 4 KiB reads below `RANDOM_READ_IOPS_LOW` per second (at least 32 reads) | an SSD; precompute |
//! | `storage-not-measured` | info | neither `O_DIRECT` nor `posix_fadvise` works, or no file to read | `fio --direct=1` |
//! | `storage-many-small-files` | warning | at least `MANY_FILES` files, mean below `SMALL_FILE_MEAN_KIB`, no cache beside | `gpufeed precompute` |
//! | `framework-python-missing` | info | `python3` (or `GPUFEED_PYTHON`) cannot be started | activate the environment |
//! | `framework-not-installed` | info | `find_spec` finds no `tensorflow` / `torch` / `jax` | - |
//! | `framework-found` | info | a probe answered: version, GPUs, CUDA/cuDNN, XLA, mixed precision | - |
//! | `framework-probe-hang` | warning | a probe does not answer within `PROBE_TIMEOUT_S` (killed) | `python3 -X importtime -c 'import X'` |
//! | `framework-probe-failed` | warning | a probe's import fails, or its half-precision product on the GPU fails | run the import |
//! | `framework-no-gpu` | warning | a framework sees no GPU while NVML lists one | the CUDA build of the framework |
//! | `framework-xla-broken` | warning | a one-line XLA function fails to compile and run (TensorFlow, JAX) | the CUDA toolkit's `ptxas` |
//! | `framework-no-tensor-cores` | info | a GPU below compute capability `TENSOR_CORE_MIN_CC` | - |
//! | `env-cuda-visible-devices-empty` | error | `CUDA_VISIBLE_DEVICES` empty, or its first entry names no GPU (with GPUs present) | unset it |
//! | `env-cuda-visible-devices-invalid` | error | a later entry names no GPU (CUDA hides it and the rest) | list GPUs that exist |
//! | `env-tf-allow-growth-invalid` | warning | `TF_FORCE_GPU_ALLOW_GROWTH` neither `true` nor `false` | `true` |
//! | `env-tf-allow-growth-off` | info | TensorFlow installed, allow-growth unset or `false` | `true` when the GPU is shared |
//! | `env-tf-gpu-thread-mode` | info | TensorFlow installed, `TF_GPU_THREAD_MODE` not `gpu_private` | `gpu_private` |
//! | `env-pytorch-alloc-conf-invalid` | warning | a `PYTORCH_CUDA_ALLOC_CONF` entry that is not `known_key:value` | `expandable_segments:True` |
//! | `env-pytorch-expandable-segments` | info | PyTorch installed, `PYTORCH_CUDA_ALLOC_CONF` unset | `expandable_segments:True` |
//! | `env-omp-invalid` | warning | `OMP_NUM_THREADS` not a positive integer | a positive integer |
//! | `env-omp-oversubscribed` | warning | `OMP_NUM_THREADS` × the config's `num_workers` above the cores | cores / workers |
//! | `runtime-no-cache` | info | `--data` has no complete precomputed cache | `gpufeed precompute --data DIR`, then doctor again |
//! | `runtime-loader-stable` | info | the short loader run is `stable` | - |
//! | `runtime-loader-oscillating` | warning | a worker's time per batch is `oscillating` (a cycle) | `gpufeed profile data --benchmark` |
//! | `runtime-loader-unstable` | info | a worker's time per batch is `unstable` (no cycle) | `gpufeed profile data --consumer-ms STEP` |
//! | `runtime-failed` | warning | the loader fails on the cache | `gpufeed precompute` rebuilds it |
//!
//! `doctor --config FILE` adds every `validate` finding and `--code DIR` every `lint`
//! finding; `cores vs num_workers` is `validate`'s `num-workers-above-cores`.

pub mod env;
pub mod frameworks;
pub mod gpu;
pub mod host;
pub mod runtime;
pub mod storage;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use gpufeed_findings::Check;
use gpufeed_findings::finding::{Finding, Severity};
use gpufeed_findings::rules::rule_info;
use gpufeed_lint::{self as lint, LintError};
pub use gpufeed_validate::Validation;
use gpufeed_validate::{self as validate, ValidateError};

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
    /// `--config FILE`, read and validated once by the caller ([`read_config`], or
    /// [`validate_config_text`] over text it already read): the doctor never reads it again.
    pub config: Option<Validation>,
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

/// How the doctor validates a config: against this machine's cores, as the training
/// machine's.
fn validation_context() -> validate::Context {
    let cores = std::thread::available_parallelism().ok().map(usize::from);
    validate::Context::new(cores, validate::CoresOf::TrainingMachine)
}

/// Reads and validates `--config FILE`, once, for [`Inputs::config`].
///
/// # Errors
/// [`DoctorError::Config`] when the file cannot be read at all (a missing file, a folder):
/// bad input, said before any slow check.
pub fn read_config(path: &Path) -> Result<Validation, DoctorError> {
    Ok(validate::validate_file(path, &validation_context())?)
}

/// Validates config text a caller already read (`analyze` reads `--config` once for every
/// stage), for [`Inputs::config`]; `path` names the file in the findings.
#[must_use]
pub fn validate_config_text(text: &str, path: &Path) -> Validation {
    validate::validate_text(text, path, &validation_context())
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
/// A `--data` or `--code` path that cannot be read ([`DoctorError`]); the config was read
/// by the caller ([`read_config`]).
pub fn run(inputs: &Inputs, progress: &mut dyn FnMut(Check)) -> Result<Outcome, DoctorError> {
    check_inputs(inputs)?;
    // What other processes use is measured over this run, from here to the end.
    let origin = std::time::Instant::now();
    let window = host::CpuSample::read(&inputs.roots, origin);
    let cores = std::thread::available_parallelism().ok().map(usize::from);
    // The config's text as the caller read it: parsed here, never read again.
    let num_workers = inputs
        .config
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
    facts.host.others = host::close_window(window.as_ref(), &inputs.roots, origin);

    let mut findings = check(&facts);
    match &inputs.config {
        Some(v) => {
            progress(Check::Config);
            findings.extend(v.findings.iter().cloned());
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
    use gpufeed_findings::rules::RULES;

    /// The crate docs are the reference of its rules: every one registered for it is there.
    #[test]
    fn crate_docs_list_every_rule_of_doctor() {
        use gpufeed_findings::{Origin, rules::missing_from_docs};
        let missing = missing_from_docs(include_str!("lib.rs"), |o| matches!(o, Origin::Doctor(_)));
        assert_eq!(missing, Some(Vec::new()), "lib.rs docs miss these rules");
    }

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
