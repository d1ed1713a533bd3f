//! `gpufeed trace FILE` and the hidden `gpufeed synth-trace` and `synth-job`: detect what
//! the file holds (`gpufeed_analysis::detect`), analyse it with the reader it needs, print
//! the text or the JSON document. A folder of profiler traces is read `--jobs` files at a
//! time with a progress bar; `--shard I/N --out PART` writes a task's part of it, and
//! `--merge PART...` the job's report from the parts (`gpufeed_kineto::job`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use gpufeed_analysis::detect::{Kind, TraceSource, detect};
use gpufeed_analysis::{profiler, trace};
use gpufeed_contract::Document as _;
use gpufeed_kineto::job::{self, Part, Plan, Progress};

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
        let (report, warnings) = profiler::merge(read_parts(&args.merge)?)?;
        return print_profiler(&report, &warnings, json);
    }
    let Some(file) = &args.file else {
        return prometheus(args, json);
    };
    let source = detect(file, args.kind.map(kind))?;
    match source {
        TraceSource::Profiler { path, format } => {
            let progress = Progress::default();
            let plan = Plan {
                jobs: args.jobs.map_or(0, |j| j as usize),
                progress: Some(&progress),
            };
            if let (Some(spec), Some(out)) = (&args.shard, &args.out) {
                return write_part(&path, format, &plan, spec, out);
            }
            let (report, warnings) =
                ui::trace_progress(&progress, || profiler::analyze_job(&path, format, &plan))?;
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
    format: Option<gpufeed_contract::TraceFormat>,
    plan: &Plan<'_>,
    spec: &str,
    out: &Path,
) -> Result<ExitCode> {
    let shard = crate::precompute::shard_spec(spec)?;
    let (index, count) = (u32::try_from(shard.index)?, u32::try_from(shard.count)?);
    let read = || job::read_part(path, profiler::options(format), plan, (index, count));
    let part = match plan.progress {
        Some(p) => ui::trace_progress(p, read),
        None => read(),
    }?;
    // A folder (every task given the same one): a name of this task's own.
    let out = if out.is_dir() {
        out.join(format!("part-{index:05}-of-{count}.json"))
    } else {
        out.to_owned()
    };
    let out = out.as_path();
    let text = serde_json::to_string(&part)? + "\n";
    gpufeed_fs::write_atomic(out, |f| std::io::Write::write_all(f, text.as_bytes()))
        .with_context(|| format!("cannot write the part `{}`", out.display()))?;
    printer::note(&format!(
        "wrote {}: task {index} of {count}, {} of the job's {} trace file(s); when every task \
         is done, `gpufeed trace --merge PART...` gives the job's report",
        out.display(),
        part.summaries.len(),
        part.files.len()
    ));
    Ok(ExitCode::SUCCESS)
}

/// The parts named (files, or folders of `*.json` parts), each read as a `profiler-part`.
fn read_parts(paths: &[PathBuf]) -> Result<Vec<Part>> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = fs_err::read_dir(p)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "json"))
                .collect();
            if found.is_empty() {
                anyhow::bail!(
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
    files
        .iter()
        .map(|f| {
            let text = fs_err::read_to_string(f)?;
            let head: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("`{}` is not JSON, so not a part", f.display()))?;
            let kind = head.get("kind").and_then(|k| k.as_str());
            let version = head
                .get("schema_version")
                .and_then(serde_json::Value::as_u64);
            if kind != Some(Part::NAME) {
                anyhow::bail!(
                    "`{}` is not a part of a profiler job (its `kind` is {})\n\nhint: give the \
                     parts that `gpufeed trace DIR --shard I/N --out PART.json` wrote",
                    f.display(),
                    kind.map_or_else(|| "absent".to_owned(), |k| format!("`{k}`"))
                );
            }
            if version != Some(u64::from(Part::VERSION)) {
                anyhow::bail!(
                    "`{}` is a part of version {}, and this gpufeed merges version {}: run the \
                     tasks and the merge with the same gpufeed",
                    f.display(),
                    version.map_or_else(|| "unknown".to_owned(), |v| v.to_string()),
                    Part::VERSION
                );
            }
            serde_json::from_value(head)
                .with_context(|| format!("`{}`: a damaged part", f.display()))
        })
        .collect()
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

/// Prometheus answers at most this many points per series.
const PROMETHEUS_MAX_POINTS: f64 = 11_000.0;

/// `gpufeed trace --prometheus URL`: the range query of DCGM's metrics, judged as a
/// utilisation log.
fn prometheus(args: &TraceArgs, json: bool) -> Result<ExitCode> {
    use gpufeed_telemetry::dcgm::{RangeQuery, query_range};
    use gpufeed_telemetry::trace::Trace;
    let Some(url) = &args.prometheus else {
        anyhow::bail!("give a FILE to read, or `--prometheus URL` to ask a server");
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let (start, end) = (when(&args.since, now)?, when(&args.until, now)?);
    // Within the server's limit of points per series where the range is known here.
    let mut step_s = args.step;
    if let (Ok(a), Ok(b)) = (start.parse::<f64>(), end.parse::<f64>()) {
        if b <= a {
            anyhow::bail!(
                "the range ends ({}) before it starts ({}): `--since` is further back than \
                 `--until`",
                args.until,
                args.since
            );
        }
        step_s = step_s.max(((b - a) / (PROMETHEUS_MAX_POINTS - 1.0)).ceil());
    }
    let q = RangeQuery {
        url: url.clone(),
        selector: args.selector.clone(),
        start,
        end,
        step_s,
    };
    let label = std::path::PathBuf::from(url);
    let t = query_range(&q, &label)?;
    let (report, warnings) = trace::analyze_read(&label, Trace::Util(t), None, None)?;
    print_log(&label, &report, &warnings, json)?;
    Ok(ExitCode::SUCCESS)
}

/// `--since` / `--until`: a duration ago (`1h`, `0s`) as Unix seconds, a number as Unix
/// seconds, anything else (RFC 3339) as the server takes it.
fn when(text: &str, now: f64) -> Result<String> {
    let t = text.trim();
    if let Ok(secs) = t.parse::<f64>() {
        return Ok(format!("{secs}"));
    }
    let ago = t.ends_with(|c: char| c.is_ascii_alphabetic()) && !t.contains(['-', ':']);
    if ago {
        let d = gpufeed_stats::duration::parse_duration(t)
            .map_err(|e| anyhow::anyhow!("`{text}`: {e}"))?;
        return Ok(format!("{:.3}", now - d));
    }
    Ok(t.to_owned())
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
    use gpufeed_kineto::synth::{Case, Truth, generate, write_rank};
    if args.straggler >= args.ranks {
        anyhow::bail!(
            "--straggler {} is not one of the {} rank(s)",
            args.straggler,
            args.ranks
        );
    }
    let kernels = args.kernels as usize;
    let case = |steps: usize| Case {
        ranks: args.ranks as usize,
        steps,
        kernels,
        slow_compute: Some((args.straggler as usize, args.slowdown)),
        ..Case::allreduce_straggler_steady()
    };
    // Bytes per step from two small traces; the steps that make the size asked.
    let (two, four) = (generate(&case(2), 0).len(), generate(&case(4), 0).len());
    let per_step = ((four - two) / 2).max(1) as u64;
    let steps = ((args.rank_size.saturating_sub(two as u64)) / per_step + 2).max(4) as usize;
    let case = case(steps);
    fs_err::create_dir_all(&args.out)?;
    let write = |rank: usize| -> Result<(Truth, u64)> {
        let ext = if args.plain { "json" } else { "json.gz" };
        let path = args.out.join(format!("rank-{rank:05}.pt.trace.{ext}"));
        let mut bytes = 0u64;
        let mut truth = None;
        gpufeed_fs::write_atomic_unsynced(&path, |f| {
            let file = std::io::BufWriter::new(f);
            if args.plain {
                truth = Some(write_rank(&case, rank, &mut Counter(file, &mut bytes))?);
            } else {
                let mut gz = flate2::write::GzEncoder::new(file, flate2::Compression::fast());
                truth = Some(write_rank(&case, rank, &mut Counter(&mut gz, &mut bytes))?);
                gz.finish()?;
            }
            Ok(())
        })
        .with_context(|| format!("cannot write `{}`", path.display()))?;
        let truth = truth.ok_or_else(|| anyhow::anyhow!("rank {rank} was not generated"))?;
        Ok((truth, bytes))
    };
    let ranks = args.ranks as usize;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let written = job::in_order(ranks, cores, write)?;
    let per_rank: Vec<serde_json::Value> = written
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
        "ranks": ranks,
        "steps_per_rank": steps,
        "kernels_per_step": kernels,
        "straggler": args.straggler,
        "slowdown": args.slowdown,
        "expect": {"straggler": args.straggler, "verdict": "compute-bound"},
        "per_rank": per_rank,
    });
    printer::data(&(serde_json::to_string_pretty(&doc)? + "\n"))?;
    Ok(ExitCode::SUCCESS)
}

/// A writer that counts the bytes through it (a rank's JSON, before gzip).
struct Counter<'a, W>(W, &'a mut u64);

impl<W: std::io::Write> std::io::Write for Counter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.0.write(buf)?;
        *self.1 += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// The format a `json` flag asks for.
fn format_of(json: bool) -> Format {
    if json { Format::Json } else { Format::Text }
}
