//! `gpufeed analyze` end to end: every stage in turn, one report.
//!
//! The stages, in order, each timed and recorded as ok, failed (with its error) or skipped
//! (with the reason); a stage that fails never stops the ones after it:
//!
//! gpufeed's demo (the generated dataset and the `tiny` model's step) runs when no input of
//! the user's is given, or with `--demo`: given a log, a trace, a config, code, a dataset or
//! a job of their own, the user came for a verdict on their run, and a demo model trained
//! on the CPU for minutes would only cost time and compete with it.
//!
//! 1. **demo data**: with the demo and without `--data`, the demo dataset ([`DEMO_CLIPS`]
//!    generated clips) in the user cache folder, `$XDG_CACHE_HOME/gpufeed/demo-112-0` (else
//!    `~/.cache/gpufeed/...`, else the temporary folder), generated once and reused: a user
//!    cache folder rather than beside `--out`, so that a report folder stays a report and
//!    every project on the machine shares one demo. Its `metadata.csv` is written last,
//!    atomically, so a killed generation is redone, never half-used.
//! 2. **precompute**: the feature cache of the dataset (`gpufeed precompute`), built when
//!    missing or stale. It runs before the doctor so that the doctor measures the cache's
//!    storage too and its runtime check runs on the cache, instead of advising the
//!    precompute that the next stage does anyway.
//! 3. **doctor**: GPU, host, storage, frameworks, environment, config (`--config`) and code
//!    (`--code`), as `gpufeed doctor`.
//! 4. **profile data**: the loader as the config sets it ([`BATCHES`] batches), and the
//!    benchmark grid unless `--quick`.
//! 5. **profile step**: with the demo, the `tiny` model for [`STEPS`] steps on the best
//!    device this build can use (`cuda:0` with the `cuda` feature and a GPU, else the CPU, in
//!    batches of [`DEMO_CPU_BATCH`]). When `--trace` is
//!    a step recording of the user's own loop (the Python `StepTimer`'s `timer.save`), that
//!    recording is the step evidence instead ([`gpufeed_analysis::phase_steps`]), and the demo model
//!    does not run: its verdict, on another model and loop, would only compete with the
//!    user's own. So is a PyTorch or TensorFlow profiler trace (a `.json` / `.json.gz` file,
//!    TensorFlow's `*.xplane.pb`, or a folder of per-rank traces, as `gpufeed trace` detects it,
//!    [`gpufeed_analysis::profiler`]): analysed by gpufeed-kineto, its document is the report's
//!    `profiler`, its causes the user's run's.
//! 6. **telemetry**: `--trace FILE` (a utilisation log) analysed as `gpufeed trace FILE`;
//!    else, with an NVIDIA driver and the step on the GPU, the GPUs sampled every
//!    [`TELEMETRY_INTERVAL_S`] s while the step profile runs; else skipped with the reason
//!    (with a step recording or a profiler trace as `--trace`: no utilisation log was
//!    given; a profiler trace has the GPU's busy and idle time from its own kernels).
//!
//! The report (`gpufeed-report`) ranks the causes of starvation from all of them, and three
//! files are written to `--out`: each rendered in full first, written to a temporary file in
//! the same folder and renamed over the old one, so a failure never leaves a half-written
//! file.
//!
//! Sizes: on the 2-core development VM without a GPU, `analyze` with no arguments took 98
//! to 107 s in release, nearly all of it in the step profile (the budget is 3
//! minutes); `--quick` 56 s.
//!
//! Exit codes (docs/contract.md): 0 done; 1 the doctor found something at error severity
//! or a stage failed (the report is written all the same); 2 bad usage (a path that does not
//! exist) or a report that cannot be written.

use std::io::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, anyhow, bail};

use gpufeed_doctor::storage::Role;
use gpufeed_report::model::{
    DoctorSection, Finding, Inputs, Severity, Stage, StepPhases, StorageSpeed, Telemetry, Util,
};
use gpufeed_report::render::{Html, Json, Markdown, Renderer};
use gpufeed_report::{Collected, Report, UtilSamples};
use gpufeed_telemetry::nvml::NvmlSource;
use gpufeed_telemetry::sampler::Sampler;
use gpufeed_telemetry::source::{RealClock, Source as _};
use gpufeed_telemetry::trace::{Trace, TraceKind, UtilTrace, read_trace};

use gpufeed_analysis::config::TrainingConfig;
use gpufeed_analysis::detect::{TraceSource, detect};
use gpufeed_analysis::monitor::{self, Collecting, MonitorSource};
use gpufeed_analysis::phase_steps::{self, PhaseSteps};
use gpufeed_analysis::profile::{self, DataSettings, StepSettings};
use gpufeed_analysis::{profiler, trace};

use crate::Stages;
use crate::doctor::{self, DoctorSettings};

