//! `gpufeed doctor`: GPU, host, storage, frameworks, environment, config, code and a short
//! runtime check, as one findings report.

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::DoctorArgs;

/// `gpufeed doctor [--config FILE] [--data DIR] [--code DIR] [--format text|json|markdown]`.
pub fn doctor(_args: &DoctorArgs) -> Result<ExitCode> {
    Ok(crate::not_implemented("doctor"))
}
