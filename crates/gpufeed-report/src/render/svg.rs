//! The plots of `report.html`, as small hand-written SVG.
//!
//! Why not `plotters`: its SVG backend needs its font stack (`ttf-parser`/`font-kit` behind
//! the `ttf` feature) to lay out text, and without it labels are dropped or the build pulls
//! system font libraries; its output also changes between versions. Five plot shapes of a
//! few lines each (a line over time with shaded spans, a line, bars, a stacked bar, a heat
//! map) are about 300 lines here, with text laid out by the browser (`text-anchor`, the
//! page's sans-serif), a deterministic output for tests, and nothing to download.
//!
//! Every string that enters the SVG goes through [`esc`]; every number through [`c`],
//! which writes a non-finite value as 0 rather than an invalid attribute.

use std::fmt::Write as _;

use gpufeed_stats::thresholds::IDLE_UTIL_PCT;

use crate::model::{AcfSeries, Cell, Phase, UtilSeries};
use crate::render::num;

pub mod profiler;

/// Escapes text for HTML and SVG, in text and in attributes.
#[must_use]
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// A coordinate with one decimal; 0 for a non-finite value.
fn c(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.1}")
    } else {
        "0".to_owned()
    }
}

const W: f64 = 760.0;
const H: f64 = 240.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 40.0;

/// Data ranges mapped onto the plot area.
struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    h: f64,
}

impl Frame {
    fn new(x0: f64, x1: f64, y0: f64, y1: f64) -> Self {
        let fix = |a: f64, b: f64| {
            if !(a.is_finite() && b.is_finite()) {
                (0.0, 1.0)
            } else if b > a {
                (a, b)
            } else {
                (a, a + 1.0)
            }
        };
        let (x0, x1) = fix(x0, x1);
        let (y0, y1) = fix(y0, y1);
        Self {
            x0,
            x1,
            y0,
            y1,
            h: H,
        }
    }

    fn x(&self, v: f64) -> f64 {
        LEFT + (v - self.x0) / (self.x1 - self.x0) * (W - LEFT - RIGHT)
    }

    fn y(&self, v: f64) -> f64 {
        self.h - BOTTOM - (v - self.y0) / (self.y1 - self.y0) * (self.h - TOP - BOTTOM)
    }

    fn bottom(&self) -> f64 {
        self.h - BOTTOM
    }
}

/// A tick label with as many decimals as the tick step needs: `0.2`, `25`, `1.5`.
fn tick_label(v: f64, step: f64) -> String {
    let decimals = if step > 0.0 && step < 1.0 {
        (-step.log10().floor()) as usize
    } else {
        0
    };
    format!("{v:.decimals$}")
}

/// The step between round ticks of `lo..=hi`.
fn tick_step(lo: f64, hi: f64, target: usize) -> f64 {
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= target as f64 * 1.5)
        .unwrap_or(10.0 * mag)
}

/// About `target` round tick values (1, 2 or 5 times a power of ten) covering `lo..=hi`.
fn ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) {
        return vec![lo];
    }
    let step = tick_step(lo, hi, target);
    let mut v = (lo / step).ceil() * step;
    let mut out = Vec::new();
    let mut k = 0.0;
    let first = v;
    // Multiples of the step from the first, so that 0.1 + 0.1 + 0.1 does not drift.
    while v <= hi + step * 1e-9 && out.len() < 50 {
        out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        k += 1.0;
        v = first + k * step;
    }
    out
}

/// Opens an `<svg>` with its accessible title.
fn open(o: &mut String, id: &str, title: &str, h: f64) {
    let _ = write!(
        o,
        "<svg id=\"{id}\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {W} {h}\" \
         width=\"{W}\" height=\"{h}\" role=\"img\" aria-labelledby=\"{id}-title\">\
         <title id=\"{id}-title\">{}</title>\
         <text x=\"{LEFT}\" y=\"18\" class=\"ptitle\">{}</text>",
        esc(title),
        esc(title),
    );
}