/// Clips of the demo dataset: about 14 minutes of audio, a few seconds to generate and
/// precompute on two cores. Two whole batches of the default `batch_size` (56): an epoch
/// that ended with a short batch would make the demo's own batch times alternate.
pub const DEMO_CLIPS: usize = 112;
/// Seed of the demo dataset.
pub const DEMO_SEED: u64 = 0;
/// Batches `profile data` times (after its warm-up).
pub const BATCHES: usize = 200;
/// With `--quick`.
pub const QUICK_BATCHES: usize = 60;
/// Steps `profile step` times. The `tiny` model at the default batch of 56 takes about
/// 2-3 s a step on the 2-core development VM (CPU), and the profiler adds at least 5 pairs
/// of steps for its overhead figure: 16 timed + 2 warm-up + 10 is about a minute there.
pub const STEPS: usize = 16;
/// Warm-up steps.
pub const WARMUP: usize = 2;
/// With `--quick`.
pub const QUICK_STEPS: usize = 6;
/// With `--quick`.
pub const QUICK_WARMUP: usize = 1;
/// Sampling interval of live telemetry, s (as `gpufeed monitor`).
pub const TELEMETRY_INTERVAL_S: f64 = 0.1;
/// The model `profile step` trains.
const MODEL: &str = "tiny";

/// The report's files.
const SUMMARY: &str = "summary.md";
const JSON: &str = "report.json";
const HTML: &str = "report.html";

/// What `analyze` runs on: the user's inputs, each optional, and where the report goes.
#[derive(Debug, Clone)]
pub struct AnalyzeSettings {
    /// The dataset (`--data`); without it, the demo's when the demo runs.
    pub data: Option<PathBuf>,
    /// The training config, YAML (`--config`): read once for every stage.
    pub config: Option<PathBuf>,
    /// The training code to lint (`--code`).
    pub code: Option<PathBuf>,
    /// A GPU utilisation log, a step recording of the user's own loop or a profiler trace
    /// (`--trace`).
    pub trace: Option<PathBuf>,
    /// A running training job to sample first (`--attach PID`).
    pub attach: Option<u32>,
    /// How long to sample it.
    pub attach_duration: Duration,
    /// Fewer steps and batches, and no benchmark grid (`--quick`).
    pub quick: bool,
    /// Run gpufeed's demo even with inputs of the user's own (`--demo`).
    pub demo: bool,
    /// The report folder: `summary.md`, `report.json`, `report.html`.
    pub out: PathBuf,
}

impl AnalyzeSettings {
    /// No input of the user's (the demo runs), the report into `out`, as the CLI's defaults.
    #[must_use]
    pub fn new(out: impl Into<PathBuf>) -> Self {
        Self {
            data: None,
            config: None,
            code: None,
            trace: None,
            attach: None,
            attach_duration: Duration::from_secs(10),
            quick: false,
            demo: false,
            out: out.into(),
        }
    }
}

