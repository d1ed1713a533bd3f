//! `gpufeed trace FILE` and the hidden `gpufeed synth-trace` and `synth-job`: detect what
//! the file holds (`gpufeed_analysis::detect`), analyse it with the reader it needs, print
//! the text or the JSON document. A folder of profiler traces is read `--jobs` files at a
//! time with a progress bar; `--shard I/N --out PART` writes a task's part of it, and
//! `--merge PART...` the job's report from the parts (`gpufeed_kineto::job`).

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use gpufeed_analysis::detect::{Kind, TraceSource, detect};
use gpufeed_analysis::{profiler, trace};
use gpufeed_kineto::job::{Plan, Progress};

use crate::cli::{Format, KindArg, SynthFlavor, SynthJobArgs, SynthTraceArgs, TraceArgs};
use crate::{printer, ui};

/// `--kind` as the detector takes it.
pub fn kind(k: KindArg) -> Kind {
    match k {
        KindArg::Util => Kind::Util,
        KindArg::Steps => Kind::Steps,
        KindArg::Pytorch => Kind::Pytorch,
        KindArg::Tensorflow => Kind::Tensorflow,
    }
}

/// `gpufeed trace FILE [--kind K] [--format F]`, or `gpufeed trace --prometheus URL`.
pub fn run(args: &TraceArgs) -> Result<ExitCode> {
    let json = args.output.format == Format::Json;
    if !args.merge.is_empty() {
        let (report, warnings) = profiler::merge(profiler::read_parts(&args.merge)?)?;
        return print_profiler(&report, &warnings, json);
    }
    let Some(file) = &args.file else {
        return prometheus(args, json);
    };
    let source = detect(file, args.kind.map(kind))?;
    match source {
        TraceSource::Profiler {
            path,
            format,
            classified,
        } => {
            let opts = profiler::options(format, classified);
            let progress = Progress::default();
            let plan = Plan {
                jobs: args.jobs.map_or(0, |j| j as usize),
                progress: Some(&progress),
            };
            if let (Some(spec), Some(out)) = (&args.shard, &args.out) {
                return write_part(&path, opts, &plan, spec, out);
            }
            let (report, warnings) =
                ui::trace_progress(&progress, || profiler::analyze_job(&path, opts, &plan))?;
            return print_profiler(&report, &warnings, json);
        }
        _ if args.shard.is_some() => anyhow::bail!(
            "`--shard` splits a folder of profiler traces over the tasks of an array job; \
             `{}` is a log, read whole by one `gpufeed trace`",
            file.display()
        ),
        TraceSource::Stdin { .. } | TraceSource::Log { .. } => {
            let (report, warnings) = match trace::analyze_source(&source, args.interval) {
                Err(e) if host_only_recording(file, &e) => {
                    printer::warn(&format!(
                        "`{}` is a gpufeed recording of the host alone (no GPU was visible \
                         when it was recorded): its host figures follow",
                        file.display()
                    ));
                    return crate::monitor::replay_report(file, args.output);
                }
                r => r?,
            };
            print_log(file, &report, &warnings, json)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A profiler report's warnings on stderr, then the report as text or one JSON document.
fn print_profiler(
    report: &gpufeed_kineto::Report,
    warnings: &[String],
    json: bool,
) -> Result<ExitCode> {
    for w in warnings {
        printer::warn(w);
    }
    printer::export(format_of(json), report, profiler::render_text)?;
    Ok(ExitCode::SUCCESS)
}

/// `gpufeed trace DIR --shard I/N|auto --out PART.json`: this task's part.
fn write_part(
    path: &Path,
    opts: gpufeed_kineto::Options,
    plan: &Plan<'_>,
    spec: &str,
    out: &Path,
) -> Result<ExitCode> {
    let shard = crate::precompute::shard_spec(spec)?;
    let (index, count) = (u32::try_from(shard.index)?, u32::try_from(shard.count)?);
    let write = || profiler::write_part(path, opts, plan, (index, count), out);
    let (out, part) = match plan.progress {
        Some(p) => ui::trace_progress(p, write),
        None => write(),
    }?;
    printer::note(&format!(
        "wrote {}: task {index} of {count}, {} of the job's {} trace file(s); when every task \
         is done, `gpufeed trace --merge PART...` gives the job's report",
        out.display(),
        part.summaries.len(),
        part.files.len()
    ));
    Ok(ExitCode::SUCCESS)
}

/// A log's warnings on stderr, then its report as text or one JSON document.
fn print_log(
    label: &std::path::Path,
    report: &trace::TraceReport,
    warnings: &[String],
    json: bool,
) -> Result<()> {
    for w in warnings {
        printer::warn(w);
    }
    printer::export(format_of(json), report, |r| trace::render_text(label, r))
}

/// Whether reading `file` failed only because it is a gpufeed recording with no GPU
/// samples: `watch --record` where no GPU was visible writes the host's alone.
fn host_only_recording(file: &std::path::Path, e: &anyhow::Error) -> bool {
    use gpufeed_telemetry::TraceError;
    matches!(
        e.downcast_ref::<TraceError>(),
        Some(TraceError::NoSamples { .. })
    ) && gpufeed_analysis::detect::first_line(file).is_some_and(|l| {
        gpufeed_telemetry::trace::detect_kind(&l).1
            == gpufeed_telemetry::trace::TraceFormat::GpufeedJsonl
    })
}

/// `gpufeed trace --prometheus URL`: the range query of DCGM's metrics, judged as a
/// utilisation log.
fn prometheus(args: &TraceArgs, json: bool) -> Result<ExitCode> {
    let Some(url) = &args.prometheus else {
        anyhow::bail!("give a FILE to read, or `--prometheus URL` to ask a server");
    };
    let (report, warnings) = trace::analyze_prometheus(&trace::PrometheusRange {
        url: url.clone(),
        selector: args.selector.clone(),
        since: args.since.clone(),
        until: args.until.clone(),
        step_s: args.step,
    })?;
    print_log(Path::new(url), &report, &warnings, json)?;
    Ok(ExitCode::SUCCESS)
}

/// `gpufeed synth-trace CASE OUT`: writes rank `--rank` of a generated case.
pub fn write_synthetic(args: &SynthTraceArgs) -> Result<ExitCode> {
    use gpufeed_kineto::synth::{Case, generate};
    let Some(case) = Case::named(&args.case) else {
        let names: Vec<&str> = Case::all().iter().map(|c| c.name).collect();
        anyhow::bail!(
            "no generated case `{}`\n\nhint: one of {}",
            args.case,
            names.join(", ")
        );
    };
    if args.rank >= case.ranks {
        anyhow::bail!(
            "case `{}` has {} rank(s): --rank {} is not one",
            case.name,
            case.ranks,
            args.rank
        );
    }
    let case = match args.flavor {
        SynthFlavor::Pytorch => case,
        SynthFlavor::Tensorflow => case.tensorflow(),
        SynthFlavor::Xplane => case.xplane(),
    };
    fs_err::write(&args.out, generate(&case, args.rank))?;
    Ok(ExitCode::SUCCESS)
}

/// `gpufeed synth-job DIR`: a job of `--ranks` ranks of about `--rank-size` of JSON each,
/// rank `--straggler`'s kernels `--slowdown` times as long (the others wait for it in
/// their all-reduce), written a rank per core; prints the job and each rank's truth.
pub fn write_synthetic_job(args: &SynthJobArgs) -> Result<ExitCode> {
    use gpufeed_kineto::synth::{JobSpec, write_job};
    let written = write_job(
        &args.out,
        &JobSpec {
            ranks: args.ranks as usize,
            rank_size: args.rank_size,
            straggler: args.straggler as usize,
            slowdown: args.slowdown,
            kernels: args.kernels as usize,
            plain: args.plain,
        },
    )?;
    let per_rank: Vec<serde_json::Value> = written
        .per_rank
        .iter()
        .enumerate()
        .map(|(rank, (t, bytes))| {
            serde_json::json!({
                "rank": rank,
                "json_bytes": bytes,
                "busy_us": t.busy_us,
                "span_us": t.span_us,
                "host_wait_us": t.host_wait_us,
                "kernel_wait_us": t.kernel_wait_us,
                "other_us": t.other_us,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "folder": args.out.display().to_string(),
        "ranks": args.ranks,
        "steps_per_rank": written.steps_per_rank,
        "kernels_per_step": args.kernels,
        "straggler": args.straggler,
        "slowdown": args.slowdown,
        "expect": {"straggler": args.straggler, "verdict": "compute-bound"},
        "per_rank": per_rank,
    });
    printer::data(&(serde_json::to_string_pretty(&doc)? + "\n"))?;
    Ok(ExitCode::SUCCESS)
}

/// The format a `json` flag asks for.
fn format_of(json: bool) -> Format {
    if json { Format::Json } else { Format::Text }
}
