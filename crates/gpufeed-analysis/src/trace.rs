//! `gpufeed trace`: read a utilisation log, a step-time log or a step recording, analyse
//! it, report.
//!
//! Collect ([`gpufeed_telemetry::trace::read_trace`]) → analyse ([`gpufeed_stats`]) → the
//! plain report structs here, which serialise to exactly the JSON of docs/contract.md →
//! [`render_text`] for people. A step recording of the Python `StepTimer` becomes the
//! [`crate::phase_steps`] document (its step times alone with `--kind steps`). Nothing here
//! prints; the binary does.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, Result, bail};
use gpufeed_stats::fmt::secs;
use gpufeed_stats::thresholds::{BUSY_UTIL_PCT, IDLE_UTIL_PCT, OUTLIER_MODIFIED_Z};
use gpufeed_stats::{StepAnalysis, StepVerdict, UtilAnalysis, UtilVerdict, analyze_steps};
use gpufeed_stats::{analyze_util, util::sampling_interval};
use gpufeed_telemetry::trace::{
    StepTrace, Trace, TraceFormat, TraceKind, UtilTrace, read_trace, read_trace_from,
};
use serde::Serialize;

use gpufeed_contract::{GpuUtil, Steps, TrainingPhase, Util};

use crate::phase_steps::{self, PhaseSteps};

/// Report of one GPU: the per-GPU object of the `util` document ([`GpuUtil`],
/// gpufeed-contract) with what the text report and the warnings need besides.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuReport {
    /// The GPU's object in the document.
    pub doc: GpuUtil,
    /// The full analysis, for the text report.
    pub analysis: UtilAnalysis,
    /// Samples of this GPU.
    pub samples: usize,
    /// Holes in the log: steps between timestamps longer than [`HOLE_FACTOR`] intervals.
    /// The analysis treats samples as evenly spaced, so the caller warns about them.
    pub holes: usize,
}

impl std::ops::Deref for GpuReport {
    type Target = GpuUtil;
    fn deref(&self) -> &GpuUtil {
        &self.doc
    }
}

/// A step between two timestamps longer than this many sampling intervals is a hole in
/// the log (the logger was paused or the machine was busy), not jitter.
pub const HOLE_FACTOR: f64 = 5.0;

/// A utilisation log's analysis. It serialises as the `util` document ([`Util`],
/// gpufeed-contract).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(into = "Util")]
pub struct UtilReport {
    /// Samples over all GPUs.
    pub samples: usize,
    /// Sampling interval, seconds (median over the GPUs).
    pub interval_s: f64,
    /// One report per GPU, by index.
    pub gpus: Vec<GpuReport>,
    /// Where the samples came from.
    pub format: TraceFormat,
    /// Values the reader skipped (`[N/A]`).
    pub skipped: usize,
}

impl UtilReport {
    /// The `util` document.
    #[must_use]
    pub fn document(&self) -> Util {
        Util::new(
            self.samples,
            self.interval_s,
            self.gpus.iter().map(|g| g.doc.clone()).collect(),
        )
    }
}

impl From<UtilReport> for Util {
    fn from(r: UtilReport) -> Self {
        r.document()
    }
}

/// The `steps` JSON document ([`Steps`], gpufeed-contract) with the analysis behind it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct StepReport {
    /// The document.
    pub doc: Steps,
    /// The full analysis, for the text report; not part of the JSON contract.
    #[serde(skip)]
    pub analysis: StepAnalysis,
}

impl std::ops::Deref for StepReport {
    type Target = Steps;
    fn deref(&self) -> &Steps {
        &self.doc
    }
}

impl StepReport {
    /// Builds the report from an analysis.
    #[must_use]
    pub fn new(a: StepAnalysis) -> Self {
        Self {
            doc: Steps::new(&a, None),
            analysis: a,
        }
    }

    /// The report of batch times judged on whole batches only
    /// ([`gpufeed_stats::analyze_batches`]); `None` for an empty series.
    #[must_use]
    pub fn of_batches(ms: &[f64], items: &[usize]) -> Option<Self> {
        let (a, partial) = gpufeed_stats::analyze_batches(ms, items)?;
        Some(Self {
            doc: Steps::new(&a, partial),
            analysis: a,
        })
    }
}

