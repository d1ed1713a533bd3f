//! The text report of a phase-steps document: the verdict first, then its evidence and
//! fix, the run, the step statistics and the phase table.

use std::fmt::Write as _;

use super::PhaseSteps;
use crate::profile::step_text::verdict_head;

/// The report `gpufeed trace FILE` prints for a step recording, and `str()` of the Python
/// `StepReport`.
#[must_use]
pub fn render_text(d: &PhaseSteps) -> String {
    let mut o = String::new();
    // Writing into a String cannot fail; the results are ignored deliberately.
    verdict_head(&mut o, d.verdict.as_str(), d.level, &d.evidence, &d.fix);
    o.push_str(&gpufeed_contract::estimate::lines(
        d.causes
            .iter()
            .map(|c| (c.cause.as_str(), c.if_fixed.as_ref())),
        d.step.median_ms,
        "",
    ));
    let s = &d.step;
    let _ = writeln!(
        o,
        "\nyour own loop ({}): {} steps timed after {} warm-up, {}",
        d.source,
        s.samples,
        d.warmup,
        if d.sync {
            "the device synchronised at each phase boundary"
        } else {
            "no device sync at the phase boundaries (on a GPU, phases show when work was queued)"
        }
    );
    let cycle = match (s.period_steps, s.period_strength) {
        (Some(p), Some(r)) => format!(", a cycle every {p} steps (autocorrelation {r:.2})"),
        _ => String::new(),
    };
    let rate = match d.samples_per_s {
        Some(v) => format!("{:.2} steps/s, {v:.1} samples/s", d.steps_per_s),
        None => format!("{:.2} steps/s", d.steps_per_s),
    };
    let _ = writeln!(
        o,
        "step: mean {:.3} ms, std {:.3}, p95 {:.3}, max {:.3}, cv {:.2}, {} outlier(s), {}{cycle}; {rate}",
        s.mean_ms, s.std_ms, s.p95_ms, s.max_ms, s.cv, s.outliers, s.verdict,
    );
    let width = d
        .phases
        .names()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0)
        .max("unaccounted".len());
    let _ = writeln!(
        o,
        "\n{:<width$}  category   mean ms    std ms   share",
        "phase"
    );
    for (name, p) in &d.phases.0 {
        let only = if p.steps < s.samples {
            format!("  (in {} of {} steps)", p.steps, s.samples)
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "{name:<width$}  {:<8} {:>9.3} {:>9.3} {:>6.1} %{only}",
            p.category.as_str(),
            p.mean_ms,
            p.std_ms,
            100.0 * p.share
        );
    }
    let _ = writeln!(
        o,
        "{:<width$}  {:<8} {:>9} {:>9} {:>6.1} %  (outside every phase)",
        "unaccounted",
        "",
        "",
        "",
        100.0 * d.unaccounted_share
    );
    o
}
