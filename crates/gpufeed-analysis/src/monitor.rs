//! A monitor session: the sources (NVML, a replay, a synthetic pattern, `/proc`), the
//! settings checked before sampling starts, the JSONL recorder, and the end report
//! ([`report`]: `trace`'s util report plus `host`).
//!
//! One source selection ([`MonitorSource::open`]) and one sampling loop ([`sample`]) serve
//! every sampler: `gpufeed monitor` and `gpufeed watch` show each tick (the live view is the
//! binary's), `analyze` samples the GPUs during its step profile, and [`sample_until`] runs
//! a whole session without output for the Python `Monitor`.

pub mod report;

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result, bail};
use gpufeed_telemetry::host::ProcHost;
use gpufeed_telemetry::jsonl::{Header, JsonlWriter, Record};
use gpufeed_telemetry::nvml::NvmlSource;
use gpufeed_telemetry::replay::ReplaySource;
use gpufeed_telemetry::sampler::{Collector, Sampler, TickOutcome};
use gpufeed_telemetry::source::{RealClock, Source, SourceError, SourceWarning};
use gpufeed_telemetry::synthetic::SyntheticSource;

use report::{MonitorReport, host_report};

/// Seconds of history the live verdict is computed over: 20 cycles of the seeds'
/// 1.5 s oscillation, and enough for the period detector (lags up to n/2) to see a
/// 10 s stall cycle three times.
pub const WINDOW_S: f64 = 30.0;

/// Samples a GPU needs in the window before a live verdict is shown.
pub const MIN_WINDOW_SAMPLES: usize = 20;

/// Seconds of samples a GPU needs in the window before a live verdict is shown: a third
/// of the window, so that a cycle of up to 5 s has repeated twice.
pub const MIN_WINDOW_SPAN_S: f64 = 10.0;

/// Damaged replay lines reported one by one; the rest are counted.
pub const MAX_LINE_WARNINGS: usize = 10;

/// Seconds between flushes of the recording.
const FLUSH_S: f64 = 1.0;

/// Seconds (real time) between renders of the Prometheus page: scrapes come every
/// 5-60 s, so four pages a second are plenty and cost nothing at `--speed max`.
pub const EXPORT_S: f64 = 0.25;

const NO_DRIVER_HINT: &str = "pass `--replay FILE` (a gpufeed recording or an nvidia-smi log) \
                              or `--synthetic oscillating` to try gpufeed without a GPU";

/// `--speed`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    /// A factor of real time.
    Factor(f64),
    /// No waiting.
    Max,
}

pub fn parse_speed(s: &str) -> Result<Speed> {
    if s.eq_ignore_ascii_case("max") {
        return Ok(Speed::Max);
    }
    match s.trim().trim_end_matches(['x', 'X']).parse::<f64>() {
        Ok(f) if f > 0.0 && f.is_finite() => Ok(Speed::Factor(f)),
        _ => bail!(
            "`--speed` must be a positive factor such as `1`, `10` or `0.5`, or `max`; got `{s}`"
        ),
    }
}

pub fn interval_s(ms: u64) -> Result<f64> {
    if ms == 0 {
        bail!(
            "`--interval-ms` must be at least 1; NVML's own sample period is 1/6 s to 1 s, so 100 ms already sees every reading"
        );
    }
    if ms > MAX_INTERVAL_MS {
        bail!("`--interval-ms` must be at most {MAX_INTERVAL_MS} (an hour); got `{ms}`");
    }
    Ok(ms as f64 / 1e3)
}

/// The sampling interval in milliseconds, from `--interval DURATION` (seconds, parsed by
/// [`gpufeed_stats::duration::parse_duration`]) or its alias `--interval-ms N`; 100 ms
/// when neither is given. At least 1 ms and at most an hour.
pub fn interval_ms(interval: Option<f64>, interval_ms: Option<u64>) -> Result<u64> {
    match (interval, interval_ms) {
        (Some(s), _) => {
            let ms = (s * 1e3).round();
            if ms < 1.0 {
                bail!("`--interval` must be at least 1ms; got {s} s");
            }
            if ms > MAX_INTERVAL_MS as f64 {
                bail!("`--interval` must be at most 1h; got {s} s");
            }
            // Between 1 and MAX_INTERVAL_MS: a whole number that fits.
            Ok(ms as u64)
        }
        (None, Some(ms)) => interval_s(ms).map(|_| ms),
        (None, None) => Ok(DEFAULT_INTERVAL_MS),
    }
}

