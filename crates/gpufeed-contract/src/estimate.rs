//! What fixing a cause is worth: `if_fixed`, the expected median step time with that cause
//! alone removed, on every ranked cause of every document that ranks causes (the
//! `profiler` document's `causes`, `phase-steps`' `causes`, `report.json`'s `causes`).
//!
//! The model of each estimate, and its limits, are in `docs/what-if.md`; each estimate
//! carries its assumption in one sentence (`assumes`), and a cause with no step-time model
//! (a doctor or config finding, a compute-bound step) carries `null` and the reason
//! (`no_estimate`).

use gpufeed_stats::thresholds::ESTIMATE_BOUND_SPEEDUP;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A speedup as the text gives it: two significant figures (`1.6x`, `16x`), and past
/// [`ESTIMATE_BOUND_SPEEDUP`] the bound, `at least 20x`, since what is left of the step is
/// then under its own measurement's spread.
#[must_use]
pub fn speedup_text(x: f64) -> String {
    if x >= ESTIMATE_BOUND_SPEEDUP {
        format!("at least {ESTIMATE_BOUND_SPEEDUP:.0}x")
    } else if x >= 10.0 {
        format!("{x:.0}x")
    } else {
        format!("{x:.1}x")
    }
}

/// Why a bound and not a figure, for a speedup past [`ESTIMATE_BOUND_SPEEDUP`]: "" below it.
#[must_use]
pub fn bound_reason(x: f64) -> &'static str {
    if x >= ESTIMATE_BOUND_SPEEDUP {
        "; the cause is over 95 % of the step, so what is left of it is under the steps' own \
         spread and no closer figure holds"
    } else {
        ""
    }
}

/// The expected median step time if one cause alone were removed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IfFixed {
    /// The expected median step, ms.
    pub step_ms: f64,
    /// The median step now over `step_ms`: 1.6 is 1.6 times as many steps per second.
    pub speedup: f64,
    /// What the estimate takes for granted, in one sentence.
    pub assumes: String,
}

impl IfFixed {
    /// From the median step now and the expected one; `None` when either is not a positive,
    /// finite time.
    #[must_use]
    pub fn new(now_ms: f64, step_ms: f64, assumes: impl Into<String>) -> Option<Self> {
        (now_ms.is_finite() && step_ms.is_finite() && now_ms > 0.0 && step_ms > 0.0).then(|| Self {
            step_ms,
            speedup: now_ms / step_ms,
            assumes: assumes.into(),
        })
    }

    /// The median step now, ms (`step_ms * speedup`).
    #[must_use]
    pub fn now_ms(&self) -> f64 {
        self.step_ms * self.speedup
    }

    /// The text report's line for a cause: "fix the input pipeline: 240 -> ~150 ms per
    /// step (1.6x)"; past [`ESTIMATE_BOUND_SPEEDUP`], "240 -> under 12 ms per step (at
    /// least 20x; ...)".
    #[must_use]
    pub fn line(&self, what: &str, now_ms: f64) -> String {
        if self.speedup >= ESTIMATE_BOUND_SPEEDUP {
            return format!(
                "{what}: {} -> under {} ms per step ({}{})",
                round_ms(now_ms),
                round_ms(now_ms / ESTIMATE_BOUND_SPEEDUP),
                speedup_text(self.speedup),
                bound_reason(self.speedup)
            );
        }
        format!(
            "{what}: {} -> ~{} ms per step ({})",
            round_ms(now_ms),
            round_ms(self.step_ms),
            speedup_text(self.speedup)
        )
    }
}

/// What fixing a cause is worth where only shares of the loop's time are known, not its
/// step time (`gpufeed attach`'s stack samples): the steps per second after over before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpeedupIfFixed {
    /// Steps per second with the cause removed over now: 1.6 is 1.6 times as many.
    pub speedup: f64,
    /// What the estimate takes for granted, in one sentence.
    pub assumes: String,
}

impl SpeedupIfFixed {
    /// Removing a `share` (0..1) of the loop's time: `1 / (1 - share)`. `None` for a share
    /// that is not in `(0, 1)`: nothing to remove, or nothing left.
    #[must_use]
    pub fn removing(share: f64, assumes: impl Into<String>) -> Option<Self> {
        (share > 0.0 && share < 1.0).then(|| Self {
            speedup: 1.0 / (1.0 - share),
            assumes: assumes.into(),
        })
    }

    /// The text report's line: "fix the input pipeline: ~1.6x the steps per second" (past
    /// [`ESTIMATE_BOUND_SPEEDUP`], "at least 20x ..." and why).
    #[must_use]
    pub fn line(&self, what: &str) -> String {
        let x = speedup_text(self.speedup);
        let approx = if self.speedup >= ESTIMATE_BOUND_SPEEDUP {
            ""
        } else {
            "~"
        };
        format!(
            "{what}: {approx}{x} the steps per second{}",
            bound_reason(self.speedup)
        )
    }
}

