//! The plots of a profiler trace (`analyze --trace` with a PyTorch or TensorFlow profiler
//! trace): each step as a stacked bar of where its time went, and each rank's GPU idle
//! time split as HTA splits it, per stream. Same hand-written SVG as the other plots
//! ([`super`]): every string through [`esc`], every number through [`c`].

use std::fmt::Write as _;

use gpufeed_kineto::RankReport;
use gpufeed_kineto::hta::StreamIdle;
use gpufeed_kineto::steps::StepFigures;

use super::{Frame, LEFT, RIGHT, TOP, W, axes, c, esc, open};
use crate::render::num;

/// Steps drawn at most: past it, the first ones are drawn and the caption says so.
pub const MAX_STEP_BARS: usize = 300;

/// Stream rows drawn at most in the idle breakdown.
pub const MAX_IDLE_ROWS: usize = 48;

/// One part of a step's bar: its label, colour and value in µs.
struct Part {
    label: &'static str,
    colour: &'static str,
    of: fn(&StepFigures) -> f64,
}

/// The parts of a step, bottom up: the step's time is the GPU's busy time (compute, copies,
/// other GPU work) plus its idle time (charged to data wait, copy wait, or the rest).
const PARTS: [Part; 5] = [
    Part {
        label: "data wait",
        colour: "#d7301f",
        of: |s| s.data_wait_us,
    },
    Part {
        label: "copy (host to device)",
        colour: "#fc8d59",
        of: |s| s.copy_wait_us + s.h2d_us,
    },
    Part {
        label: "compute",
        colour: "#2b8cbe",
        of: |s| s.compute_us,
    },
    Part {
        label: "other GPU work",
        colour: "#7bccc4",
        of: |s| (s.gpu_busy_us - s.compute_us - s.h2d_us).max(0.0),
    },
    Part {
        label: "idle (sync, launch, host)",
        colour: "#bdbdbd",
        of: |s| s.sync_wait_us + s.launch_wait_us + s.other_idle_us,
    },
];

/// Each step of a rank as a stacked bar (ms): data wait, copy, compute, other GPU work,
/// idle.
#[must_use]
pub fn steps_plot(r: &RankReport, title: &str) -> String {
    let steps = &r.steps[..r.steps.len().min(MAX_STEP_BARS)];
    let mut o = String::new();
    let hi = steps.iter().map(|s| s.dur_us / 1e3).fold(0.0, f64::max);
    let (first, last) = match (steps.first(), steps.last()) {
        (Some(a), Some(b)) => (a.step as f64, b.step as f64),
        _ => (0.0, 1.0),
    };
    let f = Frame::new(first - 0.5, last.max(first) + 0.5, 0.0, hi * 1.08);
    // The legend gets a line of its own below the x axis' label.
    open(&mut o, "plot-profiler-steps", title, super::H + LEGEND_H);
    axes(&mut o, &f, "step", "ms", true);
    let width = ((f.x(1.0) - f.x(0.0)) * 0.7).clamp(1.0, 40.0);
    for s in steps {
        let x = f.x(s.step as f64) - width / 2.0;
        let mut base = 0.0;
        for p in &PARTS {
            let v = (p.of)(s) / 1e3;
            if !(v.is_finite() && v > 0.0) {
                continue;
            }
            let (y_top, y_bottom) = (f.y(base + v), f.y(base));
            let _ = write!(
                o,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>step {}: {} {} ms of {} ms</title></rect>",
                c(x),
                c(y_top),
                c(width),
                c((y_bottom - y_top).max(0.0)),
                p.colour,
                s.step,
                esc(p.label),
                esc(&num(v)),
                esc(&num(s.dur_us / 1e3)),
            );
            base += v;
        }
    }
    o.push_str(&legend(
        PARTS.iter().map(|p| (p.label, p.colour)),
        super::H + LEGEND_H - 6.0,
    ));
    o.push_str("</svg>");
    o
}

/// The height of a legend's line.
const LEGEND_H: f64 = 20.0;

/// A legend on one line at `y`, from the plot's left edge.
fn legend<'a>(items: impl Iterator<Item = (&'a str, &'a str)>, y: f64) -> String {
    let mut o = String::from("<g class=\"legend\">");
    let mut x = LEFT;
    for (label, colour) in items {
        let _ = write!(
            o,
            "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{colour}\"/>\
             <text x=\"{}\" y=\"{}\">{}</text>",
            c(x),
            c(y - 9.0),
            c(x + 14.0),
            c(y),
            esc(label),
        );
        // About 6.5 px a character at the plots' 11 px, with room to spare.
        x += 26.0 + 6.5 * label.chars().count() as f64;
    }
    o.push_str("</g>");
    o
}

/// The parts of a stream's idle time, as HTA splits it.
const IDLE_PARTS: [(&str, &str); 3] = [
    ("host wait", "#e6550d"),
    ("kernel wait (< 30 µs)", "#fdae6b"),
    ("other", "#9e9e9e"),
];

fn idle_values(s: &StreamIdle) -> [f64; 3] {
    [s.host_wait_us, s.kernel_wait_us, s.other_us]
}

