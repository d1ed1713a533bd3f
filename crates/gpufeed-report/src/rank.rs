//! The causes of starvation, ranked: every stage's evidence combined into a short list of
//! causes, each with its numbers, the thresholds it was judged by (with their sources, from
//! `gpufeed_stats::thresholds`) and the fix.
//!
//! # Causes
//!
//! | id | from | when | cost (`lost_share`) |
//! |---|---|---|---|
//! | `oscillating-utilisation`, `bursty-utilisation`, `starved-gpu`, `idle-gpu` | telemetry or `--trace` | a GPU's utilisation verdict (gpufeed-stats) is not `stable` | `1 - mean / 100` of the worst GPU: the share of its time unused |
//! | `input-bound`, `transfer-bound` | profile step, with the loader's throughput (profile data) and storage speed (doctor) as evidence | data wait + copies >= [`INPUT_BOUND_MODERATE`] of the step (TF Profiler) | that share of the step |
//! | `step-stall` | profile step | the step times repeat a cycle (step verdict `oscillating`) or vary (`unstable`), and the step is at least moderately input-bound (in gpufeed's own loop a cycle in a compute-bound step comes from batches of uneven size, not from starvation); in the user's own loop a cycle counts whatever the input share (a checkpoint or a log every k steps stalls the device too) | `(mean - median) / mean` of the step times ([`stall_share`]): the time above the median step |
//! | `loader-irregular` | profile data, when no step profile ran | the loader's judged batch times (a worker's time per batch, or with a consumer its waits) are `oscillating` or `unstable` | not measured on a step |
//! | `running-input-bound`, `running-sync-bound` | `--attach PID` (the running job's stack samples, see `attach`'s module) | the attach verdict | that share of the samples |
//! | `doctor-<check>` | doctor | findings at warning or error severity, one cause per check | not measured |
//!
//! # Order
//!
//! Measured causes first, the costliest first: their `lost_share`s are all shares of time
//! (of the GPU, or of the training step), so they compare. Then the suspected causes, which
//! were not measured on a step (a slow disk, a config key, a line of code): errors before
//! warnings, then GPU, environment, storage, host, config, code, frameworks. A doctor error
//! is not ranked above a measured cause: it may be a broken input (a binary file given as
//! code) rather than a cause of starvation; `analyze` exits with 1 for it all the same.
//!
//! An irregular loader whose waits the prefetch absorbs (the step profile finds it not
//! input-bound) is no cause: it is reported in the details only.
//!
//! # The user's own loop
//!
//! When the step evidence is the user's own loop (a phase-steps document given with
//! `analyze --trace`, [`StepPhases::is_own_loop`]), its causes say so, carry the document's
//! own evidence, and take its fix: gpufeed's loader and its benchmark measured another
//! loader than the user's, so their settings are not quoted as the user's.
//!
//! [`INPUT_BOUND_MODERATE`]: gpufeed_stats::thresholds::INPUT_BOUND_MODERATE
//! [`stall_share`]: gpufeed_stats::summary::stall_share

use std::cmp::Ordering;
use std::collections::BTreeMap;

use gpufeed_contract::IfFixed;

use gpufeed_stats::summary::stall_share;
use gpufeed_stats::thresholds::{
    INPUT_BOUND_HIGH, INPUT_BOUND_MODERATE, PERIOD_MIN_STRENGTH, STEP_CV_OSCILLATING,
    STEP_CV_UNSTABLE, SWING_LARGE_PP, TABLE,
};
use gpufeed_stats::{StepVerdict, UtilVerdict};

use crate::model::{
    Cause, DataProfile, DoctorSection, GpuUtil, LoaderSettings, PhaseVerdict, Profiler, Severity,
    Source, StepPhases, Telemetry, ThresholdRef,
};

mod attach;
pub(crate) mod profiler;

/// Everything the ranking reads.
#[derive(Debug, Clone, Copy, Default)]
pub struct Evidence<'a> {
    /// The doctor's findings and storage speeds.
    pub doctor: Option<&'a DoctorSection>,
    /// `profile data`.
    pub data: Option<&'a DataProfile>,
    /// `profile step`.
    pub step: Option<&'a StepPhases>,
    /// GPU utilisation.
    pub telemetry: Option<&'a Telemetry>,
    /// The user's profiler trace (`analyze --trace` with one).
    pub profiler: Option<&'a Profiler>,
    /// The user's running job sampled (`analyze --attach PID`).
    pub attach: Option<&'a gpufeed_contract::Attach>,
    /// The features were precomputed (the loader reads the cache).
    pub precomputed: bool,
    /// The dataset is gpufeed's generated demo, not the user's.
    pub demo: bool,
    /// The config is the user's (`--config`), not gpufeed's defaults.
    pub own_config: bool,
}

impl Evidence<'_> {
    /// Whose evidence gpufeed's own runs (the loader, the model) are.
    fn gpufeed_run(&self) -> Source {
        if self.demo {
            Source::Demo
        } else {
            Source::YourData
        }
    }

    /// Whose evidence a step profile is.
    fn step_source(&self, step: &StepPhases) -> Source {
        if step.is_own_loop() {
            Source::YourRun
        } else {
            self.gpufeed_run()
        }
    }
}

/// The row of `gpufeed_stats::thresholds::TABLE` called `name`.
#[must_use]
pub fn threshold(name: &str) -> Option<ThresholdRef> {
    TABLE.iter().find(|t| t.name == name).map(|t| ThresholdRef {
        name: t.name.to_owned(),
        value: t.value,
        unit: t.unit.to_owned(),
        meaning: t.meaning.to_owned(),
        source: t.source.to_owned(),
    })
}

// The report's figures, written as everywhere else (gpufeed-stats' one formatting module).
pub use gpufeed_stats::fmt::{ms, pct, secs};

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// Ranks the causes of starvation found in the evidence (see the module docs).
#[must_use]
pub fn rank(e: &Evidence<'_>) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let Some(t) = e.telemetry {
        causes.extend(util_causes(e, t));
    }
    if let Some(p) = e.profiler {
        causes.extend(profiler::causes(p));
    }
    if let Some(a) = e.attach {
        causes.extend(attach::causes(a));
    }
    if let Some(step) = e.step {
        causes.extend(input_cause(e, step));
        causes.extend(stall_cause(e, step));
    } else if let Some(data) = e.data {
        causes.extend(loader_cause(e, data));
    }
    if let Some(doctor) = e.doctor {
        causes.extend(doctor_causes(e, doctor));
    }
    // Stable: equal keys keep the order they were made in (the check order for the doctor).
    causes.sort_by(|a, b| match (a.lost_share, b.lost_share) {
        (Some(x), Some(y)) => y.total_cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => b.severity.cmp(&a.severity),
    });
    // Then by gain: the causes with an estimate of the fixed step first, the largest
    // speedup first (docs/what-if.md); the others keep the order above.
    gpufeed_contract::estimate::sort_by_gain(&mut causes, |c| c.if_fixed.as_ref());
    for (i, c) in causes.iter_mut().enumerate() {
        c.rank = i + 1;
    }
    causes
}

