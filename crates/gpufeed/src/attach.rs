//! `gpufeed attach PID`: parses the window, runs `gpufeed-attach` and prints its `attach`
//! document (text or JSON). The sampling and the judgement live in `gpufeed-attach`.

use std::process::ExitCode;

use anyhow::Result;
use gpufeed_contract::Attach;

use crate::cli::{AttachArgs, Format};
use crate::printer;

/// `gpufeed attach PID`.
pub fn attach(args: &AttachArgs) -> Result<ExitCode> {
    let opts = gpufeed_attach::Options {
        pid: args.pid,
        duration: args.duration,
        rate_hz: args.rate,
        nvml: true,
    };
    let doc = gpufeed_attach::attach(&opts)?;
    let text = match args.format {
        Format::Json => {
            let mut t = serde_json::to_string_pretty(&doc)?;
            t.push('\n');
            t
        }
        Format::Text => render(&doc),
    };
    printer::data(&text)?;
    Ok(ExitCode::SUCCESS)
}

/// The human report: verdict first, then the evidence and the fix.
#[must_use]
pub fn render(doc: &Attach) -> String {
    let mut o = format!("verdict: {}", doc.verdict);
    if let Some(level) = doc.level {
        o.push_str(&format!(" ({})", level.as_str()));
    }
    o.push_str(&format!(
        "\nprocess {} (Python {}{}), {} samples over {:.1} s at {} Hz\n\n",
        doc.pid,
        doc.python,
        doc.launcher
            .as_ref()
            .map(|l| format!(", launcher {l}, {} ranks", doc.ranks.len()))
            .unwrap_or_default(),
        doc.samples,
        doc.window_s,
        doc.rate_hz
    ));
    for e in &doc.evidence {
        o.push_str(&format!("  - {e}\n"));
    }
    if let Some(gpus) = &doc.gpus {
        for g in gpus {
            o.push_str(&format!(
                "  - GPU {}: {} busy, the job's processes {}\n",
                g.index,
                g.util_pct.map_or("?".to_owned(), |u| format!("{u:.0} %")),
                g.process_util_pct
                    .map_or("?".to_owned(), |u| format!("{u:.0} %"))
            ));
        }
    }
    o.push_str(&format!("\nfix: {}\n", doc.fix));
    o.push_str(&format!(
        "\ncost: {} stack reads, {:.3} ms of gpufeed's CPU per read\n",
        doc.cost.reads, doc.cost.cpu_ms_per_read
    ));
    o
}
