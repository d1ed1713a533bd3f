//! A folder (or file) of per-rank traces → the `profiler` JSON document: per rank HTA's
//! figures, the steps, the verdict; across ranks the straggler.

use std::path::{Path, PathBuf};

use gpufeed_contract::Document;
use gpufeed_stats::outliers::modified_z_scores;
use gpufeed_stats::thresholds::OUTLIER_MODIFIED_Z;
use gpufeed_stats::{StepAnalysis, StepVerdict, analyze_steps};
use rustc_hash::FxHashSet;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::hta::{self, KernelTypeTime, StreamIdle, Temporal};
use crate::read::{self, RawTrace};
use crate::steps::{self, LaunchStats, StepFigures};
use crate::tf;
use crate::verdict::{self, Bottleneck, CauseShare, Level, Shares};

/// Which profiler wrote the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// PyTorch profiler (Kineto) Chrome trace.
    Pytorch,
    /// TensorFlow profiler trace viewer JSON (`*.trace.json.gz`).
    Tensorflow,
}

/// How to read and analyse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// Force a format instead of detecting it.
    pub format: Option<TraceFormat>,
    /// Skip HTA's ns rounding (as `HTA_DISABLE_NS_ROUNDING=1` does for HTA).
    pub no_rounding: bool,
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
}

/// One rank: an entry of the contract's `ranks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RankReport {
    /// The rank (`distributedInfo.rank`, else 0).
    pub rank: u32,
    /// The file.
    pub file: String,
    /// The GPU's name (`deviceProperties`).
    pub device: Option<String>,
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
    /// What to try.
    pub fix: Option<String>,
    /// Every cause at or past its moderate threshold, the largest share of the step first,
    /// each with its figure and fix (the verdict is the first high one; see
    /// [`crate::verdict`]).
    pub causes: Vec<CauseShare>,
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
    /// Warnings the caller prints once each (cut-off files, duplicate ranks).
    #[serde(skip)]
    pub warnings: Vec<String>,
}

