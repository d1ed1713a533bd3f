//! `gpufeed trace FILE` and the hidden `gpufeed synth-trace`: detect what the file holds
//! (`gpufeed_analysis::detect`), analyse it with the reader it needs, print the text or
//! the JSON document.

use std::process::ExitCode;

use anyhow::Result;
use gpufeed_analysis::detect::{Kind, TraceSource, detect};
use gpufeed_analysis::{profiler, trace};

use crate::cli::{Format, KindArg, SynthFlavor, SynthTraceArgs, TraceArgs};
use crate::printer;

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
    let Some(file) = &args.file else {
        return prometheus(args, json);
    };
    match detect(file, args.kind.map(kind))? {
        TraceSource::Profiler { path, format } => {
            let (report, warnings) = profiler::analyze(&path, format)?;
            for w in &warnings {
                printer::warn(w);
            }
            if json {
                printer::data(&(serde_json::to_string(&report)? + "\n"))?;
            } else {
                printer::data(&profiler::render_text(&report))?;
            }
        }
        TraceSource::Stdin { kind } | TraceSource::Log { kind, .. } => {
            let (report, warnings) = match trace::analyze_file_with(file, kind, args.interval) {
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
    if json {
        printer::data(&(serde_json::to_string(report)? + "\n"))?;
    } else {
        printer::data(&trace::render_text(label, report))?;
    }
    Ok(())
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
