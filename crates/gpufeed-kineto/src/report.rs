//! A folder (or file) of per-rank traces → the `profiler` JSON document: per rank HTA's
//! figures, the steps, the verdict; across ranks the straggler.

use std::path::{Path, PathBuf};

use gpufeed_contract::{Document, TraceFormat};
use gpufeed_stats::outliers::{median_absolute_deviation, modified_z_scores};
use gpufeed_stats::thresholds::{HOST_STALL_MODERATE, ONE_STEP_SPAN_MIN, OUTLIER_MODIFIED_Z};
use gpufeed_stats::{StepAnalysis, StepVerdict, analyze_steps};
use rustc_hash::FxHashSet;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::estimate;
use crate::hta::{self, KernelTypeTime, StreamIdle, Temporal};
use crate::job::{self, FileSummary, Fullness};
use crate::read::RawTrace;
use crate::steps::{self, LaunchStats, Markers, StepFigures};
use crate::tf;
use crate::verdict::{self, Bottleneck, CauseShare, Level, Shares};

/// How to read and analyse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// Force a profiler format instead of detecting it (a log format is none, and is
    /// ignored).
    pub format: Option<TraceFormat>,
    /// Skip HTA's ns rounding (as `HTA_DISABLE_NS_ROUNDING=1` does for HTA).
    pub no_rounding: bool,
    /// What the caller's detection found in a single file's head ([`tf::classify`]),
    /// handed down so that the file is not opened again to sniff; `None`: classified here.
    pub classified: Option<tf::Classified>,
}

/// The step series of a rank through gpufeed-stats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepSeries {
    /// Steps analysed.
    pub samples: usize,
    /// Mean step time, ms.
    pub mean_ms: f64,
    /// Median, ms.
    pub median_ms: f64,
    /// Slowest, ms.
    pub max_ms: f64,
    /// Coefficient of variation.
    pub cv: f64,
    /// Period of a cycle, in steps.
    pub period_steps: Option<usize>,
    /// Autocorrelation at the period.
    pub period_strength: Option<f64>,
    /// gpufeed-stats' verdict on the series: `stable`, `oscillating`, `unstable`.
    pub series_verdict: StepVerdict,
}

impl StepSeries {
    fn of(a: &StepAnalysis) -> Self {
        Self {
            samples: a.summary.n,
            mean_ms: a.summary.mean,
            median_ms: a.summary.median,
            max_ms: a.summary.max,
            cv: a.summary.cv,
            period_steps: a.period.map(|p| p.lag),
            period_strength: a.period.map(|p| p.strength),
            series_verdict: a.verdict,
        }
    }
}

/// Which rows were analysed: HTA's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Window {
    /// Whether the last ProfilerStep (and what it launched) was left out, as HTA does.
    pub applied: bool,
    /// GPU rows in the file.
    pub gpu_events_in_file: usize,
    /// GPU rows analysed.
    pub gpu_events_analysed: usize,
    /// Steps in the file.
    pub steps_in_file: usize,
    /// Host calls that launch a kernel (`cudaLaunchKernel`, `cuLaunchKernel`, their `Ex`
    /// forms) in the file: with no GPU rows, they say the kernels ran but their records
    /// were lost, not that the profile was CPU-only.
    #[serde(default)]
    pub launch_calls: usize,
}

/// One rank: an entry of the contract's `ranks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RankReport {
    /// The rank (`distributedInfo.rank`, else 0).
    pub rank: u32,
    /// The file.
    pub file: String,
    /// The GPU's name (`deviceProperties`); in a `devices` entry, the device as the trace
    /// names it (`/device:GPU:3`, `GPU 1`).
    pub device: Option<String>,
    /// In a `devices` entry: the device's index in the file.
    #[serde(default)]
    pub device_id: Option<u32>,
    /// One entry per GPU when the file holds several (an xplane with several GPU planes, a
    /// PyTorch trace with kernels on several devices), each with its own figures and
    /// verdict, as ranks have; empty for one GPU. The rank's own HTA figures stay HTA's
    /// (over every device of the rank, as HTA computes them); its steps, shares and verdict
    /// are then those of the device that sets the pace ([`Report::pace_device`]).
    #[serde(default)]
    pub devices: Vec<RankReport>,
    /// Which markers delimit the steps (`None`: no steps found).
    #[serde(default)]
    pub markers: Option<Markers>,
    /// Which rows were analysed.
    pub window: Window,
    /// HTA's temporal breakdown; `None` without GPU events.
    pub temporal: Option<Temporal>,
    /// HTA's idle-time breakdown, per stream.
    pub idle_breakdown: Vec<StreamIdle>,
    /// HTA's kernel-type breakdown of this rank.
    pub kernel_types: Vec<KernelTypeTime>,
    /// The analysed steps.
    pub steps: Vec<StepFigures>,
    /// The step series.
    pub step_time: Option<StepSeries>,
    /// Shares of the step time.
    pub shares: Option<Shares>,
    /// Median kernel and launch-call durations.
    pub launch: LaunchStats,
    /// The verdict (`input-bound`, ...); `None` without GPU events or steps.
    pub verdict: Option<Bottleneck>,
    /// Its level.
    pub level: Option<Level>,
    /// The figures behind it.
    pub evidence: Vec<String>,
    /// Why no verdict was given: no GPU events; no step markers (and how to add them); or
    /// steps that cannot be judged: one step that covers little of what was profiled, or a
    /// GPU of several that ran no compute kernel in its steps.
    #[serde(default)]
    pub no_verdict: Option<String>,
    /// The first steps left out of `step_time`, `shares` and the verdict as warm-up (cuDNN
    /// autotuning, lazy initialisation, compilation): each an outlier and more than twice
    /// every later step (`gpufeed_stats::outliers::warmup_len`). They stay in `steps`.
    #[serde(default)]
    pub warmup_steps: usize,
    /// The straggler this rank waits for inside its collectives: its exposed collectives'
    /// share of the step is larger than the straggler's by at least the smallest share judged, so
    /// their time is the straggler's compute, not the interconnect's.
    #[serde(default)]
    pub waits_for: Option<u32>,
    /// What to try.
    pub fix: Option<String>,
    /// Every cause at or past its moderate threshold, each with its figure, its fix and
    /// what fixing it is worth (`if_fixed`), the largest gain first (the verdict is still
    /// the largest share at the high level; see [`crate::verdict`] and
    /// [`crate::estimate`]).
    pub causes: Vec<CauseShare>,
    /// For `oscillating`: the cause that cycles (the stall the slow steps hold and the
    /// median step does not).
    #[serde(default)]
    pub cycles: Option<Bottleneck>,
    /// Where the file was cut off mid-write, bytes into its JSON.
    pub truncated_at: Option<u64>,
}