/// Each rank's GPU idle time per stream, split into host wait, kernel wait and other
/// (HTA's idle-time breakdown), as shares of the stream's idle time; streams that never
/// idle are left out.
#[must_use]
pub fn idle_plot(ranks: &[RankReport]) -> String {
    let rows: Vec<(u32, &StreamIdle)> = ranks
        .iter()
        .flat_map(|r| r.idle_breakdown.iter().map(move |s| (r.rank, s)))
        .filter(|(_, s)| idle_values(s).iter().sum::<f64>() > 0.0)
        .collect();
    let shown = &rows[..rows.len().min(MAX_IDLE_ROWS)];
    let (x0, x1, y0, bh, gap) = (150.0, W - RIGHT - 84.0, TOP + 12.0, 16.0, 6.0);
    let h = y0 + shown.len() as f64 * (bh + gap) + LEGEND_H + 8.0;
    let mut o = String::new();
    open(
        &mut o,
        "plot-profiler-idle",
        "GPU idle time per rank and stream: host wait, kernel wait, other (HTA)",
        h,
    );
    for (i, (rank, s)) in shown.iter().enumerate() {
        let y = y0 + i as f64 * (bh + gap);
        let values = idle_values(s);
        let total: f64 = values.iter().sum();
        let _ = write!(
            o,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">rank {rank} · stream {}</text>",
            c(x0 - 8.0),
            c(y + bh - 4.0),
            s.stream,
        );
        let mut x = x0;
        for ((label, colour), v) in IDLE_PARTS.iter().zip(values) {
            let w = (v.max(0.0) / total) * (x1 - x0);
            if !(w.is_finite() && w > 0.0) {
                continue;
            }
            let _ = write!(
                o,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{bh}\" fill=\"{colour}\"><title>rank {rank}, stream {}: {} {} ms, {:.1} % of its idle time</title></rect>",
                c(x),
                c(y),
                c(w),
                s.stream,
                esc(label),
                esc(&num(v / 1e3)),
                100.0 * v / total,
            );
            x += w;
        }
        let _ = write!(
            o,
            "<text x=\"{}\" y=\"{}\">{} ms idle</text>",
            c(x1 + 6.0),
            c(y + bh - 4.0),
            esc(&num(total / 1e3)),
        );
    }
    o.push_str(&legend(IDLE_PARTS.iter().copied(), h - 10.0));
    o.push_str("</svg>");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(n: i64, data: f64, compute: f64, idle: f64) -> StepFigures {
        StepFigures {
            step: n,
            dur_us: data + compute + idle,
            gpu_busy_us: compute,
            compute_us: compute,
            data_wait_us: data,
            other_idle_us: idle,
            ..StepFigures::default()
        }
    }

    /// A bar is as tall as its step: its parts add up to the step's time.
    #[test]
    fn the_parts_of_a_step_add_up_to_it() {
        let s = StepFigures {
            dur_us: 1000.0,
            gpu_busy_us: 600.0,
            compute_us: 400.0,
            h2d_us: 150.0,
            data_wait_us: 100.0,
            copy_wait_us: 50.0,
            sync_wait_us: 100.0,
            launch_wait_us: 50.0,
            other_idle_us: 100.0,
            ..StepFigures::default()
        };
        let sum: f64 = PARTS.iter().map(|p| (p.of)(&s)).sum();
        assert!((sum - s.dur_us).abs() < 1e-9, "{sum}");
    }

    #[test]
    fn plots_hold_their_bars_and_nothing_non_finite() {
        let mut r = RankReport {
            rank: 3,
            file: "<rank3>.json".into(),
            device: None,
            device_id: None,
            devices: Vec::new(),
            markers: None,
            cycles: None,
            window: gpufeed_kineto::report::Window {
                applied: false,
                gpu_events_in_file: 0,
                gpu_events_analysed: 0,
                steps_in_file: 2,
                launch_calls: 0,
            },
            temporal: None,
            idle_breakdown: vec![
                StreamIdle {
                    stream: 7,
                    host_wait_us: 300.0,
                    kernel_wait_us: 10.0,
                    other_us: 0.0,
                    ..StreamIdle::default()
                },
                StreamIdle {
                    stream: 9,
                    ..StreamIdle::default()
                },
            ],
            kernel_types: Vec::new(),
            steps: vec![step(5, 300.0, 600.0, 100.0), step(6, 0.0, f64::NAN, 50.0)],
            step_time: None,
            shares: None,
            launch: gpufeed_kineto::steps::LaunchStats::default(),
            verdict: None,
            level: None,
            evidence: Vec::new(),
            warmup_steps: 0,
            no_verdict: None,
            waits_for: None,
            fix: None,
            causes: Vec::new(),
            truncated_at: None,
        };
        let svg = steps_plot(&r, "steps of <rank 3>");
        assert!(
            svg.contains("step 5: data wait 0.300 ms of 1.00 ms"),
            "{svg}"
        );
        assert!(svg.contains("steps of &lt;rank 3&gt;"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        let idle = idle_plot(std::slice::from_ref(&r));
        assert!(idle.contains("rank 3 · stream 7"), "{idle}");
        assert!(
            !idle.contains("stream 9"),
            "a stream that never idles has no row"
        );
        assert!(idle.contains("96.8 % of its idle time"), "{idle}");
        r.steps.clear();
        assert!(steps_plot(&r, "none").ends_with("</svg>"));
    }
}