/// Runs every stage, ranks the causes and writes the three files into `settings.out`;
/// returns the report (its exit code: [`Report::exit_code`]). An error is bad usage (a path
/// that does not exist, a config that does not load) or a report that cannot be written;
/// a stage that fails is recorded in the report, never an error.
pub fn analyze(settings: &AnalyzeSettings, stages: &dyn Stages) -> Result<Report> {
    let args = settings;
    check_usage(args)?;
    // The config read once for every stage: a bad one is one error, its warnings said once.
    let (training, warnings) = TrainingConfig::read(args.config.as_deref())?;
    {
        let ui = stages.ui();
        for w in &warnings {
            ui.warn(w);
        }
    }
    // The report folder first: a folder that cannot be made is exit code 2 before minutes
    // of work, not after.
    fs_err::create_dir_all(&args.out)
        .with_context(|| format!("cannot create the report folder `{}`", args.out.display()))?;

    let gpu = if args.trace.is_some() {
        None
    } else {
        Some(NvmlSource::open().map(|s| s.gpus().len()))
    };
    // `--trace` with the user's own steps, or a profiler trace of the user's run: they are
    // the step evidence.
    let source = args.trace.as_deref().map(|p| detect(p, None)).transpose()?;
    let own_steps = args
        .trace
        .as_deref()
        .filter(|_| source.as_ref().is_some_and(TraceSource::is_step_recording));
    let profiler_trace = args
        .trace
        .as_deref()
        .filter(|_| matches!(source, Some(TraceSource::Profiler { .. })));
    let on_gpu = cfg!(feature = "cuda") && matches!(gpu, Some(Ok(n)) if n > 0);
    let demo = runs_demo(args);
    let device = match (own_steps.or(profiler_trace), on_gpu) {
        (Some(_), _) => "",
        _ if !demo => "",
        (None, true) => "cuda:0",
        (None, false) => "cpu",
    };
    let mut c = Collected::new(
        env!("CARGO_PKG_VERSION"),
        Inputs {
            data: args.data.as_ref().map(|d| d.display().to_string()),
            demo: args.data.is_none() && demo,
            config: args.config.as_ref().map(|p| p.display().to_string()),
            code: args.code.as_ref().map(|p| p.display().to_string()),
            trace: args.trace.as_ref().map(|p| p.display().to_string()),
            attach: args.attach,
            quick: args.quick,
            device: device.to_owned(),
        },
    );
    let progress = Runner { stages };
    stages.begin(6 + u64::from(args.attach.is_some()));

    // 0. The running job, first: gpufeed's own stages below load the machine it runs on.
    if let Some(pid) = args.attach {
        c.attach = progress.run(&mut c.stages, "attach", || {
            let opts = gpufeed_attach::Options {
                duration: args.attach_duration,
                ..gpufeed_attach::Options::new(pid)
            };
            let doc = gpufeed_attach::attach(&opts)?;
            let note = format!(
                "process {pid}: {}, {} samples over {}",
                doc.verdict,
                doc.samples,
                gpufeed_stats::fmt::secs(doc.window_s)
            );
            Ok((doc, Some(note)))
        });
    }

    // 1. The dataset, and 2. its feature cache.
    let (data, cache) = dataset_stages(
        &mut c,
        &progress,
        stages,
        args.data.as_ref(),
        demo,
        &training,
    );

    // 3. The doctor.
    let doctor_settings = DoctorSettings {
        config: doctor::DoctorConfig::of(&training),
        data: data.clone(),
        code: args.code.clone(),
    };
    c.doctor = progress.run(&mut c.stages, "doctor", || {
        let run = doctor::doctor_run(&doctor_settings, &mut |step| {
            progress.detail(&format!("doctor: {step}"));
        })?;
        let section = doctor_section(&run);
        let note = format!(
            "{} error(s), {} warning(s), {} info(s)",
            section.errors(),
            section.count(Severity::Warning),
            section.count(Severity::Info)
        );
        Ok((section, Some(note)))
    });

    // 4. The loader.
    loader_stage(
        &mut c,
        &progress,
        stages,
        &training,
        (data.as_ref(), cache.as_ref()),
        args.quick,
    );

    // 5. The training step, with the GPUs sampled meanwhile when that means something.
    let evidence = Evidence {
        trace: args.trace.as_deref(),
        source: source.as_ref(),
        profiler_trace,
        own_steps,
    };
    let demo_step = DemoStep {
        quick: args.quick,
        data: data.as_ref().filter(|_| demo),
        training: &training,
        device,
        on_gpu,
    };
    let sampled = step_stage(
        &mut c,
        &progress,
        stages,
        &evidence,
        &demo_step,
        data.is_some(),
    );

    // 6. GPU utilisation.
    telemetry_stage(&mut c, &progress, &evidence, gpu, sampled);
    stages.finish();

    let report = Report::build(c);
    write_report(&args.out, &report)?;
    Ok(report)
}

/// The report's document, as written to `report.json` (and printed by `--format json`).
pub fn document(report: &Report) -> Result<serde_json::Value> {
    serde_json::from_str(&Json.render(report)).context("the report's JSON did not parse back")
}

/// Stages 1 and 2: the dataset (the user's `--data`, or the demo's generated once into the
/// user cache folder) and its feature cache, built when missing or stale.
fn dataset_stages(
    c: &mut Collected,
    progress: &Runner<'_>,
    stages: &dyn Stages,
    given: Option<&PathBuf>,
    demo: bool,
    training: &TrainingConfig,
) -> (Option<PathBuf>, Option<PathBuf>) {
    // 1. The dataset.
    let data = match given {
        Some(d) => {
            skip(
                &mut c.stages,
                progress,
                "demo data",
                &format!("`--data {}` given", d.display()),
            );
            Some(d.clone())
        }
        None if demo => progress.run(&mut c.stages, "demo data", || {
            let (dir, note) = demo_dataset()?;
            Ok((dir, Some(note)))
        }),
        None => {
            skip(&mut c.stages, progress, "demo data", NO_DEMO);
            None
        }
    };
    if given.is_none() {
        c.inputs.data = data.as_ref().map(|d| d.display().to_string());
    }

    // 2. Its feature cache.
    let cache = match &data {
        Some(d) => progress.run_quiet(&mut c.stages, "precompute", || {
            let dir = profile::ensure_cache(d, None, &training.config(), &*stages.ui())?;
            let note = format!("cache `{}`", dir.display());
            Ok((dir, Some(note)))
        }),
        None => {
            skip(&mut c.stages, progress, "precompute", NO_DATA);
            None
        }
    };
    (data, cache)
}