/// Any report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
// One report per command run: its size does not matter, and boxing the step report would
// only add an indirection to every match.
#[allow(clippy::large_enum_variant)]
pub enum TraceReport {
    /// GPU utilisation.
    Util(UtilReport),
    /// Step times.
    Steps(StepReport),
    /// A step recording with its phases (the Python `StepTimer`).
    PhaseSteps(Box<PhaseSteps>),
}

/// Reads and analyses a trace file: what `gpufeed trace FILE` does before printing.
/// The path `-` reads standard input (`nvidia-smi ... | gpufeed trace -`).
pub fn analyze_file(path: &Path, kind: Option<TraceKind>) -> Result<TraceReport> {
    analyze_file_with(path, kind, None).map(|(report, _)| report)
}

/// As [`analyze_file`], with the warnings the caller should print (values skipped, holes
/// in a utilisation log, the cut-off last line of a step recording), and the sampling
/// interval of a utilisation log without timestamps (`--interval`, in seconds). A log with
/// timestamps is timed by them, and a warning says that `interval` was not used.
pub fn analyze_file_with(
    path: &Path,
    kind: Option<TraceKind>,
    interval: Option<f64>,
) -> Result<(TraceReport, Vec<String>)> {
    let trace = if path == Path::new("-") {
        read_trace_from(std::io::stdin().lock(), Path::new("<stdin>"), kind)?
    } else {
        read_trace(path, kind)?
    };
    analyze_read(path, trace, kind, interval)
}

/// [`analyze_file_with`] on what [`crate::detect::detect`] found: a log is read by the
/// reader of the format detection saw in its head, without a second look; standard input
/// is sniffed as it streams in. A profiler trace is not a log: an error says so.
///
/// # Errors
/// As [`analyze_file_with`].
pub fn analyze_source(
    source: &crate::detect::TraceSource,
    interval: Option<f64>,
) -> Result<(TraceReport, Vec<String>)> {
    use crate::detect::TraceSource;
    match source {
        TraceSource::Stdin { kind } => analyze_file_with(Path::new("-"), *kind, interval),
        TraceSource::Log {
            path,
            sniffed: Some(sniffed),
            kind,
            ..
        } => {
            let trace = gpufeed_telemetry::trace::read_trace_as(path, *kind, *sniffed)?;
            analyze_read(path, trace, *kind, interval)
        }
        TraceSource::Log { path, kind, .. } => analyze_file_with(path, *kind, interval),
        TraceSource::Profiler { path, .. } => bail!(
            "`{}` is a profiler trace, not a log: `gpufeed trace` reads it",
            path.display()
        ),
    }
}

/// [`analyze_file_with`] on a trace already read (`path` names it in messages): a
/// Prometheus range query asked of its server comes this way.
pub fn analyze_read(
    path: &Path,
    trace: Trace,
    kind: Option<TraceKind>,
    interval: Option<f64>,
) -> Result<(TraceReport, Vec<String>)> {
    let mut warnings = Vec::new();
    let report = match trace {
        Trace::Util(t) => {
            if let Some(note) = &t.note {
                warnings.push(format!("`{}`: {note}", path.display()));
            }
            if let Some(columns) = &t.columns {
                warnings.push(format!(
                    "`{}` has no header, so its columns were judged from their values: {columns}; \
                     record with the header (`--format=csv`) to be sure",
                    path.display()
                ));
            }
            let interval = match interval {
                None if !t.has_timestamps && t.format == TraceFormat::NvidiaSmiDmon => {
                    warnings.push(format!(
                        "`{}`: nvidia-smi dmon output without a time column (`-o DT`); read at \
                         dmon's default interval of {} s, give `--interval` if it was recorded \
                         with `-d`",
                        path.display(),
                        gpufeed_telemetry::nvsmi::dmon::DEFAULT_INTERVAL_S
                    ));
                    Some(gpufeed_telemetry::nvsmi::dmon::DEFAULT_INTERVAL_S)
                }
                None if !t.has_timestamps && t.format == TraceFormat::DcgmiDmon => {
                    warnings.push(format!(
                        "`{}`: dcgmi dmon writes no time; read at its default interval of {} \
                         s, give `--interval` if it was recorded with `-d`",
                        path.display(),
                        gpufeed_telemetry::dcgm::DMON_DEFAULT_INTERVAL_S
                    ));
                    Some(gpufeed_telemetry::dcgm::DMON_DEFAULT_INTERVAL_S)
                }
                i => i,
            };
            // Only with `--interval`: each `sampling_interval` sorts the log's differences.
            if interval.is_some()
                && t.has_timestamps
                && t.gpus.iter().all(|g| sampling_interval(&g.t).is_some())
            {
                warnings.push(format!(
                    "`{}` has timestamps, which time it; `--interval` is not used",
                    path.display()
                ));
            }
            let r = analyze_util_trace_with(path, &t, interval)?;
            util_warnings(path, &r, &mut warnings);
            TraceReport::Util(r)
        }
        Trace::Steps(t) => TraceReport::Steps(analyze_step_trace(path, &t)?),
        Trace::PhaseSteps(t) => {
            if let Some(line) = t.truncated_line {
                warnings.push(phase_steps::truncation_warning(path, line, t.steps.len()));
            }
            if kind == Some(TraceKind::Steps) {
                // The step times alone, after the warm-up: the document's `step`.
                let a = analyze_steps(&t.analysed_totals()).with_context(|| {
                    format!(
                        "`{}` holds {} step(s), none after its {} warm-up step(s)",
                        path.display(),
                        t.steps.len(),
                        t.meta.warmup
                    )
                })?;
                TraceReport::Steps(StepReport::new(a))
            } else {
                let doc = phase_steps::document(&t.meta, &t.steps)
                    .with_context(|| format!("`{}`", path.display()))?;
                TraceReport::PhaseSteps(Box::new(doc))
            }
        }
    };
    Ok((report, warnings))
}