/// What made a rank the straggler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StragglerBy {
    /// Its mean step time (ms).
    StepTime,
    /// Its GPU idle share (percent of the GPU span), when the step times do not single
    /// out a rank.
    IdleShare,
    /// Its compute share of the step (percent), high: under collectives every rank's step
    /// lasts as long as the slowest one's, so the step times cannot show it, but the
    /// straggler computes while the others wait.
    ComputeShare,
    /// Its collectives' share of the step (percent), low: the others wait inside their
    /// collectives for it, the straggler hardly does.
    CollectiveWait,
}

/// A rank that holds the others back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Straggler {
    /// The rank.
    pub rank: u32,
    /// `step_time` or `idle_share`.
    pub by: StragglerBy,
    /// Its value (ms, or percent of the GPU span).
    pub value: f64,
    /// The median over the ranks.
    pub median: f64,
    /// Its modified Z-score.
    pub z: f64,
}

impl Straggler {
    /// How far it stands out: "modified Z-score 7.2", or, where it was named by its gap
    /// from ranks alike to the digit (MAD 0, a score under the threshold), that.
    #[must_use]
    pub fn score(&self) -> String {
        if self.z > OUTLIER_MODIFIED_Z {
            format!("modified Z-score {:.1}", self.z)
        } else {
            "the other ranks alike to the digit".to_owned()
        }
    }

    /// What singles it out, in words: "compute 80.1 % of the step against a median of
    /// 52.3 %".
    #[must_use]
    pub fn describe(&self) -> String {
        match self.by {
            StragglerBy::StepTime => format!(
                "mean step {:.1} ms against a median of {:.1} ms",
                self.value, self.median
            ),
            StragglerBy::IdleShare => format!(
                "GPU idle {:.1} % against a median of {:.1} %",
                self.value, self.median
            ),
            StragglerBy::ComputeShare => format!(
                "compute {:.1} % of the step against a median of {:.1} %: the others wait for \
                 it in their collectives, so every rank's step lasts as long",
                self.value, self.median
            ),
            StragglerBy::CollectiveWait => format!(
                "collectives {:.1} % of the step against a median of {:.1} %: the others wait \
                 in theirs for it",
                self.value, self.median
            ),
        }
    }
}

/// Always `profiler`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProfilerKind {
    /// A profiler-trace document.
    #[default]
    Profiler,
}

/// The `profiler` JSON document of `gpufeed trace` (a contract document: see
/// [`Document`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    /// [`Document::VERSION`] of this document.
    pub schema_version: u32,
    /// Always `profiler`.
    pub kind: ProfilerKind,
    /// Which profiler.
    #[schemars(schema_with = "gpufeed_contract::format::profiler_format_schema")]
    pub format: TraceFormat,
    /// What was read.
    pub path: String,
    /// One entry per rank, by rank.
    pub ranks: Vec<RankReport>,
    /// HTA's kernel-type table over all ranks.
    pub kernel_types: Vec<KernelTypeTime>,
    /// A rank whose step time or idle share is an outlier among the ranks.
    pub straggler: Option<Straggler>,
    /// The run's verdict: the straggler's, else the slowest rank's.
    pub verdict: Option<Bottleneck>,
    /// The rank the verdict is about.
    pub verdict_rank: Option<u32>,
    /// TF Profiler's own verdict, read from its overview page (`*.overview_page.pb`) in the
    /// folder. Where that is all there is (TF Profiler's analysis files, no trace),
    /// `ranks` is empty and `verdict` is TF Profiler's: `input-bound` when it says so,
    /// `compute-bound` when it says the program is not input-bound (its bottleneck
    /// `device`). Beside a trace, gpufeed's verdict is the trace's and
    /// [`Report::tf_profiler_agreement`] compares the two.
    #[serde(default)]
    pub tf_profiler: Option<tf::TfProfilerVerdict>,
    /// Beside a trace: whether gpufeed's verdict agrees with TF Profiler's, and why not
    /// where it does not.
    #[serde(default)]
    pub tf_profiler_agreement: Option<String>,
    /// Where that rank holds several GPUs: the one that sets the pace (the most GPU busy
    /// time in the steps, else over the trace), whose verdict is the rank's.
    #[serde(default)]
    pub pace_device: Option<PaceDevice>,
    /// Warnings the caller prints once each (cut-off files, duplicate ranks).
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// The GPU that sets a rank's pace, among several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaceDevice {
    /// The rank.
    pub rank: u32,
    /// The device's index in the file.
    pub device_id: Option<u32>,
    /// The device as the trace names it.
    pub device: Option<String>,
    /// Its GPU busy time, µs (in the steps, else over the trace).
    pub busy_us: f64,
    /// Devices of the rank.
    pub of: usize,
}

impl Document for Report {
    const NAME: &'static str = "profiler";
    /// 2: `communication-bound`, `devices`, `markers`, `cycles`, `pace_device`, the
    /// straggler by compute share or collective wait, steps' busy share by time. 3: each
    /// cause's `if_fixed` (what fixing it is worth), causes ordered by gain. 4:
    /// communication known by its launcher and stream too, `collective_exposed_us` and
    /// `collective_exposed`, `communication-bound` judged on exposed communication, each
    /// rank's `waits_for` and `warmup_steps`.
    const VERSION: u32 = 5;
    const WRITER: &'static str = "gpufeed trace --kind pytorch|tensorflow";
}

impl Report {
    /// GPU rows analysed over all ranks.
    #[must_use]
    pub fn gpu_events(&self) -> usize {
        self.ranks
            .iter()
            .map(|r| r.window.gpu_events_analysed)
            .sum()
    }
}

/// The trace files of `path`: the file itself, or every `*.json` / `*.json.gz` in the
/// folder (no recursion, as HTA), else its `*.xplane.pb` (TensorFlow 2 writes only those;
/// older versions write both forms of one profile, read once, as JSON), or, for a
/// TensorFlow log folder, those of its latest `plugins/profile/<run>/`, also one level down
/// (`LOGDIR/train/plugins/profile/<run>/`, where Keras' TensorBoard callback writes).
pub fn trace_files(path: &Path) -> Result<Vec<PathBuf>> {
    trace_files_skipping(path).map(|(files, _)| files)
}

