//! `gpufeed trace` on a PyTorch or TensorFlow profiler trace: the analysis
//! ([`gpufeed_kineto::Report`], the `profiler` document) with its warnings, and the text
//! report. [`crate::detect`] decides that a path is one. Nothing here prints.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use gpufeed_contract::{Document as _, TraceFormat};
use gpufeed_kineto::Options;
use gpufeed_kineto::job::{self, Part, Plan};
use gpufeed_kineto::report::{RankReport, Report};
use gpufeed_kineto::tf::Classified;
use gpufeed_stats::fmt::us as ms;

use crate::detect::TraceSource;
use crate::profile::step_text::verdict_head;

/// Reads and analyses the trace with `opts` ([`options`]: the format forced, or detected
/// from the content); the warnings to print once each.
///
/// # Errors
///
/// A file or folder that cannot be read as a profiler trace, named.
pub fn analyze(path: &Path, opts: Options) -> Result<(Report, Vec<String>)> {
    analyze_job(path, opts, &Plan::default())
}

/// [`analyze`], reading `plan.jobs` files of a folder at a time, each kept only as its
/// summary, with `plan.progress` counting what was read.
///
/// # Errors
///
/// A file or folder that cannot be read as a profiler trace, named.
pub fn analyze_job(path: &Path, opts: Options, plan: &Plan<'_>) -> Result<(Report, Vec<String>)> {
    let report = job::analyze_job(path, opts, plan)?;
    let warnings = warnings(path, &report);
    Ok((report, warnings))
}

/// The options of a read: `format` forced, what detection found in a file's head (so that
/// the file is not opened again to sniff), and HTA's rounding as its environment variable
/// says.
#[must_use]
pub fn options(format: Option<TraceFormat>, classified: Option<Classified>) -> Options {
    Options {
        format,
        no_rounding: std::env::var(gpufeed_kineto::hta::DISABLE_ROUNDING_ENV).as_deref() == Ok("1"),
        classified,
    }
}

/// The options a detected profiler trace is read with ([`options`]), and its path; `None`
/// for a log.
#[must_use]
pub fn source_options(source: &TraceSource) -> Option<(&Path, Options)> {
    match source {
        TraceSource::Profiler {
            path,
            format,
            classified,
        } => Some((path, options(*format, *classified))),
        _ => None,
    }
}

/// The job's report from the parts of an array job's tasks (`gpufeed trace DIR --shard`),
/// with its warnings.
///
/// # Errors
///
/// Parts missing, repeated, or of different jobs, named.
pub fn merge(parts: Vec<Part>) -> Result<(Report, Vec<String>)> {
    let report = job::merge(parts)?;
    let warnings = warnings(Path::new(&report.path), &report);
    Ok((report, warnings))
}

/// Reads this task's part of the folder of profiler traces at `path` (the files whose index
/// is `index` mod `count`) and writes it to `out` atomically: to `out` itself, or, when
/// `out` is a folder (every task given the same one), to `part-IIIII-of-N.json` in it.
/// Returns the path written and the part.
///
/// # Errors
///
/// A trace that cannot be read, or a part that cannot be written, named.
pub fn write_part(
    path: &Path,
    opts: Options,
    plan: &Plan<'_>,
    (index, count): (u32, u32),
    out: &Path,
) -> Result<(PathBuf, Part)> {
    let part = job::read_part(path, opts, plan, (index, count))?;
    let out = if out.is_dir() {
        out.join(format!("part-{index:05}-of-{count}.json"))
    } else {
        out.to_owned()
    };
    let text = serde_json::to_string(&part)? + "\n";
    gpufeed_fs::write_atomic(&out, |f| std::io::Write::write_all(f, text.as_bytes()))
        .with_context(|| format!("cannot write the part `{}`", out.display()))?;
    Ok((out, part))
}

/// The parts named (files, or folders of `*.json` parts), each read as a `profiler-part`
/// of this gpufeed's version.
///
/// # Errors
///
/// A folder with no part, a file that is not JSON, not a part, a part of another version
/// or a damaged part, named with what to give instead.
pub fn read_parts(paths: &[PathBuf]) -> Result<Vec<Part>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = fs_err::read_dir(p)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "json"))
                .collect();
            if found.is_empty() {
                bail!(
                    "`{}` holds no `*.json` part\n\nhint: give the parts that `gpufeed trace \
                     DIR --shard I/N --out PART.json` wrote, or their folder",
                    p.display()
                );
            }
            found.sort();
            files.extend(found);
        } else {
            files.push(p.clone());
        }
    }
    files.iter().map(|f| read_part_file(f)).collect()
}