/// Values skipped and holes in a utilisation log.
fn util_warnings(path: &Path, r: &UtilReport, out: &mut Vec<String>) {
    if r.skipped > 0 {
        out.push(format!(
            "`{}`: skipped {} unreadable utilisation value(s) such as `[N/A]`",
            path.display(),
            r.skipped
        ));
    }
    for g in r.gpus.iter().filter(|g| g.holes > 0) {
        out.push(format!(
            "`{}`: GPU {} has {} hole(s) longer than {} sampling intervals; the analysis \
             treats samples as evenly spaced, so idle gaps and the period are approximate",
            path.display(),
            g.gpu,
            g.holes,
            HOLE_FACTOR
        ));
    }
}

/// Analyses every GPU of a utilisation trace.
pub fn analyze_util_trace(path: &Path, trace: &UtilTrace) -> Result<UtilReport> {
    analyze_util_trace_with(path, trace, None)
}

/// [`analyze_util_trace`]; `interval` (seconds) times a trace without timestamps, which is
/// an error naming `--interval` without it.
pub fn analyze_util_trace_with(
    path: &Path,
    trace: &UtilTrace,
    interval: Option<f64>,
) -> Result<UtilReport> {
    let given = match (trace.has_timestamps, interval) {
        (true, _) => None,
        (false, Some(i)) => Some(i),
        (false, None) => bail!(
            "`{}` has no timestamps, so the sampling interval is unknown; give it with \
             `--interval DURATION`, e.g. `--interval 1s` for a log of `nvidia-smi -l 1` \
             (`100ms` for `-lms 100`)",
            path.display()
        ),
    };
    let mut gpus = Vec::with_capacity(trace.gpus.len());
    let mut intervals = Vec::with_capacity(trace.gpus.len());
    for series in &trace.gpus {
        let interval = match given {
            Some(i) => i,
            // Timestamps that cannot time the log (all alike) leave it to `--interval`.
            None => sampling_interval(&series.t).or(interval).with_context(|| {
                format!(
                    "`{}`: GPU {} has {} sample(s) without two distinct timestamps; \
                     at least two are needed to know the sampling interval, or give it with \
                     `--interval DURATION`",
                    path.display(),
                    series.gpu,
                    series.util.len()
                )
            })?,
        };
        intervals.push(interval);
        let a = analyze_util(&series.util, interval)
            .with_context(|| format!("`{}`: GPU {} has no samples", path.display(), series.gpu))?;
        gpus.push(GpuReport {
            doc: GpuUtil {
                gpu: series.gpu,
                mean: a.summary.mean,
                std: a.summary.std,
                cv: a.summary.cv,
                p5: a.summary.p5,
                p50: a.summary.median,
                p95: a.summary.p95,
                idle_fraction: a.idle_fraction,
                busy_fraction: a.busy_fraction,
                period_s: a.period_s,
                period_strength: a.period.map(|p| p.strength),
                idle_gaps: a.idle_gaps,
                training: TrainingPhase {
                    idle_start_s: a.phase.idle_start as f64 * interval,
                    idle_end_s: a.phase.idle_end as f64 * interval,
                    samples: a.phase.summary.n,
                    mean: a.phase.summary.mean,
                    p5: a.phase.summary.p5,
                    p95: a.phase.summary.p95,
                    idle_fraction: a.phase.idle_fraction,
                    idle_gaps: a.phase.idle_gaps,
                    breaks: a.phase.breaks,
                },
                verdict: a.verdict,
            },
            analysis: a,
            samples: series.util.len(),
            // Without timestamps the samples are evenly spaced by definition.
            holes: if given.is_some() {
                0
            } else {
                series
                    .t
                    .windows(2)
                    .filter(|w| w[1] - w[0] > HOLE_FACTOR * interval)
                    .count()
            },
        });
    }
    if gpus.is_empty() {
        bail!("`{}` holds no utilisation samples", path.display());
    }
    intervals.sort_unstable_by(f64::total_cmp);
    Ok(UtilReport {
        samples: trace.rows,
        interval_s: gpufeed_stats::summary::percentile_sorted(&intervals, 0.5),
        gpus,
        format: trace.format,
        skipped: trace.skipped,
    })
}