/// The sampling interval without `--interval`: 100 ms, which sees every NVML reading.
pub const DEFAULT_INTERVAL_MS: u64 = 100;

/// The longest `--interval-ms`: an hour.
const MAX_INTERVAL_MS: u64 = 3_600_000;

/// A recording path must be creatable: checked before sampling starts.
pub fn check_record_path(path: &Path) -> Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        bail!(
            "cannot record to `{}`: the folder `{}` does not exist; create it first",
            path.display(),
            parent.display()
        );
    }
    if path.is_dir() {
        bail!(
            "cannot record to `{}`: it is a folder; name a file such as `{}`",
            path.display(),
            path.join("run.jsonl").display()
        );
    }
    Ok(())
}

/// Writes the recording: the header when created, then every record; flushed every
/// [`FLUSH_S`] and at the end, whole lines only, so a reader (or a crash) never sees half
/// a header.
#[derive(Debug)]
pub struct Recorder {
    path: PathBuf,
    writer: JsonlWriter<BufWriter<File>>,
    last_flush: Instant,
}

impl Recorder {
    /// Creates the file and writes the header.
    ///
    /// # Errors
    ///
    /// The file cannot be created or written, named.
    pub fn create(path: &Path, header: &Header) -> Result<Self> {
        let context = || format!("failed to create the recording `{}`", path.display());
        #[allow(clippy::disallowed_methods)] // the path is in the context already
        let file = File::create(path).with_context(context)?;
        let mut writer = JsonlWriter::new(BufWriter::with_capacity(64 * 1024, file), header)
            .with_context(context)?;
        writer.flush().with_context(context)?;
        Ok(Recorder {
            path: path.to_owned(),
            writer,
            last_flush: Instant::now(),
        })
    }

    pub fn write(&mut self, records: &[Record]) -> Result<()> {
        let context = || format!("failed to write the recording `{}`", self.path.display());
        for r in records {
            self.writer.write(r).with_context(context)?;
        }
        if self.last_flush.elapsed().as_secs_f64() >= FLUSH_S {
            self.writer.flush().with_context(context)?;
            self.last_flush = Instant::now();
        }
        Ok(())
    }

    pub fn finish(mut self) -> Result<()> {
        self.writer
            .flush()
            .with_context(|| format!("failed to write the recording `{}`", self.path.display()))
    }
}

/// Wall-clock time as RFC 3339 in UTC, to the millisecond (`2026-11-21T10:00:00.000Z`).
pub fn rfc3339_now() -> String {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// The report of a run from what `sampler` collected, and the notes on the analysis (GPUs
/// left out of it, ...).
pub fn end_report(
    sampler: &Sampler,
    collector: &Collector,
    title: &str,
    exit_code: Option<i32>,
) -> Result<(MonitorReport, Vec<String>)> {
    let interval = sampler.interval();
    let (util, notes) = report::util_report(collector, title, interval)?;
    let host = host_report(
        collector.host(),
        &sampler.cost(),
        interval,
        sampler.clock().is_real(),
    );
    Ok((
        MonitorReport {
            util,
            host,
            exit_code,
            attach: None,
        },
        notes,
    ))
}

pub fn no_driver(e: SourceError) -> anyhow::Error {
    match e {
        SourceError::NoDriver { .. } | SourceError::NoGpu => {
            anyhow::anyhow!("{e}; {NO_DRIVER_HINT}")
        }
        other => anyhow::Error::new(other),
    }
}

/// What [`sample_until`] samples.
#[derive(Debug, Clone)]
pub enum MonitorSource {
    /// The GPUs through NVML (`GPUFEED_NVML_LIB` names another library).
    Nvml,
    /// A synthetic pattern (`gpufeed monitor --synthetic PATTERN`).
    Synthetic(String),
    /// A recording or an nvidia-smi log, replayed (`--replay FILE`).
    Replay(PathBuf),
}

/// A source opened: what it samples, the run's title, and a replayed recording's header.
#[allow(missing_debug_implementations)] // `dyn Source` has no `Debug`.
pub struct Opened {
    /// The source.
    pub source: Box<dyn Source>,
    /// The run's title: `nvml`, `synthetic PATTERN` or the replayed file.
    pub title: String,
    /// A replayed gpufeed recording's header (when it started, its interval, its host).
    pub header: Option<Header>,
}

impl MonitorSource {
    /// Opens the source: the one source selection of `monitor`, `watch`'s GPU side and
    /// Python's `Monitor`. The error is the source's own; the CLI adds its hint
    /// ([`no_driver`]).
    pub fn open(&self) -> Result<Opened, SourceError> {
        Ok(match self {
            Self::Nvml => Opened {
                source: Box::new(NvmlSource::open()?),
                title: "nvml".to_owned(),
                header: None,
            },
            Self::Synthetic(pattern) => {
                let s = SyntheticSource::parse(pattern)?;
                Opened {
                    title: format!("synthetic {}", s.spec().name()),
                    source: Box::new(s),
                    header: None,
                }
            }
            Self::Replay(path) => {
                let r = ReplaySource::open(path)?;
                Opened {
                    header: r.header().cloned(),
                    source: Box::new(r),
                    title: path.display().to_string(),
                }
            }
        })
    }

    /// Whether this machine's host metrics belong beside it: a live or synthetic source in
    /// real time (a replay's host was another machine, at another time).
    #[must_use]
    pub fn with_host(&self, speed: f64) -> bool {
        !matches!(self, Self::Replay(_)) && speed == 1.0
    }
}

/// Whether a sampling run goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on sampling.
    Go,
    /// Stop now.
    Stop,
}