/// The step times (ms) of a profiler trace's judged rank (the straggler, else the slowest):
/// the series the report plots with its autocorrelation.
#[must_use]
pub fn profiler_step_ms(p: &Profiler) -> Vec<f64> {
    profiler::judged_rank(p).map_or_else(Vec::new, |r| {
        r.steps.iter().map(|s| s.dur_us / 1e3).collect()
    })
}

/// The estimate of the user's own loop's cause `id` (`StepTimer`'s `phase-steps` document).
fn own_estimate(step: &StepPhases, id: &str) -> Option<IfFixed> {
    step.causes()
        .iter()
        .find(|c| c.cause.as_str() == id)
        .and_then(|c| c.if_fixed.clone())
}

/// Why a step cause has no estimate: gpufeed's model is not the user's step.
fn no_step_estimate(step: &StepPhases, id: &str) -> Option<String> {
    if own_estimate(step, id).is_some() {
        None
    } else if step.is_own_loop() {
        Some("the recording's steps give no estimate (no step lasted any time)".to_owned())
    } else {
        Some(
            "measured on gpufeed's model, not your training step: time your loop with \
             `StepTimer` for an estimate"
                .to_owned(),
        )
    }
}

/// The thresholds the causes cite, each once, in order of first citation.
#[must_use]
pub fn cited_thresholds(causes: &[Cause]) -> Vec<ThresholdRef> {
    let mut out: Vec<ThresholdRef> = Vec::new();
    for name in causes.iter().flat_map(|c| &c.thresholds) {
        if out.iter().all(|t| &t.name != name)
            && let Some(t) = threshold(name)
        {
            out.push(t);
        }
    }
    out
}

/// One sentence: the most likely cause, or why none was found.
#[must_use]
pub fn verdict(e: &Evidence<'_>, causes: &[Cause]) -> String {
    let compute_bound = e
        .step
        .filter(|s| {
            s.input_share() < INPUT_BOUND_MODERATE && s.verdict() != PhaseVerdict::Undetermined
        })
        .map(|s| {
            let cycle = match (s.step().verdict.as_str(), s.step().period_steps) {
                ("oscillating", Some(p)) if !s.is_own_loop() => format!(
                    "; its time repeats every {p} steps, in the compute (batches of uneven \
                     size), not in the input"
                ),
                _ => String::new(),
            };
            format!(
                "{} is compute-bound: data wait and copies are {} of the step, below TF \
                 Profiler's {} for moderately input-bound{cycle}",
                step_name(s),
                pct(s.input_share()),
                pct(INPUT_BOUND_MODERATE)
            )
        })
        .or_else(|| e.profiler.and_then(profiler::compute_bound));
    // A profiler trace that could not be judged (no GPU events, no steps) says why.
    let unjudged = e.profiler.and_then(profiler::unjudged);
    // One story: the headline is the first ranked cause (by gain, docs/what-if.md), the
    // one the report lists first; a measured one before a suspected one.
    let first = causes
        .iter()
        .find(|c| c.lost_share.is_some())
        .or_else(|| causes.first());
    match first {
        Some(c) if c.lost_share.is_some() => format!(
            "Most likely cause of starvation: {}: {}.",
            c.title,
            trim_period(&c.summary)
        ),
        Some(c) => format!(
            "No starvation measured{}; suspected: {}: {}.",
            compute_bound.map_or_else(String::new, |s| format!(" ({s})")),
            c.title,
            trim_period(&c.summary)
        ),
        None => match compute_bound {
            Some(s) => format!("No starvation found: {s}."),
            None if unjudged.is_some() => unjudged.unwrap_or_default(),
            None if e.step.is_none()
                && e.data.is_none()
                && e.telemetry.is_none()
                && e.profiler.is_none() =>
            {
                "Nothing was measured: see the stages for what failed or was skipped.".to_owned()
            }
            None => "No cause of starvation found in what was measured.".to_owned(),
        },
    }
}

/// The verdict of a loop whose wait for data was not timed.
/// "the training step", or "your own training loop (`python StepTimer`)".
fn step_name(s: &StepPhases) -> String {
    if s.is_own_loop() {
        format!(
            "your own training loop (`{}`)",
            s.own_source().unwrap_or("unknown")
        )
    } else {
        "the training step".to_owned()
    }
}

/// "in your own loop, " before a cause's summary, when the steps are the user's.
fn own_prefix(s: &StepPhases) -> &'static str {
    if s.is_own_loop() {
        "in your own loop, "
    } else {
        ""
    }
}

fn trim_period(s: &str) -> &str {
    s.trim_end_matches('.')
}

/// The loader change the evidence supports: the benchmark's best cell against the settings
/// measured, or the settings to raise when there is no benchmark. Only settings of the
/// run the evidence came from (`source`) are quoted: gpufeed's own runs ran with the
/// config's settings; the user's own run used them only when the config is theirs, and the
/// benchmark measured their data only when it was not the demo.
fn loader_fix(e: &Evidence<'_>, source: Source) -> String {
    let (settings, benchmark) = match source {
        Source::Demo | Source::YourData => (true, true),
        Source::YourRun => (e.own_config, e.own_config && !e.demo),
        Source::ThisMachine => (false, false),
    };
    if !settings {
        return "give your loader more workers and a deeper prefetch (with gpufeed's config: \
                `num_workers`, `prefetch_buffer_size`), do per-item work once before training \
                (`gpufeed precompute`), and measure with `gpufeed profile data --benchmark \
                --data YOUR_DATA --config YOUR_CONFIG`"
            .to_owned();
    }
    let current = e
        .data
        .and_then(DataProfile::loader)
        .or_else(|| e.step.and_then(StepPhases::loader));
    let precompute = if e.precomputed {
        "features are precomputed (the loader reads the cache); "
    } else {
        "precompute the features (`gpufeed precompute`); "
    };
    let best = e
        .data
        .filter(|_| benchmark)
        .and_then(|d| d.recommendation.as_ref().map(|r| (d, r)));
    match (current, best) {
        (Some(cur), Some((data, rec))) => {
            let changes = setting_changes(
                cur,
                rec.num_workers,
                rec.prefetch_buffer_size,
                rec.batch_size,
            );
            if changes.is_empty() {
                format!(
                    "{precompute}the loader settings are already the benchmark's best \
                     ({:.0} samples/s): feed it more cores or lighten the per-item work",
                    rec.samples_per_s
                )
            } else {
                format!(
                    "{precompute}{} (the benchmark's best cell: {:.0} samples/s against {:.0} \
                     with the current settings)",
                    changes, rec.samples_per_s, data.samples_per_s
                )
            }
        }
        (Some(cur), None) => format!(
            "{precompute}raise num_workers (now {}) and prefetch_buffer_size (now {}), and \
             measure with `gpufeed profile data --benchmark`",
            cur.workers, cur.prefetch
        ),
        (None, _) => format!(
            "{precompute}raise num_workers and prefetch_buffer_size, and measure with \
             `gpufeed profile data --benchmark`"
        ),
    }
}

