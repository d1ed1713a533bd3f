//! `report.html`: one self-contained page.
//!
//! No network, no script, no external font: the styles are inline, the plots are inline SVG
//! ([`super::svg`]), and a Content-Security-Policy (`default-src 'none'`) makes the browser
//! refuse anything else, so a report opened from a laptop years later looks the same and
//! cannot call home. Every string from the report is escaped ([`esc`]).

use std::fmt::Write as _;

use super::svg::{acf_plot, esc, heat_map, phases_plot, series_plot, util_plot};
use super::{Renderer, stage_row, step_rate, step_setup};
use crate::model::{Judged, Report, Severity, Status, StepPhases};
use crate::rank::{ms, pct, secs};
use gpufeed_stats::thresholds::IDLE_UTIL_PCT;

mod profiler;

/// The HTML page.
#[derive(Debug, Clone, Copy, Default)]
pub struct Html;

const STYLE: &str = "\
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#ffffff;--soft:#f6f8fa;--warn:#9a6700;--err:#cf222e;--ok:#1a7f37}
*{box-sizing:border-box}
body{margin:0 auto;max-width:860px;padding:24px 20px 48px;font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,'Noto Sans','DejaVu Sans',sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:32px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}h3{font-size:16px;margin:18px 0 6px}
.verdict{font-size:17px;padding:12px 14px;border-left:4px solid var(--err);background:var(--soft);margin:12px 0}
.verdict.calm{border-left-color:var(--ok)}
.muted{color:var(--muted)}
ol.causes{padding-left:22px}ol.causes>li{margin:0 0 16px}
.cause-title{font-weight:600}.cost{color:var(--err);font-weight:600}.suspected{color:var(--warn)}
.fix{background:#fff8c5;padding:6px 10px;border-radius:4px;margin-top:4px;white-space:pre-wrap}
td.fixcell{white-space:pre-wrap}
ul.evidence{margin:4px 0;padding-left:18px}ul.evidence li{color:var(--fg)}
.threshold{color:var(--muted);font-size:13px}
table{border-collapse:collapse;width:100%;font-size:13px;margin:8px 0}
th,td{border:1px solid var(--line);padding:4px 6px;text-align:left;vertical-align:top}
th{background:var(--soft)}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.sev-error{color:var(--err);font-weight:600}.sev-warning{color:var(--warn);font-weight:600}.sev-info{color:var(--muted)}
.st-ok{color:var(--ok)}.st-failed{color:var(--err);font-weight:600}.st-skipped{color:var(--muted)}
code,pre{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:13px}
pre{background:var(--soft);padding:8px;overflow:auto}
svg.plot{display:block;max-width:100%;height:auto;margin:8px 0 4px;font-size:11px;font-family:inherit}
svg .ptitle{font-size:13px;font-weight:600;fill:var(--fg)}
svg text{fill:#444}
svg .axis line{stroke:#8c959f;stroke-width:1}svg .axis line.grid{stroke:#eaeef2}
svg .line{fill:none;stroke:#0969da;stroke-width:1.5}
svg .band{fill:#54aeff;fill-opacity:.55;stroke:#0969da;stroke-width:.6}
svg .gap{fill:#ff8182;fill-opacity:.28}
svg .level{stroke:#cf222e;stroke-width:1;stroke-dasharray:4 3}
svg .bar{fill:#8c959f}svg .bar.peak{fill:#cf222e}
svg .note{fill:#cf222e;font-weight:600}
svg .cell{stroke:#ffffff}svg text.on-dark{fill:#ffffff}svg text.on-light{fill:#111111}
td.where{word-break:break-all;max-width:140px}td .ev{color:var(--muted);font-size:12px;margin-top:2px}
.note-box{color:var(--muted);font-style:italic;margin:8px 0}
.whose{color:var(--muted);font-size:13px;margin-top:4px}
";

impl Renderer for Html {
    fn render(&self, r: &Report) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>gpufeed report</title>\n<style>\n{STYLE}</style>\n</head>\n<body>"
        );
        let calm = if r.causes.iter().any(|c| c.lost_share.is_some()) {
            ""
        } else {
            " calm"
        };
        let _ = writeln!(
            o,
            "<header><h1>gpufeed analyze</h1><p class=\"muted\">{}</p>\
             <p class=\"verdict{calm}\" id=\"verdict\">{}</p></header>",
            esc(&inputs_line(r)),
            code(&r.verdict)
        );
        if let Some(note) = r.demo_note() {
            let _ = writeln!(
                o,
                "<p class=\"note-box\" id=\"demo-note\"><strong>Note:</strong> {}</p>",
                code(&note)
            );
        }
        causes(&mut o, r);
        utilisation(&mut o, r);
        profiler::section(&mut o, r);
        times(&mut o, r);
        phases(&mut o, r);
        grid(&mut o, r);
        findings(&mut o, r);
        stages(&mut o, r);
        thresholds(&mut o, r);
        let _ = writeln!(
            o,
            "<footer class=\"muted\"><p>Written by gpufeed {}. <code>summary.md</code> has the \
             same verdict as text, <code>report.json</code> every figure.</p></footer>\n</body>\n</html>",
            esc(&r.gpufeed)
        );
        o
    }
}

/// Escaped text with its Markdown code spans (`` `x` ``) as `<code>`; text with an odd
/// number of backticks is only escaped.
fn code(s: &str) -> String {
    let parts: Vec<&str> = s.split('`').collect();
    if parts.len().is_multiple_of(2) {
        return esc(s);
    }
    let mut o = String::with_capacity(s.len() + 16);
    for (i, part) in parts.iter().enumerate() {
        if i % 2 == 1 {
            o.push_str("<code>");
            o.push_str(&esc(part));
            o.push_str("</code>");
        } else {
            o.push_str(&esc(part));
        }
    }
    o
}

fn inputs_line(r: &Report) -> String {
    let i = &r.inputs;
    let mut parts = Vec::new();
    match (&i.data, i.demo) {
        (Some(d), true) => parts.push(format!("demo dataset {d}")),
        (Some(d), false) => parts.push(format!("data {d}")),
        (None, _) => {}
    }
    if let Some(c) = &i.config {
        parts.push(format!("config {c}"));
    }
    if let Some(c) = &i.code {
        parts.push(format!("code {c}"));
    }
    if let Some(t) = &i.trace {
        parts.push(format!("trace {t}"));
    }
    if !i.device.is_empty() {
        parts.push(format!("step on {}", i.device));
    }
    if i.quick {
        parts.push("quick".to_owned());
    }
    parts.join(" · ")
}

fn causes(o: &mut String, r: &Report) {
    let _ = writeln!(
        o,
        "<section id=\"causes\"><h2>Causes of starvation, ranked</h2>"
    );
    if r.causes.is_empty() {
        let _ = writeln!(
            o,
            "<p class=\"note-box\">None found in what was measured.</p></section>"
        );
        return;
    }
    o.push_str("<ol class=\"causes\">\n");
    for c in &r.causes {
        let cost = match c.lost_share {
            Some(s) => format!(
                "<span class=\"cost\">{} of the time lost</span>",
                esc(&pct(s))
            ),
            None => format!(
                "<span class=\"suspected\">suspected ({}, not measured on a step)</span>",
                c.severity.as_str()
            ),
        };
        let _ = write!(
            o,
            "<li id=\"cause-{}\"><span class=\"cause-title\">{}</span> — {cost}<br>{}\n<ul class=\"evidence\">",
            esc(&c.id),
            esc(&c.title),
            code(&c.summary)
        );
        for e in &c.evidence {
            let _ = write!(o, "<li>{}</li>", code(e));
        }
        for name in &c.thresholds {
            if let Some(t) = r.thresholds.iter().find(|t| &t.name == name) {
                let _ = write!(
                    o,
                    "<li class=\"threshold\"><code>{}</code> = {} {}: {} (source: {})</li>",
                    esc(&t.name),
                    esc(&t.value.to_string()),
                    esc(&t.unit),
                    code(&t.meaning),
                    code(&t.source)
                );
            }
        }
        if let Some(f) = &c.if_fixed {
            let _ = write!(
                o,
                "<li class=\"if-fixed\"><strong>If fixed:</strong> {} (assumes {})</li>",
                esc(&f.line(&gpufeed_contract::estimate::fix_words(&c.id), f.now_ms())),
                code(&f.assumes)
            );
        }
        let _ = writeln!(
            o,
            "</ul><div class=\"fix\"><strong>Fix:</strong> {}</div><div class=\"whose\">Evidence \
             from: {} ({})</div></li>",
            code(&c.fix),
            code(c.source.label()),
            esc(&c.stages.join(", "))
        );
    }
    o.push_str("</ol></section>\n");
}

/// Why a plot is missing.
fn missing(o: &mut String, r: &Report, stage: &str) {
    let why = match r.stages.iter().find(|s| s.name == stage) {
        Some(s) if s.status == Status::Failed => {
            format!(
                "failed: {}",
                s.error.as_deref().unwrap_or("no reason given")
            )
        }
        Some(s) if s.status == Status::Skipped => {
            format!(
                "skipped: {}",
                s.note.as_deref().unwrap_or("no reason given")
            )
        }
        _ => "did not run".to_owned(),
    };
    let _ = writeln!(
        o,
        "<p class=\"note-box\">Not measured: <code>{}</code> {}</p>",
        esc(stage),
        code(&why)
    );
}

fn utilisation(o: &mut String, r: &Report) {
    o.push_str("<section id=\"utilisation\"><h2>GPU utilisation over time</h2>\n");
    match &r.telemetry {
        Some(t) if !r.series.util.is_empty() => {
            let from = t.file.as_deref().map_or_else(
                || "Sampled through NVML during the step profile.".to_owned(),
                |f| format!("From <code>{}</code>.", esc(f)),
            );
            let _ = write!(
                o,
                "<p class=\"muted\">{from} Idle gaps (below {} %) are shaded; the dashed line is the idle level.</p>",
                IDLE_UTIL_PCT
            );
            for s in &r.series.util {
                let g = t.util.gpus.iter().find(|g| g.gpu == s.gpu);
                let caption = match g {
                    Some(g) => format!(
                        "GPU {}: {} (mean {:.0} %, idle {}{})",
                        s.gpu,
                        g.verdict,
                        g.mean,
                        pct(g.idle_fraction),
                        g.period_s
                            .map_or_else(String::new, |p| format!(", a cycle every {}", secs(p)))
                    ),
                    None => format!("GPU {}", s.gpu),
                };
                o.push_str(&util_plot(s, &caption));
                if s.idle_gaps_total > s.idle_gaps_s.len() {
                    let _ = write!(
                        o,
                        "<p class=\"muted\">The first {} of {} idle gaps are shaded.</p>",
                        s.idle_gaps_s.len(),
                        s.idle_gaps_total
                    );
                }
            }
        }
        _ => missing(o, r, "telemetry"),
    }
    o.push_str("</section>\n");
}

fn times(o: &mut String, r: &Report) {
    o.push_str(
        "<section id=\"batches\"><h2>Batch and step times, with their autocorrelation</h2>\n",
    );
    match &r.series.batch_ms {
        Some(s) => {
            let judged = r.profile_data.as_ref().map_or(Judged::Wait, |d| d.judged);
            let (title, acf) = match judged {
                Judged::Work => (
                    "Loader: the time a worker took to make each batch (profile data)",
                    "Autocorrelation of the workers' batch times (detrended)",
                ),
                Judged::Wait => (
                    "Loader: the wait for each batch (profile data)",
                    "Autocorrelation of the batch waits (detrended)",
                ),
            };
            o.push_str(&series_plot("plot-batches", title, s, "batch"));
            o.push_str(&acf_plot("plot-batches-acf", acf, s, "batches"));
        }
        None => missing(o, r, "profile data"),
    }
    match &r.series.step_ms {
        Some(s) => {
            let own = r.profile_step.as_ref().is_some_and(StepPhases::is_own_loop);
            o.push_str(&series_plot(
                "plot-steps",
                if r.profiler.is_some() {
                    "Your profiled run: the time of each step (--trace)"
                } else if own {
                    "Your own loop: the time of each step (--trace)"
                } else {
                    "Training: the time of each step (profile step)"
                },
                s,
                "step",
            ));
            o.push_str(&acf_plot(
                "plot-steps-acf",
                "Autocorrelation of the step times (detrended)",
                s,
                "steps",
            ));
        }
        None => missing(o, r, "profile step"),
    }
    o.push_str("</section>\n");
}

fn phases(o: &mut String, r: &Report) {
    if r.profile_step.is_none() && r.profiler.is_some() {
        // The profiler trace's section has the steps.
        return;
    }
    o.push_str("<section id=\"phases\"><h2>Step phase breakdown</h2>\n");
    match &r.profile_step {
        Some(d) => {
            let _ = write!(o, "<p class=\"muted\">{}.</p>", code(&step_setup(d)));
            o.push_str(&phases_plot(&d.ordered_phases(), d.step().mean_ms));
            let level = d
                .level()
                .map_or_else(String::new, |l| format!(" ({})", l.as_str()));
            let _ = write!(
                o,
                "<p><strong>{}</strong>{}: {}; step mean {}, p95 {}, cv {:.2}.</p>",
                esc(d.verdict().as_str()),
                esc(&level),
                esc(&step_rate(d)),
                esc(&ms(d.step().mean_ms)),
                esc(&ms(d.step().p95_ms)),
                d.step().cv
            );
            if !d.evidence().is_empty() {
                o.push_str("<ul class=\"evidence\">");
                for e in d.evidence() {
                    let _ = write!(o, "<li>{}</li>", code(e));
                }
                o.push_str("</ul>");
            }
        }
        None => missing(o, r, "profile step"),
    }
    o.push_str("</section>\n");
}

fn grid(o: &mut String, r: &Report) {
    o.push_str("<section id=\"grid\"><h2>Loader benchmark</h2>\n");
    let Some(d) = &r.profile_data else {
        missing(o, r, "profile data");
        o.push_str("</section>\n");
        return;
    };
    if let Some(l) = d.loader() {
        let b = &d.batches;
        let _ = write!(
            o,
            "<p>Current settings (batch {}, {} worker(s), prefetch {}): <strong>{:.0} samples/s</strong>, \
             {} mean {}, p99 {}, cv {:.2} ({}).</p>",
            l.batch_size,
            l.workers,
            l.prefetch,
            d.samples_per_s,
            d.judged.what(),
            esc(&ms(b.mean_ms)),
            esc(&ms(b.p99_ms)),
            b.cv,
            esc(b.verdict.as_str())
        );
    }
    match &d.grid {
        Some(g) if !g.is_empty() => {
            let best = d
                .recommendation
                .as_ref()
                .map(|r| (r.batch_size, r.num_workers));
            o.push_str(&heat_map(g, best));
            if let Some(rec) = &d.recommendation {
                let _ = write!(
                    o,
                    "<p>Recommended (outlined, {:.0} samples/s{}):</p><pre>{}</pre>",
                    rec.samples_per_s,
                    esc(rec.keep_words()),
                    esc(&rec.yaml)
                );
                if let Some(note) = super::loader_vs_step(r) {
                    let _ = write!(o, "<p class=\"muted\">{}.</p>", esc(&note));
                }
            }
        }
        _ => {
            let why = if r.inputs.quick {
                "skipped with --quick"
            } else {
                "not run"
            };
            let _ = write!(o, "<p class=\"note-box\">The benchmark grid was {why}.</p>");
        }
    }
    o.push_str("</section>\n");
}

fn findings(o: &mut String, r: &Report) {
    o.push_str("<section id=\"findings\"><h2>Findings</h2>\n");
    let Some(d) = &r.doctor else {
        missing(o, r, "doctor");
        o.push_str("</section>\n");
        return;
    };
    let _ = writeln!(
        o,
        "<p>{} error(s), {} warning(s), {} info(s).</p>\n<table id=\"findings-table\"><thead><tr>\
         <th>severity</th><th>id</th><th>where</th><th>finding and evidence</th><th>fix</th>\
         </tr></thead><tbody>",
        d.errors(),
        d.count(Severity::Warning),
        d.count(Severity::Info)
    );
    let mut sorted: Vec<_> = d.findings.iter().collect();
    sorted.sort_by_key(|f| std::cmp::Reverse(f.severity));
    for f in sorted {
        let place = match (&f.path, f.line, f.column) {
            (Some(p), Some(l), Some(c)) => format!("{p}:{l}:{c}"),
            (Some(p), Some(l), None) => format!("{p}:{l}"),
            (Some(p), None, _) => p.clone(),
            _ => String::new(),
        };
        let sev = f.severity.as_str();
        let _ = writeln!(
            o,
            "<tr><td class=\"sev-{sev}\">{sev}</td><td><code>{}</code><div class=\"ev\">{}</div></td>\
             <td class=\"where\">{}</td><td>{}<div class=\"ev\">{}</div></td><td class=\"fixcell\">{}</td></tr>",
            esc(&f.id),
            esc(&f.check),
            esc(&place),
            code(&f.message),
            code(&f.evidence),
            code(&f.fix)
        );
    }
    if d.findings.is_empty() {
        o.push_str("<tr><td colspan=\"5\">No findings.</td></tr>\n");
    }
    o.push_str("</tbody></table>\n");
    if !d.skipped.is_empty() {
        o.push_str("<ul class=\"muted\">");
        for (check, why) in &d.skipped {
            let _ = write!(o, "<li>{} not checked: {}</li>", esc(check), code(why));
        }
        o.push_str("</ul>");
    }
    o.push_str("</section>\n");
}

fn stages(o: &mut String, r: &Report) {
    o.push_str(
        "<section id=\"stages\"><h2>Stages</h2>\n<table id=\"stages-table\"><thead><tr>\
         <th>stage</th><th>status</th><th>time</th><th>note</th></tr></thead><tbody>\n",
    );
    for s in &r.stages {
        let (time, note) = stage_row(s);
        let st = s.status.as_str();
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td class=\"st-{st}\">{st}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            esc(&s.name),
            esc(&time),
            code(note)
        );
    }
    o.push_str("</tbody></table></section>\n");
}

fn thresholds(o: &mut String, r: &Report) {
    if r.thresholds.is_empty() {
        return;
    }
    o.push_str(
        "<section id=\"thresholds\"><h2>Thresholds cited</h2>\n<table><thead><tr>\
         <th>name</th><th>value</th><th>meaning</th><th>source</th></tr></thead><tbody>\n",
    );
    for t in &r.thresholds {
        let _ = writeln!(
            o,
            "<tr><td><code>{}</code></td><td class=\"num\">{} {}</td><td>{}</td><td>{}</td></tr>",
            esc(&t.name),
            esc(&t.value.to_string()),
            esc(&t.unit),
            code(&t.meaning),
            code(&t.source)
        );
    }
    o.push_str("</tbody></table></section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_become_code_and_the_rest_is_escaped() {
        assert_eq!(code("run `a<b`"), "run <code>a&lt;b</code>");
        assert_eq!(code("odd ` <i>"), "odd ` &lt;i&gt;");
        assert_eq!(code(""), "");
    }
}
