//! GPU utilisation: the `util` document of `gpufeed trace --kind util` (an nvidia-smi log
//! or a gpufeed recording), and the `monitor` document, the end report of `gpufeed
//! monitor` and `gpufeed watch`, which has the same GPU figures plus the host's (and, for
//! `watch`, the command's exit code).

use gpufeed_stats::{IdleGaps, UtilVerdict};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::Document;

/// Always `util`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum UtilKind {
    /// A utilisation document.
    #[default]
    Util,
}

/// The utilisation of one GPU over the run (percent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GpuUtil {
    /// GPU index.
    pub gpu: u32,
    /// Mean utilisation, %.
    pub mean: f64,
    /// Population standard deviation, percentage points.
    pub std: f64,
    /// Coefficient of variation.
    pub cv: f64,
    /// 5th percentile, %.
    pub p5: f64,
    /// Median, %.
    pub p50: f64,
    /// 95th percentile, %.
    pub p95: f64,
    /// Share of samples below the idle level (gpufeed-stats' `IDLE_UTIL_PCT`).
    pub idle_fraction: f64,
    /// Share of samples at or above the busy level (`BUSY_UTIL_PCT`).
    pub busy_fraction: f64,
    /// Period of an oscillation, s; `null` when there is none.
    pub period_s: Option<f64>,
    /// Autocorrelation at the period; `null` when there is no period.
    pub period_strength: Option<f64>,
    /// Runs of samples below the idle level.
    pub idle_gaps: IdleGaps,
    /// The training phase the verdict judges: the log without the job's idle start and
    /// end (gpufeed-stats' `TRAINING_MIN_SAMPLES`). The figures above are the whole log's.
    pub training: TrainingPhase,
    /// `stable`, `starved`, `oscillating`, `bursty` or `idle` (gpufeed-stats' rules), of
    /// the training phase; `period_s` is that phase's too.
    pub verdict: UtilVerdict,
}

/// The samples between a job's idle start and idle end, which the verdict judges.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrainingPhase {
    /// Idle at the start, left out (the job starting up), s: samples × interval.
    pub idle_start_s: f64,
    /// Idle at the end, left out (after training stopped), s.
    pub idle_end_s: f64,
    /// Samples in the training phase.
    pub samples: usize,
    /// Mean utilisation of the training phase, %.
    pub mean: f64,
    /// 5th percentile of the training phase, %.
    pub p5: f64,
    /// 95th percentile of the training phase, %.
    pub p95: f64,
    /// Share of the training phase's samples below the idle level.
    pub idle_fraction: f64,
    /// Runs of samples below the idle level inside the training phase (breaks between
    /// phases not included).
    pub idle_gaps: IdleGaps,
    /// Idle stretches of at least gpufeed-stats' `PHASE_BREAK_S` (60 s) between busy
    /// ones: breaks between phases of work (evaluation, a restart, another job), left out
    /// of the training phase's figures above.
    pub breaks: IdleGaps,
}

impl Default for GpuUtil {
    /// GPU 0, all figures 0, `stable` (for tests that fill in a few fields).
    fn default() -> Self {
        Self {
            gpu: 0,
            mean: 0.0,
            std: 0.0,
            cv: 0.0,
            p5: 0.0,
            p50: 0.0,
            p95: 0.0,
            idle_fraction: 0.0,
            busy_fraction: 0.0,
            period_s: None,
            period_strength: None,
            idle_gaps: IdleGaps::default(),
            training: TrainingPhase::default(),
            verdict: UtilVerdict::Stable,
        }
    }
}

/// GPU utilisation of a log: `gpufeed trace --kind util --format json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Util {
    /// [`Document::VERSION`] of this document.
    pub schema_version: u32,
    /// Always `util`.
    pub kind: UtilKind,
    /// Samples over all GPUs.
    pub samples: usize,
    /// Sampling interval, s (the median over the GPUs).
    pub interval_s: f64,
    /// One entry per GPU, by index.
    pub gpus: Vec<GpuUtil>,
}

impl Util {
    /// A document of this version.
    #[must_use]
    pub fn new(samples: usize, interval_s: f64, gpus: Vec<GpuUtil>) -> Self {
        Self {
            schema_version: Self::VERSION,
            kind: UtilKind::Util,
            samples,
            interval_s,
            gpus,
        }
    }
}