/// Axes with ticks and labels.
fn axes(o: &mut String, f: &Frame, x_label: &str, y_label: &str, x_int: bool) {
    let _ = write!(
        o,
        "<g class=\"axis\"><line x1=\"{LEFT}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\"/>\
         <line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{b}\"/>",
        b = c(f.bottom()),
        r = c(W - RIGHT),
    );
    let y_step = tick_step(f.y0, f.y1, 4);
    for t in ticks(f.y0, f.y1, 4) {
        let y = f.y(t);
        let _ = write!(
            o,
            "<line class=\"grid\" x1=\"{LEFT}\" y1=\"{y}\" x2=\"{r}\" y2=\"{y}\"/>\
             <text x=\"{tx}\" y=\"{ty}\" text-anchor=\"end\">{}</text>",
            esc(&tick_label(t, y_step)),
            y = c(y),
            r = c(W - RIGHT),
            tx = c(LEFT - 6.0),
            ty = c(y + 4.0),
        );
    }
    let x_step = tick_step(f.x0, f.x1, 8);
    for t in ticks(f.x0, f.x1, 8) {
        if x_int && t.fract() != 0.0 {
            continue;
        }
        let x = f.x(t);
        let _ = write!(
            o,
            "<line x1=\"{x}\" y1=\"{b}\" x2=\"{x}\" y2=\"{b2}\"/>\
             <text x=\"{x}\" y=\"{ty}\" text-anchor=\"middle\">{}</text>",
            // Whole numbers (steps, batches) are labelled without decimals.
            esc(&tick_label(t, if x_int { x_step.max(1.0) } else { x_step })),
            x = c(x),
            b = c(f.bottom()),
            b2 = c(f.bottom() + 4.0),
            ty = c(f.bottom() + 16.0),
        );
    }
    let _ = write!(
        o,
        "<text x=\"{x}\" y=\"{y}\" text-anchor=\"middle\">{}</text>\
         <text x=\"14\" y=\"{ym}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {ym})\">{}</text></g>",
        esc(x_label),
        esc(y_label),
        x = c((LEFT + W - RIGHT) / 2.0),
        y = c(f.h - 6.0),
        ym = c((TOP + f.bottom()) / 2.0),
    );
}

fn points(f: &Frame, xs: impl Iterator<Item = f64>, ys: impl Iterator<Item = f64>) -> String {
    let mut s = String::new();
    for (x, y) in xs.zip(ys) {
        let _ = write!(s, "{},{} ", c(f.x(x)), c(f.y(y)));
    }
    s.trim_end().to_owned()
}

/// GPU utilisation over time, idle gaps shaded, the idle level dashed.
#[must_use]
pub fn util_plot(s: &UtilSeries, caption: &str) -> String {
    let mut o = String::new();
    let id = format!("plot-util-{}", s.gpu);
    let end = s.samples as f64 * s.interval_s;
    let f = Frame::new(0.0, end, 0.0, 100.0);
    open(&mut o, &id, caption, H);
    for &(start, len) in &s.idle_gaps_s {
        let (x0, x1) = (f.x(start), f.x(start + len));
        let _ = write!(
            o,
            "<rect class=\"gap\" x=\"{}\" y=\"{TOP}\" width=\"{}\" height=\"{}\"><title>idle {} s to {} s</title></rect>",
            c(x0),
            c((x1 - x0).max(0.5)),
            c(f.bottom() - TOP),
            esc(&num(start)),
            esc(&num(start + len)),
        );
    }
    axes(&mut o, &f, "time (s)", "utilisation (%)", false);
    let y_idle = f.y(IDLE_UTIL_PCT);
    let _ = write!(
        o,
        "<line class=\"level\" x1=\"{LEFT}\" y1=\"{y}\" x2=\"{r}\" y2=\"{y}\"/>",
        y = c(y_idle),
        r = c(W - RIGHT),
    );
    let whole = s.samples <= s.t_s.len();
    if whole {
        let pts = points(&f, s.t_s.iter().copied(), s.max.iter().copied());
        let _ = write!(o, "<polyline class=\"line\" points=\"{pts}\"/>");
    } else {
        // Buckets: the band between each bucket's lowest and highest value.
        let top = points(&f, s.t_s.iter().copied(), s.max.iter().copied());
        let bottom = points(&f, s.t_s.iter().rev().copied(), s.min.iter().rev().copied());
        let _ = write!(o, "<polygon class=\"band\" points=\"{top} {bottom}\"/>");
    }
    // Legends sit on the x label's line, at the right: the title above may be long.
    let _ = write!(
        o,
        "<g class=\"legend\"><rect class=\"gap\" x=\"{lx}\" y=\"{ry}\" width=\"12\" height=\"10\"/>\
         <text x=\"{tx}\" y=\"{ty}\">idle gap (&lt; {} %)</text></g></svg>",
        IDLE_UTIL_PCT,
        lx = c(W - RIGHT - 130.0),
        tx = c(W - RIGHT - 114.0),
        ry = c(H - 15.0),
        ty = c(H - 6.0),
    );
    o
}