/// One `profiler-part` file, its kind and version checked before it is read whole.
fn read_part_file(f: &Path) -> Result<Part> {
    let text = fs_err::read_to_string(f)?;
    let head: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("`{}` is not JSON, so not a part", f.display()))?;
    let kind = head.get("kind").and_then(|k| k.as_str());
    let version = head
        .get("schema_version")
        .and_then(serde_json::Value::as_u64);
    if kind != Some(Part::NAME) {
        bail!(
            "`{}` is not a part of a profiler job (its `kind` is {})\n\nhint: give the \
             parts that `gpufeed trace DIR --shard I/N --out PART.json` wrote",
            f.display(),
            kind.map_or_else(|| "absent".to_owned(), |k| format!("`{k}`"))
        );
    }
    if version != Some(u64::from(Part::VERSION)) {
        bail!(
            "`{}` is a part of version {}, and this gpufeed merges version {}: run the \
             tasks and the merge with the same gpufeed",
            f.display(),
            version.map_or_else(|| "unknown".to_owned(), |v| v.to_string()),
            Part::VERSION
        );
    }
    serde_json::from_value(head).with_context(|| format!("`{}`: a damaged part", f.display()))
}

/// The report's own warnings, and one for a trace without GPU events.
fn warnings(path: &Path, report: &Report) -> Vec<String> {
    let mut warnings = report.warnings.clone();
    if report.gpu_events() == 0 && report.tf_profiler.is_none() {
        let how = match report.format {
            // JAX's profiler writes the same format (`jax.profiler.trace`).
            TraceFormat::Tensorflow => {
                "with a TensorFlow or JAX that sees the GPU (`tf.config.list_physical_devices('GPU')` \
                 or `jax.devices()` lists it)"
            }
            _ => "with `ProfilerActivity.CUDA` (PyTorch)",
        };
        let launches = report.launch_calls();
        warnings.push(if launches > 0 {
            lost_kernels(path, launches)
        } else {
            format!(
                "`{}` holds no GPU events (kernels, copies or sets): a CPU-only profile? \
                 Profile {how} on a machine with a GPU to see where the GPU idles",
                path.display()
            )
        });
    }
    warnings
}

/// What a trace with kernel launches but no kernel records says.
#[must_use]
pub fn lost_kernels(path: &Path, launches: usize) -> String {
    format!(
        "`{}` holds {launches} kernel launch call(s) on the host but no kernel records: the \
         GPU ran, and the profiler lost what it did. Usually its activity buffer overflowed (a \
         long or busy window: profile fewer steps with a `schedule`), or the kernels were \
         launched through the driver API (Triton, `cuLaunchKernel`), which an older CUPTI does \
         not record; a newer PyTorch, or fewer steps, keeps them",
        path.display()
    )
}