/// [`trace_files`], and the files of the folder it read that it left out as no trace
/// (TensorFlow's memory profile, TF Profiler's `*.pb` analysis files, the form of a
/// profile it did not read): the caller names them in one line.
pub fn trace_files_skipping(path: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    if !path.is_dir() {
        return Ok((vec![path.to_owned()], Vec::new()));
    }
    // The entries of `dir` that are files (`want_dirs` false) or folders.
    let entries = |dir: &Path, want_dirs: bool| -> Result<Vec<PathBuf>> {
        Ok(fs_err::read_dir(dir)
            .map_err(|cause| Error::Io {
                path: dir.to_owned(),
                cause,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| if want_dirs { p.is_dir() } else { p.is_file() })
            .collect())
    };
    let list = |dir: &Path| -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
        let files = entries(dir, false)?;
        let name = |p: &PathBuf| {
            p.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_owned()
        };
        // TensorFlow's memory profile and TF Profiler's analysis files sit beside the
        // profile: they are no trace.
        let (skipped, files): (Vec<PathBuf>, Vec<PathBuf>) =
            files.into_iter().partition(|p| not_a_trace(p));
        let mut v: Vec<PathBuf> = files
            .iter()
            .filter(|p| {
                let n = name(p);
                n.ends_with(".json") || n.ends_with(".json.gz")
            })
            .cloned()
            .collect();
        let xplanes = files
            .into_iter()
            .filter(|p| name(p).ends_with(".xplane.pb"));
        let mut skipped = skipped;
        if v.is_empty() {
            v = xplanes.collect();
        } else {
            skipped.extend(xplanes);
        }
        v.sort();
        skipped.sort();
        Ok((v, skipped))
    };
    let (files, skipped) = list(path)?;
    if !files.is_empty() {
        return Ok((files, skipped));
    }
    let subdirs = |dir: &Path| entries(dir, true);
    // Where the runs are: `LOGDIR/plugins/profile/`, or that of a subfolder (Keras'
    // TensorBoard callback profiles into `LOGDIR/train/plugins/profile/`), else the folder
    // itself holds the runs.
    let profile = |dir: &Path| dir.join("plugins").join("profile");
    let mut bases: Vec<PathBuf> = std::iter::once(path.to_owned())
        .chain(subdirs(path)?)
        .map(|d| profile(&d))
        .filter(|p| p.is_dir())
        .collect();
    if bases.is_empty() {
        bases.push(path.to_owned());
    }
    let mut runs = Vec::new();
    for base in &bases {
        runs.extend(subdirs(base)?);
    }
    // The latest run: TensorFlow names a run by its start time (`2026_11_24_07_52_12`).
    runs.sort_by(|a, b| a.file_name().cmp(&b.file_name()).then_with(|| a.cmp(b)));
    if let Some(run) = runs.last() {
        let (files, skipped) = list(run)?;
        if !files.is_empty() {
            return Ok((files, skipped));
        }
    }
    Err(Error::EmptyFolder {
        path: path.to_owned(),
    })
}

/// Whether a file in a trace folder is one of TensorFlow's files that hold no trace.
fn not_a_trace(p: &Path) -> bool {
    let head = read_head(p);
    matches!(
        tf::classify(p, &head),
        Some(tf::TfFile::MemoryProfile | tf::TfFile::OverviewPage | tf::TfFile::ToolData(_))
    )
}

/// The first [`tf::CLASSIFY_HEAD`] bytes of a file (fewer, or none, when it is shorter or
/// cannot be read: the reader then says why).
fn read_head(p: &Path) -> Vec<u8> {
    use std::io::Read as _;
    let mut head = Vec::new();
    if let Ok(f) = fs_err::File::open(p) {
        let _ = f.take(tf::CLASSIFY_HEAD as u64).read_to_end(&mut head);
    }
    head
}

/// TF Profiler's verdict from an overview page, as a report without ranks; the refusal
/// when the page holds none.
fn overview_report(path: &Path, page: &Path) -> Result<Report> {
    let bytes = fs_err::read(page).map_err(|cause| Error::Io {
        path: page.to_owned(),
        cause,
    })?;
    let Some(v) = tf::overview_verdict(&bytes, page) else {
        return Err(
            tf::refusal(page, tf::TfFile::OverviewPage).unwrap_or(Error::EmptyFolder {
                path: path.to_owned(),
            }),
        );
    };
    Ok(Report {
        schema_version: Report::VERSION,
        kind: ProfilerKind::Profiler,
        format: TraceFormat::Tensorflow,
        path: path.display().to_string(),
        ranks: Vec::new(),
        kernel_types: Vec::new(),
        straggler: None,
        verdict: v
            .level
            .map(|_| Bottleneck::InputBound)
            .or_else(|| v.not_input_bound().then_some(Bottleneck::ComputeBound)),
        verdict_rank: None,
        pace_device: None,
        warnings: vec![format!(
            "`{}` is TF Profiler's overview page, not a trace: its own verdict is given; for \
             gpufeed's figures, give the `*.xplane.pb` it was made from",
            page.display()
        )],
        tf_profiler: Some(v),
        tf_profiler_agreement: None,
    })
}

/// TF Profiler's verdict in an overview page under `dir` (up to 4 folders down), if any.
pub(crate) fn overview_beside(dir: &Path) -> Option<tf::TfProfilerVerdict> {
    let page = find_overview(dir, 4)?;
    tf::overview_verdict(&fs_err::read(&page).ok()?, &page)
}

/// Whether gpufeed's verdict on the trace agrees with TF Profiler's, and why not.
/// TF Profiler's input time is the host's time in the input pipeline per step; gpufeed's
/// data wait is the part of it the GPU spends idle. The two part where the device runs
/// while the host waits for input (a prefetch keeps the GPU fed), or where the steps
/// differ (TF Profiler's sampled steps, gpufeed's marked ones without warm-up).
#[must_use]
pub fn tf_agreement(r: &Report, v: &tf::TfProfilerVerdict) -> String {
    let ours = r.verdict.map_or("no verdict", Bottleneck::as_str);
    let input = r
        .verdict_rank
        .and_then(|k| r.ranks.iter().find(|x| x.rank == k))
        .or(r.ranks.first())
        .and_then(|x| x.shares.as_ref())
        .map(|s| 100.0 * s.input());
    let tf_input = v
        .input_pct
        .map_or_else(|| "its input time".to_owned(), |p| format!("{p:.1} %"));
    let measured = input.map_or_else(
        || "no step to measure it in".to_owned(),
        |p| format!("{p:.1} % of the step waiting for input with the GPU idle"),
    );
    let ours_input = r.verdict == Some(Bottleneck::InputBound);
    match (v.level.is_some(), ours_input, v.not_input_bound()) {
        (true, true, _) => {
            format!("agrees: input-bound (TF Profiler {tf_input}; gpufeed {measured})")
        }
        (true, false, _) => format!(
            "differs: TF Profiler says input-bound ({tf_input}), gpufeed says {ours}, measuring \
             {measured}: TF Profiler counts the host's time in the input pipeline, also while \
             the GPU still runs the previous step's work"
        ),
        (false, true, _) => format!(
            "differs: TF Profiler says not input-bound ({tf_input}), gpufeed says input-bound, \
             measuring {measured} over the marked steps (warm-up left out), where TF \
             Profiler samples its own steps"
        ),
        (false, false, true) => {
            format!("agrees that it is not input-bound (TF Profiler {tf_input}; gpufeed {ours})")
        }
        (false, false, false) => format!("TF Profiler gives no input verdict; gpufeed says {ours}"),
    }
}

