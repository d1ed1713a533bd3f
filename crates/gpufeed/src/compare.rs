//! `gpufeed compare BEFORE AFTER`: the comparison is `gpufeed_analysis::compare`'s; this
//! prints it.

use std::process::ExitCode;

use anyhow::Result;
use gpufeed_analysis::compare;

use crate::cli::CompareArgs;
use crate::printer;

/// `gpufeed compare BEFORE AFTER [--format F]`.
pub fn run(args: &CompareArgs) -> Result<ExitCode> {
    let (doc, warnings) = compare::compare(&args.before, &args.after)?;
    for w in &warnings {
        printer::warn(w);
    }
    printer::export(args.output.format, &doc, compare::render_text)?;
    Ok(ExitCode::SUCCESS)
}