/// `raise num_workers from 2 to 8 and prefetch_buffer_size from 4 to 16`.
fn setting_changes(cur: LoaderSettings, workers: usize, prefetch: usize, batch: usize) -> String {
    let mut parts = Vec::new();
    let mut last_verb = "";
    for (key, from, to) in [
        ("num_workers", cur.workers, workers),
        ("prefetch_buffer_size", cur.prefetch, prefetch),
        ("batch_size", cur.batch_size, batch),
    ] {
        let verb = match to.cmp(&from) {
            Ordering::Greater => "raise ",
            Ordering::Less => "lower ",
            Ordering::Equal => continue,
        };
        // "raise a from 2 to 8 and b from 4 to 16": the verb once for a run of the same.
        let shown = if verb == last_verb { "" } else { verb };
        parts.push(format!("{shown}{key} from {from} to {to}"));
        last_verb = verb;
    }
    match parts.len() {
        0 => String::new(),
        1 => parts.remove(0),
        _ => {
            let last = parts.pop().unwrap_or_default();
            format!("{} and {last}", parts.join(", "))
        }
    }
}

/// One cause per utilisation verdict other than `stable`, with the numbers of its worst GPU.
fn util_causes(e: &Evidence<'_>, t: &Telemetry) -> Vec<Cause> {
    let mut by_verdict: BTreeMap<&str, Vec<&GpuUtil>> = BTreeMap::new();
    for g in &t.util.gpus {
        // Too short to judge is no cause: nothing was told apart.
        if !matches!(g.verdict, UtilVerdict::Stable | UtilVerdict::TooShort) {
            by_verdict.entry(g.verdict.as_str()).or_default().push(g);
        }
    }
    let (source, whose) = if t.source == "trace" {
        (
            format!(
                "utilisation log `{}`",
                t.file.as_deref().unwrap_or("(unnamed)")
            ),
            Source::YourRun,
        )
    } else {
        (
            "utilisation sampled during the step profile".to_owned(),
            e.gpufeed_run(),
        )
    };
    let mut out = Vec::new();
    for (verdict, gpus) in by_verdict {
        let lost = |g: &GpuUtil| 1.0 - g.mean / 100.0;
        let Some(g) = gpus
            .iter()
            .copied()
            .max_by(|a, b| lost(a).total_cmp(&lost(b)))
        else {
            continue;
        };
        let mut evidence = vec![format!(
            "GPU {}: mean {:.1} %, p5 {:.0} %, p50 {:.0} %, p95 {:.0} %: {} of its time unused ({source})",
            g.gpu,
            g.mean,
            g.p5,
            g.p50,
            g.p95,
            pct(lost(g))
        )];
        if g.idle_gaps.count > 0 {
            evidence.push(format!(
                "idle (< 10 %) {} of the time in {} gaps, mean {}, longest {}",
                pct(g.idle_fraction),
                g.idle_gaps.count,
                secs(g.idle_gaps.mean_s),
                secs(g.idle_gaps.max_s)
            ));
        }
        if gpus.len() > 1 {
            let others: Vec<String> = gpus
                .iter()
                .filter(|o| o.gpu != g.gpu)
                .map(|o| o.gpu.to_string())
                .collect();
            evidence.push(format!("also on GPU {}", others.join(", ")));
        }
        let (id, title, summary, thresholds, fix) =
            util_verdict_words(verdict, g, &mut evidence, e, whose);
        out.push(Cause {
            rank: 0,
            id: id.to_owned(),
            title: title.to_owned(),
            summary,
            lost_share: Some(lost(g).clamp(0.0, 1.0)),
            severity: Severity::Warning,
            evidence,
            thresholds,
            fix,
            stages: vec!["telemetry".to_owned()],
            source: whose,
            if_fixed: None,
            no_estimate: Some(
                "a utilisation log has no steps: time the steps (`StepTimer`) or profile them \
                 for an estimate"
                    .to_owned(),
            ),
        });
    }
    out
}

/// What a utilisation verdict says of its worst GPU `g`: the cause's id, title, summary,
/// thresholds and fix; the oscillation's cycle goes into `evidence`.
fn util_verdict_words(
    verdict: &str,
    g: &GpuUtil,
    evidence: &mut Vec<String>,
    e: &Evidence<'_>,
    whose: Source,
) -> (&'static str, &'static str, String, Vec<String>, String) {
    match verdict {
        "oscillating" => {
            let period = g.period_s.map_or_else(|| "n/a".to_owned(), secs);
            let strength = g.period_strength.unwrap_or(f64::NAN);
            evidence.insert(
                1,
                format!(
                    "a cycle every {period}, autocorrelation {strength:.2} (a period needs \
                     >= {PERIOD_MIN_STRENGTH} and a significant peak); swing p95 - p5 = {:.0} \
                     points (>= {SWING_LARGE_PP:.0} is large)",
                    g.p95 - g.p5
                ),
            );
            (
                "oscillating-utilisation",
                "oscillating utilisation",
                format!(
                    "GPU {} swings between {:.0} % and {:.0} % every {period} (autocorrelation {strength:.2})",
                    g.gpu, g.p5, g.p95
                ),
                names(&["PERIOD_MIN_STRENGTH", "SWING_LARGE_PP", "IDLE_UTIL_PCT"]),
                format!(
                    "the GPU waits for data in a regular cycle, the signature of a loader that \
                     delivers in bursts: {}",
                    loader_fix(e, whose)
                ),
            )
        }
        "bursty" => (
            "bursty-utilisation",
            "bursty utilisation",
            format!(
                "GPU {} stalls in {} idle gaps at irregular times, {} of the time idle",
                g.gpu,
                g.idle_gaps.count,
                pct(g.idle_fraction)
            ),
            names(&[
                "BURSTY_IDLE_FRACTION",
                "BURSTY_MIN_GAPS",
                "SWING_LARGE_PP",
                "IDLE_UTIL_PCT",
            ]),
            "irregular stalls come from storage hiccups, garbage collection, checkpoints or \
             uneven batches: see the storage and host findings, keep the prefetch deep, and \
             bucket utterances by length (`bucket_window`)"
                .to_owned(),
        ),
        "starved" => (
            "starved-gpu",
            "starved GPU",
            format!(
                "GPU {} is steadily under-used: mean {:.0} %, p95 {:.0} %",
                g.gpu, g.mean, g.p95
            ),
            names(&["STARVED_MEAN_UTIL_PCT"]),
            format!(
                "a pipeline that is slow but even, or a model or batch too small for this \
                 GPU: if the step is input-bound, {}; otherwise raise the batch size",
                loader_fix(e, whose)
            ),
        ),
        _ => (
            "idle-gpu",
            "idle GPU",
            format!(
                "GPU {} hardly works: idle {} of the time, p95 {:.0} %",
                g.gpu,
                pct(g.idle_fraction),
                g.p95
            ),
            names(&["IDLE_P95_UTIL_PCT", "IDLE_UTIL_PCT"]),
            "check that the job runs on this GPU (`CUDA_VISIBLE_DEVICES`, the framework's \
             device) and that it is not waiting on something else entirely"
                .to_owned(),
        ),
    }
}

