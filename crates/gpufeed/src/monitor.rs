//! `gpufeed monitor` and `gpufeed watch -- CMD`: the arguments resolved into
//! `gpufeed-live`'s settings, the session run there (its crate docs say how), and the end
//! report printed as text or one JSON document.
//!
//! ```text
//! gpufeed monitor --synthetic oscillating --duration 30 --plain
//! gpufeed monitor --replay run.jsonl --speed max --format json
//! gpufeed watch --record run.jsonl -- python train.py
//! ```

use std::process::ExitCode;

use anyhow::{Context as _, Result};
use gpufeed_analysis::monitor::report::{self, MonitorReport};
use gpufeed_live::{Console, MonitorSettings, WatchSettings};

use crate::cli::{Format, MonitorArgs, Output, WatchArgs};
use crate::printer;

/// The session's lines through the printer: data on stdout, the rest on stderr.
struct Printer;

impl Console for Printer {
    fn data(&self, line: &str) -> Result<()> {
        printer::data(&format!("{line}\n")).context("failed to write to standard output")
    }
    fn note(&self, line: &str) {
        printer::note(line);
    }
    fn warn(&self, message: &str) {
        printer::warn(message);
    }
}

fn print_report(
    report: &MonitorReport,
    title: &str,
    format: Format,
    command: Option<&str>,
) -> Result<()> {
    printer::export(format, report, |r| report::render(r, title, command))
}

/// The report of a gpufeed recording replayed at once, with no progress lines: `gpufeed
/// trace` of a recording that holds the host's samples and no GPU's (`watch --record` where
/// no GPU was visible), which the utilisation reader has nothing to judge in.
pub fn replay_report(path: &std::path::Path, output: Output) -> Result<ExitCode> {
    let settings = MonitorSettings {
        replay: Some(path.to_owned()),
        speed: Some("max".to_owned()),
        json: output.format == Format::Json,
        quiet: true,
        ..MonitorSettings::default()
    };
    let (report, title) = gpufeed_live::monitor(&settings, &Printer)?;
    print_report(&report, &title, output.format, None)?;
    Ok(ExitCode::SUCCESS)
}

/// `gpufeed monitor`.
pub fn monitor(args: &MonitorArgs) -> Result<ExitCode> {
    let settings = MonitorSettings {
        interval: args.interval,
        interval_ms: args.interval_ms,
        duration: args.duration,
        record: args.record.clone(),
        plain: args.plain,
        prometheus: args.prometheus.clone(),
        replay: args.replay.clone(),
        speed: args.speed.clone(),
        synthetic: args.synthetic.clone(),
        json: args.output.format == Format::Json,
        quiet: args.quiet,
    };
    let (report, title) = gpufeed_live::monitor(&settings, &Printer)?;
    print_report(&report, &title, args.output.format, None)?;
    Ok(ExitCode::SUCCESS)
}

/// `gpufeed watch -- CMD`.
pub fn watch(args: &WatchArgs) -> Result<ExitCode> {
    let settings = WatchSettings {
        interval: args.interval,
        interval_ms: args.interval_ms,
        record: args.record.clone(),
        attach_rate: args.attach_rate,
        no_attach: args.no_attach,
        json: args.output.format == Format::Json,
        command: args.command.clone(),
    };
    let w = gpufeed_live::watch(&settings, &Printer)?;
    print_report(&w.report, &w.title, args.output.format, Some(&w.command))?;
    // Exit codes are 0..=255; a shell shows the same number.
    Ok(ExitCode::from(
        u8::try_from(w.code.rem_euclid(256)).unwrap_or(u8::MAX),
    ))
}
