//! `gpufeed compare BEFORE AFTER`: two traces of one job side by side, as the `compare`
//! document ([`Compare`], gpufeed-contract) and its text.
//!
//! Each trace is detected and analysed as `gpufeed trace` does ([`crate::detect`]); two of
//! different kinds are refused in one line. Then:
//!
//! - the step time (median and p95) of each, and `speedup`: BEFORE's median step over
//!   AFTER's, or, when both know their batch size and the sizes differ, AFTER's samples
//!   per second over BEFORE's. Utilisation logs have no steps: their mean utilisation and
//!   idle share are compared, and `speedup` is left out;
//! - the shares of each (of the step for profiler traces and step recordings, of the
//!   samples for utilisation logs), those that changed most first;
//! - the causes that went away, appeared, or stayed;
//! - the prediction: BEFORE's estimate (`if_fixed`) for the cause the change fixed (the
//!   first, by gain, that AFTER no longer has; else the one whose share fell the most;
//!   else BEFORE's largest gain) against AFTER's measured median step.
//!
//! A profiler trace of several ranks is compared by the rank that sets the run's pace
//! (`verdict_rank`: the straggler, else the slowest).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Result, bail};
use gpufeed_contract::estimate::{fix_words, round_ms};
use gpufeed_contract::{
    Compare, CompareKind, CompareSide, ComparedKind, Document as _, IfFixed, Prediction,
    ShareChange, SpeedupBy,
};
use gpufeed_kineto::report::{RankReport, Report};

use crate::detect::{TraceSource, detect};
use crate::phase_steps::PhaseSteps;
use crate::trace::{self, TraceReport, UtilReport};

/// One trace, analysed.
struct Side {
    kind: ComparedKind,
    doc: CompareSide,
    /// Share name → share.
    shares: Vec<(String, f64)>,
    /// Cause id → its estimate, the largest gain first.
    estimates: Vec<(String, Option<IfFixed>, f64)>,
}

/// What a path holds, in words, for the refusal.
fn kind_words(k: ComparedKind) -> &'static str {
    match k {
        ComparedKind::Profiler => "a profiler trace",
        ComparedKind::PhaseSteps => "a step recording",
        ComparedKind::Steps => "a step-time list",
        ComparedKind::Util => "a utilisation log",
    }
}

/// Reads and analyses both traces and compares them; the warnings of both to print.
///
/// # Errors
///
/// A trace that cannot be read or analysed (named), or two traces of different kinds.
pub fn compare(before: &Path, after: &Path) -> Result<(Compare, Vec<String>)> {
    let mut warnings = Vec::new();
    let b = side(before, &mut warnings)?;
    let a = side(after, &mut warnings)?;
    if a.kind != b.kind {
        bail!(
            "cannot compare `{}` ({}) with `{}` ({}): give two traces of the same kind, \
             before and after one change",
            before.display(),
            kind_words(b.kind),
            after.display(),
            kind_words(a.kind)
        );
    }
    Ok((build(b, a), warnings))
}

fn side(path: &Path, warnings: &mut Vec<String>) -> Result<Side> {
    match detect(path, None)? {
        TraceSource::Profiler {
            path: p,
            format,
            classified,
        } => {
            let opts = crate::profiler::options(format, classified);
            let (report, w) = crate::profiler::analyze(&p, opts)?;
            warnings.extend(w);
            Ok(profiler_side(path, &report))
        }
        TraceSource::Stdin { .. } => {
            bail!("`gpufeed compare` reads two files: save the log to a file first")
        }
        source @ TraceSource::Log { .. } => {
            let (report, w) = trace::analyze_source(&source, None)?;
            warnings.extend(w);
            Ok(match report {
                TraceReport::PhaseSteps(d) => phase_side(path, &d),
                TraceReport::Steps(s) => Side {
                    kind: ComparedKind::Steps,
                    doc: CompareSide {
                        path: path.display().to_string(),
                        verdict: Some(s.verdict.as_str().to_owned()),
                        rank: None,
                        steps: Some(s.samples),
                        median_ms: Some(s.median_ms),
                        p95_ms: Some(s.p95_ms),
                        batch_size: None,
                        samples_per_s: None,
                        util_mean: None,
                        idle_share: None,
                        causes: Vec::new(),
                    },
                    shares: Vec::new(),
                    estimates: Vec::new(),
                },
                TraceReport::Util(u) => util_side(path, &u),
            })
        }
    }
}