/// Input- or transfer-bound: data wait + copies at or above TF Profiler's moderate share.
fn input_cause(e: &Evidence<'_>, step: &StepPhases) -> Option<Cause> {
    let input = step.input_share();
    if input.is_nan() || input < INPUT_BOUND_MODERATE {
        return None;
    }
    let (wait, copy) = (step.data_wait_share(), step.copy_share());
    let level = if input >= INPUT_BOUND_HIGH {
        format!(
            "TF Profiler calls >= {} highly input-bound",
            pct(INPUT_BOUND_HIGH)
        )
    } else {
        format!(
            "TF Profiler calls >= {} moderately, >= {} highly input-bound",
            pct(INPUT_BOUND_MODERATE),
            pct(INPUT_BOUND_HIGH)
        )
    };
    let transfer = copy > wait;
    let summary = if transfer {
        format!(
            "copies are {} of the step and data wait {} ({level})",
            pct(copy),
            pct(wait)
        )
    } else if copy >= 0.005 {
        format!(
            "data wait is {} of the step, copies {} ({level})",
            pct(wait),
            pct(copy)
        )
    } else {
        format!("data wait is {} of the step ({level})", pct(wait))
    };
    let summary = format!("{}{summary}", own_prefix(step));
    let mean = step.step().mean_ms;
    let consumes = step.samples_per_s().map_or_else(String::new, |v| {
        format!("; training consumes {v:.0} samples/s")
    });
    let mut evidence = vec![format!(
        "data wait {} and copies {} of a {} mean step{consumes}",
        ms(wait * mean),
        ms(copy * mean),
        ms(mean),
    )];
    let mut stages = vec!["profile step".to_owned()];
    let own = step.is_own_loop();
    if own {
        evidence.push(format!(
            "measured in {}, not in gpufeed's model",
            step_name(step)
        ));
        evidence.extend(step.evidence().iter().skip(1).cloned());
    }
    if let Some(d) = e.data.filter(|_| !own) {
        let b = &d.batches;
        evidence.push(format!(
            "the loader alone delivers {:.0} samples/s; {} {}, p99 {}, cv {:.2} ({})",
            d.samples_per_s,
            d.judged.what(),
            ms(b.mean_ms),
            ms(b.p99_ms),
            b.cv,
            b.verdict
        ));
        stages.push("profile data".to_owned());
    }
    if let Some(doctor) = e.doctor.filter(|_| !own) {
        for s in &doctor.storage {
            if let Some(mb) = s.sequential_mb_s {
                evidence.push(format!(
                    "storage reads {mb:.0} MB/s cold ({} folder `{}`)",
                    s.role, s.path
                ));
            }
        }
        if !doctor.storage.is_empty() {
            stages.push("doctor".to_owned());
        }
    }
    let fix = if own || transfer {
        step.fix().to_owned()
    } else {
        loader_fix(e, e.step_source(step))
    };
    Some(Cause {
        rank: 0,
        id: if transfer {
            "transfer-bound"
        } else {
            "input-bound"
        }
        .to_owned(),
        title: if transfer {
            "transfer-bound step"
        } else {
            "input-bound step"
        }
        .to_owned(),
        summary,
        lost_share: Some(input.clamp(0.0, 1.0)),
        severity: Severity::Warning,
        evidence,
        thresholds: names(&["INPUT_BOUND_MODERATE", "INPUT_BOUND_HIGH"]),
        fix,
        stages,
        source: e.step_source(step),
        if_fixed: own_estimate(
            step,
            if transfer {
                "transfer-bound"
            } else {
                "input-bound"
            },
        ),
        no_estimate: no_step_estimate(
            step,
            if transfer {
                "transfer-bound"
            } else {
                "input-bound"
            },
        ),
    })
}

