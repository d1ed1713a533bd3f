//! `gpufeed doctor`: GPU, host, storage, frameworks, environment, config, code and a short
//! runtime check, as one findings report.
//!
//! The checks are run by `gpufeed-app` (`doctor_run`: gpufeed-doctor's facts and rules, and
//! the runtime check, a short run of the loader on the dataset's precomputed cache); this
//! module prints the report and maps it to the exit code: 0 nothing at error severity, 1 any error-severity finding,
//! 2 a path that cannot be read.

use std::process::ExitCode;

use anyhow::Result;

use gpufeed_app::doctor::{DoctorConfig, DoctorSettings, doctor_run};
use gpufeed_findings::render::{DoctorText, Markdown, Renderer};

use crate::cli::{DoctorArgs, FindingsFormat, Format};
use crate::printer;

/// `gpufeed doctor [--config FILE] [--data DIR] [--code DIR] [--format text|json|markdown]`.
pub fn doctor(args: &DoctorArgs) -> Result<ExitCode> {
    let settings = DoctorSettings {
        config: args
            .inputs
            .config
            .as_deref()
            .map(DoctorConfig::read)
            .transpose()?,
        data: args.inputs.data.clone(),
        code: args.inputs.code.clone(),
    };
    let run = doctor_run(&settings, &mut |step| {
        printer::note(&format!("doctor: {step}"));
    })?;
    let report = run.report;
    // Through the one exporter: JSON is its document; text and Markdown are two renderings.
    let format = match args.format {
        FindingsFormat::Json => Format::Json,
        FindingsFormat::Text | FindingsFormat::Markdown => Format::Text,
    };
    printer::export(format, &report, |r| match args.format {
        FindingsFormat::Markdown => Markdown.render(r),
        _ => DoctorText {
            skipped: run.skipped,
        }
        .render(r),
    })?;
    Ok(ExitCode::from(report.exit_code()))
}