/// Stage 4, the loader: `profile data` on the dataset's cache (with the benchmark grid
/// unless `quick`), or skipped without a dataset.
fn loader_stage(
    c: &mut Collected,
    progress: &Runner<'_>,
    stages: &dyn Stages,
    training: &TrainingConfig,
    (data, cache): (Option<&PathBuf>, Option<&PathBuf>),
    quick: bool,
) {
    let batches = if quick { QUICK_BATCHES } else { BATCHES };
    let data_args = DataSettings {
        data: if cache.is_some() { None } else { data.cloned() },
        cache: cache.cloned(),
        config: training.clone(),
        batch_size: None,
        workers: None,
        batches: Some(batches),
        benchmark: !quick,
        consumer_ms: 0.0,
    };
    if data.is_some() {
        if let Some((doc, waits)) = progress.run(&mut c.stages, "profile data", || {
            let p = profile::data_profile(&data_args, &*stages.ui())?;
            let note = format!(
                "{} batches{}",
                batches,
                if quick {
                    ", no benchmark grid (--quick)"
                } else {
                    ", with the benchmark grid"
                }
            );
            Ok(((p.doc, p.series_ms), Some(note)))
        }) {
            c.data = Some(doc);
            c.batch_ms = waits;
        }
    } else {
        skip(&mut c.stages, progress, "profile data", NO_DATA);
    }
}

/// What the demo model's step runs on (stage 5, when the demo runs).
struct DemoStep<'a> {
    /// `--quick`: fewer steps.
    quick: bool,
    /// The dataset, when the demo runs.
    data: Option<&'a PathBuf>,
    /// The config, read once.
    training: &'a TrainingConfig,
    /// `cuda:0` or `cpu`.
    device: &'a str,
    /// Whether the step runs on a GPU (which NVML then samples).
    on_gpu: bool,
}

/// Stage 5, the training step: the user's profiler trace or step recording when `--trace`
/// is one, else the demo model's step (with NVML sampling the GPUs meanwhile when it runs
/// on one), else skipped with the reason. Returns what NVML sampled, with its seconds.
fn step_stage(
    c: &mut Collected,
    progress: &Runner<'_>,
    stages: &dyn Stages,
    evidence: &Evidence<'_>,
    demo: &DemoStep<'_>,
    has_data: bool,
) -> Option<(Result<UtilTrace>, f64)> {
    let (steps, warmup) = if demo.quick {
        (QUICK_STEPS, QUICK_WARMUP)
    } else {
        (STEPS, WARMUP)
    };
    let step_args = StepSettings {
        data: demo.data.cloned(),
        config: demo.training.clone(),
        model: MODEL.to_owned(),
        device: demo.device.to_owned(),
        data_device: None,
        // On the CPU, the demo's batches are small: its activations for the config's batch
        // of 56 peaked at 3.2 GB (issue 41: under 1 GB).
        batch_size: (!demo.on_gpu).then_some(DEMO_CPU_BATCH),
        dtype: "f32".to_owned(),
        steps: Some(steps),
        warmup: Some(warmup),
        no_sync: false,
    };
    let mut sampled: Option<(Result<UtilTrace>, f64)> = None;
    if let Some(path) = evidence.profiler_trace {
        if let Some((report, times)) = progress.run(&mut c.stages, "profile step", || {
            let (report, note) = profiler_doc(path, evidence.source)?;
            let times = gpufeed_report::rank::profiler_step_ms(&report);
            Ok(((report, times), Some(note)))
        }) {
            c.profiler = Some(report);
            c.step_ms = times;
        }
    } else if let Some(path) = evidence.own_steps {
        if let Some((doc, times)) = progress.run(&mut c.stages, "profile step", || {
            let (mut doc, note) = own_step_doc(path)?;
            // The report plots the steps itself; hundreds of thousands of per-step values
            // have no place in `report.json`.
            let times = doc.series.take().map(|s| s.total_ms).unwrap_or_default();
            Ok(((StepPhases::OwnLoop(Box::new(doc)), times), Some(note)))
        }) {
            c.step = Some(doc);
            c.step_ms = times;
        }
    } else if has_data && demo.data.is_none() {
        skip(&mut c.stages, progress, "profile step", NO_DEMO_STEP);
    } else if demo.data.is_some() {
        let step_stage = || {
            let run = profile::step_profile(&step_args, &*stages.ui())?;
            let batch = if demo.on_gpu {
                String::new()
            } else {
                format!(", batches of {DEMO_CPU_BATCH} on the CPU")
            };
            let note = format!(
                "{steps} steps of the `{MODEL}` model on {} after {warmup} warm-up{batch}",
                demo.device
            );
            Ok((
                (StepPhases::Model(Box::new(run.doc)), run.step_ms),
                Some(note),
            ))
        };
        let result = if demo.on_gpu {
            let t = Instant::now();
            let (r, trace) =
                sample_gpus_during(|| progress.run(&mut c.stages, "profile step", step_stage));
            sampled = Some((trace, t.elapsed().as_secs_f64()));
            r
        } else {
            progress.run(&mut c.stages, "profile step", step_stage)
        };
        if let Some((doc, times)) = result {
            c.step = Some(doc);
            c.step_ms = times;
        }
    } else {
        skip(&mut c.stages, progress, "profile step", NO_DATA);
    }
    sampled
}