impl Document for Report {
    const NAME: &'static str = "profiler";
    const VERSION: u32 = 1;
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
    if !path.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    // The entries of `dir` that are files (`want_dirs` false) or folders.
    let entries = |dir: &Path, want_dirs: bool| -> Result<Vec<PathBuf>> {
        Ok(fs_err::read_dir(dir)
            .map_err(|source| Error::Io {
                path: dir.to_owned(),
                source,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| if want_dirs { p.is_dir() } else { p.is_file() })
            .collect())
    };
    let list = |dir: &Path| -> Result<Vec<PathBuf>> {
        let files = entries(dir, false)?;
        let name = |p: &PathBuf| {
            p.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_owned()
        };
        let mut v: Vec<PathBuf> = files
            .iter()
            .filter(|p| {
                let n = name(p);
                n.ends_with(".json") || n.ends_with(".json.gz")
            })
            .cloned()
            .collect();
        if v.is_empty() {
            v = files
                .into_iter()
                .filter(|p| name(p).ends_with(".xplane.pb"))
                .collect();
        }
        v.sort();
        Ok(v)
    };
    let files = list(path)?;
    if !files.is_empty() {
        return Ok(files);
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
        let files = list(run)?;
        if !files.is_empty() {
            return Ok(files);
        }
    }
    Err(Error::EmptyFolder {
        path: path.to_owned(),
    })
}

/// Reads and analyses a file or folder.
pub fn analyze_path(path: &Path, opts: Options) -> Result<Report> {
    let files = trace_files(path)?;
    let mut traces = Vec::with_capacity(files.len());
    for f in &files {
        traces.push(read::read_path(f)?);
    }
    Ok(analyze(path, traces, opts))
}

/// How much of a run a trace holds, to choose among files of one rank: its GPU events
/// (kernels, copies, sets), its steps (`ProfilerStep#N` events or TensorFlow step marks),
/// all its events.
fn fullness(t: &RawTrace) -> (usize, usize, usize) {
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
    (gpu, steps, t.events.len())
}

/// Analyses traces already read, one per rank.
#[must_use]
pub fn analyze(path: &Path, mut traces: Vec<RawTrace>, opts: Options) -> Report {
    let format = opts.format.unwrap_or_else(|| {
        if traces.iter().any(tf::is_tensorflow) {
            TraceFormat::Tensorflow
        } else {
            TraceFormat::Pytorch
        }
    });
    let mut warnings = Vec::new();
    if format == TraceFormat::Tensorflow {
        for t in &mut traces {
            tf::lower(t);
        }
    }
    for t in &traces {
        if let Some(at) = t.truncated_at {
            let (of, kept) = if t.from_xplane {
                ("the file", "of the whole planes before it")
            } else {
                ("its JSON", "before it")
            };
            warnings.push(format!(
                "`{}` stops mid-write at byte {at} of {of} (was the job killed while the \
                 profiler wrote?): analysed the {} event(s) {kept}",
                t.path.display(),
                t.elements
            ));
        }
    }
    // One trace per rank. HTA keeps the last file of a rank; but a folder with several is
    // most often `tensorboard_trace_handler`'s cycles of one run (`schedule(repeat=0)`
    // writes a file per cycle, and a last one with what ran after the final full cycle),
    // so the fullest is kept: most GPU events, then most steps, then most events; a tie
    // keeps the later file, as HTA.
    let mut groups: Vec<(u32, Vec<RawTrace>)> = Vec::new();
    for t in traces {
        let rank = t.rank.unwrap_or(0);
        match groups.iter_mut().find(|(r, _)| *r == rank) {
            Some((_, g)) => g.push(t),
            None => groups.push((rank, vec![t])),
        }
    }
    let mut by_rank: Vec<(u32, RawTrace)> = Vec::with_capacity(groups.len());
    for (rank, mut group) in groups {
        let full: Vec<(usize, usize, usize)> = group.iter().map(fullness).collect();
        // The last of the fullest: `max_by_key` keeps the last of equal keys.
        let Some(best) = (0..group.len()).max_by_key(|&i| full[i]) else {
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
                group[best].path.display(),
                full[best].0,
                full[best].1,
                others.clone().map(|f| f.0).max().unwrap_or(0),
                others.map(|f| f.1).max().unwrap_or(0),
            ));
        }
        by_rank.push((rank, group.swap_remove(best)));
    }
    by_rank.sort_by_key(|(r, _)| *r);
    let refs: Vec<&RawTrace> = by_rank.iter().map(|(_, t)| t).collect();
    let window = format == TraceFormat::Pytorch && hta::profiler_step_names(&refs) >= 2;
    let round = !opts.no_rounding;
    let mut ranks = Vec::with_capacity(by_rank.len());
    let mut per_rank_types = Vec::new();
    for (rank, t) in &by_rank {
        let rows = hta::rows(t, window, round);
        let temporal = hta::temporal(&rows);
        let idle_breakdown = hta::idle_breakdown(&rows, t);
        let kernel_types = hta::kernel_types(&rows);
        per_rank_types.push(kernel_types.clone());
        let step_rows = match format {
            TraceFormat::Pytorch => steps::profiler_steps(&rows, t),
            TraceFormat::Tensorflow => tf::steps(t),
        };
        let steps_in_file = match format {
            TraceFormat::Pytorch => t
                .symbols
                .iter()
                .filter(|(_, s)| s.starts_with("ProfilerStep#"))
                .count(),
            TraceFormat::Tensorflow => step_rows.len(),
        };
        let origin = rows
            .gpu
            .iter()
            .map(|g| g.ts)
            .chain(rows.cpu.iter().map(|c| c.ts))
            .min()
            .unwrap_or(0);
        let (figs, launch) = steps::step_figures(&rows, t, &step_rows, origin);
        let series = analyze_steps(&figs.iter().map(|f| f.dur_us / 1e3).collect::<Vec<_>>());
        let shares = Shares::of(&figs);
        let n = figs.len().max(1) as f64;
        let judged = match (temporal, shares) {
            (Some(_), Some(s)) => Some(verdict::judge(
                s,
                series.as_ref(),
                launch,
                figs.iter().map(|f| f.syncs).sum::<usize>() as f64 / n,
                figs.iter().map(|f| f.kernels).sum::<usize>() as f64 / n,
            )),
            _ => None,
        };
        ranks.push(RankReport {
            rank: *rank,
            file: t.path.display().to_string(),
            device: t.device.clone(),
            window: Window {
                applied: rows.windowed,
                gpu_events_in_file: rows.gpu_in_file,
                gpu_events_analysed: rows.gpu.len(),
                steps_in_file,
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
            evidence: judged
                .as_ref()
                .map(|v| v.evidence.clone())
                .unwrap_or_default(),
            causes: judged
                .as_ref()
                .map(|v| v.causes.clone())
                .unwrap_or_default(),
            fix: judged.map(|v| v.fix),
            truncated_at: t.truncated_at,
        });
    }
    let straggler = straggler(&ranks);
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
        warnings,
    }
}

/// The straggler: the rank with the largest modified Z-score above
/// [`OUTLIER_MODIFIED_Z`] on its mean step time, else on its idle share (slow side only).
/// Needs three ranks: with two, each is as far from the median as the other.
fn straggler(ranks: &[RankReport]) -> Option<Straggler> {
    let judged: Vec<&RankReport> = ranks
        .iter()
        .filter(|r| r.step_time.is_some() && r.temporal.is_some())
        .collect();
    if judged.len() < 3 {
        return None;
    }
    let pick = |by: StragglerBy, values: Vec<f64>| -> Option<Straggler> {
        let z = modified_z_scores(&values);
        let med = gpufeed_stats::summary::median(&values);
        let (i, &zi) = z.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1))?;
        (zi > OUTLIER_MODIFIED_Z).then(|| Straggler {
            rank: judged[i].rank,
            by,
            value: values[i],
            median: med,
            z: zi,
        })
    };
    pick(
        StragglerBy::StepTime,
        judged
            .iter()
            .map(|r| r.step_time.as_ref().map_or(0.0, |s| s.mean_ms))
            .collect(),
    )
    .or_else(|| {
        pick(
            StragglerBy::IdleShare,
            judged
                .iter()
                .map(|r| r.temporal.map_or(0.0, |t| t.idle_pct))
                .collect(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
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