/// What a sampling run does with its ticks ([`sample`]).
pub trait Ticks {
    /// Asked while waiting for the next tick: whether to stop waiting (Ctrl-C, `q` in the
    /// live panel, a stop flag).
    fn interrupt(&self) -> bool;
    /// Before each tick: whether to go on (`watch` stops once its command has exited).
    fn before(&mut self) -> Result<Flow> {
        Ok(Flow::Go)
    }
    /// One tick's records at `t` (the source's seconds), and the warnings its sources gave.
    fn sampled(&mut self, t: f64, records: &[Record], warnings: Vec<SourceWarning>) -> Result<()>;
    /// After [`Ticks::interrupt`] said stop: stop (the default), or go on (`watch` forwards
    /// the signal to its command and waits for the command to end).
    fn interrupted(&mut self) -> Result<Flow> {
        Ok(Flow::Stop)
    }
}

/// The one sampling loop: ticks `sampler` until its source ends, its last tick (`--duration`),
/// or `ticks` says stop.
pub fn sample(sampler: &mut Sampler, ticks: &mut dyn Ticks) -> Result<()> {
    let mut records = Vec::new();
    loop {
        if ticks.before()? == Flow::Stop {
            return Ok(());
        }
        records.clear();
        match sampler.tick(&mut records, &|| ticks.interrupt())? {
            TickOutcome::Sampled(tick) => {
                ticks.sampled(tick.t, &records, sampler.take_warnings())?;
                if tick.last {
                    return Ok(());
                }
            }
            TickOutcome::Interrupted => {
                if ticks.interrupted()? == Flow::Stop {
                    return Ok(());
                }
            }
            TickOutcome::Finished => return Ok(()),
        }
    }
}

/// [`Ticks`] that collect every record and warning until a stop flag is set.
#[derive(Debug)]
pub struct Collecting<'a> {
    /// The records so far.
    pub collector: Collector,
    /// The sources' warnings so far.
    pub warnings: Vec<String>,
    /// Set by another thread to end the run.
    pub stop: &'a std::sync::atomic::AtomicBool,
}

impl<'a> Collecting<'a> {
    /// Nothing collected yet.
    #[must_use]
    pub fn new(stop: &'a std::sync::atomic::AtomicBool) -> Self {
        Self {
            collector: Collector::new(),
            warnings: Vec::new(),
            stop,
        }
    }
}

impl Ticks for Collecting<'_> {
    fn interrupt(&self) -> bool {
        self.stop.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn sampled(&mut self, _: f64, records: &[Record], warnings: Vec<SourceWarning>) -> Result<()> {
        self.collector.extend(records);
        self.warnings
            .extend(warnings.iter().map(ToString::to_string));
        Ok(())
    }
}

