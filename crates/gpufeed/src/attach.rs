//! `gpufeed attach PID`: parses the window, runs `gpufeed-attach` and prints its `attach`
//! document (text or JSON), once or, with `--live`, after every window. The sampling and
//! the judgement live in `gpufeed-attach`.

use std::io::{self, IsTerminal as _};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::{Context as _, Result};
use signal_hook::consts::{SIGINT, SIGTERM};

use crate::cli::{AttachArgs, Format};
use crate::printer;

/// `gpufeed attach PID`.
pub fn attach(args: &AttachArgs) -> Result<ExitCode> {
    let mut opts = gpufeed_attach::Options {
        pid: args.pid,
        duration: args.duration,
        rate_hz: args.rate,
        nvml: true,
        stop: None,
    };
    if args.live {
        let stop = Arc::new(AtomicBool::new(false));
        for signal in [SIGINT, SIGTERM] {
            signal_hook::flag::register(signal, Arc::clone(&stop))
                .context("failed to catch Ctrl-C")?;
        }
        opts.stop = Some(stop);
        return live(&opts, args.format);
    }
    let doc = gpufeed_attach::attach(&opts)?;
    printer::export(args.format, &doc, gpufeed_attach::render)?;
    Ok(ExitCode::SUCCESS)
}

/// `--live`: each window as it ends. On a terminal the text is a panel redrawn in place
/// (with the data-wait share of every window so far); piped, one line per window, so a log
/// reads as a history; JSON is one document per line.
fn live(opts: &gpufeed_attach::Options, format: Format) -> Result<ExitCode> {
    let panel = format == Format::Text && io::stdout().is_terminal();
    let start = Instant::now();
    let mut waits: Vec<f64> = Vec::new();
    let mut failed: Option<io::Error> = None;
    let windows = gpufeed_attach::live(opts, |doc| {
        waits.push(doc.shares.data_wait);
        let text = match format {
            Format::Json => serde_json::to_string(doc).map(|mut t| {
                t.push('\n');
                t
            }),
            Format::Text if panel => Ok(format!(
                "\x1b[2J\x1b[H{}",
                gpufeed_attach::live_panel(doc, &waits, start.elapsed().as_secs_f64())
            )),
            Format::Text => Ok(format!(
                "+{:.1} s {}\n",
                start.elapsed().as_secs_f64(),
                gpufeed_attach::live_line(doc)
            )),
        };
        match text
            .map_err(io::Error::from)
            .and_then(|t| printer::data_while_read(&t))
        {
            Ok(read) => read,
            Err(e) => {
                failed = Some(e);
                false
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(e).context("failed to write the live report");
    }
    if format == Format::Text {
        printer::note(&format!(
            "attach --live: {windows} window{} reported",
            if windows == 1 { "" } else { "s" }
        ));
    }
    Ok(ExitCode::SUCCESS)
}
