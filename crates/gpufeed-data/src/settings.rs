//! Settings resolved once: the effective loader and precompute settings from gpufeed's
//! defaults, the config file, the environment and explicit arguments, in that order (uv's
//! `*Settings::resolve(args, config, environment)`).
//!
//! The command line (`profile data`, `profile step`, `doctor`, `analyze`) and the Python
//! package (`gpufeed.Loader`, `gpufeed.precompute`) both call [`LoaderSettings::resolve`]
//! and [`precompute_options`]: the same settings give the same epoch order from either.
//!
//! # The one table of defaults
//!
//! The defaults are the config schema's (`gpufeed_config::schema`, the `data:` section, where
//! each value is defined once), whether or not a config file is given: a missing file is
//! [`Config::default`]. `LoaderConfig::default()` is the same resolution with nothing given.
//!
//! | setting | default | from |
//! |---|---|---|
//! | `batch_size` | 56 | `data.batch_size` |
//! | `batch_frames` | unset (a fixed `batch_size`) | `data.batch_frames` |
//! | `workers` | the cores available | `data.num_workers` |
//! | `prefetch` | 2 × workers (at least 2) | `data.prefetch_buffer_size` |
//! | `shuffle` | true | `data.shuffle` |
//! | `seed` | 42 | `data.seed` |
//! | `bucket_window` | 1 (no bucketing) | `data.bucket_window` |
//! | `drop_last` | false | `data.drop_last` |
//! | padding | longest item of the batch | `data.pad_to_fixed_length`, `data.pad_to_multiple_of` |
//! | `over_length` | skip | `data.over_length` |
//! | `rank` / `world_size` | 0 / 1 | `RANK` / `WORLD_SIZE` |
//!
//! Where Python differs, and why ([`Frontend::Python`]):
//! - **padding**: without a config file, Python pads every batch to one static shape (the
//!   longest item of the dataset unless `max_text_length` / `max_mel_frames` say): compiled
//!   graphs (`torch.compile`, `tf.function`, `jax.jit`) retrace for every new shape. The
//!   command line measures the config's padding, which is the trainer's.
//! - **`int64`**: Python fills 64-bit token ids and lengths, the dtype frameworks index with.

use std::path::Path;

use gpufeed_config::{Config, OverLength as ConfigOverLength};

use crate::DataError;
use crate::loader::{LoaderConfig, OverLength, Padding};
use crate::precompute::Options;

/// Who asks: where the two front ends must differ (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frontend {
    /// The command line: the config's settings as the trainer has them.
    Cli,
    /// The Python package: static shapes by default, 64-bit ids.
    Python,
}

/// How batches are padded, when given explicitly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PadChoice {
    /// One static shape for every batch.
    Static,
    /// The longest item of each batch.
    Longest,
}

/// Explicit arguments (command-line flags or Python keyword arguments); `None` is "not
/// given", so the config or the default applies.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoaderArgs {
    /// Items per batch.
    pub batch_size: Option<usize>,
    /// Batches by duration: padded mel frames per batch.
    pub batch_frames: Option<usize>,
    /// Worker threads; also sets the prefetch depth to 2 × workers unless `prefetch` is given.
    pub workers: Option<usize>,
    /// Batches kept ready.
    pub prefetch: Option<usize>,
    /// Shuffle every epoch.
    pub shuffle: Option<bool>,
    /// Seed of the shuffles.
    pub seed: Option<u64>,
    /// Batches per bucketing window.
    pub bucket_window: Option<usize>,
    /// Drop a short last batch.
    pub drop_last: Option<bool>,
    /// Static shapes or the longest item.
    pub pad: Option<PadChoice>,
    /// Round padded lengths up to a multiple of this.
    pub pad_to_multiple: Option<usize>,
    /// The static shape's tokens.
    pub max_text_length: Option<usize>,
    /// The static shape's frames.
    pub max_mel_frames: Option<usize>,
    /// What to do with an item over the static shape.
    pub over_length: Option<OverLength>,
    /// This process's rank.
    pub rank: Option<usize>,
    /// Number of ranks.
    pub world_size: Option<usize>,
}