/// Samples `source` and, for a live or synthetic source, this host, every `interval_s`
/// seconds of the source's time (which runs at `speed` times real time for a synthetic or
/// replayed source) until `stop` is
/// set or the source ends; then the report `gpufeed monitor --format json` prints, and the
/// warnings the run gave. No output: the Python `Monitor` runs this on its thread.
pub fn sample_until(
    source: &MonitorSource,
    interval_s: f64,
    speed: f64,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<(MonitorReport, Vec<String>)> {
    if !(interval_s.is_finite() && interval_s > 0.0) {
        bail!("interval {interval_s} s: pass a positive number of seconds, e.g. 0.1");
    }
    if !(speed.is_finite() && speed > 0.0) {
        bail!("speed {speed}: pass a positive factor (1 = real time)");
    }
    // The source's own error, without the command line's hint: the Python caller
    // (`gpufeed.Monitor`, this function's user) names its own keyword arguments.
    let opened = source.open()?;
    let title = opened.title;
    let mut sources = vec![opened.source];
    if source.with_host(speed) {
        sources.push(Box::new(ProcHost::new()));
    }
    // `interval_s` is in the source's time: at `speed` times real time, ticks come that
    // much more often.
    let mut sampler = Sampler::new(sources, Box::new(RealClock::start()), interval_s / speed);
    if speed != 1.0 {
        sampler = sampler.with_speed(speed);
    }
    let mut ticks = Collecting::new(stop);
    sample(&mut sampler, &mut ticks)?;
    ticks
        .warnings
        .extend(sampler.take_warnings().iter().map(ToString::to_string));
    let (report, notes) = end_report(&sampler, &ticks.collector, &title, None)?;
    ticks.warnings.extend(notes);
    Ok((report, ticks.warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds() {
        assert_eq!(parse_speed("max").unwrap(), Speed::Max);
        assert_eq!(parse_speed("MAX").unwrap(), Speed::Max);
        assert_eq!(parse_speed("10").unwrap(), Speed::Factor(10.0));
        assert_eq!(parse_speed("2x").unwrap(), Speed::Factor(2.0));
        for bad in ["0", "-1", "fast", "inf", "NaN", ""] {
            let e = parse_speed(bad).unwrap_err().to_string();
            assert!(
                e.starts_with("`--speed` must be a positive factor"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn interval_and_its_alias() {
        use gpufeed_stats::duration::parse_duration;
        let d = |t: &str| Some(parse_duration(t).unwrap());
        assert_eq!(interval_ms(d("100ms"), None).unwrap(), 100);
        assert_eq!(interval_ms(d("1s"), None).unwrap(), 1000);
        assert_eq!(interval_ms(d("60"), None).unwrap(), 60_000);
        assert_eq!(interval_ms(None, Some(250)).unwrap(), 250);
        assert_eq!(interval_ms(None, None).unwrap(), DEFAULT_INTERVAL_MS);
        let e = interval_ms(d("100us"), None).unwrap_err().to_string();
        assert!(e.contains("at least 1ms"), "{e}");
        assert!(interval_ms(d("2h"), None).is_err());
        assert!(interval_ms(None, Some(0)).is_err());
    }

    #[test]
    fn intervals() {
        assert_eq!(interval_s(100).unwrap(), 0.1);
        assert!(
            interval_s(0)
                .unwrap_err()
                .to_string()
                .contains("at least 1")
        );
    }

    #[test]
    fn record_paths() {
        let dir = tempfile::tempdir().unwrap();
        check_record_path(&dir.path().join("run.jsonl")).unwrap();
        let e = check_record_path(&dir.path().join("no/such/run.jsonl")).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        let e = check_record_path(dir.path()).unwrap_err();
        assert!(e.to_string().contains("it is a folder"), "{e}");
        check_record_path(Path::new("run.jsonl")).unwrap();
    }

    #[test]
    fn rfc3339_looks_right() {
        let s = rfc3339_now();
        assert_eq!(s.len(), "2026-11-21T10:00:00.000Z".len(), "{s}");
        assert!(s.starts_with("20"), "{s}");
        assert!(s.ends_with('Z'));
    }
}
