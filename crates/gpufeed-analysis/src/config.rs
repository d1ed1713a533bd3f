//! The training config as the commands read it: `--config FILE`, or the schema's defaults
//! without one. Warnings (keys the trainer ignores, deprecated spellings) are returned for
//! the caller to show: the binary prints them, Python raises them as warnings.

use std::path::Path;

use anyhow::Result;
use gpufeed_config::{Config, Loaded};

/// The config of `path` (defaults without one), and its warnings.
///
/// # Errors
///
/// A file that cannot be read or parsed, with its line and column.
pub fn load(path: Option<&Path>) -> Result<(Config, Vec<String>)> {
    let (loaded, warnings) = load_source(path)?;
    Ok((loaded.map_or_else(Config::default, |l| l.config), warnings))
}

/// As [`load`], keeping the file's text and spans (which keys the file sets); `None`
/// without a file.
///
/// # Errors
///
/// As [`load`].
pub fn load_source(path: Option<&Path>) -> Result<(Option<Loaded>, Vec<String>)> {
    let Some(path) = path else {
        return Ok((None, Vec::new()));
    };
    let loaded = gpufeed_config::load(path)?;
    let warnings = loaded.warnings.iter().map(ToString::to_string).collect();
    Ok((Some(loaded), warnings))
}