impl Default for Util {
    /// An empty document of this version (no GPU analysed).
    fn default() -> Self {
        Self::new(0, 0.0, Vec::new())
    }
}

impl Document for Util {
    const NAME: &'static str = "util";
    /// 2: `gpus[].training`, the phase the verdict judges (issue 26). 3:
    /// `gpus[].training.breaks`, idle stretches of a minute or more between phases. 4: the
    /// verdict `too_short` (stalls too few to tell a cycle from irregular ones).
    const VERSION: u32 = 4;
    const WRITER: &'static str = "gpufeed trace --kind util";
}

/// Mean, 95th percentile and maximum of a host series.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Stat {
    /// Mean.
    pub mean: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Maximum.
    pub max: f64,
}

/// What sampling cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sampler {
    /// Ticks.
    pub ticks: u64,
    /// Interval asked for, s.
    pub interval_s: f64,
    /// Mean CPU time of one poll of every source, µs.
    pub poll_us_per_tick: f64,
    /// CPU time of gpufeed's sampling thread (polls, analysis, display, recording) as a %
    /// of one core over the run; `null` on a virtual clock or a run shorter than a second,
    /// where start-up would dominate.
    pub cpu_pct: Option<f64>,
}

/// Host figures over a run; a series the host did not give is `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// Host samples.
    pub samples: usize,
    /// CPU busy, % of all CPU time.
    pub cpu_pct: Option<Stat>,
    /// CPU waiting for I/O, % of all CPU time.
    pub iowait_pct: Option<Stat>,
    /// The busiest core's busy %, per sample: near 100 while `cpu_pct` is low means one
    /// thread (a single-process loader, the GIL) is the limit.
    pub busiest_core_pct: Option<Stat>,
    /// PSI `cpu some`, % of wall time.
    pub psi_cpu_some_pct: Option<Stat>,
    /// PSI `io some`, % of wall time.
    pub psi_io_some_pct: Option<Stat>,
    /// PSI `io full`, % of wall time.
    pub psi_io_full_pct: Option<Stat>,
    /// PSI `memory some`, % of wall time.
    pub psi_mem_some_pct: Option<Stat>,
    /// Disk reads, MiB/s.
    pub disk_read_mib_s: Option<Stat>,
    /// Disk writes, MiB/s.
    pub disk_write_mib_s: Option<Stat>,
    /// `watch`: CPU of the command's process tree, % of one core.
    pub process_cpu_pct: Option<Stat>,
    /// `watch`: CPU time of the command's process tree over the run, s.
    pub process_cpu_s: Option<f64>,
    /// The sampler's own cost.
    pub sampler: Sampler,
}

/// The end report of `gpufeed monitor --format json` and `gpufeed watch --format json`:
/// the [`Util`] figures of the whole run (no `gpus` when nothing could be analysed), the
/// host's, and the command's exit code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Monitor {
    /// [`Document::VERSION`] of this document.
    pub schema_version: u32,
    /// Always `util`: the GPU figures read as a [`Util`] document's.
    pub kind: UtilKind,
    /// Samples over all GPUs.
    pub samples: usize,
    /// Sampling interval, s.
    pub interval_s: f64,
    /// One entry per GPU with enough samples to analyse.
    pub gpus: Vec<GpuUtil>,
    /// Host figures over the run.
    pub host: Host,
    /// `watch`: the command's exit code (128 + N when signal N killed it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// `watch`: the command's Python stacks sampled over its run (`gpufeed attach`'s
    /// document), when it ran Python.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attach: Option<Box<crate::Attach>>,
}

impl Monitor {
    /// The end report of a run of these GPU figures.
    #[must_use]
    pub fn new(util: Util, host: Host, exit_code: Option<i32>) -> Self {
        Self {
            schema_version: Self::VERSION,
            kind: util.kind,
            samples: util.samples,
            interval_s: util.interval_s,
            gpus: util.gpus,
            host,
            exit_code,
            attach: None,
        }
    }
}

impl Document for Monitor {
    const NAME: &'static str = "monitor";
    /// 2: `gpus[].training`, as in `util` 2. 3: `attach` (`watch`). 4:
    /// `gpus[].training.breaks`, as in `util` 3, and `attach` version 2 (`if_fixed`). 5:
    /// the verdict `too_short`, as in `util` 4.
    const VERSION: u32 = 5;
    const WRITER: &'static str = "gpufeed monitor | watch --format json";
}