/// Analyses a step-time trace.
pub fn analyze_step_trace(path: &Path, trace: &StepTrace) -> Result<StepReport> {
    let a = analyze_steps(&trace.ms)
        .with_context(|| format!("`{}` holds no step times", path.display()))?;
    Ok(StepReport::new(a))
}

/// One-line meaning of a utilisation verdict and what to try, for the text report.
fn util_advice(v: UtilVerdict) -> &'static str {
    match v {
        UtilVerdict::Oscillating => {
            "the GPU waits for data in a regular cycle: typical of a loader with too few \
             workers or no prefetch, delivering batches in bursts. Next: `gpufeed profile data`"
        }
        UtilVerdict::Bursty => {
            "the GPU stalls at irregular moments: storage hiccups, garbage collection, \
             checkpoints or uneven batches. Next: `gpufeed doctor` and `gpufeed profile data`"
        }
        UtilVerdict::Starved => {
            "the GPU is steadily under-used: the input pipeline is slow but even, or the \
             model/batch is too small for this GPU. Next: `gpufeed profile step`"
        }
        UtilVerdict::Idle => "the GPU hardly works at all: is the job running on this GPU?",
        UtilVerdict::Stable => "the GPU is well fed",
        UtilVerdict::TooShort => {
            "too short to judge: the GPU stalls, but too few times to tell a regular cycle (a \
             loader delivering in bursts) from irregular stalls; record longer"
        }
    }
}

fn step_advice(v: StepVerdict) -> &'static str {
    match v {
        StepVerdict::Oscillating => {
            "a slow step comes back in a cycle: one slow worker in a round-robin, a cache \
             refill or a periodic checkpoint/log. Match the period against num_workers"
        }
        StepVerdict::Unstable => {
            "step times vary without a cycle: the input pipeline or the host is irregular. \
             Next: `gpufeed profile data`"
        }
        StepVerdict::Stable => "steady step times",
    }
}

/// Prometheus answers at most this many points per series.
const PROMETHEUS_MAX_POINTS: f64 = 11_000.0;

/// A Prometheus range of DCGM's metrics to judge as a utilisation log (`gpufeed trace
/// --prometheus URL`).
#[derive(Debug, Clone, PartialEq)]
pub struct PrometheusRange {
    /// The server.
    pub url: String,
    /// A label selector added to every metric (`{Hostname="node1"}`).
    pub selector: String,
    /// The range's start: a duration ago (`1h`), Unix seconds, or RFC 3339.
    pub since: String,
    /// Its end, the same ways.
    pub until: String,
    /// The resolution, s (raised so that no series holds more points than the server
    /// answers with).
    pub step_s: f64,
}

/// Asks the server for the range and judges it as a utilisation log; the warnings to print
/// once each.
///
/// # Errors
///
/// A range that ends before it starts, a time that does not parse, a server that cannot be
/// asked or answers no series, named.
pub fn analyze_prometheus(range: &PrometheusRange) -> Result<(TraceReport, Vec<String>)> {
    use gpufeed_telemetry::dcgm::{RangeQuery, query_range};
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let (start, end) = (when(&range.since, now)?, when(&range.until, now)?);
    // Within the server's limit of points per series where the range is known here.
    let mut step_s = range.step_s;
    if let (Ok(a), Ok(b)) = (start.parse::<f64>(), end.parse::<f64>()) {
        if b <= a {
            bail!(
                "the range ends ({}) before it starts ({}): `--since` is further back than \
                 `--until`",
                range.until,
                range.since
            );
        }
        step_s = step_s.max(((b - a) / (PROMETHEUS_MAX_POINTS - 1.0)).ceil());
    }
    let q = RangeQuery {
        url: range.url.clone(),
        selector: range.selector.clone(),
        start,
        end,
        step_s,
    };
    let label = Path::new(&range.url);
    let t = query_range(&q, label)?;
    analyze_read(label, Trace::Util(t), None, None)
}