/// What `--trace` is, as detection found it.
struct Evidence<'a> {
    /// `--trace`.
    trace: Option<&'a Path>,
    /// Its format.
    source: Option<&'a TraceSource>,
    /// `--trace` as a profiler trace of the user's run.
    profiler_trace: Option<&'a Path>,
    /// `--trace` as a step recording of the user's loop.
    own_steps: Option<&'a Path>,
}

/// Stage 6, GPU utilisation: the user's log (`--trace`), or what NVML sampled during the
/// step profile, or skipped with the reason (a profiler trace or a step recording is the
/// step evidence, not a utilisation log; no GPU; a step profile on the CPU).
fn telemetry_stage(
    c: &mut Collected,
    progress: &Runner<'_>,
    evidence: &Evidence<'_>,
    gpu: Option<Result<usize, gpufeed_telemetry::source::SourceError>>,
    sampled: Option<(Result<UtilTrace>, f64)>,
) {
    match (evidence.trace, gpu, sampled) {
        (Some(path), ..) if evidence.profiler_trace.is_some() => {
            skip(
                &mut c.stages,
                progress,
                "telemetry",
                &format!(
                    "`--trace {}` is read as a profiler trace of your own run (a folder, a \
                     `.json` / `.json.gz` file or TensorFlow's `*.xplane.pb`: the step \
                     evidence, with the GPU's busy and idle time from its kernels), not as a \
                     GPU utilisation log",
                    path.display()
                ),
            );
        }
        (Some(path), ..) if evidence.own_steps.is_some() => {
            skip(
                &mut c.stages,
                progress,
                "telemetry",
                &format!(
                    "`--trace {}` is a step recording of your own loop (the step evidence), not \
                     a GPU utilisation log; record one alongside with `gpufeed watch --record \
                     gpu.jsonl -- python train.py`",
                    path.display()
                ),
            );
        }
        (Some(path), ..) => {
            if let Some((t, samples)) = progress.run(&mut c.stages, "telemetry", || {
                let sniffed = match evidence.source {
                    Some(TraceSource::Log { sniffed, .. }) => *sniffed,
                    _ => None,
                };
                let (t, samples, note) = trace_file(path, sniffed)?;
                Ok(((t, samples), Some(note)))
            }) {
                c.telemetry = Some(t);
                c.util = samples;
            }
        }
        (None, _, Some((trace, seconds))) => {
            let outcome = trace.and_then(|t| util_report(&t, Path::new("live")));
            match outcome {
                Ok((util, samples)) => {
                    let note =
                        format!("NVML, every {TELEMETRY_INTERVAL_S} s during the step profile");
                    progress.line(&format!("telemetry: ok ({note})"));
                    c.stages.push(Stage::ok("telemetry", seconds, Some(note)));
                    c.telemetry = Some(Telemetry {
                        source: "nvml".to_owned(),
                        file: None,
                        util,
                    });
                    c.util = samples;
                }
                Err(e) => {
                    let error = format!("{e:#}");
                    progress.line(&format!("telemetry: failed: {error}"));
                    c.stages.push(Stage::failed("telemetry", seconds, error));
                }
            }
            progress.skip();
        }
        (None, Some(Err(e)), None) => {
            skip(&mut c.stages, progress, "telemetry", &e.to_string());
        }
        (None, Some(Ok(n)), None) if n > 0 => {
            skip(
                &mut c.stages,
                progress,
                "telemetry",
                "the step profile ran on the CPU (this build has no CUDA support: build with \
                 `--features cuda`), so the GPUs' utilisation would say nothing about it; pass \
                 `--trace FILE` with a log of your training",
            );
        }
        (None, ..) => {
            skip(
                &mut c.stages,
                progress,
                "telemetry",
                "no GPU was sampled: the step profile did not run on one",
            );
        }
    }
}

/// Utterances per batch of the demo model's step on the CPU: `profile step` on the demo
/// dataset peaked at 3.2 GB of memory with the default batch of 56 and at 954 MB with 16
/// (`/usr/bin/time -v gpufeed profile step --data DEMO --batch-size 16 --steps 6 --warmup 2`,
/// a debug build on the 2-core VM); the step's activations grow with the batch.
const DEMO_CPU_BATCH: usize = 16;

