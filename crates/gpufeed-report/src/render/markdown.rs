//! `summary.md`: the verdict first, then the ranked causes with their numbers, thresholds
//! and fixes, then the stages and the details of each.

use std::fmt::Write as _;

use super::{Renderer, stage_row, step_rate, step_setup};
use crate::model::{Cause, Judged, Report, Severity, Status};
use crate::rank::{ms, pct, secs};

mod profiler;

/// The Markdown summary.
#[derive(Debug, Clone, Copy, Default)]
pub struct Markdown;

/// Inline text on one line: runs of white space (line breaks too) become one space, and a
/// `<` that could open an HTML tag (`<A100>`, `</x`) outside code spans is escaped, so a
/// message quoting one is shown, not swallowed; `< 10 %` stays as it is.
fn line(s: &str) -> String {
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let parts: Vec<&str> = flat.split('`').collect();
    if parts.len().is_multiple_of(2) {
        // An odd number of backticks: no code spans to keep.
        return no_tags(&flat);
    }
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i % 2 == 1 {
                (*p).to_owned()
            } else {
                no_tags(p)
            }
        })
        .collect::<Vec<_>>()
        .join("`")
}

/// `<` before a letter, `/`, `!` or `?` (what starts an HTML tag in CommonMark) as `\<`.
fn no_tags(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '<'
            && chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?'))
        {
            o.push('\\');
        }
        o.push(c);
    }
    o
}

/// A table cell: [`line`], with `|` escaped.
fn cell(s: &str) -> String {
    line(s).replace('|', "\\|")
}

impl Renderer for Markdown {
    fn render(&self, r: &Report) -> String {
        let mut o = String::new();
        // Writing into a String cannot fail; the results are ignored deliberately.
        let _ = writeln!(o, "# gpufeed analyze\n");
        let _ = writeln!(o, "**Verdict:** {}\n", line(&r.verdict));
        if let Some(note) = r.demo_note() {
            let _ = writeln!(o, "**Note:** {}\n", line(&note));
        }
        causes(&mut o, r);
        stages(&mut o, r);
        let _ = writeln!(o, "## Details\n");
        telemetry(&mut o, r);
        profiler::section(&mut o, r);
        step(&mut o, r);
        data(&mut o, r);
        doctor(&mut o, r);
        thresholds(&mut o, r);
        let _ = writeln!(
            o,
            "---\nWritten by gpufeed {}: `report.html` has the plots, `report.json` every figure.",
            r.gpufeed
        );
        o
    }
}

fn causes(o: &mut String, r: &Report) {
    let _ = writeln!(o, "## Causes of starvation, ranked\n");
    if r.causes.is_empty() {
        let _ = writeln!(o, "None found in what was measured.\n");
        return;
    }
    for c in &r.causes {
        cause(o, c, r);
    }
}

fn cause(o: &mut String, c: &Cause, r: &Report) {
    let cost = match c.lost_share {
        Some(s) => format!(" — {} of the time lost", pct(s)),
        None => match c.severity {
            Severity::Error => " — suspected (doctor, error)".to_owned(),
            _ => " — suspected (not measured on a step)".to_owned(),
        },
    };
    let _ = writeln!(o, "### {}. {}{cost}\n", c.rank, line(&c.title));
    let _ = writeln!(o, "{}\n", line(&c.summary));
    for e in &c.evidence {
        let _ = writeln!(o, "- {}", line(e));
    }
    for name in &c.thresholds {
        if let Some(t) = r.thresholds.iter().find(|t| &t.name == name) {
            let _ = writeln!(
                o,
                "- threshold `{}` = {} {}: {} (source: {})",
                t.name,
                t.value,
                t.unit,
                line(&t.meaning),
                line(&t.source)
            );
        }
    }
    match (&c.if_fixed, &c.no_estimate) {
        (Some(f), _) => {
            let _ = writeln!(
                o,
                "- **if fixed:** {} (assumes {})",
                f.line(&gpufeed_contract::estimate::fix_words(&c.id), f.now_ms()),
                line(&f.assumes)
            );
        }
        (None, Some(why)) => {
            let _ = writeln!(o, "- if fixed: no estimate ({})", line(why));
        }
        (None, None) => {}
    }
    if c.fix.contains('\n') {
        // YAML to paste keeps its lines.
        let _ = writeln!(
            o,
            "- **fix:**\n\n  ```\n  {}\n  ```\n",
            c.fix.trim_end().replace('\n', "\n  ")
        );
    } else {
        let _ = writeln!(o, "- **fix:** {}", line(&c.fix));
    }
    let _ = writeln!(
        o,
        "- evidence from: {} ({})\n",
        line(c.source.label()),
        c.stages.join(", ")
    );
}

