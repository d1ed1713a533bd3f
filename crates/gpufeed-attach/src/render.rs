//! The `attach` document as people read it: the verdict first, then the evidence, the GPUs,
//! the fix and what the sampling cost.

use gpufeed_contract::Attach;

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
            gpufeed_contract::AttachVerdict::SyncBound => "drop the host synchronisations",
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