/// Why the demo dataset is not made: the user gave inputs of their own.
const NO_DEMO: &str = "your own inputs were given; gpufeed's demo dataset, loader and model \
                       run with `--demo`";

/// Why the loader and step are not measured: no dataset (the demo's runs whenever the demo
/// does, so this is only said without it).
const NO_DATA: &str = "no dataset: `--data DIR` measures yours, `--demo` gpufeed's demo";

/// Why the demo model's step does not run on the user's data.
const NO_DEMO_STEP: &str = "the demo model (`tiny`) runs with `--demo`: its step is another \
                            model's, not yours; time your own loop's steps (the Python \
                            `StepTimer`, `timer.save`) and pass them as `--trace steps.jsonl`";

/// Whether the demo runs: asked for with `--demo`, or no input of the user's was given (the
/// demo is then all there is to measure).
fn runs_demo(args: &AnalyzeSettings) -> bool {
    let own = args.data.is_some()
        || args.config.is_some()
        || args.code.is_some()
        || args.trace.is_some()
        || args.attach.is_some();
    args.demo || !own
}

/// Paths that do not exist, and a job that cannot be sampled, are bad usage (exit code 2),
/// found before any work.
fn check_usage(args: &AnalyzeSettings) -> Result<()> {
    if let Some(pid) = args.attach {
        gpufeed_attach::procs::resolve(pid)?;
    }
    let named = [
        ("--data", args.data.as_deref()),
        ("--config", args.config.as_deref()),
        ("--code", args.code.as_deref()),
        ("--trace", args.trace.as_deref()),
    ];
    for (flag, path) in named {
        if let Some(p) = path
            && let Err(e) = std::fs::metadata(p)
        {
            bail!("`{flag} {}`: {}", p.display(), reason(&e));
        }
    }
    if args.out.exists() && !args.out.is_dir() {
        bail!(
            "`--out {}` is a file; the report needs a folder (it writes {SUMMARY}, {JSON} and {HTML} into it)",
            args.out.display()
        );
    }
    Ok(())
}

fn reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or folder".to_owned(),
        _ => e.to_string(),
    }
}

/// The user cache folder for gpufeed: `$XDG_CACHE_HOME/gpufeed` (an absolute path, as the
/// XDG base directory specification requires), else `~/.cache/gpufeed`, else the
/// temporary folder.
fn cache_home() -> PathBuf {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    std::env::var_os("XDG_CACHE_HOME")
        .and_then(absolute)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(absolute)
                .map(|h| h.join(".cache"))
        })
        .unwrap_or_else(std::env::temp_dir)
        .join("gpufeed")
}

/// The demo dataset, generated once into the user cache folder.
fn demo_dataset() -> Result<(PathBuf, String)> {
    let dir = cache_home().join(format!("demo-{DEMO_CLIPS}-{DEMO_SEED}"));
    // `metadata.csv` is written last and atomically: it marks a complete dataset.
    if dir.join("metadata.csv").is_file() {
        let note = format!("reused `{}`", dir.display());
        return Ok((dir, note));
    }
    let r = gpufeed_data::demo::generate(&dir, DEMO_CLIPS, DEMO_SEED)
        .with_context(|| format!("cannot write the demo dataset into `{}`", dir.display()))?;
    let note = format!(
        "generated {} clips ({:.0} s of audio) into `{}`",
        r.clips,
        r.audio_s,
        dir.display()
    );
    Ok((dir, note))
}

/// The doctor's findings, skipped checks and storage speeds, for the report.
fn doctor_section(run: &doctor::DoctorRun) -> DoctorSection {
    use gpufeed_findings::Check;
    let findings = run
        .report
        .findings
        .iter()
        .map(|f| Finding {
            finding: f.into(),
            check: Check::of(f.id).map_or_else(|| "Other".to_owned(), |c| c.title().to_owned()),
        })
        .collect();
    let storage = run
        .facts
        .storage
        .iter()
        .map(|s| StorageSpeed {
            role: match s.role {
                Role::Data => "data",
                Role::Cache => "cache",
            }
            .to_owned(),
            path: s.path.display().to_string(),
            sequential_mb_s: s.seq.and_then(|r| r.mb_s()),
            random_reads_per_s: s.random.and_then(|r| r.per_s()),
        })
        .collect();
    DoctorSection {
        findings,
        skipped: run
            .skipped
            .iter()
            .map(|(check, why)| (check.title().to_owned(), why.clone()))
            .collect(),
        storage,
    }
}

/// The `trace` utilisation document of a trace, and its samples for the plot.
fn util_report(t: &UtilTrace, path: &Path) -> Result<(Util, Vec<UtilSamples>)> {
    let report = trace::analyze_util_trace(path, t)?;
    let samples = t
        .gpus
        .iter()
        .filter_map(|series| {
            let g = report.gpus.iter().find(|g| g.gpu == series.gpu)?;
            Some(UtilSamples {
                gpu: series.gpu,
                interval_s: g.analysis.interval_s,
                util: series.util.clone(),
            })
        })
        .collect();
    Ok((report.document(), samples))
}