/// The latest `*.overview_page.pb` under `dir`, up to 4 folders down
/// (`LOGDIR/train/plugins/profile/RUN/`).
fn find_overview(dir: &Path, depth: usize) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    let mut subdirs = Vec::new();
    for e in fs_err::read_dir(dir)
        .ok()?
        .filter_map(std::result::Result::ok)
    {
        let p = e.path();
        if p.is_dir() {
            subdirs.push(p);
        } else if p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(".overview_page.pb"))
        {
            found.push(p);
        }
    }
    if depth > 0 {
        found.extend(subdirs.iter().filter_map(|d| find_overview(d, depth - 1)));
    }
    found.into_iter().max()
}

/// Reads and analyses a file or folder.
///
/// A TensorFlow file that holds no trace is refused in one line saying what it is and
/// what gpufeed reads (TensorFlow's memory profile, TF Profiler's analysis files), except
/// TF Profiler's overview page, whose own input-bound verdict is given
/// ([`Report::tf_profiler`]), as it is for a folder that holds only TF Profiler's files.
/// A folder's files that are no trace are named in one warning.
pub fn analyze_path(path: &Path, opts: Options) -> Result<Report> {
    job::analyze_job(path, opts, &job::Plan::default())
}

/// What a path holds: its trace files (and the files left out as no trace), or, for TF
/// Profiler's overview page alone, the report already.
pub(crate) enum Found {
    /// Trace files, and the folder's files that are no trace.
    Files(Vec<PathBuf>, Vec<PathBuf>),
    /// TF Profiler's own verdict: nothing to read.
    Done(Box<Report>),
}

/// The trace files of `path` ([`trace_files_skipping`]), after refusing a TensorFlow file
/// that holds no trace, and answering for an overview page alone.
/// `classified` is what the caller's detection found in the file's head, if it looked.
pub(crate) fn folder_files(path: &Path, classified: Option<tf::Classified>) -> Result<Found> {
    if !path.is_dir() {
        let class = match classified {
            Some(tf::Classified(class)) => class,
            None => tf::classify(path, &read_head(path)),
        };
        match class {
            Some(tf::TfFile::OverviewPage) => {
                return overview_report(path, path).map(|r| Found::Done(Box::new(r)));
            }
            Some(kind) => {
                if let Some(e) = tf::refusal(path, kind) {
                    return Err(e);
                }
            }
            None => {}
        }
    }
    match trace_files_skipping(path) {
        Ok((files, skipped)) => Ok(Found::Files(files, skipped)),
        Err(Error::EmptyFolder { path: p }) => match find_overview(&p, 4) {
            Some(page) => overview_report(path, &page).map(|r| Found::Done(Box::new(r))),
            None => Err(Error::EmptyFolder { path: p }),
        },
        Err(e) => Err(e),
    }
}

/// [`finish`], then what a folder adds: TF Profiler's verdict beside the trace, and the
/// files left out, named in one warning.
pub(crate) fn finish_folder(
    path: &Path,
    summaries: Vec<FileSummary>,
    opts: Options,
    files: &[PathBuf],
    skipped: &[PathBuf],
    overview: Option<tf::TfProfilerVerdict>,
) -> Report {
    let mut report = finish(path, summaries, opts);
    if let Some(v) = overview {
        report.tf_profiler_agreement = Some(tf_agreement(&report, &v));
        report.tf_profiler = Some(v);
    }
    if !skipped.is_empty() {
        let names: Vec<String> = skipped
            .iter()
            .map(|p| {
                p.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            })
            .collect();
        report.warnings.push(format!(
            "read {}; left out, as no trace or another form of the same profile: {}",
            files
                .iter()
                .map(|p| format!("`{}`", p.display()))
                .collect::<Vec<_>>()
                .join(", "),
            names.join(", ")
        ));
    }
    report
}

/// How much of a run a trace holds, to choose among files of one rank: its GPU events
/// (kernels, copies, sets), its steps (`ProfilerStep#N` events or TensorFlow step marks),
/// all its events.
pub(crate) fn fullness(t: &RawTrace) -> Fullness {
    let work: FxHashSet<u32> = hta::CUDA_WORK_CATS
        .iter()
        .filter_map(|c| t.symbols.get(c))
        .collect();
    let step_names = hta::profiler_step_ids(t);
    let gpu = t.events.iter().filter(|e| work.contains(&e.cat)).count();
    let steps = t
        .events
        .iter()
        .filter(|e| step_names.contains(&e.name))
        .count()
        .max(t.step_marks.len());
    Fullness {
        gpu_events: gpu,
        steps,
        events: t.events.len(),
    }
}

/// Analyses traces already read, one per rank (or several files of a rank, of which the
/// fullest is kept): each is summarised as [`crate::job::summarize`] does for a file of a
/// folder, then the job is built from the summaries ([`finish`]).
#[must_use]
pub fn analyze(path: &Path, traces: Vec<RawTrace>, opts: Options) -> Report {
    let alone = traces.len() == 1;
    let summaries = traces
        .into_iter()
        .enumerate()
        .map(|(i, t)| job::summarize(t, i, opts, alone))
        .collect();
    finish(path, summaries, opts)
}

/// The format of a job: the one forced, else TensorFlow's where any file is TensorFlow's.
pub(crate) fn job_format(opts: Options, summaries: &[FileSummary]) -> TraceFormat {
    opts.format.filter(|f| f.is_profiler()).unwrap_or_else(|| {
        if summaries
            .iter()
            .any(|s| s.format == TraceFormat::Tensorflow)
        {
            TraceFormat::Tensorflow
        } else {
            TraceFormat::Pytorch
        }
    })
}

