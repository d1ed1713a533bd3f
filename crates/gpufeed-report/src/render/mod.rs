//! The renderers: one trait, one file per format. They only format; they never collect,
//! measure or read a file.

mod html;
mod json;
mod markdown;
mod svg;

pub use html::Html;
pub use json::Json;
pub use markdown::Markdown;

use crate::model::{Report, Stage, Status};

/// Formats a [`Report`].
pub trait Renderer {
    /// The whole file.
    fn render(&self, report: &Report) -> String;
}

/// A stage's row in the stages table: its time (`-` when skipped) and its note (the
/// error when it failed).
fn stage_row(s: &Stage) -> (String, &str) {
    let time = if s.status == Status::Skipped {
        "-".to_owned()
    } else {
        duration(s.seconds)
    };
    let note = match s.status {
        Status::Failed => s.error.as_deref(),
        _ => s.note.as_deref(),
    };
    (time, note.unwrap_or(""))
}

/// `1.2 s`, `45 s`, `2 min 05 s`: a stage's wall time.
#[must_use]
pub fn duration(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 0.0 {
        "n/a".to_owned()
    } else if seconds < 10.0 {
        format!("{seconds:.1} s")
    } else if seconds < 120.0 {
        format!("{seconds:.0} s")
    } else {
        let s = seconds.round() as u64;
        format!("{} min {:02} s", s / 60, s % 60)
    }
}

/// A number with the digits it needs: `12345`, `123`, `12.3`, `1.23`, `0.0123`.
#[must_use]
pub fn num(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "n/a".to_owned()
    } else if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// What the benchmark's recommendation is worth next to the training step that gpufeed ran
/// with the same loader: the loader as configured against what the step consumed. `None`
/// without both, when the steps are the user's own loop (another loader), or when the step
/// is input-bound (its causes say what to change).
fn loader_vs_step(r: &Report) -> Option<String> {
    let d = r.profile_data.as_ref()?;
    let step = r.profile_step.as_ref().filter(|s| !s.is_own_loop())?;
    let consumed = step.samples_per_s()?;
    let delivered = d.samples_per_s;
    if !(consumed > 0.0 && delivered > 0.0 && consumed.is_finite() && delivered.is_finite()) {
        return None;
    }
    let x = delivered / consumed;
    Some(if x >= 1.0 {
        // An input-bound step waits for the loader however fast it is alone (the training
        // takes the cores it ran on): then the settings do matter, and the causes say why.
        if step.input_share() >= gpufeed_stats::thresholds::INPUT_BOUND_MODERATE {
            return None;
        }
        format!(
            "the loader as configured already delivers {delivered:.0} samples/s, {} the \
             {consumed:.0} samples/s the training step consumed, which waits for data {:.1} % \
             of its time: these settings matter only once the step is about that much faster",
            times(x),
            100.0 * step.input_share()
        )
    } else {
        format!(
            "the loader as configured delivers {delivered:.0} samples/s, less than the \
             {consumed:.0} samples/s the training step consumed: these settings feed it faster"
        )
    })
}

/// The sentence with its first letter upper case.
fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

/// `2.5x`, `16x`, `at least 20x`: two significant figures, a bound past
/// `ESTIMATE_BOUND_SPEEDUP`.
fn times(x: f64) -> String {
    gpufeed_contract::estimate::speedup_text(x)
}

/// `10.0 steps/s, 160 samples/s`, or without the samples when they are not known.
fn step_rate(doc: &crate::model::StepPhases) -> String {
    match doc.samples_per_s() {
        Some(v) => format!("{:.1} steps/s, {v:.0} samples/s", doc.steps_per_s()),
        None => format!("{:.1} steps/s", doc.steps_per_s()),
    }
}

/// What a step profile measured, from its `config`: model, device, precision, steps; for
/// the user's own loop, what timed it and how.
fn step_setup(doc: &crate::model::StepPhases) -> String {
    use crate::model::StepPhases;
    match doc {
        StepPhases::OwnLoop(d) => {
            let sync = if d.sync {
                ", the device synchronised at each phase boundary"
            } else {
                ", without a device sync at the phase boundaries"
            };
            format!(
                "your own training loop, timed by `{}`{sync}: {} timed steps after {} warm-up",
                d.source, d.step.samples, d.warmup
            )
        }
        StepPhases::Model(d) => {
            let c = &d.config;
            let preset = c
                .model
                .get("preset")
                .and_then(|p| p.as_str())
                .unwrap_or("?");
            let params = c
                .model
                .get("parameters")
                .and_then(serde_json::Value::as_u64)
                .map_or_else(String::new, |p| format!(" ({p} parameters)"));
            format!(
                "model `{preset}`{params} on {}, {}, {} timed steps after {} warm-up",
                c.device, c.dtype, d.step.samples, c.warmup_steps
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_numbers() {
        assert_eq!(duration(1.24), "1.2 s");
        assert_eq!(duration(45.2), "45 s");
        assert_eq!(duration(125.0), "2 min 05 s");
        assert_eq!(duration(f64::NAN), "n/a");
        assert_eq!(num(12345.6), "12346");
        assert_eq!(num(0.01234), "0.012");
        assert_eq!(num(0.0), "0");
    }
}
