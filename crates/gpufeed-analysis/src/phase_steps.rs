//! Your own training loop, step by step: the document behind the Python `gpufeed.StepTimer`
//! (`timer.report()`) and behind `gpufeed trace FILE` on a step recording
//! (`timer.save("steps.jsonl")`, format in [`gpufeed_telemetry::phase_steps`] and
//! `docs/step-phases.md`).
//!
//! Each [`StepRecord`] is one step of the loop: its whole time and the time of each named
//! phase, in the order the loop ran them. [`document`] leaves out the warm-up steps, then
//! computes per phase the mean, the population std and the share of the mean step, the share
//! of the step outside every phase (`unaccounted`), the step-time statistics of `gpufeed
//! trace --kind steps` (percentiles, outliers, the period of a cycle), the throughput, and
//! the verdict with its evidence and fix.
//!
//! # Categories
//!
//! A phase's name decides its category, and the category decides the verdict:
//!
//! | category | names |
//! |---|---|
//! | `input` | `data_wait` (the wait for the next batch) |
//! | `copy` | `h2d_copy`, `device_copy`, and any name containing `copy`, `h2d`, `to_device` or `transfer` (any case) |
//! | `compute` | every other name (`forward`, `backward`, `optimizer`, `loss`, ...) |
//!
//! # Verdict
//!
//! The one of `gpufeed profile step`: [`gpufeed_train::verdict::judge`] on the shares of the
//! three categories and on the step-time analysis of `gpufeed_stats`. Input share = (input +
//! copy) / mean step, compared with TF Profiler's thresholds
//! ([`INPUT_BOUND_MODERATE`], [`INPUT_BOUND_HIGH`]): `input-bound` (or `transfer-bound` when
//! the copies outweigh the wait) at `high` from 20 %, then `oscillating` when the step time
//! repeats a cycle, then `input-bound` / `transfer-bound` at `moderate` from 5 %, else
//! `compute-bound`. gpufeed does not know a user's loader, so the fix says what to change
//! without quoting settings. Two cases get no guess:
//!
//! - fewer than [`STEPS_MIN_JUDGED`] steps after the warm-up: [`document`] is an error
//!   saying how many to record;
//! - no `input` phase at all (nothing timed the wait for data) and nothing else to say: the
//!   verdict is `undetermined`, and the fix says to time `data_wait`.
//!
//! Without `sync` (no device synchronisation at each phase boundary) the evidence says that
//! on a GPU the phases are the times work was queued, not run.
//!
//! ```
//! use gpufeed_analysis::phase_steps::{document, Meta, StepRecord};
//! let meta = Meta { source: "example".into(), sync: true, warmup: 0, batch_size: Some(32) };
//! let steps: Vec<StepRecord> = (0..40)
//!     .map(|i| StepRecord {
//!         total_ms: 100.0 + f64::from(i % 2),
//!         phases: vec![("data_wait".into(), 30.0), ("forward".into(), 60.0)],
//!         items: None,
//!     })
//!     .collect();
//! let doc = document(&meta, &steps).unwrap();
//! assert_eq!(doc.verdict.as_str(), "input-bound");
//! assert_eq!(doc.level, Some(gpufeed_train::verdict::Level::High));
//! ```
//!
//! References: TF Profiler's input-pipeline analyzer (`op_stats_to_input_pipeline_analysis.cc`)
//! for the 5 % / 20 % thresholds; every threshold with its source is in
//! `gpufeed_stats::thresholds`.
//!
//! [`INPUT_BOUND_MODERATE`]: gpufeed_stats::thresholds::INPUT_BOUND_MODERATE
//! [`INPUT_BOUND_HIGH`]: gpufeed_stats::thresholds::INPUT_BOUND_HIGH
//! [`STEPS_MIN_JUDGED`]: gpufeed_stats::thresholds::STEPS_MIN_JUDGED

use std::io::{BufReader, BufWriter, Write as _};
use std::path::Path;

use anyhow::{Context as _, Result, anyhow, bail};

use gpufeed_contract::IfFixed;
use gpufeed_stats::fmt::pct1 as pct;
use gpufeed_stats::thresholds::{INPUT_BOUND_HIGH, INPUT_BOUND_MODERATE, STEPS_MIN_JUDGED};
use gpufeed_telemetry::phase_steps as format;
use gpufeed_train::verdict::{self, Bottleneck, Shares};

/// The document and the types it holds (gpufeed-contract).
pub use gpufeed_contract::{
    Ordered, Phase, PhaseCategory as Category, PhaseCause, PhaseSeries as Series, PhaseSteps,
    PhaseStepsKind, PhaseVerdict, Steps,
};
pub use gpufeed_telemetry::phase_steps::{Meta, PhaseStepTrace, StepRecord};
/// The type of the document's `level`, for callers without gpufeed-stats.
pub use gpufeed_train::verdict::Level;

use crate::trace::StepReport;

mod text;

pub use text::render_text;

