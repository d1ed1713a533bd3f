//! `gpufeed monitor` and `gpufeed watch -- CMD`: live GPU telemetry, analysed as it comes.
//!
//! Both build a [`Sampler`] over [`Source`]s from `gpufeed-telemetry` (NVML, or a replay,
//! or a synthetic pattern, plus `/proc`), and feed every tick's records to the same
//! consumers: the recording (`--record`), a [`Collector`] that the sliding-window verdict
//! and the end report analyse with `gpufeed-stats`, and the live view (the ratatui panel,
//! `--plain` lines, or nothing). The end report is `trace`'s util report plus `host`
//! ([`report`]).
//!
//! ```text
//! gpufeed monitor --synthetic oscillating --duration 30 --plain
//! gpufeed monitor --replay run.jsonl --speed max --format json
//! gpufeed watch --record run.jsonl -- python train.py
//! ```

pub mod child;
pub mod plain;
pub mod report;
pub mod tui;

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result, bail};
use gpufeed_telemetry::host::{ProcHost, hostname};
use gpufeed_telemetry::jsonl::{Header, JsonlWriter, Record};
use gpufeed_telemetry::nvml::NvmlSource;
use gpufeed_telemetry::prometheus::{self, Exporter};
use gpufeed_telemetry::replay::ReplaySource;
use gpufeed_telemetry::sampler::{Collector, Sampler, TickOutcome};
use gpufeed_telemetry::source::{
    Clock, RealClock, Source, SourceError, SourceWarning, VirtualClock,
};
use gpufeed_telemetry::synthetic::SyntheticSource;

use crate::cli::{Format, MonitorArgs, WatchArgs};
use crate::printer;
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
const MAX_LINE_WARNINGS: usize = 10;

/// Seconds between flushes of the recording.
const FLUSH_S: f64 = 1.0;

/// Seconds (real time) between renders of the Prometheus page: scrapes come every
/// 5-60 s, so four pages a second are plenty and cost nothing at `--speed max`.
const EXPORT_S: f64 = 0.25;

const NO_DRIVER_HINT: &str = "pass `--replay FILE` (a gpufeed recording or an nvidia-smi log) \
                              or `--synthetic oscillating` to try gpufeed without a GPU";

/// `--speed`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Speed {
    Factor(f64),
    Max,
}