/// A series of times in order, with its median dashed.
#[must_use]
pub fn series_plot(id: &str, title: &str, s: &AcfSeries, x_label: &str) -> String {
    let mut o = String::new();
    let hi = s.values.iter().copied().fold(0.0, f64::max);
    let f = Frame::new(
        0.0,
        s.values.len().saturating_sub(1).max(1) as f64,
        0.0,
        hi * 1.08,
    );
    open(&mut o, id, title, H);
    axes(&mut o, &f, x_label, "ms", true);
    let pts = points(
        &f,
        (0..s.values.len()).map(|i| i as f64),
        s.values.iter().copied(),
    );
    let _ = write!(o, "<polyline class=\"line\" points=\"{pts}\"/></svg>");
    o
}

/// Autocorrelation by lag, the white-noise bound dashed, the period's bar marked.
#[must_use]
pub fn acf_plot(id: &str, title: &str, s: &AcfSeries, unit: &str) -> String {
    let mut o = String::new();
    let lags = s.acf.len().saturating_sub(1).max(1);
    let lo = s
        .acf
        .iter()
        .copied()
        .fold(0.0, f64::min)
        .min(-s.bound.unwrap_or(0.0))
        .max(-1.0);
    let f = Frame::new(0.0, lags as f64 + 1.0, lo.min(-0.2), 1.0);
    open(&mut o, id, title, H);
    axes(
        &mut o,
        &f,
        &format!("lag ({unit})"),
        "autocorrelation",
        true,
    );
    let width = ((f.x(1.0) - f.x(0.0)) * 0.7).max(1.0);
    let zero = f.y(0.0);
    for (k, &r) in s.acf.iter().enumerate().skip(1) {
        let y = f.y(r);
        let class = if s.period == Some(k) {
            "bar peak"
        } else {
            "bar"
        };
        let _ = write!(
            o,
            "<rect class=\"{class}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>lag {k}: {}</title></rect>",
            c(f.x(k as f64) - width / 2.0),
            c(y.min(zero)),
            c(width),
            c((y - zero).abs()),
            esc(&if r.is_finite() {
                format!("{r:.3}")
            } else {
                "n/a".to_owned()
            }),
        );
    }
    if let Some(b) = s.bound {
        for v in [b, -b] {
            let _ = write!(
                o,
                "<line class=\"level\" x1=\"{LEFT}\" y1=\"{y}\" x2=\"{r}\" y2=\"{y}\"/>",
                y = c(f.y(v)),
                r = c(W - RIGHT),
            );
        }
    }
    if let Some(p) = s.period {
        let _ = write!(
            o,
            "<text class=\"note\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">period {p}</text>",
            c(f.x(p as f64)),
            c(f.y(s.acf.get(p).copied().unwrap_or(0.0).max(0.0)) - 6.0),
        );
    }
    let _ = write!(
        o,
        "<g class=\"legend\"><line class=\"level\" x1=\"{lx}\" y1=\"{ly}\" x2=\"{lx2}\" y2=\"{ly}\"/>\
         <text x=\"{tx}\" y=\"{ty}\">white-noise bound</text></g></svg>",
        lx = c(W - RIGHT - 130.0),
        lx2 = c(W - RIGHT - 116.0),
        tx = c(W - RIGHT - 110.0),
        ly = c(H - 10.0),
        ty = c(H - 6.0),
    );
    o
}

/// Colours of the phases: warm for the input phases, cool for the compute phases.
fn phase_colour(name: &str) -> &'static str {
    match name {
        "data_wait" => "#d7301f",
        "h2d_copy" => "#fc8d59",
        "device_copy" => "#fdbb84",
        "forward" => "#2b8cbe",
        "loss" => "#7bccc4",
        "backward" => "#0868ac",
        "optimizer" => "#a8ddb5",
        _ => "#9e9e9e",
    }
}

/// The mean step as one bar cut into its phases, with a legend.
#[must_use]
pub fn phases_plot(phases: &[(String, Phase)], step_ms: f64) -> String {
    let rows = phases.len().div_ceil(2) + 1;
    let h = 90.0 + rows as f64 * 20.0;
    let mut o = String::new();
    open(
        &mut o,
        "plot-phases",
        &format!("Where a {} ms step goes", num(step_ms)),
        h,
    );
    let (x0, x1, y, bh) = (LEFT, W - RIGHT, 34.0, 30.0);
    let mut x = x0;
    let mut items: Vec<(String, f64, f64, &str)> = phases
        .iter()
        .map(|(n, p)| (n.clone(), p.share, p.mean_ms, phase_colour(n)))
        .collect();
    let rest = 1.0 - items.iter().map(|i| i.1.max(0.0)).sum::<f64>();
    if rest > 0.005 {
        items.push((
            "unaccounted".to_owned(),
            rest,
            rest * step_ms,
            phase_colour(""),
        ));
    }
    for (name, share, mean, colour) in &items {
        let w = (share.clamp(0.0, 1.0) * (x1 - x0)).min(x1 - x);
        let _ = write!(
            o,
            "<rect x=\"{}\" y=\"{y}\" width=\"{}\" height=\"{bh}\" fill=\"{colour}\"><title>{}: {} ms, {:.1} %</title></rect>",
            c(x),
            c(w.max(0.0)),
            esc(name),
            esc(&num(*mean)),
            share * 100.0,
        );
        x += w.max(0.0);
    }
    for (i, (name, share, mean, colour)) in items.iter().enumerate() {
        let lx = x0 + (i % 2) as f64 * 340.0;
        let ly = y + bh + 24.0 + (i / 2) as f64 * 20.0;
        let _ = write!(
            o,
            "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{colour}\"/>\
             <text x=\"{}\" y=\"{}\">{}: {} ms ({:.1} %)</text>",
            c(lx),
            c(ly - 10.0),
            c(lx + 18.0),
            c(ly),
            esc(name),
            esc(&num(*mean)),
            share * 100.0,
        );
    }
    o.push_str("</svg>");
    o
}

