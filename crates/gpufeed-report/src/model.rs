//! The report model: plain serde structs, serialised whole as `report.json`.
//!
//! `profile data`'s document, the step statistics, the utilisation analysis and the
//! findings are the types of gpufeed-contract, which their writers build ([`DataProfile`],
//! [`Steps`], [`Util`], [`gpufeed_contract::Finding`]). `profile step`'s document
//! ([`StepDoc`]) is still a typed view of the JSON document of
//! docs/contract.md (`profile step`, `trace` for utilisation): the fields the ranking and
//! the renderers read are typed, every other field is kept in `extra`, so a document goes
//! through the report unchanged. The binary builds them with `serde_json::from_value` from
//! the commands' own documents; tests build them by hand.

/// The `profiler` document (`gpufeed trace` of a PyTorch or TensorFlow profiler trace).
pub use gpufeed_kineto::Report as Profiler;
pub use gpufeed_contract::{
    Breakdown, Cell, DataConfig, DataProfile, GpuUtil, Judged, LoaderSettings, Recommendation,
    Steps, Util,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Version of the `report.json` layout; raised when a field changes meaning or goes away.
pub const SCHEMA: u32 = 1;

/// The whole report: what was asked, what each stage did, the ranked causes, the stage
/// documents and the series behind the plots.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// [`SCHEMA`].
    pub schema: u32,
    /// The gpufeed version that wrote it.
    pub gpufeed: String,
    /// What `analyze` was asked to look at.
    pub inputs: Inputs,
    /// One sentence: the most likely cause of starvation, or why none was found.
    pub verdict: String,
    /// Causes of starvation, most costly first (see [`crate::rank`]).
    pub causes: Vec<Cause>,
    /// Every stage in the order it ran, with its outcome.
    pub stages: Vec<Stage>,
    /// The doctor's findings.
    pub doctor: Option<DoctorSection>,
    /// `profile data`'s document.
    pub profile_data: Option<DataProfile>,
    /// `profile step`'s document, or the phase-steps document of the user's own loop
    /// (`analyze --trace` with a `StepTimer` recording; see [`StepDoc::is_own_loop`]).
    pub profile_step: Option<StepDoc>,
    /// GPU utilisation, from a trace file or sampled live during the step profile.
    pub telemetry: Option<Telemetry>,
    /// The `profiler` document of the user's PyTorch or TensorFlow profiler trace
    /// (`analyze --trace` with one): HTA's breakdowns, the steps and the verdict per rank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profiler: Option<Profiler>,
    /// The series behind the plots.
    pub series: Series,
    /// Every threshold a cause cites, once.
    pub thresholds: Vec<ThresholdRef>,
}

/// What `analyze` was asked to look at.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Inputs {
    /// The dataset folder.
    pub data: Option<String>,
    /// Whether the dataset is gpufeed's generated demo dataset.
    pub demo: bool,
    /// The training config.
    pub config: Option<String>,
    /// The training code linted.
    pub code: Option<String>,
    /// `--trace`: the utilisation log analysed instead of live telemetry, the step
    /// recording or the profiler trace of the user's own run.
    pub trace: Option<String>,
    /// `--quick`: fewer steps, no benchmark grid.
    pub quick: bool,
    /// The device the step profile ran on (`cpu`, `cuda:0`); empty when the steps are the
    /// user's own loop (`--trace` with a step recording) and gpufeed's step profile did
    /// not run.
    pub device: String,
}

/// How a stage ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It ran and its document is in the report.
    Ok,
    /// It failed; `error` says why. The other stages still ran.
    Failed,
    /// It did not run; `note` says why.
    Skipped,
}

impl Status {
    /// As in JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Failed => "failed",
            Self::Skipped => "skipped",
        }
    }
}

/// One stage of `analyze`.
#[derive(Debug, Clone, Serialize)]
pub struct Stage {
    /// `demo data`, `precompute`, `doctor`, `profile data`, `profile step`, `telemetry`.
    pub name: String,
    /// How it ended.
    pub status: Status,
    /// Wall time, seconds.
    pub seconds: f64,
    /// Why it failed (the whole error chain on one line).
    pub error: Option<String>,
    /// What it did, or why it was skipped.
    pub note: Option<String>,
}

