//! A `gpufeed monitor` or `gpufeed watch -- CMD` session: live GPU telemetry, analysed as
//! it comes.
//!
//! Both build a [`Sampler`] over [`Source`]s from `gpufeed-telemetry` (NVML, or a replay,
//! or a synthetic pattern, plus `/proc`: [`MonitorSource::open`], the one source selection)
//! and run gpufeed-analysis' one sampling loop ([`sample`]), which hands every tick's
//! records to the same consumers: the recording (`--record`), a [`Collector`] that the sliding-window verdict
//! and the end report analyse with `gpufeed-stats`, and the live view (the ratatui panel,
//! `--plain` lines, or nothing). The end report is `trace`'s util report plus `host`
//! ([`report`]).
//!
//! ```text
//! gpufeed monitor --synthetic oscillating --duration 30 --plain
//! gpufeed monitor --replay run.jsonl --speed max --format json
//! gpufeed watch --record run.jsonl -- python train.py
//! ```

use std::io::{self, IsTerminal as _};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use gpufeed_telemetry::host::{ProcHost, hostname};
use gpufeed_telemetry::jsonl::{Header, Record};
use gpufeed_telemetry::nvml::NvmlSource;
use gpufeed_telemetry::prometheus::{self, Exporter};
use gpufeed_telemetry::sampler::{Collector, Sampler};
use gpufeed_telemetry::source::{Clock, RealClock, Source, SourceWarning, VirtualClock};

use gpufeed_analysis::monitor::report::{self, MonitorReport};
use gpufeed_analysis::monitor::{
    EXPORT_S, Flow, MAX_LINE_WARNINGS, MIN_WINDOW_SAMPLES, MIN_WINDOW_SPAN_S, MonitorSource,
    Recorder, Speed, Ticks, WINDOW_S, check_record_path, end_report, interval_ms, interval_s,
    no_driver, parse_speed, rfc3339_now, sample,
};

use crate::{Console, child, plain, tui};

/// What `gpufeed monitor` samples and how it shows it (its options, resolved by the CLI).
#[derive(Debug, Clone, Default)]
pub struct MonitorSettings {
    /// Seconds between samples (`--interval`).
    pub interval: Option<f64>,
    /// Milliseconds between samples (`--interval-ms`).
    pub interval_ms: Option<u64>,
    /// Stop after this many seconds (`--duration`).
    pub duration: Option<f64>,
    /// Record the samples as gpufeed JSONL (`--record`).
    pub record: Option<PathBuf>,
    /// One line per tick instead of the live panel (`--plain`).
    pub plain: bool,
    /// Serve Prometheus metrics on this address (`--prometheus`).
    pub prometheus: Option<String>,
    /// Replay a recording or an nvidia-smi log (`--replay`).
    pub replay: Option<PathBuf>,
    /// A replay's or synthetic pattern's speed (`--speed`: a factor or `max`).
    pub speed: Option<String>,
    /// A synthetic pattern (`--synthetic`).
    pub synthetic: Option<String>,
    /// stdout carries the report's JSON: no live view there.
    pub json: bool,
    /// No live view and no progress lines.
    pub quiet: bool,
}

/// What `gpufeed watch -- CMD` runs and samples (its options, resolved by the CLI).
#[derive(Debug, Clone, Default)]
pub struct WatchSettings {
    /// Seconds between samples (`--interval`).
    pub interval: Option<f64>,
    /// Milliseconds between samples (`--interval-ms`).
    pub interval_ms: Option<u64>,
    /// Record the samples as gpufeed JSONL (`--record`).
    pub record: Option<PathBuf>,
    /// Python stacks sampled per second (`--attach-rate`).
    pub attach_rate: f64,
    /// No stack sampling (`--no-attach`).
    pub no_attach: bool,
    /// stdout carries the report's JSON: the command's stdout goes to stderr.
    pub json: bool,
    /// The command and its arguments.
    pub command: Vec<String>,
}