/// Builds the document from a recording (see the [module docs](self)). An error, saying
/// what to change, for a step with a negative, non-finite or empty time, a nameless phase,
/// phases adding up to more than their step (beyond 1 % rounding), or fewer steps after
/// the warm-up than [`STEPS_MIN_JUDGED`].
pub fn document(meta: &Meta, steps: &[StepRecord]) -> Result<PhaseSteps> {
    for (i, s) in steps.iter().enumerate() {
        s.check().map_err(|p| anyhow!("step {i}: {p}"))?;
    }
    let min = STEPS_MIN_JUDGED as usize;
    let analysed = steps.get(meta.warmup..).unwrap_or_default();
    if analysed.len() < min {
        bail!(
            "{} step(s) recorded, {} after the {} warm-up step(s): a verdict needs at least {min} \
             (fewer cannot show a cycle; `STEPS_MIN_JUDGED` in gpufeed_stats::thresholds); \
             record at least {} steps",
            steps.len(),
            analysed.len(),
            meta.warmup,
            min + meta.warmup
        );
    }
    let n = analysed.len();

    let merged: Vec<Vec<(&str, f64)>> = analysed.iter().map(StepRecord::merged_phases).collect();
    let order = loop_order(&merged);
    let mut values = vec![vec![0.0; n]; order.len()];
    let mut ran = vec![0usize; order.len()];
    let mut unaccounted = 0.0;
    for (i, phases) in merged.iter().enumerate() {
        let mut sum = 0.0;
        for (name, ms) in phases {
            if let Some(p) = order.iter().position(|o| o == name) {
                values[p][i] = *ms;
                ran[p] += 1;
            }
            sum += ms;
        }
        // Within the rounding `check` allows, the phases may exceed the step a little.
        unaccounted += (analysed[i].total_ms - sum).max(0.0);
    }
    let totals: Vec<f64> = analysed.iter().map(|s| s.total_ms).collect();
    let total_ms: f64 = totals.iter().sum();
    let analysis = gpufeed_stats::analyze_steps(&totals).context("no step to analyse")?;
    let step_mean = analysis.summary.mean;
    if !(analysis.summary.std.is_finite() && total_ms.is_finite()) {
        bail!(
            "step times up to {:e} ms are too large to compute with; times are in \
             milliseconds: check the recording's units",
            analysis.summary.max
        );
    }

    let phases = phase_table(&order, &values, &ran, step_mean)?;
    let share_of = |c: Category| -> f64 {
        phases
            .iter()
            .filter(|(_, s)| s.category == c)
            .map(|(_, s)| s.share)
            .sum()
    };
    let shares = Shares {
        data_wait: share_of(Category::Input),
        copy: share_of(Category::Copy),
        compute: share_of(Category::Compute),
    };
    let judged = verdict::judge(shares, &analysis, None);
    let mut verdict = judged.bottleneck;
    let mut level = judged.level;
    let mut evidence = judged.evidence;
    let mut fix = judged.fix;
    let timed_wait = phases.iter().any(|(_, s)| s.category == Category::Input);
    if !timed_wait {
        evidence.push(
            "no `data_wait` phase was recorded, so the wait for data is not measured (it \
             counts as 0 above)"
                .to_owned(),
        );
        if judged.bottleneck == Bottleneck::ComputeBound {
            verdict = PhaseVerdict::Undetermined;
            level = None;
            fix = "time the wait for each batch as `data_wait` (`StepTimer` does when the loop \
                   iterates `timer.iter(loader)`); without it, an input-bound loop cannot be \
                   told from a compute-bound one"
                .to_owned();
        }
    }
    evidence.push(format!(
        "{} of the step is outside every timed phase",
        pct(unaccounted / total_ms)
    ));
    if !meta.sync {
        evidence.push(
            "timed without a device sync at the phase boundaries: on a GPU a phase's time is \
             when its work was queued, and the device's work lands in whichever later phase \
             waits for it (often the data wait or a copy); record with sync for exact phases"
                .to_owned(),
        );
    }

    // In f64: item counts come from the user and may be anything a u64 holds.
    let items: Option<f64> = analysed
        .iter()
        .map(|s| s.items.or(meta.batch_size).map(|k| k as f64))
        .sum();
    let seconds = total_ms / 1e3;
    let causes = causes(&phases, &values, &totals, analysis.summary.median);
    let step = StepReport::new(analysis).doc;
    Ok(PhaseSteps {
        kind: PhaseStepsKind::PhaseSteps,
        schema_version: <PhaseSteps as gpufeed_contract::Document>::VERSION,
        source: meta.source.clone(),
        sync: meta.sync,
        warmup: meta.warmup,
        batch_size: meta.batch_size,
        series: Some(Series {
            total_ms: totals,
            phases: Ordered(
                order
                    .iter()
                    .zip(values)
                    .map(|(name, v)| ((*name).to_owned(), v))
                    .collect(),
            ),
        }),
        phases: Ordered(phases),
        unaccounted_share: unaccounted / total_ms,
        step,
        steps_per_s: n as f64 / seconds,
        samples_per_s: items.map(|k| k / seconds),
        verdict,
        level,
        evidence,
        fix,
        causes,
    })
}