impl Stage {
    /// A stage that ran.
    #[must_use]
    pub fn ok(name: &str, seconds: f64, note: Option<String>) -> Self {
        Self {
            name: name.to_owned(),
            status: Status::Ok,
            seconds,
            error: None,
            note,
        }
    }

    /// A stage that failed.
    #[must_use]
    pub fn failed(name: &str, seconds: f64, error: String) -> Self {
        Self {
            name: name.to_owned(),
            status: Status::Failed,
            seconds,
            error: Some(error),
            note: None,
        }
    }

    /// A stage that did not run.
    #[must_use]
    pub fn skipped(name: &str, reason: String) -> Self {
        Self {
            name: name.to_owned(),
            status: Status::Skipped,
            seconds: 0.0,
            error: None,
            note: Some(reason),
        }
    }
}

/// Severity of a doctor finding: the contract's, as the doctor writes it.
pub use gpufeed_contract::Severity;

/// One doctor finding: the object of the `findings` document, plus the doctor check it
/// belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// The finding, as `doctor --format json` writes it.
    #[serde(flatten)]
    pub finding: gpufeed_contract::Finding,
    /// The doctor check (`GPU`, `Host`, `Storage`, `Frameworks`, `Environment`, `Config`,
    /// `Code`, `Runtime`).
    pub check: String,
}

impl std::ops::Deref for Finding {
    type Target = gpufeed_contract::Finding;
    fn deref(&self) -> &gpufeed_contract::Finding {
        &self.finding
    }
}

impl std::ops::DerefMut for Finding {
    fn deref_mut(&mut self) -> &mut gpufeed_contract::Finding {
        &mut self.finding
    }
}

/// A storage speed the doctor measured with the page cache bypassed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StorageSpeed {
    /// `data` or `cache`.
    pub role: String,
    /// The folder.
    pub path: String,
    /// Cold sequential reads, MB/s.
    pub sequential_mb_s: Option<f64>,
    /// Cold random 4 KiB reads per second.
    pub random_reads_per_s: Option<f64>,
}

/// The doctor's part of the report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DoctorSection {
    /// Every finding, in the doctor's order.
    pub findings: Vec<Finding>,
    /// Checks not run, with the reason: `(check, reason)`.
    pub skipped: Vec<(String, String)>,
    /// Storage speeds measured.
    pub storage: Vec<StorageSpeed>,
}

impl DoctorSection {
    /// Findings at error severity.
    #[must_use]
    pub fn errors(&self) -> usize {
        self.count(Severity::Error)
    }

    /// Findings of a severity.
    #[must_use]
    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == severity)
            .count()
    }
}

/// What a phase does: a phase-steps document says it per phase (`category`); for `profile
/// step`'s fixed phases the name says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PhaseCategory {
    /// Waiting for the next batch.
    Input,
    /// Moving the batch between memories.
    Copy,
    /// Everything else.
    Compute,
}

/// One phase of `profile step` or of a phase-steps document.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// Mean duration, ms.
    pub mean_ms: f64,
    /// Population std, ms.
    pub std_ms: f64,
    /// Mean duration over the mean step.
    pub share: f64,
    /// Position in the loop (phase-steps documents; `profile step`'s order is
    /// [`PHASE_ORDER`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<usize>,
    /// What the phase does (phase-steps documents; `profile step`'s phases are known by
    /// name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<PhaseCategory>,
}

impl Phase {
    /// The phase's category: its own, else the one its name has in `profile step`.
    #[must_use]
    pub fn category_of(&self, name: &str) -> PhaseCategory {
        self.category.unwrap_or(match name {
            "data_wait" => PhaseCategory::Input,
            "h2d_copy" | "device_copy" => PhaseCategory::Copy,
            _ => PhaseCategory::Compute,
        })
    }
}

/// The phases of a step in the order a step runs them (the JSON object's order is not kept
/// by every reader, so the report restores it).
pub const PHASE_ORDER: [&str; 7] = [
    "data_wait",
    "h2d_copy",
    "device_copy",
    "forward",
    "loss",
    "backward",
    "optimizer",
];