/// The rank of a profiler report that sets the run's pace, else the first with steps.
fn pace_rank(r: &Report) -> Option<&RankReport> {
    r.verdict_rank
        .and_then(|v| r.ranks.iter().find(|x| x.rank == v))
        .or_else(|| r.ranks.iter().find(|x| x.step_time.is_some()))
}

fn profiler_side(path: &Path, r: &Report) -> Side {
    let rank = pace_rank(r);
    let steps_ms: Vec<f64> = rank
        .map(|x| x.steps.iter().map(|s| s.dur_us / 1e3).collect())
        .unwrap_or_default();
    let summary = gpufeed_stats::summarize(&steps_ms);
    let shares = rank
        .and_then(|x| x.shares)
        .map(|s| {
            vec![
                ("gpu_busy".to_owned(), s.gpu_busy),
                ("compute".to_owned(), s.compute),
                ("collective".to_owned(), s.collective),
                ("data_wait".to_owned(), s.data_wait),
                ("transfer".to_owned(), s.transfer),
                ("sync_wait".to_owned(), s.sync_wait),
                ("launch_wait".to_owned(), s.launch_wait),
                ("other_idle".to_owned(), s.other_idle),
            ]
        })
        .unwrap_or_default();
    let estimates: Vec<(String, Option<IfFixed>, f64)> = rank
        .map(|x| {
            x.causes
                .iter()
                .map(|c| {
                    (
                        c.bottleneck.as_str().to_owned(),
                        c.if_fixed.clone(),
                        c.share,
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    Side {
        kind: ComparedKind::Profiler,
        doc: CompareSide {
            path: path.display().to_string(),
            verdict: r.verdict.map(|v| v.as_str().to_owned()),
            rank: rank.filter(|_| r.ranks.len() > 1).map(|x| x.rank),
            steps: summary.as_ref().map(|s| s.n),
            median_ms: summary.as_ref().map(|s| s.median),
            p95_ms: summary.as_ref().map(|s| s.p95),
            batch_size: None,
            samples_per_s: None,
            util_mean: None,
            idle_share: None,
            causes: estimates.iter().map(|e| e.0.clone()).collect(),
        },
        shares,
        estimates,
    }
}

fn phase_side(path: &Path, d: &PhaseSteps) -> Side {
    let mut shares: Vec<(String, f64)> = d
        .phases
        .iter()
        .map(|(n, p)| (n.to_owned(), p.share))
        .collect();
    shares.push(("unaccounted".to_owned(), d.unaccounted_share));
    let estimates: Vec<(String, Option<IfFixed>, f64)> = d
        .causes
        .iter()
        .map(|c| (c.cause.as_str().to_owned(), c.if_fixed.clone(), c.share))
        .collect();
    Side {
        kind: ComparedKind::PhaseSteps,
        doc: CompareSide {
            path: path.display().to_string(),
            verdict: Some(d.verdict.as_str().to_owned()),
            rank: None,
            steps: Some(d.step.samples),
            median_ms: Some(d.step.median_ms),
            p95_ms: Some(d.step.p95_ms),
            batch_size: d.batch_size,
            samples_per_s: d.samples_per_s,
            util_mean: None,
            idle_share: None,
            causes: estimates.iter().map(|e| e.0.clone()).collect(),
        },
        shares,
        estimates,
    }
}

fn util_side(path: &Path, u: &UtilReport) -> Side {
    let n = u.gpus.len().max(1) as f64;
    let mean = u.gpus.iter().map(|g| g.training.mean).sum::<f64>() / n;
    let idle = u.gpus.iter().map(|g| g.training.idle_fraction).sum::<f64>() / n;
    let mut verdicts: Vec<String> = u
        .gpus
        .iter()
        .filter_map(|g| serde_json::to_value(g.verdict).ok())
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    verdicts.dedup();
    let causes: Vec<String> = verdicts
        .iter()
        .filter(|v| v.as_str() != "stable")
        .cloned()
        .collect();
    Side {
        kind: ComparedKind::Util,
        doc: CompareSide {
            path: path.display().to_string(),
            verdict: (!verdicts.is_empty()).then(|| verdicts.join(", ")),
            rank: None,
            steps: None,
            median_ms: None,
            p95_ms: None,
            batch_size: None,
            samples_per_s: None,
            util_mean: (!u.gpus.is_empty()).then_some(mean),
            idle_share: (!u.gpus.is_empty()).then_some(idle),
            causes: causes.clone(),
        },
        shares: vec![
            ("utilisation".to_owned(), mean / 100.0),
            ("idle".to_owned(), idle),
        ],
        estimates: causes.into_iter().map(|c| (c, None, 0.0)).collect(),
    }
}

fn build(b: Side, a: Side) -> Compare {
    let mut notes = Vec::new();
    let (speedup, speedup_by) = match (b.doc.median_ms, a.doc.median_ms) {
        (Some(mb), Some(ma)) if mb > 0.0 && ma > 0.0 => {
            match (
                b.doc.batch_size,
                a.doc.batch_size,
                b.doc.samples_per_s,
                a.doc.samples_per_s,
            ) {
                (Some(x), Some(y), Some(sb), Some(sa)) if x != y && sb > 0.0 => {
                    notes.push(format!(
                        "the batch sizes differ ({x} and {y}): `speedup` is the ratio of \
                         samples per second, and a step-time prediction does not apply"
                    ));
                    (Some(sa / sb), Some(SpeedupBy::SamplesPerS))
                }
                _ => (Some(mb / ma), Some(SpeedupBy::MedianStep)),
            }
        }
        _ => (None, None),
    };
    // Shares in both, by name in BEFORE's order then AFTER's new ones.
    let mut names: Vec<&str> = b.shares.iter().map(|(n, _)| n.as_str()).collect();
    for (n, _) in &a.shares {
        if !names.contains(&n.as_str()) {
            names.push(n);
        }
    }
    let get = |v: &[(String, f64)], n: &str| v.iter().find(|(x, _)| x == n).map(|(_, s)| *s);
    let mut shares: Vec<ShareChange> = names
        .iter()
        .map(|n| {
            let (x, y) = (get(&b.shares, n), get(&a.shares, n));
            ShareChange {
                name: (*n).to_owned(),
                before: x,
                after: y,
                change: y.unwrap_or(0.0) - x.unwrap_or(0.0),
            }
        })
        .collect();
    shares.sort_by(|p, q| q.change.abs().total_cmp(&p.change.abs()));
    let has = |v: &[String], c: &String| v.contains(c);
    let causes_gone: Vec<String> = b
        .doc
        .causes
        .iter()
        .filter(|c| !has(&a.doc.causes, c))
        .cloned()
        .collect();
    let causes_new: Vec<String> = a
        .doc
        .causes
        .iter()
        .filter(|c| !has(&b.doc.causes, c))
        .cloned()
        .collect();
    let causes_kept: Vec<String> = b
        .doc
        .causes
        .iter()
        .filter(|c| has(&a.doc.causes, c))
        .cloned()
        .collect();
    let prediction = if speedup_by == Some(SpeedupBy::MedianStep) {
        predict(&b, &a, &causes_gone)
    } else {
        None
    };
    if prediction.is_none() && speedup_by == Some(SpeedupBy::MedianStep) {
        notes.push(
            "no prediction: BEFORE has no cause with an estimate of its fixed step".to_owned(),
        );
    }
    if let (Some(rb), Some(ra)) = (b.doc.rank, a.doc.rank)
        && rb != ra
    {
        notes.push(format!(
            "the run's pace is set by rank {rb} before and by rank {ra} after: each side's \
             figures are its own pace rank's"
        ));
    }
    Compare {
        schema_version: Compare::VERSION,
        kind: CompareKind::Compare,
        compared: b.kind,
        before: b.doc,
        after: a.doc,
        speedup,
        speedup_by,
        shares,
        causes_gone,
        causes_new,
        causes_kept,
        prediction,
        notes,
    }
}

/// BEFORE's estimate for the cause the change fixed, against AFTER's median step.
fn predict(b: &Side, a: &Side, gone: &[String]) -> Option<Prediction> {
    let with: Vec<&(String, Option<IfFixed>, f64)> =
        b.estimates.iter().filter(|e| e.1.is_some()).collect();
    let share_after = |id: &str| a.estimates.iter().find(|e| e.0 == id).map_or(0.0, |e| e.2);
    let (pick, chosen) = if let Some(e) = with.iter().find(|e| gone.contains(&e.0)) {
        (*e, "it went away in AFTER")
    } else if let Some(e) = with
        .iter()
        .filter(|e| share_after(&e.0) < e.2)
        .max_by(|x, y| (x.2 - share_after(&x.0)).total_cmp(&(y.2 - share_after(&y.0))))
    {
        (*e, "its share of the step fell the most in AFTER")
    } else {
        (
            *with.first()?,
            "BEFORE's largest gain (no cause went away or fell)",
        )
    };
    let f = pick.1.as_ref()?;
    let measured = a.doc.median_ms?;
    let before_ms = b.doc.median_ms?;
    Some(Prediction {
        cause: pick.0.clone(),
        chosen: chosen.to_owned(),
        before_ms,
        predicted_ms: f.step_ms,
        measured_ms: measured,
        error: f.step_ms / measured - 1.0,
        assumes: f.assumes.clone(),
    })
}

/// The text report.
#[must_use]
pub fn render_text(c: &Compare) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "compare ({}): `{}` -> `{}`",
        c.compared.as_str(),
        c.before.path,
        c.after.path
    );
    for (label, s) in [("before", &c.before), ("after", &c.after)] {
        let mut parts = Vec::new();
        if let Some(r) = s.rank {
            parts.push(format!("rank {r}"));
        }
        if let (Some(m), Some(p)) = (s.median_ms, s.p95_ms) {
            parts.push(format!("median step {m:.1} ms, p95 {p:.1} ms"));
        }
        if let Some(n) = s.steps {
            parts.push(format!("{n} steps"));
        }
        if let Some(v) = s.samples_per_s {
            parts.push(format!("{v:.1} samples/s"));
        }
        if let (Some(u), Some(i)) = (s.util_mean, s.idle_share) {
            parts.push(format!(
                "utilisation {u:.1} % mean, idle {:.1} % of the samples",
                100.0 * i
            ));
        }
        let _ = writeln!(
            o,
            "{label:>6}: {}; {}",
            s.verdict.as_deref().unwrap_or("no verdict"),
            parts.join(", ")
        );
    }
    match (c.speedup, c.speedup_by) {
        (Some(x), Some(SpeedupBy::MedianStep)) => {
            let _ = writeln!(o, "speedup: {x:.2}x (median step)");
        }
        (Some(x), Some(SpeedupBy::SamplesPerS)) => {
            let _ = writeln!(o, "speedup: {x:.2}x (samples per second)");
        }
        _ => {}
    }
    if let Some(p) = &c.prediction {
        let _ = writeln!(
            o,
            "prediction from before ({}: {}): {} -> ~{} ms per step; measured after: {:.1} ms \
             ({:+.1} %)",
            fix_words(&p.cause),
            p.chosen,
            round_ms(p.before_ms),
            round_ms(p.predicted_ms),
            p.measured_ms,
            100.0 * p.error
        );
        let _ = writeln!(o, "  assumes: {}", p.assumes);
    }
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_owned()
        } else {
            v.join(", ")
        }
    };
    let _ = writeln!(
        o,
        "causes gone: {}; new: {}; kept: {}",
        list(&c.causes_gone),
        list(&c.causes_new),
        list(&c.causes_kept)
    );
    let moved: Vec<&ShareChange> = c
        .shares
        .iter()
        .filter(|s| s.change.abs() >= 0.005)
        .collect();
    if !moved.is_empty() {
        let _ = writeln!(o, "shares that changed (of the step, or of the samples):");
        for s in moved {
            let f = |x: Option<f64>| x.map_or("-".to_owned(), |v| format!("{:.1} %", 100.0 * v));
            let _ = writeln!(
                o,
                "  {:<14} {:>8} -> {:>8} ({:+.1} points)",
                s.name,
                f(s.before),
                f(s.after),
                100.0 * s.change
            );
        }
    }
    for n in &c.notes {
        let _ = writeln!(o, "note: {n}");
    }
    o
}
