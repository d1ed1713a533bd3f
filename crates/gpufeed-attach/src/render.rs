//! The `attach` document as people read it: the verdict first, then the evidence, the GPUs,
//! the fix and what the sampling cost.

use gpufeed_contract::{Attach, AttachVerdict};

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
            .map(|l| format!(
                ", launcher {l}, {} rank{}",
                doc.ranks.len(),
                if doc.ranks.len() == 1 { "" } else { "s" }
            ))
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
    if let Some(f) = &doc.if_fixed {
        let words = match doc.verdict {
            AttachVerdict::SyncBound => "drop the host synchronisations",
            _ => "fix the input pipeline",
        };
        o.push_str(&format!(
            "if fixed: {} (assumes {})\n",
            f.line(words),
            f.assumes
        ));
    }
    o.push_str(&format!(
        "\ncost: {} stack reads, {:.3} ms of gpufeed's CPU per read\n",
        doc.cost.reads, doc.cost.cpu_ms_per_read
    ));
    o
}

/// One window of live mode on one line, for a log or a pipe: the time is the caller's.
/// `input-bound (high): data wait 61 %, sync 0 %, compute 39 %, checkpoint/logging 0 %,
/// other 0 % (500 samples, 5.0 s); at `main` (loop.py:32)`.
#[must_use]
pub fn live_line(doc: &Attach) -> String {
    let s = &doc.shares;
    let mut o = doc.verdict.to_string();
    if let Some(level) = doc.level {
        o.push_str(&format!(" ({})", level.as_str()));
    }
    o.push_str(&format!(
        ": data wait {}, sync {}, compute {}, checkpoint/logging {}, other {} ({} samples, {:.1} s)",
        pct0(s.data_wait),
        pct0(s.sync),
        pct0(s.compute),
        pct0(s.checkpoint_logging),
        pct0(s.other),
        doc.samples,
        doc.window_s
    ));
    let class = match doc.verdict {
        AttachVerdict::InputBound => Some("data_wait"),
        AttachVerdict::SyncBound => Some("sync"),
        AttachVerdict::ComputeBound => Some("compute"),
        AttachVerdict::Undetermined => None,
    };
    if let Some(top) = class
        .and_then(|c| doc.lines.iter().find(|l| l.class == c))
        .and_then(|l| l.top.first())
    {
        o.push_str(&format!(
            "; at `{}` ({}:{})",
            top.function,
            short_file(&top.file),
            top.line
        ));
    }
    if doc.exited {
        o.push_str("; the target exited");
    }
    o
}

fn pct0(x: f64) -> String {
    format!("{:.0} %", x * 100.0)
}

/// The file's name without its folders, as the evidence writes it.
fn short_file(file: &str) -> &str {
    file.rsplit('/').next().unwrap_or(file)
}

/// `gpufeed attach PID --live`'s panel on a terminal (redrawn in place by the caller): the
/// window's number and time, the data-wait share of every window so far (`waits`, oldest
/// first, at most the last 60 drawn) and the window's report.
#[must_use]
pub fn live_panel(doc: &Attach, waits: &[f64], elapsed_s: f64) -> String {
    format!(
        "gpufeed attach {} --live: window {}, {elapsed_s:.0} s in; Ctrl-C to stop\n\
         data wait by window (oldest first, at most the last 60): {}\n\n{}",
        doc.pid,
        waits.len(),
        spark(&waits[waits.len().saturating_sub(60)..]),
        render(doc)
    )
}

/// Shares (0-1) as a line of block characters, one per window.
fn spark(values: &[f64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    values
        .iter()
        .map(|v| {
            // Rounded to the nearest of the eight heights; the cast is of 0..=7.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let i = (v.clamp(0.0, 1.0) * 7.0).round() as usize;
            BARS[i]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::spark;

    #[test]
    fn spark_maps_shares_to_eight_heights() {
        assert_eq!(spark(&[0.0, 0.5, 1.0, 2.0, -1.0]), "▁▅██▁");
        assert_eq!(spark(&[]), "");
    }
}