/// Phases that feed the model rather than compute (TF Profiler's input time).
pub const INPUT_PHASES: [&str; 3] = ["data_wait", "h2d_copy", "device_copy"];

/// The `kind` of a phase-steps document: the steps of the user's own training loop (the
/// Python `StepTimer`, given to `analyze --trace`), not of gpufeed's model.
pub const OWN_LOOP_KIND: &str = "phase-steps";

/// `profile step`'s JSON document, or a phase-steps document of the user's own loop (which
/// has the same fields, `kind: "phase-steps"`, `source` and `sync`, and no `config`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StepDoc {
    /// Model, device, loader, steps timed (`profile step`).
    #[serde(default)]
    pub config: Value,
    /// Phase name -> figures.
    pub phases: Map<String, Value>,
    /// The step times.
    pub step: Steps,
    /// Steps per second.
    pub steps_per_s: f64,
    /// Items per second, when the item counts are known.
    #[serde(default)]
    pub samples_per_s: Option<f64>,
    /// `input-bound`, `transfer-bound`, `compute-bound` or `oscillating` (and
    /// `undetermined` for a loop whose wait for data was not timed).
    pub verdict: String,
    /// `moderate` or `high` for input- and transfer-bound.
    #[serde(default)]
    pub level: Option<String>,
    /// The figures behind the verdict, one sentence each.
    #[serde(default)]
    pub evidence: Vec<String>,
    /// The change to try.
    #[serde(default)]
    pub fix: Option<String>,
    /// Every other field.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl StepDoc {
    /// Whether these are the steps of the user's own loop (a phase-steps document), not of
    /// gpufeed's model.
    #[must_use]
    pub fn is_own_loop(&self) -> bool {
        self.extra.get("kind").and_then(Value::as_str) == Some(OWN_LOOP_KIND)
    }

    /// What timed the user's own loop (`python StepTimer`).
    #[must_use]
    pub fn own_source(&self) -> Option<&str> {
        self.extra.get("source").and_then(Value::as_str)
    }

    /// The phases that parse, in step order: the loop's own order when the document gives
    /// it, else [`PHASE_ORDER`] (unknown names last, by name).
    #[must_use]
    pub fn ordered_phases(&self) -> Vec<(String, Phase)> {
        let mut v: Vec<(String, Phase)> = self
            .phases
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), serde_json::from_value(v.clone()).ok()?)))
            .collect();
        let key = |name: &str, p: &Phase| {
            p.order.unwrap_or_else(|| {
                PHASE_ORDER
                    .iter()
                    .position(|o| *o == name)
                    .unwrap_or(PHASE_ORDER.len())
            })
        };
        v.sort_by(|a, b| key(&a.0, &a.1).cmp(&key(&b.0, &b.1)).then(a.0.cmp(&b.0)));
        v
    }

    /// Share of the step spent waiting for data: the input phases (`data_wait`).
    #[must_use]
    pub fn data_wait_share(&self) -> f64 {
        self.share_of(&[PhaseCategory::Input])
    }

    /// Share of the step spent copying (`h2d_copy`, `device_copy`, and in a phase-steps
    /// document every phase of category `copy`).
    #[must_use]
    pub fn copy_share(&self) -> f64 {
        self.share_of(&[PhaseCategory::Copy])
    }

    /// Data wait plus copies: TF Profiler's input time over the step.
    #[must_use]
    pub fn input_share(&self) -> f64 {
        self.share_of(&[PhaseCategory::Input, PhaseCategory::Copy])
    }

    fn share_of(&self, categories: &[PhaseCategory]) -> f64 {
        self.ordered_phases()
            .iter()
            .filter(|(n, p)| categories.contains(&p.category_of(n)))
            .map(|(_, p)| p.share)
            .filter(|s| s.is_finite())
            .sum()
    }

    /// The loader settings of the run.
    #[must_use]
    pub fn loader(&self) -> Option<LoaderSettings> {
        LoaderSettings::of(&self.config)
    }
}

/// GPU utilisation in the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Telemetry {
    /// `trace` (a log given with `--trace`) or `nvml` (sampled during the step profile).
    pub source: String,
    /// The log, for `trace`.
    pub file: Option<String>,
    /// The analysis, as `gpufeed trace --format json` prints it.
    pub util: Util,
}

