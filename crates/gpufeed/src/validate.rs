//! `gpufeed validate`: findings about a trainer's config, and `--fix`. The rules live in
//! `gpufeed-doctor`; this module reads the arguments, runs them, prints the report and maps
//! it to the exit code (0 clean or warnings only, 1 any error-severity finding, 2 a file
//! that cannot be read or a bad argument). [`report`] prints `lint`'s too.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Result, bail};
use gpufeed_findings::render::{Renderer, Text};
use gpufeed_findings::{Finding, Report};
use gpufeed_validate::fix::{self, FixError};
use gpufeed_validate::{self as validate, Context};

use crate::cli::{Format, ValidateArgs};
use crate::printer;

/// Exit code for bad input, bad usage or an internal failure.
const EXIT_BAD_INPUT: u8 = 2;

/// `gpufeed validate FILE [--fix] [--dry-run]`.
pub fn validate(args: &ValidateArgs) -> Result<ExitCode> {
    let dry_run = args.dry_run;
    if dry_run && args.format == Format::Json {
        bail!(
            "`--dry-run` prints a unified diff, which is not JSON; drop `--format json` to see \
             the diff, or use `--fix --format json` to write the fixes and get the findings \
             that remain"
        );
    }
    let ctx = Context::for_cores(args.cores);
    let validation = validate::validate_file(&args.file, &ctx)?;
    if !(args.fix || dry_run) {
        // Each fix says whether `--fix` applies it, and why not when it has an edit.
        let findings = fix::preview(&validation, &ctx);
        return report(Report::new(findings), args.format, None);
    }
    let plan = match fix::plan(&validation, &ctx) {
        Ok(plan) => plan,
        Err(e @ FixError::NotParsed { .. }) => {
            printer::warn(&e.to_string());
            let findings = fix::preview(&validation, &ctx);
            return report(Report::new(findings), args.format, None);
        }
        Err(e) => {
            printer::error(&e.to_string());
            return Ok(ExitCode::from(EXIT_BAD_INPUT));
        }
    };
    for (finding, why) in &plan.skipped {
        printer::warn(&format!("{} not fixed: {why}", place(finding, &args.file)));
    }
    let remaining = Report::new(plan.remaining.clone());
    if dry_run {
        printer::data(&fix::unified_diff(&args.file, &plan.original, &plan.fixed))?;
        if !remaining.findings.is_empty() {
            printer::warn(&format!(
                "{} finding(s) remain that --fix does not change ({}); run `gpufeed validate {}` \
                 to see them",
                remaining.findings.len(),
                remaining.counts(),
                args.file.display()
            ));
        }
        return Ok(ExitCode::from(remaining.exit_code()));
    }
    let backup = fix::write(&plan)?;
    let summary = match backup {
        Some(backup) => format!(
            "fixed {} finding(s) in `{}` (the original is in `{}`)\n",
            plan.applied.len(),
            args.file.display(),
            backup.display()
        ),
        None => format!("nothing to fix in `{}`\n", args.file.display()),
    };
    report(remaining, args.format, Some(&summary))
}

/// Prints a report through the one exporter and returns its exit code. Text gets the
/// summary line after the report; JSON stays exactly one document.
pub(crate) fn report(report: Report, format: Format, summary: Option<&str>) -> Result<ExitCode> {
    printer::export(format, &report, |r| {
        let mut out = Text.render(r);
        if let Some(s) = summary {
            out.push_str(s);
        }
        out
    })?;
    Ok(ExitCode::from(report.exit_code()))
}

/// `file:line:column: id` of a finding, for one-line messages.
fn place(f: &Finding, file: &Path) -> String {
    match (f.line, f.column) {
        (Some(l), Some(c)) => format!("{}:{l}:{c}: {}", file.display(), f.id),
        _ => format!("{}: {}", file.display(), f.id),
    }
}