fn stages(o: &mut String, r: &Report) {
    let _ = writeln!(o, "## Stages\n");
    let _ = writeln!(o, "| stage | status | time | note |\n|---|---|---|---|");
    for s in &r.stages {
        let (time, note) = stage_row(s);
        let _ = writeln!(
            o,
            "| {} | {} | {time} | {} |",
            cell(&s.name),
            s.status.as_str(),
            cell(note)
        );
    }
    let _ = writeln!(o);
}

fn telemetry(o: &mut String, r: &Report) {
    let _ = writeln!(o, "### GPU utilisation\n");
    let Some(t) = &r.telemetry else {
        let _ = writeln!(o, "{}\n", not_measured(r, "telemetry"));
        return;
    };
    let from = match &t.file {
        Some(f) => format!("`{}`", line(f)),
        None => "sampled during the step profile".to_owned(),
    };
    let _ = writeln!(
        o,
        "From {from}: {} samples, one every {}.\n",
        t.util.samples,
        secs(t.util.interval_s)
    );
    let _ = writeln!(
        o,
        "| GPU | verdict | mean | p5 | p50 | p95 | idle | idle gaps | period |\n|---|---|---|---|---|---|---|---|---|"
    );
    for g in &t.util.gpus {
        let period = match (g.period_s, g.period_strength) {
            (Some(p), Some(s)) => format!("{} (r {s:.2})", secs(p)),
            _ => "none".to_owned(),
        };
        let _ = writeln!(
            o,
            "| {} | {} | {:.1} % | {:.0} % | {:.0} % | {:.0} % | {} | {} (longest {}) | {period} |",
            g.gpu,
            cell(g.verdict.as_str()),
            g.mean,
            g.p5,
            g.p50,
            g.p95,
            pct(g.idle_fraction),
            g.idle_gaps.count,
            secs(g.idle_gaps.max_s)
        );
    }
    let _ = writeln!(o);
}

fn step(o: &mut String, r: &Report) {
    let Some(d) = &r.profile_step else {
        if r.profiler.is_some() {
            // The profiler trace's section has the steps.
            return;
        }
        let _ = writeln!(o, "### Training step (`profile step`)\n");
        let _ = writeln!(o, "{}\n", not_measured(r, "profile step"));
        return;
    };
    if d.is_own_loop() {
        let _ = writeln!(o, "### Training step (your own loop, `--trace`)\n");
    } else {
        let _ = writeln!(o, "### Training step (`profile step`)\n");
    }
    let level = d
        .level()
        .map_or_else(String::new, |l| format!(" ({})", l.as_str()));
    let _ = writeln!(o, "{}.\n", step_setup(d));
    let _ = writeln!(
        o,
        "**{}**{level}: {}.\n",
        cell(d.verdict().as_str()),
        step_rate(d)
    );
    for e in d.evidence() {
        let _ = writeln!(o, "- {}", line(e));
    }
    if !d.evidence().is_empty() {
        let _ = writeln!(o);
    }
    let _ = writeln!(o, "| phase | mean | std | share |\n|---|---|---|---|");
    for (name, p) in d.ordered_phases() {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} |",
            cell(&name),
            ms(p.mean_ms),
            ms(p.std_ms),
            pct(p.share)
        );
    }
    let s = d.step();
    let _ = writeln!(
        o,
        "\nStep time: mean {}, median {}, p95 {}, p99 {}, max {}, cv {:.2}, {} outliers, {}{}.\n",
        ms(s.mean_ms),
        ms(s.median_ms),
        ms(s.p95_ms),
        ms(s.p99_ms),
        ms(s.max_ms),
        s.cv,
        s.outliers,
        cell(s.verdict.as_str()),
        s.period_steps
            .map_or_else(String::new, |p| format!(", a cycle every {p} steps"))
    );
}