/// The job's report from the summaries of its files (in the folder's order): one rank per
/// rank number, the fullest file of each, HTA's window where the job has two ProfilerStep
/// names, then the straggler and the run's verdict across ranks.
#[must_use]
pub fn finish(path: &Path, mut summaries: Vec<FileSummary>, opts: Options) -> Report {
    summaries.sort_by_key(|s| s.index);
    let format = job_format(opts, &summaries);
    let mut warnings: Vec<String> = summaries
        .iter()
        .filter_map(|s| s.truncated.clone())
        .collect();
    let mixed: Vec<&str> = summaries
        .iter()
        .filter(|s| s.format != format)
        .map(|s| s.file.as_str())
        .collect();
    if !mixed.is_empty() {
        warnings.push(format!(
            "{} file(s) are not {} as the rest are ({}): each was analysed as what it is; \
             give one folder per profiler",
            mixed.len(),
            format.describe(),
            mixed.join(", ")
        ));
    }
    // One trace per rank. HTA keeps the last file of a rank; but a folder with several is
    // most often `tensorboard_trace_handler`'s cycles of one run (`schedule(repeat=0)`
    // writes a file per cycle, and a last one with what ran after the final full cycle),
    // so the fullest is kept: most GPU events, then most steps, then most events; a tie
    // keeps the later file, as HTA.
    let mut groups: Vec<(u32, Vec<FileSummary>)> = Vec::new();
    for s in summaries {
        match groups.iter_mut().find(|(r, _)| *r == s.rank) {
            Some((_, g)) => g.push(s),
            None => groups.push((s.rank, vec![s])),
        }
    }
    let mut by_rank: Vec<FileSummary> = Vec::with_capacity(groups.len());
    for (rank, mut group) in groups {
        let full: Vec<Fullness> = group.iter().map(|s| s.fullness).collect();
        // The last of the fullest: `max_by_key` keeps the last of equal keys.
        let Some(best) = (0..group.len()).max_by_key(|&i| full[i].key()) else {
            continue;
        };
        if group.len() > 1 {
            let others = full
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != best)
                .map(|(_, f)| f);
            warnings.push(format!(
                "{} files are rank {rank} (profiling cycles of one run?): analysed only `{}`, \
                 the fullest ({} GPU events and {} steps; the others at most {} and {}); pass \
                 one file, or give one folder per run, to choose",
                group.len(),
                group[best].file,
                full[best].gpu_events,
                full[best].steps,
                others.clone().map(|f| f.gpu_events).max().unwrap_or(0),
                others.map(|f| f.steps).max().unwrap_or(0),
            ));
        }
        by_rank.push(group.swap_remove(best));
    }
    by_rank.sort_by_key(|s| s.rank);
    let names: FxHashSet<&str> = by_rank
        .iter()
        .flat_map(|s| s.step_names.iter().map(String::as_str))
        .collect();
    let window = format == TraceFormat::Pytorch && names.len() >= 2;
    let mut ranks: Vec<RankReport> = by_rank
        .into_iter()
        .map(|s| match s.other_window {
            Some(other) if other.window.applied == window => *other,
            _ => s.report,
        })
        .collect();
    let per_rank_types: Vec<Vec<KernelTypeTime>> =
        ranks.iter().map(|r| r.kernel_types.clone()).collect();
    let straggler = straggler(&ranks);
    if let Some(s) = &straggler {
        mark_waiting(&mut ranks, s.rank);
    }
    let verdict_rank = straggler.as_ref().map(|s| s.rank).or_else(|| {
        ranks
            .iter()
            .filter(|r| r.verdict.is_some())
            .max_by(|a, b| {
                let m = |r: &RankReport| r.step_time.as_ref().map_or(0.0, |s| s.mean_ms);
                m(a).total_cmp(&m(b))
            })
            .map(|r| r.rank)
    });
    let verdict = verdict_rank.and_then(|v| ranks.iter().find(|r| r.rank == v)?.verdict);
    if let Some(pace) = verdict_rank
        && ranks.len() > 1
    {
        let median = |r: &RankReport| r.step_time.as_ref().map_or(0.0, |s| s.median_ms);
        let pace_ms = ranks.iter().find(|r| r.rank == pace).map_or(0.0, median);
        for r in &mut ranks {
            let own = median(r);
            for c in &mut r.causes {
                if let Some(f) = c.if_fixed.as_mut() {
                    estimate::for_run(f, r.rank, own, pace, pace_ms);
                }
            }
            estimate::sort_causes(&mut r.causes);
        }
    }
    let pace_device = verdict_rank
        .and_then(|v| ranks.iter().find(|r| r.rank == v))
        .or_else(|| ranks.iter().find(|r| !r.devices.is_empty()))
        .and_then(pace_of);
    Report {
        schema_version: Report::VERSION,
        kind: ProfilerKind::Profiler,
        format,
        path: path.display().to_string(),
        kernel_types: hta::kernel_type_totals(&per_rank_types),
        ranks,
        straggler,
        verdict,
        verdict_rank,
        pace_device,
        tf_profiler: None,
        tf_profiler_agreement: None,
        warnings,
    }
}

/// What a rank's report counts over every event of its trace: counted before the events
/// are let go (see [`crate::job::summarize`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Counts {
    /// Host calls that launch a kernel.
    pub(crate) launch_calls: usize,
    /// `ProfilerStep` events on the host (not their GPU-track copies).
    pub(crate) profiler_steps: usize,
}

impl Counts {
    pub(crate) fn of(t: &RawTrace) -> Self {
        let gpu_cat = t.symbols.get(steps::GPU_ANNOTATION_CAT);
        let ids = hta::profiler_step_ids(t);
        Self {
            launch_calls: launch_calls(t),
            profiler_steps: t
                .events
                .iter()
                .filter(|e| ids.contains(&e.name) && Some(e.cat) != gpu_cat)
                .count(),
        }
    }
}

/// One rank's report from its rows (HTA's window or not): its figures, and where it holds
/// several GPUs, one report per GPU with the rank's steps and verdict taken from the one
/// that sets the pace.
pub(crate) fn rank_of_rows(
    rank: u32,
    t: &RawTrace,
    rows: &hta::Rows,
    format: TraceFormat,
    counts: Counts,
) -> RankReport {
    let all = figures_of_rows(t, rows, format, None);
    let devices = device_pids(rows);
    let per_device = if devices.len() > 1 {
        devices
            .iter()
            .map(|&pid| {
                let of = |v: &[hta::GpuRow]| -> Vec<hta::GpuRow> {
                    v.iter().filter(|g| g.pid == pid).copied().collect()
                };
                let dev_rows = hta::Rows {
                    gpu: of(&rows.gpu),
                    gpu_outside: of(&rows.gpu_outside),
                    cpu: rows.cpu.clone(),
                    gpu_in_file: 0,
                    windowed: rows.windowed,
                    rounded: rows.rounded,
                };
                (pid, figures_of_rows(t, &dev_rows, format, Some(pid)))
            })
            .collect()
    } else {
        Vec::new()
    };
    rank_of_figures(rank, t, format, counts, all, per_device)
}

