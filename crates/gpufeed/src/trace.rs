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

/// `gpufeed trace FILE [--kind K] [--format F]`.
pub fn run(args: &TraceArgs) -> Result<ExitCode> {
    let json = args.output.format == Format::Json;
    match detect(&args.file, args.kind.map(kind))? {
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
            let (report, warnings) = trace::analyze_file_with(&args.file, kind, args.interval)?;
            for w in &warnings {
                printer::warn(w);
            }
            if json {
                printer::data(&(serde_json::to_string(&report)? + "\n"))?;
            } else {
                printer::data(&trace::render_text(&args.file, &report))?;
            }
        }
    }
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