fn render_rank(o: &mut String, r: &RankReport, format: TraceFormat) {
    // The device's name when the trace gives one; "GPU" only when it has GPU events.
    let _ = match (
        r.device_id,
        r.device.as_deref().or(r.temporal.map(|_| "GPU")),
    ) {
        (Some(_), Some(device)) => write!(o, "\nrank {}, device {device}: ", r.rank),
        (None, Some(device)) => write!(o, "\nrank {} ({device}): ", r.rank),
        (_, None) => write!(o, "\nrank {}: ", r.rank),
    };
    match r.verdict {
        Some(v) => verdict_head(
            o,
            v.as_str(),
            r.level,
            &r.evidence,
            r.fix.as_deref().unwrap_or(""),
        ),
        None => {
            let _ = writeln!(
                o,
                "no verdict ({})",
                if r.temporal.is_none() {
                    "no GPU events"
                } else if let Some(why) = r.no_verdict.as_deref() {
                    why
                } else {
                    gpufeed_kineto::report::no_steps_hint(format)
                }
            );
        }
    }
    if let Some(st) = &r.step_time {
        o.push_str(&gpufeed_contract::estimate::lines(
            r.causes
                .iter()
                .map(|c| (c.bottleneck.as_str(), c.if_fixed.as_ref())),
            st.median_ms,
            "  ",
        ));
    }
    if let Some(t) = r.temporal {
        let _ = writeln!(
            o,
            "  GPU time (HTA): span {}: idle {:.2} %, compute {:.2} %, non-compute {:.2} %",
            // HTA's ns rounding can make a span of one sub-µs event -1 µs: none.
            ms(t.span_us.max(0.0)),
            t.idle_pct,
            t.compute_pct,
            t.non_compute_pct
        );
    }
    let w = r.window;
    let _ = writeln!(
        o,
        "  analysed {} of {} GPU events, {} of {} steps{}",
        w.gpu_events_analysed,
        w.gpu_events_in_file,
        r.steps.len(),
        w.steps_in_file,
        if w.applied {
            " (as HTA: the last ProfilerStep and what it launched are left out)"
        } else {
            ""
        }
    );
    for s in &r.idle_breakdown {
        let total = s.host_wait_us + s.kernel_wait_us + s.other_us;
        if total <= 0.0 {
            continue;
        }
        let p = |x: f64| 100.0 * x / total;
        let _ = writeln!(
            o,
            "  stream {:>4} idle {}: host wait {:.1} %, kernel wait {:.1} %, other {:.1} %",
            s.stream,
            ms(total),
            p(s.host_wait_us),
            p(s.kernel_wait_us),
            p(s.other_us)
        );
    }
    if let Some(m) = r.markers {
        let _ = writeln!(o, "  steps from {}", m.describe());
    }
    if let Some(st) = &r.step_time {
        let period = match (st.period_steps, st.period_strength) {
            (Some(p), Some(a)) => format!(", a cycle every {p} steps (autocorrelation {a:.2})"),
            _ => String::new(),
        };
        let _ = writeln!(
            o,
            "  steps: mean {:.1} ms, median {:.1}, max {:.1}, cv {:.2}{period}",
            st.mean_ms, st.median_ms, st.max_ms, st.cv
        );
    }
    if !r.steps.is_empty() {
        let _ = writeln!(
            o,
            "  {:>7} {:>9} {:>6} | GPU idle, ms: {:>7} {:>7} {:>7} {:>7} {:>7} | H2D ms (pageable)",
            "step", "time ms", "busy%", "data", "copy", "sync", "launch", "other"
        );
        for s in &r.steps {
            let _ = writeln!(
                o,
                "  {:>7} {:>9.2} {:>6.1} |               {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} | {:.2} ({:.2})",
                format!("#{}", s.step),
                s.dur_us / 1e3,
                s.gpu_busy_pct,
                s.data_wait_us / 1e3,
                s.copy_wait_us / 1e3,
                s.sync_wait_us / 1e3,
                s.launch_wait_us / 1e3,
                s.other_idle_us / 1e3,
                s.h2d_us / 1e3,
                s.h2d_pageable_us / 1e3,
            );
        }
    }
}

/// The human report: the run's verdict first, then each rank.
#[must_use]
pub fn render_text(r: &Report) -> String {
    let mut o = String::new();
    let format = r.format.name();
    let _ = writeln!(
        o,
        "{}: {format}, {} rank{}",
        r.path,
        r.ranks.len(),
        if r.ranks.len() == 1 { "" } else { "s" }
    );
    if let Some(v) = &r.tf_profiler {
        let _ = writeln!(
            o,
            "TF Profiler's own verdict (`{}`): {}{}",
            v.file,
            v.statement,
            v.bottleneck
                .as_deref()
                .map_or_else(String::new, |b| format!(" (its bottleneck: {b})"))
        );
        for n in &v.notes {
            let _ = writeln!(o, "  TF Profiler: {n}");
        }
        if let Some(a) = &r.tf_profiler_agreement {
            let _ = writeln!(o, "gpufeed {a}");
        }
    }
    if r.ranks.is_empty()
        && let Some(v) = r.verdict
    {
        let _ = writeln!(o, "verdict: {} (TF Profiler's)", v.as_str());
    }
    if let Some(s) = &r.straggler {
        let what = s.describe();
        let score = s.score();
        let _ = writeln!(
            o,
            "straggler: rank {} ({what}, {score}); a distributed run goes at its slowest \
             rank, so its verdict is the run's",
            s.rank
        );
    }
    if let (Some(v), Some(rank)) = (r.verdict, r.verdict_rank)
        && r.ranks.len() > 1
    {
        let _ = writeln!(o, "run: {} (rank {rank})", v.as_str());
    }
    if let Some(d) = &r.pace_device {
        let _ = writeln!(
            o,
            "rank {} holds {} GPUs: {} sets the pace (GPU busy {}){}",
            d.rank,
            d.of,
            d.device.as_deref().unwrap_or("one"),
            ms(d.busy_us),
            match (r.verdict, r.ranks.iter().find(|x| x.rank == d.rank)) {
                (Some(_), _) => "; its verdict is the rank's",
                (None, Some(x)) if x.no_verdict.is_some() => "; no verdict (below)",
                _ => "; no verdict without step markers",
            }
        );
    }
    for rank in &r.ranks {
        render_rank(&mut o, rank, r.format);
        for d in &rank.devices {
            render_rank(&mut o, d, r.format);
        }
    }
    o
}