/// A cycle in the step times, or irregular step times while the step is input-bound.
fn stall_cause(e: &Evidence<'_>, step: &StepPhases) -> Option<Cause> {
    let s = step.step();
    let own = step.is_own_loop();
    let cycle = s.verdict == StepVerdict::Oscillating;
    // gpufeed's own training loop has no checkpoint or logging step: a cycle or a spread in
    // its step times comes from the input (the data wait) or from the compute (batches of
    // uneven size). Only the first starves the device. A user's loop may checkpoint or log
    // every k steps: its cycle stalls the device whatever the input share.
    if step.input_share() < INPUT_BOUND_MODERATE && !(own && cycle) {
        return None;
    }
    if !cycle && s.verdict != StepVerdict::Unstable {
        return None;
    }
    let lost = stall_share(s.mean_ms, s.median_ms);
    // The user's loader is not gpufeed's: its number of workers is not known.
    let workers = if own {
        None
    } else {
        e.data
            .and_then(DataProfile::loader)
            .or_else(|| step.loader())
            .map(|l| l.workers)
    };
    let mut evidence = vec![format!(
        "step time mean {}, median {}, p95 {}, max {}, cv {:.2}: {} of the time is above the median step",
        ms(s.mean_ms),
        ms(s.median_ms),
        ms(s.p95_ms),
        ms(s.max_ms),
        s.cv,
        pct(lost)
    )];
    let (title, summary, thresholds, fix) = match (cycle, s.period_steps) {
        (true, Some(p)) => {
            evidence.push(format!(
                "autocorrelation {:.2} at a lag of {p} steps (a period needs >= {PERIOD_MIN_STRENGTH}); \
                 a cycle counts from cv >= {STEP_CV_OSCILLATING}",
                s.period_strength.unwrap_or(f64::NAN)
            ));
            let mut fix = String::new();
            if workers == Some(p) {
                evidence.push(format!(
                    "the period equals num_workers ({p}): batch k comes from worker k mod {p}, \
                     so one worker's batches are slower"
                ));
                fix.push_str(
                    "one loader worker is slower than the others: look for uneven batches \
                     (bucket by length with `bucket_window`, or static shapes) and for a worker \
                     sharing its core; ",
                );
            }
            if own {
                fix.push_str(&format!(
                    "compare the period ({p} steps) with your loader's workers, the logging and \
                     checkpoint intervals, and look for host syncs in the loop (`gpufeed lint`)"
                ));
            } else {
                fix.push_str(&format!(
                    "compare the period ({p} steps) with the loader's workers ({}), the logging \
                     and checkpoint intervals, and look for host syncs in the loop (`gpufeed \
                     lint`)",
                    workers.map_or_else(|| "n/a".to_owned(), |w| w.to_string())
                ));
            }
            (
                "periodic step stall",
                format!(
                    "a slow step every {p} steps: p95 {} against a median of {}, {} of the time above the median",
                    ms(s.p95_ms),
                    ms(s.median_ms),
                    pct(lost)
                ),
                names(&["STEP_CV_OSCILLATING", "PERIOD_MIN_STRENGTH"]),
                fix,
            )
        }
        _ => (
            "irregular step times",
            format!(
                "step times vary without a cycle (cv {:.2}, unstable from {STEP_CV_UNSTABLE}) \
                 while the step waits for data: {} of the time above the median",
                s.cv,
                pct(lost)
            ),
            names(&["STEP_CV_UNSTABLE"]),
            if own {
                format!(
                    "irregular input: {}; batches of similar size (bucketing by length) cost \
                     the same",
                    step.fix()
                )
            } else {
                format!(
                    "irregular input: {}; bucket utterances by length (`bucket_window`) so batches cost the same",
                    loader_fix(e, e.step_source(step))
                )
            },
        ),
    };
    let summary = format!("{}{summary}", own_prefix(step));
    if own {
        evidence.push(format!(
            "measured in {}, not in gpufeed's model",
            step_name(step)
        ));
    }
    Some(Cause {
        rank: 0,
        id: "step-stall".to_owned(),
        title: title.to_owned(),
        summary,
        lost_share: Some(lost.clamp(0.0, 1.0)),
        severity: Severity::Warning,
        evidence,
        thresholds,
        fix,
        stages: vec!["profile step".to_owned()],
        source: e.step_source(step),
        if_fixed: None,
        no_estimate: Some(
            "a cycle in the step time moves the mean and the slow steps, not the median step \
             the estimates are of"
                .to_owned(),
        ),
    })
}

/// The loader's batch times vary or cycle, and no step profile says whether the prefetch
/// absorbs it.
fn loader_cause(e: &Evidence<'_>, data: &DataProfile) -> Option<Cause> {
    let b = &data.batches;
    let subject = data.judged.subject();
    let (title, summary, thresholds) = match (b.verdict.as_str(), b.period_steps) {
        ("oscillating", Some(p)) => (
            "loader cycle",
            format!(
                "{subject} repeats every {p} batches (autocorrelation {:.2}, cv {:.2})",
                b.period_strength.unwrap_or(f64::NAN),
                b.cv
            ),
            names(&["STEP_CV_OSCILLATING", "PERIOD_MIN_STRENGTH"]),
        ),
        ("unstable", _) => (
            "irregular loader",
            format!(
                "{subject} varies: median {}, p99 {}, cv {:.2}",
                ms(b.median_ms),
                ms(b.p99_ms),
                b.cv
            ),
            names(&["STEP_CV_UNSTABLE"]),
        ),
        _ => return None,
    };
    Some(Cause {
        rank: 0,
        id: "loader-irregular".to_owned(),
        title: title.to_owned(),
        summary,
        lost_share: None,
        severity: Severity::Warning,
        evidence: vec![
            format!(
                "{} batches timed, {}: mean {}, max {}, {} outliers; {:.0} samples/s",
                b.samples,
                data.judged.what(),
                ms(b.mean_ms),
                ms(b.max_ms),
                b.outliers,
                data.samples_per_s
            ),
            "no step profile ran, so whether the prefetch hides it is not known".to_owned(),
        ],
        thresholds,
        fix: loader_fix(e, e.gpufeed_run()),
        stages: vec!["profile data".to_owned()],
        source: e.gpufeed_run(),
        if_fixed: None,
        no_estimate: Some(
            "the loader was measured without the training step, so no step time to estimate"
                .to_owned(),
        ),
    })
}

/// The doctor's checks in the order their causes are listed.
const CHECK_ORDER: [(&str, &str); 8] = [
    ("GPU", "GPU health"),
    ("Environment", "environment"),
    ("Storage", "storage"),
    ("Host", "host contention"),
    ("Config", "training config"),
    ("Code", "training code"),
    ("Frameworks", "frameworks"),
    ("Runtime", "loader (doctor's runtime check)"),
];

/// Findings listed per cause before "and N more".
const LISTED_FINDINGS: usize = 5;