/// The loop's order of the phases: a name first seen in a step goes right after the phase
/// before it there, so a phase that runs only sometimes (a checkpoint) keeps its place.
fn loop_order<'a>(merged: &[Vec<(&'a str, f64)>]) -> Vec<&'a str> {
    let mut order: Vec<&str> = Vec::new();
    for phases in merged {
        let mut at = 0;
        for (name, _) in phases {
            match order.iter().position(|o| o == name) {
                Some(p) => at = p + 1,
                None => {
                    order.insert(at, name);
                    at += 1;
                }
            }
        }
    }
    order
}

/// Each phase's figures, in the loop's order: `values[p]` its time in each step, `ran[p]`
/// the steps it ran in, `step_mean` the mean step.
fn phase_table(
    order: &[&str],
    values: &[Vec<f64>],
    ran: &[usize],
    step_mean: f64,
) -> Result<Vec<(String, Phase)>> {
    let mut phases = Vec::with_capacity(order.len());
    for (p, name) in order.iter().enumerate() {
        let s = gpufeed_stats::summarize(&values[p]).context("no step to analyse")?;
        phases.push((
            (*name).to_owned(),
            Phase {
                order: p,
                category: Category::of(name),
                mean_ms: s.mean,
                std_ms: s.std,
                share: s.mean / step_mean,
                steps: ran[p],
            },
        ));
    }
    Ok(phases)
}

/// The input and copy causes at or past the moderate input threshold, each with the median
/// step without its phases (see `docs/what-if.md`), the largest gain first.
fn causes(
    phases: &[(String, Phase)],
    values: &[Vec<f64>],
    totals: &[f64],
    median_ms: f64,
) -> Vec<PhaseCause> {
    let mut out = Vec::new();
    for (category, cause, assumes) in [
        (
            Category::Input,
            PhaseVerdict::InputBound,
            "the loader makes each batch while the step before runs (worker processes on free \
             cores, or a prefetching loader), so the wait for data goes and every other phase \
             stays as measured",
        ),
        (
            Category::Copy,
            PhaseVerdict::TransferBound,
            "the copies run ahead of the step (pinned memory, asynchronous copies on their own \
             stream), so their time goes and every other phase stays as measured",
        ),
    ] {
        let of: Vec<usize> = (0..phases.len())
            .filter(|&p| phases[p].1.category == category)
            .collect();
        let share: f64 = of.iter().map(|&p| phases[p].1.share).sum();
        let Some(level) = Level::of(share, INPUT_BOUND_MODERATE, INPUT_BOUND_HIGH) else {
            continue;
        };
        let fixed: Vec<f64> = totals
            .iter()
            .enumerate()
            .map(|(i, t)| (t - of.iter().map(|&p| values[p][i]).sum::<f64>()).max(0.0))
            .collect();
        out.push(PhaseCause {
            cause,
            phases: of.iter().map(|&p| phases[p].0.clone()).collect(),
            share,
            level,
            if_fixed: IfFixed::new(median_ms, gpufeed_stats::summary::median(&fixed), assumes),
        });
    }
    gpufeed_contract::estimate::sort_by_gain(&mut out, |c| c.if_fixed.as_ref());
    out
}

/// Writes a recording to `path`: to a temporary file in the same folder, renamed over
/// `path` once whole, so a recording is never half-written. Every step is checked first
/// (as [`document`] does); a bad one is an error naming the step, and nothing is written.
pub fn write_jsonl(path: &Path, meta: &Meta, steps: &[StepRecord]) -> Result<()> {
    for (i, s) in steps.iter().enumerate() {
        s.check()
            .map_err(|p| anyhow!("`{}` not written: step {i}: {p}", path.display()))?;
    }
    gpufeed_fs::write_atomic(path, |file| {
        let mut out = BufWriter::new(file);
        format::write(&mut out, meta, steps)?;
        out.flush()
    })
    .with_context(|| format!("cannot write `{}`", path.display()))
}

/// Reads a recording without printing: the steps, and the line of a last step that was cut
/// off (skipped) in [`PhaseStepTrace::truncated_line`] ([`truncation_warning`] words it).
pub fn read_recording(path: &Path) -> Result<PhaseStepTrace> {
    let file = fs_err::File::open(path)?;
    Ok(format::read(
        BufReader::with_capacity(256 * 1024, file),
        path,
    )?)
}

/// Reads a recording written by [`write_jsonl`] or `StepTimer.save`; a last line cut off
/// mid-line is skipped ([`read_recording`] says which, for a warning).
pub fn read_jsonl(path: &Path) -> Result<(Meta, Vec<StepRecord>)> {
    let t = read_recording(path)?;
    Ok((t.meta, t.steps))
}

/// The warning for a last line cut off mid-line.
#[must_use]
pub fn truncation_warning(path: &Path, line: usize, kept: usize) -> String {
    format!(
        "`{}` line {line}: cut off mid-line (was the job killed while writing it?); skipped, \
         the {kept} step(s) before it are read",
        path.display()
    )
}

#[cfg(test)]
mod tests;
