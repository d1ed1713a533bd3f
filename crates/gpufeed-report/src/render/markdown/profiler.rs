//! `summary.md`'s section on the user's profiler trace (`analyze --trace` with a PyTorch or
//! TensorFlow profiler trace): the run's verdict, HTA's figures per rank, the idle time per
//! stream, and the judged rank's steps.

use std::fmt::Write as _;

use gpufeed_kineto::RankReport;
use gpufeed_kineto::report::StragglerBy;

use super::{cell, line};
use crate::model::{Profiler, Report};
use crate::rank::{ms, pct};

/// Steps listed at most in the per-step table.
pub const MAX_STEP_ROWS: usize = 50;

/// Stream rows listed at most in the idle table.
pub const MAX_IDLE_ROWS: usize = 64;

fn us(v: f64) -> String {
    if v == 0.0 {
        "0".to_owned()
    } else {
        ms(v / 1e3)
    }
}

/// The section, when the report has a profiler trace.
pub(super) fn section(o: &mut String, r: &Report) {
    let Some(p) = &r.profiler else {
        return;
    };
    let _ = writeln!(o, "### Profiler trace (your own run, `--trace`)\n");
    let format = p.format.name();
    let run = match (p.verdict, p.verdict_rank) {
        (Some(v), Some(rank)) if p.ranks.len() > 1 => {
            format!("; the run's verdict: **{}** (rank {rank})", v.as_str())
        }
        (Some(v), _) => format!("; verdict: **{}**", v.as_str()),
        (None, _) => "; no verdict".to_owned(),
    };
    let _ = writeln!(
        o,
        "`{}` ({format}): {} rank(s){run}.\n",
        line(&p.path),
        p.ranks.len()
    );
    if let Some(s) = &p.straggler {
        let what = match s.by {
            StragglerBy::StepTime => format!(
                "mean step {} against a median of {}",
                ms(s.value),
                ms(s.median)
            ),
            StragglerBy::IdleShare => format!(
                "GPU idle {:.1} % against a median of {:.1} %",
                s.value, s.median
            ),
            StragglerBy::ComputeShare | StragglerBy::CollectiveWait => s.describe(),
        };
        let _ = writeln!(
            o,
            "Straggler: rank {} ({what}, {}): a distributed run goes at its slowest rank.\n",
            s.rank,
            s.score()
        );
    }
    ranks_table(o, p);
    idle_table(o, p);
    if let Some(rank) = crate::rank::profiler::judged_rank(p) {
        judged(o, p, rank);
    }
    if !p.kernel_types.is_empty() {
        let _ = writeln!(
            o,
            "GPU kernel types over all ranks (HTA):\n\n| type | time | share |\n|---|---|---|"
        );
        for k in &p.kernel_types {
            let _ = writeln!(o, "| {} | {} | {:.1} % |", cell(&k.label), us(k.us), k.pct);
        }
        let _ = writeln!(o);
    }
}

/// One row per rank: HTA's temporal breakdown and the shares of the step.
fn ranks_table(o: &mut String, p: &Profiler) {
    let _ = writeln!(
        o,
        "| rank | verdict | GPU span | idle | compute | non-compute | steps | mean step | GPU busy | data wait | copies | sync wait | launch gaps | host elsewhere |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for r in &p.ranks {
        let verdict = match (r.verdict, r.level) {
            (Some(v), Some(l)) => format!("{} ({})", v.as_str(), level(l)),
            (Some(v), None) => v.as_str().to_owned(),
            (None, _) if r.temporal.is_none() => "no GPU events".to_owned(),
            (None, _) => "no steps".to_owned(),
        };
        let temporal = r.temporal.map_or_else(
            || "n/a | n/a | n/a | n/a".to_owned(),
            |t| {
                format!(
                    "{} | {:.2} % | {:.2} % | {:.2} %",
                    us(t.span_us),
                    t.idle_pct,
                    t.compute_pct,
                    t.non_compute_pct
                )
            },
        );
        let mean = r
            .step_time
            .as_ref()
            .map_or_else(|| "n/a".to_owned(), |s| ms(s.mean_ms));
        let shares = r.shares.map_or_else(
            || "n/a | n/a | n/a | n/a | n/a | n/a".to_owned(),
            |s| {
                format!(
                    "{} | {} | {} | {} | {} | {}",
                    pct(s.gpu_busy),
                    pct(s.data_wait),
                    pct(s.transfer),
                    pct(s.sync_wait),
                    pct(s.launch_wait),
                    pct(s.other_idle)
                )
            },
        );
        let _ = writeln!(
            o,
            "| {} | {} | {temporal} | {} | {mean} | {shares} |",
            r.rank,
            cell(&verdict),
            r.steps.len()
        );
    }
    let _ = writeln!(
        o,
        "\nThe GPU span, idle, compute and non-compute are HTA's temporal breakdown; the other \
         shares are of the analysed steps' time (data wait and copies together are TF \
         Profiler's input time).\n"
    );
}

fn level(l: gpufeed_stats::thresholds::Level) -> &'static str {
    match l {
        gpufeed_stats::thresholds::Level::Moderate => "moderate",
        gpufeed_stats::thresholds::Level::High => "high",
    }
}