fn parse_speed(s: &str) -> Result<Speed> {
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

fn interval_s(ms: u64) -> Result<f64> {
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

/// The longest `--interval-ms`: an hour.
const MAX_INTERVAL_MS: u64 = 3_600_000;

/// A recording path must be creatable: checked before sampling starts.
fn check_record_path(path: &Path) -> Result<()> {
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
struct Recorder {
    path: PathBuf,
    writer: JsonlWriter<BufWriter<File>>,
    last_flush: Instant,
}

impl Recorder {
    fn create(path: &Path, header: &Header) -> Result<Self> {
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

    fn write(&mut self, records: &[Record]) -> Result<()> {
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

    fn finish(mut self) -> Result<()> {
        self.writer
            .flush()
            .with_context(|| format!("failed to write the recording `{}`", self.path.display()))
    }
}

/// Wall-clock time as RFC 3339 in UTC, to the millisecond (`2026-11-21T10:00:00.000Z`).
fn rfc3339_now() -> String {
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

/// How the run is shown while it goes.
enum View {
    /// Nothing until the end report.
    Quiet,
    /// One line per tick, on stdout (or stderr when stdout carries JSON).
    Plain { to_stderr: bool },
    /// The ratatui panel.
    Tui(Box<tui::Tui>),
}

/// Writes a `--plain` line. Lines go to stdout through the printer; when stdout carries
/// the JSON report they go to stderr, which `printer` has no plain writer for yet.
fn plain_line(line: &str, to_stderr: bool) -> Result<()> {
    if to_stderr {
        let mut e = io::stderr().lock();
        let _ = writeln!(e, "{line}");
        Ok(())
    } else {
        printer::data(&format!("{line}\n")).context("failed to write to standard output")
    }
}

/// Whether the live view asked to stop (`q` in the panel).
fn quit_requested(view: &View) -> bool {
    match view {
        View::Tui(t) => t.quit_requested(),
        _ => false,
    }
}

/// Everything a run shares between ticks.
struct Run {
    sampler: Sampler,
    collector: Collector,
    recorder: Option<Recorder>,
    view: View,
    exporter: Option<Exporter>,
    /// When the exporter's page was last rendered.
    last_export: Option<Instant>,
    /// Warnings that came while the live panel was up.
    held_warnings: Vec<String>,
    title: String,
    gpus: Vec<gpufeed_telemetry::jsonl::GpuInfo>,
    /// The `Hostname` label of the Prometheus page: this machine's, or a recording's.
    hostname: Option<String>,
    skipped_lines: usize,
    color: bool,
}

impl Run {
    /// Records, collects and shows one tick's records.
    fn consume(&mut self, t: f64, records: &[Record]) -> Result<()> {
        if let Some(r) = &mut self.recorder {
            r.write(records)?;
        }
        self.collector.extend(records);
        for w in self.sampler.take_warnings() {
            if matches!(w, SourceWarning::SkippedLine(_)) {
                self.skipped_lines += 1;
                if self.skipped_lines > MAX_LINE_WARNINGS {
                    continue;
                }
            }
            if matches!(self.view, View::Tui(_)) {
                // Printed now, it would land on the live panel; kept for the end.
                self.held_warnings.push(w.to_string());
            } else {
                printer::warn(&w.to_string());
            }
        }
        let export = self.exporter.is_some()
            && self
                .last_export
                .is_none_or(|at| at.elapsed().as_secs_f64() >= EXPORT_S);
        let window = if export || !matches!(self.view, View::Quiet) {
            report::window_report(
                &self.collector,
                WINDOW_S,
                MIN_WINDOW_SAMPLES,
                MIN_WINDOW_SPAN_S,
            )
        } else {
            None
        };
        if export && let Some(exporter) = &self.exporter {
            self.last_export = Some(Instant::now());
            exporter.publish(self.prometheus_page(window.as_ref()));
        }
        match &mut self.view {
            View::Quiet => {}
            View::Plain { to_stderr } => {
                plain_line(
                    &plain::line(t, &self.collector, window.as_ref()),
                    *to_stderr,
                )?;
            }
            View::Tui(tui) => {
                tui.draw(&tui::ViewState {
                    title: &self.title,
                    t,
                    gpus: &self.gpus,
                    collector: &self.collector,
                    window: window.as_ref(),
                    window_s: WINDOW_S,
                    color: self.color,
                })?;
            }
        }
        Ok(())
    }

    /// The Prometheus page: the newest readings and the window's figures.
    fn prometheus_page(&self, window: Option<&crate::trace::UtilReport>) -> String {
        let latest: Vec<_> = self.collector.latest_gpu().cloned().collect();
        let derived: Vec<prometheus::Derived> = window
            .map(|w| {
                w.gpus
                    .iter()
                    .map(|g| prometheus::Derived {
                        gpu: g.gpu,
                        verdict: g.verdict.as_str(),
                        period_s: g.period_s,
                        idle_ratio: g.idle_fraction,
                        busy_ratio: g.busy_fraction,
                        idle_gaps: g.idle_gaps.count,
                        mean_percent: g.mean,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let host = self.collector.host().last().map(|h| &h.host);
        prometheus::render(
            &self.gpus,
            &latest,
            host,
            &derived,
            WINDOW_S,
            self.hostname.as_deref(),
        )
    }

    /// Ends the view and the recording, and builds the end report.
    fn finish(mut self, exit_code: Option<i32>) -> Result<(MonitorReport, String)> {
        // Leave the alternate screen before anything is printed.
        self.view = View::Quiet;
        for w in std::mem::take(&mut self.held_warnings) {
            printer::warn(&w);
        }
        if self.skipped_lines > MAX_LINE_WARNINGS {
            printer::warn(&format!(
                "{} more damaged lines skipped",
                self.skipped_lines - MAX_LINE_WARNINGS
            ));
        }
        if let Some(r) = self.recorder.take() {
            r.finish()?;
        }
        let (report, notes) = end_report(&self.sampler, &self.collector, &self.title, exit_code)?;
        for n in notes {
            printer::warn(&n);
        }
        Ok((report, self.title))
    }
}

/// The report of a run from what `sampler` collected, and the notes on the analysis (GPUs
/// left out of it, ...).
fn end_report(
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
        },
        notes,
    ))
}

fn print_report(
    report: &MonitorReport,
    title: &str,
    format: Format,
    command: Option<&str>,
) -> Result<()> {
    match format {
        Format::Json => printer::data(&(serde_json::to_string(report)? + "\n"))?,
        Format::Text => printer::data(&report::render(report, title, command))?,
    }
    Ok(())
}

fn no_driver(e: SourceError) -> anyhow::Error {
    match e {
        SourceError::NoDriver { .. } | SourceError::NoGpu => {
            anyhow::anyhow!("{e}; {NO_DRIVER_HINT}")
        }
        other => anyhow::Error::new(other),
    }
}

/// `gpufeed monitor`.
pub fn monitor(args: &MonitorArgs) -> Result<ExitCode> {
    let interval = interval_s(args.interval_ms)?;
    if let Some(d) = args.duration
        && !(d > 0.0 && d.is_finite())
    {
        bail!("`--duration` must be a number of seconds above 0; got `{d}`");
    }
    let speed = args.speed.as_deref().map(parse_speed).transpose()?;
    if speed.is_some() && args.replay.is_none() && args.synthetic.is_none() {
        bail!(
            "`--speed` needs `--replay FILE` or `--synthetic PATTERN`: a live GPU runs at its own speed"
        );
    }
    let speed = speed.unwrap_or(Speed::Factor(1.0));
    if speed == Speed::Max && args.synthetic.is_some() && args.duration.is_none() {
        bail!("`--synthetic` with `--speed max` never ends by itself; add `--duration S`");
    }
    if let Some(path) = &args.record {
        check_record_path(path)?;
    }
    let prometheus_addr = args
        .prometheus
        .as_deref()
        .map(prometheus::parse_addr)
        .transpose()?;

    let mut header = Header::new(rfc3339_now(), args.interval_ms, "nvml");
    let (source, title): (Box<dyn Source>, String) = if let Some(path) = &args.replay {
        let r = ReplaySource::open(path)?;
        if let Some(h) = r.header() {
            header.started_at.clone_from(&h.started_at);
            header.interval_ms = h.interval_ms;
            header.host.clone_from(&h.host);
        }
        (Box::new(r), path.display().to_string())
    } else if let Some(pattern) = &args.synthetic {
        let s = SyntheticSource::parse(pattern)?;
        let title = format!("synthetic {}", s.spec().name());
        (Box::new(s), title)
    } else {
        (
            Box::new(NvmlSource::open().map_err(no_driver)?),
            "nvml".to_owned(),
        )
    };
    header.source = source.name().to_owned();
    header.gpus = source.gpus().to_vec();
    if header.host.is_none() {
        header.host = hostname();
    }

    // Host metrics are this machine's now: only for a live or synthetic run in real time.
    let live = args.replay.is_none() && speed == Speed::Factor(1.0);
    let mut sources = vec![source];
    if live {
        sources.push(Box::new(ProcHost::new()));
    }
    let clock: Box<dyn Clock> = match speed {
        Speed::Max => Box::new(VirtualClock::default()),
        Speed::Factor(_) => Box::new(RealClock::start()),
    };
    let mut sampler = Sampler::new(sources, clock, interval);
    if let Speed::Factor(f) = speed {
        sampler = sampler.with_speed(f);
    }
    if let Some(d) = args.duration {
        sampler = sampler.with_end(d);
    }

    // Bound before sampling starts, so a port in use fails at once.
    let exporter = prometheus_addr.map(Exporter::bind).transpose()?;
    if let Some(e) = &exporter {
        plain_line(
            &format!(
                "serving Prometheus metrics on http://{}/metrics",
                e.local_addr()
            ),
            true,
        )?;
    }
    let recorder = args
        .record
        .as_deref()
        .map(|p| Recorder::create(p, &header))
        .transpose()?;
    // The live panel last: errors above are printed on the normal screen.
    let view = if args.plain {
        View::Plain {
            to_stderr: args.format == Format::Json,
        }
    } else if args.format == Format::Json {
        View::Quiet
    } else if io::stdout().is_terminal() && io::stdin().is_terminal() {
        View::Tui(Box::new(tui::Tui::start()?))
    } else {
        View::Plain { to_stderr: false }
    };
    if matches!(view, View::Quiet) && args.duration.is_none() && args.replay.is_none() {
        plain_line(
            "gpufeed: sampling until Ctrl-C, then printing the report",
            true,
        )?;
    }
    let signals = child::Signals::catch()?;
    let mut run = Run {
        gpus: sampler.gpus(),
        hostname: header.host.clone(),
        sampler,
        collector: Collector::new(),
        recorder,
        view,
        exporter,
        last_export: None,
        held_warnings: Vec::new(),
        title,
        skipped_lines: 0,
        color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    let mut records = Vec::new();
    loop {
        records.clear();
        let outcome = run.sampler.tick(&mut records, &|| {
            signals.pending() || quit_requested(&run.view)
        })?;
        match outcome {
            TickOutcome::Sampled(tick) => {
                run.consume(tick.t, &records)?;
                if tick.last {
                    break;
                }
            }
            TickOutcome::Interrupted | TickOutcome::Finished => break,
        }
    }
    let (report, title) = run.finish(None)?;
    print_report(&report, &title, args.format, None)?;
    Ok(ExitCode::SUCCESS)
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
    // Host metrics are this machine's now: only for a live or synthetic run in real time.
    let live = !matches!(source, MonitorSource::Replay(_)) && speed == 1.0;
    let (source, title): (Box<dyn Source>, String) = match source {
        MonitorSource::Nvml => (
            Box::new(NvmlSource::open().map_err(no_driver)?),
            "nvml".to_owned(),
        ),
        MonitorSource::Synthetic(pattern) => {
            let s = SyntheticSource::parse(pattern)?;
            let title = format!("synthetic {}", s.spec().name());
            (Box::new(s), title)
        }
        MonitorSource::Replay(path) => (
            Box::new(ReplaySource::open(path)?),
            path.display().to_string(),
        ),
    };
    let mut sources = vec![source];
    if live {
        sources.push(Box::new(ProcHost::new()));
    }
    // `interval_s` is in the source's time: at `speed` times real time, ticks come that
    // much more often.
    let mut sampler = Sampler::new(sources, Box::new(RealClock::start()), interval_s / speed);
    if speed != 1.0 {
        sampler = sampler.with_speed(speed);
    }
    let mut collector = Collector::new();
    let mut warnings = Vec::new();
    let mut records = Vec::new();
    loop {
        records.clear();
        let outcome = sampler.tick(&mut records, &|| {
            stop.load(std::sync::atomic::Ordering::Relaxed)
        })?;
        collector.extend(&records);
        warnings.extend(sampler.take_warnings().iter().map(ToString::to_string));
        match outcome {
            TickOutcome::Sampled(tick) if !tick.last => {}
            _ => break,
        }
    }
    let (report, notes) = end_report(&sampler, &collector, &title, None)?;
    warnings.extend(notes);
    Ok((report, warnings))
}

/// `gpufeed watch -- CMD`.
pub fn watch(args: &WatchArgs) -> Result<ExitCode> {
    let interval = interval_s(args.interval_ms)?;
    if let Some(path) = &args.record {
        check_record_path(path)?;
    }
    let nvml = match NvmlSource::open() {
        Ok(s) => Some(s),
        Err(e) => {
            printer::warn(&format!("{e}; running the command with host metrics only"));
            None
        }
    };
    let signals = child::Signals::catch()?;
    let mut child = child::spawn(&args.command, args.format == Format::Json)?;
    let pid = child.id();
    let mut sources: Vec<Box<dyn Source>> = Vec::new();
    if let Some(n) = nvml {
        sources.push(Box::new(n.watch(pid)));
    }
    sources.push(Box::new(ProcHost::new().watch(pid)));
    let sampler = Sampler::new(sources, Box::new(RealClock::start()), interval);
    let mut header = Header::new(rfc3339_now(), args.interval_ms, sampler.source_name());
    header.gpus = sampler.gpus();
    header.host = hostname();
    let recorder = match args
        .record
        .as_deref()
        .map(|p| Recorder::create(p, &header))
        .transpose()
    {
        Ok(r) => r,
        Err(e) => {
            // The command is running already: stop it rather than leave it orphaned.
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
    };
    let mut run = Run {
        gpus: sampler.gpus(),
        hostname: header.host.clone(),
        sampler,
        collector: Collector::new(),
        recorder,
        view: View::Quiet,
        exporter: None,
        last_export: None,
        held_warnings: Vec::new(),
        title: "watch".to_owned(),
        skipped_lines: 0,
        color: false,
    };
    let mut records = Vec::new();
    let status = loop {
        if let Some(status) = child.try_wait().context("failed to wait for the command")? {
            break status;
        }
        records.clear();
        match run.sampler.tick(&mut records, &|| signals.pending())? {
            TickOutcome::Sampled(tick) => run.consume(tick.t, &records)?,
            TickOutcome::Interrupted => {
                for s in signals.take() {
                    if child.try_wait().ok().flatten().is_none() {
                        child::forward(&child, s)?;
                    }
                }
            }
            TickOutcome::Finished => {
                break child.wait().context("failed to wait for the command")?;
            }
        }
    };
    let code = child::exit_code(status);
    let (report, title) = run.finish(Some(code))?;
    let command = shell_words(&args.command);
    print_report(&report, &title, args.format, Some(&command))?;
    // Exit codes are 0..=255; a shell shows the same number.
    Ok(ExitCode::from(
        u8::try_from(code.rem_euclid(256)).unwrap_or(u8::MAX),
    ))
}

/// The command as a shell would show it, quoting words that need it.
fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
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

    #[test]
    fn quoting() {
        let argv: Vec<String> = ["python", "train.py", "--lr=0.1", "a b", "it's", ""]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(
            shell_words(&argv),
            r"python train.py --lr=0.1 'a b' 'it'\''s' ''"
        );
    }
}