fn data(o: &mut String, r: &Report) {
    let _ = writeln!(o, "### Loader (`profile data`)\n");
    let Some(d) = &r.profile_data else {
        let _ = writeln!(o, "{}\n", not_measured(r, "profile data"));
        return;
    };
    if let Some(l) = d.loader() {
        let _ = writeln!(
            o,
            "Batch size {}, {} worker(s), prefetch {}; {} batches timed.\n",
            l.batch_size, l.workers, l.prefetch, d.batches.samples
        );
    }
    let b = &d.batches;
    let _ = writeln!(
        o,
        "**{}**: {:.0} samples/s, {:.0} MB/s of batches; {} mean {}, median {}, p95 {}, p99 {}, max {}, cv {:.2}{}.\n",
        cell(b.verdict.as_str()),
        d.samples_per_s,
        d.bytes_per_s / 1e6,
        d.judged.what(),
        ms(b.mean_ms),
        ms(b.median_ms),
        ms(b.p95_ms),
        ms(b.p99_ms),
        ms(b.max_ms),
        b.cv,
        b.period_steps
            .map_or_else(String::new, |p| format!(", a cycle every {p} batches"))
    );
    if d.judged == Judged::Work {
        let _ = writeln!(
            o,
            "Judged on the time a worker takes to make each batch: with no consumer (no training step), the waits only show the workers' batches arriving in rounds.\n"
        );
    }
    {
        let k = &d.breakdown;
        let cold = k.read_cold_ms.map_or_else(|| "n/a".to_owned(), ms);
        let _ = writeln!(
            o,
            "Per batch: read cold {cold}, read warm {}, assemble and pad {} ({} of the bytes are padding), consumer's wait {}.\n",
            ms(k.read_warm_ms),
            ms(k.assemble_ms),
            pct(k.padding_share),
            ms(k.queue_wait_ms)
        );
    }
    if let Some(grid) = &d.grid {
        let _ = writeln!(
            o,
            "Benchmark grid:\n\n| batch | workers | samples/s | mean wait | cv of the {} |\n|---|---|---|---|---|",
            d.judged.what()
        );
        for c in grid {
            let _ = writeln!(
                o,
                "| {} | {} | {:.0} | {} | {:.2} |",
                c.batch_size,
                c.workers,
                c.samples_per_s,
                ms(c.mean_wait_ms),
                c.cv
            );
        }
        let _ = writeln!(o);
    }
    if let Some(rec) = &d.recommendation {
        let _ = writeln!(
            o,
            "Recommended ({:.0} samples/s, wait {} per batch{}):\n\n```yaml\n{}```\n",
            rec.samples_per_s,
            ms(rec.mean_wait_ms),
            rec.keep_words(),
            rec.yaml.replace("```", "")
        );
        if let Some(note) = super::loader_vs_step(r) {
            let _ = writeln!(o, "{}.\n", super::capitalised(&note));
        }
    }
}

fn doctor(o: &mut String, r: &Report) {
    let _ = writeln!(o, "### Doctor findings\n");
    let Some(d) = &r.doctor else {
        let _ = writeln!(o, "{}\n", not_measured(r, "doctor"));
        return;
    };
    let _ = writeln!(
        o,
        "{} error(s), {} warning(s), {} info(s).\n",
        d.errors(),
        d.count(Severity::Warning),
        d.count(Severity::Info)
    );
    if !d.findings.is_empty() {
        let _ = writeln!(
            o,
            "| severity | id | check | where | message | evidence | fix |\n|---|---|---|---|---|---|---|"
        );
        let mut sorted: Vec<_> = d.findings.iter().collect();
        // Errors first, then warnings, then infos; the doctor's order within each.
        sorted.sort_by_key(|f| std::cmp::Reverse(f.severity));
        for f in sorted {
            let place = match (&f.path, f.line) {
                (Some(p), Some(l)) => format!("{p}:{l}"),
                (Some(p), None) => p.clone(),
                _ => String::new(),
            };
            let _ = writeln!(
                o,
                "| {} | `{}` | {} | {} | {} | {} | {} |",
                f.severity.as_str(),
                cell(&f.id),
                cell(&f.check),
                cell(&place),
                cell(&f.message),
                cell(&f.evidence),
                cell(&f.fix)
            );
        }
        let _ = writeln!(o);
    }
    for (check, reason) in &d.skipped {
        let _ = writeln!(o, "- {} not checked: {}", cell(check), line(reason));
    }
    if !d.skipped.is_empty() {
        let _ = writeln!(o);
    }
}

fn thresholds(o: &mut String, r: &Report) {
    if r.thresholds.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "### Thresholds cited\n\n| name | value | meaning | source |\n|---|---|---|---|"
    );
    for t in &r.thresholds {
        let _ = writeln!(
            o,
            "| `{}` | {} {} | {} | {} |",
            t.name,
            t.value,
            cell(&t.unit),
            cell(&t.meaning),
            cell(&t.source)
        );
    }
    let _ = writeln!(o);
}

/// Why a section is empty: its stage failed or was skipped.
fn not_measured(r: &Report, stage: &str) -> String {
    match r.stages.iter().find(|s| s.name == stage) {
        Some(s) if s.status == Status::Failed => format!(
            "Not measured: `{stage}` failed: {}",
            line(s.error.as_deref().unwrap_or("no reason given"))
        ),
        Some(s) if s.status == Status::Skipped => format!(
            "Not measured: `{stage}` skipped: {}",
            line(s.note.as_deref().unwrap_or("no reason given"))
        ),
        _ => format!("Not measured: `{stage}` did not run."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_stay_in_their_column() {
        assert_eq!(cell("a|b\n  c"), "a\\|b c");
        assert_eq!(line("GPU <A100> `x<y`"), "GPU \\<A100> `x<y`");
        assert_eq!(line("odd ` <a"), "odd ` \\<a");
        assert_eq!(line("idle (< 10 %)"), "idle (< 10 %)");
    }
}
