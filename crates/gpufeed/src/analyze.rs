//! `gpufeed analyze`: every stage in turn, one report.

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::AnalyzeArgs;

/// `gpufeed analyze [--data DIR] [--config FILE] [--code DIR] [--out DIR] [--quick]`.
pub fn analyze(_args: &AnalyzeArgs) -> Result<ExitCode> {
    Ok(crate::not_implemented("analyze"))
}