/// One rank's report from its figures, and those of each of its GPUs where it holds
/// several (`per_device`, by first appearance): the rank's steps and verdict are then
/// those of the GPU that sets the pace.
pub(crate) fn rank_of_figures(
    rank: u32,
    t: &RawTrace,
    format: TraceFormat,
    counts: Counts,
    all: Figures,
    per_device: Vec<(u32, Figures)>,
) -> RankReport {
    let mut r = rank_report(rank, t, format, None, counts, all);
    if !per_device.is_empty() {
        for (pid, f) in per_device {
            r.devices
                .push(rank_report(rank, t, format, Some(pid), counts, f));
        }
        take_pace(&mut r);
    }
    r
}

/// What to do when a rank has GPU events but no step markers, in the words of the
/// profiler that wrote it.
#[must_use]
pub fn no_steps_hint(format: TraceFormat) -> &'static str {
    match format {
        TraceFormat::Tensorflow => {
            "no step markers: wrap each step in `tf.profiler.experimental.Trace(\"train\", \
             step_num=step, _r=1)` (Keras' `fit` marks its steps; JAX: \
             `jax.profiler.StepTraceAnnotation(\"train\", step_num=step)`)"
        }
        _ => {
            "no step markers: profile with a schedule and call `prof.step()` each iteration \
             (or iterate a DataLoader, whose `__next__` calls then mark the iterations)"
        }
    }
}

/// The GPU pids of a rank's rows, by first appearance.
fn device_pids(rows: &hta::Rows) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for g in rows.gpu.iter().chain(&rows.gpu_outside) {
        if g.stream != -1 && !out.contains(&g.pid) {
            out.push(g.pid);
        }
    }
    out
}

/// A device's busy time: in its steps, else over the trace (HTA's span less idle).
fn busy_of(d: &RankReport) -> f64 {
    if d.steps.is_empty() {
        d.temporal.map_or(0.0, |t| t.span_us - t.idle_us)
    } else {
        d.steps.iter().map(|s| s.gpu_busy_us).sum()
    }
}

/// The device that sets a rank's pace: the most GPU busy time (the others wait for it at
/// each step's end).
fn pace_index(r: &RankReport) -> Option<usize> {
    (0..r.devices.len()).max_by(|&a, &b| busy_of(&r.devices[a]).total_cmp(&busy_of(&r.devices[b])))
}

fn pace_of(r: &RankReport) -> Option<PaceDevice> {
    let d = &r.devices[pace_index(r)?];
    Some(PaceDevice {
        rank: r.rank,
        device_id: d.device_id,
        device: d.device.clone(),
        busy_us: busy_of(d),
        of: r.devices.len(),
    })
}

/// A rank of several GPUs takes its steps, shares and verdict from the device that sets
/// its pace; its HTA figures stay HTA's, over all its devices.
fn take_pace(r: &mut RankReport) {
    let Some(i) = pace_index(r) else { return };
    let d = r.devices[i].clone();
    r.steps = d.steps;
    r.step_time = d.step_time;
    r.shares = d.shares;
    r.launch = d.launch;
    r.verdict = d.verdict;
    r.level = d.level;
    r.evidence = d.evidence;
    r.fix = d.fix;
    r.causes = d.causes;
    r.cycles = d.cycles;
    r.markers = d.markers;
    r.no_verdict = d.no_verdict;
    r.warmup_steps = d.warmup_steps;
}

/// The device name and index of GPU pid `pid`: TensorFlow's plane name
/// (`/device:GPU:3`), else Kineto's device number (`GPU 1`).
fn device_name(t: &RawTrace, pid: u32) -> (Option<String>, Option<u32>) {
    let name = t
        .process_names
        .iter()
        .find(|p| p.pid == pid)
        .map(|p| p.name.clone())
        .or_else(|| t.pids.get(pid as usize).map(|p| format!("GPU {p}")));
    let id = name.as_deref().and_then(|n| {
        let digits: String = n
            .chars()
            .rev()
            .take_while(char::is_ascii_digit)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        digits.parse().ok()
    });
    (name, id)
}

/// Host kernel-launch calls in the file.
fn launch_calls(t: &RawTrace) -> usize {
    let ids = launch_call_ids(t);
    if ids.is_empty() {
        return 0;
    }
    t.events.iter().filter(|e| ids.contains(&e.name)).count()
}

/// The symbol ids of host kernel-launch calls (CUDA's and HIP's).
pub(crate) fn launch_call_ids(t: &RawTrace) -> Vec<u32> {
    let hip = [
        "hipLaunchKernel",
        "hipExtModuleLaunchKernel",
        "hipModuleLaunchKernel",
    ];
    steps::CUDA_LAUNCHES
        .iter()
        .chain(&hip)
        .filter_map(|n| t.symbols.get(n))
        .collect()
}

impl Report {
    /// Host kernel-launch calls over all ranks.
    #[must_use]
    pub fn launch_calls(&self) -> usize {
        self.ranks.iter().map(|r| r.window.launch_calls).sum()
    }
}

/// What a rank's (or one GPU's) report is computed from: HTA's figures, the steps with
/// their figures, and what the window counted. Built from rows in memory
/// ([`figures_of_rows`]) or from a trace streamed from disk ([`crate::stream`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Figures {
    pub(crate) temporal: Option<Temporal>,
    pub(crate) idle_breakdown: Vec<hta::StreamIdle>,
    pub(crate) kernel_types: Vec<hta::KernelTypeTime>,
    /// The markers that gave the steps, and how many steps they gave.
    pub(crate) markers: Option<Markers>,
    pub(crate) step_rows: usize,
    pub(crate) steps: Vec<StepFigures>,
    pub(crate) launch: steps::LaunchStats,
    pub(crate) windowed: bool,
    pub(crate) gpu_events_in_file: usize,
    pub(crate) gpu_events_analysed: usize,
}

