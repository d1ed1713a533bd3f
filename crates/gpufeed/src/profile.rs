//! `gpufeed profile data` and `gpufeed profile step` (being built).

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::{ProfileDataArgs, ProfileStepArgs};

/// `gpufeed profile data`.
pub fn data(_args: &ProfileDataArgs) -> Result<ExitCode> {
    Ok(crate::not_implemented("profile data"))
}

/// `gpufeed profile step`.
pub fn step(_args: &ProfileStepArgs) -> Result<ExitCode> {
    Ok(crate::not_implemented("profile step"))
}