/// The words of a fix for a cause's id, as the text report's lines begin: "fix the
/// input pipeline".
#[must_use]
pub fn fix_words(cause: &str) -> String {
    match cause {
        "input-bound" => "fix the input pipeline".to_owned(),
        "transfer-bound" => "fix the host-to-device copies".to_owned(),
        "sync-bound" => "drop the host synchronisations".to_owned(),
        "launch-bound" => "close the kernel launch gaps".to_owned(),
        "host-bound" => "move the host's other work off the step".to_owned(),
        other => format!("fix {other}"),
    }
}

/// The text report's block: a heading and one line per cause with an estimate
/// (`(cause id, estimate)`), in their order; empty when none has one.
#[must_use]
pub fn lines<'a>(
    causes: impl IntoIterator<Item = (&'a str, Option<&'a IfFixed>)>,
    now_ms: f64,
    indent: &str,
) -> String {
    let mut o = String::new();
    for (id, f) in causes {
        if let Some(f) = f {
            o.push_str(indent);
            o.push_str("  ");
            o.push_str(&f.line(&fix_words(id), now_ms));
            o.push('\n');
        }
    }
    if o.is_empty() {
        return o;
    }
    format!(
        "{indent}if fixed (median step; each estimate's assumption is in the JSON's \
         `if_fixed.assumes`, the model in docs/what-if.md):\n{o}"
    )
}

/// A step time as people read it: whole milliseconds from 10 ms, one decimal below.
#[must_use]
pub fn round_ms(ms: f64) -> String {
    if ms >= 10.0 {
        format!("{ms:.0}")
    } else {
        format!("{ms:.1}")
    }
}

/// Orders causes by gain: the largest speedup first; a cause without an estimate after
/// every cause with one, in the order they came (their share). `key` gives a cause's
/// estimate.
pub fn sort_by_gain<T>(causes: &mut [T], key: impl Fn(&T) -> Option<&IfFixed>) {
    // A stable sort: equal gains (and causes without estimates) keep their share order.
    causes.sort_by(|a, b| {
        let g = |c: &T| key(c).map_or(f64::NEG_INFINITY, |f| f.speedup);
        g(b).total_cmp(&g(a))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two significant figures, and a bound where the model stops holding: "~155.2x" read
    /// as exact (issue 41).
    #[test]
    fn speedups_have_two_figures_and_a_bound() {
        assert_eq!(speedup_text(1.04), "1.0x");
        assert_eq!(speedup_text(1.64), "1.6x");
        assert_eq!(speedup_text(16.4), "16x");
        assert_eq!(speedup_text(155.2), "at least 20x");
        let s = SpeedupIfFixed::removing(0.99356, "a").unwrap_or_else(|| panic!("valid"));
        let line = s.line("fix the input pipeline");
        assert!(
            line.starts_with(
                "fix the input pipeline: at least 20x the steps per second; the cause is over 95 %"
            ),
            "{line}"
        );
        let f = IfFixed::new(240.0, 1.5, "a").unwrap_or_else(|| panic!("valid"));
        let line = f.line("fix the input pipeline", 240.0);
        assert!(
            line.starts_with("fix the input pipeline: 240 -> under 12 ms per step (at least 20x;"),
            "{line}"
        );
    }

    #[test]
    fn the_line_and_the_order() {
        let s = SpeedupIfFixed::removing(0.375, "a").unwrap_or_else(|| panic!("valid"));
        assert!((s.speedup - 1.6).abs() < 1e-12);
        assert_eq!(
            s.line("fix the input pipeline"),
            "fix the input pipeline: ~1.6x the steps per second"
        );
        assert!(SpeedupIfFixed::removing(0.0, "a").is_none());
        assert!(SpeedupIfFixed::removing(1.0, "a").is_none());
        let f = IfFixed::new(240.0, 150.0, "a").unwrap_or_else(|| panic!("valid"));
        assert!((f.speedup - 1.6).abs() < 1e-12);
        assert_eq!(
            f.line("fix the input pipeline", 240.0),
            "fix the input pipeline: 240 -> ~150 ms per step (1.6x)"
        );
        assert!(IfFixed::new(0.0, 1.0, "a").is_none());
        assert!(IfFixed::new(1.0, f64::NAN, "a").is_none());
        let mut v = vec![
            (1, None),
            (2, IfFixed::new(100.0, 90.0, "b")),
            (3, IfFixed::new(100.0, 50.0, "c")),
        ];
        sort_by_gain(&mut v, |c| c.1.as_ref());
        assert_eq!(v.iter().map(|c| c.0).collect::<Vec<_>>(), [3, 2, 1]);
    }
}