/// The environment's part: `RANK` and `WORLD_SIZE` as torchrun, Slurm's wrappers and
/// Accelerate set them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Environment {
    /// `RANK`.
    pub rank: Option<usize>,
    /// `WORLD_SIZE`.
    pub world_size: Option<usize>,
}

/// A setting that cannot be resolved: what was given and what to pass instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SettingsError(String);

impl Environment {
    /// Reads `RANK` and `WORLD_SIZE` through `var` (`|k| std::env::var(k).ok()`).
    ///
    /// # Errors
    ///
    /// A variable that is set but not a non-negative integer, named with its value.
    pub fn read(var: impl Fn(&str) -> Option<String>) -> Result<Self, SettingsError> {
        let number = |key: &str| -> Result<Option<usize>, SettingsError> {
            match var(key) {
                None => Ok(None),
                Some(v) if v.trim().is_empty() => Ok(None),
                Some(v) => v.trim().parse().map(Some).map_err(|_| {
                    SettingsError(format!(
                        "{key}={v} in the environment: expected a non-negative integer"
                    ))
                }),
            }
        };
        Ok(Self {
            rank: number("RANK")?,
            world_size: number("WORLD_SIZE")?,
        })
    }

    /// This process's environment.
    ///
    /// # Errors
    ///
    /// As [`Environment::read`].
    pub fn of_process() -> Result<Self, SettingsError> {
        Self::read(|k| std::env::var(k).ok())
    }
}

/// The effective loader settings (see the module docs for the order and the defaults).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoaderSettings;