/// [`Figures`] from rows in memory.
fn figures_of_rows(
    t: &RawTrace,
    rows: &hta::Rows,
    format: TraceFormat,
    device_pid: Option<u32>,
) -> Figures {
    let (step_rows, markers) = match format {
        TraceFormat::Tensorflow => tf::steps(t, device_pid),
        _ => steps::profiler_steps(rows, t),
    };
    let origin = rows
        .gpu
        .iter()
        .map(|g| g.ts)
        .chain(rows.cpu.iter().map(|c| c.ts))
        .min()
        .unwrap_or(0);
    let (figs, launch) = steps::step_figures(rows, t, &step_rows, origin);
    Figures {
        temporal: hta::temporal(rows),
        idle_breakdown: hta::idle_breakdown(rows, t),
        kernel_types: hta::kernel_types(rows),
        markers,
        step_rows: step_rows.len(),
        steps: figs,
        launch,
        windowed: rows.windowed,
        gpu_events_in_file: if device_pid.is_some() {
            rows.gpu.len() + rows.gpu_outside.len()
        } else {
            rows.gpu_in_file
        },
        gpu_events_analysed: rows.gpu.len(),
    }
}

/// One rank's (or, with `device`, one GPU's) report from its figures: steps judged, verdict.
fn rank_report(
    rank: u32,
    t: &RawTrace,
    format: TraceFormat,
    device_pid: Option<u32>,
    counts: Counts,
    f: Figures,
) -> RankReport {
    let Figures {
        temporal,
        idle_breakdown,
        kernel_types,
        markers,
        step_rows,
        steps: figs,
        launch,
        windowed,
        gpu_events_in_file,
        gpu_events_analysed,
    } = f;
    let steps_in_file = match (format, markers) {
        (TraceFormat::Pytorch, Some(Markers::ProfilerStep | Markers::ProfilerStepGpu)) => {
            counts.profiler_steps
        }
        _ => step_rows,
    };
    // Warm-up steps stay in the table but out of the figures judged.
    let warmup =
        gpufeed_stats::outliers::warmup_len(&figs.iter().map(|f| f.dur_us).collect::<Vec<_>>());
    let judged_figs = &figs[warmup..];
    let series = analyze_steps(
        &judged_figs
            .iter()
            .map(|f| f.dur_us / 1e3)
            .collect::<Vec<_>>(),
    );
    let shares = Shares::of(judged_figs);
    let n = judged_figs.len().max(1) as f64;
    // Every rank without a verdict says why, in JSON too: no GPU events, no step markers
    // (with how to add them), or steps that cannot be judged.
    let no_verdict = match (&temporal, figs.is_empty()) {
        (None, _) => Some("no GPU events".to_owned()),
        (Some(_), true) => Some(no_steps_hint(format).to_owned()),
        (Some(t), false) => unjudgeable(judged_figs, t, device_pid.is_some()),
    };
    let judged = match (temporal, shares) {
        (Some(_), Some(s)) if no_verdict.is_none() => Some(verdict::judge(
            s,
            series.as_ref(),
            launch,
            judged_figs.iter().map(|f| f.syncs).sum::<usize>() as f64 / n,
            judged_figs.iter().map(|f| f.kernels).sum::<usize>() as f64 / n,
        )),
        _ => None,
    };
    let causes = judged.as_ref().map_or_else(Vec::new, |v| {
        let mut causes = v.causes.clone();
        if let Some(a) = &series {
            estimate::fill(&mut causes, judged_figs, a.summary.median);
        }
        causes
    });
    let mut evidence = judged
        .as_ref()
        .map(|v| v.evidence.clone())
        .unwrap_or_default();
    if warmup > 0 && judged.is_some() {
        evidence.push(warmup_line(&figs, warmup));
    }
    let (device, device_id) = match device_pid {
        Some(pid) => device_name(t, pid),
        None => (t.device.clone(), None),
    };
    RankReport {
        rank,
        file: t.path.display().to_string(),
        device,
        device_id,
        devices: Vec::new(),
        markers: if figs.is_empty() { None } else { markers },
        window: Window {
            applied: windowed,
            gpu_events_in_file,
            gpu_events_analysed,
            steps_in_file,
            launch_calls: counts.launch_calls,
        },
        temporal,
        idle_breakdown,
        kernel_types,
        steps: figs,
        step_time: series.as_ref().map(StepSeries::of),
        shares,
        launch,
        verdict: judged.as_ref().map(|v| v.verdict),
        level: judged.as_ref().and_then(|v| v.level),
        evidence,
        no_verdict,
        warmup_steps: warmup,
        waits_for: None,
        causes,
        cycles: judged.as_ref().and_then(|v| v.cycles),
        fix: judged.map(|v| v.fix),
        truncated_at: t.truncated_at,
    }
}

/// Why the steps, though found, cannot be judged: a lone step shorter than
/// [`ONE_STEP_SPAN_MIN`] of the GPU's profiled span, or (one GPU of several) no compute
/// kernel in the steps.
fn unjudgeable(figs: &[StepFigures], t: &Temporal, device: bool) -> Option<String> {
    if let [one] = figs
        && t.span_us > 0.0
        && one.dur_us < ONE_STEP_SPAN_MIN * t.span_us
    {
        return Some(format!(
            "one step, {:.1} ms, {:.1} % of the {:.1} ms the GPU was profiled: the rest lies \
             outside any step (start-up, evaluation, waiting for other workers), and one step \
             cannot show what recurs; profile several steps of the training loop",
            one.dur_us / 1e3,
            100.0 * one.dur_us / t.span_us,
            t.span_us / 1e3
        ));
    }
    (device && !figs.is_empty() && figs.iter().all(|f| f.compute_us <= 0.0)).then(|| {
        "this GPU ran no compute kernel in its steps: not one the training runs on".to_owned()
    })
}

/// The evidence line of the warm-up steps left out: "step #1 (4489.5 ms) left out as
/// warm-up: 29.0x the median of the 4 later steps (154.6 ms); ...".
fn warmup_line(figs: &[StepFigures], warmup: usize) -> String {
    let rest: Vec<f64> = figs[warmup..].iter().map(|f| f.dur_us).collect();
    let median = gpufeed_stats::summary::median(&rest).max(1.0);
    let which: Vec<String> = figs[..warmup]
        .iter()
        .map(|f| format!("#{} ({:.1} ms)", f.step, f.dur_us / 1e3))
        .collect();
    let least = figs[..warmup]
        .iter()
        .map(|f| f.dur_us)
        .fold(f64::MAX, f64::min);
    format!(
        "step{} {} left out as warm-up: {}{:.1}x the median of the {} later steps ({:.1} ms); \
         cuDNN autotuning, lazy initialisation or compilation, not the run's steady state",
        if warmup == 1 { "" } else { "s" },
        which.join(", "),
        if warmup == 1 { "" } else { "each at least " },
        least / median,
        rest.len(),
        median / 1e3
    )
}