/// A finished `watch`: the report, its title, the command as a shell shows it, and the
/// command's exit code (`128 + N` when signal `N` ended it).
#[derive(Debug)]
pub struct Watched {
    /// The end report, with the command's stacks.
    pub report: MonitorReport,
    /// Its title.
    pub title: String,
    /// The command, quoted as a shell would show it.
    pub command: String,
    /// The command's exit code.
    pub code: i32,
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

/// Writes a `--plain` line: on stdout, or on stderr when stdout carries the JSON report.
fn plain_line(console: &dyn Console, line: &str, to_stderr: bool) -> Result<()> {
    if to_stderr {
        console.note(line);
        Ok(())
    } else {
        console.data(line)
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
struct Run<'c> {
    console: &'c dyn Console,
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

impl Run<'_> {
    /// Records, collects and shows one tick's records, and says its sources' warnings.
    fn consume(&mut self, t: f64, records: &[Record], warnings: Vec<SourceWarning>) -> Result<()> {
        if let Some(r) = &mut self.recorder {
            r.write(records)?;
        }
        self.collector.extend(records);
        for w in warnings {
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
                self.console.warn(&w.to_string());
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
                    self.console,
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
    fn prometheus_page(&self, window: Option<&gpufeed_analysis::trace::UtilReport>) -> String {
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
    fn finish(
        mut self,
        sampler: &Sampler,
        exit_code: Option<i32>,
    ) -> Result<(MonitorReport, String)> {
        // Leave the alternate screen before anything is printed.
        self.view = View::Quiet;
        for w in std::mem::take(&mut self.held_warnings) {
            self.console.warn(&w);
        }
        if self.skipped_lines > MAX_LINE_WARNINGS {
            self.console.warn(&format!(
                "{} more damaged lines skipped",
                self.skipped_lines - MAX_LINE_WARNINGS
            ));
        }
        if let Some(r) = self.recorder.take() {
            r.finish()?;
        }
        let (report, notes) = end_report(sampler, &self.collector, &self.title, exit_code)?;
        for n in notes {
            self.console.warn(&n);
        }
        Ok((report, self.title))
    }
}

/// `monitor`'s ticks: each one consumed, until Ctrl-C or `q` in the live panel.
struct MonitorTicks<'a, 'c> {
    run: &'a mut Run<'c>,
    signals: &'a child::Signals,
}

impl Ticks for MonitorTicks<'_, '_> {
    fn interrupt(&self) -> bool {
        self.signals.pending() || quit_requested(&self.run.view)
    }

    fn sampled(&mut self, t: f64, records: &[Record], warnings: Vec<SourceWarning>) -> Result<()> {
        self.run.consume(t, records, warnings)
    }
}

/// `watch`'s ticks: each one consumed until the command exits; Ctrl-C and SIGTERM are
/// forwarded to the command, whose end then ends the run.
struct WatchTicks<'a, 'c> {
    run: &'a mut Run<'c>,
    signals: &'a child::Signals,
    child: &'a mut std::process::Child,
    /// The command's exit status, once it has exited.
    status: Option<std::process::ExitStatus>,
}

impl Ticks for WatchTicks<'_, '_> {
    fn interrupt(&self) -> bool {
        self.signals.pending()
    }

    fn before(&mut self) -> Result<Flow> {
        self.status = self
            .child
            .try_wait()
            .context("failed to wait for the command")?;
        Ok(if self.status.is_some() {
            Flow::Stop
        } else {
            Flow::Go
        })
    }

    fn sampled(&mut self, t: f64, records: &[Record], warnings: Vec<SourceWarning>) -> Result<()> {
        self.run.consume(t, records, warnings)
    }

    fn interrupted(&mut self) -> Result<Flow> {
        for s in self.signals.take() {
            if self.child.try_wait().ok().flatten().is_none() {
                child::forward(self.child, s)?;
            }
        }
        Ok(Flow::Go)
    }
}

/// Runs a `gpufeed monitor` session until its source ends, `--duration`, Ctrl-C or `q`;
/// returns the end report and its title.
///
/// # Errors
///
/// Settings that do not go together, a source that cannot be opened, a recording or port
/// that cannot be used, named with the flag.
pub fn monitor(args: &MonitorSettings, console: &dyn Console) -> Result<(MonitorReport, String)> {
    let interval_ms = interval_ms(args.interval, args.interval_ms)?;
    let interval = interval_s(interval_ms)?;
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

    let mut header = Header::new(rfc3339_now(), interval_ms, "nvml");
    let which = match (&args.replay, &args.synthetic) {
        (Some(path), _) => MonitorSource::Replay(path.clone()),
        (None, Some(pattern)) => MonitorSource::Synthetic(pattern.clone()),
        (None, None) => MonitorSource::Nvml,
    };
    let opened = which.open().map_err(no_driver)?;
    if let Some(h) = &opened.header {
        header.started_at.clone_from(&h.started_at);
        header.interval_ms = h.interval_ms;
        header.host.clone_from(&h.host);
    }
    let (source, title) = (opened.source, opened.title);
    header.source = source.name().to_owned();
    header.gpus = source.gpus().to_vec();
    if header.host.is_none() {
        header.host = hostname();
    }

    let mut sources = vec![source];
    if matches!(speed, Speed::Factor(f) if which.with_host(f)) {
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
        console.note(&format!(
            "serving Prometheus metrics on http://{}/metrics",
            e.local_addr()
        ));
    }
    let recorder = args
        .record
        .as_deref()
        .map(|p| Recorder::create(p, &header))
        .transpose()?;
    // The live panel last: errors above are printed on the normal screen.
    let view = if args.quiet {
        View::Quiet
    } else if args.plain {
        View::Plain {
            to_stderr: args.json,
        }
    } else if args.json {
        View::Quiet
    } else if io::stdout().is_terminal() && io::stdin().is_terminal() {
        View::Tui(Box::new(tui::Tui::start()?))
    } else {
        View::Plain { to_stderr: false }
    };
    if matches!(view, View::Quiet) && args.duration.is_none() && args.replay.is_none() {
        console.note("gpufeed: sampling until Ctrl-C, then printing the report");
    }
    let signals = child::Signals::catch()?;
    let mut run = Run {
        console,
        gpus: sampler.gpus(),
        hostname: header.host.clone(),
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
    sample(
        &mut sampler,
        &mut MonitorTicks {
            run: &mut run,
            signals: &signals,
        },
    )?;
    run.finish(&sampler, None)
}

/// Runs `args.command` and samples it until it exits (Ctrl-C and SIGTERM are forwarded to
/// it); returns the end report with the command's stacks and exit code.
///
/// # Errors
///
/// Settings out of range, a command that cannot be started, a recording that cannot be
/// written (the command is then stopped), named.
pub fn watch(args: &WatchSettings, console: &dyn Console) -> Result<Watched> {
    let interval_ms = interval_ms(args.interval, args.interval_ms)?;
    let interval = interval_s(interval_ms)?;
    if let Some(path) = &args.record {
        check_record_path(path)?;
    }
    if !(args.attach_rate.is_finite() && (1.0..=1000.0).contains(&args.attach_rate)) {
        bail!(
            "--attach-rate must be between 1 and 1000 samples per second, not {} (--no-attach turns the sampling off)",
            args.attach_rate
        );
    }
    let nvml = match NvmlSource::open() {
        Ok(s) => Some(s),
        Err(e) => {
            console.warn(&format!("{e}; running the command with host metrics only"));
            None
        }
    };
    let signals = child::Signals::catch()?;
    let mut child = child::spawn(&args.command, args.json)?;
    let pid = child.id();
    let stacks = (!args.no_attach).then(|| Stacks::start(pid, args.attach_rate));
    let mut sources: Vec<Box<dyn Source>> = Vec::new();
    if let Some(n) = nvml {
        sources.push(Box::new(n.watch(pid)));
    }
    sources.push(Box::new(ProcHost::new().watch(pid)));
    let mut sampler = Sampler::new(sources, Box::new(RealClock::start()), interval);
    let mut header = Header::new(rfc3339_now(), interval_ms, sampler.source_name());
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
        console,
        gpus: sampler.gpus(),
        hostname: header.host.clone(),
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
    let mut ticks = WatchTicks {
        run: &mut run,
        signals: &signals,
        child: &mut child,
        status: None,
    };
    sample(&mut sampler, &mut ticks)?;
    let status = match ticks.status {
        Some(status) => status,
        // The sources ended first: the command's end is the run's.
        None => child.wait().context("failed to wait for the command")?,
    };
    let code = child::exit_code(status);
    let (mut report, title) = run.finish(&sampler, Some(code))?;
    report.attach = stacks.and_then(|s| s.finish(console)).map(Box::new);
    Ok(Watched {
        report,
        title,
        command: shell_words(&args.command),
        code,
    })
}

/// `watch`'s stack sampling of its command (`gpufeed attach`'s, over the whole run) on a
/// thread of its own.
struct Stacks {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Result<gpufeed_contract::Attach, gpufeed_attach::AttachError>>,
}

impl Stacks {
    fn start(pid: u32, rate_hz: f64) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let opts = gpufeed_attach::Options {
            pid,
            // The run's length: until the command exits.
            duration: Duration::MAX,
            rate_hz,
            // The GPUs are read by the sampler of `watch` itself.
            nvml: false,
            stop: Some(Arc::clone(&stop)),
        };
        let thread = std::thread::spawn(move || gpufeed_attach::follow(&opts));
        Self { stop, thread }
    }

    /// Stops the sampling; its document, or `None` with a note saying why there is none.
    fn finish(self, console: &dyn Console) -> Option<gpufeed_contract::Attach> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.join() {
            Ok(Ok(doc)) => Some(doc),
            Ok(Err(gpufeed_attach::AttachError::NotPython { .. })) => {
                console.note("the command ran no Python: no stacks were sampled");
                None
            }
            Ok(Err(gpufeed_attach::AttachError::NoSuchProcess { .. })) => {
                console.note("the command exited before its stacks could be read");
                None
            }
            Ok(Err(e)) => {
                console.warn(&format!("no Python stacks sampled: {e}"));
                None
            }
            Err(_) => {
                console.warn("no Python stacks sampled: the sampling thread failed");
                None
            }
        }
    }
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
