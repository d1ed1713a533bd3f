//! `report.html`'s section on the user's profiler trace (`analyze --trace` with a PyTorch
//! or TensorFlow profiler trace): the judged rank's steps as stacked bars, every rank's GPU
//! idle time per stream as HTA splits it, and HTA's figures per rank.

use std::fmt::Write as _;

use super::super::svg::esc;
use super::super::svg::profiler::{MAX_IDLE_ROWS, MAX_STEP_BARS, idle_plot, steps_plot};
use super::code;
use crate::model::Report;
use crate::rank::{ms, pct};

/// The section, when the report has a profiler trace.
pub(super) fn section(o: &mut String, r: &Report) {
    let Some(p) = &r.profiler else {
        return;
    };
    o.push_str("<section id=\"profiler\"><h2>Your profiler trace</h2>\n");
    let format = p.format.name();
    let _ = write!(
        o,
        "<p class=\"muted\"><code>{}</code> ({format}), {} rank(s): where the GPU's time goes \
         in each step, and why it idles.</p>",
        esc(&p.path),
        p.ranks.len()
    );
    if let Some(s) = &p.straggler {
        let _ = write!(
            o,
            "<p><strong>Straggler: rank {}</strong> ({}): a distributed run goes at its slowest \
             rank, so its verdict is the run's.</p>",
            s.rank,
            esc(&s.score())
        );
    }
    match crate::rank::profiler::judged_rank(p) {
        Some(rank) if !rank.steps.is_empty() => {
            let who = if p.ranks.len() > 1 {
                format!("rank {}", rank.rank)
            } else {
                "your run".to_owned()
            };
            let verdict = rank.verdict.map_or("no verdict", |v| v.as_str());
            o.push_str(&steps_plot(
                rank,
                &format!("Each step of {who}: where its time goes ({verdict})"),
            ));
            if rank.steps.len() > MAX_STEP_BARS {
                let _ = write!(
                    o,
                    "<p class=\"muted\">The first {MAX_STEP_BARS} of {} steps are drawn.</p>",
                    rank.steps.len()
                );
            }
            if !rank.evidence.is_empty() {
                o.push_str("<ul class=\"evidence\">");
                for e in &rank.evidence {
                    let _ = write!(o, "<li>{}</li>", code(e));
                }
                o.push_str("</ul>");
            }
        }
        _ => {
            let why = crate::rank::profiler::unjudged(p)
                .unwrap_or_else(|| "No step of the trace was analysed.".to_owned());
            let _ = write!(o, "<p class=\"note-box\">{}</p>", code(&why));
        }
    }
    let idle_rows: usize = p
        .ranks
        .iter()
        .flat_map(|r| &r.idle_breakdown)
        .filter(|s| s.host_wait_us + s.kernel_wait_us + s.other_us > 0.0)
        .count();
    if idle_rows > 0 {
        o.push_str(&idle_plot(&p.ranks));
        let _ = write!(
            o,
            "<p class=\"muted\">Host wait: the launch call came after the stream went idle (the \
             host was late); kernel wait: a gap below 30 µs with the work already queued \
             (launch overhead); other: longer gaps with the work queued (waits on events or \
             other streams).{}</p>",
            if idle_rows > MAX_IDLE_ROWS {
                format!(" The first {MAX_IDLE_ROWS} of {idle_rows} streams are drawn.")
            } else {
                String::new()
            }
        );
    }
    o.push_str(
        "<table id=\"profiler-ranks\"><thead><tr><th>rank</th><th>verdict</th>\
         <th>GPU span</th><th>idle</th><th>compute</th><th>non-compute</th><th>steps</th>\
         <th>mean step</th><th>GPU busy</th><th>data wait + copies</th></tr></thead><tbody>\n",
    );
    for rank in &p.ranks {
        let t = rank.temporal;
        let cell_pct = |v: Option<f64>| v.map_or_else(|| "n/a".to_owned(), |v| format!("{v:.2} %"));
        let _ = writeln!(
            o,
            "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td></tr>",
            rank.rank,
            esc(rank.verdict.map_or("n/a", |v| v.as_str())),
            esc(&t.map_or_else(|| "n/a".to_owned(), |t| ms(t.span_us / 1e3))),
            cell_pct(t.map(|t| t.idle_pct)),
            cell_pct(t.map(|t| t.compute_pct)),
            cell_pct(t.map(|t| t.non_compute_pct)),
            rank.steps.len(),
            esc(&rank
                .step_time
                .as_ref()
                .map_or_else(|| "n/a".to_owned(), |s| ms(s.mean_ms))),
            esc(&rank
                .shares
                .map_or_else(|| "n/a".to_owned(), |s| pct(s.gpu_busy))),
            esc(&rank
                .shares
                .map_or_else(|| "n/a".to_owned(), |s| pct(s.input()))),
        );
    }
    o.push_str(
        "</tbody></table><p class=\"muted\">GPU span, idle, compute and non-compute: HTA's \
         temporal breakdown; the shares are of the analysed steps' time. \
         <code>report.json</code> has every figure per rank, stream and step.</p></section>\n",
    );
}

#[cfg(test)]
mod tests {
    use gpufeed_kineto::synth::Case;

    use crate::model::{Inputs, Stage};
    use crate::render::{Html, Renderer};
    use crate::{Collected, Report};

    /// A report of a generated 4-rank run with a straggler, as `analyze --trace DIR`.
    fn straggler_report() -> Report {
        let p = crate::rank::profiler::profiled(&Case::straggler(), "run&co");
        Report::build(Collected {
            stages: vec![Stage::ok("profile step", 0.1, None)],
            step_ms: crate::rank::profiler_step_ms(&p),
            profiler: Some(p),
            ..Collected::new("0.1.0", Inputs::default())
        })
    }

    #[test]
    fn the_section_has_both_plots_and_no_step_phases() {
        let r = straggler_report();
        let html = Html.render(&r);
        for id in [
            "id=\"profiler\"",
            "id=\"plot-profiler-steps\"",
            "id=\"plot-profiler-idle\"",
            "id=\"profiler-ranks\"",
            "Your profiled run: the time of each step",
        ] {
            assert!(html.contains(id), "{id}");
        }
        assert!(html.contains("Straggler: rank 2"));
        assert!(html.contains("Each step of rank 2: where its time goes (input-bound)"));
        assert!(
            html.contains("<code>run&amp;co</code>"),
            "paths are escaped"
        );
        assert!(!html.contains("run&co") && !html.contains("<rank"));
        // One bar per stream that idles, four ranks of one stream each.
        assert_eq!(html.matches("rank 3 · stream").count(), 1);
        assert!(
            !html.contains("id=\"phases\""),
            "the profiler section has the steps"
        );
    }
}
