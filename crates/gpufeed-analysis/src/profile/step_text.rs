//! The text report of `gpufeed profile step`: the verdict first, then the figures behind it.

use std::fmt::Write as _;

use gpufeed_train::verdict::Level;

use gpufeed_contract::StepProfile;

/// The head of a step report (`profile step`, and a step recording in `trace`): the
/// verdict with its level, one evidence line each, the fix.
pub fn verdict_head(
    o: &mut String,
    verdict: &str,
    level: Option<Level>,
    evidence: &[String],
    fix: &str,
) {
    let level = match level {
        Some(Level::High) => " (high)",
        Some(Level::Moderate) => " (moderate)",
        None => "",
    };
    let _ = writeln!(o, "{verdict}{level}");
    for e in evidence {
        let _ = writeln!(o, "  {e}");
    }
    let _ = writeln!(o, "  fix: {fix}");
}

/// Renders the report.
#[must_use]
pub fn render(d: &StepProfile) -> String {
    let mut o = String::new();
    verdict_head(&mut o, d.verdict.as_str(), d.level, &d.evidence, &d.fix);
    let c = &d.config;
    let _ = writeln!(
        o,
        "\nmodel `{}` ({} parameters) on {} ({}), batches staged on {}; {} steps timed after {} warm-up, device {}",
        c.model["preset"].as_str().unwrap_or("?"),
        c.model["parameters"],
        c.device,
        c.dtype,
        c.data_device,
        d.step.samples,
        c.warmup_steps,
        if c.sync {
            "synchronised before each phase timer"
        } else {
            "not synchronised (phases show launch times on a GPU)"
        }
    );
    let s = &d.step;
    let _ = writeln!(
        o,
        "step: mean {:.3} ms, std {:.3}, p95 {:.3}, max {:.3}, cv {:.2}, {} outlier(s), {}; {:.2} steps/s, {:.1} samples/s",
        s.mean_ms,
        s.std_ms,
        s.p95_ms,
        s.max_ms,
        s.cv,
        s.outliers,
        s.verdict.as_str(),
        d.steps_per_s,
        d.samples_per_s
    );
    let _ = writeln!(o, "\nphase          mean ms    std ms   share");
    for (name, p) in &d.phases.0 {
        let _ = writeln!(
            o,
            "{name:<12} {:>9.3} {:>9.3} {:>6.1} %",
            p.mean_ms,
            p.std_ms,
            100.0 * p.share
        );
    }
    let _ = writeln!(
        o,
        "{:<12} {:>9} {:>9} {:>6.1} %  (cleanup after the optimizer)",
        "unaccounted",
        "",
        "",
        100.0 * d.unaccounted_share
    );
    if let Some(v) = &d.overhead {
        let _ = writeln!(
            o,
            "\ninstrumentation, the same {} batches run each way: median step {:.3} ms with phase timers vs {:.3} ms without ({:+.2} %)",
            v.pairs,
            v.timed_median_ms,
            v.untimed_median_ms,
            100.0 * v.timer_share
        );
        if let (Some(synced), Some(share)) = (v.synced_median_ms, v.sync_share) {
            let _ = writeln!(
                o,
                "syncing before each phase: median step {synced:.3} ms vs {:.3} ms untimed ({:+.2} %: the host/device overlap the syncs remove)",
                v.untimed_median_ms,
                100.0 * share
            );
        }
    }
    let _ = writeln!(
        o,
        "loss: {:.4} at the first timed step, {:.4} at the last",
        d.loss.first, d.loss.last
    );
    o
}