/// One cause per doctor check with findings at warning or error severity.
fn doctor_causes(e: &Evidence<'_>, doctor: &DoctorSection) -> Vec<Cause> {
    let mut out = Vec::new();
    for (check, title) in CHECK_ORDER {
        // `profile data` measures the loader at length; the doctor's short run adds nothing.
        if check == "Runtime" && e.data.is_some() {
            continue;
        }
        let findings: Vec<_> = doctor
            .findings
            .iter()
            .filter(|f| f.check == check && f.severity >= Severity::Warning)
            .collect();
        let Some(first) = findings.first() else {
            continue;
        };
        let severity = findings
            .iter()
            .map(|f| f.severity)
            .max()
            .unwrap_or(Severity::Warning);
        let mut evidence: Vec<String> = findings
            .iter()
            .take(LISTED_FINDINGS)
            .map(|f| {
                let place = f.path.as_deref().map_or_else(String::new, |p| {
                    f.line
                        .map_or_else(|| format!(" `{p}`"), |l| format!(" `{p}:{l}`"))
                });
                if f.evidence.is_empty() {
                    format!("{}[{}]{place}: {}", f.severity.as_str(), f.id, f.message)
                } else {
                    format!(
                        "{}[{}]{place}: {} ({})",
                        f.severity.as_str(),
                        f.id,
                        f.message,
                        f.evidence
                    )
                }
            })
            .collect();
        if findings.len() > LISTED_FINDINGS {
            evidence.push(format!(
                "and {} more in the findings table",
                findings.len() - LISTED_FINDINGS
            ));
        }
        if check == "Storage" {
            for s in &doctor.storage {
                if let (Some(mb), Some(iops)) = (s.sequential_mb_s, s.random_reads_per_s) {
                    evidence.push(format!(
                        "{} folder `{}`: {mb:.0} MB/s sequential, {iops:.0} random 4 KiB reads/s, cold",
                        s.role, s.path
                    ));
                }
            }
        }
        let mut fixes: Vec<&str> = Vec::new();
        for f in &findings {
            if !f.fix.is_empty() && !fixes.contains(&f.fix.as_str()) {
                fixes.push(&f.fix);
            }
        }
        let summary = if findings.len() == 1 {
            first.message.clone()
        } else {
            format!("{} (and {} more)", first.message, findings.len() - 1)
        };
        out.push(Cause {
            rank: 0,
            id: format!("doctor-{}", check.to_lowercase()),
            title: title.to_owned(),
            summary,
            lost_share: None,
            severity,
            evidence,
            thresholds: Vec::new(),
            fix: if fixes.is_empty() {
                "see the findings table".to_owned()
            } else {
                fixes.iter().take(3).copied().collect::<Vec<_>>().join("; ")
            },
            stages: vec!["doctor".to_owned()],
            source: match check {
                "Config" | "Code" => Source::YourRun,
                "Runtime" => e.gpufeed_run(),
                _ => Source::ThisMachine,
            },
            if_fixed: None,
            no_estimate: Some("a doctor finding: no step-time model applies".to_owned()),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Finding, StepProfile, Steps, Util};
    use gpufeed_contract::StepConfig;
    use gpufeed_stats::IdleGaps;
    use serde_json::json;

    fn oscillating() -> Telemetry {
        Telemetry {
            source: "trace".into(),
            file: Some("gpu.csv".into()),
            util: Util {
                samples: 600,
                interval_s: 0.1,
                gpus: vec![GpuUtil {
                    gpu: 0,
                    mean: 22.4,
                    p5: 0.0,
                    p50: 37.0,
                    p95: 43.0,
                    idle_fraction: 0.467,
                    period_s: Some(1.5),
                    period_strength: Some(0.96),
                    idle_gaps: IdleGaps {
                        count: 40,
                        mean_s: 0.7,
                        max_s: 0.7,
                    },
                    verdict: UtilVerdict::Oscillating,
                    ..GpuUtil::default()
                }],
                ..Util::default()
            },
        }
    }

    fn step(wait_share: f64) -> StepPhases {
        StepPhases::Model(Box::new(StepProfile {
            config: StepConfig {
                loader: json!({"batch_size": 16, "workers": 2, "prefetch": 4}),
                ..StepConfig::default()
            },
            phases: serde_json::from_value(json!({
                "data_wait": {"order": 0, "category": "input", "mean_ms": wait_share * 100.0,
                              "std_ms": 1.0, "share": wait_share, "steps": 30},
                "forward": {"order": 1, "category": "compute", "mean_ms": 40.0, "std_ms": 1.0,
                            "share": 0.4, "steps": 30},
            }))
            .unwrap(),
            step: Steps {
                samples: 30,
                mean_ms: 100.0,
                median_ms: 98.0,
                verdict: StepVerdict::Stable,
                ..Steps::default()
            },
            samples_per_s: 160.0,
            verdict: if wait_share >= 0.05 {
                PhaseVerdict::InputBound
            } else {
                PhaseVerdict::ComputeBound
            },
            ..StepProfile::default()
        }))
    }

    #[test]
    fn a_step_cycle_counts_only_when_the_input_drives_it() {
        let mut compute = step(0.001);
        let cs = compute.step_mut();
        cs.verdict = StepVerdict::Oscillating;
        cs.period_steps = Some(2);
        cs.mean_ms = 130.0;
        cs.median_ms = 100.0;
        let e = Evidence {
            step: Some(&compute),
            ..Evidence::default()
        };
        assert!(rank(&e).is_empty());
        assert!(verdict(&e, &[]).contains("repeats every 2 steps, in the compute"));

        let mut input = step(0.3);
        *input.step_mut() = compute.step().clone();
        input.step_mut().period_strength = Some(0.7);
        let e = Evidence {
            step: Some(&input),
            ..Evidence::default()
        };
        let causes = rank(&e);
        let stall = causes.iter().find(|c| c.id == "step-stall").unwrap();
        assert!((stall.lost_share.unwrap() - 30.0 / 130.0).abs() < 1e-12);
        assert!(
            stall
                .evidence
                .iter()
                .any(|l| l.contains("equals num_workers (2)"))
        );
        assert!(stall.fix.starts_with("one loader worker is slower"));
    }

    #[test]
    fn oscillation_outranks_a_smaller_input_share() {
        let t = oscillating();
        let s = step(0.38);
        let causes = rank(&Evidence {
            telemetry: Some(&t),
            step: Some(&s),
            ..Evidence::default()
        });
        assert_eq!(causes[0].id, "oscillating-utilisation");
        assert!(causes[0].summary.contains("every 1.50 s"), "{causes:?}");
        assert_eq!(causes[1].id, "input-bound");
        assert!(causes[1].summary.contains("data wait is 38 % of the step"));
        assert_eq!(causes[1].rank, 2);
    }

    /// Ordered by gain: the user's own loop's input wait, with its estimate, comes before
    /// a larger utilisation cycle, which has none (and says why). The headline is the first
    /// ranked cause: it named the larger share, so that the headline and the list told two
    /// stories (issue 41).
    #[test]
    fn causes_with_an_estimate_come_first_and_the_headline_is_the_first() {
        use gpufeed_contract::{PhaseCause, PhaseSteps, PhaseStepsKind, PhaseVerdict};
        let t = oscillating();
        let StepPhases::Model(m) = step(0.38) else {
            unreachable!("step() is gpufeed's model")
        };
        let own = StepPhases::OwnLoop(Box::new(PhaseSteps {
            kind: PhaseStepsKind::PhaseSteps,
            schema_version: 2,
            source: "python StepTimer".into(),
            sync: true,
            warmup: 0,
            batch_size: None,
            phases: m.phases.clone(),
            unaccounted_share: 0.0,
            step: m.step.clone(),
            steps_per_s: m.steps_per_s,
            samples_per_s: None,
            verdict: PhaseVerdict::InputBound,
            level: m.level,
            evidence: m.evidence.clone(),
            fix: m.fix.clone(),
            causes: vec![PhaseCause {
                cause: PhaseVerdict::InputBound,
                phases: vec!["data_wait".into()],
                share: 0.38,
                level: gpufeed_stats::thresholds::Level::High,
                if_fixed: IfFixed::new(100.0, 62.0, "the wait goes"),
            }],
            series: None,
        }));
        let e = Evidence {
            telemetry: Some(&t),
            step: Some(&own),
            ..Evidence::default()
        };
        let causes = rank(&e);
        assert_eq!(causes[0].id, "input-bound");
        assert_eq!(causes[0].if_fixed.as_ref().map(|f| f.step_ms), Some(62.0));
        assert_eq!(causes[1].id, "oscillating-utilisation");
        assert!(causes[1].if_fixed.is_none());
        assert!(
            causes[1]
                .no_estimate
                .as_deref()
                .is_some_and(|w| w.contains("no steps")),
            "{causes:?}"
        );
        let v = verdict(&e, &causes);
        assert!(
            v.starts_with("Most likely cause of starvation: ") && v.contains(&causes[0].title),
            "{v}"
        );
    }

    /// gpufeed's loader at 2 workers, and the benchmark's better setting (8 workers).
    fn benchmarked_loader() -> DataProfile {
        DataProfile {
            config: crate::model::DataConfig {
                loader: json!({"batch_size": 16, "workers": 2, "prefetch": 4}),
                ..crate::model::DataConfig::default()
            },
            samples_per_s: 900.0,
            recommendation: Some(crate::model::Recommendation {
                batch_size: 16,
                num_workers: 8,
                prefetch_buffer_size: 16,
                samples_per_s: 3000.0,
                ..Default::default()
            }),
            ..DataProfile::default()
        }
    }

    #[test]
    fn benchmark_gives_the_fix() {
        let s = step(0.38);
        let data = benchmarked_loader();
        let causes = rank(&Evidence {
            step: Some(&s),
            data: Some(&data),
            precomputed: true,
            ..Evidence::default()
        });
        assert_eq!(
            causes[0].fix,
            "features are precomputed (the loader reads the cache); raise num_workers from 2 \
             to 8 and prefetch_buffer_size from 4 to 16 (the benchmark's best cell: 3000 \
             samples/s against 900 with the current settings)"
        );
    }

    /// The user's utilisation log with gpufeed's demo and no `--config`: the fix once read
    /// "raise num_workers (now 2) and prefetch_buffer_size (now 4)", the demo's settings.
    #[test]
    fn a_fix_quotes_only_settings_of_its_own_source() {
        let t = oscillating();
        let data = benchmarked_loader();
        let demo_step = step(0.38);
        let on_demo = Evidence {
            telemetry: Some(&t),
            data: Some(&data),
            step: Some(&demo_step),
            precomputed: true,
            demo: true,
            own_config: false,
            ..Evidence::default()
        };
        let causes = rank(&on_demo);
        let util = causes
            .iter()
            .find(|c| c.id == "oscillating-utilisation")
            .unwrap();
        assert_eq!(util.source, Source::YourRun);
        for quoted in ["now 2", "from 2 to 8", "3000 samples/s", "num_workers from"] {
            assert!(!util.fix.contains(quoted), "{quoted}: {}", util.fix);
        }
        assert!(
            util.fix.contains("give your loader more workers"),
            "{}",
            util.fix
        );
        // The demo's own causes quote the demo's settings, and say whose they are.
        let input = causes.iter().find(|c| c.id == "input-bound").unwrap();
        assert_eq!(input.source, Source::Demo);
        assert!(
            input.fix.contains("raise num_workers from 2 to 8"),
            "{}",
            input.fix
        );
        assert!(input.source.label().contains("not your data"));

        // With the user's config, their settings are quoted; the benchmark ran on the demo,
        // not on their data, so it is not.
        let with_config = Evidence {
            own_config: true,
            ..on_demo
        };
        let causes = rank(&with_config);
        let util = &causes[0];
        assert_eq!(util.id, "oscillating-utilisation");
        assert!(util.fix.contains("(now 2)"), "{}", util.fix);
        assert!(!util.fix.contains("3000"), "{}", util.fix);

        // Their data and their config: the benchmark measured their data too.
        let theirs = Evidence {
            demo: false,
            own_config: true,
            ..on_demo
        };
        let causes = rank(&theirs);
        assert!(causes[0].fix.contains("from 2 to 8"), "{}", causes[0].fix);
        let input = causes.iter().find(|c| c.id == "input-bound").unwrap();
        assert_eq!(input.source, Source::YourData);
    }

    #[test]
    fn compute_bound_is_no_cause() {
        let s = step(0.01);
        let e = Evidence {
            step: Some(&s),
            ..Evidence::default()
        };
        let causes = rank(&e);
        assert!(causes.is_empty());
        assert!(
            verdict(&e, &causes)
                .starts_with("No starvation found: the training step is compute-bound")
        );
        assert!(verdict(&Evidence::default(), &[]).starts_with("Nothing was measured"));
    }

    #[test]
    fn doctor_findings_follow_measured_causes() {
        let t = oscillating();
        let doctor = DoctorSection {
            findings: vec![Finding {
                finding: gpufeed_contract::Finding {
                    id: "file-not-linted".into(),
                    severity: Severity::Error,
                    message: "binary".into(),
                    path: Some("x.bin".into()),
                    line: None,
                    column: None,
                    evidence: String::new(),
                    fix: "pass Python sources".into(),
                },
                check: "Code".into(),
            }],
            ..DoctorSection::default()
        };
        let causes = rank(&Evidence {
            telemetry: Some(&t),
            doctor: Some(&doctor),
            ..Evidence::default()
        });
        assert_eq!(causes[0].id, "oscillating-utilisation");
        assert_eq!(causes[1].id, "doctor-code");
        assert_eq!(causes[1].severity, Severity::Error);
        assert_eq!(causes[1].fix, "pass Python sources");
    }

    #[test]
    fn every_cited_threshold_exists() {
        let t = oscillating();
        let s = step(0.38);
        let causes = rank(&Evidence {
            telemetry: Some(&t),
            step: Some(&s),
            ..Evidence::default()
        });
        let cited = cited_thresholds(&causes);
        let all: usize = causes.iter().map(|c| c.thresholds.len()).sum();
        assert!(!cited.is_empty() && cited.len() <= all);
        for c in &causes {
            for name in &c.thresholds {
                assert!(threshold(name).is_some(), "{name}");
            }
        }
    }

    #[test]
    fn changes_read_well() {
        let cur = LoaderSettings {
            batch_size: 16,
            workers: 2,
            prefetch: 4,
        };
        assert_eq!(setting_changes(cur, 2, 4, 16), "");
        assert_eq!(
            setting_changes(cur, 4, 4, 16),
            "raise num_workers from 2 to 4"
        );
        assert_eq!(
            setting_changes(cur, 1, 8, 32),
            "lower num_workers from 2 to 1, raise prefetch_buffer_size from 4 to 8 and batch_size from 16 to 32"
        );
    }

    #[test]
    fn shares_read_well() {
        assert_eq!(pct(0.38), "38 %");
        assert_eq!(pct(0.042), "4.2 %");
        assert_eq!(pct(0.0031), "0.31 %");
        assert_eq!(pct(f64::NAN), "n/a");
        assert_eq!(secs(1.5), "1.50 s");
        assert_eq!(secs(0.7), "700 ms");
    }

    /// A phase-steps document of the user's own loop, as `analyze --trace` hands it over.
    fn own(phases: serde_json::Value, verdict: &str, fix: &str) -> StepPhases {
        serde_json::from_value(json!({
            "kind": "phase-steps",
            "schema_version": 1,
            "source": "python StepTimer",
            "sync": true,
            "warmup": 1,
            "phases": phases,
            "unaccounted_share": 0.01,
            "step": {"samples": 200, "mean_ms": 100.0, "std_ms": 2.0, "min_ms": 95.0,
                     "max_ms": 110.0, "median_ms": 99.0, "p95_ms": 104.0, "p99_ms": 108.0,
                     "cv": 0.02, "period_steps": null, "period_strength": null,
                     "outliers": 0, "verdict": "stable", "kind": "steps",
                     "schema_version": 1},
            "steps_per_s": 10.0,
            "samples_per_s": null,
            "verdict": verdict,
            "level": "high",
            "evidence": ["data wait 30.0 % + copies 0.0 % = 30.0 % of the step (TF ...)",
                         "1.0 % of the step is outside every timed phase"],
            "fix": fix,
        }))
        .unwrap()
    }

    #[test]
    fn the_own_loop_takes_its_own_fix_and_says_whose_it_is() {
        let s = own(
            json!({
                "data_wait": {"order": 0, "category": "input", "mean_ms": 30.0, "std_ms": 1.0, "share": 0.3, "steps": 200},
                "forward": {"order": 1, "category": "compute", "mean_ms": 69.0, "std_ms": 1.0, "share": 0.69, "steps": 200},
            }),
            "input-bound",
            "the input pipeline does not keep up: give the loader more worker processes",
        );
        assert!(s.is_own_loop());
        // gpufeed's own loader, benchmarked on the demo data: not the user's loader.
        let data = benchmarked_loader();
        let e = Evidence {
            step: Some(&s),
            data: Some(&data),
            precomputed: true,
            ..Evidence::default()
        };
        let causes = rank(&e);
        assert_eq!(causes.len(), 1, "{causes:?}");
        let c = &causes[0];
        assert_eq!(c.id, "input-bound");
        assert_eq!(c.fix, s.fix());
        assert!(
            c.summary
                .starts_with("in your own loop, data wait is 30 % of the step"),
            "{}",
            c.summary
        );
        assert!(
            c.evidence.contains(
                &"measured in your own training loop (`python StepTimer`), not in gpufeed's model"
                    .to_owned()
            ),
            "{:?}",
            c.evidence
        );
        assert!(
            c.evidence
                .contains(&"1.0 % of the step is outside every timed phase".to_owned())
        );
        assert!(!c.evidence.iter().any(|l| l.contains("loader alone")));
        assert!(!c.evidence[0].contains("samples/s"), "{:?}", c.evidence);
        assert!(verdict(&e, &causes).starts_with(
            "Most likely cause of starvation: input-bound step: in your own loop, data wait"
        ));
    }

    #[test]
    fn the_own_loop_counts_its_copy_phases_by_category() {
        let s = own(
            json!({
                "data_wait": {"order": 0, "category": "input", "mean_ms": 1.0, "std_ms": 0.1, "share": 0.01, "steps": 200},
                "batch_to_gpu_transfer": {"order": 1, "category": "copy", "mean_ms": 25.0, "std_ms": 1.0, "share": 0.25, "steps": 200},
                "forward": {"order": 2, "category": "compute", "mean_ms": 70.0, "std_ms": 1.0, "share": 0.70, "steps": 200},
            }),
            "transfer-bound",
            "copies dominate the input time",
        );
        assert!((s.copy_share() - 0.25).abs() < 1e-12);
        assert!((s.input_share() - 0.26).abs() < 1e-12);
        let names: Vec<String> = s.ordered_phases().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["data_wait", "batch_to_gpu_transfer", "forward"]);
        let causes = rank(&Evidence {
            step: Some(&s),
            ..Evidence::default()
        });
        assert_eq!(causes[0].id, "transfer-bound");
        assert_eq!(causes[0].fix, "copies dominate the input time");
    }

    #[test]
    fn a_cycle_in_the_own_loop_counts_even_when_compute_bound() {
        let mut s = own(
            json!({
                "data_wait": {"order": 0, "category": "input", "mean_ms": 1.0, "std_ms": 0.1, "share": 0.01, "steps": 200},
                "forward": {"order": 1, "category": "compute", "mean_ms": 98.0, "std_ms": 40.0, "share": 0.98, "steps": 200},
            }),
            "oscillating",
            "a cycle in the step time is a periodic stall",
        );
        let st = s.step_mut();
        st.verdict = StepVerdict::Oscillating;
        st.period_steps = Some(8);
        st.period_strength = Some(0.8);
        st.mean_ms = 130.0;
        st.median_ms = 100.0;
        let e = Evidence {
            step: Some(&s),
            ..Evidence::default()
        };
        let causes = rank(&e);
        assert_eq!(causes[0].id, "step-stall");
        assert!(
            causes[0]
                .summary
                .starts_with("in your own loop, a slow step every 8 steps"),
            "{}",
            causes[0].summary
        );
        assert!(!causes[0].fix.contains("n/a"), "{}", causes[0].fix);
        assert!(
            causes[0].fix.contains("your loader's workers"),
            "{}",
            causes[0].fix
        );
    }

    #[test]
    fn an_undetermined_own_loop_is_not_called_compute_bound() {
        let s = own(
            json!({
                "forward": {"order": 0, "category": "compute", "mean_ms": 98.0, "std_ms": 1.0, "share": 0.98, "steps": 200},
            }),
            "undetermined",
            "time the wait for each batch as `data_wait`",
        );
        let e = Evidence {
            step: Some(&s),
            ..Evidence::default()
        };
        let causes = rank(&e);
        assert!(causes.is_empty());
        let v = verdict(&e, &causes);
        assert!(!v.contains("compute-bound"), "{v}");
        let mut c = s.clone();
        if let StepPhases::OwnLoop(d) = &mut c {
            d.verdict = PhaseVerdict::ComputeBound;
        }
        let e = Evidence {
            step: Some(&c),
            ..Evidence::default()
        };
        assert!(
            verdict(&e, &[]).starts_with(
                "No starvation found: your own training loop (`python StepTimer`) is compute-bound"
            ),
            "{}",
            verdict(&e, &[])
        );
    }
}