/// The benchmark grid as a heat map: batch sizes down, workers across, darker is faster;
/// the recommended cell outlined.
#[must_use]
pub fn heat_map(grid: &[Cell], best: Option<(usize, usize)>) -> String {
    let mut sizes: Vec<usize> = grid.iter().map(|c| c.batch_size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut workers: Vec<usize> = grid.iter().map(|c| c.workers).collect();
    workers.sort_unstable();
    workers.dedup();
    let (cw, ch, x0, y0) = (110.0, 34.0, 120.0, 56.0);
    let h = y0 + ch * sizes.len() as f64 + 30.0;
    let max = grid
        .iter()
        .map(|c| c.samples_per_s)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let mut o = String::new();
    open(
        &mut o,
        "plot-grid",
        "Benchmark grid: samples/s by batch size and workers",
        h,
    );
    for (j, w) in workers.iter().enumerate() {
        let _ = write!(
            o,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{w} worker{}</text>",
            c(x0 + (j as f64 + 0.5) * cw),
            c(y0 - 8.0),
            if *w == 1 { "" } else { "s" },
        );
    }
    for (i, b) in sizes.iter().enumerate() {
        let y = y0 + i as f64 * ch;
        let _ = write!(
            o,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">batch {b}</text>",
            c(x0 - 8.0),
            c(y + ch / 2.0 + 4.0),
        );
        for (j, w) in workers.iter().enumerate() {
            let x = x0 + j as f64 * cw;
            let Some(cell) = grid.iter().find(|c| c.batch_size == *b && c.workers == *w) else {
                continue;
            };
            let t = if max > 0.0 {
                (cell.samples_per_s / max).clamp(0.0, 1.0)
            } else {
                0.0
            };
            // From a pale to a deep blue.
            let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
            let fill = format!(
                "#{:02x}{:02x}{:02x}",
                mix(239.0, 8.0),
                mix(243.0, 69.0),
                mix(255.0, 148.0)
            );
            let text = if t > 0.55 { "on-dark" } else { "on-light" };
            let outline = if best == Some((*b, *w)) {
                " stroke=\"#d7301f\" stroke-width=\"3\""
            } else {
                ""
            };
            let _ = write!(
                o,
                "<rect class=\"cell\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"{outline}>\
                 <title>batch {b}, {w} workers: {} samples/s, wait {} ms, cv {:.2}</title></rect>\
                 <text class=\"{text}\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                c(x + 1.0),
                c(y + 1.0),
                c(cw - 2.0),
                c(ch - 2.0),
                esc(&num(cell.samples_per_s)),
                esc(&num(cell.mean_wait_ms)),
                cell.cv,
                c(x + cw / 2.0),
                c(y + ch / 2.0 + 4.0),
                esc(&num(cell.samples_per_s)),
            );
        }
    }
    o.push_str("</svg>");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(
            ticks(0.0, 100.0, 4),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(ticks(-0.3, 1.0, 4), vec![0.0, 0.5, 1.0]);
        assert_eq!(tick_label(0.2, 0.2), "0.2");
        assert_eq!(tick_label(25.0, 5.0), "25");
        assert_eq!(ticks(0.0, 0.0, 4), vec![0.0]);
        assert!(ticks(0.0, 60.0, 8).contains(&10.0));
    }

    #[test]
    fn non_finite_values_never_reach_an_attribute() {
        let s = AcfSeries {
            values: vec![f64::NAN, 1.0, f64::INFINITY],
            acf: vec![1.0, f64::NAN],
            ..AcfSeries::default()
        };
        let svg = series_plot("p", "t", &s, "batch") + &acf_plot("a", "t", &s, "batches");
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }
}
