//! `gpufeed monitor` and `gpufeed watch -- CMD`: live GPU telemetry (being built).

use std::process::ExitCode;

use anyhow::Result;

use crate::cli::{MonitorArgs, WatchArgs};

/// `gpufeed monitor`.
pub fn monitor(_args: &MonitorArgs) -> Result<ExitCode> {
    Ok(crate::not_implemented("monitor"))
}

/// `gpufeed watch -- CMD`.
pub fn watch(_args: &WatchArgs) -> Result<ExitCode> {
    Ok(crate::not_implemented("watch"))
}