/// Marks the ranks that wait for the straggler inside their collectives: those whose
/// exposed collectives' share of the step (no compute beside them) exceeds the straggler's
/// by at least
/// [`HOST_STALL_MODERATE`]. Their evidence and fix say so: the time in their collectives is
/// the straggler's, so overlapping or shrinking the collectives would not give it back.
fn mark_waiting(ranks: &mut [RankReport], straggler: u32) {
    let exposed = |r: &RankReport| r.shares.as_ref().map(|s| s.collective_exposed);
    let Some(theirs) = ranks.iter().find(|r| r.rank == straggler).and_then(exposed) else {
        return;
    };
    for r in ranks.iter_mut().filter(|r| r.rank != straggler) {
        let Some(own) = exposed(r) else { continue };
        if own - theirs < HOST_STALL_MODERATE {
            continue;
        }
        r.waits_for = Some(straggler);
        r.evidence.push(format!(
            "waits for rank {straggler} (the straggler) inside its collectives: exposed \
             collectives {:.1} % of the step against rank {straggler}'s {:.1} %",
            100.0 * own,
            100.0 * theirs
        ));
        if r.verdict == Some(Bottleneck::CommunicationBound) {
            r.fix = Some(format!(
                "rank {straggler} sets the pace: its collectives hardly wait, this rank's wait \
                 for it, so fix rank {straggler}'s own cause first (its verdict is the run's); \
                 overlapping or shrinking the collectives here gives little back until then"
            ));
        }
    }
}

/// The straggler: the rank with the largest modified Z-score above
/// [`OUTLIER_MODIFIED_Z`] on its mean step time, else on its idle share (slow side only),
/// else, since collectives make every rank's step as long as the slowest one's, on its
/// compute share of the step (high side) or its collectives' share (low side: the others
/// wait inside theirs for it). Each also needs a distance from the median of at least
/// [`HOST_STALL_MODERATE`] (of the median step; in percentage points for the shares), the
/// smallest share of a step gpufeed judges, so that ranks alike to a few tenths of a
/// percent (steps made equal by collectives, jitter) do not single one out. Where more than
/// half the ranks are alike to the digit (MAD 0, as a generated or very steady job gives),
/// the gap alone decides: the fallback score cannot reach the threshold with four ranks or
/// fewer (see [`gpufeed_stats::outliers`]). Needs three ranks: with two, each is as far from
/// the median as the other.
fn straggler(ranks: &[RankReport]) -> Option<Straggler> {
    let judged: Vec<&RankReport> = ranks
        .iter()
        .filter(|r| r.step_time.is_some() && r.temporal.is_some())
        .collect();
    if judged.len() < 3 {
        return None;
    }
    // `sign` -1 looks for the low side; `min_gap` is the least distance from the median.
    let pick = |by: StragglerBy, values: Vec<f64>, sign: f64, min_gap: f64| {
        let signed: Vec<f64> = values.iter().map(|v| sign * v).collect();
        let z = modified_z_scores(&signed);
        let med = gpufeed_stats::summary::median(&values);
        let (i, &zi) = z.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1))?;
        // MAD 0: more than half the ranks are alike to the digit, and the fallback score
        // cannot reach the threshold with four ranks or fewer; the gap alone decides.
        let outlier = zi > OUTLIER_MODIFIED_Z || median_absolute_deviation(&values) == 0.0;
        (outlier && sign * (values[i] - med) >= min_gap).then(|| Straggler {
            rank: judged[i].rank,
            by,
            value: values[i],
            median: med,
            z: zi,
        })
    };
    let share = |f: fn(&Shares) -> f64| -> Vec<f64> {
        judged
            .iter()
            .map(|r| r.shares.as_ref().map_or(0.0, |s| 100.0 * f(s)))
            .collect()
    };
    let min_share = 100.0 * HOST_STALL_MODERATE;
    let step_ms: Vec<f64> = judged
        .iter()
        .map(|r| r.step_time.as_ref().map_or(0.0, |s| s.mean_ms))
        .collect();
    let min_step = HOST_STALL_MODERATE * gpufeed_stats::summary::median(&step_ms);
    pick(StragglerBy::StepTime, step_ms, 1.0, min_step)
        .or_else(|| {
            pick(
                StragglerBy::IdleShare,
                judged
                    .iter()
                    .map(|r| r.temporal.map_or(0.0, |t| t.idle_pct))
                    .collect(),
                1.0,
                min_share,
            )
        })
        .or_else(|| {
            pick(
                StragglerBy::ComputeShare,
                share(|s| s.compute),
                1.0,
                min_share,
            )
        })
        .or_else(|| {
            pick(
                StragglerBy::CollectiveWait,
                share(|s| s.collective),
                -1.0,
                min_share,
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read;
    use crate::synth::{Case, generate};

    /// The document as `gpufeed trace --format json` prints it reads back into the same
    /// value, and its schema pins its version.
    #[test]
    fn the_profiler_document_round_trips_and_has_its_schema() {
        let case = Case::straggler();
        let traces = (0..case.ranks)
            .map(|rank| {
                let name = format!("rank{rank}.json");
                read::read_from(&generate(&case, rank)[..], Path::new(&name))
            })
            .collect::<Result<Vec<_>>>()
            .unwrap_or_default();
        let report = analyze(Path::new("run"), traces, Options::default());
        assert!(report.straggler.is_some() && report.ranks.len() == case.ranks);
        let json = serde_json::to_string(&report).unwrap_or_default();
        let back: Report = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
        // serde_json reads a float back to within one unit in the last place, so the two
        // are compared as the JSON values that reader makes of each.
        let value: serde_json::Value = serde_json::from_str(&json).unwrap_or_default();
        assert_eq!(serde_json::to_value(&back).unwrap_or_default(), value);
        assert_eq!(back.ranks.len(), report.ranks.len());
        assert_eq!(value["schema_version"], Report::VERSION);
        assert_eq!(value["kind"], "profiler");
        assert_eq!(value["straggler"]["by"], "step_time");
        let schema = gpufeed_contract::schema_of::<Report>();
        assert_eq!(
            schema["properties"]["schema_version"]["const"],
            Report::VERSION
        );
        // Every top-level field is in the schema.
        for key in value.as_object().map(|o| o.keys()).into_iter().flatten() {
            assert!(
                schema["properties"].get(key).is_some(),
                "`{key}` is not in the schema"
            );
        }
    }
}
