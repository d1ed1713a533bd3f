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

/// A training config read once per run (`--config FILE`, or the schema's defaults), handed
/// to every stage that needs it, so that no stage reads the file again: its warnings are
/// said once, by whoever read it, and a bad file is one error.
#[derive(Debug, Clone, Default)]
pub struct TrainingConfig {
    loaded: Option<Loaded>,
}

impl TrainingConfig {
    /// Reads `path` (the defaults without one), with the warnings for the caller to show.
    ///
    /// # Errors
    ///
    /// As [`load`].
    pub fn read(path: Option<&Path>) -> Result<(Self, Vec<String>)> {
        let (loaded, warnings) = load_source(path)?;
        Ok((Self { loaded }, warnings))
    }

    /// The typed values (keys the file leaves out hold their defaults).
    #[must_use]
    pub fn config(&self) -> Config {
        self.loaded
            .as_ref()
            .map_or_else(Config::default, |l| l.config.clone())
    }

    /// The file as read, with its text and spans; `None` without a file.
    #[must_use]
    pub fn loaded(&self) -> Option<&Loaded> {
        self.loaded.as_ref()
    }

    /// What a feature cache built from this config will not have, one line per key
    /// (`use_phonemes: true`, `trim_silence: true`, ...: `gpufeed_config::unhonoured`).
    #[must_use]
    pub fn unhonoured(&self) -> Vec<String> {
        self.loaded
            .as_ref()
            .map(gpufeed_config::unhonoured::find)
            .unwrap_or_default()
            .iter()
            .map(ToString::to_string)
            .collect()
    }
}