/// A series with its autocorrelation, for the batch-time and step-time plots.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AcfSeries {
    /// The values, ms, in order (at most [`crate::series::MAX_POINTS`]).
    pub values: Vec<f64>,
    /// Values left out at the end to keep the plot small.
    pub truncated: usize,
    /// Autocorrelation of the detrended series, lags 0..=n/2 (gpufeed-stats).
    pub acf: Vec<f64>,
    /// The white-noise significance bound (gpufeed-stats), when the series is long enough.
    pub bound: Option<f64>,
    /// The period found, in samples.
    pub period: Option<usize>,
}

/// One GPU's utilisation for the plot: the series cut into at most
/// [`crate::series::MAX_POINTS`] buckets, each with its time, lowest and highest value.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UtilSeries {
    /// GPU index.
    pub gpu: u32,
    /// Sampling interval, s.
    pub interval_s: f64,
    /// Samples in the series.
    pub samples: usize,
    /// Start of each bucket, s from the first sample.
    pub t_s: Vec<f64>,
    /// Lowest value of each bucket, %.
    pub min: Vec<f64>,
    /// Highest value of each bucket, %.
    pub max: Vec<f64>,
    /// Idle gaps as `(start, length)` in seconds (at most [`crate::series::MAX_GAPS`]).
    pub idle_gaps_s: Vec<(f64, f64)>,
    /// Idle gaps in the series, all of them.
    pub idle_gaps_total: usize,
}

/// The series behind the plots.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Series {
    /// Utilisation per GPU.
    pub util: Vec<UtilSeries>,
    /// The loader's judged series per batch (`profile data`, see [`Judged`]), ms.
    pub batch_ms: Option<AcfSeries>,
    /// The training step times (`profile step`), ms.
    pub step_ms: Option<AcfSeries>,
}

/// A threshold a cause cites: a row of `gpufeed_stats::thresholds::TABLE`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThresholdRef {
    /// The constant's name.
    pub name: String,
    /// Its value.
    pub value: f64,
    /// Unit of `value`.
    pub unit: String,
    /// What crossing it means.
    pub meaning: String,
    /// Where the value comes from.
    pub source: String,
}

/// A cause of starvation, with its numbers, the thresholds they were judged by, and the
/// fix.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cause {
    /// 1 for the most costly.
    pub rank: usize,
    /// Stable id: `oscillating-utilisation`, `input-bound`, `step-stall`, `doctor-storage`, ...
    pub id: String,
    /// A few words: `oscillating utilisation`.
    pub title: String,
    /// One sentence with the numbers.
    pub summary: String,
    /// Estimated share of the GPU's (or the step's) time it costs, 0..1; `None` for a
    /// suspected cause that was not measured (a doctor finding).
    pub lost_share: Option<f64>,
    /// Warning, or error for a doctor finding at error severity.
    pub severity: Severity,
    /// The figures behind it, one sentence each.
    pub evidence: Vec<String>,
    /// Names of the thresholds (see [`Report::thresholds`]) it was judged by.
    pub thresholds: Vec<String>,
    /// The change to make.
    pub fix: String,
    /// The stages whose measurements it rests on.
    pub stages: Vec<String>,
    /// Whose evidence it is: the fix quotes only settings of that source.
    pub source: Source,
}

/// Whose evidence a cause rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// The user's own run: the utilisation log or step recording they gave (`--trace`),
    /// their config (`--config`), their code (`--code`).
    YourRun,
    /// gpufeed's loader and model run on the user's dataset (`--data`) on this machine.
    YourData,
    /// This machine: GPU, host, storage, environment, frameworks.
    ThisMachine,
    /// gpufeed's generated demo dataset, with gpufeed's loader and model: not the user's
    /// data.
    Demo,
}

impl Source {
    /// Words for the report: "your run", "gpufeed's demo (not your data)".
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::YourRun => "your run",
            Self::YourData => "your dataset, with gpufeed's loader on this machine",
            Self::ThisMachine => "this machine",
            Self::Demo => "gpufeed's demo dataset, not your data (pass `--data`)",
        }
    }
}