/// `--trace FILE` as the user's own steps: the phase-steps document and the stage's note.
fn own_step_doc(path: &Path) -> Result<(PhaseSteps, String)> {
    let t = phase_steps::read_recording(path)?;
    let doc = phase_steps::document(&t.meta, &t.steps)
        .with_context(|| format!("`{}`", path.display()))?;
    let mut note = format!(
        "your own loop, from `{}` ({}): {} steps after {} warm-up, {}; the demo model was not \
         run",
        path.display(),
        doc.source,
        doc.step.samples,
        doc.warmup,
        doc.verdict
    );
    if let Some(line) = t.truncated_line {
        note.push_str(&format!("; line {line} was cut off mid-line and skipped"));
    }
    Ok((doc, note))
}

/// `--trace PATH` as a profiler trace of the user's run (a file, or a folder of per-rank
/// traces): the `profiler` document and the stage's note, with the reader's warnings (a
/// file cut off mid-write, a CPU-only profile) in it.
fn profiler_doc(
    path: &Path,
    source: Option<&TraceSource>,
) -> Result<(gpufeed_report::model::Profiler, String)> {
    // Read with what detection found in its head: the file is not sniffed again.
    let opts = source
        .and_then(profiler::source_options)
        .map_or_else(|| profiler::options(None, None), |(_, o)| o);
    let (report, warnings) = profiler::analyze(path, opts)?;
    let steps: usize = report.ranks.iter().map(|r| r.steps.len()).sum();
    let format = report.format.framework().unwrap_or("profiler");
    let verdict = match (report.verdict, report.verdict_rank) {
        (Some(v), Some(r)) if report.ranks.len() > 1 => format!("{} (rank {r})", v.as_str()),
        (Some(v), _) => v.as_str().to_owned(),
        (None, _) => "no verdict".to_owned(),
    };
    let mut note = format!(
        "your own run, from the {format} profiler trace `{}`: {} rank(s), {steps} step(s) \
         analysed, {verdict}; the demo model was not run",
        path.display(),
        report.ranks.len(),
    );
    for w in &warnings {
        note.push_str(&format!("; warning: {w}"));
    }
    Ok((report, note))
}

/// `--trace FILE`: read and analysed as `gpufeed trace FILE --kind util`, by the reader
/// of the format detection found (`sniffed`), without a second look at the file's head.
fn trace_file(
    path: &Path,
    sniffed: Option<gpufeed_telemetry::trace::Sniffed>,
) -> Result<(Telemetry, Vec<UtilSamples>, String)> {
    let read = match sniffed {
        Some(s) => gpufeed_telemetry::trace::read_trace_as(path, Some(TraceKind::Util), s)?,
        None => read_trace(path, Some(TraceKind::Util))?,
    };
    let Trace::Util(t) = read else {
        bail!(
            "`{}` holds step times; `--trace` takes a GPU utilisation log (nvidia-smi CSV or \
             gpufeed JSONL) or a step recording of your own loop (`StepTimer.save`)",
            path.display()
        );
    };
    let (util, samples) = util_report(&t, path)?;
    let mut note = format!(
        "`{}`: {} samples of {} GPU(s), one every {:.3} s",
        path.display(),
        util.samples,
        util.gpus.len(),
        util.interval_s
    );
    if t.skipped > 0 {
        note.push_str(&format!("; {} unreadable value(s) skipped", t.skipped));
    }
    Ok((
        Telemetry {
            source: "trace".to_owned(),
            file: Some(path.display().to_string()),
            util,
        },
        samples,
        note,
    ))
}

/// Runs `f` while a second thread samples every GPU through NVML; returns `f`'s result
/// and the utilisation trace.
fn sample_gpus_during<T>(f: impl FnOnce() -> T) -> (T, Result<UtilTrace>) {
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let sampler = scope.spawn(|| -> Result<UtilTrace> {
            // NVML handles are opened on the thread that uses them.
            let source = MonitorSource::Nvml.open()?.source;
            let mut sampler = Sampler::new(
                vec![source],
                Box::new(RealClock::start()),
                TELEMETRY_INTERVAL_S,
            );
            let mut ticks = Collecting::new(&stop);
            monitor::sample(&mut sampler, &mut ticks)?;
            ticks
                .collector
                .trace()
                .context("NVML gave no utilisation sample during the step profile")
        });
        let result = f();
        stop.store(true, Ordering::Relaxed);
        let trace = sampler
            .join()
            .unwrap_or_else(|_| Err(anyhow!("the GPU sampling thread panicked")));
        (result, trace)
    })
}