impl LoaderSettings {
    /// Resolves the loader's settings: gpufeed's defaults (the config schema's), then
    /// `config` (pass [`Config::default`] without a file, and `config_file: false`), then
    /// `env`, then `args`. `longest` gives the dataset's longest item (tokens, frames), the
    /// static shape Python takes when nothing sets one; it is called only then.
    ///
    /// # Errors
    ///
    /// A zero where at least 1 is needed, a rank outside the world, or a static shape's
    /// size given with longest-item padding: each names the setting and what to pass.
    pub fn resolve(
        args: &LoaderArgs,
        config: &Config,
        config_file: bool,
        env: &Environment,
        frontend: Frontend,
        longest: impl FnOnce() -> (usize, usize),
    ) -> Result<LoaderConfig, SettingsError> {
        for (name, v) in [
            ("batch_size", args.batch_size),
            ("batch_frames", args.batch_frames),
            ("pad_to_multiple", args.pad_to_multiple),
            ("bucket_window", args.bucket_window),
            ("max_text_length", args.max_text_length),
            ("max_mel_frames", args.max_mel_frames),
            ("world_size", args.world_size),
        ] {
            if v == Some(0) {
                return Err(SettingsError(format!("{name}=0: pass at least 1")));
            }
        }
        let d = &config.data;
        let workers = args.workers.unwrap_or_else(|| d.effective_num_workers());
        let prefetch = match (args.prefetch, args.workers) {
            (Some(p), _) => p,
            (None, Some(w)) => 2 * w.max(1),
            (None, None) => d.prefetch_buffer_size_for(workers),
        }
        .max(1);
        let world_size = args.world_size.or(env.world_size).unwrap_or(1);
        if world_size == 0 {
            return Err(SettingsError(
                "WORLD_SIZE=0 in the environment: it must be at least 1".to_owned(),
            ));
        }
        let rank = args.rank.or(env.rank).unwrap_or(0);
        if rank >= world_size {
            return Err(SettingsError(format!(
                "rank={rank} with world_size={world_size}: ranks run from 0 to {}",
                world_size - 1
            )));
        }
        // The config's `pad_to_multiple_of` rounds the longest item of a batch; a static
        // shape is the config's caps as written, rounded only when the caller asks.
        let multiple = args.pad_to_multiple.or(d.pad_to_multiple_of).unwrap_or(1);
        let static_multiple = args.pad_to_multiple.unwrap_or(1);
        let round = |n: usize| n.max(1).div_ceil(static_multiple) * static_multiple;
        let batch_frames = args.batch_frames.or(d.batch_frames);
        let static_pad = match args.pad {
            Some(p) => p == PadChoice::Static,
            // Batches by duration have a shape each.
            None if batch_frames.is_some() => false,
            // The config's choice when a file gives one; Python's static shape otherwise.
            None => d.pad_to_fixed_length || (frontend == Frontend::Python && !config_file),
        };
        if static_pad && batch_frames.is_some() {
            return Err(SettingsError(
                "batch_frames batches by duration, so every batch has its own shape: pass \
                 pad='longest' with it (or drop pad_to_fixed_length), or batch_size for one \
                 static shape"
                    .to_owned(),
            ));
        }
        let padding = if static_pad {
            // The config's caps where the config chose static shapes (or on the command
            // line, which always measures the config); else the dataset's longest item.
            let (text, frames) =
                if frontend == Frontend::Cli || (config_file && d.pad_to_fixed_length) {
                    (Some(d.max_text_length), Some(d.max_mel_frames))
                } else {
                    (None, None)
                };
            let (text, frames) = match (
                args.max_text_length.or(text),
                args.max_mel_frames.or(frames),
            ) {
                (Some(t), Some(f)) => (t, f),
                (t, f) => {
                    let (lt, lf) = longest();
                    (t.unwrap_or(lt), f.unwrap_or(lf))
                }
            };
            Padding::Fixed {
                max_text: round(text),
                max_frames: round(frames),
            }
        } else {
            if args.max_text_length.is_some() || args.max_mel_frames.is_some() {
                return Err(SettingsError(
                    "max_text_length / max_mel_frames set the static shape: pass pad='static' with \
                     them, or leave them out with pad='longest'"
                        .to_owned(),
                ));
            }
            Padding::Longest { multiple }
        };
        let over_length = args.over_length.unwrap_or(match d.over_length {
            ConfigOverLength::Skip => OverLength::Skip,
            ConfigOverLength::Truncate => OverLength::Truncate,
        });
        Ok(LoaderConfig {
            batch_size: args.batch_size.unwrap_or(d.batch_size),
            batch_frames,
            workers,
            prefetch,
            shuffle: args.shuffle.unwrap_or(d.shuffle),
            seed: args.seed.unwrap_or(d.seed),
            bucket_window: args.bucket_window.unwrap_or(d.bucket_window),
            drop_last: args.drop_last.unwrap_or(d.drop_last),
            padding,
            over_length,
            int64: frontend == Frontend::Python,
            rank,
            world_size,
        })
    }
}

/// The cache root: `cache` (an argument), else `data.cache_dir` of the config, else
/// `DATA/.gpufeed-cache` (beside a manifest file).
#[must_use]
pub fn cache_root(cache: Option<&Path>, config: &Config, data: &Path) -> std::path::PathBuf {
    cache
        .map(Path::to_path_buf)
        .or_else(|| config.data.cache_dir.clone())
        .unwrap_or_else(|| {
            let dir = if data.is_dir() {
                data
            } else {
                data.parent().unwrap_or(Path::new("."))
            };
            dir.join(".gpufeed-cache")
        })
}

/// Precompute options for dataset `data` with `config`'s feature settings and length caps,
/// into [`cache_root`].
///
/// # Errors
///
/// [`DataError::Dataset`] for a `data.layout` or `data.columns` that does not parse.
pub fn precompute_options(
    data: &Path,
    cache: Option<&Path>,
    config: &Config,
) -> Result<Options, DataError> {
    let layout = config
        .data
        .layout
        .as_deref()
        .map(str::parse::<crate::layout::Layout>)
        .transpose()?;
    let columns = config
        .data
        .columns
        .as_deref()
        .map(crate::layout::Columns::parse)
        .transpose()?
        .unwrap_or_default();
    Ok(Options {
        arrays: arrays_of(config, None)?,
        read: crate::layout::ReadOptions {
            layout,
            columns,
            ..crate::layout::ReadOptions::default()
        },
        audio: config.data.audio(),
        text: config.data.text(),
        max_text_length: Some(config.data.max_text_length),
        max_mel_frames: Some(config.data.max_mel_frames),
        ..Options::new(data, cache_root(cache, config, data))
    })
}