/// HTA's idle-time breakdown: one row per rank and stream that idles.
fn idle_table(o: &mut String, p: &Profiler) {
    let rows: Vec<_> = p
        .ranks
        .iter()
        .flat_map(|r| r.idle_breakdown.iter().map(move |s| (r.rank, s)))
        .filter(|(_, s)| s.host_wait_us + s.kernel_wait_us + s.other_us > 0.0)
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "GPU idle time per stream (HTA: host wait when the launch came after the stream went \
         idle, kernel wait below 30 µs, other):\n\n| rank | stream | idle | host wait | kernel \
         wait | other |\n|---|---|---|---|---|---|"
    );
    for (rank, s) in rows.iter().take(MAX_IDLE_ROWS) {
        let total = s.host_wait_us + s.kernel_wait_us + s.other_us;
        let part = |v: f64| {
            if v == 0.0 {
                "0".to_owned()
            } else {
                format!("{} ({})", us(v), pct(v / total))
            }
        };
        let _ = writeln!(
            o,
            "| {rank} | {} | {} | {} | {} | {} |",
            s.stream,
            us(total),
            part(s.host_wait_us),
            part(s.kernel_wait_us),
            part(s.other_us)
        );
    }
    if rows.len() > MAX_IDLE_ROWS {
        let _ = writeln!(
            o,
            "\nThe first {MAX_IDLE_ROWS} of {} streams; `report.json` has them all.",
            rows.len()
        );
    }
    let _ = writeln!(o);
}

/// The judged rank: its verdict with evidence and fix, and its steps.
fn judged(o: &mut String, p: &Profiler, r: &RankReport) {
    let Some(v) = r.verdict else {
        return;
    };
    let who = if p.ranks.len() > 1 {
        format!("Rank {}", r.rank)
    } else {
        "The run".to_owned()
    };
    let lvl = r
        .level
        .map_or_else(String::new, |l| format!(" ({})", level(l)));
    let _ = writeln!(o, "{who}: **{}**{lvl}.\n", v.as_str());
    for e in &r.evidence {
        let _ = writeln!(o, "- {}", line(e));
    }
    if let Some(fix) = &r.fix {
        let _ = writeln!(o, "- **fix:** {}", line(fix));
    }
    let _ = writeln!(o);
    if r.steps.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "| step | time | GPU busy | compute | H2D copies (pageable) | GPU idle: data wait | copy wait | sync wait | launch gaps | host elsewhere |\n\
         |---|---|---|---|---|---|---|---|---|---|"
    );
    for s in r.steps.iter().take(MAX_STEP_ROWS) {
        let _ = writeln!(
            o,
            "| {} | {} | {:.1} % | {} | {} ({}) | {} | {} | {} | {} | {} |",
            s.step,
            us(s.dur_us),
            s.gpu_busy_pct,
            us(s.compute_us),
            us(s.h2d_us),
            us(s.h2d_pageable_us),
            us(s.data_wait_us),
            us(s.copy_wait_us),
            us(s.sync_wait_us),
            us(s.launch_wait_us),
            us(s.other_idle_us)
        );
    }
    if r.steps.len() > MAX_STEP_ROWS {
        let _ = writeln!(
            o,
            "\nThe first {MAX_STEP_ROWS} of {} steps; `report.json` has them all.",
            r.steps.len()
        );
    }
    if let Some(st) = &r.step_time {
        let _ = writeln!(
            o,
            "\nStep time: mean {}, median {}, max {}, cv {:.2}, {}{}.",
            ms(st.mean_ms),
            ms(st.median_ms),
            ms(st.max_ms),
            st.cv,
            st.series_verdict.as_str(),
            st.period_steps
                .map_or_else(String::new, |p| format!(", a cycle every {p} steps"))
        );
    }
    let _ = writeln!(o);
}

#[cfg(test)]
mod tests {
    use gpufeed_kineto::synth::Case;

    use crate::model::{Inputs, Stage};
    use crate::render::{Markdown, Renderer};
    use crate::{Collected, Report};

    #[test]
    fn the_section_has_the_ranks_the_streams_and_the_steps() {
        let p = crate::rank::profiler::profiled(&Case::straggler(), "run");
        let r = Report::build(Collected {
            stages: vec![Stage::ok("profile step", 0.1, None)],
            profiler: Some(p),
            ..Collected::new("0.1.0", Inputs::default())
        });
        let md = Markdown.render(&r);
        assert!(
            md.contains("### Profiler trace (your own run, `--trace`)"),
            "{md}"
        );
        assert!(md.contains("4 rank(s); the run's verdict: **input-bound** (rank 2)"));
        assert!(md.contains("Straggler: rank 2 (mean step"));
        let lvl = r.profiler.as_ref().and_then(|p| p.ranks[2].level);
        let lvl = super::level(lvl.unwrap_or_else(|| panic!("rank 2 has a level")));
        assert!(md.contains(&format!("| 2 | input-bound ({lvl}) |")), "{md}");
        assert!(md.contains(&format!("Rank 2: **input-bound** ({lvl}).")));
        assert!(md.contains("| 0 | compute-bound | 127 ms |"), "{md}");
        assert!(
            !md.contains("Not measured: `profile step`"),
            "the profiler trace is the step evidence"
        );
        // One row per step of the judged rank.
        let steps = r.profiler.as_ref().map_or(0, |p| p.ranks[2].steps.len());
        let rows = md
            .lines()
            .filter(|l| l.starts_with("| ") && l.contains(" ms | "))
            .count();
        assert!(rows >= steps, "{rows} < {steps}");
    }
}
