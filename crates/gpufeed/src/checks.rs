//! `gpufeed validate` and `gpufeed lint`: findings about a config and about training code
//! (being built).

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::{LintArgs, ValidateArgs};

/// `gpufeed validate FILE [--fix] [--dry-run]`.
pub fn validate(_args: &ValidateArgs) -> Result<ExitCode> {
    Ok(crate::not_implemented("validate"))
}

/// `gpufeed lint PATH...`.
pub fn lint(_args: &LintArgs) -> Result<ExitCode> {
    Ok(crate::not_implemented("lint"))
}