/// Records a skipped stage.
fn skip(stages: &mut Vec<Stage>, progress: &Runner<'_>, name: &str, why: &str) {
    stages.push(Stage::skipped(name, why.to_owned()));
    progress.line(&format!("{name}: skipped: {why}"));
    progress.skip();
}

/// Writes the three files: each rendered in full, written to a temporary file in `dir` and
/// renamed over the old one (atomic on one file system).
fn write_report(dir: &Path, report: &Report) -> Result<()> {
    let files = [
        (SUMMARY, Markdown.render(report)),
        (JSON, Json.render(report)),
        (HTML, Html.render(report)),
    ];
    for (name, text) in files {
        let path = dir.join(name);
        gpufeed_fs::write_atomic(&path, |f| f.write_all(text.as_bytes()))
            .with_context(|| format!("cannot write `{}`", path.display()))?;
    }
    Ok(())
}

/// The report for people, as `gpufeed analyze` prints it: the verdict, the ranked causes
/// with their fixes, the files written into `out`.
#[must_use]
pub fn summary_text(report: &Report, out: &Path) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let _ = writeln!(o, "{}", report.verdict);
    if let Some(note) = report.demo_note() {
        let _ = writeln!(o, "note: {note}");
    }
    for c in &report.causes {
        let cost = c.lost_share.map_or_else(
            || "suspected".to_owned(),
            |s| format!("{} of the time lost", gpufeed_report::rank::pct(s)),
        );
        let _ = writeln!(o, "\n{}. {} ({cost}): {}", c.rank, c.title, c.summary);
        let _ = writeln!(o, "   fix: {}", c.fix);
        let _ = writeln!(o, "   evidence from: {}", c.source.label());
    }
    let failed: Vec<&str> = report
        .stages
        .iter()
        .filter(|s| s.status == gpufeed_report::model::Status::Failed)
        .map(|s| s.name.as_str())
        .collect();
    if !failed.is_empty() {
        let _ = writeln!(o, "\nfailed: {} (see {SUMMARY})", failed.join(", "));
    }
    let _ = writeln!(
        o,
        "\nreport: {} (plots), {}, {}",
        out.join(HTML).display(),
        out.join(SUMMARY).display(),
        out.join(JSON).display()
    );
    o
}

/// Runs a stage's work; a bug in it (a panic deep in a dependency) is that stage's
/// failure, and the panic message itself is on stderr already.
fn guarded<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err(anyhow!("internal error: the stage panicked")))
}

/// Runs the stages and records each, telling the caller through [`Stages`].
struct Runner<'a> {
    stages: &'a dyn Stages,
}

impl Runner<'_> {
    fn line(&self, text: &str) {
        self.stages.line(text);
    }

    fn detail(&self, text: &str) {
        self.stages.detail(text);
    }

    fn skip(&self) {
        self.stages.advance();
    }

    /// Runs a stage and records it.
    fn run<T>(
        &self,
        stages: &mut Vec<Stage>,
        name: &str,
        f: impl FnOnce() -> Result<(T, Option<String>)>,
    ) -> Option<T> {
        self.detail(name);
        let started = Instant::now();
        let outcome = guarded(f);
        self.record(stages, name, started, outcome)
    }

    /// Runs a stage that draws its own progress bar: the stage display steps aside
    /// meanwhile.
    fn run_quiet<T>(
        &self,
        stages: &mut Vec<Stage>,
        name: &str,
        f: impl FnOnce() -> Result<(T, Option<String>)>,
    ) -> Option<T> {
        self.detail(name);
        let started = Instant::now();
        let mut f = Some(f);
        let mut outcome = None;
        self.stages.aside(&mut || {
            if let Some(f) = f.take() {
                outcome = Some(guarded(f));
            }
        });
        let outcome =
            outcome.unwrap_or_else(|| Err(anyhow!("internal error: the stage did not run")));
        self.record(stages, name, started, outcome)
    }

    fn record<T>(
        &self,
        stages: &mut Vec<Stage>,
        name: &str,
        started: Instant,
        outcome: Result<(T, Option<String>)>,
    ) -> Option<T> {
        let seconds = started.elapsed().as_secs_f64();
        self.stages.advance();
        match outcome {
            Ok((value, note)) => {
                self.line(&format!(
                    "{name}: ok in {}{}",
                    gpufeed_report::render::duration(seconds),
                    note.as_deref()
                        .map_or_else(String::new, |n| format!(" ({n})"))
                ));
                stages.push(Stage::ok(name, seconds, note));
                Some(value)
            }
            Err(e) => {
                let error = format!("{e:#}");
                self.line(&format!("{name}: failed: {error}"));
                stages.push(Stage::failed(name, seconds, error));
                None
            }
        }
    }
}
