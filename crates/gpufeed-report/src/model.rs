//! The report model: plain serde structs, serialised whole as `report.json`.
//!
//! The stage documents are the types of gpufeed-contract, which their writers build and
//! the report holds as they are: `profile data`'s ([`DataProfile`]), `profile step`'s or
//! the user's own loop's ([`StepPhases`]), the utilisation analysis ([`Util`]) and the
//! doctor's findings ([`gpufeed_contract::Finding`]); the profiler trace's is
//! gpufeed-kineto's. Tests build them by hand.

pub use gpufeed_contract::{
    Breakdown, Cell, DataConfig, DataProfile, GpuUtil, Judged, LoaderSettings, Phase,
    PhaseCategory, PhaseSteps, PhaseVerdict, Recommendation, StepPhases, StepProfile, Steps, Util,
};
use gpufeed_contract::{Document, IfFixed};
/// The `profiler` document (`gpufeed trace` of a PyTorch or TensorFlow profiler trace).
pub use gpufeed_kineto::Report as Profiler;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Version of the `report.json` layout ([`Document::VERSION`] of [`Report`]): 2 since the
/// stage documents are the contract's own and `schema` became `schema_version`; 3 since its
/// `profiler` document is version 2 (`communication-bound`, `devices`, `markers`, ...) and
/// its `util` document is version 2 (`gpus[].training`, issue 26); 4 since its `profiler`
/// document is version 3 and its `phase-steps` document version 2 (each cause's
/// `if_fixed`, issue 29), and since `attach` (the running job's samples, `analyze --attach
/// PID`) and `inputs.attach`; 5 since its `util` document is version 3
/// (`gpus[].training.breaks`: idle stretches of a minute or more between phases) and its
/// `attach` document version 2 (`if_fixed`: the speedup from the cause's share); 6 since
/// its `util` document is version 4 (the verdict `too_short`).
pub const SCHEMA: u32 = 7;

/// The whole report: what was asked, what each stage did, the ranked causes, the stage
/// documents and the series behind the plots.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// [`SCHEMA`].
    pub schema_version: u32,
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
    /// (`analyze --trace` with a `StepTimer` recording; see [`StepPhases::is_own_loop`]).
    pub profile_step: Option<StepPhases>,
    /// GPU utilisation, from a trace file or sampled live during the step profile.
    pub telemetry: Option<Telemetry>,
    /// The `profiler` document of the user's PyTorch or TensorFlow profiler trace
    /// (`analyze --trace` with one): HTA's breakdowns, the steps and the verdict per rank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profiler: Option<Profiler>,
    /// The running job's stack samples (`analyze --attach PID`): `gpufeed attach`'s
    /// document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attach: Option<gpufeed_contract::Attach>,
    /// The series behind the plots.
    pub series: Series,
    /// Every threshold a cause cites, once.
    pub thresholds: Vec<ThresholdRef>,
}

impl Document for Report {
    const NAME: &'static str = "report";
    const VERSION: u32 = SCHEMA;
    const WRITER: &'static str = "gpufeed analyze (report.json)";
}

/// What `analyze` was asked to look at.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
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
    /// `--attach PID`: the running job sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attach: Option<u32>,
    /// `--quick`: fewer steps, no benchmark grid.
    pub quick: bool,
    /// The device the step profile ran on (`cpu`, `cuda:0`); empty when the steps are the
    /// user's own loop (`--trace` with a step recording) and gpufeed's step profile did
    /// not run.
    pub device: String,
}

/// How a stage ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
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
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
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

/// GPU utilisation in the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Telemetry {
    /// `trace` (a log given with `--trace`) or `nvml` (sampled during the step profile).
    pub source: String,
    /// The log, for `trace`.
    pub file: Option<String>,
    /// The analysis, as `gpufeed trace --format json` prints it.
    pub util: Util,
}

/// A series with its autocorrelation, for the batch-time and step-time plots.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Series {
    /// Utilisation per GPU.
    pub util: Vec<UtilSeries>,
    /// The loader's judged series per batch (`profile data`, see [`Judged`]), ms.
    pub batch_ms: Option<AcfSeries>,
    /// The training step times (`profile step`), ms.
    pub step_ms: Option<AcfSeries>,
}

/// A threshold a cause cites: a row of `gpufeed_stats::thresholds::TABLE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
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
    /// What fixing it is worth: the expected median step of the user's run with this cause
    /// alone removed (docs/what-if.md); `null` where no step-time model applies.
    pub if_fixed: Option<IfFixed>,
    /// Why `if_fixed` is `null`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_estimate: Option<String>,
}

/// Whose evidence a cause rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