/// `--since` / `--until`: a duration ago (`1h`, `0s`) as Unix seconds, a number as Unix
/// seconds, anything else (RFC 3339) as the server takes it.
fn when(text: &str, now: f64) -> Result<String> {
    let t = text.trim();
    if let Ok(secs) = t.parse::<f64>() {
        return Ok(format!("{secs}"));
    }
    let ago = t.ends_with(|c: char| c.is_ascii_alphabetic()) && !t.contains(['-', ':']);
    if ago {
        let d = gpufeed_stats::duration::parse_duration(t)
            .map_err(|e| anyhow::anyhow!("`{text}`: {e}"))?;
        return Ok(format!("{:.3}", now - d));
    }
    Ok(t.to_owned())
}

/// The human report: verdict first, then the numbers behind it. For a step recording,
/// exactly [`phase_steps::render_text`].
#[must_use]
pub fn render_text(path: &Path, report: &TraceReport) -> String {
    let mut o = String::new();
    // Writing into a String cannot fail; the results are ignored deliberately.
    match report {
        TraceReport::Util(r) => {
            let per_gpu = r.gpus.first().map_or(0, |g| g.samples);
            let _ = writeln!(
                o,
                "{}: {}, {} GPU{}, {} samples every {} ({} per GPU)",
                path.display(),
                r.format.name(),
                r.gpus.len(),
                if r.gpus.len() == 1 { "" } else { "s" },
                r.samples,
                secs(r.interval_s),
                secs(per_gpu as f64 * r.interval_s),
            );
            for g in &r.gpus {
                let a = &g.analysis;
                let _ = writeln!(o);
                let headline = match (g.verdict, a.period_s, g.period_strength) {
                    (UtilVerdict::Oscillating, Some(p), Some(r)) => format!(
                        "swings between {:.0} % and {:.0} % every {} (autocorrelation {r:.2})",
                        g.p5,
                        g.p95,
                        secs(p)
                    ),
                    (UtilVerdict::Bursty, ..) => format!(
                        "{} idle gaps at irregular times, {:.0} % of the time idle",
                        g.training.idle_gaps.count,
                        g.training.idle_fraction * 100.0
                    ),
                    (UtilVerdict::TooShort, ..) => format!(
                        "{} idle gaps, {:.0} % of the time idle; at least {:.0} are needed to \
                         tell a cycle from irregular stalls",
                        g.training.idle_gaps.count,
                        g.training.idle_fraction * 100.0,
                        gpufeed_stats::thresholds::PERIOD_MIN_CYCLES
                    ),
                    _ => format!("mean {:.1} %", g.training.mean),
                };
                let _ = writeln!(o, "GPU {}  {}: {headline}", g.gpu, g.verdict.as_str());
                let _ = writeln!(o, "  {}", util_advice(g.verdict));
                let t = &g.training;
                if t.idle_start_s > 0.0 || t.idle_end_s > 0.0 {
                    let _ = writeln!(
                        o,
                        "  job start and end  idle {} while the job started, {} after it \
                         ended: left out of the verdict, which judges the {} samples of \
                         training (mean {:.1} %)",
                        secs(t.idle_start_s),
                        secs(t.idle_end_s),
                        t.samples,
                        t.mean
                    );
                }
                if t.breaks.count > 0 {
                    let _ = writeln!(
                        o,
                        "  phases  {} idle stretch{} of a minute or more between busy ones \
                         (mean {}, longest {}): evaluation, restarts or other jobs, not \
                         stalls of the steps; left out of the verdict",
                        t.breaks.count,
                        if t.breaks.count == 1 { "" } else { "es" },
                        secs(t.breaks.mean_s),
                        secs(t.breaks.max_s)
                    );
                }
                let _ = writeln!(
                    o,
                    "  utilisation  mean {:.1} %  std {:.1}  cv {:.2}  p5 {:.1}  p50 {:.1}  p95 {:.1}",
                    g.mean, g.std, g.cv, g.p5, g.p50, g.p95
                );
                let _ = if g.idle_gaps.count == 0 {
                    writeln!(o, "  idle (< {IDLE_UTIL_PCT:.0} %)  never")
                } else {
                    writeln!(
                        o,
                        "  idle (< {IDLE_UTIL_PCT:.0} %)  {:.1} % of the time, {} gaps, mean {}, longest {}",
                        g.idle_fraction * 100.0,
                        g.idle_gaps.count,
                        secs(g.idle_gaps.mean_s),
                        secs(g.idle_gaps.max_s)
                    )
                };
                let _ = writeln!(
                    o,
                    "  busy (>= {BUSY_UTIL_PCT:.0} %)  {:.1} % of the time",
                    g.busy_fraction * 100.0
                );
                let _ = match (a.period, a.period_s) {
                    (Some(p), Some(s)) => writeln!(
                        o,
                        "  period  {} ({:.1} samples), autocorrelation {:.2} (bound {:.2})",
                        secs(s),
                        p.period,
                        p.strength,
                        p.bound
                    ),
                    _ => writeln!(o, "  period  none"),
                };
            }
        }
        TraceReport::PhaseSteps(doc) => o.push_str(&phase_steps::render_text(doc)),
        TraceReport::Steps(r) => {
            let _ = writeln!(o, "{}: {} step times", path.display(), r.samples);
            let _ = writeln!(o);
            let headline = match (r.verdict, r.period_steps, r.period_strength) {
                (StepVerdict::Oscillating, Some(p), Some(s)) => {
                    format!("a cycle every {p} steps (autocorrelation {s:.2})")
                }
                _ => format!("cv {:.2}", r.cv),
            };
            let _ = writeln!(o, "{}: {headline}", r.verdict.as_str());
            let _ = writeln!(o, "  {}", step_advice(r.verdict));
            let _ = writeln!(
                o,
                "  step time  mean {:.2} ms  std {:.2}  cv {:.2}",
                r.mean_ms, r.std_ms, r.cv
            );
            let _ = writeln!(
                o,
                "  min {:.2}  median {:.2}  p95 {:.2}  p99 {:.2}  max {:.2} ms",
                r.min_ms, r.median_ms, r.p95_ms, r.p99_ms, r.max_ms
            );
            let _ = writeln!(
                o,
                "  outliers  {} of {} (modified Z-score > {OUTLIER_MODIFIED_Z})",
                r.outliers, r.samples
            );
            let _ = match r.analysis.period {
                Some(p) => writeln!(
                    o,
                    "  period  {:.1} steps, autocorrelation {:.2} (bound {:.2})",
                    p.period, p.strength, p.bound
                ),
                None => writeln!(o, "  period  none"),
            };
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpufeed_telemetry::trace::GpuSeries;

    fn untimed(util: Vec<f64>) -> UtilTrace {
        UtilTrace {
            format: TraceFormat::NvidiaSmiCsv,
            rows: util.len(),
            gpus: vec![GpuSeries {
                gpu: 0,
                t: (0..util.len()).map(|i| i as f64).collect(),
                util,
            }],
            skipped: 0,
            has_timestamps: false,
            columns: None,
            note: None,
        }
    }

    /// Issue 26: a log without timestamps needs `--interval`, named in the error, and is
    /// timed by it, with no "holes" (its row numbers are not times).
    #[test]
    fn a_log_without_timestamps_takes_the_interval() {
        let mut util = vec![0.0; 3];
        util.extend((0..40).map(|i| 30.0 + f64::from(i % 3)));
        util.extend([0.0; 20]);
        let t = untimed(util);
        let e = analyze_util_trace(Path::new("gpu.csv"), &t)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`--interval DURATION`"), "{e}");
        let r = analyze_util_trace_with(Path::new("gpu.csv"), &t, Some(0.5)).unwrap();
        assert_eq!(r.interval_s, 0.5);
        let g = &r.gpus[0];
        assert_eq!(g.holes, 0);
        assert_eq!(
            (g.training.idle_start_s, g.training.idle_end_s),
            (1.5, 10.0)
        );
        assert_eq!(g.training.samples, 40);
        assert_eq!(g.verdict, UtilVerdict::Starved);
        let text = render_text(Path::new("gpu.csv"), &TraceReport::Util(r));
        assert!(text.contains("job start and end"), "{text}");
    }
}