/// The arrays `config` asks to cache (`data.features`, `data.f0_min`, `data.f0_max`), or
/// `names` instead of `data.features` when given (`--features`, Python's `features=`).
///
/// # Errors
///
/// [`DataError::Settings`] naming an unknown array or option.
pub fn arrays_of(
    config: &Config,
    names: Option<&[String]>,
) -> Result<crate::arrays::Arrays, DataError> {
    let names = names
        .or(config.data.features.as_deref())
        .unwrap_or_default();
    crate::arrays::Arrays::parse(names, (config.data.f0_min, config.data.f0_max))
}

/// The feature settings `config` gives, hence the key of the cache it builds: what
/// `doctor` and `profile` look for.
///
/// # Errors
///
/// As [`arrays_of`].
pub fn feature_settings(config: &Config) -> Result<crate::cache::FeatureSettings, DataError> {
    Ok(
        crate::cache::FeatureSettings::new(config.data.audio(), config.data.text())
            .with_arrays(arrays_of(config, None)?),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(args: &LoaderArgs, config: &Config, file: bool, f: Frontend) -> LoaderConfig {
        LoaderSettings::resolve(args, config, file, &Environment::default(), f, || (7, 70)).unwrap()
    }

    #[test]
    fn without_a_config_both_front_ends_take_the_schema_defaults() {
        let c = Config::default();
        let cli = resolve(&LoaderArgs::default(), &c, false, Frontend::Cli);
        let py = resolve(&LoaderArgs::default(), &c, false, Frontend::Python);
        assert_eq!((cli.batch_size, cli.seed, cli.bucket_window), (56, 42, 1));
        assert_eq!(cli.workers, c.data.effective_num_workers());
        // Only the documented differences.
        assert_eq!(cli.padding, Padding::Longest { multiple: 1 });
        assert_eq!(
            py.padding,
            Padding::Fixed {
                max_text: 7,
                max_frames: 70
            }
        );
        assert_eq!(
            LoaderConfig {
                padding: cli.padding,
                int64: false,
                ..py
            },
            cli
        );
        assert_eq!(LoaderConfig::default(), cli);
    }

    #[test]
    fn arguments_beat_the_environment_which_beats_the_config() {
        let mut c = Config::default();
        c.data.batch_size = 12;
        c.data.num_workers = Some(3);
        let env = Environment::read(|k| match k {
            "RANK" => Some("1".into()),
            "WORLD_SIZE" => Some("4".into()),
            _ => None,
        })
        .unwrap();
        let args = LoaderArgs {
            workers: Some(5),
            world_size: Some(2),
            ..LoaderArgs::default()
        };
        let lc = LoaderSettings::resolve(&args, &c, true, &env, Frontend::Cli, || (1, 1)).unwrap();
        assert_eq!((lc.batch_size, lc.workers, lc.prefetch), (12, 5, 10));
        assert_eq!((lc.rank, lc.world_size), (1, 2));
        let bad = Environment::read(|k| (k == "RANK").then(|| "one".into())).unwrap_err();
        assert_eq!(
            bad.to_string(),
            "RANK=one in the environment: expected a non-negative integer"
        );
        let err = LoaderSettings::resolve(
            &LoaderArgs {
                rank: Some(2),
                ..LoaderArgs::default()
            },
            &c,
            true,
            &Environment::default(),
            Frontend::Python,
            || (1, 1),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "rank=2 with world_size=1: ranks run from 0 to 0"
        );
    }
}
